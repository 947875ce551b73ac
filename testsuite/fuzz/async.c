/*
 * async.c: the asynchronous part of a generated program (docs/language.md,
 * "Explicit asynchrony"), in the programs that --async picks: sections at
 * the kernel's top level, each self-contained --
 *
 *   pipe      tasks (warps, replicas, register budgets) around a pipe of
 *             1 to 4 stages: a producer fills each slot's fields by
 *             stores or TMA, commits, over several iterations; consumers
 *             (one or two tasks, replicated) consume, read, release (or
 *             keep the slot a `var` and release it an iteration late),
 *             sometimes with dot_async/dot_wait on the slot's buffers, or
 *             inside a persistent tile schedule that every task iterates;
 *   barrier   the same over an explicit shared ring and mbarriers (full
 *             and empty, phases from the iteration; arrive with bytes:,
 *             expect_bytes, or stores then arrive);
 *   tma       no tasks: a TMA load into a buffer on an mbarrier whose
 *             phase flips each iteration, TMA stores of a tile or of a
 *             buffer, and dot_async/dot_wait on buffers (wgmma shapes);
 *   tiles     a static or dynamic tile schedule's loop.
 *
 * Determinism: every task instance writes an output part of its own
 * (program, task, replica; or the tile, not the program, under a
 * schedule), so nothing races and no order is unspecified; a dynamic
 * schedule's body reads nothing that depends on which program runs it.
 * Tasks see only the kernel's scalars (the tiles before them need not be
 * cheap to recompute); gen_expr's other values are hidden from them.
 * TMA tensors are parameters of their own (one box each), whose shapes
 * are ragged against the boxes: loads past the edge read zeros, stores
 * past it are skipped.
 *
 * The draws follow gen.c's rule (no two in one expression).  A program
 * without a section takes the same draws as before --async existed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"

enum { NSCALARS = 8, ASYNC_SMEM = 96 * 1024 };

/* Element types of buffers that TMA and pipes carry. */
static bool
async_type_ok(int t)
{
	return is_num(t);
}

static int
esize(int t)
{
	return gen_tys[t].bits / 8;
}

/* A tma<T, 2> input or output for boxes of r x c at coordinates up to
 * about rows x cols: its shape ragged against them (rows of a multiple
 * of 16 bytes). */
static Ptr *
tensor_param(Gen *g, int t, FzRole role, int rows, int cols)
{
	int unit = 16 / esize(t) > 0 ? 16 / esize(t) : 1, tr, tc;
	Ptr *p;

	tr = rows - (int)gen_rnd(g, (uint32_t)(rows / 2 + 1));
	if (role == FZ_IN && gen_chance(g, 30))
		tr += (int)gen_rnd(g, 9);
	tc = cols - unit * (int)gen_rnd(g, (uint32_t)(cols / unit / 2 + 1));
	if (role == FZ_IN && gen_chance(g, 30))
		tc += unit * (int)gen_rnd(g, 3);
	tr = tr < 1 ? 1 : tr;
	tc = tc < unit ? unit : tc;
	if (!(p = gen_add_ptr(g, role == FZ_IN ? "ti" : "to", t, role,
			      (size_t)tr * (size_t)tc)))
		return NULL;
	p->trank = 2;
	p->tshape[0] = tr;
	p->tshape[1] = tc;
	return p;
}

/* A tma<T, 1> input for boxes of n elements at coordinates up to about
 * len: its length ragged against them. */
static Ptr *
tensor_param1(Gen *g, int t, int len)
{
	int unit = 16 / esize(t) > 0 ? 16 / esize(t) : 1, n;
	Ptr *p;

	n = len - unit * (int)gen_rnd(g, (uint32_t)(len / unit / 2 + 1));
	n = n < unit ? unit : n;
	if (!(p = gen_add_ptr(g, "ti", t, FZ_IN, (size_t)n)))
		return NULL;
	p->trank = 1;
	p->tshape[0] = n;
	return p;
}

/* A box shape for TMA of element type t: rows x cols, cols spanning a
 * multiple of 16 bytes, both powers of two at most 256, at most maxe
 * elements. */
static Shape
box_shape(Gen *g, int t, int maxe)
{
	int unit = 16 / esize(t) > 0 ? 16 / esize(t) : 1;
	int c = unit << gen_rnd(g, 3), r = 1 << gen_rnd(g, 7);

	while (c > 256)
		c /= 2;
	while (r * c > maxe && r > 1)
		r /= 2;
	/* a multiple of 128 bytes, so that every stage of a ring is
	 * aligned for TMA (codegen refuses a copy into a buffer that is
	 * not) */
	while (r * c * esize(t) < 128)
		r *= 2;
	return gen_shape2(r, c);
}

