/*
 * axis.c: axis analysis of integer and pointer values.
 *
 * For every value, per dim of its shape: contiguity (runs of elements
 * that increase by 1 along the dim), constancy (runs of equal elements),
 * and the divisibility of the first element of every run (a power of two;
 * bytes for pointers); plus the value when it is a known constant.  Loads
 * and stores use it to choose vector widths: `program_id(0) * BLOCK +
 * range(BLOCK)` is contiguous over BLOCK with divisibility BLOCK, so
 * `x + offs` (x aligned to 16 bytes) allows 16-byte vectors.
 *
 * The analysis runs twice.  Without assumptions, pointer parameters are
 * aligned to their element size and integer parameters are unknown.  The
 * fast path assumes pointer parameters aligned to 16 bytes, integer
 * parameters divisible by the elements of 16 bytes of the kernel's
 * smallest global element type (8 for bf16: what a 16-byte vector of any
 * of its accesses, or a tensor map's stride, needs), and the strides
 * that multiply an index contiguous along the innermost dim equal to 1
 * (axis_pick_assumptions).
 * Each fact records the assumptions it used (`deps`); a memory access
 * whose fast-path vector is wider is guarded at run time by exactly
 * those (codegen's cg_guard), so both paths are always correct.
 */
#include <string.h>

#include "ir.h"

enum { AX_BIG = 1 << 30 };

typedef struct AxCtx {
	Func *f;
	Axis *ax;
	const Assume *as;
} AxCtx;

static int
rank_of(Type *t)
{
	return t->kind == TY_TILE ? t->rank : 0;
}

/* The largest power of 2 dividing v (in two's complement, that of |v|,
 * INT64_MIN's included); AX_BIG for 0. */
static int64_t
lowbit(int64_t v)
{
	uint64_t u = (uint64_t)v;

	if (u == 0)
		return AX_BIG;
	u &= -u;
	return u > (uint64_t)AX_BIG ? AX_BIG : (int64_t)u;
}

static void
ax_default(Axis *a, Type *t)
{
	int d;

	memset(a, 0, sizeof *a);
	a->div = 1;
	(void)t;
	for (d = 0; d < TY_MAX_RANK; d++)
		a->contig[d] = a->cnst[d] = 1;
}

/* A uniform value (a scalar splat over `t`'s shape). */
static void
ax_uniform(Axis *a, Type *t, int64_t div)
{
	int d;

	ax_default(a, t);
	a->div = div;
	if (t->kind == TY_TILE)
		for (d = 0; d < t->rank; d++)
			a->cnst[d] = t->shape[d];
}

static void
ax_param(AxCtx *c, Value v, int idx)
{
	Axis *a = &c->ax[v];
	Type *t = ir_type(c->f, v);
	uint64_t bit = idx < 64 ? 1ull << idx : 0;

	ax_default(a, t);
	if (t->kind == TY_PTR) {
		a->div = MAX(1, ty_bytes(t->elem));
		if (c->as->align & bit) {
			a->div = c->as->bytes ? c->as->bytes : 16;
			a->deps = bit;
		}
	} else if (ty_is_int(t)) {
		if (c->as->eq1 & bit) {
			a->known = 1;
			a->has_known = true;
			a->deps = bit;
		} else if (c->as->div & bit) {
			a->div = c->as->divisor;
			a->deps = bit;
		}
	}
}

/* The divisibility of x's elements that start r's runs: x's own where
 * r keeps x's runs, else 1 (a run of x holds start + 1, start + 2, ...,
 * which the result's shorter runs start at too). */
static int64_t
run_div(const Axis *r, const Axis *x, int rank)
{
	int d;

	for (d = 0; d < rank; d++)
		if (r->contig[d] < x->contig[d])
			return 1;
	return x->div;
}

