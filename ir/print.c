/*
 * print.c: the textual form of the IR (docs/il.md is its reference).
 *
 *   module "vadd.tlx"
 *
 *   kernel @vadd(%x: ptr<f32>, %n: i32) {warps = 4} {
 *     %pid: i32 = program_id {axis = 0} @4:16
 *     %0: tile<1024xi32> = range {start = 0, end = 1024}
 *     %r: f32 = for %lb, %ub, %st, %init {
 *     ^(%i: i32, %acc: f32):
 *       yield %acc
 *     }
 *     return
 *   }
 *
 * Values print as %name when they carry a name hint (made unique with a
 * .N suffix), else as %N in order of appearance.  The reader accepts
 * exactly this, so print(read(print(m))) == print(m).
 */
#include <string.h>

#include "ir.h"

/* The module's layouts in order of first appearance, each printed once
 * at the top as `#blocked0 = blocked<...>` and named by types. */
typedef struct Aliases {
	const Layout **v;
	const char **names;
	uint32_t n, cap;
	int count[LY_KIND_COUNT];
	Arena *arena;
} Aliases;

typedef struct Printer {
	Buf *b;
	Aliases *al;
	Func *f;
	const PrintOpts *o;
	const char **names;  /* per value, assigned on definition */
	Strtab used;         /* names taken so far */
	Strtab hints;        /* the hints seen, interned */
	Arena arena;
	uint32_t next;       /* next numeric name */
	/* per hint (interned in `used`), the next suffix to try: a hint
	 * given to thousands of values costs one probe each, not thousands */
	struct HintNext { const char *hint; int k; } *hnext;
	uint32_t nhnext, caphnext;
} Printer;

/* A hint as the reader accepts it: [A-Za-z0-9_.] only, never all digits
 * (those are the numbered names), at most 200 bytes. */
static const char *
clean_hint(const char *hint, char *out, size_t cap)
{
	size_t i, n = 0;
	bool digits = true;

	if (!hint || !*hint)
		return NULL;
	for (i = 0; hint[i] && n + 2 < cap && i < 200; i++) {
		char ch = hint[i];
		bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
			  (ch >= '0' && ch <= '9') || ch == '_' || ch == '.';

		digits = digits && ch >= '0' && ch <= '9';
		out[n++] = ok ? ch : '_';
	}
	out[n] = 0;
	if (digits) {
		memmove(out + 1, out, n + 1);
		out[0] = 'v';
	}
	return out;
}

/* The slot of hint h (interned) in the table of next suffixes. */
static int *
hint_next(Printer *p, const char *h)
{
	uint32_t i, mask;

	if (2 * (p->nhnext + 1) > p->caphnext) {
		struct HintNext *old = p->hnext;
		uint32_t oldcap = p->caphnext;

		p->caphnext = oldcap ? 2 * oldcap : 64;
		p->hnext = arena_alloc(&p->arena, p->caphnext * sizeof *p->hnext);
		mask = p->caphnext - 1;
		for (i = 0; i < oldcap; i++) {
			uint32_t j;

			if (!old[i].hint)
				continue;
			j = (uint32_t)(hash_mix(0, (uintptr_t)old[i].hint) & mask);
			while (p->hnext[j].hint)
				j = (j + 1) & mask;
			p->hnext[j] = old[i];
		}
	}
	mask = p->caphnext - 1;
	for (i = (uint32_t)(hash_mix(0, (uintptr_t)h) & mask); p->hnext[i].hint;
	     i = (i + 1) & mask)
		if (p->hnext[i].hint == h)
			return &p->hnext[i].k;
	p->hnext[i].hint = h;
	p->nhnext++;
	return &p->hnext[i].k;
}

static const char *
fresh_name(Printer *p, const char *hint)
{
	char tmp[256], clean[256];
	int *k = NULL;

	hint = clean_hint(hint, clean, sizeof clean - 1);
	if (hint)
		k = hint_next(p, strtab_intern(&p->hints, hint, strlen(hint)));
	for (;;) {
		uint32_t before = p->used.n;
		const char *s;

		if (!hint)
			snprintf(tmp, sizeof tmp, "%u", p->next++);
		else if (*k == 0)
			snprintf(tmp, sizeof tmp, "%s", hint);
		else
			snprintf(tmp, sizeof tmp, "%s.%d", hint, *k);
		if (k)
			++*k;
		s = strtab_cstr(&p->used, tmp);
		if (p->used.n != before)
			return s;
	}
}

