/*
 * math.c: exp exp2 log log2 sqrt rsqrt sin cos tanh erf sigmoid floor
 * ceil.  f16 and bf16 are computed in f32 and rounded once.  f64 has
 * sqrt, rsqrt, floor and ceil; the others are refused for f64 for now.
 *
 * Accurate variants (the default) and their bounds for f32, measured
 * against the simulator's correctly rounded results:
 *   exp, exp2     2^j * ex2.approx(f), |f| <= 1/2 after an exact (fma)
 *                 reduction: <= 2 ulp
 *   log, log2     x = 2^e * m, m in [0.75, 1.5), atanh series of
 *                 (m-1)/(m+1) to t^11: <= 2 ulp
 *   sqrt          sqrt.rn (exact); rsqrt = 1 / sqrt.rn: <= 1 ulp
 *   sin, cos      k = rint(x * 2/pi), three-part fma reduction below
 *                 1e5, Payne-Hanek above, Cephes polynomials on
 *                 [-pi/4, pi/4]: <= 2 ulp for every x
 *   tanh          Taylor series to x^17 for |x| < 0.55, else
 *                 1 - 2 / (exp(2|x|) + 1): <= 3 ulp
 *   erf           x + x C(x^2) below 1, 1 - 2^Q(|x|) from 1, C and Q
 *                 fitted (tools/fit/erf.py): <= 2 ulp
 *   sigmoid       e = exp(-|x|): 1 / (1 + e), below 0 e / (1 + e)
 *                 (subnormal results, not 0, below -87): <= 3 ulp
 *   floor, ceil   cvt.rmi / cvt.rpi (exact)
 * --fast-math, or `approx = 1` on one op, uses the hardware
 * approximations: ex2.approx.ftz (exp, exp2), lg2.approx (log, log2),
 * rsqrt.approx, sin.approx, cos.approx, tanh.approx (each about 2^-22
 * relative, tanh 2^-11), sqrt.approx.
 */
#include "config.h"

#include "codegen/cg.h"

static LLVMValueRef
fc(Cg *cg, double v)
{
	return LLVMConstReal(cg->t_f32, v);
}

static LLVMValueRef
call1(CgFn *fn, const char *name, bool ovl, LLVMValueRef x)
{
	LLVMTypeRef t = LLVMTypeOf(x);

	return cg_intr(fn->cg, name, ovl ? &t : NULL, ovl ? 1 : 0, &x, 1);
}

static LLVMValueRef
fma3(CgFn *fn, LLVMValueRef a, LLVMValueRef b, LLVMValueRef c)
{
	LLVMValueRef args[3] = { a, b, c };
	LLVMTypeRef t = LLVMTypeOf(a);

	return cg_intr(fn->cg, "llvm.fma", &t, 1, args, 3);
}

static LLVMValueRef
mul(CgFn *fn, LLVMValueRef a, LLVMValueRef b)
{
	return LLVMBuildFMul(fn->cg->B, a, b, "");
}

static LLVMValueRef
add(CgFn *fn, LLVMValueRef a, LLVMValueRef b)
{
	return LLVMBuildFAdd(fn->cg->B, a, b, "");
}

/* Horner: c[0] + x*(c[1] + x*(...)) */
static LLVMValueRef
poly(CgFn *fn, LLVMValueRef x, const double *c, int n)
{
	LLVMValueRef p = fc(fn->cg, c[n - 1]);
	int i;

	for (i = n - 2; i >= 0; i--)
		p = fma3(fn, p, x, fc(fn->cg, c[i]));
	return p;
}

/* One MUFU.EX2: results below 2^-126 flush to zero (the non-ftz form
 * costs three more instructions for them). */
static LLVMValueRef
ex2(CgFn *fn, LLVMValueRef x)
{
	return call1(fn, "llvm.nvvm.ex2.approx.ftz", true, x);
}

/* 2^(j + f) with j = rint(t) clamped to [-126, 127], t = x * log2(e) (or
 * x), and f = t - j computed exactly with fmas, |f| <= 1/2 wherever the
 * result is normal; 2^f is ex2.approx.ftz (f is never subnormal there)
 * and 2^j is made from the exponent bits.  The clamp is one saturating
 * fma: u = sat(t / 253 + 126 / 253) in [0, 1], and u * 253 - 126 + 1.5 *
 * 2^23 rounds to j in the low mantissa bits, so (bits << 23) + bits(1.0)
 * is 2^j.  One rounding in the final product (subnormal results too).
 * -inf gives f = -inf and 0, +inf and large x give inf, NaN stays NaN
 * through f (the saturation makes it 0).  Eight instructions in SASS. */
