/*
 * exec.c: the interpreter, an explicit machine.
 *
 * A coroutine (SimCo) is a stack of frames; each frame is a block being
 * run, the next op in it, the activation whose values it reads and writes,
 * and the state of the loop that owns the block.  sim_run executes ops one
 * by one; an op that must wait (a barrier, a pipe slot, the tasks of a
 * `tasks` op) returns "blocked" without advancing, and the scheduler
 * (launch.c) moves on to another coroutine and retries it later.  Regions
 * never recurse on the C stack, so any number of coroutines interleave at
 * op granularity.
 *
 * Terminators move values: `yield` into the loop's block arguments (a
 * parallel copy) or the owner's results, `condition` into the while body
 * or the results, `return` into the caller's results.
 */
#include <stdlib.h>
#include <string.h>

#include "sim.h"

SimVal *
sim_val(SimAct *act, Value v)
{
	return &act->vals[v];
}

Type *
sim_ty(SimAct *act, Value v)
{
	return act->fn->vals.v[v].ty;
}

uint8_t *
sim_data(SimVal *s, Type *t)
{
	return t->kind == TY_TILE ? s->data : (uint8_t *)&s->u.bits;
}

SimVal *
sim_def(SimLaunch *L, SimAct *act, Value v)
{
	SimVal *s = &act->vals[v];
	Type *t = sim_ty(act, v);

	s->group = 0;
	if (t->kind == TY_TILE) {
		size_t need = (size_t)ty_numel(t) * (size_t)sim_esize(t);

		if (need > s->cap) {
			s->data = sim_xrealloc(L, s->data, need);
			s->cap = (uint32_t)need;
		}
	}
	return s;
}

void
sim_copy_val(SimLaunch *L, SimVal *dst, Type *t, SimVal *src)
{
	if (dst == src)
		return;
	if (t->kind == TY_TILE) {
		size_t need = (size_t)ty_numel(t) * (size_t)sim_esize(t);

		if (need > dst->cap) {
			dst->data = sim_xrealloc(L, dst->data, need);
			dst->cap = (uint32_t)need;
		}
		if (src->data)
			memcpy(dst->data, src->data, need);
	} else {
		dst->u = src->u;
	}
	dst->group = src->group;
}

int64_t
sim_scalar_i(SimAct *act, Value v)
{
	return sim_get_i(ty_elem(sim_ty(act, v))->kind, &act->vals[v].u.bits);
}

SimAct *
sim_act_new(SimLaunch *L, SimCta *cta, Func *fn)
{
	SimAct **pp, *a;

	for (pp = &cta->pool; *pp; pp = &(*pp)->next_free)
		if ((*pp)->fn == fn) {
			a = *pp;
			*pp = a->next_free;
			a->next_free = NULL;
			return a;
		}
	/* one a retired CTA left (its value buffers are reused) */
	for (pp = &L->spare; *pp; pp = &(*pp)->next_all)
		if ((*pp)->fn == fn) {
			a = *pp;
			*pp = a->next_all;
			a->next_free = NULL;
			a->next_all = cta->acts;
			cta->acts = a;
			return a;
		}
	a = sim_xalloc(L, sizeof *a);
	a->fn = fn;
	a->next_all = cta->acts;
	cta->acts = a;
	a->vals = sim_xalloc(L, fn->vals.n * sizeof *a->vals);
	return a;
}

void
sim_act_release(SimCta *cta, SimAct *a)
{
	a->next_free = cta->pool;
	cta->pool = a;
}

void
sim_act_free(SimAct *a)
{
	uint32_t i;

	if (a->vals)
		for (i = 0; i < a->fn->vals.n; i++)
			free(a->vals[i].data);
	free(a->vals);
	free(a);
}

void
sim_push_frame(SimLaunch *L, SimCo *co, SimFrame f)
{
	if (co->nfr == co->capfr) {
		uint32_t cap = co->capfr ? co->capfr * 2 : 8;

		if (cap > 4096)
			sim_fault(L, f.owner, "calls or regions nested more "
				  "than 4096 deep");
		co->fr = sim_xrealloc(L, co->fr, cap * sizeof *co->fr);
		co->capfr = cap;
	}
	co->fr[co->nfr++] = f;
}

