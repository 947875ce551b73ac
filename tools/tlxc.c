/*
 * tlxc.c: the compiler driver.
 *
 *   tlxc [options] FILE|-
 *
 * reads one program (standard input for `-`), parses it, and then either
 * prints the syntax tree (--emit=ast) or checks and lowers it to tile IR,
 * runs the pass pipeline of the -O level (or --passes) and prints the IR
 * with locations (--emit=ir), or generates code (--emit=llvm, ptx, cubin;
 * codegen/codegen.h).  A FILE ending in .tir is IR text: it is read and
 * verified, then tile IR is compiled from the pass pipeline on and
 * laid-out IR (--emit=lir's output) from code generation on.  One arena holds
 * everything of a compilation
 * and is freed before exit.  `tlxc --help` lists the options and the
 * exit codes (the enum below).
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/codegen.h"
#include "jit/jit.h"
#include "tlx/tlx.h"

enum {
	EXIT_OK = 0,       /* success */
	EXIT_INPUT = 1,    /* the input has errors */
	EXIT_USAGE = 2,    /* bad option or argument */
	EXIT_IO = 3,       /* cannot read the input or write the output */
	EXIT_ENV = 4,      /* unsupported, or the environment failed */
	CONTINUE = -1,     /* options parsed: go on and compile */
};


typedef struct Options {
	const char *input;   /* a path, or "-" for standard input */
	const char *output;  /* NULL: standard output */
	Emit emit;
	int olevel;
	int sm;
	const char *passes;  /* NULL: the -O pipeline */
	PipelineOpts popts;
	bool verify_diags;
	bool werror;
	bool debug_info;     /* -g (recorded for code generation) */
	bool lineinfo;       /* -lineinfo (likewise) */
	bool fast_math;      /* --fast-math (code generation) */
	bool debug_barriers; /* --debug-barriers */
	int specialize;      /* --specialize=WHEN: PASS_SPEC_* */
	const char *ptxas;   /* --ptxas=PATH: assemble with it, not nvJitLink */
	int assembler;       /* --assembler: ASM_* */
	int fast_compile;    /* --fast-compile=LEVEL: CG_FC_* */
	bool generic_cubin;  /* --generic=cubin */
	const char *table;   /* --table=FILE */
	const char *shape;   /* --shape=KERNEL:NAME=INT,... */
	Vec(Define) defs;
} Options;

static const char usage_text[] =
"usage: tlxc [options] FILE\n"
"       tlxc [options] -        read the program from standard input\n"
"\n"
"Compiles a tlx tile-kernel program.\n"
"\n"
"Output:\n"
"  -o FILE               write the output to FILE (default: standard output\n"
"                        for text; INPUT.cubin for --emit=cubin)\n"
"  --emit=KIND           what to produce (default: cubin):\n"
"                          ast    the syntax tree, as S-expressions\n"
"                          ir     the tile IR after the passes, with locations\n"
"                          lir    the laid-out IR after target lowering (what\n"
"                                 code generation translates), with locations\n"
"                          llvm   LLVM IR for NVPTX, optimized\n"
"                          ptx    PTX assembly\n"
"                          cubin  a loadable CUDA binary (see --assembler)\n"
"\n"
"Compilation:\n"
"  -D NAME=VALUE, -DNAME=VALUE\n"
"                        set the const parameter NAME to VALUE, an integer,\n"
"                        float or boolean literal (repeatable)\n"
"  --table=FILE --shape=KERNEL:NAME=INT,...\n"
"                        the const parameters tlx-tune --table stored for\n"
"                        KERNEL at that shape (exact, else the nearest;\n"
"                        -D flags win over them)\n"
"  -O0, -O1, -O2, -O3    optimization level (default: -O2)\n"
"  --target=SM           sm_80, sm_90a or sm_100a (default: sm_90a)\n"
"  -g, -lineinfo         keep source line information in the output\n"
"  --fast-math           approximate exp, log, sin, cos, tanh, sqrt, division\n"
"  --debug-barriers      a wait on an mbarrier that lasts 2 s prints the\n"
"                        barrier, its phase, the task, the program and the\n"
"                        source line, then fails a device assertion,\n"
"                        instead of hanging\n"
"  --specialize=WHEN     which kernels get a second entry, NAME$fast, that\n"
"                        assumes what their fast paths need (16-byte\n"
"                        aligned pointers, unit inner strides, and strides\n"
"                        and vectorized bounds that are multiples of 16\n"
"                        bytes' elements) for launches whose arguments\n"
"                        satisfy it (libtlxrt picks; __tlx_meta says how):\n"
"                        auto (the default: kernels with dots, and kernels\n"
"                        whose vectors assume bounds that are multiples of\n"
"                        a vector), all, none.\n"
"                        Dot loops on sm_90a read with TMA in the fast\n"
"                        entry, and with none where the arguments allow\n"
"  --generic=HOW         how a cubin holds the generic entries of kernels\n"
"                        with a fast one: ptx (the default: as PTX, which\n"
"                        the driver assembles at the first launch that\n"
"                        needs one and caches; tlxc's time is the fast\n"
"                        entries') or cubin (assembled now, as the rest)\n"
"  --assembler=WHICH     what makes cubins: ptxas (a process), nvjitlink (in\n"
"                        this process), or auto (the default: ptxas when one\n"
"                        is found, else nvJitLink)\n"
"  --ptxas=PATH          assemble cubins with this ptxas\n"
"  --fast-compile=LEVEL  how much of ptxas's optimization to trade for\n"
"                        compile time: 0 (none, the default), min, mid, max\n"
"  FILE.tir              IR text instead of a program: tile IR goes\n"
"                        through the passes, laid-out IR (--emit=lir)\n"
"                        straight to code generation\n"
"  --werror              treat warnings as errors\n"
"\n";

