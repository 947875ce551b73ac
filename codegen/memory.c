/*
 * memory.c: load and store on global memory (atomics: atomic.c).
 *
 * A tile access uses the layout of cg_mem_layout: each thread owns
 * vectors of `vec` elements along the pointers' contiguous dim, and
 * accesses each as one ld.global.v4.b32 / st.global.v4.b32 (or v2, or a
 * scalar) -- the data is moved as 32-bit words so that 8 bf16 are one
 * 16-byte access.  vec comes from the axis analysis: when the fast-path
 * assumptions give a wider vector than the proven facts, the access is
 * emitted twice behind a uniform run-time check of those assumptions.
 *
 * Masks: when the mask is constant over a vector (axis constancy), one
 * predicate guards the vector; otherwise the vector is used when all its
 * mask bits are true and a masked (scalarized) access handles the rest,
 * i.e. only the ragged edge of a tile.  Masked-off elements of a load are
 * `other` (0 when absent).  Stores are issued only by the first copy of
 * replicated lanes and warps.  cache and evict hints use inline PTX
 * (ld.global.cg, ld.global.L1::evict_first, ...).  Rows that are not
 * aligned move as realigned vectors (realign_ok); cp_async's generic path
 * uses the same loads (cg_copy_realign).
 */
#include "config.h"

#include "codegen/cg.h"

typedef struct Access {
	CgFn *fn;
	Op *op;
	uint32_t pi;         /* the pointers' operand: 1 for cp_async */
	const Axis *gen;     /* the facts of the generic path */
	const Layout *ly;
	Type *ety;           /* element type */
	LLVMTypeRef mt;      /* its type in memory (i8 for i1 and fp8) */
	int eb;
	LLVMValueRef *ptr, *mask, *other, *val;
	int dim;             /* dim the vectors run along */
	uint32_t nvals;      /* 1 for a store: operand 1 is the value */
	int vec;             /* elements per access of the path */
	int vfast;           /* ... and of the fast path */
	bool slow;           /* the generic path of a wider fast one */
	const char *hint;    /* PTX qualifiers, or NULL */
	bool edge_later;     /* realigned: vectors not all in are zero,
				for the caller to redo (a copy) */
	bool edge_pred;      /* a load's vectors not all in without a
				branch (edge_pred_ok) */
} Access;

static LLVMValueRef
to_mem(Access *a, LLVMValueRef v)
{
	Cg *cg = a->fn->cg;

	if (ty_elem(a->ety)->kind == TY_I1)
		return LLVMBuildZExt(cg->B, v, cg->t_i8, "");
	return v;
}

static LLVMValueRef
from_mem(Access *a, LLVMValueRef v)
{
	Cg *cg = a->fn->cg;

	if (ty_elem(a->ety)->kind == TY_I1)
		return LLVMBuildTrunc(cg->B, v, cg->t_i1, "");
	return v;
}

/* The word type a vector of n elements moves as. */
static LLVMTypeRef
word_type(Access *a, int n, int *words)
{
	Cg *cg = a->fn->cg;
	int bytes = n * a->eb;

	if (bytes >= 4) {
		*words = bytes / 4;
		return *words == 1 ? cg->t_i32
				   : LLVMVectorType(cg->t_i32, (unsigned)*words);
	}
	*words = 1;
	return bytes == 2 ? cg->t_i16 : cg->t_i8;
}

static LLVMTypeRef
elems_type(Access *a, int n)
{
	return n == 1 ? a->mt : LLVMVectorType(a->mt, (unsigned)n);
}

/* Packs n elements into the words the access moves (an i32, a vector
 * of them, or one i16/i8 for accesses under 4 bytes). */
static LLVMValueRef
pack(Access *a, LLVMValueRef *vals, int n)
{
	Cg *cg = a->fn->cg;
	int words, i;
	LLVMTypeRef wt = word_type(a, n, &words);
	LLVMValueRef v;

	if (n == 1) {
		v = to_mem(a, vals[0]);
	} else {
		v = LLVMGetUndef(elems_type(a, n));
		for (i = 0; i < n; i++)
			v = LLVMBuildInsertElement(cg->B, v, to_mem(a, vals[i]),
						   cg_i32(cg, i), "");
	}
	return LLVMBuildBitCast(cg->B, v, wt, "");
}

static void
unpack(Access *a, LLVMValueRef w, int n, LLVMValueRef *out)
{
	Cg *cg = a->fn->cg;
	LLVMValueRef v = LLVMBuildBitCast(cg->B, w, elems_type(a, n), "");
	int i;

	if (n == 1) {
		out[0] = from_mem(a, v);
		return;
	}
	for (i = 0; i < n; i++)
		out[i] = from_mem(a, LLVMBuildExtractElement(cg->B, v,
							     cg_i32(cg, i), ""));
}

/* The i-th word of a packed value (words > 1: a vector). */
static LLVMValueRef
word(Access *a, LLVMValueRef w, int words, int i)
{
	return words == 1 ? w : LLVMBuildExtractElement(a->fn->cg->B, w,
							cg_i32(a->fn->cg, i), "");
}

/* "{$f, $f+1, ...}" or "$f" for w words. */
static void
regs_text(char *buf, size_t size, int first, int w)
{
	int i;

	if (w == 1) {
		snprintf(buf, size, "$%d", first);
		return;
	}
	snprintf(buf, size, "{");
	for (i = 0; i < w; i++)
		snprintf(buf + strlen(buf), size - strlen(buf), "%s$%d",
			 i ? ", " : "", first + i);
	snprintf(buf + strlen(buf), size - strlen(buf), "}");
}

static const char *
suffix(Access *a, int n, int words)
{
	int bytes = n * a->eb;

	if (bytes < 4)
		return bytes == 2 ? ".b16" : ".u8";
	return words == 4 ? ".v4.b32" : words == 2 ? ".v2.b32" : ".b32";
}

/* One vector load of n elements at p, as inline PTX (LLVM must neither
 * split it nor merge it with the other path of a guard): the words it
 * moves.  With `pred`, lanes where it is false keep `other`. */
static LLVMValueRef
vec_load_words(Access *a, LLVMValueRef p, int n, LLVMValueRef pred,
	       LLVMValueRef *other)
{
	Cg *cg = a->fn->cg;
	int words, i, nargs = 0;
	LLVMTypeRef wt = word_type(a, n, &words), et[4], rt;
	LLVMTypeRef rty = n * a->eb >= 4 ? cg->t_i32 : n * a->eb == 2 ? cg->t_i16
						      : cg->t_i8;
	char text[200], regs[64], cons[64];
	const char *c = n * a->eb >= 4 ? "r" : "h";
	LLVMValueRef args[8], r, w, o = NULL;

	regs_text(regs, sizeof regs, 0, words);
	snprintf(text, sizeof text, "%sld.global%s%s %s, [$%d];",
		 pred ? arena_printf(a->fn->a, "@$%d ", words + 1) : "",
		 a->hint ? a->hint : "", suffix(a, n, words), regs, words);
	cons[0] = 0;
	for (i = 0; i < words; i++) {
		snprintf(cons + strlen(cons), sizeof cons - strlen(cons), "=%s,", c);
		et[i] = rty == cg->t_i8 ? cg->t_i16 : rty;
	}
	strcat(cons, "l");
	args[nargs++] = p;
	if (pred) {
		strcat(cons, ",b");
		args[nargs++] = pred;
		o = pack(a, other, n);
		for (i = 0; i < words; i++) {
			LLVMValueRef x = word(a, o, words, i);

			if (rty == cg->t_i8)
				x = LLVMBuildZExt(cg->B, x, cg->t_i16, "");
			snprintf(cons + strlen(cons), sizeof cons - strlen(cons),
				 ",%d", i);
			args[nargs++] = x;
		}
	}
	rt = words == 1 ? et[0] : LLVMStructTypeInContext(cg->C, et,
							  (unsigned)words, 0);
	r = cg_asm(cg, rt, text, cons, args, nargs, true, false);
	if (words == 1) {
		w = rty == cg->t_i8 ? LLVMBuildTrunc(cg->B, r, cg->t_i8, "") : r;
	} else {
		w = LLVMGetUndef(wt);
		for (i = 0; i < words; i++)
			w = LLVMBuildInsertElement(cg->B, w,
				LLVMBuildExtractValue(cg->B, r, (unsigned)i, ""),
				cg_i32(cg, i), "");
	}
	return w;
}

static void
vec_load(Access *a, LLVMValueRef p, int n, LLVMValueRef pred,
	 LLVMValueRef *other, LLVMValueRef *out)
{
	unpack(a, vec_load_words(a, p, n, pred, other), n, out);
}

static void
vec_store(Access *a, LLVMValueRef p, int n, LLVMValueRef pred,
	  LLVMValueRef *vals)
{
	Cg *cg = a->fn->cg;
	int words, i, nargs = 0;
	LLVMValueRef w = pack(a, vals, n), args[8];
	char text[200], regs[64], cons[64];
	const char *c = n * a->eb >= 4 ? "r" : "h";

	(void)word_type(a, n, &words);
	regs_text(regs, sizeof regs, 1, words);
	snprintf(text, sizeof text, "%sst.global%s [$0], %s;",
		 pred ? arena_printf(a->fn->a, "@$%d ", words + 1) : "",
		 suffix(a, n, words), regs);
	snprintf(cons, sizeof cons, "l");
	args[nargs++] = p;
	for (i = 0; i < words; i++) {
		LLVMValueRef x = word(a, w, words, i);

		if (n * a->eb == 1)
			x = LLVMBuildZExt(cg->B, x, cg->t_i16, "");
		snprintf(cons + strlen(cons), sizeof cons - strlen(cons), ",%s", c);
		args[nargs++] = x;
	}
	if (pred) {
		strcat(cons, ",b");
		args[nargs++] = pred;
	}
	cg_asm(cg, cg->t_void, text, cons, args, nargs, true, false);
}

/* Is the mask constant over every vector of n elements? */
static bool
mask_uniform(Access *a, int n)
{
	uint32_t mi = a->val ? 2 : 1;
	Value m = a->op->opnds[mi];

	if (n == 1 || !cg_is_tile(a->fn, m))
		return true;
	/* in a fast copy the check covers the mask's assumptions too
	 * (cg_fast_deps, access) */
	return cg_axis(a->fn, m)->cnst[a->dim] >= n;
}

static LLVMValueRef
all_of(Access *a, uint32_t g, int n)
{
	LLVMValueRef r = a->mask[g];
	int i;

	for (i = 1; i < n; i++)
		r = LLVMBuildAnd(a->fn->cg->B, r, a->mask[g + (uint32_t)i], "");
	return r;
}

/* Whether any of the n masks ms is true. */
static LLVMValueRef
any_of(Access *a, LLVMValueRef *ms, int n)
{
	LLVMValueRef r = ms[0];
	int i;

	for (i = 1; i < n; i++)
		r = LLVMBuildOr(a->fn->cg->B, r, ms[i], "");
	return r;
}

/* Element i of vector g: contiguous, so an offset from the vector's
 * first (no need to keep every element's address). */
