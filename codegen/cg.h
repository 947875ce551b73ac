/*
 * cg.h: the internal header of codegen/, the only directory that includes
 * llvm-c.  One section per .c file.
 *
 * How a kernel is lowered (docs/internals.md, "Code generation"):
 *   1. axis.c     axis analysis: contiguity, divisibility and constancy of
 *                 every int/pointer value, twice: without assumptions and
 *                 under the fast-path assumptions on parameters (aligned
 *                 pointers, integers divisible by 16, unit strides);
 *   2. assign.c   a home layout for every tile value that has to live in
 *                 registers (loads, reductions, dots, loop-carried values);
 *                 the other tile values are recomputed in whatever layout
 *                 a use asks for (rematerialized);
 *   3. smem.c     the shared-memory plan: liveness-based offsets for user
 *                 buffers and per-op scratch, checked against the target;
 *   4. kernel.c   walks the ops and calls the lowering of each family
 *                 (elementwise.c, convert.c, math.c, memory.c, reduce.c,
 *                 shape.c, control.c, shared.c, mma.c, wgmma.c).
 * A tile value in registers is a Layout (ir/layout.c) plus one LLVM value
 * per register of the thread (a Mat, "materialization").
 */
#ifndef TLX_CG_H
#define TLX_CG_H

#include <llvm-c/Analysis.h>
#include <llvm-c/Core.h>
#include <llvm-c/DebugInfo.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>

#include "codegen/codegen.h"

typedef struct Cg Cg;
typedef struct CgFn CgFn;

/* ---- llvm.c: target machine, module, intrinsics, emission ------------- */

struct Cg {
	Module *mod;
	const CgOpts *o;
	const Target *t;      /* o->sm's */
	Diag *d;
	Arena arena;          /* codegen's own, freed at the end */
	bool failed;
	LLVMContextRef C;
	LLVMModuleRef M;
	LLVMTargetMachineRef TM;
	LLVMBuilderRef B;
	/* What cg_llvm_dispose releases, so that an out-of-memory jump out
	 * of codegen loses none of it: the entry builders of a kernel (0)
	 * and of a task (1), text buffers, LLVM's output */
	LLVMBuilderRef Bentries[2];
	Buf text[2];
	char *llvm_str;
	LLVMMemoryBufferRef llvm_mb;
	LLVMTypeRef t_void, t_i1, t_i8, t_i16, t_i32, t_i64, t_f16, t_bf16,
		t_f32, t_f64, t_ptr, t_gptr, t_sptr;
	LayoutTab layouts;    /* over the module's, for layouts codegen derives */
	LLVMValueRef smem;    /* the dynamic shared memory array */
	/* debug info (-g, -lineinfo) */
	LLVMDIBuilderRef dib;
	LLVMMetadataRef di_file, di_cu, di_scope;
	Vec(CgKernelInfo) kinfo;
	bool generic_ptx;     /* the generic entries go into __tlx_generic */
	const char *dyn_smem; /* the dynamic array's name (NULL: __tlx_smem) */
	uint32_t entries;     /* kernel entries in the PTX to assemble */
	bool timing;          /* TLX_CG_TIME: phase times to stderr */
	bool realign_all;     /* TLX_CG_REALIGN=all: no 8-/4-byte cp.async */
	bool no_elem_tail;    /* TLX_CG_ELEM_TAIL=0: generic tails as code */
	bool warp_store;      /* TLX_CG_WARP_STORE=1: realigned stores
				 across the warp */
	int edge;             /* TLX_CG_EDGE: CG_EDGE_* (memory.c,
				 edge_pred_ok) */
	double t0;
};

bool cg_llvm_init(Cg *cg);
void cg_llvm_dispose(Cg *cg);
LLVMBuilderRef cg_entry_builder(Cg *cg, int which);
/* Verifies, optimizes and emits the module as o->emit asks (llvm, ptx). */
bool cg_llvm_emit(Cg *cg, char **text, size_t *len);
/* Declares intrinsic `name` (overloaded on `ovl`) and calls it. */
LLVMValueRef cg_intr(Cg *cg, const char *name, LLVMTypeRef *ovl, int novl,
		     LLVMValueRef *args, int nargs);
/* Inline PTX; `side` marks side effects, `conv` a convergent call. */
LLVMValueRef cg_asm(Cg *cg, LLVMTypeRef rty, const char *text,
		    const char *cons, LLVMValueRef *args, int nargs,
		    bool side, bool conv);
