/*
 * ast.c: constructing, copying, naming and printing syntax trees.
 *
 * ast_print writes the S-expression form behind `tlxc --emit=ast`, which
 * the tests check with FileCheck, so it must stay stable:
 *
 *   (file
 *     (kernel vadd
 *       (param x (ptr f32))
 *       (param const BLOCK i32 1024)
 *       (attr warps 4)
 *       (block
 *         (let offs (+ (* (call program_id 0) BLOCK) (call range BLOCK)))
 *         (expr (call store (+ out offs) (arg mask m))))))
 *
 * Declarations and statements start a line, indented two spaces per
 * level; expressions and types stay on their parent's line.  Every node
 * with parts is `(head part...)`; leaves print bare:
 *   literals    42  10i64  1.5  2.0bf16  "text"  true  None
 *   names       x            a type used as a value: (type f32)
 *   operators   (+ a b)  (- a)  (! a)  (~ a)  (= x e)  (+= x e)
 *   postfix     (call f args...)  (method obj name args...)  (field obj name)
 *               (index obj items...)  (slice lo hi)  :  (arg name value)
 *   aggregates  (list e...)  (tuple e...)
 *   types       f32  (ptr T)  (tile f32 BM BN)  (tma bf16 2)
 *   statements  (let x [T] e)  (let (a b) e)  (var x [T] e)  (expr e)
 *               (if c then [else])  (for i lo hi [(step s)] body)
 *               (foreach t e body)  (while c body)  (break)  (continue)
 *               (return [e])  (block s...)  (shared S T)  (barrier b n args...)
 *               (pipe p depth (pipefield A T)...)  (tasks (task t args... body)...)
 *               (static_assert c ["msg"])
 *   items       (kernel k params... attrs... body)  (attr name args...)
 *               (fn f params... [(returns T)] body)  (const N [T] e)
 *               (param [const] x [T] [default])
 * An optional type is never ambiguous: no expression prints like a type.
 * Locations are not printed.
 */
#include <math.h>
#include <stdlib.h>

#include "parser/ast.h"

Ast *
ast_new(Arena *a, AstKind k, SrcRange loc)
{
	Ast *n = arena_alloc(a, sizeof *n);

	n->kind = k;
	n->loc = loc;
	n->suffix = TY_VOID;
	n->scalar = TY_VOID;
	return n;
}

Ast *
ast_name(Arena *a, SrcRange loc, const char *name)
{
	Ast *n = ast_new(a, AST_NAME, loc);

	n->name = name;
	return n;
}

Ast *
ast_unary(Arena *a, SrcRange loc, AstOp op, Ast *x)
{
	Ast *n = ast_new(a, AST_UNARY, loc);

	n->op = op;
	n->a = x;
	return n;
}

Ast *
ast_binary(Arena *a, SrcRange loc, AstOp op, Ast *x, Ast *y)
{
	Ast *n = ast_new(a, AST_BINARY, loc);

	n->op = op;
	n->a = x;
	n->b = y;
	return n;
}

void
ast_push(Arena *a, AstList *l, Ast *n)
{
	vec_push(a, l, n);
}

