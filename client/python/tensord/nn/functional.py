"""torch.nn.functional: activations, softmax and linear, computed on the server."""
from .._out import write_out
from .._tensor import Tensor


def relu(input, inplace=False):
    return input.relu_() if inplace else input.relu()


def gelu(input, approximate="none"):
    return input.gelu(approximate=approximate)


def silu(input, inplace=False):
    return input.silu_() if inplace else input.silu()


def sigmoid(input):
    _warnings.warn("nn.functional.sigmoid is deprecated. Use torch.sigmoid instead.")
    return input.sigmoid()


def tanh(input):
    _warnings.warn("nn.functional.tanh is deprecated. Use torch.tanh instead.")
    return input.tanh()


def leaky_relu(input, negative_slope=0.01, inplace=False):
    return leaky_relu_(input, negative_slope) if inplace else input.leaky_relu(negative_slope)


def _get_softmax_dim(name, ndim, stacklevel=3):
    """torch's implicit dim (deprecated, with its warning): 0 for 0-, 1- and 3-d inputs, else 1."""
    _warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to "
                  "include dim=X as an argument.", stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _get_softmax_dim("softmax", input.dim(), _stacklevel)
    return input.softmax(dim, dtype=dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _get_softmax_dim("log_softmax", input.dim(), _stacklevel)
    return input.log_softmax(dim, dtype=dtype)


def _no_cpu_half(input, kernel):
    """torch 1.13's CPU kernels that have no float16 version raise so."""
    if input.dtype is _dtypes.float16 and input.device.type == "cpu":
        raise RuntimeError(f'"{kernel}" not implemented for \'Half\'')


def linear(input, weight, bias=None):
    if _autocast.active and _autocast.applies("linear", (input, weight, bias)):
        return _autocast.run("linear", linear, (input, weight, bias))  # all three cast first
    if bias is not None and input.dim() >= 2 and input.dtype != weight.dtype:
        raise RuntimeError("mat1 and mat2 must have the same dtype")  # torch's addmm's words
    # torch 1.13's paths (so that grad_fn names match): addmm for a matrix, addmm over the
    # flattened rows of a contiguous 3-d input, else matmul and add
    if bias is not None and input.dim() == 2:
        return bias.addmm(input, weight.t())
    if bias is not None and input.dim() == 3 and input.is_contiguous():
        rows = bias.addmm(input.view(-1, input.shape[2]), weight.t())
        return rows.view(input.shape[0], input.shape[1], rows.shape[1])
    out = input.matmul(weight.t())
    return out if bias is None else out + bias


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """One server op (engine/ops/functional_ops.cc)."""
    result = _run("normalize", [("self", input)],
                 {"p": float(p), "dim": int(dim), "eps": float(eps)})
    return write_out(result, out, "normalize")


# ---- More activations: one server op each (softsign, tanhshrink: torch's own compositions) ----

from .._compute import _inplace, _run, _run_n  # noqa: E402
from .._ops import _Ints  # noqa: E402

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
    # A clamp, recorded as torch's HardtanhBackward0 (its gradient stops at the bounds, where
    # clamp's passes)
    attrs = {"min_val": min_val, "max_val": max_val}
    if inplace:
        return _graph.composite_in_place("hardtanh_", [input], attrs,
                                         lambda: input.clamp_(min_val, max_val))
    if not _graph.recording([input]):
        return input.clamp(min_val, max_val)
    with _grad_mode.no_grad():
        out = input.clamp(min_val, max_val)
    _graph.record("hardtanh", [input], attrs, [out])
    return out


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
import operator as _operator  # noqa: E402
import warnings as _warnings  # noqa: E402

from .. import _autocast, _dtypes, _errors, _factories, _grad_mode  # noqa: E402
from ..autograd import graph as _graph  # noqa: E402
from .._compute import where as _where  # noqa: E402
from .._composite import _scatter_reduce  # noqa: E402


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
        if reduction == "elementwise_mean":  # torch's old name, still taken
            _warnings.warn("reduction='elementwise_mean' is deprecated, please use "
                           "reduction='mean' instead.", stacklevel=3)
            return "mean"
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    ret = ("mean" if size_average else "sum") if reduce else "none"
    _warnings.warn(f"size_average and reduce args will be deprecated, please use "
                   f"reduction='{ret}' instead.", stacklevel=3)
    return ret


def _check_sizes(input, target):
    if tuple(target.shape) != tuple(input.shape):
        _warnings.warn(f"Using a target size ({_dtypes.Size(target.shape)}) that is different to "
                       f"the input size ({_dtypes.Size(input.shape)}). This will likely lead to "
                       "incorrect results due to broadcasting. Please ensure they have the same "
                       "size.", stacklevel=3)


def _pointwise_loss(name, input, target, reduction, **attrs):
    """One server op (engine/ops/loss_ops.cc): each element's loss, then the reduction."""
    return _run(name, [("input", input), ("target", target)],
                {"reduction": str(reduction), **attrs})


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    _check_sizes(input, target)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    return _pointwise_loss("mse_loss", input, target, reduction)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    _check_sizes(input, target)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    return _pointwise_loss("l1_loss", input, target, reduction)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    _check_sizes(input, target)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    return _pointwise_loss("smooth_l1_loss", input, target, reduction, beta=float(beta))


def huber_loss(input, target, reduction="mean", delta=1.0):
    _check_sizes(input, target)
    return _pointwise_loss("huber_loss", input, target, reduction, delta=float(delta))


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    return _pointwise_loss("soft_margin_loss", input, target, reduction)


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,
                         reduction="mean"):
    """One server op. An input outside [0, 1] is found where the kernel runs: its RuntimeError
    raises at the next synchronize."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    return _run("binary_cross_entropy", [("input", input), ("target", target), ("weight", weight)],
                {"reduction": str(reduction)})


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
                                     reduction="mean", pos_weight=None):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    return _run("binary_cross_entropy_with_logits",
                [("input", input), ("target", target), ("weight", weight),
                 ("pos_weight", pos_weight)], {"reduction": str(reduction)})


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if reduction == "mean":
        _warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the "
                       "support size.'batchmean' divides only by the batch size, and aligns with "
                       "the KL div math definition.'mean' will be changed to behave the same as "
                       "'batchmean' in the next major release.", stacklevel=2)
    return _run("kl_div", [("input", input), ("target", target)],
                {"reduction": str(reduction), "log_target": bool(log_target)})


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean"):
    """One server op (engine/ops/loss_ops.cc). A target out of range is found by the kernel:
    its IndexError raises at the next synchronize, as an index out of range does."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    return _run("nll_loss", [("input", input), ("target", target), ("weight", weight)],
                {"reduction": str(reduction), "ignore_index": int(ignore_index)})


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                  reduction="mean", label_smoothing=0.0):
    """One server op (engine/ops/loss_ops.cc): log_softmax, the target's log-probability,
    label smoothing and the reduction in one pass over the scores; class indices or class
    probabilities (a target of input's shape)."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    return _run("cross_entropy", [("input", input), ("target", target), ("weight", weight)],
                {"reduction": str(reduction), "ignore_index": int(ignore_index),
                 "label_smoothing": float(label_smoothing)})


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean",
             zero_infinity=False):
    """One server op (engine/ops/loss_ops.cc; a kernel per device, engine/kernels/ctc.h):
    log_probs (T, N, C) or (T, C), targets padded (N, S) or concatenated, the lengths as
    tensors or as sequences of ints (both the same kind, as torch's bindings take them). As
    torch, targets and lengths move to log_probs' device first. Lengths or labels that fail
    torch's checks are found where the kernel runs: the error raises at the next synchronize."""
    from .. import _factories  # noqa: PLC0415
    lengths = (input_lengths, target_lengths)
    if all(isinstance(v, Tensor) for v in lengths):
        input_lengths, target_lengths = (v.to(log_probs.device) for v in lengths)
    elif all(isinstance(v, (list, tuple)) for v in lengths):
        input_lengths, target_lengths = (
            _factories.tensor([_operator.index(i) for i in v], dtype=_dtypes.int64,
                              device=log_probs.device, session=log_probs._session)
            for v in lengths)
    else:
        raise TypeError("ctc_loss() received an invalid combination of arguments - got "
                        f"input_lengths of type {type(input_lengths).__name__} and "
                        f"target_lengths of type {type(target_lengths).__name__}, but expected "
                        "both Tensors or both tuples of ints")
    if isinstance(targets, Tensor):
        targets = targets.to(log_probs.device)
    return _run("ctc_loss", [("log_probs", log_probs), ("targets", targets),
                             ("input_lengths", input_lengths),
                             ("target_lengths", target_lengths)],
                {"blank": int(blank), "reduction": str(reduction),
                 "zero_infinity": bool(zero_infinity)})


def one_hot(tensor, num_classes=-1):
    """One server op (engine/ops/functional_ops.cc). Classes out of range are checked here, as
    torch checks them: it reads the values' minimum and maximum first (a sync, as torch's)."""
    if tensor.dtype is not _dtypes.int64:
        raise RuntimeError("one_hot is only applicable to index tensor.")
    if tensor.numel() == 0:
        if num_classes == -1:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
    else:
        low, high = _factories.stack(list(tensor.aminmax())).tolist()  # one read
        if low < 0:
            raise RuntimeError("Class values must be non-negative.")
        if num_classes == -1:
            num_classes = high + 1
        elif high >= num_classes:
            raise RuntimeError("Class values must be smaller than num_classes.")
    return _run("one_hot", [("self", tensor)], {"num_classes": int(num_classes)})


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    return _run("cosine_similarity", [("x1", x1), ("x2", x2)], {"dim": int(dim), "eps": float(eps)})


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    return _run("pairwise_distance", [("x1", x1), ("x2", x2)],
                {"p": float(p), "eps": float(eps), "keepdim": bool(keepdim)})


def glu(input, dim=-1):
    return _run("glu", [("self", input)], {"dim": int(dim)})


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _get_softmax_dim("softmin", input.dim(), _stacklevel)
    attrs = {"dim": int(dim)}
    if dtype is not None:
        attrs["dtype"] = dtype
    return _run("softmin", [("self", input)], attrs)


def threshold(input, threshold, value, inplace=False):
    """torch's threshold kernel, x <= threshold ? value : x (a NaN stays), recorded as its
    ThresholdBackward0 (1 in place): g where x > threshold or x is NaN."""
    _no_cpu_half(input, "threshold_cpu")
    attrs = {"threshold": threshold}

    def compute():
        return _where(input <= threshold, input.new_full((), value), input)
    if inplace:
        return _graph.composite_in_place("threshold_", [input], attrs,
                                         lambda: input.copy_(compute()))
    if not _graph.recording([input]):
        return compute()
    with _grad_mode.no_grad():
        out = compute()
    _graph.record("threshold", [input], attrs, [out])
    return out


def threshold_(input, threshold, value):
    return globals()["threshold"](input, threshold, value, inplace=True)


def leaky_relu_(input, negative_slope=0.01):
    """In place, recorded as torch's LeakyReluBackward1 over the result (a copy_ of the
    out-of-place op would leave its saved input overwritten: backward's version error)."""
    return _graph.composite_in_place(
        "leaky_relu_", [input], {"negative_slope": float(negative_slope)},
        lambda: input.copy_(input.leaky_relu(negative_slope)))


def _mean_var(x, dims):
    """Mean and biased variance over dims, in two passes (the mean, then the mean squared
    deviation): each a fast reduction, where a one-pass Welford reduction divides per element."""
    mean = x.mean(dims, keepdim=True)
    centered = x - mean
    return mean, centered, (centered * centered).mean(dims, keepdim=True)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """One server op (engine/ops/norm_ops.cc): each row read once, two-pass statistics."""
    if not isinstance(normalized_shape, (list, tuple)):  # torch.Size is a tuple
        raise TypeError("layer_norm(): argument 'normalized_shape' (position 2) must be tuple "
                        f"of ints, not {type(normalized_shape).__name__}")
    shape = list(normalized_shape)
    return _run("layer_norm", [("input", input), ("weight", weight), ("bias", bias)],
                {"normalized_shape": shape, "eps": float(eps)})


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """One server op (engine/ops/norm_ops.cc): statistics per (sample, group) as a scale and
    shift per (sample, channel), applied in one pass."""
    _verify_batch_size([input.size(0) * input.size(1) // num_groups, num_groups] +
                       list(input.shape)[2:])
    return _run("group_norm", [("input", input), ("weight", weight), ("bias", bias)],
                {"num_groups": int(num_groups), "eps": float(eps)})


def _verify_batch_size(size):
    """torch's check that the statistics have more than one value to work with (`size` printed
    as given: a torch.Size for batch_norm, a list for group_norm)."""
    count = size[0]
    for v in size[2:]:
        count *= v
    if count == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size "
                         f"{size}")


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-5):
    """One server op (engine/ops/norm_ops.cc): the statistics (when training the batch's, also
    folded into the running ones in place) as a scale and shift per channel, applied in one
    pass."""
    if training:
        _verify_batch_size(_dtypes.Size(input.shape))
    return _run("batch_norm", [("input", input), ("running_mean", running_mean),
                               ("running_var", running_var), ("weight", weight), ("bias", bias)],
                {"training": bool(training), "momentum": float(momentum), "eps": float(eps)})


