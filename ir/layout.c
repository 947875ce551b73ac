/*
 * layout.c: distributed layouts of tiles over the threads of a program
 * (ir.h, "layouts", says what a layout is), their constructors, queries
 * and printed form.
 *
 * Every layout the compiler makes is one of these:
 *   blocked  `vec` contiguous elements per thread along the fastest dim,
 *            then lanes, then warps along the dims from fastest to
 *            slowest, the rest repeated in registers (Triton's blocked);
 *   slice    a reduction result: the parent's bases with the reduced dim
 *            removed (those bases become zeros, i.e. replication);
 *   mma      the mma.sync m16n8 accumulator: each warp owns an
 *            (M/wm)x(N/wn) block of 16x8 tiles, c0..c3 as in the PTX ISA;
 *   wgmma    the wgmma m64nN accumulator: each warp of a warpgroup owns 16
 *            rows of each 64-row tile, and each 16 x 8 block of them is an
 *            mma.sync C fragment;
 * and what shape ops make of them (reshape keeps the flat index, trans
 * permutes its fields): linear layouts.
 */
#include <string.h>

#include "ir.h"

int
log2i(int64_t v)
{
	int n = 0;

	while (((int64_t)1 << n) < v)
		n++;
	return n;
}

int
ly_dim_bits(const Layout *l, int d)
{
	return log2i(l->shape[d]);
}

int
ly_dim_shift(const Layout *l, int d)
{
	int s = 0, i;

	for (i = d + 1; i < l->rank; i++)
		s += log2i(l->shape[i]);
	return s;
}

bool
ly_in_dim(const Layout *l, int d, uint32_t b)
{
	int sh = ly_dim_shift(l, d);

	return b && b >= 1u << sh && b < 1u << (sh + ly_dim_bits(l, d));
}

static int
shape_shift(int rank, const int64_t *shape, int d)
{
	int s = 0, i;

	for (i = d + 1; i < rank; i++)
		s += log2i(shape[i]);
	return s;
}

/* The dim whose field holds flat bit `bit` (a power of two), and the
 * bit's position inside the field. */
static int
dim_of(int rank, const int64_t *shape, uint32_t bit, int *pos)
{
	int b = log2i(bit), d;

	for (d = rank - 1; d >= 0; d--) {
		int w = log2i(shape[d]);

		if (b < w) {
			*pos = b;
			return d;
		}
		b -= w;
	}
	*pos = 0;
	return -1;
}

static uint64_t
ly_hash(const Layout *l)
{
	return hash_bytes(l, offsetof(Layout, next), 0x51ce);
}

void
ly_tab_init(LayoutTab *t, Arena *a, const LayoutTab *base)
{
	memset(t, 0, sizeof *t);
	t->arena = a;
	t->base = base;
}

const Layout *
ly_intern(LayoutTab *t, const Layout *proto)
{
	uint64_t h = ly_hash(proto) & 63;
	const LayoutTab *s;
	Layout *l;

	for (s = t; s; s = s->base)
		for (l = s->buckets[h]; l; l = l->next)
			if (memcmp(l, proto, offsetof(Layout, next)) == 0)
				return l;
	l = arena_dup(t->arena, proto, sizeof *l);
	l->next = t->buckets[h];
	t->buckets[h] = l;
	return l;
}

static void
proto_init(Layout *p, LayoutKind k, int rank, const int64_t *shape)
{
	memset(p, 0, sizeof *p);
	p->kind = (uint8_t)k;
	p->rank = (uint8_t)rank;
	if (rank)
		memcpy(p->shape, shape, (size_t)rank * sizeof *shape);
}

/* Hands out the bits of each dim from the lowest up. */
typedef struct Bits {
	int rank;
	const int64_t *shape;
	int next[TY_MAX_RANK], width[TY_MAX_RANK];
} Bits;

static void
bits_init(Bits *bs, int rank, const int64_t *shape)
{
	int d;

	bs->rank = rank;
	bs->shape = shape;
	for (d = 0; d < rank; d++) {
		bs->next[d] = 0;
		bs->width[d] = log2i(shape[d]);
	}
}

/* The next flat bit of dim d, or 0 when the dim has none left. */
static uint32_t
bits_take(Bits *bs, int d)
{
	if (bs->next[d] >= bs->width[d])
		return 0;
	return 1u << (shape_shift(bs->rank, bs->shape, d) + bs->next[d]++);
}

static uint32_t
bits_take_ordered(Bits *bs, const int *order)
{
	int i;

	for (i = 0; i < bs->rank; i++) {
		uint32_t b = bits_take(bs, order[i]);

		if (b)
			return b;
	}
	return 0;
}

