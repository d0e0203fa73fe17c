"""torch functions and Tensor methods that ATen itself composes of other ops (addmv, kron, diff,
unique, median, …): here they are the same compositions of server ops, so they run on every
device and raise at the call. install() puts each on Tensor and/or the module, under torch's names.
"""
import builtins
import functools
import math
import numbers
import operator
import warnings

import numpy as np

from ._out import write_out
from . import _autocast, _dtypes, _errors, _info
from .autograd import graph as _graph
from ._compute import _inplace, _reduce_attrs, _return_type, _run, _run_n
from ._ops import TensorBase, _Ints, _py_scalar


def _api():
    from . import _api as api  # noqa: PLC0415 - import cycle
    return api


def _t():
    from ._tensor import Tensor  # noqa: PLC0415 - import cycle
    return Tensor


_aminmax = _return_type("aminmax", ["min", "max"])
_median = _return_type("median", ["values", "indices"])


# ---- Products with beta and alpha ----------------------------------------------------------------

def _scaling(beta, alpha):
    return {"beta": _py_scalar(beta), "alpha": _py_scalar(alpha)}


def addmv(input, mat, vec, *, beta=1, alpha=1):
    return _run("addmv", [("self", input), ("mat", mat), ("vec", vec)], _scaling(beta, alpha))


def addr(input, vec1, vec2, *, beta=1, alpha=1):
    return _run("addr", [("self", input), ("vec1", vec1), ("vec2", vec2)],
                   _scaling(beta, alpha))


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    return _run("baddbmm", [("self", input), ("batch1", batch1), ("batch2", batch2)],
                   _scaling(beta, alpha))


def addbmm(input, batch1, batch2, *, beta=1, alpha=1):
    return _run("addbmm", [("self", input), ("batch1", batch1), ("batch2", batch2)],
                   _scaling(beta, alpha))


def _in_place(fn):
    """The in-place form of a composition: computed, then copied into self."""
    @functools.wraps(fn)
    def method(self, *args, **kwargs):
        return self.copy_(fn(self, *args, **kwargs))
    method.__name__ = fn.__name__ + "_"
    return method


# ---- Shapes ----------------------------------------------------------------------------------------

def broadcast_shapes(*shapes):
    """The shape all `shapes` broadcast to (torch.broadcast_shapes), without any tensor."""
    out = []
    for shape in shapes:
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        for i, size in enumerate(reversed(shape)):
            if i == len(out):
                out.append(size)
            elif out[i] == 1:
                out[i] = size
            elif size != 1 and size != out[i]:
                raise RuntimeError(f"Shape mismatch: objects cannot be broadcast to a single "
                                   f"shape.  Mismatch is between {list(reversed(out))} and "
                                   f"{list(shape)}")
    return _dtypes.Size(reversed(out))


def broadcast_tensors(*tensors):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    shape = broadcast_shapes(*(t.shape for t in tensors))
    return tuple(t.expand(tuple(shape)) for t in tensors)


def _atleast(n, tensors):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    out = []
    for t in tensors:
        if t.dim() == 0:
            t = t.reshape((1,) * n)
        elif t.dim() == 1 and n >= 2:
            t = t.unsqueeze(0)
            if n == 3:
                t = t.unsqueeze(-1)
        elif t.dim() == 2 and n == 3:
            t = t.unsqueeze(-1)
        out.append(t)
    return out[0] if len(out) == 1 else tuple(out)


def atleast_1d(*tensors):
    return _atleast(1, tensors)


def atleast_2d(*tensors):
    return _atleast(2, tensors)


def atleast_3d(*tensors):
    return _atleast(3, tensors)


def column_stack(tensors):
    api = _api()
    return api.hstack([t.reshape(-1, 1) if t.dim() <= 1 else t for t in tensors])


def dstack(tensors):
    return _api().cat(list(atleast_3d(*tensors)) if len(tensors) > 1 else [atleast_3d(*tensors)],
                      2)


def _split_at(name, min_dim, dim):
    def split(input, indices_or_sections):
        if input.dim() < min_dim:
            raise RuntimeError(f"torch.{name} requires a tensor with at least {min_dim} "
                               f"dimension, but got a tensor with {input.dim()} dimensions!")
        d = 1 if name == "hsplit" and input.dim() > 1 else (0 if name == "hsplit" else dim)
        if isinstance(indices_or_sections, int) and input.size(d) % indices_or_sections:
            raise RuntimeError(f"torch.{name} attempted to split along dimension {d}, but the "
                               f"size of the dimension {input.size(d)} is not divisible by the "
                               f"split_size {indices_or_sections}!")
        return input.tensor_split(indices_or_sections, d)
    split.__name__ = name
    return split


hsplit = _split_at("hsplit", 1, 1)
vsplit = _split_at("vsplit", 2, 0)
dsplit = _split_at("dsplit", 3, 2)


def fliplr(input):
    if input.dim() < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return input.flip(1)


def flipud(input):
    if input.dim() < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return input.flip(0)


def rot90(input, k=1, dims=(0, 1)):
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if input.dim() < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {input.dim()}")
    d0, d1 = dims[0] % input.dim(), dims[1] % input.dim()
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} and "
                           f"dim1 = {d1}")
    k %= 4
    if k == 1:
        return input.flip(d1).transpose(d0, d1)
    if k == 2:
        return input.flip(d0, d1)
    if k == 3:
        return input.flip(d0).transpose(d0, d1)
    return input.clone()


def ravel(input):
    return input.reshape(-1)


def tile(input, dims):
    dims = tuple(dims)
    if len(dims) < input.dim():
        dims = (1,) * (input.dim() - len(dims)) + dims
    return input.repeat(*dims)


# ---- Diagonals -------------------------------------------------------------------------------------

def diag(input, diagonal=0):
    return _run("diag", [("self", input)], {"diagonal": int(diagonal)})


def diagflat(input, offset=0):
    return _run("diagflat", [("self", input)], {"offset": int(offset)})


def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    return _run("diag_embed", [("self", input)],
                   {"offset": int(offset), "dim1": int(dim1), "dim2": int(dim2)})


def trace(input):
    return _run("trace", [("self", input)])


def _scatter_into(name):
    def scatter(input, src, *args, **kwargs):
        out = input.clone()
        view = getattr(out, name)(*args, **kwargs)
        view.copy_(src)
        return out
    scatter.__name__ = name + "_scatter"
    return scatter


select_scatter = _scatter_into("select")
diagonal_scatter = _scatter_into("diagonal")


def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    out = input.clone()
    index = [slice(None)] * input.dim()
    index[dim] = slice(start, end, step)
    out[tuple(index)] = src
    return out


# ---- Elementwise compositions ---------------------------------------------------------------------

def ldexp(input, other):
    """input * 2 ** other (in a floating dtype, as torch computes it)."""
    if not isinstance(other, TensorBase):
        raise TypeError(f"ldexp(): argument 'other' (position 1) must be Tensor, not "
                        f"{type(other).__name__}")
    return input * other.exp2()


def positive(input):
    if input.dtype is _dtypes.bool_:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


def rsub(input, other, alpha=1):
    return other - input * alpha if alpha != 1 else other - input


def nansum(input, dim=None, keepdim=False, *, dtype=None):
    return _run("nansum", [("self", input)], _reduce_attrs("nansum", dim, keepdim, dtype))


def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    return _run("nanmean", [("self", input)], _reduce_attrs("nanmean", dim, keepdim, dtype))


def _moments(name):
    def both(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
        if isinstance(dim, bool):  # std_mean(input, unbiased)
            dim, unbiased = None, dim
        c = correction if correction is not None else (0 if unbiased is False else 1)
        attrs = _reduce_attrs(name, dim, keepdim, correction=_py_scalar(c))
        return tuple(_run_n(name + "_mean", [input], attrs, 2))
    both.__name__ = name + "_mean"
    return both


std_mean = _moments("std")
var_mean = _moments("var")


def aminmax(input, *, dim=None, keepdim=False):
    attrs = {"keepdim": bool(keepdim)}
    if dim is not None:
        attrs["dim"] = int(dim)
    return _aminmax(*_run_n("aminmax", [input], attrs, 2))


def diff(input, n=1, dim=-1, prepend=None, append=None):
    for name, t in (("prepend", prepend), ("append", append)):
        if t is not None and not isinstance(t, _t()):
            raise TypeError(f"diff(): argument '{name}' must be Tensor, not {type(t).__name__}")
    return _run("diff", [("self", input), ("prepend", prepend), ("append", append)],
                   {"n": int(n), "dim": int(dim)})


_mode = _return_type("mode", ["values", "indices"])


def mode(input, dim=-1, keepdim=False):
    """One server op (engine/ops/sort_ops.cc): runs of the sorted rows counted on the device."""
    return _mode(*_run_n("mode", [input], {"dim": int(dim), "keepdim": bool(keepdim)}, 2))


_cummax = _return_type("cummax", ["values", "indices"])
_cummin = _return_type("cummin", ["values", "indices"])


def cummax(input, dim):
    """One server op with its own scan kernel (engine/ops/reduce_ops.cc)."""
    return _cummax(*_run_n("cummax", [input], {"dim": int(dim)}, 2))


def cummin(input, dim):
    return _cummin(*_run_n("cummin", [input], {"dim": int(dim)}, 2))


def logcumsumexp(input, dim):
    return _run("logcumsumexp", [("self", input)], {"dim": int(dim)})


def take_along_dim(input, indices, dim=None):
    if dim is None:
        return input.reshape(-1).gather(0, indices.reshape(-1))
    # Both broadcast against each other in every dim but `dim`.
    idx_shape = list(indices.shape)
    in_shape = list(input.shape)
    d = dim % input.dim()
    target_in = [max(a, b) if i != d else in_shape[i] for i, (a, b) in enumerate(zip(in_shape, idx_shape))]
    target_idx = [max(a, b) if i != d else idx_shape[i] for i, (a, b) in enumerate(zip(in_shape, idx_shape))]
    return input.expand(tuple(target_in)).gather(d, indices.expand(tuple(target_idx)))


def is_nonzero(input):
    if input.numel() == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if input.numel() > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(input.item())


def is_same_size(input, other):
    return tuple(input.shape) == tuple(other.shape)


def is_signed(input):
    return input.dtype.is_signed


# ---- Index updates as scatters --------------------------------------------------------------------

def _index_update(name):
    """index_add(_), index_copy(_), index_fill(_): one server op each (engine/ops/
    indexing_ops.cc), a scatter along dim."""
    def update(self, dim, index, source, **kwargs):
        attrs = {"dim": int(dim)}
        if "alpha" in kwargs:
            attrs["alpha"] = _py_scalar(kwargs.pop("alpha"))
        if kwargs:
            raise TypeError(f"{name}() got an unexpected keyword argument "
                            f"'{next(iter(kwargs))}'")
        third = "value" if name.startswith("index_fill") else "source"
        if third == "value" and not isinstance(source, _t()):
            source = _py_scalar(source)
        if name.endswith("_"):
            return _inplace(self, name, [("index", index), (third, source)], attrs)
        return _run(name, [("self", self), ("index", index), (third, source)], attrs)
    update.__name__ = name
    return update


_SCATTER_REDUCE_BETA = "scatter_reduce() is in beta and the API may change at any time."


def scatter_reduce_(self, dim, index, src, reduce, *, include_self=True):
    """One server op (engine/ops/indexing_ops.cc): a scatter that combines."""
    _errors.warn_once("scatter_reduce", _SCATTER_REDUCE_BETA)
    return _scatter_reduce_(self, dim, index, src, reduce, include_self)


def _scatter_reduce_(self, dim, index, src, reduce, include_self=True):
    return _inplace(self, "scatter_reduce_", [("index", index), ("src", src)],
                    {"dim": int(dim), "reduce": str(reduce), "include_self": bool(include_self)})


def scatter_reduce(self, dim, index, src, reduce, *, include_self=True):
    _errors.warn_once("scatter_reduce", _SCATTER_REDUCE_BETA)
    return _scatter_reduce(self, dim, index, src, reduce, include_self)


def _scatter_reduce(self, dim, index, src, reduce, include_self=True):
    """scatter_reduce without torch's beta warning: tensord's own compositions use it."""
    return _run("scatter_reduce", [("self", self), ("index", index), ("src", src)],
                {"dim": int(dim), "reduce": str(reduce), "include_self": bool(include_self)})


def masked_scatter_(self, mask, source):
    """One server op (engine/ops/indexing_ops.cc): source's elements, in order, where mask."""
    return _inplace(self, "masked_scatter_", [("mask", mask), ("source", source)])


def masked_scatter(self, mask, source):
    return _run("masked_scatter", [("self", self), ("mask", mask), ("source", source)])


index_add_ = _index_update("index_add_")
index_copy_ = _index_update("index_copy_")
index_fill_ = _index_update("index_fill_")
index_add = _index_update("index_add")
index_copy = _index_update("index_copy")
index_fill = _index_update("index_fill")


# ---- Products ---------------------------------------------------------------------------------------

def kron(input, other):
    return _run("kron", [("self", input), ("other", other)])


def vdot(input, other):
    return input.dot(other)


def chain_matmul(*matrices):
    for i, m in enumerate(matrices):
        if not isinstance(m, _t()):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got "
                            f"{type(m).__name__}")
    _errors.warn_once("chain_matmul", (
        "torch.chain_matmul is deprecated and will be removed in a future PyTorch release. Use "
        "torch.linalg.multi_dot instead, which accepts a list of two or more tensors rather than "
        "multiple parameters."))
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    return matrices[0]._op("chain_matmul", matrices[1:])