static SimFrame *
top(SimCo *co)
{
	return &co->fr[co->nfr - 1];
}

/* Pops the top frame and moves its parent past the region's owner. */
static void
pop_past_owner(SimCo *co)
{
	Op *owner = top(co)->owner;

	co->nfr--;
	if (co->nfr)
		top(co)->op = owner->next;
}

/* Copies n values of `from` (in act) into `to` (values of act2), as one
 * parallel assignment: sources that are also targets are read first. */
static void
assign(SimLaunch *L, SimAct *act2, const Value *to, SimAct *act,
       const Value *from, uint32_t n, Op *op)
{
	uint32_t i, j;
	bool alias = false;

	for (i = 0; i < n; i++) {
		if (sim_ty(act, from[i]) != sim_ty(act2, to[i]))
			sim_fault(L, op, "malformed IR: value %u of %s has the "
				  "wrong type", i, op_name(op->kind));
		for (j = 0; j < n && act == act2; j++)
			if (j != i && from[i] == to[j])
				alias = true;
	}
	if (!alias) {
		for (i = 0; i < n; i++)
			sim_copy_val(L, &act2->vals[to[i]], sim_ty(act2, to[i]),
				     &act->vals[from[i]]);
		return;
	}
	if (n > L->ntmp) {
		L->tmp = sim_xrealloc(L, L->tmp, n * sizeof *L->tmp);
		memset(L->tmp + L->ntmp, 0, (n - L->ntmp) * sizeof *L->tmp);
		L->ntmp = n;
	}
	for (i = 0; i < n; i++)
		sim_copy_val(L, &L->tmp[i], sim_ty(act, from[i]),
			     &act->vals[from[i]]);
	for (i = 0; i < n; i++)
		sim_copy_val(L, &act2->vals[to[i]], sim_ty(act2, to[i]),
			     &L->tmp[i]);
}

static void
check_arity(SimLaunch *L, Op *op, uint32_t have, uint32_t want)
{
	if (have != want)
		sim_fault(L, op, "malformed IR: %s has %u values where %u are "
			  "needed", op_name(op->kind), have, want);
}

static void
put_iv(SimAct *act, Value v, int64_t iv)
{
	sim_put_i(ty_elem(sim_ty(act, v))->kind, &act->vals[v].u.bits, iv);
	act->vals[v].group = 0;
}

static bool
iv_less(const SimFrame *f)
{
	return f->uns ? (uint64_t)f->iv < (uint64_t)f->ub : f->iv < f->ub;
}

static void
exec_for(SimLaunch *L, SimCo *co, SimFrame *f, Op *op)
{
	SimAct *act = f->act;
	Block *body = op->regions[0];
	uint32_t n = op->nopnds - 3;
	SimFrame nf = { .blk = body, .op = body->first, .owner = op,
			.act = act, .kind = FR_FOR };

	if (op->nopnds < 3)
		sim_fault(L, op, "malformed IR: for needs lb, ub, step");
	check_arity(L, op, body->nargs, n + 1);
	check_arity(L, op, op->nres, n);
	nf.uns = ty_is_unsigned(sim_ty(act, op->opnds[0]));
	nf.iv = sim_scalar_i(act, op->opnds[0]);
	nf.ub = sim_scalar_i(act, op->opnds[1]);
	nf.step = sim_scalar_i(act, op->opnds[2]);
	if (nf.uns ? nf.step == 0 : nf.step <= 0)
		sim_fault(L, op, "for: the step must be positive, got %lld",
			  (long long)nf.step);
	if (!iv_less(&nf)) {
		assign(L, act, op->res, act, op->opnds + 3, n, op);
		f->op = op->next;
		return;
	}
	put_iv(act, body->args[0], nf.iv);
	assign(L, act, body->args + 1, act, op->opnds + 3, n, op);
	sim_push_frame(L, co, nf);
}

