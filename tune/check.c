/*
 * check.c: static rejection (driver.h) -- libtlxtune's validity test of a
 * configuration before it is evaluated: the session's predicate
 * (tlx_tune_set_valid), the constraints of the kernel's tune(...)
 * (tlx_tune_space_check, a parse), then the compiler's own checks
 * (tlx_check: the front end, the passes and codegen's checks, no LLVM;
 * not on the synthetic backend, which compiles nothing), in milliseconds.
 * A configuration that fails one is never compiled; the search sees it as
 * a failure.  Each configuration is checked once (a hash table of
 * verdicts: the search asks again), and every rejection is kept with its
 * reason for the report.
 */
#include "config.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tune/driver.h"

void
tune_check_free(TuneCheck *c)
{
	if (!c)
		return;
	for (int i = 0; i < c->nrej; i++)
		free(c->rej[i].why);
	free(c->rej);
	free(c->cfgs);
	free(c->ok);
	free(c->tab);
	tlx_tune_space_destroy(c->ts);
	tlx_ctx_destroy(c->ctx);
	free(c);
}

int
tune_check_begin(tlx_tune *T)
{
	TuneCheck *c;
	tlx_options o = { 0 };
	int nc = 0;

	tune_check_free(T->check);
	if (!(T->check = c = calloc(1, sizeof *c)))
		return TLX_NOMEM;
	c->np = T->np;
	if (tlx_ctx_create(NULL, NULL, &c->ctx))
		return TLX_NOMEM;
	o.name = T->name;
	o.defines = (const char *const *)T->defs;
	o.ndefines = T->ndefs;
	/* a space with mistakes: no constraints (the default configuration
	 * says what is wrong) */
	if (tlx_tune_space_create(c->ctx, T->src, T->srclen, &o, T->kernel,
				  &c->ts) == TLX_OK)
		tlx_tune_space_num_constraints(c->ts, &nc);
	if (!nc) {
		tlx_tune_space_destroy(c->ts);
		c->ts = NULL;
	}
	return TLX_OK;
}

static uint32_t
cfg_hash(const int *cfg, int np)
{
	uint64_t h = 0x9e3779b97f4a7c15ull;

	for (int i = 0; i < np; i++)
		h = (h ^ (uint64_t)(uint32_t)cfg[i]) * 0xff51afd7ed558ccdull;
	return (uint32_t)(h >> 32);
}

/* The slot of cfg in the table (its index + 1, or 0: absent). */
static int *
find(TuneCheck *c, const int *cfg)
{
	uint32_t mask = (uint32_t)c->tabcap - 1;

	for (uint32_t i = cfg_hash(cfg, c->np) & mask;; i = (i + 1) & mask) {
		int k = c->tab[i] - 1;

		if (k < 0 || !memcmp(c->cfgs + (size_t)k * c->np, cfg,
				     (size_t)c->np * sizeof *cfg))
			return &c->tab[i];
	}
}

/* Room for one more verdict; false when out of memory. */
static bool
grow(TuneCheck *c)
{
	if (c->n == c->cap) {
		int cap = c->cap ? 2 * c->cap : 64;
		int *cf = realloc(c->cfgs, (size_t)cap * (size_t)c->np * sizeof *cf);
		bool *ok;

		if (!cf)
			return false;
		c->cfgs = cf;
		if (!(ok = realloc(c->ok, (size_t)cap * sizeof *ok)))
			return false;
		c->ok = ok;
		c->cap = cap;
	}
	if (2 * (c->n + 1) > c->tabcap) {
		int cap = c->tabcap ? 2 * c->tabcap : 128;
		int *tab = calloc((size_t)cap, sizeof *tab), *old = c->tab;

		if (!tab)
			return false;
		c->tab = tab;
		c->tabcap = cap;
		for (int i = 0; i < c->n; i++)
			*find(c, c->cfgs + (size_t)i * c->np) = i + 1;
		free(old);
	}
	return true;
}

/* Records that cfg is rejected: by (TLX_TUNE_BY_*), msg's first line. */
static void
reject(tlx_tune *T, const int *cfg, int by, const char *msg)
{
	TuneCheck *c = T->check;
	size_t n = strcspn(msg, "\n");
	Reject *r;

	c->count[by]++;
	if (c->nrej == c->caprej) {
		int cap = c->caprej ? 2 * c->caprej : 16;
		Reject *nr = realloc(c->rej, (size_t)cap * sizeof *nr);

		if (!nr)
			return;
		c->rej = nr;
		c->caprej = cap;
	}
	r = &c->rej[c->nrej];
	if (!(r->why = malloc(n + 1)))
		return;
	memcpy(r->why, msg, n);
	r->why[n] = 0;
	for (int i = 0; i < T->np; i++) {
		r->cfg[i] = cfg[i];
		r->values[i] = T->params[i].v[cfg[i]];
	}
	r->by = by;
	c->nrej++;
}

/* Checks cfg (not seen before): the predicate, the constraints, then the
 * compiler's checks. */
static bool
check(tlx_tune *T, const int *cfg)
{
	TuneCheck *c = T->check;
	const char *defs[MAXD + MAXP];
	char store[MAXP][96];
	int64_t v[MAXP];
	tlx_options o = { 0 };
	int n = 0, ok = 1, rc;

	for (int i = 0; i < T->ndefs; i++)
		defs[n++] = T->defs[i];
	for (int i = 0; i < T->np; i++) {
		v[i] = T->params[i].v[cfg[i]];
		snprintf(store[i], sizeof store[i], "%s=%lld",
			 T->params[i].name, (long long)v[i]);
		defs[n++] = store[i];
	}
	if (T->valid && !T->valid(T->valid_ud, v)) {
		reject(T, cfg, TLX_TUNE_BY_PREDICATE, "the validity predicate "
		       "rejects it");
		return false;
	}
	if (c->ts) {
		rc = tlx_tune_space_check(c->ctx, c->ts, defs + T->ndefs,
					  T->np, &ok);
		if (rc == TLX_COMPILE || (rc == TLX_OK && !ok)) {
			reject(T, cfg, TLX_TUNE_BY_CONSTRAINT,
			       tlx_errmsg(c->ctx));
			return false;
		}
	}
	if (T->o.backend == TLX_TUNE_SYNTHETIC)
		return true;
	o.name = T->name;
	o.defines = defs;
	o.ndefines = n;
	if (tlx_check(c->ctx, T->src, T->srclen, &o) == TLX_COMPILE) {
		reject(T, cfg, TLX_TUNE_BY_COMPILER, tlx_errmsg(c->ctx));
		return false;
	}
	return true;  /* or out of memory: the evaluation will tell */
}

bool
tune_check_valid(tlx_tune *T, const int *cfg)
{
	TuneCheck *c = T->check;
	int *slot;
	double t0;
	bool ok;

	if (c->tabcap && *(slot = find(c, cfg)))
		return c->ok[*slot - 1];
	if (!grow(c))
		return true;
	memcpy(c->cfgs + (size_t)c->n * c->np, cfg, (size_t)c->np * sizeof *cfg);
	*find(c, cfg) = ++c->n;
	t0 = tune_now();
	ok = check(T, cfg);
	c->seconds += tune_now() - t0;
	c->ok[c->n - 1] = ok;
	return ok;
}
