"""torch.distributions for tensord tensors: Normal, Uniform, Bernoulli, Categorical, Exponential,
Multinomial, Gamma, Beta, Dirichlet, Poisson, Laplace, LogNormal, MultivariateNormal,
Independent, TransformedDistribution (its transforms in distributions_transforms.py) and the
families made of these (HalfNormal, Cauchy, HalfCauchy, Gumbel, Weibull, Pareto, Chi2, StudentT,
Geometric, Binomial, NegativeBinomial, OneHotCategorical, the relaxed Bernoulli and categorical,
MixtureSameFamily, FisherSnedecor, Kumaraswamy, LowRankMultivariateNormal, VonMises,
ContinuousBernoulli, LKJCholesky), with sample / rsample / log_prob / entropy / mean / mode / variance / expand /
perplexity (and cdf / icdf / enumerate_support where torch 1.13 has them), torch's
arg_constraints / support with its argument validation (validate_args, on by default, raising
torch's ValueError messages), torch's reprs, and kl_divergence / register_kl for the pairs torch
1.13 registers among these classes. Every quantity is a composition of server ops
(MultivariateNormal's Cholesky factor and triangular solves included); draws come from the
seeded generators (tensord.manual_seed), so a seed repeats a program's samples.
"""
import math
import sys
import warnings
from numbers import Number, Real

from . import _dtypes
from . import distributions_constraints as constraints
from . import distributions_transforms as transforms_module

sys.modules[__name__ + ".constraints"] = constraints
sys.modules[__name__ + ".transforms"] = transforms_module
transforms = transforms_module
from .distributions_transforms import *  # noqa: E402,F401,F403 - torch.distributions.<Transform>

__all__ = ["Distribution", "ExponentialFamily", "Normal", "Uniform", "Bernoulli", "Categorical",
           "Exponential", "Multinomial", "Gamma", "Beta", "Dirichlet", "Poisson", "Laplace",
           "LogNormal", "MultivariateNormal", "Independent", "constraints", "kl_divergence",
           "register_kl", "transforms", "TransformedDistribution", "HalfNormal", "Cauchy",
           "HalfCauchy", "Gumbel", "Weibull", "Pareto", "Chi2", "StudentT", "Geometric",
           "Binomial", "NegativeBinomial", "OneHotCategorical", "LogitRelaxedBernoulli",
           "RelaxedBernoulli", "ExpRelaxedCategorical", "RelaxedOneHotCategorical",
           "MixtureSameFamily", "FisherSnedecor", "Kumaraswamy",
           "LowRankMultivariateNormal", "VonMises", "ContinuousBernoulli", "LKJCholesky"] + \
    transforms_module.__all__

_EULER_GAMMA = 0.57721566490153286060


def _api():
    """The tensord package itself (its functions: randn, where, broadcast_tensors, …)."""
    return sys.modules[__package__]


def _finfo(dtype):
    from ._info import finfo  # noqa: PLC0415
    return finfo(dtype)


def _is_tensor(value):
    from ._tensor import Tensor  # noqa: PLC0415
    return isinstance(value, Tensor)


def _draw(fn, shape, like):
    """tensord.rand/randn (`fn`) of `shape` in like's dtype, on its device and session."""
    return getattr(_api(), fn)(tuple(shape), dtype=like.dtype, device=like.device,
                               session=like._session)


def _as_tensor(value, like=None):
    if _is_tensor(value):
        return value
    api = _api()
    if like is not None:
        return like.new_full((), float(value))
    return api.tensor(float(value))


def _broadcast(*values):
    """torch.distributions.utils.broadcast_all: numbers become tensors like the tensors given."""
    if not all(_is_tensor(v) or isinstance(v, Number) for v in values):
        raise ValueError("Input arguments must all be instances of numbers.Number, "
                         "torch.Tensor or objects implementing __torch_function__.")
    like = next((v for v in values if _is_tensor(v)), None)
    tensors = [_as_tensor(v, like) for v in values]
    return _api().broadcast_tensors(*tensors)


def _fill_where(mask, fill, tensor):
    """torch's `tensor[mask] = fill`, as a server-side where."""
    return _api().where(mask, tensor.new_full((), fill), tensor)


def _sum_rightmost(value, dim):
    if dim == 0:
        return value
    return value.reshape(tuple(value.shape[:-dim]) + (-1,)).sum(-1)


def _clamp_probs(probs):
    eps = _finfo(probs.dtype).eps
    return probs.clamp(eps, 1 - eps)


def _probs_to_logits(probs, is_binary=False):
    clamped = _clamp_probs(probs)
    if is_binary:
        return clamped.log() - (-clamped).log1p()
    return clamped.log()


def _logits_to_probs(logits, is_binary=False):
    return logits.sigmoid() if is_binary else logits.softmax(-1)


class lazy_property:
    """torch.distributions.utils.lazy_property: computed on first access, then an entry of the
    instance's __dict__ (so that repr and validation see only the parameters given)."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        self.__doc__ = wrapped.__doc__

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return self
        value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


class Distribution:
    """The interface of torch.distributions.Distribution."""

    has_rsample = False
    has_enumerate_support = False
    _validate_args = True

    @staticmethod
    def set_default_validate_args(value):
        if value not in [True, False]:
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape=(), event_shape=(), validate_args=None):
        self._batch_shape = _dtypes.Size(batch_shape)
        self._event_shape = _dtypes.Size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            try:
                arg_constraints = self.arg_constraints
            except NotImplementedError:
                arg_constraints = {}
                warnings.warn(f"{self.__class__} does not define `arg_constraints`. "
                              "Please set `arg_constraints = {}` or initialize the distribution "
                              "with `validate_args=False` to turn off validation.")
            for param, constraint in arg_constraints.items():
                if constraints.is_dependent(constraint):
                    continue  # skip constraints that cannot be checked
                if param not in self.__dict__ and \
                        isinstance(getattr(type(self), param), lazy_property):
                    continue  # skip checking lazily-constructed args
                value = getattr(self, param)
                valid = constraint.check(value)
                if not valid.all():
                    raise ValueError(
                        f"Expected parameter {param} "
                        f"({type(value).__name__} of shape {tuple(value.shape)}) "
                        f"of distribution {repr(self)} "
                        f"to satisfy the constraint {repr(constraint)}, "
                        f"but found invalid values:\n{value}")
        super().__init__()

    # The parameters of one value per batch element that expand() broadcasts, declared by the
    # distributions whose expand is only that (torch writes the same body in each class).
    _scalar_params = None

    def expand(self, batch_shape, _instance=None):
        cls = next((k for k in type(self).__mro__ if k.__dict__.get("_scalar_params")), None)
        if cls is None:
            raise NotImplementedError
        new, batch_shape = self._expand_params(
            cls, batch_shape, {name: () for name in cls._scalar_params}, _instance)
        return self._finish_expand(new, cls, batch_shape)

    @property
    def batch_shape(self):
        return self._batch_shape

    @property
    def event_shape(self):
        return self._event_shape

    @property
    def arg_constraints(self):
        raise NotImplementedError

    @property
    def support(self):
        raise NotImplementedError

    @property
    def mean(self):
        raise NotImplementedError

    @property
    def mode(self):
        raise NotImplementedError(f"{self.__class__} does not implement mode")

    @property
    def variance(self):
        raise NotImplementedError

    @property
    def stddev(self):
        return self.variance.sqrt()

    def sample(self, sample_shape=()):
        return self.rsample(sample_shape).detach()

    def rsample(self, sample_shape=()):
        raise NotImplementedError

    def sample_n(self, n):
        warnings.warn("sample_n will be deprecated. Use .sample((n,)) instead", UserWarning)
        return self.sample((n,))

    def log_prob(self, value):
        raise NotImplementedError

    def cdf(self, value):
        raise NotImplementedError

    def icdf(self, value):
        raise NotImplementedError

    def enumerate_support(self, expand=True):
        raise NotImplementedError

    def entropy(self):
        raise NotImplementedError

    def perplexity(self):
        return self.entropy().exp()

    def _extended_shape(self, sample_shape=()):
        return _dtypes.Size(tuple(sample_shape) + tuple(self._batch_shape) +
                            tuple(self._event_shape))

    def _validate_sample(self, value):
        if not _is_tensor(value):
            raise ValueError("The value argument to log_prob must be a Tensor")
        event_dim_start = len(value.size()) - len(self._event_shape)
        if tuple(value.size()[event_dim_start:]) != tuple(self._event_shape):
            raise ValueError("The right-most size of value must match event_shape: {} vs {}."
                             .format(value.size(), self._event_shape))
        actual_shape = value.size()
        expected_shape = _dtypes.Size(tuple(self._batch_shape) + tuple(self._event_shape))
        for i, j in zip(reversed(actual_shape), reversed(expected_shape)):
            if i != 1 and j != 1 and i != j:
                raise ValueError("Value is not broadcastable with batch_shape+event_shape: "
                                 "{} vs {}.".format(actual_shape, expected_shape))
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(f"{self.__class__} does not define `support` to enable "
                          "sample validation. Please initialize the distribution with "
                          "`validate_args=False` to turn off validation.")
            return
        assert support is not None
        valid = support.check(value)
        if not valid.all():
            raise ValueError(
                "Expected value argument "
                f"({type(value).__name__} of shape {tuple(value.shape)}) "
                f"to be within the support ({repr(support)}) "
                f"of the distribution {repr(self)}, "
                f"but found invalid values:\n{value}")

    def _get_checked_instance(self, cls, _instance=None):
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError("Subclass {} of {} that defines a custom __init__ method "
                                      "must also define a custom .expand() method."
                                      .format(self.__class__.__name__, cls.__name__))
        return self.__new__(type(self)) if _instance is None else _instance

    def _expand_params(self, cls, batch_shape, event_shapes, _instance=None):
        """The body of torch's per-class expand(): every parameter in `event_shapes` (name ->
        trailing shape) that the instance holds, expanded to batch_shape + its trailing shape."""
        new = self._get_checked_instance(cls, _instance)
        batch_shape = _dtypes.Size(batch_shape)
        for name, trailing in event_shapes.items():
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(tuple(batch_shape) +
                                                              tuple(trailing)))
        return new, batch_shape

    def _finish_expand(self, new, cls, batch_shape, event_shape=()):
        super(cls, new).__init__(batch_shape, event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def __repr__(self):
        param_names = [k for k, _ in self.arg_constraints.items() if k in self.__dict__]
        args_string = ", ".join(["{}: {}".format(p, self.__dict__[p]
                                                 if self.__dict__[p].numel() == 1
                                                 else self.__dict__[p].size())
                                 for p in param_names])
        return self.__class__.__name__ + "(" + args_string + ")"


class ExponentialFamily(Distribution):
    """torch's ExponentialFamily: the base class whose (type, type) KL pairs torch answers by
    Bregman divergence; only the same-class pairs registered below are computed here."""

    def entropy(self):
        raise NotImplementedError


def _batch_shape_of(*params_and_values):
    """torch's batch_shape rule: () when every argument given was a Python number."""
    given, tensor = params_and_values[:-1], params_and_values[-1]
    return () if all(isinstance(v, Number) for v in given) else tensor.shape


class Normal(ExponentialFamily):
    _scalar_params = ("loc", "scale")
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = _broadcast(loc, scale)
        super().__init__(_batch_shape_of(loc, scale, self.loc), validate_args=validate_args)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return self.stddev.pow(2)

    @property
    def stddev(self):
        return self.scale

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        eps = _draw("randn", shape, self.loc)
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = _as_tensor(value, self.loc)
        var = self.scale ** 2
        return -((value - self.loc) ** 2) / (2 * var) - self.scale.log() - \
            math.log(math.sqrt(2 * math.pi))

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = _as_tensor(value, self.loc)
        return 0.5 * (1 + ((value - self.loc) * self.scale.reciprocal() /
                           math.sqrt(2)).erf())

    def icdf(self, value):
        value = _as_tensor(value, self.loc)
        return self.loc + self.scale * (2 * value - 1).erfinv() * math.sqrt(2)

    def entropy(self):
        return 0.5 + 0.5 * math.log(2 * math.pi) + self.scale.log()


class Uniform(Distribution):
    _scalar_params = ("low", "high")
    arg_constraints = {"low": constraints.dependent(is_discrete=False, event_dim=0),
                       "high": constraints.dependent(is_discrete=False, event_dim=0)}
    has_rsample = True

    def __init__(self, low, high, validate_args=None):
        self.low, self.high = _broadcast(low, high)
        super().__init__(_batch_shape_of(low, high, self.low), validate_args=validate_args)
        if self._validate_args and not (self.low < self.high).all():
            raise ValueError("Uniform is not defined when low>= high")

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        return constraints.interval(self.low, self.high)

    @property
    def mean(self):
        return (self.high + self.low) / 2

    @property
    def mode(self):
        return math.nan * self.high

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
        if self._validate_args:
            self._validate_sample(value)
        value = _as_tensor(value, self.low)
        lb = (self.low <= value).to(self.low.dtype)
        ub = (self.high > value).to(self.low.dtype)
        return (lb * ub).log() - (self.high - self.low).log()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = _as_tensor(value, self.low)
        return ((value - self.low) / (self.high - self.low)).clamp(0, 1)

    def icdf(self, value):
        return value * (self.high - self.low) + self.low

    def entropy(self):
        return (self.high - self.low).log()