static LLVMValueRef
elem_ptr(Access *a, uint32_t g, int i)
{
	Cg *cg = a->fn->cg;
	LLVMValueRef off = cg_i64(cg, (int64_t)i * a->eb);

	if (!i)
		return a->ptr[g];
	return LLVMBuildGEP2(cg->B, cg->t_i8, a->ptr[g], &off, 1, "");
}

/* Zeros of the element type for up to 16 elements (an `other` for
 * vec_load_words). */
static LLVMValueRef *
zero_elems(Access *a)
{
	LLVMValueRef *z = arena_alloc(a->fn->a, 16 * sizeof *z);
	int i;

	for (i = 0; i < 16; i++)
		z[i] = LLVMConstNull(cg_type(a->fn->cg, a->ety));
	return z;
}

/*
 * A masked load's vectors not all in, without a branch (edge_pred): where
 * a warp's lanes hold several rows of a tile (narrow rows), every warp
 * holds rows' ends, and a lane that took the element path's branch kept
 * the warp waiting for its loads where the paths joined (bench/RESULTS.md,
 * session 32: softmax at 127 columns, 46% of the stall samples).  Instead
 * every lane issues the vector's load predicated on all of it being in
 * and the element loads predicated on the rest, and a select keeps one:
 * more instructions, and no load waits before the next vector's are
 * issued.  Rows a warp holds alone would keep the branch (a row's end is
 * in one of its warps).  An A/B knob until timed: TLX_CG_EDGE=auto as
 * said, =pred for every masked load, else (the default) the branch.
 */
static bool
edge_pred_ok(Access *a)
{
	int sh = ly_dim_shift(a->ly, a->dim), i;
	uint32_t line = (uint32_t)(a->ly->shape[a->dim] - 1) << sh;

	if (!a->mask || a->op->kind != OP_LOAD || a->fn->cg->edge == CG_EDGE_BRANCH)
		return false;
	if (a->fn->cg->edge == CG_EDGE_PRED)
		return true;
	for (i = 0; i < LY_LANES; i++)
		if (a->ly->lane[i] & ~line)
			return true;
	return false;
}

/* Vector g's words: `vec` where `all` (all n elements in) holds, else its
 * elements loaded one by one where the mask lets them in. */
static LLVMValueRef
edge_select(Access *a, uint32_t g, int n, LLVMValueRef all, LLVMValueRef vec)
{
	LLVMBuilderRef B = a->fn->cg->B;
	LLVMValueRef vs[16], rest = LLVMBuildNot(B, all, "");
	int i;

	for (i = 0; i < n; i++)
		vec_load(a, elem_ptr(a, g, i), 1,
			 LLVMBuildAnd(B, rest, a->mask[g + i], ""),
			 a->other + g + i, vs + i);
	return LLVMBuildSelect(B, all, vec, pack(a, vs, n), "");
}

static void
load_group(Access *a, uint32_t g, int n, LLVMValueRef *out)
{
	CgFn *fn = a->fn;
	LLVMBuilderRef B = fn->cg->B;
	LLVMBasicBlockRef ld, slow, join, ib[2];
	LLVMValueRef vs[16], w[2], phi;
	int i;

	if (!a->mask) {
		vec_load(a, a->ptr[g], n, NULL, NULL, out);
		return;
	}
	if (mask_uniform(a, n)) {
		vec_load(a, a->ptr[g], n, a->mask[g], a->other + g, out);
		return;
	}
	if (a->edge_pred) {
		LLVMValueRef all = all_of(a, g, n);

		unpack(a, edge_select(a, g, n, all, vec_load_words(a, a->ptr[g], n,
				      all, zero_elems(a))), n, out);
		return;
	}
	/* the whole vector when it is all in, else element by element */
	ld = cg_new_block(fn, "ld");
	slow = cg_new_block(fn, "ld.edge");
	join = cg_new_block(fn, "ld.join");
	LLVMBuildCondBr(B, all_of(a, g, n), ld, slow);
	LLVMPositionBuilderAtEnd(B, ld);
	w[0] = vec_load_words(a, a->ptr[g], n, NULL, NULL);
	ib[0] = LLVMGetInsertBlock(B);
	LLVMBuildBr(B, join);
	LLVMPositionBuilderAtEnd(B, slow);
	for (i = 0; i < n; i++)
		vec_load(a, elem_ptr(a, g, i), 1, a->mask[g + i], a->other + g + i,
			 vs + i);
	w[1] = pack(a, vs, n);
	ib[1] = LLVMGetInsertBlock(B);
	LLVMBuildBr(B, join);
	LLVMPositionBuilderAtEnd(B, join);
	/* one phi of the words, not one per element (ptxas kept a layer
	 * norm's bf16 phis in local memory) */
	phi = LLVMBuildPhi(B, LLVMTypeOf(w[0]), "");
	LLVMAddIncoming(phi, w, ib, 2);
	unpack(a, phi, n, out);
}

static void
store_group(Access *a, uint32_t g, int n)
{
	CgFn *fn = a->fn;
	LLVMBuilderRef B = fn->cg->B;
	LLVMBasicBlockRef st, slow, join;
	int i;

	if (!a->mask) {
		vec_store(a, a->ptr[g], n, NULL, a->val + g);
		return;
	}
	if (mask_uniform(a, n)) {
		vec_store(a, a->ptr[g], n, a->mask[g], a->val + g);
		return;
	}
	st = cg_new_block(fn, "st");
	slow = cg_new_block(fn, "st.edge");
	join = cg_new_block(fn, "st.join");
	LLVMBuildCondBr(B, all_of(a, g, n), st, slow);
	LLVMPositionBuilderAtEnd(B, st);
	vec_store(a, a->ptr[g], n, NULL, a->val + g);
	LLVMBuildBr(B, join);
	LLVMPositionBuilderAtEnd(B, slow);
	for (i = 0; i < n; i++)
		vec_store(a, elem_ptr(a, g, i), 1, a->mask[g + i], a->val + g + i);
	LLVMBuildBr(B, join);
	LLVMPositionBuilderAtEnd(B, join);
}

static void operands(Access *a);

/* The generic path of a narrow access element by element is a loop over
 * the thread's registers (store_loop, load_loop) through a local array
 * that holds the registers' elements as they are in memory: each
 * element's pointer and mask are evaluated at run time (cg_elem_at), one
 * copy of the code instead of one per element (a GEMM's epilogue had
 * 128); it runs only for unaligned pointers or odd strides (loop_ok). */
static LLVMValueRef
elem_array(Access *a, const char *name)
{
	LLVMValueRef arr = LLVMBuildAlloca(a->fn->Balloca,
					   LLVMArrayType2(a->mt, (unsigned)ly_nregs(a->ly)),
					   name);

	LLVMSetAlignment(arr, 16);
	return arr;
}

/* Element i of the array (i: an LLVM i32). */
static LLVMValueRef
elem_slot(Access *a, LLVMValueRef arr, LLVMValueRef i)
{
	return LLVMBuildGEP2(a->fn->cg->B, a->mt, arr, &i, 1, "");
}

/* Register j's coordinates c, pointer *p and mask *m (NULL when the
 * access has none), evaluated at run time. */
static void
elem_at(Access *a, LLVMValueRef j, LLVMValueRef *c, LLVMValueRef *p,
	LLVMValueRef *m)
{
	Op *op = a->op;
	uint32_t mi = 1 + a->pi + a->nvals;

	cg_reg_coords(a->fn, a->ly, j, c);
	*p = cg_elem_at(a->fn, op->opnds[a->pi], c);
	*m = op->nopnds > mi ? cg_elem_at(a->fn, op->opnds[mi], c) : NULL;
}

/* Starts the loop: register j (returned), its coordinates c, pointer *p
 * and mask *m. */
static LLVMValueRef
elem_loop_begin(Access *a, CgLoop *loop, const char *name, LLVMValueRef *c,
		LLVMValueRef *p, LLVMValueRef *m)
{
	LLVMValueRef j = cg_loop_begin(a->fn, loop, name);

	elem_at(a, j, c, p, m);
	return j;
}

/* A store: the values go in 16 bytes at a time (one store per element
 * made NVPTX's strength reduction scan a GEMM epilogue's 128 addresses
 * against each other), the loop stores each element. */
static void
store_loop(Access *a)
{
	CgFn *fn = a->fn;
	LLVMBuilderRef B = fn->cg->B;
	uint32_t n = (uint32_t)ly_nregs(a->ly), k = MIN(n, (uint32_t)MAX(1, 16 / a->eb));
	LLVMValueRef arr = elem_array(a, "st.vals"), c[TY_MAX_RANK], p, m, v, j, st;
	CgLoop loop;
	uint32_t i;

	for (i = 0; i < n; i += k) {
		st = LLVMBuildStore(B, pack(a, a->val + i, (int)k),
				    elem_slot(a, arr, cg_i32(fn->cg, i)));
		LLVMSetAlignment(st, k * (uint32_t)a->eb);
	}
	j = elem_loop_begin(a, &loop, "st", c, &p, &m);
	v = from_mem(a, LLVMBuildLoad2(B, a->mt, elem_slot(a, arr, j), ""));
	vec_store(a, p, 1, m, &v);
	cg_loop_end(fn, &loop, n);
}

/* Can the generic path of a narrow access go element by element through
 * a loop?  Its pointers and mask (and a load's `other`) must be
 * rematerialized: each is evaluated at the register's coordinates inside
 * the loop. */
static bool
loop_ok(Access *a, int n, uint32_t nr)
{
	CgFn *fn = a->fn;
	Op *op = a->op;
	uint32_t i;

	if (!a->slow || nr <= 1 || (n != 1 && n * a->eb >= 4) ||
	    !fn->vals[op->opnds[0]].remat)
		return false;
	for (i = 1 + a->nvals; i < op->nopnds; i++)
		if (cg_is_tile(fn, op->opnds[i]) && !fn->vals[op->opnds[i]].remat)
			return false;
	return true;
}

/* A load: the loop loads each element (masked-off ones are `other`) into
 * the array, which load_back reads back as the fast path's words (a row
 * kernel's generic path had an unrolled predicated load, address and
 * compare per element).  An iteration issues LOADS_IN_FLIGHT loads before
 * it stores any: one load at a time streamed a row kernel's unaligned rows
 * at a fraction of the bandwidth. */
enum { LOADS_IN_FLIGHT = 4 };

static LLVMValueRef
load_loop(Access *a)
{
	CgFn *fn = a->fn;
	LLVMBuilderRef B = fn->cg->B;
	Op *op = a->op;
	uint32_t nr = (uint32_t)ly_nregs(a->ly), k, i;
	LLVMValueRef arr = elem_array(a, "ld.vals"), c[TY_MAX_RANK], p, m, o, j;
	LLVMValueRef jj[LOADS_IN_FLIGHT], w[LOADS_IN_FLIGHT];
	CgLoop loop;

	for (k = MIN(nr, LOADS_IN_FLIGHT); nr % k; k--)
		;
	j = LLVMBuildMul(B, cg_loop_begin(fn, &loop, "ld"), cg_i32(fn->cg, k), "");
	for (i = 0; i < k; i++) {
		jj[i] = i ? LLVMBuildAdd(B, j, cg_i32(fn->cg, i), "") : j;
		elem_at(a, jj[i], c, &p, &m);
		o = op->nopnds > 2 ? cg_elem_at(fn, op->opnds[2], c)
				   : LLVMConstNull(cg_type(fn->cg, a->ety));
		w[i] = vec_load_words(a, p, 1, m, &o);
	}
	for (i = 0; i < k; i++)
		LLVMBuildStore(B, w[i], elem_slot(a, arr, jj[i]));
	cg_loop_end(fn, &loop, nr / k);
	return arr;
}

