/*
 * cubin.c: PTX -> cubin.  nvJitLink (dlopen of libnvJitLink.so.13, then
 * libnvJitLink.so) runs in-process when it is installed; otherwise the
 * ptxas found at configure time (PTXAS_PATH) or on PATH runs as a
 * subprocess.  Their error logs become diagnostics.  PTX output needs
 * neither.
 */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "codegen/cg.h"

extern char **environ;

/* nvJitLink's C API (nvJitLink.h of CUDA 13), declared here so that the
 * header is not needed to build. */
typedef struct nvJitLink *JlHandle;
typedef int (*JlCreate)(JlHandle *, uint32_t, const char **);
typedef int (*JlDestroy)(JlHandle *);
typedef int (*JlAddData)(JlHandle, int, const void *, size_t, const char *);
typedef int (*JlComplete)(JlHandle);
typedef int (*JlSize)(JlHandle, size_t *);
typedef int (*JlGet)(JlHandle, void *);
enum { JL_SUCCESS = 0, JL_INPUT_PTX = 2 };

typedef struct JitLink {
	void *lib;
	JlCreate create;
	JlDestroy destroy;
	JlAddData add;
	JlComplete complete;
	JlSize cubin_size, err_size, info_size;
	JlGet cubin, err, info;
} JitLink;

static bool
jl_open(JitLink *j)
{
	static const char *const names[] = { "libnvJitLink.so.13",
					     "libnvJitLink.so" };
	size_t i;

	memset(j, 0, sizeof *j);
	for (i = 0; i < countof(names) && !j->lib; i++)
		j->lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
	if (!j->lib)
		return false;
	/* dlsym returns void *; converting through a union keeps -Wpedantic
	 * quiet about object-to-function pointer casts. */
#define SYM(field, type, name)                                               \
	do {                                                                 \
		union { void *p; type f; } u_;                               \
		u_.p = dlsym(j->lib, name);                                  \
		j->field = u_.f;                                             \
	} while (0)
	SYM(create, JlCreate, "nvJitLinkCreate");
	SYM(destroy, JlDestroy, "nvJitLinkDestroy");
	SYM(add, JlAddData, "nvJitLinkAddData");
	SYM(complete, JlComplete, "nvJitLinkComplete");
	SYM(cubin_size, JlSize, "nvJitLinkGetLinkedCubinSize");
	SYM(cubin, JlGet, "nvJitLinkGetLinkedCubin");
	SYM(err_size, JlSize, "nvJitLinkGetErrorLogSize");
	SYM(err, JlGet, "nvJitLinkGetErrorLog");
	SYM(info_size, JlSize, "nvJitLinkGetInfoLogSize");
	SYM(info, JlGet, "nvJitLinkGetInfoLog");
#undef SYM
	if (!j->create || !j->destroy || !j->add || !j->complete ||
	    !j->cubin_size || !j->cubin || !j->err_size || !j->err ||
	    !j->info_size || !j->info) {
		dlclose(j->lib);
		j->lib = NULL;
		return false;
	}
	return true;
}

/*
 * nvJitLink is loaded once per process, and compiles on a thread of its
 * own.  Loading it costs about 25 ms, and a thread's first compilation
 * about 30 ms more than its later ones (nvJitLink initializes itself
 * lazily, partly per thread): the matmul took 161 ms cold, 148 ms after a
 * warm-up on another thread and 131 ms after one on the same thread.  So
 * the worker, started with the first compilation, loads the library and
 * compiles an empty kernel for the target while the front end and LLVM
 * run; then it assembles what cg_assemble hands it, and stays warm for
 * the next compilation (libtlx).  When it is busy with another thread's
 * work, or was not started (or this is a forked child), the caller links
 * on its own thread.
 */
static pthread_once_t jl_once = PTHREAD_ONCE_INIT;
static JitLink jl_lib;
static bool jl_ok;

typedef struct JlReq {
	Cg *cg;
	const char *ptx;
	size_t len;
	char **out;
	size_t *size;
	bool ok, done;
	double ms;          /* the link took */
} JlReq;


static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool running;       /* the worker exists (and is ours: not forked) */
	bool busy;          /* it has a request */
	bool settling;      /* it is loading the library or warming up */
	JlReq *req;
	const Target *t;    /* the target it warms up for */
	double t_load, t_warm;  /* ms: dlopen and create, the warm-up */
} jw = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0, 0,
	 NULL, 0, 0 };

static bool jl_link(Cg *cg, JitLink *j, const char *ptx, size_t len,
		    char **out, size_t *size);

const char *const cg_fc_names[5] = { "", "0", "min", "mid", "max" };

/* ptxas's -Ofast-compile level for this compilation, NULL for none (the
 * default).  min cut ptxas's work on the GEMM by a fifth at the same
 * speed, but cost the 4096-wide layer norm 17% of its speed on the H200
 * (bench/RESULTS.md): it stays a choice. */
