/*
 * lower_pipes.c: pipes to mbarriers -- pass "lower-pipes".
 *
 * A pipe of depth D becomes what a hand-written pipeline keeps:
 *   pipe_create      two barrier arrays, `full` (one arrival: the
 *                    producer's commit, plus the bytes its TMA loads
 *                    count) and `empty` (one arrival per consumer: each
 *                    task that calls release, replicas apart, and the
 *                    code outside tasks if it does), D each;
 *   pipe_acquire     n = the agent's count of acquires so far, slot
 *                    s = n % D, `mbar_wait(empty[s], (n / D) & 1 ^ 1)`
 *                    (a new barrier's phase of parity 1 counts as done:
 *                    the first pass finds every slot empty); the result
 *                    is s;
 *   pipe_consume     the same with its own count on `full[s]`, parity
 *                    (n / D) & 1;
 *   pipe_bar         `mbar_at(full, s)` (a tma_load's barrier);
 *   pipe_commit      `mbar_arrive(full[s])`; pipe_release
 *                    `mbar_arrive(empty[s])`.
 * Each agent (the code outside tasks, every task) keeps its own counts,
 * one per pipe and side, starting at 0: loop-carried values of the loops
 * (for, while, sched_for) and results of the ifs that contain an acquire
 * or a consume, as a hand-written kernel carries its slot and phase.
 * A pipe whose slots are acquired and never committed, consumed and never
 * released, or filled and never consumed is an error (the kernel would
 * hang), and so is a release of a slot that a dot_async in flight reads.
 * Requires: tile-level IR whose pipe ops use pipes made by pipe_create in
 * the function.  Produces: no pipe ops.  Counters: pipes, waits.
 */
#include "passes/passes.h"

enum { ACQ, CON };  /* the producer's and the consumer's counts */

typedef struct PipeInfo {
	Value pipe;
	int64_t depth;
	Value full, empty;  /* the barrier arrays */
} PipeInfo;

typedef struct Count {
	Value pipe;
	int side;
	Value cur;  /* the count where the walk is */
} Count;

typedef struct Lp {
	PassCtx *pc;
	Func *f;
	Type *i32, *mbar;
	Vec(PipeInfo) pipes;
	Value consts[4];  /* 0, 1 and two depths, made once at the top */
	int64_t cval[4];
	uint64_t waits;
} Lp;

static PipeInfo *
info(Lp *l, Value pipe)
{
	uint32_t i;

	for (i = 0; i < l->pipes.n; i++)
		if (l->pipes.v[i].pipe == pipe)
			return &l->pipes.v[i];
	return NULL;
}

static Value
emit(Lp *l, Op *at, OpKind k, Type *t, uint32_t n, Value a, Value b)
{
	Value ops[2] = { a, b };
	Op *op = ir_op_new(l->f, k, n, ops, t ? 1 : 0, &t, 0);

	op->loc = at->loc;
	ir_insert_before(at, op);
	return t ? op->res[0] : 0;
}

/* An i32 constant at the top of the function, shared by every use. */
static Value
iconst(Lp *l, int64_t v)
{
	Op *op;
	int i;

	for (i = 0; i < 4 && l->consts[i]; i++)
		if (l->cval[i] == v)
			return l->consts[i];
	op = ir_op_new(l->f, OP_CONST, 0, NULL, 1, &l->i32, 0);
	attr_set_int(l->f->mod->ctx, &op->attrs, "value", v);
	if (l->f->body->first)
		ir_insert_before(l->f->body->first, op);
	else
		ir_append(l->f->body, op);
	if (i < 4) {
		l->consts[i] = op->res[0];
		l->cval[i] = v;
	}
	return op->res[0];
}

/* ---- consumers ------------------------------------------------------------ */

typedef struct Find {
	Value pipe;
	OpKind kind;
	bool found;
} Find;

static void
find_op(Op *op, void *ud)
{
	Find *x = ud;

	if (op->kind == x->kind && op->nopnds && op->opnds[0] == x->pipe)
		x->found = true;
}

