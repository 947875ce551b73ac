/*
 * atomic.c: atomic and atomic_cas on global memory.  Each element is one
 * LLVM atomicrmw or cmpxchg, relaxed (monotonic) at gpu scope (syncscope
 * "device"), under its mask; a masked-off element's old value is 0, as
 * in the simulator.  Only the first copy of replicated lanes and warps
 * issues it, and the old values are shared with the copies through
 * scratch (cg_share_first); a scalar atomic runs in thread 0 and its old
 * value goes to every thread through shared memory.  i1 moves as i8;
 * atomic_cas compares bits (floats as integers of their width).
 */
#include "config.h"

#include "codegen/cg.h"

static LLVMAtomicRMWBinOp
rmw_kind(const char *k, Type *e)
{
	bool f = ty_is_float_kind(e->kind);
	bool u = ty_is_unsigned_kind(e->kind) || e->kind == TY_PTR;

	if (!k || !strcmp(k, "add"))
		return f ? LLVMAtomicRMWBinOpFAdd : LLVMAtomicRMWBinOpAdd;
	if (!strcmp(k, "max"))
		return f ? LLVMAtomicRMWBinOpFMax : u ? LLVMAtomicRMWBinOpUMax
						      : LLVMAtomicRMWBinOpMax;
	if (!strcmp(k, "min"))
		return f ? LLVMAtomicRMWBinOpFMin : u ? LLVMAtomicRMWBinOpUMin
						      : LLVMAtomicRMWBinOpMin;
	if (!strcmp(k, "xchg"))
		return LLVMAtomicRMWBinOpXchg;
	if (!strcmp(k, "and"))
		return LLVMAtomicRMWBinOpAnd;
	if (!strcmp(k, "or"))
		return LLVMAtomicRMWBinOpOr;
	return LLVMAtomicRMWBinOpXor;
}

/* One atomic on one element, where pred holds; the old value (0
 * elsewhere: a masked-off element's old value is 0, as in the simulator). */
static LLVMValueRef
atomic_one(CgFn *fn, Op *op, LLVMValueRef pred, LLVMValueRef p,
	   LLVMValueRef v, LLVMValueRef c)
{
	Cg *cg = fn->cg;
	LLVMBuilderRef B = cg->B;
	Type *e = ty_elem(ir_type(fn->f, op->res[0]));
	unsigned scope = LLVMGetSyncScopeID(cg->C, "device", 6);
	LLVMBasicBlockRef from = LLVMGetInsertBlock(B), in = NULL, done = NULL;
	LLVMValueRef old, phi, iv[2];
	LLVMBasicBlockRef ib[2];
	bool is_bool = e->kind == TY_I1;

	if (pred) {
		in = cg_new_block(fn, "atom");
		done = cg_new_block(fn, "atom.done");
		LLVMBuildCondBr(B, pred, in, done);
		LLVMPositionBuilderAtEnd(B, in);
	}
	if (is_bool) {
		v = LLVMBuildZExt(B, v, cg->t_i8, "");
		if (c)
			c = LLVMBuildZExt(B, c, cg->t_i8, "");
	}
	if (op->kind == OP_ATOMIC_CAS) {
		/* compares bits (as the simulator does): floats as integers
		 * of their width, which cmpxchg takes */
		LLVMTypeRef ft = LLVMTypeOf(v), it = NULL;

		if (ty_is_float_kind(e->kind)) {
			it = LLVMIntTypeInContext(cg->C, (unsigned)ty_bits(e));
			v = LLVMBuildBitCast(B, v, it, "");
			c = LLVMBuildBitCast(B, c, it, "");
		}
		old = LLVMBuildAtomicCmpXchgSyncScope(B, p, c, v,
			LLVMAtomicOrderingMonotonic, LLVMAtomicOrderingMonotonic,
			scope);
		old = LLVMBuildExtractValue(B, old, 0, "");
		if (it)
			old = LLVMBuildBitCast(B, old, ft, "");
	} else {
		old = LLVMBuildAtomicRMWSyncScope(B, rmw_kind(attr_str(&op->attrs,
				"kind"), e), p, v, LLVMAtomicOrderingMonotonic, scope);
	}
	if (is_bool)
		old = LLVMBuildTrunc(B, old, cg->t_i1, "");
	if (!pred)
		return old;
	in = LLVMGetInsertBlock(B);
	LLVMBuildBr(B, done);
	LLVMPositionBuilderAtEnd(B, done);
	phi = LLVMBuildPhi(B, LLVMTypeOf(old), "");
	iv[0] = old;
	iv[1] = LLVMConstNull(LLVMTypeOf(old));
	ib[0] = in;
	ib[1] = from;
	LLVMAddIncoming(phi, iv, ib, 2);
	return phi;
}

