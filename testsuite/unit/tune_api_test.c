/*
 * Unit tests of libtlxtune's API (include/tlx/tune.h): a session on the
 * synthetic backend with a validity predicate (an invalid configuration
 * is never evaluated) finds the planted optimum, reports every
 * evaluation and rejection, writes its reports, and stores its winner in
 * the cache, which a second session evaluates first; a session on the
 * simulator compiles and runs a kernel given as a string, a value the
 * compiler's checks reject never compiled; argument and option
 * mistakes are TLX_MISUSE with a message; a session where everything
 * fails has no best; a table by shape read and picked from (libtlx's
 * tlx_table_*) and a session's winner added to one.  argv[1]: a
 * directory for the files.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "testsuite/unit/test.h"
#include "tlx/tune.h"

static const char VADD[] =
	"kernel vadd(x: *f32, y: *f32, out: *f32, n: i32, const BLOCK: i32 = 1024)\n"
	"    warps(4) grid(cdiv(n, BLOCK))\n"
	"{\n"
	"    let offs = program_id(0) * BLOCK + range(BLOCK);\n"
	"    let m = offs < n;\n"
	"    store(out + offs, load(x + offs, mask: m) + load(y + offs, mask: m), mask: m);\n"
	"}\n";

static const int64_t AS[] = { 8, 7, 6, 5, 4, 3, 2, 1 }, BS[] = { 1, 2, 3, 4 };
static int valid_calls, valid_bad;

/* B = 4 is statically invalid */
static int
valid(void *ud, const int64_t *v)
{
	valid_calls++;
	valid_bad += ud != (void *)AS;
	return v[1] != 4;
}

static tlx_tune *
synthetic(const char *land, const char *cache_dir, int search)
{
	tlx_tune_opts o;
	tlx_tune *t = NULL;

	ASSERT(TLX_OK, tlx_tune_create("vadd.tlx", VADD, sizeof VADD - 1,
				       "vadd", &t));
	if (!t)
		return NULL;
	ASSERT(TLX_OK, tlx_tune_add_param(t, "A", AS, 8));
	ASSERT(TLX_OK, tlx_tune_add_param(t, "B", BS, 4));
	ASSERT(TLX_OK, tlx_tune_opts_default(&o));
	o.backend = TLX_TUNE_SYNTHETIC;
	o.search = search;
	o.synthetic = land;
	o.cache = cache_dir != NULL;
	o.cache_dir = cache_dir;
	o.jobs = 2;
	ASSERT(TLX_OK, tlx_tune_set_opts(t, &o));
	return t;
}

