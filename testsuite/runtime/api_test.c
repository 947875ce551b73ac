/*
 * api_test: the public API of libtlxrt on the sim backend -- versions,
 * status codes, devices and options, memory, modules and metadata,
 * streams and events, and what every function does with NULL handles and
 * bad arguments.  Usage: api_test INPUTS_DIR
 */
#include <stdlib.h>

#include "tlx/tlxrt.h"
#include "testsuite/unit/test.h"

static char path[1024];

static const char *
input(const char *dir, const char *name)
{
	snprintf(path, sizeof path, "%s/%s", dir, name);
	return path;
}

/* TLXRT_SIM_DEVICES: several simulated devices, "sim:N", each its own. */
static void
test_sim_devices(void)
{
	tlxrt_device *a, *b;
	tlxrt_device_props p;
	tlxrt_ptr x, y;
	char msg[256];
	int n = -1, v = 7, w = 0;

	unsetenv("TLXRT_SIM_DEVICES");
	ASSERT(TLXRT_OK, tlxrt_device_count("sim", &n));
	ASSERT(1, n);
	ASSERT(TLXRT_NODEVICE, tlxrt_device_count("tpu", &n));
	ASSERT(TLXRT_MISUSE, tlxrt_device_count("sim", NULL));
	ASSERT(TLXRT_OK, tlxrt_device_open("sim:0", &a));
	ASSERT(TLXRT_OK, tlxrt_device_close(a));
	ASSERT(TLXRT_NODEVICE, tlxrt_device_open_errmsg("sim:1", &a, msg,
							 sizeof msg));
	ASSERT_STR("no simulated device 1 (TLXRT_SIM_DEVICES is 1)", msg);
	setenv("TLXRT_SIM_DEVICES", "3", 1);
	ASSERT(TLXRT_OK, tlxrt_device_count("sim", &n));
	ASSERT(3, n);
	ASSERT(TLXRT_OK, tlxrt_device_open("sim:2", &a));
	ASSERT(TLXRT_OK, tlxrt_device_open("sim", &b));
	ASSERT(TLXRT_OK, tlxrt_device_get_props(a, &p));
	ASSERT(2, p.ordinal);
	ASSERT_STR("tlx simulator (sm_90)", p.name);
	ASSERT(TLXRT_OK, tlxrt_device_get_props(b, &p));
	ASSERT(0, p.ordinal);
	/* separate memories */
	ASSERT(TLXRT_OK, tlxrt_malloc(a, 4, &x));
	ASSERT(TLXRT_OK, tlxrt_malloc(b, 4, &y));
	ASSERT(TLXRT_OK, tlxrt_memcpy_htod(a, x, &v, 4));
	ASSERT(TLXRT_OK, tlxrt_memset(b, y, 0, 4));
	ASSERT(TLXRT_OK, tlxrt_memcpy_dtoh(a, &w, x, 4));
	ASSERT(7, w);
	ASSERT(TLXRT_OK, tlxrt_device_close(a));
	ASSERT(TLXRT_OK, tlxrt_device_close(b));
	ASSERT(TLXRT_NODEVICE, tlxrt_device_open_errmsg("sim:x", &a, msg,
							 sizeof msg));
	ASSERT_STR("bad device number 'x' in 'sim:x'", msg);
	setenv("TLXRT_SIM_DEVICES", "0", 1);
	ASSERT(TLXRT_INVALID_ARG, tlxrt_device_count("sim", &n));
	ASSERT(TLXRT_INVALID_ARG, tlxrt_device_open_errmsg("sim", &a, msg,
							    sizeof msg));
	ASSERT_STR("TLXRT_SIM_DEVICES='0' is not a valid value (1 to 64)", msg);
	unsetenv("TLXRT_SIM_DEVICES");
}

