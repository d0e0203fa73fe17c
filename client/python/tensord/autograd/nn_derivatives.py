"""The derivatives of torch.nn.functional's server ops: convolution, pooling, normalisation,
activations and losses (registered in derivatives.FORMULAS, as the core ops are). Each is a
composition of server ops: convolution's input gradient is the transposed convolution of the
output's, its weight gradient one batched product of the unfolded input with the output's
gradient per group; pooling's gradients are scatters to the picked positions (max) or products
with the window matrices of each spatial dim (average: separable, so no windows are built).
"""
import numpy as np

from .derivatives import (_is_tensor, _norm_derivative, _not_implemented, _operands,
                          _picking_op, _torch, _where, formula, FORMULAS)


def _needs(*tensors):
    """Which of `tensors` need a gradient (a formula skips the work for the others)."""
    from .graph import requires_grad  # noqa: PLC0415
    return [_is_tensor(t) and requires_grad(t) for t in tensors]


def _ints(v, n):
    v = list(v) if isinstance(v, (list, tuple)) else [v]
    return tuple(v) * n if len(v) == 1 else tuple(v)


def _F():
    return _torch().nn.functional


# ---- convolution ----

def _weight_grad(a, b, groups, a_per_group, width):
    """sum over samples and positions of a (N, A, L) times b (N, B, L) per group: the
    (A, B / groups * …) weight gradient of a convolution, as one batched product."""
    n, _, length = a.shape
    per = b.shape[1] // groups
    aa = a.reshape(n, groups, a_per_group, length).permute(1, 2, 0, 3)
    aa = aa.reshape(groups, a_per_group, n * length)
    bb = b.reshape(n, groups, per, length).permute(1, 0, 3, 2).reshape(groups, n * length, per)
    return aa.bmm(bb).reshape(groups * a_per_group, *width)


def _convolution(nd, input_grad, weight_grad):
    """The formula of an nd convolution op (input, weight, bias; stride, padding, dilation,
    groups): unbatched inputs get a batch dim of 1, each gradient is computed only for an
    operand that needs it, the bias's is the sum over all dims but the channels'.
    input_grad / weight_grad(x, w, g, stride, padding, dilation, groups) take batched x and g."""
    def f(inputs, attrs, outs):
        x, w, b = _operands(inputs, attrs, ("input", "weight", "bias"))
        geometry = (_ints(attrs.get("stride", 1), nd), _ints(attrs.get("padding", 0), nd),
                    _ints(attrs.get("dilation", 1), nd), attrs.get("groups", 1) or 1)
        need_x, need_w, need_b = _needs(x, w, b)

        def backward(saved, grads):
            x, w = saved
            g = grads[0]
            unbatched = x.dim() == nd + 1
            if unbatched:
                x, g = x.unsqueeze(0), g.unsqueeze(0)
            gx = input_grad(x, w, g, *geometry) if need_x else None
            if gx is not None and unbatched:
                gx = gx.squeeze(0)
            r = [gx, weight_grad(x, w, g, *geometry) if need_w else None]
            if _is_tensor(b):
                r.append(g.sum([0] + list(range(2, nd + 2))) if need_b else None)
            return r
        return "ConvolutionBackward0", (x, w), backward
    return f


def _transposed_input_grad(transposed):
    """A convolution's input gradient: the transposed convolution of the output's gradient,
    with the output padding that gives back the input's size."""
    def grad(x, w, g, stride, padding, dilation, groups):
        size, kernel, out = x.shape[2:], w.shape[2:], g.shape[2:]
        extra = tuple(size[i] - ((out[i] - 1) * stride[i] - 2 * padding[i] +
                                 dilation[i] * (kernel[i] - 1) + 1) for i in range(len(size)))
        return getattr(_F(), transposed)(g, w, None, stride, padding, extra, groups, dilation)
    return grad


