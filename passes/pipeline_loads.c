/*
 * pipeline_loads.c: software pipelining of the loads that feed a dot --
 * pass "pipeline-loads".
 *
 * A loop of the shape
 *
 *   for k { ...; a = load pa(k), ma(k); b = load pb(k), mb(k);
 *           acc = dot a, b, acc; ... }
 *
 * (each load used only by the dot, its pointers and mask computed from k
 * and values defined before the loop by cheap pure ops, `other` zero) is
 * rewritten, on the IR, into a ring of S stages in shared memory:
 *
 *   A = smem_alloc [S x M x K]; B = smem_alloc [S x K x N]
 *   for s in 0 .. S-2: cp_async A[s], pa(lb + s*step), ma & (k_s < ub); ... commit
 *   for k { cp_async_wait {pending = S-2}            (then a CTA barrier)
 *           i = (k - lb) / step
 *           cp_async A[(i+S-1) % S], pa(k + (S-1)*step), ma & valid; ... commit
 *           acc = dot smem_load A[i % S], smem_load B[i % S], acc; ... }
 *   cp_async_wait {pending = 0}
 *
 * so that S-1 tiles are in flight while one is multiplied, and the dot
 * reads its fragments straight from the stage (ldmatrix, no register
 * round trip).  The copy of slot (i-1) % S starts after the wait's
 * barrier, when every warp is done with it.  S is up to 4 (stages_for).
 * B of an fp8 or int8 dot stays in registers (it must be transposed for
 * ldmatrix).  On wgmma targets the dot becomes dot_async on the stages
 * (one group in flight, dot_wait {pending = 1} before the refill).
 *
 * Where both loads are boxes of 2-D tensors the kernel's parameters
 * describe (affine.c: a parameter base, outer stride, row and column
 * bounds in the mask; an inner stride that is a parameter or one; 16-bit
 * elements) and the target has TMA, the loop is versioned:
 *
 *   if entry_fast || tma.ok != 0 { the loop on TMA copies }
 *   else { the loop on cp.async }
 *
 * The TMA copy reads through tensor descriptors appended to the kernel's
 * parameters, which the runtime derives from the host's arguments
 * (`derived`, `derive.I` = [pointer, bound 0, bound 1, outer stride]);
 * `tma.align`, `tma.div`, `tma.eq1` say what the fast entry must assume
 * for them (specialize-entries adds it).  The generic entry takes the
 * TMA loop too where the launch allows it: `tma.ok`, one more derived
 * parameter, is 1 when every derived tensor makes a tensor map (16-byte
 * aligned base and outer strides, or the copy the runtime stages of rows
 * that are not) and the inner strides in `tma.eq1` are 1, so ragged M, N
 * and K and odd row pitches keep TMA.  Each stage has a full mbarrier
 * (arrive count 1): the copies of a stage expect their bytes on it, the
 * iteration waits for it with the parity of its round, and TMA's zero
 * fill past the tensor's bounds is the masks' `other`.  With
 * --specialize=none (one entry) the choice is tma.ok's alone.
 *
 * Requires: tile-level IR (before assign-layouts).  The
 * kernel's stages(N) is an error when N stages do not fit.  Counters:
 * loops-pipelined.
 */
#include <math.h>

#include "passes/passes.h"

typedef struct Pipe {
	PassCtx *pc;
	const Target *t;
	Func *f;
	Op *loop;
	Block *body;
	Value iv;
	Op *dot;
	Op *ld[2];
	int stages;
	bool wgmma; /* the dot becomes dot_async + dot_wait (sm_90a) */
	int slot_j; /* wgmma: the loop-carried slot of the accumulator */
	Op *at;     /* new ops go before this one */
	/* the TMA copy (the fast entry's): each load's box and descriptor */
	AffineBox box[2];
	Value desc[2];
	uint32_t *uses;
	uint32_t nvals;  /* values before the rewrite (chain[] and uses[]) */
} Pipe;

/* v can be recomputed for another iteration: it depends on the loop only
 * through iv, by cheap ops in the body (marked in `chain`). */
static bool
recomputable(Pipe *p, Value v, bool *chain)
{
	ValInfo *vi = ir_val(p->f, v);
	uint32_t i;

	if (v == p->iv)
		return true;
	if (!vi->def)
		return vi->blk != p->body;  /* loop-carried: no */
	if (vi->def->parent != p->body)
		return true;                /* defined before the loop */
	if (chain[v])
		return true;
	if (!op_has(vi->def, F_CHEAP))
		return false;
	for (i = 0; i < vi->def->nopnds; i++)
		if (!recomputable(p, vi->def->opnds[i], chain))
			return false;
	chain[v] = true;
	return true;
}

