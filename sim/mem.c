/*
 * mem.c: the simulated global address space.
 *
 * Allocations live at fake device addresses, far from host pointers
 * (starting at 16 TiB) and separated by guard gaps of at least 1 MiB, so a
 * host pointer, an offset gone astray or a use after free never lands in
 * another allocation.  Addresses are never reused.  Each allocation has a
 * host backing and a shadow of one byte per byte that says whether the
 * byte was ever written (by a copy, a fill or a kernel), so that a kernel
 * reading memory nothing wrote is reported.  A few freed records are kept
 * to explain accesses after a free.
 */
#include <stdlib.h>
#include <string.h>

#include "sim.h"

enum { FREED_KEEP = 256 };
static const uint64_t BASE = 0x100000000000ull;  /* 16 TiB */
static const uint64_t GAP = 1ull << 20;

void
sim_mem_init(SimMem *m, uint64_t limit)
{
	memset(m, 0, sizeof *m);
	m->next = BASE;
	m->limit = limit;
}

static void
free_backing(SimAlloc *a)
{
	free(a->data);
	free(a->shadow);
	free(a->wprog);
	a->data = a->shadow = NULL;
	a->wprog = NULL;
}

void
sim_mem_fini(SimMem *m)
{
	uint32_t i;

	for (i = 0; i < m->n; i++) {
		free_backing(m->v[i]);
		free(m->v[i]);
	}
	free(m->v);
	memset(m, 0, sizeof *m);
}

/* Drops the oldest freed records once too many are kept. */
static void
compact(SimMem *m)
{
	uint32_t i, j, drop;

	if (m->nfreed <= FREED_KEEP)
		return;
	drop = m->nfreed - FREED_KEEP / 2;
	for (i = j = 0; i < m->n; i++) {
		if (drop && m->v[i]->freed) {
			free(m->v[i]);
			drop--;
			m->nfreed--;
			continue;
		}
		m->v[j++] = m->v[i];
	}
	m->n = j;
	m->hint = NULL;
}

int
sim_mem_alloc(SimMem *m, uint64_t size, uint64_t *out)
{
	SimAlloc *a;

	*out = 0;
	if (size == 0 || size > m->limit - m->live || size > (1ull << 40))
		return size == 0 ? SIM_INVALID : SIM_NOMEM;
	if (m->n == m->cap) {
		uint32_t cap = m->cap ? m->cap * 2 : 16;
		SimAlloc **v = tlx_realloc(m->v, cap * sizeof *v);

		if (!v)
			return SIM_NOMEM;
		m->v = v;
		m->cap = cap;
	}
	a = tlx_calloc(1, sizeof *a);
	if (!a)
		return SIM_NOMEM;
	a->data = tlx_malloc(size);
	a->shadow = tlx_calloc(size, 1);
	if (!a->data || !a->shadow) {
		free_backing(a);
		free(a);
		return SIM_NOMEM;
	}
	/* Garbage, as on a GPU: a pattern that shows in results. */
	memset(a->data, 0xA5, size);
	a->base = m->next;
	a->size = size;
	m->next = (a->base + size + GAP + GAP - 1) & ~(GAP - 1);
	m->v[m->n++] = a;
	m->live += size;
	*out = a->base;
	return SIM_OK;
}