/* The words of registers g .. g+n-1 from load_loop's array. */
static LLVMValueRef
load_back(Access *a, LLVMValueRef arr, uint32_t g, int n)
{
	int words;
	LLVMValueRef l = LLVMBuildLoad2(a->fn->cg->B, word_type(a, n, &words),
					elem_slot(a, arr, cg_i32(a->fn->cg, g)),
					"");

	LLVMSetAlignment(l, (unsigned)MIN(16, n * a->eb));
	return l;
}

/*
 * Realigned loads: the generic path of a load whose vectors are
 * contiguous but whose pointers are not known to be aligned (rows with a
 * pitch that is not a multiple of 16 bytes).  Vector g of n elements, VB
 * = n * eb = 8 or 16 bytes at p, d = p % VB bytes past an aligned
 * address, is bytes d .. d + VB - 1 of the aligned blocks at p - d and
 * p - d + VB: two vector loads and a funnel shift of the words that d
 * picks, instead of n element loads.  The blocks read bytes outside the
 * vector: those before p lie in the allocation the row lies in (which
 * starts 16-byte aligned); those after it are read only where they are
 * elements of the tile that the mask lets in (the element that ends the
 * second block is in: the pointer's dim is contiguous over the whole
 * tile).  At the tile's or the mask's edge the second block is the
 * vector's own d bytes in it, in naturally aligned pieces of 8, 4, 2
 * and 1 bytes where d's bits say (realign_tail).  A vector not all in
 * goes element by element.  A cp_async takes the same path (its words
 * go to shared memory).
 */
static bool
realign_ok(Access *a, int n)
{
	CgFn *fn = a->fn;
	Op *op = a->op;
	Value ptr = op->opnds[a->pi], m = ir_access_mask(op);
	int d = a->dim, k = 0, sh = ly_dim_shift(a->ly, d);
	bool load = op->kind != OP_STORE;

	if ((op->kind != OP_LOAD && op->kind != OP_STORE &&
	     op->kind != OP_CP_ASYNC) || !a->slow ||
	    (n * a->eb != 8 && n * a->eb != 16) || d < 0 || ly_warp_dup(a->ly) ||
	    a->ety->kind == TY_I1)
		return false;
	/* n registers run along d, contiguous in memory: over the whole
	 * dim for a load, whose second block is the next elements' */
	while (k < a->ly->nreg && a->ly->reg[k] == 1u << (sh + k))
		k++;
	if ((1 << k) < n || a->gen[ptr].contig[d] < (load ? a->ly->shape[d] : n))
		return false;
	return !load || !m || !cg_is_tile(fn, m) || fn->vals[m].remat;
}

/* Word k of the bytes from byte e (an i32) of words x[]: x[e / 4 + k]
 * and the next word funnel-shifted down by e % 4 bytes, e / 4 one of 0 ..
 * nq - 1. */
static LLVMValueRef
funnel_word(Cg *cg, LLVMValueRef *x, LLVMValueRef e, int k, int nq)
{
	LLVMBuilderRef B = cg->B;
	LLVMValueRef q = LLVMBuildLShr(B, e, cg_i32(cg, 2), "");
	LLVMValueRef lo = x[k], hi = x[k + 1], f[3];
	LLVMTypeRef i32 = cg->t_i32;
	int j;

	for (j = 1; j < nq; j++) {
		LLVMValueRef at = LLVMBuildICmp(B, LLVMIntEQ, q, cg_i32(cg, j), "");

		lo = LLVMBuildSelect(B, at, x[j + k], lo, "");
		hi = LLVMBuildSelect(B, at, x[j + k + 1], hi, "");
	}
	f[0] = hi;
	f[1] = lo;
	f[2] = LLVMBuildShl(B, LLVMBuildAnd(B, e, cg_i32(cg, 3), ""),
			    cg_i32(cg, 3), "");
	return cg_intr(cg, "llvm.fshr", &i32, 1, f, 3);
}

/* The w words at byte d of the 2 * w words x[]: the VB bytes at byte d.
 * The words move down by d / 4 one bit of it at a time (a select per
 * word and bit), then each word is funnel-shifted with the next by d % 4
 * bytes. */
static LLVMValueRef
realign_words(Access *a, LLVMValueRef *x, int w, LLVMValueRef d)
{
	Cg *cg = a->fn->cg;
	LLVMBuilderRef B = cg->B;
	LLVMTypeRef i32 = cg->t_i32;
	LLVMValueRef r = LLVMGetUndef(LLVMVectorType(i32, (unsigned)w)), y[8], f[3];
	LLVMValueRef q = LLVMBuildLShr(B, d, cg_i32(cg, 2), ""), c;
	int i, n = 2 * w, bit;

	for (i = 0; i < n; i++)
		y[i] = x[i];
	for (bit = w / 2; bit >= 1; bit /= 2) {
		c = LLVMBuildICmp(B, LLVMIntNE, LLVMBuildAnd(B, q, cg_i32(cg, bit), ""),
				  cg_i32(cg, 0), "");
		for (i = 0; i + bit < n; i++)
			y[i] = LLVMBuildSelect(B, c, y[i + bit], y[i], "");
		n -= bit;
	}
	f[2] = LLVMBuildShl(B, LLVMBuildAnd(B, d, cg_i32(cg, 3), ""),
			    cg_i32(cg, 3), "");
	for (i = 0; i < w; i++) {
		f[0] = y[i + 1];
		f[1] = y[i];
		r = LLVMBuildInsertElement(B, r, cg_intr(cg, "llvm.fshr", &i32, 1, f, 3),
					   cg_i32(cg, i), "");
	}
	return r;
}

/* Where `on` holds, the first d bytes of the aligned block at pb as its
 * words (the rest zero; all zero elsewhere): the pieces of d's bits,
 * largest first, each at d rounded down to twice its size (a multiple of
 * it), where it lands in word off / 4 at byte off % 4. */
static LLVMValueRef
realign_tail(Access *a, LLVMValueRef pb, LLVMValueRef d, LLVMValueRef on, int n)
{
	Cg *cg = a->fn->cg;
	LLVMBuilderRef B = cg->B;
	int vb = n * a->eb, w = vb / 4, words, s, i, j;
	LLVMTypeRef wt = word_type(a, n, &words);
	LLVMValueRef b[4], *zero = zero_elems(a), piece, off, at, x, r;

	for (i = 0; i < w; i++)
		b[i] = cg_i32(cg, 0);
	for (s = vb / 2; s >= a->eb; s /= 2) {
		off = LLVMBuildAnd(B, d, cg_i32(cg, ~(2 * s - 1)), "");
		piece = vec_load_words(a, LLVMBuildGEP2(B, cg->t_i8, pb,
					(LLVMValueRef[]){ LLVMBuildZExt(B, off,
						cg->t_i64, "") }, 1, ""),
				       s / a->eb, LLVMBuildAnd(B, on,
					LLVMBuildICmp(B, LLVMIntNE,
					LLVMBuildAnd(B, d, cg_i32(cg, s), ""),
					cg_i32(cg, 0), ""), ""), zero);
		for (j = 0; j < MAX(1, s / 4); j++) {
			if (s >= 4) {
				x = word(a, piece, s / 4, j);
			} else {
				x = LLVMBuildZExt(B, piece, cg->t_i32, "");
				x = LLVMBuildShl(B, x, LLVMBuildShl(B,
					LLVMBuildAnd(B, off, cg_i32(cg, 3), ""),
					cg_i32(cg, 3), ""), "");
			}
			at = LLVMBuildAdd(B, LLVMBuildLShr(B, off, cg_i32(cg, 2), ""),
					  cg_i32(cg, j), "");
			for (i = j; i < w; i += MAX(1, s / 2))
				b[i] = LLVMBuildOr(B, b[i], LLVMBuildSelect(B,
					LLVMBuildICmp(B, LLVMIntEQ, at, cg_i32(cg, i), ""),
					x, cg_i32(cg, 0), ""), "");
		}
	}
	r = LLVMGetUndef(LLVMVectorType(cg->t_i32, (unsigned)w));
	for (i = 0; i < w; i++)
		r = LLVMBuildInsertElement(B, r, b[i], cg_i32(cg, i), "");
	return LLVMBuildBitCast(B, r, wt, "");
}

/* The second block at pb where the vector reaches into it (split):
 * whole where the bytes past the vector are in (a predicated load), else
 * the vector's part; zero elsewhere.  The part, a dozen predicated loads
 * and selects, is behind a branch: only a row's last vector takes it
 * (with edge_pred every lane computes it, predicated). */
static LLVMValueRef
realign_second(Access *a, LLVMValueRef pb, LLVMValueRef d, LLVMValueRef split,
	       LLVMValueRef in, int n)
{
	CgFn *fn = a->fn;
	LLVMBuilderRef B = fn->cg->B;
	LLVMValueRef *zero = zero_elems(a), whole, part, r, iv[2];
	LLVMBasicBlockRef tail, join, ib[2];
	int words;

	whole = vec_load_words(a, pb, n, LLVMBuildAnd(B, split, in, ""), zero);
	part = LLVMBuildAnd(B, split, LLVMBuildNot(B, in, ""), "");
	if (a->edge_pred)
		return LLVMBuildOr(B, whole, realign_tail(a, pb, d, part, n), "");
	tail = cg_new_block(fn, "ld.tail");
	join = cg_new_block(fn, "ld.tail.join");
	ib[0] = LLVMGetInsertBlock(B);
	LLVMBuildCondBr(B, part, tail, join);
	LLVMPositionBuilderAtEnd(B, tail);
	iv[1] = realign_tail(a, pb, d, LLVMConstInt(fn->cg->t_i1, 1, 0), n);
	ib[1] = LLVMGetInsertBlock(B);
	LLVMBuildBr(B, join);
	LLVMPositionBuilderAtEnd(B, join);
	iv[0] = LLVMConstNull(word_type(a, n, &words));
	r = LLVMBuildPhi(B, LLVMTypeOf(iv[1]), "");
	LLVMAddIncoming(r, iv, ib, 2);
	return LLVMBuildOr(B, whole, r, "");
}

/* Vector g (n elements) as two blocks of words and the byte offset d
 * into them (rw[0], rw[1], rw[2]): the aligned blocks where all of it is
 * in, else its elements loaded one by one and d = 0 (with edge_later:
 * zeros, and rw[3] is whether it is all in).  realign_words
 * shifts them after every vector's loads are issued, so that the loads
 * of a thread's vectors are in flight together; with fin, rw[0] is the
 * vector's words already shifted (rw[2] = 0), and where d = 0 they are
 * one aligned load. */