class Bernoulli(ExponentialFamily):
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            is_scalar = isinstance(probs, Number)
            (self.probs,) = _broadcast(probs)
        else:
            is_scalar = isinstance(logits, Number)
            (self.logits,) = _broadcast(logits)
        self._param = self.probs if probs is not None else self.logits
        super().__init__(() if is_scalar else self._param.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new, batch_shape = self._expand_params(Bernoulli, batch_shape,
                                               {"probs": (), "logits": ()}, _instance)
        new._param = new.__dict__.get("logits", new.__dict__.get("probs"))
        return self._finish_expand(new, Bernoulli, batch_shape)

    @lazy_property
    def logits(self):
        return _probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return _logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self):
        return self._param.size()

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        mode = (self.probs >= 0.5).to(self.probs.dtype)
        return _fill_where(self.probs == 0.5, math.nan, mode)

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        return _api().bernoulli(self.probs.expand(shape).contiguous())

    def log_prob(self, value):
        from .nn import functional as F  # noqa: PLC0415
        if self._validate_args:
            self._validate_sample(value)
        logits, value = _broadcast(self.logits, _as_tensor(value, self.logits))
        return -F.binary_cross_entropy_with_logits(logits, value.to(logits.dtype),
                                                   reduction="none")

    def entropy(self):
        from .nn import functional as F  # noqa: PLC0415
        return F.binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")

    def enumerate_support(self, expand=True):
        values = _api().arange(2, dtype=self._param.dtype, device=self._param.device,
                               session=self._param._session)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + tuple(self._batch_shape)) if expand else values


class Categorical(Distribution):
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            if probs.dim() < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
        else:
            if logits.dim() < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(-1, keepdim=True)
        self._param = self.probs if probs is not None else self.logits
        self._num_events = self._param.shape[-1]
        batch_shape = self._param.shape[:-1] if self._param.dim() > 1 else ()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        n = self._num_events
        new, batch_shape = self._expand_params(Categorical, batch_shape,
                                               {"probs": (n,), "logits": (n,)}, _instance)
        new._param = new.__dict__.get("logits", new.__dict__.get("probs"))
        new._num_events = n
        return self._finish_expand(new, Categorical, batch_shape)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self._num_events - 1)

    @lazy_property
    def logits(self):
        return _probs_to_logits(self.probs)

    @lazy_property
    def probs(self):
        return _logits_to_probs(self.logits)

    @property
    def param_shape(self):
        return self._param.size()

    @property
    def mean(self):
        return self.probs.new_full(tuple(self._extended_shape()), math.nan)

    @property
    def mode(self):
        return self.probs.argmax(-1)

    @property
    def variance(self):
        return self.probs.new_full(tuple(self._extended_shape()), math.nan)

    def sample(self, sample_shape=()):
        """Inverse-CDF draws: the count of cumulative probabilities below a uniform number."""
        shape = tuple(sample_shape) + tuple(self.batch_shape)
        cdf = self.probs.cumsum(-1)
        u = _draw("rand", shape + (1,), self.probs) * cdf[..., -1:]
        return (cdf.expand(shape + (self._num_events,)) <= u).sum(-1).clamp_max(
            self._num_events - 1)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = _as_tensor(value, None) if not hasattr(value, "dtype") else value
        value = value.long().unsqueeze(-1)
        value, log_pmf = _api().broadcast_tensors(value, self.logits)
        return log_pmf.gather(-1, value[..., :1]).squeeze(-1)

    def entropy(self):
        min_real = _finfo(self.logits.dtype).min
        logits = self.logits.clamp_min(min_real)
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand=True):
        values = _api().arange(self._num_events, dtype=_dtypes.int64,
                               device=self._param.device, session=self._param._session)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + tuple(self._batch_shape)) if expand else values


class Exponential(ExponentialFamily):
    _scalar_params = ("rate",)
    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, rate, validate_args=None):
        (self.rate,) = _broadcast(rate)
        super().__init__(_batch_shape_of(rate, self.rate), validate_args=validate_args)

    @property
    def mean(self):
        return self.rate.reciprocal()

    @property
    def mode(self):
        return _api().zeros_like(self.rate)

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
        if self._validate_args:
            self._validate_sample(value)
        value = _as_tensor(value, self.rate)
        return self.rate.log() - self.rate * value

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 1 - (-self.rate * _as_tensor(value, self.rate)).exp()

    def icdf(self, value):
        return -(1 - _as_tensor(value, self.rate)).log() / self.rate

    def entropy(self):
        return 1.0 - self.rate.log()


class Multinomial(Distribution):
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Multinomial, _instance)
        batch_shape = _dtypes.Size(batch_shape)
        new.total_count = self.total_count
        new._categorical = self._categorical.expand(batch_shape)
        return self._finish_expand(new, Multinomial, batch_shape, self.event_shape)

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self):
        return constraints.multinomial(self.total_count)

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def param_shape(self):
        return self._categorical.param_shape

    @property
    def mean(self):
        return self.probs * self.total_count

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        draws = self._categorical.sample((self.total_count,) + tuple(sample_shape))
        # The draws' first dimension last, then one scatter adds them all up.
        draws = draws.permute(*(list(range(1, draws.dim())) + [0]))
        counts = draws.new_zeros(tuple(self._extended_shape(sample_shape)))
        counts.scatter_add_(-1, draws, _api().ones_like(draws))
        return counts.to(self.probs.dtype)

    def entropy(self):
        """torch's: n H(categorical) - lgamma(n + 1) plus the binomial marginals' expectations of
        lgamma(x + 1), the counts 1..n enumerated along a new leading dimension."""
        n = self.total_count
        term1 = n * self._categorical.entropy() - math.lgamma(n + 1)
        probs = self.probs
        support = _api().arange(1, n + 1, dtype=probs.dtype, device=probs.device,
                                session=probs._session).view((-1,) + (1,) * probs.dim())
        logits = _probs_to_logits(probs, is_binary=True)
        normalize = n * logits.clamp_min(0) + n * (-logits.abs()).exp().log1p() - \
            math.lgamma(n + 1)
        log_binomial = support * logits - (support + 1).lgamma() - (n - support + 1).lgamma() - \
            normalize
        term2 = (log_binomial.exp() * (support + 1).lgamma()).sum(0).sum(-1)
        return term1 + term2

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = _as_tensor(value, self.logits)
        logits, value = _api().broadcast_tensors(self.logits, value)
        logits = _api().where((value == 0) & (logits == -math.inf), logits.new_zeros(()), logits)
        log_factorial_n = (value.sum(-1) + 1).lgamma()
        log_factorial_xs = (value + 1).lgamma().sum(-1)
        return log_factorial_n - log_factorial_xs + (logits * value).sum(-1)


class Gamma(ExponentialFamily):
    """Draws by Marsaglia and Tsang's method, as torch's: every element tries a fixed number of
    rounds at once (each round accepts more than 95%); concentration < 1 is boosted."""

    _scalar_params = ("concentration", "rate")
    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _ROUNDS = 12

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = _broadcast(concentration, rate)
        super().__init__(_batch_shape_of(concentration, rate, self.concentration),
                         validate_args=validate_args)

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
        if self._validate_args:
            self._validate_sample(value)
        a, b = self.concentration, self.rate
        return a.xlogy(b) + (a - 1).xlogy(value) - b * value - a.lgamma()

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


class Dirichlet(ExponentialFamily):
    """Draws: independent standard gamma draws (see Gamma), normalized along the event."""

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args=None):
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        super().__init__(concentration.shape[:-1], concentration.shape[-1:],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new, batch_shape = self._expand_params(
            Dirichlet, batch_shape, {"concentration": tuple(self.event_shape)}, _instance)
        return self._finish_expand(new, Dirichlet, batch_shape, self.event_shape)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        x = _standard_gamma(self.concentration.expand(tuple(shape)).contiguous(), Gamma._ROUNDS)
        return (x / x.sum(-1, keepdim=True)).clamp(_finfo(x.dtype).tiny,
                                                   1 - _finfo(x.dtype).eps)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return ((value.log() * (self.concentration - 1.0)).sum(-1) +
                self.concentration.sum(-1).lgamma() - self.concentration.lgamma().sum(-1))

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, keepdim=True)

    @property
    def mode(self):
        from .nn import functional as F  # noqa: PLC0415
        concentrationm1 = (self.concentration - 1).clamp_min(0.)
        mode = concentrationm1 / concentrationm1.sum(-1, keepdim=True)
        mask = (self.concentration < 1).all(-1)
        one_hot = F.one_hot(mode.argmax(-1), concentrationm1.shape[-1]).to(mode.dtype)
        return _api().where(mask.unsqueeze(-1), one_hot, mode)

    @property
    def variance(self):
        con0 = self.concentration.sum(-1, keepdim=True)
        return self.concentration * (con0 - self.concentration) / (con0.pow(2) * (con0 + 1))

    def entropy(self):
        k = self.concentration.size(-1)
        a0 = self.concentration.sum(-1)
        return (self.concentration.lgamma().sum(-1) - a0.lgamma() - (k - a0) * a0.digamma() -
                ((self.concentration - 1.0) * self.concentration.digamma()).sum(-1))


class Beta(ExponentialFamily):
    """A two-category Dirichlet, as torch's (whose validation and repr it therefore shares)."""

    arg_constraints = {"concentration1": constraints.positive,
                       "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        if isinstance(concentration1, Real) and isinstance(concentration0, Real):
            both = _api().tensor([float(concentration1), float(concentration0)])
        else:
            concentration1, concentration0 = _broadcast(concentration1, concentration0)
            both = _api().stack([concentration1, concentration0], -1)
        self._dirichlet = Dirichlet(both, validate_args=validate_args)
        super().__init__(self._dirichlet._batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Beta, _instance)
        batch_shape = _dtypes.Size(batch_shape)
        new._dirichlet = self._dirichlet.expand(batch_shape)
        return self._finish_expand(new, Beta, batch_shape)

    @property
    def concentration1(self):
        return self._dirichlet.concentration[..., 0]

    @property
    def concentration0(self):
        return self._dirichlet.concentration[..., 1]

    @property
    def mean(self):
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self):
        return self._dirichlet.mode[..., 0]

    @property
    def variance(self):
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total.pow(2) * (total + 1))

    def rsample(self, sample_shape=()):
        return self._dirichlet.rsample(sample_shape).select(-1, 0)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        heads_tails = _api().stack([value, 1.0 - value], -1)
        return self._dirichlet.log_prob(heads_tails)

    def entropy(self):
        return self._dirichlet.entropy()


class Poisson(ExponentialFamily):
    """Draws by the server's poisson op (Knuth's product below rate 10, PTRS above)."""

    _scalar_params = ("rate",)
    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    def __init__(self, rate, validate_args=None):
        (self.rate,) = _broadcast(rate)
        super().__init__(_batch_shape_of(rate, self.rate), validate_args=validate_args)

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
        if self._validate_args:
            self._validate_sample(value)
        rate, value = _broadcast(self.rate, value)
        return value.xlogy(rate) - rate - (value + 1).lgamma()


class Laplace(Distribution):
    _scalar_params = ("loc", "scale")
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = _broadcast(loc, scale)
        super().__init__(_batch_shape_of(loc, scale, self.loc), validate_args=validate_args)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return 2 * self.scale.pow(2)

    @property
    def stddev(self):
        return (2 ** 0.5) * self.scale

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        eps = _finfo(self.loc.dtype).eps
        u = _draw("rand", shape, self.loc) * (2 - eps) + (eps - 1)  # uniform on [eps - 1, 1)
        return self.loc - self.scale * u.sign() * (-u.abs()).log1p()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -(2 * self.scale).log() - (value - self.loc).abs() / self.scale

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 - 0.5 * (value - self.loc).sign() * \
            (-(value - self.loc).abs() / self.scale).expm1()

    def icdf(self, value):
        term = value - 0.5
        return self.loc - self.scale * term.sign() * (-2 * term.abs()).log1p()

    def entropy(self):
        return 1 + (2 * self.scale).log()