LLVMTypeRef cg_type(Cg *cg, Type *t);  /* the element (or scalar) type */
LLVMValueRef cg_i32(Cg *cg, int64_t v);
LLVMValueRef cg_i64(Cg *cg, int64_t v);
LLVMValueRef cg_const(Cg *cg, Type *t, const Attr *a);
/* A user error at an op's location; codegen stops after the function. */
void cg_error(Cg *cg, SrcLoc loc, const char *fmt, ...) TLX_PRINTF(3, 4);
void cg_unsupported(Cg *cg, Op *op, const char *what);
double cg_now_ms(void);  /* a monotonic clock, for TLX_CG_TIME */
/* A failed device assertion (__assertfail): the launch fails with
 * CUDA_ERROR_ASSERT after the driver prints msg, file:line, func. */
void cg_assertfail(Cg *cg, const char *msg, const char *file, int line,
		   const char *func);
/* Device printf (vprintf) of fmt with its arguments; Balloca places the
 * argument buffer. */
LLVMValueRef cg_printf(Cg *cg, LLVMBuilderRef Balloca, const char *fmt,
		       LLVMValueRef *args, int nargs);

/* ---- cubin.c: PTX -> cubin ---------------------------------------------- */

bool cg_assemble(Cg *cg, const char *ptx, size_t len, char **cubin,
		 size_t *size, const char **linker);

/* ---- meta.c: module metadata and debug info ------------------------------ */

void cg_meta_ir(Cg *cg);      /* __tlx_ir: the module's tile IR text */
void cg_meta_finish(Cg *cg);  /* __tlx_meta: per-kernel launch facts */
void cg_debug_init(Cg *cg);
LLVMMetadataRef cg_debug_func(Cg *cg, Func *f, LLVMValueRef fn);
void cg_debug_loc(CgFn *fn, SrcLoc loc);
void cg_debug_finish(Cg *cg);

/* ---- kernel.c: per-function lowering ------------------------------------- */

typedef struct Mat Mat;
struct Mat {
	const Layout *ly;
	LLVMValueRef *r;   /* ly_nregs(ly) values (duplicates share) */
	uint32_t scope;
	Mat *next;
};


/* A view of shared memory: its start (a run-time i32 byte offset in the
 * kernel's shared memory), the alignment known of it, and where its
 * elements lie from there (ir/smemview.c). */
typedef struct SmemView {
	LLVMValueRef off;
	int64_t align;     /* bytes the offset is known to be a multiple of */
	SmemGeom g;
} SmemView;

typedef struct CgVal {
	LLVMValueRef v;      /* scalars; an mbarrier's address (ptr AS 3) */
	const Layout *home;  /* tiles kept in registers; NULL: remat */
	bool remat;
	bool regs_used;      /* an smem_load whose registers something uses
				(a dot may read the view itself instead) */
	Mat *mats;
	SmemView *view;      /* smem and mbar values */
	uint32_t conv_epoch; /* a convert_layout: fn->smem_epoch at its place */
} CgVal;

typedef struct CoordCache {
	const Layout *ly;
	LLVMValueRef flat;              /* thread part of the flat index */
	LLVMValueRef dim[TY_MAX_RANK];  /* thread part of each coordinate */
	struct CoordCache *next;
} CoordCache;

typedef struct GuardCache {
	uint64_t deps;
	int bytes;                /* the alignment checked */
	LLVMValueRef ok;
	struct GuardCache *next;
} GuardCache;

typedef struct CgSmem CgSmem;

/* A load schedule.c moved up, and the op it stood before. */
typedef struct CgHoist {
	Op *ld, *next;
} CgHoist;

