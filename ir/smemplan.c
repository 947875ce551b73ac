/*
 * smemplan.c: the shared memory of a kernel -- what each op needs for
 * itself (scratch) and the plan that places buffers and scratch, for the
 * plan-smem pass, code generation and the simulator alike.
 *
 * Scratch (laid-out IR only: the sizes follow from layouts):
 *   convert_layout  the row-major padded copy of the tile in the result's
 *                   layout (ly_copy_bytes), unless the conversion only
 *                   renames registers;
 *   reduce          one partial per warp along the reduced dim and per
 *                   result element, when warps split that dim (f16/bf16
 *                   sums in f32; argmax/argmin with their i32 index);
 *   dot             the operands that are not read from a view directly
 *                   (ir_dot_view), each rows x cols x elem rounded to 128;
 *   atomic          scalar atomics 16 bytes (the old value, from thread 0);
 *                   tile atomics in layouts with replicated lanes or warps
 *                   the copy of the old values (ly_copy_bytes).
 *
 * The plan.  Ops are numbered in program order.  Each buffer (smem_alloc,
 * mbar_alloc) lives from its op to its last use through any view,
 * stretched over every loop that uses it or contains it (a buffer keeps
 * its contents across iterations); each op with scratch gets an interval
 * of one position.  Buffers and scratch used inside `tasks` but made
 * outside any one task live through the whole of it: tasks run
 * concurrently; what one task makes (an op's scratch, a buffer it
 * allocates) lives as in straight-line code, within the task, and never
 * shares memory with what another task of the same `tasks` makes (a task
 * with replicas sharing one body, all of it).  Intervals are placed first-fit by decreasing size at
 * 128-byte alignment (mbarriers at 8); two overlap in memory only when
 * they do not overlap in time, except that small scratch (up to 1 KiB:
 * reductions) never shares memory with other small scratch, so that
 * consecutive reductions need no barrier between them.
 */
#include <stdlib.h>
#include <string.h>

#include "ir.h"

/* ---- scratch ---------------------------------------------------------------- */

static int
ebytes_of(Type *t)
{
	Type *e = ty_elem(t);

	return e->kind == TY_PTR ? 8 : MAX(1, ty_bits(e) / 8);
}

int
ir_view_contig(Func *f, Value v)
{
	ValInfo *vi = ir_val(f, v);
	const Attr *perm;
	int c, d;

	if (!vi->def)
		return vi->ty->rank - 1;
	switch (vi->def->kind) {
	case OP_SMEM_TRANS:
		c = ir_view_contig(f, vi->def->opnds[0]);
		perm = attr_find(&vi->def->attrs, "perm");
		for (d = 0; perm && d < (int)perm->ints.n; d++)
			if (perm->ints.v[d] == c)
				return d;
		return vi->ty->rank - 1;
	case OP_SMEM_INDEX:
		return ir_view_contig(f, vi->def->opnds[0]) - 1;
	case OP_SMEM_SLICE:
		return ir_view_contig(f, vi->def->opnds[0]);
	default:
		return vi->ty->rank - 1;
	}
}

Op *
ir_view_buffer(Func *f, Value v)
{
	for (;;) {
		Op *d = ir_val(f, v)->def;

		if (!d)
			return NULL;
		if (d->kind == OP_SMEM_ALLOC)
			return d;
		if (d->kind != OP_SMEM_INDEX && d->kind != OP_SMEM_SLICE &&
		    d->kind != OP_SMEM_TRANS)
			return NULL;
		v = d->opnds[0];
	}
}

static bool
tiled_buffer(Func *f, Value view)
{
	Op *b = ir_view_buffer(f, view);
	const Layout *e = b ? ir_type(f, b->res[0])->layout : NULL;

	return e && e->kind == LY_SWIZZLE && e->swz_tiled;
}

Value
ir_dot_view(const Target *t, Func *f, Op *op, int i)
{
	ValInfo *vi = ir_val(f, op->opnds[i]);
	bool trans_b;
	Type *vt;

	if (!vi->def || vi->def->kind != OP_SMEM_LOAD)
		return 0;
	vt = ir_type(f, vi->def->opnds[0]);
	if (!ly_dot_is_mma(t, f, op, &trans_b) || (i == 1 && trans_b) ||
	    vt->kind != TY_SMEM || vt->rank != 2 ||
	    tiled_buffer(f, vi->def->opnds[0]))
		return 0;
	return vi->def->opnds[0];
}

