/*
 * bench_kernels: times tlx kernels on a GPU through libtlxrt (the cuda
 * backend): random inputs, a warm-up, then the median (and minimum) of
 * REPS launches timed with events.  One JSON object per line on stdout;
 * bench/run.py runs it beside the torch, cuBLAS and Triton baselines.
 *
 *   bench_kernels vadd|copy MODULE N [REPS]
 *   bench_kernels softmax|softmax_loop|layernorm|layernorm_loop MODULE ROWS COLS [REPS]
 *       (BENCH_PITCH=P: rows P elements apart instead of COLS)
 *   bench_kernels matmul MODULE M N K [REPS]
 *   bench_kernels gemm MODULE KERNEL M N K [REPS]   (a, b, c: tma<bf16, 2>)
 *   bench_kernels gemm_bias MODULE KERNEL M N K [REPS]   (gemm's, + bias: *f32)
 *   bench_kernels gemm_fp8 MODULE KERNEL M N K [REPS]
 *                                (a, bt: tma<f8e4m3, 2>, bt = B^T; c: bf16)
 *   bench_kernels grouped MODULE KERNEL N K BM BN ROWS [REPS]
 *                                (gemm_grouped; ROWS: each group's rows,
 *                                comma-separated)
 *   bench_kernels grouped_k MODULE KERNEL M N KS [REPS]
 *                                (gemm_grouped_k; KS: each group's K,
 *                                comma-separated)
 *
 * Bytes count every input read once and every output written once;
 * flops count 2*M*N*K for a GEMM.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tlx/tlxrt.h"

static tlxrt_device *dev;

static void
check(int rc, const char *what)
{
	if (rc == TLXRT_OK)
		return;
	fprintf(stderr, "bench_kernels: %s: %s: %s\n", what, tlxrt_errstr(rc),
		tlxrt_errmsg(dev));
	exit(1);
}

/* A device buffer of random values in [-1, 1): f32 or bf16. */
static tlxrt_ptr
random_buffer(size_t n, int bf16)
{
	size_t esz = bf16 ? 2 : 4, i;
	unsigned char *h = malloc(n * esz);
	uint64_t s = 0x2545f4914f6cdd1dull ^ n;
	tlxrt_ptr p;

	if (!h) {
		fprintf(stderr, "bench_kernels: out of host memory\n");
		exit(1);
	}
	for (i = 0; i < n; i++) {
		float f;
		uint32_t u;

		s ^= s << 13;
		s ^= s >> 7;
		s ^= s << 17;
		f = (float)((double)(s >> 11) / 4503599627370496.0 - 1);
		memcpy(&u, &f, 4);
		if (bf16) {
			uint16_t b = (uint16_t)((u + 0x7fff + ((u >> 16) & 1)) >> 16);

			memcpy(h + i * 2, &b, 2);
		} else {
			memcpy(h + i * 4, &f, 4);
		}
	}
	check(tlxrt_malloc(dev, n * esz, &p), "malloc");
	check(tlxrt_memcpy_htod(dev, p, h, n * esz), "upload");
	free(h);
	return p;
}

/* n e4m3 bytes of magnitude 1/4 to 15/4 and random sign (no NaNs). */
static tlxrt_ptr
random_fp8(size_t n)
{
	unsigned char *h = malloc(n);
	uint64_t s = 0x9e3779b97f4a7c15ull ^ n;
	tlxrt_ptr p;
	size_t i;

	if (!h) {
		fprintf(stderr, "bench_kernels: out of host memory\n");
		exit(1);
	}
	for (i = 0; i < n; i++) {
		s ^= s << 13;
		s ^= s >> 7;
		s ^= s << 17;
		h[i] = (unsigned char)((s & 0x87) | ((5 + ((s >> 8) & 3)) << 3));
	}
	check(tlxrt_malloc(dev, n, &p), "malloc");
	check(tlxrt_memcpy_htod(dev, p, h, n), "upload");
	free(h);
	return p;
}

static int
cmp_float(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;

	return (x > y) - (x < y);
}

