/*
 * async.c: the builtins of the asynchronous machinery -- barriers,
 * fences, TMA, cp.async, asynchronous MMA, clusters, task replicas, tile
 * schedules -- and the methods of pipes.  docs/language.md, "Explicit
 * asynchrony", is the user's view; docs/il.md the ops they lower to.
 */
#include <string.h>

#include "parser/semaint.h"

static bool
one_barrier(Sema *s, Ast *e, SVal *out)
{
	*out = sema_expr(s, e);
	if (out->kind == SV_ERROR)
		return false;
	if (out->kind != SV_MBAR || out->ty->rank != 0) {
		diag_error(s->diag, e->loc, "expected one barrier (such as "
			   "'full[i]'), got %s", sv_describe(s, out));
		return false;
	}
	return true;
}

/* A scalar integer argument converted to i32 and materialized. */
static bool
i32_arg(Sema *s, Ast *e, const char *what, Value *out)
{
	SVal v = sema_expr(s, e);

	if (v.kind == SV_ERROR)
		return false;
	if (!sv_is_scalar(&v) || !ty_is_int(v.ty) ||
	    ty_elem(v.ty)->kind == TY_I1) {
		diag_error(s->diag, e->loc, "%s must be a scalar integer, got %s",
			   what, sv_describe(s, &v));
		return false;
	}
	v.weak = true;  /* range-checked below: i32 */
	v = sema_convert(s, v, ty_of_scalar(s, TY_I32), e->loc);
	if (v.kind == SV_ERROR)
		return false;
	*out = sema_materialize(s, &v);
	return *out != 0;
}

static SVal
voidv(void)
{
	return (SVal){ .kind = SV_VOID };
}

static SVal
a_wait(Sema *s, CallArgs *a)
{
	SVal bar;
	Value ops[2];

	if (!one_barrier(s, a->pos[0], &bar) ||
	    !i32_arg(s, a->pos[1], "the phase", &ops[1]))
		return sv_error();
	ops[0] = bar.v;
	ig_opn(s, OP_MBAR_WAIT, 2, ops, NULL, a->call->loc);
	return voidv();
}

static SVal
a_arrive(Sema *s, CallArgs *a)
{
	SVal bar;
	Value ops[2], bytes = 0;
	int64_t count = 1;
	uint32_t n = 1;
	Ast *e;
	Op *op;

	if (!one_barrier(s, a->pos[0], &bar))
		return sv_error();
	ops[0] = bar.v;
	if ((e = sema_named(a, "count")) &&
	    !sema_const_int_in(s, e, "the arrival count", 1, 1 << 20, &count))
		return sv_error();
	if ((e = sema_named(a, "cta")) && !i32_arg(s, e, "'cta'", &ops[n++]))
		return sv_error();
	if ((e = sema_named(a, "bytes"))) {
		Value eb[2];

		if (!i32_arg(s, e, "'bytes'", &bytes))
			return sv_error();
		if (n == 2) {
			diag_error(s->diag, e->loc, "'bytes' cannot be combined "
				   "with 'cta' (expect bytes on the local "
				   "barrier)");
			return sv_error();
		}
		eb[0] = bar.v;
		eb[1] = bytes;
		ig_opn(s, OP_MBAR_EXPECT, 2, eb, NULL, a->call->loc);
	}
	op = ig_opn(s, OP_MBAR_ARRIVE, n, ops, NULL, a->call->loc);
	if (count != 1)
		attr_set_int(s->ir, &op->attrs, "count", count);
	return voidv();
}

static SVal
a_expect(Sema *s, CallArgs *a)
{
	SVal bar;
	Value ops[2];

	if (!one_barrier(s, a->pos[0], &bar) ||
	    !i32_arg(s, a->pos[1], "the byte count", &ops[1]))
		return sv_error();
	ops[0] = bar.v;
	ig_opn(s, OP_MBAR_EXPECT, 2, ops, NULL, a->call->loc);
	return voidv();
}

static SVal
a_simple(Sema *s, CallArgs *a, OpKind k)
{
	ig_opn(s, k, 0, NULL, NULL, a->call->loc);
	return voidv();
}

