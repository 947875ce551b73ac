/*
 * builtins.c: the builtin functions and methods of the language
 * (docs/language.md, "Builtins"): argument checking, shapes, types and
 * the IR each one lowers to.
 */
#include <math.h>
#include <string.h>

#include "parser/semaint.h"

typedef SVal (*BuiltinFn)(Sema *s, Ast *call, const char *name);

/* ---- arguments ------------------------------------------------------------ */

static const char *
names_text(Sema *s, const char *const *names)
{
	Buf b = { 0 };
	const char *r;
	int i, n = 0;

	while (names && names[n])
		n++;
	for (i = 0; i < n; i++)
		buf_printf(&b, "%s'%s'", i == 0 ? "" : i == n - 1 ? " and " : ", ",
			   names[i]);
	r = arena_strdup(s->arena, b.s ? b.s : "");
	buf_free(&b);
	return r;
}

bool
sema_args(Sema *s, Ast *call, const char *fname, uint32_t min_pos,
	  uint32_t max_pos, const char *const *names, CallArgs *out)
{
	uint32_t i, j;

	memset(out, 0, sizeof *out);
	out->call = call;
	for (i = 0; i < call->list.n; i++) {
		Ast *a = call->list.v[i];

		if (a->kind != AST_ARG) {
			if (out->nnamed) {
				diag_error(s->diag, a->loc, "positional argument "
					   "after a named one");
				return false;
			}
			if (out->npos == max_pos || out->npos == countof(out->pos)) {
				diag_error(s->diag, a->loc, "too many arguments "
					   "to '%s': it takes %s%u", fname,
					   min_pos == max_pos ? "" : "at most ",
					   max_pos);
				return false;
			}
			out->pos[out->npos++] = a;
			continue;
		}
		for (j = 0; names && names[j]; j++)
			if (strcmp(names[j], a->name) == 0)
				break;
		if (!names || !names[j]) {
			if (names && names[0])
				diag_error(s->diag, a->loc, "unknown argument "
					   "'%s' to '%s'; it accepts %s", a->name,
					   fname, names_text(s, names));
			else
				diag_error(s->diag, a->loc, "'%s' takes no named "
					   "arguments", fname);
			return false;
		}
		if (sema_named(out, a->name)) {
			diag_error(s->diag, a->loc, "argument '%s' is given "
				   "twice", a->name);
			return false;
		}
		if (out->nnamed < countof(out->named))
			out->named[out->nnamed++] = a;
	}
	if (out->npos < min_pos) {
		diag_error(s->diag, call->loc, "too few arguments to '%s': it "
			   "takes %s%u, got %u", fname,
			   min_pos == max_pos ? "" : "at least ", min_pos,
			   out->npos);
		return false;
	}
	return true;
}

Ast *
sema_named(CallArgs *a, const char *name)
{
	uint32_t i;

	for (i = 0; i < a->nnamed; i++)
		if (strcmp(a->named[i]->name, name) == 0)
			return a->named[i]->a;
	return NULL;
}

/* An enum-like argument: a bare word or a string among `allowed`. */
static const char *
word_arg(Sema *s, Ast *e, const char *what, const char *const *allowed)
{
	const char *w = NULL;
	int i;

	if (e->kind == AST_NAME || e->kind == AST_STRING)
		w = e->name;
	for (i = 0; w && allowed[i]; i++)
		if (strcmp(w, allowed[i]) == 0)
			return allowed[i];
	diag_error(s->diag, e->loc, "%s must be one of %s", what,
		   names_text(s, allowed));
	return NULL;
}

/* v, the value of argument e, if it is a scalar or a tile. */
static SVal
value_of(Sema *s, SVal v, Ast *e, const char *fname, const char *what)
{
	if (v.kind == SV_ERROR || v.kind == SV_VALUE)
		return v;
	diag_error(s->diag, e->loc, "%s of '%s' must be a scalar or a tile, "
		   "got %s", what, fname, sv_describe(s, &v));
	return sv_error();
}

static SVal
value_arg(Sema *s, Ast *e, const char *fname, const char *what)
{
	return value_of(s, sema_expr(s, e), e, fname, what);
}

static bool
shape_arg(Sema *s, Ast *e, const char *what, int64_t *shape, int *rank)
{
	uint32_t i;
	int64_t numel = 1;

	if (e->kind != AST_LIST || e->list.n == 0 || e->list.n > TY_MAX_RANK) {
		diag_error(s->diag, e->loc, "%s must be a list of 1 to %d "
			   "dimensions, such as [128, 64]", what, TY_MAX_RANK);
		return false;
	}
	for (i = 0; i < e->list.n; i++) {
		if (!sema_const_int_in(s, e->list.v[i], "a dimension", 1, TY_MAX_ELEMS,
				   &shape[i]))
			return false;
		if (!is_pow2(shape[i])) {
			diag_error(s->diag, e->list.v[i]->loc, "tile dimensions "
				   "must be powers of two, got %lld",
				   (long long)shape[i]);
			return false;
		}
		numel *= shape[i];
	}
	if (numel > TY_MAX_ELEMS) {
		diag_error(s->diag, e->loc, "a tile of %lld elements is too "
			   "large (at most 1048576)", (long long)numel);
		return false;
	}
	*rank = (int)e->list.n;
	return true;
}

static Type *
type_arg(Sema *s, Ast *e, const char *fname)
{
	SVal t = sema_expr(s, e);

	if (t.kind == SV_ERROR)
		return NULL;
	if (t.kind != SV_TYPE || !ty_is_scalar_kind(t.ty->kind)) {
		diag_error(s->diag, e->loc, "'%s' expects a scalar type such as "
			   "f32 here, got %s", fname, sv_describe(s, &t));
		return NULL;
	}
	return t.ty;
}

static bool
need_ir(Sema *s, Ast *call)
{
	return ig_need_builder(s, call->loc);
}

/* A weak literal gets its default type; values keep theirs. */
static SVal
settle(Sema *s, SVal v)
{
	if (v.kind == SV_VALUE && v.weak)
		v = sema_convert(s, v, ty_elem(v.ty), v.loc);
	v.weak = false;
	return v;
}

static Value
mat(Sema *s, SVal *v)
{
	return sema_materialize(s, v);
}

/* ---- grid and indices ---------------------------------------------------------- */

static SVal
bi_program_id(Sema *s, Ast *call, const char *name)
{
	static const char *const names[] = { "axis", NULL };
	CallArgs a;
	int64_t axis = 0;
	Ast *ax;

	if (!sema_args(s, call, name, 0, 1, names, &a))
		return sv_error();
	ax = a.npos ? a.pos[0] : sema_named(&a, "axis");
	if (ax && !sema_const_int_in(s, ax, "axis", 0, 2, &axis))
		return sv_error();
	if (s->fn && s->fn->kind == FN_GRID) {
		diag_error(s->diag, call->loc, "'%s' cannot be used in grid()",
			   name);
		return sv_error();
	}
	if (!need_ir(s, call))
		return sv_error();
	ig_set_loc(s, call->loc);
	return sv_value(ty_of_scalar(s, TY_I32),
			b_with_int(s->b, strcmp(name, "program_id") == 0
				   ? OP_PROGRAM_ID : OP_NUM_PROGRAMS,
				   ty_of_scalar(s, TY_I32), "axis", axis),
			call->loc);
}