static uint32_t
bits_take_any(Bits *bs)
{
	int d;

	for (d = bs->rank - 1; d >= 0; d--) {
		uint32_t b = bits_take(bs, d);

		if (b)
			return b;
	}
	return 0;
}

/* ly_blocked's bases in p: `vec` elements along order[0], then lanes
 * along `order`, warps along `worder`, the rest in registers; returns
 * the elements of the vector the dim allows. */
static int
blocked_bases(Layout *p, const int *order, int vec, int nwarps,
	      const int *worder)
{
	Bits bs;
	int i, nv = log2i(vec);
	uint32_t b;

	bits_init(&bs, p->rank, p->shape);
	for (i = 0; i < nv && (b = bits_take(&bs, order[0])); i++)
		p->reg[p->nreg++] = b;
	nv = p->nreg;
	for (i = 0; i < LY_LANES; i++)
		p->lane[i] = bits_take_ordered(&bs, order);
	p->nwarp = (uint8_t)log2i(nwarps);
	for (i = 0; i < p->nwarp; i++)
		p->warp[i] = bits_take_ordered(&bs, worder);
	while ((b = bits_take_ordered(&bs, order)) && p->nreg < LY_MAX_REG)
		p->reg[p->nreg++] = b;
	return 1 << nv;
}

const Layout *
ly_blocked(LayoutTab *t, int rank, const int64_t *shape, const int *order,
	   int vec, int nwarps)
{
	Layout p;
	int i, b;

	proto_init(&p, LY_BLOCKED, rank, shape);
	/* the parameters as they take effect: the vector the dim allows, the
	 * dims of size 1 (which take no bits) last */
	p.vec = (uint16_t)blocked_bases(&p, order, vec, nwarps, order);
	for (i = 0, b = 0; i < rank; i++)
		if (shape[order[i]] > 1)
			p.order[b++] = (uint8_t)order[i];
	for (i = 0; i < rank; i++)
		if (shape[order[i]] <= 1)
			p.order[b++] = (uint8_t)order[i];
	return ly_intern(t, &p);
}

const Layout *
ly_blocked_warps(LayoutTab *t, int rank, const int64_t *shape,
		 const int *order, int vec, int nwarps, const int *worder)
{
	const Layout *bl = ly_blocked(t, rank, shape, order, vec, nwarps);
	Layout p;

	proto_init(&p, LY_LINEAR, rank, shape);
	blocked_bases(&p, order, bl->vec, nwarps, worder);
	if (p.nreg == bl->nreg && !memcmp(p.reg, bl->reg, sizeof p.reg) &&
	    !memcmp(p.warp, bl->warp, sizeof p.warp))
		return bl;
	return ly_intern(t, &p);
}

const Layout *
ly_default(LayoutTab *t, int rank, const int64_t *shape, int ebytes, int nwarps)
{
	int order[TY_MAX_RANK], i, vec;

	for (i = 0; i < rank; i++)
		order[i] = rank - 1 - i;
	vec = 16 / (ebytes > 0 && ebytes <= 16 ? ebytes : 4);
	if (vec > shape[rank - 1])
		vec = (int)shape[rank - 1];
	return ly_blocked(t, rank, shape, order, vec, nwarps);
}

/* Flat bit `pos` of dim d of shape, or 0 past the dim's size. */
static uint32_t
dim_bit(const Layout *p, int d, int pos)
{
	if (pos >= ly_dim_bits(p, d))
		return 0;
	return 1u << (ly_dim_shift(p, d) + pos);
}

/* The registers and lanes of an mma or wgmma accumulator p (its mreps
 * and nreps set): registers hold column bit 0, row bit 3, the nreps
 * 8-column blocks, then the mreps row tiles from row bit `mrow` on; the
 * lanes hold column bits 1-2 and row bits 0-2. */
static void
mma_regs_lanes(Layout *p, int mrow)
{
	int nb = log2i(p->nreps), mb = log2i(p->mreps), i;

	p->reg[p->nreg++] = dim_bit(p, 1, 0);
	p->reg[p->nreg++] = dim_bit(p, 0, 3);
	for (i = 0; i < nb; i++)
		p->reg[p->nreg++] = dim_bit(p, 1, 3 + i);
	for (i = 0; i < mb; i++)
		p->reg[p->nreg++] = dim_bit(p, 0, mrow + i);
	p->lane[0] = dim_bit(p, 1, 1);
	p->lane[1] = dim_bit(p, 1, 2);
	p->lane[2] = dim_bit(p, 0, 0);
	p->lane[3] = dim_bit(p, 0, 1);
	p->lane[4] = dim_bit(p, 0, 2);
}