struct CgFn {
	Cg *cg;
	Func *f;
	Arena *a;
	LLVMValueRef fn;
	LLVMBuilderRef B;       /* = cg->B */
	LLVMBuilderRef Bentry;  /* before the entry block's terminator (of the
				   task being lowered, in a task) */
	LLVMBuilderRef Balloca; /* the function's entry block: allocas */
	int nwarps, nthreads;
	CgVal *vals;
	Axis *ax;               /* under the fast-path assumptions */
	Axis *ax_gen;           /* without assumptions */
	Assume assume;
	Axis *ax_narrow[4];     /* under the assumptions at 8, 4, 2 and 1
				   bytes (cg_axis_narrow), made when first
				   asked */
	Axis *ax_eq1;           /* under the unit strides alone (cg_axis_eq1),
				   made when first asked */
	LLVMValueRef tid, lane, warp;  /* in a task: relative to its first warp */
	int task_bar;           /* in a task: its named barrier (0: none, one
				   warp); -1 outside tasks */
	LLVMValueRef task_bar_id;  /* that barrier's id when it depends on the
				      instance (a task with replicas) */
	LLVMValueRef task_ri;   /* that instance's index (task_replica) */
	const char *task;       /* in a task: its name and replica, for
				   reports */
	CgSmem *plan;
	uint32_t scope_next;
	Vec(uint32_t) scopes;   /* open region scopes, innermost last */
	CoordCache *coords;
	GuardCache *guards;
	struct Term *term;      /* the last yield/condition lowered */
	LLVMValueRef smem;      /* its shared memory (static or dynamic) */
	const char *name;       /* the entry's symbol */
	int mode;               /* CG_BOTH, CG_FAST or CG_GENERIC */
	int entry;              /* CG_ENTRY_*: which entry is being lowered */
	uint64_t ver_deps;      /* the assumptions the fast copy checked */
	Vec(CgHoist) hoists;    /* schedule.c's moves */
	bool sync_pending;      /* a sync_threads sunk into the next op */
	int pred_depth;         /* open cg_pred_begin regions (some threads) */
	bool arrived;           /* the last op lowered: an elected arrive */
	uint32_t smem_epoch;    /* steps past every op that may touch shared
				   memory or wait, and at region bounds: a
				   convert_layout made later than at its
				   place is fenced (cg_conv_fence) */
	int min_ctas;           /* nvvm.minctasm, 0: none */
	int reg_budget;         /* registers per thread that allows */
	bool tma_stores;        /* a return waits for their reads */
	bool failed;
};

/* How memory accesses with a wider fast-path vector are emitted: behind
 * their own run-time check, or (in a fast entry, or inside a loop
 * versioned on the check) with the fast or the proven width alone. */
enum { CG_BOTH, CG_FAST, CG_GENERIC };
enum { CG_EDGE_BRANCH, CG_EDGE_AUTO, CG_EDGE_PRED };

/* Which entry of a kernel is lowered (kernel.c, "Specialized entries"):
 * its only one (accesses checked one by one), the fast one (every
 * assumption it makes holds: the launch checked them) or the generic one
 * (no assumption). */
enum { CG_ENTRY_ONE, CG_ENTRY_FAST, CG_ENTRY_GENERIC };

/* What is decided once per kernel before its entries are lowered, on one
 * thread: software pipelining and load scheduling rewrite the IR. */
typedef struct CgPrep {
	Func *f;
	bool ok;
	CgHoist *hoists;      /* schedule.c's moves */
	uint32_t nhoists;
	uint64_t fast;        /* what the fast entry assumes; 0: one entry */
	Assume assume;        /* the kind of each assumption */
	int64_t smem;         /* the dynamic shared memory a launch gives */
} CgPrep;

/* Checks f and rewrites its IR; false after reporting errors. */
bool cg_prepare_kernel(Cg *cg, Func *f, CgPrep *p);
/* Lowers one entry of a prepared kernel into cg's module. */
bool cg_lower_kernel(Cg *cg, const CgPrep *p, int entry);
/* The name of a kernel's fast entry (NAME$fast), in cg's arena. */
const char *cg_fast_name(Cg *cg, const char *kernel);
/* The axis facts of v that hold where it is being lowered: the fast-path
 * ones inside a fast copy whose check covers them, else the proven. */
const Axis *cg_axis(CgFn *fn, Value v);
/* Lowers the ops of a block (regions call back into this). */
void cg_lower_block(CgFn *fn, Block *b);
void cg_scope_push(CgFn *fn);
void cg_scope_pop(CgFn *fn);
/* The value of v in layout ly (materialized, rematerialized or converted
 * through shared memory). */
