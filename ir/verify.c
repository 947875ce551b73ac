/*
 * verify.c: the rules of docs/il.md sections 1-4, checked on a function.
 *
 *   structure   operand, result and region counts (ops.def),
 *               terminators only and always at block ends,
 *               the right terminator for each region, value-table
 *               consistency (what a pass may break)
 *   scope       every operand is visible: defined earlier in its block or
 *               in an enclosing block before the op holding the region
 *   types       well-formed types (rank 1-4, tile dims powers of two, ...)
 *   attributes  the table attr_rules: required ones, kinds, ranges, words
 *   ops         each op's type rule (check_op and the check_* helpers)
 *
 * Messages name the op and quote the types: 'add' operands must have the
 * same type, got 'i32' and 'f32'.  They are user errors at the op's
 * location (ir_error); after a pass the pass manager turns them into a bug.
 */
#include <stdarg.h>

#include "ir.h"

typedef struct Verifier {
	Func *f;
	Diag *d;
	Arena *a;        /* scratch: messages, the scope state */
	uint8_t *state;  /* per value: S_NONE, S_VISIBLE, S_GONE */
	Vec(Value) scope;
	int errors;
} Verifier;

enum { S_NONE, S_VISIBLE, S_GONE };

static void
err(Verifier *v, Op *op, const char *fmt, ...) TLX_PRINTF(3, 4);

static void
err(Verifier *v, Op *op, const char *fmt, ...)
{
	va_list ap;
	char *msg;

	va_start(ap, fmt);
	msg = arena_vprintf(v->a, fmt, ap);
	va_end(ap);
	v->errors++;
	ir_error(v->d, v->f, op, "%s", msg);
}

/* 'tile<4xf32>' for messages. */
static const char *
tn(Verifier *v, Type *t)
{
	Buf b = { 0 };
	char *s;

	buf_putc(&b, '\'');
	ty_print(&b, t);
	buf_putc(&b, '\'');
	s = arena_strdup(v->a, b.s);
	buf_free(&b);
	return s;
}

static const char *
on(Op *op)
{
	return op_name(op->kind);
}

/* ---- types ---------------------------------------------------------------- */

static int
rank_of(Type *t)
{
	return t->kind == TY_TILE ? t->rank : 0;
}

static bool
same_shape(Type *a, Type *b)
{
	return rank_of(a) == rank_of(b) &&
	       memcmp(a->shape, b->shape, (size_t)rank_of(a) * sizeof a->shape[0]) == 0;
}

static bool
is_f8(TypeKind k)
{
	return k == TY_F8E4M3 || k == TY_F8E5M2;
}

/* Classes of element types, for the rules below. */
enum {
	C_INT = 1,    /* integers, i1 included */
	C_FLOAT = 2,  /* f16 bf16 f32 f64 (fp8 is storage only) */
	C_PTR = 4,
	C_F8 = 8,
};

static unsigned
class_of(Type *t)
{
	Type *e = ty_elem(t);

	if (ty_is_int_kind(e->kind))
		return C_INT;
	if (is_f8(e->kind))
		return C_F8;
	if (ty_is_float_kind(e->kind))
		return C_FLOAT;
	return e->kind == TY_PTR ? C_PTR : 0;
}

/* A scalar or a tile of scalars or pointers: what elementwise ops take. */
static bool
is_data(Type *t)
{
	return class_of(t) != 0 && (t->kind == TY_TILE || t->kind <= TY_F64 ||
				    t->kind == TY_PTR);
}

static bool
is_scalar_int(Type *t)
{
	return ty_is_int_kind(t->kind);
}

static const char *
class_words(unsigned c)
{
	switch (c) {
	case C_INT: return "integer";
	case C_FLOAT: return "float";
	case C_INT | C_FLOAT: return "integer or float";
	case C_INT | C_FLOAT | C_PTR: return "integer, float or pointer";
	default: return "numeric";
	}
}

static bool
check_shape_dims(Verifier *v, Op *op, Type *t, bool pow2)
{
	int i;

	if (t->rank < 1 || t->rank > TY_MAX_RANK) {
		err(v, op, "%s must have rank 1 to 4", tn(v, t));
		return false;
	}
	for (i = 0; i < t->rank; i++) {
		if (t->shape[i] < 1 || (pow2 && !is_pow2(t->shape[i]))) {
			err(v, op, "dimension %lld of %s is not %s",
			    (long long)t->shape[i], tn(v, t),
			    pow2 ? "a power of two" : "positive");
			return false;
		}
	}
	return true;
}

/* Is `t` a type a value may have?  Reports what is wrong. */
static bool
check_type(Verifier *v, Op *op, Type *t)
{
	Type *e = t->elem;

	switch (t->kind) {
	case TY_VOID:
		err(v, op, "a value cannot have type 'void'");
		return false;
	case TY_PTR:
		if (e->kind == TY_VOID || (!ty_is_scalar_kind(e->kind) && e->kind != TY_PTR)) {
			err(v, op, "%s: a pointer points to a scalar or a pointer", tn(v, t));
			return false;
		}
		return e->kind != TY_PTR || check_type(v, op, e);
	case TY_TILE:
		if (e->kind == TY_VOID || (!ty_is_scalar_kind(e->kind) && e->kind != TY_PTR)) {
			err(v, op, "%s: a tile holds scalars or pointers", tn(v, t));
			return false;
		}
		return check_shape_dims(v, op, t, true) &&
		       (e->kind != TY_PTR || check_type(v, op, e));
	case TY_SMEM:
	case TY_TMA:
		if (e->kind == TY_VOID || !ty_is_scalar_kind(e->kind)) {
			err(v, op, "%s: the element must be a scalar type", tn(v, t));
			return false;
		}
		if (t->kind == TY_TMA && t->shape[0] == 0) {
			if (t->rank < 1 || t->rank > TY_MAX_RANK) {
				err(v, op, "%s must have rank 1 to 4", tn(v, t));
				return false;
			}
			return true;
		}
		return check_shape_dims(v, op, t, false);
	case TY_MBAR:
		if (t->rank == 1 && t->shape[0] < 1) {
			err(v, op, "%s must hold at least one barrier", tn(v, t));
			return false;
		}
		return true;
	default:
		return true;
	}
}

/* ---- attributes -------------------------------------------------------------- */

typedef struct AttrRule {
	OpKind op;
	const char *name;
	AttrKind kind;
	bool required;
	int64_t lo, hi;    /* ATTR_INT: allowed range (lo > hi: any) */
	const char *syms;  /* ATTR_SYM: the allowed words, space-separated */
} AttrRule;

