/*
 * semaint.h: what sema.c, expr.c, builtins.c, consteval.c and irgen.c
 * share.  Not API.
 *
 * Sema checks and lowers in one walk over the AST of each kernel (Zig's
 * AstGen+Sema in one): every expression evaluates to an SVal, which is a
 * compile-time constant, an IR value built on the spot, or one of the
 * front end's own kinds (types, shared buffers, barriers, pipes, slots,
 * schedules, tuples).  Device functions are instantiated per argument
 * signature (a fresh AST copy each), task replicas likewise, so every
 * AST node is checked under exactly one set of types.
 */
#ifndef TLX_SEMAINT_H
#define TLX_SEMAINT_H

#include "parser/sema.h"

typedef enum SKind {
	SV_ERROR,   /* an error was reported: stay quiet downstream */
	SV_VALUE,   /* a scalar or tile: ty, and v (IR value) or cval */
	SV_TYPE,    /* a type used as a value: ty */
	SV_STRING,  /* str */
	SV_NONE,    /* None */
	SV_VOID,    /* the result of a call that returns nothing */
	SV_SMEM,    /* a shared buffer or view: ty (TY_SMEM), v; pipe, slot */
	SV_MBAR,    /* one barrier or an array: ty, v */
	SV_TMA,     /* a tensor-descriptor parameter: ty, v, param */
	SV_PIPE,    /* pipe: sym */
	SV_SLOT,    /* a pipe slot: sym (the pipe), v (i32), producer */
	SV_SCHED,   /* a tile schedule: v */
	SV_TUPLE,   /* elems */
	SV_LIST,    /* [a, b]: elems */
} SKind;

/* A compile-time constant scalar. */
typedef struct CVal {
	TypeKind ty;   /* integer or float kind; TY_I1 for booleans */
	int64_t i;     /* integers: the value wrapped to ty's width */
	double f;      /* floats: the value, already rounded to ty */
} CVal;

typedef struct Sym Sym;
typedef struct SVal SVal;

struct SVal {
	SKind kind;
	Type *ty;
	Value v;          /* 0 while a constant is not materialized */
	bool is_const;    /* cval holds the value (scalars only) */
	bool weak;        /* an untyped literal: adapts to the other operand */
	CVal cval;
	const char *str;
	Sym *sym;         /* SV_PIPE, SV_SLOT, SV_TMA (its param), SV_SMEM origin */
	Value slot;       /* SV_SMEM: the pipe slot it views, or 0 */
	bool producer;    /* SV_SLOT: from acquire (else consume) */
	SVal *elems;      /* SV_TUPLE, SV_LIST */
	uint32_t nelems;
	SrcRange loc;
};

typedef enum SymKind {
	SYM_LET,     /* an immutable binding: val */
	SYM_VAR,     /* a mutable variable: val is its current value */
	SYM_FN,      /* a device function: ast */
	SYM_CONST,   /* a file-level const: ast, val once evaluated */
	SYM_PIPE,    /* pipe: the buffers and the pipe value */
	SYM_KERNEL,  /* a kernel (not callable) */
} SymKind;

struct Sym {
	SymKind kind;
	const char *name;
	SVal val;
	Ast *ast;          /* declaration */
	SrcRange loc;
	Sym *next;         /* in its scope */
	/* SYM_CONST */
	bool evaluating, evaluated;
	/* SYM_VAR: the scope depth it was declared at; its task */
	int depth;
	int task;
	/* SYM_PIPE */
	Value pipe;
	uint32_t nfields;
	const char **fnames;
	Value *fbufs;
	Type **ftypes;     /* smem type of one slot of each field */
	int64_t depth_n;
	/* SV_TMA params: the box seen first, and where */
	bool has_box, tma_used;
	int64_t box[TY_MAX_RANK];
	SrcRange box_loc;
	Value param;       /* the kernel parameter (to set its type) */
};

typedef struct Scope Scope;
struct Scope {
	Scope *up;
	Sym *syms;
	int depth;
	uint32_t nsyms;
	uint32_t cap;      /* slots of tab, a power of two; 0: no table yet */
	Sym **tab;         /* by name, once the scope has many symbols */
};

