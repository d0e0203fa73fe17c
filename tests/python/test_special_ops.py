"""Special functions and activations against torch 1.13: values (tolerances per dtype), dtypes,
sizes, strides and exception classes, over dtypes and layouts, with NaN, infinities and each
function's edges (poles, domain ends) in the inputs.
"""
import math

import pytest
import torch
import torch.nn.functional as F

import tensord
from oracle import as_torch, outcome, reference_outcome
import tensord.nn.functional as TF

DTYPES = ["bool", "uint8", "int32", "int64", "float16", "bfloat16", "float32", "float64"]

VALUES = [-3.5, -2.0, -1.0, -0.5, -1e-3, 0.0, 1e-3, 0.25, 0.5, 0.9, 1.0, 1.5, 2.0, 7.25, 10.0, 25.0,
          math.inf, -math.inf, math.nan]

# name -> (torch callable, tensord callable)
UNARY = {n: (lambda t, n=n: getattr(torch, n)(t), lambda t, n=n: getattr(tensord, n)(t))
         for n in ["acosh", "asinh", "atanh", "arccosh", "arcsinh", "arctanh", "arcsin", "arccos",
                   "arctan", "erfc", "erfinv", "lgamma", "digamma", "sinc", "deg2rad", "rad2deg",
                   "logit"]}
UNARY["logit(eps)"] = (lambda t: torch.logit(t, eps=1e-3), lambda t: tensord.logit(t, eps=1e-3))
UNARY["Tensor.acosh"] = (lambda t: t.acosh(), lambda t: t.acosh())
UNARY["Tensor.hardshrink"] = (lambda t: t.hardshrink(0.6), lambda t: t.hardshrink(0.6))
ACTIVATIONS = {
    "softplus": ((), {}), "softplus(beta, threshold)": ((), {"beta": 2.0, "threshold": 5.0}),
    "elu": ((), {}), "elu(alpha)": ((), {"alpha": 0.3}), "selu": ((), {}), "celu": ((), {}),
    "celu(alpha)": ((), {"alpha": 2.5}), "hardsigmoid": ((), {}), "hardswish": ((), {}),
    "mish": ((), {}), "logsigmoid": ((), {}), "hardshrink": ((), {}),
    "hardshrink(lambd)": ((), {"lambd": 1.0}), "softshrink": ((), {}),
    "softshrink(lambd)": ((), {"lambd": 2.0}), "softshrink(negative)": ((), {"lambd": -1.0}),
    "softsign": ((), {}), "tanhshrink": ((), {}), "hardtanh": ((), {}),
    "hardtanh(bounds)": ((), {"min_val": -2.0, "max_val": 3.0}), "relu6": ((), {}),
}
for _label, (_args, _kwargs) in ACTIVATIONS.items():
    _name = _label.split("(")[0]
    UNARY["F." + _label] = (
        lambda t, n=_name, k=_kwargs: getattr(F, n)(t, **k),
        lambda t, n=_name, k=_kwargs: getattr(TF, n)(t, **k))
for _name in ("elu", "selu", "celu", "hardsigmoid", "hardswish", "mish", "hardtanh", "relu6"):
    UNARY[f"F.{_name}(inplace)"] = (
        lambda t, n=_name: getattr(F, n)(t.clone(), inplace=True),
        lambda t, n=_name: getattr(TF, n)(t.clone(), inplace=True))
for _name in ["entr", "ndtr", "expit", "gammaln", "psi", "exp2", "erfc", "i0", "sinc"]:
    UNARY["special." + _name] = (lambda t, n=_name: getattr(torch.special, n)(t),
                                 lambda t, n=_name: getattr(tensord.special, n)(t))
UNARY["Tensor.acosh_"] = (lambda t: t.clone().acosh_(), lambda t: t.clone().acosh_())
UNARY["Tensor.logit_"] = (lambda t: t.clone().logit_(1e-2), lambda t: t.clone().logit_(1e-2))


def make(m, dtype, layout):
    """The inputs in `dtype` and `layout`, built the same way by torch and by tensord."""
    base = m.tensor(VALUES * 2, dtype=m.float64).view(2, len(VALUES))
    if dtype == "bool":
        t = base.nan_to_num(0.0) != 0
    elif dtype in ("uint8", "int32", "int64"):
        t = base.nan_to_num(0.0, posinf=100.0, neginf=-100.0)
        t = (t.abs() if dtype == "uint8" else t).to(getattr(m, dtype))
    else:
        t = base.to(getattr(m, dtype))
    if layout == "transposed":
        t = t.t().contiguous().t()
    elif layout == "sliced":
        t = m.cat([t, t], 1)[:, ::2]
    return t