/* (two strings: C99 promises only 4095 characters of one) */
static const char usage_text2[] =
"Pass manager:\n"
"  --passes=LIST         run these comma-separated passes instead of the\n"
"                        pipeline of the -O level\n"
"  --print-before=PASSES print the IR before each named pass\n"
"  --print-after=PASSES  print the IR after each named pass\n"
"  --print-after-all     print the IR after every pass\n"
"  --print-after-change  print the IR after every pass that changed it\n"
"  --verify-each         verify the IR after every pass\n"
"  --stats               print the passes' statistics\n"
"  --time-passes         print the time each pass took\n"
"  --reproducer=FILE     when a pass fails, write its input and the pipeline\n"
"                        to FILE\n"
"\n"
"Diagnostics:\n"
"  --verify-diagnostics  check the diagnostics against the input's\n"
"                        '// expected-error@+N {{text}}' comments instead of\n"
"                        printing them; succeed only if they match exactly\n"
"\n"
"  --help                print this help and exit\n"
"  --version             print the version and exit\n"
"\n"
"Exit status:\n"
"  0  success\n"
"  1  the input has errors (they were reported)\n"
"  2  usage error: a bad option or argument\n"
"  3  I/O error: the input cannot be read or the output cannot be written\n"
"  4  unsupported or environment failure (e.g. code generation not built)\n";

/* ---- options ------------------------------------------------------------ */

static int
usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("tlxc: error: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\ntry 'tlxc --help' for more information\n", stderr);
	return EXIT_USAGE;
}

/* The text after "NAME=" when arg is "NAME=text", else NULL. */
static const char *
value_of(const char *arg, const char *name)
{
	size_t n = strlen(name);

	return strncmp(arg, name, n) == 0 && arg[n] == '=' ? arg + n + 1 : NULL;
}

static bool
is_identifier(const char *s, size_t n)
{
	size_t i;

	if (n == 0 || !(isalpha((unsigned char)s[0]) || s[0] == '_'))
		return false;
	for (i = 1; i < n; i++)
		if (!(isalnum((unsigned char)s[i]) || s[i] == '_'))
			return false;
	return true;
}

/* true, false, or a number: a digit, then digits, letters, '_' and '.',
 * with a sign only after an exponent's e; a '-' may come first. */
