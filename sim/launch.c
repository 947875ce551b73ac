/*
 * launch.c: one launch of a kernel on the simulator.
 *
 * The grid is cut into clusters (one CTA each without clusters), queued
 * in launch order (shuffled with a seed).  Up to `resident` clusters run
 * at once; all CTAs of a cluster run together.  The scheduler visits every
 * live coroutine of the resident CTAs round-robin, letting each run a
 * quantum of ops or until it blocks.  After each round the TMA loads whose
 * time has come land.  When a round makes no progress the oldest copy in
 * flight lands; when nothing is in flight either, every coroutine is
 * blocked for good: a deadlock, reported with what each one waits for.
 *
 * Every fault formats its message into L->err and longjmps to sim_launch,
 * which frees everything the launch made.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

enum { JB_NOMEM = 1, JB_FAULT = 2 };

void
sim_opts_default(SimOpts *o)
{
	memset(o, 0, sizeof *o);
	o->seed = -1;
	o->max_steps = 200000000;
	o->async_delay = 64;
	o->resident = 1;
	o->sm = 90;
	o->smem_limit = target_get(o->sm)->smem;
}

static void
context(SimLaunch *L, Buf *b)
{
	SimCo *co = L->cur;

	buf_printf(b, "kernel '%s'", L->kern->name);
	if (!co)
		return;
	buf_printf(b, ", program (%u, %u, %u)", co->cta->pid[0],
		   co->cta->pid[1], co->cta->pid[2]);
	if (co->task)
		buf_printf(b, ", task '%s' (replica %lld)", co->task,
			   (long long)co->replica);
}

static void
where(SimLaunch *L, Op *op, Buf *b)
{
	const char *src = L->mod->source && *L->mod->source ? L->mod->source
							     : "<module>";

	if (op && op->loc.line > 0)
		buf_printf(b, "%s:%d:%d: ", src, op->loc.line, op->loc.col);
	else
		buf_printf(b, "%s: ", src);
}

void
sim_fault(SimLaunch *L, Op *op, const char *fmt, ...)
{
	va_list ap;

	L->err->n = 0;
	where(L, op, L->err);
	context(L, L->err);
	buf_puts(L->err, ": ");
	va_start(ap, fmt);
	buf_vprintf(L->err, fmt, ap);
	va_end(ap);
	longjmp(L->jb, JB_FAULT);
}

void
sim_oom(SimLaunch *L)
{
	longjmp(L->jb, JB_NOMEM);
}

void *
sim_xalloc(SimLaunch *L, size_t n)
{
	void *p = tlx_calloc(1, n ? n : 1);

	if (!p)
		sim_oom(L);
	return p;
}

void *
sim_xrealloc(SimLaunch *L, void *p, size_t n)
{
	void *q = tlx_realloc(p, n ? n : 1);

	if (!q)
		sim_oom(L);
	return q;
}

void *
sim_scratch(SimLaunch *L, int i, size_t bytes)
{
	if (bytes > L->scratch_n[i]) {
		L->scratch[i] = sim_xrealloc(L, L->scratch[i], bytes);
		L->scratch_n[i] = bytes;
	}
	return L->scratch[i];
}

uint64_t
sim_rand(SimLaunch *L)
{
	uint64_t x = L->rng;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	L->rng = x;
	return x * 0x2545f4914f6cdd1dull;
}

SimCo *
sim_co_new(SimLaunch *L, SimCta *cta, SimCo *parent)
{
	SimCo *co;

	if (cta->ncos == cta->capcos) {
		uint32_t cap = cta->capcos ? cta->capcos * 2 : 8;

		cta->cos = sim_xrealloc(L, cta->cos, cap * sizeof *cta->cos);
		cta->capcos = cap;
	}
	co = sim_xalloc(L, sizeof *co);
	cta->cos[cta->ncos++] = co;
	co->cta = cta;
	co->parent = parent;
	co->ret = sim_xalloc(L, 8 * sizeof *co->ret);
	co->ret_ty = sim_xalloc(L, 8 * sizeof *co->ret_ty);
	return co;
}

static void
co_free(SimCo *co)
{
	uint32_t i;

	if (co->ret)
		for (i = 0; i < 8; i++)
			free(co->ret[i].data);
	free(co->ret);
	free(co->ret_ty);
	free(co->fr);
	free(co->pipes);
	free(co);
}

SimCta *
sim_cluster_cta(SimLaunch *L, SimCta *from, int64_t rank, Op *op)
{
	if (rank < 0 || (uint64_t)rank >= from->cl->n)
		sim_fault(L, op, "CTA rank %lld is outside the cluster of %u",
			  (long long)rank, from->cl->n);
	return &from->cl->ctas[rank];
}

int64_t
sim_info(SimLaunch *L, Op *op, int64_t dflt)
{
	uint32_t i;

	for (i = 0; i < L->info.n; i++)
		if (L->info.v[i].op == op)
			return L->info.v[i].v;
	return dflt;
}

int64_t *
sim_counter(SimLaunch *L, Op *op)
{
	uint32_t i;

	for (i = 0; i < L->counters.n; i++)
		if (L->counters.v[i].op == op)
			return &L->counters.v[i].n;
	vec_push(&L->arena, &L->counters, ((SimCounter){ op, 0 }));
	return &vec_last(&L->counters).n;
}

/* "task 'NAME' (replica R)" or "the kernel's main code", in buf. */
static const char *
agent_words(const SimTiles *r, char *buf, size_t n)
{
	if (!r->task)
		return "the kernel's main code";
	snprintf(buf, n, "task '%s' (replica %lld)", r->task, (long long)r->replica);
	return buf;
}