def tensordot(a, b, dims=2, out=None):
    if isinstance(dims, TensorBase):  # torch takes a 0-d count or a (2, n) tensor of dims
        dims = dims.item() if dims.dim() == 0 else dims.tolist()
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        dims_a, dims_b = list(range(a.dim() - dims, a.dim())), list(range(dims))
    else:
        if len(dims) != 2:
            raise RuntimeError("tensordot expects dims to be a pair of lists of dims")
        dims_a, dims_b = [list(d) if isinstance(d, (list, tuple)) else [d] for d in dims]
    result = a._op("tensordot", [b], {"dims_self": _Ints(dims_a), "dims_other": _Ints(dims_b)})
    return write_out(result, out, "tensordot")


def cross(input, other, dim=None):
    return _run("cross", [("self", input), ("other", other)],
                   None if dim is None else {"dim": int(dim)})


def dist(input, other, p=2):
    out = (input - other).norm(p)
    _graph.name_node(out, None, "DistBackward0")
    return out


def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """One server op (engine/ops/functional_ops.cc): a matrix product for p = 2 where torch
    uses one, else each pair's difference's norm."""
    return _run("cdist", [("x1", x1), ("x2", x2)], {"p": float(p),
                                                   "compute_mode": str(compute_mode)})


def renorm(input, p, dim, maxnorm):
    dims = [d for d in range(input.dim()) if d != dim % input.dim()]
    norms = input.norm(p, dims, keepdim=True)
    factor = _api().where(norms > maxnorm, maxnorm / (norms + 1e-7), norms.new_ones(()))
    out = input * factor
    _graph.name_node(out, None, "RenormBackward0")
    return out


def block_diag(*tensors):
    if not tensors:
        return _api().zeros(1, 0)
    return tensors[0]._op("block_diag", tensors[1:])


def trapezoid(y, x=None, *, dx=None, dim=-1):
    n = y.size(dim)
    if n == 0:
        return y.sum(dim)
    a, b = y.narrow(dim, 1, n - 1), y.narrow(dim, 0, n - 1)
    if x is None:
        return ((a + b) * ((1.0 if dx is None else dx) / 2)).sum(dim)
    dxs = diff(x, dim=dim if x.dim() > 1 else -1)
    if x.dim() == 1:
        shape = [1] * y.dim()
        shape[dim] = n - 1
        dxs = dxs.reshape(shape)
    return ((a + b) * dxs / 2).sum(dim)


trapz = trapezoid


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    n = y.size(dim)
    a, b = y.narrow(dim, 1, n - 1), y.narrow(dim, 0, n - 1)
    if x is None:
        return ((a + b) * ((1.0 if dx is None else dx) / 2)).cumsum(dim)
    dxs = diff(x, dim=-1)
    if x.dim() == 1:
        shape = [1] * y.dim()
        shape[dim] = n - 1
        dxs = dxs.reshape(shape)
    return ((a + b) * dxs / 2).cumsum(dim)


def vander(x, N=None, increasing=False):
    n = x.size(0) if N is None else N
    api = _api()
    powers = api.arange(n, device=x.device, session=x._session)
    if not increasing:
        powers = powers.flip(0)
    base = x if x.dtype.is_floating_point or x.dtype is _dtypes.int64 else x.to(_dtypes.int64)
    return base.unsqueeze(1) ** powers


def cov(input, *, correction=1, fweights=None, aweights=None):
    x = input if input.dim() == 2 else input.reshape(1, -1)
    if not x.dtype.is_floating_point:
        x = x.to(_dtypes.get_default_dtype())
    n = x.size(1)
    mean = x.mean(1, keepdim=True)
    xm = x - mean
    c = xm.matmul(xm.t()) / max(n - correction, 0)
    return c.squeeze() if input.dim() < 2 else c


def corrcoef(input):
    c = cov(input)
    if c.dim() == 0:
        return c / c
    d = c.diagonal().sqrt()
    return (c / d.unsqueeze(1) / d.unsqueeze(0)).clamp(-1, 1)


# ---- Searching, counting, order statistics --------------------------------------------------------

def isin(elements, test_elements, *, assume_unique=False, invert=False):
    t = _t()
    api = _api()
    if not isinstance(elements, t):
        elements = api.tensor(elements, device=test_elements.device,
                              session=test_elements._session)
    if not isinstance(test_elements, t):
        test_elements = elements.new_full((), test_elements)
    hit = (elements.unsqueeze(-1) == test_elements.reshape(-1)).any(-1)
    return ~hit if invert else hit


def bucketize(input, boundaries, *, out_int32=False, right=False):
    """One server op (engine/ops/sort_ops.cc): a binary search per value."""
    if not isinstance(input, _t()):
        input = _py_scalar(input)
    return _run("bucketize", [("self", input), ("boundaries", boundaries)],
                {"out_int32": bool(out_int32), "right": bool(right)})


def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None,
                 sorter=None):
    """One server op (engine/ops/sort_ops.cc): a binary search per value."""
    if not isinstance(input, _t()):
        input = _py_scalar(input)
    attrs = {"out_int32": bool(out_int32), "right": bool(right)}
    if side is not None:
        attrs["side"] = str(side)
    return _run("searchsorted", [("sorted_sequence", sorted_sequence), ("self", input),
                                 ("sorter", sorter)], attrs)


def bincount(input, weights=None, minlength=0):
    """One server op (engine/ops/data_dependent_ops.cc): the counts added on the device, only
    the largest value read back to size them."""
    return _run("bincount", [("self", input), ("weights", weights)], {"minlength": int(minlength)})


_histogram = _return_type("histogram", ["hist", "bin_edges"])


def histogram(input, bins=100, *, range=None, weight=None, density=False, out=None):
    """torch.histogram: (hist, bin_edges), one server op (engine/ops/statistics_ops.cc): the
    edges (given, or spaced over the range, the data's own found on the device) and the bins'
    counts or summed weights by searchsorted and a scatter-add; no round trip."""
    from ._tensor import Tensor  # noqa: PLC0415 - import cycle
    attrs = {"density": bool(density)}
    if range is not None:
        lo, hi = range
        attrs["min"], attrs["max"] = float(lo), float(hi)
    if isinstance(bins, Tensor):
        if range is not None:  # torch's overloads: edges take no range
            raise TypeError("histogram() received an invalid combination of arguments - got "
                            "(Tensor, Tensor, range=tuple): bins given as a tensor take no range")
        operands, name = [input, bins], "histogram.bins_tensor"
    else:
        operands, name = [input], "histogram"
        attrs["bins"] = int(bins)
    if weight is None:
        attrs["weight"] = None
    else:
        operands.append(weight)
    return write_out(_histogram(*_run_n(name, operands, attrs, 2)), out, name)



_histogramdd = _return_type("histogramdd", ["hist", "bin_edges"])


def histogramdd(input, bins=10, range=None, weight=None, density=False):
    """torch.histogramdd over the points of input (..., D): each dim's edges as torch.histogram
    makes them (given, or spaced over the range, the data's own found on the device), each
    point's bin per dim by searchsorted (the last edge inclusive, NaN in the last bin as
    torch's), one index_add of the counts
    or weights into the flattened D-dim histogram (points outside a range go to a discarded
    bin); no round trip."""
    from ._tensor import Tensor  # noqa: PLC0415 - import cycle
    api = _api()
    name = "torch.histogramdd"
    if input.dim() < 2:
        raise RuntimeError(f"{name}: input tensor should have at least 2 dimensions")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f'"histogramdd" not implemented for \'{input.dtype._legacy}\'')
    dims = input.size(-1)
    points = input.reshape(-1, dims)
    if weight is not None:
        if tuple(weight.shape) != tuple(input.shape[:-1]):
            raise RuntimeError(f"{name}: if weight tensor is provided it should have the same "
                               f"shape as the input tensor excluding its innermost dimension, "
                               f"but got input with shape {list(input.shape)} and weight with "
                               f"shape {list(weight.shape)}")
        if weight.dtype is not input.dtype:
            raise RuntimeError(f"{name}: if weight tensor is provided, input tensor and weight "
                               f"tensor should have the same dtype, but got "
                               f"input({input.dtype.name}), and weight({weight.dtype.name})")
    given_edges = isinstance(bins, (list, tuple)) and bins and isinstance(bins[0], Tensor)
    counts = [bins] * dims if isinstance(bins, int) else list(bins)
    if len(counts) != dims:
        raise RuntimeError(f"{name}: expected {dims} sequences of bin edges for a {dims}-"
                           f"dimensional histogram but got {len(counts)}")
    if range is not None and given_edges:
        range = None  # torch ignores a range beside given edges
    if range is not None:
        if len(range) != 2 * dims:
            raise RuntimeError(f"{name}: for a {dims}-dimensional histogram range should have "
                               f"{2 * dims} elements, but got {len(range)}")
        for d in builtins.range(dims):
            if range[2 * d] > range[2 * d + 1]:
                raise RuntimeError(f"{name}: min should not exceed max, but got min "
                                   f"{range[2 * d]} max {range[2 * d + 1]} for dimension {d}")
    for d, n in enumerate(counts):
        if given_edges:
            if n.dim() != 1:
                raise RuntimeError(f"{name}: bins tensor should have one dimension, but got "
                                   f"{n.dim()} dimensions in the bins tensor for dimension {d}")
            if n.dtype is not input.dtype:
                c10 = _dtypes.C10_NAMES
                raise RuntimeError(f"{name}: input tensor and bins tensors should have the same "
                                   f"dtype, but got input with dtype {c10[input.dtype.name]} and "
                                   f"bins for dimension {d} with dtype {c10[n.dtype.name]}")
            if n.numel() == 0:
                raise RuntimeError(f"{name}: bins tensor should have at least 1 element, but got "
                                   f"0 elements in the bins tensor for dimension {d}")
            n = n.numel() - 1
        if n <= 0:
            raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {n} for "
                               f"dimension {d}")
    edges = []
    for d in builtins.range(dims):
        column = points[:, d]
        if given_edges:
            edges.append(counts[d])
        else:
            span = None if range is None else (range[2 * d], range[2 * d + 1])
            edges.append(histogram(column, int(counts[d]), range=span)[1])
    shape = [e.numel() - 1 for e in edges]
    total = math.prod(shape)
    flat = None  # each point's bin in the flattened histogram; `total` for points outside
    inside = None
    for d, e in enumerate(edges):
        x = points[:, d].contiguous()
        last = e.numel() - 1
        at = searchsorted(e, x, right=True) - 1
        # the last bin holds its right edge, and NaN (as torch's kernel puts it)
        nan = x.isnan()
        at = api.where((x == e[-1]) | nan, last - 1, at)
        ok = ((x >= e[0]) & (x <= e[-1])) | nan
        inside = ok if inside is None else inside & ok
        at = at * math.prod(shape[d + 1:])
        flat = at if flat is None else flat + at
    flat = api.where(inside, flat, total)
    values = (api.ones(points.size(0), dtype=input.dtype, device=input.device,
                       session=input._session) if weight is None else weight.reshape(-1))
    hist = api.zeros(total + 1, dtype=input.dtype, device=input.device, session=input._session)
    hist = hist.index_add_(0, flat, values)[:total].view(shape)
    if density:
        hist = hist / hist.sum()
        for d, e in enumerate(edges):
            widths = e[1:] - e[:-1]
            hist = hist / widths.view([-1 if k == d else 1 for k in builtins.range(dims)])
    return _histogramdd(hist, tuple(edges))


