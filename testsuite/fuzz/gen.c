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
 *
 * This file: types, shapes, values in scope, literals and expressions
 * (loads and device functions among them); stmt.c: statements, shared
 * buffers, atomics and the kernel around them.
 *
 * A seed must give the same program whatever compiler built the
 * generator.  C leaves unspecified the order of a call's arguments (and
 * of most operators' operands): gcc evaluates them right to left, clang
 * left to right.  So each draw -- a call that takes random numbers or
 * adds a name, a value, a pointer or a line -- is its own statement, and
 * no argument list or expression holds two of them (a draw's own
 * arguments may hold one: they come first).  The order kept is the one
 * gcc gave the recorded GPU campaigns, which is why some sites draw
 * their last operand first.  gen-digest.test checks it.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"

const char *const fz_construct_names[FZ_C_COUNT] = {
#define X(n) #n,
	FZ_CONSTRUCTS(X)
#undef X
};

/* ---- element types -------------------------------------------------------- */

const GenType gen_tys[T_COUNT] = {
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

/* ---- the generator's state -------------------------------------------------- */

uint32_t
gen_rnd(Gen *g, uint32_t n)
{
	uint64_t z;

	if (g->pos < g->nsrc) {  /* the fuzzer's bytes first */
		z = g->src[g->pos++];
		if (n > 256 && g->pos < g->nsrc)
			z = z << 8 | g->src[g->pos++];
		if (n > 65536 && g->pos + 1 < g->nsrc) {
			z = z << 16 | (uint64_t)g->src[g->pos] << 8 |
			    g->src[g->pos + 1];
			g->pos += 2;
		}
		return n ? (uint32_t)(z % n) : 0;
	}
	/* splitmix64 */
	z = (g->rng += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	z ^= z >> 31;
	return n ? (uint32_t)(z % n) : 0;
}

bool
gen_chance(Gen *g, int percent)
{
	return (int)gen_rnd(g, 100) < percent;
}

char *
gen_fmt(Gen *g, const char *f, ...)
{
	va_list ap;
	char *s;

	va_start(ap, f);
	s = arena_vprintf(&g->arena, f, ap);
	va_end(ap);
	return s;
}

void
gen_count(Gen *g, int c)
{
	if (g->st)
		g->st->counts[c]++;
}

void
gen_line(Gen *g, const char *f, ...)
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

int
gen_rand_type(Gen *g)
{
	int i, total = 0, r;

	for (i = 0; i < T_COUNT; i++)
		total += gen_tys[i].weight;
	r = (int)gen_rnd(g, (uint32_t)total);
	for (i = 0; i < T_COUNT; i++)
		if ((r -= gen_tys[i].weight) < 0)
			break;
	return i;
}

/* A type of the given class mix: num (arithmetic), float, int... */
int
gen_rand_type_where(Gen *g, bool (*ok)(int))
{
	int t, tries;

	for (tries = 0; tries < 64; tries++)
		if (ok(t = gen_rand_type(g)))
			return t;
	return T_F32;
}

int
gen_numel(Shape s)
{
	return s.rank == 0 ? 1 : s.rank == 1 ? s.d[0] : s.d[0] * s.d[1];
}

static bool
same_shape(Shape a, Shape b)
{
	return a.rank == b.rank && (a.rank < 1 || a.d[0] == b.d[0]) &&
	       (a.rank < 2 || a.d[1] == b.d[1]);
}

Shape
gen_shape0(void)
{
	Shape s = { 0, { 0, 0 } };

	return s;
}

Shape
gen_shape1(int n)
{
	Shape s = { 1, { n, 0 } };

	return s;
}

Shape
gen_shape2(int a, int b)
{
	Shape s = { 2, { a, b } };

	return s;
}

/* 2^e with e mostly in the middle of [0, maxe] */
static int
rand_dim(Gen *g, int maxe)
{
	int e = (int)gen_rnd(g, (uint32_t)maxe + 1);

	if (e > 8 && gen_chance(g, 60))
		e = 3 + (int)gen_rnd(g, 5);
	return 1 << e;
}

Shape
gen_rand_shape(Gen *g)
{
	int r = (int)gen_rnd(g, 100), a;

	if (r < 12)
		return gen_shape0();
	if (r < 55)
		return gen_shape1(rand_dim(g, 12));
	a = rand_dim(g, 7);
	while (a * 2 > MAXN)
		a /= 2;
	return gen_shape2(a, rand_dim(g, 12 - __builtin_ctz((unsigned)a)));
}

static const char *
dims_str(Gen *g, Shape s)
{
	return s.rank == 1 ? gen_fmt(g, "[%d]", s.d[0])
			   : gen_fmt(g, "[%d, %d]", s.d[0], s.d[1]);
}

const char *
gen_type_str(Gen *g, int t, Shape s)
{
	if (s.rank == 0)
		return gen_tys[t].name;
	return s.rank == 1 ? gen_fmt(g, "%s[%d]", gen_tys[t].name, s.d[0])
			   : gen_fmt(g, "%s[%d, %d]", gen_tys[t].name, s.d[0], s.d[1]);
}

const char *
gen_fresh(Gen *g, const char *prefix)
{
	return gen_fmt(g, "%s%d", prefix, g->nname++);
}

Var *
gen_add_var(Gen *g, const char *name, int t, Shape s, bool mut)
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
		return gen_chance(g, 50) ? "true" : "false";
	if (is_float(t) || is_fp8(t)) {
		if (gen_chance(g, 3))
			return gen_chance(g, 50) ? "inf" : "-inf";
		if (gen_chance(g, 1))
			return "nan";
		return floats[gen_rnd(g, countof(floats))];
	}
	if (gen_chance(g, 8))
		return maxs[t];
	if (!is_uns(t) && gen_chance(g, 6))
		return mins[t];
	if (is_uns(t))
		return gen_fmt(g, "%u", gen_rnd(g, 17));
	return gen_fmt(g, "%d", (int)gen_rnd(g, 25) - 8);
}

/* A literal that fits every integer type and is never 0 or -1. */
static const char *
divisor_lit(Gen *g)
{
	return gen_fmt(g, "%u", 1 + gen_rnd(g, 7));
}

/* ---- expressions ---------------------------------------------------------------- */

static char *load_expr(Gen *g, int t, Shape s, int d);

/* Offsets, within a program's part, of the elements of a tile of shape
 * s: row-major, or column-major when tr (both a permutation). */
const char *
gen_flat(Gen *g, Shape s, bool tr)
{
	if (s.rank == 0)
		return "pid";
	if (s.rank == 1)
		return gen_fmt(g, "(pid * %d + range(%d))", s.d[0], s.d[0]);
	if (tr)
		return gen_fmt(g, "(pid * %d + range(%d)[:, None] + range(%d)[None, :] * %d)",
			   gen_numel(s), s.d[0], s.d[1], s.d[0]);
	return gen_fmt(g, "(pid * %d + range(%d)[:, None] * %d + range(%d)[None, :])",
		   gen_numel(s), s.d[0], s.d[1], s.d[1]);
}

Ptr *
gen_add_ptr(Gen *g, const char *prefix, int t, FzRole role, size_t n)
{
	Ptr *p;

	if (g->nptrs == MAXP)
		return NULL;
	p = &g->ptrs[g->nptrs++];
	p->name = gen_fresh(g, prefix);
	p->t = t;
	p->role = role;
	p->n = n;
	return p;
}

/* An input of element type t: one of those made before, or a new one. */
Ptr *
gen_input(Gen *g, int t)
{
	int i, n = 0;

	for (i = 0; i < g->nptrs; i++)
		if (g->ptrs[i].role == FZ_IN && g->ptrs[i].t == t &&
		    !g->ptrs[i].trank)
			n++;
	if (n && (n > 2 || gen_chance(g, 70))) {
		int k = (int)gen_rnd(g, (uint32_t)n);

		for (i = 0; i < g->nptrs; i++)
			if (g->ptrs[i].role == FZ_IN && g->ptrs[i].t == t &&
			    !g->ptrs[i].trank && k-- == 0)
				return &g->ptrs[i];
	}
	return gen_add_ptr(g, "x", t, FZ_IN, g->L);
}

/* A variable of type t and shape s in scope, or NULL. */
static Var *
find_var(Gen *g, int t, Shape s)
{
	int i, n = 0, k;

	for (i = 0; i < g->nvars; i++)
		if (g->vars[i].t == t && same_shape(g->vars[i].s, s) &&
		    !g->vars[i].hidden)
			n++;
	if (!n)
		return NULL;
	k = (int)gen_rnd(g, (uint32_t)n);
	for (i = 0; i < g->nvars; i++)
		if (g->vars[i].t == t && same_shape(g->vars[i].s, s) &&
		    !g->vars[i].hidden && k-- == 0)
			return &g->vars[i];
	return NULL;
}

/* A variable of shape s and any type but t (and not i1 unless to i1). */
static Var *
find_var_shape(Gen *g, int t, Shape s)
{
	int i, n = 0, k;

	for (i = 0; i < g->nvars; i++)
		if (g->vars[i].t != t && same_shape(g->vars[i].s, s) &&
		    !g->vars[i].hidden)
			n++;
	if (!n)
		return NULL;
	k = (int)gen_rnd(g, (uint32_t)n);
	for (i = 0; i < g->nvars; i++)
		if (g->vars[i].t != t && same_shape(g->vars[i].s, s) &&
		    !g->vars[i].hidden && k-- == 0)
			return &g->vars[i];
	return NULL;
}

static char *
full_expr(Gen *g, int t, Shape s)
{
	gen_count(g, FZ_C_full);
	/* a scalar constant that sema leaves to the IR (and canon folds) */
	if (s.rank == 0 && !is_bool(t) && gen_chance(g, 50))
		return gen_fmt(g, "max(full(%s, [2], %s), axis: 0)", gen_tys[t].name,
			   lit(g, t));
	if (s.rank == 0)
		return g->in_fn ? gen_fmt(g, "program_id(0).to(%s)", gen_tys[t].name)
				: gen_fmt(g, "pid.to(%s)", gen_tys[t].name);
	if (gen_chance(g, 30))
		return gen_fmt(g, "zeros(%s, %s)", gen_tys[t].name, dims_str(g, s));
	return gen_fmt(g, "full(%s, %s, %s)", gen_tys[t].name, dims_str(g, s), lit(g, t));
}

/* An i32 index tile of shape s from ranges. */
static char *
range_expr(Gen *g, Shape s)
{
	gen_count(g, FZ_C_range);
	if (s.rank == 1) {
		int a = (int)gen_rnd(g, 5) - 2;

		if (gen_chance(g, 50))
			return gen_fmt(g, "range(%d)", s.d[0]);
		return gen_fmt(g, "range(%d, %d)", a, a + s.d[0]);
	}
	return gen_fmt(g, "(range(%d)[:, None] * %d + range(%d)[None, :])", s.d[0],
		   s.d[1], s.d[1]);
}

static char *
leaf(Gen *g, int t, Shape s, int d)
{
	Var *v;
	int r;

	if (t == T_I32 && s.rank == 0 && gen_chance(g, 5)) {
		gen_count(g, FZ_C_num_programs);
		return "num_programs(0)";
	}
	if (g->consts && gen_chance(g, 80))
		return full_expr(g, t, s);
	for (;;) {
		r = (int)gen_rnd(g, 100);
		if (r < 55 && (v = find_var(g, t, s)))
			return (char *)v->name;
		if (r < 65 && (v = find_var_shape(g, t, s))) {
			gen_count(g, FZ_C_convert);
			return gen_fmt(g, "%s.to(%s)", v->name, gen_tys[t].name);
		}
		if (r < 85 && !g->in_fn)
			return load_expr(g, t, s, d);
		if (r < 90 && t == T_I32 && s.rank > 0)
			return range_expr(g, s);
		if (r < 95 || s.rank == 0)
			break;
		/* a smaller value broadcast */
		if (s.rank == 2 && (v = find_var(g, t, gen_shape1(s.d[1])))) {
			gen_count(g, FZ_C_broadcast);
			return gen_fmt(g, "broadcast_to(%s, %s)", v->name,
				   dims_str(g, s));
		}
	}
	return full_expr(g, t, s);
}

/* A shape that broadcasts to s and is not s. */
static Shape
sub_shape(Gen *g, Shape s)
{
	int r = (int)gen_rnd(g, 4);

	if (s.rank == 0 || r == 0)
		return gen_shape0();
	if (s.rank == 1)
		return gen_shape1(1);
	if (r == 1)
		return gen_shape1(s.d[1]);
	if (r == 2)
		return gen_shape2(s.d[0], 1);
	return gen_shape2(1, s.d[1]);
}

/* An expression whose shape broadcasts to s: s itself, a smaller shape,
 * or a weak literal. */
static char *
operand_lit(Gen *g, int t, Shape s, int d, bool allow_lit)
{
	int r = (int)gen_rnd(g, 100);
	Shape ss;
	char *e;

	if (r < 15 && allow_lit)
		return (char *)lit(g, t);
	if (r < 35 && s.rank > 0) {
		ss = sub_shape(g, s);
		if (ss.rank == 2 && ss.d[1] == 1 && gen_chance(g, 50)) {
			gen_count(g, FZ_C_expand);
			e = gen_expr(g, t, gen_shape1(ss.d[0]), d);
			return gen_chance(g, 50) ? gen_fmt(g, "%s[:, None]", e)
					     : gen_fmt(g, "expand_dims(%s, 1)", e);
		}
		if (ss.rank == 2 && ss.d[0] == 1 && gen_chance(g, 50)) {
			gen_count(g, FZ_C_expand);
			e = gen_expr(g, t, gen_shape1(ss.d[1]), d);
			return gen_chance(g, 50) ? gen_fmt(g, "%s[None, :]", e)
					     : gen_fmt(g, "expand_dims(%s, 0)", e);
		}
		return gen_expr(g, t, ss, d);
	}
	return gen_expr(g, t, s, d);
}

char *
gen_operand(Gen *g, int t, Shape s, int d)
{
	return operand_lit(g, t, s, d, true);
}

/* a op b with one side exactly t/s, the order random */
static char *
binary(Gen *g, const char *op, int t, Shape s, int d)
{
	char *a = gen_expr(g, t, s, d - 1), *b;

	if (gen_chance(g, 8))  /* x - x, x ^ x, x == x, ...: canon's identities */
		return gen_fmt(g, "(%s %s %s)", a, op, a);
	b = gen_operand(g, t, s, d - 1);
	if (gen_chance(g, 50))
		return gen_fmt(g, "(%s %s %s)", b, op, a);
	return gen_fmt(g, "(%s %s %s)", a, op, b);
}

static char *
p_arith(Gen *g, int t, Shape s, int d)
{
	static const char *const ops[] = { "+", "-", "*" };

	if (!is_num(t))
		return NULL;
	if (is_float(t) && gen_chance(g, 20)) {
		gen_count(g, FZ_C_divrem);
		return binary(g, gen_chance(g, 70) ? "/" : "%", t, s, d);
	}
	gen_count(g, FZ_C_arith);
	return binary(g, ops[gen_rnd(g, 3)], t, s, d);
}

static char *
p_divrem(Gen *g, int t, Shape s, int d)
{
	const char *op = gen_chance(g, 60) ? "/" : "%";
	char *a, *b;

	if (!is_num(t) || is_float(t))
		return NULL;
	a = gen_expr(g, t, s, d - 1);
	if (gen_chance(g, 10)) {  /* (a + b - 1) / b */
		gen_count(g, FZ_C_cdiv);
		return gen_fmt(g, "cdiv(%s, %s)", a, divisor_lit(g));
	}
	gen_count(g, FZ_C_divrem);
	switch (gen_rnd(g, 3)) {
	case 0:
		b = (char *)divisor_lit(g);
		break;
	/* b is never a literal here: two literals of different widths fold
	 * to a typed (not weak) constant (sema's weak flag is lost when one
	 * is widened), which would change the division's type */
	case 1:
		if (is_uns(t)) {
			b = gen_fmt(g, "(%s | 1)", gen_expr(g, t, s, d - 1));
			break;
		}
		/* fall through */
	default:
		b = gen_fmt(g, "((%s & 15) + 1)", gen_expr(g, t, s, d - 1));
		break;
	}
	return gen_fmt(g, "(%s %s %s)", a, op, b);
}

static char *
p_bitwise(Gen *g, int t, Shape s, int d)
{
	static const char *const ops[] = { "&", "|", "^" };

	if (!is_int(t))
		return NULL;
	if (is_bool(t) && gen_chance(g, 40)) {
		gen_count(g, FZ_C_logical);
		return binary(g, gen_chance(g, 50) ? "&&" : "||", t, s, d);
	}
	gen_count(g, FZ_C_bitwise);
	return binary(g, ops[gen_rnd(g, 3)], t, s, d);
}

static char *
p_shift(Gen *g, int t, Shape s, int d)
{
	char *a, *b;

	if (!is_int(t) || is_bool(t))
		return NULL;
	gen_count(g, FZ_C_shift);
	a = gen_expr(g, t, s, d - 1);
	b = gen_operand(g, t, s, d - 1);
	return gen_fmt(g, "(%s %s %s)", a, gen_chance(g, 50) ? "<<" : ">>", b);
}

static char *
p_unary(Gen *g, int t, Shape s, int d)
{
	char *a;

	if (is_fp8(t))
		return NULL;
	gen_count(g, FZ_C_unary);
	a = gen_expr(g, t, s, d - 1);
	if (is_bool(t))
		return gen_fmt(g, "(%s%s)", gen_chance(g, 80) ? "!" : "~", a);
	if (is_int(t) && gen_chance(g, 40))
		return gen_fmt(g, "(~%s)", a);
	return gen_fmt(g, "(-%s)", a);
}

static char *
p_compare(Gen *g, int t, Shape s, int d)
{
	static const char *const ops[] = { "<", "<=", ">", ">=", "==", "!=" };
	int t2;
	char *a, *b;

	if (!is_bool(t))
		return NULL;
	gen_count(g, FZ_C_compare);
	t2 = gen_rand_type_where(g, is_num);
	if (gen_chance(g, 10))
		t2 = T_I1;
	a = gen_expr(g, t2, s, d - 1);
	b = gen_operand(g, t2, s, d - 1);
	return gen_fmt(g, "(%s %s %s)", a, ops[gen_rnd(g, 6)], b);
}

static char *
p_where(Gen *g, int t, Shape s, int d)
{
	char *c, *a, *b;

	if (is_fp8(t))
		return NULL;
	gen_count(g, FZ_C_where);
	/* not a literal: where(true, 1.5, x) is the weak literal 1.5, and
	 * `let v: f32 = 1.5` keeps it weak (a sema bug: a later store of v
	 * into an integer output is refused) */
	c = operand_lit(g, T_I1, s, d - 1, false);
	a = gen_expr(g, t, s, d - 1);
	b = gen_operand(g, t, s, d - 1);
	return gen_chance(g, 50) ? gen_fmt(g, "where(%s, %s, %s)", c, a, b)
			     : gen_fmt(g, "where(%s, %s, %s)", c, b, a);
}

static char *
p_minmax(Gen *g, int t, Shape s, int d)
{
	const char *fn;
	char *a, *b;

	if (!is_num(t))
		return NULL;
	gen_count(g, FZ_C_minmax);
	b = gen_operand(g, t, s, d - 1);
	a = gen_expr(g, t, s, d - 1);
	fn = gen_chance(g, 50) ? "min" : "max";
	return gen_fmt(g, "%s(%s, %s)", fn, a, b);
}

static char *
p_math(Gen *g, int t, Shape s, int d)
{
	static const char *const fns[] = {
		"exp", "exp2", "log", "log2", "sqrt", "rsqrt", "sin", "cos",
		"tanh", "erf", "sigmoid", "floor", "ceil", "abs",
	};
	enum { NAPPROX = 9 };  /* the first nine have `approx: true` */
	int t2 = t;
	uint32_t i;
	const char *fn;
	char *a;

	if (is_int(t) && !is_bool(t)) {
		gen_count(g, FZ_C_math);
		return gen_fmt(g, "abs(%s)", gen_expr(g, t, s, d - 1));
	}
	if (!is_float(t))
		return NULL;
	gen_count(g, FZ_C_math);
	if (t == T_F32 && gen_chance(g, 15))  /* integers are converted to f32 */
		t2 = gen_rand_type_where(g, is_num);
	if (is_float(t2) && t2 != t)
		t2 = t;
	/* abs keeps an integer's type; the others convert it to f32 */
	a = gen_expr(g, t2, s, d - 1);
	i = gen_rnd(g, countof(fns) - (t2 != t));
	fn = fns[i];
	if (g->o->approx_pct > 0 && t != T_F64 && i < NAPPROX) {
		g->arng = g->arng * 6364136223846793005ull + 1442695040888963407ull;
		if ((int)((g->arng >> 33) % 100) < g->o->approx_pct)
			return gen_fmt(g, "%s(%s, approx: true)", fn, a);
	}
	return gen_fmt(g, "%s(%s)", fn, a);
}

static char *
p_fma(Gen *g, int t, Shape s, int d)
{
	char *a, *b, *c;

	if (!is_float(t))
		return NULL;
	gen_count(g, FZ_C_fma);
	c = gen_operand(g, t, s, d - 1);
	b = gen_operand(g, t, s, d - 1);
	a = gen_expr(g, t, s, d - 1);
	return gen_fmt(g, "fma(%s, %s, %s)", a, b, c);
}

static char *
p_convert(Gen *g, int t, Shape s, int d)
{
	int t2;

	if (is_fp8(t))
		return NULL;
	if (!is_bool(t) && gen_chance(g, 15)) {
		const char *f8;
		char *a;

		gen_count(g, FZ_C_convert_fp8);
		t2 = gen_rand_type_where(g, is_float);
		f8 = gen_chance(g, 50) ? "f8e4m3" : "f8e5m2";
		a = gen_expr(g, t2, s, d - 1);
		return gen_fmt(g, "%s.to(%s).to(%s)", a, f8, gen_tys[t].name);
	}
	gen_count(g, FZ_C_convert);
	do
		t2 = gen_rand_type(g);
	while (t2 == t);
	return gen_fmt(g, "%s.to(%s)", gen_expr(g, t2, s, d - 1), gen_tys[t].name);
}

static char *
p_bitcast(Gen *g, int t, Shape s, int d)
{
	int c[T_COUNT], n = 0, i, t2;

	if (is_bool(t) || is_fp8(t))
		return NULL;
	for (i = 0; i < T_COUNT; i++)
		if (i != t && gen_tys[i].bits == gen_tys[t].bits && !is_fp8(i))
			c[n++] = i;
	if (!n)
		return NULL;
	gen_count(g, FZ_C_bitcast);
	t2 = c[gen_rnd(g, (uint32_t)n)];
	if (is_float(t2)) {
		/* a computed NaN's bits are not defined (a NaN made at run
		 * time and one folded at -O3 differ): none is reinterpreted */
		char *e = gen_expr(g, t2, s, 1);

		return gen_fmt(g, "bitcast(where(%s == %s, %s, 0.0), %s)", e, e, e,
			   gen_tys[t].name);
	}
	return gen_fmt(g, "bitcast(%s, %s)", gen_expr(g, t2, s, d - 1), gen_tys[t].name);
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
	extra = 1 << gen_rnd(g, 7);
	while (extra * gen_numel(s) > MAXN)
		extra /= 2;
	if (s.rank == 0 && gen_chance(g, 30)) {  /* everything, without axis */
		int a = 1 << gen_rnd(g, 5);

		src = gen_shape2(a, extra);
		kind = kinds[gen_rnd(g, gen_chance(g, 20) ? 4 : 3)];
		gen_count(g, FZ_C_reduce);
		return gen_fmt(g, "%s(%s)", kind, gen_expr(g, t, src, d - 1));
	}
	k = (int)gen_rnd(g, (uint32_t)s.rank + 1);
	if (s.rank == 0)
		src = gen_shape1(extra);
	else if (k == 0)
		src = gen_shape2(extra, s.d[0]);
	else
		src = gen_shape2(s.d[0], extra);
	kind = kinds[gen_rnd(g, gen_chance(g, 15) ? 4 : 3)];
	if (t == T_I32 && gen_chance(g, 35)) {
		kind = gen_chance(g, 30) ? "sum" : gen_chance(g, 50) ? "argmax" : "argmin";
		t2 = strcmp(kind, "sum") == 0 ? T_I1 : gen_rand_type_where(g, is_num);
		gen_count(g, FZ_C_argminmax);
	} else {
		gen_count(g, FZ_C_reduce);
	}
	return gen_fmt(g, "%s(%s, axis: %d)", kind, gen_expr(g, t2, src, d - 1), k);
}

static char *
p_trans(Gen *g, int t, Shape s, int d)
{
	if (s.rank != 2)
		return NULL;
	gen_count(g, FZ_C_trans);
	if (gen_chance(g, 30))
		return gen_fmt(g, "trans(%s, [1, 0])",
			   gen_expr(g, t, gen_shape2(s.d[1], s.d[0]), d - 1));
	return gen_fmt(g, "trans(%s)", gen_expr(g, t, gen_shape2(s.d[1], s.d[0]), d - 1));
}

static char *
p_reshape(Gen *g, int t, Shape s, int d)
{
	int n = gen_numel(s), a;
	Shape src;

	if (s.rank == 0 || n == 1)
		return NULL;
	a = 1 << gen_rnd(g, (uint32_t)__builtin_ctz((unsigned)n) + 1);
	src = s.rank == 2 && gen_chance(g, 40) ? gen_shape1(n) : gen_shape2(a, n / a);
	if (same_shape(src, s))
		src = gen_shape1(n);
	if (same_shape(src, s))
		return NULL;
	gen_count(g, FZ_C_reshape);
	return gen_fmt(g, "reshape(%s, %s)", gen_expr(g, t, src, d - 1), dims_str(g, s));
}

static char *
p_broadcast(Gen *g, int t, Shape s, int d)
{
	Shape src;

	if (s.rank == 0)
		return NULL;
	src = sub_shape(g, s);
	gen_count(g, FZ_C_broadcast);
	return gen_fmt(g, "broadcast_to(%s, %s)", gen_expr(g, t, src, d - 1),
		   dims_str(g, s));
}

static char *
p_expand(Gen *g, int t, Shape s, int d)
{
	if (s.rank != 2 || (s.d[0] != 1 && s.d[1] != 1))
		return NULL;
	gen_count(g, FZ_C_expand);
	if (s.d[1] == 1)
		return gen_fmt(g, "%s[:, None]", gen_expr(g, t, gen_shape1(s.d[0]), d - 1));
	return gen_fmt(g, "%s[None, :]", gen_expr(g, t, gen_shape1(s.d[1]), d - 1));
}

static char *
p_dot(Gen *g, int t, Shape s, int d)
{
	int m = s.d[0], n = s.d[1], k, ot, r;
	char *a, *b;

	if (g->o->no_dot || s.rank != 2 || m < 16 || n < 16 ||
	    (t != T_F32 && t != T_I32))
		return NULL;
	k = 16 << gen_rnd(g, 3);
	while (k > 16 && (m * k > MAXN || k * n > MAXN))
		k /= 2;
	if (m * k > MAXN || k * n > MAXN)
		return NULL;
	r = (int)gen_rnd(g, 100);
	ot = t == T_I32 ? T_I8 : r < 42 ? T_F16 : r < 84 ? T_BF16 : r < 92 ? T_F32
		: T_F8E4M3;
	gen_count(g, t == T_I32 ? FZ_C_dot_i8 : is_fp8(ot) ? FZ_C_dot_fp8 : FZ_C_dot);
	if (is_fp8(ot)) {
		const char *f8 = gen_chance(g, 50) ? "f8e4m3" : "f8e5m2";

		a = gen_fmt(g, "%s.to(%s)", gen_expr(g, T_F16, gen_shape2(m, k), d - 1), f8);
		b = gen_fmt(g, "%s.to(%s)", gen_expr(g, T_F16, gen_shape2(k, n), d - 1), f8);
	} else {
		a = gen_expr(g, ot, gen_shape2(m, k), d - 1);
		b = gen_expr(g, ot, gen_shape2(k, n), d - 1);
	}
	if (gen_chance(g, 50))
		return gen_fmt(g, "dot(%s, %s, %s)", a, b, gen_expr(g, t, s, d - 1));
	return gen_fmt(g, "dot(%s, %s)", a, b);
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

/* A dot of type t and shape s (M, N >= 16), else any expression. */
char *
gen_dot(Gen *g, int t, Shape s, int d)
{
	char *e = p_dot(g, t, s, d);

	return e ? e : gen_expr(g, t, s, d);
}

/* An expression of element type t and shape exactly s. */
char *
gen_expr(Gen *g, int t, Shape s, int d)
{
	int total = 0, tries, r;
	size_t i;
	char *e;

	if (d <= 0 || gen_chance(g, 20))
		return leaf(g, t, s, d);
	if (!g->consts && gen_chance(g, 6)) {  /* a subtree of constants */
		g->consts = true;
		e = gen_expr(g, t, s, d);
		g->consts = false;
		return e;
	}
	for (i = 0; i < countof(prods); i++)
		total += prods[i].weight;
	for (tries = 0; tries < 12; tries++) {
		r = (int)gen_rnd(g, (uint32_t)total);
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
	const char *offs, *mask = NULL, *conv = "", *hint = "";
	Ptr *p;

	if (is_float(t) && gen_chance(g, 10))
		lt = gen_chance(g, 50) ? T_F8E4M3 : T_F8E5M2;
	if (!(p = gen_input(g, lt)))
		return full_expr(g, t, s);
	if (lt != t)
		conv = gen_fmt(g, ".to(%s)", gen_tys[t].name);
	gen_count(g, FZ_C_load);
	r = (int)gen_rnd(g, 100);
	if (s.rank == 0) {
		gen_count(g, FZ_C_load_scalar);
		offs = gen_fmt(g, "(pid + %u)", gen_rnd(g, 16));
		if (gen_chance(g, 30))
			mask = gen_fmt(g, "(pid < %s)", gen_chance(g, 50) ? "n1" : "k0");
	} else if (r < 25 && d > 0) {
		gen_count(g, FZ_C_load_gather);
		offs = gen_fmt(g, "(%s & %d)", gen_expr(g, T_I32, s, d - 1), MAXN - 1);
		if (gen_chance(g, 40))
			mask = gen_operand(g, T_I1, s, d - 1);
	} else {
		bool tr = s.rank == 2 && gen_chance(g, 30);

		offs = gen_flat(g, s, tr);
		if (s.rank == 2)
			gen_count(g, FZ_C_load_2d);
		if (gen_chance(g, 50) && s.rank == 1)
			mask = gen_fmt(g, "(%s < %s)", offs, gen_chance(g, 50) ? "n0" : "n1");
		else if (gen_chance(g, 50) && s.rank == 2)
			mask = gen_fmt(g, "((range(%d) < nr)[:, None] & (range(%d) < nc)[None, :])",
				   s.d[0], s.d[1]);
		else if (gen_chance(g, 20) && d > 0)
			mask = gen_operand(g, T_I1, s, d - 1);
	}
	if (gen_chance(g, 10)) {
		static const char *const cache[] = { "ca", "cg", "cs", "cv" };
		static const char *const evict[] = { "normal", "first", "last" };

		gen_count(g, FZ_C_load_hint);
		hint = gen_chance(g, 50) ? gen_fmt(g, ", cache: %s", cache[gen_rnd(g, 4)])
				     : gen_fmt(g, ", evict: %s", evict[gen_rnd(g, 3)]);
	}
	if (!mask)
		return gen_fmt(g, "load(%s + %s%s)%s", p->name, offs, hint, conv);
	gen_count(g, FZ_C_load_masked);
	if (gen_chance(g, 60))
		return gen_fmt(g, "load(%s + %s, mask: %s, other: %s%s)%s", p->name,
			   offs, mask, lit(g, lt), hint, conv);
	return gen_fmt(g, "load(%s + %s, mask: %s%s)%s", p->name, offs, mask, hint,
		   conv);
}

/* ---- device functions ------------------------------------------------------------- */

/* A device function returning t/s, written to g->fns; its call. */
static char *
p_call(Gen *g, int t, Shape s, int d)
{
	int np, i, saved_nvars = g->nvars, saved_indent = g->indent;
	bool generic = gen_chance(g, 50);
	const char *name, *args[3];
	int pt[3];
	Shape ps[3];
	Buf saved = g->body;
	Buf sig = { 0 };
	Var *vars;
	char *ret;

	if (g->in_fn || g->nfn == MAXF || d < 2)
		return NULL;
	gen_count(g, FZ_C_call);
	name = gen_fmt(g, "f%d", g->nfn++);
	np = 1 + (int)gen_rnd(g, 3);
	for (i = 0; i < np; i++) {
		pt[i] = i == 0 && gen_chance(g, 50) ? t : gen_rand_type(g);
		ps[i] = i == 0 || gen_chance(g, 50) ? s : sub_shape(g, s);
		args[i] = gen_expr(g, pt[i], ps[i], d - 1);
	}
	/* the body, with only the parameters in scope */
	vars = arena_dup(&g->arena, g->vars, sizeof g->vars);
	g->in_fn = true;
	g->body = (Buf){ 0 };
	g->indent = 0;
	g->nvars = 0;
	buf_printf(&sig, "fn %s(", name);
	for (i = 0; i < np; i++) {
		const char *pn = gen_fmt(g, "a%d", i);

		gen_add_var(g, pn, pt[i], ps[i], false);
		if (generic)
			buf_printf(&sig, "%s%s", i ? ", " : "", pn);
		else
			buf_printf(&sig, "%s%s: %s", i ? ", " : "", pn,
				   gen_type_str(g, pt[i], ps[i]));
	}
	buf_printf(&sig, ")%s {\n", generic ? "" : gen_fmt(g, " -> %s",
							gen_type_str(g, t, s)));
	for (i = (int)gen_rnd(g, 3); i > 0; i--) {
		int lt = gen_chance(g, 50) ? t : gen_rand_type(g);
		const char *ln = gen_fresh(g, "l");

		gen_line(g, "let %s: %s = %s;", ln, gen_type_str(g, lt, s),
		     gen_expr(g, lt, s, d - 1));
		gen_add_var(g, ln, lt, s, false);
	}
	ret = gen_expr(g, t, s, d - 1);
	gen_line(g, "return %s;", ret);
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
		return gen_fmt(g, "%s(%s)", name, args[0]);
	if (np == 2)
		return gen_fmt(g, "%s(%s, %s)", name, args[0], args[1]);
	return gen_fmt(g, "%s(%s, %s, %s)", name, args[0], args[1], args[2]);
}

