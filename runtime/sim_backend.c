/*
 * sim_backend.c: the simulator as a device.  Memory is the simulator's
 * address space (SimMem); launches run to completion, in order, before
 * tlxrt_launch returns, so streams are trivially ordered and an event
 * records the host clock.  Options come from the environment when the
 * device opens (TLXRT_SIM_*) and from tlxrt_device_set_option.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt.h"

static SimMem *
mem_of(tlxrt_device *dev)
{
	return dev->impl;
}

static int
env_int(const char *name, int64_t lo, int64_t hi, int64_t *out)
{
	const char *s = getenv(name);
	char *end;
	long long v;

	if (!s || !*s)
		return 0;
	v = strtoll(s, &end, 10);
	if (*end || v < lo || v > hi)
		return -1;
	*out = v;
	return 1;
}

/* TLXRT_SIM_DEVICES: the simulated devices (1 to 64; 1 when unset). */
static int
sim_count(tlxrt_device *dev, int *out)
{
	int64_t v = 1;

	if (env_int("TLXRT_SIM_DEVICES", 1, 64, &v) < 0)
		return rt_error(dev, TLXRT_INVALID_ARG, "TLXRT_SIM_DEVICES='%s' "
				"is not a valid value (1 to 64)",
				getenv("TLXRT_SIM_DEVICES"));
	*out = (int)v;
	return TLXRT_OK;
}

static int
sim_open(tlxrt_device *dev, const char *arg)
{
	static const struct {
		const char *env;
		int opt;
		int64_t lo, hi;
	} envs[] = {
		{ "TLXRT_SIM_SHUFFLE", TLXRT_SIM_SHUFFLE, -1, INT64_MAX },
		{ "TLXRT_SIM_MAX_STEPS", TLXRT_SIM_MAX_STEPS, 1, INT64_MAX },
		{ "TLXRT_SIM_ASYNC_DELAY", TLXRT_SIM_ASYNC_DELAY, 1, 1000000 },
		{ "TLXRT_SIM_SM", TLXRT_SIM_SM, 90, 100 },
		{ "TLXRT_SIM_RESIDENT", TLXRT_SIM_RESIDENT, 1, 1024 },
		{ "TLXRT_SIM_CHECK_FENCES", TLXRT_SIM_CHECK_FENCES, 0, 1 },
		{ "TLXRT_SIM_SM_COUNT", TLXRT_SIM_SM_COUNT, 1, 1024 },
		{ "TLXRT_SIM_REDUCE_ORDER", TLXRT_SIM_REDUCE_ORDER, 0, 4 },
		{ "TLXRT_SIM_ATOMIC_ORDER", TLXRT_SIM_ATOMIC_ORDER, 0, 1 },
	};
	SimMem *m;
	size_t i;
	int count, ordinal = 0, rc;

	if ((rc = sim_count(dev, &count)) != TLXRT_OK)
		return rc;
	if (arg) {
		char *end;
		long v = strtol(arg, &end, 10);

		if (!*arg || *end || v < 0)
			return rt_error(dev, TLXRT_NODEVICE, "bad device number "
					"'%s' in 'sim:%s'", arg, arg);
		if (v >= count)
			return rt_error(dev, TLXRT_NODEVICE, "no simulated "
					"device %ld (TLXRT_SIM_DEVICES is %d)",
					v, count);
		ordinal = (int)v;
	}
	if (!(m = tlx_calloc(1, sizeof *m)))
		return rt_error(dev, TLXRT_NOMEM, "out of memory");
	sim_mem_init(m, 16ull << 30);
	dev->impl = m;
	dev->props.backend = TLXRT_BACKEND_SIM;
	dev->props.sm = 90;
	snprintf(dev->props.name, sizeof dev->props.name,
		 "tlx simulator (sm_90)");
	dev->props.sm_count = 132;
	dev->props.ordinal = ordinal;
	dev->props.max_smem_per_block = (int)target_get(dev->props.sm)->smem;
	dev->props.max_threads_per_block = 1024;
	dev->props.max_cluster_size = 8;
	dev->props.total_mem = m->limit;
	for (i = 0; i < countof(envs); i++) {
		int64_t v;
		int r = env_int(envs[i].env, envs[i].lo, envs[i].hi, &v);

		if (r < 0 || (r > 0 && tlxrt_device_set_option(
					       dev, envs[i].opt, v) != TLXRT_OK)) {
			sim_mem_fini(m);
			free(m);
			return rt_error(dev, TLXRT_INVALID_ARG, "%s='%s' is not a "
					"valid value", envs[i].env,
					getenv(envs[i].env));
		}
	}
	return TLXRT_OK;
}

static void
sim_close(tlxrt_device *dev)
{
	sim_mem_fini(mem_of(dev));
	free(dev->impl);
	dev->impl = NULL;
}

static int
sim_sync(tlxrt_device *dev)
{
	(void)dev;
	return TLXRT_OK;
}