static const char *
fast_compile(const Cg *cg)
{
	int l = cg->o->fast_compile;

	return cg->o->olevel > 0 && l > CG_FC_OFF ? cg_fc_names[l] : NULL;
}

static void
jl_warm(JitLink *j, const Target *t)
{
	char ptx[160], arch[32];
	const char *opts[2] = { arch, "-O3" };
	JlHandle h = NULL;
	int n;

	snprintf(arch, sizeof arch, "-arch=%s", t->name);
	n = snprintf(ptx, sizeof ptx, ".version %d.%d\n.target %s\n"
		     ".address_size 64\n.visible .entry w() { ret; }\n",
		     t->ptx / 10, t->ptx % 10, t->name);
	if (j->create(&h, 2, opts) != JL_SUCCESS)
		return;
	if (j->add(h, JL_INPUT_PTX, ptx, (size_t)n, "warm.ptx") == JL_SUCCESS)
		(void)j->complete(h);
	j->destroy(&h);
}

static void
jl_load(void)
{
	jl_ok = jl_open(&jl_lib);
}

static void *
jl_worker(void *arg)
{
	double t0 = cg_now_ms();

	(void)arg;
	pthread_once(&jl_once, jl_load);
	jw.t_load = cg_now_ms() - t0;
	pthread_mutex_lock(&jw.mu);
	if (jl_ok && !jw.req) {  /* warm up only while nothing waits */
		pthread_mutex_unlock(&jw.mu);
		t0 = cg_now_ms();
		jl_warm(&jl_lib, jw.t);
		jw.t_warm = cg_now_ms() - t0;
		pthread_mutex_lock(&jw.mu);
	}
	jw.settling = false;
	pthread_cond_broadcast(&jw.cv);
	for (;;) {
		JlReq *r;

		while (!jw.req)
			pthread_cond_wait(&jw.cv, &jw.mu);
		r = jw.req;
		pthread_mutex_unlock(&jw.mu);
		t0 = cg_now_ms();
		r->ok = jl_link(r->cg, &jl_lib, r->ptx, r->len, r->out, r->size);
		r->ms = cg_now_ms() - t0;
		pthread_mutex_lock(&jw.mu);
		r->done = true;
		jw.req = NULL;
		jw.busy = false;
		pthread_cond_broadcast(&jw.cv);
	}
	return NULL;
}

/* a forked child has the state but not the thread */
static void
jl_atfork_child(void)
{
	pthread_mutex_init(&jw.mu, NULL);
	pthread_cond_init(&jw.cv, NULL);
	jw.running = jw.busy = jw.settling = false;
	jw.req = NULL;
}

void
cg_preload_assembler(int sm)
{
	pthread_t t;

	pthread_mutex_lock(&jw.mu);
	if (!jw.running && target_get(sm)) {
		jw.t = target_get(sm);
		jw.settling = true;
		if (pthread_create(&t, NULL, jl_worker, NULL) == 0) {
			pthread_detach(t);
			jw.running = true;
			pthread_atfork(NULL, NULL, jl_atfork_child);
		}
	}
	pthread_mutex_unlock(&jw.mu);
}

/* Returns once the worker is out of nvJitLink's load and warm-up.  A
 * compilation that ends before it assembles (a diagnostic) waits here:
 * the process may exit next, and exit runs the library's destructors
 * under a thread still inside it (a crash seen once in the test suite). */
void
cg_settle_assembler(void)
{
	pthread_mutex_lock(&jw.mu);
	while (jw.running && jw.settling)
		pthread_cond_wait(&jw.cv, &jw.mu);
	pthread_mutex_unlock(&jw.mu);
}

/* The library (loaded on first use), or NULL where it is not installed. */
static JitLink *
jl_get(void)
{
	pthread_once(&jl_once, jl_load);
	return jl_ok ? &jl_lib : NULL;
}

static void
report(Cg *cg, DiagKind k, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	diag_report(cg->d, k, (SrcRange){ 0, 0, 0, 0 }, false, fmt, ap);
	va_end(ap);
}

/* Reports each line of a tool's log: errors as errors, warnings as
 * warnings, the rest (resource usage) as notes when verbose. */
static void
report_log(Cg *cg, const char *tool, const char *log, bool verbose)
{
	const char *p = log, *nl;

	while (p && *p) {
		char line[512];
		size_t n;

		nl = strchr(p, '\n');
		n = nl ? (size_t)(nl - p) : strlen(p);
		snprintf(line, sizeof line, "%.*s", (int)n, p);
		if (strstr(line, "error"))
			report(cg, DIAG_ERROR, "%s: %s", tool, line);
		else if (strstr(line, "warning"))
			report(cg, DIAG_WARNING, "%s: %s", tool, line);
		else if (n && verbose)
			report(cg, DIAG_NOTE, "%s: %s", tool, line);
		p = nl ? nl + 1 : NULL;
	}
}

