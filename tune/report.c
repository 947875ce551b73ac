/*
 * report.c: the tuner's output (driver.h): the JSON report, an SVG plot
 * of the search (plain SVG text: the best cost so far against the
 * evaluations and against wall time, every working evaluation a dot), and
 * the progress line.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tune/driver.h"

void
tune_progress(tlx_tune *T)
{
	double best = INFINITY, t = tune_now() - T->t0;

	for (int i = 0; i < T->nevals; i++)
		if (T->evals[i].cost < best)
			best = T->evals[i].cost;
	fprintf(stderr, "\r[%d evaluated", T->nevals);
	if (T->max_evals > 0)
		fprintf(stderr, " of %d", T->max_evals);
	fprintf(stderr, ", %.1fs", t);
	if (T->o.budget > 0)
		fprintf(stderr, ", %.0fs left", fmax(0, T->o.budget - t));
	fprintf(stderr, "] best %g   ", best);
}

static void
json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", *s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

static void
json_cfg(FILE *f, const tlx_tune *T, const int *cfg)
{
	fputc('{', f);
	for (int i = 0; i < T->np; i++) {
		fprintf(f, "%s", i ? ", " : "");
		json_str(f, T->params[i].name);
		fprintf(f, ": %lld", (long long)T->params[i].v[cfg[i]]);
	}
	fputc('}', f);
}

static void
json_cost(FILE *f, double c)
{
	if (isfinite(c))
		fprintf(f, "%.9g", c);
	else
		fprintf(f, "null");
}

static const char *const by_name[] = { "predicate", "constraint",
				       "compiler" };

/* The static checks: configurations rejected before compiling. */
static void
json_checks(FILE *f, const tlx_tune *T)
{
	int rej[3];
	int checked;
	double s;

	tlx_tune_get_checks((tlx_tune *)T, &checked, rej, &s);
	fprintf(f, ",\n  \"rejected\": %d,\n  \"rejected_by_constraint\": %d,"
		"\n  \"rejected_by_compiler\": %d,\n  \"rejected_by_predicate\": "
		"%d,\n  \"checked\": %d,\n  \"check_s\": %.3f",
		rej[0] + rej[1] + rej[2], rej[TLX_TUNE_BY_CONSTRAINT],
		rej[TLX_TUNE_BY_COMPILER], rej[TLX_TUNE_BY_PREDICATE], checked, s);
}

static int
close_report(tlx_tune *T, FILE *f, const char *path)
{
	if (ferror(f) | fclose(f))
		return tune_errf(T, TLX_IO, "cannot write '%s'", path);
	return TLX_OK;
}

