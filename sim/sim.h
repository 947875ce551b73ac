/*
 * sim.h: the tile-IR simulator (libtlxsim) -- one internal header for
 * sim/, with a section per .c file.
 *
 * The simulator executes a kernel of the tile IR exactly as docs/il.md
 * defines it, on the CPU:
 *
 *   SimMem     the simulated global address space: allocations at fake,
 *              well-separated addresses, each with a per-byte shadow that
 *              records which bytes were written (mem.c)
 *   SimLaunch  one launch: the grid, its clusters, the options, the async
 *              operations in flight and the fault handler (launch.c)
 *   SimCta     one program (CTA): its shared memory (with shadow and
 *              pending-async maps), its values, barriers, pipes, schedules
 *   SimCo      a coroutine: the CTA's main code, or one task of a `tasks`
 *              op.  The interpreter is an explicit machine (exec.c): a
 *              coroutine is a stack of frames (block, next op, loop state),
 *              so a blocking op just reports "blocked" and the scheduler
 *              runs another coroutine.  No ucontext, no threads.
 *   SimVal     a value: a scalar or tile stored in its element's own width
 *              (f16/bf16/fp8 as bits, i1 as one byte), a shared-memory
 *              view, barriers, a pipe, a schedule or a tensor descriptor
 *
 * Faults (out of bounds, unwritten reads, deadlocks, misuse, asserts)
 * format a message and longjmp to the launch's boundary (sim_launch), which
 * frees everything and returns SIM_FAULT; nothing jumps past it.
 *
 * Laid-out kernels (docs/il.md 2.1: every tile says which register of
 * which lane of which warp holds each element) are checked for what only
 * that stage says:
 *   the plan   (plan.c, when the launch starts) buffers (`offset`) and
 *              ops' scratch (`scratch`) inside the kernel's `smem` and the
 *              target's limit, aligned, no two live at once overlapping;
 *   vectors    (race.c) smem_load/smem_store with `vec = N`: each thread's
 *              registers r..r+N-1 are N contiguous elements aligned to
 *              N * element bytes;
 *   races      (race.c) a byte of shared memory written by one warp and
 *              read or written by another with no barrier between.  Each
 *              byte's shadow holds its last write and the reads since, as
 *              (agent, clock, warps, op); an agent is the main code or a
 *              task, with a vector clock over the cluster's agents that
 *              barriers (sync_threads and the ops' own: convert_layout,
 *              reduce, dot, atomic with scratch; mbar_alloc;
 *              cp_async_wait; mbar_arrive), cluster_sync, the start and
 *              end of `tasks`, and mbarrier arrive/wait pairs (remote
 *              arrivals too) advance; multicast TMA loads write every
 *              program of their mask as that program's peers.  Accesses
 *              follow from layouts: stores from an element's first copy,
 *              loads into every warp holding it.  Asynchronous ops (TMA, dot_async, cp.async)
 *              access as peer agents of their issuer until the wait that
 *              retires them, or the barrier phase their bytes complete;
 *              an async-proxy read of a generic write needs the writer's
 *              fence_async_shared (always checked at this stage).
 */
#ifndef TLX_SIM_H
#define TLX_SIM_H

#include <math.h>

#include "ir/ir.h"

/* The simulator stores elements little-endian in host order. */
_Static_assert(sizeof(float) == 4 && sizeof(double) == 8, "IEEE floats");

enum { SIM_OK = 0, SIM_FAULT = 1, SIM_NOMEM = 2, SIM_INVALID = 3 };

/* ---- mem.c: the simulated global address space ------------------------ */

typedef struct SimAlloc {
	uint64_t base, size;
	uint8_t *data;    /* host backing; NULL once freed */
	uint8_t *shadow;  /* 1 per byte that was written */
	/* per byte, 1 + the program that stored it last in launch `wepoch`
	 * (0: none, or one that had used an atomic); made at the first store
	 * of a kernel, for the race check between programs (memops.c) */
	uint32_t *wprog;
	uint64_t wepoch;
	bool freed;
} SimAlloc;

typedef struct SimMem {
	SimAlloc **v;     /* sorted by base (bases only grow) */
	uint32_t n, cap;
	uint32_t nfreed;  /* freed records kept for messages */
	uint64_t next;    /* base of the next allocation */
	uint64_t live;    /* bytes allocated */
	uint64_t limit;   /* device memory size */
	uint64_t launches;  /* kernel launches so far (SimAlloc.wepoch) */
	uint64_t steps;     /* operations executed by every launch so far */
	SimAlloc *hint;   /* last lookup */
} SimMem;