void
sim_tile_seen(SimLaunch *L, SimCo *co, Op *op, int64_t t, int64_t n)
{
	const char *s = attr_str(&op->attrs, "schedule");
	SimTiles *r = NULL;
	char who[96];
	uint32_t i;

	for (i = 0; i < L->tiles.n && !r; i++)
		if (L->tiles.v[i].sched == s && L->tiles.v[i].replica == co->replica &&
		    (L->tiles.v[i].task == co->task ||
		     (L->tiles.v[i].task && co->task &&
		      !strcmp(L->tiles.v[i].task, co->task))))
			r = &L->tiles.v[i];
	if (!r) {
		if (n < 0 || n > (1 << 26))
			sim_fault(L, op, "schedule '%s' has %lld tiles (0 to 2^26 "
				  "in the simulator)", s, (long long)n);
		vec_push(&L->arena, &L->tiles, ((SimTiles){ s, co->task,
			 co->replica, n, op,
			 sim_xalloc(L, (size_t)(n + 1) * sizeof(uint32_t)),
			 sim_xalloc(L, (size_t)(n + 1) * sizeof(uint64_t)) }));
		r = &vec_last(&L->tiles);
	}
	if (t < 0 || t >= r->n || n != r->n)
		sim_fault(L, op, "schedule '%s' of %lld tiles gave tile %lld",
			  s, (long long)r->n, (long long)t);
	if (r->count[t]++ == 0) {
		r->prog[t] = co->cta->lin;
		return;
	}
	sim_fault(L, op, "schedule '%s': tile %lld came twice to %s, in "
		  "programs %llu and %llu", s, (long long)t,
		  agent_words(r, who, sizeof who), (unsigned long long)r->prog[t],
		  (unsigned long long)co->cta->lin);
}

void
sim_tiles_check(SimLaunch *L)
{
	char who[96];
	uint32_t i;
	int64_t t;

	for (i = 0; i < L->tiles.n; i++) {
		SimTiles *r = &L->tiles.v[i];

		for (t = 0; t < r->n; t++)
			if (!r->count[t])
				sim_fault(L, r->op, "schedule '%s': tile %lld of "
					  "%lld never came to %s", r->sched,
					  (long long)t, (long long)r->n,
					  agent_words(r, who, sizeof who));
	}
}

/* One round's function of a Feistel network: a mixed half-word. */
static uint64_t
feistel_f(uint64_t r, uint64_t key)
{
	uint64_t h = (r ^ key) * 0x9e3779b97f4a7c15ull;

	return h ^ (h >> 29) ^ (h >> 47);
}

