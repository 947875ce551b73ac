/*
 * insert_syncs.c: CTA barriers for shared memory -- pass "insert-syncs".
 *
 * Walks a planned, laid-out kernel in program order, keeping the shared
 * memory accessed since the last CTA barrier, and puts a `sync_threads`
 * before an op whose accesses could conflict with one of those (a write
 * and another access of the same bytes by other threads).  What each op
 * accesses:
 *   smem_store            writes its view; smem_load reads its view;
 *   cp_async              writes its destination view (at issue: the
 *                         copy may land any time before its wait; two
 *                         copies need no barrier between them, which
 *                         would order nothing: their waits do);
 *   an op with scratch    (convert_layout, reduce, dot, atomic: the plan's
 *                         `scratch`) writes it, then a barrier of its own,
 *                         then reads it;
 *   mbar_alloc            writes its barriers, then a barrier of its own;
 *   tma_load              writes its destination: a barrier before it
 *                         where earlier accesses conflict, none after (the
 *                         copy lands in the async proxy, ordered by the
 *                         wait on its mbarrier, not by a CTA barrier);
 *   tma_store             reads its source (one thread, every warp's
 *                         writes: a barrier before it) until a
 *                         tma_store_wait covers it, as dot_async;
 *   dot_async             reads its shared operands until a dot_wait
 *                         covers it (dot_wait {pending = n}: all but the
 *                         n latest), past any barrier in between: the
 *                         reads are asynchronous (a barrier after the
 *                         wait orders them before other threads' writes);
 *   cp_async_wait         a barrier after the wait; mbar_arrive a barrier
 *                         before its arrival; sync_threads and
 *                         sync_warps one.
 * Inside a task the barriers are the task's own: the pass inserts
 * `sync_warps` (its warps' named barrier); a `tasks` op starts after a CTA
 * barrier when anything before it is pending, each task with nothing
 * pending, and what the tasks leave pending is pending after them.
 * A view is its buffer's bytes (offset attribute, the whole buffer), except
 * that views indexed from one buffer by indices that are provably distinct
 * ((x + a) % S against (x + b) % S, a and b not congruent mod S, or two
 * different constants: a pipeline's stages) are disjoint, unless one of
 * the accesses is another iteration's.  Two accesses of
 * one view in one layout without replicated lanes or warps are made by the
 * same threads and never conflict.  Scratch written after control flow
 * (the start or end of a region: a loop repeats, branches join) gets a
 * barrier too, as it may still be being read.  A loop's body is walked
 * with what is pending at its end added to what is pending before it
 * (the next iteration); an `if` joins its branches.
 * Kernels with ops code generation does not lower yet are left alone.
 * Requires: laid-out IR planned by plan-smem.  Counters: syncs.
 */
#include "passes/passes.h"

typedef struct Acc {
	Op *op;
	int64_t lo, hi;       /* bytes */
	bool write;
	Op *root;             /* the buffer's alloc (NULL: scratch) */
	Value idx;            /* the index of the view's first smem_index */
	Value view;           /* for the same-threads test (0: none) */
	const Layout *ly;
	uint32_t seq;         /* an async read: its issue (async list) */
	bool store;           /* ... of a tma_store (else of a dot_async) */
	bool carried;         /* from another iteration: its indices differ */
} Acc;

typedef Vec(Acc) AccVec;

typedef struct Sy {
	PassCtx *pc;
	Func *f;
	const Target *t;
	Arena *a;
	AccVec pend;
	AccVec async;         /* reads of dot_asyncs no dot_wait covers yet */
	uint32_t seq;
	bool dirty;
	bool insert;          /* false: only computing what is pending */
	bool in_task;         /* barriers are the task's (sync_warps) */
	uint32_t added;
} Sy;

static int64_t
ebytes_of(Type *t)
{
	return MAX(1, ty_bits(t->elem) / 8);
}

static bool
const_of(Func *f, Value v, int64_t *out)
{
	Num n;

	if (!pass_const(f, v, &n) || !ty_is_int(ir_type(f, v)))
		return false;
	*out = n.i;
	return true;
}

