/*
 * diag.c: user diagnostics in the GCC/Clang form
 *
 *     file:line:col: error: message
 *         the source line
 *                 ^~~~
 *
 * and clang's -verify mode, which checks `expected-error` comments in
 * the source against what was reported.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "support.h"

static const char *kind_name[] = { "error", "warning", "note" };

void
diag_init(Diag *d, Arena *a, const Source *src, FILE *out)
{
	memset(d, 0, sizeof *d);
	d->arena = a;
	d->src = src;
	d->out = out;
	d->max_errors = 20;
}

void
diag_render(const Diag *d, const DiagMsg *m, Buf *out)
{
	const char *name = d->src ? d->src->name : "<input>";
	const char *line;
	size_t len, i;
	int first, last;

	if (!m->has_loc) {
		buf_printf(out, "%s: %s: %s\n", name, kind_name[m->kind], m->msg);
		return;
	}
	buf_printf(out, "%s:%d:%d: %s: %s\n", name, m->range.first_line,
		   m->range.first_column, kind_name[m->kind], m->msg);
	line = src_line(d->src, m->range.first_line, &len);
	if (len > 400)
		len = 400;
	buf_puts(out, "    ");
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)line[i];

		buf_putc(out, c == '\t' || (c >= 0x20 && c < 0x7f) ? (char)c : '?');
	}
	buf_puts(out, "\n    ");
	first = m->range.first_column;
	last = m->range.last_line == m->range.first_line ? m->range.last_column
							 : (int)len;
	if (last < first)
		last = first;
	for (i = 1; i < (size_t)first && i <= len; i++)
		buf_putc(out, line[i - 1] == '\t' ? '\t' : ' ');
	buf_putc(out, '^');
	for (i = (size_t)first + 1; i <= (size_t)last && i <= len; i++)
		buf_putc(out, '~');
	buf_putc(out, '\n');
}

/* Was m (an error or a warning) reported already, at the same place? */
static bool
repeated(const Diag *d, const DiagMsg *m)
{
	uint32_t i;

	for (i = 0; i < d->msgs.n; i++) {
		const DiagMsg *o = &d->msgs.v[i];

		if (o->kind == m->kind && o->has_loc == m->has_loc &&
		    o->range.first_line == m->range.first_line &&
		    o->range.first_column == m->range.first_column &&
		    strcmp(o->msg, m->msg) == 0)
			return true;
	}
	return false;
}

void
diag_report(Diag *d, DiagKind k, SrcRange r, bool has_loc, const char *fmt,
	    va_list ap)
{
	DiagMsg m;

	if (k == DIAG_WARNING && d->werror)
		k = DIAG_ERROR;
	if (d->stopped)
		return;
	if (k == DIAG_ERROR && d->nerrors == d->max_errors) {
		d->stopped = true;
		if (d->out)
			fprintf(d->out, "%s: fatal error: too many errors "
				"emitted, stopping now\n",
				d->src ? d->src->name : "<input>");
		return;
	}
	m.kind = k;
	m.range = r;
	m.has_loc = has_loc && r.first_line > 0;
	m.msg = arena_vprintf(d->arena, fmt, ap);
	/* one construct checked several times (a task's replicas, a
	 * device function's instances) reports each problem once */
	if (k == DIAG_NOTE ? d->dropping : (d->dropping = repeated(d, &m)))
		return;
	vec_push(d->arena, &d->msgs, m);
	if (k == DIAG_ERROR)
		d->nerrors++;
	else if (k == DIAG_WARNING)
		d->nwarnings++;
	if (d->out) {
		Buf b = { 0 };

		diag_render(d, &m, &b);
		fputs(b.s, d->out);
		buf_free(&b);
	}
}

#define DEFINE_REPORT(fn, kind)                                              \
	void fn(Diag *d, SrcRange r, const char *fmt, ...)                   \
	{                                                                    \
		va_list ap;                                                  \
		va_start(ap, fmt);                                           \
		diag_report(d, kind, r, true, fmt, ap);                      \
		va_end(ap);                                                  \
	}
