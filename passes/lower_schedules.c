/*
 * lower_schedules.c: tile schedules to loops -- pass "lower-schedules".
 *
 * `static` strides a persistent grid over the tiles: a program's tiles
 * are its linear index, then every number-of-programs after it, so
 *
 *   %w = sched_create %n {kind = static}
 *   sched_for %w, inits { ^(%t, iters): ... }
 *
 * becomes
 *
 *   %lin = program_id(0) + num_programs(0) * (program_id(1) + ...)
 *   %np  = num_programs(0) * num_programs(1) * num_programs(2)
 *   for %lin, %n, %np, inits { ^(%t, iters): ... }
 *
 * in every agent that iterates it (each task sees the same tiles in the
 * same order).
 *
 * `dynamic` (and `clc` on targets without Cluster Launch Control) claims
 * tiles from a counter in the kernel's workspace: a pointer parameter the
 * runtime appends (`workspace` names it, `workspace.bytes` its size; a
 * derived parameter) and zeroes before every launch, one i32 counter per
 * schedule.  Where one agent iterates the schedule, its loop is
 *
 *   while (%t = -1, iters, %i = 0) {
 *     %c = atomic add %counter, 1;  condition %c < %n, %c, iters, %i
 *   } { ^(%t, iters, %i): ...; yield %t, iters', %i + 1 }
 *
 * Where several agents iterate it, one claims -- the first that runs as
 * one instance (a merged task of replicas is split again where all are
 * merged) -- and broadcasts through a ring of R one-int slots in shared
 * memory, with a `full` barrier (one arrival) and an `empty` barrier (one
 * arrival per reading instance) per slot, slot i % R and parity
 * (i / R) & 1 as pipes keep them:
 *
 *   the claimer: mbar_wait empty[s], parity ^ 1;
 *            %c = atomic add %counter, 1; smem_store ring[s], %c;
 *            mbar_arrive full[s]; condition %c < %n, ...
 *   the others: mbar_wait full[s], parity; %c = smem_load ring[s];
 *            mbar_arrive empty[s]; condition %c < %n, ...
 *
 * so every agent sees the same tiles in the same order and the claimer
 * runs at most R claims ahead.  The last claim (past the tiles) ends every
 * agent's loop.  Such a schedule is iterated once per agent, not inside a
 * loop or an if (the ring counts on every agent's arrivals).
 *
 * Each lowered loop's body begins with `sched_tile %tile, %ntiles`: no
 * code, but the simulator checks with it that every agent gets every tile
 * once.  The kernel is marked `persistent`: the runtime launches no more
 * programs than the device runs at once (libtlxrt, docs/runtime.md).
 * `clc` on sm_100a is Cluster Launch Control (lower_clc, below).
 * Requires: tile-level IR.  Counters: schedules.
 */
#include "passes/passes.h"

typedef struct Ls {
	PassCtx *pc;
	Func *f;
	Type *i32;
} Ls;

static Value
emit(Ls *l, Op *at, OpKind k, uint32_t n, Value a, Value b, int64_t axis)
{
	Value ops[2] = { a, b };
	Op *op = ir_op_new(l->f, k, n, ops, 1, &l->i32, 0);

	op->loc = at->loc;
	if (k == OP_PROGRAM_ID || k == OP_NUM_PROGRAMS)
		attr_set_int(l->f->mod->ctx, &op->attrs, "axis", axis);
	ir_insert_after(at, op);
	return op->res[0];
}

/* After `at`: the program's linear index and the number of programs. */
static Op *
linear(Ls *l, Op *at, Value *lin, Value *np)
{
	Value pid[3], n[3];
	int d;

	for (d = 0; d < 3; d++) {
		pid[d] = emit(l, at, OP_PROGRAM_ID, 0, 0, 0, d);
		at = ir_val(l->f, pid[d])->def;
		n[d] = emit(l, at, OP_NUM_PROGRAMS, 0, 0, 0, d);
		at = ir_val(l->f, n[d])->def;
	}
	/* lin = pid0 + n0 * (pid1 + n1 * pid2) */
	*lin = emit(l, at, OP_MUL, 2, n[1], pid[2], 0);
	at = ir_val(l->f, *lin)->def;
	*lin = emit(l, at, OP_ADD, 2, pid[1], *lin, 0);
	at = ir_val(l->f, *lin)->def;
	*lin = emit(l, at, OP_MUL, 2, n[0], *lin, 0);
	at = ir_val(l->f, *lin)->def;
	*lin = emit(l, at, OP_ADD, 2, pid[0], *lin, 0);
	at = ir_val(l->f, *lin)->def;
	*np = emit(l, at, OP_MUL, 2, n[0], n[1], 0);
	at = ir_val(l->f, *np)->def;
	*np = emit(l, at, OP_MUL, 2, *np, n[2], 0);
	return ir_val(l->f, *np)->def;
}

