/*
 * compare.c: the last step of an oracle, two runs' outputs compared --
 *
 *   fz_compare       every output bit for bit (two compilations on one
 *                    machine: the simulator is exact, so -O0 and -O3 agree
 *                    to the bit);
 *   fz_num_classes   for two machines that round differently (the GPU and
 *                    the simulator), which outputs must still agree to the
 *                    bit, which within a tolerance and which not at all,
 *                    from the IR the outputs are computed by;
 *   fz_compare_num   each output by its class.
 *
 * The classes come from a forward analysis of the kernel's IR (the IR an
 * image embeds, which the simulator runs), iterated to a fixed point over
 * loops: each value is BITS, CLOSE or LOOSE.  The sources of CLOSE are
 * the ops whose results docs/language.md lets the GPU compute within some
 * ulps of the simulator's (exp exp2 log log2 rsqrt sin cos tanh erf
 * sigmoid: codegen/math.c's bounds); sin and cos of a value that is not
 * BITS are LOOSE, as their error grows with the argument, and so are log
 * and log2 of one, whose relative error near 1 has no bound, and the
 * difference of such a value and its rounding to a narrower float
 * (round_trip).  With `approx`
 * (the hardware's approximations) exp, exp2, sqrt and rsqrt are CLOSE,
 * log, log2, tanh, sin and cos LOOSE (absolute errors, tanh's 2^-11).  REORDERED is
 * CLOSE whose sums may run in another order: float sum and prod
 * reductions (the GPU adds in its layout's order: registers, lanes,
 * warps; the simulator in index order), dots of f16, bf16 and fp8
 * (tensor cores, whose adder is not IEEE and whose products do not
 * overflow f32) and float atomic_adds to one address: within the
 * tolerance too, and gen_gpu asks the simulator for second opinions
 * where they differ (fz_forgive_reordered).  Everything else is exact on
 * both: + - * / correctly rounded (f16 and bf16 through f32, exact for
 * these), fma rounded once (f16 and bf16 by their own fma), sqrt,
 * conversions, min/max, integer ops, f32 and i8 dots (codegen/mma.c: f32
 * by fmas in k order, as the simulator adds; no tf32), atomics on
 * distinct addresses.  A continuous op keeps CLOSE; a discontinuous one
 * (compare, float to integer conversion, floor, ceil, argmax/argmin,
 * bitcast, rem) makes LOOSE of it, and so does a CLOSE value used as an
 * address, a mask, a condition or a trip count (then everything under
 * the branch or loop is LOOSE).  `x == x` and `x != x` (the generator's
 * NaN test) of a BITS or CLOSE x stay BITS: the machines agree on which
 * results are NaN.  Of a REORDERED x they are LOOSE: one order may end at
 * a NaN (+inf + -inf) where another ends at an infinity (the tensor cores
 * add a dot's products without overflowing between them).
 * Memory: a pointer is followed back to its parameter (or shared
 * buffer); a load gives the class of everything stored there, an
 * unknown pointer is every buffer.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"
#include "ir/ir.h"

_Static_assert(TLXRT_I1 == (int)TY_I1 && TLXRT_U8 == (int)TY_U8 &&
	       TLXRT_F8E4M3 == (int)TY_F8E4M3 && TLXRT_F64 == (int)TY_F64,
	       "TLXRT_* element types are TypeKinds");

const char *const fz_num_names[] = { "bits", "close", "reordered", "loose" };

/* ---- elements ------------------------------------------------------------- */

static void
hex(char *o, size_t n, const unsigned char *p, int es)
{
	int i;

	snprintf(o, n, "0x");
	for (i = es - 1; i >= 0; i--)
		snprintf(o + 2 + (es - 1 - i) * 2, n - 2 - (size_t)(es - 1 - i) * 2,
			 "%02x", p[i]);
}

static uint64_t
bits_of(int t, const unsigned char *p)
{
	uint64_t v = 0;

	memcpy(&v, p, (size_t)tlxrt_type_size(t));  /* little endian */
	return v;
}

/* Whether the element at p of type t is a NaN. */
static bool
is_nan(int t, const unsigned char *p)
{
	uint64_t v = bits_of(t, p);

	switch (t) {
	case TLXRT_F8E4M3: return (v & 0x7f) == 0x7f;
	case TLXRT_F8E5M2: return (v & 0x7f) > 0x7c;
	case TLXRT_F16: return (v & 0x7fff) > 0x7c00;
	case TLXRT_BF16: return (v & 0x7fff) > 0x7f80;
	case TLXRT_F32: return (v & 0x7fffffff) > 0x7f800000;
	case TLXRT_F64: return (v & ~(1ull << 63)) > 0x7ff0000000000000ull;
	default: return false;
	}
}