/* One instantiation of a device function. */
typedef struct Inst {
	Ast *fn;
	uint32_t nargs;
	Type **atypes;     /* NULL entries: const argument (see cvals) */
	CVal *cvals;
	bool *is_const;
	Func *ir;          /* NULL while being generated (recursion check) */
	Type **rtypes;
	uint32_t nres;
	struct Inst *next;
} Inst;

typedef struct Sema {
	Arena *arena;
	IrCtx *ir;
	Diag *diag;
	const FrontOpts *opts;
	Ast *file;
	Module *mod;
	Scope *globals;
	Scope *scope;
	Builder *b;        /* NULL: constant context (no IR may be built) */
	const char *const_what;  /* what must be constant, for messages */
	Func *fn;          /* the IR function being built */
	Ast *kernel;       /* the kernel being lowered (NULL in a device fn) */
	int64_t warps;
	bool in_tasks;     /* inside a task body */
	bool skipped;      /* an error left code of this kernel unread: no
			      errors about what it would have used */
	int task;          /* current task number (1-based), 0 outside */
	int64_t replica;   /* the current task replica */
	int loop_depth;
	int kernel_depth;  /* scope depth of the kernel body's statements */
	bool at_end;       /* the statement is the last of the body */
	Ast *body_top;     /* the body block of the function being lowered */
	Inst *insts;
	int inst_depth;
	bool has_return;   /* a device function's final return was seen */
	SVal ret;          /* its value */
	uint32_t ndefs_used;
	bool *def_used;    /* per FrontOpts define: matched a const */
	TuneInfo *tune;    /* front_tune_space: the space read */
} Sema;

/* ---- sema.c ------------------------------------------------------------- */
void sema_push_scope(Sema *s);
void sema_pop_scope(Sema *s);
Sym *sema_declare(Sema *s, SymKind k, const char *name, SrcRange loc);
Sym *sema_lookup(Sema *s, const char *name);
void sema_block(Sema *s, Ast *block);
void sema_stmt(Sema *s, Ast *st);
SVal sema_call_fn(Sema *s, Sym *fn, Ast *call);
void sema_declare_items(Sema *s, Ast *file);
/* Declares kernel k's parameters (pt, pa: the runtime ones' types and
 * nodes); returns how many are runtime parameters. */
uint32_t sema_kernel_params(Sema *s, Ast *k, Type **pt, Ast **pa);

/* ---- tune.c --------------------------------------------------------------- */
/* Checks the attribute tune(...) of kernel k (its parameters in scope);
 * into s->tune when set. */
void sema_tune(Sema *s, Ast *k, Ast *attr);

/* ---- expr.c --------------------------------------------------------------- */
SVal sema_expr(Sema *s, Ast *e);
SVal sv_error(void);
SVal sv_const_int(Sema *s, TypeKind k, int64_t v, SrcRange loc);
SVal sv_const_float(Sema *s, TypeKind k, double v, SrcRange loc);
SVal sv_value(Type *t, Value v, SrcRange loc);
bool sv_is_value(SVal *v);       /* SV_VALUE (scalar or tile) */
bool sv_is_scalar(SVal *v);
const char *sv_describe(Sema *s, SVal *v);  /* "'f32[4]'", "a shared buffer" */
/* Evaluates e and requires a compile-time integer constant. */
bool sema_const_int(Sema *s, Ast *e, const char *what, int64_t *out);
/* The same, and within [lo, hi]. */
bool sema_const_int_in(Sema *s, Ast *e, const char *what, int64_t lo,
		       int64_t hi, int64_t *out);
/* Evaluates e and requires a compile-time bool constant. */
bool sema_const_bool(Sema *s, Ast *e, const char *what, bool *out);
/* The binary operator on two values (broadcasting, promotion). */
SVal sema_binary(Sema *s, AstOp op, SVal a, SVal b, SrcRange loc);
/* Converts v to element type `elem` (weak literals adapt; typed values
 * get a cvt).  `what` names the context for messages. */
