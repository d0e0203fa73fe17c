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


# ---- Losses, normalisation, embedding, padding, dropout: compositions of server ops, as ATen
# composes them (torch/nn/functional.py and aten/src/ATen/native/Loss.cpp, Normalization.cpp).

import math as _math  # noqa: E402
import warnings as _warnings  # noqa: E402

from .. import _dtypes  # noqa: E402
from .._compute import where as _where  # noqa: E402


def _reduce(loss, reduction):
    if reduction == "none":
        return loss
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    raise ValueError(f"{reduction} is not a valid value for reduction")


def _legacy_reduction(size_average, reduce, reduction):
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    return ("mean" if size_average else "sum") if reduce else "none"


def _check_sizes(input, target, name):
    if tuple(target.shape) != tuple(input.shape):
        _warnings.warn(f"Using a target size ({_dtypes.Size(target.shape)}) that is different to "
                       f"the input size ({_dtypes.Size(input.shape)}). This will likely lead to "
                       "incorrect results due to broadcasting. Please ensure they have the same "
                       "size.", stacklevel=3)


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    _check_sizes(input, target, "mse_loss")
    reduction = _legacy_reduction(size_average, reduce, reduction)
    return _reduce((input - target) ** 2, reduction)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    _check_sizes(input, target, "l1_loss")
    reduction = _legacy_reduction(size_average, reduce, reduction)
    return _reduce((input - target).abs(), reduction)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    _check_sizes(input, target, "smooth_l1_loss")
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    diff = (input - target).abs()
    if beta == 0:
        return _reduce(diff, reduction)
    return _reduce(_where(diff < beta, diff * diff * (0.5 / beta), diff - 0.5 * beta), reduction)


def huber_loss(input, target, reduction="mean", delta=1.0):
    _check_sizes(input, target, "huber_loss")
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    diff = (input - target).abs()
    return _reduce(_where(diff < delta, diff * diff * 0.5, (diff - 0.5 * delta) * delta),
                   reduction)


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    return _reduce((-input * target).exp().log1p(), reduction)


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,
                         reduction="mean"):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Using a target size ({_dtypes.Size(target.shape)}) that is different "
                         f"to the input size ({_dtypes.Size(input.shape)}) is deprecated. Please "
                         "ensure they have the same size.")
    if bool(((input < 0) | (input > 1)).any().item()):
        raise RuntimeError("all elements of input should be between 0 and 1")
    # log clamped at -100, as ATen, so that 0 * log(0) stays finite.
    loss = -(target * input.log().clamp_min(-100) + (1 - target) * (1 - input).log().clamp_min(-100))
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
                                     reduction="mean", pos_weight=None):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Target size ({_dtypes.Size(target.shape)}) must be the same as input "
                         f"size ({_dtypes.Size(input.shape)})")
    # (1 - t) x + (1 + (pw - 1) t) * log(1 + exp(-x)), with log(1 + exp(-x)) = -logsigmoid(x).
    if pos_weight is not None:
        log_weight = (pos_weight - 1) * target + 1
        loss = (1 - target) * input - log_weight * logsigmoid(input)
    else:
        loss = (1 - target) * input - logsigmoid(input)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if log_target:
        loss = target.exp() * (target - input)
    else:
        loss = _where(target == 0, target.new_zeros(()), target * target.log()) - target * input
    if reduction == "batchmean":
        return loss.sum() / input.size(0) if input.dim() != 0 else loss.sum()
    if reduction == "mean":
        _warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the "
                       "support size.'batchmean' divides only by the batch size, and aligns with "
                       "the KL div math definition.'mean' will be changed to behave the same as "
                       "'batchmean' in the next major release.", stacklevel=2)
    return _reduce(loss, reduction)