static bool
is_float_type(int t)
{
	return t >= TLXRT_F8E4M3 && t <= TLXRT_F64;
}

/* The bits of a float as an integer in the floats' order: consecutive
 * values are consecutive integers, -0 and +0 both 0. */
static int64_t
ordered(int t, uint64_t v)
{
	int bits = tlxrt_type_size(t) * 8;
	uint64_t sign = 1ull << (bits - 1);

	return v & sign ? -(int64_t)(v & (sign - 1)) : (int64_t)v;
}

/* FZ_NUM_CLOSE: within `ulps` or `atol`.  Outputs are rounded to their
 * own type, so a tolerance in the type's ulps follows its precision; the
 * absolute one forgives cancellation near zero.  f32 (and f64, whose
 * values come from f32 math or from sums in another order) allow 2^-11
 * relative; the narrow types a few of their own ulps, as the last
 * rounding to them may go either way. */
FzTol
fz_tolerance(int type)
{
	switch (type) {
	case TLXRT_F8E4M3:
	case TLXRT_F8E5M2: return (FzTol){ 2, 1.0 / 64 };
	case TLXRT_F16: return (FzTol){ 8, 1.0 / 4096 };
	case TLXRT_BF16: return (FzTol){ 4, 1.0 / 1024 };
	case TLXRT_F32: return (FzTol){ 1 << 12, 1.0 / 65536 };
	case TLXRT_F64: return (FzTol){ 1ll << 41, 1.0 / 65536 };
	default: return (FzTol){ 0, 0 };
	}
}

static double
value_of(int t, uint64_t v)
{
	if (is_float_type(t))
		return ir_float_from_bits((TypeKind)t, v);
	if (t >= TLXRT_U8 && t <= TLXRT_U64)
		return (double)v;
	switch (tlxrt_type_size(t)) {
	case 1: return t == TLXRT_I1 ? (double)(v & 1) : (double)(int8_t)v;
	case 2: return (double)(int16_t)v;
	case 4: return (double)(int32_t)v;
	default: return (double)(int64_t)v;
	}
}

/* Whether a and b (not equal bit for bit, not both NaN) are within the
 * tolerance of type t.  Two values that are both infinities or NaNs
 * agree: a sum that overflows in one order (the simulator's, in index
 * order) overflows in another one too, but may end at the other infinity
 * or at a NaN (+inf + -inf) -- docs/language.md, "Expressions". */
static bool
close_enough(int t, const unsigned char *pa, const unsigned char *pb)
{
	FzTol tol = fz_tolerance(t);
	uint64_t va = bits_of(t, pa), vb = bits_of(t, pb);
	int64_t oa, ob;
	double da, db;

	if (!is_float_type(t))
		return false;
	da = value_of(t, va);
	db = value_of(t, vb);
	if (!isfinite(da) && !isfinite(db))
		return true;
	if (is_nan(t, pa) || is_nan(t, pb))
		return false;
	oa = ordered(t, va);
	ob = ordered(t, vb);
	/* differences of 2^62 ulps would overflow: far apart anyway */
	if ((oa < 0) == (ob < 0) || (llabs(oa) < (1ll << 61) && llabs(ob) < (1ll << 61)))
		if ((oa > ob ? oa - ob : ob - oa) <= tol.ulps)
			return true;
	return isfinite(da) && isfinite(db) && fabs(da - db) <= tol.atol;
}

/* ---- comparison ------------------------------------------------------------- */

