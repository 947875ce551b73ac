/*
 * shared.c: user shared memory, mbarriers, CTA barriers and cp.async.
 *
 * A buffer (smem_alloc) is a row-major array at its planned offset in the
 * kernel's dynamic shared memory; a view (smem_index, smem_slice,
 * smem_trans) is a byte offset (a run-time i32), a shape, element strides
 * and the alignment the offset is known to have.  smem_load/smem_store
 * move a tile between registers and a view, each thread in vectors of up
 * to 16 bytes where the view's innermost stride is 1.
 *
 * mbarriers: mbar_alloc initializes each barrier from thread 0 (then a
 * CTA barrier); mbar_wait spins on test_wait.parity (sm_80) or
 * try_wait.parity (sm_90+) in inline PTX; mbar_arrive is one arrival per
 * program: a CTA barrier, then thread 0 arrives `count` times.
 *
 * cp.async: each thread copies its vectors of 4, 8 or 16 bytes
 * (cp.async.cg for 16, .ca otherwise; masked-off vectors use the
 * src-size 0 form, which zero-fills); a vector narrower than 4 bytes, or
 * with a mask that varies inside it, is copied synchronously through
 * registers instead.  cp_async_wait is cp.async.wait_group plus a CTA
 * barrier, so every thread's copies are visible afterwards.
 */
#include "config.h"

#include "codegen/cg.h"

static SmemView *
view_of(CgFn *fn, Value v)
{
	return fn->vals[v].view;
}

static SmemView *
new_view(CgFn *fn, Value res, SmemView *from)
{
	SmemView *w = arena_alloc(fn->a, sizeof *w);

	if (from)
		*w = *from;
	fn->vals[res].view = w;
	return w;
}

static int64_t
lowbit(int64_t v)
{
	if (v == 0)
		return 1 << 20;
	v = v < 0 ? -v : v;
	return v & -v;
}

/* Adds `idx` (an int scalar, i32 or i64) times `bytes` to w's offset. */
static void
advance(CgFn *fn, SmemView *w, Value idx, int64_t bytes)
{
	Cg *cg = fn->cg;
	LLVMValueRef i = cg_scalar(fn, idx);

	if (LLVMTypeOf(i) != cg->t_i32)
		i = LLVMBuildIntCast2(cg->B, i, cg->t_i32, 1, "");
	w->off = LLVMBuildAdd(cg->B, w->off,
			      LLVMBuildMul(cg->B, i, cg_i32(cg, bytes), ""), "");
	w->align = MIN(w->align, lowbit(bytes * fn->ax_gen[idx].div));
}

static bool
alloc_op(CgFn *fn, Op *op)
{
	Type *t = ir_type(fn->f, op->res[0]);
	SmemView *w = new_view(fn, op->res[0], NULL);

	w->off = cg_i32(fn->cg, cg_smem_offset(fn, op));
	/* the plan places buffers at multiples of 128 bytes */
	w->align = MAX(128, lowbit(cg_smem_offset(fn, op)));
	sv_buffer(&w->g, t);
	return true;
}

LLVMValueRef
cg_view_dim_off(CgFn *fn, const SmemView *w, int d, LLVMValueRef x)
{
	LLVMBuilderRef B = fn->cg->B;
	Cg *cg = fn->cg;
	LLVMValueRef b;

	if (w->g.tw && d == w->g.tc) {
		/* sv_dim_bytes; tw and ebytes are powers of two */
		b = LLVMBuildMul(B, x, cg_i32(cg, w->g.ebytes), "");
		return LLVMBuildAdd(B, LLVMBuildAnd(B, b, cg_i32(cg, w->g.tw - 1), ""),
				    LLVMBuildMul(B, LLVMBuildLShr(B, b,
					cg_i32(cg, __builtin_ctz((unsigned)w->g.tw)), ""),
					cg_i32(cg, w->g.trows * w->g.tw), ""), "");
	}
	return LLVMBuildMul(B, x, cg_i32(cg, sv_dim_bytes(&w->g, d, 1)), "");
}

/* Adds start idx along dim d of src to w, if it moves by whole strips. */
static bool
start(CgFn *fn, Op *op, SmemView *w, const SmemView *src, int d, Value idx)
{
	if (!sv_start_ok(&src->g, d, fn->ax_gen[idx].div)) {
		cg_unsupported(fn->cg, op, op->kind == OP_SMEM_INDEX
			       ? "indexing a column of a tiled shared buffer"
			       : "a slice of a tiled shared buffer that does "
				 "not start at a strip");
		return false;
	}
	advance(fn, w, idx, sv_start_bytes(&src->g, d));
	return true;
}