static LLVMValueRef realign_finish(Access *a, LLVMValueRef *rw, int n);

static void
realign_group(Access *a, uint32_t g, int n, bool fin, LLVMValueRef *rw)
{
	CgFn *fn = a->fn;
	Cg *cg = fn->cg;
	LLVMBuilderRef B = cg->B;
	int vb = n * a->eb, words, i, k;
	LLVMTypeRef wt = word_type(a, n, &words);
	LLVMValueRef p = LLVMBuildPtrToInt(B, a->ptr[g], cg->t_i64, "");
	/* an element's address is a multiple of its size, and so is d:
	 * saying so for 4- and 8-byte elements folds their byte funnel
	 * shift away (for 2-byte ones LLVM made the shift by 0 or 16 a
	 * select of both, which spilled softmax at 32768 columns) */
	LLVMValueRef d64 = LLVMBuildAnd(B, p, cg_i64(cg, (vb - 1) &
					~(a->eb >= 4 ? a->eb - 1 : 0)), "");
	LLVMValueRef pa = LLVMBuildSub(B, p, d64, "");
	LLVMValueRef d = LLVMBuildTrunc(B, d64, cg->t_i32, "");
	LLVMValueRef split = LLVMBuildICmp(B, LLVMIntNE, d, cg_i32(cg, 0), "");
	LLVMValueRef c[TY_MAX_RANK], last, ok, in, *zero = zero_elems(a), vs[16], pb;
	LLVMValueRef ra_v[3], edge_v[3], none_v[3] = { NULL, NULL, NULL };
	LLVMBasicBlockRef ra, edge, join, ib[3];
	unsigned ni = 2;
	Value m = ir_access_mask(a->op);

	/* the element that holds the second block's last byte:
	 * (2 VB - 1 - d) / eb elements past the vector's first */
	cg_reg_coords(fn, a->ly, cg_i32(cg, (int)g), c);
	last = LLVMBuildAdd(B, c[a->dim], LLVMBuildUDiv(B,
			    LLVMBuildSub(B, cg_i32(cg, 2 * vb - 1), d, ""),
			    cg_i32(cg, a->eb), ""), "");
	in = LLVMBuildICmp(B, LLVMIntULT, last,
			   cg_i32(cg, (int)a->ly->shape[a->dim]), "");
	ok = LLVMConstInt(cg->t_i1, 1, 0);
	if (a->mask) {
		LLVMValueRef ml;

		c[a->dim] = last;
		ml = cg_is_tile(fn, m) ? cg_elem_at(fn, m, c) : a->mask[g];
		/* a mask that cannot be evaluated there: never the blocks */
		in = ml ? LLVMBuildAnd(B, in, ml, "") : LLVMConstInt(cg->t_i1, 0, 0);
		ok = all_of(a, g, n);
	}
	pb = LLVMBuildIntToPtr(B, LLVMBuildAdd(B, pa, cg_i64(cg, vb), ""),
			       LLVMTypeOf(a->ptr[g]), "");
	pa = LLVMBuildIntToPtr(B, pa, LLVMTypeOf(a->ptr[g]), "");
	if (a->edge_later || a->edge_pred) {
		/* no branch: a vector not all in is zero, and rw[3] says so
		 * (edge_pred: its elements are rw[4]) */
		rw[0] = vec_load_words(a, pa, n, ok, zero);
		rw[1] = realign_second(a, pb, d, LLVMBuildAnd(B, split, ok, ""),
				       in, n);
		rw[2] = d;
		rw[3] = ok;
		if (a->edge_pred)
			rw[4] = edge_select(a, g, n, ok, LLVMConstNull(wt));
		return;
	}
	ra = cg_new_block(fn, "ld.realign");
	edge = cg_new_block(fn, "ld.edge");
	join = cg_new_block(fn, "ld.join");
	LLVMBuildCondBr(B, ok, ra, edge);
	LLVMPositionBuilderAtEnd(B, ra);
	if (fin) {
		/* d = 0 (a row the peel-rows pass shifted to a 16-byte
		 * boundary): one vector load, no shift.  Each arm loads the
		 * first block itself: loaded once above the branch, layer
		 * norm at 32768 columns spilled 20 bytes more */
		LLVMBasicBlockRef al = cg_new_block(fn, "ld.aligned");
		LLVMBasicBlockRef sh = cg_new_block(fn, "ld.shift");
		LLVMBasicBlockRef mg = cg_new_block(fn, "ld.realigned");
		LLVMBasicBlockRef fb[2];
		LLVMValueRef fv[2], x[2];

		LLVMBuildCondBr(B, split, sh, al);
		LLVMPositionBuilderAtEnd(B, al);
		fv[0] = vec_load_words(a, pa, n, NULL, NULL);
		fb[0] = LLVMGetInsertBlock(B);
		LLVMBuildBr(B, mg);
		LLVMPositionBuilderAtEnd(B, sh);
		x[0] = vec_load_words(a, pa, n, NULL, NULL);
		x[1] = realign_second(a, pb, d, split, in, n);
		fv[1] = realign_finish(a, (LLVMValueRef[]){ x[0], x[1], d }, n);
		fb[1] = LLVMGetInsertBlock(B);
		LLVMBuildBr(B, mg);
		LLVMPositionBuilderAtEnd(B, mg);
		ra_v[0] = LLVMBuildPhi(B, wt, "");
		LLVMAddIncoming(ra_v[0], fv, fb, 2);
		ra_v[1] = ra_v[0];
		ra_v[2] = cg_i32(cg, 0);
	} else {
		ra_v[0] = vec_load_words(a, pa, n, NULL, NULL);
		ra_v[1] = realign_second(a, pb, d, split, in, n);
		ra_v[2] = d;
	}
	ib[0] = LLVMGetInsertBlock(B);
	LLVMBuildBr(B, join);
	/* a thread's one or two vectors: one none of whose elements are in
	 * (a row's end in a tile wider than the row) loads nothing; with
	 * more, the branch added spills where registers were full (softmax
	 * at 32768 columns, layer norm at 8192 and more) */
	LLVMPositionBuilderAtEnd(B, edge);
	if (a->mask && (uint32_t)ly_nregs(a->ly) <= (uint32_t)(2 * n)) {
		LLVMBasicBlockRef el = cg_new_block(fn, "ld.elems");

		none_v[0] = none_v[1] = pack(a, a->other + g, n);
		none_v[2] = cg_i32(cg, 0);
		ib[2] = edge;
		LLVMBuildCondBr(B, any_of(a, a->mask + g, n), el, join);
		LLVMPositionBuilderAtEnd(B, el);
		ni = 3;
	}
	for (i = 0; i < n; i++)
		vec_load(a, elem_ptr(a, g, i), 1, a->mask ? a->mask[g + i] : NULL,
			 a->other + g + i, vs + i);
	edge_v[0] = edge_v[1] = pack(a, vs, n);
	edge_v[2] = cg_i32(cg, 0);
	ib[1] = LLVMGetInsertBlock(B);
	LLVMBuildBr(B, join);
	LLVMPositionBuilderAtEnd(B, join);
	for (k = 0; k < 3; k++) {
		LLVMValueRef iv[3] = { ra_v[k], edge_v[k], none_v[k] };

		rw[k] = LLVMBuildPhi(B, k < 2 ? wt : cg->t_i32, "");
		LLVMAddIncoming(rw[k], iv, ib, ni);
	}
}

/* The words of a vector from realign_group's blocks. */
static LLVMValueRef
realign_finish(Access *a, LLVMValueRef *rw, int n)
{
	int w = n * a->eb / 4, words, i;
	LLVMTypeRef wt = word_type(a, n, &words);
	LLVMValueRef x[8];

	for (i = 0; i < w; i++) {
		x[i] = word(a, rw[0], w, i);
		x[w + i] = word(a, rw[1], w, i);
	}
	return LLVMBuildBitCast(a->fn->cg->B, realign_words(a, x, w, rw[2]), wt,
				"");
}

/* Every vector of n elements of the load realigned: its words (words[g]
 * for the vector at register g).  `flight` vectors' blocks are loaded
 * before the first of them is shifted.  A load takes REALIGN_IN_FLIGHT:
 * two blocks of each in registers at once spilled a layer norm's x, w and
 * b (4096 wide, 8 warps, 64 registers) at 2; the warps resident keep the
 * bytes in flight.  A copy takes all of its vectors: its words go to
 * shared memory at once. */
enum { REALIGN_IN_FLIGHT = 1 };

static void
realign_all(Access *a, int n, int flight, LLVMValueRef *words)
{
	uint32_t dup = ly_dup_mask(a->ly), g, h, k, nr = (uint32_t)ly_nregs(a->ly);
	LLVMValueRef *rw = arena_alloc(a->fn->a, 5 * nr * sizeof *rw);
	bool fin;

	a->edge_pred = edge_pred_ok(a);  /* a copy (edge_later) is no load */
	/* a load peel-rows shifted to its rows' 16-byte boundaries: d = 0
	 * but where the row did not fit */
	fin = flight == 1 && !a->edge_later && !a->edge_pred &&
	      attr_int(&a->op->attrs, "peeled", 0);
	cg_scope_push(a->fn);
	operands(a);
	a->vec = n;
	for (g = 0; g < nr; g = h) {
		for (h = g, k = 0; h < nr && k < (uint32_t)flight; h += (uint32_t)n)
			if (!(h & dup)) {
				realign_group(a, h, n, fin, rw + 5 * h);
				k++;
			}
		for (; g < h; g += (uint32_t)n) {
			LLVMValueRef *x = rw + 5 * g;

			if (g & dup)
				continue;
			words[g] = fin ? x[0] : realign_finish(a, x, n);
			if (a->edge_pred)
				words[g] = LLVMBuildSelect(a->fn->cg->B, x[3], words[g],
							   x[4], "");
		}
	}
	if (a->edge_later)
		for (g = 0; g < nr; g += (uint32_t)n)
			if (!(g & dup))
				a->val[g] = rw[5 * g + 3];
	cg_scope_pop(a->fn);
}

/*
 * Realigned stores: vector g at p, d = p % VB bytes past an aligned
 * address, all of it in, is written in naturally aligned pieces of its
 * own bytes: one vector store where d = 0; else the bytes up to the next
 * aligned address (pieces of 1, 2, 4, 8 bytes where that address's bits
 * say, rising) and those after it (8, 4, 2, 1 where d's bits say) --
 * three or four stores of 8 bf16 on average instead of eight.  A switch
 * on d picks the pieces, so that each case's offsets, sizes and words are
 * constants (a piece computed from d took a dozen selects to find its
 * words, 120 instructions a vector); the lanes of a warp take as many
 * cases as their vectors have values of d, one for rows of a pitch that
 * is a multiple of 16 bytes, two to eight for narrow rows.  A vector
 * partly in is stored element by element, one wholly out not at all.
 */

/* Stores `size` bytes of the vector's bytes from byte e (x: its words and
 * a zero) at address base + o, where pred holds (NULL: always). */
