"""Factories and joins: tensors made from sizes, values, Python data or other tensors (torch's
zeros, full, arange, tensor, cat, stack, rand, …). Each takes an optional `session=`; without
one it uses the innermost `with session:` block's session, else the default session
(_session.current_session).
"""
import sys

import numpy as np

from ._out import check_factory_dtype, check_no_overlap, write_out
from . import _dtypes
from . import _memory_format as _mf
from . import _spaced
from ._ops import (keeps_subclass, TensorBase, _int, _int_list, _is_scalar, _op, _op_on, _py_scalar,
                   new_tensor)
from ._random import _of as _random_of
from ._session import current_session
from .autograd import graph as _graph

def _session(session):
    return session or current_session()


def _dtype_arg(dtype, default=None):
    if dtype is None:
        return default
    dtype = _dtypes.from_python_type(dtype)
    if isinstance(dtype, _dtypes.dtype):
        return dtype
    raise TypeError(f"argument 'dtype' must be torch.dtype, not {type(dtype).__name__}")


def _device_arg(device):
    """The device attribute of a factory, as torch normalises it: None (the session's device),
    else the device's text ("cpu", "cuda", "cuda:1"; an int n is "cuda:n"). The server resolves
    "cuda" to cuda:0 and fails an op naming a device it does not have."""
    if device is None:
        return None
    return str(_dtypes.as_device(device))


def _factory(name, size, dtype, device, session, extra=None):
    s = _session(session)
    attrs = {"size": _int_list(size, name, "size")}
    if extra:
        attrs.update(extra)
    if dtype is not None:
        attrs["dtype"] = _dtype_arg(dtype)
    return _op_on(s, _add_device(attrs, device), name, [], attrs)


def _add_device(attrs, device):
    """Sets the device attribute when a device is given; returns it (or None)."""
    d = _device_arg(device)
    if d is None:
        return None
    attrs["device"] = _dtypes.device(d)
    return attrs["device"]


def _into(out, dtype, device, session):
    """A factory's dtype, device and session when it writes into `out`: out's, unless given."""
    if out is None:
        return dtype, device, session
    check_factory_dtype(dtype, out)
    return out.dtype, out.device, out._session


def empty(*size, out=None, dtype=None, device=None, session=None, requires_grad=False,
          memory_format=None, layout=None):
    """torch.empty: a new tensor of `size`, laid out in `memory_format` (contiguous_format,
    channels_last for 4-d sizes, channels_last_3d for 5-d ones)."""
    _mf.check_layout(layout, "empty")
    fmt = _mf.check_memory_format(memory_format, "empty")
    dtype, device, session = _into(out, dtype, device, session)
    if fmt is None or fmt is _mf.contiguous_format:
        return write_out(_factory("empty", size, dtype, device, session), out, "empty")
    shape = _int_list(size, "empty", "size")
    return write_out(empty_strided(shape, _mf.format_strides(shape, fmt), dtype=dtype,
                                   device=device, session=session), out, "empty")


def zeros(*size, out=None, dtype=None, device=None, session=None, requires_grad=False,
          layout=None):
    _mf.check_layout(layout, "zeros")
    dtype, device, session = _into(out, dtype, device, session)
    return write_out(_factory("zeros", size, dtype, device, session), out, "zeros")


def ones(*size, out=None, dtype=None, device=None, session=None, requires_grad=False,
         layout=None):
    _mf.check_layout(layout, "ones")
    dtype, device, session = _into(out, dtype, device, session)
    return write_out(_factory("ones", size, dtype, device, session), out, "ones")


def full(size, fill_value, dtype=None, device=None, session=None, requires_grad=False,
         layout=None, *, out=None):
    _mf.check_layout(layout, "full")
    if isinstance(fill_value, TensorBase):
        fill_value = fill_value.item()
    dtype, device, session = _into(out, dtype, device, session)
    return write_out(_factory("full", (size,), dtype, device, session,
                              {"fill_value": _py_scalar(fill_value)}), out, "full")


def empty_strided(size, stride, dtype=None, device=None, session=None, requires_grad=False,
                  layout=None):
    _mf.check_layout(layout, "empty_strided")
    return _factory("empty_strided", (size,), dtype, device, session,
                    {"stride": _int_list((stride,), "empty_strided", "stride")})


