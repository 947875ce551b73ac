/*
 * runtime.c: the public entry points for devices, errors, memory, streams,
 * events and launches.  Each checks its handles and arguments, clears the
 * device's message, and calls the backend.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rt.h"
/* rt_stage_ptx[]: runtime/stage.tlx compiled by the build (Makefile.inc);
 * a build of the runtime from the sources alone (testsuite/gpu/build.sh
 * without the build folder) stages with the backend's 2D copy */
#if defined(__has_include)
#if __has_include("runtime/stage_ptx.h")
#include "runtime/stage_ptx.h"
#define RT_STAGE_KERNELS 1
#endif
#endif

int
tlxrt_libversion_number(void)
{
	return TLXRT_VERSION_NUMBER;
}

const char *
tlxrt_errstr(int rc)
{
	switch (rc & 0xff) {
	case TLXRT_OK: return "not an error";
	case TLXRT_ERROR: return "error";
	case TLXRT_NOMEM: return "out of memory";
	case TLXRT_MISUSE: return "library used incorrectly";
	case TLXRT_INVALID_ARG: return "invalid argument";
	case TLXRT_NOT_FOUND: return "not found";
	case TLXRT_LAUNCH: return "kernel failed";
	case TLXRT_CUDA: return "CUDA driver error";
	case TLXRT_NODEVICE: return "no such device";
	case TLXRT_UNSUPPORTED: return "not supported";
	default: return "unknown error";
	}
}

int
rt_error(tlxrt_device *dev, int rc, const char *fmt, ...)
{
	va_list ap;

	dev->err.n = 0;
	va_start(ap, fmt);
	buf_vprintf(&dev->err, fmt, ap);
	va_end(ap);
	return rc;
}

void
rt_clear(tlxrt_device *dev)
{
	dev->err.n = 0;
	if (dev->err.s)
		dev->err.s[0] = 0;
}

double
rt_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

const char *
tlxrt_errmsg(tlxrt_device *dev)
{
	if (!dev)
		return "no device";
	return dev->err.s ? dev->err.s : "";
}

/* ---- devices ------------------------------------------------------------ */

static int
open_one(const char *name, tlxrt_device **out, Buf *why)
{
	const RtBackend *be = NULL;
	const char *arg = NULL;
	tlxrt_device *dev;
	int rc;

	if (strcmp(name, "sim") == 0) {
		be = &rt_sim_backend;
	} else if (strncmp(name, "sim:", 4) == 0) {
		be = &rt_sim_backend;
		arg = name + 4;
	} else if (strcmp(name, "cuda") == 0) {
		be = &rt_cuda_backend;
	} else if (strncmp(name, "cuda:", 5) == 0) {
		be = &rt_cuda_backend;
		arg = name + 5;
	} else {
		why->n = 0;
		buf_printf(why, "unknown device '%s' (use sim, sim:N, cuda or "
			   "cuda:N)",
			   name);
		return TLXRT_NODEVICE;
	}
	dev = tlx_calloc(1, sizeof *dev);
	if (!dev) {
		why->n = 0;
		buf_puts(why, "out of memory");
		return TLXRT_NOMEM;
	}
	dev->be = be;
	sim_opts_default(&dev->sim);
	rc = be->open(dev, arg);
	if (rc != TLXRT_OK) {
		why->n = 0;
		buf_puts(why, dev->err.s ? dev->err.s : "cannot open the device");
		buf_free(&dev->err);
		free(dev);
		return rc;
	}
	rt_clear(dev);
	*out = dev;
	return TLXRT_OK;
}