#define ANY 1, 0
static const AttrRule attr_rules[] = {
	{ OP_RANGE, "start", ATTR_INT, true, INT32_MIN, INT32_MAX, NULL },
	{ OP_RANGE, "end", ATTR_INT, true, INT32_MIN, (int64_t)INT32_MAX + 1, NULL },
	{ OP_PROGRAM_ID, "axis", ATTR_INT, true, 0, 2, NULL },
	{ OP_NUM_PROGRAMS, "axis", ATTR_INT, true, 0, 2, NULL },
	{ OP_CMP, "pred", ATTR_SYM, true, ANY, "eq ne lt le gt ge" },
	{ OP_MISALIGN, "bytes", ATTR_INT, true, 1, 4096, NULL },
	{ OP_EXPAND_DIMS, "axis", ATTR_INT, true, 0, TY_MAX_RANK - 1, NULL },
	{ OP_TRANS, "perm", ATTR_INTS, true, ANY, NULL },
	{ OP_EXTRACT_SLICE, "offsets", ATTR_INTS, true, ANY, NULL },
	{ OP_REDUCE, "kind", ATTR_SYM, true, ANY, "sum prod max min argmax argmin" },
	{ OP_REDUCE, "axis", ATTR_INT, true, 0, TY_MAX_RANK - 1, NULL },
	{ OP_LOAD, "cache", ATTR_SYM, false, ANY, "ca cg cs cv" },
	{ OP_LOAD, "evict", ATTR_SYM, false, ANY, "first last normal" },
	{ OP_ATOMIC, "kind", ATTR_SYM, true, ANY, "add max min xchg and or xor" },
	{ OP_CALL, "callee", ATTR_STR, true, ANY, NULL },
	{ OP_ASSERT, "msg", ATTR_STR, false, ANY, NULL },
	{ OP_SMEM_ALLOC, "name", ATTR_STR, false, ANY, NULL },
	{ OP_SMEM_TRANS, "perm", ATTR_INTS, true, ANY, NULL },
	{ OP_MBAR_ALLOC, "arrive", ATTR_INT, true, 1, INT32_MAX, NULL },
	{ OP_MBAR_ARRIVE, "count", ATTR_INT, false, 1, INT32_MAX, NULL },
	{ OP_TMA_LOAD, "expect", ATTR_INT, false, 0, 1, NULL },
	{ OP_TMA_STORE_WAIT, "pending", ATTR_INT, false, 0, INT32_MAX, NULL },
	{ OP_CP_ASYNC_WAIT, "pending", ATTR_INT, false, 0, INT32_MAX, NULL },
	{ OP_DOT_WAIT, "pending", ATTR_INT, false, 0, INT32_MAX, NULL },
	{ OP_EXP, "approx", ATTR_INT, false, 0, 1, NULL },
	{ OP_EXP2, "approx", ATTR_INT, false, 0, 1, NULL },
	{ OP_LOG, "approx", ATTR_INT, false, 0, 1, NULL },
	{ OP_LOG2, "approx", ATTR_INT, false, 0, 1, NULL },
	{ OP_SQRT, "approx", ATTR_INT, false, 0, 1, NULL },
	{ OP_RSQRT, "approx", ATTR_INT, false, 0, 1, NULL },
	{ OP_SIN, "approx", ATTR_INT, false, 0, 1, NULL },
	{ OP_COS, "approx", ATTR_INT, false, 0, 1, NULL },
	{ OP_TANH, "approx", ATTR_INT, false, 0, 1, NULL },
	{ OP_TASK, "name", ATTR_STR, false, ANY, NULL },
	{ OP_TASK, "warps", ATTR_INT, true, 1, 32, NULL },
	{ OP_TASK, "regs", ATTR_INT, false, 0, 512, NULL },
	{ OP_TASK, "replica", ATTR_INT, false, 0, 1023, NULL },
	{ OP_TASK, "replicas", ATTR_INT, false, 2, 32, NULL },
	{ OP_TASK, "first_warp", ATTR_INT, false, 0, 31, NULL },
	{ OP_TASK, "span", ATTR_INT, false, 1, 32, NULL },
	{ OP_TASK, "barrier", ATTR_INT, false, 1, 15, NULL },
	{ OP_PIPE_CREATE, "depth", ATTR_INT, true, 1, 1024, NULL },
	{ OP_SCHED_CREATE, "kind", ATTR_SYM, true, ANY, "static dynamic clc" },
	{ OP_SCHED_TILE, "schedule", ATTR_STR, true, ANY, NULL },
};
#undef ANY

static const char *attr_kind_words[] = {
	"an integer", "a float", "a string", "a word", "an integer list", "a type",
};

static bool
word_in(const char *w, const char *list)
{
	size_t n = strlen(w);
	const char *p;

	for (p = list; (p = strstr(p, w)); p += n)
		if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == 0))
			return true;
	return false;
}

static bool
check_attr_rule(Verifier *v, Op *op, const AttrRule *r)
{
	Attr *a = attr_find(&op->attrs, r->name);

	if (!a) {
		if (r->required)
			err(v, op, "'%s' needs attribute '%s'", on(op), r->name);
		return !r->required;
	}
	if (a->kind != r->kind) {
		err(v, op, "'%s' attribute '%s' must be %s, got %s", on(op),
		    r->name, attr_kind_words[r->kind], attr_kind_words[a->kind]);
		return false;
	}
	if (r->kind == ATTR_INT && r->lo <= r->hi && (a->i < r->lo || a->i > r->hi)) {
		err(v, op, "'%s' attribute '%s' must be between %lld and %lld, got %lld",
		    on(op), r->name, (long long)r->lo, (long long)r->hi, (long long)a->i);
		return false;
	}
	if (r->syms && !word_in(a->s, r->syms)) {
		err(v, op, "'%s' attribute '%s' must be one of: %s; got '%s'", on(op),
		    r->name, r->syms, a->s);
		return false;
	}
	return true;
}

static bool
check_attrs(Verifier *v, Op *op)
{
	size_t i;
	bool ok = true;

	for (i = 0; i < countof(attr_rules); i++)
		if (attr_rules[i].op == op->kind)
			ok &= check_attr_rule(v, op, &attr_rules[i]);
	return ok;
}

/* ---- counts --------------------------------------------------------------------- */

static bool
check_counts(Verifier *v, Op *op)
{
	const OpInfo *in = &op_info[op->kind];
	int min = in->min_opnds, max = in->max_opnds;
	bool ok = true;

	if ((int64_t)op->nopnds < min || (max >= 0 && (int64_t)op->nopnds > max)) {
		if (min == max)
			err(v, op, "'%s' takes %d operand%s, got %u", on(op), min,
			    min == 1 ? "" : "s", op->nopnds);
		else if (max < 0)
			err(v, op, "'%s' takes at least %d operands, got %u", on(op),
			    min, op->nopnds);
		else
			err(v, op, "'%s' takes %d to %d operands, got %u", on(op), min,
			    max, op->nopnds);
		ok = false;
	}
	if (in->nres >= 0 && op->nres != (uint32_t)in->nres) {
		err(v, op, "'%s' has %d result%s, got %u", on(op), in->nres,
		    in->nres == 1 ? "" : "s", op->nres);
		ok = false;
	}
	if (op->nregions != (uint32_t)in->nregions) {
		err(v, op, "'%s' has %d region%s, got %u", on(op), in->nregions,
		    in->nregions == 1 ? "" : "s", op->nregions);
		ok = false;
	}
	return ok;
}

/* ---- op rules ------------------------------------------------------------------- */

/* The types rules are about, without layouts (ir/verify_layout.c checks
 * those of the laid-out stage). */
#define OPT(op, i) ty_strip(v->f->mod->ctx, ir_type(v->f, (op)->opnds[i]))
#define RT(op, i) ty_strip(v->f->mod->ctx, ir_type(v->f, (op)->res[i]))

/* Is type t `want`?  Else reports "'op' <what> must be 'want', got 't'". */
static bool
want_type(Verifier *v, Op *op, const char *what, Type *t, Type *want)
{
	if (t == want)
		return true;
	err(v, op, "'%s' %s must be %s, got %s", on(op), what, tn(v, want), tn(v, t));
	return false;
}

static bool
want_class(Verifier *v, Op *op, Type *t, unsigned classes)
{
	if (is_data(t) && (class_of(t) & classes))
		return true;
	err(v, op, "'%s' needs %s operands, got %s", on(op), class_words(classes),
	    tn(v, t));
	return false;
}

static bool
want_scalar_int(Verifier *v, Op *op, const char *what, Type *t)
{
	if (is_scalar_int(t))
		return true;
	err(v, op, "'%s' %s must be a scalar integer, got %s", on(op), what, tn(v, t));
	return false;
}

static bool
want_kind(Verifier *v, Op *op, const char *what, Type *t, TypeKind k,
	  const char *kname)
{
	if (t->kind == k)
		return true;
	err(v, op, "'%s' %s must be %s, got %s", on(op), what, kname, tn(v, t));
	return false;
}

/* The allowed element classes of each elementwise op. */
static unsigned
elem_classes(OpKind k)
{
	switch (k) {
	case OP_AND: case OP_OR: case OP_XOR: case OP_SHL: case OP_SHR:
	case OP_NOT:
		return C_INT;
	case OP_FMA:
		return C_FLOAT;
	default:
		return op_info[k].flags & F_MATH ? C_FLOAT : C_INT | C_FLOAT;
	}
}

/* add sub ... fma, the math ops: one type for operands and result. */
static void
check_elementwise(Verifier *v, Op *op)
{
	Type *t = OPT(op, 0);
	uint32_t i;

	for (i = 1; i < op->nopnds; i++) {
		if (OPT(op, i) != t) {
			err(v, op, "'%s' operands must have the same type, got %s and %s",
			    on(op), tn(v, t), tn(v, OPT(op, i)));
			return;
		}
	}
	if (!want_class(v, op, t, elem_classes(op->kind)))
		return;
	want_type(v, op, "result", RT(op, 0), t);
	if (attr_int(&op->attrs, "approx", 0) && ty_elem(t)->kind == TY_F64)
		err(v, op, "'%s' attribute 'approx' needs f32, f16 or bf16, got %s",
		    on(op), tn(v, t));
}

