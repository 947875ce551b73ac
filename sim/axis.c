/*
 * axis.c: the axis analysis's facts (ir/axis.c) checked on the values a
 * laid-out kernel computes.
 *
 * Code generation trusts the facts without looking at values: registers
 * of a value constant over runs share one computation (a mask is one
 * predicate per vector), contiguity and divisibility pick vector widths
 * and drop per-element masks.  A fact that does not hold is a wrong
 * kernel on the GPU that the simulator's own arithmetic never shows (a
 * causal mask `cols <= rows` claimed constant over 64 columns made every
 * row see the keys of its first one).  So each result of the kernel's
 * ops is checked against the facts codegen uses for it: the proven ones
 * (no assumptions) always, and those under the fast entry's assumptions
 * (axis_pick_assumptions, and the narrower ones of realigned accesses,
 * axis_at_bytes) where this launch's arguments satisfy every assumption
 * the fact used.  Per dim d, with runs aligned to multiples of their
 * length along d:
 *   cnst[d]    equal elements over each run (any element type, by bits);
 *   contig[d]  +1 per step over each run (pointers: + the element size);
 *   div        every element that starts a run along some dim is a
 *              multiple of it, every element where there are no runs
 *              (pointers: bytes);
 *   known      every element equals it.
 */
#include <string.h>

#include "sim.h"

enum { AX_NARROW = 4 };  /* axis_at_bytes: 8, 4, 2, 1 */

struct SimAxis {
	const Axis *facts[2 + AX_NARROW];  /* proven, fast, narrow */
	uint64_t ok[2 + AX_NARROW];        /* assumptions the arguments meet */
};

static const int64_t narrow_bytes[AX_NARROW] = { 8, 4, 2, 1 };

/* The parameters of L's kernel that satisfy assumption set as. */
static uint64_t
satisfied(SimLaunch *L, const Assume *as)
{
	Func *f = L->kern;
	uint64_t ok = 0;
	uint32_t i;

	for (i = 0; i < f->body->nargs && i < 64; i++) {
		Type *t = ir_type(f, f->body->args[i]);
		uint64_t bit = 1ull << i, u = L->args[i].bits;
		int64_t v = t->kind == TY_PTR ? 0 : sim_get_i(t->kind, &u);
		bool good = true;

		if (as->align & bit)
			good = as->bytes ? u % (uint64_t)as->bytes == 0 : u % 16 == 0;
		else if (as->eq1 & bit)
			good = v == 1;
		else if ((as->div & bit) && as->divisor > 0)
			good = v % as->divisor == 0;
		if (good)
			ok |= bit;
	}
	return ok;
}

void
sim_axis_init(SimLaunch *L)
{
	SimAxis *x = arena_alloc(&L->arena, sizeof *x);
	Assume none, fast;
	int i;

	memset(&none, 0, sizeof none);
	x->facts[0] = axis_compute(L->kern, &L->arena, &none);
	x->ok[0] = ~0ull;
	axis_pick_assumptions(L->kern, x->facts[0], &fast);
	x->facts[1] = axis_compute(L->kern, &L->arena, &fast);
	x->ok[1] = satisfied(L, &fast);
	for (i = 0; i < AX_NARROW; i++) {
		Assume n = axis_at_bytes(&fast, narrow_bytes[i]);

		x->facts[2 + i] = axis_compute(L->kern, &L->arena, &n);
		x->ok[2 + i] = satisfied(L, &n);
	}
	L->axis = x;
}

static bool
trivial(const Axis *a, int rank)
{
	int d;

	if (a->has_known || a->div > 1)
		return false;
	for (d = 0; d < rank; d++)
		if (a->contig[d] > 1 || a->cnst[d] > 1)
			return false;
	return true;
}

static bool
same_facts(const Axis *a, const Axis *b)
{
	return !memcmp(a->contig, b->contig, sizeof a->contig) &&
	       !memcmp(a->cnst, b->cnst, sizeof a->cnst) && a->div == b->div &&
	       a->has_known == b->has_known && (!a->has_known || a->known == b->known);
}

typedef struct Elems {
	const uint8_t *p;
	int es;
	TypeKind k;
	bool is_int;      /* contiguity, divisibility, known apply */
	uint64_t mask;    /* the element's bits */
	int64_t unit;     /* contig's step: 1, or a pointer's element bytes */
} Elems;

static uint64_t
elem_bits(const Elems *e, int64_t i)
{
	uint64_t u = 0;

	memcpy(&u, e->p + i * e->es, (size_t)e->es);
	return u & e->mask;
}

static int64_t
elem_int(const Elems *e, int64_t i)
{
	return e->k == TY_PTR ? (int64_t)elem_bits(e, i)
			      : sim_get_i(e->k, e->p + i * e->es);
}

static void
where(char *out, size_t n, const int64_t *idx, int rank)
{
	size_t k = 0;
	int d;

	k += (size_t)snprintf(out + k, n - k, "[");
	for (d = 0; d < rank && k < n; d++)
		k += (size_t)snprintf(out + k, n - k, d ? ", %lld" : "%lld",
				      (long long)idx[d]);
	if (k < n)
		snprintf(out + k, n - k, "]");
}