static void
exec_sched_for(SimLaunch *L, SimCo *co, SimFrame *f, Op *op)
{
	SimAct *act = f->act;
	Block *body = op->regions[0];
	uint32_t n = op->nopnds - 1;
	SimFrame nf = { .blk = body, .op = body->first, .owner = op,
			.act = act, .kind = FR_SCHED };
	int64_t t;

	if (op->nopnds < 1 || sim_ty(act, op->opnds[0])->kind != TY_SCHED)
		sim_fault(L, op, "malformed IR: sched_for needs a schedule");
	check_arity(L, op, body->nargs, n + 1);
	check_arity(L, op, op->nres, n);
	nf.sched = act->vals[op->opnds[0]].u.sched;
	t = sim_sched_tile(L, nf.sched, 0, op);
	if (t < 0) {
		assign(L, act, op->res, act, op->opnds + 1, n, op);
		f->op = op->next;
		return;
	}
	put_iv(act, body->args[0], t);
	assign(L, act, body->args + 1, act, op->opnds + 1, n, op);
	sim_push_frame(L, co, nf);
}

static void
exec_while(SimLaunch *L, SimCo *co, SimFrame *f, Op *op)
{
	Block *cond = op->regions[0];
	SimFrame nf = { .blk = cond, .op = cond->first, .owner = op,
			.act = f->act, .kind = FR_WHILE };

	check_arity(L, op, cond->nargs, op->nopnds);
	assign(L, f->act, cond->args, f->act, op->opnds, op->nopnds, op);
	sim_push_frame(L, co, nf);
}

static void
exec_if(SimLaunch *L, SimCo *co, SimFrame *f, Op *op)
{
	bool c = (f->act->vals[op->opnds[0]].u.bits & 1) != 0;
	Block *b = op->regions[c ? 0 : 1];
	SimFrame nf = { .blk = b, .op = b->first, .owner = op, .act = f->act,
			.kind = FR_IF };

	if (sim_ty(f->act, op->opnds[0])->kind != TY_I1)
		sim_fault(L, op, "malformed IR: if needs a scalar i1");
	sim_push_frame(L, co, nf);
}

static void
exec_call(SimLaunch *L, SimCo *co, SimFrame *f, Op *op)
{
	const char *name = attr_str(&op->attrs, "callee");
	Func *fn = name ? ir_func_find(L->mod, name) : NULL;
	SimAct *a;
	SimFrame nf = { .owner = op, .kind = FR_BODY };
	uint32_t i;

	if (!fn || fn->kind != FN_DEVICE)
		sim_fault(L, op, "call: no device function '%s'",
			  name ? name : "");
	check_arity(L, op, op->nopnds, fn->body->nargs);
	check_arity(L, op, op->nres, fn->nrtypes);
	for (i = 0; i < op->nres; i++)
		if (fn->rtypes[i] != sim_ty(f->act, op->res[i]))
			sim_fault(L, op, "malformed IR: result %u of the call "
				  "has the wrong type", i);
	a = sim_act_new(L, co->cta, fn);
	assign(L, a, fn->body->args, f->act, op->opnds, op->nopnds, op);
	nf.blk = fn->body;
	nf.op = fn->body->first;
	nf.act = a;
	sim_push_frame(L, co, nf);
}

static void
finish_co(SimCo *co)
{
	co->state = CO_DONE;
	co->nfr = 0;
	if (co->parent && co->parent->live_children)
		co->parent->live_children--;
}

static void
exec_return(SimLaunch *L, SimCo *co, SimFrame *f, Op *op)
{
	SimFrame *caller;
	uint32_t i;

	if (f->kind != FR_BODY)
		sim_fault(L, op, "malformed IR: return outside a function body");
	check_arity(L, op, op->nopnds, f->act->fn->nrtypes);
	if (!f->owner) {
		/* the coroutine's own function: keep what it returns */
		co->nret = op->nopnds < 8 ? op->nopnds : 8;
		for (i = 0; i < co->nret; i++) {
			co->ret_ty[i] = sim_ty(f->act, op->opnds[i]);
			sim_copy_val(L, &co->ret[i], co->ret_ty[i],
				     &f->act->vals[op->opnds[i]]);
		}
		finish_co(co);
		return;
	}
	caller = &co->fr[co->nfr - 2];
	assign(L, caller->act, f->owner->res, f->act, op->opnds, op->nopnds,
	       op);
	sim_act_release(co->cta, f->act);
	pop_past_owner(co);
}