static void
check_const(Verifier *v, Op *op)
{
	Type *t = RT(op, 0), *e = ty_elem(t);
	Attr *a = attr_find(&op->attrs, "value");
	int bits;

	if (!is_data(t) || !(class_of(t) & (C_INT | C_FLOAT | C_F8))) {
		err(v, op, "'const' must have an integer or float type, got %s", tn(v, t));
		return;
	}
	if (!a) {
		err(v, op, "'const' needs attribute 'value'");
		return;
	}
	if (ty_is_float_kind(e->kind)) {
		if (a->kind != ATTR_FLOAT)
			err(v, op, "'const' of type %s needs a float 'value', got %s",
			    tn(v, t), attr_kind_words[a->kind]);
		return;
	}
	if (a->kind != ATTR_INT) {
		err(v, op, "'const' of type %s needs an integer 'value', got %s",
		    tn(v, t), attr_kind_words[a->kind]);
		return;
	}
	bits = ty_bits(e);
	if (bits < 64 && (e->kind == TY_I1 || ty_is_unsigned_kind(e->kind)
			  ? a->i < 0 || a->i >> bits != 0
			  : a->i < -((int64_t)1 << (bits - 1)) ||
			    a->i >= (int64_t)1 << (bits - 1)))
		err(v, op, "'const' value %lld does not fit in %s", (long long)a->i,
		    tn(v, e));
}

static void
check_range(Verifier *v, Op *op)
{
	Type *t = RT(op, 0);
	int64_t start = attr_int(&op->attrs, "start", 0);
	int64_t end = attr_int(&op->attrs, "end", 0);

	if (t->kind != TY_TILE || t->rank != 1 || t->elem->kind != TY_I32) {
		err(v, op, "'range' result must be a rank-1 tile of 'i32', got %s", tn(v, t));
		return;
	}
	if (end <= start || !is_pow2(end - start) || end - start != t->shape[0])
		err(v, op, "'range' from %lld to %lld does not give %s (end - start "
		    "must be its size, a power of two)", (long long)start,
		    (long long)end, tn(v, t));
}

static void
check_cmp(Verifier *v, Op *op)
{
	Type *t = OPT(op, 0);

	if (OPT(op, 1) != t) {
		err(v, op, "'cmp' operands must have the same type, got %s and %s",
		    tn(v, t), tn(v, OPT(op, 1)));
		return;
	}
	if (want_class(v, op, t, C_INT | C_FLOAT | C_PTR))
		want_type(v, op, "result", RT(op, 0),
			  ty_like(v->f->mod->ctx, t, ty_scalar(v->f->mod->ctx, TY_I1)));
}

static void
check_select(Verifier *v, Op *op)
{
	IrCtx *c = v->f->mod->ctx;
	Type *t = OPT(op, 1);

	if (OPT(op, 2) != t) {
		err(v, op, "'select' operands must have the same type, got %s and %s",
		    tn(v, t), tn(v, OPT(op, 2)));
		return;
	}
	if (!want_class(v, op, t, C_INT | C_FLOAT | C_F8 | C_PTR))
		return;
	if (want_type(v, op, "condition", OPT(op, 0), ty_like(c, t, ty_scalar(c, TY_I1))))
		want_type(v, op, "result", RT(op, 0), t);
}

static void
check_cvt(Verifier *v, Op *op)
{
	Type *s = OPT(op, 0), *r = RT(op, 0);
	unsigned num = C_INT | C_FLOAT | C_F8;

	if (!is_data(s) || !(class_of(s) & num) || !is_data(r) || !(class_of(r) & num)) {
		err(v, op, "'cvt' converts between numeric types, got %s to %s",
		    tn(v, s), tn(v, r));
		return;
	}
	if (!same_shape(s, r))
		err(v, op, "'cvt' keeps the shape, got %s to %s", tn(v, s), tn(v, r));
}

static void
check_bitcast(Verifier *v, Op *op)
{
	Type *s = OPT(op, 0), *r = RT(op, 0);

	if (!is_data(s) || !is_data(r) || !same_shape(s, r) ||
	    ty_bits(ty_elem(s)) != ty_bits(ty_elem(r)) || ty_elem(s)->kind == TY_I1)
		err(v, op, "'bitcast' needs the same shape and bit width, got %s to %s",
		    tn(v, s), tn(v, r));
}

static void
check_ptr_add(Verifier *v, Op *op)
{
	Type *p = OPT(op, 0), *o = OPT(op, 1);

	if (!is_data(p) || class_of(p) != C_PTR) {
		err(v, op, "'ptr_add' needs a pointer or a tile of pointers, got %s", tn(v, p));
		return;
	}
	if (!is_data(o) || class_of(o) != C_INT || !same_shape(p, o)) {
		err(v, op, "'ptr_add' offset must be an integer of the pointer's shape, "
		    "got %s for %s", tn(v, o), tn(v, p));
		return;
	}
	want_type(v, op, "result", RT(op, 0), p);
}

static void
check_misalign(Verifier *v, Op *op)
{
	IrCtx *c = v->f->mod->ctx;
	Type *p = OPT(op, 0);
	int64_t bytes = attr_int(&op->attrs, "bytes", 16);

	if (!is_data(p) || class_of(p) != C_PTR) {
		err(v, op, "'misalign' needs a pointer or a tile of pointers, got %s", tn(v, p));
		return;
	}
	if ((bytes & (bytes - 1)) || bytes < ty_bytes(ty_elem(p)->elem)) {
		err(v, op, "'misalign' bytes must be a power of two and at least "
		    "the element's size (%d), got %lld", ty_bytes(ty_elem(p)->elem),
		    (long long)bytes);
		return;
	}
	want_type(v, op, "result", RT(op, 0), ty_like(c, p, ty_scalar(c, TY_I32)));
}

/* ---- shapes: data movement, fp8 included ---- */

static bool
want_tile(Verifier *v, Op *op, const char *what, Type *t)
{
	if (t->kind == TY_TILE)
		return true;
	err(v, op, "'%s' %s must be a tile, got %s", on(op), what, tn(v, t));
	return false;
}

static bool
want_storable(Verifier *v, Op *op, Type *t)
{
	if (is_data(t))
		return true;
	err(v, op, "'%s' needs an integer, float or pointer element, got %s",
	    on(op), tn(v, t));
	return false;
}

static void
check_splat(Verifier *v, Op *op)
{
	Type *s = OPT(op, 0), *r = RT(op, 0);

	if (s->kind == TY_TILE || !want_storable(v, op, s)) {
		if (s->kind == TY_TILE)
			err(v, op, "'splat' takes a scalar, got %s", tn(v, s));
		return;
	}
	if (want_tile(v, op, "result", r) && r->elem != s)
		err(v, op, "'splat' result must be a tile of %s, got %s", tn(v, s), tn(v, r));
}

/* Either stage: a conversion keeps the tile's shape and element. */
static void
check_convert(Verifier *v, Op *op)
{
	Type *s = OPT(op, 0), *r = RT(op, 0);

	if (!want_tile(v, op, "operand", s) || !want_tile(v, op, "result", r))
		return;
	if (s != r)
		err(v, op, "'convert_layout' changes only the layout of a tile, "
		    "not its shape or element: %s to %s", tn(v, s), tn(v, r));
}

static void
check_broadcast(Verifier *v, Op *op)
{
	Type *s = OPT(op, 0), *r = RT(op, 0);
	int i;

	if (!want_tile(v, op, "operand", s) || !want_tile(v, op, "result", r) ||
	    !want_storable(v, op, s))
		return;
	if (s->elem != r->elem || s->rank != r->rank) {
		err(v, op, "'broadcast' keeps the element type and rank, got %s to %s",
		    tn(v, s), tn(v, r));
		return;
	}
	for (i = 0; i < s->rank; i++) {
		if (s->shape[i] != r->shape[i] && s->shape[i] != 1) {
			err(v, op, "'broadcast' can only stretch dimensions of size 1, "
			    "got %s to %s", tn(v, s), tn(v, r));
			return;
		}
	}
}