enum { SIM_MEM_ALIGN = 256 };

void sim_mem_init(SimMem *m, uint64_t limit);
void sim_mem_fini(SimMem *m);
int sim_mem_alloc(SimMem *m, uint64_t size, uint64_t *out);
int sim_mem_free(SimMem *m, uint64_t addr);
/* The live allocation holding [addr, addr+n), or NULL. */
SimAlloc *sim_mem_find(SimMem *m, uint64_t addr, uint64_t n);
/* Host copies and fills: SIM_INVALID when the range is not inside one
 * live allocation.  Writes mark the shadow; reads do not check it. */
int sim_mem_write(SimMem *m, uint64_t dst, const void *src, uint64_t n);
int sim_mem_read(SimMem *m, void *dst, uint64_t src, uint64_t n);
int sim_mem_copy(SimMem *m, uint64_t dst, uint64_t src, uint64_t n);
int sim_mem_fill(SimMem *m, uint64_t dst, int byte, uint64_t n);
/* Explains where [addr, addr+n) lies: "is 4 bytes past the end of the
 * 4096-byte allocation at 0x...". */
void sim_mem_describe(SimMem *m, uint64_t addr, uint64_t n, Buf *out);

/* ---- num.c: element formats (rounding: ir/numeric.c) ------------------------ */

/* Exact decoders (fast paths of ir/numeric.c's). */

float sim_f16_to_f32(uint16_t h);
float sim_bf16_to_f32(uint16_t h);
float sim_e4m3_to_f32(uint8_t x);
float sim_e5m2_to_f32(uint8_t x);

/* Element access by kind, one element at a time (slow paths). */
double sim_get_f(TypeKind k, const void *p);
void sim_put_f(TypeKind k, void *p, double v);  /* one rounding */
int64_t sim_get_i(TypeKind k, const void *p);   /* sign/zero extended */
void sim_put_i(TypeKind k, void *p, int64_t v); /* truncates (i1: & 1) */
/* IEEE minNum/maxNum: a NaN operand is ignored unless both are; -0 < +0
 * (as ir/numeric.c folds them). */
static inline double
sim_min_num(double a, double b, bool max)
{
	if (a != a)
		return b;
	if (b != b)
		return a;
	if (a == b)
		return (signbit(a) != 0) == max ? b : a;
	return (a < b) != max ? a : b;
}

/* Decode/encode n elements of a float kind to/from f32. */
void sim_to_f32(TypeKind k, const void *src, float *dst, size_t n);
void sim_from_f32(TypeKind k, const float *src, void *dst, size_t n);
/* Element size in bytes of a tile/scalar element type (i1: 1, ptr: 8). */
int sim_esize(Type *t);
int sim_kind_bytes(TypeKind k);  /* scalar kinds; 8 for pointers */

/* ---- values -------------------------------------------------------------- */

typedef struct SimCta SimCta;
typedef struct SimCo SimCo;
typedef struct SimLaunch SimLaunch;

/* A view of shared memory: element [i..] is where the view algebra
 * shared with code generation puts it (ir/smemview.c), bytes from the
 * start of the CTA's shared memory: sv_swizzle(g.swz, off + the sum of
 * sv_dim_bytes(&g, d, i[d]) over the dims) -- off + sum(i[d] * stride[d])
 * elements of g.ebytes bytes in a buffer without an encoding. */
typedef struct SimView {
	int64_t off;  /* bytes */
	SmemGeom g;
} SimView;

typedef struct SimBar {
	int32_t expected;  /* arrivals per phase */
	int32_t pending;   /* arrivals still missing in this phase */
	int64_t tx;        /* expected minus completed bytes, this phase */
	uint32_t phase;    /* phases completed so far */
	uint32_t index;    /* in its array ... */
	uint32_t count;    /* ... of this many (0: a single mbar) */
	const char *name;  /* the value's name, for reports */
	const char *role;  /* pipes: "full" or "empty"; else NULL */
	Op *alloc;         /* the op that made it (cluster lookups) */
	SimCta *cta;
	/* laid-out kernels (race.c): the clocks its arrivals released, and
	 * those of its completed phases, which a wait acquires */
	uint32_t *rel, *acq;
} SimBar;

/* A tensor descriptor argument (row-major; strides in elements). */
typedef struct SimTensor {
	uint64_t base;
	TypeKind elem;
	int32_t rank;
	int64_t shape[5];
	int64_t stride[5];
} SimTensor;

