"""torch.linspace and torch.logspace as torch 1.13's CPU kernels compute them, bit for bit.

The values are worked out here, in numpy, and uploaded (logspace's powers are taken on the
server, whose pow is the C library's, as torch's). Each rule below was found by comparing
with torch 1.13 over thousands of random bounds and step counts:

- linspace: the bounds are converted to the dtype first (c10's checked conversion, with its
  overflow error); step = (end - start) / (steps - 1) in the dtype (in double for integer
  dtypes); the first half of the values counts up from start, the rest down from end. The
  kernel's vector body (two 256-bit vectors per iteration, the tail one value at a time) computes
  a vector's first value as one fused multiply-add and its other lanes as first + lane * step.
- logspace: exponent = start + step * i in double from the dtype's start, end and end - start
  (this difference in the dtype too); pow in double; an integer dtype's base is made a float
  first, and its powers beyond int32 (int64 for int64) become the type's lowest value, as
  the x86 conversion makes them. torch 1.13 has no float16 kernel (later versions and CUDA
  have): tensord makes float16 as bfloat16, with float16's rounding.
- One value or none is a fill, with no kernel: any dtype, bool and float16 too.
"""

import math

import numpy as np

from . import _dtypes

# The C++ type names in c10's "value cannot be converted to type T without overflow".
_C_NAMES = {"uint8": "uint8_t", "int8": "int8_t", "int16": "int16_t", "int32": "int",
            "int64": "int64_t", "float16": "at::Half", "bfloat16": "at::BFloat16",
            "float32": "float", "float64": "double"}
_FLOAT_MAX = {"float16": 65504.0, "bfloat16": 3.3895313892515355e38,
              "float32": 3.4028234663852886e38, "float64": math.inf}


def _bound(x, d):
    """c10's Scalar::to<T>: the Python number x as a value of dtype d (an unsigned type takes
    a negative integer modulo 2**bits, a float truncates toward zero into an integer type), or
    torch's RuntimeError where x does not fit."""
    if isinstance(x, bool):
        x = int(x)
    if d.is_floating_point:
        if isinstance(x, float) and not math.isfinite(x):
            return x
        fits = abs(x) <= _FLOAT_MAX[d.name]
    else:
        info = np.iinfo(d._np)
        if isinstance(x, float):
            fits = not math.isnan(x) and info.min <= x <= info.max
        elif info.min == 0:
            fits = -info.max <= x <= info.max
        else:
            fits = info.min <= x <= info.max
    if not fits:
        raise RuntimeError(f"value cannot be converted to type {_C_NAMES[d.name]} without overflow")
    if d.is_floating_point:
        return float(x)
    x = int(x)
    return x % (info.max + 1) if x < 0 and info.min == 0 else x


def _fma(a, b, c):
    """a * b + c with one rounding, elementwise, for float64 arrays: Dekker's exact product
    (Veltkamp's split) and Knuth's two-sum."""
    split = 134217729.0  # 2**27 + 1

    def halves(x):
        t = split * x
        hi = t - (t - x)
        return hi, x - hi
    p = a * b
    ah, al = halves(a)
    bh, bl = halves(b)
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    s = p + c  # p + c == s + t exactly
    bb = s - p
    t = (p - (s - bb)) + (c - bb)
    return np.where(np.isfinite(s) & np.isfinite(p), s + (t + e), p + c)


def _bf16(x):
    """float32 values rounded to the nearest bfloat16 (ties to even), kept as float32."""
    x = np.array(x, np.float32, ndmin=1)
    bits = x.view(np.uint32).astype(np.uint64)
    s16 = np.uint64(16)
    rounded = (bits + np.uint64(0x7FFF) + ((bits >> s16) & np.uint64(1))) >> s16 << s16
    out = rounded.astype(np.uint32).view(np.float32)
    return np.where(np.isnan(x), np.float32(np.nan), out)


def _rounder(d):
    """float32 -> float32 rounding to dtype d's precision (per operation, as c10's Half and
    BFloat16 arithmetic rounds)."""
    if d is _dtypes.bfloat16:
        return _bf16
    if d is _dtypes.float16:
        return lambda x: np.asarray(x, np.float32).astype(np.float16).astype(np.float32)
    return lambda x: np.asarray(x, np.float32)