static bool
view_op(CgFn *fn, Op *op)
{
	SmemView *src = view_of(fn, op->opnds[0]), *w;
	const Attr *perm;
	uint32_t i;

	if (!src)
		return false;
	w = new_view(fn, op->res[0], src);
	switch (op->kind) {
	case OP_SMEM_INDEX:
		if (!start(fn, op, w, src, 0, op->opnds[1]))
			return false;
		sv_index(&w->g);
		break;
	case OP_SMEM_SLICE:
		for (i = 1; i < op->nopnds && (int)i <= src->g.rank; i++)
			if (!start(fn, op, w, src, (int)i - 1, op->opnds[i]))
				return false;
		sv_slice(&w->g, ir_type(fn->f, op->res[0])->shape);
		break;
	default:  /* smem_trans */
		perm = attr_find(&op->attrs, "perm");
		if (perm)
			sv_trans(&w->g, perm->ints.v, (int)perm->ints.n);
		break;
	}
	return true;
}

/* Byte offset of register r of layout l in view w. */
static LLVMValueRef
elem_off(CgFn *fn, SmemView *w, const Layout *l, uint32_t r)
{
	Cg *cg = fn->cg;
	LLVMValueRef x = cg_i32(cg, 0);
	uint32_t f = ly_reg_flat(l, r);
	int64_t k = 0;
	int d;

	/* a coordinate's thread and register parts have distinct bits, so
	 * their offsets add, along a tiled view's strips too */
	for (d = 0; d < l->rank; d++) {
		int64_t c = (f >> ly_dim_shift(l, d)) & (l->shape[d] - 1);

		x = LLVMBuildAdd(cg->B, x, cg_view_dim_off(fn, w, d,
				 cg_thread_coord(fn, l, d)), "");
		k += sv_dim_bytes(&w->g, d, c);
	}
	return cg_swizzle_off(fn, w->off, w->align, x, k, w->g.swz);
}

/* Elements per vector access of op's view: the plan's `vec`
 * (ir_smem_vec: contiguous registers, aligned in every row). */
static int
view_vec(Op *op)
{
	if (!attr_has(&op->attrs, "vec"))
		tlx_bug("'%s' reached codegen without its vector width",
			op_name(op->kind));
	return (int)attr_int(&op->attrs, "vec", 1);
}

static LLVMTypeRef
mem_type(CgFn *fn, Type *e)
{
	return ty_elem(e)->kind == TY_I1 ? fn->cg->t_i8 : cg_type(fn->cg, e);
}

static bool
smem_load(CgFn *fn, Op *op)
{
	Cg *cg = fn->cg;
	SmemView *w = view_of(fn, op->opnds[0]);
	Type *rt = ir_type(fn->f, op->res[0]);
	const Layout *l = fn->vals[op->res[0]].home;
	LLVMTypeRef et = mem_type(fn, rt->elem);
	LLVMValueRef *r;
	uint32_t dup, g, n;
	int v;

	if (!w || !l)
		return false;
	r = cg_regs(fn, l);
	dup = ly_dup_mask(l);
	n = (uint32_t)ly_nregs(l);
	v = view_vec(op);
	for (g = 0; g < n; g += (uint32_t)v)
		if (!(g & dup))
			cg_smem_load_vec(fn, et, r + g, v, elem_off(fn, w, l, g),
					 v * w->g.ebytes);
	for (g = 0; g < n; g++) {
		if (g & dup)
			r[g] = r[g & ~dup];
		else if (ty_elem(rt)->kind == TY_I1)
			r[g] = LLVMBuildTrunc(cg->B, r[g], cg->t_i1, "");
	}
	cg_set_tile(fn, op->res[0], l, r);
	return true;
}

static bool
smem_store(CgFn *fn, Op *op)
{
	Cg *cg = fn->cg;
	SmemView *w = view_of(fn, op->opnds[0]);
	Type *vt = ir_type(fn->f, op->opnds[1]);
	const Layout *l = cg_operand_layout(fn, op, 1);
	LLVMTypeRef et = mem_type(fn, vt->elem);
	LLVMValueRef *r = cg_operand(fn, op, 1), *x, first;
	LLVMBasicBlockRef wr = NULL, done = NULL;
	uint32_t dup = ly_dup_mask(l), g, n = (uint32_t)ly_nregs(l);
	int v = view_vec(op);

	x = r;
	if (ty_elem(vt)->kind == TY_I1) {
		x = cg_regs(fn, l);
		for (g = 0; g < n; g++)
			x[g] = LLVMBuildZExt(cg->B, r[g], cg->t_i8, "");
	}
	if ((first = cg_first_copy(fn, l))) {
		wr = cg_new_block(fn, "sst");
		done = cg_new_block(fn, "sst.done");
		LLVMBuildCondBr(cg->B, first, wr, done);
		LLVMPositionBuilderAtEnd(cg->B, wr);
	}
	for (g = 0; g < n; g += (uint32_t)v)
		if (!(g & dup))
			cg_smem_store_vec(fn, et, x + g, v, elem_off(fn, w, l, g),
					  v * w->g.ebytes);
	if (first) {
		LLVMBuildBr(cg->B, done);
		LLVMPositionBuilderAtEnd(cg->B, done);
	}
	return true;
}

/* ---- mbarriers -------------------------------------------------------------- */