/* A trip count: a literal, or from k0 (0 to 4), at least lo. */
static const char *
trips(Gen *g, int lo)
{
	switch (gen_rnd(g, 4)) {
	case 0: return gen_fmt(g, "%d", lo + (int)gen_rnd(g, 8));
	case 1: return lo ? gen_fmt(g, "(k0 + %d)", lo) : "k0";
	case 2: return gen_fmt(g, "(k0 + %d)", lo + 2 + (int)gen_rnd(g, 4));
	default: return gen_fmt(g, "max(k0, %d)", lo);
	}
}

/* Values in scope that a task may not see: g->vars[lo, g->nvars) from
 * here on are hidden until unhide. */
static int
hide(Gen *g)
{
	int i;

	for (i = NSCALARS; i < g->nvars; i++)
		g->vars[i].hidden = true;
	return g->nvars;
}

static void
unhide(Gen *g, int n)
{
	int i;

	g->nvars = n;
	for (i = NSCALARS; i < g->nvars; i++)
		g->vars[i].hidden = false;
}

static void
scoped(Gen *g, int n)
{
	g->nvars = n;
}

/* A loop counter or running value: not assigned by gen_expr's users. */
static Var *
add_ro(Gen *g, const char *name, int t, Shape s, bool mut)
{
	Var *v = gen_add_var(g, name, t, s, mut);

	if (v)
		v->ro = true;
	return v;
}

/* A value of type t and shape s to fill a buffer with in iteration k
 * (a name in scope): a load from an input at offsets that move with k,
 * then an expression over it. */
static const char *
fill_value(Gen *g, int t, Shape s, const char *k, const char *who)
{
	Ptr *x = gen_input(g, t);
	const char *v = gen_fresh(g, "v"), *flat, *e;
	int n = gen_numel(s), slack = MAXN - n;

	if (!x)
		return gen_fmt(g, "zeros(%s, [%d, %d])", gen_tys[t].name,
			       s.d[0], s.d[1]);
	flat = s.rank == 1 ? gen_fmt(g, "range(%d)", s.d[0])
	       : gen_fmt(g, "range(%d)[:, None] * %d + range(%d)[None, :]",
			 s.d[0], s.d[1], s.d[1]);
	gen_count(g, FZ_C_load);
	gen_line(g, "let %s: %s = load(%s + (((%s * 37 + %s * 11) %% %d) + %s));",
		 v, gen_type_str(g, t, s), x->name, k, who,
		 slack > 0 ? slack : 1, flat);
	gen_add_var(g, v, t, s, false);
	if (g->no_pid || gen_chance(g, 40))
		return v;
	e = gen_expr(g, t, s, 2);
	return e;
}

/* The offsets of part `part` (an expression) of an output of parts of
 * shape s. */
static const char *
part_offs(Gen *g, Shape s, const char *part)
{
	int n = gen_numel(s);

	if (s.rank == 1)
		return gen_fmt(g, "(%s) * %d + range(%d)", part, n, s.d[0]);
	return gen_fmt(g, "(%s) * %d + range(%d)[:, None] * %d + range(%d)[None, :]",
		       part, n, s.d[0], s.d[1], s.d[1]);
}

/* acc = a step of the running value from v (both type t, shape s). */
static void
accumulate(Gen *g, Var *acc, const char *v)
{
	if (gen_chance(g, 50)) {
		gen_line(g, "%s = %s + %s;", acc->name, acc->name, v);
		return;
	}
	if (!g->no_pid && gen_chance(g, 50)) {
		const char *e = gen_expr(g, acc->t, acc->s, 2);

		gen_line(g, "%s = %s;", acc->name, e);
		return;
	}
	gen_line(g, "%s = max(%s, %s);", acc->name, acc->name, v);
}

/* Stores the running value of one task instance: part `part` of a new
 * output of nparts parts, by a pointer, or by TMA to a tensor whose
 * rows are the parts. */
static void
store_part(Gen *g, Var *acc, const char *part, int nparts)
{
	Ptr *o;

	if (acc->s.rank == 2 && gen_chance(g, 30) &&
	    (acc->s.d[1] * esize(acc->t)) % 16 == 0 && acc->s.d[0] <= 256 &&
	    acc->s.d[1] <= 256 &&
	    (o = tensor_param(g, acc->t, FZ_OUT, nparts * acc->s.d[0],
			      acc->s.d[1]))) {
		gen_count(g, FZ_C_tma_store);
		gen_line(g, "tma_store(%s, [(%s) * %d, 0], %s);", o->name, part,
			 acc->s.d[0], acc->name);
		gen_line(g, "tma_store_wait(0);");
		return;
	}
	if (!(o = gen_add_ptr(g, "o", acc->t, FZ_OUT,
			      (size_t)nparts * (size_t)gen_numel(acc->s))))
		return;
	gen_count(g, FZ_C_store);
	gen_line(g, "store(%s + (%s), %s);", o->name, part_offs(g, acc->s, part),
		 acc->name);
}

/* ---- pipes and explicit rings inside tasks --------------------------------------- */

