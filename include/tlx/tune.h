/*
 * tune.h: libtlxtune, tlx's autotuner as a library (tlx-tune is a thin
 * command line over it).  This header is the specification: anything not
 * declared here is not API.  docs/tuning.md describes the search and the
 * measurement.
 *
 * Life cycle:
 *   1. tlx_tune_create(name, src, len, kernel, &t)  a session for one kernel
 *   2. tlx_tune_add_param(t, "BM", values, n)  the space, one call per const
 *      parameter; tlx_tune_add_define(t, "K=64") fixes others,
 *      tlx_tune_add_arg(t, "rows=64") sets a scalar argument,
 *      tlx_tune_set_valid(t, fn, ud) rejects configurations statically
 *   3. tlx_tune_set_opts(t, &o)     search, backend, budget, seed, workers
 *   4. tlx_tune_run(t)              compile, check and time the candidates
 *   5. tlx_tune_get_best(t, ...), tlx_tune_num_evals / tlx_tune_get_eval,
 *      tlx_tune_num_rejections / tlx_tune_get_rejection,
 *      tlx_tune_write_json, tlx_tune_write_svg, tlx_tune_write_table
 *   6. tlx_tune_destroy(t)
 *
 * Threading: a session must not be used by two threads at once; sessions
 * are independent.  tlx_tune_run forks (compile workers, one benchmarking
 * child at a time): call it from a process that can fork, with SIGCHLD not
 * ignored.  The result cache is safe to share between processes.
 *
 * Errors: every function returns TLX_OK (0) or an error code of tlx.h;
 * tlx_tune_errmsg(t) then says why.  TLX_MISUSE: a bad argument or option
 * (the message names it); TLX_ERROR: the default configuration failed
 * (tlx_tune_run) or no configuration worked (tlx_tune_get_best); TLX_IO:
 * a report could not be written; TLX_NOMEM.
 */
#ifndef TLX_TUNE_H_PUBLIC
#define TLX_TUNE_H_PUBLIC

#include <stdint.h>

#include "tlx/tlx.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Searches (tlx_tune_opts.search). */
#define TLX_TUNE_LFBO 0        /* LFBO pattern search (default) */
#define TLX_TUNE_EXHAUSTIVE 1
#define TLX_TUNE_RANDOM 2

/* Effort levels (tlx_tune_opts.effort). */
#define TLX_TUNE_EFFORT_DEFAULT 0
#define TLX_TUNE_EFFORT_QUICK 1
#define TLX_TUNE_EFFORT_FULL 2

/* Backends (tlx_tune_opts.backend). */
#define TLX_TUNE_SIM 0         /* libtlxrt's simulator (default) */
#define TLX_TUNE_CUDA 1        /* the GPU */
#define TLX_TUNE_SYNTHETIC 2   /* a planted landscape: nothing is compiled */

/* The outcome of an evaluation (tlx_tune_eval.status). */
#define TLX_TUNE_OK 0
#define TLX_TUNE_INVALID 1     /* the compiler rejected the configuration */
#define TLX_TUNE_CRASH 2       /* the child died of a signal or exit status */
#define TLX_TUNE_TIMEOUT 3     /* killed after the timeout */
#define TLX_TUNE_WRONG 4       /* its output differs from the default's */
#define TLX_TUNE_FAILED 5      /* a launch or runtime error */

/* Why a configuration was rejected before compiling
 * (tlx_tune_rejection.by). */
#define TLX_TUNE_BY_PREDICATE 0   /* tlx_tune_set_valid's predicate */
#define TLX_TUNE_BY_CONSTRAINT 1  /* a constraint of the kernel's tune(...) */
#define TLX_TUNE_BY_COMPILER 2    /* the compiler's checks (tlx_check) */

typedef struct tlx_tune tlx_tune;

