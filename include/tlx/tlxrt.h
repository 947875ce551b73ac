/*
 * tlxrt.h: libtlxrt, the tlx runtime.  Loads modules compiled by tlxc and
 * launches their kernels on one of two backends behind the same API:
 *
 *   "cuda"  an NVIDIA GPU through the CUDA Driver API (libcuda.so.1 is
 *           loaded with dlopen at run time; nothing links against it);
 *   "sim"   the tile-IR simulator: runs every program of the grid on the
 *           CPU with exact numerics and a checked memory model, and reports
 *           out-of-bounds accesses, reads of unwritten memory, deadlocks and
 *           barrier misuse with the kernel's source location.
 *
 * This header is the specification: nothing that is not declared here is
 * API.  docs/runtime.md is the guide.
 *
 * LIFE CYCLE
 *
 *   1. tlxrt_device_open(name, &dev)         pick a backend ("sim", "cuda",
 *                                            or NULL: $TLXRT_DEVICE, else
 *                                            cuda, else sim)
 *   2. tlxrt_malloc / tlxrt_memcpy_htod      device memory and its contents
 *   3. tlxrt_module_load(dev, image, n, &m)  prepare: parse the module and
 *      (or tlxrt_module_load_file)           its metadata
 *   4. tlxrt_kernel_get(m, "name", &k)       a borrowed handle, valid until
 *                                            the module is unloaded
 *   5. tlxrt_launch(k, &cfg, args, nargs)    step: any number of times
 *   6. tlxrt_device_synchronize(dev)         wait for the launches
 *      (or streams and events)
 *   7. tlxrt_memcpy_dtoh / tlxrt_free        read results, release memory
 *   8. tlxrt_module_unload(m)                finalize
 *   9. tlxrt_device_close(dev)               every object made from the
 *                                            device must be gone by now
 *
 * CONVENTIONS
 *
 *   - Every function returns an int status, TLXRT_OK (0) on success;
 *     results come back through a trailing OUT pointer.  Extended codes
 *     are primary | (sub << 8): TLXRT_CUDA carries the driver's CUresult.
 *     Take the primary code with (rc & 0xff).
 *   - tlxrt_errmsg(dev) explains the last failure of any call on the device
 *     or on an object made from it.  The text is owned by the device and
 *     stays valid until the next call on it.  tlxrt_errstr(rc) is static.
 *   - Destructors (_destroy, _close, _unload, tlxrt_free of 0) accept NULL.
 *   - Threads: a device and every object made from it may be used by one
 *     thread at a time (serialize calls yourself); distinct devices are
 *     independent.  The library has no global state.
 *   - Device pointers are tlxrt_ptr (a 64-bit device address).  On the sim
 *     backend they are simulated addresses that the host cannot
 *     dereference: copy with tlxrt_memcpy_*.
 */
#ifndef TLX_TLXRT_H
#define TLX_TLXRT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define TLXRT_API __attribute__((visibility("default")))
#else
#define TLXRT_API
#endif

/* ---- version ------------------------------------------------------ */

#define TLXRT_VERSION "0.1.0"
/* major * 1000000 + minor * 1000 + patch */
#define TLXRT_VERSION_NUMBER 1000

/*
 * Library version.  FUNCTION.
 * Returns TLXRT_VERSION_NUMBER of the library actually linked (compare with
 * the macro to detect a header/library mismatch).  Never fails.
 */
TLXRT_API int tlxrt_libversion_number(void);

/* ---- status codes ------------------------------------------------- */

enum {
	TLXRT_OK = 0,
	TLXRT_ERROR = 1,        /* generic failure */
	TLXRT_NOMEM = 2,        /* host or device memory exhausted */
	TLXRT_MISUSE = 3,       /* API used wrongly (NULL handle, bad state) */
	TLXRT_INVALID_ARG = 4,  /* a bad argument, launch argument or config */
	TLXRT_NOT_FOUND = 5,    /* no such kernel, file or symbol */
	TLXRT_LAUNCH = 6,       /* a kernel failed: out of bounds, read of
				   unwritten memory, deadlock, assert, ... */
	TLXRT_CUDA = 7,         /* a driver error: rc >> 8 is the CUresult */
	TLXRT_NODEVICE = 8,     /* no such backend, or no GPU / driver */
	TLXRT_UNSUPPORTED = 9,  /* not available on this backend or image */
};

