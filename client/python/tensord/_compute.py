"""Compute ops on tensord tensors: torch's elementwise ops and operators, reductions, matrix
products, indexing ops and random numbers. Every op runs on the server (queued on the session's
stream); Python numbers travel as numbers, with torch's type promotion rules applied there."""
import collections
import math
import numbers
import os

import numpy as np

from . import _dtypes
from ._session import pb
from ._tensor import (Tensor, _Ints, _int, _int_list, _is_scalar, _op, _op_on, _py_scalar,
                      _queue)

_ROUNDING = {None: None, "trunc": 1, "floor": 2}


_FAST_NUMBERS = (int, float, bool)


def _scalar_or_tensor(x, op, name):
    t = type(x)
    if t is Tensor or t in _FAST_NUMBERS:
        return x
    if isinstance(x, Tensor):
        return x
    if _is_scalar(x):
        return _py_scalar(x)
    raise TypeError(f"{op}(): argument '{name}' must be Tensor or Number, not {type(x).__name__}")


def _session_of(*xs):
    for x in xs:
        if isinstance(x, Tensor):
            return x._session
    raise TypeError("expected at least one tensord Tensor")


def _split(operands, attrs):
    inputs, extra = [], dict(attrs) if attrs else {}
    for key, v in operands:
        if type(v) is Tensor or isinstance(v, Tensor):
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


# ---- elementwise -------------------------------------------------------------------------------

_UNARY = ["neg", "negative", "abs", "absolute", "sign", "sgn", "exp", "exp2", "expm1", "log",
          "log1p", "log2", "log10", "sqrt", "rsqrt", "sin", "cos", "tan", "asin", "acos", "atan",
          "sinh", "cosh", "tanh", "erf", "sigmoid", "relu", "silu", "floor", "ceil", "trunc",
          "fix", "frac", "reciprocal", "bitwise_not", "square"]
_UNARY_NO_INPLACE = ["logical_not", "isnan", "isinf", "isposinf", "isneginf", "isfinite",
                     "signbit"]
_BINARY = ["mul", "multiply", "true_divide", "floor_divide", "remainder", "fmod", "pow",
           "atan2", "arctan2", "copysign", "hypot", "bitwise_and", "bitwise_or", "bitwise_xor",
           "bitwise_left_shift", "bitwise_right_shift", "eq", "ne", "lt", "le", "gt", "ge"]
_BINARY_NO_INPLACE = ["maximum", "minimum", "fmax", "fmin", "logical_and", "logical_or",
                      "logical_xor", "greater", "less", "greater_equal", "less_equal",
                      "not_equal", "float_power"]


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


# torch takes only tensors as `other` for these.
_TENSOR_OTHER = {"maximum", "minimum", "fmax", "fmin", "atan2", "arctan2", "hypot", "logical_and",
                 "logical_or", "logical_xor"}
# torch.<op>(number, tensor) works for these.
_NUMBER_FIRST = {"add", "sub", "mul", "div", "true_divide", "floor_divide", "remainder", "pow",
                 "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift",
                 "bitwise_right_shift", "float_power", "multiply", "subtract", "divide"}


def _tensor_other(name, other):
    if name in _TENSOR_OTHER and not isinstance(other, Tensor):
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


for _n in _UNARY:
    setattr(Tensor, _n, _unary(_n))
    setattr(Tensor, _n + "_", _unary_(_n))
for _n in _UNARY_NO_INPLACE:
    setattr(Tensor, _n, _unary(_n))
for _n in _BINARY:
    setattr(Tensor, _n, _binary(_n))
    setattr(Tensor, _n + "_", _binary_(_n))
for _n in _BINARY_NO_INPLACE:
    setattr(Tensor, _n, _binary(_n))


def _float_power(self, other):
    s = self.to(_dtypes.float64)
    o = other.to(_dtypes.float64) if isinstance(other, Tensor) else float(other)
    return _run("pow", [("self", s), ("other", o)])


Tensor.float_power = _float_power


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


