/*
 * tile.c: the pure ops on scalars and tiles (docs/il.md sections
 * "Constants", "Elementwise arithmetic", "Math", "Conversions", "Shapes").
 *
 * A scalar is a tile of one element, so every op is one tight C loop over
 * whole tiles, chosen once per op by element kind: f32 and f64 natively;
 * f16, bf16 and fp8 decoded to f32, computed, and rounded back once; ints
 * in their own C type with wrapping done in unsigned arithmetic.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

typedef struct Arr {
	uint8_t *p;
	Type *t;
	TypeKind k;   /* element kind (TY_PTR for pointers) */
	size_t n;
	int es;
} Arr;

static Arr
arr(SimAct *act, Value v)
{
	Type *t = sim_ty(act, v);
	Arr a = { sim_data(&act->vals[v], t), t, ty_elem(t)->kind,
		  (size_t)ty_numel(t), sim_esize(t) };

	return a;
}

static Arr
res(SimLaunch *L, SimAct *act, Value v)
{
	sim_def(L, act, v);
	return arr(act, v);
}

static void
malformed(SimLaunch *L, Op *op, const char *why)
{
	sim_fault(L, op, "malformed IR: %s %s", op_name(op->kind), why);
}

static void
same_shape(SimLaunch *L, Op *op, Arr *a, Arr *b)
{
	if (a->n != b->n)
		malformed(L, op, "has operands of different shapes");
}

void
sim_index_str(Buf *b, Type *t, int64_t i)
{
	int64_t idx[TY_MAX_RANK];
	int d;

	if (t->kind != TY_TILE && t->kind != TY_SMEM)
		return;
	for (d = t->rank - 1; d >= 0; d--) {
		idx[d] = t->shape[d] ? i % t->shape[d] : 0;
		i = t->shape[d] ? i / t->shape[d] : 0;
	}
	buf_putc(b, '[');
	for (d = 0; d < t->rank; d++)
		buf_printf(b, "%s%lld", d ? ", " : "", (long long)idx[d]);
	buf_putc(b, ']');
}

static bool
is_narrow(TypeKind k)
{
	return k == TY_F16 || k == TY_BF16 || k == TY_F8E4M3 ||
	       k == TY_F8E5M2;
}

/* Replicates the first element over the array. */
static void
replicate(uint8_t *p, size_t n, int es)
{
	size_t have = 1, total = n * (size_t)es;

	for (have = (size_t)es; have < total; have *= 2)
		memcpy(p + have, p, MIN(have, total - have));
}

/* ---- constants ----------------------------------------------------------- */

void
sim_op_const(SimLaunch *L, SimAct *act, Op *op)
{
	Attr *v = attr_find(&op->attrs, "value");
	Arr r = res(L, act, op->res[0]);

	if (!v || (v->kind != ATTR_INT && v->kind != ATTR_FLOAT))
		malformed(L, op, "needs an integer or float value");
	if (ty_is_float_kind(r.k))
		sim_put_f(r.k, r.p, v->kind == ATTR_INT ? (double)v->i : v->f);
	else if (ty_is_int_kind(r.k) || r.k == TY_PTR)
		sim_put_i(r.k == TY_PTR ? TY_I64 : r.k, r.p,
			  v->kind == ATTR_INT ? v->i : f64_to_i64_sat(v->f));
	else
		malformed(L, op, "of a non-numeric type");
	replicate(r.p, r.n, r.es);
}

void
sim_op_range(SimLaunch *L, SimAct *act, Op *op)
{
	int64_t start = attr_int(&op->attrs, "start", 0);
	int64_t end = attr_int(&op->attrs, "end", 0);
	Arr r = res(L, act, op->res[0]);
	int32_t *p = (int32_t *)(void *)r.p;
	size_t i;

	if (r.k != TY_I32 || end - start != (int64_t)r.n)
		malformed(L, op, "does not match its result type");
	for (i = 0; i < r.n; i++)
		p[i] = (int32_t)(start + (int64_t)i);
}

/* ---- elementwise arithmetic ------------------------------------------------ */