/* The next cluster to start.  Without a shuffle seed, in order (in
 * reverse with TLXRT_SIM_ATOMIC_ORDER 1); with one,
 * a pseudo-random permutation of [0, qn): a four-round Feistel network
 * over 2^qbits (qbits even) keyed from the seed, walking the cycle until
 * it lands in range (fewer than four steps on average).  Nothing is held
 * per cluster, whatever the grid. */
static uint64_t
queue_next(SimLaunch *L)
{
	uint64_t k = L->qhead++, x = k;
	int h = L->qbits / 2, i;
	uint64_t mask = h ? (h == 64 ? ~0ull : (1ull << h) - 1) : 0;

	if (L->o.seed < 0 || L->qn < 2)
		return L->o.atomic_reverse && k < L->qn ? L->qn - 1 - k : k;
	do {
		uint64_t lo = x & mask, hi = h ? x >> h : 0;

		for (i = 0; i < 4; i++) {
			uint64_t t = lo;

			lo = hi ^ (feistel_f(lo, L->qkey[i]) & mask);
			hi = t;
		}
		x = (hi << h) | lo;
	} while (x >= L->qn);
	return x;
}

int64_t
sim_cancel_cluster(SimLaunch *L)
{
	if (L->qhead >= L->qn || sim_rand(L) % 2 == 0)
		return -1;
	return (int64_t)queue_next(L);
}

static void
cluster_coords(SimLaunch *L, uint64_t id, uint32_t rank, uint32_t pid[3])
{
	uint64_t ncx = L->grid[0] / L->cshape[0];
	uint64_t ncy = L->grid[1] / L->cshape[1];
	uint32_t rx = rank % L->cshape[0];
	uint32_t ry = (rank / L->cshape[0]) % L->cshape[1];
	uint32_t rz = rank / (L->cshape[0] * L->cshape[1]);

	pid[0] = (uint32_t)(id % ncx) * L->cshape[0] + rx;
	pid[1] = (uint32_t)((id / ncx) % ncy) * L->cshape[1] + ry;
	pid[2] = (uint32_t)(id / (ncx * ncy)) * L->cshape[2] + rz;
}

void
sim_cluster_first(SimLaunch *L, uint64_t cluster, uint32_t pid[3])
{
	cluster_coords(L, cluster, 0, pid);
}

uint64_t
sim_cluster_cta_lin(SimLaunch *L, uint64_t cluster, uint32_t rank)
{
	uint32_t p[3];

	cluster_coords(L, cluster, rank, p);
	return p[0] + (uint64_t)p[1] * L->grid[0] +
	       (uint64_t)p[2] * L->grid[0] * L->grid[1];
}

/* The buffer holding byte `off`, else the scratch there, else "?". */
const char *
sim_smem_name(SimLaunch *L, int64_t off)
{
	const char *s = "?";
	uint32_t i;

	for (i = 0; i < L->plan.n; i++)
		if (off >= L->plan.v[i].off &&
		    off < L->plan.v[i].off + L->plan.v[i].size) {
			if (!L->plan.v[i].scratch)
				return L->plan.v[i].name;
			s = L->plan.v[i].name;
		}
	return s;
}

/* ---- the static plan ------------------------------------------------ */

typedef struct PlanWalk {
	Module *m;
	SimSmemPlan *plan;
	Arena *a;
	Vec(Func *) seen;
} PlanWalk;

static void walk_func(PlanWalk *w, Func *f);

