/*
 * llvm.c: the LLVM side of code generation -- the NVPTX target machine
 * (cpu and PTX version from the target table), the module, intrinsic
 * declarations (always through LLVMLookupIntrinsicID, never by hand),
 * inline PTX, and the O3 pipeline plus PTX emission.  Also cg_compile,
 * the entry point of codegen/.
 */
#include "config.h"

#include <ctype.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <llvm-c/Core.h>
#include <llvm-c/Error.h>
#include <llvm-c/Support.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include "codegen/cg.h"

static const char triple[] = "nvptx64-nvidia-cuda";
static pthread_once_t init_once = PTHREAD_ONCE_INIT;

/* Once per process.  32-bit pointers for shared memory (as Triton does):
 * the data layout gets p3:32, so smem address arithmetic is 32-bit.
 * Three of NVPTX's IR passes are off: straight-line strength reduction,
 * n-ary reassociation and speculative execution changed no instruction
 * of any example's PTX and took 15% of the matmul's LLVM time (the first
 * alone 40% of the 4-warp softmax's, scanning its candidates against
 * each other through SCEV's poison analysis).  Loop strength reduction
 * is off too: it changes a line or two of each example's PTX, LLVM's
 * part of the matmul is 3% shorter and ptxas's 1% without it, and the
 * kernels ran at the same speed on the H200 (A/B, bench/RESULTS.md,
 * session 6). */
static void
init_targets(void)
{
	const char *argv[16] = {
		"tlx", "-nvptx-short-ptr",
		"-opt-disable=slsr,nary-reassociate,speculative-execution",
		"-disable-lsr",
	};
	char *extra = getenv("TLX_LLVM_OPTS"), *save = NULL, *w;
	int argc = 0;

	while (argv[argc])
		argc++;

	/* TLX_LLVM_OPTS: more of LLVM's own options, for experiments
	 * (-time-passes, -debug-pass-manager, ...) */
	if (extra && (extra = strdup(extra)) != NULL)
		for (w = strtok_r(extra, " ", &save); w && argc < 16;
		     w = strtok_r(NULL, " ", &save))
			argv[argc++] = w;
	LLVMParseCommandLineOptions(argc, argv, "");
	LLVMInitializeNVPTXTargetInfo();
	LLVMInitializeNVPTXTarget();
	LLVMInitializeNVPTXTargetMC();
	LLVMInitializeNVPTXAsmPrinter();
}

void
cg_error(Cg *cg, SrcLoc loc, const char *fmt, ...)
{
	va_list ap;

	cg->failed = true;
	va_start(ap, fmt);
	diag_report(cg->d, DIAG_ERROR, range_at(loc), loc.line > 0, fmt, ap);
	va_end(ap);
}

void
cg_unsupported(Cg *cg, Op *op, const char *what)
{
	cg_error(cg, op->loc, "'%s' is not supported for %s yet",
		 what ? what : op_name(op->kind), cg->t->name);
}

static LLVMCodeGenOptLevel
cg_level(int olevel)
{
	switch (olevel) {
	case 0: return LLVMCodeGenLevelNone;
	case 1: return LLVMCodeGenLevelLess;
	case 2: return LLVMCodeGenLevelDefault;
	default: return LLVMCodeGenLevelAggressive;
	}
}

bool
cg_llvm_init(Cg *cg)
{
	LLVMTargetRef T;
	LLVMTargetMachineOptionsRef O;
	LLVMTargetDataRef dl;
	char *err = NULL, feat[32];

	pthread_once(&init_once, init_targets);
	if (LLVMGetTargetFromTriple(triple, &T, &err)) {
		diag_error_noloc(cg->d, "LLVM has no NVPTX target: %s",
				 err ? err : "?");
		LLVMDisposeMessage(err);
		return false;
	}
	snprintf(feat, sizeof feat, "+ptx%d", cg->t->ptx);
	O = LLVMCreateTargetMachineOptions();
	LLVMTargetMachineOptionsSetCPU(O, cg->t->name);
	LLVMTargetMachineOptionsSetFeatures(O, feat);
	LLVMTargetMachineOptionsSetCodeGenOptLevel(O, cg_level(cg->o->olevel));
	cg->TM = LLVMCreateTargetMachineWithOptions(T, triple, O);
	LLVMDisposeTargetMachineOptions(O);
	if (!cg->TM) {
		diag_error_noloc(cg->d, "cannot create the NVPTX target "
				 "machine for %s", cg->t->name);
		return false;
	}
	cg->C = LLVMContextCreate();
	cg->M = LLVMModuleCreateWithNameInContext("tlx", cg->C);
	LLVMSetTarget(cg->M, triple);
	dl = LLVMCreateTargetDataLayout(cg->TM);
	LLVMSetModuleDataLayout(cg->M, dl);
	LLVMDisposeTargetData(dl);
	cg->B = LLVMCreateBuilderInContext(cg->C);
	cg->t_void = LLVMVoidTypeInContext(cg->C);
	cg->t_i1 = LLVMInt1TypeInContext(cg->C);
	cg->t_i8 = LLVMInt8TypeInContext(cg->C);
	cg->t_i16 = LLVMInt16TypeInContext(cg->C);
	cg->t_i32 = LLVMInt32TypeInContext(cg->C);
	cg->t_i64 = LLVMInt64TypeInContext(cg->C);
	cg->t_f16 = LLVMHalfTypeInContext(cg->C);
	cg->t_bf16 = LLVMBFloatTypeInContext(cg->C);
	cg->t_f32 = LLVMFloatTypeInContext(cg->C);
	cg->t_f64 = LLVMDoubleTypeInContext(cg->C);
	cg->t_ptr = LLVMPointerTypeInContext(cg->C, 0);
	cg->t_gptr = LLVMPointerTypeInContext(cg->C, 1);
	cg->t_sptr = LLVMPointerTypeInContext(cg->C, 3);
	return true;
}

