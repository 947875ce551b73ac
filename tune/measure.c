/*
 * measure.c: what the tuner's children do (driver.h).
 *
 * A compile child compiles one candidate through libtlx and writes the
 * image into its pipe (exit 1 and the diagnostics: the compiler rejected
 * it).  A run child opens the device (never the tuner: a GPU context a
 * crash poisons dies with the child), loads the image, makes the
 * arguments, launches once for the output, then times `repeats` launches
 * and writes the median, the device's name and driver version, and every
 * pointer buffer.  A run server does the same for each candidate sent to
 * it, keeping the device open and releasing the module and buffers after
 * each, until a run fails (tune_run_server).  The re-timing child loads
 * the finalists' images and times them round-robin, `rounds` times,
 * writing each one's median.
 *
 * Timing on cuda: before each timed launch a fill of a buffer twice the
 * L2 (256 MiB when the size is unknown) is queued on the stream, then an
 * event, the launch, an event: the milliseconds between the events.  On
 * the simulator the cost is the operations the launch executed
 * (tlxrt_device_get_steps), deterministic; the flush still runs (1 MiB)
 * so the path is exercised.  The synthetic backend computes the planted
 * landscape's value.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tlx/tlxrt.h"
#include "tune/driver.h"

enum { MAXARGS = 64 };

typedef struct Bench {
	tlx_tune *T;
	int fd;              /* where the result goes; -1: into out */
	unsigned char *out;  /* the run server's result, until it is sent */
	size_t outlen, outcap;
	tlxrt_module *mod;
	tlxrt_device *dev;
	tlxrt_stream *s;
	tlxrt_event *e0, *e1;
	tlxrt_ptr flush;
	size_t flush_bytes;
	tlxrt_arg args[MAXARGS];
	int nargs;
	tlxrt_ptr ptrs[MAXARGS];
	int pty[MAXARGS], np;
	char shape[TUNE_SHAPE];  /* the integer scalars, "M=4096 N=4096" */
} Bench;

/* n bytes of the result: into the pipe, or the server's buffer. */
static int
put(Bench *B, const void *p, size_t n)
{
	if (B->fd >= 0)
		return tune_write_all(B->fd, p, n);
	if (B->outlen + n > B->outcap) {
		size_t cap = B->outcap ? B->outcap : 4096;
		unsigned char *nb;

		while (cap < B->outlen + n)
			cap *= 2;
		if (!(nb = realloc(B->out, cap)))
			return -1;
		B->out = nb;
		B->outcap = cap;
	}
	memcpy(B->out + B->outlen, p, n);
	B->outlen += n;
	return 0;
}

/* A child's failure: the message as its result, exit status 1. */
static int __attribute__((format(printf, 2, 3)))
fail(Bench *B, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	put(B, msg, strlen(msg));
	return 1;
}

/* A runtime call's failure: what, and the runtime's message. */
static int
rtfail(Bench *B, const char *what)
{
	return fail(B, "%s: %s", what, B->dev ? tlxrt_errmsg(B->dev) : "");
}

int
tune_synth_has(const tlx_tune *T, const int *cfg, int kind)
{
	if (!cfg)
		return 0;
	for (int i = 0; i < T->nsyn; i++)
		if (T->syn[i].kind == kind &&
		    T->params[T->syn[i].param].v[cfg[T->syn[i].param]] ==
			    T->syn[i].value)
			return 1;
	return 0;
}

/* The planted landscape's value: 1 + the index distance to the optimum. */
static double
synth_cost(const tlx_tune *T, const int *cfg)
{
	double cost = 1;

	for (int i = 0; cfg && i < T->np; i++) {
		int opt = 0;

		for (int s = 0; s < T->nsyn; s++)
			if (T->syn[s].kind == SY_OPT && T->syn[s].param == i)
				for (int j = 0; j < T->params[i].n; j++)
					if (T->params[i].v[j] == T->syn[s].value)
						opt = j;
		cost += abs(cfg[i] - opt);
	}
	return cost;
}

