"""The compute methods of tensord.Tensor: torch's elementwise ops and operators, reductions,
matrix products, indexing ops and random draws, defined in the body of _ComputeMethods, which
Tensor (_tensor.py) derives from. Every op runs on the server (queued on the session's stream);
Python numbers travel as numbers, with torch's type promotion rules applied there.

Layers import one way: _session, _random -> _ops -> _factories -> _compute -> _tensor -> _api.
"""

import numpy as np

from ._out import write_out
from . import _autocast
from . import _compare
from . import _dtypes, _factories
from .return_types import _make as _return_type
from ._ops import TensorBase, _Ints, _int, _is_scalar, _op, _py_scalar, _queue
from ._random import _of as _random_of

_ROUNDING = {None: None, "trunc": 1, "floor": 2}


_FAST_NUMBERS = (int, float, bool)


def _scalar_or_tensor(x, op, name):
    if type(x) in _FAST_NUMBERS or isinstance(x, TensorBase):
        return x
    if _is_scalar(x):
        return _py_scalar(x)
    raise TypeError(f"{op}(): argument '{name}' must be Tensor or Number, not {type(x).__name__}")


def _session_of(*xs):
    for x in xs:
        if isinstance(x, TensorBase):
            return x._session
    raise TypeError("expected at least one tensord Tensor")


def _split(operands, attrs):
    inputs, extra = [], dict(attrs) if attrs else {}
    for key, v in operands:
        if isinstance(v, TensorBase):
            inputs.append(v)
        else:
            extra[key] = v
    return inputs, extra or None


def _run(name, operands, attrs=None):
    """Runs op `name` whose inputs are `operands` (name -> Tensor, number or None, in the op's
    input order); numbers and None go as attributes."""
    inputs, extra = _split(operands, attrs)
    s = _session_of(*(v for _, v in operands))
    return _op(s, name, inputs, extra)


def _inplace(self, name, operands, attrs=None):
    """An in-place op: sent without an output id (self is what changes)."""
    inputs, extra = _split([("self", self)] + operands, attrs)
    _op(self._session, name, inputs, extra, returns_nothing=True)
    return self


def _run_n(name, inputs, attrs, n):
    return _queue(inputs[0]._session, name, inputs, attrs, n)


_UNARY = ["neg", "negative", "abs", "absolute", "sign", "sgn", "exp", "exp2", "expm1", "log",
          "log1p", "log2", "log10", "sqrt", "rsqrt", "sin", "cos", "tan", "asin", "acos", "atan",
          "sinh", "cosh", "tanh", "erf", "sigmoid", "relu", "silu", "floor", "ceil", "trunc",
          "fix", "frac", "reciprocal", "bitwise_not", "square"]
# Special functions: torch.<name>, Tensor.<name> and Tensor.<name>_ (one server op each).
_SPECIAL = ["acosh", "asinh", "atanh", "arccosh", "arcsinh", "arctanh", "arcsin", "arccos",
            "arctan", "erfc", "erfinv", "lgamma", "digamma", "sinc", "deg2rad", "rad2deg", "i0"]


_UNARY_NO_INPLACE = ["logical_not", "isnan", "isinf", "isposinf", "isneginf", "isfinite",
                     "signbit"]


_BINARY = ["mul", "multiply", "true_divide", "floor_divide", "remainder", "fmod", "pow",
           "atan2", "arctan2", "copysign", "hypot", "xlogy", "bitwise_and", "bitwise_or", "bitwise_xor",
           "bitwise_left_shift", "bitwise_right_shift", "eq", "ne", "lt", "le", "gt", "ge",
           "nextafter", "heaviside", "gcd", "lcm", "igamma", "igammac"]


_BINARY_NO_INPLACE = ["maximum", "minimum", "fmax", "fmin", "logical_and", "logical_or",
                      "logical_xor", "greater", "less", "greater_equal", "less_equal",
                      "not_equal", "float_power", "logaddexp", "logaddexp2"]


def _unary(name):
    def f(self):
        return _run(name, [("self", self)])
    f.__name__ = name
    return f


def _unary_(name):
    def f(self):
        return _inplace(self, name + "_", [])
    f.__name__ = name + "_"
    return f


_TENSOR_OTHER = {"maximum", "minimum", "fmax", "fmin", "atan2", "arctan2", "hypot", "logical_and",
                 "logical_or", "logical_xor", "logaddexp", "logaddexp2", "nextafter", "heaviside",
                 "gcd", "lcm", "igamma", "igammac"}


