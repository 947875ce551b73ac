/* Unit tests of ir/numeric.c: every f16 and bf16 bit pattern, every fp8
 * pattern both ways, rounding ties, and random f32 inputs, all against a
 * reference written here in double precision: decoding from the format's
 * definition, encoding by searching the sorted table of the format's
 * values for the nearest one (ties to the even pattern). */
#include <math.h>

#include "ir/ir.h"
#include "test.h"

typedef struct Ref {
	const char *name;
	int ebits, mbits;
	bool ieee;  /* has infinities and NaNs at the top exponent */
	double vals[40000];   /* non-negative finite values, ascending */
	uint32_t bits[40000];
	int n;
	uint32_t inf, nan_mag;
} Ref;

static double
pow2(int e)
{
	double v = 1;

	for (; e > 0; e--)
		v *= 2;
	for (; e < 0; e++)
		v /= 2;
	return v;
}

/* The value of a bit pattern, straight from the format's definition. */
static double
ref_decode(const Ref *r, uint32_t b)
{
	int bias = (1 << (r->ebits - 1)) - 1;
	uint32_t e = (b >> r->mbits) & ((1u << r->ebits) - 1);
	uint32_t m = b & ((1u << r->mbits) - 1);
	double s = (b >> (r->ebits + r->mbits)) & 1 ? -1 : 1;

	if (r->ieee && e == (1u << r->ebits) - 1)
		return m ? NAN : s * INFINITY;
	if (!r->ieee && e == (1u << r->ebits) - 1 && m == (1u << r->mbits) - 1)
		return NAN;
	if (e == 0)
		return s * m * pow2(1 - bias - r->mbits);
	return s * (m + pow2(r->mbits)) * pow2((int)e - bias - r->mbits);
}

static void
ref_init(Ref *r, const char *name, int ebits, int mbits, bool ieee)
{
	uint32_t b;

	r->name = name;
	r->ebits = ebits;
	r->mbits = mbits;
	r->ieee = ieee;
	r->n = 0;
	for (b = 0; b < 1u << (ebits + mbits); b++) {
		double v = ref_decode(r, b);

		if (isnan(v) || isinf(v))
			continue;
		r->vals[r->n] = v;
		r->bits[r->n++] = b;
	}
	r->inf = ((1u << ebits) - 1) << mbits;
	r->nan_mag = ieee ? r->inf | 1u << (mbits - 1) : (1u << (ebits + mbits)) - 1;
}

/* The nearest value's pattern, ties to even; past the largest finite value
 * IEEE formats round towards a virtual next value (infinity), e4m3
 * saturates. */
static uint32_t
ref_encode(const Ref *r, double x)
{
	uint32_t sign = signbit(x) ? 1u << (r->ebits + r->mbits) : 0;
	double a = fabs(x), lo, hi, top;
	int l = 0, h = r->n - 1;

	if (isnan(x))
		return sign | r->nan_mag;
	top = r->vals[r->n - 1];
	if (a > top) {
		double next = top + (top - r->vals[r->n - 2]);

		if (!r->ieee)
			return sign | r->bits[r->n - 1];
		if (a > (top + next) / 2 || (a == (top + next) / 2))
			return sign | r->inf;  /* a tie goes to the even one */
		return sign | r->bits[r->n - 1];
	}
	while (l < h) {  /* the largest value <= a */
		int mid = (l + h + 1) / 2;

		if (r->vals[mid] <= a)
			l = mid;
		else
			h = mid - 1;
	}
	lo = r->vals[l];
	if (lo == a || l == r->n - 1)
		return sign | r->bits[l];
	hi = r->vals[l + 1];
	if (a - lo < hi - a)
		return sign | r->bits[l];
	if (a - lo > hi - a)
		return sign | r->bits[l + 1];
	return sign | ((r->bits[l] & 1) ? r->bits[l + 1] : r->bits[l]);
}

static uint32_t
enc(const Ref *r, float f)
{
	if (r->ebits == 5 && r->mbits == 10)
		return ir_f32_to_f16(f);
	if (r->ebits == 8)
		return ir_f32_to_bf16(f);
	if (r->ebits == 4)
		return ir_f32_to_e4m3(f);
	return ir_f32_to_e5m2(f);
}

