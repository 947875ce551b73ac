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


def torch_op(kernel, name, *, inputs, out, scalars=None, grid=None, contiguous=True):
    """Register a tlx kernel as the operator `name` ("namespace::op") with
    torch.library.custom_op, with a fake implementation that allocates
    the declared outputs, and return it (a callable CustomOpDef).

      kernel    a tlx Kernel (a simulator one for CPU tensors, a GPU one
                for CUDA tensors); or {"cpu": Kernel, "cuda": Kernel}, one
                op for both; or a function of the inputs that returns the
                Kernel to launch (a build picked by shape), whose inputs
                are then Tensors unless typed
      inputs    the op's arguments, in order: names of kernel parameters
                (pointers and tensors become Tensor, scalars int, float or
                bool), or "name: type" (int, float, bool, Tensor) for an
                argument only the functions below use
      out       {parameter: spec}, the outputs the op allocates (on the
                device of its first Tensor input) and returns, in this
                order; spec is the name of a Tensor input (an output like
                it: shape and dtype) or a function of the inputs that
                returns (shape, dtype)
      scalars   {parameter: function of the inputs and outputs}: the other
                parameters (sizes, strides)
      grid      None (the kernel's grid function), a tuple, or a function
                of the inputs and outputs that returns one
      contiguous  make Tensor inputs contiguous first (default True)

    A function of the inputs is called with the ones it names:
    scalars={"n": lambda x: x.numel()}.  The op mutates none of its
    inputs and has no autograd formula."""
    try:
        import torch
    except ImportError:
        raise Error("tlx.torch_op needs torch") from None
    if not hasattr(torch, "library") or not hasattr(torch.library, "custom_op"):
        raise Error("tlx.torch_op needs torch >= 2.4 (torch.library.custom_op); this is %s"
                    % torch.__version__)
    from ._core import Kernel
    if isinstance(kernel, Kernel):
        kernels = {"cpu" if kernel.device.sim else "cuda": kernel}
    elif isinstance(kernel, dict):
        kernels = dict(kernel)
        for dt, k in kernels.items():
            if dt not in ("cpu", "cuda") or not isinstance(k, Kernel):
                raise Error("kernel: expected {'cpu': Kernel, 'cuda': Kernel}, got %r: %r"
                            % (dt, k))
            if k.device.sim != (dt == "cpu"):
                raise Error("kernel '%s' for %s tensors runs on %s: CPU tensors take "
                            "simulator kernels, CUDA ones GPU kernels" % (k.name, dt,
                                                                          k.device.name))
    elif callable(kernel):
        kernels = None
    else:
        raise Error("kernel: expected a tlx Kernel, a dict of them or a function, got %r"
                    % (kernel,))
    ref = next(iter(kernels.values())) if kernels else None
    for k in (kernels or {}).values():
        if [p.name for p in k.params] != [p.name for p in ref.params]:
            raise Error("kernels %s and %s differ in their parameters"
                        % (ref.signature, k.signature))
    params = {p.name: p for p in ref.params} if ref else None
    scalars = dict(scalars or {})
    out = dict(out)
    args, types = [], {}
    for spec in inputs:
        n, _, t = (s.strip() for s in spec.partition(":"))
        if t:
            if t not in _SCHEMA_TYPES:
                raise Error("input '%s': type '%s' is not one of %s"
                            % (n, t, ", ".join(_SCHEMA_TYPES)))
        elif params is None:
            t = "Tensor"
        elif n not in params:
            raise Error("input '%s' is no parameter of %s: give its type ('%s: int')"
                        % (n, ref.signature, n))
        elif params[n].kind != _lib.PARAM_SCALAR:
            t = "Tensor"
        else:
            t = "bool" if params[n].type == 1 else "float" if params[n].type >= 10 else "int"
        if n in types:
            raise Error("input '%s' twice" % n)
        args.append(n)
        types[n] = t
    for n in out:
        if n in types or n in scalars:
            raise Error("'%s' is both an output and an input" % n)
        if isinstance(out[n], str) and types.get(out[n]) != "Tensor":
            raise Error("output '%s': '%s' is no Tensor input" % (n, out[n]))
    for n in scalars:
        if n in types:
            raise Error("'%s' is both an input and in scalars" % n)
    if params is not None:
        _check_params(ref, params, types, out, scalars)
    tensor_in = [n for n in args if types[n] == "Tensor"]
    if not tensor_in:
        raise Error("the op needs a Tensor input (its device and the outputs')")

    outs = [(n, out[n] if isinstance(out[n], str) else _caller(out[n], "out '%s'" % n))
            for n in out]
    calls = [(n, _caller(f, "scalars '%s'" % n)) for n, f in scalars.items()]
    grid_of = _caller(grid, "grid") if callable(grid) else None
    pick = _caller(kernel, "kernel") if kernels is None else None
    first = tensor_in[0]

    def allocate(env):
        res = []
        for n, spec in outs:
            if isinstance(spec, str):
                shape, dtype = env[spec].shape, env[spec].dtype
            else:
                shape, dtype = spec(env)
                dtype = getattr(torch, dtype) if isinstance(dtype, str) else dtype
            res.append(env[first].new_empty(tuple(shape), dtype=dtype))
        return res

    def impl_of(fixed):
        def impl(*vals):
            env = dict(zip(args, vals))
            if contiguous:
                for n in tensor_in:
                    env[n] = env[n].contiguous()
            res = allocate(env)
            env.update(zip(out, res))
            for n, f in calls:
                env[n] = f(env)
            k = fixed or pick(env)
            if fixed is None:
                _check_params(k, {p.name: p for p in k.params}, types, out, scalars)
            a = [env[p.name] for p in k.params]
            g = grid_of(env) if grid_of else grid
            if g is None:
                k(*a)
            else:
                k[g](*a)
            return res[0] if len(res) == 1 else tuple(res)
        return impl

    def fake(*vals):
        res = allocate(dict(zip(args, vals)))
        return res[0] if len(res) == 1 else tuple(res)

    ret = "Tensor" if len(outs) == 1 else "(%s)" % ", ".join(["Tensor"] * len(outs))
    schema = "(%s) -> %s" % (", ".join("%s %s" % (types[n], n) for n in args), ret)
    if kernels is None:
        op = torch.library.custom_op(name, impl_of(None), mutates_args=(), schema=schema)
    else:
        dts = list(kernels)
        op = torch.library.custom_op(name, impl_of(kernels[dts[0]]), mutates_args=(),
                                     device_types=dts[0], schema=schema)
        for dt in dts[1:]:
            op.register_kernel(dt, impl_of(kernels[dt]))
    op.register_fake(fake)
    op.tlx_schema = schema
    return op


def _check_params(k, params, types, out, scalars):
    for n in list(out) + list(scalars):
        if n not in params:
            raise Error("'%s' is no parameter of %s" % (n, k.signature))
    for n in out:
        if params[n].kind == _lib.PARAM_SCALAR:
            raise Error("output '%s' is a scalar parameter of %s" % (n, k.signature))
    missing = [p for p in params if p not in types and p not in out and p not in scalars]
    if missing:
        raise Error("%s: parameters %s are in neither inputs, out nor scalars"
                    % (k.signature, ", ".join("'%s'" % m for m in missing)))
