"""torch.distributions on tensord: log_prob, entropy, mean, mode, variance, cdf and icdf against
torch 1.13's values; samples against the distribution's moments (many draws) and support, seeded
draws repeat, shapes follow sample_shape + batch_shape + event_shape; validate_args (torch's
ValueError messages for bad parameters and values), reprs, constraints, expand and kl_divergence
against torch's.
"""
import math

import numpy as np
import pytest
import torch

import tensord
from oracle import as_torch
import tensord.distributions as D


_COV = [[2.0, 0.6, 0.2], [0.6, 1.0, -0.3], [0.2, -0.3, 1.5]]
_TRIL = [[1.5, 0.0, 0.0], [0.4, 0.8, 0.0], [-0.3, 0.2, 0.6]]


def params(m):
    return {
        "Normal": lambda: m.distributions.Normal(m.tensor([0.0, 1.5, -2.0]), m.tensor([1.0, 0.5, 3.0])),
        "Uniform": lambda: m.distributions.Uniform(m.tensor([0.0, -1.0]), m.tensor([1.0, 3.0])),
        "Bernoulli(probs)": lambda: m.distributions.Bernoulli(probs=m.tensor([0.1, 0.5, 0.9])),
        "Bernoulli(logits)": lambda: m.distributions.Bernoulli(logits=m.tensor([-2.0, 0.0, 3.0])),
        "Categorical(probs)": lambda: m.distributions.Categorical(
            probs=m.tensor([[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]])),
        "Categorical(logits)": lambda: m.distributions.Categorical(logits=m.tensor([0.5, -1.0, 2.0, 0.0])),
        "Exponential": lambda: m.distributions.Exponential(m.tensor([0.5, 2.0])),
        "Multinomial": lambda: m.distributions.Multinomial(5, probs=m.tensor([0.2, 0.3, 0.5])),
        "Gamma": lambda: m.distributions.Gamma(m.tensor([0.5, 2.0, 9.0]), m.tensor([1.0, 3.0, 0.5])),
        "Beta": lambda: m.distributions.Beta(m.tensor([0.5, 2.0, 5.0]), m.tensor([0.7, 2.0, 1.0])),
        "Poisson": lambda: m.distributions.Poisson(m.tensor([0.5, 4.0, 30.0])),
        "MultivariateNormal(covariance)": lambda: m.distributions.MultivariateNormal(
            m.tensor([1.0, -2.0, 0.5]), m.tensor(_COV)),
        "MultivariateNormal(precision)": lambda: m.distributions.MultivariateNormal(
            m.tensor([[0.0, 1.0, 2.0], [3.0, 0.0, -1.0]]), precision_matrix=m.tensor(_COV)),
        "MultivariateNormal(scale_tril)": lambda: m.distributions.MultivariateNormal(
            m.tensor([0.5, 0.5, 0.5]), scale_tril=m.tensor(_TRIL)),
    }


VALUES = {
    "Normal": [0.3, 1.0, -4.0], "Uniform": [0.5, 2.9], "Bernoulli(probs)": [1.0, 0.0, 1.0],
    "Bernoulli(logits)": [0.0, 1.0, 1.0], "Categorical(probs)": [2, 0],
    "Categorical(logits)": 2, "Exponential": [0.7, 0.1], "Multinomial": [1.0, 1.0, 3.0],
    "Gamma": [0.3, 1.2, 20.0], "Beta": [0.2, 0.5, 0.9], "Poisson": [0.0, 3.0, 28.0],
    "MultivariateNormal(covariance)": [0.3, -1.0, 2.0],
    "MultivariateNormal(precision)": [[0.1, 0.9, 2.5], [2.0, 0.5, -1.0]],
    "MultivariateNormal(scale_tril)": [[0.0, 1.0, 0.2], [1.0, 0.0, 0.7]],
}


@pytest.mark.parametrize("name", sorted(VALUES))
def test_values_match_torch(name, session):
    t = params(torch)[name]()
    d = params(tensord)[name]()
    for attr in ("mean", "variance", "stddev"):
        want = getattr(t, attr)
        got = as_torch(getattr(d, attr))
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6, equal_nan=True)
    v = VALUES[name]
    tv = torch.tensor(v) if not isinstance(v, int) else torch.tensor(v)
    dv = tensord.tensor(v)
    torch.testing.assert_close(as_torch(d.log_prob(dv)), t.log_prob(tv), rtol=1e-5, atol=1e-5)
    if name not in ("Multinomial", "Poisson"):  # torch has no entropy for these
        torch.testing.assert_close(as_torch(d.entropy()), t.entropy(), rtol=1e-5, atol=1e-5)
    if name.startswith("MultivariateNormal"):
        for attr in ("scale_tril", "covariance_matrix", "precision_matrix"):
            torch.testing.assert_close(as_torch(getattr(d, attr)), getattr(t, attr), rtol=1e-5,
                                       atol=1e-5)
    for method in ("cdf", "icdf"):
        if hasattr(t, method) and name in ("Normal", "Uniform", "Exponential"):
            arg = [0.25, 0.6, 0.9][:len(v)] if method == "icdf" else v
            torch.testing.assert_close(as_torch(getattr(d, method)(tensord.tensor(arg))),
                                       getattr(t, method)(torch.tensor(arg)), rtol=1e-5,
                                       atol=1e-5)
    assert tuple(d.batch_shape) == tuple(t.batch_shape)
    assert tuple(d.event_shape) == tuple(t.event_shape)


@pytest.mark.parametrize("name", sorted(VALUES))
def test_samples_have_the_distributions_moments(name, session):
    t = params(torch)[name]()
    d = params(tensord)[name]()
    n = 20000
    tensord.manual_seed(5)
    draws = d.sample((n,))
    assert tuple(draws.shape) == tuple(t.sample((n,)).shape)
    tensord.manual_seed(5)
    assert torch.equal(as_torch(params(tensord)[name]().sample((n,))), as_torch(draws))
    x = as_torch(draws).double()
    if name.startswith("Categorical"):
        counts = torch.nn.functional.one_hot(x.long(), t.probs.shape[-1]).double().mean(0)
        torch.testing.assert_close(counts, t.probs.double(), atol=0.02, rtol=0)
        return
    mean, std = x.mean(0), x.std(0)
    want_mean, want_std = t.mean.double(), t.stddev.double()
    # Four standard errors of the mean, and 10% on the spread.
    assert torch.all((mean - want_mean).abs() <= 4 * want_std / math.sqrt(n) + 1e-9), (mean, want_mean)
    assert torch.all((std - want_std).abs() <= 0.1 * want_std + 1e-9), (std, want_std)
    if name in ("Uniform",):
        assert torch.all(x >= t.low) and torch.all(x < t.high)
    if name in ("Gamma", "Beta", "Exponential"):
        assert torch.all(x > 0)


