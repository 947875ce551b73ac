"""tlx: compile and launch tlx tile kernels from Python.

    import numpy as np, tlx
    tlx.device("sim")                              # or "cuda"
    k = tlx.compile("examples/vadd.tlx", BLOCK=256)  # a path or source text
    x = np.random.rand(1000).astype(np.float32)
    out = np.empty_like(x)
    k(x, x, out, x.size)                           # grid from the kernel
    k[(4,)](x, x, out, x.size)                     # or given

Over libtlx (the compiler, with its cache; without it, the tlxc program)
and libtlxrt (the runtime) through ctypes: nothing but the standard
library is needed; numpy and torch are optional.

Arguments of pointer and tensor-descriptor parameters: torch tensors
(CUDA ones on the cuda device, on torch's current stream; CPU ones on the
simulator), tlx Buffers (tlx.empty, tlx.to_device), and anything with
__array_interface__ (numpy), __cuda_array_interface__ or __dlpack__.  On
the simulator, host arrays are copied in before the launch and back out
after it.  Scalars: Python or numpy numbers.  Launches with device memory
only go through a launcher generated per argument signature (the cached
path); the others, and every error, through the general one.

tlx.torch_op registers a kernel as a torch.library.custom_op with a fake
implementation, for torch.compile(fullgraph=True).

Errors (the compiler's diagnostics, the runtime's argument checks and the
simulator's reports of out-of-bounds accesses, reads of unwritten memory
and deadlocks) are raised as tlx.Error.
"""
from ._lib import Error
from ._core import (Buffer, Device, Event, Kernel, Module, Table, Tuned, TuneSpace, compile,
                    device, empty, load, to_device, tune_space, tuned)
from ._torch import torch_op

__all__ = ["Buffer", "Device", "Error", "Event", "Kernel", "Module", "Table", "Tuned",
           "TuneSpace", "compile", "device", "empty", "load", "synchronize", "to_device",
           "torch_op", "tune_space", "tuned"]
__version__ = "0.1.0"


def synchronize():
    """Wait for the work of the current device."""
    device().synchronize()
