/*
 * plan_smem.c: shared-memory planning -- pass "plan-smem".
 *
 * Places a laid-out kernel's buffers and the scratch its ops need
 * (ir/smemplan.c says how) and records the plan in the IR: `offset` on
 * every smem_alloc and mbar_alloc, `scratch` on every op with scratch
 * (its byte offset), and the kernel's `smem`, the bytes in all.  Code
 * generation and the simulator read these; nothing plans again (code
 * generation reports a plan over the target's shared memory, beside the
 * other limits it checks).
 * Kernels with ops code generation does not lower yet (warp-specialized
 * tasks, whose buffers live concurrently) keep the simulator's own plan.
 * Requires: laid-out IR.  Changes nothing but attributes.
 * Counters: buffers, scratch, bytes.
 */
#include "passes/passes.h"

static void
find_unlowered(Op *op, void *ud)
{
	if (op_has(op, F_UNLOWERED))
		*(bool *)ud = true;
}

bool
pass_plan_smem(PassCtx *pc, Func *f)
{
	IrCtx *c = f->mod->ctx;
	const Target *t = target_get(pc->sm);
	bool unlowered = false;
	SmemPlan p;
	uint32_t i;

	if (f->kind != FN_KERNEL || !t)
		return false;
	ir_walk(f, find_unlowered, &unlowered);
	if (unlowered)
		return false;
	ir_smem_plan(t, f, &p, pc->scratch);
	for (i = 0; i < p.e.n; i++) {
		SmemEntry *e = &p.e.v[i];
		bool buf = e->op->kind == OP_SMEM_ALLOC || e->op->kind == OP_MBAR_ALLOC;

		attr_set_int(c, &e->op->attrs, buf ? "offset" : "scratch", e->off);
		pass_stat(pc, buf ? "buffers" : "scratch", 1);
	}
	attr_set_int(c, &f->attrs, "smem", p.total);
	pass_stat(pc, "bytes", (uint64_t)p.total);
	return true;
}
