/*
 * canon.c: constant folding and canonicalization -- pass "canon".
 *
 * Repeats sweeps over the function until nothing changes:
 *   - folds pure ops whose operands are constants, with the exact
 *     semantics of ir/numeric.c (wrapping integers, signed and unsigned
 *     div/rem/shr/cmp, floats rounded to their type); integer division by
 *     zero and transcendental math are left alone, and nothing folds into
 *     an fp8 constant (a storage type);
 *   - folds shape ops of constants (splat, broadcast, expand_dims,
 *     reshape, trans: a constant is a splat) and reductions of them
 *     (integer sum and prod, min, max, argmin, argmax);
 *   - simplifies: x+0, x-0, x*1, x/1, x*0 and x-x (integers), x&x, x|x,
 *     x&0, x&~0, x|0, x|~0, x^x, x^0, x<<0, x>>0, min/max(x,x), select with
 *     a constant condition or equal arms, cmp of a value with itself
 *     (integers and pointers), neg(neg x), not(not x), and cvt, bitcast,
 *     broadcast, reshape or trans to the same type; for floats only the
 *     exact identities (x + -0.0, x - 0.0, x * 1.0, x / 1.0);
 *   - puts constants second in commutative ops, and rounds each constant's
 *     value to its type;
 *   - replaces `if` with a constant condition by the ops of the taken
 *     region, and `for` that runs zero times by its initial values.
 * Finally every `const` moves to the start of the function body (in
 * order), so that CSE finds equal constants; in laid-out IR only scalar
 * ones (a tile's layout is over the warps of its task).  Ops left unused
 * stay for dce.
 * Requires: verified IR.  Preserves: names of the values that stay.
 * Counters: folded, simplified, swapped, consts-rounded, ifs-inlined,
 * loops-removed, consts-hoisted.
 */
#include <math.h>

#include "passes/passes.h"

enum { MAX_SWEEPS = 64 };

typedef struct Canon {
	PassCtx *pc;
	Func *f;
	ValueMap map;
	bool changed;
	/* per value: only extract_slice ops use it (find_block_uses) */
	uint8_t *uses, *next;
	uint32_t nvals;
} Canon;

static TypeKind
kind_of(Canon *z, Value v)
{
	return ty_elem(ir_type(z->f, v))->kind;
}

static bool
all_const(Canon *z, Op *op, Num *n)
{
	uint32_t i;

	for (i = 0; i < op->nopnds; i++)
		if (!pass_const(z->f, op->opnds[i], &n[i]))
			return false;
	return true;
}

/* ---- folding ------------------------------------------------------------------- */

static bool
fold_bitcast(TypeKind to, TypeKind from, Num a, Num *r)
{
	uint64_t bits;

	if (ty_is_float_kind(from)) {
		if (isnan(a.f))
			return false;  /* NaN payloads do not survive as attributes */
		bits = ir_float_to_bits(from, a.f);
	} else {
		bits = (uint64_t)a.i;
	}
	if (ty_is_int_kind(to)) {
		r->i = ir_int_wrap(to, bits);
		return true;
	}
	r->f = ir_float_from_bits(to, bits);  /* reads the low bits it needs */
	return !isnan(r->f);
}

static bool
fold_reduce(Canon *z, Op *op, Num a, Num *r)
{
	Type *t = ir_type(z->f, op->opnds[0]);
	const char *kind = attr_str(&op->attrs, "kind");
	int64_t n = t->shape[attr_int(&op->attrs, "axis", 0)];
	TypeKind k = t->elem->kind;
	Num acc;

	if (strcmp(kind, "min") == 0 || strcmp(kind, "max") == 0) {
		*r = a;
		return true;
	}
	if (strncmp(kind, "arg", 3) == 0) {
		r->i = 0;  /* every element is the extreme: the first wins */
		return true;
	}
	if (!ty_is_int_kind(k))
		return false;  /* float sums round at every step */
	if (kind[0] == 's') {
		r->i = ir_int_wrap(k, (uint64_t)a.i * (uint64_t)n);
		return true;
	}
	for (acc.i = 1; n; n >>= 1) {  /* prod: a^n by squaring */
		if (n & 1)
			acc.i = ir_int_wrap(k, (uint64_t)acc.i * (uint64_t)a.i);
		a.i = ir_int_wrap(k, (uint64_t)a.i * (uint64_t)a.i);
	}
	*r = acc;
	return true;
}