Tensor.add, Tensor.add_ = _add, _add_
Tensor.sub, Tensor.sub_ = _sub, _sub_
Tensor.subtract, Tensor.subtract_ = _sub, _sub_
Tensor.div, Tensor.div_ = _div, _div_
Tensor.divide, Tensor.divide_ = _div, _div_


def _round(self, decimals=0):
    return _run("round", [("self", self)], {"decimals": int(decimals)} if decimals else None)


def _round_(self, decimals=0):
    return _inplace(self, "round_", [], {"decimals": int(decimals)} if decimals else None)


Tensor.round, Tensor.round_ = _round, _round_


def _clamp_args(min, max):
    lo = None if min is None else _scalar_or_tensor(min, "clamp", "min")
    hi = None if max is None else _scalar_or_tensor(max, "clamp", "max")
    return [("min", lo), ("max", hi)]


def _clamp(self, min=None, max=None):
    return _run("clamp", [("self", self)] + _clamp_args(min, max))


def _clamp_(self, min=None, max=None):
    return _inplace(self, "clamp_", _clamp_args(min, max))


Tensor.clamp, Tensor.clamp_, Tensor.clip, Tensor.clip_ = _clamp, _clamp_, _clamp, _clamp_
Tensor.clamp_min = lambda self, min: _run("clamp_min", [("self", self), ("min", _scalar_or_tensor(min, "clamp_min", "min"))])
Tensor.clamp_max = lambda self, max: _run("clamp_max", [("self", self), ("max", _scalar_or_tensor(max, "clamp_max", "max"))])
Tensor.clamp_min_ = lambda self, min: _inplace(self, "clamp_min_", [("min", _scalar_or_tensor(min, "clamp_min", "min"))])
Tensor.clamp_max_ = lambda self, max: _inplace(self, "clamp_max_", [("max", _scalar_or_tensor(max, "clamp_max", "max"))])


def _nan_to_num(self, nan=0.0, posinf=None, neginf=None, _name="nan_to_num"):
    attrs = {"nan": float(nan)}
    if posinf is not None:
        attrs["posinf"] = float(posinf)
    if neginf is not None:
        attrs["neginf"] = float(neginf)
    if _name.endswith("_"):
        return _inplace(self, _name, [], attrs)
    return _run(_name, [("self", self)], attrs)


Tensor.nan_to_num = _nan_to_num
Tensor.nan_to_num_ = lambda self, nan=0.0, posinf=None, neginf=None: _nan_to_num(self, nan, posinf, neginf, "nan_to_num_")


def _gelu(self, approximate="none"):
    if approximate not in ("none", "tanh"):
        raise RuntimeError(f"approximate argument must be either none or tanh.")
    return _run("gelu", [("self", self)], {"approximate": True} if approximate == "tanh" else None)


def _leaky_relu(self, negative_slope=0.01):
    return _run("leaky_relu", [("self", self)], {"negative_slope": float(negative_slope)})


Tensor.gelu = _gelu
Tensor.leaky_relu = _leaky_relu


def _lerp(self, end, weight):
    return _run("lerp", [("self", self), ("end", end), ("weight", _scalar_or_tensor(weight, "lerp", "weight"))])


def _lerp_(self, end, weight):
    return _inplace(self, "lerp_", [("end", end), ("weight", _scalar_or_tensor(weight, "lerp", "weight"))])


Tensor.lerp, Tensor.lerp_ = _lerp, _lerp_


def _addc(name):
    def f(self, tensor1, tensor2, value=1):
        attrs = {"value": _py_scalar(value)} if value != 1 else None
        if name.endswith("_"):
            return _inplace(self, name, [("tensor1", tensor1), ("tensor2", tensor2)], attrs)
        return _run(name, [("self", self), ("tensor1", tensor1), ("tensor2", tensor2)], attrs)
    f.__name__ = name
    return f


for _n in ("addcmul", "addcdiv", "addcmul_", "addcdiv_"):
    setattr(Tensor, _n, _addc(_n))


