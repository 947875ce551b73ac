/*
 * grid.c: a kernel's grid function evaluated on the host at launch time
 * without the simulator.
 *
 * Grid functions are a few lines of integer arithmetic on the kernel's
 * scalar parameters (cdiv(M, BM) * cdiv(N, BN), max(T, 1), ...).  At
 * module load rt_grid_compile turns one whose body is straight-line code
 * over integer scalars -- constants, + - * / %, min, max, bitwise ops,
 * shifts, compares, select, integer conversions -- into a flat program;
 * rt_grid_run runs it on a launch's arguments with the IR's arithmetic
 * (ir/numeric.c, as the simulator's).  Anything else (another op, a
 * float, a region), and at run time a division by zero, leave the
 * launch to the simulator's interpreter (sim_eval_grid), which evaluates
 * every grid function and reports such errors.
 */
#include <stdlib.h>
#include <string.h>

#include "rt.h"

enum { MAX_GRID_VALS = 256 };

struct RtGridProg {
	uint32_t nins;
	struct RtGridIns {
		uint8_t kind;    /* OpKind */
		uint8_t ty;      /* the result's TypeKind */
		uint8_t sty;     /* cmp, cvt: the operand's TypeKind */
		const char *pred;  /* cmp */
		uint16_t dst, opnd[3];
		int64_t imm;
	} *ins;
	uint16_t res[3];
	uint16_t param[64];  /* block argument i's value slot */
	uint8_t pty[64];
	uint32_t nparams;
};

static bool
int_scalar(Type *t, TypeKind *k)
{
	if (!t || !ty_is_int_kind(t->kind))
		return false;
	*k = t->kind;
	return true;
}

bool
rt_grid_compile(tlxrt_kernel *k, Arena *a)
{
	Func *g = k->grid;
	RtGridProg *p;
	Op *op;
	uint32_t i, n = 0;
	TypeKind tk;

	k->gprog = NULL;
	if (!g || g->vals.n > MAX_GRID_VALS || g->body->nargs > 64 ||
	    g->body->nargs != (uint32_t)k->nparams)
		return false;
	for (op = g->body->first; op; op = op->next)
		n++;
	p = arena_alloc(a, sizeof *p);
	memset(p, 0, sizeof *p);
	p->ins = arena_alloc(a, (n + 1) * sizeof *p->ins);
	p->nparams = g->body->nargs;
	for (i = 0; i < g->body->nargs; i++) {
		if (!int_scalar(ir_type(g, g->body->args[i]), &tk))
			tk = TY_VOID;  /* not an integer: usable only if unused */
		p->param[i] = (uint16_t)g->body->args[i];
		p->pty[i] = (uint8_t)tk;
	}
	for (op = g->body->first; op; op = op->next) {
		struct RtGridIns *in = &p->ins[p->nins];

		if (op->nregions)
			return false;
		memset(in, 0, sizeof *in);
		in->kind = (uint8_t)op->kind;
		if (op->kind == OP_RETURN) {
			if (op->nopnds != 3 || op->next)
				return false;
			for (i = 0; i < 3; i++) {
				if (!int_scalar(ir_type(g, op->opnds[i]), &tk))
					return false;
				p->res[i] = (uint16_t)op->opnds[i];
			}
			k->gprog = p;
			return true;
		}
		if (op->nres != 1 || !int_scalar(ir_type(g, op->res[0]), &tk))
			return false;
		in->ty = (uint8_t)tk;
		in->dst = (uint16_t)op->res[0];
		for (i = 0; i < op->nopnds; i++) {
			TypeKind ok;

			if (i >= 3 || !int_scalar(ir_type(g, op->opnds[i]), &ok))
				return false;
			in->opnd[i] = (uint16_t)op->opnds[i];
		}
		switch (op->kind) {
		case OP_CONST: {
			const Attr *v = attr_find(&op->attrs, "value");

			if (!v || v->kind != ATTR_INT)
				return false;
			in->imm = v->i;
			break;
		}
		case OP_CMP:
			if (!(in->pred = attr_str(&op->attrs, "pred")))
				return false;
			in->sty = (uint8_t)ir_type(g, op->opnds[0])->kind;
			break;
		case OP_CVT:
			in->sty = (uint8_t)ir_type(g, op->opnds[0])->kind;
			break;
		case OP_ADD: case OP_SUB: case OP_MUL: case OP_DIV: case OP_REM:
		case OP_MIN: case OP_MAX: case OP_AND: case OP_OR: case OP_XOR:
		case OP_SHL: case OP_SHR: case OP_NEG: case OP_NOT: case OP_SELECT:
			break;
		default:
			return false;
		}
		p->nins++;
	}
	return false;  /* no return */
}

int
rt_grid_run(const tlxrt_kernel *k, const RtArg *args, uint32_t grid[3])
{
	const RtGridProg *p = k->gprog;
	Num v[MAX_GRID_VALS];
	uint32_t i;

	if (!p)
		return 0;
	for (i = 0; i < p->nparams; i++)
		if (p->pty[i] != TY_VOID)
			v[p->param[i]].i = ir_int_wrap((TypeKind)p->pty[i],
						       (uint64_t)rt_int_value(&args[i]));
	for (i = 0; i < p->nins; i++) {
		const struct RtGridIns *in = &p->ins[i];
		TypeKind t = (TypeKind)in->ty, st = (TypeKind)in->sty;
		Num *r = &v[in->dst];
		int c;

		switch ((OpKind)in->kind) {
		case OP_CONST:
			r->i = ir_int_wrap(t, (uint64_t)in->imm);
			break;
		case OP_SELECT:
			*r = v[in->opnd[0]].i ? v[in->opnd[1]] : v[in->opnd[2]];
			break;
		case OP_CVT:
			*r = ir_num_cvt(t, st, v[in->opnd[0]]);
			break;
		case OP_CMP:
			if ((c = ir_num_cmp(in->pred, st, v[in->opnd[0]], v[in->opnd[1]])) < 0)
				return 0;
			r->i = c;
			break;
		case OP_NEG: case OP_NOT:
			if (!ir_num_unary((OpKind)in->kind, t, v[in->opnd[0]], r))
				return 0;
			break;
		default:  /* division by zero: the interpreter's to report */
			if (!ir_num_binary((OpKind)in->kind, t, v[in->opnd[0]], v[in->opnd[1]], r))
				return 0;
			break;
		}
	}
	for (i = 0; i < 3; i++)
		grid[i] = (uint32_t)v[p->res[i]].i;
	return 1;
}