static void
plan_op(Op *op, void *ud)
{
	PlanWalk *w = ud;
	Func *fn = op->parent ? op->parent->fn : NULL;
	ValInfo *vi = fn && op->nres == 1 ? &fn->vals.v[op->res[0]] : NULL;
	SimSmemBuf b = { .op = op, .off = -1 };

	if (op->kind == OP_SMEM_ALLOC && vi) {
		const char *an = attr_str(&op->attrs, "name");
		Type *t = vi->ty;

		if (t->kind != TY_SMEM)
			return;
		b.name = an ? an : vi->name ? vi->name : "smem";
		b.size = ir_smem_bytes(op, t);
		b.off = attr_int(&op->attrs, "offset", -1);
	} else if (op->kind == OP_MBAR_ALLOC && vi &&
		   attr_has(&op->attrs, "offset")) {
		b.name = vi->name ? vi->name : "mbar";
		b.size = ir_smem_bytes(op, vi->ty);
		b.off = attr_int(&op->attrs, "offset", 0);
	} else if (fn && attr_has(&op->attrs, "scratch")) {
		b.name = "scratch";
		b.scratch = true;
		b.size = sim_scratch_size(NULL, fn, op);
		b.off = attr_int(&op->attrs, "scratch", 0);
		if (b.size <= 0)
			return;
	} else {
		if (op->kind == OP_CALL) {
			const char *name = attr_str(&op->attrs, "callee");
			Func *callee = name ? ir_func_find(w->m, name) : NULL;

			if (callee)
				walk_func(w, callee);
		}
		return;
	}
	vec_push(w->a, w->plan, b);
}

static void
walk_func(PlanWalk *w, Func *f)
{
	uint32_t i;

	for (i = 0; i < w->seen.n; i++)
		if (w->seen.v[i] == f)
			return;
	vec_push(w->a, &w->seen, f);
	ir_walk(f, plan_op, w);
}

/* Ranges with an offset stay where the IR put them; the others follow
 * in order of appearance, 128-byte aligned. */
void
sim_smem_plan(Module *m, Func *kernel, SimSmemPlan *out, Arena *a)
{
	PlanWalk w = { .m = m, .plan = out, .a = a };
	int64_t hi = 0, end;
	uint32_t i;

	memset(out, 0, sizeof *out);
	walk_func(&w, kernel);
	for (i = 0; i < out->n; i++)
		if (out->v[i].off >= 0)
			hi = MAX(hi, out->v[i].off + out->v[i].size);
	out->total = hi;
	for (i = 0; i < out->n; i++) {
		SimSmemBuf *b = &out->v[i];

		if (b->off >= 0)
			continue;
		b->off = (out->total + SIM_SMEM_ALIGN - 1) &
			 ~(int64_t)(SIM_SMEM_ALIGN - 1);
		out->total = b->off + b->size;
	}
	end = attr_int(&kernel->attrs, "smem", 0);
	out->total = MAX(out->total, end);
}

typedef struct PipeCount {
	Value pipe;
	bool found;
} PipeCount;

static void
find_release(Op *op, void *ud)
{
	PipeCount *c = ud;

	if (op->kind == OP_PIPE_RELEASE && op->nopnds >= 1 &&
	    op->opnds[0] == c->pipe)
		c->found = true;
}

/* Releases outside any task count as one consumer (the main code). */
static bool
release_outside_tasks(Block *b, Value pipe)
{
	Op *op;
	uint32_t i;

	for (op = b->first; op; op = op->next) {
		if (op->kind == OP_PIPE_RELEASE && op->nopnds >= 1 &&
		    op->opnds[0] == pipe)
			return true;
		if (op->kind == OP_TASKS)
			continue;
		for (i = 0; i < op->nregions; i++)
			if (release_outside_tasks(op->regions[i], pipe))
				return true;
	}
	return false;
}

typedef struct PipePlan {
	SimLaunch *L;
	Func *fn;
} PipePlan;

static void
count_task(Op *op, void *ud)
{
	PipeCount *c = ud;
	PipeCount one = { c->pipe, false };

	if (op->kind != OP_TASK)
		return;
	ir_walk_block(op->regions[0], find_release, &one);
	if (one.found)
		c[1].pipe++;  /* c[1].pipe holds the count */
}

static void
plan_pipe(Op *op, void *ud)
{
	PipePlan *p = ud;
	PipeCount c[2] = { { 0, false }, { 0, false } };

	if (op->kind != OP_PIPE_CREATE || op->nres != 1)
		return;
	c[0].pipe = op->res[0];
	ir_walk(p->fn, count_task, c);
	if (release_outside_tasks(p->fn->body, op->res[0]))
		c[1].pipe++;
	vec_push(&p->L->arena, &p->L->info,
		 ((SimOpInfo){ op, c[1].pipe ? (int64_t)c[1].pipe : 1 }));
}

