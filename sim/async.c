/*
 * async.c: the asynchronous machinery (docs/il.md "Barriers", "TMA and
 * cp.async", "Asynchronous MMA", "Warp specialization", "Pipes", "Tile
 * schedules").
 *
 * mbarriers count arrivals and transaction bytes per phase; a phase
 * completes when both reach zero, and mbar_wait(parity) passes once the
 * phase of that parity has completed (the hardware's try_wait.parity).
 * Arriving more often than a phase expects is reported.
 *
 * Copies are asynchronous for real: a TMA load reads global memory when it
 * is issued but lands in shared memory (and completes its bytes on the
 * barrier) only some scheduler steps later; cp.async lands at the
 * cp_async_wait that covers its group; a TMA store reads shared memory at
 * issue and writes global memory at tma_store_wait; dot_async computes at
 * issue, but its result may not be used (and its shared operands not be
 * overwritten) until a dot_wait covers it.  So a missing wait reads
 * unwritten or stale data, and the checks in memops.c report it.
 */
#include <stdlib.h>
#include <string.h>

#include "sim.h"

void
sim_bar_desc(SimBar *b, Buf *out)
{
	if (b->role)
		buf_printf(out, "the %s barrier of pipe '%s' slot %u", b->role,
			   b->name, b->index);
	else if (b->count)
		buf_printf(out, "barrier '%s'[%u]", b->name, b->index);
	else
		buf_printf(out, "barrier '%s'", b->name);
}

static void
bar_state(SimBar *b, Buf *out)
{
	buf_printf(out, "it is in phase %u with %d of %d arrivals missing and "
		   "%lld transaction bytes outstanding", b->phase, b->pending,
		   b->expected, (long long)b->tx);
}

void
sim_describe_wait(SimCo *co, Buf *b)
{
	const char *w = co->wait_what ? co->wait_what : "?";

	if (co->wait_bar) {
		SimBar *bar = co->wait_bar;

		if (bar->role)
			buf_printf(b, "%s waits for slot %u of pipe '%s' to be "
				   "%s (phase parity %u of its %s barrier; ",
				   w, bar->index, bar->name,
				   strcmp(bar->role, "full") == 0 ? "committed"
								  : "released",
				   co->wait_parity, bar->role);
		else {
			buf_printf(b, "%s on ", w);
			sim_bar_desc(bar, b);
			buf_printf(b, " for the phase of parity %u (",
				   co->wait_parity);
		}
		bar_state(bar, b);
		buf_putc(b, ')');
		return;
	}
	if (strcmp(w, "tasks") == 0)
		buf_puts(b, "waits for its tasks to finish");
	else if (strcmp(w, "cluster_sync") == 0)
		buf_puts(b, "cluster_sync waits for the other CTAs of the "
			 "cluster");
	else
		buf_printf(b, "%s waits for the other tasks of the program", w);
}

static void
maybe_complete(SimBar *b)
{
	if (b->pending == 0 && b->tx == 0) {
		b->phase++;
		b->pending = b->expected;
		if (b->cta->shadow)
			sim_race_phase_done(b);
	}
}

static void
arrive(SimLaunch *L, SimBar *b, int64_t count, Op *op)
{
	if (count < 1 || count > b->pending) {
		Buf d = { 0 };
		char desc[200];

		sim_bar_desc(b, &d);
		snprintf(desc, sizeof desc, "%s", d.s ? d.s : "");
		buf_free(&d);
		sim_fault(L, op, "%s: %lld arrival%s on %s in phase %u, which "
			  "expects %d per phase and is missing only %d: more "
			  "arrivals than the barrier expects",
			  op_name(op->kind), (long long)count,
			  count == 1 ? "" : "s", desc, b->phase, b->expected,
			  b->pending);
	}
	if (L->race)
		sim_race_release(L, b);
	b->pending -= (int32_t)count;
	maybe_complete(b);
}

void
sim_bar_complete_tx(SimLaunch *L, SimBar *b, int64_t bytes, Op *op)
{
	(void)L;
	(void)op;
	b->tx -= bytes;
	maybe_complete(b);
}

SimBar *
sim_bar_in(SimLaunch *L, SimCta *cta, Op *alloc, uint32_t index, Op *op)
{
	uint32_t i;

	for (i = cta->bars.n; i-- > 0;)
		if (cta->bars.v[i].op == alloc) {
			if (index >= cta->bars.v[i].n)
				break;
			return &cta->bars.v[i].bar[index];
		}
	sim_fault(L, op, "the barrier in CTA %u of the cluster is not "
		  "initialized yet (that CTA has not run its %s): a "
		  "cluster_sync between the barriers' initialization and "
		  "their first use by another program is missing", cta->rank,
		  alloc ? op_name(alloc->kind) : "mbar_alloc");
}

static SimBar *
new_bars(SimLaunch *L, SimCta *cta, Op *op, uint32_t n, int32_t expected,
	 const char *name, const char *role)
{
	SimBar *b;
	uint32_t i;

	(void)L;
	b = arena_alloc(&cta->arena, n * sizeof *b);
	for (i = 0; i < n; i++) {
		b[i].expected = b[i].pending = expected;
		b[i].index = i;
		b[i].name = name;
		b[i].role = role;
		b[i].alloc = op;
		b[i].cta = cta;
	}
	return b;
}

static const char *
name_of(SimAct *act, Value v, const char *dflt)
{
	const char *n = act->fn->vals.v[v].name;

	return n ? n : dflt;
}

static SimBar *
bar_operand(SimLaunch *L, SimAct *act, Op *op, uint32_t i)
{
	Type *t;

	if (i >= op->nopnds || (t = sim_ty(act, op->opnds[i]))->kind != TY_MBAR ||
	    t->rank != 0)
		sim_fault(L, op, "malformed IR: %s needs an mbar as operand %u",
			  op_name(op->kind), i + 1);
	return act->vals[op->opnds[i]].u.mb.bar;
}

static void
mbar_alloc(SimLaunch *L, SimCta *cta, SimAct *act, Op *op)
{
	Type *t = sim_ty(act, op->res[0]);
	int64_t arrive_n = attr_int(&op->attrs, "arrive", 1);
	uint32_t n = t->rank ? (uint32_t)t->shape[0] : 1;
	SimVal *v;
	SimBar *b;

	if (t->kind != TY_MBAR || n < 1 || n > 4096 || arrive_n < 1 ||
	    arrive_n > (1 << 20))
		sim_fault(L, op, "malformed IR: mbar_alloc needs 1..4096 "
			  "barriers expecting 1..2^20 arrivals");
	b = new_bars(L, cta, op, n, (int32_t)arrive_n,
		     name_of(act, op->res[0], "mbar"), NULL);
	if (t->rank)
		for (uint32_t i = 0; i < n; i++)
			b[i].count = n;
	vec_push(&cta->arena, &cta->bars, ((SimBarSet){ op, b, n }));
	v = sim_def(L, act, op->res[0]);
	v->u.mb.bar = b;
	v->u.mb.n = n;
}

