/*
 * oom_rt_test: allocation-failure injection for libtlxrt and the
 * simulator (the runtime's sources compiled in, as the library has them).
 * For N = 1, 2, ... until a run makes fewer than N allocations, a child
 * makes the N-th allocation from malloc and its kin fail
 * (tlx_alloc_fail_at, checking builds) and runs a whole session on the
 * sim backend: open, load vadd's IR, allocate, copy in, launch with the
 * grid function, copy out, check, free, unload, close.  Each call must
 * succeed or return TLXRT_NOMEM (the session stops there and releases what
 * it made); nothing may crash, and under LeakSanitizer nothing may leak.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "support/support.h"
#include "testsuite/unit/test.h"
#include "tlx/tlxrt.h"

extern int __lsan_do_recoverable_leak_check(void) __attribute__((weak));

enum { R_DONE = 0, R_NOMEM = 1, R_BAD = 2, N = 3000 };

static char *image;
static size_t image_size;

/* rc of one call: TLXRT_OK goes on, TLXRT_NOMEM stops the session, any
 * other status is a failure of the test. */
static bool
go(int rc, const char *what, long n, int *r)
{
	if (rc == TLXRT_OK)
		return true;
	if (rc == TLXRT_NOMEM) {
		*r = R_NOMEM;
	} else {
		fprintf(stderr, "allocation %ld failed: %s returned %d\n", n,
			what, rc);
		*r = R_BAD;
	}
	return false;
}

static int
session(long n)
{
	tlxrt_device *dev = NULL;
	tlxrt_module *m = NULL;
	tlxrt_kernel *k = NULL;
	tlxrt_ptr x = 0, y = 0, out = 0;
	float *hx = malloc(N * sizeof *hx), *hout = malloc(N * sizeof *hout);
	int r = R_DONE, i;

	for (i = 0; i < N; i++)
		hx[i] = (float)(i % 97) * 0.5f;
	tlx_alloc_fail_at(n);
	if (go(tlxrt_device_open("sim", &dev), "device_open", n, &r) &&
	    go(tlxrt_module_load(dev, image, image_size, &m), "module_load", n, &r) &&
	    go(tlxrt_kernel_get(m, "vadd", &k), "kernel_get", n, &r) &&
	    go(tlxrt_malloc(dev, N * 4, &x), "malloc", n, &r) &&
	    go(tlxrt_malloc(dev, N * 4, &y), "malloc", n, &r) &&
	    go(tlxrt_malloc(dev, N * 4, &out), "malloc", n, &r) &&
	    go(tlxrt_memcpy_htod(dev, x, hx, N * 4), "memcpy_htod", n, &r) &&
	    go(tlxrt_memcpy_htod(dev, y, hx, N * 4), "memcpy_htod", n, &r)) {
		tlxrt_arg args[4] = { tlxrt_arg_ptr(x), tlxrt_arg_ptr(y),
				      tlxrt_arg_ptr(out), tlxrt_arg_i32(N) };

		if (go(tlxrt_launch(k, NULL, args, 4), "launch", n, &r) &&
		    go(tlxrt_memcpy_dtoh(dev, hout, out, N * 4), "memcpy_dtoh",
		       n, &r))
			for (i = 0; i < N && r == R_DONE; i++)
				if (hout[i] != 2 * hx[i]) {
					fprintf(stderr, "allocation %ld failed: "
						"out[%d] = %g\n", n, i, hout[i]);
					r = R_BAD;
				}
	}
	if (r == R_BAD && dev)
		fprintf(stderr, "  %s\n", tlxrt_errmsg(dev));
	tlx_alloc_fail_at(0);
	if (dev) {
		tlxrt_free(dev, x);
		tlxrt_free(dev, y);
		tlxrt_free(dev, out);
	}
	tlxrt_module_unload(m);
	tlxrt_device_close(dev);
	free(hx);
	free(hout);
	return r;
}

static int
run_child(long n)
{
	pid_t pid;
	int st;

	fflush(stderr);
	if ((pid = fork()) < 0)
		return R_BAD;
	if (pid == 0) {
		int r = session(n);

		if (__lsan_do_recoverable_leak_check &&
		    __lsan_do_recoverable_leak_check()) {
			fprintf(stderr, "allocation %ld failed: memory leaked "
				"(above)\n", n);
			r = R_BAD;
		}
		_exit(r);
	}
	if (waitpid(pid, &st, 0) != pid)
		return R_BAD;
	if (WIFSIGNALED(st)) {
		fprintf(stderr, "allocation %ld failed: killed by signal %d\n", n,
			WTERMSIG(st));
		return R_BAD;
	}
	return WIFEXITED(st) && WEXITSTATUS(st) <= R_BAD ? WEXITSTATUS(st) : R_BAD;
}

int
main(int argc, char **argv)
{
	FILE *f;
	long n, bad = 0, size;
	int r = R_NOMEM;

	if (argc != 2 || !(f = fopen(argv[1], "rb"))) {
		fprintf(stderr, "usage: oom_rt_test VADD.tir\n");
		return 2;
	}
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	fseek(f, 0, SEEK_SET);
	image = malloc((size_t)size + 1);
	image_size = fread(image, 1, (size_t)size, f);
	fclose(f);
	for (n = 1; r != R_DONE && n < 100000; n++) {
		r = run_child(n);
		bad += r == R_BAD;
	}
	printf("%ld failure points, %ld bad\n", n - 2, bad);
	CHECK(r == R_DONE);
	test_failures += (int)bad;
	free(image);
	TEST_MAIN_END();
}