TOL = {torch.float16: (2e-3, 1e-3), torch.bfloat16: (1.6e-2, 1e-2), torch.float32: (2e-5, 1e-5),
       torch.float64: (1e-10, 1e-12)}


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(UNARY))
def test_matches_torch(name, dtype, layout, session):
    torch_fn, tensord_fn = UNARY[name]
    scale = 10 if "lgamma" in name or "digamma" in name or "erfinv" in name else 1
    _compare(reference_outcome(lambda: torch_fn(make(torch, dtype, layout)),
                               lambda: tensord_fn(make(tensord, dtype, layout))),
             outcome(lambda: tensord_fn(make(tensord, dtype, layout))), TOL, scale)


def _compare(want_outcome, got_outcome, tol, rtol_scale=1):
    """torch's (or the CPU backend's: oracle.reference_outcome) and tensord's outcomes of one
    case: the same exception class, or the same dtype, shape, strides and values (floating ones
    within tol[dtype] = (rtol, atol))."""
    (want, werr), (got, gerr) = want_outcome, got_outcome
    if werr:
        assert gerr is not None and gerr[0] == werr[0], (gerr, werr)
        return
    assert gerr is None, gerr
    assert str(got.dtype) == str(want.dtype)
    assert tuple(got.shape) == tuple(want.shape)
    assert got.stride() == want.stride()
    want = as_torch(want)
    g = as_torch(got)
    if want.is_floating_point():
        rtol, atol = tol[want.dtype]
        torch.testing.assert_close(g.double(), want.double(), rtol=rtol * rtol_scale, atol=atol,
                                   equal_nan=True)
    else:
        assert torch.equal(g, want)


# The float32 exponential family runs on vectorized math (engine/cpu/vec_math.h): checked at
# the range's ends (exp's subnormal results and its overflow point, tanh's switch at 0.625,
# erf's at 1, tiny arguments) and over many ordinary values, against torch at ulp-level
# tolerances; gelu against torch's own erf approximation's error.
VECTOR_EDGES = [0.0, -0.0, 1e-30, -1e-30, 1e-40, 1e-45, 1.17549435e-38, 3.4e38, 0.7071067,
                0.7071068, 1.0000001, 0.99999994, 1e-8, -1e-8, 1e-3, -1e-3, 0.5, 0.6249,
                0.6251, 0.9999, 1.0001, 3.0, 9.0, 10.0, 20.0, 44.0, 50.0, 87.0, 88.5, 88.7,
                89.0, 100.0, 103.0, 105.0, math.inf, math.nan]
VECTOR_FUNCS = {  # name -> (torch, tensord, rtol, atol)
    "exp": (torch.exp, lambda t: t.exp(), 2e-7, 0),
    "log": (torch.log, lambda t: t.log(), 2e-7, 0),
    "sigmoid": (torch.sigmoid, lambda t: t.sigmoid(), 4e-7, 1e-45),
    "silu": (F.silu, TF.silu, 4e-7, 1e-45),
    "tanh": (torch.tanh, lambda t: t.tanh(), 4e-7, 0),
    "erf": (torch.erf, lambda t: t.erf(), 4e-7, 0),
    # torch's own gelu approximates erf to 1.5e-7 (absolute): 1e-4 relative where 1 + erf ~ 0.
    "gelu": (F.gelu, TF.gelu, 2e-4, 1e-6),
    # 1 + tanh near -1 is a few float32 ulps at 1, times x / 2.
    "gelu(tanh)": (lambda t: F.gelu(t, approximate="tanh"),
                   lambda t: TF.gelu(t, approximate="tanh"), 4e-7, 4e-7),
}


@pytest.mark.parametrize("name", sorted(VECTOR_FUNCS))
def test_float32_vector_math_matches_torch(name, session):
    want_fn, got_fn, rtol, atol = VECTOR_FUNCS[name]
    values = VECTOR_EDGES + [-v for v in VECTOR_EDGES]
    ordinary = torch.linspace(-12, 12, 20001)
    x = torch.cat([torch.tensor(values), ordinary]).float()
    want = want_fn(x)
    # Contiguous, and a column of an (n, 2) tensor (stride 2: the gathered path).
    contiguous = tensord.tensor(x.numpy())
    strided = tensord.tensor(torch.stack([x, -x], 1).numpy())[:, 0]
    assert strided.stride() == (2,)
    for got in (got_fn(contiguous), got_fn(strided)):
        got = as_torch(got)
        assert got.dtype == torch.float32
        torch.testing.assert_close(got, want, rtol=rtol, atol=atol, equal_nan=True)
        assert torch.equal(torch.isinf(want), torch.isinf(got))