/* v = (x + c) % m with constant c and m (c = 0 without the add). */
static bool
mod_form(Func *f, Value v, Value *x, int64_t *c, int64_t *m)
{
	Op *d = ir_val(f, v)->def, *a;

	if (!d || d->kind != OP_REM || !const_of(f, d->opnds[1], m) || *m <= 0)
		return false;
	*x = d->opnds[0];
	*c = 0;
	a = ir_val(f, *x)->def;
	if (a && a->kind == OP_ADD && const_of(f, a->opnds[1], c))
		*x = a->opnds[0];
	return true;
}

static bool
distinct(Func *f, Value a, Value b)
{
	int64_t ca, cb, ma, mb;
	Value xa, xb;

	if (!a || !b || a == b)
		return false;
	if (const_of(f, a, &ca) && const_of(f, b, &cb))
		return ca != cb;
	if (!mod_form(f, a, &xa, &ca, &ma) || !mod_form(f, b, &xb, &cb, &mb))
		return false;
	return xa == xb && ma == mb && ((ca - cb) % ma + ma) % ma != 0;
}

/* The buffer a view is in, and the index of its first smem_index. */
static Op *
root_of(Func *f, Value v, Value *idx)
{
	for (;;) {
		Op *d = ir_val(f, v)->def;

		if (!d)
			return NULL;
		switch (d->kind) {
		case OP_SMEM_ALLOC: case OP_MBAR_ALLOC:
			return d;
		case OP_SMEM_INDEX: case OP_MBAR_AT:
			*idx = d->opnds[1];
			v = d->opnds[0];
			break;
		case OP_SMEM_SLICE: case OP_SMEM_TRANS:
			*idx = 0;
			v = d->opnds[0];
			break;
		default:
			return NULL;
		}
	}
}

static void
add(Sy *s, AccVec *out, Acc a)
{
	vec_push(s->a, out, a);
}

static void
view_access(Sy *s, AccVec *out, Op *op, Value view, bool write,
	    const Layout *ly)
{
	Acc a = { .op = op, .write = write, .view = view, .ly = ly };
	Type *t;

	a.root = root_of(s->f, view, &a.idx);
	if (!a.root || !attr_has(&a.root->attrs, "offset"))
		return;
	t = ir_type(s->f, a.root->res[0]);
	a.lo = attr_int(&a.root->attrs, "offset", 0);
	a.hi = a.lo + (t->kind == TY_MBAR ? 8 * (t->rank ? t->shape[0] : 1)
					   : ty_numel(t) * ebytes_of(t));
	add(s, out, a);
}

static void
scratch_access(Sy *s, AccVec *out, Op *op, bool write)
{
	Acc a = { .op = op, .write = write };

	a.lo = attr_int(&op->attrs, "scratch", 0);
	a.hi = a.lo + ir_op_scratch(s->t, s->f, op);
	add(s, out, a);
}

static bool
same_threads(const Acc *a, const Acc *b)
{
	return a->view && a->view == b->view && a->ly && a->ly == b->ly &&
	       !ly_lane_dup(a->ly) && !ly_warp_dup(a->ly);
}

static bool
conflict(Sy *s, const Acc *a, const Acc *b)
{
	if (!a->write && !b->write)
		return false;
	/* a barrier orders nothing between copies in flight (their waits do) */
	if (a->op->kind == OP_CP_ASYNC && b->op->kind == OP_CP_ASYNC)
		return false;
	if (a->hi <= b->lo || b->hi <= a->lo)
		return false;
	if (a->root && a->root == b->root && !a->carried && !b->carried &&
	    distinct(s->f, a->idx, b->idx))
		return false;
	return !same_threads(a, b);
}

/* What op accesses before its own barrier (pre), whether it has one
 * (0: none, 1: after pre, 2: before anything), and after it (post). */
