/*
 * lower_schedules.c: tile schedules to loops -- pass "lower-schedules".
 *
 * `static` strides a persistent grid over the tiles: a program's tiles
 * are its linear index, then every number-of-programs after it, so
 *
 *   %w = sched_create %n {kind = static}
 *   sched_for %w, inits { ^(%t, iters): ... }
 *
 * becomes
 *
 *   %lin = program_id(0) + num_programs(0) * (program_id(1) + ...)
 *   %np  = num_programs(0) * num_programs(1) * num_programs(2)
 *   for %lin, %n, %np, inits { ^(%t, iters): ... }
 *
 * in every agent that iterates it (each task sees the same tiles in the
 * same order), and the kernel is marked `persistent`: the runtime
 * launches no more programs than the device runs at once (libtlxrt,
 * docs/runtime.md).  `dynamic` and `clc` schedules are not lowered yet
 * (their kernels stay at the tile level, where the simulator runs them).
 * Requires: tile-level IR.  Counters: schedules.
 */
#include "passes/passes.h"

typedef struct Ls {
	PassCtx *pc;
	Func *f;
	Type *i32;
} Ls;

static Value
emit(Ls *l, Op *at, OpKind k, uint32_t n, Value a, Value b, int64_t axis)
{
	Value ops[2] = { a, b };
	Op *op = ir_op_new(l->f, k, n, ops, 1, &l->i32, 0);

	op->loc = at->loc;
	if (k == OP_PROGRAM_ID || k == OP_NUM_PROGRAMS)
		attr_set_int(l->f->mod->ctx, &op->attrs, "axis", axis);
	ir_insert_after(at, op);
	return op->res[0];
}

/* After `at`: the program's linear index and the number of programs. */
static Op *
linear(Ls *l, Op *at, Value *lin, Value *np)
{
	Value pid[3], n[3];
	int d;

	for (d = 0; d < 3; d++) {
		pid[d] = emit(l, at, OP_PROGRAM_ID, 0, 0, 0, d);
		at = ir_val(l->f, pid[d])->def;
		n[d] = emit(l, at, OP_NUM_PROGRAMS, 0, 0, 0, d);
		at = ir_val(l->f, n[d])->def;
	}
	/* lin = pid0 + n0 * (pid1 + n1 * pid2) */
	*lin = emit(l, at, OP_MUL, 2, n[1], pid[2], 0);
	at = ir_val(l->f, *lin)->def;
	*lin = emit(l, at, OP_ADD, 2, pid[1], *lin, 0);
	at = ir_val(l->f, *lin)->def;
	*lin = emit(l, at, OP_MUL, 2, n[0], *lin, 0);
	at = ir_val(l->f, *lin)->def;
	*lin = emit(l, at, OP_ADD, 2, pid[0], *lin, 0);
	at = ir_val(l->f, *lin)->def;
	*np = emit(l, at, OP_MUL, 2, n[0], n[1], 0);
	at = ir_val(l->f, *np)->def;
	*np = emit(l, at, OP_MUL, 2, *np, n[2], 0);
	return ir_val(l->f, *np)->def;
}

typedef struct Sched {
	Op *create;
	Value lin, np;
} Sched;

/* sched_for over a static schedule s: a for over the program's tiles. */
static void
to_for(Ls *l, Op *sf, Sched *s)
{
	Func *f = l->f;
	uint32_t n = sf->nopnds + 2, i;
	Value *ops = arena_alloc(l->pc->scratch, n * sizeof *ops);
	Type **rt = arena_alloc(l->pc->scratch, (sf->nres + 1) * sizeof *rt);
	Op *fo;

	ops[0] = s->lin;
	ops[1] = s->create->opnds[0];
	ops[2] = s->np;
	for (i = 1; i < sf->nopnds; i++)
		ops[i + 2] = sf->opnds[i];
	for (i = 0; i < sf->nres; i++)
		rt[i] = ir_type(f, sf->res[i]);
	fo = ir_op_new(f, OP_FOR, n, ops, sf->nres, rt, 1);
	fo->loc = sf->loc;
	fo->tloc = sf->tloc;
	fo->regions[0] = sf->regions[0];
	fo->regions[0]->parent = fo;
	ir_insert_before(sf, fo);
	for (i = 0; i < sf->nres; i++) {
		ir_value_set_name(f, fo->res[i], ir_val(f, sf->res[i])->name);
		ir_replace_uses(f, sf->res[i], fo->res[i]);
	}
	ir_remove(sf);
}

bool
pass_lower_schedules(PassCtx *pc, Func *f)
{
	Ls l = { .pc = pc, .f = f };
	Vec(Sched) scheds = { 0 };
	uint32_t i, k, nc, nl;
	Op **creates, **loops;

	if (f->kind != FN_KERNEL || ir_func_laid_out(f))
		return false;
	creates = ir_find_ops(f, OP_SCHED_CREATE, pc->scratch, &nc);
	for (i = 0; i < nc; i++) {
		const char *kind = attr_str(&creates[i]->attrs, "kind");

		if (kind && !strcmp(kind, "static"))
			vec_push(pc->scratch, &scheds, ((Sched){ creates[i], 0, 0 }));
	}
	if (!scheds.n)
		return false;
	loops = ir_find_ops(f, OP_SCHED_FOR, pc->scratch, &nl);
	l.i32 = ty_scalar(f->mod->ctx, TY_I32);
	for (i = 0; i < scheds.n; i++)
		linear(&l, scheds.v[i].create, &scheds.v[i].lin, &scheds.v[i].np);
	for (k = 0; k < nl; k++) {
		Op *def = ir_val(f, loops[k]->opnds[0])->def;

		for (i = 0; i < scheds.n; i++)
			if (scheds.v[i].create == def)
				to_for(&l, loops[k], &scheds.v[i]);
	}
	for (i = 0; i < scheds.n; i++)
		ir_remove(scheds.v[i].create);
	attr_set_int(f->mod->ctx, &f->attrs, "persistent", 1);
	pass_stat(pc, "schedules", scheds.n);
	return true;
}
