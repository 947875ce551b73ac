/*
 * mma.c: dot through mma.sync (tensor cores) or FMAs.
 *
 * Tensor cores (bf16/f16 -> f32 with m16n8k16; e4m3/e5m2 -> f32 and
 * i8 -> i32 with m16n8k32, sm_89+ for fp8): the accumulator lives in the
 * mma layout (each warp a block of 16x8 tiles).  a and b are written to
 * shared scratch from whatever layout they have, in 16-byte vectors, into
 * row-major tiles whose 16-byte chunks are XOR-swizzled by row:
 *     chunk' = chunk ^ ((row / perPhase) % maxPhase)
 * with maxPhase = min(chunks per row, 8) and perPhase = max(1, 8 / chunks
 * per row), so the 8 rows an ldmatrix reads fall on distinct banks, and
 * so do the 16-byte stores of a blocked layout.  Fragments come from
 * ldmatrix (tensor-core-layouts.md, section 2): A (MxK, K contiguous) with
 * .x4; B (KxN, N contiguous) with .x4.trans, two n-tiles at a time; fp8
 * and i8 B is stored transposed (NxK) and read with .x4 (no transpose
 * exists for bytes).  Then one mma.sync per 16x8 tile and k step.
 *
 * Other dots (f32, shapes too small for a tile) run on FMAs: the
 * accumulator in a blocked layout, a and b read back from plain
 * row-major scratch, exact products (fma) summed in the accumulator type.
 */
#include "config.h"

#include "codegen/cg.h"

/* Where an operand's fragments are read: a byte offset (a multiple of
 * align), a row pitch and the swizzle of the rows. */
typedef struct Src {
	LLVMValueRef base;
	int64_t align;
	int64_t rowbytes;
	Swizzle swz;
} Src;

typedef struct Dot {
	CgFn *fn;
	Op *op;
	Src sa, sb;
	Type *ae, *ce;        /* operand and accumulator elements */
	int64_t M, N, K;
	int eb, kstep;
	bool trans_b;         /* B stored N x K */
	bool mma;
} Dot;

static void
dot_shape(Dot *d, Func *f, Op *op, const Target *t)
{
	Type *a = ir_type(f, op->opnds[0]), *c = ir_type(f, op->opnds[2]);

	memset(d, 0, sizeof *d);
	d->op = op;
	d->ae = ty_elem(a);
	d->ce = ty_elem(c);
	d->M = a->shape[0];
	d->K = a->shape[1];
	d->N = c->shape[1];
	d->eb = MAX(1, ty_bits(d->ae) / 8);
	d->kstep = d->eb == 1 ? 32 : 16;
	d->mma = ly_dot_is_mma(t, f, op, &d->trans_b);
}

static void
dot_init(Dot *d, CgFn *fn, Op *op)
{
	dot_shape(d, fn->f, op, fn->cg->t);
	d->fn = fn;
}

/* ---- staging a and b in shared memory -------------------------------------- */

/* Byte offset of (row + krow, byte column colb + kcol) of an operand:
 * row and colb the thread's part, krow and kcol constants. */
static LLVMValueRef
tile_addr(Dot *d, const Src *src, LLVMValueRef row, int64_t krow,
	  LLVMValueRef colb, int64_t kcol)
{
	Cg *cg = d->fn->cg;
	LLVMBuilderRef B = cg->B;
	LLVMValueRef x = LLVMBuildMul(B, row, cg_i32(cg, src->rowbytes), "");

	x = LLVMBuildAdd(B, x, colb, "");
	return cg_swizzle_off(d->fn, src->base, src->align, x,
			      krow * src->rowbytes + kcol, src->swz);
}

/* Writes a tile (registers r in layout l, dims rows x cols of the
 * operand) to scratch as `trans` ? cols x rows : rows x cols. */
