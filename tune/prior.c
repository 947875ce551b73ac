/*
 * prior.c: tlx-tune's cost-model prior (--prior; docs/tuning.md, "The
 * cost-model prior") -- a static estimate of a configuration's time from
 * what the compiler and the grid function say about it, which orders the
 * first candidates (half of LFBO's initial population, the order of an
 * exhaustive search).  It ranks; it does not predict times.
 *
 * The facts (tune_prior_child, measure.c, compiles the configuration for
 * the simulator and loads it there): the programs of the grid for the
 * run's arguments, the warps and shared memory of a program, and the
 * tile shapes of its dots.  The estimate, for a device of S
 * multiprocessors with `smem` bytes of shared memory each:
 *
 *   resident  = programs an SM holds at once: min(32, 64 / warps,
 *               smem / (shared memory + 1 KiB)); 0: infinite
 *   busiest   = ceil(programs / S): the programs of the busiest SM, so
 *               busiest / programs is the share of the work it does
 *               (wave quantization: one program past a multiple of S
 *               costs a whole extra program's time)
 *   hiding    = min(1, resident warps / 16), resident warps =
 *               min(resident, busiest) x warps: too few warps leave
 *               latency uncovered
 *   traffic   = the dots' operand bytes per FLOP of one k-step,
 *               (MK + KN) x element bytes / 2MNK; over 0.01 bytes per
 *               FLOP (about an H100's L2 bandwidth over its bf16
 *               tensor-core rate) the loop waits on memory:
 *               memory = max(1, traffic / 0.01); kernels without dots: 1
 *   estimate  = 1000 x busiest / programs / hiding x memory
 *
 * Not modelled: registers (ptxas decides them; a budget the compiler
 * checks is a rejection, not an estimate), pipelining depth, L2 reuse
 * between programs, the epilogue, instruction mix, clusters.
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tune/driver.h"

double
tune_prior_score(const PriorFacts *f, int sm_count, int smem_per_sm)
{
	double resident = 32, busiest, hiding, memory = 1;

	if (!(f->programs >= 1) || sm_count < 1)
		return INFINITY;
	if (f->warps > 0)
		resident = fmin(resident, floor(64.0 / f->warps));
	if (f->smem > 0)
		resident = fmin(resident, floor((double)smem_per_sm /
						(f->smem + 1024.0)));
	if (resident < 1)
		return INFINITY;
	busiest = ceil(f->programs / sm_count);
	hiding = fmin(1, fmin(resident, busiest) * (f->warps > 0 ? f->warps : 1) /
			     16.0);
	if (f->flops > 0)
		memory = fmax(1, f->bytes / f->flops / 0.01);
	return 1000 * busiest / f->programs / hiding * memory;
}

/* The bytes of an element type's name ("bf16", "f32", "f8e4m3"). */
static int
elem_bytes(const char *t)
{
	if (!strncmp(t, "f8", 2) || !strncmp(t, "i8", 2))
		return 1;
	if (!strncmp(t, "f16", 3) || !strncmp(t, "bf16", 4))
		return 2;
	if (!strncmp(t, "f64", 3))
		return 8;
	return 4;
}

/* "tile<64x32xbf16, #l>" or "smem<64x32xbf16>" at s: the dims (at most
 * 3) and element bytes. */
static int
tile_type(const char *s, long dims[3], int *es)
{
	int n = 0;

	if (strncmp(s, "tile<", 5) && strncmp(s, "smem<", 5))
		return 0;
	s += 5;
	while (n < 3 && *s >= '0' && *s <= '9') {
		char *end;

		dims[n++] = strtol(s, &end, 10);
		if (*end != 'x')
			return 0;
		s = end + 1;
	}
	*es = elem_bytes(s);
	return n;
}

/* The type of value `at` (len bytes; its definition "%name: tile<...>"). */
static int
value_type(const char *ir, const char *at, size_t len, long dims[3], int *es)
{
	char name[64];

	if (len >= sizeof name)
		return 0;
	memcpy(name, at, len);
	name[len] = 0;
	for (const char *p = ir; (p = strstr(p, name)); p += len) {
		if ((p == ir || p[-1] == ' ' || p[-1] == '\n' || p[-1] == '(') &&
		    !strncmp(p + len, ": ", 2))
			return tile_type(p + len + 2, dims, es);
	}
	return 0;
}

void
tune_prior_dots(const char *ir, double *flops, double *bytes)
{
	*flops = *bytes = 0;
	for (const char *p = ir; (p = strstr(p, " = dot")); p++) {
		const char *line = p, *op = p + 6, *a;
		long r[3], at[3];
		int n, na, es, aes;
		size_t alen;

		if (*op == '_' && !strncmp(op, "_async", 6))
			op += 6;
		if (*op != ' ')
			continue;
		while (line > ir && line[-1] != '\n')
			line--;
		if (!(a = strchr(line, ':')) || a > p)
			continue;
		if ((n = tile_type(a + 2, r, &es)) != 2)
			continue;
		a = op + 1;
		alen = strcspn(a, ", \n");
		if (*a != '%' ||
		    (na = value_type(ir, a, alen, at, &aes)) != 2 ||
		    at[0] != r[0])
			continue;
		/* a[M,K] b[K,N] -> [M,N] */
		*flops += 2.0 * r[0] * r[1] * at[1];
		*bytes += (double)(r[0] * at[1] + at[1] * r[1]) * aes;
	}
}