static int
sim_malloc(tlxrt_device *dev, size_t n, tlxrt_ptr *out)
{
	int rc = sim_mem_alloc(mem_of(dev), n, out);

	if (rc == SIM_OK)
		return TLXRT_OK;
	return rt_error(dev, TLXRT_NOMEM, "cannot allocate %zu bytes of "
			"simulated device memory (%llu in use of %llu)", n,
			(unsigned long long)mem_of(dev)->live,
			(unsigned long long)mem_of(dev)->limit);
}

static int
sim_free(tlxrt_device *dev, tlxrt_ptr p)
{
	if (sim_mem_free(mem_of(dev), p) == SIM_OK)
		return TLXRT_OK;
	return rt_error(dev, TLXRT_INVALID_ARG, "tlxrt_free: 0x%llx is not an "
			"allocation of this device (or was freed already)",
			(unsigned long long)p);
}

static int
bad_range(tlxrt_device *dev, const char *what, tlxrt_ptr p, size_t n)
{
	Buf d = { 0 };
	int rc;

	sim_mem_describe(mem_of(dev), p, n, &d);
	rc = rt_error(dev, TLXRT_INVALID_ARG, "%s: %zu bytes at 0x%llx are not "
		      "inside one allocation: the address %s", what, n,
		      (unsigned long long)p, d.s ? d.s : "");
	buf_free(&d);
	return rc;
}

static int
sim_htod(tlxrt_device *dev, tlxrt_ptr dst, const void *src, size_t n)
{
	if (sim_mem_write(mem_of(dev), dst, src, n) != SIM_OK)
		return bad_range(dev, "tlxrt_memcpy_htod", dst, n);
	return TLXRT_OK;
}

static int
sim_dtoh(tlxrt_device *dev, void *dst, tlxrt_ptr src, size_t n)
{
	if (sim_mem_read(mem_of(dev), dst, src, n) != SIM_OK)
		return bad_range(dev, "tlxrt_memcpy_dtoh", src, n);
	return TLXRT_OK;
}

static int
sim_dtod(tlxrt_device *dev, tlxrt_ptr dst, tlxrt_ptr src, size_t n)
{
	if (!sim_mem_find(mem_of(dev), src, n))
		return bad_range(dev, "tlxrt_memcpy_dtod (source)", src, n);
	if (sim_mem_copy(mem_of(dev), dst, src, n) != SIM_OK)
		return bad_range(dev, "tlxrt_memcpy_dtod", dst, n);
	return TLXRT_OK;
}

static int
sim_memset(tlxrt_device *dev, tlxrt_ptr dst, int v, size_t n)
{
	if (sim_mem_fill(mem_of(dev), dst, v, n) != SIM_OK)
		return bad_range(dev, "tlxrt_memset", dst, n);
	return TLXRT_OK;
}

static int
sim_memset_async(tlxrt_device *dev, tlxrt_ptr dst, int v, size_t n,
		 tlxrt_stream *s)
{
	(void)s;  /* the simulator runs each launch when it is made */
	return sim_memset(dev, dst, v, n);
}

static int
sim_copy2d_async(tlxrt_device *dev, tlxrt_ptr dst, size_t dpitch,
		 tlxrt_ptr src, size_t spitch, size_t width, size_t rows,
		 tlxrt_stream *s)
{
	size_t r;

	(void)s;
	for (r = 0; r < rows; r++) {
		if (!sim_mem_find(mem_of(dev), src + r * spitch, width))
			return bad_range(dev, "a staged tensor's copy (source)",
					 src + r * spitch, width);
		if (sim_mem_copy(mem_of(dev), dst + r * dpitch, src + r * spitch,
				 width) != SIM_OK)
			return bad_range(dev, "a staged tensor's copy",
					 dst + r * dpitch, width);
	}
	return TLXRT_OK;
}

static int
sim_module_load(tlxrt_module *m, const void *image, size_t n, char **ir,
		size_t *len)
{
	const char *why = "";
	int rc;

	switch (rt_image_kind(image, n)) {
	case RT_IMG_ELF:
		rc = rt_image_elf_ir(image, n, ir, len, &why);
		break;
	case RT_IMG_PTX:
		rc = rt_image_ptx_ir(image, n, ir, len, &why);
		break;
	default:
		if (!(*ir = tlx_malloc(n)))
			return rt_error(m->dev, TLXRT_NOMEM, "out of memory");
		memcpy(*ir, image, n);
		*len = n;
		return TLXRT_OK;
	}
	if (rc != TLXRT_OK)
		return rt_error(m->dev, rc, "%s", why);
	return TLXRT_OK;
}

static void
sim_module_unload(tlxrt_module *m)
{
	(void)m;
}

static int
sim_kernel_prepare(tlxrt_kernel *k)
{
	const char *t = getenv("TLXRT_TRACE");

	k->trace = t && *t && strcmp(t, "0");
	return TLXRT_OK;
}

/* Would the CUDA backend launch the kernel's fast entry with these
 * arguments (the IR's fast.* attributes, as __tlx_meta has them)?  The
 * simulator's entry_fast is that; TLXRT_GENERIC=1 makes it false, as it
 * makes the CUDA backend launch the generic entry. */
