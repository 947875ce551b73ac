/*
 * lex.re: the scanner.  re2c (run with -W -Werror) turns it into lex.c,
 * which is never edited.
 *
 * re2c's sentinel method: the source manager NUL-terminates the buffer
 * and no character class includes \x00, so every rule stops at a NUL.
 * The "\x00" rules then tell the end of the text (the NUL at `lim`) from
 * a NUL byte inside it, which is an error.  Every scanner ends with a
 * catch-all rule.
 *
 * Tokens never span lines, so a token's location comes from `line` and
 * `line_start`, which only newlines (in whitespace and comments) move.
 * Errors are reported here and scanning goes on, as if a bad byte were
 * not there (as GCC does with a stray byte), a bad number were a literal
 * of value 0 and a bad string held the text decoded so far.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lexer/lex.h"

enum { SKIP = -1000 };  /* whitespace or a comment: scan again */

/*!re2c
	re2c:define:YYCTYPE = "unsigned char";
	re2c:define:YYCURSOR = "lx->cur";
	re2c:define:YYMARKER = "lx->mar";
	re2c:define:YYCTXMARKER = "lx->ctx";
	re2c:yyfill:enable = 0;
	re2c:indent:string = "\t";

	dig   = [0-9];
	hexd  = [0-9a-fA-F];
	dec   = dig ("_"? dig)*;
	hex   = "0x" hexd ("_"? hexd)*;
	oct   = "0o" [0-7] ("_"? [0-7])*;
	bin   = "0b" [01] ("_"? [01])*;
	exp   = [eE] [+-]? dec;
	flt   = dec "." dec exp? | dec exp;
	isuf  = "i1" | "i8" | "i16" | "i32" | "i64" | "u8" | "u16" | "u32" | "u64";
	fsuf  = "f16" | "bf16" | "f32" | "f64" | "f8e4m3" | "f8e5m2";
	word  = [A-Za-z0-9_];
	ident = [A-Za-z_] word*;
*/

void
lex_init(Lexer *lx, Arena *a, Strtab *strs, Diag *d, const Source *src)
{
	memset(lx, 0, sizeof *lx);
	lx->cur = lx->line_start = src->text;
	lx->lim = src->text + src->len;
	lx->line = 1;
	lx->arena = a;
	lx->strs = strs;
	lx->diag = d;
	lx->src = src;
}

/* The range of bytes [b, e) on the current line. */
static SrcRange
span(const Lexer *lx, const char *b, const char *e)
{
	int first = (int)(b - lx->line_start) + 1;
	int last = (int)(e - lx->line_start);

	return (SrcRange){ lx->line, first, lx->line, MAX(first, last) };
}

static void
newline(Lexer *lx)
{
	lx->line++;
	lx->line_start = lx->cur;
}

/* True when the NUL just matched (at cur - 1) is the end of the text;
 * then the cursor stays on it so that the end is seen again. */
static bool
at_end(Lexer *lx)
{
	if (lx->cur - 1 != lx->lim)
		return false;
	lx->cur = lx->lim;
	return true;
}

static void
bad_char(Lexer *lx, const char *p)
{
	unsigned char c = (unsigned char)*p;
	SrcRange r = span(lx, p, p + 1);

	if (c == '\'' || c == '\\')
		diag_error(lx->diag, r, "invalid character '\\%c'", c);
	else if (c > 0x20 && c < 0x7f)
		diag_error(lx->diag, r, "invalid character '%c'", c);
	else
		diag_error(lx->diag, r, "invalid character '\\x%02x'", c);
}

/* ---- comments ----------------------------------------------------------- */

/* After "//": up to (not including) the newline. */
static void
line_comment(Lexer *lx)
{
	for (;;) {
	/*!re2c
		[^\n\x00]+ { continue; }
		"\n"       { lx->cur--; return; }
		"\x00"     {
			if (at_end(lx))
				return;
			bad_char(lx, lx->cur - 1);
			continue;
		}
		*          { bad_char(lx, lx->cur - 1); continue; }
	*/
	}
}