DEFINE_REPORT(diag_error, DIAG_ERROR)
DEFINE_REPORT(diag_warning, DIAG_WARNING)
DEFINE_REPORT(diag_note, DIAG_NOTE)

void
diag_error_noloc(Diag *d, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	diag_report(d, DIAG_ERROR, (SrcRange){ 0 }, false, fmt, ap);
	va_end(ap);
}

/* ---- -verify -------------------------------------------------------- */

typedef struct Expect {
	DiagKind kind;
	int line, col;  /* col 0: any */
	const char *text;
	size_t len;
	bool seen;
} Expect;

/* Parses `expected-KIND[@[+-]N[:C]] {{text}}` starting at p; returns the
 * position after it, or NULL when p does not start one. */
static const char *
parse_expect(const char *p, int line, Expect *e)
{
	static const char *names[] = { "expected-error", "expected-warning",
				       "expected-note" };
	size_t k;

	for (k = 0; k < countof(names); k++)
		if (strncmp(p, names[k], strlen(names[k])) == 0)
			break;
	if (k == countof(names))
		return NULL;
	e->kind = (DiagKind)k;
	e->line = line;
	e->col = 0;
	e->seen = false;
	p += strlen(names[k]);
	if (*p == '@') {
		int sign = 0;
		long v;
		char *end;

		p++;
		if (*p == '+' || *p == '-')
			sign = *p++ == '+' ? 1 : -1;
		v = strtol(p, &end, 10);
		if (end == p)
			return NULL;
		p = end;
		e->line = sign ? line + sign * (int)v : (int)v;
		if (*p == ':') {
			e->col = (int)strtol(p + 1, &end, 10);
			p = end;
		}
	}
	while (*p == ' ' || *p == '\t')
		p++;
	if (p[0] != '{' || p[1] != '{')
		return NULL;
	p += 2;
	e->text = p;
	while (*p && *p != '\n' && !(p[0] == '}' && p[1] == '}'))
		p++;
	if (p[0] != '}')
		return NULL;
	e->len = (size_t)(p - e->text);
	return p + 2;
}

bool
diag_verify(Diag *d, FILE *out)
{
	Vec(Expect) ex = { 0 };
	const char *p;
	int line = 1;
	uint32_t i, j;
	bool ok = true;

	if (!d->src)
		return d->msgs.n == 0;
	for (p = d->src->text; *p; p++) {
		Expect e;
		const char *q;

		if (*p == '\n') {
			line++;
			continue;
		}
		if (*p != 'e' || !(q = parse_expect(p, line, &e)))
			continue;
		vec_push(d->arena, &ex, e);
		p = q - 1;
	}
	for (i = 0; i < d->msgs.n; i++) {
		DiagMsg *m = &d->msgs.v[i];
		bool found = false;

		for (j = 0; j < ex.n && !found; j++) {
			Expect *e = &ex.v[j];

			if (e->seen || e->kind != m->kind)
				continue;
			if (m->has_loc ? e->line != m->range.first_line
				       : e->line != 0)
				continue;
			if (e->col && e->col != m->range.first_column)
				continue;
			if (!strstr(m->msg, arena_strndup(d->arena, e->text,
							  e->len)))
				continue;
			e->seen = found = true;
		}
		if (!found) {
			ok = false;
			fprintf(out, "%s:%d:%d: %s seen but not expected: %s\n",
				d->src->name, m->range.first_line,
				m->range.first_column, kind_name[m->kind],
				m->msg);
		}
	}
	for (j = 0; j < ex.n; j++) {
		if (ex.v[j].seen)
			continue;
		ok = false;
		fprintf(out, "%s:%d:%d: %s expected but not seen: %.*s\n",
			d->src->name, ex.v[j].line, ex.v[j].col,
			kind_name[ex.v[j].kind], (int)ex.v[j].len, ex.v[j].text);
	}
	return ok;
}