static SVal
bi_range(Sema *s, Ast *call, const char *name)
{
	CallArgs a;
	int64_t lo = 0, hi;
	Type *t;
	Op *op;

	if (!sema_args(s, call, name, 1, 2, NULL, &a))
		return sv_error();
	if (a.npos == 2 && !sema_const_int_in(s, a.pos[0], "the start of a range",
					  -(1ll << 31), (1ll << 31) - 1, &lo))
		return sv_error();
	if (!sema_const_int_in(s, a.pos[a.npos - 1], a.npos == 2
			   ? "the end of a range" : "the size of a range",
			   -(1ll << 31), (1ll << 31) - 1, &hi))
		return sv_error();
	if (hi - lo <= 0 || hi - lo > (1 << 20) || !is_pow2(hi - lo)) {
		diag_error(s->diag, call->loc, "a range must have a power-of-two "
			   "size between 1 and 1048576, got %lld",
			   (long long)(hi - lo));
		return sv_error();
	}
	if (!need_ir(s, call))
		return sv_error();
	hi -= lo;
	t = ty_tile(s->ir, ty_of_scalar(s, TY_I32), 1, &hi);
	op = ig_opn(s, OP_RANGE, 0, NULL, t, call->loc);
	attr_set_int(s->ir, &op->attrs, "start", lo);
	attr_set_int(s->ir, &op->attrs, "end", lo + hi);
	return sv_value(t, op->res[0], call->loc);
}

static SVal
bi_full(Sema *s, Ast *call, const char *name)
{
	bool zeros = strcmp(name, "zeros") == 0;
	int64_t shape[TY_MAX_RANK];
	CallArgs a;
	Type *elem, *t;
	SVal v;
	int rank;

	if (!sema_args(s, call, name, zeros ? 2 : 3, zeros ? 2 : 3, NULL, &a))
		return sv_error();
	if (!(elem = type_arg(s, a.pos[0], name)) ||
	    !shape_arg(s, a.pos[1], "the shape", shape, &rank))
		return sv_error();
	t = ty_tile(s->ir, elem, rank, shape);
	v = zeros ? sv_const_int(s, TY_I32, 0, call->loc)
		  : value_arg(s, a.pos[2], name, "the value");
	if (v.kind == SV_ERROR)
		return v;
	if (!sv_is_scalar(&v)) {
		diag_error(s->diag, call->loc, "the value of '%s' must be a "
			   "scalar, got %s", name, sv_describe(s, &v));
		return sv_error();
	}
	if (zeros)
		v.weak = true;
	v = sema_convert(s, v, elem, call->loc);
	if (v.kind == SV_ERROR || !need_ir(s, call))
		return sv_error();
	if (v.is_const && !v.v) {
		ig_set_loc(s, call->loc);
		return sv_value(t, ig_const(s, t, v.cval), call->loc);
	}
	return sema_broadcast(s, v, t, call->loc);
}

/* ---- memory ------------------------------------------------------------------- */

static bool
check_tile_view(Sema *s, SVal *v, SrcRange loc, const char *what)
{
	int i;

	for (i = 0; i < v->ty->rank; i++)
		if (!is_pow2(v->ty->shape[i])) {
			diag_error(s->diag, loc, "%s a shared buffer whose "
				   "dimensions are powers of two, got '%s'",
				   what, sema_type_str(s, v->ty));
			return false;
		}
	return true;
}

static SVal
load_smem(Sema *s, CallArgs *a, SVal p)
{
	Type *t;

	if (a->nnamed) {
		diag_error(s->diag, a->named[0]->loc, "loads from shared "
			   "memory take no '%s'", a->named[0]->name);
		return sv_error();
	}
	if (!check_tile_view(s, &p, a->call->loc, "load needs"))
		return sv_error();
	t = ty_tile(s->ir, p.ty->elem, p.ty->rank, p.ty->shape);
	return sv_value(t, ig_op1(s, OP_SMEM_LOAD, t, p.v, a->call->loc),
			a->call->loc);
}

static bool
mask_arg(Sema *s, Ast *e, SVal *m)
{
	*m = value_arg(s, e, "load", "the mask");
	if (m->kind == SV_ERROR)
		return false;
	if (ty_elem(m->ty)->kind != TY_I1) {
		diag_error(s->diag, e->loc, "a mask must be a boolean (i1) "
			   "tile, got %s", sv_describe(s, m));
		return false;
	}
	return true;
}

static const char *const cache_words[] = { "ca", "cg", "cs", "cv", NULL };
static const char *const evict_words[] = { "normal", "first", "last", NULL };

static SVal
bi_load(Sema *s, Ast *call, const char *name)
{
	static const char *const names[] = { "mask", "other", "cache", "evict",
					     NULL };
	CallArgs a;
	SVal p, m = { 0 }, o = { 0 };
	Value ops[3];
	uint32_t n = 1;
	Type *shape, *elem;
	Ast *e;
	Op *op;

	if (!sema_args(s, call, name, 1, 1, names, &a) || !need_ir(s, call))
		return sv_error();
	p = sema_expr(s, a.pos[0]);
	if (p.kind == SV_SMEM)
		return load_smem(s, &a, p);
	if (p.kind == SV_ERROR)
		return p;
	if (p.kind != SV_VALUE || !ty_is_ptr(p.ty)) {
		diag_error(s->diag, a.pos[0]->loc, "'load' needs pointers or a "
			   "shared buffer, got %s", sv_describe(s, &p));
		return sv_error();
	}
	elem = ty_elem(p.ty)->elem;
	shape = p.ty;
	if ((e = sema_named(&a, "mask"))) {
		if (!mask_arg(s, e, &m) ||
		    !(shape = sema_broadcast_shape(s, shape, m.ty, elem, e->loc)))
			return sv_error();
	}
	if ((e = sema_named(&a, "other"))) {
		if (!m.kind) {
			diag_error(s->diag, e->loc, "'other' is only used with "
				   "'mask'");
			return sv_error();
		}
		o = value_arg(s, e, name, "'other'");
		if (o.kind == SV_ERROR ||
		    (o = sema_convert(s, o, elem, e->loc)).kind == SV_ERROR ||
		    !(shape = sema_broadcast_shape(s, shape, o.ty, elem, e->loc)))
			return sv_error();
	}
	if (!sema_to_shape(s, &p, shape, call->loc) ||
	    (m.kind && !sema_to_shape(s, &m, shape, call->loc)) ||
	    (o.kind && !sema_to_shape(s, &o, shape, call->loc)))
		return sv_error();
	ops[0] = p.v;
	if (m.kind)
		ops[n++] = m.v;
	if (o.kind)
		ops[n++] = o.v;
	op = ig_opn(s, OP_LOAD, n, ops, ty_like(s->ir, shape, elem), call->loc);
	if ((e = sema_named(&a, "cache"))) {
		const char *w = word_arg(s, e, "cache", cache_words);

		if (!w)
			return sv_error();
		attr_set_sym(s->ir, &op->attrs, "cache", w);
	}
	if ((e = sema_named(&a, "evict"))) {
		const char *w = word_arg(s, e, "evict", evict_words);

		if (!w)
			return sv_error();
		attr_set_sym(s->ir, &op->attrs, "evict", w);
	}
	return sv_value(op->res[0] ? ir_type(s->fn, op->res[0]) : NULL,
			op->res[0], call->loc);
}

