/*
 * assign.c: home layouts for tile values.
 *
 * A tile value is *rematerializable* when its op is cheap and pure
 * (const, range, splat, broadcast, expand_dims, reshape, trans and the
 * elementwise ops: arithmetic, cmp, select, cvt, bitcast, ptr_add) and
 * its tile operands are rematerializable: such values are computed in
 * whatever layout each use asks for, so index and mask arithmetic never
 * needs a conversion.  Every other tile value gets a *home* layout:
 *   load, atomic      blocked, vectorized and coalesced for its pointers
 *                     (cg_mem_layout: the most contiguous dim fastest,
 *                     up to 16 bytes per thread, no more per thread than
 *                     the tile has elements per thread);
 *   reduce            the slice of its operand's layout (so that
 *                     `x - max(x, axis: 1)[:, None]` converts nothing);
 *   dot               the mma.sync accumulator layout;
 *   smem_load         the default blocked layout;
 *   elementwise ops   the home of their first non-rematerialized operand;
 *   shape ops         the operand's layout seen through the shape op;
 *   loop-carried      the layout the loop body yields (so a conversion,
 *                     if any, happens once before the loop), else the
 *                     init's; if results likewise.
 * A use that wants another layout converts through shared memory.
 */
#include "config.h"

#include "codegen/cg.h"

static bool
is_remat_kind(Op *op)
{
	return op_has(op, F_REMAT);
}

