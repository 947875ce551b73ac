/*
 * parse.y: the grammar of tlx (bison 3.8).  docs/language.md carries the
 * same grammar for users; the AST each rule builds is listed in ast.h.
 * Actions only build nodes.
 *
 * Syntax errors read "unexpected X, expected Y or Z" (yyreport_syntax_error
 * folds the expected tokens into "expression", "type" or "statement").
 * Recovery resumes after the bad statement (`error ';'`), block or brace
 * list (`error '}'`) or top-level item, so one run reports many errors, up
 * to the Diag's cap.  While bison recovers, the scanner wrapper hides the
 * bracket groups opened after the error, so that bison never resumes at a
 * ';' or '}' inside code it is skipping; the end of a hidden brace group
 * reads as ';' (a bad statement may end with a block).  The error rules
 * end the recovery (RECOVERED) and the next error is reported at once.
 *
 * The wrapper also counts open brackets: nesting deeper than
 * TLX_MAX_NESTING stops the parse, as does the Diag's cap; after either
 * it returns only the end of file and nothing more is reported.  A tree
 * deeper than MAX_TREE_DEPTH (a very long operator chain or else-if
 * ladder) is rejected after the parse, so that the recursive walkers of
 * later phases cannot run out of stack.
 */

%define api.pure full
%define api.prefix {tlx_yy}
%define api.token.prefix {TOK_}
%define api.location.type {SrcRange}
%define api.header.include {"parser/parse.h"}
%define parse.error custom
%define parse.lac full
%locations
%param {Parser *p}
%expect 0

%code requires {
#include "parser/ast.h"

/* The value the scanner gives with a token. */
typedef struct LexVal {
	uint64_t ival;     /* INT: the bits */
	double fval;       /* FLOAT */
	const char *str;   /* IDENT: the name; STRING: the decoded text */
	TypeKind ty;       /* SCALARTYPE: the type; INT, FLOAT: the suffix */
} LexVal;
}

%code {
#include "lexer/lex.h"

/* bison 3.8's pure parser counts yynerrs and never reads it: clang warns */
#ifdef __clang__
#pragma clang diagnostic ignored "-Wunused-but-set-variable"
#endif

enum { MAX_TREE_DEPTH = 2048 };

struct Parser {
	Lexer lx;
	Arena *arena;
	Diag *diag;
	const Source *src;
	Ast *file;
	bool fatal;       /* stop: report nothing more, read no more tokens */
	bool recovering;  /* after a syntax error, until an error rule ends */
	int rdepth;       /* the nesting level that recovery resumes at */
	int depth;        /* open brackets, and where and which each one is */
	SrcRange open[TLX_MAX_NESTING];
	char open_ch[TLX_MAX_NESTING];
};

/* In an error rule's action: recovery is over, report the next error. */
#define RECOVERED() (p->recovering = false, yyerrok)

static int tlx_yylex(TLX_YYSTYPE *val, SrcRange *loc, Parser *p);
static void tlx_yyerror(SrcRange *loc, Parser *p, const char *msg);
static Ast *node(Parser *p, AstKind k, SrcRange loc, const char *name,
		 Ast *a, Ast *b);
static Ast *listed(Ast *n, AstList l);
static Ast *with_cd(Ast *n, Ast *c, Ast *d);
static AstList list1(Parser *p, Ast *n);
static AstList append(Parser *p, AstList l, Ast *n);
static Ast *int_node(Parser *p, SrcRange loc, LexVal v);
static Ast *float_node(Parser *p, SrcRange loc, LexVal v);
static Ast *scalar_node(Parser *p, AstKind k, SrcRange loc, TypeKind t);
static Ast *param_node(Parser *p, SrcRange loc, bool is_const, LexVal name,
		       Ast *type, Ast *dflt);
}

%union {
	LexVal tok;
	Ast *node;
	AstList list;
	AstOp op;
}

