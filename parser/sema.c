/*
 * sema.c: scopes, declarations and statements; structured control flow
 * with loop-carried variables; device-function instantiation; tasks;
 * kernels and their specialization on const parameters; front_lower().
 *
 * A `var` is SSA-renamed as it is assigned: its symbol holds the current
 * value.  Before a loop or an `if`, the variables its body assigns (a
 * syntactic scan) become block arguments / results, so the IR carries
 * them explicitly.
 */
#include <stdlib.h>
#include <string.h>

#include "lexer/lex.h"
#include "parser/semaint.h"

/* ---- scopes ---------------------------------------------------------------- */

void
sema_push_scope(Sema *s)
{
	Scope *sc = arena_alloc(s->arena, sizeof *sc);

	sc->up = s->scope;
	sc->depth = s->scope ? s->scope->depth + 1 : 0;
	s->scope = sc;
}

void
sema_pop_scope(Sema *s)
{
	s->scope = s->scope->up;
}

/* Names are interned, so a symbol is found by the name's address.  A
 * scope's list is searched directly while short; past SCOPE_LIST symbols
 * (a block of thousands of lets) it has an open-addressing table. */
enum { SCOPE_LIST = 16 };

static uint32_t
name_hash(const char *name)
{
	uint64_t h = (uint64_t)(uintptr_t)name * 0x9e3779b97f4a7c15ull;

	return (uint32_t)(h >> 32);
}

static Sym *
scope_find(Scope *sc, const char *name)
{
	Sym *y;
	uint32_t i;

	if (!sc->tab) {
		for (y = sc->syms; y; y = y->next)
			if (y->name == name)
				return y;
		return NULL;
	}
	for (i = name_hash(name) & (sc->cap - 1); (y = sc->tab[i]);
	     i = (i + 1) & (sc->cap - 1))
		if (y->name == name)
			return y;
	return NULL;
}

static void
scope_table_put(Scope *sc, Sym *y)
{
	uint32_t i = name_hash(y->name) & (sc->cap - 1);

	while (sc->tab[i])
		i = (i + 1) & (sc->cap - 1);
	sc->tab[i] = y;
}

/* Adds y (not yet in the scope) to its list and, for a long scope, its
 * table, grown to keep it at most half full. */
static void
scope_add(Sema *s, Scope *sc, Sym *y)
{
	Sym *z;

	y->next = sc->syms;
	sc->syms = y;
	sc->nsyms++;
	if (sc->nsyms <= SCOPE_LIST)
		return;
	if (2 * sc->nsyms > sc->cap) {
		sc->cap = sc->cap ? 2 * sc->cap : 4 * SCOPE_LIST;
		sc->tab = arena_alloc(s->arena, sc->cap * sizeof *sc->tab);
		memset(sc->tab, 0, sc->cap * sizeof *sc->tab);
		/* the list is newest first; shadowing within a scope is refused,
		 * so every name is in it once */
		for (z = sc->syms; z; z = z->next)
			scope_table_put(sc, z);
		return;
	}
	scope_table_put(sc, y);
}

Sym *
sema_lookup(Sema *s, const char *name)
{
	Scope *sc;
	Sym *y;

	for (sc = s->scope; sc; sc = sc->up)
		if ((y = scope_find(sc, name)))
			return y;
	return NULL;
}

Sym *
sema_declare(Sema *s, SymKind k, const char *name, SrcRange loc)
{
	Sym *y;

	if ((y = scope_find(s->scope, name))) {
		diag_error(s->diag, loc, "redefinition of '%s'", name);
		diag_note(s->diag, y->loc, "'%s' was defined here", name);
		return NULL;
	}
	if (s->scope == s->globals && sema_is_builtin(name)) {
		/* local names may shadow builtins; file-level ones may not */
		diag_error(s->diag, loc, "'%s' is a builtin function and cannot "
			   "be redefined", name);
		return NULL;
	}
	y = arena_alloc(s->arena, sizeof *y);
	y->kind = k;
	y->name = name;
	y->loc = loc;
	y->depth = s->scope->depth;
	y->task = s->task;
	scope_add(s, s->scope, y);
	return y;
}

static void
name_value(Sema *s, SVal *v, const char *name)
{
	if (v->kind != SV_ERROR && v->v && s->fn && v->v < s->fn->vals.n &&
	    !s->fn->vals.v[v->v].name)
		ir_value_set_name(s->fn, v->v, name);
}

/* ---- region ops -------------------------------------------------------------- */

static Op *
region_op(Sema *s, OpKind k, uint32_t n, const Value *ops, uint32_t nres,
	  Type *const *rt, uint32_t nreg, SrcRange loc)
{
	ig_set_loc(s, loc);
	return b_insert(s->b, ir_op_new(s->fn, k, n, ops, nres, rt, nreg));
}

/* Switches the builder into `blk` (appending); returns the old one. */
static Builder
enter(Sema *s, Block *blk)
{
	Builder old = *s->b;

	s->b->blk = blk;
	s->b->before = NULL;
	return old;
}

static void
leave(Sema *s, Builder old)
{
	*s->b = old;
}

static void
yield_syms(Sema *s, Sym **syms, uint32_t n, OpKind k, SrcRange loc)
{
	Value *v = arena_alloc(s->arena, (n + 1) * sizeof *v);
	uint32_t i;

	for (i = 0; i < n; i++)
		v[i] = syms[i]->val.v;
	ig_opn(s, k, n, v, NULL, loc);
}

/* The visible variables that `body` assigns, with their current values
 * materialized (they become loop-carried or branch results). */
static uint32_t
carried(Sema *s, Ast *a, Ast *b, Sym ***out)
{
	NameVec names = { 0 };
	Sym **syms;
	uint32_t i, n = 0;

	ig_assigned_names(s, a, &names);
	ig_assigned_names(s, b, &names);
	syms = arena_alloc(s->arena, (names.n + 1) * sizeof *syms);
	for (i = 0; i < names.n; i++) {
		Sym *y = sema_lookup(s, names.v[i]);

		if (y && y->kind == SYM_VAR && (y->val.kind == SV_VALUE ||
						 y->val.kind == SV_SLOT) &&
		    y->val.v)
			syms[n++] = y;
	}
	*out = syms;
	return n;
}

/* ---- statements ---------------------------------------------------------------- */

static SVal
settle_value(Sema *s, SVal v, SrcRange loc)
{
	if (v.kind == SV_VALUE && v.weak)
		v = sema_convert(s, v, ty_elem(v.ty), loc);
	v.weak = false;
	return v;
}

/* Converts v to the declared type t (element conversion and scalar
 * broadcast only), for `let x: T = v` and typed parameters.  The result
 * has type t and is no longer weak, even when v's literal type was t
 * already (sema_convert leaves a value of the right type alone). */
static SVal
to_declared(Sema *s, SVal v, Type *t, const char *what, SrcRange loc)
{
	if (v.kind == SV_ERROR || !t)
		return sv_error();
	if (v.kind != SV_VALUE || (t->kind == TY_TILE && v.ty->kind == TY_TILE &&
				   (v.ty->rank != t->rank ||
				    memcmp(v.ty->shape, t->shape, sizeof t->shape))) ||
	    (t->kind != TY_TILE && v.ty->kind == TY_TILE) ||
	    (!v.weak && ty_elem(v.ty) != ty_elem(t) &&
	     (ty_is_ptr(v.ty) || ty_is_ptr(t)))) {
		diag_error(s->diag, loc, "%s has type '%s' but the value is %s",
			   what, sema_type_str(s, t), sv_describe(s, &v));
		return sv_error();
	}
	v = sema_convert(s, v, ty_elem(t), loc);
	if (v.kind == SV_ERROR)
		return v;
	v.weak = false;
	return t->kind == TY_TILE ? sema_broadcast(s, v, t, loc) : v;
}