static void
test_synthetic(const char *dir)
{
	char cache[512], json[512], svg[512];
	tlx_tune *t;
	tlx_tune_eval e;
	int64_t best[2];
	double cost = 0;
	const char *name;
	int n, crashes = 0;

	snprintf(cache, sizeof cache, "%s/cache", dir);
	snprintf(json, sizeof json, "%s/report.json", dir);
	snprintf(svg, sizeof svg, "%s/plot.svg", dir);
	t = synthetic("opt:A=5,opt:B=3,crash:A=2", cache, TLX_TUNE_EXHAUSTIVE);
	if (!t)
		return;
	ASSERT(TLX_OK, tlx_tune_set_valid(t, valid, (void *)AS));
	ASSERT(TLX_ERROR, tlx_tune_get_best(t, best, &cost));  /* not run */
	ASSERT(TLX_OK, tlx_tune_run(t));
	ASSERT(TLX_OK, tlx_tune_get_best(t, best, &cost));
	ASSERT(5, best[0]);
	ASSERT(3, best[1]);
	CHECK(cost == 1);
	{
		/* the default timed before the search and again beside the
		 * finalists (synthetic: the same cost) */
		double first = 0, again = 0;

		ASSERT(TLX_OK, tlx_tune_get_default(t, &first, &again));
		CHECK(first > 0 && first < 1e30 && again == first);
		ASSERT(TLX_MISUSE, tlx_tune_get_default(NULL, NULL, NULL));
	}
	ASSERT(TLX_OK, tlx_tune_num_params(t, &n));
	ASSERT(2, n);
	ASSERT(TLX_OK, tlx_tune_get_param_name(t, 1, &name));
	ASSERT_STR("B", name);
	ASSERT(TLX_MISUSE, tlx_tune_get_param_name(t, 2, &name));
	/* 8 x 3 valid ones, each once; B = 4 never evaluated */
	ASSERT(TLX_OK, tlx_tune_num_evals(t, &n));
	ASSERT(24, n);
	ASSERT(32, valid_calls);  /* each configuration checked once */
	ASSERT(0, valid_bad);
	ASSERT(TLX_OK, tlx_tune_num_rejections(t, &n));
	ASSERT(8, n);
	for (int i = 0; i < n; i++) {
		tlx_tune_rejection x;

		ASSERT(TLX_OK, tlx_tune_get_rejection(t, i, &x));
		ASSERT(4, x.values[1]);
		ASSERT(TLX_TUNE_BY_PREDICATE, x.by);
	}
	{
		int checked = 0, rej[3];

		ASSERT(TLX_OK, tlx_tune_get_checks(t, &checked, rej, NULL));
		ASSERT(32, checked);
		ASSERT(8, rej[TLX_TUNE_BY_PREDICATE]);
		ASSERT(0, rej[TLX_TUNE_BY_COMPILER]);
	}
	ASSERT(TLX_OK, tlx_tune_num_evals(t, &n));
	for (int i = 0; i < n; i++) {
		ASSERT(TLX_OK, tlx_tune_get_eval(t, i, &e));
		CHECK(e.values[1] != 4);
		crashes += e.status == TLX_TUNE_CRASH;
		CHECK(e.status == TLX_TUNE_CRASH ? e.values[0] == 2 && isinf(e.cost)
						 : e.status == TLX_TUNE_OK);
		CHECK(e.time >= 0);
	}
	ASSERT(3, crashes);
	ASSERT(TLX_MISUSE, tlx_tune_get_eval(t, n, &e));
	ASSERT_STR("crash", tlx_tune_status_name(TLX_TUNE_CRASH));
	ASSERT(TLX_OK, tlx_tune_write_json(t, json));
	ASSERT(TLX_OK, tlx_tune_write_svg(t, svg));
	ASSERT(TLX_IO, tlx_tune_write_json(t, "/nonexistent/dir/r.json"));
	CHECK(strstr(tlx_tune_errmsg(t), "cannot write") != NULL);
	tlx_tune_destroy(t);

	/* the cache: the winner comes first in the next session */
	t = synthetic("opt:A=5,opt:B=3,crash:A=2", cache, TLX_TUNE_RANDOM);
	if (!t)
		return;
	ASSERT(TLX_OK, tlx_tune_run(t));
	ASSERT(TLX_OK, tlx_tune_get_eval(t, 0, &e));
	ASSERT(5, e.values[0]);
	ASSERT(3, e.values[1]);
	ASSERT(TLX_OK, tlx_tune_get_best(t, best, NULL));
	ASSERT(5, best[0]);
	tlx_tune_destroy(t);
}

static void
test_sim(void)
{
	static const int64_t blocks[] = { 256, 128, 100 };
	tlx_tune_opts o;
	tlx_tune *t;
	tlx_tune_eval e;
	tlx_tune_rejection x;
	int64_t best;
	double cost;
	int n;

	ASSERT(TLX_OK, tlx_tune_create(NULL, VADD, sizeof VADD - 1, "vadd", &t));
	if (!t)
		return;
	ASSERT(TLX_OK, tlx_tune_add_param(t, "BLOCK", blocks, 3));
	ASSERT(TLX_OK, tlx_tune_add_arg(t, "n=1000"));
	tlx_tune_opts_default(&o);
	o.search = TLX_TUNE_EXHAUSTIVE;
	o.size = 1024;
	o.repeats = 1;
	o.cache = 0;
	ASSERT(TLX_OK, tlx_tune_set_opts(t, &o));
	ASSERT(TLX_OK, tlx_tune_run(t));
	ASSERT(TLX_OK, tlx_tune_num_evals(t, &n));
	ASSERT(2, n);
	ASSERT(TLX_OK, tlx_tune_get_eval(t, 0, &e));
	ASSERT(128, e.values[0]);  /* sorted; 100 rejected before compiling */
	ASSERT(TLX_TUNE_OK, e.status);
	/* the cost is the operations the simulator executed */
	CHECK(e.cost >= 1 && e.cost == floor(e.cost));
	ASSERT(TLX_OK, tlx_tune_get_best(t, &best, &cost));
	ASSERT(256, best);  /* half the programs */
	ASSERT(TLX_OK, tlx_tune_num_rejections(t, &n));
	ASSERT(1, n);
	ASSERT(TLX_OK, tlx_tune_get_rejection(t, 0, &x));
	ASSERT(100, x.values[0]);
	ASSERT(TLX_TUNE_BY_COMPILER, x.by);
	CHECK(strstr(x.why, "power-of-two") != NULL);
	ASSERT(TLX_MISUSE, tlx_tune_get_rejection(t, 1, &x));
	tlx_tune_destroy(t);
}

