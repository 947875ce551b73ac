/*
 * tlx-tune.c: the tuning driver's command line (issue 17).
 *
 *   tlx-tune KERNEL.tlx -k NAME [--space 'BM=64,128,256' ...] [options]
 *
 * reads the options and the kernel, builds the space (build_space: the
 * one place where parameters reach the session: the kernel's tune(...),
 * which --space overrides and -D trims), and runs a libtlxtune
 * session (include/tlx/tune.h: compile workers, a benchmarking child per
 * candidate, the search, the finalists' re-timing, the result cache).  The
 * best configuration goes to stdout as -D flags; --json writes every
 * evaluation and rejection, --plot an SVG of the search.  docs/tuning.md has the
 * details, `tlx-tune --help` the options and exit codes.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tlx/tlx.h"
#include "tlx/tune.h"

enum {
	EXIT_OK = 0,      /* a configuration was found */
	EXIT_FAIL = 1,    /* the default configuration failed, or every one */
	EXIT_USAGE = 2,   /* bad option or argument */
	EXIT_IO = 3,      /* cannot read the input or write the report */
};

#define MAXP 16      /* parameters of a space */
#define MAXV 64      /* values of a parameter */
#define MAXD 64      /* -D flags, --arg values */

typedef struct Param {
	char name[64];
	int64_t v[MAXV];
	int n;
} Param;

/* The command line. */
typedef struct Cli {
	const char *input, *kernel, *json, *plot, *table;
	char *src;
	size_t srclen;
	Param params[MAXP];
	int np;
	const char *sargs[MAXD];  /* --arg NAME=VALUE */
	int nsargs;
	const char *defs[MAXD];
	int ndefs;
	tlx_tune_opts o;
} Cli;

static int
usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("tlx-tune: error: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\n(tlx-tune --help lists the options)\n", stderr);
	return EXIT_USAGE;
}