static void
store_piece(Access *a, LLVMValueRef base, LLVMValueRef o, LLVMValueRef *x,
	    int w, LLVMValueRef e, int size, LLVMValueRef pred)
{
	Cg *cg = a->fn->cg;
	LLVMBuilderRef B = cg->B;
	LLVMValueRef args[4];
	char text[96];

	args[0] = LLVMBuildGEP2(B, cg->t_i8, base, &o, 1, "");
	/* e + size <= VB: word k's e / 4 is below w - k */
	args[1] = funnel_word(cg, x, e, 0, w);
	if (size == 8) {
		args[2] = funnel_word(cg, x, e, 1, w - 1);
		args[3] = pred;
		cg_asm(cg, cg->t_void, pred ? "@$3 st.global.v2.b32 [$0], {$1, $2};"
		       : "st.global.v2.b32 [$0], {$1, $2};", pred ? "l,r,r,b" : "l,r,r",
		       args, pred ? 4 : 3, true, false);
		return;
	}
	if (size < 4)
		args[1] = LLVMBuildTrunc(B, args[1], cg->t_i16, "");
	if (size == 1)  /* an 8-bit store takes a 16-bit register */
		args[1] = LLVMBuildAnd(B, args[1], LLVMConstInt(cg->t_i16, 255, 0),
				       "");
	args[2] = pred;
	snprintf(text, sizeof text, "%sst.global.b%d [$0], $1;", pred ? "@$2 " : "",
		 size * 8);
	cg_asm(cg, cg->t_void, text, size == 4 ? (pred ? "l,r,b" : "l,r")
	       : (pred ? "l,h,b" : "l,h"), args, pred ? 3 : 2, true, false);
}

/* Vector values vs[n] at pv stored element by element under masks ms
 * (NULL: none). */
static void
elem_stores(Access *a, LLVMValueRef pv, LLVMValueRef *ms, LLVMValueRef *vs,
	    int n)
{
	Cg *cg = a->fn->cg;
	int i;

	for (i = 0; i < n; i++) {
		LLVMValueRef eo = cg_i64(cg, (int64_t)i * a->eb);

		vec_store(a, i ? LLVMBuildGEP2(cg->B, cg->t_i8, pv, &eo, 1, "") : pv, 1,
			  ms ? ms[i] : NULL, vs + i);
	}
}

/* The pieces of a vector d bytes past the aligned address pa (a constant
 * d, a multiple of the element size, 0 < d < VB), x its w words and a
 * zero. */
static void
store_pieces(Access *a, LLVMValueRef pa, LLVMValueRef *x, int w, int d)
{
	Cg *cg = a->fn->cg;
	int vb = 4 * w, s, off;
	LLVMValueRef pb = LLVMBuildGEP2(cg->B, cg->t_i8, pa,
					(LLVMValueRef[]){ cg_i64(cg, vb) }, 1, "");

	/* up to the aligned address: a piece of s bytes at d rounded up to
	 * s, where that has bit s; the vector's bytes from off - d */
	for (s = a->eb; s < vb; s *= 2) {
		off = (d + s - 1) & ~(s - 1);
		if (off & s)
			store_piece(a, pa, cg_i64(cg, off), x, w, cg_i32(cg, off - d), s,
				    NULL);
	}
	/* after it: pieces of d's bits, largest first; the vector's bytes
	 * from VB - d + off */
	for (s = vb / 2; s >= a->eb; s /= 2)
		if (d & s) {
			off = d & ~(2 * s - 1);
			store_piece(a, pb, cg_i64(cg, off), x, w,
				    cg_i32(cg, vb - d + off), s, NULL);
		}
}

/* The vector at pv with masks ms[n] (NULL: none) and values vs[n]. */
static void
realign_store(Access *a, LLVMValueRef pv, LLVMValueRef *ms, LLVMValueRef *vs,
	      int n)
{
	CgFn *fn = a->fn;
	Cg *cg = fn->cg;
	LLVMBuilderRef B = cg->B;
	int vb = n * a->eb, w = vb / 4, i;
	LLVMValueRef p = LLVMBuildPtrToInt(B, pv, cg->t_i64, "");
	LLVMValueRef d64 = LLVMBuildAnd(B, p, cg_i64(cg, vb - 1), "");
	LLVMValueRef d = LLVMBuildTrunc(B, d64, cg->t_i32, "");
	LLVMValueRef pa = LLVMBuildIntToPtr(B, LLVMBuildSub(B, p, d64, ""),
					    LLVMTypeOf(pv), "");
	LLVMValueRef v, x[5], pred, sw;
	LLVMBasicBlockRef st, edge, join, cb;

	st = cg_new_block(fn, "st.realign");
	edge = cg_new_block(fn, "st.edge");
	join = cg_new_block(fn, "st.join");
	pred = LLVMConstInt(cg->t_i1, 1, 0);
	for (i = 0; ms && i < n; i++)
		pred = LLVMBuildAnd(B, pred, ms[i], "");
	LLVMBuildCondBr(B, pred, st, edge);
	LLVMPositionBuilderAtEnd(B, st);
	v = pack(a, vs, n);
	for (i = 0; i < w; i++)
		x[i] = word(a, v, w, i);
	x[w] = cg_i32(cg, 0);
	/* d is a multiple of the element size: the default is d = 0 */
	cb = cg_new_block(fn, "st.whole");
	sw = LLVMBuildSwitch(B, d, cb, (unsigned)(n - 1));
	LLVMPositionBuilderAtEnd(B, cb);
	vec_store(a, pv, n, NULL, vs);
	LLVMBuildBr(B, join);
	for (i = 1; i < n; i++) {
		cb = cg_new_block(fn, "st.pieces");
		LLVMAddCase(sw, cg_i32(cg, i * a->eb), cb);
		LLVMPositionBuilderAtEnd(B, cb);
		store_pieces(a, pa, x, w, i * a->eb);
		LLVMBuildBr(B, join);
	}
	/* a vector none of whose elements are in stores nothing */
	LLVMPositionBuilderAtEnd(B, edge);
	if (ms) {
		cb = cg_new_block(fn, "st.elems");
		LLVMBuildCondBr(B, any_of(a, ms, n), cb, join);
		LLVMPositionBuilderAtEnd(B, cb);
	}
	elem_stores(a, pv, ms, vs, n);
	LLVMBuildBr(B, join);
	LLVMPositionBuilderAtEnd(B, join);
}

/*
 * Realigned stores across a warp (TLX_CG_WARP_STORE=1; by default each
 * lane stores its vector in pieces, realign_store).  Where lanes j = 0
 * .. 2^L - 1 of each run of 2^L lanes hold vectors that follow one
 * another in memory (the vectors' registers, then the run's lane bits,
 * along the contiguous dim), every vector of the run is d = p % VB bytes
 * past an aligned address, and the aligned block under lane j's first
 * byte is lane j - 1's last d bytes and lane j's first VB - d.  Each lane
 * takes its left neighbour's words (shfl.up) and stores that block as
 * one aligned vector, where both vectors are all in (a ballot says which
 * are).  The rest goes element by element, behind one branch: the head
 * of a lane without such a left neighbour, the tail of one whose right
 * neighbour does not store the block after it, and the elements in of a
 * vector partly in.
 */

/* L: the lane bits that continue vector n's run along its dim, over
 * which the pointers are contiguous; 0 where there are none. */
static int
lane_run(Access *a, int n)
{
	const Layout *l = a->ly;
	int d = a->dim, b = ly_dim_shift(l, d) + log2i(n);
	int end = ly_dim_shift(l, d) + ly_dim_bits(l, d), k = 0;
	int64_t contig = a->gen[a->op->opnds[a->pi]].contig[d];

	while (k < LY_LANES && b + k < end && l->lane[k] == 1u << (b + k) &&
	       contig >= (int64_t)n << (k + 1))
		k++;
	return k;
}

/* shfl.sync.up by one lane of a word. */
static LLVMValueRef
shfl_up1(Cg *cg, LLVMValueRef x)
{
	LLVMValueRef args[4] = { cg_i32(cg, -1), x, cg_i32(cg, 1), cg_i32(cg, 0) };

	return cg_intr(cg, "llvm.nvvm.shfl.sync.up.i32", NULL, 0, args, 4);
}

/* Bit `sh` places above lane's (sh = -1: below) of ballot b. */
static LLVMValueRef
ballot_at(Cg *cg, LLVMValueRef b, LLVMValueRef lane, int sh)
{
	LLVMBuilderRef B = cg->B;

	if (sh < 0)
		b = LLVMBuildShl(B, b, cg_i32(cg, 1), "");
	b = LLVMBuildLShr(B, b, lane, "");
	if (sh > 0)
		b = LLVMBuildLShr(B, b, cg_i32(cg, 1), "");
	return LLVMBuildTrunc(B, b, cg->t_i1, "");
}

/* The vector at pv with masks ms[n] (NULL: none) and values vs[n];
 * first and last: whether the lane is its run's first or last. */
static void
store_warp_vec(Access *a, LLVMValueRef pv, LLVMValueRef *ms, LLVMValueRef *vs,
	       int n, LLVMValueRef first, LLVMValueRef last)
{
	CgFn *fn = a->fn;
	Cg *cg = fn->cg;
	LLVMBuilderRef B = cg->B;
	int vb = n * a->eb, w = vb / 4, words, i;
	LLVMValueRef yes = LLVMConstInt(cg->t_i1, 1, 0);
	LLVMValueRef p = LLVMBuildPtrToInt(B, pv, cg->t_i64, "");
	LLVMValueRef d64 = LLVMBuildAnd(B, p, cg_i64(cg, vb - 1), "");
	LLVMValueRef d = LLVMBuildTrunc(B, d64, cg->t_i32, "");
	LLVMValueRef aligned = LLVMBuildICmp(B, LLVMIntEQ, d, cg_i32(cg, 0), "");
	LLVMValueRef pa = LLVMBuildIntToPtr(B, LLVMBuildSub(B, p, d64, ""),
					    LLVMTypeOf(pv), "");
	LLVMValueRef ok = yes, okl = yes, okr = yes;
	LLVMValueRef v = pack(a, vs, n), x[9], blk, whole, tail, head, any = NULL;
	LLVMValueRef bv[16], pm[16], rare, vbd;
	LLVMTypeRef wt = word_type(a, n, &words);
	LLVMBasicBlockRef rb, join;

	for (i = 0; i < w; i++) {
		x[w + i] = word(a, v, w, i);
		/* where d is 0 the block is the lane's own vector */
		x[i] = LLVMBuildSelect(B, aligned, x[w + i], shfl_up1(cg, x[w + i]),
				       "");
	}
	for (i = 0; ms && i < n; i++)
		ok = LLVMBuildAnd(B, ok, ms[i], "");
	if (ms) {
		LLVMValueRef args[2] = { cg_i32(cg, -1), ok }, bal;

		any = any_of(a, ms, n);
		bal = cg_intr(cg, "llvm.nvvm.vote.ballot.sync", NULL, 0, args, 2);
		okl = ballot_at(cg, bal, fn->lane, -1);
		okr = ballot_at(cg, bal, fn->lane, 1);
	}
	vbd = LLVMBuildSub(B, cg_i32(cg, vb), d, "");
	blk = LLVMBuildBitCast(B, realign_words(a, x, w, LLVMBuildAnd(B, vbd,
				cg_i32(cg, vb - 1), "")), wt, "");
	unpack(a, blk, n, bv);
	whole = LLVMBuildAnd(B, ok, LLVMBuildOr(B, aligned, LLVMBuildAnd(B,
			     LLVMBuildNot(B, first, ""), okl, ""), ""), "");
	tail = LLVMBuildAnd(B, LLVMBuildAnd(B, ok, LLVMBuildNot(B, aligned, ""), ""),
			    LLVMBuildOr(B, last, LLVMBuildNot(B, okr, ""), ""), "");
	vec_store(a, pa, n, whole, bv);
	/* the rest element by element, one block for all three: the head
	 * (bytes below VB - d) of a lane whose block is not stored whole,
	 * the tail of one whose right neighbour does not store it, the
	 * elements in of a vector partly in */
	head = LLVMBuildAnd(B, ok, LLVMBuildNot(B, whole, ""), "");
	rare = LLVMBuildOr(B, head, tail, "");
	if (ms)
		rare = LLVMBuildOr(B, rare, LLVMBuildAnd(B, any,
				   LLVMBuildNot(B, ok, ""), ""), "");
	rb = cg_new_block(fn, "st.warp.elems");
	join = cg_new_block(fn, "st.warp.join");
	LLVMBuildCondBr(B, rare, rb, join);
	LLVMPositionBuilderAtEnd(B, rb);
	for (i = 0; i < n; i++) {
		LLVMValueRef lo = LLVMBuildICmp(B, LLVMIntULT, cg_i32(cg, i * a->eb),
						vbd, "");
		LLVMValueRef in = LLVMBuildOr(B, LLVMBuildAnd(B, head, lo, ""),
					      LLVMBuildAnd(B, tail,
					      LLVMBuildNot(B, lo, ""), ""), "");

		pm[i] = ms ? LLVMBuildSelect(B, ok, in, ms[i], "") : in;
	}
	elem_stores(a, pv, pm, vs, n);
	LLVMBuildBr(B, join);
	LLVMPositionBuilderAtEnd(B, join);
}

