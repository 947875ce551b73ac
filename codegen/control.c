/*
 * control.c: structured control flow -- for, while, if with region
 * arguments and results become LLVM blocks and phis (one phi per
 * register of a loop-carried tile, in the layout assign.c gave it) --
 * plus return, assert (a trap when any element is false) and call (which
 * check.c refuses: device functions are inlined before codegen).
 *
 *   for:   pre -> head(phis: iv, iters; iv < ub) -> body -> head | exit
 *   while: pre -> cond(phis; region 0) -> body(region 1) -> cond | exit
 *   if:    cond -> then | else -> merge(phis)
 * Results of a loop are the head's (or condition's) values, which
 * dominate the exit.
 */
#include "config.h"

#include "codegen/cg.h"

/* A lowered yield/condition: what the parent adds to its phis. */
typedef struct Term {
	LLVMValueRef cond;       /* condition only */
	LLVMValueRef *sc;        /* scalars, by operand */
	LLVMValueRef **tiles;    /* tiles, by operand */
	const Layout **lys;
	uint32_t n;
	LLVMBasicBlockRef block; /* where it ended */
} Term;

/* Values flowing along one edge, one per slot of a set of region args. */
typedef struct Flow {
	LLVMValueRef *sc;
	LLVMValueRef **tiles;
	LLVMValueRef **pairs; /* phis: a 16-bit tile's i32 phi at the first
				 register of each pair it packs */
	int **mates;          /* pair_map of each packed tile, NULL elsewhere */
	LLVMValueRef iv;  /* a for loop's induction variable */
} Flow;


static bool
lower_term(CgFn *fn, Op *op)
{
	Term *t = arena_alloc(fn->a, sizeof *t);
	uint32_t i, first = op->kind == OP_CONDITION ? 1 : 0;

	if (first)
		t->cond = cg_scalar(fn, op->opnds[0]);
	t->n = op->nopnds - first;
	t->sc = arena_alloc(fn->a, (t->n + 1) * sizeof *t->sc);
	t->tiles = arena_alloc(fn->a, (t->n + 1) * sizeof *t->tiles);
	t->lys = arena_alloc(fn->a, (t->n + 1) * sizeof *t->lys);
	for (i = 0; i < t->n; i++) {
		Value v = op->opnds[first + i];

		if (cg_is_tile(fn, v)) {
			t->lys[i] = cg_operand_layout(fn, op, first + i);
			t->tiles[i] = cg_operand(fn, op, first + i);
		} else {
			t->sc[i] = cg_scalar(fn, v);
		}
	}
	t->block = LLVMGetInsertBlock(fn->cg->B);
	fn->term = t;
	return true;
}

static bool
supported_value(CgFn *fn, Op *op, Value v)
{
	Type *t = ir_type(fn->f, v);

	if (t->kind == TY_TILE || t->kind == TY_PTR || ty_is_scalar_kind(t->kind))
		return true;
	cg_unsupported(fn->cg, op, arena_printf(fn->a, "%s carrying a value "
						 "of this type", op_name(op->kind)));
	return false;
}

/* A Flow with room for n values and no induction variable. */
static Flow
new_flow(CgFn *fn, uint32_t n)
{
	Flow f;

	f.sc = arena_alloc(fn->a, (n + 1) * sizeof *f.sc);
	f.tiles = arena_alloc(fn->a, (n + 1) * sizeof *f.tiles);
	f.pairs = NULL;
	f.mates = NULL;
	f.iv = NULL;
	return f;
}

/*
 * A tile of 16-bit elements crosses a phi two registers to an i32:
 * ptxas gives each 16-bit phi a register of its own, and a persistent
 * softmax's next row of bf16 (64 per thread, carried across the loop)
 * spilled a third of its values.  The registers that are not duplicates
 * pair up in order: pair_map's entry for the first of a pair is its
 * partner, PAIR_SECOND for the second, PAIR_NONE for a duplicate or the
 * odd one left (its own phi).
 */
enum { PAIR_NONE = -1, PAIR_SECOND = -2 };

static int *
pair_map(CgFn *fn, const Layout *ly)
{
	uint32_t dup = ly_dup_mask(ly), n = (uint32_t)ly_nregs(ly), j;
	int *m = arena_alloc(fn->a, (n + 1) * sizeof *m), first = PAIR_NONE;

	for (j = 0; j < n; j++) {
		m[j] = PAIR_NONE;
		if (j & dup)
			continue;
		if (first == PAIR_NONE) {
			first = (int)j;
		} else {
			m[first] = (int)j;
			m[j] = PAIR_SECOND;
			first = PAIR_NONE;
		}
	}
	return m;
}

