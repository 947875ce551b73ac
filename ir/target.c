/*
 * target.c: the target table -- one Target per GPU (QBE's Target), the
 * features each has (target.def) and the check that every op of a
 * module has what it needs (ops.def's FEATURE column).  The front end
 * runs the check before code generation, so that an op the target lacks
 * is a diagnostic at the user's source line, never an LLVM "Cannot
 * select" abort; codegen/check.c asks the same question of IR read from
 * text.  Features do not only accumulate: sm_100a has no wgmma.
 *
 * PTX versions: every target is compiled with PTX ISA 8.6 (LLVM feature
 * +ptx86).  It is the minimum for sm_100a and covers every intrinsic
 * codegen uses on sm_80 and sm_90a (fp8 mma.sync needs 8.4, the relaxed
 * mbarrier forms and TMA into shared::cta 8.6); ptxas 13.0 and the 580
 * driver accept up to PTX 9.0.
 *
 * Shared memory: the opt-in maximum per program (227 KiB on sm_90a and
 * sm_100a, 163 KiB on sm_80).  smem_pipeline is a tuning number, not a
 * hardware fact: how much of it codegen/pipeline.c's software pipelining
 * may take for a loop's operands when the kernel does not ask.
 */
#include <ctype.h>

#include "ir.h"

#define TF(x) (1ull << TF_##x)

/* What sm_90a and sm_100a share. */
#define HOPPER_AND_LATER                                                       \
	(TF(MMA) | TF(MMA_I8) | TF(MMA_FP8) | TF(TMA) | TF(TMA_MULTICAST) |    \
	 TF(CLUSTER) | TF(MBAR_TRY_WAIT) | TF(MBAR_ARRIVE_COUNT) |             \
	 TF(MBAR_EXPECT_TX) | TF(FENCE_MBAR_INIT) | TF(FENCE_PROXY_ASYNC) |    \
	 TF(SETMAXNREG) | TF(STMATRIX) | TF(CVT_FP8) | TF(SWIZZLE_32B) |       \
	 TF(SWIZZLE_64B) | TF(SWIZZLE_128B))

static const Target sm_80 = {
	.sm = 80, .name = "sm_80", .ptx = 86,
	.smem = 166912, .smem_pipeline = 96 * 1024, .params = 32764,
	.features = TF(MMA) | TF(MMA_I8),
};

static const Target sm_90a = {
	.sm = 90, .name = "sm_90a", .ptx = 86,
	.smem = 232448, .smem_pipeline = 160 * 1024, .params = 32764,
	.features = HOPPER_AND_LATER | TF(WGMMA),
};

/* ptxas rejects every wgmma instruction on sm_100a. */
static const Target sm_100a = {
	.sm = 100, .name = "sm_100a", .ptx = 86,
	.smem = 232448, .smem_pipeline = 160 * 1024, .params = 32764,
	.features = HOPPER_AND_LATER | TF(TCGEN05) | TF(CLC),
};

static const Target *const targets[] = { &sm_80, &sm_90a, &sm_100a };

static const struct {
	const char *name, *what, *note;
} features[TF_COUNT] = {
	[TF_NONE] = { "nothing", "", NULL },
#define FEATURE(id, text, w, n) [TF_##id] = { text, w, n },
#include "target.def"
#undef FEATURE
};

const Target *
target_get(int sm)
{
	size_t i;

	for (i = 0; i < countof(targets); i++)
		if (targets[i]->sm == sm)
			return targets[i];
	return NULL;
}

const Target *
target_lookup(const char *name)
{
	size_t i;

	for (i = 0; i < countof(targets); i++)
		if (!strcmp(targets[i]->name, name))
			return targets[i];
	return NULL;
}

const char *
target_feature_name(TargetFeature f)
{
	return features[f].name;
}

static bool
is_fp8(Type *t)
{
	TypeKind k = ty_elem(t)->kind;

	return k == TY_F8E4M3 || k == TY_F8E5M2;
}

/* The row's feature, refined by the operands; *how says what about the
 * op needs it ("" when the op itself does). */
static TargetFeature
refine(Func *f, Op *op, const char **how)
{
	Type *d;

	*how = "";
	switch (op->kind) {
	case OP_DOT:
		if (op->nopnds > 0 && is_fp8(ir_type(f, op->opnds[0]))) {
			*how = " with fp8 operands";
			return TF_MMA_FP8;
		}
		break;
	case OP_MBAR_ARRIVE:
		if (op->nopnds > 1) {
			*how = " on another program's barrier";
			return TF_CLUSTER;
		}
		break;
	case OP_TMA_LOAD:
		d = op->nopnds > 0 ? ir_type(f, op->opnds[0]) : NULL;
		if (d && d->kind == TY_TMA && op->nopnds == 4u + d->rank) {
			*how = " with a multicast mask";
			return TF_TMA_MULTICAST;
		}
		break;
	default:
		break;
	}
	return op_info[op->kind].feature;
}

TargetFeature
target_op_feature(Func *f, Op *op)
{
	const char *how;

	return refine(f, op, &how);
}

/* "use --target=sm_90a or --target=sm_100a"; the note when t is newer
 * than every target with the feature (it was dropped). */
static void
advice(Buf *b, const Target *t, TargetFeature need)
{
	size_t i, n = 0;
	int newest = 0;

	for (i = 0; i < countof(targets); i++)
		if (target_has(targets[i], need) && targets[i]->sm > newest)
			newest = targets[i]->sm;
	if (features[need].note && t->sm > newest)
		buf_printf(b, " (%s)", features[need].note);
	for (i = 0; i < countof(targets); i++) {
		if (!target_has(targets[i], need))
			continue;
		buf_printf(b, "%s--target=%s", n++ ? " or " : "; use ",
			   targets[i]->name);
	}
	if (!n)
		buf_puts(b, "; no target has it yet");
}

