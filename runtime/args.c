/*
 * args.c: launch arguments checked against the kernel's metadata before
 * anything runs, and turned into values of the parameters' own types.
 * Every complaint names the argument: "argument 2 ('y'): expected a
 * pointer to f32, got i32".  Tensors are checked as cuTensorMapEncodeTiled
 * would check them, so a bad descriptor fails the same way on both
 * backends.  The grid, when not given, comes from the kernel's grid
 * function, evaluated by the simulator's interpreter on the arguments.
 */
#include <stdlib.h>
#include <string.h>

#include "rt.h"

static const char *
arg_kind_name(int kind)
{
	static const char *names[] = { "?", "i32", "i64", "u32", "u64", "f32",
				       "f64", "a pointer", "a tensor" };

	return kind >= TLXRT_ARG_I32 && kind <= TLXRT_ARG_TENSOR ? names[kind]
								 : "?";
}

static void
param_want(Buf *b, RtParam *p)
{
	const char *t = p->type ? tlxrt_type_name(p->type) : "a pointer";

	switch (p->kind) {
	case TLXRT_PARAM_SCALAR:
		buf_puts(b, t);
		break;
	case TLXRT_PARAM_POINTER:
		buf_printf(b, "a pointer to %s", t);
		break;
	default:
		buf_printf(b, "a rank-%d tensor of %s", p->rank, t);
		break;
	}
}

static int
arg_error(tlxrt_device *dev, int i, RtParam *p, const char *fmt, ...)
	TLX_PRINTF(4, 5);

static int
arg_error(tlxrt_device *dev, int i, RtParam *p, const char *fmt, ...)
{
	va_list ap;

	dev->err.n = 0;
	buf_printf(&dev->err, "argument %d ('%s'): ", i + 1, p->name);
	va_start(ap, fmt);
	buf_vprintf(&dev->err, fmt, ap);
	va_end(ap);
	return TLXRT_INVALID_ARG;
}

static int
wrong_kind(tlxrt_device *dev, int i, RtParam *p, const tlxrt_arg *a)
{
	Buf want = { 0 };
	int rc;

	param_want(&want, p);
	rc = arg_error(dev, i, p, "expected %s, got %s", want.s,
		       arg_kind_name(a->kind));
	buf_free(&want);
	return rc;
}

static int
check_scalar(tlxrt_device *dev, int i, RtParam *p, const tlxrt_arg *a,
	     RtArg *out)
{
	TypeKind k = (TypeKind)p->type;
	int64_t v;

	out->kind = TLXRT_PARAM_SCALAR;
	out->ty = k;
	switch (k) {
	case TY_I32:
	case TY_I64:
	case TY_U32:
	case TY_U64:
		if (a->kind != (k == TY_I32   ? TLXRT_ARG_I32
				: k == TY_I64 ? TLXRT_ARG_I64
				: k == TY_U32 ? TLXRT_ARG_U32
					      : TLXRT_ARG_U64))
			return wrong_kind(dev, i, p, a);
		v = a->kind == TLXRT_ARG_I32   ? a->v.i32
		    : a->kind == TLXRT_ARG_U32 ? (int64_t)a->v.u32
					       : a->v.i64;
		sim_put_i(k, &out->bits, v);
		return TLXRT_OK;
	case TY_I1: case TY_I8: case TY_I16: case TY_U8: case TY_U16: {
		int bits = k == TY_I1 ? 1 : sim_kind_bytes(k) * 8;
		bool uns = k != TY_I8 && k != TY_I16;
		int64_t lo = uns ? 0 : -(1ll << (bits - 1));
		int64_t hi = uns ? (1ll << bits) - 1 : (1ll << (bits - 1)) - 1;

		if (a->kind != TLXRT_ARG_I32 && a->kind != TLXRT_ARG_U32)
			return wrong_kind(dev, i, p, a);
		v = a->kind == TLXRT_ARG_I32 ? a->v.i32 : (int64_t)a->v.u32;
		if (v < lo || v > hi)
			return arg_error(dev, i, p, "%lld does not fit in %s",
					 (long long)v, tlxrt_type_name(k));
		sim_put_i(k, &out->bits, v);
		return TLXRT_OK;
	}
	case TY_F64:
		if (a->kind != TLXRT_ARG_F64)
			return wrong_kind(dev, i, p, a);
		sim_put_f(k, &out->bits, a->v.f64);
		return TLXRT_OK;
	default:  /* f32 and the narrow floats take an f32 */
		if (a->kind != TLXRT_ARG_F32)
			return wrong_kind(dev, i, p, a);
		sim_put_f(k, &out->bits, a->v.f32);
		return TLXRT_OK;
	}
}

