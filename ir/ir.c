/* ir.c: building and changing the IR: modules, functions, values, ops,
 * blocks; walking, use counts and deep copies. */
#include <stdarg.h>
#include <string.h>

#include "ir.h"

const OpInfo op_info[OP_COUNT] = {
#define OP(name, text, minop, maxop, nres, nreg, feat, flags) \
	[OP_##name] = { text, minop, maxop, nres, nreg, TF_##feat, flags },
#include "ops.def"
#undef OP
};

int
op_kind_from_name(const char *s, size_t n)
{
	int k;

	for (k = 0; k < OP_COUNT; k++)
		if (strlen(op_info[k].name) == n &&
		    memcmp(op_info[k].name, s, n) == 0)
			return k;
	return -1;
}

Module *
ir_module_new(IrCtx *c, const char *source)
{
	Module *m = arena_alloc(c->arena, sizeof *m);

	m->ctx = c;
	m->source = strtab_cstr(&c->strs, source ? source : "");
	return m;
}

static uint32_t
str_hash(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

/* Puts f in ir_func_find's table while it has room (at most half full);
 * a func of a name already there stays behind the first. */
static void
byname_add(Module *m, Func *f)
{
	uint32_t mask = m->byname_cap - 1, j;

	if (!m->byname || m->byname_stale || 2 * m->funcs.n > m->byname_cap) {
		m->byname_stale = true;
		return;
	}
	for (j = str_hash(f->name) & mask; m->byname[j]; j = (j + 1) & mask)
		if (strcmp(m->byname[j]->name, f->name) == 0)
			return;
	m->byname[j] = f;
}

Func *
ir_func_new(Module *m, FuncKind k, const char *name, uint32_t nparams,
	    Type *const *ptypes)
{
	Arena *a = m->ctx->arena;
	Func *f = arena_alloc(a, sizeof *f);

	f->mod = m;
	f->kind = k;
	f->name = strtab_cstr(&m->ctx->strs, name);
	vec_push(a, &f->vals, ((ValInfo){ 0 }));
	f->body = ir_block_new(f, nparams, ptypes);
	vec_push(a, &m->funcs, f);
	byname_add(m, f);
	return f;
}

/* A module of a few funcs is searched in order; a large one (a file of
 * thousands of kernels) through an open-addressing table by name. */
Func *
ir_func_find(Module *m, const char *name)
{
	uint32_t i, mask;
	Func *g;

	if (m->funcs.n <= 16) {
		for (i = 0; i < m->funcs.n; i++)
			if (strcmp(m->funcs.v[i]->name, name) == 0)
				return m->funcs.v[i];
		return NULL;
	}
	if (m->byname_stale || !m->byname) {
		if (m->byname_cap < 2 * m->funcs.n) {
			while (m->byname_cap < 4 * m->funcs.n)
				m->byname_cap = m->byname_cap ? 2 * m->byname_cap : 64;
			m->byname = arena_alloc(m->ctx->arena,
						m->byname_cap * sizeof *m->byname);
		}
		memset(m->byname, 0, m->byname_cap * sizeof *m->byname);
		mask = m->byname_cap - 1;
		/* in reverse, so the first of two funcs of one name is found,
		 * as in order */
		for (i = m->funcs.n; i-- > 0;) {
			uint32_t j = str_hash(m->funcs.v[i]->name) & mask;

			while (m->byname[j] && strcmp(m->byname[j]->name,
						      m->funcs.v[i]->name) != 0)
				j = (j + 1) & mask;
			m->byname[j] = m->funcs.v[i];
		}
		m->byname_stale = false;
	}
	mask = m->byname_cap - 1;
	for (i = str_hash(name) & mask; (g = m->byname[i]); i = (i + 1) & mask)
		if (strcmp(g->name, name) == 0)
			return g;
	return NULL;
}

void
ir_func_set_results(Func *f, uint32_t n, Type *const *types)
{
	f->nrtypes = n;
	f->rtypes = arena_dup(f->mod->ctx->arena, types, n * sizeof *types);
}

Value
ir_value_new(Func *f, Type *t)
{
	ValInfo vi = { .ty = t };

	vec_push(f->mod->ctx->arena, &f->vals, vi);
	return f->vals.n - 1;
}

void
ir_value_set_name(Func *f, Value v, const char *name)
{
	f->vals.v[v].name = name ? strtab_cstr(&f->mod->ctx->strs, name) : NULL;
}

Op *
ir_op_new(Func *f, OpKind k, uint32_t nopnds, const Value *opnds,
	  uint32_t nres, Type *const *rtypes, uint32_t nregions)
{
	Arena *a = f->mod->ctx->arena;
	Op *op = arena_alloc(a, sizeof *op);
	uint32_t i;

	op->kind = k;
	op->nopnds = nopnds;
	op->opnds = arena_alloc(a, (nopnds ? nopnds : 1) * sizeof(Value));
	if (nopnds)
		memcpy(op->opnds, opnds, nopnds * sizeof(Value));
	op->nres = nres;
	op->res = arena_alloc(a, (nres ? nres : 1) * sizeof(Value));
	for (i = 0; i < nres; i++) {
		op->res[i] = ir_value_new(f, rtypes[i]);
		f->vals.v[op->res[i]].def = op;
		f->vals.v[op->res[i]].idx = i;
	}
	op->nregions = nregions;
	op->regions = arena_alloc(a, (nregions ? nregions : 1) * sizeof(Block *));
	for (i = 0; i < nregions; i++) {
		op->regions[i] = ir_block_new(f, 0, NULL);
		op->regions[i]->parent = op;
	}
	return op;
}

Block *
ir_block_new(Func *f, uint32_t nargs, Type *const *atypes)
{
	Block *b = arena_alloc(f->mod->ctx->arena, sizeof *b);
	uint32_t i;

	b->fn = f;
	for (i = 0; i < nargs; i++)
		ir_block_add_arg(b, atypes[i]);
	return b;
}

Value
ir_block_add_arg(Block *b, Type *t)
{
	Func *f = b->fn;
	Value v = ir_value_new(f, t);
	Value *args = arena_alloc(f->mod->ctx->arena,
				  (b->nargs + 1) * sizeof *args);

	if (b->nargs)
		memcpy(args, b->args, b->nargs * sizeof *args);
	args[b->nargs] = v;
	f->vals.v[v].blk = b;
	f->vals.v[v].idx = b->nargs;
	b->args = args;
	b->nargs++;
	return v;
}

void
ir_insert_before(Op *before, Op *op)
{
	Block *b = before->parent;

	op->parent = b;
	op->next = before;
	op->prev = before->prev;
	if (before->prev)
		before->prev->next = op;
	else
		b->first = op;
	before->prev = op;
}

void
ir_insert_after(Op *after, Op *op)
{
	if (after->next) {
		ir_insert_before(after->next, op);
		return;
	}
	ir_append(after->parent, op);
}

void
ir_append(Block *b, Op *op)
{
	op->parent = b;
	op->next = NULL;
	op->prev = b->last;
	if (b->last)
		b->last->next = op;
	else
		b->first = op;
	b->last = op;
}

void
ir_remove(Op *op)
{
	Block *b = op->parent;

	if (!b)
		return;
	if (op->prev)
		op->prev->next = op->next;
	else
		b->first = op->next;
	if (op->next)
		op->next->prev = op->prev;
	else
		b->last = op->prev;
	op->prev = op->next = NULL;
	op->parent = NULL;
}

void
ir_walk_block(Block *b, OpVisit fn, void *ud)
{
	Op *op, *next;
	uint32_t i;

	for (op = b->first; op; op = next) {
		next = op->next;
		fn(op, ud);
		for (i = 0; i < op->nregions; i++)
			ir_walk_block(op->regions[i], fn, ud);
	}
}

void
ir_walk(Func *f, OpVisit fn, void *ud)
{
	ir_walk_block(f->body, fn, ud);
}

typedef struct Remap {
	Value from, to;
} Remap;

static void
replace_one(Op *op, void *ud)
{
	Remap *r = ud;
	uint32_t i;

	for (i = 0; i < op->nopnds; i++)
		if (op->opnds[i] == r->from)
			op->opnds[i] = r->to;
}

void
ir_replace_uses(Func *f, Value from, Value to)
{
	Remap r = { from, to };

	ir_walk(f, replace_one, &r);
}

static void
count_one(Op *op, void *ud)
{
	uint32_t *uses = ud;
	uint32_t i;

	for (i = 0; i < op->nopnds; i++)
		uses[op->opnds[i]]++;
}

typedef struct FindOps {
	OpKind k;
	Arena *a;
	Vec(Op *) v;
} FindOps;

static void
find_one(Op *op, void *ud)
{
	FindOps *x = ud;

	if (op->kind == x->k)
		vec_push(x->a, &x->v, op);
}

Op **
ir_find_ops(Func *f, OpKind k, Arena *a, uint32_t *n)
{
	FindOps x = { k, a, { 0 } };

	ir_walk(f, find_one, &x);
	*n = x.v.n;
	return x.v.v;
}

uint32_t *
ir_count_uses(Func *f, Arena *scratch)
{
	uint32_t *uses = arena_alloc(scratch, f->vals.n * sizeof *uses);

	ir_walk(f, count_one, uses);
	return uses;
}

static void
map_set(Func *dst, Value **map, uint32_t *mapn, Value from, Value to)
{
	if (from >= *mapn) {
		uint32_t n = MAX(from + 1, *mapn * 2);
		Value *m = arena_alloc(dst->mod->ctx->arena, n * sizeof *m);

		if (*mapn)
			memcpy(m, *map, *mapn * sizeof *m);
		*map = m;
		*mapn = n;
	}
	(*map)[from] = to;
}

static Value
map_get(Value *map, uint32_t mapn, Value v)
{
	return v < mapn && map[v] ? map[v] : v;
}

static void
clone_block_into(Func *dst, Func *src, Block *from, Block *to, Value **map,
		 uint32_t *mapn)
{
	Op *op;
	uint32_t i;

	for (i = 0; i < from->nargs; i++) {
		Value a = ir_block_add_arg(to, ir_type(src, from->args[i]));

		dst->vals.v[a].name = src->vals.v[from->args[i]].name;
		map_set(dst, map, mapn, from->args[i], a);
	}
	for (op = from->first; op; op = op->next)
		ir_append(to, ir_clone_op(dst, src, op, map, mapn));
}

Op *
ir_clone_op(Func *dst, Func *src, Op *op, Value **map, uint32_t *mapn)
{
	Arena *a = dst->mod->ctx->arena;
	Type *rt_small[8], **rt = rt_small;
	Value ops_small[8], *ops = ops_small;
	Op *c;
	uint32_t i;

	/* ir_op_new copies both: the arena holds only those of large ops */
	if (op->nres > 8)
		rt = arena_alloc(a, op->nres * sizeof *rt);
	if (op->nopnds > 8)
		ops = arena_alloc(a, op->nopnds * sizeof *ops);

	for (i = 0; i < op->nres; i++)
		rt[i] = ir_type(src, op->res[i]);
	for (i = 0; i < op->nopnds; i++)
		ops[i] = map_get(*map, *mapn, op->opnds[i]);
	c = ir_op_new(dst, op->kind, op->nopnds, ops, op->nres, rt,
		      op->nregions);
	c->loc = op->loc;
	c->tloc = op->tloc;
	c->attrs.n = c->attrs.cap = op->attrs.n;
	c->attrs.v = arena_dup(a, op->attrs.v, op->attrs.n * sizeof(Attr));
	for (i = 0; i < op->nres; i++) {
		dst->vals.v[c->res[i]].name = src->vals.v[op->res[i]].name;
		map_set(dst, map, mapn, op->res[i], c->res[i]);
	}
	for (i = 0; i < op->nregions; i++)
		clone_block_into(dst, src, op->regions[i], c->regions[i], map,
				 mapn);
	return c;
}

void
ir_op_erase_operand(Op *op, uint32_t i)
{
	if (NEVER(i >= op->nopnds))
		return;
	memmove(op->opnds + i, op->opnds + i + 1,
		(op->nopnds - i - 1) * sizeof *op->opnds);
	op->nopnds--;
}

void
ir_op_add_operand(Op *op, Value v)
{
	Arena *a = op->parent->fn->mod->ctx->arena;
	Value *o = arena_alloc(a, (op->nopnds + 1) * sizeof *o);

	if (op->nopnds)
		memcpy(o, op->opnds, op->nopnds * sizeof *o);
	o[op->nopnds++] = v;
	op->opnds = o;
}

Value
ir_op_add_result(Op *op, Type *t)
{
	Func *f = op->parent->fn;
	Value *r = arena_alloc(f->mod->ctx->arena, (op->nres + 1) * sizeof *r);
	Value v = ir_value_new(f, t);

	if (op->nres)
		memcpy(r, op->res, op->nres * sizeof *r);
	r[op->nres] = v;
	f->vals.v[v].def = op;
	f->vals.v[v].idx = op->nres++;
	op->res = r;
	return v;
}

void
ir_op_erase_result(Op *op, uint32_t i)
{
	Func *f;
	uint32_t j;

	if (NEVER(i >= op->nres))
		return;
	f = op->parent ? op->parent->fn : NULL;
	if (f)
		f->vals.v[op->res[i]].def = NULL;
	memmove(op->res + i, op->res + i + 1, (op->nres - i - 1) * sizeof *op->res);
	op->nres--;
	for (j = i; f && j < op->nres; j++)
		f->vals.v[op->res[j]].idx = j;
}

void
ir_block_erase_arg(Block *b, uint32_t i)
{
	uint32_t j;

	if (NEVER(i >= b->nargs))
		return;
	b->fn->vals.v[b->args[i]].blk = NULL;
	memmove(b->args + i, b->args + i + 1, (b->nargs - i - 1) * sizeof *b->args);
	b->nargs--;
	for (j = i; j < b->nargs; j++)
		b->fn->vals.v[b->args[j]].idx = j;
}

Func *
ir_func_clone(Module *m, Func *src, const char *name)
{
	Arena *a = m->ctx->arena;
	uint32_t np = src->body->nargs, mapn = src->vals.n, i;
	Type **pt = arena_alloc(a, (np + 1) * sizeof *pt);
	Value *map = arena_alloc(a, (mapn + 1) * sizeof *map);
	Func *f;
	Op *op;

	for (i = 0; i < np; i++)
		pt[i] = ir_type(src, src->body->args[i]);
	f = ir_func_new(m, src->kind, name, np, pt);
	for (i = 0; i < np; i++) {
		f->vals.v[f->body->args[i]].name =
			src->vals.v[src->body->args[i]].name;
		map[src->body->args[i]] = f->body->args[i];
	}
	if (src->nrtypes)
		ir_func_set_results(f, src->nrtypes, src->rtypes);
	f->attrs.n = f->attrs.cap = src->attrs.n;
	f->attrs.v = arena_dup(a, src->attrs.v, src->attrs.n * sizeof(Attr));
	f->loc = src->loc;
	f->tloc = src->tloc;
	for (op = src->body->first; op; op = op->next)
		ir_append(f->body, ir_clone_op(f, src, op, &map, &mapn));
	return f;
}

void
ir_func_remove(Module *m, Func *f)
{
	uint32_t i;

	for (i = 0; i < m->funcs.n; i++) {
		if (m->funcs.v[i] != f)
			continue;
		memmove(m->funcs.v + i, m->funcs.v + i + 1,
			(m->funcs.n - i - 1) * sizeof *m->funcs.v);
		m->funcs.n--;
		m->byname_stale = true;
		return;
	}
}

static void
report_noloc(Diag *d, DiagKind k, const char *fmt, ...) TLX_PRINTF(3, 4);

static void
report_noloc(Diag *d, DiagKind k, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	diag_report(d, k, (SrcRange){ 0 }, false, fmt, ap);
	va_end(ap);
}

static void
report(Diag *d, DiagKind k, Func *f, Op *op, const char *fmt, va_list ap)
{
	SrcLoc l = op ? (op->tloc.line > 0 ? op->tloc : op->loc)
		      : (f->tloc.line > 0 ? f->tloc : f->loc);

	if (l.line > 0) {
		diag_report(d, k, range_at(l), true, fmt, ap);
	} else {
		char *msg = arena_vprintf(d->arena, fmt, ap);

		report_noloc(d, k, "in '@%s': %s", f->name, msg);
	}
}

void
ir_error(Diag *d, Func *f, Op *op, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	report(d, DIAG_ERROR, f, op, fmt, ap);
	va_end(ap);
}

void
ir_warning(Diag *d, Func *f, Op *op, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	report(d, DIAG_WARNING, f, op, fmt, ap);
	va_end(ap);
}

void
ir_note(Diag *d, Func *f, Op *op, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	report(d, DIAG_NOTE, f, op, fmt, ap);
	va_end(ap);
}

bool
ir_func_laid_out(Func *f)
{
	uint32_t i;

	for (i = 1; i < f->vals.n; i++)
		if (f->vals.v[i].ty && f->vals.v[i].ty->layout)
			return true;
	return false;
}

Value
ir_access_ptr(Op *op)
{
	switch (op->kind) {
	case OP_LOAD: case OP_STORE: case OP_ATOMIC: case OP_ATOMIC_CAS:
		return op->opnds[0];
	case OP_CP_ASYNC:
		return op->opnds[1];
	default:
		return 0;
	}
}

Value
ir_access_mask(Op *op)
{
	switch (op->kind) {
	case OP_LOAD: case OP_CP_ASYNC:
		return op->nopnds > 2 || (op->kind == OP_LOAD && op->nopnds > 1)
			       ? op->opnds[op->kind == OP_LOAD ? 1 : 2] : 0;
	case OP_STORE: case OP_ATOMIC:
		return op->nopnds > 2 ? op->opnds[2] : 0;
	default:
		return 0;
	}
}

/* Replaces uses of task_replica in b (and its regions) by v. */
static void
replace_replica(Func *f, Block *b, Value v)
{
	Op *op, *next;
	uint32_t i;

	for (op = b->first; op; op = next) {
		next = op->next;
		for (i = 0; i < op->nregions; i++)
			replace_replica(f, op->regions[i], v);
		if (op->kind == OP_TASK_REPLICA) {
			ir_replace_uses(f, op->res[0], v);
			ir_remove(op);
		}
	}
}

void
ir_unmerge_task(Func *f, Op *task)
{
	IrCtx *c = f->mod->ctx;
	int64_t n = attr_int(&task->attrs, "replicas", 1), k;
	int64_t span = attr_int(&task->attrs, "span",
				attr_int(&task->attrs, "warps", 1));
	Type *i32 = ty_scalar(c, TY_I32);
	Op *at = task, *t;

	for (k = n - 1; k >= 0; k--) {
		Value *map = NULL;
		uint32_t mapn = 0;
		Block *b;
		Op *cst;

		t = k ? ir_clone_op(f, f, task, &map, &mapn) : task;
		if (k)
			ir_insert_after(at, t);
		b = t->regions[0];
		cst = ir_op_new(f, OP_CONST, 0, NULL, 1, &i32, 0);
		attr_set_int(c, &cst->attrs, "value", k);
		cst->loc = t->loc;
		if (b->first)
			ir_insert_before(b->first, cst);
		else
			ir_append(b, cst);
		replace_replica(f, b, cst->res[0]);
		attr_remove(c, &t->attrs, "replicas");
		attr_set_int(c, &t->attrs, "replica", k);
		if (attr_has(&t->attrs, "first_warp"))
			attr_set_int(c, &t->attrs, "first_warp",
				     attr_int(&task->attrs, "first_warp", 0) + k * span);
		if (attr_has(&t->attrs, "barrier"))
			attr_set_int(c, &t->attrs, "barrier",
				     attr_int(&task->attrs, "barrier", 1) + k);
	}
}
