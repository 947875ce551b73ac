/*
 * support.h: the one internal header of support/ -- arenas, growable
 * arrays, string interning, hashing, the source manager and diagnostics.
 * Nothing here knows about tlx.  Each section below belongs to one .c file.
 */
#ifndef TLX_SUPPORT_H
#define TLX_SUPPORT_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#if defined(__GNUC__)
#define TLX_INTERNAL __attribute__((visibility("hidden")))
#define TLX_PRINTF(a, b) __attribute__((format(printf, a, b)))
#define TLX_NORETURN __attribute__((noreturn))
#else
#define TLX_INTERNAL
#define TLX_PRINTF(a, b)
#define TLX_NORETURN
#endif

#define countof(a) (sizeof(a) / sizeof((a)[0]))
#define MAX(a, b) ((a) > (b) ? (a) : (b))
#define MIN(a, b) ((a) < (b) ? (a) : (b))

/* Compiler bugs: print where, then abort.  Never for user errors. */
TLX_NORETURN void tlx_bug_at(const char *file, int line, const char *fmt, ...)
	TLX_PRINTF(3, 4);
#define tlx_bug(...) tlx_bug_at(__FILE__, __LINE__, __VA_ARGS__)
/* Defensive checks (SQLite): true in release, checked in debug builds. */
#ifdef NDEBUG
#define ALWAYS(x) (x)
#define NEVER(x) (x)
#else
#define ALWAYS(x) ((x) ? 1 : (tlx_bug("ALWAYS(%s) failed", #x), 0))
#define NEVER(x) ((x) ? (tlx_bug("NEVER(%s) failed", #x), 1) : 0)
#endif

/* ---- arena.c: malloc, arenas, buffers -------------------------------- */

/* malloc and its kin for libtlxrt, the simulator and the default arena
 * allocator.  In checking builds (TLX_CHECKING) tlx_alloc_fail_at(n)
 * makes the n-th call from then on fail (0: none), for the
 * allocation-failure tests. */
void *tlx_malloc(size_t n);
void *tlx_calloc(size_t n, size_t size);
void *tlx_realloc(void *p, size_t n);
void tlx_alloc_fail_at(long n);


/* Lua's allocator contract: nsize == 0 frees, else (re)allocates. */
typedef void *(*AllocFn)(void *ud, void *ptr, size_t osize, size_t nsize);

typedef struct ArenaChunk ArenaChunk;
typedef struct OomScope OomScope;
typedef struct Arena {
	ArenaChunk *head;
	AllocFn alloc;
	void *ud;
	jmp_buf *oom;     /* where to longjmp on exhaustion; NULL: the scope */
	OomScope *scope;  /* the scope it was made in, or NULL */
	size_t total;     /* bytes obtained from alloc */
	long fail_after;  /* fault injection: fail the N-th chunk (0 = never) */
} Arena;

/*
 * An out-of-memory scope: a library call's boundary, as Lua has one per
 * protected call.  Arenas made while a scope is current (in this thread)
 * take its allocator unless given one, and their chunks are on the
 * scope's list; exhaustion of one with no `oom` of its own (and of a Buf)
 * longjmps to the innermost scope, whose handler calls oom_scope_unwind
 * to free the chunks of every arena the jump skipped.  Every arena made
 * in a scope is reset before the scope is left.
 *
 *	OomScope s;
 *	oom_scope_enter(&s, alloc, ud);
 *	if (setjmp(s.jb)) {
 *		... release what is not in an arena ...
 *		oom_scope_unwind(&s);
 *		oom_scope_leave(&s);
 *		return NOMEM;   (or oom_raise() to the scope around it)
 *	}
 *	... work ...
 *	oom_scope_leave(&s);
 */
struct OomScope {
	jmp_buf jb;
	AllocFn alloc;
	void *ud;
	ArenaChunk *chunks;  /* every chunk of its arenas */
	OomScope *up;
};

void oom_scope_enter(OomScope *s, AllocFn alloc, void *ud);
void oom_scope_unwind(OomScope *s);
void oom_scope_leave(OomScope *s);
/* The innermost scope of this thread, or NULL. */
OomScope *oom_scope_current(void);
/* Out of memory: longjmp to the innermost scope; abort if there is none. */
TLX_NORETURN void oom_raise(void);

void arena_init(Arena *a, AllocFn alloc, void *ud, jmp_buf *oom);
void *arena_alloc(Arena *a, size_t n);      /* zeroed, 16-byte aligned */
void *arena_dup(Arena *a, const void *p, size_t n);
char *arena_strdup(Arena *a, const char *s);
char *arena_strndup(Arena *a, const char *s, size_t n);
char *arena_printf(Arena *a, const char *fmt, ...) TLX_PRINTF(2, 3);
char *arena_vprintf(Arena *a, const char *fmt, va_list ap);
/* Frees every chunk; the arena can be reused afterwards. */
void arena_reset(Arena *a);
void *default_alloc(void *ud, void *ptr, size_t osize, size_t nsize);

/* A mark remembers the arena's top so scratch use can be rolled back. */
typedef struct ArenaMark {
	ArenaChunk *chunk;
	size_t used;
} ArenaMark;
ArenaMark arena_mark(Arena *a);
void arena_release(Arena *a, ArenaMark m);

/* ---- vec.h (macros) ------------------------------------------------- */

