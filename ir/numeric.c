/*
 * numeric.c: the exact scalar semantics of the tile IR -- float formats
 * (f16, bf16, fp8 e4m3 and e5m2) with round-to-nearest-even conversions,
 * canonical integers, cvt, and the evaluation of elementwise ops on
 * constants.  canon folds with these and the simulator computes with
 * them, so both agree bit for bit.
 *
 * Every float format is described by its exponent and mantissa widths.
 * A value to encode is first written as sig * 2^exp with an integer
 * significand (53 bits from a double, up to 64 from an integer), then
 * rounded once to the format (round_mag), so no conversion rounds twice.
 */
#include <math.h>
#include <string.h>

#include "ir.h"

typedef struct Fmt {
	int ebits, mbits;
	uint64_t maxfin;  /* magnitude bits of the largest finite value */
	uint64_t inf;     /* magnitude bits of infinity; 0: saturate */
	uint64_t nan;     /* magnitude bits of the quiet NaN we produce */
} Fmt;

static const Fmt fmt_f16 = { 5, 10, 0x7bff, 0x7c00, 0x7e00 };
static const Fmt fmt_bf16 = { 8, 7, 0x7f7f, 0x7f80, 0x7fc0 };
static const Fmt fmt_e4m3 = { 4, 3, 0x7e, 0, 0x7f };
static const Fmt fmt_e5m2 = { 5, 2, 0x7b, 0x7c, 0x7e };
static const Fmt fmt_f32 = { 8, 23, 0x7f7fffff, 0x7f800000, 0x7fc00000 };
static const Fmt fmt_f64 = { 11, 52, 0x7fefffffffffffffull,
			     0x7ff0000000000000ull, 0x7ff8000000000000ull };

static const Fmt *
fmt_of(TypeKind k)
{
	switch (k) {
	case TY_F16: return &fmt_f16;
	case TY_BF16: return &fmt_bf16;
	case TY_F8E4M3: return &fmt_e4m3;
	case TY_F8E5M2: return &fmt_e5m2;
	case TY_F32: return &fmt_f32;
	default: return &fmt_f64;
	}
}

static int
top_bit(uint64_t v)
{
	int n = 0;

	while (v >>= 1)
		n++;
	return n;
}

/* The magnitude bits of the format value nearest to sig * 2^exp (sig
 * nonzero), ties to even.  The result may lie past maxfin: the caller
 * handles overflow. */
static uint64_t
round_mag(const Fmt *fm, uint64_t sig, int exp)
{
	int bias = (1 << (fm->ebits - 1)) - 1, emin = 1 - bias;
	int lead = exp + top_bit(sig);
	int te = lead < emin ? emin : lead;
	int shift = te - fm->mbits - exp;  /* bits of sig below the unit */
	uint64_t q, rem, half, one = (uint64_t)1 << fm->mbits;

	if (shift <= 0) {
		q = sig << -shift;
	} else if (shift > 64) {
		return 0;
	} else if (shift == 64) {
		q = sig > (uint64_t)1 << 63 ? 1 : 0;
	} else {
		q = sig >> shift;
		rem = sig & (((uint64_t)1 << shift) - 1);
		half = (uint64_t)1 << (shift - 1);
		if (rem > half || (rem == half && (q & 1)))
			q++;
	}
	if (q >> (fm->mbits + 1)) {
		q >>= 1;
		te++;
	}
	if (q < one)
		return q;  /* subnormal (te == emin) or zero */
	return ((uint64_t)(te + bias) << fm->mbits) | (q - one);
}

static uint64_t
finish(const Fmt *fm, uint64_t sign, uint64_t mag)
{
	if (mag > fm->maxfin)
		mag = fm->inf ? fm->inf : fm->maxfin;
	return sign << (fm->ebits + fm->mbits) | mag;
}

