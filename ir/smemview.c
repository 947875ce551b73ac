/*
 * smemview.c: where the elements of a view of a shared buffer lie -- the
 * view algebra of smem_alloc, smem_index, smem_slice and smem_trans over
 * a buffer's encoding (row-major, swizzled, or tiled: column strips as
 * TMA boxes land and wgmma reads them).  Code generation
 * (codegen/shared.c) turns it into address arithmetic; the simulator
 * (sim/memops.c) places elements with it.
 */

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

int
sv_tma_box(const Type *t, int64_t *box)
{
	int swz = 0, eb = ty_bits(t->elem) / 8 > 1 ? ty_bits(t->elem) / 8 : 1;
	int d;

	for (d = 0; d < t->rank; d++)
		box[d] = t->shape[0] ? t->shape[d] : 0;
	if (t->layout && t->layout->kind == LY_SWIZZLE && t->layout->swz_tiled &&
	    t->rank && t->shape[0]) {
		swz = t->layout->swz_bytes;
		if (box[t->rank - 1] > swz / eb)
			box[t->rank - 1] = swz / eb;
	}
	return swz;
}

const char *
sv_tma_strips(const SmemGeom *g, int64_t align, int swz, int *n, int64_t *step,
	      int64_t *cstep)
{
	int r = g->rank, d;
	int64_t dense = 1;

	if (r < 1 || r > 5)
		return "a TMA copy of rank above 5";
	if (align < 128)
		return "a TMA copy whose shared address is not 128-byte aligned";
	if (swz != g->tw || (!g->tw && g->swz.mask))
		return "a TMA copy whose buffer is not in its descriptor's encoding";
	if (!g->tw) {
		for (d = r - 1; d >= 0; d--) {
			if (g->stride[d] != dense)
				return "a TMA copy of a view whose rows are not "
				       "contiguous";
			dense *= g->shape[d];
		}
		*n = 1;
		*step = *cstep = 0;
		return NULL;
	}
	if (g->tc != r - 1 || g->tr != r - 2 || g->shape[r - 2] != g->trows)
		return "a TMA copy of part of a swizzled buffer's rows";
	*n = (int)(g->shape[r - 1] * g->ebytes / g->tw);
	if (*n < 1 || g->shape[r - 1] * g->ebytes % g->tw)
		return "a TMA copy of part of a swizzled strip";
	if (r > 2 && *n > 1)
		return "a TMA copy of rank 3 or more across swizzled strips";
	*step = g->trows * g->tw;
	*cstep = g->tw / g->ebytes;
	return NULL;
}

const char *
sv_wgmma_problem(const SmemGeom *g, int64_t align, int opnd)
{
	if (g->rank != 2 || !g->tw || g->tr < 0 || g->tc < 0 ||
	    !(g->tc == 0 || g->tc == 1))
		return "an operand not in a tiled swizzle (whose rows are not "
		       "32 or 64 bytes or a multiple of 128)";
	if (align < 8 * g->tw)
		return "an operand view not aligned to its swizzle's 8-row atom";
	if (g->tc != (opnd == 0 ? 1 : 0) && g->ebytes != 2)
		return "an 8-bit operand whose contiguous dim is M or N";
	return NULL;
}

/* An operand whose contiguous dim is K is K-major: atoms of 8 M/N rows
 * of W bytes of K, 8-row groups SBO = 8 W apart (LBO unused).  One whose
 * contiguous dim is M or N is MN-major: atoms of 8 K rows of W bytes of
 * M/N, 8-row groups of K SBO = 8 W apart, the next W bytes of M/N LBO =
 * a strip (rows x W) away. */
void
sv_wgmma_desc(const SmemGeom *g, int opnd, WgDesc *d)
{
	d->swz = g->tw;
	d->mn = g->tc != (opnd == 0 ? 1 : 0);
	d->lbo = d->mn ? g->trows * g->tw : 16;
	d->sbo = 8 * (int64_t)g->tw;
}

uint64_t
sv_wgmma_desc_bits(const WgDesc *d)
{
	uint64_t code = d->swz == 128 ? 1 : d->swz == 64 ? 2 : d->swz == 32 ? 3 : 0;

	return ((uint64_t)((d->lbo >> 4) & 0x3fff) << 16) |
	       ((uint64_t)((d->sbo >> 4) & 0x3fff) << 32) | (code << 62);
}