# ---- Short-time Fourier transforms, real-valued (torch 1.13's return_complex=False layout) -------

def _flag(value):
    """An optional bool as torch prints it in the call: 1, 0 or None."""
    return "None" if value is None else int(bool(value))


def _stft_call(name, input, n_fft, hop, win, window, extra):
    """torch's prefix of stft/istft errors: the call as it reached ATen."""
    w = "None" if window is None else f"torch.{window.dtype._legacy}Tensor{{{list(window.shape)}}}"
    return (f"{name}(torch.{input.dtype._legacy}Tensor{list(input.shape)}, n_fft={n_fft}, "
            f"hop_length={hop}, win_length={win}, window={w}, {extra}")


def _stft_window(input, n_fft, win_length, window, call, dtype):
    """The window padded to n_fft, centred (torch's), in `dtype`; None for a rectangular one."""
    if window is not None and (window.dim() != 1 or window.size(0) != win_length):
        raise RuntimeError(f"{call} : expected a 1D window tensor of size equal to "
                           f"win_length={win_length}, but got window with size "
                           f"{list(window.shape)}")
    if window is None and win_length == n_fft:
        return None
    if window is None:
        window = _api().ones(win_length, dtype=dtype, device=input.device,
                             session=input._session)
    left = (n_fft - win_length) // 2
    from .nn import functional as F  # noqa: PLC0415 - import cycle
    return F.pad(window.to(dtype), (left, n_fft - win_length - left))


def _dft_matrices(n_fft, bins, dtype, like, inverse=False):
    """cos and sin of 2 pi k n / n_fft ((n_fft, bins), or (bins, n_fft) for the inverse), the
    product k n reduced mod n_fft in integers before the angle is formed in float64."""
    api = _api()
    n = api.arange(n_fft, device=like.device, session=like._session)
    k = api.arange(bins, device=like.device, session=like._session)
    kn = ((k.unsqueeze(1) * n) if inverse else (n.unsqueeze(1) * k)) % n_fft
    angle = n.double() * (2 * math.pi / n_fft)
    return angle.cos().to(dtype).take(kn), angle.sin().to(dtype).take(kn)


@_autocast.op("stft")
def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
         pad_mode="reflect", normalized=False, onesided=None, return_complex=None):
    """torch.stft for real signals, torch 1.13's real layout (..., freq, frames, 2): frames as
    a strided view of the (reflect-)padded signal, times the window, by a DFT as two
    products with cos and sin matrices made on the server. tensord has no complex dtypes:
    return_complex=True is refused."""
    import warnings as _w  # noqa: PLC0415
    from .nn import functional as F  # noqa: PLC0415 - import cycle
    if return_complex:
        raise RuntimeError("stft: return_complex=True asks for a complex tensor, and tensord "
                           "has no complex dtypes: use return_complex=False (the real layout, "
                           "(..., freq, frames, 2))")
    if return_complex is None:
        _w.warn("stft will soon require the return_complex parameter be given for real inputs, "
                "and will further require that return_complex=True in a future PyTorch "
                "release.")
    if center:
        dims = input.dim()
        pad = n_fft // 2
        input = F.pad(input.view([1] * (3 - dims) + list(input.shape)), [pad, pad], pad_mode)
        input = input.view(input.shape[-dims:])
    hop = n_fft // 4 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    call = _stft_call("stft", input, n_fft, hop, win, window,
                      f"normalized={int(normalized)}, onesided={_flag(onesided)}, "
                      f"return_complex={_flag(return_complex)})")
    if input.dim() not in (1, 2):
        raise RuntimeError(f"{call} : expected a 1D or 2D tensor")
    length = input.size(-1)
    if not 0 < n_fft <= length:
        raise RuntimeError(f"{call} : expected 0 < n_fft < {length}, but got n_fft={win}")
    if hop <= 0:
        raise RuntimeError(f"{call} : expected hop_length > 0, but got hop_length={hop}")
    if not 0 < win <= n_fft:
        raise RuntimeError(f"{call} : expected 0 < win_length <= n_fft, but got "
                           f"win_length={win}")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"{call} : expected a tensor of floating point or complex values")
    dtype = input.dtype if window is None else _info.result_type(input, window)
    w = _stft_window(input, n_fft, win, window, call, dtype)
    x = input.to(dtype)
    batched = x.dim() == 2
    x = x if batched else x.unsqueeze(0)
    frames_count = 1 + (length - n_fft) // hop
    frames = x.contiguous().unfold(-1, n_fft, hop)            # (batch, frames, n_fft)
    if w is not None:
        frames = frames * w
    bins = n_fft // 2 + 1 if onesided is None or onesided else n_fft
    cos, sin = _dft_matrices(n_fft, bins, dtype, x)
    # One product: each bin's (re, im) columns side by side, as the output interleaves them.
    dft = _api().stack([cos, -sin], -1).view(n_fft, 2 * bins)
    out = (frames @ dft).view(frames.size(0), frames_count, bins, 2)  # (batch, frames, bins, 2)
    if normalized:
        out = out * (1.0 / math.sqrt(n_fft))
    out = out.transpose(1, 2)                                 # (batch, bins, frames, 2)
    assert out.size(2) == frames_count
    return out if batched else out.squeeze(0)


@_autocast.op("istft")
def istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
          normalized=False, onesided=None, length=None, return_complex=False):
    """torch.istft of the real layout (..., freq, frames, 2): each frame's inverse real DFT
    (c2r, from the first n_fft / 2 + 1 bins as torch's) as products with cos and sin
    matrices, times the window, overlap-added by fold and divided by the window's squared
    overlap-add (torch's check that it is nowhere near 0 reads it back)."""
    import warnings as _w  # noqa: PLC0415
    from .nn import functional as F  # noqa: PLC0415 - import cycle
    api = _api()
    _w.warn("istft will require a complex-valued input tensor in a future PyTorch release. "
            "Matching the output from stft with return_complex=True. ")
    hop = n_fft // 4 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    call = _stft_call("istft", input, n_fft, hop, win, window,
                      f"center={int(center)}, normalized={int(normalized)}, "
                      f"onesided={_flag(onesided)}, length={length}, "
                      f"return_complex={_flag(return_complex)})")
    if return_complex:
        raise RuntimeError("Cannot have onesided output if window or input is complex")
    if input.numel() == 0:
        raise RuntimeError(f"{call} : input tensor cannot be empty.")
    batched = input.dim() == 4
    if input.dim() not in (3, 4) or input.size(-1) != 2:
        input.size(-3)  # torch indexes the frequency dim first: IndexError below 3 dims
        raise RuntimeError(f"{call} : expected a tensor with 3 or 4 dimensions of real, "
                           f"representing a complex tensor (..., freq, frames, 2)")
    frames_count, fft_size = input.size(-2), input.size(-3)
    one = fft_size != n_fft if onesided is None else onesided
    if one and n_fft // 2 + 1 != fft_size:
        raise RuntimeError(f"{call} : expected the frequency dimension (3rd to the last) of the "
                           f"input tensor to match n_fft / 2 + 1 when onsided=True, but got "
                           f"{fft_size}")
    if not one and n_fft != fft_size:
        raise RuntimeError(f"{call} : expected the frequency dimension (3rd to the last) of the "
                           f"input tensor to match n_fft when onsided=False, but got {fft_size}")
    if not 0 < hop <= win:
        raise RuntimeError(f"{call} : expected 0 < hop_length <= win_length")
    if not 0 < win <= n_fft:
        raise RuntimeError(f"{call} : expected 0 < win_length <= n_fft")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"istft: expected a tensor of floating point type, but got "
                           f"{input.dtype._legacy}")
    dtype = input.dtype if window is None else _info.result_type(input, window)
    w = _stft_window(input, n_fft, win, window, call, dtype)
    if w is None:
        w = api.ones(n_fft, dtype=dtype, device=input.device, session=input._session)
    x = input.to(dtype) if batched else input.to(dtype).unsqueeze(0)
    if normalized:
        x = x * math.sqrt(n_fft)
    # torch's c2r transform of the first n_fft / 2 + 1 bins (a two-sided spectrum's upper half
    # is taken as their mirror image, as torch takes it): the bins between DC and Nyquist
    # count twice
    bins = n_fft // 2 + 1
    x = x[:, :bins]
    re, im = x[..., 0].transpose(1, 2), x[..., 1].transpose(1, 2)   # (batch, frames, bins)
    cos, sin = _dft_matrices(n_fft, bins, dtype, x, inverse=True)
    weight = api.full((bins, 1), 2.0, dtype=dtype, device=x.device, session=x._session)
    weight[0] = 1.0
    if n_fft % 2 == 0:
        weight[-1] = 1.0
    cos, sin = cos * weight, sin * weight
    frames = (re @ cos - im @ sin) * (1.0 / n_fft)                  # (batch, frames, n_fft)
    frames = frames * w
    expected = n_fft + hop * (frames_count - 1)
    y = F.fold(frames.transpose(1, 2), (1, expected), (1, n_fft), stride=(1, hop))
    y = y.view(y.size(0), expected)
    envelope = F.fold((w * w).view(1, n_fft, 1).expand(1, n_fft, frames_count), (1, expected),
                      (1, n_fft), stride=(1, hop)).view(expected)
    start = n_fft // 2 if center else 0
    end = expected if length is None and not center else (
        -(n_fft // 2) if length is None else start + length)
    stop = expected + end if end < 0 else min(end, expected)
    y, envelope = y[:, start:stop], envelope[start:stop]
    lowest = envelope.abs().min()
    if not bool((lowest > 1e-11).item()):
        raise RuntimeError(f"{call} window overlap add min: 1")
    y = y / envelope
    if length is not None and end > expected:
        y = F.pad(y, (0, end - expected))
    return y if batched else y.squeeze(0)

def histc(input, bins=100, min=0, max=0):
    """One server op (engine/ops/statistics_ops.cc): bins counted by a scatter-add, the range
    found on the device where min == max (no round trip)."""
    return _run("histc", [("self", input)], {"bins": int(bins), "min": _py_scalar(min),
                                             "max": _py_scalar(max)})


def _median_of(name, result):
    def median(input, dim=None, keepdim=False):
        """One server op (engine/ops/sort_ops.cc): a stable sort and one gather (torch's
        nth_element compares positions too, so its ties are a stable sort's)."""
        if dim is None:
            return _run_n(name, [input], {}, 1)[0]
        return result(*_run_n(name, [input], {"dim": int(dim), "keepdim": bool(keepdim)}, 2))
    median.__name__ = name
    return median


median = _median_of("median", _median)
nanmedian = _median_of("nanmedian", _return_type("nanmedian", ["values", "indices"]))


def _quantile(name):
    def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
        """One server op (engine/ops/statistics_ops.cc): sort, ranks, gather, interpolate."""
        attrs = {"keepdim": bool(keepdim), "interpolation": str(interpolation)}
        if dim is not None:
            attrs["dim"] = int(dim)
        if not isinstance(q, _t()):
            q = float(q)
        return _run(name, [("self", input), ("q", q)], attrs)
    quantile.__name__ = name
    return quantile


quantile = _quantile("quantile")
nanquantile = _quantile("nanquantile")


def _unique(name, input, attrs, return_inverse, return_counts, dim):
    attrs.update(return_inverse=bool(return_inverse), return_counts=bool(return_counts))
    if dim is not None:
        attrs["dim"] = int(dim)
    n = 1 + bool(return_inverse) + bool(return_counts)
    out = _run_n(name, [input], attrs, n)
    return out[0] if n == 1 else tuple(out)


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """One server op (engine/ops/data_dependent_ops.cc): sorted on the device, the runs' count
    read back to size the outputs."""
    return _unique("unique", input, {"sorted": bool(sorted)}, return_inverse, return_counts, dim)


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """One server op (engine/ops/data_dependent_ops.cc)."""
    return _unique("unique_consecutive", input, {}, return_inverse, return_counts, dim)


def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """By a number: a view expanded and reshaped. By a tensor of counts: one server op
    (engine/ops/data_dependent_ops.cc) that reads the counts back to size its output."""
    t = _t()
    attrs = {}
    if output_size is not None:
        attrs["output_size"] = int(output_size)
    if repeats is None:  # torch.repeat_interleave(repeats): indices repeated by their counts
        counts = input
        if counts.dim() != 1:
            raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
        positions = _api().arange(counts.numel(), dtype=counts.dtype, device=counts.device,
                                  session=counts._session)
        return _run("repeat_interleave", [("self", positions), ("repeats", counts)], attrs)
    if isinstance(repeats, t):
        if dim is not None:
            attrs["dim"] = int(dim)
        return _run("repeat_interleave", [("self", input), ("repeats", repeats)], attrs)
    r = int(repeats)
    if r < 0:
        raise RuntimeError("repeats can not be negative")
    x = input.reshape(-1) if dim is None else input
    d = 0
    if dim is not None:
        nd = input.dim()
        if nd == 0:
            raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
        if not -nd <= dim < nd:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-nd}, "
                             f"{nd - 1}], but got {dim})")
        d = dim % nd
    shape = list(x.shape)
    expanded = x.unsqueeze(d + 1).expand(tuple(shape[:d + 1] + [r] + shape[d + 1:]))
    shape[d] *= r
    if output_size is not None and output_size != shape[d]:
        raise RuntimeError("allocated size does not match required size")
    return expanded.reshape(tuple(shape))


