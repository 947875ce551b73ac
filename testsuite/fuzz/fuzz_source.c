/*
 * fuzz_source: libFuzzer's bytes as a program, through the lexer, the
 * parser, sema, IR generation, the -O pipeline and target lowering to the
 * laid-out IR (jit/compile.c, as tlxc and libtlx run it; no LLVM).  The
 * -O level and the target come from the input's hash.  Every input must
 * compile or be refused with an error; what compiles must print IR that
 * reads back, verifies and prints the same (the round trip of il.md).
 *
 * Most random bytes stop in the lexer or the parser, so half of the
 * mutations are of tokens (LLVMFuzzerCustomMutator): a word, number or
 * punctuator deleted, repeated, moved or replaced by a word of the
 * dictionary (-dict=tlx.dict, made from the lexer's keywords, the
 * builtins and the kernel attributes), a run of tokens copied elsewhere;
 * the other half are libFuzzer's own.
 */
#include <stdio.h>
#include <stdlib.h>

#include "harness.h"
#include "tokmut.h"

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	tm_load_dict(*argc, *argv);
	return 0;
}

size_t
LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size,
			unsigned int seed)
{
	return tm_mutate(data, size, max_size, seed);
}

/* print(read(ir)) == ir for the IR the compiler printed */
static void
check_round_trip(const char *ir, size_t n)
{
	Buf err = { 0 };

	if (!fh_round_trip(ir, n, &err))
		fh_finding(ir, "the compiler's IR does not round-trip: %s", err.s);
	buf_free(&err);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t h = fh_hash(data, size);
	FhCompile c = { .olevel = (int)(h % 4), .sm = fh_sm(h >> 2),
			.lower = (h >> 8) % 4 != 0 };

	/* the front end's own input limit is the lead's (issue 19); big
	 * inputs only make the run slower */
	if (size > 65536)
		return -1;
	fh_compile((const char *)data, size, &c);
	if (fh_verbose())
		fprintf(stderr, "fuzz-source: -O%d sm_%d %s: %s\n%s", c.olevel,
			c.sm, c.lower ? "laid-out" : "tile IR",
			c.ok ? "compiled" : c.oom ? "out of memory" : "refused",
			c.ok ? c.ir.s : c.diags.s ? c.diags.s : "");
	if (c.ok)
		check_round_trip(c.ir.s, c.ir.n);
	fh_compile_free(&c);
	return 0;
}
