/*
 * check.c: the defensive check before lowering.  The front end refuses
 * ops the target lacks (ir/target.c); this check also covers IR read
 * from text and every construct whose lowering is not written yet, so
 * that LLVM never sees something it would abort on ("Cannot select").
 * Each problem is a diagnostic at the op's location:
 *   'X' is not supported for sm_NN yet
 */
#include "config.h"

#include "codegen/cg.h"

enum { MAX_PER_THREAD = 2048 };

/* Ops whose lowering exists (for targets the table allows). */
static bool
lowered(Op *op)
{
	switch (op->kind) {
	case OP_MBAR_EXPECT: case OP_FENCE_ASYNC: case OP_TMA_LOAD:
	case OP_TMA_STORE: case OP_TMA_STORE_WAIT: case OP_DOT_ASYNC:
	case OP_DOT_WAIT: case OP_TASKS: case OP_TASK: case OP_CLUSTER_RANK:
	case OP_CLUSTER_SYNC: case OP_PIPE_CREATE: case OP_PIPE_ACQUIRE:
	case OP_PIPE_COMMIT: case OP_PIPE_CONSUME: case OP_PIPE_RELEASE:
	case OP_PIPE_BAR: case OP_SCHED_CREATE: case OP_SCHED_FOR:
		return false;
	case OP_MBAR_ARRIVE:
		return op->nopnds <= 1;  /* remote arrive needs clusters */
	default:
		return true;
	}
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
	bool ok = true;
	uint32_t i;

	if (op->kind == OP_CALL) {
		const char *callee = attr_str(&op->attrs, "callee");

		cg_error(cg, op->loc, "'call' of '%s' is not supported for %s: "
			 "device functions must be inlined before code "
			 "generation", callee ? callee : "?",
			 target_name(cg->o->sm));
		return false;
	}
	if (target_min_sm(fn->f, op) > cg->o->sm || !lowered(op) ||
	    !cg_math_supported(fn, op)) {
		cg_unsupported(cg, op, NULL);
		return false;
	}
	for (i = 0; i < op->nres; i++)
		ok &= type_ok(fn, op, op->res[i]);
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
