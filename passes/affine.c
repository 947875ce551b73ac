/*
 * affine.c: tiles of pointers that are boxes of a 2-D tensor, for
 * pipeline-loads' TMA path.
 *
 * A 2-D pointer tile is a box of rows x cols of a tensor when it is
 *
 *   base + (start0 + range(rows))[:, None] * stride0
 *        + (start1 + range(cols))[None, :] * stride1
 *
 * with base a pointer and every start and stride a scalar (broadcasts,
 * splats, reshapes and expand_dims around the pieces, in any order of the
 * adds).  Its mask is the tensor's bounds when it is
 *
 *   (start0 + range(rows))[:, None] < dim0 & (start1 + range(cols))[None, :] < dim1
 *
 * over the same indices.  Then a TMA copy of the box at [start0, start1]
 * from a tensor map of dims [dim0, dim1] and strides [stride0, stride1 =
 * 1] reads the same elements and zero-fills the masked ones.
 */
#include "passes/passes.h"

/* A tile of ints or pointers of rank <= 2 in that form: a sum of at most
 * one base pointer, one scalar offset and per dim (start + range) *
 * stride. */
typedef struct Lin {
	int rank;
	Value base;            /* a scalar pointer, or 0 */
	Value off;             /* a scalar added to every element, or 0 */
	struct {
		bool on;
		Value start;   /* 0: zero */
		Value stride;  /* 0: one */
	} d[2];
} Lin;

static bool lin(Func *f, Value v, Lin *out, int depth);

static bool
scalar(Func *f, Value v)
{
	return ty_is_scalar_kind(ir_type(f, v)->kind) ||
	       ir_type(f, v)->kind == TY_PTR;
}

/* The one dim term of a 1-D index tile x with stride one and no offset:
 * its dim, else -1. */
static int
unit_dim(const Lin *x)
{
	int d, found = -1;

	if (x->base || x->off)
		return -1;
	for (d = 0; d < x->rank; d++)
		if (x->d[d].on) {
			if (found >= 0 || x->d[d].stride)
				return -1;
			found = d;
		}
	return found;
}

/* Only a scalar offset: no base, no dims. */
static bool
only_off(const Lin *x)
{
	return x->off && !x->base && !x->d[0].on && !x->d[1].on;
}

static bool
add_lin(Lin *r, const Lin *a, const Lin *b)
{
	int d, u;

	/* (x + range): x is the start of range's dim */
	if (only_off(a) && !only_off(b)) {
		const Lin *x = a;

		a = b;
		b = x;
	}
	*r = *a;
	if (only_off(b) && (u = unit_dim(a)) >= 0 && !a->d[u].start) {
		r->d[u].start = b->off;
		return true;
	}
	if (b->base) {
		if (r->base)
			return false;
		r->base = b->base;
	}
	if (b->off) {
		if (r->off)
			return false;
		r->off = b->off;
	}
	for (d = 0; d < 2; d++)
		if (b->d[d].on) {
			if (r->d[d].on)
				return false;
			r->d[d] = b->d[d];
		}
	return true;
}