/*
 * Status code name.  FUNCTION.
 * A static English description of a status code ("out of memory"); the
 * extended bits are ignored.  Never NULL.
 */
TLXRT_API const char *tlxrt_errstr(int rc);

/* ---- handles ------------------------------------------------------ */

typedef uint64_t tlxrt_ptr;                 /* a device address */
typedef struct tlxrt_device tlxrt_device;   /* a backend instance */
typedef struct tlxrt_module tlxrt_module;   /* a loaded module */
typedef struct tlxrt_kernel tlxrt_kernel;   /* a kernel of a module */
typedef struct tlxrt_stream tlxrt_stream;   /* an ordered work queue */
typedef struct tlxrt_event tlxrt_event;     /* a point in a stream */

/* ---- devices ------------------------------------------------------ */

enum { TLXRT_BACKEND_SIM = 1, TLXRT_BACKEND_CUDA = 2 };

/*
 * Open a device.  CONSTRUCTOR.
 * name: "sim", "cuda" (the first GPU; "cuda:N" for GPU N; "sim:N" for
 * simulated device N of TLXRT_SIM_DEVICES), or NULL: the
 * value of the environment variable TLXRT_DEVICE when set, else "cuda"
 * when a driver and a GPU are present, else "sim".
 * OUT *out: a new device owned by the caller (tlxrt_device_close).
 * Errors: TLXRT_NODEVICE (unknown name; "cuda" asked for explicitly but no
 * driver or GPU; the message says why), TLXRT_CUDA, TLXRT_NOMEM,
 * TLXRT_MISUSE (out is NULL).  On failure *out is NULL; there is no device
 * to ask for a message, so the reason is printed nowhere: open "sim" to
 * get a device, or call tlxrt_device_open_errmsg.
 */
TLXRT_API int tlxrt_device_open(const char *name, tlxrt_device **out);

/*
 * Why the last tlxrt_device_open failed.  FUNCTION.
 * Like tlxrt_device_open, but on failure writes a NUL-terminated message
 * into msg (at most msgsize bytes; msg may be NULL when msgsize is 0).
 */
TLXRT_API int tlxrt_device_open_errmsg(const char *name, tlxrt_device **out,
				       char *msg, size_t msgsize);

/*
 * Close a device.  DESTRUCTOR.
 * Waits for outstanding work, then releases the device and its backend
 * resources; allocations still held are freed with it.  Accepts NULL.
 * Errors: TLXRT_MISUSE while modules, streams or events made from the
 * device are alive (the device then stays open: release them first).
 */
TLXRT_API int tlxrt_device_close(tlxrt_device *dev);

/*
 * The last error message.  METHOD.
 * Explains the last failing call on dev or on any object made from it
 * (module, kernel, stream, event, launch).  Owned by the device; valid
 * until the next call on it.  "" when the last call succeeded or set no
 * message; "no device" for NULL.
 */
TLXRT_API const char *tlxrt_errmsg(tlxrt_device *dev);

typedef struct tlxrt_device_props {
	int backend;             /* TLXRT_BACKEND_SIM or TLXRT_BACKEND_CUDA */
	char name[128];          /* "tlx simulator (sm_90)", "NVIDIA H200" */
	int sm;                  /* compute capability * 10: 90, 100 */
	int sm_count;            /* streaming multiprocessors */
	int max_smem_per_block;  /* bytes of shared memory a kernel may use
				    (opt-in limit: 232448 on sm_90) */
	int max_threads_per_block;
	int max_cluster_size;    /* portable limit: 8 */
	uint64_t total_mem;      /* bytes of device memory */
	int l2_size;             /* bytes of L2 cache (0 on the simulator) */
	int driver_version;      /* cuDriverGetVersion: 12080 is 12.8; 0 on
				    the simulator */
	int ordinal;             /* which device of its backend: N of
				    "cuda:N" or "sim:N" (0 for "cuda", "sim") */
} tlxrt_device_props;

