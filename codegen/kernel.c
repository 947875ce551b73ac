/*
 * kernel.c: lowering one kernel -- its LLVM function and parameters
 * (the kernel ABI), the analyses, the walk over its ops and the table of
 * lowered values.
 *
 * Values: a scalar is one LLVM value, uniform across the threads.  A tile
 * is a list of materializations (Mat: a layout and its registers); the
 * home one is made where the tile is defined, others on demand by a use
 * (rematerialized or converted).  Materializations belong to the region
 * scope that made them and are invisible once it is closed, so a value
 * rematerialized inside a loop body is never used after the loop.
 */
#include "config.h"

#include "codegen/cg.h"

LLVMBasicBlockRef
cg_new_block(CgFn *fn, const char *name)
{
	return LLVMAppendBasicBlockInContext(fn->cg->C, fn->fn, name);
}

/* Marks the loop whose latch branch is br as not to be unrolled (the
 * generic element loops: unrolling only grows code that rarely runs):
 * !llvm.loop !{self, !{"llvm.loop.unroll.disable"}}. */
void
cg_no_unroll(Cg *cg, LLVMValueRef br)
{
	static const char key[] = "llvm.loop.unroll.disable";
	LLVMMetadataRef tmp = LLVMTemporaryMDNode(cg->C, NULL, 0), ops[2], id;
	LLVMMetadataRef str = LLVMMDStringInContext2(cg->C, key, sizeof key - 1);

	ops[0] = tmp;
	ops[1] = LLVMMDNodeInContext2(cg->C, &str, 1);
	id = LLVMMDNodeInContext2(cg->C, ops, 2);
	LLVMMetadataReplaceAllUsesWith(tmp, id);
	LLVMSetMetadata(br, LLVMGetMDKindIDInContext(cg->C, "llvm.loop", 9),
			LLVMMetadataAsValue(cg->C, id));
}

LLVMValueRef
cg_loop_begin(CgFn *fn, CgLoop *l, const char *name)
{
	LLVMBuilderRef B = fn->cg->B;
	char bn[64];

	l->pre = LLVMGetInsertBlock(B);
	snprintf(bn, sizeof bn, "%s.elem", name);
	l->body = cg_new_block(fn, bn);
	snprintf(bn, sizeof bn, "%s.elem.done", name);
	l->exit = cg_new_block(fn, bn);
	LLVMBuildBr(B, l->body);
	LLVMPositionBuilderAtEnd(B, l->body);
	l->j = LLVMBuildPhi(B, fn->cg->t_i32, "");
	return l->j;
}

void
cg_loop_end(CgFn *fn, CgLoop *l, uint32_t n)
{
	Cg *cg = fn->cg;
	LLVMBuilderRef B = cg->B;
	LLVMValueRef next = LLVMBuildAdd(B, l->j, cg_i32(cg, 1), "");
	LLVMValueRef iv[2] = { cg_i32(cg, 0), next };
	LLVMBasicBlockRef ib[2] = { l->pre, LLVMGetInsertBlock(B) };

	cg_no_unroll(cg, LLVMBuildCondBr(B, LLVMBuildICmp(B, LLVMIntULT, next,
				      cg_i32(cg, (int64_t)n), ""),
				      l->body, l->exit));
	LLVMAddIncoming(l->j, iv, ib, 2);
	LLVMPositionBuilderAtEnd(B, l->exit);
}

void
cg_scope_push(CgFn *fn)
{
	vec_push(fn->a, &fn->scopes, ++fn->scope_next);
	fn->smem_epoch++;
}

void
cg_scope_pop(CgFn *fn)
{
	if (ALWAYS(fn->scopes.n > 0))
		fn->scopes.n--;
	fn->smem_epoch++;
}

static bool
visible(CgFn *fn, uint32_t scope)
{
	uint32_t i;

	for (i = fn->scopes.n; i-- > 0;)
		if (fn->scopes.v[i] == scope)
			return true;
	return false;
}

LLVMValueRef *
cg_regs(CgFn *fn, const Layout *ly)
{
	return arena_alloc(fn->a, (size_t)ly_nregs(ly) * sizeof(LLVMValueRef));
}

void
cg_set_tile(CgFn *fn, Value v, const Layout *ly, LLVMValueRef *r)
{
	Mat *m = arena_alloc(fn->a, sizeof *m);

	m->ly = ly;
	m->r = r;
	m->scope = fn->scopes.n ? vec_last(&fn->scopes) : 0;
	m->next = fn->vals[v].mats;
	fn->vals[v].mats = m;
}

static Mat *
find_mat(CgFn *fn, Value v, const Layout *ly)
{
	Mat *m;

	for (m = fn->vals[v].mats; m; m = m->next)
		if ((!ly || m->ly == ly) && visible(fn, m->scope))
			return m;
	return NULL;
}

/* Register-only conversion: same lanes and warps, and every register of
 * `to` is some register of `from`.  Returns NULL when data must move. */
static LLVMValueRef *
permute(CgFn *fn, LLVMValueRef *r, const Layout *from, const Layout *to)
{
	LLVMValueRef *out;
	uint32_t i, j, n;

	if (from->rank != to->rank || from->nwarp != to->nwarp ||
	    memcmp(from->shape, to->shape, sizeof from->shape) ||
	    memcmp(from->lane, to->lane, sizeof from->lane) ||
	    memcmp(from->warp, to->warp, sizeof from->warp))
		return NULL;
	for (i = 0; i < to->nreg; i++) {
		if (!to->reg[i])
			continue;
		for (j = 0; j < from->nreg && from->reg[j] != to->reg[i]; j++)
			;
		if (j == from->nreg)
			return NULL;
	}
	out = cg_regs(fn, to);
	n = (uint32_t)ly_nregs(to);
	for (i = 0; i < n; i++) {
		uint32_t f = ly_reg_flat(to, i), src = 0;

		for (j = 0; j < from->nreg; j++)
			if (from->reg[j] && (f & from->reg[j]))
				src |= 1u << j;
		out[i] = r[src];
	}
	return out;
}

const Axis *
cg_axis(CgFn *fn, Value v)
{
	if (fn->mode == CG_FAST && !(fn->ax[v].deps & ~fn->ver_deps))
		return &fn->ax[v];
	return &fn->ax_gen[v];
}

/* Registers of a value constant over runs of its dims (a mask `c < n`
 * with n % 16 == 0 is constant over each 8-element vector) repeat the
 * first register of their run: one compare per vector, not per element
 * (LLVM drops the computations no one uses). */
static uint32_t
const_runs(const Axis *ax, const Layout *ly)
{
	uint32_t cmask = 0;
	int d, k;

	for (d = 0; d < ly->rank; d++) {
		int sh = ly_dim_shift(ly, d), run = 0;

		while (run < ly_dim_bits(ly, d) && ax->cnst[d] >> (run + 1))
			run++;
		for (k = 0; k < ly->nreg; k++)
			if (ly->reg[k] >= 1u << sh && ly->reg[k] < 1u << (sh + run))
				cmask |= 1u << k;
	}
	return cmask;
}

static LLVMValueRef *
share_constant(CgFn *fn, Value v, const Layout *ly, LLVMValueRef *r)
{
	uint32_t cmask = const_runs(cg_axis(fn, v), ly), i, n = (uint32_t)ly_nregs(ly);
	LLVMValueRef *out;

	if (!cmask)
		return r;
	out = cg_regs(fn, ly);
	for (i = 0; i < n; i++)
		out[i] = r[i & ~cmask];
	return out;
}

/* The materialization a convert_layout's result v is made from: its
 * operand's home. */
static Mat *
convert_from(CgFn *fn, Value v)
{
	Value src = ir_val(fn->f, v)->def->opnds[0];
	CgVal *cs = &fn->vals[src];
	Mat *m = cs->home ? find_mat(fn, src, cs->home) : NULL;

	return m ? m : find_mat(fn, src, NULL);
}

