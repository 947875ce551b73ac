/*
 * examples_test: runs the kernels of examples/ through the public runtime
 * API and checks them against double-precision references on random
 * data, with the outputs poisoned before the launch and a guard region
 * after them that must stay poisoned.  Written once: the same binary runs
 * on the simulator (CI) and on a GPU.
 *
 *   examples_test vadd MODULE N
 *   examples_test copy MODULE N
 *   examples_test softmax|softmax_loop MODULE ROWS COLS [STRIDE]
 *   examples_test layernorm|layernorm_loop MODULE ROWS COLS [STRIDE]
 *   examples_test matmul MODULE M N K
 *   examples_test matmul_pitch MODULE M N K P (B's rows P >= N apart)
 *   examples_test gemm MODULE KERNEL M N K     (TMA GEMMs: gemm_ws, ...)
 *   examples_test gemm_fp8 MODULE KERNEL M N K (C = A @ BT^T, e4m3)
 *   examples_test gemm_bias MODULE KERNEL M N K (C = GELU(A @ B + bias))
 *   examples_test attention MODULE Z H HKV SQ SK D CAUSAL [KERNEL]
 *                                               (attention_fwd, _dyn)
 *
 * MODULE is what tlxc made (a cubin, PTX or IR text) or, in builds with
 * libtlx, a .tlx source that is compiled in-process first (const
 * overrides from $TLX_DEFINES, "NAME=VALUE,NAME=VALUE"; $TLX_EMIT=ir
 * for kernels whose GPU code generation is not written yet).
 *
 * $TLX_TEST_OFFSET=B moves every device buffer B bytes past an aligned
 * address (rounded down to whole elements): the generic entries' paths
 * at every alignment.  The device is $TLXRT_DEVICE, else a GPU when there
 * is one, else the simulator.  Prints one line; exits 0 when every element is within the
 * kernel's tolerance, 1 otherwise, 77 when no device opens.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tlx/tlxrt.h"
#ifdef HAVE_LIBTLX
#include "tlx/tlx.h"
#endif

enum { GUARD = 64 };  /* poisoned elements after every output */

static tlxrt_device *dev;
static uint64_t rng = 0x9e3779b97f4a7c15ull;
static tlxrt_module *loaded;  /* the module, unloaded at the end */
static void *owned[64];  /* host buffers, freed at the end */
static int nowned;

static void *
hmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p || nowned == (int)(sizeof owned / sizeof owned[0])) {
		printf("FAIL: out of host memory\n");
		exit(1);
	}
	return owned[nowned++] = p;
}

static void
die(int rc, const char *what)
{
	printf("FAIL: %s: %s: %s\n", what, tlxrt_errstr(rc), tlxrt_errmsg(dev));
	exit(1);
}

#define CHECK(call, what)                       \
	do {                                    \
		int rc_ = (call);               \
		if (rc_ != TLXRT_OK)            \
			die(rc_, what);         \
	} while (0)

static double
urand(void)  /* uniform in [-1, 1) */
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (double)(rng >> 11) / 4503599627370496.0 - 1;
}

/* bf16 <-> float, round to nearest even (NaN kept quiet). */
static uint16_t
to_bf16(float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	if ((u & 0x7fffffff) > 0x7f800000)
		return (uint16_t)((u >> 16) | 0x40);
	return (uint16_t)((u + 0x7fff + ((u >> 16) & 1)) >> 16);
}

static float
from_bf16(uint16_t h)
{
	uint32_t u = (uint32_t)h << 16;
	float f;

	memcpy(&f, &u, 4);
	return f;
}

/* A device buffer of n elements of esz bytes plus the guard, poisoned,
 * $TLX_TEST_OFFSET bytes (whole elements) past the allocation. */
static tlxrt_ptr
dalloc(size_t n, size_t esz)
{
	const char *o = getenv("TLX_TEST_OFFSET");
	size_t off = o ? (size_t)strtoul(o, NULL, 0) / esz * esz : 0;
	tlxrt_ptr p;

	CHECK(tlxrt_malloc(dev, (n + GUARD) * esz + off, &p), "malloc");
	p += off;
	CHECK(tlxrt_memset(dev, p, 0xff, (n + GUARD) * esz), "memset");
	return p;
}

static void
upload(tlxrt_ptr d, const void *h, size_t bytes)
{
	CHECK(tlxrt_memcpy_htod(dev, d, h, bytes), "memcpy to the device");
}

/* Downloads n elements and checks that the guard after them is intact. */
static void *
download(tlxrt_ptr d, size_t n, size_t esz)
{
	unsigned char *h = hmalloc((n + GUARD) * esz);
	size_t i;

	CHECK(tlxrt_memcpy_dtoh(dev, h, d, (n + GUARD) * esz), "memcpy to the host");
	for (i = n * esz; i < (n + GUARD) * esz; i++)
		if (h[i] != 0xff) {
			printf("FAIL: the kernel wrote past its output (byte %zu "
			       "after the end)\n", i - n * esz);
			exit(1);
		}
	return h;
}

