"""torch.nn's LocalResponseNorm, CrossMapLRN2d, LayerNorm and GroupNorm."""
import numbers

from ... import _factories
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module


def _affine_parameters(module, present, shape, device, dtype):
    """LayerNorm's and GroupNorm's weight (ones) and bias (zeros) of `shape`, or both
    registered as None."""
    if not present:
        module.register_parameter("weight", None)
        module.register_parameter("bias", None)
        return
    module.weight = Parameter(_factories.empty(shape, device=device, dtype=dtype))
    module.bias = Parameter(_factories.empty(shape, device=device, dtype=dtype))
    _reset_affine(module)


def _reset_affine(module):
    """reset_parameters of LayerNorm and GroupNorm: weight ones, bias zeros (when present)."""
    if module.weight is not None:
        init.ones_(module.weight)
        init.zeros_(module.bias)


class LocalResponseNorm(Module):
    """x / (k + alpha / size * Σ x²)^beta, the sum over `size` neighbouring channels (zero
    padded)."""

    __constants__ = ["size", "alpha", "beta", "k"]

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0):
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input):
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return "{size}, alpha={alpha}, beta={beta}, k={k}".format(**self.__dict__)


class CrossMapLRN2d(Module):
    """Lua Torch's SpatialCrossMapLRN of a (N, C, H, W) input: x / (k + alpha / size * s)^beta,
    s the sum of x² over the channels within (size - 1) // 2 + 1 of each one, with channel 0's
    always counted (as torch's running-sum kernel counts it)."""

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1):
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input):
        assert input.dim() == 4
        channels = input.size(1)
        pre_pad = int((self.size - 1) / 2 + 1)
        # window[c][j]: whether channel j's square counts towards channel c's scale.
        window = [[float(j == 0 or max(1, c - pre_pad + 1) <= j <= c + pre_pad - 1)
                   for j in range(channels)] for c in range(channels)]
        square = input * input
        scale = square.movedim(1, -1).matmul(input.new_tensor(window).t()).movedim(-1, 1)
        scale = scale * (self.alpha / self.size) + self.k
        return (scale.pow(-self.beta) * input).contiguous()

    def extra_repr(self):
        return "{size}, alpha={alpha}, beta={beta}, k={k}".format(**self.__dict__)


class LayerNorm(Module):
    """Normalisation over the trailing normalized_shape dims of each sample, then an elementwise
    weight (ones) and bias (zeros) of that shape (elementwise_affine)."""

    __constants__ = ["normalized_shape", "eps", "elementwise_affine"]

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, device=None,
                 dtype=None):
        super().__init__()
        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        _affine_parameters(self, self.elementwise_affine, self.normalized_shape, device, dtype)

    def reset_parameters(self):
        _reset_affine(self)

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return "{normalized_shape}, eps={eps}, " \
            "elementwise_affine={elementwise_affine}".format(**self.__dict__)


class GroupNorm(Module):
    """Normalisation over each group of num_channels / num_groups channels (and the spatial
    dims) of each sample, then a per-channel weight (ones) and bias (zeros) (affine)."""

    __constants__ = ["num_groups", "num_channels", "eps", "affine"]

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None, dtype=None):
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError("num_channels must be divisible by num_groups")
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        _affine_parameters(self, affine, (num_channels,), device, dtype)

    def reset_parameters(self):
        _reset_affine(self)

    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return "{num_groups}, {num_channels}, eps={eps}, affine={affine}".format(**self.__dict__)


__all__ = ["LocalResponseNorm", "CrossMapLRN2d", "LayerNorm", "GroupNorm"]
