/*
 * wgmma.c: asynchronous MMA on Hopper's tensor cores (sm_90a) --
 * dot_async, dot_wait and fence_async_shared.
 *
 * dot_async a, b, acc with both operands in shared memory, each a view of
 * a buffer in a tiled swizzle (plan-smem's ly_swizzle_tiled: strips of W
 * = 32, 64 or 128 bytes, 8-row atoms aligned), and acc in the wgmma
 * layout (ly_wgmma): each warpgroup issues, for each of its 64-row tiles,
 * each chunk of at most 256 of its columns and each k16 step, one
 *   wgmma.mma_async.sync.aligned.m64nNk16.f32.bf16.bf16 {d..}, da, db, 1, 1, 1, ta, tb;
 * between a wgmma.fence and a commit_group (scale-d 0 in place of the first
 * 1 where the accumulator is constant zeros: d is then not read; other
 * constants pass through an empty asm before the fence, as LLVM would
 * write them next to each wgmma, after it); 8-bit operands (e4m3, e5m2)
 * take k32 steps and must both be K-major (a B stored N x K and read
 * through a transposed view), so their instruction has no ta, tb.  The descriptors
 * (tensor-core-layouts.md 3.4, 3.5; ir/smemview.c sv_wgmma_desc, which the
 * simulator reads operands through) follow from the views: an operand
 * whose contiguous dim is K is K-major (LBO unused, SBO = 8 W), one whose
 * contiguous dim is M or N is MN-major (ta/tb = 1, LBO = the strip step,
 * rows x W, SBO = 8 W); a tile, chunk or k step starts at the view's byte
 * offset of its first element (sv_dim_bytes), added to the
 * descriptor's address field.  The accumulator registers are the
 * instruction's d registers in order (ly_wgmma's register bits are d's
 * index bits).  A 16-bit A in registers (the RS form, {a0..a3} in place
 * of A's descriptor, no ta) is in ly_wgmma_a of the accumulator's layout:
 * each k16 step of each 64-row tile packs the eight elements
 * ly_wgmma_a_reg names into four b32 registers, all before the fence.
 *
 * dot_wait {pending = n} is wgmma.wait_group n as inline PTX that takes
 * and redefines every register of its operands, so that nothing reads
 * them before the wait.  fence_async_shared is fence.proxy.async.shared::cta.
 */
#include "config.h"

#include "codegen/cg.h"

/* The element of a tile or a shared buffer. */
static Type *
elem_of(Type *t)
{
	return t->kind == TY_TILE || t->kind == TY_SMEM ? t->elem : t;
}

typedef struct Opnd {
	SmemView *w;
	WgDesc d;
} Opnd;

/* Why A in registers cannot be wgmma's (RS form) A (NULL: it can): it
 * must be 16-bit and in the fragment layout of the accumulator's
 * warpgroups (ly_wgmma_a), which assign-layouts gives it. */
static const char *
rs_problem(CgFn *fn, Op *op)
{
	Type *a = ir_type(fn->f, op->opnds[0]);
	const Layout *acc = ir_type(fn->f, op->res[0])->layout;

	if (a->kind != TY_TILE || ty_bits(a->elem) != 16)
		return "an 8-bit operand in registers";
	if (!a->layout || a->layout != ly_wgmma_a(&fn->cg->layouts, a->shape, acc))
		return "an A in registers not in the layout of wgmma's A "
		       "fragment";
	return NULL;
}

/* Why dot_async operand i cannot be read by wgmma (NULL: it can). */
static const char *
opnd_problem(CgFn *fn, Op *op, int i)
{
	Type *t = ir_type(fn->f, op->opnds[i]);
	SmemView *w;

	if (t->kind != TY_SMEM)
		return i == 0 ? rs_problem(fn, op) : "a B operand in registers";
	w = fn->vals[op->opnds[i]].view;
	if (!w)
		return "an operand not in a tiled swizzle (whose rows are not "
		       "32 or 64 bytes or a multiple of 128)";
	return sv_wgmma_problem(&w->g, w->align, i);
}

/* K of one instruction: 32 bytes of each row. */
static int
kstep(Type *t)
{
	return ty_bits(elem_of(t)) == 8 ? 32 : 16;
}

static const char *
ptx_type(Type *t)
{
	switch (elem_of(t)->kind) {
	case TY_BF16: return "bf16";
	case TY_F16: return "f16";
	case TY_F8E4M3: return "e4m3";
	default: return "e5m2";
	}
}

