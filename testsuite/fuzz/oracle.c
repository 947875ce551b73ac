/*
 * oracle.c: the middle steps of a differential oracle --
 *
 *   fz_inputs    the input bytes of a program, from its data seed;
 *   fz_run       an image on a tlxrt device with those inputs, outputs
 *                poisoned first and a poisoned guard after each --
 *
 * plus the "//!" lines (fz_meta_parse), the classes of findings and
 * fz_check, which runs an oracle in a child process so that a crash, an
 * abort, a sanitizer report or a hang becomes a finding instead of the
 * end of the campaign.  The first step, fz_compile, and the oracles made
 * of all four are compile.c's, the last, fz_compare, compare.c's; this
 * file and compare.c link without libtlx and LLVM.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gen.h"

enum { GUARD = 64, POISON = 0xa5 };

double
fz_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

char *
fz_read_file(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	char *s;
	long len;

	*n = 0;
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	fseek(f, 0, SEEK_SET);
	if (len < 0 || !(s = malloc((size_t)len + 1))) {
		fclose(f);
		return NULL;
	}
	*n = fread(s, 1, (size_t)len, f);
	s[*n] = 0;
	fclose(f);
	return s;
}

const char *const fz_kind_names[] = {
	"ok", "compile", "launch", "mismatch", "crash", "timeout", "setup",
};

void
fz_fail(FzResult *r, FzKind k, const char *f, ...)
{
	va_list ap;

	r->kind = k;
	va_start(ap, f);
	vsnprintf(r->msg, sizeof r->msg, f, ap);
	va_end(ap);
	fz_classify(r);
}

/* Puts "what: " before r's message (which run failed). */
void
fz_prefix(FzResult *r, const char *what)
{
	char msg[sizeof r->msg];

	snprintf(msg, sizeof msg, "%s", r->msg);
	fz_fail(r, r->kind, "%s: %s", what, msg);
}

/* ---- classes ---------------------------------------------------------------- */

/* Copies the line of s that best names the failure: a compiler bug, a
 * sanitizer's report, an error; else the first line. */
static void
key_line(const char *s, char *out, size_t n_)
{
	static const char *const keys[] = {
		"internal compiler error", "ERROR: AddressSanitizer",
		"ERROR: LeakSanitizer", "runtime error:", "LLVM ERROR",
		"Assertion", "error:", NULL,
	};
	const char *p = NULL, *e, *v;
	int i;

	/* the verifier after a pass: its first complaint names the bug */
	if ((v = strstr(s, "does not verify after pass")) &&
	    (p = strstr(v, "error: ")) && (e = strchr(v, '\n')) && p > e) {
		const char *pe = strchr(p, '\n');
		int n = snprintf(out, n_, "%.*s: ", (int)(e - v), v);

		if (n > 0 && (size_t)n < n_)
			snprintf(out + n, n_ - (size_t)n, "%.*s",
				 (int)(pe ? (size_t)(pe - p) : strlen(p)), p);
		return;
	}
	p = NULL;
	for (i = 0; keys[i] && !p; i++)
		p = strstr(s, keys[i]);
	if (!p)
		p = s;
	while (p > s && p[-1] != '\n')
		p--;
	e = strchr(p, '\n');
	snprintf(out, n_, "%.*s", (int)(e ? (size_t)(e - p) : strlen(p)), p);
}

/* Blanks numbers, and quoted names and types with digits in them (op and
 * pass names stay): "gen.tlx:#:#: error: unknown name ?". */
