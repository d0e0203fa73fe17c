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
