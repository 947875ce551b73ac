/*
 * cuda.c: the CUDA backend -- the only file that knows CUDA.
 *
 * libcuda.so.1 is opened with dlopen when a "cuda" device is opened, so
 * libtlxrt builds and runs where no CUDA toolkit or driver exists.  The few
 * driver types and functions used are declared here from the Driver API's
 * documented signatures (cuda.h is never included).  Each device holds its
 * own dlopen handle and function table: the library needs no global state
 * (dlopen counts references, cuInit may be called any number of times).
 *
 * The device uses the GPU's primary context, made current at every entry
 * (a device may move between threads).  Every driver error is reported
 * with cuGetErrorName and cuGetErrorString, as TLXRT_CUDA | CUresult<<8
 * (TLXRT_NOMEM | CUresult<<8 for CUDA_ERROR_OUT_OF_MEMORY).
 *
 * Launches pass parameters in order: scalars by value in their own type,
 * pointers as 64-bit addresses, tensor descriptors as a CUtensorMap made
 * by cuTensorMapEncodeTiled from the argument (pointer, shape, strides) and
 * the box the kernel's IR records.  The block is 32 * total warps threads,
 * the dynamic shared memory the kernel's allocations, the cluster the
 * kernel's (or the config's) through cuLaunchKernelEx.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt.h"

typedef int CUresult;
typedef int CUdevice;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef unsigned long long CUdeviceptr;

/* CUtensorMap: 128 opaque bytes, 128-byte aligned (CUDA 12.x: 64). */
typedef struct CuTensorMap {
	_Alignas(128) uint64_t opaque[16];
} CuTensorMap;

/* CUlaunchAttribute: an id, padding to 8, a 64-byte value union. */
typedef struct CuLaunchAttr {
	int id;
	char pad[4];
	union {
		char bytes[64];
		void *align;
		struct {
			unsigned x, y, z;
		} cluster;
	} value;
} CuLaunchAttr;

typedef struct CuLaunchConfig {
	unsigned grid[3], block[3];
	unsigned smem;
	CUstream stream;
	CuLaunchAttr *attrs;
	unsigned nattrs;
} CuLaunchConfig;

_Static_assert(sizeof(CuLaunchAttr) == 72, "CUlaunchAttribute layout");

/* CUDA_MEMCPY2D: where, in what memory and at what pitch, each side. */
typedef struct CuMemcpy2D {
	size_t src_x, src_y;
	int src_type;
	const void *src_host;
	CUdeviceptr src;
	void *src_array;
	size_t src_pitch;
	size_t dst_x, dst_y;
	int dst_type;
	void *dst_host;
	CUdeviceptr dst;
	void *dst_array;
	size_t dst_pitch;
	size_t width, height;
} CuMemcpy2D;

_Static_assert(sizeof(CuMemcpy2D) == 128 &&
		       offsetof(CuMemcpy2D, src) == 32 &&
		       offsetof(CuMemcpy2D, dst) == 88,
	       "CUDA_MEMCPY2D layout");

enum {
	CUDA_ERROR_OUT_OF_MEMORY = 2,
	ATTR_MAX_THREADS_PER_BLOCK = 1,
	ATTR_MULTIPROCESSOR_COUNT = 16,
	ATTR_L2_CACHE_SIZE = 38,
	ATTR_CC_MAJOR = 75,
	ATTR_CC_MINOR = 76,
	ATTR_MAX_SMEM_OPTIN = 97,
	FUNC_MAX_DYNAMIC_SMEM = 8,
	LAUNCH_ATTR_CLUSTER_DIMENSION = 4,
	JIT_ERROR_LOG_BUFFER = 5,
	JIT_ERROR_LOG_BUFFER_SIZE = 6,
	/* CUtensorMapDataType */
	TMAP_U8 = 0, TMAP_U16, TMAP_U32, TMAP_I32, TMAP_U64, TMAP_I64,
	TMAP_F16, TMAP_F32, TMAP_F64, TMAP_BF16,
	TMAP_L2_128B = 2,
	MEMORY_DEVICE = 2,  /* CUmemorytype */
};