/* A task that reaches a CTA barrier after a sibling finished, or that
 * finishes while a sibling waits at one: on the GPU the barrier counts
 * every warp of the program, and the finished task's never come. */
static SimCo *
finished_sibling(SimCo *co)
{
	SimCta *cta = co->cta;
	uint32_t i;

	for (i = 0; i < cta->ncos; i++) {
		SimCo *x = cta->cos[i];

		if (x != co && x->parent == co->parent && x->fork == co->fork &&
		    x->state == CO_DONE)
			return x;
	}
	return NULL;
}

static void
not_every_task(SimLaunch *L, Op *op, const char *waiter, Op *at,
	       const char *done)
{
	char where[200];

	sim_fault(L, op, "task '%s' waits at %s, which task '%s' never "
		  "reaches: a CTA barrier inside tasks must be reached by every "
		  "task (on the GPU it waits forever)", waiter,
		  sim_op_where(L, at, where, sizeof where), done);
}

void
sim_task_end(SimLaunch *L, SimCo *co, Op *op)
{
	SimCta *cta = co->cta;
	uint32_t i;

	if (!cta->sync_arrived)
		return;
	for (i = 0; i < cta->ncos; i++) {
		SimCo *x = cta->cos[i];

		if (x != co && x->sync_waiting && x->state != CO_DONE && x->task)
			not_every_task(L, op, x->task, x->wait_op, co->task);
	}
}

/* A sync of all live coroutines of one CTA (cl NULL) or one cluster. */
static bool
sync_all(SimLaunch *L, SimCo *co, SimCluster *cl, Op *op)
{
	uint32_t *arrived = cl ? &cl->sync_arrived : &co->cta->sync_arrived;
	uint64_t *gen = cl ? &cl->sync_gen : &co->cta->sync_gen;
	uint32_t live = 0, c, i, nc = cl ? cl->n : 1;
	SimCo *gone;

	if (!co->sync_waiting) {
		if (!cl && co->task && (gone = finished_sibling(co)))
			not_every_task(L, op, co->task, op, gone->task);
		co->sync_waiting = true;
		co->sync_gen = *gen;
		(*arrived)++;
	}
	if (*gen != co->sync_gen) {
		co->sync_waiting = false;
		return true;
	}
	for (c = 0; c < nc; c++) {
		SimCta *cta = cl ? &cl->ctas[c] : co->cta;

		for (i = 0; i < cta->ncos; i++) {
			SimCo *x = cta->cos[i];

			if (x->state != CO_DONE &&
			    !(x->joining && x->live_children))
				live++;
		}
	}
	if (*arrived >= live) {
		(*gen)++;
		*arrived = 0;
		co->sync_waiting = false;
		if (L->race)
			sim_race_sync(L, cl ? cl->ctas : co->cta, nc);
		return true;
	}
	co->wait_op = op;
	co->wait_bar = NULL;
	co->wait_what = op_name(op->kind);
	return false;
}

static bool
wait_bar(SimCo *co, Op *op, SimBar *b, uint32_t parity, const char *what)
{
	if ((b->phase & 1) != (parity & 1)) {
		if (co->cta->L->race)
			sim_race_acquire(co->cta->L, co, b);
		return true;
	}
	co->wait_op = op;
	co->wait_bar = b;
	co->wait_parity = parity & 1;
	co->wait_what = what;
	return false;
}

/* ---- TMA ------------------------------------------------------------- */

typedef struct Box {
	SimTensor *t;
	int rank;
	int64_t c[5];
	SimView view;  /* the shared side */
	int es;
	int64_t n;     /* elements */
} Box;

/* The alignment of a view's start in shared memory (whose start is
 * aligned to the largest swizzle atom, 1024 bytes). */
static int64_t
view_align(const SimView *v)
{
	return v->off ? v->off & -v->off : 1024;
}

/* The hardware's side of a TMA copy of a laid-out kernel: the copies
 * codegen issues for the view (sv_tma_strips), each writing or reading
 * a box of the descriptor (sv_tma_box) densely from its shared address
 * with every byte address then swizzled by the descriptor's span
 * (tensor-core-layouts.md 4.3: chunk bits 4.. ^= address bits 7..).
 * Each element must be where the view algebra puts it, and the boxes
 * must cover the view and nothing else. */
static void
tma_hw_check(SimLaunch *L, Op *op, Type *dt, const SimView *v)
{
	int64_t box[5], bn = 1, step, cstep, e, rem, k, vk, hw, *offs;
	int r = v->g.rank, swz = sv_tma_box(dt, box), n, i, d, eb = v->g.ebytes;
	int64_t idx[5];
	const char *why = sv_tma_strips(&v->g, view_align(v), swz, &n, &step,
					&cstep);
	uint8_t *seen;
	size_t nv;

	if (why)
		sim_fault(L, op, "%s: %s (not supported for the GPU)",
			  op_name(op->kind), why);
	if (!box[0])
		for (d = 0; d < r; d++)
			box[d] = v->g.shape[d];
	for (d = 0; d < r; d++)
		bn *= box[d];
	offs = sim_view_offsets(L, v, &nv);
	seen = memset(sim_scratch(L, 3, nv + 1), 0, nv + 1);
	for (i = 0; i < n; i++)
		for (e = 0; e < bn; e++) {
			for (d = r - 1, rem = e; d >= 0; d--) {
				idx[d] = rem % box[d];
				rem /= box[d];
			}
			idx[r - 1] += i * cstep;
			for (d = 0, vk = 0; d < r; d++) {
				if (idx[d] >= v->g.shape[d])
					sim_fault(L, op, "compiler bug: %s's box %d "
						  "is larger than its view (dim %d)",
						  op_name(op->kind), i, d);
				vk = vk * v->g.shape[d] + idx[d];
			}
			hw = v->off + i * step + e * eb;
			if (swz)
				hw ^= ((hw >> 7) & (swz / 16 - 1)) << 4;
			if (hw != offs[vk]) {
				char at[128];
				int len = 0;

				for (d = 0; d < r; d++)
					len += snprintf(at + len, sizeof at - (size_t)len,
							"%s%lld", d ? ", " : "",
							(long long)idx[d]);
				sim_fault(L, op, "compiler bug: %s's box %d puts "
					  "element (%s) of the view at shared byte "
					  "%lld, the view algebra at %lld",
					  op_name(op->kind), i, at,
					  (long long)hw, (long long)offs[vk]);
			}
			if (seen[vk]++)
				sim_fault(L, op, "compiler bug: %s's box %d "
					  "copies an element an earlier box did",
					  op_name(op->kind), i);
		}
	for (k = 0; k < (int64_t)nv; k++)
		if (!seen[k])
			sim_fault(L, op, "compiler bug: %s's %d boxes leave "
				  "element %lld of its view out",
				  op_name(op->kind), n, (long long)k);
}

