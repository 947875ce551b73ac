/*
 * gen.c: random well-typed tlx programs, csmith-style.  A seed gives one
 * kernel: pointer parameters (inputs, outputs, inouts for atomics) and
 * scalar sizes, tiles of random power-of-two shapes (rank 0 to 2, 1 to
 * 4096 elements) of every element type, loads with ragged masks and
 * `other`, gathers, broadcasting, arithmetic, math, comparisons, where,
 * conversions (fp8 through .to), bitcasts, reductions, trans, reshape,
 * dot, loops with carried vars, if/else, while, shared buffers and their
 * views, atomics, device functions, and a store of every value.
 *
 * Every program is well typed by construction: an expression is asked
 * for with its element type and shape (expr), or with a shape that
 * broadcasts to one (operand), and only the productions that give that
 * type and shape are chosen.  What the language leaves undefined or
 * unspecified is never generated:
 *   - integer division and remainder by a divisor that is a positive
 *     literal, ((b & 15) + 1), or (b | 1) for unsigned b: never zero, and
 *     never -1 (INT_MIN / -1 is not defined by docs/language.md);
 *   - shift counts are any value (the language takes them modulo the
 *     width), but never a shift of two constants (a constant shift past
 *     the width is an error);
 *   - no arithmetic, neg, abs, min/max or shifts on i1 (only logic,
 *     comparisons, where, conversions and sum as a count);
 *   - atomics: on distinct addresses (each element of each program its
 *     own), or, for integer add/max/min/and/or/xor only, many elements on
 *     one address without using the returned values (their order is not
 *     defined);
 *   - memory: inputs are read-only and every program writes only its own
 *     part of an output, so programs never race; shared buffers are
 *     written whole before they are read, with sync_threads() around
 *     every store.
 *
 * Every statement is one line and every block's header and closing brace
 * lines of their own, which is what the reducer (reduce.c) works on.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"
#include "support/support.h"

const char *const fz_construct_names[FZ_C_COUNT] = {
#define X(n) #n,
	FZ_CONSTRUCTS(X)
#undef X
};

/* ---- element types -------------------------------------------------------- */

enum {
	T_I1, T_I8, T_U8, T_I16, T_U16, T_I32, T_U32, T_I64, T_U64,
	T_F16, T_BF16, T_F32, T_F64, T_F8E4M3, T_F8E5M2, T_COUNT
};

static const struct {
	const char *name;
	int bits;
	char cls;  /* b: i1, s: signed, u: unsigned, f: float, 8: fp8 */
	int rt;    /* TLXRT_* */
	int weight;
} tys[T_COUNT] = {
	{ "i1", 1, 'b', TLXRT_I1, 8 },
	{ "i8", 8, 's', TLXRT_I8, 5 },
	{ "u8", 8, 'u', TLXRT_U8, 5 },
	{ "i16", 16, 's', TLXRT_I16, 2 },
	{ "u16", 16, 'u', TLXRT_U16, 2 },
	{ "i32", 32, 's', TLXRT_I32, 20 },
	{ "u32", 32, 'u', TLXRT_U32, 4 },
	{ "i64", 64, 's', TLXRT_I64, 4 },
	{ "u64", 64, 'u', TLXRT_U64, 2 },
	{ "f16", 16, 'f', TLXRT_F16, 10 },
	{ "bf16", 16, 'f', TLXRT_BF16, 10 },
	{ "f32", 32, 'f', TLXRT_F32, 25 },
	{ "f64", 64, 'f', TLXRT_F64, 3 },
	{ "f8e4m3", 8, '8', TLXRT_F8E4M3, 0 },
	{ "f8e5m2", 8, '8', TLXRT_F8E5M2, 0 },
};

static bool is_bool(int t) { return tys[t].cls == 'b'; }
static bool is_float(int t) { return tys[t].cls == 'f'; }
static bool is_fp8(int t) { return tys[t].cls == '8'; }
static bool is_uns(int t) { return tys[t].cls == 'u'; }
/* integers, i1 included */
static bool is_int(int t) { return strchr("bsu", tys[t].cls) != NULL; }
/* what + - * min max neg abs take */
static bool is_num(int t) { return !is_bool(t) && !is_fp8(t); }

/* ---- the generator's state -------------------------------------------------- */

enum { MAXV = 384, MAXP = 48, MAXS = 6, MAXF = 4, MAXN = 4096 };

typedef struct Shape {
	int rank;  /* 0: a scalar */
	int d[2];
} Shape;

typedef struct Var {
	const char *name;
	int t;
	Shape s;
	int depth;  /* the block nesting it was declared at */
	bool mut;   /* a var: assignable */
	bool ro;    /* loop counters: not assigned by generated code */
	bool stored;
} Var;

typedef struct Ptr {
	const char *name;
	int t;
	FzRole role;
	size_t n;
	Shape s;           /* outputs: the shape stored, at offsets offs */
	const char *offs;
} Ptr;

typedef struct Smem {
	const char *name;
	int t;
	int rank;
	int d[3];
} Smem;

typedef struct Gen {
	uint64_t rng;
	Arena arena;
	const FzGenOpts *o;
	FzGenStats *st;
	Buf body, fns;
	int indent;
	Var vars[MAXV];
	int nvars;
	int depth;        /* block nesting inside the kernel */
	int loop_var;     /* index of the innermost loop counter, or -1 */
	Ptr ptrs[MAXP];
	int nptrs;
	Smem smem[MAXS];
	int nsmem, smem_bytes;
	int nfn;
	bool in_fn;       /* a device function's body: no kernel names */
	int nprog, warps, nname;
	int stmts;        /* statements left to generate */
	size_t L;         /* elements of each input */
} Gen;