typedef struct SimPipe {
	Op *op;
	uint32_t depth;
	SimBar *full, *empty;  /* depth each */
	const char *name;
	SimView *bufs;         /* the buffers; slot s is bufs[i][s] */
	uint32_t nbufs;
} SimPipe;

typedef struct SimSched SimSched;

/* Laid-out kernels (race.c): who last touched a byte of shared memory.
 * An agent of a program is the main code or one task (the first
 * SIM_TASK_AGENTS), or an asynchronous peer of one (the rest: its TMA
 * loads onto one barrier of this program, its dot_asyncs, its TMA
 * stores, its cp.asyncs); agents are numbered across the cluster, agent
 * a of the program of rank r being r * SIM_AGENTS + a.  `clk` is its
 * clock at the access, `warps` the warps (0: nobody; a peer's: the
 * issuing warps), `opag` the op's index << 10 | agent. */
enum { SIM_TASK_AGENTS = 33, SIM_AGENTS = 64, SIM_MAX_CLUSTER = 16 };
enum { SIM_PEER_TMA, SIM_PEER_MMA, SIM_PEER_STORE, SIM_PEER_CP };
typedef struct SimPeer {
	uint8_t kind;     /* SIM_PEER_* */
	uint16_t issuer;  /* the agent whose ops these are (of the cluster:
			   * TMA loads multicast from another program) */
	SimBar *bar;      /* SIM_PEER_TMA: where its bytes complete (a
			   * barrier of this program) */
	uint32_t clk;    /* its next op's clock */
	uint32_t done;   /* SIM_PEER_STORE: the clock that the issuing warp's
			  * tma_store_wait reached (its agent's other warps
			  * learn it at their next barrier) */
} SimPeer;
typedef struct SimAcc {
	uint32_t clk, warps, opag;
} SimAcc;
typedef struct SimShadow {
	SimAcc w;     /* the last write */
	SimAcc r[2];  /* reads since, by up to two unordered agents */
} SimShadow;
typedef struct SimRace SimRace;

typedef struct SimVal {
	uint8_t *data;   /* tile elements (heap, reused) */
	uint32_t cap;    /* bytes at data */
	uint32_t group;  /* dot_async group still in flight; 0: ready */
	union {
		uint64_t bits;  /* a scalar, in its own width (low bytes) */
		SimView view;
		struct {
			SimBar *bar;
			uint32_t n;
		} mb;
		SimPipe *pipe;
		SimSched *sched;
		SimTensor *tensor;
	} u;
} SimVal;

/* The values of one function activation. */
typedef struct SimAct {
	Func *fn;
	SimVal *vals;  /* fn->vals.n */
	struct SimAct *next_all;   /* every activation of the CTA */
	struct SimAct *next_free;  /* the CTA's pool of free ones */
} SimAct;

/* Argument of a launch, in the parameter's own type. */
typedef struct SimArg {
	uint64_t bits;     /* scalar or pointer bits */
	SimTensor tensor;  /* tma<...> parameters */
} SimArg;

typedef struct SimOpts {
	int64_t seed;        /* -1: deterministic */
	uint64_t max_steps;
	uint32_t async_delay;
	uint32_t resident;   /* clusters at once */
	int sm;
	int64_t smem_limit;
	bool check_fences;
	int reduce_order;    /* TLXRT_SIM_REDUCE_ORDER: 0, 1 reverse, 2 wide,
			      3 tensor cores */
	bool atomic_reverse; /* TLXRT_SIM_ATOMIC_ORDER 1 */
} SimOpts;

void sim_opts_default(SimOpts *o);

/* ---- launch.c: the entry points ----------------------------------------- */

typedef struct SimLaunchCfg {
	uint32_t grid[3];
	uint32_t cluster[3];  /* 1 1 1 without clusters */
	bool fast_entry;      /* entry_fast's value: the arguments satisfy the
				 kernel's fast.* assumptions (libtlxrt) */
} SimLaunchCfg;

/* Runs `kernel` over the grid.  args: one per parameter.  On SIM_FAULT or
 * SIM_INVALID the message is in `err`. */
int sim_launch(SimMem *mem, Module *m, Func *kernel, const SimArg *args,
	       const SimLaunchCfg *cfg, const SimOpts *o, Buf *err);
/* Evaluates a grid function on the kernel's arguments. */
int sim_eval_grid(SimMem *mem, Module *m, Func *gridfn, const SimArg *args,
		  uint32_t out[3], Buf *err);

