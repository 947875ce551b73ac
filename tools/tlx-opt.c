/*
 * tlx-opt: textual tile IR in, passes, textual IR out -- the tool every
 * IR and pass test runs.
 *
 *   tlx-opt [options] [FILE | -]
 *
 * It reads the IR (docs/il.md), verifies it, runs the pipeline given by
 * --passes= or -O0..3, and prints the result.  Exit status: 0 success,
 * 1 errors in the input (reported as file:line:col), 2 bad usage, 3 a
 * file could not be read or written.
 */
#include <errno.h>
#include <stdlib.h>

#include "config.h"
#include "passes/passes.h"

enum { EXIT_INPUT = 1, EXIT_USAGE = 2, EXIT_IO = 3 };

typedef struct Opts {
	const char *input;
	const char *output;
	const char *pipeline;
	int olevel;  /* -1: none */
	bool verify_diags;
	bool round_trip;
	bool split;
	bool verify;
	PipelineOpts po;
} Opts;

static void
usage(FILE *out)
{
	fprintf(out,
		"usage: tlx-opt [options] [FILE | -]\n"
		"Reads textual tile IR, verifies it, runs passes, prints the result.\n"
		"\n"
		"  --passes=LIST          run these passes, comma-separated\n"
		"  -O0 -O1 -O2 -O3        run the default pipeline of that level\n"
		"  --target=SM            sm_80, sm_90a or sm_100a, for target-lowering\n"
		"                         passes (default: sm_90a)\n"
		"  --specialize=WHEN      auto, all or none: the kernels specialize-entries\n"
		"                         gives a fast entry (default: auto, those with dots)\n"
		"  -o FILE                write the result to FILE (default: stdout)\n"
		"  --no-locs              print without @line:col locations\n"
		"  --round-trip           check that print(read(print(IR))) == print(IR)\n"
		"  --verify-diagnostics   check the errors against expected-error comments\n"
		"  --split-input-file     treat each '// -----' section as its own input\n"
		"  --no-verify            do not verify the input (without passes)\n"
		"  --verify-each          verify after every pass (default in checking builds)\n"
		"  --no-verify-each       do not\n"
		"  --print-before=LIST    print the IR before these passes\n"
		"  --print-after=LIST     print the IR after these passes\n"
		"  --print-after-all      print the IR after every pass\n"
		"  --print-after-change   print the IR after each pass that changed it\n"
		"  --print-after-failure  print the IR when a pass fails\n"
		"  --stats                print what each pass changed\n"
		"  --time-passes          print the wall time of each pass\n"
		"  --reproducer=FILE      when a pass fails, write its input IR and pipeline\n"
		"  --help, --version\n"
		"\n"
		"Passes:\n");
	pass_list(out);
}

/* "--name=value" or "--name value"; NULL when arg is not --name. */
static const char *
option_value(int argc, char **argv, int *i, const char *name)
{
	size_t n = strlen(name);
	const char *a = argv[*i];

	if (strncmp(a, name, n) != 0)
		return NULL;
	if (a[n] == '=')
		return a + n + 1;
	if (a[n] == 0 && *i + 1 < argc)
		return argv[++*i];
	return NULL;
}

static bool
flag(const char *a, const char *name, bool *out)
{
	if (strcmp(a, name) != 0)
		return false;
	*out = true;
	return true;
}