static bool
is_literal(const char *s)
{
	const char *p;

	if (strcmp(s, "true") == 0 || strcmp(s, "false") == 0)
		return true;
	if (*s == '-')
		s++;
	if (!isdigit((unsigned char)*s))
		return false;
	for (p = s; *p; p++) {
		if (isalnum((unsigned char)*p) || *p == '_' || *p == '.')
			continue;
		if ((*p == '+' || *p == '-') && (p[-1] == 'e' || p[-1] == 'E'))
			continue;
		return false;
	}
	return true;
}

static int
add_define(Options *o, Arena *a, const char *text)
{
	const char *eq = strchr(text, '=');
	Define d;

	if (!eq)
		return usage_error("-D '%s' has no value (expected -D NAME=VALUE)",
				   text);
	if (!is_identifier(text, (size_t)(eq - text)))
		return usage_error("-D name '%.*s' is not an identifier",
				   (int)(eq - text), text);
	if (!is_literal(eq + 1))
		return usage_error("-D value '%s' is not an integer, float or "
				   "boolean literal", eq + 1);
	d.name = arena_strndup(a, text, (size_t)(eq - text));
	d.value = eq + 1;
	vec_push(a, &o->defs, d);
	return CONTINUE;
}

/* The index of v among names[first .. n), or -1. */
static int
name_index(const char *v, const char *const *names, int first, int n)
{
	int i;

	for (i = first; i < n; i++)
		if (strcmp(v, names[i]) == 0)
			return i;
	return -1;
}

static int
set_emit(Options *o, const char *v)
{
	int i = name_index(v, emit_names, 0, (int)countof(emit_names));

	if (i >= 0) {
		o->emit = (Emit)i;
		return CONTINUE;
	}
	return usage_error("invalid --emit value '%s' (expected ast, ir, lir, "
			   "llvm, ptx or cubin)", v);
}

static int
set_target(Options *o, const char *v)
{
	const Target *t = target_lookup(v);

	if (t) {
		o->sm = t->sm;
		return CONTINUE;
	}
	return usage_error("unknown target '%s' (expected sm_80, sm_90a or "
			   "sm_100a)", v);
}

enum { ASM_AUTO, ASM_PTXAS, ASM_NVJITLINK };

static int
set_assembler(Options *o, const char *v)
{
	static const char *const names[] = { "auto", "ptxas", "nvjitlink" };
	int i = name_index(v, names, 0, (int)countof(names));

	if (i >= 0) {
		o->assembler = i;
		return CONTINUE;
	}
	return usage_error("unknown --assembler '%s' (expected auto, ptxas "
			   "or nvjitlink)", v);
}

static int
set_fast_compile(Options *o, const char *v)
{
	int i = name_index(v, cg_fc_names, CG_FC_OFF, CG_FC_MAX + 1);

	if (i >= 0) {
		o->fast_compile = i;
		return CONTINUE;
	}
	return usage_error("unknown --fast-compile level '%s' (expected 0, "
			   "min, mid or max)", v);
}

static int
set_specialize(Options *o, const char *v)
{
	int i = name_index(v, pass_spec_names, PASS_SPEC_AUTO, PASS_SPEC_NONE + 1);

	if (i >= 0) {
		o->specialize = i;
		return CONTINUE;
	}
	return usage_error("unknown --specialize '%s' (expected auto, all or "
			   "none)", v);
}

/* Options that are a bare flag. */
static bool
set_flag(Options *o, const char *arg)
{
	struct {
		const char *name;
		bool *flag;
	} flags[] = {
		{ "--print-after-all", &o->popts.print_after_all },
		{ "--print-after-change", &o->popts.print_after_change },
		{ "--verify-each", &o->popts.verify_each },
		{ "--stats", &o->popts.stats },
		{ "--time-passes", &o->popts.time_passes },
		{ "--verify-diagnostics", &o->verify_diags },
		{ "--werror", &o->werror },
		{ "-g", &o->debug_info },
		{ "-lineinfo", &o->lineinfo },
		{ "--fast-math", &o->fast_math },
		{ "--debug-barriers", &o->debug_barriers },
	};
	size_t i;

	for (i = 0; i < countof(flags); i++) {
		if (strcmp(arg, flags[i].name) == 0) {
			*flags[i].flag = true;
			return true;
		}
	}
	return false;
}