class LogNormal(Distribution):
    """exp of a Normal (torch's TransformedDistribution of Normal by ExpTransform)."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.base_dist = Normal(loc, scale, validate_args=validate_args)
        shape = tuple(self.base_dist.batch_shape) + tuple(self.base_dist.event_shape)
        super().__init__(shape, (), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LogNormal, _instance)
        batch_shape = _dtypes.Size(batch_shape)
        new.base_dist = self.base_dist.expand(batch_shape)
        return self._finish_expand(new, LogNormal, batch_shape)

    @property
    def loc(self):
        return self.base_dist.loc

    @property
    def scale(self):
        return self.base_dist.scale

    @property
    def mean(self):
        return (self.loc + self.scale.pow(2) / 2).exp()

    @property
    def mode(self):
        return (self.loc - self.scale.square()).exp()

    @property
    def variance(self):
        return (self.scale.pow(2).exp() - 1) * (2 * self.loc + self.scale.pow(2)).exp()

    def sample(self, sample_shape=()):
        return self.base_dist.sample(sample_shape).exp()

    def rsample(self, sample_shape=()):
        return self.base_dist.rsample(sample_shape).exp()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        x = value.log()
        return -x + self.base_dist.log_prob(x)

    def cdf(self, value):
        x = value.log()
        if self._validate_args:
            self.base_dist._validate_sample(x)
        return self.base_dist.cdf(x)

    def icdf(self, value):
        return self.base_dist.icdf(value).exp()

    def entropy(self):
        return self.base_dist.entropy() + self.loc


def _batch_mahalanobis(lower, diff):
    """|L^-1 diff|^2 over the broadcast batch of the factor `lower` and the vectors `diff`."""
    from . import linalg  # noqa: PLC0415
    shape = _api().broadcast_shapes(tuple(diff.shape[:-1]), tuple(lower.shape[:-2]))
    n = lower.shape[-1]
    solved = linalg.solve_triangular(lower.expand(shape + (n, n)),
                                     diff.expand(shape + (n,)).unsqueeze(-1), upper=False)
    return solved.squeeze(-1).pow(2).sum(-1)


def _batch_trace_xxt(bmat):
    n, m = bmat.size(-1), bmat.size(-2)
    return bmat.reshape(-1, m * n).pow(2).sum(-1).reshape(tuple(bmat.shape[:-2]))


class MultivariateNormal(Distribution):
    """N(loc, Sigma) with Sigma given as covariance_matrix, precision_matrix or its lower Cholesky
    factor scale_tril (the other two are computed from that factor, as torch's)."""

    arg_constraints = {"loc": constraints.real_vector,
                       "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite,
                       "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
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
        given, name, attr = next(
            (m, n, a) for m, n, a in ((scale_tril, "scale_tril matrix", "scale_tril"),
                                      (covariance_matrix, "covariance_matrix",
                                       "covariance_matrix"),
                                      (precision_matrix, "precision_matrix", "precision_matrix"))
            if m is not None)
        if given.dim() < 2:
            raise ValueError(f"{name} must be at least two-dimensional, with optional leading "
                             f"batch dimensions")
        batch = _api().broadcast_shapes(tuple(given.shape[:-2]), tuple(loc.shape[:-1]))
        n = loc.shape[-1]
        setattr(self, attr, given.expand(batch + tuple(given.shape[-2:])))
        self.loc = loc.expand(batch + (n,))
        super().__init__(batch, (n,), validate_args=validate_args)
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

    def expand(self, batch_shape, _instance=None):
        shape = tuple(self.event_shape)
        new, batch_shape = self._expand_params(
            MultivariateNormal, batch_shape,
            {"loc": shape, "covariance_matrix": shape * 2, "scale_tril": shape * 2,
             "precision_matrix": shape * 2}, _instance)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        return self._finish_expand(new, MultivariateNormal, batch_shape, self.event_shape)

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._batch_shape + self._event_shape * 2)

    @lazy_property
    def covariance_matrix(self):
        lower = self._unbroadcasted_scale_tril
        return (lower @ lower.mT).expand(self._batch_shape + self._event_shape * 2)

    @lazy_property
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
        if self._validate_args:
            self._validate_sample(value)
        diff = _as_tensor(value, self.loc) - self.loc
        mahalanobis = _batch_mahalanobis(self._unbroadcasted_scale_tril, diff)
        n = self._event_shape[0]
        return -0.5 * (n * math.log(2 * math.pi) + mahalanobis) - self._half_log_det()

    def entropy(self):
        n = self._event_shape[0]
        h = 0.5 * n * (1.0 + math.log(2 * math.pi)) + self._half_log_det()
        return h.expand(self._batch_shape) if len(self._batch_shape) else h


class Independent(Distribution):
    """Reinterprets the rightmost `reinterpreted_batch_ndims` batch dims of a distribution as
    event dims (torch's Independent)."""

    arg_constraints = {}

    def __init__(self, base_distribution, reinterpreted_batch_ndims, validate_args=None):
        if reinterpreted_batch_ndims > len(base_distribution.batch_shape):
            raise ValueError("Expected reinterpreted_batch_ndims <= "
                             "len(base_distribution.batch_shape), actual {} vs {}".format(
                                 reinterpreted_batch_ndims, len(base_distribution.batch_shape)))
        shape = tuple(base_distribution.batch_shape) + tuple(base_distribution.event_shape)
        event_dim = reinterpreted_batch_ndims + len(base_distribution.event_shape)
        self.base_dist = base_distribution
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims
        super().__init__(shape[:len(shape) - event_dim], shape[len(shape) - event_dim:],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Independent, _instance)
        batch_shape = _dtypes.Size(batch_shape)
        new.base_dist = self.base_dist.expand(
            tuple(batch_shape) + tuple(self.event_shape[:self.reinterpreted_batch_ndims]))
        new.reinterpreted_batch_ndims = self.reinterpreted_batch_ndims
        return self._finish_expand(new, Independent, batch_shape, self.event_shape)

    @property
    def has_rsample(self):
        return self.base_dist.has_rsample

    @property
    def has_enumerate_support(self):
        if self.reinterpreted_batch_ndims > 0:
            return False
        return self.base_dist.has_enumerate_support

    @constraints.dependent_property
    def support(self):
        result = self.base_dist.support
        if self.reinterpreted_batch_ndims:
            result = constraints.independent(result, self.reinterpreted_batch_ndims)
        return result

    @property
    def mean(self):
        return self.base_dist.mean

    @property
    def mode(self):
        return self.base_dist.mode

    @property
    def variance(self):
        return self.base_dist.variance

    def sample(self, sample_shape=()):
        return self.base_dist.sample(sample_shape)

    def rsample(self, sample_shape=()):
        return self.base_dist.rsample(sample_shape)

    def log_prob(self, value):
        return _sum_rightmost(self.base_dist.log_prob(value), self.reinterpreted_batch_ndims)

    def entropy(self):
        return _sum_rightmost(self.base_dist.entropy(), self.reinterpreted_batch_ndims)

    def enumerate_support(self, expand=True):
        if self.reinterpreted_batch_ndims > 0:
            raise NotImplementedError("Enumeration over cartesian product is not implemented")
        return self.base_dist.enumerate_support(expand=expand)

    def __repr__(self):
        return self.__class__.__name__ + "({}, {})".format(self.base_dist,
                                                           self.reinterpreted_batch_ndims)


# ---- Transformed distributions and more families ------------------------------------------------

class TransformedDistribution(Distribution):
    """base_distribution pushed through transforms (distributions_transforms.py): samples are
    the transforms of base samples, log_prob subtracts each transform's log |det J| on the way
    back, cdf and icdf go through monotone transforms (flipped where the sign is negative)."""

    arg_constraints = {}

    def __init__(self, base_distribution, transforms, validate_args=None):
        if isinstance(transforms, transforms_module.Transform):
            self.transforms = [transforms]
        elif isinstance(transforms, list):
            if not all(isinstance(t, transforms_module.Transform) for t in transforms):
                raise ValueError("transforms must be a Transform or a list of Transforms")
            self.transforms = transforms
        else:
            raise ValueError(f"transforms must be a Transform or list, but was {transforms}")
        base_shape = tuple(base_distribution.batch_shape) + tuple(base_distribution.event_shape)
        base_event_dim = len(base_distribution.event_shape)
        transform = transforms_module.ComposeTransform(self.transforms)
        if len(base_shape) < transform.domain.event_dim:
            raise ValueError(f"base_distribution needs to have shape with size at least "
                             f"{transform.domain.event_dim}, but got {base_shape}.")
        forward_shape = tuple(transform.forward_shape(base_shape))
        expanded_base_shape = tuple(transform.inverse_shape(forward_shape))
        if base_shape != expanded_base_shape:
            base_batch_shape = expanded_base_shape[:len(expanded_base_shape) - base_event_dim]
            base_distribution = base_distribution.expand(base_batch_shape)
        reinterpreted_batch_ndims = transform.domain.event_dim - base_event_dim
        if reinterpreted_batch_ndims > 0:
            base_distribution = Independent(base_distribution, reinterpreted_batch_ndims)
        self.base_dist = base_distribution
        event_dim = transform.codomain.event_dim + max(base_event_dim -
                                                       transform.domain.event_dim, 0)
        cut = len(forward_shape) - event_dim
        super().__init__(forward_shape[:cut], forward_shape[cut:], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(TransformedDistribution, _instance)
        batch_shape = _dtypes.Size(batch_shape)
        shape = tuple(batch_shape) + tuple(self.event_shape)
        for t in reversed(self.transforms):
            shape = tuple(t.inverse_shape(shape))
        new.base_dist = self.base_dist.expand(shape[:len(shape) -
                                                    len(self.base_dist.event_shape)])
        new.transforms = self.transforms
        return self._finish_expand(new, TransformedDistribution, batch_shape, self.event_shape)

    @constraints.dependent_property(is_discrete=False)
    def support(self):
        if not self.transforms:
            return self.base_dist.support
        support = self.transforms[-1].codomain
        if len(self.event_shape) > support.event_dim:
            support = constraints.independent(support, len(self.event_shape) - support.event_dim)
        return support

    @property
    def has_rsample(self):
        return self.base_dist.has_rsample

    def sample(self, sample_shape=()):
        from . import _grad_mode  # noqa: PLC0415
        with _grad_mode.no_grad():
            x = self.base_dist.sample(sample_shape)
            for transform in self.transforms:
                x = transform(x)
            return x

    def rsample(self, sample_shape=()):
        x = self.base_dist.rsample(sample_shape)
        for transform in self.transforms:
            x = transform(x)
        return x

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        event_dim = len(self.event_shape)
        log_prob = 0.0
        y = value
        for transform in reversed(self.transforms):
            x = transform.inv(y)
            event_dim += transform.domain.event_dim - transform.codomain.event_dim
            log_prob = log_prob - _sum_rightmost(transform.log_abs_det_jacobian(x, y),
                                                 event_dim - transform.domain.event_dim)
            y = x
        return log_prob + _sum_rightmost(self.base_dist.log_prob(y),
                                         event_dim - len(self.base_dist.event_shape))

    def _monotonize_cdf(self, value):
        sign = 1
        for transform in self.transforms:
            sign = sign * transform.sign
        if isinstance(sign, int) and sign == 1:
            return value
        return sign * (value - 0.5) + 0.5

    def cdf(self, value):
        for transform in self.transforms[::-1]:
            value = transform.inv(value)
        if self._validate_args:
            self.base_dist._validate_sample(value)
        return self._monotonize_cdf(self.base_dist.cdf(value))

    def icdf(self, value):
        value = self.base_dist.icdf(self._monotonize_cdf(value))
        for transform in self.transforms:
            value = transform(value)
        return value


class _OwnExpand(TransformedDistribution):
    """A TransformedDistribution subclass whose parameters live in its base: expand keeps the
    subclass (torch's expand of HalfNormal, RelaxedBernoulli, …)."""

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(type(self), _instance)
        return super().expand(batch_shape, _instance=new)


class _Folded(_OwnExpand):
    """|X| for X of a distribution symmetric about 0 with a `scale` (HalfNormal, HalfCauchy):
    twice its density on [0, inf), its cdf and icdf folded, its entropy less log 2."""

    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    @property
    def scale(self):
        return self.base_dist.scale

    @property
    def mode(self):
        return _api().zeros_like(self.scale)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = _as_tensor(value, self.scale)
        log_prob = self.base_dist.log_prob(value) + math.log(2)
        return _api().where(value >= 0, log_prob, log_prob.new_full((), -math.inf))

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob):
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self):
        return self.base_dist.entropy() - math.log(2)


class HalfNormal(_Folded):
    """|X| for X ~ Normal(0, scale)."""

    def __init__(self, scale, validate_args=None):
        super().__init__(Normal(0, scale, validate_args=False),
                         transforms_module.AbsTransform(), validate_args=validate_args)

    @property
    def mean(self):
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def variance(self):
        return self.scale.pow(2) * (1 - 2 / math.pi)