def test_rsample_shapes_and_errors(session):
    d = D.Normal(tensord.zeros(2, 3), 1.0)
    assert tuple(d.rsample((4, 5)).shape) == (4, 5, 2, 3)
    assert tuple(d.sample().shape) == (2, 3)
    with pytest.raises(ValueError, match="Either `probs` or `logits`"):
        D.Bernoulli()
    with pytest.raises(ValueError, match="Either `probs` or `logits`"):
        torch.distributions.Bernoulli()
    mvn_cases = [
        lambda m: m.distributions.MultivariateNormal(m.zeros(()), m.eye(2)),
        lambda m: m.distributions.MultivariateNormal(m.zeros(2)),
        lambda m: m.distributions.MultivariateNormal(m.zeros(2), m.eye(2), scale_tril=m.eye(2)),
        lambda m: m.distributions.MultivariateNormal(m.zeros(2), m.ones(2)),
        lambda m: m.distributions.MultivariateNormal(m.zeros(2), precision_matrix=m.ones(2)),
    ]
    for case in mvn_cases:
        with pytest.raises(ValueError) as want:
            case(torch)
        with pytest.raises(ValueError) as got:
            case(tensord)
        assert str(got.value) == str(want.value)
    mvn = D.MultivariateNormal(tensord.zeros(4, 1, 3), tensord.eye(3).expand(2, 3, 3))
    assert tuple(mvn.batch_shape) == (4, 2) and tuple(mvn.event_shape) == (3,)
    assert tuple(mvn.rsample((5,)).shape) == (5, 4, 2, 3)


# ---- multinomial and the in-place random fills -------------------------------------------------

def test_multinomial_draws_by_weight_and_refuses_as_torch(session):
    p = [[0.1, 0.0, 0.6, 0.3], [0.25, 0.25, 0.25, 0.25]]
    tensord.manual_seed(3)
    with_rep = as_torch(tensord.multinomial(tensord.tensor(p), 20000, replacement=True))
    freq = torch.nn.functional.one_hot(with_rep, 4).double().mean(1)
    torch.testing.assert_close(freq, torch.tensor(p, dtype=torch.float64), atol=0.015, rtol=0)
    # Without replacement: distinct categories, the zero-weight one never before the others.
    for _ in range(20):
        draw = as_torch(tensord.tensor(p[0]).multinomial(3))
        assert sorted(draw.tolist()) == [0, 2, 3]
    firsts = torch.tensor([int(tensord.tensor(p[0]).multinomial(2)[0].item()) for _ in range(300)])
    assert 0.45 < float((firsts == 2).double().mean()) < 0.75  # 0.6 expected
    g = tensord.Generator().manual_seed(9)
    again = tensord.Generator().manual_seed(9)
    assert torch.equal(as_torch(tensord.multinomial(tensord.tensor(p), 3, generator=g)),
                       as_torch(tensord.multinomial(tensord.tensor(p), 3, generator=again)))
    for bad in (lambda m: m.multinomial(m.tensor([-1.0, 2.0]), 1),
                lambda m: m.multinomial(m.tensor([0.0, 0.0]), 1),
                lambda m: m.multinomial(m.tensor([0.5, 0.5]), 3),
                lambda m: m.multinomial(m.tensor([0.5, 0.5]), 0),
                lambda m: m.multinomial(m.tensor([1, 2]), 1),
                lambda m: m.multinomial(m.ones(2, 2, 2), 1)):
        with pytest.raises(RuntimeError) as want:
            bad(torch)
        with pytest.raises(RuntimeError) as got:
            bad(tensord)
        assert str(want.value) in str(got.value)


def test_in_place_random_fills_have_their_laws(session):
    n = 40000
    tensord.manual_seed(2)
    e = as_torch(tensord.empty(n).exponential_(4.0)).double()
    assert abs(e.mean().item() - 0.25) < 0.01 and e.min().item() >= 0
    geo = as_torch(tensord.empty(n).geometric_(0.25)).double()
    assert abs(geo.mean().item() - 4.0) < 0.1 and geo.min().item() >= 1
    assert torch.equal(geo, geo.round())
    c = as_torch(tensord.empty(n).cauchy_(2.0, 0.5)).double()
    assert abs(c.median().item() - 2.0) < 0.05
    ln = as_torch(tensord.empty(n).log_normal_(0.5, 0.3)).double()
    assert abs(ln.log().mean().item() - 0.5) < 0.01 and abs(ln.log().std().item() - 0.3) < 0.01
    r = as_torch(tensord.empty(n, dtype=tensord.int64).random_(-3, 4))
    assert r.min().item() == -3 and r.max().item() == 3
    assert as_torch(tensord.empty(1000).random_(5)).max().item() == 4
    assert as_torch(tensord.empty(1000, dtype=tensord.uint8).random_()).max().item() > 200
    g1, g2 = tensord.Generator().manual_seed(1), tensord.Generator().manual_seed(1)
    assert torch.equal(as_torch(tensord.empty(5).exponential_(generator=g1)),
                       as_torch(tensord.empty(5).exponential_(generator=g2)))
    with pytest.raises(RuntimeError, match="random_ expects 'from' to be less than 'to'"):
        tensord.empty(2).random_(3, 1)


# ---- validate_args, reprs, constraints (torch 1.13's Distribution machinery) -------------------

def _outcome(fn, m):
    """What fn(m) gives: its repr, or the exception's class name and message."""
    try:
        result = fn(m)
    except Exception as e:  # noqa: BLE001 - the exception itself is what is compared
        return f"{type(e).__name__}: {e}"
    return result if isinstance(result, str) else repr(result)


def _same_outcome(fn):
    want, got = _outcome(fn, torch), _outcome(fn, tensord)
    assert got == want


_REPR_CASES = {
    "Normal": lambda m: m.distributions.Normal(m.tensor([0.0, 1.0]), m.tensor([1.0, 2.0])),
    "Normal(numbers)": lambda m: m.distributions.Normal(0.0, 1.0),
    "Normal(one element)": lambda m: m.distributions.Normal(m.tensor([0.5]), 2.0),
    "Uniform": lambda m: m.distributions.Uniform(m.zeros(2, 3), 1.0),
    "Bernoulli(probs)": lambda m: m.distributions.Bernoulli(m.tensor([0.1, 0.5])),
    "Bernoulli(logits)": lambda m: m.distributions.Bernoulli(logits=m.tensor([0.1, 0.5])),
    "Bernoulli(number)": lambda m: m.distributions.Bernoulli(0.3),
    "Categorical": lambda m: m.distributions.Categorical(m.tensor([[0.1, 0.9], [0.5, 0.5]])),
    "Categorical(logits)": lambda m: m.distributions.Categorical(logits=m.zeros(3)),
    "Exponential": lambda m: m.distributions.Exponential(m.tensor([1.0, 2.0])),
    "Multinomial": lambda m: m.distributions.Multinomial(4, m.tensor([0.2, 0.8])),
    "Gamma": lambda m: m.distributions.Gamma(m.tensor([1.0, 2.0]), 3.0),
    "Beta": lambda m: m.distributions.Beta(m.tensor([1.0, 2.0]), 3.0),
    "Poisson": lambda m: m.distributions.Poisson(m.tensor([1.0, 2.0])),
    "Dirichlet": lambda m: m.distributions.Dirichlet(m.tensor([1.0, 2.0, 3.0])),
    "Laplace": lambda m: m.distributions.Laplace(m.zeros(2), 2.0),
    "LogNormal": lambda m: m.distributions.LogNormal(m.zeros(2), 2.0),
    "MultivariateNormal(covariance)": lambda m: m.distributions.MultivariateNormal(
        m.zeros(3), m.tensor(_COV)),
    "MultivariateNormal(scale_tril)": lambda m: m.distributions.MultivariateNormal(
        m.zeros(2, 3), scale_tril=m.tensor(_TRIL)),
    "MultivariateNormal(precision)": lambda m: m.distributions.MultivariateNormal(
        m.zeros(3), precision_matrix=m.tensor(_COV)),
    "Independent": lambda m: m.distributions.Independent(
        m.distributions.Normal(m.zeros(2, 3), 1.0), 1),
}


