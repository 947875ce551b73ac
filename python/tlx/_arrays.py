"""Element types and the arrays a launch takes: what each kind of argument
(a tlx.Buffer, a torch tensor, anything with __array_interface__,
__cuda_array_interface__ or __dlpack__) says about its memory.  numpy and
torch are never imported here: an argument of theirs means its module is
loaded already."""
import ctypes
import sys

from ._lib import Error

# TLXRT_* element type -> (tlx name, bytes, the dtype name of its arrays,
# the dtype names an argument may have).  bf16 and fp8 arrays may also be
# passed as their bits (numpy has neither type): uint16, uint8.
TYPES = {
    1: ("i1", 1, "bool", {"bool"}),
    2: ("i8", 1, "int8", {"int8"}),
    3: ("i16", 2, "int16", {"int16"}),
    4: ("i32", 4, "int32", {"int32"}),
    5: ("i64", 8, "int64", {"int64"}),
    6: ("u8", 1, "uint8", {"uint8"}),
    7: ("u16", 2, "uint16", {"uint16"}),
    8: ("u32", 4, "uint32", {"uint32"}),
    9: ("u64", 8, "uint64", {"uint64"}),
    10: ("f8e4m3", 1, "float8_e4m3fn", {"float8_e4m3fn", "uint8"}),
    11: ("f8e5m2", 1, "float8_e5m2", {"float8_e5m2", "uint8"}),
    12: ("f16", 2, "float16", {"float16"}),
    13: ("bf16", 2, "bfloat16", {"bfloat16", "uint16"}),
    14: ("f32", 4, "float32", {"float32"}),
    15: ("f64", 8, "float64", {"float64"}),
}
# a dtype name (numpy's, torch's without "torch.", or a tlx name) -> type
CODE = {}
for _c, (_n, _s, _d, _) in TYPES.items():
    CODE[_d] = CODE[_n] = _c

# scalar parameters: type -> (TLXRT_ARG_*, struct format, "int" or "float")
# (narrow integers travel as i32/u32, narrow floats as f32: tlx/tlxrt.h)
SCALAR = {1: (1, "i", "int"), 2: (1, "i", "int"), 3: (1, "i", "int"), 4: (1, "i", "int"),
          5: (2, "q", "int"), 6: (3, "I", "int"), 7: (3, "I", "int"), 8: (3, "I", "int"),
          9: (4, "Q", "int"), 10: (5, "f", "float"), 11: (5, "f", "float"),
          12: (5, "f", "float"), 13: (5, "f", "float"), 14: (5, "f", "float"),
          15: (6, "d", "float")}


def type_name(code):
    return TYPES[code][0] if code in TYPES else "?"


def dtype_code(dtype):
    """A tlx element type from a dtype: "f32", "float32", np.float32,
    torch.bfloat16, ..."""
    if isinstance(dtype, int) and dtype in TYPES:
        return dtype
    name = getattr(dtype, "name", None) if not isinstance(dtype, str) else dtype
    if name is None:  # torch.dtype, numpy scalar types
        name = str(dtype).replace("torch.", "").replace("<class 'numpy.", "").rstrip("'>")
    if name not in CODE:
        raise Error("unknown element type %r (tlx has %s)"
                    % (dtype, ", ".join(t[0] for t in TYPES.values())))
    return CODE[name]


class Array:
    """What an argument says of its memory.  ptr: its first element;
    strides in elements; host: the host can address it (it is copied to
    the simulator); device: None (host memory), ("cuda", ordinal or None),
    or the tlx Device of a Buffer."""
    __slots__ = ("ptr", "dtype", "itemsize", "shape", "strides", "host", "device",
                 "writable", "keep")

    def __init__(self, ptr, dtype, itemsize, shape, strides, host, device, writable=True,
                 keep=None):
        self.ptr, self.dtype, self.itemsize = ptr, dtype, itemsize
        self.shape = tuple(int(s) for s in shape)
        self.strides = tuple(int(s) for s in strides) if strides is not None \
            else contiguous(self.shape)
        self.host, self.device, self.writable, self.keep = host, device, writable, keep

    def extent(self):
        """The bytes [lo, hi) its elements span (lo == hi: none)."""
        if any(s == 0 for s in self.shape):
            return self.ptr, self.ptr
        neg = sum((s - 1) * st for s, st in zip(self.shape, self.strides) if st < 0)
        pos = sum((s - 1) * st for s, st in zip(self.shape, self.strides) if st > 0)
        return self.ptr + neg * self.itemsize, self.ptr + (pos + 1) * self.itemsize


