"""Devices, device buffers, compiling and loading modules, kernels and the
general launch path (every kind of argument, host arrays copied to the
simulator and back).  The fast path, per argument signature, is _fast.py."""
import contextlib
import ctypes
import operator
import os
import struct
import subprocess
import sys
import tempfile
import threading

from . import _arrays, _fast, _lib
from ._fast import MISS as _MISS
from ._arrays import TYPES, SCALAR, Array, describe, type_name
from ._lib import Error

_P = ctypes.c_void_p


# ---- devices --------------------------------------------------------------------

class Device:
    """An open libtlxrt device: "sim" or "cuda:N".  Use tlx.device()."""

    def __init__(self, name):
        rt = _lib.rt()
        h = _P()
        msg = ctypes.create_string_buffer(512)
        if rt.tlxrt_device_open_errmsg(name.encode() if name else None, ctypes.byref(h),
                                       msg, len(msg)):
            raise Error("cannot open device %s: %s" % (name or "(default)", msg.value.decode()))
        self.h = h
        self.addr = h.value
        p = _lib.Props()
        rt.tlxrt_device_get_props(h, ctypes.byref(p))
        self.sim = p.backend == _lib.BACKEND_SIM
        self.sm, self.sm_count, self.props = p.sm, p.sm_count, p
        self.product = p.name.decode()
        spec = name or os.environ.get("TLXRT_DEVICE") or ""
        self.ordinal = int(spec[5:]) if spec.startswith("cuda:") else 0
        self.name = "sim" if self.sim else "cuda:%d" % self.ordinal
        # one thread at a time in the library for this device (tlx/tlxrt.h).
        # On cuda every call keeps the GIL (launches only queue work); on
        # the simulator, launches and waits release it, and every call on
        # the device takes this lock (reentrant: a Buffer freed by the
        # garbage collector inside a locked region)
        self.lock = threading.RLock() if self.sim else contextlib.nullcontext()
        self.lib = _lib.L.rt_nogil if self.sim else _lib.L.rt  # for long calls
        self.streams = {0: 0}  # CUstream -> its tlxrt_stream (0: the default)

    def __repr__(self):
        return "<tlx device %s: %s>" % (self.name, self.product)

    @property
    def target(self):
        """The compile target of the device ("sm_90a")."""
        return "sm_100a" if self.sm >= 100 else "sm_90a" if self.sm >= 90 else "sm_80"

    def check(self, rc, what):
        if rc:
            raise Error("%s: %s" % (what, _lib.L.rt.tlxrt_errmsg(self.h).decode()))

    def synchronize(self):
        """Wait for all work on the device (a fault of a kernel that ran
        asynchronously is raised here)."""
        with self.lock:
            self.check(self.lib.tlxrt_device_synchronize(self.h), "synchronize")

    _OPTIONS = {"shuffle": 1, "max_steps": 2, "async_delay": 3, "sm": 4, "resident": 5,
                "check_fences": 6, "sm_count": 7}

    def set_option(self, name, value):
        """A simulator option (tlx/tlxrt.h, TLXRT_SIM_*): shuffle, max_steps,
        async_delay, sm, resident, check_fences, sm_count."""
        if name not in self._OPTIONS:
            raise Error("unknown simulator option '%s' (%s)" % (name, ", ".join(self._OPTIONS)))
        with self.lock:
            self.check(_lib.L.rt.tlxrt_device_set_option(self.h, self._OPTIONS[name],
                                                          int(value)), "option '%s'" % name)

    @property
    def empty_ptr(self):
        """An address for arrays of no elements (whose data_ptr() is 0,
        which libtlxrt refuses): 256 bytes of the device, never read by a
        kernel that respects its bounds."""
        if not getattr(self, "_empty", None):
            p = ctypes.c_uint64()
            with self.lock:
                self.check(_lib.L.rt.tlxrt_malloc(self.h, 256, ctypes.byref(p)), "allocation")
            self._empty = p.value
        return self._empty

    def stream(self, native):
        """The tlxrt_stream (an address) over CUstream `native` (an int)."""
        s = self.streams.get(native)
        if s is None:
            h = _P()
            self.check(_lib.L.rt.tlxrt_stream_wrap(self.h, native, ctypes.byref(h)), "stream")
            s = self.streams[native] = h.value
        return s


_devices = {}
_current = [None]


