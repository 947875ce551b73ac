/*
 * search.c: LFBO pattern search, exhaustive and random search (tune.h).
 *
 * LFBO pattern search (Song et al. 2022's likelihood-free BO recipe over
 * Helion's pattern search; ../shared/reference/autotuning.md 1.4):
 *
 *   evaluate the start configuration and `initial` random ones;
 *   `copies` searches start from the best of them; each generation,
 *   each search proposes `neighbors` configurations near its current
 *   one (1-3 parameters moved by up to 2 steps of their value lists),
 *   a random-forest classifier trained on everything evaluated so far
 *   (positive: within the best `quantile` of the finite values,
 *   weighted by how far below that threshold; failures and the rest
 *   negative, weight 1) scores them, and the `frac` best by score less
 *   their similarity to those already picked (the fraction of trees in
 *   which two land in the same leaf) are evaluated, all searches'
 *   picks in one batch; a search moves to its batch's best and stops
 *   after `patience` generations without a 0.1% improvement, or when
 *   it has nothing left to propose.
 *
 * Two additions to Helion's: each generation the classifier also picks
 * frac/4 of `neighbors` random configurations, and as many more are
 * taken uniformly (a basin the initial population missed can still be
 * found), and a stopped search restarts
 * from the best configuration no search holds, when one beats it.  The
 * search ends after `generations`, when the budget of evaluations is
 * spent, or when nothing is left to propose.
 *
 * Features are the parameters' values, log2 of them where every value is
 * a power of two.  Configurations evaluated once are never evaluated
 * again.  Everything is seeded: the same seed and the same values give
 * the same search.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tune/tune.h"

typedef struct Search {
	const TuneSpace *s;
	TuneEval ev;
	TuneValid valid;
	void *ud;
	const TuneOpts *o;
	uint64_t rng;
	int np;            /* parameters */
	bool *log2p;       /* per parameter: encode log2 */
	/* evaluated configurations */
	int *cfg;          /* n x np */
	double *val;
	double *X;         /* n x np features */
	int n, cap;
	int evals;
	uint64_t *seen;    /* hash set of keys + 1 (0: empty) */
	size_t seen_cap;
	Forest *model;
} Search;

void
tune_opts_default(TuneOpts *o)
{
	memset(o, 0, sizeof *o);
	o->seed = 1;
	o->initial = 100;
	o->copies = 5;
	o->generations = 20;
	o->neighbors = 300;
	o->frac = 0.10;
	o->quantile = 0.10;
	o->patience = 1;
	o->trees = 100;
}

void
tune_result_free(TuneResult *r)
{
	free(r->best);
	r->best = NULL;
}

static uint64_t
key(const Search *S, const int *c)
{
	uint64_t k = 0;
	int p;

	for (p = 0; p < S->np; p++)
		k = k * (uint64_t)S->s->params[p].n + (uint64_t)c[p];
	return k;
}

/* Adds c to the set; false when it was there. */
static bool
mark(Search *S, const int *c)
{
	uint64_t k = key(S, c) + 1, h = k * 0x9e3779b97f4a7c15ull;
	size_t i;

	for (i = h & (S->seen_cap - 1);; i = (i + 1) & (S->seen_cap - 1)) {
		if (S->seen[i] == k)
			return false;
		if (!S->seen[i]) {
			S->seen[i] = k;
			return true;
		}
	}
}

static bool
was_seen(const Search *S, const int *c)
{
	uint64_t k = key(S, c) + 1, h = k * 0x9e3779b97f4a7c15ull;
	size_t i;

	for (i = h & (S->seen_cap - 1); S->seen[i]; i = (i + 1) & (S->seen_cap - 1))
		if (S->seen[i] == k)
			return true;
	return false;
}

static void
encode(const Search *S, const int *c, double *x)
{
	int p;

	for (p = 0; p < S->np; p++) {
		double v = (double)S->s->params[p].values[c[p]];

		x[p] = S->log2p[p] ? log2(v) : v;
	}
}

static bool
grow_to(Search *S, int need)
{
	int cap;

	if (need <= S->cap)
		return true;
	cap = S->cap ? S->cap : 256;
	while (cap < need)
		cap *= 2;
	S->cfg = realloc(S->cfg, (size_t)cap * S->np * sizeof *S->cfg);
	S->val = realloc(S->val, (size_t)cap * sizeof *S->val);
	S->X = realloc(S->X, (size_t)cap * S->np * sizeof *S->X);
	if (!S->cfg || !S->val || !S->X)
		return false;
	S->cap = cap;
	return true;
}

