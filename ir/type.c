/* type.c: interned types, their queries and their printed form. */
#include <string.h>

#include "ir.h"

static const char *scalar_names[TY_F64 + 1] = {
	[TY_VOID] = "void", [TY_I1] = "i1", [TY_I8] = "i8", [TY_I16] = "i16",
	[TY_I32] = "i32", [TY_I64] = "i64", [TY_U8] = "u8", [TY_U16] = "u16",
	[TY_U32] = "u32", [TY_U64] = "u64", [TY_F8E4M3] = "f8e4m3",
	[TY_F8E5M2] = "f8e5m2", [TY_F16] = "f16", [TY_BF16] = "bf16",
	[TY_F32] = "f32", [TY_F64] = "f64",
};

static const int scalar_bits[TY_F64 + 1] = {
	[TY_I1] = 1, [TY_I8] = 8, [TY_I16] = 16, [TY_I32] = 32, [TY_I64] = 64,
	[TY_U8] = 8, [TY_U16] = 16, [TY_U32] = 32, [TY_U64] = 64,
	[TY_F8E4M3] = 8, [TY_F8E5M2] = 8, [TY_F16] = 16, [TY_BF16] = 16,
	[TY_F32] = 32, [TY_F64] = 64,
};

void
ir_ctx_init(IrCtx *c, Arena *a)
{
	int k;

	memset(c, 0, sizeof *c);
	c->arena = a;
	strtab_init(&c->strs, a);
	ly_tab_init(&c->layouts, a, NULL);
	for (k = 0; k <= TY_F64; k++) {
		Type *t = arena_alloc(a, sizeof *t);

		t->kind = (TypeKind)k;
		c->types.scalars[k] = t;
	}
}

Type *
ty_scalar(IrCtx *c, TypeKind k)
{
	if (NEVER(k > TY_F64))
		k = TY_VOID;
	return c->types.scalars[k];
}

static uint64_t
type_hash(const Type *t)
{
	uint64_t h = hash_mix(t->kind, t->rank);
	int i;

	h = hash_mix(h, t->as);
	h = hash_mix(h, (uint64_t)(uintptr_t)t->elem);
	h = hash_mix(h, (uint64_t)(uintptr_t)t->layout);
	for (i = 0; i < t->rank; i++)
		h = hash_mix(h, (uint64_t)t->shape[i]);
	return h;
}

static bool
type_eq(const Type *a, const Type *b)
{
	return a->kind == b->kind && a->rank == b->rank && a->as == b->as &&
	       a->elem == b->elem && a->layout == b->layout &&
	       memcmp(a->shape, b->shape, sizeof a->shape) == 0;
}

static Type *
intern(IrCtx *c, const Type *proto)
{
	Type **bucket = &c->types.buckets[type_hash(proto) & 255];
	Type *t;

	for (t = *bucket; t; t = t->next)
		if (type_eq(t, proto))
			return t;
	t = arena_dup(c->arena, proto, sizeof *t);
	t->next = *bucket;
	*bucket = t;
	return t;
}

Type *
ty_ptr(IrCtx *c, Type *elem, int as)
{
	Type p = { .kind = TY_PTR, .elem = elem, .as = (uint8_t)as };

	return intern(c, &p);
}

static Type *
shaped(IrCtx *c, TypeKind k, Type *elem, int rank, const int64_t *shape)
{
	Type p = { .kind = k, .elem = elem, .rank = (uint8_t)rank };

	if (NEVER(rank < 0 || rank > TY_MAX_RANK))
		rank = 0;
	if (rank)
		memcpy(p.shape, shape, (size_t)rank * sizeof *shape);
	return intern(c, &p);
}

Type *
ty_tile(IrCtx *c, Type *elem, int rank, const int64_t *shape)
{
	if (rank == 0)
		return elem;
	return shaped(c, TY_TILE, elem, rank, shape);
}

Type *
ty_smem(IrCtx *c, Type *elem, int rank, const int64_t *shape)
{
	return shaped(c, TY_SMEM, elem, rank, shape);
}

Type *
ty_mbar(IrCtx *c, int64_t n)
{
	return n < 0 ? shaped(c, TY_MBAR, NULL, 0, NULL)
		     : shaped(c, TY_MBAR, NULL, 1, &n);
}

Type *
ty_tma(IrCtx *c, Type *elem, int rank, const int64_t *box)
{
	Type p = { .kind = TY_TMA, .elem = elem, .rank = (uint8_t)rank };

	if (box)
		memcpy(p.shape, box, (size_t)rank * sizeof *box);
	return intern(c, &p);
}

