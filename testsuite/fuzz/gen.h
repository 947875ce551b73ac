/*
 * gen.h: random well-typed tlx programs and the differential oracles that
 * run them (issue 19).  One header for the files of testsuite/fuzz/:
 *
 *   gen.c      the generator: a seed -> the text of one program, with its
 *   stmt.c     launch written in "//!" comment lines (FzMeta below);
 *   async.c    the asynchronous part of some (--async: tasks, pipes,
 *              mbarriers, TMA, dot_async, tile schedules)
 *   oracle.c   the steps an oracle is made of -- make inputs, run on a
 *              backend -- each a function of its own, and fz_check,
 *              which isolates a check in a child process
 *   compare.c  the last step, compare: bit for bit, or by the class of
 *              each output (fz_num_classes) within tolerances
 *   compile.c  the first step, compile (in process, through libtlx's
 *              pipeline and LLVM), and the oracles built from all four
 *   reduce.c   delta debugging of a program that shows a finding
 *   gen_test.c the command line (campaigns, --print, --check, --reduce)
 *   gen_gpu.c  the GPU against the simulator, compiling with tlxc in a
 *              subprocess: all but compile.c and reduce.c, no LLVM
 *
 * A program carries everything needed to run it again: its arguments in
 * order, which are inputs, outputs or both, their element types and sizes,
 * the scalar values and the seed of the input data:
 *
 *   //! gen seed=17
 *   //! data 0x1234abcd
 *   //! arg x0 in f32 8192
 *   //! arg o0 out i32 512
 *   //! arg n0 scalar i32 1000
 *   //! arg ti3 in bf16 4096 tensor 64x64    (a tma<bf16, 2> parameter)
 *   kernel gen(x0: *f32, o0: *i32, n0: i32) warps(4) grid(2) { ... }
 *
 * The reducer never deletes "//!" lines or the kernel's first line, so a
 * reduced program still runs with the same arguments.
 */
#ifndef TLX_FUZZ_GEN_H
#define TLX_FUZZ_GEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tlx/tlxrt.h"

/* ---- gen.c ------------------------------------------------------------- */

/* Construct counters, summed over a campaign (what --stats prints). */
#define FZ_CONSTRUCTS(X)                                                      \
	X(load) X(load_masked) X(load_gather) X(load_2d) X(load_scalar)       \
	X(load_hint) X(cp_async) X(swizzle) X(cdiv) X(num_programs)            \
	X(store) X(store_masked) X(store_convert) X(readback) X(arith) X(divrem)          \
	X(bitwise) X(shift) X(unary) X(compare) X(logical) X(where)           \
	X(minmax) X(math) X(fma) X(convert) X(convert_fp8) X(bitcast)         \
	X(reduce) X(argminmax) X(trans) X(reshape) X(broadcast) X(expand)     \
	X(dot) X(dot_fp8) X(dot_i8) X(for_loop) X(while_loop) X(if_else)      \
	X(assign) X(shared) X(shared_view) X(atomic) X(atomic_same)           \
	X(atomic_cas) X(call) X(range) X(full) X(assert) X(else_if)         \
	X(async) X(tasks) X(replicate) X(regs) X(pipe) X(pipe_late)           \
	X(mbarrier) X(tma_load) X(tma_store) X(dot_async) X(tiles) X(rows)

enum {
#define X(n) FZ_C_##n,
	FZ_CONSTRUCTS(X)
#undef X
	FZ_C_COUNT
};

extern const char *const fz_construct_names[FZ_C_COUNT];

typedef struct FzGenOpts {
	int max_stmts;    /* statements of the kernel's body (0: 24) */
	int max_depth;    /* expression depth (0: 3) */
	bool no_shared;   /* leave out shared buffers */
	bool no_atomics;
	bool no_dot;
	/* the percentage of programs with an asynchronous part (async.c:
	 * tasks, pipes, mbarriers, TMA, dot_async, tile schedules); 0: none.
	 * Whether a seed's program has one is drawn apart from its other
	 * choices: the others are the programs they were without it. */
	int async_pct;
	/* the percentage of calls of exp exp2 log log2 sqrt rsqrt sin cos
	 * tanh (not on f64) given `approx: true`, drawn from a stream of
	 * their own: 0 leaves every program as it was */
	int approx_pct;
	/* the percentage of programs ending with a row kernel's statement
	 * (rows at a pitch that is rarely a multiple of 16 bytes, a masked
	 * load of each, a reduction along the row, a masked store: what
	 * peel-rows shifts), drawn apart like async: 0 leaves every program
	 * as it was */
	int rows_pct;
} FzGenOpts;

