/*
 * tlx.c: libtlx, the public API of include/tlx/tlx.h -- contexts, the
 * in-memory and disk caches, and the protected boundary around a
 * compilation (running out of memory returns TLX_NOMEM, never aborts).
 */
#include <stdlib.h>

#include "config.h"
#include "jit/jit.h"
#include "tlx/tlx.h"

struct tlx_ctx {
	AllocFn alloc;
	void *ud;
	Buf errmsg;
	char *cache_dir;        /* NULL: no disk cache */
	Vec(CacheEntry) mem;    /* the in-memory cache (entries own malloc'd data) */
	Arena vec_arena;        /* holds mem's array */
};

struct tlx_module {
	int kind;
	char *image;
	size_t image_size;
	char *ir;
	int from_cache;
};

TLX_API int
tlx_libversion_number(void)
{
	return TLX_VERSION_NUMBER;
}

TLX_API const char *
tlx_libversion(void)
{
	return TLX_VERSION;
}

TLX_API const char *
tlx_errstr(int rc)
{
	switch (rc) {
	case TLX_OK: return "not an error";
	case TLX_ERROR: return "error";
	case TLX_NOMEM: return "out of memory";
	case TLX_MISUSE: return "bad argument";
	case TLX_COMPILE: return "the source has errors";
	case TLX_UNSUPPORTED: return "not supported here";
	case TLX_IO: return "input/output error";
	default: return "unknown status code";
	}
}

static int
fail(tlx_ctx *c, int rc, const char *fmt, ...)
{
	va_list ap;

	if (!c)
		return rc;
	c->errmsg.n = 0;
	va_start(ap, fmt);
	buf_vprintf(&c->errmsg, fmt, ap);
	va_end(ap);
	return rc;
}

TLX_API int
tlx_ctx_create(void *(*alloc)(void *, void *, size_t, size_t), void *ud,
	       tlx_ctx **out)
{
	tlx_ctx *c;

	if (!out)
		return TLX_MISUSE;
	*out = NULL;
	if (!alloc)
		alloc = default_alloc;
	if (!(c = alloc(ud, NULL, 0, sizeof *c)))
		return TLX_NOMEM;
	memset(c, 0, sizeof *c);
	c->alloc = alloc;
	c->ud = ud;
	arena_init(&c->vec_arena, alloc, ud, NULL);
	c->cache_dir = cache_default_dir();
	*out = c;
	return TLX_OK;
}

TLX_API void
tlx_ctx_destroy(tlx_ctx *c)
{
	uint32_t i;

	if (!c)
		return;
	for (i = 0; i < c->mem.n; i++)
		cache_entry_free(&c->mem.v[i]);
	arena_reset(&c->vec_arena);
	buf_free(&c->errmsg);
	free(c->cache_dir);
	c->alloc(c->ud, c, sizeof *c, 0);
}

TLX_API const char *
tlx_errmsg(tlx_ctx *c)
{
	if (!c)
		return "no context";
	return c->errmsg.s ? c->errmsg.s : "";
}

TLX_API int
tlx_cache_set_dir(tlx_ctx *c, const char *dir)
{
	if (!c)
		return TLX_MISUSE;
	free(c->cache_dir);
	c->cache_dir = dir ? strdup(dir) : NULL;
	return dir && !c->cache_dir ? TLX_NOMEM : TLX_OK;
}

TLX_API int
tlx_cache_clear(tlx_ctx *c)
{
	uint32_t i;

	if (!c)
		return TLX_MISUSE;
	for (i = 0; i < c->mem.n; i++)
		cache_entry_free(&c->mem.v[i]);
	c->mem.n = 0;
	return TLX_OK;
}

static CacheEntry *
mem_find(tlx_ctx *c, CacheKey k)
{
	uint32_t i;

	for (i = 0; i < c->mem.n; i++)
		if (c->mem.v[i].key.h[0] == k.h[0] && c->mem.v[i].key.h[1] == k.h[1])
			return &c->mem.v[i];
	return NULL;
}

static char *
dup_bytes(const char *p, size_t n)
{
	char *q = malloc(n + 1);

	if (q) {
		memcpy(q, p, n);
		q[n] = 0;
	}
	return q;
}

static int
module_from(tlx_ctx *c, const CacheEntry *e, int from, tlx_module **out)
{
	tlx_module *m = calloc(1, sizeof *m);

	if (!m || !(m->image = dup_bytes(e->image, e->image_size)) ||
	    !(m->ir = dup_bytes(e->ir, e->ir_size))) {
		tlx_module_destroy(m);
		return fail(c, TLX_NOMEM, "out of memory");
	}
	m->kind = e->kind;
	m->image_size = e->image_size;
	m->from_cache = from;
	*out = m;
	return TLX_OK;
}