def contiguous(shape):
    st, n = [], 1
    for s in reversed(shape):
        st.append(n)
        n *= max(int(s), 1)
    return tuple(reversed(st))


_TYPESTR = {"b1": "bool", "i1": "int8", "i2": "int16", "i4": "int32", "i8": "int64",
            "u1": "uint8", "u2": "uint16", "u4": "uint32", "u8": "uint64",
            "f2": "float16", "f4": "float32", "f8": "float64"}


def _typestr(ts, what):
    if ts[0] == ">" or ts[1:] not in _TYPESTR:
        raise Error("%s: element type %r is not one tlx has" % (what, ts))
    return _TYPESTR[ts[1:]]


def _from_interface(ai, dtype, host, device, what):
    ptr, readonly = ai["data"]
    ts = ai["typestr"]
    name = dtype or _typestr(ts, what)
    size = int(ts[2:])
    st = ai.get("strides")
    if st is not None:
        if any(s % size for s in st):
            raise Error("%s: strides %r are not multiples of the element size" % (what, st))
        st = [s // size for s in st]
    return Array(ptr or 0, name, size, ai["shape"], st, host, device, not readonly)


# ---- DLPack (dlpack.h, the legacy "dltensor" capsule) ----------------------------

class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_DL_KIND = {0: "int", 1: "uint", 2: "float", 4: "bfloat", 6: "bool"}
_DL_CPU, _DL_CUDA, _DL_CUDA_HOST, _DL_CUDA_MANAGED = 1, 2, 3, 13


def _from_dlpack(a, what):
    cap = a.__dlpack__()
    try:
        t = _DLTensor.from_address(_capsule_pointer(cap, b"dltensor"))
    except ValueError:
        raise Error("%s: __dlpack__ gave no 'dltensor' capsule" % what) from None
    dt = t.dtype
    kind = _DL_KIND.get(dt.code)
    if kind is None or dt.lanes != 1:
        raise Error("%s: DLPack element type (code %d, %d bits, %d lanes) is not one tlx has"
                    % (what, dt.code, dt.bits, dt.lanes))
    name = "bool" if kind == "bool" else "%s%d" % (kind, dt.bits)
    n = t.ndim
    shape = [t.shape[i] for i in range(n)]
    strides = [t.strides[i] for i in range(n)] if t.strides else None
    dev = t.device.device_type
    if dev in (_DL_CPU, _DL_CUDA_HOST):
        host, device = True, None
    elif dev in (_DL_CUDA, _DL_CUDA_MANAGED):
        host, device = False, ("cuda", t.device.device_id)
    else:
        raise Error("%s: DLPack device type %d is neither the CPU nor CUDA" % (what, dev))
    return Array((t.data or 0) + t.byte_offset, name, max(dt.bits // 8, 1), shape, strides,
                 host, device, True, keep=(a, cap))


def describe(a, what):
    """The Array of argument a, or None when a is no array."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(a, torch.Tensor):
        dev = a.device.type
        if dev == "cuda":
            host, device = False, ("cuda", a.get_device())
        elif dev == "cpu":
            host, device = True, None
        else:
            raise Error("%s: a tensor on device '%s' (tlx takes cpu and cuda tensors)"
                        % (what, a.device))
        return Array(a.data_ptr(), str(a.dtype)[6:], a.element_size(), a.shape, a.stride(),
                     host, device, True, keep=a)
    if hasattr(a, "__array_interface__"):
        ai = a.__array_interface__
        if not isinstance(ai, dict) or "data" not in ai or not isinstance(ai["data"], tuple):
            raise Error("%s: its __array_interface__ has no data pointer" % what)
        dt = getattr(a, "dtype", None)
        r = _from_interface(ai, getattr(dt, "name", None), True, None, what)
        r.keep = a
        return r
    if hasattr(a, "__cuda_array_interface__"):
        r = _from_interface(a.__cuda_array_interface__, None, False, ("cuda", None), what)
        r.keep = a
        return r
    if hasattr(a, "__dlpack__"):
        return _from_dlpack(a, what)
    return None
