/*
 * assign_layouts.c: layout assignment -- pass "assign-layouts", the step
 * from tile-level IR to the laid-out stage.
 *
 * Gives every tile value of a kernel a distributed layout (its type's
 * layout, ir.h "layouts") and makes every change of layout an explicit
 * `convert_layout`.  A tile is *rematerialized* when its op is cheap and
 * pure (ops.def F_REMAT: const, range, splat, the shape ops, elementwise
 * arithmetic, cmp, select, cvt, bitcast, ptr_add) and its tile operands
 * are too: such a value takes the layout its first use asks for, and
 * another use that asks for another layout gets a copy of it (and of its
 * operands) computed in that layout, so index and mask arithmetic never
 * converts.  Every other tile gets a *home*:
 *   load, atomic      blocked, vectorized and coalesced for its pointers
 *                     (the most contiguous dim fastest, up to 16 bytes per
 *                     thread, no more per thread than the tile has
 *                     elements per thread; axis analysis under the fast
 *                     path's assumptions); a 1-D load only broadcast into
 *                     an op with a tensor-core accumulator (a GEMM
 *                     epilogue's bias), the slice of the accumulator's
 *                     layout: no conversion, so no scratch, which would
 *                     keep a task's replicas apart (acc_slice);
 *   store             the value's home where a warp access through it
 *                     covers as many contiguous bytes (up to 128) as the
 *                     preferred one, else the preferred;
 *   reduce            the slice of its operand's layout (so that
 *                     `x - max(x, axis: 1)[:, None]` converts nothing);
 *   dot               the mma.sync accumulator, or blocked;
 *   dot_async         the wgmma accumulator (dot_wait: its operand's); an
 *                     A in registers is asked for in the accumulator
 *                     layout of its own shape (wgmma's fragment);
 *   smem_load         blocked along the view's contiguous dim;
 *   elementwise ops   the home of their first non-rematerialized operand;
 *   shape ops         the operand's layout seen through the shape op;
 *   loop-carried      the layout the loop body yields (a conversion, if
 *                     any, happens once before the loop), else the init's;
 *                     if results likewise.
 * A use whose op asks for another layout than its operand's home reads a
 * `convert_layout` placed just before it (one per value, layout and scope:
 * later uses in the same or an enclosing region share it).
 *
 * The tiles of a task are laid out over the task's warps.  Kernels with
 * ops code generation does not lower yet (schedules, pipes) stay at the
 * tile level.  Requires: tile-level IR of kernels (no layouts), calls inlined.
 * Produces: laid-out IR (every tile of the kernel has a layout).
 * Counters: converts, remats, layouts.
 */
#include <stdlib.h>

#include "passes/passes.h"

typedef struct ConvMemo {
	Value v, res;
	const Layout *ly;
	Block *blk;
} ConvMemo;

typedef struct Asg {
	PassCtx *pc;
	Func *f;
	LayoutTab *lt;
	const Target *tg;
	Arena *a;
	int nwarps;
	uint32_t nvals;       /* values before the rewrite */
	Axis *ax;             /* under the fast path's assumptions */
	const Layout **home;  /* per value: its home (remat: NULL) */
	bool *remat;
	Value **orig;         /* per remat value: its op's operands as made */
	Vec(ConvMemo) convs;
	Vec(ConvMemo) clones; /* remat copies: v in layout ly is res */
	Op **user;            /* per value: its one user (NULL: none or more) */
	int vec_bytes;        /* the most bytes of a thread's vector */
	bool row_warps;       /* TLX_ROW_WARPS=1: warps along the slower dims first */
} Asg;

static bool
is_tile(Asg *s, Value v)
{
	return ir_type(s->f, v)->kind == TY_TILE;
}

static int
ebytes(Type *t)
{
	Type *e = ty_elem(t);

	if (e->kind == TY_PTR)
		return 8;
	return MAX(1, ty_bits(e) / 8);
}

static const Layout *
dflt(Asg *s, Type *t)
{
	return ly_default(s->lt, t->rank, t->shape, ebytes(t), s->nwarps);
}

/* The home of v, or NULL when v is rematerialized (or not yet known). */
static const Layout *
lay(Asg *s, Value v)
{
	return v < s->nvals && !s->remat[v] ? s->home[v] : NULL;
}

/* ---- what rematerializes ------------------------------------------------------ */

