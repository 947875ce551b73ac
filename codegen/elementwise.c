/*
 * elementwise.c: arithmetic, bitwise ops, shifts, cmp, select, fma,
 * ptr_add and the math ops, on scalars and on each register of a tile.
 *
 * Semantics follow docs/il.md exactly: integers wrap; div truncates and
 * rem takes the dividend's sign (signed or unsigned by the type); float
 * rem is fmod, exact (fmod.c; not LLVM's frem); shift
 * counts are taken modulo the width; float min/max are IEEE minNum/maxNum
 * (llvm.minnum -> min.f32); float compares are ordered except ne.  f16
 * and bf16 arithmetic is done in f32 and rounded once, which is exact for
 * + - * / (f32 has more than 2p+2 bits); their fma is the type's own
 * (an fma through f32 would round twice).  No fast-math flag is set unless
 * --fast-math, so LLVM neither contracts a*b+c into an fma nor
 * approximates a division.
 */
#include "config.h"

#include "codegen/cg.h"

static bool
is_half(Type *e)
{
	return e->kind == TY_F16 || e->kind == TY_BF16;
}

LLVMValueRef
cg_fast(CgFn *fn, LLVMValueRef v)
{
	if (fn->cg->o->fast_math && LLVMCanValueUseFastMathFlags(v))
		LLVMSetFastMathFlags(v, LLVMFastMathAllowContract |
				     LLVMFastMathApproxFunc |
				     LLVMFastMathAllowReciprocal);
	return v;
}

/* bf16 -> f32 is its bits moved up.  An element of a loaded word (an
 * extractelement of a bitcast of i32s) comes from the word itself: the
 * high half is masked in place, the low one shifted, one instruction
 * each, where cvt.f32.bf16 of the extracted half would take two. */
static LLVMValueRef
bf16_to_f32(CgFn *fn, LLVMValueRef v)
{
	Cg *cg = fn->cg;
	LLVMBuilderRef B = cg->B;
	LLVMValueRef vec, idx, w = NULL;
	LLVMTypeRef wt;
	unsigned k = 0;

	if (LLVMIsAExtractElementInst(v) &&
	    LLVMIsAConstantInt(idx = LLVMGetOperand(v, 1)) &&
	    LLVMIsABitCastInst(vec = LLVMGetOperand(v, 0))) {
		w = LLVMGetOperand(vec, 0);
		wt = LLVMTypeOf(w);
		k = (unsigned)LLVMConstIntGetZExtValue(idx);
		if (wt == cg->t_i32 && k < 2)
			;
		else if (LLVMGetTypeKind(wt) == LLVMVectorTypeKind &&
			 LLVMGetElementType(wt) == cg->t_i32)
			w = LLVMBuildExtractElement(B, w, cg_i32(cg, k / 2), "");
		else
			w = NULL;
	}
	if (w && (k & 1))
		w = LLVMBuildAnd(B, w, cg_i32(cg, (int32_t)0xffff0000u), "");
	else if (w)
		w = LLVMBuildShl(B, w, cg_i32(cg, 16), "");
	else
		w = LLVMBuildShl(B, LLVMBuildZExt(B, LLVMBuildBitCast(B, v,
			cg->t_i16, ""), cg->t_i32, ""), cg_i32(cg, 16), "");
	return LLVMBuildBitCast(B, w, cg->t_f32, "");
}

/* f16/bf16 -> f32, others unchanged. */
LLVMValueRef
cg_widen(CgFn *fn, Type *e, LLVMValueRef v)
{
	if (e->kind == TY_BF16)
		return bf16_to_f32(fn, v);
	return is_half(e) ? LLVMBuildFPExt(fn->cg->B, v, fn->cg->t_f32, "") : v;
}

LLVMValueRef
cg_narrow(CgFn *fn, Type *e, LLVMValueRef v)
{
	return is_half(e) ? LLVMBuildFPTrunc(fn->cg->B, v, cg_type(fn->cg, e), "")
			  : v;
}

static LLVMValueRef
intr1(CgFn *fn, const char *name, LLVMValueRef x)
{
	LLVMTypeRef t = LLVMTypeOf(x);

	return cg_intr(fn->cg, name, &t, 1, &x, 1);
}

