/*
 * read.c: the textual IR back into memory -- a hand-written lexer and a
 * recursive-descent parser for exactly what print.c writes (docs/il.md
 * section 3).  Every problem is a user error at file:line:col; the first
 * one ends the parse (a longjmp to ir_read, which frees the scratch).
 *
 *   module   = ["module" STRING] {ALIAS "=" layout} func*
 *   func     = ("kernel" | "func" | "grid") FNAME "(" [param {"," param}] ")"
 *              ["->" "(" [type {"," type}] ")"] [attrs] [LOC] body
 *   param    = VALUE ":" type
 *   body     = "{" op* "}"
 *   region   = "{" ["^" "(" [param {"," param}] ")" ":"] op* "}"
 *   op       = [VALUE ":" type {"," VALUE ":" type} "="] WORD
 *              [VALUE {"," VALUE}] [attrs] region* [LOC]
 *   attrs    = "{" WORD "=" value {"," WORD "=" value} "}"
 *   value    = INT | FLOAT | STRING | WORD | "[" [INT {"," INT}] "]" | "!" type
 *   type     = scalar | "ptr" "<" type ["," INT] ">"
 *            | ("tile" | "smem") "<" DIMS type ["," layout] ">"   (smem: a swizzle)
 *            | "mbar" ["<" INT ">"]
 *            | "tma" "<" (DIMS type ["," layout] | type "," INT) ">"  (a swizzle)
 *            | "pipe" | "sched"
 *   layout   = ALIAS | "blocked" "<" ints "," "vec" "=" INT "," "order" "=" ints
 *              "," "warps" "=" INT ">" | "slice" "<" layout "," "dim" "=" INT ">"
 *            | ("mma" | "wgmma") "<" ints "," "warps" "=" INT ">"
 *            | "linear" "<" ints "," "reg" "=" bases "," "lane" "=" bases ","
 *              "warp" "=" bases ["," "parent" "=" layout "," "dim" "=" INT] ">"
 *            | "swizzle" "<" INT ["," ("shift" "=" INT | "tiled")] ">"
 *   ints     = "[" INT {"," INT} "]"      bases = "[" [ints {"," ints}] "]"
 *
 * Tokens: VALUE is %name, FNAME @name, ALIAS #name, LOC @line:col, DIMS "4x8x" (digits
 * each followed by 'x').  A `{` opens attributes only when a word and `=`
 * follow (the printer never writes an empty attribute list), else a
 * region.  Operands stop at a value followed by `:` (the next op's
 * result), so the reader needs no newlines.  Values must be defined
 * before their uses in text order; names are unique in their function.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>

#include "ir.h"

enum {
	MAX_NESTING = 256,    /* regions inside regions */
	MAX_TYPE_DEPTH = 16,  /* types inside types */
};
#define MAX_DIM ((int64_t)1 << 31)

typedef enum Tok {
	T_EOF, T_WORD, T_VALUE, T_FNAME, T_LOC, T_INT, T_FLOAT, T_STRING,
	T_DIMS, T_LPAREN, T_RPAREN, T_LBRACE, T_RBRACE, T_LBRACK, T_RBRACK,
	T_LT, T_GT, T_COMMA, T_COLON, T_EQ, T_BANG, T_CARET, T_ARROW,
	T_ALIAS,
} Tok;

static const char *tok_text[] = {
	"end of file", "word", "value", "function name", "location",
	"integer", "float", "string", "dimensions", "'('", "')'", "'{'",
	"'}'", "'['", "']'", "'<'", "'>'", "','", "':'", "'='", "'!'",
	"'^'", "'->'", "layout alias",
};

typedef struct Token {
	Tok kind;
	const char *s;     /* where it starts in the text */
	uint32_t len;
	int line, col;
	int64_t i, i2;     /* T_INT; T_LOC line and column */
	double f;          /* T_FLOAT */
	const char *name;  /* T_WORD, T_VALUE, T_FNAME (interned), T_STRING */
	int64_t dims[TY_MAX_RANK];
	int ndims;         /* T_DIMS */
} Token;

/* Interned name -> value (or function index + 1); open addressing. */
typedef struct NameMap {
	const char **keys;
	uint32_t *vals;
	uint32_t n, cap;
} NameMap;

typedef struct Lexer {
	const char *cur, *end, *bol;
	int line;
} Lexer;

typedef struct Parser {
	IrCtx *c;
	Diag *d;
	Lexer lx;
	Token tok;
	jmp_buf fail;
	Arena scratch;
	Module *m;
	Func *f;
	NameMap funcs, vals, aliases;
	Vec(const Layout *) layouts;  /* the aliases' layouts */
	int depth;
	bool oom;
} Parser;

/* ---- errors --------------------------------------------------------- */

static TLX_NORETURN void
fail_at(Parser *p, int line, int col, int len, const char *fmt, ...)
	TLX_PRINTF(5, 6);

static TLX_NORETURN void
fail_at(Parser *p, int line, int col, int len, const char *fmt, ...)
{
	SrcRange r = { line, col, line, col + (len > 1 ? len - 1 : 0) };
	va_list ap;

	va_start(ap, fmt);
	diag_report(p->d, DIAG_ERROR, r, true, fmt, ap);
	va_end(ap);
	longjmp(p->fail, 1);
}

#define fail_tok(p, t, ...) fail_at((p), (t)->line, (t)->col, (int)(t)->len, __VA_ARGS__)
#define fail(p, ...) fail_tok((p), &(p)->tok, __VA_ARGS__)

/* How a token reads in a message: its text, or its kind at end of file. */
static const char *
tok_desc(Parser *p, const Token *t)
{
	if (t->kind == T_EOF)
		return "end of file";
	return arena_printf(&p->scratch, "'%.*s'", (int)MIN(t->len, 40u), t->s);
}

