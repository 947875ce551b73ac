/*
 * gen_test: random well-typed programs (gen.c) through the whole pipeline
 * with a differential oracle (oracle.c), findings reduced (reduce.c).
 *
 *   gen_test [SEED [COUNT]] [options]   a campaign: programs SEED,
 *                                       SEED+1, ... (default 1, 100)
 *     --seed S --count N    the same; --count 0 with --time: no limit
 *     --time SECONDS        stop after this long
 *     --oracle NAME         o0-o3 (default; --list-oracles)
 *     --no-codegen          -O3 to IR only, not through LLVM to PTX
 *     --strict-nan          NaNs must have the same bits too (by
 *                           default any two NaNs are equal: the
 *                           language does not say which NaN a result is)
 *     --keep DIR            write findings there (default .): seed-S.tlx,
 *                           and seed-S.min.tlx, the reduced reproducer
 *     --keep-all            also every program, as DIR/prog-S.tlx
 *     --ignore TEXT         findings whose class contains TEXT are
 *                           known: counted, not written (repeatable)
 *     --no-reduce           do not reduce findings
 *     --reduce-all          reduce every finding, timeouts too (default: the first of
 *                           each class)
 *     --no-fork             check in process (for a debugger)
 *     --timeout S           CPU seconds per check (default 60)
 *     --stmts N, --depth N  the generator's size (default 24, 3)
 *     --no-shared, --no-atomics, --no-dot
 *     --async PCT           PCT percent of the programs with an
 *                           asynchronous part (async.c; default 0)
 *     --approx PCT          PCT percent of the math calls that have an
 *                           approximation with `approx: true` (default 0)
 *     --rows PCT            PCT percent of the programs ending with a row
 *                           kernel's statement (peel-rows; default 0)
 *     --stats               what the programs were made of
 *     -v                    each program's seed and result
 *   gen_test --print [SEED [COUNT]]    print the programs
 *   gen_test --digest [SEED [COUNT]]   a hash of the programs (FNV-1a of
 *                                      what --print prints): they must
 *                                      not change (gen-digest.test)
 *   gen_test --check FILE...           run the oracle on files (with
 *                                      their "//!" lines): ok, or the
 *                                      finding and exit status 1
 *   gen_test --reduce FILE [-o OUT]    reduce a file's finding
 *
 * A campaign prints one line per finding and ends with
 * "N programs: K ok, F findings"; it exits 1 when there was a finding.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "gen.h"

typedef struct Opts {
	uint64_t seed;
	long count;
	double time_limit;
	const FzOracle *oracle;
	FzCheckOpts check;
	bool reduce, reduce_all, stats, verbose, keep_all;
	const char *keep;
	const char *out;
	const char *ignore[16];  /* classes of known findings */
	int nignore;
	FzGenOpts gen;
} Opts;

typedef struct Class {
	char cls[256];
	int count;
	uint64_t first_seed;
} Class;

/* Writes the message as "// " comment lines (at most 12). */
static void
comment_lines(FILE *f, const char *msg)
{
	const char *p = msg;
	int k;

	for (k = 0; *p && k < 12; k++) {
		const char *e = strchr(p, '\n');
		int n = e ? (int)(e - p) : (int)strlen(p);

		fprintf(f, "// %.*s\n", n > 200 ? 200 : n, p);
		p += n + (e ? 1 : 0);
	}
}

static bool
write_program(const char *path, const char *src, const FzResult *r,
	      const Opts *o, bool test)
{
	FILE *f = fopen(path, "w");

	if (!f) {
		fprintf(stderr, "gen_test: cannot write %s: %s\n", path,
			strerror(errno));
		return false;
	}
	if (r) {
		if (test)
			fprintf(f, "// RUN: %%gen_test%s%s --check %%s\n",
				o->check.codegen ? "" : " --no-codegen",
				o->check.nan_equal ? "" : " --strict-nan");
		fprintf(f, "// A finding of gen_test (oracle %s): %s\n",
			o->oracle->name, r->cls);
		comment_lines(f, r->msg);
	}
	fputs(src, f);
	fclose(f);
	return true;
}

static void
print_result(const char *what, const FzResult *r)
{
	const char *e = strchr(r->msg, '\n');

	printf("%s: %s: %.*s%s\n", what, fz_kind_names[r->kind],
	       e ? (int)(e - r->msg) : (int)strlen(r->msg), r->msg,
	       e ? " ..." : "");
}

static void
check_candidate(void *ctx, const char *src, size_t len, FzResult *r)
{
	const Opts *o = ctx;

	fz_check(o->oracle, src, len, &o->check, r);
}