def _like_strides(input, memory_format, layout, fn):
    """The strides of `fn`'s result for `input` and `memory_format` (None: preserve_format), or
    None when they are the contiguous ones its plain factory gives."""
    _mf.check_layout(layout, fn)
    fmt = _mf.check_memory_format(memory_format, fn)
    shape = list(input.shape)
    strides = _mf.like_strides(shape, list(input.stride()), fmt)
    return None if strides == _mf.contiguous_strides(shape) else strides


def _like(name, t, dtype, device, memory_format, layout, fill=None):
    """torch's {name}_like: made by the {name} factory when the result is contiguous, else as
    an empty_strided tensor of the result's strides filled with `fill` (None: left empty)."""
    strides = _like_strides(t, memory_format, layout, name + "_like")
    dtype = dtype or t.dtype
    device = t.device if device is None else device
    if strides is None:
        extra = {"fill_value": _py_scalar(fill)} if name == "full" else None
        return _factory(name, (tuple(t.shape),), dtype, device, t._session, extra)
    out = empty_strided(tuple(t.shape), strides, dtype=dtype, device=device, session=t._session)
    return out if fill is None else out.fill_(fill)


def empty_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
               memory_format=None):
    """torch.empty_like: laid out as `input` (preserve_format) or in `memory_format`."""
    return _like("empty", input, dtype, device, memory_format, layout)


def zeros_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
               memory_format=None):
    """torch.zeros_like: laid out as `input` (preserve_format) or in `memory_format`."""
    return _like("zeros", input, dtype, device, memory_format, layout, 0)


def ones_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
              memory_format=None):
    """torch.ones_like: laid out as `input` (preserve_format) or in `memory_format`."""
    return _like("ones", input, dtype, device, memory_format, layout, 1)


def full_like(input, fill_value, *, dtype=None, layout=None, device=None, requires_grad=False,
              memory_format=None):
    """torch.full_like: laid out as `input` (preserve_format) or in `memory_format`."""
    return _like("full", input, dtype, device, memory_format, layout, fill_value)


def arange(start=None, end=None, step=1, dtype=None, device=None, session=None,
           requires_grad=False, layout=None, *, out=None):
    if out is not None:
        dtype, device, session = _into(out, dtype, device, session)
        return write_out(arange(start, end, step, dtype=dtype, device=device, session=session,
                                layout=layout), out, "arange")
    _mf.check_layout(layout, "arange")
    s = _session(session)
    if start is None:  # arange(end=3)
        if end is None:
            raise TypeError("arange() missing required argument 'end'")
        start = 0
    elif end is None:
        start, end = 0, start
    attrs = {"start": _scalar_arg(start), "end": _scalar_arg(end), "step": _scalar_arg(step)}
    if dtype is not None:
        attrs["dtype"] = _dtype_arg(dtype)
    return _op_on(s, _add_device(attrs, device), "arange", [], attrs)


def _scalar_arg(x, fn="arange"):
    if isinstance(x, TensorBase):
        x = x.item()
    if not _is_scalar(x):
        raise TypeError(f"{fn}(): argument must be a number, not {type(x).__name__}")
    return _py_scalar(x)


def eye(n, m=None, dtype=None, device=None, session=None, requires_grad=False, layout=None):
    _mf.check_layout(layout, "eye")
    n = _int(n, "eye", "n")
    m = n if m is None else _int(m, "eye", "m")
    if n < 0:
        raise RuntimeError(f"n must be greater or equal to 0, got {n}")
    if m < 0:
        raise RuntimeError(f"m must be greater or equal to 0, got {m}")
    out = zeros(n, m, dtype=dtype, device=device, session=session)
    out.diagonal().fill_(1)
    return out


