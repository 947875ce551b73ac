/*
 * reduce.c: reduce {kind, axis} in three steps, as the operand's layout
 * distributes the reduced dim:
 *   1. within a thread: registers whose bases lie in the reduced dim are
 *      combined in register order;
 *   2. within a warp: one shfl.sync.bfly per lane bit in the reduced dim
 *      (after a butterfly every lane holds the same value, since each
 *      combine is commutative);
 *   3. across warps, when warp bits lie in the reduced dim: each warp's
 *      lane 0 of the group writes its partials to scratch, and after a
 *      barrier every thread combines the warps' partials in warp order.
 * The result is in the slice layout of the operand's (replicated where
 * the reduced bits were), or a scalar every thread holds.  sum and prod of
 * f16/bf16 accumulate in f32 and round once; argmax/argmin carry the
 * index along and keep the first of equal values, and skip NaNs (the
 * first index when all are NaN), as the simulator does.
 */
#include "config.h"

#include "codegen/cg.h"

typedef enum RedKind { R_SUM, R_PROD, R_MAX, R_MIN, R_ARGMAX, R_ARGMIN } RedKind;

typedef struct Red {
	CgFn *fn;
	Op *op;
	RedKind kind;
	Type *ety;        /* operand element */
	Type *aty;        /* accumulator element */
	const Layout *L;  /* operand layout */
	int axis;
	uint32_t axreg, axlane, axwarp;  /* bits whose bases are in axis */
} Red;

static RedKind
red_kind(const char *k)
{
	static const char *const names[] = { "sum", "prod", "max", "min",
					     "argmax", "argmin" };
	int i;

	for (i = 0; i < 6; i++)
		if (k && !strcmp(k, names[i]))
			return (RedKind)i;
	return R_SUM;
}

static void
red_init(Red *r, CgFn *fn, Op *op)
{
	Type *e = ty_elem(ir_type(fn->f, op->opnds[0]));
	int i;

	memset(r, 0, sizeof *r);
	r->fn = fn;
	r->op = op;
	r->kind = red_kind(attr_str(&op->attrs, "kind"));
	r->axis = (int)attr_int(&op->attrs, "axis", 0);
	r->ety = e;
	r->aty = e;
	if ((r->kind == R_SUM || r->kind == R_PROD) &&
	    (e->kind == TY_F16 || e->kind == TY_BF16))
		r->aty = ty_scalar(fn->f->mod->ctx, TY_F32);
	r->L = cg_operand_layout(fn, op, 0);
	for (i = 0; i < r->L->nreg; i++)
		if (ly_in_dim(r->L, r->axis, r->L->reg[i]))
			r->axreg |= 1u << i;
	for (i = 0; i < LY_LANES; i++)
		if (ly_in_dim(r->L, r->axis, r->L->lane[i]))
			r->axlane |= 1u << i;
	for (i = 0; i < r->L->nwarp; i++)
		if (ly_in_dim(r->L, r->axis, r->L->warp[i]))
			r->axwarp |= 1u << i;
}

static bool
is_arg(Red *r)
{
	return r->kind == R_ARGMAX || r->kind == R_ARGMIN;
}

