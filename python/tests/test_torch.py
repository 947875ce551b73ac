"""The tlx package with torch: CPU tensors on the simulator (any torch),
CUDA tensors on the GPU (when torch sees one: the cached launch path,
torch's current stream), and tlx.torch_op (torch >= 2.4, for
torch.library.custom_op): ops run eagerly and under
torch.compile(fullgraph=True) with no graph break, opcheck's checks of the
fake implementation, and a small block -- layer norm -> matmul -> softmax,
examples/ kernels in place of torch's ops -- matching eager torch.

    TLX_LIBDIR=build/.libs python3 python/tests/test_torch.py [EXAMPLES_DIR]

Parts that cannot run here are skipped with the reason.  Prints one line
per test and "N passed, N failed, N skipped"; exits non-zero on a
failure, 0 with a message when there is no torch at all."""
import os
import sys
import time
import traceback

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, ".."))
try:
    import torch
    import torch.nn.functional as F
except ImportError:
    print("skipped: no torch here (the tests with numpy are test_sim.py)")
    print("0 passed, 0 failed, 1 skipped")
    sys.exit(0)
import tlx  # noqa: E402

examples = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "..", "examples")
CUDA = torch.cuda.is_available()
CUSTOM_OP = hasattr(torch, "library") and hasattr(torch.library, "custom_op")
results = {"passed": 0, "failed": 0, "skipped": 0}
torch.manual_seed(20)


def test(*needs):
    """A test; needs: "cuda", "custom_op" (skipped without), "old_torch"
    (skipped with custom_op)."""
    def wrap(fn):
        why = []
        if "cuda" in needs and not CUDA:
            why.append("no CUDA device")
        if "custom_op" in needs and not CUSTOM_OP:
            why.append("torch %s has no torch.library.custom_op (>= 2.4): torch.compile's "
                       "tests run where it has (the H200)" % torch.__version__)
        if "old_torch" in needs and CUSTOM_OP:
            why.append("torch %s has torch.library.custom_op" % torch.__version__)
        if why:
            results["skipped"] += 1
            print("skipped: %s: %s" % (fn.__name__, "; ".join(why)))
            return fn
        t = time.time()
        try:
            fn()
            results["passed"] += 1
            print("ok: %s (%.1f s)" % (fn.__name__, time.time() - t))
        except Exception as e:  # report and go on
            results["failed"] += 1
            print("FAIL: %s: %s: %s" % (fn.__name__, type(e).__name__, e))
            # the causes too: opcheck's message names the check, its cause the values
            traceback.print_exception(type(e), e, e.__traceback__, file=sys.stdout)
        sys.stdout.flush()
        return fn
    return wrap


def ex(name):
    return os.path.join(examples, name + ".tlx")


def raises(fn, *texts):
    try:
        fn()
    except tlx.Error as e:
        for text in texts:
            assert text in str(e), "message %r lacks %r" % (str(e), text)
        return
    raise AssertionError("no error (expected %r)" % (texts,))


def close(what, got, ref, atol, rtol=0.0):
    got, ref = got.double().cpu(), ref.double().cpu()
    err = (got - ref).abs()
    bad = ~(err <= atol + rtol * ref.abs())
    if bool(bad.any()):
        i = int(bad.flatten().nonzero()[0])
        raise AssertionError("%s: %d of %d elements off, first at %d: %r, expected %r"
                             % (what, int(bad.sum()), bad.numel(), i,
                                float(got.flatten()[i]), float(ref.flatten()[i])))


def softmax64(x):
    return torch.softmax(x.double(), dim=-1)


def layernorm64(x, w, b, eps):
    return F.layer_norm(x.double(), (x.shape[-1],), w.double(), b.double(), eps)


# ---- CPU tensors on the simulator -------------------------------------------------

SIM = tlx.device("sim")