Type *
ty_simple(IrCtx *c, TypeKind k)
{
	Type p = { .kind = k };

	if (k == TY_VOID)
		return c->types.scalars[TY_VOID];
	return intern(c, &p);
}

Type *
ty_with_layout(IrCtx *c, Type *t, const Layout *layout)
{
	Type p = *t;

	p.next = NULL;
	p.layout = layout;
	return intern(c, &p);
}

Type *
ty_strip(IrCtx *c, Type *t)
{
	return (t->kind == TY_TILE || t->kind == TY_SMEM || t->kind == TY_TMA) &&
		       t->layout
		       ? ty_with_layout(c, t, NULL) : t;
}

Type *
ty_like(IrCtx *c, Type *t, Type *elem)
{
	Type *r;

	if (t->kind != TY_TILE)
		return elem;
	r = ty_tile(c, elem, t->rank, t->shape);
	return t->layout ? ty_with_layout(c, r, t->layout) : r;
}

bool
ty_is_unsigned(Type *t)
{
	return ty_is_unsigned_kind(ty_elem(t)->kind);
}

int
ty_bits(Type *t)
{
	t = ty_elem(t);
	if (t->kind == TY_PTR)
		return 64;
	if (t->kind == TY_SMEM || t->kind == TY_TMA)
		return ty_bits(t->elem);
	return t->kind <= TY_F64 ? scalar_bits[t->kind] : 0;
}

int
ty_bytes(Type *t)
{
	int b = ty_bits(t);

	return b == 1 ? 1 : b / 8;
}

int64_t
ty_numel(Type *t)
{
	int64_t n = 1;
	int i;

	if (t->kind != TY_TILE && t->kind != TY_SMEM)
		return 1;
	for (i = 0; i < t->rank; i++)
		n *= t->shape[i];
	return n;
}

const char *
ty_kind_name(TypeKind k)
{
	return k <= TY_F64 ? scalar_names[k] : "?";
}

int
ty_kind_from_name(const char *s, size_t n)
{
	int k;

	for (k = TY_I1; k <= TY_F64; k++)
		if (strlen(scalar_names[k]) == n &&
		    memcmp(scalar_names[k], s, n) == 0)
			return k;
	return -1;
}

bool
is_pow2(int64_t v)
{
	return v > 0 && (v & (v - 1)) == 0;
}

static void
print_shape(Buf *b, Type *t)
{
	int i;

	for (i = 0; i < t->rank; i++)
		buf_printf(b, "%lldx", (long long)t->shape[i]);
}

void
ty_print(Buf *b, Type *t)
{
	ty_print_named(b, t, NULL, NULL);
}

void
ty_print_named(Buf *b, Type *t, LayoutNamer name, void *ud)
{
	const char *s;

	switch (t->kind) {
	case TY_PTR:
		buf_puts(b, "ptr<");
		ty_print(b, t->elem);
		if (t->as != AS_GLOBAL)
			buf_printf(b, ", %d", t->as);
		buf_putc(b, '>');
		break;
	case TY_TILE:
	case TY_SMEM:
		buf_puts(b, t->kind == TY_TILE ? "tile<" : "smem<");
		print_shape(b, t);
		ty_print(b, t->elem);
		if (t->layout) {
			buf_puts(b, ", ");
			if (name && (s = name(ud, t->layout)))
				buf_printf(b, "#%s", s);
			else
				ly_print(b, t->layout, name, ud);
		}
		buf_putc(b, '>');
		break;
	case TY_MBAR:
		if (t->rank)
			buf_printf(b, "mbar<%lld>", (long long)t->shape[0]);
		else
			buf_puts(b, "mbar");
		break;
	case TY_TMA:
		buf_puts(b, "tma<");
		if (t->shape[0]) {
			print_shape(b, t);
			ty_print(b, t->elem);
			if (t->layout) {
				buf_puts(b, ", ");
				if (name && (s = name(ud, t->layout)))
					buf_printf(b, "#%s", s);
				else
					ly_print(b, t->layout, name, ud);
			}
		} else {
			ty_print(b, t->elem);
			buf_printf(b, ", %d", t->rank);
		}
		buf_putc(b, '>');
		break;
	case TY_PIPE:
		buf_puts(b, "pipe");
		break;
	case TY_SCHED:
		buf_puts(b, "sched");
		break;
	default:
		buf_puts(b, ty_kind_name(t->kind));
		break;
	}
}