/* A table by shape: tlx_table_parse / tlx_table_pick (exact, nearest in
 * log2, the first on a tie, other names never), its mistakes, and
 * tlx_tune_write_table adding and replacing a session's winner. */
static void
test_table(const char *dir)
{
	static const char text[] =
		"# comment\n"
		"mm M=1024 N=1024 : BM=64 BN=64  # 1.0 ms\n"
		"\n"
		"mm M=4096 N=4096 : BM=128 BN=256 FAST=true\n"
		"mm N=8192 M=8192 : BM=256 BN=256\n"
		"mm M=2048 N=2048 K=64 : BM=32 BN=32\n"
		"vadd : BLOCK=512\n";
	const char *const q4096[] = { "N=4096", "M=4096" };
	const char *const q3000[] = { "M=3000", "N=3000" };
	const char *const q2048[] = { "M=2048", "N=2048" };
	const char *const qk[] = { "M=2048", "N=2048", "K=64" };
	const char *const qbad[] = { "M" };
	const char *const *defs;
	char path[512], line[512];
	int n, exact;
	tlx_ctx *ctx;
	tlx_table *tab;
	tlx_tune *t;
	FILE *f;

	ASSERT(TLX_OK, tlx_ctx_create(NULL, NULL, &ctx));
	ASSERT(TLX_OK, tlx_table_parse(ctx, "t.tab", text, sizeof text - 1, &tab));
	ASSERT(TLX_OK, tlx_table_pick(tab, "mm", q4096, 2, 0, &defs, &n, &exact));
	ASSERT(3, n);
	ASSERT_STR("BN=256", defs[1]);
	ASSERT_STR("FAST=true", defs[2]);
	ASSERT(1, exact);
	/* 3000: nearer 4096 than 1024 or 8192, in log2 */
	ASSERT(TLX_OK, tlx_table_pick(tab, "mm", q3000, 2, 0, &defs, &n, &exact));
	ASSERT_STR("BM=128", defs[0]);
	ASSERT(0, exact);
	ASSERT(TLX_ERROR, tlx_table_pick(tab, "mm", q3000, 2, TLX_TABLE_EXACT,
					 &defs, &n, NULL));
	/* 2048: as near 1024 as 4096, the first wins; K=64 entries differ */
	ASSERT(TLX_OK, tlx_table_pick(tab, "mm", q2048, 2, 0, &defs, &n, NULL));
	ASSERT_STR("BM=64", defs[0]);
	ASSERT(TLX_OK, tlx_table_pick(tab, "mm", qk, 3, 0, &defs, &n, &exact));
	ASSERT_STR("BM=32", defs[0]);
	ASSERT(TLX_OK, tlx_table_pick(tab, "vadd", NULL, 0, 0, &defs, &n, NULL));
	ASSERT_STR("BLOCK=512", defs[0]);
	ASSERT(TLX_ERROR, tlx_table_pick(tab, "other", NULL, 0, 0, &defs, &n,
					 NULL));
	ASSERT(TLX_MISUSE, tlx_table_pick(tab, "mm", qbad, 1, 0, &defs, &n,
					  NULL));
	tlx_table_destroy(tab);
	tlx_table_destroy(NULL);
	ASSERT(TLX_COMPILE, tlx_table_parse(ctx, "b.tab", "mm M=1\nmm M=x : A=1\n",
					    20, &tab));
	CHECK(tab == NULL);
	ASSERT_STR("b.tab:1: error: expected KERNEL NAME=INT ... : NAME=VALUE ...",
		   tlx_errmsg(ctx));
	ASSERT(TLX_COMPILE, tlx_table_parse(ctx, "b.tab", "mm M=x : A=1\n", 13,
					    &tab));
	ASSERT_STR("b.tab:1: error: a shape's value must be an integer",
		   tlx_errmsg(ctx));
	ASSERT(TLX_COMPILE, tlx_table_parse(ctx, "b.tab", "mm M=1 : A\n", 11,
					    &tab));
	ASSERT_STR("b.tab:1: error: a configuration is NAME=VALUE",
		   tlx_errmsg(ctx));
	ASSERT(TLX_IO, tlx_table_load(ctx, "/nonexistent/t.tab", &tab));
	/* a session's winner, added then replaced; other lines kept */
	snprintf(path, sizeof path, "%s/tuned.tab", dir);
	if ((f = fopen(path, "w"))) {
		fputs("mm M=1 : BM=1\n", f);
		fclose(f);
	}
	for (int round = 0; round < 2; round++) {
		t = synthetic(round ? "opt:A=7,opt:B=2" : "opt:A=5,opt:B=3", NULL,
			      TLX_TUNE_EXHAUSTIVE);
		if (!t)
			break;
		ASSERT(TLX_ERROR, tlx_tune_write_table(t, path));  /* not run */
		ASSERT(TLX_OK, tlx_tune_add_arg(t, "n=77"));
		ASSERT(TLX_OK, tlx_tune_add_define(t, "C=9"));
		ASSERT(TLX_OK, tlx_tune_run(t));
		ASSERT(TLX_OK, tlx_tune_write_table(t, path));
		tlx_tune_destroy(t);
	}
	ASSERT(TLX_OK, tlx_table_load(ctx, path, &tab));
	ASSERT(TLX_OK, tlx_table_pick(tab, "vadd", (const char *const[]){ "n=77" },
				      1, TLX_TABLE_EXACT, &defs, &n, NULL));
	ASSERT(3, n);
	ASSERT_STR("C=9", defs[0]);
	ASSERT_STR("A=7", defs[1]);
	ASSERT_STR("B=2", defs[2]);
	ASSERT(TLX_OK, tlx_table_pick(tab, "mm", (const char *const[]){ "M=1" },
				      1, TLX_TABLE_EXACT, &defs, &n, NULL));
	tlx_table_destroy(tab);
	n = 0;
	if ((f = fopen(path, "r"))) {
		while (fgets(line, sizeof line, f))
			n += !strncmp(line, "vadd n=77 : ", 12);
		fclose(f);
	}
	ASSERT(1, n);
	tlx_ctx_destroy(ctx);
}