/* ---- CTAs and clusters ---------------------------------------------- */

static void
bind_args(SimLaunch *L, SimCta *cta)
{
	Block *body = L->kern->body;
	uint32_t i;

	for (i = 0; i < body->nargs; i++) {
		Type *t = sim_ty(cta->act, body->args[i]);
		SimVal *v = &cta->act->vals[body->args[i]];

		if (t->kind == TY_TMA) {
			v->u.tensor = (SimTensor *)&L->args[i].tensor;
		} else if (ty_is_scalar_kind(t->kind) || t->kind == TY_PTR) {
			int nb = sim_esize(t);

			v->u.bits = 0;
			memcpy(&v->u.bits, &L->args[i].bits, (size_t)nb);
		} else {
			sim_fault(L, NULL, "parameter %u has a type the "
				  "simulator cannot pass", i + 1);
		}
	}
}

static void
cta_init(SimLaunch *L, SimCluster *cl, SimCta *cta, uint32_t rank)
{
	SimFrame f = { .kind = FR_BODY };
	size_t n = (size_t)L->plan.total;
	SimCo *co;
	uint32_t i;

	cta->L = L;
	cta->cl = cl;
	cta->rank = rank;
	cluster_coords(L, cl->id, rank, cta->pid);
	cta->lin = cta->pid[0] + (uint64_t)cta->pid[1] * L->grid[0] +
		   (uint64_t)cta->pid[2] * L->grid[0] * L->grid[1];
	arena_init(&cta->arena, NULL, NULL, &L->jb);
	cta->smem_size = (int64_t)n;
	cta->smem = sim_xalloc(L, n);
	memset(cta->smem, 0xA5, n);
	cta->sh_written = sim_xalloc(L, n);
	cta->sh_pw = sim_xalloc(L, n);
	cta->sh_pr = sim_xalloc(L, n);
	cta->sh_dirty = sim_xalloc(L, n);
	for (i = 0; i < SIM_TASK_AGENTS; i++)
		cta->dirty_lo[i] = (int64_t)n;
	cta->act = sim_act_new(L, cta, L->kern);
	bind_args(L, cta);
	if (L->race)
		sim_race_cta_init(L, cta);
	co = sim_co_new(L, cta, NULL);
	co->nwarps = (uint32_t)attr_int(&L->kern->attrs, "warps", 4);
	f.blk = L->kern->body;
	f.op = f.blk->first;
	f.act = cta->act;
	sim_push_frame(L, co, f);
}

/* Frees a CTA; its activations go to the launch's spares when `keep`. */
static void
cta_free(SimCta *cta, bool keep)
{
	SimAct *a, *next;
	uint32_t i;

	for (a = cta->acts; a; a = next) {
		next = a->next_all;
		if (keep && a->vals) {
			a->next_all = cta->L->spare;
			cta->L->spare = a;
		} else {
			sim_act_free(a);
		}
	}
	for (i = 0; i < cta->ncos; i++)
		co_free(cta->cos[i]);
	free(cta->cos);
	free(cta->smem);
	free(cta->sh_written);
	free(cta->sh_pw);
	free(cta->sh_pr);
	free(cta->sh_dirty);
	free(cta->shadow);
	free(cta->vc);
	arena_reset(&cta->arena);
}

static void
start_cluster(SimLaunch *L, uint64_t id)
{
	SimCluster *cl = sim_xalloc(L, sizeof *cl);
	uint32_t i;

	L->res[L->nres++] = cl;
	cl->id = id;
	arena_init(&cl->arena, NULL, NULL, &L->jb);
	cl->ctas = sim_xalloc(L, L->csize * sizeof *cl->ctas);
	for (i = 0; i < L->csize; i++) {
		cl->n = i + 1;
		cta_init(L, cl, &cl->ctas[i], i);
	}
}