static float
dec(const Ref *r, uint32_t b)
{
	if (r->ebits == 5 && r->mbits == 10)
		return ir_f16_to_f32((uint16_t)b);
	if (r->ebits == 8)
		return ir_bf16_to_f32((uint16_t)b);
	if (r->ebits == 4)
		return ir_e4m3_to_f32((uint8_t)b);
	return ir_e5m2_to_f32((uint8_t)b);
}

static int fails;

static void
expect_enc(const Ref *r, float f)
{
	uint32_t want = ref_encode(r, f), got = enc(r, f);

	if (want != got && fails++ < 10)
		fprintf(stderr, "%s: encode %a: expected 0x%x, got 0x%x\n",
			r->name, f, want, got);
	ASSERT(want, got);
}

/* Every pattern decodes as the definition says and encodes back. */
static void
test_all_patterns(Ref *r)
{
	uint32_t b;

	for (b = 0; b < 1u << (r->ebits + r->mbits + 1); b++) {
		double want = ref_decode(r, b & ((1u << (r->ebits + r->mbits)) - 1));
		float got = dec(r, b);

		if (b >> (r->ebits + r->mbits))
			want = -want;
		if (isnan(want)) {
			CHECK(isnan(got));
			CHECK(isnan(dec(r, enc(r, got))));
			continue;
		}
		if ((double)got != want && fails++ < 10)
			fprintf(stderr, "%s: decode 0x%x: expected %a, got %a\n",
				r->name, b, want, (double)got);
		CHECK((double)got == want);
		CHECK(!signbit(got) == !signbit(want));
		ASSERT(b, enc(r, got));
	}
}

/* Midpoints between neighbours (ties to even) and their f32 neighbours. */
static void
test_ties(Ref *r)
{
	int i;

	for (i = 0; i + 1 < r->n; i++) {
		float m = (float)((r->vals[i] + r->vals[i + 1]) / 2);

		expect_enc(r, m);
		expect_enc(r, -m);
		expect_enc(r, nextafterf(m, 0));
		expect_enc(r, nextafterf(m, INFINITY));
	}
	expect_enc(r, INFINITY);
	expect_enc(r, -INFINITY);
	expect_enc(r, 1e30f);
	expect_enc(r, 1e-30f);
	expect_enc(r, -0.0f);
}

static void
test_random(Ref *r, int n)
{
	uint64_t x = 0x9e3779b97f4a7c15ull;
	int i;

	for (i = 0; i < n; i++) {
		uint32_t b;
		float f;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		b = (uint32_t)x;
		memcpy(&f, &b, sizeof f);
		if (isnan(f))
			continue;
		expect_enc(r, f);
	}
}

static Ref f16, bf16, e4m3, e5m2;

static void
test_formats(void)
{
	Ref *refs[] = { &f16, &bf16, &e4m3, &e5m2 };
	size_t i;

	ref_init(&f16, "f16", 5, 10, true);
	ref_init(&bf16, "bf16", 8, 7, true);
	ref_init(&e4m3, "e4m3", 4, 3, false);
	ref_init(&e5m2, "e5m2", 5, 2, true);
	ASSERT(31744, f16.n);
	ASSERT(127, e4m3.n);
	for (i = 0; i < countof(refs); i++) {
		test_all_patterns(refs[i]);
		test_ties(refs[i]);
		test_random(refs[i], 1 << 20);
	}
}

