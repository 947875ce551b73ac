/*
 * Unit tests of runtime/image.c: finding __tlx_ir in PTX text and in ELF
 * images, on synthetic inputs -- well-formed ones in the variants tools
 * produce, malformed ones, every truncation and random corruptions (which
 * must fail cleanly, never read out of bounds: run it under ASan).
 */
#include <stdlib.h>

#include "runtime/rt.h"
#include "testsuite/unit/test.h"

static const char IR[] = "module \"x.tlx\"\nkernel @k() {\n  return\n}\n";

static int
ptx(const char *text, char **ir, size_t *len)
{
	const char *why = NULL;
	int rc = rt_image_ptx_ir(text, strlen(text), ir, len, &why);

	CHECK(rc == TLXRT_OK || why != NULL);
	return rc;
}

static void
test_ptx(void)
{
	char *ir;
	size_t len;

	ASSERT(TLXRT_OK, ptx(".version 8.0\n.target sm_90\n"
			     ".global .align 1 .b8 __tlx_ir[5] = {109, 111, 100, "
			     "0x75, 108};\n", &ir, &len));
	ASSERT(5, len);
	CHECK(memcmp(ir, "modul", 5) == 0);
	free(ir);
	/* visible, a reference before the declaration, newlines, a trailing
	 * NUL and a count larger than the initializer */
	ASSERT(TLXRT_OK, ptx("\tmov.u64 %rd1, __tlx_ir;\n"
			     ".visible .global .align 1 .b8 __tlx_ir[8] = {\n"
			     "\t104,\n\t105 ,0};\n", &ir, &len));
	ASSERT(2, len);
	CHECK(memcmp(ir, "hi", 2) == 0);
	free(ir);
	/* what tlxc writes: little-endian words, NUL-padded */
	ASSERT(TLXRT_OK, ptx(".visible .global .align 8 .b64 __tlx_ir[2] = "
			     "{0x2220656c75646f6d, 0x0000000000000a7b};\n",
			     &ir, &len));
	ASSERT(10, len);
	CHECK(memcmp(ir, "module \"{\n", 10) == 0);
	free(ir);
	ASSERT(TLXRT_OK, ptx(".global .b32 __tlx_ir[1] = {6384994};", &ir, &len));
	ASSERT(3, len);
	CHECK(memcmp(ir, "bma", 3) == 0);
	free(ir);
	ASSERT(TLXRT_OK, ptx(".global .b64 __tlx_ir[1] = {18446744073709551615};",
			     &ir, &len));
	ASSERT(8, len);
	free(ir);
	ASSERT(TLXRT_INVALID_ARG, ptx(".global .b64 __tlx_ir[1] = "
				      "{18446744073709551616};", &ir, &len));
	ASSERT(TLXRT_INVALID_ARG, ptx(".global .b64 __tlx_ir[1] = "
				      "{0x10000000000000000};", &ir, &len));
	ASSERT(TLXRT_INVALID_ARG, ptx(".global .b16 __tlx_ir[1] = {65536};",
				      &ir, &len));
	ASSERT(TLXRT_INVALID_ARG, ptx(".global .f32 __tlx_ir[1] = {1};", &ir,
				      &len));
	ASSERT(TLXRT_INVALID_ARG, ptx("__tlx_ir[1] = {1};", &ir, &len));
	ASSERT(TLXRT_NOT_FOUND, ptx(".version 8.0\n", &ir, &len));
	CHECK(ir == NULL);
	ASSERT(TLXRT_INVALID_ARG, ptx(".global .b8 __tlx_ir[];", &ir, &len));
	ASSERT(TLXRT_INVALID_ARG, ptx(".global .b8 __tlx_ir[2];", &ir, &len));
	ASSERT(TLXRT_INVALID_ARG, ptx(".global .b8 __tlx_ir[2] = {1, 2, 3};",
				      &ir, &len));
	ASSERT(TLXRT_INVALID_ARG, ptx(".global .b8 __tlx_ir[2] = {1, 256};",
				      &ir, &len));
	ASSERT(TLXRT_INVALID_ARG, ptx(".global .b8 __tlx_ir[2] = {1, 2",
				      &ir, &len));
	ASSERT(TLXRT_INVALID_ARG, ptx(".global .b8 __tlx_ir[2] = {1, x};",
				      &ir, &len));
	ASSERT(TLXRT_INVALID_ARG,
	       ptx(".global .b8 __tlx_ir[99999999999] = {1};", &ir, &len));
	ASSERT(RT_IMG_PTX, rt_image_kind("// c\n//\n.version 8", 18));
	ASSERT(RT_IMG_PTX, rt_image_kind("\n.target sm_90", 14));
	ASSERT(RT_IMG_TEXT, rt_image_kind(IR, sizeof IR - 1));
	ASSERT(RT_IMG_ELF, rt_image_kind("\x7f" "ELF\2\1", 6));
	ASSERT(RT_IMG_TEXT, rt_image_kind("//", 2));
}

