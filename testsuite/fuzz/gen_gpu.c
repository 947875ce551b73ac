/*
 * gen_gpu: generated programs on the GPU against the simulator (the
 * third oracle of issue 19).  Each program is compiled by tlxc in a
 * subprocess (so that this program links no LLVM: it runs where the GPU
 * is, beside a tlxc linked statically), its image is run on the device
 * under test and, on the simulator, the IR the image embeds, with the
 * same inputs; every output is compared by its class (compare.c): bit
 * for bit, within a tolerance, or not at all.
 *
 *   gen_gpu [options]              programs SEED .. SEED+COUNT-1
 *   gen_gpu [options] FILE.tlx...  programs from files ("//!" lines)
 *     --seed S, --count N   (default 1, 100)
 *     -j N                  N worker processes (default 1), each a CUDA
 *                           context of its own, each program under an
 *                           alarm; a worker that crashes, times out or
 *                           faults on the device is replaced.  -j 0:
 *                           in this process, nothing isolated (for
 *                           compute-sanitizer and debuggers)
 *     --device NAME         the device under test: cuda (default), sim
 *     --ref same|O0         what the simulator runs: the image's IR
 *                           (default), or tlxc -O0's tile IR
 *     --tlxc PATH           the compiler (default: tlxc beside gen_gpu,
 *                           else on PATH)
 *     --emit cubin|ptx      what tlxc makes (default cubin)
 *     --target T            (default sm_90a)
 *     --keep DIR            findings: DIR/seed-S.tlx (or the file's
 *                           name), the program with a note on top
 *     --dump DIR            every program's buffers, raw: DIR/seed-S.ARG.in
 *                           (the inputs), .sim and .dev (what each run
 *                           left), and DIR/seed-S.args (a line an
 *                           argument: name, role, type, elements or
 *                           value), to look into a finding (numpy.fromfile)
 *     --time S              take no new program after S seconds
 *     --timeout S           per program (default 120; tlxc half of it)
 *     --strict-nan          NaNs must have the same bits too
 *     --bits                no tolerances: every output bit for bit
 *     --inject-flip         a test of the comparison: corrupt one
 *                           compared element of every program's device
 *                           results; each must be a mismatch
 *     --device-order N      with --device sim: the simulator under test
 *                           combines float reductions in order N
 *                           (TLXRT_SIM_REDUCE_ORDER; 4: as the GPU's
 *                           code), the reference in index order
 *     --no-forgive          no second opinions on reordered outputs: a
 *                           difference beyond the tolerance is a finding
 *     --reduce              reduce each finding but timeouts (reduce.c)
 *                           to DIR/NAME.min.tlx (needs --keep DIR and
 *                           worker processes): every candidate runs in a
 *                           process of its own, on the device and the
 *                           simulator, and is kept while it fails in the
 *                           same way
 *     --stmts N, --depth N, --no-shared, --no-atomics, --no-dot,
 *     --async PCT (programs with tasks, pipes, TMA, ...: gen_test's),
 *     --rows PCT (programs ending with a row kernel's statement: gen_test's),
 *     --approx PCT (math calls with `approx: true`: gen_test's)
 *     --generic PCT         that share of the generated programs (by
 *                           seed; default 25) run the generic entry on the
 *                           device under test (TLXRT_GENERIC=1; files: as
 *                           the environment says): a kernel with a fast
 *                           entry runs it for aligned arguments, so the
 *                           generic entry's run-time checks and their
 *                           two paths per access are otherwise untested
 *     -v                    a line for every program; -q: only the
 *                           summary
 *   gen_gpu --self-test     checks of the comparison on made-up values
 *
 * Prints a line per finding -- a mismatch (the first differing element,
 * both values), a compile error, a fault on either side, a timeout, a
 * crash -- and ends with
 *   N programs in T s: K ok, F findings (...), S skipped
 * where skipped are the programs that code generation refuses as not
 * supported yet.  Exit status 0 when there was no finding, 1 when there
 * was, 2 when it could not run (no such device: the message says why).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gen.h"
#include "runtime/rt.h"
#include "tlx/tlx.h"

extern char **environ;

/* What became of a program. */
#define OUTCOMES(X)                                                      \
	X(OK, "ok") X(MISMATCH, "mismatch") X(SKIP, "skipped")           \
	X(COMPILE, "compile") X(FAULT, "fault") X(TIMEOUT, "timeout")    \
	X(CRASH, "crash") X(SETUP, "setup")
enum {
#define X(e, s) O_##e,
	OUTCOMES(X)
#undef X
	O_COUNT
};
static const char *const outcome_names[] = {
#define X(e, s) s,
	OUTCOMES(X)
#undef X
};

/* One program's record, in memory shared with the workers. */
typedef struct Rec {
	int done;
	int outcome;
	int ncls[FZ_NUM_COUNT];  /* outputs of each class (FzNum) */
	int injected;       /* --inject-flip flipped an element */
	char outs[200];     /* the outputs that are not BITS, by class */
	char cls[160];      /* the class of a finding or a skip */
	char msg[768];
	bool generic;       /* the device ran the generic entry (--generic) */
} Rec;

typedef struct Shared {
	long next;          /* the next program to take */
	long cur[256];      /* what each worker is on; -1 none */
} Shared;

typedef struct Opts {
	uint64_t seed;
	long count;
	char **files;
	int nfiles;
	int jobs;
	const char *device, *ref, *tlxc, *emit, *target, *keep, *flags, *dump;
	int timeout_s;
	double time_limit, t0;
	bool nan_equal, bits, inject, verbose, quiet, reduce, no_forgive;
	int dev_order;      /* --device-order: the sim under test's reduce order */
	int generic_pct;    /* --generic */
	FzGenOpts gen;
	char tmp[256];
} Opts;

static bool
write_all(const char *path, const char *s, size_t n)
{
	FILE *f = fopen(path, "wb");
	bool ok;

	if (!f)
		return false;
	ok = fwrite(s, 1, n, f) == n;
	return fclose(f) == 0 && ok;
}

static void
set(Rec *r, int outcome, const char *cls, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void
set(Rec *r, int outcome, const char *cls, const char *fmt, ...)
{
	va_list ap;

	r->outcome = outcome;
	snprintf(r->cls, sizeof r->cls, "%s", cls ? cls : "");
	va_start(ap, fmt);
	vsnprintf(r->msg, sizeof r->msg, fmt, ap);
	va_end(ap);
}

/* ---- compiling: tlxc in a subprocess -------------------------------------------- */

/* Runs argv with stdout and stderr into errpath, at most timeout_s
 * seconds; its wait status, or -1 when it did not start (errno). */
static int
spawn(char **argv, const char *errpath, int timeout_s, bool *timed_out)
{
	posix_spawn_file_actions_t fa;
	double t0 = fz_now();
	pid_t pid;
	int st = 0, rc;

	*timed_out = false;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 2, errpath,
					 O_WRONLY | O_CREAT | O_TRUNC, 0644);
	posix_spawn_file_actions_adddup2(&fa, 2, 1);
	rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (rc != 0) {
		errno = rc;
		return -1;
	}
	for (;;) {
		pid_t w = waitpid(pid, &st, WNOHANG);

		if (w == pid)
			return st;
		if (w < 0 && errno != EINTR)
			return -1;
		if (!*timed_out && fz_now() - t0 > timeout_s) {
			kill(pid, SIGKILL);
			*timed_out = true;
		}
		usleep(2000);
	}
}

