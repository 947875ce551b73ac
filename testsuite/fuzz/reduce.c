/*
 * reduce.c: delta debugging of a program that shows a finding, down to a
 * small program that still shows it -- the same kind and the same class
 * (fz_classify: the message with numbers and names blanked), so that a
 * mismatch does not turn into an unrelated compile error on the way.
 *
 * The generator writes one statement per line and each block's header,
 * "} else {" and closing brace on lines of their own, so a program is a
 * tree of units: a line, or a block (header .. closing brace) holding
 * units.  The "//!" lines, the kernel's header and its closing brace are
 * never removed.  Passes, repeated until none makes progress:
 *
 *   1. delete units: chunks of n consecutive units for n = half of them,
 *      a quarter, ... 1 (ddmin's complements, over the tree in order: a
 *      block deleted takes its units with it);
 *   2. unwrap blocks: keep a loop's or a branch's body without the block
 *      around it (for if/else: either branch);
 *   3. simplify lines: a var becomes a let, the right side of a typed
 *      let/var becomes 0 (false for i1), and a parenthesized "(a op b)"
 *      becomes a or b;
 *   4. drop the kernel parameters that nothing uses any more, with their
 *      "//!" lines (inputs are seeded by their names, so the others keep
 *      their data).
 * The result is indented again, four spaces a level.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"

typedef struct Line {
	char *text;      /* malloc'd, without the newline */
	bool alive, fixed;
	int close;       /* a block's header: the line of its closing brace */
	int mid;         /* "} else {" of an if header, or -1 */
} Line;

typedef struct Red {
	Line *l;
	int n;
	const FzResult *want;
	const FzReduceOpts *o;
	int tests, budget;
} Red;

static bool
starts(const char *s, const char *p)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return strncmp(s, p, strlen(p)) == 0;
}

static bool
ends_open(const char *s)
{
	size_t n = strlen(s);

	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	return n && s[n - 1] == '{';
}

static char *
text_of(const Red *R)
{
	size_t n = 1;
	char *s, *p;
	int i;

	for (i = 0; i < R->n; i++)
		if (R->l[i].alive)
			n += strlen(R->l[i].text) + 1;
	if (!(p = s = malloc(n)))
		return NULL;
	for (i = 0; i < R->n; i++)
		if (R->l[i].alive) {
			size_t k = strlen(R->l[i].text);

			memcpy(p, R->l[i].text, k);
			p[k] = '\n';
			p += k + 1;
		}
	*p = 0;
	return s;
}

/* Whether the program as it stands still fails as wanted. */
static bool
still_fails(Red *R)
{
	char *s = text_of(R);
	FzResult r;
	bool same;

	if (!s || R->tests >= R->budget) {
		free(s);
		return false;
	}
	R->tests++;
	R->o->test(R->o->ctx, s, strlen(s), &r);
	same = r.kind == R->want->kind && strcmp(r.cls, R->want->cls) == 0;
	if (R->o->verbose)
		fprintf(stderr, "reduce: test %d: %s%s\n", R->tests, r.cls,
			same ? " (kept)" : "");
	free(s);
	return same;
}

/* Matches braces: each header's close and else lines.  False when the
 * program is not made of such lines (it was not generated). */
static bool
structure(Red *R)
{
	int stack[256], sp = 0, i;
	bool kernel = false;

	for (i = 0; i < R->n; i++) {
		const char *t = R->l[i].text;

		R->l[i].close = R->l[i].mid = -1;
		if (starts(t, "//!"))
			R->l[i].fixed = true;
		if (starts(t, "kernel ")) {
			R->l[i].fixed = kernel = true;
		}
		if (starts(t, "}")) {
			if (!sp)
				return false;
			if (ends_open(t)) {  /* } else { */
				R->l[stack[sp - 1]].mid = i;
				continue;
			}
			R->l[stack[--sp]].close = i;
			if (sp == 0 && starts(R->l[stack[0]].text, "kernel "))
				R->l[i].fixed = true;
			continue;
		}
		if (ends_open(t)) {
			if (sp == 256)
				return false;
			stack[sp++] = i;
		}
	}
	return sp == 0 && kernel;
}