static void
reduce_one(const Opts *o, const char *src, const FzResult *r,
	   const char *path)
{
	FzReduceOpts ro = { check_candidate, (void *)o, o->verbose };
	double t0 = fz_now();
	int tests = 0, before = 0, after = 0;
	char *min = fz_reduce(src, r, &ro, &tests);
	const char *p;

	if (!min)
		return;
	for (p = src; *p; p++)
		before += *p == '\n';
	for (p = min; *p; p++)
		after += *p == '\n';
	write_program(path, min, r, o, true);
	printf("  reduced %d -> %d lines in %d checks (%.1f s): %s\n", before,
	       after, tests, fz_now() - t0, path);
	free(min);
}

static int
campaign(const Opts *o)
{
	FzGenStats st = { 0 };
	Class classes[64], skips[32];
	int nclasses = 0, nskips = 0, i;
	long n, ignored = 0, kinds[FZ_SETUP + 1] = { 0 };
	double t0 = fz_now(), dt;

	if (o->keep)
		mkdir(o->keep, 0777);
	for (n = 0; o->count == 0 || n < o->count; n++) {
		uint64_t seed = o->seed + (uint64_t)n;
		char *src, path[4096], what[64];
		FzResult r;
		int c;

		if (o->time_limit > 0 && fz_now() - t0 > o->time_limit)
			break;
		if (!(src = fz_generate(seed, &o->gen, &st))) {
			fprintf(stderr, "gen_test: out of memory\n");
			return 2;
		}
		if (o->keep_all) {
			snprintf(path, sizeof path, "%s/prog-%llu.tlx",
				 o->keep ? o->keep : ".", (unsigned long long)seed);
			write_program(path, src, NULL, o, false);
		}
		fz_check(o->oracle, src, strlen(src), &o->check, &r);
		kinds[r.kind]++;
		if (r.skipped[0]) {
			for (c = 0; c < nskips && strcmp(skips[c].cls, r.skipped); c++)
				;
			if (c == nskips && nskips < (int)(sizeof skips / sizeof *skips)) {
				snprintf(skips[c].cls, sizeof skips[c].cls, "%s",
					 r.skipped);
				skips[c].count = 0;
				skips[c].first_seed = seed;
				nskips++;
			}
			if (c < nskips)
				skips[c].count++;
		}
		snprintf(what, sizeof what, "seed %llu", (unsigned long long)seed);
		if (r.kind == FZ_OK) {
			if (o->verbose)
				print_result(what, &r);
			free(src);
			continue;
		}
		for (c = 0; c < o->nignore && !strstr(r.cls, o->ignore[c]); c++)
			;
		if (c < o->nignore) {  /* known: counted, not kept */
			kinds[r.kind]--;
			ignored++;
			free(src);
			continue;
		}
		print_result(what, &r);
		printf("  class: %s\n", r.cls);
		for (c = 0; c < nclasses; c++)
			if (!strcmp(classes[c].cls, r.cls))
				break;
		if (c == nclasses && nclasses < (int)(sizeof classes / sizeof *classes)) {
			snprintf(classes[c].cls, sizeof classes[c].cls, "%s", r.cls);
			classes[c].count = 0;
			classes[c].first_seed = seed;
			nclasses++;
		}
		snprintf(path, sizeof path, "%s/seed-%llu.tlx",
			 o->keep ? o->keep : ".", (unsigned long long)seed);
		write_program(path, src, &r, o, false);
		/* a timeout is reduced only when asked: every candidate
		 * that still times out costs the whole limit */
		if (o->reduce && (r.kind != FZ_TIMEOUT || o->reduce_all) &&
		    (o->reduce_all || c >= nclasses || classes[c].count == 0)) {
			snprintf(path, sizeof path, "%s/seed-%llu.min.tlx",
				 o->keep ? o->keep : ".", (unsigned long long)seed);
			reduce_one(o, src, &r, path);
		}
		if (c < nclasses)
			classes[c].count++;
		free(src);
		fflush(stdout);
	}
	dt = fz_now() - t0;
	if (o->stats) {
		printf("constructs used:\n");
		for (i = 0; i < FZ_C_COUNT; i++)
			printf("  %-14s %ld\n", fz_construct_names[i], st.counts[i]);
	}
	if (nskips) {
		printf("not supported by code generation yet (the -O3 IR ran):\n");
		for (i = 0; i < nskips; i++)
			printf("  %4d  seed %llu  %s\n", skips[i].count,
			       (unsigned long long)skips[i].first_seed,
			       skips[i].cls);
	}
	if (nclasses) {
		printf("finding classes:\n");
		for (i = 0; i < nclasses; i++)
			printf("  %4d  seed %llu  %s\n", classes[i].count,
			       (unsigned long long)classes[i].first_seed,
			       classes[i].cls);
	}
	printf("%ld programs in %.1f s (%.0f ms each)\n", n, dt,
	       n ? dt * 1000 / (double)n : 0.0);
	if (ignored)
		printf("%ld known findings ignored (--ignore)\n", ignored);
	printf("%ld programs: %ld ok, %ld findings", n, kinds[FZ_OK],
	       n - kinds[FZ_OK] - ignored);
	if (n - kinds[FZ_OK] - ignored) {
		const char *sep = " (";

		for (i = 1; i <= FZ_SETUP; i++)
			if (kinds[i]) {
				printf("%s%ld %s", sep, kinds[i], fz_kind_names[i]);
				sep = ", ";
			}
		printf(")");
	}
	printf("\n");
	return n - kinds[FZ_OK] - ignored ? 1 : 0;
}

