/*
 * layout_test: distributed layouts against the formulas of
 * ../shared/reference/tensor-core-layouts.md, element by element: the
 * mma.sync m16n8 accumulator (1.1) and the wgmma m64nN accumulator (3.2),
 * for several shapes and warp counts; every element has exactly one
 * holder (no replication in these), and ly_check accepts them.  And the
 * register A operand of wgmma (3.3): the register ly_wgmma_a_reg picks
 * for each element of each k16 step's fragment holds the element the
 * hardware reads there, in every warpgroup.
 */
#include "ir/ir.h"
#include "testsuite/unit/test.h"

/* (row, col) of register r of lane l of warp w. */
typedef void (*Want)(int64_t M, int64_t N, int nwarps, const Layout *l,
		     uint32_t r, uint32_t lane, uint32_t w, int64_t *row,
		     int64_t *col);

static void
want_wgmma(int64_t M, int64_t N, int nwarps, const Layout *l, uint32_t r,
	   uint32_t lane, uint32_t w, int64_t *row, int64_t *col)
{
	int64_t gm = l->wm, gn = l->wn, np = N / gn, regs = np / 2;
	int64_t gi = w / 4, gmi = gi % gm, gni = gi / gm, i = r % regs;
	int64_t mt = r / regs, g = lane >> 2, q = lane & 3;

	(void)nwarps;
	*row = gmi * (M / gm) + 64 * mt + 16 * (w % 4) + g + 8 * ((i >> 1) & 1);
	*col = gni * np + 8 * (i >> 2) + 2 * q + (i & 1);
}

/* mma.sync: warps along m (wm) and n (wn), each a block of 16 x 8 tiles;
 * in a tile c0..c3 at (g, 2q), (g, 2q+1), (g+8, 2q), (g+8, 2q+1); the
 * registers: c index, then n tiles, then m tiles. */
static void
want_mma(int64_t M, int64_t N, int nwarps, const Layout *l, uint32_t r,
	 uint32_t lane, uint32_t w, int64_t *row, int64_t *col)
{
	int64_t wm = l->wm, wn = l->wn, g = lane >> 2, q = lane & 3;
	int64_t c = r & 3, nt = (r >> 2) % l->nreps, mt = (r >> 2) / l->nreps;
	int64_t wi = w % wn, wj = w / wn;

	(void)nwarps;
	*row = wj * (M / wm) + 16 * mt + g + 8 * (c >> 1);
	*col = wi * (N / wn) + 8 * nt + 2 * q + (c & 1);
}

static void
check(LayoutTab *t, int64_t M, int64_t N, int nwarps, bool wg)
{
	int64_t shape[2] = { M, N };
	const Layout *l = wg ? ly_wgmma(t, shape, nwarps) : ly_mma(t, shape, nwarps);
	Want want = wg ? want_wgmma : want_mma;
	uint8_t *seen = calloc((size_t)(M * N), 1);
	uint32_t r, lane, w;
	int bad = 0;

	CHECK(ly_check(l) == NULL);
	ASSERT(M * N, (int64_t)ly_nregs(l) * 32 * nwarps);
	for (w = 0; w < (uint32_t)nwarps; w++)
		for (lane = 0; lane < 32; lane++)
			for (r = 0; r < (uint32_t)ly_nregs(l); r++) {
				uint32_t f = ly_flat(l, r, lane, w);
				int64_t row, col;

				want(M, N, nwarps, l, r, lane, w, &row, &col);
				if (f != (uint32_t)(row * N + col) && bad++ < 5)
					fprintf(stderr, "%s %lldx%lld/%d: warp %u lane %u reg %u "
						"holds (%u, %u), want (%lld, %lld)\n",
						wg ? "wgmma" : "mma", (long long)M,
						(long long)N, nwarps, w, lane, r,
						f / (uint32_t)N, f % (uint32_t)N,
						(long long)row, (long long)col);
				if (f < M * N)
					seen[f]++;
			}
	for (r = 0; r < M * N; r++)
		if (seen[r] != 1 && bad++ < 5)
			fprintf(stderr, "element %u held %d times\n", r, seen[r]);
	ASSERT(0, bad);
	free(seen);
}

