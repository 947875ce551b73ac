/*
 * expr.c: expressions -- literals, names, operators with NumPy
 * broadcasting and the promotion rules of docs/language.md, indexing of
 * tiles, shared buffers and barrier arrays, fields of pipe slots.
 */
#include <math.h>
#include <string.h>

#include "parser/semaint.h"

SVal
sv_error(void)
{
	return (SVal){ .kind = SV_ERROR };
}

Type *
ty_of_scalar(Sema *s, TypeKind k)
{
	return ty_scalar(s->ir, k);
}

SVal
sv_const_int(Sema *s, TypeKind k, int64_t v, SrcRange loc)
{
	return (SVal){ .kind = SV_VALUE, .ty = ty_of_scalar(s, k),
		       .is_const = true, .cval = cv_int(k, v), .loc = loc };
}

SVal
sv_const_float(Sema *s, TypeKind k, double v, SrcRange loc)
{
	return (SVal){ .kind = SV_VALUE, .ty = ty_of_scalar(s, k),
		       .is_const = true, .cval = cv_float(k, v), .loc = loc };
}

SVal
sv_value(Type *t, Value v, SrcRange loc)
{
	return (SVal){ .kind = SV_VALUE, .ty = t, .v = v, .loc = loc };
}

bool
sv_is_value(SVal *v)
{
	return v->kind == SV_VALUE;
}

bool
sv_is_scalar(SVal *v)
{
	return v->kind == SV_VALUE && v->ty->kind != TY_TILE;
}

const char *
sema_shape_str(Sema *s, const int64_t *shape, int rank)
{
	const char *r = "[";
	int i;

	for (i = 0; i < rank; i++)
		r = arena_printf(s->arena, "%s%s%lld", r, i ? ", " : "",
				 (long long)shape[i]);
	return arena_printf(s->arena, "%s]", r);
}

const char *
sema_type_str(Sema *s, Type *t)
{
	switch (t->kind) {
	case TY_PTR:
		return arena_printf(s->arena, "*%s", sema_type_str(s, t->elem));
	case TY_TILE:
	case TY_SMEM:
		/* a tile of pointers: "(*f32)[16]" */
		return arena_printf(s->arena, t->elem->kind == TY_PTR ? "(%s)%s"
				    : "%s%s", sema_type_str(s, t->elem),
				    sema_shape_str(s, t->shape, t->rank));
	case TY_TMA:
		return arena_printf(s->arena, "tma<%s, %d>",
				    sema_type_str(s, t->elem), t->rank);
	case TY_MBAR:
		return t->rank ? arena_printf(s->arena, "barrier[%lld]",
					      (long long)t->shape[0])
			       : "barrier";
	default:
		return ty_kind_name(t->kind);
	}
}

const char *
sv_describe(Sema *s, SVal *v)
{
	switch (v->kind) {
	case SV_VALUE:
		if (v->weak)
			return ty_is_float(v->ty) ? "a float literal"
						  : "an integer literal";
		return arena_printf(s->arena, "'%s'", sema_type_str(s, v->ty));
	case SV_TYPE: return "a type";
	case SV_STRING: return "a string";
	case SV_NONE: return "None";
	case SV_VOID: return "nothing (the call returns no value)";
	case SV_SMEM: return arena_printf(s->arena, "a shared buffer '%s'",
					  sema_type_str(s, v->ty));
	case SV_MBAR: return v->ty->rank ? "a barrier array" : "a barrier";
	case SV_TMA: return "a tensor descriptor";
	case SV_PIPE: return "a pipe";
	case SV_SLOT: return "a pipe slot";
	case SV_SCHED: return "a tile schedule";
	case SV_TUPLE: return "a tuple";
	case SV_LIST: return "a list";
	case SV_ERROR: return "an invalid value";
	}
	return "?";
}

Value
sema_materialize(Sema *s, SVal *v)
{
	if (v->v || !v->is_const)
		return v->v;
	if (!ig_need_builder(s, v->loc))
		return 0;
	ig_set_loc(s, v->loc);
	v->v = ig_const(s, v->ty, v->cval);
	return v->v;
}

/* ---- types --------------------------------------------------------------- */

static bool
shape_dims(Sema *s, AstList *dims, const char *what, bool pow2,
	   int64_t *shape, int *rank)
{
	int64_t numel = 1;
	uint32_t i;

	if (dims->n > TY_MAX_RANK) {
		diag_error(s->diag, dims->v[TY_MAX_RANK]->loc,
			   "%s has %u dimensions; at most %d are supported",
			   what, dims->n, TY_MAX_RANK);
		return false;
	}
	for (i = 0; i < dims->n; i++) {
		if (!sema_const_int(s, dims->v[i], "a dimension", &shape[i]))
			return false;
		if (shape[i] <= 0 || shape[i] > TY_MAX_ELEMS) {
			diag_error(s->diag, dims->v[i]->loc,
				   "dimension must be between 1 and 1048576, "
				   "got %lld", (long long)shape[i]);
			return false;
		}
		if (pow2 && !is_pow2(shape[i])) {
			diag_error(s->diag, dims->v[i]->loc,
				   "tile dimensions must be powers of two, got "
				   "%lld", (long long)shape[i]);
			return false;
		}
		numel *= shape[i];
	}
	if (numel > TY_MAX_ELEMS) {
		diag_error(s->diag, dims->v[0]->loc,
			   "%s has %lld elements; at most 1048576 are supported",
			   what, (long long)numel);
		return false;
	}
	*rank = (int)dims->n;
	return true;
}