/* The units at any depth, in order: the start line of each (a block's
 * header, or a statement line); those inside the kernel or a function. */
static int
units(Red *R, int *u)
{
	int i, n = 0;

	for (i = 0; i < R->n; i++) {
		const char *t = R->l[i].text;

		if (!R->l[i].alive || R->l[i].fixed || starts(t, "}"))
			continue;
		u[n++] = i;
	}
	return n;
}

static int
unit_end(Red *R, int i)
{
	return R->l[i].close >= 0 ? R->l[i].close : i;
}

/* Kills the lines of units u[a..b); returns how many were alive. */
static int
kill_units(Red *R, const int *u, int a, int b)
{
	int k, i, changed = 0;

	for (k = a; k < b; k++)
		for (i = u[k]; i <= unit_end(R, u[k]); i++)
			if (R->l[i].alive && !R->l[i].fixed) {
				R->l[i].alive = false;
				changed++;
			}
	return changed;
}

static bool
pass_delete(Red *R)
{
	int *u = malloc(sizeof *u * (size_t)R->n), n, chunk, a;
	bool *saved = malloc(sizeof *saved * (size_t)R->n), progress = false;

	if (!u || !saved) {
		free(u);
		free(saved);
		return false;
	}
	n = units(R, u);
	for (chunk = n / 2 > 0 ? n / 2 : 1; chunk >= 1; chunk /= 2) {
		for (a = 0; a < n; a += chunk) {
			int b = a + chunk < n ? a + chunk : n, i;

			for (i = 0; i < R->n; i++)
				saved[i] = R->l[i].alive;
			if (!kill_units(R, u, a, b))
				continue;
			if (still_fails(R)) {
				progress = true;
				continue;
			}
			for (i = 0; i < R->n; i++)
				R->l[i].alive = saved[i];
		}
		n = units(R, u);
		if (chunk == 1)
			break;
	}
	free(u);
	free(saved);
	return progress;
}

/* Tries the program with the given lines dead. */
static bool
try_dead(Red *R, const int *lines, int nl)
{
	bool saved[8];
	int k;

	for (k = 0; k < nl; k++) {
		saved[k] = R->l[lines[k]].alive;
		R->l[lines[k]].alive = false;
	}
	if (still_fails(R))
		return true;
	for (k = 0; k < nl; k++)
		R->l[lines[k]].alive = saved[k];
	return false;
}

static void
kill_range(Red *R, int a, int b, bool *saved)
{
	int i;

	for (i = a; i <= b; i++) {
		saved[i] = R->l[i].alive;
		R->l[i].alive = false;
	}
}

static void
restore_range(Red *R, int a, int b, const bool *saved)
{
	int i;

	for (i = a; i <= b; i++)
		R->l[i].alive = saved[i];
}

static bool
pass_unwrap(Red *R)
{
	bool *saved = malloc(sizeof *saved * (size_t)R->n), progress = false;
	int h;

	if (!saved)
		return false;
	for (h = 0; h < R->n; h++) {
		Line *l = &R->l[h];
		int lines[2];

		if (!l->alive || l->fixed || l->close < 0 || starts(l->text, "fn "))
			continue;
		if (l->mid < 0 || !R->l[l->mid].alive) {
			lines[0] = h;
			lines[1] = l->close;
			progress |= try_dead(R, lines, 2);
			continue;
		}
		/* the then branch alone, then the else branch alone */
		kill_range(R, l->mid, l->close, saved);
		R->l[h].alive = false;
		if (still_fails(R)) {
			progress = true;
			continue;
		}
		restore_range(R, l->mid, l->close, saved);
		R->l[h].alive = true;
		kill_range(R, h, l->mid, saved);
		R->l[l->close].alive = false;
		if (still_fails(R)) {
			progress = true;
			continue;
		}
		restore_range(R, h, l->mid, saved);
		R->l[l->close].alive = true;
	}
	free(saved);
	return progress;
}

/* Replaces line i by t when the failure stays; frees whichever text is
 * not kept. */
static bool
try_text(Red *R, int i, char *t)
{
	char *old = R->l[i].text;

	R->l[i].text = t;
	if (still_fails(R)) {
		free(old);
		return true;
	}
	R->l[i].text = old;
	free(t);
	return false;
}