/* One shared-memory range of a kernel's static plan: a buffer
 * (smem_alloc; mbar_alloc with an `offset`) or an op's scratch. */
typedef struct SimSmemBuf {
	Op *op;
	int64_t off, size;
	const char *name;
	bool scratch;
} SimSmemBuf;

typedef struct SimSmemPlan {
	SimSmemBuf *v;
	uint32_t n, cap;
	int64_t total;  /* bytes */
} SimSmemPlan;

/* The shared memory that `kernel` and the functions it calls use.  The
 * laid-out IR's plan where it has one (`offset` on buffers, `scratch` on
 * ops, the kernel's `smem`); buffers without an `offset` are laid out
 * after it in order of appearance, 128-byte aligned (all of them, for
 * IR without a plan).  Storage comes from `a`. */
void sim_smem_plan(Module *m, Func *kernel, SimSmemPlan *out, Arena *a);
/* Bytes of scratch an op with a `scratch` attribute uses on target t
 * (NULL: sm_90a); 0: none. */
int64_t sim_scratch_size(const Target *t, Func *f, Op *op);

/* ======================================================================
 * Internals shared by the simulator's .c files.
 * ====================================================================== */

enum { SIM_SMEM_ALIGN = 128 };

/* A coroutine's frame: a block being executed and where. */
enum {
	FR_BODY,   /* a function body; owner: NULL (kernel) or the call */
	FR_FOR, FR_WHILE, FR_IF, FR_SCHED, FR_TASK,
};

typedef struct SimFrame {
	Block *blk;
	Op *op;          /* the next op to run */
	Op *owner;       /* the op whose region this is; the call for bodies */
	SimAct *act;
	int kind;
	bool uns;        /* FR_FOR: unsigned induction variable */
	int64_t iv, ub, step;
	uint32_t pos;    /* FR_SCHED: position in the tile stream */
	SimSched *sched;
} SimFrame;

enum { CO_READY, CO_BLOCKED, CO_DONE };

typedef struct SimPipePos {
	SimPipe *pipe;
	uint32_t pslot, pphase;  /* producer */
	uint32_t cslot, cphase;  /* consumer */
} SimPipePos;

struct SimCo {
	SimCta *cta;
	SimFrame *fr;
	uint32_t nfr, capfr;
	int state;
	const char *task;   /* NULL: the CTA's main code */
	int64_t replica;
	SimCo *parent;
	uint32_t live_children;
	Op *joining;        /* the tasks op it waits on */
	/* what it is blocked on, for deadlock reports */
	Op *wait_op;
	SimBar *wait_bar;
	uint32_t wait_parity;
	const char *wait_what;
	/* async groups, numbered from 1 */
	uint32_t dot_issued, dot_done;
	uint32_t cp_open, cp_committed, cp_done;
	uint32_t st_issued, st_done;
	/* sync_threads / cluster_sync */
	bool sync_waiting;
	uint64_t sync_gen;
	/* laid-out kernels: its agent (0: the main code, 1 + k: task k of
	 * its tasks op) and warps warp0 .. warp0 + nwarps - 1 */
	uint32_t agent, warp0, nwarps;
	uint32_t forks;     /* tasks ops it started so far */
	uint32_t fork;      /* a task: which of its parent's */
	/* pipes used, with this task's positions */
	SimPipePos *pipes;
	uint32_t npipes, cappipes;
	/* return values of the outermost function (grid functions) */
	SimVal *ret;
	Type **ret_ty;
	uint32_t nret;
};

/* The agent whose fence_async_shared orders co's generic writes (tasks
 * past the race checker's first 32 share the last). */
static inline uint32_t
sim_fence_agent(const SimCo *co)
{
	return co ? MIN(co->agent, SIM_TASK_AGENTS - 1) : 0;
}

typedef struct SimBarSet {
	Op *op;
	SimBar *bar;
	uint32_t n;
} SimBarSet;

typedef struct SimCluster SimCluster;