static bool
budget_left(const Search *S)
{
	return !S->o || !S->o->max_evals || S->evals < S->o->max_evals;
}

/* Evaluates the configurations of batch (count x np) that are new, in
 * one call; statically invalid ones are recorded as failures without an
 * evaluation.  Returns false when out of memory. */
static bool
evaluate(Search *S, const int *batch, int count)
{
	int *run = malloc((size_t)(count ? count : 1) * S->np * sizeof *run);
	int i, m = 0, base = S->n;
	double *out;

	if (!run)
		return false;
	for (i = 0; i < count; i++) {
		const int *c = batch + (size_t)i * S->np;

		if (S->o && S->o->max_evals && S->evals + m >= S->o->max_evals)
			break;
		if (!mark(S, c))
			continue;
		if (!grow_to(S, S->n + 1)) {
			free(run);
			return false;
		}
		memcpy(S->cfg + (size_t)S->n * S->np, c, S->np * sizeof *c);
		encode(S, c, S->X + (size_t)S->n * S->np);
		S->val[S->n] = INFINITY;
		if (!S->valid || S->valid(S->ud, c))
			memcpy(run + (size_t)m++ * S->np, c, S->np * sizeof *c);
		else
			S->val[S->n] = -1;  /* invalid: not evaluated */
		S->n++;
	}
	out = malloc((size_t)(m ? m : 1) * sizeof *out);
	if (!out) {
		free(run);
		return false;
	}
	if (m)
		S->ev(S->ud, run, m, out);
	S->evals += m;
	for (i = base, m = 0; i < S->n; i++)
		S->val[i] = S->val[i] < 0 ? INFINITY : out[m++];
	free(run);
	free(out);
	return true;
}

typedef struct Ranked {
	double v;
	int i;
} Ranked;

static int
cmp_ranked(const void *a, const void *b)
{
	const Ranked *x = a, *y = b;

	if (x->v != y->v)
		return x->v < y->v ? -1 : 1;  /* INFINITY last */
	return (x->i > y->i) - (x->i < y->i);
}

/* Reorders the n configurations cfgs (n x np) by the prior's estimates,
 * ascending, ties (and NaNs) in their order. */
static bool
prior_order(Search *S, TunePrior prior, int *cfgs, int n)
{
	size_t row = (size_t)S->np * sizeof *cfgs;
	double *v = malloc((size_t)(n ? n : 1) * sizeof *v);
	Ranked *rk = malloc((size_t)(n ? n : 1) * sizeof *rk);
	int *tmp = malloc((n ? (size_t)n : 1) * row);
	bool ok = v && rk && tmp;

	if (ok) {
		prior(S->ud, cfgs, n, v);
		for (int i = 0; i < n; i++)
			rk[i] = (Ranked){ isnan(v[i]) ? INFINITY : v[i], i };
		qsort(rk, (size_t)n, sizeof *rk, cmp_ranked);
		memcpy(tmp, cfgs, (size_t)n * row);
		for (int i = 0; i < n; i++)
			memcpy((char *)cfgs + (size_t)i * row,
			       (char *)tmp + (size_t)rk[i].i * row, row);
	}
	free(v);
	free(rk);
	free(tmp);
	return ok;
}

static int
cmp_double(const void *a, const void *b)
{
	double u = *(const double *)a, v = *(const double *)b;

	return (u > v) - (u < v);
}

/* Refits the classifier on everything evaluated (no model when every
 * label is the same). */
static bool
fit(Search *S)
{
	double *fin = malloc((size_t)S->n * sizeof *fin), *w, q, mean = 0;
	uint8_t *y;
	int i, nf = 0, npos = 0;

	forest_free(S->model);
	S->model = NULL;
	if (!fin)
		return false;
	for (i = 0; i < S->n; i++)
		if (isfinite(S->val[i]))
			fin[nf++] = S->val[i];
	if (!nf) {
		free(fin);
		return true;
	}
	qsort(fin, (size_t)nf, sizeof *fin, cmp_double);
	q = fin[(int)floor(S->o->quantile * (nf - 1))];
	free(fin);
	y = malloc((size_t)S->n);
	w = malloc((size_t)S->n * sizeof *w);
	if (!y || !w) {
		free(y);
		free(w);
		return false;
	}
	for (i = 0; i < S->n; i++) {
		y[i] = isfinite(S->val[i]) && S->val[i] <= q;
		w[i] = y[i] ? fmax(1e-5, q - S->val[i]) : 1;
		if (y[i]) {
			npos++;
			mean += w[i];
		}
	}
	if (npos && npos < S->n) {
		for (i = 0; i < S->n; i++)
			if (y[i])
				w[i] /= mean / npos;
		S->model = forest_fit(S->X, S->n, S->np, y, w, S->o->trees,
				      tune_rand(&S->rng));
	}
	free(y);
	free(w);
	return S->model || npos == 0 || npos == S->n;
}

