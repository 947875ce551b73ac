/*
 * compare.c: the last step of an oracle, two runs' outputs compared bit
 * for bit (fz_compare).
 */
#include <stdio.h>
#include <string.h>

#include "gen.h"

static void
hex(char *o, size_t n, const unsigned char *p, int es)
{
	int i;

	snprintf(o, n, "0x");
	for (i = es - 1; i >= 0; i--)
		snprintf(o + 2 + (es - 1 - i) * 2, n - 2 - (size_t)(es - 1 - i) * 2,
			 "%02x", p[i]);
}

/* Whether the element at p of type t is a NaN. */
static bool
is_nan(int t, const unsigned char *p)
{
	uint64_t v = 0;

	memcpy(&v, p, (size_t)tlxrt_type_size(t));
	switch (t) {
	case TLXRT_F8E4M3: return (v & 0x7f) == 0x7f;
	case TLXRT_F8E5M2: return (v & 0x7f) > 0x7c;
	case TLXRT_F16: return (v & 0x7fff) > 0x7c00;
	case TLXRT_BF16: return (v & 0x7fff) > 0x7f80;
	case TLXRT_F32: return (v & 0x7fffffff) > 0x7f800000;
	case TLXRT_F64: return (v & ~(1ull << 63)) > 0x7ff0000000000000ull;
	default: return false;
	}
}

bool
fz_compare(const FzMeta *m, const FzData *a, const FzData *b,
	   const char *what, bool nan_equal, FzResult *r)
{
	char msg[1536];
	size_t off = 0;
	int i, bad = 0, first_arg = -1;
	bool only_nans = true;

	msg[0] = 0;
	for (i = 0; i < m->nargs; i++) {
		const FzArg *x = &m->args[i];
		int es = tlxrt_type_size(x->type);
		size_t j, nbad = 0, first = 0;

		if (x->role != FZ_OUT && x->role != FZ_INOUT)
			continue;
		if (!a->buf[i] || !b->buf[i] ||
		    !memcmp(a->buf[i], b->buf[i], a->bytes[i]))
			continue;
		for (j = 0; j < x->n; j++) {
			const unsigned char *pa = a->buf[i] + j * (size_t)es;
			const unsigned char *pb = b->buf[i] + j * (size_t)es;
			bool nans;

			if (!memcmp(pa, pb, (size_t)es))
				continue;
			nans = is_nan(x->type, pa) && is_nan(x->type, pb);
			if (nans && nan_equal)
				continue;
			only_nans &= nans;
			if (!nbad++)
				first = j;
		}
		if (!nbad)
			continue;
		if (!bad++)
			first_arg = i;
		if (off < sizeof msg - 200) {
			char ha[40], hb[40];

			hex(ha, sizeof ha, a->buf[i] + first * (size_t)es, es);
			hex(hb, sizeof hb, b->buf[i] + first * (size_t)es, es);
			off += (size_t)snprintf(msg + off, sizeof msg - off,
				"%s'%s' (%s, %zu elements): %zu differ, the first "
				"at %zu: %s vs %s", off ? "; " : "", x->name,
				tlxrt_type_name(x->type), x->n, nbad, first, ha,
				hb);
		}
	}
	if (!bad)
		return true;
	fz_fail(r, FZ_MISMATCH, "%s: %d output(s) differ%s: %s", what, bad,
		only_nans ? " (NaN bits only)" : "", msg);
	/* the output is part of the class: the reducer keeps the mismatch
	 * where it was */
	snprintf(r->cls, sizeof r->cls, "mismatch%s in '%s'",
		 only_nans ? " of NaN bits only" : "", m->args[first_arg].name);
	return false;
}