Type *
sema_type(Sema *s, Ast *t)
{
	int64_t shape[TY_MAX_RANK], rank;
	int r;
	Type *elem;

	switch (t->kind) {
	case AST_TY_SCALAR:
		return ty_of_scalar(s, t->scalar);
	case AST_TY_PTR:
		elem = sema_type(s, t->a);
		if (!elem)
			return NULL;
		if (!ty_is_scalar_kind(elem->kind)) {
			diag_error(s->diag, t->a->loc,
				   "pointers must point to scalars, not '%s'",
				   sema_type_str(s, elem));
			return NULL;
		}
		return ty_ptr(s->ir, elem, AS_GLOBAL);
	case AST_TY_TILE:
		if (!shape_dims(s, &t->list, "a tile type", true, shape, &r))
			return NULL;
		return ty_tile(s->ir, ty_of_scalar(s, t->scalar), r, shape);
	case AST_TY_TMA:
		if (!sema_const_int(s, t->a, "the rank of a tensor descriptor",
				    &rank))
			return NULL;
		if (rank < 1 || rank > TY_MAX_RANK) {
			diag_error(s->diag, t->a->loc,
				   "tensor descriptors have rank 1 to %d, got "
				   "%lld", TY_MAX_RANK, (long long)rank);
			return NULL;
		}
		return ty_tma(s->ir, ty_of_scalar(s, t->scalar), (int)rank, NULL);
	default:
		diag_error(s->diag, t->loc, "expected a type");
		return NULL;
	}
}

/* The shape of a shared buffer: the type node must be T[dims]. */
Type *
sema_smem_type(Sema *s, Ast *t)
{
	int64_t shape[TY_MAX_RANK];
	int r;

	if (t->kind != AST_TY_TILE) {
		diag_error(s->diag, t->loc, "a shared buffer needs a shape, "
			   "such as 'bf16[4, 128, 64]'");
		return NULL;
	}
	if (!shape_dims(s, &t->list, "a shared buffer", false, shape, &r))
		return NULL;
	return ty_smem(s->ir, ty_of_scalar(s, t->scalar), r, shape);
}

/* e evaluated with no IR to emit into: a constant, or a diagnostic. */
static SVal
const_eval(Sema *s, Ast *e, const char *what)
{
	Builder *saved = s->b;
	const char *saved_what = s->const_what;
	SVal v;

	s->b = NULL;
	s->const_what = what;
	v = sema_expr(s, e);
	s->b = saved;
	s->const_what = saved_what;
	return v;
}

bool
sema_const_int(Sema *s, Ast *e, const char *what, int64_t *out)
{
	SVal v = const_eval(s, e, what);

	if (v.kind == SV_ERROR)
		return false;
	if (!v.is_const || !ty_is_int(v.ty)) {
		diag_error(s->diag, e->loc, "%s must be a compile-time integer "
			   "constant, got %s", what, sv_describe(s, &v));
		return false;
	}
	*out = v.cval.i;
	return true;
}

bool
sema_const_bool(Sema *s, Ast *e, const char *what, bool *out)
{
	SVal v = const_eval(s, e, what);

	if (v.kind == SV_ERROR)
		return false;
	if (!v.is_const || ty_elem(v.ty)->kind != TY_I1 || v.ty->kind == TY_TILE) {
		diag_error(s->diag, e->loc, "%s must be true or false, a "
			   "compile-time constant; got %s", what, sv_describe(s, &v));
		return false;
	}
	*out = v.cval.i != 0;
	return true;
}

bool
sema_const_int_in(Sema *s, Ast *e, const char *what, int64_t lo, int64_t hi,
		  int64_t *out)
{
	if (!sema_const_int(s, e, what, out))
		return false;
	if (*out < lo || *out > hi) {
		diag_error(s->diag, e->loc, "%s must be between %lld and %lld, "
			   "got %lld", what, (long long)lo, (long long)hi,
			   (long long)*out);
		return false;
	}
	return true;
}

/* ---- promotion and broadcasting ------------------------------------------------ */

static TypeKind
wider(TypeKind a, TypeKind b)
{
	Type ta = { .kind = a }, tb = { .kind = b };

	return ty_bits(&ta) >= ty_bits(&tb) ? a : b;
}

/* fp8 values move and convert but do not compute. */
bool
sema_computable(Sema *s, Type *elem, SrcRange loc)
{
	if (elem->kind != TY_F8E4M3 && elem->kind != TY_F8E5M2)
		return true;
	diag_error(s->diag, loc, "no arithmetic on 8-bit floats: convert with "
		   ".to(f16), .to(bf16) or .to(f32) first");
	return false;
}

Type *
sema_promote(Sema *s, SVal *a, SVal *b, SrcRange loc)
{
	TypeKind x = ty_elem(a->ty)->kind, y = ty_elem(b->ty)->kind, r;
	bool fx = ty_is_float_kind(x), fy = ty_is_float_kind(y);

	if (ty_elem(a->ty)->kind == TY_PTR || ty_elem(b->ty)->kind == TY_PTR)
		return NULL;
	if ((x == TY_F8E4M3 || x == TY_F8E5M2 || y == TY_F8E4M3 ||
	     y == TY_F8E5M2) && x != y && !(a->weak && fy) && !(b->weak && fx)) {
		diag_error(s->diag, loc, "8-bit floats only combine with the same "
			   "type: convert with .to(f16), .to(bf16) or .to(f32) "
			   "first");
		return NULL;
	}
	if (a->weak && b->weak)
		r = fx || fy ? TY_F32 : wider(x, y);
	else if (a->weak)
		r = fx && !fy ? TY_F32 : y;
	else if (b->weak)
		r = fy && !fx ? TY_F32 : x;
	else if (x == y)
		r = x;
	else if (fx != fy)
		r = fx ? x : y;
	else if (fx)
		r = (x == TY_F16 && y == TY_BF16) || (x == TY_BF16 && y == TY_F16)
			    ? TY_F32 : wider(x, y);
	else if (x == TY_I1 || y == TY_I1)
		r = x == TY_I1 ? y : x;
	else if (ty_bits(&(Type){ .kind = x }) != ty_bits(&(Type){ .kind = y }))
		r = wider(x, y);
	else
		r = ty_is_unsigned_kind(x) ? x : y;
	return ty_of_scalar(s, r);
}

