/*
 * memops.c: global memory (load, store, atomics, ptr_add) and shared
 * memory (views, smem_load, smem_store) with every access checked.
 *
 * Global: an access must lie inside one live allocation and be aligned to
 * its element; a read must find every byte written (the shadow).  Masked
 * off lanes are never touched.  The common case (all lanes in one
 * allocation, the range fully written) is checked once per op.  Programs
 * of different clusters are ordered by nothing but global atomics: a
 * load or store of bytes another such program stored in this launch, when
 * neither has used an atomic (after which a protocol the simulator does
 * not follow may order them), is a race.
 *
 * Shared: per CTA, one byte of shadow per byte says "written"; two more
 * count async writes (TMA, cp.async) and async reads (dot_async,
 * tma_store) in flight.  Reading bytes an async copy is still writing, or
 * writing bytes an async op still reads, is a missing wait and is
 * reported with the op that is in flight.  With the fence check (always
 * in laid-out kernels) a fourth says which agent's generic writes no
 * fence_async_shared of that agent has ordered yet before an async-proxy
 * read (tma_store, dot_async).
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

/* Element i's index, "[i, j]". */
static void
index_of(char *out, size_t n, Type *t, int64_t i)
{
	Buf b = { 0 };

	sim_index_str(&b, t, i);
	snprintf(out, n, "%s", b.s ? b.s : "?");
	buf_free(&b);
}

/* " at element [i, j]" when t is a tile or a shared buffer, else "". */
static const char *
elem_at(char *out, size_t n, Type *t, int64_t i)
{
	int k;

	out[0] = 0;
	if (t && (t->kind == TY_TILE || t->kind == TY_SMEM) &&
	    (k = snprintf(out, n, " at element ")) > 0 && (size_t)k < n)
		index_of(out + k, n - (size_t)k, t, i);
	return out;
}

/* Every byte of [p, p+n) equals v. */
static bool
all_eq(const uint8_t *p, size_t n, uint8_t v)
{
	return n == 0 || (p[0] == v && memcmp(p, p + 1, n - 1) == 0);
}

uint8_t *
sim_grange(SimLaunch *L, Op *op, uint64_t addr, uint64_t n, uint64_t align,
	   bool write, const char *what, Type *t, int64_t elem)
{
	SimAlloc *a = sim_mem_find(L->mem, addr, n);
	char at[96];
	uint64_t off, i;

	if (!a) {
		Buf d = { 0 };
		char desc[256];

		sim_mem_describe(L->mem, addr, n, &d);
		snprintf(desc, sizeof desc, "%s", d.s ? d.s : "");
		buf_free(&d);
		sim_fault(L, op, "%s out of bounds%s: address 0x%llx (%llu "
			  "bytes) %s", what, elem_at(at, sizeof at, t, elem),
			  (unsigned long long)addr, (unsigned long long)n,
			  desc);
	}
	if (align && addr % align)
		sim_fault(L, op, "misaligned %s%s: address 0x%llx is not a "
			  "multiple of %llu", what,
			  elem_at(at, sizeof at, t, elem),
			  (unsigned long long)addr, (unsigned long long)align);
	off = addr - a->base;
	if (write) {
		memset(a->shadow + off, 1, n);
	} else if (!all_eq(a->shadow + off, n, 1)) {
		for (i = 0; a->shadow[off + i]; i++)
			;
		sim_fault(L, op, "%s of unwritten memory%s: address 0x%llx "
			  "(offset %llu of the %llu-byte allocation at 0x%llx) "
			  "was never written", what,
			  elem_at(at, sizeof at, t, elem),
			  (unsigned long long)(addr + i),
			  (unsigned long long)(off + i),
			  (unsigned long long)a->size,
			  (unsigned long long)a->base);
	}
	return a->data + off;
}

uint8_t *
sim_gptr(SimLaunch *L, Op *op, uint64_t addr, uint64_t n, bool write,
	 const char *what, Type *t, int64_t elem)
{
	return sim_grange(L, op, addr, n, n, write, what, t, elem);
}

void
sim_op_ptr_add(SimLaunch *L, SimAct *act, Op *op)
{
	Type *pt = sim_ty(act, op->opnds[0]), *ot = sim_ty(act, op->opnds[1]);
	Type *rt = sim_ty(act, op->res[0]);
	uint64_t *p, *r;
	uint8_t *o;
	TypeKind ok = ty_elem(ot)->kind;
	int64_t i, n = ty_numel(rt), es;

	if (ty_elem(pt)->kind != TY_PTR || pt != rt || !ty_is_int_kind(ok) ||
	    ty_numel(ot) != n)
		sim_fault(L, op, "malformed IR: ptr_add needs pointers and "
			  "integer offsets of one shape");
	es = sim_esize(ty_elem(pt)->elem);
	p = (uint64_t *)(void *)sim_data(&act->vals[op->opnds[0]], pt);
	o = sim_data(&act->vals[op->opnds[1]], ot);
	r = (uint64_t *)(void *)sim_data(sim_def(L, act, op->res[0]), rt);
	if (ok == TY_I32) {
		const int32_t *oi = (const int32_t *)(void *)o;

		for (i = 0; i < n; i++)
			r[i] = p[i] + (uint64_t)((int64_t)oi[i] * es);
		return;
	}
	for (i = 0; i < n; i++)
		r[i] = p[i] + (uint64_t)sim_get_i(ok, o + i * sim_kind_bytes(ok)) *
				      (uint64_t)es;
}