static LLVMValueRef
bar_ptr(CgFn *fn, Value bar)
{
	SmemView *w = view_of(fn, bar);

	return cg_smem_ptr(fn, w ? w->off : cg_i32(fn->cg, 0));
}

static bool
mbar_alloc(CgFn *fn, Op *op)
{
	Cg *cg = fn->cg;
	Type *t = ir_type(fn->f, op->res[0]);
	SmemView *w = new_view(fn, op->res[0], NULL);
	int64_t n = t->rank ? t->shape[0] : 1, i;
	LLVMBasicBlockRef in = cg_new_block(fn, "mbar.init");
	LLVMBasicBlockRef done = cg_new_block(fn, "mbar.ready");
	LLVMValueRef args[2];

	w->off = cg_i32(cg, cg_smem_offset(fn, op));
	w->g.rank = t->rank;
	w->g.shape[0] = n;
	w->g.stride[0] = 1;
	w->g.ebytes = 8;
	w->align = 8;
	LLVMBuildCondBr(cg->B, cg_thread0(fn), in, done);
	LLVMPositionBuilderAtEnd(cg->B, in);
	for (i = 0; i < n; i++) {
		args[0] = cg_smem_ptr(fn, LLVMBuildAdd(cg->B, w->off,
						       cg_i32(cg, 8 * i), ""));
		args[1] = cg_i32(cg, attr_int(&op->attrs, "arrive", 1));
		cg_intr(cg, "llvm.nvvm.mbarrier.init.shared", NULL, 0, args, 2);
	}
	if (target_has(cg->t, TF_FENCE_MBAR_INIT))
		cg_intr(cg, "llvm.nvvm.fence.mbarrier_init.release.cluster",
			NULL, 0, NULL, 0);
	LLVMBuildBr(cg->B, done);
	LLVMPositionBuilderAtEnd(cg->B, done);
	cg_barrier(fn);
	return true;
}

static bool
mbar_at(CgFn *fn, Op *op)
{
	SmemView *src = view_of(fn, op->opnds[0]), *w;

	if (!src)
		return false;
	w = new_view(fn, op->res[0], src);
	advance(fn, w, op->opnds[1], 8);
	w->g.rank = 0;
	return true;
}

/* The name and index of the barrier an mbar value is (for reports). */
static const char *
bar_name(CgFn *fn, Value bar, LLVMValueRef *index)
{
	Op *d = ir_val(fn->f, bar)->def;
	const char *name = NULL;

	*index = cg_i32(fn->cg, 0);
	if (d && d->kind == OP_MBAR_AT) {
		*index = LLVMBuildIntCast2(fn->cg->B, cg_scalar(fn, d->opnds[1]),
					   fn->cg->t_i32, 1, "");
		d = ir_val(fn->f, d->opnds[0])->def;
	}
	if (d)
		name = ir_val(fn->f, d->res[0])->name;
	return name ? name : "barrier";
}

/* --debug-barriers: the wait gives up after CG_BARRIER_TIMEOUT_MS (the
 * global nanosecond timer); the program's or the task's first thread
 * prints where it was and fails a device assertion (which the driver
 * reports, printf buffer included, as CUDA_ERROR_ASSERT), the other
 * threads keep waiting so that none ends the kernel before the report. */