static LLVMValueRef
intr2(CgFn *fn, const char *name, LLVMValueRef x, LLVMValueRef y)
{
	LLVMTypeRef t = LLVMTypeOf(x);
	LLVMValueRef a[2] = { x, y };

	return cg_intr(fn->cg, name, &t, 1, a, 2);
}

static LLVMValueRef
float_binop(CgFn *fn, OpKind k, Type *e, LLVMValueRef a, LLVMValueRef b)
{
	LLVMBuilderRef B = fn->cg->B;
	LLVMValueRef r;

	a = cg_widen(fn, e, a);
	b = cg_widen(fn, e, b);
	switch (k) {
	case OP_ADD: r = LLVMBuildFAdd(B, a, b, ""); break;
	case OP_SUB: r = LLVMBuildFSub(B, a, b, ""); break;
	case OP_MUL: r = LLVMBuildFMul(B, a, b, ""); break;
	case OP_DIV: r = LLVMBuildFDiv(B, a, b, ""); break;
	case OP_REM: r = cg_fmod(fn, a, b); break;
	case OP_MIN: r = intr2(fn, "llvm.minnum", a, b); break;
	default: r = intr2(fn, "llvm.maxnum", a, b); break;
	}
	return cg_narrow(fn, e, cg_fast(fn, r));
}

static LLVMValueRef
shift_count(CgFn *fn, Type *e, LLVMValueRef b)
{
	int w = ty_bits(e);

	return LLVMBuildAnd(fn->cg->B, b,
			    LLVMConstInt(LLVMTypeOf(b), (unsigned)(w - 1), 0), "");
}

LLVMValueRef
cg_binop(CgFn *fn, OpKind k, Type *ety, LLVMValueRef a, LLVMValueRef b)
{
	LLVMBuilderRef B = fn->cg->B;
	Type *e = ty_elem(ety);
	bool u = ty_is_unsigned_kind(e->kind) || e->kind == TY_I1;

	if (ty_is_float_kind(e->kind))
		return float_binop(fn, k, e, a, b);
	switch (k) {
	case OP_ADD: return LLVMBuildAdd(B, a, b, "");
	case OP_SUB: return LLVMBuildSub(B, a, b, "");
	case OP_MUL: return LLVMBuildMul(B, a, b, "");
	case OP_DIV: return u ? LLVMBuildUDiv(B, a, b, "") : LLVMBuildSDiv(B, a, b, "");
	case OP_REM: return u ? LLVMBuildURem(B, a, b, "") : LLVMBuildSRem(B, a, b, "");
	case OP_MIN: return intr2(fn, u ? "llvm.umin" : "llvm.smin", a, b);
	case OP_MAX: return intr2(fn, u ? "llvm.umax" : "llvm.smax", a, b);
	case OP_AND: return LLVMBuildAnd(B, a, b, "");
	case OP_OR: return LLVMBuildOr(B, a, b, "");
	case OP_XOR: return LLVMBuildXor(B, a, b, "");
	case OP_SHL:
		if (e->kind == TY_I1)
			return a;
		return LLVMBuildShl(B, a, shift_count(fn, e, b), "");
	case OP_SHR:
		if (e->kind == TY_I1)
			return a;
		b = shift_count(fn, e, b);
		return u ? LLVMBuildLShr(B, a, b, "") : LLVMBuildAShr(B, a, b, "");
	default:
		tlx_bug("'%s' is not a binary op", op_name(k));
	}
}

/* Flips or clears the sign bit of an f16/bf16 through its bits. */
static LLVMValueRef
half_sign(CgFn *fn, Type *e, LLVMValueRef x, bool abs)
{
	Cg *cg = fn->cg;
	LLVMValueRef i = LLVMBuildBitCast(cg->B, x, cg->t_i16, "");

	i = abs ? LLVMBuildAnd(cg->B, i, LLVMConstInt(cg->t_i16, 0x7fff, 0), "")
		: LLVMBuildXor(cg->B, i, LLVMConstInt(cg->t_i16, 0x8000, 0), "");
	return LLVMBuildBitCast(cg->B, i, cg_type(cg, e), "");
}