def _verify_spatial_size(size):
    prod = 1
    for n in list(size)[2:]:
        prod *= n
    if prod == 1:
        raise ValueError(f"Expected more than 1 spatial element when training, got input size "
                         f"{size}")


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats=True, momentum=0.1, eps=1e-5):
    """torch's: batch_norm of the input viewed as one sample of N * C channels (its running
    statistics repeated per sample), the running statistics then set to the mean over the
    samples; the result contiguous."""
    if use_input_stats:
        _verify_spatial_size(_dtypes.Size(input.shape))
    if input.dim() < 2:
        raise ValueError(f"instance_norm expects an input of at least 2 dims (N, C, ...), got "
                         f"{input.dim()}")
    n, c = input.shape[0], input.shape[1]

    def repeated(t):
        return None if t is None else t.repeat(n)

    rm, rv = repeated(running_mean), repeated(running_var)
    out = batch_norm(input.contiguous().view(1, n * c, *input.shape[2:]), rm, rv,
                     repeated(weight), repeated(bias), use_input_stats, momentum, eps)
    if running_mean is not None:
        running_mean.copy_(rm.view(n, c).mean(0))
    if running_var is not None:
        running_var.copy_(rv.view(n, c).mean(0))
    return out.view(input.shape)


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False):
    """One server op (engine/ops/functional_ops.cc); max_norm renormalises weight's rows in place
    first, as torch does."""
    if padding_idx is not None:
        if padding_idx > 0 and padding_idx >= weight.size(0):
            raise AssertionError("Padding_idx must be within num_embeddings")
        if padding_idx < 0 and padding_idx < -weight.size(0):
            raise AssertionError("Padding_idx must be within num_embeddings")
    if max_norm is not None:
        from .._grad_mode import no_grad  # noqa: PLC0415
        with no_grad():  # as torch's: the renorm is not part of the graph
            _embedding_renorm_(weight, input, max_norm, norm_type)
    out = _run("embedding", [("weight", weight), ("indices", input)])
    if padding_idx is not None and out.grad_fn is not None:
        from ..autograd.derivatives import embedding_padding  # noqa: PLC0415
        embedding_padding(out.grad_fn, padding_idx)
    return out


def _embedding_renorm_(input, indices, max_norm, norm_type):
    """torch.embedding_renorm_: in place, each row of the table `input` that indices name (once)
    whose norm_type-norm exceeds max_norm, scaled by max_norm / (norm + 1e-7); returns input."""
    from .._composite import _type_string  # noqa: PLC0415 - import cycle
    for name, pos, v in (("input", 1, input), ("indices", 2, indices)):
        if not isinstance(v, Tensor):
            raise TypeError(f"embedding_renorm_(): argument '{name}' (position {pos}) must be "
                            f"Tensor, not {type(v).__name__}")
    for name, pos, v in (("max_norm", 3, max_norm), ("norm_type", 4, norm_type)):
        if not isinstance(v, (int, float)):
            raise TypeError(f"embedding_renorm_(): argument '{name}' (position {pos}) must be "
                            f"float, not {type(v).__name__}")
    weight = input
    if weight.dim() != 2:
        raise RuntimeError(f"Expected 2-dimensional tensor, but got {weight.dim()}-dimensional "
                           f"tensor for argument #1 'self' (while checking arguments for "
                           f"embedding_renorm_)")
    if indices.dtype not in (_dtypes.int64, _dtypes.int32):
        raise RuntimeError(f"Expected tensor for argument #2 'indices' to have one of the "
                           f"following scalar types: Long, Int; but got {_type_string(indices)} "
                           f"instead (while checking arguments for embedding_renorm_)")
    if indices.numel() == 0:
        return weight
    rows = weight.size(0)
    flat = indices.reshape(-1).to(_dtypes.int64)
    # torch visits the sorted indices: the first out of range is the least below -rows, else
    # the least at or above rows.
    big = (1 << 63) - 1
    from .. import _factories  # noqa: PLC0415
    low, high = _factories.stack([flat.min(), _where(flat >= rows, flat,
                                                      flat.new_full((), big)).min()]).tolist()
    bad = low if low < -rows else (high if high != big else None)
    if bad is not None:
        raise IndexError(f"select(): index {bad} out of range for tensor of size "
                         f"{list(weight.shape)} at dimension 0")
    if not weight.dtype.is_floating_point:
        raise RuntimeError(f"norm(): input dtype should be either floating point or complex. "
                           f"Got {weight.dtype._legacy} instead.")
    from .._composite import unique  # noqa: PLC0415
    named = unique(_where(flat < 0, flat + rows, flat))
    picked = weight.index_select(0, named)
    norms = picked.norm(norm_type, 1, keepdim=True).to(_dtypes.float64)
    # The scale in double, applied in the dtype torch multiplies in (float for half types).
    scale = max_norm / (norms + 1e-7)
    compute = _dtypes.float32 if weight.dtype in (_dtypes.float16, _dtypes.bfloat16) \
        else weight.dtype
    scaled = (picked.to(compute) * scale.to(compute)).to(weight.dtype)
    weight.index_copy_(0, named, _where(norms > max_norm, scaled, picked))
    return weight


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False,
                  mode="mean", sparse=False, per_sample_weights=None, include_last_offset=False,
                  padding_idx=None):
    """torch.nn.functional.embedding_bag, with torch's argument checks; the pooling is one server
    op (engine/ops/data_dependent_ops.cc)."""
    if weight.dtype is _dtypes.int64 and input.is_floating_point():
        _warnings.warn("Argument order of nn.functional.embedding_bag was changed. Usage "
                       "`embedding_bag(weight, input, ...)` is deprecated, and should now be "
                       "`embedding_bag(input, weight, ...)`.")
        weight, input = input, weight
    if per_sample_weights is not None and input.size() != per_sample_weights.size():
        raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is "
                         f"not None, then it must have the same shape as the input "
                         f"({input.shape})")
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated is "
                             "a mini-batch of fixed length sequences. However, found offsets of "
                             f"type {type(offsets)}")
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension "
                         f"{input.dim()}")
    if mode not in ("sum", "mean", "max"):
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max" and scale_grad_by_freq:
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    if mode == "max" and sparse:
        raise ValueError("max mode does not support sparse weights")
    if padding_idx is not None:
        rows = weight.size(0)
        if not -rows <= padding_idx < rows:
            raise RuntimeError(f"padding_idx must be within the number of embeddings, {-rows} "
                               f"through {rows - 1}, but got {padding_idx}")
        padding_idx %= rows
    if max_norm is not None:
        _embedding_renorm_(weight, input, max_norm, norm_type)
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(
            "embedding_bag: per_sample_weights was not None. per_sample_weights is only "
            f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
            "GitHub.")
    attrs = {"mode": mode, "include_last_offset": bool(include_last_offset)}
    if padding_idx is not None:
        attrs["padding_idx"] = int(padding_idx)
    out = _run("embedding_bag", [("weight", weight), ("indices", input), ("offsets", offsets),
                                 ("per_sample_weights", per_sample_weights)], attrs)
    if scale_grad_by_freq and out.grad_fn is not None:
        from ..autograd.nn_derivatives import embedding_bag_frequency  # noqa: PLC0415
        embedding_bag_frequency(out.grad_fn, input)
    return out


def _bag_arg_types(weight, indices, offsets, scale_grad_by_freq, mode, sparse,
                   per_sample_weights, include_last_offset, padding_idx):
    """torch's argument parsing for torch.embedding_bag: TypeErrors as its binding raises."""
    def bad(name, pos, kind, v):
        return TypeError(f"embedding_bag(): argument '{name}' (position {pos}) must be {kind}, "
                         f"not {type(v).__name__}")
    for name, pos, v in (("weight", 1, weight), ("indices", 2, indices), ("offsets", 3, offsets)):
        if not isinstance(v, Tensor):
            raise bad(name, pos, "Tensor", v)
    for name, pos, v in (("scale_grad_by_freq", 4, scale_grad_by_freq), ("sparse", 6, sparse),
                         ("include_last_offset", 8, include_last_offset)):
        if not isinstance(v, bool):
            raise bad(name, pos, "bool", v)
    for name, pos, v, optional in (("mode", 5, mode, False), ("padding_idx", 9, padding_idx,
                                                               True)):
        if not (optional and v is None) and (isinstance(v, bool) or not isinstance(v, int)):
            raise bad(name, pos, "int", v)
    if per_sample_weights is not None and not isinstance(per_sample_weights, Tensor):
        raise bad("per_sample_weights", 7, "Tensor", per_sample_weights)


def _aten_embedding_bag(weight, indices, offsets, scale_grad_by_freq=False, mode=0, sparse=False,
                        per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """torch.embedding_bag, the aten function under F.embedding_bag: mode 0/1/2 (sum, mean, max)
    over the bags of 1-d indices that start at each offset. Returns (output, offset2bag,
    bag_size, max_indices) as torch's CPU kernel fills them."""
    from .._composite import _type_string  # noqa: PLC0415 - import cycle
    from .. import _factories as f  # noqa: PLC0415
    _bag_arg_types(weight, indices, offsets, scale_grad_by_freq, mode, sparse,
                   per_sample_weights, include_last_offset, padding_idx)
    if mode not in (0, 1, 2):  # (torch 1.13 reads past its kernels' table)
        raise RuntimeError(f"embedding_bag: mode has to be 0 (sum), 1 (mean) or 2 (max), but "
                           f"got {mode}")
    if padding_idx is not None:
        rows = weight.size(0)
        if not -rows <= padding_idx < rows:
            raise RuntimeError(f"padding_idx must be within the number of embeddings, -{rows} "
                               f"through {rows - 1}, but got {padding_idx}")
        padding_idx %= rows
    index_dtype = _dtypes.promote_types(offsets.dtype, indices.dtype)
    if index_dtype not in (_dtypes.int64, _dtypes.int32):
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the "
                           f"following scalar types: Long, Int; but got "
                           f"{_type_string(indices, index_dtype)} "
                           f"instead (while checking arguments for embedding_bag)")
    if weight.dtype not in (_dtypes.float16, _dtypes.float32, _dtypes.float64):
        raise RuntimeError(f"Expected tensor for argument #1 'weight' to have one of the "
                           f"following scalar types: Half, Float, Double; but got "
                           f"{_type_string(weight)} instead (while checking arguments for "
                           f"embedding_bag)")
    if offsets.dim() == 0 or indices.dim() == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    n, given = indices.size(0), offsets.size(0)
    # The numbers torch's checks read, in one round trip: the first and last offset, whether
    # the offsets ever decrease, and the first index out of range.
    flat = offsets.reshape(-1).to(_dtypes.int64)
    idx = indices.reshape(-1).to(_dtypes.int64)
    rows = weight.size(0)
    parts = []
    if flat.numel():
        parts += [flat[0], flat[given - 1], (flat[1:] < flat[:-1]).any().to(_dtypes.int64)]
    if idx.numel():
        out_of_range = (idx < 0) | (idx >= rows)
        first_bad = out_of_range.to(_dtypes.int64).argmax().reshape(1)
        parts += [out_of_range.any().to(_dtypes.int64), idx.index_select(0, first_bad)[0]]
    read = f.stack(parts).tolist() if parts else []
    if flat.numel():
        first, last, decreasing = read[:3]
        read = read[3:]
        if first != 0:
            kind = _type_string(offsets, index_dtype)
            raise RuntimeError(f"offsets[0] has to be 0, i.e., the first sequence in the "
                               f"mini-batch has to start from position 0. However, got {first}"
                               f"\n[ {kind}{{}} ]")
        if last > n:
            raise RuntimeError(f"offsets[-1] can not be greater than input's length {n} but got "
                               f"offsets[-1] of {last}")
    psw = per_sample_weights
    if psw is not None:
        if mode != 0:
            raise RuntimeError("embedding_bag: per_sample_weights only supported with "
                               "mode='sum'")
        if _type_string(psw) != _type_string(weight):
            raise RuntimeError(f"Expected tensor for argument #1 'weight' to have the same type "
                               f"as tensor for argument #1 'per_sample_weights'; but type "
                               f"{_type_string(weight)} does not equal {_type_string(psw)} "
                               f"(while checking arguments for embedding_bag)")
        for check in ("dim() == 1", "numel() == indices.numel()"):
            ok = psw.dim() == 1 if check.startswith("dim") else psw.numel() == indices.numel()
            if not ok:
                raise RuntimeError(f"Expected per_sample_weights.value().{check} to be true, but "
                                   f"got false.  (Could this error message be improved?  If so, "
                                   f"please report an enhancement request to PyTorch.)")
    if include_last_offset and given < 1:
        raise RuntimeError("include_last_offset: number of offset should be at least 1")
    if weight.dim() < 2:
        raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but got 1)")
    if offsets.dim() != 1:
        raise IndexError(f"index_add_(): Index is supposed to be a vector, but got dim: "
                         f"{offsets.dim()} with type: {index_dtype._legacy} and size: "
                         f"{list(offsets.shape)}")
    if indices.dim() != 1 or weight.dim() != 2:
        raise RuntimeError(f"embedding_bag: expected 1-d indices and a 2-d weight, but got "
                           f"{indices.dim()}-d indices and a {weight.dim()}-d weight")
    if flat.numel() and decreasing:  # (torch 1.13 fails or reads out of bounds)
        raise RuntimeError("embedding_bag: offsets have to be non-decreasing")
    if idx.numel() and read[0]:
        raise RuntimeError(f"embedding_bag: Expected idx >= 0 && idx < num_embeddings but found "
                           f"idx to be {read[1]}")
    bags = given - (1 if include_last_offset else 0)
    session, device = weight._session, weight.device

    def new(values_or_shape, fill=0):
        return f.full(values_or_shape, fill, dtype=index_dtype, device=device, session=session)

    offs = offsets.to(index_dtype)
    output = embedding_bag(indices.to(index_dtype), weight, offs,
                           mode="max" if mode == 2 else "sum",
                           per_sample_weights=psw, include_last_offset=include_last_offset,
                           padding_idx=padding_idx)
    # torch's sum fast path (float or half weight with unit column stride, no padding_idx,
    # per_sample_weights of unit stride) leaves offset2bag empty; bag_size is then zeros, one
    # per offset, and max_indices a copy of bag_size, as for mean.
    fast = (mode == 0 and weight.dtype in (_dtypes.float32, _dtypes.float16)
            and weight.stride(1) == 1 and padding_idx is None
            and (psw is None or psw.stride(0) == 1))
    if fast:
        offset2bag = new((0,))
    else:  # ones at the offsets, less one at 0, summed up: each index's bag
        marks = new((n + 1,)).index_add_(0, offs, new((given,), 1))
        marks.narrow(0, 0, 1).sub_(1)
        offset2bag = marks.cumsum(0, dtype=index_dtype).narrow(0, 0, n)
    if mode == 0:
        bag_size = new((given,))
    elif bags == 0:
        bag_size = new((0,))
    else:
        ends = (n - offs.narrow(0, bags - 1, 1))
        bag_size = f.cat([offs.narrow(0, 1, bags - 1) - offs.narrow(0, 0, bags - 1), ends])
        if padding_idx is not None and n:
            counted = (indices == padding_idx) & (offset2bag >= 0) & (offset2bag < bags)
            bag_size = bag_size.index_add(0, offset2bag.clamp(0, bags - 1),
                                          -counted.to(index_dtype))
    if mode == 1:
        divisor = bag_size.clamp_min(1).to(weight.dtype).unsqueeze(1)
        output = output / divisor
    if mode != 2:
        return output, offset2bag, bag_size, bag_size.clone()
    dim = weight.size(1)
    if bags == 0 or n == 0:
        return output, offset2bag, bag_size, new((bags, dim))
    # The first index in each bag whose row holds the bag's max, per column.
    bag = offset2bag.to(_dtypes.int64).clamp(0, bags - 1)
    picked = weight.index_select(0, idx)
    best = output.index_select(0, bag)
    counts = (offset2bag >= 0) & (offset2bag < bags)
    if padding_idx is not None:
        counts = counts & (idx != padding_idx)
    hit = ((picked == best) | (picked.isnan() & best.isnan())) & counts.unsqueeze(1)
    position = f.arange(n, dtype=_dtypes.int64, device=device, session=session)
    position = position.unsqueeze(1).expand(n, dim)
    where_hit = position.masked_fill(~hit, n)
    first = f.full((bags, dim), n, dtype=_dtypes.int64, device=device, session=session)
    first = _scatter_reduce(first, 0, bag.unsqueeze(1).expand(n, dim), where_hit, "amin")
    rows_of = idx.index_select(0, first.clamp_max(n - 1).reshape(-1)).reshape(bags, dim)
    max_indices = rows_of.masked_fill(first >= n, 0).to(index_dtype)
    return output, offset2bag, bag_size, max_indices


