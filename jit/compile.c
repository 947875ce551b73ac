/*
 * compile.c: one compilation, from source text to the emitted form --
 * the pipeline that tlxc and libtlx share:
 *
 *   parse -> front_lower (sema + IR) -> verify -> passes -> codegen
 *
 * Diagnostics go to j->diag; nothing here aborts on bad input.
 */
#include "config.h"
#include "codegen/codegen.h"
#include "jit/jit.h"

/* Without an assembler a cubin cannot be made: fall back to PTX, which
 * the driver assembles itself at load time. */
static bool
can_assemble(void)
{
	return cg_can_assemble();
}

static bool
codegen(Job *j, Module *m)
{
	CgOpts o = { .sm = j->sm, .olevel = j->olevel, .lineinfo = j->lineinfo,
		     .debug = j->debug };
	CgResult r;

	o.emit = j->emit == EMIT_LLVM ? CG_EMIT_LLVM
		 : j->emit == EMIT_PTX ? CG_EMIT_PTX : CG_EMIT_CUBIN;
	if (o.emit == CG_EMIT_CUBIN && !can_assemble()) {
		o.emit = CG_EMIT_PTX;
		j->ptx_fallback = true;
	}
	if (!cg_compile(m, &o, &j->diag, &r))
		return false;
	buf_put(&j->out, r.data, r.size);
	j->binary = o.emit == CG_EMIT_CUBIN;
	return true;
}

bool
compile_run(Job *j)
{
	FrontOpts fo = { j->defs, j->ndefs, j->sm };
	PrintOpts pr = { .locs = true };
	PipelineOpts po = j->popts;
	Module *m;
	Ast *file;
	Buf ir = { 0 };

	src_init(&j->src, j->arena, j->name, j->text, j->len);
	diag_init(&j->diag, j->arena, &j->src, j->diag_out);
	j->diag.werror = j->werror;
	ir_ctx_init(&j->ir, j->arena);
	file = parse_file(j->arena, &j->ir.strs, &j->diag, &j->src);
	if (!file || j->diag.nerrors)
		return false;
	if (j->emit == EMIT_AST) {
		ast_print(&j->out, file);
		return true;
	}
	if (!(m = front_lower(&j->ir, &j->diag, file, &fo)))
		return false;
#ifdef TLX_CHECKING
	/* the front end's output must verify: anything else is our bug */
	po.verify_each = true;
	if (!ir_verify_module(m, &j->diag)) {
		ir_print_module(&ir, m, &pr);
		fputs(ir.s, stderr);
		tlx_bug("the front end produced IR that does not verify");
	}
#endif
	po.sm = j->sm;
	if (!po.out)
		po.out = stderr;
	if (!pass_run_pipeline(m, j->passes ? j->passes
					    : pass_default_pipeline(j->olevel),
			       &po, &j->diag))
		return false;
	ir_print_module(&ir, m, &pr);
	j->ir_text = arena_strdup(j->arena, ir.s ? ir.s : "");
	buf_free(&ir);
	if (j->emit == EMIT_IR) {
		buf_puts(&j->out, j->ir_text);
		return true;
	}
	return codegen(j, m);
}
