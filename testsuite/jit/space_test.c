/*
 * space_test: libtlx's tuning API (include/tlx/tlx.h) through its public
 * functions only -- tlx_tune_space_* reading a kernel's tune(...) and
 * evaluating its constraints, and tlx_check rejecting what tlx_compile
 * would reject, without generating code.
 *
 *   space_test EXAMPLES_DIR
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../unit/test.h"
#include "tlx/tlx.h"

static const char src[] =
	"const B: i32 = 64;\n"
	"kernel k(x: *f32, n: i32, const BM: i32 = 128, const BN: i32 = 64,\n"
	"         const BK: i32 = BM / 2, const D: i32 = 1)\n"
	"    tune(BN: [2 * B, B, 32], BM: [B, 128, 256],\n"
	"         BM * BN <= 8192, BK <= 64, BM * 1024 / D <= SMEM)\n"
	"{\n"
	"    store(x + range(BM), 1.0);\n"
	"}\n"
	"kernel plain(x: *f32) { store(x, 1.0); }\n";

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Checks one configuration; returns *ok, or -1 for an error. */
static int
allows(tlx_ctx *c, tlx_tune_space *s, const char *d1, const char *d2)
{
	const char *d[2] = { d1, d2 };
	int ok = -1;

	if (tlx_tune_space_check(c, s, d, d2 ? 2 : d1 ? 1 : 0, &ok) != TLX_OK)
		return -1;
	return ok;
}

static void
test_space(tlx_ctx *c)
{
	tlx_tune_space *s = NULL, *p = NULL;
	tlx_options o = { 0 };
	const char *name;
	const long long *v;
	int n = -1, nv;

	o.name = "k.tlx";
	ASSERT(TLX_OK, tlx_tune_space_create(c, src, strlen(src), &o, "k", &s));
	ASSERT(TLX_OK, tlx_tune_space_num_params(s, &n));
	ASSERT(2, n);
	/* in the order written, values evaluated (file-level constants) */
	ASSERT(TLX_OK, tlx_tune_space_get_param(s, 0, &name, &v, &nv));
	ASSERT_STR("BN", name);
	ASSERT(3, nv);
	ASSERT(128, v[0]);
	ASSERT(64, v[1]);
	ASSERT(32, v[2]);
	ASSERT(TLX_OK, tlx_tune_space_get_param(s, 1, &name, &v, &nv));
	ASSERT_STR("BM", name);
	ASSERT(3, nv);
	ASSERT(256, v[2]);
	ASSERT(TLX_MISUSE, tlx_tune_space_get_param(s, 2, &name, &v, &nv));
	ASSERT(TLX_OK, tlx_tune_space_num_constraints(s, &n));
	ASSERT(3, n);

	/* the constraints: the defaults (128 x 64) hold */
	ASSERT(1, allows(c, s, NULL, NULL));
	ASSERT(1, allows(c, s, "BM=64", "BN=128"));
	ASSERT(0, allows(c, s, "BM=128", "BN=128"));
	CHECK(strstr(tlx_errmsg(c), "the tune constraint 'BM * BN <= 8192' "
			"is false"));
	CHECK(strstr(tlx_errmsg(c), "k.tlx:5:10"));
	/* BK's default depends on BM: 256 / 2 > 64 */
	ASSERT(0, allows(c, s, "BM=256", "BN=32"));
	CHECK(strstr(tlx_errmsg(c), "'BK <= 64'"));
	/* a parameter outside the space; a division by zero is an error */
	ASSERT(1, allows(c, s, "BM=32", "BK=8"));
	ASSERT(-1, allows(c, s, "D=0", NULL));
	CHECK(strstr(tlx_errmsg(c), "division by zero"));
	tlx_tune_space_destroy(s);

	/* SMEM is the target's: 200 KiB fits sm_90a, not sm_80; the
	 * options' defines fix parameters, and a config's override them */
	{
		const char *defs[] = { "BM=200", "BN=1" };

		o.defines = defs;
		o.ndefines = 2;
		o.target = "sm_80";
		ASSERT(TLX_OK, tlx_tune_space_create(c, src, strlen(src), &o,
						     "k", &s));
		ASSERT(0, allows(c, s, "BK=8", NULL));
		CHECK(strstr(tlx_errmsg(c), "'BM * 1024 / D <= SMEM'"));
		ASSERT(1, allows(c, s, "BK=8", "BM=100"));
		tlx_tune_space_destroy(s);
		o.target = "sm_90a";
		ASSERT(TLX_OK, tlx_tune_space_create(c, src, strlen(src), &o,
						     "k", &s));
		ASSERT(1, allows(c, s, "BK=8", NULL));
		tlx_tune_space_destroy(s);
		o.defines = NULL;
		o.ndefines = 0;
		o.target = NULL;
	}

	/* a kernel without tune(...): an empty space */
	ASSERT(TLX_OK, tlx_tune_space_create(c, src, strlen(src), &o, "plain",
					     &p));
	ASSERT(TLX_OK, tlx_tune_space_num_params(p, &n));
	ASSERT(0, n);
	ASSERT(TLX_OK, tlx_tune_space_num_constraints(p, &n));
	ASSERT(0, n);
	ASSERT(1, allows(c, p, NULL, NULL));
	tlx_tune_space_destroy(p);

	/* errors: no such kernel, a mistake in the space */
	p = (tlx_tune_space *)&n;
	ASSERT(TLX_COMPILE, tlx_tune_space_create(c, src, strlen(src), &o,
						  "nosuch", &p));
	CHECK(p == NULL);
	CHECK(strstr(tlx_errmsg(c), "no kernel is named 'nosuch'"));
	{
		static const char bad[] =
			"kernel k(x: *f32, n: i32) tune(n: [1, 2]) { }\n";

		ASSERT(TLX_COMPILE, tlx_tune_space_create(c, bad, strlen(bad),
							  &o, "k", &p));
		CHECK(strstr(tlx_errmsg(c), "'n' is a runtime parameter"));
	}
	ASSERT(TLX_MISUSE, tlx_tune_space_create(c, src, strlen(src), &o, NULL,
						 &p));
	tlx_tune_space_destroy(NULL);
}

