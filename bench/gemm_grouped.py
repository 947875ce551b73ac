# bench/gemm_grouped.py: examples/gemm_grouped.tlx (a mixture-of-experts
# grouped GEMM: G groups of rows, each times its own K x N weights) with
# its dynamic tile schedule against the same kernel with a static one,
# against a loop of cuBLAS calls (torch.matmul per group) and against
# torch._grouped_mm where the installed torch has it, all in one run.
# Runs on the GPU machine from the folder testsuite/gpu/build.sh fills
# (cubin/grouped-dyn-*.cubin, cubin/grouped-static-*.cubin).
#
#   python3 gemm_grouped.py [OUT_JSON]
#
# Then gemm_grouped_k (the same layer's weight gradient: G groups of K_g
# columns of A, M x Ktot, times the same rows of B, Ktot x N, each into its
# own M x N block; tiles of different cost, handed out the largest K
# first) in the same four ways, torch._grouped_mm with offsets along K.
#
# Each tlx figure is the best of its configurations; times are medians of
# CUDA events (bench_kernels for tlx, triton.testing.do_bench for torch).
# TFLOP/s count 2 * rows * N * K (2 * M * N * sum K_g) over all groups.
import glob, json, os, random, sys, time
import tlxbench  # runs tlx kernels through the Python package (TLX_BENCH_C=1: bench_kernels)

import torch
from triton.testing import do_bench

here = os.path.dirname(os.path.abspath(__file__))