typedef struct Field {
	const char *name;
	int t;
	Shape s;
	Ptr *tens;   /* filled by TMA from this tensor, or by stores */
} Field;

typedef struct Ring {
	bool pipe;            /* a pipe, else a shared buffer and barriers */
	const char *name;     /* the pipe, or the buffers' prefix */
	const char *full, *empty;
	int stages, nfields, ninst;
	int ecount;           /* each consumer's arrivals on empty a phase */
	Field f[2];
	const char *nk;       /* iterations */
	const char *work;     /* a tile schedule both sides iterate, or NULL */
	int ntiles;
	bool dot;             /* consumers: dot_async over A [M, K], B [K, N] */
	bool late;            /* consumers release an iteration late */
	const char *ctr;      /* barriers under a schedule: the task's
			       * iterations over all tiles (slot, phase) */
	int nslot_bytes;
} Ring;

/* Warps of the producer, of each consumer task, replicas: the program's
 * warps stay a power of two (tasks may compute tiles, and so may the
 * code outside them). */
static void
task_shape(Gen *g, int *wp, int *wc, int *rc, bool dot)
{
	static const int t[][3] = {
		{ 1, 1, 1 }, { 2, 1, 2 }, { 1, 1, 3 }, { 2, 2, 1 }, { 4, 4, 1 },
		{ 4, 2, 2 }, { 2, 2, 3 }, { 1, 1, 1 }, { 4, 4, 3 }, { 4, 1, 4 },
	};
	int i = (int)gen_rnd(g, 10);

	*wp = t[i][0];
	*wc = t[i][1];
	*rc = t[i][2];
	if (dot) {  /* a warpgroup each */
		*wp = gen_chance(g, 50) ? 4 : 1 << gen_rnd(g, 2);
		*wc = 4;
		*rc = *wp == 4 ? 1 + 2 * (int)gen_rnd(g, 2) : 1;
	}
}

static void
producer(Gen *g, Ring *R, const char *who)
{
	const char *k = gen_fresh(g, "k"), *s = gen_fresh(g, "q");
	int i, saved = g->nvars;
	bool stored = false;

	gen_line(g, "for %s in 0 .. %s {", k, R->nk);
	g->indent++;
	add_ro(g, k, T_I32, gen_shape0(), false);
	if (R->pipe) {
		gen_line(g, "let %s = %s.acquire();", s, R->name);
	} else {
		const char *it = R->ctr ? R->ctr : k;

		gen_line(g, "let %s = %s %% %d;", s, it, R->stages);
		gen_line(g, "wait(%s[%s], ((%s / %d) & 1) ^ 1);", R->empty, s, it,
			 R->stages);
		if (R->f[0].tens) {
			int how = (int)gen_rnd(g, 3);

			if (how == 0)
				gen_line(g, "arrive(%s[%s], bytes: %d);", R->full, s,
					 R->nslot_bytes);
			else
				gen_line(g, "expect_bytes(%s[%s], %d);", R->full, s,
					 R->nslot_bytes);
			for (i = 0; i < R->nfields; i++) {
				Field *f = &R->f[i];

				gen_count(g, FZ_C_tma_load);
				gen_line(g, "tma_load(%s, [(%s) * %d, %s * %d], %s_%s[%s], "
					 "barrier: %s[%s]);", f->tens->name, who,
					 f->s.d[0], k, f->s.d[1], R->name, f->name, s,
					 R->full, s);
			}
			if (how != 0)
				gen_line(g, "arrive(%s[%s]);", R->full, s);
			if (R->ctr)
				gen_line(g, "%s += 1;", R->ctr);
			goto next;
		}
	}
	for (i = 0; i < R->nfields; i++) {
		Field *f = &R->f[i];
		const char *dst = R->pipe ? gen_fmt(g, "%s.%s", s, f->name)
			: gen_fmt(g, "%s_%s[%s]", R->name, f->name, s);

		if (f->tens) {
			gen_count(g, FZ_C_tma_load);
			gen_line(g, "tma_load(%s, [(%s) * %d, %s * %d], %s);",
				 f->tens->name, who, f->s.d[0], k, f->s.d[1], dst);
		} else if (f->s.d[0] & (f->s.d[0] - 1)) {
			/* rows of three replicas: no tile, a slice each */
			int j, h = f->s.d[0] / 3;

			for (j = 0; j < 3; j++) {
				const char *v = fill_value(g, f->t,
							   gen_shape2(h, f->s.d[1]),
							   k, who);

				gen_line(g, "store(%s[%d .. %d, :], %s);", dst,
					 j * h, (j + 1) * h, v);
			}
			stored = true;
		} else {
			const char *v = fill_value(g, f->t, f->s, k, who);

			gen_line(g, "store(%s, %s);", dst, v);
			stored = true;
		}
	}
	/* stores before asynchronous reads (wgmma) of another task */
	if (stored && (R->dot || gen_chance(g, 30)))
		gen_line(g, "fence_async_shared();");
	if (R->pipe)
		gen_line(g, "%s.commit(%s);", R->name, s);
	else
		gen_line(g, "arrive(%s[%s]);", R->full, s);
	if (!R->pipe && R->ctr)
		gen_line(g, "%s += 1;", R->ctr);
next:
	scoped(g, saved);
	g->indent--;
	gen_line(g, "}");
}

