/*
 * harness.c: what the libFuzzer harnesses share (harness.h): one
 * compilation in process behind a protected boundary, the choices made
 * from an input's hash, and how a finding is reported.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "harness.h"

void
fh_compile(const char *text, size_t len, FhCompile *c)
{
	Arena arena;
	Job *j;
	jmp_buf oom;
	uint32_t i;

	c->ok = c->oom = false;
	memset(&c->diags, 0, sizeof c->diags);
	memset(&c->ir, 0, sizeof c->ir);
	arena_init(&arena, NULL, NULL, NULL);
	j = arena_alloc(&arena, sizeof *j);
	j->arena = &arena;
	j->name = c->tir ? "fuzz.tir" : "fuzz.tlx";
	j->text = text;
	j->len = len;
	j->sm = c->sm;
	j->olevel = c->olevel;
	j->tir = c->tir;
	j->emit = c->lower ? EMIT_LIR : EMIT_IR;
	if (setjmp(oom)) {
		arena.oom = NULL;
		c->oom = true;
		buf_free(&j->out);
		arena_reset(&arena);
		return;
	}
	arena.oom = &oom;
	c->ok = compile_run(j) && j->diag.nerrors == 0;
	arena.oom = NULL;
	/* every message as the user would see it: locations, source lines
	 * and carets of whatever the input holds */
	for (i = 0; i < j->diag.msgs.n; i++)
		diag_render(&j->diag, &j->diag.msgs.v[i], &c->diags);
	if (!c->ok && j->diag.nerrors == 0)
		fh_finding(NULL, "the compiler refused the input without an "
			   "error (%u messages)", j->diag.msgs.n);
	/* NUL-terminated, also when empty */
	buf_put(&c->ir, c->ok && j->out.s ? j->out.s : "", c->ok ? j->out.n : 0);
	buf_free(&j->out);
	arena_reset(&arena);
}

void
fh_compile_free(FhCompile *c)
{
	buf_free(&c->diags);
	buf_free(&c->ir);
}

/* The first line where a and b differ. */
static void
first_difference(Buf *err, const char *a, const char *b)
{
	int line = 1;
	const char *ea, *eb;

	while (*a && *a == *b) {
		if (*a == '\n')
			line++;
		a++, b++;
	}
	while (line > 1 && a[-1] != '\n')
		a--, b--;
	ea = strchr(a, '\n');
	eb = strchr(b, '\n');
	buf_printf(err, "line %d changes:\n  printed: %.*s\n  again:   %.*s",
		   line, (int)(ea ? ea - a : (long)strlen(a)), a,
		   (int)(eb ? eb - b : (long)strlen(b)), b);
}

bool
fh_round_trip(const char *ir, size_t n, Buf *err)
{
	PrintOpts po = { .locs = true };
	Arena a;
	IrCtx c;
	Source s;
	Diag d;
	Module *m;
	Buf again = { 0 };
	bool ok = false;

	arena_init(&a, NULL, NULL, NULL);
	ir_ctx_init(&c, &a);
	src_init(&s, &a, "printed.tir", ir, n);
	diag_init(&d, &a, &s, NULL);
	m = ir_read(&c, &d, &s);
	if (!m || d.nerrors || !ir_verify_module(m, &d)) {
		buf_puts(err, "it does not read back: ");
		if (d.msgs.n)
			diag_render(&d, &d.msgs.v[0], err);
	} else {
		ir_print_module(&again, m, &po);
		buf_put(&again, "", 0);
		ok = strcmp(ir, again.s) == 0;
		if (!ok)
			first_difference(err, ir, again.s);
	}
	buf_free(&again);
	arena_reset(&a);
	return ok;
}

uint64_t
fh_hash(const uint8_t *data, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;  /* FNV-1a */
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ data[i]) * 0x100000001b3ull;
	return h;
}

int
fh_sm(uint64_t k)
{
	static const int sms[3] = { 80, 90, 100 };

	return sms[k % 3];
}

bool
fh_verbose(void)
{
	const char *v = getenv("TLX_FUZZ_VERBOSE");

	return v && *v && strcmp(v, "0") != 0;
}

void
fh_finding(const char *text, const char *fmt, ...)
{
	va_list ap;

	fputs("==tlx-fuzz== finding: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	if (text)
		fprintf(stderr, "==tlx-fuzz== the input as the harness used "
			"it:\n%s\n==tlx-fuzz== end\n", text);
	abort();
}
