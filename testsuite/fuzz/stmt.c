/*
 * stmt.c: the statements of a generated kernel (gen.c has the
 * expressions): lets and vars, assignments, stores of every value to an
 * output and read-backs of them, for and while loops with carried vars,
 * if/else, shared buffers (filled by stores or cp.async, then read whole
 * or through views), atomics, swizzle2d -- and fz_generate, which writes
 * the kernel, its parameters and its "//!" launch lines.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"

enum { NSCALARS = 8 };  /* pid and the scalar parameters: vars[0..7] */

/* ---- statements ------------------------------------------------------------------ */

static void block(Gen *g, int n);

static int
depth_of_expr(Gen *g)
{
	return 1 + (int)gen_rnd(g, (uint32_t)g->o->max_depth);
}

/* Shape and type of a new value: often those of one in scope. */
static void
pick_type_shape(Gen *g, int *t, Shape *s)
{
	if (g->nvars && gen_chance(g, 50)) {
		Var *v = &g->vars[gen_rnd(g, (uint32_t)g->nvars)];

		*s = v->s;
		*t = gen_chance(g, 60) ? v->t : gen_rand_type(g);
		return;
	}
	*t = gen_rand_type(g);
	*s = gen_rand_shape(g);
}

static void
st_let(Gen *g, bool mut)
{
	const char *name = gen_fresh(g, mut ? "w" : "v");
	int t;
	Shape s;

	if (!g->o->no_dot && gen_chance(g, 6)) {  /* a dot of its own */
		int m = 16 << gen_rnd(g, 3), n = 16 << gen_rnd(g, 3);

		if (m * n > MAXN)
			n = MAXN / m;
		t = gen_chance(g, 85) ? T_F32 : T_I32;
		s = gen_shape2(m, n);
		gen_line(g, "%s %s: %s = %s;", mut ? "var" : "let", name,
			 gen_type_str(g, t, s), gen_dot(g, t, s, depth_of_expr(g) + 1));
		gen_add_var(g, name, t, s, mut);
		return;
	}
	pick_type_shape(g, &t, &s);
	gen_line(g, "%s %s: %s = %s;", mut ? "var" : "let", name, gen_type_str(g, t, s),
	     gen_expr(g, t, s, depth_of_expr(g)));
	gen_add_var(g, name, t, s, mut);
}

static Var *
pick_mutable(Gen *g)
{
	int i, n = 0, k;

	for (i = 0; i < g->nvars; i++)
		n += g->vars[i].mut && !g->vars[i].ro;
	if (!n)
		return NULL;
	k = (int)gen_rnd(g, (uint32_t)n);
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
	const char *op;
	char *e;

	gen_count(g, FZ_C_assign);
	if (gen_chance(g, 40)) {
		gen_line(g, "%s = %s;", v->name, gen_expr(g, t, s, d));
		return;
	}
	if (is_num(t) && gen_chance(g, 60)) {
		static const char *const ops[] = { "+=", "-=", "*=" };

		if (is_float(t) && gen_chance(g, 15)) {
			gen_line(g, "%s /= %s;", v->name, gen_operand(g, t, s, d));
		} else {
			e = gen_operand(g, t, s, d);
			op = ops[gen_rnd(g, 3)];
			gen_line(g, "%s %s %s;", v->name, op, e);
		}
		return;
	}
	if (is_int(t) && !is_bool(t) && gen_chance(g, 30)) {
		e = gen_operand(g, t, s, d);
		op = gen_chance(g, 50) ? "<<=" : ">>=";
		gen_line(g, "%s %s %s;", v->name, op, e);
		return;
	}
	if (is_int(t) && !is_bool(t) && gen_chance(g, 30)) {
		e = gen_expr(g, t, s, d);
		op = gen_chance(g, 50) ? "/=" : "%=";
		gen_line(g, "%s %s ((%s & 15) + 1);", v->name, op, e);
		return;
	}
	if (is_int(t)) {
		static const char *const ops[] = { "&=", "|=", "^=" };

		e = gen_operand(g, t, s, d);
		op = ops[gen_rnd(g, 3)];
		gen_line(g, "%s %s %s;", v->name, op, e);
		return;
	}
	gen_line(g, "%s = %s;", v->name, gen_expr(g, t, s, d));
}

