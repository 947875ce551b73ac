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
#include <stdarg.h>
#include <string.h>

#include "sim.h"

enum { AX_NARROW = 4 };  /* axis_at_bytes: 8, 4, 2, 1 */

struct SimAxis {
	const Axis *facts[2 + AX_NARROW];  /* proven, fast, narrow */
	uint64_t ok[2 + AX_NARROW];        /* assumptions the arguments meet */
	/* per value: the distinct facts to check (the sets whose
	 * assumptions hold and that say more than the proven ones) */
	const Axis *(*check)[2 + AX_NARROW];
	uint8_t *ncheck;
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

/* The facts to check on value v of type t: each set whose assumptions
 * the launch meets and that says something no set before it says. */
static void
pick(SimAxis *x, uint32_t v, Type *t)
{
	int rank, k, j, n = 0;

	if (!t || (t->kind != TY_TILE && !ty_is_int_kind(t->kind) &&
		   t->kind != TY_PTR))
		return;
	rank = t->kind == TY_TILE ? t->rank : 0;
	for (k = 0; k < 2 + AX_NARROW; k++) {
		const Axis *a = &x->facts[k][v];

		if ((a->deps & ~x->ok[k]) || trivial(a, rank))
			continue;
		for (j = 0; j < n && !same_facts(x->check[v][j], a); j++)
			;
		if (j == n)
			x->check[v][n++] = a;
	}
	x->ncheck[v] = (uint8_t)n;
}

void
sim_axis_init(SimLaunch *L)
{
	SimAxis *x = arena_alloc(&L->arena, sizeof *x);
	Assume none, fast;
	uint32_t v;
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
	x->check = arena_alloc(&L->arena, L->kern->vals.n * sizeof *x->check);
	x->ncheck = arena_alloc(&L->arena, L->kern->vals.n);
	for (v = 0; v < L->kern->vals.n; v++)
		pick(x, v, ir_type(L->kern, v));
	L->axis = x;
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
	const uint8_t *q = e->p + i * e->es;
	uint32_t w;
	uint16_t h;
	uint64_t u;

	switch (e->es) {
	case 1: return *q;
	case 2: memcpy(&h, q, 2); return h;
	case 4: memcpy(&w, q, 4); return w;
	default: memcpy(&u, q, 8); return u;
	}
}

static int64_t
elem_int(const Elems *e, int64_t i)
{
	return e->k == TY_PTR ? (int64_t)elem_bits(e, i)
			      : sim_get_i(e->k, e->p + i * e->es);
}

TLX_NORETURN TLX_PRINTF(7, 8) static void
wrong(SimLaunch *L, Op *op, Value v, Type *t, const Elems *e, int64_t i,
      const char *fmt, ...)
{
	char fact[96], at[96];
	size_t k = 0;
	int64_t st = 1;
	int r = t->kind == TY_TILE ? t->rank : 0, j;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(fact, sizeof fact, fmt, ap);
	va_end(ap);
	at[k++] = '[';
	for (j = r - 1; j >= 0; j--)
		st *= t->shape[j];
	for (j = 0; j < r && k < sizeof at - 24; j++) {
		st /= t->shape[j];
		k += (size_t)snprintf(at + k, sizeof at - k, j ? ", %lld" : "%lld",
				      (long long)(i / st % t->shape[j]));
	}
	snprintf(at + k, sizeof at - k, "]");
	sim_fault(L, op, "compiler bug: the axis analysis says %%%u %s, but "
		  "its element %s is %lld; code generation relies on it "
		  "(please report this program)", v, fact, at,
		  (long long)elem_int(e, i));
}

/* Checks facts a about value v of op, n elements of shape t (rank 0:
 * a scalar).  Dim d is walked as [outer, shape[d], inner]. */
static void
check_facts(SimLaunch *L, Op *op, Value v, Type *t, const Elems *e,
	    const Axis *a)
{
	int r = t->kind == TY_TILE ? t->rank : 0, d;
	int64_t n = 1, inner = 1, o, k, j, i;
	bool runs = false;

	for (d = 0; d < r; d++)
		n *= t->shape[d];
	for (d = r - 1; d >= 0; inner *= t->shape[d], d--) {
		int64_t sh = t->shape[d], outer = n / (sh * inner);
		int64_t cn = MIN(a->cnst[d], sh);
		int64_t co = e->is_int ? MIN(a->contig[d], sh) : 1;

		for (o = 0; cn > 1 && o < outer; o++)
			for (k = 1; k < sh; k++) {
				if (k % cn == 0)
					continue;
				for (j = 0; j < inner; j++) {
					i = (o * sh + k) * inner + j;
					if (elem_bits(e, i) != elem_bits(e, i - inner))
						wrong(L, op, v, t, e, i, "is constant over "
						      "runs of %lld along dim %d",
						      (long long)cn, d);
				}
			}
		for (o = 0; co > 1 && o < outer; o++)
			for (k = 0; k < sh; k++)
				for (j = 0; j < inner; j++) {
					i = (o * sh + k) * inner + j;
					if (k % co && elem_bits(e, i) !=
					    ((elem_bits(e, i - inner) +
					      (uint64_t)e->unit) & e->mask))
						wrong(L, op, v, t, e, i, "increases by 1 "
						      "over runs of %lld along dim %d",
						      (long long)co, d);
					if (k % co == 0 && a->div > 1 &&
					    elem_int(e, i) % a->div)
						wrong(L, op, v, t, e, i, "starts its runs "
						      "at multiples of %lld",
						      (long long)a->div);
				}
		runs |= co > 1;
	}
	for (i = 0; e->is_int && (a->has_known || (!runs && a->div > 1)) && i < n; i++) {
		if (!runs && a->div > 1 && elem_int(e, i) % a->div)
			wrong(L, op, v, t, e, i, "starts its runs at multiples "
			      "of %lld", (long long)a->div);
		if (a->has_known && elem_bits(e, i) != ((uint64_t)a->known & e->mask))
			wrong(L, op, v, t, e, i, "is %lld everywhere",
			      (long long)a->known);
	}
}

static void
check_value(SimLaunch *L, SimAct *act, Op *op, Value v)
{
	SimAxis *x = L->axis;
	Type *t = ir_type(L->kern, v), *e = ty_elem(t);
	Elems el;
	int k;

	if (!x->ncheck[v])
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
	for (k = 0; k < x->ncheck[v]; k++)
		check_facts(L, op, v, t, &el, x->check[v][k]);
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
