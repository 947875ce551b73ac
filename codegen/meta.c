/*
 * meta.c: what a compiled module says about itself, and debug info.
 *
 *   __tlx_ir    the module's tile IR text with locations, printed before
 *               code generation, NUL-terminated: the simulator runs it and
 *               the runtime reads the kernels' signatures from it;
 *   __tlx_meta  per-kernel facts only code generation knows: threads per
 *               block, the dynamic shared memory a launch must give, the
 *               static shared memory the kernel declares, and its fast
 *               entry with the assumptions a launch must check to use it
 *               (format in docs/internals.md, "Code generation").
 * Both are global arrays in addrspace(1), externally visible (__tlx_meta
 * `.align 1 .b8 NAME[N]`; __tlx_ir `.align 8 .b64 NAME[N]`, the bytes in
 * little-endian words, NUL-padded, printed as module-level PTX), so
 * cuModuleGetGlobal finds them in a cubin and a reader finds them in the
 * PTX text or the ELF symbol table.
 *
 * -g and -lineinfo emit a line-tables-only compile unit and one DILocation
 * per op (from the op's @line:col), which NVPTX prints as .loc directives.
 */
#include "config.h"

#include "codegen/cg.h"

static void
add_text_global(Cg *cg, const char *name, const char *text, size_t len)
{
	LLVMValueRef init, g;

	init = LLVMConstStringInContext2(cg->C, text, len, 0);  /* adds NUL */
	g = LLVMAddGlobalInAddressSpace(cg->M, LLVMTypeOf(init), name,
					AS_GLOBAL);
	LLVMSetInitializer(g, init);
	LLVMSetGlobalConstant(g, 1);
	LLVMSetLinkage(g, LLVMExternalLinkage);
	LLVMSetAlignment(g, 1);
}

/* The same for long texts: the text and its NUL, padded with NULs to
 * whole 64-bit words (little endian), as module-level PTX.  ptxas parses
 * an initializer number by number; the byte array NVPTX prints for any
 * LLVM array cost it 15 M instructions for the matmul's 5 KB of IR (2% of
 * its work), words 2 M. */
static void
add_text_words(Cg *cg, const char *name, const char *text, size_t len)
{
	size_t n = len / 8 + 1, i, k;
	Buf *b = &cg->text[1];

	b->n = 0;
	buf_printf(b, ".visible .global .align 8 .b64 %s[%zu] = {", name, n);
	for (i = 0; i < n; i++) {
		uint64_t v = 0;

		for (k = 0; k < 8; k++)
			if (i * 8 + k < len)
				v |= (uint64_t)(unsigned char)text[i * 8 + k] << (8 * k);
		buf_printf(b, i ? ", 0x%llx" : "0x%llx", (unsigned long long)v);
	}
	buf_printf(b, "};\n");
	LLVMAppendModuleInlineAsm(cg->M, b->s, b->n);
}

void
cg_meta_ir(Cg *cg)
{
	PrintOpts po = { .locs = true };
	Buf *b = &cg->text[0];

	b->n = 0;
	ir_print_module(b, cg->mod, &po);
	add_text_words(cg, "__tlx_ir", b->s ? b->s : "", b->n);
}

void
cg_meta_finish(Cg *cg)
{
	Buf *b = &cg->text[0];
	uint32_t i;

	b->n = 0;
	buf_printf(b, "tlx-meta 1 target=%s\n", cg->t->name);
	for (i = 0; i < cg->kinfo.n; i++) {
		CgKernelInfo *k = &cg->kinfo.v[i];

		buf_printf(b, "kernel %s threads=%d smem=%lld static=%lld",
			   k->name, k->threads, (long long)k->smem,
			   (long long)k->smem_static);
		if (k->fast)
			buf_printf(b, " fast=%s align=0x%llx div%d=0x%llx eq1=0x%llx",
				   k->fast, (unsigned long long)k->align,
				   k->divisor, (unsigned long long)k->div,
				   (unsigned long long)k->eq1);
		if (k->fast && k->tma_only)
			buf_printf(b, " tma_only=0x%llx",
				   (unsigned long long)k->tma_only);
		if (k->fast && cg->generic_ptx)
			buf_printf(b, " generic=ptx");
		buf_printf(b, "\n");
	}
	add_text_global(cg, "__tlx_meta", b->s, b->n);
}

void
cg_debug_init(Cg *cg)
{
	const char *src = cg->mod->source && *cg->mod->source
				  ? cg->mod->source : "<input>";
	const char *slash = strrchr(src, '/');
	const char *dir = ".", *file = src;
	size_t dirlen = 1;
	static const char producer[] = "tlxc";

	if (!cg->o->lineinfo && !cg->o->debug)
		return;
	if (slash) {
		dir = src;
		dirlen = (size_t)(slash - src);
		file = slash + 1;
	}
	cg->dib = LLVMCreateDIBuilder(cg->M);
	cg->di_file = LLVMDIBuilderCreateFile(cg->dib, file, strlen(file), dir,
					      dirlen);
	cg->di_cu = LLVMDIBuilderCreateCompileUnit(
		cg->dib, LLVMDWARFSourceLanguageC11, cg->di_file, producer,
		sizeof producer - 1, cg->o->olevel > 0, "", 0, 0, "", 0,
		/* DebugDirectivesOnly (3): .file/.loc without debug sections or
		 * the "debug" target flag, as nvcc -lineinfo does; the C API
		 * has no name for it, the C++ enum it casts to does */
		(LLVMDWARFEmissionKind)3, 0, 0, 0, "", 0, "", 0);
	LLVMAddModuleFlag(cg->M, LLVMModuleFlagBehaviorWarning,
			  "Debug Info Version", 18,
			  LLVMValueAsMetadata(cg_i32(cg, LLVMDebugMetadataVersion())));
	LLVMAddModuleFlag(cg->M, LLVMModuleFlagBehaviorWarning, "Dwarf Version",
			  13, LLVMValueAsMetadata(cg_i32(cg, 2)));
}

LLVMMetadataRef
cg_debug_func(Cg *cg, Func *f, LLVMValueRef fn)
{
	LLVMMetadataRef ty, sp;
	unsigned line = f->loc.line > 0 ? (unsigned)f->loc.line : 1;

	if (!cg->dib)
		return NULL;
	ty = LLVMDIBuilderCreateSubroutineType(cg->dib, cg->di_file, NULL, 0,
					       LLVMDIFlagZero);
	sp = LLVMDIBuilderCreateFunction(cg->dib, cg->di_file, f->name,
					 strlen(f->name), f->name,
					 strlen(f->name), cg->di_file, line, ty,
					 0, 1, line, LLVMDIFlagZero,
					 cg->o->olevel > 0);
	LLVMSetSubprogram(fn, sp);
	cg->di_scope = sp;
	return sp;
}

void
cg_debug_loc(CgFn *fn, SrcLoc loc)
{
	Cg *cg = fn->cg;
	LLVMMetadataRef l;

	if (!cg->dib || loc.line <= 0)
		return;
	l = LLVMDIBuilderCreateDebugLocation(cg->C, (unsigned)loc.line,
					     (unsigned)(loc.col > 0 ? loc.col : 0),
					     cg->di_scope, NULL);
	LLVMSetCurrentDebugLocation2(cg->B, l);
}

void
cg_debug_finish(Cg *cg)
{
	if (cg->dib)
		LLVMDIBuilderFinalize(cg->dib);
}