void
fz_classify(FzResult *r)
{
	char line[512], *o = r->cls, *end = r->cls + sizeof r->cls - 1;
	const char *p;
	int n;

	if (r->kind == FZ_OK || r->kind == FZ_MISMATCH ||
	    r->kind == FZ_TIMEOUT) {
		snprintf(r->cls, sizeof r->cls, "%s", fz_kind_names[r->kind]);
		return;
	}
	key_line(r->msg, line, sizeof line);
	n = snprintf(o, (size_t)(end - o), "%s: ", fz_kind_names[r->kind]);
	o += n > 0 && n < end - o ? n : 0;
	p = line;
	if (p[0] == 'O' && p[1] >= '0' && p[1] <= '3' && p[2] == ':') {
		memcpy(o, p, 3);  /* the stage, "O3:" */
		o += 3;
		p += 3;
	}
	for (; *p && o < end;) {
		if (*p == '\'') {  /* a quoted name or type, but not an op's */
			const char *t = strchr(p + 1, '\''), *q;

			for (q = p + 1; t && q < t && !(*q >= '0' && *q <= '9'); q++)
				;
			if (t && q < t) {
				*o++ = '?';
				p = t + 1;
				continue;
			}
			while (t && p <= t && o < end)  /* kept whole */
				*o++ = *p++;
			if (t)
				continue;
		}
		if ((*p >= '0' && *p <= '9') ||
		    (*p == 'x' && p > line && p[-1] == '0')) {
			while ((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f') ||
			       *p == 'x')
				p++;
			*o++ = '#';
			continue;
		}
		*o++ = *p++;
	}
	*o = 0;
}

/* ---- metadata -------------------------------------------------------------- */

static int
type_of(const char *name)
{
	int t;

	for (t = TLXRT_I1; t <= TLXRT_F64; t++)
		if (strcmp(tlxrt_type_name(t), name) == 0)
			return t;
	return 0;
}

/* "RxC" (or "N"): the shape of a tensor argument, which must hold no
 * more than its n elements. */
static bool
tensor_shape(FzArg *x, const char *s)
{
	char *e;
	long long v;
	size_t total = 1;

	if (x->role == FZ_SCALAR)
		return false;
	for (x->rank = 0; x->rank < 2; s = e + 1) {
		v = strtoll(s, &e, 10);
		if (e == s || v < 1 || v > (1ll << 31))
			return false;
		x->shape[x->rank++] = v;
		total *= (size_t)v;
		if (*e != 'x')
			break;
	}
	return !*e && total <= x->n;
}

bool
fz_meta_parse(const char *src, FzMeta *m, char *err, size_t errn)
{
	const char *p = src;
	int lno = 0;

	memset(m, 0, sizeof *m);
	for (; *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : p + strlen(p)) {
		char l[256], a[32], b[64], c[64], d[64], sh[64] = "";
		const char *e = strchr(p, '\n');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		FzArg *x;

		lno++;
		if (n < 4 || strncmp(p, "//! ", 4) != 0)
			continue;
		snprintf(l, sizeof l, "%.*s", (int)(n < 255 ? n : 255), p + 4);
		if (sscanf(l, "gen seed=%llu", (unsigned long long *)&m->seed) == 1)
			continue;
		if (sscanf(l, "data %llx", (unsigned long long *)&m->data) == 1)
			continue;
		if (sscanf(l, "arg %31s %63s %63s %63s tensor %63s", a, b, c,
			   d, sh) < 4 ||
		    m->nargs == FZ_MAX_ARGS) {
			snprintf(err, errn, "line %d: bad '//!' line: %s", lno, l);
			return false;
		}
		x = &m->args[m->nargs++];
		snprintf(x->name, sizeof x->name, "%s", a);
		x->role = !strcmp(b, "in") ? FZ_IN : !strcmp(b, "out") ? FZ_OUT
			: !strcmp(b, "inout") ? FZ_INOUT : FZ_SCALAR;
		if (!(x->type = type_of(c)) ||
		    (x->role == FZ_SCALAR && strcmp(b, "scalar") != 0)) {
			snprintf(err, errn, "line %d: bad argument: %s", lno, l);
			return false;
		}
		if (x->role != FZ_SCALAR)
			x->n = (size_t)strtoull(d, NULL, 0);
		if (*sh && !tensor_shape(x, sh)) {
			snprintf(err, errn, "line %d: bad tensor shape: %s",
				 lno, l);
			return false;
		}
		else if (x->type == TLXRT_F32 || x->type == TLXRT_F64)
			x->f = strtod(d, NULL);
		else if (x->type == TLXRT_U64)
			x->i = (int64_t)strtoull(d, NULL, 0);
		else
			x->i = strtoll(d, NULL, 0);
	}
	return true;
}

/* ---- images ---------------------------------------------------------------- */

void
fz_image_free(FzImage *img)
{
	free(img->data);
	free(img->ir);
	memset(img, 0, sizeof *img);
}

/* ---- inputs ---------------------------------------------------------------- */

void
fz_data_free(FzData *d)
{
	int i;

	for (i = 0; i < d->nargs; i++)
		free(d->buf[i]);
	memset(d, 0, sizeof *d);
}

static uint64_t
next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* A float of `eb` exponent and `mb` mantissa bits: mostly moderate
 * values with short mantissas (sums of them are often exact), some
 * specials (zeros, infinities, NaN, the largest, subnormals), some
 * arbitrary bit patterns. */
static uint64_t
float_bits(uint64_t *s, int eb, int mb)
{
	uint64_t r = next(s), sign = (r >> 63) << (eb + mb), bias = (1ull << (eb - 1)) - 1;
	uint64_t emax = (1ull << eb) - 1, mant, e;
	int k = (int)(r % 100), keep;

	if (k < 4)
		return next(s) & ((sign << 1) - 1);
	if (k < 14) {
		switch (next(s) % 8) {
		case 0: return sign;                                   /* +-0 */
		case 1: return sign | (bias << mb);                    /* +-1 */
		case 2: return sign | (emax << mb);                    /* inf */
		case 3: return (emax << mb) | (1ull << (mb - 1));      /* NaN */
		case 4: return sign | ((emax - 1) << mb) | ((1ull << mb) - 1);
		case 5: return sign | 1;                               /* tiny */
		case 6: return sign | (1ull << mb);                    /* min normal */
		default: return sign | ((bias + 10) << mb);
		}
	}
	e = bias - 4 + next(s) % 8;
	keep = (int)(next(s) % (uint64_t)(mb + 1));
	mant = next(s) & ((1ull << mb) - 1);
	mant &= ~((1ull << (mb - keep)) - 1);
	return sign | (e << mb) | mant;
}

static uint64_t
int_bits(uint64_t *s, int bits, bool uns)
{
	uint64_t r = next(s), mask = bits == 64 ? ~0ull : (1ull << bits) - 1;
	int k = (int)(r % 100);

	if (k < 40)
		return (uint64_t)((int64_t)(next(s) % 33) - (uns ? 0 : 16)) & mask;
	if (k < 70)
		return next(s) & mask;
	if (k < 90) {
		switch (next(s) % 5) {
		case 0: return 0;
		case 1: return 1;
		case 2: return mask;                           /* -1, the max */
		case 3: return mask >> 1;                      /* INT_MAX */
		default: return (mask >> 1) + 1;               /* INT_MIN */
		}
	}
	return (next(s) % 4096) & mask;
}

static void
fill(int type, unsigned char *p, size_t n, uint64_t seed)
{
	int es = tlxrt_type_size(type);
	size_t i;

	for (i = 0; i < n; i++) {
		uint64_t v;

		switch (type) {
		case TLXRT_I1: v = next(&seed) & 1; break;
		case TLXRT_F16: v = float_bits(&seed, 5, 10); break;
		case TLXRT_BF16: v = float_bits(&seed, 8, 7); break;
		case TLXRT_F32: v = float_bits(&seed, 8, 23); break;
		case TLXRT_F64: v = float_bits(&seed, 11, 52); break;
		case TLXRT_F8E4M3:
		case TLXRT_F8E5M2: v = next(&seed); break;
		default:
			v = int_bits(&seed, es * 8, type >= TLXRT_U8 &&
				     type <= TLXRT_U64);
			break;
		}
		memcpy(p + i * (size_t)es, &v, (size_t)es);  /* little endian */
	}
}

static uint64_t
name_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;  /* FNV-1a */

	while (*s)
		h = (h ^ (unsigned char)*s++) * 0x100000001b3ull;
	return h;
}