static LLVMValueRef
unop(CgFn *fn, OpKind k, Type *ety, LLVMValueRef x)
{
	Cg *cg = fn->cg;
	Type *e = ty_elem(ety);
	LLVMTypeRef t = LLVMTypeOf(x);

	switch (k) {
	case OP_NEG:
		if (is_half(e))
			return half_sign(fn, e, x, false);
		if (ty_is_float_kind(e->kind))
			return LLVMBuildFNeg(cg->B, x, "");
		return LLVMBuildNeg(cg->B, x, "");
	case OP_NOT:
		return LLVMBuildNot(cg->B, x, "");
	case OP_ABS:
		if (is_half(e))
			return half_sign(fn, e, x, true);
		if (ty_is_float_kind(e->kind))
			return intr1(fn, "llvm.fabs", x);
		if (ty_is_unsigned_kind(e->kind) || e->kind == TY_I1)
			return x;
		{
			LLVMValueRef a[2] = { x, LLVMConstInt(cg->t_i1, 0, 0) };

			return cg_intr(cg, "llvm.abs", &t, 1, a, 2);
		}
	default:
		tlx_bug("'%s' is not a unary op", op_name(k));
	}
}

LLVMValueRef
cg_cmp_val(CgFn *fn, const char *pred, Type *ety, LLVMValueRef a,
	   LLVMValueRef b)
{
	LLVMBuilderRef B = fn->cg->B;
	Type *e = ty_elem(ety);
	static const char *const preds[] = { "eq", "ne", "lt", "le", "gt", "ge" };
	static const LLVMRealPredicate fp[] = { LLVMRealOEQ, LLVMRealUNE,
		LLVMRealOLT, LLVMRealOLE, LLVMRealOGT, LLVMRealOGE };
	static const LLVMIntPredicate sp[] = { LLVMIntEQ, LLVMIntNE,
		LLVMIntSLT, LLVMIntSLE, LLVMIntSGT, LLVMIntSGE };
	static const LLVMIntPredicate up[] = { LLVMIntEQ, LLVMIntNE,
		LLVMIntULT, LLVMIntULE, LLVMIntUGT, LLVMIntUGE };
	int p = 0;

	while (p < 6 && (!pred || strcmp(pred, preds[p])))
		p++;
	if (NEVER(p == 6))
		p = 0;
	if (ty_is_float_kind(e->kind))
		return LLVMBuildFCmp(B, fp[p], cg_widen(fn, e, a),
				     cg_widen(fn, e, b), "");
	if (e->kind == TY_PTR || ty_is_unsigned_kind(e->kind) ||
	    e->kind == TY_I1)
		return LLVMBuildICmp(B, up[p], a, b, "");
	return LLVMBuildICmp(B, sp[p], a, b, "");
}

/* An f16/bf16 fma stays in its type (fma.rn.f16, fma.rn.bf16: one
 * rounding).  Through f32 it rounded twice, the f32 fma then the
 * narrowing, which differs where the f32 result lands on a tie of the
 * narrow type (gen_gpu seed 70550: 1.5 * -796917760 - 0.375 gave bf16
 * 0xce8e, not 0xce8f): unlike + - * /, an fma is not exact in f32. */
static LLVMValueRef
fma3(CgFn *fn, LLVMValueRef a, LLVMValueRef b, LLVMValueRef c)
{
	LLVMValueRef args[3] = { a, b, c };
	LLVMTypeRef t = LLVMTypeOf(a);

	return cg_intr(fn->cg, "llvm.fma", &t, 1, args, 3);
}

LLVMValueRef
cg_ptr_add(CgFn *fn, Type *ptrty, Type *offty, LLVMValueRef p,
	   LLVMValueRef off)
{
	Cg *cg = fn->cg;
	Type *pe = ty_elem(ptrty)->elem;
	Type *oe = ty_elem(offty);

	if (ty_bits(oe) < 64)
		off = ty_is_unsigned_kind(oe->kind) || oe->kind == TY_I1
			      ? LLVMBuildZExt(cg->B, off, cg->t_i64, "")
			      : LLVMBuildSExt(cg->B, off, cg->t_i64, "");
	return LLVMBuildGEP2(cg->B, cg_type(cg, pe), p, &off, 1, "");
}

/* misalign: (address % bytes) / the element's size; the constant the
 * entry's axis facts prove (0 in a fast entry whose pointers are
 * assumed aligned). */
