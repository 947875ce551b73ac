/*
 * peel_rows.c: the peel-rows pass (docs/internals.md, "peel-rows").
 *
 * A row kernel's tile holds columns c = range(B) of each row at slots
 * 0 .. B - 1; on rows that do not start at a multiple of 16 bytes none of
 * its vectors is aligned.  The pass shifts the columns within the tile: a
 * row whose first element lies s elements past a 16-byte boundary holds
 * column j at slot j + s, so that its loads start at that boundary (the
 * slots below s are masked off like those past the row's end).  Every
 * access of the tile takes the same shift, and the ops between them are
 * elementwise or reduce along the columns, which see the same values
 * (the columns masked off included: as many slots as before hold
 * `other`), in another order.  The shift is 0 where a bound on the
 * columns is above B - s (the row would not fit).
 */
#include "passes/passes.h"

enum { K_NONE, K_IDX, K_MASK, K_PTR, K_DATA };

typedef struct Peel {
	Func *f;
	IrCtx *c;
	Arena *a;
	Op *range;       /* c = range(0, B) */
	int64_t B;
	uint32_t n;      /* values when the pass began */
	uint8_t *kind;   /* K_* of each value */
	Value *lifted;   /* each value at the shape S, once made */
	Vec(Value) bounds;  /* the X of every `c < X` */
	Block *blk;      /* the block of every access and data op */
	Vec(Op *) acc;   /* accesses, in the block's order */
	Type *S;         /* the shape of the accesses (i32 tile of it) */
	Value shift;     /* s at S */
	Value col;       /* c - s at S */
	Value zero;      /* 0 at S */
	Op *at;          /* where new ops go */
} Peel;

static Type *
shape_of(Peel *p, Type *elem)
{
	return ty_like(p->c, p->S, elem);
}

static Value
emit(Peel *p, OpKind k, Type *t, uint32_t n, Value a, Value b)
{
	Builder bd = { .fn = p->f, .before = p->at, .loc = p->at->loc };
	Value ops[2] = { a, b };

	return b_op(&bd, k, n, ops, t)->res[0];
}

static Value
emit3(Peel *p, OpKind k, Type *t, Value a, Value b, Value c)
{
	Builder bd = { .fn = p->f, .before = p->at, .loc = p->at->loc };
	Value ops[3] = { a, b, c };

	return b_op(&bd, k, 3, ops, t)->res[0];
}

static Value
cmp(Peel *p, const char *pred, Value a, Value b)
{
	Builder bd = { .fn = p->f, .before = p->at, .loc = p->at->loc };

	return b_cmp(&bd, pred, a, b);
}

/* The last dim's size of a tile; 1 for a scalar. */
static int64_t
last_dim(Type *t)
{
	return t->kind == TY_TILE ? t->shape[t->rank - 1] : 1;
}

/* Does t broadcast to S (same rank, each dim 1 or S's)? */
static bool
fits(Peel *p, Type *t)
{
	int d;

	if (t->kind != TY_TILE)
		return true;
	if (t->rank != p->S->rank)
		return false;
	for (d = 0; d < t->rank; d++)
		if (t->shape[d] != 1 && t->shape[d] != p->S->shape[d])
			return false;
	return true;
}

/* A value that does not depend on c, at the shape S. */
static Value
at_s(Peel *p, Value v)
{
	Type *t = ir_type(p->f, v), *to = shape_of(p, ty_elem(t));

	if (t == to)
		return v;
	if (t->kind != TY_TILE)
		return emit(p, OP_SPLAT, to, 1, v, 0);
	if (t->rank < p->S->rank) {
		int64_t sh[TY_MAX_RANK];
		int k = p->S->rank - t->rank, d;

		for (d = 0; d < p->S->rank; d++)
			sh[d] = d < k ? 1 : t->shape[d - k];
		t = ty_tile(p->c, ty_elem(t), p->S->rank, sh);
		v = emit(p, OP_RESHAPE, t, 1, v, 0);
		if (t == to)
			return v;
	}
	return emit(p, OP_BROADCAST, to, 1, v, 0);
}

/* A value that does not depend on c with the last dim of size 1: its
 * scalar or its tile before broadcasts along that dim.  0 when it has
 * none (it varies along the columns). */