/* The builder of entry-block allocas of a kernel (which 0) or a task (1):
 * one per compilation, positioned by each user. */
LLVMBuilderRef
cg_entry_builder(Cg *cg, int which)
{
	if (!cg->Bentries[which])
		cg->Bentries[which] = LLVMCreateBuilderInContext(cg->C);
	return cg->Bentries[which];
}

void
cg_llvm_dispose(Cg *cg)
{
	int i;

	for (i = 0; i < 2; i++) {
		if (cg->Bentries[i])
			LLVMDisposeBuilder(cg->Bentries[i]);
		cg->Bentries[i] = NULL;
		buf_free(&cg->text[i]);
	}
	if (cg->llvm_str)
		LLVMDisposeMessage(cg->llvm_str);
	if (cg->llvm_mb)
		LLVMDisposeMemoryBuffer(cg->llvm_mb);
	cg->llvm_str = NULL;
	cg->llvm_mb = NULL;
	if (cg->dib)
		LLVMDisposeDIBuilder(cg->dib);
	if (cg->B)
		LLVMDisposeBuilder(cg->B);
	if (cg->M)
		LLVMDisposeModule(cg->M);
	if (cg->C)
		LLVMContextDispose(cg->C);
	if (cg->TM)
		LLVMDisposeTargetMachine(cg->TM);
}

LLVMTypeRef
cg_type(Cg *cg, Type *t)
{
	t = ty_elem(t);
	switch (t->kind) {
	case TY_I1: return cg->t_i1;
	case TY_I8: case TY_U8: case TY_F8E4M3: case TY_F8E5M2:
		return cg->t_i8;
	case TY_I16: case TY_U16: return cg->t_i16;
	case TY_I32: case TY_U32: return cg->t_i32;
	case TY_I64: case TY_U64: return cg->t_i64;
	case TY_F16: return cg->t_f16;
	case TY_BF16: return cg->t_bf16;
	case TY_F32: return cg->t_f32;
	case TY_F64: return cg->t_f64;
	case TY_PTR: return t->as == AS_SHARED ? cg->t_sptr : cg->t_gptr;
	default: return cg->t_i32;
	}
}

LLVMValueRef
cg_i32(Cg *cg, int64_t v)
{
	return LLVMConstInt(cg->t_i32, (unsigned long long)v, 1);
}

LLVMValueRef
cg_i64(Cg *cg, int64_t v)
{
	return LLVMConstInt(cg->t_i64, (unsigned long long)v, 1);
}

/* The scalar constant of attribute `a` (an int or float) in type t. */
LLVMValueRef
cg_const(Cg *cg, Type *t, const Attr *a)
{
	Type *e = ty_elem(t);
	double f = 0;
	int64_t i = 0;

	if (a && a->kind == ATTR_FLOAT) {
		/* only an integer type reads i: a float constant there (none
		 * after the verifier) converts with saturation, never UB */
		f = a->f;
		i = f64_to_i64_sat(f);
	} else if (a && a->kind == ATTR_INT) {
		i = a->i;
		f = (double)a->i;
	}
	switch (e->kind) {
	case TY_F16: case TY_BF16: case TY_F32: case TY_F64:
		return LLVMConstReal(cg_type(cg, e), f);
	case TY_F8E4M3: case TY_F8E5M2:
		/* storage types, held as their bits: the attribute's value
		 * rounded to them (as the simulator does; -0.0 is 0x80) */
		return LLVMConstInt(cg->t_i8, ir_float_to_bits(e->kind, f), 0);
	case TY_PTR:
		return LLVMConstNull(cg_type(cg, e));
	default:
		return LLVMConstInt(cg_type(cg, e), (unsigned long long)i, 1);
	}
}

LLVMValueRef
cg_intr(Cg *cg, const char *name, LLVMTypeRef *ovl, int novl,
	LLVMValueRef *args, int nargs)
{
	unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
	LLVMValueRef fn;
	LLVMTypeRef fty;

	if (!id)
		tlx_bug("LLVM 22 has no intrinsic '%s'", name);
	if (LLVMIntrinsicIsOverloaded(id) != (novl > 0))
		tlx_bug("intrinsic '%s' is %soverloaded", name,
			novl > 0 ? "not " : "");
	fn = LLVMGetIntrinsicDeclaration(cg->M, id, ovl, (size_t)novl);
	fty = LLVMIntrinsicGetType(cg->C, id, ovl, (size_t)novl);
	if (LLVMCountParamTypes(fty) != (unsigned)nargs)
		tlx_bug("intrinsic '%s' takes %u operands, not %d", name,
			LLVMCountParamTypes(fty), nargs);
	return LLVMBuildCall2(cg->B, fty, fn, args, (unsigned)nargs, "");
}

LLVMValueRef
cg_asm(Cg *cg, LLVMTypeRef rty, const char *text, const char *cons,
       LLVMValueRef *args, int nargs, bool side, bool conv)
{
	LLVMTypeRef *at = arena_alloc(&cg->arena, (size_t)MAX(nargs, 1) * sizeof *at);
	LLVMTypeRef fty;
	LLVMValueRef ia, call;
	int i;

	for (i = 0; i < nargs; i++)
		at[i] = LLVMTypeOf(args[i]);
	fty = LLVMFunctionType(rty, at, (unsigned)nargs, 0);
	ia = LLVMGetInlineAsm(fty, text, strlen(text), cons, strlen(cons),
			      side, 0, LLVMInlineAsmDialectATT, 0);
	call = LLVMBuildCall2(cg->B, fty, ia, args, (unsigned)nargs, "");
	if (conv) {
		unsigned k = LLVMGetEnumAttributeKindForName("convergent", 10);

		LLVMAddCallSiteAttribute(call, LLVMAttributeFunctionIndex,
					 LLVMCreateEnumAttribute(cg->C, k, 0));
	}
	return call;
}

