/*
 * dce.c: dead code elimination -- pass "dce".
 *
 * Removes, until nothing more goes:
 *   - pure ops whose results are all unused (a sweep from the end of each
 *     block, regions first, so whole chains go in one sweep);
 *   - loop-carried values of `for` and `sched_for` that nothing needs: the
 *     result is unused and the region argument only feeds its own `yield`
 *     operand, directly or through pure ops of the body that feed nothing
 *     else (a dead accumulator); the init operand, the argument, the yield
 *     operand, the result and those ops are dropped together;
 *   - `if` ops without results whose regions hold only their `yield`.
 * Requires: verified IR.  Preserves: the order of what stays, names.
 * Counters: ops-removed, loop-values, ifs-removed.
 */
#include "passes/passes.h"

typedef struct Dce {
	PassCtx *pc;
	Func *f;
	uint32_t *uses;
	uint32_t *dead;         /* see slot_is_dead */
	Vec(Op *) feeders;
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

/* Does slot k of `loop` only feed itself?  Its result must be unused and
 * every use of its region argument must come from the yield's operand k or
 * from pure ops of the body whose results, in turn, only feed that operand
 * (a dead accumulator: acc2 = add acc, x; yield acc2).  Those ops go into
 * `feeders`.  z->dead[v] counts the uses of v from such places. */
static bool
slot_is_dead(Dce *z, Op *loop, Op *y, uint32_t k)
{
	Block *b = loop->regions[0];
	Value arg = b->args[k + 1];
	Op *op;
	uint32_t i;
	bool dead;

	if (z->uses[loop->res[k]])
		return false;
	z->feeders.n = 0;
	z->dead[y->opnds[k]]++;
	for (op = y->prev; op; op = op->prev) {
		bool feeds = pass_is_pure(op);

		for (i = 0; feeds && i < op->nres; i++)
			feeds = z->uses[op->res[i]] == z->dead[op->res[i]] &&
				z->uses[op->res[i]] > 0;
		if (!feeds)
			continue;
		vec_push(z->pc->scratch, &z->feeders, op);
		for (i = 0; i < op->nopnds; i++)
			z->dead[op->opnds[i]]++;
	}
	dead = z->uses[arg] == z->dead[arg];
	/* undo the counts */
	z->dead[y->opnds[k]]--;
	for (i = 0; i < z->feeders.n; i++) {
		uint32_t j;

		for (j = 0; j < z->feeders.v[i]->nopnds; j++)
			z->dead[z->feeders.v[i]->opnds[j]]--;
	}
	return dead;
}

/* Drops slot k: the init operand, the argument, the yield operand, the
 * result, and the ops that only fed it. */
static void
drop_slot(Dce *z, Op *loop, uint32_t first, uint32_t k, Op *y)
{
	uint32_t i;

	z->uses[loop->opnds[first + k]]--;
	z->uses[y->opnds[k]]--;
	ir_op_erase_operand(loop, first + k);
	ir_op_erase_result(loop, k);
	ir_block_erase_arg(loop->regions[0], k + 1);
	ir_op_erase_operand(y, k);
	for (i = 0; i < z->feeders.n; i++) {  /* last first: uses drop to 0 */
		drop_uses(z, z->feeders.v[i]);
		ir_remove(z->feeders.v[i]);
		pass_stat(z->pc, "ops-removed", 1);
	}
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
	    b->nargs != loop->nres + 1 || loop->nopnds != first + loop->nres)
		return;
	for (k = loop->nres; k-- > 0;)
		if (slot_is_dead(z, loop, y, k))
			drop_slot(z, loop, first, k, y);
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
		z.dead = arena_alloc(pc->scratch, f->vals.n * sizeof *z.dead);
		sweep(&z, f->body);
		any |= z.changed;
	} while (z.changed);
	return any;
}
