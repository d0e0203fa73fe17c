"""torch's out= argument: one way for every function that takes it."""
import warnings

from . import _dtypes, _errors, _memory_format, return_types


def _overlaps_partly(a, b):
    """torch's get_overlap_status(a, b) == PARTIAL (MemoryOverlap.cpp; the engine's
    GetOverlap): two dense tensors of one storage whose byte ranges intersect, unless they are
    the same elements in the same layout."""
    if a is b or a.numel() == 0 or b.numel() == 0 or a._storage_id() != b._storage_id():
        return False
    for t in (a, b):
        if not _memory_format.is_non_overlapping_and_dense(list(t.shape), list(t.stride())):
            return False  # torch's TOO_HARD: not checked
    a0 = a.storage_offset() * a.element_size()
    b0 = b.storage_offset() * b.element_size()
    a1, b1 = a0 + a.numel() * a.element_size(), b0 + b.numel() * b.element_size()
    if a0 == b0 and a1 == b1:
        return tuple(a.stride()) != tuple(b.stride())
    return a0 < b1 and b0 < a1


def check_no_partial_overlap(out, inputs):
    """torch's assert_no_partial_overlap between an elementwise op's out= and its inputs (the
    out tensor itself, or another view of exactly its elements, may be an input)."""
    if out is None:
        return
    for t in inputs:
        if hasattr(t, "_storage_id") and _overlaps_partly(out, t):
            raise RuntimeError("unsupported operation: some elements of the input tensor and the "
                               "written-to tensor refer to a single memory location. Please "
                               "clone() the tensor before performing the operation.")


def check_no_overlap(out, inputs):
    """torch's assert_no_overlap (cat's, stack's): out may share no element with an input."""
    if out is None:
        return
    for t in inputs:
        if t is out or _overlaps_partly(out, t) or (
                out.numel() and t.numel() and t._storage_id() == out._storage_id() and
                t.storage_offset() == out.storage_offset() and t.stride() == out.stride()):
            raise RuntimeError("unsupported operation: some elements of the input tensor and the "
                               "written-to tensor refer to a single memory location. Please "
                               "clone() the tensor before performing the operation.")


# Functions whose out= must have the result's dtype exactly (torch's kernels that are no
# TensorIterator with casting: matrix products, indexing, softmax, some unary ones, …); the
# others write a result that can_cast into out's dtype, converted.
EXACT_DTYPE = frozenset([
    "mm", "matmul", "dot", "bmm", "mv", "addmm", "inner", "tensordot", "index_select",
    "gather", "softmax", "log_softmax", "tril", "triu", "masked_select", "scatter",
    "scatter_add", "msort", "gelu", "clamp", "clip", "clamp_min", "clamp_max", "nan_to_num",
    "round", "hardshrink", "amax", "amin", "argmax", "argmin", "all", "any", "addcmul",
    "addcdiv", "float_power", "addbmm", "addmv", "baddbmm", "bucketize", "cross", "diag",
    "histc", "index_add", "index_copy", "index_reduce", "logcumsumexp", "multinomial",
    "nanquantile", "narrow_copy", "nonzero", "quantile", "renorm", "searchsorted",
    "take_along_dim", "vdot", "linalg"])