#ifdef HAVE_LIBTLX
/* Compiles a .tlx file with libtlx and loads the image it gives. */
static void
load_source(const char *path, tlxrt_module **m)
{
	const char *defs[16], *env = getenv("TLX_DEFINES");
	char *text = NULL, *copy = env ? strdup(env) : NULL, *save = NULL, *d;
	tlx_options o = { .name = path, .defines = defs };
	tlx_ctx *c;
	tlx_module *tm;
	const void *img;
	size_t n = 0, size;
	int kind;
	FILE *f = fopen(path, "rb");

	if (!f || !(text = hmalloc(1 << 20)) ||
	    (n = fread(text, 1, 1 << 20, f)) == 0) {
		printf("FAIL: cannot read %s\n", path);
		exit(1);
	}
	fclose(f);
	if (getenv("TLX_EMIT") && !strcmp(getenv("TLX_EMIT"), "ir"))
		o.emit = TLX_EMIT_IR;
	for (d = copy ? strtok_r(copy, ",", &save) : NULL; d && o.ndefines < 16;
	     d = strtok_r(NULL, ",", &save))
		defs[o.ndefines++] = d;
	if (tlx_ctx_create(NULL, NULL, &c) != TLX_OK ||
	    tlx_cache_set_dir(c, NULL) != TLX_OK) {
		printf("FAIL: libtlx: no context\n");
		exit(1);
	}
	if (tlx_compile(c, text, n, &o, &tm) != TLX_OK) {
		printf("FAIL: libtlx: %s\n", tlx_errmsg(c));
		exit(1);
	}
	tlx_module_image(tm, &img, &size, &kind);
	CHECK(tlxrt_module_load(dev, img, size, m), "loading the module");
	tlx_module_destroy(tm);
	tlx_ctx_destroy(c);
	free(copy);
}
#endif

static tlxrt_kernel *
kernel(const char *path, const char *name, tlxrt_module **m)
{
	tlxrt_kernel *k;
	size_t n = strlen(path);

#ifdef HAVE_LIBTLX
	if (n > 4 && !strcmp(path + n - 4, ".tlx"))
		load_source(path, m);
	else
#endif
		CHECK(tlxrt_module_load_file(dev, path, m), "loading the module");
	loaded = *m;
	CHECK(tlxrt_kernel_get(*m, name, &k), "finding the kernel");
	return k;
}

static float
launch(tlxrt_kernel *k, const tlxrt_arg *args, int n)
{
	tlxrt_event *a, *b;
	float ms = 0;

	CHECK(tlxrt_event_create(dev, &a), "event");
	CHECK(tlxrt_event_create(dev, &b), "event");
	CHECK(tlxrt_event_record(a, NULL), "event record");
	CHECK(tlxrt_launch(k, NULL, args, n), "launch");
	CHECK(tlxrt_event_record(b, NULL), "event record");
	CHECK(tlxrt_event_synchronize(b), "synchronize");
	CHECK(tlxrt_event_elapsed_ms(a, b, &ms), "elapsed time");
	tlxrt_event_destroy(a);
	tlxrt_event_destroy(b);
	return ms;
}

/* Counts elements outside |got - ref| <= atol + rtol * |ref| (NaN fails). */
typedef struct Err {
	size_t bad, n, first;
	double worst, got, ref;
} Err;

static void
compare(Err *e, size_t i, double got, double ref, double atol, double rtol)
{
	double d = fabs(got - ref);

	e->n++;
	if (d <= atol + rtol * fabs(ref))
		return;
	if (!e->bad || d > e->worst) {
		e->worst = d;
		e->first = i;
		e->got = got;
		e->ref = ref;
	}
	e->bad++;
}

static int
report(const char *what, Err *e, float ms)
{
	tlxrt_device_props p;

	tlxrt_device_get_props(dev, &p);
	if (e->bad) {
		printf("FAIL: %s on %s: %zu of %zu elements wrong; worst at %zu: "
		       "got %.9g, expected %.9g\n", what, p.name, e->bad, e->n,
		       e->first, e->got, e->ref);
		return 1;
	}
	printf("ok: %s on %s (%zu elements checked, %.3f ms)\n", what, p.name,
	       e->n, ms);
	return 0;
}

/* ---- the kernels ----------------------------------------------------------- */

static int
run_vadd(const char *path, int n, bool copy)
{
	size_t b = (size_t)n * 4;
	float *x = hmalloc(b), *y = hmalloc(b), *out;
	tlxrt_ptr dx = dalloc((size_t)n, 4), dy = dalloc((size_t)n, 4),
		  dout = dalloc((size_t)n, 4);
	tlxrt_module *m;
	tlxrt_kernel *k = kernel(path, copy ? "copy" : "vadd", &m);
	tlxrt_arg a[4];
	Err e = { 0 };
	float ms;
	int i, na = 0;

	for (i = 0; i < n; i++) {
		x[i] = (float)urand();
		y[i] = (float)urand();
	}
	upload(dx, x, b);
	upload(dy, y, b);
	a[na++] = tlxrt_arg_ptr(dx);
	if (!copy)
		a[na++] = tlxrt_arg_ptr(dy);
	a[na++] = tlxrt_arg_ptr(dout);
	a[na++] = tlxrt_arg_i32(n);
	ms = launch(k, a, na);
	out = download(dout, (size_t)n, 4);
	/* f32 addition is correctly rounded: the result is exact */
	for (i = 0; i < n; i++)
		compare(&e, (size_t)i, out[i],
			copy ? x[i] : (float)((double)x[i] + y[i]), 0, 0);
	return report(copy ? "copy" : "vadd", &e, ms);
}