/*
 * Device properties.  METHOD.
 * OUT *out: filled in.  Errors: TLXRT_MISUSE (NULL argument).
 */
TLXRT_API int tlxrt_device_get_props(tlxrt_device *dev,
				     tlxrt_device_props *out);

/*
 * How many devices a backend presents.  FUNCTION.
 * backend: "sim" or "cuda".  OUT *out: the GPUs the driver sees (after
 * CUDA_VISIBLE_DEVICES; no context is made), or for "sim" the value of
 * the environment variable TLXRT_SIM_DEVICES (1 to 64; 1 when unset): the
 * simulated devices "sim:0" ... "sim:N-1", all alike, each with its own
 * memory.  Errors: TLXRT_NODEVICE (unknown backend; no driver: *out is
 * 0), TLXRT_INVALID_ARG (a bad TLXRT_SIM_DEVICES), TLXRT_MISUSE.
 */
TLXRT_API int tlxrt_device_count(const char *backend, int *out);

/* Simulator options (tlxrt_device_set_option).  Each also has an
 * environment variable read when the device is opened. */
enum {
	/* Run programs, tasks and async completions in an order shuffled by
	 * this seed (>= 0); -1 (default): deterministic round-robin.
	 * Env: TLXRT_SIM_SHUFFLE=<seed>. */
	TLXRT_SIM_SHUFFLE = 1,
	/* Stop a launch after this many executed operations (an infinite
	 * loop).  Default 200000000.  Env: TLXRT_SIM_MAX_STEPS. */
	TLXRT_SIM_MAX_STEPS = 2,
	/* Scheduler steps before an async copy (TMA, cp.async) lands.
	 * Default 64.  Env: TLXRT_SIM_ASYNC_DELAY. */
	TLXRT_SIM_ASYNC_DELAY = 3,
	/* The emulated target: 90 (default) or 100.  Env: TLXRT_SIM_SM. */
	TLXRT_SIM_SM = 4,
	/* Clusters resident at once (run interleaved).  Default 1.
	 * Env: TLXRT_SIM_RESIDENT. */
	TLXRT_SIM_RESIDENT = 5,
	/* 1: report async-proxy reads (tma_store, dot_async) of shared
	 * memory written by smem_store with no fence_async_shared in
	 * between, in tile-level kernels too (laid-out kernels, what a
	 * cubin holds, are always checked).  Default 0.
	 * Env: TLXRT_SIM_CHECK_FENCES. */
	TLXRT_SIM_CHECK_FENCES = 6,
	/* The multiprocessors the simulated device reports (props.sm_count:
	 * how many programs a kernel over a static schedule launches).
	 * Default 132.  Env: TLXRT_SIM_SM_COUNT. */
	TLXRT_SIM_SM_COUNT = 7,
	/* How float sum and prod reductions combine their elements and
	 * dots of f16, bf16 and fp8 add their products: 0 (default) in
	 * index order, rounding each step to f32; 1 in reverse index order
	 * (another order the language allows); 2 in index order in f64,
	 * rounded once (no partial result overflows f32); 3 as 0, except
	 * that the dots code generation puts on tensor cores add as those
	 * do (each mma's products and accumulator aligned to the largest,
	 * cut to 26 bits of it, summed, rounded toward zero); 4 as 0, except
	 * that float sums and products of a laid-out tile (what a cubin
	 * holds) combine in the order code generation's reduction does
	 * (registers, then lanes, then warps, each as a tree).  1 to 4 are
	 * second opinions on whether a value depends on the order.
	 * Env: TLXRT_SIM_REDUCE_ORDER. */
	TLXRT_SIM_REDUCE_ORDER = 8,
	/* The order in which the elements of one atomic or atomic_cas
	 * update memory, and in which the programs (clusters) start when
	 * not shuffled: 0 (default) in index order, 1 in reverse.  Updates
	 * of one address in an order-dependent way (xchg, cas, float add)
	 * may give other results the other way: a second opinion on
	 * whether a program's results depend on it.
	 * Env: TLXRT_SIM_ATOMIC_ORDER. */
	TLXRT_SIM_ATOMIC_ORDER = 9,
};