static void
check_expand_dims(Verifier *v, Op *op)
{
	Type *s = OPT(op, 0), *r = RT(op, 0);
	int64_t axis = attr_int(&op->attrs, "axis", 0), shape[TY_MAX_RANK];
	int rank = rank_of(s), i, j;

	if (!want_storable(v, op, s))
		return;
	if (rank == TY_MAX_RANK || axis > rank) {
		err(v, op, "'expand_dims' axis %lld is out of range for %s",
		    (long long)axis, tn(v, s));
		return;
	}
	for (i = j = 0; i <= rank; i++)
		shape[i] = i == axis ? 1 : s->shape[j++];
	want_type(v, op, "result", r, ty_tile(v->f->mod->ctx, ty_elem(s), rank + 1, shape));
}

static void
check_reshape(Verifier *v, Op *op)
{
	Type *s = OPT(op, 0), *r = RT(op, 0);

	if (!want_tile(v, op, "operand", s) || !want_tile(v, op, "result", r) ||
	    !want_storable(v, op, s))
		return;
	if (s->elem != r->elem || ty_numel(s) != ty_numel(r))
		err(v, op, "'reshape' keeps the element type and the number of "
		    "elements, got %s to %s", tn(v, s), tn(v, r));
}

/* perm is a permutation of 0..rank-1; fills `shape` with t's permuted dims. */
static bool
check_perm(Verifier *v, Op *op, Type *t, int64_t *shape)
{
	Attr *a = attr_find(&op->attrs, "perm");
	bool seen[TY_MAX_RANK] = { false };
	uint32_t i;

	if (a->ints.n != (uint32_t)t->rank)
		goto bad;
	for (i = 0; i < a->ints.n; i++) {
		int64_t p = a->ints.v[i];

		if (p < 0 || p >= t->rank || seen[p])
			goto bad;
		seen[p] = true;
		shape[i] = t->shape[p];
	}
	return true;
bad:
	err(v, op, "'%s' attribute 'perm' must be a permutation of the %d "
	    "dimensions of %s", on(op), t->rank, tn(v, t));
	return false;
}

static void
check_trans(Verifier *v, Op *op)
{
	Type *s = OPT(op, 0);
	int64_t shape[TY_MAX_RANK];

	if (!want_tile(v, op, "operand", s) || !want_storable(v, op, s) ||
	    !check_perm(v, op, s, shape))
		return;
	want_type(v, op, "result", RT(op, 0),
		  ty_tile(v->f->mod->ctx, s->elem, s->rank, shape));
}

/* A block of the operand's shape's divisors at offsets that are
 * multiples of its size. */
static void
check_extract(Verifier *v, Op *op)
{
	Type *s = OPT(op, 0), *r = RT(op, 0);
	Attr *o = attr_find(&op->attrs, "offsets");
	int d;

	if (!want_tile(v, op, "operand", s) || !want_tile(v, op, "result", r))
		return;
	if (r->rank != s->rank || ty_elem(r) != ty_elem(s)) {
		err(v, op, "'extract_slice' result %s must have the rank and "
		    "element of %s", tn(v, r), tn(v, s));
		return;
	}
	if (o->ints.n != (uint32_t)s->rank) {
		err(v, op, "'extract_slice' needs one offset per dimension of %s",
		    tn(v, s));
		return;
	}
	for (d = 0; d < s->rank; d++) {
		int64_t k = o->ints.v[d], n = r->shape[d];

		if (k < 0 || n > s->shape[d] || k > s->shape[d] - n || k % n) {
			err(v, op, "'extract_slice' offset %lld of dimension %d "
			    "must be a multiple of %lld inside %s",
			    (long long)k, d, (long long)n, tn(v, s));
			return;
		}
	}
}

static void
check_reduce(Verifier *v, Op *op)
{
	IrCtx *c = v->f->mod->ctx;
	Type *s = OPT(op, 0), *e;
	int64_t axis = attr_int(&op->attrs, "axis", 0), shape[TY_MAX_RANK];
	const char *kind = attr_str(&op->attrs, "kind");
	int i, j;

	if (!want_tile(v, op, "operand", s) || !want_class(v, op, s, C_INT | C_FLOAT))
		return;
	if (axis >= s->rank) {
		err(v, op, "'reduce' axis %lld is out of range for %s", (long long)axis,
		    tn(v, s));
		return;
	}
	for (i = j = 0; i < s->rank; i++)
		if (i != axis)
			shape[j++] = s->shape[i];
	e = strncmp(kind, "arg", 3) == 0 ? ty_scalar(c, TY_I32) : s->elem;
	want_type(v, op, "result", RT(op, 0), ty_tile(c, e, s->rank - 1, shape));
}

/* a[MxK] b[KxN] acc[MxN]: a may also be an smem view for dot_async. */
static void
check_dot(Verifier *v, Op *op)
{
	Type *a = OPT(op, 0), *b = OPT(op, 1), *acc = OPT(op, 2);
	TypeKind t, want;
	bool async = op->kind == OP_DOT_ASYNC;

	if ((a->kind != TY_TILE && !(async && a->kind == TY_SMEM)) || a->rank != 2 ||
	    (b->kind != (async ? TY_SMEM : TY_TILE)) || b->rank != 2 ||
	    acc->kind != TY_TILE || acc->rank != 2) {
		err(v, op, "'%s' needs a[MxK], b[KxN] and acc[MxN]%s, got %s, %s "
		    "and %s", on(op), async ? " (b a shared view)" : " tiles",
		    tn(v, a), tn(v, b), tn(v, acc));
		return;
	}
	if (a->shape[1] != b->shape[0] || a->shape[0] != acc->shape[0] ||
	    b->shape[1] != acc->shape[1]) {
		err(v, op, "'%s' shapes do not agree: %s times %s into %s", on(op),
		    tn(v, a), tn(v, b), tn(v, acc));
		return;
	}
	t = a->elem->kind;
	want = t == TY_I8 ? TY_I32 : TY_F32;
	if (b->elem->kind != t || acc->elem->kind != want ||
	    !(t == TY_F16 || t == TY_BF16 || is_f8(t) || t == TY_F32 || t == TY_I8)) {
		err(v, op, "'%s' takes f16, bf16, fp8 or f32 inputs with an f32 "
		    "accumulator, or i8 with i32; got %s, %s and %s", on(op),
		    tn(v, a), tn(v, b), tn(v, acc));
		return;
	}
	want_type(v, op, "result", RT(op, 0), acc);
}

/* ---- memory ---- */

/* The pointee of a pointer or tile of pointers, else NULL (reported). */
static Type *
pointee(Verifier *v, Op *op, Type *p)
{
	if (is_data(p) && class_of(p) == C_PTR)
		return ty_elem(p)->elem;
	err(v, op, "'%s' needs a pointer or a tile of pointers, got %s", on(op), tn(v, p));
	return NULL;
}

static bool
check_mask(Verifier *v, Op *op, uint32_t i, Type *shape_of)
{
	IrCtx *c = v->f->mod->ctx;

	return i >= op->nopnds ||
	       want_type(v, op, "mask", OPT(op, i), ty_like(c, shape_of, ty_scalar(c, TY_I1)));
}

static void
check_load_store(Verifier *v, Op *op)
{
	Type *p = OPT(op, 0), *e = pointee(v, op, p), *val;

	if (!e)
		return;
	val = ty_like(v->f->mod->ctx, p, e);
	if (op->kind == OP_LOAD) {
		if (want_type(v, op, "result", RT(op, 0), val) && check_mask(v, op, 1, p) &&
		    op->nopnds == 3)
			want_type(v, op, "'other' operand", OPT(op, 2), val);
		return;
	}
	if (want_type(v, op, "value", OPT(op, 1), val))
		check_mask(v, op, 2, p);
}