static Value
row_value(Peel *p, Value v)
{
	for (;;) {
		Op *d = pass_def(p->f, v);

		if (last_dim(ir_type(p->f, v)) == 1)
			return v;
		if (!d || (d->kind != OP_BROADCAST && d->kind != OP_SPLAT))
			return 0;
		v = d->opnds[0];
	}
}

/* Is v (a value of the pass's start) a tile of the shape S? */
static bool
at_shape(Peel *p, Value v)
{
	Type *t = ir_type(p->f, v);

	return v < p->n && t == ty_like(p->c, p->S, ty_elem(t));
}

/* ---- which values depend on c, and how ---- */

static bool
indep(Peel *p, Value v)
{
	return v >= p->n || p->kind[v] == K_NONE;
}

/* A shape op that keeps c along the last dim, only adding unit dims or
 * broadcasting them. */
static bool
keeps_cols(Peel *p, Op *op)
{
	Type *a = ir_type(p->f, op->opnds[0]), *r = ir_type(p->f, op->res[0]);

	if (op->kind != OP_BROADCAST && op->kind != OP_RESHAPE &&
	    op->kind != OP_EXPAND_DIMS)
		return false;
	if (last_dim(a) != p->B || last_dim(r) != p->B)
		return false;
	return op->kind == OP_BROADCAST || ty_numel(a) == ty_numel(r);
}

static bool
elementwise(Op *op)
{
	return op_has(op, F_ELEM) || op->kind == OP_CMP ||
	       op->kind == OP_SELECT || op->kind == OP_CVT ||
	       op->kind == OP_BITCAST;
}

static void
add_bound(Peel *p, Value x)
{
	uint32_t i;

	for (i = 0; i < p->bounds.n; i++)
		if (p->bounds.v[i] == x)
			return;
	vec_push(p->a, &p->bounds, x);
}

static bool
in_block(Peel *p, Op *op)
{
	if (!p->blk)
		p->blk = op->parent;
	return op->parent == p->blk;
}

/* The kind of op's result given its operands' (op has a c-dependent
 * operand); false when c is used in a way the shift would change. */
static bool
classify(Peel *p, Op *op)
{
	Func *f = p->f;
	uint8_t k0 = op->nopnds ? p->kind[op->opnds[0]] : K_NONE;
	uint32_t i;
	const char *pred;

	if (op->nregions || op->nres > 1)
		return false;
	switch (op->kind) {
	case OP_BROADCAST: case OP_RESHAPE: case OP_EXPAND_DIMS:
		if (!keeps_cols(p, op))
			return false;
		p->kind[op->res[0]] = k0;
		return true;
	case OP_CMP:
		pred = attr_str(&op->attrs, "pred");
		if (k0 == K_IDX && indep(p, op->opnds[1]) && !strcmp(pred, "lt")) {
			add_bound(p, op->opnds[1]);
			p->kind[op->res[0]] = K_MASK;
			return true;
		}
		if (k0 == K_NONE && p->kind[op->opnds[1]] == K_IDX &&
		    !strcmp(pred, "gt")) {
			add_bound(p, op->opnds[0]);
			p->kind[op->res[0]] = K_MASK;
			return true;
		}
		break;
	case OP_AND:
		if ((k0 == K_MASK || k0 == K_NONE) &&
		    (p->kind[op->opnds[1]] == K_MASK || indep(p, op->opnds[1]))) {
			p->kind[op->res[0]] = K_MASK;
			return true;
		}
		return false;
	case OP_PTR_ADD:
		if (k0 == K_NONE && p->kind[op->opnds[1]] == K_IDX &&
		    row_value(p, op->opnds[0])) {
			p->kind[op->res[0]] = K_PTR;
			return true;
		}
		return false;
	case OP_LOAD:
		if (k0 != K_PTR || op->nopnds < 2 ||
		    p->kind[op->opnds[1]] != K_MASK ||
		    (op->nopnds > 2 && !indep(p, op->opnds[2])) ||
		    !in_block(p, op))
			return false;
		p->kind[op->res[0]] = K_DATA;
		return true;
	case OP_STORE:
		return k0 == K_PTR && op->nopnds == 3 &&
		       (p->kind[op->opnds[1]] == K_DATA || indep(p, op->opnds[1])) &&
		       p->kind[op->opnds[2]] == K_MASK && in_block(p, op) &&
		       last_dim(ir_type(f, op->opnds[0])) == p->B;
	case OP_REDUCE:
		/* along the columns: the same values in another order */
		if (k0 != K_DATA || !in_block(p, op) ||
		    attr_int(&op->attrs, "axis", -1) !=
			    ir_type(f, op->opnds[0])->rank - 1 ||
		    attr_str(&op->attrs, "kind")[0] == 'a')  /* argmax: an index */
			return false;
		return true;  /* the result does not depend on c */
	default:
		break;
	}
	/* data: elementwise over loaded values, and selects on masks */
	if (!elementwise(op) || !in_block(p, op))
		return false;
	for (i = 0; i < op->nopnds; i++) {
		uint8_t k = p->kind[op->opnds[i]];

		if (k == K_DATA || k == K_NONE || (k == K_MASK && i == 0 &&
						   op->kind == OP_SELECT))
			continue;
		return false;
	}
	p->kind[op->res[0]] = K_DATA;
	return true;
}