/* Options of the form --name=VALUE. */
static int
set_valued(Options *o, const char *arg)
{
	const char *v;

	if ((v = value_of(arg, "--emit")))
		return set_emit(o, v);
	if ((v = value_of(arg, "--target")))
		return set_target(o, v);
	if ((v = value_of(arg, "--passes")))
		o->passes = v;
	else if ((v = value_of(arg, "--print-after")))
		o->popts.print_after = v;
	else if ((v = value_of(arg, "--print-before")))
		o->popts.print_before = v;
	else if ((v = value_of(arg, "--reproducer")))
		o->popts.reproducer = v;
	else if ((v = value_of(arg, "--ptxas")))
		o->ptxas = v;
	else if ((v = value_of(arg, "--fast-compile")))
		return set_fast_compile(o, v);
	else if ((v = value_of(arg, "--specialize")))
		return set_specialize(o, v);
	else if ((v = value_of(arg, "--generic"))) {
		if (strcmp(v, "ptx") && strcmp(v, "cubin"))
			return usage_error("unknown --generic '%s' (expected "
					   "ptx or cubin)", v);
		o->generic_cubin = strcmp(v, "cubin") == 0;
	}
	else if ((v = value_of(arg, "--assembler")))
		return set_assembler(o, v);
	else if ((v = value_of(arg, "--table")))
		o->table = v;
	else if ((v = value_of(arg, "--shape")))
		o->shape = v;
	else
		return usage_error("unknown option '%s'", arg);
	return CONTINUE;
}

static int
set_input(Options *o, const char *path)
{
	if (o->input)
		return usage_error("more than one input file ('%s' and '%s')",
				   o->input, path);
	o->input = path;
	return CONTINUE;
}

/* One argument (and, for -o FILE and -D X, the next one: *i moves). */
static int
parse_arg(Options *o, Arena *a, int argc, char **argv, int *i)
{
	const char *arg = argv[*i];

	if (strcmp(arg, "-o") == 0 || strcmp(arg, "-D") == 0) {
		if (*i + 1 >= argc)
			return usage_error("option '%s' needs an argument", arg);
		++*i;
		if (arg[1] == 'D')
			return add_define(o, a, argv[*i]);
		o->output = argv[*i];
		return CONTINUE;
	}
	if (strncmp(arg, "-o", 2) == 0) {
		o->output = arg + 2;
		return CONTINUE;
	}
	if (strncmp(arg, "-D", 2) == 0)
		return add_define(o, a, arg + 2);
	if (strlen(arg) == 3 && arg[0] == '-' && arg[1] == 'O' &&
	    arg[2] >= '0' && arg[2] <= '3') {
		o->olevel = arg[2] - '0';
		return CONTINUE;
	}
	if (strcmp(arg, "-") == 0 || arg[0] != '-')
		return set_input(o, arg);
	if (set_flag(o, arg))
		return CONTINUE;
	if (strncmp(arg, "--", 2) == 0 && strchr(arg, '='))
		return set_valued(o, arg);
	return usage_error("unknown option '%s'", arg);
}

/* --table and --shape: the table's defines for the kernel at the shape,
 * after the -D flags, which win. */