static bool
parse_define(Arena *a, const char *s, Define *d)
{
	const char *eq = strchr(s, '=');

	if (!eq || eq == s || !eq[1])
		return false;
	d->name = arena_strndup(a, s, (size_t)(eq - s));
	d->value = arena_strdup(a, eq + 1);
	return true;
}

/* Fills the job from the options; returns TLX_OK or an error. */
static int
setup_job(tlx_ctx *c, Job *j, const char *src, size_t len,
	  const tlx_options *o)
{
	static const tlx_options none;
	const Target *t;
	Define *defs;
	int i;

	if (!o)
		o = &none;
	j->name = o->name ? o->name : "<string>";
	j->text = src;
	j->len = len;
	if (!(t = target_lookup(o->target ? o->target : "sm_90a")))
		return fail(c, TLX_MISUSE, "unknown target '%s': use sm_80, "
			    "sm_90a or sm_100a", o->target);
	j->sm = t->sm;
	if (o->opt_level < 0 || o->opt_level > 3)
		return fail(c, TLX_MISUSE, "opt_level must be 0 to 3");
	j->olevel = o->opt_level ? o->opt_level : 2;
	switch (o->emit) {
	case TLX_EMIT_CUBIN: j->emit = EMIT_CUBIN; j->ptx_ok = true; break;
	case TLX_EMIT_PTX: j->emit = EMIT_PTX; break;
	case TLX_EMIT_IR: j->emit = EMIT_LIR; break;
	default: return fail(c, TLX_MISUSE, "unknown emit kind %d", o->emit);
	}
	j->lineinfo = o->lineinfo != 0;
	if (o->ndefines < 0 || (o->ndefines && !o->defines))
		return fail(c, TLX_MISUSE, "bad defines");
	defs = arena_alloc(j->arena, ((size_t)o->ndefines + 1) * sizeof *defs);
	for (i = 0; i < o->ndefines; i++)
		if (!o->defines[i] || !parse_define(j->arena, o->defines[i],
						    &defs[i]))
			return fail(c, TLX_MISUSE, "define %d is not NAME=VALUE",
				    i);
	j->defs = defs;
	j->ndefs = (uint32_t)o->ndefines;
	return TLX_OK;
}

/* Renders the job's diagnostics into the context's error message. */
static int
compile_error(tlx_ctx *c, Job *j)
{
	uint32_t i;

	c->errmsg.n = 0;
	for (i = 0; i < j->diag.msgs.n; i++)
		diag_render(&j->diag, &j->diag.msgs.v[i], &c->errmsg);
	if (!c->errmsg.n)
		buf_puts(&c->errmsg, "compilation failed");
	return TLX_COMPILE;
}

static int
run_job(tlx_ctx *c, Job *j, CacheEntry *e)
{
	if (!compile_run(j))
		return compile_error(c, j);
	e->kind = j->emit == EMIT_LIR ? TLX_IMAGE_IR
		  : j->binary ? TLX_IMAGE_CUBIN : TLX_IMAGE_PTX;
	e->image = dup_bytes(j->out.s ? j->out.s : "", j->out.n);
	e->image_size = j->out.n;
	e->ir = dup_bytes(j->ir_text ? j->ir_text : "",
			  j->ir_text ? strlen(j->ir_text) : 0);
	e->ir_size = j->ir_text ? strlen(j->ir_text) : 0;
	if (!e->image || !e->ir) {
		cache_entry_free(e);
		return fail(c, TLX_NOMEM, "out of memory");
	}
	return TLX_OK;
}