def linspace(start, end, steps, dtype=None, device=None, session=None, requires_grad=False,
             layout=None, *, out=None):
    if out is not None:
        dtype, device, session = _into(out, dtype, device, session)
        return write_out(linspace(start, end, steps, dtype=dtype, device=device,
                                  session=session, layout=layout), out, "linspace")
    _mf.check_layout(layout, "linspace")
    steps = _int(steps, "linspace", "steps")
    if steps < 0:
        raise RuntimeError("linspace(): number of steps must be non-negative")
    d = _dtype_arg(dtype, _dtypes.get_default_dtype())
    values = _spaced.linspace_values(_scalar_arg(start, "linspace"), _scalar_arg(end, "linspace"),
                                     steps, d)
    return _upload_as(values, d, device, _session(session))


def _c_order(arr, dtype=None):
    """A C-contiguous array of the same shape (np.ascontiguousarray turns 0-d into 1-d)."""
    arr = np.asarray(arr, dtype=dtype)
    return arr if arr.flags.c_contiguous else np.ascontiguousarray(arr).reshape(arr.shape)


def _infer_python_dtype(arr):
    kind = arr.dtype.kind
    if kind == "b":
        return _dtypes.bool_
    if kind in "iu":
        return _dtypes.int64
    if kind == "f":
        return _dtypes.get_default_dtype()
    raise TypeError(f"tensord: can't make a tensor of {arr.dtype} values")


_PYTHON_NUMBERS = (float, int, bool)


def _sequence_leaves(seq):
    """torch's reading of nested lists: the dtype is every leaf's promoted (a Python float the
    default dtype, an int int64, a bool bool; a numpy scalar or array, or a tensor, its own);
    a tensor is a leaf, a number (a one-element one; its value is read here). Returns the
    lists with tensors replaced by their values, and the dtype (None: no leaves)."""
    kinds = set(map(type, seq))
    result = None
    for kind in kinds.intersection(_PYTHON_NUMBERS):
        result = _dtypes.promote_types(result, _python_number_dtype(kind)) if result else \
            _python_number_dtype(kind)
    if kinds.issubset(_PYTHON_NUMBERS):
        return seq, result
    out = []
    for item in seq:
        found = None
        if isinstance(item, TensorBase):
            found = item.dtype
            if item.numel() != 1:
                if item.dtype.is_floating_point:
                    raise ValueError("only one element tensors can be converted to Python "
                                     "scalars")
                raise TypeError("only integer tensors of a single element can be converted to "
                                "an index")
            item = item.item()
        elif isinstance(item, (np.ndarray, np.generic)):
            found = _dtypes.from_numpy_dtype(item.dtype) if item.dtype.kind in "biuf" else None
        elif isinstance(item, (list, tuple)):
            item, found = _sequence_leaves(item)
        if found is not None:
            result = found if result is None else _dtypes.promote_types(result, found)
        out.append(item)
    return out, result


def _python_number_dtype(kind):
    if kind is bool:
        return _dtypes.bool_
    return _dtypes.int64 if kind is int else _dtypes.get_default_dtype()


def _is_sequence(x):
    return isinstance(x, (list, tuple, np.ndarray, TensorBase))


def _raise_ragged(data):
    """torch's error for nested sequences that are not a box (numpy refused them): the sizes
    are the first element's at each depth, and the first sequence that differs is named."""
    sizes, seq = [], data
    while _is_sequence(seq):
        sizes.append(len(seq))
        if len(seq) == 0:
            break
        seq = seq[0]
    seen_float = False

    def walk(obj, dim):
        nonlocal seen_float
        if dim == len(sizes):
            if _is_sequence(obj):
                raise TypeError("must be real number, not list" if seen_float else
                                "'list' object cannot be interpreted as an integer")
            seen_float = seen_float or isinstance(obj, float)
            return
        if not _is_sequence(obj):
            raise TypeError("not a sequence")
        if len(obj) != sizes[dim]:
            raise ValueError(f"expected sequence of length {sizes[dim]} at dim {dim} "
                             f"(got {len(obj)})")
        for item in obj:
            walk(item, dim + 1)

    walk(data, 0)