/* The line of a compiler's output that names the failure. */
static void
first_error(const char *s, char *out, size_t n)
{
	const char *p = strstr(s, "error:"), *e;

	if (!p)
		p = s;
	while (p > s && p[-1] != '\n')
		p--;
	e = strchr(p, '\n');
	snprintf(out, n, "%.*s", (int)(e ? (size_t)(e - p) : strlen(p)), p);
}

/* tlxc -O<olevel> on src into an image; false with r set. */
static bool
compile(const Opts *o, const char *stem, const char *src, size_t len,
	int olevel, bool ir, FzImage *img, Rec *r)
{
	char in[512], outp[512], errp[512], olv[8], emit[32], target[64];
	char *argv[24], *flags = NULL, *tok, *text;
	size_t n;
	bool to;
	int st, k = 0;

	memset(img, 0, sizeof *img);
	snprintf(in, sizeof in, "%s.tlx", stem);
	snprintf(outp, sizeof outp, "%s.O%d.%s", stem, olevel, ir ? "tir" : o->emit);
	snprintf(errp, sizeof errp, "%s.err", stem);
	snprintf(olv, sizeof olv, "-O%d", olevel);
	snprintf(emit, sizeof emit, "--emit=%s", ir ? "ir" : o->emit);
	snprintf(target, sizeof target, "--target=%s", o->target);
	if (!write_all(in, src, len)) {
		set(r, O_SETUP, "setup", "cannot write %s: %s", in, strerror(errno));
		return false;
	}
	argv[k++] = (char *)o->tlxc;
	argv[k++] = target;
	argv[k++] = olv;
	argv[k++] = emit;
	if (o->flags && (flags = strdup(o->flags)))
		for (tok = strtok(flags, " "); tok && k < 18; tok = strtok(NULL, " "))
			argv[k++] = tok;
	argv[k++] = in;
	argv[k++] = "-o";
	argv[k++] = outp;
	argv[k] = NULL;
	unlink(outp);
	st = spawn(argv, errp, o->timeout_s > 1 ? o->timeout_s / 2 : 1, &to);
	free(flags);
	if (st < 0) {
		set(r, O_SETUP, "setup", "cannot run %s: %s", o->tlxc, strerror(errno));
		return false;
	}
	if (to) {
		set(r, O_TIMEOUT, "timeout", "tlxc %s: no result after %d s",
		    olv, o->timeout_s > 1 ? o->timeout_s / 2 : 1);
		return false;
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		char line[600];
		FzResult fr = { .kind = FZ_COMPILE };

		text = fz_read_file(errp, &n);
		first_error(text ? text : "", line, sizeof line);
		/* the file's name without the temporary folder's */
		if (!strncmp(line, o->tmp, strlen(o->tmp)) &&
		    line[strlen(o->tmp)] == '/')
			memmove(line, line + strlen(o->tmp) + 1,
				strlen(line + strlen(o->tmp)));
		snprintf(fr.msg, sizeof fr.msg, "%s", line);
		fz_classify(&fr);
		if (WIFSIGNALED(st))
			set(r, O_CRASH, fr.cls, "tlxc %s: signal %d: %s", olv,
			    WTERMSIG(st), line);
		else if (text && (strstr(text, "is not supported for") ||
				  strstr(text, "not supported yet")))
			set(r, O_SKIP, fr.cls, "tlxc %s: %s", olv, line);
		else
			set(r, O_COMPILE, fr.cls, "tlxc %s: %s", olv, line);
		free(text);
		return false;
	}
	if (!(img->data = fz_read_file(outp, &img->size))) {
		set(r, O_SETUP, "setup", "tlxc %s wrote no %s", olv, outp);
		return false;
	}
	img->kind = ir ? TLX_IMAGE_IR : !strcmp(o->emit, "ptx") ? TLX_IMAGE_PTX
		    : TLX_IMAGE_CUBIN;
	return true;
}

/* The IR an image embeds (malloc'd). */
static char *
image_ir(const FzImage *img, size_t *len, const char **why)
{
	char *ir = NULL;
	int rc;

	*why = "not an image";
	switch (rt_image_kind(img->data, img->size)) {
	case RT_IMG_ELF:
		rc = rt_image_elf_ir((const uint8_t *)img->data, img->size, &ir,
				     len, why);
		break;
	case RT_IMG_PTX:
		rc = rt_image_ptx_ir(img->data, img->size, &ir, len, why);
		break;
	default:
		return NULL;
	}
	return rc == 0 ? ir : NULL;
}

/* ---- one program ---------------------------------------------------------------- */

typedef struct Worker {
	const Opts *o;
	int id;
	tlxrt_device *dev, *sim;
	bool dead;          /* the device's context is lost: exit */
} Worker;

static void
open_devices(Worker *w, Rec *r)
{
	char err[512];

	if (!w->sim && tlxrt_device_open_errmsg("sim", &w->sim, err, sizeof err)) {
		set(r, O_SETUP, "setup", "no simulator: %s", err);
		return;
	}
	/* a loop that never ends is a launch failure, soon */
	tlxrt_device_set_option(w->sim, TLXRT_SIM_MAX_STEPS, 20000000);
	if (!strcmp(w->o->device, "sim") && !w->o->dev_order) {
		w->dev = w->sim;
		return;
	}
	if (!w->dev && tlxrt_device_open_errmsg(w->o->device, &w->dev, err,
						 sizeof err)) {
		set(r, O_SETUP, "setup", "no device '%s': %s", w->o->device, err);
		return;
	}
	if (w->o->dev_order &&
	    tlxrt_device_set_option(w->dev, TLXRT_SIM_REDUCE_ORDER, w->o->dev_order))
		set(r, O_SETUP, "setup", "--device-order: %s", tlxrt_errmsg(w->dev));
}

/* Whether the simulator's exact outputs (FZ_NUM_BITS) change when one
 * atomic's elements and the programs run in reverse order
 * (TLXRT_SIM_ATOMIC_ORDER): programs whose results the GPU need not
 * reproduce.  The generator makes none (each element of an atomic
 * its own address); a reduction may, and such a candidate must not pass
 * for the finding it came from.  (Float sums in another order are the
 * second opinions' business.)  Sets r to an "order" mismatch when so. */
