/*
 * smem.c: shared memory -- the plan as the laid-out IR gives it (offsets
 * and scratch as attributes, placed by passes/plan_smem.c with
 * ir/smemplan.c), scratch use and layout conversions.
 *
 * Scratch protocol: every use of scratch starts with a CTA barrier (so
 * the previous user has finished reading) and has a barrier between its
 * writes and its reads.
 *
 * Conversions go through a row-major copy of the tile with 16 bytes of
 * padding after each row of at least 64 bytes (rows of an mma fragment
 * then hit distinct banks); each thread writes and reads its registers
 * in vectors of up to 16 bytes along the last dim; replicated lanes and
 * warps do not write.  A conversion that only renames registers (same
 * lanes and warps) moves no data at all.
 */
#include "config.h"

#include <stdlib.h>

#include "codegen/cg.h"

/* The plan of the laid-out IR (passes/plan_smem.c): buffer offsets,
 * each op's scratch, the total. */
struct CgSmem {
	int64_t total;
	Op *cur;   /* the op being lowered */
};

enum { STATIC_MAX = 48 * 1024 };

static int
ebytes_of(Type *t)
{
	Type *e = ty_elem(t);

	return e->kind == TY_PTR ? 8 : MAX(1, ty_bits(e) / 8);
}

typedef struct SmemUse {
	Op *op;
	int64_t size;
} SmemUse;

typedef struct Uses {
	CgFn *fn;
	SmemUse v[3];  /* the largest, largest first */
	int n;         /* every use */
	int64_t sum;
} Uses;

static void
largest(Op *op, void *ud)
{
	Uses *u = ud;
	Type *t = op->nres ? ir_type(u->fn->f, op->res[0]) : NULL;
	int64_t n = op->kind == OP_SMEM_ALLOC ? ty_numel(t) * ebytes_of(t)
						: cg_op_scratch(u->fn, op);
	int i = 3;

	if (n <= 0)
		return;
	u->n++;
	u->sum += n;
	while (i > 0 && n > u->v[i - 1].size) {
		if (i < 3)
			u->v[i] = u->v[i - 1];
		i--;
	}
	if (i < 3)
		u->v[i] = (SmemUse){ op, n };
}

/* What takes shared memory at `op`, in the words of the source. */
static void
note_use(CgFn *fn, SmemUse u)
{
	Diag *d = fn->cg->d;
	SrcRange r = range_at(u.op->loc);
	long long n = (long long)u.size;
	const char *name;

	switch (u.op->kind) {
	case OP_SMEM_ALLOC:
		name = attr_str(&u.op->attrs, "name");
		if (name && !strcmp(name, "tma_stage"))
			diag_note(d, r, "this tma_store stages its tile in %lld "
				  "bytes", n);
		else if (name)
			diag_note(d, r, "'%s' takes %lld bytes", name, n);
		else
			diag_note(d, r, "this buffer takes %lld bytes", n);
		break;
	case OP_REDUCE:
		diag_note(d, r, "this reduction combines its warps' results in "
			  "%lld bytes", n);
		break;
	case OP_DOT:
		diag_note(d, r, "this dot stages its operands in %lld bytes", n);
		break;
	case OP_ATOMIC: case OP_ATOMIC_CAS:
		diag_note(d, r, "this atomic gathers its results in %lld bytes",
			  n);
		break;
	default:
		diag_note(d, r, "here a tile moves between threads through %lld "
			  "bytes", n);
		break;
	}
}

bool
cg_smem_plan(CgFn *fn)
{
	CgSmem *p = arena_alloc(fn->a, sizeof *p);
	const Target *t = fn->cg->t;
	Uses u = { .fn = fn };
	int i;

	if (!attr_has(&fn->f->attrs, "smem"))
		tlx_bug("kernel '%s' reached codegen without a shared-memory plan",
			fn->f->name);
	p->total = attr_int(&fn->f->attrs, "smem", 0);
	p->cur = NULL;
	fn->plan = p;
	if (p->total <= t->smem)
		return true;
	cg_error(fn->cg, fn->f->loc, "kernel '%s' needs %lld bytes of shared "
		 "memory; %s has %lld", fn->f->name, (long long)p->total, t->name,
		 (long long)t->smem);
	ir_walk(fn->f, largest, &u);
	for (i = 0; i < 3 && u.v[i].op; i++) {
		note_use(fn, u.v[i]);
		u.sum -= u.v[i].size;
	}
	if (u.n > 3)
		diag_note(fn->cg->d, range_at(fn->f->loc), "%d more take %lld "
			  "bytes (buffers whose lives do not overlap share "
			  "memory)", u.n - 3, (long long)u.sum);
	diag_note(fn->cg->d, range_at(fn->f->loc), "fewer pipe stages or "
		  "smaller tiles need less");
	return false;
}

