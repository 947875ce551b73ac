/*
 * rt.h: libtlxrt's internal header -- the handles behind tlx/tlxrt.h and
 * the backend interface, with a section per .c file.
 *
 *   runtime.c      devices, errors, memory, streams, events, launches
 *   module.c       loading a module, the kernels' metadata from the IR
 *   image.c        finding the IR (__tlx_ir) inside PTX text or an ELF
 *   args.c         checking and marshalling launch arguments
 *   meta.c         __tlx_meta: launch facts and the specialized entries
 *   sim_backend.c  the simulator backend
 *   cuda.c         the CUDA backend (the only file that knows CUDA)
 *
 * A backend is a table of functions (RtBackend, like QBE's Target); the
 * public functions check their arguments, then call through it.
 */
#ifndef TLX_RT_H
#define TLX_RT_H

#include "tlx/tlxrt.h"
#include "ir/ir.h"
#include "sim/sim.h"

_Static_assert((int)TLXRT_I1 == (int)TY_I1 && (int)TLXRT_F64 == (int)TY_F64 &&
		       (int)TLXRT_BF16 == (int)TY_BF16 &&
		       (int)TLXRT_F8E4M3 == (int)TY_F8E4M3,
	       "tlxrt types mirror the IR's scalar kinds");

typedef struct RtBackend RtBackend;

struct tlxrt_device {
	const RtBackend *be;
	void *impl;               /* the backend's state */
	Buf err;                  /* tlxrt_errmsg */
	tlxrt_device_props props;
	SimOpts sim;              /* simulator options (sim backend) */
	int nobjects;             /* modules, streams, events alive */
	tlxrt_ptr ws;             /* the workspace of launches on no stream */
	size_t ws_size;
	tlxrt_ptr stage;          /* their staged tensors (rt_stage) */
	size_t stage_size;
	tlxrt_module *stage_mod;  /* runtime/stage.tlx, loaded at its first use */
	bool stage_failed;        /* it did not load: the backend copies */
};

/* RtParam.derived[0] of the workspace: zeroed memory of the kernel's
 * `workspace.bytes` for each launch (lower-schedules' counters). */
enum { RT_WORKSPACE = -2 };
/* RtParam.derived[0] of `tma.ok` (pipeline-loads): an i32, 1 when the
 * launch's derived tensors all make tensor maps and the parameters of the
 * kernel's `tma.eq1` are 1 (the generic entry's TMA loops may run). */
enum { RT_TMA_OK = -3 };

typedef struct RtGridProg RtGridProg;

/* A parameter of a kernel, from the IR. */
typedef struct RtParam {
	const char *name;
	int kind;        /* TLXRT_PARAM_*; 0: a type no host can pass */
	Type *ty;
	int type;        /* TLXRT_* element */
	int rank;
	int64_t box[5];  /* a descriptor's box: the buffers it copies */
	/* what one TMA copy moves: the box, or with a swizzle of `swizzle`
	 * bytes (the buffers' tiled encoding) strips `swizzle` bytes wide */
	int64_t hwbox[5];
	int swizzle;
	/* a tensor the runtime derives from other arguments (the kernel's
	 * `derive.I`): the pointer's parameter, then each dim's, then each
	 * stride's but the innermost (1); derived[0] == -1: passed by the
	 * host; RT_WORKSPACE: the launch's workspace; RT_TMA_OK: tma.ok */
	int derived[10];
} RtParam;

/* A kernel's line of __tlx_meta (meta.c). */
typedef struct RtMeta {
	long long threads, smem, smem_static;
	char fast[256];           /* the specialized entry; "" for none */
	uint64_t align, div, eq1;  /* what it assumes (bit i: param i) */
	uint64_t tma_only;         /* of those, what only tensor maps need */
	long long divisor;         /* params in div are multiples of it */
	bool generic_ptx;          /* the generic entry is in __tlx_generic */
} RtMeta;

