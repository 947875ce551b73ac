"""compile_attention.py [OUT_JSON]: issue 18's compile times, source to
GPU binary on this machine's CPU -- tlxc on examples/attention_fwd.tlx
(D 128, causal and not; medians of 11) against Triton compiling an
attention forward kernel of the same algorithm (the one below: a block of
128 query rows, key blocks of 64, the online softmax in exp2; its first
launch in a fresh process with an empty cache, medians of 3).  Runs from
the folder testsuite/gpu/build.sh fills (tlxc, examples/)."""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

here = os.path.dirname(os.path.abspath(__file__))

TRITON_SRC = r'''
import sys, time, torch, triton, triton.language as tl

@triton.jit
def attn_fwd(q, k, v, o, S, qk, D: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr,
             CAUSAL: tl.constexpr):
    m0 = tl.program_id(0) * BM
    base = tl.program_id(1) * S * D
    rm = m0 + tl.arange(0, BM)
    rd = tl.arange(0, D)
    qb = tl.load(q + base + rm[:, None] * D + rd[None, :], mask=rm[:, None] < S, other=0.0)
    m = tl.full([BM], float("-inf"), tl.float32)
    l = tl.zeros([BM], tl.float32)
    acc = tl.zeros([BM, D], tl.float32)
    end = tl.minimum(S, m0 + BM) if CAUSAL else S
    for n0 in range(0, end, BN):
        rn = n0 + tl.arange(0, BN)
        kb = tl.load(k + base + rn[:, None] * D + rd[None, :], mask=rn[:, None] < S, other=0.0)
        vb = tl.load(v + base + rn[:, None] * D + rd[None, :], mask=rn[:, None] < S, other=0.0)
        x = tl.dot(qb, tl.trans(kb))
        keep = rn[None, :] < S
        if CAUSAL:
            keep = keep & (rn[None, :] <= rm[:, None])
        x = tl.where(keep, x, float("-inf"))
        mn = tl.maximum(m, tl.max(x, 1) * qk)
        p = tl.math.exp2(x * qk - mn[:, None])
        a = tl.math.exp2(m - mn)
        l = l * a + tl.sum(p, 1)
        acc = acc * a[:, None] + tl.dot(p.to(tl.bfloat16), vb)
        m = mn
    tl.store(o + base + rm[:, None] * D + rd[None, :], (acc / l[:, None]).to(tl.bfloat16),
             mask=rm[:, None] < S)

causal = int(sys.argv[1])
S, D = 1024, 128
x = torch.randn(4 * S, D, device="cuda", dtype=torch.bfloat16)
torch.cuda.synchronize()
t0 = time.perf_counter()
attn_fwd[(S // 128, 4)](x, x, x, x, S, 0.1275, D=D, BM=128, BN=64, CAUSAL=causal,
                        num_warps=8, num_stages=2)
torch.cuda.synchronize()
print(time.perf_counter() - t0)
'''


def tlxc_ms(defines):
    env = dict(os.environ, CUDA_CACHE_DISABLE="1")
    ts = []
    for _ in range(11):
        t0 = time.perf_counter()
        p = subprocess.run([os.path.join(here, "tlxc"), *defines,
                            os.path.join(here, "examples", "attention_fwd.tlx"), "-o",
                            os.path.join(tempfile.gettempdir(), "tlx-attn.cubin")],
                           capture_output=True, env=env)
        ts.append((time.perf_counter() - t0) * 1e3)
        if p.returncode:
            sys.exit("tlxc failed: " + p.stderr.decode()[:300])
    return statistics.median(ts)


def triton_ms(causal):
    src = os.path.join(tempfile.gettempdir(), "tri_attn_compile.py")
    with open(src, "w") as f:
        f.write(TRITON_SRC)
    ts = []
    for _ in range(3):
        with tempfile.TemporaryDirectory() as cache:
            env = dict(os.environ, TRITON_CACHE_DIR=cache, CUDA_CACHE_DISABLE="1")
            p = subprocess.run([sys.executable, src, str(causal)], capture_output=True, env=env)
            if p.returncode:
                return None, p.stderr.decode()[-300:]
            ts.append(float(p.stdout.split()[-1]) * 1e3)
    return statistics.median(ts), None


res = []
for causal in (0, 1):
    mine = tlxc_ms(["-D", "D=128", "-D", "CAUSAL=%d" % causal])
    tri, err = triton_ms(causal)
    r = {"kernel": "attention_fwd D128 causal %d" % causal, "tlxc_ms": round(mine, 1),
         "triton_first_launch_ms": tri and round(tri, 1)}
    if err:
        r["triton_error"] = err
    res.append(r)
    print(json.dumps(r), flush=True)
if len(sys.argv) > 1:
    with open(sys.argv[1], "w") as f:
        json.dump(res, f, indent=1)