/* The RS A operand of an M x K tile into the accumulator of M x N over
 * nwarps: a[i] of step s of the warpgroup's 64-row tile mt is row
 * 16 (w % 4) + g + 8 ((i >> 1) & 1), k 2q + (i & 1) + 8 (i >> 2) of that
 * step (tensor-core-layouts.md 3.3); warpgroups along n hold copies. */
static void
check_a(LayoutTab *t, int64_t M, int64_t N, int64_t K, int nwarps)
{
	int64_t cs[2] = { M, N }, as[2] = { M, K };
	const Layout *acc = ly_wgmma(t, cs, nwarps);
	const Layout *a = ly_wgmma_a(t, as, acc);
	int64_t gm = acc->wm, mreps = M / gm / 64, mt, s;
	uint32_t lane, w;
	int i, r, bad = 0;

	CHECK(a != NULL);
	if (!a)
		return;
	CHECK(ly_check(a) == NULL);
	ASSERT((int64_t)ly_nregs(a), mreps * K / 2);
	for (w = 0; w < (uint32_t)nwarps; w++)
		for (lane = 0; lane < 32; lane++)
			for (mt = 0; mt < mreps; mt++)
				for (s = 0; s < K / 16; s++)
					for (i = 0; i < 8; i++) {
						int64_t g = lane >> 2, q = lane & 3;
						int64_t row = (w / 4) % gm * (M / gm) +
							      64 * mt + 16 * (w % 4) + g +
							      8 * ((i >> 1) & 1);
						int64_t col = 16 * s + 2 * q + (i & 1) +
							      8 * (i >> 2);
						uint32_t f;

						r = ly_wgmma_a_reg(a, mt, s, i);
						f = r < 0 ? ~0u : ly_flat(a, (uint32_t)r, lane, w);
						if (f != (uint32_t)(row * K + col) && bad++ < 5)
							fprintf(stderr, "wgmma A %lldx%lld into "
								"%lldx%lld/%d: warp %u lane %u "
								"step %lld a[%d] is reg %d\n",
								(long long)M, (long long)K,
								(long long)M, (long long)N,
								nwarps, w, lane, (long long)s,
								i, r);
					}
	ASSERT(0, bad);
	/* not a wgmma accumulator, or K not a multiple of 16: none */
	CHECK(ly_wgmma_a(t, as, ly_mma(t, cs, nwarps)) == NULL);
	as[1] = 24;
	CHECK(ly_wgmma_a(t, as, acc) == NULL);
}

int
main(void)
{
	static const int64_t shapes[][3] = {
		{ 64, 64, 4 }, { 64, 128, 4 }, { 128, 128, 4 }, { 128, 256, 4 },
		{ 128, 128, 8 }, { 128, 256, 8 }, { 64, 256, 8 }, { 256, 128, 8 },
		{ 256, 256, 16 },
	};
	Arena a;
	IrCtx c;
	size_t i;

	arena_init(&a, NULL, NULL, NULL);
	ir_ctx_init(&c, &a);
	for (i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
		check(&c.layouts, shapes[i][0], shapes[i][1], (int)shapes[i][2], true);
		check(&c.layouts, shapes[i][0], shapes[i][1], (int)shapes[i][2], false);
	}
	check(&c.layouts, 16, 8, 1, false);
	check(&c.layouts, 32, 64, 4, false);
	check_a(&c.layouts, 64, 128, 64, 4);
	check_a(&c.layouts, 64, 64, 128, 4);
	check_a(&c.layouts, 128, 128, 64, 4);
	check_a(&c.layouts, 128, 256, 16, 8);
	check_a(&c.layouts, 64, 256, 128, 8);   /* warpgroups along n */
	check_a(&c.layouts, 256, 128, 64, 16);
	arena_reset(&a);
	TEST_MAIN_END();
}