/* ---- the name maps ---------------------------------------------------- */

static uint32_t
slot_of(const NameMap *nm, const char *key)
{
	uint64_t h = (uint64_t)(uintptr_t)key * 0x9e3779b97f4a7c15ull;

	return (uint32_t)(h >> 32) & (nm->cap - 1);
}

static uint32_t *
name_find(NameMap *nm, const char *key)
{
	uint32_t j;

	if (!nm->cap)
		return NULL;
	for (j = slot_of(nm, key); nm->keys[j]; j = (j + 1) & (nm->cap - 1))
		if (nm->keys[j] == key)
			return &nm->vals[j];
	return NULL;
}

static void
name_put(Arena *a, NameMap *nm, const char *key, uint32_t val)
{
	uint32_t j;

	if (2 * (nm->n + 1) > nm->cap) {
		NameMap old = *nm;
		uint32_t i;

		nm->cap = old.cap ? old.cap * 2 : 64;
		nm->n = 0;
		nm->keys = arena_alloc(a, nm->cap * sizeof *nm->keys);
		nm->vals = arena_alloc(a, nm->cap * sizeof *nm->vals);
		for (i = 0; i < old.cap; i++)
			if (old.keys[i])
				name_put(a, nm, old.keys[i], old.vals[i]);
	}
	for (j = slot_of(nm, key); nm->keys[j]; j = (j + 1) & (nm->cap - 1))
		;
	nm->keys[j] = key;
	nm->vals[j] = val;
	nm->n++;
}

/* ---- the lexer ------------------------------------------------------------- */

static bool
is_name_char(int ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
	       (ch >= '0' && ch <= '9') || ch == '_' || ch == '.';
}

static bool
is_digit(int ch)
{
	return ch >= '0' && ch <= '9';
}

static void
skip_space(Lexer *lx)
{
	while (lx->cur < lx->end) {
		char ch = *lx->cur;

		if (ch == '\n') {
			lx->cur++;
			lx->line++;
			lx->bol = lx->cur;
		} else if (ch == ' ' || ch == '\t' || ch == '\r') {
			lx->cur++;
		} else if (ch == '/' && lx->cur + 1 < lx->end && lx->cur[1] == '/') {
			while (lx->cur < lx->end && *lx->cur != '\n')
				lx->cur++;
		} else {
			break;
		}
	}
}

/* Reads decimal digits at q into *v; false on overflow past `limit`. */
static const char *
lex_digits(const char *q, const char *end, uint64_t limit, uint64_t *v,
	   bool *over)
{
	*v = 0;
	*over = false;
	for (; q < end && is_digit(*q); q++) {
		uint64_t dgt = (uint64_t)(*q - '0');

		if (*v > (limit - dgt) / 10)
			*over = true;
		else
			*v = *v * 10 + dgt;
	}
	return q;
}

static void
lex_dims(Parser *p, Token *t)
{
	const char *q = t->s, *end = p->lx.end;
	int64_t elems = 1;

	t->kind = T_DIMS;
	t->ndims = 0;
	while (q < end && is_digit(*q)) {
		const char *d0 = q;
		uint64_t v;
		bool over;

		q = lex_digits(q, end, (uint64_t)MAX_DIM, &v, &over);
		if (q >= end || *q != 'x') {
			q = d0;  /* digits not followed by 'x' are not a dim */
			break;
		}
		if (t->ndims == TY_MAX_RANK)
			fail_at(p, t->line, t->col, (int)(q - t->s),
				"a shape has at most %d dimensions", TY_MAX_RANK);
		if (over || v == 0 || v > TY_MAX_ELEMS)
			fail_at(p, t->line, t->col + (int)(d0 - t->s), (int)(q - d0),
				"dimension must be between 1 and %d", TY_MAX_ELEMS);
		elems *= (int64_t)v;
		if (elems > TY_MAX_ELEMS)
			fail_at(p, t->line, t->col, (int)(q - t->s),
				"shape has more than %d elements, the most a tile "
				"or shared buffer may have", TY_MAX_ELEMS);
		t->dims[t->ndims++] = (int64_t)v;
		q++;
	}
	t->len = (uint32_t)(q - t->s);
	p->lx.cur = q;
}

static void
lex_number(Parser *p, Token *t)
{
	const char *q = t->s, *end = p->lx.end;
	bool neg = *q == '-', over, isfloat = false;
	uint64_t v;

	if (neg)
		q++;
	q = lex_digits(q, end, (uint64_t)INT64_MAX + neg, &v, &over);
	if (!neg && q < end && *q == 'x') {
		lex_dims(p, t);
		return;
	}
	if (q < end && *q == '.') {
		isfloat = true;
		for (q++; q < end && is_digit(*q); q++)
			;
	}
	if (q < end && (*q == 'e' || *q == 'E')) {
		const char *e = q + 1;

		if (e < end && (*e == '+' || *e == '-'))
			e++;
		if (e < end && is_digit(*e)) {
			isfloat = true;
			for (q = e; q < end && is_digit(*q); q++)
				;
		}
	}
	t->len = (uint32_t)(q - t->s);
	p->lx.cur = q;
	if (q < end && (is_name_char(*q) && *q != '.'))
		fail_at(p, t->line, t->col, (int)t->len + 1, "malformed number");
	if (isfloat) {
		char *buf = arena_strndup(&p->scratch, t->s, t->len);

		t->kind = T_FLOAT;
		errno = 0;
		t->f = strtod(buf, NULL);
		if (errno == ERANGE && isinf(t->f))
			fail_tok(p, t, "float literal out of range");
		return;
	}
	if (over)
		fail_tok(p, t, "integer literal out of range");
	t->kind = T_INT;
	t->i = neg ? (int64_t)(0 - v) : (int64_t)v;
}