static char *
jl_log(JitLink *j, JlHandle h, JlSize sizefn, JlGet getfn)
{
	size_t n = 0;
	char *s;

	if (sizefn(h, &n) != JL_SUCCESS || n == 0)
		return NULL;
	s = calloc(1, n + 1);
	if (s && getfn(h, s) != JL_SUCCESS)
		s[0] = 0;
	(void)j;
	return s;
}

static bool
jl_link(Cg *cg, JitLink *j, const char *ptx, size_t len, char **out,
	size_t *size)
{
	const char *opts[5], *fc = fast_compile(cg);
	char arch[32], olevel[16], fcopt[40];
	JlHandle h = NULL;
	uint32_t n = 0;
	char *log;
	bool ok = false;
	int rc;

	snprintf(arch, sizeof arch, "-arch=%s", cg->t->name);
	/* nvJitLink takes only -O0 and -O3 */
	snprintf(olevel, sizeof olevel, "-O%d", cg->o->olevel > 0 ? 3 : 0);
	opts[n++] = arch;
	/* ptxas refuses -O3 (nvJitLink's default) beside -Ofast-compile */
	if (fc) {
		snprintf(fcopt, sizeof fcopt, "-Xptxas=--Ofast-compile=%s", fc);
		opts[n++] = fcopt;
	} else {
		opts[n++] = olevel;
	}
	if (cg->o->lineinfo || cg->o->debug)
		opts[n++] = "-lineinfo";
	if (cg->o->verbose)
		opts[n++] = "-verbose";
	if (j->create(&h, n, opts) != JL_SUCCESS) {
		diag_error_noloc(cg->d, "nvJitLink: cannot create a link for %s",
				 cg->t->name);
		return false;
	}
	rc = j->add(h, JL_INPUT_PTX, ptx, len, "tlx.ptx");
	if (rc == JL_SUCCESS)
		rc = j->complete(h);
	if ((log = jl_log(j, h, j->err_size, j->err))) {
		report_log(cg, "nvJitLink", log, false);
		free(log);
	}
	if (cg->o->verbose && (log = jl_log(j, h, j->info_size, j->info))) {
		report_log(cg, "nvJitLink", log, true);
		free(log);
	}
	if (rc == JL_SUCCESS && j->cubin_size(h, size) == JL_SUCCESS) {
		*out = malloc(*size ? *size : 1);
		ok = *out && j->cubin(h, *out) == JL_SUCCESS;
	}
	if (!ok && cg->d->nerrors == 0)
		diag_error_noloc(cg->d, "nvJitLink failed (code %d)", rc);
	j->destroy(&h);
	return ok;
}

static char *
slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	char *s = NULL;
	long len;

	*n = 0;
	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) >= 0 &&
	    fseek(f, 0, SEEK_SET) == 0 && (s = malloc((size_t)len + 1))) {
		*n = fread(s, 1, (size_t)len, f);
		s[*n] = 0;
	}
	fclose(f);
	return s;
}

static const char *
ptxas_path(Cg *cg)
{
	const char *p = cg->o->ptxas ? cg->o->ptxas : cg_find_ptxas();

	return p ? p : "ptxas";
}