static int
check_files(const Opts *o, char **files, int n)
{
	int i, bad = 0;

	for (i = 0; i < n; i++) {
		size_t len;
		char *src = fz_read_file(files[i], &len);
		FzResult r;

		if (!src) {
			printf("FAIL: %s: cannot read it\n", files[i]);
			bad++;
			continue;
		}
		fz_check(o->oracle, src, len, &o->check, &r);
		if (r.kind == FZ_OK && r.skipped[0]) {
			/* -O3's IR ran instead of the code for sm_90a */
			printf("ok (codegen refused: %s): %s\n", r.skipped,
			       files[i]);
		} else if (r.kind == FZ_OK) {
			printf("ok: %s\n", files[i]);
		} else {
			printf("FAIL: %s: %s\n%s\n", files[i], r.cls, r.msg);
			bad++;
		}
		free(src);
	}
	return bad ? 1 : 0;
}

static int
reduce_file(const Opts *o, const char *file)
{
	size_t len;
	char *src = fz_read_file(file, &len), out[4096];
	FzResult r;

	if (!src) {
		fprintf(stderr, "gen_test: cannot read %s\n", file);
		return 2;
	}
	fz_check(o->oracle, src, len, &o->check, &r);
	print_result(file, &r);
	if (r.kind == FZ_OK) {
		free(src);
		return 1;
	}
	if (o->out)
		snprintf(out, sizeof out, "%s", o->out);
	else
		snprintf(out, sizeof out, "%.*s.min.tlx",
			 (int)(strlen(file) > 4 && !strcmp(file + strlen(file) - 4,
							  ".tlx")
				       ? strlen(file) - 4 : strlen(file)), file);
	reduce_one(o, src, &r, out);
	free(src);
	return 0;
}

/* The FNV-1a hash of the programs o->seed, o->seed + 1, ...: one line. */
static int
digest(const Opts *o)
{
	uint64_t h = 0xcbf29ce484222325ull;
	long k;

	for (k = 0; k < o->count; k++) {
		char *src = fz_generate(o->seed + (uint64_t)k, &o->gen, NULL);
		const char *c;

		if (!src) {
			fprintf(stderr, "gen_test: out of memory\n");
			return 1;
		}
		for (c = src; *c; c++)
			h = (h ^ (unsigned char)*c) * 0x100000001b3ull;
		free(src);
	}
	printf("%ld programs from seed %llu: digest %016llx\n", o->count,
	       (unsigned long long)o->seed, (unsigned long long)h);
	return 0;
}

static void
usage(void)
{
	fprintf(stderr, "usage: gen_test [SEED [COUNT]] [--seed S] [--count N] "
		"[--time S] [--oracle NAME] [--no-codegen] [--strict-nan] [--keep DIR] "
		"[--keep-all] [--ignore TEXT] [--no-reduce] [--reduce-all] [--no-fork] "
		"[--timeout S] [--stmts N] [--depth N] [--no-shared] "
		"[--no-atomics] [--no-dot] [--async PCT] [--approx PCT] [--rows PCT] [--stats] [-v]\n"
		"       gen_test --print [SEED [COUNT]]\n"
		"       gen_test --digest [SEED [COUNT]]\n"
		"       gen_test --check FILE...\n"
		"       gen_test --reduce FILE [-o OUT]\n");
	exit(2);
}

