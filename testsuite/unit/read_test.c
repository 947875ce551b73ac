/* Unit tests of ir/read.c and of everything behind it on odd input: the
 * limits (nesting, NUL bytes, empty input), then a mutation fuzzer over
 * the .tir files named on the command line.  Each mutant must read or be
 * rejected with an error (never crash: run it under ASan); one that reads
 * must round-trip (print(read(print(m))) == print(m)); one that also
 * verifies goes through the -O2 pipeline with the verifier after every
 * pass, and its result must verify and round-trip too. */
#include <stdlib.h>

#include "passes/passes.h"
#include "test.h"

static FILE *devnull;
static int shown;

typedef struct Outcome {
	bool read, verified, optimized;
} Outcome;

/* print(m) read back and printed again gives print(m). */
static bool
round_trips(Module *m, Arena *a)
{
	IrCtx c;
	Source s;
	Diag d;
	Buf b1 = { 0 }, b2 = { 0 };
	Module *m2;
	PrintOpts po = { .locs = true };
	bool ok;

	ir_print_module(&b1, m, &po);
	buf_put(&b1, "", 0);
	ir_ctx_init(&c, a);
	src_init(&s, a, "printed", b1.s, b1.n);
	diag_init(&d, a, &s, NULL);
	m2 = ir_read(&c, &d, &s);
	if (m2)
		ir_print_module(&b2, m2, &po);
	buf_put(&b2, "", 0);
	ok = m2 && strcmp(b1.s, b2.s) == 0;
	if (!ok && shown++ < 3)
		fprintf(stderr, "round trip failed:\n--- first\n%s--- second\n%s\n",
			b1.s, b2.s);
	buf_free(&b1);
	buf_free(&b2);
	return ok;
}

static Outcome
try_text(const char *text, size_t len)
{
	Arena a;
	IrCtx c;
	Source s;
	Diag d;
	Module *m;
	Outcome o = { false, false, false };
	PipelineOpts po = { .verify_each = true, .out = devnull };

	arena_init(&a, NULL, NULL, NULL);
	ir_ctx_init(&c, &a);
	src_init(&s, &a, "fuzz.tir", text, len);
	diag_init(&d, &a, &s, NULL);
	m = ir_read(&c, &d, &s);
	if (m) {
		o.read = true;
		CHECK(d.nerrors == 0);
		CHECK(round_trips(m, &a));
		o.verified = ir_verify_module(m, &d);
	} else {
		CHECK(d.nerrors == 1);  /* the reader stops at its first error */
	}
	if (o.verified &&
	    pass_run_pipeline(m, pass_default_pipeline(2), &po, &d)) {
		o.optimized = true;
		CHECK(ir_verify_module(m, &d));
		CHECK(round_trips(m, &a));
	}
	arena_reset(&a);
	return o;
}

static Outcome
try_str(const char *s)
{
	return try_text(s, strlen(s));
}

/* ---- limits ---------------------------------------------------------------- */

static char *
nested_ifs(int depth)
{
	Buf b = { 0 };
	int i;

	buf_puts(&b, "kernel @k(%c: i1) {\n");
	for (i = 0; i < depth; i++)
		buf_puts(&b, "if %c {\n");
	for (i = 0; i < depth; i++)
		buf_puts(&b, "yield\n} {\nyield\n}\n");
	buf_puts(&b, "return\n}\n");
	return b.s;
}

static char *
nested_ptrs(int depth)
{
	Buf b = { 0 };
	int i;

	buf_puts(&b, "func @f(%p: ");
	for (i = 0; i < depth; i++)
		buf_puts(&b, "ptr<");
	buf_puts(&b, "f32");
	for (i = 0; i < depth; i++)
		buf_puts(&b, ">");
	buf_puts(&b, ") {\nreturn\n}\n");
	return b.s;
}

/* Funcs f0..f(n-1), each calling the next inside `depth` nested ifs, and
 * a kernel calling f0: inlining all would nest n * depth regions. */
static char *
deep_calls(int n, int depth)
{
	Buf b = { 0 };
	int f, i;

	for (f = 0; f < n; f++) {
		buf_printf(&b, "func @f%d(%%c: i1) {\n", f);
		for (i = 0; i < depth; i++)
			buf_puts(&b, "if %c {\n");
		if (f + 1 < n)
			buf_printf(&b, "call %%c {callee = \"f%d\"}\n", f + 1);
		for (i = 0; i < depth; i++)
			buf_puts(&b, "yield\n} {\nyield\n}\n");
		buf_puts(&b, "return\n}\n");
	}
	buf_puts(&b, "kernel @k(%c: i1) {\ncall %c {callee = \"f0\"}\nreturn\n}\n");
	return b.s;
}

