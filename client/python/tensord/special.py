"""torch.special on tensord.

Each function is a server op: entr, ndtr, xlog1py, zeta, the Bessel functions (i0e, i1, i1e,
bessel_j0/j1/y0/y1, modified_bessel_i0/i1/k0/k1, scaled_modified_bessel_k0/k1,
spherical_bessel_j0), airy_ai, ndtri, log_ndtr, erfcx and the orthogonal polynomials
(chebyshev_polynomial_t/u/v/w and their shifted forms, hermite_polynomial_h/he,
laguerre_polynomial_l, legendre_polynomial_p) have kernels of their own
(engine/kernels/special_functions.h through unary_ops.h and binary_ops.h); gammainc and
gammaincc are igamma and igammac; the rest are torch.special's names for ops tensord has under
torch's (expit is sigmoid, gammaln is lgamma, psi is digamma, multigammaln is mvlgamma, …), as
in torch.
"""
from ._compute import _run
from ._out import write_out
from ._ops import TensorBase, _is_scalar, _py_scalar

_KERNELS = ["i0e", "i1", "i1e", "ndtri", "log_ndtr", "erfcx", "bessel_j0", "bessel_j1",
            "bessel_y0", "bessel_y1", "modified_bessel_i0", "modified_bessel_i1",
            "modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0",
            "scaled_modified_bessel_k1", "spherical_bessel_j0", "airy_ai"]
_POLYNOMIALS = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
                "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t",
                "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
                "shifted_chebyshev_polynomial_w", "hermite_polynomial_h",
                "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p"]

__all__ = sorted(["digamma", "entr", "erf", "erfc", "erfinv", "exp2", "expit", "expm1",
                  "gammainc", "gammaincc", "gammaln", "i0", "log1p", "log_softmax", "logit",
                  "logsumexp", "multigammaln", "ndtr", "polygamma", "psi", "round", "sinc",
                  "softmax", "xlog1py", "xlogy", "zeta"] + _KERNELS + _POLYNOMIALS)


def _api():
    from . import _api as api  # noqa: PLC0415 - import cycle
    return api


def _tensor(name, x, arg="input", position=1):
    if not isinstance(x, TensorBase):
        raise TypeError(f"special_{name}(): argument '{arg}' (position {position}) must be "
                        f"Tensor, not {type(x).__name__}")
    return x


def _unary(name, method):
    def f(input, *, out=None):
        return _out(getattr(_tensor(name, input), method)(), out)
    f.__name__ = name
    f.__doc__ = f"torch.special.{name}: Tensor.{method}."
    return f


digamma = _unary("digamma", "digamma")
psi = _unary("psi", "digamma")
erf = _unary("erf", "erf")
erfc = _unary("erfc", "erfc")
erfinv = _unary("erfinv", "erfinv")
exp2 = _unary("exp2", "exp2")
expit = _unary("expit", "sigmoid")
expm1 = _unary("expm1", "expm1")
gammaln = _unary("gammaln", "lgamma")
i0 = _unary("i0", "i0")
log1p = _unary("log1p", "log1p")
sinc = _unary("sinc", "sinc")


def _out(result, out):
    """out= of torch.special's functions: elementwise kernels, which cast into out's dtype."""
    return write_out(result, out, "special")


def entr(input, *, out=None):
    """-x ln x elementwise: 0 at 0, -inf below 0 (integers computed in the default dtype)."""
    return _out(_run("special_entr", [("self", _tensor("entr", input))]), out)


def ndtr(input, *, out=None):
    """The standard normal's distribution function, erfc(-x / sqrt(2)) / 2."""
    return _out(_run("special_ndtr", [("self", _tensor("ndtr", input))]), out)


def _kernel(name):
    """torch.special.<name>(input) as the server op special_<name>."""
    def f(input, *, out=None):
        return _out(_run("special_" + name, [("self", _tensor(name, input))]), out)
    f.__name__ = name
    f.__doc__ = f"torch.special.{name}, elementwise (integers computed in the default dtype)."
    return f