typedef struct Sched {
	Op *create;
	Value lin, np;
} Sched;

/* `sched_tile %tile, %ntiles {schedule}` first in a lowered loop's body:
 * no code, the simulator's check that each agent gets every tile once. */
static void
mark_tile(Ls *l, Op *create, Block *body)
{
	IrCtx *c = l->f->mod->ctx;
	Value ops[2] = { body->args[0], create->opnds[0] };
	const char *n = ir_val(l->f, create->res[0])->name;
	Op *op = ir_op_new(l->f, OP_SCHED_TILE, 2, ops, 0, NULL, 0);

	attr_set_str(c, &op->attrs, "schedule", n ? n : "tiles");
	op->loc = create->loc;
	if (body->first)
		ir_insert_before(body->first, op);
	else
		ir_append(body, op);
}

/* sched_for over a static schedule s: a for over the program's tiles. */
static void
to_for(Ls *l, Op *sf, Sched *s)
{
	Func *f = l->f;
	uint32_t n = sf->nopnds + 2, i;
	Value *ops = arena_alloc(l->pc->scratch, n * sizeof *ops);
	Type **rt = arena_alloc(l->pc->scratch, (sf->nres + 1) * sizeof *rt);
	Op *fo;

	ops[0] = s->lin;
	ops[1] = s->create->opnds[0];
	ops[2] = s->np;
	for (i = 1; i < sf->nopnds; i++)
		ops[i + 2] = sf->opnds[i];
	for (i = 0; i < sf->nres; i++)
		rt[i] = ir_type(f, sf->res[i]);
	fo = ir_op_new(f, OP_FOR, n, ops, sf->nres, rt, 1);
	fo->loc = sf->loc;
	fo->tloc = sf->tloc;
	fo->regions[0] = sf->regions[0];
	fo->regions[0]->parent = fo;
	ir_insert_before(sf, fo);
	mark_tile(l, s->create, fo->regions[0]);
	for (i = 0; i < sf->nres; i++) {
		ir_value_set_name(f, fo->res[i], ir_val(f, sf->res[i])->name);
		ir_replace_uses(f, sf->res[i], fo->res[i]);
	}
	ir_remove(sf);
}

/* ---- dynamic ---------------------------------------------------------------- */

enum { RING = 4 };  /* claims the claimer may run ahead of the slowest agent */

typedef struct Dyn {
	Op *create;
	Value counter;           /* ptr<i32> into the workspace */
	Value ring, full, empty; /* K > 1 */
	Op **loops;              /* its sched_fors, the claimer's first */
	uint32_t k;
	int64_t readers;         /* agent instances other than the claimer */
} Dyn;

/* An op of kind k on n of (a, b) before `at`, at its location; its
 * result (0 when t is NULL, an op without one). */
static Value
emit_before(Ls *l, Op *at, OpKind k, Type *t, uint32_t n, Value a, Value b)
{
	Builder bd = { .fn = l->f, .before = at, .loc = at->loc };
	Value ops[2] = { a, b };
	Op *op = b_op(&bd, k, n, ops, t);

	return t ? op->res[0] : 0;
}

static Value
const_before(Ls *l, Op *at, int64_t v)
{
	Builder bd = { .fn = l->f, .before = at, .loc = at->loc };

	return b_const_int(&bd, l->i32, v);
}

/* The task a sched_for runs in (NULL: outside tasks), and whether a loop
 * or an if encloses it within that agent. */
static Op *
agent_of(Op *sf, bool *nested)
{
	Op *p;

	*nested = false;
	for (p = sf->parent ? sf->parent->parent : NULL; p;
	     p = p->parent ? p->parent->parent : NULL) {
		if (p->kind == OP_TASK)
			return p;
		if (p->kind == OP_FOR || p->kind == OP_WHILE || p->kind == OP_IF ||
		    p->kind == OP_SCHED_FOR)
			*nested = true;
	}
	return NULL;
}

static const char *
agent_name(Ls *l, Op *task)
{
	const char *n = task ? attr_str(&task->attrs, "name") : NULL;

	return n ? arena_printf(l->pc->scratch, "task '%s'", n) : "the kernel";
}

/* Checks that every agent iterates d's schedule at most once, at its top
 * level when several do. */