static SVal
store_smem(Sema *s, CallArgs *a, SVal p, SVal v)
{
	Type *t = ty_tile(s->ir, p.ty->elem, p.ty->rank, p.ty->shape);
	Value ops[2];

	if (a->nnamed) {
		diag_error(s->diag, a->named[0]->loc, "stores to shared memory "
			   "take no '%s'", a->named[0]->name);
		return sv_error();
	}
	if (!check_tile_view(s, &p, a->call->loc, "store needs"))
		return sv_error();
	if (v.kind == SV_VALUE && v.ty->kind == TY_TILE &&
	    (v.ty->rank != t->rank ||
	     memcmp(v.ty->shape, t->shape, sizeof t->shape) != 0)) {
		diag_error(s->diag, a->pos[1]->loc, "storing %s into a shared "
			   "buffer of shape '%s'", sv_describe(s, &v),
			   sema_type_str(s, p.ty));
		return sv_error();
	}
	v = sema_convert(s, v, p.ty->elem, a->call->loc);
	if (v.kind == SV_ERROR)
		return v;
	v = sema_broadcast(s, v, t, a->call->loc);
	ops[0] = p.v;
	ops[1] = mat(s, &v);
	ig_opn(s, OP_SMEM_STORE, 2, ops, NULL, a->call->loc);
	return (SVal){ .kind = SV_VOID };
}

static SVal
bi_store(Sema *s, Ast *call, const char *name)
{
	static const char *const names[] = { "mask", NULL };
	CallArgs a;
	SVal p, v, m = { 0 };
	Type *shape, *elem;
	Value ops[3];
	Ast *e;

	if (!sema_args(s, call, name, 2, 2, names, &a) || !need_ir(s, call))
		return sv_error();
	p = sema_expr(s, a.pos[0]);
	v = value_arg(s, a.pos[1], name, "the value");
	if (p.kind == SV_ERROR || v.kind == SV_ERROR)
		return sv_error();
	if (p.kind == SV_SMEM)
		return store_smem(s, &a, p, v);
	if (p.kind != SV_VALUE || !ty_is_ptr(p.ty)) {
		diag_error(s->diag, a.pos[0]->loc, "'store' needs pointers or a "
			   "shared buffer, got %s", sv_describe(s, &p));
		return sv_error();
	}
	elem = ty_elem(p.ty)->elem;
	if ((v = sema_convert(s, v, elem, a.pos[1]->loc)).kind == SV_ERROR ||
	    !(shape = sema_broadcast_shape(s, p.ty, v.ty, elem, call->loc)))
		return sv_error();
	if ((e = sema_named(&a, "mask")) &&
	    (!mask_arg(s, e, &m) ||
	     !(shape = sema_broadcast_shape(s, shape, m.ty, elem, e->loc))))
		return sv_error();
	if (!sema_to_shape(s, &p, shape, call->loc) ||
	    !sema_to_shape(s, &v, shape, call->loc) ||
	    (m.kind && !sema_to_shape(s, &m, shape, call->loc)))
		return sv_error();
	ops[0] = p.v;
	ops[1] = v.v;
	ops[2] = m.v;
	ig_opn(s, OP_STORE, m.kind ? 3 : 2, ops, NULL, call->loc);
	return (SVal){ .kind = SV_VOID };
}

static SVal
bi_atomic(Sema *s, Ast *call, const char *name)
{
	static const char *const names[] = { "mask", NULL };
	bool cas = strcmp(name, "atomic_cas") == 0;
	CallArgs a;
	SVal p, v, c = { 0 }, m = { 0 };
	Type *shape, *elem;
	Value ops[3];
	Ast *e;
	Op *op;

	if (!sema_args(s, call, name, cas ? 3 : 2, cas ? 3 : 2,
		       cas ? NULL : names, &a) || !need_ir(s, call))
		return sv_error();
	p = sema_expr(s, a.pos[0]);
	if (p.kind == SV_ERROR)
		return p;
	if (p.kind != SV_VALUE || !ty_is_ptr(p.ty)) {
		diag_error(s->diag, a.pos[0]->loc, "'%s' needs pointers, got %s",
			   name, sv_describe(s, &p));
		return sv_error();
	}
	elem = ty_elem(p.ty)->elem;
	if (elem->kind == TY_I1 || elem->kind == TY_F8E4M3 ||
	    elem->kind == TY_F8E5M2 || elem->kind == TY_I8 || elem->kind == TY_U8) {
		diag_error(s->diag, call->loc, "'%s' does not support '%s' "
			   "elements", name, ty_kind_name(elem->kind));
		return sv_error();
	}
	if (cas) {
		c = value_arg(s, a.pos[1], name, "the compared value");
		if (c.kind == SV_ERROR ||
		    (c = sema_convert(s, c, elem, a.pos[1]->loc)).kind == SV_ERROR)
			return sv_error();
	}
	v = value_arg(s, a.pos[cas ? 2 : 1], name, "the value");
	if (v.kind == SV_ERROR ||
	    (v = sema_convert(s, v, elem, call->loc)).kind == SV_ERROR ||
	    !(shape = sema_broadcast_shape(s, p.ty, v.ty, elem, call->loc)))
		return sv_error();
	if (cas && !(shape = sema_broadcast_shape(s, shape, c.ty, elem,
						  call->loc)))
		return sv_error();
	if ((e = sema_named(&a, "mask")) &&
	    (!mask_arg(s, e, &m) ||
	     !(shape = sema_broadcast_shape(s, shape, m.ty, elem, e->loc))))
		return sv_error();
	if (!sema_to_shape(s, &p, shape, call->loc) ||
	    !sema_to_shape(s, &v, shape, call->loc) ||
	    (cas && !sema_to_shape(s, &c, shape, call->loc)) ||
	    (m.kind && !sema_to_shape(s, &m, shape, call->loc)))
		return sv_error();
	ops[0] = p.v;
	if (cas) {
		ops[1] = c.v;
		ops[2] = v.v;
		op = ig_opn(s, OP_ATOMIC_CAS, 3, ops, shape, call->loc);
		return sv_value(shape, op->res[0], call->loc);
	}
	if ((ty_is_float(v.ty) && strcmp(name, "atomic_add") != 0 &&
	     strcmp(name, "atomic_xchg") != 0 && strcmp(name, "atomic_max") != 0 &&
	     strcmp(name, "atomic_min") != 0) ||
	    (ty_is_float(v.ty) && elem->kind == TY_F64 &&
	     strcmp(name, "atomic_add") != 0 && strcmp(name, "atomic_xchg") != 0)) {
		diag_error(s->diag, call->loc, "'%s' does not support '%s' "
			   "elements", name, ty_kind_name(elem->kind));
		return sv_error();
	}
	ops[1] = v.v;
	ops[2] = m.v;
	op = ig_opn(s, OP_ATOMIC, m.kind ? 3 : 2, ops, shape, call->loc);
	attr_set_sym(s->ir, &op->attrs, "kind", name + strlen("atomic_"));
	return sv_value(shape, op->res[0], call->loc);
}