@pytest.mark.parametrize("name", sorted(_REPR_CASES))
def test_reprs_shapes_supports_and_constraints_match_torch(name, session):
    make = _REPR_CASES[name]
    _same_outcome(make)
    _same_outcome(lambda m: (tuple(make(m).batch_shape), tuple(make(m).event_shape)))
    _same_outcome(lambda m: make(m).support)
    _same_outcome(lambda m: type(make(m)).support)
    _same_outcome(lambda m: make(m).arg_constraints)
    _same_outcome(lambda m: (make(m).has_rsample, make(m).has_enumerate_support))
    d = make(tensord)
    t = make(torch)
    if name != "Multinomial":  # torch 1.13's Multinomial has no mode
        torch.testing.assert_close(as_torch(d.mode), t.mode, equal_nan=True)
    else:
        with pytest.raises(NotImplementedError, match="does not implement mode"):
            d.mode
    for method in ("cdf", "icdf", "rsample", "entropy", "enumerate_support"):
        want = _outcome(lambda m: getattr(make(m), method)(*(
            (m.tensor(0.5),) if method in ("cdf", "icdf") else ())), torch)
        if want.startswith("NotImplementedError"):
            with pytest.raises(NotImplementedError):
                getattr(d, method)(*((tensord.tensor(0.5),) if method in ("cdf", "icdf") else ()))
    if name not in ("Poisson", "Multinomial"):
        torch.testing.assert_close(as_torch(d.perplexity()), t.perplexity(), rtol=1e-5,
                                   atol=1e-5)


_BAD_PARAMETERS = [
    lambda m: m.distributions.Normal(m.tensor([0.0, 1.0]), m.tensor([1.0, -2.0])),
    lambda m: m.distributions.Normal(0.0, -1.0),
    lambda m: m.distributions.Normal(m.tensor([0.0, float("nan")]), 1.0),
    lambda m: m.distributions.Normal(m.tensor([0.0]), "a"),
    lambda m: m.distributions.Uniform(m.tensor([0.0, 1.0]), m.tensor([1.0, 0.5])),
    lambda m: m.distributions.Bernoulli(m.tensor([0.1, 1.5])),
    lambda m: m.distributions.Bernoulli(logits=m.tensor([float("nan")])),
    lambda m: m.distributions.Categorical(m.tensor([0.1, -0.5])),
    lambda m: m.distributions.Categorical(m.tensor(0.5)),
    lambda m: m.distributions.Categorical(logits=m.tensor(0.5)),
    lambda m: m.distributions.Exponential(m.tensor([0.0, 1.0])),
    lambda m: m.distributions.Multinomial(3, m.tensor([0.2, -0.8])),
    lambda m: m.distributions.Multinomial(m.tensor(3), m.tensor([0.2, 0.8])),
    lambda m: m.distributions.Gamma(m.tensor([2.0, -1.0]), 1.0),
    lambda m: m.distributions.Gamma(2.0, m.tensor([[1.0, 0.0]])),
    lambda m: m.distributions.Beta(m.tensor([2.0, -1.0]), m.tensor([3.0, 1.0])),
    lambda m: m.distributions.Beta(0.0, 1.0),
    lambda m: m.distributions.Poisson(m.tensor([2.0, -1.0])),
    lambda m: m.distributions.Dirichlet(m.tensor([1.0, 0.0])),
    lambda m: m.distributions.Dirichlet(m.tensor(1.0)),
    lambda m: m.distributions.Laplace(m.zeros(2), m.tensor([1.0, 0.0])),
    lambda m: m.distributions.LogNormal(m.zeros(2), -1.0),
    lambda m: m.distributions.MultivariateNormal(m.zeros(2), m.tensor([[1.0, 2.0], [2.0, 1.0]])),
    lambda m: m.distributions.MultivariateNormal(m.zeros(2), m.tensor([[1.0, 2.0], [0.0, 1.0]])),
    lambda m: m.distributions.MultivariateNormal(m.zeros(2),
                                                 scale_tril=m.tensor([[1.0, 2.0], [0.0, 1.0]])),
    lambda m: m.distributions.MultivariateNormal(m.zeros(2),
                                                 scale_tril=m.tensor([[1.0, 0.0], [2.0, -1.0]])),
    lambda m: m.distributions.MultivariateNormal(
        m.zeros(2), precision_matrix=m.tensor([[1.0, 0.0], [0.0, -1.0]])),
    lambda m: m.distributions.MultivariateNormal(m.tensor([0.0, float("inf")]), m.eye(2)),
    lambda m: m.distributions.Independent(m.distributions.Normal(m.zeros(2, 3), 1.0), 3),
]


@pytest.mark.parametrize("case", range(len(_BAD_PARAMETERS)))
def test_invalid_parameters_raise_torchs_errors(case, session):
    _same_outcome(_BAD_PARAMETERS[case])


_BAD_VALUES = [
    lambda m: m.distributions.Normal(m.zeros(2), 1.0).log_prob(1.0),
    lambda m: m.distributions.Normal(m.zeros(2), 1.0).log_prob(m.zeros(3)),
    lambda m: m.distributions.Normal(m.zeros(2), 1.0).log_prob(m.tensor([0.0, float("nan")])),
    lambda m: m.distributions.Normal(m.zeros(2), 1.0).cdf(m.tensor([0.0, float("nan")])),
    lambda m: m.distributions.Uniform(m.tensor([0.0, 1.0]), 2.0).log_prob(m.tensor([0.5, 3.0])),
    lambda m: m.distributions.Uniform(m.tensor([0.0, 1.0]), 2.0).cdf(m.tensor([-0.5, 1.0])),
    lambda m: m.distributions.Bernoulli(m.tensor([0.1, 0.5])).log_prob(m.tensor([0.0, 0.5])),
    lambda m: m.distributions.Categorical(m.ones(2, 3)).log_prob(m.tensor([3])),
    lambda m: m.distributions.Categorical(m.ones(2, 3)).log_prob(m.tensor([0, 1, 2])),
    lambda m: m.distributions.Exponential(m.tensor([2.0, 1.0])).log_prob(m.tensor([-1.0, 1.0])),
    lambda m: m.distributions.Gamma(m.tensor([2.0, 1.0]), 3.0).log_prob(-1.0),
    lambda m: m.distributions.Beta(2.0, 3.0).log_prob(m.tensor(1.5)),
    lambda m: m.distributions.Poisson(m.tensor([2.0, 1.0])).log_prob(m.tensor([0.5, 1.0])),
    lambda m: m.distributions.Multinomial(3, m.tensor([0.2, 0.8])).log_prob(m.tensor([3.0, 1.0])),
    lambda m: m.distributions.Multinomial(3, m.tensor([0.2, 0.8])).log_prob(m.tensor([1.0])),
    lambda m: m.distributions.Dirichlet(m.tensor([1.0, 2.0])).log_prob(m.tensor([0.5, 0.6])),
    lambda m: m.distributions.LogNormal(0.0, 1.0).log_prob(m.tensor([1.0, -1.0])),
    lambda m: m.distributions.Laplace(0.0, 1.0).log_prob(m.tensor([1.0, float("nan")])),
    lambda m: m.distributions.MultivariateNormal(m.zeros(2), m.eye(2)).log_prob(m.zeros(3)),
    lambda m: m.distributions.MultivariateNormal(m.zeros(2), m.eye(2)).log_prob(
        m.tensor([0.0, float("nan")])),
    lambda m: m.distributions.Independent(m.distributions.Exponential(m.ones(2, 2)), 1).log_prob(
        -m.ones(2, 2)),
]