static void
mark_remat(Op *op, void *ud)
{
	Asg *s = ud;
	uint32_t i;
	bool r;

	if (op->nres != 1 || !is_tile(s, op->res[0]))
		return;
	r = op_has(op, F_REMAT);
	for (i = 0; r && i < op->nopnds; i++)
		if (is_tile(s, op->opnds[i]) && !s->remat[op->opnds[i]])
			r = false;
	s->remat[op->res[0]] = r;
}

/* ---- layouts of memory accesses --------------------------------------------------- */

/* Bytes that one warp access covers contiguously: the vector times the
 * lanes that continue it. */
static int64_t
coalesced_bytes(Asg *s, Value ptr, const Layout *ly)
{
	Type *pt = ty_elem(ir_type(s->f, ptr));
	int vec = ly_mem_vec(s->f, ptr, ly, s->ax);
	int k = log2i(vec), d, sh = 0, i = 0;

	for (d = 0; d < ly->rank; d++) {
		sh = ly_dim_shift(ly, d);
		if (ly->nreg > 0 && ly->reg[0] == 1u << sh)
			break;
	}
	if (d == ly->rank)
		return ty_bytes(pt->elem);
	while (i < LY_LANES && k + i < ly_dim_bits(ly, d) &&
	       ly->lane[i] == 1u << (sh + k + i))
		i++;
	return (int64_t)vec * ty_bytes(pt->elem) << i;
}

/* 16, or TLX_VEC_BYTES (1, 2, 4 or 8: an A/B knob for the vectors of
 * narrow rows' generic entries, docs/internals.md). */
static int
vec_bytes(void)
{
	const char *e = getenv("TLX_VEC_BYTES");
	int v = e ? atoi(e) : 16;

	return v == 1 || v == 2 || v == 4 || v == 8 ? v : 16;
}

static const Layout *
preferred(Asg *s, Value ptr)
{
	Type *t = ir_type(s->f, ptr), *pt = ty_elem(t);
	const Axis *a = &s->ax[ptr];
	int64_t es = MAX(1, ty_bytes(pt->elem)), numel = ty_numel(t), vec;
	int order[TY_MAX_RANK], best = t->rank - 1, d, n = 0;

	for (d = t->rank - 1; d >= 0; d--)
		if (a->contig[d] > a->contig[best])
			best = d;
	order[n++] = best;
	for (d = t->rank - 1; d >= 0; d--)
		if (d != best)
			order[n++] = d;
	vec = MIN(a->contig[best], MAX(1, s->vec_bytes / es));
	vec = MIN(vec, a->div >= es ? a->div / es : 1);
	vec = MIN(vec, MAX(1, numel / (32 * s->nwarps)));
	vec = MIN(vec, t->shape[best]);
	if (s->row_warps && t->rank >= 2) {
		int worder[TY_MAX_RANK];

		for (d = 0; d < n; d++)
			worder[d] = order[n - 1 - d];
		return ly_blocked_warps(s->lt, t->rank, t->shape, order,
					(int)MAX(1, vec), s->nwarps, worder);
	}
	return ly_blocked(s->lt, t->rank, t->shape, order, (int)MAX(1, vec),
			  s->nwarps);
}

static Value
ptr_operand(Op *op)
{
	return op->kind == OP_CP_ASYNC ? op->opnds[1] : op->opnds[0];
}

/* The layout an access (load, store, atomics, cp_async) uses for its
 * pointer tile and every other tile operand. */
static const Layout *
mem_layout(Asg *s, Op *op)
{
	Value ptr = ptr_operand(op);
	const Layout *p = preferred(s, ptr), *h;
	int64_t qh, qp;

	if (op->kind != OP_STORE || op->nopnds < 2)
		return p;
	h = lay(s, op->opnds[1]);
	if (!h || h == p)
		return p;
	qh = coalesced_bytes(s, ptr, h);
	qp = coalesced_bytes(s, ptr, p);
	return qh >= MIN(qp, 128) ? h : p;
}