@test()
def cpu_tensors():
    k = tlx.compile(ex("vadd"), BLOCK=256, device=SIM)
    x, y = torch.randn(1000), torch.randn(1000, requires_grad=True)
    out = torch.full((1000,), float("nan"))
    k(x, y, out, 1000)
    assert torch.equal(out, x + y.detach())
    x0 = x.clone()
    k(x, x, x, 1000)  # in place: x += x
    assert torch.equal(x, 2 * x0)
    s = tlx.compile(ex("softmax"), BLOCK=1024, device=SIM)
    xb = torch.randn(5, 777, dtype=torch.bfloat16) * 3
    yb = torch.full((5, 777), float("nan"), dtype=torch.bfloat16)
    s(xb, yb, 5, 777, 777)
    close("softmax", yb, softmax64(xb), 1e-5, 1 / 128)
    # tensor descriptors from tensors; B a transposed (strided) view
    g = tlx.compile(ex("gemm_tma"), BM=64, BN=64, BK=32, STAGES=2, WARPS=4, device=SIM)
    a = torch.randn(72, 40, dtype=torch.bfloat16)
    b = torch.randn(40, 136, dtype=torch.bfloat16)
    c = torch.full((72, 136), float("nan"), dtype=torch.bfloat16)
    g(a, b, c, 72, 136, 40)
    close("gemm_tma", c, a.double() @ b.double(), 1e-2, 1 / 128)
    m = tlx.compile(ex("matmul"), BM=64, BN=64, BK=32, device=SIM)
    bt = torch.randn(136, 40, dtype=torch.bfloat16)
    c.fill_(float("nan"))
    m(a, bt.t(), c, 72, 136, 40, 40, 1, 1, 40, 136, 1)
    close("matmul of a transposed view", c, a.double() @ bt.t().double(), 1e-2, 1 / 128)


@test()
def cpu_errors():
    k = tlx.compile(ex("vadd"), device=SIM)
    x = torch.zeros(8)
    raises(lambda: k(x, x, x.half(), 8),
           "argument 3 ('out'): expected an array of f32 (float32), got float16")
    raises(lambda: k(x, x, torch.zeros(8, device="meta"), 8),
           "argument 3 ('out'): a tensor on device 'meta'")
    raises(lambda: k(x, x, x, torch.tensor(8.5)), "argument 4 ('n'): expected an integer")
    raises(lambda: k(x, x, x, 9), "out of bounds", "vadd.tlx:")
    if CUDA:
        raises(lambda: k(x, x, x.cuda(), 8), "argument 3 ('out'): CUDA memory on the simulator")


@test()
def cuda_launcher_source():
    """The launcher generated for torch CUDA tensors, run here on CPU
    tensors (its device guard pointed at them, the launch captured): what
    it packs, and the guards that send other arguments back (MISS)."""
    from tlx import _fast, _lib

    def capture(k, sig):
        f = _fast.build(k, sig, stub=True)
        got = []
        f.__globals__.update(ORD=-1, RAW=lambda o: 0, STREAMS={0: 0},
                             LAUNCH=lambda kk, c, a, n: got.append((c, a, n)) or 0)
        return f, got
    k = tlx.compile(ex("vadd"), device=SIM)
    f, got = capture(k, ("t", "t", "t", "s"))
    x, y, z = torch.zeros(8), torch.zeros(8), torch.zeros(8)
    assert f(3, 1, 1, x, y, z, 8) is None and len(got) == 1
    c, a, n = got[0]
    cfg = _lib.LaunchConfig.from_buffer_copy(c)
    args = (_lib.Arg * n).from_buffer_copy(a)
    assert (list(cfg.grid), cfg.stream) == ([3, 1, 1], None), (list(cfg.grid), cfg.stream)
    assert [(g.kind, g.v.ptr) for g in args[:3]] == [(_lib.ARG_PTR, t.data_ptr())
                                                     for t in (x, y, z)]
    assert (args[3].kind, args[3].v.i32) == (_lib.ARG_I32, 8)
    assert f(1, 1, 1, torch.zeros(0), y, z, 0) is None  # no elements: not a null pointer
    assert (_lib.Arg * 4).from_buffer_copy(got[1][1])[0].v.ptr != 0
    assert f(3, 1, 1, x, y, z.double(), 8) is _fast.MISS
    assert f(3, 1, 1, x, y, z, 8.5) is _fast.MISS
    assert f(3, 1, 1, x, y, z, 1 << 40) is _fast.MISS
    assert f(3, 1, 1, x, y, [0.0], 8) is _fast.MISS
    g = tlx.compile(ex("gemm_tma"), BM=64, BN=64, BK=32, STAGES=2, WARPS=4, device=SIM)
    f, got = capture(g, ("t", "t", "t", "s", "s", "s"))
    a = torch.zeros(16, 40, dtype=torch.bfloat16)
    bt = torch.zeros(24, 40, dtype=torch.bfloat16)
    assert f(1, 1, 1, a, bt.t(), a, 16, 24, 40) is None
    args = (_lib.Arg * 6).from_buffer_copy(got[0][1])
    t = args[1].v.tensor
    assert (args[1].kind, t.ptr, t.type, t.rank) == (_lib.ARG_TENSOR, bt.data_ptr(), 13, 2)
    assert (list(t.shape), list(t.strides)) == ([40, 24, 0, 0, 0], [1, 40, 0, 0, 0])
    assert f(1, 1, 1, a[None], bt, a, 16, 24, 40) is _fast.MISS  # rank 3