/* Options of a session; tlx_tune_opts_default fills in the defaults. */
typedef struct tlx_tune_opts {
	int search;            /* TLX_TUNE_LFBO */
	int backend;           /* TLX_TUNE_SIM */
	uint64_t seed;         /* of the search (1) */
	int max_evals;         /* evaluations at most; 0: no limit (random
				  search: 100) */
	int initial;           /* LFBO's random start population; 0: 100 */
	double budget;         /* seconds of evaluating; 0: no limit */
	double timeout;        /* seconds per compile and per run (10) */
	int repeats;           /* timed launches per candidate, the median
				  counts; 0: 10 on cuda, 3 otherwise */
	int jobs;              /* compile workers; 0: the number of cores */
	int finalists;         /* the best ones re-timed interleaved; 0: 5,
				  -1: none */
	int rounds;            /* rounds of the re-timing; 0: 20 on cuda,
				  3 otherwise */
	int64_t size;          /* the problem size (4096) */
	int64_t elems;         /* elements of each buffer; 0: size */
	int cache;             /* read and write the result cache (1) */
	const char *cache_dir; /* NULL: $XDG_CACHE_HOME/tlx/tune, else
				  ~/.cache/tlx/tune */
	int progress;          /* a progress line on stderr (0) */
	const char *synthetic; /* the synthetic landscape; NULL: the
				  environment's TLX_TUNE_SYNTHETIC */
	const char *devices;   /* the devices to benchmark on, "0,1" (the
				  ordinals of "cuda:N" or "sim:N"); NULL or
				  "all": every device the backend presents
				  (TLXRT_SIM_DEVICES for sim and synthetic) */
	int effort;            /* TLX_TUNE_EFFORT_DEFAULT (0), _QUICK or
				  _FULL: the defaults of the budgets below
				  (docs/tuning.md, "Effort") */
	double repeat_ms;      /* time each candidate's launches until this
				  many ms of kernel time (3 to 1000
				  launches) instead of `repeats`; 0: no */
	int confirm;           /* run a result more than 10% better than
				  the best so far again in a fresh child,
				  keeping the slower: 0 on cuda only (the
				  other costs are deterministic), 1 always,
				  -1 never */
	int prior;             /* order the first candidates by the
				  cost-model prior (0): half of LFBO's
				  initial population, exhaustive search's
				  order (docs/tuning.md) */
} tlx_tune_opts;

/* One evaluation (tlx_tune_get_eval); borrowed, valid until the session
 * is destroyed or run again. */
typedef struct tlx_tune_eval {
	const int64_t *values; /* the value of each parameter, in the order
				  they were added */
	int status;            /* TLX_TUNE_OK, ... */
	double cost;           /* lower is better; INFINITY unless OK */
	double time;           /* seconds since the run began, when it ended */
	int device;            /* the device it ran on (its ordinal); -1
				  when it did not run (a compile failure) */
	int runs;              /* its timed launches (0: none) */
	int confirmed;         /* 1: run twice, as suspiciously fast */
} tlx_tune_eval;

/* A configuration rejected before compiling (tlx_tune_get_rejection);
 * borrowed, valid until the session is destroyed or run again. */
typedef struct tlx_tune_rejection {
	const int64_t *values; /* as in tlx_tune_eval */
	int by;                /* TLX_TUNE_BY_* */
	const char *why;       /* the first line of the reason (a diagnostic) */
} tlx_tune_rejection;

/* Defaults.  FUNCTION.  Fills *o. */
TLX_API int tlx_tune_opts_default(tlx_tune_opts *o /* OUT */);

/*
 * Open a session.  CONSTRUCTOR.
 * name: the file name in diagnostics; src, len: the kernel source (copied);
 * kernel: the kernel to tune.  OUT *out: owned by the caller
 * (tlx_tune_destroy).  Errors: TLX_MISUSE, TLX_NOMEM.
 */
TLX_API int tlx_tune_create(const char *name, const char *src, size_t len,
			    const char *kernel, tlx_tune **out /* OUT */);

/* Close a session.  DESTRUCTOR.  Accepts NULL. */
TLX_API void tlx_tune_destroy(tlx_tune *t);

/* The last failure's message.  METHOD.  Owned by t, valid until the next
 * call on it; "" when there is none. */
TLX_API const char *tlx_tune_errmsg(tlx_tune *t);

/* An evaluation status's name: "ok", "invalid", ....  FUNCTION (static). */
TLX_API const char *tlx_tune_status_name(int status);

/*
 * Add a const parameter to the space.  METHOD.
 * values: n integers in any order (copied; sorted; no repeats).  At most
 * 16 parameters of 64 values.  Errors: TLX_MISUSE (repeated name or value,
 * too many, the name given to tlx_tune_add_define).
 */
TLX_API int tlx_tune_add_param(tlx_tune *t, const char *name,
			       const int64_t *values, int n);

/* Fix a const for every candidate, "NAME=VALUE" (copied).  METHOD.
 * Errors: TLX_MISUSE (no '=', a parameter of the space). */
TLX_API int tlx_tune_add_define(tlx_tune *t, const char *def);

/* The value of scalar argument NAME, "NAME=VALUE" (copied).  METHOD.
 * Errors: TLX_MISUSE (no '='). */
TLX_API int tlx_tune_add_arg(tlx_tune *t, const char *arg);