void
sim_op_misalign(SimLaunch *L, SimAct *act, Op *op)
{
	Type *pt = sim_ty(act, op->opnds[0]), *rt = sim_ty(act, op->res[0]);
	uint64_t bytes = (uint64_t)attr_int(&op->attrs, "bytes", 16);
	const uint64_t *p;
	int32_t *r;
	int64_t i, n = ty_numel(rt), es;

	if (ty_elem(pt)->kind != TY_PTR || ty_elem(rt)->kind != TY_I32 ||
	    ty_numel(pt) != n || !bytes || (bytes & (bytes - 1)))
		sim_fault(L, op, "malformed IR: misalign needs pointers, i32 "
			  "results of their shape and bytes a power of two");
	es = sim_esize(ty_elem(pt)->elem);
	p = (const uint64_t *)(const void *)sim_data(&act->vals[op->opnds[0]], pt);
	r = (int32_t *)(void *)sim_data(sim_def(L, act, op->res[0]), rt);
	for (i = 0; i < n; i++)
		r[i] = (int32_t)((p[i] & (bytes - 1)) / (uint64_t)MAX(es, 1));
}

typedef struct Access {
	uint64_t *ptr;
	uint8_t *mask;  /* NULL: all lanes */
	int64_t n;
	int es;
	Type *t;        /* the pointer (tile) type, for element indices */
} Access;

static Access
access_of(SimLaunch *L, SimAct *act, Op *op, Value p, Value mask, int es)
{
	Type *t = sim_ty(act, p);
	Access a = { (uint64_t *)(void *)sim_data(&act->vals[p], t), NULL,
		     ty_numel(t), es, t };

	if (ty_elem(t)->kind != TY_PTR)
		sim_fault(L, op, "malformed IR: %s needs pointers",
			  op_name(op->kind));
	if (mask) {
		Type *mt = sim_ty(act, mask);

		if (ty_elem(mt)->kind != TY_I1 || ty_numel(mt) != a.n)
			sim_fault(L, op, "malformed IR: %s has a mask of the "
				  "wrong type", op_name(op->kind));
		a.mask = sim_data(&act->vals[mask], mt);
	}
	return a;
}

/* The one allocation that holds every active lane, or NULL (then each
 * lane is checked on its own). */
static SimAlloc *
one_alloc(SimLaunch *L, Access *x)
{
	uint64_t lo = UINT64_MAX, hi = 0;
	int64_t i;

	for (i = 0; i < x->n; i++) {
		uint64_t p = x->ptr[i];

		if (x->mask && !(x->mask[i] & 1))
			continue;
		if (p & (uint64_t)(x->es - 1))  /* es is 1, 2, 4 or 8 */
			return NULL;
		lo = p < lo ? p : lo;
		hi = p > hi ? p : hi;
	}
	if (lo > hi || hi - lo > (1ull << 40))
		return NULL;
	return sim_mem_find(L->mem, lo, hi - lo + (uint64_t)x->es);
}

static bool
all_written(SimAlloc *a, Access *x)
{
	uint64_t lo = UINT64_MAX, hi = 0;
	int64_t i;

	for (i = 0; i < x->n; i++) {
		if (x->mask && !(x->mask[i] & 1))
			continue;
		lo = x->ptr[i] < lo ? x->ptr[i] : lo;
		hi = x->ptr[i] > hi ? x->ptr[i] : hi;
	}
	return lo > hi || !memchr(a->shadow + (lo - a->base), 0,
				  hi - lo + (uint64_t)x->es);
}

/* ---- races between programs ------------------------------------------- */

static uint64_t
cluster_of(SimLaunch *L, uint64_t lin)
{
	uint64_t x = lin % L->grid[0], y = lin / L->grid[0] % L->grid[1];
	uint64_t z = lin / ((uint64_t)L->grid[0] * L->grid[1]);

	return x / L->cshape[0] + (uint64_t)(L->grid[0] / L->cshape[0]) *
		(y / L->cshape[1] + (uint64_t)(L->grid[1] / L->cshape[1]) *
		 (z / L->cshape[2]));
}

static TLX_NORETURN void
race(SimLaunch *L, Op *op, SimAlloc *a, uint64_t off, uint32_t w,
     const char *what)
{
	uint64_t o = w - 1;
	uint32_t x = (uint32_t)(o % L->grid[0]);
	uint32_t y = (uint32_t)(o / L->grid[0] % L->grid[1]);
	uint32_t z = (uint32_t)(o / ((uint64_t)L->grid[0] * L->grid[1]));

	sim_fault(L, op, "%s of global memory at address 0x%llx (offset %llu "
		  "of the %llu-byte allocation at 0x%llx) that program (%u, "
		  "%u, %u) stored in this launch: programs are not ordered "
		  "without atomics, a race", what,
		  (unsigned long long)(a->base + off), (unsigned long long)off,
		  (unsigned long long)a->size, (unsigned long long)a->base,
		  x, y, z);
}