const Layout *
ly_mma(LayoutTab *t, const int64_t *shape, int nwarps)
{
	Layout p;
	int64_t M = shape[0], N = shape[1];
	int wm = 1, wn = 1, i, nb, mb, row, col;

	proto_init(&p, LY_MMA, 2, shape);
	while (wm * wn < nwarps) {
		bool can_m = M / (wm * 2) >= 16, can_n = N / (wn * 2) >= 8;

		if (can_m && (!can_n || M / wm >= N / wn))
			wm *= 2;
		else if (can_n)
			wn *= 2;
		else
			break;
	}
	p.wm = (uint8_t)wm;
	p.wn = (uint8_t)wn;
	p.mreps = (int)MAX(1, M / wm / 16);
	p.nreps = (int)MAX(1, N / wn / 8);
	nb = log2i(p.nreps);
	mb = log2i(p.mreps);
	/* c0..c3: (g, 2q), (g, 2q+1), (g+8, 2q), (g+8, 2q+1); then the
	 * 8-column blocks, then the 16-row tiles */
	mma_regs_lanes(&p, 4);
	p.nwarp = (uint8_t)log2i(nwarps);
	col = 3 + nb;
	row = 4 + mb;
	for (i = 0; i < p.nwarp; i++) {
		if (i < log2i(wn))
			p.warp[i] = dim_bit(&p, 1, col++);
		else if (i < log2i(wn) + log2i(wm))
			p.warp[i] = dim_bit(&p, 0, row++);
	}
	return ly_intern(t, &p);
}

bool
ly_wgmma_split(int64_t M, int64_t N, int nwarps, int *gm, int *gn)
{
	int groups = MAX(1, nwarps / 4);

	*gm = *gn = 1;
	while (*gm * *gn < groups) {
		if (M / (*gm * 2) >= 64)
			*gm *= 2;
		else if (N / (*gn * 2) >= 8)
			*gn *= 2;
		else
			return false;
	}
	return true;
}

const Layout *
ly_wgmma(LayoutTab *t, const int64_t *shape, int nwarps)
{
	Layout p;
	int64_t M = shape[0], N = shape[1];
	int gm, gn, i, nb, mb, row, col;

	proto_init(&p, LY_WGMMA, 2, shape);
	ly_wgmma_split(M, N, nwarps, &gm, &gn);
	p.wm = (uint8_t)gm;
	p.wn = (uint8_t)gn;
	p.mreps = (int)MAX(1, M / gm / 64);
	p.nreps = (int)MAX(1, N / gn / 8);
	nb = log2i(p.nreps);
	mb = log2i(p.mreps);
	/* d[i]: column bit 0, row bit 3, then the 8-column blocks; then
	 * further 64-row tiles */
	mma_regs_lanes(&p, 6);
	p.nwarp = (uint8_t)log2i(nwarps);
	/* the warps of a warpgroup: 16 rows each; then warpgroups along m
	 * (above the rows its own tiles cover), then n */
	row = 6 + mb;
	col = 3 + nb;
	for (i = 0; i < p.nwarp; i++) {
		if (i < 2)
			p.warp[i] = dim_bit(&p, 0, 4 + i);
		else if (i - 2 < log2i(gm))
			p.warp[i] = dim_bit(&p, 0, row++);
		else if (i - 2 - log2i(gm) < log2i(gn))
			p.warp[i] = dim_bit(&p, 1, col++);
	}
	return ly_intern(t, &p);
}

const Layout *
ly_wgmma_a(LayoutTab *t, const int64_t *shape, const Layout *acc)
{
	Layout p;
	const Layout *l;
	int i, nw, gm;

	if (!acc || acc->kind != LY_WGMMA || shape[0] != acc->shape[0] ||
	    shape[1] % 16)
		return NULL;
	nw = ly_nwarps(acc);
	if (acc->wn == 1)  /* the same split: the accumulator of A's shape */
		return ly_wgmma(t, shape, nw);
	/* warpgroups along n: A's warpgroups split M as the accumulator's do
	 * and repeat over n (zero bases) */
	gm = acc->wm;
	l = ly_wgmma(t, shape, 4 * gm);
	p = *l;
	p.next = NULL;
	p.kind = LY_LINEAR;
	p.wm = p.wn = 0;
	p.mreps = p.nreps = 0;
	p.nwarp = (uint8_t)log2i(nw);
	for (i = l->nwarp; i < p.nwarp; i++)
		p.warp[i] = 0;
	return ly_intern(t, &p);
}