%token <tok> IDENT "identifier" INT "integer literal" FLOAT "float literal"
%token <tok> STRING "string literal" SCALARTYPE "type name"
%token KERNEL "kernel" FN "fn" CONST "const" LET "let" VAR "var" IF "if"
%token ELSE "else" FOR "for" IN "in" STEP "step" WHILE "while"
%token RETURN "return" BREAK "break" CONTINUE "continue" TRUE "true"
%token FALSE "false" NONE "None" SHARED "shared" BARRIER "barrier"
%token PIPE "pipe" TASKS "tasks" TASK "task" TMA "tma"
%token STATIC_ASSERT "static_assert"
%token PLUS "+" MINUS "-" STAR "*" SLASH "/" PERCENT "%" AMP "&" BAR "|"
%token CARET "^" TILDE "~" BANG "!" SHL "<<" SHR ">>" EQ "==" NE "!="
%token LT "<" LE "<=" GT ">" GE ">=" ANDAND "&&" OROR "||"
%token ASSIGN "=" ADDEQ "+=" SUBEQ "-=" MULEQ "*=" DIVEQ "/=" REMEQ "%="
%token ANDEQ "&=" OREQ "|=" XOREQ "^=" SHLEQ "<<=" SHREQ ">>="
%token LPAREN "(" RPAREN ")" LBRACK "[" RBRACK "]" LBRACE "{" RBRACE "}"
%token COMMA "," SEMI ";" COLON ":" DOT "." DOTDOT ".." ARROW "->"

%type <node> item param kattr block stmt ifstmt optstep pipefield task
%type <node> type opttype optret expr unary postfix primary arg idxitem
%type <list> params paramlist kattrs stmts namelist2 args arglist
%type <list> optcallargs pipefields tasklist exprlist tuplelist idxitems
%type <op> assignop

/* Binary operators, loosest first; all associate to the left. */
%left OROR
%left ANDAND
%left BAR
%left CARET
%left AMP
%left EQ NE
%left LT LE GT GE
%left SHL SHR
%left PLUS MINUS
%left STAR SLASH PERCENT
/* `x.f(...)` is a method call, not a call of the field x.f. */
%precedence FIELD
%precedence LPAREN

%%

file
	: %empty
	| file item         { ast_push(p->arena, &p->file->list, $2); }
	| file error RBRACE { RECOVERED(); }
	| file error SEMI   { RECOVERED(); }
	;

item
	: KERNEL IDENT LPAREN params RPAREN kattrs block
		{ $$ = node(p, AST_KERNEL, @$, $2.str, NULL, NULL);
		  $$->list = $4; $$->list2 = $6; $$->d = $7; }
	| FN IDENT LPAREN params RPAREN optret block
		{ $$ = with_cd(listed(node(p, AST_FN, @$, $2.str, $6, NULL), $4),
			       NULL, $7); }
	| CONST IDENT opttype ASSIGN expr SEMI
		{ $$ = node(p, AST_CONSTDECL, @$, $2.str, $3, $5); }
	;

params
	: %empty                     { $$ = (AstList){ 0 }; }
	| paramlist
	| paramlist COMMA
	;

paramlist
	: param                      { $$ = list1(p, $1); }
	| paramlist COMMA param       { $$ = append(p, $1, $3); }
	;

param
	: IDENT opttype              { $$ = param_node(p, @$, false, $1, $2, NULL); }
	| IDENT opttype ASSIGN expr  { $$ = param_node(p, @$, false, $1, $2, $4); }
	| CONST IDENT opttype        { $$ = param_node(p, @$, true, $2, $3, NULL); }
	| CONST IDENT opttype ASSIGN expr
		{ $$ = param_node(p, @$, true, $2, $3, $5); }
	;

kattrs
	: %empty                     { $$ = (AstList){ 0 }; }
	| kattrs kattr               { $$ = append(p, $1, $2); }
	;

kattr
	: IDENT LPAREN args RPAREN
		{ $$ = listed(node(p, AST_KATTR, @$, $1.str, NULL, NULL), $3); }
	;

opttype
	: %empty                     { $$ = NULL; }
	| COLON type                 { $$ = $2; }
	;

optret
	: %empty                     { $$ = NULL; }
	| ARROW type                 { $$ = $2; }
	;

type
	: SCALARTYPE                 { $$ = scalar_node(p, AST_TY_SCALAR, @$, $1.ty); }
	| SCALARTYPE LBRACK exprlist RBRACK
		{ $$ = listed(scalar_node(p, AST_TY_TILE, @$, $1.ty), $3); }
	| STAR type                  { $$ = node(p, AST_TY_PTR, @$, NULL, $2, NULL); }
	| TMA LT SCALARTYPE COMMA postfix GT
		{ $$ = scalar_node(p, AST_TY_TMA, @$, $3.ty); $$->a = $5; }
	;

/* ---- statements ---------------------------------------------------------- */

block
	: LBRACE stmts RBRACE        { $$ = listed(node(p, AST_BLOCK, @$, NULL, NULL, NULL), $2); }
	| LBRACE stmts error RBRACE
		{ RECOVERED(); $$ = listed(node(p, AST_BLOCK, @$, NULL, NULL, NULL), $2); }
	;