/* The wgmma shape of op: a, b and acc agree with the layout. */
static const char *
shape_problem(CgFn *fn, Op *op)
{
	Type *a = ir_type(fn->f, op->opnds[0]), *c = ir_type(fn->f, op->res[0]);
	const Layout *L = c->layout;
	TypeKind e = elem_of(a)->kind;

	if (e != TY_BF16 && e != TY_F16 && e != TY_F8E4M3 && e != TY_F8E5M2)
		return "operands other than bf16, f16, f8e4m3 or f8e5m2";
	if ((ty_bits(elem_of(a)) == 8) !=
	    (ty_bits(elem_of(ir_type(fn->f, op->opnds[1]))) == 8))
		return "an 8-bit operand with a 16-bit one";
	if (ty_elem(c)->kind != TY_F32)
		return "an accumulator other than f32";
	if (!L || L->kind != LY_WGMMA || L->wm * L->wn * 4 != fn->nwarps)
		return "an accumulator its warpgroups do not split";
	if (a->shape[1] % kstep(a))
		return ty_bits(elem_of(a)) == 8 ? "an 8-bit K that is not a multiple of 32"
						: "a K that is not a multiple of 16";
	if (L->nreps * 8 > 256 && (L->nreps * 8) % 256)
		return "columns per warpgroup over 256 and not a multiple of 256";
	return NULL;
}

static void
refuse(CgFn *fn, Op *op, const char *why)
{
	cg_error(fn->cg, op->loc, "'%s' with %s is not supported for %s yet",
		 op_name(op->kind), why, fn->cg->t->name);
}

/* What the IR says before lowering: both operands views of tiled
 * buffers, a shape wgmma takes. */
bool
cg_wgmma_check(CgFn *fn, Op *op)
{
	const char *why = shape_problem(fn, op);
	int i;

	for (i = 0; i < 2 && !why; i++) {
		Op *b;
		const Layout *e;

		if (ir_type(fn->f, op->opnds[i])->kind != TY_SMEM)
			why = i == 0 ? rs_problem(fn, op) : "a B operand in registers";
		else if (!(b = ir_view_buffer(fn->f, op->opnds[i])) ||
			 !(e = ir_type(fn->f, b->res[0])->layout) ||
			 e->kind != LY_SWIZZLE || !e->swz_tiled)
			why = "an operand not in a tiled swizzle (a buffer whose "
			      "rows are not 32 or 64 bytes or a multiple of 128)";
	}
	if (why) {
		refuse(fn, op, why);
		return false;
	}
	return true;
}

/* The descriptor of view w's element 0 (the warpgroup's part added by
 * the caller): start address, LBO, SBO, swizzle. */
static LLVMValueRef
base_desc(CgFn *fn, Opnd *o)
{
	Cg *cg = fn->cg;
	LLVMBuilderRef B = cg->B;
	LLVMValueRef a = LLVMBuildPtrToInt(B, cg_smem_ptr(fn, o->w->off), cg->t_i32, "");

	a = LLVMBuildAnd(B, LLVMBuildLShr(B, a, cg_i32(cg, 4), ""),
			 cg_i32(cg, 0x3fff), "");
	return LLVMBuildOr(B, LLVMBuildZExt(B, a, cg->t_i64, ""),
			   LLVMConstInt(cg->t_i64, sv_wgmma_desc_bits(&o->d), 0), "");
}

/* desc + the byte offset of element (c0, c1) of the view (constant) */
static LLVMValueRef
desc_at(CgFn *fn, Opnd *o, LLVMValueRef base, int64_t c0, int64_t c1)
{
	int64_t off = sv_dim_bytes(&o->w->g, 0, c0) + sv_dim_bytes(&o->w->g, 1, c1);

	if (!off)
		return base;
	return LLVMBuildAdd(fn->cg->B, base,
			    LLVMConstInt(fn->cg->t_i64, (uint64_t)(off >> 4), 0), "");
}

/* desc + the view's offset of the run-time coordinate x along dim d */
static LLVMValueRef
desc_plus(CgFn *fn, Opnd *o, LLVMValueRef desc, int d, LLVMValueRef x)
{
	LLVMBuilderRef B = fn->cg->B;
	LLVMValueRef off = cg_view_dim_off(fn, o->w, d, x);

	off = LLVMBuildLShr(B, off, cg_i32(fn->cg, 4), "");
	return LLVMBuildAdd(B, desc, LLVMBuildZExt(B, off, fn->cg->t_i64, ""), "");
}

/* The accumulator registers r[0 .. n), when some are constants and not
 * all +0.0 (issue's scale-d 0), as the results of an empty asm: built
 * before the fence, they are written there, where LLVM would write
 * constants next to each wgmma, after it (ptxas then fences and waits
 * again, infos C7519 and C7517). */