static void
shape_str(Buf *b, Type *t)
{
	int i;

	if (t->kind != TY_TILE) {
		buf_puts(b, "scalar");
		return;
	}
	for (i = 0; i < t->rank; i++)
		buf_printf(b, "%s%lld", i ? "x" : "", (long long)t->shape[i]);
}

Type *
sema_broadcast_shape(Sema *s, Type *a, Type *b, Type *elem, SrcRange loc)
{
	int ra = a->kind == TY_TILE ? a->rank : 0;
	int rb = b->kind == TY_TILE ? b->rank : 0;
	int r = MAX(ra, rb), i;
	int64_t shape[TY_MAX_RANK], numel = 1;

	for (i = 0; i < r; i++) {
		int64_t da = i < r - ra ? 1 : a->shape[i - (r - ra)];
		int64_t db = i < r - rb ? 1 : b->shape[i - (r - rb)];

		if (da != db && da != 1 && db != 1) {
			Buf m = { 0 };

			buf_puts(&m, "shapes ");
			shape_str(&m, a);
			buf_puts(&m, " and ");
			shape_str(&m, b);
			diag_error(s->diag, loc, "%s cannot be broadcast "
				   "together (dimension %d: %lld vs %lld)",
				   m.s, i, (long long)da, (long long)db);
			buf_free(&m);
			return NULL;
		}
		shape[i] = da == 1 ? db : da;
		numel = MIN(numel * shape[i], (int64_t)1 << 21);
	}
	/* each operand is within the limit, their broadcast need not be
	 * (range(ROWS)[:, None] + range(BLOCK)[None, :]) */
	if (numel > TY_MAX_ELEMS) {
		Buf m = { 0 };

		for (i = 0; i < r; i++)
			buf_printf(&m, "%s%lld", i ? "x" : "", (long long)shape[i]);
		diag_error(s->diag, loc, "a tile of shape %s is too large (at "
			   "most 1048576 elements)", m.s);
		buf_free(&m);
		return NULL;
	}
	return ty_tile(s->ir, elem, r, shape);
}

SVal
sema_convert(Sema *s, SVal v, Type *elem, SrcRange loc)
{
	Type *from;

	/* an error (already reported) stays one; it has no type */
	if (v.kind != SV_VALUE)
		return v;
	from = ty_elem(v.ty);
	if (from == elem)
		return v;
	/* no cvt makes a pointer of a number, a number of a pointer, or a
	 * pointer of another (a store of a pointer through a *u32 made one,
	 * which the verifier refused: found by fuzz-source) */
	if (from->kind == TY_PTR || elem->kind == TY_PTR) {
		diag_error(s->diag, loc, "cannot convert %s to '%s'",
			   sv_describe(s, &v), sema_type_str(s, elem));
		return sv_error();
	}
	if (v.is_const && !v.v) {
		if (v.weak && !ty_is_float_kind(from->kind) &&
		    ty_is_int_kind(elem->kind) &&
		    !cv_fits(elem->kind, v.cval.i, from->kind == TY_U64)) {
			diag_error(s->diag, v.loc, "literal %lld does not fit "
				   "in '%s'", (long long)v.cval.i,
				   ty_kind_name(elem->kind));
			return sv_error();
		}
		if (v.weak && ty_is_float_kind(from->kind) &&
		    !ty_is_float_kind(elem->kind)) {
			diag_error(s->diag, v.loc, "a float literal cannot be "
				   "used as '%s'", ty_kind_name(elem->kind));
			return sv_error();
		}
		v.cval = cv_convert(v.cval, elem->kind);
		v.ty = elem;
		v.weak = false;
		return v;
	}
	if (!ig_need_builder(s, loc) || !sema_materialize(s, &v))
		return sv_error();
	v.v = ig_op1(s, OP_CVT, ty_like(s->ir, v.ty, elem), v.v, loc);
	v.ty = ty_like(s->ir, v.ty, elem);
	v.weak = false;
	v.is_const = false;
	return v;
}

SVal
sema_broadcast(Sema *s, SVal v, Type *shape, SrcRange loc)
{
	Type *t = v.ty, *elem = ty_elem(v.ty);
	int i, r;

	if (v.kind != SV_VALUE || shape->kind != TY_TILE)
		return v;
	if (t->kind == TY_TILE && t->rank == shape->rank &&
	    memcmp(t->shape, shape->shape, sizeof t->shape) == 0)
		return v;
	if (!ig_need_builder(s, loc) || !sema_materialize(s, &v))
		return sv_error();
	if (t->kind != TY_TILE) {
		Type *rt = ty_tile(s->ir, elem, shape->rank, shape->shape);

		return sv_value(rt, ig_op1(s, OP_SPLAT, rt, v.v, loc), loc);
	}
	r = t->rank;
	while (r < shape->rank) {
		int64_t sh[TY_MAX_RANK] = { 1 };
		Op *op;

		memcpy(sh + 1, t->shape, (size_t)r * sizeof *sh);
		t = ty_tile(s->ir, elem, ++r, sh);
		op = ig_opn(s, OP_EXPAND_DIMS, 1, &v.v, t, loc);
		attr_set_int(s->ir, &op->attrs, "axis", 0);
		v.v = op->res[0];
	}
	for (i = 0; i < r; i++)
		if (t->shape[i] != shape->shape[i])
			break;
	if (i < r) {
		Type *rt = ty_tile(s->ir, elem, r, shape->shape);

		v.v = ig_op1(s, OP_BROADCAST, rt, v.v, loc);
		t = rt;
	}
	v.ty = t;
	v.is_const = false;
	return v;
}