static void
help(void)
{
	fputs(
"usage: tlx-tune KERNEL.tlx -k NAME [--space NAME=V1,V2,...] [options]\n"
"\n"
"Searches the const parameters of kernel NAME over its tune(...) space\n"
"and prints the best configuration as -D flags on stdout.  Configurations\n"
"its constraints or the compiler's checks reject are never compiled.\n"
"\n"
"options:\n"
"  -k, --kernel NAME     the kernel to tune (required)\n"
"  --space NAME=V,...    a const parameter and its integer values (repeat):\n"
"                        replaces its values in tune(...), or adds it\n"
"  --search KIND         lfbo (default), exhaustive or random\n"
"  --seed N              the search's seed (default 1)\n"
"  --max-evals N         evaluate at most N configurations (0: no limit;\n"
"                        random search: default 100)\n"
"  --initial N           LFBO's random start population (default 100)\n"
"  --prior               order the first candidates by a static cost model\n"
"                        (occupancy, wave quantization, the dots' traffic\n"
"                        per FLOP): half of LFBO's initial population is\n"
"                        the model's best of 3x as many, exhaustive search\n"
"                        goes in its order\n"
"  --budget SECONDS      stop evaluating after this wall time (0: none)\n"
"  --backend KIND        sim (default), cuda or synthetic\n"
"  --timeout SECONDS     per compile and per run of a candidate (default 10)\n"
"  -j, --jobs N          compile workers (default: the number of cores)\n"
"  --devices LIST        benchmark on these devices, 0,1 (default all: the\n"
"                        GPUs the driver sees; sim and synthetic:\n"
"                        TLXRT_SIM_DEVICES); one run server per device,\n"
"                        the first runs the reference and finalists\n"
"  --repeats N           timed runs per candidate; the median counts\n"
"                        (default: 3 on sim, 10 on cuda)\n"
"  --repeat-ms MS        instead, timed runs until MS milliseconds of\n"
"                        kernel time (at least 3, at most 1000)\n"
"  --confirm, --no-confirm\n"
"                        run a result >10% better than the best so far\n"
"                        again in a fresh child, the slower counting\n"
"                        (default: on cuda only)\n"
"  --effort LEVEL        quick, default or full: the defaults of\n"
"                        --initial, --max-evals, --repeats, --finalists,\n"
"                        --rounds and LFBO's copies and generations\n"
"  --finalists N         the N best re-timed round-robin at the end, the\n"
"                        best of that wins (default 5; 0: none)\n"
"  --rounds N            rounds of that re-timing (default: 3 on sim, 20\n"
"                        on cuda)\n"
"  --size N              the problem size (default 4096), see below\n"
"  --elems N             elements of each buffer (default: --size)\n"
"  --arg NAME=VALUE      the value of scalar parameter NAME (repeat)\n"
"  -D NAME=VALUE         a fixed const override for every candidate (a\n"
"                        parameter of tune(...) so given leaves the space)\n"
"  --json FILE           write a report of every evaluation and rejection\n"
"  --plot FILE.svg       plot the best cost against evaluations and time\n"
"  --table FILE          add the winner to a table by shape, the line\n"
"                        'KERNEL M=.. N=.. : -D values and the winner'\n"
"                        (replacing that kernel and shape's), which\n"
"                        libtlx, tlxc --table and tlx.tuned pick from\n"
"  --no-cache            neither read nor write the result cache\n"
"                        ($XDG_CACHE_HOME/tlx/tune, ~/.cache/tlx/tune)\n"
"  -h, --help            this text\n", stdout);
	fputs("\n"
"arguments: every pointer parameter gets a buffer of --elems elements of its\n"
"type filled with deterministic values, every scalar named by --arg that\n"
"value, every other integer scalar the value of --size, every other float\n"
"scalar 1.0; the grid comes from the kernel's grid\n"
"function.  All pointer buffers are compared with the default\n"
"configuration's after one launch (floats within a tolerance scaled by\n"
"magnitude, everything else bitwise).\n"
"\n"
"cost: cuda: milliseconds by events around the launch after an L2 flush,\n"
"median of repeats; sim: the operations the simulator executed; synthetic:\n"
"the planted landscape's value.  A cached winner (same source, kernel,\n"
"arguments, device, driver and compiler) is evaluated first.\n"
"\n"
"synthetic backend: TLX_TUNE_SYNTHETIC='KIND:NAME=V,...' plants behaviours;\n"
"KIND is opt (the optimum's value of NAME; cost = 1 + the sum over\n"
"parameters of the index distance to it, the first value when none),\n"
"crash (abort), segv (SIGSEGV), hang, wrong (a wrong result), reject\n"
"(a compile rejection), compile-crash or compile-hang (in the compile\n"
"worker) for candidates with NAME=V; prior plants --prior's estimate (1 +\n"
"the index distance to the planted values) instead of the cost model;\n"
"fast makes a candidate's first run report a tenth of its cost.\n"
"\n"
"exit status: 0 found, 1 the default configuration or every candidate\n"
"failed, 2 usage error, 3 I/O error.\n", stdout);
}

/* ---- options ---------------------------------------------------------- */

static int
parse_int(const char *s, int64_t *out)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 0);
	if (errno || end == s || *end)
		return -1;
	*out = v;
	return 0;
}

/* The integer value of option OPT (its first n characters) within its
 * range; a usage error otherwise. */
static int
int_option(const char *opt, int n, const char *val, int64_t *v)
{
	static const struct {
		const char *name;
		int64_t lo, hi;
	} r[] = {
		{ "--seed", 0, INT64_MAX }, { "--max-evals", 0, 1000000 },
		{ "--repeats", 1, 1000 }, { "--size", 1, 1 << 28 },
		{ "--jobs", 1, 1024 }, { "--initial", 1, 100000 }, { "--finalists", 0, 16 },
		{ "--rounds", 1, 1000 }, { "--elems", 1, 1 << 28 },
	};
	size_t i;

	for (i = 0; i < sizeof r / sizeof *r - 1; i++)
		if (strlen(r[i].name) == (size_t)n && !strncmp(opt, r[i].name, (size_t)n))
			break;
	if (parse_int(val, v) || *v < r[i].lo || *v > r[i].hi) {
		if (r[i].hi == INT64_MAX)
			usage_error("%.*s '%s': expected a non-negative integer",
				    n, opt, val);
		else
			usage_error("%.*s '%s': expected an integer %lld..%lld",
				    n, opt, val, (long long)r[i].lo,
				    (long long)r[i].hi);
		return -1;
	}
	return 0;
}

