/*
 * ops_test: every elementwise op, compare, select, fma, cvt and math
 * function, on every type it accepts, run by the simulator through the
 * public API and checked bit for bit against ir/numeric.c (the semantics
 * the constant folder uses), on random bit patterns (NaN, infinities,
 * subnormals and extreme integers included).  Then reductions, dot and
 * the shape ops against references computed here.  Outputs are poisoned
 * (0xff) before each launch.
 *
 * One kernel per case: load 64 elements of each input, apply the op,
 * store 64 results.  Prints "N cases, M failures".
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "tlx/tlxrt.h"

enum { N = 64 };

static tlxrt_device *dev;
static int ncases, nfail;
static uint64_t rng = 0x2545f4914f6cdd1dull;

static uint64_t
rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static const TypeKind all_types[] = {
	TY_I1, TY_I8, TY_I16, TY_I32, TY_I64, TY_U8, TY_U16, TY_U32, TY_U64,
	TY_F8E4M3, TY_F8E5M2, TY_F16, TY_BF16, TY_F32, TY_F64,
};

static int
size_of(TypeKind k)
{
	return tlxrt_type_size((int)k);
}

static const char *
tname(TypeKind k)
{
	return ty_kind_name(k);
}

/* A random element: raw bits, with a bias toward edge values. */
static uint64_t
rand_elem(TypeKind k)
{
	static const uint64_t edges[] = { 0, 1, ~0ull, 0x7fffffffffffffffull,
					  0x8000000000000000ull, 0x80, 0x7f,
					  0x8000, 0x7fff, 0x80000000ull,
					  0x7fffffffull };
	uint64_t v = rnd();

	if (k == TY_F32 && v % 4 == 0) {
		float f = (float)((double)(rnd() % 20001) / 100.0 - 100.0);
		uint32_t b;

		memcpy(&b, &f, 4);
		return b;
	}
	if (k == TY_F64 && v % 4 == 0) {
		double d = (double)(rnd() % 20001) / 100.0 - 100.0;

		memcpy(&v, &d, 8);
		return v;
	}
	if (v % 8 == 0)
		v = edges[rnd() % (sizeof edges / sizeof *edges)];
	if (k == TY_I1)
		v &= 1;
	return v;
}

static Num
num_of(TypeKind k, uint64_t bits)
{
	Num n;

	if (ty_is_int_kind(k))
		n.i = ir_int_wrap(k, bits);
	else
		n.f = ir_float_from_bits(k, bits & (size_of(k) == 8 ? ~0ull
					: (1ull << (8 * size_of(k))) - 1));
	return n;
}

static uint64_t
bits_of(TypeKind k, Num n)
{
	uint64_t b = ty_is_int_kind(k) ? (uint64_t)n.i
				       : ir_float_to_bits(k, n.f);

	return size_of(k) == 8 ? b : b & ((1ull << (8 * size_of(k))) - 1);
}

static bool
is_nan(TypeKind k, uint64_t b)
{
	return ty_is_float_kind(k) && isnan(ir_float_from_bits(k, b));
}

/* Runs `body` (IR ops over %x0.. giving %z of type rt) on nin inputs of
 * types in[] with values vals[i][N]; results into out[N] (bits). */