static Box
box_of(SimLaunch *L, SimAct *act, Op *op, uint32_t extra)
{
	Box b = { 0 };
	Type *dt;
	int d;

	if (op->nopnds < 2 || (dt = sim_ty(act, op->opnds[0]))->kind != TY_TMA)
		sim_fault(L, op, "malformed IR: %s needs a tensor descriptor",
			  op_name(op->kind));
	b.rank = dt->rank;
	b.t = act->vals[op->opnds[0]].u.tensor;
	if (op->nopnds < 1u + (uint32_t)b.rank + 1 + extra ||
	    op->nopnds > 1u + (uint32_t)b.rank + 2 + extra ||
	    sim_ty(act, op->opnds[1 + b.rank])->kind != TY_SMEM)
		sim_fault(L, op, "malformed IR: %s needs %d coordinates and a "
			  "shared-memory view", op_name(op->kind), b.rank);
	if (!b.t || b.t->rank != b.rank || b.t->elem != dt->elem->kind)
		sim_fault(L, op, "the tensor descriptor does not match the "
			  "kernel's tma type");
	for (d = 0; d < b.rank; d++)
		b.c[d] = sim_scalar_i(act, op->opnds[1 + d]);
	b.view = sim_view_of(act, op->opnds[1 + b.rank]);
	b.es = sim_kind_bytes(b.t->elem);
	if (b.view.g.rank != b.rank || b.view.g.ebytes != b.es)
		sim_fault(L, op, "%s: the shared buffer (rank %d) does not "
			  "match the box of the rank-%d tensor",
			  op_name(op->kind), b.view.g.rank, b.rank);
	for (d = 0; d < b.rank; d++)
		if (dt->shape[0] && dt->shape[d] != b.view.g.shape[d])
			sim_fault(L, op, "%s: the shared buffer's dimension "
				  "%d is %lld, the descriptor's box says %lld",
				  op_name(op->kind), d,
				  (long long)b.view.g.shape[d],
				  (long long)dt->shape[d]);
	b.n = 1;
	for (d = 0; d < b.rank; d++)
		b.n *= b.view.g.shape[d];
	if (L->laid_out)
		tma_hw_check(L, op, dt, &b.view);
	return b;
}

/* Copies the box between the tensor and `data` (dense, row-major), one
 * row of the innermost dimension at a time: elements outside the tensor
 * are zero on loads and skipped on stores. */
static void
box_copy(SimLaunch *L, Box *b, Op *op, uint8_t *data, bool store)
{
	int r = b->rank, d;
	int64_t inner = b->view.g.shape[r - 1], row, nrows = b->n / inner;
	int64_t lo = MAX(0, -b->c[r - 1]);
	int64_t hi = MIN(inner, b->t->shape[r - 1] - b->c[r - 1]);
	const char *what = store ? "tma_store" : "tma_load";

	for (row = 0; row < nrows; row++) {
		uint8_t *row_data = data + row * inner * b->es;
		int64_t rem = row, g;
		uint64_t addr = b->t->base;
		bool in = lo < hi;

		for (d = r - 2; d >= 0; d--) {
			g = b->c[d] + rem % b->view.g.shape[d];
			rem /= b->view.g.shape[d];
			if (g < 0 || g >= b->t->shape[d])
				in = false;
			addr += (uint64_t)(g * b->t->stride[d] * b->es);
		}
		if (!in)
			continue;
		if (b->t->stride[r - 1] == 1) {
			uint8_t *p;

			addr += (uint64_t)((b->c[r - 1] + lo) * b->es);
			p = sim_grange(L, op, addr, (uint64_t)((hi - lo) * b->es),
				       (uint64_t)b->es, store, what, NULL, 0);
			if (store)
				memcpy(p, row_data + lo * b->es,
				       (size_t)((hi - lo) * b->es));
			else
				memcpy(row_data + lo * b->es, p,
				       (size_t)((hi - lo) * b->es));
			continue;
		}
		for (g = lo; g < hi; g++) {
			uint64_t a = addr + (uint64_t)((b->c[r - 1] + g) *
						       b->t->stride[r - 1] * b->es);
			uint8_t *p = sim_gptr(L, op, a, (uint64_t)b->es, store,
					      what, NULL, 0);

			if (store)
				memcpy(p, row_data + g * b->es, (size_t)b->es);
			else
				memcpy(row_data + g * b->es, p, (size_t)b->es);
		}
	}
}

static uint64_t
delay(SimLaunch *L)
{
	uint64_t d = L->o.async_delay ? L->o.async_delay : 1;

	if (L->o.seed >= 0)
		d = 1 + sim_rand(L) % (2 * d);
	return d;
}

static SimAsync *
async_new(SimLaunch *L, SimCo *co, Op *op, int kind, size_t bytes)
{
	SimAsync *a = sim_xalloc(L, sizeof *a);

	a->kind = kind;
	a->op = op;
	a->co = co;
	a->cta = co->cta;
	a->mask = 1u << co->cta->rank;
	sim_async_push(L, a);  /* owned by the launch from here on */
	a->data = sim_xalloc(L, bytes);
	return a;
}

