/*
 * race.c: what the simulator checks only in laid-out kernels, where the
 * IR says which warp holds each element (sim.h's header states the
 * model): races on shared memory between warps, and the alignment of
 * vector accesses.
 *
 * Every byte of a CTA's shared memory has a shadow (SimShadow): the last
 * write (agent, the agent's clock, warps, op) and the reads since, by up
 * to two agents that are not ordered with each other.  An agent is the
 * main code or one task of a program; agents are numbered across the
 * cluster (SIM_AGENTS per program, by rank), and each has a vector clock
 * over all of the cluster's (SimCta.vc, SimRace.nag entries: a kernel
 * without clusters has the 64 of one program): its own entry counts the
 * barriers its warps passed, the others what it learned through
 * synchronization.  An earlier access (agent a at clock c) is ordered
 * before an access by agent b when c < vc[b][a]: for a == b, a barrier
 * of b's warps came between; else b synchronized with a after it (a CTA
 * barrier, cluster_sync, the start or end of `tasks`, or a wait on an
 * mbarrier phase that a's arrival completed -- an arrival on another
 * program's barrier too).
 * Two accesses by one warp are ordered by program order.  A write must be
 * ordered after the last write and after the reads since; a read after
 * the last write; else the access races, and the report names both ops,
 * both warps and the buffer.
 *
 * Asynchronous operations access shared memory from their issue until
 * they complete, as peers of the agent that issued them (agents 33..63,
 * SimCta.peers, given out as a CTA first needs them; Triton ConSan's TMA
 * and tensor-core threads): one peer per issuing agent for its
 * dot_asyncs (reads of their shared operands), its TMA stores (reads of
 * the source) and its cp.asyncs (writes), one per issuing agent and
 * barrier for its TMA loads (writes; a load multicast to other programs
 * writes each of them as a peer there, of the issuing agent and that
 * program's copy of the barrier, so its bytes complete, and are ordered,
 * program by program).  Each op is the peer's next clock;
 * its access is checked at issue against what the issuing agent's clock
 * orders (the reads it retired, the phases it acquired) and recorded as
 * the peer's.  It completes, and becomes ordered before what follows:
 *   dot_async, tma_store, cp_async   at the wait that retires its group
 *     (dot_wait, tma_store_wait, cp_async_wait: groups retire in order),
 *     in the issuing agent, whose later arrivals release it to others
 *     (tma_store_wait: in the issuing thread's warp, as bulk groups are
 *     per thread; its agent's other warps learn it at their next
 *     barrier);
 *   tma_load   with the phase its bytes complete: the phase releases the
 *     peer's clock up to its oldest load still in flight to this program
 *     (one issued too early, for a later phase, is not complete), so only
 *     a wait that acquires that phase (or learns of it) orders the bytes;
 *     the issuing program learns of it only through the waiters' later
 *     arrivals on its barriers, or a cluster_sync.
 * A peer's earlier access is never ordered by program order.  So a slot
 * released (mbar_arrive) before the dot_wait that retires its reads, a
 * read of a slot whose full barrier was not waited on (or not for the
 * phase of its bytes), a refill issued before the reads retired, are
 * races whatever the schedule, reported at the later access.  These
 * checks run before the simulator's own (memops.c's timing: an async op
 * still in flight at that moment), which stay as the tile level's.
 *
 * Which warps access what follows from the layouts (ir.h "layouts"):
 * smem_store writes each element from the warp of its first copy (the
 * copy whose replicated register, lane and warp bits are 0), smem_load
 * reads it into every warp that holds it; a convert_layout with
 * `scratch` writes its copy from the source's first copies, passes a
 * barrier, and reads it into the result's holders; reduce, dot and
 * atomic with `scratch` write all of it from every warp, pass a barrier
 * and read it from every warp; cp_async writes (as its peer) from the
 * first copies of its pointers; a dot reads the views of the smem_loads
 * only dots use whole, from every warp; dot_async reads its shared
 * operands from every warp of its agent, a TMA copy its view from the
 * agent's first warp (the issuing thread); mbarriers are initialized by
 * the first warp, then a barrier, and each op on them afterwards is an
 * atomic access (a read: it orders nothing, and races only with plain
 * writes), in the program that holds it: an arrival on another program's
 * barrier, and a TMA load multicast to it (by the issuing thread, at
 * issue), must be ordered after its initialization there (a cluster_sync;
 * a multicast into a program that has not made the barrier yet is an
 * error whatever the order).  A TMA load past the last peer of a program
 * is not followed there: its bytes forget their accesses when it lands.  Reports of accesses across
 * programs name the other program, and that a release to the accessing
 * program was missing.
 *
 * Shadow work is proportional to the bytes an op touches, and tile-level
 * kernels allocate and check nothing.
 */
#include <stdlib.h>
#include <string.h>

#include "sim.h"

typedef struct SimLy {
	const Layout *l;
	uint8_t *owner;     /* per element: the warp of its first copy */
	uint32_t *holders;  /* per element: the warps holding it */
} SimLy;

/* Per op that needs it: its index in the shadow, and what its last vector
 * check found for the view's strides (rel: the residue all its vectors'
 * offsets share modulo their size; -1: they do not). */
typedef struct OpEnt {
	Op *op;
	uint32_t index;
	bool vec_known;
	int64_t stride[TY_MAX_RANK];
	int64_t rel;
} OpEnt;

struct SimRace {
	Vec(SimLy) lys;
	Vec(Op *) ops;       /* index -> op */
	OpEnt *ents;         /* open addressing on the op pointer */
	uint32_t cap, n;
	uint8_t *dot_only;   /* per kernel value: an smem_load only dots read */
	uint32_t kwarps;
	uint32_t nag;        /* agents of a cluster: a clock's entries */
};

/* An access's agent in opag: up to SIM_MAX_CLUSTER * SIM_AGENTS. */
enum { AG_BITS = 10, AG_MASK = (1 << AG_BITS) - 1 };
_Static_assert(SIM_MAX_CLUSTER * SIM_AGENTS <= 1 << AG_BITS, "agent bits");

