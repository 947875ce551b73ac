"""The tlx package on the simulator, without torch: every example of
examples/ with numpy arrays against references computed in double
precision from the same (rounded) inputs -- random inputs, ragged sizes,
outputs poisoned first so that an element never written fails --, then
the other kinds of argument (DLPack objects, tlx Buffers and the cached
launch path, in-place and strided arrays), and the errors raised for
wrong arguments, sources and kernels.

    TLX_LIBDIR=build/.libs python3 python/tests/test_sim.py [EXAMPLES_DIR [TLXC]]

TLXC: the tlxc program, for the test of compiling without libtlx.
Prints one line per test and "N passed, N failed"; exits non-zero on a
failure."""
import os
import shlex
import subprocess
import sys
import tempfile
import time

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, ".."))
import tlx  # noqa: E402
from tlx import _core  # noqa: E402

examples = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "..", "examples")
tlxc = sys.argv[2] if len(sys.argv) > 2 else None
rng = np.random.default_rng(20)
results = []
start = time.time()


def test(fn):
    t = time.time()
    try:
        fn()
        results.append(True)
        print("ok: %s (%.1f s)" % (fn.__name__, time.time() - t))
    except Exception as e:  # report and go on
        results.append(False)
        print("FAIL: %s: %s: %s" % (fn.__name__, type(e).__name__, e))
    sys.stdout.flush()
    return fn


def ex(name):
    return os.path.join(examples, name + ".tlx")


# ---- numbers -------------------------------------------------------------------