for _name in _KERNELS:
    globals()[_name] = _kernel(_name)


def _polynomial(name):
    """torch.special.<name>(x, n): the polynomial of degree n at x, elementwise and broadcast;
    either x or n may be a number (not both). n is truncated toward zero; a negative, NaN or
    infinite n gives 0, as torch's."""
    def f(x, n, *, out=None):
        x_tensor, n_tensor = isinstance(x, TensorBase), isinstance(n, TensorBase)
        if not ((x_tensor or _is_scalar(x)) and (n_tensor or _is_scalar(n))
                and (x_tensor or n_tensor)):
            raise TypeError(
                f"special_{name}() received an invalid combination of arguments - got "
                f"({type(x).__name__}, {type(n).__name__}), but expected one of:\n"
                " * (Tensor x, Tensor n, *, Tensor out)\n"
                " * (Number x, Tensor n, *, Tensor out)\n"
                " * (Tensor x, Number n, *, Tensor out)\n")
        x = x if x_tensor else _py_scalar(x)
        n = n if n_tensor else _py_scalar(n)
        return _out(_run("special_" + name, [("self", x), ("other", n)]), out)
    f.__name__ = name
    f.__doc__ = _polynomial.__doc__.replace("<name>", name)
    return f


for _name in _POLYNOMIALS:
    globals()[_name] = _polynomial(_name)
del _name


def _binary(name, op, doc, numbers=True):
    """torch.special.<name>(input, other) as server op `op`; with `numbers`, either side may be
    a Python number (as torch's xlogy and zeta take), else both must be tensors."""
    def f(input, other, *, out=None):
        if not isinstance(input, TensorBase):
            if not (numbers and _is_scalar(input) and isinstance(other, TensorBase)):
                _tensor(name, input, "self")
            input = _py_scalar(input)
        elif not isinstance(other, TensorBase):
            if not (numbers and _is_scalar(other)):
                _tensor(name, other, "other", 2)
            other = _py_scalar(other)
        return _out(_run(op, [("self", input), ("other", other)]), out)
    f.__name__ = name
    f.__doc__ = doc
    return f


xlog1py = _binary("xlog1py", "special_xlog1py",
                  "x * log1p(y): 0 where x is 0 (and y not NaN), as torch's.")
xlogy = _binary("xlogy", "xlogy", "x * log(y): 0 where x is 0 (and y not NaN), as torch's.")
zeta = _binary("zeta", "special_zeta",
               "The Hurwitz zeta function: the sum over k >= 0 of (k + other)^-input.")
gammainc = _binary("gammainc", "igamma",
                   "The regularized lower incomplete gamma function P(input, other) (igamma).",
                   numbers=False)
gammaincc = _binary("gammaincc", "igammac",
                    "The regularized upper incomplete gamma function Q(input, other) (igammac).",
                    numbers=False)


def logit(input, eps=None, *, out=None):
    return _out(_tensor("logit", input).logit(eps), out)


def multigammaln(input, p, *, out=None):
    return _out(_tensor("multigammaln", input).mvlgamma(p), out)


def polygamma(n, input, *, out=None):
    return _out(_tensor("polygamma", input, position=2).polygamma(n), out)


def round(input, *, decimals=0, out=None):  # noqa: A001 - torch.special.round
    return _out(_tensor("round", input).round(decimals=decimals), out)


def logsumexp(input, dim, keepdim=False, *, out=None):
    return _out(_tensor("logsumexp", input).logsumexp(dim, keepdim), out)


def softmax(input, dim, *, dtype=None):
    return _tensor("softmax", input).softmax(dim, dtype=dtype)


def log_softmax(input, dim, *, dtype=None):
    return _tensor("log_softmax", input).log_softmax(dim, dtype=dtype)