static void
tma_load(SimLaunch *L, SimCo *co, SimAct *act, Op *op)
{
	Box b = box_of(L, act, op, 1);
	SimBar *bar = bar_operand(L, act, op, 2 + (uint32_t)b.rank);
	uint32_t mask = 1u << co->cta->rank, r;
	int64_t bytes = b.n * b.es;
	SimAsync *a;

	if (op->nopnds == 4u + (uint32_t)b.rank)
		mask = (uint32_t)sim_scalar_i(act, op->opnds[3 + b.rank]);
	if (!mask || (co->cta->cl->n < 32 && mask >> co->cta->cl->n))
		sim_fault(L, op, "tma_load: multicast mask 0x%x names CTAs "
			  "outside the cluster of %u", mask, co->cta->cl->n);
	if (attr_int(&op->attrs, "expect", 0)) {
		bar->tx += bytes;
		maybe_complete(bar);
	}
	a = async_new(L, co, op, AS_TMA_LOAD, (size_t)bytes);
	a->due = L->steps + delay(L);
	a->mask = mask;
	a->view = b.view;
	a->bar_op = bar->alloc;
	a->bar_index = bar->index;
	a->bar = mask == (1u << co->cta->rank) ? bar : NULL;
	box_copy(L, &b, op, a->data, false);
	if (L->race)
		sim_race_async(L, co, act, a, bar);
	for (r = 0; r < co->cta->cl->n; r++)
		if (mask & (1u << r)) {
			sim_smem_check_async_write(L, &co->cta->cl->ctas[r], op,
						   &b.view, "tma_load");
			sim_smem_mark(L, co->cta->cl->ctas[r].sh_pw, &b.view, 1);
		}
}

static void
tma_store(SimLaunch *L, SimCo *co, SimAct *act, Op *op)
{
	Box b = box_of(L, act, op, 0);
	SimAsync *a;

	if (op->nopnds != 2u + (uint32_t)b.rank)
		sim_fault(L, op, "malformed IR: tma_store takes a descriptor, "
			  "coordinates and a view");
	a = async_new(L, co, op, AS_TMA_STORE, (size_t)(b.n * b.es));
	a->view = b.view;
	if (L->race)
		sim_race_async(L, co, act, a, NULL);
	sim_smem_read(L, co->cta, op, &b.view, a->data, true, "tma_store");
	a->group = ++co->st_issued;
	a->tensor = *b.t;
	memcpy(a->coord, b.c, sizeof b.c);
	sim_smem_mark(L, co->cta->sh_pr, &b.view, 1);
}

static void
land_tma_store(SimLaunch *L, SimAsync *a)
{
	Box b = { .t = &a->tensor, .rank = a->tensor.rank, .view = a->view,
		  .es = a->view.g.ebytes, .n = 1 };
	int d;

	memcpy(b.c, a->coord, sizeof b.c);
	for (d = 0; d < b.rank; d++)
		b.n *= b.view.g.shape[d];
	sim_smem_mark(L, a->cta->sh_pr, &a->view, -1);
	box_copy(L, &b, a->op, a->data, true);
}

static void
land_tma_load(SimLaunch *L, SimAsync *a)
{
	SimCluster *cl = a->cta->cl;
	int64_t bytes = 1;
	uint32_t r;
	int d;

	for (d = 0; d < a->view.g.rank; d++)
		bytes *= a->view.g.shape[d];
	bytes *= a->view.g.ebytes;
	for (r = 0; r < cl->n; r++) {
		SimCta *cta = &cl->ctas[r];
		SimBar *bar;

		if (!(a->mask & (1u << r)))
			continue;
		sim_smem_mark(L, cta->sh_pw, &a->view, -1);
		sim_smem_write(L, cta, a->op, &a->view, a->data, false,
			       "tma_load");
		if (cta->shadow && !a->mpeer[r])
			sim_race_landed(cta, &a->view);
		bar = a->bar ? a->bar
			     : sim_bar_in(L, cta, a->bar_op, a->bar_index,
					  a->op);
		sim_bar_complete_tx(L, bar, bytes, a->op);
	}
}

/* ---- cp.async -------------------------------------------------------- */

static void
cp_async(SimLaunch *L, SimCo *co, SimAct *act, Op *op)
{
	Type *vt, *pt, *mt = NULL;
	SimView v;
	uint64_t *p;
	uint8_t *m = NULL;
	SimAsync *a;
	int64_t i, n;
	int es;

	if (op->nopnds < 2 || op->nopnds > 3 ||
	    (vt = sim_ty(act, op->opnds[0]))->kind != TY_SMEM)
		sim_fault(L, op, "malformed IR: cp_async takes dst, src, mask");
	pt = sim_ty(act, op->opnds[1]);
	n = ty_numel(vt);
	if (ty_elem(pt)->kind != TY_PTR || ty_numel(pt) != n ||
	    ty_elem(pt)->elem != vt->elem)
		sim_fault(L, op, "malformed IR: cp_async's pointers do not "
			  "match its destination");
	if (op->nopnds == 3) {
		mt = sim_ty(act, op->opnds[2]);
		if (ty_elem(mt)->kind != TY_I1 || ty_numel(mt) != n)
			sim_fault(L, op, "malformed IR: cp_async's mask");
		m = sim_data(&act->vals[op->opnds[2]], mt);
	}
	v = sim_view_of(act, op->opnds[0]);
	es = v.g.ebytes;
	p = (uint64_t *)(void *)sim_data(&act->vals[op->opnds[1]], pt);
	a = async_new(L, co, op, AS_CP_ASYNC, (size_t)(n * es));
	a->view = v;
	if (L->race)
		sim_race_async(L, co, act, a, NULL);
	for (i = 0; i < n; i++)
		if (!m || (m[i] & 1))
			memcpy(a->data + i * es,
			       sim_gptr(L, op, p[i], (uint64_t)es, false,
					"cp_async", pt, i),
			       (size_t)es);
	sim_smem_check_async_write(L, co->cta, op, &v, "cp_async");
	a->group = co->cp_committed + 1;
	co->cp_open++;
	sim_smem_mark(L, co->cta->sh_pw, &v, 1);
}

/* ---- async MMA ---------------------------------------------------------- */

static uint8_t *
mma_operand(SimLaunch *L, SimCo *co, SimAct *act, Op *op, uint32_t i,
	    int slot, SimView *view, Type **t)
{
	*t = sim_ty(act, op->opnds[i]);
	if ((*t)->kind == TY_TILE)
		return act->vals[op->opnds[i]].data;
	if ((*t)->kind != TY_SMEM)
		sim_fault(L, op, "malformed IR: dot_async operand %u", i + 1);
	*view = sim_view_of(act, op->opnds[i]);
	{
		uint8_t *buf = sim_scratch(L, slot, (size_t)ty_numel(*t) *
							(size_t)view->g.ebytes);

		sim_smem_read(L, co->cta, op, view, buf, true, "dot_async");
		return buf;
	}
}

/* Where the hardware reads element (i, k) of a wgmma operand, i along
 * M or N and k along K, through descriptor d from address start: the
 * canonical layouts of tensor-core-layouts.md 3.5, then the swizzle on
 * absolute address bits (3.6, base_offset 0). */
