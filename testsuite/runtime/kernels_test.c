/*
 * kernels_test: runs the async test kernels through the public API and
 * checks their results against references computed on the host: random
 * inputs, outputs poisoned (NaN / 0xff bytes) before the launch, double
 * precision references.
 *
 *   kernels_test gemm FILE M N K [SEED]     warp-specialized TMA/pipe GEMM
 *   kernels_test sched FILE KIND GRID NTILES RESIDENT [SEED]
 *                                           each tile exactly once (in
 *                                           each of 2 launches), the
 *                                           same tiles for every task;
 *                                           FILE's schedule has KIND in
 *                                           place of static, or FILE is
 *                                           tlxc's output (KIND compiled)
 *   kernels_test cluster FILE CLUSTERS [SEED]  TMA multicast, remote arrive
 *
 * The device is $TLXRT_DEVICE or sim.  Prints one line and exits 0 when
 * the results are right.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tlx/tlxrt.h"

static tlxrt_device *dev;
static uint64_t rng = 88172645463325252ull;

static uint64_t
rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static double
urand(void)
{
	return (double)(rnd() >> 11) / 9007199254740992.0 * 2 - 1;
}

#define TRY(call)                                                              \
	do {                                                                   \
		int rc_ = (call);                                              \
		if (rc_ != TLXRT_OK) {                                         \
			printf("FAIL: %s: %s: %s\n", #call, tlxrt_errstr(rc_), \
			       tlxrt_errmsg(dev));                             \
			exit(1);                                               \
		}                                                              \
	} while (0)

/* f32 -> bf16, round to nearest even (finite inputs). */
static uint16_t
to_bf16(float f)
{
	uint32_t b;

	memcpy(&b, &f, 4);
	b += 0x7fff + ((b >> 16) & 1);
	return (uint16_t)(b >> 16);
}

static double
from_bf16(uint16_t h)
{
	uint32_t b = (uint32_t)h << 16;
	float f;

	memcpy(&f, &b, 4);
	return f;
}

static char *
read_file(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	char *s;
	long len;

	if (!f || fseek(f, 0, SEEK_END) || (len = ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET))
		return NULL;
	s = malloc((size_t)len + 1);
	if (s && fread(s, 1, (size_t)len, f) != (size_t)len) {
		free(s);
		s = NULL;
	}
	fclose(f);
	if (s)
		s[len] = 0;
	*n = (size_t)len;
	return s;
}

static tlxrt_ptr
dev_alloc(size_t bytes, const void *init, int fill)
{
	tlxrt_ptr p;

	TRY(tlxrt_malloc(dev, bytes, &p));
	if (init)
		TRY(tlxrt_memcpy_htod(dev, p, init, bytes));
	else
		TRY(tlxrt_memset(dev, p, fill, bytes));
	return p;
}

