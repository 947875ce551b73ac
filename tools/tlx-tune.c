/*
 * tlx-tune.c: the tuning driver (issue 17, first version).
 *
 *   tlx-tune KERNEL.tlx -k NAME --space 'BM=64,128,256' ... [options]
 *
 * searches the const parameters of one kernel over the space given on the
 * command line with tune/ (LFBO, exhaustive or random search).  Each
 * candidate is compiled through libtlx in a forked child with a timeout
 * (a compile error is the compiler's own static check rejecting the
 * configuration: "invalid"), then run through libtlxrt in a second forked
 * child with a timeout (a crash or hang kills the child only: "crash",
 * "timeout"), its output compared with the default configuration's
 * ("wrong"), and timed.  The best configuration goes to stdout as -D
 * flags; --json writes every evaluation.  docs/tuning.md has the details,
 * `tlx-tune --help` the options and exit codes.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tlx/tlx.h"
#include "tlx/tlxrt.h"
#include "tune/tune.h"

enum {
	EXIT_OK = 0,      /* a configuration was found */
	EXIT_FAIL = 1,    /* the default configuration failed, or every one */
	EXIT_USAGE = 2,   /* bad option or argument */
	EXIT_IO = 3,      /* cannot read the input or write the report */
};

enum { BK_SIM, BK_CUDA, BK_SYNTH };
enum { SK_LFBO, SK_EXHAUSTIVE, SK_RANDOM };

/* The outcome of one evaluation. */
enum { ST_OK, ST_INVALID, ST_CRASH, ST_TIMEOUT, ST_WRONG, ST_FAILED,
       ST_SKIPPED };
static const char *const status_name[] = {
	"ok", "invalid", "crash", "timeout", "wrong", "failed", "skipped",
};

#define MAXP 16      /* parameters of a space */
#define MAXV 64      /* values of a parameter */
#define MAXD 64      /* -D flags */
#define MAXSYN 64    /* planted items of the synthetic backend */

typedef struct Param {
	char name[64];
	int64_t v[MAXV];
	int n;
} Param;

/* A planted behaviour of the synthetic backend: KIND:NAME=VALUE. */
enum { SY_OPT, SY_CRASH, SY_SEGV, SY_HANG, SY_WRONG, SY_REJECT };
typedef struct Synth {
	int kind, param;
	int64_t value;
} Synth;

typedef struct Eval {
	int cfg[MAXP];
	int status;
	double cost;
} Eval;

typedef struct Tuner {
	const char *input, *kernel, *json;
	char *src;
	size_t srclen;
	Param params[MAXP];
	int np;
	int search, backend;
	uint64_t seed;
	int max_evals;
	double budget, timeout;
	int repeats;
	int64_t size;
	int64_t elems;       /* elements of each pointer buffer */
	const char *sargs[MAXD];  /* --arg NAME=VALUE */
	int nsargs;
	const char *defs[MAXD];
	int ndefs;
	Synth syn[MAXSYN];
	int nsyn;
	/* the default configuration's output */
	unsigned char *ref;
	size_t reflen;
	int ref_types[64];   /* element type of each pointer argument */
	size_t ref_bytes[64];
	int nref;
	Eval *evals;         /* every evaluation but the skipped ones */
	int nevals, capevals;
	int nskipped;        /* past --budget or --max-evals */
	double t0;
	int progress;
	const char *cost_unit;
} Tuner;

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

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
"usage: tlx-tune KERNEL.tlx -k NAME --space NAME=V1,V2,... [options]\n"
"\n"
"Searches the const parameters of kernel NAME over the space and prints\n"
"the best configuration as -D flags on stdout.\n"
"\n"
"options:\n"
"  -k, --kernel NAME     the kernel to tune (required)\n"
"  --space NAME=V,...    a const parameter and its integer values (repeat;\n"
"                        at least one)\n"
"  --search KIND         lfbo (default), exhaustive or random\n"
"  --seed N              the search's seed (default 1)\n"
"  --max-evals N         evaluate at most N configurations (0: no limit;\n"
"                        random search: default 100)\n"
"  --budget SECONDS      stop evaluating after this wall time (0: none)\n"
"  --backend KIND        sim (default), cuda or synthetic\n"
"  --timeout SECONDS     per compile and per run of a candidate (default 10)\n"
"  --repeats N           timed runs per candidate; the median counts\n"
"                        (default: 3 on sim, 10 on cuda)\n"
"  --size N              the problem size (default 4096), see below\n"
"  --elems N             elements of each buffer (default: --size)\n"
"  --arg NAME=VALUE      the value of scalar parameter NAME (repeat)\n"
"  -D NAME=VALUE         a fixed const override for every candidate\n"
"  --json FILE           write a report of every evaluation\n"
"  -h, --help            this text\n"
"\n"
"arguments: every pointer parameter gets a buffer of --elems elements of its\n"
"type filled with deterministic values, every scalar named by --arg that\n"
"value, every other integer scalar the value of --size, every other float\n"
"scalar 1.0; the grid comes from the kernel's grid\n"
"function.  All pointer buffers are compared with the default\n"
"configuration's after one launch (floats within a tolerance scaled by\n"
"magnitude, everything else bitwise).\n"
"\n"
"cost: cuda: milliseconds by events, median of repeats; sim: wall seconds\n"
"of the simulated launch, median of repeats (the simulator exposes no\n"
"cycle count); synthetic: the planted landscape's value.\n"
"\n"
"synthetic backend: TLX_TUNE_SYNTHETIC='KIND:NAME=V,...' plants behaviours;\n"
"KIND is opt (the optimum's value of NAME; cost = 1 + the sum over\n"
"parameters of the index distance to it, the first value when none),\n"
"crash (abort), segv (SIGSEGV), hang, wrong (a wrong result) or reject\n"
"(a compile rejection) for candidates with NAME=V.\n"
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
		{ "--elems", 1, 1 << 28 },
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
find_param(const Tuner *T, const char *name, size_t len)
{
	for (int i = 0; i < T->np; i++)
		if (strlen(T->params[i].name) == len &&
		    !memcmp(T->params[i].name, name, len))
			return i;
	return -1;
}

