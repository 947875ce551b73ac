/*
 * jit_test: libtlx (include/tlx/tlx.h) through its public API only --
 * compiling a kernel from a string, loading the image with libtlxrt and
 * running it, the memory and disk caches (hit, miss, a damaged file
 * detected and rewritten), const overrides, errors.
 *
 *   jit_test CACHE_DIR
 */
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../unit/test.h"
#include "tlx/tlx.h"
#include "tlx/tlxrt.h"

static const char vadd[] =
	"kernel vadd(x: *f32, y: *f32, out: *f32, n: i32, const BLOCK: i32 = 256)\n"
	"    warps(4) grid(cdiv(n, BLOCK))\n"
	"{\n"
	"    let offs = program_id(0) * BLOCK + range(BLOCK);\n"
	"    let m = offs < n;\n"
	"    store(out + offs, load(x + offs, mask: m) * 2.0 + load(y + offs, mask: m), mask: m);\n"
	"}\n";

/* Runs the image's vadd on the simulator; returns the wrong elements. */
static int
run_vadd(const void *image, size_t size, int n)
{
	tlxrt_device *dev;
	tlxrt_module *m;
	tlxrt_kernel *k;
	tlxrt_ptr dx, dy, dout;
	tlxrt_arg a[4];
	float *x = malloc((size_t)n * 4), *y = malloc((size_t)n * 4),
	      *out = malloc((size_t)n * 4);
	int i, bad = 0;

	CHECK(tlxrt_device_open("sim", &dev) == TLXRT_OK);
	CHECK(tlxrt_module_load(dev, image, size, &m) == TLXRT_OK);
	CHECK(tlxrt_kernel_get(m, "vadd", &k) == TLXRT_OK);
	for (i = 0; i < n; i++) {
		x[i] = (float)i * 0.25f;
		y[i] = (float)(n - i);
	}
	tlxrt_malloc(dev, (size_t)n * 4, &dx);
	tlxrt_malloc(dev, (size_t)n * 4, &dy);
	tlxrt_malloc(dev, (size_t)n * 4, &dout);
	tlxrt_memcpy_htod(dev, dx, x, (size_t)n * 4);
	tlxrt_memcpy_htod(dev, dy, y, (size_t)n * 4);
	tlxrt_memset(dev, dout, 0xff, (size_t)n * 4);
	a[0] = tlxrt_arg_ptr(dx);
	a[1] = tlxrt_arg_ptr(dy);
	a[2] = tlxrt_arg_ptr(dout);
	a[3] = tlxrt_arg_i32(n);
	ASSERT(TLXRT_OK, tlxrt_launch(k, NULL, a, 4));
	tlxrt_memcpy_dtoh(dev, out, dout, (size_t)n * 4);
	for (i = 0; i < n; i++)
		bad += out[i] != x[i] * 2.0f + y[i];
	tlxrt_module_unload(m);
	tlxrt_device_close(dev);
	free(x);
	free(y);
	free(out);
	return bad;
}

static int
count_entries(const char *dir, char *first, size_t len)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d)))
		if (strstr(e->d_name, ".tlxc")) {
			if (!n++)
				snprintf(first, len, "%s/%s", dir, e->d_name);
		}
	closedir(d);
	return n;
}