static void
add_sub(Axis *r, const Axis *a, const Axis *b, int rank, bool sub)
{
	int d;

	for (d = 0; d < rank; d++) {
		int64_t c1 = MIN(a->contig[d], b->cnst[d]);
		int64_t c2 = sub ? 1 : MIN(b->contig[d], a->cnst[d]);

		r->contig[d] = MAX(c1, c2);
		r->cnst[d] = MIN(a->cnst[d], b->cnst[d]);
	}
	/* runs of the result shorter than an operand's start inside them
	 * (range(4) + range(4) is 0, 2, 4, 6: runs of 1 from 2) */
	r->div = MIN(run_div(r, a, rank), run_div(r, b, rank));
	if (a->has_known && b->has_known) {
		r->known = sub ? a->known - b->known : a->known + b->known;
		r->has_known = true;
		r->div = lowbit(r->known);
	}
}

static void
mul(Axis *r, const Axis *a, const Axis *b, int rank)
{
	int d;

	for (d = 0; d < rank; d++) {
		r->cnst[d] = MIN(a->cnst[d], b->cnst[d]);
		if (b->has_known && b->known == 1)
			r->contig[d] = a->contig[d];
		else if (a->has_known && a->known == 1)
			r->contig[d] = b->contig[d];
	}
	r->div = MIN(run_div(r, a, rank) * run_div(r, b, rank), AX_BIG);
	if (a->has_known && b->has_known) {
		r->known = a->known * b->known;
		r->has_known = true;
		r->div = lowbit(r->known);
	}
}

/* The divisibility of every element of x: its run starts' where every
 * element starts a run (no dim has runs longer than 1), else 1. */
static int64_t
elem_div(const Axis *x, int rank)
{
	int d;

	for (d = 0; d < rank; d++)
		if (x->contig[d] > 1)
			return 1;
	return x->div;
}

/* Aligned blocks of g elements along dim d on which x (contiguous) is
 * start, start + 1, ..., start + g - 1 with start a multiple of g, and
 * k (constant) a multiple of g: x < k and x >= k hold on all of a block
 * or none (both sides multiples of g, no multiple in between).  x <= k,
 * x > k, x == k and x != k change inside a block.  The g for dim d. */
static int64_t
cmp_block(const Axis *x, const Axis *k, int rank, int d)
{
	int e;

	for (e = 0; e < rank; e++)
		if (e != d && x->contig[e] > 1)
			return 1;  /* x's run starts: not every run along d */
	if (k->cnst[d] < MIN(x->contig[d], x->div))
		return 1;
	return MIN(MIN(x->contig[d], x->div), elem_div(k, rank));
}

/* (a op b) for a compare: constant where both sides are, and over the
 * blocks of cmp_block where a contiguous side is below a constant one
 * (offs < n, or n > offs). */
static void
cmp(Axis *r, const Axis *a, const Axis *b, int rank, const char *pred)
{
	bool lt = pred && (!strcmp(pred, "lt") || !strcmp(pred, "ge"));
	bool gt = pred && (!strcmp(pred, "gt") || !strcmp(pred, "le"));
	int d;

	for (d = 0; d < rank; d++) {
		int64_t c = MIN(a->cnst[d], b->cnst[d]);

		if (lt)
			c = MAX(c, cmp_block(a, b, rank, d));
		if (gt)
			c = MAX(c, cmp_block(b, a, rank, d));
		r->cnst[d] = c;
	}
}

static void
div_rem(Axis *r, const Axis *a, const Axis *b, int rank, bool rem)
{
	int64_t k = b->has_known ? b->known : 0;
	int d;

	if (k <= 0 || (k & (k - 1)))
		return;
	for (d = 0; d < rank; d++) {
		int64_t blk = MIN(MIN(a->contig[d], k), a->div);

		if (rem) {
			r->contig[d] = a->div >= k ? MIN(a->contig[d], k) : 1;
			r->cnst[d] = a->cnst[d];
		} else {
			r->cnst[d] = MAX(a->cnst[d], blk);
		}
	}
	/* x / k: the quotients of a's run starts, where r keeps its runs
	 * (range(16) / 4 is 0, 0, 0, 0, 1, ...: every element starts a run
	 * of 1, and 1 is not a multiple of range's 2^30 / 4) */
	r->div = rem ? (a->div >= k ? AX_BIG : 1)
		     : MAX(1, run_div(r, a, rank) / k);
}

