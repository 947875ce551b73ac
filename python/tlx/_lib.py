"""libtlx and libtlxrt through ctypes: finding them, their structures and
prototypes.  Nothing here knows numpy or torch.

libtlxrt is loaded twice over the same handle: through ctypes.PyDLL (the
GIL stays held: short calls, and the launches of the cuda backend, which
only queue work) and through ctypes.CDLL (the GIL is released: simulator
launches and waits, which may take seconds).  libtlx is optional: without
it, tlx.compile runs the tlxc program instead."""
import ctypes
import ctypes.util
import os
import shutil


class Error(Exception):
    """A compilation or a launch failed, or an argument was wrong; the
    message is tlx's (the compiler's diagnostics, the runtime's report)."""


try:  # written by `make install`: where it put the libraries and tlxc
    from ._paths import BINDIR as _BINDIR, LIBDIR as _LIBDIR
except ImportError:
    _BINDIR = _LIBDIR = None


def _candidates(name):
    """Where lib<name> may be, most specific first (a generator: the system
    search, which runs ldconfig, only when the others failed)."""
    dirs = []
    if os.environ.get("TLX_LIBDIR"):
        dirs.append(os.environ["TLX_LIBDIR"])
    if _LIBDIR:
        dirs.append(_LIBDIR)
    tlxc = shutil.which("tlxc")
    if tlxc:  # an installation on PATH: PREFIX/bin/tlxc, PREFIX/lib
        dirs.append(os.path.join(os.path.dirname(os.path.realpath(tlxc)), "..", "lib"))
    for d in dirs:
        for f in ("lib%s.so" % name, "lib%s.so.0" % name):
            if os.path.exists(os.path.join(d, f)):
                yield os.path.join(d, f)
    yield "lib%s.so.0" % name  # LD_LIBRARY_PATH, the linker's cache
    found = ctypes.util.find_library(name)
    if found:
        yield found


def _open(name, kind=ctypes.CDLL):
    errors = []
    for p in _candidates(name):
        try:
            return kind(p), p
        except OSError as e:
            errors.append(str(e))
    raise Error("cannot load lib%s (set TLX_LIBDIR to the folder that has it, or "
                "install tlx with `make install`): %s"
                % (name, "; ".join(errors[-2:]) or "not found"))


# ---- structures (tlx/tlx.h, tlx/tlxrt.h) ---------------------------------------

class Options(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("target", ctypes.c_char_p),
                ("opt_level", ctypes.c_int), ("emit", ctypes.c_int),
                ("defines", ctypes.POINTER(ctypes.c_char_p)), ("ndefines", ctypes.c_int),
                ("lineinfo", ctypes.c_int), ("no_cache", ctypes.c_int)]


class Props(ctypes.Structure):
    _fields_ = [("backend", ctypes.c_int), ("name", ctypes.c_char * 128),
                ("sm", ctypes.c_int), ("sm_count", ctypes.c_int),
                ("max_smem_per_block", ctypes.c_int), ("max_threads_per_block", ctypes.c_int),
                ("max_cluster_size", ctypes.c_int), ("total_mem", ctypes.c_uint64),
                ("l2_size", ctypes.c_int), ("driver_version", ctypes.c_int),
                ("ordinal", ctypes.c_int)]


class KernelInfo(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("num_params", ctypes.c_int),
                ("warps", ctypes.c_int), ("total_warps", ctypes.c_int),
                ("cluster", ctypes.c_int * 3), ("smem_bytes", ctypes.c_int),
                ("has_grid", ctypes.c_int), ("num_consts", ctypes.c_int)]


class ParamInfo(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("kind", ctypes.c_int), ("type", ctypes.c_int),
                ("rank", ctypes.c_int), ("box", ctypes.c_int64 * 5), ("swizzle", ctypes.c_int)]


class ConstInfo(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("is_float", ctypes.c_int),
                ("i", ctypes.c_int64), ("f", ctypes.c_double)]


