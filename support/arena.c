/*
 * arena.c: bump allocation in chunks, freed all at once.  Exhaustion
 * longjmps to the arena's `oom` buffer (the API boundary), as Lua does.
 */
#ifdef HAVE_CONFIG_H /* the GPU machine builds the runtime without configure */
#include "config.h"
#endif

#include <stdlib.h>
#include <string.h>

#include "support.h"

struct ArenaChunk {
	ArenaChunk *next;
	ArenaChunk *snext, **sprev;  /* on its scope's list */
	AllocFn alloc;
	void *ud;
	size_t size, used;
	_Alignas(16) unsigned char data[];
};

static _Thread_local OomScope *cur_scope;

enum { CHUNK_MIN = 64 * 1024 };

#ifdef TLX_CHECKING
static long fail_countdown;

void
tlx_alloc_fail_at(long n)
{
	__atomic_store_n(&fail_countdown, n, __ATOMIC_SEQ_CST);
}

static bool
injected(void)
{
	return __atomic_load_n(&fail_countdown, __ATOMIC_SEQ_CST) > 0 &&
	       __atomic_sub_fetch(&fail_countdown, 1, __ATOMIC_SEQ_CST) == 0;
}
#else
void
tlx_alloc_fail_at(long n)
{
	(void)n;
}

static bool
injected(void)
{
	return false;
}
#endif

void *
tlx_malloc(size_t n)
{
	return injected() ? NULL : malloc(n);
}

void *
tlx_calloc(size_t n, size_t size)
{
	return injected() ? NULL : calloc(n, size);
}

void *
tlx_realloc(void *p, size_t n)
{
	return injected() ? NULL : realloc(p, n);
}

void *
default_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
	(void)ud;
	(void)osize;
	if (nsize == 0) {
		free(ptr);
		return NULL;
	}
	return tlx_realloc(ptr, nsize);
}

