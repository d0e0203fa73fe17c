"""torch.distributions on tensord: log_prob, entropy, mean, variance, cdf and icdf against
torch 1.13's values; samples against the distribution's moments (many draws), seeded draws
repeat, shapes follow sample_shape + batch_shape + event_shape.
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