/* After the opening slash-star: up to its matching star-slash; they nest. */
static void
block_comment(Lexer *lx)
{
	SrcRange open = span(lx, lx->tok, lx->tok + 2);
	int depth = 1;

	for (;;) {
	/*!re2c
		"/" "*"       { depth++; continue; }
		"*" "/"       { if (--depth == 0) return; continue; }
		"\n"          { newline(lx); continue; }
		[^/*\n\x00]+  { continue; }
		[/*]          { continue; }
		"\x00"        {
			if (!at_end(lx)) {
				bad_char(lx, lx->cur - 1);
				continue;
			}
			diag_error(lx->diag, open, "unterminated comment");
			return;
		}
		*             { bad_char(lx, lx->cur - 1); continue; }
	*/
	}
}

/* ---- string literals ---------------------------------------------------- */

typedef Vec(char) CharVec;

static void
put_bytes(Lexer *lx, CharVec *s, const char *p, size_t n)
{
	while (n--)
		vec_push(lx->arena, s, *p++);
}

/* After the opening quote: the decoded text, interned. */
static int
string_lit(Lexer *lx, LexVal *v)
{
	CharVec s = { 0 };

	for (;;) {
		const char *p = lx->cur;
	/*!re2c
		"\""          { goto done; }
		[^"\\\n\x00]+ { put_bytes(lx, &s, p, (size_t)(lx->cur - p)); continue; }
		"\\n"         { vec_push(lx->arena, &s, '\n'); continue; }
		"\\t"         { vec_push(lx->arena, &s, '\t'); continue; }
		"\\\\"        { vec_push(lx->arena, &s, '\\'); continue; }
		"\\\""        { vec_push(lx->arena, &s, '"'); continue; }
		"\\" [\x20-\x7e] {
			diag_error(lx->diag, span(lx, p, lx->cur),
				   "unknown escape sequence '\\%c'", p[1]);
			continue;
		}
		"\\" [^\n\x00\x20-\x7e] {
			diag_error(lx->diag, span(lx, p, lx->cur),
				   "unknown escape sequence");
			continue;
		}
		"\n"          { lx->cur--; goto unterminated; }
		"\x00"        {
			if (at_end(lx))
				goto unterminated;
			bad_char(lx, lx->cur - 1);
			continue;
		}
		*             { continue; }  /* a backslash before a newline */
	*/
	}
unterminated:
	diag_error(lx->diag, span(lx, lx->tok, lx->tok + 1),
		   "unterminated string literal");
done:
	v->str = strtab_intern(lx->strs, s.n ? s.v : "", s.n);
	return TOK_STRING;
}

/* ---- numbers ------------------------------------------------------------ */

static int
digit_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return 99;
}

static int
base_of(const char *p)
{
	if (p[0] == '0' && p[1] == 'x')
		return 16;
	if (p[0] == '0' && p[1] == 'o')
		return 8;
	if (p[0] == '0' && p[1] == 'b')
		return 2;
	return 10;
}

static TypeKind
suffix_kind(const char *p, const char *e)
{
	int k = p < e ? ty_kind_from_name(p, (size_t)(e - p)) : -1;

	return k < 0 ? TY_VOID : (TypeKind)k;
}

/* An integer literal the rules have checked: digits, then a suffix. */
static int
int_lit(Lexer *lx, LexVal *v)
{
	const char *p = lx->tok, *e = lx->cur;
	int base = base_of(p);
	uint64_t val = 0;
	bool over = false;

	if (base != 10)
		p += 2;
	for (; p < e && (*p == '_' || digit_value(*p) < base); p++) {
		uint64_t d = (uint64_t)digit_value(*p);

		if (*p == '_')
			continue;
		if (val > (UINT64_MAX - d) / (uint64_t)base)
			over = true;
		val = val * (uint64_t)base + d;
	}
	if (over) {
		diag_error(lx->diag, span(lx, lx->tok, e),
			   "integer literal is too large");
		val = 0;
	}
	v->ival = val;
	v->ty = suffix_kind(p, e);
	return TOK_INT;
}

/* A float literal the rules have checked (or decimal digits with a float
 * suffix): strtod on a copy without the '_' separators and the suffix. */
static int
float_lit(Lexer *lx, LexVal *v)
{
	const char *p, *e = lx->cur;
	char *buf = arena_alloc(lx->arena, (size_t)(e - lx->tok) + 1);
	size_t n = 0;

	for (p = lx->tok; p < e && *p != 'f' && *p != 'b'; p++)
		if (*p != '_')
			buf[n++] = *p;
	buf[n] = 0;
	v->fval = strtod(buf, NULL);
	v->ty = suffix_kind(p, e);
	if (isinf(v->fval)) {
		diag_error(lx->diag, span(lx, lx->tok, e),
			   "float literal is out of range");
		v->fval = 0;
	}
	return TOK_FLOAT;
}