static uint16_t *
random_bf16(size_t n, double scale, double shift)
{
	uint16_t *h = hmalloc(n * 2);
	size_t i;

	for (i = 0; i < n; i++)
		h[i] = to_bf16((float)(urand() * scale + shift));
	return h;
}

/* Rows of cols elements stride apart: x random everywhere (the gaps too),
 * y poisoned; the gaps of y must stay poisoned. */
static bool
gap_intact(const uint16_t *y, int rows, int cols, int stride)
{
	size_t r, c;

	for (r = 0; r + 1 < (size_t)rows; r++)
		for (c = (size_t)cols; c < (size_t)stride; c++)
			if (y[r * stride + c] != 0xffff) {
				printf("FAIL: the kernel wrote between rows (row %zu, "
				       "column %zu)\n", r, c);
				return false;
			}
	return true;
}

static int
run_softmax(const char *path, const char *name, int rows, int cols, int stride)
{
	size_t n = rows ? (size_t)(rows - 1) * stride + cols : 0, r, c;
	uint16_t *x = random_bf16(n, 4, 0), *y;
	tlxrt_ptr dx = dalloc(n, 2), dy = dalloc(n, 2);
	tlxrt_module *m;
	tlxrt_kernel *k = kernel(path, name, &m);
	tlxrt_arg a[5];
	Err e = { 0 };
	float ms;

	upload(dx, x, n * 2);
	a[0] = tlxrt_arg_ptr(dx);
	a[1] = tlxrt_arg_ptr(dy);
	a[2] = tlxrt_arg_i32(rows);
	a[3] = tlxrt_arg_i32(cols);
	a[4] = tlxrt_arg_i32(stride);
	ms = launch(k, a, 5);
	y = download(dy, n, 2);
	if (!gap_intact(y, rows, cols, stride))
		return 1;
	for (r = 0; r < (size_t)rows; r++) {
		const uint16_t *xr = x + r * stride, *yr = y + r * stride;
		double mx = -INFINITY, s = 0;

		for (c = 0; c < (size_t)cols; c++)
			mx = fmax(mx, from_bf16(xr[c]));
		for (c = 0; c < (size_t)cols; c++)
			s += exp(from_bf16(xr[c]) - mx);
		for (c = 0; c < (size_t)cols; c++)
			compare(&e, r * stride + c, from_bf16(yr[c]),
				exp(from_bf16(xr[c]) - mx) / s, 1e-6, 1.0 / 128);
	}
	return report(name, &e, ms);
}

static int
run_layernorm(const char *path, const char *name, int rows, int cols,
	      int stride)
{
	size_t n = rows ? (size_t)(rows - 1) * stride + cols : 0, r, c;
	uint16_t *x = random_bf16(n, 2, 0.5), *w = random_bf16((size_t)cols, 1, 1),
		 *bias = random_bf16((size_t)cols, 1, 0), *y;
	tlxrt_ptr dx = dalloc(n, 2), dw = dalloc((size_t)cols, 2),
		  db = dalloc((size_t)cols, 2), dy = dalloc(n, 2);
	tlxrt_module *m;
	tlxrt_kernel *k = kernel(path, name, &m);
	const float eps = 1e-5f;
	tlxrt_arg a[8];
	Err e = { 0 };
	float ms;

	/* a ramp along the row: the chunks of a looped layer norm have
	 * means 4 apart end to end, which merging must account for */
	for (r = 0; r < n; r++)
		x[r] = to_bf16((float)(from_bf16(x[r]) +
				       4.0 * (double)(r % (size_t)stride) / cols));
	upload(dx, x, n * 2);
	upload(dw, w, (size_t)cols * 2);
	upload(db, bias, (size_t)cols * 2);
	a[0] = tlxrt_arg_ptr(dx);
	a[1] = tlxrt_arg_ptr(dw);
	a[2] = tlxrt_arg_ptr(db);
	a[3] = tlxrt_arg_ptr(dy);
	a[4] = tlxrt_arg_i32(rows);
	a[5] = tlxrt_arg_i32(cols);
	a[6] = tlxrt_arg_i32(stride);
	a[7] = tlxrt_arg_f32(eps);
	ms = launch(k, a, 8);
	y = download(dy, n, 2);
	if (!gap_intact(y, rows, cols, stride))
		return 1;
	for (r = 0; r < (size_t)rows; r++) {
		const uint16_t *xr = x + r * stride, *yr = y + r * stride;
		double mean = 0, var = 0, rstd;

		for (c = 0; c < (size_t)cols; c++)
			mean += from_bf16(xr[c]);
		mean /= cols;
		for (c = 0; c < (size_t)cols; c++) {
			double d = from_bf16(xr[c]) - mean;

			var += d * d;
		}
		rstd = 1 / sqrt(var / cols + eps);
		for (c = 0; c < (size_t)cols; c++)
			compare(&e, r * stride + c, from_bf16(yr[c]),
				(from_bf16(xr[c]) - mean) * rstd *
				from_bf16(w[c]) + from_bf16(bias[c]),
				2e-2, 1.0 / 64);
	}
	return report(name, &e, ms);
}