static bool
lin(Func *f, Value v, Lin *out, int depth)
{
	Type *t = ir_type(f, v);
	Op *op = ir_val(f, v)->def;
	Lin a, b;
	int d;

	memset(out, 0, sizeof *out);
	if (depth > 32 || !op)
		return false;
	out->rank = t->kind == TY_TILE ? t->rank : 0;
	if (out->rank > 2)
		return false;
	switch (op->kind) {
	case OP_SPLAT:
		if (!scalar(f, op->opnds[0]))
			return false;
		if (ir_type(f, op->opnds[0])->kind == TY_PTR)
			out->base = op->opnds[0];
		else
			out->off = op->opnds[0];
		return true;
	case OP_RANGE:
		if (out->rank != 1 || attr_int(&op->attrs, "start", -1) != 0)
			return false;
		out->d[0].on = true;
		return true;
	case OP_ADD: case OP_PTR_ADD:
		if (!lin(f, op->opnds[0], &a, depth + 1) ||
		    !lin(f, op->opnds[1], &b, depth + 1) || !add_lin(out, &a, &b))
			return false;
		out->rank = t->rank;
		return true;
	case OP_MUL: {
		/* (start + range) * splat(stride), either order */
		int u;

		if (!lin(f, op->opnds[0], &a, depth + 1) ||
		    !lin(f, op->opnds[1], &b, depth + 1))
			return false;
		if (unit_dim(&a) < 0) {
			Lin x = a;

			a = b;
			b = x;
		}
		if ((u = unit_dim(&a)) < 0 || b.base || !b.off)
			return false;
		for (d = 0; d < 2; d++)
			if (b.d[d].on)
				return false;
		*out = a;
		out->d[u].stride = b.off;
		out->rank = t->rank;
		return true;
	}
	case OP_BROADCAST:
		if (!lin(f, op->opnds[0], out, depth + 1))
			return false;
		out->rank = t->rank;
		return true;
	case OP_RESHAPE: case OP_EXPAND_DIMS: {
		Type *at = ir_type(f, op->opnds[0]);
		int to = -1;

		if (!lin(f, op->opnds[0], &a, depth + 1))
			return false;
		if (at->kind != TY_TILE || at->rank != 1 || t->rank != 2)
			return false;
		/* [n] to [n, 1] or [1, n] */
		for (d = 0; d < 2; d++)
			if (t->shape[d] == at->shape[0] && t->shape[1 - d] == 1)
				to = d;
		if (to < 0)
			return false;
		*out = a;
		out->rank = 2;
		out->d[0].on = out->d[1].on = false;
		out->d[to] = a.d[0];
		return true;
	}
	default:
		return false;
	}
}

bool
affine_box(Func *f, Value ptr, AffineBox *out)
{
	Type *t = ir_type(f, ptr);
	Lin l;
	int d;

	if (t->kind != TY_TILE || t->rank != 2 || !lin(f, ptr, &l, 0) ||
	    !l.base || l.off)
		return false;
	for (d = 0; d < 2; d++) {
		if (!l.d[d].on)
			return false;
		out->start[d] = l.d[d].start;
		out->stride[d] = l.d[d].stride;
	}
	out->base = l.base;
	return true;
}

/* A compare `idx < splat(bound)` whose idx is dim d's index of the box:
 * d, its bound. */
static int
bound_of(Func *f, Value cmp, const AffineBox *b, Value *bound)
{
	Op *c = ir_val(f, cmp)->def;
	Lin i, n;
	int d;

	while (c && c->kind == OP_BROADCAST)
		c = ir_val(f, c->opnds[0])->def;
	if (!c || c->kind != OP_CMP ||
	    strcmp(attr_str(&c->attrs, "pred") ? attr_str(&c->attrs, "pred") : "",
		   "lt") ||
	    !lin(f, c->opnds[0], &i, 0) || !lin(f, c->opnds[1], &n, 0) ||
	    (d = unit_dim(&i)) < 0)
		return -1;
	if (i.d[d].start != b->start[d] || n.base || !n.off || n.d[0].on ||
	    n.d[1].on)
		return -1;
	*bound = n.off;
	return d;
}

bool
affine_bounds(Func *f, Value mask, const AffineBox *b, Value bound[2])
{
	Op *a = ir_val(f, mask)->def;
	int d0, d1;

	while (a && a->kind == OP_BROADCAST)
		a = ir_val(f, a->opnds[0])->def;
	if (!a || a->kind != OP_AND)
		return false;
	d0 = bound_of(f, a->opnds[0], b, &bound[0]);
	d1 = bound_of(f, a->opnds[1], b, &bound[1]);
	if (d0 < 0 || d1 < 0 || d0 == d1)
		return false;
	if (d0 == 1) {
		Value x = bound[0];

		bound[0] = bound[1];
		bound[1] = x;
	}
	return true;
}