def device(name=None):
    """The device kernels are compiled for and run on.  With a name ("sim",
    "cuda", "cuda:N") opens it (once) and makes it the current device;
    without, the current one, at first the TLXRT_DEVICE environment
    variable's, else a GPU when there is one, else the simulator."""
    if name is None:
        if _current[0] is None:
            d = Device(None)
            _current[0] = _devices.setdefault(d.name, d)
        return _current[0]
    key = "cuda:0" if name == "cuda" else name
    if key not in _devices:
        d = Device(name)
        _devices[d.name] = d
        key = d.name
    _current[0] = _devices[key]
    return _current[0]


def _torch_stream(dev):
    """The tlxrt_stream of torch's current stream on dev (0: the default
    stream)."""
    torch = sys.modules.get("torch")
    if dev.sim or torch is None:
        return 0
    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    native = raw(dev.ordinal) if raw else torch.cuda.current_stream(dev.ordinal).cuda_stream
    return dev.stream(native)


class Event:
    """A point in a device's default stream (or torch's current one):
    e.record(), e.synchronize(), start.elapsed_ms(end)."""

    def __init__(self, device=None):
        self.device = device or globals()["device"]()
        h = _P()
        with self.device.lock:
            self.device.check(_lib.L.rt.tlxrt_event_create(self.device.h, ctypes.byref(h)),
                              "event")
        self.h = h

    def record(self, torch_stream=False):
        """Mark the point after the work queued so far to the default
        stream (torch_stream: to torch's current stream)."""
        s = _torch_stream(self.device) if torch_stream else 0
        with self.device.lock:
            self.device.check(_lib.L.rt.tlxrt_event_record(self.h, s), "event")
        return self

    def synchronize(self):
        with self.device.lock:
            self.device.check(self.device.lib.tlxrt_event_synchronize(self.h), "event")

    def elapsed_ms(self, end):
        """Milliseconds from this event to `end` (both recorded, complete)."""
        ms = ctypes.c_float()
        with self.device.lock:
            self.device.check(_lib.L.rt.tlxrt_event_elapsed_ms(self.h, end.h, ctypes.byref(ms)),
                              "event")
        return ms.value

    def __del__(self):
        try:
            if getattr(self, "h", None) and _lib.L.rt is not None:
                with self.device.lock:
                    _lib.L.rt.tlxrt_event_destroy(self.h)
                self.h = None
        except Exception:  # the interpreter is shutting down
            pass


# ---- buffers ---------------------------------------------------------------------

