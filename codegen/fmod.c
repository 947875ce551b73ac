/*
 * fmod.c: the float remainder `rem`, exact (C's fmod, as the simulator and
 * constant folding compute it): the result is x - n*y for the integer n
 * of x/y truncated, which is representable, with x's sign (a zero too).
 * NVPTX lowers LLVM's frem as x - trunc(x/y)*y, which gives +0 for a
 * negative x that y divides, and loses the result outright once x/y
 * needs more bits than the type has.
 *
 * It is one internal function per type, __tlx_fmod_f32 and
 * __tlx_fmod_f64 (f16 and bf16 go through f32, exact for them), on the
 * integer significands: x = mx * 2^ex, y = my * 2^ey (subnormals with
 * exponent 1 and no hidden bit), r = mx mod my, then while ex > ey,
 * r = (r << s) mod my in u64 with s up to 40 bits for f32 (r < 2^24) and
 * 11 for f64 (r < 2^53), and r * 2^ey is the result, scaled in two exact
 * steps.  NaN when y is 0, x infinite or either a NaN; x when |x| < |y|.
 */
#include "config.h"

#include "codegen/cg.h"

typedef struct Fmt {
	LLVMTypeRef ft, it;  /* the float type, the integer of its width */
	int bits, mant, bias, step;
} Fmt;

static LLVMValueRef
ic(Fmt *f, uint64_t v)
{
	return LLVMConstInt(f->it, v, 0);
}

/* 2^k for k in the normal range, as f's float */
static LLVMValueRef
pow2(LLVMBuilderRef B, Fmt *f, LLVMValueRef k)
{
	LLVMValueRef e = LLVMBuildAdd(B, k, ic(f, (uint64_t)f->bias), "");

	return LLVMBuildBitCast(B, LLVMBuildShl(B, e, ic(f, (uint64_t)f->mant),
						""), f->ft, "");
}

/* The significand of a (|x| as an integer) in u64 and its exponent,
 * at least 1 (subnormals have no hidden bit). */
static void
split(Cg *cg, LLVMBuilderRef B, Fmt *f, LLVMValueRef a, LLVMValueRef *m,
      LLVMValueRef *e)
{
	uint64_t hid = 1ull << f->mant;
	LLVMValueRef ex = LLVMBuildLShr(B, a, ic(f, (uint64_t)f->mant), "");
	LLVMValueRef sub = LLVMBuildICmp(B, LLVMIntEQ, ex, ic(f, 0), "");
	LLVMValueRef mm = LLVMBuildOr(B, LLVMBuildAnd(B, a, ic(f, hid - 1), ""),
				      ic(f, hid), "");

	mm = LLVMBuildSelect(B, sub, a, mm, "");
	*m = f->bits == 64 ? mm : LLVMBuildZExt(B, mm, cg->t_i64, "");
	*e = LLVMBuildSelect(B, sub, ic(f, 1), ex, "");
}