static bool
dyn_check(Ls *l, Dyn *d)
{
	uint32_t i, j;
	bool nested;

	for (i = 0; i < d->k; i++) {
		Op *ti = agent_of(d->loops[i], &nested);

		if (nested) {
			ir_error(l->pc->diag, l->f, d->loops[i], "%s iterates "
				 "a %s tile schedule inside a loop or an if: "
				 "iterate it once, outside loops and ifs (each "
				 "claim takes tiles for good)", agent_name(l, ti),
				 attr_str(&d->create->attrs, "kind"));
			return false;
		}
		if (d->readers > 0 && ti) {
			int64_t w = attr_int(&ti->attrs, "warps", 1);

			if (w & (w - 1)) {
				ir_error(l->pc->diag, l->f, d->loops[i], "task "
					 "'%s' has %lld warps: tasks that share "
					 "a %s tile schedule pass its tiles "
					 "through shared memory, which needs 1, "
					 "2, 4, 8, 16 or 32 warps",
					 attr_str(&ti->attrs, "name"),
					 (long long)w,
					 attr_str(&d->create->attrs, "kind"));
				return false;
			}
		}
		for (j = 0; j < i; j++)
			if (agent_of(d->loops[j], &nested) == ti) {
				ir_error(l->pc->diag, l->f, d->loops[i], "%s "
					 "iterates this tile schedule a second "
					 "time: each task iterates a %s "
					 "schedule once", agent_name(l, ti),
					 attr_str(&d->create->attrs, "kind"));
				return false;
			}
	}
	return true;
}

/* Use i of a ring of RING slots, before `at`: its slot i % RING, and in
 * *ph the parity of its round, (i / RING) & 1. */
static Value
ring_slot(Ls *l, Op *at, Value i, Value *ph)
{
	Value slot = emit_before(l, at, OP_REM, l->i32, 2, i,
				 const_before(l, at, RING));
	/* one op built per statement: the order of a call's arguments is
	 * the compiler's (gcc and clang differ) */
	Value one = const_before(l, at, 1);
	Value q = emit_before(l, at, OP_DIV, l->i32, 2, i,
			      const_before(l, at, RING));

	*ph = emit_before(l, at, OP_AND, l->i32, 2, q, one);
	return slot;
}

/* The claim of agent j's iteration i in its condition region (before
 * `at`): the tile index, the same for every agent. */
static Value
claim(Ls *l, Dyn *d, uint32_t j, Op *at, Value i)
{
	IrCtx *c = l->f->mod->ctx;
	Type *mb = ty_mbar(c, -1), *t1;
	int64_t one = 1;
	Value slot, ph, bar, view, v;
	Op *op;

	if (!d->readers) {
		Value ops[2] = { d->counter, const_before(l, at, 1) };

		op = ir_op_new(l->f, OP_ATOMIC, 2, ops, 1, &l->i32, 0);
		attr_set_sym(c, &op->attrs, "kind", "add");
		op->loc = at->loc;
		ir_insert_before(at, op);
		return op->res[0];
	}
	t1 = ty_tile(c, l->i32, 1, &one);
	slot = ring_slot(l, at, i, &ph);
	view = emit_before(l, at, OP_SMEM_INDEX, ty_smem(c, l->i32, 1, &one), 2,
			   d->ring, slot);
	if (j == 0) {
		Value ops[2] = { d->counter, const_before(l, at, 1) };

		bar = emit_before(l, at, OP_MBAR_AT, mb, 2, d->empty, slot);
		emit_before(l, at, OP_MBAR_WAIT, NULL, 2, bar,
			    emit_before(l, at, OP_XOR, l->i32, 2, ph,
					const_before(l, at, 1)));
		op = ir_op_new(l->f, OP_ATOMIC, 2, ops, 1, &l->i32, 0);
		attr_set_sym(c, &op->attrs, "kind", "add");
		op->loc = at->loc;
		ir_insert_before(at, op);
		emit_before(l, at, OP_SMEM_STORE, NULL, 2, view,
			    emit_before(l, at, OP_SPLAT, t1, 1, op->res[0], 0));
		bar = emit_before(l, at, OP_MBAR_AT, mb, 2, d->full, slot);
		emit_before(l, at, OP_MBAR_ARRIVE, NULL, 1, bar, 0);
		return op->res[0];
	}
	bar = emit_before(l, at, OP_MBAR_AT, mb, 2, d->full, slot);
	emit_before(l, at, OP_MBAR_WAIT, NULL, 2, bar, ph);
	v = emit_before(l, at, OP_SMEM_LOAD, t1, 1, view, 0);
	op = ir_op_new(l->f, OP_REDUCE, 1, &v, 1, &l->i32, 0);
	attr_set_sym(c, &op->attrs, "kind", "sum");
	attr_set_int(c, &op->attrs, "axis", 0);
	op->loc = at->loc;
	ir_insert_before(at, op);
	bar = emit_before(l, at, OP_MBAR_AT, mb, 2, d->empty, slot);
	emit_before(l, at, OP_MBAR_ARRIVE, NULL, 1, bar, 0);
	return op->res[0];
}