static SVal
a_with_pending(Sema *s, CallArgs *a, OpKind k)
{
	int64_t n = 0;
	Op *op;

	if (a->npos && !sema_const_int_in(s, a->pos[0], "the number of pending groups",
				  0, 63, &n))
		return sv_error();
	op = ig_opn(s, k, 0, NULL, NULL, a->call->loc);
	attr_set_int(s->ir, &op->attrs, "pending", n);
	return voidv();
}

/* ---- TMA ---------------------------------------------------------------------- */

static bool
tma_desc(Sema *s, Ast *e, SVal *out)
{
	*out = sema_expr(s, e);
	if (out->kind == SV_ERROR)
		return false;
	if (out->kind != SV_TMA) {
		diag_error(s->diag, e->loc, "expected a tensor descriptor "
			   "parameter (declared 'tma<T, rank>'), got %s",
			   sv_describe(s, out));
		return false;
	}
	out->sym->tma_used = true;
	return true;
}

static bool
tma_coords(Sema *s, Ast *e, int rank, Value *out)
{
	uint32_t i;

	if (e->kind != AST_LIST || (int)e->list.n != rank) {
		diag_error(s->diag, e->loc, "expected a list of %d coordinates, "
			   "such as [m, k]", rank);
		return false;
	}
	for (i = 0; i < e->list.n; i++)
		if (!i32_arg(s, e->list.v[i], "a coordinate", &out[i]))
			return false;
	return true;
}

/* The box of a descriptor is the shape of the shared buffer it is used
 * with; every use must agree, and the runtime builds the descriptor
 * from it. */
static bool
tma_box(Sema *s, SVal *desc, SVal *buf, SrcRange loc)
{
	Sym *p = desc->sym;
	Type *t = desc->ty;
	int i;

	if (buf->ty->rank != t->rank || buf->ty->elem != t->elem) {
		diag_error(s->diag, loc, "descriptor '%s' is 'tma<%s, %d>' but "
			   "the shared buffer is '%s'", p->name,
			   ty_kind_name(t->elem->kind), t->rank,
			   sema_type_str(s, buf->ty));
		return false;
	}
	for (i = 0; i < t->rank; i++)
		if (buf->ty->shape[i] > 256) {
			diag_error(s->diag, loc, "a TMA box dimension is at most "
				   "256, got %lld (split the copy)",
				   (long long)buf->ty->shape[i]);
			return false;
		}
	if (buf->ty->shape[t->rank - 1] * ty_bytes(t->elem) % 16) {
		diag_error(s->diag, loc, "the innermost dimension of a TMA box "
			   "must span a multiple of 16 bytes, got %lld bytes",
			   (long long)(buf->ty->shape[t->rank - 1] *
				       ty_bytes(t->elem)));
		return false;
	}
	if (!p->has_box) {
		p->has_box = true;
		memcpy(p->box, buf->ty->shape, sizeof p->box);
		p->box_loc = loc;
		return true;
	}
	if (memcmp(p->box, buf->ty->shape, (size_t)t->rank * sizeof *p->box)) {
		diag_error(s->diag, loc, "descriptor '%s' is used here with a "
			   "box of %s, and with %s before: a descriptor has one "
			   "box; use a descriptor for each shape", p->name,
			   sema_shape_str(s, buf->ty->shape, t->rank),
			   sema_shape_str(s, p->box, t->rank));
		diag_note(s->diag, p->box_loc, "first used here");
		return false;
	}
	return true;
}