/* tlx_check says what tlx_compile says, without code. */
static void
test_check(tlx_ctx *c)
{
	static const char k[] =
		"kernel k(x: *f32, const N: i32 = 1024, const W: i32 = 4)\n"
		"    warps(W)\n"
		"{\n"
		"    static_assert(N <= 65536, \"N is at most 65536\");\n"
		"    shared S: f32[N];\n"
		"    store(S, load(x + range(N)));\n"
		"    store(x + range(N), load(S) + 1.0);\n"
		"}\n";
	static const char t[] =
		"kernel t(x: *f32, const N: i32 = 1024, const W: i32 = 4)\n"
		"    warps(W)\n"
		"{\n"
		"    store(x + range(N), load(x + range(N)) + 1.0);\n"
		"}\n";
	const char *big[] = { "N=65536" }, *huge[] = { "N=131072" },
		   *tile[] = { "N=131072", "W=1" };
	tlx_options o = { 0 };
	tlx_module *m = NULL;

	o.no_cache = 1;
	o.emit = 42;  /* ignored */
	ASSERT(TLX_OK, tlx_check(c, k, strlen(k), &o));
	ASSERT(TLX_OK, tlx_check(c, k, strlen(k), NULL));
	o.emit = 0;
	/* the shared-memory plan: 256 KiB of buffers */
	o.defines = big;
	o.ndefines = 1;
	ASSERT(TLX_COMPILE, tlx_check(c, k, strlen(k), &o));
	CHECK(strstr(tlx_errmsg(c), "bytes of shared memory"));
	/* a static_assert */
	o.defines = huge;
	ASSERT(TLX_COMPILE, tlx_check(c, k, strlen(k), &o));
	CHECK(strstr(tlx_errmsg(c), "N is at most 65536"));
	/* code generation's own check, which tlx_compile reports too: a tile
	 * of 131072 f32 for 32 threads */
	o.defines = tile;
	o.ndefines = 2;
	ASSERT(TLX_COMPILE, tlx_check(c, t, strlen(t), &o));
	CHECK(strstr(tlx_errmsg(c), "too large for 32 threads"));
	o.emit = TLX_EMIT_PTX;
	ASSERT(TLX_COMPILE, tlx_compile(c, t, strlen(t), &o, &m));
	CHECK(strstr(tlx_errmsg(c), "too large for 32 threads"));
	CHECK(m == NULL);
	o.emit = TLX_EMIT_IR;  /* the simulator's IR has no such limit */
	ASSERT(TLX_OK, tlx_compile(c, t, strlen(t), &o, &m));
	tlx_module_destroy(m);
	ASSERT(TLX_MISUSE, tlx_check(c, NULL, 0, &o));
}

/* matmul: a check against a compilation to PTX, timed (printed). */
static void
test_matmul(tlx_ctx *c, const char *dir)
{
	char path[4096], *text;
	FILE *f;
	long len;
	tlx_options o = { 0 };
	tlx_module *m = NULL;
	double t0, tc, tp;
	const char *over[] = { "BM=256", "BN=256", "BK=64", "STAGES=4" };

	snprintf(path, sizeof path, "%s/matmul.tlx", dir);
	if (!(f = fopen(path, "rb"))) {
		CHECK(!"examples/matmul.tlx");
		return;
	}
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	rewind(f);
	text = malloc((size_t)len + 1);
	CHECK(text && fread(text, 1, (size_t)len, f) == (size_t)len);
	fclose(f);
	o.name = "matmul.tlx";
	o.no_cache = 1;
	o.emit = TLX_EMIT_PTX;
	ASSERT(TLX_OK, tlx_check(c, text, (size_t)len, &o));  /* warm up */
	t0 = now();
	ASSERT(TLX_OK, tlx_check(c, text, (size_t)len, &o));
	tc = now() - t0;
	t0 = now();
	ASSERT(TLX_OK, tlx_compile(c, text, (size_t)len, &o, &m));
	tp = now() - t0;
	tlx_module_destroy(m);
	printf("matmul: tlx_check %.1f ms, tlx_compile to PTX %.1f ms\n",
	       tc * 1e3, tp * 1e3);
	/* 256 x 256 tiles, BK 64, 4 stages: 256 KiB of stages */
	o.defines = over;
	o.ndefines = 4;
	ASSERT(TLX_COMPILE, tlx_check(c, text, (size_t)len, &o));
	CHECK(strstr(tlx_errmsg(c), "stages(4)"));
	free(text);
}

int
main(int argc, char **argv)
{
	tlx_ctx *c;

	if (argc < 2) {
		fprintf(stderr, "usage: space_test EXAMPLES_DIR\n");
		return 2;
	}
	if (tlx_ctx_create(NULL, NULL, &c) != TLX_OK)
		return 1;
	tlx_cache_set_dir(c, NULL);
	test_space(c);
	test_check(c);
	test_matmul(c, argv[1]);
	tlx_ctx_destroy(c);
	TEST_MAIN_END();
}