static const char *
out_type_for(Gen *g, int t, int *ot)
{
	*ot = t;
	if (gen_chance(g, 15)) {
		gen_count(g, FZ_C_store_convert);
		*ot = gen_rnd(g, T_COUNT);
	}
	return gen_tys[*ot].name;
}

static void
store_var(Gen *g, Var *v)
{
	int ot;
	bool tr = v->s.rank == 2 && gen_chance(g, 25);
	const char *offs = gen_flat(g, v->s, tr), *mask = NULL;
	Ptr *p;

	out_type_for(g, v->t, &ot);
	if (!(p = gen_add_ptr(g, "o", ot, FZ_OUT, (size_t)(g->nprog * gen_numel(v->s)))))
		return;
	v->stored = true;
	p->s = v->s;
	p->offs = offs;
	gen_count(g, FZ_C_store);
	if (v->s.rank == 1 && gen_chance(g, 20))
		mask = gen_fmt(g, "(%s < n1)", offs);
	else if (v->s.rank > 0 && gen_chance(g, 15))
		mask = gen_operand(g, T_I1, v->s, 2);
	if (mask) {
		gen_count(g, FZ_C_store_masked);
		gen_line(g, "store(%s + %s, %s, mask: %s);", p->name, offs, v->name,
		     mask);
	} else {
		gen_line(g, "store(%s + %s, %s);", p->name, offs, v->name);
	}
}

static void
st_store(Gen *g)
{
	/* not the kernel's scalars, but for a few */
	if (g->nvars > NSCALARS && !gen_chance(g, 5))
		store_var(g, &g->vars[NSCALARS +
				      gen_rnd(g, (uint32_t)(g->nvars - NSCALARS))]);
	else if (g->nvars)
		store_var(g, &g->vars[gen_rnd(g, (uint32_t)g->nvars)]);
}

/* Reads back what this program stored to an output (its own part of it,
 * so no other program races), after a barrier: loads must not move
 * across the stores before them. */
static void
st_readback(Gen *g)
{
	int i, n = 0, k, t;
	const char *name = gen_fresh(g, "v");
	Ptr *p = NULL;

	/* not i1: where the store did not run (a branch not taken), the
	 * poison bytes read back are no i1 values */
	for (i = 0; i < g->nptrs; i++)
		n += g->ptrs[i].role == FZ_OUT && !is_bool(g->ptrs[i].t) &&
		     g->ptrs[i].offs;
	if (!n)
		return;
	k = (int)gen_rnd(g, (uint32_t)n);
	for (i = 0; i < g->nptrs && !p; i++)
		if (g->ptrs[i].role == FZ_OUT && !is_bool(g->ptrs[i].t) &&
		    g->ptrs[i].offs && k-- == 0)
			p = &g->ptrs[i];
	gen_count(g, FZ_C_readback);
	t = is_fp8(p->t) ? T_F32 : p->t;
	gen_line(g, "sync_threads();");
	gen_line(g, "let %s: %s = load(%s + %s)%s;", name, gen_type_str(g, t, p->s),
	     p->name, p->offs, is_fp8(p->t) ? ".to(f32)" : "");
	gen_add_var(g, name, t, p->s, false);
}

/* A scalar condition: a comparison of scalars (sizes, program ids,
 * reductions, loop counters), sometimes two joined. */
static char *
cond(Gen *g)
{
	static const char *const ops[] = { "<", "<=", ">", ">=", "==", "!=" };
	int t = gen_rand_type_where(g, is_num);
	const char *op;
	char *a, *b, *c;

	b = gen_operand(g, t, gen_shape0(), 1);
	op = ops[gen_rnd(g, 6)];
	a = gen_expr(g, t, gen_shape0(), 2);
	c = gen_fmt(g, "%s %s %s", a, op, b);
	if (gen_chance(g, 20)) {
		b = gen_expr(g, T_I1, gen_shape0(), 2);
		op = gen_chance(g, 50) ? "&&" : "||";
		c = gen_fmt(g, "(%s) %s (%s)", c, op, b);
	}
	return c;
}