typedef struct CuApi {
	void *lib;
	CUresult (*Init)(unsigned);
	CUresult (*DriverGetVersion)(int *);
	CUresult (*GetErrorName)(CUresult, const char **);
	CUresult (*GetErrorString)(CUresult, const char **);
	CUresult (*DeviceGetCount)(int *);
	CUresult (*DeviceGet)(CUdevice *, int);
	CUresult (*DeviceGetName)(char *, int, CUdevice);
	CUresult (*DeviceGetAttribute)(int *, int, CUdevice);
	CUresult (*DeviceTotalMem)(size_t *, CUdevice);
	CUresult (*PrimaryCtxRetain)(CUcontext *, CUdevice);
	CUresult (*PrimaryCtxRelease)(CUdevice);
	CUresult (*CtxSetCurrent)(CUcontext);
	CUresult (*CtxSynchronize)(void);
	CUresult (*MemAlloc)(CUdeviceptr *, size_t);
	CUresult (*MemFree)(CUdeviceptr);
	CUresult (*MemcpyHtoD)(CUdeviceptr, const void *, size_t);
	CUresult (*MemcpyDtoH)(void *, CUdeviceptr, size_t);
	CUresult (*MemcpyDtoD)(CUdeviceptr, CUdeviceptr, size_t);
	CUresult (*MemsetD8)(CUdeviceptr, unsigned char, size_t);
	CUresult (*MemsetD8Async)(CUdeviceptr, unsigned char, size_t, CUstream);
	CUresult (*Memcpy2DAsync)(const CuMemcpy2D *, CUstream);
	CUresult (*ModuleLoadDataEx)(CUmodule *, const void *, unsigned,
				     int *, void **);
	CUresult (*ModuleUnload)(CUmodule);
	CUresult (*ModuleGetFunction)(CUfunction *, CUmodule, const char *);
	CUresult (*ModuleGetGlobal)(CUdeviceptr *, size_t *, CUmodule,
				    const char *);
	CUresult (*FuncSetAttribute)(CUfunction, int, int);
	CUresult (*LaunchKernelEx)(const CuLaunchConfig *, CUfunction,
				   void **, void **);
	CUresult (*StreamCreate)(CUstream *, unsigned);
	CUresult (*StreamDestroy)(CUstream);
	CUresult (*StreamSynchronize)(CUstream);
	CUresult (*EventCreate)(CUevent *, unsigned);
	CUresult (*EventDestroy)(CUevent);
	CUresult (*EventRecord)(CUevent, CUstream);
	CUresult (*EventSynchronize)(CUevent);
	CUresult (*EventElapsedTime)(float *, CUevent, CUevent);
	CUresult (*TensorMapEncodeTiled)(CuTensorMap *, int, unsigned, void *,
					 const uint64_t *, const uint64_t *,
					 const unsigned *, const unsigned *,
					 int, int, int, int);
	CUdevice dev;
	CUcontext ctx;
} CuApi;

/* The driver's symbol for each entry (versioned names where the API has
 * them), in the order of the fields above. */
static const struct {
	const char *name, *alt;
	size_t off;
} syms[] = {
#define S(f, n, alt) { n, alt, offsetof(CuApi, f) }
	S(Init, "cuInit", NULL),
	S(DriverGetVersion, "cuDriverGetVersion", NULL),
	S(GetErrorName, "cuGetErrorName", NULL),
	S(GetErrorString, "cuGetErrorString", NULL),
	S(DeviceGetCount, "cuDeviceGetCount", NULL),
	S(DeviceGet, "cuDeviceGet", NULL),
	S(DeviceGetName, "cuDeviceGetName", NULL),
	S(DeviceGetAttribute, "cuDeviceGetAttribute", NULL),
	S(DeviceTotalMem, "cuDeviceTotalMem_v2", NULL),
	S(PrimaryCtxRetain, "cuDevicePrimaryCtxRetain", NULL),
	S(PrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2",
	  "cuDevicePrimaryCtxRelease"),
	S(CtxSetCurrent, "cuCtxSetCurrent", NULL),
	S(CtxSynchronize, "cuCtxSynchronize", NULL),
	S(MemAlloc, "cuMemAlloc_v2", NULL),
	S(MemFree, "cuMemFree_v2", NULL),
	S(MemcpyHtoD, "cuMemcpyHtoD_v2", NULL),
	S(MemcpyDtoH, "cuMemcpyDtoH_v2", NULL),
	S(MemcpyDtoD, "cuMemcpyDtoD_v2", NULL),
	S(MemsetD8, "cuMemsetD8_v2", NULL),
	S(MemsetD8Async, "cuMemsetD8Async", NULL),
	S(Memcpy2DAsync, "cuMemcpy2DAsync_v2", NULL),
	S(ModuleLoadDataEx, "cuModuleLoadDataEx", NULL),
	S(ModuleUnload, "cuModuleUnload", NULL),
	S(ModuleGetFunction, "cuModuleGetFunction", NULL),
	S(ModuleGetGlobal, "cuModuleGetGlobal_v2", NULL),
	S(FuncSetAttribute, "cuFuncSetAttribute", NULL),
	S(LaunchKernelEx, "cuLaunchKernelEx", NULL),
	S(StreamCreate, "cuStreamCreate", NULL),
	S(StreamDestroy, "cuStreamDestroy_v2", "cuStreamDestroy"),
	S(StreamSynchronize, "cuStreamSynchronize", NULL),
	S(EventCreate, "cuEventCreate", NULL),
	S(EventDestroy, "cuEventDestroy_v2", "cuEventDestroy"),
	S(EventRecord, "cuEventRecord", NULL),
	S(EventSynchronize, "cuEventSynchronize", NULL),
	S(EventElapsedTime, "cuEventElapsedTime_v2", "cuEventElapsedTime"),
	S(TensorMapEncodeTiled, "cuTensorMapEncodeTiled", NULL),
#undef S
};