static bool
order_dependent(Worker *w, const FzImage *img, const FzMeta *m,
		const FzData *in, const FzData *a, const FzNum *cls, Rec *r)
{
	FzNum bits[FZ_MAX_ARGS];
	FzData a2 = { 0 };
	FzResult fr = { 0 };
	bool dep = false;
	int i;

	for (i = 0; i < m->nargs; i++)
		bits[i] = cls[i] == FZ_NUM_BITS ? FZ_NUM_BITS : FZ_NUM_LOOSE;
	if (tlxrt_device_set_option(w->sim, TLXRT_SIM_ATOMIC_ORDER, 1))
		return false;
	if (fz_run(w->sim, img, m, in, &a2, &fr) &&
	    !fz_compare_num(m, a, &a2, bits, "sim vs sim, atomics reversed",
			    w->o->nan_equal, &fr)) {
		set(r, O_MISMATCH, "order", "order-dependent: %s", fr.msg);
		dep = true;
	}
	tlxrt_device_set_option(w->sim, TLXRT_SIM_ATOMIC_ORDER, 0);
	fz_data_free(&a2);
	return dep;
}

/* --dump: the buffers of one kind ("in", "sim", "dev") of program m. */
static void
dump_data(const Opts *o, const FzMeta *m, const FzData *d, const char *kind)
{
	char path[1200];
	FILE *f;
	int i;

	for (i = 0; i < m->nargs && i < d->nargs; i++) {
		if (!d->buf[i])
			continue;
		snprintf(path, sizeof path, "%s/seed-%llu.%s.%s", o->dump,
			 (unsigned long long)m->seed, m->args[i].name, kind);
		if ((f = fopen(path, "wb"))) {
			fwrite(d->buf[i], 1, d->bytes[i], f);
			fclose(f);
		}
	}
	if (strcmp(kind, "in"))
		return;
	snprintf(path, sizeof path, "%s/seed-%llu.args", o->dump,
		 (unsigned long long)m->seed);
	if (!(f = fopen(path, "w")))
		return;
	for (i = 0; i < m->nargs; i++) {
		static const char *const role[] = { "in", "out", "inout", "scalar" };
		const FzArg *g = &m->args[i];

		if (g->role == FZ_SCALAR)
			fprintf(f, "%s scalar %s %lld %.17g\n", g->name,
				tlxrt_type_name(g->type), (long long)g->i, g->f);
		else
			fprintf(f, "%s %s %s %zu\n", g->name, role[g->role],
				tlxrt_type_name(g->type), g->n);
	}
	fclose(f);
}

static void
run_program(Worker *w, const char *src, size_t len, Rec *r)
{
	const Opts *o = w->o;
	FzImage img = { 0 }, ref = { 0 };
	FzData in = { 0 }, a = { 0 }, b = { 0 };
	FzNum cls[FZ_MAX_ARGS];
	FzMeta m;
	FzResult fr = { 0 };
	char stem[400], err[256], *ir = NULL;
	const char *why;
	size_t irlen;
	bool ok;
	int i;

	snprintf(stem, sizeof stem, "%s/w%d", o->tmp, w->id);
	if (!fz_meta_parse(src, &m, err, sizeof err)) {
		set(r, O_SETUP, "setup", "%s", err);
		return;
	}
	open_devices(w, r);
	if (r->outcome == O_SETUP)
		return;
	if (!compile(o, stem, src, len, 3, false, &img, r))
		goto done;
	if (!(ir = image_ir(&img, &irlen, &why))) {
		set(r, O_SETUP, "setup", "no IR in the image: %s", why);
		goto done;
	}
	if (o->bits) {
		for (i = 0; i < m.nargs; i++)
			cls[i] = FZ_NUM_BITS;
	} else if (!fz_num_classes(ir, irlen, &m, cls, err, sizeof err)) {
		set(r, O_SETUP, "setup", "%s", err);
		goto done;
	}
	for (i = 0; i < m.nargs; i++) {
		size_t k = strlen(r->outs);

		if (m.args[i].role != FZ_OUT && m.args[i].role != FZ_INOUT)
			continue;
		r->ncls[cls[i]]++;
		if (cls[i] != FZ_NUM_BITS && k < sizeof r->outs - 40)
			snprintf(r->outs + k, sizeof r->outs - k, " %s:%s",
				 m.args[i].name, fz_num_names[cls[i]]);
	}
	if (!strcmp(o->ref, "O0") &&
	    !compile(o, stem, src, len, 0, true, &ref, r))
		goto done;
	fz_inputs(&m, &in);
	/* the simulator runs the image (the IR it embeds) or -O0's IR */
	if (!fz_run(w->sim, ref.data ? &ref : &img, &m, &in, &a, &fr)) {
		set(r, fr.kind == FZ_LAUNCH ? O_FAULT : O_SETUP, fr.cls,
		    "sim: %s", fr.msg);
		goto done;
	}
	if (r->generic)
		setenv("TLXRT_GENERIC", "1", 1);
	ok = fz_run(w->dev, &img, &m, &in, &b, &fr);
	if (r->generic)
		unsetenv("TLXRT_GENERIC");
	if (o->dump) {
		dump_data(o, &m, &in, "in");
		dump_data(o, &m, &a, "sim");
		if (ok)
			dump_data(o, &m, &b, "dev");
	}
	if (!ok) {
		set(r, fr.kind == FZ_LAUNCH ? O_FAULT : O_SETUP, fr.cls,
		    "%s: %s", o->device, fr.msg);
		/* a fault loses a CUDA context: this worker ends */
		w->dead = w->dev != w->sim;
		goto done;
	}
	if (o->inject)
		r->injected = fz_inject_flip(&m, &b, cls, err, sizeof err);
	if (!fz_compare_num(&m, &a, &b, cls, o->device[0] == 's' ? "sim vs sim"
			    : "sim vs cuda", o->nan_equal, &fr)) {
		FzData a2 = { 0 }, aw = { 0 }, at = { 0 }, ag = { 0 };
		FzResult fr2;
		bool again = false;

		if (order_dependent(w, ref.data ? &ref : &img, &m, &in, &a,
				    cls, r))
			goto done;

		/* sums in another order: a difference that the order
		 * explains is not a finding (the simulator's second
		 * opinions: reverse order and a shuffled launch; f64;
		 * the tensor cores' adder) */
		for (i = 0; i < m.nargs; i++)
			again |= cls[i] == FZ_NUM_REORD;
		if (again && !o->inject && !o->no_forgive &&
		    !tlxrt_device_set_option(w->sim, TLXRT_SIM_REDUCE_ORDER, 1) &&
		    !tlxrt_device_set_option(w->sim, TLXRT_SIM_SHUFFLE, 1)) {
			again = fz_run(w->sim, ref.data ? &ref : &img, &m, &in,
				       &a2, &fr2);
			tlxrt_device_set_option(w->sim, TLXRT_SIM_SHUFFLE, -1);
			tlxrt_device_set_option(w->sim, TLXRT_SIM_REDUCE_ORDER, 2);
			again = again && fz_run(w->sim, ref.data ? &ref : &img,
						&m, &in, &aw, &fr2);
			tlxrt_device_set_option(w->sim, TLXRT_SIM_REDUCE_ORDER, 3);
			again = again && fz_run(w->sim, ref.data ? &ref : &img,
						&m, &in, &at, &fr2);
			tlxrt_device_set_option(w->sim, TLXRT_SIM_REDUCE_ORDER, 4);
			again = again && fz_run(w->sim, ref.data ? &ref : &img,
						&m, &in, &ag, &fr2) &&
				fz_forgive_reordered(&m, &a, &a2, &aw, &at, &ag, &b,
						     cls) > 0;
			tlxrt_device_set_option(w->sim, TLXRT_SIM_REDUCE_ORDER, 0);
			fz_data_free(&a2);
			fz_data_free(&aw);
			fz_data_free(&at);
			fz_data_free(&ag);
			if (again && fz_compare_num(&m, &a, &b, cls, o->device[0] == 's'
						    ? "sim vs sim" : "sim vs cuda",
						    o->nan_equal, &fr)) {
				set(r, O_OK, "", "ok");
				goto done;
			}
		}
		set(r, O_MISMATCH, fr.cls, "%s", fr.msg);
		goto done;
	}
	set(r, O_OK, "", "ok");
done:
	free(ir);
	fz_image_free(&img);
	fz_image_free(&ref);
	fz_data_free(&in);
	fz_data_free(&a);
	fz_data_free(&b);
}