static int
parse_space(Tuner *T, const char *s)
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
parse_synth(Tuner *T)
{
	static const char *const kinds[] = {
		"opt", "crash", "segv", "hang", "wrong", "reject",
	};
	const char *s = getenv("TLX_TUNE_SYNTHETIC");
	char item[128];

	for (const char *q = s; q && *q;) {
		size_t n = strcspn(q, ","), k;
		char *colon, *eq;
		Synth *y;

		if (n >= sizeof item || T->nsyn == MAXSYN)
			return usage_error("TLX_TUNE_SYNTHETIC: too long");
		memcpy(item, q, n);
		item[n] = 0;
		q += n + !!q[n];
		colon = strchr(item, ':');
		eq = colon ? strchr(colon, '=') : NULL;
		if (!eq)
			return usage_error("TLX_TUNE_SYNTHETIC: '%s': expected "
					   "KIND:NAME=VALUE", item);
		*colon = 0;
		for (k = 0; k < 6 && strcmp(item, kinds[k]); k++)
			;
		if (k == 6)
			return usage_error("TLX_TUNE_SYNTHETIC: unknown kind "
					   "'%s' (opt, crash, segv, hang, wrong, "
					   "reject)", item);
		y = &T->syn[T->nsyn++];
		y->kind = (int)k;
		y->param = find_param(T, colon + 1, eq - colon - 1);
		if (y->param < 0)
			return usage_error("TLX_TUNE_SYNTHETIC: '%.*s' is not a "
					   "--space parameter",
					   (int)(eq - colon - 1), colon + 1);
		if (parse_int(eq + 1, &y->value))
			return usage_error("TLX_TUNE_SYNTHETIC: '%s' is not an "
					   "integer", eq + 1);
	}
	return EXIT_OK;
}

