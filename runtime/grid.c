/*
 * grid.c: a kernel's grid function evaluated on the host at launch time
 * without the simulator.
 *
 * Grid functions are a few lines of integer arithmetic on the kernel's
 * scalar parameters (cdiv(M, BM) * cdiv(N, BN), max(T, 1), ...).  At
 * module load rt_grid_compile turns one whose body is straight-line code
 * over integer scalars -- constants, + - * / %, min, max, bitwise ops,
 * shifts, compares, select, integer conversions -- into a flat program;
 * rt_grid_run runs it on a launch's arguments with the IR's semantics
 * (each result wrapped to its type's width).  Anything else (another op,
 * a float, a region), and at run time a division by zero or a shift past
 * the width, leaves the launch to the simulator's interpreter
 * (sim_eval_grid), which evaluates every grid function and reports such
 * errors.
 */
#include <stdlib.h>
#include <string.h>

#include "rt.h"

enum { MAX_GRID_VALS = 256 };

struct RtGridProg {
	uint32_t nvals;
	uint32_t nins;
	struct RtGridIns {
		uint8_t kind;    /* OpKind */
		uint8_t pred;    /* cmp: 0 eq 1 ne 2 lt 3 le 4 gt 5 ge */
		uint8_t ty;      /* the result's TypeKind */
		uint8_t sty;     /* cmp, cvt: the operands' TypeKind */
		uint16_t dst, a, b, c;
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

static int
pred_of(const char *p)
{
	static const char *const names[] = { "eq", "ne", "lt", "le", "gt", "ge" };
	int i;

	for (i = 0; p && i < 6; i++)
		if (!strcmp(p, names[i]))
			return i;
	return -1;
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
	p->nvals = g->vals.n;
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

			if (!int_scalar(ir_type(g, op->opnds[i]), &ok))
				return false;
			in->sty = (uint8_t)ok;
			(&in->a)[i] = (uint16_t)op->opnds[i];
		}
		switch (op->kind) {
		case OP_CONST: {
			const Attr *v = attr_find(&op->attrs, "value");

			if (!v || v->kind != ATTR_INT)
				return false;
			in->imm = v->i;
			break;
		}
		case OP_CMP: {
			int pr = pred_of(attr_str(&op->attrs, "pred"));

			if (pr < 0)
				return false;
			in->pred = (uint8_t)pr;
			in->sty = (uint8_t)ty_elem(ir_type(g, op->opnds[0]))->kind;
			break;
		}
		case OP_ADD: case OP_SUB: case OP_MUL: case OP_DIV: case OP_REM:
		case OP_MIN: case OP_MAX: case OP_AND: case OP_OR: case OP_XOR:
		case OP_SHL: case OP_SHR: case OP_NEG: case OP_NOT: case OP_SELECT:
		case OP_CVT:
			break;
		default:
			return false;
		}
		p->nins++;
	}
	return false;  /* no return */
}

/* v wrapped to the width of integer type k (i1: 0 or 1). */
static int64_t
wrap(TypeKind k, int64_t v)
{
	switch (k) {
	case TY_I1: return v & 1;
	case TY_I8: return (int8_t)v;
	case TY_U8: return (uint8_t)v;
	case TY_I16: return (int16_t)v;
	case TY_U16: return (uint16_t)v;
	case TY_I32: return (int32_t)v;
	case TY_U32: return (uint32_t)v;
	default: return v;
	}
}

static int
bits_of(TypeKind k)
{
	switch (k) {
	case TY_I1: return 1;
	case TY_I8: case TY_U8: return 8;
	case TY_I16: case TY_U16: return 16;
	case TY_I32: case TY_U32: return 32;
	default: return 64;
	}
}

int
rt_grid_run(const tlxrt_kernel *k, const RtArg *args, uint32_t grid[3])
{
	const RtGridProg *p = k->gprog;
	int64_t v[MAX_GRID_VALS];
	uint32_t i;

	if (!p)
		return 0;
	for (i = 0; i < p->nparams; i++)
		if (p->pty[i] != TY_VOID)
			v[p->param[i]] = wrap((TypeKind)p->pty[i], rt_int_value(&args[i]));
	for (i = 0; i < p->nins; i++) {
		const struct RtGridIns *in = &p->ins[i];
		int64_t a = v[in->a], b = in->b ? v[in->b] : 0, r;
		bool u = ty_is_unsigned_kind((TypeKind)in->sty);
		uint64_t ua = (uint64_t)a, ub = (uint64_t)b;

		switch ((OpKind)in->kind) {
		case OP_CONST: r = in->imm; break;
		case OP_ADD: r = (int64_t)(ua + ub); break;
		case OP_SUB: r = (int64_t)(ua - ub); break;
		case OP_MUL: r = (int64_t)(ua * ub); break;
		case OP_DIV: case OP_REM:  /* truncating; sign of the dividend */
			if (b == 0 || (!u && b == -1))
				return 0;  /* the interpreter's to judge */
			if (u)
				r = (int64_t)(in->kind == OP_DIV ? ua / ub : ua % ub);
			else
				r = in->kind == OP_DIV ? a / b : a % b;
			break;
		case OP_MIN: r = u ? (int64_t)(ua < ub ? ua : ub) : (a < b ? a : b); break;
		case OP_MAX: r = u ? (int64_t)(ua > ub ? ua : ub) : (a > b ? a : b); break;
		case OP_AND: r = a & b; break;
		case OP_OR: r = a | b; break;
		case OP_XOR: r = a ^ b; break;
		case OP_SHL: case OP_SHR:
			if (b < 0 || b >= bits_of((TypeKind)in->ty))
				return 0;
			r = in->kind == OP_SHL ? (int64_t)(ua << b)
				: u ? (int64_t)(ua >> b) : a >> b;
			break;
		case OP_NEG: r = (int64_t)(0 - ua); break;
		case OP_NOT: r = ~a; break;
		case OP_SELECT: r = (a & 1) ? b : v[in->c]; break;
		case OP_CVT: r = a; break;  /* wrapped to the result below */
		case OP_CMP:
			switch (in->pred) {
			case 0: r = a == b; break;
			case 1: r = a != b; break;
			case 2: r = u ? ua < ub : a < b; break;
			case 3: r = u ? ua <= ub : a <= b; break;
			case 4: r = u ? ua > ub : a > b; break;
			default: r = u ? ua >= ub : a >= b; break;
			}
			break;
		default:
			return 0;
		}
		v[in->dst] = wrap((TypeKind)in->ty, r);
	}
	for (i = 0; i < 3; i++)
		grid[i] = (uint32_t)v[p->res[i]];
	return 1;
}