/* ---- launch state ------------------------------------------------------- */

static uint32_t
hash_ptr(const void *p)
{
	uint64_t x = (uint64_t)(uintptr_t)p;

	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return (uint32_t)x;
}

static OpEnt *
op_ent(SimLaunch *L, Op *op)
{
	SimRace *R = L->race;
	uint32_t i;

	if (2 * (R->n + 1) > R->cap) {
		OpEnt *old = R->ents;
		uint32_t oc = R->cap, j;

		R->cap = oc ? 2 * oc : 256;
		R->ents = arena_alloc(&L->arena, R->cap * sizeof *R->ents);
		for (j = 0; j < oc; j++) {
			if (!old[j].op)
				continue;
			for (i = hash_ptr(old[j].op) & (R->cap - 1); R->ents[i].op;
			     i = (i + 1) & (R->cap - 1))
				;
			R->ents[i] = old[j];
		}
	}
	for (i = hash_ptr(op) & (R->cap - 1); R->ents[i].op;
	     i = (i + 1) & (R->cap - 1))
		if (R->ents[i].op == op)
			return &R->ents[i];
	if (R->ops.n >> (32 - AG_BITS))
		sim_fault(L, op, "too many ops for the race checker");
	R->ents[i].op = op;
	R->ents[i].index = R->ops.n;
	vec_push(&L->arena, &R->ops, op);
	R->n++;
	return &R->ents[i];
}

typedef struct DotUse {
	Func *f;
	uint8_t *mark;  /* 1: a dot operand; 2: another use */
} DotUse;

static void
mark_uses(Op *op, void *ud)
{
	DotUse *d = ud;
	uint32_t i;

	for (i = 0; i < op->nopnds; i++) {
		Op *def = ir_val(d->f, op->opnds[i])->def;

		if (def && def->kind == OP_SMEM_LOAD)
			d->mark[op->opnds[i]] |= op->kind == OP_DOT && i < 2 ? 1 : 2;
	}
}

void
sim_race_init(SimLaunch *L)
{
	Func *f = L->kern;
	DotUse d = { f, NULL };
	uint32_t i;

	L->race = arena_alloc(&L->arena, sizeof *L->race);
	L->race->kwarps = (uint32_t)attr_int(&f->attrs, "warps", 4);
	L->race->nag = L->csize * SIM_AGENTS;
	d.mark = arena_alloc(&L->arena, f->vals.n);
	ir_walk(f, mark_uses, &d);
	for (i = 0; i < f->vals.n; i++)
		d.mark[i] = d.mark[i] == 1;
	L->race->dot_only = d.mark;
}

void
sim_race_cta_init(SimLaunch *L, SimCta *cta)
{
	cta->shadow = sim_xalloc(L, (size_t)cta->smem_size * sizeof *cta->shadow);
	cta->vc = sim_xalloc(L, (size_t)SIM_AGENTS * L->race->nag *
				   sizeof *cta->vc);
}

/* ---- agents of the cluster ---------------------------------------------- */

/* Agent a (0 .. SIM_AGENTS - 1) of cta, numbered across its cluster. */
static uint32_t
gid(const SimCta *cta, uint32_t a)
{
	return cta->rank * SIM_AGENTS + a;
}

/* The program whose agent g is (any: a program of its cluster). */
static SimCta *
cta_of(SimCta *any, uint32_t g)
{
	return &any->cl->ctas[g / SIM_AGENTS];
}

static bool
is_task(uint32_t g)
{
	return g % SIM_AGENTS < SIM_TASK_AGENTS;
}

/* The vector clock of cta's agent a (nag entries). */
static uint32_t *
row(SimCta *cta, uint32_t a)
{
	return cta->vc + (size_t)a * cta->L->race->nag;
}

/* The elements' first copies and holders in layout l (once a launch). */
static SimLy *
ly_info(SimLaunch *L, Op *op, const Layout *l)
{
	SimRace *R = L->race;
	uint32_t r, lane, w, nr = 1u << l->nreg, nw = 1u << l->nwarp;
	uint32_t dr = ly_dup_mask(l), dl = ly_lane_dup(l), dw = ly_warp_dup(l);
	int64_t n = 1;
	SimLy y = { l, NULL, NULL };
	int d;

	for (r = 0; r < R->lys.n; r++)
		if (R->lys.v[r].l == l)
			return &R->lys.v[r];
	for (d = 0; d < l->rank; d++)
		n *= l->shape[d];
	y.owner = arena_alloc(&L->arena, (size_t)n);
	y.holders = arena_alloc(&L->arena, (size_t)n * sizeof *y.holders);
	for (w = 0; w < nw; w++)
		for (lane = 0; lane < 32; lane++)
			for (r = 0; r < nr; r++) {
				uint32_t f = ly_flat(l, r, lane, w);

				if (f >= (uint64_t)n)
					sim_fault(L, op, "malformed IR: a layout "
						  "maps outside its tile");
				y.holders[f] |= 1u << w;
				if (!(r & dr) && !(lane & dl) && !(w & dw))
					y.owner[f] = (uint8_t)w;
			}
	vec_push(&L->arena, &R->lys, y);
	return &vec_last(&R->lys);
}

/* The layout of tile type t, as co's warps hold it. */
static SimLy *
ly_of(SimLaunch *L, SimCo *co, Op *op, Type *t)
{
	if (!t->layout)
		sim_fault(L, op, "malformed IR: a tile without a layout in a "
			  "laid-out kernel");
	if ((uint32_t)ly_nwarps(t->layout) > co->nwarps)
		sim_fault(L, op, "malformed IR: a tile laid out over %d warps "
			  "in code that runs on %u", ly_nwarps(t->layout),
			  co->nwarps);
	return ly_info(L, op, t->layout);
}

static uint32_t
span(uint32_t w0, uint32_t n)
{
	return (n >= 32 ? ~0u : (1u << n) - 1) << w0;
}

/* The warps of co holding element f (warps past the layout's repeat). */
static uint32_t
held(const SimLy *y, uint32_t f, const SimCo *co)
{
	uint32_t m = y->holders[f], s;

	for (s = 1u << y->l->nwarp; s < co->nwarps; s <<= 1)
		m |= m << s;
	return m << co->warp0;
}