static bool
packed(CgFn *fn, Value v)
{
	Type *t = ir_type(fn->f, v);
	LLVMTypeRef lt;

	if (t->kind != TY_TILE)
		return false;
	lt = cg_type(fn->cg, t->elem);
	switch (LLVMGetTypeKind(lt)) {
	case LLVMBFloatTypeKind:
	case LLVMHalfTypeKind:
		return true;
	case LLVMIntegerTypeKind:
		return LLVMGetIntTypeWidth(lt) == 16;
	default:
		return false;
	}
}

/* Phis in the current block for values of types `vals` (their layouts
 * from their homes); returns them as a Flow and binds them to `bind`.
 * Every phi comes first, then the unpacking of the packed ones. */
static Flow
make_phis(CgFn *fn, const Value *vals, uint32_t n)
{
	Cg *cg = fn->cg;
	LLVMBuilderRef B = cg->B;
	Flow f = new_flow(fn, n);
	uint32_t i, j, dup;
	int k;

	f.pairs = arena_alloc(fn->a, (n + 1) * sizeof *f.pairs);
	f.mates = arena_alloc(fn->a, (n + 1) * sizeof *f.mates);
	for (i = 0; i < n; i++) {
		Type *t = ir_type(fn->f, vals[i]);
		LLVMTypeRef lt = cg_type(cg, t);
		const Layout *ly;
		int *m = NULL;

		f.pairs[i] = NULL;
		f.mates[i] = NULL;
		if (t->kind != TY_TILE) {
			f.sc[i] = LLVMBuildPhi(B, lt, "");
			continue;
		}
		ly = fn->vals[vals[i]].home;
		f.tiles[i] = cg_regs(fn, ly);
		if (packed(fn, vals[i])) {
			m = f.mates[i] = pair_map(fn, ly);
			f.pairs[i] = cg_regs(fn, ly);
			for (j = 0; j < (uint32_t)ly_nregs(ly); j++)
				f.pairs[i][j] = m[j] >= 0
					? LLVMBuildPhi(B, cg->t_i32, "") : NULL;
		}
		dup = ly_dup_mask(ly);
		for (j = 0; j < (uint32_t)ly_nregs(ly); j++)
			f.tiles[i][j] = (j & dup) || (m && m[j] != PAIR_NONE)
				? NULL : LLVMBuildPhi(B, lt, "");
	}
	for (i = 0; i < n; i++) {
		const Layout *ly;

		if (!f.pairs[i])
			continue;
		ly = fn->vals[vals[i]].home;
		for (j = 0; j < (uint32_t)ly_nregs(ly); j++) {
			LLVMValueRef v;

			if (!f.pairs[i][j])
				continue;
			k = f.mates[i][j];
			v = LLVMBuildBitCast(B, f.pairs[i][j], LLVMVectorType(
				cg_type(cg, ir_type(fn->f, vals[i])->elem), 2), "");
			f.tiles[i][j] = LLVMBuildExtractElement(B, v, cg_i32(cg, 0), "");
			f.tiles[i][k] = LLVMBuildExtractElement(B, v, cg_i32(cg, 1), "");
		}
	}
	for (i = 0; i < n; i++) {
		const Layout *ly;

		if (ir_type(fn->f, vals[i])->kind != TY_TILE)
			continue;
		ly = fn->vals[vals[i]].home;
		dup = ly_dup_mask(ly);
		for (j = 0; j < (uint32_t)ly_nregs(ly); j++)
			if (j & dup)
				f.tiles[i][j] = f.tiles[i][j & ~dup];
	}
	return f;
}

static void
bind(CgFn *fn, const Value *vals, uint32_t n, Flow f)
{
	uint32_t i;

	for (i = 0; i < n; i++) {
		if (cg_is_tile(fn, vals[i]))
			cg_set_tile(fn, vals[i], fn->vals[vals[i]].home, f.tiles[i]);
		else
			fn->vals[vals[i]].v = f.sc[i];
	}
}

/* The i32 of registers a and b of a 16-bit tile, built at the end of
 * block `from` (before its branch where it has one). */
