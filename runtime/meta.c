/*
 * meta.c: the launch facts tlxc writes into __tlx_meta (codegen/meta.c),
 * one line per kernel after the header:
 *
 *   tlx-meta 1 target=sm_90a
 *   kernel NAME threads=T smem=D static=S [fast=ENTRY align=0xA divN=0xB eq1=0xC
 *          [tma_only=0xD] [generic=ptx]]
 *
 * and which entry a launch runs.  A kernel with a `fast` entry has two:
 * NAME, correct for any arguments, and ENTRY, correct when the arguments
 * of the parameters in `align` (bit i: parameter i) are 16-byte aligned
 * pointers, those in `divN` multiples of N (2, 4, 8 or 16: the elements
 * of 16 bytes of the kernel's smallest element type) and those in `eq1`
 * equal to 1 -- less those in `tma_only` (only the kernel's tensor maps
 * need them) where the launch's derived tensors all make tensor maps,
 * staged ones included; `generic=ptx`: the generic entry is PTX in the module's
 * __tlx_generic, for the driver to assemble.  Unknown keys are skipped,
 * so older readers take newer lines.
 */

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>

#include "runtime/rt.h"

static bool
entry_char(int c)
{
	return isalnum(c) || c == '_' || c == '$';
}

static bool
is_key(const char *k, const char *eq, const char *name)
{
	return (size_t)(eq - k) == strlen(name) &&
	       memcmp(k, name, (size_t)(eq - k)) == 0;
}

/* One field KEY=VALUE of a kernel's line. */
static bool
field(const char *k, const char *e, RtMeta *m)
{
	const char *eq = memchr(k, '=', (size_t)(e - k)), *v;
	unsigned long long x;
	char *stop;
	size_t n, i;

	if (!eq)
		return false;
	v = eq + 1;
	n = (size_t)(e - v);
	if (is_key(k, eq, "fast")) {
		if (n == 0 || n >= sizeof m->fast)
			return false;
		for (i = 0; i < n; i++)
			if (!entry_char((unsigned char)v[i]))
				return false;
		memcpy(m->fast, v, n);
		m->fast[n] = 0;
		return true;
	}
	if (is_key(k, eq, "generic")) {
		m->generic_ptx = n == 3 && memcmp(v, "ptx", 3) == 0;
		return true;
	}
	if (n == 0 || !isdigit((unsigned char)*v))
		return false;
	errno = 0;
	x = strtoull(v, &stop, 0);
	if (errno || stop != e)
		return false;
	if (is_key(k, eq, "threads"))
		m->threads = (long long)x;
	else if (is_key(k, eq, "smem"))
		m->smem = (long long)x;
	else if (is_key(k, eq, "static"))
		m->smem_static = (long long)x;
	else if (is_key(k, eq, "align"))
		m->align = x;
	else if (is_key(k, eq, "div16") || is_key(k, eq, "div8") ||
		 is_key(k, eq, "div4") || is_key(k, eq, "div2")) {
		m->div = x;
		m->divisor = atoi(k + 3);
	}
	else if (is_key(k, eq, "eq1"))
		m->eq1 = x;
	else if (is_key(k, eq, "tma_only"))
		m->tma_only = x;
	return true;
}

/* The fields after "kernel NAME", up to the end of the line. */
static bool
fields(const char *p, const char *end, RtMeta *m)
{
	while (p < end) {
		const char *k = p;

		while (p < end && *p != ' ')
			p++;
		if (p > k && !field(k, p, m))
			return false;
		while (p < end && *p == ' ')
			p++;
	}
	return m->threads > 0;
}

int
rt_meta_find(const char *text, size_t len, const char *kernel, RtMeta *out)
{
	const char *p = text, *end = text + len;
	size_t kn = strlen(kernel);

	memset(out, 0, sizeof *out);
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *e = nl ? nl : end;

		if ((size_t)(e - p) > 7 + kn && memcmp(p, "kernel ", 7) == 0 &&
		    memcmp(p + 7, kernel, kn) == 0 && p[7 + kn] == ' ') {
			if (fields(p + 8 + kn, e, out))
				return TLXRT_OK;
			memset(out, 0, sizeof *out);
			return TLXRT_INVALID_ARG;
		}
		p = e + (nl != NULL);
	}
	return TLXRT_NOT_FOUND;
}

static bool
fast_ok(const RtMeta *m, const RtArg *args, int nargs, uint64_t waived)
{
	uint64_t all = m->align | m->div | m->eq1;
	int i;

	if (!m->fast[0] || (nargs < 64 && (all >> nargs)))
		return false;
	for (i = 0; i < nargs && i < 64; i++) {
		uint64_t bit = 1ull << i;

		if (!(all & bit) || (waived & bit))
			continue;
		if (m->align & bit) {
			if (args[i].kind != TLXRT_PARAM_POINTER ||
			    (args[i].bits & 15))
				return false;
		} else if (args[i].kind != TLXRT_PARAM_SCALAR) {
			return false;
		} else if ((m->div & bit) &&
			   (m->divisor <= 0 || args[i].bits % (uint64_t)m->divisor)) {
			return false;
		} else if ((m->eq1 & bit) && args[i].bits != 1) {
			return false;
		}
	}
	return true;
}

bool
rt_fast_ok(const RtMeta *m, const RtArg *args, int nargs)
{
	return fast_ok(m, args, nargs, 0);
}

bool
rt_fast_launch_ok(const tlxrt_kernel *k, const RtMeta *m, const RtArg *args)
{
	return rt_derived_ok(k, args) && fast_ok(m, args, k->nparams, m->tma_only);
}

bool
rt_generic_forced(void)
{
	const char *g = getenv("TLXRT_GENERIC");

	return g && *g && strcmp(g, "0");
}

bool
rt_derived_ok(const tlxrt_kernel *k, const RtArg *args)
{
	int i;

	for (i = k->nparams; i < k->nall; i++)
		if (args[i].invalid)
			return false;
	return true;
}
