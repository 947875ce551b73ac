/*
 * reduce.c: reductions, dot (and the matmul dot_async shares) and assert.
 *
 * Reductions run along one axis in index order.  sum/prod of f16/bf16
 * accumulate in f32 and round once; f32 in f32, f64 in f64; ints wrap.
 * TLXRT_SIM_REDUCE_ORDER (L->o.reduce_order) changes float sums and
 * products, and dots of f16, bf16 and fp8: 1 runs them in reverse index
 * order, 2 accumulates in f64 (rounded once), 3 runs the dots that
 * codegen puts on tensor cores as their adder does (tc_block); f32 dots
 * stay fmas in k order, as codegen's; 4 combines the sums and products
 * of a laid-out tile in the order its code does (gpu_order).
 * max/min are IEEE maxNum/minNum (a NaN is ignored unless all are NaN);
 * argmax/argmin give the first index of the extreme.
 *
 * dot: products are exact and every sum is rounded to the accumulator's
 * type: acc = fma(a, b, acc) in f32 (a fused multiply-add computes the
 * exact product and rounds the sum once), i8 products summed in i32 with
 * wrapping.
 */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <string.h>

#include "sim.h"

enum { R_SUM, R_PROD, R_MAX, R_MIN, R_ARGMAX, R_ARGMIN };

static int
kind_of(const char *s)
{
	static const char *names[] = { "sum", "prod", "max", "min", "argmax",
				       "argmin" };
	int i;

	for (i = 0; s && i < 6; i++)
		if (strcmp(s, names[i]) == 0)
			return i;
	return -1;
}

/* One row of `len` floats at stride `st`. */
static void
reduce_f(int kind, const double *x, int64_t len, int64_t st, bool f32,
	 int order, double *out, int32_t *idx)
{
	double acc = 0;
	float facc = 0;
	int64_t j, best = 0;

	switch (kind) {
	case R_SUM:
	case R_PROD:
		facc = kind == R_SUM ? 0.0f : 1.0f;
		acc = kind == R_SUM ? 0.0 : 1.0;
		if (order == 1) {
			x += (len - 1) * st;
			st = -st;
		}
		if (order == 2 && f32) {
			for (j = 0; j < len; j++)
				acc = kind == R_SUM ? acc + x[j * st]
						    : acc * x[j * st];
			*out = (float)acc;
			return;
		}
		for (j = 0; j < len; j++) {
			if (f32)
				facc = kind == R_SUM ? facc + (float)x[j * st]
						     : facc * (float)x[j * st];
			else
				acc = kind == R_SUM ? acc + x[j * st]
						    : acc * x[j * st];
		}
		*out = f32 ? facc : acc;
		return;
	case R_MAX:
	case R_MIN:
		acc = x[0];
		for (j = 1; j < len; j++)
			acc = sim_min_num(acc, x[j * st], kind == R_MAX);
		*out = acc;
		return;
	default:
		for (j = 1; j < len; j++) {
			double v = x[j * st], b = x[best * st];
			bool better;

			if (isnan(v))
				continue;
			better = isnan(b) ||
				 ((kind == R_MAX || kind == R_ARGMAX) ? v > b
								      : v < b);
			if (better)
				best = j;
		}
		*out = x[best * st];
		*idx = (int32_t)best;
		return;
	}
}

static void
reduce_i(int kind, const int64_t *x, int64_t len, int64_t st, bool uns,
	 int64_t *out, int32_t *idx)
{
	uint64_t acc = kind == R_PROD ? 1 : 0;
	int64_t j, best = 0;

	if (kind == R_SUM || kind == R_PROD) {
		for (j = 0; j < len; j++)
			acc = kind == R_SUM ? acc + (uint64_t)x[j * st]
					    : acc * (uint64_t)x[j * st];
		*out = (int64_t)acc;
		return;
	}
	for (j = 1; j < len; j++) {
		int64_t v = x[j * st], b = x[best * st];
		bool gt = uns ? (uint64_t)v > (uint64_t)b : v > b;
		bool lt = uns ? (uint64_t)v < (uint64_t)b : v < b;

		if ((kind == R_MAX || kind == R_ARGMAX) ? gt : lt)
			best = j;
	}
	*out = x[best * st];
	*idx = (int32_t)best;
}

