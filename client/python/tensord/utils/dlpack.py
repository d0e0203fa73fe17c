"""torch.utils.dlpack: tensors to and from DLPack, the array-exchange protocol of numpy, torch,
JAX, CuPy and others.

A tensord tensor lives on the server, so an exchange is a copy where torch's shares memory:
from_dlpack uploads what the producer holds (contiguous, in its dtype), and a tensord tensor's
capsule (to_dlpack, __dlpack__) holds a host copy of its values, on the CPU whatever the
tensor's device. The dtypes are those torch 1.13's DLPack takes (no bool), less bfloat16, which
the host copy (a numpy array) cannot hold.
"""
import enum
import sys

import numpy as np


class DLDeviceType(enum.IntEnum):
    """DLPack's device types (torch.utils.dlpack.DLDeviceType)."""
    kDLCPU = 1
    kDLGPU = 2
    kDLCPUPinned = 3
    kDLOpenCL = 4
    kDLVulkan = 7
    kDLMetal = 8
    kDLVPI = 9
    kDLROCM = 10
    kDLExtDev = 12
    kDLOneAPI = 14


_INVALID_CAPSULE = ("from_dlpack received an invalid capsule. Note that DLTensor capsules can be "
                    "consumed only once, so you might have already constructed a tensor from it "
                    "once.")


class _Capsule:
    """A bare capsule (to_dlpack's) as a producer: numpy takes only objects with __dlpack__."""

    def __init__(self, capsule):
        self._capsule = capsule

    def __dlpack__(self, stream=None):
        return self._capsule

    def __dlpack_device__(self):
        return (DLDeviceType.kDLCPU, 0)


def _torch_tensor(obj):
    """Whether obj is a tensor of the real torch (which the client may run beside tensord)."""
    cls = type(obj)
    return cls.__module__.split(".")[0] == "torch" and cls.__name__ in ("Tensor", "Parameter")


def from_dlpack(ext_tensor):
    """A tensord tensor with the values of a DLPack producer (an object with __dlpack__, or a
    capsule from to_dlpack): on the session's default device, or on cuda:N where the producer's
    memory is on that GPU."""
    from .. import _tensor  # noqa: PLC0415 - tensord's tensor imports this package
    from .. import _dtypes, _factories  # noqa: PLC0415
    if isinstance(ext_tensor, _tensor.Tensor):
        return ext_tensor.detach()  # torch's: a new tensor over the same storage
    device = None
    if hasattr(ext_tensor, "__dlpack_device__"):
        kind, index = ext_tensor.__dlpack_device__()
        if kind == DLDeviceType.kDLGPU:
            device = f"cuda:{index}"
    if _torch_tensor(ext_tensor):  # its bfloat16 too, and from its GPU through its own copy
        host = ext_tensor.detach().cpu().contiguous()
        if str(host.dtype) == "torch.bfloat16":  # numpy has none: the bits travel as int16
            torch = sys.modules["torch"]  # imported by whoever made the tensor
            out = _factories.from_numpy(host.view(torch.int16).numpy()).view(_dtypes.bfloat16)
        else:
            out = _factories.from_numpy(host.numpy())
        return out if device is None else out.to(device)
    if device is not None:
        raise RuntimeError("tensord: from_dlpack reads device memory only from torch tensors; "
                           "copy the producer's values to the host first")
    if not hasattr(ext_tensor, "__dlpack__"):
        if type(ext_tensor).__name__ != "PyCapsule":
            raise RuntimeError(_INVALID_CAPSULE)
        ext_tensor = _Capsule(ext_tensor)
    try:
        arr = np.from_dlpack(ext_tensor)
    except ValueError as e:  # a capsule consumed already (renamed "used_dltensor")
        raise RuntimeError(_INVALID_CAPSULE) from e
    except (TypeError, BufferError) as e:
        raise RuntimeError(f"from_dlpack: {e}") from e
    return _factories.from_numpy(arr)


def to_dlpack(tensor):
    """A DLPack capsule of a host copy of the tensor's values (consumed once, as torch's)."""
    return tensor.__dlpack__()


def _export(tensor):
    """Tensor.__dlpack__: the capsule of a host copy, with torch's refusals."""
    from .. import _dtypes  # noqa: PLC0415
    if tensor.requires_grad:
        raise RuntimeError("Can't export tensors that require gradient, use tensor.detach()")
    if tensor.dtype is _dtypes.bool_:
        raise RuntimeError("Bool type is not supported by dlpack")
    if tensor.dtype is _dtypes.bfloat16:
        raise RuntimeError("tensord: a bfloat16 tensor's host copy is a numpy array, which "
                           "has no bfloat16; convert it first (tensor.float())")
    return tensor.detach().cpu().numpy().__dlpack__()