class Tensor(ctypes.Structure):
    _fields_ = [("ptr", ctypes.c_uint64), ("type", ctypes.c_int), ("rank", ctypes.c_int),
                ("shape", ctypes.c_int64 * 5), ("strides", ctypes.c_int64 * 5)]


class ArgValue(ctypes.Union):
    _fields_ = [("i32", ctypes.c_int32), ("i64", ctypes.c_int64), ("u32", ctypes.c_uint32),
                ("u64", ctypes.c_uint64), ("f32", ctypes.c_float), ("f64", ctypes.c_double),
                ("ptr", ctypes.c_uint64), ("tensor", Tensor)]


class Arg(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_int), ("v", ArgValue)]


class LaunchConfig(ctypes.Structure):
    _fields_ = [("grid", ctypes.c_uint32 * 3), ("cluster", ctypes.c_uint32 * 3),
                ("stream", ctypes.c_void_p)]


# the byte layouts the fast launchers pack with struct (checked below)
ARG_SIZE, CFG_SIZE = 104, 32
assert ctypes.sizeof(Arg) == ARG_SIZE and Arg.v.offset == 8
assert ctypes.sizeof(LaunchConfig) == CFG_SIZE and LaunchConfig.stream.offset == 24

# TLXRT_PARAM_*, TLXRT_ARG_*, TLXRT_BACKEND_*
PARAM_SCALAR, PARAM_POINTER, PARAM_TENSOR = 1, 2, 3
ARG_I32, ARG_I64, ARG_U32, ARG_U64, ARG_F32, ARG_F64, ARG_PTR, ARG_TENSOR = range(1, 9)
BACKEND_SIM, BACKEND_CUDA = 1, 2
LAUNCH_FAILED = 6  # TLXRT_LAUNCH

_P = ctypes.c_void_p
_PP = ctypes.POINTER(_P)
_U64 = ctypes.c_uint64
_SZ = ctypes.c_size_t


def _protos(r):
    """Prototypes of libtlxrt's functions on handle r."""
    P, I = _P, ctypes.c_int
    for name, res, args in (
            ("tlxrt_device_open_errmsg", I, [ctypes.c_char_p, _PP, ctypes.c_char_p, _SZ]),
            ("tlxrt_device_close", I, [P]),
            ("tlxrt_errmsg", ctypes.c_char_p, [P]),
            ("tlxrt_device_get_props", I, [P, ctypes.POINTER(Props)]),
            ("tlxrt_device_set_option", I, [P, I, ctypes.c_int64]),
            ("tlxrt_device_synchronize", I, [P]),
            ("tlxrt_malloc", I, [P, _SZ, ctypes.POINTER(_U64)]),
            ("tlxrt_free", I, [P, _U64]),
            ("tlxrt_memcpy_htod", I, [P, _U64, P, _SZ]),
            ("tlxrt_memcpy_dtoh", I, [P, P, _U64, _SZ]),
            ("tlxrt_memcpy_dtod", I, [P, _U64, _U64, _SZ]),
            ("tlxrt_memset", I, [P, _U64, I, _SZ]),
            ("tlxrt_module_load", I, [P, P, _SZ, _PP]),
            ("tlxrt_module_unload", I, [P]),
            ("tlxrt_module_num_kernels", I, [P, ctypes.POINTER(I)]),
            ("tlxrt_module_get_kernel", I, [P, I, _PP]),
            ("tlxrt_kernel_get_info", I, [P, ctypes.POINTER(KernelInfo)]),
            ("tlxrt_kernel_get_param", I, [P, I, ctypes.POINTER(ParamInfo)]),
            ("tlxrt_kernel_get_const", I, [P, I, ctypes.POINTER(ConstInfo)]),
            ("tlxrt_launch", I, [P, P, P, I]),
            ("tlxrt_stream_wrap", I, [P, P, _PP]),
            ("tlxrt_stream_destroy", I, [P]),
            ("tlxrt_stream_synchronize", I, [P]),
            ("tlxrt_event_create", I, [P, _PP]),
            ("tlxrt_event_destroy", I, [P]),
            ("tlxrt_event_record", I, [P, P]),
            ("tlxrt_event_synchronize", I, [P]),
            ("tlxrt_event_elapsed_ms", I, [P, P, ctypes.POINTER(ctypes.c_float)]),
            ("tlxrt_type_name", ctypes.c_char_p, [I]),
            ("tlxrt_type_size", I, [I])):
        f = getattr(r, name)
        f.restype, f.argtypes = res, args