static bool
zero_const(Func *f, Value v)
{
	ValInfo *vi = ir_val(f, v);
	const Attr *a;

	if (!vi->def || vi->def->kind != OP_CONST)
		return false;
	a = attr_find(&vi->def->attrs, "value");
	return a && ((a->kind == ATTR_INT && a->i == 0) ||
		     (a->kind == ATTR_FLOAT && a->f == 0 && !signbit(a->f)));
}


/* The load operand i of the dot, if it can be pipelined. */
static Op *
pipelinable(Pipe *p, int i, bool *chain)
{
	ValInfo *vi = ir_val(p->f, p->dot->opnds[i]);
	Op *ld = vi->def;
	uint32_t k;

	if (!ld || ld->kind != OP_LOAD || ld->parent != p->body ||
	    p->uses[ld->res[0]] != 1 || attr_has(&ld->attrs, "cache") ||
	    attr_has(&ld->attrs, "evict"))
		return NULL;
	if (ld->nopnds > 2 && !zero_const(p->f, ld->opnds[2]))
		return NULL;
	for (k = 0; k < ld->nopnds && k < 2; k++)
		if (!recomputable(p, ld->opnds[k], chain))
			return NULL;
	return ld;
}

/* ---- building ------------------------------------------------------------- */

static Value
emit(Pipe *p, OpKind k, Type *t, uint32_t n, Value a, Value b, Value c)
{
	Value ops[3] = { a, b, c };
	Type *rt[1] = { t };
	Op *op = ir_op_new(p->f, k, n, ops, t ? 1 : 0, rt, 0);

	op->loc = p->dot->loc;
	ir_insert_before(p->at, op);
	return t ? op->res[0] : 0;
}

static Value
iconst(Pipe *p, Type *t, int64_t v)
{
	Value r = emit(p, OP_CONST, t, 0, 0, 0, 0);

	attr_set_int(p->f->mod->ctx, &ir_val(p->f, r)->def->attrs, "value", v);
	return r;
}

static void
pending(Pipe *p, int n)
{
	Value z = emit(p, OP_CP_ASYNC_WAIT, NULL, 0, 0, 0, 0);
	Op *w = p->at->prev;

	(void)z;
	attr_set_int(p->f->mod->ctx, &w->attrs, "pending", n);
}

/* Clones the chain into place with iv -> niv and issues the copy of the
 * load's tile into view, masked by its mask and `valid`. */
static void
issue(Pipe *p, Op *ld, bool *chain, Value niv, Value valid, Value view)
{
	Func *f = p->f;
	IrCtx *c = f->mod->ctx;
	uint32_t mapn = f->vals.n;
	Value *map = arena_alloc(c->arena, mapn * sizeof *map), ptr, m;
	Type *mt = ty_like(c, ir_type(f, ld->res[0]), ty_scalar(c, TY_I1));
	Op *op;

	map[p->iv] = niv;
	for (op = p->body->first; op && op != ld; op = op->next) {
		Op *cl;

		if (op->nres != 1 || op->res[0] >= p->nvals || !chain[op->res[0]])
			continue;
		cl = ir_clone_op(f, f, op, &map, &mapn);
		ir_insert_before(p->at, cl);
	}
	ptr = ld->opnds[0] < mapn && map[ld->opnds[0]] ? map[ld->opnds[0]]
						       : ld->opnds[0];
	m = emit(p, OP_SPLAT, mt, 1, valid, 0, 0);
	if (ld->nopnds > 1) {
		Value lm = ld->opnds[1] < mapn && map[ld->opnds[1]]
				   ? map[ld->opnds[1]] : ld->opnds[1];

		m = emit(p, OP_AND, mt, 2, lm, m, 0);
	}
	emit(p, OP_CP_ASYNC, NULL, 3, view, ptr, m);
}

static Value
stage_view(Pipe *p, Value buf, Value idx)
{
	Type *bt = ir_type(p->f, buf);

	return emit(p, OP_SMEM_INDEX, ty_smem(p->f->mod->ctx, bt->elem,
					       bt->rank - 1, bt->shape + 1),
		    2, buf, idx, 0);
}