/* The value of a pure op over constant operands, when it has one. */
static bool
fold_value(Canon *z, Op *op, Num *r)
{
	Num n[3];
	TypeKind rk = kind_of(z, op->res[0]);

	if (op->nopnds == 0 || op->nopnds > 3 || !all_const(z, op, n))
		return false;
	if (rk == TY_F8E4M3 || rk == TY_F8E5M2)
		return false;
	if (op_has(op, F_ELEM)) {
		if (op->nopnds == 1)
			return ir_num_unary(op->kind, rk, n[0], r);
		if (op->nopnds == 2)
			return ir_num_binary(op->kind, rk, n[0], n[1], r);
		return ir_num_fma(rk, n[0], n[1], n[2], r);
	}
	switch (op->kind) {
	case OP_CMP: {
		int v = ir_num_cmp(attr_str(&op->attrs, "pred"), kind_of(z, op->opnds[0]),
				   n[0], n[1]);

		r->i = v;
		return v >= 0;
	}
	case OP_CVT:
		*r = ir_num_cvt(rk, kind_of(z, op->opnds[0]), n[0]);
		return true;
	case OP_BITCAST:
		return fold_bitcast(rk, kind_of(z, op->opnds[0]), n[0], r);
	case OP_SPLAT: case OP_BROADCAST: case OP_EXPAND_DIMS: case OP_RESHAPE:
	case OP_TRANS: case OP_EXTRACT_SLICE:
		*r = n[0];
		return true;
	case OP_REDUCE:
		return fold_reduce(z, op, n[0], r);
	default:
		return false;
	}
}

/* ---- simplification ---------------------------------------------------------------- */

static Value
new_const(Canon *z, Op *at, int64_t i, double fl)
{
	Type *t = ir_type(z->f, at->res[0]);
	Num n;

	if (ty_is_int(t))
		n.i = ir_int_wrap(ty_elem(t)->kind, (uint64_t)i);
	else
		n.f = fl;
	return pass_new_const(z->f, at, t, n);
}

static bool
is_int_const(Canon *z, Value v, int64_t k)
{
	return ty_is_int(ir_type(z->f, v)) &&
	       pass_is_const(z->f, v, ir_int_wrap(kind_of(z, v), (uint64_t)k), 0);
}

static bool
is_float_const(Canon *z, Value v, double k)
{
	return ty_is_float(ir_type(z->f, v)) && pass_is_const(z->f, v, 0, k);
}

/* The operand of a double neg/not, or 0. */
static Value
undo_twice(Canon *z, Op *op)
{
	Op *d = pass_def(z->f, op->opnds[0]);

	return d && d->kind == op->kind ? d->opnds[0] : 0;
}

static Value
simplify_cmp(Canon *z, Op *op)
{
	const char *p = attr_str(&op->attrs, "pred");

	if (op->opnds[0] != op->opnds[1] || ty_is_float(ir_type(z->f, op->opnds[0])))
		return 0;  /* x < x is false, x <= x true; floats: NaN */
	return new_const(z, op, ir_num_cmp(p, TY_I32, (Num){ .i = 0 }, (Num){ .i = 0 }), 0);
}

static Value
simplify_select(Canon *z, Op *op)
{
	Num c;

	if (op->opnds[1] == op->opnds[2])
		return op->opnds[1];
	if (pass_const(z->f, op->opnds[0], &c))
		return c.i ? op->opnds[1] : op->opnds[2];
	return 0;
}

static bool
identity_perm(Op *op)
{
	Attr *a = attr_find(&op->attrs, "perm");
	uint32_t i;

	for (i = 0; a && i < a->ints.n; i++)
		if (a->ints.v[i] != (int64_t)i)
			return false;
	return a != NULL;
}