def _check_dropout_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _dropped(input, p, noise_dims, inplace, generator=None, unbatched=False):
    """dropout in training: one server op whose mask is drawn from the generator's stream."""
    from .._random import _of  # noqa: PLC0415
    n = input.numel() if noise_dims is None else _math.prod(input.shape[:noise_dims])
    attrs = {"p": float(p), **_of(generator).take(n)}
    if noise_dims is not None:
        attrs["noise_dims"] = int(noise_dims)
    before = input._ag._fn if inplace and input._ag is not None else None
    out = _run("dropout", [("self", input)], attrs)
    if inplace:
        out = input.copy_(out)
    # torch's node names: in place, a mul_ by the mask; an unbatched feature dropout runs on
    # input.unsqueeze(0) (unsqueeze_ in place) and ends with a squeeze
    name = ("SqueezeBackward3" if inplace else "SqueezeBackward1") if unbatched else \
        "MulBackward0" if inplace else None
    if name is not None:
        _graph.name_node(out, before, name)
    return out


def dropout(input, p=0.5, training=True, inplace=False):
    _check_dropout_p(p)
    if not training or p == 0:
        return input
    return _dropped(input, p, None, inplace)


def _feature_dropout(input, p, training, inplace, batched_dim, unbatched=False):
    _check_dropout_p(p)
    if not training or p == 0:
        return input
    return _dropped(input, p, batched_dim, inplace, unbatched=unbatched)


def dropout1d(input, p=0.5, training=True, inplace=False):
    """Channels of (N, C, L) or (C, L) zeroed whole."""
    _check_dropout_p(p)
    if input.dim() not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {input.dim()}D "
                           "input. Note that dropout1d exists to provide channel-wise dropout on "
                           "inputs with 1 spatial dimension, a channel dimension, and an optional "
                           "batch dimension (i.e. 2D or 3D inputs).")
    return _feature_dropout(input, p, training, inplace, input.dim() - 1,
                            unbatched=input.dim() == 2)


def dropout2d(input, p=0.5, training=True, inplace=False):
    """torch 1.13's: channels of (N, C, …) zeroed whole whatever the rank (a 3-d input read as
    (N, C, L), with torch's warnings)."""
    _check_dropout_p(p)
    if input.dim() not in (3, 4):
        _warnings.warn(f"dropout2d: Received a {input.dim()}-D input to dropout2d, which is "
                      "deprecated and will result in an error in a future release. To retain the "
                      "behavior and silence this warning, please use dropout instead. Note that "
                      "dropout2d exists to provide channel-wise dropout on inputs with 2 spatial "
                      "dimensions, a channel dimension, and an optional batch dimension (i.e. 3D "
                      "or 4D inputs).", stacklevel=2)
    if input.dim() == 3:
        _warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise "
                      "1D dropout behavior is desired - input is interpreted as shape (N, C, L), "
                      "where C is the channel dim. This behavior will change in a future release "
                      "to interpret the input as one without a batch dimension, i.e. shape (C, H, "
                      "W). To maintain the 1D channel-wise dropout behavior, please switch to "
                      "using dropout1d instead.", stacklevel=2)
    return _feature_dropout(input, p, training, inplace, min(2, input.dim()))


def dropout3d(input, p=0.5, training=True, inplace=False):
    """Channels of (N, C, D, H, W) or (C, D, H, W) zeroed whole (other ranks: torch's
    warning, the input read as unbatched)."""
    _check_dropout_p(p)
    if input.dim() not in (4, 5):
        _warnings.warn(f"dropout3d: Received a {input.dim()}-D input to dropout3d, which is "
                      "deprecated and will result in an error in a future release. To retain the "
                      "behavior and silence this warning, please use dropout instead. Note that "
                      "dropout3d exists to provide channel-wise dropout on inputs with 3 spatial "
                      "dimensions, a channel dimension, and an optional batch dimension (i.e. 4D "
                      "or 5D inputs).", stacklevel=2)
    return _feature_dropout(input, p, training, inplace, 2 if input.dim() == 5 else 1,
                            unbatched=input.dim() != 5)


def pad(input, pad, mode="constant", value=None):
    """torch.nn.functional.pad: constant, reflect, replicate and circular; one server op
    (engine/ops/pad_ops.cc)."""
    attrs = {"pad": _ints(pad), "mode": str(mode)}
    if value is not None:
        attrs["value"] = value
    return _run("pad", [("input", input)], attrs)


# ---- Convolution and pooling: windows as strided views (im2col without a copy until the
# product), products on the server's GEMM; fold accumulates with scatter_add.

def _ints(v):
    """An int or a sequence of ints as a list attribute of ints."""
    return _Ints(int(x) for x in v) if isinstance(v, (list, tuple)) else _Ints([int(v)])


def _pair(v, n=2):
    if isinstance(v, (list, tuple)):
        if len(v) == 1:
            return tuple(v) * n
        return tuple(v)
    return (v,) * n


def _window_attrs(kernel_size=None, dilation=1, padding=0, stride=1, **more):
    attrs = {"dilation": _ints(dilation), "padding": _ints(padding), "stride": _ints(stride)}
    if kernel_size is not None:
        attrs["kernel_size"] = _ints(kernel_size)
    attrs.update(more)
    return attrs


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """torch.nn.functional.unfold: one server op (im2col, engine/ops/conv_ops.cc)."""
    return _run("im2col", [("self", input)], _window_attrs(kernel_size, dilation, padding, stride))


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """torch.nn.functional.fold: one server op (col2im): overlapping blocks summed."""
    return _run("col2im", [("self", input)],
                _window_attrs(kernel_size, dilation, padding, stride,
                              output_size=_ints(output_size)))


def _string_padding(input, weight, stride, padding, dilation, nd):
    """(input, padding numbers) for padding 'valid' or 'same' of an nd-d convolution: 'same'
    pads each side by half the kernel's reach, and where the reach is odd (an even kernel, odd
    dilation) the input gets an extra zero row or column at the end, as torch's."""
    if padding == "valid":
        return input, 0
    if padding != "same":
        raise RuntimeError(f"Invalid padding string: '{padding}'")
    s, d = _pair(stride, nd), _pair(dilation, nd)
    if any(v != 1 for v in s):
        raise RuntimeError("padding='same' is not supported for strided convolutions")
    if weight.dim() != nd + 2 or input.dim() not in (nd + 1, nd + 2) or len(d) != nd:
        return input, 0  # the server names what is wrong with the shapes
    reach = [d[i] * (weight.size(2 + i) - 1) for i in range(nd)]
    if any(r % 2 for r in reach):
        _errors.warn_once("conv_same_even", "Using padding='same' with even kernel lengths and "
                          "odd dilation may require a zero-padded copy of the input be created")
        extra = []
        for r in reversed(reach):
            extra += [0, r % 2]
        input = pad(input, tuple(extra))
    return input, tuple(r // 2 for r in reach)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """One server op (engine/ops/conv_ops.cc); padding='same' or 'valid' is resolved here into
    numbers (and, for an even kernel reach, an extra zero row or column at the end, as torch)."""
    if isinstance(padding, str):
        input, padding = _string_padding(input, weight, stride, padding, dilation, 2)
    return _run("conv2d", [("input", input), ("weight", weight), ("bias", bias)],
                {"stride": _int_list(stride), "padding": _int_list(padding),
                 "dilation": _int_list(dilation), "groups": int(groups)})


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """One server op (engine/ops/conv_ops.cc: a conv2d per kernel depth offset, summed);
    padding='same' or 'valid' resolved here as conv2d's."""
    if isinstance(padding, str):
        input, padding = _string_padding(input, weight, stride, padding, dilation, 3)
    return _run("conv3d", [("input", input), ("weight", weight), ("bias", bias)],
                {"stride": _int_list(stride), "padding": _int_list(padding),
                 "dilation": _int_list(dilation), "groups": int(groups)})


def _int_list(v):
    return [int(x) for x in v] if isinstance(v, (list, tuple)) else int(v)


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    if _autocast.active and _autocast.applies("conv1d", (input, weight, bias)):
        return _autocast.run("conv1d", conv1d,
                             (input, weight, bias, stride, padding, dilation, groups))
    if isinstance(padding, str):
        p = padding
    else:
        p = (0, _pair(padding, 1)[0])
    # contiguous first (conv2d copies a strided input anyway): torch's conv1d output is
    # contiguous, where conv2d would keep a channels-last-like input's layout.
    out = conv2d(input.contiguous().unsqueeze(-2), weight.contiguous().unsqueeze(-2), bias,
                 (1, _pair(stride, 1)[0]), p,
                 (1, _pair(dilation, 1)[0]), groups)
    return out.squeeze(-2)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """One server op (engine/ops/conv_ops.cc): weight^T @ input per group, summed into the
    output's windows (col2im), plus bias."""
    attrs = _window_attrs(None, dilation, padding, stride, groups=int(groups))
    attrs["output_padding"] = _ints(output_padding)
    return _run("conv_transpose2d", [("input", input), ("weight", weight), ("bias", bias)], attrs)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """One server op (engine/ops/conv_ops.cc): weight^T @ input per group, each kernel offset's
    columns added into the output (col2im in 3-d), plus bias."""
    attrs = _window_attrs(None, dilation, padding, stride, groups=int(groups))
    attrs["output_padding"] = _ints(output_padding)
    return _run("conv_transpose3d", [("input", input), ("weight", weight), ("bias", bias)], attrs)


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """conv_transpose2d over a height of 1."""
    if input.dim() not in (2, 3):
        raise RuntimeError("Expected 2D (unbatched) or 3D (batched) input to conv_transpose1d, "
                           f"but got input of size: {list(input.shape)}")
    if weight.dim() != 3:
        raise RuntimeError("expected stride to be a single integer value or a list of "
                           f"{weight.dim() - 2} values to match the convolution dimensions, but "
                           f"got stride={list(_pair(stride, 1))}")
    one = lambda v: (1, _pair(v, 1)[0])  # noqa: E731
    return conv_transpose2d(input.unsqueeze(-2), weight.unsqueeze(-2), bias, one(stride),
                            (0, _pair(padding, 1)[0]), (0, _pair(output_padding, 1)[0]), groups,
                            one(dilation)).squeeze(-2)


def _pool_attrs(kernel_size, stride, padding, ceil_mode, **more):
    attrs = {"kernel_size": _ints(kernel_size), "padding": _ints(padding),
             "ceil_mode": bool(ceil_mode)}
    if stride is not None and not (isinstance(stride, (list, tuple)) and len(stride) == 0):
        attrs["stride"] = _ints(stride)
    for key, value in more.items():
        if value is not None:
            attrs[key] = _ints(value) if key == "dilation" else value
    return attrs


def _max_pool(nd, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices):
    """max_pool{2,3}d: one server op (engine/ops/pool_ops.cc); with indices,
    max_pool{2,3}d_with_indices, also when autograd records it (as torch's: backward scatters
    the gradient to those indices)."""
    if nd == 3 and not return_indices and _autocast.active and \
            _autocast.applies("max_pool3d", (input,)):  # on torch's cpu float32 list
        return _autocast.run("max_pool3d", _max_pool, (nd, input, kernel_size, stride, padding,
                                                        dilation, ceil_mode, return_indices))
    attrs = _pool_attrs(kernel_size, stride, padding, ceil_mode, dilation=dilation)
    if return_indices or (input.requires_grad and _grad_mode.is_grad_enabled()):
        values, indices = _run_n(f"max_pool{nd}d_with_indices", [input], attrs, 2)
        return (values, indices) if return_indices else values
    return _run(f"max_pool{nd}d", [("self", input)], attrs)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    return _max_pool(2, input, kernel_size, stride, padding, dilation, ceil_mode,
                     return_indices)


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    return _max_pool(3, input, kernel_size, stride, padding, dilation, ceil_mode,
                     return_indices)


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    return max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    if input.dim() not in (2, 3):
        raise RuntimeError("max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 "
                           f"dim batch size for input, but got:{list(input.shape)}")
    r = max_pool2d(input.unsqueeze(-2), (1, _pair(kernel_size, 1)[0]),
                   None if stride is None else (1, _pair(stride, 1)[0]),
                   (0, _pair(padding, 1)[0]), (1, _pair(dilation, 1)[0]), ceil_mode,
                   return_indices)
    if return_indices:
        return r[0].squeeze(-2), r[1].squeeze(-2)
    return r.squeeze(-2)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """One server op (engine/ops/pool_ops.cc)."""
    return _run("avg_pool2d", [("self", input)],
                _pool_attrs(kernel_size, stride, padding, ceil_mode,
                            count_include_pad=bool(count_include_pad),
                            divisor_override=divisor_override))


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """One server op (engine/ops/pool_ops.cc)."""
    return _run("avg_pool3d", [("self", input)],
                _pool_attrs(kernel_size, stride, padding, ceil_mode,
                            count_include_pad=bool(count_include_pad),
                            divisor_override=divisor_override))


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True):
    if input.dim() not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.dim()}-dimensional "
                           "tensor for argument #1 'self' (while checking arguments for "
                           "avg_pool1d)")
    return avg_pool2d(input.unsqueeze(-2), (1, _pair(kernel_size, 1)[0]),
                      None if stride is None else (1, _pair(stride, 1)[0]),
                      (0, _pair(padding, 1)[0]), ceil_mode, count_include_pad).squeeze(-2)


