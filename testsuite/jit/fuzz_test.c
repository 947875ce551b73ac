/*
 * fuzz_test: mutated programs through libtlx, in-process, so that the
 * sanitizers of the test build (ASan, UBSan, leak checking) watch the
 * lexer, parser, sema, IR generation, the passes and, for some inputs,
 * code generation.  Every input must compile or be refused with a
 * diagnostic (TLX_COMPILE, or TLX_UNSUPPORTED for a construct a target
 * lacks): no crash, abort, hang, leak or other status.  What the front
 * end accepts goes on through LLVM to PTX for sm_90a, sm_80 or sm_100a.  The mutations are
 * those of a byte-level fuzzer -- ranges deleted, duplicated or moved,
 * bytes replaced, tokens of the language inserted, the text cut short --
 * from a fixed seed, so a failure reproduces.
 *
 *   fuzz_test EXAMPLES_DIR [ITERATIONS [SEED]]
 *
 * A failing input is written to fuzz-fail-N.tlx in the current directory;
 * with TLX_FUZZ_KEEP set, each input is first written to fuzz-last.tlx, so
 * that a crash leaves its input behind.
 */
#include <dirent.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../unit/test.h"
#include "tlx/tlx.h"

typedef struct Text {
	char *s;
	size_t n;
} Text;

static uint64_t rng_state;

static uint32_t
rnd(uint32_t n)
{
	/* xorshift64*: enough for choosing mutations */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return n ? (uint32_t)((rng_state * 2685821657736338717ull) >> 33) % n : 0;
}

static const char *const tokens[] = {
	"(", ")", "[", "]", "{", "}", ",", ";", ":", "..", "0", "1", "-1",
	"4096", "1e40", "0x7fffffffffffffffff", "3.5e-50", "f32", "bf16",
	"f8e4m3", "i1", "u8", "let ", "var ", "for ", "if ", "else ", "while ",
	"return ", "const ", "kernel ", "fn ", "dot(", "load(", "store(",
	"range(", "sum(", "max(", "exp(", "where(", "zeros(f32, [16, 16])",
	".to(f8e5m2)", "axis: 0", "mask: ", "None", "*", "+", "/", "%", "<<",
	"==", "&&", "!", "~", "warps(3) ", "grid(0) ", "cluster(2, 1, 1) ",
	"stages(9) ", "shared ", "barrier ", "tasks ", "\"", "/*", "*/", "//",
	"\xff", "\x00", "\t", "\n",
};

static const char *const numbers[] = {
	"0", "1", "2", "3", "7", "16", "17", "31", "64", "100", "128", "1000",
	"1024", "4096", "65536", "1048576", "2147483647", "2147483648", "-1",
	"-16", "0.5", "1e30",
};

static const char *const types[] = {
	"i1", "i8", "i16", "i32", "i64", "u8", "u32", "f16", "bf16", "f32",
	"f64", "f8e4m3", "f8e5m2",
};

/* Replaces the number or type name at or after p with another: programs
 * that still parse, for sema, shapes and code generation. */
static bool
swap_word(Text *t, uint32_t p)
{
	size_t a, b;
	const char *w;
	bool num;

	for (a = p; a < t->n && !(t->s[a] >= '0' && t->s[a] <= '9') &&
		    !(t->s[a] == 'f' || t->s[a] == 'i' || t->s[a] == 'u' ||
		      t->s[a] == 'b'); a++)
		;
	if (a >= t->n || (a > 0 && (t->s[a - 1] == '_' ||
				    (t->s[a - 1] >= 'a' && t->s[a - 1] <= 'z'))))
		return false;
	num = t->s[a] >= '0' && t->s[a] <= '9';
	for (b = a; b < t->n && ((t->s[b] >= '0' && t->s[b] <= '9') ||
				 (t->s[b] >= 'a' && t->s[b] <= 'z') ||
				 (!num && t->s[b] == '_') || t->s[b] == '.'); b++)
		;
	if (!num) {
		size_t i, ok = 0;

		for (i = 0; i < sizeof types / sizeof *types; i++)
			ok |= strlen(types[i]) == b - a &&
			      !memcmp(t->s + a, types[i], b - a);
		if (!ok)
			return false;
		w = types[rnd((uint32_t)(sizeof types / sizeof *types))];
	} else
		w = numbers[rnd((uint32_t)(sizeof numbers / sizeof *numbers))];
	t->s = realloc(t->s, t->n + strlen(w) + 1);
	if (!t->s)
		abort();
	memmove(t->s + a + strlen(w), t->s + b, t->n - b);
	memcpy(t->s + a, w, strlen(w));
	t->n = t->n - (b - a) + strlen(w);
	return true;
}