/* Combines (a, ia) with (b, ib); for arg kinds also the index. */
static void
combine(Red *r, LLVMValueRef *a, LLVMValueRef *ia, LLVMValueRef b,
	LLVMValueRef ib)
{
	CgFn *fn = r->fn;
	LLVMBuilderRef B = fn->cg->B;
	LLVMValueRef take, eq, lt;

	switch (r->kind) {
	case R_SUM: *a = cg_binop(fn, OP_ADD, r->aty, *a, b); return;
	case R_PROD: *a = cg_binop(fn, OP_MUL, r->aty, *a, b); return;
	case R_MAX: *a = cg_binop(fn, OP_MAX, r->aty, *a, b); return;
	case R_MIN: *a = cg_binop(fn, OP_MIN, r->aty, *a, b); return;
	default: break;
	}
	take = cg_cmp_val(fn, r->kind == R_ARGMAX ? "gt" : "lt", r->aty, b, *a);
	eq = cg_cmp_val(fn, "eq", r->aty, b, *a);
	if (ty_is_float_kind(ty_elem(r->aty)->kind)) {
		/* as the simulator: a NaN is never the extreme unless all
		 * are (then the first); the order (NaN last, then index) is
		 * total, so every lane of a butterfly ends with the same */
		LLVMValueRef an = cg_cmp_val(fn, "ne", r->aty, *a, *a);
		LLVMValueRef bn = cg_cmp_val(fn, "ne", r->aty, b, b);

		take = LLVMBuildOr(B, take, LLVMBuildAnd(B, an,
				   LLVMBuildNot(B, bn, ""), ""), "");
		eq = LLVMBuildOr(B, eq, LLVMBuildAnd(B, an, bn, ""), "");
	}
	lt = LLVMBuildICmp(B, LLVMIntSLT, ib, *ia, "");
	take = LLVMBuildOr(B, take, LLVMBuildAnd(B, eq, lt, ""), "");
	*a = LLVMBuildSelect(B, take, b, *a, "");
	*ia = LLVMBuildSelect(B, take, ib, *ia, "");
}

/* Combines v[0..n) (and their indices) pairwise into v[0]: the same
 * order in every thread, log2(n) dependent steps instead of n - 1. */
static void
tree(Red *r, LLVMValueRef *v, LLVMValueRef *iv, int n)
{
	int st, i;

	for (st = 1; st < n; st *= 2)
		for (i = 0; i + st < n; i += 2 * st)
			combine(r, &v[i], iv ? &iv[i] : NULL, v[i + st],
				iv ? iv[i + st] : NULL);
}

/* shfl.sync.bfly of any 8..64-bit value, through 32-bit words. */
static LLVMValueRef
shfl_xor(CgFn *fn, LLVMValueRef v, int lanemask)
{
	Cg *cg = fn->cg;
	LLVMBuilderRef B = cg->B;
	LLVMTypeRef t = LLVMTypeOf(v);
	unsigned bits = LLVMGetTypeKind(t) == LLVMIntegerTypeKind
				? LLVMGetIntTypeWidth(t)
				: t == cg->t_f64 ? 64 : t == cg->t_f32 ? 32 : 16;
	LLVMTypeRef it = LLVMIntTypeInContext(cg->C, bits);
	LLVMValueRef x = LLVMBuildBitCast(B, v, it, ""), args[4], lo, hi;

	args[0] = cg_i32(cg, -1);
	args[2] = cg_i32(cg, lanemask);
	args[3] = cg_i32(cg, 0x1f);
	if (bits <= 32) {
		args[1] = bits < 32 ? LLVMBuildZExt(B, x, cg->t_i32, "") : x;
		x = cg_intr(cg, "llvm.nvvm.shfl.sync.bfly.i32", NULL, 0, args, 4);
		if (bits < 32)
			x = LLVMBuildTrunc(B, x, it, "");
		return LLVMBuildBitCast(B, x, t, "");
	}
	args[1] = LLVMBuildTrunc(B, x, cg->t_i32, "");
	lo = cg_intr(cg, "llvm.nvvm.shfl.sync.bfly.i32", NULL, 0, args, 4);
	args[1] = LLVMBuildTrunc(B, LLVMBuildLShr(B, x, cg_i64(cg, 32), ""),
				 cg->t_i32, "");
	hi = cg_intr(cg, "llvm.nvvm.shfl.sync.bfly.i32", NULL, 0, args, 4);
	x = LLVMBuildOr(B, LLVMBuildZExt(B, lo, cg->t_i64, ""),
			LLVMBuildShl(B, LLVMBuildZExt(B, hi, cg->t_i64, ""),
				     cg_i64(cg, 32), ""), "");
	return LLVMBuildBitCast(B, x, t, "");
}

/* value bits of warp (or lane) `x` selected by `mask`, packed */
static LLVMValueRef
pext(CgFn *fn, LLVMValueRef x, uint32_t mask)
{
	Cg *cg = fn->cg;
	LLVMValueRef r = cg_i32(cg, 0), b;
	int i, k = 0;

	for (i = 0; i < 32; i++) {
		if (!(mask & (1u << i)))
			continue;
		b = LLVMBuildAnd(cg->B, LLVMBuildLShr(cg->B, x, cg_i32(cg, i), ""),
				 cg_i32(cg, 1), "");
		r = LLVMBuildOr(cg->B, r, LLVMBuildShl(cg->B, b, cg_i32(cg, k++), ""), "");
	}
	return r;
}