bool
fz_compare_num(const FzMeta *m, const FzData *a, const FzData *b,
	       const FzNum *cls, const char *what, bool nan_equal,
	       FzResult *r)
{
	char msg[1536];
	size_t off = 0;
	int i, bad = 0, first_arg = -1;
	bool only_nans = true;

	msg[0] = 0;
	for (i = 0; i < m->nargs; i++) {
		const FzArg *x = &m->args[i];
		FzNum c = cls ? cls[i] : FZ_NUM_BITS;
		int es = tlxrt_type_size(x->type);
		size_t j, nbad = 0, first = 0;

		if (x->role != FZ_OUT && x->role != FZ_INOUT)
			continue;
		if (c == FZ_NUM_LOOSE || !a->buf[i] || !b->buf[i] ||
		    !memcmp(a->buf[i], b->buf[i], a->bytes[i]))
			continue;
		for (j = 0; j < x->n; j++) {
			const unsigned char *pa = a->buf[i] + j * (size_t)es;
			const unsigned char *pb = b->buf[i] + j * (size_t)es;
			bool nans;

			if (!memcmp(pa, pb, (size_t)es))
				continue;
			nans = is_nan(x->type, pa) && is_nan(x->type, pb);
			if (nans && nan_equal)
				continue;
			if (!nans && (c == FZ_NUM_CLOSE || c == FZ_NUM_REORD) &&
			    close_enough(x->type, pa, pb))
				continue;
			only_nans &= nans;
			if (!nbad++)
				first = j;
		}
		if (!nbad)
			continue;
		if (!bad++)
			first_arg = i;
		if (off < sizeof msg - 300) {
			const unsigned char *pa = a->buf[i] + first * (size_t)es;
			const unsigned char *pb = b->buf[i] + first * (size_t)es;
			char ha[40], hb[40];

			hex(ha, sizeof ha, pa, es);
			hex(hb, sizeof hb, pb, es);
			off += (size_t)snprintf(msg + off, sizeof msg - off,
				"%s'%s' (%s, %s, %zu elements): %zu differ, the "
				"first at %zu: %s (%.9g) vs %s (%.9g)",
				off ? "; " : "", x->name,
				tlxrt_type_name(x->type), fz_num_names[c], x->n,
				nbad, first, ha, value_of(x->type, bits_of(x->type, pa)),
				hb, value_of(x->type, bits_of(x->type, pb)));
		}
	}
	if (!bad)
		return true;
	fz_fail(r, FZ_MISMATCH, "%s: %d output(s) differ%s: %s", what, bad,
		only_nans ? " (NaN bits only)" : "", msg);
	/* the output is part of the class: the reducer keeps the mismatch
	 * where it was */
	snprintf(r->cls, sizeof r->cls, "mismatch%s in '%s'",
		 only_nans ? " of NaN bits only" : "", m->args[first_arg].name);
	return false;
}

/* Whether two elements agree within the tolerance. */
static bool
agree_close(int t, const unsigned char *pa, const unsigned char *pb)
{
	return !memcmp(pa, pb, (size_t)tlxrt_type_size(t)) ||
	       (is_nan(t, pa) && is_nan(t, pb)) || close_enough(t, pa, pb);
}

static bool
finite_elem(int t, const unsigned char *p)
{
	return isfinite(value_of(t, bits_of(t, p)));
}

int
fz_forgive_reordered(const FzMeta *m, const FzData *a, const FzData *a2,
		     const FzData *aw, const FzData *at, const FzData *ag,
		     FzData *b, const FzNum *cls)
{
	int i, n = 0;

	for (i = 0; i < m->nargs; i++) {
		const FzArg *x = &m->args[i];
		int es = tlxrt_type_size(x->type);
		size_t j;

		if ((x->role != FZ_OUT && x->role != FZ_INOUT) ||
		    cls[i] != FZ_NUM_REORD || !is_float_type(x->type) ||
		    !a->buf[i] || !a2->buf[i] || !aw->buf[i] || !at->buf[i] ||
		    !ag->buf[i] || !b->buf[i])
			continue;
		for (j = 0; j < x->n; j++) {
			const unsigned char *pa = a->buf[i] + j * (size_t)es;
			const unsigned char *pa2 = a2->buf[i] + j * (size_t)es;
			const unsigned char *paw = aw->buf[i] + j * (size_t)es;
			const unsigned char *pat = at->buf[i] + j * (size_t)es;
			const unsigned char *pag = ag->buf[i] + j * (size_t)es;
			unsigned char *pb = b->buf[i] + j * (size_t)es;
			bool fa = finite_elem(x->type, pa);

			if (agree_close(x->type, pa, pb))
				continue;
			/* the device took an order like the reverse one, the
			 * exact sum (75961's bf16 sum, 2^30-size terms that
			 * cancel), the tensor cores' adder (26 bits of the
			 * largest product: MAX - MAX + x is 0, 72904) or its
			 * code's own order (81487: a product through
			 * subnormal partial products); the value depends on
			 * the order beyond the tolerance (MAX + x - MAX); or a
			 * partial result overflowed in one order only (a sum
			 * without overflow, in f64, ends finite: not an
			 * input's NaN or infinity) */
			if (agree_close(x->type, pb, pa2) ||
			    agree_close(x->type, pb, paw) ||
			    agree_close(x->type, pb, pat) ||
			    agree_close(x->type, pb, pag) ||
			    !agree_close(x->type, pa, pa2) ||
			    !agree_close(x->type, pa, pag) ||
			    (fa != finite_elem(x->type, pb) &&
			     finite_elem(x->type, paw))) {
				memcpy(pb, pa, (size_t)es);
				n++;
			}
		}
	}
	return n;
}