static int
hex_digit(const char *q, const char *end)
{
	int ch = q < end ? *q | 32 : -1;

	if (q < end && is_digit(*q))
		return *q - '0';
	return ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 : -1;
}

/* "..." with \" \\ and \xNN escapes, decoded and interned. */
static void
lex_string(Parser *p, Token *t)
{
	const char *q = t->s + 1, *end = p->lx.end;
	char *buf, *o;

	while (q < end && *q != '"' && *q != '\n')
		q += *q == '\\' && q + 1 < end && q[1] != '\n' ? 2 : 1;
	if (q >= end || *q != '"')
		fail_at(p, t->line, t->col, 1, "unterminated string");
	o = buf = arena_alloc(&p->scratch, (size_t)(q - t->s));
	for (q = t->s + 1; *q != '"'; q++) {
		int hi, lo;

		if (*q == 0)
			fail_at(p, t->line, t->col + (int)(q - t->s), 1,
				"string contains a NUL byte");
		if (*q != '\\') {
			*o++ = *q;
			continue;
		}
		if (q[1] == '"' || q[1] == '\\') {
			*o++ = *++q;
			continue;
		}
		hi = q[1] == 'x' ? hex_digit(q + 2, end) : -1;
		lo = hi >= 0 ? hex_digit(q + 3, end) : -1;
		if (lo < 0 || (hi == 0 && lo == 0))
			fail_at(p, t->line, t->col + (int)(q - t->s), 2,
				"bad escape in string (use \\\", \\\\ or \\xNN, not \\x00)");
		*o++ = (char)(hi * 16 + lo);
		q += 3;
	}
	t->kind = T_STRING;
	t->name = strtab_intern(&p->c->strs, buf, (size_t)(o - buf));
	t->len = (uint32_t)(q + 1 - t->s);
	p->lx.cur = q + 1;
}

/* @line:col after '@' (t->s points at '@'). */
static void
lex_loc(Parser *p, Token *t)
{
	const char *q = t->s + 1, *end = p->lx.end;
	uint64_t line, col = 0;
	bool over1, over2 = false;

	q = lex_digits(q, end, INT_MAX, &line, &over1);
	if (q < end && *q == ':' && q + 1 < end && is_digit(q[1]))
		q = lex_digits(q + 1, end, INT_MAX, &col, &over2);
	else
		fail_at(p, t->line, t->col, (int)(q - t->s),
			"expected a location '@line:col'");
	t->len = (uint32_t)(q - t->s);
	p->lx.cur = q;
	if (over1 || over2)
		fail_tok(p, t, "location out of range");
	t->kind = T_LOC;
	t->i = (int64_t)line;
	t->i2 = (int64_t)col;
}

static void
lex_name(Parser *p, Token *t, Tok kind, const char *what)
{
	const char *q = t->s + (kind == T_WORD ? 0 : 1), *b = q;

	while (q < p->lx.end && (is_name_char(*q) || (kind == T_FNAME && *q == '$')))
		q++;
	t->len = (uint32_t)(q - t->s);
	p->lx.cur = q;
	if (q == b)
		fail_at(p, t->line, t->col, 1, "expected %s after '%c'", what, *t->s);
	t->kind = kind;
	t->name = strtab_intern(&p->c->strs, b, (size_t)(q - b));
}

static void
lex_punct(Parser *p, Token *t)
{
	static const char chars[] = "(){}[]<>,:=!^";
	const char *c = memchr(chars, *t->s, sizeof chars - 1);
	unsigned char ch = (unsigned char)*t->s;

	if (!c) {
		if (ch >= 0x21 && ch < 0x7f)
			fail_at(p, t->line, t->col, 1, "unexpected character '%c'", ch);
		fail_at(p, t->line, t->col, 1, "unexpected byte 0x%02x", ch);
	}
	t->kind = (Tok)(T_LPAREN + (c - chars));
	t->len = 1;
	p->lx.cur = t->s + 1;
}

static void
lex(Parser *p, Token *t)
{
	Lexer *lx = &p->lx;
	char ch;

	skip_space(lx);
	memset(t, 0, sizeof *t);
	t->s = lx->cur;
	t->line = lx->line;
	t->col = (int)(lx->cur - lx->bol) + 1;
	if (lx->cur >= lx->end) {
		t->kind = T_EOF;
		return;
	}
	ch = *lx->cur;
	if (is_digit(ch) || (ch == '-' && lx->cur + 1 < lx->end && is_digit(lx->cur[1]))) {
		lex_number(p, t);
	} else if (ch == '-' && lx->cur + 1 < lx->end && lx->cur[1] == '>') {
		t->kind = T_ARROW;
		t->len = 2;
		lx->cur += 2;
	} else if (ch == '-' && lx->end - lx->cur >= 4 &&
		   (memcmp(lx->cur, "-inf", 4) == 0 || memcmp(lx->cur, "-nan", 4) == 0) &&
		   (lx->end - lx->cur == 4 || !is_name_char(lx->cur[4]))) {
		t->kind = T_FLOAT;
		t->f = lx->cur[1] == 'i' ? -INFINITY : NAN;
		t->len = 4;
		lx->cur += 4;
	} else if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_') {
		lex_name(p, t, T_WORD, "a word");
	} else if (ch == '%') {
		lex_name(p, t, T_VALUE, "a value name");
	} else if (ch == '#') {
		lex_name(p, t, T_ALIAS, "a layout name");
	} else if (ch == '@') {
		if (lx->cur + 1 < lx->end && is_digit(lx->cur[1]))
			lex_loc(p, t);
		else
			lex_name(p, t, T_FNAME, "a function name");
	} else if (ch == '"') {
		lex_string(p, t);
	} else {
		lex_punct(p, t);
	}
}