static uint64_t
encode(const Fmt *fm, double v)
{
	uint64_t sign = signbit(v) ? 1 : 0;
	int e;
	double fr;

	if (isnan(v))
		return sign << (fm->ebits + fm->mbits) | fm->nan;
	if (isinf(v))
		return finish(fm, sign, fm->inf ? fm->inf : fm->maxfin);
	if (v == 0)
		return sign << (fm->ebits + fm->mbits);
	fr = frexp(fabs(v), &e);  /* |v| = fr * 2^e, fr in [0.5, 1) */
	return finish(fm, sign, round_mag(fm, (uint64_t)ldexp(fr, 53), e - 53));
}

static double
decode(const Fmt *fm, uint64_t bits)
{
	int bias = (1 << (fm->ebits - 1)) - 1;
	uint64_t emax = ((uint64_t)1 << fm->ebits) - 1;
	uint64_t mmask = ((uint64_t)1 << fm->mbits) - 1;
	uint64_t e = (bits >> fm->mbits) & emax;
	uint64_t m = bits & mmask;
	bool neg = (bits >> (fm->ebits + fm->mbits)) & 1;
	double v;

	if (fm->inf && e == emax)
		v = m ? NAN : INFINITY;
	else if (!fm->inf && (bits & ((emax << fm->mbits) | mmask)) == fm->nan)
		v = NAN;  /* e4m3: only S.1111.111 is NaN */
	else if (e == 0)
		v = ldexp((double)m, 1 - bias - fm->mbits);
	else
		v = ldexp((double)(m | (uint64_t)1 << fm->mbits),
			  (int)e - bias - fm->mbits);
	return neg ? -v : v;
}

uint64_t
ir_float_to_bits(TypeKind k, double v)
{
	if (k == TY_F64) {
		uint64_t b;

		memcpy(&b, &v, sizeof b);
		return b;
	}
	if (k == TY_F32) {
		float f = (float)v;
		uint32_t b;

		memcpy(&b, &f, sizeof b);
		return b;
	}
	return encode(fmt_of(k), v);
}

double
ir_float_from_bits(TypeKind k, uint64_t bits)
{
	if (k == TY_F64) {
		double d;

		memcpy(&d, &bits, sizeof d);
		return d;
	}
	if (k == TY_F32) {
		uint32_t b = (uint32_t)bits;
		float f;

		memcpy(&f, &b, sizeof f);
		return f;
	}
	return decode(fmt_of(k), bits);
}

double
ir_float_round(TypeKind k, double v)
{
	if (k == TY_F64)
		return v;
	if (k == TY_F32)
		return (float)v;
	return decode(fmt_of(k), encode(fmt_of(k), v));
}

uint16_t ir_f32_to_f16(float f) { return (uint16_t)encode(&fmt_f16, f); }
float ir_f16_to_f32(uint16_t h) { return (float)decode(&fmt_f16, h); }
uint16_t ir_f32_to_bf16(float f) { return (uint16_t)encode(&fmt_bf16, f); }
float ir_bf16_to_f32(uint16_t h) { return (float)decode(&fmt_bf16, h); }
uint8_t ir_f32_to_e4m3(float f) { return (uint8_t)encode(&fmt_e4m3, f); }
float ir_e4m3_to_f32(uint8_t b) { return (float)decode(&fmt_e4m3, b); }
uint8_t ir_f32_to_e5m2(float f) { return (uint8_t)encode(&fmt_e5m2, f); }
float ir_e5m2_to_f32(uint8_t b) { return (float)decode(&fmt_e5m2, b); }

/* ---- integers ----------------------------------------------------------- */

static int
int_bits(TypeKind k)
{
	switch (k) {
	case TY_I1: return 1;
	case TY_I8: case TY_U8: return 8;
	case TY_I16: case TY_U16: return 16;
	case TY_I32: case TY_U32: return 32;
	default: return 64;
	}
}

/* i1 counts as unsigned: true is 1, and 1 > 0. */
static bool
int_unsigned(TypeKind k)
{
	return k == TY_I1 || ty_is_unsigned_kind(k);
}