static void
define(Printer *p, Value v)
{
	p->names[v] = fresh_name(p, p->f->vals.v[v].name);
}

static void
put_value(Printer *p, Value v)
{
	const char *n = v < p->f->vals.n ? p->names[v] : NULL;

	buf_printf(p->b, "%%%s", n ? n : "<undef>");
}

static const char *
alias_of(void *ud, const Layout *l)
{
	Aliases *al = ud;
	uint32_t i;

	for (i = 0; al && i < al->n; i++)
		if (al->v[i] == l)
			return al->names[i];
	return NULL;
}

static void
alias_add(Aliases *al, const Layout *l)
{
	char tmp[32];

	if (!l || alias_of(al, l))
		return;
	alias_add(al, l->parent);  /* parents are defined first */
	if (al->n == al->cap) {
		uint32_t cap = al->cap ? 2 * al->cap : 16;
		const Layout **v = arena_alloc(al->arena, cap * sizeof *v);
		const char **nm = arena_alloc(al->arena, cap * sizeof *nm);

		if (al->n) {
			memcpy(v, al->v, al->n * sizeof *v);
			memcpy(nm, al->names, al->n * sizeof *nm);
		}
		al->v = v;
		al->names = nm;
		al->cap = cap;
	}
	snprintf(tmp, sizeof tmp, "%s%d", ly_kind_name(l->kind),
		 al->count[l->kind]++);
	al->v[al->n] = l;
	al->names[al->n++] = arena_strdup(al->arena, tmp);
}

static void
alias_type(Aliases *al, Type *t)
{
	for (; t; t = t->elem)
		alias_add(al, t->layout);
}

static void
alias_block(Aliases *al, Func *f, Block *b)
{
	uint32_t i;
	Op *op;

	for (i = 0; i < b->nargs; i++)
		alias_type(al, ir_type(f, b->args[i]));
	for (op = b->first; op; op = op->next) {
		for (i = 0; i < op->nres; i++)
			alias_type(al, ir_type(f, op->res[i]));
		for (i = 0; i < op->attrs.n; i++)
			if (op->attrs.v[i].kind == ATTR_TYPE)
				alias_type(al, op->attrs.v[i].ty);
		for (i = 0; i < op->nregions; i++)
			alias_block(al, f, op->regions[i]);
	}
}

static void
put_type(Printer *p, Type *t)
{
	ty_print_named(p->b, t, p->al ? alias_of : NULL, p->al);
}

static void
put_typed_value(Printer *p, Value v)
{
	put_value(p, v);
	buf_puts(p->b, ": ");
	put_type(p, ir_type(p->f, v));
}

static void
indent(Printer *p, int depth)
{
	int i;

	for (i = 0; i < depth; i++)
		buf_puts(p->b, "  ");
}

static void
put_attrs(Printer *p, AttrList *l)
{
	uint32_t i;

	if (!l->n)
		return;
	buf_puts(p->b, " {");
	for (i = 0; i < l->n; i++) {
		if (i)
			buf_puts(p->b, ", ");
		attr_print(p->b, &l->v[i]);
	}
	buf_putc(p->b, '}');
}

static void print_block(Printer *p, Block *b, int depth);

static void
print_op(Printer *p, Op *op, int depth)
{
	uint32_t i;

	indent(p, depth);
	for (i = 0; i < op->nres; i++) {
		define(p, op->res[i]);
		if (i)
			buf_puts(p->b, ", ");
		put_typed_value(p, op->res[i]);
	}
	if (op->nres)
		buf_puts(p->b, " = ");
	buf_puts(p->b, op_name(op->kind));
	for (i = 0; i < op->nopnds; i++) {
		buf_puts(p->b, i ? ", " : " ");
		put_value(p, op->opnds[i]);
	}
	put_attrs(p, &op->attrs);
	for (i = 0; i < op->nregions; i++) {
		buf_puts(p->b, " {\n");
		print_block(p, op->regions[i], depth + 1);
		indent(p, depth);
		buf_putc(p->b, '}');
	}
	if (p->o && p->o->locs && op->loc.line > 0)
		buf_printf(p->b, " @%d:%d", op->loc.line, op->loc.col);
	buf_putc(p->b, '\n');
}

