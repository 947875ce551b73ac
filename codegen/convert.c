/*
 * convert.c: cvt and bitcast.
 *
 * Rounding is exact as docs/il.md says, on every target:
 *   - int -> int extends by the source's signedness or truncates;
 *   - any -> i1 is != 0 (NaN gives true);
 *   - float -> int truncates and saturates, NaN -> 0 (llvm.fptosi.sat);
 *   - narrowing float conversions round to nearest even once: f32 -> f16
 *     and bf16 are cvt.rn; a source wider than f32 (f64, or an integer
 *     that does not fit 24 bits) is first rounded to f32 *to odd*
 *     (round toward zero, then the sticky bit into the last place), which
 *     makes the second rounding exact because f32 keeps more than p + 1
 *     bits of every narrower format;
 *   - fp8: e4m3 saturates to +-448 and keeps NaN; e5m2 overflows to
 *     +-inf.  sm_90a and sm_100a use cvt.rn.satfinite.{e4m3,e5m2}x2.f32
 *     (fixing up e5m2's overflow, which the instruction saturates) and
 *     cvt.rn.f16x2.e4m3x2; sm_80 has no fp8 instructions and uses the
 *     integer encodings below.  e5m2 -> f16 is exact by shifting the
 *     bits (e5m2 is the high byte of an f16).
 */
#include "config.h"

#include "codegen/cg.h"

static bool
is_f8(TypeKind k)
{
	return k == TY_F8E4M3 || k == TY_F8E5M2;
}

static LLVMValueRef
i32c(Cg *cg, int64_t v)
{
	return cg_i32(cg, v);
}

/* f32 bits of x rounded to odd from a wider exact value: `rz` is the
 * round-toward-zero f32, `exact` says whether it was exact. */
static LLVMValueRef
round_odd(Cg *cg, LLVMValueRef rz, LLVMValueRef exact)
{
	LLVMValueRef b = LLVMBuildBitCast(cg->B, rz, cg->t_i32, "");
	LLVMValueRef sticky = LLVMBuildZExt(cg->B, LLVMBuildNot(cg->B, exact, ""),
					    cg->t_i32, "");

	b = LLVMBuildOr(cg->B, b, sticky, "");
	return LLVMBuildBitCast(cg->B, b, cg->t_f32, "");
}

static LLVMValueRef
intr(Cg *cg, const char *name, LLVMValueRef x)
{
	return cg_intr(cg, name, NULL, 0, &x, 1);
}

/* Any numeric value as an f32 that rounds correctly to any format with
 * fewer than 23 fraction bits (exact when it fits, else rounded to odd). */
static LLVMValueRef
to_f32_odd(CgFn *fn, Type *from, LLVMValueRef v)
{
	Cg *cg = fn->cg;
	TypeKind k = from->kind;
	bool u = ty_is_unsigned_kind(k) || k == TY_I1;
	LLVMValueRef rz, back, exact;

	switch (k) {
	case TY_F32:
		return v;
	case TY_F16: case TY_BF16:
		return LLVMBuildFPExt(cg->B, v, cg->t_f32, "");
	case TY_F8E4M3: case TY_F8E5M2:
		return cg_cvt(fn, ty_scalar(fn->f->mod->ctx, TY_F32), from, v);
	case TY_F64:
		rz = intr(cg, "llvm.nvvm.d2f.rz", v);
		back = LLVMBuildFPExt(cg->B, rz, cg->t_f64, "");
		exact = LLVMBuildFCmp(cg->B, LLVMRealUEQ, back, v, "");
		/* inf and NaN: keep them as they are */
		return LLVMBuildSelect(cg->B, exact, rz, round_odd(cg, rz, exact),
				       "");
	default:
		if (ty_bits(from) < 64) {
			v = u ? LLVMBuildZExt(cg->B, v, cg->t_i64, "")
			      : LLVMBuildSExt(cg->B, v, cg->t_i64, "");
		}
		rz = intr(cg, u ? "llvm.nvvm.ull2f.rz" : "llvm.nvvm.ll2f.rz", v);
		back = u ? LLVMBuildFPToUI(cg->B, rz, cg->t_i64, "")
			 : LLVMBuildFPToSI(cg->B, rz, cg->t_i64, "");
		exact = LLVMBuildICmp(cg->B, LLVMIntEQ, back, v, "");
		return round_odd(cg, rz, exact);
	}
}

/* ---- fp8 ------------------------------------------------------------------ */

