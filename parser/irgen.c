/*
 * irgen.c: the IR side of sema -- building ops at the current insertion
 * point with the current source location, constants, and the syntactic
 * scan that finds which variables a loop or branch assigns (they become
 * loop-carried block arguments or `if` results).
 */
#include "parser/semaint.h"

void
ig_set_loc(Sema *s, SrcRange loc)
{
	if (s->b)
		s->b->loc = range_begin(loc);
}

bool
ig_need_builder(Sema *s, SrcRange loc)
{
	if (s->b)
		return true;
	if (s->const_what)
		diag_error(s->diag, loc, "%s must be a compile-time constant",
			   s->const_what);
	else
		diag_error(s->diag, loc, "expression is not a compile-time "
			   "constant");
	return false;
}

Value
ig_const(Sema *s, Type *t, CVal c)
{
	if (ty_is_float(t))
		return b_const_float(s->b, t, c.f);
	return b_const_int(s->b, t, c.i);
}

Op *
ig_opn(Sema *s, OpKind k, uint32_t n, const Value *v, Type *t, SrcRange loc)
{
	ig_set_loc(s, loc);
	return b_op(s->b, k, n, v, t);
}

Value
ig_op1(Sema *s, OpKind k, Type *t, Value a, SrcRange loc)
{
	return ig_opn(s, k, 1, &a, t, loc)->res[0];
}

Value
ig_op2(Sema *s, OpKind k, Type *t, Value a, Value b, SrcRange loc)
{
	Value v[2] = { a, b };

	return ig_opn(s, k, 2, v, t, loc)->res[0];
}

Value
ig_op3(Sema *s, OpKind k, Type *t, Value a, Value b, Value c, SrcRange loc)
{
	Value v[3] = { a, b, c };

	return ig_opn(s, k, 3, v, t, loc)->res[0];
}

static void
add_name(Sema *s, NameVec *out, const char *name)
{
	uint32_t i;

	for (i = 0; i < out->n; i++)
		if (out->v[i] == name)
			return;
	vec_push(s->arena, out, name);
}

void
ig_assigned_names(Sema *s, Ast *n, NameVec *out)
{
	uint32_t i;

	if (!n)
		return;
	if (n->kind == AST_ASSIGN)
		add_name(s, out, n->name);
	/* a nested fn or kernel cannot appear inside a body; expressions
	 * contain no assignments, but walking them is harmless */
	ig_assigned_names(s, n->a, out);
	ig_assigned_names(s, n->b, out);
	ig_assigned_names(s, n->c, out);
	ig_assigned_names(s, n->d, out);
	for (i = 0; i < n->list.n; i++)
		ig_assigned_names(s, n->list.v[i], out);
}
