"""torch.testing for tensord tensors: assert_close with torch's tolerances and messages."""
import collections.abc
import math

import numpy as np

from . import _dtypes

__all__ = ["assert_close"]

# torch.testing's defaults: (rtol, atol) per dtype; other dtypes compare exactly.
_TOLERANCES = {_dtypes.float16: (1e-3, 1e-5), _dtypes.bfloat16: (1.6e-2, 1e-5),
               _dtypes.float32: (1.3e-6, 1e-5), _dtypes.float64: (1e-7, 1e-7)}


def _tolerances(dtypes, rtol, atol):
    if (rtol is None) != (atol is None):
        raise ValueError(f"Both 'rtol' and 'atol' must be either specified or omitted, but got "
                         f"no {'rtol' if rtol is None else 'atol'}.")
    if rtol is not None:
        return rtol, atol
    pairs = [_TOLERANCES.get(d, (0.0, 0.0)) for d in dtypes]
    return max(p[0] for p in pairs), max(p[1] for p in pairs)


def _diff_msg(kind, diff, idx, tol, equality):
    msg = (f"{kind.title()} difference: {diff}" if idx is None
           else f"Greatest {kind} difference: {diff} at index {idx}")
    return msg + ("" if equality else f" (up to {tol} allowed)") + "\n"


def _mismatch_msg(identifier, extra, abs_diff, abs_idx, rel_diff, rel_idx, rtol, atol):
    equality = rtol == 0 and atol == 0
    msg = f"{identifier} are not {'equal' if equality else 'close'}!\n\n"
    if extra:
        msg += extra.strip() + "\n"
    msg += _diff_msg("absolute", abs_diff, abs_idx, atol, equality)
    msg += _diff_msg("relative", rel_diff, rel_idx, rtol, equality)
    return msg.strip()


def _close(a, b, rtol, atol, equal_nan):
    """torch.isclose on numpy arrays already promoted (float64 or int64)."""
    with np.errstate(invalid="ignore", over="ignore"):
        close = a == b
        if equal_nan and a.dtype.kind == "f":
            close |= np.isnan(a) & np.isnan(b)
        if rtol == 0 and atol == 0:
            return close
        fa, fb = (a, b) if a.dtype.kind == "f" else (a.astype(np.float32), b.astype(np.float32))
        actual = np.abs(fa - fb)
        return close | (np.isfinite(actual) & (actual <= atol + np.abs(rtol * fb)))


def _compare_tensors(actual, expected, rtol, atol, equal_nan, check_device, check_dtype,
                     check_stride):
    for name, a, b in (("shape", actual.shape, expected.shape),
                       ("device", actual.device, expected.device) if check_device else (None,) * 3,
                       ("dtype", actual.dtype, expected.dtype) if check_dtype else (None,) * 3,
                       ("stride()", actual.stride(), expected.stride()) if check_stride
                       else (None,) * 3):
        if name is not None and a != b:
            raise AssertionError(f"The values for attribute '{name}' do not match: {a} != {b}.")
    rtol, atol = _tolerances((actual.dtype, expected.dtype), rtol, atol)
    floating = actual.dtype.is_floating_point or expected.dtype.is_floating_point
    # Both in the widest type of their kind, as torch.testing compares them.
    a = _numpy(actual).astype(np.float64 if floating else np.int64)
    b = _numpy(expected).astype(np.float64 if floating else np.int64)
    matches = _close(a, b, rtol, atol, equal_nan)
    if matches.all():
        return
    if a.ndim == 0:
        abs_diff = _item(np.abs(a - b))
        with np.errstate(divide="ignore", invalid="ignore"):
            rel_diff = _item(_relative(np.abs(a - b), b, floating))
        raise AssertionError(_mismatch_msg("Scalars", None, abs_diff, None, rel_diff, None,
                                           rtol, atol))
    mismatches = ~matches
    total = int(mismatches.sum())
    extra = f"Mismatched elements: {total} / {mismatches.size} ({total / mismatches.size:.1%})"
    flat_a, flat_b, flat_match = a.reshape(-1), b.reshape(-1), matches.reshape(-1)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        abs_diff = np.abs(flat_a - flat_b)
        abs_diff[flat_match] = 0
        rel_diff = _relative(abs_diff, flat_b, floating)
        rel_diff[flat_match] = 0
    ai, ri = _argmax(abs_diff), _argmax(rel_diff)
    raise AssertionError(_mismatch_msg(
        "Tensor-likes", extra, _item(abs_diff[ai]), tuple(int(i) for i in np.unravel_index(ai, a.shape)),
        _item(rel_diff[ri]), tuple(int(i) for i in np.unravel_index(ri, a.shape)), rtol, atol))