/* f32 -> e4m3/e5m2 bits with integer arithmetic (sm_80). */
static LLVMValueRef
f8_encode_soft(CgFn *fn, bool e4, LLVMValueRef x)
{
	Cg *cg = fn->cg;
	LLVMBuilderRef B = cg->B;
	int mb = e4 ? 3 : 2, bias = e4 ? 7 : 15, sh = 23 - mb;
	int64_t maxcode = e4 ? 0x7e : 0x7b, nan = e4 ? 0x7f : 0x7e;
	double minnorm = e4 ? 0x1p-6 : 0x1p-14, subscale = e4 ? 512.0 : 65536.0;
	LLVMValueRef bits = LLVMBuildBitCast(B, x, cg->t_i32, "");
	LLVMValueRef sign = LLVMBuildAnd(B, LLVMBuildLShr(B, bits, i32c(cg, 24), ""),
					 i32c(cg, 0x80), "");
	LLVMValueRef mag = LLVMBuildAnd(B, bits, i32c(cg, 0x7fffffff), "");
	LLVMValueRef a = LLVMBuildBitCast(B, mag, cg->t_f32, "");
	LLVMValueRef odd, r, norm, sub, code;
	LLVMTypeRef t = cg->t_f32;

	/* normals: round the fraction to mb bits, ties to even */
	odd = LLVMBuildAnd(B, LLVMBuildLShr(B, mag, i32c(cg, sh), ""),
			   i32c(cg, 1), "");
	r = LLVMBuildAdd(B, mag, LLVMBuildAdd(B, i32c(cg, (1 << (sh - 1)) - 1),
					      odd, ""), "");
	norm = LLVMBuildSub(B, LLVMBuildLShr(B, r, i32c(cg, sh), ""),
			    i32c(cg, (127 - bias) << mb), "");
	/* subnormals: multiples of the smallest subnormal */
	sub = LLVMBuildFMul(B, a, LLVMConstReal(t, subscale), "");
	sub = cg_intr(cg, "llvm.rint", &t, 1, &sub, 1);
	sub = LLVMBuildFPToSI(B, sub, cg->t_i32, "");
	code = LLVMBuildSelect(B, LLVMBuildFCmp(B, LLVMRealOLT, a,
						LLVMConstReal(t, minnorm), ""),
			       sub, norm, "");
	/* overflow: e4m3 saturates, e5m2 goes to inf (code 0x7c) */
	code = LLVMBuildSelect(B, LLVMBuildICmp(B, LLVMIntSGT, code,
						i32c(cg, maxcode), ""),
			       i32c(cg, e4 ? maxcode : 0x7c), code, "");
	code = LLVMBuildSelect(B, LLVMBuildFCmp(B, LLVMRealUNO, a, a, ""),
			       i32c(cg, nan), code, "");
	code = LLVMBuildOr(B, code, sign, "");
	return LLVMBuildTrunc(B, code, cg->t_i8, "");
}

/* f32 -> fp8 with cvt.rn.satfinite.*x2.f32 (sm_89+). */
static LLVMValueRef
f8_encode_hw(CgFn *fn, bool e4, LLVMValueRef x)
{
	Cg *cg = fn->cg;
	LLVMBuilderRef B = cg->B;
	LLVMValueRef args[2] = { LLVMConstReal(cg->t_f32, 0), x }, r, a, ovf;

	r = cg_intr(cg, e4 ? "llvm.nvvm.ff.to.e4m3x2.rn"
			   : "llvm.nvvm.ff.to.e5m2x2.rn", NULL, 0, args, 2);
	r = LLVMBuildTrunc(B, r, cg->t_i8, "");
	if (e4)
		return r;
	/* e5m2 rounds to inf from 61440 up; the instruction saturates */
	{
		LLVMTypeRef t = cg->t_f32;

		a = cg_intr(cg, "llvm.fabs", &t, 1, &x, 1);
	}
	ovf = LLVMBuildFCmp(B, LLVMRealOGE, a, LLVMConstReal(cg->t_f32, 61440.0), "");
	return LLVMBuildSelect(B, ovf, LLVMBuildOr(B, LLVMBuildAnd(B, r,
				LLVMConstInt(cg->t_i8, 0x80, 0), ""),
				LLVMConstInt(cg->t_i8, 0x7c, 0), ""), r, "");
}