/* The record (live or freed) with the greatest base <= addr, or NULL. */
static SimAlloc *
lookup(SimMem *m, uint64_t addr)
{
	uint32_t lo = 0, hi = m->n;

	if (m->hint && addr >= m->hint->base &&
	    addr - m->hint->base < m->hint->size)
		return m->hint;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (m->v[mid]->base <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? m->v[lo - 1] : NULL;
}

SimAlloc *
sim_mem_find(SimMem *m, uint64_t addr, uint64_t n)
{
	SimAlloc *a = lookup(m, addr);

	if (!a || a->freed || addr - a->base >= a->size ||
	    n > a->size - (addr - a->base))
		return NULL;
	m->hint = a;
	return a;
}

int
sim_mem_free(SimMem *m, uint64_t addr)
{
	SimAlloc *a = lookup(m, addr);

	if (!a || a->freed || a->base != addr)
		return SIM_INVALID;
	free_backing(a);
	a->freed = true;
	m->live -= a->size;
	m->nfreed++;
	if (m->hint == a)
		m->hint = NULL;
	compact(m);
	return SIM_OK;
}

int
sim_mem_write(SimMem *m, uint64_t dst, const void *src, uint64_t n)
{
	SimAlloc *a;

	if (n == 0)
		return SIM_OK;
	if (!(a = sim_mem_find(m, dst, n)))
		return SIM_INVALID;
	memcpy(a->data + (dst - a->base), src, n);
	memset(a->shadow + (dst - a->base), 1, n);
	return SIM_OK;
}

int
sim_mem_read(SimMem *m, void *dst, uint64_t src, uint64_t n)
{
	SimAlloc *a;

	if (n == 0)
		return SIM_OK;
	if (!(a = sim_mem_find(m, src, n)))
		return SIM_INVALID;
	memcpy(dst, a->data + (src - a->base), n);
	return SIM_OK;
}

int
sim_mem_copy(SimMem *m, uint64_t dst, uint64_t src, uint64_t n)
{
	SimAlloc *d, *s;

	if (n == 0)
		return SIM_OK;
	if (!(s = sim_mem_find(m, src, n)) || !(d = sim_mem_find(m, dst, n)))
		return SIM_INVALID;
	memmove(d->data + (dst - d->base), s->data + (src - s->base), n);
	memmove(d->shadow + (dst - d->base), s->shadow + (src - s->base), n);
	return SIM_OK;
}

int
sim_mem_fill(SimMem *m, uint64_t dst, int byte, uint64_t n)
{
	SimAlloc *a;

	if (n == 0)
		return SIM_OK;
	if (!(a = sim_mem_find(m, dst, n)))
		return SIM_INVALID;
	memset(a->data + (dst - a->base), byte, n);
	memset(a->shadow + (dst - a->base), 1, n);
	return SIM_OK;
}

void
sim_mem_describe(SimMem *m, uint64_t addr, uint64_t n, Buf *out)
{
	SimAlloc *a = lookup(m, addr), *next = NULL;
	uint32_t i;

	for (i = 0; i < m->n; i++)
		if (m->v[i]->base > addr) {
			next = m->v[i];
			break;
		}
	if (a && addr - a->base < a->size) {
		if (a->freed)
			buf_printf(out, "is inside the %llu-byte allocation at "
				   "0x%llx, which was freed",
				   (unsigned long long)a->size,
				   (unsigned long long)a->base);
		else
			buf_printf(out, "runs %llu bytes past the end of the "
				   "%llu-byte allocation at 0x%llx",
				   (unsigned long long)(addr + n -
							(a->base + a->size)),
				   (unsigned long long)a->size,
				   (unsigned long long)a->base);
		return;
	}
	if (a && addr - (a->base + a->size) < GAP) {
		buf_printf(out, "is %llu bytes past the end of the %llu-byte "
			   "%sallocation at 0x%llx",
			   (unsigned long long)(addr - (a->base + a->size)),
			   (unsigned long long)a->size, a->freed ? "freed " : "",
			   (unsigned long long)a->base);
		return;
	}
	if (next && next->base - addr < GAP) {
		buf_printf(out, "is %llu bytes before the %llu-byte %sallocation "
			   "at 0x%llx",
			   (unsigned long long)(next->base - addr),
			   (unsigned long long)next->size,
			   next->freed ? "freed " : "",
			   (unsigned long long)next->base);
		return;
	}
	buf_puts(out, "is not in any allocation of the device");
	if (addr < BASE)
		buf_puts(out, " (a host pointer or a small integer?)");
}
