"""The cached launch path.  Per kernel and argument signature (which
parameters get torch tensors, which tlx Buffers; scalars are numbers), a
launcher is generated once: Python source whose guards check what the
signature assumes (a tensor's dtype and device, a Buffer's device and
type, a descriptor's rank), then two struct.pack calls make the
tlxrt_launch_config (grid, stream) and the tlxrt_arg array as byte
strings, and one ctypes call launches.  A guard that fails, or a value struct cannot pack (a float for
an integer parameter, a number out of range), returns MISS and the
general path (_core.launch) takes the launch and reports the error.

Launchers are made only for device memory: torch tensors on the kernel's
GPU, Buffers of its device.  Host arrays take the general path (copies).
"""
import struct
import sys

from . import _core, _lib
from ._arrays import TYPES, SCALAR

MISS = object()

# struct formats of one tlxrt_arg (104 bytes: kind, padding, the union)
_ARG = {"ptr": "i4xQ88x", "i": "i4xi92x", "I": "i4xI92x", "q": "i4xq88x",
        "Q": "i4xQ88x", "f": "i4xf92x", "d": "i4xd88x",
        "tensor": "i4xQii5q5q"}
_CFG = "3I3IQ"  # grid, cluster, stream (32 bytes)


def _signature(k, args):
    """A tuple naming what each argument is ("s" scalar, "t" torch tensor,
    "b" Buffer), or None when a launcher cannot take these arguments."""
    if len(args) != len(k.params):
        return None
    torch = sys.modules.get("torch")
    sig = []
    for a, p in zip(args, k.params):
        if p.kind == _lib.PARAM_SCALAR:
            if p.type not in SCALAR:
                return None
            sig.append("s")
        elif isinstance(a, _core.Buffer):
            sig.append("b")
        elif torch is not None and isinstance(a, torch.Tensor) and not k.device.sim:
            sig.append("t")
        else:
            return None
    return tuple(sig)


def select(k, args):
    """Make k's launcher for the signature of args current (built at its
    first use); False when there is none for them."""
    sig = _signature(k, args)
    if sig is None:
        return False
    f = k._launchers.get(sig)
    if f is None:
        f = k._launchers[sig] = build(k, sig)
    k._fast = f
    return True


def _fail(k):
    def fail(rc):
        raise _lib.Error("launch of '%s': %s"
                         % (k.name, _lib.L.rt.tlxrt_errmsg(k.device.h).decode()))
    return fail


def build(k, sig, stub=False):
    """The launcher of kernel k for signature sig: f(g0, g1, g2, *args).
    stub (for measuring, bench/python_launch.py): the launcher the cuda
    backend has (no lock), launching nothing: tlxrt_launch is called with
    no kernel, returns at once, and its error is ignored."""
    dev = k.device
    n = len(k.params)
    names = ["a%d" % i for i in range(n)]
    env = {"MISS": MISS, "Buffer": _core.Buffer, "DEV": dev, "ORD": dev.ordinal,
           "K": 0 if stub else k._addr, "N": n, "LOCK": dev.lock,
           "FAIL": (lambda rc: None) if stub else _fail(k),
           "LAUNCH": (_lib.L.rt_nogil if dev.sim and not stub else _lib.L.rt).tlxrt_launch}
    guards, values, fmt = [], [], ["<"]
    torch = sys.modules.get("torch")
    for i, (s, p) in enumerate(zip(sig, k.params)):
        a = names[i]
        if s == "s":
            fmt.append(_ARG[SCALAR[p.type][1]])
            values += [str(SCALAR[p.type][0]), a]
            continue
        accept = TYPES[p.type][3]
        if s == "t":
            env["D%d" % i] = frozenset(getattr(torch, d) for d in accept if hasattr(torch, d))
            guards.append("if %s.dtype not in D%d or %s.get_device() != ORD: return MISS"
                          % (a, i, a))
            ptr = "(%s.data_ptr() or EMPTY)" % a  # a tensor of no elements: 0
            env["EMPTY"] = dev.empty_ptr if not stub else 256
            shape, strides = "%s.shape" % a, "%s.stride()" % a
        else:
            env["D%d" % i] = frozenset(accept)
            guards.append("if %s.__class__ is not Buffer or %s.device is not DEV or "
                          "%s.dtype not in D%d: return MISS" % (a, a, a, i))
            ptr = "%s.ptr" % a
            shape, strides = "%s.shape" % a, "%s.strides" % a
        if p.kind == _lib.PARAM_POINTER:
            fmt.append(_ARG["ptr"])
            values += [str(_lib.ARG_PTR), ptr]
            continue
        r = p.rank
        guards.append("s%d = %s; t%d = %s" % (i, shape, i, strides))
        guards.append("if len(s%d) != %d: return MISS" % (i, r))
        fmt.append(_ARG["tensor"])
        values += [str(_lib.ARG_TENSOR), ptr, str(p.type), str(r)]
        values += ["s%d[%d]" % (i, d) for d in range(r)] + ["0"] * (5 - r)
        values += ["t%d[%d]" % (i, d) for d in range(r)] + ["0"] * (5 - r)
    # two fresh byte strings per launch (no buffer shared between threads)
    env["PCFG"] = struct.Struct("<" + _CFG).pack
    env["PARGS"] = struct.Struct("".join(fmt) if n else "<8x").pack
    if "t" in sig:  # torch's current stream
        raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
        env["RAW"] = raw or (lambda o: torch.cuda.current_stream(o).cuda_stream)
        env["STREAMS"] = dev.streams
        stream = ["native = RAW(ORD)", "s = STREAMS.get(native)",
                  "if s is None: s = DEV.stream(native)"]
    else:
        stream = ["s = 0"]
    body = ["def launch(g0, g1, g2, %s):" % ", ".join(names) if n else
            "def launch(g0, g1, g2):", "    try:"]
    body += ["        " + g for g in guards + stream]
    pack = ["c = PCFG(g0, g1, g2, 0, 0, 0, s)", "a = PARGS(%s)" % ", ".join(values)]
    if dev.sim and not stub:  # the launch runs the kernel, without the GIL: one thread at a time
        body += ["        " + line for line in pack]
        body += ["        with LOCK:", "            rc = LAUNCH(K, c, a, N)",
                 "            if rc: FAIL(rc)"]
    else:  # queues it, with the GIL
        body += ["        " + line for line in pack + ["rc = LAUNCH(K, c, a, N)"]]
    body += ["    except (AttributeError, TypeError, struct.error, OverflowError):",
             "        return MISS"]
    if not dev.sim or stub:
        body += ["    if rc: FAIL(rc)"]
    env["struct"] = struct
    src = "\n".join(body) + "\n"
    exec(compile(src, "<tlx launcher %s%s>" % (k.name, "".join(sig)), "exec"), env)
    f = env["launch"]
    f.source = src
    return f