static void
pop_scope(Gen *g)
{
	int i;

	/* block-local values are stored before they go out of scope,
	 * sometimes */
	for (i = g->nvars - 1; i >= 0 && g->vars[i].depth == g->depth; i--)
		if (!g->vars[i].stored && !g->vars[i].ro && gen_chance(g, 40))
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
	const char *i = gen_fresh(g, "j"), *lo, *hi, *step = "";
	Var *acc = NULL, *iv;
	int saved = g->loop_var;

	gen_count(g, FZ_C_for_loop);
	if (gen_chance(g, 60)) {
		st_let(g, true);
		acc = &g->vars[g->nvars - 1];
	} else {
		acc = pick_mutable(g);
	}
	lo = gen_chance(g, 70) ? "0" : gen_fmt(g, "%d", (int)gen_rnd(g, 3) - 1);
	switch (gen_rnd(g, 4)) {
	case 0: hi = "k0"; break;
	case 1: hi = "(k0 + 1)"; break;
	default: hi = gen_fmt(g, "%u", 1 + gen_rnd(g, 4)); break;
	}
	if (gen_chance(g, 15))
		step = " step 2";
	gen_line(g, "for %s in %s .. %s%s {", i, lo, hi, step);
	open_block(g);
	iv = gen_add_var(g, i, T_I32, gen_shape0(), false);
	if (iv)
		iv->ro = true;
	g->loop_var = g->nvars - 1;
	loop_body(g, acc, 1 + (int)gen_rnd(g, 3));
	close_block(g);
	g->loop_var = saved;
	gen_line(g, "}");
}

static void
st_while(Gen *g)
{
	const char *w = gen_fresh(g, "c"), *lim;
	Var *acc = pick_mutable(g), *wv;

	gen_count(g, FZ_C_while_loop);
	lim = gen_chance(g, 40) ? "k0" : gen_fmt(g, "%u", 1 + gen_rnd(g, 3));
	gen_line(g, "var %s: i32 = 0;", w);
	wv = gen_add_var(g, w, T_I32, gen_shape0(), true);
	if (wv)
		wv->ro = true;
	gen_line(g, "while %s < %s {", w, lim);
	open_block(g);
	loop_body(g, acc, 1 + (int)gen_rnd(g, 2));
	gen_line(g, "%s += 1;", w);
	close_block(g);
	gen_line(g, "}");
}

static void
st_if(Gen *g)
{
	Var *v = pick_mutable(g);

	gen_count(g, FZ_C_if_else);
	gen_line(g, "if %s {", cond(g));
	open_block(g);
	loop_body(g, v, 1 + (int)gen_rnd(g, 2));
	close_block(g);
	while (gen_chance(g, 15)) {
		gen_count(g, FZ_C_else_if);
		gen_line(g, "} else if %s {", cond(g));
		open_block(g);
		loop_body(g, v, 1 + (int)gen_rnd(g, 2));
		close_block(g);
	}
	if (gen_chance(g, 60)) {
		int n = 1 + (int)gen_rnd(g, 2);
		Var *carried = v && gen_chance(g, 70) ? v : NULL;

		gen_line(g, "} else {");
		open_block(g);
		loop_body(g, carried, n);
		close_block(g);
	}
	gen_line(g, "}");
}

/* An assert that holds: (x | 1) != 0 for an integer x. */
static void
st_assert(Gen *g)
{
	int t = gen_rand_type_where(g, is_num);
	Shape s = gen_rand_shape(g);

	if (!is_int(t))
		t = T_I32;
	gen_count(g, FZ_C_assert);
	gen_line(g, "assert((%s | 1) != 0, \"odd numbers are not zero\");",
		 gen_expr(g, t, s, 2));
}

/* ---- shared buffers ----------------------------------------------------------------- */