bool
fz_compare(const FzMeta *m, const FzData *a, const FzData *b,
	   const char *what, bool nan_equal, FzResult *r)
{
	return fz_compare_num(m, a, b, NULL, what, nan_equal, r);
}

bool
fz_inject_flip(const FzMeta *m, FzData *d, const FzNum *cls, char *what,
	       size_t n)
{
	int i, pick = -1, es, bit;

	/* a CLOSE output first: the tolerance must not hide the flip;
	 * REORDERED last (gen_gpu's second opinions must not either) */
	for (i = 0; i < m->nargs; i++) {
		const FzArg *x = &m->args[i];

		if ((x->role != FZ_OUT && x->role != FZ_INOUT) || !x->n ||
		    !d->buf[i] || cls[i] == FZ_NUM_LOOSE)
			continue;
		if (pick < 0 || (cls[i] == FZ_NUM_CLOSE && cls[pick] != FZ_NUM_CLOSE) ||
		    (cls[i] == FZ_NUM_BITS && cls[pick] == FZ_NUM_REORD))
			pick = i;
	}
	if (pick < 0)
		return false;
	/* the top exponent bit: 0 <-> 2 (or its type's like), a NaN or an
	 * infinity <-> a finite value, x <-> x * 2^-bias */
	es = tlxrt_type_size(m->args[pick].type);
	bit = !is_float_type(m->args[pick].type) ? 0 : es * 8 - 2;
	d->buf[pick][bit / 8] ^= (unsigned char)(1u << (bit % 8));
	snprintf(what, n, "bit %d of '%s'[0] (%s)", bit, m->args[pick].name,
		 fz_num_names[cls[pick]]);
	return true;
}

/* ---- classes ---------------------------------------------------------------- */

enum { BITS = FZ_NUM_BITS, CLOSE = FZ_NUM_CLOSE, REORD = FZ_NUM_REORD,
       LOOSE = FZ_NUM_LOOSE };

typedef struct Flow {
	Func *f;
	uint8_t *v;      /* the class of each value */
	uint8_t *mem;    /* of each buffer, by its root value (0: unknown) */
	Value *root;     /* a pointer's or view's buffer; 0: unknown */
	bool changed;
} Flow;

static void
lift(Flow *fl, uint8_t *slot, int c)
{
	if (c > *slot) {
		*slot = (uint8_t)c;
		fl->changed = true;
	}
}

static int
cls_of(Flow *fl, Value v)
{
	return v ? fl->v[v] : BITS;
}

/* The root of a pointer (tile) or shared view: a parameter or a
 * smem_alloc, through ptr_add, shape ops and views; 0 when unknown. */
static Value
root_of(Flow *fl, Value v)
{
	int guard;

	for (guard = 0; v && guard < 1000; guard++) {
		ValInfo *vi = ir_val(fl->f, v);
		Op *d = vi->def;

		if (!d)
			return vi->blk == fl->f->body ? v : 0;
		switch (d->kind) {
		case OP_SMEM_ALLOC:
			return v;
		case OP_PTR_ADD: case OP_SPLAT: case OP_BROADCAST:
		case OP_EXPAND_DIMS: case OP_RESHAPE: case OP_TRANS:
		case OP_CONVERT_LAYOUT: case OP_SMEM_INDEX: case OP_SMEM_SLICE:
		case OP_SMEM_TRANS:
			v = d->opnds[0];
			break;
		case OP_SELECT: {
			Value a = root_of(fl, d->opnds[1]);

			return a == root_of(fl, d->opnds[2]) ? a : 0;
		}
		default:
			return 0;
		}
	}
	return 0;
}

static int
mem_get(Flow *fl, Value root)
{
	uint32_t i;
	int c = BITS;

	if (root)
		return fl->mem[root];
	for (i = 0; i < fl->f->vals.n; i++)
		c = c > fl->mem[i] ? c : fl->mem[i];
	return c;
}

static void
mem_raise(Flow *fl, Value root, int c)
{
	uint32_t i;

	if (root) {
		lift(fl, &fl->mem[root], c);
		return;
	}
	for (i = 0; i < fl->f->vals.n; i++)
		if (ir_val(fl->f, i)->def ? ir_val(fl->f, i)->def->kind == OP_SMEM_ALLOC
		    : ir_val(fl->f, i)->blk == fl->f->body)
			lift(fl, &fl->mem[i], c);
}

/* BITS stays BITS, anything else becomes LOOSE: what a discontinuous op
 * makes of its operand. */
static int
cut(int c)
{
	return c == BITS ? BITS : LOOSE;
}