static bool
run(const char *name, int nin, const TypeKind *in, uint64_t vals[][N],
    TypeKind rt, const char *body, uint64_t *out)
{
	char text[8192];
	size_t len = 0;
	tlxrt_module *m;
	tlxrt_kernel *k;
	tlxrt_arg args[5];
	tlxrt_ptr p[5];
	uint8_t buf[N * 8];
	int i, j, rc;
	tlxrt_launch_config cfg = { { 1, 1, 1 }, { 0, 0, 0 }, NULL };

	len += (size_t)snprintf(text + len, sizeof text - len, "kernel @k(");
	for (i = 0; i < nin; i++)
		len += (size_t)snprintf(text + len, sizeof text - len,
					"%%p%d: ptr<%s>, ", i, tname(in[i]));
	len += (size_t)snprintf(text + len, sizeof text - len,
				"%%o: ptr<%s>) {warps = 1} {\n"
				"  %%r: tile<%dxi32> = range {start = 0, end = %d}\n",
				tname(rt), N, N);
	for (i = 0; i < nin; i++)
		len += (size_t)snprintf(
			text + len, sizeof text - len,
			"  %%s%d: tile<%dxptr<%s>> = splat %%p%d\n"
			"  %%a%d: tile<%dxptr<%s>> = ptr_add %%s%d, %%r\n"
			"  %%x%d: tile<%dx%s> = load %%a%d\n",
			i, N, tname(in[i]), i, i, N, tname(in[i]), i, i, N,
			tname(in[i]), i);
	len += (size_t)snprintf(text + len, sizeof text - len,
				"%s"
				"  %%so: tile<%dxptr<%s>> = splat %%o\n"
				"  %%ao: tile<%dxptr<%s>> = ptr_add %%so, %%r\n"
				"  store %%ao, %%z\n  return\n}\n",
				body, N, tname(rt), N, tname(rt));
	ncases++;
	if ((rc = tlxrt_module_load(dev, text, len, &m)) != TLXRT_OK) {
		printf("FAIL %s: %s\n%s", name, tlxrt_errmsg(dev), text);
		nfail++;
		return false;
	}
	tlxrt_kernel_get(m, "k", &k);
	for (i = 0; i <= nin; i++) {
		TypeKind t = i < nin ? in[i] : rt;
		int es = size_of(t);

		tlxrt_malloc(dev, N * (size_t)es, &p[i]);
		if (i < nin) {
			for (j = 0; j < N; j++)
				memcpy(buf + j * es, &vals[i][j], (size_t)es);
			tlxrt_memcpy_htod(dev, p[i], buf, N * (size_t)es);
		} else {
			tlxrt_memset(dev, p[i], 0xff, N * (size_t)es);
		}
		args[i] = tlxrt_arg_ptr(p[i]);
	}
	rc = tlxrt_launch(k, &cfg, args, nin + 1);
	if (rc == TLXRT_OK) {
		int es = size_of(rt);

		tlxrt_memcpy_dtoh(dev, buf, p[nin], N * (size_t)es);
		for (j = 0; j < N; j++) {
			out[j] = 0;
			memcpy(&out[j], buf + j * es, (size_t)es);
		}
	} else {
		printf("FAIL %s: %s\n", name, tlxrt_errmsg(dev));
		nfail++;
	}
	for (i = 0; i <= nin; i++)
		tlxrt_free(dev, p[i]);
	tlxrt_module_unload(m);
	return rc == TLXRT_OK;
}

static void
compare(const char *name, TypeKind rt, const uint64_t *got,
	const uint64_t *want, const bool *skip, uint64_t vals[][N], int nin)
{
	int j, bad = 0;

	for (j = 0; j < N; j++) {
		if (skip && skip[j])
			continue;
		if (got[j] == want[j] ||
		    (is_nan(rt, got[j]) && is_nan(rt, want[j])))
			continue;
		if (!bad++) {
			printf("FAIL %s: element %d: got 0x%llx, want 0x%llx "
			       "(inputs", name, j, (unsigned long long)got[j],
			       (unsigned long long)want[j]);
			for (int i = 0; i < nin; i++)
				printf(" 0x%llx", (unsigned long long)vals[i][j]);
			printf(")\n");
		}
	}
	if (bad)
		nfail++;
}