static void
stage(Dot *d, LLVMValueRef *r, const Layout *l, const Src *src, bool trans)
{
	CgFn *fn = d->fn;
	Cg *cg = fn->cg;
	LLVMBuilderRef B = cg->B;
	int sd = trans ? 0 : 1;  /* the operand dim that is stored contiguous */
	LLVMTypeRef et = cg_type(cg, d->ae);
	LLVMValueRef first = cg_first_copy(fn, l), t0, t1;
	LLVMBasicBlockRef wr = NULL, done = NULL;
	uint32_t dup = ly_dup_mask(l), n = (uint32_t)ly_nregs(l), g;
	int v = 1, sh = ly_dim_shift(l, sd), k = 0;

	while (k < l->nreg && k < ly_dim_bits(l, sd) && l->reg[k] == 1u << (sh + k))
		k++;
	v = 1 << k;
	while (v * d->eb > 16)
		v /= 2;
	if (first) {
		wr = cg_new_block(fn, "stage");
		done = cg_new_block(fn, "staged");
		LLVMBuildCondBr(B, first, wr, done);
		LLVMPositionBuilderAtEnd(B, wr);
	}
	t0 = cg_thread_coord(fn, l, 0);
	t1 = cg_thread_coord(fn, l, 1);
	for (g = 0; g < n; g += (uint32_t)v) {
		uint32_t f = ly_reg_flat(l, g);
		int64_t c0 = (f >> ly_dim_shift(l, 0)) & (l->shape[0] - 1);
		int64_t c1 = f & (l->shape[1] - 1);
		LLVMValueRef col, off;

		if (g & dup)
			continue;
		col = LLVMBuildMul(B, trans ? t0 : t1, cg_i32(cg, d->eb), "");
		off = tile_addr(d, src, trans ? t1 : t0, trans ? c1 : c0, col,
				(trans ? c0 : c1) * d->eb);
		cg_smem_store_vec(fn, et, r + g, v, off, v * d->eb);
	}
	if (first) {
		LLVMBuildBr(B, done);
		LLVMPositionBuilderAtEnd(B, done);
	}
}

/* ---- tensor cores -------------------------------------------------------------- */

static LLVMValueRef *
ldmatrix(Dot *d, LLVMValueRef addr, int n, bool trans)
{
	Cg *cg = d->fn->cg;
	char name[64];
	LLVMValueRef p = cg_smem_ptr(d->fn, addr), res, *out;
	LLVMTypeRef pt = cg->t_sptr;
	int i;

	snprintf(name, sizeof name, "llvm.nvvm.ldmatrix.sync.aligned.m8n8.x%d%s.b16",
		 n, trans ? ".trans" : "");
	res = cg_intr(cg, name, &pt, 1, &p, 1);
	out = arena_alloc(d->fn->a, 4 * sizeof *out);
	for (i = 0; i < n; i++)
		out[i] = n == 1 ? res : LLVMBuildExtractValue(cg->B, res, (unsigned)i, "");
	return out;
}

static const char *
mma_name(Dot *d)
{
	switch (d->ae->kind) {
	case TY_BF16: return "llvm.nvvm.mma.m16n8k16.row.col.bf16";
	case TY_F16: return "llvm.nvvm.mma.m16n8k16.row.col.f32.f32";
	case TY_F8E4M3: return "llvm.nvvm.mma.m16n8k32.row.col.f32.e4m3.e4m3.f32";
	case TY_F8E5M2: return "llvm.nvvm.mma.m16n8k32.row.col.f32.e5m2.e5m2.f32";
	default: return "llvm.nvvm.mma.m16n8k32.row.col.s8";
	}
}

static void
mma(Dot *d, LLVMValueRef *a, LLVMValueRef *b, LLVMValueRef *c)
{
	Cg *cg = d->fn->cg;
	LLVMValueRef args[10], r;
	LLVMTypeRef h2 = LLVMVectorType(cg->t_f16, 2);
	int i;

	for (i = 0; i < 4; i++)
		args[i] = d->ae->kind == TY_F16 ? LLVMBuildBitCast(cg->B, a[i], h2, "")
						: a[i];
	for (i = 0; i < 2; i++)
		args[4 + i] = d->ae->kind == TY_F16
				      ? LLVMBuildBitCast(cg->B, b[i], h2, "") : b[i];
	for (i = 0; i < 4; i++)
		args[6 + i] = c[i];
	r = cg_intr(cg, mma_name(d), NULL, 0, args, 10);
	for (i = 0; i < 4; i++)
		c[i] = LLVMBuildExtractValue(cg->B, r, (unsigned)i, "");
}