static void
test_basics(void)
{
	char msg[256];
	tlxrt_device *dev;

	ASSERT(TLXRT_VERSION_NUMBER, tlxrt_libversion_number());
	ASSERT_STR("not an error", tlxrt_errstr(TLXRT_OK));
	ASSERT_STR("CUDA driver error", tlxrt_errstr(TLXRT_CUDA | (700 << 8)));
	ASSERT_STR("kernel failed", tlxrt_errstr(TLXRT_LAUNCH));
	ASSERT_STR("unknown error", tlxrt_errstr(99));
	ASSERT_STR("no device", tlxrt_errmsg(NULL));
	ASSERT(TLXRT_MISUSE, tlxrt_device_open("sim", NULL));
	ASSERT(TLXRT_NODEVICE, tlxrt_device_open_errmsg("tpu", &dev, msg,
							 sizeof msg));
	CHECK(dev == NULL);
	ASSERT_STR("unknown device 'tpu' (use sim, sim:N, cuda or cuda:N)",
		   msg);
	ASSERT(TLXRT_NODEVICE, tlxrt_device_open_errmsg("cuda:x", &dev, msg,
							 sizeof msg));
	CHECK(strstr(msg, "cuda:x") != NULL || strstr(msg, "libcuda") != NULL);
	setenv("TLXRT_DEVICE", "sim", 1);
	ASSERT(TLXRT_OK, tlxrt_device_open(NULL, &dev));
	ASSERT(TLXRT_OK, tlxrt_device_close(dev));
	setenv("TLXRT_SIM_SHUFFLE", "banana", 1);
	ASSERT(TLXRT_INVALID_ARG, tlxrt_device_open_errmsg("sim", &dev, msg,
							    sizeof msg));
	ASSERT_STR("TLXRT_SIM_SHUFFLE='banana' is not a valid value", msg);
	unsetenv("TLXRT_SIM_SHUFFLE");
	unsetenv("TLXRT_DEVICE");
	test_sim_devices();
	ASSERT(TLXRT_OK, tlxrt_device_close(NULL));
	ASSERT_STR("float", strcmp(tlxrt_type_name(TLXRT_BF16), "bf16") == 0
				    ? "float" : "?");
	ASSERT(2, tlxrt_type_size(TLXRT_BF16));
	ASSERT(1, tlxrt_type_size(TLXRT_I1));
	ASSERT(0, tlxrt_type_size(99));
	ASSERT_STR("?", tlxrt_type_name(0));
}

static void
test_device_memory(tlxrt_device *dev)
{
	tlxrt_device_props p;
	tlxrt_ptr a, b;
	unsigned char in[100], out[100];
	int i;

	ASSERT(TLXRT_OK, tlxrt_device_get_props(dev, &p));
	ASSERT(TLXRT_BACKEND_SIM, p.backend);
	ASSERT(90, p.sm);
	ASSERT(232448, p.max_smem_per_block);
	ASSERT(8, p.max_cluster_size);
	ASSERT_STR("tlx simulator (sm_90)", p.name);
	ASSERT(TLXRT_MISUSE, tlxrt_device_get_props(NULL, &p));
	ASSERT(TLXRT_OK, tlxrt_device_set_option(dev, TLXRT_SIM_SM, 100));
	tlxrt_device_get_props(dev, &p);
	ASSERT(100, p.sm);
	ASSERT(TLXRT_INVALID_ARG, tlxrt_device_set_option(dev, TLXRT_SIM_SM, 80));
	ASSERT_STR("option 4: value 80 is out of range", tlxrt_errmsg(dev));
	ASSERT(TLXRT_INVALID_ARG, tlxrt_device_set_option(dev, 999, 1));
	ASSERT(TLXRT_OK, tlxrt_device_set_option(dev, TLXRT_SIM_SM, 90));
	ASSERT(TLXRT_OK, tlxrt_device_set_option(dev, TLXRT_SIM_SHUFFLE, -1));

	ASSERT(TLXRT_INVALID_ARG, tlxrt_malloc(dev, 0, &a));
	ASSERT(TLXRT_MISUSE, tlxrt_malloc(dev, 16, NULL));
	ASSERT(TLXRT_OK, tlxrt_malloc(dev, 100, &a));
	ASSERT(0, a % 256);
	ASSERT(TLXRT_OK, tlxrt_malloc(dev, 100, &b));
	CHECK(b - a >= (1 << 20));  /* guard gap */
	for (i = 0; i < 100; i++)
		in[i] = (unsigned char)(i * 7);
	ASSERT(TLXRT_OK, tlxrt_memcpy_htod(dev, a, in, 100));
	ASSERT(TLXRT_OK, tlxrt_memcpy_dtod(dev, b, a, 100));
	ASSERT(TLXRT_OK, tlxrt_memset(dev, b + 10, 0xab, 5));
	ASSERT(TLXRT_OK, tlxrt_memcpy_dtoh(dev, out, b, 100));
	CHECK(memcmp(in, out, 10) == 0 && out[10] == 0xab && out[14] == 0xab &&
	      memcmp(in + 15, out + 15, 85) == 0);
	ASSERT_STR("", tlxrt_errmsg(dev));
	ASSERT(TLXRT_INVALID_ARG, tlxrt_memcpy_htod(dev, a + 50, in, 51));
	ASSERT_STR("tlxrt_memcpy_htod: 51 bytes at 0x100000000032 are not "
		   "inside one allocation: the address runs 1 bytes past the "
		   "end of the 100-byte allocation at 0x100000000000",
		   tlxrt_errmsg(dev));
	ASSERT(TLXRT_INVALID_ARG, tlxrt_memcpy_dtoh(dev, out, 0x1000, 4));
	ASSERT(TLXRT_INVALID_ARG, tlxrt_memcpy_htod(dev, a, NULL, 4));
	ASSERT(TLXRT_OK, tlxrt_memcpy_htod(dev, a, NULL, 0));
	ASSERT(TLXRT_INVALID_ARG, tlxrt_memset(dev, b + 99, 0, 2));
	ASSERT(TLXRT_INVALID_ARG, tlxrt_memcpy_dtod(dev, a, b + 1, 100));
	ASSERT(TLXRT_OK, tlxrt_free(dev, 0));
	ASSERT(TLXRT_INVALID_ARG, tlxrt_free(dev, a + 4));
	ASSERT(TLXRT_OK, tlxrt_free(dev, a));
	ASSERT(TLXRT_INVALID_ARG, tlxrt_free(dev, a));
	ASSERT(TLXRT_INVALID_ARG, tlxrt_memcpy_dtoh(dev, out, a, 4));
	CHECK(strstr(tlxrt_errmsg(dev), "which was freed") != NULL);
	ASSERT(TLXRT_OK, tlxrt_free(dev, b));
	ASSERT(TLXRT_MISUSE, tlxrt_free(NULL, b));
}