TLX_API int
tlx_compile(tlx_ctx *c, const char *src, size_t len, const tlx_options *o,
	    tlx_module **out)
{
	Arena arena;
	Job j = { 0 };
	CacheEntry e = { 0 }, *hit;
	OomScope os;
	int rc;

	if (!c || !src || !out)
		return fail(c, TLX_MISUSE, "tlx_compile: NULL argument");
	*out = NULL;
	/* every arena of the compilation is in this scope: exhaustion anywhere
	 * comes back here with the chunks freed */
	oom_scope_enter(&os, c->alloc, c->ud);
	arena_init(&arena, NULL, NULL, NULL);
	if (setjmp(os.jb)) {
		arena_reset(&arena);
		oom_scope_unwind(&os);
		oom_scope_leave(&os);
		cache_entry_free(&e);
		buf_free(&j.out);
		buf_free(&j.ir_buf);
		return fail(c, TLX_NOMEM, "out of memory while compiling");
	}
	j.arena = &arena;
	if ((rc = setup_job(c, &j, src, len, o)) != TLX_OK)
		goto done;
	e.key = cache_key(&j);
	if (!(o && o->no_cache)) {
		if ((hit = mem_find(c, e.key))) {
			rc = module_from(c, hit, 1, out);
			goto done;
		}
		if (c->cache_dir && cache_read(c->cache_dir, e.key, &e)) {
			rc = module_from(c, &e, 2, out);
			goto keep;
		}
	}
	if ((rc = run_job(c, &j, &e)) != TLX_OK)
		goto done;
	if (c->cache_dir)
		cache_write(c->cache_dir, &e);  /* a failure only costs time */
	rc = module_from(c, &e, 0, out);
keep:
	if (rc == TLX_OK && !mem_find(c, e.key)) {
		vec_push(&c->vec_arena, &c->mem, e);
		e.image = e.ir = NULL;
	}
done:
	cache_entry_free(&e);
	buf_free(&j.out);
	buf_free(&j.ir_buf);
	arena_reset(&arena);
	oom_scope_leave(&os);
	return rc;
}

TLX_API int
tlx_module_image(tlx_module *m, const void **data, size_t *size, int *kind)
{
	if (!m || !data || !size || !kind)
		return TLX_MISUSE;
	*data = m->image;
	*size = m->image_size;
	*kind = m->kind;
	return TLX_OK;
}

TLX_API int
tlx_module_ir(tlx_module *m, const char **text)
{
	if (!m || !text)
		return TLX_MISUSE;
	*text = m->ir;
	return TLX_OK;
}

TLX_API int
tlx_module_cached(tlx_module *m, int *from)
{
	if (!m || !from)
		return TLX_MISUSE;
	*from = m->from_cache;
	return TLX_OK;
}

TLX_API void
tlx_module_destroy(tlx_module *m)
{
	if (!m)
		return;
	free(m->image);
	free(m->ir);
	free(m);
}

/* ---- checking without generating code -------------------------------------- */

TLX_API int
tlx_check(tlx_ctx *c, const char *src, size_t len, const tlx_options *o)
{
	static const tlx_options none;
	tlx_options co = o ? *o : none;
	Arena arena;
	Job j = { 0 };
	OomScope os;
	int rc;

	if (!c || !src)
		return fail(c, TLX_MISUSE, "tlx_check: NULL argument");
	co.emit = TLX_EMIT_IR;  /* ignored */
	oom_scope_enter(&os, c->alloc, c->ud);
	arena_init(&arena, NULL, NULL, NULL);
	if (setjmp(os.jb)) {
		arena_reset(&arena);
		oom_scope_unwind(&os);
		oom_scope_leave(&os);
		buf_free(&j.out);
		buf_free(&j.ir_buf);
		return fail(c, TLX_NOMEM, "out of memory while checking");
	}
	j.arena = &arena;
	if ((rc = setup_job(c, &j, src, len, &co)) == TLX_OK) {
		j.check_only = true;
		rc = compile_run(&j) ? TLX_OK : compile_error(c, &j);
	}
	buf_free(&j.out);
	buf_free(&j.ir_buf);
	arena_reset(&arena);
	oom_scope_leave(&os);
	return rc;
}

/* ---- tuning spaces ---------------------------------------------------------- */

struct tlx_tune_space {
	char *src;
	size_t len;
	char *name, *target, *kernel;
	char **defines;          /* the options' */
	int ndefines;
	int nparams, nconstraints;
	char **pnames;
	long long **values;
	int *nvalues;
};

static size_t
define_name_len(const char *d)
{
	return strcspn(d, "=");
}

/* The options' defines, less those that `over` sets, then `over`'s. */
static const char **
merge_defines(Arena *a, const tlx_options *o, const char *const *over,
	      int nover, int *n)
{
	const char **d = arena_alloc(a, ((size_t)o->ndefines + (size_t)nover + 1) *
				     sizeof *d);
	int i, k;

	*n = 0;
	for (i = 0; i < o->ndefines; i++) {
		size_t l = o->defines[i] ? define_name_len(o->defines[i]) : 0;

		for (k = 0; k < nover; k++)
			if (over[k] && define_name_len(over[k]) == l &&
			    !strncmp(over[k], o->defines[i], l))
				break;
		if (k == nover)
			d[(*n)++] = o->defines[i];
	}
	for (k = 0; k < nover; k++)
		d[(*n)++] = over[k];
	return d;
}