def _check_targets(target, num_classes, ignore_index):
    """Raises torch's IndexError for a class index out of range (checked now, as the CPU does)."""
    bad = ((target < 0) | (target >= num_classes)) & (target != ignore_index)
    if bool(bad.any().item()):
        first = int(target.masked_select(bad)[0].item())
        raise IndexError(f"Target {first} is out of bounds.")


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean"):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if input.dim() < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {input.dim()})")
    if target.dtype is not _dtypes.int64:
        raise RuntimeError(f"expected scalar type Long but found {target.dtype._legacy}")
    if input.dim() > 1 and target.size(0) != input.size(0):
        raise ValueError(f"Expected input batch_size ({input.size(0)}) to match target "
                         f"batch_size ({target.size(0)}).")
    class_dim = 0 if input.dim() == 1 else 1
    num_classes = input.size(class_dim)
    _check_targets(target, num_classes, ignore_index)
    valid = target != ignore_index
    safe = _where(valid, target, target.new_zeros(()))
    picked = -input.gather(class_dim, safe.unsqueeze(class_dim)).squeeze(class_dim)
    w = valid.to(input.dtype)
    if weight is not None:
        w = w * weight.index_select(0, safe.flatten()).view(tuple(safe.shape))
    loss = picked * w
    if reduction == "mean":
        return loss.sum() / w.sum()
    return _reduce(loss, reduction)


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                  reduction="mean", label_smoothing=0.0):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    class_dim = 0 if input.dim() == 1 else 1
    logp = input.log_softmax(class_dim)
    if tuple(target.shape) == tuple(input.shape):  # class probabilities, as ATen decides
        if not target.dtype.is_floating_point:
            raise RuntimeError("Expected floating point type for target with class probabilities, "
                               f"got {target.dtype._legacy}")
        num_classes = input.size(class_dim)
        if label_smoothing > 0:
            target = target * (1 - label_smoothing) + label_smoothing / num_classes
        per = -(logp * target if weight is None else
                logp * target * weight.view([-1] + [1] * (input.dim() - class_dim - 1)))
        loss = per.sum(class_dim)
        if reduction == "mean":
            return loss.sum() / (input.numel() // num_classes)
        return _reduce(loss, reduction)
    nll = nll_loss(logp, target, weight, None, ignore_index, None, reduction)
    if label_smoothing <= 0:
        return nll
    # (1 - eps) * nll + eps * the mean over classes of -log p, weighted and masked as nll.
    num_classes = input.size(class_dim)
    valid = (target != ignore_index).to(input.dtype)
    wshape = [-1] + [1] * (input.dim() - class_dim - 1)
    smooth = -(logp if weight is None else logp * weight.view(wshape)).sum(class_dim) * valid
    if reduction == "mean":
        if weight is None:
            smooth = smooth.sum() / valid.sum()
        else:
            safe = _where(target != ignore_index, target, target.new_zeros(()))
            smooth = smooth.sum() / (weight.index_select(0, safe.flatten())
                                     .view(tuple(safe.shape)) * valid).sum()
    else:
        smooth = _reduce(smooth, reduction)
    return nll * (1 - label_smoothing) + smooth * (label_smoothing / num_classes)


def one_hot(tensor, num_classes=-1):
    if tensor.dtype is not _dtypes.int64:
        raise RuntimeError("one_hot is only applicable to index tensor.")
    if num_classes == -1:
        if tensor.numel() == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(tensor.max().item()) + 1
    elif tensor.numel() > 0:
        if bool((tensor < 0).any().item()):
            raise RuntimeError("Class values must be non-negative.")
        if bool((tensor >= num_classes).any().item()):
            raise RuntimeError("Class values must be smaller than num_classes.")
    from .._factories import arange  # noqa: PLC0415
    classes = arange(num_classes, device=tensor.device, session=tensor._session)
    return (tensor.unsqueeze(-1) == classes).long()


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    w12 = (x1 * x2).sum(dim)
    n1 = (x1 * x1).sum(dim)
    n2 = (x2 * x2).sum(dim)
    return w12 / (n1 * n2).clamp_min(eps * eps).sqrt()


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    return (x1 - x2 + eps).norm(p, -1, keepdim=keepdim)


def glu(input, dim=-1):
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    if input.size(dim) % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {dim % input.dim()} is "
                           f"size {input.size(dim)}")
    a, b = input.chunk(2, dim)
    return a * b.sigmoid()


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    return softmax(-input, dim, dtype=dtype)


def threshold(input, threshold, value, inplace=False):
    out = _where(input > threshold, input, input.new_full((), value))
    return input.copy_(out) if inplace else out


def threshold_(input, threshold, value):
    return globals()["threshold"](input, threshold, value, inplace=True)