/* Releases outside tasks count as one consumer, and so does every task
 * that releases (the simulator counts them the same way). */
static bool
outside_tasks(Block *b, Value pipe, OpKind kind)
{
	Op *op;
	uint32_t i;

	for (op = b->first; op; op = op->next) {
		if (op->kind == kind && op->nopnds && op->opnds[0] == pipe)
			return true;
		if (op->kind == OP_TASKS)
			continue;
		for (i = 0; i < op->nregions; i++)
			if (outside_tasks(op->regions[i], pipe, kind))
				return true;
	}
	return false;
}

typedef struct Consumers {
	Value pipe;
	int64_t n;
} Consumers;

static void
count_task(Op *op, void *ud)
{
	Consumers *c = ud;
	Find x = { c->pipe, OP_PIPE_RELEASE, false };

	if (op->kind != OP_TASK)
		return;
	ir_walk_block(op->regions[0], find_op, &x);
	if (x.found)  /* every instance of a merged task releases */
		c->n += attr_int(&op->attrs, "replicas", 1);
}

static int64_t
consumers(Lp *l, Value pipe)
{
	Consumers c = { pipe, 0 };

	ir_walk(l->f, count_task, &c);
	c.n += outside_tasks(l->f->body, pipe, OP_PIPE_RELEASE);
	return c.n ? c.n : 1;
}

static Value
bars(Lp *l, Op *at, const char *name, int64_t depth, int64_t arrive)
{
	Type *t = ty_mbar(l->f->mod->ctx, depth);
	Op *op = ir_op_new(l->f, OP_MBAR_ALLOC, 0, NULL, 1, &t, 0);

	attr_set_int(l->f->mod->ctx, &op->attrs, "arrive", arrive);
	op->loc = at->loc;
	ir_insert_before(at, op);
	ir_value_set_name(l->f, op->res[0], name);
	return op->res[0];
}

static void
create(Lp *l, Op *op)
{
	const char *pn = ir_val(l->f, op->res[0])->name;
	PipeInfo p = { .pipe = op->res[0],
		       .depth = attr_int(&op->attrs, "depth", 1) };
	Arena *a = l->f->mod->ctx->arena;

	if (!pn)
		pn = "pipe";
	p.full = bars(l, op, arena_printf(a, "%s.full", pn), p.depth, 1);
	p.empty = bars(l, op, arena_printf(a, "%s.empty", pn), p.depth,
		       consumers(l, op->res[0]));
	vec_push(l->pc->scratch, &l->pipes, p);
}

/* ---- counts through control flow ------------------------------------------ */

typedef Vec(Count) Counts;

/* Does b (or a region inside it) acquire or consume from a pipe? */
static bool
uses_counts(Block *b, Counts *cs, uint32_t k)
{
	Op *op;
	uint32_t i;

	for (op = b->first; op; op = op->next) {
		if ((op->kind == OP_PIPE_ACQUIRE || op->kind == OP_PIPE_CONSUME) &&
		    op->opnds[0] == cs->v[k].pipe &&
		    cs->v[k].side == (op->kind == OP_PIPE_CONSUME))
			return true;
		if (op->kind == OP_TASKS)
			continue;  /* tasks keep counts of their own */
		for (i = 0; i < op->nregions; i++)
			if (uses_counts(op->regions[i], cs, k))
				return true;
	}
	return false;
}

static Count *
count_of(Counts *cs, Value pipe, int side)
{
	uint32_t i;

	for (i = 0; i < cs->n; i++)
		if (cs->v[i].pipe == pipe && cs->v[i].side == side)
			return &cs->v[i];
	return NULL;
}

static void walk(Lp *l, Block *b, Counts *cs);

/* Every count a region op's regions use becomes a loop-carried value (a
 * loop: an init operand, an argument of each region, the op's result) or
 * a result (an if); each region's terminator passes on its final count. */
