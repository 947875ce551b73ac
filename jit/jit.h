/*
 * jit.h: the internals of libtlx -- one compilation from source text to
 * an image (compile.c, shared with tlxc) and the compilation cache
 * (cache.c).
 */
#ifndef TLX_JIT_H
#define TLX_JIT_H

#include "passes/passes.h"
#include "parser/sema.h"

typedef enum Emit {
	EMIT_AST, EMIT_IR, EMIT_LIR, EMIT_LLVM, EMIT_PTX, EMIT_CUBIN
} Emit;

extern const char *const emit_names[6];  /* "ast", "ir", "lir", ... */

/* One compilation.  The caller fills the inputs; compile_run fills out,
 * diag and the rest, all in `arena`. */
typedef struct Job {
	/* inputs */
	const char *name;          /* for diagnostics */
	const char *text;
	size_t len;
	const Define *defs;
	uint32_t ndefs;
	int sm;                    /* 80, 90, 100 */
	int olevel;
	Emit emit;
	const char *passes;        /* NULL: the -O pipeline */
	PipelineOpts popts;
	bool lineinfo, debug;
	bool fast_math;            /* approximate math in codegen */
	bool debug_barriers;       /* waits time out with a report */
	int specialize;            /* PASS_SPEC_*: fast entries */
	int fast_compile;          /* CG_FC_*: ptxas -Ofast-compile */
	bool generic_cubin;        /* generic entries assembled, not PTX */
	const char *ptxas;         /* assemble with this ptxas, not nvJitLink */
	bool use_ptxas;            /* ptxas (found as cg_find_ptxas does) */
	bool tir;                  /* the text is tile IR, not a program */
	bool werror;
	bool ptx_ok;               /* no assembler: PTX in place of a cubin */
	bool check_only;           /* every check up to codegen's, no output */
	FILE *diag_out;            /* where diagnostics go as they come; NULL: kept */
	/* outputs */
	Arena *arena;
	IrCtx ir;
	Source src;
	Diag diag;
	Buf out;                   /* the emitted text or binary (caller frees) */
	Buf ir_buf;                /* the laid-out IR's text while printed */
	bool binary;               /* out is a cubin */
	bool ptx_fallback;         /* cubin asked, PTX given: no assembler */
	bool parsed;               /* the input parsed (a tree or a module) */
	const char *ir_text;       /* the module's IR (for libtlx), in arena */
} Job;

/* Runs the job: parse, check, lower, passes, code generation.  Returns
 * false when errors were reported to j->diag (or the emit kind cannot be
 * produced: j->diag has the reason).  Out of memory in an arena of the
 * caller's out-of-memory scope goes on to that scope (j->out and
 * j->ir_buf left for the caller to free). */
bool compile_run(Job *j);

/* ---- cache.c ------------------------------------------------------------ */

typedef struct CacheKey {
	uint64_t h[2];
} CacheKey;

typedef struct CacheEntry {
	CacheKey key;
	int kind;            /* TLX_IMAGE_* */
	char *image;         /* malloc'd */
	size_t image_size;
	char *ir;            /* malloc'd, NUL-terminated */
	size_t ir_size;
} CacheEntry;

CacheKey cache_key(const Job *j);
void cache_key_hex(CacheKey k, char out[33]);
/* Reads the entry for k from dir; false when absent or damaged. */
bool cache_read(const char *dir, CacheKey k, CacheEntry *e);
/* Writes atomically (a temporary file renamed into place). */
bool cache_write(const char *dir, const CacheEntry *e);
void cache_entry_free(CacheEntry *e);
/* The default directory, malloc'd, or NULL when no home is known. */
char *cache_default_dir(void);

/* table.c: tlx_table_parse and tlx_table_load without a context: the
 * message of a failure (TLX_IO, TLX_COMPILE) in err. */
struct tlx_table;
int table_parse(const char *name, const char *text, size_t len,
		struct tlx_table **out, char *err, size_t errsize);
int table_load(const char *path, struct tlx_table **out, char *err,
	       size_t errsize);

#endif
