/*
 * verify_layout.c: the rules of the laid-out stage (docs/il.md 2.1), on
 * top of the tile-level rules of verify.c (which compare types without
 * their layouts):
 *   - every tile has a layout of its shape, over the kernel's warps, with
 *     distinct single-bit bases that give every element a thread (what
 *     code generation can lower);
 *   - ops agree on layouts: an elementwise op, cmp, select, cvt, bitcast
 *     and ptr_add keep their operands' layout; a memory access uses one
 *     layout for pointers, mask, `other`, value and result; a shape op's
 *     operand and result are each other's image (the op moves no data);
 *     a reduction gives the slice of its operand's layout; a dot's
 *     accumulator is in its result's layout; only convert_layout changes
 *     a layout (region arguments and yields are checked by verify.c,
 *     which compares their types whole);
 *   - a shared-memory access's `vec` is no wider than its view's planned
 *     alignment and strides allow (ir_smem_vec);
 *   - once warps are allocated (a task has `first_warp`), each task's
 *     warps, replicas included, lie inside the kernel's and no other
 *     task's, and a register budget (`regs`, 0: none) is on whole
 *     warpgroups.
 * (verify.c checks in both stages that a budget is one setmaxnreg takes
 * and that once shared memory is planned, the kernel has `smem`, every
 * buffer's `offset` keeps it inside and aligned; the simulator checks at
 * launch that buffers live at once do not overlap.)
 */
#include "ir.h"

typedef struct LVer {
	Func *f;
	Diag *d;
	Arena *a;
	Axis *ax;        /* divisibility for vector widths, made on demand */
	int nwarps;      /* of the kernel, or of the task the walk is in */
	int kwarps;      /* of the kernel */
	bool in_task;
	int errors;
} LVer;

static void
lerr(LVer *v, Op *op, const char *fmt, ...) TLX_PRINTF(3, 4);

static void
lerr(LVer *v, Op *op, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	ir_error(v->d, v->f, op, "%s", buf);
	v->errors++;
}

static const Layout *
ly_of(LVer *v, Value x)
{
	return ir_type(v->f, x)->layout;
}

static bool
is_tile(LVer *v, Value x)
{
	return ir_type(v->f, x)->kind == TY_TILE;
}

static void
check_value(LVer *v, Op *op, Value x)
{
	Type *t = ir_type(v->f, x);
	const Layout *l = t->layout;
	const char *why;

	if (t->kind != TY_TILE)
		return;
	if (!l) {
		lerr(v, op, "a tile of the laid-out stage has no layout");
		return;
	}
	if (l->rank != t->rank ||
	    memcmp(l->shape, t->shape, (size_t)t->rank * sizeof *t->shape)) {
		lerr(v, op, "a tile's layout has another shape");
		return;
	}
	if (l->kind == LY_SWIZZLE)
		lerr(v, op, "a tile's layout is a shared buffer's encoding");
	else if ((why = ly_check(l)))
		lerr(v, op, "%s", why);
	else if (ly_nwarps(l) != v->nwarps)
		lerr(v, op, "a layout over %d warps in %s of %d", ly_nwarps(l),
		     v->in_task ? "a task" : "a kernel", v->nwarps);
}

/* Every tile operand and tile result of op has one layout. */
static void
same_layout(LVer *v, Op *op, const char *what)
{
	const Layout *l = NULL;
	uint32_t i;

	for (i = 0; i < op->nopnds + op->nres; i++) {
		Value x = i < op->nopnds ? op->opnds[i] : op->res[i - op->nopnds];

		if (!is_tile(v, x) || !ly_of(v, x))
			continue;
		if (!l)
			l = ly_of(v, x);
		else if (ly_of(v, x) != l) {
			lerr(v, op, "'%s' %s in one layout (convert_layout "
			     "changes layouts)", op_name(op->kind), what);
			return;
		}
	}
}

static void
check_shape_op(LVer *v, Op *op)
{
	LayoutTab *lt = &v->f->mod->ctx->layouts;
	const Layout *a, *r, *d = NULL;
	Type *rt = ir_type(v->f, op->res[0]);
	const Attr *p;

	if (!is_tile(v, op->opnds[0]))
		return;  /* a splat-like broadcast of a scalar */
	a = ly_of(v, op->opnds[0]);
	r = rt->layout;
	if (!a || !r || ly_shape_operand(lt, v->f, op, r) == a)
		return;
	switch (op->kind) {
	case OP_BROADCAST:
		d = ly_broadcast(lt, a, rt->rank, rt->shape);
		break;
	case OP_TRANS:
		p = attr_find(&op->attrs, "perm");
		if (p && p->ints.n == rt->rank)
			d = ly_trans(lt, a, p->ints.v);
		break;
	default:
		d = ly_reshape(lt, a, rt->rank, rt->shape);
		break;
	}
	if (d != r)
		lerr(v, op, "'%s' moves data: its result's layout is not its "
		     "operand's seen through it", op_name(op->kind));
}

/* A vector width no wider than the plan's alignment and the view's
 * strides allow. */
static void
check_vec(LVer *v, Op *op)
{
	Assume none = { 0 };
	int64_t n;
	int most;

	if (!attr_has(&op->attrs, "vec"))
		return;
	n = attr_int(&op->attrs, "vec", 1);
	if (!v->ax)
		v->ax = axis_compute(v->f, v->a, &none);
	most = ir_smem_vec(v->f, op, v->ax);
	if (n < 1 || !is_pow2(n) || n > most)
		lerr(v, op, "'%s' with vectors of %lld elements; its view's "
		     "alignment and strides allow %d", op_name(op->kind),
		     (long long)n, most);
}