static const char *const kind_names[AST_KIND_COUNT] = {
	[AST_INT] = "int", [AST_FLOAT] = "float", [AST_BOOL] = "bool",
	[AST_STRING] = "string", [AST_NONE] = "None", [AST_NAME] = "name",
	[AST_TYPEEXPR] = "type", [AST_UNARY] = "unary",
	[AST_BINARY] = "binary", [AST_CALL] = "call", [AST_METHOD] = "method",
	[AST_FIELD] = "field", [AST_INDEX] = "index", [AST_SLICE] = "slice",
	[AST_FULLSLICE] = "fullslice", [AST_LIST] = "list",
	[AST_TUPLE] = "tuple", [AST_ARG] = "arg", [AST_LET] = "let",
	[AST_VAR] = "var", [AST_ASSIGN] = "assign", [AST_EXPRSTMT] = "expr",
	[AST_IF] = "if", [AST_FOR] = "for", [AST_FOREACH] = "foreach",
	[AST_WHILE] = "while", [AST_BREAK] = "break",
	[AST_CONTINUE] = "continue", [AST_RETURN] = "return",
	[AST_BLOCK] = "block", [AST_SHARED] = "shared",
	[AST_BARRIER] = "barrier", [AST_PIPE] = "pipe",
	[AST_PIPEFIELD] = "pipefield", [AST_TASKS] = "tasks",
	[AST_TASK] = "task", [AST_STATIC_ASSERT] = "static_assert",
	[AST_KERNEL] = "kernel", [AST_FN] = "fn", [AST_PARAM] = "param",
	[AST_KATTR] = "attr", [AST_CONSTDECL] = "const", [AST_FILE] = "file",
	[AST_TY_SCALAR] = "scalar", [AST_TY_PTR] = "ptr",
	[AST_TY_TILE] = "tile", [AST_TY_TMA] = "tma",
};

const char *
ast_kind_name(AstKind k)
{
	return k < AST_KIND_COUNT && kind_names[k] ? kind_names[k] : "?";
}

static const char *const op_texts[AST_OP_COUNT] = {
	[BIN_NONE] = "", [BIN_ADD] = "+", [BIN_SUB] = "-", [BIN_MUL] = "*",
	[BIN_DIV] = "/", [BIN_REM] = "%", [BIN_SHL] = "<<", [BIN_SHR] = ">>",
	[BIN_BITAND] = "&", [BIN_BITOR] = "|", [BIN_BITXOR] = "^",
	[BIN_EQ] = "==", [BIN_NE] = "!=", [BIN_LT] = "<", [BIN_LE] = "<=",
	[BIN_GT] = ">", [BIN_GE] = ">=", [BIN_LOGAND] = "&&",
	[BIN_LOGOR] = "||", [UN_NEG] = "-", [UN_NOT] = "!", [UN_BITNOT] = "~",
};

const char *
ast_op_text(AstOp op)
{
	return op < AST_OP_COUNT && op_texts[op] ? op_texts[op] : "?";
}

/* ---- printing --------------------------------------------------------- */

static void put(Buf *b, const Ast *n, int ind);

/* Declarations and statements: each starts a line. */
static bool
starts_line(AstKind k)
{
	return (k >= AST_LET && k <= AST_CONSTDECL) || k == AST_FILE;
}

static void
newline(Buf *b, int ind)
{
	buf_putc(b, '\n');
	while (ind-- > 0)
		buf_puts(b, "  ");
}

/* One part of the node being printed at indentation `ind`. */
static void
part(Buf *b, const Ast *n, int ind)
{
	if (!n)
		return;
	if (starts_line(n->kind)) {
		newline(b, ind + 1);
		put(b, n, ind + 1);
	} else {
		buf_putc(b, ' ');
		put(b, n, ind);
	}
}

static void
parts(Buf *b, const AstList *l, int ind)
{
	uint32_t i;

	for (i = 0; i < l->n; i++)
		part(b, l->v[i], ind);
}

/* The shortest text that reads back as the same double: plain decimals
 * for moderate magnitudes, else with an exponent; always with a '.' or
 * an exponent, so that it reads as a float. */
static void
put_float(Buf *b, double v)
{
	char s[64];
	int prec;
	double mag = fabs(v);

	if (mag == 0 || (mag >= 1e-4 && mag < 1e16)) {
		for (prec = 0; prec < 25; prec++) {
			snprintf(s, sizeof s, "%.*f", prec, v);
			if (strtod(s, NULL) == v)
				break;
		}
	} else {
		for (prec = 1; prec < 17; prec++) {
			snprintf(s, sizeof s, "%.*g", prec, v);
			if (strtod(s, NULL) == v)
				break;
		}
	}
	buf_puts(b, s);
	if (!strpbrk(s, ".en"))
		buf_puts(b, ".0");
}

static void
put_suffix(Buf *b, TypeKind k)
{
	if (k != TY_VOID)
		buf_puts(b, ty_kind_name(k));
}