static LLVMValueRef
exp_core(CgFn *fn, LLVMValueRef x, bool base2)
{
	Cg *cg = fn->cg;
	LLVMBuilderRef B = cg->B;
	LLVMValueRef u, r, j, f, s, args[3];
	const double magic = 12582912.0;  /* 1.5 * 2^23 */
	const double l2e = 1.4426950408889634;

	args[0] = x;
	args[1] = fc(cg, (base2 ? 1.0 : l2e) / 253.0);
	args[2] = fc(cg, 126.0 / 253.0);
	u = cg_intr(cg, "llvm.nvvm.fma.rn.sat.f", NULL, 0, args, 3);
	r = fma3(fn, u, fc(cg, 253.0), fc(cg, magic - 126.0));
	j = LLVMBuildFSub(B, r, fc(cg, magic), "");
	if (base2) {
		f = LLVMBuildFSub(B, x, j, "");
	} else {
		/* x * log2(e) - j with log2(e) = hi + lo */
		f = fma3(fn, x, fc(cg, 1.44269502162933349609375),
			 LLVMBuildFNeg(B, j, ""));
		f = fma3(fn, x, fc(cg, 1.925963033500011079e-08), f);
	}
	f = call1(fn, "llvm.nvvm.ex2.approx.ftz", true, f);
	/* (bits << 23) + bits(1.0) as inline PTX: as LLVM IR, the shifts of
	 * a row's 32 exponents are candidates of NVPTX's straight-line
	 * strength reduction, whose basis search took 40% of the 4-warp
	 * softmax's LLVM time (17 ms) and changed nothing */
	s = LLVMBuildBitCast(B, r, cg->t_i32, "");
	s = cg_asm(cg, cg->t_i32, "{ .reg .b32 t; shl.b32 t, $1, 23; "
		   "add.s32 $0, t, 1065353216; }", "=r,r", &s, 1, false, false);
	return mul(fn, f, LLVMBuildBitCast(B, s, cg->t_f32, ""));
}

/* log(x) (or log2 when base2), see the header. */
static LLVMValueRef
log_core(CgFn *fn, LLVMValueRef x, bool base2)
{
	Cg *cg = fn->cg;
	LLVMBuilderRef B = cg->B;
	static const double c[] = { 2.0, 2.0 / 3, 2.0 / 5, 2.0 / 7, 2.0 / 9,
				    2.0 / 11 };
	LLVMValueRef den, xs, bits, e, m, t, s, p, r, ef;

	/* scale subnormals into the normal range */
	den = LLVMBuildFCmp(B, LLVMRealOLT, x, fc(cg, 0x1p-126), "");
	xs = LLVMBuildSelect(B, den, mul(fn, x, fc(cg, 0x1p24)), x, "");
	bits = LLVMBuildBitCast(B, xs, cg->t_i32, "");
	/* m in [0.75, 1.5): subtract the exponent of 0.75 */
	e = LLVMBuildSub(B, bits, cg_i32(cg, 0x3f400000), "");
	e = LLVMBuildAShr(B, e, cg_i32(cg, 23), "");
	m = LLVMBuildSub(B, bits, LLVMBuildShl(B, e, cg_i32(cg, 23), ""), "");
	m = LLVMBuildBitCast(B, m, cg->t_f32, "");
	e = LLVMBuildSub(B, e, LLVMBuildSelect(B, den, cg_i32(cg, 24),
					      cg_i32(cg, 0), ""), "");
	ef = LLVMBuildSIToFP(B, e, cg->t_f32, "");
	t = LLVMBuildFDiv(B, LLVMBuildFSub(B, m, fc(cg, 1), ""),
			  add(fn, m, fc(cg, 1)), "");
	s = mul(fn, t, t);
	p = mul(fn, t, poly(fn, s, c, 6));  /* log(m) */
	if (base2)
		r = fma3(fn, p, fc(cg, 1.4426950408889634), ef);
	else
		r = fma3(fn, ef, fc(cg, 0.6931471824645996),
			 fma3(fn, ef, fc(cg, -1.9046542121259336e-09), p));
	/* specials: 0 -> -inf, < 0 -> NaN, inf -> inf, NaN -> NaN */
	r = LLVMBuildSelect(B, LLVMBuildFCmp(B, LLVMRealOEQ, x, fc(cg, 0), ""),
			    fc(cg, -1.0 / 0.0), r, "");
	r = LLVMBuildSelect(B, LLVMBuildFCmp(B, LLVMRealOEQ, x,
					     fc(cg, 1.0 / 0.0), ""), x, r, "");
	return LLVMBuildSelect(B, LLVMBuildFCmp(B, LLVMRealULT, x, fc(cg, 0), ""),
			       fc(cg, 0.0 / 0.0), r, "");
}