static void
bin_f32(OpKind k, const float *a, const float *b, float *r, size_t n)
{
	size_t i;

	switch (k) {
	case OP_ADD: for (i = 0; i < n; i++) r[i] = a[i] + b[i]; break;
	case OP_SUB: for (i = 0; i < n; i++) r[i] = a[i] - b[i]; break;
	case OP_MUL: for (i = 0; i < n; i++) r[i] = a[i] * b[i]; break;
	case OP_DIV: for (i = 0; i < n; i++) r[i] = a[i] / b[i]; break;
	case OP_REM: for (i = 0; i < n; i++) r[i] = fmodf(a[i], b[i]); break;
	case OP_MIN: for (i = 0; i < n; i++) r[i] = (float)sim_min_num(a[i], b[i], false); break;
	case OP_MAX: for (i = 0; i < n; i++) r[i] = (float)sim_min_num(a[i], b[i], true); break;
	default: break;
	}
}

static void
bin_f64(OpKind k, const double *a, const double *b, double *r, size_t n)
{
	size_t i;

	switch (k) {
	case OP_ADD: for (i = 0; i < n; i++) r[i] = a[i] + b[i]; break;
	case OP_SUB: for (i = 0; i < n; i++) r[i] = a[i] - b[i]; break;
	case OP_MUL: for (i = 0; i < n; i++) r[i] = a[i] * b[i]; break;
	case OP_DIV: for (i = 0; i < n; i++) r[i] = a[i] / b[i]; break;
	case OP_REM: for (i = 0; i < n; i++) r[i] = fmod(a[i], b[i]); break;
	case OP_MIN: for (i = 0; i < n; i++) r[i] = sim_min_num(a[i], b[i], false); break;
	case OP_MAX: for (i = 0; i < n; i++) r[i] = sim_min_num(a[i], b[i], true); break;
	default: break;
	}
}

static void
div_zero(SimLaunch *L, Op *op, Type *t, size_t i)
{
	Buf b = { 0 };
	char idx[96];

	sim_index_str(&b, t, (int64_t)i);
	snprintf(idx, sizeof idx, "%s", b.s ? b.s : "");
	buf_free(&b);
	sim_fault(L, op, "integer %s by zero%s%s",
		  op->kind == OP_DIV ? "division" : "remainder",
		  *idx ? " in element " : "", idx);
}

/* Integer ops in type T (unsigned UT); BITS a power of two. */
#define INT_BIN(NAME, T, BITS, SIGNED)                                         \
	static void NAME(SimLaunch *L, Op *op, Type *t, const T *a,            \
			 const T *b, T *r, size_t n)                           \
	{                                                                      \
		size_t i;                                                      \
		switch (op->kind) {                                            \
		case OP_ADD:                                                   \
			for (i = 0; i < n; i++)                                \
				r[i] = (T)((uint64_t)a[i] + (uint64_t)b[i]);   \
			break;                                                 \
		case OP_SUB:                                                   \
			for (i = 0; i < n; i++)                                \
				r[i] = (T)((uint64_t)a[i] - (uint64_t)b[i]);   \
			break;                                                 \
		case OP_MUL:                                                   \
			for (i = 0; i < n; i++)                                \
				r[i] = (T)((uint64_t)a[i] * (uint64_t)b[i]);   \
			break;                                                 \
		case OP_DIV:                                                   \
		case OP_REM:                                                   \
			for (i = 0; i < n; i++) {                              \
				if (b[i] == 0)                                 \
					div_zero(L, op, t, i);                 \
				if (SIGNED && b[i] == (T)-1)                   \
					r[i] = op->kind == OP_DIV              \
						? (T)(0 - (uint64_t)a[i])      \
						: 0;                           \
				else                                           \
					r[i] = op->kind == OP_DIV              \
						? (T)(a[i] / b[i])             \
						: (T)(a[i] % b[i]);            \
			}                                                      \
			break;                                                 \
		case OP_MIN:                                                   \
			for (i = 0; i < n; i++)                                \
				r[i] = a[i] < b[i] ? a[i] : b[i];              \
			break;                                                 \
		case OP_MAX:                                                   \
			for (i = 0; i < n; i++)                                \
				r[i] = a[i] > b[i] ? a[i] : b[i];              \
			break;                                                 \
		case OP_AND:                                                   \
			for (i = 0; i < n; i++)                                \
				r[i] = a[i] & b[i];                            \
			break;                                                 \
		case OP_OR:                                                    \
			for (i = 0; i < n; i++)                                \
				r[i] = a[i] | b[i];                            \
			break;                                                 \
		case OP_XOR:                                                   \
			for (i = 0; i < n; i++)                                \
				r[i] = a[i] ^ b[i];                            \
			break;                                                 \
		case OP_SHL:                                                   \
			for (i = 0; i < n; i++)                                \
				r[i] = (T)((uint64_t)a[i]                      \
					   << ((uint64_t)b[i] & (BITS - 1)));  \
			break;                                                 \
		case OP_SHR:                                                   \
			for (i = 0; i < n; i++)                                \
				r[i] = (T)(a[i] >>                             \
					   ((uint64_t)b[i] & (BITS - 1)));     \
			break;                                                 \
		default:                                                       \
			break;                                                 \
		}                                                              \
	}