static int
accesses(Sy *s, Op *op, AccVec *pre, AccVec *post)
{
	Func *f = s->f;

	switch (op->kind) {
	case OP_SMEM_STORE:
		view_access(s, pre, op, op->opnds[0], true,
			    ir_type(f, op->opnds[1])->layout);
		return 0;
	case OP_SMEM_LOAD:
		view_access(s, pre, op, op->opnds[0], false,
			    ir_type(f, op->res[0])->layout);
		return 0;
	case OP_CP_ASYNC:
		view_access(s, pre, op, op->opnds[0], true, NULL);
		return 0;
	case OP_TMA_LOAD: case OP_TMA_STORE:
		view_access(s, pre, op, op->opnds[1 + ir_type(f, op->opnds[0])->rank],
			    op->kind == OP_TMA_LOAD, NULL);
		return 0;
	case OP_DOT_ASYNC:
		for (int i = 0; i < 2; i++)
			if (ir_type(f, op->opnds[i])->kind == TY_SMEM)
				view_access(s, pre, op, op->opnds[i], false, NULL);
		return 0;
	case OP_MBAR_ALLOC:
		view_access(s, pre, op, op->res[0], true, NULL);
		return 1;
	case OP_CP_ASYNC_WAIT:
		return 1;
	case OP_MBAR_ARRIVE: case OP_SYNC_THREADS: case OP_SYNC_WARPS:
		return 2;
	default:
		if (!attr_has(&op->attrs, "scratch"))
			return 0;
		scratch_access(s, pre, op, true);
		scratch_access(s, post, op, false);
		return 1;
	}
}

static void
sync_before(Sy *s, Op *op)
{
	if (s->insert) {
		Op *b = ir_op_new(s->f, s->in_task ? OP_SYNC_WARPS : OP_SYNC_THREADS,
				  0, NULL, 0, NULL, 0);

		b->loc = op->loc;
		ir_insert_before(op, b);
		pass_stat(s->pc, "syncs", 1);
		s->added++;
	}
	s->pend.n = 0;
	s->dirty = false;
}

static void
append(Sy *s, AccVec *v)
{
	for (uint32_t i = 0; i < v->n; i++)
		add(s, &s->pend, v->v[i]);
}

/* dot_wait {pending = n}: the reads of all but the n latest dot_asyncs
 * are done; they are pending like any other access until a barrier. */
static void
covered(Sy *s, int64_t n, bool store)
{
	uint32_t i, k, lo = UINT32_MAX;

	/* lo: the n-th latest issue (seqs grow with issue order) */
	for (; n > 0; n--) {
		uint32_t top = 0;

		for (i = 0; i < s->async.n; i++)
			if (s->async.v[i].store == store &&
			    s->async.v[i].seq < lo && s->async.v[i].seq > top)
				top = s->async.v[i].seq;
		if (!top)
			break;
		lo = top;
	}
	for (i = k = 0; i < s->async.n; i++) {
		if (s->async.v[i].store != store ||
		    (lo != UINT32_MAX && s->async.v[i].seq >= lo))
			s->async.v[k++] = s->async.v[i];
		else
			add(s, &s->pend, s->async.v[i]);
	}
	s->async.n = k;
}

static void
step(Sy *s, Op *op)
{
	AccVec pre = { 0 }, post = { 0 };
	int bar = accesses(s, op, &pre, &post);
	bool need = false;
	uint32_t i, k;

	if (op->kind == OP_DOT_WAIT || op->kind == OP_TMA_STORE_WAIT) {
		covered(s, attr_int(&op->attrs, "pending", 0),
			op->kind == OP_TMA_STORE_WAIT);
		return;
	}

	if (bar == 2) {
		s->pend.n = 0;
		s->dirty = false;
		return;
	}
	for (i = 0; i < pre.n && !need; i++) {
		if (s->dirty && !pre.v[i].root && pre.v[i].write)
			need = true;
		for (k = 0; k < s->pend.n && !need; k++)
			need = conflict(s, &pre.v[i], &s->pend.v[k]);
	}
	if (need)
		sync_before(s, op);
	if (op->kind == OP_DOT_ASYNC || op->kind == OP_TMA_STORE) {
		/* read until a dot_wait (tma_store_wait) covers it, past
		 * barriers: the barrier that orders the read before a write
		 * of other threads comes after the wait */
		s->seq++;
		for (i = 0; i < pre.n; i++) {
			pre.v[i].seq = s->seq;
			pre.v[i].store = op->kind == OP_TMA_STORE;
			add(s, &s->async, pre.v[i]);
		}
		return;
	}
	if (op->kind == OP_TMA_LOAD)
		return;  /* the async proxy's write: ordered by its mbarrier */
	append(s, &pre);
	if (bar) {
		s->pend.n = 0;
		s->dirty = false;
		append(s, &post);
	}
}

static void walk_block(Sy *s, Block *b);

static AccVec
copy_of(Sy *s, const AccVec *v)
{
	AccVec c = { 0 };

	for (uint32_t i = 0; i < v->n; i++)
		vec_push(s->a, &c, v->v[i]);
	return c;
}