static void
plant(const tlx_tune *T, const int *cfg, int crash, int segv, int hang)
{
	if (tune_synth_has(T, cfg, crash))
		abort();
	if (segv >= 0 && tune_synth_has(T, cfg, segv)) {
		signal(SIGSEGV, SIG_DFL);
		raise(SIGSEGV);
	}
	if (tune_synth_has(T, cfg, hang)) {
		/* a compile hangs where a real one would, waiting on the
		 * assembler it started (a child the timeout must end too;
		 * this one ends itself after 60 s should that fail) */
		if (hang == SY_CHANG) {
			pid_t p = fork();

			if (p == 0) {
				alarm(60);
				for (;;)
					pause();
			}
			if (p > 0)
				while (waitpid(p, NULL, 0) < 0 && errno == EINTR)
					;
		}
		for (;;)
			pause();
	}
}

/* ---- compiling ---------------------------------------------------------- */

/* Compiles cfg (NULL: the default configuration) through libtlx. */
static int
compile_cfg(tlx_tune *T, const int *cfg, int emit, tlx_ctx **ctx,
	    tlx_module **m)
{
	const char *defs[MAXD + MAXP];
	char store[MAXP][96];
	tlx_options o = { 0 };
	int n = 0;

	for (int i = 0; i < T->ndefs; i++)
		defs[n++] = T->defs[i];
	for (int i = 0; cfg && i < T->np; i++) {
		snprintf(store[i], sizeof store[i], "%s=%lld", T->params[i].name,
			 (long long)T->params[i].v[cfg[i]]);
		defs[n++] = store[i];
	}
	o.name = T->name;
	o.emit = emit;
	o.defines = defs;
	o.ndefines = n;
	if (tlx_ctx_create(NULL, NULL, ctx))
		return TLX_NOMEM;
	return tlx_compile(*ctx, T->src, T->srclen, &o, m);
}

int
tune_compile_child(tlx_tune *T, const int *cfg, int fd)
{
	tlx_ctx *ctx;
	tlx_module *m;
	const void *img;
	size_t size;
	int kind, rc;

	if (T->o.backend == TLX_TUNE_SYNTHETIC) {
		plant(T, cfg, SY_CCRASH, -1, SY_CHANG);
		return tune_synth_has(T, cfg, SY_REJECT) ? 1 : 0;
	}
	rc = compile_cfg(T, cfg, T->o.backend == TLX_TUNE_SIM ? TLX_EMIT_IR
							       : TLX_EMIT_CUBIN,
			 &ctx, &m);
	if (rc == TLX_COMPILE) {
		const char *msg = tlx_errmsg(ctx);

		tune_write_all(fd, msg, strlen(msg));
		return 1;
	}
	if (rc || tlx_module_image(m, &img, &size, &kind) ||
	    tune_write_all(fd, img, size))
		return 3;
	return 0;
}

/* ---- arguments ---------------------------------------------------------- */

static double
fill_value(int type, int64_t i, int p)
{
	if (type == TLXRT_F32 || type == TLXRT_F64 || type == TLXRT_F16 ||
	    type == TLXRT_BF16)
		return (double)((i * 37 + p * 11) % 101) / 64.0 - 0.75;
	return (double)((i * 7 + p * 3) % 13);
}

static void
store_value(unsigned char *dst, int type, double v)
{
	switch (type) {
	case TLXRT_F32: { float f = (float)v; memcpy(dst, &f, 4); break; }
	case TLXRT_F64: memcpy(dst, &v, 8); break;
	case TLXRT_BF16: {
		float f = (float)v;
		uint32_t u;

		memcpy(&u, &f, 4);
		u >>= 16;
		dst[0] = (unsigned char)u;
		dst[1] = (unsigned char)(u >> 8);
		break;
	}
	case TLXRT_F16: {
		/* the values above are multiples of 1/64 below 1: exact */
		float f = (float)v, a = fabsf(f);
		uint16_t h = f < 0 ? 0x8000 : 0;

		if (a > 0) {
			int e;
			float m = frexpf(a, &e); /* a = m * 2^e, m in [0.5,1) */

			h |= (uint16_t)(((e - 1 + 15) << 10) |
					((int)(m * 2048) & 0x3ff));
		}
		memcpy(dst, &h, 2);
		break;
	}
	default: {
		int64_t x = (int64_t)v;
		int sz = tlxrt_type_size(type);

		memcpy(dst, &x, sz > 8 ? 8 : (size_t)sz); /* little endian */
		break;
	}
	}
}

