/*
 * plan_smem.c: shared-memory planning -- pass "plan-smem".
 *
 * Places a laid-out kernel's buffers and the scratch its ops need
 * (ir/smemplan.c says how) and records the plan in the IR: `offset` on
 * every smem_alloc and mbar_alloc, `scratch` on every op with scratch
 * (its byte offset), the kernel's `smem`, the bytes in all, and `vec`
 * on every smem_load, smem_store and cp_async: the elements per vector
 * access its view's alignment and strides allow (ir_smem_vec); each buffer
 * of two or more dims gets its swizzle encoding on its type first (a
 * tiled one, which wgmma reads and TMA writes, is aligned to its 8-row
 * atom) and each TMA descriptor its buffers' encoding.  Code
 * generation and the simulator read these; nothing plans again (code
 * generation reports a plan over the target's shared memory, beside the
 * other limits it checks).
 * Kernels with ops code generation does not lower yet (dynamic and clc
 * schedules, cluster ops) keep the simulator's own plan.  A task whose
 * replicas share one body is split again first when one of its ops
 * needs scratch (each instance would need a copy of its own).
 * Requires: laid-out IR.  Changes nothing but attributes.
 * Counters: buffers, scratch, bytes.
 */
#include "passes/passes.h"

typedef struct VecCtx {
	Func *f;
	const Axis *ax;
} VecCtx;

static void
find_unlowered(Op *op, void *ud)
{
	if (op_has(op, F_UNLOWERED))
		*(bool *)ud = true;
}

typedef struct Scratch {
	const Target *t;
	Func *f;
	bool any;
} Scratch;

static void
find_scratch(Op *op, void *ud)
{
	Scratch *s = ud;

	if (ir_op_scratch(s->t, s->f, op) > 0)
		s->any = true;
}

/* A task whose replicas share one body (merge-replicas) is split again
 * when one of its ops needs scratch: the instances run at once and would
 * need a copy each at an offset known only at run time. */
static void
split_merged(PassCtx *pc, const Target *t, Func *f)
{
	uint32_t i, n;
	Op **ts = ir_find_ops(f, OP_TASK, pc->scratch, &n);

	for (i = 0; i < n; i++) {
		Scratch s = { t, f, false };

		if (!attr_has(&ts[i]->attrs, "replicas"))
			continue;
		ir_walk_block(ts[i]->regions[0], find_scratch, &s);
		if (s.any) {
			ir_unmerge_task(f, ts[i]);
			pass_stat(pc, "tasks-split", 1);
		}
	}
}

static void
vec_op(Op *op, void *ud)
{
	VecCtx *v = ud;

	if (op->kind == OP_SMEM_LOAD || op->kind == OP_SMEM_STORE ||
	    op->kind == OP_CP_ASYNC)
		attr_set_int(v->f->mod->ctx, &op->attrs, "vec",
			     ir_smem_vec(v->f, op, v->ax));
}

typedef struct EncCtx {
	Func *f;
	bool *async;  /* per value: a buffer that dot_async reads */
} EncCtx;

static void
mark_async(Op *op, void *ud)
{
	EncCtx *e = ud;
	Op *b;

	if (op->kind == OP_TMA_LOAD || op->kind == OP_TMA_STORE) {
		int r = ir_type(e->f, op->opnds[0])->rank;

		if ((b = ir_view_buffer(e->f, op->opnds[1 + r])))
			e->async[b->res[0]] = true;
		return;
	}
	if (op->kind != OP_DOT_ASYNC)
		return;
	for (int i = 0; i < 2; i++)
		if (ir_type(e->f, op->opnds[i])->kind == TY_SMEM &&
		    (b = ir_view_buffer(e->f, op->opnds[i])))
			e->async[b->res[0]] = true;
}

/* A descriptor takes the encoding of the buffers it copies (one, as
 * their shapes are its box): the runtime encodes its swizzle. */
static void
set_desc_encoding(Op *op, void *ud)
{
	EncCtx *x = ud;
	Func *f = x->f;
	Type *d, *bt;
	Op *b;

	if (op->kind != OP_TMA_LOAD && op->kind != OP_TMA_STORE)
		return;
	d = ir_type(f, op->opnds[0]);
	if (d->kind != TY_TMA || !(b = ir_view_buffer(f, op->opnds[1 + d->rank])))
		return;
	bt = ir_type(f, b->res[0]);
	if (bt->layout && !d->layout)
		ir_val(f, op->opnds[0])->ty = ty_with_layout(f->mod->ctx, d,
							     bt->layout);
}

/* A buffer of two or more dims is swizzled by its row bytes: one that
 * dot_async reads or TMA copies in the tiled swizzle wgmma reads and TMA
 * writes (ly_swizzle_tiled: the widest of 128, 64 and 32 bytes its rows
 * allow; none for other rows), any other as
 * ly_swizzle_for says, so its own vector stores and an ldmatrix's 8 rows
 * fall on distinct banks. */
static void
set_encoding(Op *op, void *ud)
{
	EncCtx *x = ud;
	Func *f = x->f;
	LayoutTab *lt = &f->mod->ctx->layouts;
	Type *t;
	const Layout *e;
	int64_t rb;

	if (op->kind != OP_SMEM_ALLOC)
		return;
	t = ir_type(f, op->res[0]);
	if (t->rank < 2)
		return;
	rb = t->shape[t->rank - 1] * MAX(1, ty_bits(t->elem) / 8);
	if (x->async[op->res[0]])
		e = rb % 128 == 0 ? ly_swizzle_tiled(lt, 128)
		    : rb == 64 || rb == 32 ? ly_swizzle_tiled(lt, (int)rb) : NULL;
	else
		e = ly_swizzle_for(lt, rb);
	ir_val(f, op->res[0])->ty = ty_with_layout(f->mod->ctx, t, e);
}

/* The vector width of each shared-memory access, now that the plan says
 * how its buffer is aligned. */
static void
set_vecs(PassCtx *pc, Func *f)
{
	Assume none = { 0 };
	VecCtx v = { f, axis_compute(f, pc->scratch, &none) };

	ir_walk(f, vec_op, &v);
}

bool
pass_plan_smem(PassCtx *pc, Func *f)
{
	IrCtx *c = f->mod->ctx;
	const Target *t = target_get(pc->sm);
	bool unlowered = false;
	EncCtx enc;
	SmemPlan p;
	uint32_t i;

	if (f->kind != FN_KERNEL || !t)
		return false;
	ir_walk(f, find_unlowered, &unlowered);
	if (unlowered)
		return false;
	split_merged(pc, t, f);
	enc.f = f;
	enc.async = arena_alloc(pc->scratch, f->vals.n * sizeof *enc.async);
	memset(enc.async, 0, f->vals.n * sizeof *enc.async);
	ir_walk(f, mark_async, &enc);
	ir_walk(f, set_encoding, &enc);
	ir_walk(f, set_desc_encoding, &enc);
	ir_smem_plan(t, f, &p, pc->scratch);
	for (i = 0; i < p.e.n; i++) {
		SmemEntry *e = &p.e.v[i];
		bool buf = e->op->kind == OP_SMEM_ALLOC || e->op->kind == OP_MBAR_ALLOC;

		attr_set_int(c, &e->op->attrs, buf ? "offset" : "scratch", e->off);
		pass_stat(pc, buf ? "buffers" : "scratch", 1);
	}
	attr_set_int(c, &f->attrs, "smem", p.total);
	set_vecs(pc, f);
	pass_stat(pc, "bytes", (uint64_t)p.total);
	return true;
}