def where(condition, input=None, other=None):
    if input is None and other is None:
        return nonzero(condition, as_tuple=True)
    return _run("where", [("condition", condition),
                          ("self", _scalar_or_tensor(input, "where", "input")),
                          ("other", _scalar_or_tensor(other, "where", "other"))])


Tensor.where = lambda self, condition, other: where(condition, self, other)


def _rtruediv(self, other):
    # torch: other / self is self.reciprocal() * other.
    return self.reciprocal() * other


def _reflected(name):
    def f(self, other):
        if not _is_scalar(other):
            return NotImplemented
        return _run(name, [("self", _py_scalar(other)), ("other", self)])
    return f


def _forward(name):
    def f(self, other):
        if not isinstance(other, Tensor) and not _is_scalar(other):
            return NotImplemented
        return getattr(self, name)(other)
    return f


Tensor.__add__ = _forward("add")
Tensor.__radd__ = _reflected("add")
Tensor.__iadd__ = _forward("add_")
Tensor.__sub__ = _forward("sub")
Tensor.__rsub__ = _reflected("sub")
Tensor.__isub__ = _forward("sub_")
Tensor.__mul__ = _forward("mul")
Tensor.__rmul__ = _reflected("mul")
Tensor.__imul__ = _forward("mul_")
Tensor.__truediv__ = _forward("div")
Tensor.__rtruediv__ = _rtruediv
Tensor.__itruediv__ = _forward("div_")
Tensor.__floordiv__ = _forward("floor_divide")
Tensor.__rfloordiv__ = _reflected("floor_divide")
Tensor.__ifloordiv__ = _forward("floor_divide_")
Tensor.__mod__ = _forward("remainder")
Tensor.__rmod__ = _reflected("remainder")
Tensor.__imod__ = _forward("remainder_")
Tensor.__pow__ = _forward("pow")
def _rpow(self, other):
    # torch: tensor(other, dtype=result_type(other, self)) ** self (a 0-d tensor, not a number).
    if not _is_scalar(other):
        return NotImplemented
    other = _py_scalar(other)
    d = self.dtype
    if isinstance(other, float) and not d.is_floating_point:
        d = _dtypes.float32
    elif isinstance(other, int) and not isinstance(other, bool) and d is _dtypes.bool_:
        d = _dtypes.int64
    from . import _api
    return _api.full((), other, dtype=d, device=self.device, session=self._session) ** self


Tensor.__rpow__ = _rpow
Tensor.__ipow__ = _forward("pow_")
Tensor.__and__ = _forward("bitwise_and")
Tensor.__rand__ = _reflected("bitwise_and")
Tensor.__iand__ = _forward("bitwise_and_")
Tensor.__or__ = _forward("bitwise_or")
Tensor.__ror__ = _reflected("bitwise_or")
Tensor.__ior__ = _forward("bitwise_or_")
Tensor.__xor__ = _forward("bitwise_xor")
Tensor.__rxor__ = _reflected("bitwise_xor")
Tensor.__ixor__ = _forward("bitwise_xor_")
Tensor.__lshift__ = _forward("bitwise_left_shift")
Tensor.__rlshift__ = _reflected("bitwise_left_shift")
Tensor.__ilshift__ = _forward("bitwise_left_shift_")
Tensor.__rshift__ = _forward("bitwise_right_shift")
Tensor.__rrshift__ = _reflected("bitwise_right_shift")
Tensor.__irshift__ = _forward("bitwise_right_shift_")
Tensor.__eq__ = _forward("eq")
Tensor.__ne__ = _forward("ne")
Tensor.__lt__ = _forward("lt")
Tensor.__le__ = _forward("le")
Tensor.__gt__ = _forward("gt")
Tensor.__ge__ = _forward("ge")
Tensor.__neg__ = lambda self: self.neg()
def _pos(self):
    if self.dtype is _dtypes.bool_:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return self


def _invert(self):
    if self.dtype.is_floating_point:
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type tensors")
    return self.bitwise_not()