def tensor(data, dtype=None, device=None, session=None, requires_grad=False, pin_memory=False):
    """A new tensor holding a copy of `data` (nested lists, numbers, numpy arrays, tensors)."""
    if isinstance(data, TensorBase):  # a copy outside the graph, as torch's
        return data.detach().to(device=device, dtype=_dtype_arg(dtype), copy=True)
    d = _dtype_arg(dtype)
    if isinstance(data, np.generic):  # a numpy scalar keeps its dtype, as an array does
        data = np.asarray(data)
    if isinstance(data, (list, tuple)):
        data, inferred = _sequence_leaves(data)
        d = d or inferred
    if isinstance(data, np.ndarray):
        _check_numpy_layout(data)
        arr = data
        if d is None:
            d = _dtypes.from_numpy_dtype(arr.dtype)
    else:
        try:
            arr = np.array(data)
        except ValueError:
            _raise_ragged(data)
            raise
        if arr.dtype == object or (arr.dtype.kind == "u" and arr.size and
                                   int(arr.max()) > np.iinfo(np.int64).max):
            if arr.dtype.kind == "u" or any(isinstance(x, int) for x in arr.flat):
                raise RuntimeError("Overflow when unpacking long")  # beyond int64, as torch
            bad = data if arr.ndim == 0 else next(x for x in arr.flat if not _is_scalar(x))
            raise RuntimeError(f"Could not infer dtype of {type(bad).__name__}")
        if arr.dtype.kind not in "biuf":
            name = "str" if arr.dtype.kind in "US" else arr.dtype.name
            raise TypeError(f"new(): invalid data type '{name}'")
        if d is None:
            d = _infer_python_dtype(arr)
        _check_fits(arr, d)
    return _upload_as(arr, d, _device_arg(device), _session(session))


def _check_fits(arr, d):
    """torch's check of Python numbers made into an integer dtype: a value outside the type (a
    NaN, or beyond its largest magnitude for an unsigned type, where -1 is taken as 255) is a
    RuntimeError. numpy arrays wrap instead, as torch's do."""
    if not arr.size or d.is_floating_point or d is _dtypes.bool_ or arr.dtype.kind not in "iuf":
        return
    info = np.iinfo(d._np)
    lo, hi = arr.min(), arr.max()
    unsigned = info.min == 0
    if (arr.dtype.kind == "f" and np.isnan(arr).any()) or hi > info.max or \
            lo < (-info.max if unsigned else info.min):
        raise RuntimeError(f"value cannot be converted to type {np.dtype(d._np).name} without overflow")


def _upload(arr, d, device, s):
    """Uploads C-ordered `arr` (already in dtype d's numpy type) onto `device` (None: the
    session's): a new tensor."""
    return new_tensor(s, *s.upload(arr, arr.shape, d,
                                   device=None if device is None else _dtypes.as_device(device)))


def _upload_as(arr, d, device, s):
    if d is _dtypes.bfloat16:
        source = _c_order(arr, np.float64 if arr.dtype == np.float64 else np.float32)
        return _upload(source, _dtypes.from_numpy_dtype(source.dtype), device, s).to(d)
    if arr.dtype.kind == "f" and d._np.kind in "iub" and d is not _dtypes.bool_:
        arr = np.trunc(arr)
    with np.errstate(over="ignore"):  # 1e40 as float32 is inf, as torch makes it
        source = _c_order(arr.astype(d._np, copy=False))
    return _upload(source, d, device, s)


def as_tensor(data, dtype=None, device=None, session=None):
    if isinstance(data, TensorBase):
        return data.to(device=device, dtype=_dtype_arg(dtype))
    return tensor(data, dtype=dtype, device=device, session=session)


def from_numpy(ndarray, session=None):
    """A tensor with a copy of the array's values and dtype (the tensor lives on the server, so
    unlike torch.from_numpy it does not share the array's memory)."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    _check_numpy_layout(ndarray)
    d = _dtypes.from_numpy_dtype(ndarray.dtype)
    return _upload(_c_order(ndarray), d, None, _session(session))


def _check_numpy_layout(arr):
    """torch's refusals of an array it cannot wrap: negative strides, a foreign byte order."""
    if any(st < 0 for st in arr.strides):
        raise ValueError("At least one stride in the given numpy array is negative, and tensors "
                         "with negative strides are not currently supported. (You can probably "
                         "work around this by making a copy of your array  with array.copy().) ")
    if arr.dtype.byteorder == ">" or (arr.dtype.byteorder == "=" and sys.byteorder == "big"):
        raise ValueError("given numpy array has byte order different from the native byte "
                         "order. Conversion between byte orders is currently not supported.")