stmts
	: %empty                     { $$ = (AstList){ 0 }; }
	| stmts stmt                 { $$ = $2 ? append(p, $1, $2) : $1; }
	;

stmt
	: LET IDENT opttype ASSIGN expr SEMI
		{ $$ = node(p, AST_LET, @$, $2.str, $3, $5); }
	| LET LPAREN namelist2 RPAREN ASSIGN expr SEMI
		{ $$ = listed(node(p, AST_LET, @$, NULL, NULL, $6), $3); }
	| VAR IDENT opttype ASSIGN expr SEMI
		{ $$ = node(p, AST_VAR, @$, $2.str, $3, $5); }
	| IDENT assignop expr SEMI
		{ $$ = node(p, AST_ASSIGN, @$, $1.str, NULL, $3); $$->op = $2; }
	| expr SEMI                  { $$ = node(p, AST_EXPRSTMT, @$, NULL, $1, NULL); }
	| ifstmt
	| FOR IDENT IN expr DOTDOT expr optstep block
		{ $$ = with_cd(node(p, AST_FOR, @$, $2.str, $4, $6), $7, $8); }
	| FOR IDENT IN expr block
		{ $$ = with_cd(node(p, AST_FOREACH, @$, $2.str, $4, NULL), NULL, $5); }
	| WHILE expr block
		{ $$ = with_cd(node(p, AST_WHILE, @$, NULL, $2, NULL), NULL, $3); }
	| BREAK SEMI                 { $$ = node(p, AST_BREAK, @$, NULL, NULL, NULL); }
	| CONTINUE SEMI              { $$ = node(p, AST_CONTINUE, @$, NULL, NULL, NULL); }
	| RETURN SEMI                { $$ = node(p, AST_RETURN, @$, NULL, NULL, NULL); }
	| RETURN expr SEMI           { $$ = node(p, AST_RETURN, @$, NULL, $2, NULL); }
	| SHARED IDENT COLON type SEMI
		{ $$ = node(p, AST_SHARED, @$, $2.str, $4, NULL); }
	| BARRIER IDENT LBRACK expr RBRACK optcallargs SEMI
		{ $$ = listed(node(p, AST_BARRIER, @$, $2.str, $4, NULL), $6); }
	| PIPE IDENT LPAREN expr RPAREN LBRACE pipefields RBRACE
		{ $$ = listed(node(p, AST_PIPE, @$, $2.str, $4, NULL), $7); }
	| PIPE IDENT LPAREN expr RPAREN LBRACE pipefields COMMA RBRACE
		{ $$ = listed(node(p, AST_PIPE, @$, $2.str, $4, NULL), $7); }
	| PIPE IDENT LPAREN expr RPAREN LBRACE error RBRACE
		{ RECOVERED(); $$ = NULL; }
	| TASKS LBRACE tasklist RBRACE
		{ $$ = listed(node(p, AST_TASKS, @$, NULL, NULL, NULL), $3); }
	| TASKS LBRACE tasklist error RBRACE
		{ RECOVERED(); $$ = listed(node(p, AST_TASKS, @$, NULL, NULL, NULL), $3); }
	| STATIC_ASSERT LPAREN expr RPAREN SEMI
		{ $$ = node(p, AST_STATIC_ASSERT, @$, NULL, $3, NULL); }
	| STATIC_ASSERT LPAREN expr COMMA STRING RPAREN SEMI
		{ $$ = node(p, AST_STATIC_ASSERT, @$, NULL, $3,
			    node(p, AST_STRING, @5, $5.str, NULL, NULL)); }
	| block
	| SEMI                       { $$ = NULL; }
	| error SEMI                 { RECOVERED(); $$ = NULL; }
	;

assignop
	: ASSIGN { $$ = BIN_NONE; }   | ADDEQ { $$ = BIN_ADD; }
	| SUBEQ  { $$ = BIN_SUB; }    | MULEQ { $$ = BIN_MUL; }
	| DIVEQ  { $$ = BIN_DIV; }    | REMEQ { $$ = BIN_REM; }
	| ANDEQ  { $$ = BIN_BITAND; } | OREQ  { $$ = BIN_BITOR; }
	| XOREQ  { $$ = BIN_BITXOR; } | SHLEQ { $$ = BIN_SHL; }
	| SHREQ  { $$ = BIN_SHR; }
	;

namelist2
	: IDENT COMMA IDENT
		{ $$ = append(p, list1(p, ast_name(p->arena, @1, $1.str)),
			      ast_name(p->arena, @3, $3.str)); }
	| namelist2 COMMA IDENT      { $$ = append(p, $1, ast_name(p->arena, @3, $3.str)); }
	;