/* iv + s * step and (iv + s * step < ub), s a value of iv's type */
static Value
shifted_by(Pipe *p, Value iv, Value s, Value *valid)
{
	Func *f = p->f;
	IrCtx *c = f->mod->ctx;
	Type *it = ir_type(f, p->iv);
	Value step = p->loop->opnds[2], n, k;
	Op *cmp;

	k = emit(p, OP_MUL, it, 2, step, s, 0);
	n = emit(p, OP_ADD, it, 2, iv, k, 0);
	*valid = emit(p, OP_CMP, ty_scalar(c, TY_I1), 2, n, p->loop->opnds[1], 0);
	cmp = ir_val(f, *valid)->def;
	attr_set_sym(c, &cmp->attrs, "pred", "lt");
	return n;
}

static Value
shifted(Pipe *p, Value iv, int64_t s, Value *valid)
{
	return shifted_by(p, iv, iconst(p, ir_type(p->f, p->iv), s), valid);
}

/* `for s in 0 .. S - 1 {nounroll}` before p->at, for the copies of the
 * first S - 1 stages (one copy of their code); leaves p->at in its body,
 * sets *niv to the iteration stage s holds and *valid to whether that
 * iteration runs, and returns s as an i32. */
static Value
stage_loop(Pipe *p, Value lb, Value *niv, Value *valid)
{
	Func *f = p->f;
	IrCtx *c = f->mod->ctx;
	Type *it = ir_type(f, p->iv), *i32 = ty_scalar(c, TY_I32);
	Value ops[3], s;
	Op *loop;

	ops[0] = iconst(p, it, 0);
	ops[1] = iconst(p, it, p->stages - 1);
	ops[2] = iconst(p, it, 1);
	loop = ir_op_new(f, OP_FOR, 3, ops, 0, NULL, 1);
	loop->loc = p->dot->loc;
	attr_set_int(c, &loop->attrs, "nounroll", 1);
	ir_insert_before(p->at, loop);
	s = ir_block_add_arg(loop->regions[0], it);
	p->at = ir_op_new(f, OP_YIELD, 0, NULL, 0, NULL, 0);
	p->at->loc = p->dot->loc;
	ir_append(loop->regions[0], p->at);
	*niv = shifted_by(p, lb, s, valid);
	return it != i32 ? emit(p, OP_CVT, i32, 1, s, 0, 0) : s;
}

/* Stages 0 .. S-2 in flight before the loop.  More than one is a loop of
 * its own, not unrolled: one copy of the copies' code (the matmul's three
 * stages, ptxas -7%; it runs once per tile). */
static void
prologue(Pipe *p, bool *chain, Value *buf)
{
	Func *f = p->f;
	IrCtx *c = f->mod->ctx;
	Type *i32 = ty_scalar(c, TY_I32);
	Value valid, niv, s, lb = p->loop->opnds[0];
	Op *at = p->at;
	int i;

	if (p->stages == 2) {
		niv = shifted(p, lb, 0, &valid);
		s = iconst(p, i32, 0);
	} else {
		s = stage_loop(p, lb, &niv, &valid);
	}
	for (i = 0; i < 2; i++)
		if (p->ld[i])
			issue(p, p->ld[i], chain, niv, valid,
			      stage_view(p, buf[i], s));
	emit(p, OP_CP_ASYNC_COMMIT, NULL, 0, 0, 0, 0);
	p->at = at;
}

/* The dot on the stage, asynchronously: dot_async of the stage's views
 * and a dot_wait that keeps it in flight (pending 1) while the next
 * stage's copies are issued; the copies of slot (i-1) % S that follow
 * wait for the previous iteration's dot (the wait, then insert-syncs'
 * barrier: every warpgroup's). */
static void
async_dot(Pipe *p, Value *buf, Value slot)
{
	Func *f = p->f;
	Type *ct = ir_type(f, p->dot->res[0]);
	Value ops[3], r, w;
	Op *d, *wt;

	p->at = p->dot;
	ops[0] = stage_view(p, buf[0], slot);
	ops[1] = stage_view(p, buf[1], slot);
	ops[2] = p->dot->opnds[2];
	d = ir_op_new(f, OP_DOT_ASYNC, 3, ops, 1, &ct, 0);
	d->loc = p->dot->loc;
	ir_insert_before(p->dot, d);
	r = d->res[0];
	wt = ir_op_new(f, OP_DOT_WAIT, 1, &r, 1, &ct, 0);
	wt->loc = p->dot->loc;
	attr_set_int(f->mod->ctx, &wt->attrs, "pending", 1);
	ir_insert_before(p->dot, wt);
	w = wt->res[0];
	ir_replace_uses(f, p->dot->res[0], w);
	for (int i = 0; i < 2; i++)
		ir_remove(p->ld[i]);
	/* the dot stays as the anchor of the copies until wgmma_done */
}