static void
test_compile_and_run(const char *dir)
{
	tlx_ctx *c;
	tlx_module *m, *m2, *m3;
	tlx_options o = { .name = "vadd.tlx", .emit = TLX_EMIT_CUBIN };
	const void *img;
	size_t size;
	int kind, from;
	char path[1024];
	FILE *f;

	ASSERT(TLX_OK, tlx_ctx_create(NULL, NULL, &c));
	ASSERT(TLX_OK, tlx_cache_set_dir(c, dir));
	/* a miss: compiled and written to the disk cache */
	ASSERT(TLX_OK, tlx_compile(c, vadd, sizeof vadd - 1, &o, &m));
	ASSERT(TLX_OK, tlx_module_cached(m, &from));
	ASSERT(0, from);
	ASSERT(TLX_OK, tlx_module_image(m, &img, &size, &kind));
	CHECK(kind == TLX_IMAGE_CUBIN || kind == TLX_IMAGE_PTX);
	CHECK(size > 100);
	ASSERT(0, run_vadd(img, size, 1000));
	ASSERT(1, count_entries(dir, path, sizeof path));
	/* the same compilation again: the memory cache */
	ASSERT(TLX_OK, tlx_compile(c, vadd, sizeof vadd - 1, &o, &m2));
	tlx_module_cached(m2, &from);
	ASSERT(1, from);
	tlx_module_destroy(m2);
	tlx_ctx_destroy(c);

	/* a new context (another process, say): the disk cache */
	ASSERT(TLX_OK, tlx_ctx_create(NULL, NULL, &c));
	ASSERT(TLX_OK, tlx_cache_set_dir(c, dir));
	ASSERT(TLX_OK, tlx_compile(c, vadd, sizeof vadd - 1, &o, &m2));
	tlx_module_cached(m2, &from);
	ASSERT(2, from);
	ASSERT(TLX_OK, tlx_module_image(m2, &img, &size, &kind));
	ASSERT(0, run_vadd(img, size, 777));
	tlx_module_destroy(m2);
	tlx_ctx_destroy(c);

	/* damage the file: detected, recompiled, rewritten */
	CHECK((f = fopen(path, "r+b")) != NULL);
	if (f) {
		fseek(f, 100, SEEK_SET);
		fputc(0x5a, f);
		fputc(0xa5, f);
		fclose(f);
	}
	ASSERT(TLX_OK, tlx_ctx_create(NULL, NULL, &c));
	ASSERT(TLX_OK, tlx_cache_set_dir(c, dir));
	ASSERT(TLX_OK, tlx_compile(c, vadd, sizeof vadd - 1, &o, &m3));
	tlx_module_cached(m3, &from);
	ASSERT(0, from);
	ASSERT(TLX_OK, tlx_module_image(m3, &img, &size, &kind));
	ASSERT(0, run_vadd(img, size, 500));
	tlx_module_destroy(m3);
	tlx_ctx_destroy(c);
	ASSERT(TLX_OK, tlx_ctx_create(NULL, NULL, &c));
	ASSERT(TLX_OK, tlx_cache_set_dir(c, dir));
	ASSERT(TLX_OK, tlx_compile(c, vadd, sizeof vadd - 1, &o, &m3));
	tlx_module_cached(m3, &from);
	ASSERT(2, from);  /* the rewritten file is good again */
	tlx_module_destroy(m3);
	/* a truncated file is a miss too */
	CHECK(truncate(path, 40) == 0);
	tlx_cache_clear(c);
	ASSERT(TLX_OK, tlx_compile(c, vadd, sizeof vadd - 1, &o, &m3));
	tlx_module_cached(m3, &from);
	ASSERT(0, from);
	tlx_module_destroy(m3);
	/* the kind field (after the magic and the format) is checksummed:
	 * a cubin flipped to "PTX" was served as PTX */
	CHECK((f = fopen(path, "r+b")) != NULL);
	if (f) {
		uint32_t k;

		fseek(f, 12, SEEK_SET);
		CHECK(fread(&k, sizeof k, 1, f) == 1);
		k ^= 1;
		fseek(f, 12, SEEK_SET);
		fwrite(&k, sizeof k, 1, f);
		fclose(f);
	}
	tlx_cache_clear(c);
	ASSERT(TLX_OK, tlx_compile(c, vadd, sizeof vadd - 1, &o, &m3));
	tlx_module_cached(m3, &from);
	ASSERT(0, from);
	ASSERT(TLX_OK, tlx_module_image(m3, &img, &size, &kind));
	ASSERT(0, run_vadd(img, size, 300));
	tlx_module_destroy(m3);
	/* a FIFO at the entry's path is not opened for reading (which waited
	 * for a writer forever): a miss, and the entry is written again */
	CHECK(unlink(path) == 0);
	CHECK(mkfifo(path, 0644) == 0);
	tlx_cache_clear(c);
	alarm(20);
	ASSERT(TLX_OK, tlx_compile(c, vadd, sizeof vadd - 1, &o, &m3));
	alarm(0);
	tlx_module_cached(m3, &from);
	ASSERT(0, from);
	tlx_module_destroy(m3);
	/* a knob of the environment that changes the code (docs/internals.md)
	 * is in the key: a miss, then a hit under the same value */
	setenv("TLX_PEEL_ROWS", "none", 1);
	ASSERT(TLX_OK, tlx_compile(c, vadd, sizeof vadd - 1, &o, &m3));
	tlx_module_cached(m3, &from);
	ASSERT(0, from);
	tlx_module_destroy(m3);
	ASSERT(TLX_OK, tlx_compile(c, vadd, sizeof vadd - 1, &o, &m3));
	tlx_module_cached(m3, &from);
	ASSERT(1, from);
	tlx_module_destroy(m3);
	unsetenv("TLX_PEEL_ROWS");
	tlx_module_destroy(m);
	tlx_ctx_destroy(c);
}

static void
test_overrides_and_kinds(void)
{
	tlx_ctx *c;
	tlx_module *a, *b;
	const char *defs[] = { "BLOCK=64" };
	tlx_options o = { .emit = TLX_EMIT_IR };
	const char *ir;
	int from;

	ASSERT(TLX_OK, tlx_ctx_create(NULL, NULL, &c));
	ASSERT(TLX_OK, tlx_cache_set_dir(c, NULL));
	ASSERT(TLX_OK, tlx_compile(c, vadd, sizeof vadd - 1, &o, &a));
	ASSERT(TLX_OK, tlx_module_ir(a, &ir));
	CHECK(strstr(ir, "const.BLOCK = 256") != NULL);
	o.defines = defs;
	o.ndefines = 1;
	ASSERT(TLX_OK, tlx_compile(c, vadd, sizeof vadd - 1, &o, &b));
	tlx_module_cached(b, &from);
	ASSERT(0, from);  /* another key */
	ASSERT(TLX_OK, tlx_module_ir(b, &ir));
	CHECK(strstr(ir, "const.BLOCK = 64") != NULL);
	tlx_module_destroy(a);
	tlx_module_destroy(b);
	/* the IR image runs on the simulator too */
	o.ndefines = 0;
	ASSERT(TLX_OK, tlx_compile(c, vadd, sizeof vadd - 1, &o, &a));
	{
		const void *img;
		size_t size;
		int kind;

		tlx_module_image(a, &img, &size, &kind);
		ASSERT(TLX_IMAGE_IR, kind);
		ASSERT(0, run_vadd(img, size, 300));
	}
	tlx_module_destroy(a);
	tlx_ctx_destroy(c);
}

