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
# Each tlx figure is the best of its configurations; times are medians of
# CUDA events (bench_kernels for tlx, triton.testing.do_bench for torch).
# TFLOP/s count 2 * rows * N * K over all groups.
import glob, json, os, random, subprocess, sys, time
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
    try:
        p = subprocess.run(tlxbench.command(here) + ["grouped", cubin, "gemm_grouped",
                            str(N), str(K), str(bm), str(bn), ",".join(map(str, rows))],
                           capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        print("bench_kernels timed out:", cubin, flush=True)
        return None
    if p.returncode != 0:
        print("bench_kernels failed:", cubin, p.stderr.strip()[:300], flush=True)
        return None
    return json.loads(p.stdout.strip().splitlines()[-1])["ms"]


def best(paths, rows, N, K):
    b = (None, "")
    for path in paths:
        ms = ours(path, rows, N, K)
        if ms and (b[0] is None or ms < b[0]):
            b = (ms, os.path.basename(path)[:-6])
    return b


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
    d = best(dyn, rows, N, K)
    s = best(sta, rows, N, K)
    r = {"case": f"{kind} G={G} rows<={mmax} N={N} K={K}", "rows": total,
         "dynamic": fl / d[0] if d[0] else None, "dynamic_cfg": d[1],
         "static": fl / s[0] if s[0] else None, "static_cfg": s[1],
         "cublas_loop": loop, "grouped_mm": gmm}
    r["dynamic/static"] = r["dynamic"] / r["static"] if d[0] and s[0] else None
    r["dynamic/cublas_loop"] = r["dynamic"] / loop if d[0] else None
    r["dynamic/grouped_mm"] = r["dynamic"] / gmm if d[0] and gmm else None
    res["rows"].append(r)
    print(json.dumps(r), flush=True)
if len(sys.argv) > 1:
    with open(sys.argv[1], "w") as f:
        json.dump(res, f, indent=1)