def _vector_layout(steps, lanes):
    """For each index: the index of the value its lane counts from (its vector's first in the
    kernel's vector body, itself in the scalar tail), and whether that one counts up."""
    i = np.arange(steps)
    body = steps // (2 * lanes) * (2 * lanes)
    first = np.where(i < body, i - i % lanes, i)
    return i, first, first < steps // 2


def linspace_values(start, end, steps, d):
    """The values of torch.linspace(start, end, steps, dtype=d) as a numpy array whose dtype
    uploads as d (bfloat16 as float32 holding bfloat16 values)."""
    np_type = np.float32 if d is _dtypes.bfloat16 else d._np
    if steps <= 1:  # torch fills: no kernel, so no dtype check
        return np.array([bool(start) if d is _dtypes.bool_ else _bound(start, d)] * steps,
                        dtype=np_type)
    if d is _dtypes.bool_:
        raise RuntimeError(f"\"linspace_cpu\" not implemented for '{d._legacy}'")
    st, en = _bound(start, d), _bound(end, d)
    lanes = 32 // d.itemsize
    i, first, up = _vector_layout(steps, lanes)
    count = np.where(up, first, steps - first - 1)
    lane = i - first
    with np.errstate(all="ignore"):
        if not d.is_floating_point:
            step = (float(en) - float(st)) / (steps - 1)
            base = np.trunc(_fma(np.where(up, step, -step), count.astype(np.float64),
                                 np.where(up, float(st), float(en))))
            return np.trunc(base + lane * step).astype(np.int64).astype(np_type)
        if d in (_dtypes.float32, _dtypes.float64):
            work = d._np.type
            s, e = work(st), work(en)
            step = work((e - s) / work(steps - 1))
            signed = np.where(up, step, -step).astype(work)
            origin = np.where(up, s, e).astype(work)
            if work is np.float32:  # the float64 product of two float32s is exact
                base = (signed.astype(np.float64) * count + origin).astype(np.float32)
            else:
                base = _fma(signed, count.astype(np.float64), origin)
            return np.where(lane == 0, base, base + lane.astype(work) * step).astype(work)
        # float16, bfloat16: every operation rounds to the dtype.
        r = _rounder(d)
        s, e = r(np.float32(st)), r(np.float32(en))
        step = r(r(e - s) / r(np.float32(steps - 1)))
        part = r(step * r(count.astype(np.float32)))
        base = np.where(up, r(s + part), r(e - part))
        values = np.where(lane == 0, base, r(base + r(r(lane.astype(np.float32)) * step)))
        return values.astype(np.float16) if d is _dtypes.float16 else values


def logspace_exponents(start, end, steps, d):
    """The exponents (float64) torch.logspace(start, end, steps, dtype=d) raises its base to;
    pow in double, then rounded to d (integer dtypes: the base is a float first)."""
    if steps <= 1:  # torch fills with base ** start: no kernel, so no dtype check
        return np.array([float(start)] * steps, dtype=np.float64)
    if d is _dtypes.bool_:
        raise RuntimeError(f"\"logspace_cpu\" not implemented for '{d._legacy}'")
    st, en = _bound(start, d), _bound(end, d)
    i = np.arange(steps)
    first_half = i < steps // 2
    with np.errstate(all="ignore"):
        if not d.is_floating_point:
            span = int(en) - int(st)  # C++ integer arithmetic: no wrap below int64
            step = span / (steps - 1)
            return np.where(first_half, st + step * i.astype(np.float64),
                            en - step * (steps - i - 1).astype(np.float64))
        if d is _dtypes.float64:
            s, e, span = st, en, en - st
        else:
            r = _rounder(d)

            def as_d(v):
                return float(np.asarray(r(np.float32(v))).reshape(-1)[0])
            s, e = as_d(st), as_d(en)
            span = as_d(np.float32(e) - np.float32(s))
        step = span / (steps - 1)
        return np.where(first_half, s + step * i.astype(np.float64),
                        e - step * (steps - i - 1).astype(np.float64))
