# bench/tlxbench.py: times tlx kernels on the GPU through the Python package
# (python/tlx), as bench_kernels does through libtlxrt from C, with the same
# command line, the same method and the same output: random inputs, 10
# warm-up launches, then REPS launches each between two events on the
# default stream, waited for one by one; one JSON object per line with the
# median and the minimum.  The bench scripts run it for every tlx figure
# (command() below; TLX_BENCH_C=1 runs the C bench_kernels instead, for an
# A/B of the two).
#
#   tlxbench.py vadd|copy MODULE N [REPS]
#   tlxbench.py softmax|softmax_loop|layernorm|layernorm_loop MODULE ROWS COLS [REPS]
#   tlxbench.py matmul MODULE M N K [REPS]
#   tlxbench.py gemm MODULE KERNEL M N K [REPS]        (a, b, c: tma<bf16, 2>)
#   tlxbench.py gemm_bias MODULE KERNEL M N K [REPS]   (gemm's, + bias: *f32)
#   tlxbench.py gemm_fp8 MODULE KERNEL M N K [REPS]    (a, bt: tma<f8e4m3, 2>)
#   tlxbench.py grouped MODULE KERNEL N K BM BN ROWS [REPS]  (ROWS: a,b,c)
#   tlxbench.py grouped_k MODULE KERNEL M N KS [REPS]  (gemm_grouped_k; KS:
#                                each group's K, comma-separated; the
#                                groups handed out the largest K first)
#
# Bytes count every input read once and every output written once; flops
# 2*M*N*K for a GEMM.  Needs numpy (the random inputs), not torch.
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))


def command(where=here):
    """The argv prefix that runs this driver (or, with TLX_BENCH_C=1, the
    C bench_kernels) from the folder `where`."""
    if os.environ.get("TLX_BENCH_C") == "1":
        return [os.path.join(where, "bench_kernels")]
    return [sys.executable, os.path.join(where, "tlxbench.py")]