/* C[i][j] = sum over k of a[i][k] * bt[j][k], in double (a: M x K, bt:
 * N x K, row-major). */
static void
dot_rows(double *C, const float *a, const float *bt, int M, int N, int K)
{
	int i, j, k;

	for (i = 0; i < M; i++)
		for (j = 0; j < N; j++) {
			const float *x = a + (size_t)i * K, *y = bt + (size_t)j * K;
			double s = 0;

			for (k = 0; k < K; k++)
				s += (double)x[k] * y[k];
			C[(size_t)i * N + j] = s;
		}
}

/* C = A @ B in double over bf16 inputs; A: M x K, B: K x N, row-major. */
static double *
gemm_ref(const uint16_t *A, const uint16_t *B, int M, int N, int K)
{
	double *C = hmalloc((size_t)M * N * sizeof *C);
	float *bt = hmalloc((size_t)K * N * sizeof *bt);
	float *a = hmalloc((size_t)M * K * sizeof *a);
	size_t i;
	int j, k;

	for (k = 0; k < K; k++)
		for (j = 0; j < N; j++)
			bt[(size_t)j * K + k] = from_bf16(B[(size_t)k * N + j]);
	for (i = 0; i < (size_t)M * K; i++)
		a[i] = from_bf16(A[i]);
	dot_rows(C, a, bt, M, N, K);
	return C;
}

/* f32 accumulation of K products (atol), then one bf16 rounding. */
static int
check_gemm_tol(const char *what, uint16_t *c, double *ref, int M, int N,
	       double atol, float ms)
{
	Err e = { 0 };
	size_t i;

	for (i = 0; i < (size_t)M * N; i++)
		compare(&e, i, from_bf16(c[i]), ref[i], atol, 1.0 / 128);
	return report(what, &e, ms);
}

static int
check_gemm(const char *what, uint16_t *c, double *ref, int M, int N, int K,
	   float ms)
{
	return check_gemm_tol(what, c, ref, M, N, 1e-3 * sqrt((double)K), ms);
}

/* B's rows P >= N elements apart (the padding random): the launch's
 * strides say so, and the reference reads the first N of each row. */
static int
run_matmul(const char *path, int M, int N, int K, int P)
{
	uint16_t *A = random_bf16((size_t)M * K, 1, 0),
		 *B = random_bf16((size_t)K * P, 1, 0),
		 *Bn = hmalloc((size_t)K * N * 2), *C;
	tlxrt_ptr da = dalloc((size_t)M * K, 2), db = dalloc((size_t)K * P, 2),
		  dc = dalloc((size_t)M * N, 2);
	tlxrt_module *m;
	tlxrt_kernel *k = kernel(path, "matmul", &m);
	tlxrt_arg a[12];
	float ms;
	int r;

	for (r = 0; r < K; r++)
		memcpy(Bn + (size_t)r * N, B + (size_t)r * P, (size_t)N * 2);
	upload(da, A, (size_t)M * K * 2);
	upload(db, B, (size_t)K * P * 2);
	a[0] = tlxrt_arg_ptr(da);
	a[1] = tlxrt_arg_ptr(db);
	a[2] = tlxrt_arg_ptr(dc);
	a[3] = tlxrt_arg_i32(M);
	a[4] = tlxrt_arg_i32(N);
	a[5] = tlxrt_arg_i32(K);
	a[6] = tlxrt_arg_i32(K);   /* A: row stride K, column stride 1 */
	a[7] = tlxrt_arg_i32(1);
	a[8] = tlxrt_arg_i32(P);   /* B */
	a[9] = tlxrt_arg_i32(1);
	a[10] = tlxrt_arg_i32(N);  /* C */
	a[11] = tlxrt_arg_i32(1);
	ms = launch(k, a, 12);
	C = download(dc, (size_t)M * N, 2);
	return check_gemm("matmul", C, gemm_ref(A, Bn, M, N, K), M, N, K, ms);
}

/* With bias (N floats): C = GELU(A @ B + bias), tanh form (gemm_epilogue;
 * its tanh.approx, 2^-11 relative, is within the tolerance). */
static int
run_tma_gemm_bias(const char *path, const char *name, int M, int N, int K,
		  bool bias)
{
	uint16_t *A = random_bf16((size_t)M * K, 1, 0),
		 *B = random_bf16((size_t)K * N, 1, 0), *C;
	tlxrt_ptr da = dalloc((size_t)M * K, 2), db = dalloc((size_t)K * N, 2),
		  dc = dalloc((size_t)M * N, 2);
	int64_t sa[2] = { M, K }, sb[2] = { K, N }, sc[2] = { M, N };
	tlxrt_module *m;
	tlxrt_kernel *k = kernel(path, name, &m);
	tlxrt_arg a[7];
	float *bv = NULL, ms;
	double *ref;
	size_t i;

	upload(da, A, (size_t)M * K * 2);
	upload(db, B, (size_t)K * N * 2);
	a[0] = tlxrt_arg_tensor(da, TLXRT_BF16, 2, sa, NULL);
	a[1] = tlxrt_arg_tensor(db, TLXRT_BF16, 2, sb, NULL);
	a[2] = tlxrt_arg_tensor(dc, TLXRT_BF16, 2, sc, NULL);
	a[3] = tlxrt_arg_i32(M);
	a[4] = tlxrt_arg_i32(N);
	a[5] = tlxrt_arg_i32(K);
	if (bias) {
		tlxrt_ptr dbias = dalloc((size_t)N, 4);

		bv = hmalloc((size_t)N * sizeof *bv);
		for (i = 0; i < (size_t)N; i++)
			bv[i] = (float)(urand() * 4);
		upload(dbias, bv, (size_t)N * 4);
		a[6] = tlxrt_arg_ptr(dbias);
	}
	ms = launch(k, a, bias ? 7 : 6);
	C = download(dc, (size_t)M * N, 2);
	ref = gemm_ref(A, B, M, N, K);
	for (i = 0; bias && i < (size_t)M * N; i++) {
		double x = ref[i] + bv[i % (size_t)N];

		ref[i] = 0.5 * x * (1 + tanh(0.7978845608028654 *
					     (x + 0.044715 * x * x * x)));
	}
	return check_gemm(name, C, ref, M, N, K, ms);
}