int64_t
cg_smem_total(CgFn *fn)
{
	return fn->plan->total;
}

int64_t
cg_smem_offset(CgFn *fn, Op *op)
{
	(void)fn;
	if (op->kind == OP_SMEM_ALLOC || op->kind == OP_MBAR_ALLOC)
		return attr_int(&op->attrs, "offset", -1);
	return attr_int(&op->attrs, "scratch", -1);
}

void
cg_set_cur_op(CgFn *fn, Op *op)
{
	fn->plan->cur = op;
}

int64_t
cg_cur_scratch(CgFn *fn)
{
	Op *op = fn->plan->cur;

	if (!op || !attr_has(&op->attrs, "scratch"))
		tlx_bug("'%s' uses scratch without planned scratch",
			op ? op_name(op->kind) : "?");
	return attr_int(&op->attrs, "scratch", 0);
}

int64_t
cg_op_scratch(CgFn *fn, Op *op)
{
	return ir_op_scratch(fn->cg->t, fn->f, op);
}

/* ---- swizzles -------------------------------------------------------------- */

LLVMValueRef
cg_swizzle(CgFn *fn, LLVMValueRef addr, Swizzle s)
{
	Cg *cg = fn->cg;
	LLVMValueRef x;

	if (!s.mask)
		return addr;
	x = LLVMBuildLShr(cg->B, addr, cg_i32(cg, s.shift), "");
	x = LLVMBuildAnd(cg->B, x, cg_i32(cg, s.mask), "");
	x = LLVMBuildShl(cg->B, x, cg_i32(cg, 4), "");
	return LLVMBuildXor(cg->B, addr, x, "");
}

/*
 * The swizzle reads address bits [shift, shift + b) and flips bits [4,
 * 4 + b), b = log2(mask + 1): adding a multiple of 2^(shift + b) changes
 * neither, so phys(base + x + k) = base + hi + phys(x + lo) when base is
 * such a multiple and k = hi + lo with hi one too.  Only the thread's part
 * x and the low part of k are swizzled -- the same value in every
 * iteration of a loop, which LICM hoists, and for every register that
 * differs only in the high part -- and the rest is added after, hi as an
 * immediate offset of the access (the matmul's loop: one add per ldmatrix
 * and cp.async instead of three).
 */
LLVMValueRef
cg_swizzle_off(CgFn *fn, LLVMValueRef base, int64_t align, LLVMValueRef x,
	       int64_t k, Swizzle s)
{
	LLVMBuilderRef B = fn->cg->B;
	int64_t unit = (int64_t)(s.mask + 1) << s.shift, hi, lo;

	if (!s.mask)
		return LLVMBuildAdd(B, LLVMBuildAdd(B, base, x, ""),
				    cg_i32(fn->cg, k), "");
	if (align <= 0 || align % unit)
		return cg_swizzle(fn, LLVMBuildAdd(B, LLVMBuildAdd(B, base, x, ""),
						   cg_i32(fn->cg, k), ""), s);
	lo = ((k % unit) + unit) % unit;
	hi = k - lo;
	x = cg_swizzle(fn, LLVMBuildAdd(B, x, cg_i32(fn->cg, lo), ""), s);
	return LLVMBuildAdd(B, LLVMBuildAdd(B, base, x, ""), cg_i32(fn->cg, hi), "");
}

/* ---- scratch access ------------------------------------------------------ */

/* Up to 48 KB the kernel's shared memory is a static array of its own
 * (the driver reserves it at every launch, whatever dynamic size the
 * launch asks for); beyond, it is the dynamic array __tlx_smem, and the
 * launch must ask for cg_smem_dynamic bytes (__tlx_meta says how many). */
