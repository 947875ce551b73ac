/*
 * fuzz_args: libFuzzer's bytes as a launch on the simulator -- which
 * kernel, the launch config (grid, cluster, stream), how many arguments
 * and each one's kind and value: scalars at the edges of their types,
 * pointers (null, inside, misaligned, freed, made up), tensor descriptors
 * (types, ranks, shapes and strides good and bad).  The kernels are those
 * of testsuite/runtime/Inputs and some examples (laid out by the compiler
 * at start-up), so scalars, pointers, tensors, grid functions, clusters,
 * persistent schedules, tasks and derived tensors all come up.  The
 * runtime's checks (rt_args_check, args.c) either accept the launch or
 * refuse it with a message naming the argument; a launch they accept
 * runs (when its grid and its integer scalars are small) for at most
 * 2,000 steps, and fails, if it does, with a message.  The scalars bound
 * the work of a step: a GEMM's K of 2^31 made each of its 2,000 steps a
 * dot of 128 x 256 x 64, 31 s under the sanitizers.
 */
#include <stdio.h>
#include <stdlib.h>

#include "harness.h"
#include "runtime/rt.h"

enum { MAX_KERNELS = 64, MAX_ARGS = 24, NBUFS = 4 };

static tlxrt_device *dev;
static tlxrt_stream *stream;
static tlxrt_kernel *kernels[MAX_KERNELS];
static int nkernels;
static tlxrt_ptr bufs[NBUFS], freed;
static const size_t buf_bytes[NBUFS] = { 16, 256, 4096, 65536 };

static const char *const inputs[] = {
	"testsuite/runtime/Inputs/vadd.tir", "testsuite/runtime/Inputs/checks.tir",
	"testsuite/runtime/Inputs/cluster.tir", "testsuite/runtime/Inputs/sched.tir",
	"testsuite/runtime/Inputs/gemm_ws.tir", "testsuite/runtime/Inputs/control.tir",
};
static const char *const examples[] = {
	"examples/vadd.tlx", "examples/softmax.tlx", "examples/gemm_tma.tlx",
	"examples/gemm_persistent.tlx", "examples/gemm_grouped.tlx",
};

static char *
read_file(const char *name, size_t *n)
{
	const char *root = getenv("TLX_SRCDIR") ? getenv("TLX_SRCDIR")
						: TLX_SRCDIR;
	char path[4096];
	FILE *f;
	char *s;
	long len;

	snprintf(path, sizeof path, "%s/%s", root, name);
	if (!(f = fopen(path, "rb")) || fseek(f, 0, SEEK_END) ||
	    (len = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) ||
	    !(s = malloc((size_t)len + 1))) {
		fprintf(stderr, "fuzz-args: cannot read %s\n", path);
		exit(1);
	}
	*n = fread(s, 1, (size_t)len, f);
	s[*n] = 0;
	fclose(f);
	return s;
}

static void
load(const char *text, size_t n, const char *what)
{
	tlxrt_module *m;
	int k, nk;

	if (tlxrt_module_load(dev, text, n, &m) != TLXRT_OK) {
		fprintf(stderr, "fuzz-args: %s: %s\n", what, tlxrt_errmsg(dev));
		exit(1);
	}
	tlxrt_module_num_kernels(m, &nk);
	for (k = 0; k < nk && nkernels < MAX_KERNELS; k++)
		tlxrt_module_get_kernel(m, k, &kernels[nkernels++]);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	size_t i, n;

	if (tlxrt_device_open("sim", &dev) != TLXRT_OK ||
	    tlxrt_device_set_option(dev, TLXRT_SIM_MAX_STEPS, 2000) ||
	    /* persistent kernels launch a program per SM: few */
	    tlxrt_device_set_option(dev, TLXRT_SIM_SM_COUNT, 2) ||
	    tlxrt_stream_create(dev, &stream)) {
		fputs("fuzz-args: no simulator device\n", stderr);
		exit(1);
	}
	for (i = 0; i < NBUFS; i++)
		tlxrt_malloc(dev, buf_bytes[i], &bufs[i]);
	tlxrt_malloc(dev, 64, &freed);
	tlxrt_free(dev, freed);
	for (i = 0; i < sizeof inputs / sizeof *inputs; i++) {
		char *s = read_file(inputs[i], &n);

		load(s, n, inputs[i]);
		free(s);
	}
	for (i = 0; i < sizeof examples / sizeof *examples; i++) {
		char *s = read_file(examples[i], &n);
		FhCompile c = { .olevel = 3, .sm = 90, .lower = true };

		fh_compile(s, n, &c);
		if (!c.ok) {
			fprintf(stderr, "fuzz-args: %s: %s\n", examples[i],
				c.diags.s);
			exit(1);
		}
		load(c.ir.s, c.ir.n, examples[i]);
		fh_compile_free(&c);
		free(s);
	}
	return 0;
}