@pytest.mark.parametrize("case", range(len(_BAD_VALUES)))
def test_values_outside_the_support_raise_torchs_errors(case, session):
    _same_outcome(_BAD_VALUES[case])


def test_validation_can_be_turned_off(session):
    loc = tensord.tensor([0.0, 1.0])
    d = D.Normal(loc, tensord.tensor([1.0, -2.0]), validate_args=False)
    t = torch.distributions.Normal(torch.tensor([0.0, 1.0]), torch.tensor([1.0, -2.0]),
                                   validate_args=False)
    assert repr(d) == repr(t)
    torch.testing.assert_close(as_torch(d.log_prob(loc)),
                               t.log_prob(torch.tensor([0.0, 1.0])), equal_nan=True)
    p = D.Bernoulli(tensord.tensor([0.2, 0.7]), validate_args=False)
    torch.testing.assert_close(
        as_torch(p.log_prob(tensord.tensor([0.5, 0.5]))),
        torch.distributions.Bernoulli(torch.tensor([0.2, 0.7]), validate_args=False).log_prob(
            torch.tensor([0.5, 0.5])))
    assert D.Distribution._validate_args is True
    D.Distribution.set_default_validate_args(False)
    try:
        D.Exponential(tensord.tensor([-1.0]))
        D.Uniform(1.0, 0.0)
        assert D.Poisson(tensord.tensor([1.0])).log_prob(tensord.tensor([0.5])) is not None
        # The per-instance flag still wins over the default.
        with pytest.raises(ValueError, match="to satisfy the constraint"):
            D.Exponential(tensord.tensor([-1.0]), validate_args=True)
    finally:
        D.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError):
        D.Distribution.set_default_validate_args(2)
    with pytest.raises(ValueError, match="to satisfy the constraint"):
        D.Exponential(tensord.tensor([-1.0]))
    # An expanded distribution keeps the flag of the one it came from.
    e = D.Exponential(tensord.tensor([1.0]), validate_args=False).expand((3,))
    assert e._validate_args is False and tuple(e.log_prob(-tensord.ones(3)).shape) == (3,)


_CONSTRAINTS = {
    "real": lambda c: c.real, "positive": lambda c: c.positive,
    "nonnegative": lambda c: c.nonnegative, "greater_than": lambda c: c.greater_than(0.5),
    "greater_than_eq": lambda c: c.greater_than_eq(0.5), "less_than": lambda c: c.less_than(0.5),
    "interval": lambda c: c.interval(-1.0, 0.5), "unit_interval": lambda c: c.unit_interval,
    "half_open_interval": lambda c: c.half_open_interval(0.0, 1.0),
    "boolean": lambda c: c.boolean, "nonnegative_integer": lambda c: c.nonnegative_integer,
    "positive_integer": lambda c: c.positive_integer,
    "integer_interval": lambda c: c.integer_interval(0, 2), "simplex": lambda c: c.simplex,
    "real_vector": lambda c: c.real_vector, "one_hot": lambda c: c.one_hot,
    "independent": lambda c: c.independent(c.positive, 1), "multinomial": lambda c: c.multinomial(3),
    "lower_triangular": lambda c: c.lower_triangular, "lower_cholesky": lambda c: c.lower_cholesky,
    "square": lambda c: c.square, "symmetric": lambda c: c.symmetric,
    "positive_definite": lambda c: c.positive_definite,
    "positive_semidefinite": lambda c: c.positive_semidefinite,
}
_CONSTRAINT_VALUES = [
    [[0.0, 1.0, 0.0], [0.5, 0.5, 0.0], [1.0, 2.0, -1.0]],
    [[2.0, 0.0, 0.0], [1.0, 3.0, 0.0], [0.0, -1.0, 1.0]],
    [[2.0, 1.0, 0.0], [1.0, 2.0, 0.0], [0.0, 0.0, 1.0]],
    [[1.0, 1.0, 0.0], [1.0, 1.0, 0.0], [0.0, 0.0, 0.0]],
    [[float("nan"), 0.2, 0.8], [0.2, 0.3, 0.5], [0.0, 0.0, 1.0]],
]


@pytest.mark.parametrize("name", sorted(_CONSTRAINTS))
def test_constraints_check_and_repr_as_torch(name, session):
    from tensord.distributions import constraints
    import tensord.distributions.constraints as same
    assert same is constraints
    want = _CONSTRAINTS[name](torch.distributions.constraints)
    got = _CONSTRAINTS[name](constraints)
    assert repr(got) == repr(want)
    assert (got.is_discrete, got.event_dim) == (want.is_discrete, want.event_dim)
    for value in _CONSTRAINT_VALUES:
        assert torch.equal(as_torch(got.check(tensord.tensor(value))),
                           want.check(torch.tensor(value))), value
    assert constraints.is_dependent(constraints.dependent)
    assert not constraints.is_dependent(got)
    with pytest.raises(ValueError, match="Cannot determine validity of dependent constraint"):
        constraints.dependent.check(tensord.zeros(1))


@pytest.mark.parametrize("name", sorted(_REPR_CASES))
def test_expand_as_torch(name, session):
    make = _REPR_CASES[name]
    t, d = make(torch), make(tensord)
    shape = (4,) + tuple(t.batch_shape)
    te, de = t.expand(shape), d.expand(shape)
    assert repr(de) == repr(te)
    assert tuple(de.batch_shape) == tuple(te.batch_shape)
    assert tuple(de.event_shape) == tuple(te.event_shape)
    torch.testing.assert_close(as_torch(de.mean), te.mean, equal_nan=True)
    torch.testing.assert_close(as_torch(de.variance), te.variance, equal_nan=True)
    value = te.sample()
    torch.testing.assert_close(as_torch(de.log_prob(tensord.tensor(value.tolist()))),
                               te.log_prob(value), rtol=1e-5, atol=1e-5)
    assert tuple(de.sample((2,)).shape) == tuple(te.sample((2,)).shape)
    want, got = _outcome(lambda m: make(m).expand((3, 5, 7)), torch), \
        _outcome(lambda m: make(m).expand((3, 5, 7)), tensord)
    if want.startswith("RuntimeError"):  # tensord's message names the op first
        assert got.startswith("RuntimeError") and want.split(":")[-1] in got
    else:
        assert got == want


def test_enumerate_support_as_torch(session):
    for make in (lambda m: m.distributions.Bernoulli(m.tensor([[0.1, 0.5, 0.2]])),
                 lambda m: m.distributions.Bernoulli(0.3),
                 lambda m: m.distributions.Categorical(m.ones(2, 4)),
                 lambda m: m.distributions.Categorical(logits=m.zeros(3)),
                 lambda m: m.distributions.Independent(
                     m.distributions.Bernoulli(m.ones(2) / 2), 0)):
        for expand in (True, False):
            want = make(torch).enumerate_support(expand=expand)
            got = as_torch(make(tensord).enumerate_support(expand=expand))
            assert got.dtype == want.dtype and torch.equal(got, want)
    _same_outcome(lambda m: m.distributions.Independent(
        m.distributions.Bernoulli(m.ones(2) / 2), 1).enumerate_support())


# ---- kl_divergence -------------------------------------------------------------------------------