static void
ptr_add(AxCtx *c, Op *op, Axis *r, const Axis *p, const Axis *o, int rank)
{
	Type *pt = ty_elem(ir_type(c->f, op->res[0]));
	int64_t es = MAX(1, ty_bytes(pt->elem));
	int d;

	for (d = 0; d < rank; d++) {
		r->contig[d] = MAX(MIN(p->contig[d], o->cnst[d]),
				   MIN(o->contig[d], p->cnst[d]));
		r->cnst[d] = MIN(p->cnst[d], o->cnst[d]);
	}
	r->div = MIN(p->div, MIN(o->div * es, AX_BIG));
}

static int64_t
max_contig(const Axis *a, const Type *t)
{
	int64_t m = 1;
	int d;

	for (d = 0; t->kind == TY_TILE && d < t->rank; d++)
		m = MAX(m, a->contig[d]);
	return m;
}

/* Do the two shapes differ only in dims of 1? */
static bool
reshape_units(const Type *a, const Type *b)
{
	int i = 0, j = 0;

	for (;;) {
		while (i < a->rank && a->shape[i] == 1)
			i++;
		while (j < b->rank && b->shape[j] == 1)
			j++;
		if (i == a->rank || j == b->rank)
			return i == a->rank && j == b->rank;
		if (a->shape[i++] != b->shape[j++])
			return false;
	}
}

/* An aligned block: runs as long as the block allows; a block that
 * starts inside a run starts at a value the run's start does not tell. */
static void
extract(Op *op, Axis *r, const Axis *a, Type *at, Type *rt)
{
	const Attr *o = attr_find(&op->attrs, "offsets");
	int d;

	if (!o || o->kind != ATTR_INTS || o->ints.n != (uint32_t)rt->rank ||
	    at->kind != TY_TILE)
		return;
	r->div = a->div;
	r->known = a->known;
	r->has_known = a->has_known;
	for (d = 0; d < rt->rank; d++) {
		r->contig[d] = MIN(a->contig[d], rt->shape[d]);
		r->cnst[d] = MIN(a->cnst[d], rt->shape[d]);
		if (a->contig[d] > 0 && o->ints.v[d] % a->contig[d])
			r->div = 1;
	}
}

static void
shape_op(AxCtx *c, Op *op, Axis *r, const Axis *a)
{
	Func *f = c->f;
	Type *rt = ir_type(f, op->res[0]), *at = ir_type(f, op->opnds[0]);
	int d, ax, n = 0;
	const Attr *perm;

	r->div = a->div;
	r->known = a->known;
	r->has_known = a->has_known;
	switch (op->kind) {
	case OP_SPLAT:
		ax_uniform(r, rt, a->div);
		r->known = a->known;
		r->has_known = a->has_known;
		break;
	case OP_BROADCAST:
		for (d = 0; d < rt->rank; d++) {
			bool b = at->shape[d] == 1 && rt->shape[d] != 1;

			r->contig[d] = b ? 1 : a->contig[d];
			r->cnst[d] = b ? rt->shape[d] : a->cnst[d];
		}
		break;
	case OP_EXPAND_DIMS:
		ax = (int)attr_int(&op->attrs, "axis", 0);
		for (d = 0; d < rt->rank; d++) {
			if (d == ax) {
				r->contig[d] = r->cnst[d] = 1;
				continue;
			}
			r->contig[d] = a->contig[n];
			r->cnst[d] = a->cnst[n++];
		}
		break;
	case OP_TRANS:
		perm = attr_find(&op->attrs, "perm");
		for (d = 0; perm && d < rt->rank && d < (int)perm->ints.n; d++) {
			r->contig[d] = a->contig[perm->ints.v[d]];
			r->cnst[d] = a->cnst[perm->ints.v[d]];
		}
		break;
	default:  /* reshape */
		if (at->kind != TY_TILE || !rt->rank)
			break;
		if (reshape_units(at, rt)) {
			/* adds or drops dims of 1: the others keep their facts */
			for (d = 0; d < rt->rank; d++) {
				while (n < at->rank && at->shape[n] == 1)
					n++;
				if (rt->shape[d] == 1 || n >= at->rank)
					continue;
				r->contig[d] = a->contig[n];
				r->cnst[d] = a->cnst[n++];
			}
		} else if (rt->shape[rt->rank - 1] == at->shape[at->rank - 1]) {
			/* only the innermost dim's facts survive */
			r->contig[rt->rank - 1] = a->contig[at->rank - 1];
			r->cnst[rt->rank - 1] = a->cnst[at->rank - 1];
		}
		break;
	}
	/* runs cut shorter start inside a's runs too: their starts are
	 * known no better than as integers */
	if (at->kind == TY_TILE && max_contig(r, rt) < max_contig(a, at))
		r->div = 1;
}