/* A while before sched_for sf carrying (tile, sf's iters..., i), from
 * (tile0, sf's inits, 0); its condition region has the block arguments
 * and nothing else, its body is sf's with i appended.  Types go to rt
 * (n = sf->nopnds + 1 of them). */
static Op *
new_while(Ls *l, Op *sf, Value tile0, Type **rt)
{
	Func *f = l->f;
	uint32_t n = sf->nopnds + 1, i;
	Value *ops = arena_alloc(l->pc->scratch, (n + 1) * sizeof *ops);
	Op *wo;

	ops[0] = tile0;
	for (i = 1; i < sf->nopnds; i++)
		ops[i] = sf->opnds[i];
	ops[n - 1] = const_before(l, sf, 0);
	for (i = 0; i < n; i++)
		rt[i] = ir_type(f, ops[i]);
	wo = ir_op_new(f, OP_WHILE, n, ops, n, rt, 2);
	wo->loc = sf->loc;
	wo->tloc = sf->tloc;
	ir_insert_before(sf, wo);
	for (i = 0; i < n; i++)
		ir_block_add_arg(wo->regions[0], rt[i]);
	wo->regions[1] = sf->regions[0];
	wo->regions[1]->parent = wo;
	ir_block_add_arg(wo->regions[1], l->i32);
	return wo;
}

/* Ends the body of while wo (from sf) with `yield tile, iters', i + 1`
 * in place of sf's yield, and puts wo's results in place of sf's. */
static void
end_while(Ls *l, Op *sf, Op *wo, Value tile)
{
	Func *f = l->f;
	Block *body = wo->regions[1];
	Op *y = body->last, *ny;
	uint32_t n = sf->nopnds + 1, i;
	Value *ops = arena_alloc(l->pc->scratch, (n + 1) * sizeof *ops);
	Value iv = body->args[body->nargs - 1];

	for (i = 0; i < y->nopnds; i++)
		ops[i + 1] = y->opnds[i];
	ops[0] = tile;
	ops[n - 1] = emit_before(l, y, OP_ADD, l->i32, 2, iv, const_before(l, y, 1));
	ny = ir_op_new(f, OP_YIELD, n, ops, 0, NULL, 0);
	ny->loc = y->loc;
	ir_insert_before(y, ny);
	ir_remove(y);
	for (i = 0; i < sf->nres; i++) {
		ir_value_set_name(f, wo->res[i + 1], ir_val(f, sf->res[i])->name);
		ir_replace_uses(f, sf->res[i], wo->res[i + 1]);
	}
	ir_remove(sf);
}

/* sched_for j of d as a while over the claims. */
static void
to_while(Ls *l, Dyn *d, uint32_t j)
{
	Func *f = l->f;
	IrCtx *c = f->mod->ctx;
	Op *sf = d->loops[j], *wo, *cond;
	uint32_t n = sf->nopnds + 1, i;
	Value *co = arena_alloc(l->pc->scratch, (n + 2) * sizeof *co);
	Type **rt = arena_alloc(l->pc->scratch, (n + 1) * sizeof *rt);
	Block *cb;
	Value tile, ok;

	/* (tile, iters..., i); the condition claims the next tile */
	wo = new_while(l, sf, const_before(l, sf, -1), rt);
	cb = wo->regions[0];
	cond = ir_op_new(f, OP_CONDITION, 0, NULL, 0, NULL, 0);
	cond->loc = sf->loc;
	ir_append(cb, cond);
	tile = claim(l, d, j, cond, cb->args[n - 1]);
	ok = emit_before(l, cond, OP_CMP, ty_scalar(c, TY_I1), 2, tile,
			 d->create->opnds[0]);
	attr_set_sym(c, &ir_val(f, ok)->def->attrs, "pred", "lt");
	ir_remove(cond);
	co[0] = ok;
	co[1] = tile;
	for (i = 1; i < n; i++)
		co[i + 1] = cb->args[i];
	cond = ir_op_new(f, OP_CONDITION, n + 1, co, 0, NULL, 0);
	cond->loc = sf->loc;
	ir_append(cb, cond);
	/* the body: the loop's, the tile as it came */
	mark_tile(l, d->create, wo->regions[1]);
	end_while(l, sf, wo, wo->regions[1]->args[0]);
}