static void
timed_wait(CgFn *fn, Op *op, LLVMValueRef addr, LLVMValueRef parity)
{
	Cg *cg = fn->cg;
	LLVMBuilderRef B = cg->B;
	LLVMBasicBlockRef loop = cg_new_block(fn, "wait.try"),
		late = cg_new_block(fn, "wait.late"),
		fail = cg_new_block(fn, "wait.timeout"),
		report = cg_new_block(fn, "wait.report"),
		stop = cg_new_block(fn, "wait.trap"),
		done = cg_new_block(fn, "wait.done");
	LLVMValueRef args[2] = { addr, parity }, t0, ok, pr[10];
	const char *file = fn->f->mod->source ? fn->f->mod->source : "<input>";
	char *fmt;

	t0 = cg_intr(cg, "llvm.nvvm.read.ptx.sreg.globaltimer", NULL, 0, NULL, 0);
	LLVMBuildBr(B, loop);
	LLVMPositionBuilderAtEnd(B, loop);
	ok = cg_asm(cg, cg->t_i32, "{\n\t.reg .pred p;\n\tmbarrier.try_wait.parity."
		    "shared::cta.b64 p, [$1], $2;\n\tselp.u32 $0, 1, 0, p;\n}",
		    "=r,r,r", args, 2, true, false);
	LLVMBuildCondBr(B, LLVMBuildICmp(B, LLVMIntNE, ok, cg_i32(cg, 0), ""),
			done, late);
	LLVMPositionBuilderAtEnd(B, late);
	LLVMBuildCondBr(B, LLVMBuildICmp(B, LLVMIntUGT, LLVMBuildSub(B,
		cg_intr(cg, "llvm.nvvm.read.ptx.sreg.globaltimer", NULL, 0, NULL, 0),
		t0, ""), cg_i64(cg, (int64_t)CG_BARRIER_TIMEOUT_MS * 1000000), ""),
		fail, loop);
	LLVMPositionBuilderAtEnd(B, fail);
	LLVMBuildCondBr(B, cg_thread0(fn), report, stop);
	LLVMPositionBuilderAtEnd(B, stop);
	cg_asm(cg, cg->t_void, "nanosleep.u32 1000000;", "", NULL, 0, true, false);
	LLVMBuildBr(B, loop);
	LLVMPositionBuilderAtEnd(B, report);
	fmt = arena_printf(fn->a, "tlx: %s:%d:%d: kernel '%s', program (%%d, %%d, %%d)%s%s: "
			   "mbar_wait on barrier '%s'[%%d] for the phase of parity "
			   "%%d has waited %d ms: a deadlock (--debug-barriers)\n",
			   file, op->loc.line, op->loc.col, fn->f->name,
			   fn->task ? ", " : "", fn->task ? fn->task : "",
			   bar_name(fn, op->opnds[0], &pr[3]),
			   (int)CG_BARRIER_TIMEOUT_MS);
	pr[0] = cg_intr(cg, "llvm.nvvm.read.ptx.sreg.ctaid.x", NULL, 0, NULL, 0);
	pr[1] = cg_intr(cg, "llvm.nvvm.read.ptx.sreg.ctaid.y", NULL, 0, NULL, 0);
	pr[2] = cg_intr(cg, "llvm.nvvm.read.ptx.sreg.ctaid.z", NULL, 0, NULL, 0);
	pr[4] = parity;
	cg_printf(cg, fn->Balloca, fmt, pr, 5);
	cg_assertfail(cg, "a barrier wait timed out (--debug-barriers)", file,
		      op->loc.line, fn->f->name);
	LLVMBuildUnreachable(B);
	LLVMPositionBuilderAtEnd(B, done);
}

static bool
mbar_wait(CgFn *fn, Op *op)
{
	Cg *cg = fn->cg;
	LLVMValueRef args[2];
	const char *text = target_has(cg->t, TF_MBAR_TRY_WAIT)
		? "{\n\t.reg .pred p;\n\twait:\n\tmbarrier.try_wait.parity."
		  "shared::cta.b64 p, [$0], $1;\n\t@!p bra wait;\n}"
		: "{\n\t.reg .pred p;\n\twait:\n\tmbarrier.test_wait.parity."
		  "shared::cta.b64 p, [$0], $1;\n\t@!p bra wait;\n}";

	args[0] = LLVMBuildPtrToInt(cg->B, bar_ptr(fn, op->opnds[0]), cg->t_i32, "");
	args[1] = LLVMBuildAnd(cg->B, LLVMBuildIntCast2(cg->B,
			       cg_scalar(fn, op->opnds[1]), cg->t_i32, 0, ""),
			       cg_i32(cg, 1), "");
	if (cg->o->debug_barriers && target_has(cg->t, TF_MBAR_TRY_WAIT))
		timed_wait(fn, op, args[0], args[1]);
	else
		cg_asm(cg, cg->t_void, text, "r,r", args, 2, true, false);
	return true;
}

static bool
mbar_arrive(CgFn *fn, Op *op)
{
	Cg *cg = fn->cg;
	int64_t count = attr_int(&op->attrs, "count", 1), i;
	LLVMBasicBlockRef in = cg_new_block(fn, "arrive");
	LLVMBasicBlockRef done = cg_new_block(fn, "arrived");
	LLVMValueRef p, args[2];

	/* every warp of the task done with what the arrive releases; an
	 * arrive right after another (scalar ops between) has that still */
	if (!fn->arrived)
		cg_barrier(fn);
	fn->arrived = true;
	LLVMBuildCondBr(cg->B, cg_thread0(fn), in, done);
	LLVMPositionBuilderAtEnd(cg->B, in);
	p = bar_ptr(fn, op->opnds[0]);
	if (op->nopnds > 1) {
		/* the barrier at the same offset in the cluster's program of
		 * that rank (mapa), released at cluster scope */
		args[0] = p;
		args[1] = cg_scalar(fn, op->opnds[1]);
		args[0] = cg_intr(cg, "llvm.nvvm.mapa.shared.cluster", NULL, 0,
				  args, 2);
		args[1] = cg_i32(cg, count);
		cg_intr(cg, "llvm.nvvm.mbarrier.arrive.scope.cluster.space.cluster",
			NULL, 0, args, 2);
	} else if (target_has(cg->t, TF_MBAR_ARRIVE_COUNT)) {
		args[0] = p;
		args[1] = cg_i32(cg, count);
		cg_intr(cg, "llvm.nvvm.mbarrier.arrive.scope.cta.space.cta", NULL, 0,
			args, 2);
	} else {
		for (i = 0; i < count; i++)
			cg_intr(cg, "llvm.nvvm.mbarrier.arrive.shared", NULL, 0, &p, 1);
	}
	LLVMBuildBr(cg->B, done);
	LLVMPositionBuilderAtEnd(cg->B, done);
	return true;
}