static LLVMValueRef
smem_base(CgFn *fn)
{
	Cg *cg = fn->cg;
	int64_t n = fn->plan->total;
	char name[256];

	if (fn->smem)
		return fn->smem;
	if (n <= STATIC_MAX) {
		snprintf(name, sizeof name, "__tlx_smem_%s", fn->name);
		fn->smem = LLVMAddGlobalInAddressSpace(
			cg->M, LLVMArrayType2(cg->t_i8, (uint64_t)MAX(n, 16)), name,
			AS_SHARED);
		LLVMSetInitializer(fn->smem, LLVMGetUndef(LLVMArrayType2(cg->t_i8,
					(uint64_t)MAX(n, 16))));
		LLVMSetLinkage(fn->smem, LLVMInternalLinkage);
	} else {
		if (!cg->smem) {
			cg->smem = LLVMAddGlobalInAddressSpace(
				cg->M, LLVMArrayType2(cg->t_i8, 0),
				cg->dyn_smem ? cg->dyn_smem : "__tlx_smem",
				AS_SHARED);
			LLVMSetLinkage(cg->smem, LLVMExternalLinkage);
			LLVMSetAlignment(cg->smem, 1024);
		}
		fn->smem = cg->smem;
	}
	LLVMSetAlignment(fn->smem, 1024);
	return fn->smem;
}

int64_t
cg_smem_dynamic(CgFn *fn)
{
	return fn->plan->total > STATIC_MAX ? fn->plan->total : 0;
}

LLVMValueRef
cg_smem_ptr(CgFn *fn, LLVMValueRef off)
{
	Cg *cg = fn->cg;

	return LLVMBuildGEP2(cg->B, cg->t_i8, smem_base(fn), &off, 1, "");
}

void
cg_sync_flush(CgFn *fn)
{
	if (fn->sync_pending)
		cg_barrier(fn);
}

void
cg_barrier(CgFn *fn)
{
	LLVMValueRef a[2] = { fn->task_bar_id ? fn->task_bar_id
			      : cg_i32(fn->cg, fn->task_bar > 0 ? fn->task_bar : 0),
			      cg_i32(fn->cg, fn->nthreads) };

	if (fn->pred_depth > 0)
		cg_error(fn->cg, fn->plan->cur ? fn->plan->cur->loc : fn->f->loc,
			 "compiler bug: a barrier in code that only some "
			 "threads run");
	if (fn->task_bar == 0)  /* a task of one warp */
		cg_intr(fn->cg, "llvm.nvvm.bar.warp.sync", NULL, 0,
			(LLVMValueRef[]){ cg_i32(fn->cg, -1) }, 1);
	else if (fn->task_bar > 0)
		cg_intr(fn->cg, "llvm.nvvm.barrier.cta.sync.count", NULL, 0, a, 2);
	else
		cg_intr(fn->cg, "llvm.nvvm.barrier.cta.sync.all", NULL, 0, a, 1);
	fn->sync_pending = false;
}

/* The vector of n elements v[0 .. n-1]. */
static LLVMValueRef
vec_of(Cg *cg, LLVMTypeRef et, LLVMValueRef *v, int n)
{
	LLVMValueRef x = LLVMGetUndef(LLVMVectorType(et, (unsigned)n));
	int i;

	for (i = 0; i < n; i++)
		x = LLVMBuildInsertElement(cg->B, x, v[i], cg_i32(cg, i), "");
	return x;
}

/* Stores (or loads) n elements of type et at byte offset `off` as one
 * vector access of n * eb bytes. */
LLVMValueRef
cg_smem_store_vec(CgFn *fn, LLVMTypeRef et, LLVMValueRef *v, int n,
		  LLVMValueRef off, int align)
{
	Cg *cg = fn->cg;
	LLVMValueRef p = cg_smem_ptr(fn, off), x, st;

	x = n == 1 ? v[0] : vec_of(cg, et, v, n);
	st = LLVMBuildStore(cg->B, x, p);
	LLVMSetAlignment(st, (unsigned)align);
	return st;
}

void
cg_smem_load_vec(CgFn *fn, LLVMTypeRef et, LLVMValueRef *out, int n,
		 LLVMValueRef off, int align)
{
	Cg *cg = fn->cg;
	LLVMTypeRef vt = n == 1 ? et : LLVMVectorType(et, (unsigned)n);
	LLVMValueRef ld = LLVMBuildLoad2(cg->B, vt, cg_smem_ptr(fn, off), "");
	int i;

	LLVMSetAlignment(ld, (unsigned)align);
	if (n == 1) {
		out[0] = ld;
		return;
	}
	for (i = 0; i < n; i++)
		out[i] = LLVMBuildExtractElement(cg->B, ld, cg_i32(cg, i), "");
}