static SVal
a_tma_load(Sema *s, CallArgs *a)
{
	Value ops[TY_MAX_RANK + 4];
	SVal desc, dst, bar;
	Ast *be = sema_named(a, "barrier"), *me = sema_named(a, "multicast");
	uint32_t n = 1;
	int rank;
	Op *op;

	if (!tma_desc(s, a->pos[0], &desc))
		return sv_error();
	rank = desc.ty->rank;
	if (!tma_coords(s, a->pos[1], rank, ops + 1))
		return sv_error();
	n += (uint32_t)rank;
	dst = sema_expr(s, a->pos[2]);
	if (dst.kind == SV_ERROR)
		return dst;
	if (dst.kind != SV_SMEM) {
		diag_error(s->diag, a->pos[2]->loc, "'tma_load' copies into a "
			   "shared buffer, got %s", sv_describe(s, &dst));
		return sv_error();
	}
	if (!tma_box(s, &desc, &dst, a->call->loc))
		return sv_error();
	ops[0] = desc.v;
	ops[n++] = dst.v;
	if (dst.slot && be) {
		diag_error(s->diag, be->loc, "the destination is a pipe slot, "
			   "whose barrier is implicit: remove 'barrier:'");
		return sv_error();
	}
	if (!dst.slot && !be) {
		diag_error(s->diag, a->call->loc, "'tma_load' into a plain shared "
			   "buffer needs 'barrier:' (the barrier that counts "
			   "its bytes)");
		return sv_error();
	}
	if (dst.slot && !dst.producer) {
		diag_error(s->diag, a->pos[2]->loc, "'tma_load' into a slot from "
			   "'consume()': load into slots from 'acquire()'");
		return sv_error();
	}
	if (dst.slot) {
		Value pb[2] = { dst.sym->pipe, dst.slot };

		ops[n++] = ig_opn(s, OP_PIPE_BAR, 2, pb, ty_mbar(s->ir, -1),
				  a->call->loc)->res[0];
	} else {
		if (!one_barrier(s, be, &bar))
			return sv_error();
		ops[n++] = bar.v;
	}
	if (me && !i32_arg(s, me, "'multicast'", &ops[n++]))
		return sv_error();
	op = ig_opn(s, OP_TMA_LOAD, n, ops, NULL, a->call->loc);
	if (dst.slot)
		attr_set_int(s->ir, &op->attrs, "expect", 1);
	return voidv();
}

/* The staging of a tile stored with TMA: rows wider than one 128-byte
 * box of the widest swizzle go in column blocks of 128 bytes through two
 * buffers in turn, so that the shared stores of one block overlap the
 * copy of the one before and the buffers take a fraction of the tile;
 * *nblocks 1: one buffer of the tile's shape. */
static Type *
stage_type(Sema *s, Type *t, int *nblocks)
{
	int64_t shape[TY_MAX_RANK + 1], w = 128 / ty_bytes(t->elem);
	int r = t->rank;

	*nblocks = 1;
	if (r < 2 || r >= TY_MAX_RANK || w < 1 || t->shape[r - 1] <= w)
		return ty_smem(s->ir, t->elem, r, t->shape);
	*nblocks = (int)(t->shape[r - 1] / w);
	shape[0] = 2;
	memcpy(shape + 1, t->shape, (size_t)r * sizeof *shape);
	shape[r] = w;
	return ty_smem(s->ir, t->elem, r + 1, shape);
}

/* tma_store of tile v: staged (stage_type), each block after the
 * previous store from its buffer has read it. */
static bool
store_tile(Sema *s, SVal *desc, SVal v, Value *ops, SrcRange loc)
{
	Type *st, *bt, *i32 = ty_of_scalar(s, TY_I32);
	int rank = v.ty->rank, nb, j;
	int64_t offs[TY_MAX_RANK] = { 0 }, w;
	Value col = ops[rank], buf;
	Op *op;

	if (!sema_materialize(s, &v))
		return false;
	st = stage_type(s, v.ty, &nb);
	op = ig_opn(s, OP_SMEM_ALLOC, 0, NULL, st, loc);
	attr_set_str(s->ir, &op->attrs, "name", "tma_stage");
	buf = op->res[0];
	bt = nb > 1 ? ty_smem(s->ir, st->elem, rank, st->shape + 1) : st;
	w = bt->shape[rank - 1];
	for (j = 0; j < nb; j++) {
		SVal blk = { .kind = SV_SMEM, .ty = bt, .loc = loc };
		Value x = v.v, sv[2];

		attr_set_int(s->ir, &ig_opn(s, OP_TMA_STORE_WAIT, 0, NULL, NULL,
					    loc)->attrs, "pending", nb > 1);
		blk.v = buf;
		if (nb > 1) {
			Type *xt = ty_tile(s->ir, v.ty->elem, rank, bt->shape);

			blk.v = ig_op2(s, OP_SMEM_INDEX, bt, buf,
				       ig_const(s, i32, cv_int(TY_I32, j % 2)), loc);
			offs[rank - 1] = j * w;
			op = ig_opn(s, OP_EXTRACT_SLICE, 1, &x, xt, loc);
			attr_set_ints(s->ir, &op->attrs, "offsets", offs,
				      (uint32_t)rank);
			x = op->res[0];
			ops[rank] = j ? ig_op2(s, OP_ADD, i32, col,
					       ig_const(s, i32, cv_int(TY_I32, j * w)),
					       loc)
				      : col;
		}
		sv[0] = blk.v;
		sv[1] = x;
		ig_opn(s, OP_SMEM_STORE, 2, sv, NULL, loc);
		ig_opn(s, OP_FENCE_ASYNC, 0, NULL, NULL, loc);
		if (!tma_box(s, desc, &blk, loc))
			return false;
		ops[rank + 1] = blk.v;
		ig_opn(s, OP_TMA_STORE, (uint32_t)rank + 2, ops, NULL, loc);
	}
	return true;
}