static bool
is_convert(CgFn *fn, Value v)
{
	Op *def = ir_val(fn->f, v)->def;

	return def && def->kind == OP_CONVERT_LAYOUT;
}

bool
cg_convert_source(CgFn *fn, Value v, const Layout *ly, LLVMValueRef **r,
		  const Layout **from, int64_t *off)
{
	Mat *m;

	if (!is_convert(fn, v) || find_mat(fn, v, ly))
		return false;
	m = convert_from(fn, v);
	if (!m || permute(fn, m->r, m->ly, ly))
		return false;
	*r = m->r;
	*from = m->ly;
	*off = cg_smem_offset(fn, ir_val(fn->f, v)->def);
	return true;
}

LLVMValueRef *
cg_tile(CgFn *fn, Value v, const Layout *ly)
{
	CgVal *cv = &fn->vals[v];
	Type *t = ir_type(fn->f, v);
	LLVMValueRef *r;
	Mat *m;

	if ((m = find_mat(fn, v, ly)))
		return m->r;
	if (cv->remat) {
		r = share_constant(fn, v, ly, cg_remat(fn, v, ly));
	} else {
		bool conv = is_convert(fn, v) && ly == cv->home;

		m = conv ? convert_from(fn, v) : NULL;
		if (!conv && cv->home)
			m = find_mat(fn, v, cv->home);
		if (!conv && !m)
			m = find_mat(fn, v, NULL);
		if (!m) {
			/* only after an error (the def was not lowered) */
			r = cg_regs(fn, ly);
			for (uint32_t i = 0; i < (uint32_t)ly_nregs(ly); i++)
				r[i] = LLVMGetUndef(cg_type(fn->cg, t));
			return r;
		}
		r = permute(fn, m->r, m->ly, ly);
		if (!r) {
			bool fence = conv && cg_conv_fence(fn, v);

			r = cg_convert(fn, t->elem, m->r, m->ly, ly,
				       conv ? cg_smem_offset(fn, ir_val(fn->f, v)->def)
					    : cg_cur_scratch(fn));
			if (fence)
				cg_barrier(fn);
		}
	}
	cg_set_tile(fn, v, ly, r);
	return r;
}

LLVMValueRef
cg_scalar(CgFn *fn, Value v)
{
	LLVMValueRef s = fn->vals[v].v;

	return s ? s : LLVMGetUndef(cg_type(fn->cg, ir_type(fn->f, v)));
}

/* The thread part of the flat index of layout ly (entry block). */
static CoordCache *
coords(CgFn *fn, const Layout *ly)
{
	Cg *cg = fn->cg;
	LLVMBuilderRef B = fn->Bentry;
	CoordCache *c;
	LLVMValueRef flat = NULL;
	int i, d;

	for (c = fn->coords; c; c = c->next)
		if (c->ly == ly)
			return c;
	c = arena_alloc(fn->a, sizeof *c);
	c->ly = ly;
	/* runs of lane (or warp) bits that land on consecutive bits of the
	 * index move together: one mask and one shift per run, and no chain
	 * of single bits for instcombine to test as a bit permutation */
	for (i = 0; i < LY_LANES + ly->nwarp; i++) {
		uint32_t b = i < LY_LANES ? ly->lane[i] : ly->warp[i - LY_LANES];
		LLVMValueRef src = i < LY_LANES ? fn->lane : fn->warp;
		int bit = i < LY_LANES ? i : i - LY_LANES, end = LY_LANES + ly->nwarp;
		int to, k = 1;
		LLVMValueRef x;

		if (!b)
			continue;
		to = log2i(b);
		while (i + k < (i < LY_LANES ? LY_LANES : end) &&
		       (i + k < LY_LANES ? ly->lane[i + k]
					 : ly->warp[i + k - LY_LANES]) == b << k)
			k++;
		x = LLVMBuildAnd(B, src, cg_i32(cg, ((1 << k) - 1) << bit), "");
		if (to != bit)
			x = to > bit ? LLVMBuildShl(B, x, cg_i32(cg, to - bit), "")
				     : LLVMBuildLShr(B, x, cg_i32(cg, bit - to), "");
		flat = flat ? LLVMBuildOr(B, flat, x, "") : x;
		i += k - 1;
	}
	if (!flat)
		flat = cg_i32(cg, 0);
	c->flat = flat;
	for (d = 0; d < ly->rank; d++) {
		int sh = ly_dim_shift(ly, d);
		LLVMValueRef x = sh ? LLVMBuildLShr(B, flat, cg_i32(cg, sh), "")
				    : flat;

		c->dim[d] = LLVMBuildAnd(B, x,
					 cg_i32(cg, (int64_t)ly->shape[d] - 1), "");
	}
	c->next = fn->coords;
	fn->coords = c;
	return c;
}

LLVMValueRef
cg_thread_coord(CgFn *fn, const Layout *ly, int d)
{
	return coords(fn, ly)->dim[d];
}

LLVMValueRef
cg_thread_flat(CgFn *fn, const Layout *ly)
{
	return coords(fn, ly)->flat;
}

/* The check that the assumptions as of the parameters in deps hold. */
static LLVMValueRef
guard(CgFn *fn, uint64_t deps, const Assume *as)
{
	Cg *cg = fn->cg;
	LLVMBuilderRef B = fn->Bentry;
	LLVMValueRef ok = LLVMConstInt(cg->t_i1, 1, 0);
	int bytes = as->bytes ? (int)as->bytes : 16;
	GuardCache *g;
	uint32_t i;

	for (g = fn->guards; g; g = g->next)
		if (g->deps == deps && g->bytes == bytes)
			return g->ok;
	for (i = 0; i < 64 && i < fn->f->body->nargs; i++) {
		LLVMValueRef p = LLVMGetParam(fn->fn, i), c;
		uint64_t bit = 1ull << i;

		if (!(deps & bit))
			continue;
		if (as->align & bit) {
			p = LLVMBuildPtrToInt(B, p, cg->t_i64, "");
			p = LLVMBuildAnd(B, p, cg_i64(cg, bytes - 1), "");
			c = LLVMBuildICmp(B, LLVMIntEQ, p, cg_i64(cg, 0), "");
		} else if (as->eq1 & bit) {
			c = LLVMBuildICmp(B, LLVMIntEQ, p,
					  LLVMConstInt(LLVMTypeOf(p), 1, 0), "");
		} else if (as->divisor > 1) {
			p = LLVMBuildAnd(B, p, LLVMConstInt(LLVMTypeOf(p),
				(unsigned long long)as->divisor - 1, 0), "");
			c = LLVMBuildICmp(B, LLVMIntEQ, p,
					  LLVMConstInt(LLVMTypeOf(p), 0, 0), "");
		} else {
			continue;
		}
		ok = LLVMBuildAnd(B, ok, c, "");
	}
	g = arena_alloc(fn->a, sizeof *g);
	g->deps = deps;
	g->bytes = bytes;
	g->ok = ok;
	g->next = fn->guards;
	fn->guards = g;
	return ok;
}

LLVMValueRef
cg_guard(CgFn *fn, uint64_t deps)
{
	return guard(fn, deps, &fn->assume);
}

const Axis *
cg_axis_narrow(CgFn *fn, int bytes)
{
	int i = bytes == 8 ? 0 : bytes == 4 ? 1 : bytes == 2 ? 2 : 3;

	if (!fn->ax_narrow[i]) {
		Assume as = axis_at_bytes(&fn->assume, bytes);

		fn->ax_narrow[i] = axis_compute(fn->f, fn->a, &as);
	}
	return fn->ax_narrow[i];
}

const Axis *
cg_axis_eq1(CgFn *fn)
{
	if (!fn->ax_eq1) {
		Assume as;

		memset(&as, 0, sizeof as);
		as.eq1 = fn->assume.eq1;
		as.divisor = fn->assume.divisor;
		fn->ax_eq1 = axis_compute(fn->f, fn->a, &as);
	}
	return fn->ax_eq1;
}

