"""The tlx package on the simulator with numpy arrays: examples against
references in higher precision on random inputs with poisoned outputs,
ragged sizes, and the errors raised for wrong arguments and sources.

    TLX_LIBDIR=build/.libs python3 python/tests/test_sim.py [EXAMPLES_DIR]

Prints one line per test and "N passed, N failed"; exits non-zero on a
failure."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import tlx  # noqa: E402

examples = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples")
rng = np.random.default_rng(7)
results = []


def test(fn):
    try:
        fn()
        results.append(True)
        print("ok:", fn.__name__)
    except Exception as e:  # report and go on
        results.append(False)
        print("FAIL: %s: %s: %s" % (fn.__name__, type(e).__name__, e))
    return fn


def bf16(a):
    """float32 -> bf16 bits, rounded to nearest even."""
    u = np.asarray(a, np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def f32(b):
    return (b.astype(np.uint32) << 16).view(np.float32)


tlx.device("sim")


@test
def vadd():
    k = tlx.compile(os.path.join(examples, "vadd.tlx"), BLOCK=256)
    for n in (1, 1000, 4099):
        x = rng.standard_normal(n).astype(np.float32)
        y = rng.standard_normal(n).astype(np.float32)
        out = np.full(n, np.nan, np.float32)
        k(x, y, out, n)
        assert np.array_equal(out, x + y), "n=%d" % n
    # an explicit grid
    out = np.full(300, np.nan, np.float32)
    k[(2,)](x[:300].copy(), y[:300].copy(), out, 300)
    assert np.array_equal(out, x[:300] + y[:300])


@test
def vadd_source_text():
    src = open(os.path.join(examples, "vadd.tlx")).read()
    k = tlx.compile(src, BLOCK=128)
    x = np.arange(200, dtype=np.float32)
    out = np.zeros(200, np.float32)
    k(x, x, out, 200)
    assert np.array_equal(out, 2 * x)


@test
def softmax():
    k = tlx.compile(os.path.join(examples, "softmax.tlx"), BLOCK=1024)
    rows, cols = 5, 777
    x = bf16(rng.standard_normal((rows, cols)) * 3)
    y = np.full((rows, cols), 0xFFFF, np.uint16)
    k(x, y, rows, cols, cols)
    xf = f32(x).astype(np.float64)
    ref = np.exp(xf - xf.max(1, keepdims=True))
    ref /= ref.sum(1, keepdims=True)
    err = np.abs(f32(y) - ref).max()
    assert err < 1e-2, "max error %g" % err


@test
def matmul():
    k = tlx.compile(os.path.join(examples, "matmul.tlx"), BM=64, BN=64, BK=32)
    M, N, K = 72, 40, 56
    a = bf16(rng.standard_normal((M, K)))
    b = bf16(rng.standard_normal((K, N)))
    c = np.full((M, N), 0xFFFF, np.uint16)
    k(a, b, c, M, N, K, K, 1, N, 1, N, 1)
    ref = f32(a).astype(np.float64) @ f32(b).astype(np.float64)
    err = np.abs(f32(c) - ref).max() / np.abs(ref).max()
    assert err < 1e-2, "relative error %g" % err


def raises(fn, text):
    try:
        fn()
    except tlx.Error as e:
        assert text in str(e), "message %r lacks %r" % (str(e), text)
        return
    raise AssertionError("no error (expected %r)" % text)


@test
def errors():
    k = tlx.compile(os.path.join(examples, "vadd.tlx"))
    x = np.zeros(8, np.float32)
    raises(lambda: k(x, x, x), "takes 4 arguments (x, y, out, n), got 3")
    raises(lambda: k(x, x, x.astype(np.float64), 8),
           "argument 3 ('out'): expected an array of f32 (numpy float32), got float64")
    raises(lambda: k(x, x, 5, 8), "argument 3 ('out'): expected an array of f32")
    raises(lambda: k(x, x, x, x), "argument 4 ('n'): expected a i32 scalar")
    raises(lambda: tlx.compile("kernel k(x: *f32) { store(x, 1.0) "),
           "<string>:1:")
    # the simulator's report of an out-of-bounds access, as an exception
    raises(lambda: k(x, x, x, 9), "launch of 'vadd'")


print("%d passed, %d failed" % (results.count(True), results.count(False)))
sys.exit(0 if all(results) else 1)