LLVMValueRef
cg_printf(Cg *cg, LLVMBuilderRef Balloca, const char *fmt, LLVMValueRef *args,
	  int nargs)
{
	LLVMTypeRef *ft = arena_alloc(&cg->arena, (size_t)(nargs + 1) * sizeof *ft);
	LLVMTypeRef st, pt[2] = { cg->t_ptr, cg->t_ptr };
	LLVMTypeRef vt = LLVMFunctionType(cg->t_i32, pt, 2, 0);
	LLVMValueRef vp = LLVMGetNamedFunction(cg->M, "vprintf"), f, g, buf;
	LLVMValueRef call[2];
	size_t n = strlen(fmt) + 1;
	int i;

	if (!vp)
		vp = LLVMAddFunction(cg->M, "vprintf", vt);
	f = LLVMConstStringInContext2(cg->C, fmt, n - 1, 0);
	g = LLVMAddGlobalInAddressSpace(cg->M, LLVMTypeOf(f), "tlx.fmt", 1);
	LLVMSetInitializer(g, f);
	LLVMSetGlobalConstant(g, 1);
	LLVMSetLinkage(g, LLVMPrivateLinkage);
	for (i = 0; i < nargs; i++)
		ft[i] = LLVMTypeOf(args[i]);
	st = LLVMStructTypeInContext(cg->C, ft, (unsigned)nargs, 0);
	buf = LLVMBuildAlloca(Balloca, st, "printf.args");
	for (i = 0; i < nargs; i++)
		LLVMBuildStore(cg->B, args[i],
			       LLVMBuildStructGEP2(cg->B, st, buf, (unsigned)i, ""));
	call[0] = LLVMBuildAddrSpaceCast(cg->B, g, cg->t_ptr, "");
	call[1] = buf;
	return LLVMBuildCall2(cg->B, vt, vp, call, 2, "");
}

static LLVMValueRef
const_str(Cg *cg, const char *s)
{
	LLVMValueRef f = LLVMConstStringInContext2(cg->C, s, strlen(s), 0), g;

	g = LLVMAddGlobalInAddressSpace(cg->M, LLVMTypeOf(f), "tlx.str", 1);
	LLVMSetInitializer(g, f);
	LLVMSetGlobalConstant(g, 1);
	LLVMSetLinkage(g, LLVMPrivateLinkage);
	return LLVMBuildAddrSpaceCast(cg->B, g, cg->t_ptr, "");
}

/* A failed device assertion: the CUDA driver prints msg, file, line and
 * function, flushes printf's buffer, and fails the launch with
 * CUDA_ERROR_ASSERT. */
void
cg_assertfail(Cg *cg, const char *msg, const char *file, int line,
	      const char *func)
{
	LLVMTypeRef pt[5] = { cg->t_ptr, cg->t_ptr, cg->t_i32, cg->t_ptr, cg->t_i64 };
	LLVMTypeRef ft = LLVMFunctionType(LLVMVoidTypeInContext(cg->C), pt, 5, 0);
	LLVMValueRef af = LLVMGetNamedFunction(cg->M, "__assertfail"), a[5];

	if (!af)
		af = LLVMAddFunction(cg->M, "__assertfail", ft);
	a[0] = const_str(cg, msg);
	a[1] = const_str(cg, file);
	a[2] = cg_i32(cg, line);
	a[3] = const_str(cg, func);
	a[4] = cg_i64(cg, 1);
	LLVMBuildCall2(cg->B, ft, af, a, 5, "");
}

double
cg_now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* TLX_CG_TIME=1 prints the time of each phase to stderr. */
static void
phase(Cg *cg, const char *name)
{
	double now;

	if (!cg->timing)
		return;
	now = cg_now_ms();
	if (name)
		fprintf(stderr, "codegen: %-10s %8.1f ms\n", name, now - cg->t0);
	cg->t0 = now;
}

/*
 * LLVM's part of the optimization.  The tile IR arrives already folded,
 * CSE'd and hoisted by our passes, and lowering emits straight-line code
 * whose redundancy is local (a layout's index arithmetic repeated per
 * register, constants in the bits of lane and warp).  A short function
 * pipeline removes it: the inlining of codegen's alwaysinline helpers
 * (sin and cos), SROA, early CSE, instcombine, LICM for the address
 * arithmetic of loops, GVN and a second instcombine, ADCE and CFG
 * cleanup.  LLVM's default<O3> runs instcombine eight times and took
 * three times as long (matmul: 61 ms against 21 here) for PTX a few
 * percent larger and the same speed on the H200 (bench/RESULTS.md); DSE
 * cost 9 ms and removed nothing.  -O1 drops GVN and the second
 * instcombine.  TLX_LLVM_PASSES (a pipeline in opt's syntax) replaces
 * these, for experiments.
 */
static const char *const pipelines[3] = {  /* -O0, -O1, -O2 and -O3 */
	"function(verify)",
	"always-inline,function(sroa,early-cse,instcombine<no-verify-fixpoint>,"
	"simplifycfg,loop-mssa(licm),early-cse,adce)",
	"always-inline,function(sroa,early-cse,instcombine<no-verify-fixpoint>,"
	"simplifycfg,loop-mssa(licm),gvn,instcombine<no-verify-fixpoint>,"
	"adce,simplifycfg)",
};

static bool
optimize(Cg *cg)
{
	LLVMPassBuilderOptionsRef po = LLVMCreatePassBuilderOptions();
	const char *pipe = getenv("TLX_LLVM_PASSES");
	LLVMErrorRef e;

	if (!pipe || !*pipe)
		pipe = pipelines[cg->o->olevel < 0 ? 0 : cg->o->olevel > 2 ? 2
				 : cg->o->olevel];
	e = LLVMRunPasses(cg->M, pipe, cg->TM, po);
	LLVMDisposePassBuilderOptions(po);
	if (e) {
		char *msg = LLVMGetErrorMessage(e);

		diag_error_noloc(cg->d, "LLVM passes '%s': %s", pipe, msg);
		LLVMDisposeErrorMessage(msg);
		return false;
	}
	return true;
}