/* The workspace parameter (made once per kernel). */
static Value
workspace(Ls *l, int64_t bytes)
{
	Func *f = l->f;
	IrCtx *c = f->mod->ctx;
	Value ws;

	if (attr_has(&f->attrs, "workspace")) {
		ws = f->body->args[attr_int(&f->attrs, "workspace", 0)];
		attr_set_int(c, &f->attrs, "workspace.bytes",
			     attr_int(&f->attrs, "workspace.bytes", 0) + bytes);
		return ws;
	}
	ws = ir_block_add_arg(f->body, ty_ptr(c, l->i32, 1));
	ir_value_set_name(f, ws, "workspace");
	attr_set_int(c, &f->attrs, "workspace", ir_val(f, ws)->idx);
	attr_set_int(c, &f->attrs, "workspace.bytes", bytes);
	attr_set_int(c, &f->attrs, "derived", attr_int(&f->attrs, "derived", 0) + 1);
	return ws;
}

/* The instances of the agent that runs sched_for sf (a task merged from
 * n replicas runs n). */
static int64_t
instances(Op *sf)
{
	bool nested;
	Op *t = agent_of(sf, &nested);

	return t ? attr_int(&t->attrs, "replicas", 1) : 1;
}

/* d's loops over create; the first is the claimer, an agent of one
 * instance (a merged task that would have to claim is split again). */
static void
collect(Ls *l, Dyn *d, Op *create)
{
	Op **loops;
	uint32_t nl, i;
	bool nested;

	for (;;) {
		loops = ir_find_ops(l->f, OP_SCHED_FOR, l->pc->scratch, &nl);
		d->loops = arena_alloc(l->pc->scratch, (nl + 1) * sizeof *d->loops);
		d->k = 0;
		for (i = 0; i < nl; i++)
			if (loops[i]->opnds[0] == create->res[0])
				d->loops[d->k++] = loops[i];
		for (i = 0; i < d->k && instances(d->loops[i]) > 1; i++)
			;
		if (i < d->k || !d->k) {
			Op *c = d->loops[i < d->k ? i : 0];

			if (i < d->k) {
				memmove(d->loops + 1, d->loops, i * sizeof *d->loops);
				d->loops[0] = c;
			}
			return;
		}
		ir_unmerge_task(l->f, agent_of(d->loops[0], &nested));
	}
}

static bool
lower_dynamic(Ls *l, Op *create)
{
	Func *f = l->f;
	IrCtx *c = f->mod->ctx;
	Dyn d = { .create = create };
	Value ws, off;
	uint32_t i;

	collect(l, &d, create);
	for (i = 1; i < d.k; i++)
		d.readers += instances(d.loops[i]);
	if (!dyn_check(l, &d))
		return false;
	/* before the create: its counter, and the ring where several agents
	 * share the claims */
	ws = workspace(l, 4);
	off = const_before(l, create, attr_int(&f->attrs, "workspace.bytes", 4) / 4 - 1);
	d.counter = emit_before(l, create, OP_PTR_ADD, ir_type(f, ws), 2, ws, off);
	if (d.readers > 0) {
		int64_t shape[2] = { RING, 1 };
		const char *n = ir_val(f, create->res[0])->name;

		n = n ? n : "tiles";
		d.ring = emit_before(l, create, OP_SMEM_ALLOC,
				     ty_smem(c, l->i32, 2, shape), 0, 0, 0);
		attr_set_str(c, &ir_val(f, d.ring)->def->attrs, "name",
			     arena_printf(c->arena, "%s.ring", n));
		d.full = emit_before(l, create, OP_MBAR_ALLOC, ty_mbar(c, RING), 0, 0, 0);
		attr_set_int(c, &ir_val(f, d.full)->def->attrs, "arrive", 1);
		ir_value_set_name(f, d.full, arena_printf(c->arena, "%s.full", n));
		d.empty = emit_before(l, create, OP_MBAR_ALLOC, ty_mbar(c, RING), 0, 0, 0);
		attr_set_int(c, &ir_val(f, d.empty)->def->attrs, "arrive", d.readers);
		ir_value_set_name(f, d.empty, arena_printf(c->arena, "%s.empty", n));
	}
	for (i = 0; i < d.k; i++)
		to_while(l, &d, i);
	return true;
}

/* ---- clc with Cluster Launch Control --------------------------------------- */

/* An `if cond { }` with empty branches before `at`; returns the then
 * branch's yield (new ops go before it). */
