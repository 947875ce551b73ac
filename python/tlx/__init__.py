"""tlx: compile and launch tlx tile kernels from Python.

    import numpy as np, tlx
    k = tlx.compile("examples/vadd.tlx")          # a path or source text
    x = np.random.rand(1000).astype(np.float32)
    y = np.random.rand(1000).astype(np.float32)
    out = np.empty_like(x)
    k(x, y, out, x.size)                           # grid from the kernel
    k[(4,)](x, y, out, x.size)                     # or given

Over libtlx (the compiler, with its cache) and libtlxrt (the runtime) through
ctypes; nothing but the standard library is needed, numpy for arrays.  The
device is tlx.device(): "sim" (the simulator: numpy arrays are copied in and,
after the launch, back out) or "cuda".  Errors are raised as tlx.Error with
the compiler's or the runtime's message.
"""
import ctypes
import ctypes.util
import os

__all__ = ["compile", "device", "Error", "Kernel", "Module"]


class Error(Exception):
    """A compilation or launch failed; the message is tlx's."""


# ---- the libraries ---------------------------------------------------------

def _load(name):
    d = os.environ.get("TLX_LIBDIR")
    paths = [os.path.join(d, "lib%s.so" % name)] if d else []
    found = ctypes.util.find_library(name)
    if found:
        paths.append(found)
    paths.append("lib%s.so" % name)
    last = None
    for p in paths:
        try:
            return ctypes.CDLL(p)
        except OSError as e:
            last = e
    raise Error("cannot load lib%s (set TLX_LIBDIR to the folder that has it): %s"
                % (name, last))


class _Options(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("target", ctypes.c_char_p),
                ("opt_level", ctypes.c_int), ("emit", ctypes.c_int),
                ("defines", ctypes.POINTER(ctypes.c_char_p)), ("ndefines", ctypes.c_int),
                ("lineinfo", ctypes.c_int), ("no_cache", ctypes.c_int)]


class _Props(ctypes.Structure):
    _fields_ = [("backend", ctypes.c_int), ("name", ctypes.c_char * 128),
                ("sm", ctypes.c_int), ("sm_count", ctypes.c_int),
                ("max_smem_per_block", ctypes.c_int), ("max_threads_per_block", ctypes.c_int),
                ("max_cluster_size", ctypes.c_int), ("total_mem", ctypes.c_uint64)]


class _KernelInfo(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("num_params", ctypes.c_int),
                ("warps", ctypes.c_int), ("total_warps", ctypes.c_int),
                ("cluster", ctypes.c_int * 3), ("smem_bytes", ctypes.c_int),
                ("has_grid", ctypes.c_int), ("num_consts", ctypes.c_int)]


class _ParamInfo(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("kind", ctypes.c_int), ("type", ctypes.c_int),
                ("rank", ctypes.c_int), ("box", ctypes.c_int64 * 5), ("swizzle", ctypes.c_int)]


class _Tensor(ctypes.Structure):
    _fields_ = [("ptr", ctypes.c_uint64), ("type", ctypes.c_int), ("rank", ctypes.c_int),
                ("shape", ctypes.c_int64 * 5), ("strides", ctypes.c_int64 * 5)]


class _ArgValue(ctypes.Union):
    _fields_ = [("i32", ctypes.c_int32), ("i64", ctypes.c_int64), ("u32", ctypes.c_uint32),
                ("u64", ctypes.c_uint64), ("f32", ctypes.c_float), ("f64", ctypes.c_double),
                ("ptr", ctypes.c_uint64), ("tensor", _Tensor)]


class _Arg(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_int), ("v", _ArgValue)]


class _LaunchConfig(ctypes.Structure):
    _fields_ = [("grid", ctypes.c_uint32 * 3), ("cluster", ctypes.c_uint32 * 3),
                ("stream", ctypes.c_void_p)]


_tlx = _rt = None
_P = ctypes.c_void_p