static void
walk_regions(Sy *s, Op *op)
{
	uint32_t i;

	for (i = 0; i < op->nregions; i++)
		walk_block(s, op->regions[i]);
}

/* dst += src, marked as another iteration's accesses */
static void
append_carried(Sy *s, AccVec *dst, const AccVec *src)
{
	for (uint32_t i = 0; i < src->n; i++) {
		Acc a = src->v[i];

		a.carried = true;
		vec_push(s->a, dst, a);
	}
}

static void
walk_loop(Sy *s, Op *op)
{
	AccVec before = copy_of(s, &s->pend), end;
	AccVec abefore = copy_of(s, &s->async), aend;
	bool insert = s->insert;

	/* the state at the body's end comes round to its start */
	s->insert = false;
	s->dirty = true;
	walk_regions(s, op);
	end = copy_of(s, &s->pend);
	aend = copy_of(s, &s->async);
	s->insert = insert;
	s->pend = copy_of(s, &before);
	append_carried(s, &s->pend, &end);
	s->async = copy_of(s, &abefore);
	append_carried(s, &s->async, &aend);
	s->dirty = true;
	walk_regions(s, op);
	append(s, &before);  /* the loop may not run */
	for (uint32_t i = 0; i < abefore.n; i++)
		add(s, &s->async, abefore.v[i]);
	s->dirty = true;
}

static void
walk_if(Sy *s, Op *op)
{
	AccVec before = copy_of(s, &s->pend), joined = { 0 };
	AccVec abefore = copy_of(s, &s->async), ajoined = { 0 };
	uint32_t i;

	for (i = 0; i < op->nregions; i++) {
		s->pend = copy_of(s, &before);
		s->async = copy_of(s, &abefore);
		s->dirty = true;
		walk_block(s, op->regions[i]);
		for (uint32_t k = 0; k < s->pend.n; k++)
			vec_push(s->a, &joined, s->pend.v[k]);
		for (uint32_t k = 0; k < s->async.n; k++)
			vec_push(s->a, &ajoined, s->async.v[k]);
	}
	s->pend = joined;
	s->async = ajoined;
	s->dirty = true;
}

/* Tasks start after a CTA barrier if anything before them is pending,
 * each with nothing pending (their barriers are their own), and what any
 * of them leaves pending is pending after them. */
static void
walk_tasks(Sy *s, Op *op)
{
	AccVec joined = { 0 }, ajoined = { 0 };
	bool was = s->in_task;
	Op *t;

	if (s->pend.n || s->async.n)
		sync_before(s, op);
	for (t = op->regions[0]->first; t; t = t->next) {
		if (t->kind != OP_TASK)
			continue;
		s->pend.n = s->async.n = 0;
		s->dirty = false;
		s->in_task = true;
		walk_block(s, t->regions[0]);
		for (uint32_t k = 0; k < s->pend.n; k++)
			vec_push(s->a, &joined, s->pend.v[k]);
		for (uint32_t k = 0; k < s->async.n; k++)
			vec_push(s->a, &ajoined, s->async.v[k]);
	}
	s->in_task = was;
	s->pend = joined;
	s->async = ajoined;
	s->dirty = true;
}

static void
walk_block(Sy *s, Block *b)
{
	Op *op, *next;

	for (op = b->first; op; op = next) {
		next = op->next;
		switch (op->kind) {
		case OP_FOR: case OP_WHILE:
			walk_loop(s, op);
			break;
		case OP_IF:
			walk_if(s, op);
			break;
		case OP_TASKS:
			walk_tasks(s, op);
			break;
		default:
			step(s, op);
			break;
		}
	}
}

static void
find_unlowered(Op *op, void *ud)
{
	if (op_has(op, F_UNLOWERED))
		*(bool *)ud = true;
}

bool
pass_insert_syncs(PassCtx *pc, Func *f)
{
	Sy s = { .pc = pc, .f = f, .a = pc->scratch, .insert = true };
	bool unlowered = false;

	if (f->kind != FN_KERNEL || !attr_has(&f->attrs, "smem"))
		return false;
	ir_walk(f, find_unlowered, &unlowered);
	if (unlowered || !(s.t = target_get(pc->sm)))
		return false;
	walk_block(&s, f->body);
	return s.added > 0;
}