typedef struct Walk {
	Peel *p;
	bool ok;
} Walk;

static void
classify_op(Op *op, void *ud)
{
	Walk *w = ud;
	Peel *p = w->p;
	uint32_t i;

	if (!w->ok)
		return;
	if (op == p->range) {
		p->kind[op->res[0]] = K_IDX;
		return;
	}
	for (i = 0; i < op->nopnds; i++)
		if (!indep(p, op->opnds[i]))
			break;
	if (i == op->nopnds)
		return;
	if (!classify(p, op)) {
		w->ok = false;
		return;
	}
	if (op->kind == OP_LOAD || op->kind == OP_STORE) {
		vec_push(p->a, &p->acc, op);
	}
}

/* ---- the rewrite ---- */

static Value lift(Peel *p, Value v);

/* The index of op in its block. */
static uint32_t
position(Op *op)
{
	uint32_t i = 0;
	Op *o;

	for (o = op->parent->first; o && o != op; o = o->next)
		i++;
	return i;
}

/* Is v available before the op at position `first` of the block? */
static bool
before(Peel *p, Value v, uint32_t first)
{
	Op *d = pass_def(p->f, v);
	Op *o;

	if (!d)
		return true;
	for (o = d; o->parent && o->parent != p->blk; o = o->parent->parent)
		if (!o->parent->parent)
			return true;  /* outside the block */
	return o->parent != p->blk || position(o) < first;
}

/* The ptr_add under a pointer that depends on c (through shape ops). */
static Op *
ptr_def(Peel *p, Value v)
{
	Op *d = pass_def(p->f, v);

	while (d->kind != OP_PTR_ADD)
		d = pass_def(p->f, d->opnds[0]);
	return d;
}

/* The shift s of every row, c - s and 0 at the shape S, before the first
 * access: the anchor's misalignment where every bound allows it. */
static bool
make_shift(Peel *p, Op *anchor)
{
	IrCtx *c = p->c;
	Type *i32 = ty_scalar(c, TY_I32), *st, *xt;
	Value rb = row_value(p, ptr_def(p, anchor->opnds[0])->opnds[0]);
	Value s, ok = 0, room, x, cs;
	uint32_t first = position(p->acc.v[0]), i;

	if (!rb || !before(p, rb, first))
		return false;
	st = ty_like(c, ir_type(p->f, rb), i32);
	for (i = 0; i < p->bounds.n; i++) {
		x = row_value(p, p->bounds.v[i]);
		if (!x || !before(p, x, first))
			return false;
		xt = ir_type(p->f, x);
		if (ty_elem(xt) != i32 || (xt->kind == TY_TILE && xt != st))
			return false;
	}
	p->at = p->acc.v[0];
	s = emit(p, OP_MISALIGN, st, 1, rb, 0);
	attr_set_int(c, &pass_def(p->f, s)->attrs, "bytes", 16);
	/* the row fits: X <= B - s for every bound X */
	room = emit(p, OP_SUB, st, 2, pass_new_const(p->f, p->at, st,
				     (Num){ .i = p->B }), s);
	for (i = 0; i < p->bounds.n; i++) {
		Value le;

		x = row_value(p, p->bounds.v[i]);
		if (ir_type(p->f, x) != st)
			x = emit(p, OP_SPLAT, st, 1, x, 0);
		le = cmp(p, "le", x, room);
		ok = ok ? emit(p, OP_AND, ir_type(p->f, le), 2, ok, le) : le;
	}
	if (ok)
		s = emit3(p, OP_SELECT, st, ok, s,
			  pass_new_const(p->f, p->at, st, (Num){ .i = 0 }));
	p->shift = at_s(p, s);
	cs = at_s(p, p->range->res[0]);
	p->col = emit(p, OP_SUB, shape_of(p, i32), 2, cs, p->shift);
	p->zero = pass_new_const(p->f, p->at, shape_of(p, i32), (Num){ .i = 0 });
	return true;
}