/* 2/pi as the bits of its fraction (bit j of the table's 256 has weight
 * 2^(31-j): the first word is the zeros above the binary point), enough
 * for the reduction of the largest float. */
static const uint32_t two_over_pi[8] = {
	0x00000000, 0xa2f9836e, 0x4e441529, 0xfc2757d1,
	0xf534ddc0, 0xdb629599, 0x3c439041, 0xfe5163ab,
};

static LLVMValueRef
i128c(Cg *cg, uint64_t hi, uint64_t lo)
{
	uint64_t w[2] = { lo, hi };

	return LLVMConstIntOfArbitraryPrecision(
		LLVMInt128TypeInContext(cg->C), 2, w);
}

/* Payne-Hanek: |x| = m * 2^(E-150) with m the 24-bit significand and E
 * the biased exponent (E >= 120 here), and x * 2/pi mod 4 is the low 96
 * bits of m times the 96 bits of 2/pi from bit E - 120 of the table on
 * (the bits before it make multiples of 4, the ones after it change the
 * result by less than 2^-70).  The top 64 of those 96 bits hold the
 * quadrant (2 bits) and the fraction; rounding to the nearest quadrant
 * makes the fraction signed, and fraction * pi/2 in f64 is the reduced
 * argument, |r| <= pi/4, rounded once to f32.  *q gets the quadrant; a
 * negative x negates both, an infinity gives NaN. */
static LLVMValueRef
reduce_big(Cg *cg, LLVMBuilderRef B, LLVMValueRef x, LLVMValueRef *q)
{
	LLVMTypeRef t128 = LLVMInt128TypeInContext(cg->C);
	LLVMValueRef bits, e, m, p0, idx, sh, w, v, prod, q64, s, quad, r, neg;
	int i;

	bits = LLVMBuildBitCast(B, x, cg->t_i32, "");
	e = LLVMBuildAnd(B, LLVMBuildLShr(B, bits, cg_i32(cg, 23), ""),
			 cg_i32(cg, 255), "");
	m = LLVMBuildOr(B, LLVMBuildAnd(B, bits, cg_i32(cg, 0x7fffff), ""),
			cg_i32(cg, 0x800000), "");
	p0 = LLVMBuildSub(B, e, cg_i32(cg, 120), "");
	p0 = LLVMBuildSelect(B, LLVMBuildICmp(B, LLVMIntSLT, p0, cg_i32(cg, 0), ""),
			     cg_i32(cg, 0), p0, "");
	idx = LLVMBuildLShr(B, p0, cg_i32(cg, 5), "");
	sh = LLVMBuildAnd(B, p0, cg_i32(cg, 31), "");
	/* the table's words idx .. idx+3 as one i128, by selects: no memory */
	w = i128c(cg, (uint64_t)two_over_pi[4] << 32 | two_over_pi[5],
		  (uint64_t)two_over_pi[6] << 32 | two_over_pi[7]);
	for (i = 3; i >= 0; i--) {
		LLVMValueRef c = i128c(
			cg, (uint64_t)two_over_pi[i] << 32 | two_over_pi[i + 1],
			(uint64_t)two_over_pi[i + 2] << 32 | two_over_pi[i + 3]);

		w = LLVMBuildSelect(B, LLVMBuildICmp(B, LLVMIntEQ, idx,
						     cg_i32(cg, (uint32_t)i), ""),
				    c, w, "");
	}
	v = LLVMBuildShl(B, w, LLVMBuildZExt(B, sh, t128, ""), "");
	v = LLVMBuildLShr(B, v, LLVMConstInt(t128, 32, 0), "");
	prod = LLVMBuildMul(B, v, LLVMBuildZExt(B, m, t128, ""), "");
	q64 = LLVMBuildTrunc(B, LLVMBuildLShr(B, prod, LLVMConstInt(t128, 32, 0), ""),
			     cg->t_i64, "");
	s = LLVMBuildShl(B, q64, LLVMConstInt(cg->t_i64, 2, 0), "");
	quad = LLVMBuildAdd(B, LLVMBuildLShr(B, q64, LLVMConstInt(cg->t_i64, 62, 0), ""),
			    LLVMBuildAnd(B, LLVMBuildLShr(B, q64, LLVMConstInt(cg->t_i64, 61, 0), ""),
					 LLVMConstInt(cg->t_i64, 1, 0), ""), "");
	quad = LLVMBuildTrunc(B, quad, cg->t_i32, "");
	r = LLVMBuildSIToFP(B, s, cg->t_f64, "");
	/* pi/2 * 2^-64 */
	r = LLVMBuildFMul(B, r, LLVMConstReal(cg->t_f64, 0x1.921fb54442d18p-64), "");
	r = LLVMBuildFPTrunc(B, r, cg->t_f32, "");
	neg = LLVMBuildICmp(B, LLVMIntSLT, bits, cg_i32(cg, 0), "");
	r = LLVMBuildSelect(B, neg, LLVMBuildFNeg(B, r, ""), r, "");
	quad = LLVMBuildSelect(B, neg, LLVMBuildNeg(B, quad, ""), quad, "");
	/* inf: NaN (x - x) */
	r = LLVMBuildSelect(B, LLVMBuildICmp(B, LLVMIntEQ, e, cg_i32(cg, 255), ""),
			    LLVMBuildFSub(B, x, x, ""), r, "");
	*q = quad;
	return r;
}

