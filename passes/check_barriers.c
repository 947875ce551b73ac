/*
 * check_barriers.c: static checks of mbarrier protocols -- pass
 * "check-barriers".
 *
 * What the compiler can know of a kernel's own barriers (`barrier
 * B[n](arrive: A)`; pipes are lowered later with counts that are right by
 * construction): which agents -- the code outside tasks, each task --
 * arrive on each barrier array and which wait on it.  Each agent is taken
 * to arrive once per phase, with its arrive's `count`.
 *   - a barrier waited on that nothing arrives on (here, or from another
 *     program of the cluster): the wait never returns -- an error;
 *   - arrivals per phase that differ from the barrier's count: fewer and
 *     its phases never complete, more and they complete before every
 *     agent has arrived -- a warning (an agent may arrive more than once
 *     per phase on purpose);
 *   - a task waiting on a barrier that only it arrives on while other
 *     agents wait on it too (a producer waiting on its own `full`
 *     barrier instead of `empty`) -- a warning, unless a CLC request
 *     completes the barrier's phases (lower-schedules' protocol: the
 *     claimer's arrival expects the answer's bytes, and it waits for the
 *     answer as the other agents do).
 * An agent's arrivals on its own program's barrier and on another's
 * (`cta:`) are taken apart, the first of each once per phase.  A `cta:`
 * the same in every program of the cluster (a constant, a parameter)
 * names one barrier that every program arrives on: it counts once for
 * every program of the cluster.  One that depends on the program
 * (`cluster_rank() ^ 1`) is taken to name a different program from each,
 * as a release on the peer's barrier does: it counts once.  Likewise an
 * arrive of a replicated task on an element of the array that depends on
 * the replica (`turn[1 - r]`: each hands a turn to the other) is taken
 * to name a different element from each replica: it counts once, not
 * once per replica.
 *   - a barrier a tma_load counts its bytes on, on which nothing expects
 *     bytes (expect_bytes, `arrive(b, bytes: n)`): its phase may complete
 *     before the bytes land -- an error.
 * Requires: tile-level IR.  Changes nothing.  Counters: barriers.
 */
#include "passes/passes.h"

enum { MAX_AGENTS = 64 };

typedef struct Use {
	Op *alloc;        /* the barrier array */
	int agent;        /* 0: outside tasks; i: the i-th task */
	Op *op;
	bool wait;        /* else an arrive */
	bool remote;      /* an arrive with `cta:` */
	int64_t count;
	bool tx;          /* a CLC request completing bytes on it */
	bool by_replica;  /* the element depends on the task's replica */
	int bytes;        /* 1: a tma_load counts its bytes on it; 2: an
			     expect_bytes expects some (no arrival) */
} Use;

typedef struct Cb {
	PassCtx *pc;
	Func *f;
	Vec(Use) uses;
	Op *task[MAX_AGENTS];
	int ntasks;
	int64_t ncl;      /* programs per cluster */
} Cb;

static Op *
alloc_of(Func *f, Value bar)
{
	Op *d = ir_val(f, bar)->def;

	if (d && d->kind == OP_MBAR_AT)
		d = ir_val(f, d->opnds[0])->def;
	return d && d->kind == OP_MBAR_ALLOC ? d : NULL;
}

/* Whether v may differ between the programs of a cluster: it depends on
 * cluster_rank or program_id (deep expressions are taken to). */
static bool
varies(Func *f, Value v, int depth)
{
	Op *d = ir_val(f, v)->def;
	uint32_t i;

	if (!d)
		return false;
	if (d->kind == OP_CLUSTER_RANK || d->kind == OP_PROGRAM_ID || depth > 16)
		return true;
	for (i = 0; i < d->nopnds; i++)
		if (varies(f, d->opnds[i], depth + 1))
			return true;
	return false;
}

/* Whether v depends on the task's replica index (deep expressions are
 * taken not to). */