/* As a mask, the register (lane, warp) bits of l whose bases -- bases[0..n),
 * l's reg (lane, warp) -- lie in dim d. */
static uint32_t
axis_bits(const Layout *l, int d, const uint32_t *bases, int n)
{
	uint32_t m = 0;

	for (int i = 0; i < n; i++)
		if (ly_in_dim(l, d, bases[i]))
			m |= 1u << i;
	return m;
}

/* The k-th value (k's bits spread over mask m's): i with pext(i, m) = k. */
static uint32_t
pdep(uint32_t k, uint32_t m)
{
	uint32_t r = 0;

	for (uint32_t b = 1; m; b <<= 1) {
		uint32_t low = m & -m;

		if (k & b)
			r |= low;
		m &= m - 1;
	}
	return r;
}

/* v[0..n) combined pairwise into v[0], neighbours first (codegen's tree;
 * a butterfly from element 0 gives the same). */
static void
tree_f(int kind, double *v, uint32_t n, bool f32)
{
	for (uint32_t st = 1; st < n; st *= 2)
		for (uint32_t i = 0; i + st < n; i += 2 * st) {
			if (f32)
				v[i] = kind == R_SUM ? (float)v[i] + (float)v[i + st]
						     : (float)v[i] * (float)v[i + st];
			else
				v[i] = kind == R_SUM ? v[i] + v[i + st] : v[i] * v[i + st];
		}
}

/* TLXRT_SIM_REDUCE_ORDER 4: a float sum or product of a laid-out tile
 * (x: its elements, layout l) along d, in the order codegen/reduce.c
 * combines them: within a thread the registers of d as a tree in register
 * order, then a butterfly over the lane bits of d (lowest first), then the
 * warps' partials as a tree in warp order -- each level a tree over the
 * index its bits spell.  Writes every result element (out, row-major). */
static void
gpu_order(SimLaunch *L, int kind, const Layout *l, int d,
	  const double *x, bool f32, double *out, int64_t len, int64_t inner)
{
	uint32_t dup = ly_dup_mask(l), nr = (uint32_t)ly_nregs(l);
	uint32_t ar = axis_bits(l, d, l->reg, l->nreg) & ~dup;
	uint32_t al = axis_bits(l, d, l->lane, LY_LANES);
	uint32_t aw = axis_bits(l, d, l->warp, l->nwarp);
	uint32_t nrr = 1u << __builtin_popcount(ar), nl = 1u << __builtin_popcount(al);
	uint32_t nw = 1u << __builtin_popcount(aw);
	double *v = sim_scratch(L, 4, (size_t)(nrr + nl + nw) * sizeof *v);
	double *vl = v + nrr, *vw = vl + nl;

	for (uint32_t w0 = 0; w0 < 1u << l->nwarp; w0++)
		for (uint32_t l0 = 0; l0 < 1u << LY_LANES; l0++)
			for (uint32_t r0 = 0; r0 < nr; r0++) {
				uint64_t e0;

				if ((w0 & aw) || (l0 & al) || (r0 & (ar | dup)))
					continue;
				for (uint32_t w = 0; w < nw; w++) {
					for (uint32_t ln = 0; ln < nl; ln++) {
						for (uint32_t r = 0; r < nrr; r++)
							v[r] = x[ly_flat(l, r0 | pdep(r, ar),
								 l0 | pdep(ln, al), w0 | pdep(w, aw))];
						tree_f(kind, v, nrr, f32);
						vl[ln] = v[0];
					}
					tree_f(kind, vl, nl, f32);
					vw[w] = vl[0];
				}
				tree_f(kind, vw, nw, f32);
				e0 = ly_flat(l, r0, l0, w0);
				out[(int64_t)e0 / (len * inner) * inner +
				    (int64_t)e0 % inner] = vw[0];
			}
}