static void
bench(const char *name, const char *size, tlxrt_kernel *k,
      const tlxrt_arg *args, int nargs, int reps, double bytes, double flops)
{
	float *ms = calloc((size_t)reps, sizeof *ms);
	tlxrt_event *a, *b;
	int i;

	check(tlxrt_event_create(dev, &a), "event");
	check(tlxrt_event_create(dev, &b), "event");
	for (i = 0; i < 10; i++)  /* warm-up */
		check(tlxrt_launch(k, NULL, args, nargs), "launch");
	for (i = 0; i < reps; i++) {
		check(tlxrt_event_record(a, NULL), "record");
		check(tlxrt_launch(k, NULL, args, nargs), "launch");
		check(tlxrt_event_record(b, NULL), "record");
		check(tlxrt_event_synchronize(b), "synchronize");
		check(tlxrt_event_elapsed_ms(a, b, &ms[i]), "elapsed");
	}
	qsort(ms, (size_t)reps, sizeof *ms, cmp_float);
	printf("{\"kernel\": \"%s\", \"size\": \"%s\", \"ms\": %.5f, "
	       "\"ms_min\": %.5f, \"TBps\": %.4f, \"TFLOPs\": %.2f}\n", name,
	       size, ms[reps / 2], ms[0], bytes / ms[reps / 2] / 1e9,
	       flops / ms[reps / 2] / 1e9);
	fflush(stdout);
	tlxrt_event_destroy(a);
	tlxrt_event_destroy(b);
	free(ms);
}