/* The thread's part of its byte offsets in the padded copy (conv_addr
 * adds each register group's constant part: one copy of the thread's
 * arithmetic per tile, not per group, for LLVM to fold). */
static LLVMValueRef
conv_thread(CgFn *fn, const Layout *l, int eb)
{
	Cg *cg = fn->cg;
	int lb = ly_dim_bits(l, l->rank - 1);
	LLVMValueRef t = cg_thread_flat(fn, l), row, col;

	row = LLVMBuildLShr(cg->B, t, cg_i32(cg, lb), "");
	col = LLVMBuildAnd(cg->B, t, cg_i32(cg, (1 << lb) - 1), "");
	return LLVMBuildAdd(cg->B, LLVMBuildMul(cg->B, row,
			    cg_i32(cg, ly_copy_row_bytes(l, eb)), ""),
			    LLVMBuildMul(cg->B, col, cg_i32(cg, eb), ""), "");
}

/* Byte offset of register group r's first element in the padded copy,
 * t the thread's part (conv_thread). */
static LLVMValueRef
conv_addr(CgFn *fn, const Layout *l, LLVMValueRef t, uint32_t r, int eb,
	  int64_t base)
{
	int lb = ly_dim_bits(l, l->rank - 1);
	uint32_t f = ly_reg_flat(l, r);
	int64_t c = base + (int64_t)(f >> lb) * ly_copy_row_bytes(l, eb) +
		    (int64_t)(f & ((1u << lb) - 1)) * eb;

	return LLVMBuildAdd(fn->cg->B, t, cg_i32(fn->cg, c), "");
}

/* The predicate "this thread is the first copy" for a layout with
 * replicated lanes or warps; NULL when nothing is replicated. */
LLVMValueRef
cg_first_copy(CgFn *fn, const Layout *l)
{
	Cg *cg = fn->cg;
	uint32_t lm = ly_lane_dup(l), wm = ly_warp_dup(l);
	LLVMValueRef p = NULL, x;

	if (lm) {
		x = LLVMBuildAnd(cg->B, fn->lane, cg_i32(cg, lm), "");
		p = LLVMBuildICmp(cg->B, LLVMIntEQ, x, cg_i32(cg, 0), "");
	}
	if (wm) {
		x = LLVMBuildAnd(cg->B, fn->warp, cg_i32(cg, wm), "");
		x = LLVMBuildICmp(cg->B, LLVMIntEQ, x, cg_i32(cg, 0), "");
		p = p ? LLVMBuildAnd(cg->B, p, x, "") : x;
	}
	return p;
}

/* The widest vector (elements) of contiguous registers, <= 16 bytes. */
static int
conv_vec(const Layout *l, int eb)
{
	int v = ly_contig_regs(l);

	while (v * eb > 16)
		v /= 2;
	return v;
}

/* A basis bit that moves by whole 8 x 8 blocks of the row-major tile. */
static bool
block_bit(const Layout *l, uint32_t b)
{
	uint32_t cols = (uint32_t)l->shape[1];

	return b && (b < cols ? b >= 8 : b >= 8 * cols);
}

/*
 * The layout of the lanes' row addresses when registers go out with
 * stmatrix.x4 (sm_90): in each group of 8 registers of 16-bit elements,
 * register bit 0 and lane bits 0-1 must be the low three column bits and
 * lane bits 2-4 the low three row bits (an 8 x 8 matrix, each lane two
 * adjacent elements), register bits 1-2 whole 8 x 8 blocks (the four
 * matrices); the mma accumulator has this shape.  Lane i of the result
 * addresses row i % 8 of matrix i / 8.  NULL when `l` is not of it.
 */
static const Layout *
stmatrix_lanes(CgFn *fn, const Layout *l, int eb)
{
	uint32_t c;
	Layout p;

	if (!target_has(fn->cg->t, TF_STMATRIX) || eb != 2 || l->rank != 2 ||
	    l->nreg < 3 || ly_dup_mask(l) || ly_lane_dup(l) || ly_warp_dup(l))
		return NULL;
	c = (uint32_t)l->shape[1];
	if (c < 8 || l->reg[0] != 1 || l->lane[0] != 2 || l->lane[1] != 4 ||
	    l->lane[2] != c || l->lane[3] != 2 * c || l->lane[4] != 4 * c ||
	    !block_bit(l, l->reg[1]) || !block_bit(l, l->reg[2]))
		return NULL;
	p = *l;
	p.next = NULL;
	p.lane[0] = l->lane[2];
	p.lane[1] = l->lane[3];
	p.lane[2] = l->lane[4];
	p.lane[3] = l->reg[1];
	p.lane[4] = l->reg[2];
	return ly_intern(&fn->cg->layouts, &p);
}

