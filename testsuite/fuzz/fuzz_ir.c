/*
 * fuzz_ir: libFuzzer's bytes as textual IR (docs/il.md), as tlx-opt and
 * tlxc read a .tir file: the reader, the verifier, then the -O pipeline
 * and target lowering (jit/compile.c), the -O level, the target and
 * whether to lower chosen by the input's hash.  A module the verifier
 * accepts must round-trip (print(read(print(m))) == print(m)), pass
 * through the pipeline or be refused with an error (never a verifier
 * complaint after a pass, which is a bug), and print IR that round-trips
 * again.  Mutations: of tokens half of the time, with -dict=tir.dict (the
 * op names of ir/ops.def, the reader's words, the attributes the code
 * reads), libFuzzer's own the other half.
 */
#include <setjmp.h>
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

/* Reads and verifies the input; when the verifier accepts it, its printed
 * form must round-trip.  Returns whether it verified. */
static bool
read_input(const uint8_t *data, size_t size)
{
	PrintOpts po = { .locs = true };
	Arena a;
	IrCtx c;
	Source s;
	Diag d;
	Module *m;
	Buf b = { 0 }, err = { 0 };
	jmp_buf oom;
	bool ok;

	arena_init(&a, NULL, NULL, NULL);
	if (setjmp(oom)) {
		arena_reset(&a);
		return false;
	}
	a.oom = &oom;
	ir_ctx_init(&c, &a);
	src_init(&s, &a, "fuzz.tir", (const char *)data, size);
	diag_init(&d, &a, &s, NULL);
	m = ir_read(&c, &d, &s);
	ok = m && !d.nerrors && ir_verify_module(m, &d);
	if (!ok && d.nerrors == 0)
		fh_finding(NULL, "the IR reader or verifier refused the input "
			   "without an error");
	if (ok) {
		ir_print_module(&b, m, &po);
		buf_put(&b, "", 0);
		if (!fh_round_trip(b.s, b.n, &err))
			fh_finding(b.s, "verified IR does not round-trip: %s",
				   err.s);
	}
	a.oom = NULL;
	buf_free(&b);
	arena_reset(&a);
	return ok;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t h = fh_hash(data, size);
	FhCompile c = { .olevel = (int)(h % 4), .sm = fh_sm(h >> 2),
			.tir = true, .lower = (h >> 8) % 2 != 0 };
	Buf err = { 0 };

	if (size > 65536)
		return -1;
	if (!read_input(data, size))
		return 0;
	fh_compile((const char *)data, size, &c);
	if (fh_verbose())
		fprintf(stderr, "fuzz-ir: -O%d sm_%d %s: %s\n%s", c.olevel,
			c.sm, c.lower ? "lowered" : "not lowered",
			c.ok ? "compiled" : c.oom ? "out of memory" : "refused",
			c.ok ? c.ir.s : c.diags.s ? c.diags.s : "");
	if (c.ok && !fh_round_trip(c.ir.s, c.ir.n, &err))
		fh_finding(c.ir.s, "the IR after the passes does not round-trip: "
			   "%s", err.s);
	buf_free(&err);
	fh_compile_free(&c);
	return 0;
}
