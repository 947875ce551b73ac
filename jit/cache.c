/*
 * cache.c: the compilation cache on disk.  One file per key:
 *
 *   "TLXCACHE" u32 version | key (16 bytes) | u32 kind |
 *   u64 image size | u64 ir size | u64 checksum | image | ir
 *
 * The checksum covers the kind, the image and the IR.  Only a regular
 * file is read (opened without blocking, so a FIFO or a device at an
 * entry's path is ignored, not waited on).
 * A file is written to a temporary name in the same directory and
 * renamed into place, so readers in other processes see either nothing
 * or a whole file.  A file whose header, size or checksum does not match
 * is ignored (and replaced by the next write).
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "jit/jit.h"
#include "tlx/tlx.h"

enum { CACHE_FORMAT = 2 };
static const char magic[8] = { 'T', 'L', 'X', 'C', 'A', 'C', 'H', 'E' };

typedef struct Header {
	char magic[8];
	uint32_t format, kind;
	uint64_t key[2];
	uint64_t image_size, ir_size, checksum;
} Header;

static void
mix_str(uint64_t h[2], const char *s, size_t n)
{
	h[0] = hash_mix(h[0], hash_bytes(s, n, 0x51ed));
	h[1] = hash_mix(h[1], hash_bytes(s, n, 0xc0ffee));
	h[0] = hash_mix(h[0], n);
}

/* The binary this code is in (libtlx, or a program linked with it
 * statically): its size, time and inode, so that a rebuilt compiler of
 * the same version never reads what the old one wrote. */
static void
mix_build(uint64_t h[2])
{
	Dl_info info;
	struct stat st;
	char tmp[96];

	if (!dladdr((void *)(uintptr_t)mix_build, &info) || !info.dli_fname ||
	    stat(info.dli_fname, &st) != 0)
		return;
	snprintf(tmp, sizeof tmp, "%lld/%lld/%lld", (long long)st.st_size,
		 (long long)st.st_mtime, (long long)st.st_ino);
	mix_str(h, tmp, strlen(tmp));
}

/* The environment's knobs that change the code (A/B experiments,
 * docs/internals.md): their values are in the key. */
static const char *const knobs[] = {
	"TLX_CG_EDGE", "TLX_CG_ELEM_TAIL", "TLX_CG_REALIGN", "TLX_CG_WARP_STORE",
	"TLX_GENERIC_LAYOUTS", "TLX_LLVM_OPTS", "TLX_LLVM_PASSES", "TLX_PEEL_ROWS",
	"TLX_ROW_WARPS", "TLX_VEC_BYTES",
};

CacheKey
cache_key(const Job *j)
{
	uint64_t h[2] = { 0x7f4a7c15, 0x9e3779b9 };
	char tmp[64];
	uint32_t i;

	mix_str(h, PACKAGE_VERSION, strlen(PACKAGE_VERSION));
	mix_str(h, __DATE__ __TIME__, strlen(__DATE__ __TIME__));
	mix_build(h);
	mix_str(h, j->name, strlen(j->name));
	mix_str(h, j->text, j->len);
	snprintf(tmp, sizeof tmp, "%d/%d/%d/%d/%d", j->sm, j->olevel,
		 (int)j->emit, j->lineinfo, j->debug);
	mix_str(h, tmp, strlen(tmp));
	for (i = 0; i < j->ndefs; i++) {
		mix_str(h, j->defs[i].name, strlen(j->defs[i].name));
		mix_str(h, j->defs[i].value, strlen(j->defs[i].value));
	}
	for (i = 0; i < countof(knobs); i++) {
		const char *v = getenv(knobs[i]);

		mix_str(h, knobs[i], strlen(knobs[i]));
		mix_str(h, v ? v : "\1", v ? strlen(v) : 1);
	}
	return (CacheKey){ { h[0], h[1] } };
}

void
cache_key_hex(CacheKey k, char out[33])
{
	snprintf(out, 33, "%016llx%016llx", (unsigned long long)k.h[0],
		 (unsigned long long)k.h[1]);
}

static char *
entry_path(const char *dir, CacheKey k, const char *suffix)
{
	char hex[33];
	size_t n = strlen(dir) + 64;
	char *p = malloc(n);

	if (!p)
		return NULL;
	cache_key_hex(k, hex);
	snprintf(p, n, "%s/%s%s", dir, hex, suffix);
	return p;
}

static uint64_t
checksum(const CacheEntry *e)
{
	return hash_mix(hash_mix(hash_bytes(e->image, e->image_size, 1),
				 hash_bytes(e->ir, e->ir_size, 2)),
			(uint64_t)e->kind);
}