static int
table_defines(Options *o, Arena *a)
{
	const char *shape[256], *const *defs, *colon;
	char err[512], *list;
	tlx_table *t;
	int n = 0, ndefs, exact, rc;

	if (!o->table || !o->shape)
		return usage_error("--table and --shape go together");
	if (!(colon = strchr(o->shape, ':')) || colon == o->shape)
		return usage_error("--shape '%s': expected KERNEL:NAME=INT,...",
				   o->shape);
	list = arena_strdup(a, colon + 1);
	for (char *s = strtok(list, ","); s && n < 256; s = strtok(NULL, ","))
		shape[n++] = s;
	if ((rc = table_load(o->table, &t, err, sizeof err))) {
		fprintf(stderr, "tlxc: error: %s\n",
			rc == TLX_NOMEM ? "out of memory" : err);
		return rc == TLX_IO ? EXIT_IO : EXIT_INPUT;
	}
	rc = tlx_table_pick(t, arena_strndup(a, o->shape,
					     (size_t)(colon - o->shape)),
			    shape, n, 0, &defs, &ndefs, &exact);
	if (rc == TLX_MISUSE) {
		tlx_table_destroy(t);
		return usage_error("--shape '%s': expected KERNEL:NAME=INT,...",
				   o->shape);
	}
	if (rc) {
		tlx_table_destroy(t);
		fprintf(stderr, "tlxc: error: %s has no entry of kernel '%.*s' "
			"with the scalars of --shape\n", o->table,
			(int)(colon - o->shape), o->shape);
		return EXIT_INPUT;
	}
	if (!exact)
		fprintf(stderr, "tlxc: note: %s has no entry for %s; the "
			"nearest one is used\n", o->table, o->shape);
	for (int i = 0; i < ndefs; i++) {
		size_t len = strcspn(defs[i], "=");
		bool given = false;

		for (size_t j = 0; j < o->defs.n && !given; j++)
			given = strlen(o->defs.v[j].name) == len &&
				!strncmp(o->defs.v[j].name, defs[i], len);
		if (!given &&
		    (rc = add_define(o, a, arena_strdup(a, defs[i]))) != CONTINUE)
			break;
	}
	tlx_table_destroy(t);
	return rc == CONTINUE || rc == TLX_OK ? CONTINUE : rc;
}

static int
parse_options(Options *o, Arena *a, int argc, char **argv)
{
	int i, rc;
	bool only_files = false;

	memset(o, 0, sizeof *o);
	o->emit = EMIT_CUBIN;
	o->olevel = 2;
	o->sm = 90;
	for (i = 1; i < argc; i++) {
		if (only_files) {
			rc = set_input(o, argv[i]);
		} else if (strcmp(argv[i], "--") == 0) {
			only_files = true;
			continue;
		} else if (strcmp(argv[i], "--help") == 0) {
			fputs(usage_text, stdout);
			fputs(usage_text2, stdout);
			return EXIT_OK;
		} else if (strcmp(argv[i], "--version") == 0) {
			printf("tlxc %s (LLVM 22)\n", PACKAGE_VERSION);
			return EXIT_OK;
		} else {
			rc = parse_arg(o, a, argc, argv, &i);
		}
		if (rc != CONTINUE)
			return rc;
	}
	if (!o->input)
		return usage_error("no input file");
	if (o->ptxas && o->assembler == ASM_NVJITLINK)
		return usage_error("--ptxas and --assembler=nvjitlink contradict "
				   "each other; give one");
	if (o->table || o->shape)
		return table_defines(o, a);
	return CONTINUE;
}

/* ---- input and output ------------------------------------------------- */

/* A program's size limit: far past any kernel, and a bound on what
 * `tlxc /dev/zero` reads. */
enum { MAX_INPUT = 64 << 20 };

static int
read_input(const char *path, Buf *out)
{
	bool is_stdin = strcmp(path, "-") == 0;
	FILE *f = is_stdin ? stdin : fopen(path, "rb");
	char chunk[1 << 16];
	size_t n;
	int err;

	if (!f) {
		fprintf(stderr, "tlxc: error: cannot open '%s': %s\n", path,
			strerror(errno));
		return EXIT_IO;
	}
	buf_put(out, "", 0);
	while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
		if (out->n + n > MAX_INPUT) {
			fprintf(stderr, "tlxc: error: '%s' is larger than %d MiB, "
				"the most a program may be\n",
				is_stdin ? "<stdin>" : path, MAX_INPUT >> 20);
			if (!is_stdin)
				fclose(f);
			return EXIT_INPUT;
		}
		buf_put(out, chunk, n);
	}
	err = ferror(f) ? errno : 0;
	if (!is_stdin)
		fclose(f);
	if (err) {
		fprintf(stderr, "tlxc: error: cannot read '%s': %s\n",
			is_stdin ? "<stdin>" : path, strerror(err));
		return EXIT_IO;
	}
	return EXIT_OK;
}