def _triangle_indices(name):
    def indices(row, col, offset=0, *, dtype=None, device=None, layout=None, session=None,
                requires_grad=False):
        """One server op (engine/ops/matrix_ops.cc): index arithmetic on the device."""
        from . import _factories as f  # noqa: PLC0415
        attrs = {"row": int(row), "col": int(col), "offset": int(offset)}
        if dtype is not None:
            attrs["dtype"] = f._dtype_arg(dtype)
        return f._op_on(f._session(session), f._add_device(attrs, device), name, [], attrs)
    indices.__name__ = name
    return indices


tril_indices = _triangle_indices("tril_indices")
triu_indices = _triangle_indices("triu_indices")


def logspace(start, end, steps, base=10.0, *, dtype=None, device=None, session=None,
             requires_grad=False):
    """torch.logspace: the exponents as torch 1.13's CPU kernel computes them (_spaced.py), the
    powers on the server (the C library's pow, as torch's)."""
    from . import _spaced  # noqa: PLC0415
    from ._factories import _dtype_arg, _scalar_arg  # noqa: PLC0415
    from ._ops import _int  # noqa: PLC0415
    api = _api()
    d = _dtype_arg(dtype, _dtypes.get_default_dtype())
    steps = _int(steps, "logspace", "steps")
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    exps = api.tensor(_spaced.logspace_exponents(_scalar_arg(start, "logspace"),
                                                 _scalar_arg(end, "logspace"), steps, d),
                      device=device, session=session)
    base = float(base) if d.is_floating_point else float(np.float32(base))
    return (exps.new_full((), base) ** exps).to(d)


def scalar_tensor(s, *, dtype=None, device=None, session=None, requires_grad=False):
    return _api().full((), s, dtype=dtype or _dtypes.get_default_dtype(), device=device, session=session)


def fill(input, value):
    return input.clone().fill_(value)


def _window(name, fn):
    def window(window_length, periodic=True, *, dtype=None, device=None, session=None,
               layout=None, requires_grad=False):
        api = _api()
        dtype = dtype or _dtypes.get_default_dtype()
        if not dtype.is_floating_point:
            raise RuntimeError(f"{name} expects floating point dtypes, got: {dtype}")
        if window_length == 0:
            return api.empty(0, dtype=dtype, device=device, session=session)
        if window_length == 1:
            return api.ones(1, dtype=dtype, device=device, session=session)
        # As torch's: computed in `dtype` (so a dtype whose CPU cos torch lacks is refused).
        n = window_length + 1 if periodic else window_length
        k = api.arange(window_length, dtype=dtype, device=device, session=session)
        return fn(k, n)
    window.__name__ = name
    return window


def _bartlett(k, n):
    w = k * (2.0 / (n - 1))
    first_half = ((n - 1) >> 1) + 1
    if first_half < k.numel():
        w[first_half:] = 2 - w[first_half:]
    return w


hann_window = _window("hann_window",
                      lambda k, n: (k * (2 * math.pi / (n - 1))).cos_().mul_(-0.5).add_(0.5))
hamming_window = _window("hamming_window",
                         lambda k, n: (k * (2 * math.pi / (n - 1))).cos_().mul_(-0.46).add_(0.54))
def _blackman(k, n):
    w = k * (math.pi / (n - 1))
    return (w * 4).cos_().mul_(0.08) - (w * 2).cos_().mul_(0.5) + 0.42


blackman_window = _window("blackman_window", _blackman)
bartlett_window = _window("bartlett_window", _bartlett)

def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, device=None,
                  session=None, layout=None, requires_grad=False):
    """torch.kaiser_window: I0(beta sqrt(1 - ((k - a) / a)^2)) / I0(beta), a = (n - 1) / 2,
    with the server's i0."""
    api = _api()
    dtype = dtype or _dtypes.get_default_dtype()
    if not dtype.is_floating_point:
        raise RuntimeError(f"kaiser_window expects floating point dtypes, got: {dtype}")
    if window_length < 0:
        raise RuntimeError(f"kaiser_window requires non-negative window_length, got "
                           f"window_length={window_length}")
    if window_length == 0:
        return api.empty(0, dtype=dtype, device=device, session=session)
    if window_length == 1:
        return api.ones(1, dtype=dtype, device=device, session=session)
    n = window_length + 1 if periodic else window_length
    k = api.arange(n, dtype=dtype, device=device, session=session)
    alpha = (n - 1) / 2.0
    w = (k - alpha) / alpha
    out = (beta * (1 - w * w).sqrt()).i0() / api.tensor(float(beta), dtype=dtype, device=device,
                                                        session=k._session).i0()
    return out[:window_length] if periodic else out


def put(input, index, source, accumulate=False):
    """torch.put: put_ on a copy."""
    return input.clone().put_(index, source, accumulate)


def row_stack(tensors, *, out=None):
    return write_out(_api().vstack(tensors), out, "row_stack")


def mvlgamma(input, p):
    """The multivariate log-gamma of dimension p, as ATen composes it: the sum of lgamma over
    input - i/2 for i < p, plus p (p - 1) / 4 log(pi)."""
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    api = _api()
    steps = api.arange(-p * 0.5 + 0.5, 0.5, 0.5, dtype=input.dtype if
                       input.dtype.is_floating_point else _dtypes.get_default_dtype(),
                       device=input.device, session=input._session)
    return (steps + input.unsqueeze(-1)).lgamma().sum(-1) + p * (p - 1) * math.log(math.pi) / 4


def float_power_(self, exponent):
    """In place: self must already be float64, the dtype float_power computes in."""
    if self.dtype is not _dtypes.float64:
        raise RuntimeError(f"the base given to float_power_ has dtype {self.dtype._legacy} but "
                           "the operation's result requires dtype Double")
    return self.copy_(self.float_power(exponent))


def fill_diagonal_(self, fill_value, wrap=False):
    """The main diagonal (of a matrix, or of an n-cube) set to fill_value: a strided view filled
    in place; wrap continues it below a tall matrix every cols + 1 rows, as torch's."""
    if self.dim() < 2:
        raise RuntimeError("dimensions must larger than 1")
    n = self.size(0)
    if self.dim() > 2 and any(s != n for s in self.shape):
        raise RuntimeError("all dimensions of input must be of equal length")
    step = sum(self.stride())
    length = min(self.shape)
    if self.dim() == 2 and wrap and self.size(0) > self.size(1) + 1:
        # torch's wrap: positions i * (cols + 1) of the flat rows, all the way down
        rows, cols = self.size(0), self.size(1)
        count = (rows * cols + cols) // (cols + 1)
        flat_ok = self.stride(1) == 1 and self.stride(0) == cols
        if not flat_ok:
            raise RuntimeError("tensord: fill_diagonal_(wrap=True) needs a contiguous matrix")
        length = count
    self.as_strided((length,), (step,), self.storage_offset()).fill_(fill_value)
    return self


_frexp = _return_type("frexp", ["mantissa", "exponent"])


def frexp(input):
    if not input.dtype.is_floating_point:
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    api = _api()
    mag = input.abs()
    nonzero = (mag != 0) & mag.isfinite()
    exponent = api.where(nonzero, (mag.log2().floor() + 1), mag.new_zeros(()))
    mantissa = api.where(nonzero, input / exponent.exp2(), input)
    # log2 rounding at exact powers of two: keep |mantissa| in [0.5, 1).
    big = mantissa.abs() >= 1
    mantissa = api.where(big, mantissa / 2, mantissa)
    exponent = api.where(big, exponent + 1, exponent)
    small = nonzero & (mantissa.abs() < 0.5)
    mantissa = api.where(small, mantissa * 2, mantissa)
    exponent = api.where(small, exponent - 1, exponent)
    return _frexp(mantissa, exponent.to(_dtypes.int32))


def argwhere(input):
    return input.nonzero()


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False, session=None):
    t = _t()
    if isinstance(obj, t):
        out = obj.to(dtype=dtype) if dtype is not None else obj
        out = out.to(device) if device is not None else out
        return out.clone() if copy and out is obj else out
    return _api().as_tensor(obj, dtype=dtype, device=device, session=session)


def typename(obj):
    if isinstance(obj, _t()):
        return f"torch.{'cuda.' if obj.is_cuda else ''}{obj.dtype._legacy}Tensor"
    module = getattr(type(obj), "__module__", "")
    name = type(obj).__qualname__
    return name if module in ("builtins", "", None) else f"{module}.{name}"


def combinations(input, r=2, with_replacement=False):
    import itertools  # noqa: PLC0415
    if input.dim() != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    n = input.size(0)
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    rows = list(pick(range(n), r)) if r > 0 else []
    if not rows:
        return input.new_empty((0, r) if r else (0,))
    index = _api().tensor([i for row in rows for i in row], dtype=_dtypes.int64,
                          device=input.device, session=input._session)
    return input.index_select(0, index).view(len(rows), r)


def range_(start=0, end=None, step=1, *, dtype=None, device=None, session=None,
           requires_grad=False):
    """torch.range: like arange, but `end` included and float32 by default (deprecated in
    torch, kept for its users)."""
    import warnings  # noqa: PLC0415
    warnings.warn("torch.range is deprecated and will be removed in a future release because "
                  "its behavior is inconsistent with Python's range builtin. Instead, use "
                  "torch.arange, which produces values in [start, end).", UserWarning,
                  stacklevel=2)
    if end is None:
        start, end = 0, start
    count = int(math.floor((end - start) / step)) + 1
    return _api().arange(count, dtype=_dtypes.float64, device=device,
                         session=session).mul(step).add(start).to(dtype or _dtypes.get_default_dtype())


def frobenius_norm(input, dim=(), keepdim=False):
    if not dim:
        return input.norm()
    return input.norm("fro", dim, keepdim=keepdim)


def is_storage(obj):
    from ._storage import TypedStorage, UntypedStorage  # noqa: PLC0415
    return isinstance(obj, (TypedStorage, UntypedStorage))


# ---- Sampling ----------------------------------------------------------------------------------

def multinomial(input, num_samples, replacement=False, *, generator=None):
    """One server op (engine/ops/data_dependent_ops.cc): the weights checked where they are
    (two flags read back, so errors raise here as torch's), then the draws from the
    generator's stream: an inverse-CDF binary search with replacement, Gumbel-top-k without."""
    from ._random import _of  # noqa: PLC0415
    rows = input.size(0) if input.dim() == 2 else 1
    n = input.size(-1) if input.dim() else 0
    attrs = {"num_samples": int(num_samples), "replacement": bool(replacement),
             **_of(generator).take(rows * (int(num_samples) if replacement else n))}
    return _run("multinomial", [("self", input)], attrs)