bool
sema_to_shape(Sema *s, SVal *v, Type *shape, SrcRange loc)
{
	if (v->kind == SV_ERROR || !ig_need_builder(s, loc))
		return false;
	*v = sema_broadcast(s, *v, ty_like(s->ir, shape, ty_elem(v->ty)), loc);
	return v->kind != SV_ERROR && sema_materialize(s, v) != 0;
}

/* ---- operators --------------------------------------------------------------- */

static const OpKind arith_op[AST_OP_COUNT] = {
	[BIN_ADD] = OP_ADD, [BIN_SUB] = OP_SUB, [BIN_MUL] = OP_MUL,
	[BIN_DIV] = OP_DIV, [BIN_REM] = OP_REM, [BIN_SHL] = OP_SHL,
	[BIN_SHR] = OP_SHR, [BIN_BITAND] = OP_AND, [BIN_BITOR] = OP_OR,
	[BIN_BITXOR] = OP_XOR, [BIN_LOGAND] = OP_AND, [BIN_LOGOR] = OP_OR,
};

static const char *cmp_pred[AST_OP_COUNT] = {
	[BIN_EQ] = "eq", [BIN_NE] = "ne", [BIN_LT] = "lt",
	[BIN_LE] = "le", [BIN_GT] = "gt", [BIN_GE] = "ge",
};

static bool
is_cmp(AstOp op)
{
	return op >= BIN_EQ && op <= BIN_GE;
}

static SVal
pointer_binary(Sema *s, AstOp op, SVal a, SVal b, SrcRange loc)
{
	bool pa = ty_is_ptr(a.ty), pb = ty_is_ptr(b.ty);
	SVal p = pa ? a : b, off = pa ? b : a;
	Type *shape;

	if (pa && pb && is_cmp(op)) {
		if (ty_elem(a.ty) != ty_elem(b.ty)) {
			diag_error(s->diag, loc, "comparing pointers of "
				   "different types %s and %s",
				   sv_describe(s, &a), sv_describe(s, &b));
			return sv_error();
		}
		shape = sema_broadcast_shape(s, a.ty, b.ty, ty_elem(a.ty), loc);
		if (!shape || !sema_to_shape(s, &a, shape, loc) ||
		    !sema_to_shape(s, &b, shape, loc))
			return sv_error();
		ig_set_loc(s, loc);
		return sv_value(ty_like(s->ir, shape, ty_of_scalar(s, TY_I1)),
				b_cmp(s->b, cmp_pred[op], a.v, b.v), loc);
	}
	if (!(op == BIN_ADD || (op == BIN_SUB && pa)) || (pa && pb) ||
	    !ty_is_int(off.ty) || ty_elem(off.ty)->kind == TY_I1) {
		diag_error(s->diag, loc, "invalid operands to '%s': %s and %s "
			   "(pointers take '+' or '-' with an integer offset)",
			   ast_op_text(op), sv_describe(s, &a),
			   sv_describe(s, &b));
		return sv_error();
	}
	/* a literal that no i32 holds is an error (reported), not a value */
	if (off.weak &&
	    (off = sema_convert(s, off, ty_of_scalar(s, TY_I32), loc)).kind ==
		    SV_ERROR)
		return off;
	if (op == BIN_SUB) {
		if (off.is_const && !off.v) {
			CVal n;

			cv_unary(UN_NEG, off.cval, &n);
			off.cval = n;
		} else {
			if (!sema_materialize(s, &off))
				return sv_error();
			off.v = ig_op1(s, OP_NEG, off.ty, off.v, loc);
		}
	}
	shape = sema_broadcast_shape(s, p.ty, off.ty, ty_elem(p.ty), loc);
	if (!shape || !sema_to_shape(s, &p, shape, loc) ||
	    !sema_to_shape(s, &off, shape, loc))
		return sv_error();
	return sv_value(shape, ig_op2(s, OP_PTR_ADD, shape, p.v, off.v, loc),
			loc);
}

static bool
check_operands(Sema *s, AstOp op, SVal *a, SVal *b, Type *elem, SrcRange loc)
{
	bool f = ty_is_float_kind(elem->kind);

	if ((op == BIN_LOGAND || op == BIN_LOGOR) &&
	    (ty_elem(a->ty)->kind != TY_I1 || ty_elem(b->ty)->kind != TY_I1)) {
		diag_error(s->diag, loc, "operands of '%s' must be booleans "
			   "(i1), got %s and %s", ast_op_text(op),
			   sv_describe(s, a), sv_describe(s, b));
		return false;
	}
	if (f && (op == BIN_SHL || op == BIN_SHR || op == BIN_BITAND ||
		  op == BIN_BITOR || op == BIN_BITXOR)) {
		diag_error(s->diag, loc, "'%s' needs integer operands, got %s "
			   "and %s", ast_op_text(op), sv_describe(s, a),
			   sv_describe(s, b));
		return false;
	}
	return true;
}