/* Spot checks of the documented corners. */
static void
test_corners(void)
{
	ASSERT(0x3c00, ir_f32_to_f16(1.0f));
	ASSERT(0x3c00, ir_f32_to_f16(1.0f + 0x1p-11f));   /* tie: even */
	ASSERT(0x3c02, ir_f32_to_f16(1.0f + 0x3p-11f));   /* tie: even */
	ASSERT(0x7bff, ir_f32_to_f16(65519.0f));
	ASSERT(0x7c00, ir_f32_to_f16(65520.0f));          /* tie to inf */
	ASSERT(0x0001, ir_f32_to_f16(0x1p-24f));
	ASSERT(0x0000, ir_f32_to_f16(0x1p-25f));          /* tie to 0 */
	ASSERT(0x0001, ir_f32_to_f16(0x1.000002p-25f));
	ASSERT(0x7e00, ir_f32_to_f16(NAN));
	ASSERT(0x3f80, ir_f32_to_bf16(1.0f));
	ASSERT(0x3f80, ir_f32_to_bf16(1.00390625f));      /* tie: even */
	ASSERT(0x3f82, ir_f32_to_bf16(1.01171875f));      /* tie: even */
	ASSERT(0x7f80, ir_f32_to_bf16(INFINITY));
	CHECK(isnan(ir_bf16_to_f32(ir_f32_to_bf16(NAN))));
	ASSERT(0x7e, ir_f32_to_e4m3(448.0f));
	ASSERT(0x7e, ir_f32_to_e4m3(1000.0f));            /* saturates */
	ASSERT(0x7e, ir_f32_to_e4m3(INFINITY));
	ASSERT(0xfe, ir_f32_to_e4m3(-INFINITY));
	ASSERT(0x7f, ir_f32_to_e4m3(NAN));                /* keeps NaN */
	ASSERT(0x01, ir_f32_to_e4m3(0x1p-9f));
	ASSERT(0x00, ir_f32_to_e4m3(0x1p-10f));           /* tie to 0 */
	ASSERT(0x7b, ir_f32_to_e5m2(57344.0f));
	ASSERT(0x7c, ir_f32_to_e5m2(61440.0f));           /* tie to inf */
	ASSERT(0x7b, ir_f32_to_e5m2(61439.0f));
	ASSERT(0x7c, ir_f32_to_e5m2(1e6f));
	CHECK(448.0f == ir_e4m3_to_f32(0x7e));
	CHECK(isnan(ir_e4m3_to_f32(0xff)));
	CHECK(isinf(ir_e5m2_to_f32(0x7c)));
	/* from double: one rounding, not two through f32 */
	ASSERT(0x3c01, ir_float_to_bits(TY_F16, 1.0 + 0x1p-11 + 0x1p-40));
	ASSERT(0x3c00, ir_float_to_bits(TY_F16, 1.0 + 0x1p-11));
}

static void
test_ints(void)
{
	Num a, b, r;

	ASSERT(-1, ir_int_wrap(TY_I8, 255));
	ASSERT(255, ir_int_wrap(TY_U8, -1));
	ASSERT(1, ir_int_wrap(TY_I1, 3));
	ASSERT(-1, ir_int_wrap(TY_U64, ~0ull));
	a.i = INT32_MIN;
	b.i = -1;
	CHECK(ir_num_binary(OP_DIV, TY_I32, a, b, &r));
	ASSERT(INT32_MIN, r.i);
	CHECK(ir_num_binary(OP_REM, TY_I32, a, b, &r));
	ASSERT(0, r.i);
	a.i = INT64_MIN;
	CHECK(ir_num_binary(OP_DIV, TY_I64, a, b, &r));
	ASSERT(INT64_MIN, r.i);
	b.i = 0;
	CHECK(!ir_num_binary(OP_DIV, TY_I64, a, b, &r));
	a.i = -7;
	b.i = 2;
	CHECK(ir_num_binary(OP_DIV, TY_I32, a, b, &r));
	ASSERT(-3, r.i);
	CHECK(ir_num_binary(OP_REM, TY_I32, a, b, &r));
	ASSERT(-1, r.i);
	a.i = -8;
	b.i = 33;  /* counts are taken modulo the width */
	CHECK(ir_num_binary(OP_SHR, TY_I32, a, b, &r));
	ASSERT(-4, r.i);
	a.i = 0xfffffff8;
	CHECK(ir_num_binary(OP_SHR, TY_U32, a, b, &r));
	ASSERT(0x7ffffffc, r.i);
	CHECK(ir_num_binary(OP_SHL, TY_I8, (Num){ .i = 1 }, (Num){ .i = 7 }, &r));
	ASSERT(-128, r.i);
	CHECK(ir_num_binary(OP_MIN, TY_U32, (Num){ .i = 0xffffffff },
			    (Num){ .i = 1 }, &r));
	ASSERT(1, r.i);
	ASSERT(1, ir_num_cmp("lt", TY_I32, (Num){ .i = -1 }, (Num){ .i = 0 }));
	ASSERT(0, ir_num_cmp("lt", TY_U64, (Num){ .i = -1 }, (Num){ .i = 0 }));
	ASSERT(1, ir_num_cmp("ne", TY_F32, (Num){ .f = NAN }, (Num){ .f = 0 }));
	ASSERT(0, ir_num_cmp("eq", TY_F32, (Num){ .f = NAN }, (Num){ .f = NAN }));
	ASSERT(-1, ir_num_cmp("ult", TY_F32, (Num){ .f = 0 }, (Num){ .f = 0 }));
}