def _fill_random(name, self, draw, attrs=None):
    """self.<name>(…): self filled with draw()'s values, recorded as torch's one op (zero
    gradients: torch does not differentiate through a random fill)."""
    return _graph.composite_in_place(name, [self], attrs,
                                     lambda: self.copy_(draw().to(self.dtype)))


def exponential_(self, lambd=1.0, *, generator=None):
    def draw():
        u = self.new_empty(tuple(self.shape)).uniform_(generator=generator)
        return -(1 - u).log() / lambd
    return _fill_random("exponential_", self, draw)


def geometric_(self, p, *, generator=None):
    def draw():
        u = self.new_empty(tuple(self.shape), dtype=_dtypes.float64).uniform_(
            generator=generator)
        return (u.log() / math.log1p(-p)).ceil().clamp_min(1)
    return _fill_random("geometric_", self, draw)


def cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
    def draw():
        u = self.new_empty(tuple(self.shape)).uniform_(generator=generator)
        return median + sigma * ((u - 0.5) * math.pi).tan()
    return _fill_random("cauchy_", self, draw)


def log_normal_(self, mean=1.0, std=2.0, *, generator=None):
    def draw():
        return self.new_empty(tuple(self.shape)).normal_(mean, std, generator=generator).exp()
    return _fill_random("log_normal_", self, draw)


def bernoulli_(self, p=0.5, *, generator=None):
    """Tensor.bernoulli_: draws of probability p (a number, or a tensor broadcast to self)."""
    if not isinstance(p, _t()):
        return self._bernoulli_(p, generator=generator)

    def draw():
        probs = p.to(self.device, self.dtype if self.dtype.is_floating_point else None)
        return probs.expand(tuple(self.shape)).bernoulli(generator=generator)
    return _graph.composite_in_place("bernoulli_", [self, p], None,
                                     lambda: self.copy_(draw().to(self.dtype)))


_RANDOM_SPAN = {"float16": 1 << 11, "bfloat16": 1 << 8, "float32": 1 << 24, "float64": 1 << 53,
                "bool": 2}


def random_(self, from_=None, to=None, *, generator=None):
    """Integers drawn uniformly from [from, to) (to alone: [0, to); neither: every integer the
    dtype holds exactly, from 0)."""
    from ._info import iinfo  # noqa: PLC0415
    if from_ is None:
        lo = 0
        hi = _RANDOM_SPAN.get(self.dtype.name) or iinfo(self.dtype).max
        if self.dtype.name in _RANDOM_SPAN and self.dtype.name != "bool":
            hi += 1
    elif to is None:
        lo, hi = 0, from_
    else:
        lo, hi = from_, to
    if lo >= hi:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={lo} >= "
                           f"to={hi}")
    return _fill_random("random_", self, lambda: _api().randint(
        lo, hi, tuple(self.shape), dtype=_dtypes.int64, device=self.device,
        session=self._session, generator=generator), {"from": from_, "to": to})


# ---- einsum: diagonals, sums and pairwise batched products (no per-element loops) -------------

def einsum(equation, *operands):
    """torch.einsum: one server op (engine/ops/einsum_ops.cc), planned into diagonals, sums and
    batched matrix products."""
    if not isinstance(equation, str):  # the sublist form: op, [dims], op, [dims], ..., [out]
        equation, operands = _einsum_sublists((equation,) + operands)
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not operands:
        raise ValueError("einsum(): must specify the equation string and at least one operand, "
                         "or at least one operand and its subscripts list")
    from ._ops import _op  # noqa: PLC0415
    return _op(operands[0]._session, "einsum", list(operands), {"equation": str(equation)})


def _einsum_sublists(args):
    """torch.einsum(op0, sub0, op1, sub1, ..., [sub_out]) as (equation, operands): subscripts
    0-25 are a-z, 26-51 A-Z, Ellipsis is '...'."""
    def letters(sub):
        out = []
        for s in sub:
            if s is Ellipsis:
                out.append("...")
            elif isinstance(s, int) and 0 <= s < 52:
                out.append(chr(ord("a") + s) if s < 26 else chr(ord("A") + s - 26))
            else:
                raise ValueError("einsum(): expected subscript to be within the range [0, 52), "
                                 f"but got {s}")
        return "".join(out)

    operands, inputs = [], []
    for i in range(0, len(args) - 1, 2):
        operands.append(args[i])
        inputs.append(letters(args[i + 1]))
    equation = ",".join(inputs)
    if len(args) % 2 == 1:
        equation += "->" + letters(args[-1])
    return equation, tuple(operands)


# ---- Value-returning variants of views (torch's *_copy) ------------------------------------------

def _copy_of(view):
    def copy(input, *args, **kwargs):
        out = getattr(input, view)(*args, **kwargs)
        if isinstance(out, (list, tuple)):
            return type(out)(o.clone() for o in out)
        return out.clone()
    copy.__name__ = view + "_copy"
    return copy


_COPIES = ["alias", "as_strided", "detach", "diagonal", "expand", "permute", "select", "split",
           "squeeze", "t", "transpose", "unbind", "unfold", "unsqueeze", "view"]


# ---- In-place views: self becomes the view (torch changes the tensor's metadata in place) ------

def _becomes(view):
    """Tensor.<view>_: self's handle takes the view's tensor (its id and metadata); the old
    tensor goes with the view object. Other views of self keep theirs, as in torch; self's
    history, where it has one, continues through the map from its old elements to its new."""
    def method(self, *args, **kwargs):
        recording = _graph.active
        if recording:
            _graph.check_in_place(self)
            info = self._meta()
            old = (tuple(info.sizes), tuple(info.strides), info.storage_offset)
            old_shape = tuple(self.shape)
        out = getattr(self, view)(*args, **kwargs)
        out._meta()  # the view's metadata is known before the handles trade places
        self._id, out._id = out._id, self._id
        self._info, out._info = out._info, self._info
        self._error, out._error = out._error, self._error
        if recording:
            _graph.after_view_in_place(self, old, old_shape)
        return self
    method.__name__ = view + "_"
    return method


_IN_PLACE_VIEWS = ["t", "transpose", "swapaxes", "swapdims", "squeeze", "unsqueeze",
                   "as_strided"]


def _take_handle(self, other):
    """self becomes `other` (its id and metadata), as _becomes' views do."""
    other._meta()
    self._id, other._id = other._id, self._id
    self._info, other._info = other._info, self._info
    self._error, other._error = other._error, self._error
    _graph.relink_view(self, same_storage=False)
    return self


def _size_args(name, sizes):
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = tuple(sizes[0])
    for n in sizes:
        if isinstance(n, bool) or not isinstance(n, int):
            raise TypeError(f"{name}(): argument 'size' must be tuple of ints, but found element "
                            f"of type {type(n).__name__}")
    return tuple(int(n) for n in sizes)


def resize_(self, *sizes, memory_format=None):
    """Tensor.resize_: self takes `sizes` with contiguous strides at its storage offset (sizes it
    already has keep its strides). Where the storage is too small, self moves to a larger copy
    of it (the new elements uninitialised, as torch's); other tensors on the old storage keep
    that one (torch grows the storage they share)."""
    shape = _size_args("resize_", sizes)
    if memory_format is not None:
        raise RuntimeError(f"resize_: tensord lays tensors out contiguously only, not in "
                           f"{memory_format}")
    if any(n < 0 for n in shape):
        raise RuntimeError(f"Trying to create tensor with negative dimension "
                           f"{next(n for n in shape if n < 0)}: {list(shape)}")
    if shape == tuple(self.shape):
        return self
    strides, step = [], 1
    for n in reversed(shape):
        strides.insert(0, step)
        step *= max(n, 1)
    numel = math.prod(shape)
    offset = self.storage_offset()
    needed = offset + numel
    storage = self.untyped_storage().nbytes() // self.element_size()
    if numel == 0 or needed <= storage:
        return _take_handle(self, self.as_strided(shape, strides, offset))
    grown = _api().empty(needed, dtype=self.dtype, device=self.device, session=self._session)
    if storage:
        grown[:storage].copy_(self.as_strided((storage,), (1,), 0))
    return _take_handle(self, grown.as_strided(shape, strides, offset))


def resize_as_(self, the_template, memory_format=None):
    """Tensor.resize_as_: resize_ to the template's sizes."""
    return resize_(self, tuple(the_template.shape), memory_format=memory_format)



def _resize_of_autograd(self, sizes):
    """torch 1.13's autograd Resize: the same elements in `sizes` (as given: a tuple inside
    is one size, which never matches), a view of self's storage when self is contiguous."""
    numel = functools.reduce(operator.mul, sizes, 1)
    if self.numel() != numel:
        raise RuntimeError(f"requested resize to {'x'.join(map(str, sizes))} ({numel} elements "
                           f"in total), but the given tensor has a size of "
                           f"{'x'.join(map(str, self.size()))} ({self.numel()} elements). "
                           "autograd's resize can only change the shape of a given tensor, "
                           "while preserving the number of elements. ")
    return self.contiguous().view(*sizes)


def resize(self, *sizes):
    """Tensor.resize (deprecated in torch): a reshaped view or copy, never a new size."""
    warnings.warn("non-inplace resize is deprecated")
    return _resize_of_autograd(self, sizes)


def resize_as(self, tensor):
    warnings.warn("non-inplace resize_as is deprecated")
    return _resize_of_autograd(self, tensor.size())

def set_(self, source=None, storage_offset=0, size=None, stride=None):
    """Tensor.set_: self becomes a view of `source`'s storage (a tensor's, with its metadata, or
    a storage's: all of it, or `size`/`stride` from `storage_offset`); no source: an empty
    tensor of self's dtype."""
    from ._storage import TypedStorage, UntypedStorage  # noqa: PLC0415
    if source is None:
        return _take_handle(self, self.new_empty((0,)))
    if isinstance(source, _t()):
        if source.dtype != self.dtype:
            raise RuntimeError(f"Expected object of scalar type {self.dtype._legacy} but got "
                               f"scalar type {source.dtype._legacy} for argument 'source'")
        return _take_handle(self, source.as_strided(tuple(source.shape), source.stride(),
                                                    source.storage_offset()))
    if not isinstance(source, (TypedStorage, UntypedStorage)):
        raise TypeError(f"set_(): argument 'source' must be Tensor or Storage, not "
                        f"{type(source).__name__}")
    base = (source._typed if isinstance(source, UntypedStorage) else source)._tensor
    if base.dtype != self.dtype:
        raise RuntimeError(f"Expected object of scalar type {self.dtype._legacy} but got scalar "
                           f"type {base.dtype._legacy} for argument 'source'")
    if size is None:
        size, stride, storage_offset = (len(source) if isinstance(source, TypedStorage)
                                        else source.nbytes() // base.element_size(),), (1,), 0
    elif stride is None:
        stride, n = [], 1
        for d in reversed(tuple(size)):
            stride.insert(0, n)
            n *= d
    return _take_handle(self, base.as_strided(tuple(size), tuple(stride), storage_offset))


def detach_(input):
    """Makes `input` a leaf that does not require grad."""
    _graph.detach_in_place(input)
    return input


def sum_to_size(self, *size):
    """self summed over the dims where `size` (which self broadcasts to) is 1 or missing."""
    size = tuple(size[0]) if len(size) == 1 and isinstance(size[0], (list, tuple)) else size
    shape = tuple(self.shape)
    if len(size) > len(shape) or any(s != 1 and s != d for s, d in
                                     zip(size, shape[len(shape) - len(size):])):
        raise RuntimeError(f"size {{{', '.join(str(s) for s in size)}}} is not expandable to "
                           f"size {{{', '.join(str(d) for d in shape)}}}.")
    lead = len(shape) - len(size)
    dims = list(range(lead)) + [lead + i for i, s in enumerate(size)
                                if s == 1 and shape[lead + i] != 1]
    out = self.sum(dims, keepdim=True) if dims else self
    return out.reshape(size) if lead else out


def is_set_to(self, tensor):
    return (self.untyped_storage().data_ptr() == tensor.untyped_storage().data_ptr()
            and self.storage_offset() == tensor.storage_offset()
            and tuple(self.shape) == tuple(tensor.shape) and self.stride() == tensor.stride())


def index_reduce(input, dim, index, source, reduce, *, include_self=True):
    """scatter_reduce along dim with index spread over source's other dims (one server op)."""
    _errors.warn_once("index_reduce", "index_reduce() is in beta and the API may change at any "
                      "time.")
    d = dim % max(source.dim(), 1)
    shape = [1] * source.dim()
    if source.dim():
        shape[d] = index.numel()
    spread = index.reshape(shape).expand(tuple(source.shape)) if source.dim() else index
    out = _scatter_reduce(input, d, spread, source, reduce, include_self)
    _graph.name_node(out, None, "IndexReduceBackward0")
    return out


def index_reduce_(self, dim, index, source, reduce, *, include_self=True):
    return self.copy_(index_reduce(self, dim, index, source, reduce, include_self=include_self))


def _put(input, index, source, accumulate=False):
    return input.clone().put_(index, source, accumulate)


def narrow_copy(input, dim, start, length):
    return input.narrow(dim, start, length).clone()


def split_with_sizes(input, split_sizes, dim=0):
    return input.split(list(split_sizes), dim)


# ---- Slices, splits and norms under torch's internal names ------------------------------------

def _wrap_dim(dim, ndim):
    """dim in [0, ndim), or torch's IndexError (a 0-d tensor takes dims -1 and 0)."""
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {dim})")
    return dim % n