static bool
on_replica(Func *f, Value v, int depth)
{
	Op *d = ir_val(f, v)->def;
	uint32_t i;

	if (!d || depth > 16)
		return false;
	if (d->kind == OP_TASK_REPLICA)
		return true;
	for (i = 0; i < d->nopnds; i++)
		if (on_replica(f, d->opnds[i], depth + 1))
			return true;
	return false;
}

static void
collect(Cb *c, Block *b, int agent)
{
	Op *op, *a;
	uint32_t i;

	for (op = b->first; op; op = op->next) {
		if ((op->kind == OP_MBAR_WAIT || op->kind == OP_MBAR_ARRIVE) &&
		    (a = alloc_of(c->f, op->opnds[0]))) {
			Use u = { a, agent, op, op->kind == OP_MBAR_WAIT, false,
				  attr_int(&op->attrs, "count", 1), false, false, 0 };
			Op *at = ir_val(c->f, op->opnds[0])->def;

			u.by_replica = at && at->kind == OP_MBAR_AT && at->nopnds > 1 &&
				       on_replica(c->f, at->opnds[1], 0);

			if (op->kind == OP_MBAR_ARRIVE && op->nopnds > 1) {
				u.remote = true;
				if (!varies(c->f, op->opnds[1], 0))
					u.count *= c->ncl;
			}
			vec_push(c->pc->scratch, &c->uses, u);
		}
		if (op->kind == OP_CLC_TRY_CANCEL && op->nopnds == 2 &&
		    (a = alloc_of(c->f, op->opnds[1]))) {
			Use u = { a, agent, op, false, false, 0, true, false, 0 };

			vec_push(c->pc->scratch, &c->uses, u);
		}
		if (op->kind == OP_MBAR_EXPECT && op->nopnds &&
		    (a = alloc_of(c->f, op->opnds[0]))) {
			Use u = { a, agent, op, false, false, 0, false, false, 2 };

			vec_push(c->pc->scratch, &c->uses, u);
		}
		if (op->kind == OP_TMA_LOAD && op->nopnds > 0 &&
		    ir_type(c->f, op->opnds[0])->kind == TY_TMA) {
			uint32_t bi = 2 + (uint32_t)ir_type(c->f, op->opnds[0])->rank;
			Use u = { NULL, agent, op, false, false, 0, false, false,
				  attr_int(&op->attrs, "expect", 0) ? 2 : 1 };

			if (bi < op->nopnds && (u.alloc = alloc_of(c->f, op->opnds[bi])))
				vec_push(c->pc->scratch, &c->uses, u);
		}
		if (op->kind == OP_TASK) {
			if (c->ntasks + 1 >= MAX_AGENTS)
				continue;
			c->task[++c->ntasks] = op;
			collect(c, op->regions[0], c->ntasks);
			continue;
		}
		for (i = 0; i < op->nregions; i++)
			collect(c, op->regions[i], agent);
	}
}

static const char *
bar_name(Cb *c, Op *alloc)
{
	const char *n = ir_val(c->f, alloc->res[0])->name;

	return n ? n : "barrier";
}

static const char *
agent_name(Cb *c, int agent)
{
	const char *n;

	if (!agent)
		return "the code outside tasks";
	n = attr_str(&c->task[agent]->attrs, "name");
	return arena_printf(c->pc->scratch, "task '%s'%s", n ? n : "?",
			    attr_int(&c->task[agent]->attrs, "replica", 0) ||
			    (c->task[agent]->next &&
			     c->task[agent]->next->kind == OP_TASK &&
			     attr_int(&c->task[agent]->next->attrs, "replica", 0))
			    ? arena_printf(c->pc->scratch, " (replica %lld)",
					   (long long)attr_int(&c->task[agent]->attrs,
							       "replica", 0))
			    : "");
}