static void
test_limits(void)
{
	char *s;
	Outcome o;

	s = nested_ifs(255);  /* the body is not a region: 255 ifs nest 255 deep */
	o = try_str(s);
	CHECK(o.read && o.verified && o.optimized);
	free(s);
	s = nested_ifs(256);
	CHECK(try_str(s).read);
	free(s);
	s = nested_ifs(257);
	CHECK(!try_str(s).read);
	free(s);
	s = nested_ptrs(16);
	CHECK(try_str(s).read);
	free(s);
	s = nested_ptrs(17);
	CHECK(!try_str(s).read);
	free(s);
	CHECK(try_str("").read);                       /* an empty module */
	CHECK(try_str("// only a comment").read);
	CHECK(!try_text("func @f() {\0 return }", 21).read);  /* a NUL byte */
	CHECK(!try_str("func @f() { return } \x80").read);
	CHECK(!try_str("%").read);
	CHECK(!try_str("@").read);
	CHECK(!try_str("-").read);
	CHECK(!try_str("func @f() {a = \"\\x4").read);
	CHECK(!try_str("func @f(%x: tile<4x").read);
	CHECK(!try_str("func @f(%x: tile<4294967296xf32>) { return }").read);
	CHECK(!try_str("func @f() { return @1:").read);
	CHECK(try_str("func @f() {\r\n  return\r\n}\r\n").verified);
	s = deep_calls(4, 200);  /* 800 deep after inlining: fine */
	o = try_str(s);
	CHECK(o.verified && o.optimized);
	free(s);
	s = deep_calls(6, 200);  /* 1200 deep: inline refuses */
	o = try_str(s);
	CHECK(o.verified && !o.optimized);
	free(s);
}

/* ---- the fuzzer --------------------------------------------------------------- */

static uint64_t rng = 0x2545f4914f6cdd1dull;  /* TLX_FUZZ_SEED changes it */

static uint32_t
rnd(uint32_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return n ? (uint32_t)(rng % n) : 0;
}

static const char alphabet[] = "{}()<>[]%@,:=!^-x\"\\\n 0123456789abfip.";

/* Start and end of line number `k` (0-based, wrapping) of b. */
static void
line_span(const Buf *b, uint32_t k, size_t *start, size_t *end)
{
	size_t i = 0;

	while (k-- && i < b->n) {
		const char *nl = memchr(b->s + i, '\n', b->n - i);

		i = nl ? (size_t)(nl - b->s) + 1 : b->n;
	}
	*start = i;
	while (i < b->n && b->s[i] != '\n')
		i++;
	*end = i < b->n ? i + 1 : i;
}

/* One random edit of text into out. */
static void
mutate(const char *text, size_t len, Buf *out)
{
	size_t p = rnd((uint32_t)len + 1), q, s0, e0, s1, e1;
	Buf in = { (char *)text, len, len };

	out->n = 0;
	switch (rnd(6)) {
	case 0:  /* replace a byte */
		buf_put(out, text, len);
		if (len)
			out->s[p % len] = alphabet[rnd(sizeof alphabet - 1)];
		break;
	case 1:  /* insert a byte */
		buf_put(out, text, p);
		buf_putc(out, alphabet[rnd(sizeof alphabet - 1)]);
		buf_put(out, text + p, len - p);
		break;
	case 2:  /* delete a span */
		q = p + 1 + rnd(12);  /* (MIN would call rnd twice) */
		q = MIN(len, q);
		buf_put(out, text, p);
		buf_put(out, text + q, len - q);
		break;
	case 3:  /* delete a line */
		line_span(&in, rnd(200), &s0, &e0);
		buf_put(out, text, s0);
		buf_put(out, text + e0, len - e0);
		break;
	case 4:  /* duplicate a line elsewhere */
		line_span(&in, rnd(200), &s0, &e0);
		line_span(&in, rnd(200), &s1, &e1);
		buf_put(out, text, s1);
		buf_put(out, text + s0, e0 - s0);
		buf_put(out, text + s1, len - s1);
		break;
	default:  /* splice a chunk from elsewhere */
		q = rnd((uint32_t)len + 1);
		e0 = q + rnd(40);
		e0 = MIN(len, e0);
		buf_put(out, text, p);
		buf_put(out, text + q, e0 - q);
		buf_put(out, text + p, len - p);
		break;
	}
	buf_put(out, "", 0);
}

static char *
slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	Buf b = { 0 };
	char tmp[4096];
	size_t n;

	if (!f)
		return NULL;
	while ((n = fread(tmp, 1, sizeof tmp, f)) > 0)
		buf_put(&b, tmp, n);
	fclose(f);
	*len = b.n;
	return b.s;
}

static void
fuzz_file(const char *path, int rounds, int *reads, int *opts)
{
	size_t len, i;
	char *text = slurp(path, &len);
	Buf m = { 0 };
	int r;

	if (!text) {
		fprintf(stderr, "cannot read %s\n", path);
		test_failures++;
		return;
	}
	for (i = 0; i <= len; i += 1 + len / 300)  /* truncations */
		try_text(text, i);
	for (r = 0; r < rounds; r++) {
		Outcome o;

		mutate(text, len, &m);
		o = try_text(m.s, m.n);
		*reads += o.read;
		*opts += o.optimized;
	}
	buf_free(&m);
	free(text);
}

int
main(int argc, char **argv)
{
	int i, reads = 0, opts = 0;
	const char *env = getenv("TLX_FUZZ_ROUNDS");  /* more, for slow runs */
	int rounds = env ? atoi(env) : 400;

	devnull = fopen("/dev/null", "w");
	if (getenv("TLX_FUZZ_SEED"))
		rng ^= strtoull(getenv("TLX_FUZZ_SEED"), NULL, 0) * 0x9e3779b97f4a7c15ull;
	test_limits();
	for (i = 1; i < argc; i++)
		fuzz_file(argv[i], rounds, &reads, &opts);
	if (argc > 1)
		printf("fuzz: %d mutants read, %d went through -O2\n", reads, opts);
	fclose(devnull);
	TEST_MAIN_END();
}