ifstmt
	: IF expr block              { $$ = node(p, AST_IF, @$, NULL, $2, $3); }
	| IF expr block ELSE block   { $$ = with_cd(node(p, AST_IF, @$, NULL, $2, $3), $5, NULL); }
	| IF expr block ELSE ifstmt  { $$ = with_cd(node(p, AST_IF, @$, NULL, $2, $3), $5, NULL); }
	;

optstep
	: %empty                     { $$ = NULL; }
	| STEP expr                  { $$ = $2; }
	;

optcallargs
	: %empty                     { $$ = (AstList){ 0 }; }
	| LPAREN args RPAREN         { $$ = $2; }
	;

pipefields
	: pipefield                  { $$ = list1(p, $1); }
	| pipefields COMMA pipefield { $$ = append(p, $1, $3); }
	;

pipefield
	: IDENT COLON type           { $$ = node(p, AST_PIPEFIELD, @$, $1.str, $3, NULL); }
	;

tasklist
	: %empty                     { $$ = (AstList){ 0 }; }
	| tasklist task              { $$ = append(p, $1, $2); }
	;

task
	: TASK IDENT LPAREN args RPAREN block
		{ $$ = with_cd(listed(node(p, AST_TASK, @$, $2.str, NULL, NULL), $4),
			       NULL, $6); }
	;

/* ---- expressions --------------------------------------------------------- */

expr
	: unary
	| expr OROR expr     { $$ = ast_binary(p->arena, @$, BIN_LOGOR, $1, $3); }
	| expr ANDAND expr   { $$ = ast_binary(p->arena, @$, BIN_LOGAND, $1, $3); }
	| expr BAR expr      { $$ = ast_binary(p->arena, @$, BIN_BITOR, $1, $3); }
	| expr CARET expr    { $$ = ast_binary(p->arena, @$, BIN_BITXOR, $1, $3); }
	| expr AMP expr      { $$ = ast_binary(p->arena, @$, BIN_BITAND, $1, $3); }
	| expr EQ expr       { $$ = ast_binary(p->arena, @$, BIN_EQ, $1, $3); }
	| expr NE expr       { $$ = ast_binary(p->arena, @$, BIN_NE, $1, $3); }
	| expr LT expr       { $$ = ast_binary(p->arena, @$, BIN_LT, $1, $3); }
	| expr LE expr       { $$ = ast_binary(p->arena, @$, BIN_LE, $1, $3); }
	| expr GT expr       { $$ = ast_binary(p->arena, @$, BIN_GT, $1, $3); }
	| expr GE expr       { $$ = ast_binary(p->arena, @$, BIN_GE, $1, $3); }
	| expr SHL expr      { $$ = ast_binary(p->arena, @$, BIN_SHL, $1, $3); }
	| expr SHR expr      { $$ = ast_binary(p->arena, @$, BIN_SHR, $1, $3); }
	| expr PLUS expr     { $$ = ast_binary(p->arena, @$, BIN_ADD, $1, $3); }
	| expr MINUS expr    { $$ = ast_binary(p->arena, @$, BIN_SUB, $1, $3); }
	| expr STAR expr     { $$ = ast_binary(p->arena, @$, BIN_MUL, $1, $3); }
	| expr SLASH expr    { $$ = ast_binary(p->arena, @$, BIN_DIV, $1, $3); }
	| expr PERCENT expr  { $$ = ast_binary(p->arena, @$, BIN_REM, $1, $3); }
	;

unary
	: postfix
	| MINUS unary        { $$ = ast_unary(p->arena, @$, UN_NEG, $2); }
	| BANG unary         { $$ = ast_unary(p->arena, @$, UN_NOT, $2); }
	| TILDE unary        { $$ = ast_unary(p->arena, @$, UN_BITNOT, $2); }
	;

postfix
	: primary
	| postfix LPAREN args RPAREN
		{ $$ = listed(node(p, AST_CALL, @$, NULL, $1, NULL), $3); }
	| postfix LBRACK idxitems RBRACK
		{ $$ = listed(node(p, AST_INDEX, @$, NULL, $1, NULL), $3); }
	| postfix DOT IDENT %prec FIELD
		{ $$ = node(p, AST_FIELD, @$, $3.str, $1, NULL); }
	| postfix DOT IDENT LPAREN args RPAREN
		{ $$ = listed(node(p, AST_METHOD, @$, $3.str, $1, NULL), $5); }
	;