LLVMValueRef
cg_guard_narrow(CgFn *fn, uint64_t deps, int bytes)
{
	Assume as = axis_at_bytes(&fn->assume, bytes);

	return guard(fn, deps, &as);
}

/* ---- the walk ----------------------------------------------------------- */

static bool
lower_op(CgFn *fn, Op *op)
{
	if (op->nres == 1 && cg_is_tile(fn, op->res[0]) &&
	    fn->vals[op->res[0]].remat)
		return true;  /* made on demand by its uses */
	if (op->kind == OP_SMEM_LOAD && !fn->vals[op->res[0]].regs_used)
		return true;  /* only dots read it, from the view */
	if (op->kind == OP_CONVERT_LAYOUT) {
		/* made where its result is first used (cg_conv_fence) */
		fn->vals[op->res[0]].conv_epoch = fn->smem_epoch;
		return true;
	}
	switch (op->kind) {
	case OP_CONST: case OP_RANGE: case OP_PROGRAM_ID: case OP_NUM_PROGRAMS:
	case OP_SPLAT: case OP_BROADCAST: case OP_EXPAND_DIMS: case OP_RESHAPE:
	case OP_TRANS: case OP_EXTRACT_SLICE:
		return cg_shape_op(fn, op);
	case OP_CVT: case OP_BITCAST:
		return cg_convert_op(fn, op);
	case OP_LOAD: case OP_STORE: case OP_ATOMIC: case OP_ATOMIC_CAS:
		return cg_memory_op(fn, op);
	case OP_REDUCE:
		return cg_reduce_op(fn, op);
	case OP_DOT:
		return cg_dot_op(fn, op);
	case OP_DOT_ASYNC: case OP_DOT_WAIT: case OP_FENCE_ASYNC:
		return cg_wgmma_op(fn, op);
	case OP_FOR: case OP_WHILE: case OP_IF: case OP_YIELD:
	case OP_CONDITION: case OP_RETURN: case OP_CALL: case OP_ASSERT:
		return cg_control_op(fn, op);
	case OP_TASKS:
		return cg_tasks_op(fn, op);
	case OP_TASK_REPLICA:
		fn->vals[op->res[0]].v = fn->task_ri ? fn->task_ri : cg_i32(fn->cg, 0);
		return true;
	case OP_SCHED_TILE:  /* for the simulator only */
		return true;
	case OP_CLUSTER_RANK:
		fn->vals[op->res[0]].v = cg_intr(fn->cg,
			"llvm.nvvm.read.ptx.sreg.cluster.ctarank", NULL, 0, NULL, 0);
		return true;
	case OP_CLUSTER_SYNC:
		/* every thread of every program of the cluster: arrive
		 * (release) and wait (acquire) */
		cg_intr(fn->cg, "llvm.nvvm.barrier.cluster.arrive", NULL, 0, NULL, 0);
		cg_intr(fn->cg, "llvm.nvvm.barrier.cluster.wait", NULL, 0, NULL, 0);
		return true;
	case OP_ENTRY_FAST:  /* a constant of each entry */
		fn->vals[op->res[0]].v = LLVMConstInt(fn->cg->t_i1,
						      fn->entry == CG_ENTRY_FAST, 0);
		return true;
	case OP_SMEM_ALLOC: case OP_SMEM_INDEX: case OP_SMEM_SLICE:
	case OP_SMEM_TRANS: case OP_SMEM_LOAD: case OP_SMEM_STORE:
	case OP_MBAR_ALLOC: case OP_MBAR_AT: case OP_MBAR_WAIT:
	case OP_MBAR_ARRIVE: case OP_SYNC_THREADS: case OP_SYNC_WARPS:
	case OP_CP_ASYNC:
	case OP_CP_ASYNC_COMMIT: case OP_CP_ASYNC_WAIT:
		return cg_shared_op(fn, op);
	case OP_MBAR_EXPECT: case OP_TMA_LOAD: case OP_TMA_STORE:
	case OP_TMA_STORE_WAIT: case OP_CLC_TRY_CANCEL: case OP_CLC_QUERY:
		return cg_tma_op(fn, op);
	default:
		if (op_has(op, F_ELEM) || op->kind == OP_CMP ||
		    op->kind == OP_SELECT || op->kind == OP_PTR_ADD ||
		    op->kind == OP_MISALIGN)
			return cg_elementwise(fn, op);
		cg_unsupported(fn->cg, op, NULL);
		return false;
	}
}

/* Touches op no shared memory and waits for nothing at its place?  (A
 * use of a convert_layout's result may make the conversion there: that
 * is fenced by itself, cg_conv_fence.) */
static bool
quiet(Op *op)
{
	if (op->nregions)
		return false;
	if (op->kind == OP_CONVERT_LAYOUT)
		return true;
	if (attr_has(&op->attrs, "scratch"))
		return false;
	switch (op->kind) {
	case OP_CONST: case OP_RANGE: case OP_PROGRAM_ID: case OP_NUM_PROGRAMS:
	case OP_ENTRY_FAST: case OP_SPLAT: case OP_BROADCAST:
	case OP_EXPAND_DIMS: case OP_RESHAPE: case OP_TRANS: case OP_CVT:
	case OP_EXTRACT_SLICE:
	case OP_BITCAST: case OP_LOAD: case OP_STORE: case OP_CMP:
	case OP_SELECT: case OP_PTR_ADD: case OP_MISALIGN:
		return true;
	default:
		return op_has(op, F_ELEM);
	}
}

/*
 * A convert_layout is made where its result is first used, which may be
 * past ops that insert-syncs saw after it: a sync_threads that was to
 * separate its scratch from another op's (two conversions through one
 * scratch, first used by one select, went write, barrier, read, write,
 * barrier, read: the second write raced with the first reads).  Made
 * later than at its place with anything but quiet ops between, it is
 * fenced: a barrier before its writes (here; true) and one after its
 * reads (the caller's), so it orders as if it were at its place.  A
 * conversion made counts as such an op: two made at one use (a store's
 * value and mask) may come in the other order than at their places,
 * where the barrier of the one insert-syncs saw second separated the
 * first one's reads from a later conversion's writes.
 */
bool
cg_conv_fence(CgFn *fn, Value v)
{
	bool late = fn->vals[v].conv_epoch != fn->smem_epoch;

	fn->smem_epoch++;  /* v's conversion is made next, here */
	if (late)
		cg_barrier(fn);
	return late;
}

/* Computes op only scalars (or addresses of barriers), touching no
 * memory: an arrive after such ops needs no new task barrier. */
static bool
scalar_only(CgFn *fn, Op *op)
{
	if (op->nregions || op->nres != 1 || cg_is_tile(fn, op->res[0]))
		return false;
	switch (op->kind) {
	case OP_MBAR_AT: case OP_CONST: case OP_CMP: case OP_SELECT:
	case OP_MISALIGN:
	case OP_PROGRAM_ID: case OP_NUM_PROGRAMS: case OP_TASK_REPLICA:
	case OP_CLUSTER_RANK:
		return true;
	default:
		return op_has(op, F_ELEM);
	}
}

static void
lower_one(CgFn *fn, Op *op)
{
	cg_debug_loc(fn, op->loc);
	cg_set_cur_op(fn, op);
	if (op->kind == OP_SYNC_THREADS && op->next &&
	    op->next->kind == OP_REDUCE && attr_has(&op->next->attrs, "scratch")) {
		fn->sync_pending = true;
		return;
	}
	if (op->kind != OP_MBAR_ARRIVE && !scalar_only(fn, op))
		fn->arrived = false;
	if (!lower_op(fn, op))
		fn->failed = true;
	if (op->nregions)
		fn->arrived = false;
	if (!quiet(op))
		fn->smem_epoch++;
}

/* The op a load schedule.c moved stood before (resolved there, past
 * other moved loads); NULL when op was not moved. */
