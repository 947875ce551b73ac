/*
 * licm.c: loop-invariant code motion -- pass "licm".
 *
 * Moves pure ops out of the regions of `for`, `while` and `sched_for`
 * when all their operands are defined outside the loop, to just before
 * the loop.  Inner loops go first, so an op can climb out of several
 * loops; ops that become invariant because an earlier op moved move too.
 * Only the ops directly in a loop's regions move (not those inside an
 * `if` in the loop).  A loop may run zero times, so hoisting executes ops
 * speculatively: pure ops are safe, except integer `div` and `rem`, which
 * may fault -- those move only when the divisor is a non-zero constant.
 * Requires: verified IR.  Preserves: the order of the moved ops.
 * Counters: ops-hoisted.
 */
#include "passes/passes.h"

static bool
is_loop(Op *op)
{
	return op->kind == OP_FOR || op->kind == OP_WHILE || op->kind == OP_SCHED_FOR;
}

/* Is v defined inside one of loop's regions (at any depth)? */
static bool
defined_inside(Func *f, Value v, Op *loop)
{
	ValInfo *vi = ir_val(f, v);
	Block *b = vi->def ? vi->def->parent : vi->blk;

	while (b && b->parent) {
		if (b->parent == loop)
			return true;
		b = b->parent->parent;
	}
	return false;
}

static bool
may_fault(Func *f, Op *op)
{
	Num n;

	if ((op->kind != OP_DIV && op->kind != OP_REM) || !ty_is_int(ir_type(f, op->opnds[0])))
		return false;
	return !pass_const(f, op->opnds[1], &n) || n.i == 0;
}

static bool
invariant(Func *f, Op *op, Op *loop)
{
	uint32_t i;

	for (i = 0; i < op->nopnds; i++)
		if (defined_inside(f, op->opnds[i], loop))
			return false;
	return true;
}

static bool
hoist_from(PassCtx *pc, Func *f, Op *loop)
{
	bool changed = false;
	uint32_t r;

	for (r = 0; r < loop->nregions; r++) {
		Op *op, *next;

		for (op = loop->regions[r]->first; op; op = next) {
			next = op->next;
			if (!pass_is_pure(op) || !invariant(f, op, loop) || may_fault(f, op))
				continue;
			ir_remove(op);
			ir_insert_before(loop, op);
			pass_stat(pc, "ops-hoisted", 1);
			changed = true;
		}
	}
	return changed;
}

static bool
licm_block(PassCtx *pc, Func *f, Block *b)
{
	bool changed = false;
	Op *op, *next;
	uint32_t i;

	for (op = b->first; op; op = next) {
		next = op->next;
		for (i = 0; i < op->nregions; i++)
			changed |= licm_block(pc, f, op->regions[i]);
		if (is_loop(op))
			changed |= hoist_from(pc, f, op);
	}
	return changed;
}

bool
pass_licm(PassCtx *pc, Func *f)
{
	return licm_block(pc, f, f->body);
}