/* __tlx_trig_reduce_f32(x) -> {r, q}: reduce_big as a function of its
 * own, never inlined: it runs only for |x| >= 1e5 and infinities, and
 * inlined at every element of a tile it tripled the code of kernels made
 * of sin and cos. */
static LLVMValueRef
reduce_fn(Cg *cg)
{
	const char *name = "__tlx_trig_reduce_f32";
	LLVMValueRef F = LLVMGetNamedFunction(cg->M, name), r, q, ret;
	LLVMTypeRef st, ft;
	LLVMTypeRef el[2] = { cg->t_f32, cg->t_i32 };
	LLVMBuilderRef B;
	unsigned ni;

	if (F)
		return F;
	st = LLVMStructTypeInContext(cg->C, el, 2, 0);
	ft = LLVMFunctionType(st, &cg->t_f32, 1, 0);
	F = LLVMAddFunction(cg->M, name, ft);
	LLVMSetLinkage(F, LLVMInternalLinkage);
	ni = LLVMGetEnumAttributeKindForName("noinline", 8);
	LLVMAddAttributeAtIndex(F, LLVMAttributeFunctionIndex,
				LLVMCreateEnumAttribute(cg->C, ni, 0));
	B = LLVMCreateBuilderInContext(cg->C);
	LLVMPositionBuilderAtEnd(B, LLVMAppendBasicBlockInContext(cg->C, F, "entry"));
	r = reduce_big(cg, B, LLVMGetParam(F, 0), &q);
	ret = LLVMGetUndef(st);
	ret = LLVMBuildInsertValue(B, ret, r, 0, "");
	ret = LLVMBuildInsertValue(B, ret, q, 1, "");
	LLVMBuildRet(B, ret);
	LLVMDisposeBuilder(B);
	return F;
}

/* k = rint(x * 2/pi) and x - k pi/2 in three fmas (*r), k (*q): exact
 * enough below 1e5, where k * pi/2 needs at most 17 bits of k. */
static void
trig_reduce_small(CgFn *fn, LLVMValueRef x, LLVMValueRef *r, LLVMValueRef *q)
{
	Cg *cg = fn->cg;
	LLVMBuilderRef B = cg->B;
	LLVMValueRef k = call1(fn, "llvm.rint", true,
			       mul(fn, x, fc(cg, 0.6366197723675814)));
	LLVMValueRef nk = LLVMBuildFNeg(B, k, ""), v;

	v = fma3(fn, nk, fc(cg, 1.5707963705062866), x);
	v = fma3(fn, nk, fc(cg, -4.371138828673793e-08), v);
	v = fma3(fn, nk, fc(cg, -1.7151245100058819e-15), v);
	/* k = 0: x itself (the fmas make -0 into +0) */
	*r = LLVMBuildSelect(B, LLVMBuildFCmp(B, LLVMRealOEQ, k, fc(cg, 0), ""),
			     x, v, "");
	*q = LLVMBuildFPToSI(B, k, cg->t_i32, "");
}

/* sin (or cos) from the reduced argument r, |r| <= pi/4, and its
 * quadrant q: the Cephes polynomials and the quadrant's choice of sin or
 * cos and sign. */