/* Up to want of the cands (count x np), picked greedily by score less
 * mean similarity to those already picked, into sel; returns how many. */
static int
select_batch(Search *S, const int *cands, int count, int want, int *sel)
{
	int nt = S->model ? forest_ntrees(S->model) : 0, i, k, j;
	double *p = malloc((size_t)count * sizeof *p);
	double *simsum = calloc((size_t)count, sizeof *simsum);
	int *leaves = malloc((size_t)count * (nt ? nt : 1) * sizeof *leaves);
	bool *used = calloc((size_t)count, sizeof *used);
	double *x = malloc((size_t)S->np * sizeof *x);

	if (!p || !simsum || !leaves || !used || !x) {
		k = -1;
		goto done;
	}
	for (i = 0; i < count; i++) {
		if (S->model) {
			encode(S, cands + (size_t)i * S->np, x);
			p[i] = forest_proba(S->model, x);
			forest_leaves(S->model, x, leaves + (size_t)i * nt);
		} else {
			p[i] = (double)(tune_rand(&S->rng) >> 11) / 9007199254740992.0;
		}
	}
	for (k = 0; k < want && k < count; k++) {
		int b = -1;
		double bs = -INFINITY;

		for (i = 0; i < count; i++) {
			double s = p[i] - (k ? simsum[i] / k : 0);

			if (!used[i] && s > bs) {
				bs = s;
				b = i;
			}
		}
		used[b] = true;
		sel[k] = b;
		for (i = 0; nt && i < count; i++) {
			int same = 0;

			for (j = 0; j < nt; j++)
				same += leaves[(size_t)i * nt + j] == leaves[(size_t)b * nt + j];
			simsum[i] += (double)same / nt;
		}
	}
done:
	free(p);
	free(simsum);
	free(leaves);
	free(used);
	free(x);
	return k;
}

static void
random_cfg(Search *S, int *c)
{
	int p;

	for (p = 0; p < S->np; p++)
		c[p] = (int)(tune_rand(&S->rng) % (uint64_t)S->s->params[p].n);
}

/* A neighbour of c: 1-3 parameters moved by 1 or 2 steps either way. */
static void
neighbour(Search *S, const int *c, int *out)
{
	int k = 1 + (int)(tune_rand(&S->rng) % 3), i;

	memcpy(out, c, S->np * sizeof *c);
	for (i = 0; i < k; i++) {
		int p = (int)(tune_rand(&S->rng) % (uint64_t)S->np);
		int d = 1 + (int)(tune_rand(&S->rng) % 2), v;

		if (tune_rand(&S->rng) & 1)
			d = -d;
		v = out[p] + d;
		out[p] = v < 0 ? 0 : v >= S->s->params[p].n ? S->s->params[p].n - 1 : v;
	}
}

static bool
setup(Search *S, const TuneSpace *s, TuneEval ev, TuneValid valid, void *ud,
      const TuneOpts *o, uint64_t seed)
{
	double total = 1;
	int p, i;

	memset(S, 0, sizeof *S);
	S->s = s;
	S->ev = ev;
	S->valid = valid;
	S->ud = ud;
	S->o = o;
	S->rng = seed;
	S->np = s->n;
	if (s->n < 1)
		return false;
	for (p = 0; p < s->n; p++) {
		if (s->params[p].n < 1)
			return false;
		total *= s->params[p].n;
	}
	if (total > 9e18)
		return false;
	S->log2p = calloc((size_t)s->n, sizeof *S->log2p);
	if (!S->log2p)
		return false;
	for (p = 0; p < s->n; p++) {
		bool pow2 = true;

		for (i = 0; i < s->params[p].n; i++) {
			int64_t v = s->params[p].values[i];

			pow2 &= v > 0 && (v & (v - 1)) == 0;
		}
		S->log2p[p] = pow2;
	}
	S->seen_cap = 1024;
	while ((double)S->seen_cap < 4 * fmin(total, 1 << 22))
		S->seen_cap *= 2;
	S->seen = calloc(S->seen_cap, sizeof *S->seen);
	return S->seen != NULL;
}