def write_out(result, out, op):
    """`result` written into `out` as torch's out= writes it; returns `out` (`result` when out is
    None). A tuple result goes into a tuple of outs and comes back as the result's type (torch's
    return types). The result's dtype must cast to out's (torch.can_cast: RuntimeError "result
    type Float can't be cast to the desired output type Long"); an empty out is resized to the
    result's shape, one of another shape too, with torch's deprecation warning."""
    if out is None:
        return result
    if isinstance(result, tuple):
        if not isinstance(out, (tuple, list)) or len(out) != len(result):
            raise TypeError(f"{op}(): argument 'out' must be tuple of {len(result)} Tensors, "
                            f"not {type(out).__name__}")
        for r, o in zip(result, out):  # each out of a tuple takes its result's dtype exactly
            if r.dtype is not o.dtype:
                raise RuntimeError(f"Expected out tensor to have dtype "
                                   f"{_dtypes.C10_NAMES[r.dtype.name]}, but got "
                                   f"{_dtypes.C10_NAMES[o.dtype.name]} instead")
        written = [write_out(r, o, op) for r, o in zip(result, out)]
        if not hasattr(result, "_fields"):
            return tuple(written)
        # torch's out= forms return torch.return_types.<name>_out
        return return_types._make(type(result).__name__ + "_out", result._fields)(*written)
    from ._info import can_cast  # noqa: PLC0415 - _info imports the tensor modules
    if op in EXACT_DTYPE and result.dtype is not out.dtype:
        raise RuntimeError(f"Expected out tensor to have dtype "
                           f"{_dtypes.C10_NAMES[result.dtype.name]}, but got "
                           f"{_dtypes.C10_NAMES[out.dtype.name]} instead")
    if not can_cast(result.dtype, out.dtype):
        raise RuntimeError(f"result type {result.dtype._legacy} can't be cast to the desired "
                           f"output type {out.dtype._legacy}")
    shape = tuple(result.shape)
    if tuple(out.shape) != shape:
        if out.numel() != 0:
            warnings.warn(f"An output with one or more elements was resized since it had shape "
                          f"{list(out.shape)}, which does not match the required output shape "
                          f"{list(shape)}. This behavior is deprecated, and in a future PyTorch "
                          f"release outputs will not be resized unless they have zero elements. "
                          f"You can explicitly reuse an out tensor t by resizing it, inplace, to "
                          f"zero elements with t.resize_(0).", UserWarning,
                          stacklevel=_errors.user_stacklevel())
        out.resize_(shape)
    return out.copy_(result)


# torch 1.13's functions with out= whose tensord functions compute a new result: install() gives
# each the out= keyword through with_out (tests/python/test_api_breadth.py checks this list
# against torch's own signatures). Factories make their result in out's dtype, on its device.
TAKES_OUT = ["addbmm", "addmv", "addr", "aminmax", "baddbmm", "bernoulli", "bucketize",
             "column_stack", "cross", "cummax", "cummin", "diag", "dstack", "frexp", "histc",
             "hstack", "index_add", "index_copy", "index_reduce", "kron", "ldexp",
             "logcumsumexp", "mode", "multinomial", "mvlgamma", "nanmean", "nanquantile",
             "narrow_copy", "nonzero", "quantile", "renorm", "searchsorted", "take_along_dim",
             "vdot", "vstack"]
FACTORIES_TAKING_OUT = ["eye", "logspace", "rand", "randint", "randn", "randperm", "range"]


def check_factory_dtype(dtype, out):
    """A factory given both dtype= and out= (torch: they must agree)."""
    if out is not None and dtype is not None and dtype is not out.dtype:
        raise RuntimeError(f"dtype {getattr(dtype, '_legacy', dtype)} does not match dtype of "
                           f"out parameter ({out.dtype._legacy})")


def with_out(fn, name, factory=False):
    """`fn` taking torch's out=: its result written into out (write_out), a factory's made in
    out's dtype (unless given), device and session."""
    import functools  # noqa: PLC0415
    import inspect  # noqa: PLC0415
    signature = inspect.signature(fn)
    accepts = set(signature.parameters)

    @functools.wraps(fn)
    def f(*args, out=None, **kwargs):
        if out is None:
            return fn(*args, **kwargs)
        if factory:
            if "dtype" in accepts and kwargs.get("dtype") is None:
                kwargs["dtype"] = out.dtype
            check_factory_dtype(kwargs.get("dtype"), out)
            if "device" in accepts and kwargs.get("device") is None:
                kwargs["device"] = out.device
            if "session" in accepts and kwargs.get("session") is None:
                kwargs["session"] = out._session
        return write_out(fn(*args, **kwargs), out, name)
    params = list(signature.parameters.values())
    at = len(params) - (params and params[-1].kind is inspect.Parameter.VAR_KEYWORD)
    params.insert(at, inspect.Parameter("out", inspect.Parameter.KEYWORD_ONLY, default=None))
    f.__signature__ = signature.replace(parameters=params)
    return f


def install(namespace):
    for name in TAKES_OUT:
        namespace[name] = with_out(namespace[name], name)
    for name in FACTORIES_TAKING_OUT:
        namespace[name] = with_out(namespace[name], name, factory=True)