static void
stmt_let(Sema *s, Ast *st)
{
	SVal v = sema_expr(s, st->b);
	uint32_t i;
	Sym *y;

	if (v.kind == SV_VOID) {
		diag_error(s->diag, st->b->loc, "this call returns no value");
		v = sv_error();
	}
	if (st->list.n) {  /* let (a, b) = tuple */
		if (v.kind != SV_ERROR && (v.kind != SV_TUPLE ||
					   v.nelems != st->list.n)) {
			diag_error(s->diag, st->b->loc, "cannot unpack %s into %u "
				   "names", sv_describe(s, &v), st->list.n);
			v = sv_error();
		}
		for (i = 0; i < st->list.n; i++) {
			Ast *n = st->list.v[i];

			if (!(y = sema_declare(s, SYM_LET, n->name, n->loc)))
				continue;
			y->val = v.kind == SV_ERROR ? v : v.elems[i];
			name_value(s, &y->val, n->name);
		}
		return;
	}
	if (st->a && v.kind != SV_ERROR)
		v = to_declared(s, v, sema_type(s, st->a),
				arena_printf(s->arena, "'%s'", st->name), st->loc);
	if (!(y = sema_declare(s, SYM_LET, st->name, st->loc)))
		return;
	y->val = v;
	y->ast = st;
	name_value(s, &y->val, st->name);
}

static void
stmt_var(Sema *s, Ast *st)
{
	SVal v = sema_expr(s, st->b);
	Sym *y;

	if (st->a && v.kind != SV_ERROR)
		v = to_declared(s, v, sema_type(s, st->a),
				arena_printf(s->arena, "'%s'", st->name), st->loc);
	if (v.kind != SV_ERROR && v.kind != SV_VALUE && v.kind != SV_SLOT) {
		diag_error(s->diag, st->b->loc, "a 'var' holds a scalar, a tile or "
			   "a pipe slot, not %s; use 'let'", sv_describe(s, &v));
		v = sv_error();
	}
	v = settle_value(s, v, st->loc);
	if (v.kind != SV_ERROR && (!ig_need_builder(s, st->loc) ||
				   !sema_materialize(s, &v)))
		v = sv_error();
	if (!(y = sema_declare(s, SYM_VAR, st->name, st->loc)))
		return;
	y->val = v;
	y->ast = st;
	name_value(s, &y->val, st->name);
}

static void
stmt_assign(Sema *s, Ast *st)
{
	Sym *y = sema_lookup(s, st->name);
	SVal v, cur;
	Type *t;

	if (!y) {
		diag_error(s->diag, st->loc, "unknown name '%s'", st->name);
		sema_expr(s, st->b);
		return;
	}
	if (y->kind != SYM_VAR) {
		diag_error(s->diag, st->loc, "cannot assign to '%s': it is not "
			   "a 'var'", st->name);
		diag_note(s->diag, y->loc, "'%s' was declared here", st->name);
		return;
	}
	if (y->task != s->task && s->in_tasks) {
		diag_error(s->diag, st->loc, "a task cannot assign to '%s', which "
			   "is declared outside the task (tasks run "
			   "concurrently)", st->name);
		return;
	}
	cur = y->val;
	v = sema_expr(s, st->b);
	if (st->op != BIN_NONE)
		v = sema_binary(s, st->op, cur, v, st->loc);
	if (v.kind == SV_ERROR || cur.kind == SV_ERROR)
		return;
	if (cur.kind == SV_SLOT) {
		/* a slot variable keeps its pipe and role: what can be
		 * released or committed through it (a slot assigned to
		 * any other variable is refused below, as not a value) */
		if (v.kind != SV_SLOT || v.sym != cur.sym ||
		    v.producer != cur.producer) {
			diag_error(s->diag, st->loc, "cannot assign %s to '%s', "
				   "a slot of pipe '%s' from '%s()'",
				   sv_describe(s, &v), st->name, cur.sym->name,
				   cur.producer ? "acquire" : "consume");
			return;
		}
		y->val = v;
		name_value(s, &y->val, st->name);
		return;
	}
	t = cur.ty;
	if (v.kind != SV_VALUE || (!v.weak && ty_elem(v.ty) != ty_elem(t)) ||
	    (v.ty->kind == TY_TILE && v.ty != ty_like(s->ir, t, ty_elem(v.ty)))) {
		diag_error(s->diag, st->loc, "cannot assign %s to '%s' of type "
			   "'%s'%s", sv_describe(s, &v), st->name,
			   sema_type_str(s, t), v.kind == SV_VALUE &&
			   ty_elem(v.ty) != ty_elem(t) ? "; convert with .to()" : "");
		return;
	}
	v = sema_convert(s, v, ty_elem(t), st->loc);
	if (v.kind != SV_ERROR)
		v = sema_broadcast(s, v, t, st->loc);
	if (v.kind == SV_ERROR || !sema_materialize(s, &v))
		return;
	y->val = v;
	y->val.weak = false;
	name_value(s, &y->val, st->name);
}

static bool
scalar_bool(Sema *s, Ast *e, SVal *c)
{
	*c = sema_expr(s, e);
	if (c->kind == SV_ERROR)
		return false;
	if (!sv_is_scalar(c) || ty_elem(c->ty)->kind != TY_I1) {
		diag_error(s->diag, e->loc, "a condition must be a scalar boolean, "
			   "got %s%s", sv_describe(s, c),
			   c->kind == SV_VALUE && c->ty->kind == TY_TILE
			   ? "; use where() to select elementwise" : "");
		return false;
	}
	return true;
}

/* Binds the carried variables to new values: block arguments or results. */
static void
rebind(Sema *s, Sym **syms, uint32_t n, const Value *vals)
{
	uint32_t i;

	for (i = 0; i < n; i++) {
		syms[i]->val.v = vals[i];
		syms[i]->val.is_const = false;
		name_value(s, &syms[i]->val, syms[i]->name);
	}
}

static void
stmt_if(Sema *s, Ast *st)
{
	SVal c;
	Sym **syms;
	uint32_t n, i;
	Op *op;
	Builder old;

	if (!scalar_bool(s, st->a, &c))
		return;
	if (c.is_const && !c.v) {  /* only the taken branch is checked */
		if (cv_truthy(c.cval))
			sema_stmt(s, st->b);
		else if (st->c)
			sema_stmt(s, st->c);
		return;
	}
	n = carried(s, st->b, st->c, &syms);
	{
		Type **rt = arena_alloc(s->arena, (n + 1) * sizeof *rt);
		SVal *saved = arena_alloc(s->arena, (n + 1) * sizeof *saved);

		for (i = 0; i < n; i++) {
			rt[i] = syms[i]->val.ty;
			saved[i] = syms[i]->val;
		}
		op = region_op(s, OP_IF, 1, &c.v, n, rt, 2, st->loc);
		for (i = 0; i < 2; i++) {
			Ast *body = i == 0 ? st->b : st->c;
			uint32_t j;

			old = enter(s, op->regions[i]);
			if (body)
				sema_stmt(s, body);
			yield_syms(s, syms, n, OP_YIELD, st->loc);
			leave(s, old);
			for (j = 0; j < n; j++)
				syms[j]->val = saved[j];
		}
		rebind(s, syms, n, op->res);
	}
}

static bool
loop_bound(Sema *s, Ast *e, const char *what, SVal *out)
{
	*out = sema_expr(s, e);
	if (out->kind == SV_ERROR)
		return false;
	if (!sv_is_scalar(out) || !ty_is_int(out->ty) ||
	    ty_elem(out->ty)->kind == TY_I1) {
		diag_error(s->diag, e->loc, "%s of a loop must be a scalar integer, "
			   "got %s", what, sv_describe(s, out));
		return false;
	}
	return true;
}

/* Runs a loop body in a block whose arguments are (iv, carried...). */
static void
loop_body(Sema *s, Op *op, Block *blk, const char *ivname, Sym **syms,
	  uint32_t n, Ast *body)
{
	Builder old = enter(s, blk);
	Sym *y;

	sema_push_scope(s);
	if (ivname && (y = sema_declare(s, SYM_LET, ivname, body->loc))) {
		y->val = sv_value(ir_type(s->fn, blk->args[0]), blk->args[0],
				  body->loc);
		name_value(s, &y->val, ivname);
	}
	rebind(s, syms, n, blk->args + 1);
	s->loop_depth++;
	sema_block(s, body);
	s->loop_depth--;
	yield_syms(s, syms, n, OP_YIELD, body->loc);
	sema_pop_scope(s);
	leave(s, old);
	rebind(s, syms, n, op->res);
}