static int
max2(int a, int b)
{
	return a > b ? a : b;
}

static bool
elem_float(Flow *fl, Value v)
{
	return ty_is_float(ir_type(fl->f, v));
}

/* A float of 16 bits or fewer.  Such a value that is not BITS may be a
 * whole ulp of its type (2^-11 of it, f16) off: a CLOSE f32 rounded to
 * it either way of a midpoint (74127: sigmoid to f16, 0.50146484375 and
 * 0.501953125).  Summed (a sum, a dot), that is 2^-11 of each term,
 * which CLOSE's 2^-11 of the result does not bound where the terms
 * cancel: such sums are LOOSE. */
static bool
narrow(Flow *fl, Value v)
{
	TypeKind e = ty_elem(ir_type(fl->f, v))->kind;

	return e == TY_F16 || e == TY_BF16 || e == TY_F8E4M3 ||
	       e == TY_F8E5M2;
}

static void flow_block(Flow *fl, Block *b, int ctx);

/* Block arguments: each takes the class of what flows into it. */
static void
args_from(Flow *fl, Block *b, uint32_t first, const Value *vals, uint32_t n,
	  int ctx)
{
	uint32_t i;

	for (i = 0; i < n && first + i < b->nargs; i++)
		lift(fl, &fl->v[b->args[first + i]], max2(cls_of(fl, vals[i]), ctx));
}

static Op *
terminator(Block *b)
{
	return b && b->last && op_has(b->last, F_TERM) ? b->last : NULL;
}

static void
results_from(Flow *fl, Op *op, Op *term, uint32_t skip, int ctx)
{
	uint32_t i;

	for (i = 0; term && i < op->nres && skip + i < term->nopnds; i++)
		lift(fl, &fl->v[op->res[i]],
		      max2(cls_of(fl, term->opnds[skip + i]), ctx));
}

static void
flow_control(Flow *fl, Op *op, int ctx)
{
	uint32_t i;
	Op *t;
	int c;

	switch (op->kind) {
	case OP_FOR: {
		Block *body = op->regions[0];

		c = max2(ctx, cut(max2(max2(cls_of(fl, op->opnds[0]),
					   cls_of(fl, op->opnds[1])),
				      cls_of(fl, op->opnds[2]))));
		if (body->nargs)
			lift(fl, &fl->v[body->args[0]], c);
		args_from(fl, body, 1, op->opnds + 3, op->nopnds - 3, c);
		if ((t = terminator(body)))
			args_from(fl, body, 1, t->opnds, t->nopnds, c);
		flow_block(fl, body, c);
		for (i = 0; i < op->nres && i + 1 < body->nargs; i++)
			lift(fl, &fl->v[op->res[i]], max2(fl->v[body->args[i + 1]], c));
		break;
	}
	case OP_WHILE: {
		Block *cb = op->regions[0], *bb = op->regions[1];
		Op *cond;

		args_from(fl, cb, 0, op->opnds, op->nopnds, ctx);
		if ((t = terminator(bb)))
			args_from(fl, cb, 0, t->opnds, t->nopnds, ctx);
		cond = terminator(cb);
		c = max2(ctx, cond && cond->nopnds ? cut(cls_of(fl, cond->opnds[0])) : BITS);
		/* the condition's value decides how often both blocks run */
		flow_block(fl, cb, c);
		if (cond) {
			args_from(fl, bb, 0, cond->opnds + 1, cond->nopnds - 1, c);
			results_from(fl, op, cond, 1, c);
		}
		flow_block(fl, bb, c);
		break;
	}
	case OP_IF:
		c = max2(ctx, cut(cls_of(fl, op->opnds[0])));
		for (i = 0; i < op->nregions; i++) {
			flow_block(fl, op->regions[i], c);
			results_from(fl, op, terminator(op->regions[i]), 0, c);
		}
		break;
	default:
		/* tasks and other regions: their ops, under ctx */
		for (i = 0; i < op->nregions; i++)
			flow_block(fl, op->regions[i], ctx);
		break;
	}
}

/* Mantissa bits of a float element type (0: not a float). */
static int
mantissa(Flow *fl, Value v)
{
	switch (ty_elem(ir_type(fl->f, v))->kind) {
	case TY_F64: return 52;
	case TY_F32: return 23;
	case TY_F16: return 10;
	case TY_BF16: return 7;
	case TY_F8E4M3: return 3;
	case TY_F8E5M2: return 2;
	default: return 0;
	}
}