POW_BASES = [-3.0, -1.0, -0.5, 0.0, 0.5, 1.0, 1.5, 2.0, 10.0, math.inf, math.nan]


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16", "float16", "int64", "int32"])
@pytest.mark.parametrize("exponent", [2, 3, 0.5, -0.5, -1, -2, 2.1, 257, 0, 1, 1.5])
def test_pow_with_a_number_exponent_matches_torch(dtype, exponent, session):
    """tensor ** number runs torch's scalar-exponent kernel: x * x for 2, sqrt for 0.5, …, the
    exponent first rounded to the tensor's dtype (bfloat16's 2.1 is 2.09375, its 257 is 256)."""
    tdt = getattr(torch, dtype)
    if not tdt.is_floating_point:
        bases = [-3, -1, 0, 1, 2, 10]
    else:
        bases = POW_BASES
    x = torch.tensor(bases, dtype=torch.float64).to(tdt)
    want, werr = outcome(lambda: x ** exponent)
    got, gerr = outcome(lambda: as_torch(tensord.tensor(x.tolist(), dtype=getattr(tensord, dtype))
                                         ** exponent))
    if werr:
        assert gerr is not None and gerr[0] == werr[0], (gerr, werr)
        return
    assert gerr is None, gerr
    assert got.dtype == want.dtype
    tol = {torch.bfloat16: 1e-2, torch.float16: 1e-3}.get(want.dtype, 1e-6)
    torch.testing.assert_close(got, want, rtol=tol, atol=0, equal_nan=True)


# Binary special functions: every pair of VALUES (a row of one against a column of the other),
# over dtypes and both operand layouts. igamma/igammac: torch 1.13's own float64 results are off
# by up to 4e-10 (relative) near a ~ x (tensord's are within 1e-14 there: see the mpmath test
# below), and its float32 ones are computed in float32 (tensord's in double): the tolerances
# cover torch's error, not tensord's.
BINARY = {
    "igamma": (torch.igamma, tensord.igamma),
    "igammac": (torch.igammac, tensord.igammac),
    "Tensor.igamma": (lambda a, b: a.igamma(b), lambda a, b: a.igamma(b)),
    "Tensor.igammac_": (lambda a, b: a.clone().igammac_(b), lambda a, b: a.clone().igammac_(b)),
    "special.gammainc": (torch.special.gammainc, tensord.special.gammainc),
    "special.gammaincc": (torch.special.gammaincc, tensord.special.gammaincc),
    "special.xlog1py": (torch.special.xlog1py, tensord.special.xlog1py),
    "special.xlogy": (torch.special.xlogy, tensord.special.xlogy),
    "special.zeta": (torch.special.zeta, tensord.special.zeta),
}
BINARY_TOL = {torch.float16: (4e-3, 2e-3), torch.bfloat16: (3.2e-2, 2e-2),
              torch.float32: (3e-5, 3e-5), torch.float64: (5e-9, 1e-12)}


def make_pair(m, dtype, other_dtype, layout):
    """(column of VALUES, row of VALUES) in the dtypes; `layout` applies to the first."""
    a = make(m, dtype, layout)[0].reshape(-1, 1)
    b = make(m, other_dtype, "contiguous")[1].reshape(1, -1)
    a = a.expand(a.shape[0], b.shape[1])
    return (a.t().contiguous().t() if layout == "transposed" else a.contiguous()), b


@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
@pytest.mark.parametrize("dtypes", [(d, d) for d in DTYPES] + [("float32", "int64"),
                                    ("int32", "float64"), ("bfloat16", "float32")])
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_special_functions_match_torch(name, dtypes, layout, session):
    torch_fn, tensord_fn = BINARY[name]
    _compare(reference_outcome(lambda: torch_fn(*make_pair(torch, *dtypes, layout)),
                               lambda: tensord_fn(*make_pair(tensord, *dtypes, layout))),
             outcome(lambda: tensord_fn(*make_pair(tensord, *dtypes, layout))), BINARY_TOL)


def test_special_functions_refuse_numbers_where_torch_does(session):
    for fn in ("gammainc", "gammaincc"):
        with pytest.raises(TypeError):
            getattr(tensord.special, fn)(tensord.ones(2), 2.0)
    with pytest.raises(TypeError):
        tensord.igamma(tensord.ones(2), 2)
    # zeta and xlog1py take a number on either side, as torch's.
    for fn in ("zeta", "xlog1py"):
        for args in [(2.0, [1.0, 2.0]), ([2.0, 3.0], 2.0)]:
            t_args = [torch.tensor(a) if isinstance(a, list) else a for a in args]
            d_args = [tensord.tensor(a) if isinstance(a, list) else a for a in args]
            torch.testing.assert_close(as_torch(getattr(tensord.special, fn)(*d_args)),
                                       getattr(torch.special, fn)(*t_args))