int
ly_wgmma_a_reg(const Layout *a, int64_t mt, int64_t s, int i)
{
	int64_t K = a->shape[1];
	int64_t row = mt * 64 + 8 * ((i >> 1) & 1);
	int64_t col = 16 * s + (i & 1) + 8 * (i >> 2);
	uint32_t want = (uint32_t)(row * K + col), r, n = (uint32_t)ly_nregs(a);

	for (r = 0; r < n; r++)
		if (ly_reg_flat(a, r) == want)
			return (int)r;
	return -1;
}

const Layout *
ly_swizzle(LayoutTab *t, int bytes, int shift)
{
	Layout p;

	proto_init(&p, LY_SWIZZLE, 0, NULL);
	p.swz_bytes = (uint16_t)bytes;
	p.swz_shift = (uint8_t)shift;
	return ly_intern(t, &p);
}

const Layout *
ly_swizzle_tiled(LayoutTab *t, int bytes)
{
	Layout p;

	proto_init(&p, LY_SWIZZLE, 0, NULL);
	p.swz_bytes = (uint16_t)bytes;
	p.swz_shift = 7;
	p.swz_tiled = 1;
	return ly_intern(t, &p);
}

const Layout *
ly_swizzle_for(LayoutTab *t, int64_t rowbytes)
{
	if (rowbytes < 32 || (rowbytes & (rowbytes - 1)))
		return NULL;
	return ly_swizzle(t, (int)MIN(rowbytes, 128), log2i(MAX(rowbytes, 128)));
}

/* Maps one basis of layout shape `from` to shape `to` (same rank): keeps
 * the (dim, pos) of the bit; dims listed in `drop` give 0. */
static uint32_t
remap(uint32_t b, int rank, const int64_t *from, int trank,
      const int64_t *to, const int *dmap)
{
	int pos, d, td;

	if (!b)
		return 0;
	d = dim_of(rank, from, b, &pos);
	if (d < 0 || (td = dmap[d]) < 0 || pos >= log2i(to[td]))
		return 0;
	return 1u << (shape_shift(trank, to, td) + pos);
}

static void
remap_all(Layout *p, const Layout *l, const int *dmap)
{
	int i;

	for (i = 0; i < LY_MAX_REG; i++)
		p->reg[i] = remap(l->reg[i], l->rank, l->shape, p->rank,
				  p->shape, dmap);
	for (i = 0; i < LY_LANES; i++)
		p->lane[i] = remap(l->lane[i], l->rank, l->shape, p->rank,
				   p->shape, dmap);
	for (i = 0; i < LY_MAX_WARP; i++)
		p->warp[i] = remap(l->warp[i], l->rank, l->shape, p->rank,
				   p->shape, dmap);
	p->nreg = l->nreg;
	p->nwarp = l->nwarp;
}

const Layout *
ly_slice(LayoutTab *t, const Layout *l, int dim)
{
	int64_t shape[TY_MAX_RANK];
	int dmap[TY_MAX_RANK], i, n = 0;
	Layout p;

	for (i = 0; i < l->rank; i++) {
		dmap[i] = i == dim ? -1 : n;
		if (i != dim)
			shape[n++] = l->shape[i];
	}
	proto_init(&p, LY_SLICE, n, shape);
	remap_all(&p, l, dmap);
	p.parent = l;
	p.slice_dim = (uint8_t)dim;
	return ly_intern(t, &p);
}

const Layout *
ly_reshape(LayoutTab *t, const Layout *l, int rank, const int64_t *shape)
{
	Layout p;
	int i, d, extra = -1;

	if (rank == l->rank &&
	    !memcmp(shape, l->shape, (size_t)rank * sizeof *shape))
		return l;
	proto_init(&p, LY_LINEAR, rank, shape);
	memcpy(p.reg, l->reg, sizeof p.reg);
	memcpy(p.lane, l->lane, sizeof p.lane);
	memcpy(p.warp, l->warp, sizeof p.warp);
	p.nreg = l->nreg;
	p.nwarp = l->nwarp;
	/* expand_dims of a slice at the reduced dim remembers the parent, so
	 * that broadcasting back to the parent's shape is free. */
	if (l->kind == LY_SLICE && rank == l->rank + 1) {
		for (i = 0, d = 0; i < rank; i++) {
			if (d < l->rank && shape[i] == l->shape[d])
				d++;
			else if (shape[i] == 1 && extra < 0)
				extra = i;
		}
		if (d == l->rank && extra == l->slice_dim) {
			/* a parent whose sliced dim has size 1 lost nothing to
			 * the slice: it is the expansion itself (one layout,
			 * not a chain of parents, for a loop that reduces and
			 * expands a carried value) */
			if (!memcmp(shape, l->parent->shape,
				    (size_t)rank * sizeof *shape))
				return l->parent;
			p.parent = l->parent;
			p.slice_dim = (uint8_t)extra;
		}
	}
	return ly_intern(t, &p);
}

