/* sema.c: PLACEHOLDER until the real sema lands (same session). */
#include "parser/sema.h"

Module *
front_lower(IrCtx *c, Diag *d, Ast *file, const FrontOpts *o)
{
	(void)c;
	(void)file;
	(void)o;
	diag_error_noloc(d, "type checking is not available in this build");
	return NULL;
}