def slice_copy(input, dim=0, start=None, end=None, step=1):
    """torch.slice_copy: a copy of input[start:end:step] along dim."""
    if input.dim() == 0:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    d = _wrap_dim(dim, input.dim())
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    return input[(slice(None),) * d + (slice(start, end, step),)].clone()


def _int_sizes(name, split_sizes):
    if not isinstance(split_sizes, (list, tuple)):
        raise TypeError(f"{name}(): argument 'split_sizes' (position 2) must be tuple of ints, "
                        f"not {type(split_sizes).__name__}")
    return list(split_sizes)


def split_with_sizes_copy(input, split_sizes, dim=0):
    """torch.split_with_sizes_copy: the pieces of split_with_sizes, each a copy."""
    sizes = _int_sizes("split_with_sizes_copy", split_sizes)
    return tuple(t.clone() for t in input.split(sizes, dim))


def _unsafe(parts, node_name):
    """torch's unsafe splits: the parts share the input's storage, but autograd takes them for
    tensors of their own (no _base; an in-place op on one changes no history but its own), under
    torch's node name."""
    for p in parts:
        p._vbase = None
        m = p._ag
        if m is not None:
            m.view = None
            m.own = True
            if m._fn is not None:
                m._fn.rename(node_name)
    return parts


def unsafe_split_with_sizes(input, split_sizes, dim=0):
    """torch.unsafe_split_with_sizes: split_with_sizes whose parts autograd takes for tensors
    of their own."""
    return _unsafe(input.split(_int_sizes("unsafe_split_with_sizes", split_sizes), dim),
                   "UnsafeSplitWithSizesBackward0")


def _unsafe_split(position):
    def unsafe_split(input, split_size, dim=0):
        """torch.unsafe_split: split by one size, the parts taken by autograd for tensors of
        their own."""
        if isinstance(split_size, bool) or not isinstance(split_size, int):
            raise TypeError(f"unsafe_split(): argument 'split_size' (position {position}) must "
                            f"be int, not {type(split_size).__name__}")
        return _unsafe(input.split(split_size, dim), "UnsafeSplitBackward0")
    return unsafe_split


@_autocast.op("cuda_fp32")
def nuclear_norm(input, dim=None, keepdim=False, *, out=None):
    """torch.nuclear_norm: the sum of the singular values of the matrices over dims `dim` (a
    2-d input's own when no dim is given), as linalg.matrix_norm(input, "nuc", dim)."""
    from . import linalg  # noqa: PLC0415 - import cycle
    if isinstance(dim, bool):  # nuclear_norm(input, keepdim)
        dim, keepdim = None, dim
    if dim is None:
        if input.dim() != 2:
            raise RuntimeError(f"Expected a tensor with 2 dimensions, but got a tensor with "
                               f"{input.dim()} dimension{'' if input.dim() == 1 else 's'} "
                               f"instead.")
        dim = (-2, -1)
    dims = [dim, dim] if isinstance(dim, int) else list(dim)  # an int[2] takes one int as two
    if len(dims) != 2:
        raise RuntimeError("nuclear norm requires a 'dim' argument of size 2")
    d0, d1 = (_wrap_dim(d, input.dim()) for d in dims)
    if d0 == d1:
        raise RuntimeError("duplicate or invalid dimensions")
    return write_out(linalg.matrix_norm(input, "nuc", (d0, d1), keepdim), out, "nuclear_norm")


def norm_except_dim(v, pow=2, dim=0):
    """torch.norm_except_dim: the pow-norm of v over every dim but `dim` (over all of them for
    dim=-1), the others kept as size-1 dims (weight normalisation's norm)."""
    if isinstance(pow, bool) or not isinstance(pow, int):
        raise TypeError(f"norm_except_dim(): argument 'pow' (position 2) must be int, not "
                        f"{type(pow).__name__}")
    if dim == -1:
        return v.norm(pow)
    if v.dim() == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    if dim == 0:
        n = v.size(0)
        return v.contiguous().view(n, -1).norm(pow, 1).view([n] + [1] * (v.dim() - 1))
    if dim == v.dim() - 1:
        n = v.size(-1)
        return v.contiguous().view(-1, n).norm(pow, 0).view([1] * (v.dim() - 1) + [n])
    return norm_except_dim(v.transpose(0, dim), pow, 0).transpose(0, dim)


def native_norm(input, p=2, dim=None, keepdim=False, dtype=None):
    """torch.native_norm, torch's norm kernel for sparse tensors (tensord's tensors are all
    dense: it reads all their elements): the p-norm of every element, with that kernel's
    limits (a full reduction only, no keepdim, no dtype)."""
    if dim is not None:
        dims = [dim] if isinstance(dim, int) else list(dim)
        full = len(dims) == input.dim()
        if full:
            full = len({_wrap_dim(d, input.dim()) for d in dims}) == len(dims)
        if dims and not full:
            raise RuntimeError("norm_sparse currently only supports full reductions, so 'dim' "
                               "must either be empty or contain all dimensions of the input")
    if keepdim:
        raise RuntimeError("norm_sparse currently does not support keepdim=True")
    if dtype is not None:
        raise RuntimeError("norm_sparse currently does not support 'dtype' argument")
    return input.norm(2 if p is None else p)


def as_strided_scatter(input, src, size, stride, storage_offset=None):
    """torch.as_strided_scatter: a copy of input (laid out as input) with src written into its
    as_strided(size, stride, storage_offset) view."""
    if list(size) != list(src.shape):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = "
                           f"{list(src.shape)}, slice size = {list(size)}")
    out = input.clone()
    out.as_strided(size, stride, storage_offset).copy_(src)
    return out


def get_device(input):
    """torch.get_device: -1 for a CPU tensor, else its CUDA device's index."""
    if not isinstance(input, _t()):
        raise TypeError(f"get_device(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    return input.get_device()


_symeig = _return_type("symeig", ["eigenvalues", "eigenvectors"])
_SYMEIG_WARNING = (
    "torch.symeig is deprecated in favor of torch.linalg.eigh and will be removed in a future "
    "PyTorch release.\nThe default behavior has changed from using the upper triangular portion "
    "of the matrix by default to using the lower triangular portion.\nL, _ = torch.symeig(A, "
    "upper=upper)\nshould be replaced with\nL = torch.linalg.eigvalsh(A, UPLO='U' if upper else "
    "'L')\nand\nL, V = torch.symeig(A, eigenvectors=True)\nshould be replaced with\nL, V = "
    "torch.linalg.eigh(A, UPLO='U' if upper else 'L')")


def symeig(input, eigenvectors=False, upper=True, *, out=None):
    """torch.symeig (deprecated in torch, which warns once): linalg.eigh of the upper or lower
    triangle; without eigenvectors, linalg.eigvalsh and an empty eigenvectors tensor."""
    from . import linalg  # noqa: PLC0415 - import cycle
    _errors.warn_once("symeig", _SYMEIG_WARNING)
    if input.dim() < 2:
        raise RuntimeError("linalg.symeig: The input tensor A must have at least 2 dimensions.")
    if input.size(-1) != input.size(-2):
        raise RuntimeError(f"linalg.symeig: A must be batches of square matrices, but they are "
                           f"{input.size(-2)} by {input.size(-1)} matrices")
    if input.dtype not in (_dtypes.float32, _dtypes.float64):
        raise RuntimeError(f"\"symeig_cpu\" not implemented for '{input.dtype._legacy}'")
    uplo = "U" if upper else "L"
    if eigenvectors:
        result = _symeig(*linalg.eigh(input, uplo))
    else:
        values = linalg.eigvalsh(input, uplo)
        result = _symeig(values, values.new_empty((0,)))
    return write_out(result, out, "symeig")


# ---- torch.gradient: central differences by slices and arithmetic -------------------------------

_GRADIENT_OVERLOADS = (
    " * (Tensor input, *, tuple of ints dim, int edge_order)\n"
    " * (Tensor input, *, Number spacing, tuple of ints dim, int edge_order)\n"
    " * (Tensor input, *, Number spacing, int dim, int edge_order)\n"
    " * (Tensor input, *, tuple of Scalars spacing, int dim, int edge_order)\n"
    " * (Tensor input, *, tuple of Scalars spacing, tuple of ints dim, int edge_order)\n"
    " * (Tensor input, *, tuple of Tensors spacing, int dim, int edge_order)\n"
    " * (Tensor input, *, tuple of Tensors spacing, tuple of ints dim, int edge_order)\n")


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def _is_number(v):
    return isinstance(v, numbers.Number) and not isinstance(v, complex)


def _gradient_bad_args(given):
    def desc(v):
        return "Tensor" if isinstance(v, _t()) else type(v).__name__
    got = ", ".join(["Tensor"] + [f"{k}={desc(v)}" for k, v in sorted(given.items())])
    return TypeError(f"gradient() received an invalid combination of arguments - got ({got}), "
                     f"but expected one of:\n{_GRADIENT_OVERLOADS}")


def _side(x, d, start, stop):
    """x[start:stop] along dim d (negative bounds count from the end, as slices do)."""
    n = x.size(d)
    lo, hi, _ = slice(start, stop).indices(n)
    return x.narrow(d, lo, max(hi - lo, 0))


def _gradient_uniform(x, d, h, edge_order):
    """One dim's gradient with sample distance h, torch's formulas: central differences inside,
    one-sided ones of order edge_order at both ends."""
    center = (_side(x, d, 2, None) - _side(x, d, 0, -2)) / h
    if edge_order == 1:
        first = (_side(x, d, 1, 2) - _side(x, d, 0, 1)) / h
        last = (_side(x, d, -1, None) - _side(x, d, -2, -1)) / h
    else:
        first = (_side(x, d, 0, 1) * -1.5 + _side(x, d, 1, 2) * 2 + _side(x, d, 2, 3) * -0.5) / h
        last = (_side(x, d, -3, -2) * 0.5 + _side(x, d, -2, -1) * -2
                + _side(x, d, -1, None) * 1.5) / h
    return _api().cat([first, center / 2, last], d)


def _gradient_coordinates(x, d, coords, edge_order):
    """One dim's gradient at the sample coordinates `coords` (1-d), torch's second-order
    formulas for uneven spacing inside and at edge_order 2's ends."""
    if coords.dim() != 1:
        raise RuntimeError(f"torch.gradient expected each element of spacing to have one "
                           f"dimension, but got an element with {coords.dim()} dimensions!")
    shape = [1] * x.dim()
    shape[d] = -1
    h = diff(coords, 1, 0)
    h1, h2 = _side(h, 0, 0, -1), _side(h, 0, 1, None)
    a = (-h2 / (h1 * (h1 + h2))).reshape(shape)
    b = ((h2 - h1) / (h1 * h2)).reshape(shape)
    c = (h1 / (h2 * (h1 + h2))).reshape(shape)
    center = a * _side(x, d, 0, -2) + b * _side(x, d, 1, -1) + c * _side(x, d, 2, None)
    if edge_order == 1:
        first = (_side(x, d, 1, 2) - _side(x, d, 0, 1)) / h[0]
        last = (_side(x, d, -1, None) - _side(x, d, -2, -1)) / h[-1]
    else:
        h0, h1_, hl, hl2 = h[0], h[1], h[-1], h[-2]
        a = -(2.0 * h0 + h1_) / (h0 * (h0 + h1_))
        b = (h0 + h1_) / (h0 * h1_)
        c = -h0 / (h1_ * (h0 + h1_))
        first = a * _side(x, d, 0, 1) + b * _side(x, d, 1, 2) + c * _side(x, d, 2, 3)
        a = hl / (hl2 * (hl + hl2))
        b = -(hl + hl2) / (hl * hl2)
        c = (2 * hl + hl2) / (hl * (hl + hl2))
        last = a * _side(x, d, -3, -2) + b * _side(x, d, -2, -1) + c * _side(x, d, -1, None)
    return _api().cat([first, center, last], d)


def gradient(input, *, spacing=1, dim=None, edge_order=1):
    """torch.gradient: the derivative estimate of input along each of `dim` (all dims when
    None) by central differences inside and one-sided ones of order edge_order at the ends;
    spacing is one sample distance, one per dim, or each dim's sample coordinates."""
    t = _t()
    if not isinstance(input, t):
        raise TypeError(f"gradient(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    given = {}  # the arguments torch's message lists: those not left at their defaults
    if not (spacing is None or (type(spacing) in (int, float) and spacing == 1)):
        given["spacing"] = spacing
    if dim is not None:
        given["dim"] = dim
    if not (type(edge_order) is int and edge_order == 1):
        given["edge_order"] = edge_order
    # torch's overloads: dim an int or ints; spacing a number, numbers or tensors.
    if not _is_int(edge_order):
        raise _gradient_bad_args(given)
    if dim is not None and not _is_int(dim) and not (
            isinstance(dim, (list, tuple)) and all(_is_int(d) for d in dim)):
        raise _gradient_bad_args(given)
    if isinstance(spacing, t) and spacing.dim() == 0:
        spacing = spacing.item()
    coordinates = None
    if spacing is None:
        steps = None
    elif _is_number(spacing):
        steps = None
        unit = int(spacing) if isinstance(spacing, bool) else spacing
    elif isinstance(spacing, (list, tuple)):
        if spacing and all(_is_number(s) for s in spacing):
            steps = [int(s) if isinstance(s, bool) else s for s in spacing]
        else:
            for i, s in enumerate(spacing):
                if not isinstance(s, t):
                    raise TypeError(f"expected Tensor as element {i} in argument 1, but got "
                                    f"{type(s).__name__}")
            steps, coordinates = list(spacing), list(spacing)
    else:
        raise _gradient_bad_args(given)
    if input.dtype is _dtypes.uint8:
        raise RuntimeError("torch.gradient does not support uint8 input.")
    nd = input.dim()
    dims = None if dim is None else ([dim] if _is_int(dim) else list(dim))
    if steps is None:  # a number (or none): that distance in every dim asked for
        unit = 1 if spacing is None else unit
        steps = [unit] * (len(dims) if dims is not None else nd)
    elif dims is None:
        if len(steps) != nd and not (len(steps) == 1 and nd == 0):
            # (torch 1.13 takes a 1-long list for any input, then reads past its end)
            raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar or "
                               f"a list of length {nd} but got a list of length {len(steps)}")
    elif len(steps) != len(dims):
        raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar or it's "
                           f"spacing and dim arguments to have the same length, but got a "
                           f"spacing argument of length {len(steps)} and a dim argument of "
                           f"length {len(dims)}.")
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    if dims is not None:
        wrapped = []
        for d in dims:
            d = _wrap_dim(d, nd)
            if d in wrapped:
                raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
            wrapped.append(d)
        if nd == 0 and wrapped:
            raise IndexError(f"Dimension specified as {dims[0]} but tensor has no dimensions")
        dims = wrapped
    else:
        dims = list(range(nd))
    if any(input.size(d) < edge_order + 1 for d in dims):
        raise RuntimeError("torch.gradient expected each dimension size to be at least "
                           "edge_order+1")
    if coordinates is not None:
        return tuple(_gradient_coordinates(input, d, c, edge_order)
                     for d, c in zip(dims, coordinates))
    return tuple(_gradient_uniform(input, d, h, edge_order) for d, h in zip(dims, steps))