/* One consumer's loop; r names its replica (or "0"), part the output
 * part of this instance. */
static void
consumer(Gen *g, Ring *R, const char *r, const char *part, int nparts, int m)
{
	const char *k = gen_fresh(g, "k"), *s = gen_fresh(g, "q");
	const char *prev = gen_fresh(g, "q");
	Var *acc[2];
	int i, saved, nacc = R->dot ? 1 : R->nfields;

	for (i = 0; i < nacc; i++) {
		const char *a = gen_fresh(g, "w");
		int t = R->dot ? T_F32 : R->f[i].t;
		Shape sh = R->dot ? gen_shape2(m, R->f[1].s.d[1]) : R->f[i].s;

		gen_line(g, "var %s: %s = zeros(%s, %s);", a, gen_type_str(g, t, sh),
			 gen_tys[t].name, sh.rank == 1 ? gen_fmt(g, "[%d]", sh.d[0])
			 : gen_fmt(g, "[%d, %d]", sh.d[0], sh.d[1]));
		if (!(acc[i] = add_ro(g, a, t, sh, true)))
			return;
	}
	saved = g->nvars;
	if (R->late) {
		gen_count(g, FZ_C_pipe_late);
		gen_line(g, "var %s = %s.consume();", prev, R->name);
	}
	gen_line(g, "for %s in 0 .. %s {", k, R->nk);
	g->indent++;
	add_ro(g, k, T_I32, gen_shape0(), false);
	if (R->pipe) {
		if (R->late)
			gen_line(g, "let %s = %s;", s, prev);
		else
			gen_line(g, "let %s = %s.consume();", s, R->name);
	} else {
		const char *it = R->ctr ? R->ctr : k;

		gen_line(g, "let %s = %s %% %d;", s, it, R->stages);
		gen_line(g, "wait(%s[%s], (%s / %d) & 1);", R->full, s, it, R->stages);
	}
	if (R->dot) {
		const char *a = R->pipe ? gen_fmt(g, "%s.A", s)
			: gen_fmt(g, "%s_A[%s]", R->name, s);
		const char *b = R->pipe ? gen_fmt(g, "%s.B", s)
			: gen_fmt(g, "%s_B[%s]", R->name, s);

		if (R->f[0].s.d[0] > m)
			a = gen_fmt(g, "%s[%s * %d .. (%s + 1) * %d, :]", a, r, m, r, m);
		gen_count(g, FZ_C_dot_async);
		gen_line(g, "%s = dot_async(%s, %s, %s);", acc[0]->name, a, b,
			 acc[0]->name);
		gen_line(g, "%s = dot_wait(%s, pending: 0);", acc[0]->name,
			 acc[0]->name);
	} else {
		for (i = 0; i < nacc; i++) {
			const char *v = gen_fresh(g, "v");
			const char *src = R->pipe ? gen_fmt(g, "%s.%s", s, R->f[i].name)
				: gen_fmt(g, "%s_%s[%s]", R->name, R->f[i].name, s);

			if (gen_chance(g, 20)) {  /* through a transposed view */
				gen_line(g, "let %s: %s = trans(load(trans(%s)));", v,
					 gen_type_str(g, R->f[i].t, R->f[i].s), src);
			} else {
				gen_line(g, "let %s: %s = load(%s);", v,
					 gen_type_str(g, R->f[i].t, R->f[i].s), src);
			}
			gen_add_var(g, v, R->f[i].t, R->f[i].s, false);
			accumulate(g, acc[i], v);
		}
	}
	if (R->pipe && R->late) {
		/* the next slot is taken before this one goes back */
		gen_line(g, "if %s + 1 < %s {", k, R->nk);
		gen_line(g, "    %s = %s.consume();", prev, R->name);
		gen_line(g, "}");
		gen_line(g, "%s.release(%s);", R->name, s);
	} else if (R->pipe) {
		gen_line(g, "%s.release(%s);", R->name, s);
	} else {
		if (R->ecount > 1)
			gen_line(g, "arrive(%s[%s], count: %d);", R->empty, s,
				 R->ecount);
		else
			gen_line(g, "arrive(%s[%s]);", R->empty, s);
		if (R->ctr)
			gen_line(g, "%s += 1;", R->ctr);
	}
	scoped(g, saved);
	g->indent--;
	gen_line(g, "}");
	for (i = 0; i < nacc; i++)
		store_part(g, acc[i], part, nparts);
}