def _adaptive(name, input, output_size, nd):
    """adaptive_{avg,max}_pool{1,2,3}d: one server op (engine/ops/pool_ops.cc); 1-d pools as 2-d
    ones over a unit height. Returns (values, indices) for max."""
    if nd == 1:
        if input.dim() not in (2, 3):
            raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.dim()}-dimensional "
                               f"tensor for argument #1 'self' (while checking arguments for "
                               f"{name}1d)")
        out = _pair(output_size, 1)
        if len(out) != 1:
            raise RuntimeError(f"{name}1d: output_size must be 1")
        r = _adaptive(name, input.unsqueeze(-2), (1, out[0]), 2)
        return tuple(t.squeeze(-2) for t in r) if isinstance(r, tuple) else r.squeeze(-2)
    if isinstance(output_size, (list, tuple)):  # torch's _list_with_default
        if input.dim() <= len(output_size):
            raise ValueError(f"Input dimension should be at least {len(output_size) + 1}")
        output_size = tuple(input.shape[input.dim() - len(output_size) + i] if v is None else v
                            for i, v in enumerate(output_size))
    out = _pair(output_size, nd)
    attrs = {"output_size": _ints(out)}
    if name == "adaptive_max_pool":
        return tuple(_run_n(f"adaptive_max_pool{nd}d", [input], attrs, 2))
    return _run(f"adaptive_avg_pool{nd}d", [("self", input)], attrs)


def adaptive_avg_pool2d(input, output_size):
    return _adaptive("adaptive_avg_pool", input, output_size, 2)


def adaptive_avg_pool1d(input, output_size):
    return _adaptive("adaptive_avg_pool", input, output_size, 1)


def adaptive_max_pool2d(input, output_size, return_indices=False):
    values, indices = _adaptive("adaptive_max_pool", input, output_size, 2)
    return (values, indices) if return_indices else values


def adaptive_max_pool1d(input, output_size, return_indices=False):
    values, indices = _adaptive("adaptive_max_pool", input, output_size, 1)
    return (values, indices) if return_indices else values


def adaptive_avg_pool3d(input, output_size):
    return _adaptive("adaptive_avg_pool", input, output_size, 3)


def adaptive_max_pool3d(input, output_size, return_indices=False):
    values, indices = _adaptive("adaptive_max_pool", input, output_size, 3)
    return (values, indices) if return_indices else values


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=False):
    return adaptive_max_pool3d(input, output_size, True)


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):
    return adaptive_max_pool2d(input, output_size, True)


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=False):
    return adaptive_max_pool1d(input, output_size, True)



def _fractional_starts(samples, size, out, pool):
    """Where each of `out` windows of `pool` starts along a dim of `size`, for every plane's
    sample u (samples: (N, C)), as ATen's generate_intervals computes them in the input's
    dtype: trunc((i + u) alpha) - trunc(u alpha) with alpha = (size - pool) / (out - 1), and
    the last window at the end (float32 for 16-bit samples). int64 (N, C, out)."""
    from .. import _factories  # noqa: PLC0415
    import numpy as np  # noqa: PLC0415
    last = _factories.full((*samples.shape, min(out, 1)), size - pool, dtype=_dtypes.int64,
                           device=samples.device, session=samples._session)
    if out <= 1:
        return last
    # alpha rounded as the kernel's scalar_t division rounds it (float32 or float64)
    # float64 in float64; every other dtype in float32 (ATen's CUDA kernel converts 16-bit
    # samples to float first)
    if samples.dtype is not _dtypes.float64:
        samples = samples.float()
    kind = np.float64 if samples.dtype is _dtypes.float64 else np.float32
    alpha = float(kind(size - pool) / kind(out - 1))
    i = _factories.arange(out - 1, dtype=samples.dtype, device=samples.device,
                          session=samples._session)
    u = samples.unsqueeze(-1)
    starts = ((i + u) * alpha).long() - (u * alpha).long()
    return _factories.cat([starts, last], -1)


def _fractional_max_pool(name, nd, input, kernel_size, output_size, output_ratio,
                         return_indices, _random_samples):
    """fractional_max_pool{2,3}d, torch's checks in torch's order and words, planned as a
    composition that runs on any device: the windows' starts from the samples (one per plane
    and dim: W then H for 2-d, T, H, W for 3-d), every window's flat positions, one gather, and
    the max with torch's choice of position (the first maximum; the last NaN, which wins)."""
    from .. import _factories  # noqa: PLC0415
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
    if output_size is None:
        ratio = _pair(output_ratio, nd)
        output_size = [int(input.size(-nd + d) * ratio[d]) for d in range(nd)]
    if _random_samples is None:
        n_batch = 1 if input.dim() == nd + 1 else input.size(0)
        _random_samples = _factories.rand(n_batch, input.size(-nd - 1), nd, dtype=input.dtype,
                                          device=input.device, session=input._session)
    pool, out = _pair(kernel_size, nd), _pair(output_size, nd)
    where = f"{name}()" if nd == 2 else f"{name}_out()"
    for what, v in (("kernel_size", pool), ("output_size", out)):
        if len(v) != nd:
            raise RuntimeError(f"{name}: {what} must either be a single Int or tuple of Ints")
    pool, out = [_operator.index(v) for v in pool], [_operator.index(v) for v in out]
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"{where}: Expected {nd + 1}D or {nd + 2}D tensor, but got: "
                           f"{list(input.shape)}")
    for d in range(1, input.dim()):
        if input.size(d) == 0:
            raise RuntimeError(f"{where}: Expected input to have non-zero size for non-batch "
                               f"dimensions, but got{list(input.shape)} with dimension {d} "
                               "being empty.")
    sizes = list(input.shape[-nd:])
    names = ("height", "width") if nd == 2 else ("time", "height", "width")
    for d in range(nd):
        if out[d] + pool[d] - 1 > sizes[d]:
            raise RuntimeError(f"{where}: pool {names[d]} {pool[d]} too large relative to input "
                               f"{names[d]} {sizes[d]}")
    # torch reads no window at all for a kernel size of 0 (and returns what it never wrote)
    if min(pool) <= 0:
        raise RuntimeError(f"{where}: kernel_size must be greater than zero, but got {pool}")
    batched = input.dim() == nd + 2
    x = input if batched else input.unsqueeze(0)
    n, c = x.size(0), x.size(1)
    if min(out) < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(out)}: "
                           f"{[n, c, *out] if batched else [c, *out]}")
    if x.dtype not in (_dtypes.float32, _dtypes.float64) and (
            x.device.type == "cpu" or not x.dtype.is_floating_point):
        raise RuntimeError(f'"{name}_out_frame" not implemented for '
                           f"'{x.dtype._legacy}'")
    if _random_samples.dtype is not x.dtype:
        raise RuntimeError(f"expected scalar type {x.dtype._legacy} but found "
                           f"{_random_samples.dtype._legacy}")
    # torch reads the samples unchecked (past their end when there are too few)
    if tuple(_random_samples.shape) != (n, c, nd):
        raise RuntimeError(f"{where}: Expected _random_samples of size {[n, c, nd]} (batch, "
                           f"channels, {nd}), but got {list(_random_samples.shape)}")
    samples = _random_samples.to(x.device)
    # which sample each dim reads: 2-d (W, H), 3-d (T, H, W)
    sample_of = (1, 0) if nd == 2 else (0, 1, 2)
    flat = None  # (N, C, out...) flat position of each window's first element in its plane
    for d in range(nd):
        starts = _fractional_starts(samples[:, :, sample_of[d]], sizes[d], out[d], pool[d])
        stride = _math.prod(sizes[d + 1:])
        starts = (starts * stride).view(n, c, *[out[d] if e == d else 1 for e in range(nd)])
        flat = starts if flat is None else flat + starts
    offsets = None  # (K,) each window element's flat offset, the last dim fastest
    for d in range(nd):
        step = _factories.arange(pool[d], device=x.device, session=x._session) * _math.prod(
            sizes[d + 1:])
        offsets = step if offsets is None else (offsets.unsqueeze(-1) + step).flatten()
    positions = flat.unsqueeze(-1) + offsets                           # (N, C, out..., K)
    k = offsets.numel()
    plane, window = _math.prod(sizes), positions.numel() // max(n * c, 1)
    values = x.reshape(n, c, plane).gather(2, positions.reshape(n, c, window))
    values = values.view(positions.shape)
    first_max = values.argmax(-1, keepdim=True)
    nan = values.isnan()
    last_nan = (k - 1) - nan.flip(-1).to(_dtypes.uint8).argmax(-1, keepdim=True)
    pick = _where(nan.any(-1, keepdim=True), last_nan, first_max)
    result = values.gather(-1, pick).squeeze(-1)
    indices = positions.gather(-1, pick).squeeze(-1)
    if not batched:
        result, indices = result.squeeze(0), indices.squeeze(0)
    return (result, indices) if return_indices else result


@_autocast.op("fractional_max_pool")
def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices=False, _random_samples=None):
    """A composition (see _fractional_max_pool); the window positions are gathered with
    checked indices."""
    return _fractional_max_pool("fractional_max_pool2d", 2, input, kernel_size, output_size,
                                output_ratio, return_indices, _random_samples)


@_autocast.op("fractional_max_pool")
def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices=False, _random_samples=None):
    return _fractional_max_pool("fractional_max_pool3d", 3, input, kernel_size, output_size,
                                output_ratio, return_indices, _random_samples)


def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None,
                                       output_ratio=None, return_indices=False,
                                       _random_samples=None):
    return fractional_max_pool2d(input, kernel_size, output_size, output_ratio, True,
                                 _random_samples)


def fractional_max_pool3d_with_indices(input, kernel_size, output_size=None,
                                       output_ratio=None, return_indices=False,
                                       _random_samples=None):
    return fractional_max_pool3d(input, kernel_size, output_size, output_ratio, True,
                                 _random_samples)

