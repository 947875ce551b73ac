/*
 * plan.c: the shared-memory plan of a laid-out kernel, checked when a
 * launch starts.
 *
 * The plan is in the IR: `offset` on each smem_alloc and mbar_alloc (its
 * first byte in the program's shared memory), `scratch` on each op that
 * needs shared memory of its own (convert_layout's copy of the tile in
 * the result's layout, ly_copy_bytes; reduce, dot and atomic: the
 * `scratch_bytes` beside it, else what ir_op_scratch says), and the
 * kernel's `smem`, the bytes in all.
 * sim_smem_plan (launch.c) reads it; this file checks it as code
 * generation would need it to hold:
 *   - every buffer and scratch range lies inside `smem`, and `smem`
 *     inside the target's shared memory;
 *   - buffers are aligned to their element (mbarriers to 8 bytes),
 *     scratch to the elements it holds;
 *   - no two buffers that are live at the same time overlap, and no
 *     op's scratch overlaps a buffer live at that op.
 * Liveness is codegen/smem.c's: ops are numbered in program order (an op
 * before the ops of its regions); a buffer lives from its op to its last
 * use through any view (smem_index, smem_slice, smem_trans, mbar_at),
 * stretched over the whole of every loop (for, while) that uses it or
 * contains it; an op's scratch lives at that op only.  What the ops of a
 * `tasks` use but no one task made lives through all of it: tasks run at
 * once; what one task made (its ops' scratch, a buffer it allocates)
 * lives as in straight-line code, and overlaps nothing another task of
 * the same `tasks` made (a task with replicas sharing one body: all of
 * it lives through the `tasks`).
 */
#include <string.h>

#include "sim.h"

/* ---- scratch sizes ------------------------------------------------------ */

/* A conversion's copy is the tile in the result's layout; the scratch of
 * reduce, dot and atomic is the `scratch_bytes` beside it, else what the
 * planner gives it (ir_op_scratch, for target t). */
int64_t
sim_scratch_size(const Target *t, Func *f, Op *op)
{
	Type *rt;
	int64_t n;

	if (!attr_has(&op->attrs, "scratch") || op->nres < 1)
		return 0;
	rt = ir_type(f, op->res[0]);
	if (op->kind == OP_CONVERT_LAYOUT)
		return rt->layout ? ly_copy_bytes(rt->layout, sim_esize(rt)) : 0;
	if ((n = attr_int(&op->attrs, "scratch_bytes", -1)) >= 0)
		return n;
	return ir_op_scratch(t ? t : target_get(90), f, op);
}

/* ---- liveness ----------------------------------------------------------- */

typedef struct Range {
	Op *op;
	const char *name;
	int64_t off, size, align;
	uint32_t first, last;
	bool scratch;
	bool point;  /* scratch live at its op only (not in tasks) */
	uint32_t group;  /* made by one task (0: not): the task's */
	uint32_t span;   /* ... and the position of its `tasks` */
} Range;

typedef struct Walk {
	SimLaunch *L;
	Func *f;
	Vec(Range) r;
	int32_t *root;  /* value -> range of its buffer, or -1 */
	uint32_t pos;
	uint32_t group, ngroups;  /* the task being walked (0: none) */
} Walk;

static void walk_block(Walk *w, Block *b);

static const SimSmemBuf *
planned(SimLaunch *L, Op *op)
{
	uint32_t i;

	for (i = 0; i < L->plan.n; i++)
		if (L->plan.v[i].op == op && !L->plan.v[i].scratch)
			return &L->plan.v[i];
	return NULL;
}

static int32_t
add_range(Walk *w, Op *op, const char *name, int64_t off, int64_t size,
	  int64_t align, bool scratch)
{
	Range r = { op, name, off, size, align, w->pos, w->pos, scratch, scratch,
		    w->group, 0 };

	vec_push(&w->L->arena, &w->r, r);
	return (int32_t)w->r.n - 1;
}

static void
walk_op(Walk *w, Op *op)
{
	const SimSmemBuf *b;
	uint32_t i, start, g0;
	int32_t r = -1;
	Type *t;

	w->pos++;
	for (i = 0; i < op->nopnds; i++) {
		int32_t k = w->root[op->opnds[i]];

		if (k >= 0 && w->r.v[k].last < w->pos)
			w->r.v[k].last = w->pos;
		if (k >= 0 && (op->kind == OP_SMEM_INDEX ||
			       op->kind == OP_SMEM_SLICE ||
			       op->kind == OP_SMEM_TRANS || op->kind == OP_MBAR_AT))
			r = k;
	}
	if ((op->kind == OP_SMEM_ALLOC || op->kind == OP_MBAR_ALLOC) &&
	    op->nres == 1 && (b = planned(w->L, op))) {
		t = ir_type(w->f, op->res[0]);
		r = add_range(w, op, b->name, b->off, b->size,
			      op->kind == OP_MBAR_ALLOC ? 8 : sim_esize(t->elem),
			      false);
	} else if (attr_has(&op->attrs, "scratch") && op->nres >= 1) {
		t = ir_type(w->f, op->res[0]);
		add_range(w, op, "scratch", attr_int(&op->attrs, "scratch", 0),
			  sim_scratch_size(target_get(w->L->o.sm), w->f, op),
			  op->kind == OP_CONVERT_LAYOUT ? sim_esize(t) : 1, true);
	}
	if (op->nres == 1 && r >= 0)
		w->root[op->res[0]] = r;
	if (!op->nregions)
		return;
	start = w->pos;
	g0 = w->ngroups;
	if (op->kind == OP_TASK && attr_int(&op->attrs, "replicas", 1) == 1)
		w->group = ++w->ngroups;
	for (i = 0; i < op->nregions; i++)
		walk_block(w, op->regions[i]);
	if (op->kind == OP_TASK)
		w->group = 0;
	if (op->kind == OP_TASKS) {
		/* tasks run at once: what they use but no one task made
		 * lives through all of them */
		for (i = 0; i < w->r.n; i++) {
			Range *e = &w->r.v[i];

			if (e->group > g0) {
				e->span = start;
			} else if (e->last >= start && e->last <= w->pos) {
				e->first = MIN(e->first, start);
				e->last = w->pos;
				e->point = false;
			}
		}
		return;
	}
	if (op->kind != OP_FOR && op->kind != OP_WHILE)
		return;
	/* a loop: buffers used or made in it live through all of it */
	for (i = 0; i < w->r.n; i++) {
		Range *e = &w->r.v[i];

		if (!e->point && e->last >= start && e->last <= w->pos) {
			e->first = MIN(e->first, start);
			e->last = w->pos;
		}
	}
}