_NUMBER_FIRST = {"add", "sub", "mul", "div", "true_divide", "floor_divide", "remainder", "pow",
                 "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift",
                 "bitwise_right_shift", "float_power", "xlogy", "multiply", "subtract", "divide"}


def _tensor_other(name, other):
    if name in _TENSOR_OTHER and not isinstance(other, TensorBase):
        raise TypeError(f"{name}(): argument 'other' (position 2) must be Tensor, not "
                        f"{type(other).__name__}")


def _binary(name):
    def f(self, other):
        _tensor_other(name, other)
        return _run(name, [("self", self), ("other", _scalar_or_tensor(other, name, "other"))])
    f.__name__ = name
    return f


def _binary_(name):
    def f(self, other):
        _tensor_other(name, other)
        return _inplace(self, name + "_", [("other", _scalar_or_tensor(other, name, "other"))])
    f.__name__ = name + "_"
    return f


def _float_power(self, other):
    s = self.to(_dtypes.float64)
    o = other.to(_dtypes.float64) if isinstance(other, TensorBase) else float(other)
    return _run("pow", [("self", s), ("other", o)])


def _add(self, other, alpha=1):
    attrs = {"alpha": _py_scalar(alpha)} if alpha != 1 or isinstance(alpha, bool) else None
    return _run("add", [("self", self), ("other", _scalar_or_tensor(other, "add", "other"))], attrs)


def _add_(self, other, alpha=1):
    attrs = {"alpha": _py_scalar(alpha)} if alpha != 1 or isinstance(alpha, bool) else None
    return _inplace(self, "add_", [("other", _scalar_or_tensor(other, "add", "other"))], attrs)


def _sub(self, other, alpha=1):
    attrs = {"alpha": _py_scalar(alpha)} if alpha != 1 or isinstance(alpha, bool) else None
    return _run("sub", [("self", self), ("other", _scalar_or_tensor(other, "sub", "other"))], attrs)


def _sub_(self, other, alpha=1):
    attrs = {"alpha": _py_scalar(alpha)} if alpha != 1 or isinstance(alpha, bool) else None
    return _inplace(self, "sub_", [("other", _scalar_or_tensor(other, "sub", "other"))], attrs)


def _rounding(mode):
    if mode not in _ROUNDING:
        raise ValueError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but "
                         f"found '{mode}'")
    return {"rounding_mode": _ROUNDING[mode]} if mode else None


def _div(self, other, rounding_mode=None):
    return _run("div", [("self", self), ("other", _scalar_or_tensor(other, "div", "other"))],
                _rounding(rounding_mode))


def _div_(self, other, rounding_mode=None):
    return _inplace(self, "div_", [("other", _scalar_or_tensor(other, "div", "other"))],
                    _rounding(rounding_mode))


def _round(self, decimals=0):
    return _run("round", [("self", self)], {"decimals": int(decimals)} if decimals else None)


def _round_(self, decimals=0):
    return _inplace(self, "round_", [], {"decimals": int(decimals)} if decimals else None)


def _clamp_args(min, max):
    lo = None if min is None else _scalar_or_tensor(min, "clamp", "min")
    hi = None if max is None else _scalar_or_tensor(max, "clamp", "max")
    return [("min", lo), ("max", hi)]


def _clamp(self, min=None, max=None):
    return _run("clamp", [("self", self)] + _clamp_args(min, max))


def _clamp_(self, min=None, max=None):
    return _inplace(self, "clamp_", _clamp_args(min, max))


def _nan_to_num(self, nan=0.0, posinf=None, neginf=None, _name="nan_to_num"):
    attrs = {"nan": float(nan)}
    if posinf is not None:
        attrs["posinf"] = float(posinf)
    if neginf is not None:
        attrs["neginf"] = float(neginf)
    if _name.endswith("_"):
        return _inplace(self, _name, [], attrs)
    return _run(_name, [("self", self)], attrs)


def _gelu(self, approximate="none"):
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    return _run("gelu", [("self", self)], {"approximate": True} if approximate == "tanh" else None)


def _leaky_relu(self, negative_slope=0.01):
    return _run("leaky_relu", [("self", self)], {"negative_slope": float(negative_slope)})


def _lerp(self, end, weight):
    return _run("lerp", [("self", self), ("end", end), ("weight", _scalar_or_tensor(weight, "lerp", "weight"))])


def _lerp_(self, end, weight):
    return _inplace(self, "lerp_", [("end", end), ("weight", _scalar_or_tensor(weight, "lerp", "weight"))])