/* A scalar argument: its tlx_tune_add_arg value, else the size
 * (integers) or 1.0. */
static int
scalar_arg(Bench *B, const tlxrt_param_info *pi, tlxrt_arg *a)
{
	tlx_tune *T = B->T;
	double f = pi->type == TLXRT_F32 || pi->type == TLXRT_F64 ? 1 : 0;
	int64_t x = T->o.size;
	int isf = f != 0;

	for (int j = 0; j < T->nsargs; j++) {
		const char *v = T->sargs[j], *eq = strchr(v, '=');
		char *end;

		if (strlen(pi->name) != (size_t)(eq - v) ||
		    strncmp(v, pi->name, (size_t)(eq - v)))
			continue;
		if (isf) {
			f = strtod(eq + 1, &end);
		} else {
			x = strtoll(eq + 1, &end, 0);
		}
		if (end == eq + 1 || *end)
			return fail(B, "error: --arg for '%s': expected %s",
				    pi->name, isf ? "a number" : "an integer");
	}
	switch (pi->type) {
	case TLXRT_F32: *a = tlxrt_arg_f32((float)f); break;
	case TLXRT_F64: *a = tlxrt_arg_f64(f); break;
	case TLXRT_I64: *a = tlxrt_arg_i64(x); break;
	case TLXRT_U32: *a = tlxrt_arg_u32((uint32_t)x); break;
	case TLXRT_U64: *a = tlxrt_arg_u64((uint64_t)x); break;
	default: *a = tlxrt_arg_i32((int32_t)x); break;
	}
	return 0;
}

/* Opens the device, the stream, the events and the flush buffer. */
static int
bench_open(Bench *B)
{
	tlx_tune *T = B->T;
	tlxrt_device_props p;
	char msg[256], name[32];
	int cuda = T->o.backend == TLX_TUNE_CUDA;

	snprintf(name, sizeof name, "%s:%d", cuda ? "cuda" : "sim",
		 T->child_dev);
	if (tlxrt_device_open_errmsg(name, &B->dev, msg, sizeof msg)) {
		B->dev = NULL;
		return fail(B, "device: %s", msg);
	}
	if (tlxrt_device_get_props(B->dev, &p))
		return rtfail(B, "device");
	B->flush_bytes = !cuda ? (size_t)1 << 20
		       : p.l2_size > 0 ? 2 * (size_t)p.l2_size
				       : (size_t)256 << 20;
	if (tlxrt_malloc(B->dev, B->flush_bytes, &B->flush))
		return rtfail(B, "allocating the L2 flush buffer");
	if (cuda && (tlxrt_stream_create(B->dev, &B->s) ||
		     tlxrt_event_create(B->dev, &B->e0) ||
		     tlxrt_event_create(B->dev, &B->e1)))
		return rtfail(B, "events");
	return 0;
}

/* The arguments of kernel k: a buffer of `elems` deterministic values for
 * each pointer, scalars by scalar_arg. */