static void
test_binary(OpKind op, TypeKind t)
{
	uint64_t vals[2][N], got[N], want[N];
	TypeKind in[2] = { t, t };
	char body[256], name[64];
	int j;

	for (j = 0; j < N; j++) {
		vals[0][j] = rand_elem(t);
		vals[1][j] = rand_elem(t);
		if ((op == OP_DIV || op == OP_REM) && ty_is_int_kind(t) &&
		    num_of(t, vals[1][j]).i == 0)
			vals[1][j] = 1;
	}
	snprintf(name, sizeof name, "%s %s", op_name(op), tname(t));
	snprintf(body, sizeof body, "  %%z: tile<%dx%s> = %s %%x0, %%x1\n", N,
		 tname(t), op_name(op));
	if (!run(name, 2, in, vals, t, body, got))
		return;
	for (j = 0; j < N; j++) {
		Num r;

		if (!ir_num_binary(op, t, num_of(t, vals[0][j]),
				   num_of(t, vals[1][j]), &r))
			r.i = 0;
		want[j] = bits_of(t, r);
	}
	compare(name, t, got, want, NULL, vals, 2);
}

static void
test_unary(OpKind op, TypeKind t)
{
	uint64_t vals[1][N], got[N], want[N];
	char body[256], name[64];
	int j;

	for (j = 0; j < N; j++)
		vals[0][j] = rand_elem(t);
	snprintf(name, sizeof name, "%s %s", op_name(op), tname(t));
	snprintf(body, sizeof body, "  %%z: tile<%dx%s> = %s %%x0\n", N,
		 tname(t), op_name(op));
	if (!run(name, 1, &t, vals, t, body, got))
		return;
	for (j = 0; j < N; j++) {
		Num a = num_of(t, vals[0][j]), r;

		if (!ir_num_unary(op, t, a, &r)) {
			double x = a.f, y;

			switch (op) {
			case OP_EXP: y = exp(x); break;
			case OP_EXP2: y = exp2(x); break;
			case OP_LOG: y = log(x); break;
			case OP_LOG2: y = log2(x); break;
			case OP_RSQRT: y = 1.0 / sqrt(x); break;
			case OP_SIN: y = sin(x); break;
			case OP_COS: y = cos(x); break;
			case OP_TANH: y = tanh(x); break;
			case OP_ERF: y = erf(x); break;
			default: y = 1.0 / (1.0 + exp(-x)); break;
			}
			r.f = ir_float_round(t, y);
		}
		want[j] = bits_of(t, r);
	}
	compare(name, t, got, want, NULL, vals, 1);
}

static void
test_cvt(TypeKind from, TypeKind to)
{
	uint64_t vals[1][N], got[N], want[N];
	char body[256], name[64];
	int j;

	for (j = 0; j < N; j++)
		vals[0][j] = rand_elem(from);
	snprintf(name, sizeof name, "cvt %s -> %s", tname(from), tname(to));
	snprintf(body, sizeof body, "  %%z: tile<%dx%s> = cvt %%x0\n", N,
		 tname(to));
	if (!run(name, 1, &from, vals, to, body, got))
		return;
	for (j = 0; j < N; j++)
		want[j] = bits_of(to, ir_num_cvt(to, from,
						 num_of(from, vals[0][j])));
	compare(name, to, got, want, NULL, vals, 1);
}

static void
test_cmp(const char *pred, TypeKind t)
{
	uint64_t vals[2][N], got[N], want[N];
	TypeKind in[2] = { t, t };
	char body[256], name[64];
	int j;

	for (j = 0; j < N; j++) {
		vals[0][j] = rand_elem(t);
		vals[1][j] = j % 4 == 0 ? vals[0][j] : rand_elem(t);
	}
	snprintf(name, sizeof name, "cmp %s %s", pred, tname(t));
	snprintf(body, sizeof body,
		 "  %%z: tile<%dxi1> = cmp %%x0, %%x1 {pred = %s}\n", N, pred);
	if (!run(name, 2, in, vals, TY_I1, body, got))
		return;
	for (j = 0; j < N; j++)
		want[j] = (uint64_t)ir_num_cmp(pred, t, num_of(t, vals[0][j]),
					       num_of(t, vals[1][j]));
	compare(name, TY_I1, got, want, NULL, vals, 2);
}

