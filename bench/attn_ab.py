# attn_ab.py: attention_fwd builds (cubin paths) against cuDNN in one run:
# a check against a float32 reference, then TFLOP/s at Z4 H32 S4096 D128
# (and S 8192), two rounds in alternating order.
import math, sys, json
import tlxbench
tlxbench.setup()
import tlx, torch
from torch.nn.attention import SDPBackend, sdpa_kernel
from triton.testing import do_bench

def ours(k, q, kk, v, Z, H, HKV, S, D):
    o = torch.empty_like(q)
    lse = torch.empty(Z * H * S, device="cuda", dtype=torch.float32)
    args = (q.reshape(-1, D), kk.reshape(-1, D), v.reshape(-1, D), o, lse, Z, H, HKV, S, S, 1 / math.sqrt(D))
    return o, lse.view(Z, H, S), (lambda: k(*args))

builds = {c: [b for b in sys.argv[1:] if ("-c%d" % c) in b] for c in (0, 1)}
D = 128
for c in (0, 1):
    for b in builds[c]:
        k = tlx.load(b).kernels["attention_fwd"]
        Z, H, HKV, S = 1, 4, 2, 1000
        q = torch.randn(Z, H, S, D, device="cuda", dtype=torch.bfloat16)
        kk = torch.randn(Z, HKV, S, D, device="cuda", dtype=torch.bfloat16)
        v = torch.randn(Z, HKV, S, D, device="cuda", dtype=torch.bfloat16)
        o, lse, run = ours(k, q, kk, v, Z, H, HKV, S, D)
        run(); torch.cuda.synchronize()
        kf = kk.float().repeat_interleave(H // HKV, 1); vf = v.float().repeat_interleave(H // HKV, 1)
        s = q.float() @ kf.transpose(-1, -2) / math.sqrt(D)
        if c:
            s = s.masked_fill(torch.ones(S, S, device="cuda").triu(1).bool(), float("-inf"))
        ref = torch.softmax(s, -1) @ vf
        print("check", b, "O", (o.float() - ref).abs().max().item(), "lse",
              (lse - torch.logsumexp(s, -1)).abs().max().item(), flush=True)
for Z, S in ((4, 4096), (2, 8192)):
    for c in (0, 1):
        H = HKV = 32
        q = torch.randn(Z, H, S, D, device="cuda", dtype=torch.bfloat16)
        kk = torch.randn(Z, HKV, S, D, device="cuda", dtype=torch.bfloat16)
        v = torch.randn(Z, HKV, S, D, device="cuda", dtype=torch.bfloat16)
        tf = 4.0 * Z * H * S * S * D / (2 if c else 1) / 1e9
        res = {}
        for r in range(2):
            with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
                res.setdefault("cudnn", []).append(tf / do_bench(lambda: torch.nn.functional.scaled_dot_product_attention(q, kk, v, is_causal=bool(c)), warmup=25, rep=200))
            for b in (builds[c] if r == 0 else builds[c][::-1]):
                k = tlx.load(b).kernels["attention_fwd"]
                _, _, run = ours(k, q, kk, v, Z, H, HKV, S, D)
                res.setdefault(b, []).append(tf / do_bench(run, warmup=25, rep=200))
        cd = max(res["cudnn"])
        for b, t in res.items():
            print("Z%d S%d c%d %-34s %7.1f %7.1f  / cudnn %.3f" % (Z, S, c, b, t[0], t[1], max(t) / cd), flush=True)
        del q, kk, v
        torch.cuda.empty_cache()