/* Returns -1 to go on, else the exit status. */
static int
parse_args(int argc, char **argv, Opts *o)
{
	int i;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v;
		PipelineOpts *po = &o->po;

		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			usage(stdout);
			return 0;
		} else if (strcmp(a, "--version") == 0) {
			printf("tlx-opt (%s) %s\n", PACKAGE_NAME, PACKAGE_VERSION);
			return 0;
		} else if ((v = option_value(argc, argv, &i, "--passes"))) {
			o->pipeline = v;
		} else if ((v = option_value(argc, argv, &i, "--specialize"))) {
			int k;

			for (k = 0; k < 3 && strcmp(v, pass_spec_names[k]); k++)
				;
			if (k == 3) {
				fprintf(stderr, "tlx-opt: unknown --specialize '%s' (auto, "
					"all or none)\n", v);
				return EXIT_USAGE;
			}
			po->specialize = k;
		} else if ((v = option_value(argc, argv, &i, "--target"))) {
			const Target *t = target_lookup(v);

			if (!t) {
				fprintf(stderr, "tlx-opt: unknown target '%s' (sm_80, "
					"sm_90a or sm_100a)\n", v);
				return EXIT_USAGE;
			}
			po->sm = t->sm;
		} else if (a[0] == '-' && a[1] == 'O' && a[2] >= '0' && a[2] <= '3' && !a[3]) {
			o->olevel = a[2] - '0';
		} else if (strcmp(a, "-o") == 0 && i + 1 < argc) {
			o->output = argv[++i];
		} else if (strncmp(a, "-o", 2) == 0 && a[2]) {
			o->output = a + 2;
		} else if ((v = option_value(argc, argv, &i, "--print-before"))) {
			po->print_before = v;
		} else if ((v = option_value(argc, argv, &i, "--print-after"))) {
			po->print_after = v;
		} else if ((v = option_value(argc, argv, &i, "--reproducer"))) {
			po->reproducer = v;
		} else if (flag(a, "--no-locs", &po->no_locs) ||
			   flag(a, "--round-trip", &o->round_trip) ||
			   flag(a, "--verify-diagnostics", &o->verify_diags) ||
			   flag(a, "--split-input-file", &o->split) ||
			   flag(a, "--verify-each", &po->verify_each) ||
			   flag(a, "--print-after-all", &po->print_after_all) ||
			   flag(a, "--print-after-change", &po->print_after_change) ||
			   flag(a, "--print-after-failure", &po->print_after_failure) ||
			   flag(a, "--stats", &po->stats) ||
			   flag(a, "--time-passes", &po->time_passes)) {
			continue;
		} else if (strcmp(a, "--no-verify-each") == 0) {
			po->verify_each = false;
		} else if (strcmp(a, "--no-verify") == 0) {
			o->verify = false;
		} else if ((a[0] != '-' || strcmp(a, "-") == 0) && !o->input) {
			o->input = a;
		} else {
			fprintf(stderr, "tlx-opt: unknown or incomplete option '%s' "
				"(see --help)\n", a);
			return EXIT_USAGE;
		}
	}
	if (o->pipeline && o->olevel >= 0) {
		fprintf(stderr, "tlx-opt: give either --passes or -O, not both\n");
		return EXIT_USAGE;
	}
	if (o->olevel >= 0)
		o->pipeline = pass_default_pipeline(o->olevel);
	if (!o->input)
		o->input = "-";
	return -1;
}

/* Reads all of `path` ("-": stdin) into a malloc'd buffer. */
static char *
read_all(const char *path, size_t *len)
{
	FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
	Buf b = { 0 };
	char tmp[65536];
	size_t n;

	if (!f)
		return NULL;
	buf_put(&b, "", 0);
	while ((n = fread(tmp, 1, sizeof tmp, f)) > 0)
		buf_put(&b, tmp, n);
	if (ferror(f)) {
		buf_free(&b);
		b.s = NULL;
	}
	if (f != stdin)
		fclose(f);
	*len = b.n;
	return b.s;
}

/* ---- one input ------------------------------------------------------------------ */

/* The first line where a and b differ, as a message on stderr. */
static void
report_difference(const char *name, const char *a, const char *b)
{
	int line = 1;
	const char *ea, *eb;

	while (*a && *a == *b) {
		if (*a == '\n')
			line++;
		a++, b++;
	}
	while (line > 1 && a[-1] != '\n')
		a--, b--;
	ea = strchr(a, '\n');
	eb = strchr(b, '\n');
	fprintf(stderr, "%s: error: printing the IR read back from its printed form "
		"changes line %d\n  first:  %.*s\n  second: %.*s\n", name, line,
		(int)(ea ? ea - a : (long)strlen(a)), a,
		(int)(eb ? eb - b : (long)strlen(b)), b);
}

/* print(read(first)) must equal first. */
static bool
round_trip(IrCtx *c, const char *name, const Buf *first, const PrintOpts *po)
{
	Source s;
	Diag d;
	Module *m;
	Buf second = { 0 };
	bool ok;

	src_init(&s, c->arena, arena_printf(c->arena, "%s (as printed)", name),
		 first->s, first->n);
	diag_init(&d, c->arena, &s, stderr);
	m = ir_read(c, &d, &s);
	if (!m) {
		fprintf(stderr, "%s: error: the printed IR does not read back\n", name);
		return false;
	}
	ir_print_module(&second, m, po);
	ok = strcmp(first->s, second.s ? second.s : "") == 0;
	if (!ok)
		report_difference(name, first->s, second.s ? second.s : "");
	buf_free(&second);
	return ok;
}