static int
parse_args(Tuner *T, int argc, char **argv)
{
	const char *search = "lfbo", *backend = "sim";
	int64_t v;

	T->seed = 1;
	T->timeout = 10;
	T->size = 4096;
	T->max_evals = -1;
	T->repeats = 0;
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
		} else if (IS("--seed") || IS("--max-evals") || IS("--repeats") ||
			   IS("--size") || IS("--elems")) {
			VALUE();
			if (int_option(a, (int)n, val, &v))
				return EXIT_USAGE;
			if (IS("--seed"))
				T->seed = (uint64_t)v;
			else if (IS("--max-evals"))
				T->max_evals = (int)v;
			else if (IS("--repeats"))
				T->repeats = (int)v;
			else if (IS("--size"))
				T->size = v;
			else
				T->elems = v;
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
			*(IS("--budget") ? &T->budget : &T->timeout) = d;
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
	if (!T->np)
		return usage_error("no space: give at least one --space "
				   "NAME=V1,V2,...");
	if (!strcmp(search, "lfbo"))
		T->search = SK_LFBO;
	else if (!strcmp(search, "exhaustive"))
		T->search = SK_EXHAUSTIVE;
	else if (!strcmp(search, "random"))
		T->search = SK_RANDOM;
	else
		return usage_error("--search '%s': expected lfbo, exhaustive "
				   "or random", search);
	if (!strcmp(backend, "sim"))
		T->backend = BK_SIM;
	else if (!strcmp(backend, "cuda"))
		T->backend = BK_CUDA;
	else if (!strcmp(backend, "synthetic"))
		T->backend = BK_SYNTH;
	else
		return usage_error("--backend '%s': expected sim, cuda or "
				   "synthetic", backend);
	for (int d = 0; d < T->ndefs; d++)
		if (find_param(T, T->defs[d], strcspn(T->defs[d], "=")) >= 0)
			return usage_error("-D %s: the parameter is also a "
					   "--space; give it one way", T->defs[d]);
	if (!T->repeats)
		T->repeats = T->backend == BK_CUDA ? 10 : 3;
	if (!T->elems)
		T->elems = T->size;
	T->cost_unit = T->backend == BK_CUDA  ? "ms (cuda events, median)"
		     : T->backend == BK_SIM   ? "s (wall time of the simulator, median)"
					      : "synthetic";
	return T->backend == BK_SYNTH ? parse_synth(T) : EXIT_OK;
}

/* ---- children ---------------------------------------------------------- */