static void
stmt_for(Sema *s, Ast *st)
{
	SVal lo, hi, step;
	Sym **syms;
	uint32_t n, i;
	Type *it;

	if (!loop_bound(s, st->a, "the start", &lo) ||
	    !loop_bound(s, st->b, "the end", &hi))
		return;
	if (st->c) {
		if (!loop_bound(s, st->c, "the step", &step))
			return;
	} else {
		step = sv_const_int(s, TY_I32, 1, st->loc);
		step.weak = true;
	}
	if (step.is_const && !step.v && step.cval.i <= 0) {
		diag_error(s->diag, st->c->loc, "the step of a loop must be "
			   "positive, got %lld", (long long)step.cval.i);
		return;
	}
	if (!(it = sema_promote(s, &lo, &hi, st->loc)))
		return;
	lo = sema_convert(s, lo, it, st->loc);
	hi = sema_convert(s, hi, it, st->loc);
	/* a literal no bound's type holds is an error, reported */
	if (lo.kind == SV_ERROR || hi.kind == SV_ERROR ||
	    !(it = sema_promote(s, &hi, &step, st->loc)))
		return;
	lo = sema_convert(s, lo, it, st->loc);
	hi = sema_convert(s, hi, it, st->loc);
	step = sema_convert(s, step, it, st->loc);
	if (lo.kind == SV_ERROR || hi.kind == SV_ERROR || step.kind == SV_ERROR ||
	    !ig_need_builder(s, st->loc))
		return;
	n = carried(s, st->d, NULL, &syms);
	{
		Value *ops = arena_alloc(s->arena, (3 + n) * sizeof *ops);
		Type **rt = arena_alloc(s->arena, (n + 1) * sizeof *rt);
		Op *op;

		ops[0] = sema_materialize(s, &lo);
		ops[1] = sema_materialize(s, &hi);
		ops[2] = sema_materialize(s, &step);
		for (i = 0; i < n; i++) {
			ops[3 + i] = syms[i]->val.v;
			rt[i] = syms[i]->val.ty;
		}
		op = region_op(s, OP_FOR, 3 + n, ops, n, rt, 1, st->loc);
		ir_block_add_arg(op->regions[0], it);
		for (i = 0; i < n; i++)
			ir_block_add_arg(op->regions[0], rt[i]);
		loop_body(s, op, op->regions[0], st->name, syms, n, st->d);
	}
}

static void
stmt_foreach(Sema *s, Ast *st)
{
	SVal w = sema_expr(s, st->a);
	Sym **syms;
	uint32_t n, i;

	if (w.kind == SV_ERROR)
		return;
	if (w.kind != SV_SCHED) {
		diag_error(s->diag, st->a->loc, "'for %s in' iterates a tile "
			   "schedule from tiles(...) or a range 'a .. b', not %s",
			   st->name, sv_describe(s, &w));
		return;
	}
	n = carried(s, st->d, NULL, &syms);
	{
		Value *ops = arena_alloc(s->arena, (1 + n) * sizeof *ops);
		Type **rt = arena_alloc(s->arena, (n + 1) * sizeof *rt);
		Op *op;

		ops[0] = w.v;
		for (i = 0; i < n; i++) {
			ops[1 + i] = syms[i]->val.v;
			rt[i] = syms[i]->val.ty;
		}
		op = region_op(s, OP_SCHED_FOR, 1 + n, ops, n, rt, 1, st->loc);
		ir_block_add_arg(op->regions[0], ty_of_scalar(s, TY_I32));
		for (i = 0; i < n; i++)
			ir_block_add_arg(op->regions[0], rt[i]);
		loop_body(s, op, op->regions[0], st->name, syms, n, st->d);
	}
}

static void
stmt_while(Sema *s, Ast *st)
{
	Sym **syms;
	uint32_t n, i;
	Builder old;

	if (!ig_need_builder(s, st->loc))
		return;
	n = carried(s, st->d, NULL, &syms);
	{
		Value *ops = arena_alloc(s->arena, (n + 1) * sizeof *ops);
		Value *cv = arena_alloc(s->arena, (n + 1) * sizeof *cv);
		Type **rt = arena_alloc(s->arena, (n + 1) * sizeof *rt);
		Op *op;
		SVal c;

		for (i = 0; i < n; i++) {
			ops[i] = syms[i]->val.v;
			rt[i] = syms[i]->val.ty;
		}
		op = region_op(s, OP_WHILE, n, ops, n, rt, 2, st->loc);
		for (i = 0; i < n; i++) {
			ir_block_add_arg(op->regions[0], rt[i]);
			ir_block_add_arg(op->regions[1], rt[i]);
		}
		old = enter(s, op->regions[0]);
		rebind(s, syms, n, op->regions[0]->args);
		if (!scalar_bool(s, st->a, &c) || !sema_materialize(s, &c))
			c = sv_const_int(s, TY_I1, 0, st->loc), sema_materialize(s, &c);
		cv[0] = c.v;
		for (i = 0; i < n; i++)
			cv[1 + i] = syms[i]->val.v;
		ig_opn(s, OP_CONDITION, 1 + n, cv, NULL, st->a->loc);
		leave(s, old);

		old = enter(s, op->regions[1]);
		sema_push_scope(s);
		rebind(s, syms, n, op->regions[1]->args);
		s->loop_depth++;
		sema_block(s, st->d);
		s->loop_depth--;
		yield_syms(s, syms, n, OP_YIELD, st->loc);
		sema_pop_scope(s);
		leave(s, old);
		rebind(s, syms, n, op->res);
	}
}

static void
stmt_shared(Sema *s, Ast *st)
{
	Type *t = sema_smem_type(s, st->a);
	Sym *y;
	Op *op;

	if (!t || !ig_need_builder(s, st->loc))
		return;
	op = ig_opn(s, OP_SMEM_ALLOC, 0, NULL, t, st->loc);
	attr_set_str(s->ir, &op->attrs, "name", st->name);
	if ((y = sema_declare(s, SYM_LET, st->name, st->loc))) {
		y->val = (SVal){ .kind = SV_SMEM, .ty = t, .v = op->res[0],
				 .loc = st->loc };
		name_value(s, &y->val, st->name);
	}
}

static bool
top_level(Sema *s, Ast *st, const char *what)
{
	if (!s->kernel || s->loop_depth || s->in_tasks ||
	    s->scope->depth != s->kernel_depth) {
		diag_error(s->diag, st->loc, "%s must be declared at the top level "
			   "of a kernel body, outside loops, branches and tasks",
			   what);
		return false;
	}
	return true;
}

static void
stmt_barrier(Sema *s, Ast *st)
{
	static const char *const names[] = { "arrive", NULL };
	int64_t n, arrive = 1;
	CallArgs a;
	Ast *e;
	Sym *y;
	Op *op;

	if (!top_level(s, st, "barriers") ||
	    !sema_const_int_in(s, st->a, "the number of barriers", 1, 1024, &n) ||
	    !sema_args(s, st, "barrier", 0, 0, names, &a))
		return;
	if ((e = sema_named(&a, "arrive")) &&
	    !sema_const_int_in(s, e, "the arrival count", 1, 1 << 20, &arrive))
		return;
	op = ig_opn(s, OP_MBAR_ALLOC, 0, NULL, ty_mbar(s->ir, n), st->loc);
	attr_set_int(s->ir, &op->attrs, "arrive", arrive);
	if ((y = sema_declare(s, SYM_LET, st->name, st->loc))) {
		y->val = (SVal){ .kind = SV_MBAR, .ty = ty_mbar(s->ir, n),
				 .v = op->res[0], .loc = st->loc };
		name_value(s, &y->val, st->name);
	}
}

/* A pipe's slots start 128-byte aligned, as TMA copies into them need:
 * where a field's bytes are not a multiple of 128, its first dimension is
 * padded (field_expr's slice gives the slot the field's own shape). */