static void
cluster_free(SimCluster *cl, bool keep)
{
	uint32_t i;

	if (cl->ctas)
		for (i = 0; i < cl->n; i++)
			cta_free(&cl->ctas[i], keep);
	free(cl->ctas);
	arena_reset(&cl->arena);
	free(cl);
}

/* ---- async operations in flight ------------------------------------- */

void
sim_async_push(SimLaunch *L, SimAsync *a)
{
	SimAsync **pp = &L->inflight;

	while (*pp)
		pp = &(*pp)->next;
	*pp = a;
}

static void
async_free(SimAsync *a)
{
	free(a->data);
	free(a->valid);
	free(a);
}

/* Lands every operation that `pick` selects, oldest first. */
static bool
land_where(SimLaunch *L, bool (*pick)(SimAsync *, void *), void *ud,
	   bool first_only)
{
	SimAsync **pp = &L->inflight, *a;
	SimCo *cur = L->cur;
	bool any = false;

	while ((a = *pp)) {
		if (!pick(a, ud)) {
			pp = &a->next;
			continue;
		}
		*pp = a->next;
		a->next = NULL;
		L->cur = a->co;
		L->landing = a;
		sim_async_land(L, a);
		L->landing = NULL;
		async_free(a);
		any = true;
		if (first_only)
			break;
	}
	L->cur = cur;
	return any;
}

typedef struct Pick {
	SimCo *co;
	int kind;
	uint32_t upto;
	uint64_t now;
	SimCluster *cl;
} Pick;

static bool
pick_group(SimAsync *a, void *ud)
{
	Pick *p = ud;

	return (!p->co || a->co == p->co) && a->kind == p->kind &&
	       a->group <= p->upto;
}

void
sim_async_complete(SimLaunch *L, SimCo *co, int kind, uint32_t upto)
{
	Pick p = { .co = co, .kind = kind, .upto = upto };

	land_where(L, pick_group, &p, false);
}

static bool
pick_due(SimAsync *a, void *ud)
{
	return a->kind == AS_TMA_LOAD && a->due <= ((Pick *)ud)->now;
}

static bool
pick_tma(SimAsync *a, void *ud)
{
	(void)ud;
	return a->kind == AS_TMA_LOAD;
}

static bool
pick_cluster(SimAsync *a, void *ud)
{
	return a->cta->cl == ((Pick *)ud)->cl;
}

/* ---- the scheduler --------------------------------------------------- */

static bool
cluster_done(SimCluster *cl)
{
	uint32_t i;

	for (i = 0; i < cl->n; i++)
		if (cl->ctas[i].ncos && cl->ctas[i].cos[0]->state != CO_DONE)
			return false;
	return true;
}

static void
retire(SimLaunch *L, uint32_t r)
{
	SimCluster *cl = L->res[r];
	Pick p = { .cl = cl };

	land_where(L, pick_cluster, &p, false);
	if (L->ret_out && cl->ctas[0].ncos) {
		SimCo *co = cl->ctas[0].cos[0];
		uint32_t i;

		for (i = 0; i < 3 && i < co->nret; i++)
			L->ret_out[i] = (uint32_t)sim_get_i(
				ty_elem(co->ret_ty[i])->kind, &co->ret[i].u.bits);
		L->nret_out = co->nret;
	}
	cluster_free(cl, true);
	L->res[r] = L->res[--L->nres];
}

static uint32_t
quantum(SimLaunch *L)
{
	if (L->o.seed < 0)
		return 16;
	return 1 + (uint32_t)(sim_rand(L) % 32);
}

static bool
run_round(SimLaunch *L)
{
	bool progress = false;
	uint32_t r, c, i, n, start;

	for (r = 0; r < L->nres; r++) {
		SimCluster *cl = L->res[r];

		for (c = 0; c < cl->n; c++) {
			SimCta *cta = &cl->ctas[c];

			n = cta->ncos;
			start = L->o.seed < 0 || !n ? 0
						   : (uint32_t)(sim_rand(L) % n);
			for (i = 0; i < n; i++) {
				SimCo *co = cta->cos[(start + i) % n];

				if (co->state != CO_DONE &&
				    sim_run(L, co, quantum(L)))
					progress = true;
			}
		}
	}
	L->cur = NULL;
	return progress;
}