/* After the loop, the accumulator waits for the last dot (pending 0). */
static void
wgmma_done(Pipe *p)
{
	Func *f = p->f;
	Value r = p->loop->res[p->slot_j];
	Type *ct = ir_type(f, r);
	Op *wt = ir_op_new(f, OP_DOT_WAIT, 1, &r, 1, &ct, 0);

	wt->loc = p->dot->loc;
	attr_set_int(f->mod->ctx, &wt->attrs, "pending", 0);
	ir_replace_uses(f, r, wt->res[0]);
	wt->opnds[0] = r;
	ir_insert_after(p->loop, wt);
	ir_remove(p->dot);
}

static void
rewrite(Pipe *p, bool *chain)
{
	Func *f = p->f;
	IrCtx *c = f->mod->ctx;
	Type *it = ir_type(f, p->iv), *i32 = ty_scalar(c, TY_I32);
	Value buf[2] = { 0, 0 }, valid, niv, idx, slot, next, lb = p->loop->opnds[0];
	int S = p->stages, i;

	/* before the loop: the buffers and S-1 stages in flight */
	p->at = p->loop;
	for (i = 0; i < 2; i++) {
		Type *lt;
		int64_t shape[3];

		if (!p->ld[i])
			continue;
		lt = ir_type(f, p->ld[i]->res[0]);
		shape[0] = S;
		shape[1] = lt->shape[0];
		shape[2] = lt->shape[1];
		buf[i] = emit(p, OP_SMEM_ALLOC, ty_smem(c, lt->elem, 3, shape), 0, 0,
			      0, 0);
	}
	prologue(p, chain, buf);
	/* after it: nothing may stay in flight */
	p->at = p->loop->next;
	pending(p, 0);
	/* in the body: wait for this stage, start the one S-1 ahead */
	p->at = p->body->first;
	pending(p, S - 2);
	idx = emit(p, OP_DIV, it, 2, emit(p, OP_SUB, it, 2, p->iv, lb, 0),
		   p->loop->opnds[2], 0);
	idx = emit(p, OP_CVT, i32, 1, idx, 0, 0);
	slot = emit(p, OP_REM, i32, 2, idx, iconst(p, i32, S), 0);
	next = emit(p, OP_REM, i32, 2, emit(p, OP_ADD, i32, 2, idx,
					   iconst(p, i32, S - 1), 0),
		    iconst(p, i32, S), 0);
	if (p->wgmma) {
		async_dot(p, buf, slot);
		p->at = p->dot->next;
	}
	niv = shifted(p, p->iv, S - 1, &valid);
	for (i = 0; i < 2; i++)
		if (p->ld[i])
			issue(p, p->ld[i], chain, niv, valid,
			      stage_view(p, buf[i], next));
	emit(p, OP_CP_ASYNC_COMMIT, NULL, 0, 0, 0, 0);
	if (p->wgmma) {
		wgmma_done(p);
		return;
	}
	p->at = p->dot;
	for (i = 0; i < 2; i++) {
		if (!p->ld[i])
			continue;
		p->dot->opnds[i] = emit(p, OP_SMEM_LOAD, ir_type(f, p->ld[i]->res[0]),
					1, stage_view(p, buf[i], slot), 0, 0);
		ir_remove(p->ld[i]);
	}
}

/* ---- TMA copies (the fast entry) ------------------------------------------ */

/* v mapped by a chain clone, else v. */
static Value
mapped(Value *map, uint32_t mapn, Value v)
{
	return v && v < mapn && map[v] ? map[v] : v;
}

/* Is v one of the kernel's first 64 parameters (those the fast entry's
 * assumption bits name): its index, else -1. */
static int
param_index(Func *f, Value v)
{
	ValInfo *vi = ir_val(f, v);

	return !vi->def && vi->blk == f->body && vi->idx < 64 ? (int)vi->idx : -1;
}

/* Load i is a box of a 2-D tensor the runtime can describe from the
 * kernel's parameters (affine.c): base, bounds and outer stride
 * parameters, the inner stride a parameter (assumed 1 by the fast entry)
 * or one, 16-bit elements. */