static void
mark_remat(Op *op, void *ud)
{
	CgFn *fn = ud;
	uint32_t i;
	bool r;

	if (op->nres != 1 || !cg_is_tile(fn, op->res[0]))
		return;
	r = is_remat_kind(op);
	for (i = 0; r && i < op->nopnds; i++)
		if (cg_is_tile(fn, op->opnds[i]) &&
		    !fn->vals[op->opnds[i]].remat)
			r = false;
	fn->vals[op->res[0]].remat = r;
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
dflt(CgFn *fn, Type *t)
{
	return ly_default(&fn->cg->layouts, t->rank, t->shape, ebytes(t), fn->nwarps);
}

/* The home of v, or NULL when v is rematerialized (or not yet known). */
static const Layout *
lay(CgFn *fn, Value v)
{
	return fn->vals[v].remat ? NULL : fn->vals[v].home;
}

int
cg_mem_vec(CgFn *fn, Value ptr, const Layout *ly, const Axis *ax)
{
	Type *pt = ty_elem(ir_type(fn->f, ptr));
	int64_t es = MAX(1, ty_bytes(pt->elem)), best = 1;
	const Axis *a = &ax[ptr];
	int d;

	for (d = 0; d < ly->rank; d++) {
		int sh = ly_dim_shift(ly, d), k = 0;
		int64_t v;

		while (k < ly->nreg && k < ly_dim_bits(ly, d) &&
		       ly->reg[k] == 1u << (sh + k))
			k++;
		v = (int64_t)1 << k;
		v = MIN(v, a->contig[d]);
		v = MIN(v, 16 / es);
		v = MIN(v, a->div >= es ? a->div / es : 1);
		best = MAX(best, v);
	}
	return (int)MAX(1, best);
}

/* Bytes that one warp access covers contiguously: the vector times the
 * lanes that continue it. */
static int64_t
coalesced_bytes(CgFn *fn, Value ptr, const Layout *ly)
{
	Type *pt = ty_elem(ir_type(fn->f, ptr));
	int vec = cg_mem_vec(fn, ptr, ly, fn->ax);
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

static const Layout *
preferred(CgFn *fn, Value ptr)
{
	Type *t = ir_type(fn->f, ptr), *pt = ty_elem(t);
	const Axis *a = &fn->ax[ptr];
	int64_t es = MAX(1, ty_bytes(pt->elem)), numel = ty_numel(t), vec;
	int order[TY_MAX_RANK], best = t->rank - 1, d, n = 0;

	for (d = t->rank - 1; d >= 0; d--)
		if (a->contig[d] > a->contig[best])
			best = d;
	order[n++] = best;
	for (d = t->rank - 1; d >= 0; d--)
		if (d != best)
			order[n++] = d;
	vec = MIN(a->contig[best], 16 / es);
	vec = MIN(vec, a->div >= es ? a->div / es : 1);
	vec = MIN(vec, MAX(1, numel / fn->nthreads));
	vec = MIN(vec, t->shape[best]);
	return ly_blocked(&fn->cg->layouts, t->rank, t->shape, order, (int)MAX(1, vec),
			  fn->nwarps);
}

const Layout *
cg_mem_layout(CgFn *fn, Op *op)
{
	Value ptr = op->kind == OP_CP_ASYNC ? op->opnds[1] : op->opnds[0];
	const Layout *p = preferred(fn, ptr), *h;
	int64_t qh, qp;

	if (op->kind != OP_STORE || op->nopnds < 2)
		return p;
	h = lay(fn, op->opnds[1]);
	if (!h || h == p)
		return p;
	qh = coalesced_bytes(fn, ptr, h);
	qp = coalesced_bytes(fn, ptr, p);
	return qh >= MIN(qp, 128) ? h : p;
}

static void assign_block(CgFn *fn, Block *b);

static const Layout *
first_home(CgFn *fn, Op *op)
{
	uint32_t i;

	for (i = 0; i < op->nopnds; i++)
		if (cg_is_tile(fn, op->opnds[i]) && lay(fn, op->opnds[i]))
			return lay(fn, op->opnds[i]);
	return NULL;
}

static bool
set_home(CgFn *fn, Value v, const Layout *l)
{
	bool changed = fn->vals[v].home != l;

	fn->vals[v].home = l;
	return changed;
}

/* Loop-carried values: body args take the yielded layout, else the
 * init's; the body is assigned again while that changes anything. */
static void
assign_loop(CgFn *fn, Op *op, Block *body, uint32_t first_arg,
	    const Value *inits, uint32_t n)
{
	Op *y;
	int round;
	uint32_t i;

	for (i = 0; i < n; i++)
		if (cg_is_tile(fn, inits[i]))
			set_home(fn, body->args[first_arg + i], lay(fn, inits[i]));
	for (round = 0; round < 3; round++) {
		bool changed = false;

		assign_block(fn, body);
		y = body->last;
		for (i = 0; y && i < n && i < y->nopnds; i++) {
			Value a = body->args[first_arg + i];
			const Layout *yl;

			if (!cg_is_tile(fn, a))
				continue;
			yl = lay(fn, y->opnds[i]);
			if (!yl)
				yl = fn->vals[a].home;
			if (!yl)
				yl = dflt(fn, ir_type(fn->f, a));
			changed |= set_home(fn, a, yl);
		}
		if (!changed)
			break;
	}
	(void)op;
}

static void
assign_control(CgFn *fn, Op *op)
{
	uint32_t i;

	if (op->kind == OP_FOR && op->nregions == 1) {
		assign_loop(fn, op, op->regions[0], 1, op->opnds + 3,
			    op->nopnds >= 3 ? op->nopnds - 3 : 0);
		for (i = 0; i < op->nres; i++)
			if (cg_is_tile(fn, op->res[i]))
				set_home(fn, op->res[i],
					 fn->vals[op->regions[0]->args[i + 1]].home);
	} else if (op->kind == OP_WHILE && op->nregions == 2) {
		Block *c = op->regions[0], *b = op->regions[1];

		assign_loop(fn, op, c, 0, op->opnds, op->nopnds);
		/* the condition's values feed the body and the results */
		if (c->last)
			assign_loop(fn, op, b, 0, c->last->opnds + 1,
				    c->last->nopnds ? c->last->nopnds - 1 : 0);
		for (i = 0; i < op->nres && i < b->nargs; i++)
			if (cg_is_tile(fn, op->res[i]))
				set_home(fn, op->res[i], fn->vals[b->args[i]].home);
	} else {
		for (i = 0; i < op->nregions; i++)
			assign_block(fn, op->regions[i]);
		for (i = 0; op->kind == OP_IF && i < op->nres; i++) {
			const Layout *l = NULL;
			uint32_t r;

			if (!cg_is_tile(fn, op->res[i]))
				continue;
			for (r = 0; r < op->nregions && !l; r++) {
				Op *y = op->regions[r]->last;

				if (y && i < y->nopnds)
					l = lay(fn, y->opnds[i]);
			}
			set_home(fn, op->res[i],
				 l ? l : dflt(fn, ir_type(fn->f, op->res[i])));
		}
	}
}

/* The dim of a view that is contiguous in memory: the buffer's last,
 * moved by the smem_trans ops on the way. */
static int
view_contig(CgFn *fn, Value v)
{
	ValInfo *vi = ir_val(fn->f, v);
	const Attr *perm;
	int c, d;

	if (!vi->def)
		return vi->ty->rank - 1;
	switch (vi->def->kind) {
	case OP_SMEM_TRANS:
		c = view_contig(fn, vi->def->opnds[0]);
		perm = attr_find(&vi->def->attrs, "perm");
		for (d = 0; perm && d < (int)perm->ints.n; d++)
			if (perm->ints.v[d] == c)
				return d;
		return vi->ty->rank - 1;
	case OP_SMEM_INDEX:
		return view_contig(fn, vi->def->opnds[0]) - 1;
	case OP_SMEM_SLICE:
		return view_contig(fn, vi->def->opnds[0]);
	default:
		return vi->ty->rank - 1;
	}
}

/* smem_load: 16-byte vectors along the view's contiguous dim. */
static const Layout *
smem_layout(CgFn *fn, Op *op, Type *rt)
{
	int order[TY_MAX_RANK], c = view_contig(fn, op->opnds[0]), d, n = 0;
	int64_t vec = 16 / ebytes(rt);

	if (c < 0 || c >= rt->rank)
		return dflt(fn, rt);
	order[n++] = c;
	for (d = rt->rank - 1; d >= 0; d--)
		if (d != c)
			order[n++] = d;
	vec = MIN(vec, rt->shape[c]);
	vec = MIN(vec, MAX(1, ty_numel(rt) / fn->nthreads));
	return ly_blocked(&fn->cg->layouts, rt->rank, rt->shape, order, (int)vec, fn->nwarps);
}

static const Layout *
home_of(CgFn *fn, Op *op)
{
	Type *rt = ir_type(fn->f, op->res[0]);
	const Layout *l;

	switch (op->kind) {
	case OP_LOAD: case OP_ATOMIC: case OP_ATOMIC_CAS:
		return cg_mem_layout(fn, op);
	case OP_REDUCE:
		l = lay(fn, op->opnds[0]);
		if (!l)
			l = dflt(fn, ir_type(fn->f, op->opnds[0]));
		return ly_slice(&fn->cg->layouts, l, (int)attr_int(&op->attrs, "axis", 0));
	case OP_DOT:
		return cg_dot_layout(fn, op);
	case OP_SMEM_LOAD:
		return smem_layout(fn, op, rt);
	case OP_BROADCAST:
		if ((l = lay(fn, op->opnds[0])))
			return ly_broadcast(&fn->cg->layouts, l, rt->rank, rt->shape);
		break;
	case OP_EXPAND_DIMS: case OP_RESHAPE:
		if ((l = lay(fn, op->opnds[0])))
			return ly_reshape(&fn->cg->layouts, l, rt->rank, rt->shape);
		break;
	case OP_TRANS: {
		const Attr *p = attr_find(&op->attrs, "perm");

		if ((l = lay(fn, op->opnds[0])) && p && p->ints.n == rt->rank)
			return ly_trans(&fn->cg->layouts, l, p->ints.v);
		break;
	}
	default:
		if ((l = first_home(fn, op)))
			return l;
		break;
	}
	return dflt(fn, rt);
}

static void
assign_block(CgFn *fn, Block *b)
{
	Op *op;

	for (op = b->first; op; op = op->next) {
		if (op->nregions) {
			assign_control(fn, op);
			continue;
		}
		if (op->nres == 1 && cg_is_tile(fn, op->res[0]) &&
		    !fn->vals[op->res[0]].remat)
			set_home(fn, op->res[0], home_of(fn, op));
	}
}

static void
mark_regs_used(Op *op, void *ud)
{
	CgFn *fn = ud;
	uint32_t i;

	for (i = 0; i < op->nopnds; i++) {
		if (op->kind == OP_DOT && i < 2 && cg_dot_view(fn, op, (int)i))
			continue;
		fn->vals[op->opnds[i]].regs_used = true;
	}
}

void
cg_assign_layouts(CgFn *fn)
{
	ir_walk(fn->f, mark_regs_used, fn);
	ir_walk(fn->f, mark_remat, fn);
	assign_block(fn, fn->f->body);
}

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
home_or_default(CgFn *fn, Value v)
{
	const Layout *l = lay(fn, v);

	return l ? l : dflt(fn, ir_type(fn->f, v));
}

const Layout *
cg_operand_layout(CgFn *fn, Op *op, uint32_t i)
{
	Value v = op->opnds[i], t;
	Type *vt = ir_type(fn->f, v), *rt;
	const Layout *h;

	if (vt->kind != TY_TILE)
		return NULL;
	switch (op->kind) {
	case OP_LOAD: case OP_STORE: case OP_ATOMIC: case OP_ATOMIC_CAS:
	case OP_CP_ASYNC:
		return cg_mem_layout(fn, op);
	case OP_REDUCE: case OP_SMEM_STORE: case OP_ASSERT:
		return home_or_default(fn, v);
	case OP_DOT:
		return i == 2 ? fn->vals[op->res[0]].home : home_or_default(fn, v);
	case OP_YIELD: case OP_CONDITION:
		t = yield_target(op, i);
		return t ? fn->vals[t].home : NULL;
	case OP_FOR:
		return i >= 3 ? fn->vals[op->regions[0]->args[i - 2]].home : NULL;
	case OP_WHILE:
		return fn->vals[op->regions[0]->args[i]].home;
	default:
		break;
	}
	if (op->nres != 1 || !cg_is_tile(fn, op->res[0]))
		return NULL;
	h = fn->vals[op->res[0]].home;
	rt = ir_type(fn->f, op->res[0]);
	if (!h)
		return NULL;
	switch (op->kind) {
	case OP_BROADCAST: case OP_EXPAND_DIMS: case OP_RESHAPE: case OP_TRANS:
		if (lay(fn, v))
			return lay(fn, v);
		return cg_shape_operand_layout(fn, op, h);
	default:
		(void)rt;
		return h;
	}
}

LLVMValueRef *
cg_operand(CgFn *fn, Op *op, uint32_t i)
{
	return cg_tile(fn, op->opnds[i], cg_operand_layout(fn, op, i));
}

Value
cg_ptr_operand(Op *op)
{
	switch (op->kind) {
	case OP_LOAD: case OP_STORE: case OP_ATOMIC: case OP_ATOMIC_CAS:
		return op->opnds[0];
	case OP_CP_ASYNC:
		return op->opnds[1];
	default:
		return 0;
	}
}

static uint64_t
access_deps(CgFn *fn, Op *op)
{
	Value ptr = cg_ptr_operand(op), m;
	const Layout *l;
	int vf;

	if (!ptr || !cg_is_tile(fn, ptr) || !(l = cg_mem_layout(fn, op)))
		return 0;
	vf = cg_mem_vec(fn, ptr, l, fn->ax);
	if (vf <= cg_mem_vec(fn, ptr, l, fn->ax_gen))
		return 0;
	/* a mask constant over the fast vectors only under the assumptions:
	 * the versioned loop checks those too */
	if ((m = cg_mask_operand(op)) && cg_is_tile(fn, m) &&
	    fn->ax[m].cnst[cg_vec_dim(l)] >= vf &&
	    fn->ax_gen[m].cnst[cg_vec_dim(l)] < vf)
		return fn->ax[ptr].deps | fn->ax[m].deps;
	return fn->ax[ptr].deps;
}

Value
cg_mask_operand(Op *op)
{
	switch (op->kind) {
	case OP_LOAD: case OP_CP_ASYNC:
		return op->nopnds > 2 || (op->kind == OP_LOAD && op->nopnds > 1)
			       ? op->opnds[op->kind == OP_LOAD ? 1 : 2] : 0;
	case OP_STORE: case OP_ATOMIC:
		return op->nopnds > 2 ? op->opnds[2] : 0;
	default:
		return 0;
	}
}

int
cg_vec_dim(const Layout *l)
{
	int d;

	if (!l->nreg || !l->reg[0])
		return l->rank - 1;
	for (d = 0; d < l->rank; d++) {
		int sh = ly_dim_shift(l, d);

		if (l->reg[0] >= 1u << sh && l->reg[0] < 1u << (sh + ly_dim_bits(l, d)))
			return d;
	}
	return l->rank - 1;
}

uint64_t
cg_fast_deps(CgFn *fn, Op *op)
{
	/* cp.async keeps its own check: both of its paths are short and hold
	 * no registers, so a loop of them (a pipelined dot) is not copied */
	uint64_t d = op->kind == OP_CP_ASYNC ? 0 : access_deps(fn, op);
	uint32_t i;
	Op *o;

	for (i = 0; i < op->nregions; i++)
		for (o = op->regions[i]->first; o; o = o->next)
			d |= cg_fast_deps(fn, o);
	return d;
}