/* Reads, verifies, transforms and prints one input; returns the exit status. */
static int
run_one(const Opts *o, const char *name, const char *text, size_t len, Buf *out)
{
	Arena a;
	IrCtx c;
	Source s;
	Diag d;
	Module *m;
	PrintOpts po = { .locs = !o->po.no_locs };
	int rc = 0;

	arena_init(&a, NULL, NULL, NULL);
	ir_ctx_init(&c, &a);
	src_init(&s, &a, name, text, len);
	diag_init(&d, &a, &s, o->verify_diags ? NULL : stderr);
	m = ir_read(&c, &d, &s);
	/* passes need verified IR, --no-verify or not */
	if (m && (o->verify || o->pipeline) && !ir_verify_module(m, &d))
		m = NULL;
	if (m && o->pipeline && !pass_run_pipeline(m, o->pipeline, &o->po, &d))
		m = NULL;
	if (o->verify_diags) {
		rc = diag_verify(&d, stderr) ? 0 : EXIT_INPUT;
	} else if (!m || d.nerrors) {
		rc = EXIT_INPUT;
	} else {
		Buf b = { 0 };

		ir_print_module(&b, m, &po);
		buf_put(&b, "", 0);
		if (o->round_trip && !round_trip(&c, name, &b, &po))
			rc = EXIT_INPUT;
		buf_put(out, b.s, b.n);
		buf_free(&b);
	}
	arena_reset(&a);
	return rc;
}

/* Each "// -----" section separately, keeping line numbers: a section is
 * handed over with the lines before it blanked. */
static int
run_split(const Opts *o, const char *text, size_t len, Buf *out)
{
	const char *p = text, *end = text + len, *start = text;
	int rc = 0, lines_before = 0, line = 1;

	for (;;) {
		bool sep = (size_t)(end - p) >= 8 && memcmp(p, "// -----", 8) == 0;
		const char *eol = memchr(p, '\n', (size_t)(end - p));

		if (sep || p >= end) {
			Buf chunk = { 0 };
			int r;

			buf_put(&chunk, "", 0);
			for (int i = 1; i < lines_before + 1; i++)
				buf_putc(&chunk, '\n');
			buf_put(&chunk, start, (size_t)(p - start));
			if (out->n)
				buf_puts(out, "// -----\n");
			r = run_one(o, o->input, chunk.s, chunk.n, out);
			buf_free(&chunk);
			rc = rc ? rc : r;
			if (p >= end)
				return rc;
			start = eol ? eol + 1 : end;
			lines_before = line;
		}
		if (!eol)
			p = end;
		else
			p = eol + 1;
		line++;
	}
}

static int
write_output(const char *path, const Buf *b)
{
	FILE *f = path ? fopen(path, "w") : stdout;

	if (!f) {
		fprintf(stderr, "tlx-opt: cannot write '%s': %s\n", path, strerror(errno));
		return EXIT_IO;
	}
	if (b->n)
		fwrite(b->s, 1, b->n, f);
	if ((f == stdout ? fflush(f) : fclose(f)) != 0) {
		fprintf(stderr, "tlx-opt: cannot write '%s': %s\n",
			path ? path : "<stdout>", strerror(errno));
		return EXIT_IO;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	Opts o = { .olevel = -1, .verify = true, .po.sm = 90 };
	Buf out = { 0 };
	char *text;
	size_t len;
	int rc;

#ifdef TLX_CHECKING
	o.po.verify_each = true;
#endif
	if ((rc = parse_args(argc, argv, &o)) >= 0)
		return rc;
	text = read_all(o.input, &len);
	if (!text) {
		fprintf(stderr, "tlx-opt: cannot read '%s': %s\n", o.input, strerror(errno));
		return EXIT_IO;
	}
	if (strcmp(o.input, "-") == 0)
		o.input = "<stdin>";
	rc = o.split ? run_split(&o, text, len, &out)
		     : run_one(&o, o.input, text, len, &out);
	free(text);
	if (rc == 0 && !o.verify_diags)
		rc = write_output(o.output, &out);
	buf_free(&out);
	return rc;
}