Tensor.__pos__ = _pos
Tensor.__abs__ = lambda self: self.abs()
Tensor.__invert__ = _invert
Tensor.__matmul__ = lambda self, other: self.matmul(other) if isinstance(other, Tensor) else NotImplemented
Tensor.__rmatmul__ = lambda self, other: NotImplemented
Tensor.positive = lambda self: self


# ---- reductions --------------------------------------------------------------------------------

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


Tensor.sum, Tensor.mean, Tensor.prod = _sum, _mean, _prod

_MaxMin = {n: collections.namedtuple(n, ["values", "indices"]) for n in ("max", "min")}


def _extremum(name, binary):
    def f(self, dim=None, keepdim=False):
        if isinstance(dim, Tensor):
            return getattr(self, binary)(dim)
        if dim is None:
            return _run(name, [("self", self)])
        values, indices = _run_n(name + ".dim", [self],
                                 _reduce_attrs(name, dim, keepdim), 2)
        return _MaxMin[name](values, indices)
    f.__name__ = name
    return f


Tensor.max = _extremum("max", "maximum")
Tensor.min = _extremum("min", "minimum")


def _simple_reduce(name):
    def f(self, dim=None, keepdim=False):
        return _run(name, [("self", self)], _reduce_attrs(name, dim, keepdim))
    f.__name__ = name
    return f


for _n in ("amax", "amin", "argmax", "argmin", "all", "any"):
    setattr(Tensor, _n, _simple_reduce(_n))


def _count_nonzero(self, dim=None):
    return _run("count_nonzero", [("self", self)], _reduce_attrs("count_nonzero", dim))


Tensor.count_nonzero = _count_nonzero


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


Tensor.var = _var_like("var")
Tensor.std = _var_like("std")


def _norm(self, p="fro", dim=None, keepdim=False, dtype=None):
    if p == "fro" or p is None:
        p = 2
    if isinstance(p, str):
        raise RuntimeError(f"tensord: norm(p='{p}') is not supported")
    return _run("norm", [("self", self)], _reduce_attrs("norm", dim, keepdim, dtype, p=float(p)))


Tensor.norm = _norm


def _logsumexp(self, dim, keepdim=False):
    return _run("logsumexp", [("self", self)], _reduce_attrs("logsumexp", dim, keepdim))


Tensor.logsumexp = _logsumexp


def _along(name):
    def f(self, dim, dtype=None):
        attrs = {"dim": _int(dim, name, "dim")}
        if dtype is not None:
            attrs["dtype"] = dtype
        return _run(name, [("self", self)], attrs)
    f.__name__ = name
    return f


for _n in ("cumsum", "cumprod", "softmax", "log_softmax"):
    setattr(Tensor, _n, _along(_n))


# ---- matrix products ---------------------------------------------------------------------------

for _n, _in in (("matmul", "other"), ("mm", "mat2"), ("bmm", "mat2"), ("dot", "tensor"),
                ("mv", "vec"), ("outer", "vec2")):
    def _mk(name, arg):
        def f(self, other):
            if not isinstance(other, Tensor):
                raise TypeError(f"{name}(): argument '{arg}' must be Tensor, not {type(other).__name__}")
            return _run(name, [("self", self), (arg, other)])
        f.__name__ = name
        return f
    setattr(Tensor, _n, _mk(_n, _in))
Tensor.ger = Tensor.outer
Tensor.inner = lambda self, other: self.dot(other) if self.dim() == 1 and other.dim() == 1 else (self.unsqueeze(-2) @ other.unsqueeze(-1)).squeeze(-1).squeeze(-1)


def _addmm(self, mat1, mat2, *, beta=1, alpha=1):
    return _run("addmm", [("self", self), ("mat1", mat1), ("mat2", mat2)],
                {"beta": _py_scalar(beta), "alpha": _py_scalar(alpha)})


Tensor.addmm = _addmm


# ---- indexing ----------------------------------------------------------------------------------

