/*
 * driver.h: libtlxtune's internals (include/tlx/tune.h is its API).
 *
 *   driver.c   the session, the evaluation of a batch (compile workers,
 *              then one benchmarking child per candidate), the finalists'
 *              re-timing, the result cache
 *   measure.c  what the children do: compile, set up the arguments, flush
 *              L2, launch, time, re-time interleaved; the synthetic
 *              backend; comparing outputs
 *   check.c    static rejection: the predicate, the kernel's tune(...)
 *              constraints and the compiler's checks, before compiling
 *   report.c   the JSON report, the SVG plot, the progress line
 */
#ifndef TLX_TUNE_DRIVER_H
#define TLX_TUNE_DRIVER_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "tlx/tune.h"
#include "tune/tune.h"

#define MAXP 16      /* parameters of a space */
#define MAXV 64      /* values of a parameter */
#define MAXD 64      /* defines, scalar arguments */
#define MAXSYN 64    /* planted items of the synthetic backend */
#define MAXFIN 16    /* finalists */
#define MAXDEV 64    /* benchmarking devices */

enum { TUNE_SHAPE = 256 };

/* What a run child writes first (then every pointer buffer). */
typedef struct RunHeader {
	double cost;
	char name[128];         /* the device's */
	int32_t driver;         /* its driver's version */
	int32_t ordinal;        /* which device the child opened */
	int32_t count;          /* the devices its backend presents */
	int32_t sm_count;       /* its multiprocessors */
	int32_t smem_per_block; /* its shared memory limit per block */
	int32_t runs;           /* timed launches (the median of them) */
	char shape[TUNE_SHAPE]; /* the integer scalars, "M=4096 N=4096" */
} RunHeader;
enum { TUNE_HEADER = sizeof(RunHeader) };

/* The outcome of an evaluation: TLX_TUNE_OK..TLX_TUNE_FAILED, and: */
enum { ST_SKIPPED = 6 };

typedef struct Param {
	char name[64];
	int64_t v[MAXV];
	int n;
} Param;

/* A planted behaviour of the synthetic backend: KIND:NAME=VALUE. */
enum { SY_OPT, SY_CRASH, SY_SEGV, SY_HANG, SY_WRONG, SY_REJECT,
       SY_CCRASH, SY_CHANG, SY_PRIOR, SY_FAST, SY_NKINDS };
typedef struct Synth {
	int kind, param;
	int64_t value;
} Synth;

typedef struct Eval {
	int cfg[MAXP];
	int64_t values[MAXP];
	int status;
	double cost;
	double t;       /* seconds since the run began */
	int device;     /* the ordinal of the device it ran on; -1: none */
	int runs;       /* its timed launches */
	int confirmed;  /* 1: a suspiciously fast result was run again */
	double first;   /* then the first run's cost */
	int order;      /* its place among the configurations the search
			   asked for: equal costs go to the earlier, however
			   the devices' runs happened to end */
} Eval;

/* A configuration rejected before compiling (check.c). */
typedef struct Reject {
	int cfg[MAXP];
	int64_t values[MAXP];
	int by;          /* TLX_TUNE_BY_* */
	char *why;       /* the first line of the reason */
} Reject;

/* The static checks of a run: each configuration's verdict, once. */
typedef struct TuneCheck {
	tlx_ctx *ctx;
	tlx_tune_space *ts;  /* the kernel's tune(...); NULL: no constraints */
	int np;
	int *cfgs;           /* the configurations checked, n x np */
	bool *ok;            /* their verdicts */
	int n, cap;
	int *tab;            /* a hash table of their indices + 1 */
	int tabcap;
	Reject *rej;
	int nrej, caprej;
	int count[3];        /* rejections by TLX_TUNE_BY_* */
	double seconds;      /* spent checking */
} TuneCheck;

/* A device's run server: a process that keeps the device open and runs
 * one candidate after another (measure.c tune_run_server). */
typedef struct Server {
	pid_t pid;       /* 0: none running */
	int fd;          /* a socket to it, both ways */
} Server;

/* A forked child writing its result into a pipe; or one request to a
 * run server (sv), whose reply ends at its length, not at the end of
 * the pipe. */
typedef struct Child {
	pid_t pid;
	int fd;
	unsigned char *buf;
	size_t len, cap;
	double deadline;
	int st;          /* TLX_TUNE_OK, ST_FAILED (exit 1), TIMEOUT, CRASH */
	int done;
	Server *sv;      /* the run server answering; NULL: a child */
} Child;

/* A run server's request (then len bytes of image) and reply (then len
 * bytes: what a run child writes). */
typedef struct ServerRequest {
	int32_t confirm;
	int32_t has_cfg;  /* 0: the default configuration */
	int cfg[MAXP];
	uint64_t len;
} ServerRequest;
typedef struct ServerReply {
	int32_t st;      /* run child's exit status: 0, 1 (failed: a message) */
	int32_t pad;
	uint64_t len;
} ServerReply;