static void
next(Parser *p)
{
	lex(p, &p->tok);
}

/* The kind of the n-th token after the current one (n >= 1). */
static Tok
peek(Parser *p, int n)
{
	Lexer saved = p->lx;
	Token t;

	while (n-- > 0)
		lex(p, &t);
	p->lx = saved;
	return t.kind;
}

static void
expect(Parser *p, Tok k, const char *context)
{
	if (p->tok.kind != k)
		fail(p, "expected %s %s, got %s", tok_text[k], context,
		     tok_desc(p, &p->tok));
	next(p);
}

static bool
accept(Parser *p, Tok k)
{
	if (p->tok.kind != k)
		return false;
	next(p);
	return true;
}

static bool
is_word(Parser *p, const char *w)
{
	return p->tok.kind == T_WORD && strcmp(p->tok.name, w) == 0;
}

/* ---- types ------------------------------------------------------------------ */

static Type *parse_type(Parser *p, int depth);

static int64_t
parse_int_in(Parser *p, int64_t lo, int64_t hi, const char *what)
{
	int64_t v;

	if (p->tok.kind != T_INT)
		fail(p, "expected %s, got %s", what, tok_desc(p, &p->tok));
	v = p->tok.i;
	if (v < lo || v > hi)
		fail(p, "%s must be between %lld and %lld", what, (long long)lo,
		     (long long)hi);
	next(p);
	return v;
}

/* ---- layouts ---------------------------------------------------------------- */

static const Layout *parse_layout(Parser *p, int depth);

/* "[" INT {"," INT} "]" with at most `max` entries in [lo, hi]. */
static int
parse_ints(Parser *p, int64_t *v, int max, int64_t lo, int64_t hi,
	   const char *what)
{
	int n = 0;

	expect(p, T_LBRACK, what);
	do {
		if (n == max)
			fail(p, "%s has at most %d entries", what, max);
		v[n++] = parse_int_in(p, lo, hi, what);
	} while (accept(p, T_COMMA));
	expect(p, T_RBRACK, what);
	return n;
}

static void
expect_word(Parser *p, const char *w)
{
	if (!is_word(p, w))
		fail(p, "expected '%s', got %s", w, tok_desc(p, &p->tok));
	next(p);
	expect(p, T_EQ, "after the parameter's name");
}

/* A layout's shape: powers of two, at most 2^31 elements in all. */
static int
parse_layout_shape(Parser *p, int64_t *shape)
{
	Token at = p->tok;
	int n = parse_ints(p, shape, TY_MAX_RANK, 1, TY_MAX_ELEMS, "a layout's shape"), i;
	int64_t elems = 1;

	for (i = 0; i < n; i++) {
		if (!is_pow2(shape[i]))
			fail_tok(p, &at, "the dims of a layout are powers of two");
		elems *= shape[i];
	}
	if (elems > TY_MAX_ELEMS)
		fail_tok(p, &at, "a layout's shape has more than %d elements",
			 TY_MAX_ELEMS);
	return n;
}

static int64_t
parse_pow2(Parser *p, int64_t hi, const char *what)
{
	Token at = p->tok;
	int64_t v = parse_int_in(p, 1, hi, what);

	if (!is_pow2(v))
		fail_tok(p, &at, "%s must be a power of two", what);
	return v;
}

/* "[" [ints {"," ints}] "]": bases as coordinates in `l`'s shape. */
static int
parse_bases(Parser *p, const Layout *l, uint32_t *out, int max,
	    const char *what)
{
	int n = 0, d;

	expect(p, T_LBRACK, what);
	if (p->tok.kind != T_RBRACK) {
		do {
			int64_t c[TY_MAX_RANK];
			Token at = p->tok;
			uint32_t f = 0;

			if (n == max)
				fail(p, "%s has at most %d bases", what, max);
			if (parse_ints(p, c, TY_MAX_RANK, 0, MAX_DIM, "a basis") != l->rank)
				fail_tok(p, &at, "a basis has one coordinate per dim (%d)",
					 l->rank);
			for (d = 0; d < l->rank; d++) {
				if (c[d] >= l->shape[d])
					fail_tok(p, &at, "a basis lies outside the layout's shape");
				f |= (uint32_t)c[d] << ly_dim_shift(l, d);
			}
			out[n++] = f;
		} while (accept(p, T_COMMA));
	}
	expect(p, T_RBRACK, what);
	return n;
}

static const Layout *
parse_linear(Parser *p, int depth)
{
	Layout l;
	Token at;
	int n;

	memset(&l, 0, sizeof l);
	l.kind = LY_LINEAR;
	l.rank = (uint8_t)parse_layout_shape(p, l.shape);
	expect(p, T_COMMA, "after the shape");
	expect_word(p, "reg");
	l.nreg = (uint8_t)parse_bases(p, &l, l.reg, LY_MAX_REG, "register bases");
	expect(p, T_COMMA, "after the register bases");
	expect_word(p, "lane");
	at = p->tok;
	if (parse_bases(p, &l, l.lane, LY_LANES, "lane bases") != LY_LANES)
		fail_tok(p, &at, "a layout has %d lane bases", LY_LANES);
	expect(p, T_COMMA, "after the lane bases");
	expect_word(p, "warp");
	l.nwarp = (uint8_t)parse_bases(p, &l, l.warp, LY_MAX_WARP, "warp bases");
	if (accept(p, T_COMMA)) {
		expect_word(p, "parent");
		at = p->tok;
		l.parent = parse_layout(p, depth + 1);
		expect(p, T_COMMA, "after the parent");
		expect_word(p, "dim");
		n = (int)parse_int_in(p, 0, l.parent->rank - 1, "the parent's dim");
		if (l.parent->rank != l.rank)
			fail_tok(p, &at, "the parent of a linear layout has its rank");
		l.slice_dim = (uint8_t)n;
	}
	return ly_intern(&p->c->layouts, &l);
}