static void
check_atomic(Verifier *v, Op *op)
{
	Type *p = OPT(op, 0), *e = pointee(v, op, p), *val;
	const char *kind = attr_str(&op->attrs, "kind");
	unsigned cls = C_INT | C_FLOAT | C_PTR;

	if (!e)
		return;
	val = ty_like(v->f->mod->ctx, p, e);
	if (!want_type(v, op, "value", OPT(op, 1), val))
		return;
	if (op->kind == OP_ATOMIC_CAS) {
		if (want_type(v, op, "new value", OPT(op, 2), val))
			want_type(v, op, "result", RT(op, 0), val);
		return;
	}
	if (strcmp(kind, "and") == 0 || strcmp(kind, "or") == 0 || strcmp(kind, "xor") == 0)
		cls = C_INT;
	else if (strcmp(kind, "xchg") != 0)
		cls = C_INT | C_FLOAT;
	if (want_class(v, op, val, cls) && check_mask(v, op, 2, p))
		want_type(v, op, "result", RT(op, 0), val);
}

/* ---- control flow ---- */

/* The values of `b`'s terminator (of kind k), or NULL when it has none. */
static Op *
term_of(Block *b, OpKind k)
{
	return b->last && b->last->kind == k ? b->last : NULL;
}

/* n types of values `vals` against `types`; `what` names the list. */
static bool
match_values(Verifier *v, Op *op, const char *what, const Value *vals,
	     uint32_t n, Type *const *types, uint32_t ntypes)
{
	uint32_t i;

	if (n != ntypes) {
		err(v, op, "'%s' %s: expected %u, got %u", on(op), what, ntypes, n);
		return false;
	}
	for (i = 0; i < n; i++) {
		Type *t = ir_type(v->f, vals[i]);

		if (t != types[i]) {
			err(v, op, "'%s' %s: value %u must be %s, got %s", on(op), what,
			    i + 1, tn(v, types[i]), tn(v, t));
			return false;
		}
	}
	return true;
}

static Type **
types_of(Verifier *v, const Value *vals, uint32_t n)
{
	Type **t = arena_alloc(v->a, (n ? n : 1) * sizeof *t);
	uint32_t i;

	for (i = 0; i < n; i++)
		t[i] = ir_type(v->f, vals[i]);
	return t;
}

/* Region args (lead + iters), its yield (iters), the results (iters). */
static void
check_loop_region(Verifier *v, Op *op, Block *b, Type *lead, const Value *inits,
		  uint32_t n)
{
	Type **it = types_of(v, inits, n), **args;
	Op *y = term_of(b, OP_YIELD);

	if (!match_values(v, op, "results (typed as the initial values)", op->res,
			  op->nres, it, n))
		return;
	args = arena_alloc(v->a, (n + 1) * sizeof *args);
	args[0] = lead;
	memcpy(args + 1, it, n * sizeof *it);
	if (!match_values(v, op, "region arguments (index, then the iteration "
			  "values)", b->args, b->nargs, args, n + 1))
		return;
	if (y)
		match_values(v, op, "yielded values", y->opnds, y->nopnds, it, n);
}

static void
check_for(Verifier *v, Op *op)
{
	Type *t = OPT(op, 0);

	if (!want_scalar_int(v, op, "lower bound", t))
		return;
	if (OPT(op, 1) != t || OPT(op, 2) != t) {
		err(v, op, "'for' bounds and step must have one type, got %s, %s and %s",
		    tn(v, t), tn(v, OPT(op, 1)), tn(v, OPT(op, 2)));
		return;
	}
	check_loop_region(v, op, op->regions[0], t, op->opnds + 3, op->nopnds - 3);
}

static void
check_sched_for(Verifier *v, Op *op)
{
	if (want_kind(v, op, "schedule", OPT(op, 0), TY_SCHED, "'sched'"))
		check_loop_region(v, op, op->regions[0], ty_scalar(v->f->mod->ctx, TY_I32),
				  op->opnds + 1, op->nopnds - 1);
}

static void
check_while(Verifier *v, Op *op)
{
	Type **it = types_of(v, op->opnds, op->nopnds);
	uint32_t n = op->nopnds;
	Op *c = term_of(op->regions[0], OP_CONDITION);
	Op *y = term_of(op->regions[1], OP_YIELD);

	if (!match_values(v, op, "results (typed as the initial values)", op->res,
			  op->nres, it, n) ||
	    !match_values(v, op, "arguments of the condition region",
			  op->regions[0]->args, op->regions[0]->nargs, it, n) ||
	    !match_values(v, op, "arguments of the body region",
			  op->regions[1]->args, op->regions[1]->nargs, it, n))
		return;
	if (c && c->nopnds >= 1) {
		if (!want_type(v, c, "condition", ir_type(v->f, c->opnds[0]),
			       ty_scalar(v->f->mod->ctx, TY_I1)))
			return;
		match_values(v, op, "values passed by 'condition'", c->opnds + 1,
			     c->nopnds - 1, it, n);
	}
	if (y)
		match_values(v, op, "yielded values", y->opnds, y->nopnds, it, n);
}

static void
check_if(Verifier *v, Op *op)
{
	Type **rt = types_of(v, op->res, op->nres);
	uint32_t i;

	if (!want_type(v, op, "condition", OPT(op, 0), ty_scalar(v->f->mod->ctx, TY_I1)))
		return;
	for (i = 0; i < 2; i++) {
		Block *b = op->regions[i];
		Op *y = term_of(b, OP_YIELD);

		if (b->nargs)
			err(v, op, "the regions of 'if' have no arguments");
		else if (y)
			match_values(v, op, i ? "else-region yields" : "then-region yields",
				     y->opnds, y->nopnds, rt, op->nres);
	}
}

static void
check_return(Verifier *v, Op *op)
{
	match_values(v, op, arena_printf(v->a, "values (the results of '@%s')",
					 v->f->name),
		     op->opnds, op->nopnds, v->f->rtypes, v->f->nrtypes);
}

static void
check_call(Verifier *v, Op *op)
{
	const char *name = attr_str(&op->attrs, "callee");
	Func *g = ir_func_find(v->f->mod, name);
	Type **pt;
	uint32_t i;

	if (!g || g->kind != FN_DEVICE) {
		err(v, op, "'call' callee '@%s' is not a func of this module", name);
		return;
	}
	pt = arena_alloc(v->a, (g->body->nargs + 1) * sizeof *pt);
	for (i = 0; i < g->body->nargs; i++)
		pt[i] = ir_type(g, g->body->args[i]);  /* g's own value table */
	if (match_values(v, op, arena_printf(v->a, "operands (parameters of '@%s')", name),
			 op->opnds, op->nopnds, pt, g->body->nargs))
		match_values(v, op, arena_printf(v->a, "results (results of '@%s')", name),
			     op->res, op->nres, g->rtypes, g->nrtypes);
}

/* A region with no arguments that yields nothing (task, tasks). */
static void
check_plain_region(Verifier *v, Op *op, Block *b)
{
	Op *y = term_of(b, OP_YIELD);

	if (b->nargs)
		err(v, op, "the region of '%s' has no arguments", on(op));
	if (y && y->nopnds)
		err(v, y, "the region of '%s' yields no values", on(op));
}

static void
check_tasks(Verifier *v, Op *op)
{
	Op *t;

	check_plain_region(v, op, op->regions[0]);
	for (t = op->regions[0]->first; t && t->next; t = t->next)
		if (t->kind != OP_TASK)
			err(v, t, "'tasks' holds only 'task' ops, got '%s'", on(t));
}

static void
check_task(Verifier *v, Op *op)
{
	Op *owner = op->parent ? op->parent->parent : NULL;

	int64_t regs = attr_int(&op->attrs, "regs", 0);

	if (!owner || owner->kind != OP_TASKS)
		err(v, op, "'task' must be directly inside 'tasks'");
	if (regs && (regs < 24 || regs > 256 || regs % 8))
		err(v, op, "'task' register budget %lld is not one setmaxnreg "
		    "takes (24 to 256, a multiple of 8)", (long long)regs);
	check_plain_region(v, op, op->regions[0]);
}

/* task_replica: an i32 inside a task with replicas. */
static void
check_task_replica(Verifier *v, Op *op)
{
	Block *b;

	want_type(v, op, "result", ir_type(v->f, op->res[0]),
		  ty_scalar(v->f->mod->ctx, TY_I32));
	for (b = op->parent; b && b->parent; b = b->parent->parent)
		if (b->parent->kind == OP_TASK) {
			if (!attr_has(&b->parent->attrs, "replicas"))
				err(v, op, "'task_replica' in a task without "
				    "'replicas'");
			return;
		}
	err(v, op, "'task_replica' outside a task");
}

