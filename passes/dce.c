/*
 * dce.c: dead code elimination -- pass "dce".
 *
 * Removes, until nothing more goes:
 *   - pure ops whose results are all unused (a sweep from the end of each
 *     block, regions first, so whole chains go in one sweep);
 *   - loop-carried values of `for` and `sched_for` that nothing needs: the
 *     result is unused and the region argument is unused or only feeds its
 *     own `yield` operand; the init operand, the argument, the yield
 *     operand and the result are dropped together;
 *   - `if` ops without results whose regions hold only their `yield`.
 * Requires: verified IR.  Preserves: the order of what stays, names.
 * Counters: ops-removed, loop-values, ifs-removed.
 */
#include "passes/passes.h"

typedef struct Dce {
	PassCtx *pc;
	Func *f;
	uint32_t *uses;
	bool changed;
} Dce;

static void
drop_uses(Dce *z, Op *op)
{
	uint32_t i;

	for (i = 0; i < op->nopnds; i++)
		z->uses[op->opnds[i]]--;
}

static bool
all_unused(Dce *z, Op *op)
{
	uint32_t i;

	for (i = 0; i < op->nres; i++)
		if (z->uses[op->res[i]])
			return false;
	return true;
}

/* Loop-carried value k of a loop whose iteration operands start at `first`. */
static void
drop_loop_value(Dce *z, Op *loop, uint32_t first, uint32_t k, Op *y)
{
	Block *b = loop->regions[0];

	z->uses[loop->opnds[first + k]]--;
	z->uses[y->opnds[k]]--;
	ir_op_erase_operand(loop, first + k);
	ir_op_erase_result(loop, k);
	ir_block_erase_arg(b, k + 1);
	ir_op_erase_operand(y, k);
	pass_stat(z->pc, "loop-values", 1);
	z->changed = true;
}

static void
trim_loop(Dce *z, Op *loop)
{
	uint32_t first = loop->kind == OP_FOR ? 3 : 1;
	Block *b = loop->regions[0];
	Op *y = b->last;
	uint32_t k;

	if (!y || y->kind != OP_YIELD || y->nopnds != loop->nres ||
	    b->nargs != loop->nres + 1)
		return;
	for (k = loop->nres; k-- > 0;) {
		Value arg = b->args[k + 1];

		if (z->uses[loop->res[k]])
			continue;
		if (z->uses[arg] == 0 || (z->uses[arg] == 1 && y->opnds[k] == arg))
			drop_loop_value(z, loop, first, k, y);
	}
}

static bool
only_yield(Block *b)
{
	return b->first && b->first == b->last && b->first->kind == OP_YIELD &&
	       b->first->nopnds == 0;
}

static void
sweep(Dce *z, Block *b)
{
	Op *op, *prev;
	uint32_t i;

	for (op = b->last; op; op = prev) {
		prev = op->prev;
		for (i = op->nregions; i-- > 0;)
			sweep(z, op->regions[i]);
		if (pass_is_pure(op) && all_unused(z, op)) {
			drop_uses(z, op);
			ir_remove(op);
			pass_stat(z->pc, "ops-removed", 1);
			z->changed = true;
		} else if (op->kind == OP_FOR || op->kind == OP_SCHED_FOR) {
			trim_loop(z, op);
		} else if (op->kind == OP_IF && op->nres == 0 &&
			   only_yield(op->regions[0]) && only_yield(op->regions[1])) {
			drop_uses(z, op);
			ir_remove(op);
			pass_stat(z->pc, "ifs-removed", 1);
			z->changed = true;
		}
	}
}

bool
pass_dce(PassCtx *pc, Func *f)
{
	Dce z = { .pc = pc, .f = f };
	bool any = false;

	do {
		z.changed = false;
		z.uses = ir_count_uses(f, pc->scratch);
		sweep(&z, f->body);
		any |= z.changed;
	} while (z.changed);
	return any;
}