/* Skips digits of `base` and the '_' between them; returns the first
 * byte after them, or NULL after reporting a misplaced '_'. */
static const char *
skip_digits(Lexer *lx, const char *p, const char *e, int base)
{
	const char *start = p;

	for (; p < e; p++) {
		if (*p != '_') {
			if (digit_value(*p) >= base)
				break;
			continue;
		}
		if (p == start || p + 1 == e || p[-1] == '_' ||
		    digit_value(p[1]) >= base) {
			diag_error(lx->diag, span(lx, p, p + 1),
				   "digit separator '_' must be between digits");
			return NULL;
		}
	}
	return p;
}

static const char *const base_name[17] = {
	[2] = "binary", [8] = "octal", [10] = "decimal", [16] = "hexadecimal",
};

/* Reports what is wrong with a number followed by letters, digits or
 * '_' that no rule accepts, and returns a literal 0 of the right kind. */
static int
bad_number(Lexer *lx, LexVal *v)
{
	const char *p = lx->tok, *e = lx->cur, *q;
	int base = base_of(p);
	bool isfloat = false;

	v->ival = 0;
	v->fval = 0;
	if (base != 10)
		p += 2;
	if (base != 10 && digit_value(*p) >= base && *p != '_' &&
	    (*p < '0' || *p > '9')) {
		diag_error(lx->diag, span(lx, lx->tok, p),
			   "missing digits after '%.2s'", lx->tok);
		return TOK_INT;
	}
	if (!(p = skip_digits(lx, p, e, base)))
		return TOK_INT;
	if (base == 10 && p + 1 < e && *p == '.') {
		isfloat = true;
		if (!(p = skip_digits(lx, p + 1, e, 10)))
			return TOK_FLOAT;
	}
	if (base == 10 && (*p == 'e' || *p == 'E')) {
		q = p + 1;
		if (q < e && (*q == '+' || *q == '-'))
			q++;
		if (q == e) {
			diag_error(lx->diag, span(lx, p, e),
				   "exponent has no digits");
			return TOK_FLOAT;
		}
		if (*q >= '0' && *q <= '9') {
			isfloat = true;
			if (!(p = skip_digits(lx, q, e, 10)))
				return TOK_FLOAT;
		}
	}
	if (base != 10 && *p >= '0' && *p <= '9')
		diag_error(lx->diag, span(lx, p, p + 1),
			   "invalid digit '%c' in %s literal", *p,
			   base_name[base]);
	else
		diag_error(lx->diag, span(lx, p, e),
			   "invalid suffix '%.*s' on %s literal",
			   (int)MIN(e - p, 40), p, isfloat ? "float" : "integer");
	return isfloat ? TOK_FLOAT : TOK_INT;
}

/* ---- the token scanner -------------------------------------------------- */

static int
scalar(LexVal *v, TypeKind k)
{
	v->ty = k;
	return TOK_SCALARTYPE;
}

