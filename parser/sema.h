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

#endif