static int
gemm(const char *file, int M, int N, int K)
{
	int lda = (K + 7) / 8 * 8, ldb = (N + 7) / 8 * 8, i, j, k, bad = 0;
	uint16_t *a = calloc((size_t)M * lda, 2), *b = calloc((size_t)K * ldb, 2);
	float *c = malloc((size_t)M * N * 4);
	int64_t sa[2] = { M, K }, sta[2] = { lda, 1 };
	int64_t sb[2] = { K, N }, stb[2] = { ldb, 1 };
	tlxrt_ptr da, db, dc;
	tlxrt_module *m;
	tlxrt_kernel *kern;
	tlxrt_arg args[6];
	tlxrt_event *e0, *e1;
	double maxerr = 0;
	float ms = 0;

	for (i = 0; i < M * lda; i++)
		a[i] = to_bf16((float)urand());
	for (i = 0; i < K * ldb; i++)
		b[i] = to_bf16((float)urand());
	da = dev_alloc((size_t)M * lda * 2, a, 0);
	db = dev_alloc((size_t)K * ldb * 2, b, 0);
	dc = dev_alloc((size_t)M * N * 4, NULL, 0xff);  /* NaN */
	TRY(tlxrt_module_load_file(dev, file, &m));
	TRY(tlxrt_kernel_get(m, "gemm", &kern));
	args[0] = tlxrt_arg_tensor(da, TLXRT_BF16, 2, sa, sta);
	args[1] = tlxrt_arg_tensor(db, TLXRT_BF16, 2, sb, stb);
	args[2] = tlxrt_arg_ptr(dc);
	args[3] = tlxrt_arg_i32(M);
	args[4] = tlxrt_arg_i32(N);
	args[5] = tlxrt_arg_i32(K);
	TRY(tlxrt_event_create(dev, &e0));
	TRY(tlxrt_event_create(dev, &e1));
	TRY(tlxrt_event_record(e0, NULL));
	TRY(tlxrt_launch(kern, NULL, args, 6));
	TRY(tlxrt_event_record(e1, NULL));
	TRY(tlxrt_event_synchronize(e1));
	TRY(tlxrt_event_elapsed_ms(e0, e1, &ms));
	tlxrt_event_destroy(e0);
	tlxrt_event_destroy(e1);
	TRY(tlxrt_memcpy_dtoh(dev, c, dc, (size_t)M * N * 4));
	for (i = 0; i < M; i++)
		for (j = 0; j < N; j++) {
			double ref = 0, mag = 0, err;

			for (k = 0; k < K; k++) {
				double p = from_bf16(a[i * lda + k]) *
					   from_bf16(b[k * ldb + j]);

				ref += p;
				mag += fabs(p);
			}
			err = fabs(c[i * N + j] - ref);
			if (!(err <= 1e-6 * mag + 1e-6)) {
				if (bad++ < 5)
					printf("c[%d][%d] = %g, expected %g\n", i,
					       j, c[i * N + j], ref);
			}
			if (err > maxerr)
				maxerr = err;
		}
	printf("%s: gemm %dx%dx%d: %s (max error %.3g, %.1f ms)\n",
	       bad ? "FAIL" : "ok", M, N, K, bad ? "wrong" : "right", maxerr,
	       ms);
	tlxrt_free(dev, da);
	tlxrt_free(dev, db);
	tlxrt_free(dev, dc);
	tlxrt_module_unload(m);
	free(a);
	free(b);
	free(c);
	return bad != 0;
}

static int
sched(const char *file, const char *kind, int grid, int ntiles)
{
	size_t n;
	char *text = read_file(file, &n), *at, *img;
	int *hits = malloc((size_t)ntiles * 4), *sums = malloc((size_t)grid * 8);
	tlxrt_ptr dh, ds;
	tlxrt_module *m;
	tlxrt_kernel *k;
	tlxrt_launch_config cfg = { { (uint32_t)grid, 1, 1 }, { 0, 0, 0 }, NULL };
	tlxrt_arg args[3];
	long total = 0;
	int i, bad = 0, ran = 0;

	if (!text) {
		printf("FAIL: cannot read %s\n", file);
		return 1;
	}
	if (strcmp(kind, "compiled") == 0) {
		/* tlxc's output: the schedule already lowered */
		img = NULL;
		TRY(tlxrt_module_load(dev, text, n, &m));
	} else if ((at = strstr(text, "kind = static"))) {
		/* the same module with the schedule kind replaced */
		img = malloc(n + 16);
		snprintf(img, n + 16, "%.*skind = %s%s", (int)(at - text), text,
			 kind, at + strlen("kind = static"));
		TRY(tlxrt_module_load(dev, img, strlen(img), &m));
	} else {
		printf("FAIL: %s has no static schedule\n", file);
		return 1;
	}
	TRY(tlxrt_kernel_get(m, "sched", &k));
	dh = dev_alloc((size_t)(ntiles > 0 ? ntiles : 1) * 4, NULL, 0);
	ds = dev_alloc((size_t)grid * 8, NULL, 0xff);  /* -1 */
	args[0] = tlxrt_arg_ptr(dh);
	args[1] = tlxrt_arg_ptr(ds);
	args[2] = tlxrt_arg_i32(ntiles);
	/* twice: the second launch must find its tiles again (a dynamic
	 * schedule's counter zeroed in between) */
	TRY(tlxrt_launch(k, &cfg, args, 3));
	memset(sums, 0xff, (size_t)grid * 8);
	TRY(tlxrt_memcpy_htod(dev, ds, sums, (size_t)grid * 8));
	TRY(tlxrt_launch(k, &cfg, args, 3));
	TRY(tlxrt_memcpy_dtoh(dev, hits, dh, (size_t)ntiles * 4));
	TRY(tlxrt_memcpy_dtoh(dev, sums, ds, (size_t)grid * 8));
	for (i = 0; i < ntiles; i++)
		if (hits[i] != 2 && bad++ < 5)
			printf("tile %d came %d times in 2 launches\n", i,
			       hits[i]);
	for (i = 0; i < grid; i++) {
		if (sums[i] != sums[grid + i] && bad++ < 5)
			printf("program %d: the tasks saw different tiles (sums "
			       "%d and %d)\n", i, sums[i], sums[grid + i]);
		if (sums[i] != -1) {
			total += sums[i];
			ran++;
		}
	}
	if (total != (long)ntiles * (ntiles - 1) / 2 && bad++ < 5)
		printf("the tiles add up to %ld\n", total);
	printf("%s: schedule %s, %d tiles over %d programs (%d ran)\n",
	       bad ? "FAIL" : "ok", kind, ntiles, grid, ran);
	tlxrt_free(dev, dh);
	tlxrt_free(dev, ds);
	tlxrt_module_unload(m);
	free(text);
	free(img);
	free(hits);
	free(sums);
	return bad != 0;
}