static LLVMValueRef
and_pred(CgFn *fn, LLVMValueRef a, LLVMValueRef b)
{
	if (!a)
		return b;
	if (!b)
		return a;
	return LLVMBuildAnd(fn->cg->B, a, b, "");
}

static bool
atomic_scalar(CgFn *fn, Op *op)
{
	Cg *cg = fn->cg;
	Type *rt = ir_type(fn->f, op->res[0]);
	LLVMTypeRef lt = cg_type(cg, rt);
	LLVMValueRef c = NULL, m = NULL, old, off;
	LLVMBasicBlockRef out;
	int64_t s = cg_cur_scratch(fn);
	bool cas = op->kind == OP_ATOMIC_CAS;

	if (cas)
		c = cg_scalar(fn, op->opnds[1]);
	else if (op->nopnds > 2)
		m = cg_scalar(fn, op->opnds[2]);
	/* thread 0 does it; everyone reads the old value back */
	out = cg_pred_begin(fn, cg_thread0(fn));
	old = atomic_one(fn, op, m, cg_scalar(fn, op->opnds[0]),
			 cg_scalar(fn, op->opnds[cas ? 2 : 1]), c);
	off = cg_i32(cg, s);
	if (LLVMTypeOf(old) == cg->t_i1)
		old = LLVMBuildZExt(cg->B, old, cg->t_i8, "");
	cg_smem_store_vec(fn, LLVMTypeOf(old), &old, 1, off, 1);
	cg_pred_end(fn, out);
	cg_barrier(fn);
	cg_smem_load_vec(fn, LLVMTypeOf(old), &old, 1, off, 1);
	if (lt == cg->t_i1)
		old = LLVMBuildTrunc(cg->B, old, cg->t_i1, "");
	fn->vals[op->res[0]].v = old;
	return true;
}

bool
cg_atomic_op(CgFn *fn, Op *op)
{
	Type *rt = ir_type(fn->f, op->res[0]);
	const Layout *ly;
	LLVMValueRef *p, *v, *c = NULL, *m = NULL, *r, first;
	uint32_t dup, i;
	bool cas = op->kind == OP_ATOMIC_CAS;

	if (!cg_is_tile(fn, op->res[0]))
		return atomic_scalar(fn, op);
	ly = cg_operand_layout(fn, op, 0);
	p = cg_operand(fn, op, 0);
	if (cas) {
		c = cg_operand(fn, op, 1);
		v = cg_operand(fn, op, 2);
	} else {
		v = cg_operand(fn, op, 1);
		if (op->nopnds > 2)
			m = cg_operand(fn, op, 2);
	}
	first = cg_first_copy(fn, ly);
	r = cg_regs(fn, ly);
	dup = ly_dup_mask(ly);
	for (i = 0; i < (uint32_t)ly_nregs(ly); i++) {
		if (i & dup) {
			r[i] = r[i & ~dup];
			continue;
		}
		r[i] = atomic_one(fn, op, and_pred(fn, first, m ? m[i] : NULL),
				  p[i], v[i], c ? c[i] : NULL);
	}
	if (first)
		r = cg_share_first(fn, rt->elem, r, ly, cg_cur_scratch(fn));
	cg_set_tile(fn, op->res[0], ly, r);
	return true;
}