def _index_select(self, dim, index):
    return _run("index_select", [("self", self), ("index", index)], {"dim": _int(dim, "index_select", "dim")})


def _gather(self, dim, index):
    return _run("gather", [("self", self), ("index", index)], {"dim": _int(dim, "gather", "dim")})


def _scatter_any(name, self, dim, index, src=None, value=None, reduce=None):
    if reduce is not None:
        raise NotImplementedError("tensord: scatter(reduce=…) is not supported; use scatter_add")
    if src is None:
        src = value
    if src is None:
        raise TypeError(f"{name}(): missing argument 'src' or 'value'")
    src = _scalar_or_tensor(src, name, "src")
    return _run(name, [("self", self), ("index", index), ("src", src)],
                {"dim": _int(dim, name, "dim")})


Tensor.index_select = _index_select
Tensor.gather = _gather
Tensor.scatter = lambda self, dim, index, src=None, value=None, reduce=None: _scatter_any("scatter", self, dim, index, src, value, reduce)
Tensor.scatter_ = lambda self, dim, index, src=None, value=None, reduce=None: (_scatter_any("scatter_", self, dim, index, src, value, reduce), self)[1]
Tensor.scatter_add = lambda self, dim, index, src: _scatter_any("scatter_add", self, dim, index, src)
Tensor.scatter_add_ = lambda self, dim, index, src: (_scatter_any("scatter_add_", self, dim, index, src), self)[1]


def _masked_fill(self, mask, value):
    return _run("masked_fill", [("self", self), ("mask", mask), ("value", _scalar_or_tensor(value, "masked_fill", "value"))])


def _masked_fill_(self, mask, value):
    return _inplace(self, "masked_fill_", [("mask", mask), ("value", _scalar_or_tensor(value, "masked_fill_", "value"))])


Tensor.masked_fill, Tensor.masked_fill_ = _masked_fill, _masked_fill_
Tensor.masked_select = lambda self, mask: _run("masked_select", [("self", self), ("mask", mask)])


def nonzero(input, *, as_tuple=False):
    out = _run("nonzero", [("self", input)])
    if not as_tuple:
        return out
    if input.dim() == 0:
        return (out.select(1, 0) if out.shape[1] else out.view(-1),)
    return tuple(out.select(1, d) for d in range(input.dim()))


Tensor.nonzero = lambda self, *, as_tuple=False: nonzero(self, as_tuple=as_tuple)
Tensor.argwhere = lambda self: nonzero(self)


def _index_put_(self, indices, values, accumulate=False):
    if not isinstance(indices, tuple):
        raise TypeError("index_put_(): argument 'indices' must be tuple of Tensors")
    key = indices
    linear = self._linear_indices(key)
    shape = tuple(linear.shape)
    if isinstance(values, Tensor):
        source = values.to(self.dtype).expand(shape)
    else:
        from . import _api
        source = _api.full(shape, _py_scalar(values), dtype=self.dtype, device=self.device,
                           session=self._session)
    return self.put_(linear, source.contiguous(), accumulate)


Tensor.index_put_ = _index_put_
Tensor.index_put = lambda self, indices, values, accumulate=False: self.clone().index_put_(indices, values, accumulate)


def _type_as(self, other):
    return self.to(other.dtype)


Tensor.type_as = _type_as


# ---- random numbers ----------------------------------------------------------------------------

class _Generator:
    """torch's default generator as (seed, offset): each random op draws from counters
    offset … offset + numel - 1 of a counter-based generator keyed by seed (on the server)."""

    def __init__(self):
        self.seed = int.from_bytes(os.urandom(7), "little")
        self.offset = 0

    def take(self, n):
        off = self.offset
        self.offset += max(int(n), 1)
        return {"seed": self.seed, "offset": off}


default_generator = _Generator()


def manual_seed(seed):
    default_generator.seed = int(seed) & ((1 << 63) - 1)
    default_generator.offset = 0
    return default_generator