static void
test_cvt(void)
{
	Num v, r;

	v.i = (1 << 25) + (1 << 17) + 1;  /* just above a bf16 tie */
	r = ir_num_cvt(TY_BF16, TY_I64, v);
	CHECK(r.f == (double)((1 << 25) + (1 << 18)));
	v.i = -1;
	r = ir_num_cvt(TY_F32, TY_U64, v);
	CHECK(r.f == 0x1p64);
	r = ir_num_cvt(TY_F32, TY_I64, v);
	CHECK(r.f == -1.0);
	r = ir_num_cvt(TY_U32, TY_I8, v);  /* sign-extends by the source */
	ASSERT(0xffffffff, r.i);
	v.i = 1;
	r = ir_num_cvt(TY_I32, TY_I1, v);  /* i1 true is 1 */
	ASSERT(1, r.i);
	v.f = 3e9;
	ASSERT(INT32_MAX, ir_num_cvt(TY_I32, TY_F64, v).i);
	ASSERT(3000000000, ir_num_cvt(TY_U32, TY_F64, v).i);
	v.f = -3e9;
	ASSERT(INT32_MIN, ir_num_cvt(TY_I32, TY_F64, v).i);
	ASSERT(0, ir_num_cvt(TY_U32, TY_F64, v).i);
	v.f = 1e30;
	ASSERT(INT64_MAX, ir_num_cvt(TY_I64, TY_F32, v).i);
	ASSERT(-1, ir_num_cvt(TY_U64, TY_F32, v).i);
	v.f = -2.9;
	ASSERT(-2, ir_num_cvt(TY_I8, TY_F32, v).i);
	v.f = NAN;
	ASSERT(0, ir_num_cvt(TY_I32, TY_F32, v).i);
	ASSERT(1, ir_num_cvt(TY_I1, TY_F32, v).i);
	v.f = 0.5;
	ASSERT(1, ir_num_cvt(TY_I1, TY_F32, v).i);
	v.f = 1e10;
	CHECK(ir_num_cvt(TY_F8E4M3, TY_F32, v).f == 448.0);
	CHECK(isinf(ir_num_cvt(TY_F8E5M2, TY_F32, v).f));
	v.f = 0.1;
	CHECK(ir_num_cvt(TY_F32, TY_F64, v).f == (double)0.1f);
}

static void
test_floats(void)
{
	Num a = { .f = 1.0 }, b = { .f = 0x1p-11 }, r;

	/* f16: 1 + 2^-11 is a tie, rounds to 1 */
	CHECK(ir_num_binary(OP_ADD, TY_F16, a, b, &r));
	CHECK(r.f == 1.0);
	CHECK(ir_num_binary(OP_ADD, TY_F32, a, b, &r));
	CHECK(r.f == 1.0 + 0x1p-11);
	a.f = NAN;
	CHECK(ir_num_binary(OP_MIN, TY_F32, a, b, &r));
	CHECK(r.f == 0x1p-11);
	a.f = -0.0;
	b.f = 0.0;
	CHECK(ir_num_binary(OP_MIN, TY_F32, a, b, &r));
	CHECK(signbit(r.f));
	CHECK(ir_num_binary(OP_MAX, TY_F32, a, b, &r));
	CHECK(!signbit(r.f));
	a.f = 2.0;
	CHECK(ir_num_unary(OP_SQRT, TY_F16, a, &r));
	CHECK(r.f == ir_f16_to_f32(ir_f32_to_f16(1.41421356f)));
	CHECK(!ir_num_unary(OP_EXP, TY_F32, a, &r));
	CHECK(!ir_num_binary(OP_ADD, TY_F8E4M3, a, a, &r));
}

int
main(void)
{
	test_formats();
	test_corners();
	test_ints();
	test_cvt();
	test_floats();
	TEST_MAIN_END();
}