/* fp8 bits -> f16 (exact). */
static LLVMValueRef
f8_to_f16(CgFn *fn, bool e4, LLVMValueRef b)
{
	Cg *cg = fn->cg;
	LLVMBuilderRef B = cg->B;
	LLVMValueRef w = LLVMBuildZExt(B, b, cg->t_i16, ""), h, bits, e, m, sign;

	if (!e4) {
		w = LLVMBuildShl(B, w, LLVMConstInt(cg->t_i16, 8, 0), "");
		return LLVMBuildBitCast(B, w, cg->t_f16, "");
	}
	if (target_has(cg->t, TF_CVT_FP8)) {
		h = cg_intr(cg, "llvm.nvvm.e4m3x2.to.f16x2.rn", NULL, 0, &w, 1);
		return LLVMBuildExtractElement(B, h, cg_i32(cg, 0), "");
	}
	/* e4m3 (bias 7) -> f16 (bias 15): normals shift the exponent by 8;
	 * subnormals m * 2^-9 are f16 normals; 0x7f/0xff is NaN */
	sign = LLVMBuildShl(B, LLVMBuildAnd(B, w, LLVMConstInt(cg->t_i16, 0x80, 0), ""),
			    LLVMConstInt(cg->t_i16, 8, 0), "");
	e = LLVMBuildAnd(B, LLVMBuildLShr(B, w, LLVMConstInt(cg->t_i16, 3, 0), ""),
			 LLVMConstInt(cg->t_i16, 15, 0), "");
	m = LLVMBuildAnd(B, w, LLVMConstInt(cg->t_i16, 7, 0), "");
	bits = LLVMBuildOr(B, LLVMBuildShl(B, LLVMBuildAdd(B, e,
			   LLVMConstInt(cg->t_i16, 8, 0), ""),
			   LLVMConstInt(cg->t_i16, 10, 0), ""),
			   LLVMBuildShl(B, m, LLVMConstInt(cg->t_i16, 7, 0), ""), "");
	h = LLVMBuildFMul(B, LLVMBuildUIToFP(B, m, cg->t_f16, ""),
			  LLVMConstReal(cg->t_f16, 0x1p-9), "");
	h = LLVMBuildBitCast(B, h, cg->t_i16, "");
	bits = LLVMBuildSelect(B, LLVMBuildICmp(B, LLVMIntEQ, e,
			       LLVMConstInt(cg->t_i16, 0, 0), ""), h, bits, "");
	bits = LLVMBuildSelect(B, LLVMBuildICmp(B, LLVMIntEQ,
			       LLVMBuildAnd(B, w, LLVMConstInt(cg->t_i16, 0x7f, 0), ""),
			       LLVMConstInt(cg->t_i16, 0x7f, 0), ""),
			       LLVMConstInt(cg->t_i16, 0x7e00, 0), bits, "");
	bits = LLVMBuildOr(B, bits, sign, "");
	return LLVMBuildBitCast(B, bits, cg->t_f16, "");
}

/* ---- cvt -------------------------------------------------------------------- */

static LLVMValueRef
to_bool(CgFn *fn, Type *from, LLVMValueRef v)
{
	LLVMBuilderRef B = fn->cg->B;

	if (is_f8(from->kind)) {
		v = LLVMBuildAnd(B, v, LLVMConstInt(fn->cg->t_i8, 0x7f, 0), "");
	} else if (from->kind == TY_F16 || from->kind == TY_BF16) {
		/* a 16-bit float is true unless it is +-0, on its bits: NVPTX
		 * cannot select the compare LLVM makes of a bf16 seen as f16 */
		v = LLVMBuildBitCast(B, v, fn->cg->t_i16, "");
		v = LLVMBuildAnd(B, v, LLVMConstInt(fn->cg->t_i16, 0x7fff, 0), "");
	} else if (ty_is_float_kind(from->kind))
		return LLVMBuildFCmp(B, LLVMRealUNE, v,
				     LLVMConstReal(LLVMTypeOf(v), 0), "");
	return LLVMBuildICmp(B, LLVMIntNE, v, LLVMConstNull(LLVMTypeOf(v)), "");
}

static LLVMValueRef
float_to_int(CgFn *fn, Type *to, Type *from, LLVMValueRef v)
{
	Cg *cg = fn->cg;
	LLVMTypeRef ot[2];

	if (is_f8(from->kind))
		v = cg_cvt(fn, ty_scalar(fn->f->mod->ctx, TY_F32), from, v);
	else
		v = cg_widen(fn, from, v);
	ot[0] = cg_type(cg, to);
	ot[1] = LLVMTypeOf(v);
	return cg_intr(cg, ty_is_unsigned_kind(to->kind) ? "llvm.fptoui.sat"
			   : "llvm.fptosi.sat", ot, 2, &v, 1);
}