void
sim_op_reduce(SimLaunch *L, SimAct *act, Op *op)
{
	Type *t = sim_ty(act, op->opnds[0]), *rt = sim_ty(act, op->res[0]);
	TypeKind ek = ty_elem(t)->kind, rk = ty_elem(rt)->kind;
	int kind = kind_of(attr_str(&op->attrs, "kind"));
	int64_t axis = attr_int(&op->attrs, "axis", 0);
	int64_t outer = 1, len, inner = 1, o, in, n = ty_numel(t);
	uint8_t *src = sim_data(&act->vals[op->opnds[0]], t), *dst;
	bool isf = ty_is_float_kind(ek);
	int es = sim_esize(t), res = sim_esize(rt), d;
	double *xd = NULL;
	int64_t *xi = NULL;

	if (kind < 0 || t->kind != TY_TILE || axis < 0 || axis >= t->rank ||
	    ty_numel(rt) * t->shape[axis] != n ||
	    (kind >= R_ARGMAX ? rk != TY_I32 : rk != ek) ||
	    ek == TY_F8E4M3 || ek == TY_F8E5M2 || !ty_is_scalar_kind(ek))
		sim_fault(L, op, "malformed IR: reduce needs a tile, a kind "
			  "and an axis that match its result");
	dst = sim_data(sim_def(L, act, op->res[0]), rt);
	for (d = 0; d < axis; d++)
		outer *= t->shape[d];
	len = t->shape[axis];
	for (d = (int)axis + 1; d < t->rank; d++)
		inner *= t->shape[d];
	if (isf) {
		xd = sim_scratch(L, 3, (size_t)n * 8);
		for (o = 0; o < n; o++)
			xd[o] = sim_get_f(ek, src + o * es);
	} else {
		xi = sim_scratch(L, 3, (size_t)n * 8);
		for (o = 0; o < n; o++)
			xi[o] = sim_get_i(ek, src + o * es);
	}
	if (isf && L->o.reduce_order == 4 && t->layout &&
	    (kind == R_SUM || kind == R_PROD)) {
		double *v = sim_scratch(L, 5, (size_t)(outer * inner) * 8);

		gpu_order(L, kind, t->layout, (int)axis, xd, ek != TY_F64, v,
			  len, inner);
		for (o = 0; o < outer * inner; o++)
			sim_put_f(ek, dst + o * res, v[o]);
		return;
	}
	for (o = 0; o < outer; o++)
		for (in = 0; in < inner; in++) {
			int64_t base = o * len * inner + in, ri = o * inner + in;
			int32_t idx = 0;

			if (isf) {
				double v;

				reduce_f(kind, xd + base, len, inner,
					 ek != TY_F64, L->o.reduce_order,
					 &v, &idx);
				if (kind < R_ARGMAX)
					sim_put_f(ek, dst + ri * res, v);
			} else {
				int64_t v;

				reduce_i(kind, xi + base, len, inner,
					 ty_is_unsigned_kind(ek) || ek == TY_I1,
					 &v, &idx);
				if (kind < R_ARGMAX)
					sim_put_i(ek, dst + ri * res, v);
			}
			if (kind >= R_ARGMAX)
				memcpy(dst + ri * 4, &idx, 4);
		}
}

/* ---- dot ----------------------------------------------------------------- */

/* c[i][j] = fma chain over k of x[i][k] * yt[j][k], in k order.  Built
 * twice where the compiler can: with the FMA instruction (chosen at run
 * time when the CPU has it) and portably; both round identically. */
#define MM_BODY                                                                \
	{                                                                      \
		int64_t i, j, kk;                                              \
		for (i = 0; i < m; i++) {                                      \
			const float *xr = x + i * k;                           \
			float *cr = c + i * n;                                 \
			for (j = 0; j + 4 <= n; j += 4) {                      \
				const float *y0 = yt + j * k, *y1 = y0 + k;    \
				const float *y2 = y1 + k, *y3 = y2 + k;        \
				float s0 = cr[j], s1 = cr[j + 1];              \
				float s2 = cr[j + 2], s3 = cr[j + 3];          \
				for (kk = 0; kk < k; kk++) {                   \
					s0 = fmaf(xr[kk], y0[kk], s0);         \
					s1 = fmaf(xr[kk], y1[kk], s1);         \
					s2 = fmaf(xr[kk], y2[kk], s2);         \
					s3 = fmaf(xr[kk], y3[kk], s3);         \
				}                                              \
				cr[j] = s0;                                    \
				cr[j + 1] = s1;                                \
				cr[j + 2] = s2;                                \
				cr[j + 3] = s3;                                \
			}                                                      \
			for (; j < n; j++) {                                   \
				const float *yr = yt + j * k;                  \
				float s = cr[j];                               \
				for (kk = 0; kk < k; kk++)                     \
					s = fmaf(xr[kk], yr[kk], s);           \
				cr[j] = s;                                     \
			}                                                      \
		}                                                              \
	}