static int
run_tma_gemm(const char *path, const char *name, int M, int N, int K)
{
	return run_tma_gemm_bias(path, name, M, N, K, false);
}

/* e4m3 bytes of magnitude 1/4 to 15/4 (exponents 5 to 8) and random sign,
 * and their values. */
static uint8_t *
random_e4m3(size_t n)
{
	uint8_t *h = hmalloc(n);
	size_t i;

	for (i = 0; i < n; i++) {
		unsigned r = (unsigned)((urand() + 1) * 32768);

		h[i] = (uint8_t)((r & 0x80) | ((5 + ((r >> 3) & 3)) << 3) | (r & 7));
	}
	return h;
}

static double
from_e4m3(uint8_t x)
{
	int e = (x >> 3) & 15, m = x & 7;
	double v = e ? ldexp(1 + m / 8.0, e - 7) : ldexp(m / 8.0, -6);

	return x & 0x80 ? -v : v;
}

/* C = A @ B^T -> bf16 over e4m3 A (M x K) and BT (N x K): gemm_fp8. */
static int
run_fp8_gemm(const char *path, const char *name, int M, int N, int K)
{
	uint8_t *A = random_e4m3((size_t)M * K), *BT = random_e4m3((size_t)N * K);
	tlxrt_ptr da = dalloc((size_t)M * K, 1), db = dalloc((size_t)N * K, 1),
		  dc = dalloc((size_t)M * N, 2);
	int64_t sa[2] = { M, K }, sb[2] = { N, K }, sc[2] = { M, N };
	double *ref = hmalloc((size_t)M * N * sizeof *ref);
	tlxrt_module *m;
	tlxrt_kernel *k = kernel(path, name, &m);
	tlxrt_arg a[6];
	uint16_t *C;
	float ms, dec[256], *fa = hmalloc((size_t)M * K * sizeof *fa),
		  *fb = hmalloc((size_t)N * K * sizeof *fb);
	int i, q;

	upload(da, A, (size_t)M * K);
	upload(db, BT, (size_t)N * K);
	a[0] = tlxrt_arg_tensor(da, TLXRT_F8E4M3, 2, sa, NULL);
	a[1] = tlxrt_arg_tensor(db, TLXRT_F8E4M3, 2, sb, NULL);
	a[2] = tlxrt_arg_tensor(dc, TLXRT_BF16, 2, sc, NULL);
	a[3] = tlxrt_arg_i32(M);
	a[4] = tlxrt_arg_i32(N);
	a[5] = tlxrt_arg_i32(K);
	ms = launch(k, a, 6);
	C = download(dc, (size_t)M * N, 2);
	for (q = 0; q < 256; q++)
		dec[q] = (float)from_e4m3((uint8_t)q);
	for (i = 0; i < M * K; i++)
		fa[i] = dec[A[i]];
	for (i = 0; i < N * K; i++)
		fb[i] = dec[BT[i]];
	dot_rows(ref, fa, fb, M, N, K);
	/* Hopper's tensor cores add 8-bit products into a sum of about 14
	 * mantissa bits, not f32 (the simulator's is exact): errors grow
	 * with K, up to 0.5 at K = 1008 on the H200.  A k32 step lost or
	 * doubled is off by tens. */
	return check_gemm_tol(name, C, ref, M, N, K / 512.0 + 0.05, ms);
}

/* A grouped GEMM (gemm_grouped): G groups of rows 0 to mmax (about one in
 * eight empty), each rows x K times its own K x N weights. */