/* ---- elementwise ---------------------------------------------------------------- */

static SVal
bi_where(Sema *s, Ast *call, const char *name)
{
	CallArgs a;
	SVal c, x, y;
	Type *elem, *shape;
	bool weak;

	if (!sema_args(s, call, name, 3, 3, NULL, &a))
		return sv_error();
	c = value_arg(s, a.pos[0], name, "the condition");
	x = value_arg(s, a.pos[1], name, "the second argument");
	y = value_arg(s, a.pos[2], name, "the third argument");
	if (c.kind == SV_ERROR || x.kind == SV_ERROR || y.kind == SV_ERROR)
		return sv_error();
	if (ty_elem(c.ty)->kind != TY_I1) {
		diag_error(s->diag, a.pos[0]->loc, "the condition of 'where' "
			   "must be a boolean (i1), got %s", sv_describe(s, &c));
		return sv_error();
	}
	if (ty_is_ptr(x.ty) || ty_is_ptr(y.ty)) {
		elem = ty_elem(x.ty);
		if (ty_elem(y.ty) != elem) {
			diag_error(s->diag, call->loc, "'where' on pointers needs "
				   "one pointer type, got %s and %s",
				   sv_describe(s, &x), sv_describe(s, &y));
			return sv_error();
		}
	} else if (!(elem = sema_promote(s, &x, &y, call->loc))) {
		return sv_error();
	}
	weak = x.weak && y.weak;  /* before the conversions (sema_binary) */
	x = sema_convert(s, x, elem, call->loc);
	y = sema_convert(s, y, elem, call->loc);
	if (x.kind == SV_ERROR || y.kind == SV_ERROR ||
	    !(shape = sema_broadcast_shape(s, x.ty, y.ty, elem, call->loc)) ||
	    !(shape = sema_broadcast_shape(s, shape, c.ty, elem, call->loc)))
		return sv_error();
	if (c.is_const && !c.v) {  /* where(true, a, b) */
		SVal r = cv_truthy(c.cval) ? x : y;

		r.weak = weak;
		return sema_broadcast(s, r, shape, call->loc);
	}
	if (!need_ir(s, call))
		return sv_error();
	if (!sema_to_shape(s, &c, shape, call->loc) ||
	    !sema_to_shape(s, &x, shape, call->loc) ||
	    !sema_to_shape(s, &y, shape, call->loc))
		return sv_error();
	return sv_value(shape, ig_op3(s, OP_SELECT, shape, c.v, x.v, y.v,
				      call->loc), call->loc);
}

/* approx: the function has a hardware approximation (`approx: true`). */
static const struct {
	const char *name;
	OpKind op;
	double (*fold)(double);
	bool approx;
} math_fns[] = {
	{ "exp", OP_EXP, exp, true }, { "exp2", OP_EXP2, exp2, true },
	{ "log", OP_LOG, log, true }, { "log2", OP_LOG2, log2, true },
	{ "sqrt", OP_SQRT, sqrt, true }, { "rsqrt", OP_RSQRT, NULL, true },
	{ "sin", OP_SIN, sin, true }, { "cos", OP_COS, cos, true },
	{ "tanh", OP_TANH, tanh, true }, { "erf", OP_ERF, erf, false },
	{ "sigmoid", OP_SIGMOID, NULL, false }, { "floor", OP_FLOOR, floor, false },
	{ "ceil", OP_CEIL, ceil, false }, { "abs", OP_ABS, fabs, false },
};

static SVal
bi_math(Sema *s, Ast *call, const char *name)
{
	CallArgs a;
	SVal x;
	size_t i;
	TypeKind k;

	static const char *const approx_names[] = { "approx", NULL };
	Ast *ap;
	bool approx = false;
	Op *op;

	for (i = 0; i < countof(math_fns); i++)
		if (strcmp(math_fns[i].name, name) == 0)
			break;
	if (!sema_args(s, call, name, 1, 1, math_fns[i].approx ? approx_names : NULL,
		       &a))
		return sv_error();
	if ((ap = sema_named(&a, "approx")) &&
	    !sema_const_bool(s, ap, "'approx'", &approx))
		return sv_error();
	x = value_arg(s, a.pos[0], name, "the argument");
	if (x.kind == SV_ERROR)
		return x;
	k = ty_elem(x.ty)->kind;
	if (approx && k == TY_F64) {
		diag_error(s->diag, ap->loc, "'%s' has no approximation for f64 "
			   "(the hardware's are single precision); drop "
			   "'approx' or convert with .to(f32)", name);
		return sv_error();
	}
	if (k == TY_PTR || k == TY_F8E4M3 || k == TY_F8E5M2 ||
	    (k == TY_I1 && math_fns[i].op == OP_ABS)) {
		diag_error(s->diag, a.pos[0]->loc, "'%s' needs a number%s, got "
			   "%s", name, k == TY_PTR ? "" : " (convert 8-bit floats "
			   "with .to(f32))", sv_describe(s, &x));
		return sv_error();
	}
	if (!(math_fns[i].op == OP_ABS && ty_is_int_kind(k)) &&
	    !ty_is_float_kind(k))
		x = sema_convert(s, x, ty_of_scalar(s, TY_F32), call->loc);
	if (x.kind == SV_ERROR)
		return x;
	if (x.is_const && !x.v && math_fns[i].fold && ty_is_float(x.ty)) {
		x.cval = cv_float(x.cval.ty, math_fns[i].fold(x.cval.f));
		x.loc = call->loc;
		return x;
	}
	if (!need_ir(s, call) || !mat(s, &x))
		return sv_error();
	op = ig_opn(s, math_fns[i].op, 1, &x.v, x.ty, call->loc);
	if (approx)
		attr_set_int(s->ir, &op->attrs, "approx", 1);
	return sv_value(x.ty, op->res[0], call->loc);
}

