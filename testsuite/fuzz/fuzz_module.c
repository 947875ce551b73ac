/*
 * fuzz_module: libFuzzer's bytes as a module image for libtlxrt on the
 * simulator backend -- a cubin (ELF), PTX or IR text, each of which
 * carries the module's IR in __tlx_ir (docs/runtime.md).  The image is
 * never trusted: tlxrt_module_load either loads it or refuses it with a
 * message; a loaded module's kernels answer every query (parameters,
 * consts, lookups by name) and refuse a launch with the wrong arguments
 * with a message.  The image readers are also asked for __tlx_meta and
 * __tlx_generic, and the __tlx_meta reader (meta.c, what the cuda backend
 * reads of a cubin) reads the global found, or the input itself, for the
 * module's kernels.  Links the runtime's sources, so its internal
 * readers (runtime/rt.h) are in reach.
 */
#include <stdio.h>
#include <stdlib.h>

#include "harness.h"
#include "runtime/rt.h"

static tlxrt_device *dev;

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	if (tlxrt_device_open("sim", &dev) != TLXRT_OK) {
		fputs("fuzz-module: no simulator device\n", stderr);
		exit(1);
	}
	return 0;
}

/* A refusal must say why. */
static void
refused(int rc, const char *what)
{
	const char *msg = tlxrt_errmsg(dev);

	if (rc == TLXRT_OK)
		return;
	if (!msg || !*msg)
		fh_finding(NULL, "%s failed (%s) without a message", what,
			   tlxrt_errstr(rc));
	if (fh_verbose())
		fprintf(stderr, "fuzz-module: %s: %s: %s\n", what,
			tlxrt_errstr(rc), msg);
}

static void
query_kernel(tlxrt_module *m, tlxrt_kernel *k)
{
	tlxrt_kernel_info ki;
	tlxrt_param_info pi;
	tlxrt_const_info ci;
	tlxrt_kernel *again;
	int i, rc;

	if (tlxrt_kernel_get_info(k, &ki) != TLXRT_OK)
		fh_finding(NULL, "tlxrt_kernel_get_info failed on a kernel");
	if (fh_verbose())
		fprintf(stderr, "fuzz-module: kernel '%s', %d params, %d warps\n",
			ki.name, ki.num_params, ki.warps);
	for (i = 0; i <= ki.num_params; i++) {
		rc = tlxrt_kernel_get_param(k, i, &pi);
		if ((rc == TLXRT_OK) != (i < ki.num_params))
			fh_finding(NULL, "parameter %d of %d: %s", i,
				   ki.num_params, tlxrt_errstr(rc));
		if (rc == TLXRT_OK && (pi.rank < 0 || pi.rank > 5))
			fh_finding(NULL, "parameter %d has rank %d", i, pi.rank);
	}
	for (i = 0; i <= ki.num_consts; i++)
		if ((tlxrt_kernel_get_const(k, i, &ci) == TLXRT_OK) !=
		    (i < ki.num_consts))
			fh_finding(NULL, "const %d of %d", i, ki.num_consts);
	if (tlxrt_kernel_get(m, ki.name, &again) != TLXRT_OK)
		fh_finding(NULL, "kernel '%s' is not found by its name", ki.name);
	/* no arguments for a kernel that takes some: refused before it runs */
	if (ki.num_params > 0)
		refused(tlxrt_launch(k, NULL, NULL, 0), "a launch of no arguments");
}

/* __tlx_meta (or the input as its text) for each of the module's kernels */
static void
read_meta(const char *text, size_t len, tlxrt_module *m)
{
	RtMeta meta;
	int i, rc;

	for (i = 0; m && i < m->nkernels; i++) {
		rc = rt_meta_find(text, len, m->kernels[i].fn->name, &meta);
		if (rc != TLXRT_OK && rc != TLXRT_NOT_FOUND &&
		    rc != TLXRT_INVALID_ARG)
			fh_finding(NULL, "rt_meta_find: %s", tlxrt_errstr(rc));
	}
	rt_meta_find(text, len, "gen", &meta);
}

static void
read_globals(const uint8_t *data, size_t size, tlxrt_module *m)
{
	static const char *const syms[] = { "__tlx_meta", "__tlx_generic",
					    "__tlx_ir" };
	int kind = rt_image_kind(data, size), i, rc;

	for (i = 0; i < 3; i++) {
		char *out = NULL;
		size_t len = 0;
		const char *why = NULL;

		if (kind == RT_IMG_ELF)
			rc = rt_image_elf_global(data, size, syms[i], &out, &len,
						 &why);
		else if (kind == RT_IMG_PTX)
			rc = rt_image_ptx_global((const char *)data, size,
						 syms[i], &out, &len, &why);
		else
			break;
		if (rc != TLXRT_OK && (!why || !*why))
			fh_finding(NULL, "reading %s failed without a reason",
				   syms[i]);
		if (rc == TLXRT_OK && i == 0)
			read_meta(out, len, m);
		free(out);
	}
	if (kind == RT_IMG_TEXT)
		read_meta((const char *)data, size, m);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	tlxrt_module *m = NULL;
	tlxrt_kernel *k;
	int rc, n = 0, i;

	if (size > 1 << 20)
		return -1;
	rc = tlxrt_module_load(dev, data, size, &m);
	refused(rc, "tlxrt_module_load");
	if (rc != TLXRT_OK && m)
		fh_finding(NULL, "a refused module came back");
	if (rc == TLXRT_OK) {
		if (tlxrt_module_num_kernels(m, &n) != TLXRT_OK || n < 0)
			fh_finding(NULL, "tlxrt_module_num_kernels");
		for (i = 0; i < n; i++) {
			if (tlxrt_module_get_kernel(m, i, &k) != TLXRT_OK)
				fh_finding(NULL, "kernel %d of %d", i, n);
			query_kernel(m, k);
		}
		if (tlxrt_module_get_kernel(m, n, &k) == TLXRT_OK)
			fh_finding(NULL, "kernel %d of %d was found", n, n);
	}
	read_globals(data, size, m);
	if (m && tlxrt_module_unload(m) != TLXRT_OK)
		fh_finding(NULL, "tlxrt_module_unload failed");
	return 0;
}
