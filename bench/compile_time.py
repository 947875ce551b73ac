# bench/compile_time.py: tlxc source-to-cubin time of every example, in
# several option sets, the runs of the sets interleaved so that the
# machine's noise falls on all of them alike.  Runs from the folder that
# testsuite/gpu/build.sh fills (tlxc, examples/).
#
#   python3 compile_time.py OUT_JSON [RUNS] ["OPTIONS" ...]
#
# An option set is a string of tlxc options, optionally beginning with
# NAME=VALUE environment settings; "" is the defaults.  Each round also
# times ptxas alone on one fixed PTX file (the matmul's), a yardstick for
# the machine's noise: compare leases by it, not by wall times alone.
# Last, tlxc's phases per example (TLX_CG_TIME=1): LLVM's and ptxas's
# shares of the time.
import json, os, shutil, statistics, subprocess, sys, tempfile, time

here = os.path.dirname(os.path.abspath(__file__))
out = sys.argv[1]
runs = int(sys.argv[2]) if len(sys.argv) > 2 else 15
sets = sys.argv[3:] or [""]
EXAMPLES = ["vadd", "copy", "softmax", "layernorm", "softmax_loop", "matmul", "gemm_tma",
            "gemm_ws", "gemm_fp8", "attention_fwd"]
cubin = os.path.join(tempfile.gettempdir(), "tlx-compile-time.cubin")


def command(opts, example):
    env = dict(os.environ, CUDA_CACHE_DISABLE="1")
    args = []
    for w in opts.split():
        if "=" in w and not w.startswith("-"):
            k, v = w.split("=", 1)
            env[k] = v
        else:
            args.append(w)
    cmd = [os.path.join(here, "tlxc"), *args, os.path.join(here, "examples", example + ".tlx"),
           "-o", cubin]
    return cmd, env


times = {(e, s): [] for e in EXAMPLES for s in sets}
ref_ptx = os.path.join(tempfile.gettempdir(), "tlx-compile-time-ref.ptx")
cmd, env = command("", "matmul")
subprocess.run(cmd[:-2] + ["--emit=ptx", "-o", ref_ptx], env=env, check=True)
ptxas = shutil.which("ptxas")
yardstick = []
for e in EXAMPLES:
    for i in range(runs):
        if ptxas:
            t0 = time.perf_counter()
            subprocess.run([ptxas, "-arch=sm_90a", ref_ptx, "-o", cubin], env=env,
                           capture_output=True)
            yardstick.append((time.perf_counter() - t0) * 1e3)
        for s in (sets if i % 2 == 0 else sets[::-1]):
            cmd, env = command(s, e)
            t0 = time.perf_counter()
            p = subprocess.run(cmd, env=env, capture_output=True)
            t = (time.perf_counter() - t0) * 1e3
            if p.returncode != 0:
                print("tlxc failed:", cmd, p.stderr.decode()[:300], flush=True)
                continue
            times[(e, s)].append(t)
rows = []
for e in EXAMPLES:
    for s in sets:
        v = times[(e, s)]
        r = {"example": e, "options": s, "median_ms": statistics.median(v) if v else None,
             "min_ms": min(v) if v else None, "runs": len(v)}
        rows.append(r)
        print(json.dumps(r), flush=True)
# where the time goes: tlxc's phases (TLX_CG_TIME=1, the default options),
# medians of 5 runs per example; "assemble" is ptxas
phases = {}
for e in EXAMPLES:
    cmd, env = command("TLX_CG_TIME=1", e)
    got = {}
    for i in range(5):
        p = subprocess.run(cmd, env=env, capture_output=True, text=True)
        for line in p.stderr.splitlines():
            w = line.split()
            if len(w) == 4 and w[0] == "codegen:" and w[3] == "ms":
                got.setdefault(w[1], []).append(float(w[2]))
    phases[e] = {k: statistics.median(v) for k, v in got.items()}
    print(json.dumps({"example": e, "phases_ms": phases[e]}), flush=True)
ys = {"median_ms": statistics.median(yardstick), "min_ms": min(yardstick),
      "runs": len(yardstick)} if yardstick else None
print(json.dumps({"yardstick": "ptxas on the matmul's PTX", **(ys or {})}), flush=True)
json.dump({"cpu": os.cpu_count(), "rows": rows, "ptxas_yardstick": ys, "phases": phases},
          open(out, "w"), indent=1)
