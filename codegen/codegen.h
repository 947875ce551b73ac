/*
 * codegen.h: code generation, tile IR -> LLVM IR -> PTX -> cubin.
 *
 * The interface the driver (tools/tlxc) and libtlx see.  It includes no
 * LLVM header: everything LLVM lives behind it in the .c files of codegen/ (cg.h is
 * the internal header of this directory).
 *
 * cg_compile() lowers every kernel of a module (after the passes: device
 * functions inlined) and produces LLVM IR text, PTX text or a cubin.  User
 * errors (an op the target lacks, shared memory over the limit, ptxas
 * rejecting the PTX) are diagnostics in `d`; the function never aborts on
 * any IR.  The output lives in the module's arena.
 */
#ifndef TLX_CODEGEN_H
#define TLX_CODEGEN_H

#include "ir/ir.h"

typedef enum CgEmit { CG_EMIT_LLVM, CG_EMIT_PTX, CG_EMIT_CUBIN } CgEmit;

/* ptxas's -Ofast-compile levels: how much of its optimization it trades
 * for compile time (CG_FC_DEFAULT: none) */
enum { CG_FC_DEFAULT, CG_FC_OFF, CG_FC_MIN, CG_FC_MID, CG_FC_MAX };
extern const char *const cg_fc_names[5];

/* Which kernels get two entries, NAME and NAME$fast (kernel.c,
 * "Specialized entries"): those with dots (the default), all that have
 * fast paths, or none (one entry whose accesses check for themselves). */

enum { CG_BARRIER_TIMEOUT_MS = 2000 };

typedef struct CgOpts {
	CgEmit emit;
	int sm;             /* 80, 90 (sm_90a) or 100 (sm_100a) */
	int olevel;         /* 0..3: LLVM's default<On> pipeline */
	bool lineinfo;      /* -lineinfo: line tables in the PTX and SASS */
	bool debug;         /* -g: the same line tables (no variables yet) */
	bool fast_math;     /* approximate math (ex2.approx, div.full...) */
	bool debug_barriers;  /* mbarrier waits trap with a report after
				 CG_BARRIER_TIMEOUT_MS instead of hanging */
	bool use_ptxas;     /* cubin through ptxas even when nvJitLink is there */
	const char *ptxas;  /* ptxas to run (NULL: configure's, then PATH) */
	bool verbose;       /* report ptxas' resource usage as notes */
	int fast_compile;   /* ptxas -Ofast-compile: CG_FC_* */
	bool generic_cubin; /* a cubin's generic entries of specialized
			       kernels assembled too, not carried as PTX
			       (__tlx_generic) for the driver to assemble
			       at their first launch */
	bool ptx_ok;        /* no assembler for a cubin: PTX instead */
} CgOpts;

/* What code generation learned about one kernel (also in __tlx_meta).
 * A kernel whose memory accesses are faster under assumptions on its
 * arguments has two entries: `name`, correct for any arguments, and
 * `fast`, correct when the arguments of the parameters (bit i: parameter
 * i) in `align` are 16-byte aligned pointers, those in `div` integers
 * that are multiples of `divisor` and those in `eq1` integers equal to 1; a
 * launch picks `fast` when they are (libtlxrt does).  fast is NULL for
 * a kernel with one entry. */
typedef struct CgKernelInfo {
	const char *name;
	int threads;        /* threads per block (32 x warps) */
	int64_t smem;       /* dynamic shared memory bytes a launch must give */
	int64_t smem_static;  /* shared memory the kernel declares itself */
	const char *fast;   /* the specialized entry, or NULL */
	uint64_t align, div, eq1;
	uint64_t tma_only;  /* of align and div: what only tensor maps need */
	int divisor;
} CgKernelInfo;

typedef struct CgResult {
	char *data;         /* LLVM IR or PTX (NUL-terminated), or a cubin */
	size_t size;        /* bytes, without the NUL of text */
	CgKernelInfo *kernels;
	uint32_t nkernels;
	const char *linker; /* "nvJitLink" or the ptxas path (cubins) */
	bool ptx_fallback;  /* a cubin was asked, but no assembler is found:
			       data is PTX (the driver assembles it) */
} CgResult;

/* Compiles m for o->sm.  Returns false after reporting errors to d. */
bool cg_compile(Module *m, const CgOpts *o, Diag *d, CgResult *out);
/* Reports what cg_compile would report before LLVM (every check of a
 * kernel's ops, tiles and shared memory) and generates nothing: no LLVM,
 * no assembler.  Returns false after reporting errors to d. */
bool cg_check(Module *m, const CgOpts *o, Diag *d);

/* True when a cubin can be made here (nvJitLink or ptxas is found). */
bool cg_can_assemble(void);

/* The ptxas a cubin would be made with: configure's, else the first on
 * PATH; NULL when there is none. */
const char *cg_find_ptxas(void);

/* Starts loading nvJitLink in a background thread (once per process) and
 * warming it up for target sm, to overlap the front end and LLVM; the
 * assembler waits for it. */
void cg_preload_assembler(int sm);
/* Waits until that worker is out of the library's start-up (before a
 * compilation returns: its caller may exit). */
void cg_settle_assembler(void);


#endif
