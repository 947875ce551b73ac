/*
 * specialize_entries.c: a kernel's fast entry -- pass "specialize-entries".
 *
 * The fast paths of a kernel's memory accesses assume things of its
 * arguments: 16-byte aligned pointers, integers that are multiples of 16,
 * unit inner strides (ir/axis.c picks them).  A kernel gets a second
 * entry, NAME$fast, that assumes every one of them and checks none, where
 * some access's pointer or mask facts differ under them: the launch
 * checks them once, on the host, and picks the entry (libtlxrt, from
 * __tlx_meta).  A kernel whose loops pipeline-loads versioned for TMA
 * (`entry_fast` ops) also assumes what its tensor maps need
 * (`tma.align`, `tma.div16`, `tma.eq1`, in the same bits).  The pass records what the fast entry assumes on the
 * kernel: `fast.align`, `fast.div16`, `fast.eq1` (bit i: parameter i is a
 * 16-byte aligned pointer, an integer divisible by 16, an integer equal
 * to 1); code generation lowers the two entries from them.  Which kernels
 * get one (PassCtx.specialize, tlxc --specialize): auto, kernels with
 * dots (their checks sit in the k-loop, where the accumulators make every
 * instruction expensive for ptxas; a row kernel's two entries would each
 * repeat its math); all; none.
 * Requires: laid-out IR.  Counters: kernels.
 */
#include "passes/passes.h"

const char *const pass_spec_names[3] = { "auto", "all", "none" };

/* The assumptions of the accesses whose facts differ under them. */
static uint64_t
fast_assumptions(Func *f, const Axis *ax, const Axis *gen, Block *b)
{
	uint64_t d = 0;
	Value ptr, m;
	uint32_t i;
	Op *op;

	for (op = b->first; op; op = op->next) {
		for (i = 0; i < op->nregions; i++)
			d |= fast_assumptions(f, ax, gen, op->regions[i]);
		ptr = ir_access_ptr(op);
		if (!ptr || ir_type(f, ptr)->kind != TY_TILE)
			continue;
		m = ir_access_mask(op);
		if (!ax_same(&ax[ptr], &gen[ptr]))
			d |= ax[ptr].deps;
		if (m && ir_type(f, m)->kind == TY_TILE && !ax_same(&ax[m], &gen[m]))
			d |= ax[ptr].deps | ax[m].deps;
	}
	return d;
}

static void
find(Op *op, void *ud)
{
	bool *has = ud;

	if (op->kind == OP_DOT || op->kind == OP_DOT_ASYNC)
		has[0] = true;
	if (op_has(op, F_UNLOWERED))
		has[1] = true;
}

bool
pass_specialize_entries(PassCtx *pc, Func *f)
{
	IrCtx *c = f->mod->ctx;
	Assume none = { 0 }, as;
	bool has[2] = { false, false };
	const Axis *gen, *ax;
	uint64_t d, tma;

	if (f->kind != FN_KERNEL || pc->specialize == PASS_SPEC_NONE ||
	    attr_has(&f->attrs, "fast.align"))
		return false;
	ir_walk(f, find, has);
	if (has[1] || (pc->specialize == PASS_SPEC_AUTO && !has[0]))
		return false;
	gen = axis_compute(f, pc->scratch, &none);
	axis_pick_assumptions(f, gen, &as);
	/* what pipeline-loads' TMA copies need of the fast entry */
	tma = (uint64_t)attr_int(&f->attrs, "tma.align", 0) |
	      (uint64_t)attr_int(&f->attrs, "tma.div16", 0) |
	      (uint64_t)attr_int(&f->attrs, "tma.eq1", 0);
	as.align |= (uint64_t)attr_int(&f->attrs, "tma.align", 0);
	as.eq1 |= (uint64_t)attr_int(&f->attrs, "tma.eq1", 0);
	as.div16 = (as.div16 | (uint64_t)attr_int(&f->attrs, "tma.div16", 0)) &
		   ~as.eq1;
	ax = axis_compute(f, pc->scratch, &as);
	if (!(d = fast_assumptions(f, ax, gen, f->body) | tma))
		return false;
	attr_set_int(c, &f->attrs, "fast.align", (int64_t)(d & as.align));
	attr_set_int(c, &f->attrs, "fast.div16", (int64_t)(d & as.div16));
	attr_set_int(c, &f->attrs, "fast.eq1", (int64_t)(d & as.eq1));
	pass_stat(pc, "kernels", 1);
	return true;
}
