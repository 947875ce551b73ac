/*
 * allocate_warps.c: the warps of warp-specialized kernels -- pass
 * "allocate-warps".
 *
 * Gives each task of a `tasks` op the warps it runs on, in order:
 *   first_warp   its first warp; a task of 4 or more warps, and every
 *                task of a kernel with register budgets, starts at a
 *                warpgroup (wgmma and setmaxnreg work on whole
 *                warpgroups);
 *   span         the warps it holds: its warps, rounded up to a
 *                warpgroup in a kernel with register budgets (the
 *                padding warps set their budget and do nothing else);
 *                a task of `replicas = n` (merge-replicas) holds n
 *                spans, one per instance;
 *   barrier      the named barrier (1 to 15) its warps synchronize on,
 *                for tasks of more than one warp (0 is the CTA's); an
 *                instance k of a merged task has barrier + k.
 * The kernel's `warps` becomes the warps it launches: the end of the
 * widest `tasks` op, or its own warps if more (`task_warps` keeps what
 * it was: the default of a task's).
 *
 * Tasks capture what they use: a tile computed outside a task by cheap
 * pure ops (F_REMAT: constants, ranges, index math) is recomputed at the
 * start of each task that uses it, so that every tile of a task is
 * laid out over the task's warps; any other tile from outside is an
 * error.  Layouts span a power of two of warps: a task of 3 warps
 * computes no tiles, and in a kernel whose tasks take, say, 12 warps, no
 * tile is computed outside them.
 *
 * Register budgets (`regs`, given for all tasks or none) are checked to
 * fit the 65,536 registers of an SM with the padding; the kernel starts
 * with `maxnreg` registers per thread (what its threads may all hold:
 * 65,536 / threads, a multiple of 8), and each task moves to its budget.
 * Requires: tile-level IR.  Produces: task ops with first_warp, span and
 * barrier; kernel attributes warps, task_warps and maxnreg.  Counters: tasks,
 * captured.
 */
#include "passes/passes.h"

enum { NAMED_BARRIERS = 16 };

typedef struct Aw {
	PassCtx *pc;
	Func *f;
	int64_t total;    /* warps the kernel launches */
	bool budgets;     /* any task has `regs` */
	uint64_t captured;
} Aw;

static bool
is_tile(Func *f, Value v)
{
	return ir_type(f, v)->kind == TY_TILE;
}

/* Is v (a tile) defined outside the region of task op t? */
static bool
outside(Func *f, Value v, Op *t)
{
	ValInfo *vi = ir_val(f, v);
	Block *b = vi->def ? vi->def->parent : vi->blk;

	for (; b; b = b->parent ? b->parent->parent : NULL)
		if (b->parent == t)
			return false;
	return true;
}

/* Can v be recomputed inside a task: remat ops on remat tiles and
 * scalars. */
static bool
recomputable(Func *f, Value v)
{
	Op *d = ir_val(f, v)->def;
	uint32_t i;

	if (!d || !op_has(d, F_REMAT) || d->nregions)
		return false;
	for (i = 0; i < d->nopnds; i++)
		if (is_tile(f, d->opnds[i]) && !recomputable(f, d->opnds[i]))
			return false;
	return true;
}

typedef struct Cap {
	Aw *w;
	Op *task;
	Value *map;
	uint32_t mapn;
	Op *at;  /* captures go before it: the task's first op */
} Cap;

/* The copy of tile v at the start of the task (made once per task),
 * after the copies of its operands. */
static Value
capture(Cap *c, Value v)
{
	Func *f = c->w->f;
	Op *d = ir_val(f, v)->def, *cl;
	uint32_t i;

	if (v < c->mapn && c->map[v])
		return c->map[v];
	for (i = 0; i < d->nopnds; i++)
		if (is_tile(f, d->opnds[i]))
			capture(c, d->opnds[i]);
	cl = ir_clone_op(f, f, d, &c->map, &c->mapn);
	ir_insert_before(c->at, cl);
	c->w->captured++;
	return cl->res[0];
}

