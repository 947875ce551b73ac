/*
 * launch_cost: the host time of one launch of examples/vadd.tlx through
 * tlxrt_launch (the grid from the kernel's grid function, and given)
 * against a raw cuLaunchKernel of the same cubin's entry, in the same
 * process, on the same stream: issue 15's measure.  Prints one JSON line.
 *
 *   launch_cost CUBIN [N]
 *
 * Each figure is the median over 21 rounds of the mean host time of N
 * (default 2000) back-to-back launches, the rounds of the three ways
 * interleaved; the queue is drained between rounds.  Tiny launches (n =
 * 4096) so that the GPU never makes the host wait.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tlx/tlxrt.h"

typedef int (*ModuleLoad)(void **, const char *);
typedef int (*GetFunction)(void **, void *, const char *);
typedef int (*LaunchKernel)(void *, unsigned, unsigned, unsigned, unsigned,
			    unsigned, unsigned, unsigned, void *, void **,
			    void **);
typedef int (*CtxSync)(void);

static double
now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static void
check(int rc, const char *what, tlxrt_device *dev)
{
	if (rc) {
		fprintf(stderr, "launch_cost: %s: %s\n", what,
			dev ? tlxrt_errmsg(dev) : "failed");
		exit(1);
	}
}

static int
cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int
main(int argc, char **argv)
{
	enum { ROUNDS = 21, WAYS = 3 };
	int n = 4096, iters = argc > 2 ? atoi(argv[2]) : 2000, r, i, w;
	double t[WAYS][ROUNDS], med[WAYS];
	tlxrt_device *dev;
	tlxrt_module *m;
	tlxrt_kernel *k;
	tlxrt_ptr x, y, z;
	tlxrt_arg args[4];
	tlxrt_launch_config given = { { 4, 1, 1 }, { 0, 0, 0 }, NULL };
	void *cu, *mod, *fn;
	ModuleLoad load;
	GetFunction getf;
	LaunchKernel launch;
	CtxSync sync;
	uint64_t px, py, pz;
	int32_t pn = n;
	void *params[4] = { &px, &py, &pz, &pn };

	if (argc < 2) {
		fprintf(stderr, "usage: launch_cost CUBIN [N]\n");
		return 2;
	}
	check(tlxrt_device_open("cuda", &dev), "no GPU", NULL);
	check(tlxrt_module_load_file(dev, argv[1], &m), "load", dev);
	check(tlxrt_kernel_get(m, "vadd", &k), "kernel", dev);
	check(tlxrt_malloc(dev, (size_t)n * 4, &x), "malloc", dev);
	check(tlxrt_malloc(dev, (size_t)n * 4, &y), "malloc", dev);
	check(tlxrt_malloc(dev, (size_t)n * 4, &z), "malloc", dev);
	args[0] = tlxrt_arg_ptr(x);
	args[1] = tlxrt_arg_ptr(y);
	args[2] = tlxrt_arg_ptr(z);
	args[3] = tlxrt_arg_i32(n);
	/* the raw driver: the same cubin and entry (vadd has one by
	 * default), in tlxrt's context (current) */
	if (!(cu = dlopen("libcuda.so.1", RTLD_NOW)) ||
	    !(load = (ModuleLoad)dlsym(cu, "cuModuleLoad")) ||
	    !(getf = (GetFunction)dlsym(cu, "cuModuleGetFunction")) ||
	    !(launch = (LaunchKernel)dlsym(cu, "cuLaunchKernel")) ||
	    !(sync = (CtxSync)dlsym(cu, "cuCtxSynchronize"))) {
		fprintf(stderr, "launch_cost: no CUDA driver\n");
		return 1;
	}
	check(tlxrt_launch(k, NULL, args, 4), "launch", dev);  /* binds the context */
	check(tlxrt_device_synchronize(dev), "sync", dev);
	check(load(&mod, argv[1]), "cuModuleLoad", NULL);
	check(getf(&fn, mod, "vadd"), "cuModuleGetFunction", NULL);
	px = x;
	py = y;
	pz = z;
	for (r = 0; r < ROUNDS; r++)
		for (w = 0; w < WAYS; w++) {
			double t0 = now_us();

			for (i = 0; i < iters; i++) {
				if (w == 0)
					check(tlxrt_launch(k, NULL, args, 4), "launch", dev);
				else if (w == 1)
					check(tlxrt_launch(k, &given, args, 4), "launch", dev);
				else
					check(launch(fn, 4, 1, 1, 128, 1, 1, 0, NULL,
						     params, NULL), "cuLaunchKernel", NULL);
			}
			t[w][r] = (now_us() - t0) / iters;
			check(sync(), "cuCtxSynchronize", NULL);
		}
	for (w = 0; w < WAYS; w++) {
		qsort(t[w], ROUNDS, sizeof t[w][0], cmp);
		med[w] = t[w][ROUNDS / 2];
	}
	printf("{\"tlxrt_grid_fn_us\": %.3f, \"tlxrt_given_grid_us\": %.3f, "
	       "\"cuLaunchKernel_us\": %.3f, \"ratio_grid_fn\": %.3f, "
	       "\"ratio_given\": %.3f}\n", med[0], med[1], med[2],
	       med[0] / med[2], med[1] / med[2]);
	tlxrt_module_unload(m);
	tlxrt_device_close(dev);
	return 0;
}
