"""Comparison helpers with torch's rules and errors: isclose, allclose, equal.

Each is the composition ATen itself uses (at::isclose), of ops the server plans and runs, so
they run on every device and their errors are raised at the call.
"""
from . import _dtypes


def _type_name(d):
    return d._legacy


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """|input - other| <= atol + rtol * |other|, elementwise (torch.isclose)."""
    from ._tensor import Tensor  # noqa: PLC0415 - import cycle
    if not isinstance(other, Tensor):
        raise TypeError(f"isclose(): argument 'other' (position 2) must be Tensor, not "
                        f"{type(other).__name__}")
    if input.dtype is not other.dtype:
        raise RuntimeError(f"{_type_name(input.dtype)} did not match {_type_name(other.dtype)}")
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol:g}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol:g}")
    # In place where ATen works in place, so that shapes it refuses are refused the same way.
    close = input == other
    if equal_nan and input.dtype.is_floating_point:
        both_nan = input.isnan()
        both_nan &= other.isnan()
        close |= both_nan
    if rtol == 0 and atol == 0:
        return close
    # Integral and bool inputs measure their error in the default dtype, as torch does (an
    # unsigned difference would wrap).
    a, b = input, other
    if not input.dtype.is_floating_point:
        a, b = input.float(), other.float()
    allowed = (b * rtol).abs() + atol
    actual = (a - b).abs()
    within = actual.isfinite()
    within &= actual <= allowed
    close |= within
    return close


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Whether every element is close (torch.allclose): a Python bool."""
    return bool(isclose(input, other, rtol, atol, equal_nan).all().item())


def equal(input, other):
    """True when both have the same sizes and the same elements (torch.equal)."""
    from ._tensor import Tensor  # noqa: PLC0415 - import cycle
    if not isinstance(other, Tensor):
        raise TypeError(f"equal(): argument 'other' (position 2) must be Tensor, not "
                        f"{type(other).__name__}")
    if tuple(input.shape) != tuple(other.shape):
        return False
    return bool((input == other).all().item())