# ---- Tensor.apply_, map_, map2_: a Python callable per element, as torch runs them on CPU ------

_INT_RANGE = {"uint8": (0, 255), "int8": (-128, 127), "int16": (-(1 << 15), (1 << 15) - 1),
              "int32": (-(1 << 31), (1 << 31) - 1), "int64": (-(1 << 63), (1 << 63) - 1)}


def _as_double(v):
    """The value as a C double, as CPython's PyFloat_AsDouble reads it."""
    if isinstance(v, float):
        return float(v)
    cls = type(v)
    if hasattr(cls, "__float__"):
        return float(v)
    if hasattr(cls, "__index__"):
        return float(operator.index(v))
    raise TypeError(f"must be real number, not {cls.__name__}")


def _stored(v, dtype):
    """A callable's result as torch stores it in an element of `dtype` (store_scalar): floats
    through a C double, integers checked for overflow (floats truncated toward zero; uint8 takes
    -255..255, wrapping the negatives), bools by truth."""
    if dtype.is_floating_point:
        return _as_double(v)
    if dtype is _dtypes.bool_:
        if isinstance(v, float):
            return bool(v)
        return bool(operator.index(v))
    lo, hi = _INT_RANGE[dtype.name]
    if isinstance(v, float):
        if v != v or v < lo or v > hi:
            raise RuntimeError(f"value cannot be converted to type {dtype.name} without overflow")
        return int(v)
    i = operator.index(v)
    if not -(1 << 63) <= i < (1 << 63):
        raise RuntimeError("Overflow when unpacking long")
    if dtype is _dtypes.uint8:
        if i > 255 or i < -255:
            raise RuntimeError("value cannot be converted to type uint8 without overflow")
        return i & 0xFF
    if not lo <= i <= hi:
        raise RuntimeError(f"value cannot be converted to type {dtype.name} without overflow")
    return i


def _type_string(t, dtype=None):
    """A tensor's type (or that of `dtype` on its device) as torch's messages print it
    (torch.FloatTensor, torch.cuda.LongTensor)."""
    cuda = t.device.type == "cuda"
    dtype = t.dtype if dtype is None else dtype
    if dtype is _dtypes.bfloat16:
        return f"{'CUDA' if cuda else 'CPU'}BFloat16Type"
    return f"torch.{'cuda.' if cuda else ''}{dtype._legacy}Tensor"


def _write_values(self, values):
    """self's elements (in row-major order of its sizes) set to `values`, laid out as self."""
    d = self.dtype
    if d.is_floating_point:
        arr = np.array(values, dtype=np.float64)
        with np.errstate(over="ignore", invalid="ignore"):
            if d is not _dtypes.float64:  # a double rounded to float first, as torch casts
                arr = arr.astype(np.float32)
            if d is _dtypes.float16:
                arr = arr.astype(np.float16)
    elif d is _dtypes.bool_:
        arr = np.array(values, dtype=bool)
    else:
        arr = np.array(values, dtype=np.int64).astype(d._np)
    from . import _factories  # noqa: PLC0415
    new = _factories.tensor(arr.reshape(tuple(self.shape)), dtype=d, device=self.device,
                            session=self._session)
    self.copy_(new)


def _apply_python(self, fn, others):
    """Calls fn on each element of self (with the matching elements of `others`, already
    expanded to self's shape) in row-major order and stores the results into self. As in
    torch, the elements done before a callable raises keep their new values."""
    if self.numel() == 0:
        return self
    values = self.reshape(-1).tolist()
    columns = [o.reshape(-1).tolist() for o in others]
    out = []
    try:
        for args in zip(values, *columns):
            out.append(_stored(fn(*args), self.dtype))
    except BaseException:
        if out:
            _write_values(self, out + values[len(out):])
        raise
    _write_values(self, out)
    return self


def apply_(self, callable):
    """Tensor.apply_: each element replaced by callable(element), a Python call per element on
    the client (CPU tensors only, as torch)."""
    if self.device.type != "cpu":
        raise TypeError("apply_ is only implemented on CPU tensors")
    return _apply_python(self, callable, [])


def map_(self, other, callable):
    """Tensor.map_: each element replaced by callable(element, other's), other of self's type
    and broadcast to self's shape (CPU tensors only, as torch)."""
    if not isinstance(other, _t()):
        raise TypeError(f"map_(): argument 'other' (position 1) must be Tensor, not "
                        f"{type(other).__name__}")
    if other.dtype is not self.dtype or other.device.type != self.device.type:
        raise TypeError(f"map_: expected {_type_string(self)} for 'other' (got "
                        f"{_type_string(other)})")
    if self.device.type != "cpu":
        raise TypeError("map_ is only implemented on CPU tensors")
    return _apply_python(self, callable, [other.expand(tuple(self.shape))])


def map2_(self, x, y, callable):
    """Tensor.map2_: each element replaced by callable(element, x's, y's), x and y of self's
    type and broadcast to self's shape (CPU tensors only, as torch)."""
    for name, pos, v in (("x", 1, x), ("y", 2, y)):
        if not isinstance(v, _t()):
            raise TypeError(f"map2_(): argument '{name}' (position {pos}) must be Tensor, not "
                            f"{type(v).__name__}")
    for name, v in (("x", x), ("y", y)):
        if v.dtype is not self.dtype or v.device.type != self.device.type:
            raise TypeError(f"map2_: expected {_type_string(self)} for argument '{name}' (got "
                            f"{_type_string(v)})")
    if any(t.device.type != "cpu" for t in (self, x, y)):
        raise TypeError("map2_ is only implemented on CPU tensors")
    shape = tuple(self.shape)
    return _apply_python(self, callable, [x.expand(shape), y.expand(shape)])


# ---- torch.segment_reduce: one scatter_reduce over segments found by searchsorted -------------

_TORCH_CHECK_TAIL = ("  (Could this error message be improved?  If so, please report an "
                     "enhancement request to PyTorch.)")
_SEGMENT_IDENTITY = {"sum": 0.0, "mean": 0.0, "prod": 1.0, "max": -math.inf, "min": math.inf}
_SEGMENT_SCATTER = {"sum": "sum", "mean": "sum", "prod": "prod", "max": "amax", "min": "amin"}
_FLOAT_LIMITS = {"float16": (65504.0, "at::Half"), "bfloat16": (3.3895313892515355e38,
                                                                "at::BFloat16"),
                 "float32": (3.4028234663852886e38, "float")}


def _check_failed(condition):
    return RuntimeError(f"Expected {condition} to be true, but got false.{_TORCH_CHECK_TAIL}")