static int64_t
wg_addr(const WgDesc *d, int64_t start, int64_t i, int64_t k, int eb)
{
	int64_t a, ib = i * eb, kb = k * eb;

	if (d->swz && !d->mn)
		a = start + i / 8 * d->sbo + i % 8 * d->swz + kb;
	else if (d->swz)
		a = start + ib / d->swz * d->lbo + ib % d->swz +
		    k % 8 * d->swz + k / 8 * d->sbo;
	else if (!d->mn)
		a = start + i / 8 * d->sbo + i % 8 * 16 + kb / 16 * d->lbo +
		    kb % 16;
	else
		a = start + ib / 16 * d->sbo + ib % 16 + k % 8 * 16 +
		    k / 8 * d->lbo;
	if (d->swz)
		a ^= ((a >> 7) & (d->swz / 16 - 1)) << 4;
	return a;
}

/* The hardware's side of a dot_async of a laid-out kernel for sm_90a:
 * the wgmma instructions codegen issues (per warpgroup, 64-row tile of
 * A or chunk of at most 256 columns of B, and K step of 32 bytes) read
 * shared operand opnd (0: A, 1: B) through its descriptor
 * (sv_wgmma_desc) from a start address that is the view's plus the view
 * algebra's bytes of the instruction's first element, added to the
 * descriptor in 16-byte units.  Each element an instruction reads must
 * be the one the view algebra puts there. */
static void
wgmma_hw_check(SimLaunch *L, Op *op, const SimView *v, int opnd,
	       const Layout *acc)
{
	const SmemGeom *g = &v->g;
	const char *why = sv_wgmma_problem(g, view_align(v), opnd);
	/* the dims along M or N and along K; per instruction, the rows of
	 * M or N of a warpgroup, of one instruction, and how many */
	int dm = opnd == 0 ? 0 : 1, dk = 1 - dm, eb = g->ebytes;
	int64_t ks = eb == 1 ? 32 : 16, nw = (int64_t)acc->nreps * 8;
	int64_t span = opnd == 0 ? (int64_t)acc->mreps * 64 : nw;
	int64_t tile = opnd == 0 ? 64 : MIN(nw, 256);
	int64_t nwg = opnd == 0 ? acc->wm : acc->wn, ntile = span / tile;
	int64_t w, t, s, i, k, start, at[2], vk, hw, *offs;
	WgDesc d;
	size_t nv;

	if (why)
		sim_fault(L, op, "dot_async: %s (not supported for the GPU)", why);
	sv_wgmma_desc(g, opnd, &d);
	offs = sim_view_offsets(L, v, &nv);
	for (w = 0; w < nwg; w++)
		for (t = 0; t < ntile; t++)
			for (s = 0; s < g->shape[dk] / ks; s++) {
				start = ((v->off >> 4) +
					 (sv_dim_bytes(g, dm, w * span) >> 4) +
					 (sv_dim_bytes(g, dm, t * tile) >> 4) +
					 (sv_dim_bytes(g, dk, s * ks) >> 4)) << 4;
				for (i = 0; i < tile; i++)
					for (k = 0; k < ks; k++) {
						at[dm] = w * span + t * tile + i;
						at[dk] = s * ks + k;
						if (at[0] >= g->shape[0] ||
						    at[1] >= g->shape[1])
							sim_fault(L, op, "compiler bug: "
								  "dot_async's wgmma reads "
								  "%s beyond its view",
								  opnd ? "B" : "A");
						hw = wg_addr(&d, start, i, k, eb);
						vk = at[0] * g->shape[1] + at[1];
						if (hw != offs[vk])
							sim_fault(L, op, "compiler bug: "
								  "dot_async's wgmma reads "
								  "%s element (%lld, %lld) "
								  "at shared byte %lld, the "
								  "view algebra puts it at "
								  "%lld", opnd ? "B" : "A",
								  (long long)at[0],
								  (long long)at[1],
								  (long long)hw,
								  (long long)offs[vk]);
					}
			}
}

static void
dot_async(SimLaunch *L, SimCo *co, SimAct *act, Op *op)
{
	SimView va = { 0 }, vb = { 0 };
	Type *ta, *tb, *tc = sim_ty(act, op->opnds[2]);
	Type *tr = sim_ty(act, op->res[0]);
	bool sa = sim_ty(act, op->opnds[0])->kind == TY_SMEM;
	bool sb = sim_ty(act, op->opnds[1])->kind == TY_SMEM;
	uint8_t *a, *b, *r;
	SimVal *res;
	SimAsync *as = NULL;

	if (sa || sb) {  /* its reads, recorded before they are checked */
		as = async_new(L, co, op, AS_DOT, 1);
		as->view = sim_view_of(act, op->opnds[sa ? 0 : 1]);
		if (sa && sb)
			as->view2 = sim_view_of(act, op->opnds[1]);
		if (L->race)
			sim_race_async(L, co, act, as, NULL);
	}
	if (L->laid_out && target_has(target_get(L->o.sm), TF_WGMMA) &&
	    tr->layout && tr->layout->kind == LY_WGMMA) {
		if (sa)
			wgmma_hw_check(L, op, &as->view, 0, tr->layout);
		if (sb)
			wgmma_hw_check(L, op, sa ? &as->view2 : &as->view, 1,
				       tr->layout);
	}
	a = mma_operand(L, co, act, op, 0, 4, &va, &ta);
	b = mma_operand(L, co, act, op, 1, 5, &vb, &tb);
	if (tc != tr || tr->kind != TY_TILE || tr->rank != 2 ||
	    ta->rank != 2 || tb->rank != 2 || ta->elem != tb->elem ||
	    ta->shape[1] != tb->shape[0] || ta->shape[0] != tr->shape[0] ||
	    tb->shape[1] != tr->shape[1] ||
	    (tr->elem->kind != TY_F32 && tr->elem->kind != TY_I32) ||
	    (tr->elem->kind == TY_I32) != (ta->elem->kind == TY_I8))
		sim_fault(L, op, "malformed IR: dot_async needs a[MxK], "
			  "b[KxN] and acc[MxN] of matching types");
	res = sim_def(L, act, op->res[0]);
	r = res->data;
	memcpy(r, act->vals[op->opnds[2]].data, (size_t)ty_numel(tr) * 4);
	sim_matmul(L, ta->elem->kind, a, b, r, ta->shape[0], tb->shape[1],
		   ta->shape[1], true);
	res->group = ++co->dot_issued;
	if (!as)
		return;
	as->group = res->group;
	sim_smem_mark(L, co->cta->sh_pr, &as->view, 1);
	if (as->view2.g.ebytes)
		sim_smem_mark(L, co->cta->sh_pr, &as->view2, 1);
}