/* Binary integer/float identities; b is the (canonically second) operand. */
static Value
simplify_binary(Canon *z, Op *op)
{
	Value a = op->opnds[0], b = op->opnds[1];
	bool isint = ty_is_int(ir_type(z->f, a));

	switch (op->kind) {
	case OP_ADD:
		return is_int_const(z, b, 0) || is_float_const(z, b, -0.0) ? a : 0;
	case OP_SUB:
		if (isint && a == b)
			return new_const(z, op, 0, 0);
		return is_int_const(z, b, 0) || is_float_const(z, b, 0.0) ? a : 0;
	case OP_MUL:
		if (is_int_const(z, b, 0))
			return new_const(z, op, 0, 0);
		return is_int_const(z, b, 1) || is_float_const(z, b, 1.0) ? a : 0;
	case OP_DIV:
		return is_int_const(z, b, 1) || is_float_const(z, b, 1.0) ? a : 0;
	case OP_AND:
		if (a == b || is_int_const(z, b, -1))
			return a;
		return is_int_const(z, b, 0) ? new_const(z, op, 0, 0) : 0;
	case OP_OR:
		if (a == b || is_int_const(z, b, 0))
			return a;
		return is_int_const(z, b, -1) ? new_const(z, op, -1, 0) : 0;
	case OP_XOR:
		if (a == b)
			return new_const(z, op, 0, 0);
		return is_int_const(z, b, 0) ? a : 0;
	case OP_SHL:
	case OP_SHR:
		return is_int_const(z, b, 0) ? a : 0;
	case OP_MIN:
	case OP_MAX:
		return a == b ? a : 0;
	default:
		return 0;
	}
}

/* An extract_slice of x at offsets o in a block of shape `shape`, placed
 * before `at` (x itself when the block is all of it). */
static Value
new_extract(Canon *z, Op *at, Value x, const int64_t *o, const int64_t *shape)
{
	Type *xt = ir_type(z->f, x);
	Type *bt = ty_tile(z->f->mod->ctx, ty_elem(xt), xt->rank, shape);
	Op *e;

	if (bt == xt)
		return x;
	e = ir_op_new(z->f, OP_EXTRACT_SLICE, 1, &x, 1, &bt, 0);
	attr_set_ints(z->f->mod->ctx, &e->attrs, "offsets", o, (uint32_t)xt->rank);
	e->loc = at->loc;
	ir_insert_before(at, e);
	return e->res[0];
}

/* Ops a block moves above: the block of their result is their op on the
 * blocks of their operands. */
static bool
sinks(Canon *z, Op *d)
{
	uint32_t i;

	if (!op_has(d, F_ELEM) && d->kind != OP_CVT && d->kind != OP_BITCAST &&
	    d->kind != OP_CMP && d->kind != OP_SELECT)
		return false;
	/* not above a broadcast operand: assign-layouts lays out `acc +
	 * bias[None, :]`'s bias in the accumulator's columns (acc_slice),
	 * which a block of the broadcast would hide */
	for (i = 0; i < d->nopnds; i++) {
		Op *b = pass_def(z->f, d->opnds[i]);

		if (b && b->kind == OP_BROADCAST)
			return false;
	}
	return true;
}

/* A block of a block is one block.  A block of an elementwise op or a
 * conversion whose result only blocks use is that op on its operands'
 * blocks: each block is computed where it is used (a
 * staged TMA store converts and stores one block at a time, with a
 * block's registers live, not the tile's).  Tile IR only: the new ops
 * have no layouts. */
static Value
simplify_extract(Canon *z, Op *op)
{
	Type *rt = ir_type(z->f, op->res[0]), *xt;
	Op *d = pass_def(z->f, op->opnds[0]), *e;
	Attr *o = attr_find(&op->attrs, "offsets"), *io;
	int64_t offs[TY_MAX_RANK];
	Value ops[3];
	uint32_t i;
	int k;

	if (ir_type(z->f, op->opnds[0]) == rt)
		return op->opnds[0];  /* the whole tile */
	if (!d || rt->layout || !o || o->ints.n != rt->rank)
		return 0;
	if (d->kind == OP_EXTRACT_SLICE &&
	    (io = attr_find(&d->attrs, "offsets")) && io->ints.n == rt->rank) {
		for (k = 0; k < rt->rank; k++)
			offs[k] = o->ints.v[k] + io->ints.v[k];
		return new_extract(z, op, d->opnds[0], offs, rt->shape);
	}
	if (!sinks(z, d) || d->nres != 1 || d->nopnds > 3 ||
	    op->opnds[0] >= z->nvals || !z->uses[op->opnds[0]])
		return 0;
	for (i = 0; i < d->nopnds; i++) {
		xt = ir_type(z->f, d->opnds[i]);
		ops[i] = d->opnds[i];
		if (xt->kind != TY_TILE)
			continue;
		if (xt->rank != rt->rank)
			return 0;
		ops[i] = new_extract(z, op, d->opnds[i], o->ints.v, rt->shape);
	}
	e = ir_op_new(z->f, d->kind, d->nopnds, ops, 1, &rt, 0);
	e->attrs = d->attrs;
	e->loc = d->loc;
	ir_insert_before(op, e);
	return e->res[0];
}