static char *
program(const Opts *o, long i, size_t *len, char *name, size_t n)
{
	char *src;

	if (o->files) {
		snprintf(name, n, "%s", o->files[i]);
		return fz_read_file(o->files[i], len);
	}
	snprintf(name, n, "seed %llu", (unsigned long long)(o->seed + (uint64_t)i));
	src = fz_generate(o->seed + (uint64_t)i, &o->gen, NULL);
	*len = src ? strlen(src) : 0;
	return src;
}

static bool
finding(int outcome)
{
	return outcome != O_OK && outcome != O_SKIP;
}

/* Where program i's finding is kept: o->keep/NAME, NAME the file's (or
 * seed-N.tlx); `min`: its reduction, o->keep/NAME.min.tlx (the file's
 * extension dropped). */
static void
keep_path(const Opts *o, long i, bool min, char *path, size_t n)
{
	const char *base;
	char *dot;
	size_t k;

	if (!o->files) {
		snprintf(path, n, "%s/seed-%llu%s", o->keep,
			 (unsigned long long)(o->seed + (uint64_t)i),
			 min ? ".min.tlx" : ".tlx");
		return;
	}
	base = strrchr(o->files[i], '/');
	snprintf(path, n, "%s/%s", o->keep, base ? base + 1 : o->files[i]);
	if (!min)
		return;
	if ((dot = strrchr(path, '.')) && dot > strrchr(path, '/'))
		*dot = 0;
	k = strlen(path);
	snprintf(path + k, n - k, ".min.tlx");
}

/* Opens the file that keeps program i's finding r (`min`: its reduction;
 * path: keep_path's) and writes its header: the finding, the message's
 * first line (not for a reduction) and how to reproduce it; NULL when it
 * cannot be opened. */
static FILE *
keep_open(const Opts *o, long i, const Rec *r, bool min, char *path, size_t n)
{
	FILE *f;

	keep_path(o, i, min, path, n);
	if (!(f = fopen(path, "w")))
		return NULL;
	fprintf(f, "// A finding of gen_gpu (%s, %s -O3 --target=%s, %s)",
		outcome_names[r->outcome], o->emit, o->target, o->device);
	if (min)
		fprintf(f, ", reduced: %s\n", r->cls);
	else
		fprintf(f, ": %s\n// %.*s\n", r->cls, 600, r->msg);
	fprintf(f, "// reproduce: %sgen_gpu --device %s%s%s %s\n",
		r->generic ? "TLXRT_GENERIC=1 " : "", o->device,
		o->inject ? " --inject-flip" : "", o->bits ? " --bits" : "", path);
	return f;
}

/* Prints a program's line (one write: workers share stdout) and keeps a
 * finding's program. */
static void
report(const Opts *o, long i, const Rec *r, const char *src, size_t len)
{
	char name[300], line[1400], path[600];
	FILE *f;
	int n;

	if (o->files)
		snprintf(name, sizeof name, "%s", o->files[i]);
	else
		snprintf(name, sizeof name, "seed %llu",
			 (unsigned long long)(o->seed + (uint64_t)i));
	if (!o->quiet && (o->verbose || finding(r->outcome))) {
		n = snprintf(line, sizeof line, "%s%s: %s: %s (outputs: %d bits, "
			     "%d close, %d loose%s%s)\n", name,
			     r->generic ? " (generic entry)" : "",
			     outcome_names[r->outcome], r->msg, r->ncls[FZ_NUM_BITS],
			     r->ncls[FZ_NUM_CLOSE] + r->ncls[FZ_NUM_REORD],
			     r->ncls[FZ_NUM_LOOSE],
			     r->outs[0] ? ";" : "",
			     r->outs);
		if (n > 0 && write(1, line, (size_t)n < sizeof line ? (size_t)n
				   : sizeof line - 1) < 0)
			return;
	}
	if (!o->keep || !finding(r->outcome) || !src ||
	    !(f = keep_open(o, i, r, false, path, sizeof path)))
		return;
	fwrite(src, 1, len, f);
	fclose(f);
}

/* --generic: does generated program i's device run take the generic
 * entry?  A hash of its seed, so that a rerun of the seed takes the same.
 * Files run as the environment says (TLXRT_GENERIC). */
static bool
generic_for(const Opts *o, long i)
{
	uint64_t h = (o->seed + (uint64_t)i) * 0x9e3779b97f4a7c15ull;

	return !o->files && (int)((h >> 40) % 100) < o->generic_pct;
}

static void
do_one(Worker *w, long i, Rec *r)
{
	char name[300];
	size_t len;
	char *src = program(w->o, i, &len, name, sizeof name);

	memset(r, 0, sizeof *r);
	r->generic = generic_for(w->o, i);
	if (!src)
		set(r, O_SETUP, "setup", "cannot read or generate %s", name);
	else
		run_program(w, src, len, r);
	report(w->o, i, r, src, len);
	free(src);
	__atomic_store_n(&r->done, 1, __ATOMIC_RELEASE);
}

/* ---- reducing findings ------------------------------------------------------- */

static long
total(const Opts *o)
{
	return o->files ? o->nfiles : o->count;
}

static FzKind
kind_of(int outcome)
{
	switch (outcome) {
	case O_MISMATCH: return FZ_MISMATCH;
	case O_COMPILE: return FZ_COMPILE;
	case O_FAULT: return FZ_LAUNCH;
	case O_CRASH: return FZ_CRASH;
	case O_TIMEOUT: return FZ_TIMEOUT;
	case O_SETUP: return FZ_SETUP;
	default: return FZ_OK;
	}
}

typedef struct RedCtx {
	const Opts *o;
	Rec *rec;           /* in memory shared with the child */
	bool generic;       /* the finding's run took the generic entry */
} RedCtx;

/* One candidate of a reduction: run as a worker would, in a child of its
 * own (a fault loses the device's context), under the program's alarm. */