class Buffer:
    """Device memory with an element type and a shape (row-major): what
    tlx.empty and tlx.to_device make.  Kernels take it for pointer and
    tensor parameters on its device; on the simulator it stays there
    between launches (no copies)."""

    def __init__(self, shape, dtype, device=None):
        self.device = device or globals()["device"]()
        self.shape = tuple(int(s) for s in (shape if isinstance(shape, (tuple, list))
                                             else (shape,)))
        self.type = _arrays.dtype_code(dtype)
        self.dtype = TYPES[self.type][2]
        self.itemsize = TYPES[self.type][1]
        self.strides = _arrays.contiguous(self.shape)
        n = 1
        for s in self.shape:
            n *= s
        self.size, self.nbytes = n, n * self.itemsize
        p = ctypes.c_uint64()
        with self.device.lock:
            self.device.check(_lib.L.rt.tlxrt_malloc(self.device.h, max(self.nbytes, 1),
                                                      ctypes.byref(p)), "allocation")
        self.ptr, self.base = p.value, None

    def __repr__(self):
        return "<tlx buffer %s%s on %s>" % (type_name(self.type), list(self.shape),
                                            self.device.name)

    def __del__(self):
        try:
            if getattr(self, "ptr", 0) and self.base is None and _lib.L.rt is not None:
                with self.device.lock:
                    _lib.L.rt.tlxrt_free(self.device.h, self.ptr)
                self.ptr = 0
        except Exception:  # the interpreter is shutting down
            pass

    def view(self, shape):
        """The same memory with another shape (row-major, as many
        elements); it keeps this buffer alive."""
        v = object.__new__(Buffer)
        v.__dict__.update(self.__dict__)
        v.shape = tuple(int(s) for s in (shape if isinstance(shape, (tuple, list))
                                         else (shape,)))
        n = 1
        for s in v.shape:
            n *= s
        if n != self.size:
            raise Error("view: shape %s has %d elements, the buffer %d"
                        % (list(v.shape), n, self.size))
        v.strides = _arrays.contiguous(v.shape)
        v.base = self if self.base is None else self.base
        return v

    def copy_from(self, a):
        """Copy a host array (or bytes) of the same size into the buffer."""
        if isinstance(a, (bytes, bytearray, memoryview)):
            data = (ctypes.c_char * len(a)).from_buffer_copy(a)
            if len(a) != self.nbytes:
                raise Error("copy_from: expected %d bytes, got %d" % (self.nbytes, len(a)))
            if self.nbytes:
                with self.device.lock:
                    self.device.check(_lib.L.rt.tlxrt_memcpy_htod(
                        self.device.h, self.ptr, ctypes.addressof(data), self.nbytes),
                        "copy_from")
            return self
        d = describe(a, "copy_from")
        if d is None or not d.host:
            raise Error("copy_from: expected a host array, got %s" % type(a).__name__)
        lo, hi = d.extent()
        if d.strides != _arrays.contiguous(d.shape) or hi - lo != self.nbytes:
            raise Error("copy_from: expected a contiguous array of %d bytes, got %d"
                        % (self.nbytes, hi - lo))
        if self.nbytes:
            with self.device.lock:
                self.device.check(_lib.L.rt.tlxrt_memcpy_htod(self.device.h, self.ptr, lo,
                                                              self.nbytes), "copy_from")
        return self

    def numpy(self):
        """A numpy copy (bf16 and fp8 as their bits: uint16, uint8)."""
        import numpy as np
        name = {"bfloat16": "uint16", "float8_e4m3fn": "uint8",
                "float8_e5m2": "uint8"}.get(self.dtype, self.dtype)
        out = np.empty(self.shape, dtype=name)
        if self.nbytes:
            with self.device.lock:
                self.device.check(_lib.L.rt.tlxrt_memcpy_dtoh(
                    self.device.h, out.ctypes.data, self.ptr, self.nbytes), "numpy")
        return out

    @property
    def __cuda_array_interface__(self):
        if self.device.sim:
            raise AttributeError("a simulator buffer has no CUDA address")
        ts = {"bfloat16": "<u2", "float8_e4m3fn": "|u1", "float8_e5m2": "|u1",
              "bool": "|b1"}.get(self.dtype)
        if ts is None:
            k = self.dtype.rstrip("0123456789")
            ts = "<%s%d" % ({"float": "f", "int": "i", "uint": "u"}[k], self.itemsize)
        return {"shape": self.shape, "typestr": ts, "data": (self.ptr, False), "version": 3,
                "strides": None}


def empty(shape, dtype, device=None):
    """An uninitialized Buffer (on the simulator, reading it before a write
    is reported)."""
    return Buffer(shape, dtype, device)


def to_device(a, dtype=None, device=None):
    """A Buffer holding a copy of host array a; dtype reinterprets its bits
    ("bf16" for a uint16 array)."""
    d = describe(a, "to_device")
    if d is None or not d.host:
        raise Error("to_device: expected a host array, got %s" % type(a).__name__)
    t = _arrays.dtype_code(dtype or d.dtype)
    if TYPES[t][1] != d.itemsize:
        raise Error("to_device: %s elements are %d bytes, the array's %d"
                    % (type_name(t), TYPES[t][1], d.itemsize))
    return Buffer(d.shape, t, device).copy_from(a)


# ---- modules ---------------------------------------------------------------------

_compiled = {}
_ctx_lock = threading.Lock()