def _libs():
    global _tlx, _rt
    if _rt is None:
        t, r = _load("tlx"), _load("tlxrt")
        t.tlx_ctx_create.argtypes = [_P, _P, ctypes.POINTER(_P)]
        t.tlx_errmsg.restype = ctypes.c_char_p
        t.tlx_errmsg.argtypes = [_P]
        t.tlx_compile.argtypes = [_P, ctypes.c_char_p, ctypes.c_size_t,
                                  ctypes.POINTER(_Options), ctypes.POINTER(_P)]
        t.tlx_module_image.argtypes = [_P, ctypes.POINTER(_P), ctypes.POINTER(ctypes.c_size_t),
                                       ctypes.POINTER(ctypes.c_int)]
        t.tlx_module_destroy.argtypes = [_P]
        t.tlx_ctx_destroy.argtypes = [_P]
        r.tlxrt_device_open_errmsg.argtypes = [ctypes.c_char_p, ctypes.POINTER(_P),
                                               ctypes.c_char_p, ctypes.c_size_t]
        r.tlxrt_errmsg.restype = ctypes.c_char_p
        r.tlxrt_errmsg.argtypes = [_P]
        r.tlxrt_device_get_props.argtypes = [_P, ctypes.POINTER(_Props)]
        r.tlxrt_malloc.argtypes = [_P, ctypes.c_size_t, ctypes.POINTER(ctypes.c_uint64)]
        r.tlxrt_free.argtypes = [_P, ctypes.c_uint64]
        r.tlxrt_memcpy_htod.argtypes = [_P, ctypes.c_uint64, _P, ctypes.c_size_t]
        r.tlxrt_memcpy_dtoh.argtypes = [_P, _P, ctypes.c_uint64, ctypes.c_size_t]
        r.tlxrt_module_load.argtypes = [_P, _P, ctypes.c_size_t, ctypes.POINTER(_P)]
        r.tlxrt_module_unload.argtypes = [_P]
        r.tlxrt_module_num_kernels.argtypes = [_P, ctypes.POINTER(ctypes.c_int)]
        r.tlxrt_module_get_kernel.argtypes = [_P, ctypes.c_int, ctypes.POINTER(_P)]
        r.tlxrt_kernel_get_info.argtypes = [_P, ctypes.POINTER(_KernelInfo)]
        r.tlxrt_kernel_get_param.argtypes = [_P, ctypes.c_int, ctypes.POINTER(_ParamInfo)]
        r.tlxrt_launch.argtypes = [_P, ctypes.POINTER(_LaunchConfig), ctypes.POINTER(_Arg),
                                   ctypes.c_int]
        r.tlxrt_device_synchronize.argtypes = [_P]
        _tlx, _rt = t, r
    return _tlx, _rt


# ---- devices -----------------------------------------------------------------

class _Device:
    def __init__(self, name):
        _, rt = _libs()
        h = _P()
        msg = ctypes.create_string_buffer(512)
        if rt.tlxrt_device_open_errmsg(name.encode() if name else None, ctypes.byref(h),
                                       msg, len(msg)):
            raise Error("cannot open device %s: %s" % (name or "(default)", msg.value.decode()))
        self.h = h
        p = _Props()
        rt.tlxrt_device_get_props(h, ctypes.byref(p))
        self.sim = p.backend == 1
        self.sm = p.sm
        self.name = p.name.decode()

    def check(self, rc, what):
        if rc:
            raise Error("%s: %s" % (what, _rt.tlxrt_errmsg(self.h).decode()))


_dev = None


def device(name=None):
    """The device kernels run on: "sim", "cuda", "cuda:N", or None (the
    TLXRT_DEVICE environment variable, else a GPU when there is one, else
    the simulator).  Called with a name, opens that device for what follows."""
    global _dev
    if _dev is None or name is not None:
        _dev = _Device(name)
    return _dev


# ---- types ---------------------------------------------------------------------

# TLXRT_* element types (tlx/tlxrt.h) and numpy dtype names; bf16 and fp8
# arrays are passed as their bits (uint16, uint8)
_TYPES = {1: "bool", 2: "int8", 3: "int16", 4: "int32", 5: "int64", 6: "uint8", 7: "uint16",
          8: "uint32", 9: "uint64", 10: "uint8", 11: "uint8", 12: "float16", 13: "uint16",
          14: "float32", 15: "float64"}