int64_t
ir_int_wrap(TypeKind k, uint64_t v)
{
	int w = int_bits(k);
	uint64_t mask, sbit;

	if (w == 64)
		return (int64_t)v;
	mask = ((uint64_t)1 << w) - 1;
	v &= mask;
	sbit = (uint64_t)1 << (w - 1);
	if (!int_unsigned(k) && (v & sbit))
		v |= ~mask;
	return (int64_t)v;
}

static double
int_to_float(TypeKind to, int64_t v, bool uns)
{
	uint64_t mag = uns || v >= 0 ? (uint64_t)v : 0 - (uint64_t)v;
	uint64_t sign = !uns && v < 0;
	const Fmt *fm = fmt_of(to);

	if (mag == 0)
		return 0.0;
	return ir_float_from_bits(to, finish(fm, sign, round_mag(fm, mag, 0)));
}

static int64_t
float_to_int(TypeKind to, double v)
{
	int w = int_bits(to);
	double t;

	if (to == TY_I1)
		return v != 0;
	if (isnan(v))
		return 0;
	t = trunc(v);
	if (int_unsigned(to)) {
		if (t <= 0)
			return 0;
		if (t >= ldexp(1.0, w))
			return ir_int_wrap(to, ~(uint64_t)0);
		return ir_int_wrap(to, (uint64_t)t);
	}
	if (t >= ldexp(1.0, w - 1))
		return ir_int_wrap(to, ((uint64_t)1 << (w - 1)) - 1);
	if (t < -ldexp(1.0, w - 1))
		return ir_int_wrap(to, (uint64_t)1 << (w - 1));
	return (int64_t)t;
}

Num
ir_num_cvt(TypeKind to, TypeKind from, Num v)
{
	Num r;

	if (ty_is_int_kind(from) && ty_is_int_kind(to))
		r.i = to == TY_I1 ? v.i != 0 : ir_int_wrap(to, (uint64_t)v.i);
	else if (ty_is_int_kind(from))
		r.f = int_to_float(to, v.i, int_unsigned(from));
	else if (ty_is_int_kind(to))
		r.i = float_to_int(to, v.f);
	else
		r.f = ir_float_round(to, v.f);
	return r;
}

/* ---- elementwise evaluation ---------------------------------------------- */

static bool
int_less(TypeKind k, int64_t a, int64_t b)
{
	return int_unsigned(k) ? (uint64_t)a < (uint64_t)b : a < b;
}

static bool
int_binary(OpKind op, TypeKind k, int64_t a, int64_t b, int64_t *r)
{
	uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
	unsigned sh = (unsigned)(ub & (uint64_t)(int_bits(k) - 1));
	bool uns = int_unsigned(k);

	switch (op) {
	case OP_ADD: ua += ub; break;
	case OP_SUB: ua -= ub; break;
	case OP_MUL: ua *= ub; break;
	case OP_DIV:
	case OP_REM:
		if (b == 0)
			return false;
		if (uns)
			ua = op == OP_DIV ? ua / ub : ua % ub;
		else if (b == -1)
			ua = op == OP_DIV ? 0 - ua : 0;
		else
			ua = (uint64_t)(op == OP_DIV ? a / b : a % b);
		break;
	case OP_MIN: ua = int_less(k, b, a) ? ub : ua; break;
	case OP_MAX: ua = int_less(k, a, b) ? ub : ua; break;
	case OP_AND: ua &= ub; break;
	case OP_OR: ua |= ub; break;
	case OP_XOR: ua ^= ub; break;
	case OP_SHL: ua <<= sh; break;
	case OP_SHR:
		if (uns || a >= 0)
			ua >>= sh;
		else
			ua = ~(~ua >> sh);
		break;
	default:
		return false;
	}
	*r = ir_int_wrap(k, ua);
	return true;
}

/* IEEE minNum/maxNum: a NaN operand is ignored unless both are; -0 < +0. */
static double
min_num(double a, double b, bool max)
{
	if (isnan(a))
		return b;
	if (isnan(b))
		return a;
	if (a == b)
		return (signbit(a) != 0) == max ? b : a;
	return (a < b) != max ? a : b;
}