/* smem_load: 16-byte vectors along the view's contiguous dim. */
static const Layout *
smem_layout(Asg *s, Op *op, Type *rt)
{
	int order[TY_MAX_RANK], c = ir_view_contig(s->f, op->opnds[0]);
	int d, n = 0;
	int64_t vec = 16 / ebytes(rt);

	if (c < 0 || c >= rt->rank)
		return dflt(s, rt);
	order[n++] = c;
	for (d = rt->rank - 1; d >= 0; d--)
		if (d != c)
			order[n++] = d;
	vec = MIN(vec, rt->shape[c]);
	vec = MIN(vec, MAX(1, ty_numel(rt) / (32 * s->nwarps)));
	return ly_blocked(s->lt, rt->rank, rt->shape, order, (int)vec, s->nwarps);
}

/* ---- homes ------------------------------------------------------------------------ */

static void assign_block(Asg *s, Block *b);

static const Layout *
first_home(Asg *s, Op *op)
{
	uint32_t i;

	for (i = 0; i < op->nopnds; i++)
		if (is_tile(s, op->opnds[i]) && lay(s, op->opnds[i]))
			return lay(s, op->opnds[i]);
	return NULL;
}

static bool
set_home(Asg *s, Value v, const Layout *l)
{
	bool changed = s->home[v] != l;

	s->home[v] = l;
	return changed;
}

/* Loop-carried values: body args take the yielded layout, else the
 * init's; the body is assigned again while that changes anything.  A
 * body that never settles (x = trans(x) flips the layout every trip) is
 * assigned once more with the last homes of its args, so that its ops
 * agree with them; its yield then converts to the carried layout. */
static void
assign_loop(Asg *s, Block *body, uint32_t first_arg, const Value *inits,
	    uint32_t n)
{
	bool changed = false;
	Op *y;
	int round;
	uint32_t i;

	for (i = 0; i < n; i++)
		if (is_tile(s, inits[i]))
			set_home(s, body->args[first_arg + i], lay(s, inits[i]));
	for (round = 0; round < 3; round++) {
		changed = false;
		assign_block(s, body);
		y = body->last;
		for (i = 0; y && i < n && i < y->nopnds; i++) {
			Value a = body->args[first_arg + i];
			const Layout *yl;

			if (!is_tile(s, a))
				continue;
			yl = lay(s, y->opnds[i]);
			if (!yl)
				yl = s->home[a];
			if (!yl)
				yl = dflt(s, ir_type(s->f, a));
			changed |= set_home(s, a, yl);
		}
		if (!changed)
			break;
	}
	if (changed)
		assign_block(s, body);
}

/* A while's carried values: one layout per slot for the condition's
 * arguments, the body's and the results (the condition forwards its
 * values to both; the body yields back to the condition): the init's,
 * then what the body yields, while that changes anything, and the
 * regions once more with the last homes (see assign_loop). */
static void
assign_while(Asg *s, Op *op)
{
	Block *c = op->regions[0], *b = op->regions[1];
	uint32_t n = MIN(c->nargs, b->nargs), i;
	int round;

	for (i = 0; i < c->nargs && i < op->nopnds; i++)
		if (is_tile(s, c->args[i]))
			set_home(s, c->args[i], lay(s, op->opnds[i]) ? lay(s, op->opnds[i])
					: dflt(s, ir_type(s->f, c->args[i])));
	for (round = 0; round < 3; round++) {
		bool changed = false;
		Op *y;

		for (i = 0; i < n; i++)
			if (is_tile(s, b->args[i]))
				set_home(s, b->args[i], s->home[c->args[i]]);
		assign_block(s, c);
		assign_block(s, b);
		y = b->last;
		for (i = 0; y && i < n && i < y->nopnds; i++) {
			const Layout *yl = lay(s, y->opnds[i]);

			if (is_tile(s, c->args[i]) && yl)
				changed |= set_home(s, c->args[i], yl);
		}
		if (!changed)
			break;
	}
	for (i = 0; i < n; i++)
		if (is_tile(s, b->args[i]))
			set_home(s, b->args[i], s->home[c->args[i]]);
	/* a body that never settled: its ops as its args' last homes say */
	assign_block(s, c);
	assign_block(s, b);
	for (i = 0; i < op->nres && i < c->nargs; i++)
		if (is_tile(s, op->res[i]))
			set_home(s, op->res[i], s->home[c->args[i]]);
}

/* A task's tiles are laid out over its own warps (allocate-warps made
 * it compute every tile it uses); returns the warps outside it. */
static int
enter_task(Asg *s, Op *op)
{
	int outer = s->nwarps;

	if (op->kind == OP_TASK)
		s->nwarps = (int)attr_int(&op->attrs, "warps", outer);
	return outer;
}