static CuApi *
api(tlxrt_device *dev)
{
	return dev->impl;
}

static int
cu_fail(tlxrt_device *dev, CUresult r, const char *call)
{
	CuApi *a = api(dev);
	const char *name = NULL, *str = NULL;
	int rc = r == CUDA_ERROR_OUT_OF_MEMORY ? TLXRT_NOMEM : TLXRT_CUDA;

	if (a && a->GetErrorName)
		a->GetErrorName(r, &name);
	if (a && a->GetErrorString)
		a->GetErrorString(r, &str);
	rt_error(dev, rc, "%s: %s (%s)", call, name ? name : "CUDA_ERROR_?",
		 str ? str : "unknown error");
	return rc | (int)((unsigned)r << 8);
}

#define CU(dev, call, args)                                                   \
	do {                                                                  \
		CUresult r_ = api(dev)->call args;                             \
		if (r_ != 0)                                                  \
			return cu_fail(dev, r_, "cu" #call);                  \
	} while (0)

/* Makes the device's context current on this thread. */
static int
bind(tlxrt_device *dev)
{
	CU(dev, CtxSetCurrent, (api(dev)->ctx));
	return TLXRT_OK;
}

static int
load_api(tlxrt_device *dev, CuApi *a)
{
	size_t i;

	a->lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!a->lib) {
		const char *e = dlerror();

		return rt_error(dev, TLXRT_NODEVICE, "cannot load libcuda.so.1 "
				"(no NVIDIA driver?): %s", e ? e : "");
	}
	for (i = 0; i < countof(syms); i++) {
		void *p = dlsym(a->lib, syms[i].name);

		if (!p && syms[i].alt)
			p = dlsym(a->lib, syms[i].alt);
		if (!p)
			return rt_error(dev, TLXRT_NODEVICE, "libcuda.so.1 has no "
					"%s (the driver is too old)",
					syms[i].name);
		memcpy((char *)a + syms[i].off, &p, sizeof p);
	}
	return TLXRT_OK;
}

static int
attr(tlxrt_device *dev, int which, int *out)
{
	CU(dev, DeviceGetAttribute, (out, which, api(dev)->dev));
	return TLXRT_OK;
}

static void
cuda_close(tlxrt_device *dev)
{
	CuApi *a = api(dev);

	if (!a)
		return;
	if (a->ctx)
		a->PrimaryCtxRelease(a->dev);
	if (a->lib)
		dlclose(a->lib);
	free(a);
	dev->impl = NULL;
}

/* The GPUs the driver sees: cuInit and cuDeviceGetCount, no context. */
static int
cuda_count(tlxrt_device *dev, int *out)
{
	CuApi *a;
	int rc = TLXRT_OK;
	CUresult r;

	if (!(a = tlx_calloc(1, sizeof *a)))
		return rt_error(dev, TLXRT_NOMEM, "out of memory");
	dev->impl = a;
	if ((rc = load_api(dev, a)) == TLXRT_OK &&
	    ((r = a->Init(0)) != 0 || (r = a->DeviceGetCount(out)) != 0)) {
		cu_fail(dev, r, "cuInit");
		rc = TLXRT_NODEVICE | (int)((unsigned)r << 8);
	}
	if (rc != TLXRT_OK)
		*out = 0;
	cuda_close(dev);
	return rc;
}