def _compile_image(source, name, target, emit, defines):
    """The image of source (libtlx, else the tlxc program)."""
    t = _lib.tlx()
    if t is not None:
        with _ctx_lock:
            ctx = _P()
            if t.tlx_ctx_create(None, None, ctypes.byref(ctx)):
                raise Error("cannot create a compiler context")
            mod = _P()
            try:
                defs = [d.encode() for d in defines]
                opts = _lib.Options()
                opts.name = name.encode()
                opts.target = target.encode()
                opts.emit = emit
                opts.defines = (ctypes.c_char_p * max(1, len(defs)))(*defs)
                opts.ndefines = len(defs)
                src = source.encode()
                if t.tlx_compile(ctx, src, len(src), ctypes.byref(opts), ctypes.byref(mod)):
                    raise Error(t.tlx_errmsg(ctx).decode().rstrip())
                data, size, kind = _P(), ctypes.c_size_t(), ctypes.c_int()
                t.tlx_module_image(mod, ctypes.byref(data), ctypes.byref(size),
                                   ctypes.byref(kind))
                return ctypes.string_at(data, size.value)
            finally:
                if mod:
                    t.tlx_module_destroy(mod)
                t.tlx_ctx_destroy(ctx)
    exe = _lib.tlxc()
    if exe is None:
        raise Error("cannot compile: %s; and no tlxc program was found (set TLX_TLXC)"
                    % _lib.L.tlx_why)
    with tempfile.TemporaryDirectory(prefix="tlx-") as tmp:
        # the program as a file of its name, so that tlxc's diagnostics and
        # the module's source locations name it
        try:
            with open(name) as f:
                same = f.read() == source
        except OSError:
            same = False
        if same:
            src, cwd = name, None
        else:
            src, cwd = os.path.basename(name) or "string.tlx", tmp
            with open(os.path.join(tmp, src), "w") as f:
                f.write(source)
        out = os.path.join(tmp, "module.out")
        cmd = [exe, "--target=" + target, "--emit=" + ("ir" if emit == 2 else "cubin")]
        cmd += ["-D" + d for d in defines] + [src, "-o", out]
        p = subprocess.run(cmd, cwd=cwd, capture_output=True)
        if p.returncode:
            raise Error(p.stderr.decode().rstrip())
        with open(out, "rb") as f:
            return f.read()


def compile(source, target=None, name=None, device=None, **consts):
    """Compile a tlx program (a path to a .tlx file, or its text) for the
    current device (or `device`) and load it: its Kernel when it has one,
    else its Module.  Keyword arguments set const parameters (BM=128).
    Compiled once per source, constants and device in a process; libtlx's
    disk cache across processes."""
    dev = device if isinstance(device, Device) else globals()["device"](device) \
        if device else globals()["device"]()
    if "\n" not in source and os.path.exists(source):
        name = name or source
        with open(source) as f:
            source = f.read()
    name = name or "<string>"
    defines = ["%s=%s" % (k, str(v).lower() if isinstance(v, bool) else v)
               for k, v in sorted(consts.items())]
    target = target or dev.target
    key = (source, name, target, tuple(defines), dev.name)
    if key not in _compiled:
        image = _compile_image(source, name, target, 2 if dev.sim else 0, defines)
        m = load(image, dev)
        _compiled[key] = next(iter(m.kernels.values())) if len(m.kernels) == 1 else m
    return _compiled[key]


def _defines(consts):
    return ["%s=%s" % (k, str(v).lower() if isinstance(v, bool) else v)
            for k, v in sorted(consts.items())]


def _read(source, name):
    if "\n" not in source and os.path.exists(source):
        name = name or source
        with open(source) as f:
            source = f.read()
    return source, name or "<string>"


class TuneSpace:
    """The tuning space a kernel declares with tune(...) (docs/language.md):
    params maps each tuned const parameter to its values, in the order
    written; constraints is how many constraints it has; allows(**config)
    says whether a configuration satisfies them (parameters not given keep
    their defaults)."""

    def __init__(self, handle, params, constraints):
        self._h, self.params, self.constraints = handle, params, constraints

    def allows(self, **config):
        t = _lib.tlx()
        defs = [d.encode() for d in _defines(config)]
        with _ctx_lock:
            ctx, ok = _P(), ctypes.c_int()
            if t.tlx_ctx_create(None, None, ctypes.byref(ctx)):
                raise Error("cannot create a compiler context")
            try:
                arr = (ctypes.c_char_p * max(1, len(defs)))(*defs)
                if t.tlx_tune_space_check(ctx, self._h, arr, len(defs), ctypes.byref(ok)):
                    raise Error(t.tlx_errmsg(ctx).decode().rstrip())
            finally:
                t.tlx_ctx_destroy(ctx)
        return bool(ok.value)

    def __del__(self):
        if self._h and _lib.L.tlx is not None:
            _lib.L.tlx.tlx_tune_space_destroy(self._h)
            self._h = None

    def __repr__(self):
        return "TuneSpace(%r, %d constraints)" % (self.params, self.constraints)