/* The running program's access to [off, off + n) of a: a store records
 * it, both check it. */
static void
race_check(SimLaunch *L, Op *op, SimAlloc *a, uint64_t off, uint64_t n,
	   bool store)
{
	SimCta *cta = L->cur ? L->cur->cta : NULL;
	uint32_t me, w;
	uint64_t i, mine;

	if (!cta || L->kern->kind != FN_KERNEL)
		return;
	if (a->wepoch != L->epoch) {
		if (!store)
			return;  /* nothing stored in this launch yet */
		if (!a->wprog)
			a->wprog = sim_xalloc(L, a->size * sizeof *a->wprog);
		else if (a->wepoch)
			memset(a->wprog, 0, a->size * sizeof *a->wprog);
		a->wepoch = L->epoch;
	}
	me = cta->atomics ? 0 : (uint32_t)(cta->lin + 1);
	mine = cluster_of(L, cta->lin);
	for (i = 0; i < n; i++) {
		w = a->wprog[off + i];
		if (w && me && w != me && cluster_of(L, w - 1) != mine)
			race(L, op, a, off + i, w, store ? "store" : "load");
		if (store)
			a->wprog[off + i] = me;
	}
}

static void
race_at(SimLaunch *L, Op *op, uint64_t addr, uint64_t n, bool store)
{
	SimAlloc *a = sim_mem_find(L->mem, addr, n);

	if (a)
		race_check(L, op, a, addr - a->base, n, store);
}

void
sim_op_load(SimLaunch *L, SimAct *act, Op *op)
{
	Type *rt = sim_ty(act, op->res[0]);
	int es = sim_esize(rt);
	Access x;
	SimAlloc *a;
	uint8_t *r, *other = NULL;
	int64_t i;

	if (op->nopnds < 1 || op->nopnds > 3)
		sim_fault(L, op, "malformed IR: load takes ptr, mask, other");
	x = access_of(L, act, op, op->opnds[0], op->nopnds > 1 ? op->opnds[1] : 0,
		      es);
	if (ty_numel(rt) != x.n || ty_elem(x.t)->elem != ty_elem(rt))
		sim_fault(L, op, "malformed IR: load's result does not match "
			  "its pointers");
	if (op->nopnds > 2) {
		if (sim_ty(act, op->opnds[2]) != rt)
			sim_fault(L, op, "malformed IR: load's other has the "
				  "wrong type");
		other = sim_data(&act->vals[op->opnds[2]], rt);
	}
	r = sim_data(sim_def(L, act, op->res[0]), rt);
	a = one_alloc(L, &x);
	if (a && all_written(a, &x)) {
		int64_t j;

		/* runs of active lanes at consecutive addresses: one copy */
		for (i = 0; i < x.n; i = j) {
			if (x.mask && !(x.mask[i] & 1)) {
				j = i + 1;
				continue;
			}
			for (j = i + 1; j < x.n && (!x.mask || (x.mask[j] & 1)) &&
					x.ptr[j] == x.ptr[j - 1] + (uint64_t)es;
			     j++)
				;
			memcpy(r + i * es, a->data + (x.ptr[i] - a->base),
			       (size_t)((j - i) * es));
			race_check(L, op, a, x.ptr[i] - a->base,
				   (uint64_t)((j - i) * es), false);
		}
	} else {
		for (i = 0; i < x.n; i++) {
			if (x.mask && !(x.mask[i] & 1))
				continue;
			memcpy(r + i * es,
			       sim_gptr(L, op, x.ptr[i], (uint64_t)es, false,
					"load", x.t, i),
			       (size_t)es);
			race_at(L, op, x.ptr[i], (uint64_t)es, false);
		}
	}
	if (!x.mask)
		return;
	for (i = 0; i < x.n; i++)
		if (!(x.mask[i] & 1)) {
			if (other)
				memcpy(r + i * es, other + i * es, (size_t)es);
			else
				memset(r + i * es, 0, (size_t)es);
		}
}

typedef struct Lane {
	uint64_t p;
	int64_t i;
} Lane;