void
tlx_bug_at(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "tlx: internal compiler error at %s:%d: ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

void
oom_scope_enter(OomScope *s, AllocFn alloc, void *ud)
{
	if (!alloc && cur_scope) {  /* a nested scope: the same allocator */
		alloc = cur_scope->alloc;
		ud = cur_scope->ud;
	}
	s->alloc = alloc ? alloc : default_alloc;
	s->ud = ud;
	s->chunks = NULL;
	s->up = cur_scope;
	cur_scope = s;
}

static void
chunk_unlink(ArenaChunk *c)
{
	if (!c->sprev)
		return;
	*c->sprev = c->snext;
	if (c->snext)
		c->snext->sprev = c->sprev;
	c->snext = NULL;
	c->sprev = NULL;
}

void
oom_scope_unwind(OomScope *s)
{
	while (s->chunks) {
		ArenaChunk *c = s->chunks;

		chunk_unlink(c);
		c->alloc(c->ud, c, sizeof *c + c->size, 0);
	}
}

void
oom_scope_leave(OomScope *s)
{
	if (s->chunks)
		tlx_bug("an arena made in a scope outlives it");
	cur_scope = s->up;
}

OomScope *
oom_scope_current(void)
{
	return cur_scope;
}

void
oom_raise(void)
{
	if (cur_scope)
		longjmp(cur_scope->jb, 1);
	fprintf(stderr, "tlx: out of memory\n");
	abort();
}

void
arena_init(Arena *a, AllocFn alloc, void *ud, jmp_buf *oom)
{
	memset(a, 0, sizeof *a);
	a->scope = cur_scope;
	if (!alloc && cur_scope) {
		alloc = cur_scope->alloc;
		ud = cur_scope->ud;
	}
	a->alloc = alloc ? alloc : default_alloc;
	a->ud = ud;
	a->oom = oom;
}

static TLX_NORETURN void
out_of_memory(Arena *a)
{
	if (a->oom)
		longjmp(*a->oom, 1);
	oom_raise();
}

static void
chunk_free(Arena *a, ArenaChunk *c)
{
	chunk_unlink(c);
	a->alloc(a->ud, c, sizeof *c + c->size, 0);
}

static ArenaChunk *
new_chunk(Arena *a, size_t need)
{
	size_t size = need > CHUNK_MIN ? need : CHUNK_MIN;
	ArenaChunk *c;

	if (a->fail_after > 0 && --a->fail_after == 0)
		out_of_memory(a);
	c = a->alloc(a->ud, NULL, 0, sizeof *c + size);
	if (!c)
		out_of_memory(a);
	c->size = size;
	c->used = 0;
	c->alloc = a->alloc;
	c->ud = a->ud;
	c->snext = NULL;
	c->sprev = NULL;
	if (a->scope) {
		c->snext = a->scope->chunks;
		if (c->snext)
			c->snext->sprev = &c->snext;
		c->sprev = &a->scope->chunks;
		a->scope->chunks = c;
	}
	c->next = a->head;
	a->head = c;
	a->total += sizeof *c + size;
	return c;
}

void *
arena_alloc(Arena *a, size_t n)
{
	ArenaChunk *c = a->head;
	void *p;

	n = (n + 15) & ~(size_t)15;
	if (n == 0)
		n = 16;
	if (!c || c->size - c->used < n)
		c = new_chunk(a, n);
	p = c->data + c->used;
	c->used += n;
	memset(p, 0, n);
	return p;
}

void *
arena_dup(Arena *a, const void *p, size_t n)
{
	void *q = arena_alloc(a, n);

	if (n)
		memcpy(q, p, n);
	return q;
}

char *
arena_strndup(Arena *a, const char *s, size_t n)
{
	char *q = arena_alloc(a, n + 1);

	memcpy(q, s, n);
	q[n] = 0;
	return q;
}

char *
arena_strdup(Arena *a, const char *s)
{
	return arena_strndup(a, s, strlen(s));
}

char *
arena_vprintf(Arena *a, const char *fmt, va_list ap)
{
	va_list aq;
	int n;
	char *s;

	va_copy(aq, ap);
	n = vsnprintf(NULL, 0, fmt, aq);
	va_end(aq);
	if (n < 0)
		n = 0;
	s = arena_alloc(a, (size_t)n + 1);
	vsnprintf(s, (size_t)n + 1, fmt, ap);
	return s;
}

char *
arena_printf(Arena *a, const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	s = arena_vprintf(a, fmt, ap);
	va_end(ap);
	return s;
}

void
arena_reset(Arena *a)
{
	ArenaChunk *c, *next;

	for (c = a->head; c; c = next) {
		next = c->next;
		chunk_free(a, c);
	}
	a->head = NULL;
	a->total = 0;
}

ArenaMark
arena_mark(Arena *a)
{
	return (ArenaMark){ a->head, a->head ? a->head->used : 0 };
}

void
arena_release(Arena *a, ArenaMark m)
{
	while (a->head && a->head != m.chunk) {
		ArenaChunk *c = a->head;

		a->head = c->next;
		a->total -= sizeof *c + c->size;
		chunk_free(a, c);
	}
	if (a->head)
		a->head->used = m.used;
}

void
vec_grow_(Arena *a, void **v, uint32_t *cap, size_t esz)
{
	uint32_t ncap = *cap ? *cap * 2 : 8;
	void *nv = arena_alloc(a, ncap * esz);

	if (*cap)
		memcpy(nv, *v, *cap * esz);
	*v = nv;
	*cap = ncap;
}

void
buf_put(Buf *b, const char *s, size_t n)
{
	if (b->n + n + 1 > b->cap) {
		size_t ncap = b->cap ? b->cap : 256;

		while (ncap < b->n + n + 1)
			ncap *= 2;
		char *ns = tlx_realloc(b->s, ncap);

		if (!ns)
			oom_raise();  /* b keeps its old text for its owner to free */
		b->s = ns;
		b->cap = ncap;
	}
	memcpy(b->s + b->n, s, n);
	b->n += n;
	b->s[b->n] = 0;
}

void
buf_puts(Buf *b, const char *s)
{
	buf_put(b, s, strlen(s));
}

void
buf_putc(Buf *b, char c)
{
	buf_put(b, &c, 1);
}

void
buf_vprintf(Buf *b, const char *fmt, va_list ap)
{
	char tmp[256];
	va_list aq;
	int n;

	va_copy(aq, ap);
	n = vsnprintf(tmp, sizeof tmp, fmt, aq);
	va_end(aq);
	if (n < 0)
		return;
	if ((size_t)n < sizeof tmp) {
		buf_put(b, tmp, (size_t)n);
		return;
	}
	buf_put(b, "", 0);
	{
		char *s = malloc((size_t)n + 1);

		if (!s)
			abort();
		vsnprintf(s, (size_t)n + 1, fmt, ap);
		buf_put(b, s, (size_t)n);
		free(s);
	}
}

void
buf_printf(Buf *b, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	buf_vprintf(b, fmt, ap);
	va_end(ap);
}

void
buf_free(Buf *b)
{
	free(b->s);
	b->s = NULL;
	b->n = b->cap = 0;
}