static SVal
bi_fma(Sema *s, Ast *call, const char *name)
{
	CallArgs a;
	SVal x, y, z;
	Type *e1, *elem, *shape;

	if (!sema_args(s, call, name, 3, 3, NULL, &a))
		return sv_error();
	x = value_arg(s, a.pos[0], name, "the first argument");
	y = value_arg(s, a.pos[1], name, "the second argument");
	z = value_arg(s, a.pos[2], name, "the third argument");
	if (x.kind == SV_ERROR || y.kind == SV_ERROR || z.kind == SV_ERROR ||
	    !(e1 = sema_promote(s, &x, &y, call->loc)))
		return sv_error();
	x = sema_convert(s, x, e1, call->loc);
	y = sema_convert(s, y, e1, call->loc);
	if (x.kind == SV_ERROR || y.kind == SV_ERROR ||
	    !(elem = sema_promote(s, &x, &z, call->loc)) ||
	    !sema_computable(s, elem, call->loc))
		return sv_error();
	if (!ty_is_float_kind(elem->kind))
		elem = ty_of_scalar(s, TY_F32);
	x = sema_convert(s, x, elem, call->loc);
	y = sema_convert(s, y, elem, call->loc);
	z = sema_convert(s, z, elem, call->loc);
	if (x.kind == SV_ERROR || y.kind == SV_ERROR || z.kind == SV_ERROR ||
	    !(shape = sema_broadcast_shape(s, x.ty, y.ty, elem, call->loc)) ||
	    !(shape = sema_broadcast_shape(s, shape, z.ty, elem, call->loc)) ||
	    !need_ir(s, call))
		return sv_error();
	if (!sema_to_shape(s, &x, shape, call->loc) ||
	    !sema_to_shape(s, &y, shape, call->loc) ||
	    !sema_to_shape(s, &z, shape, call->loc))
		return sv_error();
	return sv_value(shape, ig_op3(s, OP_FMA, shape, x.v, y.v, z.v,
				      call->loc), call->loc);
}

static SVal
bi_cdiv(Sema *s, Ast *call, const char *name)
{
	CallArgs a;
	SVal x, y, one;

	if (!sema_args(s, call, name, 2, 2, NULL, &a))
		return sv_error();
	x = value_arg(s, a.pos[0], name, "the dividend");
	y = value_arg(s, a.pos[1], name, "the divisor");
	if (x.kind == SV_ERROR || y.kind == SV_ERROR)
		return sv_error();
	if (!ty_is_int(x.ty) || !ty_is_int(y.ty)) {
		diag_error(s->diag, call->loc, "'cdiv' needs integers, got %s "
			   "and %s", sv_describe(s, &x), sv_describe(s, &y));
		return sv_error();
	}
	one = sv_const_int(s, TY_I32, 1, call->loc);
	one.weak = true;
	return sema_binary(s, BIN_DIV,
			   sema_binary(s, BIN_SUB,
				       sema_binary(s, BIN_ADD, x, y, call->loc),
				       one, call->loc),
			   y, call->loc);
}

/* ---- reductions and min/max ----------------------------------------------------- */

static SVal
reduce(Sema *s, SVal x, Ast *axis_ast, const char *kind, SrcRange loc)
{
	Type *t = x.ty, *elem = ty_elem(x.ty), *rt;
	int64_t axis = 0, shape[TY_MAX_RANK];
	int r = 0, i;
	Op *op;

	if (t->kind != TY_TILE) {
		diag_error(s->diag, loc, "'%s' reduces a tile, got %s", kind,
			   sv_describe(s, &x));
		return sv_error();
	}
	if (ty_is_ptr(t) || elem->kind == TY_F8E4M3 || elem->kind == TY_F8E5M2) {
		diag_error(s->diag, loc, "'%s' cannot reduce %s", kind,
			   sv_describe(s, &x));
		return sv_error();
	}
	if (axis_ast && !sema_const_int_in(s, axis_ast, "axis", -t->rank,
				       t->rank - 1, &axis))
		return sv_error();
	if (!ig_need_builder(s, loc) || !mat(s, &x))
		return sv_error();
	if (!axis_ast && t->rank > 1) {  /* reduce everything */
		int64_t n = ty_numel(t);

		t = ty_tile(s->ir, elem, 1, &n);
		x.v = ig_op1(s, OP_RESHAPE, t, x.v, loc);
	}
	if (axis < 0)
		axis += t->rank;
	if (elem->kind == TY_I1 && (!strcmp(kind, "sum") || !strcmp(kind, "prod"))) {
		elem = ty_of_scalar(s, TY_I32);
		t = ty_like(s->ir, t, elem);
		x.v = ig_op1(s, OP_CVT, t, x.v, loc);
	}
	for (i = 0; i < t->rank; i++)
		if (i != axis)
			shape[r++] = t->shape[i];
	if (!strcmp(kind, "argmax") || !strcmp(kind, "argmin"))
		elem = ty_of_scalar(s, TY_I32);
	rt = ty_tile(s->ir, elem, r, shape);
	op = ig_opn(s, OP_REDUCE, 1, &x.v, rt, loc);
	attr_set_sym(s->ir, &op->attrs, "kind", kind);
	attr_set_int(s->ir, &op->attrs, "axis", axis);
	return sv_value(rt, op->res[0], loc);
}

static SVal
bi_reduce(Sema *s, Ast *call, const char *name)
{
	static const char *const names[] = { "axis", NULL };
	CallArgs a;
	SVal x;

	if (!sema_args(s, call, name, 1, 2, names, &a))
		return sv_error();
	x = value_arg(s, a.pos[0], name, "the argument");
	if (x.kind == SV_ERROR)
		return x;
	return reduce(s, x, a.npos == 2 ? a.pos[1] : sema_named(&a, "axis"),
		      name, call->loc);
}

static SVal
bi_minmax(Sema *s, Ast *call, const char *name)
{
	static const char *const names[] = { "axis", NULL };
	bool is_max = strcmp(name, "max") == 0;
	CallArgs a;
	SVal x, y, cond;
	Type *elem, *shape;
	bool weak;

	if (!sema_args(s, call, name, 1, 2, names, &a))
		return sv_error();
	x = value_arg(s, a.pos[0], name, "the first argument");
	if (x.kind == SV_ERROR)
		return x;
	if (a.npos == 1)
		return reduce(s, x, sema_named(&a, "axis"), name, call->loc);
	if (sema_named(&a, "axis")) {
		diag_error(s->diag, call->loc, "'%s' with two arguments is "
			   "elementwise and takes no 'axis'", name);
		return sv_error();
	}
	y = value_arg(s, a.pos[1], name, "the second argument");
	if (y.kind == SV_ERROR || !(elem = sema_promote(s, &x, &y, call->loc)) ||
	    !sema_computable(s, elem, call->loc))
		return sv_error();
	weak = x.weak && y.weak;  /* before the conversions (sema_binary) */
	x = sema_convert(s, x, elem, call->loc);
	y = sema_convert(s, y, elem, call->loc);
	if (x.kind == SV_ERROR || y.kind == SV_ERROR)
		return sv_error();
	if (x.is_const && y.is_const && !x.v && !y.v) {
		const char *err;
		SVal r;

		if (!cv_binary(BIN_LT, x.cval, y.cval, &cond.cval, &err))
			return sv_error();
		if (ty_is_float(x.ty) && (isnan(x.cval.f) || isnan(y.cval.f)))
			r = isnan(x.cval.f) ? y : x;
		else
			r = (cond.cval.i != 0) == is_max ? y : x;
		r.weak = weak;
		return r;
	}
	if (!(shape = sema_broadcast_shape(s, x.ty, y.ty, elem, call->loc)) ||
	    !need_ir(s, call))
		return sv_error();
	if (!sema_to_shape(s, &x, shape, call->loc) ||
	    !sema_to_shape(s, &y, shape, call->loc))
		return sv_error();
	return sv_value(shape, ig_op2(s, is_max ? OP_MAX : OP_MIN, shape, x.v,
				      y.v, call->loc), call->loc);
}