static void
test_errors(void)
{
	static const char bad[] = "kernel k(x: *f32) {\n    let y = z + 1;\n}\n";
	const char *defs[] = { "NOEQUALS" };
	tlx_options o = { .name = "bad.tlx", .emit = TLX_EMIT_IR };
	tlx_ctx *c;
	tlx_module *m = (tlx_module *)1;

	ASSERT(TLX_OK, tlx_ctx_create(NULL, NULL, &c));
	tlx_cache_set_dir(c, NULL);
	ASSERT(TLX_COMPILE, tlx_compile(c, bad, sizeof bad - 1, &o, &m));
	CHECK(m == NULL);
	CHECK(strstr(tlx_errmsg(c), "bad.tlx:2:13: error: unknown name 'z'") != NULL);
	o.target = "sm_42";
	ASSERT(TLX_MISUSE, tlx_compile(c, vadd, sizeof vadd - 1, &o, &m));
	CHECK(strstr(tlx_errmsg(c), "unknown target 'sm_42'") != NULL);
	o.target = NULL;
	o.defines = defs;
	o.ndefines = 1;
	ASSERT(TLX_MISUSE, tlx_compile(c, vadd, sizeof vadd - 1, &o, &m));
	ASSERT(TLX_MISUSE, tlx_compile(NULL, vadd, 1, NULL, &m));
	ASSERT(TLX_MISUSE, tlx_compile(c, NULL, 1, NULL, &m));
	ASSERT(TLX_MISUSE, tlx_module_image(NULL, NULL, NULL, NULL));
	tlx_module_destroy(NULL);
	tlx_ctx_destroy(c);
	tlx_ctx_destroy(NULL);
	CHECK(strcmp(tlx_errstr(TLX_COMPILE), "the source has errors") == 0);
	ASSERT(TLX_VERSION_NUMBER, tlx_libversion_number());
	CHECK(strcmp(tlx_libversion(), TLX_VERSION) == 0);
}

/* One compilation to a cubin (or PTX where nothing assembles) with its own
 * context and BLOCK, run on the simulator.  Returns the number of things
 * that went wrong (threads do not touch the shared failure count). */
static void *
compile_one(void *arg)
{
	char def[32];
	const char *defs[1] = { def };
	tlx_options o = { .name = "vadd.tlx", .emit = TLX_EMIT_CUBIN,
			  .defines = defs, .ndefines = 1, .no_cache = 1 };
	tlx_ctx *c;
	tlx_module *m;
	const void *img;
	size_t size;
	int kind;
	intptr_t bad = 0;

	snprintf(def, sizeof def, "BLOCK=%d", (int)(intptr_t)arg);
	if (tlx_ctx_create(NULL, NULL, &c) != TLX_OK)
		return (void *)1;
	if (tlx_compile(c, vadd, sizeof vadd - 1, &o, &m) != TLX_OK) {
		fprintf(stderr, "compile: %s\n", tlx_errmsg(c));
		bad = 1;
	} else {
		bad += tlx_module_image(m, &img, &size, &kind) != TLX_OK ||
		       (kind != TLX_IMAGE_CUBIN && kind != TLX_IMAGE_PTX);
		bad += bad == 0 && run_vadd(img, size, 777) != 0;
		tlx_module_destroy(m);
	}
	tlx_ctx_destroy(c);
	return (void *)bad;
}

/* Compilations from several threads at once: the assembler's worker
 * takes one, the others link on their own threads.  Then a forked child,
 * which has the worker's state but not its thread, compiles too. */
static void
test_threads_and_fork(void)
{
	pthread_t t[4];
	void *bad;
	int i, status = -1;
	pid_t pid;

	for (i = 0; i < 4; i++)
		ASSERT(0, pthread_create(&t[i], NULL, compile_one,
					 (void *)(intptr_t)(64 << i)));
	for (i = 0; i < 4; i++) {
		pthread_join(t[i], &bad);
		ASSERT(0, (int)(intptr_t)bad);
	}
	fflush(NULL);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0)
		_exit(compile_one((void *)(intptr_t)32) != NULL);
	CHECK(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

int
main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: jit_test CACHE_DIR\n");
		return 2;
	}
	mkdir(argv[1], 0755);
	test_compile_and_run(argv[1]);
	test_overrides_and_kinds();
	test_errors();
	test_threads_and_fork();
	TEST_MAIN_END();
}