static int
check_pointer(tlxrt_device *dev, int i, RtParam *p, const tlxrt_arg *a,
	      RtArg *out)
{
	int align = p->type ? sim_kind_bytes((TypeKind)p->type) : 8;

	if (a->kind != TLXRT_ARG_PTR)
		return wrong_kind(dev, i, p, a);
	if (!a->v.ptr)
		return arg_error(dev, i, p, "null pointer");
	if (a->v.ptr % (uint64_t)align)
		return arg_error(dev, i, p, "pointer 0x%llx is not aligned to "
				 "%d bytes (%s)", (unsigned long long)a->v.ptr,
				 align, p->type ? tlxrt_type_name(p->type)
						: "a pointer");
	out->kind = TLXRT_PARAM_POINTER;
	out->ty = TY_PTR;
	out->bits = a->v.ptr;
	return TLXRT_OK;
}

/* What makes t no tensor map for parameter p (what
 * cuTensorMapEncodeTiled would refuse), in `why`; false when fine. */
static bool
tensor_problem(RtParam *p, const tlxrt_tensor *t, Buf *why)
{
	int d, es = tlxrt_type_size(p->type);

	if (t->type != p->type) {
		buf_printf(why, "expected a tensor of %s, got a tensor of %s",
			   tlxrt_type_name(p->type), tlxrt_type_name(t->type));
		return true;
	}
	if (t->rank < 1 || t->rank > 5) {
		buf_printf(why, "tensor rank %d is not 1 to 5", t->rank);
		return true;
	}
	if (t->rank != p->rank) {
		buf_printf(why, "expected a rank-%d tensor, got rank %d", p->rank,
			   t->rank);
		return true;
	}
	if (!t->ptr) {
		buf_puts(why, "null tensor base");
		return true;
	}
	if (t->ptr % 16) {
		buf_printf(why, "tensor base 0x%llx is not 16-byte aligned",
			   (unsigned long long)t->ptr);
		return true;
	}
	for (d = 0; d < t->rank; d++)
		if (t->shape[d] < 1 || t->shape[d] > (1ll << 32)) {
			buf_printf(why, "dimension %d has size %lld (must be 1 "
				   "to 2^32)", d, (long long)t->shape[d]);
			return true;
		}
	if (t->strides[t->rank - 1] != 1) {
		buf_printf(why, "the innermost stride is %lld elements (must "
			   "be 1)", (long long)t->strides[t->rank - 1]);
		return true;
	}
	for (d = 0; d < t->rank - 1; d++) {
		int64_t s = t->strides[d];

		if (s < 1 || s > (1ll << 40) / es) {
			buf_printf(why, "the stride of dimension %d is %lld "
				   "elements (must be 1 to 2^40 bytes)", d,
				   (long long)s);
			return true;
		}
		if ((s * es) % 16) {
			buf_printf(why, "the stride of dimension %d is %lld "
				   "bytes, not a multiple of 16", d,
				   (long long)(s * es));
			return true;
		}
	}
	if (p->box[0]) {
		for (d = 0; d < p->rank; d++)
			if (p->hwbox[d] > 256) {
				buf_printf(why, "box dimension %d is %lld (at "
					   "most 256)", d, (long long)p->hwbox[d]);
				return true;
			}
		if ((p->hwbox[p->rank - 1] * es) % 16) {
			buf_printf(why, "the box's inner dimension is %lld bytes, "
				   "not a multiple of 16",
				   (long long)(p->hwbox[p->rank - 1] * es));
			return true;
		}
	}
	return false;
}

