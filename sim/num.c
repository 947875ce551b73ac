/*
 * num.c: element formats.  Narrow floats (f16, bf16, f8e4m3, f8e5m2) are
 * stored as their bits; arithmetic on them happens in f32 (exact: every
 * narrow value is an f32) and is rounded back to nearest even exactly
 * once.  Rounding goes through one routine over an exact integer
 * significand and a power of two, so doubles and 64-bit integers round
 * once too (no double rounding through f32).
 */
#include <math.h>
#include <string.h>

#include "sim.h"

typedef struct Fmt {
	int ebits, mbits, bias;
	bool ieee;  /* has inf (else: e4m3, saturating, one NaN code) */
	uint32_t nan;
} Fmt;

static const Fmt F16 = { 5, 10, 15, true, 0x7e00 };
static const Fmt BF16 = { 8, 7, 127, true, 0x7fc0 };
static const Fmt E4M3 = { 4, 3, 7, false, 0x7f };
static const Fmt E5M2 = { 5, 2, 15, true, 0x7e };

static uint32_t
sign_bit(const Fmt *f)
{
	return 1u << (f->ebits + f->mbits);
}

static uint32_t
encode_inf(const Fmt *f, bool neg)
{
	uint32_t s = neg ? sign_bit(f) : 0;

	if (!f->ieee)  /* saturate to the largest finite value */
		return s | (((1u << f->ebits) - 1) << f->mbits) |
		       ((1u << f->mbits) - 2);
	return s | (((1u << f->ebits) - 1) << f->mbits);
}

static int
msb64(uint64_t x)
{
	return 63 - __builtin_clzll(x);
}

/* Rounds mag * 2^e2 (mag > 0) to the format, nearest even. */
static uint32_t
round_fmt(const Fmt *f, bool neg, uint64_t mag, int e2)
{
	int emin = 1 - f->bias, u, qe, shift;
	uint64_t r, one = 1;
	uint32_t s = neg ? sign_bit(f) : 0, bexp, maxexp;

	if (mag == 0)
		return s;
	u = msb64(mag) + e2;
	qe = (u < emin ? emin : u) - f->mbits;
	shift = qe - e2;
	if (shift <= 0) {
		r = mag << -shift;
	} else if (shift >= 65) {
		r = 0;
	} else {
		uint64_t rem, half;

		r = shift == 64 ? 0 : mag >> shift;
		rem = shift == 64 ? mag : mag & ((one << shift) - 1);
		half = one << (shift - 1);
		if (rem > half || (rem == half && (r & 1)))
			r++;
	}
	if (r == 0)
		return s;
	if (r < (one << f->mbits))
		return s | (uint32_t)r;  /* subnormal */
	if (r >= (one << (f->mbits + 1))) {
		r >>= 1;
		qe++;
	}
	bexp = (uint32_t)(qe + f->mbits + f->bias);
	maxexp = (1u << f->ebits) - 1;
	if (f->ieee ? bexp >= maxexp
		    : bexp > maxexp ||
			      (bexp == maxexp &&
			       (r - (one << f->mbits)) == (one << f->mbits) - 1))
		return encode_inf(f, neg);
	return s | (bexp << f->mbits) | (uint32_t)(r - (one << f->mbits));
}

static uint32_t
from_double(const Fmt *f, double d)
{
	uint64_t bits, mant;
	int e;
	bool neg;

	memcpy(&bits, &d, 8);
	neg = bits >> 63;
	e = (int)((bits >> 52) & 0x7ff);
	mant = bits & ((1ull << 52) - 1);
	if (e == 0x7ff)
		return mant ? (neg ? sign_bit(f) : 0) | f->nan
			    : encode_inf(f, neg);
	if (e == 0)
		return round_fmt(f, neg, mant, -1074);
	return round_fmt(f, neg, mant | (1ull << 52), e - 1075);
}