primary
	: INT                { $$ = int_node(p, @$, $1); }
	| FLOAT              { $$ = float_node(p, @$, $1); }
	| STRING             { $$ = node(p, AST_STRING, @$, $1.str, NULL, NULL); }
	| TRUE               { $$ = node(p, AST_BOOL, @$, NULL, NULL, NULL); $$->ival = 1; }
	| FALSE              { $$ = node(p, AST_BOOL, @$, NULL, NULL, NULL); }
	| NONE               { $$ = node(p, AST_NONE, @$, NULL, NULL, NULL); }
	| IDENT              { $$ = ast_name(p->arena, @$, $1.str); }
	| SCALARTYPE
		{ $$ = node(p, AST_TYPEEXPR, @$, NULL,
			    scalar_node(p, AST_TY_SCALAR, @$, $1.ty), NULL); }
	| LPAREN expr RPAREN { $$ = $2; }
	| LPAREN expr COMMA RPAREN
		{ $$ = listed(node(p, AST_TUPLE, @$, NULL, NULL, NULL), list1(p, $2)); }
	| LPAREN tuplelist RPAREN
		{ $$ = listed(node(p, AST_TUPLE, @$, NULL, NULL, NULL), $2); }
	| LPAREN tuplelist COMMA RPAREN
		{ $$ = listed(node(p, AST_TUPLE, @$, NULL, NULL, NULL), $2); }
	| LBRACK RBRACK      { $$ = node(p, AST_LIST, @$, NULL, NULL, NULL); }
	| LBRACK exprlist RBRACK
		{ $$ = listed(node(p, AST_LIST, @$, NULL, NULL, NULL), $2); }
	| LBRACK exprlist COMMA RBRACK
		{ $$ = listed(node(p, AST_LIST, @$, NULL, NULL, NULL), $2); }
	;

tuplelist
	: expr COMMA expr            { $$ = append(p, list1(p, $1), $3); }
	| tuplelist COMMA expr       { $$ = append(p, $1, $3); }
	;

exprlist
	: expr                       { $$ = list1(p, $1); }
	| exprlist COMMA expr        { $$ = append(p, $1, $3); }
	;

args
	: %empty                     { $$ = (AstList){ 0 }; }
	| arglist
	| arglist COMMA
	;

arglist
	: arg                        { $$ = list1(p, $1); }
	| arglist COMMA arg          { $$ = append(p, $1, $3); }
	;

arg
	: expr
	| IDENT COLON expr           { $$ = node(p, AST_ARG, @$, $1.str, $3, NULL); }
	;

idxitems
	: idxitem                    { $$ = list1(p, $1); }
	| idxitems COMMA idxitem     { $$ = append(p, $1, $3); }
	;

idxitem
	: expr
	| expr DOTDOT expr           { $$ = node(p, AST_SLICE, @$, NULL, $1, $3); }
	| COLON                      { $$ = node(p, AST_FULLSLICE, @$, NULL, NULL, NULL); }
	;

%%

/* ---- node helpers (the actions' vocabulary) ------------------------------ */

static Ast *
node(Parser *p, AstKind k, SrcRange loc, const char *name, Ast *a, Ast *b)
{
	Ast *n = ast_new(p->arena, k, loc);

	n->name = name;
	n->a = a;
	n->b = b;
	return n;
}

static Ast *
listed(Ast *n, AstList l)
{
	n->list = l;
	return n;
}

static Ast *
with_cd(Ast *n, Ast *c, Ast *d)
{
	n->c = c;
	n->d = d;
	return n;
}

static AstList
list1(Parser *p, Ast *n)
{
	AstList l = { 0 };

	ast_push(p->arena, &l, n);
	return l;
}

static AstList
append(Parser *p, AstList l, Ast *n)
{
	ast_push(p->arena, &l, n);
	return l;
}

static Ast *
int_node(Parser *p, SrcRange loc, LexVal v)
{
	Ast *n = ast_new(p->arena, AST_INT, loc);

	n->ival = (int64_t)v.ival;
	n->suffix = v.ty;
	return n;
}

static Ast *
float_node(Parser *p, SrcRange loc, LexVal v)
{
	Ast *n = ast_new(p->arena, AST_FLOAT, loc);

	n->fval = v.fval;
	n->suffix = v.ty;
	return n;
}

static Ast *
scalar_node(Parser *p, AstKind k, SrcRange loc, TypeKind t)
{
	Ast *n = ast_new(p->arena, k, loc);

	n->scalar = t;
	return n;
}

static Ast *
param_node(Parser *p, SrcRange loc, bool is_const, LexVal name, Ast *type,
	   Ast *dflt)
{
	Ast *n = node(p, AST_PARAM, loc, name.str, type, dflt);

	n->is_const = is_const;
	return n;
}