/* The ring's declaration, before the tasks. */
static bool
ring_decl(Gen *g, Ring *R, int nprog_parts)
{
	int i, bytes = 0;

	for (i = 0; i < R->nfields; i++)
		bytes += gen_numel(R->f[i].s) * esize(R->f[i].t);
	if (bytes * R->stages > ASYNC_SMEM - g->async_smem)
		return false;
	g->async_smem += bytes * R->stages;
	R->nslot_bytes = bytes;
	(void)nprog_parts;
	if (R->pipe) {
		Buf b = { 0 };
		const char *line;

		buf_printf(&b, "pipe %s(%d) { ", R->name, R->stages);
		for (i = 0; i < R->nfields; i++)
			buf_printf(&b, "%s%s: %s", i ? ", " : "", R->f[i].name,
				   gen_type_str(g, R->f[i].t, R->f[i].s));
		buf_puts(&b, " }");
		line = gen_fmt(g, "%s", b.s);
		buf_free(&b);
		gen_count(g, FZ_C_pipe);
		gen_line(g, "%s", line);
		return true;
	}
	for (i = 0; i < R->nfields; i++) {
		Field *f = &R->f[i];

		gen_line(g, "shared %s_%s: %s[%d, %d, %d];", R->name, f->name,
			 gen_tys[f->t].name, R->stages, f->s.d[0], f->s.d[1]);
	}
	gen_count(g, FZ_C_mbarrier);
	gen_line(g, "barrier %s[%d](arrive: 1);", R->full, R->stages);
	gen_line(g, "barrier %s[%d](arrive: %d);", R->empty, R->stages,
		 R->ninst * R->ecount);
	return true;
}

static bool
pow2(int n)
{
	return n > 0 && !(n & (n - 1));
}

/* The warps of a program whose tasks are a producer of wp warps and
 * ninst consumer instances of wc: each task of 4 or more warps (with
 * budgets, each task) starts at a warpgroup; with budgets, tasks hold
 * whole warpgroups. */
static int
task_warps(int warps, int wp, int wc, int ninst, bool regs)
{
	int pos = 0, i, w;

	for (i = 0; i <= ninst; i++) {
		w = i ? wc : wp;
		if (regs || w >= 4)
			pos = (pos + 3) / 4 * 4;
		pos += regs ? (w + 3) / 4 * 4 : w;
	}
	return pos > warps ? pos : warps;
}

/* An agent's loop over the schedule's tiles (a ring of barriers also
 * keeps its own count of slots), when the section has a schedule: true
 * when it opened one. */
static bool
work_open(Gen *g, Ring *R, bool pipe, const char *tv)
{
	if (!R->work)
		return false;
	if (!pipe) {
		R->ctr = gen_fresh(g, "c");
		gen_line(g, "var %s: i32 = 0;", R->ctr);
	}
	gen_line(g, "for %s in %s {", tv, R->work);
	g->indent++;
	return true;
}

static void
work_close(Gen *g, const Ring *R)
{
	if (!R->work)
		return;
	g->indent--;
	gen_line(g, "}");
}

