/* Unit tests of ir/target.c and of ops.def's columns: each target's
 * facts, features that do not only accumulate (wgmma is sm_90a's alone),
 * the operand rules that refine an op's feature, and the consistency of
 * the op table's flags. */
#include "ir/ir.h"
#include "test.h"

static void
test_targets(void)
{
	const Target *a = target_get(80), *h = target_get(90), *b = target_get(100);

	CHECK(a && h && b);
	CHECK(!target_get(89) && !target_get(0));
	CHECK(target_lookup("sm_90a") == h && target_lookup("sm_100a") == b);
	CHECK(target_lookup("sm_80") == a);
	CHECK(!target_lookup("sm_90") && !target_lookup("sm_100"));
	ASSERT_STR("sm_100a", b->name);
	ASSERT(86, a->ptx);
	ASSERT(86, h->ptx);
	ASSERT(86, b->ptx);
	ASSERT(166912, a->smem);
	ASSERT(232448, h->smem);
	ASSERT(232448, b->smem);
	CHECK(a->smem_pipeline < a->smem && h->smem_pipeline < h->smem);

	CHECK(target_has(a, TF_MMA) && target_has(a, TF_MMA_I8));
	CHECK(!target_has(a, TF_MMA_FP8) && target_has(h, TF_MMA_FP8) &&
	      target_has(b, TF_MMA_FP8));
	CHECK(!target_has(a, TF_WGMMA) && target_has(h, TF_WGMMA) &&
	      !target_has(b, TF_WGMMA));
	CHECK(!target_has(h, TF_TCGEN05) && target_has(b, TF_TCGEN05));
	CHECK(!target_has(h, TF_CLC) && target_has(b, TF_CLC));
	CHECK(!target_has(a, TF_TMA) && !target_has(a, TF_CLUSTER) &&
	      !target_has(a, TF_STMATRIX) && !target_has(a, TF_CVT_FP8) &&
	      !target_has(a, TF_SWIZZLE_128B));
	CHECK(target_has(b, TF_TMA_MULTICAST) && target_has(b, TF_SETMAXNREG) &&
	      target_has(b, TF_SWIZZLE_32B) && target_has(b, TF_SWIZZLE_64B));
	CHECK(target_has(a, TF_NONE));
	ASSERT_STR("wgmma", target_feature_name(TF_WGMMA));
}

/* Every op some target can run; flags that imply others. */
static void
test_ops(void)
{
	static const int sms[] = { 80, 90, 100 };
	int k;
	size_t i;

	for (k = 0; k < OP_COUNT; k++) {
		const OpInfo *in = &op_info[k];
		bool some = false;

		for (i = 0; i < countof(sms); i++)
			some |= target_has(target_get(sms[i]), in->feature);
		CHECK(some);
		CHECK(in->max_opnds < 0 || in->min_opnds <= in->max_opnds);
		if (in->flags & F_ELEM)
			CHECK(in->flags & F_REMAT);
		if (in->flags & (F_REMAT | F_CHEAP))
			CHECK(in->flags & F_PURE);
		if (in->flags & F_MATH)
			CHECK(!(in->flags & F_CHEAP));
	}
	CHECK(op_info[OP_DOT_ASYNC].feature == TF_WGMMA);
	CHECK(op_info[OP_DOT].feature == TF_NONE);
	CHECK(!(op_info[OP_TMA_LOAD].flags & F_UNLOWERED));
	CHECK(!(op_info[OP_TASKS].flags & F_UNLOWERED));
	CHECK(op_info[OP_SCHED_CREATE].flags & F_UNLOWERED);
	CHECK(!(op_info[OP_DOT].flags & F_UNLOWERED));
}

static Value
param(Func *f, uint32_t i)
{
	return f->body->args[i];
}

static Op *
op_of(Func *f, Value v)
{
	return ir_val(f, v)->def;
}

/* The rows' features refined by operands, and the message. */
static void
test_refine(void)
{
	Arena a;
	IrCtx c;
	Module *m;
	Func *f;
	Builder b;
	Type *f8, *bf, *f32, *tys[6];
	int64_t s16[2] = { 16, 32 }, s32[2] = { 32, 16 }, acc[2] = { 16, 16 };
	Value v, args[2];
	Op *dot8, *dotb, *async, *arrive, *remote;
	const char *msg;

	arena_init(&a, NULL, NULL, NULL);
	ir_ctx_init(&c, &a);
	m = ir_module_new(&c, "t");
	f8 = ty_scalar(&c, TY_F8E4M3);
	bf = ty_scalar(&c, TY_BF16);
	f32 = ty_scalar(&c, TY_F32);
	tys[0] = ty_tile(&c, f8, 2, s16);
	tys[1] = ty_tile(&c, f8, 2, s32);
	tys[2] = ty_tile(&c, f32, 2, acc);
	tys[3] = ty_tile(&c, bf, 2, s16);
	tys[4] = ty_tile(&c, bf, 2, s32);
	tys[5] = ty_mbar(&c, -1);
	f = ir_func_new(m, FN_KERNEL, "k", 6, tys);
	b = (Builder){ .fn = f, .blk = f->body };
	v = b_op3(&b, OP_DOT, tys[2], param(f, 0), param(f, 1), param(f, 2));
	dot8 = op_of(f, v);
	v = b_op3(&b, OP_DOT, tys[2], param(f, 3), param(f, 4), param(f, 2));
	dotb = op_of(f, v);
	v = b_op3(&b, OP_DOT_ASYNC, tys[2], param(f, 3), param(f, 4), param(f, 2));
	async = op_of(f, v);
	args[0] = param(f, 5);
	arrive = b_op(&b, OP_MBAR_ARRIVE, 1, args, NULL);
	args[1] = b_const_int(&b, ty_scalar(&c, TY_I32), 1);
	remote = b_op(&b, OP_MBAR_ARRIVE, 2, args, NULL);

	CHECK(target_op_feature(f, dot8) == TF_MMA_FP8);
	CHECK(target_op_feature(f, dotb) == TF_NONE);
	CHECK(target_op_feature(f, arrive) == TF_NONE);
	CHECK(target_op_feature(f, remote) == TF_CLUSTER);
	CHECK(!target_lacks(target_get(90), f, dot8, NULL, &a));
	CHECK(!target_lacks(target_get(80), f, dotb, NULL, &a));
	CHECK(!target_lacks(target_get(80), f, arrive, NULL, &a));
	msg = target_lacks(target_get(80), f, dot8, NULL, &a);
	ASSERT_STR("'dot' with fp8 operands needs fp8 mma.sync (tensor cores "
		   "for fp8, sm_89 and newer), which sm_80 does not have; use "
		   "--target=sm_90a or --target=sm_100a", msg);
	msg = target_lacks(target_get(80), f, remote, NULL, &a);
	CHECK(msg && strstr(msg, "'mbar_arrive' on another program's barrier "
			    "needs clusters"));
	CHECK(!target_lacks(target_get(90), f, async, NULL, &a));
	msg = target_lacks(target_get(100), f, async, NULL, &a);
	ASSERT_STR("'dot_async' needs wgmma (Hopper's asynchronous tensor "
		   "cores), which sm_100a does not have (Blackwell's tcgen05 "
		   "is not supported yet); use --target=sm_90a", msg);
	msg = target_lacks(target_get(80), f, async, NULL, &a);
	CHECK(msg && !strstr(msg, "tcgen05"));  /* the note: only newer */
	arena_reset(&a);
}

int
main(void)
{
	test_targets();
	test_ops();
	test_refine();
	TEST_MAIN_END();
}