/* -x of i32 or i64 as ~x + 1, in an asm: ptxas (CUDA 13.0, -O1 and up)
 * loses negations that feed max.s32: in a max reduction of 64 negated
 * values it negated 48 with IMAD.MOV and gave the other 16 to its
 * 3-input VIMNMX3 as they were loaded, on both paths into the block
 * (gen_gpu seed 78529, testsuite/gpu/gen/max-neg-78529.tlx); not.b32 and
 * add.s32 compile as written. */
static LLVMValueRef
neg_asm(LLVMBuilderRef B, LLVMValueRef x)
{
	static const char *const text[2] = {
		"not.b32 $0, $1;\n\tadd.s32 $0, $0, 1;",
		"not.b64 $0, $1;\n\tadd.s64 $0, $0, 1;",
	};
	static const char *const cons[2] = { "=r,r", "=l,l" };
	LLVMTypeRef t = LLVMTypeOf(x), fty = LLVMFunctionType(t, &t, 1, 0);
	int k = LLVMGetIntTypeWidth(t) == 64;

	return LLVMBuildCall2(B, fty, LLVMGetInlineAsm(fty, text[k],
			      strlen(text[k]), cons[k], strlen(cons[k]), 0, 0,
			      LLVMInlineAsmDialectATT, 0), &x, 1, "");
}

/*
 * ptxas (CUDA 13.0) is wrong at the edges of integer negation and
 * absolute value.  It computes neg.s16 and abs.s16 on the sign-extended
 * 32-bit register and keeps the result as if it were still a
 * sign-extended 16-bit value: -(-32768) and abs(-32768) are +32768 where
 * a cvt.s32.s16 (which it drops) or a setp.s16 reads them (gen_gpu seeds
 * 70658, 71653, 72253; a shr.s16 of it too).  It also takes abs.s32 and
 * abs.s64 to be nonnegative: rem.s32 of abs(INT_MIN) loses the dividend's
 * sign (seeds 72121, 72842) and abs(x) < 0 folds to false.  So, once
 * LLVM's passes are done (they would fold any rewrite back), each i16
 * `sub 0, x` and each llvm.abs of i16, i32 or i64 becomes an asm that
 * ptxas compiles as written: the i16 ones in 32 bits, truncated by a
 * cvt.u16.u32, the wider abs as x itself where x is the minimum.  i8
 * goes the same way, sign-extended to i16 and truncated back: LLVM
 * computes a negation of i8 that is sign-extended next as neg.s16 of x <<
 * 8 shifted back by shr.s16, and ptxas gave -(-128) as +128 there (gen_gpu
 * seed 80340, on an H100 and on the H200).  (Probed on an H100 with ptxas
 * 13.0.88: add.s16, sub.s16 from a nonzero constant, mul.lo.s16, shl.b16,
 * neg.s32 and div.s32 of abs.s32 were right; testsuite/codegen/int-edges.tlx.)
 */
static LLVMValueRef
edge_asm(LLVMBuilderRef B, LLVMValueRef x, bool neg)
{
	static const char *const text[4] = {
		"{\n\t.reg .b32 t;\n\tcvt.s32.s16 t, $1;\n\tneg.s32 t, t;"
		"\n\tcvt.u16.u32 $0, t;\n\t}",
		"{\n\t.reg .b32 t;\n\tcvt.s32.s16 t, $1;\n\tabs.s32 t, t;"
		"\n\tcvt.u16.u32 $0, t;\n\t}",
		"{\n\t.reg .pred p;\n\t.reg .b32 t;\n\tsetp.eq.s32 p, $1, "
		"-2147483648;\n\tabs.s32 t, $1;\n\tselp.b32 $0, $1, t, p;\n\t}",
		"{\n\t.reg .pred p;\n\t.reg .b64 t;\n\tsetp.eq.s64 p, $1, "
		"-9223372036854775808;\n\tabs.s64 t, $1;\n\tselp.b64 $0, $1, t, "
		"p;\n\t}",
	};
	static const char *const cons[4] = { "=h,h", "=h,h", "=r,r", "=l,l" };
	LLVMTypeRef t = LLVMTypeOf(x), fty = LLVMFunctionType(t, &t, 1, 0);
	unsigned w = LLVMGetIntTypeWidth(t);
	int k = w == 16 ? (neg ? 0 : 1) : w == 32 ? 2 : 3;

	return LLVMBuildCall2(B, fty, LLVMGetInlineAsm(fty, text[k],
			      strlen(text[k]), cons[k], strlen(cons[k]), 0, 0,
			      LLVMInlineAsmDialectATT, 0), &x, 1, "");
}

/* edge_asm for i8 too, through i16, and neg_asm for a negation of i32
 * or i64. */
static LLVMValueRef
edge_value(LLVMBuilderRef B, LLVMValueRef x, bool neg)
{
	LLVMTypeRef t = LLVMTypeOf(x);
	LLVMValueRef w;

	if (neg && LLVMGetIntTypeWidth(t) >= 32)
		return neg_asm(B, x);
	if (LLVMGetIntTypeWidth(t) != 8)
		return edge_asm(B, x, neg);
	w = LLVMBuildSExt(B, x, LLVMInt16TypeInContext(LLVMGetTypeContext(t)), "");
	return LLVMBuildTrunc(B, edge_asm(B, w, neg), t, "");
}

static bool feeds_min_max(LLVMValueRef I);

/* log2(-c) where I is `mul x, c` with a constant c that is minus a power
 * of two (NVPTX makes it a shift and a neg) of i8 or i16, or of i32 or
 * i64 that feeds an integer min or max (gen_gpu seed 601711: -8 * x into
 * a min reduction lost its negation as 78529's -x did), else -1; *x the
 * other operand. */
