/*
 * tlx.h: libtlx, the tlx compiler as a library.  This header is the
 * specification: anything not declared here is not API.
 *
 * Life cycle:
 *   1. tlx_ctx_create()            one context per thread
 *   2. tlx_compile(ctx, src, ...)  source text -> module (cached)
 *   3. tlx_module_image()          the bytes to give tlxrt_module_load()
 *   4. tlx_module_destroy()        when the image is no longer needed
 *   5. tlx_ctx_destroy()
 *
 * Tuning (tlx-tune): tlx_tune_space_create() reads the space a kernel
 * declares with tune(...), tlx_tune_space_check() evaluates its
 * constraints for a configuration, and tlx_check() runs the compiler's
 * checks on one without generating code, so that configurations either
 * rejects cost milliseconds, not a compilation.
 *
 * Threading: a context must not be used by two threads at once; separate
 * contexts are independent (the compiler has no global state), and the
 * disk cache is safe to share between threads and processes.
 *
 * Errors: every function returns TLX_OK (0) or an error code;
 * tlx_errmsg(ctx) then describes the last failure (for TLX_COMPILE: the
 * diagnostics, rendered as tlxc prints them).
 */
#ifndef TLX_TLX_H
#define TLX_TLX_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define TLX_API __attribute__((visibility("default")))
#else
#define TLX_API
#endif

#define TLX_VERSION "0.1.0"
#define TLX_VERSION_NUMBER 1000  /* major * 1000000 + minor * 1000 + patch */

/* Status codes. */
#define TLX_OK 0
#define TLX_ERROR 1        /* unspecified failure */
#define TLX_NOMEM 2        /* out of memory */
#define TLX_MISUSE 3       /* a NULL or invalid argument */
#define TLX_COMPILE 4      /* errors in the source: see tlx_errmsg() */
#define TLX_UNSUPPORTED 5  /* the output asked for cannot be made here */
#define TLX_IO 6           /* a file could not be read or written */

/* What tlx_compile produces. */
#define TLX_EMIT_CUBIN 0  /* a cubin (PTX when no assembler is present) */
#define TLX_EMIT_PTX 1
#define TLX_EMIT_IR 2     /* the laid-out IR text (runs on the simulator) */

/* The kind of a module's image. */
#define TLX_IMAGE_CUBIN 0
#define TLX_IMAGE_PTX 1
#define TLX_IMAGE_IR 2

typedef struct tlx_ctx tlx_ctx;
typedef struct tlx_module tlx_module;
typedef struct tlx_tune_space tlx_tune_space;

/* Options of one compilation; zero-initialized means the defaults. */
typedef struct tlx_options {
	const char *name;       /* the file name in diagnostics ("<string>") */
	const char *target;     /* "sm_80", "sm_90a" (default), "sm_100a" */
	int opt_level;          /* 0..3; 0 here means the default, 2 */
	int emit;               /* TLX_EMIT_*; default TLX_EMIT_CUBIN */
	const char *const *defines;  /* const overrides "NAME=VALUE" */
	int ndefines;
	int lineinfo;           /* source line tables for profilers */
	int no_cache;           /* compile even when the result is cached */
} tlx_options;

/* Version.  METHOD.  Equal to TLX_VERSION_NUMBER of the header the
 * library was built with. */
TLX_API int tlx_libversion_number(void);
TLX_API const char *tlx_libversion(void);

/* Create a context.  METHOD.  `alloc` (may be NULL for malloc) follows
 * Lua's contract: alloc(ud, ptr, osize, nsize) frees when nsize is 0,
 * else (re)allocates, returning NULL on failure.  The disk cache starts
 * in $TLX_CACHE_DIR, else $XDG_CACHE_HOME/tlx, else ~/.cache/tlx. */
TLX_API int tlx_ctx_create(void *(*alloc)(void *ud, void *ptr, size_t osize,
					  size_t nsize),
			   void *ud, tlx_ctx **out /* OUT */);

/* Destroy a context.  DESTRUCTOR.  Accepts NULL.  Modules compiled with
 * it stay valid. */
TLX_API void tlx_ctx_destroy(tlx_ctx *ctx);

/* The last error message of the context.  Owned by the context, valid
 * until the next call on it.  Never NULL. */
TLX_API const char *tlx_errmsg(tlx_ctx *ctx);

/* A static description of a status code. */
TLX_API const char *tlx_errstr(int rc);

/* Compile source text.  METHOD.  On TLX_OK *out is a new module the
 * caller destroys.  Results are cached in memory and on disk under a key
 * of the source, options, target and compiler version; a cache file that
 * is damaged is detected, ignored and rewritten. */
TLX_API int tlx_compile(tlx_ctx *ctx, const char *src, size_t len,
			const tlx_options *opts, tlx_module **out /* OUT */);

/* The image to load with tlxrt_module_load().  METHOD.  Borrowed: valid
 * until the module is destroyed.  *kind is TLX_IMAGE_*. */
TLX_API int tlx_module_image(tlx_module *m, const void **data /* OUT */,
			     size_t *size /* OUT */, int *kind /* OUT */);

/* The module's tile IR text (NUL-terminated).  METHOD.  Borrowed. */
TLX_API int tlx_module_ir(tlx_module *m, const char **text /* OUT */);

/* Whether the module came from the cache: 0 no, 1 memory, 2 disk. */
TLX_API int tlx_module_cached(tlx_module *m, int *from /* OUT */);

/* Destroy a module.  DESTRUCTOR.  Accepts NULL. */
TLX_API void tlx_module_destroy(tlx_module *m);

/* Use `dir` for the disk cache (created when missing), or NULL to use
 * none.  METHOD. */