/* ---- the shadow --------------------------------------------------------- */

/* An access to cta's shared memory: by `agent`, a task agent or a peer
 * of `base` (the agent that issued it, whose clock `vc` is what the
 * access is ordered after; agents of the cluster); a peer's own clock
 * is `clk`. */
typedef struct Who {
	SimCta *cta;
	Op *op;
	Func *fn;  /* op's */
	uint32_t agent, base, warps, opag, clk;
	const uint32_t *vc;
} Who;

static Who
who(SimLaunch *L, SimCo *co, Op *op)
{
	uint32_t g = gid(co->cta, co->agent);
	Who w = { co->cta, op, co->fr[co->nfr - 1].act->fn, g, g,
		  span(co->warp0, co->nwarps), 0, 0, row(co->cta, co->agent) };

	w.opag = op_ent(L, op)->index << AG_BITS | g;
	return w;
}

/* The clock an access by w is recorded with. */
static uint32_t
now(const Who *w)
{
	return is_task(w->agent) ? w->vc[w->agent] : w->clk;
}

static bool
one_warp(uint32_t m)
{
	return m && !(m & (m - 1));
}

/* Peer agent g of the cluster (any: one of its programs). */
static SimPeer *
peer(SimCta *any, uint32_t g)
{
	return &cta_of(any, g)->peers[g % SIM_AGENTS - SIM_TASK_AGENTS];
}

static bool
ordered(const SimAcc *a, const Who *w)
{
	uint32_t ag = a->opag & AG_MASK;
	SimPeer *p;

	if (a->clk < w->vc[ag] ||
	    (ag == w->base && one_warp(a->warps | w->warps)))
		return true;
	if (is_task(ag))
		return false;
	/* a TMA store that the issuing warp's tma_store_wait retired, before
	 * that warp's own later accesses */
	p = peer(w->cta, ag);
	return p->kind == SIM_PEER_STORE && p->issuer == w->base &&
	       one_warp(a->warps | w->warps) && a->clk < p->done;
}

/* The task agent behind an access's agent. */
static uint32_t
base_of(SimCta *cta, uint32_t ag)
{
	return is_task(ag) ? ag : peer(cta, ag)->issuer;
}

/* " of program (x, y, z)" for program c when it is not self's, else "". */
static const char *
of_prog(SimCta *c, SimCta *self, char *out, size_t n)
{
	out[0] = 0;
	if (c != self)
		snprintf(out, n, " of program (%u, %u, %u)", c->pid[0],
			 c->pid[1], c->pid[2]);
	return out;
}

/* " of task 'x'", " of the main code", or "" when ag is `self`; then
 * the program when it is not self's (agents of the cluster). */
static const char *
of_agent(SimCta *cta, uint32_t ag, uint32_t self, char *out, size_t n)
{
	SimCta *c = cta_of(cta, ag);
	const char *task = c->agent_task[ag % SIM_AGENTS];
	char prog[64];

	out[0] = 0;
	of_prog(c, cta_of(cta, self), prog, sizeof prog);
	if (ag != self && task)
		snprintf(out, n, " of task '%s'%s", task, prog);
	else if (ag != self)
		snprintf(out, n, " of the main code%s", prog);
	return out;
}

/* What orders a peer's access (at clock clk) before later ones. */
static void
peer_sync(SimPeer *p, uint32_t clk, char *out, size_t n)
{
	Buf b = { 0 };

	switch (p->kind) {
	case SIM_PEER_TMA:
		buf_puts(&b, "wait on ");
		sim_bar_desc(p->bar, &b);
		buf_puts(&b, " for its bytes");
		break;
	case SIM_PEER_MMA:
		buf_puts(&b, "dot_wait retiring it");
		break;
	case SIM_PEER_STORE:
		buf_puts(&b, clk < p->done ? "barrier after the tma_store_wait "
			 "that retired it" : "tma_store_wait retiring it");
		break;
	default:
		buf_puts(&b, "cp_async_wait retiring it");
		break;
	}
	snprintf(out, n, "%s", b.s ? b.s : "");
	buf_free(&b);
}

static uint32_t
low(uint32_t m)
{
	return (uint32_t)__builtin_ctz(m);
}

/* The buffer holding `off` that op reaches through one of its views
 * (buffers that are not live at once may share bytes), else the first
 * planned there. */
static const char *
buffer_at(SimLaunch *L, Func *f, Op *op, int64_t off)
{
	const SimSmemBuf *b;
	uint32_t i, j;

	for (i = 0; i < op->nopnds; i++) {
		Op *d = ir_val(f, op->opnds[i])->def;

		while (d && d->nopnds && (d->kind == OP_SMEM_INDEX ||
					  d->kind == OP_SMEM_SLICE ||
					  d->kind == OP_SMEM_TRANS))
			d = ir_val(f, d->opnds[0])->def;
		for (j = 0; d && d->kind == OP_SMEM_ALLOC && j < L->plan.n; j++) {
			b = &L->plan.v[j];
			if (b->op == d && !b->scratch && off >= b->off &&
			    off < b->off + b->size)
				return b->name;
		}
	}
	return sim_smem_name(L, off);
}

/* Reports: an access of a task agent happened before (past tense, "with
 * no barrier in between"); a peer's is still going on, and names what
 * would have ordered it. */
