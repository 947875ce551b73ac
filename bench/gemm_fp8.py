# bench/gemm_fp8.py: examples/gemm_fp8.tlx (e4m3 operands, f32
# accumulation, bf16 output; B given transposed, N x K) against cuBLAS's
# fp8 GEMM (torch._scaled_mm with unit scales, the same layouts) over a
# sweep of shapes, in one run.  Runs on the GPU machine from the folder
# testsuite/gpu/build.sh fills (cubin/fp8-*.cubin: gemm_fp8.tlx's
# configurations).
#
#   python3 gemm_fp8.py [OUT_JSON]
#
# The tlx figure is the best of its configurations at each shape; times
# are medians of CUDA events (triton.testing.do_bench).
import glob, json, os, subprocess, sys, time
import tlxbench  # runs tlx kernels through the Python package (TLX_BENCH_C=1: bench_kernels)

import torch
import triton
from triton.testing import do_bench

here = os.path.dirname(os.path.abspath(__file__))
SHAPES = [(8192, 8192, 8192), (4096, 4096, 4096), (2048, 2048, 2048), (4096, 4096, 16384),
          (8192, 1024, 4096), (6016, 6016, 6016)]


def ours(cubin, M, N, K):
    p = subprocess.run(tlxbench.command(here) + ["gemm_fp8", cubin, "gemm_fp8",
                        str(M), str(N), str(K)], capture_output=True, text=True)
    if p.returncode != 0:
        print("bench_kernels failed:", cubin, p.stderr.strip()[:300], flush=True)
        return None
    return json.loads(p.stdout.strip().splitlines()[-1])["TFLOPs"]


res = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "triton": triton.__version__,
       "date": time.strftime("%Y-%m-%d"), "rows": []}
cfgs = sorted(glob.glob(os.path.join(here, "cubin", "fp8-*.cubin")))
one = torch.tensor(1.0, device="cuda")
for M, N, K in SHAPES:
    a = torch.randn(M, K, device="cuda").to(torch.float8_e4m3fn)
    bt = torch.randn(N, K, device="cuda").to(torch.float8_e4m3fn)
    fl = 2 * M * N * K / 1e9
    cub = fl / do_bench(lambda: torch._scaled_mm(a, bt.t(), scale_a=one, scale_b=one,
                                                 out_dtype=torch.bfloat16),
                        warmup=25, rep=200, return_mode="median")
    del a, bt
    torch.cuda.empty_cache()
    best = (None, "")
    for c in cfgs:
        t = ours(c, M, N, K)
        if t and (best[0] is None or t > best[0]):
            best = (t, os.path.basename(c)[:-6])
    r = {"shape": f"{M}x{N}x{K}", "cublas_fp8": cub, "tlx_fp8": best[0], "tlx_fp8_cfg": best[1],
         "tlx_fp8/cublas_fp8": best[0] / cub if best[0] else None}
    res["rows"].append(r)
    print(json.dumps(r), flush=True)
print(json.dumps({"worst": min((r["tlx_fp8/cublas_fp8"] for r in res["rows"]
                                if r["tlx_fp8/cublas_fp8"]), default=None)}))
if len(sys.argv) > 1:
    with open(sys.argv[1], "w") as f:
        json.dump(res, f, indent=1)