static int
parse_num(const char *s, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(s, &end);
	return errno || end == s || *end || !(*out >= 0) ? -1 : 0;
}

static int
cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

static int
find_param(const Cli *T, const char *name, size_t len)
{
	for (int i = 0; i < T->np; i++)
		if (strlen(T->params[i].name) == len &&
		    !memcmp(T->params[i].name, name, len))
			return i;
	return -1;
}

static int
parse_space(Cli *T, const char *s)
{
	const char *eq = strchr(s, '=');
	Param *p;
	char buf[64];

	if (!eq || eq == s || (size_t)(eq - s) >= sizeof p->name)
		return usage_error("--space '%s': expected NAME=V1,V2,... "
				   "(e.g. --space 'BM=64,128')", s);
	if (T->np == MAXP)
		return usage_error("--space: at most %d parameters", MAXP);
	if (find_param(T, s, eq - s) >= 0)
		return usage_error("--space '%s': '%.*s' is given twice",
				   s, (int)(eq - s), s);
	p = &T->params[T->np];
	memcpy(p->name, s, eq - s);
	p->name[eq - s] = 0;
	p->n = 0;
	for (const char *q = eq + 1;;) {
		size_t n = strcspn(q, ",");

		if (!n || n >= sizeof buf)
			return usage_error("--space '%s': an empty or too "
					   "long value", s);
		memcpy(buf, q, n);
		buf[n] = 0;
		if (p->n == MAXV)
			return usage_error("--space '%s': at most %d values",
					   s, MAXV);
		if (parse_int(buf, &p->v[p->n]))
			return usage_error("--space '%s': '%s' is not an "
					   "integer", s, buf);
		p->n++;
		if (!q[n])
			break;
		q += n + 1;
	}
	qsort(p->v, p->n, sizeof *p->v, cmp_i64);
	for (int i = 1; i < p->n; i++)
		if (p->v[i] == p->v[i - 1])
			return usage_error("--space '%s': the value %lld is "
					   "given twice", s, (long long)p->v[i]);
	T->np++;
	return EXIT_OK;
}

