/*
 * module.c: loading a module and reading its kernels' metadata from the
 * IR: parameters (kinds, types, names), warps, tasks, cluster shape, the
 * grid function, the const values it was specialized with, and the shared
 * memory it allocates.  The backend loads the image and hands over the IR
 * text; everything else here is backend-neutral.
 */
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#include "rt.h"

static void
first_diag(Diag *d, Buf *out)
{
	Buf b = { 0 };

	if (d->msgs.n)
		diag_render(d, &d->msgs.v[0], &b);
	while (b.n && (b.s[b.n - 1] == '\n' || b.s[b.n - 1] == ' '))
		b.s[--b.n] = 0;
	buf_puts(out, b.s ? b.s : "unknown error");
	buf_free(&b);
}

typedef struct WarpWalk {
	int max;
} WarpWalk;

static void
count_warps(Op *op, void *ud)
{
	WarpWalk *w = ud;
	Op *t;
	int sum = 0;

	if (op->kind != OP_TASKS)
		return;
	for (t = op->regions[0]->first; t; t = t->next)
		if (t->kind == OP_TASK)
			sum = (int)attr_int(&t->attrs, "first_warp", sum) +
			      (int)attr_int(&t->attrs, "span",
					    attr_int(&t->attrs, "warps", 1)) *
			      (int)attr_int(&t->attrs, "replicas", 1);
	w->max = MAX(w->max, sum);
}

static int
param_of(tlxrt_module *m, Func *f, uint32_t i, RtParam *p)
{
	ValInfo *vi = &f->vals.v[f->body->args[i]];
	Type *t = vi->ty;
	int d;

	p->ty = t;
	p->name = vi->name ? vi->name : arena_printf(&m->arena, "arg%u", i + 1);
	if (ty_is_scalar_kind(t->kind)) {
		p->kind = TLXRT_PARAM_SCALAR;
		p->type = t->kind;
	} else if (t->kind == TY_PTR) {
		p->kind = TLXRT_PARAM_POINTER;
		p->type = ty_is_scalar_kind(t->elem->kind) ? (int)t->elem->kind
							   : TLXRT_TYPE_NONE;
	} else if (t->kind == TY_TMA) {
		p->kind = TLXRT_PARAM_TENSOR;
		p->type = t->elem->kind;
		p->rank = t->rank;
		for (d = 0; d < t->rank && t->shape[0]; d++)
			p->box[d] = t->shape[d];
		p->swizzle = sv_tma_box(t, p->hwbox);
	}
	return TLXRT_OK;
}

/* A task whose replicas share one body (merge-replicas) runs as one task
 * op per instance, each with its index a constant: every instance has
 * values of its own in the program's activation (the simulator), and
 * its own warps in the metadata. */
static void
unmerge(tlxrt_module *m, Func *f)
{
	uint32_t i, n;
	Op **ts = ir_find_ops(f, OP_TASK, &m->arena, &n);

	for (i = 0; i < n; i++)
		if (attr_has(&ts[i]->attrs, "replicas"))
			ir_unmerge_task(f, ts[i]);
}

/* Parameter i, the workspace (lower-schedules' counters: zeroed memory
 * for each launch), tma.ok (pipeline-loads: may the generic entry's TMA
 * loops run), or a tensor the runtime derives: where from (derive.I: the
 * pointer's parameter, each dim's, each stride's but the innermost),
 * all of them host arguments of the right kinds. */
