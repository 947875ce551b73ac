# bench/gemm_epilogue.py: examples/gemm_epilogue.tlx (C = GELU(A @ B +
# bias), tanh form, the epilogue fused into the persistent warp-specialized
# GEMM) against the same GEMM without it (examples/gemm_static.tlx, the
# same configurations) and against torch (cuBLAS's matmul, then the bias
# and GELU, approximate="tanh"), in one run.  Runs on the GPU machine from
# the folder testsuite/gpu/build.sh fills (cubin/static-*.cubin,
# cubin/ep-*.cubin).
#
#   python3 gemm_epilogue.py [OUT_JSON]
import glob, json, os, sys, time
import tlxbench  # runs tlx kernels through the Python package (TLX_BENCH_C=1: bench_kernels)

import torch
from triton.testing import do_bench

here = os.path.dirname(os.path.abspath(__file__))
SHAPES = [(4096, 4096, 4096), (8192, 8192, 8192), (8192, 1024, 4096), (2048, 2048, 2048)]


def ours(mode, cubin, kernel, M, N, K):
    r = tlxbench.run([mode, cubin, kernel, M, N, K], here, timeout=600)
    return r and r["TFLOPs"]


res = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
       "date": time.strftime("%Y-%m-%d"), "rows": []}
for M, N, K in SHAPES:
    a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(K, N, device="cuda", dtype=torch.bfloat16)
    bias = torch.randn(N, device="cuda", dtype=torch.float32)
    fl = 2 * M * N * K / 1e9
    tor = fl / do_bench(lambda: torch.nn.functional.gelu(a @ b + bias, approximate="tanh"),
                        warmup=25, rep=200, return_mode="median")
    del a, b, bias
    torch.cuda.empty_cache()
    r = {"shape": f"{M}x{N}x{K}", "torch_gemm_bias_gelu": tor}
    # the same configurations side by side: static-X and ep-X
    for ep in sorted(glob.glob(os.path.join(here, "cubin", "ep-*.cubin"))):
        cfg = os.path.basename(ep)[3:-6]
        st = os.path.join(here, "cubin", "static-" + cfg + ".cubin")
        e = ours("gemm_bias", ep, "gemm_epilogue", M, N, K)
        p = ours("gemm", st, "gemm_static", M, N, K) if os.path.exists(st) else None
        r[cfg] = {"epilogue": e, "plain": p, "epilogue/plain": e / p if e and p else None}
    best = max((v["epilogue"] or 0 for k, v in r.items() if isinstance(v, dict)), default=0)
    r["best_epilogue/torch"] = best / tor if best else None
    res["rows"].append(r)
    print(json.dumps(r), flush=True)
if len(sys.argv) > 1:
    with open(sys.argv[1], "w") as f:
        json.dump(res, f, indent=1)