/* ---- shared memory, barriers, TMA, pipes ---- */

static bool
want_smem(Verifier *v, Op *op, const char *what, Type *t)
{
	return want_kind(v, op, what, t, TY_SMEM, "a shared-memory buffer");
}

static bool
want_bar(Verifier *v, Op *op, Type *t)
{
	if (t->kind == TY_MBAR && t->rank == 0)
		return true;
	err(v, op, "'%s' needs one barrier ('mbar'), got %s", on(op), tn(v, t));
	return false;
}

static void
check_smem_view(Verifier *v, Op *op)
{
	IrCtx *c = v->f->mod->ctx;
	Type *b = OPT(op, 0), *r = RT(op, 0);
	int64_t shape[TY_MAX_RANK];
	uint32_t i;

	if (!want_smem(v, op, "buffer", b))
		return;
	switch (op->kind) {
	case OP_SMEM_INDEX:
		if (b->rank < 2) {
			err(v, op, "'smem_index' needs a buffer of rank 2 or more, got %s",
			    tn(v, b));
			return;
		}
		if (want_scalar_int(v, op, "index", OPT(op, 1)))
			want_type(v, op, "result", r, ty_smem(c, b->elem, b->rank - 1, b->shape + 1));
		return;
	case OP_SMEM_SLICE:
		if (op->nopnds != 1 + (uint32_t)b->rank) {
			err(v, op, "'smem_slice' takes one offset per dimension of %s, got %u",
			    tn(v, b), op->nopnds - 1);
			return;
		}
		for (i = 1; i < op->nopnds; i++)
			if (!want_scalar_int(v, op, "offset", OPT(op, i)))
				return;
		if (!want_smem(v, op, "result", r))
			return;
		if (r->elem != b->elem || r->rank != b->rank)
			goto bad_slice;
		for (i = 0; i < b->rank; i++)
			if (r->shape[i] > b->shape[i])
				goto bad_slice;
		return;
	bad_slice:
		err(v, op, "'smem_slice' of %s cannot give %s", tn(v, b), tn(v, r));
		return;
	default:  /* smem_trans */
		if (check_perm(v, op, b, shape))
			want_type(v, op, "result", r, ty_smem(c, b->elem, b->rank, shape));
	}
}

static void
check_smem_load_store(Verifier *v, Op *op)
{
	Type *b = OPT(op, 0);
	Type *t = op->kind == OP_SMEM_LOAD ? RT(op, 0) : OPT(op, 1);

	if (want_smem(v, op, "view", b))
		want_type(v, op, op->kind == OP_SMEM_LOAD ? "result" : "value", t,
			  ty_tile(v->f->mod->ctx, b->elem, b->rank, b->shape));
}

/* A buffer of a kernel whose shared memory is planned (`smem`, in either
 * stage): its `offset` inside the plan, aligned to its elements. */
static void
check_planned(Verifier *v, Op *op)
{
	Attr *a = attr_find(&v->f->attrs, "smem");
	Type *t = RT(op, 0);
	int64_t size, off;

	if (v->f->kind != FN_KERNEL || !a || a->kind != ATTR_INT)
		return;
	if (!attr_has(&op->attrs, "offset")) {
		err(v, op, "'%s' has no 'offset' in a kernel whose shared memory "
		    "is planned ('smem')", on(op));
		return;
	}
	size = ir_smem_bytes(op, t);
	off = attr_int(&op->attrs, "offset", 0);
	if (off < 0 || off > a->i - size)
		err(v, op, "'%s' at offsets [%lld, %lld) lies outside the "
		    "kernel's shared memory (smem = %lld)", on(op),
		    (long long)off, (long long)(off + size), (long long)a->i);
	else if (off % (op->kind == OP_MBAR_ALLOC ? 8 : MAX(1, ty_bits(t->elem) / 8)))
		err(v, op, "'%s' at offset %lld is not aligned to its %s", on(op),
		    (long long)off, op->kind == OP_MBAR_ALLOC
		    ? "mbarriers (8 bytes)" : "elements");
}

static void
check_mbar(Verifier *v, Op *op)
{
	Type *i32 = ty_scalar(v->f->mod->ctx, TY_I32);

	switch (op->kind) {
	case OP_MBAR_ALLOC:
		if (want_kind(v, op, "result", RT(op, 0), TY_MBAR, "'mbar' or 'mbar<N>'"))
			check_planned(v, op);
		break;
	case OP_MBAR_AT:
		if (OPT(op, 0)->kind != TY_MBAR || OPT(op, 0)->rank != 1)
			err(v, op, "'mbar_at' needs an array of barriers, got %s",
			    tn(v, OPT(op, 0)));
		else if (want_scalar_int(v, op, "index", OPT(op, 1)))
			want_type(v, op, "result", RT(op, 0), ty_mbar(v->f->mod->ctx, -1));
		break;
	case OP_MBAR_WAIT:
		if (want_bar(v, op, OPT(op, 0)))
			want_type(v, op, "phase", OPT(op, 1), i32);
		break;
	case OP_MBAR_ARRIVE:
		if (want_bar(v, op, OPT(op, 0)) && op->nopnds == 2)
			want_type(v, op, "CTA rank", OPT(op, 1), i32);
		break;
	default:  /* mbar_expect */
		if (want_bar(v, op, OPT(op, 0)))
			want_scalar_int(v, op, "byte count", OPT(op, 1));
		break;
	}
}

/* desc, c0..cR-1, then the buffer (and for loads the barrier, mcast). */
static void
check_tma(Verifier *v, Op *op)
{
	Type *d = OPT(op, 0), *buf, *i32 = ty_scalar(v->f->mod->ctx, TY_I32);
	uint32_t r, i, fixed = op->kind == OP_TMA_LOAD ? 2 : 1;

	if (!want_kind(v, op, "descriptor", d, TY_TMA, "a tensor descriptor ('tma')"))
		return;
	r = d->rank;
	if (op->nopnds != 1 + r + fixed && !(op->kind == OP_TMA_LOAD && op->nopnds == 1 + r + 3)) {
		err(v, op, "'%s' with %s takes %u coordinates, then %s", on(op), tn(v, d),
		    r, op->kind == OP_TMA_LOAD ? "dst, bar [, mcast]" : "src");
		return;
	}
	for (i = 1; i <= r; i++)
		if (!want_type(v, op, "coordinate", OPT(op, i), i32))
			return;
	buf = OPT(op, 1 + r);
	if (!want_smem(v, op, op->kind == OP_TMA_LOAD ? "destination" : "source", buf))
		return;
	if (buf->elem != d->elem || buf->rank != d->rank ||
	    (d->shape[0] && memcmp(buf->shape, d->shape, r * sizeof d->shape[0]) != 0)) {
		err(v, op, "'%s' buffer %s does not match the box of %s", on(op),
		    tn(v, buf), tn(v, d));
		return;
	}
	if (op->kind == OP_TMA_LOAD && want_bar(v, op, OPT(op, 2 + r)) &&
	    op->nopnds == 4 + r)
		want_type(v, op, "multicast mask", OPT(op, 3 + r), i32);
}

static void
check_cp_async(Verifier *v, Op *op)
{
	Type *dst = OPT(op, 0), *src = OPT(op, 1);

	if (!want_smem(v, op, "destination", dst))
		return;
	if (src->kind != TY_TILE || src->elem->kind != TY_PTR ||
	    src->elem->elem != dst->elem || src->rank != dst->rank ||
	    memcmp(src->shape, dst->shape, dst->rank * sizeof dst->shape[0]) != 0) {
		err(v, op, "'cp_async' source must be a tile of pointers to the "
		    "elements of %s, of its shape; got %s", tn(v, dst), tn(v, src));
		return;
	}
	check_mask(v, op, 2, src);
}