SVal
sema_binary(Sema *s, AstOp op, SVal a, SVal b, SrcRange loc)
{
	Type *elem, *shape;
	SVal r;
	bool weak;

	if (a.kind == SV_ERROR || b.kind == SV_ERROR)
		return sv_error();
	if (a.kind != SV_VALUE || b.kind != SV_VALUE) {
		diag_error(s->diag, loc, "invalid operands to '%s': %s and %s",
			   ast_op_text(op), sv_describe(s, &a),
			   sv_describe(s, &b));
		return sv_error();
	}
	if (ty_is_ptr(a.ty) || ty_is_ptr(b.ty))
		return pointer_binary(s, op, a, b, loc);
	if (!(elem = sema_promote(s, &a, &b, loc)))
		return sv_error();
	if (!sema_computable(s, elem, loc) ||
	    !check_operands(s, op, &a, &b, elem, loc))
		return sv_error();
	/* literals of two widths are still weak together: decided before
	 * the conversion to elem, which makes the narrower one typed */
	weak = a.weak && b.weak && !is_cmp(op);
	a = sema_convert(s, a, elem, loc);
	b = sema_convert(s, b, elem, loc);
	if (a.kind == SV_ERROR || b.kind == SV_ERROR)
		return sv_error();
	if (a.is_const && b.is_const && !a.v && !b.v) {
		const char *err;

		r = a;
		r.loc = loc;
		if (!cv_binary(op, a.cval, b.cval, &r.cval, &err)) {
			diag_error(s->diag, loc, "%s", err ? err
				   : "cannot evaluate this constant expression");
			return sv_error();
		}
		r.ty = ty_of_scalar(s, r.cval.ty);
		r.weak = weak;
		return r;
	}
	if (!(shape = sema_broadcast_shape(s, a.ty, b.ty, elem, loc)) ||
	    !sema_to_shape(s, &a, shape, loc) || !sema_to_shape(s, &b, shape, loc))
		return sv_error();
	if (is_cmp(op)) {
		ig_set_loc(s, loc);
		return sv_value(ty_like(s->ir, shape, ty_of_scalar(s, TY_I1)),
				b_cmp(s->b, cmp_pred[op], a.v, b.v), loc);
	}
	return sv_value(shape, ig_op2(s, arith_op[op], shape, a.v, b.v, loc),
			loc);
}

static SVal
unary(Sema *s, Ast *e)
{
	SVal x = sema_expr(s, e->a), r;
	TypeKind k;

	if (x.kind == SV_ERROR)
		return x;
	if (x.kind != SV_VALUE || ty_is_ptr(x.ty)) {
		diag_error(s->diag, e->loc, "invalid operand to '%s': %s",
			   ast_op_text(e->op), sv_describe(s, &x));
		return sv_error();
	}
	k = ty_elem(x.ty)->kind;
	if (e->op == UN_NOT && k != TY_I1) {
		diag_error(s->diag, e->loc, "operand of '!' must be a boolean "
			   "(i1), got %s; compare with 0 first", sv_describe(s, &x));
		return sv_error();
	}
	if (e->op == UN_BITNOT && !ty_is_int_kind(k)) {
		diag_error(s->diag, e->loc, "operand of '~' must be an integer, "
			   "got %s", sv_describe(s, &x));
		return sv_error();
	}
	if (e->op == UN_NEG && (k == TY_F8E4M3 || k == TY_F8E5M2)) {
		diag_error(s->diag, e->loc, "no arithmetic on 8-bit floats: "
			   "convert with .to(f32) first");
		return sv_error();
	}
	if (x.is_const && !x.v) {
		r = x;
		r.loc = e->loc;
		/* a literal past INT64_MAX is a u64: its negation is the
		 * least i64 (-9223372036854775808) or fits no integer type */
		if (e->op == UN_NEG && x.weak && k == TY_U64) {
			if ((uint64_t)x.cval.i != (uint64_t)1 << 63) {
				diag_error(s->diag, e->loc, "literal -%llu does "
					   "not fit in any integer type",
					   (unsigned long long)x.cval.i);
				return sv_error();
			}
			r.ty = ty_of_scalar(s, TY_I64);
		}
		if (!cv_unary(e->op, x.cval, &r.cval))
			return sv_error();
		return r;
	}
	if (!ig_need_builder(s, e->loc) || !sema_materialize(s, &x))
		return sv_error();
	return sv_value(x.ty, ig_op1(s, e->op == UN_NEG ? OP_NEG : OP_NOT, x.ty,
				     x.v, e->loc), e->loc);
}

static SVal
literal_int(Sema *s, Ast *e)
{
	bool big = e->ival < 0;  /* above INT64_MAX: only u64 holds it */
	SVal v;

	if (e->suffix != TY_VOID && ty_is_float_kind(e->suffix))
		return sv_const_float(s, e->suffix,
				      big ? (double)(uint64_t)e->ival
					  : (double)e->ival, e->loc);
	if (e->suffix != TY_VOID) {
		if (!cv_fits(e->suffix, e->ival, true)) {
			diag_error(s->diag, e->loc, "literal does not fit in "
				   "'%s'", ty_kind_name(e->suffix));
			return sv_error();
		}
		return sv_const_int(s, e->suffix, e->ival, e->loc);
	}
	v = sv_const_int(s, big ? TY_U64
			 : cv_fits(TY_I32, e->ival, false) ? TY_I32 : TY_I64,
			 e->ival, e->loc);
	v.weak = true;
	return v;
}

/* ---- names ------------------------------------------------------------------- */