/* ---- the scanner as bison sees it ---------------------------------------- */

static bool
closes(int t, char open)
{
	return (t == TOK_RPAREN && open == '(') ||
	       (t == TOK_RBRACK && open == '[') ||
	       (t == TOK_RBRACE && open == '{');
}

/* The next token, with the bracket nesting it leaves; the end of file
 * once the parse must stop. */
static int
next_token(Parser *p, TLX_YYSTYPE *val, SrcRange *loc)
{
	int t;

	if (p->fatal || p->diag->stopped) {
		p->fatal = true;
		return TOK_YYEOF;
	}
	t = lex_scan(&p->lx, &val->tok, loc);
	/* No parenthesis or bracket holds a ';' or a brace: those still open
	 * were left open by mistake, and the statement is over anyway. */
	if (t == TOK_SEMI || t == TOK_LBRACE || t == TOK_RBRACE)
		while (p->depth > 0 && p->open_ch[p->depth - 1] != '{')
			p->depth--;
	if (t == TOK_LPAREN || t == TOK_LBRACK || t == TOK_LBRACE) {
		if (p->depth == TLX_MAX_NESTING) {
			diag_error(p->diag, *loc, "nesting is too deep (limit %d)",
				   TLX_MAX_NESTING);
			p->fatal = true;
			return TOK_YYEOF;
		}
		p->open[p->depth] = *loc;
		p->open_ch[p->depth++] = t == TOK_LPAREN ? '(' :
					 t == TOK_LBRACK ? '[' : '{';
	} else if (p->depth > 0 && closes(t, p->open_ch[p->depth - 1])) {
		p->depth--;  /* a closer that does not match stays unmatched */
	}
	return t;
}

/* While recovering, the groups opened after the error are hidden (see
 * the header comment): only tokens at the recovery level, and closers
 * that leave it (lowering it), reach bison. */
static int
tlx_yylex(TLX_YYSTYPE *val, SrcRange *loc, Parser *p)
{
	for (;;) {
		int before = p->depth;
		int t = next_token(p, val, loc);

		if (!p->recovering || t == TOK_YYEOF)
			return t;
		if (p->depth < p->rdepth) {
			p->rdepth = p->depth;
			return t;
		}
		if (p->depth == p->rdepth && before == p->rdepth)
			return t;
		if (t == TOK_RBRACE && p->depth == p->rdepth)
			return TOK_SEMI;
	}
}

/* Bison calls this only when its stacks would grow past YYMAXDEPTH. */
static void
tlx_yyerror(SrcRange *loc, Parser *p, const char *msg)
{
	(void)msg;
	if (!p->fatal)
		diag_error(p->diag, *loc,
			   "expression or statement is too deeply nested");
	p->fatal = true;
}

/* ---- syntax errors: "unexpected X, expected Y or Z" ----------------------- */

typedef struct Msg {
	char s[512];
	size_t n;
} Msg;

static void
msg_put(Msg *m, const char *fmt, ...)
{
	va_list ap;
	int k;

	va_start(ap, fmt);
	k = vsnprintf(m->s + m->n, sizeof m->s - m->n, fmt, ap);
	va_end(ap);
	if (k > 0)
		m->n = MIN(m->n + (size_t)k, sizeof m->s - 1);
}

/* Tokens named by what they are rather than by their spelling. */
static bool
is_class(yysymbol_kind_t s)
{
	return s == YYSYMBOL_YYEOF || s == YYSYMBOL_YYUNDEF ||
	       (s >= YYSYMBOL_IDENT && s <= YYSYMBOL_SCALARTYPE);
}

static void
put_symbol(Msg *m, yysymbol_kind_t s)
{
	msg_put(m, is_class(s) ? "%s" : "'%s'", yysymbol_name(s));
}

/* The unexpected token, with its text when it is a short name or number. */
static void
put_unexpected(Msg *m, Parser *p, yysymbol_kind_t s, SrcRange r)
{
	size_t len, i, b = (size_t)r.first_column - 1, e = (size_t)r.last_column;
	const char *line = src_line(p->src, r.first_line, &len);

	put_symbol(m, s);
	if (s < YYSYMBOL_IDENT || s > YYSYMBOL_SCALARTYPE || s == YYSYMBOL_STRING)
		return;
	if (r.first_line != r.last_line || e > len || b >= e || e - b > 32)
		return;
	for (i = b; i < e; i++)
		if (line[i] <= ' ' || line[i] > '~')
			return;
	msg_put(m, " '%.*s'", (int)(e - b), line + b);
}