static void
sec_ring(Gen *g, bool pipe)
{
	Ring R = { 0 };
	int wp, wc, rc, nc, i, n = g->nvars, m = 0, ntens = 0, total;
	const char *pid = "pid", *tv = NULL;
	bool tma = gen_chance(g, 50), regs;

	R.pipe = pipe;
	R.name = gen_fresh(g, pipe ? "p" : "r");
	R.full = gen_fmt(g, "%s_full", R.name);
	R.empty = gen_fmt(g, "%s_empty", R.name);
	R.stages = 1 + (int)gen_rnd(g, 4);
	R.dot = g->warps >= 4 && gen_chance(g, 25);
	task_shape(g, &wp, &wc, &rc, R.dot);
	if (R.dot && pipe)  /* a pipe's fields are tiles: rows a power of two */
		rc = 1;
	nc = !R.dot && gen_chance(g, 25) ? 2 : 1;
	/* the program's warps (with padding to warpgroups) a power of two */
	total = task_warps(g->warps, wp, wc, nc * rc, false);
	if (!pow2(total))
		nc = 1;
	/* register budgets: every task in whole warpgroups */
	regs = !R.dot && wp <= 4 && wc <= 4 && pow2(1 + nc * rc) &&
	       gen_chance(g, 15) && !g->ntasks;
	R.ninst = nc * rc;
	R.ecount = !pipe && gen_chance(g, 20) ? 2 : 1;
	R.late = pipe && !R.dot && R.stages >= 2 && gen_chance(g, 30);
	R.nk = trips(g, R.late ? 1 : 0);
	if (R.dot) {
		int k = 16 << gen_rnd(g, 3), nn = 16 << gen_rnd(g, 4);
		int ty = gen_chance(g, 50) ? T_BF16 : T_F16;

		m = 64;
		while (m * rc * k > MAXN)
			k /= 2;
		while (k * nn > MAXN || m * nn > MAXN)
			nn /= 2;
		R.nfields = 2;
		R.f[0] = (Field){ "A", ty, gen_shape2(m * rc, k), NULL };
		R.f[1] = (Field){ "B", ty, gen_shape2(k, nn), NULL };
	} else {
		R.nfields = 1 + (int)gen_rnd(g, 2);
		for (i = 0; i < R.nfields; i++) {
			int t = gen_rand_type_where(g, async_type_ok);
			Shape s = box_shape(g, t, 1024);

			R.f[i] = (Field){ i ? "B" : "A", t, s, NULL };
		}
	}
	if (!ring_decl(g, &R, 0))
		return;
	if (gen_chance(g, 25)) {  /* a persistent schedule */
		bool dyn = gen_chance(g, 50);

		R.ntiles = 1 + (int)gen_rnd(g, (uint32_t)g->nprog * 2);
		R.work = gen_fresh(g, "work");
		tv = gen_fresh(g, "t");
		gen_count(g, FZ_C_tiles);
		gen_line(g, "let %s = tiles(%d, schedule: %s);", R.work, R.ntiles,
			 dyn ? "dynamic" : "static");
		g->no_pid = dyn;
		pid = tv;
	}
	/* a pipe's fields each by TMA or stores; a ring of barriers all of
	 * a slot's fields by TMA (counted by bytes) or all by stores */
	for (i = 0; i < R.nfields && tma; i++) {
		Field *f = &R.f[i];

		if (!pipe || gen_chance(g, 70))
			f->tens = tensor_param(g, f->t, FZ_IN,
					       (R.work ? R.ntiles : g->nprog) *
					       f->s.d[0], f->s.d[1] * 5);
		ntens += f->tens != NULL;
	}
	if (!pipe && ntens != R.nfields)
		for (i = 0; i < R.nfields; i++)
			R.f[i].tens = NULL;
	hide(g);
	if (regs)
		gen_count(g, FZ_C_regs);
	/* budgets are the kernel's: every task of every `tasks` then holds
	 * whole warpgroups, so no other `tasks` follows */
	g->ntasks++;
	g->regs = regs;
	total = task_warps(g->warps, wp, wc, nc * rc, regs);
	g->prog_warps = total > g->prog_warps ? total : g->prog_warps;
	gen_count(g, FZ_C_tasks);
	gen_line(g, "tasks {");
	g->indent++;
	gen_line(g, "task %s_load(warps: %d%s) {", R.name, wp,
		 regs ? gen_fmt(g, ", regs: %d", 24 + 8 * (int)gen_rnd(g, 6)) : "");
	g->indent++;
	work_open(g, &R, pipe, tv);
	producer(g, &R, pid);
	work_close(g, &R);
	g->indent--;
	gen_line(g, "}");
	for (i = 0; i < nc; i++) {
		const char *r = rc > 1 ? gen_fresh(g, "r") : "0";
		const char *part = gen_fmt(g, "%s * %d + %s", pid, rc, r);
		int saved = g->nvars;

		if (rc > 1)
			gen_count(g, FZ_C_replicate);
		gen_line(g, "task %s_use%d(warps: %d%s%s) {", R.name, i, wc,
			 rc > 1 ? gen_fmt(g, ", replicate: %d", rc) : "",
			 regs ? gen_fmt(g, ", regs: %d", 64 + 8 * (int)gen_rnd(g, 9)) : "");
		g->indent++;
		if (rc > 1) {
			gen_line(g, "let %s = replica();", r);
			gen_add_var(g, r, T_I32, gen_shape0(), false);
		}
		if (work_open(g, &R, pipe, tv))
			gen_add_var(g, tv, T_I32, gen_shape0(), false);
		consumer(g, &R, r, part, (R.work ? R.ntiles : g->nprog) * rc, m);
		work_close(g, &R);
		scoped(g, saved);
		g->indent--;
		gen_line(g, "}");
	}
	g->indent--;
	gen_line(g, "}");
	g->no_pid = false;
	unhide(g, n);
}

/* ---- without tasks: TMA, mbarrier phases, dot_async ---------------------------- */