/*
 * Set a simulator option.  METHOD.
 * opt: a TLXRT_SIM_* constant; value as documented there.  Takes effect
 * at the next launch.  Errors: TLXRT_UNSUPPORTED (not the sim backend),
 * TLXRT_INVALID_ARG (unknown option or value out of range).
 */
TLXRT_API int tlxrt_device_set_option(tlxrt_device *dev, int opt,
				      int64_t value);

/*
 * Wait for all work.  METHOD.
 * Blocks until every launch and copy submitted to any stream of the device
 * has finished.  Errors: TLXRT_CUDA (including faults of kernels that ran
 * asynchronously).
 */
TLXRT_API int tlxrt_device_synchronize(tlxrt_device *dev);

/* ---- memory ------------------------------------------------------- */

/*
 * Allocate device memory.  METHOD.
 * OUT *out: the address of size bytes (aligned to 256), owned by the
 * caller (tlxrt_free).  size 0 is TLXRT_INVALID_ARG.  The contents are
 * undefined; on the sim backend they count as unwritten, so a kernel
 * reading them before anything wrote them fails.
 * Errors: TLXRT_NOMEM, TLXRT_CUDA, TLXRT_INVALID_ARG.
 */
TLXRT_API int tlxrt_malloc(tlxrt_device *dev, size_t size, tlxrt_ptr *out);

/*
 * Free device memory.  DESTRUCTOR.
 * p: an address returned by tlxrt_malloc, or 0 (no-op).  Waits for the
 * device first.  Errors: TLXRT_INVALID_ARG (not an allocation of this
 * device, or freed already).
 */
TLXRT_API int tlxrt_free(tlxrt_device *dev, tlxrt_ptr p);

/*
 * Copy host to device, device to host, device to device; fill.  METHOD.
 * Synchronous: each waits for all work submitted to the device before it,
 * and is finished when it returns.  The range must lie inside one
 * allocation (checked on the sim backend).  memset writes `value`
 * (converted to unsigned char) into n bytes.
 * Errors: TLXRT_INVALID_ARG (range outside an allocation, NULL host
 * pointer with n > 0), TLXRT_CUDA.
 */
TLXRT_API int tlxrt_memcpy_htod(tlxrt_device *dev, tlxrt_ptr dst,
				const void *src, size_t n);
TLXRT_API int tlxrt_memcpy_dtoh(tlxrt_device *dev, void *dst, tlxrt_ptr src,
				size_t n);
TLXRT_API int tlxrt_memcpy_dtod(tlxrt_device *dev, tlxrt_ptr dst,
				tlxrt_ptr src, size_t n);
TLXRT_API int tlxrt_memset(tlxrt_device *dev, tlxrt_ptr dst, int value,
			   size_t n);

/*
 * Fill on a stream.  METHOD.
 * Queues a fill of n bytes with `value` on s (NULL: the default stream)
 * and returns; later work on the stream sees it (a timed launch after an
 * L2 flush, with nothing between them on the host).  The sim backend fills
 * at once.  Errors: as tlxrt_memset.
 */
TLXRT_API int tlxrt_memset_async(tlxrt_device *dev, tlxrt_ptr dst, int value,
				 size_t n, tlxrt_stream *s);