static Op *
hoist_anchor(CgFn *fn, Op *op)
{
	uint32_t i;

	for (i = 0; i < fn->hoists.n; i++)
		if (fn->hoists.v[i].ld == op)
			return fn->hoists.v[i].next;
	return NULL;
}

/* Needs op no lowering at its place, or only a uniform scalar? */
static bool
passive(CgFn *fn, Op *op)
{
	uint32_t i;

	if (op->nres != 1 || op->nregions)
		return false;
	if (cg_is_tile(fn, op->res[0]))
		return fn->vals[op->res[0]].remat;
	if (!op_has(op, F_PURE))
		return false;
	for (i = 0; i < op->nopnds; i++)
		if (cg_is_tile(fn, op->opnds[i]))
			return false;
	return true;
}

/* Does op read the result of one of lds[0..n)? */
static bool
reads_any(CgFn *fn, Op *op, Op **lds, uint32_t n)
{
	uint32_t i, k;

	for (i = 0; i < op->nopnds; i++)
		for (k = 0; k < n; k++)
			if (ir_val(fn->f, op->opnds[i])->def == lds[k])
				return true;
	return false;
}

/* The loads from op on that schedule.c (or the program) placed side by
 * side, with only passive ops between them that read none of them, are
 * lowered as one group behind one check (cg_load_group): the passive ops
 * first, then the loads.  Returns the op after the run, or op itself
 * when there is none. */
static Op *
load_run(CgFn *fn, Op *op, Op *to)
{
	Op **lds, *o, *last = op;
	uint32_t n = 0, cap = 0;

	for (o = op; o != to && (o->kind == OP_LOAD || passive(fn, o));
	     o = o->next)
		cap += o->kind == OP_LOAD;
	if (cap < 2)
		return op;
	lds = arena_alloc(fn->a, cap * sizeof *lds);
	for (o = op; o != to && (o->kind == OP_LOAD || passive(fn, o)) &&
		     !reads_any(fn, o, lds, n); o = o->next)
		if (o->kind == OP_LOAD)
			lds[n++] = last = o;
	if (n < 2)
		return op;
	for (o = op; o != last; o = o->next)
		if (o->kind != OP_LOAD)
			lower_one(fn, o);
	if (!cg_load_group(fn, lds, n))
		for (o = op; o != last->next; o = o->next)
			if (o->kind == OP_LOAD)
				lower_one(fn, o);
	return last->next;
}

/* Lowers the ops of b from `from` on (NULL: from the first).  In a
 * generic copy of a versioned loop the moved loads are lowered at their
 * first place: the early start only pays on the fast path. */
static void
lower_from(CgFn *fn, Block *b, Op *from, Op *to, bool defer)
{
	Op *op, *next;
	uint32_t i;

	defer = defer && fn->mode == CG_GENERIC && fn->hoists.n;
	for (op = from ? from : b->first; op != to && !fn->failed; op = next) {
		next = op->next;
		if (defer) {
			for (i = 0; i < fn->hoists.n; i++)
				if (fn->hoists.v[i].next == op)
					lower_one(fn, fn->hoists.v[i].ld);
			if (hoist_anchor(fn, op))
				continue;
		} else if (fn->mode == CG_BOTH && op->kind == OP_LOAD) {
			Op *after = load_run(fn, op, to);

			if (after != op) {
				next = after;
				continue;
			}
		}
		lower_one(fn, op);
	}
}

void
cg_lower_block(CgFn *fn, Block *b)
{
	lower_from(fn, b, NULL, NULL, true);
}

/* ---- the kernel function ----------------------------------------------- */

static LLVMTypeRef
param_type(Cg *cg, Type *t)
{
	if (t->kind == TY_TMA)
		return cg->t_ptr;  /* byval [128 x i8], grid constant */
	return cg_type(cg, t);
}

static void
add_str_attr(Cg *cg, LLVMValueRef fn, const char *k, const char *v)
{
	LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex,
				LLVMCreateStringAttribute(cg->C, k,
							  (unsigned)strlen(k), v,
							  (unsigned)strlen(v)));
}

static void
tma_param(Cg *cg, LLVMValueRef fn, unsigned idx)
{
	LLVMTypeRef box = LLVMArrayType2(cg->t_i8, 128);
	unsigned byval = LLVMGetEnumAttributeKindForName("byval", 5);
	unsigned align = LLVMGetEnumAttributeKindForName("align", 5);

	LLVMAddAttributeAtIndex(fn, idx + 1,
				LLVMCreateTypeAttribute(cg->C, byval, box));
	LLVMAddAttributeAtIndex(fn, idx + 1,
				LLVMCreateEnumAttribute(cg->C, align, 64));
	LLVMAddAttributeAtIndex(fn, idx + 1,
				LLVMCreateStringAttribute(cg->C,
							  "nvvm.grid_constant",
							  18, "", 0));
}

static bool
has_dot(Block *b)
{
	Op *op;
	uint32_t i;

	for (op = b->first; op; op = op->next) {
		if (op->kind == OP_DOT || op->kind == OP_DOT_ASYNC)
			return true;
		for (i = 0; i < op->nregions; i++)
			if (has_dot(op->regions[i]))
				return true;
	}
	return false;
}

static void
tile_max(Op *op, void *ud)
{
	int64_t *m = ud;
	uint32_t i;

	for (i = 0; i < op->nres; i++)
		*m = MAX(*m, ty_numel(op->parent->fn->vals.v[op->res[i]].ty));
}

/* The most elements any tile of f has. */
static int64_t
max_tile(Func *f)
{
	int64_t m = 1;

	ir_walk(f, tile_max, &m);
	return m;
}

/* Registers a kernel's values need, estimated from its tiles: elementwise
 * chains and reductions stream through a tile element by element, so
 * straight-line code needs about its largest tile computed from memory;
 * a loop also holds the tiles it carries into its next iteration (a
 * persistent row loop's prefetched row beside the row it normalizes).
 * Pointers, masks and index arithmetic are rematerialized, not held. */
typedef struct Need {
	Func *f;
	int nthreads;
	bool *data;     /* per value: computed from memory */
	int64_t peak;
} Need;

/* 32-bit registers per thread of value v, 0 for what is not held. */
static int64_t
need_words(const Need *n, Value v)
{
	Type *t = ir_type(n->f, v), *e;
	int64_t bits;

	if (!t || !n->data[v])
		return 0;
	e = ty_elem(t);
	if (e->kind == TY_PTR || e->kind == TY_I1)
		return 0;
	bits = MAX(8, ty_bits(e));
	if (t->kind != TY_TILE)
		return 1;
	if (t->layout)
		bits *= (int64_t)ly_nregs(t->layout) >>
			__builtin_popcount(ly_dup_mask(t->layout));
	else
		bits = bits * ty_numel(t) / n->nthreads;
	return MAX(1, (bits + 31) / 32);
}

static void
need_block(Need *n, Block *b, int64_t carried)
{
	Op *o, *yield = b->nargs ? b->last : NULL;
	uint32_t i, j;

	for (i = 0; i < b->nargs; i++) {
		n->data[b->args[i]] = true;
		carried += need_words(n, b->args[i]);
	}
	for (o = b->first; o; o = o->next) {
		bool data = !op_has(o, F_PURE);
		int64_t w = 0;

		for (i = 0; i < o->nopnds; i++)
			data |= n->data[o->opnds[i]];
		for (i = 0; i < o->nres; i++) {
			n->data[o->res[i]] = data;
			w += need_words(n, o->res[i]);
		}
		n->peak = MAX(n->peak, carried + w);
		for (i = 0; i < o->nregions; i++)
			need_block(n, o->regions[i], carried);
		/* a value the loop carries on lives to the end of the body */
		for (i = 0; yield && o != yield && i < o->nres; i++)
			for (j = 0; j < yield->nopnds; j++)
				if (yield->opnds[j] == o->res[i]) {
					carried += need_words(n, o->res[i]);
					break;
				}
	}
}

