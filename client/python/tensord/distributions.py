"""torch.distributions for tensord tensors: Normal, Uniform, Bernoulli, Categorical, Exponential,
Multinomial, Gamma, Beta, Poisson and MultivariateNormal, with sample / rsample / log_prob /
entropy / mean / variance (and cdf / icdf where torch has them). Every quantity is a composition
of server ops (MultivariateNormal's Cholesky factor and triangular solves included); draws come
from the seeded generators (tensord.manual_seed), so a seed repeats a program's samples.

Left for later: validate_args beyond the support checks below.
"""
import math

from . import _dtypes

__all__ = ["Distribution", "Normal", "Uniform", "Bernoulli", "Categorical", "Exponential",
           "Multinomial", "Gamma", "Beta", "Poisson", "MultivariateNormal"]


def _api():
    """The tensord package itself (its functions: randn, where, broadcast_tensors, …)."""
    import sys  # noqa: PLC0415
    return sys.modules[__package__]


def _finfo(dtype):
    from ._info import finfo  # noqa: PLC0415
    return finfo(dtype)


def _draw(fn, shape, like):
    """tensord.rand/randn (`fn`) of `shape` in like's dtype, on its device and session."""
    return getattr(_api(), fn)(tuple(shape), dtype=like.dtype, device=like.device,
                               session=like._session)


def _as_tensor(value, like=None):
    from ._tensor import Tensor  # noqa: PLC0415
    if isinstance(value, Tensor):
        return value
    api = _api()
    if like is not None:
        return like.new_full((), float(value))
    return api.tensor(float(value))


def _broadcast(*values):
    from ._tensor import Tensor  # noqa: PLC0415
    like = next((v for v in values if isinstance(v, Tensor)), None)
    tensors = [_as_tensor(v, like) for v in values]
    return _api().broadcast_tensors(*tensors)


class Distribution:
    """The interface of torch.distributions.Distribution."""

    has_rsample = False

    def __init__(self, batch_shape=(), event_shape=(), validate_args=None):
        self._batch_shape = _dtypes.Size(batch_shape)
        self._event_shape = _dtypes.Size(event_shape)

    @property
    def batch_shape(self):
        return self._batch_shape

    @property
    def event_shape(self):
        return self._event_shape

    def _extended_shape(self, sample_shape=()):
        return tuple(sample_shape) + tuple(self._batch_shape) + tuple(self._event_shape)

    def sample(self, sample_shape=()):
        return self.rsample(sample_shape).detach()

    def sample_n(self, n):
        return self.sample((n,))

    @property
    def stddev(self):
        return self.variance.sqrt()

    def __repr__(self):
        return f"{type(self).__name__}()"


class Normal(Distribution):
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = _broadcast(loc, scale)
        super().__init__(self.loc.shape)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return self.scale.pow(2)

    @property
    def stddev(self):
        return self.scale

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        eps = _draw("randn", shape, self.loc)
        return self.loc + eps * self.scale

    def log_prob(self, value):
        value = _as_tensor(value, self.loc)
        var = self.scale ** 2
        return -((value - self.loc) ** 2) / (2 * var) - self.scale.log() - \
            math.log(math.sqrt(2 * math.pi))

    def cdf(self, value):
        value = _as_tensor(value, self.loc)
        return 0.5 * (1 + ((value - self.loc) * self.scale.reciprocal() /
                           math.sqrt(2)).erf())

    def icdf(self, value):
        value = _as_tensor(value, self.loc)
        return self.loc + self.scale * (2 * value - 1).erfinv() * math.sqrt(2)

    def entropy(self):
        return 0.5 + 0.5 * math.log(2 * math.pi) + self.scale.log()

    def __repr__(self):
        return f"Normal(loc: {self.loc}, scale: {self.scale})"