static int
derivation(tlxrt_module *m, Func *f, int i, tlxrt_kernel *k)
{
	RtParam *p = &k->params[i];
	char name[32];
	const Attr *a;
	uint32_t j;

	if (attr_has(&f->attrs, "workspace") &&
	    attr_int(&f->attrs, "workspace", -1) == i) {
		k->ws_bytes = attr_int(&f->attrs, "workspace.bytes", 0);
		if (p->kind != TLXRT_PARAM_POINTER || k->ws_bytes <= 0 ||
		    k->ws_bytes > (1 << 20))
			return rt_error(m->dev, TLXRT_INVALID_ARG, "kernel '%s': "
					"parameter %d is a workspace of %lld "
					"bytes that is not a pointer, or of no "
					"size", f->name, i + 1,
					(long long)k->ws_bytes);
		p->derived[0] = RT_WORKSPACE;
		k->ws_param = i;
		return TLXRT_OK;
	}
	if (attr_has(&f->attrs, "tma.ok") && attr_int(&f->attrs, "tma.ok", -1) == i) {
		if (p->kind != TLXRT_PARAM_SCALAR || p->type != TLXRT_I32)
			return rt_error(m->dev, TLXRT_INVALID_ARG, "kernel '%s': "
					"parameter %d, tma.ok, is not an i32",
					f->name, i + 1);
		p->derived[0] = RT_TMA_OK;
		k->tma_eq1 = (uint64_t)attr_int(&f->attrs, "tma.eq1", 0);
		return TLXRT_OK;
	}
	snprintf(name, sizeof name, "derive.%d", i);
	a = attr_find(&f->attrs, name);
	if (p->kind != TLXRT_PARAM_TENSOR || !a || a->kind != ATTR_INTS ||
	    a->ints.n != (uint32_t)(2 * p->rank) || p->rank > 5)
		return rt_error(m->dev, TLXRT_INVALID_ARG, "kernel '%s': parameter "
				"%d is derived without a valid '%s'", f->name,
				i + 1, name);
	for (j = 0; j < a->ints.n; j++) {
		int64_t q = a->ints.v[j];

		if (q < 0 || q >= k->nparams ||
		    k->params[q].kind != (j ? TLXRT_PARAM_SCALAR
					    : TLXRT_PARAM_POINTER))
			return rt_error(m->dev, TLXRT_INVALID_ARG, "kernel '%s': "
					"'%s' names parameter %lld, not a host "
					"%s", f->name, name, (long long)q + 1,
					j ? "integer" : "pointer");
		p->derived[j] = (int)q;
	}
	return TLXRT_OK;
}

/* f's copy laid out for its generic entry, or NULL. */
static Func *
generic_copy(Module *ir, Func *f)
{
	uint32_t i;

	for (i = 0; i < ir->funcs.n; i++) {
		Func *g = ir->funcs.v[i];
		const char *of = attr_str(&g->attrs, "generic_of");

		if (g->kind == FN_KERNEL && of && !strcmp(of, f->name))
			return g;
	}
	return NULL;
}