static int
scan(Lexer *lx, LexVal *v)
{
	lx->tok = lx->cur;
	/*!re2c
	"\x00"          {
		if (at_end(lx))
			return TOK_YYEOF;
		bad_char(lx, lx->tok);
		return SKIP;
	}
	[ \t\r\v\f]+    { return SKIP; }
	"\n"            { newline(lx); return SKIP; }
	"//"            { line_comment(lx); return SKIP; }
	"/" "*"         { block_comment(lx); return SKIP; }

	"kernel"        { return TOK_KERNEL; }
	"fn"            { return TOK_FN; }
	"const"         { return TOK_CONST; }
	"let"           { return TOK_LET; }
	"var"           { return TOK_VAR; }
	"if"            { return TOK_IF; }
	"else"          { return TOK_ELSE; }
	"for"           { return TOK_FOR; }
	"in"            { return TOK_IN; }
	"step"          { return TOK_STEP; }
	"while"         { return TOK_WHILE; }
	"return"        { return TOK_RETURN; }
	"break"         { return TOK_BREAK; }
	"continue"      { return TOK_CONTINUE; }
	"true"          { return TOK_TRUE; }
	"false"         { return TOK_FALSE; }
	"None"          { return TOK_NONE; }
	"shared"        { return TOK_SHARED; }
	"barrier"       { return TOK_BARRIER; }
	/* a keyword in label position, as in tma_load(..., barrier: b),
	 * is a plain name */
	"barrier" / [ \t]* ":" {
		v->str = strtab_intern(lx->strs, lx->tok,
				       (size_t)(lx->cur - lx->tok));
		return TOK_IDENT;
	}
	"pipe"          { return TOK_PIPE; }
	"tasks"         { return TOK_TASKS; }
	"task"          { return TOK_TASK; }
	"tma"           { return TOK_TMA; }
	"static_assert" { return TOK_STATIC_ASSERT; }

	"i1"            { return scalar(v, TY_I1); }
	"i8"            { return scalar(v, TY_I8); }
	"i16"           { return scalar(v, TY_I16); }
	"i32"           { return scalar(v, TY_I32); }
	"i64"           { return scalar(v, TY_I64); }
	"u8"            { return scalar(v, TY_U8); }
	"u16"           { return scalar(v, TY_U16); }
	"u32"           { return scalar(v, TY_U32); }
	"u64"           { return scalar(v, TY_U64); }
	"f16"           { return scalar(v, TY_F16); }
	"bf16"          { return scalar(v, TY_BF16); }
	"f32"           { return scalar(v, TY_F32); }
	"f64"           { return scalar(v, TY_F64); }
	"f8e4m3"        { return scalar(v, TY_F8E4M3); }
	"f8e5m2"        { return scalar(v, TY_F8E5M2); }

	ident           {
		v->str = strtab_intern(lx->strs, lx->tok,
				       (size_t)(lx->cur - lx->tok));
		return TOK_IDENT;
	}

	dec isuf?                  { return int_lit(lx, v); }
	(hex | oct | bin) isuf?    { return int_lit(lx, v); }
	dec fsuf | flt fsuf?       { return float_lit(lx, v); }
	(dec | hex | oct | bin | flt) word+ { return bad_number(lx, v); }

	"\""            { return string_lit(lx, v); }

	"+"   { return TOK_PLUS; }     "-"   { return TOK_MINUS; }
	"*"   { return TOK_STAR; }     "/"   { return TOK_SLASH; }
	"%"   { return TOK_PERCENT; }  "&"   { return TOK_AMP; }
	"|"   { return TOK_BAR; }      "^"   { return TOK_CARET; }
	"~"   { return TOK_TILDE; }    "!"   { return TOK_BANG; }
	"<<"  { return TOK_SHL; }      ">>"  { return TOK_SHR; }
	"=="  { return TOK_EQ; }       "!="  { return TOK_NE; }
	"<"   { return TOK_LT; }       "<="  { return TOK_LE; }
	">"   { return TOK_GT; }       ">="  { return TOK_GE; }
	"&&"  { return TOK_ANDAND; }   "||"  { return TOK_OROR; }
	"="   { return TOK_ASSIGN; }   "+="  { return TOK_ADDEQ; }
	"-="  { return TOK_SUBEQ; }    "*="  { return TOK_MULEQ; }
	"/="  { return TOK_DIVEQ; }    "%="  { return TOK_REMEQ; }
	"&="  { return TOK_ANDEQ; }    "|="  { return TOK_OREQ; }
	"^="  { return TOK_XOREQ; }    "<<=" { return TOK_SHLEQ; }
	">>=" { return TOK_SHREQ; }
	"("   { return TOK_LPAREN; }   ")"   { return TOK_RPAREN; }
	"["   { return TOK_LBRACK; }   "]"   { return TOK_RBRACK; }
	"{"   { return TOK_LBRACE; }   "}"   { return TOK_RBRACE; }
	","   { return TOK_COMMA; }    ";"   { return TOK_SEMI; }
	":"   { return TOK_COLON; }    "."   { return TOK_DOT; }
	".."  { return TOK_DOTDOT; }   "->"  { return TOK_ARROW; }

	*               { bad_char(lx, lx->tok); return SKIP; }
	*/
}

int
lex_scan(Lexer *lx, LexVal *v, SrcRange *loc)
{
	int t;

	memset(v, 0, sizeof *v);
	do
		t = scan(lx, v);
	while (t == SKIP);
	*loc = span(lx, lx->tok, lx->cur);
	if (t != TOK_YYEOF)
		lx->after_last = (SrcLoc){ loc->last_line, loc->last_column + 1 };
	else if (lx->after_last.line)
		*loc = range_at(lx->after_last);  /* just after the last token */
	return t;
}
