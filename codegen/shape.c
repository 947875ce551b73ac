/*
 * shape.c: constants, indices and shape ops -- const, range, program_id,
 * num_programs, splat, broadcast, expand_dims, reshape, trans,
 * extract_slice -- and the
 * rematerialization of a cheap tile value in a requested layout.
 *
 * Shape ops move no data: a layout is a map from (register, lane, warp)
 * to the flat index, so expand_dims and reshape keep the registers as
 * they are (the row-major flat index does not change), trans permutes
 * the index's fields, broadcast reads the operand in the projection
 * of the result's layout (the broadcast dims' bases become replication),
 * and extract_slice picks the operand's registers that hold the block.
 */
#include "config.h"

#include "codegen/cg.h"

static int64_t
inverse_perm(const Attr *p, int64_t *inv)
{
	uint32_t i;

	for (i = 0; p && i < p->ints.n && i < TY_MAX_RANK; i++)
		inv[p->ints.v[i]] = (int64_t)i;
	return p ? (int64_t)p->ints.n : 0;
}

const Layout *
cg_shape_operand_layout(CgFn *fn, Op *op, const Layout *res)
{
	Type *at = ir_type(fn->f, op->opnds[0]);
	int64_t inv[TY_MAX_RANK];

	switch (op->kind) {
	case OP_BROADCAST:
		return ly_project(&fn->cg->layouts, res, at->rank, at->shape);
	case OP_TRANS:
		if (inverse_perm(attr_find(&op->attrs, "perm"), inv) == res->rank)
			return ly_trans(&fn->cg->layouts, res, inv);
		return res;
	default:
		return ly_reshape(&fn->cg->layouts, res, at->rank, at->shape);
	}
}

static LLVMValueRef *
splat(CgFn *fn, const Layout *ly, LLVMValueRef v)
{
	LLVMValueRef *r = cg_regs(fn, ly);
	int i;

	for (i = 0; i < ly_nregs(ly); i++)
		r[i] = v;
	return r;
}

static LLVMValueRef *
range(CgFn *fn, Op *op, const Layout *ly)
{
	Cg *cg = fn->cg;
	LLVMValueRef *r = cg_regs(fn, ly), t = cg_thread_coord(fn, ly, 0);
	int64_t start = attr_int(&op->attrs, "start", 0);
	uint32_t dup = ly_dup_mask(ly), i;

	for (i = 0; i < (uint32_t)ly_nregs(ly); i++) {
		if (i & dup) {
			r[i] = r[i & ~dup];
			continue;
		}
		r[i] = LLVMBuildAdd(cg->B, t,
				    cg_i32(cg, start + ly_reg_flat(ly, i)), "");
	}
	return r;
}

LLVMValueRef *
cg_remat(CgFn *fn, Value v, const Layout *ly)
{
	Op *op = ir_val(fn->f, v)->def;
	Type *t = ir_type(fn->f, v);

	switch (op->kind) {
	case OP_CONST:
		return splat(fn, ly, cg_const(fn->cg, t,
					      attr_find(&op->attrs, "value")));
	case OP_RANGE:
		return range(fn, op, ly);
	case OP_SPLAT:
		return splat(fn, ly, cg_scalar(fn, op->opnds[0]));
	case OP_BROADCAST: case OP_EXPAND_DIMS: case OP_RESHAPE: case OP_TRANS:
		return cg_tile(fn, op->opnds[0],
			       cg_shape_operand_layout(fn, op, ly));
	case OP_CVT: case OP_BITCAST:
		return cg_convert_compute(fn, op, ly);
	default:
		return cg_elem_compute(fn, op, ly);
	}
}

/* The operand coordinates of a shape op's result coordinates c. */
static void
operand_coords(CgFn *fn, Op *op, LLVMValueRef *c, LLVMValueRef *oc)
{
	Cg *cg = fn->cg;
	Type *rt = ir_type(fn->f, op->res[0]), *at = ir_type(fn->f, op->opnds[0]);
	int64_t inv[TY_MAX_RANK];
	int d, k = 0, axis = (int)attr_int(&op->attrs, "axis", 0), sh = 0;
	LLVMValueRef flat = cg_i32(cg, 0);

	switch (op->kind) {
	case OP_BROADCAST:
		for (d = 0; d < at->rank; d++)
			oc[d] = at->shape[d] == 1 ? cg_i32(cg, 0) : c[d];
		return;
	case OP_EXPAND_DIMS:
		for (d = 0; d < rt->rank; d++)
			if (d != axis)
				oc[k++] = c[d];
		return;
	case OP_TRANS:
		inverse_perm(attr_find(&op->attrs, "perm"), inv);
		for (d = 0; d < at->rank; d++)
			oc[d] = c[inv[d]];
		return;
	default:  /* reshape: through the row-major flat index */
		for (d = rt->rank - 1; d >= 0; d--) {
			flat = LLVMBuildOr(cg->B, flat, LLVMBuildShl(cg->B, c[d],
					   cg_i32(cg, sh), ""), "");
			sh += log2i(rt->shape[d]);
		}
		for (d = at->rank - 1, sh = 0; d >= 0; d--) {
			oc[d] = LLVMBuildAnd(cg->B, LLVMBuildLShr(cg->B, flat,
					     cg_i32(cg, sh), ""),
					     cg_i32(cg, at->shape[d] - 1), "");
			sh += log2i(at->shape[d]);
		}
		return;
	}
}