/* ---- dot and shapes ------------------------------------------------------------- */

/* Checks the operand element types of a dot; returns the accumulator's. */
static Type *
dot_acc_type(Sema *s, Type *ea, Type *eb, SrcRange loc)
{
	TypeKind k = ea->kind;

	if (ea != eb) {
		diag_error(s->diag, loc, "dot operands must have one element "
			   "type, got '%s' and '%s'", ty_kind_name(ea->kind),
			   ty_kind_name(eb->kind));
		return NULL;
	}
	if (k == TY_I8)
		return ty_of_scalar(s, TY_I32);
	if (k == TY_F16 || k == TY_BF16 || k == TY_F32 || k == TY_F8E4M3 ||
	    k == TY_F8E5M2)
		return ty_of_scalar(s, TY_F32);
	diag_error(s->diag, loc, "dot supports f16, bf16, f32, f8e4m3, f8e5m2 "
		   "and i8 operands, got '%s'", ty_kind_name(k));
	return NULL;
}

static bool
dot_shapes(Sema *s, Type *ta, Type *tb, SrcRange loc, int64_t *mn)
{
	if (ta->rank != 2 || tb->rank != 2) {
		diag_error(s->diag, loc, "dot needs two 2-D operands");
		return false;
	}
	if (ta->shape[1] != tb->shape[0]) {
		diag_error(s->diag, loc, "dot operands do not agree: %lldx%lld "
			   "times %lldx%lld", (long long)ta->shape[0],
			   (long long)ta->shape[1], (long long)tb->shape[0],
			   (long long)tb->shape[1]);
		return false;
	}
	if (ta->shape[0] < 16 || ta->shape[1] < 16 || tb->shape[1] < 16) {
		diag_error(s->diag, loc, "dot needs every dimension to be at "
			   "least 16 (tensor cores), got %lldx%lld times "
			   "%lldx%lld", (long long)ta->shape[0],
			   (long long)ta->shape[1], (long long)tb->shape[0],
			   (long long)tb->shape[1]);
		return false;
	}
	mn[0] = ta->shape[0];
	mn[1] = tb->shape[1];
	return true;
}

/* The accumulator argument (or zeros) converted to acc type `at`. */
static SVal
dot_acc(Sema *s, Ast *e, Type *at, SrcRange loc)
{
	SVal c;

	if (!e) {
		ig_set_loc(s, loc);
		return sv_value(at, ig_const(s, at, ty_is_float(at)
					     ? cv_float(ty_elem(at)->kind, 0)
					     : cv_int(ty_elem(at)->kind, 0)), loc);
	}
	c = value_arg(s, e, "dot", "the accumulator");
	if (c.kind == SV_ERROR)
		return c;
	if (ty_elem(c.ty) != ty_elem(at)) {
		diag_error(s->diag, e->loc, "the accumulator must be %s, got %s",
			   arena_printf(s->arena, "'%s'", sema_type_str(s, at)),
			   sv_describe(s, &c));
		return sv_error();
	}
	c = sema_broadcast(s, c, at, loc);
	if (c.kind != SV_ERROR && (c.ty->rank != 2 || c.ty->shape[0] != at->shape[0] ||
				   c.ty->shape[1] != at->shape[1])) {
		diag_error(s->diag, e->loc, "the accumulator must be '%s', got "
			   "%s", sema_type_str(s, at), sv_describe(s, &c));
		return sv_error();
	}
	mat(s, &c);
	return c;
}

static SVal
bi_dot(Sema *s, Ast *call, const char *name)
{
	static const char *const names[] = { "acc", NULL };
	CallArgs a;
	SVal x, y, c;
	Type *at;
	int64_t mn[2];

	if (!sema_args(s, call, name, 2, 3, names, &a) || !need_ir(s, call))
		return sv_error();
	x = value_arg(s, a.pos[0], name, "the first operand");
	y = value_arg(s, a.pos[1], name, "the second operand");
	if (x.kind == SV_ERROR || y.kind == SV_ERROR)
		return sv_error();
	if (x.ty->kind != TY_TILE || y.ty->kind != TY_TILE) {
		diag_error(s->diag, call->loc, "dot needs two 2-D tiles, got %s "
			   "and %s", sv_describe(s, &x), sv_describe(s, &y));
		return sv_error();
	}
	if (!dot_shapes(s, x.ty, y.ty, call->loc, mn) ||
	    !(at = dot_acc_type(s, x.ty->elem, y.ty->elem, call->loc)))
		return sv_error();
	at = ty_tile(s->ir, at, 2, mn);
	c = dot_acc(s, a.npos == 3 ? a.pos[2] : sema_named(&a, "acc"), at,
		    call->loc);
	if (c.kind == SV_ERROR)
		return c;
	return sv_value(at, ig_op3(s, OP_DOT, at, x.v, y.v, c.v, call->loc),
			call->loc);
}

static SVal
tile_of(Sema *s, SVal v, Ast *e, const char *fname)
{
	SVal x = value_of(s, v, e, fname, "the argument");

	if (x.kind != SV_ERROR && x.ty->kind != TY_TILE) {
		diag_error(s->diag, e->loc, "'%s' needs a tile, got %s", fname,
			   sv_describe(s, &x));
		return sv_error();
	}
	return x;
}

static SVal
tile_arg(Sema *s, Ast *e, const char *fname)
{
	return tile_of(s, sema_expr(s, e), e, fname);
}

static SVal
bi_trans(Sema *s, Ast *call, const char *name)
{
	CallArgs a;
	SVal x;
	int64_t perm[TY_MAX_RANK], shape[TY_MAX_RANK];
	int r, i, j;
	Type *t;
	Op *op;

	if (!sema_args(s, call, name, 1, 2, NULL, &a) || !need_ir(s, call))
		return sv_error();
	x = sema_expr(s, a.pos[0]);
	if (x.kind != SV_SMEM && x.kind != SV_ERROR)
		x = tile_of(s, x, a.pos[0], name);
	if (x.kind == SV_ERROR)
		return x;
	r = x.ty->rank;
	for (i = 0; i < r; i++)
		perm[i] = r - 1 - i;
	if (a.npos == 2) {
		Ast *l = a.pos[1];
		bool seen[TY_MAX_RANK] = { false };

		if (l->kind != AST_LIST || (int)l->list.n != r) {
			diag_error(s->diag, l->loc, "the permutation must list "
				   "all %d dimensions, such as [1, 0]", r);
			return sv_error();
		}
		for (i = 0; i < r; i++) {
			if (!sema_const_int_in(s, l->list.v[i], "a dimension", 0,
					   r - 1, &perm[i]))
				return sv_error();
			if (seen[perm[i]]) {
				diag_error(s->diag, l->list.v[i]->loc, "dimension "
					   "%lld appears twice", (long long)perm[i]);
				return sv_error();
			}
			seen[perm[i]] = true;
		}
	}
	for (j = 0; j < r; j++)
		shape[j] = x.ty->shape[perm[j]];
	if (x.kind == SV_SMEM) {
		/* a transposed view of the same bytes */
		t = ty_smem(s->ir, x.ty->elem, r, shape);
		op = ig_opn(s, OP_SMEM_TRANS, 1, &x.v, t, call->loc);
		attr_set_ints(s->ir, &op->attrs, "perm", perm, (uint32_t)r);
		x.ty = t;
		x.v = op->res[0];
		x.loc = call->loc;
		return x;
	}
	t = ty_tile(s->ir, x.ty->elem, r, shape);
	op = ig_opn(s, OP_TRANS, 1, &x.v, t, call->loc);
	attr_set_ints(s->ir, &op->attrs, "perm", perm, (uint32_t)r);
	return sv_value(t, op->res[0], call->loc);
}