/* An integer conversion: to i1 is x != 0; narrowing keeps the facts
 * modulo the width; widening keeps a run only where it cannot wrap (a
 * run of an i8 from 120 to 127 goes on at -128): runs no longer than
 * the divisibility of their starts end at a multiple of it, and the wrap
 * (2^7 for i8, 2^8 for u8) is one where that is at most the wrap. */
static void
cvt_int(Axis *r, const Axis *a, Type *to, Type *from, int rank)
{
	int nb = ty_bits(from), d;
	int64_t wrap;

	if (to->kind == TY_I1) {
		for (d = 0; d < rank; d++)
			r->cnst[d] = a->cnst[d];
		if (a->has_known) {
			r->known = a->known != 0;
			r->has_known = true;
		}
		return;
	}
	*r = *a;
	if (ty_bits(to) < 62)
		r->div = MIN(r->div, (int64_t)1 << ty_bits(to));
	if (ty_bits(to) <= nb || nb >= 62)
		return;
	wrap = (int64_t)1 << (ty_is_unsigned_kind(from->kind) || from->kind == TY_I1
			      ? nb : nb - 1);
	/* a run cut into single elements: its inner elements become starts,
	 * which are not multiples of the old starts' divisor */
	for (d = 0; d < rank; d++)
		if (a->contig[d] > MIN(a->div, wrap)) {
			r->contig[d] = 1;
			r->div = 1;
		}
}

/* Runs along two dims (x = r + c of a row and a column range): a start
 * along one is inside a run along the other, one more than its
 * neighbour, so the starts share no divisor. */
static void
runs_one_dim(Axis *r, Type *t, int rank)
{
	int d, n = 0;

	for (d = 0; d < rank && t->kind == TY_TILE; d++)
		n += MIN(r->contig[d], t->shape[d]) > 1;
	if (n > 1)
		r->div = 1;
}

static void axis_block(AxCtx *c, Block *b);

/* A loop's body, its carried integers that come in as a constant taken
 * to be it (the shift peel-rows carries, 0 in a fast entry); where one
 * goes out as anything else, the body again with those unknown. */