static int
check_tensor(tlxrt_device *dev, int i, RtParam *p, const tlxrt_arg *a,
	     RtArg *out)
{
	Buf why = { 0 };
	int rc;

	if (a->kind != TLXRT_ARG_TENSOR)
		return wrong_kind(dev, i, p, a);
	if (tensor_problem(p, &a->v.tensor, &why)) {
		rc = arg_error(dev, i, p, "%s", why.s);
		buf_free(&why);
		return rc;
	}
	out->kind = TLXRT_PARAM_TENSOR;
	out->ty = (TypeKind)p->type;
	out->tensor = a->v.tensor;
	return TLXRT_OK;
}

int64_t
rt_int_value(const RtArg *a)
{
	switch (a->ty) {
	case TY_I8: return (int8_t)a->bits;
	case TY_I16: return (int16_t)a->bits;
	case TY_I32: return (int32_t)a->bits;
	default: return (int64_t)a->bits;
	}
}

/* tma.ok: every derived tensor makes a tensor map and the inner strides
 * the TMA loops take for 1 are (TLXRT_GENERIC=1: never, the generic
 * entry as it runs on arguments nothing is known of). */
static uint64_t
tma_ok(const tlxrt_kernel *k, const RtArg *out)
{
	int i;

	if (rt_generic_forced())
		return 0;
	for (i = 0; i < k->nparams && i < 64; i++)
		if ((k->tma_eq1 >> i & 1) && rt_int_value(&out[i]) != 1)
			return 0;
	return rt_derived_ok(k, out);
}

/* The tensors derived from the host's arguments (a pointer, dims and
 * strides: pipeline-loads' TMA path over plain pointers).  One that makes
 * no tensor map is marked invalid: the launch then runs the generic
 * entry, which does not read it. */
static void
derive_tensors(tlxrt_kernel *k, RtArg *out)
{
	int i, d;

	for (i = k->nparams; i < k->nall; i++) {
		RtParam *p = &k->params[i];
		tlxrt_tensor *t = &out[i].tensor;
		Buf why = { 0 };

		memset(&out[i], 0, sizeof out[i]);
		if (p->derived[0] == RT_WORKSPACE) {  /* tlxrt_launch's */
			out[i].kind = TLXRT_PARAM_POINTER;
			out[i].ty = TY_I32;
			continue;
		}
		if (p->derived[0] == RT_TMA_OK) {  /* below */
			out[i].kind = TLXRT_PARAM_SCALAR;
			out[i].ty = TY_I32;
			continue;
		}
		out[i].kind = TLXRT_PARAM_TENSOR;
		out[i].ty = (TypeKind)p->type;
		t->ptr = out[p->derived[0]].bits;
		t->type = p->type;
		t->rank = p->rank;
		for (d = 0; d < p->rank; d++) {
			t->shape[d] = rt_int_value(&out[p->derived[1 + d]]);
			t->strides[d] = d + 1 < p->rank
				? rt_int_value(&out[p->derived[1 + p->rank + d]]) : 1;
		}
		out[i].invalid = tensor_problem(p, t, &why);
		buf_free(&why);
	}
	rt_tma_ok_update(k, out);
}

bool
rt_stageable(const tlxrt_kernel *k, int i, const RtArg *a,
	     tlxrt_tensor *staged)
{
	RtParam *p = &k->params[i];
	const tlxrt_tensor *t = &a->tensor;
	int64_t es = tlxrt_type_size(p->type), w;
	Buf why = { 0 };
	bool bad;

	if (i < k->nparams || a->kind != TLXRT_PARAM_TENSOR || !a->invalid ||
	    t->rank != 2 || p->rank != 2 || !t->ptr || t->strides[1] != 1 ||
	    t->shape[0] < 1 || t->shape[1] < 1 || t->shape[1] > (1ll << 32) ||
	    t->strides[0] < t->shape[1])
		return false;
	w = t->shape[1] * es;
	*staged = *t;
	staged->ptr = 256;  /* checked as placed: aligned */
	staged->strides[0] = (w + 15) / 16 * 16 / es;
	bad = tensor_problem(p, staged, &why);
	buf_free(&why);
	staged->ptr = 0;
	return !bad;
}