static char *
splice(const char *s, size_t a, size_t b, const char *mid, size_t mn)
{
	size_t n = strlen(s);
	char *t = malloc(n - (b - a) + mn + 1);

	if (!t)
		return NULL;
	memcpy(t, s, a);
	memcpy(t + a, mid, mn);
	memcpy(t + a + mn, s + b, n - b + 1);
	return t;
}

/* "let v: T = e;" -> "let v: T = 0;" */
static bool
simplify_rhs(Red *R, int i)
{
	const char *t = R->l[i].text, *colon, *eq;
	char *n;
	size_t k;

	if (!starts(t, "let ") && !starts(t, "var "))
		return false;
	if (!(colon = strchr(t, ':')) || !(eq = strstr(colon, " = ")))
		return false;
	k = strlen(t);
	if (k < 2 || t[k - 1] != ';')
		return false;
	{
		const char *ty = colon + 1, *z;
		size_t tn;

		while (*ty == ' ')
			ty++;
		tn = strcspn(ty, "[ =");
		z = tn == 2 && !strncmp(ty, "i1", 2) ? "false" : "0";
		if (strlen(eq + 3) == strlen(z) + 1 &&
		    !strncmp(eq + 3, z, strlen(z)))
			return false;  /* already */
		n = splice(t, (size_t)(eq + 3 - t), k - 1, z, strlen(z));
	}
	return n && try_text(R, i, n);
}

/* Tries each "(a op b)" of line i as a and as b; true on any progress. */
static bool
simplify_parens(Red *R, int i)
{
	static const char *const ops[] = {
		" + ", " - ", " * ", " / ", " % ", " & ", " | ", " ^ ", " << ",
		" >> ", " && ", " || ", " < ", " <= ", " > ", " >= ", " == ",
		" != ", NULL,
	};
	bool progress = false;
	size_t p;

	for (p = 0; R->l[i].text[p]; p++) {
		const char *t = R->l[i].text;
		size_t q, split = 0, oplen = 0;
		int depth = 0, k;

		if (t[p] != '(' || (p > 0 && ((t[p - 1] >= 'a' && t[p - 1] <= 'z') ||
					      (t[p - 1] >= '0' && t[p - 1] <= '9') ||
					      t[p - 1] == '_')))
			continue;  /* a call's parentheses */
		for (q = p; t[q]; q++) {
			if (t[q] == '(' || t[q] == '[')
				depth++;
			else if (t[q] == ')' || t[q] == ']') {
				if (--depth == 0)
					break;
			} else if (depth == 1 && !split) {
				for (k = 0; ops[k]; k++)
					if (!strncmp(t + q, ops[k], strlen(ops[k]))) {
						split = q;
						oplen = strlen(ops[k]);
						break;
					}
			}
		}
		if (!t[q] || !split)
			continue;
		/* (a op b) -> a, then -> b */
		if (try_text(R, i, splice(t, p, q + 1, t + p + 1, split - p - 1)) ||
		    try_text(R, i, splice(R->l[i].text, p, q + 1,
					  R->l[i].text + split + oplen,
					  q - split - oplen))) {
			progress = true;
			p = p > 0 ? p - 1 : 0;
		}
		if (R->tests >= R->budget)
			break;
	}
	return progress;
}

/* "var v" -> "let v" */
static bool
simplify_var(Red *R, int i)
{
	const char *t = R->l[i].text, *p = strstr(t, "var ");
	char *n;

	if (!starts(t, "var ") || !p)
		return false;
	n = splice(t, (size_t)(p - t), (size_t)(p - t) + 3, "let", 3);
	return n && try_text(R, i, n);
}

static bool
pass_simplify(Red *R)
{
	bool progress = false;
	int i;

	for (i = 0; i < R->n && R->tests < R->budget; i++) {
		if (!R->l[i].alive || R->l[i].fixed)
			continue;
		progress |= simplify_var(R, i);
		progress |= simplify_rhs(R, i);
		progress |= simplify_parens(R, i);
	}
	return progress;
}

static bool
ident_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_';
}