/* ---- cp.async ------------------------------------------------------------------ */

static void
cp_one(CgFn *fn, LLVMValueRef dst, LLVMValueRef src, int bytes,
       LLVMValueRef mask)
{
	Cg *cg = fn->cg;
	char name[64];
	LLVMValueRef args[3] = { dst, src, NULL };

	snprintf(name, sizeof name, "llvm.nvvm.cp.async.%s.shared.global.%d%s",
		 bytes == 16 ? "cg" : "ca", bytes, mask ? ".s" : "");
	if (mask)
		args[2] = LLVMBuildSelect(cg->B, mask, cg_i32(cg, bytes),
					  cg_i32(cg, 0), "");
	cg_intr(cg, name, NULL, 0, args, mask ? 3 : 2);
}

/* A copy's generic path that stores registers to the view (st.shared,
 * the generic proxy): where the async proxy (wgmma, TMA) may read the
 * view next, each thread fences its stores for it before the wait's
 * barrier publishes them.  cp.async's own writes need no fence. */
static void
cp_fence(CgFn *fn)
{
	if (target_has(fn->cg->t, TF_FENCE_PROXY_ASYNC))
		cg_intr(fn->cg, "llvm.nvvm.fence.proxy.async.shared_cta", NULL, 0,
			NULL, 0);
}

/* A global load where cm holds, else 0 (cm NULL: always): one predicated
 * ld in inline PTX, no branch. */
static LLVMValueRef
guarded_load(CgFn *fn, LLVMTypeRef et, LLVMValueRef p, LLVMValueRef cm)
{
	Cg *cg = fn->cg;
	LLVMTargetDataRef dl = LLVMGetModuleDataLayout(cg->M);
	int bits = (int)LLVMSizeOfTypeInBits(dl, et);
	LLVMTypeRef it = bits == 64 ? cg->t_i64 : bits == 32 ? cg->t_i32 : cg->t_i16;
	const char *c = bits == 64 ? "l" : bits == 32 ? "r" : "h";
	const char *suf = bits == 64 ? "b64" : bits == 32 ? "b32" : bits == 16 ? "b16"
								   : "u8";
	char text[64], cons[16];
	LLVMValueRef args[3], r;

	if (!cm)
		cm = LLVMConstInt(cg->t_i1, 1, 0);
	snprintf(text, sizeof text, "@$2 ld.global.%s $0, [$1];", suf);
	snprintf(cons, sizeof cons, "=%s,l,b,0", c);
	args[0] = p;
	args[1] = cm;
	args[2] = LLVMConstNull(it);
	r = cg_asm(cg, it, text, cons, args, 3, true, false);
	if (bits < 16)
		r = LLVMBuildTrunc(cg->B, r, cg->t_i8, "");
	return LLVMBuildBitCast(cg->B, r, et, "");
}

/* All copies of the tile with vectors of v elements. */
static void
cp_all(CgFn *fn, Op *op, SmemView *w, const Layout *l, LLVMValueRef *src,
       LLVMValueRef *m, int v)
{
	Cg *cg = fn->cg;
	Type *pt = ir_type(fn->f, op->opnds[1]);
	LLVMTypeRef et = cg_type(cg, ty_elem(pt)->elem);
	int eb = MAX(1, ty_bits(ty_elem(pt)->elem) / 8);
	uint32_t dup = ly_dup_mask(l), g, n = (uint32_t)ly_nregs(l), i;
	bool regs = false;

	for (g = 0; g < n; g += (uint32_t)v) {
		LLVMValueRef off = elem_off(fn, w, l, g);

		if (g & dup)
			continue;
		if (v * eb >= 4) {
			cp_one(fn, cg_smem_ptr(fn, off), src[g], v * eb,
			       m ? m[g] : NULL);
			continue;
		}
		/* too narrow for cp.async: through registers */
		for (i = 0; i < (uint32_t)v; i++) {
			LLVMValueRef x = guarded_load(fn, et, src[g + i],
						      m ? m[g + i] : NULL), o;

			o = LLVMBuildAdd(cg->B, off, cg_i32(cg, (int64_t)i * eb), "");
			cg_smem_store_vec(fn, et, &x, 1, o, eb);
			regs = true;
		}
	}
	if (regs)
		cp_fence(fn);
}

/* The copy element by element as a loop over the thread's registers,
 * each element's pointer, mask and place evaluated at run time
 * (cg_elem_at): one copy of the code whatever the tile.  Unrolled, the
 * generic paths of a GEMM's copies were over half of its PTX and of
 * ptxas's time; they only run for unaligned pointers or odd strides.
 * False when the pointers or the mask are not rematerialized. */
static bool
cp_loop_ok(CgFn *fn, Op *op)
{
	Value ptr = op->opnds[1], mask = op->nopnds > 2 ? op->opnds[2] : 0;

	return fn->vals[ptr].remat && (!mask || !cg_is_tile(fn, mask) ||
				       fn->vals[mask].remat);
}

