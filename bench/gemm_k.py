# bench/gemm_k.py: examples/matmul.tlx on operands whose rows are not
# 16-byte aligned (a K or N pitch of 8, 4 or 2 bytes: the generic entry,
# as TMA cannot take such a pitch) against the same build at 4096^3 and
# cuBLAS (torch.matmul), in one run; beside each build its A/B twin made
# with TLX_CG_REALIGN=all (cubin/ra-gemm-*: the realigned copy where the
# default takes cp.async of 8 or 4 bytes).  Runs on the GPU machine from
# the folder testsuite/gpu/build.sh fills.
#
#   python3 gemm_k.py [OUT_JSON]
import json, os, sys, tempfile, time
import tlxbench

os.environ.setdefault("TRITON_CACHE_DIR", tempfile.mkdtemp())
import torch
from triton.testing import do_bench

here = os.path.dirname(os.path.abspath(__file__))
SHAPES = [(4096, 4096, 4096), (4096, 4096, 4100), (4096, 4096, 4098), (4096, 4096, 4097),
          (4096, 4100, 4096), (4096, 4097, 4096), (2048, 2048, 2049), (8192, 8192, 8191)]
CFGS = ["128x256x64-s4-w8", "128x128x64-s3-w4"]


def ours(cubin, M, N, K):
    r = tlxbench.run(["matmul", cubin, M, N, K], here, timeout=300)
    return r and r["TFLOPs"]


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
        for pre in ("", "ra-"):
            path = os.path.join(here, "cubin", "%sgemm-%s.cubin" % (pre, cfg))
            if os.path.exists(path):
                r[pre + cfg] = ours(path, M, N, K)
        if r.get(cfg) and r.get("cublas"):
            r[cfg + "/cublas"] = r[cfg] / r["cublas"]
    res["rows"].append(r)
    print(json.dumps(r), flush=True)
if len(sys.argv) > 1:
    with open(sys.argv[1], "w") as f:
        json.dump(res, f, indent=1)