TLX_NORETURN static void
race(SimLaunch *L, const Who *w, int64_t off, bool write, const SimAcc *prev,
     bool prev_write)
{
	uint32_t ag = prev->opag & AG_MASK, x = low(prev->warps), y, m;
	uint32_t pb = base_of(w->cta, ag);
	Op *pop = L->race->ops.v[prev->opag >> AG_BITS];
	SimCta *self = cta_of(w->cta, w->base);
	char at[200], of[120], sync[300], in[64], to[80];

	y = low(w->warps);
	for (m = w->warps; m && ag == w->base; m &= m - 1)
		if (prev->warps & ~(1u << low(m))) {
			y = low(m);
			x = low(prev->warps & ~(1u << y));
			break;
		}
	of_agent(w->cta, pb, w->base, of, sizeof of);
	sim_op_where(L, pop, at, sizeof at);
	/* across programs: the shared memory's, and what the issuing
	 * program had to learn it through */
	of_prog(w->cta, self, in, sizeof in);
	if (in[0])
		memcpy(in, " in", 3);
	to[0] = 0;
	if (w->cta != self || cta_of(w->cta, pb) != self)
		snprintf(to, sizeof to, "arrival or cluster_sync releasing it "
			 "to program (%u, %u, %u)", self->pid[0], self->pid[1],
			 self->pid[2]);
	if (is_task(ag))
		sim_fault(L, w->op, "%s in warp %u %s shared memory of buffer "
			  "'%s' (offset %lld)%s that warp %u%s %s in %s, with no "
			  "%s in between: a race", op_name(w->op->kind), y,
			  write ? "writes" : "reads",
			  buffer_at(L, w->fn, w->op, off), (long long)off, in,
			  x, of, prev_write ? "wrote" : "read", at,
			  to[0] ? to : "barrier");
	peer_sync(peer(w->cta, ag), prev->clk, sync, sizeof sync);
	if (to[0])
		snprintf(sync + strlen(sync), sizeof sync - strlen(sync),
			 ", then an %s,", to);
	sim_fault(L, w->op, "%s in warp %u %s shared memory of buffer '%s' "
		  "(offset %lld)%s that warp %u%s %s asynchronously in %s, "
		  "with no %s in between: a race", op_name(w->op->kind), y,
		  write ? "writes" : "reads", buffer_at(L, w->fn, w->op, off),
		  (long long)off, in, x, of, prev_write ? "writes" : "reads",
		  at, sync);
}

static void
note_read(SimShadow *s, const Who *w)
{
	SimAcc a = { now(w), w->warps, w->opag };
	int i;

	for (i = 0; i < 2; i++) {
		SimAcc *r = &s->r[i];

		if (r->warps && (r->opag & AG_MASK) == w->agent) {
			if (r->clk == a.clk) {
				r->warps |= a.warps;
				r->opag = a.opag;
			} else {
				*r = a;
			}
			return;
		}
	}
	for (i = 0; i < 2; i++)
		if (!s->r[i].warps || ordered(&s->r[i], w)) {
			s->r[i] = a;
			return;
		}
	s->r[1] = a;  /* a third unordered agent: forget the second */
}

/* An access to [off, off + n) by w's warps.  A byte whose shadow is
 * what the previous byte's was gets what the previous byte's became. */
static void
touch(SimLaunch *L, const Who *w, int64_t off, int64_t n, bool write)
{
	SimShadow *s = w->cta->shadow + off, before = { 0 }, after = { 0 };
	int64_t b;
	int i;

	if (off < 0 || off + n > w->cta->smem_size)
		sim_fault(L, w->op, "shared memory access out of bounds "
			  "(offset %lld of %lld bytes)", (long long)off,
			  (long long)w->cta->smem_size);
	for (b = 0; b < n; b++, s++) {
		if (b && !memcmp(s, &before, sizeof before)) {
			*s = after;
			continue;
		}
		before = *s;
		for (i = 0; write && i < 2; i++)
			if (s->r[i].warps && !ordered(&s->r[i], w))
				race(L, w, off + b, true, &s->r[i], false);
		if (s->w.warps && !ordered(&s->w, w))
			race(L, w, off + b, write, &s->w, true);
		if (!write) {
			note_read(s, w);
		} else {
			s->w = (SimAcc){ now(w), w->warps, w->opag };
			memset(s->r, 0, sizeof s->r);
		}
		after = *s;
	}
}

/* A barrier of agent ag's warps: its clock advances, and what the warp
 * that issued its TMA stores learned at tma_store_wait becomes every
 * warp's. */
static void
tick(SimCta *cta, uint32_t ag)
{
	uint32_t *vc = row(cta, ag), g = gid(cta, ag), p;

	vc[g]++;
	for (p = 0; p < cta->npeers; p++)
		if (cta->peers[p].kind == SIM_PEER_STORE &&
		    cta->peers[p].issuer == g)
			vc[g + SIM_TASK_AGENTS + p - ag] =
				MAX(vc[g + SIM_TASK_AGENTS + p - ag],
				    cta->peers[p].done);
}

/* A barrier of co's warps (an op's own, or mbar_arrive's). */
static void
own_barrier(SimCo *co)
{
	tick(co->cta, co->agent);
}

/* ---- synchronization ---------------------------------------------------- */

static void
join_into(SimLaunch *L, uint32_t *dst, const uint32_t *src)
{
	uint32_t i;

	for (i = 0; i < L->race->nag; i++)
		dst[i] = MAX(dst[i], src[i]);
}

static bool
live(const SimCo *x)
{
	return x->state != CO_DONE && !(x->joining && x->live_children);
}

/* sync_threads (one program) or cluster_sync (all of a cluster's): every
 * live agent of the n programs learns what each knew. */
void
sim_race_sync(SimLaunch *L, SimCta *ctas, uint32_t n)
{
	uint32_t all[SIM_MAX_CLUSTER * SIM_AGENTS] = { 0 }, c, i;
	size_t bytes = L->race->nag * sizeof *all;

	for (c = 0; c < n; c++)
		for (i = 0; i < ctas[c].ncos; i++)
			if (live(ctas[c].cos[i]))
				tick(&ctas[c], ctas[c].cos[i]->agent);
	for (c = 0; c < n; c++)
		for (i = 0; i < ctas[c].ncos; i++)
			if (live(ctas[c].cos[i]))
				join_into(L, all,
					  row(&ctas[c], ctas[c].cos[i]->agent));
	for (c = 0; c < n; c++)
		for (i = 0; i < ctas[c].ncos; i++)
			if (live(ctas[c].cos[i]))
				memcpy(row(&ctas[c], ctas[c].cos[i]->agent),
				       all, bytes);
}