const Layout *
ly_trans(LayoutTab *t, const Layout *l, const int64_t *perm)
{
	int64_t shape[TY_MAX_RANK];
	int dmap[TY_MAX_RANK], i;
	Layout p;

	for (i = 0; i < l->rank; i++) {
		shape[i] = l->shape[perm[i]];
		dmap[perm[i]] = i;
	}
	proto_init(&p, LY_LINEAR, l->rank, shape);
	remap_all(&p, l, dmap);
	return ly_intern(t, &p);
}

const Layout *
ly_project(LayoutTab *t, const Layout *l, int rank, const int64_t *shape)
{
	int dmap[TY_MAX_RANK], i;
	Layout p;

	for (i = 0; i < rank; i++)
		dmap[i] = shape[i] == l->shape[i] ? i : -1;
	proto_init(&p, LY_LINEAR, rank, shape);
	remap_all(&p, l, dmap);
	return ly_intern(t, &p);
}

const Layout *
ly_broadcast(LayoutTab *t, const Layout *l, int rank, const int64_t *shape)
{
	int dmap[TY_MAX_RANK] = { 0, 1, 2, 3 }, i, d;
	Bits bs;
	Layout p;
	uint32_t b;

	if (l->parent && l->parent->rank == rank &&
	    !memcmp(l->parent->shape, shape, (size_t)rank * sizeof *shape))
		return l->parent;
	proto_init(&p, LY_LINEAR, rank, shape);
	remap_all(&p, l, dmap);
	/* the broadcast dims' bits: reuse replicated lanes, warps and
	 * registers (free), then add registers */
	bits_init(&bs, rank, shape);
	for (d = 0; d < rank; d++)
		if (l->shape[d] != 1)
			bs.next[d] = bs.width[d];
	for (i = 0; i < LY_LANES; i++)
		if (!p.lane[i] && (b = bits_take_any(&bs)))
			p.lane[i] = b;
	for (i = 0; i < p.nwarp; i++)
		if (!p.warp[i] && (b = bits_take_any(&bs)))
			p.warp[i] = b;
	for (i = 0; i < p.nreg; i++)
		if (!p.reg[i] && (b = bits_take_any(&bs)))
			p.reg[i] = b;
	while (p.nreg < LY_MAX_REG && (b = bits_take_any(&bs)))
		p.reg[p.nreg++] = b;
	return ly_intern(t, &p);
}

uint32_t
ly_dup_mask(const Layout *l)
{
	uint32_t m = 0;
	int i;

	for (i = 0; i < l->nreg; i++)
		if (!l->reg[i])
			m |= 1u << i;
	return m;
}

uint32_t
ly_lane_dup(const Layout *l)
{
	uint32_t m = 0;
	int i;

	for (i = 0; i < LY_LANES; i++)
		if (!l->lane[i])
			m |= 1u << i;
	return m;
}

uint32_t
ly_warp_dup(const Layout *l)
{
	uint32_t m = 0;
	int i;

	for (i = 0; i < l->nwarp; i++)
		if (!l->warp[i])
			m |= 1u << i;
	return m;
}

uint32_t
ly_reg_flat(const Layout *l, uint32_t r)
{
	uint32_t f = 0;
	int i;

	for (i = 0; i < l->nreg; i++)
		if (r & (1u << i))
			f |= l->reg[i];
	return f;
}

int
ly_contig_regs(const Layout *l)
{
	int k = 0;

	while (k < l->nreg && l->rank > 0 &&
	       k < ly_dim_bits(l, l->rank - 1) && l->reg[k] == 1u << k)
		k++;
	return 1 << k;
}

uint32_t
ly_flat(const Layout *l, uint32_t r, uint32_t lane, uint32_t warp)
{
	uint32_t f = ly_reg_flat(l, r);
	int i;

	for (i = 0; i < LY_LANES; i++)
		if (lane & (1u << i))
			f ^= l->lane[i];
	for (i = 0; i < l->nwarp; i++)
		if (warp & (1u << i))
			f ^= l->warp[i];
	return f;
}

