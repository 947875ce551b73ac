/*
 * Unit tests of tune/: the random forest on a planted boundary, and the
 * LFBO search on synthetic GEMM-like landscapes with planted failures
 * (statically invalid configurations, crashes, wrong results): it must
 * reach within 2% of the exhaustive search's best with at most 15% of
 * its evaluations, never evaluate an invalid configuration or one twice,
 * and give the same answer for the same seed; a cost-model prior makes
 * exhaustive search and LFBO reach the optimum sooner.
 */
#include <math.h>

#include "testsuite/unit/test.h"
#include "tune/tune.h"

static void
test_forest(void)
{
	enum { N = 400, D = 3 };
	static double X[N * D];
	static uint8_t y[N];
	uint64_t s = 7;
	double in[D] = { 0.8, 0.2, 0.5 }, out[D] = { 0.2, 0.8, 0.5 };
	Forest *f;
	int i, d, leaf[50];

	/* positive: x0 > 0.5 and x1 < 0.5, the third feature noise */
	for (i = 0; i < N; i++) {
		for (d = 0; d < D; d++) {
			s = s * 6364136223846793005ull + 1442695040888963407ull;
			X[i * D + d] = (double)(s >> 11) / 9007199254740992.0;
		}
		y[i] = X[i * D] > 0.5 && X[i * D + 1] < 0.5;
	}
	f = forest_fit(X, N, D, y, NULL, 50, 3);
	CHECK(f != NULL);
	if (!f)
		return;
	CHECK(forest_proba(f, in) > 0.8);
	CHECK(forest_proba(f, out) < 0.2);
	forest_leaves(f, in, leaf);
	ASSERT(50, forest_ntrees(f));
	forest_free(f);
}

/* ---- a synthetic landscape ------------------------------------------------ */

static const int64_t BMS[] = { 16, 32, 64, 128, 256 }, BNS[] = { 16, 32, 64, 128, 256 },
		     BKS[] = { 16, 32, 64, 128 }, STAGES[] = { 1, 2, 3, 4, 5, 6 },
		     WARPS[] = { 1, 2, 4, 8, 16 };
static const TuneParam PARAMS[] = {
	{ "BM", BMS, 5 }, { "BN", BNS, 5 }, { "BK", BKS, 4 },
	{ "STAGES", STAGES, 6 }, { "WARPS", WARPS, 5 },
};
static const TuneSpace SPACE = { PARAMS, 5 };

typedef struct Land {
	int shape;          /* which landscape */
	int evals;
	int invalid_evals;  /* must stay 0 */
	uint64_t seen[4096 / 64 * 2];
	int twice;          /* must stay 0 */
	double target;      /* the optimum's value, when known */
	int hit;            /* the evaluation that first reached it (0: none) */
	int prior_calls;
} Land;

static uint64_t
hash(const int *c)
{
	uint64_t h = 1469598103934665603ull;
	int p;

	for (p = 0; p < 5; p++)
		h = (h ^ (uint64_t)c[p]) * 1099511628211ull;
	return h ^ (h >> 29);
}

static bool
valid(void *ud, const int *c)
{
	(void)ud;
	/* shared memory: A and B stages of bf16 within 228 KB */
	return (BMS[c[0]] + BNS[c[1]]) * BKS[c[2]] * STAGES[c[3]] * 2 <= 228 * 1024 &&
	       BMS[c[0]] * BNS[c[1]] / (32 * WARPS[c[4]]) <= 256;
}