/* The realigned stores as a loop over the thread's vectors, their values
 * through a local array as store_loop's: one copy of the code, one
 * vector's registers at a time (unrolled, a row kernel's 32 values and
 * every vector's pieces at once spilled at 64 registers).  With first
 * and last (the lane's place in its run), across the warp
 * (store_warp_vec). */
static void
realign_store_loop(Access *a, int n, LLVMValueRef first, LLVMValueRef last)
{
	CgFn *fn = a->fn;
	Cg *cg = fn->cg;
	LLVMBuilderRef B = cg->B;
	uint32_t nr = (uint32_t)ly_nregs(a->ly), i;
	LLVMValueRef arr = elem_array(a, "st.vals"), c[TY_MAX_RANK], p, m, j, st;
	LLVMValueRef ms[16], vs[16], *mp = NULL, w;
	Value mv = ir_access_mask(a->op);
	CgLoop loop;
	int words, k;

	for (i = 0; i < nr; i += (uint32_t)n) {
		st = LLVMBuildStore(B, pack(a, a->val + i, n),
				    elem_slot(a, arr, cg_i32(cg, (int)i)));
		LLVMSetAlignment(st, (unsigned)(n * a->eb));
	}
	j = LLVMBuildMul(B, cg_loop_begin(fn, &loop, "st"), cg_i32(cg, n), "");
	elem_at(a, j, c, &p, &m);
	if (m) {
		mp = ms;
		for (k = 0; k < n; k++) {
			LLVMValueRef ck[TY_MAX_RANK];

			memcpy(ck, c, sizeof ck);
			ck[a->dim] = LLVMBuildAdd(B, c[a->dim], cg_i32(cg, k), "");
			ms[k] = k ? cg_elem_at(fn, mv, ck) : m;
		}
	}
	w = LLVMBuildLoad2(B, word_type(a, n, &words), elem_slot(a, arr, j), "");
	LLVMSetAlignment(w, (unsigned)(n * a->eb));
	unpack(a, w, n, vs);
	if (first)
		store_warp_vec(a, p, mp, vs, n, first, last);
	else
		realign_store(a, p, mp, vs, n);
	cg_loop_end(fn, &loop, nr / (uint32_t)n);
}

/* Every vector of n elements of the store, over runs of 2^L lanes:
 * unrolled, or as realign_store_loop's loop where that would take it. */
static void
realign_store_warp(Access *a, int n, int L, bool loop)
{
	CgFn *fn = a->fn;
	Cg *cg = fn->cg;
	LLVMBuilderRef B = cg->B;
	uint32_t dup = ly_dup_mask(a->ly), nr = (uint32_t)ly_nregs(a->ly), g;
	LLVMValueRef j = LLVMBuildAnd(B, fn->lane, cg_i32(cg, (1 << L) - 1), "");
	LLVMValueRef first = LLVMBuildICmp(B, LLVMIntEQ, j, cg_i32(cg, 0), "");
	LLVMValueRef last = LLVMBuildICmp(B, LLVMIntEQ, j,
					  cg_i32(cg, (1 << L) - 1), "");

	if (loop) {
		realign_store_loop(a, n, first, last);
		return;
	}
	cg_scope_push(fn);
	operands(a);
	a->vec = n;
	for (g = 0; g < nr; g += (uint32_t)n)
		if (!(g & dup))
			store_warp_vec(a, a->ptr[g], a->mask ? a->mask + g : NULL,
				       a->val + g, n, first, last);
	cg_scope_pop(fn);
}

/* All groups of the tile with vectors of n; loads return registers. */
static LLVMValueRef *
access_all(Access *a, int n, bool load)
{
	LLVMValueRef *r = load ? cg_regs(a->fn, a->ly) : NULL, arr;
	uint32_t dup = ly_dup_mask(a->ly), g, k, nr = (uint32_t)ly_nregs(a->ly);
	int vr = a->vfast;

	if (load && vr > n && realign_ok(a, vr)) {
		LLVMValueRef *w = cg_regs(a->fn, a->ly);

		realign_all(a, vr, REALIGN_IN_FLIGHT, w);
		for (g = 0; g < nr; g += (uint32_t)vr)
			if (!(g & dup))
				unpack(a, w[g], vr, r + g);
		for (g = 0; g < nr; g++)
			if (g & dup)
				r[g] = r[g & ~dup];
		return r;
	}
	if (!load && vr > n && realign_ok(a, vr)) {
		int L = a->fn->cg->warp_store ? lane_run(a, vr) : 0;
		/* a loop through a local array past two vectors a thread
		 * (four, unrolled, spilled softmax's and layer norm's generic
		 * entries at 8192 columns and more); unrolled, one or two
		 * vectors need no array, no loop and no per-vector address
		 * from the register's index */
		bool loop = !dup && loop_ok(a, 1, nr) && nr > 2 * (uint32_t)vr;

		if (L) {
			realign_store_warp(a, vr, L, loop);
			return NULL;
		}
		if (loop) {
			realign_store_loop(a, vr, NULL, NULL);
			return NULL;
		}
		cg_scope_push(a->fn);
		operands(a);
		a->vec = vr;
		for (g = 0; g < nr; g += (uint32_t)vr)
			if (!(g & dup))
				realign_store(a, a->ptr[g], a->mask ? a->mask + g : NULL,
					      a->val + g, vr);
		cg_scope_pop(a->fn);
		return NULL;
	}
	if (loop_ok(a, n, nr)) {
		if (!load) {
			store_loop(a);
			return NULL;
		}
		/* read back 16 bytes at a time (a layer norm's generic tail
		 * read its w and b element by element: ptxas -7%) */
		k = MIN(nr, (uint32_t)MAX(1, 16 / a->eb));
		arr = load_loop(a);
		for (g = 0; g < nr; g += k)
			unpack(a, load_back(a, arr, g, (int)k), (int)k, r + g);
		return r;
	}
	/* pointers, masks and `other` are made here, in this path's scope:
	 * the other path's per-element addresses do not stay live */
	cg_scope_push(a->fn);
	operands(a);
	a->vec = n;
	a->edge_pred = load && edge_pred_ok(a);
	for (g = 0; g < nr; g += (uint32_t)n) {
		if (g & dup)
			continue;
		if (load)
			load_group(a, g, n, r + g);
		else
			store_group(a, g, n);
	}
	if (load)
		for (g = 0; g < nr; g++)
			if (g & dup)
				r[g] = r[g & ~dup];
	cg_scope_pop(a->fn);
	return r;
}

/* The generic path of a store (vectors of vg) whose fast vectors also
 * need inner strides of 1 (fast.eq1): where those strides are 1 at run
 * time its vectors are contiguous, if not aligned, and go realigned (a
 * GEMM's C whose rows are an odd number of elements long, whose inner
 * stride is a parameter); elsewhere element by element. */
static void
store_slow(Access *a, int vg)
{
	CgFn *fn = a->fn;
	LLVMBuilderRef B = fn->cg->B;
	uint64_t e = cg_fast_deps(fn, a->op) & fn->assume.eq1;
	const Axis *gen = a->gen;
	LLVMBasicBlockRef rb, eb, join;
	bool ok = false;

	if (e && !realign_ok(a, a->vfast)) {
		a->gen = cg_axis_eq1(fn);
		ok = realign_ok(a, a->vfast);
		a->gen = gen;
	}
	if (!ok) {
		access_all(a, vg, false);
		return;
	}
	rb = cg_new_block(fn, "st.contig");
	eb = cg_new_block(fn, "st.elems");
	join = cg_new_block(fn, "st.contig.join");
	LLVMBuildCondBr(B, cg_guard(fn, e), rb, eb);
	LLVMPositionBuilderAtEnd(B, rb);
	a->gen = cg_axis_eq1(fn);
	access_all(a, vg, false);
	a->gen = gen;
	LLVMBuildBr(B, join);
	LLVMPositionBuilderAtEnd(B, eb);
	access_all(a, vg, false);
	LLVMBuildBr(B, join);
	LLVMPositionBuilderAtEnd(B, join);
}

/* Branches on the check of deps to a fast block, where it leaves the
 * builder (in CG_FAST mode), and *gb, the generic one; both go on to
 * *join. */
static void
fast_branch(CgFn *fn, uint64_t deps, LLVMBasicBlockRef *gb,
	    LLVMBasicBlockRef *join)
{
	LLVMBuilderRef B = fn->cg->B;
	LLVMBasicBlockRef fb = cg_new_block(fn, "fast");

	*gb = cg_new_block(fn, "generic");
	*join = cg_new_block(fn, "join");
	LLVMBuildCondBr(B, cg_guard(fn, deps), fb, *gb);
	LLVMPositionBuilderAtEnd(B, fb);
	fn->mode = CG_FAST;
	fn->ver_deps = deps;
}

/* The vector width of an access emitted once: the fast one in a fast
 * entry or copy, the proven one in a generic one, either when they are
 * equal; 0 when it needs both paths and a check. */