LLVMValueRef
cg_cvt(CgFn *fn, Type *to, Type *from, LLVMValueRef v)
{
	Cg *cg = fn->cg;
	LLVMBuilderRef B = cg->B;
	LLVMTypeRef lt;
	bool fu;

	to = ty_elem(to);
	from = ty_elem(from);
	fu = ty_is_unsigned_kind(from->kind) || from->kind == TY_I1;
	lt = cg_type(cg, to);
	if (to == from)
		return v;
	if (to->kind == TY_I1)
		return to_bool(fn, from, v);
	if (ty_is_int_kind(to->kind) && ty_is_int_kind(from->kind)) {
		if (ty_bits(to) < ty_bits(from))
			return LLVMBuildTrunc(B, v, lt, "");
		if (ty_bits(to) == ty_bits(from))
			return v;
		return fu ? LLVMBuildZExt(B, v, lt, "") : LLVMBuildSExt(B, v, lt, "");
	}
	if (ty_is_int_kind(to->kind))
		return float_to_int(fn, to, from, v);
	if (is_f8(from->kind)) {  /* fp8 -> float: exact through f16 */
		v = f8_to_f16(fn, from->kind == TY_F8E4M3, v);
		if (to->kind == TY_F16)
			return v;
		v = LLVMBuildFPExt(B, v, cg->t_f32, "");
		return to->kind == TY_F32 ? v : cg_cvt(fn, to,
			ty_scalar(fn->f->mod->ctx, TY_F32), v);
	}
	if (is_f8(to->kind)) {
		v = to_f32_odd(fn, from, v);
		return target_has(cg->t, TF_CVT_FP8)
			? f8_encode_hw(fn, to->kind == TY_F8E4M3, v)
			: f8_encode_soft(fn, to->kind == TY_F8E4M3, v);
	}
	if (ty_is_int_kind(from->kind)) {
		if (to->kind == TY_F64 || (to->kind == TY_F32 && ty_bits(from) <= 32))
			return fu ? LLVMBuildUIToFP(B, v, lt, "")
				  : LLVMBuildSIToFP(B, v, lt, "");
		if (to->kind == TY_F32)
			return fu ? LLVMBuildUIToFP(B, v, lt, "")
				  : LLVMBuildSIToFP(B, v, lt, "");
		return LLVMBuildFPTrunc(B, to_f32_odd(fn, from, v), lt, "");
	}
	/* float -> float */
	if (ty_bits(to) > ty_bits(from) ||
	    (to->kind == TY_F32 && from->kind != TY_F64))
		return LLVMBuildFPExt(B, cg_widen(fn, from, v), lt, "");
	if (to->kind == TY_F32)  /* f64 -> f32 */
		return LLVMBuildFPTrunc(B, v, lt, "");
	return LLVMBuildFPTrunc(B, to_f32_odd(fn, from, v), lt, "");
}

static LLVMValueRef
bitcast(CgFn *fn, Type *to, Type *from, LLVMValueRef v)
{
	Cg *cg = fn->cg;
	LLVMTypeRef lt = cg_type(cg, to);

	to = ty_elem(to);
	from = ty_elem(from);
	if (to->kind == TY_PTR && from->kind != TY_PTR)
		return LLVMBuildIntToPtr(cg->B, v, lt, "");
	if (from->kind == TY_PTR && to->kind != TY_PTR)
		return LLVMBuildPtrToInt(cg->B, v, lt, "");
	if (LLVMTypeOf(v) == lt)
		return v;
	if ((to->kind == TY_F16 && from->kind == TY_BF16) ||
	    (to->kind == TY_BF16 && from->kind == TY_F16)) {
		/* through an opaque move of the bits: LLVM folds the two
		 * types together and its instruction selection then fails on
		 * what the fold leaves (a compare with zero of a bf16 bitcast
		 * to f16 became "and bf16, 0x7fff") */
		v = LLVMBuildBitCast(cg->B, v, cg->t_i16, "");
		v = cg_asm(cg, cg->t_i16, "mov.b16 $0, $1;", "=h,h", &v, 1,
			   false, false);
	}
	return LLVMBuildBitCast(cg->B, v, lt, "");
}

static LLVMValueRef
one(CgFn *fn, Op *op, LLVMValueRef v)
{
	Type *to = ir_type(fn->f, op->res[0]), *from = ir_type(fn->f, op->opnds[0]);

	if (op->kind == OP_BITCAST)
		return bitcast(fn, to, from, v);
	return cg_cvt(fn, to, from, v);
}

LLVMValueRef
cg_convert_one(CgFn *fn, Op *op, LLVMValueRef x)
{
	return one(fn, op, x);
}

LLVMValueRef *
cg_convert_compute(CgFn *fn, Op *op, const Layout *ly)
{
	LLVMValueRef *in = cg_tile(fn, op->opnds[0], ly), *r = cg_regs(fn, ly);
	uint32_t dup = ly_dup_mask(ly), i;

	for (i = 0; i < (uint32_t)ly_nregs(ly); i++)
		r[i] = (i & dup) ? r[i & ~dup] : one(fn, op, in[i]);
	return r;
}

bool
cg_convert_op(CgFn *fn, Op *op)
{
	Value res = op->res[0];

	if (!cg_is_tile(fn, res)) {
		fn->vals[res].v = one(fn, op, cg_scalar(fn, op->opnds[0]));
		return true;
	}
	cg_set_tile(fn, res, fn->vals[res].home,
		    cg_convert_compute(fn, op, fn->vals[res].home));
	return true;
}