static void
test_modules(tlxrt_device *dev, const char *dir)
{
	tlxrt_module *m;
	tlxrt_kernel *k, *k2;
	tlxrt_kernel_info ki;
	tlxrt_param_info pi;
	tlxrt_const_info ci;
	int n;

	ASSERT(TLXRT_INVALID_ARG, tlxrt_module_load(dev, NULL, 0, &m));
	CHECK(m == NULL);
	ASSERT(TLXRT_INVALID_ARG, tlxrt_module_load(dev, "garbage\x01", 8, &m));
	CHECK(strncmp(tlxrt_errmsg(dev), "cannot load the module: <module>:1:1:",
		      37) == 0);
	ASSERT(TLXRT_NOT_FOUND, tlxrt_module_load_file(dev, "/nonexistent", &m));
	ASSERT(TLXRT_OK, tlxrt_module_load_file(dev, input(dir, "gemm_ws.tir"),
						&m));
	ASSERT(TLXRT_OK, tlxrt_module_num_kernels(m, &n));
	ASSERT(1, n);
	ASSERT(TLXRT_INVALID_ARG, tlxrt_module_get_kernel(m, 1, &k));
	ASSERT(TLXRT_OK, tlxrt_module_get_kernel(m, 0, &k));
	ASSERT(TLXRT_OK, tlxrt_kernel_get(m, "gemm", &k2));
	CHECK(k == k2);
	ASSERT(TLXRT_NOT_FOUND, tlxrt_kernel_get(m, "gemm_grid", &k2));
	ASSERT_STR("no kernel 'gemm_grid' in the module (it has 'gemm')",
		   tlxrt_errmsg(dev));
	ASSERT(TLXRT_OK, tlxrt_kernel_get_info(k, &ki));
	ASSERT_STR("gemm", ki.name);
	ASSERT(6, ki.num_params);
	ASSERT(4, ki.warps);
	ASSERT(9, ki.total_warps);
	ASSERT(1, ki.cluster[0]);
	ASSERT(3 * 64 * 32 * 2 * 2, ki.smem_bytes);
	ASSERT(1, ki.has_grid);
	ASSERT(4, ki.num_consts);
	ASSERT(TLXRT_OK, tlxrt_kernel_get_param(k, 0, &pi));
	ASSERT_STR("a", pi.name);
	ASSERT(TLXRT_PARAM_TENSOR, pi.kind);
	ASSERT(TLXRT_BF16, pi.type);
	ASSERT(2, pi.rank);
	ASSERT(64, pi.box[0]);
	ASSERT(32, pi.box[1]);
	ASSERT(TLXRT_OK, tlxrt_kernel_get_param(k, 2, &pi));
	ASSERT(TLXRT_PARAM_POINTER, pi.kind);
	ASSERT(TLXRT_F32, pi.type);
	ASSERT(TLXRT_OK, tlxrt_kernel_get_param(k, 5, &pi));
	ASSERT_STR("K", pi.name);
	ASSERT(TLXRT_PARAM_SCALAR, pi.kind);
	ASSERT(TLXRT_INVALID_ARG, tlxrt_kernel_get_param(k, 6, &pi));
	ASSERT(TLXRT_OK, tlxrt_kernel_get_const(k, 3, &ci));
	ASSERT_STR("STAGES", ci.name);
	ASSERT(3, ci.i);
	ASSERT(0, ci.is_float);
	ASSERT(TLXRT_INVALID_ARG, tlxrt_kernel_get_const(k, 4, &ci));
	/* the device refuses to close while the module lives */
	ASSERT(TLXRT_MISUSE, tlxrt_device_close(dev));
	ASSERT(TLXRT_OK, tlxrt_module_unload(m));
	ASSERT(TLXRT_OK, tlxrt_module_unload(NULL));
	ASSERT(TLXRT_MISUSE, tlxrt_kernel_get_info(NULL, &ki));
	ASSERT(TLXRT_MISUSE, tlxrt_launch(NULL, NULL, NULL, 0));
	ASSERT(TLXRT_MISUSE, tlxrt_module_num_kernels(NULL, &n));
}