static void
assign_control(Asg *s, Op *op)
{
	uint32_t i;
	int outer = enter_task(s, op);

	if (op->kind == OP_FOR && op->nregions == 1) {
		assign_loop(s, op->regions[0], 1, op->opnds + 3,
			    op->nopnds >= 3 ? op->nopnds - 3 : 0);
		for (i = 0; i < op->nres; i++)
			if (is_tile(s, op->res[i]))
				set_home(s, op->res[i],
					 s->home[op->regions[0]->args[i + 1]]);
	} else if (op->kind == OP_WHILE && op->nregions == 2) {
		assign_while(s, op);
	} else {
		for (i = 0; i < op->nregions; i++)
			assign_block(s, op->regions[i]);
		for (i = 0; op->kind == OP_IF && i < op->nres; i++) {
			const Layout *l = NULL;
			uint32_t r;

			if (!is_tile(s, op->res[i]))
				continue;
			for (r = 0; r < op->nregions && !l; r++) {
				Op *y = op->regions[r]->last;

				if (y && i < y->nopnds)
					l = lay(s, y->opnds[i]);
			}
			set_home(s, op->res[i],
				 l ? l : dflt(s, ir_type(s->f, op->res[i])));
		}
	}
	s->nwarps = outer;
}

/* The one user of each value (ops of nested blocks too); 1 marks two or
 * more. */
static void
find_users(Op *op, void *ud)
{
	Asg *s = ud;
	uint32_t i;

	for (i = 0; i < op->nopnds; i++) {
		Value v = op->opnds[i];

		if (v < s->nvals)
			s->user[v] = s->user[v] && s->user[v] != op ? (Op *)1 : op;
	}
}

static Op *
one_user(Asg *s, Value v)
{
	return v < s->nvals && s->user[v] != (Op *)1 ? s->user[v] : NULL;
}

/* A 1-D load that only feeds, through expand_dims (and a broadcast),
 * an elementwise op with a tensor-core accumulator: the slice of the
 * accumulator's layout, so that a GEMM epilogue's bias is loaded where
 * the accumulator's columns are and nothing converts (a conversion needs
 * scratch, which keeps a task's replicas from sharing one body).  NULL
 * otherwise. */
static const Layout *
acc_slice(Asg *s, Op *op)
{
	Op *e = one_user(s, op->res[0]), *u;
	const Layout *l;
	Type *et;
	uint32_t i;
	int axis;

	if (ir_type(s->f, op->res[0])->rank != 1 || !e ||
	    (e->kind != OP_EXPAND_DIMS && e->kind != OP_RESHAPE) ||
	    !(u = one_user(s, e->res[0])))
		return NULL;
	/* expand_dims, or the reshape canon makes of it: [n] -> [1, n] or
	 * [n, 1] */
	et = ir_type(s->f, e->res[0]);
	if (et->rank != 2 || (et->shape[0] != 1 && et->shape[1] != 1))
		return NULL;
	axis = et->shape[0] == 1 ? 0 : 1;
	if (u->kind == OP_BROADCAST && !(u = one_user(s, u->res[0])))
		return NULL;
	if (!op_has(u, F_REMAT) || u->nres != 1)
		return NULL;
	for (i = 0; i < u->nopnds; i++) {
		l = lay(s, u->opnds[i]);
		if (l && (l->kind == LY_WGMMA || l->kind == LY_MMA) &&
		    l->rank == 2)
			return ly_slice(s->lt, l, axis);
	}
	return NULL;
}