static int
parse_args(Cli *T, int argc, char **argv)
{
	const char *search = "lfbo", *backend = "sim";
	int64_t v;

	tlx_tune_opts_default(&T->o);
	T->o.progress = isatty(2);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *val = NULL;
		const char *eq;
		size_t n;

#define VALUE()                                                         \
	do {                                                            \
		if (eq)                                                 \
			val = eq + 1;                                   \
		else if (i + 1 < argc)                                  \
			val = argv[++i];                                \
		else                                                    \
			return usage_error("%.*s needs a value", (int)n, a); \
	} while (0)
		eq = a[0] == '-' && a[1] == '-' ? strchr(a, '=') : NULL;
		n = eq ? (size_t)(eq - a) : strlen(a);
#define IS(opt) (n == strlen(opt) && !strncmp(a, opt, n))
		if (IS("-h") || IS("--help")) {
			help();
			exit(EXIT_OK);
		} else if (IS("-k") || IS("--kernel")) {
			VALUE();
			T->kernel = val;
		} else if (IS("--space")) {
			VALUE();
			if (parse_space(T, val))
				return EXIT_USAGE;
		} else if (IS("--search")) {
			VALUE();
			search = val;
		} else if (IS("--backend")) {
			VALUE();
			backend = val;
		} else if (IS("--json")) {
			VALUE();
			T->json = val;
		} else if (IS("--table")) {
			VALUE();
			T->table = val;
		} else if (IS("--devices")) {
			VALUE();
			T->o.devices = val;
		} else if (IS("--plot")) {
			VALUE();
			T->plot = val;
		} else if (IS("--no-cache")) {
			T->o.cache = 0;
		} else if (IS("--prior")) {
			T->o.prior = 1;
		} else if (IS("--confirm") || IS("--no-confirm")) {
			T->o.confirm = IS("--confirm") ? 1 : -1;
		} else if (IS("--effort")) {
			VALUE();
			if (!strcmp(val, "quick"))
				T->o.effort = TLX_TUNE_EFFORT_QUICK;
			else if (!strcmp(val, "default"))
				T->o.effort = TLX_TUNE_EFFORT_DEFAULT;
			else if (!strcmp(val, "full"))
				T->o.effort = TLX_TUNE_EFFORT_FULL;
			else
				return usage_error("--effort '%s': expected quick, "
						   "default or full", val);
		} else if (IS("--seed") || IS("--max-evals") || IS("--repeats") ||
			   IS("--size") || IS("--elems") || IS("--jobs") ||
			   IS("--finalists") || IS("--rounds") || IS("--initial") ||
			   !strncmp(a, "-j", 2)) {
			if (!strncmp(a, "-j", 2)) {  /* -j N, -jN */
				if (a[2])
					val = a + 2;
				else
					VALUE();
				a = "--jobs";
				n = 6;
			} else {
				VALUE();
			}
			if (int_option(a, (int)n, val, &v))
				return EXIT_USAGE;
			if (IS("--seed"))
				T->o.seed = (uint64_t)v;
			else if (IS("--max-evals"))
				T->o.max_evals = (int)v;
			else if (IS("--repeats"))
				T->o.repeats = (int)v;
			else if (IS("--size"))
				T->o.size = v;
			else if (IS("--jobs"))
				T->o.jobs = (int)v;
			else if (IS("--finalists"))
				T->o.finalists = v ? (int)v : -1;
			else if (IS("--rounds"))
				T->o.rounds = (int)v;
			else if (IS("--initial"))
				T->o.initial = (int)v;
			else
				T->o.elems = v;
		} else if (IS("--arg")) {
			VALUE();
			if (!strchr(val, '=') || *val == '=')
				return usage_error("--arg '%s': expected "
						   "NAME=VALUE (e.g. --arg "
						   "cols=1024)", val);
			if (T->nsargs == MAXD)
				return usage_error("--arg: at most %d", MAXD);
			T->sargs[T->nsargs++] = val;
		} else if (IS("--budget") || IS("--timeout")) {
			double d;

			VALUE();
			if (parse_num(val, &d) || (IS("--timeout") && d <= 0))
				return usage_error("%.*s '%s': expected a "
						   "positive number of seconds",
						   (int)n, a, val);
			*(IS("--budget") ? &T->o.budget : &T->o.timeout) = d;
		} else if (IS("--repeat-ms")) {
			double d;

			VALUE();
			if (parse_num(val, &d) || d <= 0 || d > 1e6)
				return usage_error("--repeat-ms '%s': expected a "
						   "positive number of "
						   "milliseconds", val);
			T->o.repeat_ms = d;
		} else if (!strncmp(a, "-D", 2)) {
			val = a[2] ? a + 2 : i + 1 < argc ? argv[++i] : NULL;
			if (!val || !strchr(val, '=') || *val == '=')
				return usage_error("-D: expected NAME=VALUE");
			if (T->ndefs == MAXD)
				return usage_error("-D: at most %d", MAXD);
			T->defs[T->ndefs++] = val;
		} else if (a[0] == '-' && a[1]) {
			return usage_error("unknown option '%s'", a);
		} else if (T->input) {
			return usage_error("more than one input file ('%s', "
					   "'%s')", T->input, a);
		} else {
			T->input = a;
		}
#undef IS
#undef VALUE
	}
	if (!T->input)
		return usage_error("no input file (tlx-tune KERNEL.tlx -k "
				   "NAME --space NAME=V,...)");
	if (!T->kernel)
		return usage_error("no kernel: name it with -k NAME");
	if (!strcmp(search, "lfbo"))
		T->o.search = TLX_TUNE_LFBO;
	else if (!strcmp(search, "exhaustive"))
		T->o.search = TLX_TUNE_EXHAUSTIVE;
	else if (!strcmp(search, "random"))
		T->o.search = TLX_TUNE_RANDOM;
	else
		return usage_error("--search '%s': expected lfbo, exhaustive "
				   "or random", search);
	if (!strcmp(backend, "sim"))
		T->o.backend = TLX_TUNE_SIM;
	else if (!strcmp(backend, "cuda"))
		T->o.backend = TLX_TUNE_CUDA;
	else if (!strcmp(backend, "synthetic"))
		T->o.backend = TLX_TUNE_SYNTHETIC;
	else
		return usage_error("--backend '%s': expected sim, cuda or "
				   "synthetic", backend);
	for (int d = 0; d < T->ndefs; d++)
		if (find_param(T, T->defs[d], strcspn(T->defs[d], "=")) >= 0)
			return usage_error("-D %s: the parameter is also a "
					   "--space; give it one way", T->defs[d]);
	return EXIT_OK;
}

