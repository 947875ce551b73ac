/*
 * pipeline.c: the pass manager.
 *
 * A pipeline is text, "inline,canon,cse": pass names from passes.def
 * separated by commas.  Each pass runs on every function of the module
 * in order (over a snapshot of the function list, so a pass may remove
 * functions other than the one it is given), then the manager:
 *   - verifies the module when verify_each is set: a broken IR after a
 *     pass is a compiler bug, so it prints the pass name, the problems and
 *     the IR, writes the reproducer, and aborts (tlx_bug);
 *   - prints the module when asked (--print-before/after=names,
 *     --print-after-all, --print-after-change, --print-after-failure),
 *     under a header "// -----// IR Dump After cse //----- //", in the
 *     textual IR that tlx-opt reads;
 *   - keeps per-pass counters (pass_stat, --stats) and wall times
 *     (--time-passes), reported at the end.
 * When a pass fails (a user error such as a recursive call), the pipeline
 * stops; with --reproducer=FILE the IR before the failing pass is written
 * there with a RUN line that replays the rest of the pipeline.
 * Scratch memory for a pass is reset after it returns on each function.
 */
#include <errno.h>
#include <time.h>

#include "passes/passes.h"

typedef bool (*PassFn)(PassCtx *pc, Func *f);

typedef struct PassInfo {
	const char *name;
	PassFn fn;
	const char *summary;
} PassInfo;

static const PassInfo registry[] = {
#define PASS(fn, name, summary) { name, pass_##fn, summary },
#include "passes/passes.def"
#undef PASS
};

enum { MAX_STATS = 16 };

struct PassStats {
	struct {
		const char *what;
		uint64_t n;
	} v[MAX_STATS];
	int n;
};

typedef struct Run {  /* one entry of the pipeline */
	const PassInfo *pass;
	PassStats stats;
	double secs;
	bool changed;
} Run;

typedef struct Manager {
	Module *m;
	const PipelineOpts *o;
	Diag *d;
	FILE *out;
	Arena arena;    /* the manager's own memory */
	Arena scratch;  /* PassCtx.scratch */
	Vec(Run) runs;
	const char *pipeline;
} Manager;

const char *
pass_default_pipeline(int olevel)
{
	if (olevel <= 0)
		return "inline,merge-replicas";
	if (olevel == 1)
		return "inline,merge-replicas,canon,dce";
	return "inline,merge-replicas,canon,cse,licm,peel-rows,canon,cse,dce";
}

const char *
pass_lower_pipeline(int olevel)
{
	return olevel > 0 ? "lower-schedules,check-barriers,allocate-warps,lower-pipes,"
			    "pipeline-loads,assign-layouts,plan-smem,insert-syncs,"
			    "specialize-entries"
			  : "lower-schedules,check-barriers,allocate-warps,lower-pipes,"
			    "assign-layouts,plan-smem,insert-syncs,specialize-entries";
}

static const PassInfo *
find_pass(const char *name, size_t n)
{
	size_t i;

	for (i = 0; i < countof(registry); i++)
		if (strlen(registry[i].name) == n && memcmp(registry[i].name, name, n) == 0)
			return &registry[i];
	return NULL;
}

bool
pass_exists(const char *name)
{
	return find_pass(name, strlen(name)) != NULL;
}

void
pass_list(FILE *out)
{
	size_t i;

	for (i = 0; i < countof(registry); i++)
		fprintf(out, "  %-12s %s\n", registry[i].name, registry[i].summary);
}

void
pass_stat(PassCtx *pc, const char *what, uint64_t n)
{
	PassStats *s = pc->stats;
	int i;

	if (!s || !n)
		return;
	for (i = 0; i < s->n; i++)
		if (strcmp(s->v[i].what, what) == 0)
			break;
	if (i == s->n) {
		if (NEVER(s->n == MAX_STATS))
			return;
		s->v[s->n].what = what;
		s->v[s->n++].n = 0;
	}
	s->v[i].n += n;
}

/* ---- pipeline text ---------------------------------------------------------- */

/* Calls fn(name, len) for each comma-separated item, trimmed; stops and
 * returns false when fn does. */
static bool
each_name(const char *list, bool (*fn)(void *ud, const char *s, size_t n), void *ud)
{
	const char *p = list;

	for (;;) {
		const char *e = strchr(p, ',');
		size_t n = e ? (size_t)(e - p) : strlen(p);

		while (n && (*p == ' ' || *p == '\t'))
			p++, n--;
		while (n && (p[n - 1] == ' ' || p[n - 1] == '\t'))
			n--;
		if (!fn(ud, p, n))
			return false;
		if (!e)
			return true;
		p = e + 1;
	}
}