static void
slot_rows(Type *t, int64_t *shape)
{
	int64_t inner = ty_bytes(t), unit = 1;
	int d;

	for (d = 1; d < t->rank; d++)
		inner *= t->shape[d];
	if (inner * t->shape[0] % 128 == 0)
		return;
	while (inner * unit % 128)
		unit *= 2;
	shape[0] = (t->shape[0] + unit - 1) / unit * unit;
}

static void
stmt_pipe(Sema *s, Ast *st)
{
	int64_t depth;
	uint32_t i;
	Sym *y;
	Op *op;

	if (!top_level(s, st, "pipes") ||
	    !sema_const_int_in(s, st->a, "the depth of a pipe", 1, 64, &depth))
		return;
	if (!(y = sema_declare(s, SYM_PIPE, st->name, st->loc)))
		return;
	y->nfields = st->list.n;
	y->depth_n = depth;
	y->fnames = arena_alloc(s->arena, (st->list.n + 1) * sizeof *y->fnames);
	y->fbufs = arena_alloc(s->arena, (st->list.n + 1) * sizeof *y->fbufs);
	y->ftypes = arena_alloc(s->arena, (st->list.n + 1) * sizeof *y->ftypes);
	for (i = 0; i < st->list.n; i++) {
		Ast *f = st->list.v[i];
		Type *t = sema_type(s, f->a);
		int64_t shape[TY_MAX_RANK];
		uint32_t j;

		for (j = 0; j < i; j++)
			if (y->fnames[j] == f->name) {
				diag_error(s->diag, f->loc, "pipe '%s' has two "
					   "fields named '%s'", st->name, f->name);
				return;
			}
		if (!t)
			return;
		if (t->kind != TY_TILE || t->rank >= TY_MAX_RANK) {
			diag_error(s->diag, f->a->loc, "a pipe field is a tile type "
				   "of rank 1 to %d, such as 'bf16[128, 64]'",
				   TY_MAX_RANK - 1);
			return;
		}
		shape[0] = depth;
		memcpy(shape + 1, t->shape, (size_t)t->rank * sizeof *shape);
		slot_rows(t, shape + 1);
		y->fnames[i] = f->name;
		y->ftypes[i] = ty_smem(s->ir, t->elem, t->rank, t->shape);
		op = ig_opn(s, OP_SMEM_ALLOC, 0, NULL,
			    ty_smem(s->ir, t->elem, t->rank + 1, shape), f->loc);
		attr_set_str(s->ir, &op->attrs, "name",
			     arena_printf(s->arena, "%s.%s", st->name, f->name));
		y->fbufs[i] = op->res[0];
	}
	op = ig_opn(s, OP_PIPE_CREATE, st->list.n, y->fbufs,
		    ty_simple(s->ir, TY_PIPE), st->loc);
	attr_set_int(s->ir, &op->attrs, "depth", depth);
	y->pipe = op->res[0];
	ir_value_set_name(s->fn, y->pipe, st->name);
}

/* ---- tasks ---------------------------------------------------------------------------- */

typedef struct TaskArgs {
	int64_t warps, regs, replicate;
	SrcRange loc;
} TaskArgs;

static bool
task_args(Sema *s, Ast *t, TaskArgs *ta)
{
	static const char *const names[] = { "warps", "regs", "replicate", NULL };
	CallArgs a;
	Ast *e;

	ta->warps = s->warps;
	ta->regs = 0;
	ta->replicate = 1;
	ta->loc = t->loc;
	if (!sema_args(s, t, t->name, 0, 0, names, &a))
		return false;
	if ((e = sema_named(&a, "warps")) &&
	    !sema_const_int(s, e, "the warps of a task", &ta->warps))
		return false;
	if ((e = sema_named(&a, "regs")) &&
	    !sema_const_int(s, e, "a register budget", &ta->regs))
		return false;
	if ((e = sema_named(&a, "replicate")) &&
	    !sema_const_int(s, e, "the replica count", &ta->replicate))
		return false;
	if (ta->warps < 1 || ta->warps > 32) {
		diag_error(s->diag, t->loc, "a task has 1 to 32 warps, got %lld",
			   (long long)ta->warps);
		return false;
	}
	if (ta->regs && (ta->regs < 24 || ta->regs > 256 || ta->regs % 8)) {
		diag_error(s->diag, sema_named(&a, "regs")->loc, "a register "
			   "budget is a multiple of 8 between 24 and 256, got "
			   "%lld", (long long)ta->regs);
		return false;
	}
	if (ta->replicate < 1 || ta->replicate > 8) {
		diag_error(s->diag, t->loc, "a task is replicated 1 to 8 times, "
			   "got %lld", (long long)ta->replicate);
		return false;
	}
	return true;
}

/* Budgets must be given for all tasks or none, and fit the register
 * file (64K 32-bit registers per SM); at most 1024 threads. */
static bool
check_budgets(Sema *s, Ast *st, TaskArgs *ta, uint32_t n)
{
	int64_t regs = 0, warps = 0;
	uint32_t i, with = 0;

	for (i = 0; i < n; i++) {
		warps += ta[i].warps * ta[i].replicate;
		regs += ta[i].regs * 32 * ta[i].warps * ta[i].replicate;
		with += ta[i].regs != 0;
	}
	if (warps > 32) {
		diag_error(s->diag, st->loc, "the tasks need %lld warps; a program "
			   "has at most 32 (1024 threads)", (long long)warps);
		return false;
	}
	if (with && with != n) {
		diag_error(s->diag, st->loc, "give every task a register budget "
			   "'regs:', or none");
		return false;
	}
	if (regs > 65536) {
		diag_error(s->diag, st->loc, "the register budgets add up to %lld "
			   "registers, more than the 65536 of an SM: lower the "
			   "tasks' 'regs:' or their warps", (long long)regs);
		for (i = 0; i < n; i++)
			diag_note(s->diag, ta[i].loc, "this task takes %lld x 32 "
				  "threads x %lld warps x %lld", (long long)ta[i].regs,
				  (long long)ta[i].warps, (long long)ta[i].replicate);
		return false;
	}
	return true;
}

/* The checks of a tasks statement's header: where one fails, the task
 * bodies are not read (s->skipped). */
static bool
tasks_header_ok(Sema *s, Ast *st, TaskArgs *ta)
{
	uint32_t i, j;

	if (!top_level(s, st, "tasks"))
		return false;
	if (st->list.n == 0) {
		diag_error(s->diag, st->loc, "'tasks' needs at least one task");
		return false;
	}
	for (i = 0; i < st->list.n; i++) {
		for (j = 0; j < i; j++)
			if (st->list.v[j]->name == st->list.v[i]->name) {
				diag_error(s->diag, st->list.v[i]->loc, "two tasks "
					   "are named '%s'", st->list.v[i]->name);
				return false;
			}
		if (!task_args(s, st->list.v[i], &ta[i]))
			return false;
	}
	return check_budgets(s, st, ta, st->list.n);
}

static void
stmt_tasks(Sema *s, Ast *st)
{
	TaskArgs *ta = arena_alloc(s->arena, (st->list.n + 1) * sizeof *ta);
	uint32_t i;
	Op *tasks;
	Builder old, old2;
	int64_t r;

	if (!tasks_header_ok(s, st, ta)) {
		s->skipped = true;
		return;
	}
	tasks = region_op(s, OP_TASKS, 0, NULL, 0, NULL, 1, st->loc);
	old = enter(s, tasks->regions[0]);
	for (i = 0; i < st->list.n; i++) {
		Ast *t = st->list.v[i];

		for (r = 0; r < ta[i].replicate; r++) {
			Op *op = region_op(s, OP_TASK, 0, NULL, 0, NULL, 1, t->loc);

			attr_set_str(s->ir, &op->attrs, "name", t->name);
			attr_set_int(s->ir, &op->attrs, "warps", ta[i].warps);
			attr_set_int(s->ir, &op->attrs, "regs", ta[i].regs);
			attr_set_int(s->ir, &op->attrs, "replica", r);
			old2 = enter(s, op->regions[0]);
			s->in_tasks = true;
			s->task++;
			s->replica = r;
			sema_push_scope(s);
			sema_block(s, t->d);
			sema_pop_scope(s);
			s->in_tasks = false;
			ig_opn(s, OP_YIELD, 0, NULL, NULL, t->loc);
			leave(s, old2);
		}
	}
	ig_opn(s, OP_YIELD, 0, NULL, NULL, st->loc);
	leave(s, old);
	s->task = 0;
}