/* Leaves: nodes printed without parentheses.  Returns false for others. */
static bool
put_leaf(Buf *b, const Ast *n)
{
	switch (n->kind) {
	case AST_INT:
		buf_printf(b, "%llu", (unsigned long long)n->ival);
		put_suffix(b, n->suffix);
		return true;
	case AST_FLOAT:
		put_float(b, n->fval);
		put_suffix(b, n->suffix);
		return true;
	case AST_BOOL:
		buf_puts(b, n->ival ? "true" : "false");
		return true;
	case AST_STRING:
		ir_print_string(b, n->name ? n->name : "");
		return true;
	case AST_NONE:
		buf_puts(b, "None");
		return true;
	case AST_NAME:
		buf_puts(b, n->name ? n->name : "?");
		return true;
	case AST_FULLSLICE:
		buf_putc(b, ':');
		return true;
	case AST_TY_SCALAR:
		buf_puts(b, ty_kind_name(n->scalar));
		return true;
	default:
		return false;
	}
}

/* The head of a parenthesized node: its operator, keyword or kind. */
static void
put_head(Buf *b, const Ast *n)
{
	uint32_t i;

	switch (n->kind) {
	case AST_UNARY:
	case AST_BINARY:
		buf_puts(b, ast_op_text(n->op));
		break;
	case AST_ASSIGN:
		buf_printf(b, "%s=", ast_op_text(n->op));
		break;
	case AST_TY_TILE:
	case AST_TY_TMA:
		buf_printf(b, "%s %s", ast_kind_name(n->kind),
			   ty_kind_name(n->scalar));
		break;
	case AST_PARAM:
		buf_puts(b, n->is_const ? "param const" : "param");
		break;
	default:
		buf_puts(b, ast_kind_name(n->kind));
		break;
	}
	if (n->kind == AST_LET && !n->name) {
		buf_puts(b, " (");
		for (i = 0; i < n->list.n; i++)
			buf_printf(b, "%s%s", i ? " " : "", n->list.v[i]->name);
		buf_putc(b, ')');
	} else if (n->name && n->kind != AST_METHOD && n->kind != AST_FIELD) {
		buf_printf(b, " %s", n->name);
	}
}

/* The parts of a node, in the order the header comment shows. */
static void
put_parts(Buf *b, const Ast *n, int ind)
{
	switch (n->kind) {
	case AST_METHOD:
	case AST_FIELD:
		part(b, n->a, ind);
		buf_printf(b, " %s", n->name);
		parts(b, &n->list, ind);
		return;
	case AST_LET:
		part(b, n->a, ind);
		part(b, n->b, ind);
		return;
	case AST_FOR:
		part(b, n->a, ind);
		part(b, n->b, ind);
		if (n->c) {
			buf_puts(b, " (step");
			part(b, n->c, ind);
			buf_putc(b, ')');
		}
		part(b, n->d, ind);
		return;
	case AST_FN:
		parts(b, &n->list, ind);
		if (n->a) {
			newline(b, ind + 1);
			buf_puts(b, "(returns");
			part(b, n->a, ind + 1);
			buf_putc(b, ')');
		}
		part(b, n->d, ind);
		return;
	case AST_STATIC_ASSERT:
		part(b, n->a, ind);
		part(b, n->b, ind);
		return;
	default:
		part(b, n->a, ind);
		part(b, n->b, ind);
		parts(b, &n->list, ind);
		parts(b, &n->list2, ind);
		part(b, n->c, ind);
		part(b, n->d, ind);
		return;
	}
}

static void
put(Buf *b, const Ast *n, int ind)
{
	if (!n) {
		buf_puts(b, "?");
		return;
	}
	if (put_leaf(b, n))
		return;
	buf_putc(b, '(');
	put_head(b, n);
	put_parts(b, n, ind);
	buf_putc(b, ')');
}

void
ast_print(Buf *b, const Ast *n)
{
	put(b, n, 0);
	buf_putc(b, '\n');
}
