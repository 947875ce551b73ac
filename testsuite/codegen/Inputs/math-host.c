/*
 * math-host.c: codegen's sin, cos and fmod (f32), extracted from tlxc's
 * -O0 LLVM IR and compiled for the host, against the C library: sin and
 * cos within 2 ulp of the exact value (libm's double result) for random
 * floats of every exponent, the hard arguments near multiples of pi/2
 * and the specials; fmod bit for bit.  Prints one line per function with
 * the largest error and the failures (at most 10 listed).  With the
 * argument "all", sin and cos of every float instead (minutes).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

float __tlx_sin_f32(float);
float __tlx_cos_f32(float);
float __tlx_fmod_f32(float, float);

static uint64_t state = 0x9e3779b97f4a7c15ull;

static uint64_t
rnd(void)
{
	state ^= state << 13;
	state ^= state >> 7;
	state ^= state << 17;
	return state;
}

static float
fbits(uint32_t b)
{
	float f;

	memcpy(&f, &b, 4);
	return f;
}

static uint32_t
bitsf(float f)
{
	uint32_t b;

	memcpy(&b, &f, 4);
	return b;
}

/* |got - exact| in units of the last place of exact as a float */
static double
ulps(float got, double exact)
{
	int e;

	if (isnan(exact))
		return isnan(got) ? 0 : INFINITY;
	if (isnan(got))
		return INFINITY;
	frexp(exact, &e);
	if (e - 24 < -149)
		e = -149 + 24;
	return fabs((double)got - exact) / ldexp(1, e - 24);
}

typedef struct Stat {
	const char *name;
	double worst;
	float worst_x;
	long n, bad;
} Stat;

static void
check(Stat *s, float x, float got, double exact, double tol)
{
	double u = ulps(got, exact);

	s->n++;
	/* the sign of a zero result counts too */
	if (exact == 0 && got == 0 && signbit(exact) != signbit(got))
		u = INFINITY;
	if (u > s->worst) {
		s->worst = u;
		s->worst_x = x;
	}
	if (u > tol && s->bad++ < 10)
		printf("%s(%a) = %a, exact %a (%.2f ulp)\n", s->name, x, got,
		       exact, u);
}

static void
one(Stat *ss, Stat *sc, float x)
{
	check(ss, x, __tlx_sin_f32(x), sin((double)x), 2.0);
	check(sc, x, __tlx_cos_f32(x), cos((double)x), 2.0);
}

int
main(int argc, char **argv)
{
	int all = argc > 1 && !strcmp(argv[1], "all");
	long n = argc > 1 && !all ? atol(argv[1]) : 2000000, i;
	Stat ss = { "sin", 0, 0, 0, 0 }, sc = { "cos", 0, 0, 0, 0 };
	Stat sf = { "fmod", 0, 0, 0, 0 };
	static const float special[] = { 0.0f, -0.0f, INFINITY, -INFINITY, NAN,
					 1e-45f, -1e-45f, 1e-30f, 0x1p-126f,
					 3.4028235e38f, -3.4028235e38f, 1e5f,
					 99999.99f, 100000.01f, 0x1p24f, 0x1p63f };
	size_t k;

	for (k = 0; k < sizeof special / sizeof special[0]; k++)
		one(&ss, &sc, special[k]);
	if (all) {
		uint64_t b;

		for (b = 0; b <= UINT32_MAX; b++)
			one(&ss, &sc, fbits((uint32_t)b));
		n = 0;
	}
	for (i = 0; i < n; i++) {
		uint32_t b = (uint32_t)rnd();
		float x;

		if (i % 4 == 0)  /* |x| < 2^20, where most arguments are */
			b = (b & 0x807fffff) | ((100 + (b >> 23) % 47) << 23);
		x = fbits(b);
		if (i % 8 == 1) {
			/* near a multiple of pi/2 */
			double m = (double)(rnd() % 2000000) * 1.5707963267948966;

			x = (float)m;
			x = fbits(bitsf(x) + (uint32_t)(rnd() % 5) - 2);
		}
		one(&ss, &sc, x);
	}
	for (i = 0; i < n / 4; i++) {
		float x = fbits((uint32_t)rnd()), y = fbits((uint32_t)rnd());
		float got, want;

		if (i % 3 == 0)
			x = y * (float)(rnd() % 1000) * ((rnd() & 1) ? -1 : 1);
		got = __tlx_fmod_f32(x, y);
		want = fmodf(x, y);
		sf.n++;
		if (memcmp(&got, &want, 4) && !(isnan(got) && isnan(want))) {
			sf.worst = INFINITY;
			if (sf.bad++ < 10)
				printf("fmod(%a, %a) = %a, exact %a\n", x, y, got, want);
		}
	}
	printf("sin: %ld arguments, worst %.3f ulp at %a, %ld over 2\n", ss.n,
	       ss.worst, ss.worst_x, ss.bad);
	printf("cos: %ld arguments, worst %.3f ulp at %a, %ld over 2\n", sc.n,
	       sc.worst, sc.worst_x, sc.bad);
	printf("fmod: %ld pairs, %ld differ\n", sf.n, sf.bad);
	return ss.bad || sc.bad || sf.bad;
}