static float
to_float(const Fmt *f, uint32_t x)
{
	uint32_t m = x & ((1u << f->mbits) - 1);
	uint32_t e = (x >> f->mbits) & ((1u << f->ebits) - 1);
	uint32_t maxexp = (1u << f->ebits) - 1;
	bool neg = (x & sign_bit(f)) != 0;
	float v;

	if (f->ieee && e == maxexp)
		v = m ? NAN : INFINITY;
	else if (!f->ieee && e == maxexp && m == (1u << f->mbits) - 1)
		v = NAN;
	else if (e == 0)
		v = ldexpf((float)m, 1 - f->bias - f->mbits);
	else
		v = ldexpf((float)(m | (1u << f->mbits)),
			   (int)e - f->bias - f->mbits);
	return neg ? -v : v;
}

float
sim_f16_to_f32(uint16_t h)
{
	uint32_t s = (uint32_t)(h & 0x8000) << 16, e = (h >> 10) & 0x1f;
	uint32_t m = h & 0x3ff, bits;
	float f;

	if (e == 0)
		return to_float(&F16, h);
	if (e == 31)
		bits = s | 0x7f800000u | (m << 13);
	else
		bits = s | ((e + 112) << 23) | (m << 13);
	memcpy(&f, &bits, 4);
	return f;
}

float
sim_bf16_to_f32(uint16_t h)
{
	uint32_t bits = (uint32_t)h << 16;
	float f;

	memcpy(&f, &bits, 4);
	return f;
}

float
sim_e4m3_to_f32(uint8_t x)
{
	return to_float(&E4M3, x);
}

float
sim_e5m2_to_f32(uint8_t x)
{
	return sim_f16_to_f32((uint16_t)(x << 8));
}

uint16_t
sim_f64_to_f16(double d)
{
	return (uint16_t)from_double(&F16, d);
}

uint16_t
sim_f64_to_bf16(double d)
{
	return (uint16_t)from_double(&BF16, d);
}

uint8_t
sim_f64_to_e4m3(double d)
{
	return (uint8_t)from_double(&E4M3, d);
}

uint8_t
sim_f64_to_e5m2(double d)
{
	return (uint8_t)from_double(&E5M2, d);
}

static const Fmt *
fmt_of(TypeKind k)
{
	switch (k) {
	case TY_F16: return &F16;
	case TY_BF16: return &BF16;
	case TY_F8E4M3: return &E4M3;
	case TY_F8E5M2: return &E5M2;
	default: return NULL;
	}
}

uint64_t
sim_int_to_narrow(TypeKind k, bool neg, uint64_t mag)
{
	const Fmt *f = fmt_of(k);

	return f ? round_fmt(f, neg, mag, 0) : 0;
}

int
sim_kind_bytes(TypeKind k)
{
	switch (k) {
	case TY_I1: case TY_I8: case TY_U8: case TY_F8E4M3: case TY_F8E5M2:
		return 1;
	case TY_I16: case TY_U16: case TY_F16: case TY_BF16:
		return 2;
	case TY_I32: case TY_U32: case TY_F32:
		return 4;
	default:
		return 8;
	}
}

int
sim_esize(Type *t)
{
	t = ty_elem(t);
	if (t->kind == TY_PTR)
		return 8;
	return ty_bytes(t);
}

double
sim_get_f(TypeKind k, const void *p)
{
	uint16_t h;
	float f;
	double d;

	switch (k) {
	case TY_F8E4M3: return sim_e4m3_to_f32(*(const uint8_t *)p);
	case TY_F8E5M2: return sim_e5m2_to_f32(*(const uint8_t *)p);
	case TY_F16: memcpy(&h, p, 2); return sim_f16_to_f32(h);
	case TY_BF16: memcpy(&h, p, 2); return sim_bf16_to_f32(h);
	case TY_F32: memcpy(&f, p, 4); return f;
	case TY_F64: memcpy(&d, p, 8); return d;
	default:
		if (ty_is_unsigned_kind(k))
			return (double)(uint64_t)sim_get_i(k, p);
		return (double)sim_get_i(k, p);
	}
}

