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

/* Where a generic copy lowers the moved load h: the op it stood
 * before, past other moved loads; NULL for none or a cycle. */
static Op *
place(CgFn *fn, const CgHoist *h)
{
	Op *at = h->next;
	uint32_t i, steps = 0;

	for (i = 0; at && i < fn->hoists.n; i++)
		if (fn->hoists.v[i].ld == at) {
			if (++steps > fn->hoists.n)
				return NULL;
			at = fn->hoists.v[i].next;
			i = (uint32_t)-1;
		}
	return at;
}

static bool
is_moved(CgFn *fn, Op *op)
{
	uint32_t i;

	for (i = 0; i < fn->hoists.n; i++)
		if (fn->hoists.v[i].ld == op)
			return true;
	return false;
}

/* Does op, or an op of its regions, read v? */
static bool
reads(Op *op, Value v)
{
	uint32_t i;
	Op *o;

	for (i = 0; i < op->nopnds; i++)
		if (op->opnds[i] == v)
			return true;
	for (i = 0; i < op->nregions; i++)
		for (o = op->regions[i]->first; o; o = o->next)
			if (reads(o, v))
				return true;
	return false;
}

/* Is every op of the load's block that it reads before its place, none
 * of them a moved load, and, where the place follows the load, none of
 * the ops between them a reader of it?  Those are lowered where they
 * stand, before the place: a later load that moved up together with its
 * mask or address computed from this one reads it there. */
static bool
place_ok(CgFn *fn, const CgHoist *h, Op *at)
{
	Op *d, *o;
	uint32_t i;
	bool read = false;

	if (!at || at->parent != h->ld->parent)
		return false;
	for (o = h->ld->next; o && o != at; o = o->next)
		for (i = 0; i < h->ld->nres && !read; i++)
			read = reads(o, h->ld->res[i]);
	if (o && read)
		return false;  /* the place follows a reader */
	for (i = 0; i < h->ld->nopnds; i++) {
		d = ir_val(fn->f, h->ld->opnds[i])->def;
		if (!d || d->parent != h->ld->parent)
			continue;
		if (is_moved(fn, d))
			return false;
		for (o = d; o && o != at; o = o->next)
			;
		if (!o)
			return false;
	}
	return true;
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
	uint32_t i, k;
	Op **at;

	walk(fn, fn->f->body);
	if (!fn->hoists.n)
		return;
	/* each record's place resolved once (kernel.c looks them up per op);
	 * a generic copy lowers a moved load there only where that place is
	 * still after everything the load reads: a later move may have taken
	 * the op it stood before up above the load's own operands, or chained
	 * two places into a cycle; the others are lowered where they moved
	 * to, which is always right */
	at = arena_alloc(fn->a, fn->hoists.n * sizeof *at);
	for (i = 0; i < fn->hoists.n; i++)
		at[i] = place(fn, &fn->hoists.v[i]);
	for (i = k = 0; i < fn->hoists.n; i++)
		if (place_ok(fn, &fn->hoists.v[i], at[i])) {
			fn->hoists.v[k] = fn->hoists.v[i];
			fn->hoists.v[k++].next = at[i];
		}
	fn->hoists.n = k;
}