INT_BIN(bin_i8, int8_t, 8, 1)
INT_BIN(bin_i16, int16_t, 16, 1)
INT_BIN(bin_i32, int32_t, 32, 1)
INT_BIN(bin_i64, int64_t, 64, 1)
INT_BIN(bin_u8, uint8_t, 8, 0)
INT_BIN(bin_u16, uint16_t, 16, 0)
INT_BIN(bin_u32, uint32_t, 32, 0)
INT_BIN(bin_u64, uint64_t, 64, 0)
INT_BIN(bin_i1, uint8_t, 1, 0)

static void
bin_int(SimLaunch *L, Op *op, Arr *a, Arr *b, Arr *r)
{
	size_t i;

	switch (a->k) {
	case TY_I1:
		bin_i1(L, op, a->t, a->p, b->p, r->p, a->n);
		for (i = 0; i < r->n; i++)
			r->p[i] &= 1;
		break;
	case TY_I8: bin_i8(L, op, a->t, (void *)a->p, (void *)b->p, (void *)r->p, a->n); break;
	case TY_I16: bin_i16(L, op, a->t, (void *)a->p, (void *)b->p, (void *)r->p, a->n); break;
	case TY_I32: bin_i32(L, op, a->t, (void *)a->p, (void *)b->p, (void *)r->p, a->n); break;
	case TY_I64: bin_i64(L, op, a->t, (void *)a->p, (void *)b->p, (void *)r->p, a->n); break;
	case TY_U8: bin_u8(L, op, a->t, a->p, b->p, r->p, a->n); break;
	case TY_U16: bin_u16(L, op, a->t, (void *)a->p, (void *)b->p, (void *)r->p, a->n); break;
	case TY_U32: bin_u32(L, op, a->t, (void *)a->p, (void *)b->p, (void *)r->p, a->n); break;
	case TY_U64: bin_u64(L, op, a->t, (void *)a->p, (void *)b->p, (void *)r->p, a->n); break;
	default: break;
	}
}

void
sim_op_binary(SimLaunch *L, SimAct *act, Op *op)
{
	Arr a = arr(act, op->opnds[0]), b = arr(act, op->opnds[1]);
	Arr r = res(L, act, op->res[0]);

	if (a.t != b.t || a.t != r.t)
		malformed(L, op, "needs operands and result of one type");
	if (ty_is_int_kind(a.k)) {
		bin_int(L, op, &a, &b, &r);
		return;
	}
	if (!ty_is_float_kind(a.k) || op->kind >= OP_AND)
		malformed(L, op, "is not defined on this type");
	if (a.k == TY_F32) {
		bin_f32(op->kind, (void *)a.p, (void *)b.p, (void *)r.p, a.n);
	} else if (a.k == TY_F64) {
		bin_f64(op->kind, (void *)a.p, (void *)b.p, (void *)r.p, a.n);
	} else {
		float *x = sim_scratch(L, 0, a.n * 4);
		float *y = sim_scratch(L, 1, a.n * 4);
		float *z = sim_scratch(L, 2, a.n * 4);

		sim_to_f32(a.k, a.p, x, a.n);
		sim_to_f32(a.k, b.p, y, a.n);
		bin_f32(op->kind, x, y, z, a.n);
		sim_from_f32(a.k, z, r.p, a.n);
	}
}