static int
cuda_open(tlxrt_device *dev, const char *arg)
{
	tlxrt_device_props *p = &dev->props;
	CuApi *a;
	int count = 0, ordinal = 0, major = 0, minor = 0, rc;
	size_t total = 0;
	CUresult r;

	if (arg) {
		char *end;
		long v = strtol(arg, &end, 10);

		if (!*arg || *end || v < 0 || v > 1024)
			return rt_error(dev, TLXRT_NODEVICE, "bad GPU number "
					"'%s' in 'cuda:%s'", arg, arg);
		ordinal = (int)v;
	}
	if (!(a = tlx_calloc(1, sizeof *a)))
		return rt_error(dev, TLXRT_NOMEM, "out of memory");
	dev->impl = a;
	if ((rc = load_api(dev, a)) != TLXRT_OK)
		goto fail;
	if ((r = a->Init(0)) != 0 || (r = a->DeviceGetCount(&count)) != 0) {
		cu_fail(dev, r, "cuInit");
		rc = TLXRT_NODEVICE | (int)((unsigned)r << 8);
		goto fail;
	}
	if (ordinal >= count) {
		rc = rt_error(dev, TLXRT_NODEVICE, "no GPU %d (the driver sees "
			      "%d)", ordinal, count);
		goto fail;
	}
	if ((r = a->DeviceGet(&a->dev, ordinal)) != 0 ||
	    (r = a->PrimaryCtxRetain(&a->ctx, a->dev)) != 0) {
		rc = cu_fail(dev, r, "cuDevicePrimaryCtxRetain");
		a->ctx = NULL;
		goto fail;
	}
	if ((rc = bind(dev)) != TLXRT_OK)
		goto fail;
	p->backend = TLXRT_BACKEND_CUDA;
	if ((r = a->DeviceGetName(p->name, (int)sizeof p->name, a->dev)) != 0 ||
	    (r = a->DeviceTotalMem(&total, a->dev)) != 0) {
		rc = cu_fail(dev, r, "cuDeviceGetName");
		goto fail;
	}
	p->total_mem = total;
	if ((rc = attr(dev, ATTR_CC_MAJOR, &major)) ||
	    (rc = attr(dev, ATTR_CC_MINOR, &minor)) ||
	    (rc = attr(dev, ATTR_MULTIPROCESSOR_COUNT, &p->sm_count)) ||
	    (rc = attr(dev, ATTR_MAX_SMEM_OPTIN, &p->max_smem_per_block)) ||
	    (rc = attr(dev, ATTR_MAX_THREADS_PER_BLOCK,
		       &p->max_threads_per_block)) ||
	    (rc = attr(dev, ATTR_L2_CACHE_SIZE, &p->l2_size)))
		goto fail;
	if ((r = a->DriverGetVersion(&p->driver_version)) != 0) {
		rc = cu_fail(dev, r, "cuDriverGetVersion");
		goto fail;
	}
	p->sm = major * 10 + minor;
	p->ordinal = ordinal;
	p->max_cluster_size = major >= 9 ? 8 : 1;
	return TLXRT_OK;
fail:
	cuda_close(dev);
	return rc;
}

static int
cuda_sync(tlxrt_device *dev)
{
	int rc = bind(dev);

	if (rc)
		return rc;
	CU(dev, CtxSynchronize, ());
	return TLXRT_OK;
}

static int
cuda_malloc(tlxrt_device *dev, size_t n, tlxrt_ptr *out)
{
	CUdeviceptr p = 0;
	int rc = bind(dev);

	if (rc)
		return rc;
	CU(dev, MemAlloc, (&p, n));
	*out = p;
	return TLXRT_OK;
}

static int
cuda_free(tlxrt_device *dev, tlxrt_ptr p)
{
	int rc = cuda_sync(dev);

	if (rc)
		return rc;
	CU(dev, MemFree, (p));
	return TLXRT_OK;
}

static int
cuda_htod(tlxrt_device *dev, tlxrt_ptr dst, const void *src, size_t n)
{
	int rc = bind(dev);

	if (rc)
		return rc;
	CU(dev, MemcpyHtoD, (dst, src, n));
	return TLXRT_OK;
}

static int
cuda_dtoh(tlxrt_device *dev, void *dst, tlxrt_ptr src, size_t n)
{
	int rc = bind(dev);

	if (rc)
		return rc;
	CU(dev, MemcpyDtoH, (dst, src, n));
	return TLXRT_OK;
}

static int
cuda_dtod(tlxrt_device *dev, tlxrt_ptr dst, tlxrt_ptr src, size_t n)
{
	int rc = bind(dev);

	if (rc)
		return rc;
	CU(dev, MemcpyDtoD, (dst, src, n));
	CU(dev, CtxSynchronize, ());
	return TLXRT_OK;
}