static SVal
a_tma_store(Sema *s, CallArgs *a)
{
	Value ops[TY_MAX_RANK + 2];
	SVal desc, src;
	int rank;

	if (!tma_desc(s, a->pos[0], &desc))
		return sv_error();
	rank = desc.ty->rank;
	if (!tma_coords(s, a->pos[1], rank, ops + 1))
		return sv_error();
	src = sema_expr(s, a->pos[2]);
	if (src.kind == SV_ERROR)
		return src;
	ops[0] = desc.v;
	if (src.kind == SV_VALUE && src.ty->kind == TY_TILE) {
		if (src.ty->rank != rank || src.ty->elem != desc.ty->elem) {
			SVal whole = { .kind = SV_SMEM, .loc = src.loc,
				       .ty = ty_smem(s->ir, src.ty->elem,
						     src.ty->rank, src.ty->shape) };

			tma_box(s, &desc, &whole, a->call->loc);  /* refuses it */
			return sv_error();
		}
		if (!store_tile(s, &desc, src, ops, a->call->loc))
			return sv_error();
		return voidv();
	}
	if (src.kind != SV_SMEM) {
		diag_error(s->diag, a->pos[2]->loc, "'tma_store' writes a tile or "
			   "a shared buffer, got %s", sv_describe(s, &src));
		return sv_error();
	}
	if (!tma_box(s, &desc, &src, a->call->loc))
		return sv_error();
	ops[rank + 1] = src.v;
	ig_opn(s, OP_TMA_STORE, (uint32_t)rank + 2, ops, NULL, a->call->loc);
	return voidv();
}

static SVal
a_cp_async(Sema *s, CallArgs *a)
{
	SVal dst = sema_expr(s, a->pos[0]), src, m = { 0 };
	Value ops[3];
	Ast *me = sema_named(a, "mask");

	if (dst.kind == SV_ERROR)
		return dst;
	if (dst.kind != SV_SMEM) {
		diag_error(s->diag, a->pos[0]->loc, "'cp_async' copies into a "
			   "shared buffer, got %s", sv_describe(s, &dst));
		return sv_error();
	}
	src = sema_expr(s, a->pos[1]);
	if (src.kind == SV_ERROR)
		return src;
	if (src.kind != SV_VALUE || !ty_is_ptr(src.ty) ||
	    src.ty->kind != TY_TILE || ty_elem(src.ty)->elem != dst.ty->elem ||
	    src.ty->rank != dst.ty->rank ||
	    memcmp(src.ty->shape, dst.ty->shape, sizeof src.ty->shape)) {
		diag_error(s->diag, a->pos[1]->loc, "'cp_async' needs a tile of "
			   "pointers with the buffer's shape and element "
			   "('%s'), got %s", sema_type_str(s, dst.ty),
			   sv_describe(s, &src));
		return sv_error();
	}
	ops[0] = dst.v;
	ops[1] = src.v;
	if (me) {
		m = sema_expr(s, me);
		if (m.kind == SV_ERROR)
			return m;
		if (m.kind != SV_VALUE || ty_elem(m.ty)->kind != TY_I1) {
			diag_error(s->diag, me->loc, "a mask must be a boolean "
				   "(i1) tile, got %s", sv_describe(s, &m));
			return sv_error();
		}
		m = sema_broadcast(s, m, ty_like(s->ir, src.ty, ty_elem(m.ty)),
				   me->loc);
		if (m.kind == SV_ERROR || !(ops[2] = sema_materialize(s, &m)))
			return sv_error();
	}
	ig_opn(s, OP_CP_ASYNC, me ? 3 : 2, ops, NULL, a->call->loc);
	return voidv();
}