TLX_NORETURN static void
wrong(SimLaunch *L, Op *op, Value v, const char *fact, const int64_t *idx,
      int rank, int64_t got)
{
	char at[96];

	where(at, sizeof at, idx, rank);
	sim_fault(L, op, "compiler bug: the axis analysis says %%%u %s, but "
		  "its element %s is %lld; code generation relies on it "
		  "(please report this program)", v, fact, at, (long long)got);
}

/* Checks facts a about value v of op (a tile of `t`'s shape). */
static void
check_tile(SimLaunch *L, Op *op, Value v, Type *t, const Elems *e, const Axis *a)
{
	int64_t idx[TY_MAX_RANK] = { 0 }, st[TY_MAX_RANK], n = ty_numel(t), i;
	int64_t cn[TY_MAX_RANK], co[TY_MAX_RANK];
	int r = t->rank, d;
	bool runs = false;
	char fact[96];

	for (d = r - 1; d >= 0; d--) {
		st[d] = d == r - 1 ? 1 : st[d + 1] * t->shape[d + 1];
		cn[d] = MIN(a->cnst[d], t->shape[d]);
		co[d] = e->is_int ? MIN(a->contig[d], t->shape[d]) : 1;
	}
	for (d = 0; d < r; d++)
		runs |= co[d] > 1;
	for (i = 0; i < n; i++) {
		bool start = !runs;  /* no runs: every element starts one */

		for (d = 0; d < r; d++) {
			if (cn[d] > 1 && idx[d] % cn[d] &&
			    elem_bits(e, i) != elem_bits(e, i - st[d])) {
				snprintf(fact, sizeof fact, "is constant over runs "
					 "of %lld along dim %d", (long long)cn[d], d);
				wrong(L, op, v, fact, idx, r, elem_int(e, i));
			}
			if (co[d] > 1 && idx[d] % co[d] &&
			    elem_bits(e, i) != ((elem_bits(e, i - st[d]) +
						 (uint64_t)e->unit) & e->mask)) {
				snprintf(fact, sizeof fact, "increases by 1 over "
					 "runs of %lld along dim %d",
					 (long long)co[d], d);
				wrong(L, op, v, fact, idx, r, elem_int(e, i));
			}
			if (co[d] > 1 && idx[d] % co[d] == 0)
				start = true;
		}
		if (e->is_int && start && a->div > 1 && elem_int(e, i) % a->div) {
			snprintf(fact, sizeof fact, "starts its runs at multiples "
				 "of %lld", (long long)a->div);
			wrong(L, op, v, fact, idx, r, elem_int(e, i));
		}
		if (e->is_int && a->has_known &&
		    elem_bits(e, i) != ((uint64_t)a->known & e->mask)) {
			snprintf(fact, sizeof fact, "is %lld everywhere",
				 (long long)a->known);
			wrong(L, op, v, fact, idx, r, elem_int(e, i));
		}
		for (d = r - 1; d >= 0 && ++idx[d] == t->shape[d]; d--)
			idx[d] = 0;
	}
}

static void
check_value(SimLaunch *L, SimAct *act, Op *op, Value v)
{
	SimAxis *x = L->axis;
	Type *t = ir_type(L->kern, v), *e = ty_elem(t);
	const Axis *a0 = &x->facts[0][v];
	int rank = t->kind == TY_TILE ? t->rank : 0, k;
	Elems el;

	if (t->kind != TY_TILE && !ty_is_int_kind(t->kind) && t->kind != TY_PTR)
		return;
	el.k = e->kind;
	el.is_int = (ty_is_int_kind(e->kind) && e->kind != TY_I1) || e->kind == TY_PTR;
	el.es = sim_esize(t);
	if (el.es < 1 || el.es > 8)
		return;
	el.mask = el.es == 8 ? ~0ull : (1ull << (8 * el.es)) - 1;
	el.unit = e->kind == TY_PTR ? MAX(1, ty_bytes(e->elem)) : 1;
	el.p = t->kind == TY_TILE ? sim_data(&act->vals[v], t)
				  : (const uint8_t *)&act->vals[v].u.bits;
	for (k = 0; k < 2 + AX_NARROW; k++) {
		const Axis *a = &x->facts[k][v];

		if (a->deps & ~x->ok[k])
			continue;  /* an assumption this launch does not meet */
		if (k ? same_facts(a, a0) : trivial(a, rank))
			continue;
		if (t->kind == TY_TILE)
			check_tile(L, op, v, t, &el, a);
		else
			check_tile(L, op, v, &(Type){ .kind = TY_TILE, .rank = 0 },
				   &el, a);
	}
}

void
sim_axis_check(SimLaunch *L, SimAct *act, Op *op)
{
	uint32_t i;

	if (act->fn != L->kern)
		return;
	for (i = 0; i < op->nres; i++)
		check_value(L, act, op, op->res[i]);
}