/* tlxrt_arg_tensor's contiguous strides of a shape too large wrap (they
 * overflowed int64_t, undefined behaviour, found by fuzz-args) and the
 * launch refuses them. */
static void
test_tensor_arg(tlxrt_device *dev, const char *dir)
{
	const int64_t huge[3] = { (int64_t)1 << 40, (int64_t)1 << 40,
				  (int64_t)1 << 40 };
	tlxrt_module *m;
	tlxrt_kernel *k;
	tlxrt_arg a = tlxrt_arg_tensor(256, TLXRT_BF16, 3, huge, NULL);

	ASSERT(1, a.v.tensor.strides[2]);
	ASSERT((int64_t)1 << 40, a.v.tensor.strides[1]);
	ASSERT(0, a.v.tensor.strides[0]);
	ASSERT(TLXRT_OK, tlxrt_module_load_file(dev, input(dir, "checks.tir"),
						&m));
	ASSERT(TLXRT_OK, tlxrt_kernel_get(m, "tmak", &k));
	ASSERT(TLXRT_INVALID_ARG, tlxrt_launch(k, NULL, &a, 1));
	CHECK(strncmp(tlxrt_errmsg(dev), "argument 1 ('a'): ", 18) == 0);
	ASSERT(TLXRT_OK, tlxrt_module_unload(m));
}