static const yysymbol_kind_t expr_start[] = {
	YYSYMBOL_INT, YYSYMBOL_FLOAT, YYSYMBOL_STRING, YYSYMBOL_TRUE,
	YYSYMBOL_FALSE, YYSYMBOL_NONE, YYSYMBOL_IDENT, YYSYMBOL_SCALARTYPE,
	YYSYMBOL_LPAREN, YYSYMBOL_LBRACK, YYSYMBOL_MINUS, YYSYMBOL_BANG,
	YYSYMBOL_TILDE,
};
static const yysymbol_kind_t stmt_start[] = {
	YYSYMBOL_LET, YYSYMBOL_VAR, YYSYMBOL_IF, YYSYMBOL_FOR, YYSYMBOL_WHILE,
	YYSYMBOL_BREAK, YYSYMBOL_CONTINUE, YYSYMBOL_RETURN, YYSYMBOL_SHARED,
	YYSYMBOL_BARRIER, YYSYMBOL_PIPE, YYSYMBOL_TASKS, YYSYMBOL_STATIC_ASSERT,
	YYSYMBOL_LBRACE, YYSYMBOL_SEMI,
};
static const yysymbol_kind_t type_start[] = {
	YYSYMBOL_SCALARTYPE, YYSYMBOL_STAR, YYSYMBOL_TMA,
};
/* What may follow an operand: binary and postfix operators. */
static const yysymbol_kind_t binary_ops[] = {
	YYSYMBOL_OROR, YYSYMBOL_ANDAND, YYSYMBOL_BAR, YYSYMBOL_CARET,
	YYSYMBOL_AMP, YYSYMBOL_EQ, YYSYMBOL_NE, YYSYMBOL_LT, YYSYMBOL_LE,
	YYSYMBOL_GT, YYSYMBOL_GE, YYSYMBOL_SHL, YYSYMBOL_SHR, YYSYMBOL_PLUS,
	YYSYMBOL_MINUS, YYSYMBOL_STAR, YYSYMBOL_SLASH, YYSYMBOL_PERCENT,
};
static const yysymbol_kind_t postfix_ops[] = {
	YYSYMBOL_LPAREN, YYSYMBOL_LBRACK, YYSYMBOL_DOT,
};
static const yysymbol_kind_t compound_assign[] = {
	YYSYMBOL_ADDEQ, YYSYMBOL_SUBEQ, YYSYMBOL_MULEQ, YYSYMBOL_DIVEQ,
	YYSYMBOL_REMEQ, YYSYMBOL_ANDEQ, YYSYMBOL_OREQ, YYSYMBOL_XOREQ,
	YYSYMBOL_SHLEQ, YYSYMBOL_SHREQ,
};

static void
clear(bool *set, const yysymbol_kind_t *syms, size_t n)
{
	while (n--)
		set[syms[n]] = false;
}

/* Folds the expected tokens into groups ("expression", "type",
 * "statement") and drops the operators that could continue an operand,
 * which are always possible there and never what was missing. */
static int
fold_expected(bool *set, const char **groups)
{
	int ng = 0;

	if (set[YYSYMBOL_LET] && set[YYSYMBOL_WHILE]) {
		clear(set, stmt_start, countof(stmt_start));
		clear(set, expr_start, countof(expr_start));
		groups[ng++] = "statement";
	} else if (set[YYSYMBOL_INT] && set[YYSYMBOL_LPAREN] &&
		   set[YYSYMBOL_MINUS]) {
		clear(set, expr_start, countof(expr_start));
		groups[ng++] = "expression";
	}
	if (set[YYSYMBOL_OROR])
		clear(set, binary_ops, countof(binary_ops));
	if (set[YYSYMBOL_DOT])
		clear(set, postfix_ops, countof(postfix_ops));
	if (set[YYSYMBOL_ADDEQ])
		clear(set, compound_assign, countof(compound_assign));
	if (set[YYSYMBOL_SCALARTYPE] && set[YYSYMBOL_STAR] && set[YYSYMBOL_TMA]) {
		clear(set, type_start, countof(type_start));
		groups[ng++] = "type";
	}
	return ng;
}

