# bench/ab.py: the same kernels compiled in several ways (one cubin folder
# each, as testsuite/gpu/build.sh fills them with TLXC_FLAGS), timed in
# rounds that alternate between the folders, against torch and cuBLAS in
# the same run.  For deciding a compiler default by measurement.
#
#   python3 ab.py [--only WORD] [--rounds N] OUT_JSON DIR...
#
# --only keeps the cases whose label contains WORD (e.g. matmul, odd: the
# rows of odd widths and the GEMMs of odd N), and times the baselines
# those need alone; --rounds (default 3) sets the rounds.
# Prints, per kernel and folder, the median over rounds of bench_kernels'
# median, and its ratio to the baseline.
import json, os, statistics, subprocess, sys
import tlxbench  # runs tlx kernels through the Python package (TLX_BENCH_C=1: bench_kernels)

import torch
from triton.testing import do_bench

here = os.path.dirname(os.path.abspath(__file__))
args = sys.argv[1:]
only = None
ROUNDS = 3
while args[:1] in (["--only"], ["--rounds"]):
    if args[0] == "--only":
        only = args[1]
    else:
        ROUNDS = int(args[1])
    args = args[2:]
out, dirs = args[0], args[1:]


def med(fn):
    return do_bench(fn, warmup=50, rep=300, return_mode="median")


def ours(kernel, path, *args):
    p = subprocess.run(tlxbench.command(here) + [kernel, path, *map(str, args)],
                       capture_output=True, text=True)
    if p.returncode != 0:
        print("bench_kernels failed:", kernel, path, p.stderr.strip()[:300], flush=True)
        return None
    r = json.loads(p.stdout.strip().splitlines()[-1])
    return r["TFLOPs"] if kernel in ("matmul", "gemm", "gemm_bias", "gemm_fp8") else r["TBps"]