static void
sec_tma(Gen *g)
{
	int t = gen_rand_type_where(g, async_type_ok), bytes;
	Shape s = box_shape(g, t, 2048);
	const char *buf = gen_fresh(g, "s"), *bar = gen_fresh(g, "b");
	const char *k = gen_fresh(g, "k"), *acc = gen_fresh(g, "w");
	const char *nk = trips(g, 0);
	bool r1 = gen_chance(g, 25);  /* a rank-1 box: a row of it */
	Ptr *in;
	const char *at;
	Var *a;
	int saved;

	if (r1) {
		s = gen_shape1(s.d[1]);
		in = tensor_param1(g, t, g->nprog * 3 * s.d[0]);
		at = gen_fmt(g, "[(pid * 3 + %s) * %d]", k, s.d[0]);
	} else {
		in = tensor_param(g, t, FZ_IN, g->nprog * s.d[0], s.d[1] * 5);
		at = gen_fmt(g, "[pid * %d, %s * %d]", s.d[0], k, s.d[1]);
	}

	bytes = gen_numel(s) * esize(t);
	if (!in || bytes > ASYNC_SMEM - g->async_smem)
		return;
	g->async_smem += bytes;
	gen_count(g, FZ_C_tma_load);
	gen_count(g, FZ_C_mbarrier);
	gen_line(g, "shared %s: %s;", buf, gen_type_str(g, t, s));
	gen_line(g, "barrier %s[1](arrive: 1);", bar);
	gen_line(g, "var %s: %s = zeros(%s, %s);", acc, gen_type_str(g, t, s),
		 gen_tys[t].name, r1 ? gen_fmt(g, "[%d]", s.d[0])
		 : gen_fmt(g, "[%d, %d]", s.d[0], s.d[1]));
	if (!(a = add_ro(g, acc, t, s, true)))
		return;
	saved = g->nvars;
	gen_line(g, "for %s in 0 .. %s {", k, nk);
	g->indent++;
	add_ro(g, k, T_I32, gen_shape0(), false);
	if (gen_chance(g, 50)) {
		gen_line(g, "arrive(%s[0], bytes: %d);", bar, bytes);
		gen_line(g, "tma_load(%s, %s, %s, barrier: %s[0]);", in->name, at,
			 buf, bar);
	} else {
		gen_line(g, "expect_bytes(%s[0], %d);", bar, bytes);
		gen_line(g, "tma_load(%s, %s, %s, barrier: %s[0]);", in->name, at,
			 buf, bar);
		gen_line(g, "arrive(%s[0]);", bar);
	}
	gen_line(g, "wait(%s[0], %s & 1);", bar, k);
	{
		const char *v = gen_fresh(g, "v");

		gen_line(g, "let %s: %s = load(%s);", v, gen_type_str(g, t, s), buf);
		gen_add_var(g, v, t, s, false);
		accumulate(g, a, v);
	}
	/* every warp has read the buffer before the next copy overwrites it */
	gen_line(g, "sync_threads();");
	scoped(g, saved);
	g->indent--;
	gen_line(g, "}");
	a->ro = false;
	a->stored = true;
	store_part(g, a, "pid", g->nprog);
	if (!r1 && gen_chance(g, 40) &&
	    (s.d[1] * esize(t)) % 16 == 0) {  /* a TMA store of a buffer */
		Ptr *o = tensor_param(g, t, FZ_OUT, g->nprog * s.d[0], s.d[1]);

		if (!o)
			return;
		gen_count(g, FZ_C_tma_store);
		gen_line(g, "store(%s, %s);", buf, acc);
		gen_line(g, "fence_async_shared();");
		gen_line(g, "sync_threads();");
		gen_line(g, "tma_store(%s, [pid * %d, 0], %s);", o->name, s.d[0], buf);
		gen_line(g, "tma_store_wait(0);");
		gen_line(g, "sync_threads();");
	}
}

/* dot_async on two buffers filled by TMA or stores: A [M, K], B [K, N]
 * or, stored N x K, a transposed view of it (bf16 or f16 rows of 32, 64
 * or 128 bytes: wgmma's swizzles; fp8 with K a multiple of 32, K-major
 * only, so B transposed).  M is 16 a warp of the program: the
 * accumulator splits over its warpgroups. */
