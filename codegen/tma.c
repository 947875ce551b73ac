/*
 * tma.c: TMA copies and the expected bytes of an mbarrier (sm_90a+).
 *
 * One thread of the program (thread 0) issues every bulk copy, as the
 * language says: a tma_load is one copy per program, not per thread.
 *   mbar_expect     mbarrier.expect_tx on the barrier;
 *   tma_load        cp.async.bulk.tensor.Nd g2s, completing on its
 *                   barrier, one per strip of the destination; with
 *                   {expect = 1} (a pipe's slot) the barrier first
 *                   expects the bytes it copies;
 *   tma_store       cp.async.bulk.tensor.Nd s2g, one per strip, then a
 *                   bulk-group commit (one group per tma_store);
 *   tma_store_wait  cp.async.bulk.wait_group.read {pending}, by every
 *                   thread (a no-op where no store was issued);
 *   return          of a kernel with TMA stores: wait_group.read 0 first,
 *                   so the program's shared memory outlives the stores'
 *                   reads of it.
 * A buffer's encoding is its descriptor's (plan-smem puts it on both):
 * a tiled swizzle of W bytes lands as strips of W bytes per row, strip i
 * (columns [i*W/E, (i+1)*W/E)) after the i earlier strips' rows, which
 * is what a box {W/E, rows} at dst + i*rows*W with the inner coordinate
 * moved by i*W/E writes; no encoding is one dense box.  The runtime
 * encodes each descriptor with the swizzle and the box this implies
 * (runtime/cuda.c).
 */
#include "config.h"

#include "codegen/cg.h"

/* Opens `if (thread 0)`; close_one joins. */
static LLVMBasicBlockRef
open_one(CgFn *fn, const char *name)
{
	LLVMBasicBlockRef in = cg_new_block(fn, name);
	LLVMBasicBlockRef done = cg_new_block(fn, "tma.done");

	LLVMBuildCondBr(fn->cg->B, cg_thread0(fn), in, done);
	LLVMPositionBuilderAtEnd(fn->cg->B, in);
	return done;
}

static void
close_one(CgFn *fn, LLVMBasicBlockRef done)
{
	LLVMBuildBr(fn->cg->B, done);
	LLVMPositionBuilderAtEnd(fn->cg->B, done);
}

static LLVMValueRef
bar_addr(CgFn *fn, Value bar)
{
	SmemView *w = fn->vals[bar].view;

	return cg_smem_ptr(fn, w ? w->off : cg_i32(fn->cg, 0));
}

static bool
copy(CgFn *fn, Op *op, bool load)
{
	Cg *cg = fn->cg;
	Type *desc = ir_type(fn->f, op->opnds[0]);
	int r = desc->rank, n, i, d;
	Value buf = op->opnds[1 + r];
	SmemView *w = fn->vals[buf].view;
	int64_t step, cstep, box[5];
	LLVMValueRef args[12], coord[5], tmap = cg_scalar(fn, op->opnds[0]);
	LLVMValueRef bar = NULL, mask = NULL;
	LLVMBasicBlockRef done;
	const char *why;
	char name[64];
	int k;

	if (!w || (why = sv_tma_strips(&w->g, w->align, sv_tma_box(desc, box),
					 &n, &step, &cstep))) {
		cg_unsupported(cg, op, w ? why : "a TMA copy of this view");
		return false;
	}
	for (d = 0; d < r; d++)  /* innermost first */
		coord[d] = cg_scalar(fn, op->opnds[r - d]);
	if (load)
		bar = bar_addr(fn, op->opnds[2 + r]);
	if (load && op->nopnds > 3u + (uint32_t)r)
		mask = cg_scalar(fn, op->opnds[3 + r]);
	done = open_one(fn, load ? "tma.load" : "tma.store");
	if (load && attr_int(&op->attrs, "expect", 0)) {
		/* the barrier expects the bytes it copies (a pipe's slot) */
		int64_t bytes = w->g.ebytes;

		for (d = 0; d < w->g.rank; d++)
			bytes *= w->g.shape[d];
		args[0] = bar;
		args[1] = cg_i32(cg, bytes);
		cg_intr(cg, "llvm.nvvm.mbarrier.expect.tx.scope.cta.space.cta",
			NULL, 0, args, 2);
	}
	for (i = 0; i < n; i++) {
		LLVMValueRef p = cg_smem_ptr(fn, i ? LLVMBuildAdd(cg->B, w->off,
						 cg_i32(cg, i * step), "") : w->off);

		k = 0;
		if (load) {
			args[k++] = LLVMBuildAddrSpaceCast(cg->B, p,
				LLVMPointerTypeInContext(cg->C, 7), "");
			args[k++] = bar;
		} else {
			args[k++] = p;
		}
		args[k++] = tmap;
		for (d = 0; d < r; d++)
			args[k++] = d == 0 && i ? LLVMBuildAdd(cg->B, coord[0],
						  cg_i32(cg, i * cstep), "")
						: coord[d];
		if (load)  /* the CTAs of the cluster it also writes */
			args[k++] = mask ? LLVMBuildTrunc(cg->B, mask, cg->t_i16, "")
					 : LLVMConstInt(cg->t_i16, 0, 0);
		args[k++] = cg_i64(cg, 0);                          /* L2 hint */
		if (load)
			args[k++] = LLVMConstInt(cg->t_i1, mask != NULL, 0);
		args[k++] = LLVMConstInt(cg->t_i1, 0, 0);
		if (load)
			args[k++] = cg_i32(cg, 0);                  /* cta_group */
		snprintf(name, sizeof name, "llvm.nvvm.cp.async.bulk.tensor.%s.tile.%dd",
			 load ? "g2s" : "s2g", r);
		cg_intr(cg, name, NULL, 0, args, k);
	}
	if (!load)
		cg_intr(cg, "llvm.nvvm.cp.async.bulk.commit.group", NULL, 0, NULL, 0);
	close_one(fn, done);
	return true;
}