/*
 * Operations the simulator executed.  METHOD.
 * OUT *out: the operations every launch on the device has executed so far
 * (the step count TLXRT_SIM_MAX_STEPS limits per launch): deterministic,
 * so the difference around a launch is a cost that does not depend on the
 * machine (tlx-tune's on the sim backend).  Errors: TLXRT_UNSUPPORTED
 * (not the sim backend), TLXRT_MISUSE.
 */
TLXRT_API int tlxrt_device_get_steps(tlxrt_device *dev, uint64_t *out);

/* ---- modules and kernels ----------------------------------------- */

/*
 * Load a module from memory.  CONSTRUCTOR.
 * image: what tlxc produced: a cubin (ELF) or PTX that embeds the module's
 * IR as the global byte array __tlx_ir (its metadata: parameters, warps,
 * cluster, grid function, const values), or -- sim backend only -- the IR
 * text itself (tlxc --emit=ir).  The image is copied; the caller keeps
 * ownership of its buffer.
 * OUT *out: a new module owned by the caller (tlxrt_module_unload).
 * Errors: TLXRT_INVALID_ARG (unrecognized or malformed image, or IR that
 * does not parse: the message has file:line:col), TLXRT_NOT_FOUND (no
 * __tlx_ir in the image), TLXRT_UNSUPPORTED (IR text on the cuda backend),
 * TLXRT_CUDA, TLXRT_NOMEM.
 */
TLXRT_API int tlxrt_module_load(tlxrt_device *dev, const void *image,
				size_t size, tlxrt_module **out);

/*
 * Load a module from a file.  CONSTRUCTOR.
 * As tlxrt_module_load with the file's contents.  Errors as there, plus
 * TLXRT_NOT_FOUND when the file cannot be read.
 */
TLXRT_API int tlxrt_module_load_file(tlxrt_device *dev, const char *path,
				     tlxrt_module **out);

/*
 * Unload a module.  DESTRUCTOR.
 * Waits for the device, then releases the module; its kernel handles
 * become invalid.  Accepts NULL.
 */
TLXRT_API int tlxrt_module_unload(tlxrt_module *m);

/*
 * Kernels of a module.  METHOD.
 * tlxrt_module_num_kernels: OUT *out the number of kernels.
 * tlxrt_module_get_kernel: OUT *out the i-th (0-based), borrowed: valid
 * until the module is unloaded.  Errors: TLXRT_INVALID_ARG (i out of
 * range), TLXRT_MISUSE.
 */
TLXRT_API int tlxrt_module_num_kernels(tlxrt_module *m, int *out);
TLXRT_API int tlxrt_module_get_kernel(tlxrt_module *m, int i,
				      tlxrt_kernel **out);

/*
 * Find a kernel by name.  METHOD.
 * OUT *out: borrowed, valid until the module is unloaded.
 * Errors: TLXRT_NOT_FOUND (the message lists the kernels), TLXRT_MISUSE.
 */
TLXRT_API int tlxrt_kernel_get(tlxrt_module *m, const char *name,
			       tlxrt_kernel **out);

/* Element types (parameters, tensors). */
enum {
	TLXRT_TYPE_NONE = 0,
	TLXRT_I1, TLXRT_I8, TLXRT_I16, TLXRT_I32, TLXRT_I64,
	TLXRT_U8, TLXRT_U16, TLXRT_U32, TLXRT_U64,
	TLXRT_F8E4M3, TLXRT_F8E5M2, TLXRT_F16, TLXRT_BF16, TLXRT_F32,
	TLXRT_F64,
};

/*
 * Element type facts.  FUNCTION.
 * tlxrt_type_name: "f32", "bf16", ...; "?" when unknown.
 * tlxrt_type_size: bytes of one element (i1: 1); 0 when unknown.
 */
TLXRT_API const char *tlxrt_type_name(int type);
TLXRT_API int tlxrt_type_size(int type);

/* Parameter kinds. */
enum {
	TLXRT_PARAM_SCALAR = 1,  /* a number passed by value */
	TLXRT_PARAM_POINTER = 2, /* a device pointer to elements of `type` */
	TLXRT_PARAM_TENSOR = 3,  /* a tensor descriptor (tma<...>) */
};

