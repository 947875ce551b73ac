/*
 * schedule.c: moves global loads above the reductions and dots before
 * them, so that their latency overlaps the reductions' shuffles and
 * barriers (layernorm: the loads of w and b start with the load of x,
 * not after both statistics).  A load moves together with the cheap pure
 * ops that compute its operands; it never crosses an op with side effects
 * (a store, an atomic, shared-memory or barrier ops, control flow), so
 * every thread's memory operations keep their order.  The loaded value
 * lives longer, so a load moves only when it crosses a reduce or a dot.
 * Runs on the IR inside codegen, after __tlx_ir was printed.
 *
 * Registers: a load moves only while the registers it holds early, with
 * those of the tile the reduction reads, fit the kernel's budget (a
 * 32768-wide layer norm row at 32 elements per thread keeps w and b where
 * they are; at 16 they start with x).  Each move is recorded (fn->hoists)
 * so that the generic copy of a versioned kernel or loop, whose
 * element-by-element accesses hold a register per element, lowers the
 * load at its first place instead (kernel.c).
 */
#include "config.h"

#include "codegen/cg.h"

/* Ops a load may move above. */
static bool
crossable(Op *op)
{
	return op->kind == OP_LOAD || op->kind == OP_REDUCE || op->kind == OP_DOT ||
	       (op_has(op, F_PURE) && !op->nregions);
}

/* Marks the ops of ops[0..n) that ld needs (transitively); false with
 * *blocker when one of them may not move. */
static bool
mark(Func *f, Value v, Op **ops, uint32_t n, bool *mv, Op **blocker)
{
	Op *d = ir_val(f, v)->def;
	uint32_t k, i;

	for (k = 0; k < n && ops[k] != d; k++)
		;
	if (k == n || mv[k])
		return true;
	if (!op_has(d, F_CHEAP) && d->kind != OP_LOAD) {
		*blocker = d;
		return false;
	}
	mv[k] = true;
	for (i = 0; i < d->nopnds; i++)
		if (!mark(f, d->opnds[i], ops, n, mv, blocker))
			return false;
	return true;
}

/* 32-bit registers per thread that a tile of t takes. */
static int64_t
words(CgFn *fn, Type *t)
{
	int64_t b = ty_numel(t) * MAX(1, ty_bits(ty_elem(t)) / 8);

	return MAX(1, b / 4 / fn->nthreads);
}

static void
hoist(CgFn *fn, Op *ld, int64_t *held)
{
	Func *f = fn->f;
	Arena *a = fn->a;
	Block *b = ld->parent;
	Op *top, *o, *blocker, **ops, *next = ld->next;
	bool *mv, ok, crosses = false;
	int64_t live = 0, need;
	uint32_t n, i, k;

	for (top = ld->prev; top && crossable(top); top = top->prev)
		;
	for (n = 0, o = ld->prev; o != top; o = o->prev)
		n++;
	ops = arena_alloc(a, (n + 1) * sizeof *ops);
	mv = arena_alloc(a, (n + 1) * sizeof *mv);
	do {
		for (n = 0, o = top ? top->next : b->first; o != ld; o = o->next)
			ops[n++] = o;
		memset(mv, 0, (n + 1) * sizeof *mv);
		ok = true;
		for (i = 0; ok && i < ld->nopnds; i++)
			ok = mark(f, ld->opnds[i], ops, n, mv, &blocker);
		if (!ok)
			top = blocker;
	} while (!ok);
	for (i = 0; i < n; i++) {
		if (mv[i] || (ops[i]->kind != OP_REDUCE && ops[i]->kind != OP_DOT))
			continue;
		crosses = true;
		live = MAX(live, words(fn, ir_type(f, ops[i]->opnds[0])));
	}
	need = *held + live + words(fn, ir_type(f, ld->res[0])) + 24;
	if (!crosses || need > fn->reg_budget)
		return;
	*held += words(fn, ir_type(f, ld->res[0]));
	{
		CgHoist h = { ld, next };

		vec_push(a, &fn->hoists, h);
	}
	ops[n] = ld;
	mv[n] = true;
	for (i = 0, k = 0; i <= n; i++)
		if (mv[i]) {
			ir_remove(ops[i]);
			ops[k++] = ops[i];
		}
	for (i = 0; i < k; i++) {
		if (i > 0)
			ir_insert_after(ops[i - 1], ops[i]);
		else if (top)
			ir_insert_after(top, ops[i]);
		else if (b->first)
			ir_insert_before(b->first, ops[i]);
		else
			ir_append(b, ops[i]);
	}
}

static void
walk(CgFn *fn, Block *b)
{
	Op *op, *next;
	int64_t held = 0;
	uint32_t i;

	for (op = b->first; op; op = next) {
		next = op->next;
		for (i = 0; i < op->nregions; i++)
			walk(fn, op->regions[i]);
		if (op->kind == OP_LOAD)
			hoist(fn, op, &held);
	}
}

void
cg_schedule(CgFn *fn)
{
	walk(fn, fn->f->body);
}
