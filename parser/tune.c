/*
 * tune.c: a kernel's tuning space, the attribute
 *
 *   tune(BM: [64, 128, 256], STAGES: [2, 3, 4], (BM + BN) * BK * 2 * STAGES <= SMEM)
 *
 * whose named arguments are const parameters with the values to try and
 * whose other arguments are constraints, boolean constant expressions
 * over the const parameters (SMEM: the target's shared memory per
 * program).  Compiling a kernel checks its space and uses the defaults
 * and -D values, never the space; front_tune_space() reads it for
 * libtlx's tlx_tune_space_* (tlx-tune), and evaluates its constraints
 * for the values the -D flags give.
 */
#include <string.h>

#include "parser/semaint.h"

static Ast *
kernel_param(Ast *k, const char *name)
{
	uint32_t i;

	for (i = 0; i < k->list.n; i++)
		if (k->list.v[i]->name == name)
			return k->list.v[i];
	return NULL;
}

/* Whether a -D sets a const parameter of k: the values compiled are then
 * not the defaults as written, which the warnings are about. */
static bool
any_defined(Sema *s, Ast *k)
{
	uint32_t i, j;

	for (i = 0; i < k->list.n; i++)
		for (j = 0; j < s->opts->ndefs; j++)
			if (k->list.v[i]->is_const &&
			    !strcmp(s->opts->defs[j].name, k->list.v[i]->name))
				return true;
	return false;
}

/* NAME: [v, ...] -- false after an error.  `warn`: the defaults are
 * compiled, and one missing from its list is a warning. */
static bool
tune_param(Sema *s, Ast *k, Ast *arg, TuneDim *dim, bool warn)
{
	const char *name = arg->name;
	Ast *p = kernel_param(k, name), *list = arg->a;
	const char *what = arena_printf(s->arena, "a tune value of '%s'", name);
	SrcRange *locs;
	Sym *y;
	Type *t;
	uint32_t i, j;
	bool ok = true;

	if (!p) {
		y = sema_lookup(s, name);
		if (y && y->kind == SYM_CONST)
			diag_error(s->diag, arg->loc, "'%s' is a file-level "
				   "constant; only the kernel's const parameters "
				   "can be tuned", name);
		else
			diag_error(s->diag, arg->loc, "kernel '%s' has no "
				   "parameter '%s' to tune", k->name, name);
		return false;
	}
	if (!p->is_const) {
		diag_error(s->diag, arg->loc, "'%s' is a runtime parameter; only "
			   "const parameters can be tuned", name);
		diag_note(s->diag, p->loc, "'%s' is declared here", name);
		return false;
	}
	if (list->kind != AST_LIST) {
		diag_error(s->diag, list->loc, "the values of '%s' must be a list "
			   "of integers, such as %s: [64, 128]", name, name);
		return false;
	}
	if (!list->list.n) {
		diag_error(s->diag, list->loc, "'%s' has no values to tune over",
			   name);
		return false;
	}
	y = sema_lookup(s, name);
	if (!y || y->val.kind != SV_VALUE)
		return false;  /* its default's error is reported */
	t = y->val.ty;
	if (!ty_is_int(t)) {
		diag_error(s->diag, arg->loc, "'%s' is '%s': only integer const "
			   "parameters can be tuned", name, sema_type_str(s, t));
		return false;
	}
	dim->name = name;
	dim->values = arena_alloc(s->arena, list->list.n * sizeof *dim->values);
	locs = arena_alloc(s->arena, list->list.n * sizeof *locs);
	dim->n = 0;
	for (i = 0; i < list->list.n; i++) {
		Ast *e = list->list.v[i];
		int64_t v;

		if (!sema_const_int(s, e, what, &v)) {
			ok = false;
			continue;
		}
		if (t->kind == TY_I1 ? v != 0 && v != 1
				     : !cv_fits(t->kind, v, false)) {
			diag_error(s->diag, e->loc, "%lld does not fit '%s', "
				   "which is '%s'", (long long)v, name,
				   sema_type_str(s, t));
			ok = false;
			continue;
		}
		for (j = 0; j < dim->n && dim->values[j] != v; j++)
			;
		if (j < dim->n) {
			diag_error(s->diag, e->loc, "the value %lld of '%s' is "
				   "listed twice", (long long)v, name);
			diag_note(s->diag, locs[j], "listed here first");
			ok = false;
			continue;
		}
		locs[dim->n] = e->loc;
		dim->values[dim->n++] = v;
	}
	if (!ok || !warn)
		return ok;
	for (j = 0; j < dim->n && dim->values[j] != (t->kind == TY_I1
						     ? y->val.cval.i != 0
						     : y->val.cval.i); j++)
		;
	if (j == dim->n) {
		diag_warning(s->diag, list->loc, "the default of '%s', %lld, is "
			     "not one of its tune values; list it, so that the "
			     "tuner's first configuration is in the space", name,
			     (long long)y->val.cval.i);
		diag_note(s->diag, p->loc, "'%s' is declared here", name);
	}
	return true;
}