TLX_API int tlx_cache_set_dir(tlx_ctx *ctx, const char *dir);

/* Forget the in-memory cache (the disk cache stays).  METHOD. */
TLX_API int tlx_cache_clear(tlx_ctx *ctx);

/* Check source text without generating code.  METHOD.  Runs what
 * tlx_compile runs before LLVM -- the front end (static_assert and every
 * other check of the source), the passes (register budgets, the
 * shared-memory plan) and code generation's checks of each kernel (tile
 * sizes per thread, the shared-memory total) -- and reports what it
 * would: TLX_OK when tlx_compile reports no error before code
 * generation, TLX_COMPILE with the diagnostics in tlx_errmsg() otherwise.
 * opts->emit is ignored; nothing is cached.  Milliseconds where a
 * compilation takes a second: tlx-tune's test of a configuration. */
TLX_API int tlx_check(tlx_ctx *ctx, const char *src, size_t len,
		      const tlx_options *opts);

/* Read the tuning space of a kernel.  METHOD.  The space is the kernel's
 * tune(NAME: [values], ..., constraint, ...) attribute: const parameters
 * with the values to try, and boolean constraints over the const
 * parameters (docs/language.md).  `opts` gives the file name, the target
 * (SMEM in constraints) and defines that fix const parameters.  Only the
 * file's constants, the kernel's parameters and the attribute are
 * checked.  On TLX_OK *out is a new space the caller destroys, with no
 * parameters and no constraints when the kernel declares none; the
 * space keeps copies of src and opts.  TLX_COMPILE: errors in what was
 * checked, or no kernel of that name (tlx_errmsg()). */
TLX_API int tlx_tune_space_create(tlx_ctx *ctx, const char *src, size_t len,
				  const tlx_options *opts, const char *kernel,
				  tlx_tune_space **out /* OUT */);

/* The space's parameters.  METHOD.  Parameter i (0 <= i < *n) is a const
 * parameter's name and its nvalues values, distinct, in the order
 * written; both borrowed, valid until the space is destroyed. */
TLX_API int tlx_tune_space_num_params(tlx_tune_space *s, int *n /* OUT */);
TLX_API int tlx_tune_space_get_param(tlx_tune_space *s, int i,
				     const char **name /* OUT */,
				     const long long **values /* OUT */,
				     int *nvalues /* OUT */);
/* How many constraints the space has.  METHOD. */
TLX_API int tlx_tune_space_num_constraints(tlx_tune_space *s,
					   int *n /* OUT */);

/* Whether a configuration satisfies the space's constraints.  METHOD.
 * `defines` ("NAME=VALUE", as in tlx_options) set const parameters, over
 * those of the space's options; parameters they do not set keep their
 * defaults.  Any values may be given, not only the space's.  On TLX_OK
 * *ok is 1 when every constraint holds; 0 when one is false, and
 * tlx_errmsg() then shows the first that is.  TLX_COMPILE when the
 * configuration makes what the space reads an error (a constraint that
 * divides by zero, say).  Parses the source again: a millisecond or
 * less. */
TLX_API int tlx_tune_space_check(tlx_ctx *ctx, tlx_tune_space *s,
				 const char *const *defines, int ndefines,
				 int *ok /* OUT */);

/* Destroy a space.  DESTRUCTOR.  Accepts NULL. */
TLX_API void tlx_tune_space_destroy(tlx_tune_space *s);

/*
 * Tables of tuned configurations by shape (docs/tuning.md, "Tables by
 * shape").  tlx-tune --table FILE adds a kernel's winner for one shape,
 * a line "KERNEL M=4096 N=4096 : BM=128 BN=128 WARPS=8" (the integer
 * scalar arguments it was tuned with, then the const parameters);
 * tlx_table_pick gives the defines to compile with for a shape.
 */
typedef struct tlx_table tlx_table;

#define TLX_TABLE_EXACT 1  /* tlx_table_pick: only an exact match */

/* Read a table from a file or from text (name: for messages).
 * CONSTRUCTOR.  On TLX_OK *out is a new table the caller destroys.
 * Errors: TLX_IO (cannot read), TLX_COMPILE (a malformed line: the
 * message in tlx_errmsg(ctx) says which), TLX_NOMEM, TLX_MISUSE.  ctx may
 * be NULL (no message). */
TLX_API int tlx_table_load(tlx_ctx *ctx, const char *path,
			   tlx_table **out /* OUT */);
TLX_API int tlx_table_parse(tlx_ctx *ctx, const char *name, const char *text,
			    size_t len, tlx_table **out /* OUT */);

/* The configuration of `kernel` for a shape.  METHOD.
 * shape: nshape "NAME=INT" (the kernel's integer scalar arguments).  The
 * entry with exactly those values, else (unless flags has
 * TLX_TABLE_EXACT) the nearest entry of the kernel with the same names:
 * the least sum over the names of |log2 a - log2 b| (values below 1 count
 * as 1), the first in the table on a tie.  OUT *defines, *ndefines: its
 * "NAME=VALUE" const parameters, as tlx_options.defines takes them;
 * borrowed, valid until the table is destroyed.  OUT *exact (NULL: not
 * wanted): 1 when the shape matched exactly.  Errors: TLX_ERROR (no
 * entry fits), TLX_MISUSE (NULL, a malformed shape). */
TLX_API int tlx_table_pick(tlx_table *t, const char *kernel,
			   const char *const *shape, int nshape, int flags,
			   const char *const **defines /* OUT */,
			   int *ndefines /* OUT */, int *exact /* OUT */);

/* Destroy a table.  DESTRUCTOR.  Accepts NULL. */
TLX_API void tlx_table_destroy(tlx_table *t);

#ifdef __cplusplus
}
#endif
#endif
