/*
 * fuzz_gen: libFuzzer's bytes as the choices of the program generator
 * (gen.c, fz_generate_bytes): every input is a well-typed program, so
 * every input reaches sema, the passes and target lowering, and coverage
 * steers the choices.  Each program must compile at -O0 (tile IR) and at
 * -O3 through target lowering (laid-out IR), for sm_90a; a refusal is a
 * finding (of the compiler or of the generator), as is IR that does not
 * round-trip.  With TLX_FUZZ_ORACLE=1 each program also goes through the
 * o0-o3 oracle (oracle.c: both levels run on the simulator, outputs bit
 * for bit), about a hundred times slower.  A quarter of the programs
 * have an asynchronous part (async.c: tasks, pipes, TMA, dot_async,
 * schedules), whose lowering is where the passes are most intricate.
 */
#include <stdio.h>
#include <stdlib.h>

#include "gen.h"
#include "harness.h"

static void
compile_one(const char *src, int olevel, bool lower)
{
	FhCompile c = { .olevel = olevel, .sm = 90, .lower = lower };
	Buf err = { 0 };

	fh_compile(src, strlen(src), &c);
	if (!c.ok)
		fh_finding(src, "-O%d: the compiler refused a generated program: "
			   "%s", olevel, c.oom ? "out of memory" : c.diags.s);
	if (!fh_round_trip(c.ir.s, c.ir.n, &err))
		fh_finding(src, "-O%d: the IR does not round-trip: %s", olevel,
			   err.s);
	buf_free(&err);
	fh_compile_free(&c);
}

static void
oracle(const char *src)
{
	FzCheckOpts co = { .nan_equal = true };
	FzResult r;

	fz_check(fz_oracle_find("o0-o3"), src, strlen(src), &co, &r);
	if (r.kind != FZ_OK)
		fh_finding(src, "o0-o3 oracle: %s: %s", fz_kind_names[r.kind],
			   r.msg);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const FzGenOpts opts = { .async_pct = 25, .approx_pct = 10 };
	static int use_oracle = -1;
	char *src;

	if (use_oracle < 0)
		use_oracle = getenv("TLX_FUZZ_ORACLE") &&
			     strcmp(getenv("TLX_FUZZ_ORACLE"), "0") != 0;
	/* more bytes than a program makes choices are never read */
	if (size > 4096)
		return -1;
	if (!(src = fz_generate_bytes(data, size, &opts, NULL)))
		return 0;
	if (fh_verbose())
		fprintf(stderr, "fuzz-gen: the program\n%s", src);
	compile_one(src, 0, false);
	compile_one(src, 3, true);
	if (use_oracle)
		oracle(src);
	free(src);
	return 0;
}
