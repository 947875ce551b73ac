/*
 * compile.c: one compilation, from source text to the emitted form --
 * the pipeline that tlxc and libtlx share:
 *
 *   parse -> front_lower (sema + IR) -> verify -> passes -> codegen
 *
 * or, checking only (tlx_check), everything before LLVM: the passes and
 * codegen's own checks of each kernel, without generating code.
 *
 * Diagnostics go to j->diag; nothing here aborts on bad input.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "codegen/codegen.h"
#include "jit/jit.h"

const char *const emit_names[6] = { "ast", "ir", "lir", "llvm", "ptx",
				     "cubin" };

static bool
codegen(Job *j, Module *m)
{
	CgOpts o = { .sm = j->sm, .olevel = j->olevel, .lineinfo = j->lineinfo,
		     .debug = j->debug, .fast_math = j->fast_math,
		     .debug_barriers = j->debug_barriers,
		     .use_ptxas = j->use_ptxas || j->ptxas, .ptxas = j->ptxas,
		     .ptx_ok = j->ptx_ok, .fast_compile = j->fast_compile,
		     .generic_cubin = j->generic_cubin };
	CgResult r;

	o.emit = j->emit == EMIT_LLVM ? CG_EMIT_LLVM
		 : j->emit == EMIT_PTX ? CG_EMIT_PTX : CG_EMIT_CUBIN;
	if (!cg_compile(m, &o, &j->diag, &r))
		return false;
	buf_put(&j->out, r.data, r.size);
	j->ptx_fallback = r.ptx_fallback;
	j->binary = o.emit == CG_EMIT_CUBIN && !r.ptx_fallback;
	return true;
}

static bool
codegen_check(Job *j, Module *m)
{
	CgOpts o = { .sm = j->sm, .olevel = j->olevel, .lineinfo = j->lineinfo,
		     .debug = j->debug, .fast_math = j->fast_math,
		     .debug_barriers = j->debug_barriers };

	return cg_check(m, &o, &j->diag);
}

/* The IR of a program: sema and IR generation, then (checking builds)
 * the verifier, whose complaints are our bugs. */
static Module *
front(Job *j, Ast *file)
{
	FrontOpts fo = { j->defs, j->ndefs, j->sm };
	Module *m = front_lower(&j->ir, &j->diag, file, &fo);

#ifdef TLX_CHECKING
	if (m && !ir_verify_module(m, &j->diag)) {
		PrintOpts pr = { .locs = true };
		Buf b = { 0 };

		ir_print_module(&b, m, &pr);
		fputs(b.s, stderr);
		tlx_bug("the front end produced IR that does not verify");
	}
#endif
	return m;
}

/* Is m laid-out IR (tlxc --emit=lir), code generation's input, which
 * the pass pipelines do not take?  A module that mixes laid-out kernels
 * with tile IR ones is an error. */
static bool
laid_out(Job *j, Module *m)
{
	Func *tile = NULL, *laid = NULL;
	uint32_t i;

	for (i = 0; i < m->funcs.n; i++) {
		Func *f = m->funcs.v[i];

		if (f->kind != FN_KERNEL)
			continue;
		if (!ir_func_laid_out(f)) {
			tile = tile ? tile : f;
			continue;
		}
		laid = laid ? laid : f;
		if (!attr_has(&f->attrs, "smem"))
			ir_error(&j->diag, f, NULL, "kernel '%s' is laid-out IR "
				 "without a shared-memory plan ('smem'): give "
				 "tlxc --emit=lir's output, which has one", f->name);
	}
	if (laid && tile)
		ir_error(&j->diag, tile, NULL, "kernel '%s' is tile IR and kernel "
			 "'%s' laid-out IR: give every kernel of the module at the "
			 "same stage (tlxc --emit=ir or --emit=lir)", tile->name,
			 laid->name);
	return laid != NULL;
}

static bool laid_run(Job *j, Module *m);

/* What decides whether a kernel gets a copy for its generic entry. */
typedef struct CopyWalk {
	bool dot, reduce;
	int64_t per_thread;  /* the most elements of a tile a thread holds */
	int64_t threads;
} CopyWalk;

static void
copy_walk(Op *op, void *ud)
{
	CopyWalk *w = ud;
	uint32_t i;

	w->dot |= op->kind == OP_DOT || op->kind == OP_DOT_ASYNC;
	w->reduce |= op->kind == OP_REDUCE;
	for (i = 0; i < op->nres; i++) {
		Type *t = ir_type(op->parent->fn, op->res[i]);

		if (t->kind == TY_TILE)
			w->per_thread = MAX(w->per_thread,
					    ty_numel(t) / w->threads);
	}
}

/* The generic entry of a row kernel (reductions, no dots) takes layouts
 * of its own: each kernel of that kind gets a copy, NAME.generic
 * (attribute generic_of), which assign-layouts lays out under the facts
 * proven without assumptions (a row of unknown alignment: a lane a
 * column, warps along rows); code generation lowers NAME's generic entry
 * from it, and the simulator runs it where the launch takes that entry.
 * Not where a tile holds more than 32 elements a thread: a column a lane
 * gives each bf16 element a register of its own, and softmax's rows of
 * 32768 (64 a thread, two rows live) ran at 0.79x their realigned
 * vectors (bench/RESULTS.md).  TLX_GENERIC_LAYOUTS=0 makes no copies, =1
 * one for every kernel without dots. */