/* Which values only extract_slice ops use (for simplify_extract), not
 * counting the uses by pure ops whose results nothing else uses (ops a
 * block was moved above, waiting for dce).  uses[v]: bit 0 a block uses
 * v, bit 1 another live op does. */
static bool
dead_op(Canon *z, Op *op)
{
	uint32_t i;

	if (!pass_is_pure(op) || op->nres == 0 || op->nregions)
		return false;
	for (i = 0; i < op->nres; i++)
		if (op->res[i] >= z->nvals || z->uses[op->res[i]])
			return false;
	return true;
}

static void
count_live(Op *op, void *ud)
{
	Canon *z = ud;
	uint32_t i;

	if (dead_op(z, op))
		return;
	for (i = 0; i < op->nopnds; i++)
		if (op->opnds[i] < z->nvals)
			z->next[op->opnds[i]] |= op->kind == OP_EXTRACT_SLICE ? 1 : 2;
}

static void
find_block_uses(Canon *z)
{
	uint32_t v;
	int round;

	z->nvals = (uint32_t)z->f->vals.n;
	z->uses = arena_alloc(z->pc->scratch, z->nvals);
	z->next = arena_alloc(z->pc->scratch, z->nvals);
	memset(z->uses, 3, z->nvals);  /* first: every op live */
	for (round = 0; round < 16; round++) {
		memset(z->next, 0, z->nvals);
		ir_walk(z->f, count_live, z);
		if (!memcmp(z->next, z->uses, z->nvals))
			break;
		memcpy(z->uses, z->next, z->nvals);
	}
	for (v = 0; v < z->nvals; v++)
		z->uses[v] = z->uses[v] == 1;  /* blocks only */
}

/* An existing or new value equal to op's result, or 0. */
static Value
simplify(Canon *z, Op *op)
{
	Type *rt = op->nres ? ir_type(z->f, op->res[0]) : NULL;

	switch (op->kind) {
	case OP_NEG:
	case OP_NOT:
		return undo_twice(z, op);
	case OP_CMP:
		return simplify_cmp(z, op);
	case OP_SELECT:
		return simplify_select(z, op);
	case OP_CVT: case OP_BITCAST: case OP_BROADCAST: case OP_RESHAPE:
		return ir_type(z->f, op->opnds[0]) == rt ? op->opnds[0] : 0;
	case OP_EXTRACT_SLICE:
		return simplify_extract(z, op);
	case OP_TRANS:
		return identity_perm(op) ? op->opnds[0] : 0;
	default:
		return op_has(op, F_ELEM) && op->nopnds == 2 ? simplify_binary(z, op) : 0;
	}
}

/* Constants second in commutative ops. */
static bool
swap_const(Canon *z, Op *op)
{
	Num n;
	Value t;

	if (!op_has(op, F_COMM) || !pass_const(z->f, op->opnds[0], &n) ||
	    pass_const(z->f, op->opnds[1], &n))
		return false;
	t = op->opnds[0];
	op->opnds[0] = op->opnds[1];
	op->opnds[1] = t;
	return true;
}

/* A const's value rounded (floats) or wrapped (integers) to its type. */
static bool
round_const(Canon *z, Op *op)
{
	Attr *a = attr_find(&op->attrs, "value");
	Num n;

	if (!a || !pass_const(z->f, op->res[0], &n))
		return false;
	if (a->kind == ATTR_INT && a->i != n.i)
		a->i = n.i;
	else if (a->kind == ATTR_FLOAT && !isnan(n.f) &&
		 memcmp(&a->f, &n.f, sizeof n.f) != 0)
		a->f = n.f;
	else
		return false;
	return true;
}

/* ---- control flow ---------------------------------------------------------------------- */

/* if with a constant condition: the taken region's ops replace it.
 * Returns the first moved op (the walk goes on there). */
