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

typedef struct Printer {
	Buf *b;
	Func *f;
	const PrintOpts *o;
	const char **names;  /* per value, assigned on definition */
	Strtab used;         /* names taken so far */
	Arena arena;
	uint32_t next;       /* next numeric name */
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

static const char *
fresh_name(Printer *p, const char *hint)
{
	char tmp[256], clean[256];
	int k;

	hint = clean_hint(hint, clean, sizeof clean - 1);
	for (k = 0;; k++) {
		uint32_t before = p->used.n;
		const char *s;

		if (!hint)
			snprintf(tmp, sizeof tmp, "%u", p->next++);
		else if (k == 0)
			snprintf(tmp, sizeof tmp, "%s", hint);
		else
			snprintf(tmp, sizeof tmp, "%s.%d", hint, k);
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

static void
put_typed_value(Printer *p, Value v)
{
	put_value(p, v);
	buf_puts(p->b, ": ");
	ty_print(p->b, ir_type(p->f, v));
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

void
ir_print_func(Buf *b, Func *f, const PrintOpts *o)
{
	Printer p = { .b = b, .f = f, .o = o };
	uint32_t i;

	arena_init(&p.arena, NULL, NULL, NULL);
	strtab_init(&p.used, &p.arena);
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
			ty_print(b, f->rtypes[i]);
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
ir_print_module(Buf *b, Module *m, const PrintOpts *o)
{
	uint32_t i;

	if (m->source && *m->source) {
		buf_puts(b, "module ");
		ir_print_string(b, m->source);
		buf_putc(b, '\n');
	}
	for (i = 0; i < m->funcs.n; i++) {
		buf_putc(b, '\n');
		ir_print_func(b, m->funcs.v[i], o);
	}
}

void
ir_print_op(Buf *b, Func *f, Op *op, const PrintOpts *o)
{
	Printer p = { .b = b, .f = f, .o = o };
	uint32_t i;

	arena_init(&p.arena, NULL, NULL, NULL);
	strtab_init(&p.used, &p.arena);
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