static void
carried_consts(AxCtx *c, Op *loop, Block *blk)
{
	Op *y = blk->last;
	uint32_t j, n = blk->nargs - 1;
	bool any = false, again = false;

	for (j = 0; j < n && 3 + j < loop->nopnds; j++) {
		const Axis *in = &c->ax[loop->opnds[3 + j]];
		Value a = blk->args[j + 1];

		if (in->has_known && ty_is_int(ir_type(c->f, a)) &&
		    ir_type(c->f, a)->kind != TY_TILE) {
			c->ax[a] = *in;
			any = true;
		}
	}
	axis_block(c, blk);
	if (!any || !y || y->kind != OP_YIELD)
		return;
	do {
		/* each round makes one more unknown, or ends */
		again = false;
		for (j = 0; j < n && j < y->nopnds && 3 + j < loop->nopnds; j++) {
			Axis *a = &c->ax[blk->args[j + 1]];
			const Axis *out = &c->ax[y->opnds[j]];

			if (!a->has_known || (out->has_known && out->known == a->known))
				continue;
			ax_default(a, ir_type(c->f, blk->args[j + 1]));
			again = true;
		}
		if (again)
			axis_block(c, blk);
	} while (again);
	for (j = 0; j < n && j < y->nopnds && j < loop->nres; j++) {
		Axis *a = &c->ax[blk->args[j + 1]];

		if (a->has_known) {
			a->deps |= c->ax[y->opnds[j]].deps;
			c->ax[loop->res[j]] = *a;
		}
	}
}

static void
axis_op(AxCtx *c, Op *op)
{
	Func *f = c->f;
	Axis *r, *a, *b;
	Type *rt;
	int rank;
	uint32_t i;
	uint64_t deps = 0;

	for (i = 0; i < op->nres; i++)
		ax_default(&c->ax[op->res[i]], ir_type(f, op->res[i]));
	for (i = 0; i < op->nregions; i++) {
		Block *blk = op->regions[i];
		uint32_t j;

		for (j = 0; j < blk->nargs; j++)
			ax_default(&c->ax[blk->args[j]],
				   ir_type(f, blk->args[j]));
		if (op->kind == OP_FOR && blk->nargs > 0 && op->nopnds >= 3) {
			Axis *iv = &c->ax[blk->args[0]];

			iv->div = MIN(c->ax[op->opnds[0]].div,
				      c->ax[op->opnds[2]].div);
			iv->deps = c->ax[op->opnds[0]].deps |
				   c->ax[op->opnds[2]].deps;
			carried_consts(c, op, blk);
			continue;
		}
		axis_block(c, blk);
	}
	if (op->nres != 1)
		return;
	r = &c->ax[op->res[0]];
	rt = ir_type(f, op->res[0]);
	rank = rank_of(rt);
	a = op->nopnds > 0 ? &c->ax[op->opnds[0]] : NULL;
	b = op->nopnds > 1 ? &c->ax[op->opnds[1]] : NULL;
	for (i = 0; i < op->nopnds; i++)
		deps |= c->ax[op->opnds[i]].deps;
	switch (op->kind) {
	case OP_CONST: {
		const Attr *v = attr_find(&op->attrs, "value");

		if (v && v->kind == ATTR_INT && ty_is_int(rt)) {
			ax_uniform(r, rt, lowbit(v->i));
			r->known = v->i;
			r->has_known = true;
		}
		break;
	}
	case OP_RANGE:
		r->contig[0] = rt->shape[0];
		r->div = lowbit(attr_int(&op->attrs, "start", 0));
		break;
	case OP_ADD: add_sub(r, a, b, rank, false); break;
	case OP_SUB: add_sub(r, a, b, rank, true); break;
	case OP_MUL: mul(r, a, b, rank); break;
	case OP_DIV: div_rem(r, a, b, rank, false); break;
	case OP_REM: div_rem(r, a, b, rank, true); break;
	case OP_SHL:
		/* the amount is taken modulo the width (x << 15 of a u8 is
		 * x << 7) */
		if (b->has_known && ty_is_int(ty_elem(rt))) {
			int64_t s = b->known & (ty_bits(ty_elem(rt)) - 1);

			for (i = 0; i < (uint32_t)rank; i++)
				r->cnst[i] = a->cnst[i];
			if (s < 30)
				r->div = MIN(run_div(r, a, rank) << s, AX_BIG);
		}
		break;
	case OP_CMP: cmp(r, a, b, rank, attr_str(&op->attrs, "pred")); break;
	case OP_AND: case OP_OR: case OP_XOR:
		for (i = 0; i < (uint32_t)rank; i++)
			r->cnst[i] = MIN(a->cnst[i], b->cnst[i]);
		break;
	case OP_NOT:
		for (i = 0; i < (uint32_t)rank; i++)
			r->cnst[i] = a->cnst[i];
		break;
	case OP_SELECT: {
		const Axis *e = &c->ax[op->opnds[2]];

		for (i = 0; i < (uint32_t)rank; i++)
			r->cnst[i] = MIN(a->cnst[i], MIN(b->cnst[i], e->cnst[i]));
		/* each element is one of the two arms' */
		r->div = MIN(elem_div(b, rank), elem_div(e, rank));
		if (b->has_known && e->has_known && b->known == e->known) {
			r->known = b->known;
			r->has_known = true;
		}
		break;
	}
	case OP_MISALIGN:
		/* 0 where every pointer is a multiple of bytes */
		if (elem_div(a, rank) >= attr_int(&op->attrs, "bytes", 16)) {
			ax_uniform(r, rt, AX_BIG);
			r->known = 0;
			r->has_known = true;
		} else {
			for (i = 0; i < (uint32_t)rank; i++)
				r->cnst[i] = a->cnst[i];
		}
		break;
	case OP_CVT:
		if (ty_is_int(rt) && ty_is_int(ir_type(f, op->opnds[0])))
			cvt_int(r, a, ty_elem(rt), ty_elem(ir_type(f, op->opnds[0])), rank);
		break;
	case OP_PTR_ADD: ptr_add(c, op, r, a, b, rank); break;
	case OP_EXTRACT_SLICE:
		extract(op, r, a, ir_type(f, op->opnds[0]), rt);
		break;
	case OP_SPLAT: case OP_BROADCAST: case OP_EXPAND_DIMS:
	case OP_RESHAPE: case OP_TRANS:
		shape_op(c, op, r, a);
		break;
	default:
		break;
	}
	r->deps |= deps;
	runs_one_dim(r, rt, rank);
}