static const Layout *
home_of(Asg *s, Op *op)
{
	Type *rt = ir_type(s->f, op->res[0]);
	const Layout *l;

	switch (op->kind) {
	case OP_LOAD:
		if ((l = acc_slice(s, op)))
			return l;
		return mem_layout(s, op);
	case OP_ATOMIC: case OP_ATOMIC_CAS:
		return mem_layout(s, op);
	case OP_REDUCE:
		l = lay(s, op->opnds[0]);
		if (!l)
			l = dflt(s, ir_type(s->f, op->opnds[0]));
		return ly_slice(s->lt, l, (int)attr_int(&op->attrs, "axis", 0));
	case OP_DOT:
		return ly_dot(s->lt, s->tg, s->f, op, s->nwarps);
	case OP_DOT_ASYNC:
		if (rt->rank == 2 && rt->shape[0] % 64 == 0 && rt->shape[1] % 8 == 0 &&
		    s->nwarps % 4 == 0)
			return ly_wgmma(s->lt, rt->shape, s->nwarps);
		break;
	case OP_SMEM_LOAD:
		return smem_layout(s, op, rt);
	case OP_BROADCAST:
		if ((l = lay(s, op->opnds[0])))
			return ly_broadcast(s->lt, l, rt->rank, rt->shape);
		break;
	case OP_EXPAND_DIMS: case OP_RESHAPE:
		if ((l = lay(s, op->opnds[0])))
			return ly_reshape(s->lt, l, rt->rank, rt->shape);
		break;
	case OP_TRANS: {
		const Attr *p = attr_find(&op->attrs, "perm");

		if ((l = lay(s, op->opnds[0])) && p && p->ints.n == rt->rank)
			return ly_trans(s->lt, l, p->ints.v);
		break;
	}
	case OP_EXTRACT_SLICE:
		/* the operand's registers when the block lies in them */
		if ((l = lay(s, op->opnds[0])) &&
		    (l = ly_extract(s->lt, l, rt->shape)))
			return l;
		break;
	default:
		if ((l = first_home(s, op)))
			return l;
		break;
	}
	return dflt(s, rt);
}

static void
assign_block(Asg *s, Block *b)
{
	Op *op;

	for (op = b->first; op; op = op->next) {
		if (op->nregions) {
			assign_control(s, op);
			continue;
		}
		if (op->nres == 1 && is_tile(s, op->res[0]) && !s->remat[op->res[0]])
			set_home(s, op->res[0], home_of(s, op));
	}
}

/* ---- what each use asks for ------------------------------------------------------ */

/* The region argument a yield (or condition) operand i flows into. */
static Value
yield_target(Op *term, uint32_t i)
{
	Block *blk = term->parent;
	Op *parent = blk ? blk->parent : NULL;

	if (!parent)
		return 0;
	switch (parent->kind) {
	case OP_FOR:
		return i + 1 < blk->nargs ? blk->args[i + 1] : 0;
	case OP_WHILE:
		if (term->kind == OP_CONDITION) {
			Block *body = parent->regions[1];

			return i >= 1 && i - 1 < body->nargs ? body->args[i - 1] : 0;
		}
		return i < parent->regions[0]->nargs ? parent->regions[0]->args[i]
						     : 0;
	case OP_IF:
		return i < parent->nres ? parent->res[i] : 0;
	default:
		return 0;
	}
}

static const Layout *
home_or_default(Asg *s, Value v)
{
	const Layout *l = lay(s, v);

	return l ? l : dflt(s, ir_type(s->f, v));
}

/* The layout op (not rematerialized) asks for its tile operand i. */
static const Layout *
wanted(Asg *s, Op *op, uint32_t i)
{
	Value v = op->opnds[i], t;
	const Layout *h;

	switch (op->kind) {
	case OP_LOAD:  /* its home: acc_slice's or mem_layout's */
		return s->home[op->res[0]];
	case OP_STORE: case OP_ATOMIC: case OP_ATOMIC_CAS: case OP_CP_ASYNC:
		return mem_layout(s, op);
	case OP_REDUCE: case OP_SMEM_STORE: case OP_ASSERT:
		return home_or_default(s, v);
	case OP_DOT:
		return i == 2 ? s->home[op->res[0]] : home_or_default(s, v);
	case OP_DOT_ASYNC: {
		/* A in registers: wgmma's fragment of it (ly_wgmma_a: per
		 * k16 step the accumulator layout of an m64n16 tile), split
		 * over the warpgroups as the accumulator is */
		Type *at = ir_type(s->f, v);

		if (i == 2)
			return s->home[op->res[0]];
		if (at->rank == 2 && ty_bits(at->elem) == 16 &&
		    (h = ly_wgmma_a(s->lt, at->shape, s->home[op->res[0]])))
			return h;
		return home_or_default(s, v);
	}
	case OP_YIELD: case OP_CONDITION:
		t = yield_target(op, i);
		return t ? s->home[t] : NULL;
	case OP_FOR:
		return i >= 3 ? s->home[op->regions[0]->args[i - 2]] : NULL;
	case OP_WHILE:
		return s->home[op->regions[0]->args[i]];
	default:
		break;
	}
	if (op->nres != 1 || !is_tile(s, op->res[0]))
		return NULL;
	h = s->home[op->res[0]];
	if (!h)
		return NULL;
	switch (op->kind) {
	case OP_BROADCAST: case OP_EXPAND_DIMS: case OP_RESHAPE: case OP_TRANS:
		if (lay(s, v))
			return lay(s, v);
		return ly_shape_operand(s->lt, s->f, op, h);
	case OP_EXTRACT_SLICE: {
		/* else one with the bits above the block in registers (a
		 * conversion of the operand, once) */
		Type *at = ir_type(s->f, v);
		const Layout *ol = lay(s, v);

		if (ol && ly_extract_fits(ol, h))
			return ol;
		if ((ol = ly_extract_operand(s->lt, h, at->rank, at->shape)))
			return ol;
		return home_or_default(s, v);
	}
	default:
		return h;
	}
}