static void
test_misuse(void)
{
	static const int64_t twice[] = { 1, 2, 1 };
	tlx_tune_opts o;
	tlx_tune *t = NULL;

	ASSERT(TLX_MISUSE, tlx_tune_create("x", NULL, 0, "vadd", &t));
	ASSERT(TLX_MISUSE, tlx_tune_create("x", VADD, 1, "vadd", NULL));
	ASSERT(TLX_MISUSE, tlx_tune_opts_default(NULL));
	tlx_tune_destroy(NULL);
	ASSERT_STR("", tlx_tune_errmsg(NULL));
	ASSERT(TLX_OK, tlx_tune_create("x", VADD, sizeof VADD - 1, "vadd", &t));
	if (!t)
		return;
	ASSERT(TLX_MISUSE, tlx_tune_run(t));
	ASSERT_STR("no space: add at least one parameter", tlx_tune_errmsg(t));
	ASSERT(TLX_MISUSE, tlx_tune_add_param(t, "A", twice, 3));
	ASSERT_STR("'A': the value 1 is given twice", tlx_tune_errmsg(t));
	ASSERT(TLX_OK, tlx_tune_add_param(t, "A", twice, 2));
	ASSERT(TLX_MISUSE, tlx_tune_add_param(t, "A", twice, 2));
	ASSERT(TLX_MISUSE, tlx_tune_add_define(t, "A=3"));
	ASSERT(TLX_MISUSE, tlx_tune_add_define(t, "K"));
	ASSERT(TLX_MISUSE, tlx_tune_add_arg(t, "=3"));
	tlx_tune_opts_default(&o);
	o.timeout = 0;
	ASSERT(TLX_MISUSE, tlx_tune_set_opts(t, &o));
	tlx_tune_opts_default(&o);
	o.effort = 3;
	ASSERT(TLX_MISUSE, tlx_tune_set_opts(t, &o));
	o.effort = TLX_TUNE_EFFORT_QUICK;
	o.repeat_ms = -1;
	ASSERT(TLX_MISUSE, tlx_tune_set_opts(t, &o));
	o.repeat_ms = 0;
	o.confirm = 2;
	ASSERT(TLX_MISUSE, tlx_tune_set_opts(t, &o));
	o.confirm = 0;
	o.devices = "0,x";
	ASSERT(TLX_MISUSE, tlx_tune_set_opts(t, &o));
	ASSERT_STR("bad device list '0,x' (expected 'all' or distinct "
		   "numbers: 0,1)", tlx_tune_errmsg(t));
	tlx_tune_opts_default(&o);
	o.backend = TLX_TUNE_SYNTHETIC;
	o.cache = 0;
	o.synthetic = "opt:Q=1";
	ASSERT(TLX_OK, tlx_tune_set_opts(t, &o));
	ASSERT(TLX_MISUSE, tlx_tune_run(t));
	ASSERT_STR("TLX_TUNE_SYNTHETIC: 'Q' is not a parameter of the space",
		   tlx_tune_errmsg(t));
	/* a suspiciously fast result confirmed: the slower run counts */
	o.synthetic = "opt:A=1,fast:A=2";
	o.confirm = 1;
	o.finalists = -1;
	{
		tlx_tune_eval e = { 0 };
		int64_t best;
		int n;

		/* exhaustive: A=1 (cost 1), then A=2, whose first run says
		 * 0.2 < 0.9, confirmed at its true 2 */
		o.search = TLX_TUNE_EXHAUSTIVE;
		ASSERT(TLX_OK, tlx_tune_set_opts(t, &o));
		ASSERT(TLX_OK, tlx_tune_run(t));
		ASSERT(TLX_OK, tlx_tune_num_evals(t, &n));
		ASSERT(2, n);
		ASSERT(TLX_OK, tlx_tune_get_eval(t, 0, &e));
		ASSERT(0, e.confirmed);
		ASSERT(TLX_OK, tlx_tune_get_eval(t, 1, &e));
		ASSERT(2, (int)e.values[0]);
		ASSERT(1, e.confirmed);
		CHECK(e.cost == 2);
		ASSERT(0, e.device);
		ASSERT(TLX_OK, tlx_tune_get_best(t, &best, NULL));
		ASSERT(1, (int)best);
	}
	o.confirm = 0;
	o.finalists = 0;
	o.search = TLX_TUNE_LFBO;
	/* everything fails: run succeeds, there is no best */
	o.synthetic = "crash:A=1,wrong:A=2";
	ASSERT(TLX_OK, tlx_tune_set_opts(t, &o));
	ASSERT(TLX_OK, tlx_tune_run(t));
	ASSERT(TLX_ERROR, tlx_tune_get_best(t, NULL, NULL));
	ASSERT_STR("every candidate failed (2 evaluated)", tlx_tune_errmsg(t));
	tlx_tune_destroy(t);
	/* the default configuration fails: the reason */
	ASSERT(TLX_OK, tlx_tune_create("x", VADD, sizeof VADD - 1, "nosuch", &t));
	ASSERT(TLX_OK, tlx_tune_add_param(t, "BLOCK", twice, 2));
	tlx_tune_opts_default(&o);
	o.cache = 0;
	o.size = 64;
	ASSERT(TLX_OK, tlx_tune_set_opts(t, &o));
	ASSERT(TLX_ERROR, tlx_tune_run(t));
	CHECK(strstr(tlx_tune_errmsg(t), "the default configuration") != NULL);
	tlx_tune_destroy(t);
}

int
main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: tune_api_test DIR\n");
		return 2;
	}
	mkdir(argv[1], 0755);
	test_synthetic(argv[1]);
	test_sim();
	test_table(argv[1]);
	test_misuse();
	TEST_MAIN_END();
}
