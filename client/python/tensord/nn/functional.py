"""torch.nn.functional: activations, softmax and linear, computed on the server."""
from .._tensor import Tensor


def relu(input, inplace=False):
    return input.relu_() if inplace else input.relu()


def gelu(input, approximate="none"):
    return input.gelu(approximate=approximate)


def silu(input, inplace=False):
    return input.silu_() if inplace else input.silu()


def sigmoid(input):
    return input.sigmoid()


def tanh(input):
    return input.tanh()


def leaky_relu(input, negative_slope=0.01, inplace=False):
    return input.leaky_relu(negative_slope)


def softmax(input, dim=None, dtype=None):
    if dim is None:
        raise TypeError("tensord: softmax needs dim (torch's implicit choice is deprecated)")
    return input.softmax(dim, dtype=dtype)


def log_softmax(input, dim=None, dtype=None):
    if dim is None:
        raise TypeError("tensord: log_softmax needs dim (torch's implicit choice is deprecated)")
    return input.log_softmax(dim, dtype=dtype)


def linear(input, weight, bias=None):
    out = input.matmul(weight.t())
    return out if bias is None else out + bias


def normalize(input, p=2.0, dim=1, eps=1e-12):
    return input / input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)


# ---- More activations: one server op each (softsign, tanhshrink: torch's own compositions) ----

from .._compute import _inplace, _run  # noqa: E402

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _act(name, input, inplace=False, **attrs):
    attrs = {k: float(v) for k, v in attrs.items()}
    if inplace:
        return _inplace(input, name + "_", [], attrs)
    return _run(name, [("self", input)], attrs)


def softplus(input, beta=1, threshold=20):
    return _act("softplus", input, beta=beta, threshold=threshold)


def elu(input, alpha=1.0, inplace=False):
    return _act("elu", input, inplace, alpha=alpha)


def elu_(input, alpha=1.0):
    return elu(input, alpha, inplace=True)


def selu(input, inplace=False):
    return _act("elu", input, inplace, alpha=_SELU_ALPHA, scale=_SELU_SCALE)


def selu_(input):
    return selu(input, inplace=True)


def celu(input, alpha=1.0, inplace=False):
    return _act("elu", input, inplace, alpha=alpha, input_scale=1.0 / alpha)


def celu_(input, alpha=1.0):
    return celu(input, alpha, inplace=True)


def hardsigmoid(input, inplace=False):
    return _act("hardsigmoid", input, inplace)


def hardswish(input, inplace=False):
    return _act("hardswish", input, inplace)


def mish(input, inplace=False):
    return _act("mish", input, inplace)


def logsigmoid(input):
    return _act("log_sigmoid", input)


def hardshrink(input, lambd=0.5):
    return _act("hardshrink", input, lambd=lambd)


def softshrink(input, lambd=0.5):
    return _act("softshrink", input, lambd=lambd)


def softsign(input):
    return input / (input.abs() + 1)


def tanhshrink(input):
    return input - input.tanh()


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    if input.dtype.name == "bool":
        raise RuntimeError("Bool inputs not supported for hardtanh")
    if input.dtype.name == "uint8" and (min_val < 0 or max_val < 0):
        raise RuntimeError("cannot do hardtanh on an unsigned type with negative limits")
    if not input.dtype.is_floating_point:  # torch clamps integers to integer bounds
        min_val, max_val = int(min_val), int(max_val)
    return input.clamp_(min_val, max_val) if inplace else input.clamp(min_val, max_val)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    return hardtanh(input, min_val, max_val, inplace=True)


def relu6(input, inplace=False):
    return hardtanh(input, 0.0, 6.0, inplace)


def silu_(input):
    return input.silu_()


def relu_(input):
    return input.relu_()
