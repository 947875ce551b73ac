/*
 * lex.h: the scanner (lex.re, compiled by re2c into lex.c).
 *
 * The scanner turns the source manager's NUL-terminated buffer into the
 * parser's tokens (TOK_* from parser/parse.h) with their values (LexVal,
 * also from parse.h) and locations (SrcRange, 1-based lines and byte
 * columns, last_column inclusive).  Lexical errors are reported to the
 * Diag and scanning goes on: a bad byte is skipped, a bad literal comes
 * back as a literal of value 0.
 *
 * Only lexer/ and parser/ include this header: it carries bison's names.
 */
#ifndef TLX_LEX_H
#define TLX_LEX_H

#include "parser/parse.h"

/* All of re2c's state and the scanner's own. */
typedef struct Lexer {
	const char *cur;         /* YYCURSOR */
	const char *mar;         /* YYMARKER */
	const char *ctx;         /* YYCTXMARKER (trailing context) */
	const char *tok;         /* start of the token being scanned */
	const char *lim;         /* the terminating NUL (text + len) */
	const char *line_start;  /* first byte of the current line */
	int line;
	SrcLoc after_last;       /* just after the last token, where the end
				  * of the file is reported */
	Arena *arena;
	Strtab *strs;
	Diag *diag;
	const Source *src;
} Lexer;

void lex_init(Lexer *lx, Arena *a, Strtab *strs, Diag *d, const Source *src);
/* The next token's kind (TOK_YYEOF at the end, again and again); its
 * value goes to *v and its location to *loc. */
int lex_scan(Lexer *lx, LexVal *v, SrcRange *loc);

#endif
