/*
 * tasks.c: warp-specialized tasks (sm_90a+).
 *
 * allocate-warps gave each task its warps (first_warp, span: warps plus
 * the padding of its warpgroup), its named barrier and the kernel its
 * maxnreg.  A `tasks` op becomes a branch per task on the warp index:
 *
 *   if (warp - first) <u span * replicas {
 *       setmaxnreg.inc/dec regs        (every warp of the span)
 *       instance = (warp - first) / span, its first warp, its barrier
 *                                      (a task of replicas: one body)
 *       if (warp - first) <u warps {   (the padding warps skip the body)
 *           the body, with tid, warp, warps and barriers the task's own
 *           the task's TMA stores drained by its issuing thread
 *       }
 *   }
 *   ... the next task ...
 *   join: a CTA barrier when code other than `return` follows
 *
 * Inside a task, the thread that issues TMA copies and arrives on
 * mbarriers is the task's first, cg_barrier is the task's named barrier
 * (bar.sync id, threads; a one-warp task's is bar.warp.sync), layouts are
 * over the task's warps, and coordinates and guards are computed in the
 * task's own entry block.
 */
#include "config.h"

#include "codegen/cg.h"

LLVMValueRef
cg_thread0(CgFn *fn)
{
	return LLVMBuildICmp(fn->cg->B, LLVMIntEQ, fn->tid, cg_i32(fn->cg, 0), "");
}

/* What lowering a task changes in fn, restored after it. */
typedef struct TaskCtx {
	LLVMValueRef tid, warp, task_bar_id, task_ri;
	int nwarps, nthreads, task_bar;
	const char *task;
	CoordCache *coords;
	GuardCache *guards;
	LLVMBuilderRef Bentry;
} TaskCtx;

static void
find_store(Op *op, void *ud)
{
	if (op->kind == OP_TMA_STORE)
		*(bool *)ud = true;
}

/* (warp - first) <u n */
static LLVMValueRef
warp_in(CgFn *fn, int64_t first, int64_t n)
{
	LLVMBuilderRef B = fn->cg->B;
	LLVMValueRef rel = LLVMBuildSub(B, fn->warp, cg_i32(fn->cg, first), "");

	return LLVMBuildICmp(B, LLVMIntULT, rel, cg_i32(fn->cg, n), "");
}

static void
setmaxnreg(CgFn *fn, int64_t regs)
{
	int64_t start = attr_int(&fn->f->attrs, "maxnreg", 0);
	LLVMValueRef n = cg_i32(fn->cg, regs);

	if (!regs || !start || regs == start)
		return;
	cg_intr(fn->cg, regs > start ? "llvm.nvvm.setmaxnreg.inc.sync.aligned.u32"
				     : "llvm.nvvm.setmaxnreg.dec.sync.aligned.u32",
		NULL, 0, &n, 1);
}

/* Lowers the body of task t, whose instance `ri` (NULL: the only one)
 * starts at warp `first` (its warps hold the builder). */
static void
task_body(CgFn *fn, Op *t, LLVMValueRef first, LLVMValueRef ri, int64_t warps)
{
	Cg *cg = fn->cg;
	TaskCtx saved = { fn->tid, fn->warp, fn->task_bar_id, fn->task_ri,
			  fn->nwarps, fn->nthreads, fn->task_bar, fn->task,
			  fn->coords, fn->guards, fn->Bentry };
	LLVMBasicBlockRef body = cg_new_block(fn, "task.body");
	LLVMValueRef br;
	bool stores = false;

	fn->tid = LLVMBuildSub(cg->B, fn->tid, LLVMBuildMul(cg->B, first,
			       cg_i32(cg, 32), ""), "task.tid");
	fn->warp = LLVMBuildSub(cg->B, fn->warp, first, "task.warp");
	fn->nwarps = (int)warps;
	fn->nthreads = (int)warps * 32;
	fn->task_bar = warps > 1 ? (int)attr_int(&t->attrs, "barrier", 0) : 0;
	fn->task_ri = ri;
	fn->task_bar_id = ri && fn->task_bar > 0
		? LLVMBuildAdd(cg->B, ri, cg_i32(cg, fn->task_bar), "task.bar")
		: NULL;
	fn->task = arena_printf(fn->a, "task '%s' (replica %lld)",
				attr_str(&t->attrs, "name") ? attr_str(&t->attrs, "name")
							    : "task",
				(long long)attr_int(&t->attrs, "replica", 0));
	fn->coords = NULL;
	fn->guards = NULL;
	br = LLVMBuildBr(cg->B, body);
	fn->Bentry = cg_entry_builder(cg, 1);
	LLVMPositionBuilderBefore(fn->Bentry, br);
	LLVMPositionBuilderAtEnd(cg->B, body);
	cg_scope_push(fn);
	cg_lower_block(fn, t->regions[0]);
	cg_scope_pop(fn);
	ir_walk_block(t->regions[0], find_store, &stores);
	if (stores && !fn->failed)
		cg_tma_drain(fn);  /* bulk groups are the issuing thread's */
	fn->tid = saved.tid;
	fn->warp = saved.warp;
	fn->task_bar_id = saved.task_bar_id;
	fn->task_ri = saved.task_ri;
	fn->nwarps = saved.nwarps;
	fn->nthreads = saved.nthreads;
	fn->task_bar = saved.task_bar;
	fn->task = saved.task;
	fn->coords = saved.coords;
	fn->guards = saved.guards;
	fn->Bentry = saved.Bentry;
}

