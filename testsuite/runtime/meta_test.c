/*
 * Unit tests of runtime/meta.c: reading a kernel's line of __tlx_meta
 * (what codegen/meta.c writes, older lines, malformed ones, every
 * truncation and random corruptions: never a read out of bounds, run it
 * under ASan) and the choice of a kernel's entry from launch arguments.
 */
#include <stdlib.h>

#include "runtime/rt.h"
#include "testsuite/unit/test.h"

static const char META[] =
	"tlx-meta 1 target=sm_90a\n"
	"kernel mm threads=128 smem=0 static=49152 fast=mm$fast align=0x7 "
	"div16=0x578 eq1=0xa80\n"
	"kernel mm2 threads=256 smem=65536 static=0\n"
	"kernel mm8 threads=128 smem=0 static=0 fast=mm8$fast align=0x7 "
	"div8=0x18 eq1=0x0 tma_only=0x11 generic=ptx\n";

static void
test_find(void)
{
	RtMeta m;

	ASSERT(TLXRT_OK, rt_meta_find(META, strlen(META), "mm", &m));
	ASSERT(128, m.threads);
	ASSERT(0, m.smem);
	ASSERT(49152, m.smem_static);
	ASSERT_STR("mm$fast", m.fast);
	ASSERT(0x7, m.align);
	ASSERT(0x578, m.div);
	ASSERT(16, m.divisor);
	ASSERT(0xa80, m.eq1);
	/* a name that another one starts with; a line without fast= */
	ASSERT(TLXRT_OK, rt_meta_find(META, strlen(META), "mm2", &m));
	ASSERT(256, m.threads);
	ASSERT(65536, m.smem);
	ASSERT_STR("", m.fast);
	ASSERT(0, m.align | m.div | m.eq1);
	/* divisors other than 16 (a kernel of bf16: 8) */
	ASSERT(TLXRT_OK, rt_meta_find(META, strlen(META), "mm8", &m));
	ASSERT(0x18, m.div);
	ASSERT(8, m.divisor);
	CHECK(m.generic_ptx);
	ASSERT(0x11, m.tma_only);
	ASSERT(TLXRT_OK, rt_meta_find(META, strlen(META), "mm", &m));
	CHECK(!m.generic_ptx);
	ASSERT(0, m.tma_only);
	ASSERT(TLXRT_NOT_FOUND, rt_meta_find(META, strlen(META), "m", &m));
	ASSERT(TLXRT_NOT_FOUND, rt_meta_find(META, strlen(META), "mm3", &m));
	ASSERT(TLXRT_NOT_FOUND, rt_meta_find("", 0, "mm", &m));
	/* keys a newer compiler may add are skipped; the last line may lack
	 * its newline */
	ASSERT(TLXRT_OK, rt_meta_find("kernel k threads=64 newkey=12 smem=4",
				      36, "k", &m));
	ASSERT(64, m.threads);
	ASSERT(4, m.smem);
}

static void
test_malformed(void)
{
	static const char *const bad[] = {
		"kernel k threads=x",           /* not a number */
		"kernel k threads=12z",
		"kernel k threads=",
		"kernel k smem=4",              /* no threads */
		"kernel k threads=32 fast=",    /* an empty entry */
		"kernel k threads=32 fast=a-b", /* not a PTX name */
		"kernel k threads=32 align",    /* no value */
		"kernel k threads=32 align=99999999999999999999",
	};
	char longname[400];
	RtMeta m;
	size_t i;

	for (i = 0; i < countof(bad); i++) {
		ASSERT(TLXRT_INVALID_ARG, rt_meta_find(bad[i], strlen(bad[i]),
						       "k", &m));
		ASSERT_STR("", m.fast);
	}
	snprintf(longname, sizeof longname, "kernel k threads=32 fast=%0300d", 1);
	ASSERT(TLXRT_INVALID_ARG, rt_meta_find(longname, strlen(longname), "k",
					       &m));
}

static void
test_fuzz(void)
{
	size_t n = strlen(META), cut;
	char buf[sizeof META];
	RtMeta m;
	int i;

	for (cut = 0; cut <= n; cut++) {
		char *p = malloc(cut ? cut : 1);  /* exact size: ASan sees overruns */

		memcpy(p, META, cut);
		if (rt_meta_find(p, cut, "mm", &m) == TLXRT_OK)
			CHECK(m.threads > 0);
		free(p);
	}
	for (i = 0; i < 20000; i++) {
		memcpy(buf, META, n);
		buf[rand() % (int)n] = (char)(rand() % 256);
		buf[rand() % (int)n] = (char)(rand() % 256);
		if (rt_meta_find(buf, n, "mm", &m) == TLXRT_OK)
			CHECK(m.threads > 0 && strlen(m.fast) < sizeof m.fast);
	}
}

static RtArg
ptr(uint64_t p)
{
	return (RtArg){ .kind = TLXRT_PARAM_POINTER, .ty = TY_F32, .bits = p };
}

static RtArg
num(uint64_t v)
{
	return (RtArg){ .kind = TLXRT_PARAM_SCALAR, .ty = TY_I32, .bits = v };
}

static void
test_fast_ok(void)
{
	RtMeta m = { .threads = 128, .fast = "k$fast", .align = 0x3,
		     .div = 0x4, .divisor = 16, .eq1 = 0x8 };
	RtArg a[5] = { ptr(0x7f0000001000), ptr(0x7f0000002010), num(4096),
		       num(1), num(77) };

	CHECK(rt_fast_ok(&m, a, 5));
	a[1] = ptr(0x7f0000002008);      /* 8-byte aligned only */
	CHECK(!rt_fast_ok(&m, a, 5));
	a[1] = ptr(0x7f0000002010);
	a[2] = num(4100);                 /* not a multiple of 16 */
	CHECK(!rt_fast_ok(&m, a, 5));
	a[2] = num(0xfffffff0);           /* -16 as an i32 */
	CHECK(rt_fast_ok(&m, a, 5));
	a[3] = num(2);                    /* a stride that is not 1 */
	CHECK(!rt_fast_ok(&m, a, 5));
	a[3] = num(1);
	a[0] = num(0x1000);               /* a kind the entry does not expect */
	CHECK(!rt_fast_ok(&m, a, 5));
	a[0] = ptr(0x7f0000001000);
	CHECK(!rt_fast_ok(&m, a, 3));     /* assumptions past the arguments */
	m.divisor = 8;                    /* a kernel of bf16: multiples of 8 */
	a[2] = num(3000);
	CHECK(rt_fast_ok(&m, a, 5));
	a[2] = num(3004);
	CHECK(!rt_fast_ok(&m, a, 5));
	a[2] = num(4096);
	m.fast[0] = 0;                    /* no specialized entry */
	CHECK(!rt_fast_ok(&m, a, 5));
}

int
main(void)
{
	test_find();
	test_malformed();
	test_fuzz();
	test_fast_ok();
	TEST_MAIN_END();
}