_KL_DISTS = {
    "Normal": lambda m: (m.distributions.Normal(m.tensor([0.0, 1.0]), m.tensor([1.0, 0.5])),
                         m.distributions.Normal(m.tensor([0.5, 0.0]), m.tensor([2.0, 0.7]))),
    "Bernoulli": lambda m: (m.distributions.Bernoulli(m.tensor([0.1, 0.0, 1.0, 0.5])),
                            m.distributions.Bernoulli(m.tensor([0.3, 0.2, 0.0, 1.0]))),
    "Categorical": lambda m: (m.distributions.Categorical(m.tensor([[0.2, 0.3, 0.5], [0.0, 0.5, 0.5]])),
                              m.distributions.Categorical(m.tensor([[0.1, 0.1, 0.8], [0.5, 0.0, 0.5]]))),
    "Uniform": lambda m: (m.distributions.Uniform(m.tensor([0.0, 0.2]), m.tensor([1.0, 0.5])),
                          m.distributions.Uniform(m.tensor([-1.0, 0.3]), m.tensor([2.0, 1.0]))),
    "Exponential": lambda m: (m.distributions.Exponential(m.tensor([0.5, 2.0])),
                              m.distributions.Exponential(m.tensor([1.5, 0.3]))),
    "Gamma": lambda m: (m.distributions.Gamma(m.tensor([0.5, 2.0]), m.tensor([1.0, 3.0])),
                        m.distributions.Gamma(m.tensor([1.5, 0.3]), m.tensor([2.0, 0.5]))),
    "Beta": lambda m: (m.distributions.Beta(m.tensor([0.5, 2.0]), m.tensor([1.0, 3.0])),
                       m.distributions.Beta(m.tensor([1.5, 0.3]), m.tensor([2.0, 0.5]))),
    "Poisson": lambda m: (m.distributions.Poisson(m.tensor([0.5, 4.0])),
                          m.distributions.Poisson(m.tensor([1.5, 3.0]))),
    "Dirichlet": lambda m: (m.distributions.Dirichlet(m.tensor([[0.5, 2.0, 1.0], [1.0, 1.0, 1.0]])),
                            m.distributions.Dirichlet(m.tensor([[1.5, 0.3, 2.0], [2.0, 0.5, 1.0]]))),
    "Laplace": lambda m: (m.distributions.Laplace(m.tensor([0.0, 1.0]), m.tensor([1.0, 0.5])),
                          m.distributions.Laplace(m.tensor([0.5, -1.0]), m.tensor([2.0, 1.0]))),
    "LogNormal": lambda m: (m.distributions.LogNormal(m.tensor([0.0, 1.0]), m.tensor([1.0, 0.5])),
                            m.distributions.LogNormal(m.tensor([0.5, -1.0]), m.tensor([2.0, 1.0]))),
    "MultivariateNormal": lambda m: (
        m.distributions.MultivariateNormal(m.tensor([[1.0, -2.0, 0.5], [0.0, 0.0, 0.0]]), m.tensor(_COV)),
        m.distributions.MultivariateNormal(m.tensor([0.0, 1.0, 0.0]), scale_tril=m.tensor(_TRIL))),
    "Independent": lambda m: (
        m.distributions.Independent(m.distributions.Normal(m.zeros(2, 3), 1.0), 1),
        m.distributions.Independent(m.distributions.Normal(m.ones(2, 3), 2.0), 1)),
}
# Cross pairs: (p family, q family) with parameters inside what torch's formulas take.
_KL_CROSS = [("Normal", "Uniform"), ("Normal", "Exponential"), ("Normal", "Gamma"),
             ("Normal", "Beta"), ("Normal", "Laplace"), ("Uniform", "Normal"),
             ("Uniform", "Exponential"), ("Uniform", "Gamma"), ("Uniform", "Beta"),
             ("Exponential", "Gamma"), ("Exponential", "Normal"), ("Exponential", "Uniform"),
             ("Exponential", "Beta"), ("Gamma", "Exponential"), ("Gamma", "Normal"),
             ("Gamma", "Uniform"), ("Gamma", "Beta"), ("Beta", "Exponential"),
             ("Beta", "Gamma"), ("Beta", "Normal"), ("Beta", "Uniform"), ("Laplace", "Normal"),
             ("Laplace", "Uniform"), ("Laplace", "Exponential"), ("Laplace", "Gamma"),
             ("Laplace", "Beta"), ("Poisson", "Bernoulli")]


def _kl_pair(p_name, q_name, m):
    if p_name == q_name:
        return _KL_DISTS[p_name](m)
    p = _KL_DISTS[p_name](m)[0]
    q = _KL_DISTS[q_name](m)[1]
    if p_name == "Uniform" and q_name in ("Gamma", "Exponential", "Beta"):
        p = m.distributions.Uniform(m.tensor([0.1, -1.0]), m.tensor([0.9, 0.5]))
    if q_name == "Uniform":
        q = m.distributions.Uniform(m.tensor([-1.0, 0.0]), m.tensor([2.0, 1.0]))
    if p_name == "Poisson":
        q = m.distributions.Bernoulli(m.tensor([0.3, 0.2]))
    if p_name == "Bernoulli":
        p = m.distributions.Bernoulli(m.tensor([0.3, 0.2]))
    return p, q


@pytest.mark.parametrize("pair", [(n, n) for n in sorted(_KL_DISTS)] + _KL_CROSS +
                         [("Bernoulli", "Poisson")], ids="-".join)
def test_kl_divergence_matches_torch(pair, session):
    tp, tq = _kl_pair(*pair, torch)
    dp, dq = _kl_pair(*pair, tensord)
    want = torch.distributions.kl_divergence(tp, tq)
    got = as_torch(D.kl_divergence(dp, dq))
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5, equal_nan=True)


def test_kl_divergence_refuses_and_registers_as_torch(session):
    for fn in (lambda m: m.distributions.kl_divergence(m.distributions.Normal(0.0, 1.0),
                                                       m.distributions.Bernoulli(0.3)),
               lambda m: m.distributions.kl_divergence(
                   m.distributions.Multinomial(2, m.tensor([0.5, 0.5])),
                   m.distributions.Normal(0.0, 1.0)),
               lambda m: m.distributions.kl_divergence(m.distributions.Uniform(0.0, 1.0),
                                                       m.distributions.Categorical(m.ones(2))),
               lambda m: m.distributions.kl_divergence(
                   m.distributions.MultivariateNormal(m.zeros(2), m.eye(2)),
                   m.distributions.MultivariateNormal(m.zeros(3), m.eye(3)))):
        _same_outcome(fn)

    class Shifted(D.Normal):
        pass

    class Other(D.Distribution):
        arg_constraints = {}

    @D.register_kl(Other, Other)
    def _kl_other(p, q):
        return tensord.tensor(7.0)

    assert float(D.kl_divergence(Other(), Other())) == 7.0
    # A subclass dispatches to its base class's pair.
    got = D.kl_divergence(Shifted(tensord.tensor([0.0]), 1.0), D.Normal(tensord.tensor([1.0]), 2.0))
    want = torch.distributions.kl_divergence(torch.distributions.Normal(torch.tensor([0.0]), 1.0),
                                             torch.distributions.Normal(torch.tensor([1.0]), 2.0))
    torch.testing.assert_close(as_torch(got), want)


# ---- Dirichlet, Laplace, LogNormal, Independent: values and draws -------------------------------