bool
cg_tasks_op(CgFn *fn, Op *op)
{
	Cg *cg = fn->cg;
	LLVMBasicBlockRef join = cg_new_block(fn, "tasks.join");
	/* before a return, each task returns by itself */
	bool ret = op->next && op->next->kind == OP_RETURN;
	LLVMBasicBlockRef out = ret ? cg_new_block(fn, "tasks.ret") : join;
	Op *t;

	if (fn->task_bar >= 0) {
		cg_unsupported(cg, op, "'tasks' inside a task");
		return false;
	}
	for (t = op->regions[0]->first; t && !fn->failed; t = t->next) {
		int64_t first, span, warps, n;
		LLVMBasicBlockRef in, next, body;
		LLVMValueRef ri = NULL, base, rel;

		if (t->kind != OP_TASK)
			continue;
		if (!attr_has(&t->attrs, "first_warp")) {
			cg_unsupported(cg, t, "a task without its warps "
				       "(allocate-warps places them)");
			return false;
		}
		first = attr_int(&t->attrs, "first_warp", 0);
		warps = attr_int(&t->attrs, "warps", 1);
		span = attr_int(&t->attrs, "span", warps);
		n = attr_int(&t->attrs, "replicas", 1);
		in = cg_new_block(fn, "task");
		next = cg_new_block(fn, "task.next");
		LLVMBuildCondBr(cg->B, warp_in(fn, first, span * n), in, next);
		LLVMPositionBuilderAtEnd(cg->B, in);
		setmaxnreg(fn, attr_int(&t->attrs, "regs", 0));
		/* the instance: which span of the task's warps this one is */
		base = cg_i32(cg, first);
		rel = LLVMBuildSub(cg->B, fn->warp, base, "");
		if (n > 1) {
			ri = LLVMBuildUDiv(cg->B, rel, cg_i32(cg, span), "task.ri");
			base = LLVMBuildAdd(cg->B, base, LLVMBuildMul(cg->B, ri,
					    cg_i32(cg, span), ""), "");
			rel = LLVMBuildSub(cg->B, fn->warp, base, "");
		}
		if (warps < span) {
			body = cg_new_block(fn, "task.warps");
			LLVMBuildCondBr(cg->B, LLVMBuildICmp(cg->B, LLVMIntULT, rel,
					cg_i32(cg, warps), ""), body, out);
			LLVMPositionBuilderAtEnd(cg->B, body);
		}
		task_body(fn, t, base, ri, warps);
		if (ret)
			LLVMBuildRetVoid(cg->B);
		else
			LLVMBuildBr(cg->B, join);
		LLVMPositionBuilderAtEnd(cg->B, next);
	}
	LLVMBuildBr(cg->B, join);
	if (ret) {
		LLVMPositionBuilderAtEnd(cg->B, out);
		LLVMBuildRetVoid(cg->B);
	}
	LLVMPositionBuilderAtEnd(cg->B, join);
	if (!ret)
		cg_barrier(fn);
	return !fn->failed;
}
