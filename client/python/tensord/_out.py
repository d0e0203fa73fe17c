"""torch's out= argument: one way for every function that takes it."""
import warnings

from . import _memory_format


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
        written = [write_out(r, o, op) for r, o in zip(result, out)]
        return type(result)(*written) if hasattr(result, "_fields") else tuple(written)
    from ._info import can_cast  # noqa: PLC0415 - _info imports the tensor modules
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
                          f"zero elements with t.resize_(0).", UserWarning, stacklevel=3)
        out.resize_(shape)
    return out.copy_(result)