/* ---- asynchronous MMA ---------------------------------------------------------------- */

static SVal
a_dot_async(Sema *s, CallArgs *a)
{
	SVal x = sema_expr(s, a->pos[0]), y, c;
	Type *tx, *at;
	Value ops[3];
	int64_t mn[2];

	if (x.kind == SV_ERROR)
		return x;
	y = sema_expr(s, a->pos[1]);
	if (y.kind == SV_ERROR)
		return y;
	if (!(x.kind == SV_SMEM || (x.kind == SV_VALUE && x.ty->kind == TY_TILE)) ||
	    y.kind != SV_SMEM) {
		diag_error(s->diag, a->call->loc, "'dot_async' takes A from shared "
			   "memory or registers and B from shared memory, got %s "
			   "and %s", sv_describe(s, &x), sv_describe(s, &y));
		return sv_error();
	}
	tx = x.ty;
	if (tx->rank != 2 || y.ty->rank != 2 || tx->shape[1] != y.ty->shape[0]) {
		diag_error(s->diag, a->call->loc, "'dot_async' operands do not "
			   "agree: '%s' times '%s'", sema_type_str(s, tx),
			   sema_type_str(s, y.ty));
		return sv_error();
	}
	if (tx->elem != y.ty->elem || (tx->elem->kind != TY_F16 &&
	    tx->elem->kind != TY_BF16 && tx->elem->kind != TY_F8E4M3 &&
	    tx->elem->kind != TY_F8E5M2 && tx->elem->kind != TY_I8)) {
		diag_error(s->diag, a->call->loc, "'dot_async' supports f16, bf16, "
			   "f8e4m3, f8e5m2 and i8 operands of one type, got '%s' "
			   "and '%s'", ty_kind_name(tx->elem->kind),
			   ty_kind_name(y.ty->elem->kind));
		return sv_error();
	}
	mn[0] = tx->shape[0];
	mn[1] = y.ty->shape[1];
	at = ty_tile(s->ir, ty_of_scalar(s, tx->elem->kind == TY_I8 ? TY_I32
					 : TY_F32), 2, mn);
	c = sema_expr(s, a->pos[2]);
	if (c.kind == SV_ERROR)
		return c;
	if (c.kind != SV_VALUE || c.ty != at) {
		diag_error(s->diag, a->pos[2]->loc, "the accumulator must be "
			   "'%s', got %s", sema_type_str(s, at),
			   sv_describe(s, &c));
		return sv_error();
	}
	if (!sema_materialize(s, &x))
		return sv_error();
	ops[0] = x.v;
	ops[1] = y.v;
	ops[2] = c.v;
	return sv_value(at, ig_opn(s, OP_DOT_ASYNC, 3, ops, at,
				   a->call->loc)->res[0], a->call->loc);
}

static SVal
a_dot_wait(Sema *s, CallArgs *a)
{
	SVal x = sema_expr(s, a->pos[0]), r;
	Ast *pe = sema_named(a, "pending");
	int64_t pending = 0;
	uint32_t n = x.kind == SV_TUPLE ? x.nelems : 1, i;
	Value ops[16];
	Type *rt[16];
	Op *op;

	if (x.kind == SV_ERROR)
		return x;
	if (pe && !sema_const_int_in(s, pe, "'pending'", 0, 63, &pending))
		return sv_error();
	if (n > 16) {
		diag_error(s->diag, a->pos[0]->loc, "'dot_wait' takes at most 16 "
			   "values");
		return sv_error();
	}
	for (i = 0; i < n; i++) {
		SVal *e = x.kind == SV_TUPLE ? &x.elems[i] : &x;

		if (e->kind != SV_VALUE || !sema_materialize(s, e)) {
			diag_error(s->diag, a->pos[0]->loc, "'dot_wait' takes the "
				   "results of 'dot_async', got %s",
				   sv_describe(s, e));
			return sv_error();
		}
		ops[i] = e->v;
		rt[i] = e->ty;
	}
	ig_set_loc(s, a->call->loc);
	op = b_insert(s->b, ir_op_new(s->fn, OP_DOT_WAIT, n, ops, n, rt, 0));
	attr_set_int(s->ir, &op->attrs, "pending", pending);
	if (x.kind != SV_TUPLE)
		return sv_value(rt[0], op->res[0], a->call->loc);
	r = x;
	r.elems = arena_alloc(s->arena, n * sizeof *r.elems);
	for (i = 0; i < n; i++)
		r.elems[i] = sv_value(rt[i], op->res[i], a->call->loc);
	return r;
}