static void
stmt_static_assert(Sema *s, Ast *st)
{
	Builder *saved = s->b;
	SVal c;

	s->b = NULL;
	s->const_what = "the condition of static_assert";
	c = sema_expr(s, st->a);
	s->const_what = NULL;
	s->b = saved;
	if (c.kind == SV_ERROR)
		return;
	if (!c.is_const || ty_elem(c.ty)->kind != TY_I1) {
		diag_error(s->diag, st->a->loc, "static_assert needs a constant "
			   "boolean, got %s", sv_describe(s, &c));
		return;
	}
	if (!c.cval.i)
		diag_error(s->diag, st->a->loc, "static assertion failed%s%s",
			   st->b ? ": " : "", st->b ? st->b->name : "");
}

static void
stmt_return(Sema *s, Ast *st)
{
	if (!s->at_end) {
		diag_error(s->diag, st->loc, "'return' must be the last statement "
			   "of a %s body (loops and branches are structured)",
			   s->kernel ? "kernel" : "function");
		return;
	}
	if (s->kernel) {
		if (st->a)
			diag_error(s->diag, st->a->loc, "a kernel returns no "
				   "value");
		return;
	}
	s->has_return = true;
	s->ret = st->a ? sema_expr(s, st->a) : (SVal){ .kind = SV_VOID };
}

void
sema_stmt(Sema *s, Ast *st)
{
	bool at_end = s->at_end;

	if (s->diag->stopped)
		return;
	s->at_end = false;
	switch (st->kind) {
	case AST_LET: stmt_let(s, st); break;
	case AST_VAR: stmt_var(s, st); break;
	case AST_ASSIGN: stmt_assign(s, st); break;
	case AST_IF: stmt_if(s, st); break;
	case AST_FOR: stmt_for(s, st); break;
	case AST_FOREACH: stmt_foreach(s, st); break;
	case AST_WHILE: stmt_while(s, st); break;
	case AST_SHARED: stmt_shared(s, st); break;
	case AST_BARRIER: stmt_barrier(s, st); break;
	case AST_PIPE: stmt_pipe(s, st); break;
	case AST_TASKS: stmt_tasks(s, st); break;
	case AST_STATIC_ASSERT: stmt_static_assert(s, st); break;
	case AST_RETURN:
		s->at_end = at_end;
		stmt_return(s, st);
		break;
	case AST_BREAK:
	case AST_CONTINUE:
		diag_error(s->diag, st->loc, "'%s' is not supported: loops are "
			   "structured; use a 'while' loop with a condition",
			   st->kind == AST_BREAK ? "break" : "continue");
		break;
	case AST_BLOCK:
		sema_push_scope(s);
		sema_block(s, st);
		sema_pop_scope(s);
		break;
	case AST_EXPRSTMT: {
		SVal v = sema_expr(s, st->a);

		if (v.kind == SV_VALUE && st->a->kind != AST_CALL &&
		    st->a->kind != AST_METHOD)
			diag_warning(s->diag, st->a->loc, "expression result "
				     "unused");
		break;
	}
	default:
		diag_error(s->diag, st->loc, "expected a statement");
		break;
	}
}

void
sema_block(Sema *s, Ast *block)
{
	uint32_t i;
	bool top = s->body_top == block;

	for (i = 0; i < block->list.n && !s->diag->stopped; i++) {
		s->at_end = top && i + 1 == block->list.n;
		sema_stmt(s, block->list.v[i]);
	}
	s->at_end = false;
}

/* ---- device functions ---------------------------------------------------------------- */

typedef struct SaveState {
	Func *fn;
	Builder *b;
	Scope *scope;
	Ast *kernel, *body_top;
	bool in_tasks, at_end, has_return;
	int task, loop_depth, kernel_depth;
	SVal ret;
} SaveState;

static SaveState
save_state(Sema *s)
{
	return (SaveState){ s->fn, s->b, s->scope, s->kernel, s->body_top,
			    s->in_tasks, s->at_end, s->has_return, s->task,
			    s->loop_depth, s->kernel_depth, s->ret };
}

static void
restore_state(Sema *s, SaveState *st)
{
	s->fn = st->fn;
	s->b = st->b;
	s->scope = st->scope;
	s->kernel = st->kernel;
	s->body_top = st->body_top;
	s->in_tasks = st->in_tasks;
	s->at_end = st->at_end;
	s->has_return = st->has_return;
	s->task = st->task;
	s->loop_depth = st->loop_depth;
	s->kernel_depth = st->kernel_depth;
	s->ret = st->ret;
}

/* Matches call arguments to the parameters of `fn` (positional, then by
 * name, then defaults) and evaluates them. */
static bool
fn_args(Sema *s, Ast *fn, Ast *call, SVal *args)
{
	uint32_t np = fn->list.n, i, next = 0;
	bool *given = arena_alloc(s->arena, (np + 1) * sizeof *given);

	for (i = 0; i < call->list.n; i++) {
		Ast *a = call->list.v[i];
		uint32_t k = next;

		if (a->kind == AST_ARG) {
			for (k = 0; k < np; k++)
				if (fn->list.v[k]->name == a->name)
					break;
			if (k == np) {
				diag_error(s->diag, a->loc, "'%s' has no parameter "
					   "'%s'", fn->name, a->name);
				return false;
			}
		} else if (next++ >= np) {
			diag_error(s->diag, a->loc, "too many arguments to '%s': "
				   "it takes %u", fn->name, np);
			return false;
		}
		if (given[k]) {
			diag_error(s->diag, a->loc, "parameter '%s' is given twice",
				   fn->list.v[k]->name);
			return false;
		}
		given[k] = true;
		args[k] = sema_expr(s, a->kind == AST_ARG ? a->a : a);
		if (args[k].kind == SV_ERROR)
			return false;
	}
	for (i = 0; i < np; i++) {
		Ast *p = fn->list.v[i];

		if (given[i])
			continue;
		if (!p->b) {
			diag_error(s->diag, call->loc, "missing argument '%s' in a "
				   "call to '%s'", p->name, fn->name);
			return false;
		}
		args[i] = sema_expr(s, p->b);
		if (args[i].kind == SV_ERROR)
			return false;
	}
	return true;
}

static bool
check_fn_arg(Sema *s, Ast *fn, Ast *p, SVal *v, SrcRange loc)
{
	if (p->is_const) {
		if (!v->is_const || v->v) {
			diag_error(s->diag, loc, "argument '%s' of '%s' must be a "
				   "compile-time constant, got %s", p->name,
				   fn->name, sv_describe(s, v));
			return false;
		}
	} else if (v->kind != SV_VALUE && v->kind != SV_SMEM &&
		   v->kind != SV_MBAR) {
		diag_error(s->diag, loc, "cannot pass %s to a device function "
			   "(parameter '%s' of '%s')", sv_describe(s, v), p->name,
			   fn->name);
		return false;
	}
	if (p->a) {
		*v = to_declared(s, *v, sema_type(s, p->a),
				 arena_printf(s->arena, "parameter '%s'", p->name),
				 loc);
		if (v->kind == SV_ERROR)
			return false;
	}
	*v = settle_value(s, *v, loc);
	return v->kind != SV_ERROR;
}

static Inst *
find_inst(Sema *s, Ast *fn, SVal *args, uint32_t n)
{
	Inst *in;
	uint32_t i;

	for (in = s->insts; in; in = in->next) {
		if (in->fn != fn || in->nargs != n)
			continue;
		for (i = 0; i < n; i++) {
			if (in->is_const[i] != (args[i].is_const && !args[i].v) ||
			    in->atypes[i] != args[i].ty)
				break;
			if (in->is_const[i] && (in->cvals[i].i != args[i].cval.i ||
						in->cvals[i].f != args[i].cval.f))
				break;
		}
		if (i == n)
			return in;
	}
	return NULL;
}