static SVal
bi_reshape(Sema *s, Ast *call, const char *name)
{
	CallArgs a;
	SVal x;
	int64_t shape[TY_MAX_RANK];
	int r;
	Type *t;

	if (!sema_args(s, call, name, 2, 2, NULL, &a) || !need_ir(s, call))
		return sv_error();
	x = tile_arg(s, a.pos[0], name);
	if (x.kind == SV_ERROR || !shape_arg(s, a.pos[1], "the shape", shape, &r))
		return sv_error();
	t = ty_tile(s->ir, x.ty->elem, r, shape);
	if (ty_numel(t) != ty_numel(x.ty)) {
		diag_error(s->diag, call->loc, "cannot reshape %s into '%s': "
			   "the number of elements differs", sv_describe(s, &x),
			   sema_type_str(s, t));
		return sv_error();
	}
	if (t == x.ty)
		return x;
	return sv_value(t, ig_op1(s, OP_RESHAPE, t, x.v, call->loc), call->loc);
}

static SVal
bi_expand_dims(Sema *s, Ast *call, const char *name)
{
	CallArgs a;
	SVal x;
	int64_t axis, shape[TY_MAX_RANK];
	int r, i;
	Type *t;
	Op *op;

	if (!sema_args(s, call, name, 2, 2, NULL, &a) || !need_ir(s, call))
		return sv_error();
	x = value_arg(s, a.pos[0], name, "the argument");
	if (x.kind == SV_ERROR)
		return x;
	r = x.ty->kind == TY_TILE ? x.ty->rank : 0;
	if (r == TY_MAX_RANK) {
		diag_error(s->diag, call->loc, "tiles have at most %d dimensions",
			   TY_MAX_RANK);
		return sv_error();
	}
	if (!sema_const_int_in(s, a.pos[1], "axis", -(r + 1), r, &axis))
		return sv_error();
	if (axis < 0)
		axis += r + 1;
	if (!mat(s, &x))
		return sv_error();
	if (r == 0) {
		int64_t one = 1;

		t = ty_tile(s->ir, x.ty, 1, &one);
		return sv_value(t, ig_op1(s, OP_SPLAT, t, x.v, call->loc),
				call->loc);
	}
	for (i = 0; i <= r; i++)
		shape[i] = i < axis ? x.ty->shape[i] : i == axis ? 1
							  : x.ty->shape[i - 1];
	t = ty_tile(s->ir, x.ty->elem, r + 1, shape);
	op = ig_opn(s, OP_EXPAND_DIMS, 1, &x.v, t, call->loc);
	attr_set_int(s->ir, &op->attrs, "axis", axis);
	return sv_value(t, op->res[0], call->loc);
}

static SVal
bi_broadcast_to(Sema *s, Ast *call, const char *name)
{
	CallArgs a;
	SVal x;
	int64_t shape[TY_MAX_RANK];
	int r;
	Type *t, *b;

	if (!sema_args(s, call, name, 2, 2, NULL, &a) || !need_ir(s, call))
		return sv_error();
	x = value_arg(s, a.pos[0], name, "the argument");
	if (x.kind == SV_ERROR || !shape_arg(s, a.pos[1], "the shape", shape, &r))
		return sv_error();
	t = ty_tile(s->ir, ty_elem(x.ty), r, shape);
	if (!(b = sema_broadcast_shape(s, x.ty, t, ty_elem(x.ty), call->loc)))
		return sv_error();
	if (b != t) {
		diag_error(s->diag, call->loc, "cannot broadcast %s to '%s'",
			   sv_describe(s, &x), sema_type_str(s, t));
		return sv_error();
	}
	return sema_broadcast(s, settle(s, x), t, call->loc);
}

static SVal
bi_bitcast(Sema *s, Ast *call, const char *name)
{
	CallArgs a;
	SVal x;
	Type *to, *t;

	if (!sema_args(s, call, name, 2, 2, NULL, &a) || !need_ir(s, call))
		return sv_error();
	x = value_arg(s, a.pos[0], name, "the argument");
	if (x.kind == SV_ERROR || !(to = type_arg(s, a.pos[1], name)))
		return sv_error();
	x = settle(s, x);
	if (ty_is_ptr(x.ty) || ty_bits(x.ty) != ty_bits(to) ||
	    to->kind == TY_I1) {
		diag_error(s->diag, call->loc, "cannot bitcast %s to '%s': the "
			   "sizes differ", sv_describe(s, &x),
			   ty_kind_name(to->kind));
		return sv_error();
	}
	if (!mat(s, &x))
		return sv_error();
	t = ty_like(s->ir, x.ty, to);
	return sv_value(t, ig_op1(s, OP_BITCAST, t, x.v, call->loc), call->loc);
}

static SVal
bi_swizzle2d(Sema *s, Ast *call, const char *name)
{
	static const char *const names[] = { "group", NULL };
	CallArgs a;
	SVal pid, m, n, g, width, gid, first, gsize, inw, pm, pn, r;
	Ast *ge;
	SrcRange l = call->loc;

	if (!sema_args(s, call, name, 3, 3, names, &a))
		return sv_error();
	if (!(ge = sema_named(&a, "group"))) {
		diag_error(s->diag, l, "'swizzle2d' needs 'group:', the number of "
			   "row tiles per group (for example group: 8)");
		return sv_error();
	}
	pid = value_arg(s, a.pos[0], name, "the program index");
	m = value_arg(s, a.pos[1], name, "the number of row tiles");
	n = value_arg(s, a.pos[2], name, "the number of column tiles");
	g = value_arg(s, ge, name, "the group size");
	if (pid.kind == SV_ERROR || m.kind == SV_ERROR || n.kind == SV_ERROR ||
	    g.kind == SV_ERROR)
		return sv_error();
	if (!sv_is_scalar(&pid) || !sv_is_scalar(&m) || !sv_is_scalar(&n) ||
	    !sv_is_scalar(&g) || !ty_is_int(pid.ty) || !ty_is_int(m.ty) ||
	    !ty_is_int(n.ty) || !ty_is_int(g.ty)) {
		diag_error(s->diag, l, "'swizzle2d' takes scalar integers");
		return sv_error();
	}
	/* groups of `g` tile rows, walked column by column inside a group */
	width = sema_binary(s, BIN_MUL, g, n, l);
	gid = sema_binary(s, BIN_DIV, pid, width, l);
	first = sema_binary(s, BIN_MUL, gid, g, l);
	gsize = sema_binary(s, BIN_SUB, m, first, l);
	{
		SVal lt = sema_binary(s, BIN_LT, gsize, g, l);

		if (lt.kind == SV_ERROR)
			return lt;
		if (lt.is_const && !lt.v)
			gsize = lt.cval.i ? gsize : settle(s, g);
		else {
			Type *et = sema_promote(s, &gsize, &g, l);
			SVal gg = sema_convert(s, g, et, l), gs = sema_convert(s, gsize, et, l);

			if (!et || !mat(s, &gg) || !mat(s, &gs) || !mat(s, &lt))
				return sv_error();
			gsize = sv_value(et, ig_op3(s, OP_SELECT, et, lt.v, gs.v,
						    gg.v, l), l);
		}
	}
	inw = sema_binary(s, BIN_REM, pid, width, l);
	pm = sema_binary(s, BIN_ADD, first, sema_binary(s, BIN_REM, inw, gsize, l), l);
	pn = sema_binary(s, BIN_DIV, inw, gsize, l);
	if (pm.kind == SV_ERROR || pn.kind == SV_ERROR)
		return sv_error();
	r = (SVal){ .kind = SV_TUPLE, .nelems = 2, .loc = l };
	r.elems = arena_alloc(s->arena, 2 * sizeof *r.elems);
	r.elems[0] = pm;
	r.elems[1] = pn;
	return r;
}