static void
check_op(LVer *v, Op *op)
{
	LayoutTab *lt = &v->f->mod->ctx->layouts;
	const Layout *a;
	uint32_t i;

	for (i = 0; i < op->nres; i++)
		check_value(v, op, op->res[i]);
	for (i = 0; i < op->nregions; i++)
		for (uint32_t k = 0; k < op->regions[i]->nargs; k++)
			check_value(v, op, op->regions[i]->args[k]);
	if (op_has(op, F_ELEM)) {
		same_layout(v, op, "operands and result are");
		return;
	}
	switch (op->kind) {
	case OP_CMP: case OP_SELECT: case OP_CVT: case OP_BITCAST:
	case OP_PTR_ADD: case OP_MISALIGN:
		same_layout(v, op, "operands and result are");
		break;
	case OP_CP_ASYNC:
		check_vec(v, op);
		/* fall through */
	case OP_LOAD: case OP_STORE: case OP_ATOMIC: case OP_ATOMIC_CAS:
		same_layout(v, op, "pointers, mask, values and result are");
		break;
	case OP_BROADCAST: case OP_EXPAND_DIMS: case OP_RESHAPE: case OP_TRANS:
		check_shape_op(v, op);
		break;
	case OP_EXTRACT_SLICE:
		if (ly_of(v, op->opnds[0]) && ly_of(v, op->res[0]) &&
		    !ly_extract_fits(ly_of(v, op->opnds[0]), ly_of(v, op->res[0])))
			lerr(v, op, "'extract_slice' moves data: its result's "
			     "registers are not its operand's");
		break;
	case OP_REDUCE:
		a = ly_of(v, op->opnds[0]);
		if (a && is_tile(v, op->res[0]) && ly_of(v, op->res[0]) &&
		    ly_of(v, op->res[0]) != ly_slice(lt, a, (int)attr_int(&op->attrs,
								   "axis", 0)))
			lerr(v, op, "'reduce' result must be in the slice of its "
			     "operand's layout");
		break;
	case OP_DOT:
		if (ly_of(v, op->opnds[2]) != ly_of(v, op->res[0]))
			lerr(v, op, "'dot' accumulator must be in its result's layout");
		break;
	case OP_SMEM_LOAD: case OP_SMEM_STORE:
		check_vec(v, op);
		break;
	default:
		break;
	}
}

/* The tasks of a `tasks` op, once their warps are allocated: each
 * inside the kernel's warps and no warp in two tasks (or two replicas);
 * a register budget (verify.c checks its value) on whole warpgroups. */
static void
check_tasks(LVer *v, Op *tasks)
{
	uint32_t used = 0, mine;
	Op *t;
	int64_t k;

	for (t = tasks->nregions ? tasks->regions[0]->first : NULL; t; t = t->next) {
		int64_t first = attr_int(&t->attrs, "first_warp", -1);
		int64_t n = attr_int(&t->attrs, "warps", 1);
		int64_t reps = attr_int(&t->attrs, "replicas", 1);
		int64_t span = attr_int(&t->attrs, "span", n);
		int64_t regs = attr_int(&t->attrs, "regs", 0);
		int64_t last = first + (reps - 1) * span + n - 1;

		if (t->kind != OP_TASK || first < 0)
			continue;
		if (regs && (first % 4 || (reps > 1 && span % 4)))
			lerr(v, t, "'task' with a register budget starts at warp "
			     "%lld, not at a warpgroup (setmaxnreg sets the "
			     "registers of whole warpgroups)", (long long)first);
		if (last >= v->kwarps) {
			lerr(v, t, "'task' runs on warps %lld to %lld, outside "
			     "the kernel's %d", (long long)first, (long long)last,
			     v->kwarps);
			continue;
		}
		for (k = 0; k < reps; k++) {
			mine = (uint32_t)(((1ull << n) - 1) << (first + k * span));
			if (used & mine)
				lerr(v, t, "'task' shares a warp with another task "
				     "or replica (warps %lld to %lld)",
				     (long long)(first + k * span),
				     (long long)(first + k * span + n - 1));
			used |= mine;
		}
	}
}


static void
walk(LVer *v, Block *b)
{
	Op *op;
	uint32_t i;

	for (op = b->first; op; op = op->next) {
		int outer = v->nwarps;
		bool was = v->in_task;

		check_op(v, op);
		if (v->f->kind == FN_KERNEL && op->kind == OP_TASKS)
			check_tasks(v, op);
		if (op->kind == OP_TASK) {
			v->nwarps = (int)attr_int(&op->attrs, "warps", outer);
			v->in_task = true;
		}
		for (i = 0; i < op->nregions; i++)
			walk(v, op->regions[i]);
		v->nwarps = outer;
		v->in_task = was;
	}
}

bool
ir_verify_layouts(Func *f, Diag *d)
{
	LVer v = { .f = f, .d = d };
	Arena a;

	arena_init(&a, f->mod->ctx->arena->alloc, f->mod->ctx->arena->ud, NULL);
	v.a = &a;
	v.nwarps = v.kwarps = (int)attr_int(&f->attrs, "warps", 4);
	walk(&v, f->body);
	arena_reset(&a);
	return v.errors == 0;
}
