"""Dtype facts and rules with torch's names: finfo, iinfo, result_type, can_cast."""
import math

import numpy as np

from . import _dtypes


def _g(x):
    return f"{x:.6g}"


class finfo:
    """Machine limits of a floating dtype (torch.finfo); the default dtype when none is given."""

    def __init__(self, type=None):
        d = _dtypes.get_default_dtype() if type is None else type
        if not isinstance(d, _dtypes.dtype) or not d.is_floating_point:
            raise TypeError("torch.finfo() requires a floating point input type. Use torch.iinfo "
                            "to handle 'torch.finfo'")
        if d is _dtypes.bfloat16:  # 8 exponent bits (float32's), 7 mantissa bits
            self.bits, self.eps, self.max = 16, 2.0 ** -7, float(np.float32(3.3895313892515355e38))
            self.tiny = self.smallest_normal = 2.0 ** -126
        else:
            info = np.finfo(d._np)
            self.bits = info.bits
            self.eps = float(info.eps)
            self.max = float(info.max)
            self.tiny = self.smallest_normal = float(info.tiny)
        # Decimal digits the dtype holds: 10 ** -floor(-log10(eps)), as torch gives it.
        self.resolution = 10.0 ** -math.floor(-math.log10(self.eps))
        self.min = -self.max
        self.dtype = d.name

    def __eq__(self, other):
        return isinstance(other, finfo) and self.dtype == other.dtype

    def __hash__(self):
        return hash(("finfo", self.dtype))

    def __repr__(self):
        return (f"finfo(resolution={_g(self.resolution)}, min={_g(self.min)}, "
                f"max={_g(self.max)}, eps={_g(self.eps)}, "
                f"smallest_normal={_g(self.smallest_normal)}, tiny={_g(self.tiny)}, "
                f"dtype={self.dtype})")

    __str__ = __repr__


class iinfo:
    """Machine limits of an integer dtype (torch.iinfo)."""

    def __init__(self, type):
        d = type
        if not isinstance(d, _dtypes.dtype) or d.is_floating_point:
            raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo to "
                            "handle 'torch.iinfo'")
        if d is _dtypes.bool_:
            raise TypeError("torch.bool is not supported by torch.iinfo")
        info = np.iinfo(d._np)
        self.bits, self.min, self.max = info.bits, int(info.min), int(info.max)
        self.dtype = d.name

    def __eq__(self, other):
        return isinstance(other, iinfo) and self.dtype == other.dtype

    def __hash__(self):
        return hash(("iinfo", self.dtype))

    def __repr__(self):
        return f"iinfo(min={_g(self.min)}, max={_g(self.max)}, dtype={self.dtype})"

    __str__ = __repr__


def can_cast(from_, to):
    """Whether torch's casting rules allow `from_` to `to` in an in-place op (torch.can_cast):
    not a floating type to an integral one, nor a non-bool to bool."""
    for arg, position, value in (("from", 1, from_), ("to", 2, to)):
        if not isinstance(value, _dtypes.dtype):
            raise TypeError(f"can_cast(): argument '{arg}' (position {position}) must be "
                            f"torch.dtype, not {type(value).__name__}")
    if from_.is_floating_point and not to.is_floating_point:
        return False
    if from_ is not _dtypes.bool_ and to is _dtypes.bool_:
        return False
    return True


def _combine(higher, lower):
    # ATen's combine_categories: a higher category wins unless promotion is needed to hold both.
    if higher is None:
        return lower
    if lower is None:
        return higher
    if higher.is_floating_point:
        return higher
    if higher is _dtypes.bool_ or lower.is_floating_point:
        return _dtypes.promote_types(higher, lower)
    return higher


def result_type(tensor1, tensor2):
    """The dtype of an arithmetic op on the two (torch.result_type): tensors with dimensions
    decide first, then 0-dim tensors, then Python numbers, each only when of a higher category."""
    from ._tensor import Tensor  # noqa: PLC0415 - import cycle
    slots = [None, None, None]  # dimensioned, zero-dim, number
    for x in (tensor1, tensor2):
        if isinstance(x, Tensor):
            slot, d = (0 if x.dim() > 0 else 1), x.dtype
        elif isinstance(x, bool):
            slot, d = 2, _dtypes.bool_
        elif isinstance(x, int):
            slot, d = 2, _dtypes.int64
        elif isinstance(x, float):
            slot, d = 2, _dtypes.get_default_dtype()
        else:
            raise TypeError("result_type() received an invalid combination of arguments - got "
                            f"({type(tensor1).__name__}, {type(tensor2).__name__})")
        slots[slot] = d if slots[slot] is None else _dtypes.promote_types(slots[slot], d)
    return _combine(slots[0], _combine(slots[1], slots[2]))
