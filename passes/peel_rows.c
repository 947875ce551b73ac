/*
 * peel_rows.c: the peel-rows pass (docs/internals.md, "peel-rows").
 *
 * A row kernel's tile holds columns c = range(B) of each row at slots
 * 0 .. B - 1; on rows that do not start at a multiple of 16 bytes none of
 * its vectors is aligned.  The pass shifts the columns within the tile: a
 * row whose first element lies s elements past a 16-byte boundary holds
 * column j at slot j + s, so that its loads start at that boundary (the
 * slots below s are masked off like those past the row's end).  The ops
 * between the accesses are elementwise or reduce along the columns, which
 * see the same values (the columns masked off included: as many slots as
 * before hold `other`), in another order.  The shift is 0 where a bound on
 * the columns is above B - s (the row would not fit).
 *
 * The tiles of one shift form a class: values joined by elementwise ops,
 * in one block.  A class's shift is its largest load's row's, or, for a
 * tile a loop carries, a shift the loop carries beside it (a loop that
 * loads the next row while it works on this one).
 */
#include <stdlib.h>

#include "passes/passes.h"

enum { K_NONE, K_IDX, K_MASK, K_PTR, K_DATA };

typedef struct Class {
	Block *blk;      /* where all of its ops are */
	Op *first;       /* its first op there */
	Op *anchor;      /* its largest load (the first of those) */
	Value carried;   /* the loop-carried block argument of its data, or 0 */
	Op *loop;        /* that argument's loop */
	uint32_t argi;   /* its index among the loop's carried values */
	Type *S;         /* the shape of its tiles */
	Value rb;        /* the anchor's row pointer */
	Type *st;        /* the shift's type: i32, or one per row ([R, 1]) */
	Value row_shift; /* the shift at st */
	Value col;       /* c - s at S */
	Value zero;      /* 0 at S */
	Value *lifted;   /* each value at S with the columns shifted */
} Class;

typedef struct Peel {
	Func *f;
	IrCtx *c;
	Arena *a;
	Op *range;       /* c = range(0, B) */
	int64_t B;
	uint32_t n;      /* values when the pass began */
	uint8_t *kind;   /* K_* of each value */
	uint32_t *uf;    /* union-find over values and ops (n + op index) */
	Vec(Value) bounds;  /* the X of every `c < X` */
	Vec(Op *) ops;   /* accesses, data ops, loops and yields, walk order */
	uint32_t *cls;   /* each op's class */
	Class *k;        /* the classes */
	uint32_t nk;
	Class *cur;      /* the class being rewritten */
	Op *at;          /* where new ops go */
} Peel;

