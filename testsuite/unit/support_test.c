/* Unit tests of support/: arenas (marks, fault injection), interning,
 * sources and diagnostics. */
#include <setjmp.h>

#include "support/support.h"
#include "test.h"

static void
test_arena(void)
{
	Arena a;
	ArenaMark m;
	char *s;
	int i;

	arena_init(&a, NULL, NULL, NULL);
	s = arena_strdup(&a, "hello");
	ASSERT_STR("hello", s);
	ASSERT(0, (uintptr_t)arena_alloc(&a, 3) % 16);
	m = arena_mark(&a);
	for (i = 0; i < 1000; i++)
		arena_alloc(&a, 1000);
	arena_release(&a, m);
	ASSERT_STR("hello", s);
	ASSERT_STR("x=42", arena_printf(&a, "x=%d", 42));
	arena_reset(&a);
	ASSERT(0, a.total);
}

static void
test_arena_oom(void)
{
	jmp_buf jb;
	Arena a;
	volatile int jumped = 0;

	arena_init(&a, NULL, NULL, &jb);
	a.fail_after = 2;
	if (setjmp(jb) == 0) {
		arena_alloc(&a, 100);          /* first chunk */
		arena_alloc(&a, 1 << 20);      /* second chunk fails */
	} else {
		jumped = 1;
	}
	ASSERT(1, jumped);
	arena_reset(&a);
}

static void
test_strtab(void)
{
	Arena a;
	Strtab t;
	char name[32];
	const char *first[500];
	int i;

	arena_init(&a, NULL, NULL, NULL);
	strtab_init(&t, &a);
	for (i = 0; i < 500; i++) {
		snprintf(name, sizeof name, "name%d", i);
		first[i] = strtab_cstr(&t, name);
	}
	for (i = 0; i < 500; i++) {
		snprintf(name, sizeof name, "name%d", i);
		CHECK(first[i] == strtab_cstr(&t, name));
	}
	CHECK(strtab_intern(&t, "name1x", 5) == first[1]);
	arena_reset(&a);
}

static void
test_diag(void)
{
	Arena a;
	Source s;
	Diag d;
	Buf b = { 0 };
	const char *text = "let x = 1;\n\tlet y = foo(2);\n";

	arena_init(&a, NULL, NULL, NULL);
	src_init(&s, &a, "t.tlx", text, strlen(text));
	ASSERT(3, s.nlines);
	diag_init(&d, &a, &s, NULL);
	diag_error(&d, (SrcRange){ 2, 10, 2, 12 }, "unknown name '%s'", "foo");
	ASSERT(1, d.nerrors);
	diag_render(&d, &d.msgs.v[0], &b);
	ASSERT_STR("t.tlx:2:10: error: unknown name 'foo'\n"
		   "    \tlet y = foo(2);\n"
		   "    \t        ^~~\n", b.s);
	buf_free(&b);
	d.max_errors = 2;
	diag_error(&d, (SrcRange){ 1, 1, 1, 1 }, "second");
	diag_error(&d, (SrcRange){ 1, 1, 1, 1 }, "third is dropped");
	ASSERT(2, d.nerrors);
	CHECK(d.stopped);
	arena_reset(&a);
}

static void
test_verify(void)
{
	Arena a;
	Source s;
	Diag d;
	FILE *devnull = fopen("/dev/null", "w");
	const char *text = "// expected-error@+1:5 {{bad thing}}\n"
			   "let x;\n";

	arena_init(&a, NULL, NULL, NULL);
	src_init(&s, &a, "v.tlx", text, strlen(text));
	diag_init(&d, &a, &s, NULL);
	diag_error(&d, (SrcRange){ 2, 5, 2, 5 }, "a bad thing happened");
	CHECK(diag_verify(&d, devnull));
	diag_error(&d, (SrcRange){ 2, 1, 2, 1 }, "unexpected");
	CHECK(!diag_verify(&d, devnull));
	fclose(devnull);
	arena_reset(&a);
}

int
main(void)
{
	test_arena();
	test_arena_oom();
	test_strtab();
	test_diag();
	test_verify();
	TEST_MAIN_END();
}