_NAMES = {1: "i1", 2: "i8", 3: "i16", 4: "i32", 5: "i64", 6: "u8", 7: "u16", 8: "u32", 9: "u64",
          10: "f8e4m3", 11: "f8e5m2", 12: "f16", 13: "bf16", 14: "f32", 15: "f64"}
_SCALAR = {4: (1, "i32"), 5: (2, "i64"), 8: (3, "u32"), 9: (4, "u64"), 14: (5, "f32"),
           15: (6, "f64"), 1: (1, "i32"), 2: (1, "i32"), 3: (1, "i32"), 6: (3, "u32"),
           7: (3, "u32")}
_PTR, _TENSOR = 7, 8


def _is_array(x):
    return hasattr(x, "__array_interface__") and hasattr(x, "dtype")


class Kernel:
    """One kernel of a compiled module: k(*args) or k[grid](*args)."""

    def __init__(self, module, handle):
        _, rt = _libs()
        self._m, self._h = module, handle
        info = _KernelInfo()
        module.dev.check(rt.tlxrt_kernel_get_info(handle, ctypes.byref(info)), "kernel info")
        self.name = info.name.decode()
        self.has_grid = bool(info.has_grid)
        self.params = []
        for i in range(info.num_params):
            p = _ParamInfo()
            module.dev.check(rt.tlxrt_kernel_get_param(handle, i, ctypes.byref(p)), "param")
            self.params.append((p.name.decode(), p.kind, p.type, p.rank))

    def __repr__(self):
        return "<tlx kernel %s(%s)>" % (self.name, ", ".join(p[0] for p in self.params))

    def __getitem__(self, grid):
        grid = tuple(grid) if isinstance(grid, (tuple, list)) else (grid,)
        return lambda *args: self._launch(grid, args)

    def __call__(self, *args):
        if not self.has_grid:
            raise Error("kernel '%s' has no grid function: launch it as k[grid](...)"
                        % self.name)
        return self._launch(None, args)

    def _launch(self, grid, args):
        dev = self._m.dev
        rt = _rt
        if len(args) != len(self.params):
            raise Error("kernel '%s' takes %d arguments (%s), got %d"
                        % (self.name, len(self.params), ", ".join(p[0] for p in self.params),
                           len(args)))
        cargs = (_Arg * max(1, len(args)))()
        copies = []  # (host array, device pointer, bytes)
        try:
            for i, (a, (name, kind, ty, rank)) in enumerate(zip(args, self.params)):
                where = "argument %d ('%s')" % (i + 1, name)
                if kind == 1:  # scalar
                    k, field = _SCALAR.get(ty, (None, None))
                    if k is None or _is_array(a):
                        raise Error("%s: expected a %s scalar, got %r"
                                    % (where, _NAMES.get(ty, "?"), type(a).__name__))
                    cargs[i].kind = k
                    setattr(cargs[i].v, field, float(a) if field.startswith("f") else int(a))
                    continue
                if not _is_array(a):
                    raise Error("%s: expected an array of %s, got %s"
                                % (where, _NAMES.get(ty, "?"), type(a).__name__))
                if a.dtype.name != _TYPES.get(ty):
                    raise Error("%s: expected an array of %s (numpy %s), got %s"
                                % (where, _NAMES.get(ty, "?"), _TYPES.get(ty), a.dtype.name))
                if not a.flags["C_CONTIGUOUS"]:
                    raise Error("%s: the array must be contiguous (np.ascontiguousarray)" % where)
                if not dev.sim:
                    raise Error("%s: numpy arrays run on the simulator (tlx.device('sim'))"
                                % where)
                ptr = ctypes.c_uint64()
                n = max(1, a.nbytes)
                dev.check(rt.tlxrt_malloc(dev.h, n, ctypes.byref(ptr)), where)
                copies.append((a, ptr.value, a.nbytes))
                if a.nbytes:
                    dev.check(rt.tlxrt_memcpy_htod(dev.h, ptr.value, a.ctypes.data, a.nbytes),
                              where)
                if kind == 2:
                    cargs[i].kind = _PTR
                    cargs[i].v.ptr = ptr.value
                else:
                    t = cargs[i].v.tensor
                    cargs[i].kind = _TENSOR
                    t.ptr, t.type, t.rank = ptr.value, ty, a.ndim
                    for d in range(a.ndim):
                        t.shape[d] = a.shape[d]
                        t.strides[d] = a.strides[d] // a.itemsize
            cfg = _LaunchConfig()
            if grid is not None:
                g = list(grid) + [1] * (3 - len(grid))
                for d in range(3):
                    cfg.grid[d] = int(g[d])
            dev.check(rt.tlxrt_launch(self._h, ctypes.byref(cfg), cargs, len(args)),
                      "launch of '%s'" % self.name)
            dev.check(rt.tlxrt_device_synchronize(dev.h), "'%s'" % self.name)
            for a, p, n in copies:
                if n and a.flags["WRITEABLE"]:
                    dev.check(rt.tlxrt_memcpy_dtoh(dev.h, a.ctypes.data, p, n), "copy back")
        finally:
            for _, p, _ in copies:
                rt.tlxrt_free(dev.h, p)