static void
test_select_fma(TypeKind t)
{
	uint64_t vals[3][N], got[N], want[N];
	TypeKind in[3] = { t, t, t };
	char body[512], name[64];
	int j;

	for (j = 0; j < N; j++) {
		vals[0][j] = rand_elem(t);
		vals[1][j] = rand_elem(t);
		vals[2][j] = rand_elem(t);
	}
	snprintf(name, sizeof name, "select %s", tname(t));
	snprintf(body, sizeof body,
		 "  %%c: tile<%dxi1> = cmp %%x0, %%x1 {pred = lt}\n"
		 "  %%z: tile<%dx%s> = select %%c, %%x2, %%x1\n", N, N, tname(t));
	if (run(name, 3, in, vals, t, body, got)) {
		for (j = 0; j < N; j++)
			want[j] = ir_num_cmp("lt", t, num_of(t, vals[0][j]),
					     num_of(t, vals[1][j]))
					  ? vals[2][j]
					  : vals[1][j];
		for (j = 0; j < N; j++)
			want[j] = bits_of(t, num_of(t, want[j]));
		compare(name, t, got, want, NULL, vals, 3);
	}
	if (t != TY_F32 && t != TY_F64)
		return;
	snprintf(name, sizeof name, "fma %s", tname(t));
	snprintf(body, sizeof body,
		 "  %%z: tile<%dx%s> = fma %%x0, %%x1, %%x2\n", N, tname(t));
	if (!run(name, 3, in, vals, t, body, got))
		return;
	for (j = 0; j < N; j++) {
		Num r;

		ir_num_fma(t, num_of(t, vals[0][j]), num_of(t, vals[1][j]),
			   num_of(t, vals[2][j]), &r);
		want[j] = bits_of(t, r);
	}
	compare(name, t, got, want, NULL, vals, 3);
}

/* ---- reductions, dot, shapes: 8x8 tiles from the 64 inputs ------------ */

static double
min_num(double a, double b, bool max)
{
	if (isnan(a))
		return b;
	if (isnan(b))
		return a;
	if (a == b)
		return (signbit(a) != 0) == max ? b : a;
	return (a < b) != max ? a : b;
}

static double
fval(TypeKind t, uint64_t b)
{
	return ty_is_float_kind(t) ? ir_float_from_bits(t, b)
				   : (double)num_of(t, b).i;
}