static int64_t
need_regs(Func *f, int nthreads, Arena *a)
{
	Need n = { f, nthreads, NULL, 0 };

	n.data = arena_alloc(a, f->vals.n * sizeof *n.data);  /* zeroed */
	need_block(&n, f->body, 0);
	return n.peak + 16;  /* addresses, indices, loop counters */
}

/* Memory-bound kernels (no dot, small tiles per thread) live on latency
 * hiding: ask ptxas for registers that let 1024 threads per SM be
 * resident (measured on the H200: 1.1-1.25x for the softmax and layernorm
 * examples), or half as many, ..., where the values live at once would
 * not fit those registers (a persistent row loop holding the next row
 * beside this one: spills cost more than the occupancy gains).  Not
 * where tasks have register budgets: their setmaxnreg takes the
 * registers the kernel starts with (maxnreg), which a hint of more
 * programs per SM would cap below the budgets (ptxas refuses that).
 * Sets the register budget schedule.c plans with. */
static void
occupancy(CgFn *fn)
{
	Func *f = fn->f;

	fn->min_ctas = 0;
	if (!has_dot(f->body) && fn->nthreads < 1024 &&
	    !attr_has(&f->attrs, "maxnreg") &&
	    max_tile(f) / fn->nthreads <= 32) {
		int64_t need = need_regs(f, fn->nthreads, fn->a);

		fn->min_ctas = 1024 / fn->nthreads;
		while (fn->min_ctas > 1 &&
		       need > 65536 / (fn->nthreads * fn->min_ctas))
			fn->min_ctas /= 2;
		if (fn->min_ctas == 1)
			fn->min_ctas = 0;
	}
	fn->reg_budget = MIN(255, 65536 / (fn->nthreads * MAX(1, fn->min_ctas)));
}

static LLVMValueRef
make_function(CgFn *fn)
{
	Cg *cg = fn->cg;
	Func *f = fn->f;
	LLVMTypeRef *pt = arena_alloc(fn->a, (f->body->nargs + 1) * sizeof *pt);
	LLVMValueRef F;
	const Attr *cl;
	char buf[64];
	uint32_t i;

	for (i = 0; i < f->body->nargs; i++)
		pt[i] = param_type(cg, ir_type(f, f->body->args[i]));
	F = LLVMAddFunction(cg->M, fn->name,
			    LLVMFunctionType(cg->t_void, pt, f->body->nargs, 0));
	LLVMSetFunctionCallConv(F, LLVMPTXKernelCallConv);
	for (i = 0; i < f->body->nargs; i++) {
		ValInfo *vi = ir_val(f, f->body->args[i]);

		if (vi->name)
			LLVMSetValueName2(LLVMGetParam(F, i), vi->name,
					  strlen(vi->name));
		if (vi->ty->kind == TY_TMA)
			tma_param(cg, F, i);
	}
	snprintf(buf, sizeof buf, "%d", fn->nthreads);
	add_str_attr(cg, F, "nvvm.reqntid", buf);
	if (attr_has(&f->attrs, "maxnreg")) {
		/* the registers each thread starts with: setmaxnreg in the
		 * tasks needs them known */
		snprintf(buf, sizeof buf, "%lld",
			 (long long)attr_int(&f->attrs, "maxnreg", 0));
		add_str_attr(cg, F, "nvvm.maxnreg", buf);
	}
	if (fn->min_ctas) {
		snprintf(buf, sizeof buf, "%d", fn->min_ctas);
		add_str_attr(cg, F, "nvvm.minctasm", buf);
	}
	cl = attr_find(&f->attrs, "cluster");
	if (cl && cl->kind == ATTR_INTS && cl->ints.n == 3 &&
	    cl->ints.v[0] * cl->ints.v[1] * cl->ints.v[2] > 1) {
		snprintf(buf, sizeof buf, "%lld,%lld,%lld",
			 (long long)cl->ints.v[0], (long long)cl->ints.v[1],
			 (long long)cl->ints.v[2]);
		add_str_attr(cg, F, "nvvm.cluster_dim", buf);
	}
	return F;
}

static LLVMValueRef
sreg(Cg *cg, const char *name)
{
	return cg_intr(cg, name, NULL, 0, NULL, 0);
}

static void
make_entry(CgFn *fn)
{
	Cg *cg = fn->cg;
	LLVMBasicBlockRef entry = cg_new_block(fn, "entry");
	LLVMBasicBlockRef body = cg_new_block(fn, "body");
	LLVMValueRef br;
	uint32_t i;

	LLVMPositionBuilderAtEnd(cg->B, entry);
	fn->tid = sreg(cg, "llvm.nvvm.read.ptx.sreg.tid.x");
	fn->lane = LLVMBuildAnd(cg->B, fn->tid, cg_i32(cg, 31), "lane");
	fn->warp = LLVMBuildLShr(cg->B, fn->tid, cg_i32(cg, 5), "warp");
	br = LLVMBuildBr(cg->B, body);
	fn->Bentry = cg_entry_builder(cg, 0);
	LLVMPositionBuilderBefore(fn->Bentry, br);
	fn->Balloca = fn->Bentry;
	LLVMPositionBuilderAtEnd(cg->B, body);
	for (i = 0; i < fn->f->body->nargs; i++) {
		LLVMValueRef p = LLVMGetParam(fn->fn, i);

		/* a fast entry runs only with these equal to 1 (a unit
		 * stride): the constant folds their multiplications away */
		if (i < 64 && (fn->ver_deps & fn->assume.eq1 & (1ull << i)))
			p = LLVMConstInt(LLVMTypeOf(p), 1, 0);
		fn->vals[fn->f->body->args[i]].v = p;
	}
}

/* Ops a versioned tail may hold: per-thread work, cheap to emit twice. */
static bool
tail_op(Op *op)
{
	if (op->nregions)
		return false;
	switch (op->kind) {
	case OP_LOAD: case OP_STORE: case OP_CVT: case OP_BITCAST:
	case OP_CONST: case OP_RANGE: case OP_SPLAT: case OP_BROADCAST:
	case OP_EXPAND_DIMS: case OP_RESHAPE: case OP_TRANS: case OP_PTR_ADD:
	case OP_CMP: case OP_SELECT: case OP_PROGRAM_ID: case OP_NUM_PROGRAMS:
	case OP_MISALIGN: case OP_RETURN:
		return true;
	default:
		return op_has(op, F_ELEM);
	}
}

/* Does op compute (not access memory) with a tile that the fast-path
 * assumptions make constant over longer runs (a mask `c < cols` with
 * cols % 16 == 0 is one predicate per vector)?  Such math is cheaper in
 * a fast copy: a layer norm's where(m, v - mean, 0) took a compare and
 * an index per element when emitted once, a fifth of the speed of a
 * 32768-wide row (one program per SM, its statistics latency-bound). */
static bool
sensitive(CgFn *fn, Op *op)
{
	uint32_t i;
	int d;

	if (op->kind == OP_LOAD || op->kind == OP_STORE || op->kind == OP_ATOMIC ||
	    op->kind == OP_ATOMIC_CAS || op->kind == OP_CP_ASYNC || !op->nres ||
	    !cg_is_tile(fn, op->res[0]) || fn->vals[op->res[0]].remat)
		return false;
	for (i = 0; i < op->nopnds; i++) {
		Value v = op->opnds[i];

		if (!cg_is_tile(fn, v) || !fn->ax[v].deps)
			continue;
		for (d = 0; d < ir_type(fn->f, v)->rank; d++)
			if (fn->ax[v].cnst[d] > fn->ax_gen[v].cnst[d])
				return true;
	}
	return false;
}

/* The first op of a kernel's tail (loads, per-element math and stores
 * after its last reduction) when the tail starts with a load; NULL
 * otherwise or when the kernel has dots.  A generic entry lowers it as
 * one loop over the thread's elements when it can (elem_tail). */