/* v (a value that depends on c) at the shape S with the columns shifted,
 * made before p->at. */
static Value
lift(Peel *p, Value v)
{
	Op *d, *cl;
	Value *map = NULL, r;
	uint32_t mapn = 0, i;

	if (indep(p, v))
		return at_s(p, v);
	if (p->lifted[v])
		return p->lifted[v];
	if (v == p->range->res[0])
		return p->col;
	d = pass_def(p->f, v);
	switch (d->kind) {
	case OP_BROADCAST: case OP_RESHAPE: case OP_EXPAND_DIMS:
		r = lift(p, d->opnds[0]);
		break;
	case OP_CMP: {
		/* c < X: the shifted column is a real one (>= 0) below X */
		Value x = d->opnds[p->kind[d->opnds[0]] == K_IDX ? 1 : 0];
		Value ge = cmp(p, "ge", p->col, p->zero);

		r = emit(p, OP_AND, ir_type(p->f, ge), 2, ge,
			 cmp(p, "lt", p->col, at_s(p, x)));
		break;
	}
	case OP_AND:
		r = emit(p, OP_AND, shape_of(p, ty_elem(ir_type(p->f, v))), 2,
			 lift(p, d->opnds[0]), lift(p, d->opnds[1]));
		break;
	case OP_PTR_ADD:
		r = emit(p, OP_PTR_ADD, shape_of(p, ty_elem(ir_type(p->f, v))), 2,
			 at_s(p, d->opnds[0]), p->col);
		break;
	default:
		/* data of a smaller shape (a row of weights broadcast to
		 * the rows): a copy of its op at S, each row shifted */
		for (i = 0; i < d->nopnds; i++) {
			Value o = d->opnds[i];

			if (o >= mapn) {
				uint32_t m = MAX(o + 1, p->n);
				Value *nm = arena_alloc(p->a, m * sizeof *nm);

				if (map)
					memcpy(nm, map, mapn * sizeof *nm);
				memset(nm + mapn, 0, (m - mapn) * sizeof *nm);
				map = nm;
				mapn = m;
			}
			map[o] = lift(p, o);
		}
		cl = ir_clone_op(p->f, p->f, d, &map, &mapn);
		ir_val(p->f, cl->res[0])->ty = shape_of(p, ty_elem(ir_type(p->f, v)));
		ir_insert_before(p->at, cl);
		r = cl->res[0];
		break;
	}
	p->lifted[v] = r;
	return r;
}