static Op *
empty_if(Ls *l, Op *at, Value cond)
{
	Op *ifo = ir_op_new(l->f, OP_IF, 1, &cond, 0, NULL, 2), *y = NULL;
	int r;

	ifo->loc = at->loc;
	ir_insert_before(at, ifo);
	for (r = 1; r >= 0; r--) {
		y = ir_op_new(l->f, OP_YIELD, 0, NULL, 0, NULL, 0);
		y->loc = at->loc;
		ir_append(ifo->regions[r], y);
	}
	return y;
}

typedef struct Clc {
	Dyn d;
	int64_t cl[3], ncl;     /* the cluster shape, programs per cluster */
	Value rank;             /* cluster_rank (0 without clusters) */
} Clc;

/* The tile of the program of cluster rank c->rank in the cluster whose
 * first program is (x, y, z), before `at`. */
static Value
tile_of(Ls *l, Clc *c, Op *at, const Value xyz[3])
{
	Builder bd = { .fn = l->f, .before = at, .loc = at->loc };
	Value p[3], n[3], r = c->rank, t;
	int d;

	for (d = 0; d < 3; d++) {
		Value off = r;

		n[d] = b_with_int(&bd, OP_NUM_PROGRAMS, l->i32, "axis", d);
		if (c->ncl == 1) {
			p[d] = xyz[d];
			continue;
		}
		if (d == 0)
			off = b_op2(&bd, OP_REM, l->i32, r,
				    b_const_int(&bd, l->i32, c->cl[0]));
		else if (d == 1)
			off = b_op2(&bd, OP_REM, l->i32,
				    b_op2(&bd, OP_DIV, l->i32, r,
					  b_const_int(&bd, l->i32, c->cl[0])),
				    b_const_int(&bd, l->i32, c->cl[1]));
		else
			off = b_op2(&bd, OP_DIV, l->i32, r,
				    b_const_int(&bd, l->i32, c->cl[0] * c->cl[1]));
		p[d] = b_op2(&bd, OP_ADD, l->i32, xyz[d], off);
	}
	/* p0 + n0 * (p1 + n1 * p2) */
	t = b_op2(&bd, OP_MUL, l->i32, n[1], p[2]);
	t = b_op2(&bd, OP_ADD, l->i32, p[1], t);
	t = b_op2(&bd, OP_MUL, l->i32, n[0], t);
	return b_op2(&bd, OP_ADD, l->i32, p[0], t);
}

/* sched_for j of a clc schedule as a while whose first tile is the
 * program's own and whose body asks for the next at its start (the
 * claimer) and reads the answer at its end (every agent). */
