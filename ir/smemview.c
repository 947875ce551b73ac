/*
 * smemview.c: where the elements of a view of a shared buffer lie -- the
 * view algebra of smem_alloc, smem_index, smem_slice and smem_trans over
 * a buffer's encoding (row-major, swizzled, or tiled: column strips as
 * TMA boxes land and wgmma reads them).  Code generation
 * (codegen/shared.c) turns it into address arithmetic; the simulator
 * (sim/memops.c) places elements with it.
 */
#include "config.h"

#include "ir/ir.h"

Swizzle
sv_swizzle_of(const Layout *enc)
{
	Swizzle s = { 0, 0 };

	if (enc && enc->kind == LY_SWIZZLE) {
		s.shift = enc->swz_shift;
		s.mask = enc->swz_bytes / 16 - 1;
	}
	return s;
}

int64_t
sv_swizzle(Swizzle s, int64_t addr)
{
	return addr ^ (((addr >> s.shift) & s.mask) << 4);
}

void
sv_buffer(SmemGeom *g, Type *t)
{
	int d;

	memset(g, 0, sizeof *g);
	g->rank = t->rank;
	g->ebytes = ty_bits(t->elem) / 8 > 1 ? ty_bits(t->elem) / 8 : 1;
	for (d = t->rank - 1; d >= 0; d--) {
		g->shape[d] = t->shape[d];
		g->stride[d] = d == t->rank - 1 ? 1 : g->stride[d + 1] * g->shape[d + 1];
	}
	/* the encoding plan-smem gave it: 16-byte chunks permuted by address
	 * (free for vector accesses, conflict-free for ldmatrix) */
	g->swz = sv_swizzle_of(t->layout);
	g->tr = g->tc = -1;
	if (t->layout && t->layout->kind == LY_SWIZZLE && t->layout->swz_tiled &&
	    t->rank >= 2) {
		g->tw = t->layout->swz_bytes;
		g->tc = t->rank - 1;
		g->tr = t->rank - 2;
		g->trows = t->shape[t->rank - 2];
	}
}

int64_t
sv_dim_bytes(const SmemGeom *g, int d, int64_t c)
{
	int64_t b = c * g->ebytes;

	if (g->tw && d == g->tc)
		return b % g->tw + b / g->tw * g->trows * g->tw;
	if (g->tw && d == g->tr)
		return c * g->tw;
	return c * g->stride[d] * g->ebytes;
}

int64_t
sv_start_bytes(const SmemGeom *g, int d)
{
	if (g->tw && d == g->tc)
		return (int64_t)g->ebytes * g->trows;
	return sv_dim_bytes(g, d, 1);
}

bool
sv_start_ok(const SmemGeom *g, int d, int64_t div)
{
	if (!g->tw || d != g->tc)
		return true;
	return (div * g->ebytes) % g->tw == 0;
}

void
sv_index(SmemGeom *g)
{
	int d;

	for (d = 0; d + 1 < g->rank; d++) {
		g->shape[d] = g->shape[d + 1];
		g->stride[d] = g->stride[d + 1];
	}
	g->rank--;
	g->tr--;
	g->tc--;
}

void
sv_slice(SmemGeom *g, const int64_t *shape)
{
	int d;

	for (d = 0; d < g->rank; d++)
		g->shape[d] = shape[d];
}

void
sv_trans(SmemGeom *g, const int64_t *perm, int n)
{
	SmemGeom s = *g;
	int d;

	for (d = 0; d < s.rank && d < n; d++) {
		if (perm[d] < 0 || perm[d] >= s.rank)
			continue;
		g->shape[d] = s.shape[perm[d]];
		g->stride[d] = s.stride[perm[d]];
		if (perm[d] == s.tr)
			g->tr = d;
		if (perm[d] == s.tc)
			g->tc = d;
	}
}