static const Layout *
parse_layout_body(Parser *p, const char *w, Token *at, int depth)
{
	int64_t shape[TY_MAX_RANK], v[TY_MAX_RANK];
	int order[TY_MAX_RANK], rank, i, vec, warps;
	const Layout *parent;

	if (!strcmp(w, "slice")) {
		parent = parse_layout(p, depth + 1);
		expect(p, T_COMMA, "after the parent");
		expect_word(p, "dim");
		if (parent->rank < 2)
			fail_tok(p, at, "the parent of a slice has two or more dims");
		i = (int)parse_int_in(p, 0, parent->rank - 1, "the sliced dim");
		return ly_slice(&p->c->layouts, parent, i);
	}
	if (!strcmp(w, "linear"))
		return parse_linear(p, depth);
	if (!strcmp(w, "swizzle")) {
		Token bt = p->tok;
		int64_t bytes = parse_int_in(p, 32, 128, "a swizzle's bytes"), shift = 7;

		if (bytes != 32 && bytes != 64 && bytes != 128)
			fail_tok(p, &bt, "a swizzle permutes 32, 64 or 128 bytes");
		if (accept(p, T_COMMA)) {
			if (is_word(p, "tiled")) {
				next(p);
				return ly_swizzle_tiled(&p->c->layouts, (int)bytes);
			}
			expect_word(p, "shift");
			shift = parse_int_in(p, 7, 17, "a swizzle's shift");
		}
		return ly_swizzle(&p->c->layouts, (int)bytes, (int)shift);
	}
	rank = parse_layout_shape(p, shape);
	expect(p, T_COMMA, "after the shape");
	if (!strcmp(w, "mma")) {
		expect_word(p, "warps");
		warps = (int)parse_pow2(p, 32, "warps");
		if (rank != 2 || shape[0] < 16 || shape[1] < 8)
			fail_tok(p, at, "an mma layout is M x N with M >= 16, N >= 8");
		return ly_mma(&p->c->layouts, shape, warps);
	}
	if (!strcmp(w, "wgmma")) {
		expect_word(p, "warps");
		warps = (int)parse_pow2(p, 32, "warps");
		/* warpgroups past those the tile can split among hold
		 * copies, as warps past an mma tile's do */
		if (rank != 2 || shape[0] < 64 || shape[1] < 8 || warps < 4)
			fail_tok(p, at, "a wgmma layout is M x N with M >= 64, N >= 8, "
				 "over one or more whole warpgroups");
		return ly_wgmma(&p->c->layouts, shape, warps);
	}
	if (strcmp(w, "blocked"))
		fail_tok(p, at, "unknown layout '%s' (blocked, slice, mma, wgmma, "
			 "linear, swizzle)", w);
	expect_word(p, "vec");
	vec = (int)parse_pow2(p, 1 << 15, "vec");
	expect(p, T_COMMA, "after vec");
	expect_word(p, "order");
	{
		Token ot = p->tok;
		unsigned seen = 0;

		if (parse_ints(p, v, TY_MAX_RANK, 0, TY_MAX_RANK - 1, "an order") != rank)
			fail_tok(p, &ot, "an order names each dim once");
		for (i = 0; i < rank; i++) {
			if (v[i] >= rank || (seen & (1u << v[i])))
				fail_tok(p, &ot, "an order names each dim once");
			seen |= 1u << v[i];
			order[i] = (int)v[i];
		}
	}
	expect(p, T_COMMA, "after the order");
	expect_word(p, "warps");
	warps = (int)parse_pow2(p, 32, "warps");
	return ly_blocked(&p->c->layouts, rank, shape, order, vec, warps);
}

static const Layout *
parse_layout(Parser *p, int depth)
{
	Token t = p->tok;
	const Layout *l;
	uint32_t *slot;

	if (depth > MAX_TYPE_DEPTH)
		fail(p, "layout nested more than %d deep", MAX_TYPE_DEPTH);
	if (t.kind == T_ALIAS) {
		next(p);
		slot = name_find(&p->aliases, t.name);
		if (!slot)
			fail_tok(p, &t, "no layout is named '#%s'", t.name);
		return p->layouts.v[*slot];
	}
	if (t.kind != T_WORD)
		fail(p, "expected a layout, got %s", tok_desc(p, &t));
	next(p);
	expect(p, T_LT, "after the layout's kind");
	l = parse_layout_body(p, t.name, &t, depth);
	expect(p, T_GT, "to close the layout");
	return l;
}

