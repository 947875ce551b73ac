/*
 * cse.c: common subexpression elimination -- pass "cse".
 *
 * Two pure ops compute the same value when they have the same kind,
 * operands (in either order for commutative ops), attributes (in any
 * order) and result types.  A walk in definition order keeps a hash table
 * of the pure ops seen so far in the current block and the blocks around
 * it; an op equal to a visible one is removed and its results replaced.
 * The table is scoped by regions: what a region defines is forgotten when
 * the walk leaves it, so a value from an inner region is never used
 * outside it.
 * Requires: verified IR.  Preserves: the first of each set of equal ops.
 * Counters: ops-merged.
 */
#include "passes/passes.h"

typedef struct Entry Entry;
struct Entry {
	Op *op;
	uint64_t hash;
	Entry *next;  /* in its bucket; the newest first */
};

typedef struct Cse {
	PassCtx *pc;
	Func *f;
	Entry **buckets;
	uint32_t mask;
	Vec(Entry *) log;  /* entries in insertion order, for leaving scopes */
	ValueMap map;
	bool changed;
} Cse;

static uint64_t
hash_op(Op *op)
{
	uint64_t h = hash_mix(op->kind, op->nopnds), attrs = 0;
	uint32_t i = 0;

	if (op_has(op, F_COMM) && op->nopnds >= 2) {
		h = hash_mix(h, MIN(op->opnds[0], op->opnds[1]));
		h = hash_mix(h, MAX(op->opnds[0], op->opnds[1]));
		i = 2;
	}
	for (; i < op->nopnds; i++)
		h = hash_mix(h, op->opnds[i]);
	for (i = 0; i < op->attrs.n; i++)
		attrs += attr_hash(&op->attrs.v[i]);  /* any order */
	h = hash_mix(h, attrs);
	return h;
}

static bool
same_attrs(Op *a, Op *b)
{
	uint32_t i;

	if (a->attrs.n != b->attrs.n)
		return false;
	for (i = 0; i < a->attrs.n; i++) {
		Attr *o = attr_find(&b->attrs, a->attrs.v[i].name);

		if (!o || !attr_equal(&a->attrs.v[i], o))
			return false;
	}
	return true;
}

static bool
same_op(Func *f, Op *a, Op *b)
{
	uint32_t i = 0;

	if (a->kind != b->kind || a->nopnds != b->nopnds || a->nres != b->nres)
		return false;
	if (op_has(a, F_COMM) && a->nopnds >= 2 && a->opnds[0] == b->opnds[1] &&
	    a->opnds[1] == b->opnds[0])
		i = 2;
	for (; i < a->nopnds; i++)
		if (a->opnds[i] != b->opnds[i])
			return false;
	for (i = 0; i < a->nres; i++)
		if (ir_type(f, a->res[i]) != ir_type(f, b->res[i]))
			return false;
	return same_attrs(a, b);
}

/* The visible op equal to `op`, or NULL after recording `op`. */
static Op *
lookup_or_add(Cse *z, Op *op)
{
	uint64_t h = hash_op(op);
	Entry **bucket = &z->buckets[h & z->mask], *e;

	for (e = *bucket; e; e = e->next)
		if (e->hash == h && same_op(z->f, e->op, op))
			return e->op;
	e = arena_alloc(z->pc->scratch, sizeof *e);
	e->op = op;
	e->hash = h;
	e->next = *bucket;
	*bucket = e;
	vec_push(z->pc->scratch, &z->log, e);
	return NULL;
}

static void
cse_block(Cse *z, Block *b)
{
	uint32_t mark = z->log.n, i;
	Op *op, *next;

	for (op = b->first; op; op = next) {
		Op *prior;

		next = op->next;
		vmap_apply(&z->map, op);
		if (pass_is_pure(op) && op->nres && (prior = lookup_or_add(z, op))) {
			for (i = 0; i < op->nres; i++)
				vmap_set(&z->map, op->res[i], prior->res[i]);
			ir_remove(op);
			pass_stat(z->pc, "ops-merged", 1);
			z->changed = true;
			continue;
		}
		for (i = 0; i < op->nregions; i++)
			cse_block(z, op->regions[i]);
	}
	while (z->log.n > mark) {  /* the newest entry heads its bucket */
		Entry *e = z->log.v[--z->log.n];

		z->buckets[e->hash & z->mask] = e->next;
	}
}

static void
count_op(Op *op, void *ud)
{
	(void)op;
	++*(uint32_t *)ud;
}

bool
pass_cse(PassCtx *pc, Func *f)
{
	Cse z = { .pc = pc, .f = f };
	uint32_t nops = 0, size = 16;

	ir_walk(f, count_op, &nops);
	while (size < 2 * nops)
		size *= 2;
	z.mask = size - 1;
	z.buckets = arena_alloc(pc->scratch, size * sizeof *z.buckets);
	vmap_init(&z.map, pc->scratch, f->vals.n);
	cse_block(&z, f->body);
	return z.changed;
}