static void
exec_yield(SimLaunch *L, SimCo *co, SimFrame *f, Op *op)
{
	SimAct *act = f->act;
	Block *b = f->blk;
	Op *own = f->owner;

	switch (f->kind) {
	case FR_FOR:
	case FR_SCHED:
		check_arity(L, op, op->nopnds, b->nargs - 1);
		assign(L, act, b->args + 1, act, op->opnds, op->nopnds, op);
		if (f->kind == FR_FOR) {
			bool ovf = f->uns
				? __builtin_add_overflow((uint64_t)f->iv,
							 (uint64_t)f->step,
							 (uint64_t *)&f->iv)
				: __builtin_add_overflow(f->iv, f->step,
							 &f->iv);
			if (!ovf && iv_less(f)) {
				put_iv(act, b->args[0], f->iv);
				f->op = b->first;
				return;
			}
		} else {
			int64_t t = sim_sched_tile(L, f->sched, ++f->pos, op);

			if (t >= 0) {
				put_iv(act, b->args[0], t);
				f->op = b->first;
				return;
			}
		}
		assign(L, act, own->res, act, b->args + 1, op->nopnds, op);
		pop_past_owner(co);
		return;
	case FR_WHILE:
		check_arity(L, op, op->nopnds, own->regions[0]->nargs);
		assign(L, act, own->regions[0]->args, act, op->opnds,
		       op->nopnds, op);
		f->blk = own->regions[0];
		f->op = f->blk->first;
		return;
	case FR_IF:
		check_arity(L, op, op->nopnds, own->nres);
		assign(L, act, own->res, act, op->opnds, op->nopnds, op);
		pop_past_owner(co);
		return;
	case FR_TASK:
		sim_task_end(L, co, op);
		finish_co(co);
		return;
	default:
		sim_fault(L, op, "malformed IR: yield ends a function body");
	}
}

static void
exec_condition(SimLaunch *L, SimCo *co, SimFrame *f, Op *op)
{
	SimAct *act = f->act;
	Op *own = f->owner;
	bool c;

	if (f->kind != FR_WHILE || f->blk != own->regions[0] ||
	    op->nopnds < 1)
		sim_fault(L, op, "malformed IR: condition outside a while");
	c = (act->vals[op->opnds[0]].u.bits & 1) != 0;
	if (c) {
		Block *body = own->regions[1];

		check_arity(L, op, op->nopnds - 1, body->nargs);
		assign(L, act, body->args, act, op->opnds + 1, op->nopnds - 1,
		       op);
		f->blk = body;
		f->op = body->first;
		return;
	}
	check_arity(L, op, op->nopnds - 1, own->nres);
	assign(L, act, own->res, act, op->opnds + 1, op->nopnds - 1, op);
	pop_past_owner(co);
}

