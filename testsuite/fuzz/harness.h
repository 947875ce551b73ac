/*
 * harness.h: what the libFuzzer harnesses of testsuite/fuzz/ share
 * (harness.c).  Each harness is one fuzz_*.c file with its
 * LLVMFuzzerTestOneInput; docs/internals.md ("Fuzzing") says how to build
 * and run them.
 *
 *   fuzz_source.c  bytes as a program: lexer, parser, sema, IR, passes
 *   fuzz_gen.c     bytes as the generator's choices: well-typed programs
 *   fuzz_ir.c      bytes as textual IR: reader, verifier, passes, printer
 *   fuzz_module.c  bytes as a module image: libtlxrt's loader (sim)
 *   fuzz_args.c    bytes as a launch: argument and descriptor checks
 *
 * A finding is a crash, a sanitizer report, a leak, a hang or a call of
 * fh_finding: the input then is a reproducer, run again with
 *   testsuite/fuzz/fuzz-NAME FILE
 * and TLX_FUZZ_VERBOSE=1 prints what the harness did with it.
 */
#ifndef TLX_FUZZ_HARNESS_H
#define TLX_FUZZ_HARNESS_H

#include <stddef.h>
#include <stdint.h>

#include "jit/jit.h"

/* libFuzzer's entry points (the harnesses define them) */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size,
			       unsigned int seed);
/* libFuzzer's own mutator, for a custom one to fall back on */
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);

/* One compilation: how, and what it gave. */
typedef struct FhCompile {
	int olevel;        /* 0..3 */
	int sm;            /* 80, 90, 100 */
	bool tir;          /* the text is IR, not a program */
	bool lower;        /* on through target lowering (laid-out IR) */
	/* results */
	bool ok;           /* compiled without errors */
	bool oom;          /* an arena ran out (the protected boundary) */
	Buf diags;         /* every diagnostic, rendered (caller frees) */
	Buf ir;            /* ok: the IR printed (caller frees) */
} FhCompile;

/* Compiles text (len bytes, any bytes) as c says, in process, through
 * jit/compile.c's pipeline, behind a protected boundary as tlx_compile
 * has.  Fills c's results; never exits. */
void fh_compile(const char *text, size_t len, FhCompile *c);
void fh_compile_free(FhCompile *c);

/* print(read(ir)) == ir, ir read and verified as IR text (n bytes,
 * NUL-terminated) that the compiler printed; false with the reason in err
 * (caller frees). */
bool fh_round_trip(const char *ir, size_t n, Buf *err);

/* A hash of the input, for choices that must not depend on libFuzzer's
 * state (the -O level, the target): the same input makes the same ones. */
uint64_t fh_hash(const uint8_t *data, size_t n);
/* sm_80, sm_90a, sm_100a: k modulo 3 */
int fh_sm(uint64_t k);

/* True when TLX_FUZZ_VERBOSE is set: harnesses say what they do. */
bool fh_verbose(void);

/* A finding: prints the message and, when given, the text the harness
 * made of the input, then aborts (libFuzzer writes the input out). */
TLX_NORETURN void fh_finding(const char *text, const char *fmt, ...)
	TLX_PRINTF(2, 3);

#endif