SVal sema_convert(Sema *s, SVal v, Type *elem, SrcRange loc);
/* Broadcasts v to `shape` (a tile type or scalar type: its shape). */
SVal sema_broadcast(Sema *s, SVal v, Type *shape, SrcRange loc);
/* Broadcasts *v, keeping its element type, to the dims of `shape` and
 * materializes it (v->v is then the IR value); false after an error. */
bool sema_to_shape(Sema *s, SVal *v, Type *shape, SrcRange loc);
/* The common element type of a and b, or NULL after an error. */
Type *sema_promote(Sema *s, SVal *a, SVal *b, SrcRange loc);
/* False (with an error) for fp8, which is for storage and dot only. */
bool sema_computable(Sema *s, Type *elem, SrcRange loc);
/* The NumPy broadcast shape of a and b as a type with element `elem`. */
Type *sema_broadcast_shape(Sema *s, Type *a, Type *b, Type *elem, SrcRange loc);
Value sema_materialize(Sema *s, SVal *v);  /* emit a const if needed */
Type *sema_type(Sema *s, Ast *t);          /* a type node */
Type *sema_smem_type(Sema *s, Ast *t);     /* T[dims] of a shared buffer */
const char *sema_type_str(Sema *s, Type *t);  /* as the source writes it */
const char *sema_shape_str(Sema *s, const int64_t *shape, int rank);  /* "[64, 64]" */
SVal sema_const_sym(Sema *s, Sym *y, SrcRange use);  /* a file-level const */
Type *ty_of_scalar(Sema *s, TypeKind k);

/* ---- builtins.c ----------------------------------------------------------- */
/* Returns true when `name` is a builtin and handled the call. */
bool sema_builtin(Sema *s, const char *name, Ast *call, SVal *out);
bool sema_is_builtin(const char *name);
SVal sema_method(Sema *s, Ast *e);

/* Collected call arguments: positional then named. */
typedef struct CallArgs {
	Ast *call;
	Ast *pos[8];
	uint32_t npos;
	Ast *named[8];
	uint32_t nnamed;
} CallArgs;
bool sema_args(Sema *s, Ast *call, const char *fname, uint32_t min_pos,
	       uint32_t max_pos, const char *const *names, CallArgs *out);
Ast *sema_named(CallArgs *a, const char *name);

/* ---- consteval.c ----------------------------------------------------------- */
CVal cv_int(TypeKind k, int64_t v);
CVal cv_float(TypeKind k, double v);
CVal cv_convert(CVal v, TypeKind to);
int64_t cv_wrap(TypeKind k, int64_t v);
double cv_round(TypeKind k, double v);
/* Folds a binary op; false when it cannot be folded (division by zero
 * sets *err).  Operands have the same type already. */
bool cv_binary(AstOp op, CVal a, CVal b, CVal *out, const char **err);
bool cv_unary(AstOp op, CVal a, CVal *out);
bool cv_truthy(CVal v);
bool cv_fits(TypeKind k, int64_t v, bool from_unsigned);
void cv_print(Buf *b, CVal v);

/* ---- irgen.c ----------------------------------------------------------- */
Value ig_const(Sema *s, Type *t, CVal c);
Value ig_op1(Sema *s, OpKind k, Type *t, Value a, SrcRange loc);
Value ig_op2(Sema *s, OpKind k, Type *t, Value a, Value b, SrcRange loc);
Value ig_op3(Sema *s, OpKind k, Type *t, Value a, Value b, Value c,
	     SrcRange loc);
Op *ig_opn(Sema *s, OpKind k, uint32_t n, const Value *v, Type *t,
	   SrcRange loc);
void ig_set_loc(Sema *s, SrcRange loc);
bool ig_need_builder(Sema *s, SrcRange loc);  /* reports "not constant" */
/* Vars assigned (by name) anywhere inside `n`, in first-seen order. */
typedef Vec(const char *) NameVec;
void ig_assigned_names(Sema *s, Ast *n, NameVec *out);

#endif