class Uniform(Distribution):
    has_rsample = True

    def __init__(self, low, high, validate_args=None):
        self.low, self.high = _broadcast(low, high)
        super().__init__(self.low.shape)

    @property
    def mean(self):
        return (self.high + self.low) / 2

    @property
    def variance(self):
        return (self.high - self.low).pow(2) / 12

    @property
    def stddev(self):
        return (self.high - self.low) / 12 ** 0.5

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        rand = _draw("rand", shape, self.low)
        return self.low + rand * (self.high - self.low)

    def log_prob(self, value):
        value = _as_tensor(value, self.low)
        lb = (self.low <= value).to(self.low.dtype)
        ub = (self.high > value).to(self.low.dtype)
        return (lb * ub).log() - (self.high - self.low).log()

    def cdf(self, value):
        value = _as_tensor(value, self.low)
        return ((value - self.low) / (self.high - self.low)).clamp(0, 1)

    def icdf(self, value):
        return value * (self.high - self.low) + self.low

    def entropy(self):
        return (self.high - self.low).log()


def _probs_and_logits(probs, logits, binary):
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")
    if probs is not None:
        probs = _as_tensor(probs)
        if binary:
            eps = _finfo(probs.dtype).eps
            clamped = probs.clamp(eps, 1 - eps)
            return probs, clamped.log() - (1 - clamped).log()
        probs = probs / probs.sum(-1, keepdim=True)
        eps = _finfo(probs.dtype).eps
        return probs, probs.clamp(eps, 1 - eps).log()
    logits = _as_tensor(logits)
    if binary:
        return logits.sigmoid(), logits
    logits = logits - logits.logsumexp(-1, keepdim=True)
    return logits.softmax(-1), logits


class Bernoulli(Distribution):
    def __init__(self, probs=None, logits=None, validate_args=None):
        self.probs, self.logits = _probs_and_logits(probs, logits, binary=True)
        super().__init__(self.probs.shape)

    @property
    def mean(self):
        return self.probs

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        return _api().bernoulli(self.probs.expand(shape).contiguous())

    def log_prob(self, value):
        from .nn import functional as F  # noqa: PLC0415
        logits, value = _broadcast(self.logits, _as_tensor(value, self.logits))
        return -F.binary_cross_entropy_with_logits(logits, value.to(logits.dtype),
                                                   reduction="none")

    def entropy(self):
        from .nn import functional as F  # noqa: PLC0415
        return F.binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")


class Categorical(Distribution):
    def __init__(self, probs=None, logits=None, validate_args=None):
        self.probs, self.logits = _probs_and_logits(probs, logits, binary=False)
        self._num_events = self.probs.shape[-1]
        super().__init__(self.probs.shape[:-1])

    @property
    def param_shape(self):
        return self.probs.shape

    @property
    def mean(self):
        return self.probs.new_full(tuple(self.batch_shape), float("nan"))

    @property
    def variance(self):
        return self.probs.new_full(tuple(self.batch_shape), float("nan"))

    def sample(self, sample_shape=()):
        """Inverse-CDF draws: the count of cumulative probabilities below a uniform number."""
        shape = tuple(sample_shape) + tuple(self.batch_shape)
        cdf = self.probs.cumsum(-1)
        u = _draw("rand", shape + (1,), self.probs) * cdf[..., -1:]
        return (cdf.expand(shape + (self._num_events,)) <= u).sum(-1).clamp_max(
            self._num_events - 1)

    def log_prob(self, value):
        value = _as_tensor(value, None) if not hasattr(value, "dtype") else value
        value = value.long().unsqueeze(-1)
        value, log_pmf = _api().broadcast_tensors(value, self.logits)
        return log_pmf.gather(-1, value[..., :1]).squeeze(-1)

    def entropy(self):
        min_real = _finfo(self.logits.dtype).min
        logits = self.logits.clamp_min(min_real)
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand=True):
        api = _api()
        values = api.arange(self._num_events, device=self.probs.device,
                            session=self.probs._session)
        values = values.view((-1,) + (1,) * len(self.batch_shape))
        return values.expand((-1,) + tuple(self.batch_shape)) if expand else values


class Exponential(Distribution):
    has_rsample = True

    def __init__(self, rate, validate_args=None):
        (self.rate,) = _broadcast(rate)
        super().__init__(self.rate.shape)

    @property
    def mean(self):
        return self.rate.reciprocal()

    @property
    def variance(self):
        return self.rate.pow(-2)

    @property
    def stddev(self):
        return self.rate.reciprocal()

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        u = _draw("rand", shape, self.rate)
        return -(1 - u).log() / self.rate

    def log_prob(self, value):
        value = _as_tensor(value, self.rate)
        return self.rate.log() - self.rate * value

    def cdf(self, value):
        return 1 - (-self.rate * _as_tensor(value, self.rate)).exp()

    def icdf(self, value):
        return -(1 - _as_tensor(value, self.rate)).log() / self.rate

    def entropy(self):
        return 1.0 - self.rate.log()