static SVal
bi_assert(Sema *s, Ast *call, const char *name)
{
	CallArgs a;
	SVal c, m = { 0 };
	Op *op;

	if (!sema_args(s, call, name, 1, 2, NULL, &a) || !need_ir(s, call))
		return sv_error();
	c = value_arg(s, a.pos[0], name, "the condition");
	if (c.kind == SV_ERROR)
		return c;
	if (a.npos == 2 && (m = sema_expr(s, a.pos[1])).kind != SV_STRING) {
		diag_error(s->diag, a.pos[1]->loc, "the message of 'assert' must "
			   "be a string");
		return sv_error();
	}
	if (ty_elem(c.ty)->kind != TY_I1) {
		diag_error(s->diag, a.pos[0]->loc, "'assert' needs a boolean "
			   "condition, got %s", sv_describe(s, &c));
		return sv_error();
	}
	if (!mat(s, &c))
		return sv_error();
	op = ig_opn(s, OP_ASSERT, 1, &c.v, NULL, call->loc);
	attr_set_str(s->ir, &op->attrs, "msg", m.str ? m.str : "assertion failed");
	return (SVal){ .kind = SV_VOID };
}

/* ---- the table -------------------------------------------------------------------- */

SVal sema_async_builtin(Sema *s, Ast *call, const char *name);

static const struct {
	const char *name;
	BuiltinFn fn;
} builtins[] = {
	{ "program_id", bi_program_id }, { "num_programs", bi_program_id },
	{ "range", bi_range }, { "zeros", bi_full }, { "full", bi_full },
	{ "load", bi_load }, { "store", bi_store }, { "where", bi_where },
	{ "exp", bi_math }, { "exp2", bi_math }, { "log", bi_math },
	{ "log2", bi_math }, { "sqrt", bi_math }, { "rsqrt", bi_math },
	{ "sin", bi_math }, { "cos", bi_math }, { "tanh", bi_math },
	{ "erf", bi_math }, { "sigmoid", bi_math }, { "floor", bi_math },
	{ "ceil", bi_math }, { "abs", bi_math }, { "fma", bi_fma },
	{ "cdiv", bi_cdiv }, { "min", bi_minmax }, { "max", bi_minmax },
	{ "sum", bi_reduce }, { "prod", bi_reduce }, { "argmax", bi_reduce },
	{ "argmin", bi_reduce }, { "dot", bi_dot }, { "trans", bi_trans },
	{ "reshape", bi_reshape }, { "expand_dims", bi_expand_dims },
	{ "broadcast_to", bi_broadcast_to }, { "bitcast", bi_bitcast },
	{ "atomic_add", bi_atomic }, { "atomic_max", bi_atomic },
	{ "atomic_min", bi_atomic }, { "atomic_xchg", bi_atomic },
	{ "atomic_and", bi_atomic }, { "atomic_or", bi_atomic },
	{ "atomic_xor", bi_atomic }, { "atomic_cas", bi_atomic },
	{ "swizzle2d", bi_swizzle2d }, { "assert", bi_assert },
	/* async.c */
	{ "wait", sema_async_builtin }, { "arrive", sema_async_builtin },
	{ "expect_bytes", sema_async_builtin },
	{ "fence_async_shared", sema_async_builtin },
	{ "sync_threads", sema_async_builtin },
	{ "tma_load", sema_async_builtin }, { "tma_store", sema_async_builtin },
	{ "tma_store_wait", sema_async_builtin },
	{ "cp_async", sema_async_builtin },
	{ "cp_async_commit", sema_async_builtin },
	{ "cp_async_wait", sema_async_builtin },
	{ "dot_async", sema_async_builtin }, { "dot_wait", sema_async_builtin },
	{ "cluster_rank", sema_async_builtin },
	{ "cluster_sync", sema_async_builtin },
	{ "replica", sema_async_builtin }, { "tiles", sema_async_builtin },
};

bool
sema_is_builtin(const char *name)
{
	size_t i;

	for (i = 0; i < countof(builtins); i++)
		if (strcmp(builtins[i].name, name) == 0)
			return true;
	return false;
}

bool
sema_builtin(Sema *s, const char *name, Ast *call, SVal *out)
{
	size_t i;

	for (i = 0; i < countof(builtins); i++)
		if (strcmp(builtins[i].name, name) == 0) {
			*out = builtins[i].fn(s, call, builtins[i].name);
			return true;
		}
	return false;
}

/* ---- methods ------------------------------------------------------------------ */

SVal sema_pipe_method(Sema *s, Ast *e, SVal obj);

static SVal
method_to(Sema *s, Ast *e, SVal x)
{
	CallArgs a;
	Type *to;

	if (!sema_args(s, e, "to", 1, 1, NULL, &a))
		return sv_error();
	if (!(to = type_arg(s, a.pos[0], "to")))
		return sv_error();
	if (x.kind != SV_VALUE || ty_is_ptr(x.ty)) {
		diag_error(s->diag, e->loc, "'.to()' converts numbers, not %s",
			   sv_describe(s, &x));
		return sv_error();
	}
	x.weak = false;  /* an explicit conversion: no range check */
	return sema_convert(s, x, to, e->loc);
}

SVal
sema_method(Sema *s, Ast *e)
{
	SVal x = sema_expr(s, e->a);

	if (x.kind == SV_ERROR)
		return x;
	if (x.kind == SV_PIPE)
		return sema_pipe_method(s, e, x);
	if (strcmp(e->name, "to") == 0)
		return method_to(s, e, x);
	diag_error(s->diag, e->loc, "%s has no method '%s'", sv_describe(s, &x),
		   e->name);
	return sv_error();
}