def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """torch's composition: the p-th root of the window sums of x^p (an average pool times the
    window's size), the sign kept as torch keeps it."""
    kw, kh = _pair(kernel_size, 2)
    out = avg_pool2d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return (out.sign() * out.abs().relu()).mul(kw * kh).pow(1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    out = avg_pool1d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return (out.sign() * out.abs().relu()).mul(kernel_size).pow(1.0 / norm_type)


def _like_input_format(input, out):
    """`out` in the memory format the input suggests (torch's pixel and channel shuffles keep
    it: channels_last, channels_last_3d)."""
    from .. import _memory_format as _mf  # noqa: PLC0415
    info = input._meta()
    fmt = _mf.suggest_memory_format(list(info.sizes), list(info.strides))
    return out if fmt is _mf.contiguous_format else out.contiguous(memory_format=fmt)


def _check_pixel_factor(input, name, what, r):
    if input.dim() < 3:
        raise RuntimeError(f"{name} expects input to have at least 3 dimensions, but got input "
                           f"with {input.dim()} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"{name} expects a positive {what}, but got {r}")


def pixel_shuffle(input, upscale_factor):
    _check_pixel_factor(input, "pixel_shuffle", "upscale_factor", upscale_factor)
    *lead, c, h, w = input.shape
    r = upscale_factor
    if c % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be "
                           f"divisible by the square of upscale_factor, but input.size(-3)={c} is "
                           f"not divisible by {r * r}")
    x = input.reshape(*lead, c // (r * r), r, r, h, w)
    n = len(lead)
    x = x.permute(*range(n), n, n + 3, n + 1, n + 4, n + 2)
    return _like_input_format(input, x.reshape(*lead, c // (r * r), h * r, w * r))


def pixel_unshuffle(input, downscale_factor):
    _check_pixel_factor(input, "pixel_unshuffle", "downscale_factor", downscale_factor)
    *lead, c, h, w = input.shape
    r = downscale_factor
    for side, n, d in (("height", h, -2), ("width", w, -1)):
        if n % r:
            raise RuntimeError(f"pixel_unshuffle expects {side} to be divisible by "
                               f"downscale_factor, but input.size({d})={n} is not divisible by {r}")
    x = input.reshape(*lead, c, h // r, r, w // r, r)
    n = len(lead)
    x = x.permute(*range(n), n, n + 2, n + 4, n + 1, n + 3)
    return _like_input_format(input, x.reshape(*lead, c * r * r, h // r, w // r))


def channel_shuffle(input, groups):
    n, c = input.shape[0], input.shape[1]
    rest = tuple(input.shape[2:])
    out = input.reshape(n, groups, c // groups, *rest).transpose(1, 2).reshape(n, c, *rest)
    return _like_input_format(input, out)


native_channel_shuffle = channel_shuffle


def _grid_steps(n, align_corners, like):
    """torch's linspace_from_neg_one: n points over [-1, 1] (pulled in by (n - 1) / n unless
    align_corners), in theta's dtype on its device."""
    from .. import _factories  # noqa: PLC0415
    if n <= 1:
        return _factories.zeros(1, dtype=like.dtype, device=like.device, session=like._session)
    steps = _factories.linspace(-1, 1, n, dtype=like.dtype, device=like.device,
                                session=like._session)
    return steps if align_corners else steps * ((n - 1) / n)


def _align_corners_default(align_corners):
    """affine_grid's and grid_sample's align_corners: None warns, as torch's, and means False."""
    if align_corners is None:
        _warnings.warn("Default grid_sample and affine_grid behavior has changed to "
                       "align_corners=False since 1.3.0. Please specify align_corners=True if the "
                       "old behavior is desired. See the documentation of grid_sample for "
                       "details.")
        return False
    return align_corners


def affine_grid(theta, size, align_corners=None):
    """torch's affine_grid_generator: the base grid of (x, y[, z], 1) points times theta's
    transpose, one batched product on the server."""
    align_corners = _align_corners_default(align_corners)
    if not theta.dtype.is_floating_point:
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    if len(size) == 4:
        if theta.dim() != 3 or theta.shape[-2] != 2 or theta.shape[-1] != 3:
            raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size "
                             f"{size}. Got {theta.shape}.")
        spatial = list(size[-2:])
    elif len(size) == 5:
        if theta.dim() != 3 or theta.shape[-2] != 3 or theta.shape[-1] != 4:
            raise ValueError(f"Expected a batch of 3D affine matrices of shape Nx3x4 for size "
                             f"{size}. Got {theta.shape}.")
        spatial = list(size[-3:])
    else:
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D "
                                  f"affine transforms, respectively. Got size {size}.")
    if align_corners and min(spatial) == 1:
        _warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size "
                       "grids when align_corners=True. This is not an intended use case of "
                       "affine_grid. See the documentation of affine_grid for details.")
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    n = size[0]
    dims = len(spatial)
    # One axis per spatial dim, x (the last) first, each broadcast over the grid, then ones.
    axes = []
    for k in range(dims):
        length = spatial[dims - 1 - k]
        shape = [1] * dims
        shape[dims - 1 - k] = length if length > 1 else 1
        axes.append(_grid_steps(length, align_corners, theta).reshape(shape)
                    .expand(*spatial))
    axes.append(theta.new_ones(tuple(spatial)))
    from .. import _factories  # noqa: PLC0415
    base = _factories.stack(axes, -1).reshape(1, -1, dims + 1).expand(n, -1, dims + 1)
    grid = base.bmm(theta.transpose(1, 2))
    return grid.reshape(n, *spatial, dims)




def _unpool_output_size(input, kernel_size, stride, padding, output_size):
    """torch's: the default output size, or `output_size` (optionally with N and C) when it
    lies strictly within a stride of it."""
    n = len(kernel_size)
    default = [(input.shape[-n + d] - 1) * stride[d] + kernel_size[d] - 2 * padding[d]
               for d in range(n)]
    if output_size is None:
        return default
    output_size = list(output_size)
    if len(output_size) == n + 2:
        output_size = output_size[2:]
    if len(output_size) != n:
        raise ValueError(f"output_size should be a sequence containing {n} or {n + 2} elements, "
                         f"but it has a length of '{len(output_size)}'")
    for d in range(n):
        lo, hi = default[d] - stride[d], default[d] + stride[d]
        if not lo < output_size[d] < hi:
            raise ValueError(f'invalid output_size "{tuple(output_size)}" (dim {d} must be '
                             f'between {lo} and {hi})')
    return output_size


def _max_unpool(nd, input, indices, kernel_size, stride, padding, output_size):
    kernel_size = _pair(kernel_size, nd)
    stride = kernel_size if stride is None else _pair(stride, nd)
    size = _unpool_output_size(input, kernel_size, stride, _pair(padding, nd), output_size)
    return _run(f"max_unpool{nd}d", [("self", input), ("indices", indices)],
                {"output_size": _ints(size)})


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """One server op (max_unpool2d over a unit last dim, as torch's)."""
    kernel_size = _pair(kernel_size, 1)
    stride = kernel_size if stride is None else _pair(stride, 1)
    size = _unpool_output_size(input, kernel_size, stride, _pair(padding, 1), output_size)
    return _run("max_unpool2d", [("self", input.unsqueeze(-1)),
                                 ("indices", indices.unsqueeze(-1))],
                {"output_size": _ints(list(size) + [1])}).squeeze(-1)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """One server op (engine/ops/pool_ops.cc): a scatter into zeros."""
    return _max_unpool(2, input, indices, kernel_size, stride, padding, output_size)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """One server op (engine/ops/pool_ops.cc): a scatter into zeros."""
    return _max_unpool(3, input, indices, kernel_size, stride, padding, output_size)


_GRID_MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
_GRID_PADDINGS = {"zeros": 0, "border": 1, "reflection": 2}


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """torch.nn.functional.grid_sample: one server op (grid_sampler,
    engine/ops/grid_sample_ops.cc)."""
    if mode not in _GRID_MODES:
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', "
                         f"'nearest' or 'bicubic', but got: '{mode}'")
    if padding_mode not in _GRID_PADDINGS:
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
                         f"'border', or 'reflection', but got: '{padding_mode}'")
    align_corners = _align_corners_default(align_corners)
    return grid_sampler(input, grid, _GRID_MODES[mode], _GRID_PADDINGS[padding_mode],
                        align_corners)


def grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners):
    """torch.grid_sampler: modes as numbers (0 bilinear, 1 nearest, 2 bicubic; 0 zeros,
    1 border, 2 reflection)."""
    return _run("grid_sampler", [("input", input), ("grid", grid)],
                {"interpolation_mode": int(interpolation_mode),
                 "padding_mode": int(padding_mode), "align_corners": bool(align_corners)})


@_autocast.op("cuda_fp32")
def pdist(input, p=2):
    """The p-norm distance of each pair of rows i < j, in row-major order of the pairs: the
    rows gathered by triu_indices (a server factory op) and their differences' norms."""
    if input.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.dim()}D")
    if not input.dtype.is_floating_point:
        raise RuntimeError("pdist only supports floating-point dtypes")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    n = input.size(0)
    from .. import _composite  # noqa: PLC0415
    pairs = _composite.triu_indices(n, n, 1, device=input.device, session=input._session)
    a, b = input.index_select(0, pairs[0]), input.index_select(0, pairs[1])
    out = (a - b).norm(p, 1)
    _graph.name_node(out, None, "PdistBackward0")
    return out


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """torch.nn.functional.interpolate, with torch 1.13's argument rules; the resampling is one
    server op (upsample, engine/ops/upsample_ops.cc), area mode adaptive average pooling."""
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating modes: "
                             "linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    dim = input.dim() - 2
    scale_factors = None
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError("Input and output must have the same number of spatial "
                                 "dimensions, but got input with spatial dimensions of "
                                 f"{list(input.shape[2:])} and output size of {size}. Please "
                                 "provide input tensor in (N, C, d1, d2, ...,dK) format and "
                                 "output size in (o1, o2, ...,oK) format.")
            output_size = [int(v) for v in size]
        else:
            output_size = [int(size)] * dim
    elif scale_factor is not None:
        output_size = None
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != dim:
                raise ValueError("Input and scale_factor must have the same number of spatial "
                                 "dimensions, but got input with spatial dimensions of "
                                 f"{list(input.shape[2:])} and scale_factor of shape "
                                 f"{scale_factor}. Please provide input tensor in (N, C, d1, d2, "
                                 "...,dK) format and scale_factor in (s1, s2, ...,sK) format.")
            scale_factors = [float(v) for v in scale_factor]
        else:
            scale_factors = [float(scale_factor)] * dim
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if mode == "area" and output_size is None:
        recompute_scale_factor = True
    if recompute_scale_factor:
        output_size = [_math.floor(float(input.shape[i + 2]) * scale_factors[i])
                       for i in range(dim)]
        scale_factors = None
    if antialias and not (mode in ("bilinear", "bicubic") and input.dim() == 4):
        raise ValueError("Anti-alias option is only supported for bilinear and bicubic modes")
    if antialias:
        raise NotImplementedError("tensord: interpolate(antialias=True) is not implemented")
    wants = {"nearest": None, "nearest-exact": None, "area": None, "linear": 3, "bilinear": 4,
             "bicubic": 4, "trilinear": 5}
    if mode in wants and (wants[mode] in (None, input.dim())) and input.dim() in (3, 4, 5):
        if output_size is None:  # torch: floor of size times scale, the scale passed on
            output_size = [int(input.shape[i + 2] * scale_factors[i]) for i in range(dim)]
        if mode == "area":
            pool = (adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d)[dim - 1]
            return pool(input, output_size)
        attrs = {"output_size": _ints(output_size), "mode": mode,
                 "align_corners": bool(align_corners)}
        for name, value in zip(("scales_d", "scales_h", "scales_w")[3 - dim:],
                               scale_factors or [None] * dim):
            if value is not None:
                attrs[name] = value
        return _run("upsample", [("self", input)], attrs)
    if mode in ("bilinear", "trilinear", "linear") and input.dim() in (3, 4, 5):
        raise NotImplementedError(f"Got {input.dim()}D input, but {mode} mode needs "
                                  f"{wants[mode]}D input")
    raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got "
                              f"{input.dim()}D) for the modes: nearest | linear | bilinear | "
                              f"bicubic | trilinear | area | nearest-exact (got {mode})")


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    _warnings.warn("nn.functional.upsample is deprecated. Use nn.functional.interpolate instead.")
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    _warnings.warn("nn.functional.upsample_nearest is deprecated. Use nn.functional.interpolate "
                   "instead.")
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    _warnings.warn("nn.functional.upsample_bilinear is deprecated. Use nn.functional.interpolate "
                   "instead.")
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


# ---- More activations and losses -------------------------------------------------------------------

def prelu(input, weight):
    """torch 1.13's checks (the weight's dtype, its size against the channels), then
    max(0, x) + weight * min(0, x) per channel, contiguous."""
    if _autocast.active and _autocast.applies("prelu", (input, weight)):
        return _autocast.run("prelu", prelu, (input, weight))
    _no_cpu_half(input, "prelu_cpu")
    if weight.dtype is not input.dtype and not (input.dtype is _dtypes.bfloat16 and
                                                weight.dtype is _dtypes.float32):
        raise RuntimeError(f"Found dtype {weight.dtype._legacy} but expected "
                           f"{input.dtype._legacy}")
    channels = input.size(1) if input.dim() >= 2 else 1
    if weight.numel() not in (1, channels):
        raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found "
                           f"parameter numbers = {weight.numel()} and channel size = {channels}.")
    input, weight = input.contiguous(), weight.to(input.dtype)
    if input.dim() >= 2 and weight.numel() > 1:
        shape = [1, -1] + [1] * (input.dim() - 2)
        weight = weight.view(shape)
    # torch's kernel: x > 0 ? x : weight * x (its gradient at 0 and at NaN is weight * g)
    out = _where(input > 0, input, input * weight)
    _graph.name_node(out, None, "PreluBackward0")
    return out


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    if training:
        slope = input.new_empty(tuple(input.shape)).uniform_(lower, upper)
        out = _where(input >= 0, input, input * slope)
    else:
        out = input.contiguous().leaky_relu((lower + upper) / 2)
    if inplace:
        return input.copy_(out)
    _graph.name_node(out, None, "RreluWithNoiseBackward0")
    return out


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    return rrelu(input, lower, upper, training, inplace=True)


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    _check_dropout_p(p)
    return _aten_dropout(input, p, training, feature=False, alpha=True, inplace=inplace)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    """alpha_dropout of whole channels: one draw per (sample, channel)."""
    _check_dropout_p(p)
    return _aten_dropout(input, p, training, feature=True, alpha=True, inplace=inplace)


