"""tune_triton.py N [LIMIT]: Triton's autotuner over the space bench/tune.sh
gives tlx-tune for examples/matmul.tlx (BM, BN, BK, GROUP, STAGES, WARPS,
with the same two constraints), on the same algorithm (tri_matmul.py's
kernel, bf16 n x n x n): the wall time of the tuning call and the best
configuration's time, on one line of JSON.  LIMIT takes the first LIMIT
configurations of the space only (then the line says so)."""
import itertools
import json
import sys
import time

import torch
import triton
from triton.testing import do_bench

from tri_matmul import t_matmul

n = int(sys.argv[1])
limit = int(sys.argv[2]) if len(sys.argv) > 2 else 0
SMEM = 232448
configs = []
for bm, bn, bk, g, s, w in itertools.product((64, 128, 256), (64, 128, 256), (32, 64, 128),
                                             (1, 8), (2, 3, 4, 5), (4, 8)):
    if (bm + bn) * bk * 2 * s <= SMEM and bm * bn <= 128 * 32 * w:
        configs.append(triton.Config({"BM": bm, "BN": bn, "BK": bk, "G": g},
                                     num_stages=s, num_warps=w))
space = len(configs)
if limit:
    configs = configs[:limit]
tuned = triton.autotune(configs=configs, key=["M", "N", "K"])(t_matmul)
a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
c = torch.empty(n, n, device="cuda", dtype=torch.bfloat16)


def launch():
    tuned[lambda m: (triton.cdiv(n, m["BM"]) * triton.cdiv(n, m["BN"]),)](a, b, c, n, n, n)


t0 = time.time()
launch()
torch.cuda.synchronize()
wall = time.time() - t0
ms = do_bench(launch, warmup=25, rep=200, return_mode="median")
print(json.dumps({"n": n, "space": space, "configs": len(configs), "wall_s": round(wall, 1),
                  "best_ms": ms, "tflops": 2 * n ** 3 / ms / 1e9,
                  "best": str(tuned.best_config)}))