struct SimCta {
	SimLaunch *L;
	SimCluster *cl;
	uint32_t pid[3];
	uint64_t lin;       /* linear program id */
	bool atomics;       /* it has used a global atomic (races unchecked) */
	uint32_t rank;      /* in its cluster */
	int64_t smem_size;
	uint8_t *smem;
	uint8_t *sh_written;  /* 1: written */
	uint8_t *sh_pw;       /* async writes in flight (count) */
	uint8_t *sh_pr;       /* async reads in flight (count) */
	uint8_t *sh_dirty;    /* generic writes not fenced: agent + 1 */
	int64_t dirty_lo[SIM_TASK_AGENTS], dirty_hi[SIM_TASK_AGENTS];
	SimShadow *shadow;    /* laid-out kernels: accesses by warps */
	uint32_t *vc;         /* ... and each agent's vector clock over the
				 cluster's agents (race.c) */
	const char *agent_task[SIM_TASK_AGENTS];  /* task names, for reports */
	SimPeer peers[SIM_AGENTS - SIM_TASK_AGENTS];  /* agent 33 + i */
	uint32_t npeers;
	SimAct *act;          /* the kernel's values */
	SimAct *pool;         /* free activations of called functions */
	SimAct *acts;         /* every activation, for cleanup */
	Arena arena;          /* barriers, pipes, schedules */
	SimCo **cos;
	uint32_t ncos, capcos;
	Vec(SimBarSet) bars;  /* the latest barriers of each mbar_alloc */
	Vec(SimSched *) scheds;
	uint32_t sync_arrived;
	uint64_t sync_gen;
	bool done;
};

typedef struct SimClcResp {
	Op *op;
	Vec(int64_t) resp;  /* cancelled cluster ids; -1: none left */
	uint32_t issued;    /* clc_try_cancel: requests the cluster made */
} SimClcResp;

struct SimCluster {
	uint64_t id;
	SimCta *ctas;
	uint32_t n;
	uint32_t sync_arrived;
	uint64_t sync_gen;
	Vec(SimClcResp) clc;
	Arena arena;
	bool done;
};

struct SimSched {
	Op *op;
	int kind;  /* SCHED_STATIC, SCHED_DYNAMIC, SCHED_CLC */
	int64_t ntiles;
	Vec(int64_t) tiles;
	bool ended;
	bool started;      /* clc: the program's own tile was taken */
	uint32_t ncancel;  /* clc: requests made */
	SimCta *cta;
};

enum { SCHED_STATIC, SCHED_DYNAMIC, SCHED_CLC };

/* An asynchronous operation in flight. */
enum { AS_TMA_LOAD, AS_TMA_STORE, AS_CP_ASYNC, AS_DOT };

typedef struct SimAsync SimAsync;
struct SimAsync {
	int kind;
	Op *op;             /* the issuing op (for messages) */
	SimCo *co;          /* the issuing coroutine */
	SimCta *cta;        /* the issuing CTA */
	uint64_t due;       /* TMA loads: lands at this step */
	uint32_t group;     /* cp.async group, TMA store or dot number */
	uint32_t mask;      /* TMA load: CTAs (ranks) written */
	SimView view;       /* the shared memory written or read */
	SimView view2;      /* AS_DOT: the second operand (esize 0: none) */
	Op *bar_op;         /* TMA load: the barrier's mbar_alloc ... */
	uint32_t bar_index; /* ... and index (found again in each CTA) */
	SimBar *bar;        /* ... or the barrier itself (pipes) */
	SimTensor tensor;   /* TMA store: where to */
	int64_t coord[5];
	uint8_t *data;      /* bytes to land (view's elements, row-major) */
	uint8_t *valid;     /* cp.async: 1 per element that is written */
	uint32_t peer, clk; /* laid-out kernels: its access (race.c; 0: none) */
	/* TMA loads: the peer (of that program; 0: none) and clock of its
	 * access to each program's shared memory, by rank */
	uint8_t mpeer[SIM_MAX_CLUSTER];
	uint32_t mclk[SIM_MAX_CLUSTER];
	SimAsync *next;
};

typedef struct SimOpInfo {
	Op *op;
	int64_t v;
} SimOpInfo;

/* The tiles one agent (task and replica; NULL: the main code) got from a
 * lowered schedule (sched_tile): how often each came, and the program it
 * came to first. */
typedef struct SimTiles {
	const char *sched, *task;
	int64_t replica, n;
	Op *op;              /* its first sched_tile, for reports */
	uint32_t *count;
	uint64_t *prog;
} SimTiles;

typedef struct SimCounter {
	Op *op;
	int64_t n;
} SimCounter;

typedef struct SimAxis SimAxis;

