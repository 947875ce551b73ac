/*
 * inline.c: inlining -- pass "inline".
 *
 * Replaces each `call` in the function by a copy of the callee's body (a
 * `func` of the module): the parameters become the call's operands, the
 * values of the callee's `return` replace the call's results.  The calls
 * in the copy are inlined in turn, so no call is left.  A call that
 * reaches a function already being inlined is recursion, which cannot be
 * inlined: a user error "recursive call to 'f' cannot be inlined" at that
 * call.  Then the `func`s that no kernel or grid function reaches through
 * calls are removed from the module (a module with no kernel or grid
 * function keeps its funcs).
 * A call's results are replaced by the copy's values lazily: the walk
 * rewrites each op's operands through a substitution table as it reaches
 * the op, and every use of a result comes after its call in that walk, so
 * inlining costs time linear in the inlined code.
 * Limits (user errors): call chains deeper than 256, regions nested more
 * than 1024 deep after inlining, a function grown past 2^17 inlined ops.
 * Requires: verified IR (callees exist; signatures match).
 * Preserves: name hints and locations of the copied ops.
 * Counters: calls, funcs-removed.
 */
#include "passes/passes.h"

enum { MAX_CHAIN = 256, MAX_NESTING = 1024 };
#define MAX_GROWTH ((uint64_t)1 << 17)

typedef struct Inliner {
	PassCtx *pc;
	Func *f;
	Func *chain[MAX_CHAIN + 1];  /* the function, then the callees being inlined */
	int depth;
	uint64_t grown;
	Op *top;  /* the call in the function itself being inlined now */
	Value *subst;  /* subst[v]: what replaces v (0: nothing) */
	uint32_t nsubst;
	bool changed;
} Inliner;

static bool inline_range(Inliner *in, Op *op, Op *stop, int depth);

static Func *
callee_of(Module *m, Op *call)
{
	const char *name = attr_str(&call->attrs, "callee");
	Func *g = name ? ir_func_find(m, name) : NULL;

	return g && g->kind == FN_DEVICE ? g : NULL;
}

static bool
check_call(Inliner *in, Op *call, Func *g)
{
	int i;

	for (i = 0; i <= in->depth; i++) {
		if (in->chain[i] == g) {
			ir_error(in->pc->diag, in->f, call,
				 "recursive call to '%s' cannot be inlined", g->name);
			return false;
		}
	}
	if (in->depth == MAX_CHAIN) {
		ir_error(in->pc->diag, in->f, call, "calls nested more than %d deep "
			 "cannot be inlined", MAX_CHAIN);
		return false;
	}
	return true;
}

static void
count_op(Op *op, void *ud)
{
	(void)op;
	++*(uint64_t *)ud;
}

static void
substitute(Inliner *in, Value from, Value to)
{
	uint32_t n = in->f->vals.n;

	if (from == to)
		return;
	if (in->nsubst < n) {
		Value *v = arena_alloc(in->pc->scratch, 2 * n * sizeof *v);

		if (in->nsubst)
			memcpy(v, in->subst, in->nsubst * sizeof *v);
		memset(v + in->nsubst, 0, (2 * n - in->nsubst) * sizeof *v);
		in->subst = v;
		in->nsubst = 2 * n;
	}
	in->subst[from] = to;
}

/* What v stands for after the substitutions so far (chains shortened). */
static Value
resolve(Inliner *in, Value v)
{
	Value r = v, next;

	while (r < in->nsubst && in->subst[r])
		r = in->subst[r];
	while (v < in->nsubst && in->subst[v]) {
		next = in->subst[v];
		in->subst[v] = r;
		v = next;
	}
	return r;
}

/* Copies g's body before `call` and wires it up; returns the first copy. */
static Op *
splice_body(Inliner *in, Op *call, Func *g)
{
	Func *f = in->f;
	uint32_t mapn = g->vals.n, i;
	Value *map = arena_alloc(in->pc->scratch, mapn * sizeof *map);
	Op *op, *first = NULL, *ret = NULL;

	for (i = 0; i < g->body->nargs && i < call->nopnds; i++)
		map[g->body->args[i]] = call->opnds[i];
	for (op = g->body->first; op; op = op->next) {
		Op *c;

		if (op->kind == OP_RETURN) {
			ret = op;
			break;
		}
		c = ir_clone_op(f, g, op, &map, &mapn);
		ir_insert_before(call, c);
		first = first ? first : c;
	}
	for (i = 0; ret && i < ret->nopnds && i < call->nres; i++) {
		Value v = ret->opnds[i];

		substitute(in, call->res[i], v < mapn && map[v] ? map[v] : v);
	}
	return first;
}