static Op *
tail_start(CgFn *fn)
{
	Op *from = NULL, *op;

	if (has_dot(fn->f->body))
		return NULL;
	for (op = fn->f->body->last; op && tail_op(op); op = op->prev)
		if (op->kind == OP_LOAD)
			from = op;
	return from;
}

/*
 * Global accesses whose fast path assumes more than is proven (16-byte
 * alignment, strides and sizes that are multiples of the vector) check
 * the assumption at run time.  Each access does so on its own, its
 * generic path a loop over the thread's elements (memory.c), joined to
 * the fast one before its uses: the computation between the accesses is
 * emitted once.  Part of the kernel is instead emitted twice behind one
 * check of all its assumptions: from its first computation that the
 * assumptions make cheaper (sensitive), else from the first load after
 * its last reduction (or other work across threads) -- a tail of loads,
 * per-element math and stores, whose fast copy is straight-line code in
 * which ptxas can interleave the loads with the math and the stores (a
 * layer norm's w and b: at 32 elements per thread, joining each load
 * before its use held both rows at once and spilled).  Kernels with dots
 * version their loops (control.c) and accesses only.  versioned_part
 * returns the first op of the part emitted twice (NULL: none) and the
 * assumptions its check covers.
 */
static Op *
versioned_part(CgFn *fn, uint64_t *deps)
{
	Block *body = fn->f->body;
	Op *from, *op;
	uint32_t k;

	*deps = 0;
	if (has_dot(body))
		return NULL;
	from = tail_start(fn);
	/* only where one program fills an SM (its latency is the kernel's):
	 * with several, the per-element masks cost little (a 4096-wide layer
	 * norm at 8 programs per SM ran as fast without) and the second copy
	 * is ptxas's time */
	for (op = body->first; !fn->min_ctas && op && op != from; op = op->next)
		if (sensitive(fn, op)) {
			from = op;
			break;
		}
	for (op = from; op; op = op->next) {
		*deps |= cg_fast_deps(fn, op);
		for (k = 0; sensitive(fn, op) && k < op->nopnds; k++)
			if (cg_is_tile(fn, op->opnds[k]))
				*deps |= fn->ax[op->opnds[k]].deps;
	}
	return *deps ? from : NULL;
}

/*
 * The generic copy of a tail as one loop over the thread's elements: each
 * iteration evaluates the tail's loads, math and stores for one element at
 * its coordinates (cg_elem_at for rematerialized values, a local array
 * for the tiles computed before the tail), so the copy that rarely runs
 * is a few dozen instructions instead of the fast copy's size again (a
 * 4096-wide layer norm's w, b and y at 32 elements per thread: ptxas -13%, its spills gone).
 * Only for tails of loads, element-wise math and stores over one layout,
 * loads before stores.
 */
typedef struct ElemTail {
	CgFn *fn;
	Op *from;
	const Layout *ly;
	LLVMValueRef *c, *val, *arr;  /* coordinates; per value id */
	uint8_t *in;                  /* per value id: made by the tail */
} ElemTail;

static bool
shape_kind(OpKind k)
{
	return k == OP_BROADCAST || k == OP_EXPAND_DIMS || k == OP_RESHAPE ||
	       k == OP_TRANS;
}

static bool
same_shape(const Type *a, const Type *b)
{
	return memcmp(a->shape, b->shape, sizeof a->shape) == 0;
}

static bool
elem_tail_ok(CgFn *fn, Op *from, const Layout **ly)
{
	Type *shape = NULL;
	bool stored = false;
	uint32_t i;
	Op *op;

	*ly = NULL;
	for (op = from; op; op = op->next) {
		Type *t;

		if (op->kind == OP_RETURN)
			continue;
		if (op->kind == OP_LOAD || op->kind == OP_STORE) {
			const Layout *l;

			if (!cg_is_tile(fn, op->opnds[0]) ||
			    (op->kind == OP_LOAD && stored))
				return false;
			l = cg_operand_layout(fn, op, 0);
			if (*ly && l != *ly)
				return false;
			*ly = l;
			stored |= op->kind == OP_STORE;
		}
		if (op->kind == OP_STORE)
			continue;
		if (op->nres != 1)
			return false;
		if (!cg_is_tile(fn, op->res[0])) {
			/* scalar math is lowered before the loop */
			if (op->kind == OP_LOAD)
				return false;
			for (i = 0; i < op->nopnds; i++)
				if (cg_is_tile(fn, op->opnds[i]))
					return false;
			continue;
		}
		t = ir_type(fn->f, op->res[0]);
		if (shape && !same_shape(t, shape))
			return false;
		shape = t;
		if (fn->vals[op->res[0]].remat)
			continue;
		if (shape_kind(op->kind) || op->nopnds > 3)
			return false;
		for (i = 0; i < op->nopnds; i++)
			if (cg_is_tile(fn, op->opnds[i]) &&
			    !same_shape(ir_type(fn->f, op->opnds[i]), t))
				return false;
	}
	return stored && *ly && ly_nregs(*ly) > 1;
}

static LLVMValueRef
elem_eval(ElemTail *e, Value v)
{
	CgFn *fn = e->fn;
	Op *op = ir_val(fn->f, v)->def;
	LLVMValueRef x[3], m, o;
	uint32_t i;

	if (!cg_is_tile(fn, v))
		return cg_scalar(fn, v);
	if (e->val[v])
		return e->val[v];
	if (fn->vals[v].remat) {
		x[0] = cg_elem_at(fn, v, e->c);
	} else if (!e->in[v]) {
		x[0] = LLVMBuildLoad2(fn->cg->B, cg_type(fn->cg,
				      ty_elem(ir_type(fn->f, v))),
				      e->arr[v], "");
	} else if (op->kind == OP_LOAD) {
		m = op->nopnds > 1 ? elem_eval(e, op->opnds[1]) : NULL;
		o = op->nopnds > 2 ? elem_eval(e, op->opnds[2])
				   : LLVMConstNull(cg_type(fn->cg,
					ty_elem(ir_type(fn->f, v))));
		x[1] = elem_eval(e, op->opnds[0]);
		cg_set_cur_op(fn, op);
		x[0] = cg_load_elem(fn, op, x[1], m, o);
	} else if (op->kind == OP_CVT || op->kind == OP_BITCAST) {
		x[1] = elem_eval(e, op->opnds[0]);
		cg_set_cur_op(fn, op);
		x[0] = cg_convert_one(fn, op, x[1]);
	} else {
		for (i = 0; i < op->nopnds; i++)
			x[i] = elem_eval(e, op->opnds[i]);
		cg_set_cur_op(fn, op);
		x[0] = cg_elem_one(fn, op, x);
	}
	return e->val[v] = x[0];
}

/* The tiles made before the tail that it reads, not rematerialized: into
 * local arrays, one slot per register of the loop's layout; e->arr[v]
 * becomes the slot of the loop's element j. */
static void
elem_stash(ElemTail *e, LLVMValueRef **arrs)
{
	CgFn *fn = e->fn;
	LLVMBuilderRef B = fn->cg->B;
	uint32_t i, k, n = (uint32_t)ly_nregs(e->ly);
	Op *op;

	for (op = e->from; op; op = op->next) {
		for (i = 0; i < op->nopnds; i++) {
			Value v = op->opnds[i];
			LLVMTypeRef t;
			LLVMValueRef *r;

			if (!cg_is_tile(fn, v) || e->in[v] || fn->vals[v].remat ||
			    arrs[v])
				continue;
			t = cg_type(fn->cg, ty_elem(ir_type(fn->f, v)));
			arrs[v] = arena_alloc(fn->a, sizeof *arrs[v]);
			*arrs[v] = LLVMBuildAlloca(fn->Balloca,
						   LLVMArrayType2(t, n), "tail");
			LLVMSetAlignment(*arrs[v], 16);
			r = cg_tile(fn, v, e->ly);
			for (k = 0; k < n; k++) {
				LLVMValueRef ix = cg_i32(fn->cg, k);

				LLVMBuildStore(B, r[k], LLVMBuildGEP2(B, t,
					       *arrs[v], &ix, 1, ""));
			}
		}
	}
}

