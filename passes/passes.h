/*
 * passes.h: the pass manager and the passes over the tile IR.
 * Each pass is one file, registered by one line in passes.def.
 */
#ifndef TLX_PASSES_H
#define TLX_PASSES_H

#include "ir/ir.h"

typedef struct PassCtx {
	Module *mod;
	Diag *diag;      /* user errors found by a pass (e.g. smem too large) */
	Arena *scratch;  /* reset after each pass */
	bool failed;     /* set by a pass that reported an error */
	const char *pass_name;
	int sm;          /* target */
} PassCtx;

typedef struct PipelineOpts {
	bool verify_each;          /* run the verifier after every pass */
	bool print_after_all;
	bool print_after_change;   /* print only when the pass changed something */
	const char *print_after;   /* comma-separated pass names, or NULL */
	const char *print_before;
	bool stats;
	bool time_passes;
	const char *reproducer;    /* on failure, write IR + pipeline here */
	FILE *out;                 /* where prints go (stderr when NULL) */
	int sm;
} PipelineOpts;

/* The default pipeline for an optimization level (0..3) as text. */
const char *pass_default_pipeline(int olevel);
/* True when `name` is a registered pass. */
bool pass_exists(const char *name);
/* Prints "name  summary" for every pass (for --help). */
void pass_list(FILE *out);
/* Runs `pipeline` ("canon,cse,dce") on every function of m.  Returns false
 * when a pass reported a user error (in d) or an unknown pass was named. */
bool pass_run_pipeline(Module *m, const char *pipeline,
		       const PipelineOpts *o, Diag *d);

#endif