static int
write_all(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n) {
		ssize_t w = write(fd, c, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

typedef int (*ChildFn)(Tuner *T, const int *cfg, int fd);

/* Runs fn in a forked child that writes its result to a pipe; collects it
 * into *out (malloc'd), kills the child after T->timeout.  Returns
 * ST_OK (exit 0), ST_FAILED (exit 1: the child reported a failure),
 * ST_TIMEOUT, or ST_CRASH (a signal or another exit status). */
static int
run_child(Tuner *T, ChildFn fn, const int *cfg, unsigned char **out,
	  size_t *outlen)
{
	int fds[2], st, timed_out = 0;
	size_t len = 0, cap = 4096;
	unsigned char *buf = malloc(cap);
	double deadline = now() + T->timeout;
	pid_t pid;

	*out = NULL;
	*outlen = 0;
	if (!buf || pipe(fds)) {
		free(buf);
		return ST_FAILED;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		free(buf);
		return ST_FAILED;
	}
	if (!pid) {
		close(fds[0]);
		_exit(fn(T, cfg, fds[1]));
	}
	close(fds[1]);
	for (;;) {
		struct pollfd pfd = { fds[0], POLLIN, 0 };
		double left = deadline - now();
		ssize_t r;

		if (left <= 0) {
			timed_out = 1;
			break;
		}
		r = poll(&pfd, 1, (int)(left * 1000) + 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			continue;
		if (len == cap) {
			unsigned char *nb = realloc(buf, cap * 2);

			if (!nb)
				break;
			buf = nb;
			cap *= 2;
		}
		r = read(fds[0], buf + len, cap - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		len += (size_t)r;
	}
	close(fds[0]);
	if (timed_out)
		kill(pid, SIGKILL);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	*out = buf;
	*outlen = len;
	if (timed_out)
		return ST_TIMEOUT;
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return ST_OK;
	if (WIFEXITED(st) && WEXITSTATUS(st) == 1)
		return ST_FAILED;
	return ST_CRASH;
}

static int
synth_has(const Tuner *T, const int *cfg, int kind)
{
	if (!cfg)
		return 0;
	for (int i = 0; i < T->nsyn; i++)
		if (T->syn[i].kind == kind &&
		    T->params[T->syn[i].param].v[cfg[T->syn[i].param]] ==
			    T->syn[i].value)
			return 1;
	return 0;
}

/* The candidate's -D flags: the fixed ones, then the space's (cfg NULL:
 * the default configuration, the fixed ones alone).  Strings in store. */
static int
candidate_defines(const Tuner *T, const int *cfg, const char **defs,
		  char store[][96])
{
	int n = 0;

	for (int i = 0; i < T->ndefs; i++)
		defs[n++] = T->defs[i];
	for (int i = 0; cfg && i < T->np; i++) {
		snprintf(store[i], 96, "%s=%lld", T->params[i].name,
			 (long long)T->params[i].v[cfg[i]]);
		defs[n++] = store[i];
	}
	return n;
}

/* The compile child: writes the image.  Exit 1: the compiler rejected
 * the configuration (its diagnostics follow the image's place). */
static int
compile_child(Tuner *T, const int *cfg, int fd)
{
	const char *defs[MAXD + MAXP];
	char store[MAXP][96];
	tlx_options o = { 0 };
	tlx_ctx *ctx;
	tlx_module *m;
	const void *img;
	size_t size;
	int kind, rc;

	if (T->backend == BK_SYNTH)
		return synth_has(T, cfg, SY_REJECT) ? 1 : 0;
	o.name = T->input;
	o.emit = T->backend == BK_SIM ? TLX_EMIT_IR : TLX_EMIT_CUBIN;
	o.defines = defs;
	o.ndefines = candidate_defines(T, cfg, defs, store);
	if (tlx_ctx_create(NULL, NULL, &ctx))
		return 3;
	rc = tlx_compile(ctx, T->src, T->srclen, &o, &m);
	if (rc == TLX_COMPILE) {
		const char *msg = tlx_errmsg(ctx);

		write_all(fd, msg, strlen(msg));
		return 1;
	}
	if (rc || tlx_module_image(m, &img, &size, &kind) ||
	    write_all(fd, img, size))
		return 3;
	return 0;
}

static double
fill_value(int type, int64_t i, int p)
{
	if (type == TLXRT_F32 || type == TLXRT_F64 || type == TLXRT_F16 ||
	    type == TLXRT_BF16)
		return (double)((i * 37 + p * 11) % 101) / 64.0 - 0.75;
	return (double)((i * 7 + p * 3) % 13);
}

static void
store_value(unsigned char *dst, int type, double v)
{
	switch (type) {
	case TLXRT_F32: { float f = (float)v; memcpy(dst, &f, 4); break; }
	case TLXRT_F64: memcpy(dst, &v, 8); break;
	case TLXRT_BF16: {
		float f = (float)v;
		uint32_t u;

		memcpy(&u, &f, 4);
		u >>= 16;
		dst[0] = (unsigned char)u;
		dst[1] = (unsigned char)(u >> 8);
		break;
	}
	case TLXRT_F16: {
		/* the values above are multiples of 1/64 below 1: exact */
		float f = (float)v, a = fabsf(f);
		uint16_t h = f < 0 ? 0x8000 : 0;

		if (a > 0) {
			int e;
			float m = frexpf(a, &e); /* a = m * 2^e, m in [0.5,1) */

			h |= (uint16_t)(((e - 1 + 15) << 10) |
					((int)(m * 2048) & 0x3ff));
		}
		memcpy(dst, &h, 2);
		break;
	}
	default: {
		int64_t x = (int64_t)v;
		int sz = tlxrt_type_size(type);

		memcpy(dst, &x, sz > 8 ? 8 : (size_t)sz); /* little endian */
		break;
	}
	}
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The run child's failure: say why on stderr, exit 1. */
static int
run_fail(tlxrt_device *dev, const char *what)
{
	fprintf(stderr, "tlx-tune: %s: %s\n", what,
		dev ? tlxrt_errmsg(dev) : "cannot open the device");
	return 1;
}

/* The synthetic run: the planted failure, or the cost and whether the
 * output is wrong. */
static int
synth_run(Tuner *T, const int *cfg, int fd)
{
	double cost;
	unsigned char wrong = (unsigned char)synth_has(T, cfg, SY_WRONG);

	if (synth_has(T, cfg, SY_CRASH))
		abort();
	if (synth_has(T, cfg, SY_SEGV)) {
		signal(SIGSEGV, SIG_DFL);
		raise(SIGSEGV);
	}
	if (synth_has(T, cfg, SY_HANG))
		for (;;)
			pause();
	cost = 1;
	for (int i = 0; cfg && i < T->np; i++) {
		int opt = 0;

		for (int s = 0; s < T->nsyn; s++)
			if (T->syn[s].kind == SY_OPT &&
			    T->syn[s].param == i)
				for (int j = 0; j < T->params[i].n; j++)
					if (T->params[i].v[j] ==
					    T->syn[s].value)
						opt = j;
		cost += abs(cfg[i] - opt);
	}
	return write_all(fd, &cost, sizeof cost) ||
	       write_all(fd, &wrong, 1) ? 3 : 0;
}

/* A scalar argument: its --arg value, else --size (integers) or 1.0. */
static int
scalar_arg(const Tuner *T, const tlxrt_param_info *pi, tlxrt_arg *a)
{
	double f = pi->type == TLXRT_F32 || pi->type == TLXRT_F64 ? 1 : 0;
	int64_t x = T->size;
	int isf = f != 0;

	for (int j = 0; j < T->nsargs; j++) {
		const char *v = T->sargs[j], *eq = strchr(v, '=');
		char *end;

		if (strlen(pi->name) != (size_t)(eq - v) ||
		    strncmp(v, pi->name, (size_t)(eq - v)))
			continue;
		if (isf) {
			f = strtod(eq + 1, &end);
			if (end == eq + 1 || *end)
				goto bad;
		} else if (parse_int(eq + 1, &x)) {
			goto bad;
		}
	}
	switch (pi->type) {
	case TLXRT_F32: *a = tlxrt_arg_f32((float)f); break;
	case TLXRT_F64: *a = tlxrt_arg_f64(f); break;
	case TLXRT_I64: *a = tlxrt_arg_i64(x); break;
	case TLXRT_U32: *a = tlxrt_arg_u32((uint32_t)x); break;
	case TLXRT_U64: *a = tlxrt_arg_u64((uint64_t)x); break;
	default: *a = tlxrt_arg_i32((int32_t)x); break;
	}
	return 0;
bad:
	fprintf(stderr, "tlx-tune: error: --arg for '%s': expected %s\n",
		pi->name, isf ? "a number" : "an integer");
	return 1;
}

/* The run child: loads the image the compile child made (set by
 * evaluate() before the fork), launches once, times --repeats more
 * launches, and writes the cost (a double), then each pointer buffer (its
 * element type as an int32, then its bytes). */
static const unsigned char *child_image;
static size_t child_image_len;

static int
run_child_fn(Tuner *T, const int *cfg, int fd)
{
	tlxrt_device *dev = NULL;
	tlxrt_module *mod;
	tlxrt_kernel *k;
	tlxrt_kernel_info ki;
	tlxrt_arg args[64];
	tlxrt_ptr ptrs[64];
	int pty[64], np = 0;
	double times[1000], cost;
	char msg[256];

	if (T->backend == BK_SYNTH)
		return synth_run(T, cfg, fd);
	if (tlxrt_device_open_errmsg(T->backend == BK_SIM ? "sim" : "cuda",
				     &dev, msg, sizeof msg)) {
		fprintf(stderr, "tlx-tune: device: %s\n", msg);
		return 1;
	}
	if (tlxrt_module_load(dev, child_image, child_image_len, &mod))
		return run_fail(dev, "loading the module");
	if (tlxrt_kernel_get(mod, T->kernel, &k) ||
	    tlxrt_kernel_get_info(k, &ki))
		return run_fail(dev, "the kernel");
	if (ki.num_params > 64) {
		fprintf(stderr, "tlx-tune: more than 64 parameters\n");
		return 1;
	}
	for (int i = 0; i < ki.num_params; i++) {
		tlxrt_param_info pi;

		if (tlxrt_kernel_get_param(k, i, &pi))
			return run_fail(dev, "a parameter");
		if (pi.kind == TLXRT_PARAM_POINTER) {
			size_t esz = (size_t)tlxrt_type_size(pi.type);
			size_t bytes = esz * (size_t)T->elems;
			unsigned char *h = calloc(1, bytes);

			if (!h || tlxrt_malloc(dev, bytes, &ptrs[np]))
				return run_fail(dev, "allocating");
			for (int64_t e = 0; e < T->elems; e++)
				store_value(h + e * esz, pi.type,
					    fill_value(pi.type, e, np));
			if (tlxrt_memcpy_htod(dev, ptrs[np], h, bytes))
				return run_fail(dev, "copying");
			free(h);
			pty[np] = pi.type;
			args[i] = tlxrt_arg_ptr(ptrs[np++]);
		} else if (pi.kind == TLXRT_PARAM_SCALAR) {
			if (scalar_arg(T, &pi, &args[i]))
				return 1;
		} else {
			fprintf(stderr, "tlx-tune: parameter '%s': tensor "
				"parameters are not supported yet\n", pi.name);
			return 1;
		}
	}
	for (int j = 0; j < T->nsargs; j++) {
		size_t n = strcspn(T->sargs[j], "=");
		int found = 0;

		for (int i = 0; i < ki.num_params && !found; i++) {
			tlxrt_param_info pi;

			found = !tlxrt_kernel_get_param(k, i, &pi) &&
				pi.kind == TLXRT_PARAM_SCALAR &&
				strlen(pi.name) == n &&
				!strncmp(pi.name, T->sargs[j], n);
		}
		if (!found) {
			fprintf(stderr, "tlx-tune: error: --arg %s: kernel '%s' "
				"has no scalar parameter '%.*s'\n", T->sargs[j],
				T->kernel, (int)n, T->sargs[j]);
			return 1;
		}
	}
	/* one launch for the output, then the timed ones */
	if (tlxrt_launch(k, NULL, args, ki.num_params) ||
	    tlxrt_device_synchronize(dev))
		return run_fail(dev, "launch");
	{
		tlxrt_stream *s = NULL;
		tlxrt_event *e0 = NULL, *e1 = NULL;
		tlxrt_launch_config lc = { { 0, 0, 0 }, { 0, 0, 0 }, NULL };

		if (T->backend == BK_CUDA &&
		    (tlxrt_stream_create(dev, &s) ||
		     tlxrt_event_create(dev, &e0) ||
		     tlxrt_event_create(dev, &e1)))
			return run_fail(dev, "events");
		lc.stream = s;
		for (int r = 0; r < T->repeats; r++) {
			double t = now();
			float ms;

			if (s && tlxrt_event_record(e0, s))
				return run_fail(dev, "events");
			if (tlxrt_launch(k, &lc, args, ki.num_params))
				return run_fail(dev, "launch");
			if (s) {
				if (tlxrt_event_record(e1, s) ||
				    tlxrt_event_synchronize(e1) ||
				    tlxrt_event_elapsed_ms(e0, e1, &ms))
					return run_fail(dev, "events");
				times[r] = ms;
			} else {
				if (tlxrt_device_synchronize(dev))
					return run_fail(dev, "launch");
				times[r] = now() - t;
			}
		}
		qsort(times, (size_t)T->repeats, sizeof *times, cmp_double);
		cost = times[T->repeats / 2];
	}
	/* the outputs of the first launch were overwritten by the same
	 * kernel on the same inputs; a kernel that accumulates would differ,
	 * which the comparison then reports */
	if (write_all(fd, &cost, sizeof cost))
		return 3;
	for (int p = 0; p < np; p++) {
		size_t bytes = (size_t)tlxrt_type_size(pty[p]) * (size_t)T->elems;
		unsigned char *h = malloc(bytes);
		int32_t ty = pty[p];

		if (!h || tlxrt_memcpy_dtoh(dev, h, ptrs[p], bytes))
			return run_fail(dev, "copying back");
		if (write_all(fd, &ty, sizeof ty) || write_all(fd, h, bytes))
			return 3;
		free(h);
	}
	return 0;
}

/* ---- evaluation -------------------------------------------------------- */

static float
half_to_float(uint16_t h)
{
	int e = (h >> 10) & 0x1f, m = h & 0x3ff;
	float v = e == 0    ? ldexpf((float)m, -24)
		: e == 31 ? (m ? NAN : INFINITY)
			  : ldexpf((float)(m | 0x400), e - 25);

	return h & 0x8000 ? -v : v;
}

static double
load_float(const unsigned char *p, int type)
{
	float f;
	uint32_t u;
	uint16_t h;
	double d;

	switch (type) {
	case TLXRT_F32: memcpy(&f, p, 4); return f;
	case TLXRT_F64: memcpy(&d, p, 8); return d;
	case TLXRT_BF16:
		u = (uint32_t)(p[0] | p[1] << 8) << 16;
		memcpy(&f, &u, 4);
		return f;
	default:
		memcpy(&h, p, 2);
		return half_to_float(h);
	}
}

/* Does a candidate's output (after the cost) match the reference's?
 * Floats: |a - r| <= rtol * (|r| + the largest |r| of the buffer / 64)
 * (rtol 1e-5 for f32/f64, 1e-2 for f16/bf16), NaN matching NaN;
 * everything else (integers, fp8) bitwise. */
static int
output_matches(const Tuner *T, const unsigned char *out, size_t len)
{
	size_t off = 0;

	if (len != T->reflen)
		return 0;
	if (T->backend == BK_SYNTH)
		return !memcmp(out, T->ref, len);
	while (off < len) {
		int32_t ty;
		size_t esz, bytes;
		int isf;
		double rtol, big = 0;

		memcpy(&ty, T->ref + off, 4);
		off += 4;
		esz = (size_t)tlxrt_type_size(ty);
		bytes = esz * (size_t)T->elems;
		isf = ty == TLXRT_F32 || ty == TLXRT_F64 || ty == TLXRT_F16 ||
		      ty == TLXRT_BF16;
		if (!isf) {
			if (memcmp(out + off, T->ref + off, bytes))
				return 0;
			off += bytes;
			continue;
		}
		rtol = esz >= 4 ? 1e-5 : 1e-2;
		for (size_t e = 0; e < bytes; e += esz) {
			double r = fabs(load_float(T->ref + off + e, ty));

			if (r > big && isfinite(r))
				big = r;
		}
		for (size_t e = 0; e < bytes; e += esz) {
			double a = load_float(out + off + e, ty);
			double r = load_float(T->ref + off + e, ty);

			if (isnan(a) && isnan(r))
				continue;
			if (!(fabs(a - r) <= rtol * (fabs(r) + big / 64)) &&
			    a != r)
				return 0;
		}
		off += bytes;
	}
	return 1;
}

/* Compile and run one configuration (NULL: the default one). */
static int
evaluate(Tuner *T, const int *cfg, double *cost, unsigned char **out,
	 size_t *outlen, char **why)
{
	unsigned char *img;
	size_t imglen;
	int st;

	*out = NULL;
	*outlen = 0;
	*why = NULL;
	*cost = INFINITY;
	st = run_child(T, compile_child, cfg, &img, &imglen);
	if (st == ST_FAILED) {
		*why = realloc(img, imglen + 1);
		if (*why)
			(*why)[imglen] = 0;
		else
			free(img);
		return ST_INVALID;
	}
	if (st != ST_OK) {
		free(img);
		return st == ST_TIMEOUT ? ST_TIMEOUT : ST_FAILED;
	}
	child_image = img;
	child_image_len = imglen;
	st = run_child(T, run_child_fn, cfg, out, outlen);
	free(img);
	if (st == ST_OK && *outlen < sizeof(double))
		st = ST_FAILED;
	if (st == ST_OK)
		memcpy(cost, *out, sizeof *cost);
	return st;
}

static void
record(Tuner *T, const int *cfg, int st, double cost)
{
	Eval *e;

	if (T->nevals == T->capevals) {
		int cap = T->capevals ? 2 * T->capevals : 64;
		Eval *ne = realloc(T->evals, (size_t)cap * sizeof *ne);

		if (!ne)
			return;
		T->evals = ne;
		T->capevals = cap;
	}
	e = &T->evals[T->nevals++];
	memcpy(e->cfg, cfg, (size_t)T->np * sizeof *cfg);
	e->status = st;
	e->cost = cost;
}

static void
tune_eval(void *ud, const int *cfgs, int count, double *values)
{
	Tuner *T = ud;

	for (int c = 0; c < count; c++) {
		const int *cfg = cfgs + (size_t)c * T->np;
		unsigned char *out;
		size_t len;
		char *why;
		double cost = INFINITY;
		int st;

		if ((T->budget > 0 && now() - T->t0 > T->budget) ||
		    (T->max_evals > 0 && T->nevals >= T->max_evals)) {
			values[c] = INFINITY;
			T->nskipped++;
			continue;
		} else {
			st = evaluate(T, cfg, &cost, &out, &len, &why);
			if (st == ST_OK &&
			    !output_matches(T, out + sizeof(double),
					    len - sizeof(double)))
				st = ST_WRONG;
			free(out);
			free(why);
		}
		if (st != ST_OK)
			cost = INFINITY;
		values[c] = cost;
		record(T, cfg, st, cost);
		if (T->progress) {
			double best = INFINITY;

			for (int i = 0; i < T->nevals; i++)
				if (T->evals[i].cost < best)
					best = T->evals[i].cost;
			fprintf(stderr, "\r[%d evaluated, %.1fs] best %g   ",
				T->nevals, now() - T->t0, best);
		}
	}
}

/* ---- the report -------------------------------------------------------- */

static void
json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", *s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

static void
json_cfg(FILE *f, const Tuner *T, const int *cfg)
{
	fputc('{', f);
	for (int i = 0; i < T->np; i++) {
		fprintf(f, "%s", i ? ", " : "");
		json_str(f, T->params[i].name);
		fprintf(f, ": %lld", (long long)T->params[i].v[cfg[i]]);
	}
	fputc('}', f);
}

static int
write_json(const Tuner *T, const TuneResult *r, double wall)
{
	static const char *const sk[] = { "lfbo", "exhaustive", "random" };
	static const char *const bk[] = { "sim", "cuda", "synthetic" };
	FILE *f = fopen(T->json, "w");

	if (!f) {
		fprintf(stderr, "tlx-tune: error: cannot write '%s': %s\n",
			T->json, strerror(errno));
		return EXIT_IO;
	}
	fprintf(f, "{\n  \"input\": ");
	json_str(f, T->input);
	fprintf(f, ",\n  \"kernel\": ");
	json_str(f, T->kernel);
	fprintf(f, ",\n  \"search\": \"%s\",\n  \"backend\": \"%s\",\n"
		"  \"seed\": %llu,\n  \"cost_unit\": ",
		sk[T->search], bk[T->backend], (unsigned long long)T->seed);
	json_str(f, T->cost_unit);
	fprintf(f, ",\n  \"wall_s\": %.3f,\n  \"evaluated\": %d,\n"
		"  \"skipped\": %d,\n  \"best\": ", wall, T->nevals,
		T->nskipped);
	if (isfinite(r->value)) {
		fprintf(f, "{\"config\": ");
		json_cfg(f, T, r->best);
		fprintf(f, ", \"cost\": %.9g}", r->value);
	} else {
		fprintf(f, "null");
	}
	fprintf(f, ",\n  \"evaluations\": [");
	for (int i = 0; i < T->nevals; i++) {
		const Eval *e = &T->evals[i];

		fprintf(f, "%s\n    {\"config\": ", i ? "," : "");
		json_cfg(f, T, e->cfg);
		fprintf(f, ", \"status\": \"%s\", \"cost\": ",
			status_name[e->status]);
		if (isfinite(e->cost))
			fprintf(f, "%.9g}", e->cost);
		else
			fprintf(f, "null}");
	}
	fprintf(f, "\n  ]\n}\n");
	if (fclose(f)) {
		fprintf(stderr, "tlx-tune: error: cannot write '%s'\n", T->json);
		return EXIT_IO;
	}
	return EXIT_OK;
}

/* ---- main -------------------------------------------------------------- */

static int
read_input(Tuner *T)
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

/* The default configuration: its output is the reference. */
static int
run_reference(Tuner *T)
{
	unsigned char *out;
	size_t len;
	char *why;
	double cost;
	int st = evaluate(T, NULL, &cost, &out, &len, &why);

	if (st != ST_OK) {
		fprintf(stderr, "tlx-tune: error: the default configuration "
			"(without the space's overrides) failed: %s\n%s",
			status_name[st], why ? why : "");
		free(why);
		free(out);
		return EXIT_FAIL;
	}
	T->reflen = len - sizeof(double);
	T->ref = malloc(T->reflen + 1);
	if (T->ref)
		memcpy(T->ref, out + sizeof(double), T->reflen);
	free(out);
	return T->ref ? EXIT_OK : EXIT_FAIL;
}

int
main(int argc, char **argv)
{
	Tuner T = { 0 };
	TuneParam tp[MAXP];
	TuneSpace space = { tp, 0 };
	TuneResult r = { 0 };
	int rc;

	if (argc < 2)
		return usage_error("no input file (tlx-tune KERNEL.tlx -k "
				   "NAME --space NAME=V,...)");
	if ((rc = parse_args(&T, argc, argv)) || (rc = read_input(&T)))
		return rc;
	T.t0 = now();
	T.progress = isatty(2);
	if ((rc = run_reference(&T))) {
		free(T.src);
		return rc;
	}
	for (int i = 0; i < T.np; i++)
		tp[i] = (TuneParam){ T.params[i].name, T.params[i].v,
				     T.params[i].n };
	space.n = T.np;
	if (T.search == SK_LFBO) {
		TuneOpts o;

		tune_opts_default(&o);
		o.seed = T.seed;
		o.max_evals = T.max_evals > 0 ? T.max_evals : 0;
		rc = tune_lfbo(&space, tune_eval, NULL, &T, &o, &r);
	} else if (T.search == SK_EXHAUSTIVE) {
		rc = tune_exhaustive(&space, tune_eval, NULL, &T, &r);
	} else {
		rc = tune_random(&space, tune_eval, NULL, &T,
				 T.max_evals > 0 ? T.max_evals : 100, T.seed,
				 &r);
	}
	if (T.progress)
		fputc('\n', stderr);
	if (rc) {
		fprintf(stderr, "tlx-tune: error: out of memory\n");
		rc = EXIT_FAIL;
	} else {
		if (T.json)
			rc = write_json(&T, &r, now() - T.t0);
		if (!isfinite(r.value)) {
			fprintf(stderr, "tlx-tune: error: every candidate "
				"failed (%d evaluated)\n", T.nevals);
			rc = rc ? rc : EXIT_FAIL;
		} else {
			for (int i = 0; i < T.np; i++)
				printf("%s-D %s=%lld", i ? " " : "",
				       T.params[i].name,
				       (long long)T.params[i].v[r.best[i]]);
			printf("\n");
		}
	}
	tune_result_free(&r);
	free(T.evals);
	free(T.ref);
	free(T.src);
	return rc;
}