static uint32_t
rnd(Gen *g, uint32_t n)
{
	/* splitmix64 */
	uint64_t z = (g->rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	z ^= z >> 31;
	return n ? (uint32_t)(z % n) : 0;
}

static bool
chance(Gen *g, int percent)
{
	return (int)rnd(g, 100) < percent;
}

static char *
fmt(Gen *g, const char *f, ...) TLX_PRINTF(2, 3);

static char *
fmt(Gen *g, const char *f, ...)
{
	va_list ap;
	char *s;

	va_start(ap, f);
	s = arena_vprintf(&g->arena, f, ap);
	va_end(ap);
	return s;
}

static void
count(Gen *g, int c)
{
	if (g->st)
		g->st->counts[c]++;
}

static void
line(Gen *g, const char *f, ...) TLX_PRINTF(2, 3);

static void
line(Gen *g, const char *f, ...)
{
	va_list ap;
	int i;

	for (i = 0; i < g->indent + 1; i++)
		buf_puts(&g->body, "    ");
	va_start(ap, f);
	buf_vprintf(&g->body, f, ap);
	va_end(ap);
	buf_putc(&g->body, '\n');
}

static int
rand_type(Gen *g)
{
	int i, total = 0, r;

	for (i = 0; i < T_COUNT; i++)
		total += tys[i].weight;
	r = (int)rnd(g, (uint32_t)total);
	for (i = 0; i < T_COUNT; i++)
		if ((r -= tys[i].weight) < 0)
			break;
	return i;
}

/* A type of the given class mix: num (arithmetic), float, int... */
static int
rand_type_where(Gen *g, bool (*ok)(int))
{
	int t, tries;

	for (tries = 0; tries < 64; tries++)
		if (ok(t = rand_type(g)))
			return t;
	return T_F32;
}

static int
numel(Shape s)
{
	return s.rank == 0 ? 1 : s.rank == 1 ? s.d[0] : s.d[0] * s.d[1];
}

static bool
same_shape(Shape a, Shape b)
{
	return a.rank == b.rank && (a.rank < 1 || a.d[0] == b.d[0]) &&
	       (a.rank < 2 || a.d[1] == b.d[1]);
}

static Shape
shape0(void)
{
	Shape s = { 0, { 0, 0 } };

	return s;
}

static Shape
shape1(int n)
{
	Shape s = { 1, { n, 0 } };

	return s;
}

static Shape
shape2(int a, int b)
{
	Shape s = { 2, { a, b } };

	return s;
}

/* 2^e with e mostly in the middle of [0, maxe] */
static int
rand_dim(Gen *g, int maxe)
{
	int e = (int)rnd(g, (uint32_t)maxe + 1);

	if (e > 8 && chance(g, 60))
		e = 3 + (int)rnd(g, 5);
	return 1 << e;
}

static Shape
rand_shape(Gen *g)
{
	int r = (int)rnd(g, 100), a;

	if (r < 12)
		return shape0();
	if (r < 55)
		return shape1(rand_dim(g, 12));
	a = rand_dim(g, 7);
	while (a * 2 > MAXN)
		a /= 2;
	return shape2(a, rand_dim(g, 12 - __builtin_ctz((unsigned)a)));
}

static const char *
dims_str(Gen *g, Shape s)
{
	return s.rank == 1 ? fmt(g, "[%d]", s.d[0])
			   : fmt(g, "[%d, %d]", s.d[0], s.d[1]);
}

static const char *
type_str(Gen *g, int t, Shape s)
{
	if (s.rank == 0)
		return tys[t].name;
	return s.rank == 1 ? fmt(g, "%s[%d]", tys[t].name, s.d[0])
			   : fmt(g, "%s[%d, %d]", tys[t].name, s.d[0], s.d[1]);
}

static const char *
fresh(Gen *g, const char *prefix)
{
	return fmt(g, "%s%d", prefix, g->nname++);
}

static Var *
add_var(Gen *g, const char *name, int t, Shape s, bool mut)
{
	Var *v;

	if (g->nvars == MAXV)
		return NULL;
	v = &g->vars[g->nvars++];
	memset(v, 0, sizeof *v);
	v->name = name;
	v->t = t;
	v->s = s;
	v->depth = g->depth;
	v->mut = mut;
	if (g->st)
		g->st->types[t]++;
	return v;
}

/* ---- literals ------------------------------------------------------------- */

/* A weakly typed literal that fits t; never negative for unsigned. */
static const char *
lit(Gen *g, int t)
{
	static const char *const floats[] = {
		"0.0", "1.0", "-1.0", "0.5", "2.0", "-3.25", "0.001", "100.0",
		"0.1", "-0.0", "1.5", "7.0", "-0.75", "3.0",
	};
	static const char *const maxs[] = {
		[T_I8] = "127", [T_U8] = "255", [T_I16] = "32767",
		[T_U16] = "65535", [T_I32] = "2147483647",
		[T_U32] = "4294967295", [T_I64] = "9223372036854775807",
		[T_U64] = "18446744073709551615",
	};
	static const char *const mins[] = {
		[T_I8] = "-127", [T_I16] = "-32767", [T_I32] = "-2147483647",
		[T_I64] = "-9223372036854775807",
	};

	if (is_bool(t))
		return chance(g, 50) ? "true" : "false";
	if (is_float(t) || is_fp8(t)) {
		if (chance(g, 3))
			return chance(g, 50) ? "inf" : "-inf";
		return floats[rnd(g, countof(floats))];
	}
	if (chance(g, 8))
		return maxs[t];
	if (!is_uns(t) && chance(g, 6))
		return mins[t];
	if (is_uns(t))
		return fmt(g, "%u", rnd(g, 17));
	return fmt(g, "%d", (int)rnd(g, 25) - 8);
}

/* A literal that fits every integer type and is never 0 or -1. */
static const char *
divisor_lit(Gen *g)
{
	return fmt(g, "%u", 1 + rnd(g, 7));
}

/* ---- expressions ---------------------------------------------------------------- */

static char *expr(Gen *g, int t, Shape s, int d);
static char *operand(Gen *g, int t, Shape s, int d);
static char *load_expr(Gen *g, int t, Shape s, int d);

/* Offsets, within a program's part, of the elements of a tile of shape
 * s: row-major, or column-major when tr (both a permutation). */
static const char *
flat(Gen *g, Shape s, bool tr)
{
	if (s.rank == 0)
		return "pid";
	if (s.rank == 1)
		return fmt(g, "(pid * %d + range(%d))", s.d[0], s.d[0]);
	if (tr)
		return fmt(g, "(pid * %d + range(%d)[:, None] + range(%d)[None, :] * %d)",
			   numel(s), s.d[0], s.d[1], s.d[0]);
	return fmt(g, "(pid * %d + range(%d)[:, None] * %d + range(%d)[None, :])",
		   numel(s), s.d[0], s.d[1], s.d[1]);
}

static Ptr *
add_ptr(Gen *g, const char *prefix, int t, FzRole role, size_t n)
{
	Ptr *p;

	if (g->nptrs == MAXP)
		return NULL;
	p = &g->ptrs[g->nptrs++];
	p->name = fresh(g, prefix);
	p->t = t;
	p->role = role;
	p->n = n;
	return p;
}

/* An input of element type t: one of those made before, or a new one. */
static Ptr *
input(Gen *g, int t)
{
	int i, n = 0;

	for (i = 0; i < g->nptrs; i++)
		if (g->ptrs[i].role == FZ_IN && g->ptrs[i].t == t)
			n++;
	if (n && (n > 2 || chance(g, 70))) {
		int k = (int)rnd(g, (uint32_t)n);

		for (i = 0; i < g->nptrs; i++)
			if (g->ptrs[i].role == FZ_IN && g->ptrs[i].t == t &&
			    k-- == 0)
				return &g->ptrs[i];
	}
	return add_ptr(g, "x", t, FZ_IN, g->L);
}

/* A variable of type t and shape s in scope, or NULL. */
static Var *
find_var(Gen *g, int t, Shape s)
{
	int i, n = 0, k;

	for (i = 0; i < g->nvars; i++)
		if (g->vars[i].t == t && same_shape(g->vars[i].s, s))
			n++;
	if (!n)
		return NULL;
	k = (int)rnd(g, (uint32_t)n);
	for (i = 0; i < g->nvars; i++)
		if (g->vars[i].t == t && same_shape(g->vars[i].s, s) && k-- == 0)
			return &g->vars[i];
	return NULL;
}

/* A variable of shape s and any type but t (and not i1 unless to i1). */
static Var *
find_var_shape(Gen *g, int t, Shape s)
{
	int i, n = 0, k;

	for (i = 0; i < g->nvars; i++)
		if (g->vars[i].t != t && same_shape(g->vars[i].s, s))
			n++;
	if (!n)
		return NULL;
	k = (int)rnd(g, (uint32_t)n);
	for (i = 0; i < g->nvars; i++)
		if (g->vars[i].t != t && same_shape(g->vars[i].s, s) && k-- == 0)
			return &g->vars[i];
	return NULL;
}

static char *
full_expr(Gen *g, int t, Shape s)
{
	count(g, FZ_C_full);
	/* a scalar constant that sema leaves to the IR (and canon folds) */
	if (s.rank == 0 && !is_bool(t) && chance(g, 50))
		return fmt(g, "max(full(%s, [2], %s), axis: 0)", tys[t].name,
			   lit(g, t));
	if (s.rank == 0)
		return g->in_fn ? fmt(g, "program_id(0).to(%s)", tys[t].name)
				: fmt(g, "pid.to(%s)", tys[t].name);
	if (chance(g, 30))
		return fmt(g, "zeros(%s, %s)", tys[t].name, dims_str(g, s));
	return fmt(g, "full(%s, %s, %s)", tys[t].name, dims_str(g, s), lit(g, t));
}

/* An i32 index tile of shape s from ranges. */
static char *
range_expr(Gen *g, Shape s)
{
	count(g, FZ_C_range);
	if (s.rank == 1) {
		int a = (int)rnd(g, 5) - 2;

		if (chance(g, 50))
			return fmt(g, "range(%d)", s.d[0]);
		return fmt(g, "range(%d, %d)", a, a + s.d[0]);
	}
	return fmt(g, "(range(%d)[:, None] * %d + range(%d)[None, :])", s.d[0],
		   s.d[1], s.d[1]);
}

static char *
leaf(Gen *g, int t, Shape s, int d)
{
	Var *v;
	int r;

	for (;;) {
		r = (int)rnd(g, 100);
		if (r < 55 && (v = find_var(g, t, s)))
			return (char *)v->name;
		if (r < 65 && (v = find_var_shape(g, t, s))) {
			count(g, FZ_C_convert);
			return fmt(g, "%s.to(%s)", v->name, tys[t].name);
		}
		if (r < 85 && !g->in_fn)
			return load_expr(g, t, s, d);
		if (r < 90 && t == T_I32 && s.rank > 0)
			return range_expr(g, s);
		if (r < 95 || s.rank == 0)
			break;
		/* a smaller value broadcast */
		if (s.rank == 2 && (v = find_var(g, t, shape1(s.d[1])))) {
			count(g, FZ_C_broadcast);
			return fmt(g, "broadcast_to(%s, %s)", v->name,
				   dims_str(g, s));
		}
	}
	return full_expr(g, t, s);
}

/* A shape that broadcasts to s and is not s. */
static Shape
sub_shape(Gen *g, Shape s)
{
	int r = (int)rnd(g, 4);

	if (s.rank == 0 || r == 0)
		return shape0();
	if (s.rank == 1)
		return shape1(1);
	if (r == 1)
		return shape1(s.d[1]);
	if (r == 2)
		return shape2(s.d[0], 1);
	return shape2(1, s.d[1]);
}

/* An expression whose shape broadcasts to s: s itself, a smaller shape,
 * or a weak literal. */
static char *
operand_lit(Gen *g, int t, Shape s, int d, bool allow_lit)
{
	int r = (int)rnd(g, 100);
	Shape ss;
	char *e;

	if (r < 15 && allow_lit)
		return (char *)lit(g, t);
	if (r < 35 && s.rank > 0) {
		ss = sub_shape(g, s);
		if (ss.rank == 2 && ss.d[1] == 1 && chance(g, 50)) {
			count(g, FZ_C_expand);
			e = expr(g, t, shape1(ss.d[0]), d);
			return chance(g, 50) ? fmt(g, "%s[:, None]", e)
					     : fmt(g, "expand_dims(%s, 1)", e);
		}
		if (ss.rank == 2 && ss.d[0] == 1 && chance(g, 50)) {
			count(g, FZ_C_expand);
			e = expr(g, t, shape1(ss.d[1]), d);
			return chance(g, 50) ? fmt(g, "%s[None, :]", e)
					     : fmt(g, "expand_dims(%s, 0)", e);
		}
		return expr(g, t, ss, d);
	}
	return expr(g, t, s, d);
}

static char *
operand(Gen *g, int t, Shape s, int d)
{
	return operand_lit(g, t, s, d, true);
}

/* a op b with one side exactly t/s, the order random */
static char *
binary(Gen *g, const char *op, int t, Shape s, int d)
{
	char *a = expr(g, t, s, d - 1), *b;

	if (chance(g, 8))  /* x - x, x ^ x, x == x, ...: canon's identities */
		return fmt(g, "(%s %s %s)", a, op, a);
	b = operand(g, t, s, d - 1);
	if (chance(g, 50))
		return fmt(g, "(%s %s %s)", b, op, a);
	return fmt(g, "(%s %s %s)", a, op, b);
}

static char *
p_arith(Gen *g, int t, Shape s, int d)
{
	static const char *const ops[] = { "+", "-", "*" };

	if (!is_num(t))
		return NULL;
	if (is_float(t) && chance(g, 20)) {
		count(g, FZ_C_divrem);
		return binary(g, chance(g, 70) ? "/" : "%", t, s, d);
	}
	count(g, FZ_C_arith);
	return binary(g, ops[rnd(g, 3)], t, s, d);
}

static char *
p_divrem(Gen *g, int t, Shape s, int d)
{
	const char *op = chance(g, 60) ? "/" : "%";
	char *a, *b;

	if (!is_num(t) || is_float(t))
		return NULL;
	count(g, FZ_C_divrem);
	a = expr(g, t, s, d - 1);
	switch (rnd(g, 3)) {
	case 0:
		b = (char *)divisor_lit(g);
		break;
	/* b is never a literal here: two literals of different widths fold
	 * to a typed (not weak) constant (sema's weak flag is lost when one
	 * is widened), which would change the division's type */
	case 1:
		if (is_uns(t)) {
			b = fmt(g, "(%s | 1)", expr(g, t, s, d - 1));
			break;
		}
		/* fall through */
	default:
		b = fmt(g, "((%s & 15) + 1)", expr(g, t, s, d - 1));
		break;
	}
	return fmt(g, "(%s %s %s)", a, op, b);
}

static char *
p_bitwise(Gen *g, int t, Shape s, int d)
{
	static const char *const ops[] = { "&", "|", "^" };

	if (!is_int(t))
		return NULL;
	if (is_bool(t) && chance(g, 40)) {
		count(g, FZ_C_logical);
		return binary(g, chance(g, 50) ? "&&" : "||", t, s, d);
	}
	count(g, FZ_C_bitwise);
	return binary(g, ops[rnd(g, 3)], t, s, d);
}

static char *
p_shift(Gen *g, int t, Shape s, int d)
{
	char *a, *b;

	if (!is_int(t) || is_bool(t))
		return NULL;
	count(g, FZ_C_shift);
	a = expr(g, t, s, d - 1);
	b = operand(g, t, s, d - 1);
	return fmt(g, "(%s %s %s)", a, chance(g, 50) ? "<<" : ">>", b);
}

static char *
p_unary(Gen *g, int t, Shape s, int d)
{
	char *a;

	if (is_fp8(t))
		return NULL;
	count(g, FZ_C_unary);
	a = expr(g, t, s, d - 1);
	if (is_bool(t))
		return fmt(g, "(%s%s)", chance(g, 80) ? "!" : "~", a);
	if (is_int(t) && chance(g, 40))
		return fmt(g, "(~%s)", a);
	return fmt(g, "(-%s)", a);
}

static char *
p_compare(Gen *g, int t, Shape s, int d)
{
	static const char *const ops[] = { "<", "<=", ">", ">=", "==", "!=" };
	int t2;
	char *a, *b;

	if (!is_bool(t))
		return NULL;
	count(g, FZ_C_compare);
	t2 = rand_type_where(g, is_num);
	if (chance(g, 10))
		t2 = T_I1;
	a = expr(g, t2, s, d - 1);
	b = operand(g, t2, s, d - 1);
	return fmt(g, "(%s %s %s)", a, ops[rnd(g, 6)], b);
}

static char *
p_where(Gen *g, int t, Shape s, int d)
{
	char *c, *a, *b;

	if (is_fp8(t))
		return NULL;
	count(g, FZ_C_where);
	/* not a literal: where(true, 1.5, x) is the weak literal 1.5, and
	 * `let v: f32 = 1.5` keeps it weak (a sema bug: a later store of v
	 * into an integer output is refused) */
	c = operand_lit(g, T_I1, s, d - 1, false);
	a = expr(g, t, s, d - 1);
	b = operand(g, t, s, d - 1);
	return chance(g, 50) ? fmt(g, "where(%s, %s, %s)", c, a, b)
			     : fmt(g, "where(%s, %s, %s)", c, b, a);
}

static char *
p_minmax(Gen *g, int t, Shape s, int d)
{
	if (!is_num(t))
		return NULL;
	count(g, FZ_C_minmax);
	return fmt(g, "%s(%s, %s)", chance(g, 50) ? "min" : "max",
		   expr(g, t, s, d - 1), operand(g, t, s, d - 1));
}

static char *
p_math(Gen *g, int t, Shape s, int d)
{
	static const char *const fns[] = {
		"exp", "exp2", "log", "log2", "sqrt", "rsqrt", "sin", "cos",
		"tanh", "erf", "sigmoid", "floor", "ceil", "abs",
	};
	int t2 = t;

	if (is_int(t) && !is_bool(t)) {
		count(g, FZ_C_math);
		return fmt(g, "abs(%s)", expr(g, t, s, d - 1));
	}
	if (!is_float(t))
		return NULL;
	count(g, FZ_C_math);
	if (t == T_F32 && chance(g, 15))  /* integers are converted to f32 */
		t2 = rand_type_where(g, is_num);
	if (is_float(t2) && t2 != t)
		t2 = t;
	/* abs keeps an integer's type; the others convert it to f32 */
	return fmt(g, "%s(%s)", fns[rnd(g, countof(fns) - (t2 != t))],
		   expr(g, t2, s, d - 1));
}

static char *
p_fma(Gen *g, int t, Shape s, int d)
{
	if (!is_float(t))
		return NULL;
	count(g, FZ_C_fma);
	return fmt(g, "fma(%s, %s, %s)", expr(g, t, s, d - 1),
		   operand(g, t, s, d - 1), operand(g, t, s, d - 1));
}

static char *
p_convert(Gen *g, int t, Shape s, int d)
{
	int t2;

	if (is_fp8(t))
		return NULL;
	if (!is_bool(t) && chance(g, 15)) {
		count(g, FZ_C_convert_fp8);
		t2 = rand_type_where(g, is_float);
		return fmt(g, "%s.to(%s).to(%s)", expr(g, t2, s, d - 1),
			   chance(g, 50) ? "f8e4m3" : "f8e5m2", tys[t].name);
	}
	count(g, FZ_C_convert);
	do
		t2 = rand_type(g);
	while (t2 == t);
	return fmt(g, "%s.to(%s)", expr(g, t2, s, d - 1), tys[t].name);
}

static char *
p_bitcast(Gen *g, int t, Shape s, int d)
{
	int c[T_COUNT], n = 0, i, t2;

	if (is_bool(t) || is_fp8(t))
		return NULL;
	for (i = 0; i < T_COUNT; i++)
		if (i != t && tys[i].bits == tys[t].bits && !is_fp8(i))
			c[n++] = i;
	if (!n)
		return NULL;
	count(g, FZ_C_bitcast);
	t2 = c[rnd(g, (uint32_t)n)];
	return fmt(g, "bitcast(%s, %s)", expr(g, t2, s, d - 1), tys[t].name);
}

static char *
p_reduce(Gen *g, int t, Shape s, int d)
{
	static const char *const kinds[] = { "sum", "max", "min", "prod" };
	int k, extra, t2 = t;
	const char *kind;
	Shape src;

	if (is_fp8(t) || s.rank == 2 || (is_bool(t) && t != T_I32))
		return NULL;
	if (is_bool(t))
		return NULL;
	extra = 1 << rnd(g, 7);
	while (extra * numel(s) > MAXN)
		extra /= 2;
	if (s.rank == 0 && chance(g, 30)) {  /* everything, without axis */
		int a = 1 << rnd(g, 5);

		src = shape2(a, extra);
		kind = kinds[rnd(g, chance(g, 20) ? 4 : 3)];
		count(g, FZ_C_reduce);
		return fmt(g, "%s(%s)", kind, expr(g, t, src, d - 1));
	}
	k = (int)rnd(g, (uint32_t)s.rank + 1);
	if (s.rank == 0)
		src = shape1(extra);
	else if (k == 0)
		src = shape2(extra, s.d[0]);
	else
		src = shape2(s.d[0], extra);
	kind = kinds[rnd(g, chance(g, 15) ? 4 : 3)];
	if (t == T_I32 && chance(g, 35)) {
		kind = chance(g, 30) ? "sum" : chance(g, 50) ? "argmax" : "argmin";
		t2 = strcmp(kind, "sum") == 0 ? T_I1 : rand_type_where(g, is_num);
		count(g, FZ_C_argminmax);
	} else {
		count(g, FZ_C_reduce);
	}
	return fmt(g, "%s(%s, axis: %d)", kind, expr(g, t2, src, d - 1), k);
}

static char *
p_trans(Gen *g, int t, Shape s, int d)
{
	if (s.rank != 2)
		return NULL;
	count(g, FZ_C_trans);
	if (chance(g, 30))
		return fmt(g, "trans(%s, [1, 0])",
			   expr(g, t, shape2(s.d[1], s.d[0]), d - 1));
	return fmt(g, "trans(%s)", expr(g, t, shape2(s.d[1], s.d[0]), d - 1));
}

static char *
p_reshape(Gen *g, int t, Shape s, int d)
{
	int n = numel(s), a;
	Shape src;

	if (s.rank == 0 || n == 1)
		return NULL;
	a = 1 << rnd(g, (uint32_t)__builtin_ctz((unsigned)n) + 1);
	src = s.rank == 2 && chance(g, 40) ? shape1(n) : shape2(a, n / a);
	if (same_shape(src, s))
		src = shape1(n);
	if (same_shape(src, s))
		return NULL;
	count(g, FZ_C_reshape);
	return fmt(g, "reshape(%s, %s)", expr(g, t, src, d - 1), dims_str(g, s));
}

static char *
p_broadcast(Gen *g, int t, Shape s, int d)
{
	Shape src;

	if (s.rank == 0)
		return NULL;
	src = sub_shape(g, s);
	count(g, FZ_C_broadcast);
	return fmt(g, "broadcast_to(%s, %s)", expr(g, t, src, d - 1),
		   dims_str(g, s));
}

static char *
p_expand(Gen *g, int t, Shape s, int d)
{
	if (s.rank != 2 || (s.d[0] != 1 && s.d[1] != 1))
		return NULL;
	count(g, FZ_C_expand);
	if (s.d[1] == 1)
		return fmt(g, "%s[:, None]", expr(g, t, shape1(s.d[0]), d - 1));
	return fmt(g, "%s[None, :]", expr(g, t, shape1(s.d[1]), d - 1));
}

static char *
p_dot(Gen *g, int t, Shape s, int d)
{
	int m = s.d[0], n = s.d[1], k, ot, r;
	char *a, *b;

	if (g->o->no_dot || s.rank != 2 || m < 16 || n < 16 ||
	    (t != T_F32 && t != T_I32))
		return NULL;
	k = 16 << rnd(g, 3);
	while (k > 16 && (m * k > MAXN || k * n > MAXN))
		k /= 2;
	if (m * k > MAXN || k * n > MAXN)
		return NULL;
	r = (int)rnd(g, 100);
	ot = t == T_I32 ? T_I8 : r < 42 ? T_F16 : r < 84 ? T_BF16 : r < 92 ? T_F32
		: T_F8E4M3;
	count(g, t == T_I32 ? FZ_C_dot_i8 : is_fp8(ot) ? FZ_C_dot_fp8 : FZ_C_dot);
	if (is_fp8(ot)) {
		const char *f8 = chance(g, 50) ? "f8e4m3" : "f8e5m2";

		a = fmt(g, "%s.to(%s)", expr(g, T_F16, shape2(m, k), d - 1), f8);
		b = fmt(g, "%s.to(%s)", expr(g, T_F16, shape2(k, n), d - 1), f8);
	} else {
		a = expr(g, ot, shape2(m, k), d - 1);
		b = expr(g, ot, shape2(k, n), d - 1);
	}
	if (chance(g, 50))
		return fmt(g, "dot(%s, %s, %s)", a, b, expr(g, t, s, d - 1));
	return fmt(g, "dot(%s, %s)", a, b);
}

static char *p_call(Gen *g, int t, Shape s, int d);

typedef char *(*Prod)(Gen *g, int t, Shape s, int d);

static const struct {
	Prod fn;
	int weight;
} prods[] = {
	{ p_arith, 30 }, { p_divrem, 5 }, { p_bitwise, 10 }, { p_shift, 5 },
	{ p_unary, 5 }, { p_compare, 12 }, { p_where, 8 }, { p_minmax, 6 },
	{ p_math, 10 }, { p_fma, 3 }, { p_convert, 10 }, { p_bitcast, 3 },
	{ p_reduce, 8 }, { p_trans, 4 }, { p_reshape, 3 }, { p_broadcast, 3 },
	{ p_expand, 3 }, { p_dot, 6 }, { p_call, 2 },
};

/* An expression of element type t and shape exactly s. */
static char *
expr(Gen *g, int t, Shape s, int d)
{
	int total = 0, tries, r;
	size_t i;
	char *e;

	if (d <= 0 || chance(g, 20))
		return leaf(g, t, s, d);
	for (i = 0; i < countof(prods); i++)
		total += prods[i].weight;
	for (tries = 0; tries < 12; tries++) {
		r = (int)rnd(g, (uint32_t)total);
		for (i = 0; i < countof(prods); i++)
			if ((r -= prods[i].weight) < 0)
				break;
		if ((e = prods[i].fn(g, t, s, d)))
			return e;
	}
	return leaf(g, t, s, d);
}

/* ---- loads ---------------------------------------------------------------------- */

/* load(...) of shape s whose value is converted to t when the input is of
 * another (storage) type. */
static char *
load_expr(Gen *g, int t, Shape s, int d)
{
	int lt = t, r;
	const char *offs, *mask = NULL, *conv = "";
	Ptr *p;

	if (is_float(t) && chance(g, 10))
		lt = chance(g, 50) ? T_F8E4M3 : T_F8E5M2;
	if (!(p = input(g, lt)))
		return full_expr(g, t, s);
	if (lt != t)
		conv = fmt(g, ".to(%s)", tys[t].name);
	count(g, FZ_C_load);
	r = (int)rnd(g, 100);
	if (s.rank == 0) {
		count(g, FZ_C_load_scalar);
		offs = fmt(g, "(pid + %u)", rnd(g, 16));
		if (chance(g, 30))
			mask = fmt(g, "(pid < %s)", chance(g, 50) ? "n1" : "k0");
	} else if (r < 25 && d > 0) {
		count(g, FZ_C_load_gather);
		offs = fmt(g, "(%s & %d)", expr(g, T_I32, s, d - 1), MAXN - 1);
		if (chance(g, 40))
			mask = operand(g, T_I1, s, d - 1);
	} else {
		bool tr = s.rank == 2 && chance(g, 30);

		offs = flat(g, s, tr);
		if (s.rank == 2)
			count(g, FZ_C_load_2d);
		if (chance(g, 50) && s.rank == 1)
			mask = fmt(g, "(%s < %s)", offs, chance(g, 50) ? "n0" : "n1");
		else if (chance(g, 50) && s.rank == 2)
			mask = fmt(g, "((range(%d) < nr)[:, None] & (range(%d) < nc)[None, :])",
				   s.d[0], s.d[1]);
		else if (chance(g, 20) && d > 0)
			mask = operand(g, T_I1, s, d - 1);
	}
	if (!mask)
		return fmt(g, "load(%s + %s)%s", p->name, offs, conv);
	count(g, FZ_C_load_masked);
	if (chance(g, 60))
		return fmt(g, "load(%s + %s, mask: %s, other: %s)%s", p->name,
			   offs, mask, lit(g, lt), conv);
	return fmt(g, "load(%s + %s, mask: %s)%s", p->name, offs, mask, conv);
}

/* ---- device functions ------------------------------------------------------------- */

/* A device function returning t/s, written to g->fns; its call. */
static char *
p_call(Gen *g, int t, Shape s, int d)
{
	int np, i, saved_nvars = g->nvars, saved_indent = g->indent;
	bool generic = chance(g, 50);
	const char *name, *args[3];
	int pt[3];
	Shape ps[3];
	Buf saved = g->body;
	Buf sig = { 0 };
	Var *vars;
	char *ret;

	if (g->in_fn || g->nfn == MAXF || d < 2)
		return NULL;
	count(g, FZ_C_call);
	name = fmt(g, "f%d", g->nfn++);
	np = 1 + (int)rnd(g, 3);
	for (i = 0; i < np; i++) {
		pt[i] = i == 0 && chance(g, 50) ? t : rand_type(g);
		ps[i] = i == 0 || chance(g, 50) ? s : sub_shape(g, s);
		args[i] = expr(g, pt[i], ps[i], d - 1);
	}
	/* the body, with only the parameters in scope */
	vars = arena_dup(&g->arena, g->vars, sizeof g->vars);
	g->in_fn = true;
	g->body = (Buf){ 0 };
	g->indent = 0;
	g->nvars = 0;
	buf_printf(&sig, "fn %s(", name);
	for (i = 0; i < np; i++) {
		const char *pn = fmt(g, "a%d", i);

		add_var(g, pn, pt[i], ps[i], false);
		if (generic)
			buf_printf(&sig, "%s%s", i ? ", " : "", pn);
		else
			buf_printf(&sig, "%s%s: %s", i ? ", " : "", pn,
				   type_str(g, pt[i], ps[i]));
	}
	buf_printf(&sig, ")%s {\n", generic ? "" : fmt(g, " -> %s",
							type_str(g, t, s)));
	for (i = (int)rnd(g, 3); i > 0; i--) {
		int lt = chance(g, 50) ? t : rand_type(g);
		const char *ln = fresh(g, "l");

		line(g, "let %s: %s = %s;", ln, type_str(g, lt, s),
		     expr(g, lt, s, d - 1));
		add_var(g, ln, lt, s, false);
	}
	ret = expr(g, t, s, d - 1);
	line(g, "return %s;", ret);
	buf_puts(&g->fns, sig.s);
	buf_puts(&g->fns, g->body.s ? g->body.s : "");
	buf_puts(&g->fns, "}\n");
	buf_free(&sig);
	buf_free(&g->body);
	g->body = saved;
	g->indent = saved_indent;
	memcpy(g->vars, vars, sizeof g->vars);
	g->nvars = saved_nvars;
	g->in_fn = false;
	if (np == 1)
		return fmt(g, "%s(%s)", name, args[0]);
	if (np == 2)
		return fmt(g, "%s(%s, %s)", name, args[0], args[1]);
	return fmt(g, "%s(%s, %s, %s)", name, args[0], args[1], args[2]);
}

/* ---- statements ------------------------------------------------------------------ */

static void block(Gen *g, int n);

static int
depth_of_expr(Gen *g)
{
	return 1 + (int)rnd(g, (uint32_t)g->o->max_depth);
}

/* Shape and type of a new value: often those of one in scope. */
static void
pick_type_shape(Gen *g, int *t, Shape *s)
{
	if (g->nvars && chance(g, 50)) {
		Var *v = &g->vars[rnd(g, (uint32_t)g->nvars)];

		*s = v->s;
		*t = chance(g, 60) ? v->t : rand_type(g);
		return;
	}
	*t = rand_type(g);
	*s = rand_shape(g);
}

static void
st_let(Gen *g, bool mut)
{
	const char *name = fresh(g, mut ? "w" : "v");
	int t;
	Shape s;

	pick_type_shape(g, &t, &s);
	line(g, "%s %s: %s = %s;", mut ? "var" : "let", name, type_str(g, t, s),
	     expr(g, t, s, depth_of_expr(g)));
	add_var(g, name, t, s, mut);
}

static Var *
pick_mutable(Gen *g)
{
	int i, n = 0, k;

	for (i = 0; i < g->nvars; i++)
		n += g->vars[i].mut && !g->vars[i].ro;
	if (!n)
		return NULL;
	k = (int)rnd(g, (uint32_t)n);
	for (i = 0; i < g->nvars; i++)
		if (g->vars[i].mut && !g->vars[i].ro && k-- == 0)
			return &g->vars[i];
	return NULL;
}

static void
assign_to(Gen *g, Var *v)
{
	int t = v->t, d = depth_of_expr(g);
	Shape s = v->s;

	count(g, FZ_C_assign);
	if (chance(g, 40)) {
		line(g, "%s = %s;", v->name, expr(g, t, s, d));
		return;
	}
	if (is_num(t) && chance(g, 60)) {
		static const char *const ops[] = { "+=", "-=", "*=" };

		if (is_float(t) && chance(g, 15))
			line(g, "%s /= %s;", v->name, operand(g, t, s, d));
		else
			line(g, "%s %s %s;", v->name, ops[rnd(g, 3)],
			     operand(g, t, s, d));
		return;
	}
	if (is_int(t) && !is_bool(t) && chance(g, 30)) {
		line(g, "%s %s %s;", v->name, chance(g, 50) ? "<<=" : ">>=",
		     operand(g, t, s, d));
		return;
	}
	if (is_int(t) && !is_bool(t) && chance(g, 30)) {
		line(g, "%s %s ((%s & 15) + 1);", v->name,
		     chance(g, 50) ? "/=" : "%=", expr(g, t, s, d));
		return;
	}
	if (is_int(t)) {
		static const char *const ops[] = { "&=", "|=", "^=" };

		line(g, "%s %s %s;", v->name, ops[rnd(g, 3)], operand(g, t, s, d));
		return;
	}
	line(g, "%s = %s;", v->name, expr(g, t, s, d));
}

static const char *
out_type_for(Gen *g, int t, int *ot)
{
	*ot = t;
	if (chance(g, 15)) {
		count(g, FZ_C_store_convert);
		*ot = rnd(g, T_COUNT);
	}
	return tys[*ot].name;
}

static void
store_var(Gen *g, Var *v)
{
	int ot;
	bool tr = v->s.rank == 2 && chance(g, 25);
	const char *offs = flat(g, v->s, tr), *mask = NULL;
	Ptr *p;

	out_type_for(g, v->t, &ot);
	if (!(p = add_ptr(g, "o", ot, FZ_OUT, (size_t)(g->nprog * numel(v->s)))))
		return;
	v->stored = true;
	p->s = v->s;
	p->offs = offs;
	count(g, FZ_C_store);
	if (v->s.rank == 1 && chance(g, 20))
		mask = fmt(g, "(%s < n1)", offs);
	else if (v->s.rank > 0 && chance(g, 15))
		mask = operand(g, T_I1, v->s, 2);
	if (mask) {
		count(g, FZ_C_store_masked);
		line(g, "store(%s + %s, %s, mask: %s);", p->name, offs, v->name,
		     mask);
	} else {
		line(g, "store(%s + %s, %s);", p->name, offs, v->name);
	}
}

static void
st_store(Gen *g)
{
	/* not the first six, the kernel's scalars, but for a few */
	if (g->nvars > 6 && !chance(g, 5))
		store_var(g, &g->vars[6 + rnd(g, (uint32_t)g->nvars - 6)]);
	else if (g->nvars)
		store_var(g, &g->vars[rnd(g, (uint32_t)g->nvars)]);
}

/* Reads back what this program stored to an output (its own part of it,
 * so no other program races), after a barrier: loads must not move
 * across the stores before them. */
static void
st_readback(Gen *g)
{
	int i, n = 0, k, t;
	const char *name = fresh(g, "v");
	Ptr *p = NULL;

	for (i = 0; i < g->nptrs; i++)
		n += g->ptrs[i].role == FZ_OUT;
	if (!n)
		return;
	k = (int)rnd(g, (uint32_t)n);
	for (i = 0; i < g->nptrs && !p; i++)
		if (g->ptrs[i].role == FZ_OUT && k-- == 0)
			p = &g->ptrs[i];
	count(g, FZ_C_readback);
	t = is_fp8(p->t) ? T_F32 : p->t;
	line(g, "sync_threads();");
	line(g, "let %s: %s = load(%s + %s)%s;", name, type_str(g, t, p->s),
	     p->name, p->offs, is_fp8(p->t) ? ".to(f32)" : "");
	add_var(g, name, t, p->s, false);
}

/* A scalar condition: a comparison of scalars (sizes, program ids,
 * reductions, loop counters), sometimes two joined. */
static char *
cond(Gen *g)
{
	static const char *const ops[] = { "<", "<=", ">", ">=", "==", "!=" };
	int t = rand_type_where(g, is_num);
	char *c;

	c = fmt(g, "%s %s %s", expr(g, t, shape0(), 2), ops[rnd(g, 6)],
		operand(g, t, shape0(), 1));
	if (chance(g, 20))
		c = fmt(g, "(%s) %s (%s)", c, chance(g, 50) ? "&&" : "||",
			expr(g, T_I1, shape0(), 2));
	return c;
}

static void
pop_scope(Gen *g)
{
	int i;

	/* block-local values are stored before they go out of scope,
	 * sometimes */
	for (i = g->nvars - 1; i >= 0 && g->vars[i].depth == g->depth; i--)
		if (!g->vars[i].stored && !g->vars[i].ro && chance(g, 40))
			store_var(g, &g->vars[i]);
	while (g->nvars && g->vars[g->nvars - 1].depth == g->depth)
		g->nvars--;
	g->depth--;
}

static void
open_block(Gen *g)
{
	g->depth++;
	g->indent++;
}

static void
close_block(Gen *g)
{
	pop_scope(g);
	g->indent--;
}

/* A body that assigns to a carried var at least once. */
static void
loop_body(Gen *g, Var *carried, int n)
{
	block(g, n);
	if (carried)
		assign_to(g, carried);
}

static void
st_for(Gen *g)
{
	const char *i = fresh(g, "j"), *lo, *hi, *step = "";
	Var *acc = NULL, *iv;
	int saved = g->loop_var;

	count(g, FZ_C_for_loop);
	if (chance(g, 60)) {
		st_let(g, true);
		acc = &g->vars[g->nvars - 1];
	} else {
		acc = pick_mutable(g);
	}
	lo = chance(g, 70) ? "0" : fmt(g, "%d", (int)rnd(g, 3) - 1);
	switch (rnd(g, 4)) {
	case 0: hi = "k0"; break;
	case 1: hi = "(k0 + 1)"; break;
	default: hi = fmt(g, "%u", 1 + rnd(g, 4)); break;
	}
	if (chance(g, 15))
		step = " step 2";
	line(g, "for %s in %s .. %s%s {", i, lo, hi, step);
	open_block(g);
	iv = add_var(g, i, T_I32, shape0(), false);
	if (iv)
		iv->ro = true;
	g->loop_var = g->nvars - 1;
	loop_body(g, acc, 1 + (int)rnd(g, 3));
	close_block(g);
	g->loop_var = saved;
	line(g, "}");
}

static void
st_while(Gen *g)
{
	const char *w = fresh(g, "c"), *lim;
	Var *acc = pick_mutable(g), *wv;

	count(g, FZ_C_while_loop);
	lim = chance(g, 40) ? "k0" : fmt(g, "%u", 1 + rnd(g, 3));
	line(g, "var %s: i32 = 0;", w);
	wv = add_var(g, w, T_I32, shape0(), true);
	if (wv)
		wv->ro = true;
	line(g, "while %s < %s {", w, lim);
	open_block(g);
	loop_body(g, acc, 1 + (int)rnd(g, 2));
	line(g, "%s += 1;", w);
	close_block(g);
	line(g, "}");
}

static void
st_if(Gen *g)
{
	Var *v = pick_mutable(g);

	count(g, FZ_C_if_else);
	line(g, "if %s {", cond(g));
	open_block(g);
	loop_body(g, v, 1 + (int)rnd(g, 2));
	close_block(g);
	if (chance(g, 60)) {
		line(g, "} else {");
		open_block(g);
		loop_body(g, v && chance(g, 70) ? v : NULL, 1 + (int)rnd(g, 2));
		close_block(g);
	}
	line(g, "}");
}

/* ---- shared buffers ----------------------------------------------------------------- */

static int
smem_type(Gen *g)
{
	int t = rand_type_where(g, is_num);

	if (chance(g, 10))
		t = chance(g, 50) ? T_F8E4M3 : T_F8E5M2;
	return t;
}

/* The value to store into a buffer of element type t: a tile of that
 * type, or of f32 for fp8 buffers (the store converts). */
static char *
smem_value(Gen *g, int t, Shape s)
{
	return expr(g, is_fp8(t) ? T_F32 : t, s, depth_of_expr(g));
}

static void
st_shared_decl(Gen *g)
{
	Smem *b;
	int rank = 1 + (int)rnd(g, 3), i, bytes;
	Shape s;

	if (g->nsmem == MAXS)
		return;
	b = &g->smem[g->nsmem];
	b->t = smem_type(g);
	b->rank = rank;
	do {
		s = rand_shape(g);
	} while (s.rank == 0 || (rank == 3 && s.rank != 2) ||
		 (rank == 2 && s.rank != 2) || (rank == 1 && s.rank != 1));
	if (rank == 3) {
		b->d[0] = 2 << rnd(g, 2);
		while (b->d[0] * numel(s) > MAXN) {
			if (s.d[0] > 1)
				s.d[0] /= 2;
			else
				s.d[1] /= 2;
		}
		b->d[1] = s.d[0];
		b->d[2] = s.d[1];
	} else {
		b->d[0] = s.d[0];
		b->d[1] = s.d[1];
	}
	bytes = (tys[b->t].bits / 8) * (rank == 3 ? b->d[0] : 1) * numel(s);
	if (g->smem_bytes + bytes > 48 * 1024)
		return;
	g->smem_bytes += bytes;
	g->nsmem++;
	b->name = fresh(g, "s");
	count(g, FZ_C_shared);
	if (rank == 1)
		line(g, "shared %s: %s[%d];", b->name, tys[b->t].name, b->d[0]);
	else if (rank == 2)
		line(g, "shared %s: %s[%d, %d];", b->name, tys[b->t].name,
		     b->d[0], b->d[1]);
	else
		line(g, "shared %s: %s[%d, %d, %d];", b->name, tys[b->t].name,
		     b->d[0], b->d[1], b->d[2]);
	/* written whole before anything reads it */
	if (rank < 3) {
		line(g, "store(%s, %s);", b->name, smem_value(g, b->t, s));
	} else {
		for (i = 0; i < b->d[0]; i++)
			line(g, "store(%s[%d], %s);", b->name, i,
			     smem_value(g, b->t, s));
	}
	line(g, "sync_threads();");
}

/* A view of b: the buffer, b[i] or a slice along the first dimension;
 * its shape in *s. */
static const char *
smem_view(Gen *g, Smem *b, Shape *s)
{
	int len, lo;

	if (b->rank == 3) {
		const char *i;

		if (g->loop_var >= 0 && chance(g, 40))
			i = fmt(g, "(%s & %d)", g->vars[g->loop_var].name,
				b->d[0] - 1);
		else
			i = fmt(g, "%u", rnd(g, (uint32_t)b->d[0]));
		*s = shape2(b->d[1], b->d[2]);
		count(g, FZ_C_shared_view);
		if (b->d[1] > 1 && chance(g, 30)) {  /* b[i][lo .. hi, :] */
			len = b->d[1] >> (1 + rnd(g, 2));
			len = len ? len : 1;
			lo = len * (int)rnd(g, (uint32_t)(b->d[1] / len));
			*s = shape2(len, b->d[2]);
			return fmt(g, "%s[%s][%d .. %d, :]", b->name, i, lo, lo + len);
		}
		return fmt(g, "%s[%s]", b->name, i);
	}
	*s = b->rank == 1 ? shape1(b->d[0]) : shape2(b->d[0], b->d[1]);
	if (b->rank == 2 && b->d[0] > 1 && chance(g, 30)) {
		const char *i = fmt(g, "%u", rnd(g, (uint32_t)b->d[0]));

		if (g->loop_var >= 0 && chance(g, 50))
			i = fmt(g, "(%s & %d)", g->vars[g->loop_var].name,
				b->d[0] - 1);
		count(g, FZ_C_shared_view);
		*s = shape1(b->d[1]);
		return fmt(g, "%s[%s]", b->name, i);
	}
	if (b->d[0] > 1 && chance(g, 30)) {
		len = b->d[0] >> (1 + rnd(g, 2));
		len = len ? len : 1;
		lo = len * (int)rnd(g, (uint32_t)(b->d[0] / len));
		count(g, FZ_C_shared_view);
		if (b->rank == 1) {
			*s = shape1(len);
			return fmt(g, "%s[%d .. %d]", b->name, lo, lo + len);
		}
		*s = shape2(len, b->d[1]);
		return fmt(g, "%s[%d .. %d, :]", b->name, lo, lo + len);
	}
	return b->name;
}

static void
st_shared_use(Gen *g)
{
	Smem *b = &g->smem[rnd(g, (uint32_t)g->nsmem)];
	Shape s;
	const char *view = smem_view(g, b, &s);

	if (chance(g, 35)) {
		line(g, "sync_threads();");
		line(g, "store(%s, %s);", view, smem_value(g, b->t, s));
		line(g, "sync_threads();");
		return;
	}
	{
		int t = is_fp8(b->t) ? T_F32 : b->t;
		const char *name = fresh(g, "v");

		if (is_fp8(b->t))
			line(g, "let %s: %s = load(%s).to(f32);", name,
			     type_str(g, t, s), view);
		else
			line(g, "let %s: %s = load(%s);", name, type_str(g, t, s),
			     view);
		add_var(g, name, t, s, false);
	}
}

/* ---- atomics ---------------------------------------------------------------------- */

static bool
atomic_type_ok(int t)
{
	return t == T_I32 || t == T_U32 || t == T_I64 || t == T_U64 ||
	       t == T_F32 || t == T_F64 || t == T_F16 || t == T_BF16;
}

static bool
int_atomic_type_ok(int t)
{
	return t == T_I32 || t == T_U32 || t == T_I64 || t == T_U64;
}

/* Distinct addresses: each element of each program its own, so the old
 * values are the inout's initial contents, whatever the order. */
static void
st_atomic(Gen *g)
{
	static const char *const ikinds[] = { "add", "max", "min", "xchg", "and",
					      "or", "xor" };
	static const char *const fkinds[] = { "add", "xchg", "max", "min" };
	int t = rand_type_where(g, atomic_type_ok);
	Shape s = rand_shape(g);
	const char *name = fresh(g, "v"), *kind, *offs;
	bool tr = s.rank == 2 && chance(g, 30);
	Ptr *p;

	if (!(p = add_ptr(g, "a", t, FZ_INOUT, (size_t)(g->nprog * numel(s)))))
		return;
	offs = flat(g, s, tr);
	if (chance(g, 20) && t != T_F16 && t != T_BF16) {
		const char *cmp;

		count(g, FZ_C_atomic_cas);
		/* floats compare bits: a NaN computed at run time and one
		 * folded at -O3 need not have the same bits, so floats
		 * compare only with what memory holds */
		cmp = chance(g, 50) || is_float(t)
			      ? fmt(g, "load(%s + %s)", p->name, offs)
			      : expr(g, t, s, 2);
		line(g, "let %s: %s = atomic_cas(%s + %s, %s, %s);", name,
		     type_str(g, t, s), p->name, offs, cmp,
		     expr(g, t, s, depth_of_expr(g)));
		add_var(g, name, t, s, false);
		return;
	}
	count(g, FZ_C_atomic);
	if (is_float(t))
		kind = t == T_F32 ? fkinds[rnd(g, 4)] : fkinds[rnd(g, 2)];
	else
		kind = ikinds[rnd(g, countof(ikinds))];
	if (s.rank > 0 && chance(g, 30))
		line(g, "let %s: %s = atomic_%s(%s + %s, %s, mask: %s);", name,
		     type_str(g, t, s), kind, p->name, offs,
		     expr(g, t, s, depth_of_expr(g)), operand(g, T_I1, s, 2));
	else
		line(g, "let %s: %s = atomic_%s(%s + %s, %s);", name,
		     type_str(g, t, s), kind, p->name, offs,
		     expr(g, t, s, depth_of_expr(g)));
	add_var(g, name, t, s, false);
}

/* Many elements (of every program) on one address: integer kinds whose
 * result does not depend on the order; the old values are not used. */
static void
st_atomic_same(Gen *g)
{
	static const char *const kinds[] = { "add", "max", "min", "and", "or",
					     "xor" };
	int t = rand_type_where(g, int_atomic_type_ok);
	Shape s = rand_shape(g);
	const char *kind = kinds[rnd(g, countof(kinds))];
	Ptr *p;

	if (!(p = add_ptr(g, "z", t, FZ_INOUT, 4)))
		return;
	count(g, FZ_C_atomic_same);
	if (s.rank > 0 && chance(g, 30))
		line(g, "atomic_%s(%s + %u, %s, mask: %s);", kind, p->name,
		     rnd(g, 4), expr(g, t, s, depth_of_expr(g)),
		     operand(g, T_I1, s, 2));
	else
		line(g, "atomic_%s(%s + %u, %s);", kind, p->name, rnd(g, 4),
		     expr(g, t, s, depth_of_expr(g)));
}

/* ---- blocks --------------------------------------------------------------------------- */

static void
stmt(Gen *g)
{
	int r = (int)rnd(g, 100);
	bool nest = g->depth < 2 && g->stmts > 2;

	g->stmts--;
	if (r < 34)
		st_let(g, false);
	else if (r < 42)
		st_let(g, true);
	else if (r < 54) {
		Var *v = pick_mutable(g);

		if (v)
			assign_to(g, v);
		else
			st_let(g, true);
	} else if (r < 60)
		st_store(g);
	else if (r < 62)
		st_readback(g);
	else if (r < 68 && nest)
		st_for(g);
	else if (r < 71 && nest)
		st_while(g);
	else if (r < 77 && nest)
		st_if(g);
	else if (r < 82 && !g->o->no_shared && g->depth == 0)
		st_shared_decl(g);
	else if (r < 87 && !g->o->no_shared && g->nsmem)
		st_shared_use(g);
	else if (r < 94 && !g->o->no_atomics)
		st_atomic(g);
	else if (r < 97 && !g->o->no_atomics)
		st_atomic_same(g);
	else
		st_let(g, false);
}

static void
block(Gen *g, int n)
{
	while (n-- > 0 && g->stmts > 0)
		stmt(g);
}

/* ---- the program ------------------------------------------------------------------------- */

static uint64_t
mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

char *
fz_generate(uint64_t seed, const FzGenOpts *opts, FzGenStats *st)
{
	static const FzGenOpts defaults;
	FzGenOpts o = opts ? *opts : defaults;
	Gen *g = calloc(1, sizeof *g);
	Buf out = { 0 };
	uint64_t data;
	int i, k0;
	long n0, n1;

	if (!g)
		return NULL;
	if (!o.max_stmts)
		o.max_stmts = 24;
	if (!o.max_depth)
		o.max_depth = 3;
	arena_init(&g->arena, NULL, NULL, NULL);
	g->rng = mix(seed + 1);
	g->o = &o;
	g->st = st;
	g->loop_var = -1;
	g->nprog = 1 + (int)rnd(g, 3);
	g->warps = 1 << rnd(g, 4);
	g->L = (size_t)g->nprog * MAXN;
	g->stmts = o.max_stmts / 2 + (int)rnd(g, (uint32_t)o.max_stmts / 2 + 1);
	data = mix(seed ^ 0xda7a);
	/* the sizes: n0, n1 cut blocks of the inputs, nr x nc 2-D boxes, k0
	 * counts loop trips */
	n0 = (long)rnd(g, (uint32_t)g->L + 1);
	n1 = chance(g, 30) ? (long)g->L : (long)rnd(g, (uint32_t)g->L + 1);
	k0 = (int)rnd(g, 5);
	add_var(g, "pid", T_I32, shape0(), false);
	add_var(g, "n0", T_I32, shape0(), false);
	add_var(g, "k0", T_I32, shape0(), false);
	add_var(g, "fx", T_F32, shape0(), false);
	add_var(g, "sx", T_I64, shape0(), false);
	add_var(g, "ux", T_U32, shape0(), false);
	line(g, "let pid: i32 = program_id(0);");
	block(g, g->stmts);
	for (i = 0; i < g->nvars; i++)
		if (!g->vars[i].stored && i >= 6)
			store_var(g, &g->vars[i]);

	buf_printf(&out, "//! gen seed=%llu\n", (unsigned long long)seed);
	buf_printf(&out, "//! data 0x%llx\n", (unsigned long long)data);
	for (i = 0; i < g->nptrs; i++)
		buf_printf(&out, "//! arg %s %s %s %zu\n", g->ptrs[i].name,
			   g->ptrs[i].role == FZ_IN ? "in"
			   : g->ptrs[i].role == FZ_OUT ? "out" : "inout",
			   tys[g->ptrs[i].t].name, g->ptrs[i].n);
	buf_printf(&out, "//! arg n0 scalar i32 %ld\n", n0);
	buf_printf(&out, "//! arg n1 scalar i32 %ld\n", n1);
	buf_printf(&out, "//! arg nr scalar i32 %u\n", rnd(g, 70));
	buf_printf(&out, "//! arg nc scalar i32 %u\n", rnd(g, 70));
	buf_printf(&out, "//! arg k0 scalar i32 %d\n", k0);
	buf_printf(&out, "//! arg fx scalar f32 %g\n",
		   ((int)rnd(g, 2001) - 1000) / 64.0);
	buf_printf(&out, "//! arg sx scalar i64 %lld\n",
		   chance(g, 20) ? -9000000000000000000ll
				 : (long long)rnd(g, 100000) - 50000);
	buf_printf(&out, "//! arg ux scalar u32 %u\n",
		   chance(g, 20) ? 4294967295u : rnd(g, 100000));
	if (g->fns.s)
		buf_puts(&out, g->fns.s);
	buf_puts(&out, "kernel gen(");
	for (i = 0; i < g->nptrs; i++)
		buf_printf(&out, "%s: *%s, ", g->ptrs[i].name,
			   tys[g->ptrs[i].t].name);
	buf_printf(&out, "n0: i32, n1: i32, nr: i32, nc: i32, k0: i32, fx: f32, "
		   "sx: i64, ux: u32) warps(%d) grid(%d) {\n", g->warps,
		   g->nprog);
	buf_puts(&out, g->body.s ? g->body.s : "");
	buf_puts(&out, "}\n");
	buf_free(&g->body);
	buf_free(&g->fns);
	arena_reset(&g->arena);
	free(g);
	return out.s;
}