static int
build_kernel(tlxrt_module *m, Func *f, tlxrt_kernel *k)
{
	tlxrt_device *dev = m->dev;
	SimSmemPlan plan;
	WarpWalk w = { 0 };
	Attr *a;
	const char *g;
	uint32_t i;
	int rc;

	unmerge(m, f);
	if (k->fn_generic)
		unmerge(m, k->fn_generic);
	k->mod = m;
	k->fn = f;
	k->nall = (int)f->body->nargs;
	k->ws_param = -1;
	k->nparams = k->nall - (int)attr_int(&f->attrs, "derived", 0);
	if (k->nparams < 0)
		return rt_error(dev, TLXRT_INVALID_ARG, "kernel '%s' derives more "
				"parameters than it has", f->name);
	k->params = arena_alloc(&m->arena,
				(f->body->nargs + 1) * sizeof *k->params);
	for (i = 0; i < f->body->nargs; i++) {
		param_of(m, f, i, &k->params[i]);
		if ((int)i >= k->nparams &&
		    (rc = derivation(m, f, (int)i, k)) != TLXRT_OK)
			return rc;
		else if ((int)i < k->nparams)
			k->params[i].derived[0] = -1;
	}
	k->warps = (int)attr_int(&f->attrs, "warps", 4);
	if (k->warps < 1 || k->warps > 32)
		return rt_error(dev, TLXRT_INVALID_ARG, "kernel '%s' has %d "
				"warps (1 to 32)", f->name, k->warps);
	k->cluster[0] = k->cluster[1] = k->cluster[2] = 1;
	if ((a = attr_find(&f->attrs, "cluster")) && a->kind == ATTR_INTS)
		for (i = 0; i < a->ints.n && i < 3; i++) {
			if (a->ints.v[i] < 1 || a->ints.v[i] > 16)
				return rt_error(dev, TLXRT_INVALID_ARG,
						"kernel '%s' has a cluster "
						"dimension of %lld", f->name,
						(long long)a->ints.v[i]);
			k->cluster[i] = (int)a->ints.v[i];
		}
	if ((g = attr_str(&f->attrs, "grid"))) {
		k->grid = ir_func_find(m->ir, g);
		if (!k->grid || k->grid->kind != FN_GRID)
			return rt_error(dev, TLXRT_INVALID_ARG, "kernel '%s': no "
					"grid function '%s' in the module",
					f->name, g);
		rt_grid_compile(k, &m->arena);
	}
	k->consts = arena_alloc(&m->arena,
				(f->attrs.n + 1) * sizeof *k->consts);
	for (i = 0; i < f->attrs.n; i++) {
		Attr *c = &f->attrs.v[i];
		tlxrt_const_info *ci = &k->consts[k->nconsts];

		if (strncmp(c->name, "const.", 6) != 0)
			continue;
		ci->name = c->name + 6;
		if (c->kind == ATTR_INT) {
			ci->i = c->i;
			ci->f = (double)c->i;
		} else if (c->kind == ATTR_FLOAT) {
			ci->is_float = 1;
			ci->f = c->f;
			ci->i = f64_to_i64_sat(c->f);
		} else {
			continue;
		}
		k->nconsts++;
	}
	sim_smem_plan(m->ir, f, &plan, &m->arena);
	k->smem = plan.total;
	if (k->fn_generic) {  /* a launch gives the larger entry's */
		sim_smem_plan(m->ir, k->fn_generic, &plan, &m->arena);
		k->smem = MAX(k->smem, plan.total);
	}
	ir_walk(f, count_warps, &w);
	k->total_warps = MAX(k->warps, w.max);
	k->persistent = attr_int(&f->attrs, "persistent", 0) != 0;
	return TLXRT_OK;
}

int
rt_module_build(tlxrt_module *m, const char *text, size_t len,
		const char *srcname)
{
	tlxrt_device *dev = m->dev;
	OomScope os;
	Source src;
	Diag d;
	Buf b = { 0 };
	uint32_t i;
	volatile int n = 0;
	int rc;

	/* the module's arena lives as long as the module: made outside the
	 * scope, which catches exhaustion of it and of the reader's and the
	 * verifier's own */
	arena_init(&m->arena, NULL, NULL, NULL);
	oom_scope_enter(&os, NULL, NULL);
	if (setjmp(os.jb)) {
		oom_scope_unwind(&os);
		oom_scope_leave(&os);
		buf_free(&b);
		return rt_error(dev, TLXRT_NOMEM, "out of memory reading the "
				"module");
	}
	ir_ctx_init(&m->ctx, &m->arena);
	src_init(&src, &m->arena, srcname, text, len);
	diag_init(&d, &m->arena, &src, NULL);
	m->ir = ir_read(&m->ctx, &d, &src);
	if (!m->ir || d.nerrors || !ir_verify_module(m->ir, &d)) {
		buf_puts(&b, "cannot load the module: ");
		first_diag(&d, &b);
		rc = rt_error(dev, TLXRT_INVALID_ARG, "%s", b.s);
		buf_free(&b);
		oom_scope_leave(&os);
		return rc;
	}
	for (i = 0; i < m->ir->funcs.n; i++)
		n += m->ir->funcs.v[i]->kind == FN_KERNEL;
	/* a kernel's copy laid out for its generic entry (NAME.generic) is
	 * no kernel of its own: its namesake's launches run it */
	m->kernels = arena_alloc(&m->arena, (size_t)(n + 1) * sizeof *m->kernels);
	for (i = 0; i < m->ir->funcs.n; i++) {
		Func *f = m->ir->funcs.v[i];

		if (f->kind != FN_KERNEL || attr_str(&f->attrs, "generic_of"))
			continue;
		m->kernels[m->nkernels].fn_generic = generic_copy(m->ir, f);
		rc = build_kernel(m, f, &m->kernels[m->nkernels++]);
		if (rc != TLXRT_OK) {
			oom_scope_leave(&os);
			return rc;
		}
	}
	oom_scope_leave(&os);
	return TLXRT_OK;
}