def frombuffer(buffer, dtype, count=-1, offset=0, session=None):
    d = _dtype_arg(dtype)
    arr = np.frombuffer(buffer, dtype=d._np, count=count, offset=offset)
    return _upload(arr, d, None, _session(session))


def from_file(filename, shared=None, size=0, *, dtype=None, layout=None, device=None,
              pin_memory=False, requires_grad=False, session=None):
    """torch.from_file: the first `size` elements of dtype (the default dtype if None) stored
    in the file, read into a new tensor. shared=True asks torch to map the file so that writes
    to the tensor reach it; a tensord tensor lives on the server, so that mode is refused."""
    d = _dtype_arg(dtype) or _dtypes.get_default_dtype()
    if shared:
        raise RuntimeError("tensord: from_file(shared=True) maps the file into the process that "
                           "holds the tensor, which is the server; read it with shared=False")
    need = int(size) * d.itemsize
    try:
        with open(filename, "rb") as f:
            raw = f.read(need)
    except OSError as e:
        raise RuntimeError(f"unable to open file <{filename}> in read-only mode: {e.strerror} "
                           f"({e.errno})") from None
    if len(raw) < need:
        raise RuntimeError(f"file <{filename}> size is smaller than the required mapping size "
                           f"<{need}>")
    t = frombuffer(raw, d, session=session) if need else empty(0, dtype=d, session=session)
    if device is not None:
        t = t.to(device)
    return t.requires_grad_() if requires_grad else t


def _tensors_arg(tensors, op):
    if isinstance(tensors, TensorBase) or not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{op}(): argument 'tensors' must be tuple of Tensors, not "
                        f"{type(tensors).__name__}")
    for i, t in enumerate(tensors):
        if not isinstance(t, TensorBase):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got "
                            f"{type(t).__name__}")
    return list(tensors)


def cat(tensors, dim=0, out=None):
    """torch.cat: one server op (engine/ops/join_ops.cc)."""
    tensors = _tensors_arg(tensors, "cat")
    if not tensors:
        raise RuntimeError("torch.cat(): expected a non-empty list of Tensors")
    check_no_overlap(out, tensors)
    joined = _op(tensors[0]._session, "cat", tensors, {"dim": _int(dim, "cat", "dim")})
    return write_out(joined, out, "cat")


concat = cat


concatenate = cat


def stack(tensors, dim=0, out=None):
    """torch.stack: one server op (engine/ops/join_ops.cc)."""
    tensors = _tensors_arg(tensors, "stack")
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    check_no_overlap(out, tensors)
    joined = _op(tensors[0]._session, "stack", tensors, {"dim": _int(dim, "stack", "dim")})
    return write_out(joined, out, "stack")


def hstack(tensors):
    tensors = _tensors_arg(tensors, "hstack")
    tensors = [t.reshape(1) if t.dim() == 0 else t for t in tensors]
    return cat(tensors, 0 if tensors[0].dim() == 1 else 1)


def vstack(tensors):
    tensors = _tensors_arg(tensors, "vstack")
    return cat([t.reshape(1, -1) if t.dim() < 2 else t for t in tensors], 0)