typedef struct tlxrt_param_info {
	const char *name;  /* the parameter's name ("x"); owned by the module */
	int kind;          /* TLXRT_PARAM_* */
	int type;          /* scalar type, pointee or tensor element: TLXRT_* */
	int rank;          /* tensors: 1..5; else 0 */
	int64_t box[5];    /* tensors: the box the kernel copies (outermost
			      first); all 0 while the kernel never copies */
	int swizzle;       /* tensors: the swizzle span of the shared buffers
			      it copies, in bytes (32, 64, 128; 0: none),
			      which the CUDA backend encodes */
} tlxrt_param_info;

typedef struct tlxrt_kernel_info {
	const char *name;       /* owned by the module */
	int num_params;
	int warps;              /* warps of the default task */
	int total_warps;        /* warps of the whole CTA (with tasks) */
	int cluster[3];         /* cluster shape (1, 1, 1 without clusters) */
	int smem_bytes;         /* shared memory the kernel allocates */
	int has_grid;           /* 1: a grid function computes the grid */
	int num_consts;         /* const parameters it was specialized with */
} tlxrt_kernel_info;

/*
 * Kernel facts.  METHOD.
 * OUT *out: filled in; strings are owned by the module.
 */
TLXRT_API int tlxrt_kernel_get_info(tlxrt_kernel *k, tlxrt_kernel_info *out);

/*
 * One parameter.  METHOD.
 * i: 0-based.  OUT *out: filled in.  Errors: TLXRT_INVALID_ARG.
 */
TLXRT_API int tlxrt_kernel_get_param(tlxrt_kernel *k, int i,
				     tlxrt_param_info *out);

typedef struct tlxrt_const_info {
	const char *name;  /* "BLOCK"; owned by the module */
	int is_float;      /* 1: the value is f; 0: i (booleans are 0/1) */
	int64_t i;
	double f;
} tlxrt_const_info;

/*
 * One specialization constant (const parameter).  METHOD.
 * i: 0-based, in the module's order.  Errors: TLXRT_INVALID_ARG.
 */
TLXRT_API int tlxrt_kernel_get_const(tlxrt_kernel *k, int i,
				     tlxrt_const_info *out);

/* ---- arguments ----------------------------------------------------- */

enum {
	TLXRT_ARG_I32 = 1, TLXRT_ARG_I64, TLXRT_ARG_U32, TLXRT_ARG_U64,
	TLXRT_ARG_F32, TLXRT_ARG_F64, TLXRT_ARG_PTR, TLXRT_ARG_TENSOR,
};

/* A tensor for a tma<...> parameter: row-major order, outermost first;
 * strides in elements (the innermost must be 1). */
typedef struct tlxrt_tensor {
	tlxrt_ptr ptr;
	int type;           /* element type, TLXRT_* */
	int rank;           /* 1..5 */
	int64_t shape[5];
	int64_t strides[5];
} tlxrt_tensor;

typedef struct tlxrt_arg {
	int kind;  /* TLXRT_ARG_* */
	union {
		int32_t i32;
		int64_t i64;
		uint32_t u32;
		uint64_t u64;
		float f32;
		double f64;
		tlxrt_ptr ptr;
		tlxrt_tensor tensor;
	} v;
} tlxrt_arg;

/* Argument constructors (header-only). */
static inline tlxrt_arg
tlxrt_arg_i32(int32_t x)
{
	tlxrt_arg a;

	memset(&a, 0, sizeof a);
	a.kind = TLXRT_ARG_I32;
	a.v.i32 = x;
	return a;
}

static inline tlxrt_arg
tlxrt_arg_i64(int64_t x)
{
	tlxrt_arg a;

	memset(&a, 0, sizeof a);
	a.kind = TLXRT_ARG_I64;
	a.v.i64 = x;
	return a;
}