void
fz_inputs(const FzMeta *m, FzData *in)
{
	int i;

	memset(in, 0, sizeof *in);
	in->nargs = m->nargs;
	for (i = 0; i < m->nargs; i++) {
		const FzArg *a = &m->args[i];

		if (a->role != FZ_IN && a->role != FZ_INOUT)
			continue;
		in->bytes[i] = a->n * (size_t)tlxrt_type_size(a->type);
		in->buf[i] = malloc(in->bytes[i] ? in->bytes[i] : 1);
		/* seeded by the name, so that the reducer may drop parameters */
		if (in->buf[i])
			fill(a->type, in->buf[i], a->n,
			     m->data ^ name_hash(a->name));
	}
}

/* ---- run ---------------------------------------------------------------------- */

static tlxrt_arg
scalar_arg(const FzArg *a)
{
	switch (a->type) {
	case TLXRT_I64: return tlxrt_arg_i64(a->i);
	case TLXRT_U32: return tlxrt_arg_u32((uint32_t)a->i);
	case TLXRT_U64: return tlxrt_arg_u64((uint64_t)a->i);
	case TLXRT_F32: return tlxrt_arg_f32((float)a->f);
	case TLXRT_F64: return tlxrt_arg_f64(a->f);
	default: return tlxrt_arg_i32((int32_t)a->i);
	}
}