int
main(int argc, char **argv)
{
	Opts o = { .seed = 1, .count = 100, .reduce = true,
		   .check = { .codegen = true, .nan_equal = true, .fork_ = true,
			      .timeout_s = 60 } };
	enum { CAMPAIGN, PRINT, DIGEST, CHECK, REDUCE } mode = CAMPAIGN;
	char *files[256];
	int nfiles = 0, npos = 0, i;
	long k;

	o.oracle = fz_oracle_find(NULL);
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		bool more = i + 1 < argc;

		if (!strcmp(a, "--seed") && more)
			o.seed = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(a, "--count") && more)
			o.count = strtol(argv[++i], NULL, 0);
		else if (!strcmp(a, "--time") && more)
			o.time_limit = strtod(argv[++i], NULL);
		else if (!strcmp(a, "--oracle") && more) {
			if (!(o.oracle = fz_oracle_find(argv[++i]))) {
				fprintf(stderr, "gen_test: no oracle '%s'\n", argv[i]);
				return 2;
			}
		} else if (!strcmp(a, "--list-oracles")) {
			for (k = 0; fz_oracles[k].name; k++)
				printf("%s: %s\n", fz_oracles[k].name,
				       fz_oracles[k].summary);
			return 0;
		} else if (!strcmp(a, "--no-codegen"))
			o.check.codegen = false;
		else if (!strcmp(a, "--codegen"))
			o.check.codegen = true;
		else if (!strcmp(a, "--strict-nan"))
			o.check.nan_equal = false;
		else if (!strcmp(a, "--keep") && more)
			o.keep = argv[++i];
		else if (!strcmp(a, "--keep-all"))
			o.keep_all = true;
		else if (!strcmp(a, "--no-reduce"))
			o.reduce = false;
		else if (!strcmp(a, "--reduce-all"))
			o.reduce_all = true;
		else if (!strcmp(a, "--no-fork"))
			o.check.fork_ = false;
		else if (!strcmp(a, "--timeout") && more)
			o.check.timeout_s = atoi(argv[++i]);
		else if (!strcmp(a, "--stmts") && more)
			o.gen.max_stmts = atoi(argv[++i]);
		else if (!strcmp(a, "--depth") && more)
			o.gen.max_depth = atoi(argv[++i]);
		else if (!strcmp(a, "--no-shared"))
			o.gen.no_shared = true;
		else if (!strcmp(a, "--no-atomics"))
			o.gen.no_atomics = true;
		else if (!strcmp(a, "--no-dot"))
			o.gen.no_dot = true;
		else if (!strcmp(a, "--async") && more)
			o.gen.async_pct = atoi(argv[++i]);
		else if (!strcmp(a, "--approx") && more)
			o.gen.approx_pct = atoi(argv[++i]);
		else if (!strcmp(a, "--rows") && more)
			o.gen.rows_pct = atoi(argv[++i]);
		else if (!strcmp(a, "--ignore") && more) {
			if (o.nignore < 16)
				o.ignore[o.nignore++] = argv[++i];
		} else if (!strcmp(a, "--stats"))
			o.stats = true;
		else if (!strcmp(a, "-v"))
			o.verbose = true;
		else if (!strcmp(a, "--print"))
			mode = PRINT;
		else if (!strcmp(a, "--digest"))
			mode = DIGEST;
		else if (!strcmp(a, "--check"))
			mode = CHECK;
		else if (!strcmp(a, "--reduce"))
			mode = REDUCE;
		else if (!strcmp(a, "-o") && more)
			o.out = argv[++i];
		else if (a[0] == '-')
			usage();
		else if (mode == CHECK || mode == REDUCE) {
			if (nfiles < 256)
				files[nfiles++] = argv[i];
		} else if (npos++ == 0)
			o.seed = strtoull(a, NULL, 0);
		else
			o.count = strtol(a, NULL, 0);
	}
	if (o.count == 0 && o.time_limit <= 0 && mode == CAMPAIGN)
		usage();
	switch (mode) {
	case PRINT:
		if (npos < 2 && o.count == 100)
			o.count = 1;
		for (k = 0; k < o.count; k++) {
			char *src = fz_generate(o.seed + (uint64_t)k, &o.gen, NULL);

			fputs(src ? src : "", stdout);
			free(src);
		}
		return 0;
	case DIGEST:
		return digest(&o);
	case CHECK:
		return check_files(&o, files, nfiles);
	case REDUCE:
		if (nfiles != 1)
			usage();
		return reduce_file(&o, files[0]);
	default:
		return campaign(&o);
	}
}