static int
bench_args(Bench *B, tlxrt_kernel *k)
{
	tlx_tune *T = B->T;
	tlxrt_kernel_info ki;

	if (tlxrt_kernel_get_info(k, &ki))
		return rtfail(B, "the kernel");
	if (ki.num_params > MAXARGS)
		return fail(B, "more than 64 parameters");
	B->nargs = ki.num_params;
	for (int i = 0; i < ki.num_params; i++) {
		tlxrt_param_info pi;

		if (tlxrt_kernel_get_param(k, i, &pi))
			return rtfail(B, "a parameter");
		if (pi.kind == TLXRT_PARAM_POINTER) {
			size_t esz = (size_t)tlxrt_type_size(pi.type);
			size_t bytes = esz * (size_t)T->elems;
			unsigned char *h = calloc(1, bytes);
			int np = B->np;

			if (!h || tlxrt_malloc(B->dev, bytes, &B->ptrs[np]))
				return rtfail(B, "allocating");
			for (int64_t e = 0; e < T->elems; e++)
				store_value(h + e * esz, pi.type,
					    fill_value(pi.type, e, np));
			if (tlxrt_memcpy_htod(B->dev, B->ptrs[np], h, bytes))
				return rtfail(B, "copying");
			free(h);
			B->pty[np] = pi.type;
			B->args[i] = tlxrt_arg_ptr(B->ptrs[B->np++]);
		} else if (pi.kind == TLXRT_PARAM_SCALAR) {
			size_t m = strlen(B->shape);
			const tlxrt_arg *a = &B->args[i];

			if (scalar_arg(B, &pi, &B->args[i]))
				return 1;
			if (a->kind != TLXRT_ARG_F32 && a->kind != TLXRT_ARG_F64)
				snprintf(B->shape + m, sizeof B->shape - m,
					 "%s%s=%lld", m ? " " : "", pi.name,
					 a->kind == TLXRT_ARG_I32 ? (long long)a->v.i32
					 : a->kind == TLXRT_ARG_U32 ? (long long)a->v.u32
					 : (long long)a->v.i64);
		} else {
			return fail(B, "parameter '%s': tensor parameters are "
				    "not supported yet", pi.name);
		}
	}
	for (int j = 0; j < T->nsargs; j++) {
		size_t n = strcspn(T->sargs[j], "=");
		int found = 0;
		char msg[256];

		for (int i = 0; i < ki.num_params && !found; i++) {
			tlxrt_param_info pi;

			found = !tlxrt_kernel_get_param(k, i, &pi) &&
				pi.kind == TLXRT_PARAM_SCALAR &&
				strlen(pi.name) == n &&
				!strncmp(pi.name, T->sargs[j], n);
		}
		if (!found) {
			snprintf(msg, sizeof msg, "error: --arg %s: kernel '%s' "
				 "has no scalar parameter '%.*s'", T->sargs[j],
				 T->kernel, (int)n, T->sargs[j]);
			return fail(B, "%s", msg);
		}
	}
	return 0;
}

/* One timed launch of k after an L2 flush: milliseconds on cuda, the
 * operations executed on the simulator. */