static int
cuda_memset(tlxrt_device *dev, tlxrt_ptr dst, int v, size_t n)
{
	int rc = bind(dev);

	if (rc)
		return rc;
	CU(dev, MemsetD8, (dst, (unsigned char)v, n));
	CU(dev, CtxSynchronize, ());
	return TLXRT_OK;
}

static int
cuda_memset_async(tlxrt_device *dev, tlxrt_ptr dst, int v, size_t n,
		  tlxrt_stream *s)
{
	int rc = bind(dev);

	if (rc)
		return rc;
	CU(dev, MemsetD8Async, (dst, (unsigned char)v, n, s ? s->impl : NULL));
	return TLXRT_OK;
}

static int
cuda_copy2d_async(tlxrt_device *dev, tlxrt_ptr dst, size_t dpitch,
		  tlxrt_ptr src, size_t spitch, size_t width, size_t rows,
		  tlxrt_stream *s)
{
	CuMemcpy2D c;
	int rc = bind(dev);

	if (rc)
		return rc;
	memset(&c, 0, sizeof c);
	c.src_type = c.dst_type = MEMORY_DEVICE;
	c.src = src;
	c.src_pitch = spitch;
	c.dst = dst;
	c.dst_pitch = dpitch;
	c.width = width;
	c.height = rows;
	CU(dev, Memcpy2DAsync, (&c, s ? s->impl : NULL));
	return TLXRT_OK;
}

/* A text global of the loaded module (__tlx_ir, __tlx_meta) through the
 * driver, without its trailing NULs. */
static int
global_text(tlxrt_device *dev, CUmodule mod, const char *name, char **text,
	    size_t *len)
{
	CUdeviceptr p;
	size_t n = 0;
	CUresult r = api(dev)->ModuleGetGlobal(&p, &n, mod, name);

	if (r != 0 || n == 0)
		return TLXRT_NOT_FOUND;
	if (!(*text = tlx_malloc(n + 1)))
		return rt_error(dev, TLXRT_NOMEM, "out of memory");
	if ((r = api(dev)->MemcpyDtoH(*text, p, n)) != 0) {
		free(*text);
		*text = NULL;
		return cu_fail(dev, r, "cuMemcpyDtoH");
	}
	(*text)[n] = 0;
	*len = n;
	while (*len && (*text)[*len - 1] == 0)
		(*len)--;
	return TLXRT_OK;
}

/* What only code generation knows about a kernel, from its __tlx_meta
 * line (meta.c): the block size (tasks may be padded to whole
 * warpgroups), the dynamic shared memory, scratch included, and its
 * specialized entry.  Modules without it keep what the IR says. */
static void
apply_meta(tlxrt_kernel *k)
{
	tlxrt_device *dev = k->mod->dev;
	char *text = NULL;
	size_t len;
	RtMeta *m = &k->meta;

	if (global_text(dev, k->mod->impl, "__tlx_meta", &text, &len) != TLXRT_OK)
		return;
	if (rt_meta_find(text, len, k->fn->name, m) == TLXRT_OK) {
		if (m->threads % 32 == 0 && m->threads <= 1024)
			k->total_warps = (int)(m->threads / 32);
		k->smem = m->smem;
	}
	free(text);
}

/* The specialized entry, unless TLXRT_GENERIC is set (to run the
 * generic one whatever the arguments: tests, A/B measurements) or the
 * module lacks it. */
static void
find_fast(tlxrt_kernel *k)
{
	tlxrt_device *dev = k->mod->dev;
	CUfunction f;

	if (!k->meta.fast[0] || rt_generic_forced() ||
	    api(dev)->ModuleGetFunction(&f, k->mod->impl, k->meta.fast) != 0)
		k->meta.fast[0] = 0;
	else
		k->impl_fast = f;
}