static int
write_output(const char *path, const Buf *b)
{
	bool is_stdout = !path || strcmp(path, "-") == 0;
	FILE *f = is_stdout ? stdout : fopen(path, "wb");
	bool ok;

	if (!f) {
		fprintf(stderr, "tlxc: error: cannot write '%s': %s\n", path,
			strerror(errno));
		return EXIT_IO;
	}
	ok = fwrite(b->s, 1, b->n, f) == b->n;
	ok = (is_stdout ? fflush(f) == 0 : fclose(f) == 0) && ok;
	if (!ok) {
		fprintf(stderr, "tlxc: error: cannot write '%s': %s\n",
			is_stdout ? "<stdout>" : path, strerror(errno));
		return EXIT_IO;
	}
	return EXIT_OK;
}

/* ---- the compilation -------------------------------------------------- */

static bool
is_tir(const char *path)
{
	size_t n = strlen(path);

	return n > 4 && strcmp(path + n - 4, ".tir") == 0;
}

/* -o, else INPUT.cubin for a cubin of a named input, else stdout. */
static const char *
output_path(const Options *o, Arena *a)
{
	const char *in = o->input, *dot = strrchr(in, '.');
	size_t n = dot && !strchr(dot, '/') ? (size_t)(dot - in) : strlen(in);

	if (o->output || o->emit != EMIT_CUBIN || strcmp(in, "-") == 0)
		return o->output;
	return arena_printf(a, "%.*s.cubin", (int)n, in);
}

/* Reads the input, runs the shared pipeline (jit/compile.c) and writes
 * the output; returns the exit code. */
static int
run(const Options *o, Job *j, Buf *text)
{
	int rc;

	if ((rc = read_input(o->input, text)) != EXIT_OK)
		return rc;
	j->name = strcmp(o->input, "-") == 0 ? "<stdin>" : o->input;
	j->text = text->s ? text->s : "";
	j->len = text->n;
	j->defs = o->defs.v;
	j->ndefs = o->defs.n;
	j->sm = o->sm;
	j->olevel = o->olevel;
	j->emit = o->emit;
	j->passes = o->passes;
	j->popts = o->popts;
	j->lineinfo = o->lineinfo;
	j->debug = o->debug_info;
	j->fast_math = o->fast_math;
	j->debug_barriers = o->debug_barriers;
	j->specialize = o->specialize;
	/* ptxas by default: in a process of its own it costs its start-up,
	 * 10 ms, while nvJitLink initializes the CUDA driver where one is
	 * installed (about 180 ms on the H200 machine when no process holds
	 * a context), every run of tlxc again; libtlx, whose process keeps
	 * the driver, links in-process */
	j->ptxas = o->ptxas;
	j->use_ptxas = o->assembler == ASM_PTXAS ||
		       (o->assembler == ASM_AUTO && cg_find_ptxas());
	j->fast_compile = o->fast_compile;
	j->generic_cubin = o->generic_cubin;
	j->tir = is_tir(o->input);
	j->werror = o->werror;
	j->diag_out = o->verify_diags ? NULL : stderr;
	compile_run(j);
	if (o->verify_diags)
		rc = diag_verify(&j->diag, stderr) ? EXIT_OK : EXIT_INPUT;
	else
		rc = j->diag.nerrors || !j->parsed ? EXIT_INPUT : EXIT_OK;
	if (rc == EXIT_OK && j->diag.nerrors == 0)
		rc = write_output(output_path(o, j->arena), &j->out);
	return rc;
}

/* The protected boundary: running out of memory lands here. */
static int
compile(const Options *o, Arena *arena)
{
	jmp_buf oom;
	Job *j = arena_alloc(arena, sizeof *j);
	Buf text = { 0 };
	int rc;

	j->arena = arena;
	if (setjmp(oom)) {
		arena->oom = NULL;
		buf_free(&j->out);
		buf_free(&text);
		fputs("tlxc: error: out of memory\n", stderr);
		return EXIT_ENV;
	}
	arena->oom = &oom;
	rc = run(o, j, &text);
	arena->oom = NULL;
	buf_free(&j->out);
	buf_free(&text);
	return rc;
}

int
main(int argc, char **argv)
{
	Arena arena;
	Options o;
	int rc;

	arena_init(&arena, NULL, NULL, NULL);
	rc = parse_options(&o, &arena, argc, argv);
	if (rc == CONTINUE)
		rc = compile(&o, &arena);
	arena_reset(&arena);
	return rc;
}