def bf16(a):
    """float -> bf16 bits, rounded to nearest even."""
    u = np.asarray(a, np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def f64(b):
    """bf16 bits -> float64."""
    return (b.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def e4m3(shape):
    """Random e4m3 bits of magnitude 1/4 to 15/4, and their values."""
    r = rng.integers(0, 1 << 16, size=shape)
    bits = ((r & 0x80) | ((5 + ((r >> 3) & 3)) << 3) | (r & 7)).astype(np.uint8)
    e, m = (bits >> 3) & 15, bits & 7
    v = np.ldexp(1 + m / 8.0, e.astype(np.int64) - 7)
    return bits, np.where(bits & 0x80, -v, v)


POISON = 0xFFFF  # a bf16 NaN


def close(what, got, ref, atol, rtol):
    """Every element within atol + rtol * |ref| (NaN never is)."""
    err = np.abs(got - ref)
    bad = ~(err <= atol + rtol * np.abs(ref))
    if bad.any():
        i = np.unravel_index(np.argmax(np.where(bad, 1, 0)), bad.shape)
        raise AssertionError("%s: %d of %d elements off, first at %s: %r, expected %r"
                             % (what, bad.sum(), bad.size, tuple(map(int, i)), got[i], ref[i]))


def gemm_ok(what, c, ref, K):
    close(what, f64(c), ref, 1e-3 * np.sqrt(K), 1 / 128)


def raises(fn, *texts):
    try:
        fn()
    except tlx.Error as e:
        for text in texts:
            assert text in str(e), "message %r lacks %r" % (str(e), text)
        return str(e)
    raise AssertionError("no error (expected %r)" % (texts,))


tlx.device("sim")


# ---- the examples ------------------------------------------------------------------

@test
def vadd():
    k = tlx.compile(ex("vadd"), BLOCK=256)
    for n in (1, 255, 1000, 4099):
        x = rng.standard_normal(n).astype(np.float32)
        y = rng.standard_normal(n).astype(np.float32)
        out = np.full(n, np.nan, np.float32)
        k(x, y, out, n)
        assert np.array_equal(out, x + y), "n=%d" % n
    out = np.full(n, np.nan, np.float32)  # an explicit grid: 2 programs of 256
    k[(2,)](x, y, out, 300)
    assert np.array_equal(out[:300], x[:300] + y[:300]) and np.isnan(out[512:]).all()


@test
def copy():
    k = tlx.compile(ex("copy"), BLOCK=512)
    for n in (7, 513, 3000):
        x = rng.standard_normal(n).astype(np.float32)
        out = np.full(n, np.nan, np.float32)
        k(x, out, n)
        assert np.array_equal(out, x), "n=%d" % n


def softmax_ref(x):
    x = f64(x)
    e = np.exp(x - x.max(1, keepdims=True))
    return e / e.sum(1, keepdims=True)


def softmax_case(k, rows, cols, stride):
    # rows of `cols` elements `stride` apart: the gap must keep its poison
    x = bf16(rng.standard_normal((rows, stride)) * 4)
    y = np.full((rows, stride), POISON, np.uint16)
    k(x, y, rows, cols, stride)
    close("softmax %dx%d" % (rows, cols), f64(y[:, :cols]), softmax_ref(x[:, :cols]),
          1e-5, 1 / 128)
    assert (y[:, cols:] == POISON).all(), "a write past a row's end"


@test
def softmax():
    # the rule's builds: BLOCK the power of two >= cols (ROWS rows per
    # program below 2048 columns)
    for block, rows, cols in ((64, 13, 50), (1024, 5, 777), (4096, 3, 2500)):
        softmax_case(tlx.compile(ex("softmax"), BLOCK=block), rows, cols, cols + 3)


@test
def softmax_loop():
    k = tlx.compile(ex("softmax_loop"), BLOCK=256)
    softmax_case(k, 4, 1000, 1008)
    softmax_case(k, 2, 100, 100)


def layernorm_case(k, rows, cols, stride):
    x = bf16(rng.standard_normal((rows, stride)) * 2 + 3)
    w = bf16(rng.standard_normal(cols))
    b = bf16(rng.standard_normal(cols))
    y = np.full((rows, stride), POISON, np.uint16)
    eps = 1e-5
    k(x, w, b, y, rows, cols, stride, eps)
    xf = f64(x[:, :cols])
    mean = xf.mean(1, keepdims=True)
    ref = (xf - mean) / np.sqrt(((xf - mean) ** 2).mean(1, keepdims=True) + eps)
    ref = ref * f64(w) + f64(b)
    close("layernorm %dx%d" % (rows, cols), f64(y[:, :cols]), ref, 2e-2, 1 / 128)
    assert (y[:, cols:] == POISON).all(), "a write past a row's end"


@test
def layernorm():
    for block, rows, cols in ((128, 21, 100), (2048, 3, 1500)):
        layernorm_case(tlx.compile(ex("layernorm"), BLOCK=block), rows, cols, cols + 5)


@test
def layernorm_loop():
    layernorm_case(tlx.compile(ex("layernorm_loop"), BLOCK=256), 3, 1000, 1000)


@test
def matmul():
    k = tlx.compile(ex("matmul"), BM=64, BN=64, BK=32)
    M, N, K = 72, 40, 56
    a = bf16(rng.standard_normal((M, K)))
    bt = bf16(rng.standard_normal((N, K)))
    c = np.full((M, N), POISON, np.uint16)
    # B as the transposed view of an N x K array: its strides (1, K) go to
    # the kernel, the whole N x K to the simulator
    b = bt.T
    k(a, b, c, M, N, K, K, 1, 1, K, N, 1)
    gemm_ok("matmul", c, f64(a) @ f64(b), K)


def tma_gemm(name, M, N, K, **consts):
    k = tlx.compile(ex(name), **consts)
    a = bf16(rng.standard_normal((M, K)))
    b = bf16(rng.standard_normal((K, N)))
    c = np.full((M, N), POISON, np.uint16)
    k(a, b, c, M, N, K)
    gemm_ok(name, c, f64(a) @ f64(b), K)


@test
def gemm_tma():
    tma_gemm("gemm_tma", 200, 296, 104)
    tma_gemm("gemm_tma", 8, 8, 8, BM=64, BN=64, BK=32, STAGES=2, WARPS=4)


@test
def gemm_ws():
    tma_gemm("gemm_ws", 200, 296, 104)


@test
def gemm_barriers():
    tma_gemm("gemm_barriers", 136, 200, 192, BN=128)


@test
def gemm_static():
    dev = tlx.device()
    dev.set_option("sm_count", 2)  # programs stride over the tiles
    try:
        tma_gemm("gemm_static", 384, 520, 72)
    finally:
        dev.set_option("sm_count", 132)


@test
def gemm_persistent():
    tma_gemm("gemm_persistent", 264, 296, 64)


@test
def gemm_pingpong():
    dev = tlx.device()
    dev.set_option("sm_count", 2)  # 4 tiles a program: both consumers, in turn
    try:
        tma_gemm("gemm_pingpong", 392, 136, 200)
    finally:
        dev.set_option("sm_count", 132)


@test
def gemm_epilogue():
    k = tlx.compile(ex("gemm_epilogue"))
    M, N, K = 200, 296, 136
    a = bf16(rng.standard_normal((M, K)))
    b = bf16(rng.standard_normal((K, N)))
    bias = (rng.random(N) * 4).astype(np.float32)
    c = np.full((M, N), POISON, np.uint16)
    k(a, b, c, M, N, K, bias)
    x = f64(a) @ f64(b) + bias
    ref = 0.5 * x * (1 + np.tanh(0.7978845608028654 * (x + 0.044715 * x ** 3)))
    gemm_ok("gemm_epilogue", c, ref, K)


@test
def gemm_fp8():
    k = tlx.compile(ex("gemm_fp8"))
    M, N, K = 200, 296, 144
    a, av = e4m3((M, K))
    bt, bv = e4m3((N, K))
    c = np.full((M, N), POISON, np.uint16)
    k(a, bt, c, M, N, K)
    close("gemm_fp8", f64(c), av @ bv.T, K / 512 + 0.05, 1 / 128)


@test
def gemm_grouped():
    k = tlx.compile(ex("gemm_grouped"), BM=64, BN=128).kernels["gemm_grouped"]
    BM, BN = k.consts["BM"], k.consts["BN"]
    G, N, K = 7, 200, 64
    sizes = [int(s) for s in rng.integers(0, 150, G)]
    sizes[2] = 0  # an empty group
    offs = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int32)
    tiles = [-(-s // BM) * -(-N // BN) for s in sizes]
    tstart = np.concatenate([[0], np.cumsum(tiles)]).astype(np.int32)
    rows = int(offs[-1])
    a = bf16(rng.standard_normal((rows, K)))
    b = bf16(rng.standard_normal((G * K, N)))
    c = np.full((rows, N), POISON, np.uint16)
    k(a, b, c, offs, tstart, G, int(tstart[-1]), N, K)
    ref = np.concatenate([f64(a[offs[g]:offs[g + 1]]) @ f64(b[g * K:(g + 1) * K])
                          for g in range(G)])
    gemm_ok("gemm_grouped", c, ref, K)


@test
def gemm_grouped_k():
    k = tlx.compile(ex("gemm_grouped"), BM=64, BN=128).kernels["gemm_grouped_k"]
    BK = k.consts["BK"]
    G, M, N = 5, 100, 136
    ks = [int(s) * BK for s in rng.integers(0, 4, G)]
    ks[1] = 0  # an empty group: its block is zero
    koffs = np.concatenate([[0], np.cumsum(ks)]).astype(np.int32)
    order = np.array(sorted(range(G), key=lambda g: -ks[g]), np.int32)
    kt = max(int(koffs[-1]), BK)
    a = bf16(rng.standard_normal((M, kt)))
    b = bf16(rng.standard_normal((kt, N)))
    c = np.full((G * M, N), POISON, np.uint16)
    k(a, b, c, koffs, order, G, M, N)
    ref = np.concatenate([f64(a[:, koffs[g]:koffs[g + 1]]) @ f64(b[koffs[g]:koffs[g + 1]])
                          for g in range(G)])
    gemm_ok("gemm_grouped_k", c, ref, max(ks))


@test
def every_example_compiles():
    """Examples added since this file was written have no reference here
    yet: each still compiles and loads through the package (and is named,
    so that a test is written for it)."""
    names = sorted(f[:-4] for f in os.listdir(examples) if f.endswith(".tlx"))
    tested = {f.__name__ for f in globals().values() if callable(f)}
    for n in names:
        if n not in tested:
            k = tlx.compile(ex(n))
            print("(%s: compiled and loaded, %r; no reference here yet)" % (n, k))


# ---- kinds of argument -----------------------------------------------------------

class DLPackOnly:
    """An array known only through __dlpack__ (as other libraries' are)."""

    def __init__(self, a):
        self.a = a

    def __dlpack__(self, stream=None):
        return self.a.__dlpack__()

    def __dlpack_device__(self):
        return self.a.__dlpack_device__()


class CudaOnly:
    """An array known only through __cuda_array_interface__."""
    __cuda_array_interface__ = {"shape": (4,), "typestr": "<f4", "data": (1 << 20, False),
                                "version": 3, "strides": None}


@test
def dlpack():
    k = tlx.compile(ex("vadd"), BLOCK=128)
    x = rng.standard_normal(300).astype(np.float32)
    out = np.full(300, np.nan, np.float32)
    k(DLPackOnly(x), x, DLPackOnly(out), 300)  # the output copied back through it
    assert np.array_equal(out, 2 * x)
    raises(lambda: k(DLPackOnly(x.astype(np.float64)), x, out, 300),
           "argument 1 ('x'): expected an array of f32 (float32), got float64")


@test
def in_place_and_views():
    k = tlx.compile(ex("vadd"), BLOCK=128)
    x = rng.standard_normal(500).astype(np.float32)
    y = rng.standard_normal(500).astype(np.float32)
    want = x + y
    k(x, y, x, 500)  # out is x: one copy on the simulator, written back
    assert np.array_equal(x, want)
    # overlapping views of one array: z[1:] = z[:-1] + z[:-1] reads what
    # it writes unless the views share the simulator's memory as here
    z = np.arange(9, dtype=np.float32)
    k[(1,)](z[:-1], z[:-1], z[1:], 1)
    assert z[1] == 0 and z[2] == 2, z


@test
def buffers_and_the_cached_path():
    k = tlx.compile(ex("vadd"), BLOCK=256)
    x = tlx.to_device(np.arange(1000, dtype=np.float32))
    out = tlx.empty(1000, "f32")
    calls = []
    general = _core.launch
    _core.launch = lambda *a: calls.append(1) or general(*a)
    try:
        for i in range(5):
            k(x, x, out, 1000 - i)
        k[(4,)](x, x, out, 1000)
    finally:
        _core.launch = general
    assert calls == [1], "the general path ran %d times of 6, not once" % len(calls)
    assert list(k._launchers) == [("b", "b", "b", "s")], list(k._launchers)
    assert np.array_equal(out.numpy(), 2 * np.arange(1000, dtype=np.float32))
    # what the launcher's guards send to the general path, and its message
    raises(lambda: k(x, x, tlx.empty(10, "i32"), 10),
           "argument 3 ('out'): expected an array of f32 (float32), got int32")
    raises(lambda: k(x, x, out, 2.5), "argument 4 ('n'): expected an integer (i32), got float")
    raises(lambda: k(x, x, out, 1 << 40), "argument 4 ('n'): 1099511627776 does not fit in i32")
    # a Buffer and host arrays together
    y = np.ones(1000, np.float32)
    k(x, y, out, 1000)
    assert np.array_equal(out.numpy(), np.arange(1000, dtype=np.float32) + 1)
    # bf16 Buffers from bits; tensor descriptors from Buffers
    g = tlx.compile(ex("gemm_tma"), BM=64, BN=64, BK=32, STAGES=2, WARPS=4)
    a = bf16(rng.standard_normal((70, 48)))
    b = bf16(rng.standard_normal((48, 33 * 8)))
    c = tlx.empty((70, 264), "bf16")
    args = (tlx.to_device(a, "bf16"), tlx.to_device(b, "bf16"), c, 70, 264, 48)
    g(*args)
    g(*args)
    assert list(g._launchers) == [("b", "b", "b", "s", "s", "s")]
    gemm_ok("gemm_tma from Buffers", c.numpy(), f64(a) @ f64(b), 48)


@test
def errors():
    k = tlx.compile(ex("vadd"))
    x = np.zeros(8, np.float32)
    raises(lambda: k(x, x, x), "kernel 'vadd' takes 4 arguments (x, y, out, n), got 3")
    raises(lambda: k(x, x, x.astype(np.float64), 8),
           "argument 3 ('out'): expected an array of f32 (float32), got float64")
    raises(lambda: k(x, x, 5, 8), "argument 3 ('out'): expected an array of f32, got int")
    raises(lambda: k(x, x, x, x), "argument 4 ('n'): expected an integer (i32), got ndarray")
    raises(lambda: k(x, x, x, 8.0), "argument 4 ('n'): expected an integer (i32), got float")
    raises(lambda: k(x, x, CudaOnly(), 8), "argument 3 ('out'): CUDA memory on the simulator")
    raises(lambda: k[(0,)], "grid (0,): each dimension must be 1 to 2^31-1")
    ng = tlx.compile("kernel nogrid(x: *f32) warps(4) {\n"
                     "    store(x + range(4), zeros(f32, [4]));\n}\n")
    y = np.ones(8, np.float32)
    raises(lambda: ng(y), "kernel 'nogrid' has no grid function: launch it as k[grid](...)")
    ng[[1]](y)  # a grid as a list
    assert list(y) == [0] * 4 + [1] * 4, y
    raises(lambda: k[(1, 2, 3, 4)], "a grid has 1 to 3 dimensions")
    raises(lambda: tlx.compile("kernel k(x: *f32) { store(x, 1.0) "), "<string>:1:")
    raises(lambda: tlx.device("tpu"), "cannot open device tpu: unknown device 'tpu'")
    raises(lambda: tlx.empty(4, "f128"), "unknown element type 'f128'")
    # the simulator's report of an out-of-bounds access, with the source line
    raises(lambda: k(x, x, x, 9), "launch of 'vadd'", "out of bounds", "vadd.tlx:")
    # of a read of memory nothing wrote
    raises(lambda: k(tlx.empty(8, "f32"), x, x, 8), "unwritten memory", "vadd.tlx:")
    # tensor descriptors: the rank, then the runtime's TMA rules
    g = tlx.compile(ex("gemm_tma"), BM=64, BN=64, BK=32, STAGES=2, WARPS=4)
    a = np.zeros((64, 64), np.uint16)
    raises(lambda: g(a.ravel(), a, a, 64, 64, 64),
           "argument 1 ('a'): expected a rank-2 tensor, got shape [4096]")
    odd = np.zeros((64, 20), np.uint16)  # rows of 40 bytes
    raises(lambda: g(odd, a, a, 64, 64, 20), "argument 1 ('a')", "16")


DEADLOCK = """
kernel no_release(x: *f32, n: i32) warps(4) grid(1) {
    pipe p(2) { A: f32[32, 32] }
    tasks {
        task produce(warps: 1) {
            for k in 0 .. n {
                let s = p.acquire();
                store(s.A, zeros(f32, [32, 32]));
                p.commit(s);
            }
        }
        task consume(warps: 4) {
            for k in 0 .. n {
                let s = p.consume();
                let r = range(32);
                store(x + r[:, None] * 32 + r[None, :], load(s.A));
                if k >= n { p.release(s); }  // never: a slot is never handed back
            }
        }
    }
}
"""


@test
def deadlock():
    k = tlx.compile(DEADLOCK, name="no_release.tlx")
    out = np.zeros(32 * 32, np.float32)
    k(out, 2)  # within the pipe's depth
    raises(lambda: k(out, 3), "deadlocked", "no_release.tlx:")


@test
def tune_spaces():
    """tlx.tune_space reads a kernel's tune(...) and checks its constraints."""
    sp = tlx.tune_space(ex("matmul"), "matmul")
    assert sp.params == {"BM": [64, 128, 256], "BN": [64, 128, 256], "BK": [32, 64],
                         "STAGES": [2, 3, 4], "WARPS": [4, 8]}, sp.params
    assert sp.constraints == 2
    assert sp.allows() and sp.allows(BM=256, BN=64)
    assert not sp.allows(BM=256, BN=256)
    assert sp.allows(BM=256, BN=256, WARPS=16)
    sm = tlx.tune_space(ex("softmax"), "softmax", BLOCK=256, WARPS=1)
    assert sm.params == {"ROWS": [1, 2, 4, 8, 16], "WARPS": [1, 2, 4, 8, 16]}, sm.params
    assert sm.allows(ROWS=8) and not sm.allows(ROWS=16)
    assert tlx.tune_space(ex("vadd"), "vadd").params == {}
    raises(lambda: tlx.tune_space(ex("vadd"), "nosuch"), "no kernel is named 'nosuch'")


@test
def without_libtlx():
    """tlx.compile runs the tlxc program when libtlx cannot be loaded (a
    machine with the runtime only)."""
    if not tlxc:
        print("(no tlxc given: skipped)")
        return
    code = ("import sys, numpy as np; sys.path.insert(0, %r); import tlx; from tlx import _lib\n"
            "tlx.device('sim'); k = tlx.compile(%r, BLOCK=64)\n"
            "assert _lib.L.tlx is None, 'libtlx was loaded'\n"
            "x = np.arange(100, dtype=np.float32); o = np.zeros(100, np.float32)\n"
            "k(x, x, o, 100); assert (o == 2 * x).all()\n"
            "try: tlx.compile('kernel k() {', name='bad.tlx')\n"
            "except tlx.Error as e: print(e)\n" % (os.path.join(here, ".."), ex("vadd")))
    prog = tlxc
    if os.environ.get("LD_PRELOAD"):
        # a sanitizer build's python preloads the shared ASan runtime for
        # libtlxrt; a clang-built tlxc has its own (static) and refuses to
        # start beside it
        fd, prog = tempfile.mkstemp(suffix=".sh")
        with os.fdopen(fd, "w") as f:
            f.write('#!/bin/sh\nunset LD_PRELOAD\nexec %s "$@"\n' % shlex.quote(tlxc))
        os.chmod(prog, 0o755)
    env = dict(os.environ, TLX_NO_LIBTLX="1", TLX_TLXC=prog)
    try:
        p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                           text=True)
    finally:
        if prog != tlxc:
            os.unlink(prog)
    assert p.returncode == 0, p.stderr[-2000:]
    assert "bad.tlx:1:" in p.stdout, p.stdout


print("%d passed, %d failed (%.1f s)" % (results.count(True), results.count(False),
                                         time.time() - start))
sys.exit(0 if all(results) else 1)