static void
print_block(Printer *p, Block *b, int depth)
{
	Op *op;
	uint32_t i;

	if (b->nargs && b->parent) {  /* a body's arguments are the parameters */
		indent(p, depth - 1);
		buf_puts(p->b, "^(");
		for (i = 0; i < b->nargs; i++) {
			define(p, b->args[i]);
			if (i)
				buf_puts(p->b, ", ");
			put_typed_value(p, b->args[i]);
		}
		buf_puts(p->b, "):\n");
	}
	for (op = b->first; op; op = op->next)
		print_op(p, op, depth);
}

static const char *kind_word[] = { "kernel", "func", "grid" };

static void
print_func(Buf *b, Func *f, const PrintOpts *o, Aliases *al)
{
	Printer p = { .b = b, .f = f, .o = o, .al = al };
	uint32_t i;

	arena_init(&p.arena, NULL, NULL, NULL);
	strtab_init(&p.used, &p.arena);
	strtab_init(&p.hints, &p.arena);
	p.names = arena_alloc(&p.arena, f->vals.n * sizeof *p.names);
	buf_printf(b, "%s @%s(", kind_word[f->kind], f->name);
	for (i = 0; i < f->body->nargs; i++) {
		define(&p, f->body->args[i]);
		if (i)
			buf_puts(b, ", ");
		put_typed_value(&p, f->body->args[i]);
	}
	buf_putc(b, ')');
	if (f->nrtypes) {
		buf_puts(b, " -> (");
		for (i = 0; i < f->nrtypes; i++) {
			if (i)
				buf_puts(b, ", ");
			put_type(&p, f->rtypes[i]);
		}
		buf_putc(b, ')');
	}
	put_attrs(&p, &f->attrs);
	if (o && o->locs && f->loc.line > 0)
		buf_printf(b, " @%d:%d", f->loc.line, f->loc.col);
	buf_puts(b, " {\n");
	print_block(&p, f->body, 1);
	buf_puts(b, "}\n");
	arena_reset(&p.arena);
}

void
ir_print_func(Buf *b, Func *f, const PrintOpts *o)
{
	print_func(b, f, o, NULL);
}

void
ir_print_module(Buf *b, Module *m, const PrintOpts *o)
{
	Aliases al = { 0 };
	Arena a;
	uint32_t i;

	arena_init(&a, NULL, NULL, NULL);
	al.arena = &a;
	for (i = 0; i < m->funcs.n; i++) {
		Func *f = m->funcs.v[i];

		for (uint32_t k = 0; k < f->nrtypes; k++)
			alias_type(&al, f->rtypes[k]);
		alias_block(&al, f, f->body);
	}
	if (m->source && *m->source) {
		buf_puts(b, "module ");
		ir_print_string(b, m->source);
		buf_putc(b, '\n');
	}
	if (al.n)
		buf_putc(b, '\n');
	for (i = 0; i < al.n; i++) {
		buf_printf(b, "#%s = ", al.names[i]);
		ly_print(b, al.v[i], alias_of, &al);
		buf_putc(b, '\n');
	}
	for (i = 0; i < m->funcs.n; i++) {
		buf_putc(b, '\n');
		print_func(b, m->funcs.v[i], o, &al);
	}
	arena_reset(&a);
}

void
ir_print_op(Buf *b, Func *f, Op *op, const PrintOpts *o)
{
	Printer p = { .b = b, .f = f, .o = o };
	uint32_t i;

	arena_init(&p.arena, NULL, NULL, NULL);
	strtab_init(&p.used, &p.arena);
	strtab_init(&p.hints, &p.arena);
	p.names = arena_alloc(&p.arena, f->vals.n * sizeof *p.names);
	for (i = 1; i < f->vals.n; i++) {
		char tmp[16];

		snprintf(tmp, sizeof tmp, "v%u", i);
		p.names[i] = arena_strdup(&p.arena, tmp);
	}
	p.next = f->vals.n;
	print_op(&p, op, 0);
	arena_reset(&p.arena);
}

void
ir_dump_func(Func *f)
{
	Buf b = { 0 };
	PrintOpts o = { .locs = true };

	ir_print_func(&b, f, &o);
	fputs(b.s ? b.s : "", stderr);
	buf_free(&b);
}