static void
dot_wait(SimLaunch *L, SimCo *co, SimAct *act, Op *op)
{
	int64_t pending = attr_int(&op->attrs, "pending", 0);
	uint32_t i, done;

	if (op->nres != op->nopnds || pending < 0)
		sim_fault(L, op, "malformed IR: dot_wait returns its operands");
	done = co->dot_issued > pending ? co->dot_issued - (uint32_t)pending
					: 0;
	if (done > co->dot_done)
		co->dot_done = done;
	sim_async_complete(L, co, AS_DOT, co->dot_done);
	for (i = 0; i < op->nopnds; i++) {
		Type *t = sim_ty(act, op->opnds[i]);
		SimVal *r;

		if (t != sim_ty(act, op->res[i]))
			sim_fault(L, op, "malformed IR: dot_wait result %u has "
				  "the wrong type", i);
		r = sim_def(L, act, op->res[i]);
		sim_copy_val(L, r, t, &act->vals[op->opnds[i]]);
		if (r->group <= co->dot_done)
			r->group = 0;
	}
}

void
sim_async_land(SimLaunch *L, SimAsync *a)
{
	if (a->peer)
		sim_race_async_done(L, a);
	switch (a->kind) {
	case AS_TMA_LOAD:
		land_tma_load(L, a);
		break;
	case AS_TMA_STORE:
		land_tma_store(L, a);
		break;
	case AS_CP_ASYNC:
		sim_smem_mark(L, a->cta->sh_pw, &a->view, -1);
		sim_smem_write(L, a->cta, a->op, &a->view, a->data, false,
			       "cp_async");
		if (a->cta->shadow && !a->peer)
			sim_race_landed(a->cta, &a->view);
		break;
	default:  /* AS_DOT */
		sim_smem_mark(L, a->cta->sh_pr, &a->view, -1);
		if (a->view2.g.ebytes)
			sim_smem_mark(L, a->cta->sh_pr, &a->view2, -1);
		break;
	}
}

/* ---- pipes ----------------------------------------------------------------- */

static void
pipe_create(SimLaunch *L, SimCta *cta, SimAct *act, Op *op)
{
	int64_t depth = attr_int(&op->attrs, "depth", 0);
	SimPipe *p;
	uint32_t i;

	if (depth < 1 || depth > 1024 ||
	    sim_ty(act, op->res[0])->kind != TY_PIPE)
		sim_fault(L, op, "malformed IR: pipe_create needs a depth");
	for (i = 0; i < op->nopnds; i++) {
		Type *t = sim_ty(act, op->opnds[i]);

		if (t->kind != TY_SMEM || t->shape[0] != depth)
			sim_fault(L, op, "pipe_create: buffer %u is not an "
				  "smem whose first dimension is the depth "
				  "%lld", i + 1, (long long)depth);
	}
	p = arena_alloc(&cta->arena, sizeof *p);
	p->op = op;
	p->depth = (uint32_t)depth;
	p->nbufs = op->nopnds;
	p->bufs = arena_alloc(&cta->arena, (op->nopnds + 1) * sizeof *p->bufs);
	for (i = 0; i < op->nopnds; i++)
		p->bufs[i] = sim_view_of(act, op->opnds[i]);
	p->name = name_of(act, op->res[0], "pipe");
	p->full = new_bars(L, cta, op, p->depth, 1, p->name, "full");
	p->empty = new_bars(L, cta, op, p->depth,
			    (int32_t)sim_info(L, op, 1), p->name, "empty");
	vec_push(&cta->arena, &cta->bars, ((SimBarSet){ op, p->full, p->depth }));
	sim_def(L, act, op->res[0])->u.pipe = p;
}

static SimPipePos *
pipe_pos(SimLaunch *L, SimCo *co, SimPipe *p)
{
	uint32_t i;

	for (i = 0; i < co->npipes; i++)
		if (co->pipes[i].pipe == p)
			return &co->pipes[i];
	if (co->npipes == co->cappipes) {
		co->cappipes = co->cappipes ? co->cappipes * 2 : 4;
		co->pipes = sim_xrealloc(L, co->pipes,
					 co->cappipes * sizeof *co->pipes);
	}
	memset(&co->pipes[co->npipes], 0, sizeof *co->pipes);
	co->pipes[co->npipes].pipe = p;
	return &co->pipes[co->npipes++];
}

static SimPipe *
pipe_operand(SimLaunch *L, SimAct *act, Op *op)
{
	if (!op->nopnds || sim_ty(act, op->opnds[0])->kind != TY_PIPE)
		sim_fault(L, op, "malformed IR: %s needs a pipe",
			  op_name(op->kind));
	return act->vals[op->opnds[0]].u.pipe;
}

static uint32_t
slot_operand(SimLaunch *L, SimAct *act, Op *op, SimPipe *p)
{
	int64_t s = sim_scalar_i(act, op->opnds[1]);

	if (s < 0 || s >= p->depth)
		sim_fault(L, op, "%s: slot %lld is outside pipe '%s' of depth "
			  "%u", op_name(op->kind), (long long)s, p->name,
			  p->depth);
	return (uint32_t)s;
}

static void
view_range(SimLaunch *L, const SimView *v, int64_t *lo, int64_t *hi)
{
	size_t n, i;
	int64_t *o = sim_view_offsets(L, v, &n);

	*lo = n ? o[0] : v->off;
	*hi = *lo;
	for (i = 0; i < n; i++) {
		*lo = MIN(*lo, o[i]);
		*hi = MAX(*hi, o[i] + v->g.ebytes);
	}
}

/* Releasing a slot whose buffers this task's dot_async still reads lets
 * the producer overwrite them: a missing dot_wait. */
static void
check_release(SimLaunch *L, SimCo *co, SimPipe *p, uint32_t s, Op *op)
{
	SimAsync *a;
	uint32_t i;

	for (i = 0; i < p->nbufs; i++) {
		SimView v = p->bufs[i];
		int64_t lo, hi, alo, ahi;

		v.off += (int64_t)s * sv_start_bytes(&v.g, 0);
		sv_index(&v.g);
		view_range(L, &v, &lo, &hi);
		for (a = L->inflight; a; a = a->next) {
			if (a->co != co || a->kind != AS_DOT)
				continue;
			view_range(L, &a->view, &alo, &ahi);
			if (!(alo < hi && lo < ahi) && a->view2.g.ebytes)
				view_range(L, &a->view2, &alo, &ahi);
			if (alo < hi && lo < ahi)
				sim_fault(L, op, "pipe_release of slot %u of pipe "
					  "'%s' while the dot_async at %s:%d:%d "
					  "still reads it: a missing dot_wait?",
					  s, p->name, L->mod->source,
					  a->op->loc.line, a->op->loc.col);
		}
	}
}