/* The op in the type's own precision: f64 in double, f32 in float; f16
 * and bf16 in float, then rounded once (exact: float has more than
 * 2p+2 bits for them). */
static double
float_binary(OpKind op, TypeKind k, double a, double b, bool *ok)
{
	float fa = (float)a, fb = (float)b, fr;
	double r;

	*ok = true;
	if (op == OP_MIN || op == OP_MAX)
		return min_num(a, b, op == OP_MAX);
	if (k == TY_F64) {
		switch (op) {
		case OP_ADD: return a + b;
		case OP_SUB: return a - b;
		case OP_MUL: return a * b;
		case OP_DIV: return a / b;
		case OP_REM: return fmod(a, b);
		default: *ok = false; return 0;
		}
	}
	switch (op) {
	case OP_ADD: fr = fa + fb; break;
	case OP_SUB: fr = fa - fb; break;
	case OP_MUL: fr = fa * fb; break;
	case OP_DIV: fr = fa / fb; break;
	case OP_REM: fr = fmodf(fa, fb); break;
	default: *ok = false; return 0;
	}
	r = fr;
	return ir_float_round(k, r);
}

bool
ir_num_binary(OpKind op, TypeKind k, Num a, Num b, Num *r)
{
	bool ok;

	if (ty_is_int_kind(k))
		return int_binary(op, k, a.i, b.i, &r->i);
	if (!ty_is_float_kind(k) || k == TY_F8E4M3 || k == TY_F8E5M2)
		return false;
	r->f = float_binary(op, k, a.f, b.f, &ok);
	return ok;
}

static bool
float_unary(OpKind op, TypeKind k, double a, double *r)
{
	float fa = (float)a;

	switch (op) {
	case OP_NEG: *r = -a; return true;
	case OP_ABS: *r = fabs(a); return true;
	case OP_FLOOR: *r = floor(a); return true;
	case OP_CEIL: *r = ceil(a); return true;
	case OP_SQRT:
		*r = k == TY_F64 ? sqrt(a) : ir_float_round(k, sqrtf(fa));
		return true;
	default:
		return false;  /* transcendental: no exact result to fold to */
	}
}

bool
ir_num_unary(OpKind op, TypeKind k, Num a, Num *r)
{
	if (ty_is_int_kind(k)) {
		uint64_t u = (uint64_t)a.i;

		switch (op) {
		case OP_NEG: u = 0 - u; break;
		case OP_NOT: u = ~u; break;
		case OP_ABS: u = !int_unsigned(k) && a.i < 0 ? 0 - u : u; break;
		default: return false;
		}
		r->i = ir_int_wrap(k, u);
		return true;
	}
	if (!ty_is_float_kind(k) || k == TY_F8E4M3 || k == TY_F8E5M2)
		return false;
	return float_unary(op, k, a.f, &r->f);
}

bool
ir_num_fma(TypeKind k, Num a, Num b, Num c, Num *r)
{
	if (k == TY_F64)
		r->f = fma(a.f, b.f, c.f);
	else if (k == TY_F32)
		r->f = fmaf((float)a.f, (float)b.f, (float)c.f);
	else
		return false;  /* f16/bf16 would round twice through f32 */
	return true;
}

int
ir_num_cmp(const char *pred, TypeKind k, Num a, Num b)
{
	static const char *preds[] = { "eq", "ne", "lt", "le", "gt", "ge" };
	bool lt, eq, gt;
	int p;

	for (p = 0; p < 6; p++)
		if (strcmp(pred, preds[p]) == 0)
			break;
	if (p == 6)
		return -1;
	if (ty_is_int_kind(k)) {
		lt = int_less(k, a.i, b.i);
		eq = a.i == b.i;
		gt = int_less(k, b.i, a.i);
	} else {
		lt = a.f < b.f;
		eq = a.f == b.f;
		gt = a.f > b.f;
	}
	switch (p) {
	case 0: return eq;
	case 1: return !eq;  /* true with NaN */
	case 2: return lt;
	case 3: return lt || eq;
	case 4: return gt;
	default: return gt || eq;
	}
}
