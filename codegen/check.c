/*
 * check.c: the defensive check before lowering.  The front end refuses
 * ops the target lacks (ir/target.c); this check asks the target table
 * the same question of IR read from text, and refuses every construct
 * whose lowering is not written yet (ops.def's F_UNLOWERED), so that
 * LLVM never sees something it would abort on ("Cannot select").  Each problem is a diagnostic at the op's location:
 *   'X' needs FEATURE (...), which sm_NN does not have; use --target=...
 *   'X' is not supported for sm_NN yet
 */
#include "config.h"

#include "codegen/cg.h"

enum { MAX_PER_THREAD = 2048 };

/* NULL if the op's lowering exists (for targets the table allows), else
 * what to call the missing form in the diagnostic. */
static const char *
unlowered(Op *op)
{
	return op_has(op, F_UNLOWERED) ? op_name(op->kind) : NULL;
}

static bool
type_ok(CgFn *fn, Op *op, Value v)
{
	Type *t = ir_type(fn->f, v);

	if (t->kind == TY_TILE && ty_numel(t) / fn->nthreads > MAX_PER_THREAD) {
		cg_error(fn->cg, op->loc, "a tile of %lld elements is too large "
			 "for %d threads (at most %d elements per thread)",
			 (long long)ty_numel(t), fn->nthreads, MAX_PER_THREAD);
		return false;
	}
	return true;
}

static bool
check_op(CgFn *fn, Op *op)
{
	Cg *cg = fn->cg;
	const char *why;
	bool ok = true;
	uint32_t i;

	if (op->kind == OP_CALL) {
		const char *callee = attr_str(&op->attrs, "callee");

		cg_error(cg, op->loc, "'call' of '%s' is not supported for %s: "
			 "device functions must be inlined before code "
			 "generation", callee ? callee : "?", cg->t->name);
		return false;
	}
	if ((why = target_lacks(cg->t, fn->f, op, cg->d->src, &cg->arena))) {
		cg_error(cg, op->loc, "%s", why);
		return false;
	}
	if ((why = unlowered(op))) {
		cg_error(cg, op->loc, "%s%s%s is not supported for %s yet",
			 why == op_name(op->kind) ? "'" : "", why,
			 why == op_name(op->kind) ? "'" : "", cg->t->name);
		return false;
	}
	if (!cg_math_supported(fn, op)) {
		cg_unsupported(cg, op, NULL);
		return false;
	}
	if (op->kind == OP_DOT_ASYNC && !cg_wgmma_check(fn, op))
		return false;
	if (op->kind == OP_CLUSTER_SYNC && fn->task_bar >= 0) {
		cg_error(cg, op->loc, "'cluster_sync' inside a task waits for "
			 "every warp of every program of the cluster, which the "
			 "other tasks never reach; synchronize tasks with "
			 "barriers or pipes");
		return false;
	}
	if (op->kind == OP_SYNC_THREADS && fn->task_bar >= 0) {
		cg_error(cg, op->loc, "'sync_threads' inside a task waits for "
			 "every warp of the program, which the other tasks never "
			 "reach; synchronize tasks with barriers or pipes");
		return false;
	}
	for (i = 0; i < op->nres; i++)
		ok &= type_ok(fn, op, op->res[i]);
	if (op->kind == OP_TASK) {  /* its ops run on its own warps */
		int nwarps = fn->nwarps;

		fn->task_bar = 0;
		fn->nwarps = (int)attr_int(&op->attrs, "warps", nwarps);
		fn->nthreads = 32 * fn->nwarps;
		ok &= cg_check_ops(fn, op->regions[0]);
		fn->task_bar = -1;
		fn->nwarps = nwarps;
		fn->nthreads = 32 * nwarps;
		return ok;
	}
	for (i = 0; i < op->nregions; i++)
		ok &= cg_check_ops(fn, op->regions[i]);
	return ok;
}

bool
cg_check_ops(CgFn *fn, Block *b)
{
	bool ok = true;
	Op *op;

	for (op = b->first; op; op = op->next)
		ok &= check_op(fn, op);
	return ok;
}