static int
neg_pow2_mul(LLVMValueRef I, LLVMValueRef *x)
{
	LLVMTypeRef t = LLVMTypeOf(I);
	unsigned w;

	if (LLVMGetInstructionOpcode(I) != LLVMMul ||
	    LLVMGetTypeKind(t) != LLVMIntegerTypeKind)
		return -1;
	w = LLVMGetIntTypeWidth(t);
	if (w != 8 && w != 16 && !((w == 32 || w == 64) && feeds_min_max(I)))
		return -1;
	for (int i = 0; i < 2; i++) {
		LLVMValueRef c = LLVMGetOperand(I, (unsigned)i);
		long long v;
		unsigned long long m;  /* -v */

		if (!LLVMIsAConstantInt(c) || (v = LLVMConstIntGetSExtValue(c)) >= 0)
			continue;
		m = 0 - (unsigned long long)v;
		if (!(m & (m - 1))) {
			*x = LLVMGetOperand(I, (unsigned)(1 - i));
			return __builtin_ctzll(m);
		}
	}
	return -1;
}

/* Whether I is a call of a function whose name begins with prefix (an
 * intrinsic: "llvm.abs."). */
static bool
calls(LLVMValueRef I, const char *prefix)
{
	LLVMValueRef f;
	const char *name;
	size_t len, n = strlen(prefix);

	if (!LLVMIsACallInst(I) || !(f = LLVMGetCalledValue(I)) ||
	    !LLVMIsAFunction(f))
		return false;
	name = LLVMGetValueName2(f, &len);
	return len > n && !strncmp(name, prefix, n);
}

/* Whether a user of I is an integer min or max (llvm.smax, smin, umax,
 * umin). */
static bool
feeds_min_max(LLVMValueRef I)
{
	static const char *const mm[4] = { "llvm.smax.", "llvm.smin.",
					   "llvm.umax.", "llvm.umin." };
	LLVMUseRef u;

	for (u = LLVMGetFirstUse(I); u; u = LLVMGetNextUse(u))
		for (int i = 0; i < 4; i++)
			if (calls(LLVMGetUser(u), mm[i]))
				return true;
	return false;
}

/* Which edge I is: 1 a negation of i8 or i16, or of i32 or i64 that
 * feeds an integer min or max, 2 an abs of i8, i16, i32
 * or i64 (a vector of them too), else 0. */
static int
edge_kind(LLVMValueRef I)
{
	LLVMTypeRef t = LLVMTypeOf(I), et = t;
	unsigned w;

	if (LLVMGetTypeKind(t) == LLVMVectorTypeKind)
		et = LLVMGetElementType(t);
	if (LLVMGetTypeKind(et) != LLVMIntegerTypeKind)
		return 0;
	w = LLVMGetIntTypeWidth(et);
	if (LLVMGetInstructionOpcode(I) == LLVMSub && (w == 8 || w == 16) &&
	    LLVMIsNull(LLVMGetOperand(I, 0)))
		return 1;
	if (LLVMGetInstructionOpcode(I) == LLVMSub && (w == 32 || w == 64) &&
	    LLVMIsNull(LLVMGetOperand(I, 0)) && feeds_min_max(I))
		return 1;
	return (w == 8 || w == 16 || w == 32 || w == 64) &&
	       calls(I, "llvm.abs.") ? 2 : 0;
}

static void
int_edges(Cg *cg)
{
	LLVMBuilderRef B = LLVMCreateBuilderInContext(cg->C);
	LLVMValueRef F, I, next, x, r;
	LLVMBasicBlockRef bb;
	unsigned i, n;
	int k;

	for (F = LLVMGetFirstFunction(cg->M); F; F = LLVMGetNextFunction(F))
		for (bb = LLVMGetFirstBasicBlock(F); bb;
		     bb = LLVMGetNextBasicBlock(bb))
			for (I = LLVMGetFirstInstruction(bb); I; I = next) {
				int sh;

				next = LLVMGetNextInstruction(I);
				if ((sh = neg_pow2_mul(I, &x)) >= 0) {
					/* x * -2^k: -(x << k) */
					LLVMPositionBuilderBefore(B, I);
					r = LLVMBuildShl(B, x, LLVMConstInt(LLVMTypeOf(x),
							 (unsigned long long)sh, 0), "");
					r = edge_value(B, r, true);
					LLVMReplaceAllUsesWith(I, r);
					LLVMInstructionEraseFromParent(I);
					continue;
				}
				if (!(k = edge_kind(I)))
					continue;
				x = LLVMGetOperand(I, k == 1 ? 1 : 0);
				LLVMPositionBuilderBefore(B, I);
				if (LLVMGetTypeKind(LLVMTypeOf(I)) != LLVMVectorTypeKind) {
					r = edge_value(B, x, k == 1);
				} else {
					r = LLVMGetUndef(LLVMTypeOf(I));
					n = LLVMGetVectorSize(LLVMTypeOf(I));
					for (i = 0; i < n; i++) {
						LLVMValueRef j = LLVMConstInt(cg->t_i32, i, 0);

						r = LLVMBuildInsertElement(B, r, edge_value(B,
							LLVMBuildExtractElement(B, x, j, ""),
							k == 1), j, "");
					}
				}
				LLVMReplaceAllUsesWith(I, r);
				LLVMInstructionEraseFromParent(I);
			}
	LLVMDisposeBuilder(B);
}

