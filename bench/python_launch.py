# bench/python_launch.py: the host time of one kernel launch from Python
# (issue 20's measure), every way in one process: examples/vadd.tlx through
# the tlx package (the cached path: k[grid](...) and k(...) on torch CUDA
# tensors, k[grid](...) on tlx Buffers), tlxrt_launch called through
# ctypes with arguments built once (the package's floor), cuLaunchKernel of
# the same cubin through ctypes (Python's floor), the same vadd as a Triton
# kernel (k[grid](..., BLOCK=1024)), and torch.add(x, y, out=z).  Tiny
# launches (n = 4096), so that the GPU never makes the host wait.
#
#   python3 bench/python_launch.py [N] [OUT.json]
#
# Each figure is the median over 21 rounds of the mean host time of N
# (default 2000) back-to-back launches, the rounds of all the ways
# interleaved, the queue drained between rounds (as bench/launch_cost.c).
# Prints a table and, last, one JSON line.
#
# Without a GPU (or torch), the part that does not depend on the device:
# the package's launcher for tlx Buffers as the cuda backend has it, with a
# stub launch (tlxrt_launch called with no kernel, which returns at once),
# against the bare ctypes call; and the same launch on the simulator.
#
# Run from the tree (TLX_LIBDIR=build/.libs) or from the folder
# testsuite/gpu/build.sh fills (python/, lib/, tlxc, examples/; see
# testsuite/python/h200.sh).
import ctypes, json, os, statistics, sys, time

import tlxbench  # noqa: E402

here = os.path.dirname(os.path.abspath(__file__))
tlxbench.setup()  # the package, its libraries and tlxc, in the tree or the carry
import tlx  # noqa: E402
from tlx import _fast, _lib  # noqa: E402

N = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
ROUNDS = 21
n = 4096
examples = next(p for p in (os.path.join(here, "examples"), os.path.join(here, "..", "examples"))
                if os.path.isdir(p))

try:
    import torch
    cuda = torch.cuda.is_available()
except ImportError:
    torch, cuda = None, False