def tune_space(source, kernel, target="sm_90a", name=None, **consts):
    """The TuneSpace of `kernel` in a tlx program (a path or its text);
    keyword arguments fix const parameters (BLOCK=256).  Needs libtlx."""
    t = _lib.tlx()
    if t is None:
        raise Error("tune_space needs libtlx: %s" % _lib.L.tlx_why)
    source, name = _read(source, name)
    defs = [d.encode() for d in _defines(consts)]
    with _ctx_lock:
        ctx, h = _P(), _P()
        if t.tlx_ctx_create(None, None, ctypes.byref(ctx)):
            raise Error("cannot create a compiler context")
        try:
            opts = _lib.Options()
            opts.name = name.encode()
            opts.target = target.encode()
            opts.defines = (ctypes.c_char_p * max(1, len(defs)))(*defs)
            opts.ndefines = len(defs)
            src = source.encode()
            if t.tlx_tune_space_create(ctx, src, len(src), ctypes.byref(opts), kernel.encode(),
                                       ctypes.byref(h)):
                raise Error(t.tlx_errmsg(ctx).decode().rstrip())
        finally:
            t.tlx_ctx_destroy(ctx)
    n, nc = ctypes.c_int(), ctypes.c_int()
    t.tlx_tune_space_num_params(h, ctypes.byref(n))
    t.tlx_tune_space_num_constraints(h, ctypes.byref(nc))
    params = {}
    for i in range(n.value):
        pn, vals, nv = ctypes.c_char_p(), ctypes.POINTER(ctypes.c_longlong)(), ctypes.c_int()
        t.tlx_tune_space_get_param(h, i, ctypes.byref(pn), ctypes.byref(vals), ctypes.byref(nv))
        params[pn.value.decode()] = [vals[j] for j in range(nv.value)]
    return TuneSpace(h, params, nc.value)


class Table:
    """A table of tuned configurations by shape, as tlx-tune --table writes
    it (docs/tuning.md, "Tables by shape"): pick(kernel, **shape) is the
    dict of const parameters stored for the kernel at that shape (its
    integer scalar arguments, M=4096), the exact entry or else the nearest
    one (libtlx's tlx_table_pick; exact=True: only an exact one), or None
    when no entry fits.  Needs libtlx."""

    def __init__(self, path):
        t = _lib.tlx()
        if t is None:
            raise Error("tlx.Table needs libtlx: %s" % _lib.L.tlx_why)
        self.path, self._h = path, _P()
        with _ctx_lock:
            ctx = _P()
            if t.tlx_ctx_create(None, None, ctypes.byref(ctx)):
                raise Error("cannot create a compiler context")
            try:
                if t.tlx_table_load(ctx, os.fsencode(path), ctypes.byref(self._h)):
                    raise Error(t.tlx_errmsg(ctx).decode().rstrip())
            finally:
                t.tlx_ctx_destroy(ctx)

    def pick(self, kernel, exact=False, **shape):
        shp = [("%s=%d" % (k, int(v))).encode() for k, v in sorted(shape.items())]
        arr = (ctypes.c_char_p * max(1, len(shp)))(*shp)
        defs, n, ex = ctypes.POINTER(ctypes.c_char_p)(), ctypes.c_int(), ctypes.c_int()
        rc = _lib.L.tlx.tlx_table_pick(self._h, kernel.encode(), arr, len(shp), 1 if exact else 0,
                                       ctypes.byref(defs), ctypes.byref(n), ctypes.byref(ex))
        if rc:
            return None
        out = {}
        for i in range(n.value):
            k, v = defs[i].decode().split("=", 1)
            out[k] = True if v == "true" else False if v == "false" else _number(v)
        return out

    def __del__(self):
        if self._h and _lib.L.tlx is not None:
            _lib.L.tlx.tlx_table_destroy(self._h)
            self._h = None

    def __repr__(self):
        return "Table(%r)" % self.path


def _number(v):
    try:
        return int(v, 0)
    except ValueError:
        return float(v)


class Tuned:
    """tlx.tuned(...): launches `kernel` compiled with the configuration a
    Table holds for the shape of each call, the values of its integer
    scalar arguments; one compilation per configuration (tlx.compile's
    cache).  Keyword arguments of tlx.tuned fix const parameters over the
    table's.  A shape no entry fits raises tlx.Error."""

    def __init__(self, source, kernel, table, name, device, consts):
        self.source, self.name = _read(source, name)
        self.kernel, self.device, self.consts = kernel, device, consts
        self.table = table if isinstance(table, Table) else Table(table)
        self._scalars = None   # the indices and names of the integer scalars
        self._by_shape = {}    # shape -> Kernel

    def _get(self, consts):
        k = compile(self.source, name=self.name, device=self.device, **consts)
        return k if isinstance(k, Kernel) else k[self.kernel]

    def config(self, *args):
        """The const parameters a call with these arguments uses."""
        if self._scalars is None:
            k = self._get(self.consts)
            self._scalars = [(p.index, p.name) for p in k.params
                             if p.kind == _lib.PARAM_SCALAR and SCALAR[p.type][2] == "int"]
        shape = {n: int(args[i]) for i, n in self._scalars}
        cfg = self.table.pick(self.kernel, **shape)
        if cfg is None:
            raise Error("%s has no entry of kernel '%s' for %s" % (
                self.table.path, self.kernel,
                " ".join("%s=%d" % kv for kv in sorted(shape.items()))))
        cfg.update(self.consts)
        return cfg

    def __call__(self, *args):
        key = tuple(int(args[i]) for i, _ in self._scalars) if self._scalars else None
        k = self._by_shape.get(key)
        if k is None:
            k = self._get(self.config(*args))
            key = tuple(int(args[i]) for i, _ in self._scalars)
            if len(self._by_shape) < 1024:
                self._by_shape[key] = k
        return k(*args)