bool
cg_llvm_emit(Cg *cg, char **text, size_t *len)
{
	LLVMMemoryBufferRef mb;
	char *err = NULL;

	if (LLVMVerifyModule(cg->M, LLVMReturnStatusAction, &err)) {
		diag_error_noloc(cg->d, "internal error: the LLVM module does "
				 "not verify: %s", err ? err : "?");
		LLVMDisposeMessage(err);
		return false;
	}
	LLVMDisposeMessage(err);
	phase(cg, "lower");
	if (!optimize(cg))
		return false;
	int_edges(cg);
	phase(cg, "optimize");
	if (cg->o->emit == CG_EMIT_LLVM) {
		cg->llvm_str = LLVMPrintModuleToString(cg->M);
		*len = strlen(cg->llvm_str);
		*text = arena_dup(&cg->arena, cg->llvm_str, *len + 1);
		LLVMDisposeMessage(cg->llvm_str);
		cg->llvm_str = NULL;
		return true;
	}
	if (LLVMTargetMachineEmitToMemoryBuffer(cg->TM, cg->M, LLVMAssemblyFile,
						&err, &mb)) {
		diag_error_noloc(cg->d, "internal error: NVPTX code generation: "
				 "%s", err ? err : "?");
		LLVMDisposeMessage(err);
		return false;
	}
	cg->llvm_mb = mb;
	*len = LLVMGetBufferSize(mb);
	*text = arena_alloc(&cg->arena, *len + 1);
	memcpy(*text, LLVMGetBufferStart(mb), *len);
	LLVMDisposeMemoryBuffer(mb);
	cg->llvm_mb = NULL;
	phase(cg, "ptx");
	return true;
}

/*
 * The generic entries of specialized kernels (kernel.c) are lowered,
 * optimized and emitted on a thread of their own, in an LLVM context of
 * their own, while the calling thread does the rest; ptxas then compiles
 * the two entries of each kernel in parallel too (--split-compile).  The
 * matmul's LLVM part and its assembly each take about as long as the
 * fast entry's alone (bench/RESULTS.md).  Its errors go to a Diag of its
 * own and are reported only when the other thread reported none (they
 * are the same checks).
 */
typedef struct GenJob {
	Cg cg;
	CgPrep *preps;
	uint32_t n;
	Diag d;
	Arena darena;
	char *text;
	size_t len;
	bool ok;
	double ms;
} GenJob;

static bool
lower_generic(Cg *cg, CgPrep *preps, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		if (preps[i].fast &&
		    !cg_lower_kernel(cg, &preps[i], CG_ENTRY_GENERIC))
			return false;
	return true;
}

static void *
gen_main(void *arg)
{
	GenJob *g = arg;
	Cg *cg = &g->cg;
	double t0 = cg_now_ms();

	g->ok = cg_llvm_init(cg);
	if (g->ok) {
		cg_debug_init(cg);
		g->ok = lower_generic(cg, g->preps, g->n) && !cg->failed;
	}
	if (g->ok) {
		cg_debug_finish(cg);
		g->ok = cg_llvm_emit(cg, &g->text, &g->len);
	}
	g->ms = cg_now_ms() - t0;
	return NULL;
}

static void
report(Diag *d, DiagKind k, SrcRange r, bool has_loc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	diag_report(d, k, r, has_loc, fmt, ap);
	va_end(ap);
}

/* The name of the function a PTX line declares or defines (".func
 * (.param ...) NAME" or "...NAME("), through *n; NULL for other lines. */
static const char *
func_name(const char *w, const char *e, size_t *n)
{
	const char *q;

	if (!strncmp(w, ".visible ", 9))
		w += 9;
	else if (!strncmp(w, ".weak ", 6))
		w += 6;
	if (strncmp(w, ".func", 5))
		return NULL;
	while (e > w && (e[-1] == '\n' || e[-1] == ' ' || e[-1] == '\t' ||
			 e[-1] == '('))
		e--;
	for (q = e; q > w && (isalnum((unsigned char)q[-1]) || q[-1] == '_' ||
			      q[-1] == '$' || q[-1] == '.'); q--)
		;
	*n = (size_t)(e - q);
	return *n ? q : NULL;
}

/* Whether PTX `a` declares or defines a function `name`. */
static bool
has_func(const char *a, size_t alen, const char *name, size_t n)
{
	const char *p = a, *end = a + alen;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *e = nl ? nl + 1 : end, *f;
		size_t m;

		if ((f = func_name(p, e, &m)) && m == n && !memcmp(f, name, n))
			return true;
		p = e;
	}
	return false;
}

/* PTX of the generic entries after the module's own: without the header
 * (.version, .target, .address_size) and the debug directives of the
 * file, which the first module declares, nor the compiler's helper
 * functions (__tlx_fmod_f32, ...) that the first module has too: each
 * module defines those it calls, the same in both. */
static char *
merge_ptx(Cg *cg, const char *a, size_t alen, const char *b, size_t blen,
	  size_t *len)
{
	char *out = arena_alloc(&cg->arena, alen + blen + 2), *o = out;
	const char *p = b, *end = b + blen, *f;
	bool skip = false;
	size_t n;

	memcpy(o, a, alen);
	o += alen;
	*o++ = '\n';
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *e = nl ? nl + 1 : end, *w = p;

		while (w < e && (*w == ' ' || *w == '\t'))
			w++;
		if (skip) {
			/* a declaration ends with ";", a definition with "}" */
			skip = *p != ';' && *p != '}';
		} else if ((f = func_name(w, e, &n)) && n > 6 &&
			   !strncmp(f, "__tlx_", 6) && has_func(a, alen, f, n)) {
			skip = true;
		} else if (strncmp(w, ".version", 8) && strncmp(w, ".target", 7) &&
			   strncmp(w, ".address_size", 13) &&
			   strncmp(w, ".file", 5) && strncmp(w, ".section", 8)) {
			memcpy(o, p, (size_t)(e - p));
			o += e - p;
		}
		p = e;
	}
	*o = 0;
	*len = (size_t)(o - out);
	return out;
}

/* The module's PTX with the generic entries' (a whole module of its own)
 * as the text global __tlx_generic, for the runtime to load when a
 * launch first needs one: little-endian words, NUL-padded, as
 * add_text_global writes __tlx_ir. */