def _addc(name):
    def f(self, tensor1, tensor2, value=1):
        attrs = {"value": _py_scalar(value)} if value != 1 else None
        if name.endswith("_"):
            return _inplace(self, name, [("tensor1", tensor1), ("tensor2", tensor2)], attrs)
        return _run(name, [("self", self), ("tensor1", tensor1), ("tensor2", tensor2)], attrs)
    f.__name__ = name
    return f


def where(condition, input=None, other=None, *, out=None):
    if input is None and other is None:
        return nonzero(condition, as_tuple=True)
    return write_out(_run("where", [("condition", condition),
                                    ("self", _scalar_or_tensor(input, "where", "input")),
                                    ("other", _scalar_or_tensor(other, "where", "other"))]),
                     out, "where")


def _rtruediv(self, other):
    # torch: other / self is self.reciprocal() * other.
    return self.reciprocal() * other


def _array_operand(self, array):
    """A numpy array operand of an operator, as torch takes it: a tensor of its dtype (a 0-d
    one promotes as a 0-d tensor, not as a number) on self's device."""
    return _factories.tensor(array, device=self.device, session=self._session)


def _reflected(name):
    def f(self, other):
        if not _is_scalar(other):
            return NotImplemented
        return _run(name, [("self", _py_scalar(other)), ("other", self)])
    return f


# The operators that take a numpy array as torch does: converted to a tensor. The others (in
# place, comparisons, bitwise) leave it to Python's fallback, as torch's do (x == array is
# False; x += array is x + array bound to x).
_ARRAY_OPERATORS = frozenset({"add", "sub", "mul", "div", "floor_divide", "remainder", "pow"})


def _forward(name):
    def f(self, other):
        if isinstance(other, np.ndarray):
            if name not in _ARRAY_OPERATORS:
                return NotImplemented
            other = _array_operand(self, other)
        elif not isinstance(other, TensorBase) and not _is_scalar(other):
            return NotImplemented
        return getattr(self, name)(other)
    return f


def _rpow(self, other):
    # torch: tensor(other, dtype=result_type(other, self)) ** self (a 0-d tensor, not a number).
    if not _is_scalar(other):
        return NotImplemented
    other = _py_scalar(other)
    d = self.dtype
    if isinstance(other, float) and not d.is_floating_point:
        d = _dtypes.get_default_dtype()
    elif isinstance(other, int) and not isinstance(other, bool) and d is _dtypes.bool_:
        d = _dtypes.int64
    return _factories.full((), other, dtype=d, device=self.device, session=self._session) ** self


def _pos(self):
    if self.dtype is _dtypes.bool_:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return self


def _invert(self):
    if self.dtype.is_floating_point:
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type tensors")
    return self.bitwise_not()


def _dims(dim, op):
    if dim is None:
        return None
    if isinstance(dim, (tuple, list)):
        return _Ints(_int(d, op, "dim") for d in dim)
    return _int(dim, op, "dim")


def _reduce_attrs(op, dim=None, keepdim=False, dtype=None, **extra):
    attrs = dict(extra)
    d = _dims(dim, op)
    if d is not None:
        attrs["dim"] = d
    if keepdim:
        attrs["keepdim"] = True
    if dtype is not None:
        attrs["dtype"] = dtype
    return attrs


def _sum(self, dim=None, keepdim=False, dtype=None):
    return _run("sum", [("self", self)], _reduce_attrs("sum", dim, keepdim, dtype))


def _mean(self, dim=None, keepdim=False, dtype=None):
    return _run("mean", [("self", self)], _reduce_attrs("mean", dim, keepdim, dtype))


def _prod(self, dim=None, keepdim=False, dtype=None):
    return _run("prod", [("self", self)], _reduce_attrs("prod", dim, keepdim, dtype))


_RETURN_TYPES = {n: _return_type(n) for n in ("max", "min", "sort", "topk", "kthvalue")}
_MaxMin = _RETURN_TYPES


def _extremum(name, binary):
    def f(self, dim=None, keepdim=False):
        if isinstance(dim, TensorBase):
            return getattr(self, binary)(dim)
        if dim is None:
            return _run(name, [("self", self)])
        values, indices = _run_n(name + ".dim", [self],
                                 _reduce_attrs(name, dim, keepdim), 2)
        return _MaxMin[name](values, indices)
    f.__name__ = name
    return f


def _sort(self, dim=-1, descending=False, stable=False):
    values, indices = _run_n("sort", [self], {"dim": _int(dim, "sort", "dim"),
                                              "descending": bool(descending),
                                              "stable": bool(stable)}, 2)
    return _RETURN_TYPES["sort"](values, indices)