static int
edit_distance(const char *a, const char *b)
{
	int la = (int)strlen(a), lb = (int)strlen(b), i, j;
	int row[64];

	if (la >= 63 || lb >= 63)
		return 99;
	for (j = 0; j <= lb; j++)
		row[j] = j;
	for (i = 1; i <= la; i++) {
		int prev = row[0], tmp;

		row[0] = i;
		for (j = 1; j <= lb; j++) {
			tmp = row[j];
			row[j] = MIN(MIN(row[j] + 1, row[j - 1] + 1),
				     prev + (a[i - 1] != b[j - 1]));
			prev = tmp;
		}
	}
	return row[lb];
}

/* The visible name closest to `name`, for "did you mean" notes. */
static const char *
closest_name(Sema *s, const char *name)
{
	const char *best = NULL;
	int len = (int)strlen(name);
	int bestd = len <= 2 ? 1 : len / 3 + 2;  /* no guesses for tiny names */
	Scope *sc;
	Sym *y;

	for (sc = s->scope; sc; sc = sc->up)
		for (y = sc->syms; y; y = y->next) {
			int d = edit_distance(name, y->name);

			if (d < bestd) {
				bestd = d;
				best = y->name;
			}
		}
	return best;
}

static SVal
name(Sema *s, Ast *e)
{
	Sym *y = sema_lookup(s, e->name);
	SVal v;

	if (!y) {
		const char *near;

		if (strcmp(e->name, "inf") == 0 || strcmp(e->name, "nan") == 0) {
			v = sv_const_float(s, TY_F32, strcmp(e->name, "inf") == 0
					   ? (double)INFINITY : (double)NAN,
					   e->loc);
			v.weak = true;
			return v;
		}
		if (sema_is_builtin(e->name)) {
			diag_error(s->diag, e->loc, "'%s' is a builtin "
				   "function; call it with (...)", e->name);
			return sv_error();
		}
		diag_error(s->diag, e->loc, "unknown name '%s'", e->name);
		if ((near = closest_name(s, e->name)))
			diag_note(s->diag, e->loc, "did you mean '%s'?", near);
		return sv_error();
	}
	switch (y->kind) {
	case SYM_LET:
	case SYM_VAR:
		v = y->val;
		v.loc = e->loc;
		return v;
	case SYM_CONST:
		v = sema_const_sym(s, y, e->loc);
		v.loc = e->loc;
		return v;
	case SYM_PIPE:
		return (SVal){ .kind = SV_PIPE, .sym = y, .loc = e->loc };
	case SYM_FN:
	case SYM_KERNEL:
		diag_error(s->diag, e->loc, "'%s' is a %s; it cannot be used "
			   "as a value", e->name,
			   y->kind == SYM_FN ? "function" : "kernel");
		return sv_error();
	}
	return sv_error();
}

/* ---- indexing ------------------------------------------------------------------ */

/* The bounds of slice `it` of a tile dimension of size n: constants
 * lo .. hi, hi - lo a power of two and lo a multiple of it (the block
 * lies in whole registers of each thread). */
static bool
tile_slice_bounds(Sema *s, Ast *it, int64_t n, int64_t *lo, int64_t *len)
{
	int64_t hi;

	if (!sema_const_int(s, it->a, "a tile slice bound", lo) ||
	    !sema_const_int(s, it->b, "a tile slice bound", &hi))
		return false;
	if (*lo < 0 || hi > n || *lo >= hi) {
		diag_error(s->diag, it->loc, "slice %lld .. %lld is out of "
			   "bounds for a dimension of size %lld", (long long)*lo,
			   (long long)hi, (long long)n);
		return false;
	}
	*len = hi - *lo;
	if ((*len & (*len - 1)) || *lo % *len) {
		diag_error(s->diag, it->loc, "a tile slice takes an aligned "
			   "block: its length must be a power of two and its "
			   "start a multiple of it (%lld .. %lld is not)",
			   (long long)*lo, (long long)hi);
		if (*len & (*len - 1))
			return false;
		diag_note(s->diag, it->loc, "for instance %lld .. %lld",
			  (long long)(*lo / *len * *len),
			  (long long)(*lo / *len * *len + *len));
		return false;
	}
	return true;
}

static SVal
index_tile(Sema *s, SVal x, Ast *e)
{
	int64_t shape[TY_MAX_RANK], offs[TY_MAX_RANK] = { 0 }, block[TY_MAX_RANK];
	int in = 0, out = 0, rank = x.ty->kind == TY_TILE ? x.ty->rank : 0, d;
	bool sliced = false;
	uint32_t i;

	for (i = 0; i < e->list.n; i++) {
		Ast *it = e->list.v[i];

		if (it->kind == AST_NONE) {
			if (out == TY_MAX_RANK)
				break;
			shape[out++] = 1;
		} else if ((it->kind == AST_FULLSLICE || it->kind == AST_SLICE) &&
			   in < rank) {
			if (out == TY_MAX_RANK)
				break;
			block[in] = x.ty->shape[in];
			if (it->kind == AST_SLICE) {
				if (!tile_slice_bounds(s, it, x.ty->shape[in],
						       &offs[in], &block[in]))
					return sv_error();
				sliced |= block[in] != x.ty->shape[in];
			}
			shape[out++] = block[in++];
		} else {
			diag_error(s->diag, it->loc, "tiles are indexed only "
				   "with ':' (keep a dimension), 'a .. b' (an "
				   "aligned block of it) and None (add one)%s",
				   it->kind == AST_FULLSLICE ||
				   it->kind == AST_SLICE
				   ? ": too many slices for this tile" : "");
			return sv_error();
		}
	}
	if (i < e->list.n) {
		diag_error(s->diag, e->loc, "tiles have at most %d dimensions",
			   TY_MAX_RANK);
		return sv_error();
	}
	for (d = in; d < rank; d++)
		block[d] = x.ty->shape[d];
	while (in < rank && out < TY_MAX_RANK)
		shape[out++] = x.ty->shape[in++];
	if (in < rank) {
		diag_error(s->diag, e->loc, "tiles have at most %d dimensions",
			   TY_MAX_RANK);
		return sv_error();
	}
	if (!ig_need_builder(s, e->loc) || !sema_materialize(s, &x))
		return sv_error();
	if (sliced) {
		Type *bt = ty_tile(s->ir, ty_elem(x.ty), rank, block);
		Op *op = ig_opn(s, OP_EXTRACT_SLICE, 1, &x.v, bt, e->loc);

		attr_set_ints(s->ir, &op->attrs, "offsets", offs, rank);
		x = sv_value(bt, op->res[0], e->loc);
	}
	if (out == rank)
		return x;
	/* Only size-1 dimensions were added: a reshape keeps the order. */
	{
		Type *rt = ty_tile(s->ir, ty_elem(x.ty), out, shape);

		if (rank == 0)
			return sv_value(rt, ig_op1(s, OP_SPLAT, rt, x.v, e->loc),
					e->loc);
		return sv_value(rt, ig_op1(s, OP_RESHAPE, rt, x.v, e->loc),
				e->loc);
	}
}