static LLVMValueRef
trig_finish(CgFn *fn, LLVMValueRef r, LLVMValueRef q, bool is_cos)
{
	static const double sc[] = { -1.6666654611e-1, 8.3321608736e-3,
				     -1.9515295891e-4 };
	static const double cc[] = { 4.166664568298827e-2,
				     -1.388731625493765e-3,
				     2.443315711809948e-5 };
	Cg *cg = fn->cg;
	LLVMBuilderRef B = cg->B;
	LLVMValueRef z = mul(fn, r, r), s, c, swap, neg, res;

	s = fma3(fn, mul(fn, z, r), poly(fn, z, sc, 3), r);
	/* sin(-0) = -0, which the fma would make +0 */
	s = LLVMBuildSelect(B, LLVMBuildFCmp(B, LLVMRealOEQ, r, fc(cg, 0), ""),
			    r, s, "");
	c = fma3(fn, mul(fn, z, z), poly(fn, z, cc, 3),
		 fma3(fn, z, fc(cg, -0.5), fc(cg, 1)));
	if (is_cos)
		q = LLVMBuildAdd(B, q, cg_i32(cg, 1), "");
	swap = LLVMBuildTrunc(B, q, cg->t_i1, "");
	neg = LLVMBuildTrunc(B, LLVMBuildLShr(B, q, cg_i32(cg, 1), ""), cg->t_i1, "");
	res = LLVMBuildSelect(B, swap, c, s, "");
	return LLVMBuildSelect(B, neg, LLVMBuildFNeg(B, res, ""), res, "");
}

/* __tlx_sin_f32 and __tlx_cos_f32: k = rint(x * 2/pi) and a three-part
 * fma reduction below 1e5 (where k * pi/2 needs at most 17 bits of k),
 * Payne-Hanek above (a call of __tlx_trig_reduce_f32), then the Cephes
 * polynomials on
 * [-pi/4, pi/4] and the quadrant's choice of sin or cos and sign.
 * Always inlined above -O0; at -O0 they stay functions (the host test
 * of testsuite/codegen extracts them). */
static LLVMValueRef
trig_fn(Cg *cg, bool is_cos)
{
	const char *name = is_cos ? "__tlx_cos_f32" : "__tlx_sin_f32";
	LLVMValueRef F = LLVMGetNamedFunction(cg->M, name);
	LLVMTypeRef ft = LLVMFunctionType(cg->t_f32, &cg->t_f32, 1, 0);
	LLVMBuilderRef B, saved = cg->B;
	LLVMBasicBlockRef entry, fast, slow, join, from[2];
	LLVMValueRef x, ax, r, r2, q, q2, v[2], rf;
	CgFn tmp = { .cg = cg };

	if (F)
		return F;
	F = LLVMAddFunction(cg->M, name, ft);
	LLVMSetLinkage(F, LLVMInternalLinkage);
	if (cg->o->olevel > 0) {
		unsigned ai = LLVMGetEnumAttributeKindForName("alwaysinline", 12);

		LLVMAddAttributeAtIndex(F, LLVMAttributeFunctionIndex,
					LLVMCreateEnumAttribute(cg->C, ai, 0));
	}
	x = LLVMGetParam(F, 0);
	B = LLVMCreateBuilderInContext(cg->C);
	cg->B = B;
	entry = LLVMAppendBasicBlockInContext(cg->C, F, "entry");
	fast = LLVMAppendBasicBlockInContext(cg->C, F, "fast");
	slow = LLVMAppendBasicBlockInContext(cg->C, F, "slow");
	join = LLVMAppendBasicBlockInContext(cg->C, F, "join");
	LLVMPositionBuilderAtEnd(B, entry);
	ax = call1(&tmp, "llvm.fabs", true, x);
	/* infinities and NaNs take the slow path, which makes them NaN */
	LLVMBuildCondBr(B, LLVMBuildFCmp(B, LLVMRealUGE, ax, fc(cg, 1e5), ""),
			slow, fast);

	LLVMPositionBuilderAtEnd(B, fast);
	trig_reduce_small(&tmp, x, &r, &q);
	LLVMBuildBr(B, join);

	LLVMPositionBuilderAtEnd(B, slow);
	rf = reduce_fn(cg);
	r2 = LLVMBuildCall2(B, LLVMGlobalGetValueType(rf), rf, &x, 1, "");
	q2 = LLVMBuildExtractValue(B, r2, 1, "");
	r2 = LLVMBuildExtractValue(B, r2, 0, "");
	LLVMBuildBr(B, join);

	LLVMPositionBuilderAtEnd(B, join);
	from[0] = fast;
	from[1] = slow;
	v[0] = r;
	v[1] = r2;
	r = LLVMBuildPhi(B, cg->t_f32, "r");
	LLVMAddIncoming(r, v, from, 2);
	v[0] = q;
	v[1] = q2;
	q = LLVMBuildPhi(B, cg->t_i32, "q");
	LLVMAddIncoming(q, v, from, 2);
	LLVMBuildRet(B, trig_finish(&tmp, r, q, is_cos));
	LLVMDisposeBuilder(B);
	cg->B = saved;
	return F;
}