def leaky_relu_(input, negative_slope=0.01):
    return input.copy_(input.leaky_relu(negative_slope))


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    shape = tuple([normalized_shape] if isinstance(normalized_shape, int) else normalized_shape)
    n = len(shape)
    if tuple(input.shape[input.dim() - n:]) != shape or input.dim() < n:
        raise RuntimeError(f"Given normalized_shape={list(shape)}, expected input with shape "
                           f"[*, {', '.join(str(s) for s in shape)}], but got input of size"
                           f"{list(input.shape)}")
    dims = list(range(input.dim() - n, input.dim()))
    mean = input.mean(dims, keepdim=True)
    var = input.var(dims, unbiased=False, keepdim=True)
    out = (input - mean) * (var + eps).rsqrt()
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return out


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    if input.dim() < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received "
                           f"{input.dim()}")
    n, c = input.size(0), input.size(1)
    if c % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, "
                           f"but got input of shape {list(input.shape)} and num_groups="
                           f"{num_groups}")
    grouped = input.reshape(n, num_groups, -1)
    mean = grouped.mean(-1, keepdim=True)
    var = grouped.var(-1, unbiased=False, keepdim=True)
    out = ((grouped - mean) * (var + eps).rsqrt()).view(tuple(input.shape))
    affine = [1, c] + [1] * (input.dim() - 2)
    if weight is not None:
        out = out * weight.view(affine)
    if bias is not None:
        out = out + bias.view(affine)
    return out


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-5):
    if input.dim() < 2:
        raise ValueError(f"Expected 2D or more input (got {input.dim()}D input)")
    c = input.size(1)
    shape = [1, c] + [1] * (input.dim() - 2)
    dims = [0] + list(range(2, input.dim()))
    if training:
        count = input.numel() // c
        if count == 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input "
                             f"size {_dtypes.Size(input.shape)}")
        mean = input.mean(dims)
        var = input.var(dims, unbiased=False)
        if running_mean is not None:
            running_mean.mul_(1 - momentum).add_(mean * momentum)
        if running_var is not None:
            running_var.mul_(1 - momentum).add_(var * (momentum * count / (count - 1)))
    else:
        mean, var = running_mean, running_var
    out = (input - mean.view(shape)) * (var.view(shape) + eps).rsqrt()
    if weight is not None:
        out = out * weight.view(shape)
    if bias is not None:
        out = out + bias.view(shape)
    return out


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats=True, momentum=0.1, eps=1e-5):
    dims = list(range(2, input.dim()))
    mean = input.mean(dims, keepdim=True)
    var = input.var(dims, unbiased=False, keepdim=True)
    out = (input - mean) * (var + eps).rsqrt()
    shape = [1, input.size(1)] + [1] * (input.dim() - 2)
    if weight is not None:
        out = out * weight.view(shape)
    if bias is not None:
        out = out + bias.view(shape)
    return out


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False):
    if input.dtype not in (_dtypes.int64, _dtypes.int32):
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the "
                           "following scalar types: Long, Int; but got "
                           f"torch.{input.dtype._legacy}Tensor instead (while checking "
                           "arguments for embedding)")
    if padding_idx is not None:
        if padding_idx > 0 and padding_idx >= weight.size(0):
            raise AssertionError("Padding_idx must be within num_embeddings")
        if padding_idx < 0 and padding_idx < -weight.size(0):
            raise AssertionError("Padding_idx must be within num_embeddings")
    if max_norm is not None:
        norms = weight.norm(norm_type, 1, keepdim=True)
        weight.copy_(_where(norms > max_norm, weight * (max_norm / (norms + 1e-7)), weight))
    return weight.index_select(0, input.reshape(-1)).view(tuple(input.shape) + (weight.size(1),))


def dropout(input, p=0.5, training=True, inplace=False):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0:
        return input
    if p == 1:
        out = input * 0
    else:
        keep = input.new_empty(tuple(input.shape)).bernoulli_(1 - p)
        out = input * keep * (1.0 / (1 - p))
    return input.copy_(out) if inplace else out


def _feature_dropout(input, p, training, inplace, batched_dim, name):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0:
        return input
    feature = list(input.shape[:batched_dim]) + [1] * (input.dim() - batched_dim)
    keep = input.new_empty(tuple(feature)).bernoulli_(1 - p)
    out = input * keep * (1.0 / (1 - p)) if p < 1 else input * 0
    return input.copy_(out) if inplace else out


def dropout1d(input, p=0.5, training=True, inplace=False):
    return _feature_dropout(input, p, training, inplace, input.dim() - 1, "dropout1d")


def dropout2d(input, p=0.5, training=True, inplace=False):
    return _feature_dropout(input, p, training, inplace, input.dim() - 2, "dropout2d")


def dropout3d(input, p=0.5, training=True, inplace=False):
    return _feature_dropout(input, p, training, inplace, input.dim() - 3, "dropout3d")


def pad(input, pad, mode="constant", value=None):
    """torch.nn.functional.pad: constant, reflect, replicate and circular."""
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > input.dim():
        raise RuntimeError("Padding length too large")
    out = input
    for i in range(len(pad) // 2):
        dim = input.dim() - 1 - i
        before, after = pad[2 * i], pad[2 * i + 1]
        out = _pad_dim(out, dim, before, after, mode, 0.0 if value is None else value, input)
    return out


def _pad_dim(x, dim, before, after, mode, value, original):
    from .._factories import arange, cat  # noqa: PLC0415
    size = x.size(dim)
    if mode == "constant":
        if before < 0:
            x = x.narrow(dim, -before, size + before)
            size, before = size + before, 0
        if after < 0:
            x = x.narrow(dim, 0, size + after)
            size, after = size + after, 0
        parts = []
        if before:
            shape = list(x.shape)
            shape[dim] = before
            parts.append(x.new_full(tuple(shape), value))
        parts.append(x)
        if after:
            shape = list(x.shape)
            shape[dim] = after
            parts.append(x.new_full(tuple(shape), value))
        return cat(parts, dim) if len(parts) > 1 else x
    if mode == "reflect":
        if before >= size or after >= size:
            raise RuntimeError(f"Argument #4: Padding size should be less than the corresponding "
                               f"input dimension, but got: padding ({before}, {after}) at "
                               f"dimension {dim} of input {list(original.shape)}")
        index = [before - j for j in range(before)] + list(range(size)) + \
                [size - 2 - j for j in range(after)]
    elif mode == "replicate":
        index = [0] * before + list(range(size)) + [size - 1] * after
    elif mode == "circular":
        if before > size or after > size:
            raise RuntimeError("Padding value causes wrapping around more than once.")
        index = [(size - before + j) for j in range(before)] + list(range(size)) + \
                list(range(after))
    else:
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    from .._factories import tensor  # noqa: PLC0415
    return x.index_select(dim, tensor(index, device=x.device, session=x._session))