static bool
index_value(Sema *s, Ast *it, Value *out)
{
	SVal v = sema_expr(s, it);

	if (v.kind == SV_ERROR)
		return false;
	if (!sv_is_scalar(&v) || !ty_is_int(v.ty) ||
	    ty_elem(v.ty)->kind == TY_I1) {
		diag_error(s->diag, it->loc, "an index must be a scalar integer, "
			   "got %s", sv_describe(s, &v));
		return false;
	}
	v = sema_convert(s, v, ty_of_scalar(s, TY_I32), it->loc);
	if (v.kind == SV_ERROR || !ig_need_builder(s, it->loc))
		return false;
	*out = sema_materialize(s, &v);
	return *out != 0;
}

static SVal
index_smem(Sema *s, SVal x, Ast *e)
{
	Value offs[TY_MAX_RANK];
	int64_t sizes[TY_MAX_RANK];
	bool sliced = false;
	uint32_t i;
	int d = 0;

	for (i = 0; i < e->list.n; i++) {
		Ast *it = e->list.v[i];
		Type *t = x.ty;

		if (it->kind != AST_SLICE && it->kind != AST_FULLSLICE &&
		    it->kind != AST_NONE) {
			Value idx;

			if (d > 0 || t->rank < 2) {
				diag_error(s->diag, it->loc, "%s", t->rank < 2
					   ? "indexing would leave a shared "
					     "buffer without dimensions; use "
					     "a slice 'a .. b'"
					   : "integer indices must come before "
					     "slices");
				return sv_error();
			}
			if (!index_value(s, it, &idx))
				return sv_error();
			t = ty_smem(s->ir, t->elem, t->rank - 1, t->shape + 1);
			x.v = ig_op2(s, OP_SMEM_INDEX, t, x.v, idx, it->loc);
			x.ty = t;
			continue;
		}
		if (it->kind == AST_NONE || d >= t->rank) {
			diag_error(s->diag, it->loc, it->kind == AST_NONE
				   ? "None cannot index a shared buffer"
				   : "too many indices for a shared buffer of "
				     "rank %d", t->rank);
			return sv_error();
		}
		if (it->kind == AST_FULLSLICE) {
			offs[d] = 0;
			sizes[d] = t->shape[d];
		} else {
			int64_t lo, hi;

			if (!sema_const_int(s, it->a, "a slice bound", &lo) ||
			    !sema_const_int(s, it->b, "a slice bound", &hi))
				return sv_error();
			if (lo < 0 || hi > t->shape[d] || lo >= hi) {
				diag_error(s->diag, it->loc, "slice %lld .. %lld "
					   "is out of bounds for a dimension "
					   "of size %lld", (long long)lo,
					   (long long)hi, (long long)t->shape[d]);
				return sv_error();
			}
			offs[d] = ig_const(s, ty_of_scalar(s, TY_I32),
					   cv_int(TY_I32, lo));
			sizes[d] = hi - lo;
			sliced = true;
		}
		d++;
	}
	if (sliced) {
		Value ops[1 + TY_MAX_RANK];
		Op *op;
		int k;

		ops[0] = x.v;
		for (k = 0; k < x.ty->rank; k++) {
			if (k >= d) {
				sizes[k] = x.ty->shape[k];
				offs[k] = 0;
			}
			ops[k + 1] = offs[k] ? offs[k]
				: ig_const(s, ty_of_scalar(s, TY_I32),
					   cv_int(TY_I32, 0));
		}
		x.ty = ty_smem(s->ir, x.ty->elem, x.ty->rank, sizes);
		op = ig_opn(s, OP_SMEM_SLICE, (uint32_t)x.ty->rank + 1, ops,
			    x.ty, e->loc);
		x.v = op->res[0];
	}
	x.loc = e->loc;
	return x;
}

static SVal
index_expr(Sema *s, Ast *e)
{
	SVal x = sema_expr(s, e->a);
	Value idx;

	if (x.kind == SV_ERROR)
		return x;
	if (!ig_need_builder(s, e->loc))
		return sv_error();
	switch (x.kind) {
	case SV_VALUE:
		return index_tile(s, x, e);
	case SV_SMEM:
		return index_smem(s, x, e);
	case SV_MBAR:
		if (x.ty->rank == 0 || e->list.n != 1) {
			diag_error(s->diag, e->loc, "a barrier array takes one "
				   "index: 'bars[i]'");
			return sv_error();
		}
		if (!index_value(s, e->list.v[0], &idx))
			return sv_error();
		return (SVal){ .kind = SV_MBAR, .ty = ty_mbar(s->ir, -1),
			       .v = ig_op2(s, OP_MBAR_AT, ty_mbar(s->ir, -1),
					   x.v, idx, e->loc), .loc = e->loc };
	default:
		diag_error(s->diag, e->loc, "%s cannot be indexed",
			   sv_describe(s, &x));
		return sv_error();
	}
}