/* NEG(x) wraps; ABS(x) is x for unsigned types. */
#define INT_UN(NAME, T, ABS)                                                   \
	static void NAME(OpKind k, const T *a, T *r, size_t n)                 \
	{                                                                      \
		size_t i;                                                      \
		for (i = 0; i < n; i++)                                        \
			r[i] = k == OP_NEG   ? (T)(0 - (uint64_t)a[i])          \
			       : k == OP_NOT ? (T)~a[i]                         \
					     : ABS(a[i], T);                    \
	}
#define ABS_S(x, T) ((x) < 0 ? (T)(0 - (uint64_t)(x)) : (x))
#define ABS_U(x, T) (x)

INT_UN(un_i8, int8_t, ABS_S)
INT_UN(un_i16, int16_t, ABS_S)
INT_UN(un_i32, int32_t, ABS_S)
INT_UN(un_i64, int64_t, ABS_S)
INT_UN(un_u8, uint8_t, ABS_U)
INT_UN(un_u16, uint16_t, ABS_U)
INT_UN(un_u32, uint32_t, ABS_U)
INT_UN(un_u64, uint64_t, ABS_U)

void
sim_op_unary(SimLaunch *L, SimAct *act, Op *op)
{
	Arr a = arr(act, op->opnds[0]);
	Arr r = res(L, act, op->res[0]);
	size_t i;

	if (a.t != r.t)
		malformed(L, op, "needs operand and result of one type");
	switch (a.k) {
	case TY_I1:
		for (i = 0; i < a.n; i++)
			r.p[i] = op->kind == OP_NOT ? a.p[i] ^ 1 : a.p[i];
		return;
	case TY_I8: un_i8(op->kind, (void *)a.p, (void *)r.p, a.n); return;
	case TY_I16: un_i16(op->kind, (void *)a.p, (void *)r.p, a.n); return;
	case TY_I32: un_i32(op->kind, (void *)a.p, (void *)r.p, a.n); return;
	case TY_I64: un_i64(op->kind, (void *)a.p, (void *)r.p, a.n); return;
	case TY_U8: un_u8(op->kind, a.p, r.p, a.n); return;
	case TY_U16: un_u16(op->kind, (void *)a.p, (void *)r.p, a.n); return;
	case TY_U32: un_u32(op->kind, (void *)a.p, (void *)r.p, a.n); return;
	case TY_U64: un_u64(op->kind, (void *)a.p, (void *)r.p, a.n); return;
	default:
		break;
	}
	if (!ty_is_float_kind(a.k) || op->kind == OP_NOT)
		malformed(L, op, "is not defined on this type");
	if (a.k == TY_F64) {
		double *x = (void *)a.p, *z = (void *)r.p;

		for (i = 0; i < a.n; i++)
			z[i] = op->kind == OP_NEG ? -x[i] : fabs(x[i]);
	} else {
		float *x = sim_scratch(L, 0, a.n * 4);

		sim_to_f32(a.k, a.p, x, a.n);
		for (i = 0; i < a.n; i++)
			x[i] = op->kind == OP_NEG ? -x[i] : fabsf(x[i]);
		sim_from_f32(a.k, x, r.p, a.n);
	}
}

/* ---- math ------------------------------------------------------------------- */

static double
rsqrt_d(double x)
{
	return 1.0 / sqrt(x);
}

static double
sigmoid_d(double x)
{
	return 1.0 / (1.0 + exp(-x));
}

typedef double (*Fn1)(double);