static int
one_width(CgFn *fn, int vf, int vg)
{
	if (fn->mode == CG_GENERIC)
		return vg;
	return vf <= vg || fn->mode == CG_FAST ? vf : 0;
}

/* Emits the access with vectors of the fast and of the proven width,
 * behind the run-time check when they differ. */
static LLVMValueRef *
access(Access *a, bool load)
{
	CgFn *fn = a->fn;
	LLVMBuilderRef B = fn->cg->B;
	Value ptr = a->op->opnds[0];
	int vf = ly_mem_vec(fn->f, ptr, a->ly, fn->ax);
	int vg = ly_mem_vec(fn->f, ptr, a->ly, fn->ax_gen);
	LLVMBasicBlockRef gb, fe, ge, join;
	LLVMValueRef *rf, *rg = NULL, *r;
	uint32_t i;
	int n = one_width(fn, vf, vg);

	a->vfast = vf;
	a->slow = fn->mode == CG_GENERIC && vf > vg;
	if (n && a->slow && !load) {
		store_slow(a, n);
		return NULL;
	}
	if (n)
		return access_all(a, n, load);
	/* the fast path checks the mask's assumptions too when they make it
	 * constant over the fast vectors: one predicate per vector, no edge
	 * path (a GEMM's epilogue) */
	fast_branch(fn, cg_fast_deps(fn, a->op), &gb, &join);
	rf = access_all(a, vf, load);
	fn->mode = CG_BOTH;
	fn->ver_deps = 0;
	fe = LLVMGetInsertBlock(B);
	LLVMBuildBr(B, join);
	LLVMPositionBuilderAtEnd(B, gb);
	a->slow = true;
	if (load)
		rg = access_all(a, vg, load);
	else
		store_slow(a, vg);
	ge = LLVMGetInsertBlock(B);
	LLVMBuildBr(B, join);
	LLVMPositionBuilderAtEnd(B, join);
	if (!load)
		return NULL;
	r = cg_regs(fn, a->ly);
	for (i = 0; i < (uint32_t)ly_nregs(a->ly); i++) {
		LLVMValueRef iv[2] = { rf[i], rg[i] };
		LLVMBasicBlockRef ib[2] = { fe, ge };

		if (i && rf[i] == rf[i - 1] && rg[i] == rg[i - 1]) {
			r[i] = r[i - 1];
			continue;
		}
		r[i] = LLVMBuildPhi(B, LLVMTypeOf(rf[i]), "");
		LLVMAddIncoming(r[i], iv, ib, 2);
	}
	return r;
}

static const char *
load_hint(CgFn *fn, Op *op)
{
	const char *c = attr_str(&op->attrs, "cache");
	const char *e = attr_str(&op->attrs, "evict");

	if (e && !strcmp(e, "first"))
		return ".L1::evict_first";
	if (e && !strcmp(e, "last"))
		return ".L1::evict_last";
	if (c && (!strcmp(c, "cg") || !strcmp(c, "cs") || !strcmp(c, "cv")))
		return arena_printf(fn->a, ".%s", c);
	return NULL;
}

static void
access_init(Access *a, CgFn *fn, Op *op, Type *ety)
{
	memset(a, 0, sizeof *a);
	a->fn = fn;
	a->op = op;
	a->pi = op->kind == OP_CP_ASYNC;
	a->gen = fn->ax_gen;
	a->ety = ty_elem(ety);
	a->mt = a->ety->kind == TY_I1 ? fn->cg->t_i8 : cg_type(fn->cg, a->ety);
	a->eb = MAX(1, ty_bits(a->ety) / 8);
	if (a->ety->kind == TY_PTR)
		a->eb = 8;
}

static void
access_tile(Access *a, uint32_t nvals)
{
	CgFn *fn = a->fn;
	Op *op = a->op;

	a->ly = cg_operand_layout(fn, op, 0);
	a->dim = cg_vec_dim(a->ly);
	a->nvals = nvals;
	/* the stored values exist already (or are made once, here) */
	if (nvals && op->nopnds > 1)
		a->val = cg_operand(fn, op, 1);
}

/* The pointers of an access whose pointer tile runs contiguously along
 * the vectors' dim over the whole dim (proven, not assumed): each
 * register's is its line's first register's plus a constant number of
 * elements, so one address a line is computed and the others are its
 * offsets, which ptxas folds into the accesses (each register's own
 * address, its index sign-extended, took two registers and a multiply).
 * Not on a realigned path: there ptxas spilled more (layer norm's
 * generic entry at 32768 columns, 264 -> 272 bytes).  ptr is the tile's
 * registers; the result a copy. */
static LLVMValueRef *
line_pointers(Access *a, LLVMValueRef *ptr)
{
	CgFn *fn = a->fn;
	const Layout *ly = a->ly;
	Value pv = a->op->opnds[a->pi];
	uint32_t nr = (uint32_t)ly_nregs(ly), dup = ly_dup_mask(ly), along = 0, g;
	uint32_t bits = 0, other = 0;
	int sh, k;
	LLVMValueRef *r;

	if (a->slow || a->dim < 0 || !cg_is_tile(fn, pv) ||
	    ly != cg_operand_layout(fn, a->op, a->pi) ||
	    fn->ax_gen[pv].contig[a->dim] < ly->shape[a->dim])
		return ptr;
	sh = ly_dim_shift(ly, a->dim);
	for (k = 0; k < ly->nreg; k++)
		if (ly_in_dim(ly, a->dim, ly->reg[k]) && !(ly->reg[k] & (ly->reg[k] - 1)))
			along |= 1u << k;
	/* the other bases share no bit with those: a register's coordinate
	 * is theirs plus its own */
	for (k = 0; k < ly->nreg; k++)
		if (along & (1u << k))
			bits |= ly->reg[k];
		else
			other |= ly->reg[k];
	for (k = 0; k < LY_LANES; k++)
		other |= ly->lane[k];
	for (k = 0; k < ly->nwarp; k++)
		other |= ly->warp[k];
	if (!along || (bits & other))
		return ptr;
	r = cg_regs(fn, ly);
	for (g = 0; g < nr; g++) {
		int64_t off = 0;

		r[g] = ptr[g];
		if ((g & dup) || !(g & along))
			continue;
		for (k = 0; k < ly->nreg; k++)
			if (g & along & (1u << k))
				off += ly->reg[k] >> sh;
		r[g] = LLVMBuildGEP2(fn->cg->B, fn->cg->t_i8, ptr[g & ~along],
				     (LLVMValueRef[]){ cg_i64(fn->cg, off * a->eb) }, 1, "");
	}
	return r;
}

/* The rematerialized operands of a tile access, in the current scope. */
static void
operands(Access *a)
{
	CgFn *fn = a->fn;
	Op *op = a->op;
	uint32_t i, first = 1 + a->pi + a->nvals;

	a->ptr = line_pointers(a, cg_operand(fn, op, a->pi));
	a->mask = op->nopnds > first ? cg_operand(fn, op, first) : NULL;
	if (op->kind == OP_LOAD && op->nopnds > 2) {
		a->other = cg_operand(fn, op, 2);
	} else if (op->kind == OP_LOAD || op->kind == OP_CP_ASYNC) {
		a->other = cg_regs(fn, a->ly);
		for (i = 0; i < (uint32_t)ly_nregs(a->ly); i++)
			a->other[i] = LLVMConstNull(cg_type(fn->cg, a->ety));
	}
}

/*
 * Loads whose generic path is load_loop and whose fast path loads every
 * vector as one (predicated) access, lowered together behind one check
 * of their assumptions (cg_load_group): both paths make the fast path's
 * words, one phi per vector joins them, and the words are unpacked after
 * the join, once.  A group is what schedule.c placed side by side (x, w
 * and b of a layer norm at 16 elements per thread): joined one by one,
 * the unpacking of one load waited for its data before the next load
 * was issued.
 */
typedef struct Joined {
	Access a;
	int vf;
	uint32_t nr, dup;  /* registers, replicated ones */
	LLVMValueRef *w;   /* the fast path's words, then the phis */
	LLVMValueRef *wg;  /* the generic path's */
} Joined;

/* Lowering continues for op: its line and its operands' layouts. */
static void
focus(CgFn *fn, Op *op)
{
	cg_set_cur_op(fn, op);
	cg_debug_loc(fn, op->loc);
}

static bool
join_ok(CgFn *fn, Op *op, Joined *j)
{
	Access *a = &j->a;
	Value ptr = op->opnds[0];
	bool ok;

	if (op->kind != OP_LOAD || !cg_is_tile(fn, op->res[0]))
		return false;
	access_init(a, fn, op, ir_type(fn->f, op->res[0]));
	a->hint = load_hint(fn, op);
	access_tile(a, 0);
	j->nr = (uint32_t)ly_nregs(a->ly);
	j->dup = ly_dup_mask(a->ly);
	j->vf = ly_mem_vec(fn->f, ptr, a->ly, fn->ax);
	if (j->vf <= 1 || ly_mem_vec(fn->f, ptr, a->ly, fn->ax_gen) != 1)
		return false;
	a->slow = true;
	ok = loop_ok(a, 1, j->nr);
	a->slow = false;
	return ok && (!ir_access_mask(op) || mask_uniform(a, j->vf));
}

bool
cg_load_group(CgFn *fn, Op **ops, uint32_t n)
{
	LLVMBuilderRef B = fn->cg->B;
	Joined *j = arena_alloc(fn->a, n * sizeof *j);
	LLVMBasicBlockRef gb, join, ib[2];
	LLVMValueRef arr, iv[2], *r;
	uint64_t deps = 0;
	uint32_t i, g;
	bool ok = true;

	for (i = 0; i < n; i++)
		deps |= cg_fast_deps(fn, ops[i]);
	fn->mode = CG_FAST;
	fn->ver_deps = deps;
	for (i = 0; i < n && ok; i++)
		ok = join_ok(fn, ops[i], &j[i]);
	fn->mode = CG_BOTH;
	fn->ver_deps = 0;
	if (!ok)
		return false;
	fast_branch(fn, deps, &gb, &join);
	for (i = 0; i < n; i++) {
		Access *a = &j[i].a;

		focus(fn, ops[i]);
		j[i].w = cg_regs(fn, a->ly);
		cg_scope_push(fn);
		operands(a);
		a->vec = j[i].vf;
		for (g = 0; g < j[i].nr; g += (uint32_t)j[i].vf)
			if (!(g & j[i].dup))
				j[i].w[g] = vec_load_words(a, a->ptr[g], j[i].vf,
							   a->mask ? a->mask[g] : NULL,
							   a->other + g);
		cg_scope_pop(fn);
	}
	fn->mode = CG_BOTH;
	fn->ver_deps = 0;
	ib[0] = LLVMGetInsertBlock(B);
	LLVMBuildBr(B, join);
	LLVMPositionBuilderAtEnd(B, gb);
	for (i = 0; i < n; i++) {
		Access *a = &j[i].a;

		focus(fn, ops[i]);
		a->slow = true;
		j[i].wg = cg_regs(fn, a->ly);
		if (realign_ok(a, j[i].vf)) {
			realign_all(a, j[i].vf, REALIGN_IN_FLIGHT, j[i].wg);
			continue;
		}
		arr = load_loop(a);
		for (g = 0; g < j[i].nr; g += (uint32_t)j[i].vf)
			if (!(g & j[i].dup))
				j[i].wg[g] = load_back(a, arr, g, j[i].vf);
	}
	ib[1] = LLVMGetInsertBlock(B);
	LLVMBuildBr(B, join);
	LLVMPositionBuilderAtEnd(B, join);
	for (i = 0; i < n; i++)
		for (g = 0; g < j[i].nr; g += (uint32_t)j[i].vf) {
			if (g & j[i].dup)
				continue;
			iv[0] = j[i].w[g];
			iv[1] = j[i].wg[g];
			j[i].w[g] = LLVMBuildPhi(B, LLVMTypeOf(iv[0]), "");
			LLVMAddIncoming(j[i].w[g], iv, ib, 2);
		}
	for (i = 0; i < n; i++) {
		Access *a = &j[i].a;

		focus(fn, ops[i]);
		r = cg_regs(fn, a->ly);
		for (g = 0; g < j[i].nr; g += (uint32_t)j[i].vf)
			if (!(g & j[i].dup))
				unpack(a, j[i].w[g], j[i].vf, r + g);
		for (g = 0; g < j[i].nr; g++)
			if (g & j[i].dup)
				r[g] = r[g & ~j[i].dup];
		cg_set_tile(fn, ops[i]->res[0], a->ly, r);
	}
	return true;
}