/* "<" DIMS type ">" of tile<...> and smem<...>. */
static Type *
parse_shaped(Parser *p, TypeKind k, int depth)
{
	const Layout *ly = NULL;
	Token dims;
	Type *elem, *t;

	expect(p, T_LT, k == TY_TILE ? "after 'tile'" : "after 'smem'");
	if (p->tok.kind != T_DIMS)
		fail(p, "expected a shape such as '4x8x' before the element type, got %s",
		     tok_desc(p, &p->tok));
	dims = p->tok;
	next(p);
	elem = parse_type(p, depth + 1);
	if (accept(p, T_COMMA)) {
		Token at = p->tok;

		ly = parse_layout(p, depth + 1);
		if (k == TY_SMEM && ly->kind != LY_SWIZZLE)
			fail_tok(p, &at, "a shared buffer's encoding is a swizzle");
		if (k == TY_TILE && (ly->kind == LY_SWIZZLE || ly->rank != dims.ndims ||
		    memcmp(ly->shape, dims.dims, (size_t)ly->rank * sizeof *ly->shape)))
			fail_tok(p, &at, "the layout's shape is not the tile's");
	}
	expect(p, T_GT, "to close the shape");
	t = k == TY_TILE ? ty_tile(p->c, elem, dims.ndims, dims.dims)
			 : ty_smem(p->c, elem, dims.ndims, dims.dims);
	return ly ? ty_with_layout(p->c, t, ly) : t;
}

static Type *
parse_tma(Parser *p, int depth)
{
	Type *elem;
	int64_t rank;

	expect(p, T_LT, "after 'tma'");
	if (p->tok.kind == T_DIMS) {
		Token dims = p->tok;

		const Layout *ly = NULL;

		next(p);
		elem = parse_type(p, depth + 1);
		if (accept(p, T_COMMA)) {
			Token at = p->tok;

			ly = parse_layout(p, depth + 1);
			if (ly->kind != LY_SWIZZLE)
				fail_tok(p, &at, "a descriptor's encoding is a swizzle");
		}
		expect(p, T_GT, "to close 'tma<'");
		return ly ? ty_with_layout(p->c, ty_tma(p->c, elem, dims.ndims,
							 dims.dims), ly)
			  : ty_tma(p->c, elem, dims.ndims, dims.dims);
	}
	elem = parse_type(p, depth + 1);
	expect(p, T_COMMA, "between a tma's element type and rank");
	rank = parse_int_in(p, 1, TY_MAX_RANK, "a tma rank");
	expect(p, T_GT, "to close 'tma<'");
	return ty_tma(p->c, elem, (int)rank, NULL);
}

static Type *
parse_compound(Parser *p, const char *w, int depth)
{
	Type *t;

	if (strcmp(w, "ptr") == 0) {
		int64_t as = AS_GLOBAL;

		expect(p, T_LT, "after 'ptr'");
		t = parse_type(p, depth + 1);
		if (accept(p, T_COMMA)) {
			Token at = p->tok;

			as = parse_int_in(p, INT64_MIN, INT64_MAX, "an address space");
			if (as != AS_GLOBAL && as != AS_SHARED)
				fail_tok(p, &at, "address space must be 1 (global) or 3 (shared)");
		}
		expect(p, T_GT, "to close 'ptr<'");
		return ty_ptr(p->c, t, (int)as);
	}
	if (strcmp(w, "tile") == 0)
		return parse_shaped(p, TY_TILE, depth);
	if (strcmp(w, "smem") == 0)
		return parse_shaped(p, TY_SMEM, depth);
	if (strcmp(w, "mbar") == 0) {
		int64_t n = -1;

		if (accept(p, T_LT)) {
			n = parse_int_in(p, 1, MAX_DIM, "a barrier count");
			expect(p, T_GT, "to close 'mbar<'");
		}
		return ty_mbar(p->c, n);
	}
	if (strcmp(w, "tma") == 0)
		return parse_tma(p, depth);
	if (strcmp(w, "pipe") == 0)
		return ty_simple(p->c, TY_PIPE);
	if (strcmp(w, "sched") == 0)
		return ty_simple(p->c, TY_SCHED);
	return NULL;
}

static Type *
parse_type(Parser *p, int depth)
{
	Token t = p->tok;
	Type *ty;
	int k;

	if (depth > MAX_TYPE_DEPTH)
		fail(p, "type nested more than %d deep", MAX_TYPE_DEPTH);
	if (t.kind != T_WORD)
		fail(p, "expected a type, got %s", tok_desc(p, &t));
	next(p);
	k = ty_kind_from_name(t.name, strlen(t.name));
	if (k >= 0)
		return ty_scalar(p->c, (TypeKind)k);
	ty = parse_compound(p, t.name, depth);
	if (!ty)
		fail_tok(p, &t, "unknown type '%s'", t.name);
	return ty;
}

/* ---- attributes -------------------------------------------------------------- */

/* Does the current '{' open an attribute list (a word and '=' follow)? */
static bool
at_attr_list(Parser *p)
{
	return p->tok.kind == T_LBRACE && peek(p, 1) == T_WORD && peek(p, 2) == T_EQ;
}

static void
parse_int_list(Parser *p, Attr *a)
{
	Vec(int64_t) v = { 0 };

	if (p->tok.kind != T_RBRACK) {
		do {
			if (p->tok.kind != T_INT)
				fail(p, "expected an integer in the list, got %s",
				     tok_desc(p, &p->tok));
			vec_push(&p->scratch, &v, p->tok.i);
			next(p);
		} while (accept(p, T_COMMA));
	}
	expect(p, T_RBRACK, "to close the list");
	a->kind = ATTR_INTS;
	a->ints.n = v.n;
	a->ints.v = arena_dup(p->c->arena, v.v, v.n * sizeof *v.v);
}