static Fn1
math_fn(OpKind k)
{
	switch (k) {
	case OP_EXP: return exp;
	case OP_EXP2: return exp2;
	case OP_LOG: return log;
	case OP_LOG2: return log2;
	case OP_SQRT: return sqrt;
	case OP_RSQRT: return rsqrt_d;
	case OP_SIN: return sin;
	case OP_COS: return cos;
	case OP_TANH: return tanh;
	case OP_ERF: return erf;
	case OP_SIGMOID: return sigmoid_d;
	case OP_FLOOR: return floor;
	default: return ceil;
	}
}

/* exp and exp2 with `approx` are ex2.approx.ftz on the GPU: a result
 * below the smallest normal f32 is zero. */
static double
exp_ftz(double x)
{
	double r = exp(x);

	return r < FLT_MIN ? 0 : r;
}

static double
exp2_ftz(double x)
{
	double r = exp2(x);

	return r < FLT_MIN ? 0 : r;
}

/*
 * The other approximations (`approx`, about 2^-22 relative on the GPU)
 * are computed exactly here; comparisons with the GPU allow for them.
 */
void
sim_op_math(SimLaunch *L, SimAct *act, Op *op)
{
	Arr a = arr(act, op->opnds[0]);
	Arr r = res(L, act, op->res[0]);
	Fn1 fn = math_fn(op->kind);
	size_t i;

	if (attr_int(&op->attrs, "approx", 0) && a.k != TY_F64) {
		if (op->kind == OP_EXP)
			fn = exp_ftz;
		else if (op->kind == OP_EXP2)
			fn = exp2_ftz;
	}

	if (a.t != r.t || !ty_is_float_kind(a.k) || a.k == TY_F8E4M3 ||
	    a.k == TY_F8E5M2)
		malformed(L, op, "needs f16, bf16, f32 or f64 of one type");
	if (a.k == TY_F64) {
		double *x = (void *)a.p, *z = (void *)r.p;

		for (i = 0; i < a.n; i++)
			z[i] = fn(x[i]);
	} else if (a.k == TY_F32) {
		float *x = (void *)a.p, *z = (void *)r.p;

		for (i = 0; i < a.n; i++)
			z[i] = (float)fn(x[i]);
	} else {
		for (i = 0; i < a.n; i++)
			sim_put_f(a.k, r.p + i * 2,
				  fn(sim_get_f(a.k, a.p + i * 2)));
	}
}

/*
 * a * b + c for f16/bf16 operands, rounded to odd in double: the product
 * is exact (at most 11 + 11 significant bits), the sum's error is exact
 * (TwoSum), and an inexact sum gets the neighbour whose last bit is 1.
 * Rounded to odd with 53 bits, more than p + 2 of the narrow type, the
 * value then rounds to that type as a * b + c would, once; double's own
 * fma rounded to nearest, and a sum on a tie of the narrow type (a tiny
 * c) then rounded to even where the exact value was off the tie.
 */
static double
fma_odd(double a, double b, double c)
{
	double p = a * b, s = p + c, bv, e;
	uint64_t u;

	if (!isfinite(p) || !isfinite(c) || !isfinite(s))
		return s;
	bv = s - p;
	e = (p - (s - bv)) + (c - bv);
	if (e == 0)
		return s;
	memcpy(&u, &s, 8);
	if (!(u & 1)) {
		u += (e > 0) == (s > 0) ? 1 : (uint64_t)-1;
		memcpy(&s, &u, 8);
	}
	return s;
}

void
sim_op_fma(SimLaunch *L, SimAct *act, Op *op)
{
	Arr a = arr(act, op->opnds[0]), b = arr(act, op->opnds[1]);
	Arr c = arr(act, op->opnds[2]), r = res(L, act, op->res[0]);
	size_t i;

	if (a.t != b.t || a.t != c.t || a.t != r.t || !ty_is_float_kind(a.k))
		malformed(L, op, "needs three floats of one type");
	if (a.k == TY_F32) {
		float *x = (void *)a.p, *y = (void *)b.p, *z = (void *)c.p;
		float *o = (void *)r.p;

		for (i = 0; i < a.n; i++)
			o[i] = fmaf(x[i], y[i], z[i]);
	} else {
		double (*f)(double, double, double) = a.k == TY_F64 ? fma : fma_odd;

		for (i = 0; i < a.n; i++)
			sim_put_f(a.k, r.p + i * (size_t)a.es,
				  f(sim_get_f(a.k, a.p + i * (size_t)a.es),
				    sim_get_f(a.k, b.p + i * (size_t)a.es),
				    sim_get_f(a.k, c.p + i * (size_t)a.es)));
	}
}