static void
clc_while(Ls *l, Clc *c, uint32_t j)
{
	Func *f = l->f;
	IrCtx *ctx = f->mod->ctx;
	Dyn *d = &c->d;
	Op *sf = d->loops[j], *wo, *cond, *y, *at, *in;
	Block *body, *cb;
	uint32_t n = sf->nopnds + 1, i;
	Value *ops = arena_alloc(l->pc->scratch, (n + 2) * sizeof *ops);
	Type **rt = arena_alloc(l->pc->scratch, (n + 1) * sizeof *rt);
	Type *mb = ty_mbar(ctx, -1), *i1 = ty_scalar(ctx, TY_I1);
	Builder bd = { .fn = f, .before = sf, .loc = sf->loc };
	Value lin, np, iv, slot, ph, full, empty, view, ok, q[4], next, zero;
	Op *qo;
	int64_t four = 4;

	/* (tile = the program's own, iters..., i = 0); the condition: a
	 * tile of the schedule */
	linear(l, ir_val(f, b_const_int(&bd, l->i32, 0))->def, &lin, &np);
	wo = new_while(l, sf, lin, rt);
	cb = wo->regions[0];
	for (i = 0; i < n; i++)
		ops[i + 1] = cb->args[i];
	cond = ir_op_new(f, OP_CONDITION, 0, NULL, 0, NULL, 0);
	ir_append(cb, cond);
	ops[0] = emit_before(l, cond, OP_CMP, i1, 2, ops[1], d->create->opnds[0]);
	attr_set_sym(ctx, &ir_val(f, ops[0])->def->attrs, "pred", "lt");
	ir_remove(cond);
	cond = ir_op_new(f, OP_CONDITION, n + 1, ops, 0, NULL, 0);
	cond->loc = sf->loc;
	ir_append(cb, cond);
	/* the body */
	body = wo->regions[1];
	mark_tile(l, d->create, body);
	iv = body->args[body->nargs - 1];
	at = body->first->next;  /* after sched_tile */
	slot = ring_slot(l, at, iv, &ph);
	view = emit_before(l, at, OP_SMEM_INDEX, ty_smem(ctx, l->i32, 1, &four), 2,
			   d->ring, slot);
	full = emit_before(l, at, OP_MBAR_AT, mb, 2, d->full, slot);
	empty = emit_before(l, at, OP_MBAR_AT, mb, 2, d->empty, slot);
	zero = const_before(l, at, 0);
	if (j == 0) {
		/* the claimer: when every agent of the cluster has read the
		 * slot's last answer (rank 0 waits for them), expect the 16
		 * bytes, and ask (rank 0, for the whole cluster) */
		Op *arr, *tc;
		Value r0 = c->ncl > 1 ? emit_before(l, at, OP_CMP, i1, 2, c->rank, zero) : 0;
		Value vb[2] = { view, full };

		if (r0)
			attr_set_sym(ctx, &ir_val(f, r0)->def->attrs, "pred", "eq");
		in = r0 ? empty_if(l, at, r0) : at;
		emit_before(l, in, OP_MBAR_WAIT, NULL, 2, empty,
			    emit_before(l, in, OP_XOR, l->i32, 2, ph,
					const_before(l, in, 1)));
		emit_before(l, at, OP_MBAR_EXPECT, NULL, 2, full,
			    const_before(l, at, 16));
		arr = ir_op_new(f, OP_MBAR_ARRIVE, 1, &full, 0, NULL, 0);
		arr->loc = at->loc;
		ir_insert_before(at, arr);
		in = r0 ? empty_if(l, at, r0) : at;
		tc = ir_op_new(f, OP_CLC_TRY_CANCEL, 2, vb, 0, NULL, 0);
		if (c->ncl > 1)
			attr_set_int(ctx, &tc->attrs, "multicast", 1);
		tc->loc = at->loc;
		ir_insert_before(in, tc);
	}
	/* every agent, at the end: the answer, the next tile, and the slot
	 * released to rank 0 (not after the last answer: rank 0 may have
	 * exited) */
	y = body->last;
	emit_before(l, y, OP_MBAR_WAIT, NULL, 2, full, ph);
	{
		Type *qt[4] = { i1, l->i32, l->i32, l->i32 };

		qo = ir_op_new(f, OP_CLC_QUERY, 1, &view, 4, qt, 0);
		qo->loc = y->loc;
		ir_insert_before(y, qo);
		for (i = 0; i < 4; i++)
			q[i] = qo->res[i];
	}
	ok = q[0];
	next = tile_of(l, c, y, q + 1);
	next = emit_before(l, y, OP_SELECT, l->i32, 2, ok, next);
	{
		Op *sel = ir_val(f, next)->def;

		ir_op_add_operand(sel, d->create->opnds[0]);
	}
	in = empty_if(l, y, ok);
	if (c->ncl > 1) {
		Value ops2[2] = { empty, const_before(l, in, 0) };
		Op *ra = ir_op_new(f, OP_MBAR_ARRIVE, 2, ops2, 0, NULL, 0);

		ra->loc = y->loc;
		ir_insert_before(in, ra);
	} else {
		emit_before(l, in, OP_MBAR_ARRIVE, NULL, 1, empty, 0);
	}
	end_while(l, sf, wo, next);
	(void)np;
}

/*
 * `clc` where the target has Cluster Launch Control: the grid stays the
 * whole set of tiles, each program takes its own tile first, then asks
 * the hardware to cancel a cluster that has not started and takes its
 * tiles, until no cluster is left.  The claimer agent asks at the start
 * of each tile (so the answer is there by its end) into a ring of R
 * 16-byte responses, each with a `full` barrier (the claimer's arrival
 * expecting the 16 bytes) and an `empty` one on which every agent
 * instance of every program of the cluster arrives (on rank 0's, which
 * asks for the cluster with the multicast form, writing the answer into
 * every program of the cluster).  With clusters, a cluster_sync after
 * the barriers' init and one before the kernel returns keep every
 * program's barriers alive while others may touch them.
 */
