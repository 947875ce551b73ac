/*
 * oom_test: allocation-failure injection, as SQLite does it.  Each case
 * (a source file, an emit kind) is compiled through libtlx with an
 * allocator that fails its N-th call, for N = 1, 2, ... until a run makes
 * fewer than N calls.  Every run, in a child process of its own, must
 * return TLX_OK or TLX_NOMEM -- never abort or crash -- and free every
 * byte it took once the module and the context are destroyed (and, under
 * LeakSanitizer, lose nothing from malloc either).  The same
 * compilation runs twice per context (the second from the memory cache).
 * The third kind is tuning's: tlx_check, then the tuning space of the
 * kernel named as the file (tlx_tune_space_create and _check).
 *
 *   oom_test [-v] FILE...     each FILE as IR, as PTX, and checked
 */
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../unit/test.h"
#include "tlx/tlx.h"

typedef struct Counter {
	long calls, fail_at;
	long long live;   /* bytes held */
	long nlive;       /* blocks held */
	bool failed;      /* the failure was injected */
} Counter;

static void *
count_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
	Counter *c = ud;
	void *p;

	if (nsize == 0) {
		if (ptr) {
			c->live -= (long long)osize;
			c->nlive--;
		}
		free(ptr);
		return NULL;
	}
	if (++c->calls == c->fail_at) {
		c->failed = true;
		return NULL;
	}
	p = realloc(ptr, nsize);
	if (p) {
		c->live += (long long)nsize - (ptr ? (long long)osize : 0);
		if (!ptr)
			c->nlive++;
	}
	return p;
}

enum { R_DONE = 0, R_NOMEM = 1, R_BAD = 2 };

/* With LeakSanitizer (the checking build): memory from malloc that the
 * run lost, which the counting allocator does not see. */
extern int __lsan_do_recoverable_leak_check(void) __attribute__((weak));

/* tlx_check, then the space of the kernel named as the file: its
 * reading and a check of its constraints. */
static int
check_once(tlx_ctx *ctx, const char *src, size_t len, const char *name,
	   int *rc2)
{
	tlx_options o = { .name = name };
	tlx_tune_space *s = NULL;
	char kernel[256];
	int rc, ok;

	snprintf(kernel, sizeof kernel, "%.*s", (int)strcspn(name, "."), name);
	rc = tlx_check(ctx, src, len, &o);
	if (rc == TLX_OK)
		rc = tlx_tune_space_create(ctx, src, len, &o, kernel, &s);
	if (rc == TLX_OK)
		*rc2 = tlx_tune_space_check(ctx, s, NULL, 0, &ok);
	tlx_tune_space_destroy(s);
	return rc;
}

/* One run with the N-th allocation failing: R_DONE when no allocation
 * failed and both compilations succeeded, R_NOMEM when one failed and
 * the calls said so (or recovered), R_BAD otherwise (with a message). */
static int
run_once(const char *src, size_t len, const char *name, int emit, long n)
{
	Counter c = { .fail_at = n };
	tlx_options o = { .name = name, .emit = emit };
	tlx_ctx *ctx = NULL;
	tlx_module *m = NULL, *m2 = NULL;
	int rc, rc2 = TLX_OK, bad = 0;

	rc = tlx_ctx_create(count_alloc, &c, &ctx);
	if (rc == TLX_OK && emit < 0) {
		rc = check_once(ctx, src, len, name, &rc2);
	} else if (rc == TLX_OK) {
		tlx_cache_set_dir(ctx, NULL);
		rc = tlx_compile(ctx, src, len, &o, &m);
		if (rc == TLX_OK)
			rc2 = tlx_compile(ctx, src, len, &o, &m2);
	}
	if ((rc != TLX_OK && rc != TLX_NOMEM) ||
	    (rc2 != TLX_OK && rc2 != TLX_NOMEM)) {
		fprintf(stderr, "%s: allocation %ld failed: status %d/%d: %s\n",
			name, n, rc, rc2, ctx ? tlx_errmsg(ctx) : "");
		bad = 1;
	}
	if (!c.failed && (rc != TLX_OK || rc2 != TLX_OK)) {
		fprintf(stderr, "%s: no allocation failed, yet status %d/%d\n",
			name, rc, rc2);
		bad = 1;
	}
	tlx_module_destroy(m);
	tlx_module_destroy(m2);
	tlx_ctx_destroy(ctx);
	if (c.nlive || c.live) {
		fprintf(stderr, "%s: allocation %ld failed: %ld blocks (%lld "
			"bytes) never freed\n", name, n, c.nlive, c.live);
		bad = 1;
	}
	return bad ? R_BAD : c.failed ? R_NOMEM : R_DONE;
}

static int
run_child(const char *src, size_t len, const char *name, int emit, long n)
{
	pid_t pid;
	int st;

	fflush(stderr);
	if ((pid = fork()) < 0)
		return R_BAD;
	if (pid == 0) {
		int r = run_once(src, len, name, emit, n);

		if (__lsan_do_recoverable_leak_check &&
		    __lsan_do_recoverable_leak_check()) {
			fprintf(stderr, "%s: allocation %ld failed: memory from "
				"malloc leaked (above)\n", name, n);
			r = R_BAD;
		}
		_exit(r);
	}
	if (waitpid(pid, &st, 0) != pid)
		return R_BAD;
	if (WIFSIGNALED(st)) {
		fprintf(stderr, "%s: allocation %ld failed: killed by signal %d\n",
			name, n, WTERMSIG(st));
		return R_BAD;
	}
	return WIFEXITED(st) && WEXITSTATUS(st) <= R_BAD ? WEXITSTATUS(st) : R_BAD;
}

static char *src;  /* the file being run: reachable, not a leak, in children */

static char *
slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *s = NULL;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 &&
	    fseek(f, 0, SEEK_SET) == 0 && (s = malloc((size_t)n + 1)) &&
	    fread(s, 1, (size_t)n, f) == (size_t)n) {
		s[n] = 0;
		*len = (size_t)n;
	} else {
		free(s);
		s = NULL;
	}
	fclose(f);
	return s;
}

int
main(int argc, char **argv)
{
	static const struct { int emit; const char *what; } kinds[] = {
		{ TLX_EMIT_IR, "ir" }, { TLX_EMIT_PTX, "ptx" },
		{ -1, "check" },
	};
	bool verbose = argc > 1 && !strcmp(argv[1], "-v");
	int i, k;

	for (i = 1 + verbose; i < argc; i++) {
		size_t len = 0;
		const char *base = strrchr(argv[i], '/');

		src = slurp(argv[i], &len);
		base = base ? base + 1 : argv[i];
		CHECK(src != NULL);
		for (k = 0; src && k < 3; k++) {
			long n, bad = 0;
			int r = R_NOMEM;

			for (n = 1; r != R_DONE && n < 100000; n++) {
				r = run_child(src, len, base, kinds[k].emit, n);
				bad += r == R_BAD;
			}
			printf("%s %s: %ld failure points, %ld bad\n", base,
			       kinds[k].what, n - 2, bad);
			CHECK(r == R_DONE);
			test_failures += (int)bad;
		}
		free(src);
	}
	TEST_MAIN_END();
}