def tuned(source, kernel, table, name=None, device=None, **consts):
    """A launcher of `kernel` (in a tlx program: a path or its text) that
    compiles it with the configuration `table` (a path or a tlx.Table)
    holds for each call's shape (docs/tuning.md, "Tables by shape")."""
    return Tuned(source, kernel, table, name, device, consts)


def load(image, device=None):
    """Load a module image (what tlxc wrote: a cubin, PTX, or IR text for
    the simulator; bytes or a path) on the current device (or `device`):
    its Module."""
    dev = device if isinstance(device, Device) else globals()["device"](device) \
        if device else globals()["device"]()
    if isinstance(image, str):
        with open(image, "rb") as f:
            image = f.read()
    h = _P()
    with dev.lock:
        dev.check(_lib.L.rt.tlxrt_module_load(dev.h, image, len(image), ctypes.byref(h)),
                  "load")
        m = Module(dev, h)
    m.image = image
    return m


class Module:
    """A loaded module; its kernels by name (m.vadd, m["vadd"], m.kernels)."""

    def __init__(self, dev, handle):
        rt = _lib.L.rt
        self.device, self._h = dev, handle
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
        try:
            if _lib.L.rt is not None and getattr(self, "_h", None):
                with self.device.lock:
                    self.device.lib.tlxrt_module_unload(self._h)
                self._h = None
        except Exception:  # the interpreter is shutting down
            pass


class Param:
    __slots__ = ("index", "name", "kind", "type", "rank")

    def __init__(self, index, p):
        self.index, self.name, self.kind = index, p.name.decode(), p.kind
        self.type, self.rank = p.type, p.rank

    def __repr__(self):
        t = type_name(self.type)
        if self.kind == _lib.PARAM_POINTER:
            t = "*" + t
        elif self.kind == _lib.PARAM_TENSOR:
            t = "tma<%s, %d>" % (t, self.rank)
        return "%s: %s" % (self.name, t)


class Kernel:
    """A kernel of a loaded module: k(*args) (the grid from the kernel's
    grid function) or k[grid](*args).  Arguments: tlx Buffers, torch
    tensors, numpy arrays and anything with __array_interface__,
    __cuda_array_interface__ or __dlpack__ for pointer and tensor
    parameters; Python (or numpy) numbers for scalars."""

    def __init__(self, module, handle):
        rt = _lib.L.rt
        self.module, self.device, self._h = module, module.device, handle
        self._addr = handle.value
        info = _lib.KernelInfo()
        self.device.check(rt.tlxrt_kernel_get_info(handle, ctypes.byref(info)), "kernel")
        self.name = info.name.decode()
        self.has_grid = bool(info.has_grid)
        self.warps, self.total_warps = info.warps, info.total_warps
        self.cluster, self.smem_bytes = tuple(info.cluster), info.smem_bytes
        self.params = []
        for i in range(info.num_params):
            p = _lib.ParamInfo()
            self.device.check(rt.tlxrt_kernel_get_param(handle, i, ctypes.byref(p)), "param")
            self.params.append(Param(i, p))
        self.consts = {}
        for i in range(info.num_consts):
            c = _lib.ConstInfo()
            self.device.check(rt.tlxrt_kernel_get_const(handle, i, ctypes.byref(c)), "const")
            self.consts[c.name.decode()] = c.f if c.is_float else c.i
        self._fast = None      # the launcher of the last signature (_fast.py)
        self._launchers = {}   # signature -> launcher
        self._bound = {}       # grid -> k[grid]

    @property
    def signature(self):
        return "%s(%s)" % (self.name, ", ".join(map(repr, self.params)))

    def __repr__(self):
        return "<tlx kernel %s on %s>" % (self.signature, self.device.name)

    def __getitem__(self, grid):
        try:
            b = self._bound.get(grid)
        except TypeError:  # a list
            return _Bound(self, grid)
        if b is None:
            b = _Bound(self, grid)
            if len(self._bound) < 64:
                self._bound[grid] = b
        return b

    def __call__(self, *args):
        if not self.has_grid:
            raise Error("kernel '%s' has no grid function: launch it as k[grid](...)"
                        % self.name)
        f = self._fast
        if f is not None:
            try:
                if f(0, 0, 0, *args) is not _MISS:
                    return
            except TypeError:
                pass
        launch(self, None, args)


