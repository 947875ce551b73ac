/*
 * vadd_host: a host program written once against the public API
 * (tlx/tlxrt.h) that runs unchanged on the simulator and on a GPU.
 *
 *   vadd_host MODULE [DEVICE [N [REPEAT]]]
 *
 * MODULE is what tlxc made for vadd.tlx (a cubin or PTX that embeds the
 * IR; IR text works on the simulator only).  DEVICE is sim, cuda or
 * cuda:N; "" or absent means $TLXRT_DEVICE, else cuda when there is a GPU,
 * else sim.  Random inputs, an output poisoned with NaN, a double
 * precision reference; the grid comes from the kernel's grid function.
 * Prints the device, the result and the kernel time; exits 0 when every
 * element is right, 77 when the device cannot be opened.
 */
#include <math.h>
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
	printf("FAIL: %s: %s (code 0x%x): %s\n", what, tlxrt_errstr(rc), rc,
	       tlxrt_errmsg(dev));
	exit(1);
}

int
main(int argc, char **argv)
{
	const char *devname = argc > 2 && *argv[2] ? argv[2] : NULL;
	int n = argc > 3 ? atoi(argv[3]) : 1000003;
	int repeat = argc > 4 ? atoi(argv[4]) : 1, i, bad = 0, rc;
	size_t bytes = (size_t)n * sizeof(float);
	float *x = malloc(bytes), *y = malloc(bytes), *out = malloc(bytes);
	tlxrt_device_props props;
	tlxrt_ptr dx, dy, dout;
	tlxrt_module *m;
	tlxrt_kernel *k;
	tlxrt_event *t0, *t1;
	tlxrt_arg args[4];
	char why[256];
	uint32_t seed = 12345;
	float ms = 0;

	if (argc < 2 || n < 1 || !x || !y || !out) {
		fprintf(stderr, "usage: vadd_host MODULE [DEVICE [N [REPEAT]]]\n");
		return 2;
	}
	if (tlxrt_libversion_number() != TLXRT_VERSION_NUMBER) {
		printf("FAIL: header %d, library %d\n", TLXRT_VERSION_NUMBER,
		       tlxrt_libversion_number());
		return 1;
	}
	rc = tlxrt_device_open_errmsg(devname, &dev, why, sizeof why);
	if (rc != TLXRT_OK) {
		printf("skip: cannot open device '%s': %s\n",
		       devname ? devname : "(default)", why);
		return 77;
	}
	check(tlxrt_device_get_props(dev, &props), "props");
	for (i = 0; i < n; i++) {
		seed = seed * 1664525u + 1013904223u;
		x[i] = (float)(seed >> 8) / 16777216.0f * 2 - 1;
		seed = seed * 1664525u + 1013904223u;
		y[i] = (float)(seed >> 8) / 16777216.0f * 200 - 100;
	}
	check(tlxrt_malloc(dev, bytes, &dx), "malloc");
	check(tlxrt_malloc(dev, bytes, &dy), "malloc");
	check(tlxrt_malloc(dev, bytes, &dout), "malloc");
	check(tlxrt_memcpy_htod(dev, dx, x, bytes), "htod");
	check(tlxrt_memcpy_htod(dev, dy, y, bytes), "htod");
	check(tlxrt_memset(dev, dout, 0xff, bytes), "memset");  /* NaN */
	check(tlxrt_module_load_file(dev, argv[1], &m), "module load");
	check(tlxrt_kernel_get(m, "vadd", &k), "kernel");
	args[0] = tlxrt_arg_ptr(dx);
	args[1] = tlxrt_arg_ptr(dy);
	args[2] = tlxrt_arg_ptr(dout);
	args[3] = tlxrt_arg_i32(n);
	check(tlxrt_event_create(dev, &t0), "event");
	check(tlxrt_event_create(dev, &t1), "event");
	check(tlxrt_event_record(t0, NULL), "record");
	for (i = 0; i < repeat; i++)
		check(tlxrt_launch(k, NULL, args, 4), "launch");
	check(tlxrt_event_record(t1, NULL), "record");
	check(tlxrt_event_synchronize(t1), "sync");
	check(tlxrt_event_elapsed_ms(t0, t1, &ms), "elapsed");
	check(tlxrt_memcpy_dtoh(dev, out, dout, bytes), "dtoh");
	for (i = 0; i < n; i++) {
		double ref = (double)x[i] + (double)y[i];

		if (!(fabs(out[i] - ref) <= 1e-6 * fabs(ref) + 1e-30)) {
			if (bad++ < 5)
				printf("out[%d] = %g, expected %g\n", i, out[i],
				       ref);
		}
	}
	printf("%s: vadd of %d elements on %s (%s): %.3f ms per launch, "
	       "%.1f M elements/s\n", bad ? "FAIL" : "ok", n,
	       props.backend == TLXRT_BACKEND_SIM ? "sim" : "cuda", props.name,
	       ms / repeat, ms > 0 ? n * (double)repeat / ms / 1e3 : 0.0);
	tlxrt_event_destroy(t0);
	tlxrt_event_destroy(t1);
	check(tlxrt_free(dev, dx), "free");
	check(tlxrt_free(dev, dy), "free");
	check(tlxrt_free(dev, dout), "free");
	check(tlxrt_module_unload(m), "unload");
	check(tlxrt_device_close(dev), "close");
	free(x);
	free(y);
	free(out);
	return bad != 0;
}