struct SimLaunch {
	SimMem *mem;
	Module *mod;
	Func *kern;
	SimArg *args;        /* a copy, one per parameter */
	SimOpts o;
	uint32_t grid[3], cshape[3];
	uint64_t epoch;      /* this launch's number in mem (SimMem.launches) */
	bool fast_entry;      /* entry_fast (SimLaunchCfg) */
	uint32_t csize;      /* CTAs per cluster */
	uint64_t nprog, nclusters;
	uint64_t steps;
	uint64_t rng;
	Buf *err;
	jmp_buf jb;
	SimCo *cur;          /* the running coroutine (fault context) */
	/* clusters start (or clc cancels them) in the order queue_next gives */
	uint64_t qhead, qn;      /* clusters started (or cancelled), all */
	uint64_t qkey[4];        /* the start order's round keys */
	int qbits;               /* the order's domain: 2^qbits clusters */
	SimCluster **res;
	uint32_t nres;
	SimAsync *inflight;  /* in issue order */
	SimAsync *landing;   /* taken off inflight, landing: a fault there
				leaves it to teardown */
	SimSmemPlan plan;
	Vec(SimOpInfo) info; /* pipe_create: consumers per pipe */
	Vec(SimCounter) counters;  /* dynamic schedules */
	Vec(SimTiles) tiles;       /* lowered schedules: what each agent got */
	Arena arena;         /* launch-lifetime storage */
	void *scratch[6];    /* conversion buffers */
	size_t scratch_n[6];
	SimAct *spare;       /* activations of retired CTAs, for reuse */
	SimVal *tmp;         /* parallel copies */
	uint32_t ntmp;
	int64_t *offs;       /* sim_view_offsets */
	size_t noffs;
	struct SimRun *runs; /* sim_view_runs */
	size_t nruns;
	uint32_t *ret_out;   /* grid functions: the three results */
	uint32_t nret_out;
	SimRace *race;       /* laid-out kernels: race.c's launch state */
	SimAxis *axis;       /* laid-out kernels: the facts axis.c checks */
	bool laid_out;       /* the kernel is laid-out IR, as codegen takes it */
};

/* axis.c: the axis analysis's facts, checked on each result */
void sim_axis_init(SimLaunch *L);
void sim_axis_check(SimLaunch *L, SimAct *act, Op *op);

/* launch.c */
TLX_NORETURN void sim_fault(SimLaunch *L, Op *op, const char *fmt, ...)
	TLX_PRINTF(3, 4);
TLX_NORETURN void sim_oom(SimLaunch *L);
void *sim_xalloc(SimLaunch *L, size_t n);     /* zeroed; longjmps on OOM */
void *sim_xrealloc(SimLaunch *L, void *p, size_t n);
void *sim_scratch(SimLaunch *L, int i, size_t bytes);  /* i < 6 */
uint64_t sim_rand(SimLaunch *L);
SimCo *sim_co_new(SimLaunch *L, SimCta *cta, SimCo *parent);
SimCta *sim_cluster_cta(SimLaunch *L, SimCta *from, int64_t rank, Op *op);
int64_t sim_info(SimLaunch *L, Op *op, int64_t dflt);
int64_t *sim_counter(SimLaunch *L, Op *op);
/* sched_tile: co's agent got tile t of n; reports a tile outside the
 * schedule or one that came twice.  sim_tiles_check, after the launch,
 * one that never came. */
void sim_tile_seen(SimLaunch *L, SimCo *co, Op *op, int64_t t, int64_t n);
void sim_tiles_check(SimLaunch *L);
/* Takes the next cluster that has not started, or -1. */
int64_t sim_cancel_cluster(SimLaunch *L);
uint64_t sim_cluster_cta_lin(SimLaunch *L, uint64_t cluster, uint32_t rank);
/* The program ids of the cluster's rank-0 program. */
void sim_cluster_first(SimLaunch *L, uint64_t cluster, uint32_t pid[3]);
/* Lands / completes async operations of `co` matching kind and group
 * <= upto (all when co is NULL). */
void sim_async_complete(SimLaunch *L, SimCo *co, int kind, uint32_t upto);
void sim_async_push(SimLaunch *L, SimAsync *a);
/* async.c: makes one operation take effect (data lands, bytes complete,
 * pending marks go away). */
void sim_async_land(SimLaunch *L, SimAsync *a);
const char *sim_smem_name(SimLaunch *L, int64_t off);

