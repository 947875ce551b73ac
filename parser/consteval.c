/*
 * consteval.c: compile-time arithmetic on scalar constants with the
 * exact semantics of the target types: integers wrap at their width
 * (unsigned types compare, divide and shift unsigned), floats round to
 * nearest even in their own format.  Used for const parameters, shapes,
 * and folding in the front end.
 */
#include <math.h>

#include "parser/semaint.h"

int64_t
cv_wrap(TypeKind k, int64_t v)
{
	int bits;

	if (k == TY_I1)
		return v & 1;
	switch (k) {
	case TY_I8: case TY_U8: bits = 8; break;
	case TY_I16: case TY_U16: bits = 16; break;
	case TY_I32: case TY_U32: bits = 32; break;
	default: return v;
	}
	if (ty_is_unsigned_kind(k))
		return (int64_t)((uint64_t)v & ((1ull << bits) - 1));
	return (int64_t)((uint64_t)v << (64 - bits)) >> (64 - bits);
}

/* Rounds x to nearest even in a binary format with `man` stored mantissa
 * bits and exponents [emin, emax]; beyond the largest finite value it
 * gives infinity, or saturates when `sat`. */
static double
round_format(double x, int man, int emin, int emax, bool sat)
{
	double q, r, maxv;
	int e;

	maxv = ldexp(2.0 - ldexp(1.0, -man), emax);
	if (sat)  /* e4m3: the all-ones mantissa at emax is NaN */
		maxv = ldexp(2.0 - ldexp(2.0, -man), emax);
	if (x == 0 || isnan(x))
		return x;
	if (isinf(x))
		return sat ? copysign(maxv, x) : x;
	frexp(x, &e);
	e -= 1;  /* |x| = 1.f * 2^e */
	if (e < emin)
		e = emin;
	q = ldexp(1.0, e - man);
	r = nearbyint(x / q) * q;
	if (fabs(r) > maxv)
		return sat ? copysign(maxv, x) : copysign(INFINITY, x);
	return r;
}

double
cv_round(TypeKind k, double v)
{
	switch (k) {
	case TY_F64: return v;
	case TY_F32: return (double)(float)v;
	case TY_F16: return round_format(v, 10, -14, 15, false);
	case TY_BF16: return round_format(v, 7, -126, 127, false);
	case TY_F8E4M3: return round_format(v, 3, -6, 8, true);
	case TY_F8E5M2: return round_format(v, 2, -14, 15, false);
	default: return v;
	}
}

CVal
cv_int(TypeKind k, int64_t v)
{
	return (CVal){ .ty = k, .i = cv_wrap(k, v) };
}

CVal
cv_float(TypeKind k, double v)
{
	return (CVal){ .ty = k, .f = cv_round(k, v) };
}

static double
int_as_double(CVal v)
{
	if (ty_is_unsigned_kind(v.ty))
		return (double)(uint64_t)v.i;
	return (double)v.i;
}

/* Float -> int as the GPU's cvt.rzi does: truncate, saturate, NaN -> 0. */
static int64_t
float_to_int(TypeKind k, double f)
{
	double lo, hi;
	int bits = ty_bits(&(Type){ .kind = k });

	if (isnan(f))
		return 0;
	f = trunc(f);
	if (k == TY_I1)
		return f != 0;
	if (ty_is_unsigned_kind(k)) {
		lo = 0;
		hi = ldexp(1.0, bits) - 1;
		if (f <= lo)
			return 0;
		if (f >= hi)
			return bits == 64 ? -1 : (int64_t)((1ull << bits) - 1);
		return (int64_t)(uint64_t)f;
	}
	lo = -ldexp(1.0, bits - 1);
	hi = ldexp(1.0, bits - 1) - 1;
	if (f <= lo)
		return bits == 64 ? INT64_MIN : -(int64_t)(1ull << (bits - 1));
	if (f >= hi)
		return bits == 64 ? INT64_MAX : (int64_t)((1ull << (bits - 1)) - 1);
	return (int64_t)f;
}

CVal
cv_convert(CVal v, TypeKind to)
{
	bool from_float = ty_is_float_kind(v.ty);

	if (to == TY_I1)
		return cv_int(TY_I1, from_float ? v.f != 0 : v.i != 0);
	if (ty_is_float_kind(to))
		return cv_float(to, from_float ? v.f : int_as_double(v));
	if (from_float)
		return cv_int(to, float_to_int(to, v.f));
	return cv_int(to, v.i);  /* v.i is already sign/zero extended */
}

bool
cv_truthy(CVal v)
{
	return ty_is_float_kind(v.ty) ? v.f != 0 : v.i != 0;
}

bool
cv_fits(TypeKind k, int64_t v, bool from_unsigned)
{
	if (from_unsigned && v < 0)  /* a u64 literal above INT64_MAX */
		return k == TY_U64;
	if (ty_is_unsigned_kind(k) && v < 0)
		return false;
	if (k == TY_U64 || k == TY_I64)
		return true;
	return cv_wrap(k, v) == v;
}