static int
run_grouped(const char *path, const char *name, int G, int N, int K, int mmax,
	    int BM, int BN)
{
	int *offs = hmalloc((size_t)(G + 1) * sizeof *offs);
	int *tstart = hmalloc((size_t)(G + 1) * sizeof *tstart);
	int g, rows, tn = (N + BN - 1) / BN;
	uint16_t *A, *B, *C;
	double *ref;
	float *bt, *fa;
	tlxrt_ptr da, db, dc, doffs, dts;
	int64_t sa[2], sb[2];
	tlxrt_module *m;
	tlxrt_kernel *k = kernel(path, name, &m);
	tlxrt_arg a[10];
	float ms;
	size_t i;
	int j, q;

	offs[0] = tstart[0] = 0;
	for (g = 0; g < G; g++) {
		rows = urand() < -0.75 ? 0
			: (int)((urand() + 1) / 2 * (mmax + 1));
		rows = rows > mmax ? mmax : rows;
		offs[g + 1] = offs[g] + rows;
		tstart[g + 1] = tstart[g] + (rows + BM - 1) / BM * tn;
	}
	rows = offs[G] > 0 ? offs[G] : 1;
	A = random_bf16((size_t)rows * K, 1, 0);
	B = random_bf16((size_t)G * K * N, 1, 0);
	da = dalloc((size_t)rows * K, 2);
	db = dalloc((size_t)G * K * N, 2);
	dc = dalloc((size_t)rows * N, 2);
	doffs = dalloc((size_t)G + 1, 4);
	dts = dalloc((size_t)G + 1, 4);
	upload(da, A, (size_t)rows * K * 2);
	upload(db, B, (size_t)G * K * N * 2);
	upload(doffs, offs, (size_t)(G + 1) * 4);
	upload(dts, tstart, (size_t)(G + 1) * 4);
	sa[0] = rows;
	sa[1] = K;
	sb[0] = (int64_t)G * K;
	sb[1] = N;
	a[0] = tlxrt_arg_tensor(da, TLXRT_BF16, 2, sa, NULL);
	a[1] = tlxrt_arg_tensor(db, TLXRT_BF16, 2, sb, NULL);
	a[2] = tlxrt_arg_ptr(dc);
	a[3] = tlxrt_arg_ptr(doffs);
	a[4] = tlxrt_arg_ptr(dts);
	a[5] = tlxrt_arg_i32(G);
	a[6] = tlxrt_arg_i32(tstart[G]);
	a[7] = tlxrt_arg_i32(N);
	a[8] = tlxrt_arg_i32(K);
	ms = launch(k, a, 9);
	C = download(dc, (size_t)rows * N, 2);
	/* the reference, group by group: C_g = A_g @ B_g in double */
	ref = hmalloc((size_t)rows * N * sizeof *ref);
	bt = hmalloc((size_t)K * N * sizeof *bt);
	fa = hmalloc((size_t)rows * K * sizeof *fa);
	for (i = 0; i < (size_t)rows * K; i++)
		fa[i] = from_bf16(A[i]);
	for (g = 0; g < G; g++) {
		for (q = 0; q < K; q++)
			for (j = 0; j < N; j++)
				bt[(size_t)j * K + q] =
					from_bf16(B[((size_t)g * K + q) * N + j]);
		dot_rows(ref + (size_t)offs[g] * N, fa + (size_t)offs[g] * K, bt,
			 offs[g + 1] - offs[g], N, K);
	}
	if (offs[G] == 0) {  /* no rows: C keeps its poison */
		printf("ok: %s with no rows\n", name);
		return 0;
	}
	return check_gemm(name, C, ref, offs[G], N, K, ms);
}

/* A grouped GEMM over K (gemm_grouped_k): G groups of 0 to kmax columns
 * of A (multiples of BK, about one in eight empty), C_g = A[:, K_g] @
 * B[K_g, :], each M x N; the groups handed out the largest K first. */
static int
run_grouped_k(const char *path, const char *name, int G, int M, int N, int kmax,
	      int BK)
{
	int *koffs = hmalloc((size_t)(G + 1) * sizeof *koffs);
	int *order = hmalloc((size_t)(G + 1) * sizeof *order);
	int g, kt, kg, kmx = 1, x;
	uint16_t *A, *B, *C;
	double *ref;
	float *fa, *bt;
	tlxrt_ptr da, db, dc, dk, dord;
	int64_t sa[2], sb[2];
	tlxrt_module *m;
	tlxrt_kernel *k = kernel(path, name, &m);
	tlxrt_arg a[8];
	float ms;
	int i, j, q;

	koffs[0] = 0;
	for (g = 0; g < G; g++) {
		kg = urand() < -0.75 ? 0
			: (int)((urand() + 1) / 2 * (kmax / BK + 1)) * BK;
		kg = kg > kmax ? kmax / BK * BK : kg;
		kmx = kg > kmx ? kg : kmx;
		koffs[g + 1] = koffs[g] + kg;
	}
	/* the order: by K, largest first (insertion sort, stable) */
	for (g = 0; g < G; g++) {
		kg = koffs[g + 1] - koffs[g];
		for (x = g; x > 0 && koffs[order[x - 1] + 1] - koffs[order[x - 1]] < kg; x--)
			order[x] = order[x - 1];
		order[x] = g;
	}
	kt = koffs[G] > 0 ? koffs[G] : BK;
	A = random_bf16((size_t)M * kt, 1, 0);
	B = random_bf16((size_t)kt * N, 1, 0);
	da = dalloc((size_t)M * kt, 2);
	db = dalloc((size_t)kt * N, 2);
	dc = dalloc((size_t)G * M * N, 2);
	dk = dalloc((size_t)G + 1, 4);
	dord = dalloc((size_t)G + 1, 4);
	upload(da, A, (size_t)M * kt * 2);
	upload(db, B, (size_t)kt * N * 2);
	upload(dk, koffs, (size_t)(G + 1) * 4);
	upload(dord, order, (size_t)G * 4);
	sa[0] = M;
	sa[1] = kt;
	sb[0] = kt;
	sb[1] = N;
	a[0] = tlxrt_arg_tensor(da, TLXRT_BF16, 2, sa, NULL);
	a[1] = tlxrt_arg_tensor(db, TLXRT_BF16, 2, sb, NULL);
	a[2] = tlxrt_arg_ptr(dc);
	a[3] = tlxrt_arg_ptr(dk);
	a[4] = tlxrt_arg_ptr(dord);
	a[5] = tlxrt_arg_i32(G);
	a[6] = tlxrt_arg_i32(M);
	a[7] = tlxrt_arg_i32(N);
	ms = launch(k, a, 8);
	C = download(dc, (size_t)G * M * N, 2);
	/* the reference, group by group, in double (an empty group: zeros) */
	ref = hmalloc((size_t)G * M * N * sizeof *ref);
	fa = hmalloc((size_t)M * kmx * sizeof *fa);
	bt = hmalloc((size_t)N * kmx * sizeof *bt);
	for (g = 0; g < G; g++) {
		kg = koffs[g + 1] - koffs[g];
		for (i = 0; i < M; i++)
			for (q = 0; q < kg; q++)
				fa[(size_t)i * kg + q] =
					from_bf16(A[(size_t)i * kt + koffs[g] + q]);
		for (q = 0; q < kg; q++)
			for (j = 0; j < N; j++)
				bt[(size_t)j * kg + q] =
					from_bf16(B[((size_t)koffs[g] + q) * N + j]);
		dot_rows(ref + (size_t)g * M * N, fa, bt, M, N, kg);
	}
	return check_gemm(name, C, ref, G * M, N, kmx, ms);
}