void
sim_race_fork(SimLaunch *L, SimCo *parent)
{
	SimCta *cta = parent->cta;
	uint32_t *pv = row(cta, parent->agent), i;

	tick(cta, parent->agent);
	for (i = 0; i < cta->ncos; i++) {
		SimCo *c = cta->cos[i];
		uint32_t own, g;

		if (c->parent != parent || c->fork != parent->forks)
			continue;
		if (c->agent >= SIM_TASK_AGENTS || c->warp0 + c->nwarps > 32)
			sim_fault(L, parent->fr[parent->nfr - 1].op, "the tasks "
				  "need %u warps; a program has at most 32",
				  c->warp0 + c->nwarps);
		g = gid(cta, c->agent);
		own = MAX(row(cta, c->agent)[g], pv[g]) + 1;
		memcpy(row(cta, c->agent), pv, L->race->nag * sizeof *pv);
		row(cta, c->agent)[g] = own;
		cta->agent_task[c->agent] = c->task;
	}
}

void
sim_race_join(SimLaunch *L, SimCo *parent)
{
	SimCta *cta = parent->cta;
	uint32_t a;

	for (a = 1; a < SIM_TASK_AGENTS; a++) {
		tick(cta, a);
		join_into(L, row(cta, parent->agent), row(cta, a));
	}
	tick(cta, parent->agent);
}

static uint32_t *
clocks(SimCta *cta)
{
	return arena_alloc(&cta->arena, cta->L->race->nag * sizeof(uint32_t));
}

void
sim_race_release(SimLaunch *L, SimBar *b)
{
	SimCo *co = L->cur;

	if (!co)
		return;
	own_barrier(co);
	if (!b->rel)
		b->rel = clocks(b->cta);
	join_into(L, b->rel, row(co->cta, co->agent));
}

/* A phase completes: the waits that pass on it acquire what its arrivals
 * (of any program of the cluster) released, and the TMA loads onto it
 * that have landed -- a peer's clock up to its oldest load still in
 * flight to this program (a load onto this barrier issued too early, for
 * a later phase, is not complete). */
void
sim_race_phase_done(SimBar *b)
{
	SimCta *cta = b->cta;
	uint32_t r = cta->rank, g, p, upto;
	SimAsync *a;

	if (!b->rel)
		b->rel = clocks(cta);
	for (p = 0; p < cta->npeers; p++) {
		if (cta->peers[p].kind != SIM_PEER_TMA || cta->peers[p].bar != b)
			continue;
		upto = cta->peers[p].clk;
		for (a = cta->L->inflight; a; a = a->next)
			if (a->kind == AS_TMA_LOAD && a->cta->cl == cta->cl &&
			    (a->mask >> r & 1) &&
			    a->mpeer[r] == SIM_TASK_AGENTS + p)
				upto = MIN(upto, a->mclk[r]);
		g = gid(cta, SIM_TASK_AGENTS + p);
		b->rel[g] = MAX(b->rel[g], upto);
	}
	if (!b->acq)
		b->acq = clocks(cta);
	memcpy(b->acq, b->rel, cta->L->race->nag * sizeof *b->acq);
}

void
sim_race_acquire(SimLaunch *L, SimCo *co, SimBar *b)
{
	if (b->acq && b->cta == co->cta)
		join_into(L, row(co->cta, co->agent), b->acq);
}

void
sim_race_landed(SimCta *cta, const SimView *v)
{
	SimLaunch *L = cta->L;
	size_t n, i;
	SimRun *r = sim_view_runs(L, v, &n);

	for (i = 0; i < n; i++)
		memset(cta->shadow + r[i].off, 0,
		       (size_t)r[i].len * sizeof *cta->shadow);
}

/* ---- vector accesses ---------------------------------------------------- */

static void
view_str(Buf *b, const SimView *v)
{
	int d;

	buf_printf(b, "the view at offset %lld, shape [", (long long)v->off);
	for (d = 0; d < v->g.rank; d++)
		buf_printf(b, "%s%lld", d ? ", " : "", (long long)v->g.shape[d]);
	buf_puts(b, "], strides [");
	for (d = 0; d < v->g.rank; d++)
		buf_printf(b, "%s%lld", d ? ", " : "", (long long)v->g.stride[d]);
	buf_puts(b, "] elements");
}

TLX_NORETURN static void
vec_fault(SimLaunch *L, Op *op, const SimView *v, Type *t, int64_t vec,
	  uint32_t r, uint32_t lane, uint32_t w, int64_t at, bool contig)
{
	Buf b = { 0 };
	char msg[600];

	buf_printf(&b, "%s with vec = %lld: the %lld-byte vector of registers "
		   "%u..%u of lane %u of warp %u (element ", op_name(op->kind),
		   (long long)vec, (long long)(vec * v->g.ebytes), r,
		   r + (uint32_t)vec - 1, lane, w);
	sim_index_str(&b, t, ly_flat(t->layout, r, lane, w));
	if (contig)
		buf_printf(&b, ") starts at offset %lld of buffer '%s', not a "
			   "multiple of %lld (", (long long)at,
			   sim_smem_name(L, at), (long long)(vec * v->g.ebytes));
	else
		buf_printf(&b, ") is not contiguous in buffer '%s' (",
			   sim_smem_name(L, at));
	view_str(&b, v);
	buf_puts(&b, contig ? "): a misaligned address on the GPU"
			    : "): no vector access can make it");
	snprintf(msg, sizeof msg, "%s", b.s);
	buf_free(&b);
	sim_fault(L, op, "%s", msg);
}

/* Every vector of `vec` registers of every thread, one by one (replicas
 * skipped): the residue their offsets share modulo their size, or -1
 * when they share none or one is not contiguous.  With `report`, faults
 * at the first that is not contiguous or not aligned. */