/* The load of register j (an i32) alone, and where it goes in the view
 * (*off). */
static LLVMValueRef
cp_elem_load(CgFn *fn, Op *op, SmemView *w, const Layout *l, LLVMValueRef j,
	     LLVMValueRef *off)
{
	Cg *cg = fn->cg;
	LLVMBuilderRef B = cg->B;
	Value ptr = op->opnds[1], mask = op->nopnds > 2 ? op->opnds[2] : 0;
	Type *pt = ir_type(fn->f, ptr);
	LLVMTypeRef et = cg_type(cg, ty_elem(pt)->elem);
	LLVMValueRef c[TY_MAX_RANK], p, m = NULL;
	int d;

	cg_reg_coords(fn, l, j, c);
	*off = w->off;
	for (d = 0; d < l->rank; d++)
		*off = LLVMBuildAdd(B, *off, cg_view_dim_off(fn, w, d, c[d]), "");
	p = cg_elem_at(fn, ptr, c);
	if (mask)
		m = cg_elem_at(fn, mask, c);
	return guarded_load(fn, et, p, m);
}

static void
cp_elem_store(CgFn *fn, Op *op, SmemView *w, LLVMValueRef x, LLVMValueRef off)
{
	Type *pt = ir_type(fn->f, op->opnds[1]);
	int eb = MAX(1, ty_bits(ty_elem(pt)->elem) / 8);

	cg_smem_store_vec(fn, cg_type(fn->cg, ty_elem(pt)->elem), &x, 1,
			  cg_swizzle(fn, off, w->g.swz), eb);
}

/* The copy of register j (an i32) alone. */
static void
cp_elem(CgFn *fn, Op *op, SmemView *w, const Layout *l, LLVMValueRef j)
{
	LLVMValueRef off, x = cp_elem_load(fn, op, w, l, j, &off);

	cp_elem_store(fn, op, w, x, off);
}

/* An iteration of the element loop issues up to CP_IN_FLIGHT loads
 * before it stores any: one at a time, each store waited for its load. */
enum { CP_IN_FLIGHT = 4 };

static bool
cp_loop(CgFn *fn, Op *op, SmemView *w, const Layout *l)
{
	LLVMBuilderRef B = fn->cg->B;
	uint32_t n = (uint32_t)ly_nregs(l), k, i;
	LLVMValueRef j, xs[CP_IN_FLIGHT], offs[CP_IN_FLIGHT];
	CgLoop loop;

	if (!cp_loop_ok(fn, op))
		return false;
	for (k = MIN(n, CP_IN_FLIGHT); n % k; k--)
		;
	j = LLVMBuildMul(B, cg_loop_begin(fn, &loop, "cp"), cg_i32(fn->cg, k), "");
	for (i = 0; i < k; i++)
		xs[i] = cp_elem_load(fn, op, w, l, i ? LLVMBuildAdd(B, j,
					cg_i32(fn->cg, i), "") : j, &offs[i]);
	for (i = 0; i < k; i++)
		cp_elem_store(fn, op, w, xs[i], offs[i]);
	cg_loop_end(fn, &loop, n / k);
	cp_fence(fn);
	return true;
}

/* The widest copy: the view's and the pointers' vectors, narrowed
 * until the mask is constant over each. */
static int
cp_vec(CgFn *fn, Op *op, SmemView *w, const Layout *l, const Axis *ax)
{
	int v = MIN(view_vec(op), ly_mem_vec(fn->f, op->opnds[1], l, ax));

	if (op->nopnds > 2 && cg_is_tile(fn, op->opnds[2]))
		while (v > 1 && ax[op->opnds[2]].cnst[cg_vec_dim(l)] < v)
			v /= 2;
	return v;
}

/* A copy through registers: each of the thread's vectors of v elements
 * loaded realigned (two aligned blocks and a funnel shift: rows whose
 * pitch is not a multiple of 4 bytes, which cp.async cannot copy), then
 * stored to the view.  Where the target has wgmma, whose async proxy may
 * read the view next, each thread's stores are fenced for it.  Under the
 * facts of a unit inner stride (`deps` checked at run time: the caller's
 * branch); false where the pointers are not contiguous even so. */
