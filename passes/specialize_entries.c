/*
 * specialize_entries.c: a kernel's fast entry -- pass "specialize-entries".
 *
 * The fast paths of a kernel's memory accesses assume things of its
 * arguments: 16-byte aligned pointers, integers that are multiples of
 * the elements of 16 bytes (Assume.divisor), unit inner strides
 * (ir/axis.c picks them).  A kernel gets a second entry, NAME$fast, that
 * assumes the ones its accesses need and checks none: the launch checks
 * them once, on the host, and picks the entry (libtlxrt, from
 * __tlx_meta).  An access needs an assumption when it changes the facts
 * a vector along its contiguous dim depends on: the pointer's contiguity
 * and alignment, and the mask's constancy along that dim -- so a bound
 * that only masks rows (`rm < M`) is not assumed, and a ragged M keeps
 * the fast entry.  Of the assumptions some access needs, those whose
 * absence changes no access's facts are dropped again (M in `rm < M &
 * rn < N`, whose facts depend on both); code generation computes the
 * fast entry's facts under exactly the assumptions recorded.  Code that the fast entry never runs (the else branch
 * of an `if entry_fast || ...`, as pipeline-loads' versioned loops have)
 * assumes nothing.  A kernel whose loops pipeline-loads versioned for
 * TMA also assumes what its tensor maps need (`tma.align`, `tma.div`,
 * `tma.eq1`, in the same bits); its generic entry keeps the TMA loops
 * for launches whose tensor maps are valid but which the fast entry
 * cannot take (an odd N beside padded row pitches; an operand the
 * runtime staged into aligned rows).  The pass records what the fast entry
 * assumes on the kernel: `fast.align`, `fast.div`, `fast.eq1` (bit i:
 * parameter i is a 16-byte aligned pointer, an integer divisible by
 * `fast.divisor`, an integer equal to 1) and `fast.tma_only`, those of
 * them only the tensor maps need, which a launch whose maps are valid
 * (the runtime staged the operand) need not meet; code generation lowers
 * the two entries from them.  Which kernels get one (PassCtx.specialize, tlxc
 * --specialize): auto, kernels with dots (their checks sit in the
 * k-loop, where the accumulators make every instruction expensive for
 * ptxas) and kernels whose vectors assume a mask constant over them (a
 * row kernel at a width that is not a multiple of 8: its generic entry
 * keeps aligned rows' vectors and checks each against the mask, where
 * one entry's check of the width sent every vector to the realigned
 * path); all; none.
 * Requires: laid-out IR.  Counters: kernels.
 */
#include "passes/passes.h"

const char *const pass_spec_names[3] = { "auto", "all", "none" };

/* v is true whenever the fast entry runs: entry_fast, or an or of it. */
static bool
fast_true(Func *f, Value v)
{
	Op *d = ir_val(f, v)->def;

	if (!d)
		return false;
	if (d->kind == OP_ENTRY_FAST)
		return true;
	return d->kind == OP_OR &&
	       (fast_true(f, d->opnds[0]) || fast_true(f, d->opnds[1]));
}

/* The dim an access to ptr vectorizes: where its elements are
 * contiguous (the innermost such). */
static int
vec_dim(Func *f, const Axis *ptr, Value v)
{
	int d, best = ir_type(f, v)->rank - 1;

	for (d = best - 1; d >= 0; d--)
		if (ptr->contig[d] > ptr->contig[best])
			best = d;
	return best;
}

/* The assumptions of the accesses whose facts differ under them; *mask
 * is set where a mask's constancy is among those facts. */
static uint64_t
fast_assumptions(Func *f, const Axis *ax, const Axis *gen, Block *b,
		 bool *mask)
{
	uint64_t d = 0;
	Value ptr, m;
	uint32_t i;
	Op *op;
	int v;

	for (op = b->first; op; op = op->next) {
		for (i = 0; i < op->nregions; i++)
			if (!(op->kind == OP_IF && i == 1 &&
			      fast_true(f, op->opnds[0])))
				d |= fast_assumptions(f, ax, gen, op->regions[i],
						      mask);
		ptr = ir_access_ptr(op);
		if (!ptr || ir_type(f, ptr)->kind != TY_TILE)
			continue;
		m = ir_access_mask(op);
		/* a vector along dim v uses the pointer's contiguity and
		 * alignment and the mask's constancy along it */
		v = vec_dim(f, &ax[ptr], ptr);
		if (ax[ptr].contig[v] != gen[ptr].contig[v] ||
		    ax[ptr].div != gen[ptr].div)
			d |= ax[ptr].deps;
		if (m && ir_type(f, m)->kind == TY_TILE &&
		    ax[m].cnst[v] != gen[m].cnst[v]) {
			d |= ax[m].deps;
			*mask = true;
		}
	}
	return d;
}