bool
fz_run(tlxrt_device *dev, const FzImage *img, const FzMeta *m,
       const FzData *in, FzData *out, FzResult *r)
{
	tlxrt_module *mod = NULL;
	tlxrt_kernel *k;
	tlxrt_kernel_info info;
	tlxrt_arg args[FZ_MAX_ARGS];
	tlxrt_ptr dptr[FZ_MAX_ARGS] = { 0 };
	size_t total[FZ_MAX_ARGS] = { 0 };
	bool ok = false;
	int i, rc;

	memset(out, 0, sizeof *out);
	out->nargs = m->nargs;
#define RT(call, what)                                                     \
	do {                                                               \
		if ((rc = (call)) != TLXRT_OK) {                           \
			fz_fail(r, FZ_LAUNCH, "%s: %s", what,              \
				tlxrt_errmsg(dev));                        \
			goto done;                                         \
		}                                                          \
	} while (0)
	RT(tlxrt_module_load(dev, img->data, img->size, &mod), "load");
	RT(tlxrt_module_get_kernel(mod, 0, &k), "kernel");
	RT(tlxrt_kernel_get_info(k, &info), "kernel info");
	if (info.num_params != m->nargs) {
		fz_fail(r, FZ_SETUP, "the kernel has %d parameters, the '//!' "
			"lines %d", info.num_params, m->nargs);
		goto done;
	}
	for (i = 0; i < m->nargs; i++) {
		const FzArg *a = &m->args[i];
		size_t bytes = a->n * (size_t)tlxrt_type_size(a->type);

		if (a->role == FZ_SCALAR) {
			args[i] = scalar_arg(a);
			continue;
		}
		/* outputs get a guard after them, inputs none: the simulator
		 * then reports any read past an input's end */
		total[i] = bytes + (a->role == FZ_OUT ? GUARD : 0);
		RT(tlxrt_malloc(dev, total[i] ? total[i] : 1, &dptr[i]), "malloc");
		if (a->role == FZ_OUT)
			RT(tlxrt_memset(dev, dptr[i], POISON, total[i]), "memset");
		else if (bytes)
			RT(tlxrt_memcpy_htod(dev, dptr[i], in->buf[i], bytes),
			   "upload");
		args[i] = a->rank ? tlxrt_arg_tensor(dptr[i], a->type, a->rank,
						      a->shape, NULL)
				  : tlxrt_arg_ptr(dptr[i]);
	}
	RT(tlxrt_launch(k, NULL, args, m->nargs), "launch");
	RT(tlxrt_device_synchronize(dev), "synchronize");
	for (i = 0; i < m->nargs; i++) {
		const FzArg *a = &m->args[i];
		size_t bytes = a->n * (size_t)tlxrt_type_size(a->type), j;

		if (a->role == FZ_SCALAR || a->role == FZ_IN)
			continue;
		out->buf[i] = malloc(total[i] ? total[i] : 1);
		out->bytes[i] = bytes;
		if (!out->buf[i]) {
			fz_fail(r, FZ_SETUP, "out of host memory");
			goto done;
		}
		RT(tlxrt_memcpy_dtoh(dev, out->buf[i], dptr[i], total[i]),
		   "download");
		for (j = bytes; j < total[i]; j++)
			if (out->buf[i][j] != POISON) {
				fz_fail(r, FZ_LAUNCH, "the kernel wrote past "
					"'%s' (byte %zu after its end)",
					a->name, j - bytes);
				goto done;
			}
	}
	ok = true;
done:
#undef RT
	for (i = 0; i < m->nargs; i++)
		if (dptr[i])
			tlxrt_free(dev, dptr[i]);
	tlxrt_module_unload(mod);
	return ok;
}

/* ---- isolation ------------------------------------------------------------------- */