struct tlxrt_kernel {
	tlxrt_module *mod;
	Func *fn;
	Func *fn_generic;  /* NAME.generic (its generic entry's own layouts,
			      attribute generic_of), or NULL */
	Func *grid;      /* the grid function, or NULL */
	RtParam *params;
	int nparams;     /* the host's arguments */
	int nall;        /* ... and the tensors derived from them */
	int ws_param;    /* the workspace's parameter, or -1 */
	int64_t ws_bytes;
	uint64_t tma_eq1;  /* tma.ok: the parameters that must be 1 */
	RtGridProg *gprog; /* the grid function for the host (grid.c), or NULL */
	tlxrt_const_info *consts;
	int nconsts;
	int warps, total_warps;
	bool persistent;  /* a static schedule: at most the programs that
			     run at once (rt_args_check) */
	int cluster[3];
	int64_t smem;
	void *impl;      /* backend: the CUfunction */
	bool smem_set;   /* backend: the dynamic smem attribute is set */
	RtMeta meta;     /* backend: __tlx_meta's line (cuda) */
	void *impl_fast; /* backend: the specialized entry, or NULL */
	bool smem_set_fast;
	bool trace;      /* backend: TLXRT_TRACE, a line per launch */
};

struct tlxrt_module {
	tlxrt_device *dev;
	Arena arena;     /* the IR and the metadata */
	IrCtx ctx;
	Module *ir;
	tlxrt_kernel *kernels;
	int nkernels;
	void *impl;      /* backend: the CUmodule */
	void *impl_generic;  /* backend: the module of the generic entries
				a cubin carries as PTX, loaded at first use */
};

struct tlxrt_stream {
	tlxrt_device *dev;
	void *impl;
	tlxrt_ptr ws;    /* the workspace of launches on this stream */
	size_t ws_size;
	tlxrt_ptr stage; /* their staged tensors (rt_stage) */
	size_t stage_size;
	bool borrowed;   /* tlxrt_stream_wrap: impl is not ours to destroy */
};

struct tlxrt_event {
	tlxrt_device *dev;
	void *impl;
	bool recorded;
	double host_ms;  /* sim: host clock at record */
};

/* A checked argument in the parameter's own type. */
typedef struct RtArg {
	int kind;        /* TLXRT_PARAM_* */
	bool invalid;    /* a derived tensor the arguments make no tensor map
			    of: its entry is never the one launched */
	TypeKind ty;     /* scalar kind or element */
	uint64_t bits;   /* scalars (in their width) and pointers */
	tlxrt_tensor tensor;
} RtArg;

struct RtBackend {
	const char *name;
	/* arg: what followed "name:" (GPU ordinal), or NULL.  Fills props.
	 * On failure leaves a message in dev->err. */
	int (*open)(tlxrt_device *dev, const char *arg);
	/* How many devices the backend presents (tlxrt_device_count); dev
	 * is a scratch device for the message, not opened. */
	int (*count)(tlxrt_device *dev, int *out);
	void (*close)(tlxrt_device *dev);
	int (*sync)(tlxrt_device *dev);
	int (*malloc)(tlxrt_device *dev, size_t n, tlxrt_ptr *out);
	int (*free)(tlxrt_device *dev, tlxrt_ptr p);
	int (*htod)(tlxrt_device *dev, tlxrt_ptr dst, const void *src,
		    size_t n);
	int (*dtoh)(tlxrt_device *dev, void *dst, tlxrt_ptr src, size_t n);
	int (*dtod)(tlxrt_device *dev, tlxrt_ptr dst, tlxrt_ptr src, size_t n);
	int (*memset)(tlxrt_device *dev, tlxrt_ptr dst, int v, size_t n);
	/* The same, ordered on stream s (NULL: the device's default). */
	int (*memset_async)(tlxrt_device *dev, tlxrt_ptr dst, int v, size_t n,
			    tlxrt_stream *s);
	/* rows of width bytes from src (rows spitch bytes apart) to dst
	 * (dpitch apart), ordered on stream s */
	int (*copy2d_async)(tlxrt_device *dev, tlxrt_ptr dst, size_t dpitch,
			    tlxrt_ptr src, size_t spitch, size_t width,
			    size_t rows, tlxrt_stream *s);
	/* Loads the image and returns the module's IR text (malloc'd, owned
	 * by the caller). */
	int (*module_load)(tlxrt_module *m, const void *image, size_t n,
			   char **ir, size_t *irlen);
	void (*module_unload)(tlxrt_module *m);
	int (*kernel_prepare)(tlxrt_kernel *k);
	int (*launch)(tlxrt_kernel *k, const uint32_t grid[3],
		      const uint32_t cluster[3], tlxrt_stream *s,
		      const RtArg *args);
	int (*stream_create)(tlxrt_stream *s);
	void (*stream_destroy)(tlxrt_stream *s);
	int (*stream_sync)(tlxrt_stream *s);
	int (*event_create)(tlxrt_event *e);
	void (*event_destroy)(tlxrt_event *e);
	int (*event_record)(tlxrt_event *e, tlxrt_stream *s);
	int (*event_sync)(tlxrt_event *e);
	int (*event_elapsed)(tlxrt_event *a, tlxrt_event *b, float *ms);
};