/* ---- main -------------------------------------------------------------- */

static int
read_input(Cli *T)
{
	FILE *f = fopen(T->input, "rb");
	size_t cap = 1 << 16, n;

	if (!f) {
		fprintf(stderr, "tlx-tune: error: cannot read '%s': %s\n",
			T->input, strerror(errno));
		return EXIT_IO;
	}
	T->src = malloc(cap);
	while (T->src && (n = fread(T->src + T->srclen, 1,
				    cap - T->srclen, f)) > 0) {
		T->srclen += n;
		if (T->srclen == cap) {
			char *ns = realloc(T->src, cap *= 2);

			if (!ns)
				free(T->src);
			T->src = ns;
		}
	}
	if (!T->src || ferror(f)) {
		fclose(f);
		fprintf(stderr, "tlx-tune: error: cannot read '%s'\n",
			T->input);
		return EXIT_IO;
	}
	fclose(f);
	return EXIT_OK;
}

static int
is_defined(const Cli *C, const char *name)
{
	size_t n = strlen(name);

	for (int d = 0; d < C->ndefs; d++)
		if (strcspn(C->defs[d], "=") == n && !strncmp(C->defs[d], name, n))
			return 1;
	return 0;
}

/* The kernel's tune(...): its parameters that neither --space nor -D
 * gives join C's space after the --space ones.  (Its constraints apply
 * in the session, tlx_tune_run.)  A mistake in it is an error only when
 * there is no --space; else the default configuration says why. */
static int
source_space(Cli *C)
{
	tlx_options o = { 0 };
	tlx_tune_space *ts = NULL;
	tlx_ctx *ctx;
	int n = 0, rc;

	o.name = C->input;
	o.defines = C->defs;
	o.ndefines = C->ndefs;
	if (tlx_ctx_create(NULL, NULL, &ctx)) {
		fprintf(stderr, "tlx-tune: error: out of memory\n");
		return EXIT_FAIL;
	}
	rc = tlx_tune_space_create(ctx, C->src, C->srclen, &o, C->kernel, &ts);
	if (rc && !C->np)
		fprintf(stderr, "tlx-tune: error: the tuning space of '%s':\n%s",
			C->kernel, tlx_errmsg(ctx));
	tlx_ctx_destroy(ctx);
	if (rc)
		return C->np ? EXIT_OK : EXIT_FAIL;
	tlx_tune_space_num_params(ts, &n);
	for (int i = 0; i < n; i++) {
		const char *name;
		const long long *v;
		int nv;
		Param *p;

		tlx_tune_space_get_param(ts, i, &name, &v, &nv);
		if (is_defined(C, name) || find_param(C, name, strlen(name)) >= 0)
			continue;
		if (C->np == MAXP || nv > MAXV || strlen(name) >= sizeof p->name) {
			tlx_tune_space_destroy(ts);
			return usage_error("the tune(...) of '%s': at most %d "
					   "parameters of %d values", C->kernel,
					   MAXP, MAXV);
		}
		p = &C->params[C->np++];
		strcpy(p->name, name);
		for (p->n = 0; p->n < nv; p->n++)
			p->v[p->n] = v[p->n];
		qsort(p->v, p->n, sizeof *p->v, cmp_i64);
	}
	tlx_tune_space_destroy(ts);
	if (!C->np)
		return usage_error("no space: kernel '%s' declares no tune(...); "
				   "give --space NAME=V1,V2,...", C->kernel);
	return EXIT_OK;
}