static void
check_here(const FzOracle *o, const char *src, size_t len,
	   const FzCheckOpts *co, FzResult *r)
{
	FzMeta m;
	char err[256];

	memset(r, 0, sizeof *r);
	if (!fz_meta_parse(src, &m, err, sizeof err)) {
		fz_fail(r, FZ_SETUP, "%s", err);
		return;
	}
	o->check(src, len, &m, co, r);
}

/* What the child wrote to stderr, into buf (n bytes): all of it, or its
 * first and last n/2 - 8 bytes (a compiler bug's IR dump is long; the
 * verifier's complaint comes first, the abort's line last). */
static void
read_report(FILE *f, char *buf, size_t n)
{
	size_t half = n / 2 - 8, got;
	long size;

	fseek(f, 0, SEEK_END);
	size = ftell(f);
	fseek(f, 0, SEEK_SET);
	if (size < 0 || (size_t)size < n) {
		got = fread(buf, 1, n - 1, f);
		buf[got] = 0;
		return;
	}
	got = fread(buf, 1, half, f);
	memcpy(buf + got, "\n...\n", 5);
	got += 5;
	fseek(f, size - (long)half, SEEK_SET);
	got += fread(buf + got, 1, half, f);
	buf[got] = 0;
}

/* At most s seconds of CPU time (SIGXCPU past them). */
static void
limit_cpu(int s)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_CPU, &rl) != 0)
		return;
	if (rl.rlim_max == RLIM_INFINITY || (rlim_t)s < rl.rlim_max)
		rl.rlim_cur = (rlim_t)s;
	setrlimit(RLIMIT_CPU, &rl);
}

void
fz_check(const FzOracle *o, const char *src, size_t len,
	 const FzCheckOpts *co, FzResult *r)
{
	FILE *errf;
	int pfd[2], status;
	pid_t pid;
	size_t got = 0;
	ssize_t n;

	if (!co->fork_) {
		check_here(o, src, len, co, r);
		return;
	}
	memset(r, 0, sizeof *r);
	fflush(stdout);
	fflush(stderr);
	if (!(errf = tmpfile()) || pipe(pfd) != 0) {
		fz_fail(r, FZ_SETUP, "no pipe or temporary file: %s",
			strerror(errno));
		if (errf)
			fclose(errf);
		return;
	}
	if ((pid = fork()) < 0) {
		fz_fail(r, FZ_SETUP, "fork: %s", strerror(errno));
		fclose(errf);
		close(pfd[0]);
		close(pfd[1]);
		return;
	}
	if (pid == 0) {
		FzResult res;

		close(pfd[0]);
		dup2(fileno(errf), 2);
		/* the limit is CPU time, so that a loaded machine does not
		 * make timeouts; the alarm (four times as long) catches a
		 * child that waits without computing */
		limit_cpu(co->timeout_s);
		alarm((unsigned)co->timeout_s * 4);
		check_here(o, src, len, co, &res);
		if (write(pfd[1], &res, sizeof res) != (ssize_t)sizeof res)
			_exit(3);
		close(pfd[1]);
		fclose(errf);
		exit(0);  /* exit, not _exit: the leak checker runs */
	}
	close(pfd[1]);
	while (got < sizeof *r &&
	       (n = read(pfd[0], (char *)r + got, sizeof *r - got)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		got += (size_t)n;
	}
	close(pfd[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || got != sizeof *r) {
		char tail[1800];

		read_report(errf, tail, sizeof tail);
		if (WIFSIGNALED(status) && WTERMSIG(status) == SIGXCPU)
			fz_fail(r, FZ_TIMEOUT, "no result after %d s of CPU time",
				co->timeout_s);
		else if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
			fz_fail(r, FZ_TIMEOUT, "no result after %d s",
				co->timeout_s * 4);
		else if (WIFSIGNALED(status))
			fz_fail(r, FZ_CRASH, "signal %d (%s): %s", WTERMSIG(status),
				strsignal(WTERMSIG(status)), tail);
		else
			fz_fail(r, FZ_CRASH, "exit status %d: %s",
				WIFEXITED(status) ? WEXITSTATUS(status) : -1, tail);
		/* the class from the report, not from the signal */
		if (r->kind == FZ_CRASH && tail[0]) {
			FzResult t = { .kind = FZ_CRASH };

			snprintf(t.msg, sizeof t.msg, "%s", tail);
			fz_classify(&t);
			memcpy(r->cls, t.cls, sizeof r->cls);
		}
	}
	fclose(errf);
}