const char *
ly_check(const Layout *l)
{
	uint32_t seen = 0, all = 0, b;
	int i, n = LY_MAX_REG + LY_LANES + LY_MAX_WARP, bits = 0;

	for (i = 0; i < l->rank; i++) {
		if (!is_pow2(l->shape[i]))
			return "a dim of a layout is not a power of two";
		bits += log2i(l->shape[i]);
	}
	if (bits > 31)
		return "a layout's tile has more than 2^31 elements";
	all = bits ? (uint32_t)((1ull << bits) - 1) : 0;
	for (i = 0; i < n; i++) {
		if (i < LY_MAX_REG)
			b = i < l->nreg ? l->reg[i] : 0;
		else if (i < LY_MAX_REG + LY_LANES)
			b = l->lane[i - LY_MAX_REG];
		else
			b = i - LY_MAX_REG - LY_LANES < l->nwarp
				    ? l->warp[i - LY_MAX_REG - LY_LANES] : 0;
		if (!b)
			continue;
		if (b & (b - 1))
			return "a basis of a distributed layout is not a single bit";
		if (b & ~all)
			return "a basis lies outside the tile";
		if (b & seen)
			return "two bases of a layout are the same bit";
		seen |= b;
	}
	if (seen != all)
		return "a layout leaves elements of its tile to no thread";
	return NULL;
}

const char *
ly_kind_name(int kind)
{
	static const char *const names[LY_KIND_COUNT] = {
		"blocked", "slice", "mma", "wgmma", "linear", "swizzle",
	};

	return kind >= 0 && kind < LY_KIND_COUNT ? names[kind] : "?";
}

static void
print_ints(Buf *b, const int64_t *v, int n)
{
	int i;

	buf_putc(b, '[');
	for (i = 0; i < n; i++)
		buf_printf(b, "%s%lld", i ? ", " : "", (long long)v[i]);
	buf_putc(b, ']');
}

/* A basis as the coordinates of its flat index: [row, col]. */
static void
print_basis(Buf *b, const Layout *l, uint32_t f)
{
	int64_t c[TY_MAX_RANK];
	int d;

	for (d = 0; d < l->rank; d++)
		c[d] = (f >> ly_dim_shift(l, d)) & ((1u << ly_dim_bits(l, d)) - 1);
	print_ints(b, c, l->rank);
}

static void
print_bases(Buf *b, const Layout *l, const char *name, const uint32_t *v,
	    int n)
{
	int i;

	buf_printf(b, ", %s = [", name);
	for (i = 0; i < n; i++) {
		if (i)
			buf_puts(b, ", ");
		print_basis(b, l, v[i]);
	}
	buf_putc(b, ']');
}

static void
print_ref(Buf *b, const Layout *l, LayoutNamer name, void *ud)
{
	const char *s = name ? name(ud, l) : NULL;

	if (s)
		buf_printf(b, "#%s", s);
	else
		ly_print(b, l, name, ud);
}

void
ly_print(Buf *b, const Layout *l, LayoutNamer name, void *ud)
{
	int64_t v[TY_MAX_RANK];
	int i;

	buf_printf(b, "%s<", ly_kind_name(l->kind));
	switch (l->kind) {
	case LY_SWIZZLE:
		buf_printf(b, "%d", l->swz_bytes);
		if (l->swz_tiled)
			buf_puts(b, ", tiled");
		else if (l->swz_shift != 7)
			buf_printf(b, ", shift = %d", l->swz_shift);
		buf_putc(b, '>');
		return;
	case LY_SLICE:
		print_ref(b, l->parent, name, ud);
		buf_printf(b, ", dim = %d>", l->slice_dim);
		return;
	case LY_BLOCKED:
		print_ints(b, l->shape, l->rank);
		for (i = 0; i < l->rank; i++)
			v[i] = l->order[i];
		buf_printf(b, ", vec = %d, order = ", l->vec);
		print_ints(b, v, l->rank);
		buf_printf(b, ", warps = %d>", ly_nwarps(l));
		return;
	case LY_MMA: case LY_WGMMA:
		print_ints(b, l->shape, l->rank);
		buf_printf(b, ", warps = %d>", ly_nwarps(l));
		return;
	default:
		print_ints(b, l->shape, l->rank);
		print_bases(b, l, "reg", l->reg, l->nreg);
		print_bases(b, l, "lane", l->lane, LY_LANES);
		print_bases(b, l, "warp", l->warp, l->nwarp);
		if (l->parent) {
			buf_puts(b, ", parent = ");
			print_ref(b, l->parent, name, ud);
			buf_printf(b, ", dim = %d", l->slice_dim);
		}
		buf_putc(b, '>');
		return;
	}
}

/* ---- layouts of ops ---------------------------------------------------------- */