static void
capture_uses(Cap *c, Block *b)
{
	Func *f = c->w->f;
	int64_t n = attr_int(&c->task->attrs, "warps", 1);
	Op *op;
	uint32_t i;

	for (op = b->first; op && !c->w->pc->failed; op = op->next) {
		for (i = 0; i < op->nopnds; i++) {
			Value v = op->opnds[i];

			if (!is_tile(f, v) || !outside(f, v, c->task))
				continue;
			if (n & (n - 1)) {
				/* at the use: the copy would point outside */
				ir_error(c->w->pc->diag, f, op, "this task has %lld "
					 "warps, not a power of two: tiles need 1, "
					 "2, 4, 8, 16 or 32 warps", (long long)n);
				c->w->pc->failed = true;
				return;
			}
			if (!recomputable(f, v)) {
				ir_error(c->w->pc->diag, f, op, "this task uses a "
					 "tile computed outside 'tasks'; compute "
					 "it inside the task");
				c->w->pc->failed = true;
				return;
			}
			op->opnds[i] = capture(c, v);
		}
		for (i = 0; i < op->nregions; i++)
			capture_uses(c, op->regions[i]);
	}
}

static int64_t
round4(int64_t n)
{
	return (n + 3) / 4 * 4;
}

/* Places the tasks of one `tasks` op. */
static void
place(Aw *w, Op *tasks)
{
	Func *f = w->f;
	IrCtx *ctx = f->mod->ctx;
	int64_t next = 0, regs = 0, bar = 1, n;
	Op *t;

	for (t = tasks->regions[0]->first; t; t = t->next)
		if (t->kind == OP_TASK && attr_int(&t->attrs, "regs", 0))
			w->budgets = true;
	for (t = tasks->regions[0]->first; t; t = t->next) {
		int64_t warps, span, first;

		if (t->kind != OP_TASK)
			continue;
		warps = attr_int(&t->attrs, "warps", 1);
		n = attr_int(&t->attrs, "replicas", 1);
		span = w->budgets || warps >= 4 ? round4(warps) : warps;
		first = span >= 4 ? round4(next) : next;
		attr_set_int(ctx, &t->attrs, "first_warp", first);
		attr_set_int(ctx, &t->attrs, "span", span);
		if (warps > 1) {
			if (bar + n > NAMED_BARRIERS) {
				ir_error(w->pc->diag, f, t, "more than %d tasks "
					 "of several warps: each needs a named "
					 "barrier of its own", NAMED_BARRIERS - 1);
				w->pc->failed = true;
				return;
			}
			attr_set_int(ctx, &t->attrs, "barrier", bar);
			bar += n;
		}
		regs += attr_int(&t->attrs, "regs", 0) * 32 * span * n;
		next = first + span * n;
	}
	if (next > 32) {
		ir_error(w->pc->diag, f, tasks, "the tasks take %lld warps "
			 "(warpgroups of tasks with register budgets or of 4 "
			 "or more warps included); a program has at most 32",
			 (long long)next);
		w->pc->failed = true;
		return;
	}
	if (regs > 65536) {
		ir_error(w->pc->diag, f, tasks, "the register budgets add up to "
			 "%lld registers (tasks of fewer than 4 warps hold a "
			 "whole warpgroup), more than the 65536 of an SM",
			 (long long)regs);
		w->pc->failed = true;
		return;
	}
	w->total = MAX(w->total, next);
}

/* Counts in u, for each value, its uses outside tasks by ops other than
 * cheap tile ops (those go when the tasks have recomputed what they use). */
static void
count_uses(Aw *w, Block *b, uint32_t *u)
{
	Op *op;
	uint32_t i;

	for (op = b->first; op; op = op->next) {
		if (op->kind == OP_TASKS)
			continue;
		if (!(op->nres && is_tile(w->f, op->res[0]) &&
		      recomputable(w->f, op->res[0])))
			for (i = 0; i < op->nopnds; i++)
				u[op->opnds[i]]++;
		for (i = 0; i < op->nregions; i++)
			count_uses(w, op->regions[i], u);
	}
}