static void
test_reduce(const char *kind, TypeKind t, int axis)
{
	uint64_t vals[1][N], got[N], want[N];
	bool arg = kind[0] == 'a';
	TypeKind rt = arg ? TY_I32 : t;
	char body[512], name[64];
	int i, j;

	for (j = 0; j < N; j++) {
		vals[0][j] = rand_elem(t);
		if (ty_is_float_kind(t) && j % 5 != 0)
			vals[0][j] = bits_of(t, (Num){ .f = (double)(int)(rnd() % 200) / 8 - 12 });
	}
	snprintf(name, sizeof name, "reduce %s %s axis %d", kind, tname(t), axis);
	snprintf(body, sizeof body,
		 "  %%t: tile<8x8x%s> = reshape %%x0\n"
		 "  %%u: tile<8x%s> = reduce %%t {kind = %s, axis = %d}\n"
		 "  %%v: tile<8x1x%s> = expand_dims %%u {axis = 1}\n"
		 "  %%w: tile<8x8x%s> = broadcast %%v\n"
		 "  %%z: tile<%dx%s> = reshape %%w\n",
		 tname(t), tname(rt), kind, axis, tname(rt), tname(rt), N,
		 tname(rt));
	if (!run(name, 1, &t, vals, rt, body, got))
		return;
	for (i = 0; i < 8; i++) {
		double facc = strcmp(kind, "prod") == 0 ? 1 : 0;
		float f32acc = (float)facc;
		uint64_t iacc = (uint64_t)facc;
		int best = 0;
		Num r;

		for (j = 0; j < 8; j++) {
			int e = axis == 0 ? j * 8 + i : i * 8 + j;
			int b = axis == 0 ? best * 8 + i : i * 8 + best;
			double v = fval(t, vals[0][e]), bv = fval(t, vals[0][b]);
			Num n = num_of(t, vals[0][e]);

			if (strcmp(kind, "sum") == 0) {
				f32acc += (float)v;
				facc += v;
				iacc += (uint64_t)n.i;
			} else if (strcmp(kind, "prod") == 0) {
				f32acc *= (float)v;
				facc *= v;
				iacc *= (uint64_t)n.i;
			} else if (j == 0) {
				facc = v;
				iacc = (uint64_t)n.i;
			} else if (strcmp(kind, "max") == 0 ||
				   strcmp(kind, "min") == 0) {
				bool mx = kind[1] == 'a';
				bool uns = ty_is_unsigned_kind(t) || t == TY_I1;

				facc = min_num(facc, v, mx);
				if (uns ? ((uint64_t)n.i > iacc) == mx &&
						  (uint64_t)n.i != iacc
					: (n.i > (int64_t)iacc) == mx &&
						  n.i != (int64_t)iacc)
					iacc = (uint64_t)n.i;
			} else {
				bool mx = strcmp(kind, "argmax") == 0;
				bool better;

				if (ty_is_float_kind(t))
					better = !isnan(v) && (isnan(bv) || (mx ? v > bv : v < bv));
				else if (ty_is_unsigned_kind(t) || t == TY_I1)
					better = mx ? (uint64_t)n.i > (uint64_t)num_of(t, vals[0][b]).i
						    : (uint64_t)n.i < (uint64_t)num_of(t, vals[0][b]).i;
				else
					better = mx ? n.i > num_of(t, vals[0][b]).i
						    : n.i < num_of(t, vals[0][b]).i;
				if (better)
					best = j;
			}
		}
		if (arg)
			r.i = best;
		else if (ty_is_int_kind(t))
			r.i = ir_int_wrap(t, iacc);
		else if (kind[0] == 's' || kind[0] == 'p')
			r.f = t == TY_F64 ? facc : ir_float_round(t, f32acc);
		else
			r.f = facc;
		for (j = 0; j < 8; j++)
			want[i * 8 + j] = bits_of(rt, r);
	}
	compare(name, rt, got, want, NULL, vals, 1);
}