/* Spawns one coroutine per task; blocks until all have finished. */
static bool
exec_tasks(SimLaunch *L, SimCo *co, SimFrame *f, Op *op)
{
	uint32_t k = 0, w0 = 0;
	Op *t;

	if (co->joining == op) {
		if (co->live_children) {
			co->wait_op = op;
			co->wait_what = "tasks";
			co->wait_bar = NULL;
			return false;
		}
		if (L->race)
			sim_race_join(L, co);
		co->joining = NULL;
		f->op = op->next;
		return true;
	}
	co->forks++;
	for (t = op->regions[0]->first; t; t = t->next) {
		SimFrame nf = { .owner = t, .act = f->act, .kind = FR_TASK };
		SimCo *c;

		if (t->kind == OP_YIELD)
			continue;
		if (t->kind != OP_TASK)
			sim_fault(L, t, "malformed IR: %s inside tasks (only "
				  "task ops belong there)", op_name(t->kind));
		c = sim_co_new(L, co->cta, co);
		c->task = attr_str(&t->attrs, "name");
		if (!c->task)
			c->task = "task";
		c->replica = attr_int(&t->attrs, "replica", 0);
		c->fork = co->forks;
		c->agent = ++k;
		c->warp0 = (uint32_t)attr_int(&t->attrs, "first_warp", w0);
		c->nwarps = (uint32_t)attr_int(&t->attrs, "warps",
					       attr_int(&L->kern->attrs, "warps", 4));
		w0 = c->warp0 + (uint32_t)attr_int(&t->attrs, "span", c->nwarps);
		nf.blk = t->regions[0];
		nf.op = nf.blk->first;
		sim_push_frame(L, c, nf);
		co->live_children++;
	}
	co->joining = op;
	if (L->race)
		sim_race_fork(L, co);
	f = top(co);
	if (!co->live_children) {
		co->joining = NULL;
		f->op = op->next;
	}
	return true;
}

/* Operands still being computed by a dot_async may only flow into ops
 * that pass them along or wait for them. */
static void
check_ready(SimLaunch *L, SimCo *co, SimAct *act, Op *op)
{
	uint32_t i;

	for (i = 0; i < op->nopnds; i++) {
		SimVal *v = &act->vals[op->opnds[i]];

		if (!v->group || v->group <= co->dot_done)
			continue;
		switch (op->kind) {
		case OP_DOT_WAIT:
		case OP_YIELD:
		case OP_CONDITION:
		case OP_FOR:
		case OP_WHILE:
		case OP_SCHED_FOR:
			continue;
		case OP_DOT_ASYNC:
			if (i == 2)
				continue;
			break;
		default:
			break;
		}
		sim_fault(L, op, "%s uses the result of a dot_async before a "
			  "dot_wait covers it (operand %u)", op_name(op->kind),
			  i + 1);
	}
}

static void
exec_index(SimLaunch *L, SimCo *co, SimAct *act, Op *op)
{
	int64_t axis = attr_int(&op->attrs, "axis", 0);
	SimCta *cta = co->cta;
	int32_t v;

	if (axis < 0 || axis > 2)
		sim_fault(L, op, "%s: axis %lld is not 0, 1 or 2",
			  op_name(op->kind), (long long)axis);
	if (op->kind == OP_PROGRAM_ID)
		v = (int32_t)cta->pid[axis];
	else if (op->kind == OP_NUM_PROGRAMS)
		v = (int32_t)L->grid[axis];
	else
		v = (int32_t)cta->rank;
	sim_put_i(TY_I32, &sim_def(L, act, op->res[0])->u.bits, v);
}