static void
add_generic_copies(Job *j, Module *m)
{
	const char *e = getenv("TLX_GENERIC_LAYOUTS");
	bool all = e && !strcmp(e, "1");
	uint32_t i, n = m->funcs.n;
	Buf b = { 0 };

	if (e && !strcmp(e, "0"))
		return;
	for (i = 0; i < n; i++) {
		Func *f = m->funcs.v[i], *g;
		CopyWalk w = { .threads = 32 * MAX(1, attr_int(&f->attrs,
							       "warps", 4)) };

		if (f->kind != FN_KERNEL || attr_str(&f->attrs, "generic_of"))
			continue;
		ir_walk(f, copy_walk, &w);
		if (w.dot || (!all && (!w.reduce || w.per_thread > 32)))
			continue;
		b.n = 0;
		buf_printf(&b, "%s.generic", f->name);
		if (ir_func_find(m, b.s))
			continue;
		g = ir_func_clone(m, f, b.s);
		attr_set_str(&j->ir, &g->attrs, "generic_of", f->name);
	}
	buf_free(&b);
}

/* The copies whose kernel got no fast entry (its one entry is generic)
 * go: the kernel's own layouts serve it. */
static void
drop_generic_copies(Module *m)
{
	uint32_t i = m->funcs.n;

	while (i-- > 0) {
		Func *g = m->funcs.v[i], *f;
		const char *of = attr_str(&g->attrs, "generic_of");

		if (!of)
			continue;
		f = ir_func_find(m, of);
		if (!f || !(attr_int(&f->attrs, "fast.align", 0) |
			    attr_int(&f->attrs, "fast.div", 0) |
			    attr_int(&f->attrs, "fast.eq1", 0)))
			ir_func_remove(m, g);
	}
}

static bool
run(Job *j)
{
	PrintOpts pr = { .locs = true };
	PipelineOpts po = j->popts;
	Module *m = NULL;
	Ast *file = NULL;

	src_init(&j->src, j->arena, j->name, j->text, j->len);
	diag_init(&j->diag, j->arena, &j->src, j->diag_out);
	j->diag.werror = j->werror;
	ir_ctx_init(&j->ir, j->arena);
	if (j->tir) {  /* IR text: read and verify it (user errors) */
		m = ir_read(&j->ir, &j->diag, &j->src);
		if (!m || j->diag.nerrors || !ir_verify_module(m, &j->diag))
			return false;
		j->parsed = true;
		if (laid_out(j, m))
			return j->diag.nerrors ? false : laid_run(j, m);
	} else {
		file = parse_file(j->arena, &j->ir.strs, &j->diag, &j->src);
		if (!file || j->diag.nerrors)
			return false;
		j->parsed = true;
		if (j->emit == EMIT_AST) {
			ast_print(&j->out, file);
			return true;
		}
		if (!(m = front(j, file)))
			return false;
	}
#ifdef TLX_CHECKING
	po.verify_each = true;
#endif
	po.sm = j->sm;
	po.specialize = j->specialize;
	if (!po.out)
		po.out = stderr;
	if (!pass_run_pipeline(m, j->passes ? j->passes
					    : pass_default_pipeline(j->olevel),
			       &po, &j->diag))
		return false;
	if (j->emit == EMIT_IR) {
		ir_print_module(&j->out, m, &pr);
		return true;
	}
	add_generic_copies(j, m);
	/* target lowering: the laid-out IR, what the GPU will run (and what
	 * the simulator runs of a compiled module) */
	if (!pass_run_pipeline(m, pass_lower_pipeline(j->olevel), &po, &j->diag))
		return false;
	drop_generic_copies(m);
	return laid_run(j, m);
}

/* From laid-out IR on: print it, or generate code. */
static bool
laid_run(Job *j, Module *m)
{
	PrintOpts pr = { .locs = true };

	if (j->check_only)
		return codegen_check(j, m);
	ir_print_module(&j->ir_buf, m, &pr);
	j->ir_text = arena_strdup(j->arena, j->ir_buf.s ? j->ir_buf.s : "");
	buf_free(&j->ir_buf);
	if (j->emit == EMIT_LIR || j->emit == EMIT_IR) {
		buf_puts(&j->out, j->ir_text);
		return true;
	}
	return codegen(j, m);
}

/* The assembler's worker starts first, to overlap its start-up with the
 * front end and LLVM; a compilation that fails before assembling waits
 * for that start-up to end before it returns. */
bool
compile_run(Job *j)
{
	volatile bool preload = j->emit == EMIT_CUBIN && !j->ptxas &&
				!j->use_ptxas && !j->check_only;
	bool ok;
	OomScope os;

	if (preload)
		cg_preload_assembler(j->sm);
	oom_scope_enter(&os, NULL, NULL);
	if (setjmp(os.jb)) {
		if (preload)
			cg_settle_assembler();
		oom_scope_unwind(&os);
		oom_scope_leave(&os);
		oom_raise();
	}
	ok = run(j);
	oom_scope_leave(&os);
	if (preload)
		cg_settle_assembler();
	return ok;
}