static int
finish(Search *S, TuneResult *r, bool ok)
{
	int i, b = -1;

	memset(r, 0, sizeof *r);
	r->value = INFINITY;
	r->evals = S->evals;
	for (i = 0; ok && i < S->n; i++)
		if (S->val[i] < r->value) {
			r->value = S->val[i];
			b = i;
		}
	if (ok && S->n && (r->best = malloc(S->np * sizeof *r->best)))
		memcpy(r->best, S->cfg + (size_t)(b < 0 ? 0 : b) * S->np,
		       S->np * sizeof *r->best);
	else
		ok = false;
	free(S->log2p);
	free(S->cfg);
	free(S->val);
	free(S->X);
	free(S->seen);
	forest_free(S->model);
	return ok ? 0 : -1;
}

/* Up to count distinct, unseen, valid configurations into cands:
 * neighbours of c, or random ones (c NULL).  Returns how many. */
static int
propose(Search *S, const int *c, int *cands, int count)
{
	int nc = 0, tries, i, np = S->np;

	for (tries = 0; nc < count && tries < 4 * count; tries++) {
		int *x = cands + (size_t)nc * np;

		if (c)
			neighbour(S, c, x);
		else
			random_cfg(S, x);
		if (was_seen(S, x) || (S->valid && !S->valid(S->ud, x)))
			continue;
		for (i = 0; i < nc; i++)
			if (!memcmp(x, cands + (size_t)i * np, np * sizeof *x))
				break;
		if (i == nc)
			nc++;
	}
	return nc;
}

/* The best finite configuration evaluated, below `bound`, that none of
 * the ncopies current ones (cur) is; -1 when there is none. */
static int
best_free(const Search *S, const int *cur, int ncopies, double bound)
{
	int b = -1, i, k, np = S->np;

	for (i = 0; i < S->n; i++) {
		if (!isfinite(S->val[i]) || S->val[i] >= bound ||
		    (b >= 0 && S->val[i] >= S->val[b]))
			continue;
		for (k = 0; k < ncopies; k++)
			if (!memcmp(cur + (size_t)k * np, S->cfg + (size_t)i * np,
				    np * sizeof *cur))
				break;
		if (k == ncopies)
			b = i;
	}
	return b;
}