static void
put(uint8_t *p, uint64_t v, int bytes)
{
	int i;

	for (i = 0; i < bytes; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

typedef struct ElfOpts {
	int type;        /* 1 REL, 2 EXEC */
	uint64_t addr;   /* sh_addr of the data section */
	uint64_t value;  /* st_value of __tlx_ir */
	int data_type;   /* sh_type of the data section (1 or 8 NOBITS) */
	const char *name;
} ElfOpts;

/* [hdr][pad 16][ir][strtab][symtab][shdrs x4]: null, data, symtab, strtab */
static uint8_t *
make_elf(const ElfOpts *o, size_t *total)
{
	static const char strs[] = "\0__tlx_ir\0other\0";
	size_t n = sizeof IR - 1, off_d = 64, off_str = 256, off_sym = 288;
	size_t off_sh = off_sym + 72;
	uint8_t *b = calloc(1, off_sh + 4 * 64), *s;

	*total = off_sh + 4 * 64;
	memcpy(b, "\x7f" "ELF\2\1\1", 7);
	put(b + 16, (uint64_t)o->type, 2);
	put(b + 40, off_sh, 8);
	put(b + 58, 64, 2);
	put(b + 60, 4, 2);
	memcpy(b + off_d + 16, IR, n);
	memcpy(b + off_str, strs, sizeof strs);
	if (o->name)
		memcpy(b + off_str + 1, o->name, strlen(o->name));
	s = b + off_sym + 24;
	put(s, 10, 4);  /* "other" */
	put(s + 6, 1, 2);
	s += 24;
	put(s, 1, 4);
	put(s + 6, 1, 2);
	put(s + 8, o->value, 8);
	put(s + 16, n, 8);
	s = b + off_sh + 64;
	put(s + 4, (uint64_t)o->data_type, 4);
	put(s + 16, o->addr, 8);
	put(s + 24, off_d, 8);
	put(s + 32, 16 + n, 8);
	s += 64;
	put(s + 4, 2, 4);
	put(s + 24, off_sym, 8);
	put(s + 32, 72, 8);
	put(s + 40, 3, 4);
	put(s + 56, 24, 8);
	s += 64;
	put(s + 4, 3, 4);
	put(s + 24, off_str, 8);
	put(s + 32, sizeof strs, 8);
	return b;
}

static int
elf(const uint8_t *b, size_t n, char **ir, size_t *len)
{
	const char *why = NULL;
	int rc = rt_image_elf_ir(b, n, ir, len, &why);

	CHECK(rc == TLXRT_OK || (why != NULL && *ir == NULL));
	return rc;
}

static void
test_elf(void)
{
	ElfOpts rel = { 1, 0, 16, 1, NULL }, ex = { 2, 0x1000, 0x1010, 1, NULL };
	ElfOpts nobits = { 1, 0, 16, 8, NULL }, missing = { 1, 0, 16, 1, "__tlx_iR" };
	ElfOpts outside = { 1, 0, 4000, 1, NULL };
	uint8_t *b;
	size_t n, len, cut;
	char *ir;
	int i;

	b = make_elf(&rel, &n);
	ASSERT(TLXRT_OK, elf(b, n, &ir, &len));
	ASSERT(sizeof IR - 1, len);
	CHECK(ir && memcmp(ir, IR, len) == 0);
	free(ir);
	/* every truncation fails cleanly */
	for (cut = 0; cut < n; cut++) {
		int rc = elf(b, cut, &ir, &len);

		CHECK(rc != TLXRT_OK || cut >= 64 + 16 + sizeof IR - 1);
		free(ir);
	}
	/* random corruption: any answer, but no crash and no overread */
	for (i = 0; i < 20000; i++) {
		uint8_t *c = malloc(n);

		memcpy(c, b, n);
		c[rand() % (int)n] = (uint8_t)rand();
		c[rand() % (int)n] = (uint8_t)rand();
		if (elf(c, n, &ir, &len) == TLXRT_OK)
			CHECK(len <= n);
		free(ir);
		free(c);
	}
	free(b);
	b = make_elf(&ex, &n);
	ASSERT(TLXRT_OK, elf(b, n, &ir, &len));
	CHECK(ir && len == sizeof IR - 1 && memcmp(ir, IR, len) == 0);
	free(ir);
	free(b);
	b = make_elf(&nobits, &n);
	ASSERT(TLXRT_INVALID_ARG, elf(b, n, &ir, &len));
	free(b);
	b = make_elf(&missing, &n);
	ASSERT(TLXRT_NOT_FOUND, elf(b, n, &ir, &len));
	free(b);
	b = make_elf(&outside, &n);
	ASSERT(TLXRT_INVALID_ARG, elf(b, n, &ir, &len));
	b[4] = 1;  /* 32-bit */
	ASSERT(TLXRT_UNSUPPORTED, elf(b, n, &ir, &len));
	free(b);
	ASSERT(TLXRT_INVALID_ARG, elf((const uint8_t *)"\x7f" "ELF", 4, &ir, &len));
}

static void
test_ptx_fuzz(void)
{
	const char *good = ".visible .global .align 1 .b8 __tlx_ir[6] = "
			   "{104, 0x69, 33, 10, 0, 0};";
	size_t n = strlen(good), cut, len;
	char buf[128], *ir;
	int i;

	for (cut = 0; cut <= n; cut++) {
		memcpy(buf, good, cut);
		if (rt_image_ptx_ir(buf, cut, &ir, &len, &(const char *){ 0 }) ==
		    TLXRT_OK) {
			CHECK(cut >= n - 1);  /* without the ";" */
			ASSERT(4, len);
		}
		free(ir);
	}
	for (i = 0; i < 20000; i++) {
		memcpy(buf, good, n);
		buf[rand() % (int)n] = (char)(rand() % 128);
		if (rt_image_ptx_ir(buf, n, &ir, &len, &(const char *){ 0 }) ==
		    TLXRT_OK)
			CHECK(len <= 6);
		free(ir);
	}
}

int
main(void)
{
	test_ptx();
	test_elf();
	test_ptx_fuzz();
	TEST_MAIN_END();
}