/* Shifts the columns of range op r's accesses where every use allows it. */
static bool
peel(PassCtx *pc, Func *f, Op *r)
{
	Peel p = { .f = f, .c = f->mod->ctx, .a = pc->scratch, .range = r };
	Walk w = { &p, true };
	Op *op, *prev, *anchor = NULL;
	uint32_t *uses;
	uint32_t i;
	Type *t;

	p.B = attr_int(&r->attrs, "end", 0);
	p.n = f->vals.n;
	p.kind = arena_alloc(p.a, p.n);
	memset(p.kind, 0, p.n);
	ir_walk(f, classify_op, &w);
	if (!w.ok || !p.acc.n)
		return false;
	/* the anchor: the first of the largest loads (a row of weights
	 * broadcast over the rows is smaller) */
	for (i = 0; i < p.acc.n; i++)
		if (p.acc.v[i]->kind == OP_LOAD &&
		    (!anchor || ty_numel(ir_type(f, p.acc.v[i]->res[0])) >
				ty_numel(ir_type(f, anchor->res[0]))))
			anchor = p.acc.v[i];
	if (!anchor)
		return false;
	/* S: the anchor's shape; every access has it, and data of other
	 * shapes broadcasts to it */
	p.S = ir_type(f, anchor->res[0]);
	if (p.S->kind != TY_TILE || last_dim(p.S) != p.B)
		return false;
	for (i = 0; i < p.acc.n; i++)
		if (!fits(&p, ir_type(f, p.acc.v[i]->opnds[0])) ||
		    (p.acc.v[i]->kind == OP_STORE &&
		     ir_type(f, p.acc.v[i]->opnds[0])->kind == TY_TILE &&
		     ir_type(f, p.acc.v[i]->opnds[0])->shape[0] != p.S->shape[0]))
			return false;
	for (op = p.blk->first; op; op = op->next)
		for (i = 0; i < op->nres; i++) {
			Value v = op->res[i];

			if (v >= p.n || p.kind[v] != K_DATA)
				continue;
			t = ir_type(f, v);
			if (!fits(&p, t))
				return false;
		}
	/* data of a smaller shape reaches S only through broadcasts */
	for (op = p.blk->first; op; op = op->next) {
		for (i = 0; i < op->nopnds; i++) {
			Value v = op->opnds[i];

			if (v >= p.n || p.kind[v] != K_DATA ||
			    ir_type(f, v) == ty_like(p.c, p.S, ty_elem(ir_type(f, v))))
				continue;
			if (op->kind == OP_BROADCAST)
				continue;
			if (!elementwise(op) || ir_type(f, op->res[0]) ==
			    ty_like(p.c, p.S, ty_elem(ir_type(f, op->res[0]))))
				return false;
		}
	}
	if (!make_shift(&p, anchor))
		return false;
	p.lifted = arena_alloc(p.a, p.n * sizeof *p.lifted);
	memset(p.lifted, 0, p.n * sizeof *p.lifted);
	for (op = p.blk->first; op; op = op->next) {
		Value v = op->nopnds ? op->opnds[0] : 0;

		p.at = op;
		if (op->kind == OP_BROADCAST && p.kind[v] == K_DATA &&
		    at_shape(&p, op->res[0])) {
			ir_replace_uses(f, op->res[0], lift(&p, v));
			continue;
		}
		/* data of a smaller shape: its copy at S where it is (a
		 * load stays before the stores after it) */
		if (op->nres == 1 && op->res[0] < p.n &&
		    p.kind[op->res[0]] == K_DATA && !at_shape(&p, op->res[0])) {
			lift(&p, op->res[0]);
			continue;
		}
		/* an access at S, or data at S: its indices and masks
		 * shifted */
		if (!(op->kind == OP_STORE ? at_shape(&p, v)
		      : op->nres == 1 && op->res[0] < p.n &&
			p.kind[op->res[0]] == K_DATA && at_shape(&p, op->res[0])))
			continue;
		for (i = 0; i < op->nopnds; i++) {
			uint8_t k = op->opnds[i] < p.n ? p.kind[op->opnds[i]] : K_NONE;

			if (k == K_IDX || k == K_MASK || k == K_PTR)
				op->opnds[i] = lift(&p, op->opnds[i]);
		}
	}
	/* the data of a smaller shape the copies replace: loads are not
	 * pure, so dce would keep them */
	uses = ir_count_uses(f, p.a);
	for (op = p.blk->last; op; op = prev) {
		prev = op->prev;
		if (op->nres != 1 || op->res[0] >= p.n || p.kind[op->res[0]] != K_DATA ||
		    uses[op->res[0]] || op->kind == OP_STORE)
			continue;
		for (i = 0; i < op->nopnds; i++)
			if (op->opnds[i] < f->vals.n && uses[op->opnds[i]])
				uses[op->opnds[i]]--;
		ir_remove(op);
	}
	pass_stat(pc, "rows-peeled", 1);
	return true;
}

bool
pass_peel_rows(PassCtx *pc, Func *f)
{
	uint32_t n, i;
	Op **ranges = ir_find_ops(f, OP_RANGE, pc->scratch, &n);
	bool changed = false;

	for (i = 0; i < n; i++) {
		int64_t end = attr_int(&ranges[i]->attrs, "end", 0);

		if (attr_int(&ranges[i]->attrs, "start", -1) != 0 || end < 2)
			continue;
		changed |= peel(pc, f, ranges[i]);
	}
	return changed;
}