static bool
pipe_op(SimLaunch *L, SimCo *co, SimAct *act, Op *op)
{
	SimPipe *p = pipe_operand(L, act, op);
	SimPipePos *pos;
	uint32_t s;

	switch (op->kind) {
	case OP_PIPE_ACQUIRE:
		pos = pipe_pos(L, co, p);
		if (!wait_bar(co, op, &p->empty[pos->pslot], pos->pphase ^ 1,
			      "pipe_acquire"))
			return false;
		s = pos->pslot;
		if (++pos->pslot == p->depth) {
			pos->pslot = 0;
			pos->pphase ^= 1;
		}
		break;
	case OP_PIPE_CONSUME:
		pos = pipe_pos(L, co, p);
		if (!wait_bar(co, op, &p->full[pos->cslot], pos->cphase,
			      "pipe_consume"))
			return false;
		s = pos->cslot;
		if (++pos->cslot == p->depth) {
			pos->cslot = 0;
			pos->cphase ^= 1;
		}
		break;
	case OP_PIPE_COMMIT:
		arrive(L, &p->full[slot_operand(L, act, op, p)], 1, op);
		return true;
	case OP_PIPE_RELEASE:
		s = slot_operand(L, act, op, p);
		check_release(L, co, p, s, op);
		arrive(L, &p->empty[s], 1, op);
		return true;
	default: {  /* OP_PIPE_BAR */
		SimVal *v;

		s = slot_operand(L, act, op, p);
		v = sim_def(L, act, op->res[0]);
		v->u.mb.bar = &p->full[s];
		v->u.mb.n = 1;
		return true;
	}
	}
	sim_put_i(TY_I32, &sim_def(L, act, op->res[0])->u.bits, s);
	return true;
}

/* ---- schedules ---------------------------------------------------------------- */

static void
sched_create(SimLaunch *L, SimCta *cta, SimAct *act, Op *op)
{
	const char *k = attr_str(&op->attrs, "kind");
	SimSched *s = arena_alloc(&cta->arena, sizeof *s);

	s->op = op;
	s->cta = cta;
	s->ntiles = sim_scalar_i(act, op->opnds[0]);
	if (!k || strcmp(k, "static") == 0)
		s->kind = SCHED_STATIC;
	else if (strcmp(k, "dynamic") == 0)
		s->kind = SCHED_DYNAMIC;
	else if (strcmp(k, "clc") == 0)
		s->kind = SCHED_CLC;
	else
		sim_fault(L, op, "sched_create: unknown kind '%s'", k);
	vec_push(&cta->arena, &cta->scheds, s);
	sim_def(L, act, op->res[0])->u.sched = s;
}

/* The cluster's answers to op's requests (made at the first). */
static SimClcResp *
clc_entry(SimCluster *cl, Op *op)
{
	uint32_t i;

	for (i = 0; i < cl->clc.n; i++)
		if (cl->clc.v[i].op == op)
			return &cl->clc.v[i];
	vec_push(&cl->arena, &cl->clc, ((SimClcResp){ .op = op }));
	return &vec_last(&cl->clc);
}

static int64_t *
clc_response(SimLaunch *L, SimCluster *cl, Op *op, uint32_t k)
{
	SimClcResp *r = clc_entry(cl, op);

	while (r->resp.n <= k)
		vec_push(&cl->arena, &r->resp, sim_cancel_cluster(L));
	return &r->resp.v[k];
}

/* A CLC op's response: 16 contiguous bytes of shared memory. */
static SimView
resp_view(SimLaunch *L, SimAct *act, Op *op)
{
	SimView v = sim_view_of(act, op->opnds[0]);

	if (v.g.rank != 1 || v.g.ebytes * v.g.shape[0] != 16 || v.g.stride[0] != 1)
		sim_fault(L, op, "%s: the response view is not 16 contiguous "
			  "bytes", op_name(op->kind));
	return v;
}

/* clc_try_cancel: the cluster's next response for this op (a cluster id
 * the launch had not started, or -1), written as 16 bytes -- canceled,
 * then the first program's x, y, z -- into the view of this program (of
 * every program of the cluster with {multicast}), landing later as a TMA
 * load's bytes do and completing 16 bytes on the barrier there. */
static void
clc_try_cancel(SimLaunch *L, SimCo *co, SimAct *act, Op *op)
{
	SimCta *cta = co->cta;
	SimView v = resp_view(L, act, op);
	SimBar *bar = bar_operand(L, act, op, 1);
	bool mc = attr_int(&op->attrs, "multicast", 0) != 0;
	int32_t resp[4] = { 0, -1, -1, -1 };
	uint32_t pid[3], r;
	SimClcResp *cr;
	SimAsync *a;
	int64_t id;

	cr = clc_entry(cta->cl, op);
	id = *clc_response(L, cta->cl, op, cr->issued++);
	if (id >= 0) {
		sim_cluster_first(L, (uint64_t)id, pid);
		resp[0] = 1;
		resp[1] = (int32_t)pid[0];
		resp[2] = (int32_t)pid[1];
		resp[3] = (int32_t)pid[2];
	}
	a = async_new(L, co, op, AS_TMA_LOAD, 16);
	a->due = L->steps + delay(L);
	a->mask = mc ? (cta->cl->n >= 32 ? ~0u : (1u << cta->cl->n) - 1)
		     : 1u << cta->rank;
	a->view = v;
	a->bar_op = bar->alloc;
	a->bar_index = bar->index;
	a->bar = a->mask == (1u << cta->rank) ? bar : NULL;
	memcpy(a->data, resp, 16);
	if (L->race)
		sim_race_async(L, co, act, a, bar);
	for (r = 0; r < cta->cl->n; r++)
		if (a->mask & (1u << r)) {
			sim_smem_check_async_write(L, &cta->cl->ctas[r], op, &v,
						   "clc_try_cancel");
			sim_smem_mark(L, cta->cl->ctas[r].sh_pw, &v, 1);
		}
}

/* clc_query: the response's fields. */
static void
clc_query(SimLaunch *L, SimCo *co, SimAct *act, Op *op)
{
	SimView v = resp_view(L, act, op);
	int32_t resp[4];
	uint32_t i;

	sim_smem_read(L, co->cta, op, &v, (uint8_t *)resp, false, "clc_query");
	sim_put_i(TY_I1, &sim_def(L, act, op->res[0])->u.bits, resp[0] != 0);
	for (i = 1; i < 4; i++)
		sim_put_i(TY_I32, &sim_def(L, act, op->res[i])->u.bits,
			  resp[0] ? resp[i] : -1);
}