static int
smem_type(Gen *g)
{
	int t = gen_rand_type_where(g, is_num);

	if (gen_chance(g, 10))
		t = gen_chance(g, 50) ? T_F8E4M3 : T_F8E5M2;
	return t;
}

/* The value to store into a buffer of element type t: a tile of that
 * type, or of f32 for fp8 buffers (the store converts). */
static char *
smem_value(Gen *g, int t, Shape s)
{
	return gen_expr(g, is_fp8(t) ? T_F32 : t, s, depth_of_expr(g));
}

static void
st_shared_decl(Gen *g)
{
	Smem *b;
	int rank = 1 + (int)gen_rnd(g, 3), i, bytes;
	Shape s;

	if (g->nsmem == MAXS)
		return;
	b = &g->smem[g->nsmem];
	b->t = smem_type(g);
	b->rank = rank;
	do {
		s = gen_rand_shape(g);
	} while (s.rank == 0 || (rank == 3 && s.rank != 2) ||
		 (rank == 2 && s.rank != 2) || (rank == 1 && s.rank != 1));
	if (rank == 3) {
		b->d[0] = 2 << gen_rnd(g, 2);
		while (b->d[0] * gen_numel(s) > MAXN) {
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
	bytes = (gen_tys[b->t].bits / 8) * (rank == 3 ? b->d[0] : 1) * gen_numel(s);
	if (g->smem_bytes + bytes > 48 * 1024)
		return;
	g->smem_bytes += bytes;
	g->nsmem++;
	b->name = gen_fresh(g, "s");
	gen_count(g, FZ_C_shared);
	if (rank == 1)
		gen_line(g, "shared %s: %s[%d];", b->name, gen_tys[b->t].name, b->d[0]);
	else if (rank == 2)
		gen_line(g, "shared %s: %s[%d, %d];", b->name, gen_tys[b->t].name,
		     b->d[0], b->d[1]);
	else
		gen_line(g, "shared %s: %s[%d, %d, %d];", b->name, gen_tys[b->t].name,
		     b->d[0], b->d[1], b->d[2]);
	/* written whole before anything reads it: by stores, or copied
	 * from an input with cp.async (masked-off elements become 0) */
	if (gen_chance(g, 25)) {
		Ptr *p = gen_input(g, b->t);
		int k = rank < 3 ? 1 : b->d[0];

		if (!p)
			return;
		gen_count(g, FZ_C_cp_async);
		for (i = 0; i < k; i++) {
			const char *dst = rank < 3 ? b->name
						   : gen_fmt(g, "%s[%d]", b->name, i);
			const char *src = gen_fmt(g, "%s + %s", p->name,
					      gen_flat(g, s, s.rank == 2 && gen_chance(g, 30)));

			if (s.rank == 1 && gen_chance(g, 50))
				gen_line(g, "cp_async(%s, %s, mask: (range(%d) < nc));",
				     dst, src, s.d[0]);
			else
				gen_line(g, "cp_async(%s, %s);", dst, src);
		}
		gen_line(g, "cp_async_commit();");
		gen_line(g, "cp_async_wait(0);");
	} else if (rank < 3) {
		gen_line(g, "store(%s, %s);", b->name, smem_value(g, b->t, s));
	} else {
		for (i = 0; i < b->d[0]; i++)
			gen_line(g, "store(%s[%d], %s);", b->name, i,
			     smem_value(g, b->t, s));
	}
	gen_line(g, "sync_threads();");
}

/* A view of b: the buffer, b[i] or a slice along the first dimension;
 * its shape in *s. */
static const char *
smem_view(Gen *g, Smem *b, Shape *s)
{
	int len, lo;

	if (b->rank == 3) {
		const char *i;

		if (g->loop_var >= 0 && gen_chance(g, 40))
			i = gen_fmt(g, "(%s & %d)", g->vars[g->loop_var].name,
				b->d[0] - 1);
		else
			i = gen_fmt(g, "%u", gen_rnd(g, (uint32_t)b->d[0]));
		*s = gen_shape2(b->d[1], b->d[2]);
		gen_count(g, FZ_C_shared_view);
		if (b->d[1] > 1 && gen_chance(g, 30)) {  /* b[i][lo .. hi, :] */
			len = b->d[1] >> (1 + gen_rnd(g, 2));
			len = len ? len : 1;
			lo = len * (int)gen_rnd(g, (uint32_t)(b->d[1] / len));
			*s = gen_shape2(len, b->d[2]);
			return gen_fmt(g, "%s[%s][%d .. %d, :]", b->name, i, lo, lo + len);
		}
		return gen_fmt(g, "%s[%s]", b->name, i);
	}
	*s = b->rank == 1 ? gen_shape1(b->d[0]) : gen_shape2(b->d[0], b->d[1]);
	if (b->rank == 2 && b->d[0] > 1 && gen_chance(g, 30)) {
		const char *i = gen_fmt(g, "%u", gen_rnd(g, (uint32_t)b->d[0]));

		if (g->loop_var >= 0 && gen_chance(g, 50))
			i = gen_fmt(g, "(%s & %d)", g->vars[g->loop_var].name,
				b->d[0] - 1);
		gen_count(g, FZ_C_shared_view);
		*s = gen_shape1(b->d[1]);
		return gen_fmt(g, "%s[%s]", b->name, i);
	}
	if (b->d[0] > 1 && gen_chance(g, 30)) {
		len = b->d[0] >> (1 + gen_rnd(g, 2));
		len = len ? len : 1;
		lo = len * (int)gen_rnd(g, (uint32_t)(b->d[0] / len));
		gen_count(g, FZ_C_shared_view);
		if (b->rank == 1) {
			*s = gen_shape1(len);
			return gen_fmt(g, "%s[%d .. %d]", b->name, lo, lo + len);
		}
		*s = gen_shape2(len, b->d[1]);
		return gen_fmt(g, "%s[%d .. %d, :]", b->name, lo, lo + len);
	}
	return b->name;
}

static void
st_shared_use(Gen *g)
{
	Smem *b = &g->smem[gen_rnd(g, (uint32_t)g->nsmem)];
	Shape s;
	const char *view = smem_view(g, b, &s);

	if (gen_chance(g, 35)) {
		gen_line(g, "sync_threads();");
		gen_line(g, "store(%s, %s);", view, smem_value(g, b->t, s));
		gen_line(g, "sync_threads();");
		return;
	}
	{
		int t = is_fp8(b->t) ? T_F32 : b->t;
		const char *name = gen_fresh(g, "v");

		if (is_fp8(b->t))
			gen_line(g, "let %s: %s = load(%s).to(f32);", name,
			     gen_type_str(g, t, s), view);
		else
			gen_line(g, "let %s: %s = load(%s);", name, gen_type_str(g, t, s),
			     view);
		gen_add_var(g, name, t, s, false);
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
	int t = gen_rand_type_where(g, atomic_type_ok);
	Shape s = gen_rand_shape(g);
	const char *name = gen_fresh(g, "v"), *kind, *offs, *val, *mask;
	bool tr = s.rank == 2 && gen_chance(g, 30);
	Ptr *p;

	if (!(p = gen_add_ptr(g, "a", t, FZ_INOUT, (size_t)(g->nprog * gen_numel(s)))))
		return;
	offs = gen_flat(g, s, tr);
	if (gen_chance(g, 20) && t != T_F16 && t != T_BF16) {
		const char *cmp;

		gen_count(g, FZ_C_atomic_cas);
		/* floats compare bits: a NaN computed at run time and one
		 * folded at -O3 need not have the same bits, so floats
		 * compare only with what memory holds */
		cmp = gen_chance(g, 50) || is_float(t)
			      ? gen_fmt(g, "load(%s + %s)", p->name, offs)
			      : gen_expr(g, t, s, 2);
		gen_line(g, "let %s: %s = atomic_cas(%s + %s, %s, %s);", name,
		     gen_type_str(g, t, s), p->name, offs, cmp,
		     gen_expr(g, t, s, depth_of_expr(g)));
		gen_add_var(g, name, t, s, false);
		return;
	}
	gen_count(g, FZ_C_atomic);
	if (is_float(t))
		kind = t == T_F32 ? fkinds[gen_rnd(g, 4)] : fkinds[gen_rnd(g, 2)];
	else
		kind = ikinds[gen_rnd(g, countof(ikinds))];
	if (s.rank > 0 && gen_chance(g, 30)) {
		mask = gen_operand(g, T_I1, s, 2);
		val = gen_expr(g, t, s, depth_of_expr(g));
		gen_line(g, "let %s: %s = atomic_%s(%s + %s, %s, mask: %s);", name,
		     gen_type_str(g, t, s), kind, p->name, offs, val, mask);
	} else {
		gen_line(g, "let %s: %s = atomic_%s(%s + %s, %s);", name,
		     gen_type_str(g, t, s), kind, p->name, offs,
		     gen_expr(g, t, s, depth_of_expr(g)));
	}
	gen_add_var(g, name, t, s, false);
}

/* Many elements (of every program) on one address: integer kinds whose
 * result does not depend on the order; the old values are not used. */
static void
st_atomic_same(Gen *g)
{
	static const char *const kinds[] = { "add", "max", "min", "and", "or",
					     "xor" };
	int t = gen_rand_type_where(g, int_atomic_type_ok);
	Shape s = gen_rand_shape(g);
	const char *kind = kinds[gen_rnd(g, countof(kinds))], *val, *mask;
	unsigned at;
	Ptr *p;

	if (!(p = gen_add_ptr(g, "z", t, FZ_INOUT, 4)))
		return;
	gen_count(g, FZ_C_atomic_same);
	if (s.rank > 0 && gen_chance(g, 30)) {
		mask = gen_operand(g, T_I1, s, 2);
		val = gen_expr(g, t, s, depth_of_expr(g));
		at = gen_rnd(g, 4);
		gen_line(g, "atomic_%s(%s + %u, %s, mask: %s);", kind, p->name, at,
		     val, mask);
	} else {
		val = gen_expr(g, t, s, depth_of_expr(g));
		at = gen_rnd(g, 4);
		gen_line(g, "atomic_%s(%s + %u, %s);", kind, p->name, at, val);
	}
}

/* A grouped program order: two i32 scalars. */
static void
st_swizzle(Gen *g)
{
	const char *a = gen_fresh(g, "v"), *b = gen_fresh(g, "v");
	unsigned m = 1 + gen_rnd(g, 8), n = 1 + gen_rnd(g, 8), group;
	const char *e;

	/* the index must name a tile of the m x n grid: past it the grouped
	 * order divides by zero (the docs do not say so) */
	gen_count(g, FZ_C_swizzle);
	group = 1 + gen_rnd(g, 4);
	e = gen_expr(g, T_I32, gen_shape0(), 1);
	gen_line(g, "let (%s, %s) = swizzle2d(((%s & 63) %% %u), %u, %u, group: %u);",
	     a, b, e, m * n, m, n, group);
	gen_add_var(g, a, T_I32, gen_shape0(), false);
	gen_add_var(g, b, T_I32, gen_shape0(), false);
}

/* ---- blocks --------------------------------------------------------------------------- */

/* A row kernel's statement: R rows (R = 1: one row, a 1-D tile) of W
 * columns in a tile of B, at a pitch P of W to W + 8 elements (rarely a
 * multiple of 16 bytes), loaded under `c < W`, a reduction along the
 * rows subtracted, stored under the same mask.  peel-rows shifts each
 * row to its 16-byte boundary. */
static void
st_rows(Gen *g)
{
	static const char *const red[] = { "sum", "max", "min" };
	int t = gen_rand_type_where(g, is_num), ot;
	int R = 1 << gen_rnd(g, 3), B = 4 << gen_rnd(g, 5);
	int W = 1 + (int)gen_rnd(g, (uint32_t)B), P = W + (int)gen_rnd(g, 9);
	const char *v = gen_fresh(g, "row"), *rk = gen_fresh(g, "r"), *c, *m, *rd;
	const char *k = red[gen_rnd(g, 3)], *oth;
	Ptr *x = gen_input(g, t), *o;

	out_type_for(g, t, &ot);
	if (!x || !(o = gen_add_ptr(g, "o", ot, FZ_OUT, (size_t)(g->nprog * R * P))))
		return;
	gen_count(g, FZ_C_rows);
	oth = is_float(t) ? gen_fmt(g, "%d.5", (int)gen_rnd(g, 5) - 2)
			  : gen_fmt(g, "%d", (int)gen_rnd(g, 3));
	if (R == 1) {
		gen_line(g, "let %s: i32 = pid;", rk);
		c = gen_fmt(g, "range(%d)", B);
		rd = gen_fmt(g, "%s(%s, axis: 0)", k, v);
	} else {
		gen_line(g, "let %s: i32[%d, 1] = pid * %d + range(%d)[:, None];", rk, R, R, R);
		c = gen_fmt(g, "range(%d)[None, :]", B);
		rd = gen_fmt(g, "%s(%s, axis: 1)[:, None]", k, v);
	}
	m = gen_fmt(g, "(%s < %d)", c, W);
	gen_line(g, "let %s: %s = load(%s + %s * %d + %s, mask: %s, other: %s);", v,
		 gen_type_str(g, t, R == 1 ? gen_shape1(B) : gen_shape2(R, B)),
		 x->name, rk, P, c, m, oth);
	gen_line(g, "store(%s + %s * %d + %s, (%s - %s)%s, mask: %s);", o->name, rk, P, c,
		 v, rd, ot == t ? "" : gen_fmt(g, ".to(%s)", gen_tys[ot].name), m);
}

static void
stmt(Gen *g)
{
	int r = (int)gen_rnd(g, 100);
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
	else if (r < 98 && gen_chance(g, 50))
		st_swizzle(g);
	else if (r < 98)
		st_assert(g);
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

static char *
generate(uint64_t seed, const uint8_t *src, size_t nsrc,
	 const FzGenOpts *opts, FzGenStats *st)
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
	g->src = src;
	g->nsrc = nsrc;
	g->o = &o;
	g->st = st;
	g->loop_var = -1;
	g->nprog = 1 + (int)gen_rnd(g, 3);
	g->warps = 1 << gen_rnd(g, 4);
	g->L = (size_t)g->nprog * MAXN;
	g->stmts = o.max_stmts / 2 + (int)gen_rnd(g, (uint32_t)o.max_stmts / 2 + 1);
	data = mix(seed ^ 0xda7a);
	/* the sizes: n0, n1 cut blocks of the inputs, nr x nc 2-D boxes, k0
	 * counts loop trips */
	n0 = (long)gen_rnd(g, (uint32_t)g->L + 1);
	n1 = gen_chance(g, 30) ? (long)g->L : (long)gen_rnd(g, (uint32_t)g->L + 1);
	k0 = (int)gen_rnd(g, 5);
	gen_add_var(g, "pid", T_I32, gen_shape0(), false);
	gen_add_var(g, "n0", T_I32, gen_shape0(), false);
	gen_add_var(g, "k0", T_I32, gen_shape0(), false);
	gen_add_var(g, "fx", T_F32, gen_shape0(), false);
	gen_add_var(g, "sx", T_I64, gen_shape0(), false);
	gen_add_var(g, "ux", T_U32, gen_shape0(), false);
	gen_add_var(g, "dx", T_F64, gen_shape0(), false);
	gen_add_var(g, "wx", T_U64, gen_shape0(), false);
	gen_line(g, "let pid: i32 = program_id(0);");
	/* drawn apart from the program's other choices */
	g->prog_warps = g->warps;
	g->async = o.async_pct > 0 && (int)(mix(seed ^ 0xa5c0) % 100) < o.async_pct;
	g->arng = mix(seed ^ 0xa9970);
	if (g->async) {
		gen_count(g, FZ_C_async);
		block(g, g->stmts / 2);
		gen_async(g);
		block(g, g->stmts / 2);
		gen_async(g);
	}
	block(g, g->stmts);
	if (o.rows_pct > 0 && (int)(mix(seed ^ 0x70a5) % 100) < o.rows_pct)
		st_rows(g);
	for (i = NSCALARS; i < g->nvars; i++)
		if (!g->vars[i].stored)
			store_var(g, &g->vars[i]);

	buf_printf(&out, "//! gen seed=%llu\n", (unsigned long long)seed);
	buf_printf(&out, "//! data 0x%llx\n", (unsigned long long)data);
	for (i = 0; i < g->nptrs; i++) {
		buf_printf(&out, "//! arg %s %s %s %zu", g->ptrs[i].name,
			   g->ptrs[i].role == FZ_IN ? "in"
			   : g->ptrs[i].role == FZ_OUT ? "out" : "inout",
			   gen_tys[g->ptrs[i].t].name, g->ptrs[i].n);
		if (g->ptrs[i].trank == 1)
			buf_printf(&out, " tensor %d", g->ptrs[i].tshape[0]);
		else if (g->ptrs[i].trank)
			buf_printf(&out, " tensor %dx%d", g->ptrs[i].tshape[0],
				   g->ptrs[i].tshape[1]);
		buf_putc(&out, '\n');
	}
	buf_printf(&out, "//! arg n0 scalar i32 %ld\n", n0);
	buf_printf(&out, "//! arg n1 scalar i32 %ld\n", n1);
	buf_printf(&out, "//! arg nr scalar i32 %u\n", gen_rnd(g, 70));
	buf_printf(&out, "//! arg nc scalar i32 %u\n", gen_rnd(g, 70));
	buf_printf(&out, "//! arg k0 scalar i32 %d\n", k0);
	buf_printf(&out, "//! arg fx scalar f32 %g\n",
		   ((int)gen_rnd(g, 2001) - 1000) / 64.0);
	buf_printf(&out, "//! arg sx scalar i64 %lld\n",
		   gen_chance(g, 20) ? -9000000000000000000ll
				 : (long long)gen_rnd(g, 100000) - 50000);
	buf_printf(&out, "//! arg ux scalar u32 %u\n",
		   gen_chance(g, 20) ? 4294967295u : gen_rnd(g, 100000));
	buf_printf(&out, "//! arg dx scalar f64 %.17g\n",
		   ((int)gen_rnd(g, 2001) - 1000) / 7.0);
	buf_printf(&out, "//! arg wx scalar u64 %llu\n",
		   gen_chance(g, 20) ? 18446744073709551615ull
				 : (unsigned long long)gen_rnd(g, 100000));
	if (g->fns.s)
		buf_puts(&out, g->fns.s);
	buf_puts(&out, "kernel gen(");
	for (i = 0; i < g->nptrs; i++)
		if (g->ptrs[i].trank)
			buf_printf(&out, "%s: tma<%s, %d>, ", g->ptrs[i].name,
				   gen_tys[g->ptrs[i].t].name, g->ptrs[i].trank);
		else
			buf_printf(&out, "%s: *%s, ", g->ptrs[i].name,
				   gen_tys[g->ptrs[i].t].name);
	buf_printf(&out, "n0: i32, n1: i32, nr: i32, nc: i32, k0: i32, fx: f32, "
		   "sx: i64, ux: u32, dx: f64, wx: u64) warps(%d) grid(%d) {\n",
		   g->warps,
		   g->nprog);
	buf_puts(&out, g->body.s ? g->body.s : "");
	buf_puts(&out, "}\n");
	buf_free(&g->body);
	buf_free(&g->fns);
	arena_reset(&g->arena);
	free(g);
	return out.s;
}

char *
fz_generate(uint64_t seed, const FzGenOpts *opts, FzGenStats *st)
{
	return generate(seed, NULL, 0, opts, st);
}

char *
fz_generate_bytes(const uint8_t *data, size_t n, const FzGenOpts *opts,
		  FzGenStats *st)
{
	uint64_t h = 0xcbf29ce484222325ull;  /* FNV-1a */
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ data[i]) * 0x100000001b3ull;
	return generate(h, data, n, opts, st);
}