/* Writes registers r of layout l to the padded copy with stmatrix.x4, a
 * quarter of the instructions of 4-byte stores; st from stmatrix_lanes. */
static void
write_tile_stmatrix(CgFn *fn, LLVMTypeRef et, LLVMValueRef *r,
		    const Layout *l, const Layout *st, int64_t off)
{
	Cg *cg = fn->cg;
	LLVMTypeRef pt = cg->t_sptr;
	LLVMValueRef t = conv_thread(fn, st, 2), a[5];
	uint32_t n = (uint32_t)ly_nregs(l), g;
	int j;

	for (g = 0; g < n; g += 8) {
		a[0] = cg_smem_ptr(fn, conv_addr(fn, l, t, g, 2, off));
		for (j = 0; j < 4; j++)
			a[j + 1] = LLVMBuildBitCast(cg->B, vec_of(cg, et,
						    r + g + 2 * j, 2),
						    cg->t_i32, "");
		cg_intr(cg, "llvm.nvvm.stmatrix.sync.aligned.m8n8.x4.b16",
			&pt, 1, a, 5);
	}
}

static void
write_tile(CgFn *fn, LLVMTypeRef et, LLVMValueRef *r, const Layout *l,
	   int eb, int64_t off)
{
	Cg *cg = fn->cg;
	const Layout *st = stmatrix_lanes(fn, l, eb);
	LLVMValueRef pred, t;
	LLVMBasicBlockRef wr = NULL, done = NULL;
	uint32_t dup = ly_dup_mask(l), n = (uint32_t)ly_nregs(l), g;
	int v = conv_vec(l, eb);

	if (st) {
		write_tile_stmatrix(fn, et, r, l, st, off);
		return;
	}
	pred = cg_first_copy(fn, l);
	if (pred) {
		wr = cg_new_block(fn, "cvt.write");
		done = cg_new_block(fn, "cvt.written");
		LLVMBuildCondBr(cg->B, pred, wr, done);
		LLVMPositionBuilderAtEnd(cg->B, wr);
	}
	t = conv_thread(fn, l, eb);
	for (g = 0; g < n; g += (uint32_t)v) {
		if (g & dup)
			continue;
		cg_smem_store_vec(fn, et, r + g, v,
				  conv_addr(fn, l, t, g, eb, off), v * eb);
	}
	if (pred) {
		LLVMBuildBr(cg->B, done);
		LLVMPositionBuilderAtEnd(cg->B, done);
	}
}

static LLVMValueRef *
read_tile(CgFn *fn, LLVMTypeRef et, const Layout *l, int eb, int64_t off)
{
	LLVMValueRef *out = cg_regs(fn, l);
	uint32_t dup = ly_dup_mask(l), n = (uint32_t)ly_nregs(l), g;
	int v = conv_vec(l, eb);
	LLVMValueRef t = conv_thread(fn, l, eb);

	for (g = 0; g < n; g += (uint32_t)v) {
		if (g & dup)
			continue;
		cg_smem_load_vec(fn, et, out + g, v,
				 conv_addr(fn, l, t, g, eb, off), v * eb);
	}
	for (g = 0; g < n; g++)
		if (g & dup)
			out[g] = out[g & ~dup];
	return out;
}

/* i1 tiles go through shared memory as bytes */
static LLVMTypeRef
conv_type(Cg *cg, Type *ety)
{
	return ty_elem(ety)->kind == TY_I1 ? cg->t_i8 : cg_type(cg, ety);
}