static int64_t
reduce_scratch(Func *f, Op *op)
{
	const Layout *L = ir_type(f, op->opnds[0])->layout;
	TypeKind e = ty_elem(ir_type(f, op->opnds[0]))->kind;
	const char *k = attr_str(&op->attrs, "kind");
	int axis = (int)attr_int(&op->attrs, "axis", 0), i, warps = 0, b;
	bool arg = k && (!strcmp(k, "argmax") || !strcmp(k, "argmin"));
	bool wide = k && (!strcmp(k, "sum") || !strcmp(k, "prod")) &&
		    (e == TY_F16 || e == TY_BF16);

	if (!L)
		return 0;
	for (i = 0; i < L->nwarp; i++)
		warps += ly_in_dim(L, axis, L->warp[i]);
	if (!warps)
		return 0;
	b = wide ? 4 : MAX(1, ty_bits(ty_scalar(f->mod->ctx, e)) / 8);
	if (arg)
		b = MAX(b, 4) * 2;
	return ((int64_t)1 << warps) *
	       (ty_numel(ir_type(f, op->opnds[0])) / L->shape[axis]) * b;
}

static int64_t
dot_scratch(const Target *t, Func *f, Op *op)
{
	Type *a = ir_type(f, op->opnds[0]), *c = ir_type(f, op->opnds[2]);
	int64_t M = a->shape[0], K = a->shape[1], N = c->shape[1], n = 0;
	int eb = MAX(1, ty_bits(ty_elem(a)) / 8), i;

	for (i = 0; i < 2; i++) {
		int64_t rows = i == 0 ? M : K, cols = i == 0 ? K : N;
		Value v = ir_dot_view(t, f, op, i);

		if (!v || ir_view_contig(f, v) != 1)
			n += (rows * cols * eb + 127) / 128 * 128;
	}
	return n;
}

int64_t
ir_op_scratch(const Target *t, Func *f, Op *op)
{
	const Layout *from, *to, *ly;

	switch (op->kind) {
	case OP_CONVERT_LAYOUT:
		from = ir_type(f, op->opnds[0])->layout;
		to = ir_type(f, op->res[0])->layout;
		if (!from || !to)
			return 0;
		return ly_convert_bytes(from, to, ebytes_of(ir_type(f, op->res[0])));
	case OP_REDUCE:
		return reduce_scratch(f, op);
	case OP_DOT:
		return dot_scratch(t, f, op);
	case OP_ATOMIC: case OP_ATOMIC_CAS:
		if (ir_type(f, op->res[0])->kind != TY_TILE)
			return 16;
		ly = ir_type(f, op->opnds[0])->layout;
		if (!ly || (!ly_lane_dup(ly) && !ly_warp_dup(ly)))
			return 0;
		return ly_copy_bytes(ly, ebytes_of(ir_type(f, op->res[0])));
	default:
		return 0;
	}
}

/* ---- the plan ---------------------------------------------------------------- */

typedef struct Planner {
	const Target *t;
	Func *f;
	SmemPlan *p;
	Arena *a;
	uint32_t pos;
	int32_t *root;  /* value -> entry of its buffer, or -1 */
	uint32_t group, ngroups;  /* the task being walked (0: none) */
} Planner;

static int32_t
add_entry(Planner *pl, Op *op, int64_t size, int64_t align)
{
	SmemEntry e = { .op = op, .size = size, .align = align,
			.first = pl->pos, .last = pl->pos, .group = pl->group };

	vec_push(pl->a, &pl->p->e, e);
	return (int32_t)pl->p->e.n - 1;
}

static bool
is_buffer(const Op *op)
{
	return op->kind == OP_SMEM_ALLOC || op->kind == OP_MBAR_ALLOC;
}

int64_t
ir_smem_bytes(const Op *op, Type *t)
{
	if (op->kind == OP_MBAR_ALLOC)
		return 8 * MAX(1, t->rank ? t->shape[0] : 1);
	return ty_numel(t) * ebytes_of(t);
}

static void plan_block(Planner *pl, Block *b);