static int
cuda_module_load(tlxrt_module *m, const void *image, size_t n, char **ir,
		 size_t *len)
{
	tlxrt_device *dev = m->dev;
	int kind = rt_image_kind(image, n), rc;
	char log[4096] = "", *buf;
	int opts[2] = { JIT_ERROR_LOG_BUFFER, JIT_ERROR_LOG_BUFFER_SIZE };
	void *vals[2] = { log, (void *)(uintptr_t)sizeof log };
	const char *why = "";
	CUmodule mod = NULL;
	CUresult r;

	if (kind == RT_IMG_TEXT)
		return rt_error(dev, TLXRT_UNSUPPORTED, "the cuda backend loads "
				"compiled modules (cubin or PTX); IR text runs "
				"on the sim backend");
	if ((rc = bind(dev)))
		return rc;
	if (!(buf = tlx_malloc(n + 1)))
		return rt_error(dev, TLXRT_NOMEM, "out of memory");
	memcpy(buf, image, n);
	buf[n] = 0;  /* PTX must be NUL-terminated */
	r = api(dev)->ModuleLoadDataEx(&mod, buf, 2, opts, vals);
	if (r != 0) {
		rc = cu_fail(dev, r, "cuModuleLoadData");
		if (log[0])
			buf_printf(&dev->err, ": %.*s", (int)sizeof log, log);
		free(buf);
		return rc;
	}
	m->impl = mod;
	rc = global_text(dev, mod, "__tlx_ir", ir, len);
	if (rc == TLXRT_NOT_FOUND)
		rc = kind == RT_IMG_ELF
			? rt_image_elf_ir((const uint8_t *)buf, n, ir, len, &why)
			: rt_image_ptx_ir(buf, n, ir, len, &why);
	free(buf);
	if (rc != TLXRT_OK) {
		if (!dev->err.n)
			rt_error(dev, rc, "%s", why);
		api(dev)->ModuleUnload(mod);
		m->impl = NULL;
	}
	return rc;
}

static void
cuda_module_unload(tlxrt_module *m)
{
	if (bind(m->dev) == TLXRT_OK) {
		if (m->impl_generic)
			api(m->dev)->ModuleUnload(m->impl_generic);
		if (m->impl)
			api(m->dev)->ModuleUnload(m->impl);
	}
	m->impl = m->impl_generic = NULL;
}

static int
cuda_kernel_prepare(tlxrt_kernel *k)
{
	tlxrt_device *dev = k->mod->dev;
	CUfunction f;
	CUresult r;
	const char *t;

	apply_meta(k);
	/* a generic entry in __tlx_generic is loaded at its first launch */
	if (!k->meta.fast[0] || !k->meta.generic_ptx) {
		r = api(dev)->ModuleGetFunction(&f, k->mod->impl, k->fn->name);
		if (r != 0) {
			cu_fail(dev, r, "cuModuleGetFunction");
			return rt_error(dev, TLXRT_NOT_FOUND, "kernel '%s' is in "
					"the module's IR but not in its code",
					k->fn->name);
		}
		k->impl = f;
	}
	find_fast(k);
	k->trace = (t = getenv("TLXRT_TRACE")) && *t && strcmp(t, "0");
	return TLXRT_OK;
}

/* The generic entry of a kernel whose cubin carries it as PTX
 * (`__tlx_generic`, tlxc --generic=ptx): the driver assembles the PTX of
 * the module's generic entries at the first launch that needs one (its
 * cache keeps the result for later processes). */
static int
load_generic(tlxrt_kernel *k)
{
	tlxrt_module *m = k->mod;
	tlxrt_device *dev = m->dev;
	char log[4096] = "", *ptx = NULL;
	int opts[2] = { JIT_ERROR_LOG_BUFFER, JIT_ERROR_LOG_BUFFER_SIZE };
	void *vals[2] = { log, (void *)(uintptr_t)sizeof log };
	CUmodule mod;
	CUfunction f;
	size_t len;
	CUresult r;
	int rc;

	if (!m->impl_generic) {
		if ((rc = global_text(dev, m->impl, "__tlx_generic", &ptx, &len)))
			return rc == TLXRT_NOT_FOUND
				? rt_error(dev, rc, "kernel '%s': the module "
					   "has no generic entry", k->fn->name)
				: rc;
		r = api(dev)->ModuleLoadDataEx(&mod, ptx, 2, opts, vals);
		free(ptx);
		if (r != 0) {
			rc = cu_fail(dev, r, "cuModuleLoadData (the generic "
				     "entries)");
			if (log[0])
				buf_printf(&dev->err, ": %.*s", (int)sizeof log, log);
			return rc;
		}
		m->impl_generic = mod;
	}
	r = api(dev)->ModuleGetFunction(&f, m->impl_generic, k->fn->name);
	if (r != 0)
		return cu_fail(dev, r, "cuModuleGetFunction (a generic entry)");
	k->impl = f;
	return TLXRT_OK;
}

