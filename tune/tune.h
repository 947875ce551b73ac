/*
 * tune.h: the search of tlx-tune -- likelihood-free Bayesian optimization
 * (LFBO) pattern search over a discrete space of const parameters, plus
 * exhaustive and random search to compare it with.  docs/tuning.md has
 * the algorithm; ../shared/reference/autotuning.md its source.
 *
 * A space is a list of parameters, each an ascending list of integer
 * values; a configuration is one value index per parameter.  The caller
 * evaluates batches of configurations (compile and time them, in tlx-tune;
 * a synthetic landscape in the tests): lower is better, INFINITY a
 * failure (it did not compile, crashed, timed out or was wrong).
 */
#ifndef TLX_TUNE_H
#define TLX_TUNE_H
#include <stdbool.h>
#include <stdint.h>

typedef struct TuneParam {
	const char *name;
	const int64_t *values;  /* ascending */
	int n;
} TuneParam;

typedef struct TuneSpace {
	const TuneParam *params;
	int n;
} TuneSpace;

/* Writes the value of each of the count configurations (cfgs: count x
 * space->n value indices) into out. */
typedef void (*TuneEval)(void *ud, const int *cfgs, int count, double *out);
/* A cost model's estimates of the count configurations (lower is
 * better; INFINITY: none), into out: it orders the first candidates. */
typedef void (*TunePrior)(void *ud, const int *cfgs, int count, double *out);
/* Statically valid?  (NULL: all are.)  Invalid ones are never evaluated
 * and count as failures for the model. */
typedef bool (*TuneValid)(void *ud, const int *cfg);

typedef struct TuneOpts {
	uint64_t seed;
	int initial;       /* random configurations to start from (100) */
	int copies;        /* searches from the best of them (5) */
	int generations;   /* (20) */
	int neighbors;     /* candidates per copy and generation (300) */
	double frac;       /* of the candidates evaluated (0.10) */
	double quantile;   /* the "good" threshold's quantile (0.10) */
	int patience;      /* generations without improvement (1) */
	int trees;         /* of the random forest (100) */
	int max_evals;     /* a budget of evaluations (0: none) */
	const int *start;  /* a configuration evaluated first (the default) */
	TunePrior prior;   /* NULL, or: half the initial population is the
			      best by the prior of 3 x `initial` random
			      configurations (the other half random) */
} TuneOpts;

typedef struct TuneResult {
	int *best;          /* value indices (malloc'd; tune_result_free) */
	double value;       /* INFINITY when every evaluation failed */
	int evals;          /* configurations evaluated */
} TuneResult;

void tune_opts_default(TuneOpts *o);
/* 0, or -1 when out of memory or the space is empty. */
int tune_lfbo(const TuneSpace *s, TuneEval ev, TuneValid valid, void *ud,
	      const TuneOpts *o, TuneResult *r);
/* prior: NULL, or every configuration is evaluated in the order of its
 * estimate (spaces of at most 65536 configurations). */
int tune_exhaustive(const TuneSpace *s, TuneEval ev, TuneValid valid, void *ud,
		    TunePrior prior, TuneResult *r);
int tune_random(const TuneSpace *s, TuneEval ev, TuneValid valid, void *ud,
		int count, uint64_t seed, TuneResult *r);
void tune_result_free(TuneResult *r);

/* splitmix64: the search's and the forest's random numbers */
static inline uint64_t
tune_rand(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* ---- the classifier (forest.c) ------------------------------------------- */

typedef struct Forest Forest;

/* A random forest classifier (bootstrap samples, sqrt(d) features tried
 * per split, weighted entropy) on n rows of d features with labels y and
 * sample weights w; NULL when out of memory. */
Forest *forest_fit(const double *X, int n, int d, const uint8_t *y,
		   const double *w, int ntrees, uint64_t seed);
/* P(positive | x): the mean of the trees' leaf fractions. */
double forest_proba(const Forest *f, const double *x);
/* The leaf x lands in, per tree (ntrees ints). */
void forest_leaves(const Forest *f, const double *x, int *leaf);
int forest_ntrees(const Forest *f);
void forest_free(Forest *f);

#endif
