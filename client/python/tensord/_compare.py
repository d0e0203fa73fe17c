"""Comparison helpers with torch's rules and errors: isclose, allclose, equal — one server op
each (engine/ops/compare_ops.cc), so they run on every device and their errors are raised at
the call.
"""


def _tensor_other(op, other):
    from ._tensor import Tensor  # noqa: PLC0415 - import cycle
    if not isinstance(other, Tensor):
        raise TypeError(f"{op}(): argument 'other' (position 2) must be Tensor, not "
                        f"{type(other).__name__}")


def _tolerance(rtol, atol, equal_nan):
    return {"rtol": float(rtol), "atol": float(atol), "equal_nan": bool(equal_nan)}


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """|input - other| <= atol + rtol * |other|, elementwise: one server op
    (engine/ops/compare_ops.cc), ATen's composition."""
    _tensor_other("isclose", other)
    return input._op("isclose", [other], _tolerance(rtol, atol, equal_nan))


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Whether every element is close (torch.allclose): a Python bool, so it waits."""
    _tensor_other("allclose", other)
    return bool(input._op("allclose", [other], _tolerance(rtol, atol, equal_nan)).item())


def equal(input, other):
    """True when both have the same sizes and the same elements (torch.equal): waits."""
    _tensor_other("equal", other)
    return bool(input._op("equal", [other]).item())