/* ---- tasks, clusters, schedules --------------------------------------------------------- */

static SVal
a_replica(Sema *s, CallArgs *a)
{
	if (!s->in_tasks) {
		diag_error(s->diag, a->call->loc, "'replica()' is only available "
			   "inside a task");
		return sv_error();
	}
	return sv_const_int(s, TY_I32, s->replica, a->call->loc);
}

static SVal
a_cluster_rank(Sema *s, CallArgs *a)
{
	return sv_value(ty_of_scalar(s, TY_I32),
			ig_opn(s, OP_CLUSTER_RANK, 0, NULL, ty_of_scalar(s, TY_I32),
			       a->call->loc)->res[0], a->call->loc);
}

static SVal
a_tiles(Sema *s, CallArgs *a)
{
	static const char *const kinds[] = { "static", "dynamic", "clc", NULL };
	Ast *ke = sema_named(a, "schedule");
	const char *kind = "static";
	Value n;
	Op *op;
	int i;

	if (s->in_tasks) {
		diag_error(s->diag, a->call->loc, "create the schedule outside "
			   "'tasks', so that every task iterates the same tiles");
		return sv_error();
	}
	if (!i32_arg(s, a->pos[0], "the number of tiles", &n))
		return sv_error();
	if (ke) {
		const char *w = ke->kind == AST_NAME || ke->kind == AST_STRING
				? ke->name : NULL;

		for (i = 0; w && kinds[i]; i++)
			if (strcmp(w, kinds[i]) == 0)
				break;
		if (!w || !kinds[i]) {
			diag_error(s->diag, ke->loc, "'schedule' must be static, "
				   "dynamic or clc");
			return sv_error();
		}
		kind = kinds[i];
	}
	op = ig_opn(s, OP_SCHED_CREATE, 1, &n, ty_simple(s->ir, TY_SCHED),
		    a->call->loc);
	attr_set_sym(s->ir, &op->attrs, "kind", kind);
	return (SVal){ .kind = SV_SCHED, .ty = ty_simple(s->ir, TY_SCHED),
		       .v = op->res[0], .loc = a->call->loc };
}

/* ---- the dispatcher ---------------------------------------------------------------------- */