static int64_t
inverse_perm(const Attr *p, int64_t *inv)
{
	uint32_t i;

	for (i = 0; p && i < p->ints.n && i < TY_MAX_RANK; i++)
		inv[p->ints.v[i]] = (int64_t)i;
	return p ? (int64_t)p->ints.n : 0;
}

const Layout *
ly_shape_operand(LayoutTab *t, Func *f, Op *op, const Layout *res)
{
	Type *at = ir_type(f, op->opnds[0]);
	int64_t inv[TY_MAX_RANK];

	switch (op->kind) {
	case OP_BROADCAST:
		return ly_project(t, res, at->rank, at->shape);
	case OP_TRANS:
		if (inverse_perm(attr_find(&op->attrs, "perm"), inv) == res->rank)
			return ly_trans(t, res, inv);
		return res;
	default:
		return ly_reshape(t, res, at->rank, at->shape);
	}
}

bool
ly_dot_is_mma(const Target *t, Func *f, Op *op, bool *trans_b)
{
	Type *a = ir_type(f, op->opnds[0]), *c = ir_type(f, op->opnds[2]);
	Type *ae = ty_elem(a), *ce = ty_elem(c);
	int64_t M = a->shape[0], K = a->shape[1], N = c->shape[1];
	int eb = MAX(1, ty_bits(ae) / 8);
	bool mma = false;

	switch (ae->kind) {
	case TY_BF16: case TY_F16:
		mma = ce->kind == TY_F32 && target_has(t, TF_MMA);
		break;
	case TY_F8E4M3: case TY_F8E5M2:
		mma = ce->kind == TY_F32 && target_has(t, TF_MMA_FP8);
		break;
	case TY_I8:
		mma = ce->kind == TY_I32 && target_has(t, TF_MMA_I8);
		break;
	default:
		break;
	}
	if (M % 16 || N % 8 || K % (eb == 1 ? 32 : 16))
		mma = false;
	*trans_b = mma && eb == 1;
	return mma;
}

const Layout *
ly_dot(LayoutTab *t, const Target *tg, Func *f, Op *op, int nwarps)
{
	Type *c = ir_type(f, op->res[0]);
	bool trans_b;

	if (ly_dot_is_mma(tg, f, op, &trans_b))
		return ly_mma(t, c->shape, nwarps);
	return ly_default(t, 2, c->shape, MAX(1, ty_bits(c->elem) / 8), nwarps);
}

int
ly_mem_vec(Func *f, Value ptr, const Layout *ly, const Axis *ax)
{
	Type *pt = ty_elem(ir_type(f, ptr));
	int64_t es = MAX(1, ty_bytes(pt->elem)), best = 1;
	const Axis *a = &ax[ptr];
	int d;

	for (d = 0; d < ly->rank; d++) {
		int sh = ly_dim_shift(ly, d), k = 0;
		int64_t v;

		while (k < ly->nreg && k < ly_dim_bits(ly, d) &&
		       ly->reg[k] == 1u << (sh + k))
			k++;
		v = (int64_t)1 << k;
		v = MIN(v, a->contig[d]);
		v = MIN(v, 16 / es);
		v = MIN(v, a->div >= es ? a->div / es : 1);
		best = MAX(best, v);
	}
	return (int)MAX(1, best);
}

/* ---- the shared-memory copy of a tile ------------------------------------------ */

int64_t
ly_copy_row_bytes(const Layout *l, int eb)
{
	int64_t rb = l->shape[l->rank - 1] * eb;

	return l->rank >= 2 && rb >= 64 ? rb + 16 : rb;
}

int64_t
ly_copy_bytes(const Layout *l, int eb)
{
	int64_t rows = 1;

	for (int d = 0; d + 1 < l->rank; d++)
		rows *= l->shape[d];
	return rows * ly_copy_row_bytes(l, eb);
}

int64_t
ly_copy_offset(const Layout *l, uint32_t flat, int eb)
{
	int lb = ly_dim_bits(l, l->rank - 1);

	return (int64_t)(flat >> lb) * ly_copy_row_bytes(l, eb) +
	       (int64_t)(flat & ((1u << lb) - 1)) * eb;
}

bool
ly_same_threads(const Layout *a, const Layout *b)
{
	uint32_t i, j;

	if (a->rank != b->rank || a->nwarp != b->nwarp ||
	    memcmp(a->shape, b->shape, sizeof a->shape) ||
	    memcmp(a->lane, b->lane, sizeof a->lane) ||
	    memcmp(a->warp, b->warp, sizeof a->warp))
		return false;
	for (i = 0; i < b->nreg; i++) {
		if (!b->reg[i])
			continue;
		for (j = 0; j < a->nreg && a->reg[j] != b->reg[i]; j++)
			;
		if (j == a->nreg)
			return false;
	}
	return true;
}