static bool
tma_box(Pipe *p, int i, Value bound[2])
{
	Func *f = p->f;
	Op *ld = p->ld[i];
	AffineBox *b = &p->box[i];
	int d;

	if (!ld || ld->nopnds < 2 || ty_bits(ty_elem(ir_type(f, ld->res[0]))) != 16)
		return false;
	if (!affine_box(f, ld->opnds[0], b)) return false;
	if (!affine_bounds(f, ld->opnds[1], b, bound)) return false;
	if (param_index(f, b->base) < 0 || !b->stride[0] ||
	    param_index(f, b->stride[0]) < 0 ||
	    (b->stride[1] && param_index(f, b->stride[1]) < 0))
		return false;
	for (d = 0; d < 2; d++)
		if (param_index(f, bound[d]) < 0 ||
		    ir_type(f, bound[d])->kind != TY_I32 ||
		    (b->start[d] && ir_type(f, b->start[d])->kind != TY_I32))
			return false;
	return true;
}

/* A tensor descriptor parameter the runtime derives for load i: the
 * kernel's `derived` parameters, `derive.I` saying from which, and
 * `tma.*` what the fast entry must assume for it. */
static Value
tma_param(Pipe *p, int i, const Value bound[2])
{
	Func *f = p->f;
	IrCtx *c = f->mod->ctx;
	Type *lt = ir_type(f, p->ld[i]->res[0]);
	Type *dt = ty_tma(c, lt->elem, 2, lt->shape);
	Value v = ir_block_add_arg(f->body, dt);
	AffineBox *b = &p->box[i];
	int64_t src[4] = { param_index(f, b->base), param_index(f, bound[0]),
			   param_index(f, bound[1]), param_index(f, b->stride[0]) };
	char name[32];

	ir_value_set_name(f, v, arena_printf(c->arena, "%s.tma",
		ir_val(f, b->base)->name ? ir_val(f, b->base)->name : "tensor"));
	snprintf(name, sizeof name, "derive.%u", ir_val(f, v)->idx);
	attr_set_ints(c, &f->attrs, name, src, 4);
	attr_set_int(c, &f->attrs, "derived", attr_int(&f->attrs, "derived", 0) + 1);
	attr_set_int(c, &f->attrs, "tma.align", attr_int(&f->attrs, "tma.align", 0) |
		     (int64_t)1 << src[0]);
	attr_set_int(c, &f->attrs, "tma.div", attr_int(&f->attrs, "tma.div", 0) |
		     (int64_t)1 << src[3]);
	if (b->stride[1])
		attr_set_int(c, &f->attrs, "tma.eq1", attr_int(&f->attrs, "tma.eq1", 0) |
			     (int64_t)1 << param_index(f, b->stride[1]));
	return v;
}

/* `if cond { ... }` before p->at; returns its then region's terminator
 * (new ops go before it). */
static Op *
open_if(Pipe *p, Value cond)
{
	Op *ifo = ir_op_new(p->f, OP_IF, 1, &cond, 0, NULL, 2), *y[2];
	int r;

	ifo->loc = p->dot->loc;
	ir_insert_before(p->at, ifo);
	for (r = 0; r < 2; r++) {
		y[r] = ir_op_new(p->f, OP_YIELD, 0, NULL, 0, NULL, 0);
		y[r]->loc = p->dot->loc;
		ir_append(ifo->regions[r], y[r]);
	}
	return y[0];
}

/* The TMA copies of both loads for iteration niv into slot `slot`, on
 * the slot's barrier, where `valid`. */
static void
issue_tma(Pipe *p, bool *chain, Value niv, Value valid, Value *buf,
	  Value full, Value slot)
{
	Func *f = p->f;
	IrCtx *c = f->mod->ctx;
	Op *at = p->at, *op;
	uint32_t mapn = f->vals.n;
	Value *map = arena_alloc(c->arena, mapn * sizeof *map), bar, zero = 0;
	int i, d;

	p->at = open_if(p, valid);
	map[p->iv] = niv;
	for (op = p->body->first; op && op != p->dot; op = op->next) {
		Op *cl;

		if (op->nres != 1 || op->res[0] >= p->nvals || !chain[op->res[0]])
			continue;
		cl = ir_clone_op(f, f, op, &map, &mapn);
		ir_insert_before(p->at, cl);
	}
	bar = emit(p, OP_MBAR_AT, ty_mbar(c, -1), 2, full, slot, 0);
	for (i = 0; i < 2; i++) {
		Value ops[5];
		Op *ld;

		ops[0] = p->desc[i];
		for (d = 0; d < 2; d++) {
			Value st = mapped(map, mapn, p->box[i].start[d]);

			if (!st && !zero)
				zero = iconst(p, ty_scalar(c, TY_I32), 0);
			ops[1 + d] = st ? st : zero;
		}
		ops[3] = stage_view(p, buf[i], slot);
		ops[4] = bar;
		ld = ir_op_new(f, OP_TMA_LOAD, 5, ops, 0, NULL, 0);
		ld->loc = p->ld[i]->loc;
		attr_set_int(c, &ld->attrs, "expect", 1);
		ir_insert_before(p->at, ld);
	}
	op = ir_op_new(f, OP_MBAR_ARRIVE, 1, &bar, 0, NULL, 0);
	op->loc = p->dot->loc;
	ir_insert_before(p->at, op);
	p->at = at;
}