dev = tlx.device("cuda" if cuda else "sim")
k = tlx.compile(os.path.join(examples, "vadd.tlx"))  # BLOCK 1024: 4 programs
grid = (-(-n // k.consts["BLOCK"]),)
ways = {}
drain = dev.synchronize

# tlx Buffers, and the bare tlxrt_launch with arguments built once
bx, by, bz = (tlx.empty(n, "f32") for _ in range(3))
for b in (bx, by, bz):
    b.copy_from(bytes(4 * n))
args = (_lib.Arg * 4)()
for i, b in enumerate((bx, by, bz)):
    args[i].kind, args[i].v.ptr = _lib.ARG_PTR, b.ptr
args[3].kind, args[3].v.i32 = _lib.ARG_I32, n
cfg = _lib.LaunchConfig()
cfg.grid[0], cfg.grid[1], cfg.grid[2] = grid[0], 1, 1
raw_launch = dev.lib.tlxrt_launch
kaddr, pcfg, pargs = k._addr, ctypes.addressof(cfg), ctypes.addressof(args)


def bare():
    raw_launch(kaddr, pcfg, pargs, 4)


kb = k[grid]
kb(bx, by, bz, n)
kb(bx, by, bz, n)
assert k._launchers, "no launcher was made for Buffers"
ways["tlx k[grid] Buffers"] = lambda: kb(bx, by, bz, n)
ways["tlxrt_launch ctypes"] = bare

if cuda:
    x, y, z = (torch.zeros(n, device="cuda") for _ in range(3))
    kb(x, y, z, n)
    k(x, y, z, n)
    ways["tlx k[grid] torch"] = lambda: kb(x, y, z, n)
    ways["tlx k() torch"] = lambda: k(x, y, z, n)
    ways["torch.add"] = lambda: torch.add(x, y, out=z)
    drain = torch.cuda.synchronize

    # cuLaunchKernel of the same cubin, in the same (primary) context
    cu = ctypes.CDLL("libcuda.so.1")
    mod, fn = ctypes.c_void_p(), ctypes.c_void_p()
    assert cu.cuModuleLoadData(ctypes.byref(mod), k.module.image) == 0
    assert cu.cuModuleGetFunction(ctypes.byref(fn), mod, k.name.encode()) == 0
    vals = [ctypes.c_uint64(t.data_ptr()) for t in (x, y, z)] + [ctypes.c_int32(n)]
    params = (ctypes.c_void_p * 4)(*[ctypes.addressof(v) for v in vals])
    cu.cuLaunchKernel.argtypes = [ctypes.c_void_p] + [ctypes.c_uint] * 7 + [ctypes.c_void_p] * 3
    block = 32 * k.total_warps
    fnp = fn.value

    def raw():
        return cu.cuLaunchKernel(fnp, grid[0], 1, 1, block, 1, 1, 0, None, params, None)
    assert raw() == 0, "cuLaunchKernel failed"
    torch.cuda.synchronize()
    ways["cuLaunchKernel ctypes"] = raw

    try:
        import triton
        import triton.language as tl

        @triton.jit
        def t_vadd(x, y, out, n, BLOCK: tl.constexpr):
            i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            m = i < n
            tl.store(out + i, tl.load(x + i, mask=m) + tl.load(y + i, mask=m), mask=m)

        t_vadd[grid](x, y, z, n, BLOCK=1024)
        torch.cuda.synchronize()
        ways["triton"] = lambda: t_vadd[grid](x, y, z, n, BLOCK=1024)
    except ImportError:
        print("no triton: its figure is missing")
    # the results are right (x + y with x = 1, y = 2)
    x.fill_(1)
    y.fill_(2)
    kb(x, y, z, n)
    torch.cuda.synchronize()
    assert bool((z == 3).all()), "tlx's vadd is wrong"
else:
    # the launcher the cuda backend has, launching nothing, in a kernel of
    # its own (the same source, loaded again)
    ks = tlx.compile(os.path.join(examples, "vadd.tlx"), name="vadd (stub)")
    ks._fast = _fast.build(ks, _fast._signature(ks, (bx, by, bz, n)), stub=True)
    ksb = ks[grid]
    nolaunch = _lib.L.rt.tlxrt_launch

    ways["tlx k[grid] stub"] = lambda: ksb(bx, by, bz, n)
    ways["ctypes no-op call"] = lambda: nolaunch(0, pcfg, pargs, 4)

times = {w: [] for w in ways}
for _ in range(ROUNDS):
    for w, f in ways.items():
        drain()
        t0 = time.perf_counter()
        for _ in range(N):
            f()
        times[w].append((time.perf_counter() - t0) / N * 1e6)
    drain()
res = {w: statistics.median(t) for w, t in times.items()}
print("%s, %s, n = %d, %d launches x %d rounds (median of the rounds' means)"
      % (dev.name, dev.product, n, N, ROUNDS))
for w, t in res.items():
    print("  %-24s %8.2f us  (min %.2f)" % (w, t, min(times[w])))
out = {"device": dev.product, "us": res}
if cuda:
    out["tlx/triton"] = res["tlx k[grid] torch"] / res["triton"] if "triton" in res else None
    out["tlx/cuLaunchKernel"] = res["tlx k[grid] torch"] / res["cuLaunchKernel ctypes"]
    out["tlx_python_us"] = res["tlx k[grid] torch"] - res["tlxrt_launch ctypes"]
    print("tlx k[grid] torch: %.2fx Triton, %.2fx a raw cuLaunchKernel from Python"
          % (out["tlx/triton"] or float("nan"), out["tlx/cuLaunchKernel"]))
else:
    out["tlx_python_us"] = res["tlx k[grid] stub"] - res["ctypes no-op call"]
    print("the package's own time per launch (stub - no-op call): %.2f us"
          % out["tlx_python_us"])
print(json.dumps(out))
if len(sys.argv) > 2:
    with open(sys.argv[2], "w") as f:
        json.dump(out, f, indent=1)