static void
axis_block(AxCtx *c, Block *b)
{
	Op *op;

	for (op = b->first; op; op = op->next)
		axis_op(c, op);
}

Axis *
axis_compute(Func *f, Arena *a, const Assume *as)
{
	AxCtx c = { .f = f, .as = as };
	uint32_t i;

	c.ax = arena_alloc(a, f->vals.n * sizeof *c.ax);
	for (i = 0; i < f->vals.n; i++)
		ax_default(&c.ax[i], f->vals.v[i].ty ? f->vals.v[i].ty
			   : ty_scalar(f->mod->ctx, TY_I32));
	for (i = 0; i < f->body->nargs; i++)
		ax_param(&c, f->body->args[i], (int)i);
	axis_block(&c, f->body);
	return c.ax;
}

/* The parameter a value is a (splat, broadcast, ...) copy of, or -1. */
static int
param_of(Func *f, Value v)
{
	uint32_t i;

	for (;;) {
		ValInfo *vi = ir_val(f, v);

		if (!vi->def) {
			for (i = 0; i < f->body->nargs; i++)
				if (f->body->args[i] == v)
					return (int)i;
			return -1;
		}
		switch (vi->def->kind) {
		case OP_SPLAT: case OP_BROADCAST: case OP_EXPAND_DIMS:
		case OP_CVT:
			v = vi->def->opnds[0];
			break;
		default:
			return -1;
		}
	}
}

typedef struct Pick {
	Func *f;
	const Axis *gen;
	uint64_t eq1;
	Op *cols[32];  /* muls whose dims become leading dims: row offsets */
	int ncols;
} Pick;

/* The muls that v is a sum (or conversion) of. */
static void
mark_cols(Pick *p, Value v, int depth)
{
	Op *d = ir_val(p->f, v)->def;

	if (!d || depth > 8)
		return;
	if (d->kind == OP_MUL) {
		if (p->ncols < (int)(sizeof p->cols / sizeof *p->cols))
			p->cols[p->ncols++] = d;
		return;
	}
	if (d->kind == OP_ADD || d->kind == OP_SUB) {
		mark_cols(p, d->opnds[0], depth + 1);
		mark_cols(p, d->opnds[1], depth + 1);
	} else if (d->kind == OP_CVT) {
		mark_cols(p, d->opnds[0], depth + 1);
	}
}