static void
plan_op(Planner *pl, Op *op)
{
	SmemPlan *p = pl->p;
	int64_t need;
	uint32_t i, start, g0;
	int32_t r = -1;

	pl->pos++;
	for (i = 0; i < op->nopnds; i++) {
		int32_t k = pl->root[op->opnds[i]];

		if (k >= 0 && p->e.v[k].last < pl->pos)
			p->e.v[k].last = pl->pos;
		if (k >= 0 && (op->kind == OP_SMEM_INDEX ||
			       op->kind == OP_SMEM_SLICE ||
			       op->kind == OP_SMEM_TRANS ||
			       op->kind == OP_MBAR_AT))
			r = k;
	}
	if (is_buffer(op)) {
		Type *t = ir_type(pl->f, op->res[0]);

		r = add_entry(pl, op, ir_smem_bytes(op, t),
			      op->kind == OP_MBAR_ALLOC ? 8 : ir_smem_align(t));
	}
	if (op->nres == 1 && r >= 0)
		pl->root[op->res[0]] = r;
	need = ir_op_scratch(pl->t, pl->f, op);
	if (need > 0)
		add_entry(pl, op, need, 128);
	if (!op->nregions)
		return;
	start = pl->pos;
	g0 = pl->ngroups;
	if (op->kind == OP_TASK && attr_int(&op->attrs, "replicas", 1) == 1)
		pl->group = ++pl->ngroups;
	for (i = 0; i < op->nregions; i++)
		plan_block(pl, op->regions[i]);
	if (op->kind == OP_TASK)
		pl->group = 0;
	if (op->kind == OP_TASKS) {
		/* tasks run concurrently: what they use but no one task
		 * made lives through all of them; what a task made is the
		 * task's (place keeps the tasks' apart) */
		for (i = 0; i < p->e.n; i++) {
			SmemEntry *e = &p->e.v[i];

			if (e->group > g0) {
				e->span = start;
			} else if (e->last >= start && e->last <= pl->pos) {
				e->first = MIN(e->first, start);
				e->last = pl->pos;
			}
		}
		return;
	}
	if (op->kind != OP_FOR && op->kind != OP_WHILE && op->kind != OP_SCHED_FOR)
		return;
	/* a loop: buffers used in it or made in it live through all of it */
	for (i = 0; i < p->e.n; i++) {
		SmemEntry *e = &p->e.v[i];

		if (e->first == e->last && !is_buffer(e->op))
			continue;
		if (e->last >= start && e->last <= pl->pos) {
			e->first = MIN(e->first, start);
			e->last = pl->pos;
		}
	}
}

static void
plan_block(Planner *pl, Block *b)
{
	Op *op;

	for (op = b->first; op; op = op->next)
		plan_op(pl, op);
}

static bool
small(const SmemEntry *e)
{
	return e->size <= 1024 && !is_buffer(e->op);
}

/* May a and b not share memory?  Live at once, two small scratch, or
 * made by two tasks of one `tasks` op (which run concurrently). */
static bool
conflict(const SmemEntry *a, const SmemEntry *b)
{
	if (a->group && b->group && a->group != b->group &&
	    a->span == b->span)
		return true;
	return !(a->last < b->first || b->last < a->first) ||
	       (small(a) && small(b));
}

static int
by_size(const void *x, const void *y)
{
	const SmemEntry *a = *(SmemEntry *const *)x, *b = *(SmemEntry *const *)y;

	return a->size < b->size ? 1 : a->size > b->size ? -1 : 0;
}

static void
place(SmemPlan *p, Arena *a)
{
	SmemEntry **order = arena_alloc(a, (p->e.n + 1) * sizeof *order);
	uint32_t i, j;

	for (i = 0; i < p->e.n; i++)
		order[i] = &p->e.v[i];
	/* stable for equal sizes: program order (qsort is not stable) */
	for (i = 1; i < p->e.n; i++)
		for (j = i; j > 0 && by_size(&order[j - 1], &order[j]) > 0; j--) {
			SmemEntry *x = order[j];

			order[j] = order[j - 1];
			order[j - 1] = x;
		}
	for (i = 0; i < p->e.n; i++) {
		SmemEntry *e = order[i];
		int64_t off = 0;
		bool moved = true;

		while (moved) {
			moved = false;
			for (j = 0; j < i; j++) {
				SmemEntry *o = order[j];

				if (!conflict(o, e))
					continue;
				if (off < o->off + o->size && o->off < off + e->size) {
					off = o->off + o->size;
					off = (off + e->align - 1) / e->align * e->align;
					moved = true;
				}
			}
		}
		e->off = off;
		p->total = MAX(p->total, off + e->size);
	}
}

void
ir_smem_plan(const Target *t, Func *f, SmemPlan *p, Arena *a)
{
	Planner pl = { .t = t, .f = f, .p = p, .a = a };
	uint32_t i;

	memset(p, 0, sizeof *p);
	pl.root = arena_alloc(a, f->vals.n * sizeof *pl.root);
	for (i = 0; i < f->vals.n; i++)
		pl.root[i] = -1;
	plan_block(&pl, f->body);
	place(p, a);
}