static void
sec_dot(Gen *g)
{
	static const int tys[] = { T_BF16, T_F16, T_F8E4M3, T_F8E5M2 };
	int ta_ = tys[gen_rnd(g, 4)], tb_;
	bool f8 = is_fp8(ta_), tr;
	int m = 16 * g->prog_warps, k, n = 16 << gen_rnd(g, 3);
	const char *sa = gen_fresh(g, "s"), *sb = gen_fresh(g, "s");
	const char *acc = gen_fresh(g, "w"), *bar = gen_fresh(g, "b");
	const char *bview;
	int bytes, saved = g->nvars;
	Shape bs;
	Var *a;

	tb_ = ta_;  /* one element type */
	tr = f8 || gen_chance(g, 30);
	k = f8 ? 32 << gen_rnd(g, 2) : 16 << gen_rnd(g, 3);
	while (m * k > MAXN)
		k /= 2;
	while (m * n > MAXN)
		n /= 2;
	if (k < (f8 ? 32 : 16))
		return;
	bs = tr ? gen_shape2(n, k) : gen_shape2(k, n);
	bytes = m * k * esize(ta_) + k * n * esize(tb_);
	if (bytes > ASYNC_SMEM - g->async_smem)
		return;
	g->async_smem += bytes;
	gen_line(g, "shared %s: %s;", sa, gen_type_str(g, ta_, gen_shape2(m, k)));
	gen_line(g, "shared %s: %s;", sb, gen_type_str(g, tb_, bs));
	if (gen_chance(g, 50)) {
		Ptr *pa = tensor_param(g, ta_, FZ_IN, g->nprog * m, k);
		Ptr *pb = tensor_param(g, tb_, FZ_IN, bs.d[0], g->nprog * bs.d[1]);

		if (!pa || !pb)
			return;
		gen_count(g, FZ_C_tma_load);
		gen_line(g, "barrier %s[1](arrive: 1);", bar);
		gen_line(g, "arrive(%s[0], bytes: %d);", bar, bytes);
		gen_line(g, "tma_load(%s, [pid * %d, 0], %s, barrier: %s[0]);",
			 pa->name, m, sa, bar);
		gen_line(g, "tma_load(%s, [0, pid * %d], %s, barrier: %s[0]);",
			 pb->name, bs.d[1], sb, bar);
		gen_line(g, "wait(%s[0], 0);", bar);
	} else {
		/* fp8 buffers take f32 tiles (the store converts) */
		const char *va = fill_value(g, f8 ? T_F32 : ta_, gen_shape2(m, k),
					    "0", "pid");
		const char *vb;

		gen_line(g, "store(%s, %s);", sa, va);
		vb = fill_value(g, f8 ? T_F32 : tb_, bs, "1", "pid");
		gen_line(g, "store(%s, %s);", sb, vb);
		gen_line(g, "fence_async_shared();");
		gen_line(g, "sync_threads();");
	}
	scoped(g, saved);
	gen_count(g, FZ_C_dot_async);
	bview = tr ? gen_fmt(g, "trans(%s)", sb) : sb;
	gen_line(g, "var %s: f32[%d, %d] = zeros(f32, [%d, %d]);", acc, m, n, m, n);
	if (!(a = gen_add_var(g, acc, T_F32, gen_shape2(m, n), true)))
		return;
	gen_line(g, "%s = dot_async(%s, %s, %s);", acc, sa, bview, acc);
	if (gen_chance(g, 50)) {
		gen_line(g, "%s = dot_async(%s, %s, %s);", acc, sa, bview, acc);
		gen_line(g, "%s = dot_wait(%s, pending: 1);", acc, acc);
	}
	gen_line(g, "%s = dot_wait(%s, pending: 0);", acc, acc);
	gen_line(g, "sync_threads();");
	store_part(g, a, "pid", g->nprog);
	a->stored = true;
}

/* A persistent loop over a tile schedule: each tile's part of an output
 * from its part of an input.  Under `dynamic` the program that takes a
 * tile is not known, so the body sees only the tile. */
static void
sec_tiles(Gen *g)
{
	bool dyn = gen_chance(g, 50);
	int nt = 1 + (int)gen_rnd(g, (uint32_t)g->nprog * 3);
	int t = gen_rand_type_where(g, async_type_ok);
	Shape s = gen_shape1(16 << gen_rnd(g, 5));
	const char *w = gen_fresh(g, "work"), *tv = gen_fresh(g, "t");
	const char *v = gen_fresh(g, "v");
	Ptr *x = gen_input(g, t), *o;
	int n = g->nvars;

	if (!x || gen_numel(s) * nt > (int)g->L)
		return;
	o = gen_add_ptr(g, "o", t, FZ_OUT, (size_t)nt * (size_t)gen_numel(s));
	if (!o)
		return;
	gen_count(g, FZ_C_tiles);
	gen_line(g, "let %s = tiles(%d, schedule: %s);", w, nt,
		 dyn ? "dynamic" : "static");
	gen_line(g, "for %s in %s {", tv, w);
	g->indent++;
	if (dyn)
		hide(g);
	gen_add_var(g, tv, T_I32, gen_shape0(), false);
	gen_line(g, "let %s: %s = load(%s + (%s));", v, gen_type_str(g, t, s),
		 x->name, part_offs(g, s, tv));
	gen_add_var(g, v, t, s, false);
	if (dyn)
		gen_line(g, "store(%s + (%s), %s * 3 + %s);", o->name,
			 part_offs(g, s, tv), v, v);
	else {
		const char *e = gen_expr(g, t, s, 2);

		gen_line(g, "store(%s + (%s), %s);", o->name, part_offs(g, s, tv), e);
	}
	g->indent--;
	gen_line(g, "}");
	if (dyn)
		unhide(g, n);
	else
		scoped(g, n);
}

void
gen_async(Gen *g)
{
	int r = (int)gen_rnd(g, 100);

	if (g->depth)
		return;
	if (r < 35 && !g->regs) {
		sec_ring(g, true);
	} else if (r < 55 && !g->regs) {
		sec_ring(g, false);
	} else if (r < 75) {
		sec_tma(g);
	} else if (r < 88 && g->prog_warps >= 4) {
		sec_dot(g);
	} else {
		sec_tiles(g);
	}
}