/* A growable array whose storage lives in an arena (QBE's vnew). */
#define Vec(T) struct { T *v; uint32_t n, cap; }
#define vec_push(a, vec, x)                                                  \
	do {                                                                 \
		if ((vec)->n == (vec)->cap)                                  \
			vec_grow_((a), (void **)&(vec)->v, &(vec)->cap,      \
				  sizeof(*(vec)->v));                        \
		(vec)->v[(vec)->n++] = (x);                                  \
	} while (0)
#define vec_last(vec) ((vec)->v[(vec)->n - 1])
void vec_grow_(Arena *a, void **v, uint32_t *cap, size_t esz);

/* A growable heap byte buffer (for output text), not arena-backed. */
typedef struct Buf {
	char *s;
	size_t n, cap;
} Buf;
void buf_put(Buf *b, const char *s, size_t n);
void buf_puts(Buf *b, const char *s);
void buf_putc(Buf *b, char c);
void buf_printf(Buf *b, const char *fmt, ...) TLX_PRINTF(2, 3);
void buf_vprintf(Buf *b, const char *fmt, va_list ap);
void buf_free(Buf *b);

/* ---- hash.c --------------------------------------------------------- */

uint64_t hash_bytes(const void *p, size_t n, uint64_t seed);
static inline uint64_t
hash_mix(uint64_t h, uint64_t x)
{
	h ^= x + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	return h;
}

/* A double as an int64_t, saturating (NaN: 0): a plain cast of inf, NaN or
 * a value outside the range is undefined behaviour. */
static inline int64_t
f64_to_i64_sat(double f)
{
	if (f != f)
		return 0;
	if (f >= 0x1p63)
		return INT64_MAX;
	if (f < -0x1p63)
		return INT64_MIN;
	return (int64_t)f;
}

/* ---- strtab.c: interned strings (compare by pointer) ---------------- */

typedef struct Strtab {
	Arena *arena;
	const char **slots;
	uint32_t n, cap;
} Strtab;

void strtab_init(Strtab *t, Arena *a);
const char *strtab_intern(Strtab *t, const char *s, size_t n);
static inline const char *
strtab_cstr(Strtab *t, const char *s)
{
	return strtab_intern(t, s, strlen(s));
}

/* ---- srcmgr.c: the source buffer and its lines ---------------------- */

/* Bison's location type: the field names must stay for YYLLOC_DEFAULT. */
typedef struct SrcRange {
	int first_line, first_column, last_line, last_column;
} SrcRange;

typedef struct SrcLoc {
	int line, col;
} SrcLoc;

static inline SrcLoc
range_begin(SrcRange r)
{
	return (SrcLoc){ r.first_line, r.first_column };
}

static inline SrcRange
range_at(SrcLoc l)
{
	return (SrcRange){ l.line, l.col, l.line, l.col };
}

static inline SrcRange
range_join(SrcRange a, SrcRange b)
{
	return (SrcRange){ a.first_line, a.first_column, b.last_line,
			   b.last_column };
}

/* One NUL-terminated buffer; lines are found on demand. */
typedef struct Source {
	const char *name;
	const char *text;  /* NUL-terminated copy */
	size_t len;
	uint32_t *line_start;  /* offsets of each line's first byte */
	uint32_t nlines;
} Source;

void src_init(Source *s, Arena *a, const char *name, const char *text,
	      size_t len);
/* The text of line `line` (1-based) without its newline, and its length. */
const char *src_line(const Source *s, int line, size_t *len);

/* ---- diag.c --------------------------------------------------------- */

typedef enum DiagKind { DIAG_ERROR, DIAG_WARNING, DIAG_NOTE } DiagKind;

typedef struct DiagMsg {
	DiagKind kind;
	SrcRange range;
	bool has_loc;
	char *msg;
} DiagMsg;

typedef struct Diag {
	Arena *arena;
	const Source *src;
	FILE *out;          /* NULL: keep messages only */
	bool color;
	int nerrors, nwarnings;
	int max_errors;     /* stop reporting (and set `stopped`) past this */
	bool stopped;
	bool werror;
	bool dropping;      /* the last error or warning repeated an earlier
			       one: its notes go too */
	Vec(DiagMsg) msgs;  /* everything reported, in order */
} Diag;

void diag_init(Diag *d, Arena *a, const Source *src, FILE *out);
void diag_error(Diag *d, SrcRange r, const char *fmt, ...) TLX_PRINTF(3, 4);
void diag_warning(Diag *d, SrcRange r, const char *fmt, ...)
	TLX_PRINTF(3, 4);
void diag_note(Diag *d, SrcRange r, const char *fmt, ...) TLX_PRINTF(3, 4);
/* An error with no location (file name only). */
void diag_error_noloc(Diag *d, const char *fmt, ...) TLX_PRINTF(2, 3);
void diag_report(Diag *d, DiagKind k, SrcRange r, bool has_loc,
		 const char *fmt, va_list ap);
/* Renders one message as the user sees it (location, line, caret). */
void diag_render(const Diag *d, const DiagMsg *m, Buf *out);

/* Checks `// expected-error@+N {{text}}` comments against what was
 * reported (clang's -verify).  Returns true when everything matched; the
 * mismatches are printed to `out`. */
bool diag_verify(Diag *d, FILE *out);

#endif
