/*
 * compile.c: the first step of an oracle, fz_compile -- source to image
 * through the compiler's pipeline (jit/compile.c, as tlxc and libtlx run
 * it) at one -O level, emitted form, target and optional pass pipeline,
 * in process -- and the oracles that compile in process (fz_oracles).
 * The other steps are oracle.c's, which links without libtlx and LLVM.
 *
 * Compiling goes through jit/compile.c's Job rather than tlx_compile():
 * tlx_options reads opt_level 0 as "the default" (-O2), so the public API
 * cannot ask for -O0.
 */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"
#include "jit/jit.h"
#include "tlx/tlx.h"

bool
fz_compile(const FzConfig *c, const char *src, size_t len, FzImage *img,
	   FzResult *r)
{
	const Target *t = target_lookup(c->target ? c->target : "sm_90a");
	Arena arena;
	Job *j;
	jmp_buf oom;
	bool ok;

	memset(img, 0, sizeof *img);
	if (!t) {
		fz_fail(r, FZ_SETUP, "unknown target '%s'", c->target);
		return false;
	}
	arena_init(&arena, NULL, NULL, NULL);
	j = arena_alloc(&arena, sizeof *j);
	j->arena = &arena;
	j->name = "gen.tlx";
	j->text = src;
	j->len = len;
	j->sm = t->sm;
	j->olevel = c->olevel;
	j->passes = c->passes;
	j->emit = c->emit == TLX_EMIT_IR ? EMIT_IR
		  : c->emit == TLX_EMIT_PTX ? EMIT_PTX : EMIT_CUBIN;
	j->ptx_ok = true;
	if (setjmp(oom)) {
		arena.oom = NULL;
		buf_free(&j->out);
		arena_reset(&arena);
		fz_fail(r, FZ_CRASH, "%s: out of memory while compiling", c->name);
		return false;
	}
	arena.oom = &oom;
	ok = compile_run(j) && j->diag.nerrors == 0;
	arena.oom = NULL;
	if (!ok) {
		Buf b = { 0 };
		uint32_t i;

		for (i = 0; i < j->diag.msgs.n; i++)
			if (j->diag.msgs.v[i].kind == DIAG_ERROR)
				diag_render(&j->diag, &j->diag.msgs.v[i], &b);
		fz_fail(r, FZ_COMPILE, "%s: %s", c->name,
			b.s ? b.s : "compilation failed without a diagnostic");
		buf_free(&b);
	} else {
		img->kind = j->emit == EMIT_IR ? TLX_IMAGE_IR
			    : j->binary ? TLX_IMAGE_CUBIN : TLX_IMAGE_PTX;
		img->size = j->out.n;
		img->data = malloc(j->out.n + 1);
		img->ir = strdup(j->ir_text ? j->ir_text : "");
		if (img->data) {
			memcpy(img->data, j->out.s ? j->out.s : "", j->out.n);
			img->data[j->out.n] = 0;
		}
	}
	buf_free(&j->out);
	arena_reset(&arena);
	return ok;
}

/* ---- oracles -------------------------------------------------------------------- */

/* -O0 against -O3 on the simulator: the same inputs, every output bit
 * for bit.  With codegen, the -O3 program is compiled to PTX for sm_90a
 * and the simulator runs the IR that the PTX embeds (__tlx_ir), so code
 * generation and the embedding are exercised too. */
static bool
check_o0_o3(const char *src, size_t len, const FzMeta *m,
	    const FzCheckOpts *co, FzResult *r)
{
	static const FzConfig c0 = { "O0", 0, TLX_EMIT_IR, "sm_90a", NULL };
	FzConfig c3 = { "O3", 3, co->codegen ? TLX_EMIT_PTX : TLX_EMIT_IR,
			"sm_90a", NULL };
	FzImage i0 = { 0 }, i3 = { 0 };
	FzData in, o0 = { 0 }, o3 = { 0 };
	tlxrt_device *dev = NULL;
	char err[256], skipped[256] = "";
	bool ok = false;

	fz_inputs(m, &in);
	if (tlxrt_device_open_errmsg("sim", &dev, err, sizeof err) != TLXRT_OK) {
		fz_fail(r, FZ_SETUP, "no simulator: %s", err);
		goto done;
	}
	/* a loop that never ends is a launch failure, soon */
	tlxrt_device_set_option(dev, TLXRT_SIM_MAX_STEPS, 20000000);
	/* fences at the tile level too (the laid-out IR is always checked) */
	tlxrt_device_set_option(dev, TLXRT_SIM_CHECK_FENCES, 1);
	if (!fz_compile(&c0, src, len, &i0, r))
		goto done;
	if (!fz_run(dev, &i0, m, &in, &o0, r)) {
		fz_prefix(r, "O0");
		goto done;
	}
	if (!fz_compile(&c3, src, len, &i3, r)) {
		/* a construct that code generation does not have yet: noted,
		 * and the -O3 IR runs instead */
		if (!co->codegen || r->kind != FZ_COMPILE ||
		    !strstr(r->msg, "is not supported for"))
			goto done;
		snprintf(skipped, sizeof skipped, "%s", r->cls);
		c3.emit = TLX_EMIT_IR;
		if (!fz_compile(&c3, src, len, &i3, r))
			goto done;
	}
	/* -O3 on another schedule: programs, tasks and copies interleaved
	 * as the data seed says, two programs resident at once (a dynamic
	 * schedule's tiles go elsewhere); a race or a missing wait shows as
	 * a report or a difference */
	tlxrt_device_set_option(dev, TLXRT_SIM_SHUFFLE, (int64_t)(m->data & 0xffff));
	tlxrt_device_set_option(dev, TLXRT_SIM_ASYNC_DELAY,
				(int64_t)(1 + (m->data >> 16) % 97));
	tlxrt_device_set_option(dev, TLXRT_SIM_RESIDENT, 2);
	if (!fz_run(dev, &i3, m, &in, &o3, r)) {
		fz_prefix(r, "O3");
		goto done;
	}
	ok = fz_compare(m, &o0, &o3, "O0 vs O3", co->nan_equal, r);
done:
	fz_image_free(&i0);
	fz_image_free(&i3);
	fz_data_free(&in);
	fz_data_free(&o0);
	fz_data_free(&o3);
	tlxrt_device_close(dev);
	if (ok)
		fz_fail(r, FZ_OK, "ok");
	snprintf(r->skipped, sizeof r->skipped, "%s", skipped);
	return ok;
}

const FzOracle fz_oracles[] = {
	{ "o0-o3", "-O0 against -O3 (PTX for sm_90a with codegen) on the "
		   "simulator, bit for bit", check_o0_o3 },
	{ NULL, NULL, NULL },
};

const FzOracle *
fz_oracle_find(const char *name)
{
	int i;

	for (i = 0; fz_oracles[i].name; i++)
		if (!name || strcmp(fz_oracles[i].name, name) == 0)
			return &fz_oracles[i];
	return NULL;
}