typedef struct FzGenStats {
	long counts[FZ_C_COUNT];
	long types[16];   /* values made of each element type (FzType) */
} FzGenStats;

/* The program of `seed`: malloc'd NUL-terminated text.  st (may be NULL)
 * counts the constructs it used. */
char *fz_generate(uint64_t seed, const FzGenOpts *o, FzGenStats *st);
/* The program whose choices are the bytes of data (a fuzzer's input): the
 * choices read the bytes in order (one a choice, two for one of more
 * than 256 ways), then go on from a seed of their hash. */
char *fz_generate_bytes(const uint8_t *data, size_t n, const FzGenOpts *o,
			FzGenStats *st);

/* ---- oracle.c ---------------------------------------------------------- */

enum { FZ_MAX_ARGS = 64 };

typedef enum FzRole { FZ_IN, FZ_OUT, FZ_INOUT, FZ_SCALAR } FzRole;

typedef struct FzArg {
	char name[32];
	FzRole role;
	int type;         /* TLXRT_* element or scalar type */
	size_t n;         /* pointers: elements */
	int64_t i;        /* scalars */
	double f;
	/* a tma<T, rank> parameter ("tensor RxC" after the size): a tensor
	 * descriptor over the n elements, row-major, of this shape; else 0 */
	int rank;
	int64_t shape[2];
} FzArg;

typedef struct FzMeta {
	uint64_t seed;    /* the generator's seed (0 when not generated) */
	uint64_t data;    /* the seed of the input data */
	int nargs;
	FzArg args[FZ_MAX_ARGS];
} FzMeta;

/* Seconds on the monotonic clock. */
double fz_now(void);
/* The file's bytes, NUL-terminated, in malloc'd memory (*n its length);
 * NULL (and *n 0) when it cannot be read. */
char *fz_read_file(const char *path, size_t *n);

/* Reads the "//!" lines of a program; false with a message in err. */

bool fz_meta_parse(const char *src, FzMeta *m, char *err, size_t errn);

/* What a check found.  The class is the message with its numbers and
 * names blanked: the reducer keeps a program only while its class stays
 * the same. */
typedef enum FzKind {
	FZ_OK,
	FZ_COMPILE,   /* the compiler refused a generated program */
	FZ_LAUNCH,    /* a fault on the backend (out of bounds, ...) */
	FZ_MISMATCH,  /* two runs disagree */
	FZ_CRASH,     /* a signal, an abort, a sanitizer report */
	FZ_TIMEOUT,
	FZ_SETUP,     /* the harness itself failed (bad metadata, no device) */
} FzKind;

extern const char *const fz_kind_names[];

typedef struct FzResult {
	FzKind kind;
	char msg[2048];
	char cls[256];
	/* not a finding: the class of the "not supported yet" diagnostic of
	 * a construct that code generation lacks (the -O3 IR ran instead) */
	char skipped[256];
} FzResult;