static int
bench_time(Bench *B, tlxrt_kernel *k, double *out, double *took)
{
	tlxrt_launch_config lc = { { 0, 0, 0 }, { 0, 0, 0 }, B->s };
	uint64_t s0 = 0, s1 = 0;
	double t0;
	float ms;

	if (tlxrt_memset_async(B->dev, B->flush, 0, B->flush_bytes, B->s))
		return rtfail(B, "the L2 flush");
	if (!B->s) {
		t0 = tune_now();
		if (tlxrt_device_get_steps(B->dev, &s0) ||
		    tlxrt_launch(k, &lc, B->args, B->nargs) ||
		    tlxrt_device_synchronize(B->dev) ||
		    tlxrt_device_get_steps(B->dev, &s1))
			return rtfail(B, "launch");
		*out = (double)(s1 - s0);
		*took = (tune_now() - t0) * 1e3;
		return 0;
	}
	if (tlxrt_event_record(B->e0, B->s) ||
	    tlxrt_launch(k, &lc, B->args, B->nargs) ||
	    tlxrt_event_record(B->e1, B->s) || tlxrt_event_synchronize(B->e1) ||
	    tlxrt_event_elapsed_ms(B->e0, B->e1, &ms))
		return rtfail(B, "launch");
	*out = *took = ms;
	return 0;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double
median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int
load(Bench *B, int i, tlxrt_kernel **k)
{
	tlx_tune *T = B->T;
	tlxrt_module *mod;

	if (tlxrt_module_load(B->dev, T->child_imgs[i], T->child_lens[i], &mod))
		return rtfail(B, "loading the module");
	B->mod = mod;
	if (tlxrt_kernel_get(mod, T->kernel, k))
		return rtfail(B, "the kernel");
	return 0;
}

/* The run child's header (RunHeader); p: the device's properties (NULL:
 * the synthetic backend's). */
static int
write_header(Bench *B, double cost, const tlxrt_device_props *p, int runs)
{
	RunHeader h;
	int cuda = B->T->o.backend == TLX_TUNE_CUDA, n = 0;

	memset(&h, 0, sizeof h);
	tlxrt_device_count(cuda ? "cuda" : "sim", &n);
	h.cost = cost;
	snprintf(h.name, sizeof h.name, "%s", p ? p->name : "synthetic");
	h.driver = p ? p->driver_version : 0;
	h.ordinal = p ? p->ordinal : B->T->child_dev;
	h.count = n;
	h.sm_count = p ? p->sm_count : 132;
	h.smem_per_block = p ? p->max_smem_per_block : 232448;
	h.runs = runs;
	memcpy(h.shape, B->shape, sizeof h.shape);
	return put(B, &h, sizeof h) ? 3 : 0;
}

/* One candidate on the open device (B->dev; none for the synthetic
 * backend): its result into B; 0, 1 (failed: the message) or 3. */
static int
run_candidate(Bench *B, const int *cfg)
{
	tlx_tune *T = B->T;
	tlxrt_kernel *k;
	tlxrt_device_props p;
	double times[1000], spent = 0;
	int runs = 0;

	if (T->o.backend == TLX_TUNE_SYNTHETIC) {
		unsigned char wrong = (unsigned char)tune_synth_has(T, cfg, SY_WRONG);

		plant(T, cfg, SY_CRASH, SY_SEGV, SY_HANG);
		/* no kernel: the shape is the --arg values */
		for (int j = 0; j < T->nsargs; j++) {
			size_t m = strlen(B->shape);

			snprintf(B->shape + m, sizeof B->shape - m, "%s%s",
				 m ? " " : "", T->sargs[j]);
		}
		/* fast: a lucky first run, 10 times too fast; its
		 * confirmation (child_confirm) the true cost */
		return write_header(B, synth_cost(T, cfg) /
				    (tune_synth_has(T, cfg, SY_FAST) &&
				     !T->child_confirm ? 10 : 1), NULL, 0) ||
		       put(B, &wrong, 1) ? 3 : 0;
	}
	if (load(B, 0, &k) || bench_args(B, k))
		return 1;
	/* one launch for the output, then the timed ones */
	if (tlxrt_launch(k, NULL, B->args, B->nargs) ||
	    tlxrt_device_synchronize(B->dev))
		return rtfail(B, "launch");
	/* `repeats` of them, or with repeat_ms until that much kernel time
	 * (at least 3, at most 1000) */
	for (;;) {
		double took;

		if (bench_time(B, k, &times[runs], &took))
			return 1;
		spent += took;
		runs++;
		if (T->o.repeat_ms > 0 ? (runs >= 3 && spent >= T->o.repeat_ms) ||
						 runs == 1000
				       : runs >= T->repeats)
			break;
	}
	/* the outputs of the first launch were overwritten by the same
	 * kernel on the same inputs; a kernel that accumulates would differ,
	 * which the comparison then reports */
	tlxrt_device_get_props(B->dev, &p);
	if (write_header(B, median(times, runs), &p, runs))
		return 3;
	for (int i = 0; i < B->np; i++) {
		size_t bytes = (size_t)tlxrt_type_size(B->pty[i]) * (size_t)T->elems;
		unsigned char *h = malloc(bytes);
		int32_t ty = B->pty[i];

		if (!h || tlxrt_memcpy_dtoh(B->dev, h, B->ptrs[i], bytes)) {
			free(h);
			return rtfail(B, "copying back");
		}
		if (put(B, &ty, sizeof ty) || put(B, h, bytes)) {
			free(h);
			return 3;
		}
		free(h);
	}
	return 0;
}

/* Releases what run_candidate made, keeping the device open. */
static void
run_release(Bench *B)
{
	for (int i = 0; i < B->np; i++)
		tlxrt_free(B->dev, B->ptrs[i]);
	tlxrt_module_unload(B->mod);
	B->mod = NULL;
	B->np = B->nargs = 0;
	B->shape[0] = 0;
	B->outlen = 0;
}

int
tune_run_child(tlx_tune *T, const int *cfg, int fd)
{
	Bench B = { .T = T, .fd = fd };

	if (T->o.backend != TLX_TUNE_SYNTHETIC && bench_open(&B))
		return 1;
	return run_candidate(&B, cfg);
}

/* Reads n bytes; 0, or -1 at the end or on an error. */
static int
read_all(int fd, void *p, size_t n)
{
	unsigned char *c = p;

	while (n) {
		ssize_t r = read(fd, c, n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		c += r;
		n -= (size_t)r;
	}
	return 0;
}

int
tune_run_server(tlx_tune *T, int fd)
{
	Bench B = { .T = T, .fd = -1 };
	ServerRequest q;
	ServerReply a;
	unsigned char *img = NULL;
	size_t len;
	/* a device that does not open fails the first request, saying why */
	int st = T->o.backend == TLX_TUNE_SYNTHETIC ? 0 : bench_open(&B);

	while (!read_all(fd, &q, sizeof q)) {
		len = (size_t)q.len;
		free(img);
		if (!(img = malloc(len ? len : 1)) || read_all(fd, img, len))
			return 3;
		T->child_confirm = q.confirm;
		T->child_imgs = &img;
		T->child_lens = &len;
		T->child_nimgs = 1;
		if (!st)
			st = run_candidate(&B, q.has_cfg ? q.cfg : NULL);
		a = (ServerReply){ .st = st, .len = (uint64_t)B.outlen };
		if (tune_write_all(fd, &a, sizeof a) ||
		    tune_write_all(fd, B.out, B.outlen))
			return 3;
		run_release(&B);  /* nothing to release when the open failed */
		if (st)
			break;
	}
	free(img);
	free(B.out);
	return st;
}

/* The finalists (cfgs: nfin configurations; an image past those, when
 * child_nimgs has one, is the default configuration's), each
 * launched once, then timed round-robin: rounds x (f1, f2, ...), an L2
 * flush before every launch; writes each one's median (doubles). */
int
tune_retime_child(tlx_tune *T, const int *cfgs, int fd)
{
	Bench B = { .T = T, .fd = fd };
	tlxrt_kernel *k[MAXFIN];
	double *times = calloc((size_t)T->rounds * MAXFIN, sizeof *times), took;
	int n = T->child_nimgs;

	if (!times)
		return 3;
	for (int r = 0; r < T->rounds; r++)
		for (int i = 0; i < n; i++) {
			if (T->o.backend != TLX_TUNE_SYNTHETIC)
				continue;
			times[i * T->rounds + r] =
				i >= T->nfin ? T->default_cost
				: synth_cost(T, cfgs + (size_t)i * T->np);
		}
	if (T->o.backend != TLX_TUNE_SYNTHETIC) {
		if (bench_open(&B))
			return 1;
		for (int i = 0; i < n; i++)
			if (load(&B, i, &k[i]))
				return 1;
		/* the finalists differ in consts only: the same parameters */
		if (bench_args(&B, k[0]))
			return 1;
		for (int i = 0; i < n; i++)
			if (tlxrt_launch(k[i], NULL, B.args, B.nargs))
				return rtfail(&B, "launch");
		for (int r = 0; r < T->rounds; r++)
			for (int i = 0; i < n; i++)
				if (bench_time(&B, k[i], &times[i * T->rounds + r],
					       &took))
					return 1;
	}
	for (int i = 0; i < n; i++) {
		double m = median(times + i * T->rounds, T->rounds);

		if (tune_write_all(fd, &m, sizeof m))
			return 3;
	}
	free(times);
	return 0;
}

/* ---- the prior's facts --------------------------------------------------- */

/* The facts of cfg for the cost-model prior (prior.c): compiled for the
 * simulator (libtlx's cache keeps it for the sim backend's compile) and
 * loaded there, the grid for the run's arguments (pointers are never
 * read), the warps and shared memory, the dots' tiles from the IR;
 * writes a PriorFacts. */
int
tune_prior_child(tlx_tune *T, const int *cfg, int fd)
{
	Bench B = { .T = T, .fd = fd };
	PriorFacts f = { 0 };
	tlx_ctx *ctx;
	tlx_module *m;
	tlxrt_module *mod;
	tlxrt_kernel *k;
	tlxrt_kernel_info ki;
	const void *img;
	const char *ir;
	size_t size;
	uint32_t grid[3], cluster[3];
	int kind;
	char msg[256];

	if (compile_cfg(T, cfg, TLX_EMIT_IR, &ctx, &m) ||
	    tlx_module_image(m, &img, &size, &kind) || tlx_module_ir(m, &ir))
		return 1;
	if (tlxrt_device_open_errmsg("sim", &B.dev, msg, sizeof msg))
		return fail(&B, "device: %s", msg);
	if (tlxrt_module_load(B.dev, img, size, &mod) ||
	    tlxrt_kernel_get(mod, T->kernel, &k) ||
	    tlxrt_kernel_get_info(k, &ki) || ki.num_params > MAXARGS)
		return rtfail(&B, "the kernel");
	for (int i = 0; i < ki.num_params; i++) {
		tlxrt_param_info pi;

		if (tlxrt_kernel_get_param(k, i, &pi) ||
		    pi.kind == TLXRT_PARAM_TENSOR)
			return fail(&B, "tensor parameters are not supported");
		if (pi.kind == TLXRT_PARAM_POINTER)
			B.args[i] = tlxrt_arg_ptr(4096);
		else if (scalar_arg(&B, &pi, &B.args[i]))
			return 1;
	}
	if (tlxrt_kernel_get_grid(k, NULL, B.args, ki.num_params, grid, cluster))
		return rtfail(&B, "the grid");
	f.programs = (double)grid[0] * grid[1] * grid[2];
	f.warps = ki.total_warps;
	f.smem = ki.smem_bytes;
	tune_prior_dots(ir, &f.flops, &f.bytes);
	return tune_write_all(fd, &f, sizeof f) ? 3 : 0;
}

/* ---- checking ----------------------------------------------------------- */

static float
half_to_float(uint16_t h)
{
	int e = (h >> 10) & 0x1f, m = h & 0x3ff;
	float v = e == 0    ? ldexpf((float)m, -24)
		: e == 31 ? (m ? NAN : INFINITY)
			  : ldexpf((float)(m | 0x400), e - 25);

	return h & 0x8000 ? -v : v;
}

static double
load_float(const unsigned char *p, int type)
{
	float f;
	uint32_t u;
	uint16_t h;
	double d;

	switch (type) {
	case TLXRT_F32: memcpy(&f, p, 4); return f;
	case TLXRT_F64: memcpy(&d, p, 8); return d;
	case TLXRT_BF16:
		u = (uint32_t)(p[0] | p[1] << 8) << 16;
		memcpy(&f, &u, 4);
		return f;
	default:
		memcpy(&h, p, 2);
		return half_to_float(h);
	}
}

/* Does a candidate's output (after the header) match the reference's?
 * Floats: |a - r| <= rtol * (|r| + the largest |r| of the buffer / 64)
 * (rtol 1e-5 for f32/f64, 1e-2 for f16/bf16), NaN matching NaN;
 * everything else (integers, fp8) bitwise. */
int
tune_output_matches(const tlx_tune *T, const unsigned char *out, size_t len)
{
	size_t off = 0;

	if (len != T->reflen)
		return 0;
	if (T->o.backend == TLX_TUNE_SYNTHETIC)
		return !memcmp(out, T->ref, len);
	while (off < len) {
		int32_t ty;
		size_t esz, bytes;
		int isf;
		double rtol, big = 0;

		memcpy(&ty, T->ref + off, 4);
		off += 4;
		esz = (size_t)tlxrt_type_size(ty);
		bytes = esz * (size_t)T->elems;
		isf = ty == TLXRT_F32 || ty == TLXRT_F64 || ty == TLXRT_F16 ||
		      ty == TLXRT_BF16;
		if (!isf) {
			if (memcmp(out + off, T->ref + off, bytes))
				return 0;
			off += bytes;
			continue;
		}
		rtol = esz >= 4 ? 1e-5 : 1e-2;
		for (size_t e = 0; e < bytes; e += esz) {
			double r = fabs(load_float(T->ref + off + e, ty));

			if (r > big && isfinite(r))
				big = r;
		}
		for (size_t e = 0; e < bytes; e += esz) {
			double a = load_float(out + off + e, ty);
			double r = load_float(T->ref + off + e, ty);

			if (isnan(a) && isnan(r))
				continue;
			if (!(fabs(a - r) <= rtol * (fabs(r) + big / 64)) &&
			    a != r)
				return 0;
		}
		off += bytes;
	}
	return 1;
}