def seed():
    default_generator.__init__()
    return default_generator.seed


def initial_seed():
    return default_generator.seed


def _numel(shape):
    return int(np.prod(shape, dtype=np.int64)) if shape else 1


def _random_factory(name, size, dtype, device, session, extra=None):
    from . import _api
    s = _api._session(session)
    shape = _int_list(size, name, "size")
    attrs = {"size": shape, **default_generator.take(_numel(shape))}
    if dtype is not None:
        attrs["dtype"] = dtype
    if extra:
        attrs.update(extra)
    return _op_on(s, _api._add_device(attrs, device), name, [], attrs)


def rand(*size, dtype=None, device=None, session=None, generator=None, requires_grad=False):
    return _random_factory("rand", size, dtype, device, session)


def randn(*size, dtype=None, device=None, session=None, generator=None, requires_grad=False):
    return _random_factory("randn", size, dtype, device, session)


def randint(low, high=None, size=None, dtype=None, device=None, session=None, generator=None,
            requires_grad=False):
    if size is None:
        if high is None or not isinstance(high, (tuple, list, _dtypes.Size)):
            raise TypeError("randint() missing required argument 'size'")
        low, high, size = 0, low, high
    elif high is None:
        low, high = 0, low
    return _random_factory("randint", (size,), dtype, device, session,
                           {"low": int(low), "high": int(high)})


def _like_device(input, device):
    return input.device if device is None else device


def rand_like(input, dtype=None, device=None, requires_grad=False, memory_format=None):
    return rand(tuple(input.shape), dtype=dtype or input.dtype,
                device=_like_device(input, device), session=input._session)


def randn_like(input, dtype=None, device=None, requires_grad=False, memory_format=None):
    return randn(tuple(input.shape), dtype=dtype or input.dtype,
                 device=_like_device(input, device), session=input._session)


def randint_like(input, low, high=None, dtype=None, device=None, requires_grad=False,
                 memory_format=None):
    return randint(low, high, tuple(input.shape), dtype=dtype or input.dtype,
                   device=_like_device(input, device), session=input._session)


def randperm(n, dtype=None, device=None, session=None, generator=None, requires_grad=False):
    """A permutation of range(n): sorted random keys drawn from the generator's stream (so
    manual_seed makes it reproducible)."""
    from . import _api
    g = default_generator.take(n)
    rng = np.random.default_rng([g["seed"], g["offset"]])
    perm = rng.permutation(int(n)).astype(np.int64)
    t = _api.tensor(perm, device=device, session=session)
    return t if dtype is None else t.to(dtype)


def _inplace_random(name, attrs_fn):
    def f(self, *args, generator=None, **kwargs):
        attrs = attrs_fn(*args, **kwargs)
        attrs.update(default_generator.take(self.numel()))
        return _inplace(self, name, [], attrs)
    f.__name__ = name
    return f


Tensor.uniform_ = _inplace_random("uniform_", lambda a=0, b=1: {"from": float(a), "to": float(b)})
Tensor.normal_ = _inplace_random("normal_", lambda mean=0, std=1: {"mean": float(mean), "std": float(std)})
Tensor.bernoulli_ = _inplace_random("bernoulli_", lambda p=0.5: {"p": float(p)})


def _bernoulli(self, generator=None):
    return _run("bernoulli", [("self", self)], default_generator.take(self.numel()))


Tensor.bernoulli = _bernoulli


def normal(mean, std, size=None, *, generator=None, device=None, session=None):
    if isinstance(mean, Tensor) or isinstance(std, Tensor):
        ref = mean if isinstance(mean, Tensor) else std
        return randn_like(ref if ref.dtype.is_floating_point else ref.float()) * std + mean
    return randn(*size, device=device, session=session) * float(std) + float(mean)


def bernoulli(input, p=None, *, generator=None):
    if p is not None:
        return input.clone().bernoulli_(p)
    return input.bernoulli()


# ---- the functional forms ----------------------------------------------------------------------