static double
value(int shape, const int *c)
{
	double bm = log2((double)BMS[c[0]]), bn = log2((double)BNS[c[1]]);
	double bk = log2((double)BKS[c[2]]), s = (double)STAGES[c[3]];
	double w = log2((double)WARPS[c[4]]), v;
	uint64_t h = hash(c);

	if (shape == 0)  /* a bowl with interactions: tiles against warps */
		v = 1 + 0.08 * (bm - 7) * (bm - 7) + 0.06 * (bn - 7.6) * (bn - 7.6) +
		    0.05 * (bk - 5.7) * (bk - 5.7) + 0.03 * (s - 3.6) * (s - 3.6) +
		    0.04 * (bm + bn - w - 11.2) * (bm + bn - w - 11.2);
	else  /* two basins, the better one narrower */
		v = fmin(1 + 0.05 * ((bm - 5) * (bm - 5) + (bn - 5) * (bn - 5) +
				     (w - 1) * (w - 1) + (bk - 6) * (bk - 6)),
			 0.9 + 0.1 * ((bm - 8) * (bm - 8) + (bn - 6) * (bn - 6) +
				      (w - 3) * (w - 3)) + 0.02 * (s - 5) * (s - 5));
	v *= 1 + 0.005 * ((double)(h % 1000) / 1000 - 0.5);  /* noise */
	if (h % 31 == 0 || h % 47 == 3)  /* crashes, wrong results */
		return INFINITY;
	return v;
}

static int
index_of(const int *c)
{
	return (((c[0] * 5 + c[1]) * 4 + c[2]) * 6 + c[3]) * 5 + c[4];
}

static void
eval(void *ud, const int *cfgs, int count, double *out)
{
	Land *L = ud;
	int i;

	for (i = 0; i < count; i++) {
		const int *c = cfgs + i * 5;
		int k = index_of(c);

		if (!valid(NULL, c))
			L->invalid_evals++;
		if (L->seen[k / 64] >> (k % 64) & 1)
			L->twice++;
		L->seen[k / 64] |= 1ull << (k % 64);
		out[i] = value(L->shape, c);
		L->evals++;
		if (!L->hit && L->target > 0 && out[i] <= L->target)
			L->hit = L->evals;
	}
}

/* A cost model for the landscapes: shape 0's bowl with its centres off by
 * about half a step, no noise, blind to failures and to the second
 * basin -- a prior that is roughly right, as a static estimate is. */
static void
prior(void *ud, const int *cfgs, int count, double *out)
{
	Land *L = ud;

	L->prior_calls++;
	for (int i = 0; i < count; i++) {
		const int *c = cfgs + i * 5;
		double bm = log2((double)BMS[c[0]]), bn = log2((double)BNS[c[1]]);
		double bk = log2((double)BKS[c[2]]), s = (double)STAGES[c[3]];
		double w = log2((double)WARPS[c[4]]);

		out[i] = 1 + 0.08 * (bm - 6.6) * (bm - 6.6) +
			 0.06 * (bn - 7.2) * (bn - 7.2) +
			 0.05 * (bk - 5.5) * (bk - 5.5) + 0.03 * (s - 3) * (s - 3) +
			 0.04 * (bm + bn - w - 11) * (bm + bn - w - 11);
	}
}

/* The prior orders the first candidates: exhaustive search in its order
 * reaches the optimum of the bowl far sooner than in the space's order,
 * and LFBO seeded by it reaches it in fewer evaluations over seeds 1-8
 * (the sums); neither evaluates anything twice, and the same seed gives
 * the same search. */