int
tlxrt_device_open_errmsg(const char *name, tlxrt_device **out, char *msg,
			 size_t msgsize)
{
	Buf why = { 0 };
	const char *env;
	int rc;

	if (msg && msgsize)
		msg[0] = 0;
	if (!out)
		return TLXRT_MISUSE;
	*out = NULL;
	env = getenv("TLXRT_DEVICE");
	if (!name && env && *env)
		name = env;
	if (name) {
		rc = open_one(name, out, &why);
	} else {
		rc = open_one("cuda", out, &why);
		if (rc != TLXRT_OK)
			rc = open_one("sim", out, &why);
	}
	if (rc != TLXRT_OK && msg && msgsize)
		snprintf(msg, msgsize, "%s", why.s ? why.s : "");
	buf_free(&why);
	return rc;
}

int
tlxrt_device_open(const char *name, tlxrt_device **out)
{
	return tlxrt_device_open_errmsg(name, out, NULL, 0);
}

int
tlxrt_device_count(const char *backend, int *out)
{
	tlxrt_device scratch;
	const RtBackend *be;
	int rc;

	if (!out || !backend)
		return TLXRT_MISUSE;
	*out = 0;
	if (!strcmp(backend, "sim"))
		be = &rt_sim_backend;
	else if (!strcmp(backend, "cuda"))
		be = &rt_cuda_backend;
	else
		return TLXRT_NODEVICE;
	memset(&scratch, 0, sizeof scratch);
	scratch.be = be;
	rc = be->count(&scratch, out);
	buf_free(&scratch.err);
	return rc;
}

int
tlxrt_device_close(tlxrt_device *dev)
{
	if (!dev)
		return TLXRT_OK;
	if (dev->stage_mod) {
		tlxrt_module_unload(dev->stage_mod);
		dev->stage_mod = NULL;
	}
	if (dev->nobjects)
		return rt_error(dev, TLXRT_MISUSE, "the device still has %d "
				"modules, streams or events: release them first",
				dev->nobjects);
	dev->be->sync(dev);
	if (dev->ws)
		dev->be->free(dev, dev->ws);
	if (dev->stage)
		dev->be->free(dev, dev->stage);
	dev->be->close(dev);
	buf_free(&dev->err);
	free(dev);
	return TLXRT_OK;
}

int
tlxrt_device_get_props(tlxrt_device *dev, tlxrt_device_props *out)
{
	if (!dev || !out)
		return TLXRT_MISUSE;
	rt_clear(dev);
	*out = dev->props;
	return TLXRT_OK;
}

int
tlxrt_device_set_option(tlxrt_device *dev, int opt, int64_t value)
{
	SimOpts *o;

	if (!dev)
		return TLXRT_MISUSE;
	rt_clear(dev);
	if (dev->be != &rt_sim_backend)
		return rt_error(dev, TLXRT_UNSUPPORTED, "simulator options "
				"need the sim backend, not %s", dev->be->name);
	o = &dev->sim;
	switch (opt) {
	case TLXRT_SIM_SHUFFLE:
		if (value < -1)
			break;
		o->seed = value;
		return TLXRT_OK;
	case TLXRT_SIM_MAX_STEPS:
		if (value < 1)
			break;
		o->max_steps = (uint64_t)value;
		return TLXRT_OK;
	case TLXRT_SIM_ASYNC_DELAY:
		if (value < 1 || value > 1000000)
			break;
		o->async_delay = (uint32_t)value;
		return TLXRT_OK;
	case TLXRT_SIM_SM:
		if (value != 90 && value != 100)
			break;
		o->sm = (int)value;
		o->smem_limit = target_get(o->sm)->smem;
		dev->props.sm = (int)value;
		dev->props.max_smem_per_block = (int)o->smem_limit;
		snprintf(dev->props.name, sizeof dev->props.name,
			 "tlx simulator (sm_%d)", (int)value);
		return TLXRT_OK;
	case TLXRT_SIM_RESIDENT:
		if (value < 1 || value > 1024)
			break;
		o->resident = (uint32_t)value;
		return TLXRT_OK;
	case TLXRT_SIM_CHECK_FENCES:
		if (value != 0 && value != 1)
			break;
		o->check_fences = value != 0;
		return TLXRT_OK;
	case TLXRT_SIM_SM_COUNT:
		if (value < 1 || value > 1024)
			break;
		dev->props.sm_count = (int)value;
		return TLXRT_OK;
	case TLXRT_SIM_REDUCE_ORDER:
		if (value < 0 || value > 4)
			break;
		o->reduce_order = (int)value;
		return TLXRT_OK;
	case TLXRT_SIM_ATOMIC_ORDER:
		if (value != 0 && value != 1)
			break;
		o->atomic_reverse = value != 0;
		return TLXRT_OK;
	default:
		return rt_error(dev, TLXRT_INVALID_ARG, "unknown option %d", opt);
	}
	return rt_error(dev, TLXRT_INVALID_ARG, "option %d: value %lld is out "
			"of range", opt, (long long)value);
}