/* The space: the --space parameters, then the kernel's tune(...) ones
 * (source_space); the one place where parameters reach the session. */
static int
build_space(Cli *C, tlx_tune *t)
{
	for (int i = 0; i < C->np; i++)
		if (tlx_tune_add_param(t, C->params[i].name, C->params[i].v,
				       C->params[i].n))
			return -1;
	return 0;
}

/* The summary of the static checks on stderr, and the winner against
 * the default configuration where both were re-timed together. */
static void
summary(tlx_tune *t)
{
	int evals = 0, rej[3];
	double s, best, dflt;

	tlx_tune_num_evals(t, &evals);
	tlx_tune_get_checks(t, NULL, rej, &s);
	fprintf(stderr, "tlx-tune: %d evaluated, %d rejected before compiling "
		"(%d by constraints, %d by the compiler's checks, %.3f s)\n",
		evals, rej[0] + rej[1] + rej[2], rej[TLX_TUNE_BY_CONSTRAINT],
		rej[TLX_TUNE_BY_COMPILER], s);
	if (tlx_tune_get_best(t, NULL, &best) == TLX_OK &&
	    tlx_tune_get_default(t, NULL, &dflt) == TLX_OK &&
	    isfinite(dflt) && best > 0)
		fprintf(stderr, "tlx-tune: the winner is %.2fx as fast as the "
			"default configuration (timed together)\n", dflt / best);
}

static int
setup(Cli *C, tlx_tune *t)
{
	if (build_space(C, t))
		return -1;
	for (int i = 0; i < C->ndefs; i++)
		if (tlx_tune_add_define(t, C->defs[i]))
			return -1;
	for (int i = 0; i < C->nsargs; i++)
		if (tlx_tune_add_arg(t, C->sargs[i]))
			return -1;
	return tlx_tune_set_opts(t, &C->o) ? -1 : 0;
}

int
main(int argc, char **argv)
{
	Cli C = { 0 };
	tlx_tune *t = NULL;
	int64_t best[MAXP];
	int rc;

	if (argc < 2)
		return usage_error("no input file (tlx-tune KERNEL.tlx -k "
				   "NAME --space NAME=V,...)");
	if ((rc = parse_args(&C, argc, argv)) || (rc = read_input(&C)) ||
	    (rc = source_space(&C))) {
		free(C.src);
		return rc;
	}
	rc = tlx_tune_create(C.input, C.src, C.srclen, C.kernel, &t);
	if (rc == TLX_OK && setup(&C, t)) {
		rc = usage_error("%s", tlx_tune_errmsg(t));
		goto out;
	}
	if (rc == TLX_OK)
		rc = tlx_tune_run(t);
	if (rc == TLX_MISUSE) {
		rc = usage_error("%s", tlx_tune_errmsg(t));
		goto out;
	}
	if (rc) {
		fprintf(stderr, "tlx-tune: error: %s\n",
			rc == TLX_NOMEM ? "out of memory" : tlx_tune_errmsg(t));
		rc = EXIT_FAIL;
		goto out;
	}
	summary(t);
	if (C.json && tlx_tune_write_json(t, C.json))
		rc = EXIT_IO;
	if (C.plot && tlx_tune_write_svg(t, C.plot))
		rc = EXIT_IO;
	if (C.table && tlx_tune_get_best(t, NULL, NULL) == TLX_OK &&
	    tlx_tune_write_table(t, C.table))
		rc = EXIT_IO;
	if (rc)
		fprintf(stderr, "tlx-tune: error: %s\n", tlx_tune_errmsg(t));
	if (tlx_tune_get_best(t, best, NULL)) {
		fprintf(stderr, "tlx-tune: error: %s\n", tlx_tune_errmsg(t));
		rc = rc ? rc : EXIT_FAIL;
	} else {
		for (int i = 0; i < C.np; i++) {
			const char *name;

			tlx_tune_get_param_name(t, i, &name);
			printf("%s-D %s=%lld", i ? " " : "", name,
			       (long long)best[i]);
		}
		printf("\n");
	}
out:
	tlx_tune_destroy(t);
	free(C.src);
	return rc;
}
