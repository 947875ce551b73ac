/*
 * num.c: element formats.  Narrow floats (f16, bf16, f8e4m3, f8e5m2) are
 * stored as their bits; arithmetic on them happens in f32 (exact: every
 * narrow value is an f32) and is rounded back to nearest even exactly
 * once.  All rounding is ir/numeric.c's (the compiler folds constants
 * with the same code, so both agree bit for bit); here are the element
 * accessors and the bulk loops the tile ops use.
 */
#include <math.h>
#include <string.h>

#include "sim.h"

float
sim_f16_to_f32(uint16_t h)
{
	uint32_t s = (uint32_t)(h & 0x8000) << 16, e = (h >> 10) & 0x1f;
	uint32_t m = h & 0x3ff, bits;
	float f;

	if (e == 0)
		return ir_f16_to_f32(h);
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
	return ir_e4m3_to_f32(x);
}

float
sim_e5m2_to_f32(uint8_t x)
{
	return sim_f16_to_f32((uint16_t)(x << 8));
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
	case TY_F8E4M3: case TY_F8E5M2:
		*(uint8_t *)p = (uint8_t)ir_float_to_bits(k, v);
		break;
	case TY_F16: case TY_BF16:
		h = (uint16_t)ir_float_to_bits(k, v);
		memcpy(p, &h, 2);
		break;
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
			h[i] = ir_f32_to_f16(src[i]);
		break;
	case TY_BF16:
		for (i = 0; i < n; i++)
			h[i] = ir_f32_to_bf16(src[i]);
		break;
	case TY_F8E4M3:
		for (i = 0; i < n; i++)
			b[i] = ir_f32_to_e4m3(src[i]);
		break;
	case TY_F8E5M2:
		for (i = 0; i < n; i++)
			b[i] = ir_f32_to_e5m2(src[i]);
		break;
	default:
		for (i = 0; i < n; i++)
			sim_put_f(k, b + i * (size_t)sim_kind_bytes(k), src[i]);
		break;
	}
}