/* Slot `slot` of a pipe field's buffer as the field's type: the rows
 * past the field's, which align the slots, sliced off. */
static Value
slot_view(Sema *s, Type *ft, Value buf, Value slot, SrcRange loc)
{
	Type *bt = ir_type(s->fn, buf);
	Value ops[1 + TY_MAX_RANK], v;
	int k;

	if (bt->shape[1] == ft->shape[0])
		return ig_op2(s, OP_SMEM_INDEX, ft, buf, slot, loc);
	v = ig_op2(s, OP_SMEM_INDEX,
		   ty_smem(s->ir, ft->elem, ft->rank, bt->shape + 1), buf, slot,
		   loc);
	ops[0] = v;
	for (k = 0; k < ft->rank; k++)
		ops[k + 1] = ig_const(s, ty_of_scalar(s, TY_I32),
				      cv_int(TY_I32, 0));
	return ig_opn(s, OP_SMEM_SLICE, (uint32_t)ft->rank + 1, ops, ft,
		      loc)->res[0];
}

static SVal
field_expr(Sema *s, Ast *e)
{
	SVal x = sema_expr(s, e->a);
	Sym *p;
	uint32_t i;

	if (x.kind == SV_ERROR)
		return x;
	if (x.kind != SV_SLOT) {
		diag_error(s->diag, e->loc, "%s has no field '%s'",
			   sv_describe(s, &x), e->name);
		return sv_error();
	}
	p = x.sym;
	for (i = 0; i < p->nfields; i++) {
		if (p->fnames[i] != e->name)
			continue;
		if (!ig_need_builder(s, e->loc))
			return sv_error();
		return (SVal){ .kind = SV_SMEM, .ty = p->ftypes[i],
			       .v = slot_view(s, p->ftypes[i], p->fbufs[i], x.v,
					      e->loc),
			       .sym = p, .slot = x.v, .producer = x.producer,
			       .loc = e->loc };
	}
	diag_error(s->diag, e->loc, "pipe '%s' has no field '%s'", p->name,
		   e->name);
	return sv_error();
}

static SVal
list_expr(Sema *s, Ast *e, SKind k)
{
	SVal v = { .kind = k, .loc = e->loc };
	uint32_t i;

	v.nelems = e->list.n;
	v.elems = arena_alloc(s->arena, (e->list.n + 1) * sizeof *v.elems);
	for (i = 0; i < e->list.n; i++) {
		v.elems[i] = sema_expr(s, e->list.v[i]);
		if (v.elems[i].kind == SV_ERROR)
			return sv_error();
	}
	return v;
}

static SVal
call_expr(Sema *s, Ast *e)
{
	Sym *y;
	SVal out;

	if (e->a->kind != AST_NAME) {
		diag_error(s->diag, e->a->loc, "only named functions can be "
			   "called");
		return sv_error();
	}
	y = sema_lookup(s, e->a->name);
	if (y && y->kind == SYM_FN)
		return sema_call_fn(s, y, e);
	if (!y && sema_builtin(s, e->a->name, e, &out))
		return out;
	if (y) {
		diag_error(s->diag, e->a->loc, "'%s' is not a function",
			   e->a->name);
		return sv_error();
	}
	diag_error(s->diag, e->a->loc, "unknown function '%s'", e->a->name);
	return sv_error();
}

SVal
sema_expr(Sema *s, Ast *e)
{
	SVal v;

	switch (e->kind) {
	case AST_INT:
		return literal_int(s, e);
	case AST_FLOAT:
		v = sv_const_float(s, e->suffix != TY_VOID ? e->suffix : TY_F32,
				   e->fval, e->loc);
		v.weak = e->suffix == TY_VOID;
		return v;
	case AST_BOOL:
		return sv_const_int(s, TY_I1, e->ival, e->loc);
	case AST_STRING:
		return (SVal){ .kind = SV_STRING, .str = e->name, .loc = e->loc };
	case AST_NONE:
		return (SVal){ .kind = SV_NONE, .loc = e->loc };
	case AST_NAME:
		return name(s, e);
	case AST_TYPEEXPR:
		v = (SVal){ .kind = SV_TYPE, .ty = sema_type(s, e->a),
			    .loc = e->loc };
		return v.ty ? v : sv_error();
	case AST_UNARY:
		return unary(s, e);
	case AST_BINARY: {
		SVal x = sema_expr(s, e->a);  /* left to right */

		return sema_binary(s, e->op, x, sema_expr(s, e->b), e->loc);
	}
	case AST_CALL:
		return call_expr(s, e);
	case AST_METHOD:
		return sema_method(s, e);
	case AST_FIELD:
		return field_expr(s, e);
	case AST_INDEX:
		return index_expr(s, e);
	case AST_LIST:
		return list_expr(s, e, SV_LIST);
	case AST_TUPLE:
		return list_expr(s, e, SV_TUPLE);
	case AST_SLICE:
	case AST_FULLSLICE:
		diag_error(s->diag, e->loc, "a slice can only appear inside "
			   "'[...]'");
		return sv_error();
	default:
		diag_error(s->diag, e->loc, "expected an expression");
		return sv_error();
	}
}