class Cauchy(Distribution):
    """loc + scale * tan(pi (u - 1/2)): no mean or variance (nan, inf)."""

    _scalar_params = ("loc", "scale")
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = _broadcast(loc, scale)
        super().__init__(_batch_shape_of(loc, scale, self.loc), validate_args=validate_args)

    @property
    def mean(self):
        return self.loc.new_full(tuple(self._extended_shape()), math.nan)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return self.loc.new_full(tuple(self._extended_shape()), math.inf)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        eps = self.loc.new_empty(tuple(shape)).cauchy_()
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = _as_tensor(value, self.loc)
        return -math.log(math.pi) - self.scale.log() - \
            (((value - self.loc) / self.scale) ** 2).log1p()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = _as_tensor(value, self.loc)
        return ((value - self.loc) / self.scale).atan() / math.pi + 0.5

    def icdf(self, value):
        value = _as_tensor(value, self.loc)
        return (math.pi * (value - 0.5)).tan() * self.scale + self.loc

    def entropy(self):
        return math.log(4 * math.pi) + self.scale.log()


class HalfCauchy(_Folded):
    """|X| for X ~ Cauchy(0, scale)."""

    def __init__(self, scale, validate_args=None):
        super().__init__(Cauchy(0, scale, validate_args=False),
                         transforms_module.AbsTransform(), validate_args=validate_args)

    @property
    def mean(self):
        return self.scale.new_full(tuple(self._extended_shape()), math.inf)

    @property
    def variance(self):
        return self.base_dist.variance


class Gumbel(TransformedDistribution):
    """loc - scale log(-log u), u uniform in (tiny, 1 - eps)."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = _broadcast(loc, scale)
        finfo = _finfo(self.loc.dtype)
        if isinstance(loc, Number) and isinstance(scale, Number):
            base = Uniform(finfo.tiny, 1 - finfo.eps, validate_args=validate_args)
        else:
            base = Uniform(self.loc.new_full(tuple(self.loc.shape), finfo.tiny),
                           self.loc.new_full(tuple(self.loc.shape), 1 - finfo.eps),
                           validate_args=validate_args)
        exp_inv = transforms_module.ExpTransform().inv
        super().__init__(base, [exp_inv,
                                transforms_module.AffineTransform(
                                    loc=0, scale=-_api().ones_like(self.scale)),
                                exp_inv,
                                transforms_module.AffineTransform(loc=self.loc,
                                                                  scale=-self.scale)],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Gumbel, _instance)
        new.loc = self.loc.expand(tuple(batch_shape))
        new.scale = self.scale.expand(tuple(batch_shape))
        return super().expand(batch_shape, _instance=new)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (self.loc - value) / self.scale
        return (y - y.exp()) - self.scale.log()

    @property
    def mean(self):
        return self.loc + self.scale * _EULER_GAMMA

    @property
    def mode(self):
        return self.loc

    @property
    def stddev(self):
        return (math.pi / math.sqrt(6)) * self.scale

    @property
    def variance(self):
        return self.stddev.pow(2)

    def entropy(self):
        return self.scale.log() + (1 + _EULER_GAMMA)


class Weibull(TransformedDistribution):
    """scale * E ** (1 / concentration), E ~ Exponential(1)."""

    arg_constraints = {"scale": constraints.positive, "concentration": constraints.positive}
    support = constraints.positive

    def __init__(self, scale, concentration, validate_args=None):
        self.scale, self.concentration = _broadcast(scale, concentration)
        self.concentration_reciprocal = self.concentration.reciprocal()
        base = Exponential(_api().ones_like(self.scale), validate_args=validate_args)
        super().__init__(base, [transforms_module.PowerTransform(
            exponent=self.concentration_reciprocal),
            transforms_module.AffineTransform(loc=0, scale=self.scale)],
            validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Weibull, _instance)
        new.scale = self.scale.expand(tuple(batch_shape))
        new.concentration = self.concentration.expand(tuple(batch_shape))
        new.concentration_reciprocal = new.concentration.reciprocal()
        base_dist = self.base_dist.expand(batch_shape)
        new.transforms = [transforms_module.PowerTransform(exponent=new.concentration_reciprocal),
                          transforms_module.AffineTransform(loc=0, scale=new.scale)]
        Distribution.__init__(new, batch_shape, validate_args=False)
        new.base_dist = base_dist
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.scale * (1 + self.concentration_reciprocal).lgamma().exp()

    @property
    def mode(self):
        k = self.concentration
        return self.scale * ((k - 1) / k) ** k.reciprocal()

    @property
    def variance(self):
        r = self.concentration_reciprocal
        return self.scale.pow(2) * ((1 + 2 * r).lgamma().exp() -
                                    (1 + r).lgamma().exp().pow(2))

    def entropy(self):
        return _EULER_GAMMA * (1 - self.concentration_reciprocal) + \
            (self.scale * self.concentration_reciprocal).log() + 1


class Pareto(TransformedDistribution):
    """scale * exp(E), E ~ Exponential(alpha)."""

    arg_constraints = {"alpha": constraints.positive, "scale": constraints.positive}

    def __init__(self, scale, alpha, validate_args=None):
        self.scale, self.alpha = _broadcast(scale, alpha)
        base = Exponential(self.alpha, validate_args=validate_args)
        super().__init__(base, [transforms_module.ExpTransform(),
                                transforms_module.AffineTransform(loc=0, scale=self.scale)],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Pareto, _instance)
        new.scale = self.scale.expand(tuple(batch_shape))
        new.alpha = self.alpha.expand(tuple(batch_shape))
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        a = self.alpha.clamp(min=1)
        return a * self.scale / (a - 1)

    @property
    def mode(self):
        return self.scale

    @property
    def variance(self):
        a = self.alpha.clamp(min=2)
        return self.scale.pow(2) * a / ((a - 1).pow(2) * (a - 2))

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        return constraints.greater_than_eq(self.scale)

    def entropy(self):
        return (self.scale / self.alpha).log() + (1 + self.alpha.reciprocal())


class Chi2(Gamma):
    """Gamma(df / 2, 1 / 2)."""

    arg_constraints = {"df": constraints.positive}

    def __init__(self, df, validate_args=None):
        super().__init__(0.5 * df, 0.5, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Chi2, _instance)
        return super().expand(batch_shape, new)

    @property
    def df(self):
        return self.concentration * 2


class StudentT(Distribution):
    """loc + scale * X / sqrt(Z / df), X ~ Normal(0, 1), Z ~ Chi2(df)."""

    arg_constraints = {"df": constraints.positive, "loc": constraints.real,
                       "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, df, loc=0., scale=1., validate_args=None):
        self.df, self.loc, self.scale = _broadcast(df, loc, scale)
        self._chi2 = Chi2(self.df)
        super().__init__(self.df.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(StudentT, _instance)
        batch_shape = _dtypes.Size(batch_shape)
        new.df = self.df.expand(tuple(batch_shape))
        new.loc = self.loc.expand(tuple(batch_shape))
        new.scale = self.scale.expand(tuple(batch_shape))
        new._chi2 = self._chi2.expand(batch_shape)
        return self._finish_expand(new, StudentT, batch_shape)

    @property
    def mean(self):
        return _api().where(self.df <= 1, self.loc.new_full((), math.nan), self.loc)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        api = _api()
        df = self.df
        finite = self.scale.pow(2) * df / (df - 2)
        m = api.where(df > 2, finite, finite.new_full((), math.inf))
        return api.where(df <= 1, m.new_full((), math.nan), m)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        x = _draw("randn", shape, self.df)
        z = self._chi2.rsample(sample_shape)
        y = x * (self.df / z).sqrt()
        return self.loc + self.scale * y

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        z = self.scale.log() + 0.5 * self.df.log() + 0.5 * math.log(math.pi) + \
            (0.5 * self.df).lgamma() - (0.5 * (self.df + 1.)).lgamma()
        return -0.5 * (self.df + 1.) * (y.pow(2) / self.df).log1p() - z

    def entropy(self):
        lbeta = (0.5 * self.df).lgamma() + math.lgamma(0.5) - (0.5 * (self.df + 1)).lgamma()
        return self.scale.log() + 0.5 * (self.df + 1) * \
            ((0.5 * (self.df + 1)).digamma() - (0.5 * self.df).digamma()) + \
            0.5 * self.df.log() + lbeta


class _ProbsOrLogits:
    """The probs / logits pair of the binary-count families (Geometric, Binomial,
    NegativeBinomial): one given, the other lazily made from it."""

    def _take_probs_or_logits(self, probs, logits, *others):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        given = probs if probs is not None else logits
        values = _broadcast(*others, given)
        name = "probs" if probs is not None else "logits"
        setattr(self, name, values[-1])
        self._param = values[-1]
        return values[:-1], isinstance(given, Number)

    @lazy_property
    def logits(self):
        return _probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return _logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self):
        return self._param.size()

    def _expand_probs_or_logits(self, cls, batch_shape, _instance, names=()):
        new, batch_shape = self._expand_params(
            cls, batch_shape, {name: () for name in ("probs", "logits") + tuple(names)},
            _instance)
        new._param = new.__dict__.get("logits", new.__dict__.get("probs"))
        return new, batch_shape


class Geometric(_ProbsOrLogits, Distribution):
    """The number of failures before the first success of Bernoulli(probs) trials."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs=None, logits=None, validate_args=None):
        _, is_scalar = self._take_probs_or_logits(probs, logits)
        super().__init__(() if is_scalar else self._param.size(), validate_args=validate_args)
        if self._validate_args and probs is not None:
            valid = self.probs > 0
            if not bool(valid.all()):
                raise ValueError(
                    f"Expected parameter probs ({type(self.probs).__name__} of shape "
                    f"{tuple(self.probs.shape)}) of distribution {repr(self)} to be positive but "
                    f"found invalid values:\n{self.probs.masked_select(~valid)}")

    def expand(self, batch_shape, _instance=None):
        new, batch_shape = self._expand_probs_or_logits(Geometric, batch_shape, _instance)
        return self._finish_expand(new, Geometric, batch_shape)

    @property
    def mean(self):
        return 1. / self.probs - 1.

    @property
    def mode(self):
        return _api().zeros_like(self.probs)

    @property
    def variance(self):
        return (1. / self.probs - 1.) / self.probs

    def sample(self, sample_shape=()):
        from . import _grad_mode  # noqa: PLC0415
        shape = self._extended_shape(sample_shape)
        tiny = _finfo(self.probs.dtype).tiny
        with _grad_mode.no_grad():
            u = self.probs.new_empty(tuple(shape)).uniform_(tiny, 1)
            return (u.log() / (-self.probs).log1p()).floor()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value, probs = _broadcast(value, self.probs)
        probs = _api().where((probs == 1) & (value == 0), probs.new_zeros(()), probs)
        return value * (-probs).log1p() + self.probs.log()

    def entropy(self):
        from .nn import functional as F  # noqa: PLC0415
        return F.binary_cross_entropy_with_logits(self.logits, self.probs,
                                                  reduction="none") / self.probs


def _clamp_by_zero(x):
    return (x.clamp(min=0) + x - x.clamp(max=0)) / 2


class Binomial(_ProbsOrLogits, Distribution):
    """The number of successes of total_count Bernoulli(probs) trials."""

    arg_constraints = {"total_count": constraints.nonnegative_integer,
                       "probs": constraints.unit_interval, "logits": constraints.real}
    has_enumerate_support = True

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        (self.total_count,), _ = self._take_probs_or_logits(probs, logits, total_count)
        self.total_count = self.total_count.type_as(self._param)
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new, batch_shape = self._expand_probs_or_logits(Binomial, batch_shape, _instance,
                                                        ("total_count",))
        return self._finish_expand(new, Binomial, batch_shape)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self):
        return self.total_count * self.probs

    @property
    def mode(self):
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        return _api().binomial(self.total_count.expand(shape), self.probs.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        n = self.total_count
        log_factorial_n = (n + 1).lgamma()
        log_factorial_k = (value + 1).lgamma()
        log_factorial_nmk = (n - value + 1).lgamma()
        normalize_term = (n * _clamp_by_zero(self.logits) +
                          n * (-self.logits.abs()).exp().log1p() - log_factorial_n)
        return value * self.logits - log_factorial_k - log_factorial_nmk - normalize_term

    def _homogeneous_count(self, what):
        total = int(self.total_count.max().item())
        if not int(self.total_count.min().item()) == total:
            raise NotImplementedError(f"Inhomogeneous total count not supported by `{what}`.")
        return total

    def entropy(self):
        self._homogeneous_count("entropy")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(log_prob.exp() * log_prob).sum(0)

    def enumerate_support(self, expand=True):
        total = self._homogeneous_count("enumerate_support")
        values = _api().arange(1 + total, dtype=self._param.dtype, device=self._param.device,
                               session=self._param._session)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + tuple(self._batch_shape)) if expand else values