static LLVMValueRef
pack_pair(CgFn *fn, LLVMValueRef a, LLVMValueRef b, LLVMBasicBlockRef from)
{
	Cg *cg = fn->cg;
	LLVMBuilderRef B = LLVMCreateBuilderInContext(cg->C);
	LLVMValueRef term = LLVMGetBasicBlockTerminator(from), v;

	if (term)
		LLVMPositionBuilderBefore(B, term);
	else
		LLVMPositionBuilderAtEnd(B, from);
	v = LLVMGetUndef(LLVMVectorType(LLVMTypeOf(a), 2));
	v = LLVMBuildInsertElement(B, v, a, cg_i32(cg, 0), "");
	v = LLVMBuildInsertElement(B, v, b, cg_i32(cg, 1), "");
	v = LLVMBuildBitCast(B, v, cg->t_i32, "");
	LLVMDisposeBuilder(B);
	return v;
}

/* Adds one incoming edge (values `in` from `from`) to the phis `f`. */
static void
incoming(CgFn *fn, const Value *vals, uint32_t n, Flow f, Flow in,
	 LLVMBasicBlockRef from)
{
	uint32_t i, j, dup;

	for (i = 0; i < n; i++) {
		const Layout *ly;

		if (!cg_is_tile(fn, vals[i])) {
			LLVMAddIncoming(f.sc[i], &in.sc[i], &from, 1);
			continue;
		}
		ly = fn->vals[vals[i]].home;
		dup = ly_dup_mask(ly);
		for (j = 0; j < (uint32_t)ly_nregs(ly); j++) {
			LLVMValueRef w;
			int k;

			if (j & dup)
				continue;
			k = f.mates && f.mates[i] ? f.mates[i][j] : PAIR_NONE;
			if (k == PAIR_NONE)
				LLVMAddIncoming(f.tiles[i][j], &in.tiles[i][j],
						&from, 1);
			if (k < 0)
				continue;
			w = pack_pair(fn, in.tiles[i][j], in.tiles[i][k], from);
			LLVMAddIncoming(f.pairs[i][j], &w, &from, 1);
		}
	}
}

/* Lowers a region with its arguments bound to `f`; returns its
 * terminator (NULL after an error). */
static Term *
lower_region(CgFn *fn, Block *b, Flow *f)
{
	Term *t;

	cg_scope_push(fn);
	if (f)
		bind(fn, b->args + (b->nargs && f->iv ? 1 : 0),
		     b->nargs - (b->nargs && f->iv ? 1 : 0), *f);
	if (f && f->iv)
		fn->vals[b->args[0]].v = f->iv;
	fn->term = NULL;
	cg_lower_block(fn, b);
	cg_scope_pop(fn);
	t = fn->term;
	return fn->failed ? NULL : t;
}

static Flow
term_flow(Term *t)
{
	Flow f = { t->sc, t->tiles, NULL, NULL, NULL };

	return f;
}

/* The current registers of values vals (in their homes). */
static Flow
operand_flow_of(CgFn *fn, const Value *vals, uint32_t n)
{
	Flow f = new_flow(fn, n);
	uint32_t i;

	for (i = 0; i < n; i++) {
		if (cg_is_tile(fn, vals[i]))
			f.tiles[i] = cg_tile(fn, vals[i], fn->vals[vals[i]].home);
		else
			f.sc[i] = cg_scalar(fn, vals[i]);
	}
	return f;
}

static Flow
operand_flow(CgFn *fn, Op *op, uint32_t first, uint32_t n)
{
	Flow f = new_flow(fn, n);
	uint32_t i;

	for (i = 0; i < n; i++) {
		if (cg_is_tile(fn, op->opnds[first + i]))
			f.tiles[i] = cg_operand(fn, op, first + i);
		else
			f.sc[i] = cg_scalar(fn, op->opnds[first + i]);
	}
	return f;
}