class _Bound:
    """k[grid]: the kernel with a grid."""
    __slots__ = ("k", "g0", "g1", "g2")

    def __init__(self, k, grid):
        g = tuple(grid) if isinstance(grid, (tuple, list)) else (grid,)
        if not 1 <= len(g) <= 3:
            raise Error("a grid has 1 to 3 dimensions, got %r" % (grid,))
        try:
            g = [int(x) for x in g] + [1] * (3 - len(g))
        except (TypeError, ValueError):
            raise Error("a grid of integers, got %r" % (grid,)) from None
        if any(x < 1 or x >= 1 << 31 for x in g):
            raise Error("grid %r: each dimension must be 1 to 2^31-1" % (grid,))
        self.k, self.g0, self.g1, self.g2 = k, g[0], g[1], g[2]

    def __call__(self, *args):
        f = self.k._fast
        if f is not None:
            try:
                if f(self.g0, self.g1, self.g2, *args) is not _MISS:
                    return
            except TypeError:
                pass
        launch(self.k, (self.g0, self.g1, self.g2), args)


# ---- the general launch -------------------------------------------------------------

def _scalar(a, p, where):
    """(TLXRT_ARG_*, value) for scalar parameter p, or an Error."""
    kind, fmt, num = SCALAR.get(p.type, (None, None, None))
    if kind is None:
        raise Error("%s: a %s parameter cannot be passed from Python"
                    % (where, type_name(p.type)))
    try:
        if num == "int":
            if isinstance(a, float):
                raise TypeError
            v = operator.index(a)
        else:
            if isinstance(a, (str, bytes)) or hasattr(a, "__len__"):
                raise TypeError
            v = float(a)
    except (TypeError, ValueError):
        raise Error("%s: expected %s (%s), got %s %r"
                    % (where, "an integer" if num == "int" else "a number",
                       type_name(p.type), type(a).__name__, a)) from None
    try:
        struct.pack(fmt, v)
    except (struct.error, OverflowError):
        raise Error("%s: %r does not fit in %s" % (where, a, type_name(p.type))) from None
    return kind, v


def _check_array(d, p, dev, where):
    accept = TYPES[p.type][3] if p.type in TYPES else set()
    if d.dtype not in accept:
        raise Error("%s: expected %s of %s (%s), got %s"
                    % (where, "a tensor" if p.kind == _lib.PARAM_TENSOR else "an array",
                       type_name(p.type), " or ".join(sorted(accept)), d.dtype))
    if p.kind == _lib.PARAM_TENSOR and len(d.shape) != p.rank:
        raise Error("%s: expected a rank-%d tensor, got shape %s"
                    % (where, p.rank, list(d.shape)))
    if isinstance(d.device, Device):
        if d.device is not dev:
            raise Error("%s: a buffer of device %s, the kernel's is %s"
                        % (where, d.device.name, dev.name))
    elif d.host:
        if not dev.sim:
            raise Error("%s: host memory on device %s: pass a CUDA tensor or a tlx.Buffer "
                        "(host arrays are copied in and out on the simulator only: "
                        "tlx.device('sim'))" % (where, dev.name))
    else:
        if dev.sim:
            raise Error("%s: CUDA memory on the simulator: pass a host array (cpu tensor, "
                        "numpy) or a tlx.Buffer of the simulator" % where)
        if d.device[1] is not None and d.device[1] != dev.ordinal:
            raise Error("%s: memory of cuda:%d, the kernel's device is %s"
                        % (where, d.device[1], dev.name))