static int
load(tlxrt_device *dev, const void *image, size_t size, const char *name,
     tlxrt_module **out)
{
	tlxrt_module *m;
	char *ir = NULL;
	size_t len = 0;
	int rc, i;

	if (!(m = tlx_calloc(1, sizeof *m)))
		return rt_error(dev, TLXRT_NOMEM, "out of memory");
	m->dev = dev;
	rc = dev->be->module_load(m, image, size, &ir, &len);
	if (rc != TLXRT_OK) {
		free(m);
		return rc;
	}
	rc = rt_module_build(m, ir, len, name);
	free(ir);
	for (i = 0; rc == TLXRT_OK && i < m->nkernels; i++)
		rc = dev->be->kernel_prepare(&m->kernels[i]);
	if (rc != TLXRT_OK) {
		dev->be->module_unload(m);
		arena_reset(&m->arena);
		free(m);
		return rc;
	}
	dev->nobjects++;
	*out = m;
	return TLXRT_OK;
}

int
tlxrt_module_load(tlxrt_device *dev, const void *image, size_t size,
		  tlxrt_module **out)
{
	if (!dev || !out)
		return TLXRT_MISUSE;
	rt_clear(dev);
	*out = NULL;
	if (!image || !size)
		return rt_error(dev, TLXRT_INVALID_ARG, "an empty module image");
	return load(dev, image, size, "<module>", out);
}

int
tlxrt_module_load_file(tlxrt_device *dev, const char *path,
		       tlxrt_module **out)
{
	FILE *f;
	char *buf = NULL;
	size_t n = 0, cap = 0, got;
	int rc;

	if (!dev || !out || !path)
		return TLXRT_MISUSE;
	rt_clear(dev);
	*out = NULL;
	if (!(f = fopen(path, "rb")))
		return rt_error(dev, TLXRT_NOT_FOUND, "cannot open '%s'", path);
	for (;;) {
		if (n == cap) {
			char *nb;

			cap = cap ? cap * 2 : 65536;
			if (!(nb = tlx_realloc(buf, cap))) {
				free(buf);
				fclose(f);
				return rt_error(dev, TLXRT_NOMEM, "out of memory "
						"reading '%s'", path);
			}
			buf = nb;
		}
		got = fread(buf + n, 1, cap - n, f);
		n += got;
		if (got == 0)
			break;
	}
	rc = ferror(f);
	fclose(f);
	if (rc || n == 0) {
		free(buf);
		return rt_error(dev, TLXRT_NOT_FOUND, "cannot read '%s'%s", path,
				n ? "" : " (empty)");
	}
	rc = load(dev, buf, n, path, out);
	free(buf);
	return rc;
}

int
tlxrt_module_unload(tlxrt_module *m)
{
	tlxrt_device *dev;

	if (!m)
		return TLXRT_OK;
	dev = m->dev;
	rt_clear(dev);
	dev->be->sync(dev);
	dev->be->module_unload(m);
	arena_reset(&m->arena);
	dev->nobjects--;
	free(m);
	return TLXRT_OK;
}