/* Applies one to three mutations to t, from the corpus for splices. */
static void
mutate(Text *t, const Text *corpus, int ncorpus)
{
	int k, nm = 1 + (int)rnd(3);

	for (k = 0; k < nm; k++) {
		uint32_t op = rnd(130), p = rnd((uint32_t)t->n + 1), len;
		const char *ins = NULL;
		size_t insn = 0;

		if (op >= 100) {                        /* a number or a type */
			int tries;

			for (tries = 0; tries < 8 && !swap_word(t, p); tries++)
				p = rnd((uint32_t)t->n + 1);
			continue;
		}
		if (op < 25) {                          /* delete a range */
			len = 1 + rnd(24);
			if (p + len > t->n)
				len = (uint32_t)(t->n - p);
			memmove(t->s + p, t->s + p + len, t->n - p - len);
			t->n -= len;
			continue;
		}
		if (op < 50) {                          /* a token */
			ins = tokens[rnd((uint32_t)(sizeof tokens / sizeof *tokens))];
			insn = strlen(ins);
			if (!insn)
				insn = 1;               /* the NUL byte itself */
		} else if (op < 65) {                   /* a byte */
			if (p < t->n)
				t->s[p] = (char)rnd(256);
			continue;
		} else if (op < 90) {                   /* a chunk of any example */
			const Text *o = &corpus[rnd((uint32_t)ncorpus)];
			uint32_t q = rnd((uint32_t)o->n);

			ins = o->s + q;
			insn = 1 + rnd(60);
			if (q + insn > o->n)
				insn = o->n - q;
		} else if (op < 95) {                   /* cut short */
			t->n = p;
			continue;
		} else {                                /* deep nesting */
			static char deep[600];

			memset(deep, rnd(2) ? '(' : '[', sizeof deep);
			ins = deep;
			insn = sizeof deep;
		}
		t->s = realloc(t->s, t->n + insn + 1);
		if (!t->s)
			abort();
		memmove(t->s + p + insn, t->s + p, t->n - p);
		memcpy(t->s + p, ins, insn);
		t->n += insn;
	}
}

static int
read_corpus(const char *dir, Text *out, int max)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d)) && n < max) {
		char path[1024];
		FILE *f;
		long len;

		if (!strstr(e->d_name, ".tlx"))
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		if (!(f = fopen(path, "rb")))
			continue;
		fseek(f, 0, SEEK_END);
		len = ftell(f);
		fseek(f, 0, SEEK_SET);
		out[n].s = malloc((size_t)len + 1);
		out[n].n = fread(out[n].s, 1, (size_t)len, f);
		fclose(f);
		n++;
	}
	closedir(d);
	return n;
}

int
main(int argc, char **argv)
{
	static const char *const targets[] = { "sm_90a", "sm_80", "sm_100a" };
	Text corpus[32];
	int ncorpus, it, iters, compiled = 0, refused = 0, ptx = 0, i;
	bool keep = getenv("TLX_FUZZ_KEEP") != NULL;
	tlx_ctx *c;

	if (argc < 2) {
		fprintf(stderr, "usage: fuzz_test EXAMPLES_DIR [ITERATIONS [SEED]]\n");
		return 2;
	}
	iters = argc > 2 ? atoi(argv[2]) : 300;
	rng_state = argc > 3 ? strtoull(argv[3], NULL, 0) : 0x7f4a7c159e3779b9ull;
	ncorpus = read_corpus(argv[1], corpus, 32);
	CHECK(ncorpus > 0);
	ASSERT(TLX_OK, tlx_ctx_create(NULL, NULL, &c));
	ASSERT(TLX_OK, tlx_cache_set_dir(c, NULL));
	for (it = 0; it < iters && ncorpus > 0; it++) {
		const Text *src = &corpus[rnd((uint32_t)ncorpus)];
		Text t = { malloc(src->n + 1), src->n };
		tlx_options o = { .name = "fuzz.tlx", .emit = TLX_EMIT_IR,
				  .no_cache = 1 };
		tlx_module *m = NULL;
		int rc;

		memcpy(t.s, src->s, src->n);
		mutate(&t, corpus, ncorpus);
		if (keep) {  /* what a crash leaves behind */
			FILE *f = fopen("fuzz-last.tlx", "wb");

			if (f) {
				fwrite(t.s, 1, t.n, f);
				fclose(f);
			}
		}
		rc = tlx_compile(c, t.s, t.n, &o, &m);
		/* what the front end accepts goes on through LLVM to PTX, for
		 * one of the targets */
		if (rc == TLX_OK) {
			tlx_module_destroy(m);
			m = NULL;
			o.emit = TLX_EMIT_PTX;
			o.target = targets[rnd(3)];
			rc = tlx_compile(c, t.s, t.n, &o, &m);
		}
		if (rc == TLX_OK) {
			compiled++;
			ptx++;
		}
		else if ((rc == TLX_COMPILE || rc == TLX_UNSUPPORTED) &&
			 tlx_errmsg(c)[0])
			refused++;
		else {
			char name[64];
			FILE *f;

			snprintf(name, sizeof name, "fuzz-fail-%d.tlx", it);
			if ((f = fopen(name, "wb"))) {
				fwrite(t.s, 1, t.n, f);
				fclose(f);
			}
			fprintf(stderr, "input %d (%s): status %d, '%s'\n", it,
				name, rc, tlx_errmsg(c));
			test_failures++;
		}
		tlx_module_destroy(m);
		tlx_cache_clear(c);
		free(t.s);
	}
	tlx_ctx_destroy(c);
	for (i = 0; i < ncorpus; i++)
		free(corpus[i].s);
	printf("%d inputs: %d compiled to PTX, %d refused with a diagnostic\n",
	       iters, ptx, refused);
	/* the mutations break programs, and leave some whole */
	CHECK(refused > iters / 4 && compiled > iters / 20);
	TEST_MAIN_END();
}