/* `(r * stride)[:, None]`: a product that a reshape or expand_dims turns
 * into a column (its last dim of 1) offsets rows; its stride is not an
 * inner one. */
static void
cols_op(Op *op, void *ud)
{
	Pick *p = ud;
	Type *t, *a;

	if ((op->kind != OP_RESHAPE && op->kind != OP_EXPAND_DIMS) ||
	    op->nres != 1 || !op->nopnds)
		return;
	t = ir_type(p->f, op->res[0]);
	a = ir_type(p->f, op->opnds[0]);
	if (t->kind == TY_TILE && a->kind == TY_TILE && t->rank > a->rank &&
	    t->shape[t->rank - 1] == 1 && a->shape[a->rank - 1] > 1)
		mark_cols(p, op->opnds[0], 0);
}

static void
pick_op(Op *op, void *ud)
{
	Pick *p = ud;
	Type *t;
	int i, last;

	if (op->kind != OP_MUL || op->nres != 1)
		return;
	for (i = 0; i < p->ncols; i++)
		if (p->cols[i] == op)
			return;
	t = ir_type(p->f, op->res[0]);
	if (t->kind != TY_TILE || !ty_is_int(t))
		return;
	last = t->rank - 1;
	for (i = 0; i < 2; i++) {
		int prm = param_of(p->f, op->opnds[i]);
		const Axis *other = &p->gen[op->opnds[1 - i]];

		if (prm >= 0 && prm < 64 && other->contig[last] > 1)
			p->eq1 |= 1ull << prm;
	}
}

bool
ax_same(const Axis *a, const Axis *b)
{
	return memcmp(a->contig, b->contig, sizeof a->contig) == 0 &&
	       memcmp(a->cnst, b->cnst, sizeof a->cnst) == 0 &&
	       a->div == b->div && a->has_known == b->has_known &&
	       (!a->has_known || a->known == b->known);
}

Assume
axis_restrict(const Assume *as, uint64_t d)
{
	Assume r = *as;

	r.align &= d;
	r.div &= d;
	r.eq1 &= d;
	return r;
}

Assume
axis_at_bytes(const Assume *as, int64_t bytes)
{
	Assume r = *as;

	r.bytes = bytes;
	r.divisor = MAX(1, as->divisor * bytes / 16);
	return r;
}

void
axis_pick_assumptions(Func *f, const Axis *gen, Assume *as)
{
	Pick p = { .f = f, .gen = gen };
	uint32_t i;

	memset(as, 0, sizeof *as);
	ir_walk(f, cols_op, &p);
	ir_walk(f, pick_op, &p);
	/* 16 bytes of the smallest global element type: what its vectors
	 * and tensor maps need (16 without pointers) */
	for (i = 0; i < f->body->nargs; i++) {
		Type *t = ir_type(f, f->body->args[i]);

		if (t->kind == TY_PTR && t->as != AS_SHARED)
			as->divisor = MAX(as->divisor,
					  MAX(2, 16 / MAX(1, ty_bytes(t->elem))));
	}
	if (!as->divisor)
		as->divisor = 16;
	for (i = 0; i < f->body->nargs && i < 64; i++) {
		Type *t = ir_type(f, f->body->args[i]);
		uint64_t bit = 1ull << i;

		if (t->kind == TY_PTR && t->as != AS_SHARED)
			as->align |= bit;
		else if (ty_is_int_kind(t->kind) && t->kind != TY_I1 &&
			 (p.eq1 & bit))
			as->eq1 |= bit;
		else if (ty_is_int_kind(t->kind) && t->kind != TY_I1)
			as->div |= bit;
	}
}