static void
thread_region_op(Lp *l, Op *op, Counts *cs)
{
	bool loop = op->kind != OP_IF;
	uint32_t nk = cs->n, k, r, nused = 0, j;
	bool *used = arena_alloc(l->pc->scratch, (nk + 1) * sizeof *used);

	for (k = 0; k < nk; k++) {
		used[k] = false;
		for (r = 0; r < op->nregions; r++)
			used[k] |= uses_counts(op->regions[r], cs, k);
		nused += used[k];
	}
	for (k = 0; k < nk && loop; k++)
		if (used[k]) {
			ir_op_add_operand(op, cs->v[k].cur);
			for (r = 0; r < op->nregions; r++)
				ir_block_add_arg(op->regions[r], l->i32);
		}
	for (r = 0; r < op->nregions; r++) {
		Block *b = op->regions[r];
		Counts in = { 0 };

		for (k = 0, j = 0; k < nk; k++) {
			Count c = cs->v[k];

			if (used[k] && loop)
				c.cur = b->args[b->nargs - nused + j++];
			vec_push(l->pc->scratch, &in, c);
		}
		walk(l, b, &in);
		if (!nused)
			continue;
		if (!b->last || !op_has(b->last, F_TERM)) {
			ir_error(l->pc->diag, l->f, op, "malformed IR: a region without its "
				 "terminator");
			l->pc->failed = true;
			return;
		}
		for (k = 0; k < nk; k++)
			if (used[k])
				ir_op_add_operand(b->last, in.v[k].cur);
	}
	for (k = 0; k < nk; k++)
		if (used[k])
			cs->v[k].cur = ir_op_add_result(op, l->i32);
}

/* Counts start at 0 at the top of their agent's code, for every pipe and
 * side it acquires or consumes from. */
static void
start_counts(Lp *l, Block *b, Counts *cs)
{
	Op *op;
	uint32_t i;

	for (op = b->first; op; op = op->next) {
		if ((op->kind == OP_PIPE_ACQUIRE || op->kind == OP_PIPE_CONSUME) &&
		    !count_of(cs, op->opnds[0], op->kind == OP_PIPE_CONSUME)) {
			Count c = { op->opnds[0], op->kind == OP_PIPE_CONSUME,
				    iconst(l, 0) };

			vec_push(l->pc->scratch, cs, c);
		}
		if (op->kind == OP_TASKS)
			continue;
		for (i = 0; i < op->nregions; i++)
			start_counts(l, op->regions[i], cs);
	}
}

/* A counted op: the wait, and the count's next value. */
static void
counted(Lp *l, Op *op, Counts *cs)
{
	PipeInfo *p = info(l, op->opnds[0]);
	int side = op->kind == OP_PIPE_CONSUME;
	Count *c = count_of(cs, op->opnds[0], side);
	Value d, slot, phase, bar;
	Op *w;

	if (NEVER(!c || !p))
		return;
	d = iconst(l, p->depth);
	slot = emit(l, op, OP_REM, l->i32, 2, c->cur, d);
	phase = emit(l, op, OP_AND, l->i32, 2,
		     emit(l, op, OP_DIV, l->i32, 2, c->cur, d), iconst(l, 1));
	if (!side)
		phase = emit(l, op, OP_XOR, l->i32, 2, phase, iconst(l, 1));
	bar = emit(l, op, OP_MBAR_AT, l->mbar, 2, side ? p->full : p->empty, slot);
	w = ir_op_new(l->f, OP_MBAR_WAIT, 2, (Value[]){ bar, phase }, 0, NULL, 0);
	w->loc = op->loc;
	ir_insert_before(op, w);
	c->cur = emit(l, op, OP_ADD, l->i32, 2, c->cur, iconst(l, 1));
	ir_replace_uses(l->f, op->res[0], slot);
	ir_value_set_name(l->f, slot, ir_val(l->f, op->res[0])->name);
	ir_remove(op);
	l->waits++;
}