class Multinomial(Distribution):
    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        self.probs, self.logits = self._categorical.probs, self._categorical.logits
        super().__init__(self._categorical.batch_shape, self.probs.shape[-1:])

    @property
    def mean(self):
        return self.probs * self.total_count

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        draws = self._categorical.sample((self.total_count,) + tuple(sample_shape))
        shape = self._extended_shape(sample_shape)
        counts = self.probs.new_zeros(shape)
        ones = counts.new_ones(tuple(draws.shape[1:]) + (1,))
        for i in range(self.total_count):  # one scatter per draw of the count
            counts.scatter_add_(-1, draws[i].unsqueeze(-1), ones)
        return counts

    def log_prob(self, value):
        value = _as_tensor(value, self.logits)
        logits, value = _api().broadcast_tensors(self.logits, value)
        logits = logits.clone()
        logits = _api().where((value == 0) & (logits == float("-inf")), logits.new_zeros(()),
                              logits)
        log_factorial_n = math.lgamma(self.total_count + 1)
        log_factorial_xs = (value + 1).lgamma().sum(-1)
        return log_factorial_n - log_factorial_xs + (logits * value).sum(-1)


class Gamma(Distribution):
    """Draws by Marsaglia and Tsang's method, as torch's: every element tries a fixed number of
    rounds at once (each round accepts more than 95%); concentration < 1 is boosted."""

    has_rsample = True
    _ROUNDS = 12

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = _broadcast(concentration, rate)
        super().__init__(self.concentration.shape)

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return ((self.concentration - 1) / self.rate).clamp_min(0)

    @property
    def variance(self):
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape=()):
        return _standard_gamma(self.concentration.expand(self._extended_shape(sample_shape))
                               .contiguous(), self._ROUNDS) / self.rate

    def log_prob(self, value):
        value = _as_tensor(value, self.rate)
        a, b = self.concentration, self.rate
        return a * b.log() + (a - 1) * value.log() - b * value - a.lgamma()

    def entropy(self):
        a = self.concentration
        return a - self.rate.log() + a.lgamma() + (1.0 - a) * a.digamma()


def _standard_gamma(alpha, rounds):
    api = _api()
    boost = alpha < 1
    a = api.where(boost, alpha + 1, alpha)
    d = a - 1.0 / 3
    c = (9 * d).rsqrt()
    out = alpha.new_zeros(tuple(alpha.shape))
    done = alpha.new_zeros(tuple(alpha.shape), dtype=_dtypes.bool_)
    for _ in range(rounds):
        x = _draw("randn", alpha.shape, alpha)
        v = (1 + c * x) ** 3
        u = _draw("rand", alpha.shape, alpha)
        ok = (v > 0) & (u.log() < 0.5 * x * x + d - d * v + d * v.clamp_min(1e-30).log())
        take = ok & ~done
        out = api.where(take, d * v, out)
        done = done | ok
    u = _draw("rand", alpha.shape, alpha)
    return api.where(boost, out * u.pow(alpha.reciprocal()), out).clamp_min(
        _finfo(alpha.dtype).tiny)


class Beta(Distribution):
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        self.concentration1, self.concentration0 = _broadcast(concentration1, concentration0)
        super().__init__(self.concentration1.shape)

    @property
    def mean(self):
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def variance(self):
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total.pow(2) * (total + 1))

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        x = _standard_gamma(self.concentration1.expand(shape).contiguous(), Gamma._ROUNDS)
        y = _standard_gamma(self.concentration0.expand(shape).contiguous(), Gamma._ROUNDS)
        return x / (x + y)

    def log_prob(self, value):
        value = _as_tensor(value, self.concentration1)
        a, b = self.concentration1, self.concentration0
        return (a - 1) * value.log() + (b - 1) * (1 - value).log() + (a + b).lgamma() - \
            a.lgamma() - b.lgamma()

    def entropy(self):
        a, b = self.concentration1, self.concentration0
        total = a + b
        return (a.lgamma() + b.lgamma() - total.lgamma() - (a - 1) * a.digamma() -
                (b - 1) * b.digamma() + (total - 2) * total.digamma())