static void
check_pipe(Verifier *v, Op *op)
{
	Type *i32 = ty_scalar(v->f->mod->ctx, TY_I32);
	int64_t depth = attr_int(&op->attrs, "depth", 0);
	uint32_t i;

	if (op->kind == OP_PIPE_CREATE) {
		for (i = 0; i < op->nopnds; i++) {
			Type *b = OPT(op, i);

			if (!want_smem(v, op, "buffer", b))
				return;
			if (b->shape[0] != depth) {
				err(v, op, "'pipe_create' buffer %s must have %lld slots "
				    "(its depth) in its first dimension", tn(v, b),
				    (long long)depth);
				return;
			}
		}
		want_kind(v, op, "result", RT(op, 0), TY_PIPE, "'pipe'");
		return;
	}
	if (!want_kind(v, op, "operand", OPT(op, 0), TY_PIPE, "'pipe'"))
		return;
	if (op->nopnds == 2 && !want_type(v, op, "slot", OPT(op, 1), i32))
		return;
	if (op->kind == OP_PIPE_BAR)
		want_type(v, op, "result", RT(op, 0), ty_mbar(v->f->mod->ctx, -1));
	else if (op->nres)
		want_type(v, op, "result", RT(op, 0), i32);
}

static void
check_dot_wait(Verifier *v, Op *op)
{
	match_values(v, op, "results (typed as its operands)", op->res, op->nres,
		     types_of(v, op->opnds, op->nopnds), op->nopnds);
}

static void
check_other(Verifier *v, Op *op)
{
	switch (op->kind) {
	case OP_SPLAT: check_splat(v, op); break;
	case OP_CONVERT_LAYOUT: check_convert(v, op); break;
	case OP_BROADCAST: check_broadcast(v, op); break;
	case OP_EXPAND_DIMS: check_expand_dims(v, op); break;
	case OP_RESHAPE: check_reshape(v, op); break;
	case OP_TRANS: check_trans(v, op); break;
	case OP_EXTRACT_SLICE: check_extract(v, op); break;
	case OP_REDUCE: check_reduce(v, op); break;
	case OP_DOT: case OP_DOT_ASYNC: check_dot(v, op); break;
	case OP_LOAD: case OP_STORE: check_load_store(v, op); break;
	case OP_ATOMIC: case OP_ATOMIC_CAS: check_atomic(v, op); break;
	case OP_FOR: check_for(v, op); break;
	case OP_SCHED_FOR: check_sched_for(v, op); break;
	case OP_WHILE: check_while(v, op); break;
	case OP_IF: check_if(v, op); break;
	case OP_RETURN: check_return(v, op); break;
	case OP_CALL: check_call(v, op); break;
	case OP_ASSERT:
		want_type(v, op, "condition", OPT(op, 0),
			  ty_like(v->f->mod->ctx, OPT(op, 0), ty_scalar(v->f->mod->ctx, TY_I1)));
		break;
	case OP_TASKS: check_tasks(v, op); break;
	case OP_TASK: check_task(v, op); break;
	case OP_TASK_REPLICA: check_task_replica(v, op); break;
	case OP_ENTRY_FAST:
		want_type(v, op, "result", ir_type(v->f, op->res[0]),
			  ty_scalar(v->f->mod->ctx, TY_I1));
		break;
	case OP_SMEM_ALLOC:
		if (want_smem(v, op, "result", RT(op, 0)))
			check_planned(v, op);
		break;
	case OP_SMEM_INDEX: case OP_SMEM_SLICE: case OP_SMEM_TRANS:
		check_smem_view(v, op);
		break;
	case OP_SMEM_LOAD: case OP_SMEM_STORE: check_smem_load_store(v, op); break;
	case OP_MBAR_ALLOC: case OP_MBAR_AT: case OP_MBAR_WAIT: case OP_MBAR_ARRIVE:
	case OP_MBAR_EXPECT:
		check_mbar(v, op);
		break;
	case OP_TMA_LOAD: case OP_TMA_STORE: check_tma(v, op); break;
	case OP_CP_ASYNC: check_cp_async(v, op); break;
	case OP_DOT_WAIT: check_dot_wait(v, op); break;
	case OP_PIPE_CREATE: case OP_PIPE_ACQUIRE: case OP_PIPE_COMMIT:
	case OP_PIPE_CONSUME: case OP_PIPE_RELEASE: case OP_PIPE_BAR:
		check_pipe(v, op);
		break;
	case OP_SCHED_CREATE:
		/* i32, as sema makes it: lower-schedules counts tiles in
		 * i32 (an i64 count broke its loops: found by fuzz-ir) */
		if (want_kind(v, op, "tile count", OPT(op, 0), TY_I32, "'i32'"))
			want_kind(v, op, "result", RT(op, 0), TY_SCHED, "'sched'");
		break;
	case OP_SCHED_TILE:
		if (want_scalar_int(v, op, "tile", OPT(op, 0)))
			want_scalar_int(v, op, "tile count", OPT(op, 1));
		break;
	case OP_CLC_TRY_CANCEL: case OP_CLC_QUERY: {
		Type *t = OPT(op, 0);

		if (t->kind != TY_SMEM || ty_numel(t) * ty_bytes(t->elem) != 16)
			err(v, op, "'%s' response must be a 16-byte shared-memory "
			    "view, got %s", on(op), tn(v, t));
		if (op->kind == OP_CLC_TRY_CANCEL) {
			want_kind(v, op, "barrier", OPT(op, 1), TY_MBAR, "'mbar'");
			break;
		}
		want_type(v, op, "result 1", RT(op, 0),
			  ty_scalar(v->f->mod->ctx, TY_I1));
		want_type(v, op, "result 2", RT(op, 1),
			  ty_scalar(v->f->mod->ctx, TY_I32));
		want_type(v, op, "result 3", RT(op, 2),
			  ty_scalar(v->f->mod->ctx, TY_I32));
		want_type(v, op, "result 4", RT(op, 3),
			  ty_scalar(v->f->mod->ctx, TY_I32));
		break;
	}
	default:
		break;  /* counts and attributes say it all */
	}
}

static void
check_op(Verifier *v, Op *op)
{
	if (op_info[op->kind].flags & F_ELEM) {
		check_elementwise(v, op);
		return;
	}
	switch (op->kind) {
	case OP_CONST: check_const(v, op); break;
	case OP_RANGE: check_range(v, op); break;
	case OP_PROGRAM_ID:
	case OP_NUM_PROGRAMS:
	case OP_CLUSTER_RANK:
		want_type(v, op, "result", RT(op, 0), ty_scalar(v->f->mod->ctx, TY_I32));
		break;
	case OP_CMP: check_cmp(v, op); break;
	case OP_SELECT: check_select(v, op); break;
	case OP_CVT: check_cvt(v, op); break;
	case OP_BITCAST: check_bitcast(v, op); break;
	case OP_PTR_ADD: check_ptr_add(v, op); break;
	case OP_MISALIGN: check_misalign(v, op); break;
	default: check_other(v, op); break;
	}
}

/* ---- structure and scope -------------------------------------------------------- */

static const char *
vname(Verifier *v, Value x)
{
	const char *n = v->f->vals.v[x].name;

	return n ? arena_printf(v->a, "'%%%s'", n) : arena_printf(v->a, "#%u", x);
}

static void
define(Verifier *v, Op *op, Value x)
{
	if (x == 0 || x >= v->f->vals.n) {
		err(v, op, "internal: a definition is not a value");
		return;
	}
	if (v->state[x] != S_NONE)
		err(v, op, "internal: value %s is defined twice", vname(v, x));
	v->state[x] = S_VISIBLE;
	vec_push(v->a, &v->scope, x);
}

static void
leave_scope(Verifier *v, uint32_t mark)
{
	while (v->scope.n > mark)
		v->state[v->scope.v[--v->scope.n]] = S_GONE;
}

static bool
check_operands(Verifier *v, Op *op)
{
	uint32_t i;
	bool ok = true;

	for (i = 0; i < op->nopnds; i++) {
		Value x = op->opnds[i];

		if (x == 0 || x >= v->f->vals.n) {
			err(v, op, "operand %u of '%s' is not a value", i + 1, on(op));
			ok = false;
		} else if (v->state[x] == S_NONE) {
			err(v, op, "operand %u of '%s' (%s) is used before its definition",
			    i + 1, on(op), vname(v, x));
			ok = false;
		} else if (v->state[x] == S_GONE) {
			err(v, op, "operand %u of '%s' (%s) is defined in a region that "
			    "does not enclose this use", i + 1, on(op), vname(v, x));
			ok = false;
		}
	}
	return ok;
}