static LLVMValueRef
misalign(CgFn *fn, Op *op, LLVMValueRef p)
{
	Cg *cg = fn->cg;
	const Axis *ax = cg_axis(fn, op->res[0]);
	int64_t bytes = attr_int(&op->attrs, "bytes", 16);
	int es = MAX(1, ty_bytes(ty_elem(ir_type(fn->f, op->opnds[0]))->elem));
	LLVMValueRef a;

	if (ax->has_known)
		return cg_i32(cg, (int)ax->known);
	a = LLVMBuildAnd(cg->B, LLVMBuildPtrToInt(cg->B, p, cg->t_i64, ""),
			 cg_i64(cg, bytes - 1), "");
	a = LLVMBuildTrunc(cg->B, a, cg->t_i32, "");
	return LLVMBuildUDiv(cg->B, a, cg_i32(cg, es), "");
}

/* One element of op, given its operands' elements. */
static LLVMValueRef
elem(CgFn *fn, Op *op, LLVMValueRef *x)
{
	Func *f = fn->f;
	Type *t0 = ir_type(f, op->opnds[0]);

	switch (op->kind) {
	case OP_CMP:
		return cg_cmp_val(fn, attr_str(&op->attrs, "pred"), t0, x[0], x[1]);
	case OP_SELECT:
		return LLVMBuildSelect(fn->cg->B, x[0], x[1], x[2], "");
	case OP_FMA:
		return fma3(fn, x[0], x[1], x[2]);
	case OP_PTR_ADD:
		return cg_ptr_add(fn, t0, ir_type(f, op->opnds[1]), x[0], x[1]);
	case OP_MISALIGN:
		return misalign(fn, op, x[0]);
	default:
		if (op_has(op, F_MATH))
			return cg_math(fn, op->kind, ty_elem(t0), cg_approx(fn, op), x[0]);
		if (op->nopnds == 1)
			return unop(fn, op->kind, t0, x[0]);
		return cg_binop(fn, op->kind, t0, x[0], x[1]);
	}
}

static LLVMValueRef
fconst(CgFn *fn, double v)
{
	return LLVMConstReal(fn->cg->t_f32, v);
}

static LLVMValueRef
fma_f32(CgFn *fn, LLVMValueRef a, LLVMValueRef b, LLVMValueRef c)
{
	LLVMValueRef args[3] = { a, b, c };
	LLVMTypeRef t = fn->cg->t_f32;

	return cg_intr(fn->cg, "llvm.fma", &t, 1, args, 3);
}

/* The rare path of div_uniform: every a[i] / b[i] with div.rn, as a loop
 * over local arrays rather than one div.rn per register (ptxas expands
 * each into a dozen instructions and a call: a softmax row of 32
 * elements per thread took it 40 ms more to assemble).  The arrays hold
 * the registers that are not copies of others (dup), in order.  Returns
 * the block the quotients are defined in. */
static LLVMBasicBlockRef
div_slow_loop(CgFn *fn, Type *e, LLVMValueRef *a, uint32_t dup, uint32_t n,
	      LLVMValueRef *b, LLVMValueRef *r)
{
	Cg *cg = fn->cg;
	LLVMBuilderRef B = cg->B;
	LLVMTypeRef at;
	LLVMValueRef arr, ix[2], p, den = b[0], d;
	CgLoop loop;
	uint32_t i, m = 0;
	bool one = true;

	for (i = 0; i < n; i++)
		if (!(i & dup)) {
			one = one && b[i] == b[0];
			m++;
		}
	at = LLVMArrayType2(cg->t_f32, m);
	arr = LLVMBuildAlloca(fn->Balloca, at, "quot");
	if (!one)
		den = LLVMBuildAlloca(fn->Balloca, at, "den");
	ix[0] = cg_i32(cg, 0);
	for (i = 0, m = 0; i < n; i++) {
		if (i & dup)
			continue;
		ix[1] = cg_i32(cg, m++);
		LLVMBuildStore(B, cg_widen(fn, e, a[i]),
			       LLVMBuildGEP2(B, at, arr, ix, 2, ""));
		if (!one)
			LLVMBuildStore(B, b[i], LLVMBuildGEP2(B, at, den, ix, 2, ""));
	}
	ix[1] = cg_loop_begin(fn, &loop, "div");
	p = LLVMBuildGEP2(B, at, arr, ix, 2, "");
	d = one ? den : LLVMBuildLoad2(B, cg->t_f32,
				       LLVMBuildGEP2(B, at, den, ix, 2, ""), "");
	LLVMBuildStore(B, LLVMBuildFDiv(B, LLVMBuildLoad2(B, cg->t_f32, p, ""),
					d, ""), p);
	cg_loop_end(fn, &loop, m);
	for (i = 0, m = 0; i < n; i++) {
		if (i & dup)
			continue;
		ix[1] = cg_i32(cg, m++);
		r[i] = LLVMBuildLoad2(B, cg->t_f32,
				      LLVMBuildGEP2(B, at, arr, ix, 2, ""), "");
	}
	return loop.exit;
}