extern const RtBackend rt_sim_backend;
extern const RtBackend rt_cuda_backend;

/* runtime.c */
/* Sets the device's message and returns rc. */
int rt_error(tlxrt_device *dev, int rc, const char *fmt, ...)
	TLX_PRINTF(3, 4);
void rt_clear(tlxrt_device *dev);
double rt_now_ms(void);

/* module.c */
int rt_module_build(tlxrt_module *m, const char *text, size_t len,
		    const char *srcname);

/* image.c: the IR inside an image.  Sets *ir and *len to a malloc'd copy
 * of the bytes of __tlx_ir (without a trailing NUL); 0 on success, else
 * an error with a message in *why (static text). */
enum { RT_IMG_TEXT, RT_IMG_PTX, RT_IMG_ELF };
int rt_image_kind(const void *image, size_t n);
/* The bytes of the text global `sym` in PTX text or an ELF image. */
int rt_image_ptx_global(const char *ptx, size_t n, const char *sym, char **out,
			size_t *len, const char **why);
int rt_image_elf_global(const uint8_t *elf, size_t n, const char *sym,
			char **out, size_t *len, const char **why);
int rt_image_ptx_ir(const char *ptx, size_t n, char **ir, size_t *len,
		    const char **why);
int rt_image_elf_ir(const uint8_t *elf, size_t n, char **ir, size_t *len,
		    const char **why);

/* meta.c: the line of `kernel` in __tlx_meta's text (TLXRT_NOT_FOUND
 * when it has none, TLXRT_INVALID_ARG when it is malformed), and whether
 * a launch with these arguments may run its specialized entry. */
int rt_meta_find(const char *text, size_t len, const char *kernel,
		 RtMeta *out);
bool rt_fast_ok(const RtMeta *m, const RtArg *args, int nargs);
/* ... for a launch of k: its derived tensors all make tensor maps, and
 * the arguments meet the assumptions but those only the maps need. */
bool rt_fast_launch_ok(const tlxrt_kernel *k, const RtMeta *m,
		       const RtArg *args);
/* Do the derived tensors of a launch all make tensor maps?  (The fast
 * entry reads them; the generic one does not.) */
bool rt_derived_ok(const tlxrt_kernel *k, const RtArg *args);
/* TLXRT_GENERIC set (not "0"): launches run generic entries, tma.ok 0. */
bool rt_generic_forced(void);

/* grid.c: k's grid function as a host program (false: the simulator's
 * interpreter evaluates it), and its run on a launch's arguments (0: not
 * evaluated here, the interpreter's to do). */
bool rt_grid_compile(tlxrt_kernel *k, Arena *a);
int rt_grid_run(const tlxrt_kernel *k, const RtArg *args, uint32_t grid[3]);
/* A host integer argument's value, sign-extended by its type. */
int64_t rt_int_value(const RtArg *a);

/* args.c: checks args against k's metadata and cfg, resolves the grid and
 * the cluster; out has k->nparams entries. */
int rt_args_check(tlxrt_kernel *k, const tlxrt_launch_config *cfg,
		  const tlxrt_arg *args, int nargs, RtArg *out,
		  uint32_t grid[3], uint32_t cluster[3]);
void rt_args_to_sim(tlxrt_kernel *k, const RtArg *args, SimArg *out);
/* A derived tensor that makes no tensor map only because of where its
 * rows lie (a base or a row pitch that is not a multiple of 16 bytes):
 * true, and the same rows rounded up to 16 bytes apart from an aligned
 * base in *staged (its ptr 0, for the caller to place), for a copy. */
bool rt_stageable(const tlxrt_kernel *k, int i, const RtArg *a,
		  tlxrt_tensor *staged);
/* For a launch's trace: whether a generic entry (fast: false) runs its
 * TMA loops, " tma.ok" or " no tma"; "" where the kernel has none. */
const char *rt_tma_note(const tlxrt_kernel *k, const RtArg *args, bool fast);
/* tma.ok again, after staged tensors replaced invalid ones. */
void rt_tma_ok_update(const tlxrt_kernel *k, RtArg *out);

#endif