/* ---- the input, read as a launch ---------------------------------------------- */

typedef struct Rd {
	const uint8_t *p;
	size_t n;
} Rd;

static uint8_t
u8(Rd *r)
{
	if (!r->n)
		return 0;
	r->n--;
	return *r->p++;
}

static uint64_t
u64(Rd *r)
{
	uint64_t v = 0;
	int i;

	for (i = 0; i < 8; i++)
		v = v << 8 | u8(r);
	return v;
}

/* A value at an edge, or any 64 bits. */
static int64_t
edge(Rd *r)
{
	static const int64_t vals[] = {
		0, 1, 2, 3, 4, 7, 8, 15, 16, 17, 31, 32, 64, 100, 127, 128, 255,
		256, 257, 1000, 1024, 4096, 32767, 32768, 65535, 65536,
		1 << 20, 2147483647, 2147483648ll, 4294967295ll, 4294967296ll,
		-1, -2, -16, -128, -129, -32768, -2147483647 - 1,
		INT64_MAX, INT64_MIN, (int64_t)1 << 40, (int64_t)1 << 53,
	};
	uint8_t b = u8(r);

	if (b < 2 * sizeof vals / sizeof *vals)
		return vals[b % (sizeof vals / sizeof *vals)];
	return (int64_t)u64(r);
}

static tlxrt_ptr
pointer(Rd *r)
{
	uint8_t b = u8(r);

	switch (b % 8) {
	case 0: return 0;
	case 1: return freed;
	case 2: return (tlxrt_ptr)u64(r);
	case 3: return bufs[u8(r) % NBUFS] + u8(r) % 33;  /* misaligned */
	case 4: return bufs[NBUFS - 1] + (tlxrt_ptr)(u8(r) * 256);
	default: return bufs[b / 8 % NBUFS];
	}
}

/* A scalar argument for a parameter of type t (or any), of the kind the
 * runtime takes for it, or another. */
static tlxrt_arg
scalar(Rd *r, int t)
{
	int64_t v = edge(r);
	uint8_t how = u8(r);
	bool fl = t == TLXRT_F16 || t == TLXRT_BF16 || t == TLXRT_F32 ||
		  t == TLXRT_F64 || t == TLXRT_F8E4M3 || t == TLXRT_F8E5M2;

	if (how >= 64)  /* what the type asks for */
		return t == TLXRT_F64 ? tlxrt_arg_f64((double)v / 8)
		       : fl ? tlxrt_arg_f32((float)v / 8)
		       : t == TLXRT_I64 ? tlxrt_arg_i64(v)
		       : t == TLXRT_U64 ? tlxrt_arg_u64((uint64_t)v)
		       : t == TLXRT_U32 ? tlxrt_arg_u32((uint32_t)v)
		       : tlxrt_arg_i32((int32_t)v);
	switch (how % 6) {
	case 0: return tlxrt_arg_i32((int32_t)v);
	case 1: return tlxrt_arg_i64(v);
	case 2: return tlxrt_arg_u32((uint32_t)v);
	case 3: return tlxrt_arg_u64((uint64_t)v);
	case 4: return tlxrt_arg_f32(how & 64 ? (float)v : (float)v * 1e30f);
	default: return tlxrt_arg_f64(how & 64 ? (double)v : 1e300 * (double)v);
	}
}

static tlxrt_arg
tensor(Rd *r, const tlxrt_param_info *pi)
{
	tlxrt_arg a;
	int64_t shape[5];
	uint8_t how = u8(r);
	int rank = pi && how < 192 ? pi->rank : (int)(u8(r) % 8) - 1;
	int type = pi && how < 224 ? pi->type : (int)(u8(r) % 20) - 2;
	int i, n = rank < 0 ? 0 : rank > 5 ? 5 : rank;

	for (i = 0; i < n; i++) {
		uint8_t s = u8(r);

		/* mostly sizes of the box's scale, sometimes an edge */
		shape[i] = s < 224 ? 1 + (s % 16) * 16 : edge(r);
	}
	/* contiguous, or strides of powers of two or edges */
	a = tlxrt_arg_tensor(pointer(r), type, n, shape, NULL);
	if (u8(r) >= 160)
		for (i = 0; i < n; i++)
			a.v.tensor.strides[i] = u8(r) < 128 ? 1 << (u8(r) % 12)
							    : edge(r);
	a.v.tensor.rank = rank;
	return a;
}