/* 'text' of a range on one line, else "here". */
static const char *
source_text(Sema *s, SrcRange r)
{
	const char *line;
	size_t len;

	if (!s->diag->src || r.first_line != r.last_line ||
	    r.first_column < 1 || r.last_column < r.first_column ||
	    !(line = src_line(s->diag->src, r.first_line, &len)) ||
	    (size_t)r.last_column > len)
		return "here";
	return arena_printf(s->arena, "'%.*s'",
			    r.last_column - r.first_column + 1,
			    line + r.first_column - 1);
}

/* A constraint: a boolean constant.  Returns 1 true, 0 false, -1 after an
 * error. */
static int
tune_constraint(Sema *s, Ast *e)
{
	Builder *saved = s->b;
	const char *saved_what = s->const_what;
	SVal v;

	s->b = NULL;
	s->const_what = "a tune constraint";
	v = sema_expr(s, e);
	s->b = saved;
	s->const_what = saved_what;
	if (v.kind == SV_ERROR)
		return -1;
	if (!sv_is_scalar(&v) || !v.is_const || v.v) {
		diag_error(s->diag, e->loc, "a tune constraint must be a "
			   "compile-time constant condition, got %s",
			   sv_describe(s, &v));
		return -1;
	}
	if (v.ty->kind != TY_I1) {
		diag_error(s->diag, e->loc, "a tune constraint must be a "
			   "condition, got %s: compare it, such as "
			   "'BM * BN <= 16384'", sv_describe(s, &v));
		return -1;
	}
	return cv_truthy(v.cval);
}

void
sema_tune(Sema *s, Ast *k, Ast *attr)
{
	const char *smem = strtab_intern(&s->ir->strs, "SMEM", 4);
	TuneInfo *ti = s->tune;
	bool warn = !ti && !any_defined(s, k);
	uint32_t i, j, nc = 0;
	Sym *y;

	if (!attr->list.n) {
		diag_error(s->diag, attr->loc, "tune() is empty: name const "
			   "parameters and their values, such as "
			   "tune(BM: [64, 128])");
		return;
	}
	if (ti) {
		ti->params = arena_alloc(s->arena, attr->list.n *
					 sizeof *ti->params);
		ti->nparams = 0;
		ti->false_constraint = -1;
	}
	sema_push_scope(s);
	if (!sema_lookup(s, smem) &&
	    (y = sema_declare(s, SYM_LET, smem, attr->loc)))
		y->val = sv_const_int(s, TY_I32, target_get(s->opts->sm)->smem,
				      attr->loc);
	for (i = 0; i < attr->list.n; i++) {
		Ast *a = attr->list.v[i];
		TuneDim dim;
		int r;

		if (a->kind != AST_ARG) {
			r = tune_constraint(s, a);
			if (r == 0 && warn)
				diag_warning(s->diag, a->loc, "the defaults are "
					     "outside the tuning space: this "
					     "constraint is false for them");
			if (r == 0 && ti && ti->false_constraint < 0) {
				ti->false_constraint = (int)nc;
				diag_note(s->diag, a->loc, "the tune constraint "
					  "%s is false", source_text(s, a->loc));
			}
			nc++;
			continue;
		}
		for (j = 0; j < i; j++)
			if (attr->list.v[j]->kind == AST_ARG &&
			    attr->list.v[j]->name == a->name)
				break;
		if (j < i) {
			diag_error(s->diag, a->loc, "'%s' is tuned twice", a->name);
			diag_note(s->diag, attr->list.v[j]->loc, "'%s' is tuned "
				  "here first", a->name);
			continue;
		}
		if (tune_param(s, k, a, &dim, warn) && ti)
			ti->params[ti->nparams++] = dim;
	}
	sema_pop_scope(s);
	if (ti)
		ti->nconstraints = nc;
}

bool
front_tune_space(IrCtx *c, Diag *d, Ast *file, const FrontOpts *o,
		 const char *kernel, TuneInfo *out)
{
	Sema s = { .arena = c->arena, .ir = c, .diag = d, .file = file,
		   .opts = o, .tune = out };
	Ast *k = NULL;
	uint32_t i, n;

	memset(out, 0, sizeof *out);
	out->false_constraint = -1;
	s.def_used = arena_alloc(c->arena, o->ndefs + 1);
	s.mod = ir_module_new(c, d->src ? d->src->name : "");
	sema_push_scope(&s);
	s.globals = s.scope;
	sema_declare_items(&s, file);
	for (i = 0; i < file->list.n; i++)
		if (file->list.v[i]->kind == AST_KERNEL &&
		    !strcmp(file->list.v[i]->name, kernel))
			k = file->list.v[i];
	if (!k) {
		diag_error_noloc(d, "no kernel is named '%s'", kernel);
		return false;
	}
	n = k->list.n + 1;
	sema_push_scope(&s);
	sema_kernel_params(&s, k, arena_alloc(c->arena, n * sizeof(Type *)),
			   arena_alloc(c->arena, n * sizeof(Ast *)));
	for (i = 0; i < k->list2.n && !d->nerrors; i++)
		if (!strcmp(k->list2.v[i]->name, "tune")) {
			sema_tune(&s, k, k->list2.v[i]);
			break;
		}
	return !d->nerrors;
}
