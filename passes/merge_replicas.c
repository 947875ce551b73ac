/*
 * merge_replicas.c: one body for a task's replicas -- pass
 * "merge-replicas".
 *
 * Sema checks a task with `replicate: n` once per replica, replica() a
 * constant, so the IR holds n task ops with the same name and replicas
 * 0 .. n-1.  When their bodies are the same ops with the same types and
 * attributes, and differ only in integer constants that are linear in
 * the replica index (value = v0 + k * d), the copies go and the first
 * takes `replicas = n`: each place where the constants differed uses
 * v0 + task_replica * d instead, task_replica being the running
 * instance's index.  A buffer the body allocates becomes one buffer of n
 * slices allocated before `tasks`, each instance using its own slice.
 * Code generation then emits the body once, and the simulator runs it as
 * n instances; each has its own warps and named barrier.  Bodies that
 * differ otherwise (an `if replica() == 0` compiled one way in one
 * replica) stay apart.  Buffers allocated inside a loop or an if of a
 * body move to its top first (the same buffer on every trip).
 * plan-smem splits a merged task again when one of its ops needs scratch
 * (it would need a copy per instance).
 * Requires: tile-level IR with calls inlined.  Counters: merged.
 */
#include "passes/passes.h"

enum { MAX_REPLICAS = 8 };

/* A place in body 0 where the replicas' operands are different
 * constants: operand `idx` of `op`, with the value of each replica. */
typedef struct Diff {
	Op *op;
	uint32_t idx;
	int64_t v[MAX_REPLICAS];
} Diff;

typedef struct Mr {
	PassCtx *pc;
	Func *f;
	Value *map;       /* replica k's values -> replica 0's */
	uint32_t mapn;
	Vec(Diff) diffs;
	int k;            /* the replica being compared */
	bool changed;
} Mr;

static bool
int_const(Func *f, Value v, int64_t *out)
{
	Op *d = ir_val(f, v)->def;
	const Attr *a;

	if (!d || d->kind != OP_CONST)
		return false;
	a = attr_find(&d->attrs, "value");
	if (!a || a->kind != ATTR_INT || !ty_is_int(ty_elem(ir_type(f, v))))
		return false;
	*out = a->i;
	return true;
}

static bool same_block(Mr *m, Block *a, Block *b);

static Diff *
diff_at(Mr *m, Op *op, uint32_t idx)
{
	uint32_t i;

	for (i = 0; i < m->diffs.n; i++)
		if (m->diffs.v[i].op == op && m->diffs.v[i].idx == idx)
			return &m->diffs.v[i];
	return NULL;
}

static bool
same_operand(Mr *m, Op *a, Op *b, uint32_t i)
{
	Value x = a->opnds[i], y = b->opnds[i], my;
	int64_t cx, cy;
	Diff *d;

	my = y < m->mapn && m->map[y] ? m->map[y] : y;
	d = diff_at(m, a, i);
	if (my == x && !d)
		return true;
	if (ir_type(m->f, x) != ir_type(m->f, y) || !int_const(m->f, x, &cx) ||
	    !int_const(m->f, y, &cy))
		return false;
	if (!d) {
		Diff n = { .op = a, .idx = i };

		n.v[0] = cx;
		vec_push(m->pc->scratch, &m->diffs, n);
		d = &vec_last(&m->diffs);
	}
	d->v[m->k] = cy;
	return true;
}

static bool
same_op(Mr *m, Op *a, Op *b)
{
	uint32_t i;

	if (a->kind != b->kind || a->nopnds != b->nopnds || a->nres != b->nres ||
	    a->nregions != b->nregions || a->attrs.n != b->attrs.n)
		return false;
	for (i = 0; i < a->nres; i++)
		if (ir_type(m->f, a->res[i]) != ir_type(m->f, b->res[i]))
			return false;
	/* a constant of another value is a difference of its uses */
	if (a->kind == OP_CONST) {
		const Attr *x = attr_find(&a->attrs, "value"),
			   *y = attr_find(&b->attrs, "value");

		if (x && y && x->kind == ATTR_INT && y->kind == ATTR_INT &&
		    x->i != y->i)
			return true;
	}
	for (i = 0; i < a->attrs.n; i++) {
		const Attr *x = &a->attrs.v[i], *y = attr_find(&b->attrs, x->name);

		if (!y || !attr_equal(x, y))
			return false;
	}
	for (i = 0; i < a->nopnds; i++)
		if (!same_operand(m, a, b, i))
			return false;
	for (i = 0; i < a->nres; i++)
		if (b->res[i] < m->mapn)
			m->map[b->res[i]] = a->res[i];
	for (i = 0; i < a->nregions; i++)
		if (!same_block(m, a->regions[i], b->regions[i]))
			return false;
	return true;
}

