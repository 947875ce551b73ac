"""tlx.torch_op: a kernel as a torch.library.custom_op (torch >= 2.4), with
a fake implementation made from the declared outputs, so that
torch.compile traces calls of it without a graph break."""
import inspect

from ._lib import Error
from . import _lib

_SCHEMA_TYPES = {"int": "int", "float": "float", "bool": "bool", "Tensor": "Tensor",
                 "SymInt": "SymInt"}


def _caller(f, what):
    """f(env) -> f called with the inputs it names (all of them when it
    takes **kwargs)."""
    if not callable(f):
        raise Error("%s: expected a function of the op's inputs, got %r" % (what, f))
    ps = inspect.signature(f).parameters.values()
    if any(p.kind == p.VAR_KEYWORD for p in ps):
        return lambda env: f(**env)
    names = [p.name for p in ps if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    return lambda env: f(**{n: env[n] for n in names if n in env})


def torch_op(kernel, name, *, inputs, out, scalars=None, grid=None, select=None,
             contiguous=True):
    """Register `kernel` as the operator `name` ("namespace::op") with
    torch.library.custom_op, and return it (a callable CustomOpDef).

      kernel    a tlx Kernel: every parameter must be named in inputs, out
                or scalars
      inputs    the op's arguments, in order: names of kernel parameters
                (pointers and tensors become Tensor, scalars int, float or
                bool), or "name: type" (int, float, bool, Tensor) for an
                argument only the functions below use
      out       {parameter: spec}, the outputs the op allocates and
                returns, in this order; spec is the name of a Tensor input
                (an output like it: shape, dtype, device) or a function of
                the inputs that returns (shape, dtype)
      scalars   {parameter: function of the inputs}: the other parameters
                (sizes, strides)
      grid      None (the kernel's grid function), a tuple, or a function
                of the inputs (and outputs) that returns one
      select    a function of the inputs that returns the Kernel to launch
                (a build picked by shape), with kernel's parameters
      contiguous  make Tensor inputs contiguous first (default True)

    A function of the inputs is called with the ones it names:
    scalars={"n": lambda x: x.numel()}.  The op runs on the kernel's
    device: CUDA tensors for a cuda kernel, CPU tensors for a simulator
    one.  It has no autograd formula."""
    try:
        import torch
    except ImportError:
        raise Error("tlx.torch_op needs torch") from None
    if not hasattr(torch, "library") or not hasattr(torch.library, "custom_op"):
        raise Error("tlx.torch_op needs torch >= 2.4 (torch.library.custom_op); this is %s"
                    % torch.__version__)
    params = {p.name: p for p in kernel.params}
    scalars = dict(scalars or {})
    out = dict(out)
    args, types = [], {}
    for spec in inputs:
        n, _, t = (s.strip() for s in spec.partition(":"))
        if t:
            if t not in _SCHEMA_TYPES:
                raise Error("input '%s': type '%s' is not one of %s"
                            % (n, t, ", ".join(_SCHEMA_TYPES)))
        elif n not in params:
            raise Error("input '%s' is no parameter of %s: give its type ('%s: int')"
                        % (n, kernel.signature, n))
        else:
            p = params[n]
            if p.kind != _lib.PARAM_SCALAR:
                t = "Tensor"
            else:
                t = "bool" if p.type == 1 else "float" if p.type >= 10 else "int"
        args.append(n)
        types[n] = t
    for n in list(out) + list(scalars):
        if n not in params:
            raise Error("'%s' is no parameter of %s" % (n, kernel.signature))
    for n in out:
        if params[n].kind == _lib.PARAM_SCALAR:
            raise Error("output '%s' is a scalar parameter" % n)
        if n in types or n in scalars:
            raise Error("'%s' is both an output and an input" % n)
        if isinstance(out[n], str) and types.get(out[n]) != "Tensor":
            raise Error("output '%s': '%s' is no Tensor input" % (n, out[n]))
    for n in scalars:
        if n in types:
            raise Error("'%s' is both an input and in scalars" % n)
    missing = [p for p in params if p not in types and p not in out and p not in scalars]
    if missing:
        raise Error("%s: parameters %s are in neither inputs, out nor scalars"
                    % (kernel.signature, ", ".join("'%s'" % m for m in missing)))
    tensor_in = [n for n in args if types[n] == "Tensor"]
    if not tensor_in:
        raise Error("the op needs a Tensor input (its device and the outputs')")

    def shape_of(spec, env):
        if isinstance(spec, str):
            return env[spec].shape, env[spec].dtype
        shape, dtype = spec(env)
        return tuple(shape), getattr(torch, dtype) if isinstance(dtype, str) else dtype

    outs = [(n, out[n] if isinstance(out[n], str) else _caller(out[n], "out '%s'" % n))
            for n in out]
    calls = [(n, _caller(f, "scalars '%s'" % n)) for n, f in scalars.items()]
    grid_of = _caller(grid, "grid") if callable(grid) else None
    pick = _caller(select, "select") if select is not None else None
    ref = tensor_in[0]

    def allocate(env):
        res = []
        for n, spec in outs:
            shape, dtype = shape_of(spec, env)
            res.append(env[ref].new_empty(shape, dtype=dtype))
        return res

    def impl(*vals):
        env = dict(zip(args, vals))
        if contiguous:
            for n in tensor_in:
                env[n] = env[n].contiguous()
        res = allocate(env)
        env.update(zip(out, res))
        for n, f in calls:
            env[n] = f(env)
        k = pick(env) if pick else kernel
        a = [env[p.name] for p in k.params]
        g = grid_of(env) if grid_of else grid
        if g is None:
            k(*a)
        else:
            k[g](*a)
        return res[0] if len(res) == 1 else tuple(res)

    def fake(*vals):
        res = allocate(dict(zip(args, vals)))
        return res[0] if len(res) == 1 else tuple(res)

    ret = "Tensor" if len(outs) == 1 else "(%s)" % ", ".join(["Tensor"] * len(outs))
    schema = "(%s) -> %s" % (", ".join("%s %s" % (types[n], n) for n in args), ret)
    op = torch.library.custom_op(name, impl, mutates_args=(),
                                 device_types="cpu" if kernel.device.sim else "cuda",
                                 schema=schema)
    op.register_fake(fake)
    op.tlx_schema = schema
    return op