LLVMValueRef *cg_tile(CgFn *fn, Value v, const Layout *ly);
/* Records the registers of a tile result. */
void cg_set_tile(CgFn *fn, Value v, const Layout *ly, LLVMValueRef *r);
LLVMValueRef cg_scalar(CgFn *fn, Value v);
/* The thread part of dim d's coordinate in layout ly (entry block). */
LLVMValueRef cg_thread_coord(CgFn *fn, const Layout *ly, int d);
LLVMValueRef cg_thread_flat(CgFn *fn, const Layout *ly);
/* i1: the run-time check of the given fast-path assumptions (entry). */
LLVMValueRef cg_guard(CgFn *fn, uint64_t deps);
/* The facts under the fast path's assumptions at an alignment of 8 or 4
 * bytes (axis_at_bytes), and the check of those assumptions on deps. */
const Axis *cg_axis_narrow(CgFn *fn, int bytes);
/* The facts under the fast path's unit-stride assumptions (fast.eq1)
 * alone: contiguity without alignment. */
const Axis *cg_axis_eq1(CgFn *fn);
LLVMValueRef cg_guard_narrow(CgFn *fn, uint64_t deps, int bytes);
LLVMValueRef *cg_regs(CgFn *fn, const Layout *ly);  /* fresh array */
/* The registers and layout of tile v (not rematerialized) that a use in
 * layout ly would convert through shared memory; false when v is there
 * already or a renaming of registers makes it. */
bool cg_convert_source(CgFn *fn, Value v, const Layout *ly, LLVMValueRef **r,
		       const Layout **from, int64_t *off);
LLVMBasicBlockRef cg_new_block(CgFn *fn, const char *name);
/* Marks the loop whose latch branch is br as not to be unrolled (LLVM
 * and ptxas: NVPTX prints .pragma "nounroll"). */
void cg_no_unroll(Cg *cg, LLVMValueRef br);
/* A loop over j = 0 .. n-1 that LLVM does not unroll (the generic element
 * loops over a thread's registers: unrolling only grows code that rarely
 * runs).  cg_loop_begin branches into blocks NAME.elem and returns j;
 * cg_loop_end closes the loop after n iterations and continues in
 * NAME.elem.done. */
typedef struct CgLoop {
	LLVMBasicBlockRef pre, body, exit;
	LLVMValueRef j;
} CgLoop;
LLVMValueRef cg_loop_begin(CgFn *fn, CgLoop *l, const char *name);
void cg_loop_end(CgFn *fn, CgLoop *l, uint32_t n);
static inline bool cg_is_tile(CgFn *fn, Value v)
{
	return ir_type(fn->f, v)->kind == TY_TILE;
}

/* ---- schedule.c: loads move above the reductions and dots before them -- */

void cg_schedule(CgFn *fn);

/* ---- check.c: what codegen can lower ----------------------------------- */

/* Reports (at each op) what cannot be lowered for the target. */
bool cg_check_ops(CgFn *fn, Block *b);

/* ---- tasks.c: warp-specialized tasks ------------------------------------ */

bool cg_tasks_op(CgFn *fn, Op *op);
/* i1: this thread is the first of the program, or of its task. */
LLVMValueRef cg_thread0(CgFn *fn);

/* ---- assign.c: home layouts -------------------------------------------- */

/* Marks rematerializable values and picks home layouts. */
void cg_assign_layouts(CgFn *fn);
/* The layout a load/store/atomic/cp_async uses for its pointer tile. */
const Layout *cg_mem_layout(CgFn *fn, Op *op);
/* The layout op asks for its operand i (NULL: not a tile operand). */
const Layout *cg_operand_layout(CgFn *fn, Op *op, uint32_t i);
/* cg_tile of operand i in that layout. */
LLVMValueRef *cg_operand(CgFn *fn, Op *op, uint32_t i);
/* The assumptions the accesses of op (and its regions) need for their
 * fast-path vectors; 0 when the fast path is no wider. */
uint64_t cg_fast_deps(CgFn *fn, Op *op);
/* Lowers the loads ops[0..n) behind one check (memory.c); false, having
 * emitted nothing, when one of them cannot join that way. */
bool cg_load_group(CgFn *fn, Op **ops, uint32_t n);
int cg_vec_dim(const Layout *l);         /* the dim vectors run along */

/* ---- smem.c: shared memory plan, scratch and conversions ----------------- */

