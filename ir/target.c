/*
 * target.c: the target table -- which ops need which GPU generation.
 * The front end checks every op against the target before code
 * generation, so that an op the target lacks is a diagnostic at the
 * user's source line, never an LLVM "Cannot select" abort.
 *
 * PTX versions: every target is compiled with PTX ISA 8.6 (LLVM feature
 * +ptx86).  It is the minimum for sm_100a and covers every intrinsic
 * codegen uses on sm_80 and sm_90a (fp8 mma.sync needs 8.4, the relaxed
 * mbarrier forms and TMA into shared::cta 8.6); ptxas 13.0 and the 580
 * driver accept up to PTX 9.0.
 */
#include "ir.h"

const char *
target_name(int sm)
{
	switch (sm) {
	case 80: return "sm_80";
	case 90: return "sm_90a";
	case 100: return "sm_100a";
	default: return "sm_?";
	}
}

int
target_ptx(int sm)
{
	switch (sm) {
	case 80: case 90: case 100: return 86;
	default: return 0;
	}
}

int
target_from_name(const char *s)
{
	if (!strcmp(s, "sm_80"))
		return 80;
	if (!strcmp(s, "sm_90a"))
		return 90;
	if (!strcmp(s, "sm_100a"))
		return 100;
	return 0;
}

static bool
is_fp8(Type *t)
{
	TypeKind k = ty_elem(t)->kind;

	return k == TY_F8E4M3 || k == TY_F8E5M2;
}

int
target_min_sm(Func *f, Op *op)
{
	switch (op->kind) {
	case OP_DOT:
		return is_fp8(ir_type(f, op->opnds[0])) ? 89 : 80;
	case OP_MBAR_ARRIVE:
		return op->nopnds > 1 ? 90 : 80;  /* remote arrive: clusters */
	case OP_MBAR_EXPECT:
	case OP_TMA_LOAD:
	case OP_TMA_STORE:
	case OP_TMA_STORE_WAIT:
	case OP_DOT_ASYNC:
	case OP_DOT_WAIT:
	case OP_TASKS:
	case OP_TASK:
	case OP_CLUSTER_RANK:
	case OP_CLUSTER_SYNC:
	case OP_PIPE_CREATE:
	case OP_PIPE_ACQUIRE:
	case OP_PIPE_COMMIT:
	case OP_PIPE_CONSUME:
	case OP_PIPE_RELEASE:
	case OP_PIPE_BAR:
	case OP_FENCE_ASYNC:
		return 90;
	default:
		return 80;
	}
}

typedef struct Check {
	Func *f;
	Diag *d;
	int sm;
	bool ok;
} Check;

static void
check_op(Op *op, void *ud)
{
	Check *c = ud;
	int need = target_min_sm(c->f, op);

	if (need <= c->sm)
		return;
	c->ok = false;
	diag_error(c->d, range_at(op->loc), "'%s' needs %s or newer; the target "
		   "is %s (choose one with --target=)", op_name(op->kind),
		   need == 89 ? "sm_89" : target_name(need), target_name(c->sm));
}

int64_t
target_smem_limit(int sm)
{
	return sm >= 90 ? 232448 : 166912;  /* 227 KiB; 163 KiB on sm_80 */
}

typedef struct Smem {
	int64_t total, biggest;
	Op *big;
	Func *f;
} Smem;

static void
add_smem(Op *op, void *ud)
{
	Smem *s = ud;
	Type *t;
	int64_t bytes;

	if (op->kind != OP_SMEM_ALLOC)
		return;
	t = ir_type(s->f, op->res[0]);
	bytes = ty_numel(t) * ty_bytes(t->elem);
	s->total += bytes;
	if (bytes > s->biggest) {
		s->biggest = bytes;
		s->big = op;
	}
}

/* Each smem_alloc op is one buffer per program: their sum is a lower
 * bound of what the kernel needs (codegen adds its scratch later). */
static bool
check_smem(Func *f, Diag *d, int sm)
{
	Smem s = { .f = f };

	if (f->kind != FN_KERNEL)
		return true;
	ir_walk(f, add_smem, &s);
	if (s.total <= target_smem_limit(sm))
		return true;
	diag_error(d, range_at(f->loc), "kernel '%s' allocates %lld bytes of "
		   "shared memory; %s has %lld per program", f->name,
		   (long long)s.total, target_name(sm),
		   (long long)target_smem_limit(sm));
	diag_note(d, range_at(s.big->loc), "the largest buffer, %lld bytes, is "
		  "allocated here", (long long)s.biggest);
	return false;
}

bool
target_check_module(Module *m, Diag *d, int sm)
{
	Check c = { .d = d, .sm = sm, .ok = true };
	uint32_t i;

	for (i = 0; i < m->funcs.n; i++) {
		c.f = m->funcs.v[i];
		ir_walk(c.f, check_op, &c);
		c.ok = check_smem(c.f, d, sm) && c.ok;
	}
	return c.ok;
}