def _fn(name):
    def f(input, *args, out=None, **kwargs):
        if not isinstance(input, Tensor):
            if _is_scalar(input) and args and isinstance(args[0], Tensor) and name in _NUMBER_FIRST:
                if name == "float_power":
                    return _run("pow", [("self", float(input)), ("other", args[0].double())])
                if kwargs:
                    return _run(name, [("self", _py_scalar(input)), ("other", args[0])],
                                {"alpha": kwargs["alpha"]} if "alpha" in kwargs else
                                _rounding(kwargs.get("rounding_mode")))
                # torch.add(2, t) / torch.pow(2, t): the number is self.
                return _run(name, [("self", _py_scalar(input)), ("other", args[0])])
            raise TypeError(f"{name}(): argument 'input' must be Tensor, not {type(input).__name__}")
        result = getattr(input, name)(*args, **kwargs)
        if out is not None:
            if tuple(out.shape) != tuple(result.shape):
                raise RuntimeError(f"tensord: {name}(out=…) needs out of shape {tuple(result.shape)}")
            out.copy_(result)
            return out
        return result
    f.__name__ = name
    f.__doc__ = f"torch.{name}"
    return f


FUNCTIONS = (_UNARY + _UNARY_NO_INPLACE + _BINARY + _BINARY_NO_INPLACE +
             ["add", "sub", "subtract", "div", "divide", "round", "clamp", "clip", "clamp_min",
              "clamp_max", "nan_to_num", "lerp", "addcmul", "addcdiv", "sum", "mean", "prod",
              "max", "min", "amax", "amin", "argmax", "argmin", "all", "any", "count_nonzero",
              "var", "std", "norm", "logsumexp", "cumsum", "cumprod", "softmax", "log_softmax",
              "matmul", "mm", "bmm", "dot", "mv", "outer", "ger", "inner", "addmm",
              "index_select", "gather", "scatter", "scatter_add", "masked_fill", "masked_select",
              "index_put", "gelu", "float_power"])


# ---- shape and data ----------------------------------------------------------------------------

def _roll(self, shifts, dims=None):
    """torch.roll: a contiguous copy, each listed dim rotated (built from narrow views and cat)."""
    from . import _api
    if dims is None:
        if isinstance(shifts, (tuple, list)) and len(shifts) != 1:
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:0")
        s = shifts[0] if isinstance(shifts, (tuple, list)) else shifts
        return _roll(self.flatten(), s, 0).view(tuple(self.shape))
    shifts = tuple(shifts) if isinstance(shifts, (tuple, list)) else (shifts,)
    dims = tuple(dims) if isinstance(dims, (tuple, list)) else (dims,)
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}")
    out = self
    for s, d in zip(shifts, dims):
        n = out.size(d)
        s = _int(s, "roll", "shifts") % n if n else 0
        if s:
            out = _api.cat([out.narrow(d, n - s, s), out.narrow(d, 0, n - s)], d)
    return out.contiguous() if out is self else out


def _triangle(name, lower, inplace):
    def f(self, diagonal=0):
        if self.dim() == 0:
            raise IndexError("Dimension specified as -2 but tensor has no dimensions")
        if self.dim() < 2:
            raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but "
                             "got -2)")
        from . import _api
        n, m = self.shape[-2], self.shape[-1]
        rows = _api.arange(n, device=self.device, session=self._session).unsqueeze(1)
        cols = _api.arange(m, device=self.device, session=self._session)
        offset = cols - rows  # column minus row: 0 on the diagonal
        drop = offset > diagonal if lower else offset < diagonal
        if inplace:
            return self.masked_fill_(drop, 0)
        return self.masked_fill(drop, 0)
    f.__name__ = name
    return f


Tensor.roll = _roll
Tensor.tril = _triangle("tril", True, False)
Tensor.triu = _triangle("triu", False, False)
Tensor.tril_ = _triangle("tril", True, True)
Tensor.triu_ = _triangle("triu", False, True)
FUNCTIONS += ["roll", "tril", "triu"]
