# bench/gemm.py: examples/matmul.tlx (unchanged source; wgmma on sm_90a)
# and examples/gemm_tma.tlx (TMA + wgmma, no tasks) and
# examples/gemm_ws.tlx (warp-specialized), examples/gemm_cluster.tlx (the
# same in clusters of two sharing B by TMA multicast), examples/gemm_static.tlx (the
# same over a persistent grid), examples/gemm_persistent.tlx (over a
# dynamic schedule) and examples/gemm_pingpong.tlx (its consumers on
# alternate tiles, main loops in turn) against cuBLAS
# (torch.matmul), Triton's tl.dot GEMM and the mma.sync build of
# matmul.tlx, over a sweep of shapes, all in one run.  Runs on the GPU
# machine from the folder testsuite/gpu/build.sh fills: cubin/gemm-*.cubin
# are matmul.tlx's configurations, cubin/tma-*.cubin gemm_tma.tlx's,
# cubin/ws-*.cubin gemm_ws.tlx's, cubin/cluster-*.cubin gemm_cluster.tlx's
# (gemm_ws's configurations), cubin/static-*.cubin gemm_static.tlx's,
# cubin/dyn-*.cubin gemm_persistent.tlx's, cubin/pp-*.cubin gemm_pingpong.tlx's,
# cubin/mma-gemm-* its mma.sync build (sm_80 code assembled for sm_90a).
#
#   python3 gemm.py [OUT_JSON]
#
# GEMM_KERNELS=matmul,mma (a comma list of matmul, mma, tma, ws, cluster,
# static, dyn, pp) measures only those of the tlx kernels; cuBLAS and Triton always.
# GEMM_SHAPES=4096x4096x4096,8192x8192x8192 (MxNxK, a comma list) measures
# only those shapes.
#
# Each tlx and Triton figure is the best of its configurations at that
# shape (what an autotuner would pick); times are medians of CUDA events.
import glob, json, os, sys, tempfile, time
import tlxbench  # runs tlx kernels through the Python package (TLX_BENCH_C=1: bench_kernels)

os.environ.setdefault("TRITON_CACHE_DIR", tempfile.mkdtemp())
import torch, triton, triton.language as tl
from triton.testing import do_bench
from tri_matmul import t_matmul

here = os.path.dirname(os.path.abspath(__file__))
SHAPES = [(4096, 4096, 4096), (8192, 8192, 8192), (2048, 2048, 2048), (1024, 1024, 1024),
          (3000, 3000, 3000), (4096, 4096, 1024), (8192, 1024, 4096), (1000, 1000, 1000)]
if os.environ.get("GEMM_SHAPES"):  # e.g. 4096x4096x4096,8192x8192x8192
    SHAPES = [tuple(int(v) for v in s.split("x")) for s in os.environ["GEMM_SHAPES"].split(",")]
TRITON_CFGS = [(128, 256, 64, 3, 8), (128, 128, 64, 4, 4), (128, 256, 64, 4, 8), (256, 128, 64, 3, 8)]


def med(fn, ms=200):
    return do_bench(fn, warmup=25, rep=ms, return_mode="median")


def ours(cubin, M, N, K):
    base = os.path.basename(cubin)
    cmd = (["gemm", cubin, "gemm_tma"] if base.startswith("tma-") else
           ["gemm", cubin, "gemm_ws"] if base.startswith("ws-") else
           ["gemm", cubin, "gemm_cluster"] if base.startswith("cluster-") else
           ["gemm", cubin, "gemm_static"] if base.startswith("static-") else
           ["gemm", cubin, "gemm_persistent"] if base.startswith("dyn-") else
           ["gemm", cubin, "gemm_pingpong"] if base.startswith("pp-") else ["matmul", cubin])
    r = tlxbench.run(cmd + [M, N, K], here, timeout=60)
    return r and r["TFLOPs"]


def best_of(paths, M, N, K):
    best = (None, "")
    for path in paths:
        t = ours(path, M, N, K)
        if t and (best[0] is None or t > best[0]):
            best = (t, os.path.basename(path)[:-6])
    return best


res = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "triton": triton.__version__,
       "date": time.strftime("%Y-%m-%d"), "rows": []}