static void
mma_loop(Dot *d, const Layout *L, LLVMValueRef *acc)
{
	CgFn *fn = d->fn;
	Cg *cg = fn->cg;
	LLVMBuilderRef B = cg->B;
	int lwn = log2i(L->wn), nb = log2i(L->nreps), mrep, nrep, i;
	LLVMValueRef lane = fn->lane, wm, wn, l16, lhi, mbase, nbase, row, col;
	LLVMValueRef **af = arena_alloc(fn->a, (size_t)L->mreps * sizeof *af);
	LLVMValueRef **bf = arena_alloc(fn->a, (size_t)L->nreps * sizeof *bf);
	int64_t kk;

	wn = LLVMBuildAnd(B, fn->warp, cg_i32(cg, L->wn - 1), "");
	wm = LLVMBuildAnd(B, LLVMBuildLShr(B, fn->warp, cg_i32(cg, lwn), ""),
			  cg_i32(cg, L->wm - 1), "");
	mbase = LLVMBuildMul(B, wm, cg_i32(cg, (int64_t)L->mreps * 16), "");
	nbase = LLVMBuildMul(B, wn, cg_i32(cg, (int64_t)L->nreps * 8), "");
	l16 = LLVMBuildAnd(B, lane, cg_i32(cg, 15), "");
	lhi = LLVMBuildLShr(B, lane, cg_i32(cg, 4), "");
	for (kk = 0; kk < d->K; kk += d->kstep) {
		int64_t kb = kk * d->eb;

		for (mrep = 0; mrep < L->mreps; mrep++) {
			row = LLVMBuildAdd(B, mbase, l16, "");
			col = LLVMBuildShl(B, lhi, cg_i32(cg, 4), "");
			af[mrep] = ldmatrix(d, tile_addr(d, &d->sa, row, mrep * 16,
							 col, kb), 4, false);
		}
		for (nrep = 0; nrep < L->nreps; nrep += 2) {
			int x = nrep + 1 < L->nreps ? 4 : 2;
			LLVMValueRef *r;

			if (d->trans_b) {
				/* n = base + l%8 + 8*(l/16), k chunk (l/8)%2 */
				row = LLVMBuildAdd(B, nbase, LLVMBuildAnd(B, lane, cg_i32(cg, 7), ""), "");
				row = LLVMBuildAdd(B, row, LLVMBuildShl(B, lhi, cg_i32(cg, 3), ""), "");
				col = LLVMBuildAnd(B, LLVMBuildLShr(B, lane, cg_i32(cg, 3), ""),
						   cg_i32(cg, 1), "");
				col = LLVMBuildShl(B, col, cg_i32(cg, 4), "");
				r = ldmatrix(d, tile_addr(d, &d->sb, row, nrep * 8, col,
							  kb), x, false);
			} else {
				/* k = kk + l%16, n = base + 8*(l/16) */
				col = LLVMBuildAdd(B, nbase, LLVMBuildShl(B, lhi, cg_i32(cg, 3), ""), "");
				col = LLVMBuildMul(B, col, cg_i32(cg, d->eb), "");
				r = ldmatrix(d, tile_addr(d, &d->sb, l16, kk, col,
							  nrep * 8 * d->eb), x, true);
			}
			bf[nrep] = r;
			if (x == 4)
				bf[nrep + 1] = r + 2;
		}
		for (mrep = 0; mrep < L->mreps; mrep++)
			for (nrep = 0; nrep < L->nreps; nrep++) {
				LLVMValueRef c[4];
				int base = (nrep << 2) | (mrep << (2 + nb));

				for (i = 0; i < 4; i++)
					c[i] = acc[base | i];
				mma(d, af[mrep], bf[nrep], c);
				for (i = 0; i < 4; i++)
					acc[base | i] = c[i];
			}
	}
}

/* ---- FMAs ------------------------------------------------------------------------ */

