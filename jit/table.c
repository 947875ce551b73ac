/*
 * table.c: tables of tuned configurations by shape (tlx_table_*, the
 * public API of include/tlx/tlx.h; docs/tuning.md, "Tables by shape").
 *
 * table_parse and table_load are libtlx's tlx_table_parse and
 * tlx_table_load (jit/tlx.c) less the context, for tlxc.
 *
 * tlx-tune --table FILE writes a kernel's winner for one shape as a line
 *
 *     KERNEL NAME=INT ... : NAME=VALUE ...   # cost, device (a comment)
 *
 * the integer scalar arguments it was tuned with, a colon, then the const
 * parameters to compile with (the -D flags).  '#' starts a comment; blank
 * lines are skipped.  tlx_table_pick finds the entry of a kernel for a
 * shape: the one with exactly those values, else (unless TLX_TABLE_EXACT)
 * the nearest one with the same names, by the sum over the names of
 * |log2 a - log2 b| (values below 1 count as 1), the first in the file
 * on a tie.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "jit/jit.h"
#include "tlx/tlx.h"

typedef struct Entry {
	char *kernel;
	char **names;      /* the shape's */
	long long *values;
	int nshape;
	char **defs;       /* "NAME=VALUE" */
	int ndefs;
	char *text;        /* the tokens, which the pointers above point into */
} Entry;

struct tlx_table {
	Entry *e;
	int n, cap;
};

TLX_API void
tlx_table_destroy(tlx_table *t)
{
	if (!t)
		return;
	for (int i = 0; i < t->n; i++) {
		free(t->e[i].names);
		free(t->e[i].values);
		free(t->e[i].defs);
		free(t->e[i].text);
	}
	free(t->e);
	free(t);
}

/* NAME=...: a name, then '=' and something. */
static int
is_assign(const char *tok)
{
	size_t n = strcspn(tok, "=");

	return n > 0 && tok[n] == '=' && tok[n + 1];
}

/* One line's tokens (text: a writable copy of the line, comment cut
 * off) into *e; 0, or -1 with the reason in *why. */
static int
parse_line(char *text, Entry *e, const char **why)
{
	char *tok[256];
	int n = 0, colon = -1;

	for (char *s = strtok(text, " \t\r"); s; s = strtok(NULL, " \t\r")) {
		if (n == 256) {
			*why = "too many fields";
			return -1;
		}
		if (!strcmp(s, ":") && colon < 0)
			colon = n;
		tok[n++] = s;
	}
	if (colon < 1) {
		*why = "expected KERNEL NAME=INT ... : NAME=VALUE ...";
		return -1;
	}
	e->kernel = tok[0];
	e->nshape = colon - 1;
	e->ndefs = n - colon - 1;
	e->names = malloc((size_t)(e->nshape + 1) * sizeof *e->names);
	e->values = malloc((size_t)(e->nshape + 1) * sizeof *e->values);
	e->defs = malloc((size_t)(e->ndefs + 1) * sizeof *e->defs);
	if (!e->names || !e->values || !e->defs) {
		*why = NULL;
		return -1;
	}
	for (int i = 0; i < e->nshape; i++) {
		char *s = tok[1 + i], *eq = strchr(s, '='), *end;

		if (!is_assign(s)) {
			*why = "a shape is NAME=INT";
			return -1;
		}
		*eq = 0;
		e->names[i] = s;
		e->values[i] = strtoll(eq + 1, &end, 0);
		if (*end) {
			*why = "a shape's value must be an integer";
			return -1;
		}
		for (int j = 0; j < i; j++)
			if (!strcmp(e->names[j], s)) {
				*why = "a shape names a scalar twice";
				return -1;
			}
	}
	for (int i = 0; i < e->ndefs; i++) {
		e->defs[i] = tok[colon + 1 + i];
		if (!is_assign(e->defs[i])) {
			*why = "a configuration is NAME=VALUE";
			return -1;
		}
	}
	return 0;
}