/* Every thread waits: bulk groups are per thread, so the wait returns at
 * once in all but the one that issued the stores; a wait behind a branch
 * on the thread made ptxas serialize the wgmma of the code around it
 * (C7514). */
static void
store_wait(CgFn *fn, int64_t pending)
{
	LLVMValueRef n = cg_i32(fn->cg, pending);

	cg_intr(fn->cg, "llvm.nvvm.cp.async.bulk.wait.group.read", NULL, 0, &n, 1);
}

static void
find_store(Op *op, void *ud)
{
	if (op->kind == OP_TMA_STORE)
		*(bool *)ud = true;
}

bool
cg_tma_stores(Func *f)
{
	bool any = false;

	ir_walk(f, find_store, &any);
	return any;
}

void
cg_tma_drain(CgFn *fn)
{
	store_wait(fn, 0);
}

bool
cg_tma_op(CgFn *fn, Op *op)
{
	Cg *cg = fn->cg;
	LLVMBasicBlockRef done;
	LLVMValueRef args[2];

	switch (op->kind) {
	case OP_MBAR_EXPECT:
		args[0] = bar_addr(fn, op->opnds[0]);
		args[1] = LLVMBuildIntCast2(cg->B, cg_scalar(fn, op->opnds[1]),
					    cg->t_i32, 1, "");
		done = open_one(fn, "tma.expect");
		cg_intr(cg, "llvm.nvvm.mbarrier.expect.tx.scope.cta.space.cta",
			NULL, 0, args, 2);
		close_one(fn, done);
		return true;
	case OP_TMA_LOAD:
		return copy(fn, op, true);
	case OP_TMA_STORE:
		return copy(fn, op, false);
	case OP_TMA_STORE_WAIT:
		store_wait(fn, attr_int(&op->attrs, "pending", 0));
		return true;
	case OP_CLC_TRY_CANCEL:
		/* one thread asks; the 16-byte answer lands in the view (of
		 * every program of the cluster: multicast) and completes
		 * 16 bytes on the barrier */
		args[0] = bar_addr(fn, op->opnds[0]);
		args[1] = bar_addr(fn, op->opnds[1]);
		done = open_one(fn, "clc.try_cancel");
		cg_intr(cg, attr_int(&op->attrs, "multicast", 0)
			    ? "llvm.nvvm.clusterlaunchcontrol.try_cancel.async.multicast.shared"
			    : "llvm.nvvm.clusterlaunchcontrol.try_cancel.async.shared",
			NULL, 0, args, 2);
		close_one(fn, done);
		return true;
	case OP_CLC_QUERY: {
		LLVMTypeRef i128 = LLVMIntTypeInContext(cg->C, 128);
		LLVMValueRef r = LLVMBuildLoad2(cg->B, i128,
						bar_addr(fn, op->opnds[0]), "clc");
		static const char *const f[3] = {
			"llvm.nvvm.clusterlaunchcontrol.query_cancel.get_first_ctaid.x",
			"llvm.nvvm.clusterlaunchcontrol.query_cancel.get_first_ctaid.y",
			"llvm.nvvm.clusterlaunchcontrol.query_cancel.get_first_ctaid.z",
		};
		int d;

		LLVMSetAlignment(r, 16);
		fn->vals[op->res[0]].v = cg_intr(cg,
			"llvm.nvvm.clusterlaunchcontrol.query_cancel.is_canceled",
			NULL, 0, &r, 1);
		for (d = 0; d < 3; d++)
			fn->vals[op->res[1 + d]].v = cg_intr(cg, f[d], NULL, 0, &r, 1);
		return true;
	}
	default:
		cg_unsupported(cg, op, NULL);
		return false;
	}
}