static void
pin_consts(CgFn *fn, LLVMValueRef *r, int n)
{
	Cg *cg = fn->cg;
	char *cons = arena_alloc(&cg->arena, (size_t)(8 * n + 8));
	LLVMTypeRef *ft = arena_alloc(&cg->arena, (size_t)n * sizeof *ft);
	LLVMValueRef res;
	int i, clen = 0;
	bool any = false, zero = true;

	for (i = 0; i < n; i++) {
		any |= LLVMIsConstant(r[i]) != 0;
		zero = zero && LLVMIsAConstantFP(r[i]) && LLVMIsNull(r[i]);
	}
	if (!any || zero)
		return;
	for (i = 0; i < n; i++) {
		clen += snprintf(cons + clen, 8, "=f,");
		ft[i] = cg->t_f32;
	}
	for (i = 0; i < n; i++)
		clen += snprintf(cons + clen, 8, "%s%d", i ? "," : "", i);
	res = cg_asm(cg, LLVMStructTypeInContext(cg->C, ft, (unsigned)n, 0), "",
		     cons, r, n, true, true);
	for (i = 0; i < n; i++)
		r[i] = LLVMBuildExtractValue(cg->B, res, (unsigned)i, "");
}

/* One wgmma m64 x n x k over acc registers r[0 .. n/2) (in place), A
 * from the descriptor da or, when ra is not NULL, from the four b32
 * registers ra (the RS form, which has no ta); 8-bit operands (k32) are
 * K-major and take no transpose operands. */
static void
issue(CgFn *fn, const char *ta_ty, const char *tb_ty, int k, int n, bool ta,
      bool tb, LLVMValueRef da, const LLVMValueRef *ra, LLVMValueRef db,
      LLVMValueRef *r)
{
	Cg *cg = fn->cg;
	int nr = n / 2, na = ra ? 4 : 1, i, len = 0, cap = 16 * nr + 256;
	char *text = arena_alloc(&cg->arena, (size_t)cap);
	char *cons = arena_alloc(&cg->arena, (size_t)(8 * nr + 64));
	LLVMValueRef *args = arena_alloc(&cg->arena,
					 (size_t)(nr + na + 1) * sizeof *args);
	LLVMTypeRef *ft = arena_alloc(&cg->arena, (size_t)nr * sizeof *ft);
	LLVMValueRef res;
	int clen = 0, in, o;
	bool zero = true;

	/* an accumulator of zeros (the first step from zeros(...)) is not
	 * read: scale-d = 0, d outputs only, so no register is zeroed (one
	 * zeroed before the fence makes ptxas fence again, C7519) */
	for (i = 0; i < nr && zero; i++)
		zero = LLVMIsAConstantFP(r[i]) && LLVMIsNull(r[i]);
	in = zero ? 0 : nr;
	o = nr + in;  /* the first operand after d's outputs and inputs */
	len += snprintf(text + len, (size_t)(cap - len),
			"wgmma.mma_async.sync.aligned.m64n%dk%d.f32.%s.%s {", n, k,
			ta_ty, tb_ty);
	for (i = 0; i < nr; i++)
		len += snprintf(text + len, (size_t)(cap - len), "%s$%d",
				i ? "," : "", i);
	if (ra)
		snprintf(text + len, (size_t)(cap - len),
			 "}, {$%d, $%d, $%d, $%d}, $%d, %d, 1, 1, %d;", o, o + 1,
			 o + 2, o + 3, o + 4, !zero, tb);
	else if (k == 32)
		snprintf(text + len, (size_t)(cap - len), "}, $%d, $%d, %d, 1, 1;",
			 o, o + 1, !zero);
	else
		snprintf(text + len, (size_t)(cap - len),
			 "}, $%d, $%d, %d, 1, 1, %d, %d;", o, o + 1, !zero, ta, tb);
	for (i = 0; i < nr; i++)
		clen += snprintf(cons + clen, 8, "=f,");
	for (i = 0; i < in; i++)
		clen += snprintf(cons + clen, 8, "%d,", i);
	snprintf(cons + clen, 16, ra ? "r,r,r,r,l" : "l,l");
	for (i = 0; i < nr; i++)
		ft[i] = cg->t_f32;
	for (i = 0; i < in; i++)
		args[i] = r[i];
	for (i = 0; i < na; i++)
		args[in + i] = ra ? ra[i] : da;
	args[in + na] = db;
	res = cg_asm(cg, LLVMStructTypeInContext(cg->C, ft, (unsigned)nr, 0),
		     text, cons, args, in + na + 1, true, true);
	for (i = 0; i < nr; i++)
		r[i] = LLVMBuildExtractValue(cg->B, res, (unsigned)i, "");
}