void fz_fail(FzResult *r, FzKind k, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Puts "what: " before r's message (which run failed). */
void fz_prefix(FzResult *r, const char *what);

/* One way to compile: the -O level, the emitted form, the target and,
 * optionally, a pass pipeline in place of the -O level's. */
typedef struct FzConfig {
	const char *name;     /* "O0", "O3": in messages */
	int olevel;           /* 0..3 */
	int emit;             /* TLX_EMIT_IR, _PTX or _CUBIN */
	const char *target;   /* "sm_90a" */
	const char *passes;   /* NULL: the -O level's pipeline */
} FzConfig;

/* A compiled program: the image to load (kind TLX_IMAGE_*) and its IR. */
typedef struct FzImage {
	int kind;
	char *data;
	size_t size;
	char *ir;
} FzImage;

void fz_image_free(FzImage *img);

/* The host side of every argument: inputs (and inouts) before a run,
 * what came back after it.  buf[i] is NULL for scalars. */
typedef struct FzData {
	int nargs;
	unsigned char *buf[FZ_MAX_ARGS];
	size_t bytes[FZ_MAX_ARGS];
} FzData;

void fz_data_free(FzData *d);

/* Step 1 (compile.c): compile with the compiler's pipeline
 * (jit/compile.c), in process.  A refusal is FZ_COMPILE with the
 * diagnostics. */
bool fz_compile(const FzConfig *c, const char *src, size_t len,
		FzImage *img, FzResult *r);
/* Step 2: the inputs of m, from m->data: the same bytes every time. */
void fz_inputs(const FzMeta *m, FzData *in);
/* Step 3: loads img on dev, uploads `in`, poisons the outputs, launches
 * (the grid comes from the kernel's grid()), and downloads every pointer
 * argument into out. */
bool fz_run(tlxrt_device *dev, const FzImage *img, const FzMeta *m,
	    const FzData *in, FzData *out, FzResult *r);
/* Step 4 (compare.c): every output and inout bit for bit; what = "O0 vs O3".  A
 * difference only in the bits of NaNs (sign, payload) is the class
 * "mismatch: NaN bits only", or no difference with nan_equal. */
bool fz_compare(const FzMeta *m, const FzData *a, const FzData *b,
		const char *what, bool nan_equal, FzResult *r);

/* How a check runs. */
typedef struct FzCheckOpts {
	bool codegen;     /* -O3 goes through LLVM to PTX */
	bool nan_equal;   /* NaNs compare equal whatever their bits */
	bool fork_;       /* in a child process (fz_check) */
	int timeout_s;    /* the child's limit */
} FzCheckOpts;

/* An oracle that runs in process: a check of one program (compile.c's
 * fz_oracles).  The GPU's (gen_gpu.c) is made of the same steps but
 * compiles with tlxc in a subprocess. */
typedef struct FzOracle {
	const char *name;
	const char *summary;
	bool (*check)(const char *src, size_t len, const FzMeta *m,
		      const FzCheckOpts *co, FzResult *r);
} FzOracle;

extern const FzOracle fz_oracles[];
const FzOracle *fz_oracle_find(const char *name);

/* Runs o on a program in a child process, so that a crash, an abort or a
 * hang becomes a result: FZ_CRASH with the first line of the report,
 * FZ_TIMEOUT after co->timeout_s seconds.  Without co->fork_, in
 * process. */
void fz_check(const FzOracle *o, const char *src, size_t len,
	      const FzCheckOpts *co, FzResult *r);

/* The class of a message: digits, quoted names and locations blanked. */
void fz_classify(FzResult *r);

/* ---- compare.c --------------------------------------------------------- */

/* How the outputs of two machines that round differently (the GPU and the
 * simulator) may differ, from the ops each output is computed by. */
typedef enum FzNum {
	/* exact or correctly rounded ops only: bit for bit */
	FZ_NUM_BITS,
	/* a value that the machines round differently (a math function)
	 * and only continuous ops after it: within fz_tolerance */
	FZ_NUM_CLOSE,
	/* CLOSE, and a float sum or product in another order, a
	 * tensor-core dot or float atomic_adds to one address went into it:
	 * within fz_tolerance, else as fz_forgive_reordered decides */
	FZ_NUM_REORD,
	/* such a value through a discontinuous op (a compare, a float to
	 * integer conversion, floor, argmax, a bitcast, an address, a mask,
	 * a branch or a trip count): not compared */
	FZ_NUM_LOOSE,
	FZ_NUM_COUNT
} FzNum;

extern const char *const fz_num_names[];

/* The class of every argument of m (cls[i]; inputs and scalars
 * FZ_NUM_BITS), from the kernel of the IR text ir (what an image embeds
 * as __tlx_ir: the IR the simulator runs).  False with a message in err
 * when the IR does not read or does not match m. */
bool fz_num_classes(const char *ir, size_t len, const FzMeta *m, FzNum *cls,
		    char *err, size_t errn);

/* The tolerance of an FZ_NUM_CLOSE output of element type `type`
 * (TLXRT_*): two values agree when they are within `ulps` of each other
 * in the type's ordered bit patterns (infinity is one past the largest
 * finite value) or within `atol` of each other. */
typedef struct FzTol {
	int64_t ulps;
	double atol;
} FzTol;

FzTol fz_tolerance(int type);

/* Step 4 with tolerances: FZ_NUM_BITS outputs as fz_compare, CLOSE
 * within fz_tolerance (a NaN must meet a NaN), LOOSE not at all.  The
 * message names the first differing element with both values. */
bool fz_compare_num(const FzMeta *m, const FzData *a, const FzData *b,
		    const FzNum *cls, const char *what, bool nan_equal,
		    FzResult *r);

/* Second opinions on REORDERED outputs: a2 is the simulator's run with
 * sums in reverse order and a shuffled launch (TLXRT_SIM_REDUCE_ORDER 1),
 * aw with sums in f64 (2), at with tensor-core dots added as the tensor
 * cores do (3), ag with reductions combined in the generated code's
 * order (4).  Each element of such an output where b (the device's)
 * differs from a beyond the tolerance becomes a's in b when b agrees
 * with a2, aw, at or ag (another order, the exact sum rounded once, the
 * tensor cores' adder, the code's order), when a and a2 or a and ag
 * differ (the value depends on the order: an ill-conditioned sum, MAX + x
 * - MAX, subnormal partial products), or when one of a and b
 * is an infinity or a NaN and aw is finite (a partial result overflowed
 * in one order only).  Returns how many. */
int fz_forgive_reordered(const FzMeta *m, const FzData *a, const FzData *a2,
			 const FzData *aw, const FzData *at, const FzData *ag,
			 FzData *b, const FzNum *cls);

/* Corrupts d for a test of the comparison: flips a bit of the first
 * element of the first CLOSE output, else of the first BITS one (the low
 * bit of an integer, the top exponent bit of a float: out of any
 * tolerance), and says which in what.  False when every output is
 * LOOSE. */
bool fz_inject_flip(const FzMeta *m, FzData *d, const FzNum *cls,
		    char *what, size_t n);

/* ---- reduce.c ---------------------------------------------------------- */

typedef struct FzReduceOpts {
	/* the check of a candidate: gen_test's oracle (fz_check), or gen_gpu's
	 * GPU against the simulator in a process of its own */
	void (*test)(void *ctx, const char *src, size_t len, FzResult *r);
	void *ctx;
	bool verbose;
} FzReduceOpts;

/* The smallest program found that fails as src does (same kind and
 * class as *want): malloc'd text.  *tests counts the checks it ran. */
char *fz_reduce(const char *src, const FzResult *want,
		const FzReduceOpts *o, int *tests);

/* ---- gen.c and stmt.c: the generator's state, theirs alone ------------------- */

#include "support/support.h"

/* Element types, in the order of gen_tys. */
enum {
	T_I1, T_I8, T_U8, T_I16, T_U16, T_I32, T_U32, T_I64, T_U64,
	T_F16, T_BF16, T_F32, T_F64, T_F8E4M3, T_F8E5M2, T_COUNT
};

typedef struct GenType {
	const char *name;
	int bits;
	char cls;    /* b: i1, s: signed, u: unsigned, f: float, 8: fp8 */
	int rt;      /* TLXRT_* */
	int weight;  /* how often rand_type picks it */
} GenType;

extern const GenType gen_tys[T_COUNT];

static inline bool is_bool(int t) { return gen_tys[t].cls == 'b'; }
static inline bool is_float(int t) { return gen_tys[t].cls == 'f'; }
static inline bool is_fp8(int t) { return gen_tys[t].cls == '8'; }
static inline bool is_uns(int t) { return gen_tys[t].cls == 'u'; }
/* integers, i1 included */
static inline bool is_int(int t) { return strchr("bsu", gen_tys[t].cls) != NULL; }
/* what + - * min max neg abs take */
static inline bool is_num(int t) { return !is_bool(t) && !is_fp8(t); }

enum { MAXV = 384, MAXP = 48, MAXS = 6, MAXF = 4, MAXN = 4096 };

typedef struct Shape {
	int rank;  /* 0: a scalar */
	int d[2];
} Shape;

typedef struct Var {
	const char *name;
	int t;
	Shape s;
	int depth;  /* the block nesting it was declared at */
	bool mut;   /* a var: assignable */
	bool ro;    /* loop counters: not assigned by generated code */
	bool stored;
	bool hidden; /* not seen inside tasks (async.c) */
} Var;

typedef struct Ptr {
	const char *name;
	int t;
	FzRole role;
	size_t n;
	Shape s;           /* outputs: the shape stored, at offsets offs */
	const char *offs;
	int trank;         /* a tma<T, trank> parameter of shape tshape */
	int tshape[2];
} Ptr;

typedef struct Smem {
	const char *name;
	int t;
	int rank;
	int d[3];
} Smem;

typedef struct Gen {
	uint64_t rng;
	const uint8_t *src;  /* choices to make first (fz_generate_bytes) */
	size_t nsrc, pos;
	Arena arena;
	const FzGenOpts *o;
	FzGenStats *st;
	Buf body, fns;
	int indent;
	Var vars[MAXV];
	int nvars;
	int depth;        /* block nesting inside the kernel */
	int loop_var;     /* index of the innermost loop counter, or -1 */
	Ptr ptrs[MAXP];
	int nptrs;
	Smem smem[MAXS];
	int nsmem, smem_bytes;
	int nfn;
	bool in_fn;       /* a device function's body: no kernel names */
	bool consts;      /* leaves are mostly constants (canon folds them) */
	int nprog, warps, nname;
	int stmts;        /* statements left to generate */
	bool async;       /* this program has an asynchronous part */
	uint64_t arng;    /* the stream of `approx` choices */
	bool no_pid;      /* values must not depend on the program (dynamic
			   * schedules) */
	int async_smem;   /* bytes of the asynchronous part's buffers */
	int prog_warps;   /* the program's warps: warps, or its tasks' */
	int ntasks;       /* `tasks` so far */
	bool regs;        /* with register budgets (then the only `tasks`) */
	size_t L;         /* elements of each input */
} Gen;

/* gen.c: helpers (random numbers, text in the generator's arena, lines of
 * the body), values in scope, and expressions */
uint32_t gen_rnd(Gen *g, uint32_t n);             /* [0, n) */
bool gen_chance(Gen *g, int percent);
char *gen_fmt(Gen *g, const char *f, ...) TLX_PRINTF(2, 3);
void gen_count(Gen *g, int construct);            /* FZ_C_* */
void gen_line(Gen *g, const char *f, ...) TLX_PRINTF(2, 3);
int gen_rand_type(Gen *g);
int gen_rand_type_where(Gen *g, bool (*ok)(int));
int gen_numel(Shape s);
Shape gen_shape0(void);
Shape gen_shape1(int n);
Shape gen_shape2(int a, int b);
Shape gen_rand_shape(Gen *g);
const char *gen_type_str(Gen *g, int t, Shape s);  /* "f32[16, 32]" */
const char *gen_fresh(Gen *g, const char *prefix);
Var *gen_add_var(Gen *g, const char *name, int t, Shape s, bool mut);
Ptr *gen_add_ptr(Gen *g, const char *prefix, int t, FzRole role, size_t n);
Ptr *gen_input(Gen *g, int t);                    /* an input of type t */
/* the offsets of a program's part of an output of shape s */
const char *gen_flat(Gen *g, Shape s, bool transposed);
/* an expression of type t and shape s; one whose shape broadcasts to s
 * (or a weak literal) */
char *gen_expr(Gen *g, int t, Shape s, int depth);
char *gen_operand(Gen *g, int t, Shape s, int depth);
/* a dot when t and s allow one */
char *gen_dot(Gen *g, int t, Shape s, int depth);

/* async.c: one asynchronous section at the kernel's top level */
void gen_async(Gen *g);


#endif
