/*
 * assign.c: the layouts of tile values, as the laid-out IR gives them
 * (passes/assign_layouts.c chose them), and the vector widths of memory
 * accesses.
 *
 * Every tile has its type's layout.  A rematerialized tile (its op is
 * F_REMAT and so are its tile operands: index and mask arithmetic) is
 * computed where it is used rather than where it is defined; any other
 * tile is made by its op, in its *home* layout.  A convert_layout is
 * lowered where its result is first used: by renaming registers when
 * lanes and warps agree, else through its planned scratch.
 */
#include "config.h"

#include "codegen/cg.h"

static void
mark_remat(Op *op, void *ud)
{
	CgFn *fn = ud;
	uint32_t i;
	bool r;

	if (op->nres != 1 || !cg_is_tile(fn, op->res[0]))
		return;
	r = op_has(op, F_REMAT);
	for (i = 0; r && i < op->nopnds; i++)
		if (cg_is_tile(fn, op->opnds[i]) &&
		    !fn->vals[op->opnds[i]].remat)
			r = false;
	fn->vals[op->res[0]].remat = r;
}

const Layout *
cg_mem_layout(CgFn *fn, Op *op)
{
	return ir_type(fn->f, ir_access_ptr(op))->layout;
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

static void
set_homes(Op *op, void *ud)
{
	CgFn *fn = ud;
	uint32_t i, k;

	for (i = 0; i < op->nres; i++)
		if (!fn->vals[op->res[i]].remat)
			fn->vals[op->res[i]].home = ir_type(fn->f, op->res[i])->layout;
	for (i = 0; i < op->nregions; i++)
		for (k = 0; k < op->regions[i]->nargs; k++) {
			Value a = op->regions[i]->args[k];

			fn->vals[a].home = ir_type(fn->f, a)->layout;
		}
}

void
cg_assign_layouts(CgFn *fn)
{
	ir_walk(fn->f, mark_regs_used, fn);
	ir_walk(fn->f, mark_remat, fn);
	ir_walk(fn->f, set_homes, fn);
}

const Layout *
cg_operand_layout(CgFn *fn, Op *op, uint32_t i)
{
	return ir_type(fn->f, op->opnds[i])->layout;
}

LLVMValueRef *
cg_operand(CgFn *fn, Op *op, uint32_t i)
{
	return cg_tile(fn, op->opnds[i], cg_operand_layout(fn, op, i));
}

static uint64_t
access_deps(CgFn *fn, Op *op)
{
	Value ptr = ir_access_ptr(op), m;
	const Layout *l;
	int vf;

	if (!ptr || !cg_is_tile(fn, ptr) || !(l = cg_mem_layout(fn, op)))
		return 0;
	vf = ly_mem_vec(fn->f, ptr, l, fn->ax);
	if (vf <= ly_mem_vec(fn->f, ptr, l, fn->ax_gen))
		return 0;
	/* a mask constant over the fast vectors only under the assumptions:
	 * the versioned loop checks those too -- except in a generic entry,
	 * which runs the launches that fail them (kernel.c, lower_body) */
	if (fn->entry != CG_ENTRY_GENERIC &&
	    (m = ir_access_mask(op)) && cg_is_tile(fn, m) &&
	    fn->ax[m].cnst[cg_vec_dim(l)] >= vf &&
	    fn->ax_gen[m].cnst[cg_vec_dim(l)] < vf)
		return fn->ax[ptr].deps | fn->ax[m].deps;
	return fn->ax[ptr].deps;
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