/* Executes op; false when it blocked (nothing changed). */
static bool
exec(SimLaunch *L, SimCo *co, SimFrame *f, Op *op)
{
	SimAct *act = f->act;

	check_ready(L, co, act, op);
	if (L->race)
		sim_race_pre(L, co, act, op);
	switch (op->kind) {
	case OP_CONST: sim_op_const(L, act, op); break;
	case OP_RANGE: sim_op_range(L, act, op); break;
	case OP_PROGRAM_ID:
	case OP_NUM_PROGRAMS:
	case OP_CLUSTER_RANK:
		exec_index(L, co, act, op);
		break;
	case OP_ENTRY_FAST:
		sim_put_i(TY_I1, &sim_def(L, act, op->res[0])->u.bits,
			  L->fast_entry);
		break;
	case OP_ADD: case OP_SUB: case OP_MUL: case OP_DIV: case OP_REM:
	case OP_MIN: case OP_MAX: case OP_AND: case OP_OR: case OP_XOR:
	case OP_SHL: case OP_SHR:
		sim_op_binary(L, act, op);
		break;
	case OP_NEG: case OP_NOT: case OP_ABS:
		sim_op_unary(L, act, op);
		break;
	case OP_EXP: case OP_EXP2: case OP_LOG: case OP_LOG2: case OP_SQRT:
	case OP_RSQRT: case OP_SIN: case OP_COS: case OP_TANH: case OP_ERF:
	case OP_SIGMOID: case OP_FLOOR: case OP_CEIL:
		sim_op_math(L, act, op);
		break;
	case OP_CMP: sim_op_cmp(L, act, op); break;
	case OP_SELECT: sim_op_select(L, act, op); break;
	case OP_FMA: sim_op_fma(L, act, op); break;
	case OP_CVT: sim_op_cvt(L, act, op); break;
	case OP_BITCAST: sim_op_bitcast(L, act, op); break;
	case OP_PTR_ADD: sim_op_ptr_add(L, act, op); break;
	case OP_MISALIGN: sim_op_misalign(L, act, op); break;
	case OP_SPLAT: case OP_BROADCAST: case OP_EXPAND_DIMS:
	case OP_RESHAPE: case OP_TRANS: case OP_CONVERT_LAYOUT:
	case OP_EXTRACT_SLICE:
		sim_op_shape(L, act, op);
		break;
	case OP_REDUCE: sim_op_reduce(L, act, op); break;
	case OP_DOT: sim_op_dot(L, act, op); break;
	case OP_LOAD: sim_op_load(L, act, op); break;
	case OP_STORE: sim_op_store(L, act, op); break;
	case OP_ATOMIC: sim_op_atomic(L, act, op); break;
	case OP_ATOMIC_CAS: sim_op_atomic_cas(L, act, op); break;
	case OP_ASSERT: sim_op_assert(L, act, op); break;
	case OP_SCHED_TILE:
		sim_tile_seen(L, co, op, sim_scalar_i(act, op->opnds[0]),
			      sim_scalar_i(act, op->opnds[1]));
		break;
	case OP_SMEM_ALLOC: case OP_SMEM_INDEX: case OP_SMEM_SLICE:
	case OP_SMEM_TRANS: case OP_SMEM_LOAD: case OP_SMEM_STORE:
		sim_op_smem(L, co->cta, act, op);
		break;
	case OP_FOR: exec_for(L, co, f, op); return true;
	case OP_WHILE: exec_while(L, co, f, op); return true;
	case OP_IF: exec_if(L, co, f, op); return true;
	case OP_SCHED_FOR: exec_sched_for(L, co, f, op); return true;
	case OP_CALL: exec_call(L, co, f, op); return true;
	case OP_YIELD: exec_yield(L, co, f, op); return true;
	case OP_CONDITION: exec_condition(L, co, f, op); return true;
	case OP_RETURN: exec_return(L, co, f, op); return true;
	case OP_TASKS: return exec_tasks(L, co, f, op);
	case OP_TASK:
		sim_fault(L, op, "malformed IR: task outside tasks");
	default:
		if (!sim_op_async(L, co, act, op))
			return false;
		break;
	}
	if (L->axis)
		sim_axis_check(L, act, op);
	if (L->race)
		sim_race_op(L, co, act, op);
	top(co)->op = op->next;
	return true;
}

bool
sim_run(SimLaunch *L, SimCo *co, uint32_t quantum)
{
	bool progress = false;

	L->cur = co;
	while (quantum && co->state != CO_DONE) {
		SimFrame *f = top(co);
		Op *op = f->op;

		if (!op)
			sim_fault(L, NULL, "malformed IR: a block ends without "
				  "a terminator");
		if (++L->steps > L->o.max_steps)
			sim_fault(L, op, "stopped after %llu operations (the "
				  "step limit; an infinite loop?)",
				  (unsigned long long)L->o.max_steps);
		if (!exec(L, co, f, op)) {
			L->steps--;
			co->state = CO_BLOCKED;
			break;
		}
		if (co->state != CO_DONE)
			co->state = CO_READY;
		co->wait_op = NULL;
		progress = true;
		quantum--;
	}
	return progress;
}