static void
test_streams(tlxrt_device *dev, const char *dir)
{
	tlxrt_device *other;
	tlxrt_stream *s, *s2, *w;
	tlxrt_event *e0, *e1;
	tlxrt_module *m;
	tlxrt_kernel *k;
	tlxrt_launch_config cfg = { { 0, 0, 0 }, { 0, 0, 0 }, NULL };
	tlxrt_ptr x;
	tlxrt_arg args[4];
	float v[8], ms = -1;
	uint64_t st0 = 0, st1 = 0, st2 = 0;
	int i;

	ASSERT(TLXRT_OK, tlxrt_device_open("sim", &other));
	ASSERT(TLXRT_OK, tlxrt_stream_create(dev, &s));
	ASSERT(TLXRT_OK, tlxrt_stream_create(other, &s2));
	ASSERT(TLXRT_OK, tlxrt_event_create(dev, &e0));
	ASSERT(TLXRT_OK, tlxrt_event_create(dev, &e1));
	ASSERT(TLXRT_MISUSE, tlxrt_event_synchronize(e0));
	ASSERT(TLXRT_MISUSE, tlxrt_event_elapsed_ms(e0, e1, &ms));
	ASSERT(TLXRT_MISUSE, tlxrt_event_record(e0, s2));
	ASSERT(TLXRT_OK, tlxrt_module_load_file(dev, input(dir, "vadd.tir"), &m));
	ASSERT(TLXRT_OK, tlxrt_kernel_get(m, "vadd", &k));
	ASSERT(TLXRT_OK, tlxrt_malloc(dev, sizeof v, &x));
	for (i = 0; i < 8; i++)
		v[i] = (float)i;
	ASSERT(TLXRT_OK, tlxrt_memcpy_htod(dev, x, v, sizeof v));
	args[0] = tlxrt_arg_ptr(x);
	args[1] = tlxrt_arg_ptr(x);
	args[2] = tlxrt_arg_ptr(x);
	args[3] = tlxrt_arg_i32(8);
	{
		/* the grid a launch would have; nothing runs, nothing read */
		tlxrt_arg fake[4] = { tlxrt_arg_ptr(256), tlxrt_arg_ptr(256),
				      tlxrt_arg_ptr(256), tlxrt_arg_i32(5000) };
		uint32_t g[3], c[3];

		ASSERT(TLXRT_OK, tlxrt_kernel_get_grid(k, NULL, fake, 4, g, c));
		ASSERT(5, (int)g[0]);
		ASSERT(1, (int)g[1]);
		ASSERT(1, (int)c[0]);
		fake[0] = tlxrt_arg_ptr(0);
		ASSERT(TLXRT_INVALID_ARG, tlxrt_kernel_get_grid(k, NULL, fake, 4,
								 g, c));
		ASSERT(TLXRT_MISUSE, tlxrt_kernel_get_grid(NULL, NULL, fake, 4,
							    g, c));
	}
	ASSERT(TLXRT_OK, tlxrt_event_record(e0, s));
	cfg.stream = s;
	/* the step count: the same for the same launch; an L2-flush-like
	 * fill on the stream */
	ASSERT(TLXRT_MISUSE, tlxrt_device_get_steps(dev, NULL));
	ASSERT(TLXRT_OK, tlxrt_device_get_steps(dev, &st0));
	ASSERT(TLXRT_OK, tlxrt_launch(k, &cfg, args, 4));
	ASSERT(TLXRT_OK, tlxrt_device_get_steps(dev, &st1));
	ASSERT(TLXRT_OK, tlxrt_memset_async(dev, x, 0, 0, s));
	ASSERT(TLXRT_MISUSE, tlxrt_memset_async(dev, x, 0, 4, s2));
	ASSERT(TLXRT_OK, tlxrt_launch(k, &cfg, args, 4));
	ASSERT(TLXRT_OK, tlxrt_device_get_steps(dev, &st2));
	CHECK(st1 > st0 && st2 - st1 == st1 - st0);
	ASSERT(TLXRT_OK, tlxrt_event_record(e1, s));
	ASSERT(TLXRT_OK, tlxrt_stream_synchronize(s));
	ASSERT(TLXRT_OK, tlxrt_event_synchronize(e1));
	ASSERT(TLXRT_OK, tlxrt_event_elapsed_ms(e0, e1, &ms));
	CHECK(ms >= 0);
	ASSERT(TLXRT_OK, tlxrt_memcpy_dtoh(dev, v, x, sizeof v));
	for (i = 0; i < 8; i++)
		CHECK(v[i] == 4.0f * (float)i);  /* x += x, twice */
	/* a wrapped (borrowed) stream: the sim ignores the native handle */
	ASSERT(TLXRT_MISUSE, tlxrt_stream_wrap(dev, NULL, NULL));
	ASSERT(TLXRT_OK, tlxrt_stream_wrap(dev, NULL, &w));
	cfg.stream = w;
	ASSERT(TLXRT_OK, tlxrt_launch(k, &cfg, args, 4));
	ASSERT(TLXRT_OK, tlxrt_stream_synchronize(w));
	ASSERT(TLXRT_OK, tlxrt_memcpy_dtoh(dev, v, x, sizeof v));
	CHECK(v[3] == 24.0f);
	ASSERT(TLXRT_OK, tlxrt_stream_destroy(w));
	cfg.stream = s2;
	ASSERT(TLXRT_MISUSE, tlxrt_launch(k, &cfg, args, 4));
	ASSERT_STR("the stream belongs to another device", tlxrt_errmsg(dev));
	ASSERT(TLXRT_OK, tlxrt_stream_destroy(s));
	ASSERT(TLXRT_OK, tlxrt_stream_destroy(s2));
	ASSERT(TLXRT_OK, tlxrt_stream_destroy(NULL));
	ASSERT(TLXRT_OK, tlxrt_event_destroy(e0));
	ASSERT(TLXRT_OK, tlxrt_event_destroy(e1));
	ASSERT(TLXRT_OK, tlxrt_event_destroy(NULL));
	ASSERT(TLXRT_MISUSE, tlxrt_stream_synchronize(NULL));
	ASSERT(TLXRT_OK, tlxrt_free(dev, x));
	ASSERT(TLXRT_OK, tlxrt_module_unload(m));
	ASSERT(TLXRT_OK, tlxrt_device_close(other));
}

int
main(int argc, char **argv)
{
	tlxrt_device *dev;

	if (argc < 2) {
		fprintf(stderr, "usage: api_test INPUTS_DIR\n");
		return 2;
	}
	test_basics();
	if (tlxrt_device_open("sim", &dev) != TLXRT_OK)
		return 1;
	test_device_memory(dev);
	test_modules(dev, argv[1]);
	test_tensor_arg(dev, argv[1]);
	test_streams(dev, argv[1]);
	ASSERT(TLXRT_OK, tlxrt_device_close(dev));
	TEST_MAIN_END();
}