LLVMValueRef
cg_copy_realign(CgFn *fn, Op *op, const Axis *gen, int n, LLVMValueRef *words)
{
	Cg *cg = fn->cg;
	LLVMBuilderRef B = cg->B;
	Access a;
	uint32_t nr, dup, g;
	LLVMValueRef bad;

	access_init(&a, fn, op, ty_elem(ir_type(fn->f, op->opnds[1]))->elem);
	a.gen = gen;
	a.ly = cg_operand_layout(fn, op, 1);
	a.dim = cg_vec_dim(a.ly);
	a.slow = true;
	a.vfast = n;
	a.edge_later = true;
	nr = (uint32_t)ly_nregs(a.ly);
	dup = ly_dup_mask(a.ly);
	if (nr / (uint32_t)n > 32 || !realign_ok(&a, n))
		return NULL;
	a.val = cg_regs(fn, a.ly);  /* each vector's "all in" */
	realign_all(&a, n, (int)(nr / (uint32_t)n), words);
	bad = cg_i32(cg, 0);
	for (g = 0; g < nr; g += (uint32_t)n)
		if (!(g & dup))
			bad = LLVMBuildOr(B, bad, LLVMBuildSelect(B, a.val[g],
					  cg_i32(cg, 0),
					  cg_i32(cg, (int64_t)1 << (g / (uint32_t)n)), ""),
					  "");
	return bad;
}

static bool
load_op(CgFn *fn, Op *op)
{
	Cg *cg = fn->cg;
	Type *rt = ir_type(fn->f, op->res[0]);
	Access a;

	access_init(&a, fn, op, rt);
	a.hint = load_hint(fn, op);
	if (!cg_is_tile(fn, op->res[0])) {
		LLVMValueRef p = cg_scalar(fn, op->opnds[0]), m, o, v;

		o = op->nopnds > 2 ? cg_scalar(fn, op->opnds[2])
				   : LLVMConstNull(cg_type(cg, rt));
		a.ptr = &p;
		a.other = &o;
		if (op->nopnds > 1) {
			m = cg_scalar(fn, op->opnds[1]);
			a.mask = &m;
		}
		load_group(&a, 0, 1, &v);
		fn->vals[op->res[0]].v = v;
		return true;
	}
	if (fn->mode == CG_BOTH && cg_load_group(fn, &op, 1))
		return true;
	access_tile(&a, 0);
	cg_set_tile(fn, op->res[0], a.ly, access(&a, true));
	return true;
}

/* Runs the rest of the op only where pred holds (NULL: everywhere);
 * returns the block to continue in after cg_pred_end. */
LLVMBasicBlockRef
cg_pred_begin(CgFn *fn, LLVMValueRef pred)
{
	LLVMBuilderRef B = fn->cg->B;
	LLVMBasicBlockRef in, out;

	if (!pred)
		return NULL;
	in = cg_new_block(fn, "first");
	out = cg_new_block(fn, "first.done");
	LLVMBuildCondBr(B, pred, in, out);
	LLVMPositionBuilderAtEnd(B, in);
	fn->pred_depth++;
	return out;
}

void
cg_pred_end(CgFn *fn, LLVMBasicBlockRef out)
{
	if (!out)
		return;
	fn->pred_depth--;
	LLVMBuildBr(fn->cg->B, out);
	LLVMPositionBuilderAtEnd(fn->cg->B, out);
}

LLVMValueRef
cg_load_elem(CgFn *fn, Op *op, LLVMValueRef p, LLVMValueRef m, LLVMValueRef o)
{
	Access a;
	LLVMValueRef v;

	access_init(&a, fn, op, ir_type(fn->f, op->res[0]));
	a.hint = load_hint(fn, op);
	unpack(&a, vec_load_words(&a, p, 1, m, &o), 1, &v);
	return v;
}

void
cg_store_elem(CgFn *fn, Op *op, LLVMValueRef p, LLVMValueRef v, LLVMValueRef m)
{
	Access a;

	access_init(&a, fn, op, ir_type(fn->f, op->opnds[1]));
	vec_store(&a, p, 1, m, &v);
}

/*
 * A store whose values would first be converted through shared memory (a
 * GEMM's accumulator, made in the mma layout and stored in rows of 16
 * bytes) writes that copy and then reads it back in a loop over the
 * thread's vectors, storing each as it comes: one copy of the address,
 * mask, load and store code instead of one per vector (the matmul's
 * epilogue had 16; ptxas -8% on its fast entry), no register holds the
 * whole tile, and the generic path needs no array of its own.  For
 * vectors that are one access each: the fast or proven width alone (a
 * fast entry or copy, or a generic one), a mask constant over them.  The
 * copy is row-major: a vector along the innermost dim is one load from
 * it, one along another dim (a transposed store's columns) is read
 * element by element, a row apart each.
 */
static bool
stream_store(Access *a)
{
	CgFn *fn = a->fn;
	Cg *cg = fn->cg;
	Op *op = a->op;
	Value ptr = op->opnds[0], v = op->opnds[1];
	Value m = op->nopnds > 2 ? op->opnds[2] : 0;
	const Layout *ly = cg_operand_layout(fn, op, 0), *from, *lc;
	LLVMValueRef *src, c[TY_MAX_RANK], vals[16], g, p, at, mk = NULL;
	uint32_t nr = (uint32_t)ly_nregs(ly);
	int n, k, dim = cg_vec_dim(ly), order[TY_MAX_RANK];
	int64_t off, step;
	CgLoop loop;
	bool fence;

	/* no replicas: every thread stores, none skips the barrier */
	if (a->ety->kind == TY_I1 || ly_dup_mask(ly) || ly_lane_dup(ly) ||
	    ly_warp_dup(ly) || !fn->vals[ptr].remat ||
	    (m && cg_is_tile(fn, m) && !fn->vals[m].remat) ||
	    !cg_convert_source(fn, v, ly, &src, &from, &off))
		return false;
	n = one_width(fn, ly_mem_vec(fn->f, ptr, ly, fn->ax),
		      ly_mem_vec(fn->f, ptr, ly, fn->ax_gen));
	if (!n || nr / (uint32_t)n < 4 ||
	    (m && cg_is_tile(fn, m) && cg_axis(fn, m)->cnst[dim] < n))
		return false;
	/* element by element (a generic entry's rows that are not aligned):
	 * the loop takes the copy's elements in the order of a blocked
	 * layout without vectors, consecutive lanes consecutive elements of
	 * a row, so that a warp's stores are 64 contiguous bytes instead of
	 * one element in each of 32 vectors */
	lc = ly;
	if (n == 1 && dim == ly->rank - 1) {
		const Layout *b;

		for (k = 0; k < ly->rank; k++)
			order[k] = ly->rank - 1 - k;
		b = ly_blocked(&cg->layouts, ly->rank, ly->shape, order, 1,
			       fn->nwarps);
		if (!ly_dup_mask(b) && !ly_lane_dup(b) && !ly_warp_dup(b) &&
		    (uint32_t)ly_nregs(b) == nr)
			lc = b;
	}
	fence = cg_conv_fence(fn, v);
	cg_convert_write(fn, a->ety, src, from, ly, off);
	g = LLVMBuildMul(cg->B, cg_loop_begin(fn, &loop, "st"),
			 cg_i32(cg, n), "");
	cg_reg_coords(fn, lc, g, c);
	at = cg_convert_addr(fn, ly, c, a->eb, off);
	step = cg_convert_step(ly, dim, a->eb);
	if (cg_convert_vec_ok(ly, n, a->eb, off))
		cg_smem_load_vec(fn, a->mt, vals, n, at, n * a->eb);
	else  /* the vector runs down the copy's columns: rows apart */
		for (k = 0; k < n; k++)
			cg_smem_load_vec(fn, a->mt, vals + k, 1,
					 LLVMBuildAdd(cg->B, at,
					 cg_i32(cg, k * step), ""), a->eb);
	p = cg_elem_at(fn, ptr, c);
	if (m)
		mk = cg_is_tile(fn, m) ? cg_elem_at(fn, m, c) : cg_scalar(fn, m);
	a->ly = lc;
	a->dim = dim;
	vec_store(a, p, n, mk, vals);
	cg_loop_end(fn, &loop, nr / (uint32_t)n);
	if (fence)
		cg_barrier(fn);
	return true;
}

static bool
store_op(CgFn *fn, Op *op)
{
	Type *vt = ir_type(fn->f, op->opnds[1]);
	LLVMBasicBlockRef out;
	Access a;

	access_init(&a, fn, op, vt);
	if (!cg_is_tile(fn, op->opnds[0])) {
		LLVMValueRef p = cg_scalar(fn, op->opnds[0]);
		LLVMValueRef v = cg_scalar(fn, op->opnds[1]), m;

		a.ptr = &p;
		a.val = &v;
		if (op->nopnds > 2) {
			m = cg_scalar(fn, op->opnds[2]);
			a.mask = &m;
		}
		out = cg_pred_begin(fn, cg_thread0(fn));
		store_group(&a, 0, 1);
		cg_pred_end(fn, out);
		return true;
	}
	if (stream_store(&a))
		return true;
	access_tile(&a, 1);
	/* a converted operand is made by every thread (its barriers) */
	for (uint32_t i = 0; i < op->nopnds; i++)
		if (cg_is_tile(fn, op->opnds[i]))
			cg_operand(fn, op, i);
	out = cg_pred_begin(fn, cg_first_copy(fn, a.ly));
	access(&a, false);
	cg_pred_end(fn, out);
	return true;
}

bool
cg_memory_op(CgFn *fn, Op *op)
{
	switch (op->kind) {
	case OP_LOAD: return load_op(fn, op);
	case OP_STORE: return store_op(fn, op);
	default: return cg_atomic_op(fn, op);
	}
}