static bool
elem_tail(CgFn *fn, Op *from)
{
	LLVMBuilderRef B = fn->cg->B;
	uint32_t nv = fn->f->vals.n, i, n;
	LLVMValueRef c[TY_MAX_RANK], first, j, m, **arrs;
	ElemTail e = { fn, from, NULL, c, NULL, NULL, NULL };
	CgLoop loop;
	Op *op;

	if (!elem_tail_ok(fn, from, &e.ly))
		return false;
	n = (uint32_t)ly_nregs(e.ly);
	e.in = arena_alloc(fn->a, nv);
	memset(e.in, 0, nv);
	for (op = from; op; op = op->next)
		for (i = 0; i < op->nres; i++)
			e.in[op->res[i]] = 1;
	arrs = arena_alloc(fn->a, nv * sizeof *arrs);
	memset(arrs, 0, nv * sizeof *arrs);
	for (op = from; op && !fn->failed; op = op->next)
		if (op->kind != OP_STORE && op->kind != OP_RETURN &&
		    !cg_is_tile(fn, op->res[0]))
			lower_one(fn, op);
	elem_stash(&e, arrs);
	first = cg_first_copy(fn, e.ly);
	e.val = arena_alloc(fn->a, nv * sizeof *e.val);
	e.arr = arena_alloc(fn->a, nv * sizeof *e.arr);
	memset(e.val, 0, nv * sizeof *e.val);
	memset(e.arr, 0, nv * sizeof *e.arr);
	j = cg_loop_begin(fn, &loop, "tail");
	cg_reg_coords(fn, e.ly, j, c);
	for (i = 0; i < nv; i++)
		if (arrs[i])
			e.arr[i] = LLVMBuildGEP2(B, LLVMGetAllocatedType(*arrs[i]),
						 *arrs[i], (LLVMValueRef[]){
						 cg_i32(fn->cg, 0), j }, 2, "");
	for (op = from; op && !fn->failed; op = op->next) {
		if (op->kind != OP_STORE)
			continue;
		cg_debug_loc(fn, op->loc);
		cg_set_cur_op(fn, op);
		m = op->nopnds > 2 ? elem_eval(&e, op->opnds[2]) : NULL;
		if (first)
			m = m ? LLVMBuildAnd(B, m, first, "") : first;
		cg_store_elem(fn, op, elem_eval(&e, op->opnds[0]),
			      elem_eval(&e, op->opnds[1]), m);
	}
	cg_loop_end(fn, &loop, n);
	for (op = from; op; op = op->next)
		if (op->kind == OP_RETURN)
			lower_one(fn, op);
	return true;
}

/* Do the fast facts say more of a value than the generic ones? */
static bool
facts_differ(const Axis *f, const Axis *g)
{
	int d;

	for (d = 0; d < TY_MAX_RANK; d++)
		if (f->contig[d] != g->contig[d] || f->cnst[d] != g->cnst[d])
			return true;
	return f->div != g->div || f->has_known != g->has_known ||
	       (f->has_known && f->known != g->known);
}

/* Does v hold, in this thread's registers, the runs the fast facts say
 * are constant (share_constant, mask_uniform)?  NULL where v cannot be
 * checked here. */
static LLVMValueRef
runs_hold(CgFn *fn, Value v)
{
	LLVMBuilderRef B = fn->cg->B;
	const Layout *ly = ir_type(fn->f, v)->layout;
	Type *et = ty_elem(ir_type(fn->f, v));
	uint32_t cmask, i, n;
	LLVMValueRef *r, u = LLVMConstInt(fn->cg->t_i1, 1, 0);

	if (!ly || !ty_is_int(et))
		return NULL;
	cmask = const_runs(&fn->ax[v], ly);
	r = cg_tile(fn, v, ly);
	n = (uint32_t)ly_nregs(ly);
	for (i = 0; i < n; i++)
		if (i & cmask)
			u = LLVMBuildAnd(B, u, LLVMBuildICmp(B, LLVMIntEQ, r[i],
					 r[i & ~cmask], ""), "");
	return u;
}

/*
 * The check before a versioned tail: its assumptions hold.  Where some
 * of them (md) only make values constant over runs of elements -- the
 * bound of a mask, vadd's n -- each thread may instead check that its
 * own registers of those values are constant over the runs: in a tail
 * (per-element work, nothing across threads) a thread's fast copy is
 * right when its own values are, so every thread but those at the edge
 * of the last program takes the fast copy at any n.  Values of the tail
 * itself that depend on md, pointers that do, and parameters assumed
 * equal to 1 keep the whole check.
 */
static LLVMValueRef
version_cond(CgFn *fn, Op *from, uint64_t deps)
{
	LLVMBuilderRef B = fn->cg->B;
	uint64_t pd = fn->assume.eq1, md;
	LLVMValueRef u = NULL, c;
	uint32_t i, k;
	Value ptr;
	Op *op;

	if (from != tail_start(fn))
		return cg_guard(fn, deps);
	for (op = from; op; op = op->next) {
		if ((ptr = ir_access_ptr(op)) && cg_is_tile(fn, ptr))
			pd |= fn->ax[ptr].deps;
		for (k = 0; sensitive(fn, op) && k < op->nopnds; k++)
			if (cg_is_tile(fn, op->opnds[k]))
				pd |= fn->ax[op->opnds[k]].deps;
	}
	if (!(md = deps & ~pd))
		return cg_guard(fn, deps);
	for (op = from; op; op = op->next)
		for (i = 0; i < op->nres; i++)
			if (cg_is_tile(fn, op->res[i]) &&
			    (fn->ax[op->res[i]].deps & md) &&
			    facts_differ(&fn->ax[op->res[i]], &fn->ax_gen[op->res[i]]))
				return cg_guard(fn, deps);
	for (op = from; op; op = op->next)
		for (k = 0; k < op->nopnds; k++) {
			Value v = op->opnds[k];

			if (!cg_is_tile(fn, v) || !(fn->ax[v].deps & md) ||
			    !facts_differ(&fn->ax[v], &fn->ax_gen[v]))
				continue;
			if (!(c = runs_hold(fn, v)))
				return cg_guard(fn, deps);
			u = u ? LLVMBuildAnd(B, u, c, "") : c;
		}
	if (!u)
		return deps & ~md ? cg_guard(fn, deps & ~md)
				  : LLVMConstInt(fn->cg->t_i1, 1, 0);
	c = LLVMBuildOr(B, cg_guard(fn, md), u, "");
	return deps & ~md ? LLVMBuildAnd(B, cg_guard(fn, deps & ~md), c, "") : c;
}

static void
lower_body(CgFn *fn, int entry)
{
	LLVMBuilderRef B = fn->cg->B;
	Block *body = fn->f->body;
	LLVMBasicBlockRef copy[2];
	uint64_t deps;
	Op *tail;
	int i;

	if (entry == CG_ENTRY_FAST) {  /* ver_deps: what the launch checked */
		fn->mode = CG_FAST;
		lower_from(fn, body, NULL, NULL, false);
		return;
	}
	if (entry == CG_ENTRY_GENERIC && has_dot(body)) {
		fn->mode = CG_GENERIC;
		fn->ver_deps = 0;
		tail = tail_start(fn);
		lower_from(fn, body, NULL, tail, true);
		if (tail && !fn->failed &&
		    (fn->cg->no_elem_tail || !elem_tail(fn, tail)))
			lower_from(fn, body, tail, NULL, true);
		return;
	}
	/* The generic entry of a kernel without dots runs the launches whose
	 * bounds are not multiples of a vector (odd widths) or whose rows are
	 * not aligned.  Its checks cover the pointers alone (access_deps), so
	 * that aligned rows of any width keep their vectors, each checked
	 * against the mask (load_group); the rest takes realigned vectors,
	 * not the loop over elements (a layer norm's tail so at 4095 columns:
	 * 1.03 against 0.57 TB/s, H100). */
	tail = versioned_part(fn, &deps);
	lower_from(fn, body, NULL, tail, true);
	if (!deps)
		return;
	copy[0] = cg_new_block(fn, "fast");
	copy[1] = cg_new_block(fn, "generic");
	LLVMBuildCondBr(B, version_cond(fn, tail, deps), copy[0], copy[1]);
	for (i = 0; i < 2 && !fn->failed; i++) {
		LLVMPositionBuilderAtEnd(B, copy[i]);
		fn->mode = i ? CG_GENERIC : CG_FAST;
		fn->ver_deps = i ? 0 : deps;
		cg_scope_push(fn);
		if (!i || fn->cg->no_elem_tail || entry == CG_ENTRY_GENERIC ||
		    !elem_tail(fn, tail))
			lower_from(fn, body, tail, NULL, false);
		cg_scope_pop(fn);
	}
	fn->mode = CG_BOTH;
	fn->ver_deps = 0;
}