static LLVMValueRef
build(Cg *cg, Fmt *f, const char *name)
{
	LLVMTypeRef pt[2] = { f->ft, f->ft };
	LLVMValueRef F = LLVMAddFunction(cg->M, name,
					 LLVMFunctionType(f->ft, pt, 2, 0));
	LLVMBuilderRef B = LLVMCreateBuilderInContext(cg->C);
	LLVMBasicBlockRef entry, nan, small, main, loop, body, scale, done;
	LLVMValueRef x = LLVMGetParam(F, 0), y = LLVMGetParam(F, 1);
	LLVMValueRef xi, yi, sign, ax, ay, inf, bad, mx, my, ex, ey, d0, r0;
	LLVMValueRef r, d, s, r1, d1, k, k1, res, out, v[2];
	LLVMBasicBlockRef bb[2];
	uint64_t sbit = 1ull << (f->bits - 1);

	LLVMSetLinkage(F, LLVMInternalLinkage);
	entry = LLVMAppendBasicBlockInContext(cg->C, F, "entry");
	nan = LLVMAppendBasicBlockInContext(cg->C, F, "nan");
	small = LLVMAppendBasicBlockInContext(cg->C, F, "small");
	main = LLVMAppendBasicBlockInContext(cg->C, F, "main");
	loop = LLVMAppendBasicBlockInContext(cg->C, F, "loop");
	body = LLVMAppendBasicBlockInContext(cg->C, F, "body");
	scale = LLVMAppendBasicBlockInContext(cg->C, F, "scale");
	done = LLVMAppendBasicBlockInContext(cg->C, F, "done");

	LLVMPositionBuilderAtEnd(B, entry);
	xi = LLVMBuildBitCast(B, x, f->it, "");
	yi = LLVMBuildBitCast(B, y, f->it, "");
	sign = LLVMBuildAnd(B, xi, ic(f, sbit), "");
	ax = LLVMBuildAnd(B, xi, ic(f, sbit - 1), "");
	ay = LLVMBuildAnd(B, yi, ic(f, sbit - 1), "");
	inf = ic(f, (uint64_t)(2 * f->bias + 1) << f->mant);
	bad = LLVMBuildOr(B, LLVMBuildICmp(B, LLVMIntEQ, ay, ic(f, 0), ""),
			  LLVMBuildOr(B, LLVMBuildICmp(B, LLVMIntUGE, ax, inf, ""),
				      LLVMBuildICmp(B, LLVMIntUGT, ay, inf, ""), ""),
			  "");
	LLVMBuildCondBr(B, bad, nan, small);

	LLVMPositionBuilderAtEnd(B, nan);
	LLVMBuildRet(B, LLVMBuildBitCast(B, LLVMBuildOr(B, inf, ic(f, 1ull <<
		     (f->mant - 1)), ""), f->ft, ""));

	/* |x| < |y| (x a zero, y infinite): x itself */
	LLVMPositionBuilderAtEnd(B, small);
	LLVMBuildCondBr(B, LLVMBuildICmp(B, LLVMIntULT, ax, ay, ""), done, main);

	LLVMPositionBuilderAtEnd(B, main);
	split(cg, B, f, ax, &mx, &ex);
	split(cg, B, f, ay, &my, &ey);
	r0 = LLVMBuildURem(B, mx, my, "");
	d0 = LLVMBuildSub(B, ex, ey, "");
	LLVMBuildBr(B, loop);

	LLVMPositionBuilderAtEnd(B, loop);
	r = LLVMBuildPhi(B, cg->t_i64, "r");
	d = LLVMBuildPhi(B, f->it, "d");
	LLVMBuildCondBr(B, LLVMBuildICmp(B, LLVMIntSGT, d, ic(f, 0), ""), body,
			scale);

	LLVMPositionBuilderAtEnd(B, body);
	s = LLVMBuildSelect(B, LLVMBuildICmp(B, LLVMIntSGT, d,
					     ic(f, (uint64_t)f->step), ""),
			    ic(f, (uint64_t)f->step), d, "");
	r1 = LLVMBuildURem(B, LLVMBuildShl(B, r, f->bits == 64 ? s :
					   LLVMBuildZExt(B, s, cg->t_i64, ""),
					   ""), my, "");
	d1 = LLVMBuildSub(B, d, s, "");
	LLVMBuildBr(B, loop);
	v[0] = r0, v[1] = r1, bb[0] = main, bb[1] = body;
	LLVMAddIncoming(r, v, bb, 2);
	v[0] = d0, v[1] = d1;
	LLVMAddIncoming(d, v, bb, 2);

	/* r * 2^(ey - bias - mant), exact: r < 2^(mant+1) converts exactly,
	 * and 2^k1 (k1 >= 1 - bias) then 2^(k - k1) (k - k1 >= -mant) are
	 * normal factors whose products are representable */
	LLVMPositionBuilderAtEnd(B, scale);
	k = LLVMBuildSub(B, ey, ic(f, (uint64_t)(f->bias + f->mant)), "");
	k1 = LLVMBuildSelect(B, LLVMBuildICmp(B, LLVMIntSLT, k,
					      ic(f, (uint64_t)(1 - f->bias)), ""),
			     ic(f, (uint64_t)(1 - f->bias)), k, "");
	res = LLVMBuildUIToFP(B, r, f->ft, "");
	res = LLVMBuildFMul(B, res, pow2(B, f, k1), "");
	res = LLVMBuildFMul(B, res, pow2(B, f, LLVMBuildSub(B, k, k1, "")), "");
	res = LLVMBuildOr(B, LLVMBuildBitCast(B, res, f->it, ""), sign, "");
	res = LLVMBuildBitCast(B, res, f->ft, "");
	LLVMBuildBr(B, done);

	LLVMPositionBuilderAtEnd(B, done);
	out = LLVMBuildPhi(B, f->ft, "");
	v[0] = x, v[1] = res, bb[0] = small, bb[1] = scale;
	LLVMAddIncoming(out, v, bb, 2);
	LLVMBuildRet(B, out);
	LLVMDisposeBuilder(B);
	return F;
}

LLVMValueRef
cg_fmod(CgFn *fn, LLVMValueRef a, LLVMValueRef b)
{
	Cg *cg = fn->cg;
	bool d = LLVMTypeOf(a) == cg->t_f64;
	const char *name = d ? "__tlx_fmod_f64" : "__tlx_fmod_f32";
	LLVMValueRef F = LLVMGetNamedFunction(cg->M, name), args[2] = { a, b };
	Fmt f;

	if (!F) {
		if (d)
			f = (Fmt){ cg->t_f64, cg->t_i64, 64, 52, 1023, 11 };
		else
			f = (Fmt){ cg->t_f32, cg->t_i32, 32, 23, 127, 40 };
		F = build(cg, &f, name);
	}
	return LLVMBuildCall2(cg->B, LLVMGlobalGetValueType(F), F, args, 2, "");
}