# ---- torch's own dropout kernels (torch.dropout, torch.feature_alpha_dropout_, …) ----------

_ALPHA_DROPOUT = 1.7580993408473766  # SELU's alpha times its scale


def _aten_dropout(input, p, train, feature, alpha, inplace):
    """ATen's dropout family: p checked (a RuntimeError), input itself when nothing drops, zeros
    for p = 1; feature forms draw one mask value per (sample, channel), alpha forms keep the
    mean and variance of SELU activations (dropped values go to SELU's negative limit)."""
    if not 0 <= p <= 1:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p:g}")
    if p == 0 or not train or input.numel() == 0:
        return input
    if p == 1:
        return input.mul_(0) if inplace else input * 0
    if feature and input.dim() < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"result type Float can't be cast to the desired output type "
                           f"{input.dtype._legacy}")
    if not alpha:
        return _dropped(input, p, 2 if feature else None, inplace)
    shape = tuple(input.shape)
    if feature:
        shape = shape[:2] + (1,) * (len(shape) - 2)
    keep = input.new_empty(shape).bernoulli_(1 - p)
    a = 1.0 / _math.sqrt((_ALPHA_DROPOUT * _ALPHA_DROPOUT * p + 1) * (1 - p))
    b = (keep - 1) * (_ALPHA_DROPOUT * a) + _ALPHA_DROPOUT * a * p
    out = input * (keep * a) + b
    return input.copy_(out) if inplace else out


def _aten_dropout_fn(name, feature, alpha, inplace):
    def f(input, p, train):
        return _aten_dropout(input, p, train, feature, alpha, inplace)
    f.__name__ = name
    f.__doc__ = f"torch.{name}(input, p, train)"
    return f


def native_dropout(input, p, train):
    """torch.native_dropout: (output, mask). Training (train True or None): the kept elements
    scaled by 1 / (1 - p) and the bool mask of them; otherwise a copy of input and an all-true
    mask. Both are laid out as input."""
    if input.numel() == 0:
        return input, input.new_empty(tuple(input.shape))
    if train is None or train:
        keep = 1.0 - p
        if not 0 <= keep <= 1:
            raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={keep:g}")
        if not input.dtype.is_floating_point:
            raise RuntimeError(f"result type Float can't be cast to the desired output type "
                               f"{input.dtype._legacy}")
        noise = input.clone().bernoulli_(keep)
        return input * noise * (0.0 if keep == 0 else 1.0 / keep), noise.bool()
    return input.clone(), input.to(_dtypes.bool_, copy=True).fill_(True)


# ---- torch's native normalisation kernels: the output and the statistics they save ----------

def _stats(x, dims, eps, dtype):
    """Mean and 1 / sqrt(biased variance + eps) over dims (kept), in float32 at least."""
    if x.dtype.itemsize < 4:
        x = x.float()
    mean = x.mean(dims, keepdim=True)
    rstd = (x.var(dims, unbiased=False, keepdim=True) + eps).rsqrt()
    return mean.to(dtype), rstd.to(dtype)


def native_layer_norm(input, normalized_shape, weight, bias, eps):
    """torch.native_layer_norm: (layer_norm's output, mean, rstd), the statistics of each
    normalised row shaped as input with the normalised dims of size 1."""
    if not isinstance(normalized_shape, (list, tuple)):
        raise TypeError(f"native_layer_norm(): argument 'normalized_shape' (position 2) must be "
                        f"tuple of SymInts, not {type(normalized_shape).__name__}")
    shape = [int(s) for s in normalized_shape]
    output = layer_norm(input, shape, weight, bias, eps)
    lead = list(input.shape[:input.dim() - len(shape)])
    rows = input.contiguous().reshape(lead + [-1])
    mean, rstd = _stats(rows, -1, eps, input.dtype)
    stat_shape = lead + [1] * len(shape)
    return output, mean.view(stat_shape), rstd.view(stat_shape)


def native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    """torch.native_group_norm: input read as (N, C, HxW); (group_norm's output, shaped as
    input, and the mean and rstd of each (sample, group), of shape (N, group))."""
    if group <= 0:
        raise RuntimeError(f"Expected num groups to be greater than 0, got {group}")
    if C % group:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, "
                           f"but got input of shape {list(input.shape)} and num_groups={group}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.dim() != 1 or t.numel() != C):
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of "
                               f"channels in input, but got {name} of shape {list(t.shape)} and "
                               f"input of shape {list(input.shape)}")
    if input.numel() != N * C * HxW:
        raise RuntimeError("Expected X.numel() == N * C * HxW to be true, but got false.  (Could "
                           "this error message be improved?  If so, please report an enhancement "
                           "request to PyTorch.)")
    x = input.reshape(N, C, HxW)
    output = _run("group_norm", [("input", x), ("weight", weight), ("bias", bias)],
                  {"num_groups": int(group), "eps": float(eps)})
    mean, rstd = _stats(x.reshape(N, group, -1), -1, eps, input.dtype)
    return output.reshape(tuple(input.shape)), mean.view(N, group), rstd.view(N, group)


def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    """torch.native_batch_norm: (batch_norm's output, save_mean, save_invstd). Training: the
    batch's mean and 1 / sqrt(biased var + eps) per channel (the running statistics updated in
    place, as batch_norm); otherwise two empty tensors."""
    if input.dim() < 2:
        raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but got 1)")
    output = _run("batch_norm", [("input", input), ("running_mean", running_mean),
                                 ("running_var", running_var), ("weight", weight),
                                 ("bias", bias)],
                  {"training": bool(training), "momentum": float(momentum), "eps": float(eps)})
    dtype = running_mean.dtype if running_mean is not None else input.dtype
    if not training:
        return output, input.new_empty((0,), dtype=dtype), input.new_empty((0,), dtype=dtype)
    dims = [0] + list(range(2, input.dim()))
    mean, invstd = _stats(input, dims, eps, dtype)
    return output, mean.reshape(-1), invstd.reshape(-1)


# ---- Recurrent cells: one step each, as torch's (gates in torch's order) --------------------

def _cell_input(input, w_ih):
    if input.size(1) != w_ih.size(1):
        raise RuntimeError(f"input has inconsistent input_size: got {input.size(1)} expected "
                           f"{w_ih.size(1)}")


def _cell_hidden(input, hx, w_hh):
    if input.size(0) != hx.size(0):
        raise RuntimeError(f"Input batch size {input.size(0)} doesn't match hidden0 batch size "
                           f"{hx.size(0)}")
    if hx.size(1) != w_hh.size(1):
        raise RuntimeError(f"hidden0 has inconsistent hidden_size: got {hx.size(1)}, expected "
                           f"{w_hh.size(1)}")


def _floating_gates(gates):
    if not gates.dtype.is_floating_point:  # torch's in-place sigmoid_ on integer gates
        raise RuntimeError(f"result type Float can't be cast to the desired output type "
                           f"{gates.dtype._legacy}")
    return gates


def rnn_tanh_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """torch.rnn_tanh_cell: tanh(hx W_hh^T + b_hh + input W_ih^T + b_ih)."""
    if _autocast.active and _autocast.applies("rnn_cell", (input, hx, w_ih, w_hh, b_ih, b_hh)):
        return _autocast.run("rnn_cell", rnn_tanh_cell, (input, hx, w_ih, w_hh, b_ih, b_hh))
    _cell_input(input, w_ih)
    _cell_hidden(input, hx, w_hh)
    return (linear(hx, w_hh, b_hh) + linear(input, w_ih, b_ih)).tanh()


def rnn_relu_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """torch.rnn_relu_cell: relu(hx W_hh^T + b_hh + input W_ih^T + b_ih)."""
    if _autocast.active and _autocast.applies("rnn_cell", (input, hx, w_ih, w_hh, b_ih, b_hh)):
        return _autocast.run("rnn_cell", rnn_relu_cell, (input, hx, w_ih, w_hh, b_ih, b_hh))
    _cell_input(input, w_ih)
    _cell_hidden(input, hx, w_hh)
    return (linear(hx, w_hh, b_hh) + linear(input, w_ih, b_ih)).relu()


def lstm_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """torch.lstm_cell: hx = (h, c); the gates (input, forget, cell, output, in that order along
    dim 1 of the weights) give c' = f c + i g and h' = o tanh(c'); returns (h', c')."""
    if _autocast.active and _autocast.applies("rnn_cell", (input, hx, w_ih, w_hh, b_ih, b_hh)):
        return _autocast.run("rnn_cell", lstm_cell, (input, hx, w_ih, w_hh, b_ih, b_hh))
    if not isinstance(hx, (list, tuple)):
        raise TypeError(f"lstm_cell(): argument 'hx' (position 2) must be tuple of Tensors, not "
                        f"{type(hx).__name__}")
    if len(hx) != 2:
        raise RuntimeError("lstm_cell expects two hidden states")
    h, c = hx
    _cell_input(input, w_ih)
    _cell_hidden(input, h, w_hh)
    _cell_hidden(input, c, w_hh)
    return _lstm_gates(_floating_gates(linear(h, w_hh, b_hh) + linear(input, w_ih, b_ih)), c)


def _lstm_gates(gates, cx):
    """One LSTM step from its summed gates (input, forget, cell, output): (h', c')."""
    i, f, g, o = gates.chunk(4, 1)
    cy = f.sigmoid() * cx + i.sigmoid() * g.tanh()
    return o.sigmoid() * cy.tanh(), cy


def gru_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """torch.gru_cell: reset, update and new gates (in that order along dim 1 of the weights):
    n = tanh(i_n + r h_n), h' = (hx - n) z + n."""
    if _autocast.active and _autocast.applies("rnn_cell", (input, hx, w_ih, w_hh, b_ih, b_hh)):
        return _autocast.run("rnn_cell", gru_cell, (input, hx, w_ih, w_hh, b_ih, b_hh))
    _cell_input(input, w_ih)
    _cell_hidden(input, hx, w_hh)
    return _gru_gates(_floating_gates(linear(input, w_ih, b_ih)), linear(hx, w_hh, b_hh), hx)


def _gru_gates(igates, hgates, hx):
    """One GRU step from the input's and the hidden state's gates (reset, update, new)."""
    i_r, i_z, i_n = igates.chunk(3, 1)
    h_r, h_z, h_n = hgates.chunk(3, 1)
    r = (h_r + i_r).sigmoid()
    z = (h_z + i_z).sigmoid()
    n = (i_n + h_n * r).tanh()
    return (hx - n) * z + n


# ---- torch.convolution and torch.conv_tbc ----------------------------------------------------

def _conv_param(name, value, n):
    """A list of one value (for every spatial dim) or of n, as torch's expand_param_if_needed."""
    value = list(value)
    if len(value) == 1:
        return value * n
    if len(value) != n:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of {n} values "
                           f"to match the convolution dimensions, but got {name}={value}")
    return value


def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding,
                groups):
    """torch.convolution: conv1d/2d/3d, or conv_transpose1d/2d/3d when transposed, chosen by
    weight's dims; stride, padding, dilation and output_padding are lists."""
    for position, name, value in ((4, "stride", stride), (5, "padding", padding),
                                  (6, "dilation", dilation), (8, "output_padding",
                                                              output_padding)):
        if not isinstance(value, (list, tuple)):
            raise TypeError(f"convolution(): argument '{name}' (position {position}) must be "
                            f"tuple of ints, not {type(value).__name__}")
    if not isinstance(transposed, bool):
        raise TypeError(f"convolution(): argument 'transposed' (position 7) must be bool, not "
                        f"{type(transposed).__name__}")
    if isinstance(groups, bool) or not isinstance(groups, int):
        raise TypeError(f"convolution(): argument 'groups' (position 9) must be int, not "
                        f"{type(groups).__name__}")
    k = weight.dim()
    if k < 3:
        raise RuntimeError("weight should have at least three dimensions")
    if k > 5:
        raise RuntimeError("unsupported ConvNd parameters")
    n = k - 2
    stride = _conv_param("stride", stride, n)
    padding = _conv_param("padding", padding, n)
    dilation = _conv_param("dilation", dilation, n)
    output_padding = _conv_param("output_padding", output_padding, n)
    if input.dim() != k:
        raise RuntimeError(f"Expected {k}-dimensional input for {k}-dimensional weight "
                           f"{list(weight.shape)}, but got {input.dim()}-dimensional input of "
                           f"size {list(input.shape)} instead")
    if transposed:
        fn = (conv_transpose1d, conv_transpose2d, conv_transpose3d)[n - 1]
        return fn(input, weight, bias, stride, padding, output_padding, groups, dilation)
    fn = (conv1d, conv2d, conv3d)[n - 1]
    return fn(input, weight, bias, stride, padding, dilation, groups)