def test_incomplete_gamma_against_high_precision(session):
    """igamma/igammac in float64 against mpmath at 30 digits: within 1e-10 relative over a
    from 1e-30 to 4e5 and x around a (series, continued fraction, the small-x series of Q and
    the uniform asymptotic expansion all reached), where torch 1.13 is off by up to 1e-9 and, for
    tiny a, by 100% (its Q(1e-30, 0.5) is 1.1e-30, the value is 5.6e-31)."""
    import mpmath  # noqa: PLC0415 - a dependency of torch's (through sympy)
    import numpy as np  # noqa: PLC0415
    mpmath.mp.dps = 30
    rng = np.random.default_rng(3)
    a = np.concatenate([np.exp(rng.uniform(-8, 13, 150)), [1e-30, 1e-30, 0.3, 100.0, 1e5, 3000.0]])
    x = np.concatenate([a[:150] * np.exp(rng.normal(0, 0.5, 150)),
                        [0.5, 1.0, 0.2, 100.0, 1e5 + 300, 2900.0]])
    got_p = tensord.igamma(tensord.tensor(a), tensord.tensor(x)).tolist()
    got_q = tensord.igammac(tensord.tensor(a), tensord.tensor(x)).tolist()
    worst, skipped = 0.0, 0
    for ai, xi, p, q in zip(a, x, got_p, got_q):
        try:
            want_p = mpmath.gammainc(ai, 0, xi, regularized=True)
            want_q = mpmath.gammainc(ai, xi, mpmath.inf, regularized=True)
        except mpmath.libmp.NoConvergence:  # far in the tail (x >> a > 4e4): mpmath gives up
            skipped += 1
            continue
        for got, want in ((p, want_p), (q, want_q)):
            if want < 1e-290:  # below double's normal range
                continue
            worst = max(worst, float(abs(got - want) / want))
    assert worst < 1e-10, worst
    assert skipped <= 5, skipped


def _p_series(mpmath, a, x):
    """P(a, x) by its power series at 40 digits (a high-precision reference where mpmath's own
    gammainc gives up: a above 1e6)."""
    a, x = mpmath.mpf(a), mpmath.mpf(x)
    term = total = mpmath.mpf(1)
    n = 0
    while term >= total * mpmath.mpf(10) ** -35:
        n += 1
        term *= x / (a + n)
        total += term
    return total * mpmath.exp(a * mpmath.log(x) - x - mpmath.loggamma(a + 1))


def _q_fraction(mpmath, a, x):
    """Q(a, x) by Legendre's continued fraction at 40 digits."""
    a, x = mpmath.mpf(a), mpmath.mpf(x)
    tiny = mpmath.mpf(10) ** -300
    b = x + 1 - a
    c, d = 1 / tiny, 1 / b
    h, i = d, 0
    while True:
        i += 1
        an = -i * (i - a)
        b += 2
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1 / d
        h *= d * c
        if abs(d * c - 1) < mpmath.mpf(10) ** -35:
            return mpmath.exp(a * mpmath.log(x) - x - mpmath.loggamma(a)) * h


def test_incomplete_gamma_for_very_large_a(session):
    """a up to 1e8, x a few standard deviations from a (where a series or the fraction would
    need O(sqrt(a)) terms): Temme's expansion within 1e-9 of 40-digit references, P + Q = 1."""
    import mpmath  # noqa: PLC0415
    mpmath.mp.dps = 40
    points = [(1e8, 1e8 - 4.6e4, "P"), (1e8, 1e8 + 4.6e4, "Q"), (2e4, 2.5e4, "Q"),
              (1e6, 1e6 - 5e3, "P"), (5e5, 5e5 - 3e3, "P")]
    a = tensord.tensor([p[0] for p in points], dtype=tensord.float64)
    x = tensord.tensor([p[1] for p in points], dtype=tensord.float64)
    got_p, got_q = tensord.igamma(a, x).tolist(), tensord.igammac(a, x).tolist()
    for (ai, xi, kind), p, q in zip(points, got_p, got_q):
        want = _p_series(mpmath, ai, xi) if kind == "P" else _q_fraction(mpmath, ai, xi)
        got = p if kind == "P" else q
        assert abs(got - want) <= 1e-9 * want, (ai, xi, kind, got, float(want))
        assert abs(p + q - 1) < 1e-12