static bool
lower_clc(Ls *l, Op *create)
{
	Func *f = l->f;
	IrCtx *ctx = f->mod->ctx;
	Clc c = { .d = { .create = create } };
	const Attr *cl = attr_find(&f->attrs, "cluster");
	int64_t shape[2] = { RING, 4 };
	const char *n = ir_val(f, create->res[0])->name;
	Builder bd = { .fn = f, .before = create, .loc = create->loc };
	uint32_t i;
	int d;

	c.ncl = 1;
	for (d = 0; d < 3; d++) {
		c.cl[d] = cl && cl->kind == ATTR_INTS && (uint32_t)d < cl->ints.n
			  ? cl->ints.v[d] : 1;
		c.ncl *= c.cl[d];
	}
	collect(l, &c.d, create);
	for (i = 1; i < c.d.k; i++)
		c.d.readers += instances(c.d.loops[i]);
	if (!dyn_check(l, &c.d))
		return false;
	n = n ? n : "tiles";
	c.d.ring = b_op(&bd, OP_SMEM_ALLOC, 0, NULL, ty_smem(ctx, l->i32, 2, shape))->res[0];
	attr_set_str(ctx, &ir_val(f, c.d.ring)->def->attrs, "name",
		     arena_printf(ctx->arena, "%s.clc", n));
	c.d.full = b_op(&bd, OP_MBAR_ALLOC, 0, NULL, ty_mbar(ctx, RING))->res[0];
	attr_set_int(ctx, &ir_val(f, c.d.full)->def->attrs, "arrive", 1);
	ir_value_set_name(f, c.d.full, arena_printf(ctx->arena, "%s.full", n));
	c.d.empty = b_op(&bd, OP_MBAR_ALLOC, 0, NULL, ty_mbar(ctx, RING))->res[0];
	attr_set_int(ctx, &ir_val(f, c.d.empty)->def->attrs, "arrive",
		     (1 + c.d.readers) * c.ncl);
	ir_value_set_name(f, c.d.empty, arena_printf(ctx->arena, "%s.empty", n));
	if (c.ncl > 1) {
		Op *ret;

		c.rank = b_op0(&bd, OP_CLUSTER_RANK, l->i32);
		b_op(&bd, OP_CLUSTER_SYNC, 0, NULL, NULL);
		for (ret = f->body->first; ret; ret = ret->next)
			if (ret->kind == OP_RETURN) {
				Op *cs = ir_op_new(f, OP_CLUSTER_SYNC, 0, NULL, 0, NULL, 0);

				cs->loc = ret->loc;
				ir_insert_before(ret, cs);
			}
	}
	for (i = 0; i < c.d.k; i++)
		clc_while(l, &c, i);
	return true;
}

bool
pass_lower_schedules(PassCtx *pc, Func *f)
{
	const Target *t = target_get(pc->sm);
	Ls l = { .pc = pc, .f = f };
	Vec(Sched) scheds = { 0 };
	uint32_t i, k, nc, nl, ndyn = 0, nclc = 0;
	Op **creates, **loops;

	if (f->kind != FN_KERNEL || ir_func_laid_out(f))
		return false;
	creates = ir_find_ops(f, OP_SCHED_CREATE, pc->scratch, &nc);
	if (!nc)
		return false;
	l.i32 = ty_scalar(f->mod->ctx, TY_I32);
	for (i = 0; i < nc; i++) {
		const char *kind = attr_str(&creates[i]->attrs, "kind");

		if (!kind || !strcmp(kind, "static")) {
			vec_push(pc->scratch, &scheds, ((Sched){ creates[i], 0, 0 }));
		} else if (!strcmp(kind, "dynamic") ||
			   (!strcmp(kind, "clc") && t && !target_has(t, TF_CLC))) {
			if (!lower_dynamic(&l, creates[i])) {
				pc->failed = true;
				return false;
			}
			ir_remove(creates[i]);
			ndyn++;
		} else if (!strcmp(kind, "clc") && t) {
			if (!lower_clc(&l, creates[i])) {
				pc->failed = true;
				return false;
			}
			ir_remove(creates[i]);
			nclc++;
		}
	}
	/* (lowering a dynamic schedule may have split a merged task) */
	loops = ir_find_ops(f, OP_SCHED_FOR, pc->scratch, &nl);
	for (i = 0; i < scheds.n; i++)
		linear(&l, scheds.v[i].create, &scheds.v[i].lin, &scheds.v[i].np);
	for (k = 0; k < nl; k++) {
		Op *def = ir_val(f, loops[k]->opnds[0])->def;

		for (i = 0; i < scheds.n; i++)
			if (scheds.v[i].create == def)
				to_for(&l, loops[k], &scheds.v[i]);
	}
	for (i = 0; i < scheds.n; i++)
		ir_remove(scheds.v[i].create);
	if (!scheds.n && !ndyn && !nclc)
		return false;
	/* (clc keeps the grid of every tile) */
	if (scheds.n || ndyn)
		attr_set_int(f->mod->ctx, &f->attrs, "persistent", 1);
	pass_stat(pc, "schedules", scheds.n + ndyn + nclc);
	return true;
}