static void
put_expected(Msg *m, const yypcontext_t *ctx)
{
	yysymbol_kind_t exp[YYNTOKENS];
	bool set[YYNTOKENS] = { 0 };
	const char *groups[2];
	int i, n, ng, k, total;

	n = yypcontext_expected_tokens(ctx, exp, YYNTOKENS);
	for (i = 0; i < n; i++)
		set[exp[i]] = true;
	ng = fold_expected(set, groups);
	total = ng;
	for (i = 0; i < YYNTOKENS; i++)
		total += set[i];
	if (total == 0 || total > 5)
		return;
	msg_put(m, ", expected ");
	for (k = 0; k < ng; k++)
		msg_put(m, "%s%s", k == 0 ? "" : k + 1 == total ? " or " : ", ",
			groups[k]);
	/* in symbol order, but the end of file last */
	for (i = 1; i <= YYNTOKENS; i++) {
		if (!set[i % YYNTOKENS])
			continue;
		msg_put(m, "%s", k == 0 ? "" : k + 1 == total ? " or " : ", ");
		put_symbol(m, (yysymbol_kind_t)(i % YYNTOKENS));
		k++;
	}
}

/* Every error rule syncs on a ';' or '}', which only appear directly in
 * braces: recovery resumes at the innermost open brace, hiding the rest
 * of any parentheses and brackets (and of a group the unexpected token
 * opened: bison drops that token). */
static void
start_recovery(Parser *p, yysymbol_kind_t tok)
{
	int n = p->depth;

	if (tok == YYSYMBOL_LPAREN || tok == YYSYMBOL_LBRACK ||
	    tok == YYSYMBOL_LBRACE)
		n--;
	while (n > 0 && p->open_ch[n - 1] != '{')
		n--;
	p->recovering = true;
	p->rdepth = n;
}

static int
yyreport_syntax_error(const yypcontext_t *ctx, Parser *p)
{
	yysymbol_kind_t tok = yypcontext_token(ctx);
	SrcRange r = *yypcontext_location(ctx);
	Msg m = { .n = 0 };

	start_recovery(p, tok);
	if (p->fatal)
		return 0;
	if (tok == YYSYMBOL_YYEMPTY) {
		diag_error(p->diag, r, "syntax error");
		return 0;
	}
	msg_put(&m, "unexpected ");
	put_unexpected(&m, p, tok, r);
	put_expected(&m, ctx);
	diag_error(p->diag, r, "%s", m.s);
	if (tok == YYSYMBOL_YYEOF && p->depth > 0)
		diag_note(p->diag, p->open[p->depth - 1], "to match this '%c'",
			  p->open_ch[p->depth - 1]);
	return 0;
}

/* ---- the entry point ----------------------------------------------------- */

typedef struct Pending {
	const Ast *n;
	int depth;
} Pending;
typedef Vec(Pending) PendingVec;

static void
push_pending(Arena *a, PendingVec *st, const Ast *n, int depth)
{
	if (n)
		vec_push(a, st, ((Pending){ n, depth }));
}

/* Finds a node deeper than MAX_TREE_DEPTH without recursing; returns it,
 * or NULL when the tree is shallow enough. */
static const Ast *
too_deep(Arena *a, const Ast *root)
{
	PendingVec st = { 0 };
	uint32_t i;

	push_pending(a, &st, root, 1);
	while (st.n) {
		Pending e = st.v[--st.n];
		const Ast *n = e.n;

		if (e.depth > MAX_TREE_DEPTH)
			return n;
		push_pending(a, &st, n->a, e.depth + 1);
		push_pending(a, &st, n->b, e.depth + 1);
		push_pending(a, &st, n->c, e.depth + 1);
		push_pending(a, &st, n->d, e.depth + 1);
		for (i = 0; i < n->list.n; i++)
			push_pending(a, &st, n->list.v[i], e.depth + 1);
		for (i = 0; i < n->list2.n; i++)
			push_pending(a, &st, n->list2.v[i], e.depth + 1);
	}
	return NULL;
}

Ast *
parse_file(Arena *a, Strtab *strs, Diag *d, const Source *src)
{
	Parser *p = arena_alloc(a, sizeof *p);
	ArenaMark mark;
	const Ast *deep;
	SrcRange where;

	p->arena = a;
	p->diag = d;
	p->src = src;
	lex_init(&p->lx, a, strs, d, src);
	p->file = ast_new(a, AST_FILE, (SrcRange){ 1, 1, 1, 1 });
	tlx_yyparse(p);
	if (p->fatal || d->stopped)
		return NULL;
	mark = arena_mark(a);
	deep = too_deep(a, p->file);
	where = deep ? deep->loc : (SrcRange){ 0 };
	arena_release(a, mark);
	if (deep) {
		diag_error(d, where, "expression or statement is too deeply "
			   "nested (limit %d levels)", MAX_TREE_DEPTH);
		return NULL;
	}
	return p->file;
}