def groups(kind, G, mmax, seed):
    r = random.Random(seed)
    if kind == "uniform":      # 0 .. mmax rows, about one in eight empty
        return [0 if r.random() < 0.125 else r.randint(1, mmax) for _ in range(G)]
    # skewed: a few groups take most rows (a popular expert or two)
    return [mmax if r.random() < 0.06 else r.randint(0, mmax // 16) for _ in range(G)]


CASES = [("uniform", 64, 4096, 2048, 4096), ("uniform", 64, 4096, 4096, 2048),
         ("skewed", 64, 4096, 2048, 4096), ("uniform", 8, 4096, 4096, 4096),
         ("skewed", 128, 2048, 2048, 2048)]


def ours(cubin, rows, N, K):
    base = os.path.basename(cubin)[:-6]
    bm, bn = (int(x) for x in base.split("-")[2].split("x")[:2])
    r = tlxbench.run(["grouped", cubin, "gemm_grouped", N, K, bm, bn, ",".join(map(str, rows))],
                     here)
    return r and r["ms"]


def ours_k(cubin, M, N, ks):
    r = tlxbench.run(["grouped_k", cubin, "gemm_grouped_k", M, N, ",".join(map(str, ks))], here)
    return r and r["ms"]


def ks_of(kind, G, kmax, seed):
    """Each group's K, a multiple of 128 (every configuration's BK)."""
    r = random.Random(seed)
    if kind == "uniform":      # 0 .. kmax, about one in eight empty
        ks = [0 if r.random() < 0.125 else r.randint(1, kmax // 128) * 128 for _ in range(G)]
    else:                      # skewed: a few hot experts take most tokens
        ks = [kmax if r.random() < 0.1 else r.randint(0, kmax // 2048) * 128 for _ in range(G)]
    return ks


def best(paths, rows, N, K, run=None):
    b = (None, "")
    for path in paths:
        ms = (run or ours)(path, rows, N, K)
        if ms and (b[0] is None or ms < b[0]):
            b = (ms, os.path.basename(path)[:-6])
    return b


def record(r, fl, d, s, loop, gmm):
    """One row: the dynamic (d) and static (s) best (ms, config) against the
    cuBLAS loop and torch._grouped_mm (TFLOP/s), fl GFLOP in all."""
    r.update({"dynamic": fl / d[0] if d[0] else None, "dynamic_cfg": d[1],
              "static": fl / s[0] if s[0] else None, "static_cfg": s[1],
              "cublas_loop": loop, "grouped_mm": gmm})
    r["dynamic/static"] = r["dynamic"] / r["static"] if d[0] and s[0] else None
    r["dynamic/cublas_loop"] = r["dynamic"] / loop if d[0] else None
    r["dynamic/grouped_mm"] = r["dynamic"] / gmm if d[0] and gmm else None
    res["rows"].append(r)
    print(json.dumps(r), flush=True)


def med(fn):
    return do_bench(fn, warmup=10, rep=200, return_mode="median")


res = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
       "date": time.strftime("%Y-%m-%d"), "rows": []}
dyn = sorted(glob.glob(os.path.join(here, "cubin", "grouped-dyn-*.cubin")))
sta = sorted(glob.glob(os.path.join(here, "cubin", "grouped-static-*.cubin")))
for kind, G, mmax, N, K in CASES:
    rows = groups(kind, G, mmax, G * 7919 + mmax)
    total = sum(rows)
    fl = 2.0 * total * N * K / 1e9
    a = torch.randn(max(total, 1), K, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(G, K, N, device="cuda", dtype=torch.bfloat16)
    offs = [0]
    for m in rows:
        offs.append(offs[-1] + m)
    parts = [(a[offs[g]:offs[g + 1]], b[g]) for g in range(G) if rows[g]]
    loop = fl / med(lambda: [x @ w for x, w in parts])
    gmm = None
    if hasattr(torch, "_grouped_mm"):
        ends = torch.tensor(offs[1:], device="cuda", dtype=torch.int32)
        bt = b.transpose(-2, -1).contiguous().transpose(-2, -1)  # K-major per group
        for w in (b, bt):
            try:
                torch._grouped_mm(a, w, offs=ends)
                gmm = fl / med(lambda: torch._grouped_mm(a, w, offs=ends))
                break
            except Exception as e:  # layout or dtype it does not take
                print("torch._grouped_mm:", str(e)[:200], flush=True)
    del a, b, parts
    torch.cuda.empty_cache()
    record({"case": f"{kind} G={G} rows<={mmax} N={N} K={K}", "rows": total}, fl,
           best(dyn, rows, N, K), best(sta, rows, N, K), loop, gmm)
# gemm_grouped_k: (kind, G, KMAX, M, N)
KCASES = [("skewed", 32, 16384, 1024, 1024), ("uniform", 32, 8192, 1024, 1024),
          ("skewed", 64, 16384, 2048, 2048), ("uniform", 8, 8192, 4096, 4096)]
for kind, G, kmax, M, N in KCASES:
    ks = ks_of(kind, G, kmax, G * 104729 + kmax)
    koffs = [0]
    for k in ks:
        koffs.append(koffs[-1] + k)
    kt = max(koffs[-1], 1)
    fl = 2.0 * M * N * koffs[-1] / 1e9
    a = torch.randn(M, kt, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(kt, N, device="cuda", dtype=torch.bfloat16)
    parts = [(a[:, koffs[g]:koffs[g + 1]], b[koffs[g]:koffs[g + 1]]) for g in range(G) if ks[g]]
    loop = fl / med(lambda: [x @ w for x, w in parts])
    gmm = None
    if hasattr(torch, "_grouped_mm"):
        ends = torch.tensor(koffs[1:], device="cuda", dtype=torch.int32)
        for x, w in ((a, b), (a, b.t().contiguous().t())):
            try:
                torch._grouped_mm(x, w, offs=ends)
                gmm = fl / med(lambda: torch._grouped_mm(x, w, offs=ends))
                break
            except Exception as e:  # a layout it does not take
                print("torch._grouped_mm (K groups):", str(e)[:200], flush=True)
    del a, b, parts
    torch.cuda.empty_cache()
    record({"case": f"K groups {kind} G={G} K<={kmax} M={M} N={N}", "K": koffs[-1]}, fl,
           best(dyn, M, N, ks, ours_k), best(sta, M, N, ks, ours_k), loop, gmm)
if len(sys.argv) > 1:
    with open(sys.argv[1], "w") as f:
        json.dump(res, f, indent=1)