static void
test_prior(void)
{
	Land ex = { 0 }, exp = { 0 };
	TuneResult re, rp;
	TuneOpts o;
	int plain = 0, seeded = 0, reached = 0;

	ASSERT(0, tune_exhaustive(&SPACE, eval, valid, &ex, NULL, &re));
	exp.target = re.value;
	ASSERT(0, tune_exhaustive(&SPACE, eval, valid, &exp, prior, &rp));
	CHECK(rp.value == re.value);
	ASSERT(ex.evals, exp.evals);
	ASSERT(1, exp.prior_calls);
	ASSERT(0, exp.twice + exp.invalid_evals);
	fprintf(stderr, "prior: exhaustive reaches the optimum at %d of %d\n",
		exp.hit, exp.evals);
	CHECK(exp.hit > 0 && exp.hit < ex.evals / 10);
	tune_result_free(&rp);
	for (uint64_t seed = 1; seed <= 8; seed++) {
		Land a = { .target = re.value }, b = { .target = re.value };
		Land b2 = { .target = re.value };
		TuneResult ra, rb, rb2;

		tune_opts_default(&o);
		o.seed = seed;
		o.initial = 40;
		o.copies = 4;
		o.neighbors = 200;
		o.max_evals = 400;
		ASSERT(0, tune_lfbo(&SPACE, eval, valid, &a, &o, &ra));
		o.prior = prior;
		ASSERT(0, tune_lfbo(&SPACE, eval, valid, &b, &o, &rb));
		ASSERT(0, tune_lfbo(&SPACE, eval, valid, &b2, &o, &rb2));
		ASSERT(b.evals, b2.evals);
		ASSERT(b.hit, b2.hit);
		ASSERT(0, b.twice + b.invalid_evals);
		ASSERT(1, b.prior_calls);
		plain += a.hit ? a.hit : a.evals + 1;
		seeded += b.hit ? b.hit : b.evals + 1;
		reached += b.hit > 0;
		tune_result_free(&ra);
		tune_result_free(&rb);
		tune_result_free(&rb2);
	}
	fprintf(stderr, "prior: LFBO reaches the optimum in %d evaluations "
		"over 8 seeds with it, %d without (%d of 8 reached)\n", seeded,
		plain, reached);
	CHECK(seeded < plain);
	tune_result_free(&re);
}

static void
test_search(int shape)
{
	Land ex = { .shape = shape }, lf = { .shape = shape }, lf2 = { .shape = shape };
	Land rs = { .shape = shape };
	TuneResult re, rl, rl2, rr;
	TuneOpts o;
	int start[5] = { 2, 2, 1, 2, 2 }, budget;

	ASSERT(0, tune_exhaustive(&SPACE, eval, valid, &ex, NULL, &re));
	budget = ex.evals * 15 / 100;
	tune_opts_default(&o);
	o.seed = 42;
	o.initial = 40;
	o.copies = 4;
	o.neighbors = 200;
	o.max_evals = budget;
	o.start = start;
	ASSERT(0, tune_lfbo(&SPACE, eval, valid, &lf, &o, &rl));
	ASSERT(0, tune_lfbo(&SPACE, eval, valid, &lf2, &o, &rl2));
	ASSERT(0, tune_random(&SPACE, eval, valid, &rs, rl.evals, 42, &rr));
	fprintf(stderr, "landscape %d: exhaustive %.4f in %d; lfbo %.4f in %d "
		"(budget %d); random %.4f in %d\n", shape, re.value, ex.evals,
		rl.value, rl.evals, budget, rr.value, rr.evals);
	CHECK(isfinite(re.value));
	CHECK(rl.value <= re.value * 1.02);
	CHECK(rl.evals <= budget);
	ASSERT(rl.evals, lf.evals);
	ASSERT(0, lf.invalid_evals + ex.invalid_evals + rs.invalid_evals);
	ASSERT(0, lf.twice + ex.twice + rs.twice);
	/* the same seed, the same search */
	ASSERT(rl.evals, rl2.evals);
	CHECK(rl.value == rl2.value);
	CHECK(!memcmp(rl.best, rl2.best, 5 * sizeof *rl.best));
	tune_result_free(&re);
	tune_result_free(&rl);
	tune_result_free(&rl2);
	tune_result_free(&rr);
}

/* Every configuration failing: no crash, an infinite best. */
static void
all_fail(void *ud, const int *cfgs, int count, double *out)
{
	int i;

	(void)ud;
	(void)cfgs;
	for (i = 0; i < count; i++)
		out[i] = INFINITY;
}

static void
test_all_fail(void)
{
	TuneResult r;
	TuneOpts o;

	tune_opts_default(&o);
	o.initial = 20;
	o.max_evals = 50;
	ASSERT(0, tune_lfbo(&SPACE, all_fail, NULL, NULL, &o, &r));
	CHECK(isinf(r.value));
	CHECK(r.evals <= 50);
	tune_result_free(&r);
}

int
main(void)
{
	test_forest();
	test_search(0);
	test_search(1);
	test_prior();
	test_all_fail();
	TEST_MAIN_END();
}