/* Parses the job's text and reads kernel's space into ti. */
static int
space_run(tlx_ctx *c, Job *j, const char *kernel, TuneInfo *ti)
{
	FrontOpts fo = { j->defs, j->ndefs, j->sm };
	Ast *file;

	src_init(&j->src, j->arena, j->name, j->text, j->len);
	diag_init(&j->diag, j->arena, &j->src, NULL);
	ir_ctx_init(&j->ir, j->arena);
	file = parse_file(j->arena, &j->ir.strs, &j->diag, &j->src);
	if (!file || j->diag.nerrors ||
	    !front_tune_space(&j->ir, &j->diag, file, &fo, kernel, ti))
		return compile_error(c, j);
	return TLX_OK;
}

/* Runs space_run on src with o's defines and `over` in an out-of-memory
 * scope; then done(ud, j, ti) while the job lives. */
static int
with_space(tlx_ctx *c, const char *src, size_t len, const tlx_options *o,
	   const char *const *over, int nover, const char *kernel,
	   int (*done)(tlx_ctx *, Job *, TuneInfo *, void *), void *ud)
{
	static const tlx_options none;
	tlx_options mo;
	Arena arena;
	Job j = { 0 };
	TuneInfo ti;
	OomScope os;
	int rc;

	oom_scope_enter(&os, c->alloc, c->ud);
	arena_init(&arena, NULL, NULL, NULL);
	if (setjmp(os.jb)) {
		arena_reset(&arena);
		oom_scope_unwind(&os);
		oom_scope_leave(&os);
		return fail(c, TLX_NOMEM, "out of memory while reading the space");
	}
	j.arena = &arena;
	mo = o ? *o : none;
	if (mo.ndefines < 0 || (mo.ndefines && !mo.defines) || nover < 0 ||
	    (nover && !over)) {
		rc = fail(c, TLX_MISUSE, "bad defines");
	} else {
		int n;

		mo.defines = merge_defines(&arena, &mo, over, nover, &n);
		mo.ndefines = n;
		if ((rc = setup_job(c, &j, src, len, &mo)) == TLX_OK &&
		    (rc = space_run(c, &j, kernel, &ti)) == TLX_OK)
			rc = done(c, &j, &ti, ud);
	}
	arena_reset(&arena);
	oom_scope_leave(&os);
	return rc;
}

static char *
dup_str(const char *s)
{
	return s ? dup_bytes(s, strlen(s)) : NULL;
}

static int
space_new(tlx_ctx *c, Job *j, TuneInfo *ti, void *ud)
{
	tlx_tune_space *s = *(tlx_tune_space **)ud;
	uint32_t i, k;

	(void)j;
	s->nparams = (int)ti->nparams;
	s->nconstraints = (int)ti->nconstraints;
	s->pnames = calloc(ti->nparams + 1, sizeof *s->pnames);
	s->values = calloc(ti->nparams + 1, sizeof *s->values);
	s->nvalues = calloc(ti->nparams + 1, sizeof *s->nvalues);
	if (!s->pnames || !s->values || !s->nvalues)
		return fail(c, TLX_NOMEM, "out of memory");
	for (i = 0; i < ti->nparams; i++) {
		TuneDim *d = &ti->params[i];

		s->pnames[i] = dup_str(d->name);
		s->values[i] = malloc((d->n + 1) * sizeof **s->values);
		if (!s->pnames[i] || !s->values[i])
			return fail(c, TLX_NOMEM, "out of memory");
		for (k = 0; k < d->n; k++)
			s->values[i][k] = d->values[k];
		s->nvalues[i] = (int)d->n;
	}
	return TLX_OK;
}