typedef struct NameCheck {
	Manager *mg;
	const char *list, *what;
	bool add;  /* append to the pipeline */
} NameCheck;

static bool
check_name(void *ud, const char *s, size_t n)
{
	NameCheck *nc = ud;
	const PassInfo *p = find_pass(s, n);

	if (n == 0) {
		diag_error_noloc(nc->mg->d, "empty pass name in %s '%s'", nc->what, nc->list);
		return false;
	}
	if (!p) {
		diag_error_noloc(nc->mg->d, "unknown pass '%.*s' in %s '%s' (tlx-opt "
				 "--help lists the passes)", (int)n, s, nc->what, nc->list);
		return false;
	}
	if (nc->add) {
		Run r = { .pass = p };

		vec_push(&nc->mg->arena, &nc->mg->runs, r);
	}
	return true;
}

static bool
check_list(Manager *mg, const char *list, const char *what, bool add)
{
	NameCheck nc = { mg, list, what, add };

	if (!list || (!add && !*list))
		return true;
	if (add && !*list)
		return true;
	return each_name(list, check_name, &nc);
}

typedef struct Match {
	const char *name;
	bool found;
} Match;

static bool
match_name(void *ud, const char *s, size_t n)
{
	Match *m = ud;

	m->found |= strlen(m->name) == n && memcmp(m->name, s, n) == 0;
	return true;
}

static bool
in_list(const char *list, const char *name)
{
	Match m = { name, false };

	if (list && *list)
		each_name(list, match_name, &m);
	return m.found;
}

/* ---- dumps, reproducers, reports ------------------------------------------- */

static void
print_module(Manager *mg, Buf *b)
{
	PrintOpts po = { .locs = !mg->o->no_locs };

	ir_print_module(b, mg->m, &po);
}

static void
dump(Manager *mg, const char *when, const char *name)
{
	Buf b = { 0 };

	buf_printf(&b, "// -----// IR Dump %s %s //----- //\n", when, name);
	print_module(mg, &b);
	fputs(b.s, mg->out);
	fflush(mg->out);
	buf_free(&b);
}

/* The pipeline from entry i on, as text. */
static char *
rest_of_pipeline(Manager *mg, uint32_t i)
{
	Buf b = { 0 };
	char *s;

	for (; i < mg->runs.n; i++)
		buf_printf(&b, "%s%s", b.n ? "," : "", mg->runs.v[i].pass->name);
	s = arena_strdup(&mg->arena, b.s ? b.s : "");
	buf_free(&b);
	return s;
}

static void
write_reproducer(Manager *mg, uint32_t i, const char *before)
{
	const char *path = mg->o->reproducer;
	FILE *f;

	if (!path || !before)
		return;
	f = fopen(path, "w");
	if (!f) {
		diag_error_noloc(mg->d, "cannot write the reproducer '%s': %s", path,
				 strerror(errno));
		return;
	}
	fprintf(f, "// Reproducer: pass '%s' failed in pipeline '%s'.\n",
		mg->runs.v[i].pass->name, mg->pipeline);
	fprintf(f, "// RUN: %%tlx-opt %%s --passes=%s\n", rest_of_pipeline(mg, i));
	fputs(before, f);
	if (fclose(f) != 0)
		diag_error_noloc(mg->d, "cannot write the reproducer '%s': %s", path,
				 strerror(errno));
}

static void
report_stats(Manager *mg)
{
	uint32_t i;
	int j;

	fprintf(mg->out, "// ----- Pass statistics -----\n");
	for (i = 0; i < mg->runs.n; i++) {
		Run *r = &mg->runs.v[i];

		fprintf(mg->out, "// %s%s\n", r->pass->name, r->stats.n ? "" : ": no changes");
		for (j = 0; j < r->stats.n; j++)
			fprintf(mg->out, "//   %8llu %s\n", (unsigned long long)r->stats.v[j].n,
				r->stats.v[j].what);
	}
}

static void
report_times(Manager *mg)
{
	double total = 0;
	uint32_t i;

	for (i = 0; i < mg->runs.n; i++)
		total += mg->runs.v[i].secs;
	fprintf(mg->out, "// ----- Pass execution timing report -----\n");
	fprintf(mg->out, "//   Wall time (s)      %%   Pass\n");
	for (i = 0; i < mg->runs.n; i++)
		fprintf(mg->out, "//   %13.6f %6.1f   %s\n", mg->runs.v[i].secs,
			total > 0 ? 100 * mg->runs.v[i].secs / total : 0.0,
			mg->runs.v[i].pass->name);
	fprintf(mg->out, "//   %13.6f  100.0   total\n", total);
}