/* ---- the rewrite ------------------------------------------------------------------ */

static void
set_layout(Asg *s, Value v, const Layout *l)
{
	ValInfo *vi = ir_val(s->f, v);

	vi->ty = ty_with_layout(s->f->mod->ctx, vi->ty, l);
}

static Value resolve(Asg *s, Value v, const Layout *l);

/* The operands of remat op (whose result is in layout l) in the layouts
 * it computes them in. */
static void
resolve_operands(Asg *s, Op *op, const Value *orig, const Layout *l)
{
	uint32_t i;

	for (i = 0; i < op->nopnds; i++) {
		Value v = orig[i];
		bool shape = op->kind == OP_BROADCAST || op->kind == OP_EXPAND_DIMS ||
			     op->kind == OP_RESHAPE || op->kind == OP_TRANS;

		if (!is_tile(s, v))
			continue;
		op->opnds[i] = resolve(s, v, shape ? ly_shape_operand(s->lt, s->f,
								      op, l)
						 : l);
	}
}

/* Remat value v in layout l: v itself the first time it is asked for,
 * else a copy of its op placed just after it (so it is visible wherever v
 * is), computed from its operands in the layouts l asks of them. */
static Value
resolve(Asg *s, Value v, const Layout *l)
{
	Op *def = ir_val(s->f, v)->def, *c;
	Type *t = ir_type(s->f, v);
	uint32_t i;

	if (v >= s->nvals || !s->remat[v] || !def)
		return v;
	if (t->layout == l)
		return v;
	if (!s->orig[v])
		s->orig[v] = arena_dup(s->a, def->opnds,
				       (def->nopnds + 1) * sizeof *def->opnds);
	if (!t->layout) {
		set_layout(s, v, l);
		resolve_operands(s, def, s->orig[v], l);
		return v;
	}
	for (i = 0; i < s->clones.n; i++)
		if (s->clones.v[i].v == v && s->clones.v[i].ly == l)
			return s->clones.v[i].res;
	t = ty_with_layout(s->f->mod->ctx, t, l);
	c = ir_op_new(s->f, def->kind, def->nopnds, s->orig[v], 1, &t, 0);
	c->attrs = def->attrs;
	c->loc = def->loc;
	if (ir_val(s->f, v)->name)
		ir_value_set_name(s->f, c->res[0], ir_val(s->f, v)->name);
	ir_insert_after(def, c);
	vec_push(s->a, &s->clones, ((ConvMemo){ v, c->res[0], l, NULL }));
	pass_stat(s->pc, "remats", 1);
	resolve_operands(s, c, s->orig[v], l);
	return c->res[0];
}

/* Is a the block b or one of the blocks around it? */
static bool
encloses(Block *a, Block *b)
{
	for (; b; b = b->parent ? b->parent->parent : NULL)
		if (a == b)
			return true;
	return false;
}

/* Non-remat v in layout l for a use by op: a convert_layout before op,
 * or one made for an earlier use whose block encloses op. */
/* A shape op whose operand, a laid-out tile, has no more elements than
 * its result: converting the operand is no more work. */
static bool
shape_of_smaller(Asg *s, Op *d)
{
	Type *st;

	if (d->kind != OP_BROADCAST && d->kind != OP_EXPAND_DIMS &&
	    d->kind != OP_RESHAPE)
		return false;
	st = ir_type(s->f, d->opnds[0]);
	return st->kind == TY_TILE && st->layout &&
	       ty_numel(st) <= ty_numel(ir_type(s->f, d->res[0]));
}