static void
parse_attr_value(Parser *p, Attr *a)
{
	Token t = p->tok;

	switch (t.kind) {
	case T_INT:
		a->kind = ATTR_INT;
		a->i = t.i;
		break;
	case T_FLOAT:
		a->kind = ATTR_FLOAT;
		a->f = t.f;
		break;
	case T_STRING:
		a->kind = ATTR_STR;
		a->s = t.name;
		break;
	case T_WORD:
		if (strcmp(t.name, "inf") == 0 || strcmp(t.name, "nan") == 0) {
			a->kind = ATTR_FLOAT;
			a->f = t.name[0] == 'i' ? INFINITY : NAN;
		} else if (strcmp(t.name, "true") == 0 || strcmp(t.name, "false") == 0) {
			a->kind = ATTR_INT;
			a->i = t.name[0] == 't';
		} else {
			a->kind = ATTR_SYM;
			a->s = t.name;
		}
		break;
	case T_LBRACK:
		next(p);
		parse_int_list(p, a);
		return;
	case T_BANG:
		next(p);
		a->kind = ATTR_TYPE;
		a->ty = parse_type(p, 0);
		return;
	default:
		fail(p, "expected an attribute value, got %s", tok_desc(p, &t));
	}
	next(p);
}

/* attrs = "{" WORD "=" value {"," WORD "=" value} "}" */
static void
parse_attrs(Parser *p, AttrList *l)
{
	expect(p, T_LBRACE, "to open the attributes");
	do {
		Token name = p->tok;
		Attr a = { 0 };

		if (name.kind != T_WORD)
			fail(p, "expected an attribute name, got %s", tok_desc(p, &name));
		if (attr_find(l, name.name))
			fail(p, "duplicate attribute '%s'", name.name);
		next(p);
		expect(p, T_EQ, "after the attribute name");
		a.name = name.name;
		parse_attr_value(p, &a);
		attr_set(p->c, l, a);
	} while (accept(p, T_COMMA));
	expect(p, T_RBRACE, "to close the attributes");
}

static bool
parse_loc(Parser *p, SrcLoc *l)
{
	if (p->tok.kind != T_LOC)
		return false;
	l->line = (int)p->tok.i;
	l->col = (int)p->tok.i2;
	next(p);
	return true;
}

/* ---- values ---------------------------------------------------------------------- */

/* A name hint for a value named `name`: none when it is all digits. */
static const char *
hint_of(const char *name)
{
	const char *s;

	for (s = name; *s; s++)
		if (!is_digit(*s))
			return name;
	return NULL;
}

static void
define(Parser *p, const Token *t, Value v)
{
	if (name_find(&p->vals, t->name))
		fail_tok(p, t, "redefinition of '%%%s'", t->name);
	name_put(&p->scratch, &p->vals, t->name, v);
	ir_value_set_name(p->f, v, hint_of(t->name));
}

static Value
use(Parser *p)
{
	uint32_t *v;

	if (p->tok.kind != T_VALUE)
		fail(p, "expected a value, got %s", tok_desc(p, &p->tok));
	v = name_find(&p->vals, p->tok.name);
	if (!v)
		fail(p, "use of undefined value '%%%s'", p->tok.name);
	next(p);
	return *v;
}

typedef Vec(Token) TokVec;
typedef Vec(Type *) TypeVec;

/* VALUE ":" type {"," VALUE ":" type} */
static void
parse_typed_values(Parser *p, TokVec *names, TypeVec *types)
{
	do {
		Token t = p->tok;

		if (t.kind != T_VALUE)
			fail(p, "expected a value name, got %s", tok_desc(p, &t));
		next(p);
		expect(p, T_COLON, "after the value name");
		vec_push(&p->scratch, names, t);
		vec_push(&p->scratch, types, parse_type(p, 0));
	} while (accept(p, T_COMMA));
}

/* ---- ops and regions ------------------------------------------------------------ */

static void parse_op(Parser *p, Block *b);

static void
parse_block_body(Parser *p, Block *b, const Token *open)
{
	while (p->tok.kind != T_RBRACE) {
		if (p->tok.kind == T_EOF)
			fail(p, "expected '}' to close the region opened at %d:%d",
			     open->line, open->col);
		parse_op(p, b);
	}
	next(p);
}

/* region = "{" ["^" "(" [param {"," param}] ")" ":"] op* "}" */
static Block *
parse_region(Parser *p, Op *owner)
{
	Token open = p->tok;
	Block *b = ir_block_new(p->f, 0, NULL);

	if (++p->depth > MAX_NESTING)
		fail(p, "regions nested more than %d deep", MAX_NESTING);
	b->parent = owner;
	next(p);
	if (accept(p, T_CARET)) {
		TokVec names = { 0 };
		TypeVec types = { 0 };
		uint32_t i;

		expect(p, T_LPAREN, "after '^'");
		if (p->tok.kind != T_RPAREN)
			parse_typed_values(p, &names, &types);
		expect(p, T_RPAREN, "to close the block arguments");
		expect(p, T_COLON, "after the block arguments");
		for (i = 0; i < names.n; i++)
			define(p, &names.v[i], ir_block_add_arg(b, types.v[i]));
	}
	parse_block_body(p, b, &open);
	p->depth--;
	return b;
}

static void
attach_regions(Parser *p, Op *op)
{
	Vec(Block *) regs = { 0 };

	while (p->tok.kind == T_LBRACE)
		vec_push(&p->scratch, &regs, parse_region(p, op));
	op->nregions = regs.n;
	if (regs.n)
		op->regions = arena_dup(p->c->arena, regs.v, regs.n * sizeof *regs.v);
}

