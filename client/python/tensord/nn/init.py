"""torch.nn.init: fills a tensor in place (on the server) with torch's initialisation schemes.

The draws come from tensord's generator (torch.manual_seed seeds it), so the values differ
from torch's by design; the distributions, bounds and fan computations are torch's.
"""
import math
import warnings

from .. import _factories, linalg
from .._grad_mode import no_grad


def calculate_gain(nonlinearity, param=None):
    linear_fns = ["linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
                  "conv_transpose2d", "conv_transpose3d"]
    if nonlinearity in linear_fns or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            negative_slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, (int, float)):
            negative_slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + negative_slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor):
    dimensions = tensor.dim()
    if dimensions < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 "
                         "dimensions")
    num_input_fmaps = tensor.size(1)
    num_output_fmaps = tensor.size(0)
    receptive_field_size = 1
    for s in tensor.shape[2:]:
        receptive_field_size *= s
    return num_input_fmaps * receptive_field_size, num_output_fmaps * receptive_field_size


def _calculate_correct_fan(tensor, mode):
    mode = mode.lower()
    valid_modes = ["fan_in", "fan_out"]
    if mode not in valid_modes:
        raise ValueError(f"Mode {mode} not supported, please use one of {valid_modes}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(tensor, a=0.0, b=1.0):
    with no_grad():
        return tensor.uniform_(a, b)


def normal_(tensor, mean=0.0, std=1.0):
    with no_grad():
        return tensor.normal_(mean, std)


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0):
    """Normal(mean, std) truncated to [a, b], by the inverse CDF of a uniform draw over the
    truncated range (torch's method)."""
    def norm_cdf(x):
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    if (mean < a - 2 * std) or (mean > b + 2 * std):
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The "
                      "distribution of values may be incorrect.", stacklevel=2)
    with no_grad():
        lo = norm_cdf((a - mean) / std)
        hi = norm_cdf((b - mean) / std)
        tensor.uniform_(2 * lo - 1, 2 * hi - 1)
        tensor.erfinv_()
        tensor.mul_(std * math.sqrt(2.0))
        tensor.add_(mean)
        tensor.clamp_(min=a, max=b)
        return tensor


def constant_(tensor, val):
    with no_grad():
        return tensor.fill_(val)


def ones_(tensor):
    with no_grad():
        return tensor.fill_(1.0)


def zeros_(tensor):
    with no_grad():
        return tensor.zero_()


def eye_(tensor):
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    with no_grad():
        return tensor.copy_(_factories.eye(*tensor.shape, dtype=tensor.dtype,
                                           device=tensor.device, session=tensor._session))


def dirac_(tensor, groups=1):
    dimensions = tensor.dim()
    if dimensions not in [3, 4, 5]:
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tensor.size()
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    out_chans_per_grp = sizes[0] // groups
    min_dim = min(out_chans_per_grp, sizes[1])
    with no_grad():
        tensor.zero_()
        for g in range(groups):
            for d in range(min_dim):
                index = (g * out_chans_per_grp + d, d) + tuple(s // 2 for s in sizes[2:])
                tensor[index] = 1
    return tensor


def xavier_uniform_(tensor, gain=1.0):
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    a = math.sqrt(3.0) * std
    return uniform_(tensor, -a, a)


def xavier_normal_(tensor, gain=1.0):
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std)


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu"):
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    gain = calculate_gain(nonlinearity, a)
    bound = math.sqrt(3.0) * gain / math.sqrt(fan)
    return uniform_(tensor, -bound, bound)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu"):
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    gain = calculate_gain(nonlinearity, a)
    return normal_(tensor, 0, gain / math.sqrt(fan))


def orthogonal_(tensor, gain=1):
    """A (semi-)orthogonal matrix from the QR decomposition of a normal draw, signs fixed by
    R's diagonal (torch's method)."""
    if tensor.dim() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.size(0)
    cols = tensor.numel() // rows
    flattened = _factories.empty(rows, cols, dtype=tensor.dtype, device=tensor.device,
                                 session=tensor._session).normal_(0, 1)
    if rows < cols:
        flattened = flattened.t()
    q, r = linalg.qr(flattened)
    q = q * r.diagonal().sign()
    if rows < cols:
        q = q.t()
    with no_grad():
        tensor.view_as(q).copy_(q)
        tensor.mul_(gain)
    return tensor


def sparse_(tensor, sparsity, std=0.01):
    """Each column gets ceil(sparsity * rows) zeros at random rows, the rest N(0, std)."""
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    num_zeros = int(math.ceil(sparsity * rows))
    with no_grad():
        tensor.normal_(0, std)
        if num_zeros:
            order = _factories.rand(rows, cols, device=tensor.device,
                                    session=tensor._session).argsort(dim=0)
            tensor.scatter_(0, order[:num_zeros], 0.0)
    return tensor


def _deprecated(new):
    def old(*args, **kwargs):
        warnings.warn(f"nn.init.{new.__name__[:-1]} is now deprecated in favor of "
                      f"nn.init.{new.__name__}.", stacklevel=2)
        return new(*args, **kwargs)
    old.__name__ = new.__name__[:-1]
    old.__doc__ = new.__doc__
    return old


uniform = _deprecated(uniform_)
normal = _deprecated(normal_)
constant = _deprecated(constant_)
eye = _deprecated(eye_)
dirac = _deprecated(dirac_)
xavier_uniform = _deprecated(xavier_uniform_)
xavier_normal = _deprecated(xavier_normal_)
kaiming_uniform = _deprecated(kaiming_uniform_)
kaiming_normal = _deprecated(kaiming_normal_)
orthogonal = _deprecated(orthogonal_)
sparse = _deprecated(sparse_)