/* The loop on TMA copies: stages filled by one thread's copies, each
 * completing on the stage's mbarrier; the dot waits for its stage. */
static void
rewrite_tma(Pipe *p, bool *chain)
{
	Func *f = p->f;
	IrCtx *c = f->mod->ctx;
	Type *it = ir_type(f, p->iv), *i32 = ty_scalar(c, TY_I32);
	Value buf[2], full, valid, niv, idx, slot, next, phase, s;
	Value lb = p->loop->opnds[0];
	int S = p->stages, i;
	Op *at;

	p->at = p->loop;
	for (i = 0; i < 2; i++) {
		Type *lt = ir_type(f, p->ld[i]->res[0]);
		int64_t shape[3] = { S, lt->shape[0], lt->shape[1] };

		buf[i] = emit(p, OP_SMEM_ALLOC, ty_smem(c, lt->elem, 3, shape), 0, 0,
			      0, 0);
	}
	full = emit(p, OP_MBAR_ALLOC, ty_mbar(c, S), 0, 0, 0, 0);
	attr_set_int(c, &ir_val(f, full)->def->attrs, "arrive", 1);
	/* the first S-1 stages: a loop of its own */
	at = p->at;
	s = stage_loop(p, lb, &niv, &valid);
	issue_tma(p, chain, niv, valid, buf, full, s);
	p->at = at;
	/* in the body: wait for this stage; after the dot, refill the one
	 * the previous iteration read */
	p->at = p->body->first;
	idx = emit(p, OP_DIV, it, 2, emit(p, OP_SUB, it, 2, p->iv, lb, 0),
		   p->loop->opnds[2], 0);
	idx = emit(p, OP_CVT, i32, 1, idx, 0, 0);
	slot = emit(p, OP_REM, i32, 2, idx, iconst(p, i32, S), 0);
	phase = emit(p, OP_AND, i32, 2, emit(p, OP_DIV, i32, 2, idx,
					    iconst(p, i32, S), 0),
		     iconst(p, i32, 1), 0);
	{
		Value w[2] = { emit(p, OP_MBAR_AT, ty_mbar(c, -1), 2, full, slot, 0),
			       phase };
		Op *wt = ir_op_new(f, OP_MBAR_WAIT, 2, w, 0, NULL, 0);

		wt->loc = p->dot->loc;
		ir_insert_before(p->at, wt);
	}
	next = emit(p, OP_REM, i32, 2, emit(p, OP_ADD, i32, 2, idx,
					   iconst(p, i32, S - 1), 0),
		    iconst(p, i32, S), 0);
	async_dot(p, buf, slot);
	p->at = p->dot->next;
	niv = shifted(p, p->iv, S - 1, &valid);
	issue_tma(p, chain, niv, valid, buf, full, next);
	wgmma_done(p);
}

/* The kernel's `tma.ok` parameter (made once): an i32 the runtime
 * derives, 1 when every derived tensor of the launch makes a tensor map
 * and the inner strides the TMA loops assume to be 1 are. */
static Value
tma_ok_param(Pipe *p)
{
	Func *f = p->f;
	IrCtx *c = f->mod->ctx;
	Value v;

	if (attr_has(&f->attrs, "tma.ok"))
		return f->body->args[attr_int(&f->attrs, "tma.ok", 0)];
	v = ir_block_add_arg(f->body, ty_scalar(c, TY_I32));
	ir_value_set_name(f, v, "tma.ok");
	attr_set_int(c, &f->attrs, "tma.ok", ir_val(f, v)->idx);
	attr_set_int(c, &f->attrs, "derived", attr_int(&f->attrs, "derived", 0) + 1);
	return v;
}

/* `if entry_fast || tma.ok != 0 { the loop on TMA copies } else { the
 * loop as it is }`: the fast entry reads its tiles with TMA (its
 * arguments are what a tensor map needs), the generic one where the
 * launch's arguments allow it (tma.ok) and else keeps its loads.
 * Returns the copy of the loop for TMA; loop stays the else branch's. */