static int64_t
vec_groups(SimLaunch *L, Op *op, const SimView *v, Type *t, int64_t vec,
	   bool report)
{
	const Layout *l = t->layout;
	uint32_t nr = 1u << l->nreg, nw = 1u << l->nwarp, r, lane, w, k;
	uint32_t dr = ly_dup_mask(l), dl = ly_lane_dup(l), dw = ly_warp_dup(l);
	uint32_t skip = dr & ~(uint32_t)(vec - 1);
	int64_t bytes = vec * v->g.ebytes, rel = -1, at, res;
	size_t n;
	int64_t *o = sim_view_offsets(L, v, &n);
	bool ok;

	for (w = 0; w < nw; w++) {
		if (w & dw)
			continue;
		for (lane = 0; lane < 32; lane++) {
			if (lane & dl)
				continue;
			for (r = 0; r < nr; r += (uint32_t)vec) {
				if (r & skip)
					continue;
				at = o[ly_flat(l, r, lane, w)];
				res = at % bytes;
				for (k = 1, ok = true; k < vec && ok; k++)
					ok = o[ly_flat(l, r + k, lane, w)] ==
					     at + (int64_t)k * v->g.ebytes;
				if (ok && (rel < 0 || rel == res) &&
				    (!report || res == 0)) {
					rel = res;
					continue;
				}
				if (report)
					vec_fault(L, op, v, t, vec, r, lane, w, at, ok);
				return -1;
			}
		}
	}
	return rel;
}

/* smem_load and smem_store with `vec = N`: each thread accesses its
 * registers r .. r + N - 1 (r a multiple of N) as one vector of N
 * elements, which must be contiguous and aligned to its size.  Views
 * with the strides an op saw before are checked through the residue
 * their vectors share (one modulo per execution). */
static void
check_vec(SimLaunch *L, Op *op, const SimView *v, Type *t)
{
	int64_t vec = attr_int(&op->attrs, "vec", 1), bytes;
	OpEnt *e;

	if (vec <= 1)
		return;
	if (!is_pow2(vec) || vec > ly_nregs(t->layout))
		sim_fault(L, op, "malformed IR: %s has vec = %lld, not a power "
			  "of two dividing its %d registers per thread",
			  op_name(op->kind), (long long)vec, ly_nregs(t->layout));
	bytes = vec * v->g.ebytes;
	e = op_ent(L, op);
	if (!e->vec_known ||
	    memcmp(e->stride, v->g.stride, (size_t)v->g.rank * sizeof *v->g.stride)) {
		SimView z = *v;

		z.off = 0;
		e->rel = vec_groups(L, op, &z, t, vec, false);
		e->vec_known = true;
		memcpy(e->stride, v->g.stride, (size_t)v->g.rank * sizeof *v->g.stride);
	}
	if (e->rel < 0 || ((v->off % bytes) + e->rel) % bytes)
		vec_groups(L, op, v, t, vec, true);
}

/* ---- the ops ------------------------------------------------------------ */

/* Accesses gathered into runs of consecutive bytes by the same warps. */
typedef struct Runs {
	Who w;
	int64_t at, len;
	bool write;
} Runs;

static void
runs_flush(SimLaunch *L, Runs *r)
{
	if (r->len)
		touch(L, &r->w, r->at, r->len, r->write);
	r->len = 0;
}

static void
runs_add(SimLaunch *L, Runs *r, int64_t off, int64_t n, uint32_t warps)
{
	if (r->len && warps == r->w.warps && off == r->at + r->len) {
		r->len += n;
		return;
	}
	runs_flush(L, r);
	r->w.warps = warps;
	r->at = off;
	r->len = n;
}

/* Each element of the view (row-major) by the warps its layout gives:
 * writes from first copies, reads into every holder; as w's agent. */
static void
view_access_as(SimLaunch *L, SimCo *co, const Who *w, const SimView *v,
	       Type *t, bool write)
{
	SimLy *y = ly_of(L, co, w->op, t);
	Runs r = { *w, 0, 0, write };
	size_t n, i;
	int64_t *o = sim_view_offsets(L, v, &n);

	for (i = 0; i < n; i++)
		runs_add(L, &r, o[i], v->g.ebytes,
			 write ? 1u << (co->warp0 + y->owner[i])
			       : held(y, (uint32_t)i, co));
	runs_flush(L, &r);
}

static void
view_access(SimLaunch *L, SimCo *co, Op *op, const SimView *v, Type *t,
	    bool write)
{
	Who w = who(L, co, op);

	view_access_as(L, co, &w, v, t, write);
}

/* The whole view from every warp of co (a dot's operand). */
static void
view_whole(SimLaunch *L, SimCo *co, Op *op, const SimView *v)
{
	Who w = who(L, co, op);
	size_t n, i;
	SimRun *r = sim_view_runs(L, v, &n);

	for (i = 0; i < n; i++)
		touch(L, &w, r[i].off, r[i].len, false);
}

/* convert_layout with scratch: the copy in the result's layout, written
 * by the source's first copies, a barrier, read by the result's holders. */
static void
convert(SimLaunch *L, SimCo *co, SimAct *act, Op *op)
{
	Type *st = sim_ty(act, op->opnds[0]), *rt = sim_ty(act, op->res[0]);
	SimLy *ys = ly_of(L, co, op, st), *yr = ly_of(L, co, op, rt);
	const Layout *l = rt->layout;
	int eb = sim_esize(rt), d;
	int64_t base = attr_int(&op->attrs, "scratch", 0), f, n = ty_numel(rt);
	SimView v = { .off = base,
		      .g = { .ebytes = eb, .rank = l->rank >= 2 ? 2 : 1 } };
	Runs r = { who(L, co, op), 0, 0, true };

	v.g.shape[v.g.rank - 1] = l->shape[l->rank - 1];
	v.g.stride[v.g.rank - 1] = 1;
	if (v.g.rank == 2) {
		v.g.shape[0] = 1;
		for (d = 0; d + 1 < l->rank; d++)
			v.g.shape[0] *= l->shape[d];
		v.g.stride[0] = ly_copy_row_bytes(l, eb) / eb;
	}
	sim_smem_write(L, co->cta, op, &v, sim_data(&act->vals[op->opnds[0]], st),
		       true, "convert_layout");
	for (f = 0; f < n; f++)
		runs_add(L, &r, base + ly_copy_offset(l, (uint32_t)f, eb), eb,
			 1u << (co->warp0 + ys->owner[f]));
	runs_flush(L, &r);
	own_barrier(co);
	r.write = false;
	for (f = 0; f < n; f++)
		runs_add(L, &r, base + ly_copy_offset(l, (uint32_t)f, eb), eb,
			 held(yr, (uint32_t)f, co));
	runs_flush(L, &r);
}

