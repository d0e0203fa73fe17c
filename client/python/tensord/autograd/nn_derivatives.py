"""The derivatives of torch.nn.functional's server ops: convolution, pooling, normalisation,
activations and losses (registered in derivatives.FORMULAS, as the core ops are). Each is a
composition of server ops: convolution's input gradient is the transposed convolution of the
output's (with stride 1, the convolution by the flipped weight), its weight gradient one batched
product of the unfolded input with the output's gradient per group; pooling's gradients are scatters to the picked positions (max) or products
with the window matrices of each spatial dim (average: separable, so no windows are built).
"""
import math

import numpy as np

from .. import _grad_mode
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


def _conv2d_input_grad(x, w, g, stride, padding, dilation, groups):
    """conv2d's input gradient. With stride 1 it is itself a convolution: of the output's
    gradient by the weight flipped in space with its in and out channels exchanged per group,
    padded by dilation * (kernel - 1) - padding; the server's conv2d kernel runs it (building
    its columns in cache) where the transposed convolution adds columns back one kernel offset
    at a time. Other strides take the transposed convolution."""
    kernel = tuple(w.shape[2:])
    pad = tuple(dilation[i] * (kernel[i] - 1) - padding[i] for i in range(2))
    out = g.shape[2:]
    if any(s != 1 for s in stride) or min(pad) < 0 or any(
            out[i] + 2 * pad[i] - dilation[i] * (kernel[i] - 1) != x.shape[2 + i]
            for i in range(2)):
        return _transposed_input_grad("conv_transpose2d")(x, w, g, stride, padding, dilation,
                                                          groups)
    o, cg = w.shape[0], w.shape[1]
    flipped = w.reshape(groups, o // groups, cg, *kernel).transpose(1, 2).flip((3, 4))
    flipped = flipped.reshape(groups * cg, o // groups, *kernel)
    return _F().conv2d(g, flipped, None, 1, pad, dilation, groups)


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


def _conv_transpose3d_input_grad(x, w, g, stride, padding, dilation, groups):
    """conv_transpose3d's input gradient: the convolution of the output's gradient, cropped to
    the input."""
    size = x.shape[2:]
    out = _F().conv3d(g, w, None, stride, padding, dilation, groups)
    return out[:, :, :size[0], :size[1], :size[2]]


def _conv_transpose3d_weight_grad(x, w, g, stride, padding, dilation, groups):
    """conv_transpose3d's weight gradient: a transposed convolution is a convolution's input
    gradient, so its weight gradient is conv3d's with the roles of input and output's gradient
    exchanged."""
    return _conv3d_weight_grad(g, w, x, stride, padding, dilation, groups)


FORMULAS.update({
    "conv2d": _convolution(2, _conv2d_input_grad, _conv2d_weight_grad),
    "conv3d": _convolution(3, _transposed_input_grad("conv_transpose3d"), _conv3d_weight_grad),
    "conv_transpose2d": _convolution(2, _conv_transpose2d_input_grad,
                                     _conv_transpose2d_weight_grad),
    "conv_transpose3d": _convolution(3, _conv_transpose3d_input_grad,
                                     _conv_transpose3d_weight_grad),
})


@formula("col2im")
def _col2im(inputs, attrs, outs):
    """F.fold sums the blocks into the image: its gradient unfolds the image's gradient."""
    window = {k: attrs[k] for k in ("kernel_size", "dilation", "padding", "stride")
              if k in attrs}
    return "Col2ImBackward0", None, lambda s, gs: [_F().unfold(gs[0], **window)]


def _max_unpool(node, nd):
    """max_unpool puts each value at its index in the output plane: its gradient is taken
    back from there."""
    def f(inputs, attrs, outs):
        x, indices = inputs
        shape = tuple(x.shape)

        def backward(indices, grads):
            g = grads[0]
            return [g.flatten(-nd).gather(-1, indices.flatten(-nd)).reshape(shape), None]
        return node, indices, backward
    return f


FORMULAS.update({
    "max_unpool2d": _max_unpool("MaxUnpool2DBackward0", 2),
    "max_unpool3d": _max_unpool("MaxUnpool3DBackward0", 3),
})


# ---- grid_sample ----

_A = -0.75  # torch's cubic convolution constant


def _cubic_taps(t):
    """(weight, its derivative in t) of the four taps at floor - 1 … floor + 2 for the fraction
    t (torch's cubic convolution coefficients)."""
    def near(x):  # |x| <= 1
        return ((_A + 2) * x - (_A + 3)) * x * x + 1, (3 * (_A + 2) * x - 2 * (_A + 3)) * x

    def far(x):  # 1 < |x| < 2
        return ((_A * x - 5 * _A) * x + 8 * _A) * x - 4 * _A, (3 * _A * x - 10 * _A) * x + 8 * _A
    w0, d0 = far(t + 1)
    w1, d1 = near(t)
    w2, d2 = near(1 - t)
    w3, d3 = far(2 - t)
    return [(w0, d0), (w1, d1), (w2, -d2), (w3, -d3)]


def _clip(c, size):
    """torch's clip_coordinates and its gradient (0 at and beyond the ends)."""
    return c.clamp(0, size - 1), ((c > 0) & (c < size - 1)).to(c.dtype)


def _reflect(c, twice_low, twice_high):
    """torch's reflect_coordinates and its gradient (the sign of each reflection)."""
    if twice_low == twice_high:
        zero = _torch().zeros_like(c)
        return zero, zero
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    c = c - low
    sign = _where(c < 0, -1.0, 1.0)
    c = c.abs()
    extra = c.fmod(span)
    even = (c / span).floor().remainder(2) == 0
    return _where(even, extra + low, span - extra + low), _where(even, sign, -sign)


def _padded(c, size, padding, align_corners):
    """A source coordinate under the padding mode (1 border, 2 reflection; 0 zeros: as is),
    with the factor its gradient takes."""
    if padding == 0:
        return c, None
    grad = None
    if padding == 2:
        c, grad = _reflect(c, 0, 2 * (size - 1)) if align_corners else \
            _reflect(c, -1, 2 * size - 1)
    c, clip_grad = _clip(c, size)
    return c, clip_grad if grad is None else grad * clip_grad


@formula("grid_sampler")
def _grid_sampler(inputs, attrs, outs):
    """grid_sample (2-d and 3-d; bilinear, nearest, bicubic; every padding mode): the output
    is a weighted sum of taps around each source coordinate, so the input's gradient adds each
    output's gradient into its taps with their weights, and the grid's is the sum of the taps'
    values times the weights' derivatives, times the derivative of the coordinate (unnormalized,
    padded) in the grid value: torch's grid_sampler backward, per tap with server ops."""
    x, grid = inputs
    mode, padding = attrs.get("interpolation_mode", 0), attrs.get("padding_mode", 0)
    align = bool(attrs.get("align_corners", False))
    need_x, need_grid = _needs(x, grid)
    names = {2: "GridSampler2DBackward0", 3: "GridSampler3DBackward0"}

    def backward(saved, grads):
        import itertools  # noqa: PLC0415
        api = _torch()
        x, grid = saved
        g = grads[0]
        n, ch, sizes = x.shape[0], x.shape[1], tuple(x.shape[2:])
        nd = len(sizes)
        length = g[0, 0].numel()
        plane, strides = 1, [0] * nd
        for d in reversed(range(nd)):
            strides[d] = plane
            plane *= sizes[d]
        per_dim, factors = [], []
        for d in range(nd):  # spatial dim d is the grid's component nd - 1 - d
            size = sizes[d]
            c = grid[..., nd - 1 - d].reshape(n, length)
            if align:
                c, factor = (c + 1) / 2 * (size - 1), (size - 1) / 2
            else:
                c, factor = ((c + 1) * size - 1) / 2, size / 2
            if mode == 2:
                f = c.floor()
                taps = [(f + (k - 1), w, dw) for k, (w, dw) in enumerate(_cubic_taps(c - f))]
            else:
                c, pad_grad = _padded(c, size, padding, align)
                if pad_grad is not None:
                    factor = pad_grad * factor
                if mode == 1:
                    taps = [(c.round(), 1.0, 0.0)]
                else:
                    f = c.floor()
                    t = c - f
                    taps = [(f, 1 - t, -1.0), (f + 1, t, 1.0)]
            per_dim.append(taps)
            factors.append(factor)
        xf = x.reshape(n, ch, plane)
        gf = g.reshape(n, ch, length)
        gx = api.zeros((n, ch, plane), dtype=g.dtype, device=g.device) if need_x else None
        gc = [0.0] * nd
        for combo in itertools.product(*per_dim):
            inside, lin, weight = None, 0, 1.0
            for d, (tap, w, _) in enumerate(combo):
                if mode == 2 and padding != 0:  # each tap read through the padding
                    tap = _padded(tap, sizes[d], padding, align)[0]
                ok = (tap >= 0) & (tap <= sizes[d] - 1)
                inside = ok if inside is None else inside & ok
                lin = lin + tap.clamp(0, sizes[d] - 1).long() * strides[d]
                weight = weight * w
            index = lin.unsqueeze(1).expand(n, ch, length)
            if need_x:
                gx = gx.scatter_add(2, index, gf * _where(inside, weight, 0.0).unsqueeze(1))
            if need_grid and mode != 1:
                value = _where(inside, (xf.gather(2, index) * gf).sum(1), 0.0)
                for d in range(nd):
                    part = value * combo[d][2]
                    for e in range(nd):
                        if e != d:
                            part = part * combo[e][1]
                    gc[d] = gc[d] + part
        ggrid = None
        if need_grid:
            parts = [api.zeros((n, length), dtype=g.dtype, device=g.device) + gc[d] * factors[d]
                     for d in reversed(range(nd))]
            ggrid = api.stack(parts, -1).reshape(grid.shape)
        return [gx.reshape(x.shape) if need_x else None, ggrid]
    return names.get(x.dim() - 2, "GridSampler2DBackward0"), (x, grid), backward

# ---- embedding bags ----

def _bag_of_each(indices, offsets, include_last_offset):
    """(flat int64 indices, the bag of each, number of bags): rows of 2-d indices are bags of
    equal length; 1-d indices' bags start at the offsets (an index after the last bag, where
    include_last_offset closes it, gets the number of bags: it is in none)."""
    api = _torch()
    idx = indices.reshape(-1).long()
    n = idx.shape[0]
    if indices.dim() == 2:
        bags, length = indices.shape[0], indices.shape[1]
        return idx, api.arange(n, device=idx.device) // max(length, 1), bags
    offs = offsets.long()
    bags = offs.shape[0] - (1 if include_last_offset else 0)
    # ones at the offsets, summed up, less one: each index's bag (empty bags share an offset)
    marks = api.zeros((n + 1,), dtype=api.int64, device=idx.device).index_add(
        0, offs, api.ones(offs.shape, dtype=api.int64, device=idx.device))
    return idx, marks.cumsum(0)[:n] - 1, bags


def _bag_maxima(weight, idx, bag, counted, bags, out):
    """torch's max_indices for mode max: per bag and column the row of the first counted index
    whose value is the bag's maximum (a later equal value does not take its place, as torch's
    strict comparison), and whether the bag counted any index (its gradient goes nowhere
    otherwise)."""
    api = _torch()
    n, dim = idx.shape[0], weight.shape[1]
    at = bag.clamp(0, bags - 1)
    picked = weight.index_select(0, idx)
    best = out.index_select(0, at)
    hit = ((picked == best) | (picked.isnan() & best.isnan())) & counted.unsqueeze(1)
    position = api.arange(n, device=idx.device).unsqueeze(1).expand(n, dim)
    from .._composite import _scatter_reduce  # noqa: PLC0415 - import cycle
    first = _scatter_reduce(api.full((bags, dim), n, dtype=api.int64, device=idx.device),
                            0, at.unsqueeze(1).expand(n, dim), position.masked_fill(~hit, n),
                            "amin")
    rows = idx.index_select(0, first.clamp_max(n - 1).reshape(-1)).reshape(bags, dim)
    return rows, first < n


@formula("embedding_bag")
def _embedding_bag(inputs, attrs, outs):
    """torch's _embedding_bag_backward (dense): sum and mean add each bag's gradient to the rows
    of its indices (times the index's per_sample_weight; over the bag's count of indices for
    mean), max to the row that gave each column's maximum; padding_idx rows and empty bags get
    nothing. per_sample_weights (mode sum): the bag's gradient dotted with the index's row. As
    torch, the weight is kept only for per_sample_weights' gradient, and max mode keeps the rows
    of the maxima, found when the op is recorded."""
    weight, indices, offsets, psw = _operands(
        inputs, attrs, ("weight", "indices", "offsets", "per_sample_weights"))
    mode = attrs.get("mode", "mean")
    last = bool(attrs.get("include_last_offset", False))
    padding = attrs.get("padding_idx")
    rows, dim = weight.shape[0], weight.shape[1]
    need_weight, need_psw = _needs(weight, psw)
    maxima = None
    if mode == "max" and need_weight:
        idx, bag, bags = _bag_of_each(indices, offsets, last)
        if bags and idx.shape[0]:
            with _grad_mode.no_grad():
                counted = bag < bags
                if padding is not None:
                    counted = counted & (idx != padding)
                maxima = _bag_maxima(weight.detach(), idx, bag, counted, bags,
                                     outs[0].detach())

    def backward(saved, grads):
        weight, indices, offsets, psw, maxima = saved
        api = _torch()
        g = grads[0]
        idx, bag, bags = _bag_of_each(indices, offsets, last)
        counted = bag < bags
        if padding is not None:
            counted = counted & (idx != padding)
        at = bag.clamp(0, max(bags - 1, 0))
        gw = gp = None
        if need_weight:
            gw = api.zeros((rows, dim), dtype=g.dtype, device=g.device)
            if mode == "max":
                if maxima is not None:
                    gw = gw.scatter_add(0, maxima[0], _where(maxima[1], g, 0.0))
            elif bags and idx.shape[0]:
                scale = counted.to(g.dtype)
                if psw is not None:
                    scale = scale * psw.reshape(-1)
                if mode == "mean":
                    size = api.zeros((bags,), dtype=g.dtype, device=g.device).index_add(
                        0, at, counted.to(g.dtype))
                    scale = scale / size.clamp_min(1).index_select(0, at)
                gw = gw.index_add(0, idx, g.index_select(0, at) * scale.unsqueeze(1))
        if need_psw:
            if bags and idx.shape[0]:
                dots = (g.index_select(0, at) * weight.index_select(0, idx)).sum(1)
                gp = _where(counted, dots, 0.0).reshape(psw.shape)
            else:
                gp = api.zeros(psw.shape, dtype=g.dtype, device=g.device)
        r = [gw, None]
        if _is_tensor(offsets):
            r.append(None)
        if _is_tensor(psw):
            r.append(gp)
        return r
    kept = weight if need_psw else None
    return "EmbeddingBagBackward0", (kept, indices, offsets, psw, maxima), backward


def embedding_bag_frequency(node, indices):
    """F.embedding_bag's scale_grad_by_freq (sum and mean; the server op does not take it, so its
    node is told here): each row's weight gradient divided by a count of the indices, as torch
    1.13's CPU backward divides it. That kernel walks the distinct indices in sorted order and
    divides the k-th one's gradient by the count of sorted_indices[k] (not of the index itself:
    for [0, 2, 2] row 2 is divided by the count of 0), which is what this does."""
    inner = node._backward
    flat = indices.reshape(-1).long()

    def backward(saved, grads):
        r = inner(saved, grads)
        gw = r[0]
        n = flat.shape[0]
        if gw is not None and n:
            api = _torch()
            counts = api.zeros((gw.shape[0],), dtype=api.int64, device=gw.device).index_add(
                0, flat, api.ones((n,), dtype=api.int64, device=gw.device))
            rank = ((counts > 0).long().cumsum(0) - 1).clamp(0, n - 1)  # among distinct rows
            divisor = counts.index_select(0, flat.sort()[0].index_select(0, rank))
            r[0] = gw / divisor.clamp_min(1).to(gw.dtype).unsqueeze(1)
        return r
    node._backward = backward

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
            if name == "MeanBackward1":  # the mean's gradient, as torch's: g / count, spread
                return [grads[0].expand(shape) / math.prod(shape[k:])]
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


def _elu_coefficients(alpha, scale, input_scale):
    alpha = 1.0 if alpha is None else alpha
    scale = 1.0 if scale is None else scale
    input_scale = 1.0 if input_scale is None else input_scale
    if scale == 1.0 and alpha != 1.0 and input_scale == 1.0 / alpha:
        # celu: torch's derivative takes 1 / alpha in float32 (derivatives.yaml's toFloat)
        input_scale = 1.0 / float(np.float32(alpha))
    return alpha, scale, input_scale


def _elu_grad(g, x, alpha, scale, input_scale):
    """torch's elu_backward of the input, as its vectorised loop runs it (x > 0 picks g * scale:
    a NaN input gives NaN; only the few elements of a loop's scalar tail give g * scale)."""
    alpha, scale, input_scale = _elu_coefficients(alpha, scale, input_scale)
    return _where(x > 0, g * scale, g * (scale * alpha * input_scale) * (x * input_scale).exp())


@formula("elu")
def _elu(inputs, attrs, outs):
    values = [attrs.get(n) for n in ("alpha", "scale", "input_scale")]
    # celu is elu with input_scale = 1 / alpha (tensord's client sends it only for celu)
    node = "CeluBackward0" if values[2] is not None else "EluBackward0"
    return node, inputs[0], lambda s, gs: [_elu_grad(gs[0], s, *values)]


@formula("elu_")
def _elu_in_place(inputs, attrs, outs):
    """elu_ / selu_ / celu_: torch's elu_backward of the result (is_result): where it is not
    above 0, g * input_scale * (result + alpha * scale)."""
    values = [attrs.get(n) for n in ("alpha", "scale", "input_scale")]
    node = "CeluBackward1" if values[2] is not None else "EluBackward1"
    alpha, scale, input_scale = _elu_coefficients(*values)

    def backward(y, grads):
        g = grads[0]
        return [_where(y > 0, g * scale, g * input_scale * (y + alpha * scale))]
    return node, outs[0], backward


_elu_in_place.saves_input = False


def _softplus_grad(g, x, beta, threshold):
    beta = 1.0 if beta is None else beta
    threshold = 20.0 if threshold is None else threshold
    # torch's softplus_backward: z / (z + 1), z = exp(beta x), which keeps the float32
    # denormals that sigmoid flushes (z clamped where the threshold passes g on: no inf)
    bx = x * beta
    z = bx.clamp(max=threshold).exp()
    s = z / (z + 1)
    if _grad_mode.is_grad_enabled():  # create_graph: differentiated as torch's
        sig = bx.sigmoid()            # softplus_double_backward, through sigmoid
        s = s.detach() + (sig - sig.detach())
    return _where(bx > threshold, g, g * s)


# torch's hardsigmoid_backward multiplies by 1.0f / 6.0f, a float32 constant, in every dtype
_ONE_SIXTH = float(np.float32(1.0) / np.float32(6.0))


def _mish_grad(g, x):
    t = _F().softplus(x).tanh()
    return g * (t + x * x.sigmoid() * (1 - t * t))


FORMULAS.update({
    "softplus": _act("SoftplusBackward0", _softplus_grad, "beta", "threshold"),
    "mish": _act("MishBackward0", _mish_grad),
    # as torch's vectorised loop: g from 3 on, a NaN gives NaN
    "hardswish": _act("HardswishBackward0", lambda g, x: _where(
        x < -3, 0.0, _where(x >= 3, g, g * (x / 3 + 0.5)))),
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


def _hardtanh(save_result):
    """hardtanh (relu6): torch's hardtanh_backward, g strictly inside the bounds, as its
    vectorised loop (a NaN gives 0). In place it keeps the result, as torch's."""
    def f(inputs, attrs, outs):
        lo, hi = attrs["min_val"], attrs["max_val"]
        saved = outs[0] if save_result else inputs[0]
        return "HardtanhBackward0", saved, lambda x, gs: [_where((x > lo) & (x < hi), gs[0], 0.0)]
    f.saves_input = not save_result
    return f


def _threshold(node):
    """torch's threshold_backward of the input: 0 where x <= threshold, else g (NaN passes)."""
    def f(inputs, attrs, outs):
        th = attrs["threshold"]
        return node, inputs[0], lambda x, gs: [_where(x <= th, 0.0, gs[0])]
    return f


FORMULAS.update({
    "hardtanh": _hardtanh(False),
    "hardtanh_": _hardtanh(True),
    "threshold": _threshold("ThresholdBackward0"),
    "threshold_": _threshold("ThresholdBackward1"),
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
        nodes_ = nodes or {}
        name = nodes_.get((reduction, bool(attrs.get("log_target"))),
                          nodes_.get(reduction, node))
        extra = [attrs.get(k) for k in keys]
        n = len(inputs)

        def backward(saved, grads):
            g = grads[0]
            x, y = saved[0], saved[1]
            r = [_reduced(grad_input(x, y, *saved[2:], *extra), g, reduction, x)]
            if _is_tensor(y):
                r.append(_reduced(grad_target(x, y, *saved[2:], *extra), g, reduction, x))
            r += [None] * (n - len(r))
            return r
        return name, tuple(vals), backward
    return f


def _smooth_l1(x, y, beta):
    """torch's smooth_l1_loss_backward: -1 from d <= -beta, 1 from d >= beta, d / beta between
    (with beta 0, a zero difference takes -1). The target's gradient is the same with the
    operands swapped, as torch computes it."""
    beta = 1.0 if beta is None else beta
    d = x - y
    return _where(d <= -beta, -1.0, _where(d >= beta, 1.0, d / beta if beta else d * 0))


def _huber(x, y, delta):
    """torch's huber_loss_backward: -delta from d <= -delta, delta from d >= delta, d between
    (a NaN stays NaN)."""
    delta = 1.0 if delta is None else delta
    d = x - y
    return _where(d <= -delta, -delta, _where(d >= delta, delta, d))


def _bce_input(x, y, w):
    d = (x - y) / ((1 - x) * x).clamp_min(1e-12)
    return d * w if w is not None else d


def _bce_target(x, y, w):
    # torch's binary_cross_entropy_target_backward: its logs are not clamped (the forward's are)
    d = (1 - x).log() - x.log()
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
    """torch 1.13 composes kl_div (exp(t) * (t - x), or xlogy(t, t) - t * x): its target's
    gradient is that composition's, NaN at a target of 0 (xlogy's t / t)."""
    if log_target:
        return y.exp() * (y + 1 - x)
    return _where(y != 0, y.log(), 0.0) + y / y - x


FORMULAS.update({
    "l1_loss": _pointwise_loss("L1LossBackward0", lambda x, y: (x - y).sgn(),
                               lambda x, y: -(x - y).sgn(),
                               nodes={"mean": "MeanBackward0", "sum": "SumBackward0",
                                      "none": "AbsBackward0"}),
    "smooth_l1_loss": _pointwise_loss("SmoothL1LossBackward0", _smooth_l1,
                                      lambda x, y, beta: _smooth_l1(y, x, beta),
                                      keys=("beta",)),
    "huber_loss": _pointwise_loss("HuberLossBackward0", _huber,
                                  lambda x, y, delta: _huber(y, x, delta), keys=("delta",)),
    "soft_margin_loss": _pointwise_loss("SoftMarginLossBackward0",
                                        lambda x, y: -y * (-y * x).sigmoid(),
                                        lambda x, y: -x * (-y * x).sigmoid()),
    "binary_cross_entropy": _pointwise_loss("BinaryCrossEntropyBackward0", _bce_input,
                                            _bce_target, ("input", "target", "weight")),
    "binary_cross_entropy_with_logits": _pointwise_loss(
        "BinaryCrossEntropyWithLogitsBackward0", _bce_logits_input, _bce_logits_target,
        ("input", "target", "weight", "pos_weight")),
    # named as torch's composition's last node
    "kl_div": _pointwise_loss("SubBackward0", _kl_input, _kl_target, keys=("log_target",),
                              nodes={"batchmean": "DivBackward0", "sum": "SumBackward0",
                                     "mean": "MeanBackward0", ("none", True): "MulBackward0"}),
})



def _logsumexp3(a, b, c):
    """log(e^a + e^b + e^c) elementwise as torch's CTC kernels take it: shifted by the maximum,
    by 0 where all three are -inf."""
    m = a.maximum(b).maximum(c)
    m = _where(m == float("-inf"), 0.0, m)
    return ((a - m).exp() + (b - m).exp() + (c - m).exp()).log() + m


def _shifted(x, k, fill):
    """x (N, L) moved k places along L (right for k > 0, left for k < 0), `fill` coming in."""
    api = _torch()
    pad = api.full((x.shape[0], abs(k)), fill, dtype=x.dtype, device=x.device)
    return api.cat([pad, x[:, :x.shape[1] - k]] if k > 0 else [x[:, -k:], pad], 1)


def _ctc_labels(targets, target_lengths, blank, n):
    """(N, 2 S + 1) each sample's targets with blanks around and between them (torch's
    get_target_prime), S the longest target, blanks past each sample's 2 length + 1; targets
    padded (N, S') or concatenated."""
    api = _torch()
    longest = int(target_lengths.max().item()) if n else 0
    device = target_lengths.device
    position = api.arange(longest, device=device).unsqueeze(0)
    if targets.dim() == 2:
        labels = targets[:, :longest].long()
    elif longest:
        starts = (target_lengths.cumsum(0) - target_lengths).unsqueeze(1)
        at = (starts + position).clamp(0, max(targets.shape[0] - 1, 0))
        labels = targets.long().index_select(0, at.reshape(-1)).reshape(n, longest)
    else:
        labels = api.zeros((n, 0), dtype=api.int64, device=device)
    labels = _where(position < target_lengths.unsqueeze(1), labels, blank)
    blanks = api.full((n, longest + 1), blank, dtype=api.int64, device=device)
    between = api.stack([blanks[:, :longest], labels], 2).reshape(n, 2 * longest)
    return api.cat([between, blanks[:, :1]], 1)


@formula("ctc_loss")
def _ctc_loss(inputs, attrs, outs):
    """torch's ctc_loss_backward (Graves et al. 2006, eq. 16), vectorised over the batch and the
    extended label sequence, a step per time: log alpha forward and log beta backward as torch's
    kernel computes them; the gradient with respect to log_probs is exp(log_probs) - the sum over
    each label's positions s of exp(log alpha + log beta + nll - log_probs), zero past each input
    length, NaN where the loss is infinite (zero under zero_infinity), times the loss's gradient
    under the reduction (mean: over the batch and each target length clamped to 1). The node is
    the one torch's composite ends in."""
    blank = attrs.get("blank", 0) or 0
    reduction = attrs.get("reduction", "mean") or "mean"
    zero_infinity = bool(attrs.get("zero_infinity", False))
    unbatched = inputs[0].dim() == 2
    if reduction == "mean":
        node = "MeanBackward0"
    elif reduction == "sum":
        node = "SumBackward0"
    elif unbatched:
        node = "SqueezeBackward1"
    else:
        node = "WhereBackward0" if zero_infinity else "CtcLossBackward0"

    def backward(saved, grads):
        api = _torch()
        lp, targets, input_lengths, target_lengths = saved
        if unbatched:
            lp = lp.unsqueeze(1)
        steps, n = lp.shape[0], lp.shape[1]
        il = input_lengths.reshape(-1).long()
        tl = target_lengths.reshape(-1).long()
        ninf = float("-inf")
        ext = _ctc_labels(targets, tl, blank, n)  # (N, L)
        width = ext.shape[1]
        s = api.arange(width, device=lp.device).unsqueeze(0)
        in_sample = s <= 2 * tl.unsqueeze(1)
        # from s - 2 to s where the labels differ (torch's test: blanks, at even s, never do)
        skip = (ext != _shifted(ext, 2, blank)) & (s >= 2)
        skip_back = _shifted(skip, -2, False)  # from s + 2 to s
        lpe = lp.gather(2, ext.unsqueeze(0).expand(steps, n, width))  # (T, N, L)
        alpha = [_where(in_sample & (s < 2), lpe[0], ninf)]
        for t in range(1, steps):
            a = alpha[-1]
            a3 = _where(skip, _shifted(a, 2, ninf), ninf)
            alpha.append(_where(in_sample, _logsumexp3(a, _shifted(a, 1, ninf), a3) + lpe[t],
                                ninf))
        alpha = api.stack(alpha)
        # nll: -log(alpha at the last input step, at the last blank and the last label)
        end = alpha.gather(0, (il - 1).clamp_min(0).reshape(1, n, 1).expand(1, n, width))[0]
        l1 = end.gather(1, (2 * tl).unsqueeze(1))[:, 0]
        l2 = _where(tl > 0, end.gather(1, (2 * tl - 1).clamp_min(0).unsqueeze(1))[:, 0], ninf)
        m = _where(l1.maximum(l2) == ninf, 0.0, l1.maximum(l2))
        nll = -(((l1 - m).exp() + (l2 - m).exp()).log() + m)
        nll = _where(il > 0, nll, _where(tl > 0, float("inf"), 0.0))
        last = (il - 1).unsqueeze(1)
        start = in_sample & (s >= 2 * tl.unsqueeze(1) - 1)
        beta = [None] * steps
        b = api.full((n, width), ninf, dtype=lp.dtype, device=lp.device)
        for t in range(steps - 1, -1, -1):
            b3 = _where(skip_back, _shifted(b, -2, ninf), ninf)
            step = _logsumexp3(b, _shifted(b, -1, ninf), b3) + lpe[t]
            b = _where(start & (last == t), lpe[t],
                       _where(in_sample & (last > t), step, ninf))
            beta[t] = b
        beta = api.stack(beta)
        occupancy = (alpha + beta + nll.reshape(1, n, 1) - lpe).exp()
        # torch's kernel sets (not adds) the last label's term at the last step: a last label
        # equal to blank replaces the last blank's term there
        ends = (2 * tl).unsqueeze(1)
        lost = (tl > 0).unsqueeze(1) & (ext.gather(1, (ends - 1).clamp_min(0)) == blank) & \
            (s == ends)
        at_last = api.arange(steps, device=lp.device).reshape(steps, 1, 1) == last.unsqueeze(0)
        occupancy = _where(at_last & lost.unsqueeze(0), 0.0, occupancy)
        occupancy = api.zeros(lp.shape, dtype=lp.dtype, device=lp.device).scatter_add(
            2, ext.unsqueeze(0).expand(steps, n, width), occupancy)
        g = grads[0]
        if reduction == "mean":
            scale = (g / n) / tl.clamp_min(1).to(g.dtype)
        elif reduction == "sum":
            scale = g.expand(n)
        else:
            scale = g.reshape(-1)
        infinite = nll == float("inf")
        d = _where(infinite.reshape(1, n, 1), float("nan"), lp.exp() - occupancy)
        live = api.arange(steps, device=lp.device).unsqueeze(1) < il.unsqueeze(0)  # (T, N)
        if zero_infinity:
            live = live & ~infinite.unsqueeze(0)
        gx = _where(live.unsqueeze(2), d * scale.reshape(1, n, 1), 0.0)
        return [gx.squeeze(1) if unbatched else gx, None, None, None]
    return node, tuple(inputs), backward


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
        dd = _distance_derivative(d, n, p)
        return [g * dd, -(g * dd)]
    return "NormBackward1", (inputs[0], inputs[1], outs[0]), backward


def _distance_derivative(d, n, p):
    """The derivative of the p-norm n = |d|_p over d's last dim (n kept as a dim of 1): for
    p = inf shared among the elements at the maximum, 0 for p = 0 and where n is 0."""
    if p == float("inf"):
        mask = d.abs() == n
        return d.sgn() * mask / mask.sum(-1, keepdim=True)
    if p == 0:
        return d * 0
    return _where(n == 0, 0.0, d / n if p == 2 else _norm_derivative(d, n, p))


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
        gd = g.unsqueeze(-1) * _distance_derivative(diff, out.unsqueeze(-1), p)
        return [gd.sum(-2), -gd.sum(-3)]
    mode = attrs.get("compute_mode") or "use_mm_for_euclid_dist_if_necessary"
    rows = (inputs[0].shape[-2], inputs[1].shape[-2])
    mm = p == 2 and (mode == "use_mm_for_euclid_dist" or
                     (mode == "use_mm_for_euclid_dist_if_necessary" and max(rows) > 25))
    # torch's product form for many rows ends in a view
    return ("ViewBackward0" if mm else "CdistBackward0"), (inputs[0], inputs[1], outs[0]), \
        backward