class NegativeBinomial(_ProbsOrLogits, Distribution):
    """The number of successes before total_count failures of Bernoulli(probs) trials; draws
    are Poisson draws of Gamma(total_count, (1 - p) / p) rates."""

    arg_constraints = {"total_count": constraints.greater_than_eq(0),
                       "probs": constraints.half_open_interval(0., 1.),
                       "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, total_count, probs=None, logits=None, validate_args=None):
        (self.total_count,), _ = self._take_probs_or_logits(probs, logits, total_count)
        self.total_count = self.total_count.type_as(self._param)
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new, batch_shape = self._expand_probs_or_logits(NegativeBinomial, batch_shape,
                                                        _instance, ("total_count",))
        return self._finish_expand(new, NegativeBinomial, batch_shape)

    @property
    def mean(self):
        return self.total_count * self.logits.exp()

    @property
    def mode(self):
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.)

    @property
    def variance(self):
        return self.mean / (-self.logits).sigmoid()

    def sample(self, sample_shape=()):
        from . import _grad_mode  # noqa: PLC0415
        with _grad_mode.no_grad():
            rate = Gamma(self.total_count, (-self.logits).exp(),
                         validate_args=False).sample(sample_shape)
            return _api().poisson(rate)

    def log_prob(self, value):
        from .nn import functional as F  # noqa: PLC0415
        if self._validate_args:
            self._validate_sample(value)
        log_unnormalized = self.total_count * F.logsigmoid(-self.logits) + \
            value * F.logsigmoid(self.logits)
        log_normalization = -(self.total_count + value).lgamma() + (1. + value).lgamma() + \
            self.total_count.lgamma()
        log_normalization = log_normalization.masked_fill(self.total_count + value == 0., 0.)
        return log_unnormalized - log_normalization