static void
mm_portable(const float *x, const float *yt, float *c, int64_t m, int64_t n,
	    int64_t k)
MM_BODY

#if defined(__GNUC__) && defined(__x86_64__)
__attribute__((target("fma"))) static void
mm_fma(const float *x, const float *yt, float *c, int64_t m, int64_t n,
       int64_t k)
MM_BODY
#endif

static void
mm_f32(const float *x, const float *yt, float *c, int64_t m, int64_t n,
       int64_t k)
{
#if defined(__GNUC__) && defined(__x86_64__)
	if (__builtin_cpu_supports("fma")) {
		mm_fma(x, yt, c, m, n, k);
		return;
	}
#endif
	mm_portable(x, yt, c, m, n, k);
}

/*
 * One mma instruction's sum on the tensor cores (H100, f16 and bf16; it
 * reproduces the GPU's results of gen_gpu seeds 71112, 71420, 72529,
 * 72904, 73054, 74354, 74805, 75624 and 75781 bit for bit; fp8 and wgmma
 * are assumed to add alike): the products of a k step (16 for 16-bit
 * operands, 32 for 8-bit ones) are exact; they and the accumulator
 * are aligned to the largest exponent, a product's being the sum of its
 * operands' (its significand in [1, 4)), cut to multiples of 2^(e - 25)
 * (truncated toward zero), summed exactly and rounded toward zero to f32.
 * So no product overflows, a small term beside a large one vanishes, and
 * MAX - MAX + x is 0.  Infinities and NaNs add as IEEE sums.
 * x[0 .. n) and y[0, ys, ..]: the operands, c the accumulator.
 */
static float
tc_block(const float *x, const float *y, int64_t ys, int n, float c)
{
	double p[32], q, s = c;
	int i, e = INT_MIN;
	bool fin = isfinite(c);

	for (i = 0; i < n; i++) {
		p[i] = (double)x[i] * y[i * ys];  /* exact */
		s += p[i];
		fin = fin && isfinite(p[i]);
		if (p[i] != 0 && isfinite(p[i]))
			e = MAX(e, ilogbf(x[i]) + ilogbf(y[i * ys]));
	}
	if (!fin)
		return (float)s;
	if (c != 0)
		e = MAX(e, ilogbf(c));
	if (e == INT_MIN)
		return c;
	q = ldexp(1.0, e - 25);
	/* at most 17 terms below 2^27 units each: the sum is exact */
	s = trunc((double)c / q);
	for (i = 0; i < n; i++)
		s += trunc(p[i] / q);
	s *= q;
	if (fabs(s) > FLT_MAX)
		return s > 0 ? INFINITY : -INFINITY;
	{
		float f = (float)s;

		if (fabs((double)f) > fabs(s))  /* toward zero */
			f = nextafterf(f, 0.0f);
		return f;
	}
}

/* c += x @ y (x m x k, y k x n) in tensor-core k steps of ks. */
static void
mm_tc(const float *x, const float *y, float *c, int64_t m, int64_t n,
      int64_t k, int ks)
{
	int64_t i, j, k0;

	for (i = 0; i < m; i++)
		for (j = 0; j < n; j++)
			for (k0 = 0; k0 < k; k0 += ks)
				c[i * n + j] = tc_block(
					x + i * k + k0, y + k0 * n + j, n,
					(int)(k - k0 < ks ? k - k0 : ks),
					c[i * n + j]);
}

