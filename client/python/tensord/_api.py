"""Module-level functions, as torch's: the factories (_factories.py), the functional forms of
ops, and session helpers.

Each takes an optional `session=`; without one it uses the innermost `with session:` block's
session, else a default session opened lazily on $TENSORD_ADDRESS (127.0.0.1:50051).
"""
from ._out import check_no_partial_overlap, write_out
from . import _dtypes, _grad_mode
from .autograd import graph as _graph
from ._compute import (_BINARY, _BINARY_NO_INPLACE, _NUMBER_FIRST, _SPECIAL, _UNARY,
                       _UNARY_NO_INPLACE,
                       _rounding, _run, nonzero, where)
from ._factories import (_session, arange, as_tensor, cartesian_prod, cat, concat,  # noqa: F401
                         concatenate, empty, empty_like, empty_strided, eye, from_file,
                         from_numpy,
                         frombuffer, full, full_like, hstack, linspace, meshgrid, ones, ones_like,
                         rand, rand_like, randint, randint_like, randn, randn_like, randperm,
                         stack, tensor, vstack, zeros, zeros_like)
from ._ops import _is_scalar, _py_scalar
from ._random import (Generator, default_generator, get_rng_state, initial_seed,  # noqa: F401
                      manual_seed, seed, set_rng_state)
from ._session import connect, current_session, set_default_session  # noqa: F401
from ._tensor import Tensor

def synchronize(session=None):
    """Waits for every queued op of the session; raises the first asynchronous error."""
    _session(session).synchronize()


def cancel(session=None):
    """Drops every queued op of the session (Session.cancel); returns how many. Ctrl-C while
    waiting for the session's work does this by itself."""
    return _session(session).cancel()


get_default_dtype = _dtypes.get_default_dtype
set_default_dtype = _dtypes.set_default_dtype


def set_default_tensor_type(t):
    """torch.set_default_tensor_type: a floating legacy type (tensord.DoubleTensor) or its name
    ("torch.DoubleTensor") sets the default dtype; tensors are made on the session's device."""
    if isinstance(t, str):
        module, _, name = t.rpartition(".")
        if module != "torch":  # torch imports the module the name is in
            raise ModuleNotFoundError(f"No module named '{module or t}'")
        d = next((x for x in _dtypes.ALL if f"{x._legacy}Tensor" == name), None)
        if d is None:
            raise AttributeError(f"module 'torch' has no attribute '{name}'")
    else:
        d = getattr(t, "dtype", None)
        if not isinstance(d, _dtypes.dtype):
            raise TypeError("invalid type object: only floating-point types are supported as the "
                            "default type")
    set_default_dtype(d)


def is_tensor(obj):
    return isinstance(obj, Tensor)


def numel(input):
    return input.numel()


def is_floating_point(input):
    return input.is_floating_point()


promote_types = _dtypes.promote_types


_FUNCTIONAL = ["view_as", "reshape", "flatten", "unflatten", "as_strided", "transpose", "swapaxes",
               "swapdims", "t", "adjoint", "alias", "detach", "permute", "movedim", "moveaxis",
               "broadcast_to", "squeeze", "unsqueeze", "narrow", "select", "diagonal", "split",
               "tensor_split", "chunk", "unbind", "clone", "flip", "take"]


@_graph.honour_requires_grad
def normal(mean, std, size=None, *, generator=None, dtype=None, device=None, session=None,
           layout=None, pin_memory=False, requires_grad=False, out=None):
    if out is not None:
        return write_out(normal(mean, std, size, generator=generator, dtype=dtype,
                                device=device or out.device, session=session), out, "normal")
    if dtype is not None and not (isinstance(mean, Tensor) or isinstance(std, Tensor)):
        return randn(*size, dtype=dtype, device=device, session=session,
                     generator=generator) * float(std) + float(mean)
    if isinstance(mean, Tensor) or isinstance(std, Tensor):
        ref = mean if isinstance(mean, Tensor) else std
        ref = ref if ref.dtype.is_floating_point else ref.float()
        with _grad_mode.no_grad():
            out = randn(tuple(ref.shape), dtype=ref.dtype, device=ref.device,
                        session=ref._session, generator=generator) * std + mean
        if _graph.recording([mean, std]):  # zero gradients, as torch's
            _graph.record("normal", [mean, std], None, [out])
        return out
    return randn(*size, device=device, session=session, generator=generator) * float(std) + \
        float(mean)