def segment_reduce(data, reduce, *, lengths=None, indices=None, offsets=None, axis=0,
                   unsafe=False, initial=None):
    """torch.segment_reduce: data reduced ('sum', 'mean', 'max', 'min', 'prod') over segments
    of dim `axis` given by lengths or offsets (offsets first when both; indices are not
    supported, as in torch); an empty segment gives `initial`, else the reduction's identity
    (nan for 'mean')."""
    t = _t()
    if not isinstance(data, t):
        raise TypeError(f"segment_reduce(): argument 'data' (position 1) must be Tensor, not "
                        f"{type(data).__name__}")
    if not isinstance(reduce, str):
        raise TypeError(f"segment_reduce(): argument 'reduce' (position 2) must be str, not "
                        f"{type(reduce).__name__}")
    for name, v in (("lengths", lengths), ("indices", indices), ("offsets", offsets)):
        if v is not None and not isinstance(v, t):
            raise TypeError(f"segment_reduce(): argument '{name}' must be Tensor, not "
                            f"{type(v).__name__}")
    if not _is_int(axis):
        raise TypeError(f"segment_reduce(): argument 'axis' must be int, not "
                        f"{type(axis).__name__}")
    if not isinstance(unsafe, bool):
        raise TypeError(f"segment_reduce(): argument 'unsafe' must be bool, not "
                        f"{type(unsafe).__name__}")
    if isinstance(initial, t):
        if initial.dim() != 0:
            raise TypeError("segment_reduce(): argument 'initial' must be Number, not Tensor")
        initial = initial.item()
    if initial is not None:
        if not _is_number(initial):
            raise TypeError(f"segment_reduce(): argument 'initial' must be Number, not "
                            f"{type(initial).__name__}")
        if _is_int(initial) and not -(1 << 63) <= initial < (1 << 63):
            raise RuntimeError("Overflow when unpacking long")
        initial = float(initial)
    nd = data.dim()
    axis = _wrap_dim(axis, nd)
    if data.numel() == 0:
        raise _check_failed("data.numel() > 0")
    if indices is not None:
        raise RuntimeError("segment_reduce(): indices based reduction is not supported yet.")
    if lengths is None and offsets is None:
        raise RuntimeError("segment_reduce(): Either lengths or offsets must be defined.")
    if reduce not in _SEGMENT_IDENTITY:
        raise RuntimeError(f"unsupported reduction given! {reduce}")
    by_offsets = offsets is not None
    name = "offsets" if by_offsets else "lengths"
    seg = offsets if by_offsets else lengths
    if seg.device != data.device:
        raise _check_failed(f"data.get_device() == {name}_value.get_device()")
    if nd < seg.dim():
        raise _check_failed(f"data.dim() >= {name}_value.dim()")
    if axis != seg.dim() - 1:
        raise RuntimeError(f"segment_reduce(): Expected axis to be the last dimension of {name} "
                           f"but got {axis}.")
    size = data.size(axis)
    api = _api()
    if not by_offsets and not unsafe:
        if seg.numel() == 0:
            raise RuntimeError("min(): Expected reduction dim to be specified for input.numel() "
                               "== 0. Specify the reduction dim with the 'dim' argument.")
        low, whole = api.stack([seg.min().to(_dtypes.float64),
                                (seg.sum(-1) == size).all().to(_dtypes.float64)]).tolist()
        if int(low) < 0:
            raise RuntimeError("lengths contains negative value!")
        if not whole:
            raise RuntimeError("segment_reduce(): Expected all rows of lengths along axis to sum "
                               "to data.size(lengths.dim()-1) when !unsafe.")
    if seg.dtype not in (_dtypes.int32, _dtypes.int64):
        raise RuntimeError(f"\"_segment_reduce_{name}_cpu_kernel1\" not implemented for "
                           f"'{seg.dtype._legacy}'")
    if not data.dtype.is_floating_point:
        raise RuntimeError(f"\"_segment_reduce_cpu\" not implemented for '{data.dtype._legacy}'")
    if tuple(seg.shape[:-1]) != tuple(data.shape[:axis]):
        raise RuntimeError(f"segment_reduce(): expected the leading sizes of {name} "
                           f"{list(seg.shape[:-1])} to be those of data before axis "
                           f"{list(data.shape[:axis])}")
    count = seg.size(-1) - (1 if by_offsets else 0)
    out_shape = list(data.shape[:axis]) + [count] + list(data.shape[axis + 1:])
    if count < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {count}: "
                           f"{out_shape}")
    if initial is not None and count > 0 and data.dtype.name in _FLOAT_LIMITS:
        limit, cname = _FLOAT_LIMITS[data.dtype.name]
        if math.isfinite(initial) and abs(initial) > limit:
            raise RuntimeError(f"value cannot be converted to type {cname} without overflow")
    if count == 0:
        return data.new_empty(tuple(out_shape))
    seg = seg.to(_dtypes.int64)
    last = seg.dim() - 1
    if by_offsets:
        starts, ends = seg.narrow(last, 0, count), seg.narrow(last, 1, count)
    else:
        ends = seg.cumsum(-1)
        starts = ends - seg
    widths = ends - starts
    if (by_offsets or unsafe) and bool((widths < 0).any()):
        raise _check_failed("segment_length >= 0")
    # Each position's segment: the number of segment ends at or before it; positions before
    # the first start or past the last end go to a spare segment `count`, dropped at the end.
    lead = tuple(data.shape[:axis])
    positions = api.arange(size, dtype=_dtypes.int64, device=data.device,
                           session=data._session)
    positions = positions.expand(lead + (size,)).contiguous()
    which = searchsorted(ends.contiguous(), positions, right=True)
    outside = which >= count
    if by_offsets:
        outside = outside | (positions < seg.narrow(last, 0, 1))
    which = which.masked_fill(outside, count)
    inner = data.dim() - axis - 1
    which = which.reshape(lead + (size,) + (1,) * inner).expand(tuple(data.shape))
    start = _SEGMENT_IDENTITY[reduce] if initial is None else initial
    out = api.full(tuple(lead + (count + 1,) + tuple(data.shape[axis + 1:])), start,
                   dtype=data.dtype, device=data.device, session=data._session)
    out = _scatter_reduce_(out, axis, which, data, _SEGMENT_SCATTER[reduce])
    out = out.narrow(axis, 0, count)
    if reduce == "mean":
        n = widths.reshape(lead + (count,) + (1,) * inner).to(data.dtype)
        empty = out if initial is not None else out.new_full((), math.nan)
        out = api.where(n > 0, out / n, empty)
    return out.contiguous()


# ---- Installing -------------------------------------------------------------------------------

# Tensor methods (self first) and torch functions that share the composition.
_BOTH = ["addmv", "addr", "baddbmm", "addbmm", "fliplr", "flipud", "rot90", "ravel", "tile",
         "diag", "diagflat", "diag_embed", "trace", "select_scatter", "diagonal_scatter",
         "slice_scatter", "ldexp", "positive",
         "nansum", "nanmean", "aminmax", "diff", "logcumsumexp", "cummax", "cummin",
         "take_along_dim", "is_nonzero",
         "is_same_size", "is_signed", "kron", "vdot", "cross", "dist", "renorm",
         "isin", "bincount", "histc", "histogram", "median", "nanmedian", "quantile", "nanquantile", "unique",
         "unique_consecutive",
         "repeat_interleave", "index_add", "index_copy", "index_fill", "masked_scatter",
         "scatter_reduce",
         "narrow_copy", "hsplit",
         "vsplit", "dsplit", "split_with_sizes", "unsafe_split_with_sizes", "as_strided_scatter",
         "symeig"]
_METHODS_ONLY = ["index_add_", "index_copy_", "index_fill_", "masked_scatter_", "scatter_reduce_",
                 "exponential_", "geometric_", "cauchy_", "log_normal_", "random_", "bernoulli_",
                 "float_power_", "fill_diagonal_", "apply_", "map_", "map2_"]
_BOTH += ["frexp", "multinomial", "cov", "corrcoef", "mvlgamma", "mode", "stft", "istft"]
_FUNCTIONS_ONLY = ["histogramdd", "broadcast_shapes", "broadcast_tensors", "atleast_1d", "atleast_2d",
                   "atleast_3d", "column_stack", "dstack", "rsub", "std_mean", "var_mean",
                   "chain_matmul", "tensordot", "cdist", "block_diag", "trapezoid", "trapz",
                   "cumulative_trapezoid", "vander", "bucketize", "put", "row_stack", "kaiser_window",
                   "searchsorted", "tril_indices", "triu_indices", "logspace", "scalar_tensor",
                   "fill", "hann_window", "hamming_window", "blackman_window", "bartlett_window",
                   "argwhere", "asarray", "typename", "combinations", "frobenius_norm",
                   "is_storage", "einsum", "slice_copy", "split_with_sizes_copy", "nuclear_norm",
                   "norm_except_dim", "native_norm", "get_device", "gradient", "segment_reduce"]
# In-place forms computed then copied into self.
_IN_PLACE = ["addmv", "addr", "baddbmm", "addbmm", "ldexp", "renorm", "mvlgamma"]
# torch's module-level in-place functions: input.<name>(…).
_MODULE_IN_PLACE = ["abs_", "acos_", "acosh_", "arccos_", "arccosh_", "arcsin_", "arcsinh_",
                    "arctan_", "arctanh_", "asin_", "asinh_", "atan_", "atanh_", "ceil_",
                    "clamp_", "clamp_max_", "clamp_min_", "clip_", "cos_", "cosh_", "deg2rad_",
                    "erf_", "erfc_", "exp2_", "exp_", "expm1_", "fix_", "floor_", "frac_",
                    "log10_", "log1p_", "log2_", "log_", "logit_", "nan_to_num_", "neg_",
                    "negative_", "rad2deg_", "reciprocal_", "relu_", "round_", "rsqrt_",
                    "sigmoid_", "sin_", "sinc_", "sinh_", "sqrt_", "square_", "tan_", "tanh_",
                    "trunc_", "zero_", "fill_", "index_put_", "xlogy_", "ldexp_", "addmv_",
                    "gcd_", "lcm_", "i0_"]


def _module_in_place(name):
    def f(input, *args, **kwargs):
        return getattr(input, name)(*args, **kwargs)
    f.__name__ = name
    return f


def _comparison_in_place(op):
    def method(self, other):
        return self.copy_(getattr(self, op)(other))
    method.__name__ = op + "_"
    return method


def install(tensor_class, namespace):
    here = globals()
    for view in _IN_PLACE_VIEWS:
        setattr(tensor_class, view + "_", _becomes(view))
    namespace["as_strided_"] = tensor_class.as_strided_
    tensor_class.resize_ = resize_
    tensor_class.resize_as_ = resize_as_
    namespace["resize_as_"] = resize_as_
    tensor_class.resize = resize
    tensor_class.resize_as = resize_as
    tensor_class.set_ = set_
    for name in ("detach_", "index_reduce"):
        setattr(tensor_class, name, here[name])
        namespace[name] = here[name]
    for name in ("sum_to_size", "is_set_to", "index_reduce_"):
        setattr(tensor_class, name, here[name])
    tensor_class.put = _put
    tensor_class.addmm_ = lambda self, mat1, mat2, *, beta=1, alpha=1: self.copy_(
        self.addmm(mat1, mat2, beta=beta, alpha=alpha))
    tensor_class.new_empty_strided = lambda self, size, stride, dtype=None, device=None, \
        requires_grad=False: _api().empty_strided(size, stride, **self._new_args(dtype, device))
    for name in _BOTH:
        setattr(tensor_class, name, here[name])
        namespace[name] = here[name]
    for name in _METHODS_ONLY:
        setattr(tensor_class, name, here[name])
    for name in _FUNCTIONS_ONLY:
        namespace[name] = here[name]
    for name in _IN_PLACE:
        setattr(tensor_class, name + "_", _in_place(here[name]))
    for op in ("greater", "greater_equal", "less", "less_equal", "not_equal", "logical_and",
               "logical_or", "logical_xor", "eq", "ne", "lt", "le", "gt", "ge"):
        if not hasattr(tensor_class, op + "_") and hasattr(tensor_class, op):
            setattr(tensor_class, op + "_", _comparison_in_place(op))
    tensor_class.logical_not_ = lambda self: self.copy_(self.logical_not())
    tensor_class.cumsum_ = lambda self, dim, *, dtype=None: self.copy_(self.cumsum(dim, dtype=dtype))
    tensor_class.cumprod_ = lambda self, dim, *, dtype=None: self.copy_(self.cumprod(dim, dtype=dtype))
    for view in _COPIES:
        namespace[view + "_copy"] = _copy_of(view)
    for name in _MODULE_IN_PLACE:
        if hasattr(tensor_class, name) and name not in namespace:
            namespace[name] = _module_in_place(name)
    namespace["range"] = range_
    namespace["is_inference"] = lambda input: input._inference  # made in inference mode
    namespace["is_neg"] = lambda input: False  # no lazy negation bits (complex conjugation)
    tensor_class.is_inference = lambda self: self._inference
    tensor_class.is_neg = lambda self: False
    namespace["unsafe_chunk"] = lambda input, chunks, dim=0: input.chunk(chunks, dim)
    namespace["unsafe_split"] = _unsafe_split(2)
    tensor_class.unsafe_chunk = lambda self, chunks, dim=0: self.chunk(chunks, dim)
    tensor_class.unsafe_split = _unsafe_split(1)


_graph.honour_requires_grad_in(globals())