def baselines(need):
    b = {}
    if "copy" in need:
        x = torch.empty(2**28, device="cuda").normal_()
        z = torch.empty_like(x)
        b["copy"] = 2 * x.numel() * 4 / med(lambda: z.copy_(x)) / 1e9
        del x, z
    for M, N in [(32768, 4096), (8192, 32768)] + ODD_ROWS:
        if f"softmax {M}x{N}" not in need and f"layernorm {M}x{N}" not in need:
            continue
        xx = torch.randn(M, N, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(N, device="cuda", dtype=torch.bfloat16)
        bw = 2 * xx.numel() * 2
        b[f"softmax {M}x{N}"] = bw / med(lambda: torch.softmax(xx, -1)) / 1e9
        b[f"layernorm {M}x{N}"] = bw / med(
            lambda: torch.nn.functional.layer_norm(xx, (N,), w, w)) / 1e9
        del xx
    for s in (4096, 8192):
        if f"matmul {s}" not in need:
            continue
        a = torch.randn(s, s, device="cuda", dtype=torch.bfloat16)
        b[f"matmul {s}"] = 2 * s**3 / med(lambda: a @ a) / 1e9
        del a
    for M, N, K in ODD_GEMMS:
        if f"matmul {M}x{N}x{K}" not in need:
            continue
        a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
        bb = torch.randn(K, N, device="cuda", dtype=torch.bfloat16)
        b[f"matmul {M}x{N}x{K}"] = 2 * M * N * K / med(lambda: a @ bb) / 1e9
        del a, bb
    torch.cuda.empty_cache()
    return b


# rows whose width is not a multiple of 16 (odd pitches: the generic
# entry's realigned loads and stores), each with the examples' rule's
# build (BLOCK the smallest power of two >= the width; softmax_loop past
# 32768), and GEMMs whose N is odd (staged B, the generic epilogue)
ODD_ROWS = [(671088, 100), (528416, 127), (65472, 1025), (16380, 4097), (2236, 30001),
            (1335, 50257)]
ODD_GEMMS = [(4096, 4097, 4096), (2048, 2049, 2048), (1000, 1001, 1000)]


def odd_cases():
    c = []
    for M, N in ODD_ROWS:
        blk = 1 << (N - 1).bit_length()
        for k in ("softmax", "layernorm"):
            if blk <= 32768:
                c.append((f"{k} odd {M}x{N}", k, f"{k}-B{blk}.cubin", (M, N), f"{k} {M}x{N}"))
            elif k == "softmax":
                c.append((f"softmax_loop odd {M}x{N}", "softmax_loop",
                          "softmax_loop-B8192.cubin", (M, N), f"softmax {M}x{N}"))
    for M, N, K in ODD_GEMMS:
        c.append((f"matmul odd {M}x{N}x{K}", "matmul", "gemm-128x256x64-s4-w8.cubin",
                  (M, N, K), f"matmul {M}x{N}x{K}"))
    return c


# (label, kernel, cubin, sizes, baseline key)
CASES = [
    ("vadd", "vadd", "vadd.cubin", (2**28,), "copy"),
    ("copy", "copy", "copy.cubin", (2**28,), "copy"),
    ("softmax 32768x4096", "softmax", "softmax4k.cubin", (32768, 4096), "softmax 32768x4096"),
    ("softmax 8192x32768", "softmax", "softmax32k.cubin", (8192, 32768), "softmax 8192x32768"),
    ("layernorm 32768x4096", "layernorm", "layernorm4k.cubin", (32768, 4096),
     "layernorm 32768x4096"),
    ("layernorm 8192x32768", "layernorm", "layernorm32k.cubin", (8192, 32768),
     "layernorm 8192x32768"),
    ("softmax_loop B4096 8192x32768", "softmax_loop", "softmax_loop-B4096.cubin",
     (8192, 32768), "softmax 8192x32768"),
    ("softmax_loop B8192 8192x32768", "softmax_loop", "softmax_loop-B8192.cubin",
     (8192, 32768), "softmax 8192x32768"),
    ("matmul 4096^3", "matmul", "matmul.cubin", (4096, 4096, 4096), "matmul 4096"),
    ("matmul 8192^3", "matmul", "matmul.cubin", (8192, 8192, 8192), "matmul 8192"),
    ("matmul BK64 8192^3", "matmul", "matmul-BK64-S3-W4.cubin", (8192, 8192, 8192),
     "matmul 8192"),
    ("gemm_tma 4096^3", "gemm", "tma-128x256x64-s4-w8.cubin", ("gemm_tma", 4096, 4096, 4096),
     "matmul 4096"),
    ("gemm_ws 4096^3", "gemm", "ws-128x256x64-s3.cubin", ("gemm_ws", 4096, 4096, 4096),
     "matmul 4096"),
    ("gemm_ws 8192^3", "gemm", "ws-128x256x64-s3.cubin", ("gemm_ws", 8192, 8192, 8192),
     "matmul 8192"),
    ("gemm_epilogue 4096^3", "gemm_bias", "ep-128x256x64-s3.cubin",
     ("gemm_epilogue", 4096, 4096, 4096), "matmul 4096"),
    ("gemm_fp8 8192^3", "gemm_fp8", "fp8-128x256x128-s3.cubin", ("gemm_fp8", 8192, 8192, 8192),
     "matmul 8192"),
] + odd_cases()

CASES = [c for c in CASES if not only or only in c[0]]
base = baselines({c[4] for c in CASES})
got = {(c[0], d): [] for c in CASES for d in dirs}
for r in range(ROUNDS):
    for label, kernel, mod, sizes, _ in CASES:
        for d in (dirs if r % 2 == 0 else dirs[::-1]):
            v = ours(kernel, os.path.join(here, d, mod), *sizes)
            if v:
                got[(label, d)].append(v)
rows = []
for label, kernel, mod, sizes, bk in CASES:
    for d in dirs:
        v = got[(label, d)]
        m = statistics.median(v) if v else None
        row = {"case": label, "dir": d, "value": m, "all": v, "baseline": base[bk],
               "ratio": m / base[bk] if m else None}
        rows.append(row)
        print(json.dumps(row), flush=True)
json.dump({"gpu": torch.cuda.get_device_name(), "baselines": base, "rows": rows},
          open(out, "w"), indent=1)