/* A tile divided by a few values (rows' sums broadcast back: softmax,
 * one row per thread or several).  Each divisor's reciprocal is refined
 * once, r = rcp(b) + rcp(b) (1 - b rcp(b)), then each element takes
 * q = a r and q - r (b q - a), with the remainder exact in an fma: the
 * sequence of div.rn's own fast path, IEEE's rounded quotient wherever
 * nothing under- or overflows, which holds when every b and every
 * nonzero |a| lie in [2^-60, 2^60] (all quotients and remainders normal;
 * a zero's quotient and remainder are zeros, of the right sign where b is
 * positive: the masked-off elements of a softmax).  A thread with an
 * element outside (a divisor negative or zero, inf, subnormal, huge)
 * divides all of them with div.rn instead, in a loop (div_slow_loop);
 * NaNs pass through either way.  Five instructions per element instead
 * of ten and a convergence barrier each. */
enum { DIV_DIVISORS = 4 };  /* distinct divisors per thread, at most */

static bool
div_uniform(CgFn *fn, Op *op, LLVMValueRef **in, const Layout *ly,
	    LLVMValueRef *r)
{
	Cg *cg = fn->cg;
	LLVMBuilderRef B = cg->B;
	Type *e = ty_elem(ir_type(fn->f, op->opnds[0]));
	uint32_t dup = ly_dup_mask(ly), i, k, nd = 0, n = (uint32_t)ly_nregs(ly);
	LLVMValueRef dv[DIV_DIVISORS], bw[DIV_DIVISORS], rcs[DIV_DIVISORS];
	LLVMValueRef hi = NULL, lo = NULL, alo = NULL, ok, *q, *bs, x;
	uint8_t *which;
	LLVMBasicBlockRef fast, slow, join;

	if (op->kind != OP_DIV || cg->o->fast_math || n < 2 ||
	    (e->kind != TY_F32 && !is_half(e)))
		return false;
	which = arena_alloc(fn->a, n);
	for (i = 0; i < n; i++) {
		for (k = 0; k < nd && dv[k] != in[1][i]; k++)
			;
		if (k == nd) {
			if (nd == DIV_DIVISORS || (i & dup))
				return false;
			dv[nd++] = in[1][i];
		}
		which[i] = (uint8_t)k;
	}
	if (nd * 2 > n)
		return false;
	for (k = 0; k < nd; k++) {
		bw[k] = cg_widen(fn, e, dv[k]);
		rcs[k] = cg_intr(cg, "llvm.nvvm.rcp.approx.ftz.f", NULL, 0, &bw[k], 1);
		rcs[k] = fma_f32(fn, rcs[k], fma_f32(fn, LLVMBuildFNeg(B, bw[k], ""),
						      rcs[k], fconst(fn, 1.0)), rcs[k]);
		x = intr1(fn, "llvm.fabs", bw[k]);
		hi = hi ? intr2(fn, "llvm.maxnum", hi, x) : x;
		lo = lo ? intr2(fn, "llvm.minnum", lo, bw[k]) : bw[k];
	}
	bs = cg_regs(fn, ly);
	for (i = 0; i < n; i++) {
		bs[i] = bw[which[i]];
		if (i & dup)
			continue;
		x = intr1(fn, "llvm.fabs", cg_widen(fn, e, in[0][i]));
		hi = intr2(fn, "llvm.maxnum", hi, x);
		/* |a| - 1 as bits, unsigned: a zero is the largest; 2^-60
		 * is 0x21800000 */
		x = LLVMBuildSub(B, LLVMBuildBitCast(B, x, cg->t_i32, ""),
				 cg_i32(cg, 1), "");
		alo = alo ? intr2(fn, "llvm.umin", alo, x) : x;
	}
	ok = LLVMBuildAnd(B, LLVMBuildFCmp(B, LLVMRealOLE, hi,
					   fconst(fn, 0x1p60), ""),
			  LLVMBuildFCmp(B, LLVMRealOGE, lo,
					fconst(fn, 0x1p-60), ""), "");
	ok = LLVMBuildAnd(B, ok, LLVMBuildICmp(B, LLVMIntUGE, alo,
			  cg_i32(cg, 0x21800000 - 1), ""), "");
	fast = cg_new_block(fn, "div.fast");
	slow = cg_new_block(fn, "div.slow");
	join = cg_new_block(fn, "div.join");
	LLVMBuildCondBr(B, ok, fast, slow);
	LLVMPositionBuilderAtEnd(B, fast);
	q = cg_regs(fn, ly);
	for (i = 0; i < n; i++) {
		LLVMValueRef a, rem, rc = rcs[which[i]];

		if (i & dup)
			continue;
		a = cg_widen(fn, e, in[0][i]);
		q[i] = LLVMBuildFMul(B, a, rc, "");
		rem = fma_f32(fn, q[i], bs[i], LLVMBuildFNeg(B, a, ""));
		q[i] = fma_f32(fn, LLVMBuildFNeg(B, rem, ""), rc, q[i]);
	}
	LLVMBuildBr(B, join);
	LLVMPositionBuilderAtEnd(B, slow);
	slow = div_slow_loop(fn, e, in[0], dup, n, bs, r);
	LLVMBuildBr(B, join);
	LLVMPositionBuilderAtEnd(B, join);
	for (i = 0; i < n; i++) {
		LLVMValueRef iv[2], phi;
		LLVMBasicBlockRef ib[2] = { fast, slow };

		if (i & dup) {
			r[i] = r[i & ~dup];
			continue;
		}
		iv[0] = q[i];
		iv[1] = r[i];
		phi = LLVMBuildPhi(B, cg->t_f32, "");
		LLVMAddIncoming(phi, iv, ib, 2);
		r[i] = phi;
	}
	/* f16/bf16 narrow after every phi: phis open their block */
	for (i = 0; i < n; i++)
		if (!(i & dup))
			r[i] = cg_narrow(fn, e, r[i]);
	for (i = 0; i < n; i++)
		if (i & dup)
			r[i] = r[i & ~dup];
	return true;
}