int
tlx_tune_write_json(tlx_tune *T, const char *path)
{
	static const char *const sk[] = { "lfbo", "exhaustive", "random" };
	static const char *const bk[] = { "sim", "cuda", "synthetic" };
	FILE *f;

	if (!T || !path)
		return TLX_MISUSE;
	if (!(f = fopen(path, "w")))
		return tune_errf(T, TLX_IO, "cannot write '%s': %s", path,
				 strerror(errno));
	fprintf(f, "{\n  \"input\": ");
	json_str(f, T->name);
	fprintf(f, ",\n  \"kernel\": ");
	json_str(f, T->kernel);
	fprintf(f, ",\n  \"search\": \"%s\",\n  \"backend\": \"%s\",\n"
		"  \"seed\": %llu,\n  \"device\": ", sk[T->o.search],
		bk[T->o.backend], (unsigned long long)T->o.seed);
	json_str(f, T->device);
	fprintf(f, ",\n  \"prior\": %s,\n  \"effort\": \"%s\",\n"
		"  \"budgets\": {\"initial\": %d, \"max_evals\": %d, "
		"\"repeats\": %d, \"repeat_ms\": %g, \"finalists\": %d, "
		"\"rounds\": %d, \"confirm\": %s}",
		T->o.prior ? "true" : "false", tune_effort_name(T->o.effort),
		T->initial, T->max_evals, T->repeats, T->o.repeat_ms,
		T->finalists, T->rounds, T->confirm ? "true" : "false");
	fprintf(f, ",\n  \"shape\": ");
	json_str(f, T->shape);
	fprintf(f, ",\n  \"jobs\": %d,\n  \"devices\": [", T->jobs);
	for (int d = 0; d < T->ndev; d++)
		fprintf(f, "%s{\"device\": %d, \"evaluated\": %d}",
			d ? ", " : "", T->devs[d], T->dev_evals[d]);
	fprintf(f, "],\n  \"cost_unit\": ");
	json_str(f, T->cost_unit ? T->cost_unit : "");
	fprintf(f, ",\n  \"wall_s\": %.3f,\n  \"evaluated\": %d,\n"
		"  \"skipped\": %d,\n  \"default_cost\": ", T->wall, T->nevals,
		T->nskipped);
	json_cost(f, T->ref ? T->default_cost : INFINITY);
	fprintf(f, ",\n  \"default_retimed\": ");
	json_cost(f, T->default_retimed);
	json_checks(f, T);
	fprintf(f, ",\n  \"cached\": ");
	if (T->ncached)
		json_cfg(f, T, T->cached);
	else
		fprintf(f, "null");
	fprintf(f, ",\n  \"best\": ");
	if (T->has_best) {
		fprintf(f, "{\"config\": ");
		json_cfg(f, T, T->best);
		fprintf(f, ", \"cost\": ");
		json_cost(f, T->best_cost);
		fprintf(f, "}");
	} else {
		fprintf(f, "null");
	}
	fprintf(f, ",\n  \"retime\": \"%s\",\n  \"finalists\": [",
		T->nfin ? tlx_tune_status_name(T->retime_status) : "none");
	for (int i = 0; i < T->nfin; i++) {
		fprintf(f, "%s\n    {\"config\": ", i ? "," : "");
		json_cfg(f, T, T->fin[i].cfg);
		fprintf(f, ", \"cost\": ");
		json_cost(f, T->fin_search[i]);
		fprintf(f, ", \"retimed\": ");
		json_cost(f, T->retime_status == TLX_TUNE_OK ? T->fin[i].cost
							      : INFINITY);
		fprintf(f, "}");
	}
	fprintf(f, "%s],\n  \"evaluations\": [", T->nfin ? "\n  " : "");
	for (int i = 0; i < T->nevals; i++) {
		const Eval *e = &T->evals[i];

		fprintf(f, "%s\n    {\"config\": ", i ? "," : "");
		json_cfg(f, T, e->cfg);
		fprintf(f, ", \"status\": \"%s\", \"cost\": ",
			tlx_tune_status_name(e->status));
		json_cost(f, e->cost);
		fprintf(f, ", \"device\": ");
		if (e->device < 0)
			fprintf(f, "null");
		else
			fprintf(f, "%d", e->device);
		if (T->o.prior) {
			fprintf(f, ", \"prior\": ");
			json_cost(f, tune_prior_of(T, e->cfg));
		}
		if (T->o.repeat_ms > 0)
			fprintf(f, ", \"runs\": %d", e->runs);
		if (e->confirmed) {
			fprintf(f, ", \"confirmed\": true, \"first\": ");
			json_cost(f, e->first);
		}
		fputc('}', f);
	}
	fprintf(f, "\n  ],\n  \"rejections\": [");
	for (int i = 0; T->check && i < T->check->nrej; i++) {
		const Reject *x = &T->check->rej[i];

		fprintf(f, "%s\n    {\"config\": ", i ? "," : "");
		json_cfg(f, T, x->cfg);
		fprintf(f, ", \"by\": \"%s\", \"why\": ", by_name[x->by]);
		json_str(f, x->why);
		fputc('}', f);
	}
	fprintf(f, "\n  ]\n}\n");
	return close_report(T, f, path);
}

/* ---- the plot ------------------------------------------------------------ */

enum { PW = 420, PH = 300, ML = 70, MT = 40, GAP = 60 };

typedef struct Axis {
	double lo, hi;
	int log;
} Axis;

static double
axis_pos(const Axis *a, double v, double len)
{
	double x = a->log ? (log10(v) - log10(a->lo)) / (log10(a->hi) - log10(a->lo))
			  : (v - a->lo) / (a->hi - a->lo);

	return x * len;
}

/* One panel at x0: the dots and the best-so-far steps against x (the
 * evaluation number, or its time). */