/* attention_fwd: Z x H query heads of SQ rows, Z x HKV key/value heads
 * of SK rows, head dim D; O (bf16) and the log-sum-exp (f32) of every
 * query row against a double-precision reference, over bf16 inputs
 * uniform in [-2, 2) (scores of a few units: the softmax is neither flat
 * nor one-hot).  The kernel rounds P to bf16 before P V: O is checked to
 * 2^-7 relative plus 2^-8 absolute, the log-sum-exp to 1e-4 (x + 1). */
static int
run_attention(const char *path, const char *name, int Z, int H, int HKV,
	      int SQ, int SK, int D, int causal)
{
	size_t nq = (size_t)Z * H * SQ, nk = (size_t)Z * HKV * SK;
	uint16_t *Q = random_bf16(nq * D, 2, 0), *K = random_bf16(nk * D, 2, 0),
		 *V = random_bf16(nk * D, 2, 0), *O;
	tlxrt_ptr dq = dalloc(nq * D, 2), dk = dalloc(nk * D, 2),
		  dv = dalloc(nk * D, 2), dout = dalloc(nq * D, 2),
		  dl = dalloc(nq, 4);
	int64_t sq[2] = { (int64_t)nq, D }, sk[2] = { (int64_t)nk, D };
	double scale = 1 / sqrt((double)D), *s = hmalloc((size_t)SK * sizeof *s);
	double *o = hmalloc((size_t)D * sizeof *o);
	tlxrt_module *m;
	tlxrt_kernel *k = kernel(path, name, &m);
	tlxrt_arg a[11];
	Err e = { 0 }, el = { 0 };
	float ms, *lse;
	char what[96];
	int z, h, r, j, d;

	upload(dq, Q, nq * D * 2);
	upload(dk, K, nk * D * 2);
	upload(dv, V, nk * D * 2);
	a[0] = tlxrt_arg_tensor(dq, TLXRT_BF16, 2, sq, NULL);
	a[1] = tlxrt_arg_tensor(dk, TLXRT_BF16, 2, sk, NULL);
	a[2] = tlxrt_arg_tensor(dv, TLXRT_BF16, 2, sk, NULL);
	a[3] = tlxrt_arg_ptr(dout);
	a[4] = tlxrt_arg_ptr(dl);
	a[5] = tlxrt_arg_i32(Z);
	a[6] = tlxrt_arg_i32(H);
	a[7] = tlxrt_arg_i32(HKV);
	a[8] = tlxrt_arg_i32(SQ);
	a[9] = tlxrt_arg_i32(SK);
	a[10] = tlxrt_arg_f32((float)scale);
	ms = launch(k, a, 11);
	O = download(dout, nq * D, 2);
	lse = download(dl, nq, 4);
	for (z = 0; z < Z; z++)
		for (h = 0; h < H; h++)
			for (r = 0; r < SQ; r++) {
				size_t row = ((size_t)z * H + h) * SQ + r;
				size_t kv = ((size_t)z * HKV + h / (H / HKV)) * SK;
				int n = causal && r + 1 < SK ? r + 1 : SK;
				double mx = -INFINITY, sum = 0;

				for (j = 0; j < n; j++) {
					double x = 0;

					for (d = 0; d < D; d++)
						x += (double)from_bf16(Q[row * D + d]) *
						     from_bf16(K[(kv + j) * D + d]);
					s[j] = x * scale;
					mx = s[j] > mx ? s[j] : mx;
				}
				for (d = 0; d < D; d++)
					o[d] = 0;
				for (j = 0; j < n; j++) {
					double p = exp(s[j] - mx);

					sum += p;
					for (d = 0; d < D; d++)
						o[d] += p * from_bf16(V[(kv + j) * D + d]);
				}
				for (d = 0; d < D; d++)
					compare(&e, row * D + d, from_bf16(O[row * D + d]),
						o[d] / sum, 1.0 / 256, 1.0 / 128);
				compare(&el, row, lse[row], mx + log(sum), 1e-4,
					1e-4);
			}
	snprintf(what, sizeof what, "%s lse", name);
	if (el.bad) {
		report(what, &el, ms);
		return 1;
	}
	snprintf(what, sizeof what, "%s Z%d H%d/%d SQ%d SK%d D%d%s", name, Z, H,
		 HKV, SQ, SK, D, causal ? " causal" : "");
	return report(what, &e, ms);
}

