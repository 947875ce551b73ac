/* Unit tests of the scanner: token kinds, values and exact positions
 * (1-based lines, byte columns, last_column inclusive), including the
 * end of file, tabs, comments, NUL bytes and error recovery. */
#include "lexer/lex.h"
#include "test.h"

typedef struct Fixture {
	Arena arena;
	Strtab strs;
	Source src;
	Diag diag;
	Lexer lx;
} Fixture;

static void
setup(Fixture *f, const char *text, size_t len)
{
	arena_init(&f->arena, NULL, NULL, NULL);
	strtab_init(&f->strs, &f->arena);
	src_init(&f->src, &f->arena, "t.tlx", text, len);
	diag_init(&f->diag, &f->arena, &f->src, NULL);
	lex_init(&f->lx, &f->arena, &f->strs, &f->diag, &f->src);
}

/* Scans one token and checks its kind and range. */
#define TOKEN(f, kind, l0, c0, l1, c1)                                        \
	do {                                                                  \
		LexVal v_;                                                    \
		SrcRange r_;                                                  \
		ASSERT(kind, lex_scan(&(f)->lx, &v_, &r_));                   \
		ASSERT(l0, r_.first_line);                                    \
		ASSERT(c0, r_.first_column);                                  \
		ASSERT(l1, r_.last_line);                                     \
		ASSERT(c1, r_.last_column);                                   \
	} while (0)

static LexVal
next(Fixture *f, int kind)
{
	LexVal v;
	SrcRange r;

	ASSERT(kind, lex_scan(&f->lx, &v, &r));
	return v;
}

static void
test_positions(void)
{
	Fixture f;
	const char *text = "let x1 = 10i64;\n"
			   "\t// comment\n"
			   "  /* a /* nested */\n comment */ y <<= 0x1F;\n";

	setup(&f, text, strlen(text));
	TOKEN(&f, TOK_LET, 1, 1, 1, 3);
	TOKEN(&f, TOK_IDENT, 1, 5, 1, 6);
	TOKEN(&f, TOK_ASSIGN, 1, 8, 1, 8);
	TOKEN(&f, TOK_INT, 1, 10, 1, 14);
	TOKEN(&f, TOK_SEMI, 1, 15, 1, 15);
	TOKEN(&f, TOK_IDENT, 4, 13, 4, 13);
	TOKEN(&f, TOK_SHLEQ, 4, 15, 4, 17);
	TOKEN(&f, TOK_INT, 4, 19, 4, 22);
	TOKEN(&f, TOK_SEMI, 4, 23, 4, 23);
	/* the end is reported just after the last token, again and again */
	TOKEN(&f, TOK_YYEOF, 4, 24, 4, 24);
	TOKEN(&f, TOK_YYEOF, 4, 24, 4, 24);
	ASSERT(0, f.diag.nerrors);
	arena_reset(&f.arena);
}

static void
test_tabs_and_empty(void)
{
	Fixture f;

	setup(&f, "\t\tx", 3);
	TOKEN(&f, TOK_IDENT, 1, 3, 1, 3);
	arena_reset(&f.arena);
	setup(&f, "", 0);
	TOKEN(&f, TOK_YYEOF, 1, 1, 1, 1);
	ASSERT(0, f.diag.nerrors);
	arena_reset(&f.arena);
}

static void
test_values(void)
{
	Fixture f;
	const char *text = "1_000 0xffu32 0o17 0b1010i8 18446744073709551615 "
			   "2f32 1.5e-3 2.0bf16 f8e4m3 \"a\\tb\\\"c\" ..";
	LexVal v;

	setup(&f, text, strlen(text));
	v = next(&f, TOK_INT);
	ASSERT(1000, v.ival);
	ASSERT(TY_VOID, v.ty);
	v = next(&f, TOK_INT);
	ASSERT(255, v.ival);
	ASSERT(TY_U32, v.ty);
	ASSERT(15, next(&f, TOK_INT).ival);
	v = next(&f, TOK_INT);
	ASSERT(10, v.ival);
	ASSERT(TY_I8, v.ty);
	CHECK(next(&f, TOK_INT).ival == UINT64_MAX);
	v = next(&f, TOK_FLOAT);
	CHECK(v.fval == 2.0);
	ASSERT(TY_F32, v.ty);
	CHECK(next(&f, TOK_FLOAT).fval == 1.5e-3);
	v = next(&f, TOK_FLOAT);
	CHECK(v.fval == 2.0);
	ASSERT(TY_BF16, v.ty);
	ASSERT(TY_F8E4M3, next(&f, TOK_SCALARTYPE).ty);
	ASSERT_STR("a\tb\"c", next(&f, TOK_STRING).str);
	next(&f, TOK_DOTDOT);
	next(&f, TOK_YYEOF);
	ASSERT(0, f.diag.nerrors);
	arena_reset(&f.arena);
}

/* 0..n is an integer, '..' and a name: a float needs digits after '.'. */
static void
test_range(void)
{
	Fixture f;

	setup(&f, "0..n", 4);
	TOKEN(&f, TOK_INT, 1, 1, 1, 1);
	TOKEN(&f, TOK_DOTDOT, 1, 2, 1, 3);
	TOKEN(&f, TOK_IDENT, 1, 4, 1, 4);
	arena_reset(&f.arena);
}

static void
test_errors(void)
{
	Fixture f;
	const char text[] = "a\0b @ 99999999999999999999 \"x\\q\"";

	setup(&f, text, sizeof text - 1);
	TOKEN(&f, TOK_IDENT, 1, 1, 1, 1);
	TOKEN(&f, TOK_IDENT, 1, 3, 1, 3);  /* the NUL and '@' are skipped */
	ASSERT(0, next(&f, TOK_INT).ival);  /* too large: reported, 0 */
	ASSERT_STR("x", next(&f, TOK_STRING).str);
	next(&f, TOK_YYEOF);
	ASSERT(4, f.diag.nerrors);
	ASSERT_STR("invalid character '\\x00'", f.diag.msgs.v[0].msg);
	ASSERT(2, f.diag.msgs.v[0].range.first_column);
	ASSERT_STR("invalid character '@'", f.diag.msgs.v[1].msg);
	ASSERT_STR("integer literal is too large", f.diag.msgs.v[2].msg);
	ASSERT_STR("unknown escape sequence '\\q'", f.diag.msgs.v[3].msg);
	arena_reset(&f.arena);
}

static void
test_unterminated(void)
{
	Fixture f;

	setup(&f, "x /* a\n /* b */", 15);
	TOKEN(&f, TOK_IDENT, 1, 1, 1, 1);
	next(&f, TOK_YYEOF);
	ASSERT(1, f.diag.nerrors);
	ASSERT(3, f.diag.msgs.v[0].range.first_column);
	ASSERT_STR("unterminated comment", f.diag.msgs.v[0].msg);
	arena_reset(&f.arena);
	setup(&f, "\"abc\nx", 6);
	TOKEN(&f, TOK_STRING, 1, 1, 1, 4);
	TOKEN(&f, TOK_IDENT, 2, 1, 2, 1);
	ASSERT_STR("unterminated string literal", f.diag.msgs.v[0].msg);
	arena_reset(&f.arena);
}

int
main(void)
{
	test_positions();
	test_tabs_and_empty();
	test_values();
	test_range();
	test_errors();
	test_unterminated();
	TEST_MAIN_END();
}