static void
fma_loop(Dot *d, const Layout *L, LLVMValueRef *acc)
{
	CgFn *fn = d->fn;
	Cg *cg = fn->cg;
	LLVMBuilderRef B = cg->B;
	LLVMTypeRef et = cg_type(cg, d->ae);
	Type *f32 = ty_scalar(fn->f->mod->ctx, TY_F32);
	Type *w = ty_is_int(d->ce) ? d->ce : d->ce->kind == TY_F64 ? d->ce : f32;
	LLVMValueRef t0 = cg_thread_coord(fn, L, 0), t1 = cg_thread_coord(fn, L, 1);
	uint32_t dup = ly_dup_mask(L), n = (uint32_t)ly_nregs(L), i;
	int64_t k;

	for (i = 0; i < n; i++)
		if (!(i & dup))
			acc[i] = cg_cvt(fn, w, d->ce, acc[i]);
	for (k = 0; k < d->K; k++) {
		for (i = 0; i < n; i++) {
			uint32_t f = ly_reg_flat(L, i);
			LLVMValueRef a, b, off, args[3];
			LLVMTypeRef wt = cg_type(cg, w);

			if (i & dup)
				continue;
			off = tile_addr(d, &d->sa, t0, f >> ly_dim_shift(L, 0),
					cg_i32(cg, 0), k * d->eb);
			cg_smem_load_vec(fn, et, &a, 1, off, d->eb);
			off = tile_addr(d, &d->sb, cg_i32(cg, 0), k,
					LLVMBuildMul(B, t1, cg_i32(cg, d->eb), ""),
					(int64_t)(f & (L->shape[1] - 1)) * d->eb);
			cg_smem_load_vec(fn, et, &b, 1, off, d->eb);
			a = cg_cvt(fn, w, d->ae, a);
			b = cg_cvt(fn, w, d->ae, b);
			if (ty_is_int(w)) {
				acc[i] = LLVMBuildAdd(B, acc[i], LLVMBuildMul(B, a, b, ""), "");
				continue;
			}
			args[0] = a;
			args[1] = b;
			args[2] = acc[i];
			acc[i] = cg_intr(cg, "llvm.fma", &wt, 1, args, 3);
		}
	}
	for (i = 0; i < n; i++)
		acc[i] = (i & dup) ? acc[i & ~dup] : cg_cvt(fn, d->ce, w, acc[i]);
}

/* The smem view operand i (0: a, 1: b) can be read from directly: a
 * row-major smem_load of a view whose rows ldmatrix can address. */
Value
cg_dot_view(CgFn *fn, Op *op, int i)
{
	return ir_dot_view(fn->cg->t, fn->f, op, i);
}

/* An operand read from its view, or staged in scratch at *scratch. */
static bool
operand(Dot *d, int i, Src *src, int64_t *scratch)
{
	CgFn *fn = d->fn;
	Value v = cg_dot_view(fn, d->op, i);
	SmemView *w = v ? fn->vals[v].view : NULL;
	int64_t rows = i == 0 ? d->M : d->trans_b ? d->N : d->K;
	int64_t cols = i == 0 ? d->K : d->trans_b ? d->K : d->N;

	if (w && w->g.stride[1] == 1 && !w->g.tw) {
		src->base = w->off;
		src->align = w->align;
		src->rowbytes = w->g.stride[0] * w->g.ebytes;
		src->swz = w->g.swz;
		return false;
	}
	src->base = cg_i32(fn->cg, *scratch);
	src->align = *scratch ? *scratch & -*scratch : (int64_t)1 << 30;
	src->rowbytes = cols * d->eb;
	src->swz = d->mma ? sv_swizzle_of(ly_swizzle_for(&fn->cg->layouts,
							 src->rowbytes))
			  : (Swizzle){ 0, 0 };
	*scratch += (rows * cols * d->eb + 127) / 128 * 128;
	return true;
}

bool
cg_dot_op(CgFn *fn, Op *op)
{
	const Layout *L = fn->vals[op->res[0]].home;
	LLVMValueRef *c = cg_operand(fn, op, 2), *acc;
	uint32_t i, dup = ly_dup_mask(L);
	int64_t scratch = 0;
	bool sta, stb;
	Dot d;

	dot_init(&d, fn, op);
	acc = cg_regs(fn, L);
	for (i = 0; i < (uint32_t)ly_nregs(L); i++)
		acc[i] = c[i];
	if (cg_op_scratch(fn, op))
		scratch = cg_cur_scratch(fn);
	sta = operand(&d, 0, &d.sa, &scratch);
	stb = operand(&d, 1, &d.sb, &scratch);
	if (sta || stb) {
		/* operands in registers go through scratch */
		LLVMValueRef *a = sta ? cg_operand(fn, op, 0) : NULL;
		LLVMValueRef *b = stb ? cg_operand(fn, op, 1) : NULL;

		if (sta)
			stage(&d, a, cg_operand_layout(fn, op, 0), &d.sa, false);
		if (stb)
			stage(&d, b, cg_operand_layout(fn, op, 1), &d.sb, d.trans_b);
		cg_barrier(fn);
	}
	if (d.mma)
		mma_loop(&d, L, acc);
	else
		fma_loop(&d, L, acc);
	if (sta || stb)
	for (i = 0; i < (uint32_t)ly_nregs(L); i++)
		if (i & dup)
			acc[i] = acc[i & ~dup];
	cg_set_tile(fn, op->res[0], L, acc);
	return true;
}