static int
arg(char **argv, int argc, int i)
{
	return i < argc ? atoi(argv[i]) : 0;
}

int
main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "", *path = argc > 2 ? argv[2] : "";
	char why[256];
	int rc;

	if (argc < 4) {
		fprintf(stderr, "usage: examples_test KERNEL MODULE SIZES...\n");
		return 2;
	}
	if (tlxrt_device_open_errmsg(NULL, &dev, why, sizeof why) != TLXRT_OK) {
		printf("skipped: no device: %s\n", why);
		return 77;
	}
	if (!strcmp(what, "vadd") || !strcmp(what, "copy"))
		rc = run_vadd(path, arg(argv, argc, 3), !strcmp(what, "copy"));
	else if (!strcmp(what, "softmax") || !strcmp(what, "softmax_loop"))
		rc = run_softmax(path, what, arg(argv, argc, 3), arg(argv, argc, 4),
				 argc > 5 ? arg(argv, argc, 5) : arg(argv, argc, 4));
	else if (!strcmp(what, "layernorm") || !strcmp(what, "layernorm_loop"))
		rc = run_layernorm(path, what, arg(argv, argc, 3), arg(argv, argc, 4),
				   argc > 5 ? arg(argv, argc, 5) : arg(argv, argc, 4));
	else if (!strcmp(what, "matmul"))
		rc = run_matmul(path, arg(argv, argc, 3), arg(argv, argc, 4),
				arg(argv, argc, 5), arg(argv, argc, 4));
	else if (!strcmp(what, "matmul_pitch") && argc >= 7 &&
		 atoi(argv[6]) >= atoi(argv[4]))
		rc = run_matmul(path, arg(argv, argc, 3), arg(argv, argc, 4),
				arg(argv, argc, 5), arg(argv, argc, 6));
	else if (!strcmp(what, "gemm") && argc >= 7)
		rc = run_tma_gemm(path, argv[3], arg(argv, argc, 4),
				  arg(argv, argc, 5), arg(argv, argc, 6));
	else if (!strcmp(what, "gemm_bias") && argc >= 7)
		rc = run_tma_gemm_bias(path, argv[3], arg(argv, argc, 4),
				       arg(argv, argc, 5), arg(argv, argc, 6), true);
	else if (!strcmp(what, "grouped") && argc >= 8)
		/* grouped FILE KERNEL G N K MMAX [BM BN] */
		rc = run_grouped(path, argv[3], arg(argv, argc, 4),
				 arg(argv, argc, 5), arg(argv, argc, 6),
				 arg(argv, argc, 7),
				 argc > 8 ? arg(argv, argc, 8) : 128,
				 argc > 9 ? arg(argv, argc, 9) : 256);
	else if (!strcmp(what, "grouped_k") && argc >= 8)
		/* grouped_k FILE KERNEL G M N KMAX [BK] */
		rc = run_grouped_k(path, argv[3], arg(argv, argc, 4),
				   arg(argv, argc, 5), arg(argv, argc, 6),
				   arg(argv, argc, 7),
				   argc > 8 ? arg(argv, argc, 8) : 64);
	else if (!strcmp(what, "attention") && argc >= 10 &&
		 (arg(argv, argc, 4) <= 0 || arg(argv, argc, 5) <= 0 ||
		  arg(argv, argc, 4) % arg(argv, argc, 5))) {
		fprintf(stderr, "examples_test: attention needs H a multiple of "
			"HKV, both positive (H %d, HKV %d)\n", arg(argv, argc, 4),
			arg(argv, argc, 5));
		rc = 2;
	} else if (!strcmp(what, "attention") && argc >= 10)
		rc = run_attention(path, argc > 10 ? argv[10] : "attention_fwd",
				   arg(argv, argc, 3), arg(argv, argc, 4),
				   arg(argv, argc, 5), arg(argv, argc, 6),
				   arg(argv, argc, 7), arg(argv, argc, 8),
				   arg(argv, argc, 9));
	else if (!strcmp(what, "gemm_fp8") && argc >= 7)
		rc = run_fp8_gemm(path, argv[3], arg(argv, argc, 4),
				  arg(argv, argc, 5), arg(argv, argc, 6));
	else {
		fprintf(stderr, "examples_test: unknown kernel '%s'\n", what);
		rc = 2;
	}
	tlxrt_module_unload(loaded);
	tlxrt_device_close(dev);
	while (nowned)
		free(owned[--nowned]);
	return rc;
}