static Type *
shape_of(Peel *p, Type *elem)
{
	return ty_like(p->c, p->cur->S, elem);
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
fits(Type *S, Type *t)
{
	int d;

	if (t->kind != TY_TILE)
		return true;
	if (t->rank != S->rank)
		return false;
	for (d = 0; d < t->rank; d++)
		if (t->shape[d] != 1 && t->shape[d] != S->shape[d])
			return false;
	return true;
}

/* A value that does not depend on c, at the shape S. */
static Value
at_s(Peel *p, Value v)
{
	Type *t = ir_type(p->f, v), *to = shape_of(p, ty_elem(t));
	Type *S = p->cur->S;

	if (t == to)
		return v;
	if (t->kind != TY_TILE)
		return emit(p, OP_SPLAT, to, 1, v, 0);
	if (t->rank < S->rank) {
		int64_t sh[TY_MAX_RANK];
		int k = S->rank - t->rank, d;

		for (d = 0; d < S->rank; d++)
			sh[d] = d < k ? 1 : t->shape[d - k];
		t = ty_tile(p->c, ty_elem(t), S->rank, sh);
		v = emit(p, OP_RESHAPE, t, 1, v, 0);
		if (t == to)
			return v;
	}
	return emit(p, OP_BROADCAST, to, 1, v, 0);
}

/* A value that does not depend on c with the last dim of size 1: its
 * scalar or its tile before broadcasts along that dim (a const tile is a
 * splat: itself).  0 when it has none (it varies along the columns). */
static Value
row_value(Peel *p, Value v)
{
	for (;;) {
		Op *d = pass_def(p->f, v);

		if (last_dim(ir_type(p->f, v)) == 1 || (d && d->kind == OP_CONST))
			return v;
		if (!d || (d->kind != OP_BROADCAST && d->kind != OP_SPLAT))
			return 0;
		v = d->opnds[0];
	}
}

/* ---- which values depend on c, and how ---- */

static bool
indep(Peel *p, Value v)
{
	return v >= p->n || p->kind[v] == K_NONE;
}

/* Is v (a value of the pass's start) a tile of the class's shape S? */
static bool
at_shape(Peel *p, Value v)
{
	Type *t = ir_type(p->f, v);

	return v < p->n && t == ty_like(p->c, p->cur->S, ty_elem(t));
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

static uint32_t
find(Peel *p, uint32_t x)
{
	while (p->uf[x] != x)
		x = p->uf[x] = p->uf[p->uf[x]];
	return x;
}

static void
unite(Peel *p, uint32_t x, uint32_t y)
{
	p->uf[find(p, x)] = find(p, y);
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

	switch (op->kind) {
	case OP_FOR:
		/* a loop carries data tiles (not indices or masks) */
		for (i = 0; i < op->nopnds; i++) {
			Value a;

			if (indep(p, op->opnds[i]))
				continue;
			if (i < 3 || p->kind[op->opnds[i]] != K_DATA)
				return false;
			a = op->regions[0]->args[i - 3 + 1];
			p->kind[a] = p->kind[op->res[i - 3]] = K_DATA;
		}
		return true;
	case OP_YIELD:
		if (!op->parent->parent || op->parent->parent->kind != OP_FOR)
			return false;
		/* data goes out where it came in */
		for (i = 0; i < op->nopnds; i++)
			if (!indep(p, op->opnds[i]) &&
			    (p->kind[op->opnds[i]] != K_DATA ||
			     p->kind[op->parent->args[i + 1]] != K_DATA))
				return false;
		return true;
	default:
		break;
	}
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
		    (op->nopnds > 2 && !indep(p, op->opnds[2])))
			return false;
		p->kind[op->res[0]] = K_DATA;
		return true;
	case OP_STORE:
		return k0 == K_PTR && op->nopnds == 3 &&
		       (p->kind[op->opnds[1]] == K_DATA || indep(p, op->opnds[1])) &&
		       p->kind[op->opnds[2]] == K_MASK &&
		       last_dim(ir_type(f, op->opnds[0])) == p->B;
	case OP_REDUCE:
		/* along the columns: the same values in another order */
		if (k0 != K_DATA ||
		    attr_int(&op->attrs, "axis", -1) !=
			    ir_type(f, op->opnds[0])->rank - 1 ||
		    attr_str(&op->attrs, "kind")[0] == 'a')  /* argmax: an index */
			return false;
		return true;  /* the result does not depend on c */
	default:
		break;
	}
	/* data: elementwise over loaded values, and selects on masks */
	if (!elementwise(op))
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
	if (op->kind == OP_LOAD || op->kind == OP_STORE || op->kind == OP_FOR ||
	    op->kind == OP_YIELD ||
	    (op->nres == 1 && p->kind[op->res[0]] == K_DATA))
		vec_push(p->a, &p->ops, op);
}

/* ---- classes ---- */

/* The union-find node of an op of p->ops (index i): its data result, a
 * store's data value, else its own. */
static uint32_t
node(Peel *p, uint32_t i)
{
	Op *op = p->ops.v[i];

	if (op->kind == OP_STORE && p->kind[op->opnds[1]] == K_DATA)
		return op->opnds[1];
	if (op->kind != OP_STORE && op->nres == 1)
		return op->res[0];
	return p->n + i;
}

/* Joins each data op with its data operands; gives every access and data
 * op its class.  False where a class is not one block's. */