static bool
fast_entry(tlxrt_kernel *k, const RtArg *args)
{
	RtMeta m = { 0 };
	m.align = (uint64_t)attr_int(&k->fn->attrs, "fast.align", 0);
	m.div = (uint64_t)attr_int(&k->fn->attrs, "fast.div", 0);
	m.divisor = attr_int(&k->fn->attrs, "fast.divisor", 16);
	m.eq1 = (uint64_t)attr_int(&k->fn->attrs, "fast.eq1", 0);
	m.tma_only = (uint64_t)attr_int(&k->fn->attrs, "fast.tma_only", 0);
	if (!(m.align | m.div | m.eq1) || rt_generic_forced())
		return false;
	m.fast[0] = 'y';
	return rt_fast_launch_ok(k, &m, args);
}

static int
sim_launch_kernel(tlxrt_kernel *k, const uint32_t grid[3],
		  const uint32_t cluster[3], tlxrt_stream *s,
		  const RtArg *args)
{
	tlxrt_device *dev = k->mod->dev;
	SimLaunchCfg cfg;
	SimArg *sa;
	Buf err = { 0 };
	int rc;

	(void)s;
	memcpy(cfg.grid, grid, sizeof cfg.grid);
	memcpy(cfg.cluster, cluster, sizeof cfg.cluster);
	cfg.fast_entry = fast_entry(k, args);
	if (k->trace)  /* as the cuda backend's, for the entry it would run */
		fprintf(stderr, "tlxrt: launch %s%s grid %ux%ux%u%s (sim%s%s)\n",
			k->fn->name, cfg.fast_entry ? "$fast" : "", grid[0],
			grid[1], grid[2], rt_tma_note(k, args, cfg.fast_entry),
			!cfg.fast_entry && k->fn_generic ? ", " : "",
			!cfg.fast_entry && k->fn_generic ? k->fn_generic->name
							   : "");
	if (!(sa = tlx_calloc((size_t)k->nall + 1, sizeof *sa)))
		return rt_error(dev, TLXRT_NOMEM, "out of memory");
	rt_args_to_sim(k, args, sa);
	/* the generic entry of a kernel laid out for it runs its own IR */
	rc = sim_launch(mem_of(dev), k->mod->ir,
			cfg.fast_entry || !k->fn_generic ? k->fn : k->fn_generic,
			sa, &cfg, &dev->sim, &err);
	free(sa);
	switch (rc) {
	case SIM_OK:
		rc = TLXRT_OK;
		break;
	case SIM_NOMEM:
		rc = rt_error(dev, TLXRT_NOMEM, "%s", err.s ? err.s : "");
		break;
	case SIM_INVALID:
		rc = rt_error(dev, TLXRT_INVALID_ARG, "%s", err.s ? err.s : "");
		break;
	default:
		rc = rt_error(dev, TLXRT_LAUNCH, "%s", err.s ? err.s : "");
		break;
	}
	buf_free(&err);
	return rc;
}

static int
sim_stream_create(tlxrt_stream *s)
{
	(void)s;
	return TLXRT_OK;
}

static void
sim_stream_destroy(tlxrt_stream *s)
{
	(void)s;
}

static int
sim_stream_sync(tlxrt_stream *s)
{
	(void)s;
	return TLXRT_OK;
}

static int
sim_event_create(tlxrt_event *e)
{
	(void)e;
	return TLXRT_OK;
}

static void
sim_event_destroy(tlxrt_event *e)
{
	(void)e;
}

static int
sim_event_record(tlxrt_event *e, tlxrt_stream *s)
{
	(void)s;
	e->host_ms = rt_now_ms();
	return TLXRT_OK;
}

static int
sim_event_sync(tlxrt_event *e)
{
	(void)e;
	return TLXRT_OK;
}

static int
sim_event_elapsed(tlxrt_event *a, tlxrt_event *b, float *ms)
{
	*ms = (float)(b->host_ms - a->host_ms);
	return TLXRT_OK;
}

const RtBackend rt_sim_backend = {
	.name = "sim",
	.open = sim_open,
	.count = sim_count,
	.close = sim_close,
	.sync = sim_sync,
	.malloc = sim_malloc,
	.free = sim_free,
	.htod = sim_htod,
	.dtoh = sim_dtoh,
	.dtod = sim_dtod,
	.memset = sim_memset,
	.memset_async = sim_memset_async,
	.copy2d_async = sim_copy2d_async,
	.module_load = sim_module_load,
	.module_unload = sim_module_unload,
	.kernel_prepare = sim_kernel_prepare,
	.launch = sim_launch_kernel,
	.stream_create = sim_stream_create,
	.stream_destroy = sim_stream_destroy,
	.stream_sync = sim_stream_sync,
	.event_create = sim_event_create,
	.event_destroy = sim_event_destroy,
	.event_record = sim_event_record,
	.event_sync = sim_event_sync,
	.event_elapsed = sim_event_elapsed,
};
