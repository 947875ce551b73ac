/*
 * ast.h: the syntax tree the parser builds and sema checks.
 *
 * One node type (chibicc style) whose fields are used per kind as listed
 * below.  Nodes live in the compilation's arena and are never freed
 * one by one.  Sema writes its results into the `sema` fields.
 */
#ifndef TLX_AST_H
#define TLX_AST_H

#include "ir/ir.h"

typedef enum AstKind {
	/* expressions */
	AST_INT,      /* ival, suffix (TypeKind, or TY_VOID when none) */
	AST_FLOAT,    /* fval, suffix */
	AST_BOOL,     /* ival 0/1 */
	AST_STRING,   /* name: the decoded text */
	AST_NONE,     /* None (a new axis in an index) */
	AST_NAME,     /* name */
	AST_TYPEEXPR, /* a: type node, used as a value (f32 in .to(f32)) */
	AST_UNARY,    /* op (UN_*), a */
	AST_BINARY,   /* op (BIN_*), a, b */
	AST_CALL,     /* a: callee (a NAME), list: args (ARG or exprs) */
	AST_METHOD,   /* a: object, name, list: args -- x.to(f32), p.acquire() */
	AST_FIELD,    /* a: object, name -- s.A */
	AST_INDEX,    /* a: object, list: items (exprs, SLICE, FULLSLICE, NONE) */
	AST_SLICE,    /* a .. b inside an index: a, b */
	AST_FULLSLICE,/* ':' inside an index */
	AST_LIST,     /* [a, b, c]: list */
	AST_TUPLE,    /* (a, b): list */
	AST_ARG,      /* a named argument: name, a (value) */

	/* statements */
	AST_LET,      /* name, a: type or NULL, b: init; list: names (NAME) of
		       * a tuple pattern `let (x, y) = e`, name NULL then */
	AST_VAR,      /* name, a: type or NULL, b: init */
	AST_ASSIGN,   /* name, op: BIN_* for compound (x += e) or 0, b: value */
	AST_EXPRSTMT, /* a */
	AST_IF,       /* a: cond, b: then BLOCK, c: else (BLOCK, IF or NULL) */
	AST_FOR,      /* name, a: lo, b: hi, c: step or NULL, d: body */
	AST_FOREACH,  /* name, a: schedule expr, d: body -- for t in work {} */
	AST_WHILE,    /* a: cond, d: body */
	AST_BREAK,    /* rejected by sema: loops are structured */
	AST_CONTINUE, /* rejected by sema */
	AST_RETURN,   /* a: value or NULL */
	AST_BLOCK,    /* list: statements */
	AST_SHARED,   /* name, a: type -- shared S: bf16[4, 128, 64]; */
	AST_BARRIER,  /* name, a: count expr, list: args -- barrier b[N](arrive: 1); */
	AST_PIPE,     /* name, a: depth, list: PIPEFIELD */
	AST_PIPEFIELD,/* name, a: type */
	AST_TASKS,    /* list: TASK */
	AST_TASK,     /* name, list: args (warps:, regs:, replicate:), d: body */
	AST_STATIC_ASSERT, /* a: cond, b: message STRING or NULL */

	/* declarations */
	AST_KERNEL,   /* name, list: PARAM, list2: KATTR, d: body */
	AST_FN,       /* name, list: PARAM, a: return type or NULL, d: body */
	AST_PARAM,    /* name, a: type or NULL, b: default or NULL, is_const */
	AST_KATTR,    /* name, list: args -- warps(4), grid(...), cluster(2,1,1) */
	AST_CONSTDECL,/* name, a: type or NULL, b: value -- a file-level const */
	AST_FILE,     /* list: KERNEL, FN, CONSTDECL */

	/* types */
	AST_TY_SCALAR,/* scalar (TypeKind) */
	AST_TY_PTR,   /* a: pointee type */
	AST_TY_TILE,  /* scalar, list: dims (exprs) -- f32[BM, BN] */
	AST_TY_TMA,   /* scalar, a: rank expr -- tma<bf16, 2> */
	AST_KIND_COUNT
} AstKind;

typedef enum AstOp {
	BIN_NONE,
	BIN_ADD, BIN_SUB, BIN_MUL, BIN_DIV, BIN_REM,
	BIN_SHL, BIN_SHR, BIN_BITAND, BIN_BITOR, BIN_BITXOR,
	BIN_EQ, BIN_NE, BIN_LT, BIN_LE, BIN_GT, BIN_GE,
	BIN_LOGAND, BIN_LOGOR,
	UN_NEG, UN_NOT, UN_BITNOT,
	AST_OP_COUNT
} AstOp;

typedef struct Ast Ast;
typedef Vec(Ast *) AstList;

struct SemaInfo;

struct Ast {
	AstKind kind;
	SrcRange loc;
	const char *name;  /* interned */
	AstOp op;
	Ast *a, *b, *c, *d;
	AstList list, list2;
	int64_t ival;      /* INT: the bits (u64 literals wrap to negative) */
	double fval;
	TypeKind suffix;   /* literal suffix; TY_VOID when none */
	TypeKind scalar;   /* TY_SCALAR, TY_TILE, TY_TMA */
	bool is_const;     /* PARAM */
	struct SemaInfo *sema;  /* filled by sema */
};

/* ---- ast.c ---------------------------------------------------------------- */

/* Constructors used by the parser's actions (all in the given arena). */
Ast *ast_new(Arena *a, AstKind k, SrcRange loc);
Ast *ast_name(Arena *a, SrcRange loc, const char *name);
Ast *ast_unary(Arena *a, SrcRange loc, AstOp op, Ast *x);
Ast *ast_binary(Arena *a, SrcRange loc, AstOp op, Ast *x, Ast *y);
void ast_push(Arena *a, AstList *l, Ast *n);
/* Deep copy (sema instantiates device functions and task replicas). */
const char *ast_kind_name(AstKind k);
const char *ast_op_text(AstOp op);  /* "+", "<<=", ... */
/* The S-expression dump behind `tlxc --emit=ast`. */
void ast_print(Buf *b, const Ast *n);

/* ---- the parser (parse.y) --------------------------------------------------- */

typedef struct Parser Parser;
/* Parses a whole file.  Errors go to `d`; the tree is returned even when
 * there were errors (with error nodes left out), NULL only on a fatal
 * stop.  Nesting deeper than TLX_MAX_NESTING is an error. */
Ast *parse_file(Arena *a, Strtab *strs, Diag *d, const Source *src);
enum { TLX_MAX_NESTING = 256 };

#endif