/* op = [results "="] WORD [VALUE {"," VALUE}] [attrs] region* [LOC] */
static void
parse_op(Parser *p, Block *b)
{
	TokVec names = { 0 };
	TypeVec types = { 0 };
	Vec(Value) opnds = { 0 };
	AttrList attrs = { 0 };
	Token name;
	Op *op;
	int k;
	uint32_t i;

	if (p->tok.kind == T_VALUE) {
		parse_typed_values(p, &names, &types);
		expect(p, T_EQ, "after the results");
	}
	name = p->tok;
	if (name.kind != T_WORD)
		fail(p, "expected an op, got %s", tok_desc(p, &name));
	k = op_kind_from_name(name.name, strlen(name.name));
	if (k < 0)
		fail(p, "unknown op '%s'", name.name);
	next(p);
	if (p->tok.kind == T_VALUE && peek(p, 1) != T_COLON) {
		do
			vec_push(&p->scratch, &opnds, use(p));
		while (accept(p, T_COMMA));
	}
	if (at_attr_list(p))
		parse_attrs(p, &attrs);
	op = ir_op_new(p->f, (OpKind)k, opnds.n, opnds.v, types.n, types.v, 0);
	op->attrs = attrs;
	op->tloc = (SrcLoc){ name.line, name.col };
	for (i = 0; i < names.n; i++)
		define(p, &names.v[i], op->res[i]);
	ir_append(b, op);
	attach_regions(p, op);
	parse_loc(p, &op->loc);
}

/* ---- functions and the module --------------------------------------------------- */

static FuncKind
parse_func_kind(Parser *p)
{
	static const char *words[] = { "kernel", "func", "grid" };
	int k;

	for (k = 0; k < 3; k++)
		if (is_word(p, words[k]))
			break;
	if (k == 3)
		fail(p, "expected 'kernel', 'func' or 'grid', got %s",
		     tok_desc(p, &p->tok));
	next(p);
	return (FuncKind)k;
}

/* func = kind FNAME "(" params ")" ["->" "(" types ")"] [attrs] [LOC] body */
static void
parse_func(Parser *p)
{
	Token start = p->tok, name, open;
	FuncKind kind = parse_func_kind(p);
	TokVec pnames = { 0 };
	TypeVec ptypes = { 0 }, rtypes = { 0 };
	AttrList attrs = { 0 };
	SrcLoc loc = { 0, 0 };
	uint32_t i;

	name = p->tok;
	if (name.kind != T_FNAME)
		fail(p, "expected a function name such as '@f', got %s",
		     tok_desc(p, &name));
	if (name_find(&p->funcs, name.name))
		fail(p, "redefinition of function '@%s'", name.name);
	next(p);
	expect(p, T_LPAREN, "to open the parameters");
	if (p->tok.kind != T_RPAREN)
		parse_typed_values(p, &pnames, &ptypes);
	expect(p, T_RPAREN, "to close the parameters");
	if (accept(p, T_ARROW)) {
		expect(p, T_LPAREN, "to open the result types");
		if (p->tok.kind != T_RPAREN) {
			do
				vec_push(&p->scratch, &rtypes, parse_type(p, 0));
			while (accept(p, T_COMMA));
		}
		expect(p, T_RPAREN, "to close the result types");
	}
	if (at_attr_list(p))
		parse_attrs(p, &attrs);
	parse_loc(p, &loc);
	p->f = ir_func_new(p->m, kind, name.name, ptypes.n, ptypes.v);
	name_put(&p->scratch, &p->funcs, p->f->name, p->m->funcs.n);
	p->f->attrs = attrs;
	p->f->loc = loc;
	p->f->tloc = (SrcLoc){ start.line, start.col };
	ir_func_set_results(p->f, rtypes.n, rtypes.v);
	memset(&p->vals, 0, sizeof p->vals);
	for (i = 0; i < pnames.n; i++)
		define(p, &pnames.v[i], p->f->body->args[i]);
	open = p->tok;
	expect(p, T_LBRACE, "to open the function body");
	if (p->tok.kind == T_CARET)
		fail(p, "a function body has no block arguments (they are the parameters)");
	parse_block_body(p, p->f->body, &open);
}

static void
parse_module(Parser *p)
{
	const char *source = "";

	if (is_word(p, "module")) {
		next(p);
		if (p->tok.kind != T_STRING)
			fail(p, "expected the source file name as a string after 'module'");
		source = p->tok.name;
		next(p);
	}
	p->m = ir_module_new(p->c, source);
	while (p->tok.kind == T_ALIAS) {
		Token t = p->tok;

		next(p);
		if (name_find(&p->aliases, t.name))
			fail_tok(p, &t, "layout '#%s' is defined twice", t.name);
		expect(p, T_EQ, "after the layout's name");
		vec_push(&p->scratch, &p->layouts, parse_layout(p, 0));
		name_put(&p->scratch, &p->aliases, t.name, p->layouts.n - 1);
	}
	while (p->tok.kind != T_EOF)
		parse_func(p);
}

/* Parses under two guards: a syntax error longjmps to p->fail, running out
 * of memory to `oom` (then ir_read frees the scratch and passes it on). */
static Module *
read_guarded(Parser *p)
{
	jmp_buf oom, *outer = p->c->arena->oom;
	Module *m = NULL;

	if (outer) {
		if (setjmp(oom)) {
			p->c->arena->oom = outer;
			p->oom = true;
			return NULL;
		}
		p->c->arena->oom = &oom;
		p->scratch.oom = &oom;
	}
	if (setjmp(p->fail) == 0) {
		next(p);
		parse_module(p);
		m = p->m;
	}
	p->c->arena->oom = outer;
	return m;
}

Module *
ir_read(IrCtx *c, Diag *d, const Source *src)
{
	Parser p;
	jmp_buf *outer = c->arena->oom;
	Module *m;

	memset(&p, 0, sizeof p);
	p.c = c;
	p.d = d;
	p.lx.cur = p.lx.bol = src->text;
	p.lx.end = src->text + src->len;
	p.lx.line = 1;
	arena_init(&p.scratch, c->arena->alloc, c->arena->ud, NULL);
	m = read_guarded(&p);
	arena_reset(&p.scratch);
	if (p.oom)
		longjmp(*outer, 1);
	return m;
}