static Op *
inline_if(Canon *z, Op *op, Num c)
{
	Block *b = op->regions[c.i ? 0 : 1];
	Op *y = b->last, *first = NULL;
	uint32_t i;

	while (b->first && b->first != y) {
		Op *o = b->first;

		ir_remove(o);
		ir_insert_before(op, o);
		first = first ? first : o;
	}
	for (i = 0; y && y->kind == OP_YIELD && i < op->nres && i < y->nopnds; i++)
		vmap_set(&z->map, op->res[i], vmap_get(&z->map, y->opnds[i]));
	ir_remove(op);
	pass_stat(z->pc, "ifs-inlined", 1);
	return first;
}

static bool
zero_trip_for(Canon *z, Op *op)
{
	Num lb, ub;
	uint32_t i;

	if (!pass_const(z->f, op->opnds[0], &lb) || !pass_const(z->f, op->opnds[1], &ub) ||
	    ir_num_cmp("ge", kind_of(z, op->opnds[0]), lb, ub) != 1)
		return false;
	for (i = 0; i < op->nres; i++)
		vmap_set(&z->map, op->res[i], op->opnds[3 + i]);
	ir_remove(op);
	pass_stat(z->pc, "loops-removed", 1);
	return true;
}

/* ---- the sweep ------------------------------------------------------------------------- */

/* Folds or simplifies a pure op; true when it went away. */
static bool
rewrite_pure(Canon *z, Op *op)
{
	Num r;
	Value v = 0;

	if (op->kind == OP_CONST) {
		if (round_const(z, op)) {
			pass_stat(z->pc, "consts-rounded", 1);
			z->changed = true;
		}
		return false;
	}
	if (swap_const(z, op)) {
		pass_stat(z->pc, "swapped", 1);
		z->changed = true;
	}
	if (op->nres == 1 && fold_value(z, op, &r)) {
		v = pass_new_const(z->f, op, ir_type(z->f, op->res[0]), r);
		pass_stat(z->pc, "folded", 1);
	} else if (op->nres == 1 && (v = simplify(z, op))) {
		pass_stat(z->pc, "simplified", 1);
	}
	if (!v)
		return false;
	vmap_set(&z->map, op->res[0], v);
	ir_remove(op);
	z->changed = true;
	return true;
}

static void
sweep(Canon *z, Block *b)
{
	Op *op, *next;
	uint32_t i;
	Num c;

	for (op = b->first; op; op = next) {
		next = op->next;
		vmap_apply(&z->map, op);
		if (op->kind == OP_IF && pass_const(z->f, op->opnds[0], &c)) {
			Op *first = inline_if(z, op, c);

			z->changed = true;
			next = first ? first : next;
			continue;
		}
		if (op->kind == OP_FOR && zero_trip_for(z, op)) {
			z->changed = true;
			continue;
		}
		if (pass_is_pure(op) && rewrite_pure(z, op))
			continue;
		for (i = 0; i < op->nregions; i++)
			sweep(z, op->regions[i]);
	}
}

/* Every const to the start of the body, keeping their order; in laid-out
 * IR a tile const stays where it is (its layout is over the warps of the
 * task it is in). */
static bool
hoist_consts(Canon *z)
{
	Block *body = z->f->body;
	Op *cursor = NULL, **cs;
	uint32_t i, n;
	bool moved = false, laid = ir_func_laid_out(z->f);

	cs = ir_find_ops(z->f, OP_CONST, z->pc->scratch, &n);
	for (i = 0; i < n; i++) {
		Op *c = cs[i];

		if (laid && ir_type(z->f, c->res[0])->layout)
			continue;
		if (c->parent != body || c->prev != cursor) {
			ir_remove(c);
			if (cursor)
				ir_insert_after(cursor, c);
			else if (body->first)
				ir_insert_before(body->first, c);
			else
				ir_append(body, c);
			pass_stat(z->pc, "consts-hoisted", 1);
			moved = true;
		}
		cursor = c;
	}
	return moved;
}

bool
pass_canon(PassCtx *pc, Func *f)
{
	Canon z = { .pc = pc, .f = f };
	bool any = false;
	int n = 0;

	vmap_init(&z.map, pc->scratch, f->vals.n);
	do {
		z.changed = false;
		find_block_uses(&z);
		sweep(&z, f->body);
		any |= z.changed;
	} while (z.changed && ++n < MAX_SWEEPS);
	return hoist_consts(&z) || any;
}