/* exec.c: the machine */
SimVal *sim_val(SimAct *act, Value v);
Type *sim_ty(SimAct *act, Value v);
/* The value slot of v, with room for its type's elements. */
SimVal *sim_def(SimLaunch *L, SimAct *act, Value v);
uint8_t *sim_data(SimVal *s, Type *t);   /* elements of a scalar or tile */
void sim_copy_val(SimLaunch *L, SimVal *dst, Type *t, SimVal *src);
SimAct *sim_act_new(SimLaunch *L, SimCta *cta, Func *fn);
void sim_act_release(SimCta *cta, SimAct *a);
void sim_act_free(SimAct *a);
/* Runs co for up to `quantum` ops; true when it made progress. */
bool sim_run(SimLaunch *L, SimCo *co, uint32_t quantum);
void sim_push_frame(SimLaunch *L, SimCo *co, SimFrame f);
int64_t sim_scalar_i(SimAct *act, Value v);  /* an int operand, extended */

/* tile.c: pure ops on scalars and tiles */
void sim_op_const(SimLaunch *L, SimAct *act, Op *op);
void sim_op_range(SimLaunch *L, SimAct *act, Op *op);
void sim_op_binary(SimLaunch *L, SimAct *act, Op *op);
void sim_op_unary(SimLaunch *L, SimAct *act, Op *op);
void sim_op_math(SimLaunch *L, SimAct *act, Op *op);
void sim_op_cmp(SimLaunch *L, SimAct *act, Op *op);
void sim_op_select(SimLaunch *L, SimAct *act, Op *op);
void sim_op_fma(SimLaunch *L, SimAct *act, Op *op);
void sim_op_cvt(SimLaunch *L, SimAct *act, Op *op);
void sim_op_bitcast(SimLaunch *L, SimAct *act, Op *op);
void sim_op_shape(SimLaunch *L, SimAct *act, Op *op);
void sim_op_reduce(SimLaunch *L, SimAct *act, Op *op);
void sim_op_dot(SimLaunch *L, SimAct *act, Op *op);
/* acc (m x n, f32 or i32) += a (m x k) @ b (k x n); a, b elements of
 * kind `ek` (row-major, dense); tc: codegen runs it on tensor cores. */
void sim_matmul(SimLaunch *L, TypeKind ek, const uint8_t *a,
		const uint8_t *b, void *acc, int64_t m, int64_t n, int64_t k,
		bool tc);
void sim_op_assert(SimLaunch *L, SimAct *act, Op *op);
/* Dense row-major copy of a strided N-d array (rank <= 4). */
void sim_gather(uint8_t *dst, const uint8_t *src, int esize, int rank,
		const int64_t *shape, const int64_t *stride);
void sim_scatter(uint8_t *dst, const uint8_t *src, int esize, int rank,
		 const int64_t *shape, const int64_t *stride);
void sim_index_str(Buf *b, Type *t, int64_t i);  /* "[3, 5]" */

/* memops.c: global and shared memory */
void sim_op_ptr_add(SimLaunch *L, SimAct *act, Op *op);
void sim_op_misalign(SimLaunch *L, SimAct *act, Op *op);
void sim_op_load(SimLaunch *L, SimAct *act, Op *op);
void sim_op_store(SimLaunch *L, SimAct *act, Op *op);
void sim_op_atomic(SimLaunch *L, SimAct *act, Op *op);
void sim_op_atomic_cas(SimLaunch *L, SimAct *act, Op *op);
void sim_op_smem(SimLaunch *L, SimCta *cta, SimAct *act, Op *op);
/* Checked access to global memory: the host bytes of [addr, addr+n),
 * which must lie in one allocation, start at a multiple of align, and
 * (reads) be written; writes mark them written.  t and elem name the
 * element in messages (t NULL: none).  sim_gptr: one element of n
 * bytes. */
uint8_t *sim_grange(SimLaunch *L, Op *op, uint64_t addr, uint64_t n,
		    uint64_t align, bool write, const char *what, Type *t,
		    int64_t elem);
uint8_t *sim_gptr(SimLaunch *L, Op *op, uint64_t addr, uint64_t n,
		  bool write, const char *what, Type *t, int64_t elem);
/* Shared memory through a view: checks and copies (dense row-major).  A
 * write that is not generic (a TMA load or cp.async landing) leaves
 * nothing for a fence_async_shared to order, whatever wrote before. */
void sim_smem_read(SimLaunch *L, SimCta *cta, Op *op, const SimView *v,
		   uint8_t *dst, bool async_proxy, const char *what);
void sim_smem_check_async_write(SimLaunch *L, SimCta *cta, Op *op,
				const SimView *v, const char *what);
void sim_smem_write(SimLaunch *L, SimCta *cta, Op *op, const SimView *v,
		    const uint8_t *src, bool generic, const char *what);
/* Byte offsets of the view's elements, row-major (valid until the next
 * call); *n gets the count. */