/* b is a rounded to a narrower float and back (`a.to(bf16).to(f32)`):
 * a - b keeps only the rounding's residue, a few bits of a, whose
 * relative error has no bound where a is not the same bits on both
 * machines (403031: w1 one ulp apart, w1 - w1.to(bf16).to(f32) 8e-4
 * apart). */
static bool
round_trip(Flow *fl, Value a, Value b)
{
	bool narrowed = false;
	int depth;

	for (depth = 0; depth < 8; depth++) {
		Op *d = ir_val(fl->f, b)->def;
		int mb = mantissa(fl, b);

		if (!d || d->kind != OP_CVT || !mb)
			return false;
		b = d->opnds[0];
		if (mantissa(fl, b) > mb)
			narrowed = true;
		if (b == a)
			return narrowed;
	}
	return false;
}

/* The class of an op's results, its effects on memory. */
static void
flow_op(Flow *fl, Op *op, int ctx)
{
	const char *k;
	int in = ctx, c, addr;
	uint32_t i;
	Value p;

	for (i = 0; i < op->nopnds; i++)
		in = max2(in, cls_of(fl, op->opnds[i]));
	if (op->nregions) {
		flow_control(fl, op, ctx);
		return;
	}
	switch (op->kind) {
	case OP_CONST: case OP_RANGE: case OP_PROGRAM_ID: case OP_NUM_PROGRAMS:
	case OP_ENTRY_FAST: case OP_TASK_REPLICA: case OP_CLUSTER_RANK:
		c = ctx;
		break;
	case OP_SUB:
		c = in != BITS && (round_trip(fl, op->opnds[0], op->opnds[1]) ||
				   round_trip(fl, op->opnds[1], op->opnds[0]))
		    ? LOOSE : in;
		break;
	/* continuous on floats; integers are never CLOSE */
	case OP_ADD: case OP_MUL: case OP_DIV: case OP_MIN:
	case OP_MAX: case OP_NEG: case OP_ABS: case OP_FMA:
	case OP_AND: case OP_OR: case OP_XOR: case OP_SHL: case OP_SHR:
	case OP_NOT: case OP_SPLAT: case OP_BROADCAST: case OP_EXPAND_DIMS:
	case OP_RESHAPE: case OP_TRANS: case OP_CONVERT_LAYOUT:
	case OP_PTR_ADD:
		c = in;
		break;
	case OP_SQRT:
		/* sqrt.rn is exact; sqrt.approx within a few ulps */
		c = attr_int(&op->attrs, "approx", 0) ? max2(in, CLOSE) : in;
		break;
	case OP_LOG: case OP_LOG2:
		/* lg2.approx has an absolute error (near 1, as large as the
		 * result).  An ulp of x moves log(x) by an ulp of x
		 * absolutely, which near 1 is any share of the result: of an
		 * x that is not the same bits on both, nothing is known
		 * (403034: log of exp2(-5.8e-7), 1 - 4e-7 rounded, 15%
		 * apart) */
		c = attr_int(&op->attrs, "approx", 0) || in != BITS ? LOOSE
								    : CLOSE;
		break;
	case OP_TANH:
		/* tanh.approx: an absolute error of 2^-11 */
		c = attr_int(&op->attrs, "approx", 0) ? LOOSE : max2(in, CLOSE);
		break;
	case OP_EXP: case OP_EXP2: case OP_RSQRT: case OP_ERF: case OP_SIGMOID:
		c = max2(in, CLOSE);
		break;
	case OP_SIN: case OP_COS:
		if (attr_int(&op->attrs, "approx", 0)) {  /* absolute errors */
			c = LOOSE;
			break;
		}
		/* an ulp of x moves sin(x) by up to |x| ulps of x: past
		 * 2^24 or so by more than 1; of an x that is not the
		 * same bits on both, nothing is known (70117: cos of
		 * -9.65e37, one ulp apart, 0.0696 and 0.769) */
		c = in == BITS ? CLOSE : LOOSE;
		break;
	case OP_REM: case OP_FLOOR: case OP_CEIL: case OP_BITCAST:
		c = cut(in);
		break;
	case OP_CVT:
		c = elem_float(fl, op->res[0]) ? in : cut(in);
		break;
	case OP_CMP:
		k = attr_str(&op->attrs, "pred");
		/* x == x, x != x: whether x is a NaN */
		if (op->opnds[0] == op->opnds[1] && k &&
		    (!strcmp(k, "eq") || !strcmp(k, "ne")))
			c = max2(ctx, cls_of(fl, op->opnds[0]) >= REORD ? LOOSE : BITS);
		else
			c = cut(in);
		break;
	case OP_SELECT:
		c = max2(max2(cut(cls_of(fl, op->opnds[0])), ctx),
			 max2(cls_of(fl, op->opnds[1]), cls_of(fl, op->opnds[2])));
		break;
	case OP_REDUCE:
		k = attr_str(&op->attrs, "kind");
		if (k && (!strcmp(k, "argmax") || !strcmp(k, "argmin")))
			c = cut(in);
		else if (k && !strcmp(k, "sum") && narrow(fl, op->opnds[0]))
			c = in == BITS ? REORD : LOOSE;
		else if (k && (!strcmp(k, "sum") || !strcmp(k, "prod")) &&
			 elem_float(fl, op->opnds[0]))
			c = max2(in, REORD);
		else
			c = in;
		break;
	case OP_DOT:
		/* a narrow operand that is not BITS: see narrow() */
		if (narrow(fl, op->opnds[0]))
			c = max2(max2(cls_of(fl, op->opnds[0]),
				      cls_of(fl, op->opnds[1])), ctx) == BITS
			    ? max2(in, REORD) : LOOSE;
		else
			c = in;
		break;
	case OP_LOAD:
		p = op->opnds[0];
		addr = cut(max2(cls_of(fl, p), cls_of(fl, ir_access_mask(op))));
		c = max2(max2(mem_get(fl, root_of(fl, p)), addr), ctx);
		if (op->nopnds > 2)
			c = max2(c, cls_of(fl, op->opnds[2]));
		break;
	case OP_SMEM_LOAD:
		c = max2(max2(mem_get(fl, root_of(fl, op->opnds[0])),
			      cut(cls_of(fl, op->opnds[0]))), ctx);
		break;
	case OP_STORE:
		addr = cut(max2(cls_of(fl, op->opnds[0]), cls_of(fl, ir_access_mask(op))));
		mem_raise(fl, root_of(fl, op->opnds[0]),
			  max2(max2(cls_of(fl, op->opnds[1]), addr), ctx));
		return;
	case OP_SMEM_STORE:
		mem_raise(fl, root_of(fl, op->opnds[0]),
			  max2(max2(cls_of(fl, op->opnds[1]),
				    cut(cls_of(fl, op->opnds[0]))), ctx));
		return;
	case OP_CP_ASYNC:
		addr = cut(max2(cls_of(fl, op->opnds[1]), cls_of(fl, ir_access_mask(op))));
		mem_raise(fl, root_of(fl, op->opnds[0]),
			  max2(max2(mem_get(fl, root_of(fl, op->opnds[1])), addr),
			       max2(cut(cls_of(fl, op->opnds[0])), ctx)));
		return;
	case OP_ATOMIC:
	case OP_ATOMIC_CAS: {
		Value root = root_of(fl, op->opnds[0]);
		int val = cls_of(fl, op->opnds[op->nopnds > 2 && op->kind ==
						   OP_ATOMIC_CAS ? 2 : 1]);

		addr = cut(max2(cls_of(fl, op->opnds[0]), cls_of(fl, ir_access_mask(op))));
		if (op->kind == OP_ATOMIC_CAS)  /* the compare decides */
			addr = max2(addr, cut(cls_of(fl, op->opnds[1])));
		k = attr_str(&op->attrs, "kind");
		/* float adds into one address in any order */
		if (k && !strcmp(k, "add") && elem_float(fl, op->opnds[1]))
			val = max2(val, REORD);
		c = max2(max2(mem_get(fl, root), addr), ctx);
		mem_raise(fl, root, max2(max2(val, addr), ctx));
		break;
	}
	case OP_TMA_LOAD: case OP_TMA_STORE: {
		/* desc, coords, the buffer's view [, bar]: a copy between
		 * the tensor's memory and the buffer's */
		uint32_t r = (uint32_t)ir_type(fl->f, op->opnds[0])->rank;
		Value view = 1 + r < op->nopnds ? op->opnds[1 + r] : 0;
		Value from = op->kind == OP_TMA_LOAD ? op->opnds[0] : view;
		Value to = op->kind == OP_TMA_LOAD ? view : op->opnds[0];

		addr = ctx;
		for (i = 1; i <= r && i < op->nopnds; i++)
			addr = max2(addr, cut(cls_of(fl, op->opnds[i])));
		mem_raise(fl, root_of(fl, to),
			  max2(mem_get(fl, root_of(fl, from)), addr));
		return;
	}
	case OP_DOT_ASYNC: {
		/* a (a view or a tile), b (a view), acc: as dot, on tensor
		 * cores for 8- and 16-bit floats */
		Type *at = ir_type(fl->f, op->opnds[0]);
		TypeKind e = (at->kind == TY_SMEM ? at->elem : ty_elem(at))->kind;

		addr = ctx;
		for (i = 0; i < 2; i++)
			addr = max2(addr, ir_type(fl->f, op->opnds[i])->kind == TY_SMEM
				    ? max2(mem_get(fl, root_of(fl, op->opnds[i])),
					   cut(cls_of(fl, op->opnds[i])))
				    : cls_of(fl, op->opnds[i]));
		c = max2(cls_of(fl, op->opnds[2]), addr);
		/* a narrow operand that is not BITS: see narrow() */
		if (e == TY_F16 || e == TY_BF16 || e == TY_F8E4M3 ||
		    e == TY_F8E5M2)
			c = addr == BITS ? max2(c, REORD) : LOOSE;
		break;
	}
	case OP_DOT_WAIT:
		/* values -> the same values, once their MMAs are done */
		for (i = 0; i < op->nres && i < op->nopnds; i++)
			lift(fl, &fl->v[op->res[i]],
			     max2(cls_of(fl, op->opnds[i]), ctx));
		return;
	case OP_SMEM_ALLOC: case OP_SMEM_INDEX: case OP_SMEM_SLICE:
	case OP_SMEM_TRANS:
		c = in;  /* a view: its class is its index's */
		break;
	case OP_ASSERT: case OP_SYNC_THREADS: case OP_SYNC_WARPS:
	case OP_CP_ASYNC_COMMIT: case OP_CP_ASYNC_WAIT: case OP_YIELD:
	case OP_CONDITION: case OP_RETURN:
		return;
	default:
		/* calls and what the generator does not make: LOOSE results
		 * and LOOSE memory, unless nothing flows in */
		c = in == BITS && op->kind != OP_CALL ? BITS : LOOSE;
		if (c == LOOSE)
			mem_raise(fl, 0, LOOSE);
		break;
	}
	for (i = 0; i < op->nres; i++)
		lift(fl, &fl->v[op->res[i]], c);
}