static bool
check_results(Verifier *v, Op *op)
{
	uint32_t i;
	bool ok = true;

	for (i = 0; i < op->nres; i++) {
		ValInfo *vi;

		if (op->res[i] == 0 || op->res[i] >= v->f->vals.n) {
			err(v, op, "internal: result %u of '%s' is not a value", i + 1, on(op));
			ok = false;
			continue;
		}
		vi = ir_val(v->f, op->res[i]);
		if (vi->def != op || vi->idx != i) {
			err(v, op, "internal: the value table does not say that %s is "
			    "result %u of '%s'", vname(v, op->res[i]), i + 1, on(op));
			ok = false;
		}
		ok &= check_type(v, op, vi->ty);
	}
	return ok;
}

static void check_block(Verifier *v, Block *b, Op *owner, uint32_t ri, int depth);

/* The terminator a region of `owner` ends with (NULL: a function body). */
static OpKind
terminator_for(Op *owner, uint32_t ri)
{
	if (!owner)
		return OP_RETURN;
	return owner->kind == OP_WHILE && ri == 0 ? OP_CONDITION : OP_YIELD;
}

static void
check_one(Verifier *v, Op *op, int depth)
{
	bool ok = check_operands(v, op);
	uint32_t i;

	ok &= check_counts(v, op);
	ok &= check_results(v, op);
	ok &= check_attrs(v, op);
	if (ok)
		check_op(v, op);
	for (i = 0; i < op->nregions; i++) {
		uint32_t mark = v->scope.n;

		check_block(v, op->regions[i], op, i, depth + 1);
		leave_scope(v, mark);
	}
	for (i = 0; i < op->nres; i++)
		if (op->res[i] && op->res[i] < v->f->vals.n)
			define(v, op, op->res[i]);
}

static void
check_block(Verifier *v, Block *b, Op *owner, uint32_t ri, int depth)
{
	OpKind want = terminator_for(owner, ri);
	Op *op;
	uint32_t i;

	if (depth > 4096) {
		err(v, owner, "regions nested too deeply");
		return;
	}
	if (b->parent != owner || b->fn != v->f)
		err(v, owner, "internal: a region's block does not point to its op");
	for (i = 0; i < b->nargs; i++) {
		ValInfo *vi = ir_val(v->f, b->args[i]);

		if (vi->blk != b || vi->idx != i || vi->def)
			err(v, owner, "internal: the value table does not say that %s "
			    "is argument %u of its block", vname(v, b->args[i]), i + 1);
		check_type(v, owner, vi->ty);
		define(v, owner, b->args[i]);
	}
	for (op = b->first; op; op = op->next) {
		if (op->parent != b)
			err(v, op, "internal: '%s' does not point to its block", on(op));
		if (op_has(op, F_TERM) && op->next)
			err(v, op, "'%s' must be the last op of its block", on(op));
		else if (op_has(op, F_TERM) && op->kind != want)
			err(v, op, "'%s' cannot end %s; expected '%s'", on(op),
			    owner ? arena_printf(v->a, "a region of '%s'", on(owner))
				  : "a function body",
			    op_name(want));
		check_one(v, op, depth);
	}
	/* (an op with regions it should not have got its own error) */
	if ((!b->last || !op_has(b->last, F_TERM)) &&
	    (!owner || op_info[owner->kind].nregions == (int)owner->nregions)) {
		if (owner)
			err(v, owner, "region %u of '%s' must end with '%s'", ri + 1,
			    on(owner), op_name(want));
		else
			err(v, NULL, "the body of '@%s' must end with 'return'",
			    v->f->name);
	}
}

/* ---- functions and the module --------------------------------------------------- */

static void
check_signature(Verifier *v)
{
	Func *f = v->f;
	Type *i32 = ty_scalar(f->mod->ctx, TY_I32);
	uint32_t i;

	for (i = 0; i < f->nrtypes; i++)
		check_type(v, NULL, f->rtypes[i]);
	if (f->kind == FN_KERNEL && f->nrtypes)
		err(v, NULL, "a kernel returns nothing; '@%s' returns %u values",
		    f->name, f->nrtypes);
	if (f->kind == FN_GRID &&
	    (f->nrtypes != 3 || f->rtypes[0] != i32 || f->rtypes[1] != i32 ||
	     f->rtypes[2] != i32))
		err(v, NULL, "grid function '@%s' must return (i32, i32, i32)", f->name);
}

static void
check_func_attrs(Verifier *v)
{
	Func *f = v->f;
	Attr *a;
	uint32_t i;

	if ((a = attr_find(&f->attrs, "warps")) &&
	    (a->kind != ATTR_INT || a->i < 1 || a->i > 32))
		err(v, NULL, "'warps' of '@%s' must be an integer from 1 to 32", f->name);
	if ((a = attr_find(&f->attrs, "maxnreg")) &&
	    (a->kind != ATTR_INT || a->i < 24 || a->i > 248 || a->i % 8))
		err(v, NULL, "'maxnreg' of '@%s' must be a multiple of 8 from 24 "
		    "to 248", f->name);
	if ((a = attr_find(&f->attrs, "smem")) &&
	    (a->kind != ATTR_INT || a->i < 0 || a->i > (1 << 24)))
		err(v, NULL, "'smem' of '@%s' must be a byte count from 0 to 2^24",
		    f->name);
	if ((a = attr_find(&f->attrs, "stages")) &&
	    (a->kind != ATTR_INT || a->i < 1 || a->i > 8))
		err(v, NULL, "'stages' of '@%s' must be an integer from 1 to 8", f->name);
	if ((a = attr_find(&f->attrs, "cluster"))) {
		bool ok = a->kind == ATTR_INTS && a->ints.n == 3;

		for (i = 0; ok && i < 3; i++)
			ok = a->ints.v[i] >= 1 && a->ints.v[i] <= 16;
		if (!ok)
			err(v, NULL, "'cluster' of '@%s' must be [x, y, z] with each "
			    "from 1 to 16", f->name);
	}
	if ((a = attr_find(&f->attrs, "grid"))) {
		Func *g = a->kind == ATTR_STR ? ir_func_find(f->mod, a->s) : NULL;

		if (!g || g->kind != FN_GRID)
			err(v, NULL, "'grid' of '@%s' must name a grid function of the "
			    "module", f->name);
	}
}

bool
ir_verify_func(Func *f, Diag *d)
{
	Arena a;
	Verifier v = { .f = f, .d = d, .a = &a };

	arena_init(&a, f->mod->ctx->arena->alloc, f->mod->ctx->arena->ud, NULL);
	v.state = arena_alloc(&a, f->vals.n);
	check_signature(&v);
	check_func_attrs(&v);
	check_block(&v, f->body, NULL, 0, 0);
	arena_reset(&a);
	if (!v.errors && ir_func_laid_out(f))
		return ir_verify_layouts(f, d);
	return v.errors == 0;
}

/* Interned names: equal names are one pointer; a set of them in a. */
static bool
seen_before(Arena *a, const char ***set, uint32_t *cap, uint32_t n, const char *name)
{
	uint32_t j;

	if (2 * (n + 1) > *cap) {
		const char **old = *set;
		uint32_t ocap = *cap, i;

		*cap = ocap ? ocap * 2 : 64;
		*set = arena_alloc(a, *cap * sizeof **set);
		for (i = 0; i < ocap; i++)
			if (old[i])
				seen_before(a, set, cap, 0, old[i]);
	}
	j = (uint32_t)(((uintptr_t)name >> 4) * 0x9e3779b1u) & (*cap - 1);
	for (; (*set)[j]; j = (j + 1) & (*cap - 1))
		if ((*set)[j] == name)
			return true;
	(*set)[j] = name;
	return false;
}

bool
ir_verify_module(Module *m, Diag *d)
{
	Arena a;
	const char **set = NULL;
	uint32_t cap = 0, i;
	bool ok = true;

	arena_init(&a, m->ctx->arena->alloc, m->ctx->arena->ud, NULL);
	for (i = 0; i < m->funcs.n; i++) {
		Func *f = m->funcs.v[i];

		if (seen_before(&a, &set, &cap, i, f->name)) {
			ir_error(d, f, NULL, "redefinition of function '@%s'", f->name);
			ok = false;
		}
		ok &= ir_verify_func(f, d);
	}
	arena_reset(&a);
	return ok;
}