def _conv2d_weight_grad(x, w, g, stride, padding, dilation, groups):
    """conv2d's weight gradient: the unfolded input times the output's gradient, per group."""
    n, o = x.shape[0], w.shape[0]
    cols = _F().unfold(x, tuple(w.shape[2:]), dilation, padding, stride)  # (N, C kh kw, L)
    return _weight_grad(g.reshape(n, o, -1), cols, groups, o // groups, tuple(w.shape[1:]))


def _conv3d_weight_grad(x, w, g, stride, padding, dilation, groups):
    """conv3d's weight gradient, per group: the convolution of the input (its samples as
    channels) with the output's gradient as weights, stride and dilation swapped, cropped to
    the kernel."""
    kernel = w.shape[2:]
    cg, og = w.shape[1], w.shape[0] // groups
    parts = []
    for j in range(groups):
        xj = x[:, j * cg:(j + 1) * cg].transpose(0, 1)
        gj = g[:, j * og:(j + 1) * og].transpose(0, 1)
        full = _F().conv3d(xj, gj, None, dilation, padding, stride)
        parts.append(full[:, :, :kernel[0], :kernel[1], :kernel[2]].transpose(0, 1))
    return parts[0] if groups == 1 else _torch().cat(parts, 0)


def _conv_transpose2d_input_grad(x, w, g, stride, padding, dilation, groups):
    """conv_transpose2d's input gradient: the convolution of the output's gradient (cropped to
    the input where an output padding made the output larger)."""
    h, wd = x.shape[2], x.shape[3]
    return _F().conv2d(g, w, None, stride, padding, dilation, groups)[:, :, :h, :wd]


def _conv_transpose2d_weight_grad(x, w, g, stride, padding, dilation, groups):
    """conv_transpose2d's weight gradient: the input times the unfolded output's gradient,
    per group."""
    n, cin, h, wd = x.shape
    kh, kw = w.shape[2], w.shape[3]
    cols = _F().unfold(g, (kh, kw), dilation, padding, stride)  # (N, Cout kh kw, L')
    hh = (g.shape[2] + 2 * padding[0] - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    ww = (g.shape[3] + 2 * padding[1] - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    if (hh, ww) != (h, wd):
        cols = cols.reshape(n, -1, hh, ww)[:, :, :h, :wd].reshape(n, -1, h * wd)
    return _weight_grad(x.reshape(n, cin, h * wd), cols, groups, cin // groups,
                        tuple(w.shape[1:]))


FORMULAS.update({
    "conv2d": _convolution(2, _transposed_input_grad("conv_transpose2d"), _conv2d_weight_grad),
    "conv3d": _convolution(3, _transposed_input_grad("conv_transpose3d"), _conv3d_weight_grad),
    "conv_transpose2d": _convolution(2, _conv_transpose2d_input_grad,
                                     _conv_transpose2d_weight_grad),
})


# ---- pooling ----

def _max_pool(node, nd):
    """Max pooling with indices (F.max_pool*d asks for them whenever autograd records it): the
    gradient scattered (added, where windows share a maximum) to the positions of the maxima,
    flat indices within each plane."""
    def f(inputs, attrs, outs):
        shape = tuple(inputs[0].shape)

        def backward(index, grads):
            g = grads[0]
            lead = shape[:len(shape) - nd]
            plane = 1
            for v in shape[len(shape) - nd:]:
                plane *= v
            z = _torch().zeros(lead + (plane,), dtype=g.dtype, device=g.device)
            z = z.scatter_add(-1, index.flatten(-nd), g.flatten(-nd))
            return [z.reshape(shape)]
        return node, outs[1], backward
    return f


FORMULAS.update({
    "max_pool2d_with_indices": _max_pool("MaxPool2DWithIndicesBackward0", 2),
    "max_pool3d_with_indices": _max_pool("MaxPool3DWithIndicesBackward0", 3),
    "adaptive_max_pool2d": _max_pool("AdaptiveMaxPool2DBackward0", 2),
    "adaptive_max_pool3d": _max_pool("AdaptiveMaxPool3DBackward0", 3),
})


def _avg_matrix(size, out, kernel, stride, pad, count_include_pad, unit):
    """(out, size): row o averages the window of output o along one dim as torch's avg_pool
    does (the divisor the window's extent within the padded input, or within the input when
    count_include_pad is off; 1 when a divisor_override applies, `unit`)."""
    m = np.zeros((out, size))
    for o in range(out):
        start = o * stride - pad
        end = min(start + kernel, size + pad)
        extent = end - start
        start, end = max(start, 0), min(end, size)
        m[o, start:end] = 1.0 if unit else 1.0 / (extent if count_include_pad else end - start)
    return m


def _adaptive_matrix(size, out):
    m = np.zeros((out, size))
    for o in range(out):
        start, end = (o * size) // out, -((-(o + 1) * size) // out)
        m[o, start:end] = 1.0 / (end - start)
    return m


def _apply_back(g, matrices):
    """The gradient of y = x ×_d M_d over the last len(matrices) dims: g ×_d M_d^T."""
    api = _torch()
    nd = len(matrices)
    for i, m in enumerate(matrices):
        t = api.tensor(m, dtype=g.dtype, device=g.device)
        d = g.dim() - nd + i
        g = g.movedim(d, -1).matmul(t).movedim(-1, d)
    return g


def _avg_pool(node, nd):
    def f(inputs, attrs, outs):
        x = inputs[0]
        shape = tuple(x.shape)
        kernel = _ints(attrs["kernel_size"], nd)
        stride = attrs.get("stride")
        stride = kernel if stride is None or stride == [] else _ints(stride, nd)
        pad = _ints(attrs.get("padding", 0), nd)
        include = attrs.get("count_include_pad", True)
        include = True if include is None else include
        override = attrs.get("divisor_override")
        out_shape = tuple(outs[0].shape)

        def backward(saved, grads):
            g = grads[0]
            mats = [_avg_matrix(shape[len(shape) - nd + i], out_shape[len(shape) - nd + i],
                                kernel[i], stride[i], pad[i], include, override is not None)
                    for i in range(nd)]
            r = _apply_back(g, mats)
            return [r / override if override is not None else r]
        return node, None, backward
    return f


def _adaptive_avg_pool(node, nd):
    def f(inputs, attrs, outs):
        shape, out_shape = tuple(inputs[0].shape), tuple(outs[0].shape)
        # torch takes the mean for an output of one element per plane
        name = "MeanBackward1" if all(v == 1 for v in out_shape[-nd:]) else node

        def backward(saved, grads):
            k = len(shape) - nd
            return [_apply_back(grads[0], [_adaptive_matrix(shape[k + i], out_shape[k + i])
                                           for i in range(nd)])]
        return name, None, backward
    return f


def _linear_matrix(size, out, align_corners, scale):
    """(out, size): the weights of linear interpolation along one dim as torch computes them
    (area_pixel_compute_scale and _source_index: each output a blend of two inputs)."""
    if align_corners:
        step = (size - 1) / (out - 1) if out > 1 else 0.0
    else:
        step = 1.0 / scale if scale is not None and scale > 0 else size / out
    m = np.zeros((out, size))
    for o in range(out):
        src = step * o if align_corners else max(step * (o + 0.5) - 0.5, 0.0)
        i0 = int(src)
        i1 = i0 + 1 if i0 < size - 1 else i0
        w1 = src - i0
        m[o, i0] += 1.0 - w1
        m[o, i1] += w1
    return m


def _cubic_matrix(size, out, align_corners, scale):
    """(out, size): bicubic interpolation's weights along one dim as torch computes them
    (Keys' kernel with A = -0.75, four taps, indices clamped to the edges)."""
    if align_corners:
        step = (size - 1) / (out - 1) if out > 1 else 0.0
    else:
        step = 1.0 / scale if scale is not None and scale > 0 else size / out
    a = -0.75

    def near(x):  # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):  # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    m = np.zeros((out, size))
    for o in range(out):
        src = step * o if align_corners else step * (o + 0.5) - 0.5
        i0 = int(np.floor(src))
        t = src - i0
        for k, w in enumerate((far(t + 1), near(t), near(1 - t), far(2 - t))):
            m[o, min(max(i0 - 1 + k, 0), size - 1)] += w
    return m


_LINEAR_MODES = {"linear": ("UpsampleLinear1DBackward1", 1),
                 "bilinear": ("UpsampleBilinear2DBackward1", 2),
                 "trilinear": ("UpsampleTrilinear3DBackward1", 3)}
_NEAREST_NODES = {3: "UpsampleNearest1DBackward1", 4: "UpsampleNearest2DBackward1",
                  5: "UpsampleNearest3DBackward1"}


@formula("upsample")
def _upsample(inputs, attrs, outs):
    """Nearest modes pick elements; the linear and cubic modes are products with each spatial
    dim's interpolation matrix, so their gradient is the product with its transpose."""
    mode = attrs.get("mode")
    x = inputs[0]
    if mode in ("nearest", "nearest-exact"):
        return _picking_op("upsample", _NEAREST_NODES.get(x.dim(), "UpsampleNearest2DBackward1"))(
            inputs, attrs, outs)
    if mode == "bicubic":
        node, nd, weights = "UpsampleBicubic2DBackward1", 2, _cubic_matrix
    elif mode in _LINEAR_MODES:
        (node, nd), weights = _LINEAR_MODES[mode], _linear_matrix
    else:
        return "UpsampleBackward0", None, _not_implemented(f"upsample (mode={mode})")
    shape, out_shape = tuple(x.shape), tuple(outs[0].shape)
    align = bool(attrs.get("align_corners", False))
    scales = [attrs.get(n) for n in ("scales_d", "scales_h", "scales_w")[3 - nd:]]

    def backward(saved, grads):
        k = len(shape) - nd
        return [_apply_back(grads[0], [weights(shape[k + i], out_shape[k + i], align, scales[i])
                                       for i in range(nd)])]
    return node, None, backward


FORMULAS.update({
    "avg_pool2d": _avg_pool("AvgPool2DBackward0", 2),
    "avg_pool3d": _avg_pool("AvgPool3DBackward0", 3),
    "adaptive_avg_pool2d": _adaptive_avg_pool("AdaptiveAvgPool2DBackward0", 2),
    "adaptive_avg_pool3d": _adaptive_avg_pool("AdaptiveAvgPool3DBackward0", 3),
})


# ---- normalisation ----

def _normalised_grad(x, gxhat, dims, eps, var=None):
    """d/dx of xhat = (x - mean) / sqrt(var + eps) over `dims` (biased statistics), given the
    gradient of xhat: rstd (gxhat - mean(gxhat) - xhat mean(gxhat xhat))."""
    mean = x.mean(dims, keepdim=True)
    rstd = (x.var(dims, unbiased=False, keepdim=True) + eps).rsqrt()
    xhat = (x - mean) * rstd
    gx = rstd * (gxhat - gxhat.mean(dims, keepdim=True) -
                 xhat * (gxhat * xhat).mean(dims, keepdim=True))
    return gx, xhat


def _wide(x):
    """half and bfloat16 statistics in float32, as torch's kernels keep them."""
    return x.float() if x.dtype.itemsize < 4 else x


@formula("layer_norm")
def _layer_norm(inputs, attrs, outs):
    x, w, b = _operands(inputs, attrs, ("input", "weight", "bias"))
    k = len(attrs["normalized_shape"])
    eps = attrs.get("eps", 1e-5)
    rank = x.dim()
    dims = list(range(rank - k, rank))
    lead = list(range(rank - k))

    def backward(saved, grads):
        x, w = saved
        g = _wide(grads[0])
        xx = _wide(x)
        gxhat = g * w if w is not None else g
        gx, xhat = _normalised_grad(xx, gxhat, dims, eps)
        r = [gx]
        if w is not None:
            r.append((g * xhat).sum(lead) if lead else g * xhat)
        if _is_tensor(b):
            r.append(g.sum(lead) if lead else g)
        return r
    return "NativeLayerNormBackward0", (x, w), backward


def _channel_shape(x):
    return (1, x.shape[1]) + (1,) * (x.dim() - 2)


@formula("group_norm")
def _group_norm(inputs, attrs, outs):
    x, w, b = _operands(inputs, attrs, ("input", "weight", "bias"))
    groups = attrs["num_groups"]
    eps = attrs.get("eps", 1e-5)

    def backward(saved, grads):
        x, w = saved
        g = _wide(grads[0])
        xx = _wide(x)
        n = x.shape[0]
        gxhat = g * w.reshape(_channel_shape(x)) if w is not None else g
        gx, xhat = _normalised_grad(xx.reshape(n, groups, -1), gxhat.reshape(n, groups, -1),
                                    [2], eps)
        gx, xhat = gx.reshape(x.shape), xhat.reshape(x.shape)
        others = [0] + list(range(2, x.dim()))
        r = [gx]
        if w is not None:
            r.append((g * xhat).sum(others))
        if _is_tensor(b):
            r.append(g.sum(others))
        return r
    return "NativeGroupNormBackward0", (x, w), backward


@formula("batch_norm")
def _batch_norm(inputs, attrs, outs):
    x, rm, rv, w, b = _operands(inputs, attrs,
                                ("input", "running_mean", "running_var", "weight", "bias"))
    eps = attrs.get("eps", 1e-5)
    batch_stats = bool(attrs.get("training", False)) or rm is None

    def backward(saved, grads):
        x, rm, rv, w = saved
        g = _wide(grads[0])
        xx = _wide(x)
        others = [0] + list(range(2, x.dim()))
        cs = _channel_shape(x)
        gxhat = g * w.reshape(cs) if w is not None else g
        if batch_stats:
            gx, xhat = _normalised_grad(xx, gxhat, others, eps)
        else:
            rstd = (rv.reshape(cs) + eps).rsqrt()
            gx = gxhat * rstd
            xhat = (xx - rm.reshape(cs)) * rstd
        r = [gx]
        if _is_tensor(rm):
            r.append(None)
        if _is_tensor(rv):
            r.append(None)
        if w is not None:
            r.append((g * xhat).sum(others))
        if _is_tensor(b):
            r.append(g.sum(others))
        return r
    return "NativeBatchNormBackward0", (x, rm, rv, w), backward


# ---- activations ----

def _act(node, grad, *names):
    """An activation with number attributes `names`: grad(g, x, *values)."""
    def f(inputs, attrs, outs):
        values = [attrs.get(n) for n in names]
        return node, inputs[0], lambda s, gs: [grad(gs[0], s, *values)]
    return f


def _elu_grad(g, x, alpha, scale, input_scale):
    alpha = 1.0 if alpha is None else alpha
    scale = 1.0 if scale is None else scale
    input_scale = 1.0 if input_scale is None else input_scale
    if scale == 1.0 and alpha != 1.0 and input_scale == 1.0 / alpha:
        # celu: torch's derivative takes 1 / alpha in float32 (derivatives.yaml's toFloat)
        input_scale = 1.0 / float(np.float32(alpha))
    return _where(x > 0, g * scale, g * (scale * alpha * input_scale) * (x * input_scale).exp())


def _softplus_grad(g, x, beta, threshold):
    beta = 1.0 if beta is None else beta
    threshold = 20.0 if threshold is None else threshold
    return _where(x * beta > threshold, g, g * (x * beta).sigmoid())


# torch's hardsigmoid_backward multiplies by 1.0f / 6.0f, a float32 constant, in every dtype
_ONE_SIXTH = float(np.float32(1.0) / np.float32(6.0))


def _mish_grad(g, x):
    t = _F().softplus(x).tanh()
    return g * (t + x * x.sigmoid() * (1 - t * t))


FORMULAS.update({
    "elu": _act("EluBackward0", _elu_grad, "alpha", "scale", "input_scale"),
    "softplus": _act("SoftplusBackward0", _softplus_grad, "beta", "threshold"),
    "mish": _act("MishBackward0", _mish_grad),
    "hardswish": _act("HardswishBackward0", lambda g, x: _where(
        x < -3, 0.0, _where(x <= 3, g * (x / 3 + 0.5), g))),
    "hardsigmoid": _act("HardsigmoidBackward0",
                        lambda g, x: _where((x > -3) & (x < 3), g * _ONE_SIXTH, 0.0)),
    "hardshrink": _act("HardshrinkBackward0", lambda g, x, lambd: _where(
        (x >= -(0.5 if lambd is None else lambd)) & (x <= (0.5 if lambd is None else lambd)),
        0.0, g), "lambd"),
    "softshrink": _act("SoftshrinkBackward0", lambda g, x, lambd: _where(
        (x >= -(0.5 if lambd is None else lambd)) & (x <= (0.5 if lambd is None else lambd)),
        0.0, g), "lambd"),
    "log_sigmoid": _act("LogSigmoidBackward0", lambda g, x: g * (-x).sigmoid()),
})


@formula("glu")
def _glu(inputs, attrs, outs):
    dim = attrs.get("dim", -1)
    dim = -1 if dim is None else dim

    def backward(saved, grads):
        a, b = saved.chunk(2, dim)
        g = grads[0]
        sb = b.sigmoid()
        return [_torch().cat([g * sb, g * a * sb * (1 - sb)], dim)]
    return "GluBackward0", inputs[0], backward


@formula("softmin")
def _softmin(inputs, attrs, outs):
    dim = attrs["dim"]

    def backward(saved, grads):
        y, g = saved, grads[0]
        return [-(y * (g - (g * y).sum(dim, keepdim=True)))]
    return "SoftmaxBackward0", outs[0], backward


# ---- losses ----

def _reduced(d, g, reduction, x):
    """A pointwise loss's gradient `d` (per element, for a unit gradient) times the output's
    gradient under the loss's reduction."""
    if reduction == "none":
        return d * g
    if reduction == "mean":
        return d * (g / x.numel())
    if reduction == "batchmean":
        return d * (g / (x.shape[0] if x.dim() else 1))
    return d * g


def _pointwise_loss(node, grad_input, grad_target, names=("input", "target"), keys=(),
                    nodes=None):
    """grad_input(x, y, *attrs) and grad_target(...): per-element derivatives of the loss.
    `nodes`: the node's name per reduction where torch composes the loss of other ops."""
    def f(inputs, attrs, outs):
        vals = _operands(inputs, attrs, names)
        reduction = attrs.get("reduction", "mean") or "mean"
        name = (nodes or {}).get(reduction, node)
        extra = [attrs.get(k) for k in keys]

        def backward(saved, grads):
            g = grads[0]
            x, y = saved[0], saved[1]
            r = [_reduced(grad_input(x, y, *saved[2:], *extra), g, reduction, x)]
            if _is_tensor(y):
                r.append(_reduced(grad_target(x, y, *saved[2:], *extra), g, reduction, x))
            r += [None] * (len(inputs) - len(r))
            return r
        return name, tuple(vals), backward
    return f


def _smooth_l1(x, y, beta):
    beta = 1.0 if beta is None else beta
    d = x - y
    if beta == 0:
        return d.sgn()
    return _where(d.abs() < beta, d / beta, d.sgn())


def _huber(x, y, delta):
    delta = 1.0 if delta is None else delta
    d = x - y
    return _where(d.abs() <= delta, d, delta * d.sgn())


def _bce_input(x, y, w):
    d = (x - y) / ((1 - x) * x).clamp_min(1e-12)
    return d * w if w is not None else d


def _bce_target(x, y, w):
    d = (1 - x).log().clamp_min(-100) - x.log().clamp_min(-100)
    return d * w if w is not None else d


def _bce_logits_input(x, y, w, pw):
    s = x.sigmoid()
    d = s * (pw * y + 1 - y) - pw * y if pw is not None else s - y
    return d * w if w is not None else d


def _bce_logits_target(x, y, w, pw):
    F = _F()
    d = -(pw * F.logsigmoid(x) + F.softplus(x)) if pw is not None else -x
    return d * w if w is not None else d


def _kl_input(x, y, log_target):
    return -y.exp() if log_target else -y


def _kl_target(x, y, log_target):
    if log_target:
        return y.exp() * (y + 1 - x)
    return _where(y > 0, y.log() + 1 - x, 0.0)


FORMULAS.update({
    "l1_loss": _pointwise_loss("L1LossBackward0", lambda x, y: (x - y).sgn(),
                               lambda x, y: -(x - y).sgn(),
                               nodes={"mean": "MeanBackward0", "sum": "SumBackward0",
                                      "none": "AbsBackward0"}),
    "smooth_l1_loss": _pointwise_loss("SmoothL1LossBackward0", _smooth_l1,
                                      lambda x, y, beta: -_smooth_l1(x, y, beta),
                                      keys=("beta",)),
    "huber_loss": _pointwise_loss("HuberLossBackward0", _huber,
                                  lambda x, y, delta: -_huber(x, y, delta), keys=("delta",)),
    "soft_margin_loss": _pointwise_loss("SoftMarginLossBackward0",
                                        lambda x, y: -y * (-y * x).sigmoid(),
                                        lambda x, y: -x * (-y * x).sigmoid()),
    "binary_cross_entropy": _pointwise_loss("BinaryCrossEntropyBackward0", _bce_input,
                                            _bce_target, ("input", "target", "weight")),
    "binary_cross_entropy_with_logits": _pointwise_loss(
        "BinaryCrossEntropyWithLogitsBackward0", _bce_logits_input, _bce_logits_target,
        ("input", "target", "weight", "pos_weight")),
    "kl_div": _pointwise_loss("KlDivBackward0", _kl_input, _kl_target, keys=("log_target",),
                              nodes={"batchmean": "DivBackward0"}),
})


@formula("cosine_similarity")
def _cosine_similarity(inputs, attrs, outs):
    """torch 1.13's cos = sum(x1 / n1 * x2 / n2) over dim, n = max(|x|, eps), the norms clamped
    in place outside autograd: its backward takes the clamped norm where the norm's own
    derivative x / |x| needs |x|, so d cos / d x1 = x2 / (n1 n2) - cos x1 / n1² (checked
    against torch with norms below eps)."""
    dim = attrs.get("dim", 1)
    dim = 1 if dim is None else dim
    eps = attrs.get("eps", 1e-8)
    eps = 1e-8 if eps is None else eps

    def backward(saved, grads):
        x1, x2 = _torch().broadcast_tensors(saved[0], saved[1])
        cos = saved[2]
        g = grads[0].unsqueeze(dim)
        c = cos.unsqueeze(dim)
        n1 = x1.norm(dim=dim, keepdim=True).clamp_min(eps)
        n2 = x2.norm(dim=dim, keepdim=True).clamp_min(eps)
        return [g * (x2 / (n1 * n2) - c * x1 / (n1 * n1)),
                g * (x1 / (n1 * n2) - c * x2 / (n2 * n2))]
    return "SumBackward1", (inputs[0], inputs[1], outs[0]), backward  # torch's is a sum


@formula("pairwise_distance")
def _pairwise_distance(inputs, attrs, outs):
    """|x1 - x2 + eps|_p over the last dim: the norm's derivative, with opposite signs."""
    p = attrs.get("p", 2.0)
    p = 2.0 if p is None else float(p)
    eps = attrs.get("eps", 1e-6)
    eps = 1e-6 if eps is None else eps
    keepdim = bool(attrs.get("keepdim", False))

    def backward(saved, grads):
        x1, x2, out = saved
        d = x1 - x2 + eps
        g, n = grads[0], out
        if not keepdim and d.dim() > 0:
            g, n = g.unsqueeze(-1), n.unsqueeze(-1)
        if p == 2:
            dd = _where(n == 0, 0.0, d / n)
        elif p == float("inf"):
            mask = d.abs() == n
            dd = d.sgn() * mask / mask.sum(-1, keepdim=True)
        elif p == 0:
            dd = d * 0
        else:
            dd = _where(n == 0, 0.0, _norm_derivative(d, n, p))
        return [g * dd, -(g * dd)]
    return "NormBackward1", (inputs[0], inputs[1], outs[0]), backward


@formula("cdist")
def _cdist(inputs, attrs, outs):
    """out[..., i, j] = |x1_i - x2_j|_p: for p = 2 two products (the gradient of each distance
    is the difference over the distance); otherwise through the pairwise differences."""
    p = attrs.get("p", 2.0)
    p = 2.0 if p is None else float(p)

    def backward(saved, grads):
        x1, x2, out = saved
        g = grads[0]
        if p == 2:
            s = _where(out == 0, 0.0, g / out)
            return [x1 * s.sum(-1, keepdim=True) - s.matmul(x2),
                    x2 * s.sum(-2).unsqueeze(-1) - s.mT.matmul(x1)]
        diff = x1.unsqueeze(-2) - x2.unsqueeze(-3)
        n = out.unsqueeze(-1)
        if p == float("inf"):
            mask = diff.abs() == n
            d = diff.sgn() * mask / mask.sum(-1, keepdim=True)
        elif p == 0:
            d = diff * 0
        else:
            d = _where(n == 0, 0.0, _norm_derivative(diff, n, p))
        gd = g.unsqueeze(-1) * d
        return [gd.sum(-2), -gd.sum(-3)]
    mode = attrs.get("compute_mode") or "use_mm_for_euclid_dist_if_necessary"
    rows = (inputs[0].shape[-2], inputs[1].shape[-2])
    mm = p == 2 and (mode == "use_mm_for_euclid_dist" or
                     (mode == "use_mm_for_euclid_dist_if_necessary" and max(rows) > 25))
    # torch's product form for many rows ends in a view
    return ("ViewBackward0" if mm else "CdistBackward0"), (inputs[0], inputs[1], outs[0]), \
        backward