TLX_API int
tlx_tune_space_create(tlx_ctx *c, const char *src, size_t len,
		      const tlx_options *o, const char *kernel,
		      tlx_tune_space **out)
{
	tlx_tune_space *s;
	int rc, i;

	if (!c || !src || !kernel || !out)
		return fail(c, TLX_MISUSE, "tlx_tune_space_create: NULL argument");
	*out = NULL;
	if (!(s = calloc(1, sizeof *s)))
		return fail(c, TLX_NOMEM, "out of memory");
	rc = with_space(c, src, len, o, NULL, 0, kernel, space_new, &s);
	s->src = dup_bytes(src, len);
	s->len = len;
	s->kernel = dup_str(kernel);
	if (rc == TLX_OK && o) {
		s->name = dup_str(o->name);
		s->target = dup_str(o->target);
		s->defines = calloc((size_t)o->ndefines + 1, sizeof *s->defines);
		for (i = 0; s->defines && i < o->ndefines; i++)
			if ((s->defines[s->ndefines] = dup_str(o->defines[i])))
				s->ndefines++;
		if (!s->defines || s->ndefines != o->ndefines ||
		    (o->name && !s->name) || (o->target && !s->target))
			rc = fail(c, TLX_NOMEM, "out of memory");
	}
	if (rc == TLX_OK && (!s->src || !s->kernel))
		rc = fail(c, TLX_NOMEM, "out of memory");
	if (rc != TLX_OK) {
		tlx_tune_space_destroy(s);
		return rc;
	}
	*out = s;
	return TLX_OK;
}

TLX_API int
tlx_tune_space_num_params(tlx_tune_space *s, int *n)
{
	if (!s || !n)
		return TLX_MISUSE;
	*n = s->nparams;
	return TLX_OK;
}

TLX_API int
tlx_tune_space_get_param(tlx_tune_space *s, int i, const char **name,
			 const long long **values, int *nvalues)
{
	if (!s || i < 0 || i >= s->nparams || !name || !values || !nvalues)
		return TLX_MISUSE;
	*name = s->pnames[i];
	*values = s->values[i];
	*nvalues = s->nvalues[i];
	return TLX_OK;
}

TLX_API int
tlx_tune_space_num_constraints(tlx_tune_space *s, int *n)
{
	if (!s || !n)
		return TLX_MISUSE;
	*n = s->nconstraints;
	return TLX_OK;
}

/* The verdict; the note on the false constraint becomes the message. */
static int
space_verdict(tlx_ctx *c, Job *j, TuneInfo *ti, void *ud)
{
	uint32_t i;

	*(int *)ud = ti->false_constraint < 0;
	c->errmsg.n = 0;
	for (i = 0; i < j->diag.msgs.n; i++)
		diag_render(&j->diag, &j->diag.msgs.v[i], &c->errmsg);
	return TLX_OK;
}

TLX_API int
tlx_tune_space_check(tlx_ctx *c, tlx_tune_space *s,
		     const char *const *defines, int ndefines, int *ok)
{
	tlx_options o = { 0 };

	if (!c || !s || !ok)
		return fail(c, TLX_MISUSE, "tlx_tune_space_check: NULL argument");
	*ok = 0;
	o.name = s->name;
	o.target = s->target;
	o.defines = (const char *const *)s->defines;
	o.ndefines = s->ndefines;
	return with_space(c, s->src, s->len, &o, defines, ndefines, s->kernel,
			  space_verdict, ok);
}

TLX_API void
tlx_tune_space_destroy(tlx_tune_space *s)
{
	int i;

	if (!s)
		return;
	for (i = 0; i < s->nparams; i++) {
		free(s->pnames ? s->pnames[i] : NULL);
		free(s->values ? s->values[i] : NULL);
	}
	for (i = 0; i < s->ndefines; i++)
		free(s->defines[i]);
	free(s->pnames);
	free(s->values);
	free(s->nvalues);
	free(s->defines);
	free(s->src);
	free(s->name);
	free(s->target);
	free(s->kernel);
	free(s);
}

TLX_API int
tlx_table_parse(tlx_ctx *c, const char *name, const char *text, size_t len,
		tlx_table **out)
{
	char err[512] = "";
	int rc;

	if (!out)
		return TLX_MISUSE;
	*out = NULL;
	if (!text)
		return fail(c, TLX_MISUSE, "tlx_table_parse: NULL text");
	if ((rc = table_parse(name, text, len, out, err, sizeof err)))
		fail(c, rc, "%s", rc == TLX_NOMEM ? "out of memory" : err);
	return rc;
}

TLX_API int
tlx_table_load(tlx_ctx *c, const char *path, tlx_table **out)
{
	char err[512] = "";
	int rc;

	if (!out)
		return TLX_MISUSE;
	*out = NULL;
	if (!path)
		return fail(c, TLX_MISUSE, "tlx_table_load: NULL path");
	if ((rc = table_load(path, out, err, sizeof err)))
		fail(c, rc, "%s", rc == TLX_NOMEM ? "out of memory" : err);
	return rc;
}