static bool
read_all(int fd, void *p, size_t n)
{
	char *c = p;

	while (n) {
		ssize_t r = read(fd, c, n);

		if (r <= 0) {
			if (r < 0 && errno == EINTR)
				continue;
			return false;
		}
		c += r;
		n -= (size_t)r;
	}
	return true;
}

static bool
write_all(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n) {
		ssize_t r = write(fd, c, n);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return false;
		}
		c += r;
		n -= (size_t)r;
	}
	return true;
}

bool
cache_read(const char *dir, CacheKey k, CacheEntry *e)
{
	char *path = entry_path(dir, k, ".tlxc");
	struct stat st;
	Header h;
	int fd;
	bool ok = false;

	memset(e, 0, sizeof *e);
	e->key = k;
	if (!path)
		return false;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	free(path);
	if (fd < 0)
		return false;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    !read_all(fd, &h, sizeof h) ||
	    memcmp(h.magic, magic, sizeof magic) != 0 ||
	    h.format != CACHE_FORMAT || h.kind > TLX_IMAGE_IR ||
	    h.key[0] != k.h[0] ||
	    h.key[1] != k.h[1] || h.image_size > (1ull << 32) ||
	    h.ir_size > (1ull << 32) ||
	    (uint64_t)st.st_size != sizeof h + h.image_size + h.ir_size)
		goto out;
	e->kind = (int)h.kind;
	e->image_size = h.image_size;
	e->ir_size = h.ir_size;
	e->image = malloc(h.image_size + 1);
	e->ir = malloc(h.ir_size + 1);
	if (!e->image || !e->ir || !read_all(fd, e->image, h.image_size) ||
	    !read_all(fd, e->ir, h.ir_size))
		goto out;
	e->image[h.image_size] = 0;
	e->ir[h.ir_size] = 0;
	ok = checksum(e) == h.checksum;
out:
	close(fd);
	if (!ok)
		cache_entry_free(e);
	return ok;
}

static bool
make_dirs(const char *dir)
{
	char *p = strdup(dir), *s;
	bool ok = true;

	if (!p)
		return false;
	for (s = p + 1; *s && ok; s++) {
		if (*s != '/')
			continue;
		*s = 0;
		ok = mkdir(p, 0755) == 0 || errno == EEXIST;
		*s = '/';
	}
	ok = ok && (mkdir(p, 0755) == 0 || errno == EEXIST);
	free(p);
	return ok;
}

bool
cache_write(const char *dir, const CacheEntry *e)
{
	char suffix[64];
	char *tmp, *path;
	Header h = { .format = CACHE_FORMAT, .kind = (uint32_t)e->kind };
	int fd;
	bool ok;

	if (!make_dirs(dir))
		return false;
	snprintf(suffix, sizeof suffix, ".tmp.%ld.%lx", (long)getpid(),
		 (unsigned long)(uintptr_t)&h ^ (unsigned long)e->image_size);
	tmp = entry_path(dir, e->key, suffix);
	path = entry_path(dir, e->key, ".tlxc");
	if (!tmp || !path) {
		free(tmp);
		free(path);
		return false;
	}
	memcpy(h.magic, magic, sizeof magic);
	h.key[0] = e->key.h[0];
	h.key[1] = e->key.h[1];
	h.image_size = e->image_size;
	h.ir_size = e->ir_size;
	h.checksum = checksum(e);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	ok = fd >= 0 && write_all(fd, &h, sizeof h) &&
	     write_all(fd, e->image, e->image_size) &&
	     write_all(fd, e->ir, e->ir_size);
	if (fd >= 0)
		ok = close(fd) == 0 && ok;
	ok = ok && rename(tmp, path) == 0;
	if (!ok)
		unlink(tmp);
	free(tmp);
	free(path);
	return ok;
}

void
cache_entry_free(CacheEntry *e)
{
	free(e->image);
	free(e->ir);
	e->image = e->ir = NULL;
	e->image_size = e->ir_size = 0;
}

char *
cache_default_dir(void)
{
	const char *d = getenv("TLX_CACHE_DIR"), *base;
	char *p;
	size_t n;

	if (d && *d)
		return strdup(d);
	if ((base = getenv("XDG_CACHE_HOME")) && *base) {
		n = strlen(base) + 8;
		if ((p = malloc(n)))
			snprintf(p, n, "%s/tlx", base);
		return p;
	}
	if (!(base = getenv("HOME")) || !*base)
		return NULL;
	n = strlen(base) + 16;
	if ((p = malloc(n)))
		snprintf(p, n, "%s/.cache/tlx", base);
	return p;
}