/* ---- running ------------------------------------------------------------------- */

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static bool
still_in_module(Module *m, Func *f, uint32_t i)
{
	uint32_t j;

	if (i < m->funcs.n && m->funcs.v[i] == f)
		return true;
	for (j = 0; j < m->funcs.n; j++)
		if (m->funcs.v[j] == f)
			return true;
	return false;
}

/* Runs entry r on every function; false when the pass failed on any (each
 * function still gets its own diagnostics). */
static bool
run_pass(Manager *mg, Run *r)
{
	Module *m = mg->m;
	uint32_t n = m->funcs.n, i;
	Func **snap = arena_dup(&mg->arena, m->funcs.v, n * sizeof *snap);
	int errors = mg->d->nerrors;
	double t0 = now();
	bool ok = true;

	for (i = 0; i < n; i++) {
		PassCtx pc = { .mod = m, .diag = mg->d, .scratch = &mg->scratch,
			       .pass_name = r->pass->name, .sm = mg->o->sm,
			       .specialize = mg->o->specialize,
			       .stats = &r->stats };

		if (!still_in_module(m, snap[i], i))
			continue;
		r->changed |= r->pass->fn(&pc, snap[i]);
		arena_reset(&mg->scratch);
		ok &= !pc.failed && mg->d->nerrors == errors;
		errors = mg->d->nerrors;
	}
	r->secs += now() - t0;
	return ok;
}

/* A pass left the IR broken: our bug, not the user's. */
static TLX_NORETURN void
broken_ir(Manager *mg, uint32_t i, const char *before)
{
	Diag vd;

	diag_init(&vd, &mg->arena, mg->d->src, stderr);
	fprintf(stderr, "tlx: the IR does not verify after pass '%s':\n",
		mg->runs.v[i].pass->name);
	ir_verify_module(mg->m, &vd);
	write_reproducer(mg, i, before);
	dump(mg, "After (broken)", mg->runs.v[i].pass->name);
	tlx_bug("pass '%s' broke the IR", mg->runs.v[i].pass->name);
}

static bool
verifies(Manager *mg)
{
	Diag vd;

	diag_init(&vd, &mg->arena, mg->d->src, NULL);
	return ir_verify_module(mg->m, &vd);
}

static bool
run_all(Manager *mg)
{
	const PipelineOpts *o = mg->o;
	uint32_t i;

	for (i = 0; i < mg->runs.n; i++) {
		Run *r = &mg->runs.v[i];
		const char *name = r->pass->name;
		char *before = NULL;

		if (in_list(o->print_before, name))
			dump(mg, "Before", name);
		if (o->reproducer) {
			Buf b = { 0 };

			print_module(mg, &b);
			before = arena_strdup(&mg->arena, b.s ? b.s : "");
			buf_free(&b);
		}
		if (!run_pass(mg, r)) {
			write_reproducer(mg, i, before);
			if (o->print_after_failure)
				dump(mg, "After Failure", name);
			return false;
		}
		if (o->verify_each && !verifies(mg))
			broken_ir(mg, i, before);
		if (o->print_after_all || in_list(o->print_after, name) ||
		    (o->print_after_change && r->changed))
			dump(mg, "After", name);
	}
	return true;
}

/* Runs with the module arena's out-of-memory jump pointed here, so the
 * manager's arenas are freed before the jump goes on to its owner. */
static bool
run_guarded(Manager *mg, bool *oom)
{
	Arena *ma = mg->m->ctx->arena;
	jmp_buf here, *outer = ma->oom;
	bool ok;

	if (outer) {
		if (setjmp(here)) {
			ma->oom = outer;
			*oom = true;
			return false;
		}
		ma->oom = &here;
		mg->arena.oom = mg->scratch.oom = &here;
	}
	ok = run_all(mg);
	ma->oom = outer;
	return ok;
}

bool
pass_run_pipeline(Module *m, const char *pipeline, const PipelineOpts *o, Diag *d)
{
	Arena *ma = m->ctx->arena;
	jmp_buf *outer = ma->oom;
	Manager mg = { .m = m, .o = o, .d = d, .out = o->out ? o->out : stderr,
		       .pipeline = pipeline ? pipeline : "" };
	bool ok, oom = false;

	arena_init(&mg.arena, ma->alloc, ma->ud, NULL);
	arena_init(&mg.scratch, ma->alloc, ma->ud, NULL);
	ok = check_list(&mg, mg.pipeline, "pipeline", true) &&
	     check_list(&mg, o->print_before, "--print-before", false) &&
	     check_list(&mg, o->print_after, "--print-after", false);
	if (ok)
		ok = run_guarded(&mg, &oom);
	if (!oom && o->stats)
		report_stats(&mg);
	if (!oom && o->time_passes)
		report_times(&mg);
	arena_reset(&mg.scratch);
	arena_reset(&mg.arena);
	if (oom)
		longjmp(*outer, 1);
	return ok;
}