/* Every lane of a warp holds the same result elements (its lanes are
 * all in the reduced dim, or replicas). */
static bool
lanes_agree(Red *r, const Layout *S)
{
	int b;

	if (!S)
		return true;
	for (b = 0; b < LY_LANES; b++)
		if (S->lane[b])
			return false;
	return true;
}

/* Step 3: combine the partials of the warps through scratch: every
 * thread reads them all and combines them as a tree, or, from 16 warps
 * on, each lane reads one and shuffles combine them (fewer instructions:
 * 1 + 2 log2(warps) instead of 2 warps - 1). */
static void
across_warps(Red *r, const Layout *S, LLVMValueRef *acc, LLVMValueRef *idx,
	     uint32_t n)
{
	CgFn *fn = r->fn;
	Cg *cg = fn->cg;
	LLVMBuilderRef B = cg->B;
	int64_t base = cg_cur_scratch(fn);
	int64_t nres = ty_numel(ir_type(fn->f, r->op->opnds[0])) / r->L->shape[r->axis];
	int ab = MAX(1, ty_bits(r->aty) / 8), slots = 1 << __builtin_popcount(r->axwarp);
	int stride = is_arg(r) ? MAX(ab, 4) : ab;
	LLVMTypeRef at = cg_type(cg, r->aty);
	LLVMValueRef wslot = pext(fn, fn->warp, r->axwarp), writer, x;
	LLVMValueRef tflat = S ? cg_thread_flat(fn, S) : cg_i32(cg, 0), g, off;
	LLVMBasicBlockRef wr = cg_new_block(fn, "red.write");
	LLVMBasicBlockRef done = cg_new_block(fn, "red.written");
	bool by_lanes = slots >= 16 && !is_arg(r) && lanes_agree(r, S);
	uint32_t k;
	int s;

	cg_sync_flush(fn);
	x = LLVMBuildAnd(B, fn->lane, cg_i32(cg, r->axlane), "");
	writer = LLVMBuildICmp(B, LLVMIntEQ, x, cg_i32(cg, 0), "");
	LLVMBuildCondBr(B, writer, wr, done);
	LLVMPositionBuilderAtEnd(B, wr);
	for (k = 0; k < n; k++) {
		if ((k & r->axreg) || !acc[k])
			continue;
		g = LLVMBuildOr(B, tflat, cg_i32(cg, S ? ly_reg_flat(S, k) : 0), "");
		off = LLVMBuildAdd(B, LLVMBuildMul(B, wslot, cg_i32(cg, nres), ""), g, "");
		off = LLVMBuildMul(B, off, cg_i32(cg, stride), "");
		x = LLVMBuildAdd(B, off, cg_i32(cg, base), "");
		cg_smem_store_vec(fn, at, &acc[k], 1, x, ab);
		if (is_arg(r))
			cg_smem_store_vec(fn, cg->t_i32, &idx[k], 1, LLVMBuildAdd(B, x,
					  cg_i32(cg, slots * nres * stride), ""), 4);
	}
	LLVMBuildBr(B, done);
	LLVMPositionBuilderAtEnd(B, done);
	cg_barrier(fn);
	for (k = 0; k < n; k++) {
		LLVMValueRef v[32], iv[32];

		if ((k & r->axreg) || !acc[k])
			continue;
		g = LLVMBuildOr(B, tflat, cg_i32(cg, S ? ly_reg_flat(S, k) : 0), "");
		if (by_lanes) {
			/* lane l reads warp l's partial; a butterfly over the
			 * lanes combines them */
			x = LLVMBuildAnd(B, fn->lane, cg_i32(cg, slots - 1), "");
			off = LLVMBuildAdd(B, g, LLVMBuildMul(B, x,
					   cg_i32(cg, nres), ""), "");
			off = LLVMBuildAdd(B, LLVMBuildMul(B, off, cg_i32(cg, stride), ""),
					   cg_i32(cg, base), "");
			cg_smem_load_vec(fn, at, &acc[k], 1, off, ab);
			for (s = 1; s < slots; s *= 2)
				combine(r, &acc[k], NULL, shfl_xor(fn, acc[k], s), NULL);
			continue;
		}
		for (s = 0; s < slots; s++) {
			off = LLVMBuildAdd(B, g, cg_i32(cg, (int64_t)s * nres), "");
			off = LLVMBuildAdd(B, LLVMBuildMul(B, off, cg_i32(cg, stride), ""),
					   cg_i32(cg, base), "");
			cg_smem_load_vec(fn, at, &v[s], 1, off, ab);
			if (is_arg(r))
				cg_smem_load_vec(fn, cg->t_i32, &iv[s], 1, LLVMBuildAdd(B, off,
						 cg_i32(cg, slots * nres * stride), ""), 4);
		}
		tree(r, v, is_arg(r) ? iv : NULL, slots);
		acc[k] = v[0];
		if (idx)
			idx[k] = iv[0];
	}
}