static bool
same_block(Mr *m, Block *a, Block *b)
{
	Op *x, *y;
	uint32_t i;

	if (a->nargs != b->nargs)
		return false;
	for (i = 0; i < a->nargs; i++) {
		if (ir_type(m->f, a->args[i]) != ir_type(m->f, b->args[i]) ||
		    b->args[i] >= m->mapn)
			return false;
		m->map[b->args[i]] = a->args[i];
	}
	for (x = a->first, y = b->first; x && y; x = x->next, y = y->next)
		if (!same_op(m, x, y))
			return false;
	return !x && !y;
}

/* Each difference linear in the replica index: v[k] = v[0] + k * d. */
static bool
linear(Mr *m, int n)
{
	uint32_t i;
	int k;

	for (i = 0; i < m->diffs.n; i++) {
		Diff *d = &m->diffs.v[i];
		int64_t step = d->v[1] - d->v[0];

		for (k = 2; k < n; k++)
			if (d->v[k] - d->v[0] != step * k)
				return false;
	}
	return true;
}

static Value
emit(Mr *m, Op *at, OpKind k, Type *t, uint32_t n, Value a, Value b)
{
	Value ops[2] = { a, b };
	Op *op = ir_op_new(m->f, k, n, ops, 1, &t, 0);

	op->loc = at->loc;
	ir_insert_before(at, op);
	return op->res[0];
}

/* Body 0 computes its differing constants from its replica index, which
 * it returns. */
static Value
rewrite(Mr *m, Op *t0)
{
	IrCtx *c = m->f->mod->ctx;
	Type *i32 = ty_scalar(c, TY_I32);
	Block *b = t0->regions[0];
	Op *ri = ir_op_new(m->f, OP_TASK_REPLICA, 0, NULL, 1, &i32, 0);
	uint32_t i;

	ri->loc = t0->loc;
	if (b->first)
		ir_insert_before(b->first, ri);
	else
		ir_append(b, ri);
	for (i = 0; i < m->diffs.n; i++) {
		Diff *d = &m->diffs.v[i];
		Value v = d->op->opnds[d->idx], r = ri->res[0], step;
		Type *t = ir_type(m->f, v), *st = ty_elem(t);
		Op *cs;

		if (st != i32)
			r = emit(m, d->op, OP_CVT, st, 1, r, 0);
		cs = ir_op_new(m->f, OP_CONST, 0, NULL, 1, &st, 0);
		attr_set_int(c, &cs->attrs, "value", d->v[1] - d->v[0]);
		cs->loc = d->op->loc;
		ir_insert_before(d->op, cs);
		step = emit(m, d->op, OP_MUL, st, 2, r, cs->res[0]);
		if (t->kind == TY_TILE)
			step = emit(m, d->op, OP_SPLAT, t, 1, step, 0);
		d->op->opnds[d->idx] = emit(m, d->op, OP_ADD, t, 2, v, step);
	}
	return ri->res[0];
}

/* A buffer allocated inside the body: one per instance, allocated before
 * `tasks` with a leading dim of n and indexed by the instance. */