/* The four b32 registers of A's k16 step s of 64-row tile mt (the RS
 * fragment, ly_wgmma_a_reg; register j packs a[2j], a[2j + 1]), from
 * A's registers va in layout LA (ly_wgmma_a). */
static void
rs_regs(CgFn *fn, const Layout *LA, LLVMValueRef *va, int64_t mt, int64_t s,
	LLVMValueRef *ra)
{
	Cg *cg = fn->cg;
	LLVMBuilderRef B = cg->B;
	LLVMTypeRef v2 = LLVMVectorType(LLVMTypeOf(va[0]), 2);
	int i, j, r;

	for (j = 0; j < 4; j++) {
		LLVMValueRef v = LLVMGetUndef(v2);

		for (i = 2 * j; i < 2 * j + 2; i++) {
			if ((r = ly_wgmma_a_reg(LA, mt, s, i)) < 0)
				tlx_bug("wgmma: no register of A holds element "
					"%d of step %lld", i, (long long)s);
			v = LLVMBuildInsertElement(B, v, va[r], cg_i32(cg, i & 1), "");
		}
		ra[j] = LLVMBuildBitCast(B, v, cg->t_i32, "");
	}
}

static bool
dot_async(CgFn *fn, Op *op)
{
	Cg *cg = fn->cg;
	LLVMBuilderRef B = cg->B;
	Type *a = ir_type(fn->f, op->opnds[0]);
	const Layout *L = ir_type(fn->f, op->res[0])->layout;
	LLVMValueRef *c, *acc, wg, da0, db0, *va = NULL, *ra = NULL;
	const Layout *LA = NULL;
	const char *why;
	int ks = kstep(a);
	Opnd oa = { 0 }, ob = { 0 };
	int64_t K = a->shape[1], Nw, nc, mt, j, s;
	uint32_t i, n;

	if ((why = shape_problem(fn, op)) || (why = opnd_problem(fn, op, 0)) ||
	    (why = opnd_problem(fn, op, 1))) {
		refuse(fn, op, why);
		return false;
	}
	if (a->kind == TY_TILE) {
		LA = a->layout;
		va = cg_operand(fn, op, 0);
	} else {
		oa.w = fn->vals[op->opnds[0]].view;
		sv_wgmma_desc(&oa.w->g, 0, &oa.d);
	}
	ob.w = fn->vals[op->opnds[1]].view;
	sv_wgmma_desc(&ob.w->g, 1, &ob.d);
	c = cg_operand(fn, op, 2);
	n = (uint32_t)ly_nregs(L);
	acc = cg_regs(fn, L);
	for (i = 0; i < n; i++)
		acc[i] = c[i];
	/* the warpgroup's rows and columns: its index's low bits along m */
	da0 = LA ? NULL : base_desc(fn, &oa);
	db0 = base_desc(fn, &ob);
	wg = LLVMBuildLShr(B, fn->warp, cg_i32(cg, 2), "");
	if (L->wm > 1 && !LA)
		da0 = desc_plus(fn, &oa, da0, 0, LLVMBuildMul(B,
			LLVMBuildAnd(B, wg, cg_i32(cg, L->wm - 1), ""),
			cg_i32(cg, (int64_t)L->mreps * 64), ""));
	if (L->wn > 1)
		db0 = desc_plus(fn, &ob, db0, 1, LLVMBuildMul(B,
			LLVMBuildLShr(B, wg, cg_i32(cg, __builtin_ctz(L->wm)), ""),
			cg_i32(cg, (int64_t)L->nreps * 8), ""));
	Nw = (int64_t)L->nreps * 8;
	nc = MIN(Nw, 256);
	/* A's registers are packed before the fence: written after it,
	 * ptxas would have to fence again (C7519) */
	if (LA) {
		ra = arena_alloc(&cg->arena, (size_t)(K / ks * L->mreps * 4) *
					     sizeof *ra);
		for (s = 0; s < K / ks; s++)
			for (mt = 0; mt < L->mreps; mt++)
				rs_regs(fn, LA, va, mt, s,
					ra + (s * L->mreps + mt) * 4);
	}
	for (mt = 0; mt < L->mreps; mt++)
		for (j = 0; j < Nw / nc; j++)
			pin_consts(fn, acc + mt * (Nw / 2) + j * (nc / 2),
				   (int)nc / 2);
	cg_intr(cg, "llvm.nvvm.wgmma.fence.sync.aligned", NULL, 0, NULL, 0);
	for (s = 0; s < K / ks; s++)
		for (mt = 0; mt < L->mreps; mt++)
			for (j = 0; j < Nw / nc; j++) {
				LLVMValueRef db = desc_at(fn, &ob, db0, s * ks, j * nc);

				issue(fn, ptx_type(a),
				      ptx_type(ir_type(fn->f, op->opnds[1])), ks,
				      (int)nc, oa.d.mn, ob.d.mn,
				      LA ? NULL : desc_at(fn, &oa, da0, mt * 64, s * ks),
				      LA ? ra + (s * L->mreps + mt) * 4 : NULL, db,
				      acc + mt * (Nw / 2) + j * (nc / 2));
			}
	cg_intr(cg, "llvm.nvvm.wgmma.commit_group.sync.aligned", NULL, 0, NULL, 0);
	cg_set_tile(fn, op->res[0], L, acc);
	return true;
}

