/*
 * grid_test: grid functions evaluated on the host (runtime/grid.c) against
 * the simulator's interpreter, which TLXRT_GRID_INTERP=1 makes
 * rt_args_check use: the same grid (and the same verdict) for every op the
 * host program has, signed and unsigned, on random arguments; a grid
 * function with an op it lacks, or a division by zero, goes to the
 * interpreter.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/rt.h"
#include "testsuite/unit/test.h"

static const char MOD[] =
	"module \"grid_test\"\n"
	"kernel @k(%a: i32, %b: i32, %c: u32, %d: i64) {warps = 1, grid = \"k.grid\"} {\n"
	"  return\n"
	"}\n"
	"grid @k.grid(%a: i32, %b: i32, %c: u32, %d: i64) -> (i32, i32, i32) {\n"
	"  %k7: i32 = const {value = 7}\n"
	"  %k3: i32 = const {value = 3}\n"
	"  %k1: i32 = const {value = 1}\n"
	"  %s: i32 = add %a, %b\n"
	"  %t: i32 = sub %a, %b\n"
	"  %m: i32 = mul %s, %k7\n"
	"  %q: i32 = div %m, %k3\n"
	"  %r: i32 = rem %t, %k7\n"
	"  %lo: i32 = min %q, %r\n"
	"  %hi: i32 = max %q, %r\n"
	"  %x: i32 = xor %lo, %hi\n"
	"  %o: i32 = or %x, %k1\n"
	"  %n: i32 = and %o, %b\n"
	"  %sh: i32 = shl %n, %k3\n"
	"  %sr: i32 = shr %sh, %k1\n"
	"  %ng: i32 = neg %sr\n"
	"  %nt: i32 = not %ng\n"
	"  %lt: i1 = cmp %a, %b {pred = lt}\n"
	"  %ge: i1 = cmp %nt, %t {pred = ge}\n"
	"  %eq: i1 = cmp %q, %r {pred = eq}\n"
	"  %ne: i1 = cmp %lo, %hi {pred = ne}\n"
	"  %le: i1 = cmp %x, %a {pred = le}\n"
	"  %gt: i1 = cmp %o, %b {pred = gt}\n"
	"  %c1: i1 = xor %lt, %ge\n"
	"  %c2: i1 = or %eq, %ne\n"
	"  %c3: i1 = and %le, %gt\n"
	"  %c4: i1 = not %c3\n"
	"  %y0: i32 = select %c1, %nt, %sr\n"
	"  %y1: i32 = select %c2, %y0, %k7\n"
	"  %y2: i32 = select %c4, %k3, %y1\n"
	"  %k5u: u32 = const {value = 5}\n"
	"  %cu: u32 = div %c, %k5u\n"
	"  %ru: u32 = rem %c, %k5u\n"
	"  %mu: u32 = max %cu, %ru\n"
	"  %su: u32 = shr %mu, %k5u\n"
	"  %ltu: i1 = cmp %c, %su {pred = lt}\n"
	"  %w: i64 = cvt %y2\n"
	"  %wd: i64 = add %w, %d\n"
	"  %k9: i64 = const {value = 9}\n"
	"  %wq: i64 = div %wd, %k9\n"
	"  %wn: i32 = cvt %wq\n"
	"  %wh: i16 = cvt %wd\n"
	"  %wx: i32 = cvt %wh\n"
	"  %uc: i32 = cvt %su\n"
	"  %z: i32 = select %ltu, %uc, %wx\n"
	"  return %wn, %z, %y2\n"
	"}\n"
	/* divides by an argument: 0 goes to the interpreter */
	"kernel @dz(%a: i32, %b: i32) {warps = 1, grid = \"dz.grid\"} {\n"
	"  return\n"
	"}\n"
	"grid @dz.grid(%a: i32, %b: i32) -> (i32, i32, i32) {\n"
	"  %k1: i32 = const {value = 1}\n"
	"  %q: i32 = div %a, %b\n"
	"  return %q, %k1, %k1\n"
	"}\n";

static uint64_t rng = 0x243f6a8885a308d3ull;

static uint64_t
next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static int32_t
some_i32(void)
{
	switch (next() % 4) {
	case 0: return (int32_t)(next() % 64) - 32;
	case 1: return (int32_t)next();
	case 2: return next() % 2 ? INT32_MIN : INT32_MAX;
	default: return (int32_t)(next() % 100000);
	}
}

/* rt_args_check on args, the host program's way or the interpreter's. */
static int
grid_of(tlxrt_kernel *k, const tlxrt_arg *args, int n, uint32_t grid[3],
	bool interp)
{
	RtArg out[8];
	uint32_t cluster[3];

	if (interp)
		setenv("TLXRT_GRID_INTERP", "1", 1);
	else
		unsetenv("TLXRT_GRID_INTERP");
	memset(grid, 0, 3 * sizeof *grid);
	return rt_args_check(k, NULL, args, n, out, grid, cluster);
}

int
main(void)
{
	tlxrt_device *dev;
	tlxrt_module *m;
	tlxrt_kernel *k, *dz;
	tlxrt_arg a[4];
	uint32_t g0[3], g1[3];
	int i, r0, r1, same = 0;

	ASSERT(TLXRT_OK, tlxrt_device_open("sim", &dev));
	ASSERT(TLXRT_OK, tlxrt_module_load(dev, MOD, strlen(MOD), &m));
	ASSERT(TLXRT_OK, tlxrt_kernel_get(m, "k", &k));
	ASSERT(TLXRT_OK, tlxrt_kernel_get(m, "dz", &dz));
	CHECK(k->gprog != NULL);   /* every op of it runs on the host */
	CHECK(dz->gprog != NULL);
	for (i = 0; i < 20000; i++) {
		a[0] = tlxrt_arg_i32(some_i32());
		a[1] = tlxrt_arg_i32(some_i32());
		a[2] = tlxrt_arg_u32((uint32_t)next());
		a[3] = tlxrt_arg_i64((int64_t)next() >> (next() % 64));
		r0 = grid_of(k, a, 4, g0, false);
		r1 = grid_of(k, a, 4, g1, true);
		ASSERT(r1, r0);
		if (r0 == TLXRT_OK && r1 == TLXRT_OK) {
			ASSERT(g1[0], g0[0]);
			ASSERT(g1[1], g0[1]);
			ASSERT(g1[2], g0[2]);
			same++;
		}
		if (test_failures > 5)
			break;
	}
	CHECK(same > 1000);  /* most draws make a valid grid */
	/* a division by zero: the interpreter's error either way */
	a[0] = tlxrt_arg_i32(5);
	a[1] = tlxrt_arg_i32(0);
	r0 = grid_of(dz, a, 2, g0, false);
	CHECK(r0 != TLXRT_OK);
	CHECK(strstr(tlxrt_errmsg(dev), "grid function 'dz.grid'") != NULL);
	a[1] = tlxrt_arg_i32(2);
	ASSERT(TLXRT_OK, grid_of(dz, a, 2, g0, false));
	ASSERT(2, g0[0]);
	tlxrt_module_unload(m);
	tlxrt_device_close(dev);
	if (!test_failures)
		printf("ok: %d grids the same both ways\n", same);
	return test_failures != 0;
}