def run(args, where=here, timeout=120):
    """Runs the driver (command(where)) with args; its JSON result line as a
    dict, or None after saying why (a failure or a timeout)."""
    import json
    import subprocess
    try:
        p = subprocess.run(command(where) + [str(a) for a in args], capture_output=True,
                           text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        print("bench: timed out:", " ".join(map(str, args)), flush=True)
        return None
    if p.returncode != 0:
        print("bench: failed:", " ".join(map(str, args[:2])), p.stderr.strip()[:300], flush=True)
        return None
    return json.loads(p.stdout.strip().splitlines()[-1])


def setup():
    """The package from the tree or the folder testsuite/gpu/build.sh fills
    (python/, lib/libtlxrt.so, tlxc)."""
    for p in (os.path.join(here, "python"), os.path.join(here, "..", "python")):
        if os.path.isdir(os.path.join(p, "tlx")):
            sys.path.insert(0, p)
            break
    if os.path.exists(os.path.join(here, "lib", "libtlxrt.so")):
        os.environ.setdefault("TLX_LIBDIR", os.path.join(here, "lib"))
    if os.path.exists(os.path.join(here, "tlxc")):
        os.environ.setdefault("TLX_TLXC", os.path.join(here, "tlxc"))


def main(argv):
    setup()
    import numpy as np
    import tlx

    def fail(msg):
        sys.stderr.write("tlxbench: %s\n" % msg)
        sys.exit(1)

    if len(argv) < 3:
        sys.stderr.write("usage: tlxbench.py KERNEL MODULE SIZES... [REPS]\n")
        sys.exit(2)
    what, path, rest = argv[0], argv[1], argv[2:]
    try:
        dev = tlx.device()
        mod = tlx.load(path, dev)
    except tlx.Error as e:
        fail(str(e))

    def random(n, dtype, seed):
        """n values in [-1, 1): f32, or bf16 (bits, rounded to nearest even)."""
        out = np.empty(n, np.float32 if dtype == "f32" else np.uint16)
        rng = np.random.default_rng(seed)
        step = 1 << 24
        for i in range(0, n, step):
            f = rng.random(min(step, n - i), dtype=np.float32) * 2 - 1
            if dtype == "f32":
                out[i:i + step] = f
            else:
                u = f.view(np.uint32).astype(np.uint64)
                out[i:i + step] = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
        return tlx.to_device(out, dtype, dev)

    def fp8(n, seed):
        """e4m3 bytes of magnitude 1/4 to 15/4, random sign (no NaNs)."""
        s = np.random.default_rng(seed).integers(0, 1 << 16, n, dtype=np.uint32)
        b = ((s & 0x87) | ((5 + ((s >> 8) & 3)) << 3)).astype(np.uint8)
        return tlx.to_device(b, "f8e4m3", dev)

    def kernel(name):
        if name not in mod.kernels:
            fail("no kernel '%s' in %s (it has %s)" % (name, path, ", ".join(mod.kernels)))
        return mod.kernels[name]

    def bench(name, size, k, args, reps, nbytes, flops):
        a, b = tlx.Event(dev), tlx.Event(dev)
        try:
            for _ in range(10):  # warm-up
                k(*args)
            ms = []
            for _ in range(reps):
                a.record()
                k(*args)
                b.record()
                b.synchronize()
                ms.append(a.elapsed_ms(b))
        except tlx.Error as e:
            fail(str(e))
        ms.sort()
        med = ms[reps // 2]
        print('{"kernel": "%s", "size": "%s", "ms": %.5f, "ms_min": %.5f, "TBps": %.4f, '
              '"TFLOPs": %.2f}' % (name, size, med, ms[0], nbytes / med / 1e9,
                                   flops / med / 1e9), flush=True)

    def ints(vals, n):
        if len(vals) < n:
            fail("'%s' takes %d sizes" % (what, n))
        return [int(v) for v in vals[:n]]

    def reps_at(i, default):
        return int(rest[i]) if len(rest) > i else default

    if what in ("vadd", "copy"):
        (n,) = ints(rest, 1)
        bufs = [random(n, "f32", n + i) for i in range(2 if what == "copy" else 3)]
        bench(what, str(n), kernel(what), bufs + [n], reps_at(1, 50),
              (2.0 if what == "copy" else 3.0) * 4 * n, 0)
    elif what in ("softmax", "softmax_loop", "layernorm", "layernorm_loop"):
        r, c = ints(rest, 2)
        x, y = random(r * c, "bf16", 1), random(r * c, "bf16", 2)
        if what.startswith("layernorm"):
            args = [x, random(c, "bf16", 3), random(c, "bf16", 4), y, r, c, c, 1e-5]
        else:
            args = [x, y, r, c, c]
        bench(what, "%dx%d" % (r, c), kernel(what), args, reps_at(2, 50), 2.0 * 2 * r * c, 0)
    elif what == "matmul":
        M, N, K = ints(rest, 3)
        args = [random(M * K, "bf16", 1), random(K * N, "bf16", 2), random(M * N, "bf16", 3),
                M, N, K, K, 1, N, 1, N, 1]
        bench("matmul", "%dx%dx%d" % (M, N, K), kernel("matmul"), args, reps_at(3, 20),
              2.0 * (M * K + K * N + M * N), 2.0 * M * N * K)
    elif what in ("gemm", "gemm_bias", "gemm_fp8"):
        name = rest[0]
        M, N, K = ints(rest[1:], 3)
        f8 = what == "gemm_fp8"
        if f8:
            a = fp8(M * K, 1).view((M, K))
            b = fp8(N * K, 2).view((N, K))
        else:
            a = random(M * K, "bf16", 1).view((M, K))
            b = random(K * N, "bf16", 2).view((K, N))
        args = [a, b, random(M * N, "bf16", 3).view((M, N)), M, N, K]
        if what == "gemm_bias":
            args.append(random(N, "f32", 4))
        bench(name, "%dx%dx%d" % (M, N, K), kernel(name), args, reps_at(4, 20),
              (1.0 if f8 else 2.0) * (M * K + K * N) + 2.0 * M * N, 2.0 * M * N * K)
    elif what == "grouped" and len(rest) > 5:
        name = rest[0]
        N, K, BM, BN = ints(rest[1:], 4)
        sizes = [int(v) for v in rest[5].split(",") if v]
        offs, ts = [0], [0]
        for s in sizes:
            offs.append(offs[-1] + s)
            ts.append(ts[-1] + -(-s // BM) * -(-N // BN))
        G, rows = len(sizes), max(offs[-1], 1)
        args = [random(rows * K, "bf16", 1).view((rows, K)),
                random(G * K * N, "bf16", 2).view((G * K, N)), random(rows * N, "bf16", 3),
                tlx.to_device(np.array(offs, np.int32), device=dev),
                tlx.to_device(np.array(ts, np.int32), device=dev), G, ts[-1], N, K]
        bench(name, "%dx(%d)x%dx%d" % (G, offs[-1], N, K), kernel(name), args, reps_at(6, 20),
              2.0 * (offs[-1] * K + G * K * N + offs[-1] * N), 2.0 * offs[-1] * N * K)
    elif what == "grouped_k" and len(rest) > 3:
        name = rest[0]
        M, N = ints(rest[1:], 2)
        ks = [int(v) for v in rest[3].split(",") if v]
        koffs = [0]
        for k in ks:
            koffs.append(koffs[-1] + k)
        G, kt = len(ks), max(koffs[-1], 1)
        order = sorted(range(G), key=lambda g: -ks[g])  # the largest K first
        args = [random(M * kt, "bf16", 1).view((M, kt)), random(kt * N, "bf16", 2).view((kt, N)),
                random(G * M * N, "bf16", 3),
                tlx.to_device(np.array(koffs, np.int32), device=dev),
                tlx.to_device(np.array(order + [0], np.int32), device=dev), G, M, N]
        bench(name, "%dx%dx%dx(%d)" % (G, M, N, koffs[-1]), kernel(name), args, reps_at(4, 20),
              2.0 * (M * koffs[-1] + koffs[-1] * N + G * M * N), 2.0 * M * N * koffs[-1])
    else:
        fail("unknown kernel '%s'" % what)


if __name__ == "__main__":
    main(sys.argv[1:])