def _argsort(self, dim=-1, descending=False, stable=False):
    return _run("argsort", [("self", self)], {"dim": _int(dim, "argsort", "dim"),
                                              "descending": bool(descending),
                                              "stable": bool(stable)})


def _topk(self, k, dim=None, largest=True, sorted=True):
    values, indices = _run_n("topk", [self], {"k": _int(k, "topk", "k"),
                                              "dim": -1 if dim is None else _int(dim, "topk", "dim"),
                                              "largest": bool(largest), "sorted": bool(sorted)}, 2)
    return _RETURN_TYPES["topk"](values, indices)


def _kthvalue(self, k, dim=None, keepdim=False):
    values, indices = _run_n("kthvalue", [self], {
        "k": _int(k, "kthvalue", "k"), "dim": -1 if dim is None else _int(dim, "kthvalue", "dim"),
        "keepdim": bool(keepdim)}, 2)
    return _RETURN_TYPES["kthvalue"](values, indices)


def _simple_reduce(name):
    def f(self, dim=None, keepdim=False):
        return _run(name, [("self", self)], _reduce_attrs(name, dim, keepdim))
    f.__name__ = name
    return f


def _count_nonzero(self, dim=None):
    return _run("count_nonzero", [("self", self)], _reduce_attrs("count_nonzero", dim))


def _var_like(name):
    def f(self, dim=None, unbiased=None, keepdim=False, *, correction=None):
        if isinstance(dim, bool):  # var(unbiased)
            dim, unbiased = None, dim
        if isinstance(unbiased, bool) or unbiased is None:
            c = correction if correction is not None else (0 if unbiased is False else 1)
        else:
            raise TypeError(f"{name}(): argument 'unbiased' must be bool")
        return _run(name, [("self", self)],
                    _reduce_attrs(name, dim, keepdim, correction=_py_scalar(c)))
    f.__name__ = name
    return f


def _norm(self, p="fro", dim=None, keepdim=False, dtype=None):
    if p == "fro" and dtype is not None:
        raise ValueError("dtype argument is not supported in frobenius norm")
    if p == "fro" and dim is not None and not isinstance(dim, int) and len(dim) > 2:
        raise RuntimeError(f"Expected at most 2 dimensions, but got {len(dim)} dimensions "
                           "instead.")  # (torch's frobenius_norm: a matrix norm)
    if p == "fro" or p is None:
        p = 2
    if p == "nuc":
        from ._composite import nuclear_norm  # noqa: PLC0415
        if dim is None:
            if self.dim() != 2:
                raise RuntimeError("Expected a tensor with 2 dimensions, but got a tensor with "
                                   f"{self.dim()} dimensions instead.")
            dim = (0, 1)
        return nuclear_norm(self, dim, keepdim)
    if isinstance(p, str):
        raise RuntimeError(f"tensord: norm(p='{p}') is not supported")
    return _run("norm", [("self", self)], _reduce_attrs("norm", dim, keepdim, dtype, p=float(p)))


def _logsumexp(self, dim, keepdim=False):
    return _run("logsumexp", [("self", self)], _reduce_attrs("logsumexp", dim, keepdim))


def _along(name):
    def f(self, dim, dtype=None):
        attrs = {"dim": _int(dim, name, "dim")}
        if dtype is not None:
            attrs["dtype"] = dtype
        return _run(name, [("self", self)], attrs)
    f.__name__ = name
    return f


def _matrix_product(name, arg):

    def f(self, other):
        if not isinstance(other, TensorBase):
            raise TypeError(f"{name}(): argument '{arg}' must be Tensor, not {type(other).__name__}")
        return _run(name, [('self', self), (arg, other)])
    f.__name__ = name
    return f

def _addmm(self, mat1, mat2, *, beta=1, alpha=1):
    return _run("addmm", [("self", self), ("mat1", mat1), ("mat2", mat2)],
                {"beta": _py_scalar(beta), "alpha": _py_scalar(alpha)})


def _index_select(self, dim, index):
    return _run("index_select", [("self", self), ("index", index)], {"dim": _int(dim, "index_select", "dim")})


def _gather(self, dim, index):
    return _run("gather", [("self", self), ("index", index)], {"dim": _int(dim, "gather", "dim")})