static bool
make_classes(Peel *p)
{
	uint32_t i, j, m = p->n + p->ops.n, *id;
	Op *op;

	p->uf = arena_alloc(p->a, m * sizeof *p->uf);
	for (i = 0; i < m; i++)
		p->uf[i] = i;
	for (i = 0; i < p->ops.n; i++) {
		op = p->ops.v[i];
		if (op->kind == OP_LOAD || op->kind == OP_STORE ||
		    op->kind == OP_FOR || op->kind == OP_YIELD)
			continue;
		for (j = 0; j < op->nopnds; j++)
			if (op->opnds[j] < p->n && p->kind[op->opnds[j]] == K_DATA)
				unite(p, op->res[0], op->opnds[j]);
	}
	id = arena_alloc(p->a, m * sizeof *id);
	for (i = 0; i < m; i++)
		id[i] = UINT32_MAX;
	p->cls = arena_alloc(p->a, p->ops.n * sizeof *p->cls);
	p->k = arena_alloc(p->a, (p->ops.n + 1) * sizeof *p->k);
	for (i = 0; i < p->ops.n; i++) {
		Class *k;
		uint32_t r;

		op = p->ops.v[i];
		if (op->kind == OP_FOR || op->kind == OP_YIELD) {
			p->cls[i] = UINT32_MAX;
			continue;
		}
		r = find(p, node(p, i));
		if (id[r] == UINT32_MAX) {
			id[r] = p->nk++;
			p->k[id[r]].blk = op->parent;
			p->k[id[r]].first = op;
		}
		k = &p->k[p->cls[i] = id[r]];
		if (k->blk != op->parent)
			return false;
		if (op->kind == OP_LOAD &&
		    (!k->anchor || ty_numel(ir_type(p->f, op->res[0])) >
				   ty_numel(ir_type(p->f, k->anchor->res[0]))))
			k->anchor = op;
	}
	/* loop-carried data: the argument's class carries the shift; its
	 * first op is the loop body's first use */
	for (i = 0; i < p->ops.n; i++) {
		op = p->ops.v[i];
		if (op->kind != OP_FOR)
			continue;
		for (j = 3; j < op->nopnds; j++) {
			Value a = op->regions[0]->args[j - 3 + 1];
			uint32_t r;
			Class *k;

			if (p->kind[a] != K_DATA)
				continue;
			r = find(p, a);
			if (id[r] == UINT32_MAX)
				continue;  /* carried and never used: its shift is never needed */
			k = &p->k[id[r]];
			if (k->carried)
				return false;  /* two shifts for one class */
			k->carried = a;
			k->loop = op;
			k->argi = j - 3;
		}
	}
	return true;
}

/* ---- the rewrite ---- */

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