/* Appends the next tile of the program's stream, or marks its end.  clc:
 * the program's own tile first, then tiles of clusters it cancels (one
 * response per request, shared by the CTAs of the cluster). */
static void
sched_fetch(SimLaunch *L, SimSched *s)
{
	SimCta *cta = s->cta;
	int64_t t;

	switch (s->kind) {
	case SCHED_STATIC:
		t = (int64_t)(cta->lin + s->tiles.n * L->nprog);
		break;
	case SCHED_DYNAMIC:
		t = (*sim_counter(L, s->op))++;
		break;
	default:
		if (!s->started) {
			s->started = true;
			if (cta->lin < (uint64_t)s->ntiles) {
				t = (int64_t)cta->lin;
				break;
			}
		}
		for (;;) {
			int64_t r = *clc_response(L, cta->cl, s->op,
						  s->ncancel++);

			if (r < 0) {
				s->ended = true;
				return;
			}
			t = (int64_t)sim_cluster_cta_lin(L, (uint64_t)r,
							 cta->rank);
			if (t < s->ntiles)
				break;
		}
		break;
	}
	if (t < 0 || t >= s->ntiles) {
		s->ended = true;
		return;
	}
	vec_push(&cta->arena, &s->tiles, t);
}

int64_t
sim_sched_tile(SimLaunch *L, SimSched *s, uint32_t pos, Op *op)
{
	(void)op;
	while (s->tiles.n <= pos && !s->ended)
		sched_fetch(L, s);
	return pos < s->tiles.n ? s->tiles.v[pos] : -1;
}

/* ---- dispatch ---------------------------------------------------------------- */

/* fence_async_shared orders the generic writes of the warps that run it
 * (its agent's) before later async-proxy accesses. */
static void
fence_async(SimCta *cta, uint32_t ag)
{
	int64_t b;

	for (b = cta->dirty_lo[ag]; b < cta->dirty_hi[ag]; b++)
		if (cta->sh_dirty[b] == ag + 1)
			cta->sh_dirty[b] = 0;
	cta->dirty_lo[ag] = cta->smem_size;
	cta->dirty_hi[ag] = 0;
}

bool
sim_op_async(SimLaunch *L, SimCo *co, SimAct *act, Op *op)
{
	SimCta *cta = co->cta;
	uint32_t upto;
	int64_t n;

	switch (op->kind) {
	case OP_MBAR_ALLOC:
		mbar_alloc(L, cta, act, op);
		return true;
	case OP_MBAR_AT: {
		Type *t = sim_ty(act, op->opnds[0]);
		SimVal *arr = &act->vals[op->opnds[0]], *v;

		n = sim_scalar_i(act, op->opnds[1]);
		if (t->kind != TY_MBAR || t->rank != 1)
			sim_fault(L, op, "malformed IR: mbar_at needs mbar<N>");
		if (n < 0 || (uint64_t)n >= arr->u.mb.n)
			sim_fault(L, op, "mbar_at: index %lld is outside 0..%u",
				  (long long)n, arr->u.mb.n - 1);
		v = sim_def(L, act, op->res[0]);
		v->u.mb.bar = arr->u.mb.bar + n;
		v->u.mb.n = 1;
		return true;
	}
	case OP_MBAR_WAIT:
		return wait_bar(co, op, bar_operand(L, act, op, 0),
				(uint32_t)sim_scalar_i(act, op->opnds[1]),
				"mbar_wait");
	case OP_MBAR_ARRIVE: {
		SimBar *b = bar_operand(L, act, op, 0);

		if (op->nopnds == 2)
			b = sim_bar_in(L, sim_cluster_cta(L, cta,
					      sim_scalar_i(act, op->opnds[1]), op),
				       b->alloc, b->index, op);
		arrive(L, b, attr_int(&op->attrs, "count", 1), op);
		return true;
	}
	case OP_MBAR_EXPECT: {
		SimBar *b = bar_operand(L, act, op, 0);

		n = sim_scalar_i(act, op->opnds[1]);
		if (n < 0)
			sim_fault(L, op, "mbar_expect: %lld bytes", (long long)n);
		b->tx += n;
		maybe_complete(b);
		return true;
	}
	case OP_FENCE_ASYNC:
		fence_async(cta, sim_fence_agent(co));
		return true;
	case OP_SYNC_THREADS:
		return sync_all(L, co, NULL, op);
	case OP_SYNC_WARPS:  /* a task's own barrier, else the CTA's */
		return co->task ? true : sync_all(L, co, NULL, op);
	case OP_CLUSTER_SYNC:
		return sync_all(L, co, cta->cl, op);
	case OP_TMA_LOAD:
		tma_load(L, co, act, op);
		return true;
	case OP_CLC_TRY_CANCEL:
		clc_try_cancel(L, co, act, op);
		return true;
	case OP_CLC_QUERY:
		clc_query(L, co, act, op);
		return true;
	case OP_TMA_STORE:
		tma_store(L, co, act, op);
		return true;
	case OP_TMA_STORE_WAIT:
		n = attr_int(&op->attrs, "pending", 0);
		upto = co->st_issued > n ? co->st_issued - (uint32_t)n : 0;
		sim_async_complete(L, co, AS_TMA_STORE, upto);
		co->st_done = MAX(co->st_done, upto);
		return true;
	case OP_CP_ASYNC:
		cp_async(L, co, act, op);
		return true;
	case OP_CP_ASYNC_COMMIT:
		co->cp_committed++;
		co->cp_open = 0;
		return true;
	case OP_CP_ASYNC_WAIT:
		n = attr_int(&op->attrs, "pending", 0);
		upto = co->cp_committed > n ? co->cp_committed - (uint32_t)n : 0;
		sim_async_complete(L, co, AS_CP_ASYNC, upto);
		co->cp_done = MAX(co->cp_done, upto);
		return true;
	case OP_DOT_ASYNC:
		dot_async(L, co, act, op);
		return true;
	case OP_DOT_WAIT:
		dot_wait(L, co, act, op);
		return true;
	case OP_PIPE_CREATE:
		pipe_create(L, cta, act, op);
		return true;
	case OP_PIPE_ACQUIRE: case OP_PIPE_CONSUME: case OP_PIPE_COMMIT:
	case OP_PIPE_RELEASE: case OP_PIPE_BAR:
		return pipe_op(L, co, act, op);
	case OP_SCHED_CREATE:
		sched_create(L, cta, act, op);
		return true;
	default:
		sim_fault(L, op, "the simulator does not implement %s",
			  op_name(op->kind));
	}
}