static inline tlxrt_arg
tlxrt_arg_u32(uint32_t x)
{
	tlxrt_arg a;

	memset(&a, 0, sizeof a);
	a.kind = TLXRT_ARG_U32;
	a.v.u32 = x;
	return a;
}

static inline tlxrt_arg
tlxrt_arg_u64(uint64_t x)
{
	tlxrt_arg a;

	memset(&a, 0, sizeof a);
	a.kind = TLXRT_ARG_U64;
	a.v.u64 = x;
	return a;
}

static inline tlxrt_arg
tlxrt_arg_f32(float x)
{
	tlxrt_arg a;

	memset(&a, 0, sizeof a);
	a.kind = TLXRT_ARG_F32;
	a.v.f32 = x;
	return a;
}

static inline tlxrt_arg
tlxrt_arg_f64(double x)
{
	tlxrt_arg a;

	memset(&a, 0, sizeof a);
	a.kind = TLXRT_ARG_F64;
	a.v.f64 = x;
	return a;
}

static inline tlxrt_arg
tlxrt_arg_ptr(tlxrt_ptr p)
{
	tlxrt_arg a;

	memset(&a, 0, sizeof a);
	a.kind = TLXRT_ARG_PTR;
	a.v.ptr = p;
	return a;
}

/* shape and strides: rank entries, outermost first; strides NULL means
 * contiguous row-major (the products wrap: a launch refuses the strides
 * of a shape too large). */
static inline tlxrt_arg
tlxrt_arg_tensor(tlxrt_ptr p, int type, int rank, const int64_t *shape,
		 const int64_t *strides)
{
	tlxrt_arg a;
	int i;

	memset(&a, 0, sizeof a);
	a.kind = TLXRT_ARG_TENSOR;
	a.v.tensor.ptr = p;
	a.v.tensor.type = type;
	a.v.tensor.rank = rank;
	for (i = 0; i < rank && i < 5; i++)
		a.v.tensor.shape[i] = shape[i];
	for (i = (rank < 5 ? rank : 5) - 1; i >= 0; i--)
		a.v.tensor.strides[i] =
			strides ? strides[i]
			: i == rank - 1
				? 1
				: (int64_t)((uint64_t)a.v.tensor.strides[i + 1] *
					    (uint64_t)a.v.tensor.shape[i + 1]);
	return a;
}

/* ---- launches ------------------------------------------------------ */

typedef struct tlxrt_launch_config {
	/* Programs (CTAs) per axis.  All three 0: evaluate the kernel's grid
	 * function on the arguments. */
	uint32_t grid[3];
	/* CTAs per cluster per axis.  All three 0: the kernel's own cluster
	 * shape. */
	uint32_t cluster[3];
	tlxrt_stream *stream;  /* NULL: the device's default stream */
} tlxrt_launch_config;

/*
 * Launch a kernel.  METHOD.
 * cfg: may be NULL (grid from the grid function, the kernel's cluster,
 * the default stream).  args: nargs arguments, one per parameter, checked
 * against the kernel's metadata before anything runs: count, kind and
 * type; pointers non-null and aligned to their element; tensors valid for
 * a TMA descriptor (base 16-byte aligned, innermost stride 1, the other
 * strides multiples of 16 bytes, rank 1..5, box dimensions <= 256 and a
 * box row of a multiple of 16 bytes); the grid free of zero dimensions and
 * a multiple of the cluster; shared memory within the device's limit.
 * The cuda backend launches asynchronously in the stream; the sim backend
 * runs the kernel to completion before returning.
 * Errors: TLXRT_INVALID_ARG (the message names the argument:
 * "argument 2 ('y'): expected a pointer to f32, got i32"), TLXRT_LAUNCH
 * (sim: the kernel failed; the message has the source location, the
 * program and the task), TLXRT_CUDA, TLXRT_NOMEM, TLXRT_MISUSE.
 */
TLXRT_API int tlxrt_launch(tlxrt_kernel *k, const tlxrt_launch_config *cfg,
			   const tlxrt_arg *args, int nargs);