def _scatter_any(name, self, dim, index, src=None, value=None, reduce=None):
    if src is None:
        src = value
    if reduce is not None:
        # torch's scatter(reduce=): scatter_reduce with the elements self already holds.
        if reduce not in ("add", "multiply"):
            raise RuntimeError("reduce argument must be either add or multiply.")
        if not isinstance(src, TensorBase):  # a number: one for every index
            src = self.new_full(tuple(index.shape), _scalar_or_tensor(src, name, "value"))
        how = "sum" if reduce == "add" else "prod"
        from ._composite import _scatter_reduce, _scatter_reduce_  # noqa: PLC0415 - cycle
        reduced = _scatter_reduce_ if name.endswith("_") else _scatter_reduce
        return reduced(self, dim, index, src, how, True)
    if src is None:
        raise TypeError(f"{name}(): missing argument 'src' or 'value'")
    src = _scalar_or_tensor(src, name, "src")
    return _run(name, [("self", self), ("index", index), ("src", src)],
                {"dim": _int(dim, name, "dim")})


def _masked_fill(self, mask, value):
    return _run("masked_fill", [("self", self), ("mask", mask), ("value", _scalar_or_tensor(value, "masked_fill", "value"))])


def _masked_fill_(self, mask, value):
    return _inplace(self, "masked_fill_", [("mask", mask), ("value", _scalar_or_tensor(value, "masked_fill_", "value"))])


def nonzero(input, *, as_tuple=False):
    out = _run("nonzero", [("self", input)])
    if not as_tuple:
        return out
    if input.dim() == 0:  # as a 1-d tensor of one element, as torch's
        return nonzero(input.unsqueeze(0), as_tuple=True)
    return tuple(out.select(1, d) for d in range(input.dim()))


def _index_put_(self, indices, values, accumulate=False):
    """torch's index_put_: one server op (engine/ops/index_ops.cc) on index tensors, values of
    self's dtype (no conversion, as torch)."""
    if not isinstance(indices, (tuple, list)):
        raise TypeError("index_put_(): argument 'indices' must be tuple of Tensors")
    for i, t in enumerate(indices):
        if not isinstance(t, TensorBase):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got "
                            f"{type(t).__name__}")
    if not isinstance(values, TensorBase):
        raise TypeError(f"index_put_(): argument 'values' (position 2) must be Tensor, not "
                        f"{type(values).__name__}")
    view, tensors, dims = self._advanced(tuple(indices), tensors_index=True)
    if values.device != self.device:
        values = values.to(self.device)
    attrs = {"dims": _Ints(dims)}
    if accumulate:
        attrs["accumulate"] = True
    _op(self._session, "index_put_", [view, values, *tensors], attrs)
    return self


def _index_put(self, indices, values, accumulate=False):
    """torch's index_put: index_put_ on a clone (under cuda autocast, torch's promote list:
    self and values in the wider of their dtypes first)."""
    if _autocast.active and _autocast.applies("index_put", (self, indices, values)):
        return _autocast.run("index_put", _index_put, (self, indices, values, accumulate))
    return self.clone().index_put_(indices, values, accumulate)


def _type_as(self, other):
    return self.to(other.dtype)


def _inplace_random(name, attrs_fn):
    def f(self, *args, generator=None, **kwargs):
        attrs = attrs_fn(*args, **kwargs)
        attrs.update(_random_of(generator).take(self.numel()))
        return _inplace(self, name, [], attrs)
    f.__name__ = name
    return f


def _bernoulli(self, generator=None):
    return _run("bernoulli", [("self", self)], _random_of(generator).take(self.numel()))


def _int_list(x, op, arg):
    return [_int(v, op, arg) for v in x] if isinstance(x, (tuple, list)) else [_int(x, op, arg)]


def _roll(self, shifts, dims=None):
    """torch.roll: one server op (engine/ops/matrix_ops.cc), a new contiguous tensor."""
    attrs = {"shifts": _int_list(shifts, "roll", "shifts")}
    if dims is not None:
        attrs["dims"] = _int_list(dims, "roll", "dims")
    return _run("roll", [("self", self)], attrs)


def _triangle(name, inplace):
    """tril / triu (in place with a trailing _): one server op (engine/ops/matrix_ops.cc)."""
    def f(self, diagonal=0):
        attrs = {"diagonal": _int(diagonal, name.rstrip("_"), "diagonal")}
        if inplace:
            return _inplace(self, name, [], attrs)
        return _run(name, [("self", self)], attrs)
    f.__name__ = name
    return f