static bool
lower_loop(CgFn *fn, Op *op)
{
	Cg *cg = fn->cg;
	LLVMBuilderRef B = cg->B;
	Block *body = op->regions[0];
	uint32_t n = op->nopnds - 3, i;
	Type *it = ir_type(fn->f, op->opnds[0]);
	LLVMBasicBlockRef pre, head, bb, exit;
	LLVMValueRef iv, next, cond, latch, ub = cg_scalar(fn, op->opnds[1]);
	Flow init, phis;
	Term *t;

	for (i = 1; i < body->nargs; i++)
		if (!supported_value(fn, op, body->args[i]))
			return false;
	init = operand_flow(fn, op, 3, n);
	pre = LLVMGetInsertBlock(B);
	head = cg_new_block(fn, "for.head");
	bb = cg_new_block(fn, "for.body");
	exit = cg_new_block(fn, "for.exit");
	LLVMBuildBr(B, head);
	LLVMPositionBuilderAtEnd(B, head);
	iv = LLVMBuildPhi(B, cg_type(cg, it), "iv");
	phis = make_phis(fn, body->args + 1, n);
	LLVMAddIncoming(iv, &(LLVMValueRef){ cg_scalar(fn, op->opnds[0]) }, &pre, 1);
	incoming(fn, body->args + 1, n, phis, init, pre);
	cond = LLVMBuildICmp(B, ty_is_unsigned(it) ? LLVMIntULT : LLVMIntSLT,
			     iv, ub, "");
	LLVMBuildCondBr(B, cond, bb, exit);
	LLVMPositionBuilderAtEnd(B, bb);
	phis.iv = iv;
	t = lower_region(fn, body, &phis);
	phis.iv = NULL;
	if (!t)
		return false;
	next = LLVMBuildAdd(B, iv, cg_scalar(fn, op->opnds[2]), "");
	LLVMAddIncoming(iv, &next, &t->block, 1);
	incoming(fn, body->args + 1, n, phis, term_flow(t), t->block);
	latch = LLVMBuildBr(B, head);
	if (attr_has(&op->attrs, "nounroll"))
		cg_no_unroll(cg, latch);
	LLVMPositionBuilderAtEnd(B, exit);
	bind(fn, op->res, op->nres, phis);
	return true;
}

static bool
lower_while_loop(CgFn *fn, Op *op)
{
	LLVMBuilderRef B = fn->cg->B;
	Block *cb = op->regions[0], *bb = op->regions[1];
	LLVMBasicBlockRef pre, head, body, exit;
	Flow init, phis, carried;
	Term *c, *y;
	uint32_t i;

	for (i = 0; i < cb->nargs; i++)
		if (!supported_value(fn, op, cb->args[i]))
			return false;
	for (i = 0; i < bb->nargs; i++)
		if (!supported_value(fn, op, bb->args[i]))
			return false;
	init = operand_flow(fn, op, 0, op->nopnds);
	pre = LLVMGetInsertBlock(B);
	head = cg_new_block(fn, "while.cond");
	body = cg_new_block(fn, "while.body");
	exit = cg_new_block(fn, "while.exit");
	LLVMBuildBr(B, head);
	LLVMPositionBuilderAtEnd(B, head);
	phis = make_phis(fn, cb->args, cb->nargs);
	incoming(fn, cb->args, cb->nargs, phis, init, pre);
	c = lower_region(fn, cb, &phis);
	if (!c)
		return false;
	LLVMBuildCondBr(B, c->cond, body, exit);
	carried = term_flow(c);
	LLVMPositionBuilderAtEnd(B, body);
	y = lower_region(fn, bb, &carried);
	if (!y)
		return false;
	incoming(fn, cb->args, cb->nargs, phis, term_flow(y), y->block);
	LLVMBuildBr(B, head);
	LLVMPositionBuilderAtEnd(B, exit);
	bind(fn, op->res, op->nres, carried);
	return true;
}

/* A loop whose accesses have wider fast-path vectors is emitted twice,
 * fast and generic, behind one check of the assumptions: neither copy
 * carries the other's code, and the check runs once, not per access --
 * where one program fills an SM, as for the kernel's tail (kernel.c).
 * With several programs per SM the accesses check for themselves and the
 * loop is emitted once: the chunked softmax (softmax_loop.tlx, 4 per SM)
 * ran as fast on the H200 and ptxas took 39% less; the persistent softmax
 * (one per SM) lost a fifth of its speed without the copies. */