static bool
int_cmp(AstOp op, CVal a, CVal b, bool *r)
{
	bool u = ty_is_unsigned_kind(a.ty);
	uint64_t ua = (uint64_t)a.i, ub = (uint64_t)b.i;

	switch (op) {
	case BIN_EQ: *r = a.i == b.i; return true;
	case BIN_NE: *r = a.i != b.i; return true;
	case BIN_LT: *r = u ? ua < ub : a.i < b.i; return true;
	case BIN_LE: *r = u ? ua <= ub : a.i <= b.i; return true;
	case BIN_GT: *r = u ? ua > ub : a.i > b.i; return true;
	case BIN_GE: *r = u ? ua >= ub : a.i >= b.i; return true;
	default: return false;
	}
}

static bool
int_binary(AstOp op, CVal a, CVal b, CVal *out, const char **err)
{
	TypeKind k = a.ty;
	bool u = ty_is_unsigned_kind(k);
	uint64_t ua = (uint64_t)a.i, ub = (uint64_t)b.i;
	int bits = k == TY_I1 ? 1 : ty_bits(&(Type){ .kind = k });
	int64_t r;
	bool c;

	if (int_cmp(op, a, b, &c)) {
		*out = cv_int(TY_I1, c);
		return true;
	}
	switch (op) {
	case BIN_ADD: r = (int64_t)(ua + ub); break;
	case BIN_SUB: r = (int64_t)(ua - ub); break;
	case BIN_MUL: r = (int64_t)(ua * ub); break;
	case BIN_DIV:
	case BIN_REM:
		if (b.i == 0) {
			*err = "division by zero in a constant expression";
			return false;
		}
		if (u)
			r = (int64_t)(op == BIN_DIV ? ua / ub : ua % ub);
		else if (a.i == INT64_MIN && b.i == -1)
			r = op == BIN_DIV ? INT64_MIN : 0;
		else
			r = op == BIN_DIV ? a.i / b.i : a.i % b.i;
		break;
	case BIN_SHL:
	case BIN_SHR:
		if ((!ty_is_unsigned_kind(b.ty) && b.i < 0) || ub >= (uint64_t)bits) {
			*err = "a shift by a negative amount, or by the width of "
			       "its type or more, in a constant expression";
			return false;
		}
		if (op == BIN_SHL)
			r = (int64_t)(ua << ub);
		else
			r = u ? (int64_t)(ua >> ub) : a.i >> ub;
		break;
	case BIN_BITAND: case BIN_LOGAND: r = a.i & b.i; break;
	case BIN_BITOR: case BIN_LOGOR: r = a.i | b.i; break;
	case BIN_BITXOR: r = a.i ^ b.i; break;
	default: return false;
	}
	*out = cv_int(k, r);
	return true;
}

static bool
float_binary(AstOp op, CVal a, CVal b, CVal *out)
{
	double x = a.f, y = b.f, r;

	switch (op) {
	case BIN_EQ: *out = cv_int(TY_I1, x == y); return true;
	case BIN_NE: *out = cv_int(TY_I1, x != y); return true;
	case BIN_LT: *out = cv_int(TY_I1, x < y); return true;
	case BIN_LE: *out = cv_int(TY_I1, x <= y); return true;
	case BIN_GT: *out = cv_int(TY_I1, x > y); return true;
	case BIN_GE: *out = cv_int(TY_I1, x >= y); return true;
	case BIN_ADD: r = x + y; break;
	case BIN_SUB: r = x - y; break;
	case BIN_MUL: r = x * y; break;
	case BIN_DIV: r = x / y; break;
	case BIN_REM: r = fmod(x, y); break;
	default: return false;
	}
	*out = cv_float(a.ty, r);
	return true;
}

bool
cv_binary(AstOp op, CVal a, CVal b, CVal *out, const char **err)
{
	*err = NULL;
	if (ty_is_float_kind(a.ty))
		return float_binary(op, a, b, out);
	return int_binary(op, a, b, out, err);
}

bool
cv_unary(AstOp op, CVal a, CVal *out)
{
	switch (op) {
	case UN_NEG:
		*out = ty_is_float_kind(a.ty) ? cv_float(a.ty, -a.f)
					      : cv_int(a.ty, (int64_t)(0 - (uint64_t)a.i));
		return true;
	case UN_NOT:
	case UN_BITNOT:
		if (ty_is_float_kind(a.ty))
			return false;
		*out = cv_int(a.ty, ~a.i);
		return true;
	default:
		return false;
	}
}

void
cv_print(Buf *b, CVal v)
{
	if (v.ty == TY_I1)
		buf_puts(b, v.i ? "true" : "false");
	else if (ty_is_float_kind(v.ty))
		buf_printf(b, "%g", v.f);
	else if (ty_is_unsigned_kind(v.ty))
		buf_printf(b, "%llu", (unsigned long long)v.i);
	else
		buf_printf(b, "%lld", (long long)v.i);
}