/* Runs ptxas on the PTX; false with a diagnostic when it fails. */
static bool
run_ptxas(Cg *cg, const char *ptx, size_t len, char **out, size_t *size,
	  const char **tool)
{
	char dir[] = "/tmp/tlxc-XXXXXX", in[64], cub[64], logp[64], arch[32];
	char fcopt[40], split[32];
	const char *argv[14], *fc = fast_compile(cg);
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	posix_spawn_file_actions_t fa;
	int argc = 0, status = 0, rc;
	char *log;
	size_t nlog;
	pid_t pid;
	FILE *f;
	bool ok = false;

	*tool = ptxas_path(cg);
	if (!mkdtemp(dir)) {
		diag_error_noloc(cg->d, "cannot create a temporary directory: %s",
				 strerror(errno));
		return false;
	}
	snprintf(in, sizeof in, "%s/k.ptx", dir);
	snprintf(cub, sizeof cub, "%s/k.cubin", dir);
	snprintf(logp, sizeof logp, "%s/log", dir);
	snprintf(arch, sizeof arch, "-arch=%s", cg->t->name);
	if (!(f = fopen(in, "wb")) || fwrite(ptx, 1, len, f) != len) {
		diag_error_noloc(cg->d, "cannot write %s", in);
		if (f)
			fclose(f);
		goto clean;
	}
	fclose(f);
	argv[argc++] = *tool;
	argv[argc++] = arch;
	/* -Ofast-compile implies -O3, and ptxas refuses both together */
	if (fc) {
		snprintf(fcopt, sizeof fcopt, "--Ofast-compile=%s", fc);
		argv[argc++] = fcopt;
	} else {
		argv[argc++] = cg->o->olevel > 0 ? "-O3" : "-O0";
	}
	if (cg->o->lineinfo || cg->o->debug)
		argv[argc++] = "-lineinfo";
	if (cg->o->verbose)
		argv[argc++] = "-v";
	/* the entries of a module on threads of their own (kernel.c,
	 * "Specialized entries"): the matmul's two in the time of one */
	if (cg->entries > 1 && ncpu > 1) {
		snprintf(split, sizeof split, "--split-compile=%ld",
			 MIN((long)cg->entries, ncpu));
		argv[argc++] = split;
	}
	argv[argc++] = in;
	argv[argc++] = "-o";
	argv[argc++] = cub;
	argv[argc] = NULL;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, logp, O_WRONLY | O_CREAT, 0600);
	posix_spawn_file_actions_adddup2(&fa, 1, 2);
	rc = posix_spawnp(&pid, *tool, &fa, NULL, (char *const *)argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (rc != 0 && cg->o->ptxas) {
		diag_error_noloc(cg->d, "cannot run the ptxas given with "
				 "--ptxas, '%s': %s", *tool, strerror(rc));
		goto clean;
	}
	if (rc != 0) {
		diag_error_noloc(cg->d, "cannot produce a cubin: neither "
				 "nvJitLink nor ptxas ('%s': %s) is available; "
				 "install the CUDA toolkit or use --emit=ptx",
				 *tool, strerror(rc));
		goto clean;
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	log = slurp(logp, &nlog);
	ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
	if (log) {
		report_log(cg, "ptxas", log, cg->o->verbose);
		free(log);
	}
	if (ok && !(*out = slurp(cub, size))) {
		diag_error_noloc(cg->d, "ptxas wrote no cubin");
		ok = false;
	}
	if (!ok && cg->d->nerrors == 0)
		diag_error_noloc(cg->d, "ptxas failed");
clean:
	unlink(in);
	unlink(cub);
	unlink(logp);
	rmdir(dir);
	return ok;
}

bool
cg_assemble(Cg *cg, const char *ptx, size_t len, char **cubin, size_t *size,
	    const char **linker)
{
	JitLink *j;

	/* nvJitLink stays loaded: unloading its C++ runtime would leak its
	 * allocations */
	if (!cg->o->use_ptxas && (j = jl_get())) {
		JlReq r = { cg, ptx, len, cubin, size, false, false, 0 };

		*linker = "nvJitLink";
		pthread_mutex_lock(&jw.mu);
		if (jw.running && !jw.busy) {
			double t0 = cg_now_ms();

			jw.busy = true;
			jw.req = &r;
			pthread_cond_broadcast(&jw.cv);
			while (!r.done)
				pthread_cond_wait(&jw.cv, &jw.mu);
			pthread_mutex_unlock(&jw.mu);
			if (cg->timing)
				fprintf(stderr, "codegen: nvJitLink: load %.1f ms "
					"and warm-up %.1f ms on the worker; "
					"waited %.1f ms, linked in %.1f ms\n",
					jw.t_load, jw.t_warm,
					cg_now_ms() - t0 - r.ms, r.ms);
			return r.ok;
		}
		pthread_mutex_unlock(&jw.mu);
		return jl_link(cg, j, ptx, len, cubin, size);
	}
	return run_ptxas(cg, ptx, len, cubin, size, linker);
}

static char ptxas_found[4096];
static pthread_once_t ptxas_once = PTHREAD_ONCE_INIT;

static void
find_ptxas(void)
{
	const char *path = getenv("PATH");

#ifdef PTXAS_PATH
	if (access(PTXAS_PATH, X_OK) == 0) {
		snprintf(ptxas_found, sizeof ptxas_found, "%s", PTXAS_PATH);
		return;
	}
#endif
	while (path && *path) {
		const char *colon = strchr(path, ':');
		size_t n = colon ? (size_t)(colon - path) : strlen(path);

		if (n > 0 && n + 7 < sizeof ptxas_found) {
			snprintf(ptxas_found, sizeof ptxas_found, "%.*s/ptxas",
				 (int)n, path);
			if (access(ptxas_found, X_OK) == 0)
				return;
		}
		path = colon ? colon + 1 : NULL;
	}
	ptxas_found[0] = 0;
}

const char *
cg_find_ptxas(void)
{
	pthread_once(&ptxas_once, find_ptxas);
	return ptxas_found[0] ? ptxas_found : NULL;
}

bool
cg_can_assemble(void)
{
	return cg_find_ptxas() || jl_get();
}