def conv_tbc(input, weight, bias, pad=0):
    """torch.conv_tbc: a convolution over time of a (time, batch, in_channels) input with a
    (kernel_width, in_channels, out_channels) weight, zero-padded by pad on both ends (a negative
    pad trims); conv1d on the permuted tensors, returned as (time, batch, out_channels)."""
    if _autocast.active and _autocast.applies("conv_tbc", (input, weight, bias)):
        return _autocast.run("conv_tbc", conv_tbc, (input, weight, bias, pad))
    if not isinstance(bias, Tensor):
        raise TypeError(f"conv_tbc(): argument 'bias' (position 3) must be Tensor, not "
                        f"{type(bias).__name__}")
    if input.dim() != 3:
        raise RuntimeError("Input must have 3 dims: time, batch, in_channel")
    if weight.dim() != 3:
        raise RuntimeError("Weight tensor must have 3 dims: kernel_width, in_channels, "
                           "out_channels.")
    if bias.dim() != 1:
        raise RuntimeError("Bias must be 1-D")
    if input.size(2) != weight.size(1):
        raise RuntimeError("Input dim 2 (input channels) is not == dim 1 in the weight tensor")
    if weight.size(2) != bias.size(0):
        raise RuntimeError("Bias size must equal dim 2 in the weight tensor (output channels).")
    length, batch, out_channels = input.size(0), input.size(1), weight.size(2)
    out_length = length - weight.size(0) + 1 + 2 * pad
    if out_length < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {out_length}: "
                           f"[{out_length}, {batch}, {out_channels}]")
    if out_length == 0:
        return input.new_empty((0, batch, out_channels))
    x = input.permute(1, 2, 0)
    if pad < 0:
        x, pad = x.narrow(2, -pad, length + 2 * pad), 0
    out = conv1d(x, weight.permute(2, 1, 0), bias, padding=pad)
    return out.permute(2, 0, 1).contiguous().view(out_length, batch, out_channels)


@_autocast.op("margin_ranking_loss")
def margin_ranking_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None,
                        reduction="mean"):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if not input1.dim() == input2.dim() == target.dim():
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension "
                           f"but got sizes: input1: {input1.size()}, input2: {input2.size()}, "
                           f"target: {target.size()} ")
    return _reduce((-target * (input1 - input2) + margin).clamp_min(0), reduction)


@_autocast.op("hinge_embedding_loss")
def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None,
                         reduction="mean"):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    zero = input.new_zeros(())
    margin_part = _where(target != 1, (margin - input).clamp_min(0), zero)
    self_part = _where(target != -1, input, zero)
    return _reduce(margin_part + self_part, reduction)


@_autocast.op("cosine_embedding_loss")
def cosine_embedding_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None,
                          reduction="mean"):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    eps = 1e-12
    dim = input1.dim() - 1
    prod = (input1 * input2).sum(dim)
    m1 = (input1 * input1).sum(dim) + eps
    m2 = (input2 * input2).sum(dim) + eps
    cos = prod / (m1 * m2).sqrt()
    zero = cos.new_zeros(())
    loss = _where(target == 1, 1 - cos, zero) + _where(target == -1, (cos - margin).clamp_min(0),
                                                       zero)
    return _reduce(loss, reduction)


@_autocast.op("poisson_nll_loss")
def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8,
                     reduce=None, reduction="mean"):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    loss = input.exp() - target * input if log_input else input - target * (input + eps).log()
    if full:
        stirling = target * target.log() - target + 0.5 * (2 * _math.pi * target).log()
        loss = loss + _where(target > 1, stirling, stirling.new_zeros(()))
    return _reduce(loss, reduction)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    if tuple(var.shape) != tuple(input.shape):  # torch's homoscedastic cases, else ValueError
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)
        elif not (tuple(input.shape[:-1]) == tuple(var.shape[:-1]) and var.dim() and
                  var.size(-1) == 1):
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    if bool((var < 0).any().item()):
        raise ValueError("var has negative entry/entries")
    var = var.clamp_min(eps)
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * _math.log(2 * _math.pi)
    return _reduce(loss, reduction)


@_autocast.op("triplet_margin_loss")
def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False,
                        size_average=None, reduce=None, reduction="mean"):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = d_neg.minimum(pairwise_distance(positive, negative, p, eps))
    return _reduce((d_pos - d_neg + margin).clamp_min(0), reduction)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None,
                                      margin=1.0, swap=False, reduction="mean"):
    distance = pairwise_distance if distance_function is None else distance_function
    d_pos = distance(anchor, positive)
    d_neg = distance(anchor, negative)
    if swap:
        d_neg = d_neg.minimum(distance(positive, negative))
    return _reduce((margin + d_pos - d_neg).clamp_min(0), reduction)


@_autocast.op("multi_margin_loss")
def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None,
                      reduce=None, reduction="mean"):
    """Σ_{j != y} max(0, margin - x[y] + x[j])^p / C per sample (weighted by weight[y])."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    if input.dim() > 2:
        raise RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch size, "
                           f"but got: {list(input.shape)}")
    x = input if input.dim() == 2 else input.reshape(1, -1)
    t = target.reshape(-1, 1)
    if t.size(0) != x.size(0):
        raise RuntimeError(f"inconsistent target size, expected {x.size(0)} but got "
                           f"{list(target.shape)}")
    z = (x - x.gather(1, t) + margin).clamp_min(0)
    if p == 2:
        z = z * z
    if weight is not None:
        z = z * weight.index_select(0, t.reshape(-1)).unsqueeze(1)
    loss = z.scatter(1, t, 0.0).sum(1) / x.size(1)
    if input.dim() < 2:
        loss = loss.reshape(tuple(target.shape))
    return _reduce(loss, reduction)


@_autocast.op("multilabel_margin_loss")
def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """Σ over target classes j (up to the first -1) and non-target classes i of
    max(0, 1 - (x[j] - x[i])) / C per sample."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if input.dim() > 2 or tuple(target.shape) != tuple(input.shape):
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of size: "
                           f"{list(input.shape)}")
    x = input if input.dim() == 2 else input.reshape(1, -1)
    t = target.reshape(tuple(x.shape))
    valid = (t >= 0).to(_dtypes.int64).cumprod(1)  # the targets before the first -1
    index = t.clamp_min(0)
    is_target = x.new_zeros(tuple(x.shape)).scatter_add(1, index, valid.to(x.dtype)) > 0
    xj = x.gather(1, index)  # (N, T)
    margins = (1 - (xj.unsqueeze(2) - x.unsqueeze(1))).clamp_min(0)  # (N, T, C)
    keep = valid.to(x.dtype).unsqueeze(2) * (~is_target).to(x.dtype).unsqueeze(1)
    loss = (margins * keep).sum((1, 2)) / x.size(1)
    if input.dim() < 2:
        loss = loss.reshape(())
    return _reduce(loss, reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None,
                                reduction="mean"):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    loss = loss.sum(input.dim() - 1) / input.size(-1)
    return _reduce(loss, reduction)


def bilinear(input1, input2, weight, bias=None):
    """torch's bilinear: input1 W input2 + bias, one matmul and a reduction over the second
    input's features."""
    if _autocast.active and _autocast.applies("bilinear", (input1, input2, weight, bias)):
        return _autocast.run("bilinear", bilinear, (input1, input2, weight, bias))
    o, i1, i2 = weight.shape
    tmp = input1.matmul(weight.permute(1, 0, 2).reshape(i1, o * i2))
    out = (tmp.view(*input1.shape[:-1], o, i2) * input2.unsqueeze(-2)).sum(-1)
    return out if bias is None else out + bias