static bool
inline_call(Inliner *in, Op *call, int depth)
{
	Func *g = callee_of(in->pc->mod, call);
	Op *first, *stop = call->next;
	uint64_t size = 0;
	bool ok;

	if (!g)
		return true;  /* the verifier rejects this; nothing to do */
	if (!check_call(in, call, g))
		return false;
	if (in->depth == 0)
		in->top = call;
	ir_walk(g, count_op, &size);
	in->grown += size;
	if (in->grown > MAX_GROWTH) {
		ir_error(in->pc->diag, in->f, in->top, "inlining this call of '%s' "
			 "makes '%s' larger than %llu operations: call functions "
			 "in a runtime loop rather than many times in straight-line "
			 "code, or split the work over kernels",
			 attr_str(&in->top->attrs, "callee"), in->f->name,
			 (unsigned long long)MAX_GROWTH);
		return false;
	}
	first = splice_body(in, call, g);
	ir_remove(call);
	pass_stat(in->pc, "calls", 1);
	in->changed = true;
	in->chain[++in->depth] = g;
	ok = !first || inline_range(in, first, stop, depth);
	in->depth--;
	return ok;
}

/* Inlines the calls from `op` up to `stop` (NULL: the block's end); the
 * ops are `depth` regions deep. */
static bool
inline_range(Inliner *in, Op *op, Op *stop, int depth)
{
	if (op && depth > MAX_NESTING) {
		ir_error(in->pc->diag, in->f, op, "inlining nests regions more than %d "
			 "deep", MAX_NESTING);
		return false;
	}
	while (op && op != stop) {
		Op *next = op->next;
		uint32_t i;

		for (i = 0; in->nsubst && i < op->nopnds; i++)
			op->opnds[i] = resolve(in, op->opnds[i]);
		for (i = 0; i < op->nregions; i++)
			if (!inline_range(in, op->regions[i]->first, NULL, depth + 1))
				return false;
		if (op->kind == OP_CALL && !inline_call(in, op, depth))
			return false;
		op = next;
	}
	return true;
}

/* ---- removing funcs nothing calls ------------------------------------------- */

typedef struct Reach {
	Module *m;
	bool *seen;
	Vec(uint32_t) work;
	Arena *a;
} Reach;

static int
func_index(Module *m, Func *g)
{
	uint32_t i;

	for (i = 0; i < m->funcs.n; i++)
		if (m->funcs.v[i] == g)
			return (int)i;
	return -1;
}

static void
mark(Reach *r, int i)
{
	if (i < 0 || r->seen[i])
		return;
	r->seen[i] = true;
	vec_push(r->a, &r->work, (uint32_t)i);
}

static void
mark_callee(Op *op, void *ud)
{
	Reach *r = ud;

	if (op->kind == OP_CALL) {
		const char *name = attr_str(&op->attrs, "callee");
		Func *g = name ? ir_func_find(r->m, name) : NULL;

		if (g)
			mark(r, func_index(r->m, g));
	}
}

static bool
remove_unreached(PassCtx *pc)
{
	Module *m = pc->mod;
	Reach r = { .m = m, .a = pc->scratch };
	uint32_t i;
	bool roots = false, changed = false;

	r.seen = arena_alloc(pc->scratch, m->funcs.n + 1);
	for (i = 0; i < m->funcs.n; i++) {
		if (m->funcs.v[i]->kind != FN_DEVICE) {
			mark(&r, (int)i);
			roots = true;
		}
	}
	if (!roots)
		return false;
	while (r.work.n)
		ir_walk(m->funcs.v[r.work.v[--r.work.n]], mark_callee, &r);
	for (i = m->funcs.n; i-- > 0;) {
		if (r.seen[i])
			continue;
		ir_func_remove(m, m->funcs.v[i]);
		pass_stat(pc, "funcs-removed", 1);
		changed = true;
	}
	return changed;
}

/* The index of the module's last kernel or grid function, -1 if none. */
static int
last_root(Module *m)
{
	uint32_t i;

	for (i = m->funcs.n; i-- > 0;)
		if (m->funcs.v[i]->kind != FN_DEVICE)
			return (int)i;
	return -1;
}

bool
pass_inline(PassCtx *pc, Func *f)
{
	Inliner in = { .pc = pc, .f = f };
	int last = last_root(pc->mod);

	/* Calls in funcs are inlined with the copies a kernel or grid function
	 * gets; funcs are inlined into only in a module of funcs alone. */
	if (f->kind == FN_DEVICE && last >= 0)
		return false;
	in.chain[0] = f;
	if (!inline_range(&in, f->body->first, NULL, 0)) {
		pc->failed = true;
		return true;
	}
	/* After the last root, no root has a call left: drop the funcs once
	 * for the module rather than once per root. */
	if (last < 0 || pc->mod->funcs.v[last] != f || pc->failed)
		return in.changed;
	return remove_unreached(pc) || in.changed;
}
