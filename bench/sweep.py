# bench/sweep.py: every example over a sweep of shapes and sizes, aligned
# and ragged, reporting each kernel's WORST ratio to its baseline over the
# sweep (the no-cliffs measure), with the baselines measured in the same
# run.  Runs on the GPU machine from the folder testsuite/gpu/build.sh
# fills (bench_kernels, cubin/).
#
#   python3 sweep.py [OUT_JSON] [gemm,rows,vector]
#
# - gemm: examples/matmul.tlx in two configurations at shapes whose M, N
#   and K are off multiples of 16, 64 and 128 by a little, each against
#   the same kernel on the nearest aligned shape (multiples of 128),
#   TFLOP/s counting the shape's own flops; cuBLAS beside it.
# - rows: softmax and layernorm (bf16) over widths from 1 to 65536, odd
#   ones among them, against torch; each width runs the build that the
#   examples' header comments name for it (examples/softmax.tlx,
#   layernorm.tlx): BLOCK the smallest power of two >= the width up to
#   32768, ROWS and WARPS by default; wider rows softmax_loop with
#   BLOCK=8192, wider layer norms layernorm_loop with its defaults.
# - vector: vadd and copy (f32) at sizes that are not multiples of the
#   block, against torch's copy bandwidth at 2^28 elements and at the
#   same size.
#
# Times are medians of CUDA events (bench_kernels; triton.testing.do_bench
# for torch).
import json, os, subprocess, sys, tempfile, time
import tlxbench  # runs tlx kernels through the Python package (TLX_BENCH_C=1: bench_kernels)

os.environ.setdefault("TRITON_CACHE_DIR", tempfile.mkdtemp())
import torch, triton
from triton.testing import do_bench

here = os.path.dirname(os.path.abspath(__file__))
parts = (sys.argv[2] if len(sys.argv) > 2 else "gemm,rows,vector").split(",")
res = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
       "date": time.strftime("%Y-%m-%d"), "rows": [], "worst": {}}


def med(fn, ms=100):
    return do_bench(fn, warmup=10, rep=ms, return_mode="median")


def ours(*args):
    p = subprocess.run(tlxbench.command(here) + [*map(str, args)],
                       capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        print("bench_kernels failed:", args, p.stderr.strip()[:300], flush=True)
        return None
    return json.loads(p.stdout.strip().splitlines()[-1])


def cubin(name):
    return os.path.join(here, "cubin", name)


def record(kernel, size, value, base, base_name, unit, build=None):
    r = {"kernel": kernel, "size": size, "tlx": value, "baseline": base,
         "baseline_name": base_name, "unit": unit,
         "ratio": value / base if value and base else None}
    if build:
        r["build"] = build
    res["rows"].append(r)
    print(json.dumps(r), flush=True)
    if r["ratio"] is not None:
        w = res["worst"].get(kernel)
        if w is None or r["ratio"] < w["ratio"]:
            res["worst"][kernel] = {"ratio": r["ratio"], "size": size}


if "gemm" in parts:
    def near(x):
        return max(128, (x + 64) // 128 * 128)

    SHAPES = [(4096, 4096, 4096), (4097, 4096, 4096), (4100, 4096, 4096), (4160, 4096, 4096),
              (4096, 4104, 4096), (4096, 4112, 4096), (4096, 4096, 4104), (4096, 4096, 4120),
              (4000, 4000, 4000), (3000, 3000, 3000), (1000, 1000, 1000), (1001, 1000, 1000),
              (2047, 2056, 2040), (8191, 1024, 4096), (4096, 4096, 4100),
              (4096, 4096, 4098), (4096, 4096, 4097), (4096, 4097, 4096), (2047, 2047, 2047)]
    for cfg in ("gemm-128x256x64-s4-w8", "gemm-128x128x64-s3-w4"):
        aligned = {}
        for M, N, K in SHAPES:
            fl = 2 * M * N * K / 1e9
            o = ours("matmul", cubin(cfg + ".cubin"), M, N, K)
            t = o and o["TFLOPs"]
            key = (near(M), near(N), near(K))
            if key not in aligned:
                a = ours("matmul", cubin(cfg + ".cubin"), *key)
                aligned[key] = a and a["TFLOPs"]
            record(f"matmul {cfg} vs nearest aligned", f"{M}x{N}x{K}", t, aligned[key],
                   "the same kernel at %dx%dx%d" % key, "TFLOP/s")
            a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
            b = torch.randn(K, N, device="cuda", dtype=torch.bfloat16)
            record(f"matmul {cfg} vs cuBLAS", f"{M}x{N}x{K}", t, fl / med(lambda: a @ b),
                   "cuBLAS (torch.matmul)", "TFLOP/s")
            del a, b
            torch.cuda.empty_cache()

if "rows" in parts:
    WIDTHS = [1, 7, 8, 64, 100, 127, 256, 1000, 1024, 1025, 2048, 3000, 4095, 4096, 4097, 8191,
              8192, 16000, 30001, 32768, 50257, 65536]

    def module(kernel, n):
        b = 1 << (n - 1).bit_length()  # the smallest power of two >= n
        if b <= 32768:
            return kernel, f"{kernel}-B{b}.cubin"
        if kernel == "softmax":
            return "softmax_loop", "softmax_loop-B8192.cubin"
        return "layernorm_loop", "layernorm_loop.cubin"

    for n in WIDTHS:
        m = max(1, (1 << 26) // n)
        x = torch.randn(m, n, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(n, device="cuda", dtype=torch.bfloat16)
        bw = 2 * x.numel() * 2 / 1e9
        base = {"softmax": bw / med(lambda: torch.softmax(x, -1)),
                "layernorm": bw / med(lambda: torch.nn.functional.layer_norm(x, (n,), w, w))}
        del x, w
        torch.cuda.empty_cache()
        for k, name in (("softmax", "torch.softmax"), ("layernorm", "torch layer_norm")):
            kn, mod = module(k, n)
            o = ours(kn, cubin(mod), m, n)
            aligned = "aligned" if n % 16 == 0 else "odd"
            record(f"{k} bf16 ({aligned} widths)", f"{m}x{n}", o and o["TBps"], base[k], name,
                   "TB/s", build=mod)

if "vector" in parts:
    n = 1 << 28
    x = torch.empty(n, dtype=torch.float32, device="cuda").normal_()
    z = torch.empty_like(x)
    copy_bw = 2 * n * 4 / med(lambda: z.copy_(x)) / 1e9
    del x, z
    torch.cuda.empty_cache()
    res["copy_TBps"] = copy_bw
    for n in ((1 << 24) + 1, 30000007, 100000007, (1 << 28) - 3):
        x = torch.empty(n, dtype=torch.float32, device="cuda").normal_()
        z = torch.empty_like(x)
        same_bw = 2 * n * 4 / med(lambda: z.copy_(x)) / 1e9
        del x, z
        torch.cuda.empty_cache()
        for k in ("vadd", "copy"):
            o = ours(k, cubin(k + ".cubin"), n)
            record(f"{k} f32 vs copy bandwidth", str(n), o and o["TBps"], copy_bw,
                   "torch copy_ at 2^28", "TB/s")
            record(f"{k} f32 vs copy at the same size", str(n), o and o["TBps"], same_bw,
                   "torch copy_ at the same n", "TB/s")

print(json.dumps({"worst": res["worst"]}, indent=1))
if len(sys.argv) > 1:
    with open(sys.argv[1], "w") as f:
        json.dump(res, f, indent=1)