/* Drops the assumptions of d whose absence changes no access's vector
 * facts (a bound in a mask beside one that matters, as M beside N);
 * those of the tensor maps (keep) stay. */
static uint64_t
minimize(Func *f, Arena *a, const Assume *as, uint64_t d, uint64_t keep)
{
	Assume r = axis_restrict(as, d);
	const Axis *ax = axis_compute(f, a, &r), *ax2;
	uint64_t bit;
	bool mask;
	int i;

	for (i = 0; i < 64; i++) {
		bit = 1ull << i;
		if (!(d & bit) || (keep & bit))
			continue;
		r = axis_restrict(as, d & ~bit);
		ax2 = axis_compute(f, a, &r);
		if (!fast_assumptions(f, ax, ax2, f->body, &mask))
			d &= ~bit;
	}
	return d;
}

/* Of the tensor maps' alignments and divisibilities (tma), those no
 * access's facts need beside them (d, the fast entry's): a launch may
 * take the fast entry without them where the tensor maps are valid
 * anyway -- made of the runtime's staged copies.  Greedy, as minimize. */
static uint64_t
tma_only(Func *f, Arena *a, const Assume *as, uint64_t d, uint64_t tma)
{
	Assume r = axis_restrict(as, d);
	const Axis *ax = axis_compute(f, a, &r), *ax2;
	uint64_t only = 0, bit;
	bool mask;
	int i;

	for (i = 0; i < 64; i++) {
		bit = 1ull << i;
		if (!(tma & d & bit))
			continue;
		r = axis_restrict(as, d & ~(only | bit));
		ax2 = axis_compute(f, a, &r);
		if (!fast_assumptions(f, ax, ax2, f->body, &mask))
			only |= bit;
	}
	return only;
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
	bool has[2] = { false, false }, mask = false;
	const Axis *gen, *ax;
	uint64_t d, tma, only;

	if (f->kind != FN_KERNEL || pc->specialize == PASS_SPEC_NONE ||
	    attr_has(&f->attrs, "fast.align"))
		return false;
	ir_walk(f, find, has);
	if (has[1])
		return false;
	gen = axis_compute(f, pc->scratch, &none);
	axis_pick_assumptions(f, gen, &as);
	/* what pipeline-loads' TMA copies need of the fast entry */
	tma = (uint64_t)attr_int(&f->attrs, "tma.align", 0) |
	      (uint64_t)attr_int(&f->attrs, "tma.div", 0) |
	      (uint64_t)attr_int(&f->attrs, "tma.eq1", 0);
	as.align |= (uint64_t)attr_int(&f->attrs, "tma.align", 0);
	as.eq1 |= (uint64_t)attr_int(&f->attrs, "tma.eq1", 0);
	as.div = (as.div | (uint64_t)attr_int(&f->attrs, "tma.div", 0)) &
		 ~as.eq1;
	ax = axis_compute(f, pc->scratch, &as);
	if (!(d = fast_assumptions(f, ax, gen, f->body, &mask) | tma) ||
	    (pc->specialize == PASS_SPEC_AUTO && !has[0] && !mask))
		return false;
	d = minimize(f, pc->scratch, &as, d, tma);
	if ((only = tma_only(f, pc->scratch, &as, d, tma & ~as.eq1)))
		attr_set_int(c, &f->attrs, "fast.tma_only", (int64_t)only);
	attr_set_int(c, &f->attrs, "fast.align", (int64_t)(d & as.align));
	attr_set_int(c, &f->attrs, "fast.div", (int64_t)(d & as.div));
	attr_set_int(c, &f->attrs, "fast.divisor", as.divisor);
	attr_set_int(c, &f->attrs, "fast.eq1", (int64_t)(d & as.eq1));
	pass_stat(pc, "kernels", 1);
	return true;
}