class OneHotCategorical(Distribution):
    """Categorical draws as one-hot vectors."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.one_hot
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        self._categorical = Categorical(probs, logits)
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(OneHotCategorical, _instance)
        batch_shape = _dtypes.Size(batch_shape)
        new._categorical = self._categorical.expand(batch_shape)
        return self._finish_expand(new, OneHotCategorical, batch_shape, self.event_shape)

    @property
    def _param(self):
        return self._categorical._param

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def mean(self):
        return self._categorical.probs

    @property
    def mode(self):
        from .nn import functional as F  # noqa: PLC0415
        probs = self._categorical.probs
        return F.one_hot(probs.argmax(-1), probs.shape[-1]).to(probs.dtype)

    @property
    def variance(self):
        return self._categorical.probs * (1 - self._categorical.probs)

    @property
    def param_shape(self):
        return self._categorical.param_shape

    def sample(self, sample_shape=()):
        from .nn import functional as F  # noqa: PLC0415
        probs = self._categorical.probs
        indices = self._categorical.sample(sample_shape)
        return F.one_hot(indices, probs.shape[-1]).to(probs.dtype)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self._categorical.log_prob(value.max(-1)[1])

    def entropy(self):
        return self._categorical.entropy()

    def enumerate_support(self, expand=True):
        n = self.event_shape[0]
        values = _api().eye(n, dtype=self._param.dtype, device=self._param.device,
                            session=self._param._session)
        values = values.view((n,) + (1,) * len(self.batch_shape) + (n,))
        if expand:
            values = values.expand((n,) + tuple(self.batch_shape) + (n,))
        return values


class _Relaxed(_OwnExpand):
    """A relaxed draw (RelaxedBernoulli, RelaxedOneHotCategorical): its base's temperature,
    logits and probs."""

    @property
    def temperature(self):
        return self.base_dist.temperature

    @property
    def logits(self):
        return self.base_dist.logits

    @property
    def probs(self):
        return self.base_dist.probs


class LogitRelaxedBernoulli(_ProbsOrLogits, Distribution):
    """The logit of a RelaxedBernoulli draw: (logit(u) + logits) / temperature."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.real

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        self.temperature = temperature
        _, is_scalar = self._take_probs_or_logits(probs, logits)
        super().__init__(() if is_scalar else self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new, batch_shape = self._expand_probs_or_logits(LogitRelaxedBernoulli, batch_shape,
                                                        _instance)
        new.temperature = self.temperature
        return self._finish_expand(new, LogitRelaxedBernoulli, batch_shape)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        probs = _clamp_probs(self.probs.expand(tuple(shape)))
        uniforms = _clamp_probs(_draw("rand", shape, probs))
        return (uniforms.log() - (-uniforms).log1p() + probs.log() - (-probs).log1p()) / \
            self.temperature

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = _broadcast(self.logits, value)
        diff = logits - value * self.temperature
        return _as_tensor(self.temperature, diff).log() + diff - 2 * diff.exp().log1p()


class RelaxedBernoulli(_Relaxed):
    """sigmoid of a LogitRelaxedBernoulli draw: a reparameterizable relaxation of Bernoulli."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        base = LogitRelaxedBernoulli(temperature, probs, logits)
        super().__init__(base, transforms_module.SigmoidTransform(),
                         validate_args=validate_args)


class ExpRelaxedCategorical(Distribution):
    """The log of a RelaxedOneHotCategorical draw: log_softmax((logits + gumbels) /
    temperature)."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        self._categorical = Categorical(probs, logits)
        self.temperature = temperature
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(ExpRelaxedCategorical, _instance)
        batch_shape = _dtypes.Size(batch_shape)
        new.temperature = self.temperature
        new._categorical = self._categorical.expand(batch_shape)
        return self._finish_expand(new, ExpRelaxedCategorical, batch_shape, self.event_shape)

    @property
    def param_shape(self):
        return self._categorical.param_shape

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def probs(self):
        return self._categorical.probs

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        uniforms = _clamp_probs(_draw("rand", shape, self.logits))
        gumbels = -((-(uniforms.log())).log())
        scores = (self.logits + gumbels) / self.temperature
        return scores - scores.logsumexp(dim=-1, keepdim=True)

    def log_prob(self, value):
        k = self._categorical._num_events
        if self._validate_args:
            self._validate_sample(value)
        logits, value = _broadcast(self.logits, value)
        temperature = _as_tensor(self.temperature, logits)
        log_scale = temperature.new_full(tuple(temperature.shape), float(k)).lgamma() - \
            temperature.log().mul(-(k - 1))
        score = logits - value.mul(temperature)
        score = (score - score.logsumexp(dim=-1, keepdim=True)).sum(-1)
        return score + log_scale


class RelaxedOneHotCategorical(_Relaxed):
    """exp of an ExpRelaxedCategorical draw (the Gumbel-softmax / Concrete distribution)."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        base = ExpRelaxedCategorical(temperature, probs, logits, validate_args=validate_args)
        super().__init__(base, transforms_module.ExpTransform(), validate_args=validate_args)


class MixtureSameFamily(Distribution):
    """A Categorical mixture of the batch of one component distribution (its rightmost batch
    dim indexes the components)."""

    arg_constraints = {}
    has_rsample = False

    def __init__(self, mixture_distribution, component_distribution, validate_args=None):
        self._mixture_distribution = mixture_distribution
        self._component_distribution = component_distribution
        if not isinstance(mixture_distribution, Categorical):
            raise ValueError(" The Mixture distribution needs to be an  instance of "
                             "torch.distribtutions.Categorical")  # (torch's words)
        if not isinstance(component_distribution, Distribution):
            raise ValueError("The Component distribution need to be an instance of "
                             "torch.distributions.Distribution")
        mdbs = _dtypes.Size(mixture_distribution.batch_shape)
        cdbs = _dtypes.Size(tuple(component_distribution.batch_shape)[:-1])
        for size1, size2 in zip(reversed(mdbs), reversed(cdbs)):
            if size1 != 1 and size2 != 1 and size1 != size2:
                raise ValueError(f"`mixture_distribution.batch_shape` ({mdbs}) is not compatible "
                                 f"with `component_distribution.batch_shape`({cdbs})")
        km = mixture_distribution.logits.shape[-1]
        kc = component_distribution.batch_shape[-1]
        if km is not None and kc is not None and km != kc:
            raise ValueError(f"`mixture_distribution component` ({km}) does not equal "
                             f"`component_distribution.batch_shape[-1]` ({kc})")
        self._num_component = km
        event_shape = self._component_distribution.event_shape
        self._event_ndims = len(event_shape)
        super().__init__(tuple(cdbs), event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        batch_shape = _dtypes.Size(batch_shape)
        new = self._get_checked_instance(MixtureSameFamily, _instance)
        new._component_distribution = self._component_distribution.expand(
            tuple(batch_shape) + (self._num_component,))
        new._mixture_distribution = self._mixture_distribution.expand(batch_shape)
        new._num_component = self._num_component
        new._event_ndims = self._event_ndims
        return self._finish_expand(new, MixtureSameFamily, batch_shape,
                                   new._component_distribution.event_shape)

    @constraints.dependent_property
    def support(self):
        return self._component_distribution.support

    @property
    def mixture_distribution(self):
        return self._mixture_distribution

    @property
    def component_distribution(self):
        return self._component_distribution

    def _pad(self, x):
        return x.unsqueeze(-1 - self._event_ndims)

    def _pad_mixture_dimensions(self, x):
        dist_batch_ndims = len(self.batch_shape)
        cat_batch_ndims = len(self.mixture_distribution.batch_shape)
        pad_ndims = 0 if cat_batch_ndims == 1 else dist_batch_ndims - cat_batch_ndims
        xs = tuple(x.shape)
        return x.reshape(xs[:-1] + (pad_ndims * (1,)) + xs[-1:] + (self._event_ndims * (1,)))

    @property
    def mean(self):
        probs = self._pad_mixture_dimensions(self.mixture_distribution.probs)
        return (probs * self.component_distribution.mean).sum(-1 - self._event_ndims)

    @property
    def variance(self):
        probs = self._pad_mixture_dimensions(self.mixture_distribution.probs)
        mean_cond_var = (probs * self.component_distribution.variance).sum(
            -1 - self._event_ndims)
        var_cond_mean = (probs * (self.component_distribution.mean -
                                  self._pad(self.mean)).pow(2.0)).sum(-1 - self._event_ndims)
        return mean_cond_var + var_cond_mean

    def cdf(self, x):
        x = self._pad(x)
        cdf_x = self.component_distribution.cdf(x)
        return (cdf_x * self.mixture_distribution.probs).sum(-1)

    def log_prob(self, x):
        if self._validate_args:
            self._validate_sample(x)
        x = self._pad(x)
        log_prob_x = self.component_distribution.log_prob(x)
        log_mix_prob = self.mixture_distribution.logits.log_softmax(-1)
        return (log_prob_x + log_mix_prob).logsumexp(-1)

    def sample(self, sample_shape=()):
        from . import _grad_mode  # noqa: PLC0415
        with _grad_mode.no_grad():
            sample_len = len(sample_shape)
            batch_len = len(self.batch_shape)
            gather_dim = sample_len + batch_len
            es = tuple(self.event_shape)
            mix_sample = self.mixture_distribution.sample(sample_shape)
            mix_shape = tuple(mix_sample.shape)
            comp_samples = self.component_distribution.sample(sample_shape)
            mix_sample_r = mix_sample.reshape(mix_shape + (1,) * (len(es) + 1))
            mix_sample_r = mix_sample_r.repeat((1,) * len(mix_shape) + (1,) + es)
            samples = comp_samples.gather(gather_dim, mix_sample_r)
            return samples.squeeze(gather_dim)

    def __repr__(self):
        args_string = "\n  {},\n  {}".format(self.mixture_distribution,
                                              self.component_distribution)
        return "MixtureSameFamily" + "(" + args_string + ")"


class FisherSnedecor(Distribution):
    """(X1 / df1) / (X2 / df2) for X1 ~ Chi2(df1), X2 ~ Chi2(df2): Gamma draws."""

    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, df1, df2, validate_args=None):
        self.df1, self.df2 = _broadcast(df1, df2)
        self._gamma1 = Gamma(self.df1 * 0.5, self.df1)
        self._gamma2 = Gamma(self.df2 * 0.5, self.df2)
        super().__init__(_batch_shape_of(df1, df2, self.df1), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(FisherSnedecor, _instance)
        batch_shape = _dtypes.Size(batch_shape)
        new.df1 = self.df1.expand(tuple(batch_shape))
        new.df2 = self.df2.expand(tuple(batch_shape))
        new._gamma1 = self._gamma1.expand(batch_shape)
        new._gamma2 = self._gamma2.expand(batch_shape)
        return self._finish_expand(new, FisherSnedecor, batch_shape)

    @property
    def mean(self):
        df2 = _fill_where(self.df2 <= 2, math.nan, self.df2)
        return df2 / (df2 - 2)

    @property
    def mode(self):
        mode = (self.df1 - 2) / self.df1 * self.df2 / (self.df2 + 2)
        return _fill_where(self.df1 <= 2, math.nan, mode)

    @property
    def variance(self):
        df2 = _fill_where(self.df2 <= 4, math.nan, self.df2)
        return 2 * df2.pow(2) * (self.df1 + df2 - 2) / \
            (self.df1 * (df2 - 2).pow(2) * (df2 - 4))

    def rsample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        x1 = self._gamma1.rsample(sample_shape).reshape(shape)
        x2 = self._gamma2.rsample(sample_shape).reshape(shape)
        tiny = _finfo(x2.dtype).tiny
        return (x1 / x2.clamp(min=tiny)).clamp(min=tiny)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        half1, half2 = self.df1 * 0.5, self.df2 * 0.5
        ratio = self.df1 / self.df2
        norm = (half1 + half2).lgamma() - half1.lgamma() - half2.lgamma()
        return norm + half1 * ratio.log() + (half1 - 1) * value.log() - \
            (half1 + half2) * (ratio * value).log1p()


class Kumaraswamy(TransformedDistribution):
    """(1 - u ** (1 / concentration0)) ** (1 / concentration1), u uniform."""

    arg_constraints = {"concentration1": constraints.positive,
                       "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        self.concentration1, self.concentration0 = _broadcast(concentration1, concentration0)
        api = _api()
        base = Uniform(api.zeros_like(self.concentration0), api.ones_like(self.concentration0),
                       validate_args=validate_args)
        super().__init__(base, [
            transforms_module.PowerTransform(exponent=self.concentration0.reciprocal()),
            transforms_module.AffineTransform(loc=1., scale=-1.),
            transforms_module.PowerTransform(exponent=self.concentration1.reciprocal())],
            validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Kumaraswamy, _instance)
        new.concentration1 = self.concentration1.expand(tuple(batch_shape))
        new.concentration0 = self.concentration0.expand(tuple(batch_shape))
        return super().expand(batch_shape, _instance=new)

    def _moment(self, n):
        a, b = self.concentration1, self.concentration0
        return b * ((1 + n / a).lgamma() + b.lgamma() - (1 + n / a + b).lgamma()).exp()

    @property
    def mean(self):
        return self._moment(1)

    @property
    def mode(self):
        a, b = self.concentration1, self.concentration0
        log_mode = b.reciprocal() * (-b).log1p() - (-b * a).log1p()  # torch 1.13's formula
        return _fill_where((b < 1) | (a < 1), math.nan, log_mode).exp()

    @property
    def variance(self):
        return self._moment(2) - self.mean.pow(2)

    def entropy(self):
        a, b = self.concentration1, self.concentration0
        harmonic = (b + 1).digamma() + _EULER_GAMMA
        return (1 - b.reciprocal()) + (1 - a.reciprocal()) * harmonic - a.log() - b.log()


def _capacitance_tril(W, D):
    """The Cholesky factor of I + W^T D^-1 W (the small m x m matrix of the Woodbury identity)."""
    m = W.size(-1)
    K = (W.mT / D.unsqueeze(-2)) @ W
    eye = _api().eye(m, dtype=K.dtype, device=K.device, session=K._session)
    from . import linalg  # noqa: PLC0415
    return linalg.cholesky(K + eye)


def _lowrank_logdet(W, D, capacitance_tril):
    """log det(W W^T + D) = log det C + log det D."""
    return 2 * capacitance_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1) + D.log().sum(-1)


def _lowrank_mahalanobis(W, D, x, capacitance_tril):
    """x^T (W W^T + D)^-1 x by Woodbury: x^T D^-1 x - |C^-1/2 W^T D^-1 x|^2."""
    wt_dinv_x = ((W.mT / D.unsqueeze(-2)) @ x.unsqueeze(-1)).squeeze(-1)
    return (x.pow(2) / D).sum(-1) - _batch_mahalanobis(capacitance_tril, wt_dinv_x)


class LowRankMultivariateNormal(Distribution):
    """A multivariate normal of covariance cov_factor cov_factor^T + diag(cov_diag): its
    determinant and inverse through the m x m capacitance matrix."""

    arg_constraints = {"loc": constraints.real_vector,
                       "cov_factor": constraints.independent(constraints.real, 2),
                       "cov_diag": constraints.independent(constraints.positive, 1)}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, cov_factor, cov_diag, validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        event_shape = tuple(loc.shape[-1:])
        if cov_factor.dim() < 2:
            raise ValueError("cov_factor must be at least two-dimensional, with optional "
                             "leading batch dimensions")
        if tuple(cov_factor.shape[-2:-1]) != event_shape:
            raise ValueError(f"cov_factor must be a batch of matrices with shape "
                             f"{event_shape[0]} x m")
        if tuple(cov_diag.shape[-1:]) != event_shape:
            raise ValueError(f"cov_diag must be a batch of vectors with shape "
                             f"{_dtypes.Size(event_shape)}")
        try:
            loc_, self.cov_factor, diag_ = _api().broadcast_tensors(
                loc.unsqueeze(-1), cov_factor, cov_diag.unsqueeze(-1))
        except RuntimeError as e:
            raise ValueError(f"Incompatible batch shapes: loc {loc.shape}, cov_factor "
                             f"{cov_factor.shape}, cov_diag {cov_diag.shape}") from e
        self.loc = loc_[..., 0]
        self.cov_diag = diag_[..., 0]
        self._unbroadcasted_cov_factor = cov_factor
        self._unbroadcasted_cov_diag = cov_diag
        self._capacitance_tril = _capacitance_tril(cov_factor, cov_diag)
        super().__init__(tuple(self.loc.shape[:-1]), event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LowRankMultivariateNormal, _instance)
        batch_shape = _dtypes.Size(batch_shape)
        loc_shape = tuple(batch_shape) + tuple(self.event_shape)
        new.loc = self.loc.expand(loc_shape)
        new.cov_diag = self.cov_diag.expand(loc_shape)
        new.cov_factor = self.cov_factor.expand(loc_shape + tuple(self.cov_factor.shape[-1:]))
        new._unbroadcasted_cov_factor = self._unbroadcasted_cov_factor
        new._unbroadcasted_cov_diag = self._unbroadcasted_cov_diag
        new._capacitance_tril = self._capacitance_tril
        return self._finish_expand(new, LowRankMultivariateNormal, batch_shape,
                                   self.event_shape)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    def _full(self, t, matrix=False):
        shape = tuple(self._batch_shape) + tuple(self._event_shape)
        return t.expand(shape + (tuple(self._event_shape) if matrix else ()))

    @lazy_property
    def variance(self):
        return self._full(self._unbroadcasted_cov_factor.pow(2).sum(-1) +
                          self._unbroadcasted_cov_diag)

    @lazy_property
    def scale_tril(self):
        from . import linalg  # noqa: PLC0415
        n = self._event_shape[0]
        d_sqrt = self._unbroadcasted_cov_diag.sqrt().unsqueeze(-1)
        w = self._unbroadcasted_cov_factor / d_sqrt
        eye = _api().eye(n, dtype=w.dtype, device=w.device, session=w._session)
        return self._full(d_sqrt * linalg.cholesky(w @ w.mT + eye), matrix=True)

    @lazy_property
    def covariance_matrix(self):
        W = self._unbroadcasted_cov_factor
        return self._full(W @ W.mT + _api().diag_embed(self._unbroadcasted_cov_diag),
                          matrix=True)

    @lazy_property
    def precision_matrix(self):
        from . import linalg  # noqa: PLC0415
        wt_dinv = self._unbroadcasted_cov_factor.mT / self._unbroadcasted_cov_diag.unsqueeze(-2)
        A = linalg.solve_triangular(self._capacitance_tril, wt_dinv, upper=False)
        return self._full(_api().diag_embed(self._unbroadcasted_cov_diag.reciprocal()) -
                          A.mT @ A, matrix=True)

    def rsample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        eps_w = _draw("randn", shape[:-1] + tuple(self.cov_factor.shape[-1:]), self.loc)
        eps_d = _draw("randn", shape, self.loc)
        return self.loc + (self._unbroadcasted_cov_factor @ eps_w.unsqueeze(-1)).squeeze(-1) + \
            self._unbroadcasted_cov_diag.sqrt() * eps_d

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        mahalanobis = _lowrank_mahalanobis(W, D, value - self.loc, self._capacitance_tril)
        log_det = _lowrank_logdet(W, D, self._capacitance_tril)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + log_det + mahalanobis)

    def entropy(self):
        log_det = _lowrank_logdet(self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag,
                                  self._capacitance_tril)
        h = 0.5 * (self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + log_det)
        return h if len(self._batch_shape) == 0 else h.expand(tuple(self._batch_shape))


class VonMises(Distribution):
    """The circular normal on [-pi, pi): density exp(k cos(x - loc)) / (2 pi I0(k)); draws by
    Best and Fisher's rejection sampler (1979), repeated until every element is accepted."""

    _scalar_params = ("loc", "concentration")
    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real  # (torch 1.13's, though draws lie in [-pi, pi))
    has_rsample = False

    def __init__(self, loc, concentration, validate_args=None):
        self.loc, self.concentration = _broadcast(loc, concentration)
        kappa = self.concentration
        tau = 1 + (1 + 4 * kappa ** 2).sqrt()
        rho = (tau - (2 * tau).sqrt()) / (2 * kappa)
        self._proposal_r = (1 + rho ** 2) / (2 * rho)
        super().__init__(tuple(self.loc.shape), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        validate_args = self.__dict__.get("_validate_args")
        return type(self)(self.loc.expand(tuple(batch_shape)),
                          self.concentration.expand(tuple(batch_shape)),
                          validate_args=validate_args)

    def _log_bessel(self, order):
        """log I_order(concentration), through the exponentially scaled i0e / i1e."""
        from . import special  # noqa: PLC0415
        k = self.concentration
        return (special.i0e(k) if order == 0 else special.i1e(k)).log() + k

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        return 1 - (self._log_bessel(1) - self._log_bessel(0)).exp()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self.concentration * (value - self.loc).cos() - math.log(2 * math.pi) - \
            self._log_bessel(0)

    def sample(self, sample_shape=()):
        from . import _grad_mode  # noqa: PLC0415
        api = _api()
        with _grad_mode.no_grad():
            shape = tuple(self._extended_shape(sample_shape))
            x = self.loc.new_zeros(shape)
            done = x.new_zeros(shape, dtype=_dtypes.bool_)
            r, kappa = self._proposal_r, self.concentration
            while not bool(done.all()):
                u1, u2, u3 = _draw("rand", (3,) + shape, self.loc).unbind()
                z = (math.pi * u1).cos()
                f = (1 + r * z) / (r + z)
                c = kappa * (r - f)
                accept = ((c * (2 - c) - u2) > 0) | ((c / u2).log() + 1 - c >= 0)
                x = api.where(accept & ~done, (u3 - 0.5).sign() * f.acos(), x)
                done = done | accept
            return (x + math.pi + self.loc) % (2 * math.pi) - math.pi


class ContinuousBernoulli(_ProbsOrLogits, ExponentialFamily):
    """Density C(p) p^x (1 - p)^(1 - x) on [0, 1] (Loaiza-Ganem and Cunningham, 2019), whose
    normalizer and moments near p = 1/2 (inside `lims`) take their Taylor series."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, probs=None, logits=None, lims=(0.499, 0.501), validate_args=None):
        _, is_scalar = self._take_probs_or_logits(probs, logits)
        if probs is not None:
            if validate_args is not None and \
                    not bool(self.arg_constraints["probs"].check(self.probs).all()):
                raise ValueError("The parameter probs has invalid values")
            self.probs = _clamp_probs(self.probs)
            self._param = self.probs
        self._lims = lims
        super().__init__(() if is_scalar else self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new, batch_shape = self._expand_probs_or_logits(ContinuousBernoulli, batch_shape,
                                                        _instance)
        new._lims = self._lims
        return self._finish_expand(new, ContinuousBernoulli, batch_shape)

    @lazy_property
    def probs(self):
        return _clamp_probs(_logits_to_probs(self.logits, is_binary=True))

    def _stable(self):
        """Where probs lies outside lims (the closed forms are exact enough there)."""
        return (self.probs <= self._lims[0]) | (self.probs > self._lims[1])

    def _cut_probs(self):
        return _api().where(self._stable(), self.probs,
                            self.probs.new_full((), self._lims[0]))

    def _log_norm(self):
        api = _api()
        p = self._cut_probs()
        below = api.where(p <= 0.5, p, api.zeros_like(p))
        above = api.where(p >= 0.5, p, api.ones_like(p))
        closed = ((-p).log1p() - p.log()).abs().log() - api.where(
            p <= 0.5, (-2.0 * below).log1p(), (2.0 * above - 1.0).log())
        x = (self.probs - 0.5).pow(2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return api.where(self._stable(), closed, taylor)

    @property
    def mean(self):
        p = self._cut_probs()
        closed = p / (2.0 * p - 1.0) + 1.0 / ((-p).log1p() - p.log())
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * x.pow(2)) * x
        return _api().where(self._stable(), closed, taylor)

    @property
    def variance(self):
        p = self._cut_probs()
        closed = p * (p - 1.0) / (1.0 - 2.0 * p).pow(2) + \
            1.0 / ((-p).log1p() - p.log()).pow(2)
        x = (self.probs - 0.5).pow(2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128. / 945.0 * x) * x
        return _api().where(self._stable(), closed, taylor)

    def rsample(self, sample_shape=()):
        return self.icdf(_draw("rand", self._extended_shape(sample_shape), self.probs))

    def sample(self, sample_shape=()):
        from . import _grad_mode  # noqa: PLC0415
        u = _draw("rand", self._extended_shape(sample_shape), self.probs)
        with _grad_mode.no_grad():
            return self.icdf(u)

    def log_prob(self, value):
        from .nn import functional as F  # noqa: PLC0415
        if self._validate_args:
            self._validate_sample(value)
        logits, value = _broadcast(self.logits, value)
        return -F.binary_cross_entropy_with_logits(logits, value, reduction="none") + \
            self._log_norm()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        api = _api()
        p = self._cut_probs()
        closed = (p.pow(value) * (1.0 - p).pow(1.0 - value) + p - 1.0) / (2.0 * p - 1.0)
        inner = api.where(self._stable(), closed, value)
        return api.where(value <= 0.0, api.zeros_like(value),
                         api.where(value >= 1.0, api.ones_like(value), inner))

    def icdf(self, value):
        p = self._cut_probs()
        closed = ((-p + value * (2.0 * p - 1.0)).log1p() - (-p).log1p()) / \
            (p.log() - (-p).log1p())
        return _api().where(self._stable(), closed, value)

    def entropy(self):
        log_q, log_p = (-self.probs).log1p(), self.probs.log()
        return self.mean * (log_q - log_p) - self._log_norm() - log_q


class LKJCholesky(Distribution):
    """Cholesky factors of correlation matrices with density proportional to det(C)^(eta - 1)
    (Lewandowski, Kurowicka and Joe, 2009); draws by the onion method: each row a Beta-drawn
    length on the unit sphere, the diagonal what keeps the row's norm 1."""

    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim, concentration=1., validate_args=None):
        if dim < 2:
            raise ValueError(f"Expected dim to be an integer greater than or equal to 2. Found "
                             f"dim={dim}.")
        self.dim = dim
        (self.concentration,) = _broadcast(concentration)
        marginal = self.concentration + 0.5 * (dim - 2)
        api = _api()
        offset = api.arange(dim - 1, dtype=self.concentration.dtype,
                            device=self.concentration.device, session=self.concentration._session)
        offset = api.cat([offset.new_zeros((1,)), offset])
        self._beta = Beta(offset + 0.5, marginal.unsqueeze(-1) - 0.5 * offset)
        super().__init__(tuple(self.concentration.shape), (dim, dim),
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LKJCholesky, _instance)
        batch_shape = _dtypes.Size(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(tuple(batch_shape))
        new._beta = self._beta.expand(tuple(batch_shape) + (self.dim,))
        return self._finish_expand(new, LKJCholesky, batch_shape, self.event_shape)

    def sample(self, sample_shape=()):
        api = _api()
        y = self._beta.sample(sample_shape).unsqueeze(-1)
        normal = _draw("randn", self._extended_shape(sample_shape), y).tril(-1)
        first_row = api.arange(self.dim, device=y.device, session=y._session).unsqueeze(-1) == 0
        sphere = api.where(first_row, normal.new_zeros(()),
                           normal / normal.norm(dim=-1, keepdim=True))
        w = y.sqrt() * sphere
        tiny = _finfo(w.dtype).tiny
        diag = (1 - (w ** 2).sum(-1)).clamp(min=tiny).sqrt()
        return w + api.diag_embed(diag)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        api = _api()
        diag = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = api.arange(2, self.dim + 1, device=self.concentration.device,
                           session=self.concentration._session)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized = (order * diag.log()).sum(-1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        normalizer = 0.5 * dm1 * math.log(math.pi) + (alpha - 0.5).mvlgamma(dm1) - \
            alpha.lgamma() * dm1
        return unnormalized - normalizer


# ---- KL divergence -------------------------------------------------------------------------------

_KL_REGISTRY = {}  # (type_p, type_q) -> function, as registered.
_KL_MEMOIZE = {}  # the dispatch for each concrete pair met so far.


def register_kl(type_p, type_q):
    """Decorator registering a pairwise function with kl_divergence (torch's register_kl)."""
    if not isinstance(type_p, type) and issubclass(type_p, Distribution):
        raise TypeError("Expected type_p to be a Distribution subclass but got {}".format(type_p))
    if not isinstance(type_q, type) and issubclass(type_q, Distribution):
        raise TypeError("Expected type_q to be a Distribution subclass but got {}".format(type_q))

    def decorator(fun):
        _KL_REGISTRY[type_p, type_q] = fun
        _KL_MEMOIZE.clear()  # reset since lookup order may have changed
        return fun
    return decorator


class _Match:
    __slots__ = ["types"]

    def __init__(self, *types):
        self.types = types

    def __eq__(self, other):
        return self.types == other.types

    def __le__(self, other):
        for x, y in zip(self.types, other.types):
            if not issubclass(x, y):
                return False
            if x is not y:
                break
        return True

    def __lt__(self, other):
        return self <= other and self != other

    def __gt__(self, other):
        return not self <= other

    def __ge__(self, other):
        return not self < other


def _dispatch_kl(type_p, type_q):
    """The most specific registered pair, as torch's (warning when the two orders disagree)."""
    matches = [(super_p, super_q) for super_p, super_q in _KL_REGISTRY
               if issubclass(type_p, super_p) and issubclass(type_q, super_q)]
    if not matches:
        return NotImplemented
    left_p, left_q = min(_Match(*m) for m in matches).types
    right_q, right_p = min(_Match(*reversed(m)) for m in matches).types
    left_fun = _KL_REGISTRY[left_p, left_q]
    right_fun = _KL_REGISTRY[right_p, right_q]
    if left_fun is not right_fun:
        warnings.warn("Ambiguous kl_divergence({}, {}). Please register_kl({}, {})".format(
            type_p.__name__, type_q.__name__, left_p.__name__, right_q.__name__), RuntimeWarning)
    return left_fun


def kl_divergence(p, q):
    """KL(p || q), batched over the batch shape (torch.distributions.kl_divergence)."""
    try:
        fun = _KL_MEMOIZE[type(p), type(q)]
    except KeyError:
        fun = _dispatch_kl(type(p), type(q))
        _KL_MEMOIZE[type(p), type(q)] = fun
    if fun is NotImplemented:
        raise NotImplementedError("No KL(p || q) is implemented for p type {} and q type {}"
                                  .format(p.__class__.__name__, q.__class__.__name__))
    return fun(p, q)


def _infinite_like(tensor):
    return _api().full_like(tensor, math.inf)


def _x_log_x(tensor):
    return tensor * tensor.log()


def _softplus(x):
    from .nn import functional as F  # noqa: PLC0415
    return F.softplus(x)


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p, q):
    t1 = p.probs * (_softplus(-q.logits) - _softplus(-p.logits))
    t1 = _fill_where(p.probs == 0, 0.0, _fill_where(q.probs == 0, math.inf, t1))
    t2 = (1 - p.probs) * (_softplus(q.logits) - _softplus(p.logits))
    t2 = _fill_where(p.probs == 1, 0.0, _fill_where(q.probs == 1, math.inf, t2))
    return t1 + t2


@register_kl(Beta, Beta)
def _kl_beta_beta(p, q):
    sum_params_p = p.concentration1 + p.concentration0
    sum_params_q = q.concentration1 + q.concentration0
    t1 = q.concentration1.lgamma() + q.concentration0.lgamma() + sum_params_p.lgamma()
    t2 = p.concentration1.lgamma() + p.concentration0.lgamma() + sum_params_q.lgamma()
    t3 = (p.concentration1 - q.concentration1) * p.concentration1.digamma()
    t4 = (p.concentration0 - q.concentration0) * p.concentration0.digamma()
    t5 = (sum_params_q - sum_params_p) * sum_params_p.digamma()
    return t1 - t2 + t3 + t4 + t5


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p, q):
    t = p.probs * (p.logits - q.logits)
    t = _fill_where((q.probs == 0).expand_as(t), math.inf, t)
    t = _fill_where((p.probs == 0).expand_as(t), 0.0, t)
    return t.sum(-1)


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p, q):
    sum_p_concentration = p.concentration.sum(-1)
    sum_q_concentration = q.concentration.sum(-1)
    t1 = sum_p_concentration.lgamma() - sum_q_concentration.lgamma()
    t2 = (p.concentration.lgamma() - q.concentration.lgamma()).sum(-1)
    t3 = p.concentration - q.concentration
    t4 = p.concentration.digamma() - sum_p_concentration.digamma().unsqueeze(-1)
    return t1 - t2 + (t3 * t4).sum(-1)


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p, q):
    rate_ratio = q.rate / p.rate
    return -rate_ratio.log() + rate_ratio - 1