def _relative(abs_diff, b, floating):
    # torch divides int64 by int64 into the default dtype (float32).
    if floating:
        return abs_diff / np.abs(b)
    return abs_diff.astype(np.float32) / np.abs(b).astype(np.float32)


def _argmax(values):
    """torch.max's index: the first NaN if any, else the first maximum."""
    if values.dtype.kind == "f":
        nan = np.flatnonzero(np.isnan(values))
        if nan.size:
            return int(nan[0])
    return int(np.argmax(values))


def _item(x):
    return x.item() if hasattr(x, "item") else x


def _numpy(t):
    if t.dtype is _dtypes.bfloat16:
        t = t.float()
    return t.detach().cpu().numpy() if hasattr(t, "detach") else t.numpy()


def _compare_numbers(actual, expected, rtol, atol, equal_nan):
    if isinstance(actual, float) or isinstance(expected, float):
        rtol, atol = _tolerances((_dtypes.float64,), rtol, atol)
    else:
        rtol, atol = _tolerances((_dtypes.int64,), rtol, atol)
    if actual == expected or (equal_nan and isinstance(actual, float) and
                              isinstance(expected, float) and math.isnan(actual) and
                              math.isnan(expected)):
        return
    diff = abs(actual - expected)
    if not (rtol == 0 and atol == 0) and math.isfinite(diff) and diff <= atol + rtol * abs(expected):
        return
    rel = diff / abs(expected) if expected != 0 else math.inf
    raise AssertionError(_mismatch_msg("Scalars", None, diff, None, rel, None, rtol, atol))


def _compare(actual, expected, path, **options):
    from ._tensor import Tensor  # noqa: PLC0415 - import cycle
    try:
        if isinstance(actual, Tensor) and isinstance(expected, Tensor):
            _compare_tensors(actual, expected, options["rtol"], options["atol"],
                             options["equal_nan"], options["check_device"], options["check_dtype"],
                             options["check_stride"])
            return
        if isinstance(actual, (bool, int, float)) and isinstance(expected, (bool, int, float)):
            _compare_numbers(actual, expected, options["rtol"], options["atol"],
                             options["equal_nan"])
            return
    except AssertionError as e:
        if path:
            raise AssertionError(f"{e}\n\nThe failure occurred for item {path}") from None
        raise
    if (isinstance(actual, collections.abc.Sequence) and not isinstance(actual, str) and
            isinstance(expected, collections.abc.Sequence) and not isinstance(expected, str)):
        if len(actual) != len(expected):
            raise AssertionError(f"The length of the sequences mismatch: {len(actual)} != "
                                 f"{len(expected)}")
        for i, (a, b) in enumerate(zip(actual, expected)):
            _compare(a, b, f"{path}[{i}]", **options)
        return
    if isinstance(actual, collections.abc.Mapping) and isinstance(expected, collections.abc.Mapping):
        if set(actual) != set(expected):
            raise AssertionError(f"The keys of the mappings do not match:\n"
                                 f"Missing keys in the actual mapping: "
                                 f"{sorted(set(expected) - set(actual))}\n"
                                 f"Extra keys in the actual mapping: "
                                 f"{sorted(set(actual) - set(expected))}")
        for key in actual:
            _compare(actual[key], expected[key], f"{path}[{key!r}]", **options)
        return
    raise TypeError(f"No comparison pair was able to handle inputs of type {type(actual)} and "
                    f"{type(expected)}.")


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None,
                 equal_nan=False, check_device=True, check_dtype=True, check_layout=True,
                 check_stride=False, msg=None):
    """Asserts that `actual` and `expected` are close (torch.testing.assert_close): tensors,
    Python numbers, and sequences and mappings of them, with torch's default tolerances per
    dtype and its messages."""
    try:
        _compare(actual, expected, "", rtol=rtol, atol=atol, equal_nan=equal_nan,
                 check_device=check_device, check_dtype=check_dtype, check_stride=check_stride)
    except AssertionError as e:
        if msg is not None:
            raise AssertionError(msg(str(e)) if callable(msg) else msg) from None
        raise