static int
lane_cmp(const void *a, const void *b)
{
	const Lane *x = a, *y = b;

	if (x->p != y->p)
		return x->p < y->p ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

/* Two active lanes of one store at one address with different values:
 * which one lands is not defined on the GPU, so it is a fault.  Lanes at
 * one address with equal bytes (a broadcast value) are fine. */
static void
store_conflicts(SimLaunch *L, Op *op, const Access *x, const uint8_t *v)
{
	int64_t i, k = 0, last = -1, a = -1, b = -1;
	bool rising = true;
	uint64_t at = 0;
	char ea[64], eb[64];
	Lane *s;

	for (i = 0; i < x->n; i++)
		if (!x->mask || (x->mask[i] & 1)) {
			rising &= last < 0 || x->ptr[i] > x->ptr[last];
			last = i;
			k++;
		}
	if (rising)
		return;
	s = sim_xalloc(L, (size_t)k * sizeof *s);
	for (i = 0, k = 0; i < x->n; i++)
		if (!x->mask || (x->mask[i] & 1))
			s[k++] = (Lane){ x->ptr[i], i };
	qsort(s, (size_t)k, sizeof *s, lane_cmp);
	for (i = 1; i < k && a < 0; i++)
		if (s[i].p == s[i - 1].p &&
		    memcmp(v + s[i].i * x->es, v + s[i - 1].i * x->es,
			   (size_t)x->es)) {
			a = s[i - 1].i;
			b = s[i].i;
			at = s[i].p;
		}
	free(s);
	if (a < 0)
		return;
	index_of(ea, sizeof ea, x->t, a);
	index_of(eb, sizeof eb, x->t, b);
	sim_fault(L, op, "store: elements %s and %s write different values to "
		  "one address (0x%llx): which one lands is not defined; store "
		  "each address from one element, or use an atomic",
		  ea, eb, (unsigned long long)at);
}

void
sim_op_store(SimLaunch *L, SimAct *act, Op *op)
{
	Type *vt;
	int es;
	Access x;
	SimAlloc *a;
	uint8_t *v;
	int64_t i;

	if (op->nopnds < 2 || op->nopnds > 3)
		sim_fault(L, op, "malformed IR: store takes ptr, value, mask");
	vt = sim_ty(act, op->opnds[1]);
	es = sim_esize(vt);
	x = access_of(L, act, op, op->opnds[0], op->nopnds > 2 ? op->opnds[2] : 0,
		      es);
	if (ty_numel(vt) != x.n || ty_elem(x.t)->elem != ty_elem(vt))
		sim_fault(L, op, "malformed IR: store's value does not match "
			  "its pointers");
	v = sim_data(&act->vals[op->opnds[1]], vt);
	store_conflicts(L, op, &x, v);
	a = one_alloc(L, &x);
	if (a) {
		int64_t j;

		/* runs of active lanes at consecutive addresses: one copy */
		for (i = 0; i < x.n; i = j) {
			uint64_t off = x.ptr[i] - a->base;

			if (x.mask && !(x.mask[i] & 1)) {
				j = i + 1;
				continue;
			}
			for (j = i + 1; j < x.n && (!x.mask || (x.mask[j] & 1)) &&
					x.ptr[j] == x.ptr[j - 1] + (uint64_t)es;
			     j++)
				;
			race_check(L, op, a, off, (uint64_t)((j - i) * es), true);
			memcpy(a->data + off, v + i * es, (size_t)((j - i) * es));
			memset(a->shadow + off, 1, (size_t)((j - i) * es));
		}
		return;
	}
	for (i = 0; i < x.n; i++)
		if (!x.mask || (x.mask[i] & 1)) {
			uint8_t *p = sim_gptr(L, op, x.ptr[i], (uint64_t)es, true,
					      "store", x.t, i);

			race_at(L, op, x.ptr[i], (uint64_t)es, true);
			memcpy(p, v + i * es, (size_t)es);
		}
}

enum { A_ADD, A_MAX, A_MIN, A_XCHG, A_AND, A_OR, A_XOR };

static int
atomic_kind(const char *s)
{
	static const char *names[] = { "add", "max", "min", "xchg", "and",
				       "or", "xor" };
	int i;

	for (i = 0; s && i < 7; i++)
		if (strcmp(s, names[i]) == 0)
			return i;
	return -1;
}

/* One atomic read-modify-write on the element at m; old value to r. */
static void
rmw(SimLaunch *L, Op *op, int k, TypeKind ek, uint8_t *m, const uint8_t *v,
    uint8_t *r)
{
	int es = sim_kind_bytes(ek);

	memcpy(r, m, (size_t)es);
	if (k == A_XCHG) {
		memcpy(m, v, (size_t)es);
	} else if (ty_is_float_kind(ek)) {
		double a = sim_get_f(ek, m), b = sim_get_f(ek, v);

		if (k >= A_AND)
			sim_fault(L, op, "atomic: bitwise kinds need integers");
		/* an f32 add flushes subnormal operands and its result to
		 * zero of their sign, as the hardware's (atom.add.f32 is
		 * .ftz: REDG.E.ADD.F32.FTZ) */
		if (k == A_ADD && ek == TY_F32) {
			float s;

			a = fabs(a) < FLT_MIN ? copysign(0.0, a) : a;
			b = fabs(b) < FLT_MIN ? copysign(0.0, b) : b;
			s = (float)a + (float)b;
			sim_put_f(ek, m, fabsf(s) < FLT_MIN ? copysignf(0.0f, s) : s);
			return;
		}
		/* max and min as the ops: a NaN operand ignored, -0 < +0 */
		sim_put_f(ek, m, k == A_ADD ? a + b
				 : sim_min_num(a, b, k == A_MAX));
	} else {
		int64_t a = sim_get_i(ek, m), b = sim_get_i(ek, v), o;
		bool uns = ty_is_unsigned_kind(ek);

		switch (k) {
		case A_ADD: o = (int64_t)((uint64_t)a + (uint64_t)b); break;
		case A_MAX: o = (uns ? (uint64_t)a > (uint64_t)b : a > b) ? a : b; break;
		case A_MIN: o = (uns ? (uint64_t)a < (uint64_t)b : a < b) ? a : b; break;
		case A_AND: o = a & b; break;
		case A_OR: o = a | b; break;
		default: o = a ^ b; break;
		}
		sim_put_i(ek, m, o);
	}
}

void
sim_op_atomic(SimLaunch *L, SimAct *act, Op *op)
{
	int k = atomic_kind(attr_str(&op->attrs, "kind"));
	Type *vt, *rt = sim_ty(act, op->res[0]);
	TypeKind ek;
	Access x;
	uint8_t *v, *r;
	int64_t i, j;
	int es;

	if (k < 0 || op->nopnds < 2 || op->nopnds > 3)
		sim_fault(L, op, "malformed IR: atomic needs a kind (add max "
			  "min xchg and or xor), ptr and value");
	vt = sim_ty(act, op->opnds[1]);
	ek = ty_elem(vt)->kind;
	es = sim_esize(vt);
	x = access_of(L, act, op, op->opnds[0], op->nopnds > 2 ? op->opnds[2] : 0,
		      es);
	if (vt != rt || ty_numel(vt) != x.n || !ty_is_scalar_kind(ek) ||
	    ty_elem(x.t)->elem != ty_elem(vt))
		sim_fault(L, op, "malformed IR: atomic's value does not match "
			  "its pointers");
	v = sim_data(&act->vals[op->opnds[1]], vt);
	r = sim_data(sim_def(L, act, op->res[0]), rt);
	if (L->cur)
		L->cur->cta->atomics = true;
	for (j = 0; j < x.n; j++) {
		i = L->o.atomic_reverse ? x.n - 1 - j : j;
		if (x.mask && !(x.mask[i] & 1)) {
			memset(r + i * es, 0, (size_t)es);
			continue;
		}
		rmw(L, op, k, ek,
		    sim_gptr(L, op, x.ptr[i], (uint64_t)es, false, "atomic",
			     x.t, i),
		    v + i * es, r + i * es);
	}
}

void
sim_op_atomic_cas(SimLaunch *L, SimAct *act, Op *op)
{
	Type *vt = sim_ty(act, op->opnds[2]), *rt = sim_ty(act, op->res[0]);
	int es = sim_esize(vt);
	Access x = access_of(L, act, op, op->opnds[0], 0, es);
	uint8_t *c, *v, *r;
	int64_t j;

	if (vt != rt || sim_ty(act, op->opnds[1]) != vt ||
	    ty_numel(vt) != x.n || ty_elem(x.t)->elem != ty_elem(vt))
		sim_fault(L, op, "malformed IR: atomic_cas needs ptr, cmp and "
			  "value of one shape");
	c = sim_data(&act->vals[op->opnds[1]], vt);
	v = sim_data(&act->vals[op->opnds[2]], vt);
	r = sim_data(sim_def(L, act, op->res[0]), rt);
	if (L->cur)
		L->cur->cta->atomics = true;
	for (j = 0; j < x.n; j++) {
		int64_t i = L->o.atomic_reverse ? x.n - 1 - j : j;
		uint8_t *m = sim_gptr(L, op, x.ptr[i], (uint64_t)es, false,
				      "atomic_cas", x.t, i);

		memcpy(r + i * es, m, (size_t)es);
		if (memcmp(m, c + i * es, (size_t)es) == 0)
			memcpy(m, v + i * es, (size_t)es);
	}
}

/* ---- shared memory ----------------------------------------------------- */

static bool
placed(const SimView *v)
{
	return v->g.tw || v->g.swz.mask;
}

/* The element offsets of a view in a swizzled or tiled buffer, in the
 * view's row-major order: the shared view algebra (ir/smemview.c). */
static int64_t *
placed_offsets(SimLaunch *L, const SimView *v, size_t *n)
{
	const SmemGeom *g = &v->g;
	int64_t total = 1, k, rem, a;
	int d;

	for (d = 0; d < v->g.rank; d++)
		total *= v->g.shape[d];
	if ((size_t)total > L->noffs) {
		L->offs = sim_xrealloc(L, L->offs, (size_t)total * 8);
		L->noffs = (size_t)total;
	}
	for (k = 0; k < total; k++) {
		a = v->off;
		for (d = v->g.rank - 1, rem = k; d >= 0; d--) {
			a += sv_dim_bytes(g, d, rem % v->g.shape[d]);
			rem /= v->g.shape[d];
		}
		L->offs[k] = sv_swizzle(g->swz, a);
	}
	*n = (size_t)total;
	return L->offs;
}

int64_t *
sim_view_offsets(SimLaunch *L, const SimView *v, size_t *n)
{
	int64_t sh[4] = { 1, 1, 1, 1 }, st[4] = { 0, 0, 0, 0 };
	int64_t i0, i1, i2, i3, total = 1;
	size_t k = 0;
	int d, off = 4 - v->g.rank;

	if (placed(v))
		return placed_offsets(L, v, n);
	for (d = 0; d < v->g.rank; d++) {
		sh[off + d] = v->g.shape[d];
		st[off + d] = v->g.stride[d] * v->g.ebytes;
		total *= v->g.shape[d];
	}
	if ((size_t)total > L->noffs) {
		L->offs = sim_xrealloc(L, L->offs, (size_t)total * 8);
		L->noffs = (size_t)total;
	}
	for (i0 = 0; i0 < sh[0]; i0++)
		for (i1 = 0; i1 < sh[1]; i1++)
			for (i2 = 0; i2 < sh[2]; i2++)
				for (i3 = 0; i3 < sh[3]; i3++)
					L->offs[k++] = v->off + i0 * st[0] +
						       i1 * st[1] + i2 * st[2] +
						       i3 * st[3];
	*n = k;
	return L->offs;
}

SimRun *
sim_view_runs(SimLaunch *L, const SimView *v, size_t *n)
{
	int64_t sh[4] = { 1, 1, 1, 1 }, st[4] = { 0, 0, 0, 0 }, len;
	int64_t i0, i1, i2, i3, total = 1, inner;
	size_t k = 0;
	int d, off = 4 - v->g.rank;

	if (placed(v)) {
		/* one run an element */
		int64_t *o = placed_offsets(L, v, n);

		if (*n > L->nruns) {
			L->runs = sim_xrealloc(L, L->runs, *n * sizeof *L->runs);
			L->nruns = *n;
		}
		for (k = 0; k < *n; k++) {
			L->runs[k].off = o[k];
			L->runs[k].len = v->g.ebytes;
		}
		return L->runs;
	}
	for (d = 0; d < v->g.rank; d++) {
		sh[off + d] = v->g.shape[d];
		st[off + d] = v->g.stride[d] * v->g.ebytes;
		total *= v->g.shape[d];
	}
	/* a row of unit stride is one run */
	inner = st[3] == v->g.ebytes ? 1 : sh[3];
	len = st[3] == v->g.ebytes ? sh[3] * v->g.ebytes : v->g.ebytes;
	if ((size_t)total > L->nruns) {
		L->runs = sim_xrealloc(L, L->runs, (size_t)total * sizeof *L->runs);
		L->nruns = (size_t)total;
	}
	for (i0 = 0; i0 < sh[0]; i0++)
		for (i1 = 0; i1 < sh[1]; i1++)
			for (i2 = 0; i2 < sh[2]; i2++)
				for (i3 = 0; i3 < inner; i3++) {
					L->runs[k].off = v->off + i0 * st[0] +
							 i1 * st[1] +
							 i2 * st[2] + i3 * st[3];
					L->runs[k++].len = len;
				}
	*n = k;
	return L->runs;
}

SimView
sim_view_of(SimAct *act, Value v)
{
	return act->vals[v].u.view;
}

void
sim_smem_mark(SimLaunch *L, uint8_t *map, const SimView *v, int d)
{
	size_t n, i;
	SimRun *r = sim_view_runs(L, v, &n);
	int64_t b;

	for (i = 0; i < n; i++)
		for (b = 0; b < r[i].len; b++)
			map[r[i].off + b] = (uint8_t)(map[r[i].off + b] + d);
}

/* The async op in flight that touches byte `off` of cta's shared memory
 * through its view (kind < 0: any). */
static SimAsync *
inflight_at(SimLaunch *L, SimCta *cta, int64_t off, bool writes)
{
	SimAsync *a;

	for (a = L->inflight; a; a = a->next) {
		const SimView *vs[2] = { &a->view, &a->view2 };
		int j;

		if (writes != (a->kind == AS_TMA_LOAD || a->kind == AS_CP_ASYNC))
			continue;
		if (a->kind == AS_TMA_LOAD ? !(a->mask & (1u << cta->rank))
					   : a->cta != cta)
			continue;
		for (j = 0; j < 2; j++) {
			size_t n, i;
			int64_t *o;

			if (!vs[j]->g.ebytes)
				continue;
			o = sim_view_offsets(L, vs[j], &n);
			for (i = 0; i < n; i++)
				if (off >= o[i] && off < o[i] + vs[j]->g.ebytes)
					return a;
		}
	}
	return NULL;
}

static const char *
issued_at(SimLaunch *L, SimAsync *a, char *out, size_t n)
{
	if (a && a->op && a->op->loc.line > 0)
		snprintf(out, n, "%s at %s:%d:%d", op_name(a->op->kind),
			 L->mod->source, a->op->loc.line, a->op->loc.col);
	else
		snprintf(out, n, "%s", a ? op_name(a->op->kind) : "an async op");
	return out;
}

static void
smem_bounds(SimLaunch *L, SimCta *cta, Op *op, SimRun *r, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (r[i].off < 0 || r[i].off + r[i].len > cta->smem_size)
			sim_fault(L, op, "shared memory access out of bounds "
				  "(offset %lld of %lld bytes)",
				  (long long)r[i].off, (long long)cta->smem_size);
}

/* The first byte of [off, off+len) where map[b] != 0 (want_zero) or
 * map[b] != 1, or -1. */
static int64_t
first_bad(const uint8_t *map, int64_t off, int64_t len, uint8_t want)
{
	int64_t b;

	if (all_eq(map + off, (size_t)len, want))
		return -1;
	for (b = off; b < off + len; b++)
		if (map[b] != want)
			return b;
	return -1;
}

void
sim_smem_read(SimLaunch *L, SimCta *cta, Op *op, const SimView *v,
	      uint8_t *dst, bool async_proxy, const char *what)
{
	size_t n, i;
	SimRun *r = sim_view_runs(L, v, &n);
	int64_t at, d = 0;
	char buf[160];

	smem_bounds(L, cta, op, r, n);
	for (i = 0; i < n; i++) {
		if ((at = first_bad(cta->sh_pw, r[i].off, r[i].len, 0)) >= 0) {
			SimAsync *a = inflight_at(L, cta, at, true);

			issued_at(L, a, buf, sizeof buf);
			sim_fault(L, op, "%s reads shared memory of buffer '%s' "
				  "(offset %lld) that %s is still writing: a "
				  "missing wait?", what, sim_smem_name(L, at),
				  (long long)at, buf);
		}
		if ((at = first_bad(cta->sh_written, r[i].off, r[i].len, 1)) >= 0)
			sim_fault(L, op, "%s reads shared memory of buffer '%s' "
				  "(offset %lld) that was never written", what,
				  sim_smem_name(L, at), (long long)at);
		if (async_proxy &&
		    (at = first_bad(cta->sh_dirty, r[i].off, r[i].len, 0)) >= 0) {
			if (cta->shadow)
				sim_race_unfenced(L, cta, op, at);
			sim_fault(L, op, "%s reads shared memory of buffer '%s' "
				  "(offset %lld) written by smem_store with no "
				  "fence_async_shared in between", what,
				  sim_smem_name(L, at), (long long)at);
		}
		memcpy(dst + d, cta->smem + r[i].off, (size_t)r[i].len);
		d += r[i].len;
	}
}

static void
check_no_reader(SimLaunch *L, SimCta *cta, Op *op, const SimRun *r,
		const char *what)
{
	int64_t at;
	char buf[160];

	if ((at = first_bad(cta->sh_pr, r->off, r->len, 0)) >= 0) {
		SimAsync *a = inflight_at(L, cta, at, false);

		issued_at(L, a, buf, sizeof buf);
		sim_fault(L, op, "%s overwrites shared memory of buffer '%s' "
			  "(offset %lld) that %s still reads: a missing %s?",
			  what, sim_smem_name(L, at), (long long)at, buf,
			  a && a->kind == AS_DOT ? "dot_wait"
						 : "tma_store_wait");
	}
}

/* An asynchronous write may land as soon as it is issued, so the bytes it
 * will write must have no asynchronous reader in flight at issue. */
void
sim_smem_check_async_write(SimLaunch *L, SimCta *cta, Op *op,
			   const SimView *v, const char *what)
{
	size_t n, i;
	SimRun *r = sim_view_runs(L, v, &n);

	smem_bounds(L, cta, op, r, n);
	for (i = 0; i < n; i++)
		check_no_reader(L, cta, op, &r[i], what);
}

void
sim_smem_write(SimLaunch *L, SimCta *cta, Op *op, const SimView *v,
	       const uint8_t *src, bool generic, const char *what)
{
	size_t n, i;
	SimRun *r = sim_view_runs(L, v, &n);
	int64_t d = 0;
	uint32_t ag = sim_fence_agent(L->cur);

	smem_bounds(L, cta, op, r, n);
	for (i = 0; i < n; i++) {
		check_no_reader(L, cta, op, &r[i], what);
		memset(cta->sh_written + r[i].off, 1, (size_t)r[i].len);
		if (generic && L->o.check_fences) {
			memset(cta->sh_dirty + r[i].off, (int)ag + 1,
			       (size_t)r[i].len);
			cta->dirty_lo[ag] = MIN(cta->dirty_lo[ag], r[i].off);
			cta->dirty_hi[ag] = MAX(cta->dirty_hi[ag],
						r[i].off + r[i].len);
		} else if (L->o.check_fences) {
			/* an async copy's bytes (TMA, cp.async) replace an
			 * unfenced generic write's: nothing is left to fence */
			memset(cta->sh_dirty + r[i].off, 0, (size_t)r[i].len);
		}
		memcpy(cta->smem + r[i].off, src + d, (size_t)r[i].len);
		d += r[i].len;
	}
}

static SimView
alloc_view(SimLaunch *L, Op *op, Type *t)
{
	SimView v = { 0 };
	uint32_t i;

	for (i = 0; i < L->plan.n; i++)
		if (L->plan.v[i].op == op)
			break;
	if (i == L->plan.n)
		sim_fault(L, op, "smem_alloc outside the kernel's plan");
	v.off = L->plan.v[i].off;
	sv_buffer(&v.g, t);
	v.g.ebytes = sim_esize(t->elem);
	return v;
}

static void
check_view_type(SimLaunch *L, Op *op, SimView *v, Type *t)
{
	int d;

	if (t->kind != TY_SMEM || t->rank != v->g.rank ||
	    sim_esize(t->elem) != v->g.ebytes)
		sim_fault(L, op, "malformed IR: %s gives a view of the wrong "
			  "type", op_name(op->kind));
	for (d = 0; d < v->g.rank; d++)
		if (t->shape[d] != v->g.shape[d])
			sim_fault(L, op, "malformed IR: %s gives a view of the "
				  "wrong shape", op_name(op->kind));
}

void
sim_op_smem(SimLaunch *L, SimCta *cta, SimAct *act, Op *op)
{
	Type *t0 = op->nopnds ? sim_ty(act, op->opnds[0]) : NULL;
	SimView v;
	int d;

	if (op->kind != OP_SMEM_ALLOC && (!t0 || t0->kind != TY_SMEM))
		sim_fault(L, op, "malformed IR: %s needs a shared-memory view",
			  op_name(op->kind));
	if (t0)
		v = sim_view_of(act, op->opnds[0]);
	switch (op->kind) {
	case OP_SMEM_ALLOC:
		v = alloc_view(L, op, sim_ty(act, op->res[0]));
		break;
	case OP_SMEM_INDEX: {
		int64_t i = sim_scalar_i(act, op->opnds[1]);

		if (v.g.rank < 2)
			sim_fault(L, op, "malformed IR: smem_index needs rank "
				  ">= 2");
		if (i < 0 || i >= v.g.shape[0])
			sim_fault(L, op, "smem_index: index %lld is outside "
				  "0..%lld", (long long)i,
				  (long long)v.g.shape[0] - 1);
		if (!sv_start_ok(&v.g, 0, i))
			sim_fault(L, op, "smem_index: index %lld is not at a "
				  "strip of its tiled buffer", (long long)i);
		v.off += i * sv_start_bytes(&v.g, 0);
		sv_index(&v.g);
		break;
	}
	case OP_SMEM_SLICE: {
		Type *rt = sim_ty(act, op->res[0]);

		if (op->nopnds != (uint32_t)v.g.rank + 1 || rt->kind != TY_SMEM ||
		    rt->rank != v.g.rank)
			sim_fault(L, op, "malformed IR: smem_slice needs one "
				  "offset per dimension");
		for (d = 0; d < v.g.rank; d++) {
			int64_t o = sim_scalar_i(act, op->opnds[d + 1]);

			if (o < 0 || o + rt->shape[d] > v.g.shape[d])
				sim_fault(L, op, "smem_slice: [%lld, %lld) is "
					  "outside dimension %d of size %lld",
					  (long long)o,
					  (long long)(o + rt->shape[d]), d,
					  (long long)v.g.shape[d]);
			if (!sv_start_ok(&v.g, d, o))
				sim_fault(L, op, "smem_slice: start %lld of "
					  "dimension %d is not at a strip of its "
					  "tiled buffer", (long long)o, d);
			v.off += o * sv_start_bytes(&v.g, d);
		}
		sv_slice(&v.g, rt->shape);
		break;
	}
	case OP_SMEM_TRANS: {
		Attr *perm = attr_find(&op->attrs, "perm");

		if (!perm || perm->kind != ATTR_INTS ||
		    perm->ints.n != (uint32_t)v.g.rank)
			sim_fault(L, op, "malformed IR: smem_trans needs a perm");
		for (d = 0; d < v.g.rank; d++)
			if (perm->ints.v[d] < 0 || perm->ints.v[d] >= v.g.rank)
				sim_fault(L, op, "malformed IR: bad perm");
		sv_trans(&v.g, perm->ints.v, v.g.rank);
		break;
	}
	case OP_SMEM_LOAD: {
		Type *rt = sim_ty(act, op->res[0]);

		if (rt->kind != TY_TILE || ty_numel(rt) != ty_numel(t0) ||
		    rt->elem != t0->elem)
			sim_fault(L, op, "malformed IR: smem_load's result "
				  "does not match the view");
		sim_smem_read(L, cta, op, &v,
			      sim_data(sim_def(L, act, op->res[0]), rt), false,
			      "smem_load");
		return;
	}
	default: {  /* OP_SMEM_STORE */
		Type *vt = sim_ty(act, op->opnds[1]);

		if (ty_numel(vt) != ty_numel(t0) || ty_elem(vt) != t0->elem)
			sim_fault(L, op, "malformed IR: smem_store's value "
				  "does not match the view");
		sim_smem_write(L, cta, op, &v,
			       sim_data(&act->vals[op->opnds[1]], vt), true,
			       "smem_store");
		return;
	}
	}
	check_view_type(L, op, &v, sim_ty(act, op->res[0]));
	sim_def(L, act, op->res[0])->u.view = v;
}
