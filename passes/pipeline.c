/* pipeline.c: PLACEHOLDER until the pass manager lands (same session). */
#include <string.h>

#include "passes/passes.h"

const char *
pass_default_pipeline(int olevel)
{
	(void)olevel;
	return "";
}

bool
pass_exists(const char *name)
{
	(void)name;
	return false;
}

void
pass_list(FILE *out)
{
	(void)out;
}

bool
pass_run_pipeline(Module *m, const char *pipeline, const PipelineOpts *o,
		  Diag *d)
{
	(void)m;
	(void)o;
	if (pipeline && *pipeline) {
		diag_error_noloc(d, "unknown pass pipeline '%s'", pipeline);
		return false;
	}
	return true;
}