int
table_parse(const char *name, const char *text, size_t len, tlx_table **out,
	    char *err, size_t errsize)
{
	tlx_table *t;
	int line = 0;

	*out = NULL;
	if (!(t = calloc(1, sizeof *t)))
		return TLX_NOMEM;
	for (size_t at = 0; at < len;) {
		size_t n = 0, body;
		const char *why = NULL;
		Entry *e;

		while (at + n < len && text[at + n] != '\n')
			n++;
		line++;
		body = 0;
		while (body < n && text[at + body] != '#')
			body++;
		if (t->n == t->cap) {
			int cap = t->cap ? 2 * t->cap : 16;
			Entry *ne = realloc(t->e, (size_t)cap * sizeof *ne);

			if (!ne) {
				tlx_table_destroy(t);
				return TLX_NOMEM;
			}
			t->e = ne;
			t->cap = cap;
		}
		e = &t->e[t->n];
		memset(e, 0, sizeof *e);
		if (!(e->text = malloc(body + 1))) {
			tlx_table_destroy(t);
			return TLX_NOMEM;
		}
		memcpy(e->text, text + at, body);
		e->text[body] = 0;
		at += n + 1;
		if (strspn(e->text, " \t\r") == body) {  /* blank */
			free(e->text);
			continue;
		}
		t->n++;
		if (parse_line(e->text, e, &why)) {
			tlx_table_destroy(t);
			if (!why)
				return TLX_NOMEM;
			snprintf(err, errsize, "%s:%d: error: %s",
				 name ? name : "<table>", line, why);
			return TLX_COMPILE;
		}
	}
	*out = t;
	return TLX_OK;
}

int
table_load(const char *path, tlx_table **out, char *err, size_t errsize)
{
	FILE *f;
	char *text = NULL;
	size_t len = 0, cap = 0;
	int rc;

	*out = NULL;
	if (!(f = fopen(path, "r"))) {
		snprintf(err, errsize, "cannot read '%s'", path);
		return TLX_IO;
	}
	for (;;) {
		size_t got;

		if (len == cap) {
			char *nt = realloc(text, cap = cap ? 2 * cap : 4096);

			if (!nt) {
				free(text);
				fclose(f);
				return TLX_NOMEM;
			}
			text = nt;
		}
		if (!(got = fread(text + len, 1, cap - len, f)))
			break;
		len += got;
	}
	if (ferror(f)) {
		snprintf(err, errsize, "cannot read '%s'", path);
		rc = TLX_IO;
	} else {
		rc = table_parse(path, text, len, out, err, errsize);
	}
	fclose(f);
	free(text);
	return rc;
}

static double
lg(long long v)
{
	return log2(v < 1 ? 1.0 : (double)v);
}

/* The distance of entry e from the shape (names, values; n of them), or
 * -1 when e has other names. */
static double
distance(const Entry *e, char *const *names, const long long *values, int n)
{
	double d = 0;

	if (e->nshape != n)
		return -1;
	for (int i = 0; i < n; i++) {
		int j = 0;

		while (j < n && strcmp(e->names[j], names[i]))
			j++;
		if (j == n)
			return -1;
		d += fabs(lg(e->values[j]) - lg(values[i]));
		if (e->values[j] != values[i] && d == 0)
			d = 1e-9;  /* different below 1: not exact */
	}
	return d;
}

TLX_API int
tlx_table_pick(tlx_table *t, const char *kernel, const char *const *shape,
	       int nshape, int flags, const char *const **defines,
	       int *ndefines, int *exact)
{
	char *names[256], buf[4096];
	long long values[256];
	const Entry *best = NULL;
	double bestd = 0;
	size_t used = 0;

	if (!t || !kernel || (nshape && !shape) || nshape < 0 ||
	    nshape > 256 || !defines || !ndefines)
		return TLX_MISUSE;
	for (int i = 0; i < nshape; i++) {
		size_t n = strlen(shape[i]) + 1;
		char *eq, *end;

		if (!is_assign(shape[i]) || used + n > sizeof buf)
			return TLX_MISUSE;
		names[i] = memcpy(buf + used, shape[i], n);
		used += n;
		eq = strchr(names[i], '=');
		*eq = 0;
		values[i] = strtoll(eq + 1, &end, 0);
		if (*end)
			return TLX_MISUSE;
	}
	for (int i = 0; i < t->n; i++) {
		const Entry *e = &t->e[i];
		double d;

		if (strcmp(e->kernel, kernel) ||
		    (d = distance(e, names, values, nshape)) < 0 ||
		    ((flags & TLX_TABLE_EXACT) && d > 0))
			continue;
		if (!best || d < bestd) {
			best = e;
			bestd = d;
		}
	}
	if (!best)
		return TLX_ERROR;
	*defines = (const char *const *)best->defs;
	*ndefines = best->ndefs;
	if (exact)
		*exact = bestd == 0;
	return TLX_OK;
}