def gumbel_softmax(logits, tau=1, hard=False, eps=1e-10, dim=-1):
    u = logits.new_empty(tuple(logits.shape)).uniform_()
    gumbels = -(-(u.clamp_min(1e-20)).log()).log()
    soft = ((logits + gumbels) / tau).softmax(dim)
    if not hard:
        return soft
    index = soft.argmax(dim, keepdim=True)
    return soft.new_zeros(tuple(soft.shape)).scatter_(dim, index, 1.0)


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    dim = input.dim()
    if dim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {dim} dimensions)")
    div = (input * input).unsqueeze(1)
    if dim == 3:
        div = pad(div, (0, 0, size // 2, (size - 1) // 2))
        div = avg_pool2d(div, (size, 1), stride=1).squeeze(1)
    else:
        sizes = input.shape
        div = div.view(sizes[0], 1, sizes[1], sizes[2], -1)
        div = pad(div, (0, 0, 0, 0, size // 2, (size - 1) // 2))
        n, _, cc, hh, rest = div.shape
        div = avg_pool2d(div.reshape(n, 1, cc, hh * rest), (size, 1), stride=1)
        div = div.squeeze(1).reshape(tuple(sizes))
    div = (div * alpha + k) ** beta
    return input / div


def _torch_namespace():
    """The functions torch also has at its top level (torch.conv2d, torch.layer_norm, …), with
    the argument orders of torch's own bindings where they differ from nn.functional's."""
    same = ["conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
            "conv_transpose3d", "max_pool1d", "max_pool2d", "max_pool3d", "avg_pool1d",
            "pdist", "native_channel_shuffle", "max_pool1d_with_indices",
            "adaptive_avg_pool1d", "adaptive_max_pool1d", "pixel_shuffle", "pixel_unshuffle",
            "channel_shuffle", "prelu", "rrelu", "rrelu_", "cosine_similarity",
            "pairwise_distance", "threshold", "threshold_", "bilinear", "hardshrink", "conv_tbc",
            "convolution", "native_layer_norm", "native_group_norm", "native_batch_norm",
            "native_dropout", "rnn_tanh_cell", "rnn_relu_cell", "lstm_cell", "gru_cell"]
    out = {name: globals()[name] for name in same if name in globals()}
    out["adaptive_max_pool1d"] = lambda input, output_size: adaptive_max_pool1d(
        input, output_size, return_indices=True)  # torch's binding returns both
    out["affine_grid_generator"] = lambda theta, size, align_corners: affine_grid(
        theta, size, align_corners)
    out["grid_sampler"] = grid_sampler

    def _grid_sampler_nd(nd):
        def sampler(input, grid, interpolation_mode, padding_mode, align_corners):
            if input.dim() != nd + 2 or grid.dim() != nd + 2:
                raise RuntimeError(f"grid_sampler(): expected {nd + 2}D input and grid with same "
                                   f"number of dimensions, but got input with sizes "
                                   f"{list(input.shape)} and grid with sizes {list(grid.shape)}")
            return grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners)
        sampler.__name__ = f"grid_sampler_{nd}d"
        return sampler
    out["grid_sampler_2d"] = _grid_sampler_nd(2)
    out["grid_sampler_3d"] = _grid_sampler_nd(3)
    out["rrelu_"] = lambda input, lower=1.0 / 8, upper=1.0 / 3, training=False: rrelu(
        input, lower, upper, training, inplace=True)
    for name, feature, alpha in (("dropout", False, False), ("alpha_dropout", False, True),
                                 ("feature_dropout", True, False),
                                 ("feature_alpha_dropout", True, True)):
        out[name] = _aten_dropout_fn(name, feature, alpha, inplace=False)
        out[name + "_"] = _aten_dropout_fn(name + "_", feature, alpha, inplace=True)
    out["embedding_bag"] = _aten_embedding_bag
    out["embedding_renorm_"] = _embedding_renorm_
    out["embedding"] = lambda weight, indices, padding_idx=-1, scale_grad_by_freq=False, \
        sparse=False: embedding(indices, weight)
    out["layer_norm"] = lambda input, normalized_shape, weight=None, bias=None, eps=1e-5, \
        cudnn_enable=True: layer_norm(input, normalized_shape, weight, bias, eps)
    out["group_norm"] = lambda input, num_groups, weight=None, bias=None, eps=1e-5, \
        cudnn_enabled=True: group_norm(input, num_groups, weight, bias, eps)
    out["batch_norm"] = lambda input, weight, bias, running_mean, running_var, training, \
        momentum, eps, cudnn_enabled=True: batch_norm(input, running_mean, running_var, weight,
                                                      bias, training, momentum, eps)
    out["instance_norm"] = lambda input, weight, bias, running_mean, running_var, \
        use_input_stats, momentum, eps, cudnn_enabled=True: instance_norm(
            input, running_mean, running_var, weight, bias, use_input_stats, momentum, eps)
    out["constant_pad_nd"] = lambda input, pad, value=0: _run(
        "constant_pad_nd", [("input", input)], {"pad": _ints(pad), "value": value})
    # torch's top-level losses take the reduction as an enum (0 none, 1 mean, 2 sum), and torch
    # 1.13's bindings read their declared default as 0: unreduced unless one is given.
    red = ("none", "mean", "sum")
    out["ctc_loss"] = lambda log_probs, targets, input_lengths, target_lengths, blank=0, \
        reduction=0, zero_infinity=False: ctc_loss(log_probs, targets, input_lengths,
                                                   target_lengths, blank, red[reduction],
                                                   zero_infinity)
    out["kl_div"] = lambda input, target, reduction=0, *, log_target=False: kl_div(
        input, target, reduction=red[reduction], log_target=log_target)
    out["binary_cross_entropy_with_logits"] = lambda input, target, weight=None, \
        pos_weight=None, reduction=0: binary_cross_entropy_with_logits(
            input, target, weight, reduction=red[reduction], pos_weight=pos_weight)
    out["hinge_embedding_loss"] = lambda input, target, margin=1.0, reduction=0: \
        hinge_embedding_loss(input, target, margin, reduction=red[reduction])
    out["margin_ranking_loss"] = lambda input1, input2, target, margin=0.0, reduction=0: \
        margin_ranking_loss(input1, input2, target, margin, reduction=red[reduction])
    out["cosine_embedding_loss"] = lambda input1, input2, target, margin=0.0, reduction=0: \
        cosine_embedding_loss(input1, input2, target, margin, reduction=red[reduction])
    out["poisson_nll_loss"] = lambda input, target, log_input, full, eps, reduction: \
        poisson_nll_loss(input, target, log_input, full, eps=eps, reduction=red[reduction])
    out["triplet_margin_loss"] = lambda anchor, positive, negative, margin=1.0, p=2, \
        eps=1e-6, swap=False, reduction=0: triplet_margin_loss(
            anchor, positive, negative, margin, p, eps, swap, reduction=red[reduction])
    return out


# ---- Multi-head attention (torch 1.13's math form) --------------------------------------------

def _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads):
    """Whether the inputs are batched (3-d query) or not (2-d), with torch's assertions."""
    if query.dim() == 3:
        assert key.dim() == 3 and value.dim() == 3, (
            "For batched (3-D) `query`, expected `key` and `value` to be 3-D but found "
            f"{key.dim()}-D and {value.dim()}-D tensors respectively")
        if key_padding_mask is not None:
            assert key_padding_mask.dim() == 2, (
                "For batched (3-D) `query`, expected `key_padding_mask` to be `None` or 2-D but "
                f"found {key_padding_mask.dim()}-D tensor instead")
        if attn_mask is not None:
            assert attn_mask.dim() in (2, 3), (
                "For batched (3-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D but "
                f"found {attn_mask.dim()}-D tensor instead")
        return True
    if query.dim() == 2:
        assert key.dim() == 2 and value.dim() == 2, (
            "For unbatched (2-D) `query`, expected `key` and `value` to be 2-D but found "
            f"{key.dim()}-D and {value.dim()}-D tensors respectively")
        if key_padding_mask is not None:
            assert key_padding_mask.dim() == 1, (
                "For unbatched (2-D) `query`, expected `key_padding_mask` to be `None` or 1-D "
                f"but found {key_padding_mask.dim()}-D tensor instead")
        if attn_mask is not None:
            assert attn_mask.dim() in (2, 3), (
                "For unbatched (2-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D but "
                f"found {attn_mask.dim()}-D tensor instead")
            if attn_mask.dim() == 3:
                expected_shape = (num_heads, query.shape[0], key.shape[0])
                assert attn_mask.shape == expected_shape, (
                    f"Expected `attn_mask` shape to be {expected_shape} but got "
                    f"{attn_mask.shape}")
        return False
    raise AssertionError("query should be unbatched 2D or batched 3D tensor but received "
                         f"{query.dim()}-D query tensor")


def _in_projection_packed(q, k, v, w, b=None):
    """q, k and v projected by the packed (3E, E) weight: one matmul for self-attention, two
    when key is value."""
    E = q.size(-1)
    if k is v:
        if q is k:
            return linear(q, w, b).chunk(3, dim=-1)
        w_q, w_kv = w.split([E, E * 2])
        b_q, b_kv = (None, None) if b is None else b.split([E, E * 2])
        return (linear(q, w_q, b_q),) + tuple(linear(k, w_kv, b_kv).chunk(2, dim=-1))
    w_q, w_k, w_v = w.chunk(3)
    b_q, b_k, b_v = (None, None, None) if b is None else b.chunk(3)
    return linear(q, w_q, b_q), linear(k, w_k, b_k), linear(v, w_v, b_v)


def _in_projection(q, k, v, w_q, w_k, w_v, b_q=None, b_k=None, b_v=None):
    """q, k and v projected by their own weights (key and value may have other widths)."""
    Eq, Ek, Ev = q.size(-1), k.size(-1), v.size(-1)
    for what, t, shape in (("query weights", w_q, (Eq, Eq)), ("key weights", w_k, (Eq, Ek)),
                           ("value weights", w_v, (Eq, Ev)), ("query bias", b_q, (Eq,)),
                           ("key bias", b_k, (Eq,)), ("value bias", b_v, (Eq,))):
        assert t is None or t.shape == shape, \
            f"expecting {what} shape of {shape}, but got {t.shape}"
    return linear(q, w_q, b_q), linear(k, w_k, b_k), linear(v, w_v, b_v)


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads,
                                 in_proj_weight, in_proj_bias, bias_k, bias_v, add_zero_attn,
                                 dropout_p, out_proj_weight, out_proj_bias, training=True,
                                 key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None,
                                 k_proj_weight=None, v_proj_weight=None, static_k=None,
                                 static_v=None, average_attn_weights=True):
    """torch.nn.functional.multi_head_attention_forward: query (L, N, E), key and value (S, N,
    E_k / E_v) or unbatched (L, E), (S, E); returns (attn_output (L, N, E), attn weights
    (N, L, S) averaged over heads, (N, heads, L, S) with average_attn_weights=False, or None
    without need_weights). Masks: bool (True = not attended) or float (added to the logits)."""
    from .. import _factories  # noqa: PLC0415
    is_batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not is_batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    if key_padding_mask is not None and key_padding_mask.dtype != _dtypes.bool_ and \
            not key_padding_mask.is_floating_point():
        raise AssertionError("only bool and floating types of key_padding_mask are supported")
    assert embed_dim == embed_dim_to_check, \
        f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}"
    head_dim = embed_dim // num_heads
    assert head_dim * num_heads == embed_dim, \
        f"embed_dim {embed_dim} not divisible by num_heads {num_heads}"
    if use_separate_proj_weight:
        assert key.shape[:2] == value.shape[:2], \
            f"key's sequence and batch dims {key.shape[:2]} do not match value's {value.shape[:2]}"
    else:
        assert key.shape == value.shape, \
            f"key shape {key.shape} does not match value shape {value.shape}"

    if not use_separate_proj_weight:
        assert in_proj_weight is not None, \
            "use_separate_proj_weight is False but in_proj_weight is None"
        q, k, v = _in_projection_packed(query, key, value, in_proj_weight, in_proj_bias)
    else:
        assert q_proj_weight is not None, \
            "use_separate_proj_weight is True but q_proj_weight is None"
        assert k_proj_weight is not None, \
            "use_separate_proj_weight is True but k_proj_weight is None"
        assert v_proj_weight is not None, \
            "use_separate_proj_weight is True but v_proj_weight is None"
        b_q, b_k, b_v = (None, None, None) if in_proj_bias is None else in_proj_bias.chunk(3)
        q, k, v = _in_projection(query, key, value, q_proj_weight, k_proj_weight, v_proj_weight,
                                 b_q, b_k, b_v)

    if attn_mask is not None:
        if attn_mask.dtype == _dtypes.uint8:
            _warnings.warn("Byte tensor for attn_mask in nn.MultiheadAttention is deprecated. Use "
                           "bool tensor instead.")
            attn_mask = attn_mask.to(_dtypes.bool_)
        else:
            assert attn_mask.is_floating_point() or attn_mask.dtype == _dtypes.bool_, (
                "Only float, byte, and bool types are supported for attn_mask, not "
                f"{attn_mask.dtype}")
        if attn_mask.dim() == 2:
            correct_2d_size = (tgt_len, src_len)
            if attn_mask.shape != correct_2d_size:
                raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, but "
                                   f"should be {correct_2d_size}.")
            attn_mask = attn_mask.unsqueeze(0)
        elif attn_mask.dim() == 3:
            correct_3d_size = (bsz * num_heads, tgt_len, src_len)
            if attn_mask.shape != correct_3d_size:
                raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but "
                                   f"should be {correct_3d_size}.")
        else:
            raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")

    if bias_k is not None and bias_v is not None:
        assert static_k is None, "bias cannot be added to static key."
        assert static_v is None, "bias cannot be added to static value."
        k = _factories.cat([k, bias_k.repeat(1, bsz, 1)])
        v = _factories.cat([v, bias_v.repeat(1, bsz, 1)])
        if attn_mask is not None:
            attn_mask = pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = pad(key_padding_mask, (0, 1))
    else:
        assert bias_k is None
        assert bias_v is None

    q = q.contiguous().view(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    if static_k is None:
        k = k.contiguous().view(k.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    else:
        assert static_k.size(0) == bsz * num_heads, \
            f"expecting static_k.size(0) of {bsz * num_heads}, but got {static_k.size(0)}"
        assert static_k.size(2) == head_dim, \
            f"expecting static_k.size(2) of {head_dim}, but got {static_k.size(2)}"
        k = static_k
    if static_v is None:
        v = v.contiguous().view(v.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    else:
        assert static_v.size(0) == bsz * num_heads, \
            f"expecting static_v.size(0) of {bsz * num_heads}, but got {static_v.size(0)}"
        assert static_v.size(2) == head_dim, \
            f"expecting static_v.size(2) of {head_dim}, but got {static_v.size(2)}"
        v = static_v

    if add_zero_attn:
        zero_attn_shape = (bsz * num_heads, 1, head_dim)
        k = _factories.cat([k, _factories.zeros(zero_attn_shape, dtype=k.dtype, device=k.device,
                                                session=k._session)], dim=1)
        v = _factories.cat([v, _factories.zeros(zero_attn_shape, dtype=v.dtype, device=v.device,
                                                session=v._session)], dim=1)
        if attn_mask is not None:
            attn_mask = pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = pad(key_padding_mask, (0, 1))
    src_len = k.size(1)

    if key_padding_mask is not None:
        assert key_padding_mask.shape == (bsz, src_len), (
            f"expecting key_padding_mask shape of {(bsz, src_len)}, but got "
            f"{key_padding_mask.shape}")
        key_padding_mask = key_padding_mask.view(bsz, 1, 1, src_len).expand(
            -1, num_heads, -1, -1).reshape(bsz * num_heads, 1, src_len)
        if attn_mask is None:
            attn_mask = key_padding_mask
        elif attn_mask.dtype == _dtypes.bool_:
            attn_mask = attn_mask.logical_or(key_padding_mask)
        else:
            attn_mask = attn_mask.masked_fill(key_padding_mask, float("-inf"))
    if attn_mask is not None and attn_mask.dtype == _dtypes.bool_:
        attn_mask = _factories.zeros_like(attn_mask, dtype=q.dtype).masked_fill_(
            attn_mask, float("-inf"))
    if not training:
        dropout_p = 0.0

    q_scaled = q / _math.sqrt(q.shape[2])
    if attn_mask is not None:
        attn_output_weights = attn_mask.baddbmm(q_scaled, k.transpose(-2, -1))
    else:
        attn_output_weights = q_scaled.bmm(k.transpose(-2, -1))
    attn_output_weights = softmax(attn_output_weights, dim=-1)
    if dropout_p > 0.0:
        attn_output_weights = dropout(attn_output_weights, p=dropout_p)
    attn_output = attn_output_weights.bmm(v)
    attn_output = attn_output.transpose(0, 1).contiguous().view(tgt_len * bsz, embed_dim)
    attn_output = linear(attn_output, out_proj_weight, out_proj_bias)
    attn_output = attn_output.view(tgt_len, bsz, attn_output.size(1))
    if not need_weights:
        return (attn_output if is_batched else attn_output.squeeze(1)), None
    attn_output_weights = attn_output_weights.view(bsz, num_heads, tgt_len, src_len)
    if average_attn_weights:
        attn_output_weights = attn_output_weights.sum(dim=1) / num_heads
    if not is_batched:
        attn_output = attn_output.squeeze(1)
        attn_output_weights = attn_output_weights.squeeze(0)
    return attn_output, attn_output_weights


# ---- torch.nn.functional's own helpers, public in its namespace ----------------------------

DType = int  # torch 1.13's alias, for annotations (its torch.types._dtype is int)


def boolean_dispatch(arg_name, arg_index, default, if_true, if_false, module_name,
                     func_name):
    """A function that calls if_true or if_false as its boolean argument `arg_name` (or
    positional `arg_index`, else False) says, with the one docstring of the two (torch's
    helper behind max_pool2d's return_indices, for modules written against it; `default` is
    for TorchScript, which tensord has not)."""
    def fn(*args, **kwargs):
        flag = False
        if arg_name in kwargs:
            flag = kwargs[arg_name]
        elif arg_index < len(args):
            flag = args[arg_index]
        return if_true(*args, **kwargs) if flag else if_false(*args, **kwargs)

    if if_true.__doc__ is None and if_false.__doc__ is not None:
        doc = if_true.__doc__ = if_false.__doc__
    elif if_false.__doc__ is None and if_true.__doc__ is not None:
        doc = if_false.__doc__ = if_true.__doc__
    elif if_false.__doc__ is None and if_true.__doc__ is None:
        doc = None
    else:
        raise RuntimeError("only one function can have a docstring")
    fn.__doc__ = doc
    if module_name is not None:
        fn.__module__ = module_name
    if func_name is not None:
        fn.__name__ = func_name
    return fn


def assert_int_or_pair(arg, arg_name, message):
    """AssertionError(message.format(arg_name)) unless arg is an int or has two elements."""
    assert isinstance(arg, int) or len(arg) == 2, message.format(arg_name)