/* Reads the plan of the laid-out IR. */
bool cg_smem_plan(CgFn *fn);
int64_t cg_smem_total(CgFn *fn);
int64_t cg_smem_dynamic(CgFn *fn);  /* bytes a launch must ask for */
/* Byte offset of an op's scratch, or of a smem_alloc's buffer. */
int64_t cg_smem_offset(CgFn *fn, Op *op);
/* The scratch an op needs beyond its conversions (reduce, dot, ...). */
int64_t cg_op_scratch(CgFn *fn, Op *op);
/* Registers of the first copies, shared with the replicas. */
LLVMValueRef *cg_share_first(CgFn *fn, Type *ety, LLVMValueRef *r,
			     const Layout *l, int64_t off);
LLVMValueRef cg_smem_ptr(CgFn *fn, LLVMValueRef off);  /* i32 -> ptr */
/* Converts registers between layouts through scratch at `off`. */
LLVMValueRef *cg_convert(CgFn *fn, Type *ety, LLVMValueRef *r,
			 const Layout *from, const Layout *to, int64_t off);
/* Its first half: the copy written and the barrier after it;
 * cg_convert_addr is the byte offset of the element at coordinates c of
 * `to` in that copy, cg_convert_step the bytes from an element to the
 * next along dim d (eb only along the innermost dim, or where the dims
 * after d are all of 1: the copy is row-major, its rows padded). */
void cg_convert_write(CgFn *fn, Type *ety, LLVMValueRef *r,
		      const Layout *from, const Layout *to, int64_t off);
LLVMValueRef cg_convert_addr(CgFn *fn, const Layout *to, LLVMValueRef *c,
			     int eb, int64_t off);
int64_t cg_convert_step(const Layout *l, int d, int eb);
/* Is every thread's vector of n registers g .. g + n - 1 (g a multiple
 * of n) n adjacent elements of the copy at off, aligned to n * eb? */
bool cg_convert_vec_ok(const Layout *l, int n, int eb, int64_t off);
void cg_barrier(CgFn *fn);
/* The CTA barrier of a sync_threads that codegen sank to just before the
 * next op's first shared-memory write (a reduction's partials come after
 * its register and shuffle work, which touches no shared memory). */
void cg_sync_flush(CgFn *fn);
bool cg_conv_fence(CgFn *fn, Value v);
/* Byte offset of the run-time coordinate x along dim d of view w, the
 * tiled strips included (sv_dim_bytes for a constant). */
LLVMValueRef cg_view_dim_off(CgFn *fn, const SmemView *w, int d,
			     LLVMValueRef x);
/* sv_swizzle of a run-time address. */
LLVMValueRef cg_swizzle(CgFn *fn, LLVMValueRef addr, Swizzle s);
/* The swizzled byte offset of base + x + k: x the thread's part, k a
 * constant, base known to be a multiple of `align` bytes. */
LLVMValueRef cg_swizzle_off(CgFn *fn, LLVMValueRef base, int64_t align,
			    LLVMValueRef x, int64_t k, Swizzle s);
/* i1 "this thread holds the first copy" for layouts with replicated
 * lanes or warps; NULL when there is no replication. */
LLVMValueRef cg_first_copy(CgFn *fn, const Layout *l);
/* One element of a tile load (pointer p, mask m or NULL, `other` o) or
 * store, for a loop over a thread's elements (kernel.c's element tail). */
LLVMValueRef cg_load_elem(CgFn *fn, Op *op, LLVMValueRef p, LLVMValueRef m,
			  LLVMValueRef o);
void cg_store_elem(CgFn *fn, Op *op, LLVMValueRef p, LLVMValueRef v,
		   LLVMValueRef m);
/* The words of a cp_async's vectors of n elements (words[g] for the one
 * at register g) by realigned loads, with the facts `gen`, and an i32
 * with bit g / n set where vector g is not all in (its words are zero:
 * for the caller to copy element by element); NULL (and nothing emitted)
 * where its pointers are not contiguous enough. */
LLVMValueRef cg_copy_realign(CgFn *fn, Op *op, const Axis *gen, int n,
			     LLVMValueRef *words);
LLVMValueRef cg_smem_store_vec(CgFn *fn, LLVMTypeRef et, LLVMValueRef *v,
			       int n, LLVMValueRef off, int align);
void cg_smem_load_vec(CgFn *fn, LLVMTypeRef et, LLVMValueRef *out, int n,
		      LLVMValueRef off, int align);
/* The scratch offset of the op being lowered, for conversions. */
int64_t cg_cur_scratch(CgFn *fn);
void cg_set_cur_op(CgFn *fn, Op *op);