/* ---- vector widths of shared-memory accesses ------------------------------- */

static int64_t
lowbit(int64_t v)
{
	if (v == 0)
		return (int64_t)1 << 20;
	v = v < 0 ? -v : v;
	return v & -v;
}

int64_t
ir_smem_align(Type *t)
{
	const Layout *e = t->layout;

	if (e && e->kind == LY_SWIZZLE && e->swz_tiled)
		return MAX(128, 8 * e->swz_bytes);
	return 128;
}

/* The strides (elements) and the byte alignment of view v, from its
 * buffer's offset and the views on the way; false when v is not a view
 * of a planned buffer. */
static bool
view_geometry(Func *f, Value v, const Axis *ax, int64_t *stride, int *rank,
	      int64_t *align, int *eb)
{
	Op *d = ir_val(f, v)->def;
	int64_t st[TY_MAX_RANK];
	const Attr *perm;
	int r, i;

	if (!d)
		return false;
	if (d->kind == OP_SMEM_ALLOC) {
		Type *t = ir_type(f, v);

		if (!attr_has(&d->attrs, "offset"))
			return false;
		*rank = t->rank;
		*eb = MAX(1, ty_bits(t->elem) / 8);
		for (i = t->rank - 1; i >= 0; i--)
			stride[i] = i == t->rank - 1 ? 1 : stride[i + 1] * t->shape[i + 1];
		*align = MAX(128, lowbit(attr_int(&d->attrs, "offset", 0)));
		return true;
	}
	if (d->kind != OP_SMEM_INDEX && d->kind != OP_SMEM_SLICE &&
	    d->kind != OP_SMEM_TRANS)
		return false;
	if (!view_geometry(f, d->opnds[0], ax, st, &r, align, eb))
		return false;
	switch (d->kind) {
	case OP_SMEM_INDEX:
		*align = MIN(*align, lowbit(st[0] * *eb *
					    (ax ? ax[d->opnds[1]].div : 1)));
		for (i = 0; i + 1 < r; i++)
			stride[i] = st[i + 1];
		*rank = r - 1;
		return true;
	case OP_SMEM_SLICE:
		for (i = 1; i < (int)d->nopnds && i <= r; i++)
			*align = MIN(*align, lowbit(st[i - 1] * *eb *
						    (ax ? ax[d->opnds[i]].div : 1)));
		memcpy(stride, st, sizeof st);
		*rank = r;
		return true;
	default:
		perm = attr_find(&d->attrs, "perm");
		for (i = 0; i < r; i++)
			stride[i] = perm && i < (int)perm->ints.n ? st[perm->ints.v[i]]
								  : st[i];
		*rank = r;
		return true;
	}
}

int
ir_smem_vec(Func *f, Op *op, const Axis *ax)
{
	Value view = op->kind == OP_SMEM_LOAD ? op->opnds[0]
		     : op->opnds[0];
	Value tile = op->kind == OP_SMEM_LOAD ? op->res[0]
		     : op->kind == OP_SMEM_STORE ? op->opnds[1] : op->opnds[1];
	const Layout *l = ir_type(f, tile)->layout;
	int64_t stride[TY_MAX_RANK], align;
	int rank, eb, d, k = 0, sh = 0, v, i;

	if (!l || !l->nreg || !l->reg[0] ||
	    !view_geometry(f, view, ax, stride, &rank, &align, &eb) ||
	    rank != l->rank)
		return 1;
	for (d = 0; d < l->rank; d++) {
		sh = ly_dim_shift(l, d);
		if (l->reg[0] == 1u << sh)
			break;
	}
	if (d == l->rank || stride[d] != 1)
		return 1;
	while (k < l->nreg && k < ly_dim_bits(l, d) && l->reg[k] == 1u << (sh + k))
		k++;
	v = 1 << k;
	for (;;) {
		bool ok = v * eb <= 16 && v * eb <= align;

		/* every vector starts at a multiple of v elements along d, and
		 * the other dims move by whole vectors only when their
		 * strides are multiples of it (a padded row pitch may not be) */
		for (i = 0; ok && i < rank; i++)
			if (i != d && l->shape[i] > 1 && (stride[i] * eb) % (v * eb))
				ok = false;
		if (ok || v == 1)
			return v;
		v /= 2;
	}
}