/* Tiles are laid out over a power of two of warps: in code run by n
 * warps (n not one; outside tasks: all of the kernel's), no tile can be
 * computed, but for cheap ones outside tasks that only tasks and other
 * such tiles use (each task recomputes its own; `uses` from count_uses). */
static void
check_tiles(Aw *w, Block *b, int64_t n, const char *who, const char *fix,
	    const uint32_t *uses)
{
	Op *op;
	uint32_t i;

	for (op = b->first; op && !w->pc->failed; op = op->next) {
		if (op->kind == OP_TASKS)
			continue;
		for (i = 0; i < op->nres; i++)
			if (is_tile(w->f, op->res[i]) &&
			    !(uses && !uses[op->res[i]] &&
			      recomputable(w->f, op->res[i]))) {
				ir_error(w->pc->diag, w->f, op, "%s %lld warps, not "
					 "a power of two: %s", who, (long long)n, fix);
				w->pc->failed = true;
				return;
			}
		for (i = 0; i < op->nregions; i++)
			check_tiles(w, op->regions[i], n, who, fix, uses);
	}
}

bool
pass_allocate_warps(PassCtx *pc, Func *f)
{
	Aw w = { .pc = pc, .f = f };
	Op **ts;
	uint32_t nts;
	IrCtx *ctx = f->mod->ctx;
	uint32_t i;
	Op *t;

	if (f->kind != FN_KERNEL || ir_func_laid_out(f))
		return false;
	ts = ir_find_ops(f, OP_TASKS, pc->scratch, &nts);
	w.total = attr_int(&f->attrs, "warps", 4);
	if (!nts && (w.total & (w.total - 1)))  /* IR text: sema has it */
		check_tiles(&w, f->body, w.total, "this kernel has",
			    "tiles need 1, 2, 4, 8, 16 or 32 warps", NULL);
	if (!nts || attr_has(&f->attrs, "task_warps"))
		return false;  /* none, or placed already */
	for (i = 0; i < nts && !pc->failed; i++)
		place(&w, ts[i]);
	for (i = 0; i < nts && !pc->failed; i++)
		for (t = ts[i]->regions[0]->first; t && !pc->failed; t = t->next) {
			Cap c = { &w, t, NULL, 0, NULL };

			if (t->kind != OP_TASK || !(c.at = t->regions[0]->first))
				continue;
			capture_uses(&c, t->regions[0]);
		}
	for (i = 0; i < nts && !pc->failed; i++)
		for (t = ts[i]->regions[0]->first; t && !pc->failed; t = t->next) {
			int64_t n = attr_int(&t->attrs, "warps", 1);

			if (t->kind == OP_TASK && (n & (n - 1)))
				check_tiles(&w, t->regions[0], n, "this task has",
					    "tiles need 1, 2, 4, 8, 16 or 32 warps",
					    NULL);
		}
	if (pc->failed)
		return false;
	if (w.total & (w.total - 1)) {
		uint32_t *u = arena_alloc(pc->scratch, f->vals.n * sizeof *u);

		memset(u, 0, f->vals.n * sizeof *u);
		count_uses(&w, f->body, u);
		check_tiles(&w, f->body, w.total, "the tasks of this kernel take",
			    "compute this tile inside a task", u);
	}
	attr_set_int(ctx, &f->attrs, "task_warps", attr_int(&f->attrs, "warps", 4));
	attr_set_int(ctx, &f->attrs, "warps", w.total);
	if (w.budgets)
		attr_set_int(ctx, &f->attrs, "maxnreg",
			     MIN(255, 65536 / (32 * w.total)) / 8 * 8);
	pass_stat(pc, "tasks", nts);
	pass_stat(pc, "captured", w.captured);
	return true;
}