/* Every op codegen cannot lower for this target, reported at its line. */
static bool
check_supported(CgFn *fn)
{
	Cg *cg = fn->cg;
	const Attr *cl = attr_find(&fn->f->attrs, "cluster");
	bool ok = true;

	if (fn->nthreads < 32 || fn->nthreads > 1024) {
		cg_error(cg, fn->f->loc, "kernel '%s' has %d warps; 1 to 32 "
			 "are supported", fn->f->name, fn->nwarps);
		ok = false;
	}
	if (cl && cl->kind == ATTR_INTS && cl->ints.n == 3 &&
	    cl->ints.v[0] * cl->ints.v[1] * cl->ints.v[2] > 1 &&
	    !target_has(cg->t, TF_CLUSTER)) {
		cg_error(cg, fn->f->loc, "'cluster' is not supported for %s",
			 cg->t->name);
		ok = false;
	}
	ok = target_check_params(fn->f, cg->d, cg->t) && ok;
	return cg_check_ops(fn, fn->f->body) && ok;
}

/*
 * Specialized entries.  A kernel the specialize-entries pass gave a fast
 * entry (its `fast.*` attributes: what NAME$fast assumes) is lowered
 * twice: NAME assumes nothing (the generic paths alone: element loops,
 * proven vector widths), NAME$fast assumes all of it and checks none; the
 * launch checks the assumptions once, on the host, and picks the entry.
 * Each entry is smaller than one that checks its accesses one by one, and
 * the two are lowered, optimized and assembled in parallel (llvm.c).
 * What the fast entry computes with other facts of the assumptions is
 * fast only where they are among these (cg_axis).  A kernel without one
 * keeps one entry whose accesses check for themselves (CG_ENTRY_ONE).
 */

const char *
cg_fast_name(Cg *cg, const char *kernel)
{
	size_t n = strlen(kernel);
	char *s = arena_alloc(&cg->arena, n + 6);

	memcpy(s, kernel, n);
	memcpy(s + n, "$fast", 6);
	return s;
}

static void
setup(CgFn *fn, Cg *cg, Func *f, Arena *a)
{
	memset(fn, 0, sizeof *fn);
	fn->cg = cg;
	fn->f = f;
	fn->a = a;
	fn->name = f->name;
	fn->nwarps = (int)attr_int(&f->attrs, "warps", 4);
	fn->nthreads = fn->nwarps * 32;
	fn->task_bar = -1;
	occupancy(fn);
	fn->tma_stores = cg_tma_stores(f);
}

/* Axis analysis (proven, then under the assumptions it picks) and home
 * layouts. */
static void
analyse(CgFn *fn)
{
	Func *f = fn->f;

	fn->vals = arena_alloc(fn->a, f->vals.n * sizeof *fn->vals);
	memset(fn->vals, 0, f->vals.n * sizeof *fn->vals);
	memset(&fn->assume, 0, sizeof fn->assume);
	fn->ax_gen = axis_compute(f, fn->a, &fn->assume);
	axis_pick_assumptions(f, fn->ax_gen, &fn->assume);
	fn->ax = axis_compute(f, fn->a, &fn->assume);
	cg_assign_layouts(fn);
}

bool
cg_prepare_kernel(Cg *cg, Func *f, CgPrep *p)
{
	Arena a;
	CgFn fn;

	memset(p, 0, sizeof *p);
	p->f = f;
	arena_init(&a, NULL, NULL, NULL);
	setup(&fn, cg, f, &a);
	if (!check_supported(&fn))
		goto done;
	if (cg->o->olevel > 0)
		cg_schedule(&fn);
	analyse(&fn);
	if (!cg_smem_plan(&fn))
		goto done;
	/* the fast entry specialize-entries recorded */
	p->fast = (uint64_t)attr_int(&f->attrs, "fast.align", 0) |
		  (uint64_t)attr_int(&f->attrs, "fast.div", 0) |
		  (uint64_t)attr_int(&f->attrs, "fast.eq1", 0);
	p->assume = fn.assume;
	p->smem = cg_smem_dynamic(&fn);
	p->nhoists = fn.hoists.n;
	if (p->nhoists)
		p->hoists = arena_dup(&cg->arena, fn.hoists.v,
				      p->nhoists * sizeof *p->hoists);
	p->ok = true;
done:
	arena_reset(&a);
	if (!p->ok)
		cg->failed = true;
	return p->ok;
}

bool
cg_lower_kernel(Cg *cg, const CgPrep *p, int entry)
{
	Func *f = p->f;
	Arena a;
	CgFn fn;
	CgKernelInfo ki;
	bool ok = false;

	arena_init(&a, NULL, NULL, NULL);
	setup(&fn, cg, f, &a);
	if (entry == CG_ENTRY_FAST)
		fn.name = cg_fast_name(cg, f->name);
	/* a kernel's copy laid out for its generic entry is that entry */
	if (entry == CG_ENTRY_GENERIC && attr_str(&f->attrs, "generic_of"))
		fn.name = attr_str(&f->attrs, "generic_of");
	fn.hoists.v = p->hoists;
	fn.hoists.n = fn.hoists.cap = p->nhoists;
	analyse(&fn);
	if (entry == CG_ENTRY_FAST) {
		/* its facts: under what the launch checks, no more */
		Assume r = axis_restrict(&fn.assume, p->fast);

		fn.ax = axis_compute(f, fn.a, &r);
	}
	if (!cg_smem_plan(&fn))
		goto done;
	fn.fn = make_function(&fn);
	fn.B = cg->B;
	cg_debug_func(cg, f, fn.fn);
	if (entry == CG_ENTRY_FAST)
		fn.ver_deps = p->fast;
	fn.entry = entry;
	make_entry(&fn);
	cg_scope_push(&fn);
	lower_body(&fn, entry);
	cg_scope_pop(&fn);
	LLVMSetCurrentDebugLocation2(cg->B, NULL);
	if (fn.failed || cg->failed)
		goto done;
	if (entry != CG_ENTRY_GENERIC) {
		memset(&ki, 0, sizeof ki);
		ki.name = f->name;
		ki.threads = fn.nthreads;
		ki.smem = cg_smem_dynamic(&fn);
		ki.smem_static = ki.smem ? 0 : cg_smem_total(&fn);
		if (entry == CG_ENTRY_FAST) {
			ki.fast = fn.name;
			ki.align = p->fast & p->assume.align;
			ki.div = p->fast & p->assume.div;
			ki.divisor = (int)p->assume.divisor;
			ki.eq1 = p->fast & p->assume.eq1;
			ki.tma_only = (uint64_t)attr_int(&f->attrs,
							 "fast.tma_only", 0) &
				      (ki.align | ki.div);
		}
		vec_push(&cg->arena, &cg->kinfo, ki);
	}
	ok = true;
done:
	if (!ok)
		cg->failed = true;
	arena_reset(&a);
	return ok;
}