void
cg_convert_write(CgFn *fn, Type *ety, LLVMValueRef *r, const Layout *from,
		 const Layout *to, int64_t off)
{
	Cg *cg = fn->cg;
	int eb = ebytes_of(ety);
	LLVMValueRef *src = r;
	uint32_t i, n = (uint32_t)ly_nregs(from);

	if (ty_elem(ety)->kind == TY_I1) {
		src = cg_regs(fn, from);
		for (i = 0; i < n; i++)
			src[i] = LLVMBuildZExt(cg->B, r[i], cg->t_i8, "");
	}
	write_tile(fn, conv_type(cg, ety), src, from, eb, off);
	cg_barrier(fn);
}

LLVMValueRef
cg_convert_addr(CgFn *fn, const Layout *l, LLVMValueRef *c, int eb,
		int64_t off)
{
	LLVMBuilderRef B = fn->cg->B;
	int lb = ly_dim_bits(l, l->rank - 1), d;
	LLVMValueRef flat = cg_i32(fn->cg, 0), row, col;

	for (d = 0; d < l->rank; d++)
		flat = LLVMBuildOr(B, flat, LLVMBuildShl(B, c[d],
				   cg_i32(fn->cg, ly_dim_shift(l, d)), ""), "");
	row = LLVMBuildLShr(B, flat, cg_i32(fn->cg, lb), "");
	col = LLVMBuildAnd(B, flat, cg_i32(fn->cg, (1 << lb) - 1), "");
	return LLVMBuildAdd(B, LLVMBuildAdd(B, LLVMBuildMul(B, row,
			    cg_i32(fn->cg, ly_copy_row_bytes(l, eb)), ""),
			    LLVMBuildMul(B, col, cg_i32(fn->cg, eb), ""), ""),
			    cg_i32(fn->cg, off), "");
}

int64_t
cg_convert_step(const Layout *l, int d, int eb)
{
	int lb = ly_dim_bits(l, l->rank - 1);

	if (d == l->rank - 1)
		return eb;
	return ((int64_t)1 << (ly_dim_shift(l, d) - lb)) *
	       ly_copy_row_bytes(l, eb);
}

bool
cg_convert_vec_ok(const Layout *l, int n, int eb, int64_t off)
{
	uint32_t nr = (uint32_t)ly_nregs(l), g, k, t, lane, w;
	uint32_t nt = 1u << (LY_LANES + l->nwarp);
	int64_t o;

	for (t = 0; t < nt; t++) {
		lane = t & ((1u << LY_LANES) - 1);
		w = t >> LY_LANES;
		for (g = 0; g < nr; g += (uint32_t)n) {
			o = ly_copy_offset(l, ly_flat(l, g, lane, w), eb);
			if ((off + o) % (n * eb))
				return false;
			for (k = 1; k < (uint32_t)n; k++)
				if (ly_copy_offset(l, ly_flat(l, g + k, lane, w),
						   eb) != o + k * eb)
					return false;
		}
	}
	return true;
}

LLVMValueRef *
cg_convert(CgFn *fn, Type *ety, LLVMValueRef *r, const Layout *from,
	   const Layout *to, int64_t off)
{
	Cg *cg = fn->cg;
	int eb = ebytes_of(ety);
	LLVMValueRef *out;
	uint32_t i;

	cg_convert_write(fn, ety, r, from, to, off);
	out = read_tile(fn, conv_type(cg, ety), to, eb, off);
	if (ty_elem(ety)->kind == TY_I1)
		for (i = 0; i < (uint32_t)ly_nregs(to); i++)
			out[i] = LLVMBuildTrunc(cg->B, out[i], cg->t_i1, "");
	return out;
}

LLVMValueRef *
cg_share_first(CgFn *fn, Type *ety, LLVMValueRef *r, const Layout *l,
	       int64_t off)
{
	Cg *cg = fn->cg;
	bool is_bool = ty_elem(ety)->kind == TY_I1;
	LLVMTypeRef et = is_bool ? cg->t_i8 : cg_type(cg, ety);
	int eb = ebytes_of(ety);
	LLVMValueRef *src = r, *out;
	uint32_t i, n = (uint32_t)ly_nregs(l);

	if (is_bool) {
		src = cg_regs(fn, l);
		for (i = 0; i < n; i++)
			src[i] = LLVMBuildZExt(cg->B, r[i], cg->t_i8, "");
	}
	write_tile(fn, et, src, l, eb, off);
	cg_barrier(fn);
	out = read_tile(fn, et, l, eb, off);
	if (is_bool)
		for (i = 0; i < n; i++)
			out[i] = LLVMBuildTrunc(cg->B, out[i], cg->t_i1, "");
	return out;
}