static int
tmap_type(TypeKind k)
{
	switch (k) {
	case TY_I32: return TMAP_I32;
	case TY_U32: return TMAP_U32;
	case TY_I64: return TMAP_I64;
	case TY_U64: return TMAP_U64;
	case TY_F16: return TMAP_F16;
	case TY_BF16: return TMAP_BF16;
	case TY_F32: return TMAP_F32;
	case TY_F64: return TMAP_F64;
	case TY_I16: case TY_U16: return TMAP_U16;
	default: return TMAP_U8;
	}
}

/* CUtensorMapSwizzle of a swizzle span in bytes (0: none). */
static int
tmap_swizzle(int bytes)
{
	return bytes == 128 ? 3 : bytes == 64 ? 2 : bytes == 32 ? 1 : 0;
}

/* A CUtensorMap for tensor argument i: the driver wants the innermost
 * dimension first and byte strides of the outer dimensions; the box is
 * what one copy moves (a strip of a swizzled buffer). */
static int
encode(tlxrt_kernel *k, int i, const RtArg *a, CuTensorMap *map)
{
	tlxrt_device *dev = k->mod->dev;
	RtParam *p = &k->params[i];
	const tlxrt_tensor *t = &a->tensor;
	uint64_t dims[5], strides[5];
	unsigned box[5], estr[5];
	int d, r = t->rank, es = sim_kind_bytes(a->ty);

	if (!p->box[0])
		return rt_error(dev, TLXRT_UNSUPPORTED, "argument %d ('%s'): the "
				"kernel never copies through this descriptor, so "
				"its box is unknown", i + 1, p->name);
	for (d = 0; d < r; d++) {
		dims[d] = (uint64_t)t->shape[r - 1 - d];
		box[d] = (unsigned)p->hwbox[r - 1 - d];
		estr[d] = 1;
		if (d < r - 1)
			strides[d] = (uint64_t)(t->strides[r - 2 - d] * es);
	}
	CU(dev, TensorMapEncodeTiled,
	   (map, tmap_type(a->ty), (unsigned)r, (void *)(uintptr_t)t->ptr,
	    dims, strides, box, estr, 0, tmap_swizzle(p->swizzle), TMAP_L2_128B,
	    0));
	return TLXRT_OK;
}

static int
cuda_launch(tlxrt_kernel *k, const uint32_t grid[3], const uint32_t cluster[3],
	    tlxrt_stream *s, const RtArg *args)
{
	tlxrt_device *dev = k->mod->dev;
	int n = k->nall ? k->nall : 1, i, rc, nmaps = 0;
	/* on the stack for the kernels there are (no allocation per launch) */
	CuTensorMap smaps[4], *maps = smaps;
	uint64_t svals[32], *vals = svals;
	void *sptrs[32], **ptrs = sptrs;
	CuLaunchAttr at;
	CuLaunchConfig cfg;
	CUfunction fn = k->impl;
	bool *set = &k->smem_set;
	CUresult r;

	for (i = 0; i < k->nall; i++)
		nmaps += args[i].kind == TLXRT_PARAM_TENSOR;
	if (nmaps > 4)
		maps = aligned_alloc(128, (size_t)nmaps * sizeof *maps);
	if (n > 32) {
		vals = tlx_calloc((size_t)n, sizeof *vals);
		ptrs = tlx_calloc((size_t)n, sizeof *ptrs);
	}
	if (!maps || !vals || !ptrs) {
		rc = rt_error(dev, TLXRT_NOMEM, "out of memory");
		goto out;
	}
	if ((rc = bind(dev)))
		goto out;
	nmaps = 0;
	for (i = 0; i < k->nall; i++) {
		if (args[i].kind == TLXRT_PARAM_TENSOR) {
			/* a derived tensor that makes no map: the generic
			 * entry runs, which does not read it */
			CuTensorMap *mp = &maps[nmaps++];

			if (args[i].invalid)
				memset(mp, 0, sizeof *mp);
			else if ((rc = encode(k, i, &args[i], mp)))
				goto out;
			ptrs[i] = mp;
		} else {
			vals[i] = args[i].bits;
			ptrs[i] = &vals[i];
		}
	}
	if (k->impl_fast && rt_fast_launch_ok(k, &k->meta, args)) {
		fn = k->impl_fast;
		set = &k->smem_set_fast;
	} else if (!fn) {
		if ((rc = load_generic(k)))
			goto out;
		fn = k->impl;
	}
	if (k->smem > 48 * 1024 && !*set) {
		r = api(dev)->FuncSetAttribute(fn, FUNC_MAX_DYNAMIC_SMEM,
					       (int)k->smem);
		if (r != 0) {
			rc = cu_fail(dev, r, "cuFuncSetAttribute");
			goto out;
		}
		*set = true;
	}
	memset(&cfg, 0, sizeof cfg);
	memset(&at, 0, sizeof at);
	for (i = 0; i < 3; i++)
		cfg.grid[i] = grid[i];
	cfg.block[0] = 32u * (unsigned)k->total_warps;
	cfg.block[1] = cfg.block[2] = 1;
	cfg.smem = (unsigned)k->smem;
	cfg.stream = s ? s->impl : NULL;
	if (cluster[0] * cluster[1] * cluster[2] > 1) {
		at.id = LAUNCH_ATTR_CLUSTER_DIMENSION;
		at.value.cluster.x = cluster[0];
		at.value.cluster.y = cluster[1];
		at.value.cluster.z = cluster[2];
		cfg.attrs = &at;
		cfg.nattrs = 1;
	}
	if (k->trace)
		fprintf(stderr, "tlxrt: launch %s grid %ux%ux%u%s block %u smem %u\n",
			fn == k->impl_fast ? k->meta.fast : k->fn->name, cfg.grid[0],
			cfg.grid[1], cfg.grid[2],
			rt_tma_note(k, args, fn == k->impl_fast), cfg.block[0],
			cfg.smem);
	r = api(dev)->LaunchKernelEx(&cfg, fn, ptrs, NULL);
	if (r != 0)
		rc = cu_fail(dev, r, "cuLaunchKernelEx");
out:
	if (maps != smaps)
		free(maps);
	if (vals != svals)
		free(vals);
	if (ptrs != sptrs)
		free(ptrs);
	return rc;
}