/* ---- compare and select ------------------------------------------------------- */

enum { P_EQ, P_NE, P_LT, P_LE, P_GT, P_GE };

static int
pred_of(const char *s)
{
	static const char *names[] = { "eq", "ne", "lt", "le", "gt", "ge" };
	int i;

	for (i = 0; s && i < 6; i++)
		if (strcmp(s, names[i]) == 0)
			return i;
	return -1;
}

#define CMP_LOOP(NAME, T)                                                      \
	static void NAME(int p, const T *a, const T *b, uint8_t *r, size_t n)  \
	{                                                                      \
		size_t i;                                                      \
		switch (p) {                                                   \
		case P_EQ: for (i = 0; i < n; i++) r[i] = a[i] == b[i]; break; \
		case P_NE: for (i = 0; i < n; i++) r[i] = a[i] != b[i]; break; \
		case P_LT: for (i = 0; i < n; i++) r[i] = a[i] < b[i]; break;  \
		case P_LE: for (i = 0; i < n; i++) r[i] = a[i] <= b[i]; break; \
		case P_GT: for (i = 0; i < n; i++) r[i] = a[i] > b[i]; break;  \
		default: for (i = 0; i < n; i++) r[i] = a[i] >= b[i]; break;   \
		}                                                              \
	}

CMP_LOOP(cmp_i8, int8_t)
CMP_LOOP(cmp_i16, int16_t)
CMP_LOOP(cmp_i32, int32_t)
CMP_LOOP(cmp_i64, int64_t)
CMP_LOOP(cmp_u8, uint8_t)
CMP_LOOP(cmp_u16, uint16_t)
CMP_LOOP(cmp_u32, uint32_t)
CMP_LOOP(cmp_u64, uint64_t)
CMP_LOOP(cmp_f32, float)
CMP_LOOP(cmp_f64, double)

void
sim_op_cmp(SimLaunch *L, SimAct *act, Op *op)
{
	Arr a = arr(act, op->opnds[0]), b = arr(act, op->opnds[1]);
	Arr r = res(L, act, op->res[0]);
	int p = pred_of(attr_str(&op->attrs, "pred"));

	if (p < 0)
		malformed(L, op, "has no pred (eq ne lt le gt ge)");
	if (a.t != b.t || r.k != TY_I1)
		malformed(L, op, "needs operands of one type and an i1 result");
	same_shape(L, op, &a, &r);
	switch (a.k) {
	case TY_I1: case TY_U8: cmp_u8(p, a.p, b.p, r.p, a.n); break;
	case TY_I8: cmp_i8(p, (void *)a.p, (void *)b.p, r.p, a.n); break;
	case TY_I16: cmp_i16(p, (void *)a.p, (void *)b.p, r.p, a.n); break;
	case TY_I32: cmp_i32(p, (void *)a.p, (void *)b.p, r.p, a.n); break;
	case TY_I64: cmp_i64(p, (void *)a.p, (void *)b.p, r.p, a.n); break;
	case TY_U16: cmp_u16(p, (void *)a.p, (void *)b.p, r.p, a.n); break;
	case TY_U32: cmp_u32(p, (void *)a.p, (void *)b.p, r.p, a.n); break;
	case TY_U64: case TY_PTR:
		cmp_u64(p, (void *)a.p, (void *)b.p, r.p, a.n);
		break;
	case TY_F32: cmp_f32(p, (void *)a.p, (void *)b.p, r.p, a.n); break;
	case TY_F64: cmp_f64(p, (void *)a.p, (void *)b.p, r.p, a.n); break;
	default: {
		float *x = sim_scratch(L, 0, a.n * 4);
		float *y = sim_scratch(L, 1, a.n * 4);

		if (!is_narrow(a.k))
			malformed(L, op, "is not defined on this type");
		sim_to_f32(a.k, a.p, x, a.n);
		sim_to_f32(a.k, b.p, y, a.n);
		cmp_f32(p, x, y, r.p, a.n);
		break;
	}
	}
}

