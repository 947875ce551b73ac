/* builder.c: convenience constructors that insert at a cursor. */
#include "ir.h"

Op *
b_insert(Builder *b, Op *op)
{
	op->loc = b->loc;
	if (b->before)
		ir_insert_before(b->before, op);
	else
		ir_append(b->blk, op);
	return op;
}

Op *
b_op(Builder *b, OpKind k, uint32_t nopnds, const Value *opnds, Type *rtype)
{
	return b_insert(b, ir_op_new(b->fn, k, nopnds, opnds, rtype ? 1 : 0,
				     &rtype, 0));
}

Value
b_op0(Builder *b, OpKind k, Type *rt)
{
	return b_op(b, k, 0, NULL, rt)->res[0];
}

Value
b_op1(Builder *b, OpKind k, Type *rt, Value a)
{
	return b_op(b, k, 1, &a, rt)->res[0];
}

Value
b_op2(Builder *b, OpKind k, Type *rt, Value a, Value c)
{
	Value v[2] = { a, c };

	return b_op(b, k, 2, v, rt)->res[0];
}

Value
b_op3(Builder *b, OpKind k, Type *rt, Value a, Value c, Value d)
{
	Value v[3] = { a, c, d };

	return b_op(b, k, 3, v, rt)->res[0];
}

Value
b_const_int(Builder *b, Type *t, int64_t v)
{
	Op *op = b_op(b, OP_CONST, 0, NULL, t);

	attr_set_int(b_ctx(b), &op->attrs, "value", v);
	return op->res[0];
}

Value
b_const_float(Builder *b, Type *t, double v)
{
	Op *op = b_op(b, OP_CONST, 0, NULL, t);

	attr_set_float(b_ctx(b), &op->attrs, "value", v);
	return op->res[0];
}

Value
b_cmp(Builder *b, const char *pred, Value x, Value y)
{
	IrCtx *c = b_ctx(b);
	Type *t = ty_like(c, ir_type(b->fn, x), ty_scalar(c, TY_I1));
	Value v = b_op2(b, OP_CMP, t, x, y);

	attr_set_sym(c, &b->fn->vals.v[v].def->attrs, "pred", pred);
	return v;
}

Value
b_with_int(Builder *b, OpKind k, Type *rt, const char *attr, int64_t v)
{
	Op *op = b_op(b, k, 0, NULL, rt);

	attr_set_int(b_ctx(b), &op->attrs, attr, v);
	return op->res[0];
}