/* Whether the word w appears in s. */
static bool
has_word(const char *s, const char *w)
{
	size_t n = strlen(w);
	const char *p;

	for (p = s; (p = strstr(p, w)); p++)
		if ((p == s || !ident_char(p[-1])) && !ident_char(p[n]))
			return true;
	return false;
}

/* The kernel's header without parameter w, or NULL. */
static char *
drop_param(const char *h, const char *w)
{
	size_t n = strlen(w);
	const char *p, *e;

	for (p = h; (p = strstr(p, w)); p++)
		if ((p[-1] == '(' || p[-1] == ' ') && p[n] == ':')
			break;
	if (!p || !(e = strpbrk(p, ",)<")))
		return NULL;
	if (*e == '<' && (!(e = strchr(e, '>')) || !(e = strpbrk(e, ",)"))))
		return NULL;  /* "w: tma<T, 2>" */
	if (*e == ',')  /* "w: T, " */
		return splice(h, (size_t)(p - h), (size_t)(e + 2 - h), "", 0);
	if (p[-1] == ' ' && p[-2] == ',')  /* ", w: T)" */
		return splice(h, (size_t)(p - 2 - h), (size_t)(e - h), "", 0);
	return NULL;
}

static bool
pass_params(Red *R)
{
	int i, j, k = -1;
	bool progress = false;

	for (i = 0; i < R->n; i++)
		if (starts(R->l[i].text, "kernel "))
			k = i;
	if (k < 0)
		return false;
	for (i = 0; i < R->n && R->tests < R->budget; i++) {
		char name[64], *h;
		bool used = false;

		if (!R->l[i].alive || sscanf(R->l[i].text, "//! arg %63s", name) != 1)
			continue;
		for (j = 0; j < R->n && !used; j++)
			used = j != k && j != i && R->l[j].alive &&
			       !starts(R->l[j].text, "//!") &&
			       has_word(R->l[j].text, name);
		if (used || !(h = drop_param(R->l[k].text, name)))
			continue;
		R->l[i].alive = false;
		if (try_text(R, k, h))
			progress = true;
		else
			R->l[i].alive = true;
	}
	return progress;
}

/* Four spaces a level of braces. */
static void
reindent(Red *R)
{
	int i, depth = 0;

	for (i = 0; i < R->n; i++) {
		char *t = R->l[i].text, *n;
		const char *b = t;
		bool opens;

		if (!R->l[i].alive || starts(t, "//"))
			continue;
		while (*b == ' ' || *b == '\t')
			b++;
		if (*b == '}' && depth > 0)
			depth--;
		opens = ends_open(b);
		if ((n = malloc(strlen(b) + (size_t)depth * 4 + 1))) {
			memset(n, ' ', (size_t)depth * 4);
			strcpy(n + depth * 4, b);
			free(t);
			R->l[i].text = n;
		}
		if (opens)
			depth++;
	}
}

char *
fz_reduce(const char *src, const FzResult *want, const FzReduceOpts *o,
	  int *tests)
{
	Red R = { 0 };
	const char *p;
	char *out;
	int i, rounds;

	R.want = want;
	R.o = o;
	R.budget = 3000;
	for (p = src; *p; R.n++)
		p = strchr(p, '\n') ? strchr(p, '\n') + 1 : p + strlen(p);
	if (!(R.l = calloc((size_t)R.n + 1, sizeof *R.l)))
		return NULL;
	for (i = 0, p = src; i < R.n; i++) {
		const char *e = strchr(p, '\n');
		size_t n = e ? (size_t)(e - p) : strlen(p);

		R.l[i].text = strndup(p, n);
		R.l[i].alive = true;
		p += n + (e ? 1 : 0);
	}
	if (structure(&R)) {
		for (rounds = 0; rounds < 8 && R.tests < R.budget; rounds++) {
			bool progress = pass_delete(&R);

			progress |= pass_unwrap(&R);
			if (!progress)
				progress |= pass_simplify(&R);
			if (!progress)
				break;
		}
		pass_params(&R);
		reindent(&R);
	}
	out = text_of(&R);
	for (i = 0; i < R.n; i++)
		free(R.l[i].text);
	free(R.l);
	if (tests)
		*tests = R.tests;
	return out;
}
