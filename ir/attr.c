/* attr.c: attribute lists (small, ordered, names interned). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"

Attr *
attr_find(AttrList *l, const char *name)
{
	uint32_t i;

	for (i = 0; i < l->n; i++)
		if (strcmp(l->v[i].name, name) == 0)
			return &l->v[i];
	return NULL;
}

bool
attr_has(AttrList *l, const char *name)
{
	return attr_find(l, name) != NULL;
}

int64_t
attr_int(AttrList *l, const char *name, int64_t dflt)
{
	Attr *a = attr_find(l, name);

	return a && a->kind == ATTR_INT ? a->i : dflt;
}

const char *
attr_str(AttrList *l, const char *name)
{
	Attr *a = attr_find(l, name);

	return a && (a->kind == ATTR_STR || a->kind == ATTR_SYM) ? a->s : NULL;
}

void
attr_remove(IrCtx *c, AttrList *l, const char *name)
{
	Attr *v;
	uint32_t i, n = 0;

	if (!attr_find(l, name))
		return;
	/* a fresh array: copied ops may share the old one */
	v = arena_alloc(c->arena, l->n * sizeof *v);
	for (i = 0; i < l->n; i++)
		if (strcmp(l->v[i].name, name) != 0)
			v[n++] = l->v[i];
	l->v = v;
	l->n = l->cap = n;
}

void
attr_set(IrCtx *c, AttrList *l, Attr a)
{
	Attr *old;

	a.name = strtab_cstr(&c->strs, a.name);
	if ((old = attr_find(l, a.name))) {
		*old = a;
		return;
	}
	vec_push(c->arena, l, a);
}

void
attr_set_int(IrCtx *c, AttrList *l, const char *name, int64_t v)
{
	attr_set(c, l, (Attr){ .name = name, .kind = ATTR_INT, .i = v });
}

void
attr_set_float(IrCtx *c, AttrList *l, const char *name, double v)
{
	attr_set(c, l, (Attr){ .name = name, .kind = ATTR_FLOAT, .f = v });
}

void
attr_set_str(IrCtx *c, AttrList *l, const char *name, const char *s)
{
	attr_set(c, l, (Attr){ .name = name, .kind = ATTR_STR,
				.s = strtab_cstr(&c->strs, s) });
}

void
attr_set_sym(IrCtx *c, AttrList *l, const char *name, const char *s)
{
	attr_set(c, l, (Attr){ .name = name, .kind = ATTR_SYM,
				.s = strtab_cstr(&c->strs, s) });
}

void
attr_set_ints(IrCtx *c, AttrList *l, const char *name, const int64_t *v,
	      uint32_t n)
{
	Attr a = { .name = name, .kind = ATTR_INTS };

	a.ints.v = arena_dup(c->arena, v, n * sizeof *v);
	a.ints.n = n;
	attr_set(c, l, a);
}

bool
attr_equal(const Attr *a, const Attr *b)
{
	if (a->name != b->name && strcmp(a->name, b->name) != 0)
		return false;
	if (a->kind != b->kind)
		return false;
	switch (a->kind) {
	case ATTR_INT:
		return a->i == b->i;
	case ATTR_FLOAT:
		return memcmp(&a->f, &b->f, sizeof a->f) == 0;
	case ATTR_STR:
	case ATTR_SYM:
		return strcmp(a->s, b->s) == 0;
	case ATTR_TYPE:
		return a->ty == b->ty;
	case ATTR_INTS:
		return a->ints.n == b->ints.n &&
		       (a->ints.n == 0 ||
			memcmp(a->ints.v, b->ints.v,
			       a->ints.n * sizeof *a->ints.v) == 0);
	}
	return false;
}

uint64_t
attr_hash(const Attr *a)
{
	uint64_t h = hash_bytes(a->name, strlen(a->name), a->kind);

	switch (a->kind) {
	case ATTR_INT:
		return hash_mix(h, (uint64_t)a->i);
	case ATTR_FLOAT:
		return hash_mix(h, hash_bytes(&a->f, sizeof a->f, 0));
	case ATTR_STR:
	case ATTR_SYM:
		return hash_mix(h, hash_bytes(a->s, strlen(a->s), 0));
	case ATTR_TYPE:
		return hash_mix(h, (uint64_t)(uintptr_t)a->ty);
	case ATTR_INTS:
		return hash_mix(h, hash_bytes(a->ints.v,
					      a->ints.n * sizeof *a->ints.v, 0));
	}
	return h;
}

/* Floats print so that reading them back gives the same bits. */
static void
print_float(Buf *b, double f)
{
	char tmp[64];
	int prec;

	if (isnan(f)) {
		buf_puts(b, "nan");
		return;
	}
	if (isinf(f)) {
		buf_puts(b, f < 0 ? "-inf" : "inf");
		return;
	}
	for (prec = 15; prec < 17; prec++) {  /* the shortest that reads back */
		snprintf(tmp, sizeof tmp, "%.*g", prec, f);
		if (strtod(tmp, NULL) == f)
			break;
	}
	snprintf(tmp, sizeof tmp, "%.*g", prec, f);
	if (!strpbrk(tmp, ".e"))
		strcat(tmp, ".0");
	buf_puts(b, tmp);
}

void
ir_print_string(Buf *b, const char *s)
{
	buf_putc(b, '"');
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			buf_printf(b, "\\%c", ch);
		else if (ch < 0x20 || ch >= 0x7f)
			buf_printf(b, "\\x%02x", ch);
		else
			buf_putc(b, (char)ch);
	}
	buf_putc(b, '"');
}

void
attr_print(Buf *b, const Attr *a)
{
	uint32_t i;

	buf_printf(b, "%s = ", a->name);
	switch (a->kind) {
	case ATTR_INT:
		buf_printf(b, "%lld", (long long)a->i);
		break;
	case ATTR_FLOAT:
		print_float(b, a->f);
		break;
	case ATTR_SYM:
		buf_puts(b, a->s);
		break;
	case ATTR_STR:
		ir_print_string(b, a->s);
		break;
	case ATTR_TYPE:
		buf_putc(b, '!');
		ty_print(b, a->ty);
		break;
	case ATTR_INTS:
		buf_putc(b, '[');
		for (i = 0; i < a->ints.n; i++)
			buf_printf(b, "%s%lld", i ? ", " : "",
				   (long long)a->ints.v[i]);
		buf_putc(b, ']');
		break;
	}
}