static void
arrive(Lp *l, Op *op, bool full)
{
	PipeInfo *p = info(l, op->opnds[0]);
	Value bar = emit(l, op, OP_MBAR_AT, l->mbar, 2, full ? p->full : p->empty,
			 op->opnds[1]);

	if (op->kind == OP_PIPE_BAR) {
		ir_replace_uses(l->f, op->res[0], bar);
	} else {
		Op *a = ir_op_new(l->f, OP_MBAR_ARRIVE, 1, &bar, 0, NULL, 0);

		a->loc = op->loc;
		ir_insert_before(op, a);
	}
	ir_remove(op);
}

static void
walk(Lp *l, Block *b, Counts *cs)
{
	Op *op, *next;
	uint32_t r;

	for (op = b->first; op; op = next) {
		next = op->next;
		switch (op->kind) {
		case OP_PIPE_CREATE:
			create(l, op);
			break;
		case OP_PIPE_ACQUIRE: case OP_PIPE_CONSUME:
			counted(l, op, cs);
			break;
		case OP_PIPE_COMMIT: case OP_PIPE_BAR:
			arrive(l, op, true);
			break;
		case OP_PIPE_RELEASE:
			arrive(l, op, false);
			break;
		case OP_TASKS:
			/* every task is an agent of its own: fresh counts */
			for (r = 0; r < op->nregions; r++) {
				Op *t;

				for (t = op->regions[r]->first; t; t = t->next) {
					Counts own = { 0 };
					Block *tb = t->nregions ? t->regions[0] : NULL;

					if (!tb || !tb->first)
						continue;
					start_counts(l, tb, &own);
					walk(l, tb, &own);
				}
			}
			break;
		default:
			if (op->nregions)
				thread_region_op(l, op, cs);
			break;
		}
	}
}

static void
find_pipe(Op *op, void *ud)
{
	if (op->kind == OP_PIPE_CREATE)
		*(bool *)ud = true;
}

/* ---- what the protocol needs ------------------------------------------- */

typedef struct Uses {
	Value pipe;
	Op *first[4];  /* the first acquire, commit, consume, release */
} Uses;

static void
find_uses(Op *op, void *ud)
{
	Uses *u = ud;
	int k = op->kind == OP_PIPE_ACQUIRE ? 0 : op->kind == OP_PIPE_COMMIT ? 1
		: op->kind == OP_PIPE_CONSUME ? 2 : op->kind == OP_PIPE_RELEASE ? 3
		: -1;

	if (k >= 0 && op->nopnds && op->opnds[0] == u->pipe && !u->first[k])
		u->first[k] = op;
}

/* A pipe whose slots are taken and never handed on hangs the kernel:
 * slots acquired that nothing commits (the consumers wait forever),
 * consumed that nothing releases, or filled that nothing consumes (the
 * producer waits forever once the slots are used).  Errors at the first
 * such use; false if any. */
static bool
check_pipe(Lp *l, Op *create_op)
{
	Uses u = { .pipe = create_op->res[0] };
	const char *n = ir_val(l->f, u.pipe)->name;
	int64_t d = attr_int(&create_op->attrs, "depth", 1);
	bool ok = true;

	if (!n)
		n = "pipe";
	ir_walk(l->f, find_uses, &u);
	if (u.first[0] && !u.first[1]) {
		ir_error(l->pc->diag, l->f, u.first[0], "'%s.acquire()' takes a "
			 "slot that nothing commits: the consumers of pipe '%s' "
			 "would wait forever; call '%s.commit(s)' once the slot "
			 "is filled", n, n, n);
		ok = false;
	}
	if (u.first[2] && !u.first[3]) {
		ir_error(l->pc->diag, l->f, u.first[2], "'%s.consume()' takes a "
			 "slot that nothing releases: the producer of pipe '%s' "
			 "would wait forever once its %lld slot%s are used; call "
			 "'%s.release(s)' once the slot is read", n, n,
			 (long long)d, d == 1 ? "" : "s", n);
		ok = false;
	}
	if (u.first[0] && !u.first[2]) {
		ir_error(l->pc->diag, l->f, u.first[0], "nothing consumes pipe "
			 "'%s': its producer would wait forever once its %lld "
			 "slot%s are filled; read them with '%s.consume()'", n,
			 (long long)d, d == 1 ? "" : "s", n);
		ok = false;
	}
	return ok;
}