const char *
rt_tma_note(const tlxrt_kernel *k, const RtArg *args, bool fast)
{
	int i;

	for (i = k->nparams; i < k->nall && !fast; i++)
		if (k->params[i].derived[0] == RT_TMA_OK)
			return args[i].bits ? " tma.ok" : " no tma";
	return "";
}

void
rt_tma_ok_update(const tlxrt_kernel *k, RtArg *out)
{
	int i;

	for (i = k->nparams; i < k->nall; i++)
		if (k->params[i].derived[0] == RT_TMA_OK)
			out[i].bits = tma_ok(k, out);
}

void
rt_args_to_sim(tlxrt_kernel *k, const RtArg *args, SimArg *out)
{
	int i, d;

	for (i = 0; i < k->nall; i++) {
		memset(&out[i], 0, sizeof out[i]);
		out[i].bits = args[i].bits;
		if (args[i].kind != TLXRT_PARAM_TENSOR)
			continue;
		out[i].tensor.base = args[i].tensor.ptr;
		out[i].tensor.elem = args[i].ty;
		out[i].tensor.rank = args[i].tensor.rank;
		for (d = 0; d < args[i].tensor.rank; d++) {
			out[i].tensor.shape[d] = args[i].tensor.shape[d];
			out[i].tensor.stride[d] = args[i].tensor.strides[d];
		}
	}
}

static int
eval_grid(tlxrt_kernel *k, const RtArg *args, uint32_t grid[3])
{
	tlxrt_device *dev = k->mod->dev;
	SimArg *sa;
	SimMem mem;
	Buf err = { 0 };
	int rc;

	if (!k->grid)
		return rt_error(dev, TLXRT_INVALID_ARG, "kernel '%s' has no grid "
				"function: give the grid in the launch config",
				k->fn->name);
	if (k->grid->body->nargs != (uint32_t)k->nparams)
		return rt_error(dev, TLXRT_INVALID_ARG, "grid function '%s' does "
				"not take the kernel's parameters",
				k->grid->name);
	if (!getenv("TLXRT_GRID_INTERP") && rt_grid_run(k, args, grid))
		return TLXRT_OK;
	if (!(sa = tlx_calloc((size_t)k->nall + 1, sizeof *sa)))
		return rt_error(dev, TLXRT_NOMEM, "out of memory");
	rt_args_to_sim(k, args, sa);
	sim_mem_init(&mem, 0);
	rc = sim_eval_grid(&mem, k->mod->ir, k->grid, sa, grid, &err);
	sim_mem_fini(&mem);
	free(sa);
	if (rc != SIM_OK) {
		rc = rt_error(dev, rc == SIM_NOMEM ? TLXRT_NOMEM
						   : TLXRT_INVALID_ARG,
			      "grid function '%s': %s", k->grid->name,
			      err.s ? err.s : "failed");
		buf_free(&err);
		return rc;
	}
	buf_free(&err);
	return TLXRT_OK;
}

static int
check_shape(tlxrt_kernel *k, uint32_t grid[3], uint32_t cluster[3],
	    const char *src)
{
	tlxrt_device *dev = k->mod->dev;
	uint32_t d, size = 1;

	for (d = 0; d < 3; d++)
		if (!grid[d])
			return rt_error(dev, TLXRT_INVALID_ARG, "grid (%u, %u, %u)"
					"%s has a zero dimension", grid[0],
					grid[1], grid[2], src);
	if (grid[0] > 0x7fffffffu || grid[1] > 65535 || grid[2] > 65535)
		return rt_error(dev, TLXRT_INVALID_ARG, "grid (%u, %u, %u)%s is "
				"too large (at most 2^31-1 x 65535 x 65535)",
				grid[0], grid[1], grid[2], src);
	for (d = 0; d < 3; d++) {
		if (!cluster[d])
			return rt_error(dev, TLXRT_INVALID_ARG, "cluster (%u, %u, "
					"%u) has a zero dimension", cluster[0],
					cluster[1], cluster[2]);
		size *= cluster[d];
	}
	if (size > (uint32_t)dev->props.max_cluster_size)
		return rt_error(dev, TLXRT_INVALID_ARG, "a cluster of %u CTAs is "
				"more than the device's %d", size,
				dev->props.max_cluster_size);
	for (d = 0; d < 3; d++)
		if (grid[d] % cluster[d])
			return rt_error(dev, TLXRT_INVALID_ARG, "grid (%u, %u, %u)"
					"%s is not a multiple of the cluster "
					"(%u, %u, %u)", grid[0], grid[1],
					grid[2], src, cluster[0], cluster[1],
					cluster[2]);
	if (k->smem > dev->props.max_smem_per_block)
		return rt_error(dev, TLXRT_INVALID_ARG, "kernel '%s' needs %lld "
				"bytes of shared memory, more than the "
				"device's limit of %d", k->fn->name,
				(long long)k->smem, dev->props.max_smem_per_block);
	return TLXRT_OK;
}