static Op *
version(Pipe *p)
{
	Func *f = p->f;
	IrCtx *c = f->mod->ctx;
	Op *loop = p->loop, *ifo, *cl, *y[2];
	Type *i1 = ty_scalar(c, TY_I1), *i32 = ty_scalar(c, TY_I32);
	Type **rt = arena_alloc(p->pc->scratch, (loop->nres + 1) * sizeof *rt);
	Builder bd = { .fn = f, .before = loop, .loc = loop->loc };
	Value ef, ok, *map = NULL;
	uint32_t mapn = 0, i;

	ok = tma_ok_param(p);
	ef = b_op0(&bd, OP_ENTRY_FAST, i1);
	ok = b_cmp(&bd, "ne", ok, b_const_int(&bd, i32, 0));
	ef = b_op2(&bd, OP_OR, i1, ef, ok);
	for (i = 0; i < loop->nres; i++)
		rt[i] = ir_type(f, loop->res[i]);
	ifo = ir_op_new(f, OP_IF, 1, &ef, loop->nres, rt, 2);
	ifo->loc = loop->loc;
	ir_insert_before(loop, ifo);
	for (i = 0; i < loop->nres; i++)
		ir_replace_uses(f, loop->res[i], ifo->res[i]);
	cl = ir_clone_op(f, f, loop, &map, &mapn);
	ir_append(ifo->regions[0], cl);
	ir_remove(loop);
	ir_append(ifo->regions[1], loop);
	y[0] = ir_op_new(f, OP_YIELD, cl->nres, cl->res, 0, NULL, 0);
	y[1] = ir_op_new(f, OP_YIELD, loop->nres, loop->res, 0, NULL, 0);
	for (i = 0; i < 2; i++) {
		y[i]->loc = loop->loc;
		ir_append(ifo->regions[i], y[i]);
	}
	return cl;
}

/* ---- finding loops ------------------------------------------------------- */

/* The kernel's stages(N) when given (1: no pipelining; more than fit is
 * an error); else up to 4 stages, as many as fit in 48 KB (the kernel's
 * shared memory then stays static: measured on the H200, 3 stages of
 * 128x32 + 32x128 bf16 run as fast as 4); 2 or 3 bigger stages may take
 * up to 160 KB on sm_90a+ (96 KB on sm_80). */
static int
stages_for(Pipe *p)
{
	int64_t bytes = 0, budget = p->t->smem_pipeline;
	int64_t asked = attr_int(&p->f->attrs, "stages", 0);
	int i, S = 4;

	for (i = 0; i < 2; i++)
		if (p->ld[i])
			bytes += ty_numel(ir_type(p->f, p->ld[i]->res[0])) *
				 MAX(1, ty_bits(ir_type(p->f, p->ld[i]->res[0])->elem) / 8);
	if (asked == 1)
		return 0;
	if (asked > 1) {
		if (asked * bytes <= p->t->smem)
			return (int)asked;
		p->pc->failed = true;
		ir_error(p->pc->diag, p->f, p->loop, "stages(%lld) would keep "
			   "%lld bytes of this loop's operands in shared memory; "
			   "%s has %lld per program", (long long)asked,
			   (long long)(asked * bytes), p->t->name,
			   (long long)p->t->smem);
		return 0;
	}
	if (2 * bytes <= 48 * 1024)
		budget = 48 * 1024;
	while (S > 2 && S * bytes > budget)
		S--;
	return S * bytes <= budget ? S : 0;
}

/* Row bytes a tiled swizzle can hold (plan-smem's choice). */
static bool
tiled_rows(int64_t rb)
{
	return rb % 128 == 0 || rb == 64 || rb == 32;
}

/* The dot can run on wgmma from the stages: bf16 or f16 into f32 (fp8
 * wgmma needs B K-major), both operands staged, warpgroups that split it
 * as ly_wgmma does into m64 tiles of at most 256 columns, rows a tiled
 * swizzle holds, and an accumulator that only the dot updates (carried
 * in slot slot_j, yielded as it comes). */
