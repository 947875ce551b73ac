/*
 * passes.h: the pass manager and the passes over the tile IR.
 * Each pass is one file, registered by one line in passes.def.
 */
#ifndef TLX_PASSES_H
#define TLX_PASSES_H

#include "ir/ir.h"

typedef struct PassStats PassStats;

/* Which kernels specialize-entries gives a fast entry (tlxc --specialize):
 * those with dots, every one with fast paths, none. */
enum { PASS_SPEC_AUTO, PASS_SPEC_ALL, PASS_SPEC_NONE };
extern const char *const pass_spec_names[3];  /* "auto", "all", "none" */

typedef struct PassCtx {
	Module *mod;
	Diag *diag;      /* user errors found by a pass (e.g. smem too large) */
	Arena *scratch;  /* reset after each pass */
	bool failed;     /* set by a pass that reported an error */
	const char *pass_name;
	int sm;          /* target */
	int specialize;  /* PASS_SPEC_*: which kernels get a fast entry */
	PassStats *stats;  /* this run's counters (pass_stat); may be NULL */
} PassCtx;

typedef struct PipelineOpts {
	bool verify_each;          /* run the verifier after every pass */
	bool print_after_all;
	bool print_after_change;   /* print only when the pass changed something */
	bool print_after_failure;  /* print the IR when a pass fails */
	const char *print_after;   /* comma-separated pass names, or NULL */
	const char *print_before;
	bool stats;
	bool time_passes;
	const char *reproducer;    /* on failure, write IR + pipeline here */
	FILE *out;                 /* where prints go (stderr when NULL) */
	int sm;
	int specialize;            /* PASS_SPEC_* */
	bool no_locs;              /* dumps without @line:col */
} PipelineOpts;

/* The default pipeline for an optimization level (0..3) as text. */
const char *pass_default_pipeline(int olevel);
/* The target-lowering pipeline (tile-level IR to the laid-out stage) for
 * an optimization level, as text. */
const char *pass_lower_pipeline(int olevel);
/* True when `name` is a registered pass. */
bool pass_exists(const char *name);
/* Prints "name  summary" for every pass (for --help). */
void pass_list(FILE *out);
/* Runs `pipeline` ("canon,cse,dce") on every function of m.  Returns false
 * when a pass reported a user error (in d) or an unknown pass was named. */
bool pass_run_pipeline(Module *m, const char *pipeline,
		       const PipelineOpts *o, Diag *d);

/* Adds n to the counter `what` (a string literal) of the running pass;
 * --stats prints them. */
void pass_stat(PassCtx *pc, const char *what, uint64_t n);

/* The passes: bool pass_<fn>(PassCtx *pc, Func *f), true when f changed. */
#define PASS(fn, name, summary) bool pass_##fn(PassCtx *pc, Func *f);
#include "passes/passes.def"
#undef PASS

/* ---- affine.c: pointer tiles that are boxes of a 2-D tensor ------------- */

typedef struct AffineBox {
	Value base;       /* the scalar pointer */
	Value start[2];   /* each dim's first index (0: zero) */
	Value stride[2];  /* each dim's stride in elements (0: one) */
} AffineBox;

/* Is ptr base + (start0 + range)[:, None] * stride0 + (start1 +
 * range)[None, :] * stride1? */
bool affine_box(Func *f, Value ptr, AffineBox *out);
/* Is mask (i0 < bound0) & (i1 < bound1) over the box's indices? */
bool affine_bounds(Func *f, Value mask, const AffineBox *b, Value bound[2]);

/* ---- rewrite.c: helpers the passes share ---------------------------------- */

/* A replacement map from values to values (old -> new), growing on demand.
 * Passes that walk in definition order remap each op's operands through
 * it before looking at the op, so one walk replaces all uses. */
typedef struct ValueMap {
	Value *v;
	uint32_t n;
	Arena *a;
} ValueMap;

void vmap_init(ValueMap *m, Arena *a, uint32_t n);
void vmap_set(ValueMap *m, Value from, Value to);
Value vmap_get(ValueMap *m, Value v);  /* follows chains; v when unmapped */
/* Replaces op's operands by their mapped values; true when any changed. */
bool vmap_apply(ValueMap *m, Op *op);

/* The op defining v, or NULL for a block argument. */
static inline Op *
pass_def(Func *f, Value v)
{
	return f->vals.v[v].def;
}
/* The value of a `const` (canonical for its type), when v is one. */
bool pass_const(Func *f, Value v, Num *out);
/* True when v is a constant equal to the integer or float k. */
bool pass_is_const(Func *f, Value v, int64_t ik, double fk);
/* A new `const` of type t (scalar or splat tile) inserted before `at`. */
Value pass_new_const(Func *f, Op *at, Type *t, Num n);
/* True when the op is pure (no side effects) and has no regions. */
bool pass_is_pure(Op *op);

#endif