/* What the source wrote where op comes from: the name (with its dots,
 * `p.acquire`) at the op's location -- `pipe`, `tasks`, `arrive` for the
 * byte count of `arrive(b, bytes: n)` -- else the op's own name (IR read
 * from text, whose locations are its lines). */
static const char *
source_word(const Source *src, Op *op, Arena *a)
{
	const char *line, *w;
	size_t len, n = 0;

	if (!src || op->loc.line <= 0 || op->loc.col <= 0 ||
	    !(line = src_line(src, op->loc.line, &len)) ||
	    (size_t)op->loc.col > len)
		return op_name(op->kind);
	w = line + op->loc.col - 1;
	while (n < len - (size_t)(w - line) &&
	       (isalnum((unsigned char)w[n]) || w[n] == '_' || w[n] == '.'))
		n++;
	if (!n || !(isalpha((unsigned char)w[0]) || w[0] == '_'))
		return op_name(op->kind);
	return arena_strndup(a, w, n);
}

const char *
target_lacks(const Target *t, Func *f, Op *op, const Source *src, Arena *a)
{
	const char *how, *msg;
	TargetFeature need = refine(f, op, &how);
	Buf b = { 0 };

	if (target_has(t, need))
		return NULL;
	buf_printf(&b, "'%s'%s needs %s (%s), which %s does not have",
		   source_word(src, op, a), how, features[need].name,
		   features[need].what, t->name);
	advice(&b, t, need);
	msg = arena_strdup(a, b.s);
	buf_free(&b);
	return msg;
}

typedef struct Check {
	Func *f;
	Diag *d;
	const Target *t;
	bool ok;
	uint64_t reported;  /* the features missed so far in f */
} Check;

/* One error per missing feature and function, at its first use: the
 * constructs after it (a pipe's acquire and commit, each task, each
 * replica) need the same thing, which the one error already says. */
static void
check_op(Op *op, void *ud)
{
	Check *c = ud;
	TargetFeature need = target_op_feature(c->f, op);
	const char *why;

	if ((c->reported >> need) & 1 ||
	    !(why = target_lacks(c->t, c->f, op, c->d->src, c->d->arena)))
		return;
	c->ok = false;
	c->reported |= 1ull << need;
	ir_error(c->d, c->f, op, "%s", why);
}

/* The bytes of shared buffers live at once, at the worst point of the
 * kernel (the planner's intervals): a lower bound of every placement,
 * and so of what the kernel needs (codegen adds its scratch later). */
static bool
check_smem(Func *f, Diag *d, const Target *t, Arena *a)
{
	SmemPlan p;
	int64_t peak = 0, biggest = 0, sum;
	Op *big = NULL;
	size_t i, j;

	if (f->kind != FN_KERNEL)
		return true;
	ir_smem_plan(t, f, &p, a);
	for (i = 0; i < p.e.n; i++) {
		SmemEntry *e = &p.e.v[i];

		if (e->op->kind != OP_SMEM_ALLOC)
			continue;
		sum = 0;
		for (j = 0; j < p.e.n; j++) {
			SmemEntry *o = &p.e.v[j];

			if (o->op->kind == OP_SMEM_ALLOC &&
			    o->first <= e->first && e->first <= o->last)
				sum += o->size;
		}
		peak = MAX(peak, sum);
		if (e->size > biggest) {
			biggest = e->size;
			big = e->op;
		}
	}
	if (peak <= t->smem)
		return true;
	diag_error(d, range_at(f->loc), "kernel '%s' needs %lld bytes of "
		   "shared memory for buffers live at once; %s has %lld per "
		   "program", f->name, (long long)peak, t->name,
		   (long long)t->smem);
	diag_note(d, range_at(big->loc), "the largest buffer, %lld bytes, is "
		  "allocated here", (long long)biggest);
	return false;
}

int64_t
target_param_bytes(Func *f)
{
	int64_t off = 0, size, align;
	uint32_t i;

	for (i = 0; i < f->body->nargs; i++) {
		Type *t = ir_type(f, f->body->args[i]);

		if (t->kind == TY_TMA) {
			size = 128;
			align = 64;
		} else {
			size = align = t->kind == TY_I1 ? 1 : ty_bytes(t);
		}
		off = (off + align - 1) / align * align + size;
	}
	return off;
}

bool
target_check_params(Func *f, Diag *d, const Target *t)
{
	int64_t n;

	if (f->kind != FN_KERNEL || (n = target_param_bytes(f)) <= t->params)
		return true;
	diag_error(d, range_at(f->loc), "kernel '%s' takes %lld bytes of "
		   "parameters; %s passes at most %lld: pass large groups of "
		   "values through a pointer to memory", f->name, (long long)n,
		   t->name, (long long)t->params);
	return false;
}

bool
target_check_module(Module *m, Diag *d, const Target *t)
{
	Check c = { .d = d, .t = t, .ok = true };
	uint32_t i;

	for (i = 0; i < m->funcs.n; i++) {
		c.f = m->funcs.v[i];
		c.reported = 0;
		ir_walk(c.f, check_op, &c);
		c.ok = check_smem(c.f, d, t, d->arena) && c.ok;
		c.ok = target_check_params(c.f, d, t) && c.ok;
	}
	return c.ok;
}