static bool
cp_realign(CgFn *fn, Op *op, SmemView *w, const Layout *l, const Axis *ax,
	   int v)
{
	Cg *cg = fn->cg;
	LLVMBuilderRef B = cg->B;
	int eb = MAX(1, ty_bits(ty_elem(ir_type(fn->f, op->opnds[1]))->elem) / 8);
	uint32_t dup = ly_dup_mask(l), g, n = (uint32_t)ly_nregs(l);
	LLVMValueRef *words = cg_regs(fn, l), st, bad, bits, x, next, iv[2];
	LLVMBasicBlockRef pre, head, body, out, ib[2];
	LLVMTypeRef i32 = cg->t_i32;
	CgLoop loop;

	if (!cp_loop_ok(fn, op) || !(bad = cg_copy_realign(fn, op, ax, v, words)))
		return false;
	for (g = 0; g < n; g += (uint32_t)v) {
		if (g & dup)
			continue;
		st = LLVMBuildStore(B, words[g], cg_smem_ptr(fn, elem_off(fn, w, l, g)));
		LLVMSetAlignment(st, (unsigned)(v * eb));
	}
	/* the vectors not all in (bits of bad), element by element */
	pre = LLVMGetInsertBlock(B);
	head = cg_new_block(fn, "cp.edge");
	body = cg_new_block(fn, "cp.edge.vec");
	out = cg_new_block(fn, "cp.edge.done");
	LLVMBuildBr(B, head);
	LLVMPositionBuilderAtEnd(B, head);
	bits = LLVMBuildPhi(B, i32, "");
	LLVMBuildCondBr(B, LLVMBuildICmp(B, LLVMIntNE, bits, cg_i32(cg, 0), ""),
			body, out);
	LLVMPositionBuilderAtEnd(B, body);
	iv[0] = bits;
	iv[1] = LLVMConstInt(cg->t_i1, 1, 0);
	x = LLVMBuildMul(B, cg_intr(cg, "llvm.cttz", &i32, 1, iv, 2),
			 cg_i32(cg, v), "");
	cp_elem(fn, op, w, l, LLVMBuildAdd(B, x, cg_loop_begin(fn, &loop, "cp.edge"),
					   ""));
	cg_loop_end(fn, &loop, (uint32_t)v);
	next = LLVMBuildAnd(B, bits, LLVMBuildSub(B, bits, cg_i32(cg, 1), ""), "");
	LLVMBuildBr(B, head);
	iv[0] = bad;
	iv[1] = next;
	ib[0] = pre;
	ib[1] = LLVMGetInsertBlock(B);
	LLVMAddIncoming(bits, iv, ib, 2);
	LLVMPositionBuilderAtEnd(B, out);
	cp_fence(fn);
	return true;
}

/* The last resort of a copy: where the inner stride is 1 (checked at
 * run time), realigned through registers; else the element loop. */
static void
cp_unaligned(CgFn *fn, Op *op, SmemView *w, const Layout *l,
	     LLVMValueRef *src, LLVMValueRef *m, int vg, int eb)
{
	Cg *cg = fn->cg;
	const Axis *ax = cg_axis_narrow(fn, eb);
	int v = MIN(view_vec(op), ly_mem_vec(fn->f, op->opnds[1], l, fn->ax));
	LLVMBasicBlockRef yes, no, done;

	if (v * eb == 8 || v * eb == 16) {
		yes = cg_new_block(fn, "cp.realign");
		no = cg_new_block(fn, "cp.elem");
		done = cg_new_block(fn, "cp.realign.done");
		LLVMBuildCondBr(cg->B, cg_guard_narrow(fn, ax[op->opnds[1]].deps,
						       eb), yes, no);
		LLVMPositionBuilderAtEnd(cg->B, yes);
		if (cp_realign(fn, op, w, l, ax, v)) {
			LLVMBuildBr(cg->B, done);
			LLVMPositionBuilderAtEnd(cg->B, no);
			if (!cp_loop(fn, op, w, l))
				cp_all(fn, op, w, l, src, m, vg);
			LLVMBuildBr(cg->B, done);
			LLVMPositionBuilderAtEnd(cg->B, done);
			return;
		}
		/* nothing emitted: both ways go on to the loop */
		LLVMBuildBr(cg->B, no);
		LLVMPositionBuilderAtEnd(cg->B, no);
		LLVMDeleteBasicBlock(done);
	}
	if (!cp_loop(fn, op, w, l))
		cp_all(fn, op, w, l, src, m, vg);
}

/* The generic path of a copy whose proven vectors (vg elements of eb
 * bytes) are too narrow for cp.async: where the pointers are 8 bytes
 * aligned and the strides and bounds multiples of as many (a row pitch
 * that is not a multiple of 16 bytes: a K of 4100 bf16), a run-time check
 * of those assumptions chooses copies of 8 bytes, else of 4, else the
 * realigned copy or the element loop.  The check is on parameters:
 * uniform, made once. */
