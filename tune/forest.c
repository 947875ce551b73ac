/*
 * forest.c: the random forest classifier of the LFBO search.  Each tree is
 * grown on a bootstrap sample of the rows (drawn with replacement, so a
 * row's count multiplies its weight); at each node sqrt(d) features
 * (at least 1) are tried, each at every threshold between two distinct
 * values of the node's rows, and the split that most lowers the weighted
 * entropy is taken.  A node with rows of one label, fewer than two rows
 * or no split that helps is a leaf holding the weighted fraction of
 * positive rows.  Trees are arrays of nodes; a configuration space has a
 * few features and at most some thousands of rows, so everything is
 * exact (no histograms).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tune/tune.h"

typedef struct Node {
	int feat;       /* -1: a leaf */
	double thr;     /* rows with x[feat] <= thr go left */
	int left, right;
	double p;       /* a leaf's weighted positive fraction */
} Node;

typedef struct Tree {
	Node *nodes;
	int n, cap;
} Tree;

struct Forest {
	Tree *trees;
	int ntrees, d;
};

typedef struct Grow {
	const double *X;
	const uint8_t *y;
	double *w;        /* per row: weight x bootstrap count */
	int n, d, mtry;
	uint64_t rng;
	int *order;       /* scratch: rows sorted by a feature */
	int *feats;       /* scratch: the features tried */
	int sort_f;       /* the feature rows are being sorted by */
} Grow;

static double
entropy(double pos, double all)
{
	double p, h = 0;

	if (all <= 0)
		return 0;
	p = pos / all;
	if (p > 0)
		h -= p * log(p);
	if (p < 1)
		h -= (1 - p) * log(1 - p);
	return h * all;
}

static int
add_node(Tree *t)
{
	if (t->n == t->cap) {
		int cap = t->cap ? 2 * t->cap : 64;
		Node *nn = realloc(t->nodes, (size_t)cap * sizeof *nn);

		if (!nn)
			return -1;
		t->nodes = nn;
		t->cap = cap;
	}
	memset(&t->nodes[t->n], 0, sizeof t->nodes[t->n]);
	t->nodes[t->n].feat = -1;
	return t->n++;
}

/* qsort_r's comparison: rows by the value of feature g->sort_f */
static int
by_feature(const void *a, const void *b, void *ud)
{
	const Grow *g = ud;
	double u = g->X[*(const int *)a * g->d + g->sort_f];
	double v = g->X[*(const int *)b * g->d + g->sort_f];

	return (u > v) - (u < v);
}

/* Grows the node for rows[0..m) (all of positive weight); returns its
 * index, -1 when out of memory. */
static int
grow(Grow *g, Tree *t, int *rows, int m, int depth)
{
	double pos = 0, all = 0, best = 0, thr = 0;
	int id = add_node(t), i, k, bf = -1, nl = 0;

	if (id < 0)
		return -1;
	for (i = 0; i < m; i++) {
		all += g->w[rows[i]];
		pos += g->y[rows[i]] ? g->w[rows[i]] : 0;
	}
	t->nodes[id].p = all > 0 ? pos / all : 0;
	if (m < 2 || pos <= 0 || pos >= all || depth > 40)
		return id;
	/* sqrt(d) distinct features, drawn at random */
	for (i = 0; i < g->d; i++)
		g->feats[i] = i;
	for (i = 0; i < g->mtry; i++) {
		int j = i + (int)(tune_rand(&g->rng) % (uint64_t)(g->d - i)), s = g->feats[i];

		g->feats[i] = g->feats[j];
		g->feats[j] = s;
	}
	for (k = 0; k < g->mtry; k++) {
		int f = g->feats[k];
		double lp = 0, la = 0, h0 = entropy(pos, all);

		memcpy(g->order, rows, (size_t)m * sizeof *rows);
		g->sort_f = f;
		qsort_r(g->order, (size_t)m, sizeof *g->order, by_feature, g);
		for (i = 0; i < m - 1; i++) {
			int r = g->order[i];
			double a = g->X[r * g->d + f], b = g->X[g->order[i + 1] * g->d + f];
			double gain;

			la += g->w[r];
			lp += g->y[r] ? g->w[r] : 0;
			if (a == b)
				continue;
			gain = h0 - entropy(lp, la) - entropy(pos - lp, all - la);
			if (gain > best + 1e-12) {
				best = gain;
				bf = f;
				thr = (a + b) / 2;
			}
		}
	}
	if (bf < 0)
		return id;
	/* partition rows in place: left first */
	for (i = 0; i < m; i++)
		if (g->X[rows[i] * g->d + bf] <= thr) {
			int s = rows[nl];

			rows[nl++] = rows[i];
			rows[i] = s;
		}
	t->nodes[id].feat = bf;
	t->nodes[id].thr = thr;
	if ((k = grow(g, t, rows, nl, depth + 1)) < 0)
		return -1;
	t->nodes[id].left = k;
	if ((k = grow(g, t, rows + nl, m - nl, depth + 1)) < 0)
		return -1;
	t->nodes[id].right = k;
	return id;
}