static void
deadlock(SimLaunch *L)
{
	Buf *b = L->err;
	uint32_t r, c, i;

	b->n = 0;
	where(L, NULL, b);
	buf_printf(b, "kernel '%s' deadlocked: every task is blocked and no "
		   "copy is in flight", L->kern->name);
	for (r = 0; r < L->nres; r++)
		for (c = 0; c < L->res[r]->n; c++) {
			SimCta *cta = &L->res[r]->ctas[c];

			for (i = 0; i < cta->ncos; i++) {
				SimCo *co = cta->cos[i];

				if (co->state == CO_DONE ||
				    (co->joining && co->live_children))
					continue;
				buf_printf(b, "\n  program (%u, %u, %u), ",
					   cta->pid[0], cta->pid[1],
					   cta->pid[2]);
				if (co->task)
					buf_printf(b, "task '%s' (replica %lld)",
						   co->task,
						   (long long)co->replica);
				else
					buf_puts(b, "main code");
				buf_puts(b, ", at ");
				if (co->wait_op && co->wait_op->loc.line > 0)
					buf_printf(b, "%s:%d:%d",
						   L->mod->source,
						   co->wait_op->loc.line,
						   co->wait_op->loc.col);
				else
					buf_puts(b, "?");
				buf_puts(b, ": ");
				sim_describe_wait(co, b);
			}
		}
	longjmp(L->jb, JB_FAULT);
}

static void
schedule(SimLaunch *L)
{
	Pick p;

	for (;;) {
		bool progress, retired = false;
		uint32_t r;

		while (L->nres < L->o.resident && L->qhead < L->qn)
			start_cluster(L, queue_next(L));
		if (!L->nres)
			break;
		progress = run_round(L);
		for (r = 0; r < L->nres;)
			if (cluster_done(L->res[r])) {
				retire(L, r);
				retired = true;
			} else {
				r++;
			}
		p.now = L->steps;
		land_where(L, pick_due, &p, false);
		if (progress || retired)
			continue;
		if (!land_where(L, pick_tma, NULL, true))
			deadlock(L);
	}
}

static void
teardown(SimLaunch *L)
{
	SimAsync *a, *next;
	uint32_t i;

	for (a = L->inflight; a; a = next) {
		next = a->next;
		async_free(a);
	}
	if (L->landing)  /* its landing faulted (a store out of bounds) */
		async_free(L->landing);
	L->landing = NULL;
	for (i = 0; i < L->nres; i++)
		cluster_free(L->res[i], false);
	while (L->spare) {
		SimAct *act = L->spare;

		L->spare = act->next_all;
		sim_act_free(act);
	}
	for (i = 0; i < L->tiles.n; i++) {
		free(L->tiles.v[i].count);
		free(L->tiles.v[i].prog);
	}
	L->tiles.n = 0;
	free(L->res);
	for (i = 0; i < 6; i++)
		free(L->scratch[i]);
	for (i = 0; i < L->ntmp; i++)
		free(L->tmp[i].data);
	free(L->tmp);
	free(L->offs);
	free(L->runs);
	free(L->args);
	arena_reset(&L->arena);
}

static int
run(SimLaunch *L)
{
	uint64_t i;
	int jr;

	if ((jr = setjmp(L->jb)) != 0) {
		teardown(L);
		if (jr == JB_NOMEM) {
			L->err->n = 0;
			buf_puts(L->err, "out of host memory in the simulator");
			return SIM_NOMEM;
		}
		return SIM_FAULT;
	}
	L->qn = L->nclusters;
	for (L->qbits = 2; L->qbits < 64 && (1ull << L->qbits) < L->qn;)
		L->qbits += 2;
	for (i = 0; i < 4; i++)
		L->qkey[i] = L->o.seed >= 0 ? sim_rand(L) : 0;
	L->res = sim_xalloc(L, L->o.resident * sizeof *L->res);
	sim_smem_plan(L->mod, L->kern, &L->plan, &L->arena);
	if (L->kern->kind == FN_KERNEL)
		ir_walk(L->kern, plan_pipe, &(PipePlan){ L, L->kern });
	if (L->kern->kind == FN_KERNEL && ir_func_laid_out(L->kern)) {
		L->laid_out = true;
		sim_plan_check(L);
		sim_race_init(L);
		sim_axis_init(L);
		L->o.check_fences = true;
	}
	schedule(L);
	sim_tiles_check(L);
	teardown(L);
	return SIM_OK;
}