/* sin or cos of a thread's registers x[0 .. n) at once (those in dup are
 * copies): the small-argument reduction of every one inline, then, only
 * where one of them is at least 1e5 (or not finite), a loop over local
 * arrays that reduces those with __tlx_trig_reduce_f32 -- one call site
 * per tile instead of one per element (a tile of 128 sin and 128 cos a
 * thread took ptxas about 2 s with those), then the polynomials.  False
 * where the per-element functions stay (fast math, -O0: the host test's,
 * one register). */
bool
cg_trig_tile(CgFn *fn, OpKind k, Type *e, LLVMValueRef *x, uint32_t n,
	     uint32_t dup, LLVMValueRef *out)
{
	Cg *cg = fn->cg;
	LLVMBuilderRef B = cg->B;
	LLVMTypeRef at, i32 = cg->t_i32;
	LLVMValueRef *xs, *r, *q, *rs, *qs, any = NULL, big, arr[3], ix[2], xj, rf;
	LLVMValueRef rq, p, iv[2];
	LLVMTypeRef qt = LLVMArrayType2(i32, n);
	LLVMBasicBlockRef slow, join, call, next, from[2];
	CgLoop loop;
	uint32_t i;

	if ((k != OP_SIN && k != OP_COS) || cg->o->olevel == 0 ||
	    n < 2 || (e->kind != TY_F32 && e->kind != TY_F16 && e->kind != TY_BF16))
		return false;
	xs = arena_alloc(fn->a, 5 * n * sizeof *xs);
	r = xs + n;
	q = r + n;
	rs = q + n;   /* the slow path's r and q */
	qs = rs + n;
	for (i = 0; i < n; i++) {
		if (i & dup)
			continue;
		xs[i] = cg_widen(fn, e, x[i]);
		big = LLVMBuildFCmp(B, LLVMRealUGE, call1(fn, "llvm.fabs", true, xs[i]),
				    fc(cg, 1e5), "");
		any = any ? LLVMBuildOr(B, any, big, "") : big;
		trig_reduce_small(fn, xs[i], &r[i], &q[i]);
	}
	slow = cg_new_block(fn, "trig.big");
	join = cg_new_block(fn, "trig.join");
	from[0] = LLVMGetInsertBlock(B);
	LLVMBuildCondBr(B, any, slow, join);
	LLVMPositionBuilderAtEnd(B, slow);
	at = LLVMArrayType2(cg->t_f32, n);
	arr[0] = LLVMBuildAlloca(fn->Balloca, at, "trig.x");
	arr[1] = LLVMBuildAlloca(fn->Balloca, at, "trig.r");
	arr[2] = LLVMBuildAlloca(fn->Balloca, qt, "trig.q");
	ix[0] = cg_i32(cg, 0);
	for (i = 0; i < n; i++) {
		if (i & dup)
			continue;
		ix[1] = cg_i32(cg, i);
		LLVMBuildStore(B, xs[i], LLVMBuildGEP2(B, at, arr[0], ix, 2, ""));
		LLVMBuildStore(B, r[i], LLVMBuildGEP2(B, at, arr[1], ix, 2, ""));
		LLVMBuildStore(B, q[i], LLVMBuildGEP2(B, qt, arr[2], ix, 2, ""));
	}
	ix[1] = cg_loop_begin(fn, &loop, "trig");
	xj = LLVMBuildLoad2(B, cg->t_f32, LLVMBuildGEP2(B, at, arr[0], ix, 2, ""), "");
	call = cg_new_block(fn, "trig.call");
	next = cg_new_block(fn, "trig.next");
	LLVMBuildCondBr(B, LLVMBuildFCmp(B, LLVMRealUGE, call1(fn, "llvm.fabs", true, xj),
					 fc(cg, 1e5), ""), call, next);
	LLVMPositionBuilderAtEnd(B, call);
	rf = reduce_fn(cg);
	p = LLVMBuildCall2(B, LLVMGlobalGetValueType(rf), rf, &xj, 1, "");
	rq = LLVMBuildExtractValue(B, p, 1, "");
	p = LLVMBuildExtractValue(B, p, 0, "");
	LLVMBuildStore(B, p, LLVMBuildGEP2(B, at, arr[1], ix, 2, ""));
	LLVMBuildStore(B, rq, LLVMBuildGEP2(B, qt, arr[2], ix, 2, ""));
	LLVMBuildBr(B, next);
	LLVMPositionBuilderAtEnd(B, next);
	cg_loop_end(fn, &loop, n);
	from[1] = LLVMGetInsertBlock(B);
	for (i = 0; i < n; i++) {
		if (i & dup)
			continue;
		ix[1] = cg_i32(cg, i);
		rs[i] = LLVMBuildLoad2(B, cg->t_f32, LLVMBuildGEP2(B, at, arr[1], ix, 2, ""),
				       "");
		qs[i] = LLVMBuildLoad2(B, i32, LLVMBuildGEP2(B, qt, arr[2], ix, 2, ""), "");
	}
	LLVMBuildBr(B, join);
	LLVMPositionBuilderAtEnd(B, join);
	for (i = 0; i < n; i++) {
		if (i & dup)
			continue;
		iv[0] = r[i];
		iv[1] = rs[i];
		r[i] = LLVMBuildPhi(B, cg->t_f32, "");
		LLVMAddIncoming(r[i], iv, from, 2);
		iv[0] = q[i];
		iv[1] = qs[i];
		q[i] = LLVMBuildPhi(B, i32, "");
		LLVMAddIncoming(q[i], iv, from, 2);
	}
	for (i = 0; i < n; i++)
		if (!(i & dup))
			out[i] = cg_narrow(fn, e, trig_finish(fn, r[i], q[i], k == OP_COS));
	for (i = 0; i < n; i++)
		if (i & dup)
			out[i] = out[i & ~dup];
	return true;
}