static Value
convert(Asg *s, Value v, const Layout *l, Op *op)
{
	Type *t;
	Op *c, *d;
	uint32_t i;

	for (i = s->convs.n; i-- > 0;) {
		ConvMemo *m = &s->convs.v[i];

		if (m->v == v && m->ly == l && encloses(m->blk, op->parent))
			return m->res;
	}
	t = ty_with_layout(s->f->mod->ctx, ir_type(s->f, v), l);
	if ((d = ir_val(s->f, v)->def) && shape_of_smaller(s, d)) {
		/* the shape op again, on its operand converted: a smaller
		 * conversion (`acc + load(bias + n)[None, :]` converts the
		 * bias, not its broadcast) */
		Value src = d->opnds[0];
		const Layout *ol = ly_shape_operand(s->lt, s->f, d, l);

		if (ir_type(s->f, src)->layout != ol)
			src = convert(s, src, ol, op);
		c = ir_op_new(s->f, d->kind, 1, &src, 1, &t, 0);
		c->attrs = d->attrs;
	} else {
		c = ir_op_new(s->f, OP_CONVERT_LAYOUT, 1, &v, 1, &t, 0);
		pass_stat(s->pc, "converts", 1);
	}
	c->loc = op->loc;
	ir_insert_before(op, c);
	vec_push(s->a, &s->convs, ((ConvMemo){ v, c->res[0], l, op->parent }));
	return c->res[0];
}

static void rewrite_block(Asg *s, Block *b);

static void
rewrite_op(Asg *s, Op *op)
{
	const Layout **w = arena_alloc(s->a, (op->nopnds + 1) * sizeof *w);
	uint32_t i;
	int outer;

	/* what each operand should be, before any is replaced (the answers
	 * read the op's operands: an access's layout, its pointers') */
	for (i = 0; i < op->nopnds; i++) {
		Value v = op->opnds[i];

		w[i] = v < s->nvals && is_tile(s, v) ? wanted(s, op, i) : NULL;
	}
	for (i = 0; i < op->nopnds; i++) {
		Value v = op->opnds[i];

		if (!w[i])
			continue;
		if (s->remat[v])
			op->opnds[i] = resolve(s, v, w[i]);
		else if (s->home[v] && s->home[v] != w[i])
			op->opnds[i] = convert(s, v, w[i], op);
	}
	for (i = 0; i < op->nres; i++)
		if (is_tile(s, op->res[i]) && s->home[op->res[i]])
			set_layout(s, op->res[i], s->home[op->res[i]]);
	outer = enter_task(s, op);
	for (i = 0; i < op->nregions; i++)
		rewrite_block(s, op->regions[i]);
	s->nwarps = outer;
}

static void
rewrite_block(Asg *s, Block *b)
{
	Op *op, *next;
	uint32_t i;

	for (i = 0; i < b->nargs; i++)
		if (is_tile(s, b->args[i]) && s->home[b->args[i]])
			set_layout(s, b->args[i], s->home[b->args[i]]);
	for (op = b->first; op; op = next) {
		next = op->next;
		/* remat ops are laid out by their uses; new ops already are */
		if (op->nres == 1 && op->res[0] < s->nvals &&
		    is_tile(s, op->res[0]) && s->remat[op->res[0]])
			continue;
		if (op->nres && op->res[0] >= s->nvals)
			continue;
		rewrite_op(s, op);
	}
}

/* Remat ops no use asked for are dead: removed, so that every tile left
 * has a layout. */
static void
drop_unasked(Asg *s, Block *b)
{
	Op *op, *next;
	uint32_t i;

	for (op = b->first; op; op = next) {
		next = op->next;
		for (i = 0; i < op->nregions; i++)
			drop_unasked(s, op->regions[i]);
		if (op->nres == 1 && is_tile(s, op->res[0]) &&
		    op->res[0] < s->nvals && s->remat[op->res[0]] &&
		    !ir_type(s->f, op->res[0])->layout)
			ir_remove(op);
	}
}

/* Ops whose lowering does not exist yet keep a kernel at the tile level. */
static void
find_unlowered(Op *op, void *ud)
{
	if (op_has(op, F_UNLOWERED))
		*(bool *)ud = true;
}