void
sim_matmul(SimLaunch *L, TypeKind ek, const uint8_t *a, const uint8_t *b,
	   void *acc, int64_t m, int64_t n, int64_t k, bool tc)
{
	int64_t i, j, kk;

	if (ek == TY_I8) {
		const int8_t *x = (const int8_t *)a, *y = (const int8_t *)b;
		int32_t *c = acc;

		for (i = 0; i < m; i++)
			for (j = 0; j < n; j++) {
				uint32_t s = (uint32_t)c[i * n + j];

				for (kk = 0; kk < k; kk++)
					s += (uint32_t)(x[i * k + kk] *
							y[kk * n + j]);
				c[i * n + j] = (int32_t)s;
			}
		return;
	}
	{
		float *x = sim_scratch(L, 0, (size_t)(m * k) * 4);
		float *y = sim_scratch(L, 1, (size_t)(k * n) * 4);
		float *yt = sim_scratch(L, 2, (size_t)(k * n) * 4);
		float *c = acc;

		int order = ek == TY_F32 ? 0 : L->o.reduce_order;

		sim_to_f32(ek, a, x, (size_t)(m * k));
		sim_to_f32(ek, b, y, (size_t)(k * n));
		if (order == 3) {
			if (tc) {
				mm_tc(x, y, c, m, n, k,
				      ek == TY_F16 || ek == TY_BF16 ? 16 : 32);
				return;
			}
			order = 0;
		}
		if (order == 2) {  /* exact products, summed in f64 */
			for (i = 0; i < m; i++)
				for (j = 0; j < n; j++) {
					double s = c[i * n + j];

					for (kk = 0; kk < k; kk++)
						s += (double)x[i * k + kk] *
						     y[kk * n + j];
					c[i * n + j] = (float)s;
				}
			return;
		}
		for (kk = 0; kk < k; kk++)
			for (j = 0; j < n; j++)
				yt[j * k + (order ? k - 1 - kk : kk)] =
					y[kk * n + j];
		if (order)  /* k backwards */
			for (i = 0; i < m; i++)
				for (kk = 0; kk < k / 2; kk++) {
					float t = x[i * k + kk];

					x[i * k + kk] = x[i * k + k - 1 - kk];
					x[i * k + k - 1 - kk] = t;
				}
		mm_f32(x, yt, c, m, n, k);
	}
}

static bool
dot_types_ok(TypeKind ek, TypeKind ak)
{
	switch (ek) {
	case TY_F16: case TY_BF16: case TY_F8E4M3: case TY_F8E5M2: case TY_F32:
		return ak == TY_F32;
	case TY_I8:
		return ak == TY_I32;
	default:
		return false;
	}
}

void
sim_op_dot(SimLaunch *L, SimAct *act, Op *op)
{
	Type *ta = sim_ty(act, op->opnds[0]), *tb = sim_ty(act, op->opnds[1]);
	Type *tc = sim_ty(act, op->opnds[2]), *tr = sim_ty(act, op->res[0]);
	uint8_t *r;

	if (ta->kind != TY_TILE || tb->kind != TY_TILE || tc != tr ||
	    tr->kind != TY_TILE || ta->rank != 2 || tb->rank != 2 ||
	    tr->rank != 2 || ta->elem != tb->elem ||
	    ta->shape[1] != tb->shape[0] || ta->shape[0] != tr->shape[0] ||
	    tb->shape[1] != tr->shape[1] ||
	    !dot_types_ok(ta->elem->kind, tr->elem->kind))
		sim_fault(L, op, "malformed IR: dot needs a[MxK], b[KxN] and "
			  "acc[MxN] of matching types");
	r = sim_data(sim_def(L, act, op->res[0]), tr);
	memcpy(r, act->vals[op->opnds[2]].data, (size_t)ty_numel(tr) * 4);
	/* an mma layout: codegen's tensor cores (ly_dot_is_mma) */
	sim_matmul(L, ta->elem->kind, act->vals[op->opnds[0]].data,
		   act->vals[op->opnds[1]].data, r, ta->shape[0],
		   tb->shape[1], ta->shape[1],
		   tr->layout && tr->layout->kind == LY_MMA);
}

void
sim_op_assert(SimLaunch *L, SimAct *act, Op *op)
{
	Type *t = sim_ty(act, op->opnds[0]);
	uint8_t *c = sim_data(&act->vals[op->opnds[0]], t);
	const char *msg = attr_str(&op->attrs, "msg");
	int64_t i, n = ty_numel(t);

	if (ty_elem(t)->kind != TY_I1)
		sim_fault(L, op, "malformed IR: assert needs i1");
	for (i = 0; i < n; i++)
		if (!(c[i] & 1)) {
			Buf b = { 0 };
			char idx[96];

			sim_index_str(&b, t, i);
			snprintf(idx, sizeof idx, "%s", b.s ? b.s : "");
			buf_free(&b);
			sim_fault(L, op, "assertion failed%s%s%s%s",
				  msg ? ": " : "", msg ? msg : "",
				  *idx ? " at element " : "", idx);
		}
}