Forest *
forest_fit(const double *X, int n, int d, const uint8_t *y, const double *w,
	   int ntrees, uint64_t seed)
{
	Forest *f = calloc(1, sizeof *f);
	Grow g = { .X = X, .y = y, .n = n, .d = d, .rng = seed };
	int *rows = malloc((size_t)(n ? n : 1) * sizeof *rows);
	int t, i, m;

	g.w = malloc((size_t)(n ? n : 1) * sizeof *g.w);
	g.order = malloc((size_t)(n ? n : 1) * sizeof *g.order);
	g.feats = malloc((size_t)(d ? d : 1) * sizeof *g.feats);
	g.mtry = d ? (int)fmax(1, floor(sqrt((double)d))) : 0;
	if (!f || !rows || !g.w || !g.order || !g.feats || d < 1 || n < 1 ||
	    !(f->trees = calloc((size_t)ntrees, sizeof *f->trees)))
		goto fail;
	f->ntrees = ntrees;
	f->d = d;
	for (t = 0; t < ntrees; t++) {
		for (i = 0; i < n; i++)
			g.w[i] = 0;
		for (i = 0; i < n; i++)
			g.w[tune_rand(&g.rng) % (uint64_t)n] += 1;
		for (i = m = 0; i < n; i++) {
			g.w[i] *= w ? w[i] : 1;
			if (g.w[i] > 0)
				rows[m++] = i;
		}
		if (grow(&g, &f->trees[t], rows, m, 0) < 0)
			goto fail;
	}
	free(rows);
	free(g.w);
	free(g.order);
	free(g.feats);
	return f;
fail:
	free(rows);
	free(g.w);
	free(g.order);
	free(g.feats);
	forest_free(f);
	return NULL;
}

static int
leaf(const Tree *t, const double *x)
{
	int k = 0;

	while (t->nodes[k].feat >= 0)
		k = x[t->nodes[k].feat] <= t->nodes[k].thr ? t->nodes[k].left
							    : t->nodes[k].right;
	return k;
}

double
forest_proba(const Forest *f, const double *x)
{
	double s = 0;
	int t;

	for (t = 0; t < f->ntrees; t++)
		s += f->trees[t].nodes[leaf(&f->trees[t], x)].p;
	return f->ntrees ? s / f->ntrees : 0;
}

void
forest_leaves(const Forest *f, const double *x, int *out)
{
	int t;

	for (t = 0; t < f->ntrees; t++)
		out[t] = leaf(&f->trees[t], x);
}

int
forest_ntrees(const Forest *f)
{
	return f->ntrees;
}

void
forest_free(Forest *f)
{
	int t;

	if (!f)
		return;
	for (t = 0; f->trees && t < f->ntrees; t++)
		free(f->trees[t].nodes);
	free(f->trees);
	free(f);
}