static void
cp_narrow(CgFn *fn, Op *op, SmemView *w, const Layout *l, LLVMValueRef *src,
	  LLVMValueRef *m, int vg, int eb, int bytes)
{
	Cg *cg = fn->cg;
	LLVMBasicBlockRef yes, no, done;
	const Axis *ax;
	uint64_t deps;
	int v;

	/* TLX_CG_REALIGN=all: the realigned copy for every unaligned row,
	 * without the 8- and 4-byte cp.async (an A/B knob for benchmarks) */
	if (fn->cg->realign_all)
		bytes = 2;
	for (; bytes >= 4; bytes /= 2) {
		ax = cg_axis_narrow(fn, bytes);
		v = cp_vec(fn, op, w, l, ax);
		if (v > vg && v * eb >= 4)
			break;
	}
	if (bytes < 4) {
		if (vg * eb >= 4)
			cp_all(fn, op, w, l, src, m, vg);
		else
			cp_unaligned(fn, op, w, l, src, m, vg, eb);
		return;
	}
	deps = ax[op->opnds[1]].deps;
	if (m && cg_is_tile(fn, op->opnds[2]))
		deps |= ax[op->opnds[2]].deps;
	yes = cg_new_block(fn, "cp.narrow");
	no = cg_new_block(fn, "cp.narrower");
	done = cg_new_block(fn, "cp.narrow.done");
	LLVMBuildCondBr(cg->B, cg_guard_narrow(fn, deps, bytes), yes, no);
	LLVMPositionBuilderAtEnd(cg->B, yes);
	cp_all(fn, op, w, l, src, m, v);
	LLVMBuildBr(cg->B, done);
	LLVMPositionBuilderAtEnd(cg->B, no);
	cp_narrow(fn, op, w, l, src, m, vg, eb, bytes / 2);
	LLVMBuildBr(cg->B, done);
	LLVMPositionBuilderAtEnd(cg->B, done);
}

static bool
cp_async(CgFn *fn, Op *op)
{
	Cg *cg = fn->cg;
	SmemView *w = view_of(fn, op->opnds[0]);
	const Layout *l = cg_operand_layout(fn, op, 1);
	LLVMValueRef *src = cg_operand(fn, op, 1), *m = NULL, first;
	LLVMBasicBlockRef in = NULL, done = NULL, fb, gb;
	int vf = cp_vec(fn, op, w, l, fn->ax), vg = cp_vec(fn, op, w, l, fn->ax_gen);
	int eb = MAX(1, ty_bits(ty_elem(ir_type(fn->f, op->opnds[1]))->elem) / 8);
	uint64_t deps;

	if (op->nopnds > 2)
		m = cg_operand(fn, op, 2);
	if ((first = cg_first_copy(fn, l))) {
		in = cg_new_block(fn, "cp");
		done = cg_new_block(fn, "cp.done");
		LLVMBuildCondBr(cg->B, first, in, done);
		LLVMPositionBuilderAtEnd(cg->B, in);
	}
	if (fn->mode == CG_GENERIC || vf <= vg) {
		if (vf == vg || vg * eb >= 4)
			cp_all(fn, op, w, l, src, m, vg);
		else
			cp_narrow(fn, op, w, l, src, m, vg, eb, 8);
	} else if (fn->mode == CG_FAST) {
		cp_all(fn, op, w, l, src, m, vf);
	} else {
		deps = fn->ax[op->opnds[1]].deps;
		if (m)
			deps |= fn->ax[op->opnds[2]].deps;
		fb = cg_new_block(fn, "cp.fast");
		gb = cg_new_block(fn, "cp.generic");
		if (!done)
			done = cg_new_block(fn, "cp.done");
		LLVMBuildCondBr(cg->B, cg_guard(fn, deps), fb, gb);
		LLVMPositionBuilderAtEnd(cg->B, fb);
		cp_all(fn, op, w, l, src, m, vf);
		LLVMBuildBr(cg->B, done);
		LLVMPositionBuilderAtEnd(cg->B, gb);
		cp_narrow(fn, op, w, l, src, m, vg, eb, 8);
	}
	if (done) {
		LLVMBuildBr(cg->B, done);
		LLVMPositionBuilderAtEnd(cg->B, done);
	}
	return true;
}

bool
cg_shared_op(CgFn *fn, Op *op)
{
	Cg *cg = fn->cg;
	LLVMValueRef n;

	switch (op->kind) {
	case OP_SMEM_ALLOC: return alloc_op(fn, op);
	case OP_SMEM_INDEX: case OP_SMEM_SLICE: case OP_SMEM_TRANS:
		return view_op(fn, op);
	case OP_SMEM_LOAD: return smem_load(fn, op);
	case OP_SMEM_STORE: return smem_store(fn, op);
	case OP_MBAR_ALLOC: return mbar_alloc(fn, op);
	case OP_MBAR_AT: return mbar_at(fn, op);
	case OP_MBAR_WAIT: return mbar_wait(fn, op);
	case OP_MBAR_ARRIVE: return mbar_arrive(fn, op);
	case OP_SYNC_THREADS: case OP_SYNC_WARPS:
		cg_barrier(fn);  /* check.c refuses sync_threads in a task */
		return true;
	case OP_CP_ASYNC: return cp_async(fn, op);
	case OP_CP_ASYNC_COMMIT:
		cg_intr(cg, "llvm.nvvm.cp.async.commit.group", NULL, 0, NULL, 0);
		return true;
	case OP_CP_ASYNC_WAIT:
		n = cg_i32(cg, attr_int(&op->attrs, "pending", 0));
		cg_intr(cg, "llvm.nvvm.cp.async.wait.group", NULL, 0, &n, 1);
		cg_barrier(fn);
		return true;
	default:
		cg_unsupported(cg, op, NULL);
		return false;
	}
}