def bernoulli(input, p=None, *, generator=None):
    if p is not None:  # draws of probability p shaped as input: no gradient, as torch's
        with _grad_mode.no_grad():
            return input.clone().bernoulli_(p, generator=generator)
    return input.bernoulli(generator=generator)


def poisson(input, generator=None):
    """A Poisson draw with rate input[i] per element (one server op: Knuth's product below rate
    10, PTRS above), from the session's counter-based generator as every random op."""
    from ._random import _of as _random_of  # noqa: PLC0415
    if not isinstance(input, Tensor):
        raise TypeError(f"poisson(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    return _run("poisson", [("self", input)], _random_of(generator).take(input.numel()))


def binomial(count, prob, generator=None):
    """A Binomial(count[i], prob[i]) draw per element (one server op: geometric gaps below
    count * min(p, 1 - p) = 10, BTRS above), count and prob broadcast, in count's dtype."""
    from ._random import _of as _random_of  # noqa: PLC0415
    for name, t in (("count", count), ("prob", prob)):
        if not isinstance(t, Tensor):
            raise TypeError(f"binomial(): argument '{name}' must be Tensor, not "
                            f"{type(t).__name__}")
    from ._composite import broadcast_shapes  # noqa: PLC0415
    n = 1
    for size in broadcast_shapes(tuple(count.shape), tuple(prob.shape)):
        n *= size
    return _run("binomial", [("count", count), ("prob", prob)], _random_of(generator).take(n))


def _fn(name):
    def f(*args, out=None, **kwargs):
        if args:
            input, args = args[0], args[1:]
        elif "input" in kwargs:  # torch.add(input=x, other=y)
            input = kwargs.pop("input")
        else:
            raise TypeError(f"{name}() missing 1 required positional argument: 'input'")
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
        if out is not None and name in _ELEMENTWISE:
            check_no_partial_overlap(out, [input, *args, *kwargs.values()])
        return write_out(getattr(input, name)(*args, **kwargs), out, name)
    f.__name__ = name
    f.__doc__ = f"torch.{name}"
    return f


# Elementwise functions: torch refuses an out= that partly overlaps one of their inputs.
_ELEMENTWISE = frozenset(_UNARY + _UNARY_NO_INPLACE + _BINARY + _BINARY_NO_INPLACE + _SPECIAL +
                         ["logit", "hardshrink", "add", "sub", "subtract", "div", "divide",
                          "round", "clamp", "clip", "clamp_min", "clamp_max", "nan_to_num",
                          "lerp", "addcmul", "addcdiv", "float_power"])

FUNCTIONS = (_UNARY + _UNARY_NO_INPLACE + _BINARY + _BINARY_NO_INPLACE + _SPECIAL +
             ["logit", "hardshrink"] +
             ["add", "sub", "subtract", "div", "divide", "round", "clamp", "clip", "clamp_min",
              "clamp_max", "nan_to_num", "lerp", "addcmul", "addcdiv", "sum", "mean", "prod",
              "max", "min", "amax", "amin", "argmax", "argmin", "all", "any", "count_nonzero",
              "sort", "argsort", "topk", "kthvalue", "msort",
              "var", "std", "norm", "logsumexp", "cumsum", "cumprod", "softmax", "log_softmax",
              "matmul", "mm", "bmm", "dot", "mv", "outer", "ger", "inner", "addmm",
              "index_select", "gather", "scatter", "scatter_add", "masked_fill", "masked_select",
              "index_put", "gelu", "float_power"])


FUNCTIONS += ["roll", "tril", "triu"]
# Real tensors' answers to torch's complex-number functions.
FUNCTIONS += ["conj", "resolve_conj", "resolve_neg", "is_conj", "is_neg", "is_complex", "isreal",
              "angle"]


def real(input):
    return input.real


def imag(input):
    return input.imag