void
cg_reg_coords(CgFn *fn, const Layout *l, LLVMValueRef j, LLVMValueRef *c)
{
	Cg *cg = fn->cg;
	LLVMBuilderRef B = cg->B;
	LLVMValueRef flat = cg_thread_flat(fn, l), x;
	int b, d;

	for (b = 0; b < l->nreg; b++) {
		if (!l->reg[b])
			continue;
		x = LLVMBuildAnd(B, LLVMBuildLShr(B, j, cg_i32(cg, b), ""),
				 cg_i32(cg, 1), "");
		flat = LLVMBuildOr(B, flat, LLVMBuildShl(B, x,
				   cg_i32(cg, log2i(l->reg[b])), ""), "");
	}
	for (d = 0; d < l->rank; d++)
		c[d] = LLVMBuildAnd(B, LLVMBuildLShr(B, flat,
				    cg_i32(cg, ly_dim_shift(l, d)), ""),
				    cg_i32(cg, l->shape[d] - 1), "");
}

LLVMValueRef
cg_elem_at(CgFn *fn, Value v, LLVMValueRef *c)
{
	Op *op = ir_val(fn->f, v)->def;
	LLVMValueRef x[3], oc[TY_MAX_RANK];
	uint32_t i;

	if (!cg_is_tile(fn, v))
		return cg_scalar(fn, v);
	if (!fn->vals[v].remat || !op)
		return NULL;
	switch (op->kind) {
	case OP_CONST:
		return cg_const(fn->cg, ir_type(fn->f, v),
				attr_find(&op->attrs, "value"));
	case OP_RANGE:
		return LLVMBuildAdd(fn->cg->B, c[0], cg_i32(fn->cg,
				    attr_int(&op->attrs, "start", 0)), "");
	case OP_SPLAT:
		return cg_scalar(fn, op->opnds[0]);
	case OP_BROADCAST: case OP_EXPAND_DIMS: case OP_RESHAPE: case OP_TRANS:
		operand_coords(fn, op, c, oc);
		return cg_elem_at(fn, op->opnds[0], oc);
	case OP_CVT: case OP_BITCAST:
		x[0] = cg_elem_at(fn, op->opnds[0], c);
		return x[0] ? cg_convert_one(fn, op, x[0]) : NULL;
	default:
		for (i = 0; i < op->nopnds && i < 3; i++)
			if (!(x[i] = cg_elem_at(fn, op->opnds[i], c)))
				return NULL;
		return cg_elem_one(fn, op, x);
	}
}

static LLVMValueRef
sreg(CgFn *fn, const char *base, int64_t axis)
{
	char name[64];

	snprintf(name, sizeof name, "llvm.nvvm.read.ptx.sreg.%s.%c", base,
		 "xyz"[axis >= 0 && axis < 3 ? axis : 0]);
	return cg_intr(fn->cg, name, NULL, 0, NULL, 0);
}

/* A non-rematerialized shape op: the operand in its home layout, the
 * result in the layout derived from it; same registers. */
static bool
shape_home(CgFn *fn, Op *op)
{
	const Layout *h = fn->vals[op->res[0]].home;
	const Layout *ol = cg_operand_layout(fn, op, 0);
	LLVMValueRef *src = cg_tile(fn, op->opnds[0], ol), *r = cg_regs(fn, h);
	uint32_t i, mask = (uint32_t)ly_nregs(ol) - 1;

	for (i = 0; i < (uint32_t)ly_nregs(h); i++)
		r[i] = src[i & mask];
	cg_set_tile(fn, op->res[0], h, r);
	return true;
}

/* An aligned block of a tile: the operand's registers that hold it. */
static bool
extract_home(CgFn *fn, Op *op)
{
	const Layout *h = fn->vals[op->res[0]].home;
	const Layout *ol = cg_operand_layout(fn, op, 0);
	const Attr *o = attr_find(&op->attrs, "offsets");
	LLVMValueRef *src = cg_tile(fn, op->opnds[0], ol), *r = cg_regs(fn, h);
	uint32_t i;

	for (i = 0; i < (uint32_t)ly_nregs(h); i++) {
		int64_t j = ly_extract_reg(ol, h, o->ints.v, i);

		if (j < 0) {
			cg_unsupported(fn->cg, op, "a block its operand's "
				       "layout does not hold in registers");
			return false;
		}
		r[i] = src[j];
	}
	cg_set_tile(fn, op->res[0], h, r);
	return true;
}

bool
cg_shape_op(CgFn *fn, Op *op)
{
	Cg *cg = fn->cg;
	Value res = op->res[0];
	Type *t = ir_type(fn->f, res);
	int64_t axis = attr_int(&op->attrs, "axis", 0);

	switch (op->kind) {
	case OP_PROGRAM_ID:
		fn->vals[res].v = sreg(fn, "ctaid", axis);
		return true;
	case OP_NUM_PROGRAMS:
		fn->vals[res].v = sreg(fn, "nctaid", axis);
		return true;
	case OP_CONST:
		if (t->kind != TY_TILE) {
			fn->vals[res].v = cg_const(cg, t, attr_find(&op->attrs,
								    "value"));
			return true;
		}
		break;
	case OP_BROADCAST: case OP_EXPAND_DIMS: case OP_RESHAPE: case OP_TRANS:
		if (cg_is_tile(fn, op->opnds[0]))
			return shape_home(fn, op);
		break;
	case OP_EXTRACT_SLICE:
		return extract_home(fn, op);
	default:
		break;
	}
	/* a tile result that is not rematerialized: its home */
	cg_set_tile(fn, res, fn->vals[res].home,
		    cg_remat(fn, res, fn->vals[res].home));
	return true;
}
