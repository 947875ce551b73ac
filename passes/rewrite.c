/* rewrite.c: small helpers the passes share -- a value replacement map,
 * reading and making constants. */
#include "passes/passes.h"

void
vmap_init(ValueMap *m, Arena *a, uint32_t n)
{
	m->a = a;
	m->n = n ? n : 1;
	m->v = arena_alloc(a, m->n * sizeof *m->v);
}

void
vmap_set(ValueMap *m, Value from, Value to)
{
	if (NEVER(from == to || from == 0))
		return;
	if (from >= m->n) {
		uint32_t n = MAX(from + 1, m->n * 2);
		Value *v = arena_alloc(m->a, n * sizeof *v);

		memcpy(v, m->v, m->n * sizeof *v);
		m->v = v;
		m->n = n;
	}
	m->v[from] = to;
}

Value
vmap_get(ValueMap *m, Value v)
{
	Value first = v;

	while (v < m->n && m->v[v])
		v = m->v[v];
	/* path compression: later lookups take one step */
	while (first != v && first < m->n && m->v[first] && m->v[first] != v) {
		Value next = m->v[first];

		m->v[first] = v;
		first = next;
	}
	return v;
}

bool
vmap_apply(ValueMap *m, Op *op)
{
	uint32_t i;
	bool changed = false;

	for (i = 0; i < op->nopnds; i++) {
		Value to = vmap_get(m, op->opnds[i]);

		changed |= to != op->opnds[i];
		op->opnds[i] = to;
	}
	return changed;
}

bool
pass_const(Func *f, Value v, Num *out)
{
	Op *def = pass_def(f, v);
	Attr *a;
	TypeKind k;

	if (!def || def->kind != OP_CONST || !(a = attr_find(&def->attrs, "value")))
		return false;
	k = ty_elem(ir_type(f, v))->kind;
	if (ty_is_int_kind(k) && a->kind == ATTR_INT) {
		out->i = k == TY_I1 ? a->i != 0 : ir_int_wrap(k, (uint64_t)a->i);
		return true;
	}
	if (ty_is_float_kind(k) && a->kind == ATTR_FLOAT) {
		out->f = ir_float_round(k, a->f);
		return true;
	}
	return false;
}

bool
pass_is_const(Func *f, Value v, int64_t ik, double fk)
{
	Num n;

	if (!pass_const(f, v, &n))
		return false;
	if (ty_is_int(ir_type(f, v)))
		return n.i == ik;
	return memcmp(&n.f, &fk, sizeof fk) == 0;  /* -0.0 is not 0.0 */
}

Value
pass_new_const(Func *f, Op *at, Type *t, Num n)
{
	IrCtx *c = f->mod->ctx;
	Op *op = ir_op_new(f, OP_CONST, 0, NULL, 1, &t, 0);

	if (ty_is_int(t))
		attr_set_int(c, &op->attrs, "value", n.i);
	else
		attr_set_float(c, &op->attrs, "value", n.f);
	op->loc = at->loc;
	ir_insert_before(at, op);
	return op->res[0];
}

bool
pass_is_pure(Op *op)
{
	return op_has(op, F_PURE) && op->nregions == 0;
}