/* reduce, dot, atomic with scratch: every warp writes it, a barrier,
 * every warp reads it. */
static void
scratch_all(SimLaunch *L, SimCo *co, SimAct *act, Op *op)
{
	int64_t off = attr_int(&op->attrs, "scratch", 0);
	int64_t n = sim_scratch_size(target_get(L->o.sm), act->fn, op);
	Who w;

	if (n <= 0)
		return;
	w = who(L, co, op);
	touch(L, &w, off, n, true);
	own_barrier(co);
	touch(L, &w, off, n, false);
}

static void
dot_operands(SimLaunch *L, SimCo *co, SimAct *act, Op *op)
{
	int i;

	if (act->fn != L->kern)
		return;
	for (i = 0; i < 2; i++) {
		Op *def = ir_val(act->fn, op->opnds[i])->def;

		if (def && def->kind == OP_SMEM_LOAD &&
		    L->race->dot_only[op->opnds[i]])
			view_whole(L, co, op, &act->vals[def->opnds[0]].u.view);
	}
}

/* The words of the mbarrier an op uses, when the plan placed them. */
static int64_t
mbar_off(SimAct *act, Op *op)
{
	SimBar *b = act->vals[op->opnds[0]].u.mb.bar;

	if (!b || !b->alloc || b->alloc->kind != OP_MBAR_ALLOC ||
	    !attr_has(&b->alloc->attrs, "offset"))
		return -1;
	return attr_int(&b->alloc->attrs, "offset", 0) + 8 * (int64_t)b->index;
}

static void
mbar_op(SimLaunch *L, SimCo *co, SimAct *act, Op *op)
{
	Type *t;
	int64_t off;
	Who w;

	switch (op->kind) {
	case OP_MBAR_ALLOC:
		if (!attr_has(&op->attrs, "offset"))
			return;
		t = sim_ty(act, op->res[0]);
		w = who(L, co, op);
		w.warps = 1u << co->warp0;
		touch(L, &w, attr_int(&op->attrs, "offset", 0),
		      8 * (t->rank ? t->shape[0] : 1), true);
		own_barrier(co);
		return;
	default:
		if ((off = mbar_off(act, op)) < 0)
			return;
		w = who(L, co, op);
		if (op->nopnds > 1 && op->kind == OP_MBAR_ARRIVE) {
			/* another program's barrier: its initialization
			 * must be ordered before (a cluster_sync) */
			w.cta = sim_cluster_cta(L, co->cta,
						sim_scalar_i(act, op->opnds[1]), op);
			if (!w.cta->shadow)
				return;
		}
		if (op->kind != OP_MBAR_WAIT)
			w.warps = 1u << co->warp0;
		touch(L, &w, off, 8, false);
		return;
	}
}

/* The tile t that smem_load or smem_store moves through its view, when
 * they match (else the op reports malformed IR when it runs). */
static Type *
moved(SimAct *act, Op *op)
{
	Type *vt, *t;

	if (op->nopnds < 1 + (op->kind == OP_SMEM_STORE) ||
	    (op->kind == OP_SMEM_LOAD && op->nres != 1))
		return NULL;
	vt = sim_ty(act, op->opnds[0]);
	t = sim_ty(act, op->kind == OP_SMEM_LOAD ? op->res[0] : op->opnds[1]);
	if (vt->kind != TY_SMEM || t->kind != TY_TILE ||
	    ty_numel(t) != ty_numel(vt) || t->elem != vt->elem)
		return NULL;
	return t;
}

void
sim_race_pre(SimLaunch *L, SimCo *co, SimAct *act, Op *op)
{
	SimView v;
	Type *t;

	if ((op->kind != OP_SMEM_LOAD && op->kind != OP_SMEM_STORE) ||
	    !(t = moved(act, op)))
		return;
	v = act->vals[op->opnds[0]].u.view;
	check_vec(L, op, &v, t);
	if (op->kind == OP_SMEM_STORE)
		view_access(L, co, op, &v, t, true);
	else if (act->fn != L->kern || !L->race->dot_only[op->res[0]])
		view_access(L, co, op, &v, t, false);
}

void
sim_race_op(SimLaunch *L, SimCo *co, SimAct *act, Op *op)
{
	switch (op->kind) {
	case OP_CP_ASYNC_WAIT:
		own_barrier(co);
		return;
	case OP_SYNC_WARPS:
		if (co->task)
			own_barrier(co);
		return;
	case OP_CONVERT_LAYOUT:
		if (attr_has(&op->attrs, "scratch"))
			convert(L, co, act, op);
		return;
	case OP_DOT:
		dot_operands(L, co, act, op);
		if (attr_has(&op->attrs, "scratch"))
			scratch_all(L, co, act, op);
		return;
	case OP_REDUCE: case OP_ATOMIC: case OP_ATOMIC_CAS:
		if (attr_has(&op->attrs, "scratch"))
			scratch_all(L, co, act, op);
		return;
	case OP_MBAR_ALLOC: case OP_MBAR_WAIT: case OP_MBAR_ARRIVE:
	case OP_MBAR_EXPECT:
		mbar_op(L, co, act, op);
		return;
	default:
		return;
	}
}

/* ---- asynchronous operations ---------------------------------------- */

/* The peer agent of cta (its number there) for the ops of `kind` that
 * agent `issuer` of the cluster issues (TMA loads: onto bar, a barrier
 * of cta), or 0 when every peer is taken (its ops are then not
 * followed). */
static uint32_t
peer_of(SimCta *cta, int kind, uint32_t issuer, SimBar *bar)
{
	uint32_t p;

	for (p = 0; p < cta->npeers; p++)
		if (cta->peers[p].kind == kind &&
		    cta->peers[p].issuer == issuer && cta->peers[p].bar == bar)
			return SIM_TASK_AGENTS + p;
	if (cta->npeers == SIM_AGENTS - SIM_TASK_AGENTS)
		return 0;
	cta->peers[p] = (SimPeer){ (uint8_t)kind, (uint16_t)issuer, bar, 0, 0 };
	cta->npeers++;
	return SIM_TASK_AGENTS + p;
}