static bool
versioned(CgFn *fn, Op *op, bool (*lower)(CgFn *, Op *))
{
	LLVMBuilderRef B = fn->cg->B;
	LLVMBasicBlockRef fast, gen, join, fe, ge;
	uint64_t deps = fn->mode == CG_BOTH && !fn->min_ctas
			? cg_fast_deps(fn, op) : 0;
	Value *res = op->res;
	Flow ff, gf, phis;
	uint32_t i;

	if (!deps)
		return lower(fn, op);
	fast = cg_new_block(fn, "ver.fast");
	gen = cg_new_block(fn, "ver.generic");
	join = cg_new_block(fn, "ver.join");
	LLVMBuildCondBr(B, cg_guard(fn, deps), fast, gen);
	for (i = 0; i < 2; i++) {
		Flow *f = i ? &gf : &ff;

		LLVMPositionBuilderAtEnd(B, i ? gen : fast);
		fn->mode = i ? CG_GENERIC : CG_FAST;
		fn->ver_deps = i ? 0 : deps;
		cg_scope_push(fn);
		if (!lower(fn, op)) {
			fn->mode = CG_BOTH;
			fn->ver_deps = 0;
			return false;
		}
		*f = operand_flow_of(fn, res, op->nres);
		cg_scope_pop(fn);
		if (i)
			ge = LLVMGetInsertBlock(B);
		else
			fe = LLVMGetInsertBlock(B);
		LLVMBuildBr(B, join);
	}
	fn->mode = CG_BOTH;
	fn->ver_deps = 0;
	LLVMPositionBuilderAtEnd(B, join);
	phis = make_phis(fn, res, op->nres);
	incoming(fn, res, op->nres, phis, ff, fe);
	incoming(fn, res, op->nres, phis, gf, ge);
	bind(fn, res, op->nres, phis);
	return true;
}

static bool
lower_for(CgFn *fn, Op *op)
{
	return versioned(fn, op, lower_loop);
}

static bool
lower_while(CgFn *fn, Op *op)
{
	return versioned(fn, op, lower_while_loop);
}

static bool
lower_if(CgFn *fn, Op *op)
{
	LLVMBuilderRef B = fn->cg->B;
	LLVMBasicBlockRef tb, eb, merge;
	Flow phis;
	Term *t, *e;
	uint32_t i;

	for (i = 0; i < op->nres; i++)
		if (!supported_value(fn, op, op->res[i]))
			return false;
	tb = cg_new_block(fn, "if.then");
	eb = cg_new_block(fn, "if.else");
	merge = cg_new_block(fn, "if.end");
	LLVMBuildCondBr(B, cg_scalar(fn, op->opnds[0]), tb, eb);
	LLVMPositionBuilderAtEnd(B, tb);
	if (!(t = lower_region(fn, op->regions[0], NULL)))
		return false;
	LLVMBuildBr(B, merge);
	LLVMPositionBuilderAtEnd(B, eb);
	if (!(e = lower_region(fn, op->regions[1], NULL)))
		return false;
	LLVMBuildBr(B, merge);
	LLVMPositionBuilderAtEnd(B, merge);
	phis = make_phis(fn, op->res, op->nres);
	incoming(fn, op->res, op->nres, phis, term_flow(t), t->block);
	incoming(fn, op->res, op->nres, phis, term_flow(e), e->block);
	bind(fn, op->res, op->nres, phis);
	return true;
}

static bool
lower_assert(CgFn *fn, Op *op)
{
	Cg *cg = fn->cg;
	LLVMBuilderRef B = cg->B;
	LLVMValueRef ok;
	LLVMBasicBlockRef trap, cont;

	if (cg_is_tile(fn, op->opnds[0])) {
		const Layout *ly = cg_operand_layout(fn, op, 0);
		LLVMValueRef *r = cg_operand(fn, op, 0);
		uint32_t i, dup = ly_dup_mask(ly);

		ok = LLVMConstInt(cg->t_i1, 1, 0);
		for (i = 0; i < (uint32_t)ly_nregs(ly); i++)
			if (!(i & dup))
				ok = LLVMBuildAnd(B, ok, r[i], "");
	} else {
		ok = cg_scalar(fn, op->opnds[0]);
	}
	trap = cg_new_block(fn, "assert.fail");
	cont = cg_new_block(fn, "assert.ok");
	LLVMBuildCondBr(B, ok, cont, trap);
	LLVMPositionBuilderAtEnd(B, trap);
	cg_intr(cg, "llvm.trap", NULL, 0, NULL, 0);
	LLVMBuildUnreachable(B);
	LLVMPositionBuilderAtEnd(B, cont);
	return true;
}

bool
cg_control_op(CgFn *fn, Op *op)
{
	switch (op->kind) {
	case OP_FOR: return lower_for(fn, op);
	case OP_WHILE: return lower_while(fn, op);
	case OP_IF: return lower_if(fn, op);
	case OP_YIELD: case OP_CONDITION: return lower_term(fn, op);
	case OP_ASSERT: return lower_assert(fn, op);
	case OP_RETURN:
		if (fn->tma_stores)
			cg_tma_drain(fn);
		LLVMBuildRetVoid(fn->cg->B);
		return true;
	default:
		cg_unsupported(fn->cg, op, NULL);
		return false;
	}
}