@register_kl(ExponentialFamily, ExponentialFamily)
def _kl_expfamily_expfamily(p, q):
    if not type(p) == type(q):
        raise NotImplementedError("The cross KL-divergence between different exponential "
                                  "families cannot                             be computed using "
                                  "Bregman divergences")
    raise NotImplementedError  # torch's Bregman form needs autograd; every same-class pair here
    # is registered explicitly.


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p, q):
    t1 = q.concentration * (p.rate / q.rate).log()
    t2 = q.concentration.lgamma() - p.concentration.lgamma()
    t3 = (p.concentration - q.concentration) * p.concentration.digamma()
    t4 = (q.rate - p.rate) * (p.concentration / p.rate)
    return t1 + t2 + t3 + t4


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p, q):
    scale_ratio = p.scale / q.scale
    loc_abs_diff = (p.loc - q.loc).abs()
    t1 = -scale_ratio.log()
    t2 = loc_abs_diff / q.scale
    t3 = scale_ratio * (-loc_abs_diff / p.scale).exp()
    return t1 + t2 + t3 - 1


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_multivariatenormal_multivariatenormal(p, q):
    from . import linalg  # noqa: PLC0415
    if p.event_shape != q.event_shape:
        raise ValueError("KL-divergence between two Multivariate Normals with"
                         "                          different event shapes cannot be computed")
    half_term1 = q._half_log_det() - p._half_log_det()
    combined_batch_shape = _api().broadcast_shapes(
        tuple(q._unbroadcasted_scale_tril.shape[:-2]),
        tuple(p._unbroadcasted_scale_tril.shape[:-2]))
    n = p.event_shape[0]
    q_scale_tril = q._unbroadcasted_scale_tril.expand(combined_batch_shape + (n, n))
    p_scale_tril = p._unbroadcasted_scale_tril.expand(combined_batch_shape + (n, n))
    term2 = _batch_trace_xxt(linalg.solve_triangular(q_scale_tril, p_scale_tril, upper=False))
    term3 = _batch_mahalanobis(q._unbroadcasted_scale_tril, q.loc - p.loc)
    return half_term1 + 0.5 * (term2 + term3 - n)


@register_kl(Normal, Normal)
def _kl_normal_normal(p, q):
    var_ratio = (p.scale / q.scale).pow(2)
    t1 = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


@register_kl(LogNormal, LogNormal)
def _kl_lognormal_lognormal(p, q):
    """torch's TransformedDistribution pair: the same transform, so the bases' KL."""
    return kl_divergence(p.base_dist, q.base_dist)


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p, q):
    return p.rate * (p.rate.log() - q.rate.log()) - (p.rate - q.rate)


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p, q):
    result = ((q.high - q.low) / (p.high - p.low)).log()
    return _fill_where((q.low > p.low) | (q.high < p.high), math.inf, result)


@register_kl(Independent, Independent)
def _kl_independent_independent(p, q):
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError
    return _sum_rightmost(kl_divergence(p.base_dist, q.base_dist), p.reinterpreted_batch_ndims)


@register_kl(Bernoulli, Poisson)
def _kl_bernoulli_poisson(p, q):
    return -p.entropy() - (p.probs * q.rate.log() - q.rate)


@register_kl(Beta, Exponential)
def _kl_beta_exponential(p, q):
    return -p.entropy() - q.rate.log() + q.rate * (p.concentration1 /
                                                   (p.concentration1 + p.concentration0))