void
sim_put_f(TypeKind k, void *p, double v)
{
	uint16_t h;
	float f;

	switch (k) {
	case TY_F8E4M3: *(uint8_t *)p = sim_f64_to_e4m3(v); break;
	case TY_F8E5M2: *(uint8_t *)p = sim_f64_to_e5m2(v); break;
	case TY_F16: h = sim_f64_to_f16(v); memcpy(p, &h, 2); break;
	case TY_BF16: h = sim_f64_to_bf16(v); memcpy(p, &h, 2); break;
	case TY_F32: f = (float)v; memcpy(p, &f, 4); break;
	case TY_F64: memcpy(p, &v, 8); break;
	default: break;
	}
}

int64_t
sim_get_i(TypeKind k, const void *p)
{
	switch (k) {
	case TY_I1: return *(const uint8_t *)p & 1;
	case TY_I8: return *(const int8_t *)p;
	case TY_U8: return *(const uint8_t *)p;
	case TY_I16: { int16_t v; memcpy(&v, p, 2); return v; }
	case TY_U16: { uint16_t v; memcpy(&v, p, 2); return v; }
	case TY_I32: { int32_t v; memcpy(&v, p, 4); return v; }
	case TY_U32: { uint32_t v; memcpy(&v, p, 4); return v; }
	default: { int64_t v; memcpy(&v, p, 8); return v; }
	}
}

void
sim_put_i(TypeKind k, void *p, int64_t v)
{
	uint64_t u = (uint64_t)v;

	switch (k) {
	case TY_I1: *(uint8_t *)p = (uint8_t)(u & 1); break;
	case TY_I8: case TY_U8: *(uint8_t *)p = (uint8_t)u; break;
	case TY_I16: case TY_U16: { uint16_t x = (uint16_t)u; memcpy(p, &x, 2); break; }
	case TY_I32: case TY_U32: { uint32_t x = (uint32_t)u; memcpy(p, &x, 4); break; }
	default: memcpy(p, &u, 8); break;
	}
}

void
sim_to_f32(TypeKind k, const void *src, float *dst, size_t n)
{
	const uint8_t *b = src;
	const uint16_t *h = src;
	size_t i;

	switch (k) {
	case TY_F32:
		memcpy(dst, src, n * 4);
		break;
	case TY_F16:
		for (i = 0; i < n; i++)
			dst[i] = sim_f16_to_f32(h[i]);
		break;
	case TY_BF16:
		for (i = 0; i < n; i++)
			dst[i] = sim_bf16_to_f32(h[i]);
		break;
	case TY_F8E4M3:
		for (i = 0; i < n; i++)
			dst[i] = sim_e4m3_to_f32(b[i]);
		break;
	case TY_F8E5M2:
		for (i = 0; i < n; i++)
			dst[i] = sim_e5m2_to_f32(b[i]);
		break;
	default:
		for (i = 0; i < n; i++)
			dst[i] = (float)sim_get_f(k, b + i * (size_t)sim_kind_bytes(k));
		break;
	}
}

void
sim_from_f32(TypeKind k, const float *src, void *dst, size_t n)
{
	uint8_t *b = dst;
	uint16_t *h = dst;
	size_t i;

	switch (k) {
	case TY_F32:
		memcpy(dst, src, n * 4);
		break;
	case TY_F16:
		for (i = 0; i < n; i++)
			h[i] = (uint16_t)from_double(&F16, src[i]);
		break;
	case TY_BF16:
		for (i = 0; i < n; i++)
			h[i] = (uint16_t)from_double(&BF16, src[i]);
		break;
	case TY_F8E4M3:
		for (i = 0; i < n; i++)
			b[i] = (uint8_t)from_double(&E4M3, src[i]);
		break;
	case TY_F8E5M2:
		for (i = 0; i < n; i++)
			b[i] = (uint8_t)from_double(&E5M2, src[i]);
		break;
	default:
		for (i = 0; i < n; i++)
			sim_put_f(k, b + i * (size_t)sim_kind_bytes(k), src[i]);
		break;
	}
}