static void
bind_fn_params(Sema *s, Inst *in, Ast *fn, SVal *args)
{
	uint32_t i, k = 0;

	for (i = 0; i < in->nargs; i++) {
		Ast *p = fn->list.v[i];
		Sym *y = sema_declare(s, SYM_LET, p->name, p->loc);

		if (!y)
			continue;
		y->val = args[i];
		if (!in->is_const[i]) {
			y->val.v = s->fn->body->args[k++];
			y->val.is_const = false;
			name_value(s, &y->val, p->name);
		}
	}
}

/* Lowers one instance of `fn` for the argument types in `args`. */
static void
instantiate(Sema *s, Inst *in, Ast *fn, SVal *args)
{
	SaveState saved = save_state(s);
	Type **pt = arena_alloc(s->arena, (in->nargs + 1) * sizeof *pt);
	uint32_t i, np = 0, nres = 0, count = 0;
	Builder fb;
	Inst *o;
	Value rv[16];
	Type *rt[16];
	const char *name = fn->name;

	for (o = s->insts; o; o = o->next)
		count += o->fn == fn;
	if (count > 1)
		name = arena_printf(s->arena, "%s.%u", fn->name, count - 1);
	for (i = 0; i < in->nargs; i++)
		if (!in->is_const[i])
			pt[np++] = args[i].ty;
	s->fn = ir_func_new(s->mod, FN_DEVICE, name, np, pt);
	s->fn->loc = range_begin(fn->loc);
	fb = (Builder){ .fn = s->fn, .blk = s->fn->body };
	s->b = &fb;
	s->scope = s->globals;
	s->kernel = NULL;
	s->in_tasks = false;
	s->task = 0;
	s->loop_depth = 0;
	s->has_return = false;
	s->body_top = fn->d;
	sema_push_scope(s);
	bind_fn_params(s, in, fn, args);
	sema_block(s, fn->d);
	if (s->has_return && s->ret.kind != SV_VOID && s->ret.kind != SV_ERROR) {
		SVal *rs = s->ret.kind == SV_TUPLE ? s->ret.elems : &s->ret;
		uint32_t n = s->ret.kind == SV_TUPLE ? s->ret.nelems : 1;

		for (i = 0; i < n && i < 16; i++) {
			SVal r = settle_value(s, rs[i], fn->loc);

			if (r.kind != SV_VALUE || !sema_materialize(s, &r)) {
				if (r.kind != SV_ERROR)
					diag_error(s->diag, rs[i].loc, "a device "
						   "function returns scalars or "
						   "tiles, not %s",
						   sv_describe(s, &rs[i]));
				nres = 0;
				break;
			}
			rv[nres] = r.v;
			rt[nres++] = r.ty;
		}
	}
	if (fn->a && nres == 1) {
		Type *dt = sema_type(s, fn->a);

		if (dt && dt != rt[0])
			diag_error(s->diag, fn->a->loc, "'%s' is declared to "
				   "return '%s' but returns '%s'", fn->name,
				   sema_type_str(s, dt), sema_type_str(s, rt[0]));
	} else if (fn->a && !s->diag->nerrors) {
		diag_error(s->diag, fn->a->loc, "'%s' is declared to return a "
			   "value but does not end with 'return'", fn->name);
	}
	ig_opn(s, OP_RETURN, nres, rv, NULL, fn->loc);
	ir_func_set_results(s->fn, nres, rt);
	in->ir = s->fn;
	in->nres = nres;
	in->rtypes = arena_dup(s->arena, rt, (nres ? nres : 1) * sizeof *rt);
	restore_state(s, &saved);
}

SVal
sema_call_fn(Sema *s, Sym *fy, Ast *call)
{
	Ast *fn = fy->ast;
	uint32_t np = fn->list.n, i, n = 0;
	SVal *args = arena_alloc(s->arena, (np + 1) * sizeof *args), r;
	Value *ops = arena_alloc(s->arena, (np + 1) * sizeof *ops);
	Inst *in;
	int errors = s->diag->nerrors;
	Op *op;

	if (!fn_args(s, fn, call, args))
		return sv_error();
	for (i = 0; i < np; i++)
		if (!check_fn_arg(s, fn, fn->list.v[i], &args[i],
				  call->list.n > i ? call->list.v[i]->loc : call->loc))
			return sv_error();
	if (!ig_need_builder(s, call->loc))
		return sv_error();
	if (!(in = find_inst(s, fn, args, np))) {
		if (s->inst_depth >= 64) {
			diag_error(s->diag, call->loc, "device functions are nested "
				   "more than 64 deep");
			return sv_error();
		}
		in = arena_alloc(s->arena, sizeof *in);
		in->fn = fn;
		in->nargs = np;
		in->atypes = arena_alloc(s->arena, (np + 1) * sizeof *in->atypes);
		in->cvals = arena_alloc(s->arena, (np + 1) * sizeof *in->cvals);
		in->is_const = arena_alloc(s->arena, np + 1);
		for (i = 0; i < np; i++) {
			in->atypes[i] = args[i].ty;
			in->is_const[i] = args[i].is_const && !args[i].v;
			in->cvals[i] = args[i].cval;
		}
		in->next = s->insts;
		s->insts = in;
		s->inst_depth++;
		instantiate(s, in, fn, args);
		s->inst_depth--;
		if (s->diag->nerrors > errors)
			diag_note(s->diag, call->loc, "in the call to '%s' here",
				  fn->name);
	} else if (!in->ir) {
		diag_error(s->diag, call->loc, "recursive call to '%s': device "
			   "functions are inlined and cannot recurse", fn->name);
		return sv_error();
	}
	if (s->diag->nerrors > errors || !in->ir)
		return sv_error();
	for (i = 0; i < np; i++)
		if (!in->is_const[i] && (ops[n++] = sema_materialize(s, &args[i])) == 0)
			return sv_error();
	ig_set_loc(s, call->loc);
	op = b_insert(s->b, ir_op_new(s->fn, OP_CALL, n, ops, in->nres,
				      in->rtypes, 0));
	attr_set_str(s->ir, &op->attrs, "callee", in->ir->name);
	if (in->nres == 0)
		return (SVal){ .kind = SV_VOID };
	if (in->nres == 1)
		return sv_value(in->rtypes[0], op->res[0], call->loc);
	r = (SVal){ .kind = SV_TUPLE, .nelems = in->nres, .loc = call->loc };
	r.elems = arena_alloc(s->arena, in->nres * sizeof *r.elems);
	for (i = 0; i < in->nres; i++)
		r.elems[i] = sv_value(in->rtypes[i], op->res[i], call->loc);
	return r;
}

/* ---- constants and -D -------------------------------------------------------------- */

static const Define *
find_define(Sema *s, const char *name)
{
	uint32_t i;

	for (i = 0; i < s->opts->ndefs; i++)
		if (strcmp(s->opts->defs[i].name, name) == 0) {
			s->def_used[i] = true;
			return &s->opts->defs[i];
		}
	return NULL;
}

/* The value of -D NAME=TEXT: an optional '-' and one literal, read by
 * the lexer as the same literal in the source would be (separators,
 * 0x/0o/0b, suffixes, true and false) and given the meaning sema gives
 * that literal there, at the parameter (loc). */