@register_kl(Beta, Gamma)
def _kl_beta_gamma(p, q):
    t1 = -p.entropy()
    t2 = q.concentration.lgamma() - q.concentration * q.rate.log()
    t3 = (q.concentration - 1) * (p.concentration1.digamma() -
                                  (p.concentration1 + p.concentration0).digamma())
    t4 = q.rate * p.concentration1 / (p.concentration1 + p.concentration0)
    return t1 + t2 - t3 + t4


@register_kl(Beta, Normal)
def _kl_beta_normal(p, q):
    e_beta = p.concentration1 / (p.concentration1 + p.concentration0)
    var_normal = q.scale.pow(2)
    t1 = -p.entropy()
    t2 = 0.5 * (var_normal * 2 * math.pi).log()
    t3 = (e_beta * (1 - e_beta) / (p.concentration1 + p.concentration0 + 1) +
          e_beta.pow(2)) * 0.5
    t4 = q.loc * e_beta
    t5 = q.loc.pow(2) * 0.5
    return t1 + t2 + (t3 - t4 + t5) / var_normal


@register_kl(Beta, Uniform)
def _kl_beta_uniform(p, q):
    result = -p.entropy() + (q.high - q.low).log()
    return _fill_where((q.low > p.support.lower_bound) | (q.high < p.support.upper_bound),
                       math.inf, result)


@register_kl(Exponential, Beta)
@register_kl(Exponential, Uniform)
def _kl_exponential_infinity(p, q):
    return _infinite_like(p.rate)


@register_kl(Exponential, Gamma)
def _kl_exponential_gamma(p, q):
    ratio = q.rate / p.rate
    t1 = -q.concentration * ratio.log()
    return t1 + ratio + q.concentration.lgamma() + q.concentration * _EULER_GAMMA - \
        (1 + _EULER_GAMMA)


@register_kl(Exponential, Normal)
def _kl_exponential_normal(p, q):
    var_normal = q.scale.pow(2)
    rate_sqr = p.rate.pow(2)
    t1 = 0.5 * (rate_sqr * var_normal * 2 * math.pi).log()
    t2 = rate_sqr.reciprocal()
    t3 = q.loc / p.rate
    t4 = q.loc.pow(2) * 0.5
    return t1 - 1 + (t2 - t3 + t4) / var_normal


@register_kl(Gamma, Beta)
@register_kl(Gamma, Uniform)
def _kl_gamma_infinity(p, q):
    return _infinite_like(p.concentration)


@register_kl(Gamma, Exponential)
def _kl_gamma_exponential(p, q):
    return -p.entropy() - q.rate.log() + q.rate * p.concentration / p.rate


@register_kl(Gamma, Normal)
def _kl_gamma_normal(p, q):
    var_normal = q.scale.pow(2)
    beta_sqr = p.rate.pow(2)
    t1 = 0.5 * (beta_sqr * var_normal * 2 * math.pi).log() - p.concentration - \
        p.concentration.lgamma()
    t2 = 0.5 * (p.concentration.pow(2) + p.concentration) / beta_sqr
    t3 = q.loc * p.concentration / p.rate
    t4 = 0.5 * q.loc.pow(2)
    return t1 + (p.concentration - 1) * p.concentration.digamma() + (t2 - t3 + t4) / var_normal


@register_kl(Laplace, Beta)
@register_kl(Laplace, Exponential)
@register_kl(Laplace, Gamma)
@register_kl(Laplace, Uniform)
def _kl_laplace_infinity(p, q):
    return _infinite_like(p.loc)


@register_kl(Laplace, Normal)
def _kl_laplace_normal(p, q):
    var_normal = q.scale.pow(2)
    scale_sqr_var_ratio = p.scale.pow(2) / var_normal
    t1 = 0.5 * (2 * scale_sqr_var_ratio / math.pi).log()
    t2 = 0.5 * p.loc.pow(2)
    t3 = p.loc * q.loc
    t4 = 0.5 * q.loc.pow(2)
    return -t1 + scale_sqr_var_ratio + (t2 - t3 + t4) / var_normal - 1


@register_kl(Normal, Beta)
@register_kl(Normal, Exponential)
@register_kl(Normal, Gamma)
@register_kl(Normal, Uniform)
def _kl_normal_infinity(p, q):
    return _infinite_like(p.loc)


@register_kl(Normal, Laplace)
def _kl_normal_laplace(p, q):
    loc_diff = p.loc - q.loc
    scale_ratio = p.scale / q.scale
    loc_diff_scale_ratio = loc_diff / p.scale
    t1 = scale_ratio.log()
    t2 = math.sqrt(2 / math.pi) * p.scale * (-0.5 * loc_diff_scale_ratio.pow(2)).exp()
    t3 = loc_diff * (math.sqrt(0.5) * loc_diff_scale_ratio).erf()
    return -t1 + (t2 + t3) / q.scale - (0.5 * (1 + math.log(0.5 * math.pi)))


@register_kl(Poisson, Bernoulli)
def _kl_poisson_infinity(p, q):
    return _infinite_like(p.rate)


@register_kl(Uniform, Beta)
def _kl_uniform_beta(p, q):
    common_term = p.high - p.low
    t1 = common_term.log()
    t2 = (q.concentration1 - 1) * (_x_log_x(p.high) - _x_log_x(p.low) - common_term) / \
        common_term
    t3 = (q.concentration0 - 1) * (_x_log_x(1 - p.high) - _x_log_x(1 - p.low) + common_term) / \
        common_term
    t4 = q.concentration1.lgamma() + q.concentration0.lgamma() - \
        (q.concentration1 + q.concentration0).lgamma()
    result = t3 + t4 - t1 - t2
    return _fill_where((p.high > q.support.upper_bound) | (p.low < q.support.lower_bound),
                       math.inf, result)


@register_kl(Uniform, Exponential)
def _kl_uniform_exponetial(p, q):
    result = q.rate * (p.high + p.low) / 2 - ((p.high - p.low) * q.rate).log()
    return _fill_where(p.low < q.support.lower_bound, math.inf, result)


@register_kl(Uniform, Gamma)
def _kl_uniform_gamma(p, q):
    common_term = p.high - p.low
    t1 = common_term.log()
    t2 = q.concentration.lgamma() - q.concentration * q.rate.log()
    t3 = (1 - q.concentration) * (_x_log_x(p.high) - _x_log_x(p.low) - common_term) / \
        common_term
    t4 = q.rate * (p.high + p.low) / 2
    result = -t1 + t2 + t3 + t4
    return _fill_where(p.low < q.support.lower_bound, math.inf, result)


@register_kl(Uniform, Normal)
def _kl_uniform_normal(p, q):
    common_term = p.high - p.low
    t1 = (math.sqrt(math.pi * 2) * q.scale / common_term).log()
    t2 = common_term.pow(2) / 12
    t3 = ((p.high + p.low - 2 * q.loc) / 2).pow(2)
    return t1 + 0.5 * (t2 + t3) / q.scale.pow(2)


@register_kl(Binomial, Binomial)
def _kl_binomial_binomial(p, q):
    if bool((p.total_count < q.total_count).any()):
        raise NotImplementedError("KL between Binomials where q.total_count > p.total_count is "
                                  "not implemented")
    kl = p.total_count * (p.probs * (p.logits - q.logits) + (-p.probs).log1p() -
                          (-q.probs).log1p())
    return _fill_where(p.total_count > q.total_count, math.inf, kl)


@register_kl(Geometric, Geometric)
def _kl_geometric_geometric(p, q):
    return -p.entropy() - (-q.probs).log1p() / p.probs - q.logits


@register_kl(Gumbel, Gumbel)
def _kl_gumbel_gumbel(p, q):
    ct1 = p.scale / q.scale
    ct2 = q.loc / q.scale
    ct3 = p.loc / q.scale
    t1 = -ct1.log() - ct2 + ct3
    t2 = ct1 * _EULER_GAMMA
    t3 = (ct2 + (1 + ct1).lgamma() - ct3).exp()
    return t1 + t2 + t3 - (1 + _EULER_GAMMA)


@register_kl(HalfNormal, HalfNormal)
def _kl_halfnormal_halfnormal(p, q):
    return _kl_normal_normal(p.base_dist, q.base_dist)


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehotcategorical_onehotcategorical(p, q):
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(Pareto, Pareto)
def _kl_pareto_pareto(p, q):
    scale_ratio = p.scale / q.scale
    alpha_ratio = q.alpha / p.alpha
    result = q.alpha * scale_ratio.log() - alpha_ratio.log() + alpha_ratio - 1
    return _fill_where(p.support.lower_bound < q.support.lower_bound, math.inf, result)


@register_kl(TransformedDistribution, TransformedDistribution)
def _kl_transformed_transformed(p, q):
    if p.transforms != q.transforms:
        raise NotImplementedError
    if p.event_shape != q.event_shape:
        raise NotImplementedError
    extra_event_dim = len(p.event_shape) - len(p.base_dist.event_shape)
    return _sum_rightmost(kl_divergence(p.base_dist, q.base_dist), extra_event_dim)


def _half_log_det(d):
    """log sqrt(det covariance) of a (low-rank) multivariate normal."""
    if isinstance(d, LowRankMultivariateNormal):
        return 0.5 * _lowrank_logdet(d._unbroadcasted_cov_factor, d._unbroadcasted_cov_diag,
                                     d._capacitance_tril)
    return d._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)


def _kl_gaussian_gaussian(p, q):
    """KL of two multivariate normals, either low-rank: (tr(Sq^-1 Sp) + |mq - mp|^2_{Sq^-1}
    - k) / 2 + log sqrt(det Sq / det Sp)."""
    if p.event_shape != q.event_shape:
        which = "Low Rank" if isinstance(p, LowRankMultivariateNormal) and \
            isinstance(q, LowRankMultivariateNormal) else "(Low Rank)"
        raise ValueError(f"KL-divergence between two {which} Multivariate Normals with"
                         f"{' ' * 26}different event shapes cannot be computed")  # (torch's)
    diff = (q.loc - p.loc).unsqueeze(-1)
    prec_q = q.precision_matrix
    trace = (prec_q * p.covariance_matrix).sum((-2, -1))
    mahalanobis = (diff.mT @ prec_q @ diff).squeeze(-1).squeeze(-1)
    return 0.5 * (trace + mahalanobis - p.event_shape[0]) + _half_log_det(q) - _half_log_det(p)


for _pair in ((LowRankMultivariateNormal, LowRankMultivariateNormal),
              (LowRankMultivariateNormal, MultivariateNormal),
              (MultivariateNormal, LowRankMultivariateNormal)):
    register_kl(*_pair)(_kl_gaussian_gaussian)
del _pair


# torch.distributions' submodules (`from torch.distributions import normal`,
# `from torch.distributions.multinomial import Multinomial`), each holding what torch's does.
def _install_submodules():
    import types  # noqa: PLC0415
    contents = {
        "distribution": ["Distribution"], "exp_family": ["ExponentialFamily"],
        "normal": ["Normal"], "uniform": ["Uniform"], "bernoulli": ["Bernoulli"],
        "categorical": ["Categorical"], "exponential": ["Exponential"],
        "multinomial": ["Multinomial"], "gamma": ["Gamma"], "dirichlet": ["Dirichlet"],
        "beta": ["Beta"], "poisson": ["Poisson"], "laplace": ["Laplace"],
        "log_normal": ["LogNormal"], "multivariate_normal": ["MultivariateNormal"],
        "independent": ["Independent"], "kl": ["kl_divergence", "register_kl"],
        "transformed_distribution": ["TransformedDistribution"], "half_normal": ["HalfNormal"],
        "cauchy": ["Cauchy"], "half_cauchy": ["HalfCauchy"], "gumbel": ["Gumbel"],
        "weibull": ["Weibull"], "pareto": ["Pareto"], "chi2": ["Chi2"],
        "studentT": ["StudentT"], "geometric": ["Geometric"], "binomial": ["Binomial"],
        "negative_binomial": ["NegativeBinomial"], "one_hot_categorical": ["OneHotCategorical"],
        "relaxed_bernoulli": ["LogitRelaxedBernoulli", "RelaxedBernoulli"],
        "relaxed_categorical": ["ExpRelaxedCategorical", "RelaxedOneHotCategorical"],
        "mixture_same_family": ["MixtureSameFamily"], "fishersnedecor": ["FisherSnedecor"],
        "kumaraswamy": ["Kumaraswamy"],
        "lowrank_multivariate_normal": ["LowRankMultivariateNormal"],
        "von_mises": ["VonMises"], "continuous_bernoulli": ["ContinuousBernoulli"],
        "lkj_cholesky": ["LKJCholesky"],
    }
    this = sys.modules[__name__]
    for sub, names in contents.items():
        module = types.ModuleType(f"{__name__}.{sub}")
        for name in names:
            setattr(module, name, getattr(this, name))
        module.__all__ = list(names)
        sys.modules[module.__name__] = module
        setattr(this, sub, module)


_install_submodules()