/*
 * A static validity predicate.  METHOD.
 * valid(ud, values) returns nonzero when the configuration (values in the
 * order of tlx_tune_add_param) may be evaluated; the others are never
 * compiled and count as failures for the search.  NULL: all may be.  It is
 * called in the tuning process, never in a child, once per configuration.
 * tlx_tune_run always rejects statically, after the predicate, the
 * configurations that break a constraint of the kernel's tune(...) and
 * (except on the synthetic backend) those the compiler's checks reject
 * (tlx_check): see tlx_tune_get_rejection.
 */
TLX_API int tlx_tune_set_valid(tlx_tune *t,
			       int (*valid)(void *ud, const int64_t *values),
			       void *ud);

/* Set the options (copied; strings must outlive the session).  METHOD.
 * Errors: TLX_MISUSE (a value out of range). */
TLX_API int tlx_tune_set_opts(tlx_tune *t, const tlx_tune_opts *o);

/*
 * Search.  METHOD.
 * Runs the default configuration (its output is the reference), the
 * cached winner if any, then the search; the finalists are re-timed
 * interleaved and the best of that re-timing wins, which is stored in the
 * cache.  Errors: TLX_ERROR (the default configuration failed: the
 * message has the reason), TLX_MISUSE (no space, a bad synthetic
 * landscape), TLX_NOMEM.  That every candidate failed is not an error
 * here: tlx_tune_get_best says so.
 */
TLX_API int tlx_tune_run(tlx_tune *t);

/*
 * The winner.  METHOD.
 * OUT values: one per parameter (NULL: not wanted); OUT *cost (NULL: not
 * wanted).  Errors: TLX_ERROR (nothing worked, or not run).
 */
TLX_API int tlx_tune_get_best(tlx_tune *t, int64_t *values /* OUT */,
			      double *cost /* OUT */);

/*
 * The default configuration's cost (the tuned parameters at their
 * defaults).  METHOD.  OUT *first: its timing before the search (INFINITY
 * when it did not run); OUT *retimed: its timing in the finalists'
 * round-robin, beside the winner's re-timed cost (NAN when there was no
 * re-timing).  Each may be NULL.
 */
TLX_API int tlx_tune_get_default(tlx_tune *t, double *first /* OUT */,
				 double *retimed /* OUT */);

/* The parameters (in the order they were added).  METHOD. */
TLX_API int tlx_tune_num_params(tlx_tune *t, int *n /* OUT */);
TLX_API int tlx_tune_get_param_name(tlx_tune *t, int i,
				    const char **name /* OUT */);

/* The evaluations, in the order they ran.  METHOD. */
TLX_API int tlx_tune_num_evals(tlx_tune *t, int *n /* OUT */);
TLX_API int tlx_tune_get_eval(tlx_tune *t, int i,
			      tlx_tune_eval *out /* OUT */);

/* The configurations rejected before compiling, in the order they were
 * checked.  METHOD. */
TLX_API int tlx_tune_num_rejections(tlx_tune *t, int *n /* OUT */);
TLX_API int tlx_tune_get_rejection(tlx_tune *t, int i,
				   tlx_tune_rejection *out /* OUT */);

/* The static checks' totals.  METHOD.  OUT *checked: configurations
 * checked; rejected[3]: rejections by TLX_TUNE_BY_*; *seconds: spent
 * checking.  Each may be NULL. */
TLX_API int tlx_tune_get_checks(tlx_tune *t, int *checked /* OUT */,
				int *rejected /* OUT */,
				double *seconds /* OUT */);

/* Write the JSON report, or an SVG plot of the search (the best cost
 * against evaluations and against wall time).  METHOD.  Errors: TLX_IO. */
TLX_API int tlx_tune_write_json(tlx_tune *t, const char *path);
TLX_API int tlx_tune_write_svg(tlx_tune *t, const char *path);

/*
 * Add the winner to a table of configurations by shape.  METHOD.
 * Writes the line "KERNEL SHAPE : CONFIG  # cost, device" into the file
 * at path (made when missing): SHAPE the kernel's integer scalar
 * arguments as the run set them ("M=4096 N=4096"; on the synthetic
 * backend, the integer --arg values), CONFIG the -D defines then the
 * winner's parameters.  A line of the same kernel and shape is replaced,
 * every other line kept; the file is replaced whole (a temporary file
 * renamed into place) under a lock (path.lock), so concurrent tuners
 * lose no entry.  libtlx reads it (tlx_table_load, tlx_table_pick).
 * Errors: TLX_ERROR (nothing worked), TLX_IO.
 */
TLX_API int tlx_tune_write_table(tlx_tune *t, const char *path);

#ifdef __cplusplus
}
#endif
#endif