int
main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "";
	tlxrt_module *m;
	tlxrt_kernel *k;
	tlxrt_arg a[12];
	char size[64];
	int reps;

	if (argc < 4) {
		fprintf(stderr, "usage: bench_kernels KERNEL MODULE SIZES... [REPS]\n");
		return 2;
	}
	check(tlxrt_device_open(NULL, &dev), "opening the device");
	check(tlxrt_module_load_file(dev, argv[2], &m), "loading the module");
	if (!strcmp(what, "vadd") || !strcmp(what, "copy")) {
		int n = atoi(argv[3]), copy = !strcmp(what, "copy"), na = 0;

		reps = argc > 4 ? atoi(argv[4]) : 50;
		check(tlxrt_kernel_get(m, what, &k), "kernel");
		a[na++] = tlxrt_arg_ptr(random_buffer((size_t)n, 0));
		if (!copy)
			a[na++] = tlxrt_arg_ptr(random_buffer((size_t)n, 0));
		a[na++] = tlxrt_arg_ptr(random_buffer((size_t)n, 0));
		a[na++] = tlxrt_arg_i32(n);
		snprintf(size, sizeof size, "%d", n);
		bench(what, size, k, a, na, reps, (copy ? 2.0 : 3.0) * 4 * n, 0);
	} else if (!strcmp(what, "softmax") || !strcmp(what, "softmax_loop") ||
		   !strcmp(what, "layernorm") || !strcmp(what, "layernorm_loop")) {
		int r = atoi(argv[3]), c = argc > 4 ? atoi(argv[4]) : 0, ln;
		/* BENCH_PITCH: a row stride other than the width (elements) */
		int pitch = getenv("BENCH_PITCH") ? atoi(getenv("BENCH_PITCH")) : c;
		size_t n;

		pitch = pitch > c ? pitch : c;
		n = (size_t)r * pitch;

		ln = !strncmp(what, "layernorm", 9);
		reps = argc > 5 ? atoi(argv[5]) : 50;
		check(tlxrt_kernel_get(m, what, &k), "kernel");
		a[0] = tlxrt_arg_ptr(random_buffer(n, 1));
		if (ln) {
			a[1] = tlxrt_arg_ptr(random_buffer((size_t)c, 1));
			a[2] = tlxrt_arg_ptr(random_buffer((size_t)c, 1));
		}
		a[ln ? 3 : 1] = tlxrt_arg_ptr(random_buffer(n, 1));
		a[ln ? 4 : 2] = tlxrt_arg_i32(r);
		a[ln ? 5 : 3] = tlxrt_arg_i32(c);
		a[ln ? 6 : 4] = tlxrt_arg_i32(pitch);
		if (ln)
			a[7] = tlxrt_arg_f32(1e-5f);
		snprintf(size, sizeof size, "%dx%d", r, c);
		bench(what, size, k, a, ln ? 8 : 5, reps, 2.0 * 2 * (double)r * c, 0);
	} else if (!strcmp(what, "matmul")) {
		int M = atoi(argv[3]), N = argc > 4 ? atoi(argv[4]) : 0,
		    K = argc > 5 ? atoi(argv[5]) : 0;

		reps = argc > 6 ? atoi(argv[6]) : 20;
		check(tlxrt_kernel_get(m, "matmul", &k), "kernel");
		a[0] = tlxrt_arg_ptr(random_buffer((size_t)M * K, 1));
		a[1] = tlxrt_arg_ptr(random_buffer((size_t)K * N, 1));
		a[2] = tlxrt_arg_ptr(random_buffer((size_t)M * N, 1));
		a[3] = tlxrt_arg_i32(M);
		a[4] = tlxrt_arg_i32(N);
		a[5] = tlxrt_arg_i32(K);
		a[6] = tlxrt_arg_i32(K);
		a[7] = tlxrt_arg_i32(1);
		a[8] = tlxrt_arg_i32(N);
		a[9] = tlxrt_arg_i32(1);
		a[10] = tlxrt_arg_i32(N);
		a[11] = tlxrt_arg_i32(1);
		snprintf(size, sizeof size, "%dx%dx%d", M, N, K);
		bench("matmul", size, k, a, 12, reps,
		      2.0 * ((double)M * K + (double)K * N + (double)M * N),
		      2.0 * M * N * K);
	} else if ((!strcmp(what, "gemm") || !strcmp(what, "gemm_fp8") ||
		    !strcmp(what, "gemm_bias")) && argc > 6) {
		int M = atoi(argv[4]), N = atoi(argv[5]), K = atoi(argv[6]);
		int f8 = !strcmp(what, "gemm_fp8");  /* a, bt: e4m3, bt N x K */
		int64_t sa[2] = { M, K }, sb[2] = { K, N }, sbt[2] = { N, K },
			sc[2] = { M, N };

		reps = argc > 7 ? atoi(argv[7]) : 20;
		check(tlxrt_kernel_get(m, argv[3], &k), "kernel");
		a[0] = f8 ? tlxrt_arg_tensor(random_fp8((size_t)M * K),
					     TLXRT_F8E4M3, 2, sa, NULL)
			  : tlxrt_arg_tensor(random_buffer((size_t)M * K, 1),
					     TLXRT_BF16, 2, sa, NULL);
		a[1] = f8 ? tlxrt_arg_tensor(random_fp8((size_t)N * K),
					     TLXRT_F8E4M3, 2, sbt, NULL)
			  : tlxrt_arg_tensor(random_buffer((size_t)K * N, 1),
					     TLXRT_BF16, 2, sb, NULL);
		a[2] = tlxrt_arg_tensor(random_buffer((size_t)M * N, 1),
					TLXRT_BF16, 2, sc, NULL);
		a[3] = tlxrt_arg_i32(M);
		a[4] = tlxrt_arg_i32(N);
		a[5] = tlxrt_arg_i32(K);
		a[6] = tlxrt_arg_ptr(random_buffer((size_t)N, 0));  /* a bias */
		snprintf(size, sizeof size, "%dx%dx%d", M, N, K);
		bench(argv[3], size, k, a, strcmp(what, "gemm_bias") ? 6 : 7, reps,
		      (f8 ? 1.0 : 2.0) * ((double)M * K + (double)K * N) +
		      2.0 * (double)M * N, 2.0 * M * N * K);
	} else if (!strcmp(what, "grouped") && argc > 8) {
		/* grouped MODULE KERNEL N K BM BN ROWS [REPS]: ROWS the groups'
		 * row counts, comma-separated (gemm_grouped's arguments) */
		int N = atoi(argv[4]), K = atoi(argv[5]), BM = atoi(argv[6]),
		    BN = atoi(argv[7]), G = 0, cap = 16, *offs, *ts, rows;
		const char *q = argv[8];
		int64_t sa[2], sb[2];
		tlxrt_ptr doffs, dts;

		offs = malloc((size_t)cap * sizeof *offs);
		ts = malloc((size_t)cap * sizeof *ts);
		if (!offs || !ts)
			check(TLXRT_NOMEM, "host memory");
		offs[0] = ts[0] = 0;
		while (*q) {
			if (G + 2 > cap) {
				cap *= 2;
				offs = realloc(offs, (size_t)cap * sizeof *offs);
				ts = realloc(ts, (size_t)cap * sizeof *ts);
				if (!offs || !ts)
					check(TLXRT_NOMEM, "host memory");
			}
			rows = atoi(q);
			offs[G + 1] = offs[G] + rows;
			ts[G + 1] = ts[G] + (rows + BM - 1) / BM * ((N + BN - 1) / BN);
			G++;
			q += strcspn(q, ",");
			q += *q == ',';
		}
		rows = offs[G] > 0 ? offs[G] : 1;
		reps = argc > 9 ? atoi(argv[9]) : 20;
		check(tlxrt_kernel_get(m, argv[3], &k), "kernel");
		sa[0] = rows;
		sa[1] = K;
		sb[0] = (int64_t)G * K;
		sb[1] = N;
		check(tlxrt_malloc(dev, (size_t)(G + 1) * 4, &doffs), "malloc");
		check(tlxrt_malloc(dev, (size_t)(G + 1) * 4, &dts), "malloc");
		check(tlxrt_memcpy_htod(dev, doffs, offs, (size_t)(G + 1) * 4), "upload");
		check(tlxrt_memcpy_htod(dev, dts, ts, (size_t)(G + 1) * 4), "upload");
		a[0] = tlxrt_arg_tensor(random_buffer((size_t)rows * K, 1),
					TLXRT_BF16, 2, sa, NULL);
		a[1] = tlxrt_arg_tensor(random_buffer((size_t)G * K * N, 1),
					TLXRT_BF16, 2, sb, NULL);
		a[2] = tlxrt_arg_ptr(random_buffer((size_t)rows * N, 1));
		a[3] = tlxrt_arg_ptr(doffs);
		a[4] = tlxrt_arg_ptr(dts);
		a[5] = tlxrt_arg_i32(G);
		a[6] = tlxrt_arg_i32(ts[G]);
		a[7] = tlxrt_arg_i32(N);
		a[8] = tlxrt_arg_i32(K);
		snprintf(size, sizeof size, "%dx(%d)x%dx%d", G, offs[G], N, K);
		bench(argv[3], size, k, a, 9, reps,
		      2.0 * ((double)offs[G] * K + (double)G * K * N +
			     (double)offs[G] * N),
		      2.0 * offs[G] * N * K);
		free(offs);
		free(ts);
	} else if (!strcmp(what, "grouped_k") && argc > 6) {
		/* grouped_k MODULE KERNEL M N KS [REPS]: KS the groups' K,
		 * comma-separated (gemm_grouped_k's arguments) */
		int M = atoi(argv[4]), N = atoi(argv[5]), G = 0, cap = 16, *koffs, kt;
		int *order, g, x, kg;
		const char *q = argv[6];
		int64_t sa[2], sb[2];
		tlxrt_ptr dk, dord;

		koffs = malloc((size_t)cap * sizeof *koffs);
		if (!koffs)
			check(TLXRT_NOMEM, "host memory");
		koffs[0] = 0;
		while (*q) {
			if (G + 2 > cap) {
				cap *= 2;
				koffs = realloc(koffs, (size_t)cap * sizeof *koffs);
				if (!koffs)
					check(TLXRT_NOMEM, "host memory");
			}
			koffs[G + 1] = koffs[G] + atoi(q);
			G++;
			q += strcspn(q, ",");
			q += *q == ',';
		}
		kt = koffs[G] > 0 ? koffs[G] : 1;
		/* the groups handed out the largest K first */
		order = malloc((size_t)(G + 1) * sizeof *order);
		if (!order)
			check(TLXRT_NOMEM, "host memory");
		for (g = 0; g < G; g++) {
			kg = koffs[g + 1] - koffs[g];
			for (x = g; x > 0 && koffs[order[x - 1] + 1] -
					      koffs[order[x - 1]] < kg; x--)
				order[x] = order[x - 1];
			order[x] = g;
		}
		reps = argc > 7 ? atoi(argv[7]) : 20;
		check(tlxrt_kernel_get(m, argv[3], &k), "kernel");
		sa[0] = M;
		sa[1] = kt;
		sb[0] = kt;
		sb[1] = N;
		check(tlxrt_malloc(dev, (size_t)(G + 1) * 4, &dk), "malloc");
		check(tlxrt_memcpy_htod(dev, dk, koffs, (size_t)(G + 1) * 4), "upload");
		check(tlxrt_malloc(dev, (size_t)(G + 1) * 4, &dord), "malloc");
		check(tlxrt_memcpy_htod(dev, dord, order, (size_t)G * 4), "upload");
		a[0] = tlxrt_arg_tensor(random_buffer((size_t)M * kt, 1),
					TLXRT_BF16, 2, sa, NULL);
		a[1] = tlxrt_arg_tensor(random_buffer((size_t)kt * N, 1),
					TLXRT_BF16, 2, sb, NULL);
		a[2] = tlxrt_arg_ptr(random_buffer((size_t)G * M * N, 1));
		a[3] = tlxrt_arg_ptr(dk);
		a[4] = tlxrt_arg_ptr(dord);
		a[5] = tlxrt_arg_i32(G);
		a[6] = tlxrt_arg_i32(M);
		a[7] = tlxrt_arg_i32(N);
		snprintf(size, sizeof size, "%dx%dx%dx(%d)", G, M, N, koffs[G]);
		bench(argv[3], size, k, a, 8, reps,
		      2.0 * ((double)M * koffs[G] + (double)koffs[G] * N +
			     (double)G * M * N),
		      2.0 * M * N * koffs[G]);
		free(koffs);
		free(order);
	} else {
		fprintf(stderr, "bench_kernels: unknown kernel '%s'\n", what);
		return 2;
	}
	tlxrt_module_unload(m);
	tlxrt_device_close(dev);
	return 0;
}