/* ---- lowering of op families (one file each) ----------------------------- */

bool cg_elementwise(CgFn *fn, Op *op);   /* elementwise.c */
LLVMValueRef cg_binop(CgFn *fn, OpKind k, Type *ety, LLVMValueRef a,
		      LLVMValueRef b);
LLVMValueRef cg_cmp_val(CgFn *fn, const char *pred, Type *ety,
			LLVMValueRef a, LLVMValueRef b);
bool cg_convert_op(CgFn *fn, Op *op);    /* convert.c: cvt, bitcast */
LLVMValueRef cg_cvt(CgFn *fn, Type *to, Type *from, LLVMValueRef v);
/* A math op's hardware approximation: --fast-math, or its `approx`. */
bool cg_approx(CgFn *fn, Op *op);
LLVMValueRef cg_math(CgFn *fn, OpKind k, Type *ety, bool approx, LLVMValueRef x);
/* sin or cos of a thread's n registers x at once into out (dup: the
 * replicated ones); false where the per-element path applies. */
bool cg_trig_tile(CgFn *fn, OpKind k, Type *ety, LLVMValueRef *x, uint32_t n,
		  uint32_t dup, LLVMValueRef *out);
LLVMValueRef cg_fmod(CgFn *fn, LLVMValueRef a, LLVMValueRef b); /* fmod.c */
bool cg_shape_op(CgFn *fn, Op *op);      /* shape.c */
LLVMValueRef *cg_remat(CgFn *fn, Value v, const Layout *ly);
const Layout *cg_shape_operand_layout(CgFn *fn, Op *op, const Layout *res);
LLVMValueRef *cg_elem_compute(CgFn *fn, Op *op, const Layout *ly);
LLVMValueRef cg_elem_one(CgFn *fn, Op *op, LLVMValueRef *x);
LLVMValueRef cg_convert_one(CgFn *fn, Op *op, LLVMValueRef x);
/* One element of a rematerialized tile at run-time coordinates c[rank]
 * (i32), for loops over a thread's elements; NULL when v has a home
 * (its registers cannot be indexed at run time). */
LLVMValueRef cg_elem_at(CgFn *fn, Value v, LLVMValueRef *c);
/* The coordinates of register j (an i32 at run time) of layout l. */
void cg_reg_coords(CgFn *fn, const Layout *l, LLVMValueRef j, LLVMValueRef *c);
LLVMValueRef *cg_convert_compute(CgFn *fn, Op *op, const Layout *ly);
LLVMValueRef cg_widen(CgFn *fn, Type *e, LLVMValueRef v);
LLVMValueRef cg_narrow(CgFn *fn, Type *e, LLVMValueRef v);
LLVMValueRef cg_fast(CgFn *fn, LLVMValueRef v);
LLVMValueRef cg_ptr_add(CgFn *fn, Type *ptrty, Type *offty, LLVMValueRef p,
			LLVMValueRef off);
bool cg_memory_op(CgFn *fn, Op *op);     /* memory.c */
bool cg_atomic_op(CgFn *fn, Op *op);     /* atomic.c */
/* Runs what follows only where pred holds (NULL: everywhere) until
 * cg_pred_end(fn, the block it returns). */
LLVMBasicBlockRef cg_pred_begin(CgFn *fn, LLVMValueRef pred);
void cg_pred_end(CgFn *fn, LLVMBasicBlockRef out);
bool cg_reduce_op(CgFn *fn, Op *op);     /* reduce.c */
bool cg_control_op(CgFn *fn, Op *op);    /* control.c */
bool cg_shared_op(CgFn *fn, Op *op);     /* shared.c */
bool cg_math_supported(CgFn *fn, Op *op); /* math.c */
bool cg_dot_op(CgFn *fn, Op *op);        /* mma.c */
bool cg_wgmma_op(CgFn *fn, Op *op);      /* wgmma.c */
bool cg_tma_op(CgFn *fn, Op *op);        /* tma.c */
bool cg_tma_stores(Func *f);             /* has it a tma_store? */
void cg_tma_drain(CgFn *fn);             /* the stores' reads done */
/* Reports a dot_async wgmma cannot run (before lowering). */
bool cg_wgmma_check(CgFn *fn, Op *op);
/* The smem view dot operand i is read from directly (0: it is staged). */
Value cg_dot_view(CgFn *fn, Op *op, int i);

#endif