static int
cuda_stream_create(tlxrt_stream *s)
{
	CUstream st;
	int rc = bind(s->dev);

	if (rc)
		return rc;
	CU(s->dev, StreamCreate, (&st, 0));
	s->impl = st;
	return TLXRT_OK;
}

static void
cuda_stream_destroy(tlxrt_stream *s)
{
	if (bind(s->dev) == TLXRT_OK)
		api(s->dev)->StreamDestroy(s->impl);
}

static int
cuda_stream_sync(tlxrt_stream *s)
{
	int rc = bind(s->dev);

	if (rc)
		return rc;
	CU(s->dev, StreamSynchronize, (s->impl));
	return TLXRT_OK;
}

static int
cuda_event_create(tlxrt_event *e)
{
	CUevent ev;
	int rc = bind(e->dev);

	if (rc)
		return rc;
	CU(e->dev, EventCreate, (&ev, 0));
	e->impl = ev;
	return TLXRT_OK;
}

static void
cuda_event_destroy(tlxrt_event *e)
{
	if (bind(e->dev) == TLXRT_OK)
		api(e->dev)->EventDestroy(e->impl);
}

static int
cuda_event_record(tlxrt_event *e, tlxrt_stream *s)
{
	int rc = bind(e->dev);

	if (rc)
		return rc;
	CU(e->dev, EventRecord, (e->impl, s ? s->impl : NULL));
	return TLXRT_OK;
}

static int
cuda_event_sync(tlxrt_event *e)
{
	int rc = bind(e->dev);

	if (rc)
		return rc;
	CU(e->dev, EventSynchronize, (e->impl));
	return TLXRT_OK;
}

static int
cuda_event_elapsed(tlxrt_event *a, tlxrt_event *b, float *ms)
{
	int rc = bind(a->dev);

	if (rc)
		return rc;
	CU(a->dev, EventElapsedTime, (ms, a->impl, b->impl));
	return TLXRT_OK;
}

const RtBackend rt_cuda_backend = {
	.name = "cuda",
	.open = cuda_open,
	.count = cuda_count,
	.close = cuda_close,
	.sync = cuda_sync,
	.malloc = cuda_malloc,
	.free = cuda_free,
	.htod = cuda_htod,
	.dtoh = cuda_dtoh,
	.dtod = cuda_dtod,
	.memset = cuda_memset,
	.memset_async = cuda_memset_async,
	.copy2d_async = cuda_copy2d_async,
	.module_load = cuda_module_load,
	.module_unload = cuda_module_unload,
	.kernel_prepare = cuda_kernel_prepare,
	.launch = cuda_launch,
	.stream_create = cuda_stream_create,
	.stream_destroy = cuda_stream_destroy,
	.stream_sync = cuda_stream_sync,
	.event_create = cuda_event_create,
	.event_destroy = cuda_event_destroy,
	.event_record = cuda_event_record,
	.event_sync = cuda_event_sync,
	.event_elapsed = cuda_event_elapsed,
};