_NEW = {
    "Dirichlet": lambda m: m.distributions.Dirichlet(m.tensor([[0.5, 2.0, 1.0], [3.0, 4.0, 5.0]])),
    "Laplace": lambda m: m.distributions.Laplace(m.tensor([0.0, 1.0, -2.0]), m.tensor([1.0, 0.5, 2.0])),
    "LogNormal": lambda m: m.distributions.LogNormal(m.tensor([0.0, 0.5, -1.0]), m.tensor([0.5, 0.25, 1.0])),
    "Independent": lambda m: m.distributions.Independent(
        m.distributions.Normal(m.tensor([[0.0, 1.0], [2.0, 3.0]]), m.tensor([[1.0, 2.0], [0.5, 1.0]])), 1),
}
_NEW_VALUES = {"Dirichlet": [[0.2, 0.3, 0.5], [0.1, 0.1, 0.8]], "Laplace": [0.5, 1.0, -5.0],
               "LogNormal": [0.5, 1.5, 3.0], "Independent": [[0.5, 1.0], [-1.0, 2.0]]}


@pytest.mark.parametrize("name", sorted(_NEW))
def test_more_distributions_match_torch(name, session):
    t, d = _NEW[name](torch), _NEW[name](tensord)
    for attr in ("mean", "mode", "variance", "stddev"):
        torch.testing.assert_close(as_torch(getattr(d, attr)), getattr(t, attr), rtol=1e-5,
                                   atol=1e-6)
    v = _NEW_VALUES[name]
    torch.testing.assert_close(as_torch(d.log_prob(tensord.tensor(v))), t.log_prob(torch.tensor(v)),
                               rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(as_torch(d.entropy()), t.entropy(), rtol=1e-5, atol=1e-5)
    if name in ("Laplace", "LogNormal"):
        torch.testing.assert_close(as_torch(d.cdf(tensord.tensor(v))), t.cdf(torch.tensor(v)),
                                   rtol=1e-5, atol=1e-5)
        q = [0.1, 0.5, 0.95]
        torch.testing.assert_close(as_torch(d.icdf(tensord.tensor(q))), t.icdf(torch.tensor(q)),
                                   rtol=1e-5, atol=1e-5)
    assert d.has_rsample == t.has_rsample
    n = 20000
    tensord.manual_seed(11)
    draws = d.rsample((n,))
    want = t.rsample((n,))
    x = as_torch(draws)
    assert tuple(x.shape) == tuple(want.shape) and x.dtype == want.dtype
    assert bool(t.support.check(x).all())
    tensord.manual_seed(11)
    assert torch.equal(as_torch(_NEW[name](tensord).sample((n,))), x)
    x = x.double()
    mean, std = x.mean(0), x.std(0)
    want_mean, want_std = t.mean.double(), t.stddev.double()
    assert torch.all((mean - want_mean).abs() <= 5 * want_std / math.sqrt(n) + 1e-9), (mean, want_mean)
    assert torch.all((std - want_std).abs() <= 0.1 * want_std + 1e-9), (std, want_std)


@pytest.mark.parametrize("name", sorted(VALUES))
def test_samples_lie_in_the_support(name, session):
    t, d = params(torch)[name](), params(tensord)[name]()
    x = d.sample((500,))
    want = t.sample((500,))
    assert as_torch(x).dtype == want.dtype and tuple(x.shape) == tuple(want.shape)
    assert bool(t.support.check(as_torch(x)).all())
    assert bool(d.support.check(x).all())


def test_submodules_import_as_torchs(session):
    """torch.distributions' submodules: `from torch.distributions import multinomial` (d2l's
    probability chapter) and `from torch.distributions.normal import Normal` work."""
    import importlib  # noqa: PLC0415
    from tensord.distributions import multinomial  # noqa: PLC0415
    counts = multinomial.Multinomial(10, tensord.ones(6) / 6).sample()
    assert counts.sum().item() == 10.0 and tuple(counts.shape) == (6,)
    for sub, name in (("normal", "Normal"), ("multinomial", "Multinomial"), ("kl", "kl_divergence"),
                      ("multivariate_normal", "MultivariateNormal"), ("constraints", "positive")):
        ours = importlib.import_module(f"tensord.distributions.{sub}")
        theirs = importlib.import_module(f"torch.distributions.{sub}")
        assert hasattr(ours, name) and hasattr(theirs, name)
        if sub != "constraints":
            assert getattr(ours, name) is getattr(tensord.distributions, name)


# ---- Transformed distributions and the further families ----------------------------------------

_FAMILIES = {
    "HalfNormal": (lambda m: m.distributions.HalfNormal(m.tensor([1.0, 2.0])), [0.5, 3.0]),
    "Cauchy": (lambda m: m.distributions.Cauchy(m.tensor([0.0, 1.0]), m.tensor([1.0, 2.0])),
               [0.5, -3.0]),
    "HalfCauchy": (lambda m: m.distributions.HalfCauchy(m.tensor([1.0, 2.0])), [0.5, 3.0]),
    "Gumbel": (lambda m: m.distributions.Gumbel(m.tensor([0.0, 1.0]), m.tensor([1.0, 2.0])),
               [0.5, -1.0]),
    "Weibull": (lambda m: m.distributions.Weibull(m.tensor([1.0, 2.0]), m.tensor([1.5, 0.5])),
                [0.5, 3.0]),
    "Pareto": (lambda m: m.distributions.Pareto(m.tensor([1.0, 2.0]), m.tensor([1.5, 3.0])),
               [1.5, 3.0]),
    "Chi2": (lambda m: m.distributions.Chi2(m.tensor([2.0, 5.0])), [0.5, 4.0]),
    "StudentT": (lambda m: m.distributions.StudentT(m.tensor([3.0, 10.0, 1.5]),
                                                    m.tensor([0.0, 1.0, 0.0]),
                                                    m.tensor([1.0, 2.0, 0.5])), [0.5, 1.5, -2.0]),
    "Geometric": (lambda m: m.distributions.Geometric(m.tensor([0.3, 0.6, 1.0])),
                  [1.0, 4.0, 0.0]),
    "Geometric(logits)": (lambda m: m.distributions.Geometric(logits=m.tensor([-1.0, 0.5])),
                          [0.0, 2.0]),
    "Binomial": (lambda m: m.distributions.Binomial(10, m.tensor([0.3, 0.6])), [3.0, 7.0]),
    "Binomial(logits)": (lambda m: m.distributions.Binomial(m.tensor([5.0, 9.0]),
                                                            logits=m.tensor([-0.5, 1.0])),
                         [5.0, 0.0]),
    "NegativeBinomial": (lambda m: m.distributions.NegativeBinomial(m.tensor([3.0, 5.0]),
                                                                    m.tensor([0.3, 0.6])),
                         [2.0, 4.0]),
    "OneHotCategorical": (lambda m: m.distributions.OneHotCategorical(
        m.tensor([[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]])), [[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]]),
    "RelaxedBernoulli": (lambda m: m.distributions.RelaxedBernoulli(
        m.tensor(0.5), probs=m.tensor([0.3, 0.8])), [0.3, 0.6]),
    "RelaxedOneHotCategorical": (lambda m: m.distributions.RelaxedOneHotCategorical(
        m.tensor(0.7), logits=m.tensor([0.2, -0.5, 1.0])), [0.2, 0.3, 0.5]),
    "MixtureSameFamily": (lambda m: m.distributions.MixtureSameFamily(
        m.distributions.Categorical(m.tensor([0.3, 0.7])),
        m.distributions.Normal(m.tensor([0.0, 2.0]), m.tensor([1.0, 0.5]))), [0.5]),
    "MixtureSameFamily(events)": (lambda m: m.distributions.MixtureSameFamily(
        m.distributions.Categorical(m.tensor([[0.3, 0.7], [0.5, 0.5]])),
        m.distributions.Independent(m.distributions.Normal(
            m.arange(12.0).reshape(2, 2, 3) / 6, m.ones(2, 2, 3)), 1)),
        [[0.1, 0.2, 0.3], [1.0, 0.0, -1.0]]),
    "FisherSnedecor": (lambda m: m.distributions.FisherSnedecor(m.tensor([3.0, 5.0, 1.5]),
                                                                m.tensor([4.0, 6.0, 2.0])),
                       [0.5, 1.5, 2.0]),
    "Kumaraswamy": (lambda m: m.distributions.Kumaraswamy(m.tensor([2.0, 1.0, 0.5]),
                                                          m.tensor([3.0, 0.5, 1.0])),
                    [0.3, 0.6, 0.9]),
    "LowRankMultivariateNormal": (lambda m: m.distributions.LowRankMultivariateNormal(
        m.tensor([[0.0, 1.0, -1.0], [2.0, 0.0, 0.5]]),
        m.tensor([[1.0, 0.2], [0.5, -0.3], [0.1, 0.7]]), m.tensor([1.0, 2.0, 0.5])),
        [[0.5, 0.5, 0.0], [1.0, -1.0, 2.0]]),
    "VonMises": (lambda m: m.distributions.VonMises(m.tensor([0.0, 1.0, -2.0]),
                                                    m.tensor([0.5, 4.0, 30.0])), [0.3, 2.0, -2.5]),
    "ContinuousBernoulli": (lambda m: m.distributions.ContinuousBernoulli(
        m.tensor([0.3, 0.8, 0.4995, 0.5005])), [0.2, 0.7, 0.5, 0.9]),
    "ContinuousBernoulli(logits)": (lambda m: m.distributions.ContinuousBernoulli(
        logits=m.tensor([-1.0, 2.0])), [0.1, 0.6]),
    "LKJCholesky": (lambda m: m.distributions.LKJCholesky(3, m.tensor(0.7)),
                    [[1.0, 0.0, 0.0], [0.6, 0.8, 0.0], [0.0, 0.6, 0.8]]),
    "TransformedDistribution(tanh Normal)": (lambda m: m.distributions.TransformedDistribution(
        m.distributions.Normal(m.tensor([0.1, -0.3]), m.tensor([0.6, 1.2])),
        [m.distributions.TanhTransform(cache_size=1)]), [0.5, -0.2]),
    "TransformedDistribution(logistic)": (lambda m: m.distributions.TransformedDistribution(
        m.distributions.Uniform(m.tensor(0.0), m.tensor(1.0)),
        [m.distributions.SigmoidTransform().inv,
         m.distributions.AffineTransform(m.tensor(1.0), m.tensor(2.0))]), [0.5, -3.0]),
    "TransformedDistribution(event affine)": (lambda m: m.distributions.TransformedDistribution(
        m.distributions.Independent(m.distributions.Normal(m.zeros(2, 2), m.ones(2, 2)), 1),
        m.distributions.AffineTransform(m.tensor([1.0, 2.0]), m.tensor([3.0, -4.0]),
                                        event_dim=1)), [[0.5, 1.0], [2.0, -1.0]]),
}


def _attr_outcomes(dist_t, dist_d, name, *args):
    from oracle import outcome  # noqa: PLC0415
    want, werr = outcome(lambda: getattr(dist_t, name)(*args) if args else
                         getattr(dist_t, name))
    got, gerr = outcome(lambda: getattr(dist_d, name)(*(tensord.tensor(a.tolist())
                                                        for a in args))
                        if args else getattr(dist_d, name))
    assert (werr and werr[0]) == (gerr and gerr[0]), (name, werr, gerr)
    if werr is None and not callable(want):
        torch.testing.assert_close(as_torch(got), want, rtol=2e-5, atol=1e-5, equal_nan=True,
                                   msg=lambda m: f"{name}: {m}")


@pytest.mark.parametrize("name", sorted(_FAMILIES))
def test_further_families_match_torch(name, session):
    make, value = _FAMILIES[name]
    t, d = make(torch), make(tensord)
    assert tuple(d.batch_shape) == tuple(t.batch_shape)
    assert tuple(d.event_shape) == tuple(t.event_shape)
    assert repr(d.support) == repr(t.support) and repr(d) == repr(t)
    assert d.has_rsample == t.has_rsample
    for attr in ("mean", "mode", "variance", "stddev"):
        _attr_outcomes(t, d, attr)
    for method, arg in (("log_prob", value), ("cdf", value), ("icdf", [0.3, 0.7][:len(value)]),
                        ("entropy", None)):
        args = () if arg is None else (torch.tensor(arg),)
        if method == "icdf" and t.event_shape:
            continue
        _attr_outcomes(t, d, method, *args)
    tensord.manual_seed(3)
    draws = d.sample((400,))
    want = t.sample((400,))
    assert tuple(draws.shape) == tuple(want.shape) and as_torch(draws).dtype == want.dtype
    assert bool(t.support.check(as_torch(draws)).all())
    tensord.manual_seed(3)
    assert torch.equal(as_torch(make(tensord).sample((400,))), as_torch(draws))
    expanded_t, expanded_d = t.expand((3,) + tuple(t.batch_shape)), \
        d.expand((3,) + tuple(d.batch_shape))
    assert type(expanded_d).__name__ == type(expanded_t).__name__
    assert tuple(expanded_d.batch_shape) == tuple(expanded_t.batch_shape)
    for attr in ("scale_tril", "covariance_matrix", "precision_matrix"):
        if hasattr(t, attr):
            torch.testing.assert_close(as_torch(getattr(d, attr)), getattr(t, attr), rtol=1e-5,
                                       atol=1e-5)
    if tuple(torch.tensor(value).shape) == tuple(t.batch_shape) + tuple(t.event_shape):
        torch.testing.assert_close(as_torch(expanded_d.log_prob(tensord.tensor(value))),
                                   expanded_t.log_prob(torch.tensor(value)), rtol=2e-5, atol=1e-5)


@pytest.mark.parametrize("name", ["Cauchy", "Gumbel", "Weibull", "StudentT", "Geometric",
                                  "Binomial", "NegativeBinomial", "HalfNormal", "FisherSnedecor",
                                  "Kumaraswamy", "LowRankMultivariateNormal", "VonMises",
                                  "ContinuousBernoulli"])
def test_further_families_draw_with_their_laws(name, session):
    """Many draws: the median (Cauchy, whose mean does not exist) or the mean and spread."""
    make, _ = _FAMILIES[name]
    t, d = make(torch), make(tensord)
    n = 20000
    tensord.manual_seed(21)
    x = as_torch(d.sample((n,))).double()
    if name == "Cauchy":
        torch.testing.assert_close(x.median(0).values, t.loc.double(), atol=0.1, rtol=0)
        return
    if name == "VonMises":  # the circular mean's direction and length
        assert bool(((x >= -math.pi) & (x < math.pi)).all())
        c, s = x.cos().mean(0), x.sin().mean(0)
        torch.testing.assert_close(torch.atan2(s, c), t.loc.double(), atol=0.05, rtol=0)
        torch.testing.assert_close((c * c + s * s).sqrt(), 1 - t.variance.double(), atol=0.02,
                                   rtol=0)
        return
    want_mean, want_std = t.mean.double(), t.stddev.double()
    finite = torch.isfinite(want_std)
    assert torch.all(((x.mean(0) - want_mean).abs() <= 5 * want_std / math.sqrt(n) + 1e-9)[finite])
    assert torch.all(((x.std(0) - want_std).abs() <= 0.1 * want_std + 1e-9)[finite])


def test_transforms_match_torch(session):
    cases = {
        "compose": lambda m: m.distributions.ComposeTransform([
            m.distributions.ExpTransform(), m.distributions.AffineTransform(1.0, 2.0),
            m.distributions.PowerTransform(2.0)]),
        "sigmoid": lambda m: m.distributions.SigmoidTransform(),
        "tanh": lambda m: m.distributions.TanhTransform(),
        "softplus": lambda m: m.distributions.SoftplusTransform(),
        "affine(negative)": lambda m: m.distributions.AffineTransform(0.5, -3.0),
        "exp.inv": lambda m: m.distributions.ExpTransform().inv,
        "independent": lambda m: m.distributions.IndependentTransform(
            m.distributions.ExpTransform(), 1),
    }
    x = [[0.5, -1.0], [2.0, 30.0]]
    for name, make in cases.items():
        t, d = make(torch), make(tensord)
        xt = torch.tensor(x).abs() + 0.1 if name == "exp.inv" else torch.tensor(x)
        xd = tensord.tensor(xt.tolist())
        yt, yd = t(xt), d(xd)
        torch.testing.assert_close(as_torch(yd), yt, msg=name)
        torch.testing.assert_close(as_torch(d.inv(yd)), t.inv(yt), msg=name)
        torch.testing.assert_close(as_torch(d.log_abs_det_jacobian(xd, yd)),
                                   t.log_abs_det_jacobian(xt, yt), msg=name)
        assert repr(d) == repr(t) and d.bijective == t.bijective, name
        assert repr(d.domain) == repr(t.domain) and repr(d.codomain) == repr(t.codomain), name
    assert tensord.distributions.ExpTransform() == tensord.distributions.ExpTransform()
    softmax = tensord.distributions.SoftmaxTransform()
    torch.testing.assert_close(as_torch(softmax(tensord.tensor([1.0, 2.0, 3.0]))),
                               torch.distributions.SoftmaxTransform()(torch.tensor([1.0, 2.0, 3.0])))


def test_tanh_gaussian_policy_gradients_match_torch(session):
    """The squashed Gaussian of soft actor-critic: log_prob of an rsample through the cached
    tanh, and its gradients to the mean and log-scale."""
    results = []
    for m in (torch, tensord):
        mu = m.tensor([[0.1, -0.3]], requires_grad=True)
        log_std = m.tensor([[-0.5, 0.2]], requires_grad=True)
        pi = m.distributions.TransformedDistribution(
            m.distributions.Normal(mu, log_std.exp()), [m.distributions.TanhTransform(cache_size=1)])
        lp = pi.log_prob(m.tensor([[0.5, -0.2]])).sum()
        lp.backward()
        results.append([as_torch(v).detach() for v in (lp, mu.grad, log_std.grad)])
    for got, want in zip(results[1], results[0]):
        torch.testing.assert_close(got, want)


_FURTHER_KL = [
    ("Binomial", lambda m: (m.distributions.Binomial(10, m.tensor([0.3, 0.5])),
                            m.distributions.Binomial(m.tensor([10.0, 8.0]), m.tensor([0.4, 0.5])))),
    ("Geometric", lambda m: (m.distributions.Geometric(m.tensor([0.3, 0.5])),
                             m.distributions.Geometric(m.tensor([0.4, 0.2])))),
    ("Gumbel", lambda m: (m.distributions.Gumbel(m.tensor([0.0, 1.0]), m.tensor([1.0, 2.0])),
                          m.distributions.Gumbel(m.tensor([0.5, 1.0]), m.tensor([1.5, 2.0])))),
    ("HalfNormal", lambda m: (m.distributions.HalfNormal(m.tensor([1.0, 2.0])),
                              m.distributions.HalfNormal(m.tensor([1.5, 1.0])))),
    ("OneHotCategorical", lambda m: (m.distributions.OneHotCategorical(m.tensor([0.2, 0.8])),
                                     m.distributions.OneHotCategorical(m.tensor([0.5, 0.5])))),
    ("Pareto", lambda m: (m.distributions.Pareto(m.tensor([1.0, 2.0]), m.tensor([2.0, 3.0])),
                          m.distributions.Pareto(m.tensor([1.5, 1.0]), m.tensor([1.0, 2.0])))),
    ("TransformedDistribution", lambda m: tuple(
        m.distributions.TransformedDistribution(m.distributions.Normal(m.tensor(a), m.tensor(b)),
                                                [m.distributions.ExpTransform()])
        for a, b in ((0.0, 1.0), (1.0, 2.0)))),
    ("LowRankMultivariateNormal", lambda m: (
        m.distributions.LowRankMultivariateNormal(m.tensor([[0.0, 1.0, -1.0], [2.0, 0.0, 0.5]]),
                                                  m.tensor([[1.0, 0.2], [0.5, -0.3], [0.1, 0.7]]),
                                                  m.tensor([1.0, 2.0, 0.5])),
        m.distributions.LowRankMultivariateNormal(m.tensor([1.0, 0.0, 0.0]),
                                                  m.tensor([[0.3], [0.2], [-0.4]]),
                                                  m.tensor([0.5, 1.0, 1.5])))),
    ("LowRankMultivariateNormal, MultivariateNormal", lambda m: (
        m.distributions.LowRankMultivariateNormal(m.tensor([1.0, 0.0, 0.0]),
                                                  m.tensor([[0.3], [0.2], [-0.4]]),
                                                  m.tensor([0.5, 1.0, 1.5])),
        m.distributions.MultivariateNormal(m.tensor([0.5, 0.5, 0.0]), m.tensor(_COV)))),
    ("MultivariateNormal, LowRankMultivariateNormal", lambda m: (
        m.distributions.MultivariateNormal(m.tensor([[0.5, 0.5, 0.0]]), m.tensor(_COV)),
        m.distributions.LowRankMultivariateNormal(m.tensor([1.0, 0.0, 0.0]),
                                                  m.tensor([[0.3], [0.2], [-0.4]]),
                                                  m.tensor([0.5, 1.0, 1.5])))),
    ("LowRankMultivariateNormal(event shapes differ)", lambda m: (
        m.distributions.LowRankMultivariateNormal(m.zeros(3), m.ones(3, 1), m.ones(3)),
        m.distributions.LowRankMultivariateNormal(m.zeros(2), m.ones(2, 1), m.ones(2)))),
    ("TransformedDistribution(other transforms)", lambda m: (
        m.distributions.TransformedDistribution(m.distributions.Normal(0.0, 1.0),
                                                [m.distributions.ExpTransform()]),
        m.distributions.TransformedDistribution(m.distributions.Normal(0.0, 1.0),
                                                [m.distributions.SigmoidTransform()]))),
]


@pytest.mark.parametrize("case", _FURTHER_KL, ids=[c[0] for c in _FURTHER_KL])
def test_further_kl_divergences_match_torch(case, session):
    from oracle import outcome  # noqa: PLC0415
    _, make = case
    want, werr = outcome(lambda: torch.distributions.kl_divergence(*make(torch)))
    got, gerr = outcome(lambda: tensord.distributions.kl_divergence(*make(tensord)))
    assert werr == gerr or (werr and gerr and werr[0] == gerr[0] == "NotImplementedError")
    if werr is None:
        torch.testing.assert_close(as_torch(got), want)