static int
cluster(const char *file, int nclusters)
{
	int rows = 16 * nclusters, i, j, bad = 0, grid = 2 * nclusters;
	float *a = malloc((size_t)rows * 16 * 4), *out = malloc((size_t)grid * 256 * 4);
	int64_t shape[2] = { rows, 16 };
	tlxrt_ptr da, dout;
	tlxrt_module *m;
	tlxrt_kernel *k;
	tlxrt_launch_config cfg = { { (uint32_t)grid, 1, 1 }, { 0, 0, 0 }, NULL };
	tlxrt_arg args[2];

	for (i = 0; i < rows * 16; i++)
		a[i] = (float)urand();
	da = dev_alloc((size_t)rows * 16 * 4, a, 0);
	dout = dev_alloc((size_t)grid * 256 * 4, NULL, 0xff);
	TRY(tlxrt_module_load_file(dev, file, &m));
	TRY(tlxrt_kernel_get(m, "mcast", &k));
	args[0] = tlxrt_arg_tensor(da, TLXRT_F32, 2, shape, NULL);
	args[1] = tlxrt_arg_ptr(dout);
	TRY(tlxrt_launch(k, &cfg, args, 2));
	TRY(tlxrt_memcpy_dtoh(dev, out, dout, (size_t)grid * 256 * 4));
	for (i = 0; i < grid; i++)
		for (j = 0; j < 256; j++)
			if (out[i * 256 + j] != a[(i / 2) * 256 + j] && bad++ < 5)
				printf("program %d element %d: %g, expected %g\n",
				       i, j, out[i * 256 + j],
				       a[(i / 2) * 256 + j]);
	printf("%s: multicast to %d clusters of 2\n", bad ? "FAIL" : "ok",
	       nclusters);
	tlxrt_free(dev, da);
	tlxrt_free(dev, dout);
	tlxrt_module_unload(m);
	free(a);
	free(out);
	return bad != 0;
}

int
main(int argc, char **argv)
{
	int rc;

	if (argc < 3) {
		fprintf(stderr, "usage: kernels_test gemm|sched|cluster FILE ...\n");
		return 2;
	}
	if ((rc = tlxrt_device_open(getenv("TLXRT_DEVICE") ? NULL : "sim",
				    &dev)) != TLXRT_OK) {
		printf("skip: no device (%s)\n", tlxrt_errstr(rc));
		return 77;
	}
	if (strcmp(argv[1], "gemm") == 0 && argc >= 6) {
		if (argc > 6)
			rng += strtoull(argv[6], NULL, 10);
		rc = gemm(argv[2], atoi(argv[3]), atoi(argv[4]), atoi(argv[5]));
	} else if (strcmp(argv[1], "sched") == 0 && argc >= 7) {
		TRY(tlxrt_device_set_option(dev, TLXRT_SIM_RESIDENT,
					    atoi(argv[6])));
		if (argc > 7)
			TRY(tlxrt_device_set_option(dev, TLXRT_SIM_SHUFFLE,
						    atoi(argv[7])));
		rc = sched(argv[2], argv[3], atoi(argv[4]), atoi(argv[5]));
	} else if (strcmp(argv[1], "cluster") == 0 && argc >= 4) {
		if (argc > 4)
			TRY(tlxrt_device_set_option(dev, TLXRT_SIM_SHUFFLE,
						    atoi(argv[4])));
		rc = cluster(argv[2], atoi(argv[3]));
	} else {
		fprintf(stderr, "kernels_test: bad arguments\n");
		rc = 2;
	}
	tlxrt_device_close(dev);
	return rc;
}