# ---- CUDA tensors on the GPU ---------------------------------------------------------

def gpu():
    return tlx.device("cuda")


@test("cuda")
def cuda_tensors():
    dev = gpu()
    k = tlx.compile(ex("vadd"), device=dev)
    for n in (1, 1000, 1 << 20):
        x, y = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
        out = torch.full((n,), float("nan"), device="cuda")
        k(x, y, out, n)
        k(x, y, out, n)
        torch.cuda.synchronize()
        assert torch.equal(out, x + y), "n=%d" % n
    assert ("t", "t", "t", "s") in k._launchers, list(k._launchers)
    e = torch.zeros(0, device="cuda")  # data_ptr() 0
    k[(1,)](e, e, e, 0)
    k[(1,)](e, e, e, 0)
    s = tlx.compile(ex("softmax"), BLOCK=1024, device=dev)
    xb = torch.randn(300, 1000, device="cuda", dtype=torch.bfloat16) * 3
    yb = torch.full_like(xb, float("nan"))
    s(xb, yb, 300, 1000, 1000)
    close("softmax", yb, softmax64(xb), 1e-5, 1 / 128)
    ln = tlx.compile(ex("layernorm"), BLOCK=1024, device=dev)
    w = torch.randn(1000, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(1000, device="cuda", dtype=torch.bfloat16)
    ln(xb, w, b, yb, 300, 1000, 1000, 1e-5)
    close("layernorm", yb, layernorm64(xb, w, b, 1e-5), 2e-2, 1 / 64)
    g = tlx.compile(ex("gemm_tma"), device=dev)
    a = torch.randn(200, 104, device="cuda", dtype=torch.bfloat16)
    bb = torch.randn(104, 296, device="cuda", dtype=torch.bfloat16)
    c = torch.full((200, 296), float("nan"), device="cuda", dtype=torch.bfloat16)
    g(a, bb, c, 200, 296, 104)
    close("gemm_tma", c, a.double() @ bb.double(), 2e-2, 1 / 128)


@test("cuda")
def cuda_stream():
    """A launch goes to torch's current stream: on a stream of its own
    (non-blocking, so the legacy default stream does not wait for it), a
    copy queued after a long sleep and a fill must read the filled x."""
    k = tlx.compile(ex("copy"), device=gpu())
    n = 1 << 16
    x = torch.zeros(n, device="cuda")
    y = torch.zeros(n, device="cuda")
    torch.cuda.synchronize()
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        torch.cuda._sleep(200_000_000)  # about 0.1 s of GPU time
        x.fill_(7)
        k(x, y, n)  # the first launch (general path)
        x.fill_(8)
        k(x, y, n)  # through the launcher
    s.synchronize()
    assert bool((y == 8).all()), "the launch did not wait for its stream's work"


@test("cuda")
def cuda_errors():
    k = tlx.compile(ex("vadd"), device=gpu())
    x = torch.zeros(8, device="cuda")
    raises(lambda: k(x, x, torch.zeros(8), 8),
           "argument 3 ('out'): host memory on device cuda:0")
    raises(lambda: k(x, x, x.double(), 8), "argument 3 ('out'): expected an array of f32")
    if torch.cuda.device_count() > 1:
        raises(lambda: k(x, x, torch.zeros(8, device="cuda:1"), 8),
               "argument 3 ('out'): memory of cuda:1")
    g = tlx.compile(ex("gemm_tma"), device=gpu())
    odd = torch.zeros(64, 20, device="cuda", dtype=torch.bfloat16)  # rows of 40 bytes
    raises(lambda: g(odd, odd, odd, 64, 20, 20), "argument 1 ('a')", "16")


# ---- tlx.torch_op ----------------------------------------------------------------------

@test("old_torch")
def torch_op_needs_2_4():
    k = tlx.compile(ex("vadd"), device=SIM)
    raises(lambda: tlx.torch_op(k, "tlx_test::vadd0", inputs=["x", "y"], out={"out": "x"},
                                scalars={"n": lambda x: x.numel()}),
           "needs torch >= 2.4")


def vadd_op(name, kernels):
    return tlx.torch_op(kernels, name, inputs=["x", "y"], out={"out": "x"},
                        scalars={"n": lambda x: x.numel()})


@test("custom_op")
def torch_op_registration():
    k = tlx.compile(ex("vadd"), device=SIM)
    raises(lambda: tlx.torch_op(k, "tlx_test::bad1", inputs=["x", "y"], out={"out": "x"}),
           "parameters 'n' are in neither inputs, out nor scalars")
    raises(lambda: tlx.torch_op(k, "tlx_test::bad2", inputs=["x", "z"], out={"out": "x"}),
           "input 'z' is no parameter of vadd(x: *f32, y: *f32, out: *f32, n: i32)")
    raises(lambda: tlx.torch_op({"cuda": k}, "tlx_test::bad3", inputs=["x", "y"],
                                out={"out": "x"}, scalars={"n": lambda x: x.numel()}),
           "CPU tensors take simulator kernels")
    op = vadd_op("tlx_test::vadd_schema", k)
    assert op.tlx_schema == "(Tensor x, Tensor y) -> Tensor", op.tlx_schema


def compiled_once(fn, args, backend):
    """fn under torch.compile(fullgraph=True) with a backend that records
    the graphs: (result, graphs)."""
    graphs = []
    if isinstance(backend, str):
        from torch._dynamo.backends.registry import lookup_backend
        backend = lookup_backend(backend)

    def record(gm, example_inputs):
        graphs.append(gm)
        return backend(gm, example_inputs)

    return torch.compile(fn, fullgraph=True, backend=record)(*args), graphs


def uses(gm, qualname):
    """Does graph gm call the op "ns::name" (as the op or one of its
    overloads)?"""
    dotted = qualname.replace("::", ".")
    return any(n.op == "call_function" and (str(n.target) == dotted or
                                             str(n.target).startswith(dotted + ".") or
                                             getattr(n.target, "_qualname", None) == qualname)
               for n in gm.graph.nodes)


@test("custom_op")
def torch_op_cpu():
    kernels = {"cpu": tlx.compile(ex("vadd"), BLOCK=256, device=SIM)}
    if CUDA:
        kernels["cuda"] = tlx.compile(ex("vadd"), device=gpu())
    op = vadd_op("tlx_test::vadd", kernels)
    x, y = torch.randn(1000), torch.randn(1000)
    assert torch.equal(op(x, y), x + y)

    def f(x, y):
        return op(x, y) * 2 + 1

    got, graphs = compiled_once(f, (x, y), "aot_eager")
    assert torch.equal(got, (x + y) * 2 + 1)
    assert len(graphs) == 1 and uses(graphs[0], "tlx_test::vadd"), graphs
    assert torch._dynamo.explain(f)(x, y).graph_break_count == 0
    torch.library.opcheck(op, (x, y))
    if CUDA:
        xc, yc = x.cuda(), y.cuda()
        assert torch.equal(op(xc, yc), xc + yc)
        torch.library.opcheck(op, (xc, yc))


def block_ops(dev, ns, C, D):
    """layer norm (C columns), matmul (C x D), softmax (D columns) as ops."""
    sim = dev.sim

    def build(name, **consts):
        return tlx.compile(ex(name), device=dev, **consts)
    pow2 = lambda v: 1 << (v - 1).bit_length()  # noqa: E731
    rows = {"rows": lambda x: x.shape[0], "cols": lambda x: x.shape[1],
            "stride": lambda x: x.stride(0)}
    ln = tlx.torch_op(build("layernorm", BLOCK=pow2(C)), ns + "::layernorm",
                      inputs=["x", "w", "b", "eps"], out={"y": "x"}, scalars=rows)
    mm = tlx.torch_op(build("matmul", BM=64, BN=64, BK=32) if sim else build("matmul"),
                      ns + "::matmul", inputs=["a", "b"],
                      out={"c": lambda a, b: ((a.shape[0], b.shape[1]), a.dtype)},
                      scalars={"M": lambda a: a.shape[0], "N": lambda b: b.shape[1],
                               "K": lambda a: a.shape[1], "sam": lambda a: a.stride(0),
                               "sak": lambda a: a.stride(1), "sbk": lambda b: b.stride(0),
                               "sbn": lambda b: b.stride(1), "scm": lambda c: c.stride(0),
                               "scn": lambda c: c.stride(1)})
    sm = tlx.torch_op(build("softmax", BLOCK=pow2(D)), ns + "::softmax", inputs=["x"],
                      out={"y": "x"}, scalars=rows)
    return ln, mm, sm


def block_test(dev, ns, device, backend, R, C, D):
    ln, mm, sm = block_ops(dev, ns, C, D)
    eps = 1e-5
    bf = dict(device=device, dtype=torch.bfloat16)
    x = torch.randn(R, C, **bf) * 2 + 1
    w, b = torch.randn(C, **bf), torch.randn(C, **bf)
    W = torch.randn(C, D, **bf) / C ** 0.5

    def tlx_block(x, w, b, W):
        return sm(mm(ln(x, w, b, eps), W))

    def torch_block(x, w, b, W):
        return torch.softmax(F.layer_norm(x, (C,), w, b, eps) @ W, dim=-1)

    ref = torch.softmax(layernorm64(x, w, b, eps) @ W.double(), dim=-1)
    eager = torch_block(x, w, b, W)
    err_torch = float((eager.double() - ref).abs().max())
    got, graphs = compiled_once(tlx_block, (x, w, b, W), backend)
    assert len(graphs) == 1, "%d graphs" % len(graphs)
    for op in (ln, mm, sm):
        assert uses(graphs[0], "%s::%s" % (ns, op._name)), graphs[0].graph
    assert torch._dynamo.explain(tlx_block)(x, w, b, W).graph_break_count == 0
    err = float((got.double() - ref).abs().max())
    assert err <= 2 * err_torch + 2e-3, \
        "tlx block off by %g from float64, eager torch by %g" % (err, err_torch)
    close("tlx block against eager torch", got, eager, 2e-2)
    # each op on inputs of the shapes it was built for (softmax's BLOCK
    # covers D columns, not C)
    for op, args in ((ln, (x, w, b, eps)), (mm, (x, W)), (sm, (x @ W,))):
        try:
            torch.library.opcheck(op, args)
        except Exception as e:
            raise AssertionError("opcheck of %s::%s" % (ns, op._name)) from e


@test("custom_op")
def block_sim():
    block_test(SIM, "tlx_sim", "cpu", "aot_eager", 24, 96, 72)


@test("custom_op", "cuda")
def block_cuda():
    from torch._inductor import compile_fx
    block_test(gpu(), "tlx_gpu", "cuda", compile_fx.compile_fx, 512, 1024, 256)


print("%d passed, %d failed, %d skipped" % (results["passed"], results["failed"],
                                            results["skipped"]))
sys.exit(1 if results["failed"] else 0)