class _Libs:
    rt = None      # libtlxrt, GIL held
    rt_nogil = None  # the same, GIL released
    tlx = None     # libtlx, or None when it cannot be loaded
    tlx_why = ""   # why not
    rt_path = None


L = _Libs()


def rt():
    """libtlxrt (GIL held); loads it at the first call."""
    if L.rt is None:
        r, path = _open("tlxrt", ctypes.PyDLL)
        n = ctypes.CDLL(path)
        _protos(r)
        _protos(n)
        if not hasattr(r, "tlxrt_stream_wrap"):
            raise Error("%s is too old for this package (no tlxrt_stream_wrap)" % path)
        L.rt, L.rt_nogil, L.rt_path = r, n, path
    return L.rt


def tlx():
    """libtlx, or None (then L.tlx_why says why)."""
    if L.tlx is None and not L.tlx_why:
        if os.environ.get("TLX_NO_LIBTLX"):
            L.tlx_why = "libtlx is not used (TLX_NO_LIBTLX is set)"
            return None
        try:
            t, _ = _open("tlx")
        except Error as e:
            L.tlx_why = str(e)
            return None
        t.tlx_ctx_create.argtypes = [_P, _P, _PP]
        t.tlx_errmsg.restype = ctypes.c_char_p
        t.tlx_errmsg.argtypes = [_P]
        t.tlx_compile.argtypes = [_P, ctypes.c_char_p, _SZ, ctypes.POINTER(Options), _PP]
        t.tlx_module_image.argtypes = [_P, _PP, ctypes.POINTER(_SZ), ctypes.POINTER(ctypes.c_int)]
        t.tlx_module_destroy.argtypes = [_P]
        t.tlx_ctx_destroy.argtypes = [_P]
        _I = ctypes.POINTER(ctypes.c_int)
        t.tlx_tune_space_create.argtypes = [_P, ctypes.c_char_p, _SZ, ctypes.POINTER(Options),
                                            ctypes.c_char_p, _PP]
        t.tlx_tune_space_num_params.argtypes = [_P, _I]
        t.tlx_tune_space_get_param.argtypes = [_P, ctypes.c_int, ctypes.POINTER(ctypes.c_char_p),
                                               ctypes.POINTER(ctypes.POINTER(ctypes.c_longlong)), _I]
        t.tlx_tune_space_num_constraints.argtypes = [_P, _I]
        t.tlx_tune_space_check.argtypes = [_P, _P, ctypes.POINTER(ctypes.c_char_p), ctypes.c_int, _I]
        t.tlx_tune_space_destroy.argtypes = [_P]
        t.tlx_table_load.argtypes = [_P, ctypes.c_char_p, _PP]
        t.tlx_table_pick.argtypes = [_P, ctypes.c_char_p, ctypes.POINTER(ctypes.c_char_p),
                                     ctypes.c_int, ctypes.c_int,
                                     ctypes.POINTER(ctypes.POINTER(ctypes.c_char_p)), _I, _I]
        t.tlx_table_destroy.argtypes = [_P]
        L.tlx = t
    return L.tlx


def tlxc():
    """The tlxc program (when libtlx cannot be loaded), or None."""
    for p in (os.environ.get("TLX_TLXC"), _BINDIR and os.path.join(_BINDIR, "tlxc"),
              shutil.which("tlxc")):
        if p and os.access(p, os.X_OK):
            return os.path.abspath(p)
    return None