int
tlxrt_device_synchronize(tlxrt_device *dev)
{
	if (!dev)
		return TLXRT_MISUSE;
	rt_clear(dev);
	return dev->be->sync(dev);
}

/* ---- memory -------------------------------------------------------------- */

int
tlxrt_malloc(tlxrt_device *dev, size_t size, tlxrt_ptr *out)
{
	if (!dev || !out)
		return TLXRT_MISUSE;
	rt_clear(dev);
	*out = 0;
	if (size == 0)
		return rt_error(dev, TLXRT_INVALID_ARG, "tlxrt_malloc of 0 bytes");
	return dev->be->malloc(dev, size, out);
}

int
tlxrt_free(tlxrt_device *dev, tlxrt_ptr p)
{
	if (!dev)
		return TLXRT_MISUSE;
	rt_clear(dev);
	if (!p)
		return TLXRT_OK;
	return dev->be->free(dev, p);
}

int
tlxrt_memcpy_htod(tlxrt_device *dev, tlxrt_ptr dst, const void *src, size_t n)
{
	if (!dev)
		return TLXRT_MISUSE;
	rt_clear(dev);
	if (!n)
		return TLXRT_OK;
	if (!src)
		return rt_error(dev, TLXRT_INVALID_ARG, "tlxrt_memcpy_htod: NULL "
				"host source");
	return dev->be->htod(dev, dst, src, n);
}

int
tlxrt_memcpy_dtoh(tlxrt_device *dev, void *dst, tlxrt_ptr src, size_t n)
{
	if (!dev)
		return TLXRT_MISUSE;
	rt_clear(dev);
	if (!n)
		return TLXRT_OK;
	if (!dst)
		return rt_error(dev, TLXRT_INVALID_ARG, "tlxrt_memcpy_dtoh: NULL "
				"host destination");
	return dev->be->dtoh(dev, dst, src, n);
}

int
tlxrt_memcpy_dtod(tlxrt_device *dev, tlxrt_ptr dst, tlxrt_ptr src, size_t n)
{
	if (!dev)
		return TLXRT_MISUSE;
	rt_clear(dev);
	if (!n)
		return TLXRT_OK;
	return dev->be->dtod(dev, dst, src, n);
}

int
tlxrt_memset(tlxrt_device *dev, tlxrt_ptr dst, int value, size_t n)
{
	if (!dev)
		return TLXRT_MISUSE;
	rt_clear(dev);
	if (!n)
		return TLXRT_OK;
	return dev->be->memset(dev, dst, value, n);
}

int
tlxrt_memset_async(tlxrt_device *dev, tlxrt_ptr dst, int value, size_t n,
		   tlxrt_stream *s)
{
	if (!dev || (s && s->dev != dev))
		return TLXRT_MISUSE;
	rt_clear(dev);
	if (!n)
		return TLXRT_OK;
	return dev->be->memset_async(dev, dst, value, n, s);
}