/* Is v available in block b before the op at position `first`? */
static bool
before(Peel *p, Block *b, Value v, uint32_t first)
{
	Op *d = pass_def(p->f, v);
	Op *o;

	if (!d)
		return true;
	for (o = d; o->parent && o->parent != b; o = o->parent->parent)
		if (!o->parent->parent)
			return true;  /* outside the block */
	return o->parent != b || position(o) < first;
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

/* The shape of a class's tiles: its largest data's or access's. */
static bool
class_shape(Peel *p, Class *k, uint32_t ki)
{
	uint32_t i;

	for (i = 0; i < p->ops.n; i++) {
		Op *op = p->ops.v[i];
		Type *t;

		if (p->cls[i] != ki)
			continue;
		t = ir_type(p->f, op->kind == OP_STORE ? op->opnds[0] : op->res[0]);
		if (t->kind != TY_TILE || last_dim(t) != p->B)
			return false;
		if (!k->S || ty_numel(t) > ty_numel(k->S))
			k->S = t;
	}
	if (k->carried && ir_type(p->f, k->carried) != ty_like(p->c, k->S,
				ty_elem(ir_type(p->f, k->carried))))
		return false;
	for (i = 0; i < p->ops.n; i++) {
		Op *op = p->ops.v[i];

		if (p->cls[i] == ki &&
		    !fits(k->S, ir_type(p->f, op->kind == OP_STORE ? op->opnds[0]
							      : op->res[0])))
			return false;
		/* a store of a smaller shape than its class's */
		if (p->cls[i] == ki && op->kind == OP_STORE &&
		    ir_type(p->f, op->opnds[0]) != ty_like(p->c, k->S,
					ty_elem(ir_type(p->f, op->opnds[0]))))
			return false;
	}
	return true;
}

/* Data of a smaller shape than its class's reaches it only through
 * broadcasts and elementwise ops of that smaller shape. */
static bool
smaller_ok(Peel *p)
{
	uint32_t i, j;

	for (i = 0; i < p->ops.n; i++) {
		Op *op = p->ops.v[i];

		if (p->cls[i] == UINT32_MAX)
			continue;
		p->cur = &p->k[p->cls[i]];
		for (j = 0; j < op->nopnds; j++) {
			Value v = op->opnds[j];

			if (v >= p->n || p->kind[v] != K_DATA || at_shape(p, v))
				continue;
			if (op->kind == OP_BROADCAST)
				continue;
			if (!elementwise(op) || at_shape(p, op->res[0]))
				return false;
		}
	}
	return true;
}

/* Whether an anchor's shift can be made before its class's first op
 * (its row pointer and the bounds defined there); its type st. */
static bool
anchor_ok(Peel *p, Class *k)
{
	Type *i32 = ty_scalar(p->c, TY_I32), *xt;
	uint32_t first = position(k->first), i;
	Value x;

	if (!k->anchor) {
		k->st = i32;
		return true;
	}
	k->rb = row_value(p, ptr_def(p, k->anchor->opnds[0])->opnds[0]);
	if (!k->rb || !before(p, k->blk, k->rb, first))
		return false;
	k->st = ty_like(p->c, ir_type(p->f, k->rb), i32);
	for (i = 0; i < p->bounds.n; i++) {
		x = row_value(p, p->bounds.v[i]);
		if (!x || !before(p, k->blk, x, first))
			return false;
		xt = ir_type(p->f, x);
		if (ty_elem(xt) != i32 || (xt->kind == TY_TILE && xt != k->st &&
					   pass_def(p->f, x)->kind != OP_CONST))
			return false;
	}
	return true;
}

/* The anchor's shift at st, before the class's first op: its row's
 * misalignment where every bound allows it, else 0.  Without an anchor
 * (a class that only stores), 0. */
static void
anchor_shift(Peel *p, Class *k)
{
	IrCtx *c = p->c;
	Value s, ok = 0, room, x;
	uint32_t i;

	p->at = k->first;
	if (!k->anchor) {
		k->row_shift = pass_new_const(p->f, p->at, k->st, (Num){ .i = 0 });
		return;
	}
	s = emit(p, OP_MISALIGN, k->st, 1, k->rb, 0);
	attr_set_int(c, &pass_def(p->f, s)->attrs, "bytes", 16);
	/* the row fits: X <= B - s for every bound X */
	room = emit(p, OP_SUB, k->st, 2, pass_new_const(p->f, p->at, k->st,
					(Num){ .i = p->B }), s);
	for (i = 0; i < p->bounds.n; i++) {
		Value le;
		Num n;

		x = row_value(p, p->bounds.v[i]);
		if (pass_const(p->f, x, &n))
			x = pass_new_const(p->f, p->at, k->st, n);
		else if (ir_type(p->f, x) != k->st)
			x = emit(p, OP_SPLAT, k->st, 1, x, 0);
		le = cmp(p, "le", x, room);
		ok = ok ? emit(p, OP_AND, ir_type(p->f, le), 2, ok, le) : le;
	}
	if (ok)
		s = emit3(p, OP_SELECT, k->st, ok, s,
			  pass_new_const(p->f, p->at, k->st, (Num){ .i = 0 }));
	k->row_shift = s;
}

/* The class of the data value v (an op's result, a store's value). */
static Class *
class_of(Peel *p, Value v)
{
	uint32_t i;

	for (i = 0; i < p->nk; i++)
		if (p->k[i].carried == v)
			return &p->k[i];
	for (i = 0; i < p->ops.n; i++)
		if (p->cls[i] != UINT32_MAX && p->ops.v[i]->nres == 1 &&
		    p->ops.v[i]->kind != OP_STORE && p->ops.v[i]->res[0] == v)
			return &p->k[p->cls[i]];
	return NULL;
}

/* The classes a loop-carried class's shift comes from: the initial
 * value's and the yielded value's (itself where the loop yields its
 * argument). */
static void
carried_from(Peel *p, Class *k, Class **ki, Class **kn)
{
	Op *y = k->loop->regions[0]->last;
	Value next = y->opnds[k->argi];

	*ki = class_of(p, k->loop->opnds[3 + k->argi]);
	*kn = next == k->carried ? k : class_of(p, next);
}

/* Whether both have a shift of one type (an outer loop's class checked
 * before); its type st. */
static bool
carried_ok(Peel *p, Class *k)
{
	Class *ki, *kn;

	carried_from(p, k, &ki, &kn);
	if (!ki || !kn || !ki->st || (kn != k && ki->st != kn->st))
		return false;
	k->st = ki->st;
	return true;
}

/* The shift as a value the loop carries: in beside the initial value,
 * out beside the yielded one. */
static void
carried_shift(Peel *p, Class *k)
{
	Op *loop = k->loop;
	Class *ki, *kn;

	carried_from(p, k, &ki, &kn);
	k->row_shift = ir_block_add_arg(loop->regions[0], k->st);
	ir_op_add_operand(loop, ki->row_shift);
	ir_op_add_operand(loop->regions[0]->last, kn->row_shift);
	ir_op_add_result(loop, k->st);
}

/* v (a value that depends on c) at the class's shape with the columns
 * shifted, made before p->at. */
static Value
lift(Peel *p, Value v)
{
	Class *k = p->cur;
	Op *d, *cl;
	Value *map, r;
	uint32_t mapn, i;

	if (indep(p, v))
		return at_s(p, v);
	if (k->lifted[v])
		return k->lifted[v];
	if (v == p->range->res[0])
		return k->col;
	d = pass_def(p->f, v);
	switch (d->kind) {
	case OP_BROADCAST: case OP_RESHAPE: case OP_EXPAND_DIMS:
		r = lift(p, d->opnds[0]);
		break;
	case OP_CMP: {
		/* c < X: the shifted column is a real one (>= 0) below X */
		Value x = d->opnds[p->kind[d->opnds[0]] == K_IDX ? 1 : 0];
		Value ge = cmp(p, "ge", k->col, k->zero);

		r = emit(p, OP_AND, ir_type(p->f, ge), 2, ge,
			 cmp(p, "lt", k->col, at_s(p, x)));
		break;
	}
	case OP_AND:
		r = emit(p, OP_AND, shape_of(p, ty_elem(ir_type(p->f, v))), 2,
			 lift(p, d->opnds[0]), lift(p, d->opnds[1]));
		break;
	case OP_PTR_ADD:
		r = emit(p, OP_PTR_ADD, shape_of(p, ty_elem(ir_type(p->f, v))), 2,
			 at_s(p, d->opnds[0]), k->col);
		break;
	default:
		/* data of a smaller shape (a row of weights broadcast to
		 * the rows): a copy of its op at S, each row shifted (its
		 * operands are values of the pass's start) */
		mapn = p->n;
		map = arena_alloc(p->a, mapn * sizeof *map);
		for (i = 0; i < d->nopnds; i++)
			map[d->opnds[i]] = lift(p, d->opnds[i]);
		cl = ir_clone_op(p->f, p->f, d, &map, &mapn);
		if (cl->kind == OP_LOAD)
			attr_set_int(p->c, &cl->attrs, "peeled", 1);
		ir_val(p->f, cl->res[0])->ty = shape_of(p, ty_elem(ir_type(p->f, v)));
		ir_insert_before(p->at, cl);
		r = cl->res[0];
		break;
	}
	k->lifted[v] = r;
	return r;
}

/* Rewrites op (of class p->cur): an access's or a data op's indices and
 * masks shifted, data of a smaller shape copied at S. */
static void
rewrite(Peel *p, Op *op)
{
	Value v = op->nopnds ? op->opnds[0] : 0;
	uint32_t i;

	p->at = op;
	if (op->kind == OP_BROADCAST && p->kind[v] == K_DATA &&
	    at_shape(p, op->res[0])) {
		ir_replace_uses(p->f, op->res[0], lift(p, v));
		return;
	}
	/* data of a smaller shape: its copy at S where it is (a load
	 * stays before the stores after it) */
	if (op->kind != OP_STORE && !at_shape(p, op->res[0])) {
		lift(p, op->res[0]);
		return;
	}
	for (i = 0; i < op->nopnds; i++) {
		uint8_t k = op->opnds[i] < p->n ? p->kind[op->opnds[i]] : K_NONE;

		if (k == K_IDX || k == K_MASK || k == K_PTR)
			op->opnds[i] = lift(p, op->opnds[i]);
	}
	/* codegen: a realigned load of it tries one aligned vector first */
	if (op->kind == OP_LOAD)
		attr_set_int(p->c, &op->attrs, "peeled", 1);
}

/* Where the shift pays (measured on an H100 against the generic entry
 * without it, bench/RESULTS.md): tiles of one row (a shift per row of a
 * 2-D tile made every element's mask dearer and loaded a [1, B] row of
 * weights once a row: layer norm at 100 columns ran at 0.46x) of at
 * least 32 elements a thread (softmax at 1025 columns, 16 a thread:
 * 0.88x; at 4097, 32 a thread: 1.09x; at 30001, 64 a thread: 2.15x).
 * TLX_PEEL_ROWS=all peels wherever the shift is right (measurements,
 * tests), =none nowhere. */
static bool
pays(Peel *p)
{
	const char *e = getenv("TLX_PEEL_ROWS");
	int64_t threads = 32 * attr_int(&p->f->attrs, "warps", 4);
	uint32_t i;

	if (e && !strcmp(e, "none"))
		return false;
	if (e && !strcmp(e, "all"))
		return true;
	for (i = 0; i < p->nk; i++)
		if (ty_numel(p->k[i].S) != p->B || p->B < 32 * threads)
			return false;
	return true;
}

/* Shifts the columns of range op r's accesses where every use allows it. */
static bool
peel(PassCtx *pc, Func *f, Op *r)
{
	Peel p = { .f = f, .c = f->mod->ctx, .a = pc->scratch, .range = r };
	Walk w = { &p, true };
	Op *op;
	uint32_t i, *uses;
	bool loads = false;
	Class *k;

	p.B = attr_int(&r->attrs, "end", 0);
	p.n = f->vals.n;
	p.kind = arena_alloc(p.a, p.n);
	ir_walk(f, classify_op, &w);
	if (!w.ok)
		return false;
	for (i = 0; i < p.ops.n; i++)
		loads |= p.ops.v[i]->kind == OP_LOAD;
	if (!loads || !make_classes(&p))
		return false;
	/* a loop's data results are not used (their shift would have to
	 * come out too) */
	uses = ir_count_uses(f, p.a);
	for (i = 0; i < p.ops.n; i++) {
		uint32_t j;

		op = p.ops.v[i];
		if (op->kind == OP_FOR)
			for (j = 0; j < op->nres; j++)
				if (p.kind[op->res[j]] == K_DATA && uses[op->res[j]])
					return false;
	}
	for (i = 0; i < p.nk; i++)
		if (!class_shape(&p, &p.k[i], i))
			return false;
	if (!smaller_ok(&p) || !pays(&p))
		return false;
	/* the shifts, checked before any is made: the anchors' first, then
	 * the loops' in walk order (an outer loop's before an inner one's) */
	for (k = p.k; k < p.k + p.nk; k++)
		if (!k->carried && !anchor_ok(&p, k))
			return false;
	for (i = 0; i < p.ops.n; i++)
		for (k = p.k; k < p.k + p.nk; k++)
			if (k->loop == p.ops.v[i] && !carried_ok(&p, k))
				return false;
	for (k = p.k; k < p.k + p.nk; k++)
		if (!k->carried)
			anchor_shift(&p, k);
	for (i = 0; i < p.ops.n; i++)
		for (k = p.k; k < p.k + p.nk; k++)
			if (k->loop == p.ops.v[i])
				carried_shift(&p, k);
	for (k = p.k; k < p.k + p.nk; k++) {
		Type *i32 = ty_scalar(p.c, TY_I32);

		p.cur = k;
		p.at = k->first;
		k->lifted = arena_alloc(p.a, p.n * sizeof *k->lifted);
		k->col = emit(&p, OP_SUB, shape_of(&p, i32), 2,
			      at_s(&p, r->res[0]), at_s(&p, k->row_shift));
		k->zero = pass_new_const(f, p.at, shape_of(&p, i32), (Num){ .i = 0 });
	}
	for (i = 0; i < p.ops.n; i++)
		if (p.cls[i] != UINT32_MAX) {
			p.cur = &p.k[p.cls[i]];
			rewrite(&p, p.ops.v[i]);
		}
	/* the data of a smaller shape the copies replace: loads are not
	 * pure, so dce would keep them */
	uses = ir_count_uses(f, p.a);
	for (i = p.ops.n; i-- > 0;) {
		uint32_t j;

		op = p.ops.v[i];
		if (p.cls[i] == UINT32_MAX || op->kind == OP_STORE || uses[op->res[0]])
			continue;
		for (j = 0; j < op->nopnds; j++)
			if (uses[op->opnds[j]])
				uses[op->opnds[j]]--;
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