def meshgrid(*tensors, indexing=None):
    """torch.meshgrid: every output is a view (an expand) of one input, as in torch."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    indexing = indexing or "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f"torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but received: {indexing}")
    for t in tensors:
        if t.dim() > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {t}")
    if any(t.dtype is not tensors[0].dtype for t in tensors):
        raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    if any(t.device != tensors[0].device for t in tensors):
        raise RuntimeError("meshgrid expects all tensors to have the same device")
    ts = [t.reshape(-1) if t.dim() == 0 else t for t in tensors]
    swap = indexing == "xy" and len(ts) >= 2
    if swap:
        ts[0], ts[1] = ts[1], ts[0]
    sizes = [t.numel() for t in ts]
    outs = []
    for i, t in enumerate(ts):
        shape = [1] * len(ts)
        shape[i] = -1
        outs.append(t.view(shape).expand(sizes))
    if swap:
        outs[0], outs[1] = outs[1], outs[0]
    return tuple(outs)


def cartesian_prod(*tensors):
    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid(*tensors, indexing="ij")
    return stack([g.reshape(-1) for g in grids], dim=1)


def _numel(shape):
    return int(np.prod(shape, dtype=np.int64)) if shape else 1


def _random_factory(name, size, dtype, device, session, extra=None, generator=None):
    s = _session(session)
    shape = _int_list(size, name, "size")
    attrs = {"size": shape, **_random_of(generator).take(_numel(shape))}
    if dtype is not None:
        attrs["dtype"] = dtype
    if extra:
        attrs.update(extra)
    return _op_on(s, _add_device(attrs, device), name, [], attrs)


def rand(*size, dtype=None, device=None, session=None, generator=None, requires_grad=False,
         layout=None):
    _mf.check_layout(layout, "rand")
    return _random_factory("rand", size, dtype, device, session, generator=generator)


def randn(*size, dtype=None, device=None, session=None, generator=None, requires_grad=False,
          layout=None):
    _mf.check_layout(layout, "randn")
    return _random_factory("randn", size, dtype, device, session, generator=generator)


def randint(low=None, high=None, size=None, dtype=None, device=None, session=None,
            generator=None, requires_grad=False, layout=None):
    _mf.check_layout(layout, "randint")
    if low is None:  # randint(high=4, size=(2,))
        if high is None:
            raise TypeError("randint() missing required argument 'high'")
        low = 0
    if size is None:
        if high is None or not isinstance(high, (tuple, list, _dtypes.Size)):
            raise TypeError("randint() missing required argument 'size'")
        low, high, size = 0, low, high
    elif high is None:
        low, high = 0, low
    return _random_factory("randint", (size,), dtype, device, session,
                           {"low": int(low), "high": int(high)}, generator)


def _random_like(fn, input, memory_format, layout, make):
    """A random *_like result: make()'s contiguous tensor of input's shape, copied into the
    result's strides when preserve_format or `memory_format` lays it out otherwise."""
    strides = _like_strides(input, memory_format, layout, fn)
    out = make()
    if strides is None:
        return out
    return empty_strided(tuple(input.shape), strides, dtype=out.dtype, device=out.device,
                         session=input._session).copy_(out)


def _like_device(input, device):
    return input.device if device is None else device


def rand_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
              memory_format=None):
    """torch.rand_like: laid out as `input` (preserve_format) or in `memory_format`."""
    return _random_like("rand_like", input, memory_format, layout, lambda: rand(
        tuple(input.shape), dtype=dtype or input.dtype, device=_like_device(input, device),
        session=input._session))


def randn_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
               memory_format=None):
    """torch.randn_like: laid out as `input` (preserve_format) or in `memory_format`."""
    return _random_like("randn_like", input, memory_format, layout, lambda: randn(
        tuple(input.shape), dtype=dtype or input.dtype, device=_like_device(input, device),
        session=input._session))


def randint_like(input, low, high=None, *, dtype=None, layout=None, device=None,
                 requires_grad=False, memory_format=None):
    """torch.randint_like(input, high) or (input, low, high): laid out as `input`
    (preserve_format) or in `memory_format`."""
    return _random_like("randint_like", input, memory_format, layout, lambda: randint(
        low, high, tuple(input.shape), dtype=dtype or input.dtype,
        device=_like_device(input, device), session=input._session))


def randperm(n, dtype=None, device=None, session=None, generator=None, requires_grad=False,
             layout=None):
    """A permutation of range(n): sorted random keys drawn from the generator's stream (so
    manual_seed makes it reproducible)."""
    _mf.check_layout(layout, "randperm")
    g = _random_of(generator).take(n)
    rng = np.random.default_rng([g["seed"], g["offset"]])
    perm = rng.permutation(int(n)).astype(np.int64)
    t = tensor(perm, device=device, session=session)
    return t if dtype is None else t.to(dtype)


_graph.honour_requires_grad_in(globals())


# torch's *_like functions return the input's Tensor subclass, as every op on one does.
for _name in ("empty_like", "zeros_like", "ones_like", "full_like", "rand_like", "randn_like",
              "randint_like"):
    globals()[_name] = keeps_subclass(globals()[_name])
del _name