int
tlxrt_device_get_steps(tlxrt_device *dev, uint64_t *out)
{
	if (!dev || !out)
		return TLXRT_MISUSE;
	rt_clear(dev);
	if (dev->be != &rt_sim_backend)
		return rt_error(dev, TLXRT_UNSUPPORTED, "a step count needs the "
				"sim backend, not %s", dev->be->name);
	*out = ((SimMem *)dev->impl)->steps;
	return TLXRT_OK;
}

/* ---- launches -------------------------------------------------------------- */

/* Memory of a launch on stream s that grows to need bytes: one buffer
 * per stream suffices, as the stream orders its launches; it grows after
 * the stream's work is done, and is never shared between streams. */
static int
scratch(tlxrt_device *dev, tlxrt_stream *s, tlxrt_ptr *p, size_t *size,
	size_t need)
{
	int rc;

	if (need <= *size)
		return TLXRT_OK;
	if (*p) {
		if ((rc = s ? dev->be->stream_sync(s) : dev->be->sync(dev)))
			return rc;
		dev->be->free(dev, *p);
		*p = 0;
		*size = 0;
	}
	need = need < 256 ? 256 : need;
	if ((rc = dev->be->malloc(dev, need, p)))
		return rc;
	*size = need;
	return TLXRT_OK;
}

/* The workspace of a launch on stream s (NULL: none): zeroed, on the
 * stream, before the kernel runs. */
static int
workspace(tlxrt_kernel *k, tlxrt_stream *s, RtArg *ra)
{
	tlxrt_device *dev = k->mod->dev;
	tlxrt_ptr *ws = s ? &s->ws : &dev->ws;
	int rc = scratch(dev, s, ws, s ? &s->ws_size : &dev->ws_size,
			 (size_t)k->ws_bytes);

	if (rc)
		return rc;
	ra[k->ws_param].bits = *ws;
	return dev->be->memset_async(dev, *ws, 0, (size_t)k->ws_bytes, s);
}

#ifdef RT_STAGE_KERNELS
/* runtime/stage.tlx's kernel for units of u bytes (2, 4 or 8), its
 * module loaded at the first use; NULL where it does not load. */
static tlxrt_kernel *
stage_kernel(tlxrt_device *dev, size_t u)
{
	static const char *const names[] = { "stage_u16", "stage_u32",
					      "stage_u64" };
	tlxrt_kernel *k;

	if (!dev->stage_mod && !dev->stage_failed &&
	    tlxrt_module_load(dev, rt_stage_ptx, sizeof rt_stage_ptx,
			      &dev->stage_mod)) {
		dev->stage_failed = true;
		dev->stage_mod = NULL;
		rt_clear(dev);
	}
	if (!dev->stage_mod ||
	    tlxrt_kernel_get(dev->stage_mod, names[u == 2 ? 0 : u == 4 ? 1 : 2],
			     &k))
		return NULL;
	return k;
}
#else
static tlxrt_kernel *
stage_kernel(tlxrt_device *dev, size_t u)
{
	(void)dev;
	(void)u;
	return NULL;
}
#endif

/* One staged tensor's rows: `rows` rows of `width` bytes, `spitch` apart
 * at src, into rows `dpitch` apart at dst (16-byte aligned).  On either
 * backend a kernel of runtime/stage.tlx copies them, in units of the
 * widest of 8, 4 and 2 bytes that the source rows allow, and fills each
 * row to 16 bytes with zeros; rows of single bytes, and copies too large
 * for its grid, go to the backend's copy2d_async (cuMemcpy2DAsync).  The
 * kernel is about 1.5x faster than cuMemcpy2DAsync on an H100.
 * TLXRT_STAGE=copy2d takes the backend's copy always. */