static void
view_runs(SimLaunch *L, const Who *w, const SimView *v, bool write)
{
	size_t n, i;
	SimRun *r = sim_view_runs(L, v, &n);

	for (i = 0; i < n; i++)
		touch(L, w, r[i].off, r[i].len, write);
}

/* The barrier of cta that alloc's barrier `index` is, or NULL when cta
 * has not made it yet. */
static SimBar *
bar_of(SimCta *cta, Op *alloc, uint32_t index)
{
	uint32_t i;

	for (i = cta->bars.n; i-- > 0;)
		if (cta->bars.v[i].op == alloc)
			return index < cta->bars.v[i].n ? &cta->bars.v[i].bar[index]
							: NULL;
	return NULL;
}

/* A TMA load writes the view in every program of its multicast mask, as
 * a peer there of the issuing agent and the barrier its bytes complete
 * there: checked against what the issuer's clock orders. */
static void
tma_load_access(SimLaunch *L, SimCo *co, SimAsync *a, SimBar *bar)
{
	SimCluster *cl = co->cta->cl;
	uint32_t r, p;
	SimBar *b;
	Who w;

	for (r = 0; r < cl->n; r++) {
		SimCta *to = &cl->ctas[r];

		if (!(a->mask >> r & 1))
			continue;
		b = to == co->cta ? bar : bar_of(to, a->bar_op, a->bar_index);
		if (!b)
			sim_fault(L, a->op, "tma_load multicasts to program (%u, "
				  "%u, %u) of the cluster, which has not "
				  "initialized its barrier yet: a cluster_sync "
				  "between the barriers' mbar_alloc and the first "
				  "copy onto them is missing", to->pid[0],
				  to->pid[1], to->pid[2]);
		if (!to->shadow)
			continue;
		w = who(L, co, a->op);
		if (to != co->cta && attr_has(&a->bar_op->attrs, "offset")) {
			/* the copy completes bytes on that program's
			 * barrier: its initialization must be ordered
			 * before */
			w.cta = to;
			w.warps = 1u << co->warp0;
			touch(L, &w, attr_int(&a->bar_op->attrs, "offset", 0) +
				     8 * (int64_t)a->bar_index, 8, false);
		}
		if (!(p = peer_of(to, SIM_PEER_TMA, gid(co->cta, co->agent), b)))
			continue;
		w = who(L, co, a->op);
		w.cta = to;
		w.agent = gid(to, p);
		w.clk = a->mclk[r] = peer(to, w.agent)->clk++;
		w.opag = (w.opag & ~(uint32_t)AG_MASK) | w.agent;
		w.warps = 1u << co->warp0;
		a->mpeer[r] = (uint8_t)p;
		view_runs(L, &w, &a->view, true);
	}
}

void
sim_race_async(SimLaunch *L, SimCo *co, SimAct *act, SimAsync *a,
	       SimBar *bar)
{
	static const int kinds[] = { [AS_TMA_STORE] = SIM_PEER_STORE,
				     [AS_CP_ASYNC] = SIM_PEER_CP,
				     [AS_DOT] = SIM_PEER_MMA };
	SimCta *cta = co->cta;
	uint32_t p;
	Who w;

	if (a->kind == AS_TMA_LOAD) {
		tma_load_access(L, co, a, bar);
		return;
	}
	if (!(p = peer_of(cta, kinds[a->kind], gid(cta, co->agent), NULL)))
		return;
	w = who(L, co, a->op);
	w.agent = gid(cta, p);
	w.clk = a->clk = peer(cta, w.agent)->clk++;
	w.opag = (w.opag & ~(uint32_t)AG_MASK) | w.agent;
	a->peer = w.agent;
	switch (a->kind) {
	case AS_TMA_STORE:
		w.warps = 1u << co->warp0;
		view_runs(L, &w, &a->view, false);
		break;
	case AS_CP_ASYNC:
		view_access_as(L, co, &w, &a->view, sim_ty(act, a->op->opnds[1]),
			       true);
		break;
	default:
		view_runs(L, &w, &a->view, false);
		if (a->view2.g.ebytes)
			view_runs(L, &w, &a->view2, false);
		break;
	}
}

void
sim_race_async_done(SimLaunch *L, SimAsync *a)
{
	SimPeer *p;
	uint32_t *vc;

	(void)L;
	if (!a->peer || a->kind == AS_TMA_LOAD)
		return;
	p = peer(a->cta, a->peer);
	if (p->kind == SIM_PEER_STORE) {  /* the issuing thread's wait */
		p->done = MAX(p->done, a->clk + 1);
		return;
	}
	vc = row(a->cta, p->issuer % SIM_AGENTS);
	vc[a->peer] = MAX(vc[a->peer], a->clk + 1);
}

void
sim_race_unfenced(SimLaunch *L, SimCta *cta, Op *op, int64_t off)
{
	SimAcc *w = &cta->shadow[off].w;
	uint32_t self = L->cur ? gid(cta, L->cur->agent) : 0, ag, y;
	char at[200], of[120];

	if (!w->warps)
		return;
	ag = base_of(cta, w->opag & AG_MASK);
	y = L->cur ? L->cur->warp0 : 0;
	sim_fault(L, op, "%s in warp %u reads shared memory of buffer '%s' "
		  "(offset %lld) that warp %u%s wrote in %s, with no "
		  "fence_async_shared in between", op_name(op->kind), y,
		  L->cur ? buffer_at(L, L->cur->fr[L->cur->nfr - 1].act->fn,
				     op, off)
			 : sim_smem_name(L, off),
		  (long long)off, low(w->warps),
		  of_agent(cta, ag, self, of, sizeof of),
		  sim_op_where(L, L->race->ops.v[w->opag >> AG_BITS], at,
			       sizeof at));
}