static void
flow_block(Flow *fl, Block *b, int ctx)
{
	Op *op;

	for (op = b ? b->first : NULL; op; op = op->next)
		flow_op(fl, op, ctx);
}

bool
fz_num_classes(const char *ir, size_t len, const FzMeta *m, FzNum *cls,
	       char *err, size_t errn)
{
	Arena arena;
	IrCtx ctx;
	Source src;
	Diag d;
	Module *mod;
	uint32_t i, j, nk = 0;
	bool ok = false;

	for (j = 0; j < (uint32_t)m->nargs; j++)
		cls[j] = FZ_NUM_BITS;
	arena_init(&arena, NULL, NULL, NULL);
	ir_ctx_init(&ctx, &arena);
	src_init(&src, &arena, "__tlx_ir", ir, len);
	diag_init(&d, &arena, &src, NULL);
	mod = ir_read(&ctx, &d, &src);
	if (!mod || d.nerrors) {
		snprintf(err, errn, "the image's IR does not read");
		goto done;
	}
	/* every kernel (a specialized entry too): the worst of them */
	for (i = 0; i < mod->funcs.n; i++) {
		Func *f = mod->funcs.v[i];
		Flow fl = { .f = f };
		int round;

		if (f->kind != FN_KERNEL)
			continue;
		nk++;
		/* the parameters the passes derive (a schedule's workspace,
		 * descriptors over plain pointers) come last */
		if (f->body->nargs - (uint32_t)attr_int(&f->attrs, "derived", 0) !=
		    (uint32_t)m->nargs) {
			snprintf(err, errn, "kernel '%s' has %u parameters, the "
				 "'//!' lines %d", f->name, f->body->nargs -
				 (uint32_t)attr_int(&f->attrs, "derived", 0),
				 m->nargs);
			goto done;
		}
		fl.v = arena_alloc(&arena, f->vals.n);
		fl.mem = arena_alloc(&arena, f->vals.n);
		/* each value and buffer steps up at most twice */
		for (round = 0; round < 2 * (int)f->vals.n + 4; round++) {
			fl.changed = false;
			flow_block(&fl, f->body, BITS);
			if (!fl.changed)
				break;
		}
		for (j = 0; j < (uint32_t)m->nargs; j++)
			if ((m->args[j].role == FZ_OUT || m->args[j].role == FZ_INOUT)
			    && fl.mem[f->body->args[j]] > cls[j])
				cls[j] = (FzNum)fl.mem[f->body->args[j]];
	}
	if (!nk)
		snprintf(err, errn, "the image's IR has no kernel");
	ok = nk > 0;
done:
	arena_reset(&arena);
	return ok;
}