void
sim_op_select(SimLaunch *L, SimAct *act, Op *op)
{
	Arr c = arr(act, op->opnds[0]), a = arr(act, op->opnds[1]);
	Arr b = arr(act, op->opnds[2]), r = res(L, act, op->res[0]);
	size_t i, es = (size_t)r.es;

	if (c.k != TY_I1 || a.t != b.t || a.t != r.t)
		malformed(L, op, "needs an i1 condition and two values of the "
			  "result type");
	same_shape(L, op, &c, &r);
	for (i = 0; i < r.n; i++)
		memcpy(r.p + i * es, (c.p[i] & 1 ? a.p : b.p) + i * es, es);
}

/* ---- conversions ------------------------------------------------------------ */

static void
cvt_one(TypeKind sk, const uint8_t *s, TypeKind dk, uint8_t *d)
{
	Num v;

	if (ty_is_float_kind(sk))
		v.f = sim_get_f(sk, s);
	else
		v.i = sim_get_i(sk, s);
	v = ir_num_cvt(dk, sk, v);
	if (ty_is_float_kind(dk))
		sim_put_f(dk, d, v.f);
	else
		sim_put_i(dk, d, v.i);
}

void
sim_op_cvt(SimLaunch *L, SimAct *act, Op *op)
{
	Arr a = arr(act, op->opnds[0]);
	Arr r = res(L, act, op->res[0]);
	size_t i;

	same_shape(L, op, &a, &r);
	if (!ty_is_scalar_kind(a.k) || !ty_is_scalar_kind(r.k))
		malformed(L, op, "converts numbers only");
	if (a.k == r.k) {
		memcpy(r.p, a.p, a.n * (size_t)a.es);
	} else if (a.k == TY_F32 && ty_is_float_kind(r.k) && r.k != TY_F64) {
		sim_from_f32(r.k, (void *)a.p, r.p, a.n);
	} else if (is_narrow(a.k) && r.k == TY_F32) {
		sim_to_f32(a.k, a.p, (void *)r.p, a.n);
	} else {
		for (i = 0; i < a.n; i++)
			cvt_one(a.k, a.p + i * (size_t)a.es, r.k,
				r.p + i * (size_t)r.es);
	}
}

void
sim_op_bitcast(SimLaunch *L, SimAct *act, Op *op)
{
	Arr a = arr(act, op->opnds[0]);
	Arr r = res(L, act, op->res[0]);

	same_shape(L, op, &a, &r);
	if (a.es != r.es)
		malformed(L, op, "needs types of one bit width");
	memcpy(r.p, a.p, a.n * (size_t)a.es);
}

/* ---- shapes ------------------------------------------------------------------- */

#define STRIDED(NAME, DST, SRC)                                                \
	void NAME(uint8_t *dst, const uint8_t *src, int es, int rank,          \
		  const int64_t *shape, const int64_t *stride)                 \
	{                                                                      \
		int64_t sh[4] = { 1, 1, 1, 1 }, st[4] = { 0, 0, 0, 0 };        \
		int64_t i0, i1, i2, i3, d = 0;                                 \
		int k, off = 4 - rank;                                         \
		for (k = 0; k < rank; k++) {                                   \
			sh[off + k] = shape[k];                                \
			st[off + k] = stride[k] * es;                          \
		}                                                              \
		for (i0 = 0; i0 < sh[0]; i0++)                                 \
			for (i1 = 0; i1 < sh[1]; i1++)                         \
				for (i2 = 0; i2 < sh[2]; i2++) {               \
					int64_t s = i0 * st[0] + i1 * st[1] +  \
						    i2 * st[2];                \
					if (st[3] == es) {                     \
						memcpy(DST, SRC,               \
						       (size_t)(sh[3] * es));  \
						d += sh[3] * es;               \
						continue;                      \
					}                                      \
					for (i3 = 0; i3 < sh[3]; i3++) {       \
						memcpy(DST, SRC, (size_t)es);  \
						d += es;                       \
						s += st[3];                    \
					}                                      \
				}                                              \
	}