static void
panel(FILE *f, const tlx_tune *T, int x0, int bytime, const Axis *ya)
{
	Axis xa = { bytime ? 0 : 1, 1, 0 };
	double best = INFINITY;
	int first = 1;

	for (int i = 0; i < T->nevals; i++)
		xa.hi = fmax(xa.hi, bytime ? T->evals[i].t : i + 1);
	if (xa.hi <= xa.lo)
		xa.hi = xa.lo + 1;
	fprintf(f, "<g class=\"panel\" id=\"%s\" transform=\"translate(%d,%d)\">\n",
		bytime ? "by-time" : "by-evaluation", x0, MT);
	fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" "
		"fill=\"none\" stroke=\"#888\"/>\n", PW, PH);
	fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%s</text>\n",
		PW / 2, PH + 36, bytime ? "wall time (s)" : "evaluations");
	fprintf(f, "<text x=\"0\" y=\"%d\">%g</text><text x=\"%d\" y=\"%d\" "
		"text-anchor=\"end\">%g</text>\n", PH + 16, xa.lo, PW, PH + 16,
		xa.hi);
	fprintf(f, "<text x=\"-6\" y=\"%d\" text-anchor=\"end\">%.4g</text>"
		"<text x=\"-6\" y=\"10\" text-anchor=\"end\">%.4g</text>\n", PH,
		ya->lo, ya->hi);
	for (int i = 0; i < T->nevals; i++) {
		const Eval *e = &T->evals[i];
		double x = axis_pos(&xa, bytime ? e->t : i + 1, PW);

		if (e->status != TLX_TUNE_OK)
			continue;
		fprintf(f, "<circle class=\"eval\" cx=\"%.1f\" cy=\"%.1f\" "
			"r=\"2.5\" fill=\"#9ab\"><title>%d: %.6g</title>"
			"</circle>\n", x, PH - axis_pos(ya, e->cost, PH), i + 1,
			e->cost);
	}
	fprintf(f, "<polyline class=\"best\" fill=\"none\" stroke=\"#c22\" "
		"stroke-width=\"2\" points=\"");
	for (int i = 0; i < T->nevals; i++) {
		const Eval *e = &T->evals[i];
		double x = axis_pos(&xa, bytime ? e->t : i + 1, PW);

		if (!(e->cost < best))
			continue;
		if (!first)  /* a step: across at the old best, then down */
			fprintf(f, "%.1f,%.1f ", x, PH - axis_pos(ya, best, PH));
		best = e->cost;
		fprintf(f, "%.1f,%.1f ", x, PH - axis_pos(ya, best, PH));
		first = 0;
	}
	if (!first)
		fprintf(f, "%d,%.1f", PW, PH - axis_pos(ya, best, PH));
	fprintf(f, "\"/>\n</g>\n");
}

int
tlx_tune_write_svg(tlx_tune *T, const char *path)
{
	Axis ya = { INFINITY, -INFINITY, 0 };
	FILE *f;
	int n = 0;

	if (!T || !path)
		return TLX_MISUSE;
	if (!(f = fopen(path, "w")))
		return tune_errf(T, TLX_IO, "cannot write '%s': %s", path,
				 strerror(errno));
	for (int i = 0; i < T->nevals; i++)
		if (T->evals[i].status == TLX_TUNE_OK) {
			ya.lo = fmin(ya.lo, T->evals[i].cost);
			ya.hi = fmax(ya.hi, T->evals[i].cost);
			n++;
		}
	if (!n) {
		ya.lo = 0;
		ya.hi = 1;
	}
	/* a logarithmic axis where the costs span more than 20x */
	ya.log = ya.lo > 0 && ya.hi > 20 * ya.lo;
	if (ya.hi <= ya.lo)
		ya.hi = ya.lo + (ya.lo > 0 ? ya.lo * 0.1 : 1);
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
		"height=\"%d\" font-family=\"sans-serif\" font-size=\"12\">\n",
		ML + 2 * PW + GAP + 20, MT + PH + 50);
	fprintf(f, "<title>tlx-tune: %s (%d evaluated, %d ok)</title>\n",
		T->kernel, T->nevals, n);
	fprintf(f, "<text x=\"%d\" y=\"20\" font-size=\"14\">%s: the best "
		"cost (%s%s) so far</text>\n", ML, T->kernel,
		T->cost_unit ? T->cost_unit : "", ya.log ? ", log scale" : "");
	panel(f, T, ML, 0, &ya);
	panel(f, T, ML + PW + GAP, 1, &ya);
	fprintf(f, "</svg>\n");
	return close_report(T, f, path);
}