static void
count_tiles(Op *op, void *ud)
{
	Func *f = op->parent->fn;
	uint32_t i;

	for (i = 0; i < op->nres; i++)
		if (ir_type(f, op->res[i])->kind == TY_TILE)
			++*(uint64_t *)ud;
}

typedef struct ParamUse {
	Func *f;
	bool *used;  /* by value */
} ParamUse;

static void
mark_param_uses(Op *op, void *ud)
{
	ParamUse *u = ud;
	uint32_t i;

	for (i = 0; i < op->nopnds; i++)
		if (op->opnds[i] < u->f->vals.n)
			u->used[op->opnds[i]] = true;
}

/* A kernel's parameters are what a host passes: scalars, pointers and
 * tensor descriptors.  Tile IR may give a kernel others (tiles, shared
 * buffers), which nothing lays out: a use of one is a user error (an
 * unused one is left alone, as code generation leaves it). */
static bool
host_params(PassCtx *pc, Func *f)
{
	ParamUse u = { f, arena_alloc(pc->scratch, f->vals.n * sizeof *u.used) };
	uint32_t i;

	memset(u.used, 0, f->vals.n * sizeof *u.used);
	ir_walk(f, mark_param_uses, &u);
	for (i = 0; i < f->body->nargs; i++) {
		ValInfo *vi = &f->vals.v[f->body->args[i]];
		TypeKind k = vi->ty->kind;
		Buf b = { 0 };

		if (ty_is_scalar_kind(k) || k == TY_PTR || k == TY_TMA ||
		    !u.used[f->body->args[i]])
			continue;
		ty_print(&b, vi->ty);
		ir_error(pc->diag, f, NULL, "kernel '%s': parameter %u%s%s%s is "
			 "a %s, which no host can pass (a kernel takes "
			 "scalars, pointers and tensor descriptors)", f->name,
			 i + 1, vi->name ? " ('" : "", vi->name ? vi->name : "",
			 vi->name ? "')" : "", b.s);
		buf_free(&b);
		pc->failed = true;
		return false;
	}
	return true;
}

bool
pass_assign_layouts(PassCtx *pc, Func *f)
{
	Asg s = { .pc = pc, .f = f, .a = pc->scratch, .vec_bytes = vec_bytes(),
		  .row_warps = (getenv("TLX_ROW_WARPS") &&
				!strcmp(getenv("TLX_ROW_WARPS"), "1")) ||
			       attr_str(&f->attrs, "generic_of") };
	Assume none = { 0 }, as;
	Axis *gen;
	bool unlowered = false;
	uint64_t n = 0;

	if (f->kind != FN_KERNEL || ir_func_laid_out(f))
		return false;
	if (!host_params(pc, f))
		return false;
	ir_walk(f, find_unlowered, &unlowered);
	if (unlowered)
		return false;
	s.tg = target_get(pc->sm);
	if (!s.tg)
		s.tg = target_get(90);
	s.lt = &f->mod->ctx->layouts;
	s.nwarps = (int)attr_int(&f->attrs, "warps", 4);
	s.nvals = f->vals.n;
	gen = axis_compute(f, s.a, &none);
	axis_pick_assumptions(f, gen, &as);
	/* a kernel's copy for its generic entry (generic_of, the driver's
	 * TLX_GENERIC_LAYOUTS): layouts under the proven facts alone */
	s.ax = attr_str(&f->attrs, "generic_of") ? gen
						: axis_compute(f, s.a, &as);
	s.home = arena_alloc(s.a, s.nvals * sizeof *s.home);
	s.remat = arena_alloc(s.a, s.nvals * sizeof *s.remat);
	s.orig = arena_alloc(s.a, s.nvals * sizeof *s.orig);
	memset(s.orig, 0, s.nvals * sizeof *s.orig);
	memset(s.home, 0, s.nvals * sizeof *s.home);
	memset(s.remat, 0, s.nvals * sizeof *s.remat);
	s.user = arena_alloc(s.a, s.nvals * sizeof *s.user);
	memset(s.user, 0, s.nvals * sizeof *s.user);
	ir_walk(f, find_users, &s);
	ir_walk(f, mark_remat, &s);
	assign_block(&s, f->body);
	rewrite_block(&s, f->body);
	drop_unasked(&s, f->body);
	ir_walk(f, count_tiles, &n);
	pass_stat(pc, "layouts", n);
	return true;
}