static void
hoist_allocs(Mr *m, Op *tasks, Op *t0, Value ri, int n)
{
	IrCtx *c = m->f->mod->ctx;
	Op *op, *next, *a, *ix;

	for (op = t0->regions[0]->first; op; op = next) {
		Type *t, *bt;
		int64_t shape[TY_MAX_RANK + 1];
		Value ops[2];

		next = op->next;
		if (op->kind != OP_SMEM_ALLOC)
			continue;
		t = ir_type(m->f, op->res[0]);
		shape[0] = n;
		memcpy(shape + 1, t->shape, (size_t)t->rank * sizeof *shape);
		bt = ty_smem(c, t->elem, t->rank + 1, shape);
		a = ir_op_new(m->f, OP_SMEM_ALLOC, 0, NULL, 1, &bt, 0);
		a->attrs = op->attrs;
		a->loc = op->loc;
		ir_insert_before(tasks, a);
		ops[0] = a->res[0];
		ops[1] = ri;
		ix = ir_op_new(m->f, OP_SMEM_INDEX, 2, ops, 1, &t, 0);
		ix->loc = op->loc;
		ir_insert_before(op, ix);
		ir_value_set_name(m->f, ix->res[0], ir_val(m->f, op->res[0])->name);
		ir_replace_uses(m->f, op->res[0], ix->res[0]);
		ir_remove(op);
	}
}

/* Moves the buffers allocated inside loops and ifs of body b to its top
 * (an smem_alloc has no operands, and one inside a loop is the same
 * buffer on every trip), so that the replicas' buffers can be merged. */
static void
lift_allocs(Block *top, Block *b)
{
	Op *op, *next;
	uint32_t i;

	for (op = b->first; op; op = next) {
		next = op->next;
		if (op->kind == OP_SMEM_ALLOC && b != top) {
			ir_remove(op);
			ir_insert_before(top->first, op);
			continue;
		}
		for (i = 0; i < op->nregions; i++)
			lift_allocs(top, op->regions[i]);
	}
}

/* Buffers allocated anywhere but the top of the body stay per copy. */
static bool
nested_alloc(Block *b, bool top)
{
	Op *op;
	uint32_t i;

	for (op = b->first; op; op = op->next) {
		if (op->kind == OP_SMEM_ALLOC && !top)
			return true;
		for (i = 0; i < op->nregions; i++)
			if (nested_alloc(op->regions[i], false))
				return true;
	}
	return false;
}

static void
merge_group(Mr *m, Op *tasks, Op **ts, int n)
{
	int k;

	for (k = 0; k < n; k++)
		lift_allocs(ts[k]->regions[0], ts[k]->regions[0]);
	if (nested_alloc(ts[0]->regions[0], true))
		return;
	m->diffs.n = 0;
	for (k = 1; k < n; k++) {
		m->k = k;
		memset(m->map, 0, m->mapn * sizeof *m->map);
		if (!same_block(m, ts[0]->regions[0], ts[k]->regions[0]))
			return;
	}
	if (!linear(m, n))
		return;
	hoist_allocs(m, tasks, ts[0], rewrite(m, ts[0]), n);
	for (k = 1; k < n; k++)
		ir_remove(ts[k]);
	attr_remove(m->f->mod->ctx, &ts[0]->attrs, "replica");
	attr_set_int(m->f->mod->ctx, &ts[0]->attrs, "replicas", n);
	pass_stat(m->pc, "merged", (uint64_t)(n - 1));
	m->changed = true;
}

static void
merge_tasks(Mr *m, Op *tasks)
{
	Op *ts[MAX_REPLICAS], *t, *next;
	int n;

	for (t = tasks->regions[0]->first; t; t = next) {
		const char *name = attr_str(&t->attrs, "name");

		next = t->next;
		if (t->kind != OP_TASK || attr_int(&t->attrs, "replica", 0) != 0 ||
		    attr_has(&t->attrs, "replicas"))
			continue;
		n = 0;
		ts[n++] = t;
		while (next && next->kind == OP_TASK && n < MAX_REPLICAS &&
		       attr_str(&next->attrs, "name") == name &&
		       attr_int(&next->attrs, "replica", 0) == n) {
			ts[n++] = next;
			next = next->next;
		}
		if (n > 1)
			merge_group(m, tasks, ts, n);
	}
}

bool
pass_merge_replicas(PassCtx *pc, Func *f)
{
	Mr m = { .pc = pc, .f = f };
	uint32_t i, n;
	Op **tasks;

	if (f->kind != FN_KERNEL)
		return false;
	tasks = ir_find_ops(f, OP_TASKS, pc->scratch, &n);
	if (!n)
		return false;
	m.mapn = f->vals.n;
	m.map = arena_alloc(pc->scratch, m.mapn * sizeof *m.map);
	for (i = 0; i < n; i++)
		merge_tasks(&m, tasks[i]);
	return m.changed;
}