/*
 * The grid and cluster a launch would have.  METHOD.
 * cfg, args, nargs: as tlxrt_launch takes them, checked the same way
 * (pointers need only be non-null and aligned: nothing is read).  OUT
 * grid[3], cluster[3]: the programs per axis (from the grid function when
 * cfg gives none) and the cluster shape.  Launches nothing.  tlx-tune's
 * cost-model prior counts waves with it.  Errors: as tlxrt_launch's
 * checks.
 */
TLXRT_API int tlxrt_kernel_get_grid(tlxrt_kernel *k,
				    const tlxrt_launch_config *cfg,
				    const tlxrt_arg *args, int nargs,
				    uint32_t grid[3] /* OUT */,
				    uint32_t cluster[3] /* OUT */);

/* ---- streams and events ------------------------------------------- */

/*
 * Create a stream.  CONSTRUCTOR.
 * OUT *out: owned by the caller (tlxrt_stream_destroy).  Work in one
 * stream runs in order.  Errors: TLXRT_CUDA, TLXRT_NOMEM.
 */
TLXRT_API int tlxrt_stream_create(tlxrt_device *dev, tlxrt_stream **out);

/*
 * Wrap a stream made elsewhere.  CONSTRUCTOR.
 * native: a CUstream of the device's context -- the primary context of
 * its GPU, which the CUDA runtime uses too, so PyTorch's
 * torch.cuda.current_stream().cuda_stream qualifies -- to which launches,
 * copies and events on the returned stream are queued; NULL: the legacy
 * default stream.  The sim backend ignores it.
 * OUT *out: a stream owned by the caller (tlxrt_stream_destroy, which
 * waits for its work and releases the handle but not the native stream:
 * that must outlive it).  Errors: TLXRT_MISUSE, TLXRT_NOMEM.
 */
TLXRT_API int tlxrt_stream_wrap(tlxrt_device *dev, void *native,
				tlxrt_stream **out);

/*
 * Destroy a stream.  DESTRUCTOR.
 * Waits for its work first.  Accepts NULL.
 */
TLXRT_API int tlxrt_stream_destroy(tlxrt_stream *s);

/*
 * Wait for a stream.  METHOD.
 * Blocks until all work submitted to s has finished.
 * Errors: TLXRT_CUDA.
 */
TLXRT_API int tlxrt_stream_synchronize(tlxrt_stream *s);

/*
 * Create an event.  CONSTRUCTOR.
 * OUT *out: owned by the caller (tlxrt_event_destroy).
 * Errors: TLXRT_CUDA, TLXRT_NOMEM.
 */
TLXRT_API int tlxrt_event_create(tlxrt_device *dev, tlxrt_event **out);

/*
 * Destroy an event.  DESTRUCTOR.  Accepts NULL.
 */
TLXRT_API int tlxrt_event_destroy(tlxrt_event *e);

/*
 * Record an event.  METHOD.
 * Marks the point after all work submitted so far to s (NULL: the default
 * stream).  The sim backend runs work synchronously and records the host
 * clock.  Errors: TLXRT_MISUSE (e and s of different devices), TLXRT_CUDA.
 */
TLXRT_API int tlxrt_event_record(tlxrt_event *e, tlxrt_stream *s);

/*
 * Wait for an event.  METHOD.
 * Errors: TLXRT_MISUSE (never recorded), TLXRT_CUDA.
 */
TLXRT_API int tlxrt_event_synchronize(tlxrt_event *e);

/*
 * Time between two recorded events.  METHOD.
 * OUT *ms: milliseconds from start to end (both recorded and complete).
 * Errors: TLXRT_MISUSE (not recorded, different devices), TLXRT_CUDA.
 */
TLXRT_API int tlxrt_event_elapsed_ms(tlxrt_event *start, tlxrt_event *end,
				     float *ms);

#ifdef __cplusplus
}
#endif
#endif