static SVal
define_value(Sema *s, const Define *d, SrcRange loc)
{
	Arena *a = s->arena;
	Source src;
	Strtab strs;
	Diag ld;
	Lexer lx;
	LexVal v;
	SrcRange r;
	Ast *n = NULL;
	bool neg = false;
	int t;

	src_init(&src, a, "-D", d->value, strlen(d->value));
	strtab_init(&strs, a);
	diag_init(&ld, a, &src, NULL);
	lex_init(&lx, a, &strs, &ld, &src);
	memset(&v, 0, sizeof v);
	if ((t = lex_scan(&lx, &v, &r)) == TOK_MINUS) {
		neg = true;
		t = lex_scan(&lx, &v, &r);
	}
	if (t == TOK_INT) {
		n = ast_new(a, AST_INT, loc);
		n->ival = (int64_t)v.ival;
		n->suffix = v.ty;
	} else if (t == TOK_FLOAT) {
		n = ast_new(a, AST_FLOAT, loc);
		n->fval = v.fval;
		n->suffix = v.ty;
	} else if ((t == TOK_TRUE || t == TOK_FALSE) && !neg) {
		n = ast_new(a, AST_BOOL, loc);
		n->ival = t == TOK_TRUE;
	}
	if (n && lex_scan(&lx, &v, &r) != TOK_YYEOF)
		n = NULL;
	if (ld.nerrors) {
		diag_error(s->diag, loc, "-D %s=%s: %s", d->name, d->value,
			   ld.msgs.v[0].msg);
		return sv_error();
	}
	if (!n) {
		diag_error(s->diag, loc, "-D %s=%s: '%s' is not an integer, a "
			   "float or a boolean literal", d->name, d->value,
			   d->value);
		return sv_error();
	}
	if (neg)
		n = ast_unary(a, loc, UN_NEG, n);
	return sema_expr(s, n);
}

/* A constant's value: -D override, else the given expression, converted
 * to the declared type (literals default to i32 / f32). */
static SVal
const_value(Sema *s, Ast *decl, Ast *type, Ast *init, const char *what)
{
	const Define *d = find_define(s, decl->name);
	Builder *saved = s->b;
	SVal v;

	if (d) {
		v = define_value(s, d, decl->loc);
	} else if (!init) {
		diag_error(s->diag, decl->loc, "const parameter '%s' has no "
			   "default: pass -D %s=VALUE", decl->name, decl->name);
		return sv_error();
	} else {
		s->b = NULL;
		s->const_what = what;
		v = sema_expr(s, init);
		s->const_what = NULL;
		s->b = saved;
	}
	if (v.kind != SV_ERROR && (!v.is_const || v.v)) {
		diag_error(s->diag, init ? init->loc : decl->loc, "%s must be a "
			   "compile-time constant, got %s", what,
			   sv_describe(s, &v));
		return sv_error();
	}
	if (type && v.kind != SV_ERROR) {
		Type *t = sema_type(s, type);

		if (t && !ty_is_scalar_kind(t->kind)) {
			diag_error(s->diag, type->loc, "a constant must have a "
				   "scalar type");
			return sv_error();
		}
		v = to_declared(s, v, t, arena_printf(s->arena, "'%s'",
						      decl->name), decl->loc);
	}
	v.weak = false;
	return v;
}

SVal
sema_const_sym(Sema *s, Sym *y, SrcRange use)
{
	Scope *saved;

	if (y->evaluated)
		return y->val;
	if (y->evaluating) {
		diag_error(s->diag, use, "constant '%s' depends on itself",
			   y->name);
		return sv_error();
	}
	y->evaluating = true;
	saved = s->scope;
	s->scope = s->globals;
	y->val = const_value(s, y->ast, y->ast->a, y->ast->b,
			     arena_printf(s->arena, "constant '%s'", y->name));
	s->scope = saved;
	y->evaluating = false;
	y->evaluated = true;
	return y->val;
}

/* ---- kernels ---------------------------------------------------------------------- */

static void
record_const(Sema *s, Func *f, const char *name, SVal v)
{
	const char *key = arena_printf(s->arena, "const.%s", name);

	if (v.kind != SV_VALUE)
		return;
	if (ty_is_float(v.ty))
		attr_set_float(s->ir, &f->attrs, key, v.cval.f);
	else
		attr_set_int(s->ir, &f->attrs, key, v.cval.i);
}

static Type *
param_type(Sema *s, Ast *p)
{
	Type *t;

	if (!p->a) {
		diag_error(s->diag, p->loc, "kernel parameter '%s' needs a type, "
			   "such as '%s: *f32' or '%s: i32'", p->name, p->name,
			   p->name);
		return NULL;
	}
	if (p->b)
		diag_error(s->diag, p->b->loc, "only const parameters take "
			   "defaults");
	t = sema_type(s, p->a);
	if (t && t->kind == TY_TILE) {
		diag_error(s->diag, p->a->loc, "kernels take scalars, pointers "
			   "and tensor descriptors, not tiles");
		return NULL;
	}
	return t;
}

/* Declares every parameter: the runtime ones first, as placeholders
 * (so that a const default naming one is "not a constant" rather than
 * unknown), then the const ones, evaluated in order.  Returns the number
 * of runtime parameters. */
uint32_t
sema_kernel_params(Sema *s, Ast *k, Type **pt, Ast **pa)
{
	uint32_t i, n = 0;
	Sym *y;

	for (i = 0; i < k->list.n; i++) {
		Ast *p = k->list.v[i];

		if (p->is_const)
			continue;
		pa[n] = p;
		pt[n] = param_type(s, p);
		if (!pt[n])
			pt[n] = ty_of_scalar(s, TY_I32);
		if ((y = sema_declare(s, SYM_LET, p->name, p->loc)))
			y->val = (SVal){ .kind = SV_VALUE, .ty = pt[n],
					 .loc = p->loc };
		n++;
	}
	for (i = 0; i < k->list.n; i++) {
		Ast *p = k->list.v[i];
		SVal v;

		if (!p->is_const)
			continue;
		v = const_value(s, p, p->a, p->b, arena_printf(s->arena,
				"the default of '%s'", p->name));
		if ((y = sema_declare(s, SYM_LET, p->name, p->loc)))
			y->val = v;
	}
	return n;
}

/* Binds the runtime parameters to the arguments of f: declares them, or
 * (declared) fills in the placeholders of sema_kernel_params. */
static void
bind_runtime_params(Sema *s, Func *f, Ast **pa, uint32_t n, bool declared)
{
	uint32_t i;

	for (i = 0; i < n; i++) {
		Sym *y = declared ? sema_lookup(s, pa[i]->name)
				  : sema_declare(s, SYM_LET, pa[i]->name, pa[i]->loc);
		Value v = f->body->args[i];
		Type *t = ir_type(f, v);

		ir_value_set_name(f, v, pa[i]->name);
		if (!y)
			continue;
		y->param = v;
		if (t->kind == TY_TMA)
			y->val = (SVal){ .kind = SV_TMA, .ty = t, .v = v, .sym = y,
					 .loc = pa[i]->loc };
		else
			y->val = sv_value(t, v, pa[i]->loc);
	}
}

static void
grid_fn(Sema *s, Func *kf, Ast *attr, Ast *k, Ast **pa, uint32_t n)
{
	SaveState saved = save_state(s);
	Type **pt = arena_alloc(s->arena, (n + 1) * sizeof *pt), *i32 = ty_of_scalar(s, TY_I32);
	Type *rt[3] = { i32, i32, i32 };
	Value rv[3];
	Builder gb;
	uint32_t i;
	Scope *kscope = s->scope;
	Sym *y;

	if (attr->list.n < 1 || attr->list.n > 3) {
		diag_error(s->diag, attr->loc, "grid() takes 1 to 3 dimensions");
		return;
	}
	for (i = 0; i < n; i++)
		pt[i] = ir_type(kf, kf->body->args[i]);
	s->fn = ir_func_new(s->mod, FN_GRID,
			    arena_printf(s->arena, "%s.grid", kf->name), n, pt);
	s->fn->loc = range_begin(attr->loc);
	gb = (Builder){ .fn = s->fn, .blk = s->fn->body };
	s->b = &gb;
	s->scope = s->globals;
	sema_push_scope(s);
	for (y = kscope->syms; y; y = y->next) {  /* the const parameters */
		Sym *c;

		if (y->param || !(c = sema_declare(s, SYM_LET, y->name, y->loc)))
			continue;
		c->val = y->val;
	}
	bind_runtime_params(s, s->fn, pa, n, false);
	for (i = 0; i < 3; i++) {
		SVal v;

		if (i >= attr->list.n) {
			rv[i] = b_const_int(s->b, i32, 1);
			continue;
		}
		v = sema_expr(s, attr->list.v[i]);
		if (v.kind != SV_ERROR && (!sv_is_scalar(&v) || !ty_is_int(v.ty))) {
			diag_error(s->diag, attr->list.v[i]->loc, "a grid dimension "
				   "must be a scalar integer, got %s",
				   sv_describe(s, &v));
			v = sv_error();
		}
		v.weak = false;
		if (v.kind != SV_ERROR)
			v = sema_convert(s, v, i32, attr->list.v[i]->loc);
		rv[i] = v.kind == SV_ERROR ? b_const_int(s->b, i32, 1)
					   : sema_materialize(s, &v);
	}
	ig_opn(s, OP_RETURN, 3, rv, NULL, attr->loc);
	ir_func_set_results(s->fn, 3, rt);
	attr_set_str(s->ir, &kf->attrs, "grid", s->fn->name);
	restore_state(s, &saved);
	(void)k;
}