class _ComputeMethods(TensorBase):
    """Tensor's compute methods (Tensor derives from this class)."""

    __slots__ = ()

    neg = _unary("neg")
    neg_ = _unary_("neg")
    negative = _unary("negative")
    negative_ = _unary_("negative")
    abs = _unary("abs")
    abs_ = _unary_("abs")
    absolute = _unary("absolute")
    absolute_ = _unary_("absolute")
    sign = _unary("sign")
    sign_ = _unary_("sign")
    sgn = _unary("sgn")
    sgn_ = _unary_("sgn")
    exp = _unary("exp")
    exp_ = _unary_("exp")
    exp2 = _unary("exp2")
    exp2_ = _unary_("exp2")
    expm1 = _unary("expm1")
    expm1_ = _unary_("expm1")
    log = _unary("log")
    log_ = _unary_("log")
    log1p = _unary("log1p")
    log1p_ = _unary_("log1p")
    log2 = _unary("log2")
    log2_ = _unary_("log2")
    log10 = _unary("log10")
    log10_ = _unary_("log10")
    sqrt = _unary("sqrt")
    sqrt_ = _unary_("sqrt")
    rsqrt = _unary("rsqrt")
    rsqrt_ = _unary_("rsqrt")
    sin = _unary("sin")
    sin_ = _unary_("sin")
    cos = _unary("cos")
    cos_ = _unary_("cos")
    tan = _unary("tan")
    tan_ = _unary_("tan")
    asin = _unary("asin")
    asin_ = _unary_("asin")
    acos = _unary("acos")
    acos_ = _unary_("acos")
    atan = _unary("atan")
    atan_ = _unary_("atan")
    sinh = _unary("sinh")
    sinh_ = _unary_("sinh")
    cosh = _unary("cosh")
    cosh_ = _unary_("cosh")
    tanh = _unary("tanh")
    tanh_ = _unary_("tanh")
    erf = _unary("erf")
    erf_ = _unary_("erf")
    sigmoid = _unary("sigmoid")
    sigmoid_ = _unary_("sigmoid")
    relu = _unary("relu")
    relu_ = _unary_("relu")
    silu = _unary("silu")
    silu_ = _unary_("silu")
    floor = _unary("floor")
    floor_ = _unary_("floor")
    ceil = _unary("ceil")
    ceil_ = _unary_("ceil")
    trunc = _unary("trunc")
    trunc_ = _unary_("trunc")
    fix = _unary("fix")
    fix_ = _unary_("fix")
    frac = _unary("frac")
    frac_ = _unary_("frac")
    reciprocal = _unary("reciprocal")
    reciprocal_ = _unary_("reciprocal")
    bitwise_not = _unary("bitwise_not")
    bitwise_not_ = _unary_("bitwise_not")
    square = _unary("square")
    square_ = _unary_("square")
    logical_not = _unary("logical_not")
    isnan = _unary("isnan")
    isinf = _unary("isinf")
    isposinf = _unary("isposinf")
    isneginf = _unary("isneginf")
    isfinite = _unary("isfinite")
    signbit = _unary("signbit")
    mul = _binary("mul")
    mul_ = _binary_("mul")
    multiply = _binary("multiply")
    multiply_ = _binary_("multiply")
    true_divide = _binary("true_divide")
    true_divide_ = _binary_("true_divide")
    floor_divide = _binary("floor_divide")
    floor_divide_ = _binary_("floor_divide")
    remainder = _binary("remainder")
    remainder_ = _binary_("remainder")
    fmod = _binary("fmod")
    fmod_ = _binary_("fmod")
    pow = _binary("pow")
    pow_ = _binary_("pow")
    atan2 = _binary("atan2")
    atan2_ = _binary_("atan2")
    arctan2 = _binary("arctan2")
    arctan2_ = _binary_("arctan2")
    copysign = _binary("copysign")
    copysign_ = _binary_("copysign")
    hypot = _binary("hypot")
    hypot_ = _binary_("hypot")
    xlogy = _binary("xlogy")
    xlogy_ = _binary_("xlogy")
    nextafter = _binary("nextafter")
    nextafter_ = _binary_("nextafter")
    heaviside = _binary("heaviside")
    heaviside_ = _binary_("heaviside")
    gcd = _binary("gcd")
    gcd_ = _binary_("gcd")
    lcm = _binary("lcm")
    lcm_ = _binary_("lcm")
    igamma = _binary("igamma")
    igamma_ = _binary_("igamma")
    igammac = _binary("igammac")
    igammac_ = _binary_("igammac")
    logaddexp = _binary("logaddexp")
    logaddexp2 = _binary("logaddexp2")
    bitwise_and = _binary("bitwise_and")
    bitwise_and_ = _binary_("bitwise_and")
    bitwise_or = _binary("bitwise_or")
    bitwise_or_ = _binary_("bitwise_or")
    bitwise_xor = _binary("bitwise_xor")
    bitwise_xor_ = _binary_("bitwise_xor")
    bitwise_left_shift = _binary("bitwise_left_shift")
    bitwise_left_shift_ = _binary_("bitwise_left_shift")
    bitwise_right_shift = _binary("bitwise_right_shift")
    bitwise_right_shift_ = _binary_("bitwise_right_shift")
    eq = _binary("eq")
    eq_ = _binary_("eq")
    ne = _binary("ne")
    ne_ = _binary_("ne")
    lt = _binary("lt")
    lt_ = _binary_("lt")
    le = _binary("le")
    le_ = _binary_("le")
    gt = _binary("gt")
    gt_ = _binary_("gt")
    ge = _binary("ge")
    ge_ = _binary_("ge")
    maximum = _binary("maximum")
    minimum = _binary("minimum")
    fmax = _binary("fmax")
    fmin = _binary("fmin")
    logical_and = _binary("logical_and")
    logical_or = _binary("logical_or")
    logical_xor = _binary("logical_xor")
    greater = _binary("greater")
    less = _binary("less")
    greater_equal = _binary("greater_equal")
    less_equal = _binary("less_equal")
    not_equal = _binary("not_equal")
    float_power = _binary("float_power")
    float_power = _float_power
    add, add_ = _add, _add_
    sub, sub_ = _sub, _sub_
    subtract, subtract_ = _sub, _sub_
    div, div_ = _div, _div_
    divide, divide_ = _div, _div_
    round, round_ = _round, _round_
    clamp, clamp_, clip, clip_ = _clamp, _clamp_, _clamp, _clamp_
    clamp_min = lambda self, min: _run("clamp_min", [("self", self), ("min", _scalar_or_tensor(min, "clamp_min", "min"))])
    clamp_max = lambda self, max: _run("clamp_max", [("self", self), ("max", _scalar_or_tensor(max, "clamp_max", "max"))])
    clamp_min_ = lambda self, min: _inplace(self, "clamp_min_", [("min", _scalar_or_tensor(min, "clamp_min", "min"))])
    clamp_max_ = lambda self, max: _inplace(self, "clamp_max_", [("max", _scalar_or_tensor(max, "clamp_max", "max"))])
    nan_to_num = _nan_to_num
    nan_to_num_ = lambda self, nan=0.0, posinf=None, neginf=None: _nan_to_num(self, nan, posinf, neginf, "nan_to_num_")
    gelu = _gelu
    leaky_relu = _leaky_relu
    lerp, lerp_ = _lerp, _lerp_
    addcmul = _addc("addcmul")
    addcdiv = _addc("addcdiv")
    addcmul_ = _addc("addcmul_")
    addcdiv_ = _addc("addcdiv_")
    where = lambda self, condition, other: where(condition, self, other)
    __add__ = _forward("add")
    __radd__ = _reflected("add")
    __iadd__ = _forward("add_")
    __sub__ = _forward("sub")
    __rsub__ = _reflected("sub")
    __isub__ = _forward("sub_")
    __mul__ = _forward("mul")
    __rmul__ = _reflected("mul")
    __imul__ = _forward("mul_")
    __truediv__ = _forward("div")
    __rtruediv__ = _rtruediv
    __itruediv__ = _forward("div_")
    __floordiv__ = _forward("floor_divide")
    __rfloordiv__ = _reflected("floor_divide")
    __ifloordiv__ = _forward("floor_divide_")
    __mod__ = _forward("remainder")
    __rmod__ = _reflected("remainder")
    __imod__ = _forward("remainder_")
    __pow__ = _forward("pow")
    __rpow__ = _rpow
    __ipow__ = _forward("pow_")
    __and__ = _forward("bitwise_and")
    __rand__ = _reflected("bitwise_and")
    __iand__ = _forward("bitwise_and_")
    __or__ = _forward("bitwise_or")
    __ror__ = _reflected("bitwise_or")
    __ior__ = _forward("bitwise_or_")
    __xor__ = _forward("bitwise_xor")
    __rxor__ = _reflected("bitwise_xor")
    __ixor__ = _forward("bitwise_xor_")
    __lshift__ = _forward("bitwise_left_shift")
    __rlshift__ = _reflected("bitwise_left_shift")
    __ilshift__ = _forward("bitwise_left_shift_")
    __rshift__ = _forward("bitwise_right_shift")
    __rrshift__ = _reflected("bitwise_right_shift")
    __irshift__ = _forward("bitwise_right_shift_")
    __eq__ = _forward("eq")
    __ne__ = _forward("ne")
    __lt__ = _forward("lt")
    __le__ = _forward("le")
    __gt__ = _forward("gt")
    __ge__ = _forward("ge")
    __neg__ = lambda self: self.neg()
    __pos__ = _pos
    __abs__ = lambda self: self.abs()
    __invert__ = _invert
    __matmul__ = lambda self, other: self.matmul(other) if isinstance(other, TensorBase) else NotImplemented
    __rmatmul__ = lambda self, other: NotImplemented
    positive = lambda self: self
    sum, mean, prod = _sum, _mean, _prod
    max = _extremum("max", "maximum")
    min = _extremum("min", "minimum")
    amax = _simple_reduce("amax")
    amin = _simple_reduce("amin")
    argmax = _simple_reduce("argmax")
    argmin = _simple_reduce("argmin")
    all = _simple_reduce("all")
    any = _simple_reduce("any")
    count_nonzero = _count_nonzero
    sort = _sort
    argsort = _argsort
    topk = _topk
    kthvalue = _kthvalue
    msort = lambda self: self.sort(dim=0).values
    var = _var_like("var")
    std = _var_like("std")
    norm = _norm
    logsumexp = _logsumexp
    cumsum = _along("cumsum")
    cumprod = _along("cumprod")
    softmax = _along("softmax")
    log_softmax = _along("log_softmax")
    matmul = _matrix_product("matmul", "other")
    mm = _matrix_product("mm", "mat2")
    bmm = _matrix_product("bmm", "mat2")
    dot = _matrix_product("dot", "tensor")
    mv = _matrix_product("mv", "vec")
    outer = _matrix_product("outer", "vec2")
    ger = outer
    inner = lambda self, other: _run("inner", [("self", self), ("other", other)])
    addmm = _addmm
    index_select = _index_select
    gather = _gather
    scatter = lambda self, dim, index, src=None, value=None, reduce=None: _scatter_any("scatter", self, dim, index, src, value, reduce)
    scatter_ = lambda self, dim, index, src=None, value=None, reduce=None: (_scatter_any("scatter_", self, dim, index, src, value, reduce), self)[1]
    scatter_add = lambda self, dim, index, src: _scatter_any("scatter_add", self, dim, index, src)
    scatter_add_ = lambda self, dim, index, src: (_scatter_any("scatter_add_", self, dim, index, src), self)[1]
    masked_fill, masked_fill_ = _masked_fill, _masked_fill_
    masked_select = lambda self, mask: _run("masked_select", [("self", self), ("mask", mask)])
    nonzero = lambda self, *, as_tuple=False: nonzero(self, as_tuple=as_tuple)
    argwhere = lambda self: nonzero(self)
    index_put_ = _index_put_
    index_put = _index_put
    type_as = _type_as
    uniform_ = _inplace_random("uniform_", lambda a=0, b=1: {"from": float(a), "to": float(b)})
    normal_ = _inplace_random("normal_", lambda mean=0, std=1: {"mean": float(mean), "std": float(std)})
    _bernoulli_ = _inplace_random("bernoulli_", lambda p=0.5: {"p": float(p)})  # (p a number)
    bernoulli = _bernoulli
    roll = _roll
    isclose = lambda self, other, rtol=1e-05, atol=1e-08, equal_nan=False: _compare.isclose(self, other, rtol, atol, equal_nan)
    allclose = lambda self, other, rtol=1e-05, atol=1e-08, equal_nan=False: _compare.allclose(self, other, rtol, atol, equal_nan)
    equal = lambda self, other: _compare.equal(self, other)
    logit = lambda self, eps=None: _run("logit", [("self", self)], {} if eps is None else {"eps": float(eps)})
    logit_ = lambda self, eps=None: _inplace(self, "logit_", [], {} if eps is None else {"eps": float(eps)})
    hardshrink = lambda self, lambd=0.5: _run("hardshrink", [("self", self)], {"lambd": float(lambd)})
    tril = _triangle("tril", False)
    triu = _triangle("triu", False)
    tril_ = _triangle("tril_", True)
    triu_ = _triangle("triu_", True)


for _name in _SPECIAL:
    setattr(_ComputeMethods, _name, _unary(_name))
    setattr(_ComputeMethods, _name + "_", _unary_(_name))
del _name


def _polygamma(self, n):
    return _run("polygamma", [("self", self)], {"n": _int(n, "polygamma", "n")})


def _polygamma_(self, n):
    return _inplace(self, "polygamma_", [], {"n": _int(n, "polygamma_", "n")})


_ComputeMethods.polygamma = _polygamma
_ComputeMethods.polygamma_ = _polygamma_


def polygamma(n, input, *, out=None):
    """torch.polygamma(n, input): the order first, as torch's."""
    return write_out(input.polygamma(n), out, "polygamma")