static LLVMValueRef
sincos(CgFn *fn, LLVMValueRef x, bool is_cos)
{
	LLVMValueRef F = trig_fn(fn->cg, is_cos);

	return LLVMBuildCall2(fn->cg->B, LLVMGlobalGetValueType(F), F, &x, 1, "");
}

static LLVMValueRef
tanh_acc(CgFn *fn, LLVMValueRef x)
{
	Cg *cg = fn->cg;
	LLVMBuilderRef B = cg->B;
	static const double c[] = { 1.0, -0.3333333333333333,
		0.13333333333333333, -0.05396825396825397, 0.021869488536155203,
		-0.008863235529902197, 0.003592128036572481,
		-0.0014558343870513183, 0.000590027440945586 };
	LLVMTypeRef t = cg->t_f32;
	LLVMValueRef a = cg_intr(cg, "llvm.fabs", &t, 1, &x, 1), small, big, e;

	small = mul(fn, x, poly(fn, mul(fn, x, x), c, 9));
	e = exp_core(fn, add(fn, a, a), false);
	big = LLVMBuildFSub(B, fc(cg, 1), LLVMBuildFDiv(B, fc(cg, 2),
			    add(fn, e, fc(cg, 1)), ""), "");
	{
		LLVMValueRef args[2] = { big, x };

		big = cg_intr(cg, "llvm.copysign", &t, 1, args, 2);
	}
	return LLVMBuildSelect(B, LLVMBuildFCmp(B, LLVMRealOLT, a, fc(cg, 0.55), ""),
			       small, big, "");
}

/* erf: below 1, x + x C(x^2); from 1, 1 - 2^Q(a) with a = |x| clamped
 * to 4 (where erf is 1 in f32; a NaN stays NaN) and the sign of x.  C
 * and Q are fits (tools/fit/erf.py): <= 2 ulp in f32 arithmetic with
 * ex2.approx.ftz's error.  Both pieces, about 25 instructions. */
static LLVMValueRef
erf_acc(CgFn *fn, LLVMValueRef x)
{
	Cg *cg = fn->cg;
	LLVMBuilderRef B = cg->B;
	static const double ca[] = { 0.128379166, -0.37612626, 0.112836003,
		-0.0268544443, 0.00518953521, -0.000802083872, 7.88910911e-05 };
	static const double cb[] = { 0.000419874006, -1.63041818, -0.91180259,
		-0.158566281, 0.037982624, -0.00682062423, 0.000851485704,
		-6.53516108e-05, 2.30806427e-06 };
	LLVMTypeRef t = cg->t_f32;
	LLVMValueRef a = cg_intr(cg, "llvm.fabs", &t, 1, &x, 1), small, big, args[2];

	small = fma3(fn, x, poly(fn, mul(fn, x, x), ca, 7), x);
	big = LLVMBuildSelect(B, LLVMBuildFCmp(B, LLVMRealOGT, a, fc(cg, 4), ""),
			      fc(cg, 4), a, "");
	big = call1(fn, "llvm.nvvm.ex2.approx.ftz", true, poly(fn, big, cb, 9));
	args[0] = LLVMBuildFSub(B, fc(cg, 1), big, "");
	args[1] = x;
	big = cg_intr(cg, "llvm.copysign", &t, 1, args, 2);
	return LLVMBuildSelect(B, LLVMBuildFCmp(B, LLVMRealOLT, a, fc(cg, 1), ""),
			       small, big, "");
}

/* sigmoid: with e = exp(-|x|), which cannot overflow, 1 / (1 + e) from
 * 0 and e / (1 + e) below: below -87 the result is subnormal, where
 * 1 / (1 + exp(-x)) would divide by an exp that overflowed to inf. */