only = os.environ.get("GEMM_KERNELS", "matmul,mma,tma,ws,cluster,static,dyn,pp").split(",")


def cubins(kind, pattern):
    return sorted(glob.glob(os.path.join(here, "cubin", pattern))) if kind in only else []


new = cubins("matmul", "gemm-*.cubin")
old = cubins("mma", "mma-gemm-*.cubin")
tmas = cubins("tma", "tma-*.cubin")
wss = cubins("ws", "ws-*.cubin")
clusters = cubins("cluster", "cluster-*.cubin")
statics = cubins("static", "static-*.cubin")
dyns = cubins("dyn", "dyn-*.cubin")
pps = cubins("pp", "pp-*.cubin")
for M, N, K in SHAPES:
    a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(K, N, device="cuda", dtype=torch.bfloat16)
    c = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
    fl = 2 * M * N * K / 1e9
    cub = fl / med(lambda: a @ b)
    tri = (None, "")
    for BM, BN, BK, S, W in TRITON_CFGS:
        grid = (triton.cdiv(M, BM) * triton.cdiv(N, BN),)
        fn = lambda: t_matmul[grid](a, b, c, M, N, K, BM=BM, BN=BN, BK=BK, G=8, num_stages=S, num_warps=W)
        fn()
        t = fl / med(fn)
        if tri[0] is None or t > tri[0]:
            tri = (t, f"{BM}x{BN}x{BK} s{S} w{W}")
    del a, b, c
    torch.cuda.empty_cache()
    tlx = best_of(new, M, N, K)
    dflt = ours(os.path.join(here, "cubin", "gemm-default.cubin"), M, N, K) if new else None
    mma = best_of(old, M, N, K) if old else (None, "")
    tma = best_of(tmas, M, N, K)
    ws = best_of(wss, M, N, K)
    cl = best_of(clusters, M, N, K)
    st = best_of(statics, M, N, K)
    dy = best_of(dyns, M, N, K)
    pp = best_of(pps, M, N, K)
    r = {"shape": f"{M}x{N}x{K}", "cublas": cub, "triton": tri[0], "triton_cfg": tri[1],
         "tlx": tlx[0], "tlx_cfg": tlx[1], "tlx_default": dflt, "mma_sync": mma[0], "mma_sync_cfg": mma[1],
         "tlx_tma": tma[0], "tlx_tma_cfg": tma[1], "tlx_ws": ws[0], "tlx_ws_cfg": ws[1],
         "tlx_cluster": cl[0], "tlx_cluster_cfg": cl[1],
         "tlx_static": st[0], "tlx_static_cfg": st[1], "tlx_dynamic": dy[0], "tlx_dynamic_cfg": dy[1],
         "tlx_pingpong": pp[0], "tlx_pingpong_cfg": pp[1]}
    for k in ("tlx", "tlx_default", "tlx_tma", "tlx_ws", "tlx_cluster", "tlx_static", "tlx_dynamic",
              "tlx_pingpong"):
        r[k + "/cublas"] = r[k] / cub if r[k] else None
    r["tlx/triton"] = tlx[0] / tri[0] if tlx[0] and tri[0] else None
    r["tlx/mma_sync"] = tlx[0] / mma[0] if tlx[0] and mma[0] else None
    r["tlx_tma/triton"] = tma[0] / tri[0] if tma[0] and tri[0] else None
    r["tlx_cluster/tlx_ws"] = cl[0] / ws[0] if cl[0] and ws[0] else None
    r["tlx_pingpong/tlx_ws"] = pp[0] / ws[0] if pp[0] and ws[0] else None
    res["rows"].append(r)
    print(json.dumps(r), flush=True)
worst = {k: min((r[k] for r in res["rows"] if r[k]), default=None)
         for k in ("tlx/cublas", "tlx_tma/cublas", "tlx_ws/cublas", "tlx_cluster/cublas",
                   "tlx_static/cublas", "tlx_dynamic/cublas", "tlx_pingpong/cublas")}
print(json.dumps({"worst": worst}))
if len(sys.argv) > 1:
    with open(sys.argv[1], "w") as f:
        json.dump(res, f, indent=1)
