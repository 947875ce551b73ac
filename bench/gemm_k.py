# bench/gemm_k.py: examples/matmul.tlx on operands whose rows are not
# 16-byte aligned (a K or N of a bf16 GEMM that is not a multiple of 8:
# no tensor map of the arguments themselves), in one run, for each build:
#   staged   the default: the launch copies such an operand into rows 16
#            bytes apart and reads the copy with TMA (docs/runtime.md);
#            the copy is runtime/stage.tlx's kernel
#   copy2d   the same with TLXRT_STAGE=copy2d: the copy by cuMemcpy2DAsync
#   unstaged TLXRT_STAGE=0: the generic entry's cp.async copies
#   aligned  the same build on the nearest shape whose K and N are
#            multiples of 8 (issue 15's yardstick)
# and cuBLAS (torch.matmul) on the odd shape.  Runs on the GPU machine
# from the folder testsuite/gpu/build.sh fills.
#
#   python3 gemm_k.py [OUT_JSON] [SHAPES]
#
# SHAPES: a comma-separated subset of the shapes below (e.g.
# 1000x1001x1000,8192x8192x8191), for a call that cannot take them all.
import json, os, sys, tempfile, time
import tlxbench

os.environ.setdefault("TRITON_CACHE_DIR", tempfile.mkdtemp())
import torch
from triton.testing import do_bench

here = os.path.dirname(os.path.abspath(__file__))
SHAPES = [(4096, 4096, 4096), (4096, 4096, 4100), (4096, 4096, 4098), (4096, 4096, 4097),
          (4096, 4100, 4096), (4096, 4097, 4096), (4096, 4097, 4097), (2048, 2049, 2048),
          (2048, 2048, 2049), (8192, 8191, 8192), (8192, 8192, 8191), (1000, 1001, 1000)]
CFGS = ["128x256x64-s4-w8", "128x128x64-s3-w4"]
if len(sys.argv) > 2:
    want = sys.argv[2].split(",")
    SHAPES = [s for s in SHAPES if "%dx%dx%d" % s in want]


def ours(cubin, M, N, K, stage=None):
    """TFLOP/s of the build on M x N x K; stage: TLXRT_STAGE's value."""
    if stage is None:
        os.environ.pop("TLXRT_STAGE", None)
    else:
        os.environ["TLXRT_STAGE"] = stage
    try:
        r = tlxbench.run(["matmul", cubin, M, N, K], here, timeout=300)
    finally:
        os.environ.pop("TLXRT_STAGE", None)
    return r and r["TFLOPs"]


def up8(x):
    return (x + 7) // 8 * 8


res = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
       "date": time.strftime("%Y-%m-%d"), "rows": []}
for M, N, K in SHAPES:
    a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(K, N, device="cuda", dtype=torch.bfloat16)
    r = {"shape": "%dx%dx%d" % (M, N, K),
         "cublas": 2 * M * N * K / 1e9 / do_bench(lambda: a @ b, warmup=10, rep=100,
                                                  return_mode="median")}
    del a, b
    torch.cuda.empty_cache()
    for cfg in CFGS:
        path = os.path.join(here, "cubin", "gemm-%s.cubin" % cfg)
        if not os.path.exists(path):
            continue
        s = ours(path, M, N, K)
        odd = (up8(N), up8(K)) != (N, K)
        c2 = ours(path, M, N, K, stage="copy2d") if odd else s
        u = ours(path, M, N, K, stage="0")
        al = ours(path, M, up8(N), up8(K)) if odd else s
        # the aligned shape does more work: compare times, not rates
        al_t = al and al / (2 * M * up8(N) * up8(K)) * (2 * M * N * K)
        r[cfg] = {"staged": s, "copy2d": c2, "unstaged": u, "aligned": al,
                  "staged/aligned": s / al_t if s and al_t else None,
                  "staged/cublas": s / r["cublas"] if s else None}
    res["rows"].append(r)
    print(json.dumps(r), flush=True)
worst = min((v["staged/aligned"] for r in res["rows"] for k, v in r.items()
             if isinstance(v, dict) and v["staged/aligned"]), default=None)
print(json.dumps({"worst staged/aligned": worst}))
if len(sys.argv) > 1:
    with open(sys.argv[1], "w") as f:
        json.dump(res, f, indent=1)