int
tlxrt_module_num_kernels(tlxrt_module *m, int *out)
{
	if (!m || !out)
		return TLXRT_MISUSE;
	rt_clear(m->dev);
	*out = m->nkernels;
	return TLXRT_OK;
}

int
tlxrt_module_get_kernel(tlxrt_module *m, int i, tlxrt_kernel **out)
{
	if (!m || !out)
		return TLXRT_MISUSE;
	rt_clear(m->dev);
	*out = NULL;
	if (i < 0 || i >= m->nkernels)
		return rt_error(m->dev, TLXRT_INVALID_ARG, "kernel %d: the module "
				"has %d", i, m->nkernels);
	*out = &m->kernels[i];
	return TLXRT_OK;
}

int
tlxrt_kernel_get(tlxrt_module *m, const char *name, tlxrt_kernel **out)
{
	Buf b = { 0 };
	int i, rc;

	if (!m || !out || !name)
		return TLXRT_MISUSE;
	rt_clear(m->dev);
	*out = NULL;
	for (i = 0; i < m->nkernels; i++)
		if (strcmp(m->kernels[i].fn->name, name) == 0) {
			*out = &m->kernels[i];
			return TLXRT_OK;
		}
	for (i = 0; i < m->nkernels; i++)
		buf_printf(&b, "%s'%s'", i ? ", " : "", m->kernels[i].fn->name);
	rc = rt_error(m->dev, TLXRT_NOT_FOUND, "no kernel '%s' in the module "
		      "(it has %s)", name, b.s ? b.s : "none");
	buf_free(&b);
	return rc;
}

int
tlxrt_kernel_get_info(tlxrt_kernel *k, tlxrt_kernel_info *out)
{
	if (!k || !out)
		return TLXRT_MISUSE;
	rt_clear(k->mod->dev);
	memset(out, 0, sizeof *out);
	out->name = k->fn->name;
	out->num_params = k->nparams;
	out->warps = k->warps;
	out->total_warps = k->total_warps;
	memcpy(out->cluster, k->cluster, sizeof out->cluster);
	out->smem_bytes = (int)MIN(k->smem, (int64_t)INT32_MAX);
	out->has_grid = k->grid != NULL;
	out->num_consts = k->nconsts;
	return TLXRT_OK;
}

int
tlxrt_kernel_get_param(tlxrt_kernel *k, int i, tlxrt_param_info *out)
{
	RtParam *p;

	if (!k || !out)
		return TLXRT_MISUSE;
	rt_clear(k->mod->dev);
	if (i < 0 || i >= k->nparams)
		return rt_error(k->mod->dev, TLXRT_INVALID_ARG, "parameter %d: "
				"kernel '%s' has %d", i, k->fn->name,
				k->nparams);
	p = &k->params[i];
	memset(out, 0, sizeof *out);
	out->name = p->name;
	out->kind = p->kind;
	out->type = p->type;
	out->rank = p->rank;
	memcpy(out->box, p->box, sizeof out->box);
	out->swizzle = p->swizzle;
	return TLXRT_OK;
}

int
tlxrt_kernel_get_const(tlxrt_kernel *k, int i, tlxrt_const_info *out)
{
	if (!k || !out)
		return TLXRT_MISUSE;
	rt_clear(k->mod->dev);
	if (i < 0 || i >= k->nconsts)
		return rt_error(k->mod->dev, TLXRT_INVALID_ARG, "const %d: kernel "
				"'%s' has %d", i, k->fn->name, k->nconsts);
	*out = k->consts[i];
	return TLXRT_OK;
}

const char *
tlxrt_type_name(int type)
{
	if (type < TLXRT_I1 || type > TLXRT_F64)
		return "?";
	return ty_kind_name((TypeKind)type);
}

int
tlxrt_type_size(int type)
{
	if (type < TLXRT_I1 || type > TLXRT_F64)
		return 0;
	return sim_kind_bytes((TypeKind)type);
}