def _to_device(dev, hosts):
    """Copy the host arrays to the simulator: each overlapping group of
    them in one allocation, placed at the host's alignment mod 256, its
    end at the allocation's (an access past it is out of bounds).
    Returns [(lo, hi, base, writable)] and sets each array's .ptr."""
    rt = _lib.L.rt
    spans = sorted(((d.extent(), d) for d in hosts), key=lambda e: e[0])
    groups = []
    for (lo, hi), d in spans:
        if groups and lo < groups[-1][1]:
            g = groups[-1]
            g[1] = max(g[1], hi)
            g[2].append(d)
        else:
            groups.append([lo, hi, [d]])
    out = []
    try:
        for lo, hi, ds in groups:
            pad = lo % 256
            p = ctypes.c_uint64()
            dev.check(rt.tlxrt_malloc(dev.h, max(pad + hi - lo, 1), ctypes.byref(p)),
                      "a copy of an argument")
            base = p.value + pad
            out.append((lo, hi, p.value, any(d.writable for d in ds)))
            if hi > lo:
                dev.check(rt.tlxrt_memcpy_htod(dev.h, base, lo, hi - lo),
                          "a copy of an argument")
            for d in ds:
                d.ptr = base + (d.ptr - lo)
    except BaseException:
        for _, _, p, _ in out:
            rt.tlxrt_free(dev.h, p)
        raise
    return out


def launch(k, grid, args):
    """Launch k with any arguments (the general path); on the simulator,
    host arrays are copied in and, after the kernel, back out."""
    dev = k.device
    if len(args) != len(k.params):
        raise Error("kernel '%s' takes %d arguments (%s), got %d"
                    % (k.name, len(k.params), ", ".join(p.name for p in k.params), len(args)))
    cargs = (_lib.Arg * max(1, len(args)))()
    hosts, slots, tensors = [], [], False
    torch = sys.modules.get("torch")
    for a, p in zip(args, k.params):
        where = "argument %d ('%s')" % (p.index + 1, p.name)
        c = cargs[p.index]
        if p.kind == _lib.PARAM_SCALAR:
            c.kind, v = _scalar(a, p, where)
            setattr(c.v, ("i32", "i64", "u32", "u64", "f32", "f64")[c.kind - 1], v)
            continue
        if p.kind not in (_lib.PARAM_POINTER, _lib.PARAM_TENSOR):
            raise Error("%s: this parameter's type cannot be passed from Python" % where)
        if isinstance(a, Buffer):
            d = Array(a.ptr, a.dtype, a.itemsize, a.shape, a.strides, False, a.device)
        else:
            d = describe(a, where)
            if d is None:
                raise Error("%s: expected %s of %s, got %s"
                            % (where, "a tensor" if p.kind == _lib.PARAM_TENSOR
                               else "an array", type_name(p.type), type(a).__name__))
            tensors = tensors or (torch is not None and isinstance(a, torch.Tensor))
        _check_array(d, p, dev, where)
        if not d.host and not d.ptr and 0 in d.shape:
            d.ptr = dev.empty_ptr
        if d.host:
            hosts.append(d)
        slots.append((c, p, d))
    with dev.lock:
        _launch(k, grid, args, dev, cargs, hosts, slots, tensors)
    if not hosts:  # the next launch like this one takes the fast path
        _fast.select(k, args)


def _launch(k, grid, args, dev, cargs, hosts, slots, tensors):
    copies = _to_device(dev, hosts) if hosts else []
    try:
        for c, p, d in slots:
            if p.kind == _lib.PARAM_POINTER:
                c.kind, c.v.ptr = _lib.ARG_PTR, d.ptr
            else:
                t = c.v.tensor
                c.kind = _lib.ARG_TENSOR
                t.ptr, t.type, t.rank = d.ptr, p.type, len(d.shape)
                for i, (s, st) in enumerate(zip(d.shape, d.strides)):
                    t.shape[i], t.strides[i] = s, st
        cfg = _lib.LaunchConfig()
        if grid is not None:
            cfg.grid[0], cfg.grid[1], cfg.grid[2] = grid
        cfg.stream = _torch_stream(dev) if tensors else 0
        dev.check(dev.lib.tlxrt_launch(k._h, ctypes.byref(cfg), cargs, len(args)),
                  "launch of '%s'" % k.name)
        for lo, hi, p, writable in copies:
            if writable and hi > lo:
                dev.check(_lib.L.rt.tlxrt_memcpy_dtoh(dev.h, lo, p + lo % 256, hi - lo),
                          "copying an argument back")
    finally:
        for _, _, p, _ in copies:
            _lib.L.rt.tlxrt_free(dev.h, p)