static void
walk_block(Walk *w, Block *b)
{
	Op *op;

	for (op = b->first; op; op = op->next)
		walk_op(w, op);
}

/* ---- the checks --------------------------------------------------------- */

const char *
sim_op_where(SimLaunch *L, Op *op, char *out, size_t n)
{
	if (op && op->loc.line > 0)
		snprintf(out, n, "%s at %s:%d:%d", op_name(op->kind),
			 L->mod->source, op->loc.line, op->loc.col);
	else
		snprintf(out, n, "%s", op ? op_name(op->kind) : "?");
	return out;
}

static void
describe(SimLaunch *L, const Range *e, char *out, size_t n)
{
	char at[160];

	if (e->scratch)
		snprintf(out, n, "the scratch of %s (offsets [%lld, %lld))",
			 sim_op_where(L, e->op, at, sizeof at), (long long)e->off,
			 (long long)(e->off + e->size));
	else
		snprintf(out, n, "buffer '%s' (%s, offsets [%lld, %lld))",
			 e->name, sim_op_where(L, e->op, at, sizeof at),
			 (long long)e->off, (long long)(e->off + e->size));
}

static bool
overlap(const Range *a, const Range *b)
{
	return a->size > 0 && b->size > 0 && a->off < b->off + b->size &&
	       b->off < a->off + a->size;
}

static void
check_range(SimLaunch *L, const Range *e, int64_t total, bool has_smem)
{
	char d[320];

	describe(L, e, d, sizeof d);
	if (e->off < 0 || (has_smem && e->off + e->size > total))
		sim_fault(L, e->op, "shared-memory plan: %s lies outside the "
			  "kernel's shared memory (smem = %lld)", d,
			  (long long)total);
	if (e->align > 1 && e->off % e->align)
		sim_fault(L, e->op, "shared-memory plan: %s is not aligned to "
			  "%lld bytes, as its %s need", d, (long long)e->align,
			  e->op->kind == OP_MBAR_ALLOC ? "mbarriers" : "elements");
}

void
sim_plan_check(SimLaunch *L)
{
	Func *f = L->kern;
	Walk w = { .L = L, .f = f };
	bool has_smem = attr_has(&f->attrs, "smem");
	int64_t total = has_smem ? attr_int(&f->attrs, "smem", 0)
				 : L->plan.total;
	char d1[320], d2[320];
	uint32_t i, j;

	w.root = arena_alloc(&L->arena, f->vals.n * sizeof *w.root);
	memset(w.root, 0xff, f->vals.n * sizeof *w.root);
	walk_block(&w, f->body);
	if (total > L->o.smem_limit)
		sim_fault(L, NULL, "shared-memory plan: the kernel uses %lld "
			  "bytes of shared memory%s, more than the %lld of "
			  "sm_%d", (long long)total, has_smem ? " (smem)" : "",
			  (long long)L->o.smem_limit, L->o.sm);
	for (i = 0; i < w.r.n; i++)
		check_range(L, &w.r.v[i], total, has_smem);
	for (j = 0; j < w.r.n; j++) {
		Range *b = &w.r.v[j];

		for (i = 0; i < j; i++) {
			Range *a = &w.r.v[i], *s = a->point ? a : b;
			Range *o = a->point ? b : a;

			if (!overlap(a, b))
				continue;
			if (a->group && b->group && a->group != b->group &&
			    a->span == b->span) {
				describe(L, b, d1, sizeof d1);
				describe(L, a, d2, sizeof d2);
				sim_fault(L, b->op, "shared-memory plan: %s overlaps "
					  "%s, made by another task, which runs "
					  "at the same time", d1, d2);
			}
			if (a->point && b->point)
				continue;
			if (s->point && (s->first < o->first || s->first > o->last))
				continue;
			if (!s->point && (a->last < b->first || b->last < a->first))
				continue;
			describe(L, b, d1, sizeof d1);
			describe(L, a, d2, sizeof d2);
			sim_fault(L, b->op, "shared-memory plan: %s overlaps %s "
				  "while %s", d1, d2, s->point
					  ? "the buffer is live" : "both are live");
		}
	}
}