STRIDED(sim_gather, dst + d, src + s)
STRIDED(sim_scatter, dst + s, src + d)

static void
row_major(Type *t, int64_t *st)
{
	int64_t s = 1;
	int d;

	for (d = t->rank - 1; d >= 0; d--) {
		st[d] = s;
		s *= t->shape[d];
	}
}

void
sim_op_shape(SimLaunch *L, SimAct *act, Op *op)
{
	Arr a = arr(act, op->opnds[0]);
	Arr r = res(L, act, op->res[0]);
	int64_t st[TY_MAX_RANK], st2[TY_MAX_RANK];
	int d;

	if (ty_elem(a.t) != ty_elem(r.t) || r.t->kind != TY_TILE)
		malformed(L, op, "needs a tile result of the operand's element");
	switch (op->kind) {
	case OP_SPLAT:
		if (a.t->kind == TY_TILE)
			malformed(L, op, "needs a scalar operand");
		memcpy(r.p, a.p, (size_t)a.es);
		replicate(r.p, r.n, r.es);
		return;
	case OP_EXPAND_DIMS:
	case OP_RESHAPE:
	case OP_CONVERT_LAYOUT:  /* moves data between threads, not elements */
		same_shape(L, op, &a, &r);
		memcpy(r.p, a.p, a.n * (size_t)a.es);
		return;
	case OP_BROADCAST:
		if (a.t->kind != TY_TILE || a.t->rank != r.t->rank)
			malformed(L, op, "needs a tile of the result's rank");
		row_major(a.t, st);
		for (d = 0; d < a.t->rank; d++) {
			if (a.t->shape[d] == r.t->shape[d])
				continue;
			if (a.t->shape[d] != 1)
				malformed(L, op, "stretches a dimension that "
					  "is not 1");
			st[d] = 0;
		}
		sim_gather(r.p, a.p, r.es, r.t->rank, r.t->shape, st);
		return;
	case OP_EXTRACT_SLICE: {
		Attr *o = attr_find(&op->attrs, "offsets");
		int64_t at = 0;

		if (a.t->kind != TY_TILE || a.t->rank != r.t->rank || !o ||
		    o->kind != ATTR_INTS || o->ints.n != a.t->rank)
			malformed(L, op, "needs offsets for a tile of its rank");
		row_major(a.t, st);
		for (d = 0; d < r.t->rank; d++) {
			int64_t k = o->ints.v[d];

			if (k < 0 || k > a.t->shape[d] - r.t->shape[d])
				malformed(L, op, "reaches outside its operand");
			at += k * st[d];
		}
		sim_gather(r.p, a.p + at * a.es, r.es, r.t->rank,
			   r.t->shape, st);
		return;
	}
	default: {  /* OP_TRANS */
		Attr *perm = attr_find(&op->attrs, "perm");

		if (a.t->kind != TY_TILE || a.t->rank != r.t->rank || !perm ||
		    perm->kind != ATTR_INTS || perm->ints.n != a.t->rank)
			malformed(L, op, "needs a perm of the tile's rank");
		row_major(a.t, st);
		for (d = 0; d < r.t->rank; d++) {
			int64_t p = perm->ints.v[d];

			if (p < 0 || p >= a.t->rank ||
			    a.t->shape[p] != r.t->shape[d])
				malformed(L, op, "has a perm that does not "
					  "match the shapes");
			st2[d] = st[p];
		}
		sim_gather(r.p, a.p, r.es, r.t->rank, r.t->shape, st2);
		return;
	}
	}
}