static int
setup(SimLaunch *L, SimMem *mem, Module *m, Func *fn, const SimArg *args,
      const SimLaunchCfg *cfg, const SimOpts *o, Buf *err)
{
	uint32_t i, n = fn->body->nargs;

	memset(L, 0, sizeof *L);
	L->mem = mem;
	L->epoch = ++mem->launches;
	L->mod = m;
	L->kern = fn;
	L->err = err;
	L->o = *o;
	if (!L->o.resident)
		L->o.resident = 1;
	if (!L->o.max_steps)
		L->o.max_steps = 1;
	L->rng = o->seed >= 0 ? (uint64_t)o->seed * 0x9e3779b97f4a7c15ull + 1
			      : 0x853c49e6748fea9bull;
	err->n = 0;
	L->csize = 1;
	L->fast_entry = cfg->fast_entry;
	for (i = 0; i < 3; i++) {
		L->grid[i] = cfg->grid[i];
		L->cshape[i] = cfg->cluster[i] ? cfg->cluster[i] : 1;
		if (!L->grid[i] || L->grid[i] % L->cshape[i]) {
			buf_printf(err, "grid (%u, %u, %u) is empty or not a "
				   "multiple of the cluster (%u, %u, %u)",
				   cfg->grid[0], cfg->grid[1], cfg->grid[2],
				   L->cshape[0], L->cshape[1], L->cshape[2]);
			return SIM_INVALID;
		}
		L->csize *= L->cshape[i];
	}
	if (L->csize > 16) {
		buf_printf(err, "a cluster of %u CTAs is more than 16", L->csize);
		return SIM_INVALID;
	}
	L->nprog = (uint64_t)L->grid[0] * L->grid[1] * L->grid[2];
	L->nclusters = L->nprog / L->csize;
	arena_init(&L->arena, NULL, NULL, NULL);
	L->args = tlx_calloc(n ? n : 1, sizeof *L->args);
	if (!L->args) {
		buf_puts(err, "out of host memory in the simulator");
		return SIM_NOMEM;
	}
	if (n)
		memcpy(L->args, args, n * sizeof *args);
	L->arena.oom = &L->jb;
	return SIM_OK;
}

int
sim_launch(SimMem *mem, Module *m, Func *kernel, const SimArg *args,
	   const SimLaunchCfg *cfg, const SimOpts *o, Buf *err)
{
	SimLaunch *L = tlx_calloc(1, sizeof *L);
	int rc;

	if (!L)
		return SIM_NOMEM;
	rc = setup(L, mem, m, kernel, args, cfg, o, err);
	if (rc == SIM_OK) {
		rc = run(L);
		mem->steps += L->steps;
	}
	free(L);
	return rc;
}

int
sim_eval_grid(SimMem *mem, Module *m, Func *gridfn, const SimArg *args,
	      uint32_t out[3], Buf *err)
{
	SimLaunchCfg cfg = { { 1, 1, 1 }, { 1, 1, 1 }, false };
	SimOpts o;
	SimLaunch *L = tlx_calloc(1, sizeof *L);
	int rc;

	if (!L)
		return SIM_NOMEM;
	sim_opts_default(&o);
	o.max_steps = 10000000;
	rc = setup(L, mem, m, gridfn, args, &cfg, &o, err);
	if (rc == SIM_OK) {
		L->ret_out = out;
		rc = run(L);
		if (rc == SIM_OK && L->nret_out != 3) {
			buf_printf(err, "grid function '%s' returned %u values, "
				   "not 3", gridfn->name, L->nret_out);
			rc = SIM_INVALID;
		}
	}
	free(L);
	return rc;
}