static int
stage_copy(tlxrt_device *dev, tlxrt_ptr dst, size_t dpitch, tlxrt_ptr src,
	   size_t spitch, size_t width, size_t rows, tlxrt_stream *s)
{
	tlxrt_launch_config cfg;
	tlxrt_kernel *k;
	tlxrt_arg a[7];
	size_t u = 8, wide = (width + 15) / 16 * 16;
	const char *e = getenv("TLXRT_STAGE");

	while (u > 1 && ((src | spitch | width) & (u - 1)))
		u /= 2;
	/* each program copies 512 bytes of a row, 65535 of them at most (the
	 * grid's y), and rows + 7 stays an i32 (the grid function's) */
	if (u < 2 || (e && !strcmp(e, "copy2d")) || (dst | dpitch) & 15 ||
	    wide > dpitch || rows > INT32_MAX - 8 ||
	    wide > (size_t)65535 * 512 || !(k = stage_kernel(dev, u)))
		return dev->be->copy2d_async(dev, dst, dpitch, src, spitch,
					     width, rows, s);
	a[0] = tlxrt_arg_ptr(src);
	a[1] = tlxrt_arg_ptr(dst);
	a[2] = tlxrt_arg_i32((int32_t)rows);
	a[3] = tlxrt_arg_i32((int32_t)(width / u));
	a[4] = tlxrt_arg_i32((int32_t)(wide / u));
	a[5] = tlxrt_arg_i64((int64_t)(spitch / u));
	a[6] = tlxrt_arg_i64((int64_t)(dpitch / u));
	memset(&cfg, 0, sizeof cfg);
	cfg.stream = s;
	return tlxrt_launch(k, &cfg, a, 7);
}

/* Staging: a derived tensor (pipeline-loads' TMA loop over plain
 * pointers) that makes no tensor map only because its rows are not
 * 16-byte aligned -- an odd K or N of a bf16 GEMM -- is copied, on the
 * stream before the kernel, into scratch memory with rows 16 bytes
 * aligned, and the tensor map is made of the copy: the launch runs the
 * TMA loop at the price of one pass over the operand, where it would
 * run the generic entry's realigned copies.  The copy reads what the
 * kernel's masks let it read (the tensor's bounds are the masks'); the
 * kernel must not write the operand, as for any pipelined load.  Off
 * with TLXRT_STAGE=0, and where TLXRT_GENERIC=1 makes tma.ok 0. */
static int
stage(tlxrt_kernel *k, tlxrt_stream *s, RtArg *ra)
{
	tlxrt_device *dev = k->mod->dev;
	tlxrt_tensor st[8];
	int idx[8], n = 0, i, rc;
	size_t off[8], need = 0, es;
	const char *e;
	tlxrt_ptr *p = s ? &s->stage : &dev->stage;

	for (i = k->nparams; i < k->nall && n < 8; i++) {
		if (!rt_stageable(k, i, &ra[i], &st[n]))
			continue;
		es = (size_t)tlxrt_type_size(k->params[i].type);
		/* at most 2^44 bytes a tensor (rows and pitch could make
		 * 2^72), or not staged */
		if ((uint64_t)st[n].shape[0] >
		    (1ull << 44) / ((uint64_t)st[n].strides[0] * es))
			continue;
		off[n] = need;
		need += ((size_t)st[n].shape[0] * (size_t)st[n].strides[0] * es +
			 255) / 256 * 256;
		idx[n++] = i;
	}
	if (!n || ((e = getenv("TLXRT_STAGE")) && !strcmp(e, "0")) ||
	    rt_generic_forced())
		return TLXRT_OK;
	/* no memory for the copies: the generic entry, as without them */
	if (scratch(dev, s, p, s ? &s->stage_size : &dev->stage_size, need))
		return TLXRT_OK;
	for (i = 0; i < n; i++) {
		RtArg *a = &ra[idx[i]];

		es = (size_t)tlxrt_type_size(k->params[idx[i]].type);
		st[i].ptr = *p + off[i];
		rc = stage_copy(dev, st[i].ptr,
				(size_t)st[i].strides[0] * es, a->tensor.ptr,
				(size_t)a->tensor.strides[0] * es,
				(size_t)a->tensor.shape[1] * es,
				(size_t)a->tensor.shape[0], s);
		if (rc) {
			/* the copy's message names the staging kernel: say
			 * which argument of which kernel it was copying */
			char *m = dev->err.n ? strndup(dev->err.s, dev->err.n)
					     : NULL;

			rt_error(dev, rc, "copying %s (%lld x %lld, rows %lld "
				 "bytes apart) into aligned rows for kernel "
				 "'%s': %s", k->params[idx[i]].name,
				 (long long)a->tensor.shape[0],
				 (long long)a->tensor.shape[1],
				 (long long)(a->tensor.strides[0] * (int64_t)es),
				 k->fn->name, m ? m : tlxrt_errstr(rc));
			free(m);
			return rc;
		}
		if (k->trace)
			fprintf(stderr, "tlxrt: stage %s (%lld x %lld, rows %lld "
				"bytes apart at 0x%llx) %lld bytes apart\n",
				k->params[idx[i]].name, (long long)a->tensor.shape[0],
				(long long)a->tensor.shape[1],
				(long long)(a->tensor.strides[0] * (int64_t)es),
				(unsigned long long)a->tensor.ptr,
				(long long)(st[i].strides[0] * (int64_t)es));
		a->tensor = st[i];
		a->invalid = false;
	}
	rt_tma_ok_update(k, ra);
	return TLXRT_OK;
}