static void
reduce_test(void *ctx, const char *src, size_t len, FzResult *out)
{
	const RedCtx *c = ctx;
	Rec *r = c->rec;
	pid_t pid;
	int st;

	memset(r, 0, sizeof *r);
	r->generic = c->generic;
	fflush(stdout);
	fflush(stderr);
	if ((pid = fork()) == 0) {
		Worker w = { .o = c->o, .id = 255 };

		alarm((unsigned)c->o->timeout_s);
		run_program(&w, src, len, r);
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		set(r, O_SETUP, "setup", "cannot run a candidate: %s", strerror(errno));
	else if (WIFSIGNALED(st) && WTERMSIG(st) == SIGALRM)
		set(r, O_TIMEOUT, "timeout", "no result after %d s", c->o->timeout_s);
	else if (WIFSIGNALED(st) || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		set(r, O_CRASH, "crash", "the candidate's process died");
	memset(out, 0, sizeof *out);
	out->kind = kind_of(r->outcome);
	snprintf(out->cls, sizeof out->cls, "%s", r->cls);
	snprintf(out->msg, sizeof out->msg, "%s", r->msg);
}

/* --reduce: each finding (but timeouts, whose candidates each take the
 * whole timeout) to o->keep/NAME.min.tlx. */
static void
reduce_findings(const Opts *o, const Rec *recs, Rec *scratch)
{
	RedCtx ctx = { o, scratch, false };
	FzReduceOpts ro = { .test = reduce_test, .ctx = &ctx,
			    .verbose = o->verbose };
	long i;

	for (i = 0; i < total(o); i++) {
		const Rec *r = &recs[i];
		FzResult want = { .kind = kind_of(r->outcome) };
		char name[300], path[700], *src, *min;
		double t0 = fz_now();
		int tests = 0, before = 0, after = 0;
		size_t len, k;
		FILE *f;

		if (!r->done || !finding(r->outcome) || r->outcome == O_TIMEOUT ||
		    r->outcome == O_SETUP || !(src = program(o, i, &len, name, sizeof name)))
			continue;
		snprintf(want.cls, sizeof want.cls, "%s", r->cls);
		ctx.generic = r->generic;
		min = fz_reduce(src, &want, &ro, &tests);
		for (k = 0; k < len; k++)
			before += src[k] == '\n';
		if (min && (f = keep_open(o, i, r, true, path, sizeof path))) {
			for (k = 0; min[k]; k++)
				after += min[k] == '\n';
			fputs(min, f);
			fclose(f);
			printf("%s: reduced %d -> %d lines in %d checks (%.1f s): %s\n",
			       name, before, after, tests, fz_now() - t0, path);
		} else {
			printf("%s: not reduced: %s\n", name,
			       min ? strerror(errno) : "no smaller program fails the same way");
		}
		fflush(stdout);
		free(min);
		free(src);
	}
}

/* ---- workers ---------------------------------------------------------------- */

static void
worker(const Opts *o, int id, Shared *sh, Rec *recs)
{
	Worker w = { .o = o, .id = id };
	char errp[400];
	int fd;

	/* stderr: a file of this worker's, read when it dies */
	snprintf(errp, sizeof errp, "%s/w%d.stderr", o->tmp, id);
	if ((fd = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0644)) >= 0) {
		dup2(fd, 2);
		close(fd);
	}
	signal(SIGALRM, SIG_DFL);
	for (;;) {
		long i;

		if (o->time_limit > 0 && fz_now() - o->t0 > o->time_limit)
			break;
		if ((i = __atomic_fetch_add(&sh->next, 1, __ATOMIC_ACQ_REL)) >= total(o))
			break;
		__atomic_store_n(&sh->cur[id], i, __ATOMIC_RELEASE);
		alarm((unsigned)o->timeout_s);
		do_one(&w, i, &recs[i]);
		alarm(0);
		__atomic_store_n(&sh->cur[id], -1, __ATOMIC_RELEASE);
		if (w.dead)
			break;
	}
	if (w.dev != w.sim)
		tlxrt_device_close(w.dev);
	tlxrt_device_close(w.sim);
	exit(0);
}

static pid_t
start_worker(const Opts *o, int id, Shared *sh, Rec *recs)
{
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	if ((pid = fork()) == 0)
		worker(o, id, sh, recs);
	return pid;
}

/* The last lines a dead worker wrote to stderr. */
static void
stderr_tail(const Opts *o, int id, char *out, size_t n)
{
	char path[400], *s;
	size_t len, k;

	snprintf(path, sizeof path, "%s/w%d.stderr", o->tmp, id);
	s = fz_read_file(path, &len);
	out[0] = 0;
	if (!s)
		return;
	k = len > n - 1 ? len - (n - 1) : 0;
	snprintf(out, n, "%s", s + k);
	for (k = 0; out[k]; k++)
		if (out[k] == '\n')
			out[k] = ' ';
	free(s);
}

/* Whether the device opens, asked in a child: a process that has
 * initialized CUDA cannot fork workers that use it. */
static bool
probe(const Opts *o)
{
	char msg[512] = "";
	int pfd[2], st;
	pid_t pid;
	ssize_t n;

	if (!strcmp(o->device, "sim"))
		return true;
	if (pipe(pfd) != 0)
		return false;
	if ((pid = fork()) == 0) {
		tlxrt_device *d = NULL;

		close(pfd[0]);
		if (tlxrt_device_open_errmsg(o->device, &d, msg, sizeof msg) ==
		    TLXRT_OK) {
			tlxrt_device_props p;

			tlxrt_device_get_props(d, &p);
			snprintf(msg, sizeof msg, "ok %s (sm_%d)", p.name, p.sm);
		}
		if (write(pfd[1], msg, strlen(msg)) < 0)
			_exit(1);
		_exit(d ? 0 : 1);
	}
	close(pfd[1]);
	n = read(pfd[0], msg, sizeof msg - 1);
	msg[n > 0 ? n : 0] = 0;
	close(pfd[0]);
	waitpid(pid, &st, 0);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0) {
		if (!o->quiet)
			printf("device: %s\n", msg + 3);
		return true;
	}
	fprintf(stderr, "gen_gpu: no device '%s': %s\n", o->device,
		msg[0] ? msg : "the probe crashed");
	return false;
}

