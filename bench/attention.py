# bench/attention.py: examples/attention_fwd.tlx (attention_fwd, and
# attention_fwd_dyn for causal) against torch's scaled_dot_product_attention
# with the cuDNN and flash backends, in one run; first O and the
# log-sum-exp of a smaller problem against a float32 reference made with
# torch.  Runs on the GPU machine from the folder testsuite/gpu/build.sh
# fills (cubin/attn-d{D}-c{CAUSAL}.cubin; -o1: OVERLAP = 1, two key
# blocks in flight, FlashAttention-3's intra-warpgroup pipelining, for D
# 64 and 128, attention_fwd's default there, -o0 attention_fwd without it; -o1p: that and PINGPONG = 1, the two consumers taking turns
# at the tensor cores); for D 256, whose default is BN = 64 and two stages,
# -b32: BN = 32 and two stages, -b32s3 three, -b32o1 two and OVERLAP = 1;
# -s1: BN = 64 and one stage; -q1 and -o1q1: attention_fwd_dyn with one
# slot for Q instead of the default two, D 64 and 128).
#
#   [ATTN_VARIANTS=attention_fwd,...] python3 attention.py [OUT_JSON]
import json, math, os, sys, time

import tlxbench

tlxbench.setup()
import tlx  # noqa: E402
import torch  # noqa: E402
from torch.nn.attention import SDPBackend, sdpa_kernel  # noqa: E402
from triton.testing import do_bench  # noqa: E402

here = os.path.dirname(os.path.abspath(__file__))
# (Z, H, HKV, S, D): issue 18's shapes
SHAPES = [(4, 32, 32, 4096, 128), (4, 32, 32, 4096, 64), (4, 32, 32, 4096, 256),
          (2, 64, 8, 4096, 128), (1, 64, 8, 8192, 128)] + \
         [(max(1, 16384 // s), 32, 32, s, 128) for s in (512, 1024, 2048, 8192, 16384)]


VARIANTS = [("attention_fwd", ""), ("attention_fwd_dyn", ""), ("attention_fwd", "-o0"),
            ("attention_fwd", "-o1"), ("attention_fwd_dyn", "-o1"), ("attention_fwd", "-o1p"),
            ("attention_fwd", "-b32"), ("attention_fwd_dyn", "-b32"), ("attention_fwd", "-b32s3"),
            ("attention_fwd", "-b32o1"), ("attention_fwd", "-s1"),
            ("attention_fwd_dyn", "-q1"), ("attention_fwd_dyn", "-o1q1")]
# ATTN_VARIANTS=attention_fwd,attention_fwd_dyn-o1: only those
if os.environ.get("ATTN_VARIANTS"):
    VARIANTS = [v for v in VARIANTS if v[0] + v[1] in os.environ["ATTN_VARIANTS"].split(",")]


def kernel(D, causal, name, variant=""):
    path = os.path.join(here, "cubin", "attn-d%d-c%d%s.cubin" % (D, causal, variant))
    if not os.path.exists(path):
        return None
    return tlx.load(path).kernels[name]


def ours(k, q, kk, v, Z, H, HKV, S, D):
    """O (Z, H, S, D) and the log-sum-exp (Z, H, S) of our kernel."""
    o = torch.empty_like(q)
    lse = torch.empty(Z * H * S, device="cuda", dtype=torch.float32)
    args = (q.reshape(-1, D), kk.reshape(-1, D), v.reshape(-1, D), o, lse, Z, H, HKV, S, S,
            1 / math.sqrt(D))
    return o, lse.view(Z, H, S), (lambda: k(*args))


def check(k, D, causal, name, Z=1, H=4, HKV=2, S=1000):
    q = torch.randn(Z, H, S, D, device="cuda", dtype=torch.bfloat16)
    kk = torch.randn(Z, HKV, S, D, device="cuda", dtype=torch.bfloat16)
    v = torch.randn(Z, HKV, S, D, device="cuda", dtype=torch.bfloat16)
    o, lse, run = ours(k, q, kk, v, Z, H, HKV, S, D)
    run()
    torch.cuda.synchronize()
    kf = kk.float().repeat_interleave(H // HKV, 1)
    vf = v.float().repeat_interleave(H // HKV, 1)
    s = q.float() @ kf.transpose(-1, -2) / math.sqrt(D)
    if causal:
        s = s.masked_fill(torch.ones(S, S, device="cuda").triu(1).bool(), float("-inf"))
    ref = torch.softmax(s, -1) @ vf
    return {"kernel": name, "D": D, "causal": causal,
            "O_maxerr": (o.float() - ref).abs().max().item(),
            "lse_maxerr": (lse - torch.logsumexp(s, -1)).abs().max().item()}


res = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
       "date": time.strftime("%Y-%m-%d"), "checks": [], "rows": []}
for D in (64, 128, 256):
    for causal in (0, 1):
        for name, var in VARIANTS:
            k = kernel(D, causal, name, var)
            if k is None:
                continue
            c = check(k, D, causal, name + var)
            res["checks"].append(c)
            print(json.dumps(c), flush=True)
for Z, H, HKV, S, D in SHAPES:
    for causal in (0, 1):
        q = torch.randn(Z, H, S, D, device="cuda", dtype=torch.bfloat16)
        kk = torch.randn(Z, HKV, S, D, device="cuda", dtype=torch.bfloat16)
        v = torch.randn(Z, HKV, S, D, device="cuda", dtype=torch.bfloat16)
        tf = 4.0 * Z * H * S * S * D / (2 if causal else 1) / 1e9
        r = {"shape": "Z%d H%d/%d S%d D%d" % (Z, H, HKV, S, D), "causal": causal}
        for be, tag in ((SDPBackend.CUDNN_ATTENTION, "cudnn"), (SDPBackend.FLASH_ATTENTION, "flash")):
            try:
                with sdpa_kernel(be):
                    r[tag] = tf / do_bench(lambda: torch.nn.functional.scaled_dot_product_attention(
                        q, kk, v, is_causal=bool(causal), enable_gqa=H != HKV), warmup=25, rep=200)
            except RuntimeError as e:
                r[tag] = None
                r[tag + "_error"] = str(e)[:200]
        for name, var in VARIANTS:
            k = kernel(D, causal, name, var)
            if k is None:
                continue
            try:
                _, _, run = ours(k, q, kk, v, Z, H, HKV, S, D)
                r[name + var] = tf / do_bench(run, warmup=25, rep=200)
            except Exception as e:  # a launch error is a result too
                r[name + var] = None
                r[name + var + "_error"] = str(e)[:200]
        best = max(r.get(name + var) or 0 for name, var in VARIANTS)
        r["best/cudnn"] = best / r["cudnn"] if best and r.get("cudnn") else None
        res["rows"].append(r)
        print(json.dumps(r), flush=True)
        del q, kk, v
        torch.cuda.empty_cache()
if len(sys.argv) > 1:
    with open(sys.argv[1], "w") as f:
        json.dump(res, f, indent=1)