/* A kernel over a static schedule strides its programs over the tiles:
 * no more programs than run at once (each SM holds as many as its shared
 * memory and 2048 threads allow, at most 32), in one dimension. */
static void
persistent_grid(tlxrt_kernel *k, uint32_t grid[3], const uint32_t cl[3])
{
	const tlxrt_device_props *p = &k->mod->dev->props;
	uint64_t total = (uint64_t)grid[0] * grid[1] * grid[2], per = 32;
	uint64_t cs = (uint64_t)cl[0] * cl[1] * cl[2], n;
	int threads = 32 * k->total_warps;

	if (k->smem > 0)
		per = MIN(per, (uint64_t)p->max_smem_per_block / (uint64_t)k->smem);
	per = MIN(per, (uint64_t)(2048 / MAX(threads, 32)));
	per = MAX(per, 1);
	/* whole clusters, laid along x: the cluster's shape is kept */
	n = MIN((total + cs - 1) / cs,
		MAX(per * (uint64_t)MAX(p->sm_count, 1) / cs, 1));
	grid[0] = (uint32_t)(n * cl[0]);
	grid[1] = cl[1];
	grid[2] = cl[2];
}

int
rt_args_check(tlxrt_kernel *k, const tlxrt_launch_config *cfg,
	      const tlxrt_arg *args, int nargs, RtArg *out, uint32_t grid[3],
	      uint32_t cluster[3])
{
	tlxrt_device *dev = k->mod->dev;
	const char *src = "";
	int i, rc, d;

	if (nargs != k->nparams)
		return rt_error(dev, TLXRT_INVALID_ARG, "kernel '%s' takes %d "
				"argument%s, got %d", k->fn->name, k->nparams,
				k->nparams == 1 ? "" : "s", nargs);
	if (nargs && !args)
		return rt_error(dev, TLXRT_MISUSE, "no arguments (args is NULL)");
	for (i = 0; i < nargs; i++) {
		RtParam *p = &k->params[i];

		switch (p->kind) {
		case TLXRT_PARAM_SCALAR:
			rc = check_scalar(dev, i, p, &args[i], &out[i]);
			break;
		case TLXRT_PARAM_POINTER:
			rc = check_pointer(dev, i, p, &args[i], &out[i]);
			break;
		case TLXRT_PARAM_TENSOR:
			rc = check_tensor(dev, i, p, &args[i], &out[i]);
			break;
		default:
			rc = arg_error(dev, i, p, "the kernel's parameter type "
				       "cannot be passed from the host");
			break;
		}
		if (rc != TLXRT_OK)
			return rc;
	}
	derive_tensors(k, out);
	for (d = 0; d < 3; d++) {
		grid[d] = cfg ? cfg->grid[d] : 0;
		cluster[d] = cfg ? cfg->cluster[d] : 0;
	}
	if (!cluster[0] && !cluster[1] && !cluster[2])
		for (d = 0; d < 3; d++)
			cluster[d] = (uint32_t)k->cluster[d];
	if (!grid[0] && !grid[1] && !grid[2]) {
		if ((rc = eval_grid(k, out, grid)) != TLXRT_OK)
			return rc;
		src = " from the grid function";
		if (k->persistent && cluster[0] && cluster[1] && cluster[2])
			persistent_grid(k, grid, cluster);
	}
	return check_shape(k, grid, cluster, src);
}