static char *
carry_generic(Cg *cg, const char *a, size_t alen, const char *b, size_t blen,
	      size_t *len)
{
	size_t words = blen / 8 + 1, i, k;
	static const char decl[] = "\n.global .align 8 .b64 __tlx_generic[";
	char *out = arena_alloc(&cg->arena, alen + sizeof decl + 32 +
				words * 20 + 8), *o = out;

	memcpy(o, a, alen);
	o += alen;
	o += sprintf(o, "%s%zu] = {", decl, words);
	for (i = 0; i < words; i++) {
		uint64_t w = 0;

		for (k = 0; k < 8 && i * 8 + k < blen; k++)
			w |= (uint64_t)(unsigned char)b[i * 8 + k] << (8 * k);
		o += sprintf(o, "%s0x%llx", i ? ", " : "", (unsigned long long)w);
	}
	o += sprintf(o, "};\n");
	*len = (size_t)(o - out);
	return out;
}

/* What a compilation holds beyond its arenas: released on every exit,
 * an out-of-memory jump's included. */
typedef struct CgRun {
	Cg cg;
	GenJob *g;
	pthread_t th;
	bool threaded;
	char *bin;  /* the assembler's output (malloc) */
} CgRun;

/* The thread of the generic entries: its arenas are its own (malloc, no
 * scope: another thread's scope cannot take its chunks). */
static void
gen_start(CgRun *r, Module *m, const CgOpts *o, Diag *d, CgPrep *preps,
	  uint32_t nk)
{
	GenJob *g;

	/* a caller's allocator need not be thread-safe: with one, the
	 * generic entries are lowered in this thread */
	if (oom_scope_current() && oom_scope_current()->alloc != default_alloc)
		return;
	if (!(g = calloc(1, sizeof *g)))
		return;
	g->darena = (Arena){ .alloc = default_alloc };
	g->cg.arena = (Arena){ .alloc = default_alloc };
	diag_init(&g->d, &g->darena, d->src, NULL);
	g->cg.mod = m;
	g->cg.o = o;
	g->cg.t = r->cg.t;
	g->cg.d = &g->d;
	g->cg.dyn_smem = "__tlx_smem_generic";
	g->cg.realign_all = r->cg.realign_all;
	g->cg.no_elem_tail = r->cg.no_elem_tail;
	g->cg.warp_store = r->cg.warp_store;
	g->cg.edge = r->cg.edge;
	ly_tab_init(&g->cg.layouts, &g->cg.arena, &m->ctx->layouts);
	g->preps = preps;
	g->n = nk;
	r->g = g;
	r->threaded = pthread_create(&r->th, NULL, gen_main, g) == 0;
}

static void
cg_release(CgRun *r)
{
	GenJob *g = r->g;

	if (r->threaded) {
		pthread_join(r->th, NULL);
		r->threaded = false;
	}
	if (g) {
		cg_llvm_dispose(&g->cg);
		arena_reset(&g->cg.arena);
		arena_reset(&g->darena);
		free(g);
		r->g = NULL;
	}
	free(r->bin);
	r->bin = NULL;
	cg_llvm_dispose(&r->cg);
	arena_reset(&r->cg.arena);
}

/* The kernels the generic entries are lowered from: each one's own, or
 * for a kernel with a fast entry, its copy laid out for the generic one
 * (NAME.generic, attribute generic_of: the driver's TLX_GENERIC_LAYOUTS),
 * where the module has one. */
static CgPrep *
generic_preps(Cg *cg, Module *m, CgPrep *preps, uint32_t nk)
{
	CgPrep *g = arena_alloc(&cg->arena, (nk + 1) * sizeof *g);
	uint32_t i, k;

	memcpy(g, preps, nk * sizeof *g);
	for (i = 0; i < nk; i++) {
		Func *f = preps[i].f, *gf = NULL;

		if (!preps[i].fast)
			continue;
		for (k = 0; k < m->funcs.n; k++) {
			const char *of = attr_str(&m->funcs.v[k]->attrs,
						  "generic_of");

			if (of && !strcmp(of, f->name))
				gf = m->funcs.v[k];
		}
		if (!gf)
			continue;
		if (!cg_prepare_kernel(cg, gf, &g[i]))
			return g;
		g[i].fast = preps[i].fast;  /* lower_generic's "has two entries" */
	}
	return g;
}