class Module:
    """A compiled and loaded module; its kernels by name (m.vadd, m["vadd"])."""

    def __init__(self, dev, handle):
        _, rt = _libs()
        self.dev, self._h = dev, handle
        n = ctypes.c_int()
        dev.check(rt.tlxrt_module_num_kernels(handle, ctypes.byref(n)), "module")
        self.kernels = {}
        for i in range(n.value):
            h = _P()
            dev.check(rt.tlxrt_module_get_kernel(handle, i, ctypes.byref(h)), "module")
            k = Kernel(self, h)
            self.kernels[k.name] = k

    def __getitem__(self, name):
        return self.kernels[name]

    def __getattr__(self, name):
        try:
            return self.__dict__["kernels"][name]
        except KeyError:
            raise AttributeError(name) from None

    def __del__(self):
        if _rt is not None and getattr(self, "_h", None):
            _rt.tlxrt_module_unload(self._h)
            self._h = None


def compile(source, target=None, name=None, **consts):
    """Compile a tlx program (a path to a .tlx file, or its text) for the
    current device and load it: the Kernel when the program has one, else the
    Module.  Keyword arguments set const parameters (BM=128)."""
    t, rt = _libs()
    dev = device()
    if "\n" not in source and os.path.exists(source):
        name = name or source
        with open(source) as f:
            source = f.read()
    ctx = _P()
    if t.tlx_ctx_create(None, None, ctypes.byref(ctx)):
        raise Error("cannot create a compiler context")
    mod = _P()
    try:
        defs = [("%s=%s" % (k, str(v).lower() if isinstance(v, bool) else v)).encode()
                for k, v in consts.items()]
        arr = (ctypes.c_char_p * max(1, len(defs)))(*defs)
        opts = _Options()
        opts.name = (name or "<string>").encode()
        opts.target = (target or ("sm_%da" % dev.sm if dev.sm >= 90 else "sm_%d" % dev.sm)).encode()
        opts.emit = 2 if dev.sim else 0
        opts.defines = arr
        opts.ndefines = len(defs)
        src = source.encode()
        if t.tlx_compile(ctx, src, len(src), ctypes.byref(opts), ctypes.byref(mod)):
            raise Error(t.tlx_errmsg(ctx).decode().rstrip())
        data, size, kind = _P(), ctypes.c_size_t(), ctypes.c_int()
        t.tlx_module_image(mod, ctypes.byref(data), ctypes.byref(size), ctypes.byref(kind))
        h = _P()
        dev.check(rt.tlxrt_module_load(dev.h, data, size.value, ctypes.byref(h)), "load")
        m = Module(dev, h)
    finally:
        if mod:
            t.tlx_module_destroy(mod)
        t.tlx_ctx_destroy(ctx)
    return next(iter(m.kernels.values())) if len(m.kernels) == 1 else m