/* Whether view v is of slot s (a field of it, sliced or transposed). */
static bool
of_slot(Func *f, Value v, Value s, int depth)
{
	Op *d = ir_val(f, v)->def;

	if (!d || depth > 8)
		return false;
	if (d->kind == OP_SMEM_INDEX)
		return d->nopnds > 1 && d->opnds[1] == s;
	if (d->kind == OP_SMEM_SLICE || d->kind == OP_SMEM_TRANS)
		return of_slot(f, d->opnds[0], s, depth + 1);
	return false;
}

/* A release of slot s while a dot_async that reads it may be in flight
 * (in its block: the dot_asyncs after the last dot_wait before the
 * release, and the `pending` of that wait's before it): the producer
 * may refill the slot under the tensor cores.  An error; false if so. */
static bool
check_release(Lp *l, Op *rel)
{
	Value s = rel->opnds[1];
	const char *n = ir_val(l->f, rel->opnds[0])->name;
	int64_t left = -1;  /* dot_asyncs still in flight before the wait */
	Op *op;

	for (op = rel->prev; op && left != 0; op = op->prev) {
		if (op->kind == OP_DOT_WAIT && left < 0) {
			left = attr_int(&op->attrs, "pending", 0);
			continue;
		}
		if (op->kind != OP_DOT_ASYNC)
			continue;
		if (left > 0)
			left--;
		if (of_slot(l->f, op->opnds[0], s, 0) ||
		    of_slot(l->f, op->opnds[1], s, 0)) {
			ir_error(l->pc->diag, l->f, rel, "'%s.release(s)' hands "
				 "back a slot that the dot_async at line %d may "
				 "still read: retire it first (dot_wait(acc, "
				 "pending: 0)), or keep one MMA in flight and "
				 "release the previous slot after dot_wait(acc, "
				 "pending: 1)", n ? n : "pipe", op->loc.line);
			return false;
		}
	}
	return true;
}

typedef struct Protocol {
	Lp *l;
	bool ok;
} Protocol;

static void
check_op(Op *op, void *ud)
{
	Protocol *p = ud;

	if ((op->kind == OP_PIPE_CREATE && !check_pipe(p->l, op)) ||
	    (op->kind == OP_PIPE_RELEASE && op->nopnds == 2 &&
	     !check_release(p->l, op)))
		p->ok = false;
}

/* Every pipe's protocol and every release; false after an error. */
static bool
protocol_ok(Lp *l)
{
	Protocol p = { l, true };

	ir_walk(l->f, check_op, &p);
	return p.ok;
}

bool
pass_lower_pipes(PassCtx *pc, Func *f)
{
	Lp l = { .pc = pc, .f = f };
	Counts top = { 0 };
	bool any = false;
	uint32_t i;

	ir_walk(f, find_pipe, &any);
	if (!any)
		return false;
	if (!protocol_ok(&l))
		return false;
	l.i32 = ty_scalar(f->mod->ctx, TY_I32);
	l.mbar = ty_mbar(f->mod->ctx, -1);
	start_counts(&l, f->body, &top);
	walk(&l, f->body, &top);
	/* the pipes themselves go last: their buffers stay */
	for (i = 0; i < l.pipes.n; i++) {
		Op *def = ir_val(f, l.pipes.v[i].pipe)->def;

		if (def)
			ir_remove(def);
	}
	pass_stat(pc, "pipes", l.pipes.n);
	pass_stat(pc, "waits", l.waits);
	return true;
}