class Poisson(Distribution):
    """Draws by the server's poisson op (Knuth's product below rate 10, PTRS above)."""

    def __init__(self, rate, validate_args=None):
        (self.rate,) = _broadcast(rate)
        super().__init__(self.rate.shape)

    @property
    def mean(self):
        return self.rate

    @property
    def mode(self):
        return self.rate.floor()

    @property
    def variance(self):
        return self.rate

    def sample(self, sample_shape=()):
        return _api().poisson(self.rate.expand(self._extended_shape(sample_shape)))

    def log_prob(self, value):
        rate, value = _broadcast(self.rate, value)
        return value.xlogy(rate) - rate - (value + 1).lgamma()


class MultivariateNormal(Distribution):
    """N(loc, Sigma) with Sigma given as covariance_matrix, precision_matrix or its lower Cholesky
    factor scale_tril (the other two are computed from that factor, as torch's)."""

    has_rsample = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None):
        from . import linalg  # noqa: PLC0415
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        if (covariance_matrix is not None) + (scale_tril is not None) + \
                (precision_matrix is not None) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or scale_tril "
                             "may be specified.")
        given, name = next((m, n) for m, n in ((scale_tril, "scale_tril matrix"),
                                                (covariance_matrix, "covariance_matrix"),
                                                (precision_matrix, "precision_matrix"))
                           if m is not None)
        if given.dim() < 2:
            raise ValueError(f"{name} must be at least two-dimensional, with optional leading "
                             f"batch dimensions")
        batch = _api().broadcast_shapes(tuple(given.shape[:-2]), tuple(loc.shape[:-1]))
        n = loc.shape[-1]
        self.loc = loc.expand(batch + (n,))
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = linalg.cholesky(covariance_matrix)
        else:
            # torch's _precision_to_scale_tril: the inverse of the Cholesky factor of P's flip.
            lf = linalg.cholesky(precision_matrix.flip(-2, -1))
            l_inv = lf.flip(-2, -1).mT
            eye = _api().eye(n, dtype=precision_matrix.dtype, device=precision_matrix.device,
                             session=precision_matrix._session)
            self._unbroadcasted_scale_tril = linalg.solve_triangular(l_inv, eye, upper=False)
        super().__init__(batch, (n,))

    @property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._batch_shape + self._event_shape * 2)

    @property
    def covariance_matrix(self):
        lower = self._unbroadcasted_scale_tril
        return (lower @ lower.mT).expand(self._batch_shape + self._event_shape * 2)

    @property
    def precision_matrix(self):
        return self._unbroadcasted_scale_tril.cholesky_inverse().expand(
            self._batch_shape + self._event_shape * 2)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(
            self._batch_shape + self._event_shape)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        eps = _draw("randn", shape, self.loc)
        return self.loc + (self._unbroadcasted_scale_tril @ eps.unsqueeze(-1)).squeeze(-1)

    def _half_log_det(self):
        return self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)

    def log_prob(self, value):
        from . import linalg  # noqa: PLC0415
        diff = _as_tensor(value, self.loc) - self.loc
        lower = self._unbroadcasted_scale_tril
        shape = _api().broadcast_shapes(tuple(diff.shape[:-1]), tuple(lower.shape[:-2]))
        n = self._event_shape[0]
        solved = linalg.solve_triangular(lower.expand(shape + (n, n)),
                                         diff.expand(shape + (n,)).unsqueeze(-1), upper=False)
        mahalanobis = solved.squeeze(-1).pow(2).sum(-1)
        return -0.5 * (n * math.log(2 * math.pi) + mahalanobis) - self._half_log_det()

    def entropy(self):
        n = self._event_shape[0]
        h = 0.5 * n * (1.0 + math.log(2 * math.pi)) + self._half_log_det()
        return h.expand(self._batch_shape) if len(self._batch_shape) else h