static void
run_workers(const Opts *o, Shared *sh, Rec *recs)
{
	pid_t pids[256];
	int live = 0, k;

	for (k = 0; k < o->jobs; k++) {
		sh->cur[k] = -1;
		pids[k] = start_worker(o, k, sh, recs);
		live += pids[k] > 0;
	}
	while (live > 0) {
		int st;
		pid_t pid = wait(&st);
		long i;

		if (pid < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		for (k = 0; k < o->jobs && pids[k] != pid; k++)
			;
		if (k == o->jobs)
			continue;
		live--;
		i = __atomic_load_n(&sh->cur[k], __ATOMIC_ACQUIRE);
		if (i >= 0 && !__atomic_load_n(&recs[i].done, __ATOMIC_ACQUIRE)) {
			Rec *r = &recs[i];
			char tail[400];

			stderr_tail(o, k, tail, sizeof tail);
			if (WIFSIGNALED(st) && WTERMSIG(st) == SIGALRM)
				set(r, O_TIMEOUT, "timeout", "no result after %d s",
				    o->timeout_s);
			else if (WIFSIGNALED(st))
				set(r, O_CRASH, "crash", "signal %d (%s): %s",
				    WTERMSIG(st), strsignal(WTERMSIG(st)), tail);
			else
				set(r, O_CRASH, "crash", "exit status %d: %s",
				    WIFEXITED(st) ? WEXITSTATUS(st) : -1, tail);
			if (!o->files) {
				char name[300];
				size_t len;
				char *src = program(o, i, &len, name, sizeof name);

				report(o, i, r, src, len);
				free(src);
			} else {
				report(o, i, r, NULL, 0);
			}
			r->done = 1;
			sh->cur[k] = -1;
		}
		if (__atomic_load_n(&sh->next, __ATOMIC_ACQUIRE) < total(o) &&
		    (o->time_limit <= 0 || fz_now() - o->t0 < o->time_limit)) {
			pids[k] = start_worker(o, k, sh, recs);
			live += pids[k] > 0;
		}
	}
}

/* ---- summary ------------------------------------------------------------------ */

typedef struct Class {
	char cls[160];
	long count;
	long first;
} Class;

static int
summary(const Opts *o, const Rec *recs, double dt)
{
	Class skips[32];
	long kinds[O_COUNT] = { 0 }, outs[FZ_NUM_COUNT] = { 0 }, n = total(o), i;
	long injected = 0, caught = 0, findings = 0, ran = 0;
	int nskips = 0, c;

	for (i = 0; i < n; i++) {
		const Rec *r = &recs[i];

		if (!r->done)
			continue;
		ran++;
		kinds[r->outcome]++;
		for (c = 0; c < FZ_NUM_COUNT; c++)
			outs[c] += r->ncls[c];
		if (r->injected) {
			injected++;
			caught += r->outcome == O_MISMATCH;
		}
		if (r->outcome != O_SKIP)
			continue;
		for (c = 0; c < nskips && strcmp(skips[c].cls, r->cls); c++)
			;
		if (c == nskips && nskips < 32) {
			snprintf(skips[c].cls, sizeof skips[c].cls, "%s", r->cls);
			skips[c].count = 0;
			skips[c].first = i;
			nskips++;
		}
		if (c < nskips)
			skips[c].count++;
	}
	if (nskips && !o->quiet) {
		printf("not supported by code generation yet (skipped):\n");
		for (c = 0; c < nskips; c++)
			printf("  %4ld  %s %llu  %s\n", skips[c].count,
			       o->files ? "file" : "seed",
			       (unsigned long long)(o->files ? (uint64_t)skips[c].first
						    : o->seed + (uint64_t)skips[c].first),
			       skips[c].cls);
	}
	printf("outputs: %ld bit for bit, %ld within tolerances, %ld not "
	       "compared\n", outs[0], outs[1] + outs[2], outs[3]);
	if (o->inject)
		printf("flips: %ld injected, %ld caught\n", injected, caught);
	for (c = 0; c < O_COUNT; c++)
		if (finding(c))
			findings += kinds[c];
	printf("%ld programs in %.1f s: %ld ok, %ld findings", ran, dt,
	       kinds[O_OK], findings);
	if (findings) {
		const char *sep = " (";

		for (c = 0; c < O_COUNT; c++)
			if (finding(c) && kinds[c]) {
				printf("%s%ld %s", sep, kinds[c], outcome_names[c]);
				sep = ", ";
			}
		printf(")");
	}
	printf(", %ld skipped\n", kinds[O_SKIP]);
	if (o->inject)
		return injected == caught && injected > 0 ? 0 : 1;
	return findings ? 1 : 0;
}

static void
remove_tmp(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[600];

	while (d && (e = readdir(d)))
		if (e->d_name[0] != '.') {
			snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
			unlink(path);
		}
	if (d)
		closedir(d);
	rmdir(dir);
}

/* ---- self-test ------------------------------------------------------------------ */

/* One output of `type` and class c, a against b: whether they agree. */
static bool
agree(int type, FzNum c, uint64_t a, uint64_t b, bool nan_equal)
{
	FzMeta m = { .nargs = 1 };
	FzData da = { .nargs = 1 }, db = { .nargs = 1 };
	unsigned char ba[8], bb[8];
	FzResult r;

	m.args[0] = (FzArg){ .name = "o", .role = FZ_OUT, .type = type, .n = 1 };
	memcpy(ba, &a, 8);  /* little endian: the low bytes are the element */
	memcpy(bb, &b, 8);
	da.buf[0] = ba;
	db.buf[0] = bb;
	da.bytes[0] = db.bytes[0] = (size_t)tlxrt_type_size(type);
	return fz_compare_num(&m, &da, &db, &c, "test", nan_equal, &r);
}

/* One REORDERED output of `type` whose device value b differs from the
 * simulator's a beyond the tolerance, with the second opinions a2
 * (reverse), aw (f64), at (tensor cores) and ag (the code's order):
 * whether they forgive it. */
static bool
forgiven(int type, uint64_t a, uint64_t a2, uint64_t aw, uint64_t at,
	 uint64_t ag, uint64_t b)
{
	FzMeta m = { .nargs = 1 };
	FzData d[6] = { { .nargs = 1 }, { .nargs = 1 }, { .nargs = 1 },
			{ .nargs = 1 }, { .nargs = 1 }, { .nargs = 1 } };
	uint64_t v[6] = { a, a2, aw, at, ag, b };
	unsigned char buf[6][8];
	FzNum c = FZ_NUM_REORD;
	int i;

	m.args[0] = (FzArg){ .name = "o", .role = FZ_OUT, .type = type, .n = 1 };
	for (i = 0; i < 6; i++) {
		memcpy(buf[i], &v[i], 8);
		d[i].buf[0] = buf[i];
		d[i].bytes[0] = (size_t)tlxrt_type_size(type);
	}
	return fz_forgive_reordered(&m, &d[0], &d[1], &d[2], &d[3], &d[4],
				    &d[5], &c) > 0;
}

static int
self_test(void)
{
	static const struct {
		int type;
		FzNum c;
		uint64_t a, b;
		bool nan_equal, want;
	} t[] = {
		/* f32 1.0 and its neighbour, 2^-11 apart, 2^-10 apart */
		{ TLXRT_F32, FZ_NUM_BITS, 0x3f800000, 0x3f800001, true, false },
		{ TLXRT_F32, FZ_NUM_CLOSE, 0x3f800000, 0x3f800001, true, true },
		{ TLXRT_F32, FZ_NUM_CLOSE, 0x3f800000, 0x3f801000, true, true },
		{ TLXRT_F32, FZ_NUM_CLOSE, 0x3f800000, 0x3f802000, true, false },
		{ TLXRT_F32, FZ_NUM_LOOSE, 0x3f800000, 0x7fc00000, true, true },
		/* the top exponent bit (--inject-flip), of 1.0 and of 0 */
		{ TLXRT_F32, FZ_NUM_CLOSE, 0x3f800000, 0x7f800000, true, false },
		{ TLXRT_F32, FZ_NUM_CLOSE, 0x00000000, 0x40000000, true, false },
		/* -0 and +0, tiny values of both signs, 0 and 2^-20 */
		{ TLXRT_F32, FZ_NUM_CLOSE, 0x80000000, 0x00000000, true, true },
		{ TLXRT_F32, FZ_NUM_BITS, 0x80000000, 0x00000000, true, false },
		{ TLXRT_F32, FZ_NUM_CLOSE, 0x80000001, 0x00000001, true, true },
		{ TLXRT_F32, FZ_NUM_CLOSE, 0x00000000, 0x35800000, true, true },
		{ TLXRT_F32, FZ_NUM_CLOSE, 0x00000000, 0xb5800000, true, true },
		/* the largest f32 and infinity: one ulp; -inf and inf (a
		 * sum that overflows in another order) only when close */
		{ TLXRT_F32, FZ_NUM_CLOSE, 0x7f7fffff, 0x7f800000, true, true },
		{ TLXRT_F32, FZ_NUM_CLOSE, 0xff800000, 0x7f800000, true, true },
		{ TLXRT_F32, FZ_NUM_BITS, 0xff800000, 0x7f800000, true, false },
		/* NaNs: any two agree unless --strict-nan; never a finite
		 * number; an infinity only when close (+inf + -inf in one
		 * order of a sum) */
		{ TLXRT_F32, FZ_NUM_BITS, 0x7fc00000, 0xffc00000, true, true },
		{ TLXRT_F32, FZ_NUM_BITS, 0x7fc00000, 0xffc00000, false, false },
		{ TLXRT_F32, FZ_NUM_CLOSE, 0x7fc00000, 0x7f800000, true, true },
		{ TLXRT_F32, FZ_NUM_BITS, 0x7fc00000, 0x7f800000, true, false },
		{ TLXRT_F32, FZ_NUM_CLOSE, 0x7fc00000, 0x3f800000, true, false },
		{ TLXRT_F32, FZ_NUM_CLOSE, 0x7f800000, 0x7f000000, true, false },
		/* bf16: 4 ulps, not 5; f16: 8, not 9 (at 1.0) */
		{ TLXRT_BF16, FZ_NUM_CLOSE, 0x3f80, 0x3f84, true, true },
		{ TLXRT_BF16, FZ_NUM_CLOSE, 0x3f80, 0x3f85, true, false },
		{ TLXRT_F16, FZ_NUM_CLOSE, 0x3c00, 0x3c08, true, true },
		{ TLXRT_F16, FZ_NUM_CLOSE, 0x3c00, 0x3c09, true, false },
		/* f64 at 1.0: 2^41 ulps (2^-11), not 2^42 */
		{ TLXRT_F64, FZ_NUM_CLOSE, 0x3ff0000000000000ull,
		  0x3ff0020000000000ull, true, true },
		{ TLXRT_F64, FZ_NUM_CLOSE, 0x3ff0000000000000ull,
		  0x3ff0040000000000ull, true, false },
		/* e4m3 (NaN 0x7f): 2 ulps, not 3 */
		{ TLXRT_F8E4M3, FZ_NUM_CLOSE, 0x38, 0x3a, true, true },
		{ TLXRT_F8E4M3, FZ_NUM_CLOSE, 0x38, 0x3b, true, false },
		{ TLXRT_F8E4M3, FZ_NUM_CLOSE, 0x7f, 0x7e, true, false },
		/* integers are exact in any class */
		{ TLXRT_I32, FZ_NUM_CLOSE, 1, 2, true, false },
		{ TLXRT_I32, FZ_NUM_BITS, 7, 7, true, true },
		{ TLXRT_U8, FZ_NUM_CLOSE, 0xff, 0xfe, true, false },
		/* REORDERED: CLOSE's tolerance (the second opinions are
		 * gen_gpu's, on the simulator) */
		{ TLXRT_F32, FZ_NUM_REORD, 0x3b0632f7, 0x7f800000, true, false },
		{ TLXRT_F32, FZ_NUM_REORD, 0x3f800000, 0x3f802000, true, false },
		{ TLXRT_F32, FZ_NUM_REORD, 0x3f800000, 0x3f801000, true, true },
		{ TLXRT_F32, FZ_NUM_REORD, 0xff800000, 0x7f800000, true, true },
	};
	/* sim, reverse, f64, tensor cores, the code's order, device
	 * (gen_gpu seeds) */
	static const struct {
		int type;
		uint64_t a, a2, aw, at, ag, b;
		bool want;
	} f[] = {
		/* the tensor cores' 26 bits: 71112, 72904 (MAX - MAX) */
		{ TLXRT_F32, 0xc02f4c5e, 0xc02f4a60, 0xc02f73e5, 0xc02f6800,
		  0xc02f4c5e, 0xc02f6800, true },
		{ TLXRT_F16, 0x7c00, 0x7c00, 0x7c00, 0x0000, 0x7c00, 0x0000, true },
		/* the exact sum: 75961 */
		{ TLXRT_BF16, 0x4500, 0x4500, 0x44f8, 0x4500, 0x4500, 0x44f8, true },
		/* the reverse order */
		{ TLXRT_F32, 0x3f800000, 0x3f900000, 0x3f900000, 0x3f800000,
		  0x3f800000, 0x3f900000, true },
		/* the code's order: 81487, a product through subnormals */
		{ TLXRT_F32, 0x5e8394a9, 0x5e8394a9, 0x5e8394a9, 0x5e8394a9,
		  0x5e817285, 0x5e817285, true },
		/* none of them: a wrong value */
		{ TLXRT_F32, 0xc02f4c5e, 0xc02f4a60, 0xc02f73e5, 0xc02f6800,
		  0xc02f4c5e, 0x3f800000, false },
		{ TLXRT_F16, 0x7c00, 0x7c00, 0x7c00, 0x0000, 0x7c00, 0x3c00, false },
		{ TLXRT_BF16, 0x4500, 0x4500, 0x44f8, 0x4500, 0x4500, 0x4510, false },
	};
	int i, bad = 0, n = (int)(sizeof t / sizeof *t);
	int nf = (int)(sizeof f / sizeof *f);

	for (i = 0; i < n; i++)
		if (agree(t[i].type, t[i].c, t[i].a, t[i].b, t[i].nan_equal) !=
		    t[i].want) {
			printf("FAIL: %s %s 0x%llx vs 0x%llx: %s, want %s\n",
			       tlxrt_type_name(t[i].type), fz_num_names[t[i].c],
			       (unsigned long long)t[i].a, (unsigned long long)t[i].b,
			       t[i].want ? "differ" : "agree",
			       t[i].want ? "agree" : "differ");
			bad++;
		}
	for (i = 0; i < nf; i++)
		if (forgiven(f[i].type, f[i].a, f[i].a2, f[i].aw, f[i].at,
			     f[i].ag, f[i].b) != f[i].want) {
			printf("FAIL: %s reordered 0x%llx vs 0x%llx: %s, want "
			       "%s\n", tlxrt_type_name(f[i].type),
			       (unsigned long long)f[i].a,
			       (unsigned long long)f[i].b,
			       f[i].want ? "reported" : "forgiven",
			       f[i].want ? "forgiven" : "reported");
			bad++;
		}
	n += nf;
	printf("self-test: %d of %d checks passed\n", n - bad, n);
	return bad ? 1 : 0;
}

/* ---- main ---------------------------------------------------------------------- */

static void
usage(void)
{
	fprintf(stderr, "usage: gen_gpu [--seed S] [--count N] [-j N] "
		"[--device cuda|sim] [--ref same|O0] [--tlxc PATH] "
		"[--emit cubin|ptx] [--target T] [--flags \"...\"] [--keep DIR] [--dump DIR] "
		"[--timeout S] [--strict-nan] [--bits] [--inject-flip] [--reduce] [--device-order N] [--no-forgive] "
		"[--stmts N] [--depth N] [--no-shared] [--no-atomics] [--no-dot] [--async PCT] [--rows PCT] "
		"[--approx PCT] [--generic PCT] "
		"[-v|-q] [FILE.tlx...]\n");
	exit(2);
}

/* tlxc beside this program (the carried folder), else on PATH. */
static const char *
default_tlxc(void)
{
	static char path[4096];
	ssize_t n = readlink("/proc/self/exe", path, sizeof path - 8);
	char *s;

	if (n > 0) {
		path[n] = 0;
		if ((s = strrchr(path, '/'))) {
			strcpy(s + 1, "tlxc");
			if (access(path, X_OK) == 0)
				return path;
		}
	}
	return "tlxc";
}

int
main(int argc, char **argv)
{
	Opts o = { .seed = 1, .count = 100, .jobs = 1, .device = "cuda",
		   .ref = "same", .emit = "cubin", .target = "sm_90a",
		   .timeout_s = 120, .nan_equal = true, .generic_pct = 25 };
	const char *tmpdir = getenv("TMPDIR");
	Shared *sh;
	Rec *recs;
	size_t bytes;
	int i, rc;

	o.t0 = fz_now();
	if (argc == 2 && !strcmp(argv[1], "--self-test"))
		return self_test();
	o.files = malloc((size_t)argc * sizeof *o.files);
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		bool more = i + 1 < argc;

		if (!strcmp(a, "--seed") && more)
			o.seed = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(a, "--count") && more)
			o.count = strtol(argv[++i], NULL, 0);
		else if (!strcmp(a, "-j") && more)
			o.jobs = atoi(argv[++i]);
		else if (!strncmp(a, "-j", 2) && a[2])
			o.jobs = atoi(a + 2);
		else if (!strcmp(a, "--device") && more)
			o.device = argv[++i];
		else if (!strcmp(a, "--ref") && more)
			o.ref = argv[++i];
		else if (!strcmp(a, "--tlxc") && more)
			o.tlxc = argv[++i];
		else if (!strcmp(a, "--emit") && more)
			o.emit = argv[++i];
		else if (!strcmp(a, "--target") && more)
			o.target = argv[++i];
		else if (!strcmp(a, "--flags") && more)
			o.flags = argv[++i];
		else if (!strcmp(a, "--keep") && more)
			o.keep = argv[++i];
		else if (!strcmp(a, "--dump") && more)
			o.dump = argv[++i];
		else if (!strcmp(a, "--time") && more)
			o.time_limit = strtod(argv[++i], NULL);
		else if (!strcmp(a, "--timeout") && more)
			o.timeout_s = atoi(argv[++i]);
		else if (!strcmp(a, "--strict-nan"))
			o.nan_equal = false;
		else if (!strcmp(a, "--bits"))
			o.bits = true;
		else if (!strcmp(a, "--inject-flip"))
			o.inject = true;
		else if (!strcmp(a, "--reduce"))
			o.reduce = true;
		else if (!strcmp(a, "--no-forgive"))
			o.no_forgive = true;
		else if (!strcmp(a, "--device-order") && more)
			o.dev_order = atoi(argv[++i]);
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
		else if (!strcmp(a, "--generic") && more)
			o.generic_pct = atoi(argv[++i]);
		else if (!strcmp(a, "-v"))
			o.verbose = true;
		else if (!strcmp(a, "-q"))
			o.quiet = true;
		else if (a[0] == '-')
			usage();
		else
			o.files[o.nfiles++] = argv[i];
	}
	if (!o.nfiles) {
		free(o.files);
		o.files = NULL;
	}
	if (o.jobs < 0 || o.jobs > 256 || total(&o) <= 0 ||
	    (strcmp(o.ref, "same") && strcmp(o.ref, "O0")) ||
	    (strcmp(o.emit, "cubin") && strcmp(o.emit, "ptx")) ||
	    (o.reduce && (!o.keep || o.jobs == 0)) ||
	    (o.dev_order && strcmp(o.device, "sim")))
		usage();
	if (!o.tlxc)
		o.tlxc = default_tlxc();
	if (o.keep)
		mkdir(o.keep, 0777);
	snprintf(o.tmp, sizeof o.tmp, "%s/gen_gpu.XXXXXX", tmpdir ? tmpdir : "/tmp");
	if (!mkdtemp(o.tmp)) {
		fprintf(stderr, "gen_gpu: cannot make %s: %s\n", o.tmp, strerror(errno));
		return 2;
	}
	if (o.jobs && !probe(&o)) {
		remove_tmp(o.tmp);
		return 2;
	}
	/* the records, and one for --reduce's candidates */
	bytes = sizeof *sh + (size_t)(total(&o) + 1) * sizeof *recs;
	sh = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		  -1, 0);
	if (sh == MAP_FAILED) {
		fprintf(stderr, "gen_gpu: out of memory\n");
		return 2;
	}
	recs = (Rec *)(sh + 1);
	if (o.jobs == 0) {
		Worker w = { .o = &o };
		long k;

		for (k = 0; k < total(&o); k++) {
			if (o.time_limit > 0 && fz_now() - o.t0 > o.time_limit)
				break;
			do_one(&w, k, &recs[k]);
			if (recs[k].outcome == O_SETUP && !strncmp(recs[k].msg, "no device", 9)) {
				fprintf(stderr, "gen_gpu: %s\n", recs[k].msg);
				return 2;
			}
			if (w.dead)
				break;
		}
		if (w.dev != w.sim)
			tlxrt_device_close(w.dev);
		tlxrt_device_close(w.sim);
	} else {
		run_workers(&o, sh, recs);
		if (o.reduce)
			reduce_findings(&o, recs, &recs[total(&o)]);
	}
	rc = summary(&o, recs, fz_now() - o.t0);
	remove_tmp(o.tmp);
	munmap(sh, bytes);
	free(o.files);
	return rc;
}