struct tlx_tune {
	char *name, *kernel;
	char *src;
	size_t srclen;
	Param params[MAXP];
	int np;
	char *defs[MAXD];
	int ndefs;
	char *sargs[MAXD];
	int nsargs;
	int (*valid)(void *ud, const int64_t *values);
	void *valid_ud;
	tlx_tune_opts o;
	int repeats, rounds, jobs, finalists;
	int max_evals, initial, copies, generations;  /* from the effort */
	int confirm;         /* confirm suspiciously fast results */
	double best_seen;    /* the best cost recorded so far */
	int64_t elems;
	Synth syn[MAXSYN];
	int nsyn;
	/* the run */
	const char *cost_unit;
	unsigned char *ref;  /* the default configuration's output */
	size_t reflen;
	double default_cost; /* the default configuration's (not re-timed) */
	double default_retimed; /* re-timed with the finalists (NAN: not) */
	char shape[TUNE_SHAPE];  /* the integer scalar arguments, from the
				    reference's child: "M=4096 N=4096" */
	char device[128];    /* the device's name and driver, from the
				reference's child */
	int driver_version;
	int devs[MAXDEV];    /* the benchmarking devices (ordinals); devs[0]
				runs the reference and the finalists */
	int ndev;
	int dev_count;       /* the devices the backend presents */
	int sm_count, smem_per_block;  /* the first device's */
	int dev_evals[MAXDEV];  /* evaluations run on devs[i] */
	Eval *evals;         /* in the order they ran */
	int nevals, capevals;
	int nasked;          /* configurations sent to run_batch so far */
	int nskipped;        /* past the budget or max_evals */
	double t0, wall;
	int has_best;
	int best[MAXP];
	double best_cost;
	int ncached;         /* 1: cached[] came from the cache */
	int cached[MAXP];
	Eval fin[MAXFIN];    /* the finalists, cost: the re-timed median */
	double fin_search[MAXFIN];  /* their costs in the search */
	int nfin;
	int retime_status;   /* of the re-timing child */
	TuneCheck *check;    /* the run's static checks */
	int *pcfg;           /* the prior's estimates: configurations */
	double *pval;        /* (MAXP ints each) and their values */
	int npri, cappri;
	char *err;
	/* the run servers */
	Server srv[MAXDEV];  /* by index into devs */
	int fresh;           /* 1: a new run child per candidate, no server */
	/* the device a run child opens, the image it loads (set before
	 * its fork) */
	int child_dev;
	int child_confirm;   /* 1: the run confirms a suspiciously fast one */
	unsigned char **child_imgs;
	size_t *child_lens;
	int child_nimgs;     /* re-timing: past nfin, the default's image */
};

double tune_now(void);
int tune_errf(tlx_tune *T, int rc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int tune_write_all(int fd, const void *p, size_t n);

/* measure.c: the children (exit 0: ok; 1: a failure, its message in the
 * pipe; anything else a crash) */
int tune_compile_child(tlx_tune *T, const int *cfg, int fd);
int tune_run_child(tlx_tune *T, const int *cfg, int fd);
/* Serves requests on the socket fd until it closes or a run fails. */
int tune_run_server(tlx_tune *T, int fd);
int tune_retime_child(tlx_tune *T, const int *cfgs, int fd);
int tune_synth_has(const tlx_tune *T, const int *cfg, int kind);
int tune_output_matches(const tlx_tune *T, const unsigned char *out,
			size_t len);
int tune_parse_devices(const char *list, int *devs, int *n);

/* check.c: tune_check_begin makes T->check for a run (TLX_NOMEM);
 * tune_check_valid: may cfg be evaluated? */
int tune_check_begin(tlx_tune *T);
bool tune_check_valid(tlx_tune *T, const int *cfg);
void tune_check_free(TuneCheck *c);

/* prior.c and the child that gathers a configuration's facts
 * (measure.c) */
typedef struct PriorFacts {
	double programs;      /* of the grid, for the run's arguments */
	double warps, smem;   /* of a program (all tasks), shared bytes */
	double flops, bytes;  /* the dots' 2MNK and operand bytes, a k-step */
} PriorFacts;
int tune_prior_child(tlx_tune *T, const int *cfg, int fd);
double tune_prior_score(const PriorFacts *f, int sm_count, int smem_per_sm);
/* driver.c: the prior's estimate of cfg, NaN when it has none */
double tune_prior_of(const tlx_tune *T, const int *cfg);
void tune_prior_dots(const char *ir, double *flops, double *bytes);

/* driver.c: "quick", "default", "full" */
const char *tune_effort_name(int effort);

/* report.c */
void tune_progress(tlx_tune *T);

#endif