int64_t *sim_view_offsets(SimLaunch *L, const SimView *v, size_t *n);
/* The view as contiguous byte runs in row-major order (a row of unit
 * stride is one run); valid until the next call. */
typedef struct SimRun {
	int64_t off, len;
} SimRun;
SimRun *sim_view_runs(SimLaunch *L, const SimView *v, size_t *n);
/* Adds d (+1/-1) to a pending map over the view's bytes. */
void sim_smem_mark(SimLaunch *L, uint8_t *map, const SimView *v, int d);
SimView sim_view_of(SimAct *act, Value v);

/* async.c: barriers, TMA, cp.async, async MMA, pipes, schedules, clusters */
bool sim_op_async(SimLaunch *L, SimCo *co, SimAct *act, Op *op);
void sim_bar_desc(SimBar *b, Buf *out);  /* "barrier 'full'[2]" */
void sim_bar_complete_tx(SimLaunch *L, SimBar *b, int64_t bytes, Op *op);
SimBar *sim_bar_in(SimLaunch *L, SimCta *cta, Op *alloc, uint32_t index,
		   Op *op);
/* Next tile of a schedule's stream at position pos, or -1 at its end. */
int64_t sim_sched_tile(SimLaunch *L, SimSched *s, uint32_t pos, Op *op);
void sim_describe_wait(SimCo *co, Buf *b);
/* A task finishes: faults if a sibling task waits at sync_threads. */
void sim_task_end(SimLaunch *L, SimCo *co, Op *op);

/* plan.c: the laid-out IR's shared-memory plan, checked when a launch
 * starts: every buffer and scratch range inside `smem` and the target's
 * limit, aligned, and no two that are live at once overlapping. */
void sim_plan_check(SimLaunch *L);
/* "smem_load at f.tlx:7:19" (without a location: the op's name). */
const char *sim_op_where(SimLaunch *L, Op *op, char *out, size_t n);

/* race.c: what only the laid-out stage has -- races on shared memory
 * between warps, and the alignment of vector accesses (sim.h's header
 * says the model).  Every entry is called only when L->race is set. */
void sim_race_init(SimLaunch *L);
void sim_race_cta_init(SimLaunch *L, SimCta *cta);  /* cta_free frees */
/* After op ran (and did not block) in co: its accesses and barriers;
 * before it runs, those of smem_load and smem_store (so their races are
 * reported before whatever the simulator's own checks find). */
void sim_race_op(SimLaunch *L, SimCo *co, SimAct *act, Op *op);
void sim_race_pre(SimLaunch *L, SimCo *co, SimAct *act, Op *op);
/* The tasks op of `parent` has started its tasks (parent->forks), or
 * they have all finished. */
void sim_race_fork(SimLaunch *L, SimCo *parent);
void sim_race_join(SimLaunch *L, SimCo *parent);
/* Barriers: a sync of the live agents of n programs (a CTA's, or a
 * cluster's); an arrival releasing (after the arriving agent's own
 * barrier; the barrier may be another program's) and a phase completing;
 * a wait that passed acquires what the completed phases released. */
void sim_race_sync(SimLaunch *L, SimCta *ctas, uint32_t n);
void sim_race_release(SimLaunch *L, SimBar *b);
void sim_race_phase_done(SimBar *b);
void sim_race_acquire(SimLaunch *L, SimCo *co, SimBar *b);
/* An async copy (TMA) landed on the view: no warp wrote those bytes
 * (the loads that race.c does not follow: too many peers, a peer's
 * barrier not made yet). */
void sim_race_landed(SimCta *cta, const SimView *v);
/* An asynchronous op issued by co (a: its kind, views and op; bar: where a
 * TMA load's bytes complete in co's program), before the simulator's own
 * checks: its access is by a peer agent of co's, checked against what
 * co's clock orders; a->peer and a->clk name it (TMA loads: a->mpeer and
 * a->mclk, one per program of the multicast mask).  It completes when it lands
 * (sim_race_async_done: the wait that retires it), or for TMA loads with
 * the barrier phase its bytes complete (sim_race_phase_done). */
void sim_race_async(SimLaunch *L, SimCo *co, SimAct *act, SimAsync *a,
		    SimBar *bar);
void sim_race_async_done(SimLaunch *L, SimAsync *a);
/* An async-proxy read of `off` that a generic write left unfenced: faults
 * naming the write, when the shadow knows it. */
void sim_race_unfenced(SimLaunch *L, SimCta *cta, Op *op, int64_t off);

#endif