static bool
wgmma_ok(Pipe *p)
{
	Func *f = p->f;
	Type *a = ir_type(f, p->dot->opnds[0]), *c = ir_type(f, p->dot->res[0]);
	int64_t M = a->shape[0], K = a->shape[1], N = c->shape[1];
	int64_t warps = attr_int(&f->attrs, "warps", 4);
	int gm, gn;
	Op *y = p->body->last;
	Value acc = p->dot->opnds[2];
	uint32_t j;

	if (!target_has(p->t, TF_WGMMA) || !p->ld[0] || !p->ld[1] ||
	    (ty_elem(a)->kind != TY_BF16 && ty_elem(a)->kind != TY_F16) ||
	    ty_elem(c)->kind != TY_F32 || warps % 4 || M % 64 || K % 16 ||
	    N % 8 || !tiled_rows(K * 2) || !tiled_rows(N * 2))
		return false;
	if (!ly_wgmma_split(M, N, (int)warps, &gm, &gn))
		return false;
	if ((N / gn) % 8 || ((N / gn) > 256 && (N / gn) % 256))
		return false;
	if (!y || y->kind != OP_YIELD || p->uses[p->dot->res[0]] != 1 ||
	    p->uses[acc] != 1)
		return false;
	for (j = 0; j < y->nopnds; j++)
		if (y->opnds[j] == p->dot->res[0])
			break;
	if (j == y->nopnds || j + 1 >= p->body->nargs ||
	    p->body->args[j + 1] != acc || j >= p->loop->nres)
		return false;
	p->slot_j = (int)j;
	return true;
}

static bool
try_loop(PassCtx *pc, const Target *t, Func *f, Op *loop)
{
	Pipe p = { .pc = pc, .t = t, .f = f, .loop = loop };
	bool *chain, trans_b;
	Value bound[2];
	Op *op;
	int i, ndots = 0;

	if (loop->kind != OP_FOR || loop->nregions != 1 || loop->nopnds < 3)
		return false;
	p.body = loop->regions[0];
	if (!p.body->nargs || !ty_is_int(ir_type(f, p.body->args[0])))
		return false;
	p.iv = p.body->args[0];
	for (op = p.body->first; op; op = op->next)
		if (op->kind == OP_DOT) {
			p.dot = op;
			ndots++;
		}
	if (ndots != 1 || !ly_dot_is_mma(t, f, p.dot, &trans_b))
		return false;
	p.nvals = f->vals.n;
	chain = arena_alloc(pc->scratch, f->vals.n * sizeof *chain);
	p.uses = ir_count_uses(f, pc->scratch);
	for (i = 0; i < 2; i++)
		if (i == 0 || !trans_b)
			p.ld[i] = pipelinable(&p, i, chain);
	if (!p.ld[0] && !p.ld[1])
		return false;
	p.wgmma = wgmma_ok(&p);
	if (!(p.stages = stages_for(&p)))
		return false;
	if (p.wgmma && target_has(t, TF_TMA) && p.ld[0] && p.ld[1] &&
	    tma_box(&p, 0, bound) && tma_box(&p, 1, bound)) {
		Pipe q = { .pc = pc, .t = t, .f = f, .stages = p.stages };

		q.loop = version(&p);
		rewrite(&p, chain);
		/* the copy on TMA, analysed afresh */
		q.body = q.loop->regions[0];
		q.iv = q.body->args[0];
		for (op = q.body->first; op; op = op->next)
			if (op->kind == OP_DOT)
				q.dot = op;
		q.nvals = f->vals.n;
		chain = arena_alloc(pc->scratch, f->vals.n * sizeof *chain);
		q.uses = ir_count_uses(f, pc->scratch);
		for (i = 0; i < 2; i++)
			q.ld[i] = pipelinable(&q, i, chain);
		if (NEVER(!q.dot || !q.ld[0] || !q.ld[1] || !wgmma_ok(&q)))
			return true;
		for (i = 0; i < 2; i++) {
			if (NEVER(!tma_box(&q, i, bound)))
				return true;
			q.desc[i] = tma_param(&q, i, bound);
		}
		q.wgmma = true;
		rewrite_tma(&q, chain);
		pass_stat(pc, "loops-tma", 1);
	} else {
		rewrite(&p, chain);
	}
	pass_stat(pc, "loops-pipelined", 1);
	if (p.wgmma)
		pass_stat(pc, "dots-async", 1);
	return true;
}

static bool
walk(PassCtx *pc, const Target *t, Func *f, Block *b)
{
	bool changed = false;
	Op *op, *next;
	uint32_t i;

	for (op = b->first; op; op = next) {
		next = op->next;
		for (i = 0; i < op->nregions; i++)
			changed |= walk(pc, t, f, op->regions[i]);
		if (op->kind == OP_FOR && try_loop(pc, t, f, op))
			changed = true;
	}
	return changed;
}

bool
pass_pipeline_loads(PassCtx *pc, Func *f)
{
	const Target *t = target_get(pc->sm);

	if (f->kind != FN_KERNEL || !t || ir_func_laid_out(f))
		return false;
	return walk(pc, t, f, f->body);
}