static void
kernel_attrs(Sema *s, Func *f, Ast *k, Ast **pa, uint32_t n)
{
	Ast *grid = NULL;
	uint32_t i, j;

	s->warps = 4;
	for (i = 0; i < k->list2.n; i++) {
		Ast *a = k->list2.v[i];
		int64_t v[3] = { 1, 1, 1 };

		for (j = 0; j < i; j++)
			if (k->list2.v[j]->name == a->name)
				diag_error(s->diag, a->loc, "'%s' is given twice",
					   a->name);
		if (!strcmp(a->name, "warps")) {
			if (a->list.n != 1 || !sema_const_int(s, a->list.v[0],
							      "warps", &v[0]))
				continue;
			if (!is_pow2(v[0]) || v[0] > 32) {
				diag_error(s->diag, a->loc, "warps must be a power "
					   "of two from 1 to 32, got %lld",
					   (long long)v[0]);
				continue;
			}
			s->warps = v[0];
		} else if (!strcmp(a->name, "cluster")) {
			if (a->list.n < 1 || a->list.n > 3) {
				diag_error(s->diag, a->loc, "cluster() takes 1 to "
					   "3 dimensions");
				continue;
			}
			for (j = 0; j < a->list.n; j++)
				if (!sema_const_int(s, a->list.v[j], "a cluster "
						    "dimension", &v[j]))
					break;
			if (j < a->list.n)
				continue;
			if (v[0] < 1 || v[1] < 1 || v[2] < 1 || v[0] > 16 ||
			    v[1] > 16 || v[2] > 16 || v[0] * v[1] * v[2] > 16) {
				diag_error(s->diag, a->loc, "a cluster has 1 to 16 "
					   "programs, got %lldx%lldx%lld",
					   (long long)v[0], (long long)v[1],
					   (long long)v[2]);
				continue;
			}
			attr_set_ints(s->ir, &f->attrs, "cluster", v, 3);
		} else if (!strcmp(a->name, "grid")) {
			grid = a;
		} else if (!strcmp(a->name, "stages")) {
			if (a->list.n != 1 ||
			    !sema_const_int_in(s, a->list.v[0], "stages", 1, 8,
					       &v[0]))
				continue;
			attr_set_int(s->ir, &f->attrs, "stages", v[0]);
		} else if (!strcmp(a->name, "tune")) {
			sema_tune(s, k, a);
		} else {
			diag_error(s->diag, a->loc, "unknown kernel attribute "
				   "'%s'; expected warps, grid, cluster, stages "
				   "or tune", a->name);
		}
	}
	attr_set_int(s->ir, &f->attrs, "warps", s->warps);
	if (grid)
		grid_fn(s, f, grid, k, pa, n);
}

static void
finish_tma_params(Sema *s, Func *f)
{
	Sym *y;

	for (y = s->scope->syms; y; y = y->next) {
		Type *t;

		if (!y->param || y->val.kind != SV_TMA)
			continue;
		t = y->val.ty;
		if (!y->has_box) {
			/* else its uses reported errors, or were not read */
			if (!y->tma_used && !s->skipped)
				diag_error(s->diag, y->loc, "tensor descriptor "
					   "'%s' is never used by tma_load or "
					   "tma_store, so its box shape is "
					   "unknown", y->name);
			continue;
		}
		f->vals.v[y->param].ty = ty_tma(s->ir, t->elem, t->rank, y->box);
	}
}

static void
lower_kernel(Sema *s, Ast *k)
{
	uint32_t np = k->list.n, n, i;
	Type **pt = arena_alloc(s->arena, (np + 1) * sizeof *pt);
	Ast **pa = arena_alloc(s->arena, (np + 1) * sizeof *pa);
	Builder kb;
	Func *f;
	Sym *y;

	s->scope = s->globals;
	s->skipped = false;
	sema_push_scope(s);
	n = sema_kernel_params(s, k, pt, pa);
	f = ir_func_new(s->mod, FN_KERNEL, k->name, n, pt);
	f->loc = range_begin(k->loc);
	s->fn = f;
	for (i = 0; i < np; i++)
		if (k->list.v[i]->is_const &&
		    (y = sema_lookup(s, k->list.v[i]->name)))
			record_const(s, f, y->name, y->val);
	bind_runtime_params(s, f, pa, n, true);
	kernel_attrs(s, f, k, pa, n);
	kb = (Builder){ .fn = f, .blk = f->body };
	s->b = &kb;
	s->kernel = k;
	s->body_top = k->d;
	sema_push_scope(s);
	s->kernel_depth = s->scope->depth;
	sema_block(s, k->d);
	sema_pop_scope(s);
	ig_opn(s, OP_RETURN, 0, NULL, NULL, k->d->loc);
	finish_tma_params(s, f);
	sema_pop_scope(s);
	s->kernel = NULL;
	s->b = NULL;
}

/* ---- the file ---------------------------------------------------------------------- */

void
sema_declare_items(Sema *s, Ast *file)
{
	uint32_t i;

	for (i = 0; i < file->list.n; i++) {
		Ast *it = file->list.v[i];
		SymKind k = it->kind == AST_FN ? SYM_FN
			    : it->kind == AST_KERNEL ? SYM_KERNEL : SYM_CONST;
		Sym *y = sema_declare(s, k, it->name, it->loc);

		if (y)
			y->ast = it;
	}
}

Module *
front_lower(IrCtx *c, Diag *d, Ast *file, const FrontOpts *o)
{
	static const FrontOpts none = { .sm = 90 };
	Sema s = { .arena = c->arena, .ir = c, .diag = d, .file = file };
	uint32_t i;

	s.opts = o ? o : &none;
	s.def_used = arena_alloc(c->arena, s.opts->ndefs + 1);
	s.mod = ir_module_new(c, d->src ? d->src->name : "");
	sema_push_scope(&s);
	s.globals = s.scope;
	sema_declare_items(&s, file);
	for (i = 0; i < file->list.n && !d->stopped; i++) {
		Ast *it = file->list.v[i];
		Sym *y = sema_lookup(&s, it->name);

		if (it->kind == AST_CONSTDECL && y && y->ast == it)
			sema_const_sym(&s, y, it->loc);
		else if (it->kind == AST_KERNEL)
			lower_kernel(&s, it);
	}
	for (i = 0; i < s.opts->ndefs; i++) {
		uint32_t j;

		if (s.def_used[i])
			continue;
		for (j = 0; j < s.opts->ndefs; j++)
			if (j != i && !strcmp(s.opts->defs[j].name,
					     s.opts->defs[i].name))
				break;
		if (j < s.opts->ndefs)
			diag_error_noloc(d, "-D %s is given twice: give each "
					 "const parameter one value",
					 s.opts->defs[i].name);
		else
			diag_error_noloc(d, "-D %s: no const parameter or "
					 "constant is named '%s'",
					 s.opts->defs[i].name, s.opts->defs[i].name);
	}
	if (!d->nerrors) {
		const Target *t = target_get(s.opts->sm);

		if (!t)
			tlx_bug("no target sm %d", s.opts->sm);
		target_check_module(s.mod, d, t);
	}
	return d->nerrors ? NULL : s.mod;
}