static void
test_dot(TypeKind t)
{
	uint64_t vals[3][N], got[N];
	TypeKind in[3] = { t, t, t == TY_I8 ? TY_I32 : TY_F32 };
	TypeKind at = in[2];
	char body[1024], name[64];
	int i, j, k, bad = 0;

	for (j = 0; j < N; j++) {
		vals[0][j] = t == TY_I8 ? rnd() : bits_of(t, (Num){ .f = (double)(int)(rnd() % 64) / 16 - 2 });
		vals[1][j] = t == TY_I8 ? rnd() : bits_of(t, (Num){ .f = (double)(int)(rnd() % 64) / 16 - 2 });
		vals[2][j] = bits_of(at, t == TY_I8 ? (Num){ .i = (int64_t)(rnd() % 1000) - 500 }
						   : (Num){ .f = (double)(int)(rnd() % 1000) / 7 });
	}
	snprintf(name, sizeof name, "dot %s", tname(t));
	/* operands loaded as 8x8 tiles (fp8 allows no reshape or trans);
	 * b through transposed offsets */
	snprintf(body, sizeof body,
		 "  %%r2: tile<8x8xi32> = reshape %%r\n"
		 "  %%r2t: tile<8x8xi32> = trans %%r2 {perm = [1, 0]}\n"
		 "  %%q0s: tile<8x8xptr<%s>> = splat %%p0\n"
		 "  %%q0: tile<8x8xptr<%s>> = ptr_add %%q0s, %%r2\n"
		 "  %%a: tile<8x8x%s> = load %%q0\n"
		 "  %%q1s: tile<8x8xptr<%s>> = splat %%p1\n"
		 "  %%q1: tile<8x8xptr<%s>> = ptr_add %%q1s, %%r2t\n"
		 "  %%bt: tile<8x8x%s> = load %%q1\n"
		 "  %%c: tile<8x8x%s> = reshape %%x2\n"
		 "  %%d: tile<8x8x%s> = dot %%a, %%bt, %%c\n"
		 "  %%z: tile<%dx%s> = reshape %%d\n",
		 tname(t), tname(t), tname(t), tname(t), tname(t), tname(t),
		 tname(at), tname(at), N, tname(at));
	if (!run(name, 3, in, vals, at, body, got))
		return;
	for (i = 0; i < 8; i++)
		for (j = 0; j < 8; j++) {
			double ref = fval(at, vals[2][i * 8 + j]), g;

			for (k = 0; k < 8; k++)  /* b transposed: bt[k][j] = b[j][k] */
				ref += fval(t, vals[0][i * 8 + k]) *
				       fval(t, vals[1][j * 8 + k]);
			if (t == TY_I8)
				ref = (double)(int32_t)(int64_t)ref;
			g = fval(at, got[i * 8 + j]);
			if (fabs(g - ref) > 1e-5 * (fabs(ref) + 1) && !bad++)
				printf("FAIL %s: [%d][%d] = %g, want %g\n", name,
				       i, j, g, ref);
		}
	if (bad)
		nfail++;
}

int
main(void)
{
	static const OpKind bin[] = { OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_REM,
				      OP_MIN, OP_MAX, OP_AND, OP_OR, OP_XOR,
				      OP_SHL, OP_SHR };
	static const OpKind math[] = { OP_EXP, OP_EXP2, OP_LOG, OP_LOG2,
				       OP_SQRT, OP_RSQRT, OP_SIN, OP_COS,
				       OP_TANH, OP_ERF, OP_SIGMOID, OP_FLOOR,
				       OP_CEIL };
	static const char *preds[] = { "eq", "ne", "lt", "le", "gt", "ge" };
	static const char *reds[] = { "sum", "prod", "max", "min", "argmax",
				      "argmin" };
	size_t a, b, o;

	if (tlxrt_device_open("sim", &dev) != TLXRT_OK)
		return 1;
	for (a = 0; a < countof(all_types); a++) {
		TypeKind t = all_types[a];
		bool narrow8 = t == TY_F8E4M3 || t == TY_F8E5M2;

		for (o = 0; o < countof(bin); o++)
			if (ty_is_int_kind(t) || (!narrow8 && bin[o] < OP_AND))
				test_binary(bin[o], t);
		if (!narrow8) {
			test_unary(OP_NEG, t);
			test_unary(OP_ABS, t);
		}
		if (ty_is_int_kind(t))
			test_unary(OP_NOT, t);
		if (ty_is_float_kind(t) && !narrow8)
			for (o = 0; o < countof(math); o++)
				test_unary(math[o], t);
		for (b = 0; b < countof(all_types); b++)
			test_cvt(t, all_types[b]);
		if (!narrow8) {
			for (o = 0; o < countof(preds); o++)
				test_cmp(preds[o], t);
			test_select_fma(t);
			for (o = 0; o < countof(reds); o++) {
				test_reduce(reds[o], t, 0);
				test_reduce(reds[o], t, 1);
			}
		}
	}
	test_dot(TY_F16);
	test_dot(TY_BF16);
	test_dot(TY_F8E4M3);
	test_dot(TY_F8E5M2);
	test_dot(TY_F32);
	test_dot(TY_I8);
	printf("%d cases, %d failures\n", ncases, nfail);
	tlxrt_device_close(dev);
	return nfail != 0;
}