LLVMValueRef
cg_elem_one(CgFn *fn, Op *op, LLVMValueRef *x)
{
	return elem(fn, op, x);
}

LLVMValueRef *
cg_elem_compute(CgFn *fn, Op *op, const Layout *ly)
{
	LLVMValueRef *in[3], *r = cg_regs(fn, ly), x[3];
	uint32_t dup = ly_dup_mask(ly), i, j, n = op->nopnds < 3 ? op->nopnds : 3;

	for (j = 0; j < n; j++)
		in[j] = cg_tile(fn, op->opnds[j], ly);
	if (div_uniform(fn, op, in, ly, r) ||
	    (n == 1 && !cg_approx(fn, op) && cg_trig_tile(fn, op->kind, ty_elem(ir_type(fn->f, op->opnds[0])),
				    in[0], (uint32_t)ly_nregs(ly), dup, r)))
		return r;
	for (i = 0; i < (uint32_t)ly_nregs(ly); i++) {
		if (i & dup) {
			r[i] = r[i & ~dup];
			continue;
		}
		for (j = 0; j < n; j++)
			x[j] = in[j][i];
		r[i] = elem(fn, op, x);
	}
	return r;
}

bool
cg_elementwise(CgFn *fn, Op *op)
{
	Value res = op->res[0];
	LLVMValueRef x[3];
	uint32_t j;

	if (!cg_is_tile(fn, res)) {
		for (j = 0; j < op->nopnds && j < 3; j++)
			x[j] = cg_scalar(fn, op->opnds[j]);
		fn->vals[res].v = elem(fn, op, x);
		return true;
	}
	cg_set_tile(fn, res, fn->vals[res].home,
		    cg_elem_compute(fn, op, fn->vals[res].home));
	return true;
}