/* The wait, tied to every register of the operands. */
static bool
dot_wait(CgFn *fn, Op *op)
{
	Cg *cg = fn->cg;
	int64_t pending = attr_int(&op->attrs, "pending", 0);
	uint32_t i, k, total = 0, at = 0;
	LLVMValueRef **in, *args, res;
	LLVMTypeRef *ft;
	char *text, *cons;
	int len = 0, clen, cap;

	in = arena_alloc(&cg->arena, (op->nopnds + 1) * sizeof *in);
	for (i = 0; i < op->nopnds; i++) {
		const Layout *L = ir_type(fn->f, op->opnds[i])->layout;

		if (!cg_is_tile(fn, op->opnds[i]) || !L) {
			refuse(fn, op, "a value that is not a tile");
			return false;
		}
		in[i] = cg_operand(fn, op, i);
		total += (uint32_t)ly_nregs(L);
	}
	cap = 16 * (int)total + 128;
	text = arena_alloc(&cg->arena, (size_t)cap);
	cons = arena_alloc(&cg->arena, (size_t)(8 * total + 16));
	args = arena_alloc(&cg->arena, (total + 1) * sizeof *args);
	ft = arena_alloc(&cg->arena, (total + 1) * sizeof *ft);
	len += snprintf(text, (size_t)cap, "// wait for regs:");
	for (i = 0; i < total; i++)
		len += snprintf(text + len, (size_t)(cap - len), " $%u", i);
	snprintf(text + len, (size_t)(cap - len),
		 "\n\twgmma.wait_group.sync.aligned %lld;", (long long)pending);
	clen = 0;
	for (i = 0; i < op->nopnds; i++) {
		const Layout *L = ir_type(fn->f, op->opnds[i])->layout;
		Type *e = ty_elem(ir_type(fn->f, op->opnds[i]));
		bool f32 = e->kind == TY_F32;

		if (!f32 && ty_bits(e) != 32) {
			refuse(fn, op, "a tile of other than 32-bit elements");
			return false;
		}
		for (k = 0; k < (uint32_t)ly_nregs(L); k++, at++) {
			args[at] = in[i][k];
			ft[at] = LLVMTypeOf(in[i][k]);
			clen += snprintf(cons + clen, 8, "=%s,", f32 ? "f" : "r");
		}
	}
	for (i = 0; i < total; i++)
		clen += snprintf(cons + clen, 8, "%s%u", i ? "," : "", i);
	res = cg_asm(cg, LLVMStructTypeInContext(cg->C, ft, total, 0), text, cons,
		     args, (int)total, true, true);
	at = 0;
	for (i = 0; i < op->nopnds; i++) {
		const Layout *L = ir_type(fn->f, op->opnds[i])->layout;
		LLVMValueRef *r = cg_regs(fn, L);

		for (k = 0; k < (uint32_t)ly_nregs(L); k++, at++)
			r[k] = LLVMBuildExtractValue(cg->B, res, at, "");
		cg_set_tile(fn, op->res[i], L, r);
	}
	return true;
}

bool
cg_wgmma_op(CgFn *fn, Op *op)
{
	switch (op->kind) {
	case OP_DOT_ASYNC:
		return dot_async(fn, op);
	case OP_DOT_WAIT:
		return dot_wait(fn, op);
	default:  /* fence_async_shared */
		cg_intr(fn->cg, "llvm.nvvm.fence.proxy.async.shared_cta", NULL, 0,
			NULL, 0);
		return true;
	}
}