SVal
sema_async_builtin(Sema *s, Ast *call, const char *name)
{
	static const char *const arrive_names[] = { "count", "cta", "bytes", NULL };
	static const char *const tma_names[] = { "barrier", "multicast", NULL };
	static const char *const mask_names[] = { "mask", NULL };
	static const char *const wait_names[] = { "pending", NULL };
	static const char *const tiles_names[] = { "schedule", NULL };
	static const struct {
		const char *name;
		uint32_t min, max;
		const char *const *names;
	} sig[] = {
		{ "wait", 2, 2, NULL }, { "arrive", 1, 1, arrive_names },
		{ "expect_bytes", 2, 2, NULL }, { "fence_async_shared", 0, 0, NULL },
		{ "sync_threads", 0, 0, NULL }, { "tma_load", 3, 3, tma_names },
		{ "tma_store", 3, 3, NULL }, { "tma_store_wait", 0, 1, NULL },
		{ "cp_async", 2, 2, mask_names }, { "cp_async_commit", 0, 0, NULL },
		{ "cp_async_wait", 0, 1, NULL }, { "dot_async", 3, 3, NULL },
		{ "dot_wait", 1, 1, wait_names }, { "cluster_rank", 0, 0, NULL },
		{ "cluster_sync", 0, 0, NULL }, { "replica", 0, 0, NULL },
		{ "tiles", 1, 1, tiles_names },
	};
	CallArgs a;
	size_t i;

	for (i = 0; i < countof(sig); i++)
		if (strcmp(sig[i].name, name) == 0)
			break;
	if (i == countof(sig) ||
	    !sema_args(s, call, name, sig[i].min, sig[i].max, sig[i].names, &a))
		return sv_error();
	if (strcmp(name, "replica") == 0)
		return a_replica(s, &a);
	if (!ig_need_builder(s, call->loc))
		return sv_error();
	if (s->fn->kind == FN_GRID) {
		diag_error(s->diag, call->loc, "'%s' cannot be used in grid()",
			   name);
		return sv_error();
	}
	if (!strcmp(name, "wait")) return a_wait(s, &a);
	if (!strcmp(name, "arrive")) return a_arrive(s, &a);
	if (!strcmp(name, "expect_bytes")) return a_expect(s, &a);
	if (!strcmp(name, "fence_async_shared")) return a_simple(s, &a, OP_FENCE_ASYNC);
	if (!strcmp(name, "sync_threads")) return a_simple(s, &a, OP_SYNC_THREADS);
	if (!strcmp(name, "cluster_sync")) return a_simple(s, &a, OP_CLUSTER_SYNC);
	if (!strcmp(name, "cp_async_commit")) return a_simple(s, &a, OP_CP_ASYNC_COMMIT);
	if (!strcmp(name, "tma_store_wait")) return a_with_pending(s, &a, OP_TMA_STORE_WAIT);
	if (!strcmp(name, "cp_async_wait")) return a_with_pending(s, &a, OP_CP_ASYNC_WAIT);
	if (!strcmp(name, "tma_load")) return a_tma_load(s, &a);
	if (!strcmp(name, "tma_store")) return a_tma_store(s, &a);
	if (!strcmp(name, "cp_async")) return a_cp_async(s, &a);
	if (!strcmp(name, "dot_async")) return a_dot_async(s, &a);
	if (!strcmp(name, "dot_wait")) return a_dot_wait(s, &a);
	if (!strcmp(name, "cluster_rank")) return a_cluster_rank(s, &a);
	return a_tiles(s, &a);
}

/* ---- pipes ------------------------------------------------------------------------------ */

static bool
slot_of(Sema *s, Ast *e, Sym *p, bool producer, Value *out)
{
	SVal v = sema_expr(s, e);

	if (v.kind == SV_ERROR)
		return false;
	if (v.kind != SV_SLOT || v.sym != p || v.producer != producer) {
		diag_error(s->diag, e->loc, "expected a slot of pipe '%s' from "
			   "'%s.%s()', got %s", p->name, p->name,
			   producer ? "acquire" : "consume", sv_describe(s, &v));
		return false;
	}
	*out = v.v;
	return true;
}

SVal
sema_pipe_method(Sema *s, Ast *e, SVal obj)
{
	Sym *p = obj.sym;
	bool acquire = !strcmp(e->name, "acquire"), commit = !strcmp(e->name, "commit");
	bool consume = !strcmp(e->name, "consume"), release = !strcmp(e->name, "release");
	CallArgs a;
	Value ops[2];

	if (!acquire && !commit && !consume && !release) {
		diag_error(s->diag, e->loc, "pipes have the methods acquire, "
			   "commit, consume and release, not '%s'", e->name);
		return sv_error();
	}
	if (!sema_args(s, e, e->name, commit || release ? 1 : 0,
		       commit || release ? 1 : 0, NULL, &a) ||
	    !ig_need_builder(s, e->loc))
		return sv_error();
	ops[0] = p->pipe;
	if (acquire || consume) {
		Type *i32 = ty_of_scalar(s, TY_I32);
		Value v = ig_opn(s, acquire ? OP_PIPE_ACQUIRE : OP_PIPE_CONSUME, 1,
				 ops, i32, e->loc)->res[0];

		return (SVal){ .kind = SV_SLOT, .ty = i32, .v = v, .sym = p,
			       .producer = acquire, .loc = e->loc };
	}
	if (!slot_of(s, a.pos[0], p, commit, &ops[1]))
		return sv_error();
	ig_opn(s, commit ? OP_PIPE_COMMIT : OP_PIPE_RELEASE, 2, ops, NULL, e->loc);
	return voidv();
}