static void
check(Cb *c, Op *alloc)
{
	int64_t want = attr_int(&alloc->attrs, "arrive", 1), per[MAX_AGENTS][2] = { { 0 } };
	bool waits[MAX_AGENTS] = { false };
	int64_t total = 0;
	int arrivers = 0, waiters = 0, only = -1, a;
	Op *first_wait = NULL, *first_arrive = NULL, *first_load = NULL;
	bool tx = false, expected = false;
	uint32_t i;

	for (i = 0; i < c->uses.n; i++) {
		Use *u = &c->uses.v[i];

		if (u->alloc != alloc)
			continue;
		if (u->bytes) {
			if (u->bytes == 1 && !first_load)
				first_load = u->op;
			expected |= u->bytes == 2;
			continue;
		}
		if (u->tx) {
			tx = true;
			continue;
		}
		if (u->wait) {
			waiters += !waits[u->agent];
			waits[u->agent] = true;
			if (!first_wait)
				first_wait = u->op;
		} else if (!per[u->agent][u->remote]) {
			/* once per phase, by every instance of a merged task */
			per[u->agent][u->remote] = u->count * (u->agent &&
				!u->by_replica ? attr_int(&c->task[u->agent]->attrs,
							  "replicas", 1) : 1);
			if (!first_arrive)
				first_arrive = u->op;
		}
	}
	for (a = 0; a <= c->ntasks; a++)
		if (per[a][0] || per[a][1]) {
			total += per[a][0] + per[a][1];
			arrivers++;
			only = a;
		}
	if (first_load && !expected) {
		ir_error(c->pc->diag, c->f, first_load, "this tma_load counts "
			 "its bytes on barrier '%s', but nothing expects bytes "
			 "on it: its phase can complete before the bytes land; "
			 "expect them first (expect_bytes(%s[i], BYTES), or "
			 "arrive(%s[i], bytes: BYTES))", bar_name(c, alloc),
			 bar_name(c, alloc), bar_name(c, alloc));
		c->pc->failed = true;
		return;
	}
	if (!first_wait)
		return;
	if (!arrivers) {
		ir_error(c->pc->diag, c->f, first_wait, "nothing arrives on "
			 "barrier '%s': this wait never returns; arrive on it "
			 "(arrive(%s[i])) where its phase is done",
			 bar_name(c, alloc), bar_name(c, alloc));
		c->pc->failed = true;
		return;
	}
	if (total != want) {
		ir_warning(c->pc->diag, c->f, first_arrive,
			     "barrier '%s' completes a phase at %lld arrivals, but "
			     "%d agent%s arrive%s on it, %lld in all (each once "
			     "per phase): %s", bar_name(c, alloc), (long long)want,
			     arrivers, arrivers == 1 ? "" : "s",
			     arrivers == 1 ? "s" : "", (long long)total,
			     total < want ? "its phases never complete"
					  : "a phase completes before every agent "
					    "has arrived");
		ir_note(c->pc->diag, c->f, alloc, "'%s' is declared "
			  "here with arrive: %lld", bar_name(c, alloc),
			  (long long)want);
	}
	if (arrivers == 1 && only > 0 && waits[only] && waiters > 1 && !tx) {
		for (i = 0; i < c->uses.n; i++)
			if (c->uses.v[i].alloc == alloc && c->uses.v[i].wait &&
			    c->uses.v[i].agent == only)
				break;
		ir_warning(c->pc->diag, c->f, c->uses.v[i].op,
			     "%s waits on barrier '%s', on which only it "
			     "arrives, as other tasks do: a producer waits on "
			     "the barrier it fills (the one its consumers "
			     "release?)", agent_name(c, only), bar_name(c, alloc));
	}
}

static void
each_alloc(Op *op, void *ud)
{
	Cb *c = ud;

	if (op->kind == OP_MBAR_ALLOC) {
		check(c, op);
		pass_stat(c->pc, "barriers", 1);
	}
}

bool
pass_check_barriers(PassCtx *pc, Func *f)
{
	Cb c = { .pc = pc, .f = f, .ncl = 1 };
	const Attr *cl = attr_find(&f->attrs, "cluster");
	uint32_t i;

	if (f->kind != FN_KERNEL || ir_func_laid_out(f))
		return false;
	for (i = 0; cl && cl->kind == ATTR_INTS && i < cl->ints.n; i++)
		c.ncl *= cl->ints.v[i];
	collect(&c, f->body, 0);
	if (c.uses.n)
		ir_walk(f, each_alloc, &c);
	return false;
}