int64_t
ly_convert_bytes(const Layout *from, const Layout *to, int eb)
{
	if (from == to || ly_same_threads(from, to))
		return 0;
	return ly_copy_bytes(to, eb);
}

/* ---- aligned slices (extract_slice) ------------------------------------ */

/* Flat bit b of a tile of shape `from` seen in one of shape `to` (same
 * rank, each dim no smaller): the same (dim, position). */
static uint32_t
lift(uint32_t b, int rank, const int64_t *from, const int64_t *to)
{
	int dmap[TY_MAX_RANK] = { 0, 1, 2, 3 };

	return remap(b, rank, from, rank, to, dmap);
}

bool
ly_extract_fits(const Layout *src, const Layout *res)
{
	int i, j, d;

	if (src->rank != res->rank || src->nwarp != res->nwarp)
		return false;
	for (d = 0; d < src->rank; d++)
		if (res->shape[d] > src->shape[d])
			return false;
	for (i = 0; i < LY_LANES + LY_MAX_WARP; i++) {
		uint32_t s = i < LY_LANES ? src->lane[i] : src->warp[i - LY_LANES];
		uint32_t r = i < LY_LANES ? res->lane[i] : res->warp[i - LY_LANES];

		/* a thread's part of the slice: lanes and warps on the
		 * slice's own bits only, as the result has them */
		if (lift(r, src->rank, res->shape, src->shape) != s)
			return false;
	}
	for (i = 0; i < res->nreg; i++) {
		uint32_t b = lift(res->reg[i], res->rank, res->shape, src->shape);

		if (!res->reg[i])
			continue;
		for (j = 0; j < src->nreg && src->reg[j] != b; j++)
			;
		if (j == src->nreg)
			return false;
	}
	return true;
}

const Layout *
ly_extract(LayoutTab *t, const Layout *l, const int64_t *shape)
{
	int dmap[TY_MAX_RANK] = { 0, 1, 2, 3 }, i;
	Layout p;

	proto_init(&p, LY_LINEAR, l->rank, shape);
	remap_all(&p, l, dmap);
	p.nreg = 0;
	for (i = 0; i < l->nreg; i++) {
		uint32_t b = remap(l->reg[i], l->rank, l->shape, p.rank, shape,
				   dmap);

		if (b || !l->reg[i])  /* registers above the slice: dropped */
			p.reg[p.nreg++] = b;
	}
	for (i = p.nreg; i < LY_MAX_REG; i++)
		p.reg[i] = 0;
	if (!ly_extract_fits(l, &p))
		return NULL;
	return ly_intern(t, &p);
}

const Layout *
ly_extract_operand(LayoutTab *t, const Layout *l, int rank, const int64_t *shape)
{
	Layout p;
	int i, d;

	if (rank != l->rank)
		return NULL;
	proto_init(&p, LY_LINEAR, rank, shape);
	for (i = 0; i < LY_LANES; i++)
		p.lane[i] = lift(l->lane[i], rank, l->shape, shape);
	for (i = 0; i < l->nwarp; i++)
		p.warp[i] = lift(l->warp[i], rank, l->shape, shape);
	p.nwarp = l->nwarp;
	for (i = 0; i < l->nreg; i++)
		p.reg[i] = lift(l->reg[i], rank, l->shape, shape);
	p.nreg = l->nreg;
	for (d = rank - 1; d >= 0; d--)
		for (i = ly_dim_bits(l, d); i < log2i(shape[d]); i++) {
			if (p.nreg == LY_MAX_REG)
				return NULL;
			p.reg[p.nreg++] = dim_bit(&p, d, i);
		}
	return ly_intern(t, &p);
}

int64_t
ly_extract_reg(const Layout *src, const Layout *res, const int64_t *offs,
	       uint32_t r)
{
	uint32_t want, off = 0, j = 0;
	int d, i;

	for (d = 0; d < src->rank; d++)
		off |= (uint32_t)offs[d] << ly_dim_shift(src, d);
	want = off;
	for (i = 0; i < res->nreg; i++)
		if (r & (1u << i))
			want |= lift(res->reg[i], res->rank, res->shape, src->shape);
	for (i = 0; i < src->nreg; i++)
		if (src->reg[i] && (want & src->reg[i])) {
			j |= 1u << i;
			want &= ~src->reg[i];
		}
	return want ? -1 : (int64_t)j;
}