static tlxrt_arg
argument(Rd *r, tlxrt_kernel *k, int i, int nparams)
{
	tlxrt_param_info pi;
	bool have = i < nparams && tlxrt_kernel_get_param(k, i, &pi) == TLXRT_OK;
	uint8_t how = u8(r);
	int kind = have && how < 224 ? pi.kind : how % 5;
	tlxrt_arg a;

	switch (kind) {
	case TLXRT_PARAM_SCALAR:
		return scalar(r, have ? pi.type : (int)(u8(r) % 16));
	case TLXRT_PARAM_POINTER:
		return tlxrt_arg_ptr(pointer(r));
	case TLXRT_PARAM_TENSOR:
		return tensor(r, have ? &pi : NULL);
	default:  /* not a kind at all */
		a = tlxrt_arg_i32(0);
		a.kind = how % 2 ? 0 : 9 + how;
		return a;
	}
}

static uint32_t
dim(Rd *r)
{
	uint8_t b = u8(r);

	return b < 192 ? b % 5 : (uint32_t)edge(r);
}

/* Whether every integer scalar is at most SMALL in magnitude. */
enum { SMALL = 4096 };

static bool
small_scalars(const tlxrt_arg *a, int n)
{
	int i;

	for (i = 0; i < n; i++)
		switch (a[i].kind) {
		case TLXRT_ARG_I32:
			if (a[i].v.i32 > SMALL || a[i].v.i32 < -SMALL)
				return false;
			break;
		case TLXRT_ARG_I64:
			if (a[i].v.i64 > SMALL || a[i].v.i64 < -SMALL)
				return false;
			break;
		case TLXRT_ARG_U32:
			if (a[i].v.u32 > SMALL)
				return false;
			break;
		case TLXRT_ARG_U64:
			if (a[i].v.u64 > SMALL)
				return false;
			break;
		default:
			break;
		}
	return true;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	Rd r = { data, size };
	tlxrt_kernel *k = kernels[u8(&r) % nkernels];
	tlxrt_kernel_info ki;
	tlxrt_launch_config cfg;
	tlxrt_arg args[MAX_ARGS];
	RtArg out[MAX_ARGS + 16];
	uint32_t grid[3], cluster[3];
	uint8_t flags = u8(&r);
	int nargs, i, rc;
	uint64_t progs;

	memset(&cfg, 0, sizeof cfg);
	tlxrt_kernel_get_info(k, &ki);
	if (flags & 2)
		for (i = 0; i < 3; i++)
			cfg.grid[i] = dim(&r);
	if (flags & 4)
		for (i = 0; i < 3; i++)
			cfg.cluster[i] = dim(&r);
	if (flags & 8)
		cfg.stream = stream;
	nargs = flags & 16 ? u8(&r) % (ki.num_params + 3) : ki.num_params;
	if (nargs > MAX_ARGS || k->nall > MAX_ARGS + 16)
		return -1;
	for (i = 0; i < nargs; i++)
		args[i] = argument(&r, k, i, ki.num_params);
	rc = rt_args_check(k, flags & 1 ? NULL : &cfg, args, nargs, out, grid,
			   cluster);
	if (fh_verbose())
		fprintf(stderr, "fuzz-args: kernel '%s', %d arguments: %s\n",
			ki.name, nargs, rc ? tlxrt_errmsg(dev) : "accepted");
	if (rc != TLXRT_OK) {
		if (!*tlxrt_errmsg(dev))
			fh_finding(NULL, "kernel '%s': a launch refused (%s) "
				   "without a message", ki.name,
				   tlxrt_errstr(rc));
		return 0;
	}
	progs = (uint64_t)grid[0] * grid[1] * grid[2];
	/* the checks were the point; a run of a big launch is long */
	if (progs > 8 || !small_scalars(args, nargs))
		return 0;
	rc = tlxrt_launch(k, flags & 1 ? NULL : &cfg, args, nargs);
	if (fh_verbose())
		fprintf(stderr, "fuzz-args: ran %llu programs: %s\n",
			(unsigned long long)progs, rc ? tlxrt_errmsg(dev) : "ok");
	if (rc != TLXRT_OK && !*tlxrt_errmsg(dev))
		fh_finding(NULL, "kernel '%s': a launch failed (%s) without a "
			   "message", ki.name, tlxrt_errstr(rc));
	if (rc == TLXRT_OK && cfg.stream)
		tlxrt_stream_synchronize(stream);
	return 0;
}