static LLVMValueRef
sigmoid_acc(CgFn *fn, LLVMValueRef x)
{
	Cg *cg = fn->cg;
	LLVMBuilderRef B = cg->B;
	LLVMTypeRef t = cg->t_f32;
	LLVMValueRef a = cg_intr(cg, "llvm.fabs", &t, 1, &x, 1), e, num;

	e = exp_core(fn, LLVMBuildFNeg(B, a, ""), false);
	num = LLVMBuildSelect(B, LLVMBuildFCmp(B, LLVMRealOLT, x, fc(cg, 0), ""),
			      e, fc(cg, 1), "");
	return LLVMBuildFDiv(B, num, add(fn, fc(cg, 1), e), "");
}

static LLVMValueRef
fast(CgFn *fn, OpKind k, LLVMValueRef x)
{
	Cg *cg = fn->cg;

	switch (k) {
	case OP_EXP: return ex2(fn, mul(fn, x, fc(cg, 1.4426950408889634)));
	case OP_EXP2: return ex2(fn, x);
	case OP_LOG: return mul(fn, call1(fn, "llvm.nvvm.lg2.approx.f", false, x),
				fc(cg, 0.6931471805599453));
	case OP_LOG2: return call1(fn, "llvm.nvvm.lg2.approx.f", false, x);
	case OP_RSQRT: return call1(fn, "llvm.nvvm.rsqrt.approx.f", false, x);
	case OP_SQRT: return call1(fn, "llvm.nvvm.sqrt.approx.f", false, x);
	case OP_SIN: return call1(fn, "llvm.nvvm.sin.approx.f", false, x);
	case OP_COS: return call1(fn, "llvm.nvvm.cos.approx.f", false, x);
	case OP_TANH:
		return cg_asm(cg, cg->t_f32, "tanh.approx.f32 $0, $1;", "=f,f",
			      &x, 1, false, false);
	default: return NULL;
	}
}

static LLVMValueRef
acc32(CgFn *fn, OpKind k, LLVMValueRef x)
{
	switch (k) {
	case OP_EXP: return exp_core(fn, x, false);
	case OP_EXP2: return exp_core(fn, x, true);
	case OP_LOG: return log_core(fn, x, false);
	case OP_LOG2: return log_core(fn, x, true);
	case OP_SIN: return sincos(fn, x, false);
	case OP_COS: return sincos(fn, x, true);
	case OP_TANH: return tanh_acc(fn, x);
	case OP_ERF: return erf_acc(fn, x);
	case OP_SIGMOID:
		return sigmoid_acc(fn, x);
	default: return NULL;
	}
}

bool
cg_math_supported(CgFn *fn, Op *op)
{
	Type *e;

	if (!op_has(op, F_MATH) || op->nres != 1)
		return true;
	e = ty_elem(ir_type(fn->f, op->res[0]));
	if (e->kind != TY_F64)
		return true;
	return op->kind == OP_SQRT || op->kind == OP_RSQRT ||
	       op->kind == OP_FLOOR || op->kind == OP_CEIL;
}

bool
cg_approx(CgFn *fn, Op *op)
{
	return op_has(op, F_MATH) &&
	       (fn->cg->o->fast_math || attr_int(&op->attrs, "approx", 0));
}

LLVMValueRef
cg_math(CgFn *fn, OpKind k, Type *e, bool approx, LLVMValueRef x)
{
	Cg *cg = fn->cg;
	LLVMValueRef r = NULL;
	LLVMTypeRef t;

	x = cg_widen(fn, e, x);
	t = LLVMTypeOf(x);
	switch (k) {
	case OP_SQRT:
		if (approx && e->kind != TY_F64)
			r = fast(fn, k, x);
		else
			r = cg_intr(cg, "llvm.sqrt", &t, 1, &x, 1);
		break;
	case OP_RSQRT:
		if (approx && e->kind != TY_F64)
			r = fast(fn, k, x);
		else
			r = LLVMBuildFDiv(cg->B, LLVMConstReal(t, 1),
					  cg_intr(cg, "llvm.sqrt", &t, 1, &x, 1), "");
		break;
	case OP_FLOOR:
		r = cg_intr(cg, "llvm.floor", &t, 1, &x, 1);
		break;
	case OP_CEIL:
		r = cg_intr(cg, "llvm.ceil", &t, 1, &x, 1);
		break;
	default:
		if (approx)
			r = fast(fn, k, x);
		if (!r)
			r = acc32(fn, k, x);
		break;
	}
	if (NEVER(!r))
		r = x;
	return cg_narrow(fn, e, r);
}