int
tlxrt_launch(tlxrt_kernel *k, const tlxrt_launch_config *cfg,
	     const tlxrt_arg *args, int nargs)
{
	tlxrt_device *dev;
	uint32_t grid[3], cluster[3];
	RtArg sra[32], *ra = sra;  /* no allocation per launch, mostly */
	int rc;

	if (!k)
		return TLXRT_MISUSE;
	dev = k->mod->dev;
	rt_clear(dev);
	if (cfg && cfg->stream && cfg->stream->dev != dev)
		return rt_error(dev, TLXRT_MISUSE, "the stream belongs to "
				"another device");
	if (k->nall > 32)
		ra = tlx_calloc((size_t)k->nall, sizeof *ra);
	else
		memset(sra, 0, (size_t)(k->nall ? k->nall : 1) * sizeof *sra);
	if (!ra)
		return rt_error(dev, TLXRT_NOMEM, "out of memory");
	rc = rt_args_check(k, cfg, args, nargs, ra, grid, cluster);
	if (rc == TLXRT_OK && k->ws_param >= 0)
		rc = workspace(k, cfg ? cfg->stream : NULL, ra);
	if (rc == TLXRT_OK && k->nall > k->nparams)
		rc = stage(k, cfg ? cfg->stream : NULL, ra);
	if (rc == TLXRT_OK)
		rc = dev->be->launch(k, grid, cluster, cfg ? cfg->stream : NULL,
				     ra);
	if (ra != sra)
		free(ra);
	return rc;
}

int
tlxrt_kernel_get_grid(tlxrt_kernel *k, const tlxrt_launch_config *cfg,
		      const tlxrt_arg *args, int nargs, uint32_t grid[3],
		      uint32_t cluster[3])
{
	RtArg *ra;
	int rc;

	if (!k || !grid || !cluster)
		return TLXRT_MISUSE;
	rt_clear(k->mod->dev);
	if (!(ra = tlx_calloc((size_t)k->nall + 1, sizeof *ra)))
		return rt_error(k->mod->dev, TLXRT_NOMEM, "out of memory");
	rc = rt_args_check(k, cfg, args, nargs, ra, grid, cluster);
	free(ra);
	return rc;
}

/* ---- streams and events ---------------------------------------------------- */