bool
cg_reduce_op(CgFn *fn, Op *op)
{
	Cg *cg = fn->cg;
	Red r;
	const Layout *S = NULL;
	LLVMValueRef *x, *acc, *idx = NULL, *out, t = NULL, v, iv = NULL;
	uint32_t n, dup, i, k;
	int b;

	red_init(&r, fn, op);
	x = cg_operand(fn, op, 0);
	n = (uint32_t)ly_nregs(r.L);
	dup = ly_dup_mask(r.L);
	acc = cg_regs(fn, r.L);
	if (is_arg(&r)) {
		idx = cg_regs(fn, r.L);
		t = cg_thread_coord(fn, r.L, r.axis);
	}
	/* 1. registers, as a tree per result register */
	for (k = 0; k < n; k++) {
		LLVMValueRef *vs, *ivs = NULL;
		int m = 0;

		if (k & (r.axreg | dup))
			continue;
		vs = cg_regs(fn, r.L);
		if (idx)
			ivs = cg_regs(fn, r.L);
		for (i = k; i < n; i++) {
			if ((i & ~r.axreg) != k || (i & dup))
				continue;
			vs[m] = cg_cvt(fn, r.aty, r.ety, x[i]);
			if (idx) {
				uint32_t f = ly_reg_flat(r.L, i);

				ivs[m] = LLVMBuildAdd(cg->B, t, cg_i32(cg, (f >> ly_dim_shift(r.L,
						     r.axis)) & (r.L->shape[r.axis] - 1)), "");
			}
			m++;
		}
		tree(&r, vs, ivs, m);
		acc[k] = vs[0];
		if (idx)
			idx[k] = ivs[0];
	}
	/* 2. lanes */
	for (b = 0; b < LY_LANES; b++) {
		if (!(r.axlane & (1u << b)))
			continue;
		for (k = 0; k < n; k++) {
			if ((k & r.axreg) || !acc[k])
				continue;
			v = shfl_xor(fn, acc[k], 1 << b);
			iv = idx ? shfl_xor(fn, idx[k], 1 << b) : NULL;
			combine(&r, &acc[k], idx ? &idx[k] : NULL, v, iv);
		}
	}
	/* 3. warps */
	if (cg_is_tile(fn, op->res[0]))
		S = fn->vals[op->res[0]].home;
	if (r.axwarp)
		across_warps(&r, S, acc, idx, n);
	if (!S) {
		v = idx ? idx[0] : cg_cvt(fn, ty_elem(ir_type(fn->f, op->res[0])),
					  r.aty, acc[0]);
		fn->vals[op->res[0]].v = v;
		return true;
	}
	out = cg_regs(fn, S);
	for (k = 0; k < n; k++)
		if (!(k & (r.axreg | dup)) && acc[k])
			out[k] = idx ? idx[k]
				     : cg_cvt(fn, ty_elem(ir_type(fn->f, op->res[0])),
					      r.aty, acc[k]);
	for (i = 0; i < n; i++)
		out[i] = out[i & ~(r.axreg | dup)];
	cg_set_tile(fn, op->res[0], S, out);
	cg_sync_flush(fn);
	return true;
}
