/*
 * sema.h: the front end's entry point after parsing: name resolution,
 * types, shapes, const evaluation, specialization on const parameters,
 * and IR generation.
 */
#ifndef TLX_SEMA_H
#define TLX_SEMA_H

#include "parser/ast.h"

/* A const-parameter override: -D NAME=VALUE. */
typedef struct Define {
	const char *name;
	const char *value;  /* text of an integer, float or boolean literal */
} Define;

typedef struct FrontOpts {
	const Define *defs;
	uint32_t ndefs;
	int sm;  /* target: 80, 90 (sm_90a) or 100 (sm_100a) */
} FrontOpts;

/* Checks the file and lowers every kernel, specialized on its const
 * parameters, to tile IR (device functions become FN_DEVICE functions
 * called from the kernels; each kernel with a grid() attribute gets an
 * FN_GRID function).  Returns NULL when errors were reported to `d`. */
Module *front_lower(IrCtx *c, Diag *d, Ast *file, const FrontOpts *o);

/* A kernel's tuning space: its tune(...) attribute (tune.c). */
typedef struct TuneDim {
	const char *name;   /* a const parameter */
	int64_t *values;    /* as written (distinct) */
	uint32_t n;
} TuneDim;

typedef struct TuneInfo {
	TuneDim *params;
	uint32_t nparams;
	uint32_t nconstraints;
	int false_constraint;  /* the first false for the values compiled, or -1 */
} TuneInfo;

/* Reads the tuning space of kernel `kernel` (empty without tune(...)),
 * checking only what it needs: the file's constants, the kernel's
 * parameters and its tune attribute, with o's defines (one that names
 * nothing is no error here).  A false constraint gets a note.  Returns
 * false when errors were reported to `d`, or no kernel has the name. */
bool front_tune_space(IrCtx *c, Diag *d, Ast *file, const FrontOpts *o,
		      const char *kernel, TuneInfo *out);

#endif