static bool
cg_run(CgRun *r, Module *m, const CgOpts *o, Diag *d, CgResult *out)
{
	CgPrep *preps, *gpreps;
	char *text = NULL;
	size_t len = 0, size;
	uint32_t i, nk = 0, nfast = 0;
	bool ok = false, carry = false;

	arena_init(&r->cg.arena, NULL, NULL, NULL);
	ly_tab_init(&r->cg.layouts, &r->cg.arena, &m->ctx->layouts);
	r->cg.timing = getenv("TLX_CG_TIME") != NULL;
	r->cg.no_elem_tail = getenv("TLX_CG_ELEM_TAIL") &&
			     !strcmp(getenv("TLX_CG_ELEM_TAIL"), "0");
	r->cg.warp_store = getenv("TLX_CG_WARP_STORE") &&
			   !strcmp(getenv("TLX_CG_WARP_STORE"), "1");
	r->cg.realign_all = getenv("TLX_CG_REALIGN") &&
			    !strcmp(getenv("TLX_CG_REALIGN"), "all");
	r->cg.edge = !getenv("TLX_CG_EDGE") ? CG_EDGE_BRANCH
		     : !strcmp(getenv("TLX_CG_EDGE"), "auto") ? CG_EDGE_AUTO
		     : !strcmp(getenv("TLX_CG_EDGE"), "pred") ? CG_EDGE_PRED
		     : CG_EDGE_BRANCH;
	phase(&r->cg, NULL);
	if (!cg_llvm_init(&r->cg))
		return false;
	phase(&r->cg, "init");
	cg_debug_init(&r->cg);
	cg_meta_ir(&r->cg);  /* the IR before codegen rewrites any of it */
	preps = arena_alloc(&r->cg.arena, (m->funcs.n + 1) * sizeof *preps);
	for (i = 0; i < m->funcs.n; i++) {
		Func *f = m->funcs.v[i];

		if (f->kind != FN_KERNEL || attr_str(&f->attrs, "generic_of"))
			continue;
		if (cg_prepare_kernel(&r->cg, f, &preps[nk]))
			nfast += preps[nk].fast != 0;
		nk++;
	}
	if (r->cg.failed)
		return false;
	gpreps = generic_preps(&r->cg, m, preps, nk);
	if (r->cg.failed)
		return false;
	/* LLVM IR is one module: the generic entries then go into it */
	if (nfast && o->emit != CG_EMIT_LLVM)
		gen_start(r, m, o, d, gpreps, nk);
	/* without an assembler, a cubin is asked for in vain: PTX, which
	 * the driver assembles at load time */
	if (o->emit == CG_EMIT_CUBIN && o->ptx_ok && !o->use_ptxas &&
	    !cg_can_assemble())
		out->ptx_fallback = true;
	carry = r->threaded && o->emit == CG_EMIT_CUBIN && !out->ptx_fallback &&
		!o->generic_cubin;
	r->cg.generic_ptx = carry;
	for (i = 0; i < nk; i++)
		cg_lower_kernel(&r->cg, &preps[i],
				preps[i].fast ? CG_ENTRY_FAST : CG_ENTRY_ONE);
	if (nfast && !r->threaded)
		lower_generic(&r->cg, gpreps, nk);
	/* a launch gives the dynamic shared memory the larger entry needs */
	for (i = 0; i < r->cg.kinfo.n; i++) {
		CgKernelInfo *ki = &r->cg.kinfo.v[i];
		uint32_t k;

		for (k = 0; k < nk; k++)
			if (gpreps[k].f != preps[k].f && !strcmp(ki->name, preps[k].f->name) &&
			    gpreps[k].smem > ki->smem)
				ki->smem = gpreps[k].smem;
	}
	if (!r->cg.failed) {
		cg_meta_finish(&r->cg);
		cg_debug_finish(&r->cg);
		ok = cg_llvm_emit(&r->cg, &text, &len);
	}
	if (r->threaded) {
		GenJob *g = r->g;

		pthread_join(r->th, NULL);
		r->threaded = false;
		if (r->cg.timing)
			fprintf(stderr, "codegen: %-10s %8.1f ms (its thread)\n",
				"generic", g->ms);
		if (ok && !g->ok) {
			for (i = 0; i < g->d.msgs.n; i++) {
				DiagMsg *dm = &g->d.msgs.v[i];

				report(d, dm->kind, dm->range, dm->has_loc, "%s",
				       dm->msg);
			}
			if (!d->nerrors)
				diag_error_noloc(d, "internal error: the generic "
						 "entries failed");
			ok = false;
		}
		if (ok && carry)
			text = carry_generic(&r->cg, text, len, g->text, g->len,
					     &len);
		else if (ok && o->emit != CG_EMIT_LLVM)
			text = merge_ptx(&r->cg, text, len, g->text, g->len,
					 &len);
	}
	if (!ok)
		return false;
	out->kernels = arena_dup(m->ctx->arena, r->cg.kinfo.v,
				 r->cg.kinfo.n * sizeof *r->cg.kinfo.v);
	out->nkernels = r->cg.kinfo.n;
	for (i = 0; i < out->nkernels; i++)
		if (out->kernels[i].fast)
			out->kernels[i].fast = arena_strdup(m->ctx->arena,
							    out->kernels[i].fast);
	if (o->emit != CG_EMIT_CUBIN || out->ptx_fallback) {
		out->data = arena_dup(m->ctx->arena, text, len + 1);
		out->size = len;
		return true;
	}
	r->cg.entries = nk + (carry ? 0 : nfast);
	if (!cg_assemble(&r->cg, text, len, &r->bin, &size, &out->linker))
		return false;
	phase(&r->cg, "assemble");
	out->data = arena_dup(m->ctx->arena, r->bin, size);
	out->size = size;
	return true;
}

/* Codegen runs in an out-of-memory scope of its own: exhaustion joins the
 * generic entries' thread and disposes of LLVM's objects before the jump
 * goes on to the caller's scope. */
bool
cg_compile(Module *m, const CgOpts *o, Diag *d, CgResult *out)
{
	CgRun r = { .cg = { .mod = m, .o = o, .t = target_get(o->sm), .d = d } };
	OomScope os;
	bool ok;

	memset(out, 0, sizeof *out);
	if (!r.cg.t) {
		diag_error_noloc(d, "unknown target sm_%d", o->sm);
		return false;
	}
	oom_scope_enter(&os, NULL, NULL);
	if (setjmp(os.jb)) {
		cg_release(&r);
		oom_scope_unwind(&os);
		oom_scope_leave(&os);
		oom_raise();
	}
	ok = cg_run(&r, m, o, d, out);
	cg_release(&r);
	oom_scope_leave(&os);
	return ok;
}

/* What cg_compile checks before LLVM, and nothing more: each kernel
 * prepared (the ops the target can lower, tile sizes per thread, the
 * shared-memory total), none lowered. */
bool
cg_check(Module *m, const CgOpts *o, Diag *d)
{
	Cg cg = { .mod = m, .o = o, .t = target_get(o->sm), .d = d };
	CgPrep p;
	uint32_t i;

	if (!cg.t) {
		diag_error_noloc(d, "unknown target sm_%d", o->sm);
		return false;
	}
	arena_init(&cg.arena, NULL, NULL, NULL);
	ly_tab_init(&cg.layouts, &cg.arena, &m->ctx->layouts);
	for (i = 0; i < m->funcs.n; i++)  /* the generic copies too */
		if (m->funcs.v[i]->kind == FN_KERNEL)
			cg_prepare_kernel(&cg, m->funcs.v[i], &p);
	arena_reset(&cg.arena);
	return !cg.failed;
}