int
tune_lfbo(const TuneSpace *s, TuneEval ev, TuneValid valid, void *ud,
	  const TuneOpts *o, TuneResult *r)
{
	Search S;
	int np = s->n, g, c, i, tries, ncopies = 0;
	int *batch = NULL, *cands = NULL, *sel = NULL, *cur = NULL, *owner = NULL;
	double *curv = NULL;
	int *pat = NULL;
	bool ok = setup(&S, s, ev, valid, ud, o, o->seed);
	int cap = ((o->copies > 0 ? o->copies : 1) + 1) * (o->neighbors + 1);

	if (ok) {
		batch = malloc((size_t)(o->initial + 1 > cap ? o->initial + 1 : cap) *
			       np * sizeof *batch);
		cands = malloc((size_t)(o->neighbors + 1) * np * sizeof *cands);
		sel = malloc((size_t)(o->neighbors + 1) * sizeof *sel);
		cur = malloc((size_t)(o->copies > 0 ? o->copies : 1) * np * sizeof *cur);
		curv = malloc((size_t)(o->copies > 0 ? o->copies : 1) * sizeof *curv);
		pat = malloc((size_t)(o->copies > 0 ? o->copies : 1) * sizeof *pat);
		owner = malloc((size_t)cap * sizeof *owner);
		ok = batch && cands && sel && cur && curv && pat && owner;
	}
	/* the start and `initial` random configurations; with a prior,
	 * half of them the best by the prior of 3 x `initial` */
	if (ok) {
		int m = 0, want = o->initial + (o->start != NULL);
		int pool = o->prior ? 3 * o->initial : o->initial;
		int *draw = malloc((size_t)(pool + 1) * np * sizeof *draw);
		int nd = 0;

		ok = draw != NULL;
		if (o->start)
			memcpy(batch + (size_t)m++ * np, o->start, np * sizeof *batch);
		for (tries = 0; ok && nd < pool && tries < 20 * (pool + 1);
		     tries++) {
			int *b = draw + (size_t)nd * np;

			random_cfg(&S, b);
			for (i = 0; i < nd; i++)
				if (!memcmp(b, draw + (size_t)i * np, np * sizeof *b))
					break;
			if (i == nd && (!o->start ||
					memcmp(b, o->start, np * sizeof *b)))
				nd++;
		}
		if (ok && o->prior) {
			/* the prior's best half, then the draws in order */
			int *ranked = malloc((size_t)(nd + 1) * np * sizeof *ranked);
			int top = (o->initial + 1) / 2;

			ok = ranked != NULL;
			if (ok) {
				memcpy(ranked, draw, (size_t)nd * np * sizeof *ranked);
				ok = prior_order(&S, o->prior, ranked, nd);
			}
			for (i = 0; ok && i < 2 * nd && m < want; i++) {
				const int *b = i < nd ? ranked + (size_t)i * np
						      : draw + (size_t)(i - nd) * np;
				int j;

				if (i < nd && i >= top)
					continue;
				for (j = 0; j < m; j++)
					if (!memcmp(b, batch + (size_t)j * np,
						    np * sizeof *b))
						break;
				if (j == m)
					memcpy(batch + (size_t)m++ * np, b,
					       np * sizeof *b);
			}
			free(ranked);
		} else if (ok) {
			memcpy(batch + (size_t)m * np, draw,
			       (size_t)nd * np * sizeof *batch);
			m += nd;
		}
		free(draw);
		ok = ok && evaluate(&S, batch, m) && fit(&S);
	}
	/* the copies start from the best finite ones */
	for (c = 0; ok && c < o->copies; c++) {
		int b = best_free(&S, cur, ncopies, INFINITY);

		if (b < 0)
			break;
		memcpy(cur + (size_t)ncopies * np, S.cfg + (size_t)b * np, np * sizeof *cur);
		curv[ncopies] = S.val[b];
		pat[ncopies++] = o->patience;
	}
	for (g = 0; ok && g < o->generations && budget_left(&S); g++) {
		int m = 0, active = 0;

		for (c = 0; c < ncopies; c++) {
			int nc = 0, want, k;

			if (pat[c] < 0)
				continue;
			nc = propose(&S, cur + (size_t)c * np, cands, o->neighbors);
			want = (int)(nc * o->frac);
			if (want < 1 && nc > 0)
				want = 1;
			if (nc == 0) {
				pat[c] = -1;
				continue;
			}
			if ((k = select_batch(&S, cands, nc, want, sel)) < 0) {
				ok = false;
				break;
			}
			for (i = 0; i < k; i++) {
				memcpy(batch + (size_t)m * np, cands + (size_t)sel[i] * np,
				       np * sizeof *batch);
				owner[m++] = c;
			}
			active++;
		}
		/* global exploration: random configurations the model picks,
		 * so a basin the initial population missed can still be found */
		if (ok && budget_left(&S)) {
			int nc = 0, k, want;

			nc = propose(&S, NULL, cands, o->neighbors);
			want = (int)(nc * o->frac / 4);
			if (want < 1)
				want = nc > 0;
			k = nc ? select_batch(&S, cands, nc, want, sel) : 0;
			if (k < 0)
				ok = false;
			/* as many again uniformly: the model knows only what
			 * it was shown */
			for (i = 0; ok && i < k && k + i < nc; i++)
				sel[k + i] = -1;
			for (i = 0; ok && i < 2 * k && i < nc; i++) {
				int j = i < k ? sel[i] : (int)(tune_rand(&S.rng) % (uint64_t)nc);

				memcpy(batch + (size_t)m * np, cands + (size_t)j * np,
				       np * sizeof *batch);
				owner[m++] = -1;
			}
			active += k > 0;
		}
		if (!ok || !active)
			break;
		{
			int base = S.n, j;

			if (!evaluate(&S, batch, m))
				ok = false;
			/* each copy moves to its best new configuration */
			for (c = 0; ok && c < ncopies; c++) {
				double bv = INFINITY;
				int bi = -1;

				if (pat[c] < 0)
					continue;
				for (j = base; j < S.n; j++) {
					for (i = 0; i < m; i++)
						if (owner[i] == c &&
						    !memcmp(batch + (size_t)i * np,
							    S.cfg + (size_t)j * np,
							    np * sizeof *batch))
							break;
					if (i < m && S.val[j] < bv) {
						bv = S.val[j];
						bi = j;
					}
				}
				if (bi >= 0 && bv < curv[c] * (1 - 0.001)) {
					memcpy(cur + (size_t)c * np, S.cfg + (size_t)bi * np,
					       np * sizeof *cur);
					curv[c] = bv;
				} else {
					if (bi >= 0 && bv < curv[c]) {
						memcpy(cur + (size_t)c * np,
						       S.cfg + (size_t)bi * np,
						       np * sizeof *cur);
						curv[c] = bv;
					}
					pat[c]--;
				}
			}
		}
		/* a stopped copy restarts from the best configuration no copy
		 * holds, when it is better than the copy's */
		for (c = 0; ok && c < ncopies; c++) {
			int b;

			if (pat[c] >= 0)
				continue;
			if ((b = best_free(&S, cur, ncopies, curv[c])) >= 0) {
				memcpy(cur + (size_t)c * np, S.cfg + (size_t)b * np,
				       np * sizeof *cur);
				curv[c] = S.val[b];
				pat[c] = o->patience;
			}
		}
		if (ok && g + 1 < o->generations)
			ok = fit(&S);
	}
	free(batch);
	free(cands);
	free(sel);
	free(cur);
	free(curv);
	free(pat);
	free(owner);
	return finish(&S, r, ok);
}