int
tlxrt_stream_create(tlxrt_device *dev, tlxrt_stream **out)
{
	tlxrt_stream *s;
	int rc;

	if (!dev || !out)
		return TLXRT_MISUSE;
	rt_clear(dev);
	*out = NULL;
	if (!(s = tlx_calloc(1, sizeof *s)))
		return rt_error(dev, TLXRT_NOMEM, "out of memory");
	s->dev = dev;
	if ((rc = dev->be->stream_create(s)) != TLXRT_OK) {
		free(s);
		return rc;
	}
	dev->nobjects++;
	*out = s;
	return TLXRT_OK;
}

int
tlxrt_stream_wrap(tlxrt_device *dev, void *native, tlxrt_stream **out)
{
	tlxrt_stream *s;

	if (!dev || !out)
		return TLXRT_MISUSE;
	rt_clear(dev);
	*out = NULL;
	if (!(s = calloc(1, sizeof *s)))
		return rt_error(dev, TLXRT_NOMEM, "out of memory");
	s->dev = dev;
	s->impl = native;
	s->borrowed = true;
	dev->nobjects++;
	*out = s;
	return TLXRT_OK;
}

int
tlxrt_stream_destroy(tlxrt_stream *s)
{
	if (!s)
		return TLXRT_OK;
	rt_clear(s->dev);
	s->dev->be->stream_sync(s);
	if (s->ws)
		s->dev->be->free(s->dev, s->ws);
	if (s->stage)
		s->dev->be->free(s->dev, s->stage);
	if (!s->borrowed)
		s->dev->be->stream_destroy(s);
	s->dev->nobjects--;
	free(s);
	return TLXRT_OK;
}

int
tlxrt_stream_synchronize(tlxrt_stream *s)
{
	if (!s)
		return TLXRT_MISUSE;
	rt_clear(s->dev);
	return s->dev->be->stream_sync(s);
}

int
tlxrt_event_create(tlxrt_device *dev, tlxrt_event **out)
{
	tlxrt_event *e;
	int rc;

	if (!dev || !out)
		return TLXRT_MISUSE;
	rt_clear(dev);
	*out = NULL;
	if (!(e = tlx_calloc(1, sizeof *e)))
		return rt_error(dev, TLXRT_NOMEM, "out of memory");
	e->dev = dev;
	if ((rc = dev->be->event_create(e)) != TLXRT_OK) {
		free(e);
		return rc;
	}
	dev->nobjects++;
	*out = e;
	return TLXRT_OK;
}

int
tlxrt_event_destroy(tlxrt_event *e)
{
	if (!e)
		return TLXRT_OK;
	rt_clear(e->dev);
	e->dev->be->event_destroy(e);
	e->dev->nobjects--;
	free(e);
	return TLXRT_OK;
}

int
tlxrt_event_record(tlxrt_event *e, tlxrt_stream *s)
{
	int rc;

	if (!e)
		return TLXRT_MISUSE;
	rt_clear(e->dev);
	if (s && s->dev != e->dev)
		return rt_error(e->dev, TLXRT_MISUSE, "the event and the stream "
				"belong to different devices");
	if ((rc = e->dev->be->event_record(e, s)) == TLXRT_OK)
		e->recorded = true;
	return rc;
}

int
tlxrt_event_synchronize(tlxrt_event *e)
{
	if (!e)
		return TLXRT_MISUSE;
	rt_clear(e->dev);
	if (!e->recorded)
		return rt_error(e->dev, TLXRT_MISUSE, "the event was never "
				"recorded");
	return e->dev->be->event_sync(e);
}

int
tlxrt_event_elapsed_ms(tlxrt_event *start, tlxrt_event *end, float *ms)
{
	if (!start || !end || !ms)
		return TLXRT_MISUSE;
	rt_clear(start->dev);
	if (start->dev != end->dev)
		return rt_error(start->dev, TLXRT_MISUSE, "the events belong to "
				"different devices");
	if (!start->recorded || !end->recorded)
		return rt_error(start->dev, TLXRT_MISUSE, "both events must be "
				"recorded");
	return start->dev->be->event_elapsed(start, end, ms);
}