/* Every configuration, in the prior's order, in batches. */
static bool
exhaustive_ranked(Search *S, TunePrior prior, int total)
{
	enum { BATCH = 256 };
	int np = S->np, *all = malloc((size_t)total * np * sizeof *all);
	int *c = calloc((size_t)np, sizeof *c);
	bool ok = all && c;

	for (int i = 0; ok && i < total; i++) {
		memcpy(all + (size_t)i * np, c, np * sizeof *c);
		for (int p = np - 1; p >= 0; p--) {
			if (++c[p] < S->s->params[p].n)
				break;
			c[p] = 0;
		}
	}
	ok = ok && prior_order(S, prior, all, total);
	for (int i = 0; ok && i < total; i += BATCH)
		ok = evaluate(S, all + (size_t)i * np,
			      total - i < BATCH ? total - i : BATCH);
	free(all);
	free(c);
	return ok;
}

int
tune_exhaustive(const TuneSpace *s, TuneEval ev, TuneValid valid, void *ud,
		TunePrior prior, TuneResult *r)
{
	enum { BATCH = 256 };  /* one batch: its compiles run in parallel */
	Search S;
	bool ok = setup(&S, s, ev, valid, ud, NULL, 1), more = true;
	int np = s->n, *c = ok ? calloc((size_t)np, sizeof *c) : NULL;
	int *batch = ok ? malloc((size_t)BATCH * np * sizeof *batch) : NULL;
	double total = 1;
	int p, m;

	ok = ok && c && batch;
	for (p = 0; p < np; p++)
		total *= s->params[p].n;
	if (ok && prior && total <= 65536) {
		ok = exhaustive_ranked(&S, prior, (int)total);
		more = false;
	}
	while (ok && more) {
		for (m = 0; m < BATCH && more; m++) {
			memcpy(batch + (size_t)m * np, c, np * sizeof *c);
			for (p = np - 1; p >= 0; p--) {
				if (++c[p] < s->params[p].n)
					break;
				c[p] = 0;
			}
			more = p >= 0;
		}
		ok = evaluate(&S, batch, m);
	}
	free(c);
	free(batch);
	return finish(&S, r, ok);
}

int
tune_random(const TuneSpace *s, TuneEval ev, TuneValid valid, void *ud,
	    int count, uint64_t seed, TuneResult *r)
{
	Search S;
	bool ok = setup(&S, s, ev, valid, ud, NULL, seed);
	int np = s->n, tries = 0, m, i;
	int *batch = ok ? malloc((size_t)(count > 0 ? count : 1) * np *
				 sizeof *batch) : NULL;

	/* draws until count distinct configurations, each batch evaluated
	 * at once (the same configurations, in the same order, as one at a
	 * time) */
	ok = ok && batch;
	while (ok && S.n < count && tries < 20 * count) {
		for (m = 0; m < count - S.n && tries < 20 * count; tries++) {
			int *b = batch + (size_t)m * np;

			random_cfg(&S, b);
			if (was_seen(&S, b))
				continue;
			for (i = 0; i < m; i++)
				if (!memcmp(b, batch + (size_t)i * np, np * sizeof *b))
					break;
			m += i == m;
		}
		ok = evaluate(&S, batch, m);
	}
	free(batch);
	return finish(&S, r, ok);
}
