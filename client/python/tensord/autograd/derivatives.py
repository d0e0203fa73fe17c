"""The derivative of each server op, keyed by the op's name (torch's derivatives.yaml).

A formula gets the op's inputs, attributes and outputs when the op is recorded and returns
(node name, saved values, backward); backward(saved, grads) maps the gradients of the outputs
to one gradient (or None) per input. The node names are torch's, so that a printed tensor shows
the grad_fn torch shows. Every formula is a composition of tensord ops, so it runs on the
server, on any device; the engine (graph.py) reduces broadcast dims and converts dtypes.
An op without an entry gets a node that raises torch's "not implemented" error if a backward
pass reaches it.
"""
import math

from .. import _dtypes, _grad_mode

# Ops whose outputs never carry gradients (they are not functions of the inputs' values in a
# differentiable way, or they cut the graph as detach does).
NON_DIFFERENTIABLE = frozenset((
    "detach", "frac_floor", "argmax", "argmin",
    "zeros_like", "ones_like", "empty_like", "full_like", "rand_like", "randn_like",
    "randint_like", "multinomial", "histc", "eq", "ne", "lt", "le", "gt", "ge",
    # torch.special's functions that torch 1.13 does not differentiate
    "special_bessel_j0", "special_bessel_j1", "special_bessel_y0", "special_bessel_y1",
    "special_modified_bessel_i0", "special_modified_bessel_i1", "special_modified_bessel_k0",
    "special_modified_bessel_k1", "special_scaled_modified_bessel_k0",
    "special_scaled_modified_bessel_k1", "special_spherical_bessel_j0", "special_airy_ai",
    "special_chebyshev_polynomial_t", "special_chebyshev_polynomial_u",
    "special_chebyshev_polynomial_v", "special_chebyshev_polynomial_w",
    "special_shifted_chebyshev_polynomial_t", "special_shifted_chebyshev_polynomial_u",
    "special_shifted_chebyshev_polynomial_v", "special_shifted_chebyshev_polynomial_w",
    "special_hermite_polynomial_h", "special_hermite_polynomial_he",
    "special_laguerre_polynomial_l", "special_legendre_polynomial_p",
))

# Outputs (by position) of a differentiable op that get no grad_fn, as torch's: the permutation
# matrix of an LU factorization (a function of the pivots).
NON_DIFFERENTIABLE_OUTPUTS = {}


def _camel(name):
    return "".join(p[:1].upper() + p[1:] for p in name.split("_"))


def _not_implemented(name):
    def backward(saved, grads):
        raise NotImplementedError(f"the derivative for '{name}' is not implemented.")
    return backward


# Ops torch 1.13 has no autograd kernel for record torch's NotImplemented node, which raises at
# backward (_refused_later).
def _refused_later(name):
    def f(inputs, attrs, outs):
        def backward(saved, grads):
            raise RuntimeError(f"derivative for aten::{name} is not implemented")
        return "torch::autograd::NotImplemented", None, backward
    return f


def make(formula, name, inputs, attrs, outs):
    """(node name, saved values, backward) of op `name`; backward None: outputs get no grad."""
    if name in NON_DIFFERENTIABLE:
        return None, None, None
    if formula is None:
        aten = _aten_name(name, attrs or {})
        return _camel(aten) + "Backward0", None, _not_implemented(aten)
    return formula(inputs, attrs or {}, outs)


def _aten_name(name, attrs):
    """The name of torch's op behind tensord's op `name`, which torch's node and its error
    give (torch.unique is aten::_unique2, or aten::unique_dim with a dim)."""
    if name == "unique":
        return "unique_dim" if attrs.get("dim") is not None else "_unique2"
    return name


FORMULAS = {}


def formula(*names):
    def register(f):
        for n in names:
            FORMULAS[n] = f
        return f
    return register


def _torch():
    """tensord's torch namespace (tensord, as torch is to ATen): where formulas find the
    functions they compose (imported when first used: autograd loads before it)."""
    import tensord  # noqa: PLC0415
    return tensord


def _scalar_other(attrs):
    return attrs.get("other")


# ---- elementwise: binary ----

@formula("add")
def _add(inputs, attrs, outs):
    alpha = attrs.get("alpha", 1)
    if alpha is None:
        alpha = 1

    n = len(inputs)  # the backward keeps counts, not the inputs

    def backward(saved, grads):
        g = grads[0]
        return [g, g * alpha if alpha != 1 else g][:n]
    return "AddBackward0", None, backward


@formula("sub")
def _sub(inputs, attrs, outs):
    alpha = attrs.get("alpha", 1)
    if alpha is None:
        alpha = 1

    if len(inputs) == 1 and attrs.get("self") is not None:  # number - tensor
        return "RsubBackward1", None, lambda s, gs: [-gs[0] * alpha if alpha != 1 else -gs[0]]

    n = len(inputs)

    def backward(saved, grads):
        g = grads[0]
        return [g, -g * alpha if alpha != 1 else -g][:n]
    return "SubBackward0", None, backward


@formula("rsub")
def _rsub(inputs, attrs, outs):
    alpha = attrs.get("alpha", 1) or 1
    n = len(inputs)

    def backward(saved, grads):
        g = grads[0]
        return [-g * alpha if alpha != 1 else -g, g][:n]
    return ("RsubBackward0" if len(inputs) > 1 else "RsubBackward1"), None, backward


@formula("mul")
def _mul(inputs, attrs, outs):
    if len(inputs) == 1:  # x * number, or number * x (the number sent as self)
        other = attrs["other"] if "other" in attrs else attrs["self"]
        return "MulBackward0", None, lambda s, gs: [gs[0] * other]
    a, b = inputs
    return "MulBackward0", (a, b), lambda s, gs: [gs[0] * s[1], gs[0] * s[0]]


@formula("div")
def _div(inputs, attrs, outs):
    mode = attrs.get("rounding_mode")
    if mode is not None:  # floor and trunc division: zero gradients, as torch's
        n = len(inputs)
        return "DivBackward2", None, lambda s, gs: [gs[0] * 0] * n
    if len(inputs) == 1:
        other = _scalar_other(attrs)
        return "DivBackward0", None, lambda s, gs: [gs[0] / other]
    a, b = inputs

    def backward(saved, grads):
        a, b = saved
        g = grads[0]
        return [g / b, -g * a / (b * b)]
    return "DivBackward0", (a, b), backward


@formula("pow")
def _pow(inputs, attrs, outs):
    if len(inputs) == 1 and "self" in attrs:  # a number to a tensor power: torch's PowBackward2
        base, e = attrs["self"], inputs[0]

        def backward_base(saved, grads):
            g, out = grads[0], saved
            if base == 0:  # torch's pow_backward_exponent: 0 where the exponent is >= 0
                return [_torch().where(e >= 0, 0.0, g * (out * math.log(base) if base > 0
                                                          else out * float("-inf")))]
            return [g * (out * math.log(base)) if base > 0 else g * (out * float("nan"))]
        return "PowBackward2", outs[0], backward_base
    if len(inputs) == 1:
        e = _scalar_other(attrs)
        x = inputs[0]

        def backward(saved, grads):
            g = grads[0]
            if e == 0:
                return [g * 0]
            return [g * (e * saved[0] ** (e - 1))]
        return "PowBackward0", (x,), backward
    a, b = inputs

    def backward2(saved, grads):
        a, b, out = saved
        g = grads[0]
        # torch's pow_backward_self: 0 where the exponent is 0 (0 ** -1 would give NaN there)
        ga = _torch().where(b == 0, 0.0, g * (b * a ** (b - 1)))
        # torch's: the exponent's gradient is 0 where the base is 0 and the exponent >= 0.
        log_a = _torch().where((a == 0) & (b >= 0), 0.0, out * a.log())
        return [ga, g * log_a]
    return "PowBackward1", (a, b, outs[0]), backward2


@formula("where")
def _where(inputs, attrs, outs):
    """A gradient for each tensor among self and other (either may be a number, sent as an
    attribute: where(x > 0, x, 0.0))."""
    cond, a, b = _operands(inputs, attrs, ("condition", "self", "other"))
    tensors = (_is_tensor(a), _is_tensor(b))

    def backward(saved, grads):
        g = grads[0]
        where = _torch().where
        r = [None]
        if tensors[0]:
            r.append(where(saved, g, 0.0))  # no NaN of g crosses
        if tensors[1]:
            r.append(where(saved, 0.0, g))
        return r
    return "WhereBackward0", cond, backward


# ---- elementwise: unary ----

def _unary(node, grad, save_input=True, save_output=False):
    def f(inputs, attrs, outs):
        saved = (inputs[0] if save_input else None, outs[0] if save_output else None)
        return node, saved, lambda s, gs: [grad(gs[0], s[0], s[1])]
    f.saves_input = save_input  # an in-place form (relu_) needs no copy of its input
    return f


FORMULAS.update({
    "neg": _unary("NegBackward0", lambda g, x, y: -g, False),
    "exp": _unary("ExpBackward0", lambda g, x, y: g * y, False, True),
    "log": _unary("LogBackward0", lambda g, x, y: g / x),
    "sqrt": _unary("SqrtBackward0", lambda g, x, y: g / (2 * y), False, True),
    "rsqrt": _unary("RsqrtBackward0", lambda g, x, y: -0.5 * g * y * y * y, False, True),
    "reciprocal": _unary("ReciprocalBackward0", lambda g, x, y: -g * y * y, False, True),
    "abs": _unary("AbsBackward0", lambda g, x, y: g * x.sign()),
    "sin": _unary("SinBackward0", lambda g, x, y: g * x.cos()),
    "cos": _unary("CosBackward0", lambda g, x, y: -g * x.sin()),
    "tanh": _unary("TanhBackward0", lambda g, x, y: g * (1 - y * y), False, True),
    "sigmoid": _unary("SigmoidBackward0", lambda g, x, y: g * y * (1 - y), False, True),
    # torch's threshold_backward: 0 where the result is <= 0, else g (a NaN result passes g).
    "relu": _unary("ReluBackward0", lambda g, x, y: _torch().where(y <= 0, 0.0, g), False, True),
    "square": _unary("PowBackward0", lambda g, x, y: 2 * g * x),
    "log1p": _unary("Log1pBackward0", lambda g, x, y: g / (x + 1)),
    "expm1": _unary("Expm1Backward0", lambda g, x, y: g * (y + 1), False, True),
    "log2": _unary("Log2Backward0", lambda g, x, y: g / (x * 0.6931471805599453)),
    "log10": _unary("Log10Backward0", lambda g, x, y: g / (x * 2.302585092994046)),
    "silu": _unary("SiluBackward0",
                   lambda g, x, y: g * x.sigmoid() * (1 + x * (1 - x.sigmoid()))),
    "clone": _unary("CloneBackward0", lambda g, x, y: g, False),
    "alias": _unary("AliasBackward0", lambda g, x, y: g, False),
    "contiguous": _unary("CloneBackward0", lambda g, x, y: g, False),
    "to": _unary("ToCopyBackward0", lambda g, x, y: g, False),
    "positive": _unary("AliasBackward0", lambda g, x, y: g, False),
})


@formula("leaky_relu")
def _leaky_relu(inputs, attrs, outs):
    slope = attrs.get("negative_slope", 0.01)
    return "LeakyReluBackward0", (inputs[0],), \
        lambda s, gs: [_torch().where(s[0] > 0, gs[0], gs[0] * slope)]


@formula("leaky_relu_")
def _leaky_relu_in_place(inputs, attrs, outs):
    """torch's leaky_relu_backward of the result: its sign is the input's for a slope >= 0;
    a negative slope fails, with torch's error."""
    slope = attrs.get("negative_slope", 0.01)

    def backward(y, grads):
        if slope < 0:
            raise RuntimeError(
                "In-place leakyReLu backward calculation is triggered with a negative slope "
                "which is not supported. This is caused by calling in-place forward function "
                "with a negative slope, please call out-of-place version instead. File an "
                "issue at https://github.com/pytorch/pytorch if you do require supporting "
                "in-place leakRelu backward calculation with negative slope")
        return [_torch().where(y > 0, grads[0], grads[0] * slope)]
    return "LeakyReluBackward1", outs[0], backward


_leaky_relu_in_place.saves_input = False


# ---- reductions ----

def _reduced_dims(attrs, rank):
    dim = attrs.get("dim")
    if dim is None:
        return None
    dims = [dim] if isinstance(dim, int) else list(dim)
    if not dims:
        return None
    return sorted(d % rank if rank else 0 for d in dims)


def _reduction(inputs, attrs):
    """A reduction's input, its shape, the dims it reduces (None: all) and keepdim."""
    x = inputs[0]
    shape = tuple(x.shape)
    return x, shape, _reduced_dims(attrs, len(shape)), bool(attrs.get("keepdim", False))


def _expand_back(g, shape, dims, keepdim):
    """The gradient of a reduction over `dims` of a tensor of `shape` back to that shape."""
    if dims is None:
        return g.reshape([1] * len(shape)).expand(*shape) if shape else g
    if not keepdim:
        for d in dims:
            g = g.unsqueeze(d)
    return g.expand(*shape)


@formula("sum")
def _sum(inputs, attrs, outs):
    x, shape, dims, keepdim = _reduction(inputs, attrs)
    return ("SumBackward0" if dims is None and "dim" not in attrs else "SumBackward1"), None, \
        lambda s, gs: [_expand_back(gs[0], shape, dims, keepdim)]


@formula("mean")
def _mean(inputs, attrs, outs):
    x, shape, dims, keepdim = _reduction(inputs, attrs)
    count = 1
    for d in (range(len(shape)) if dims is None else dims):
        count *= shape[d]
    return ("MeanBackward0" if dims is None and "dim" not in attrs else "MeanBackward1"), None, \
        lambda s, gs: [_expand_back(gs[0], shape, dims, keepdim) / count]


def _evenly(name):
    """max()/min() over everything and amax/amin: the gradient shared evenly by the tied
    positions (torch's evenly_distribute_backward and amax's). The reductions without a dim
    (max(), min(), median()) take evenly_distribute_backward's rule for a NaN result: it goes
    to the NaN positions; amax and amin compare only, as torch's scale_grad_by_count."""
    nan_goes_to_nans = name.endswith("Backward1") or name in ("MedianBackward0",
                                                                "NanmedianBackward0")

    def f(inputs, attrs, outs):
        x, shape, dims, keepdim = _reduction(inputs, attrs)

        def backward(saved, grads):
            x, out = saved
            mask = (x == _expand_back(out, shape, dims, keepdim))
            if nan_goes_to_nans:
                mask = mask | (x.isnan() & out.isnan())
            if dims is None:
                count = mask.sum()
            else:
                count = mask.sum(dims, keepdim=True)
            return [_expand_back(grads[0], shape, dims, keepdim) * mask / count]
        return name, (x, outs[0]), backward
    return f


FORMULAS["max"] = _evenly("MaxBackward1")
FORMULAS["min"] = _evenly("MinBackward1")
FORMULAS["amax"] = _evenly("AmaxBackward0")
FORMULAS["amin"] = _evenly("AminBackward0")


# ---- matrix products ----

def _matmul_grads(g, a, b):
    a2 = a.unsqueeze(0) if a.dim() == 1 else a
    b2 = b.unsqueeze(-1) if b.dim() == 1 else b
    g2 = g
    if b.dim() == 1:
        g2 = g2.unsqueeze(-1)
    if a.dim() == 1:
        g2 = g2.unsqueeze(-2)
    ga = g2.matmul(b2.transpose(-1, -2))
    gb = a2.transpose(-1, -2).matmul(g2)
    ga = ga.sum_to_size(*a2.shape) if tuple(ga.shape) != tuple(a2.shape) else ga
    gb = gb.sum_to_size(*b2.shape) if tuple(gb.shape) != tuple(b2.shape) else gb
    return [ga.reshape(a.shape), gb.reshape(b.shape)]


def _matmul_name(a, b):
    ra, rb = a.dim(), b.dim()
    if ra == 2 and rb == 2:
        return "MmBackward0"
    if ra == 1 and rb == 1:
        return "DotBackward0"
    if ra == 2 and rb == 1:
        return "MvBackward0"
    if ra == 1 and rb == 2:
        return "SqueezeBackward1"
    if ra == 3 and rb == 3 and a.shape[0] == b.shape[0]:
        return "BmmBackward0"
    return "UnsafeViewBackward0"


@formula("matmul", "mm", "bmm", "mv", "dot", "inner_product")
def _matmul(inputs, attrs, outs):
    a, b = inputs
    return _matmul_name(a, b), (a, b), lambda s, gs: _matmul_grads(gs[0], s[0], s[1])


# ---- views and shapes ----

def _reshape_back(node):
    def f(inputs, attrs, outs):
        shape = tuple(inputs[0].shape)
        rest = [None] * (len(inputs) - 1)  # view_as's other: its shape only
        return node, None, lambda s, gs: [gs[0].reshape(shape)] + rest
    return f


FORMULAS.update({
    "view": _reshape_back("ViewBackward0"),
    "reshape": _reshape_back("ViewBackward0"),
    "flatten": _reshape_back("ViewBackward0"),
    "unflatten": _reshape_back("ViewBackward0"),
    "unsqueeze": _reshape_back("UnsqueezeBackward0"),
    "squeeze": lambda inputs, attrs, outs: _reshape_back(
        "SqueezeBackward1" if attrs.get("dim") is not None else "SqueezeBackward0")(
            inputs, attrs, outs),
    "view_as": _reshape_back("ViewBackward0"),
    "reshape_as": _reshape_back("ViewBackward0"),
})


@formula("repeat")
def _repeat(inputs, attrs, outs):
    shape = tuple(inputs[0].shape)
    reps = list(attrs["repeats"])
    padded = (1,) * (len(reps) - len(shape)) + shape

    def backward(saved, grads):
        g = grads[0]
        split = []
        for r, n in zip(reps, padded):
            split += [r, n]
        g = g.reshape(split).sum(list(range(0, 2 * len(reps), 2))) if reps else g
        return [g.reshape(shape)]
    return "RepeatBackward0", None, backward


@formula("t")
def _t(inputs, attrs, outs):
    return "TBackward0", None, lambda s, gs: [gs[0].t()]


@formula("transpose", "swapaxes", "swapdims")
def _transpose(inputs, attrs, outs):
    d0, d1 = attrs.get("dim0", 0), attrs.get("dim1", 1)
    return "TransposeBackward0", None, lambda s, gs: [gs[0].transpose(d0, d1)]


@formula("permute")
def _permute(inputs, attrs, outs):
    rank = inputs[0].dim()
    dims = [d % rank for d in attrs["dims"]] if rank else []
    inverse = [0] * rank
    for i, d in enumerate(dims):
        inverse[d] = i
    return "PermuteBackward0", None, lambda s, gs: [gs[0].permute(*inverse)]


@formula("expand", "broadcast_to", "expand_as")
def _expand(inputs, attrs, outs):
    rest = [None] * (len(inputs) - 1)  # expand_as's other: its shape only
    return "ExpandBackward0", None, lambda s, gs: [gs[0]] + rest  # the engine sums dims


def _into_zeros(name, shape, session, attrs, g):
    """The gradient of a view op that picks distinct elements of its input (indexing, select,
    narrow) of `shape`: zeros of that shape with `g` written through the same view of them.
    (A view's node keeps its input's shape, not the input: an in-place op on the view makes
    the input hold a node that leads back here, which would be a cycle.)"""
    from .._ops import _queue  # noqa: PLC0415
    from .graph import requires_grad  # noqa: PLC0415
    if _grad_mode.is_grad_enabled() and requires_grad(g):
        # create_graph: a differentiable form (index_add of the positions), for the next order
        return _added_back(name, shape, session, (), attrs, [g])
    api = _torch()
    z = api.zeros(shape, dtype=g.dtype, device=g.device)
    view = _queue(z._session, name, [z], attrs, 1)[0]
    with _grad_mode.no_grad():
        view.copy_(g)
    return z


def _index_name(attrs):
    idx = attrs.get("indices")
    items = list(idx.items) if idx is not None else []
    if not items:
        return "AliasBackward0"
    kind = items[-1].WhichOneof("item") if hasattr(items[-1], "WhichOneof") else None
    return {"integer": "SelectBackward0", "slice": "SliceBackward0",
            "none": "UnsqueezeBackward0"}.get(kind, "SliceBackward0")


@formula("index")
def _index(inputs, attrs, outs):
    if len(inputs) > 1:  # advanced indexing with index tensors
        return "IndexBackward0", None, _not_implemented("index")
    shape, session = tuple(inputs[0].shape), inputs[0]._session
    return _index_name(attrs), None, lambda s, gs: [
        _into_zeros("index", shape, session, attrs, gs[0])]


def _picking(name, node):
    def f(inputs, attrs, outs):
        shape, session = tuple(inputs[0].shape), inputs[0]._session
        return node, None, lambda s, gs: [_into_zeros(name, shape, session, attrs, gs[0])]
    return f


FORMULAS.update({
    "select": _picking("select", "SelectBackward0"),
    "narrow": _picking("narrow", "SliceBackward0"),
    "slice": _picking("slice", "SliceBackward0"),
    "diagonal": _picking("diagonal", "DiagonalBackward0"),
})


@formula("cat", "concat", "concatenate")
def _cat(inputs, attrs, outs):
    rank = outs[0].dim()
    dim = attrs.get("dim", 0)
    dim = dim % rank if rank else 0
    sizes = [tuple(t.shape) for t in inputs]

    def backward(saved, grads):
        g = grads[0]
        out, offset = [], 0
        for shape in sizes:
            if len(shape) == 1 and shape[0] == 0 and rank != 1:  # torch's legacy empty input
                out.append(None)
                continue
            out.append(g.narrow(dim, offset, shape[dim]))
            offset += shape[dim]
        return out
    return "CatBackward0", None, backward


@formula("stack")
def _stack(inputs, attrs, outs):
    rank = outs[0].dim()
    dim = attrs.get("dim", 0) % rank

    def backward(saved, grads):
        return list(grads[0].unbind(dim))
    return "StackBackward0", None, backward


# ---- softmax and losses ----

@formula("softmax")
def _softmax(inputs, attrs, outs):
    dim = attrs["dim"]

    def backward(saved, grads):
        y = saved
        g = grads[0]
        return [y * (g - (g * y).sum(dim, keepdim=True))]
    return "SoftmaxBackward0", outs[0], backward


@formula("log_softmax")
def _log_softmax(inputs, attrs, outs):
    dim = attrs["dim"]

    def backward(saved, grads):
        y = saved
        g = grads[0]
        return [g - y.exp() * g.sum(dim, keepdim=True)]
    return "LogSoftmaxBackward0", outs[0], backward


@formula("mse_loss")
def _mse_loss(inputs, attrs, outs):
    reduction = attrs.get("reduction", "mean")
    a, b = inputs

    def backward(saved, grads):
        a, b = saved
        g = grads[0]
        d, e = 2 * (a - b) * g, 2 * (b - a) * g  # torch's target gradient: the same, swapped
        if reduction == "mean":
            d, e = d / a.numel(), e / a.numel()
        return [d, e]
    return "MseLossBackward0", (a, b), backward


def _class_grad(x, target, weight, ignore_index, reduction, g, probs):
    """d loss / d x for nll_loss over `probs` (softmax for cross_entropy, none for nll):
    (probs - onehot) * w / denominator, with ignored positions zero."""
    api = _torch()
    class_dim = 1 if x.dim() >= 2 else 0
    valid = target != ignore_index
    safe = api.where(valid, target, target * 0)
    # ignored positions get no one: their gradient is +0 everywhere, as torch's. A scatter into
    # zeros, not one_hot, whose check of the classes would wait for the forward pass (the
    # forward op checked them already; the scatter's kernel checks them again).
    w = valid.to(x.dtype)
    onehot = api.zeros(tuple(x.shape), dtype=x.dtype, device=x.device).scatter_(
        class_dim, safe.unsqueeze(class_dim), w.unsqueeze(class_dim))
    if weight is not None:
        w = w * weight.index_select(0, safe.reshape(-1)).reshape(safe.shape)
    if reduction == "mean":
        scale = g / w.sum()
    elif reduction == "sum":
        scale = g
    else:
        scale = g
    # a position torch's kernel skips (ignored, or weighed 0) gets 0, even where the mean's
    # total weight is 0 (every target ignored: 0 * inf would be NaN)
    wb = _torch().where(w == 0, 0.0, w * scale)
    wb = wb.unsqueeze(class_dim) if x.dim() >= 2 else wb
    # nll: 0 - onehot * w, so that positions without a target get +0 (torch scatters into zeros)
    return (probs - onehot) * wb if probs is not None else 0 - onehot * wb


@formula("cross_entropy")
def _cross_entropy(inputs, attrs, outs):
    """torch 1.13's cross_entropy: class indices (with label smoothing: (1 - e) nll + e / C times
    the smoothing term, each reduced as torch reduces it) or class probabilities."""
    x, target, weight = _operands(inputs, attrs, ("input", "target", "weight"))
    ignore = attrs.get("ignore_index", -100)
    reduction = attrs.get("reduction", "mean") or "mean"
    smoothing = attrs.get("label_smoothing") or 0.0
    class_dim = 1 if x.dim() >= 2 else 0
    probabilities = target.dtype.is_floating_point
    if probabilities:
        node = "DivBackward1" if reduction == "mean" else "NegBackward0"
    else:
        node = "AddBackward0" if smoothing else "NllLossBackward0"
    n = len(inputs)

    def backward(saved, grads):
        x, target, weight = saved
        g = grads[0]
        n_classes = x.shape[class_dim]
        log_p = x.log_softmax(class_dim)
        p = log_p.exp()
        w = None
        if weight is not None:
            shape = [1] * x.dim()
            shape[class_dim] = n_classes
            w = weight.reshape(shape)
        if probabilities:
            t = target * (1 - smoothing) + smoothing / n_classes if smoothing else target
            tw = t * w if w is not None else t
            scale = g.unsqueeze(class_dim) if reduction == "none" and x.dim() >= 2 else g
            if reduction == "mean":
                scale = g / (x.numel() // n_classes if x.dim() >= 2 else 1)
            gx = (p * tw.sum(class_dim, keepdim=True) - tw) * scale
            gt = -(log_p * w if w is not None else log_p) * scale * \
                ((1 - smoothing) if smoothing else 1)
            return [gx, gt, None][:n]
        gx = _class_grad(x, target, weight, ignore, reduction, g, p)
        if smoothing:
            valid = (target != ignore).to(x.dtype)
            if reduction == "mean":
                if weight is not None:
                    safe = _torch().where(target != ignore, target, target * 0)
                    denominator = (weight.index_select(0, safe.reshape(-1)).reshape(
                        safe.shape) * valid).sum()
                else:
                    denominator = valid.sum()
                per_row = valid * (g / denominator)
            elif reduction == "sum":
                per_row = valid * g
            else:
                per_row = valid * g
            rows = per_row.unsqueeze(class_dim) if x.dim() >= 2 else per_row
            total = w.sum() if w is not None else n_classes
            smooth = (p * total - (w if w is not None else 1.0)) * rows
            gx = gx * (1 - smoothing) + smooth * (smoothing / n_classes)
        return [gx, None, None][:n]
    return node, (x, target, weight), backward


@formula("nll_loss")
def _nll_loss(inputs, attrs, outs):
    x, target = inputs[0], inputs[1]
    weight = inputs[2] if len(inputs) > 2 else None
    ignore = attrs.get("ignore_index", -100)
    reduction = attrs.get("reduction", "mean")
    n = len(inputs)

    def backward(saved, grads):
        x, target, weight = saved
        return [_class_grad(x, target, weight, ignore, reduction, grads[0], None), None,
                None][:n]
    return "NllLossBackward0", (x, target, weight), backward


def _scatter_back(node, scatter):
    """index_select / gather: zeros of the input's shape with the gradient added back at the
    indexed positions (index_add / scatter_add)."""
    def f(inputs, attrs, outs):
        x, index = inputs
        dim = attrs.get("dim", 0)
        shape = tuple(x.shape)

        def backward(saved, grads):
            g = grads[0]
            z = _torch().zeros(shape, dtype=g.dtype, device=g.device)
            return [getattr(z, scatter)(dim, saved, g), None]
        return node, index, backward
    return f


FORMULAS["index_select"] = _scatter_back("IndexSelectBackward0", "index_add")
FORMULAS["gather"] = _scatter_back("GatherBackward0", "scatter_add")


@formula("addmm")
def _addmm(inputs, attrs, outs):
    beta, alpha = attrs.get("beta", 1), attrs.get("alpha", 1)
    bias, m1, m2 = inputs

    def backward(saved, grads):
        m1, m2 = saved
        g = grads[0]
        ga = g.mm(m2.t())
        gb = m1.t().mm(g)
        return [g * beta if beta != 1 else g, ga * alpha if alpha != 1 else ga,
                gb * alpha if alpha != 1 else gb]
    return "AddmmBackward0", (m1, m2), backward


@formula("embedding")
def _embedding(inputs, attrs, outs):
    weight, indices = inputs
    rows, width = weight.shape[0], weight.shape[1]

    def backward(saved, grads):
        g = grads[0]
        z = _torch().zeros((rows, width), dtype=g.dtype, device=g.device)
        return [z.index_add(0, saved.reshape(-1), g.reshape(-1, width)), None]
    return "EmbeddingBackward0", indices, backward


def embedding_padding(node, padding_idx):
    """F.embedding's padding_idx: the row it names gets no gradient (torch's
    embedding_backward); the server op does not take the index, so its node is told here."""
    inner = node._backward

    def backward(saved, grads):
        gw, gi = inner(saved, grads)
        keep = _torch().ones((gw.shape[0], 1), dtype=gw.dtype, device=gw.device)
        keep[padding_idx] = 0
        return [gw * keep, gi]
    node._backward = backward


@formula("gelu")
def _gelu(inputs, attrs, outs):
    approximate = attrs.get("approximate")  # True: the tanh form (the server's bool)
    approximate = "tanh" if approximate in (True, "tanh") else "none"
    x = inputs[0]

    def backward(saved, grads):
        x = saved
        g = grads[0]
        if approximate == "tanh":
            k = 0.7978845608028654  # sqrt(2 / pi)
            inner = k * (x + 0.044715 * x * x * x)
            t = inner.tanh()
            d_inner = k * (1 + 3 * 0.044715 * x * x)
            return [g * (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * d_inner)]
        cdf = 0.5 * (1 + (x * 0.7071067811865476).erf())
        pdf = (-0.5 * x * x).exp() * 0.3989422804014327
        return [g * (cdf + x * pdf)]
    return "GeluBackward0", x, backward


@formula("dropout")
def _dropout(inputs, attrs, outs):
    """The same draws again (the op's seed and offset) on ones: the mask scaled by 1 / (1 - p)."""
    x = inputs[0]
    shape, dtype, device, session = tuple(x.shape), x.dtype, x.device, x._session

    def backward(saved, grads):
        from .._ops import _queue  # noqa: PLC0415
        ones = _torch().ones(shape, dtype=dtype, device=device)
        with _grad_mode.no_grad():
            scale = _queue(session, "dropout", [ones], attrs, 1)[0]
        return [grads[0] * scale]
    # torch's CPU dropout (and its feature dropout on any device) multiplies by the mask; its
    # CUDA dropout is the fused native_dropout
    fused = device.type != "cpu" and attrs.get("noise_dims") is None
    return ("NativeDropoutBackward0" if fused else "MulBackward0"), None, backward


@formula("index_copy")
def _index_copy(inputs, attrs, outs):
    dim = attrs.get("dim", 0)
    index = inputs[1]

    def backward(saved, grads):
        g = grads[0]
        return [g.index_fill(dim, saved, 0), None, g.index_select(dim, saved)]
    return "IndexCopyBackward0", index, backward


# ---- more elementwise ----

_TWO_OVER_SQRT_PI = 1.1283791670955126
_PI = 3.141592653589793
_LN2 = 0.6931471805599453

FORMULAS.update({
    "erf": _unary("ErfBackward0", lambda g, x, y: g * _TWO_OVER_SQRT_PI * (-x * x).exp()),
    "erfc": _unary("ErfcBackward0", lambda g, x, y: -g * _TWO_OVER_SQRT_PI * (-x * x).exp()),
    "erfinv": _unary("ErfinvBackward0",
                     lambda g, x, y: g * (0.5 * _PI ** 0.5) * (y * y).exp(), False, True),
    "tan": _unary("TanBackward0", lambda g, x, y: g * (1 + y * y), False, True),
    "asin": _unary("AsinBackward0", lambda g, x, y: g / (1 - x * x).sqrt()),
    "acos": _unary("AcosBackward0", lambda g, x, y: -g / (1 - x * x).sqrt()),
    "atan": _unary("AtanBackward0", lambda g, x, y: g / (1 + x * x)),
    "sinh": _unary("SinhBackward0", lambda g, x, y: g * x.cosh()),
    "cosh": _unary("CoshBackward0", lambda g, x, y: g * x.sinh()),
    "asinh": _unary("AsinhBackward0", lambda g, x, y: g / (x * x + 1).sqrt()),
    "acosh": _unary("AcoshBackward0", lambda g, x, y: g / (x * x - 1).sqrt()),
    "atanh": _unary("AtanhBackward0", lambda g, x, y: g / (1 - x * x)),
    "exp2": _unary("Exp2Backward0", lambda g, x, y: g * y * _LN2, False, True),
    "deg2rad": _unary("Deg2RadBackward0", lambda g, x, y: g * (_PI / 180), False),
    "rad2deg": _unary("Rad2DegBackward0", lambda g, x, y: g * (180 / _PI), False),
    "lgamma": _unary("LgammaBackward0", lambda g, x, y: g * x.digamma()),
    "digamma": _unary("DigammaBackward0", lambda g, x, y: g * x.polygamma(1)),
    "sinc": _unary("SincBackward0", lambda g, x, y: _torch().where(
        x == 0, g * 0, g * ((_PI * x).cos() * _PI * x - (_PI * x).sin()) / (_PI * x * x))),
})
def _tiny_safe(x):
    """(|x| > eps, x with its tiny elements replaced by eps): torch's guard in i1_backward and
    i1e_backward, whose formulas divide by x (their gradient at 0 is 1/2)."""
    eps = _torch().finfo(x.dtype).eps
    not_tiny = x.abs() > eps
    return not_tiny, _where(not_tiny, x, _torch().tensor(eps, dtype=x.dtype, device=x.device))


def _i1_grad(g, x, y):
    not_tiny, safe = _tiny_safe(x)
    return g * _where(not_tiny, safe.i0() - y * safe.reciprocal(), 0.5)


def _i1e_grad(g, x, y):
    not_tiny, safe = _tiny_safe(x)
    return g * _where(not_tiny, _torch().special.i0e(safe) - y * (safe.sgn() + safe.reciprocal()),
                      0.5)


FORMULAS.update({
    "i0": _unary("I0Backward0", lambda g, x, y: g * _torch().special.i1(x)),
    "special_i0e": _unary("SpecialI0EBackward0",
                          lambda g, x, y: g * (_torch().special.i1e(x) - x.sgn() * y), True, True),
    "special_i1": _unary("SpecialI1Backward0", _i1_grad, True, True),
    "special_i1e": _unary("SpecialI1EBackward0", _i1e_grad, True, True),
    "special_ndtri": _unary("SpecialNdtriBackward0",
                            lambda g, x, y: g * (2 * _PI) ** 0.5 * (y * y / 2).exp(), False, True),
    "special_log_ndtr": _unary("SpecialLogNdtrBackward0",
                               lambda g, x, y: g / (2 * _PI) ** 0.5 * (-(y + x * x / 2)).exp(),
                               True, True),
    "special_erfcx": _unary("SpecialErfcxBackward0",
                            lambda g, x, y: (2.0 * x * y - 2.0 / _PI ** 0.5) * g, True, True),
})
for _alias, _of in (("arcsin", "asin"), ("arccos", "acos"), ("arctan", "atan"),
                    ("arcsinh", "asinh"), ("arccosh", "acosh"), ("arctanh", "atanh"),
                    ("negative", "neg"), ("absolute", "abs"), ("multiply", "mul"),
                    ("divide", "div"), ("true_divide", "div"), ("subtract", "sub")):
    FORMULAS[_alias] = FORMULAS[_of]


@formula("polygamma")
def _polygamma(inputs, attrs, outs):
    n = attrs.get("n", 0)
    return "PolygammaBackward0", inputs[0], lambda s, gs: [gs[0] * s.polygamma(n + 1)]


@formula("logit")
def _logit(inputs, attrs, outs):
    eps = attrs.get("eps")

    def backward(saved, grads):
        x, g = saved, grads[0]
        d = g / (x * (1 - x))
        if eps is not None:
            d = _torch().where((x < eps) | (x > 1 - eps), g * 0, d)
        return [d]
    return "LogitBackward0", inputs[0], backward


def _operands(inputs, attrs, names):
    """The op's operands by name: a tensor input, or the number (or None) sent as an attribute
    in its place."""
    it = iter(inputs)
    return [attrs[n] if n in attrs else next(it, None) for n in names]


def _is_tensor(v):
    return hasattr(v, "_ag")


def _binary(node, grad_a, grad_b, save_output=False):
    """A binary elementwise op whose operands may be numbers: grad_a(g, a, b, out) and
    grad_b(...) for the tensor ones. `node`: a name, or where torch's overloads name their
    nodes apart (with a number other, with two tensors[, with a number self])."""
    def f(inputs, attrs, outs):
        a, b = _operands(inputs, attrs, ("self", "other"))
        out = outs[0] if save_output else None
        form = 0 if not _is_tensor(b) else 1 if _is_tensor(a) else 2
        if isinstance(node, tuple) and form >= len(node):
            # an overload torch has no derivative for (remainder(number, tensor))
            op = node[0].replace("Backward0", "").lower()
            return "torch::autograd::NotImplemented", None, lambda s, gs: _raise(RuntimeError(
                f"derivative for aten::{op} is not implemented"))
        name = node if isinstance(node, str) else node[form]

        def backward(saved, grads):
            a, b, out = saved
            g = grads[0]
            r = []
            if _is_tensor(a):
                r.append(grad_a(g, a, b, out))
            if _is_tensor(b):
                r.append(grad_b(g, a, b, out))
            return r
        return name, (a, b, out), backward
    return f


def _where(c, x, y):
    return _torch().where(c, x, y)


def _raise(error):
    raise error


def _masked_at_zero(a, b, low, r):
    """xlogy's and xlog1py's self gradient `r`, 0 where self is 0 and other <= low (other a
    tensor or a number: no upload of the number)."""
    if _is_tensor(b):
        return _where((a == 0) & (b <= low), 0.0, r)
    return _where(a == 0, 0.0, r) if b <= low else r


FORMULAS.update({
    "atan2": _binary("Atan2Backward0", lambda g, a, b, o: g * b / (a * a + b * b),
                     lambda g, a, b, o: -g * a / (a * a + b * b)),
    "hypot": _binary("HypotBackward0", lambda g, a, b, o: g * a / o,
                     lambda g, a, b, o: g * b / o, True),
    # torch's where(a == b, g / 2, g).masked_fill_(a < b, 0): a NaN operand gives both g
    "maximum": _binary("MaximumBackward0",
                       lambda g, a, b, o: _where(a == b, g / 2, _where(a < b, 0.0, g)),
                       lambda g, a, b, o: _where(a == b, g / 2, _where(a > b, 0.0, g))),
    "minimum": _binary("MinimumBackward0",
                       lambda g, a, b, o: _where(a == b, g / 2, _where(a > b, 0.0, g)),
                       lambda g, a, b, o: _where(a == b, g / 2, _where(a < b, 0.0, g))),
    "fmax": _binary("FmaxBackward0", lambda g, a, b, o: _where((a >= b) | b.isnan(), g, 0.0),
                    lambda g, a, b, o: _where(~((a >= b) | b.isnan()), g, 0.0)),
    "fmin": _binary("FminBackward0", lambda g, a, b, o: _where((a <= b) | b.isnan(), g, 0.0),
                    lambda g, a, b, o: _where(~((a <= b) | b.isnan()), g, 0.0)),
    "remainder": _binary(("RemainderBackward0", "RemainderBackward1"), lambda g, a, b, o: g,
                         lambda g, a, b, o: -g * (a / b).floor()),
    "fmod": _binary(("FmodBackward0", "FmodBackward1"), lambda g, a, b, o: g,
                    lambda g, a, b, o: -g * (a / b).trunc()),
    # torch 1.13's: xlogy(grad, other), 0 where self is 0 and other <= 0
    "xlogy": _binary(("XlogyBackward2", "XlogyBackward0", "XlogyBackward1"),
                     lambda g, a, b, o: _masked_at_zero(a, b, 0, _torch().xlogy(g, b)),
                     lambda g, a, b, o: g * a / b),
    "logaddexp": _binary("LogaddexpBackward0", lambda g, a, b, o: g / (1 + (b - a).exp()),
                         lambda g, a, b, o: g / (1 + (a - b).exp())),
})


# Piecewise constant functions (and poisson's draws): a gradient of zeros, as torch's (their
# outputs require grad).
FORMULAS.update({
    op: _unary(node, lambda g, x, y: _torch().zeros_like(g), False)
    for op, node in (("sign", "SignBackward0"), ("sgn", "SgnBackward0"),
                     ("round", "RoundBackward0"), ("floor", "FloorBackward0"),
                     ("ceil", "CeilBackward0"), ("trunc", "TruncBackward0"),
                     ("fix", "TruncBackward0"), ("poisson", "PoissonBackward0"))
})


FORMULAS.update({
    "frac": _unary("FracBackward0", lambda g, x, y: g, False),
    "nan_to_num": _unary("NanToNumBackward0", lambda g, x, y: g * x.isfinite()),
    "special_entr": _unary("SpecialEntrBackward0", lambda g, x, y: g * -(1 + x.log())),
    "special_ndtr": _unary("MulBackward1", lambda g, x, y: g * (
        (x * x * -0.5).exp() * 0.3989422804014327)),
    "arctan2": FORMULAS["atan2"],
    "logaddexp2": _binary("Logaddexp2Backward0", lambda g, a, b, o: g / (1 + (b - a).exp2()),
                          lambda g, a, b, o: g / (1 + (a - b).exp2())),
    # torch's: self's ratio result / self (0 where self is 0); other's gradient is 0
    "copysign": _binary(("CopysignBackward1", "CopysignBackward0"),
                        lambda g, a, b, o: g * _where(a == 0, 0.0, o / a),
                        lambda g, a, b, o: _torch().zeros_like(g), True),
    "special_xlog1py": _binary(
        ("SpecialXlog1PyBackward2", "SpecialXlog1PyBackward0", "SpecialXlog1PyBackward1"),
        lambda g, a, b, o: _masked_at_zero(a, b, -1, _torch().special.xlog1py(g, b)),
        lambda g, a, b, o: g * a / (b + 1)),
})


def _second_only(node, name, grad_b):
    """A binary op differentiable in its second operand only, as torch's: backward raises
    torch's error when the first one required grad."""
    def f(inputs, attrs, outs):
        from .graph import requires_grad  # noqa: PLC0415
        a, b = _operands(inputs, attrs, ("self", "other"))
        need_a = _is_tensor(a) and requires_grad(a)

        def backward(saved, grads):
            a, b = saved
            if need_a:
                raise NotImplementedError(f"the derivative for '{name}' is not implemented.")
            r = [None] if _is_tensor(a) else []
            if _is_tensor(b):
                r.append(grad_b(grads[0], a, b))
            return r
        return node, (a, b), backward
    return f


FORMULAS.update({
    "special_zeta": _second_only("SpecialZetaBackward0", "zeta", lambda g, a, b: g * -a * (
        _torch().special.zeta(a + 1.0, b))),
    "igamma": _second_only("IgammaBackward0", "igamma: input", lambda g, a, b: g * (
        (a - 1) * b.log() - b - a.lgamma()).exp()),
    "igammac": _second_only("IgammacBackward0", "igammac: input", lambda g, a, b: -g * (
        (a - 1) * b.log() - b - a.lgamma()).exp()),
})


@formula("lerp")
def _lerp(inputs, attrs, outs):
    start, end, weight = _operands(inputs, attrs, ("self", "end", "weight"))

    def backward(saved, grads):
        start, end, weight = saved
        g = grads[0]
        r = [g * (1 - weight), g * weight]
        if _is_tensor(weight):
            r.append(g * (end - start))
        return r
    return ("LerpBackward1" if _is_tensor(weight) else "LerpBackward0"), \
        (start, end, weight), backward


def _addc(node, divide):
    def f(inputs, attrs, outs):
        value = attrs.get("value", 1)
        value = 1 if value is None else value
        _, t1, t2 = inputs

        def backward(saved, grads):
            t1, t2 = saved
            g = grads[0] * value if value != 1 else grads[0]
            if divide:
                return [grads[0], g / t2, -g * t1 / (t2 * t2)]
            return [grads[0], g * t2, g * t1]
        return node, (t1, t2), backward
    return f


FORMULAS["addcmul"] = _addc("AddcmulBackward0", False)
FORMULAS["addcdiv"] = _addc("AddcdivBackward0", True)


def _clamp_bounds(kind):
    names = {"clamp": ("self", "min", "max"), "clamp_min": ("self", "min"),
             "clamp_max": ("self", "max")}[kind]

    def f(inputs, attrs, outs):
        vals = _operands(inputs, attrs, names)
        x = vals[0]
        lo = vals[names.index("min")] if "min" in names else None
        hi = vals[names.index("max")] if "max" in names else None
        tensors = _is_tensor(lo) or _is_tensor(hi)
        node = {"clamp": "ClampBackward0" if tensors else "ClampBackward1",
                "clamp_min": "ClampMinBackward1" if tensors else "ClampMinBackward0",
                "clamp_max": "ClampMaxBackward1" if tensors else "ClampMaxBackward0"}[kind]

        def backward(saved, grads):
            x, lo, hi = saved
            g = grads[0]
            mask = None
            if lo is not None:
                mask = x >= lo
            if hi is not None:
                mask = (x <= hi) if mask is None else mask & (x <= hi)
            # torch's clamp_backward_min_max: where min > max the output is max
            r = [_where(mask, g, 0.0) if mask is not None else g]
            if _is_tensor(lo):
                r.append(_where((x < lo) if hi is None else (x < lo) & (lo < hi), g, 0.0))
            if _is_tensor(hi):
                r.append(_where((x > hi) if lo is None else (x > hi) | (hi < lo), g, 0.0))
            return r
        return node, (x, lo, hi), backward
    return f


for _k in ("clamp", "clamp_min", "clamp_max"):
    FORMULAS[_k] = _clamp_bounds(_k)
FORMULAS["clip"] = FORMULAS["clamp"]


# ---- more reductions ----

def _count(shape, dims):
    n = 1
    for d in (range(len(shape)) if dims is None else dims):
        n *= shape[d]
    return n


def _moment(node, std, with_mean=False):
    """var / std (and var_mean / std_mean) with Bessel's correction `correction`."""
    def f(inputs, attrs, outs):
        x, shape, dims, keepdim = _reduction(inputs, attrs)
        c = attrs.get("correction")
        c = 1 if c is None else c
        n = _count(shape, dims)
        dof = n - c

        def backward(saved, grads):
            x, out = saved
            g = grads[0]
            if g is not None and dof <= 0 and dims is None:
                if len(shape):  # torch 1.13's var_backward returns a 0-d gradient there
                    raise RuntimeError(f"Function {node} returned an invalid gradient at index 0 "
                                       f"- got [] but expected shape compatible with "
                                       f"{list(shape)}")
                return [g * (float("nan") if std else float("inf"))]
            mean = x.mean(dims, keepdim=True) if dims is not None else x.mean()
            r = None
            if g is not None:
                g = _expand_back(g, shape, dims, keepdim)
                if std:  # 0 where the deviation is 0, as torch's std_backward
                    o = _expand_back(out, shape, dims, keepdim)
                    r = _where(o == 0, 0.0, g * (x - mean) / (o * dof))
                else:  # 2 / 0 is infinite, as in torch's double arithmetic
                    r = g * (2.0 / dof if dof else float("inf")) * (x - mean)
            if with_mean and grads[1] is not None:
                gm = _expand_back(grads[1], shape, dims, keepdim) / n
                r = gm if r is None else r + gm
            return [r]
        return node, (x, outs[0]), backward
    return f


FORMULAS["var"] = _moment("VarBackward0", False)
FORMULAS["std"] = _moment("StdBackward0", True)
FORMULAS["var_mean"] = _moment("VarMeanBackward0", False, True)
FORMULAS["std_mean"] = _moment("StdMeanBackward0", True, True)


@formula("logsumexp")
def _logsumexp(inputs, attrs, outs):
    x, shape, dims, keepdim = _reduction(inputs, attrs)

    def backward(saved, grads):
        x, out = saved
        return [_expand_back(grads[0], shape, dims, keepdim) *
                (x - _expand_back(out, shape, dims, keepdim)).exp()]
    return "LogsumexpBackward0", (x, outs[0]), backward


@formula("norm")
def _norm(inputs, attrs, outs):
    x, shape, dims, keepdim = _reduction(inputs, attrs)
    p = attrs.get("p", 2.0)
    p = 2.0 if p is None else float(p)

    def backward(saved, grads):
        x, out = saved
        g = _expand_back(grads[0], shape, dims, keepdim)
        n = _expand_back(out, shape, dims, keepdim)
        if p == 0:  # torch's norm_backward gives no gradient (the input's grad stays None)
            return [None]
        if p == 1:
            return [g * x.sgn()]
        if p == float("inf") or p == float("-inf"):
            mask = (x.abs() == n)
            count = mask.sum(dims, keepdim=True) if dims is not None else mask.sum()
            return [g * x.sgn() * mask / count]
        if p == 2:
            return [_where(n == 0, g * 0, g * x / n)]
        return [_where(n == 0, g * 0, g * _norm_derivative(x, n, p))]
    return "NormBackward1", (x, outs[0]), backward


def _norm_derivative(x, norm, p):
    """d ||x||_p / dx = sgn(x) |x|^(p-1) / ||x||^(p-1): 0 where x is 0 (torch's form)."""
    d = x.sgn() * x.abs().pow(p - 1) / norm.pow(p - 1)
    return _where(x == 0, 0.0, d) if p < 1 else d


def _exclusive_products(x, dim):
    """For each position along dim, the product of the other elements (zeros counted exactly:
    the products from the left times those from the right)."""
    api = _torch()
    n = x.shape[dim]
    one = api.ones_like(x.narrow(dim, 0, 1))
    left = api.cat([one, x.narrow(dim, 0, n - 1).cumprod(dim)], dim)
    right = api.cat([x.narrow(dim, 1, n - 1).flip([dim]).cumprod(dim).flip([dim]), one], dim)
    return left * right


@formula("prod")
def _prod(inputs, attrs, outs):
    x = inputs[0]
    shape = tuple(x.shape)
    dim = attrs.get("dim")
    if isinstance(dim, (list, tuple)):
        dim = dim[0] if len(dim) == 1 else None
    keepdim = bool(attrs.get("keepdim", False))

    def backward(saved, grads):
        x = saved
        g = grads[0]
        if x.numel() == 0:
            return [x * 0]
        if dim is None:
            others = _exclusive_products(x.reshape(-1), 0).reshape(shape)
            return [g * others]
        d = dim % len(shape) if shape else 0
        return [_expand_back(g, shape, [d], keepdim) * _exclusive_products(x, d)]
    return ("ProdBackward1" if dim is not None else "ProdBackward0"), x, backward


@formula("cumsum")
def _cumsum(inputs, attrs, outs):
    dim = attrs["dim"]
    return "CumsumBackward0", None, lambda s, gs: [_reversed_cumsum(gs[0], dim)]


def _reversed_cumsum(t, dim):
    return t.flip([dim]).cumsum(dim).flip([dim])


@formula("cumprod")
def _cumprod(inputs, attrs, outs):
    """Before the first zero along dim: reversed_cumsum(g out) / x (torch's); at the first zero:
    the products of the others (the cumulative product with that zero taken as 1); after it:
    0. Found with masks, without reading the data."""
    dim = attrs["dim"]

    def backward(saved, grads):
        x, out = saved
        g = grads[0]
        if x.dim() == 0 or x.shape[dim] <= 1:
            return [g]
        zeros_so_far = (x == 0).cumsum(dim)
        before = zeros_so_far == 0
        first = (x == 0) & (zeros_so_far == 1)
        one_at_first = _where(first, 1.0, x)
        at_first = _reversed_cumsum(g * one_at_first.cumprod(dim), dim)
        regular = _reversed_cumsum(g * out, dim) / _where(before, x, 1.0)
        return [_where(before, regular, _where(first, at_first, 0.0))]
    return "CumprodBackward0", (inputs[0], outs[0]), backward


@formula("logcumsumexp")
def _logcumsumexp(inputs, attrs, outs):
    """torch's: the positive and negative parts of the gradient each through a reversed
    logcumsumexp, so that nothing overflows."""
    dim = attrs["dim"]

    def backward(saved, grads):
        x, out = saved
        g = grads[0]
        lowest = _torch().finfo(g.dtype).min

        def reversed_lcse(t):
            return t.flip([dim]).logcumsumexp(dim).flip([dim])
        log_abs = g.abs().log()
        pos = (reversed_lcse(_where(g > 0, log_abs, lowest) - out) + x).exp()
        neg = (reversed_lcse(_where(g < 0, log_abs, lowest) - out) + x).exp()
        return [pos - neg]
    return "LogcumsumexpBackward0", (inputs[0], outs[0]), backward


@formula("nansum")
def _nansum(inputs, attrs, outs):
    x, shape, dims, keepdim = _reduction(inputs, attrs)
    return "NansumBackward0", x, lambda s, gs: [
        _where(s.isnan(), 0.0, _expand_back(gs[0], shape, dims, keepdim))]


def _selected(node, scatter="scatter", full_rank=False):
    """Ops that pick values along a dim with their indices (max(dim), sort, topk, kthvalue,
    median(dim), mode, cummax): the gradient goes back to the picked positions."""
    def f(inputs, attrs, outs):
        x = inputs[0]
        shape = tuple(x.shape)
        rank = len(shape)
        dim = attrs.get("dim", -1)
        dim = (dim if dim is not None else -1) % rank if rank else 0
        keepdim = bool(attrs.get("keepdim", False)) or full_rank

        def backward(saved, grads):
            g = grads[0]
            index = saved
            if g is None:
                return [None]
            if not rank:
                return [g]
            if not keepdim:
                g, index = g.unsqueeze(dim), index.unsqueeze(dim)
            z = _torch().zeros(shape, dtype=g.dtype, device=g.device)
            return [getattr(z, scatter)(dim, index, g)]
        return node, outs[1], backward
    return f


FORMULAS.update({
    "max.dim": _selected("MaxBackward0"),
    "min.dim": _selected("MinBackward0"),
    "kthvalue": _selected("KthvalueBackward0"),
    "mode": _selected("ModeBackward0"),
    "sort": _selected("SortBackward0", full_rank=True),
    "topk": _selected("TopkBackward0", full_rank=True),
    "cummax": _selected("CummaxBackward0", "scatter_add", True),
    "cummin": _selected("CumminBackward0", "scatter_add", True),
})


def _median(node):
    with_dim = _selected(node)
    evenly = _evenly(node.replace("Backward1", "Backward0"))

    def f(inputs, attrs, outs):
        return with_dim(inputs, attrs, outs) if len(outs) > 1 else evenly(inputs, attrs, outs)
    return f


FORMULAS["median"] = _median("MedianBackward1")
FORMULAS["nanmedian"] = _median("NanmedianBackward1")


# ---- ops that pick elements of their input: the gradient is added back where each output
# element came from, found by running the op on the input's positions ----

def _added_back(name, shape, session, rest, attrs, grads):
    """The gradient of input 0 of op `name`, each of whose outputs' elements is one element of
    input 0 or a constant: the op runs again, with the same other inputs and attributes, on the
    positions 1..n of a tensor of input 0's shape (0 where it fills a constant), and each
    output's gradient is added back at the positions it came from (index_add, so that an
    element picked twice gets both)."""
    from .._ops import _queue  # noqa: PLC0415
    api = _torch()
    n = 1
    for s in shape:
        n *= s
    if "value" in attrs or name == "constant_pad_nd":
        attrs = {**attrs, "value": 0.0}
    like = next(g for g in grads if g is not None)
    positions = api.arange(1, n + 1, dtype=_dtypes.float64, device=like.device)
    with _grad_mode.no_grad():
        maps = _queue(session, name, [positions.reshape(shape), *rest], attrs, len(grads))
    flat = api.zeros(n + 1, dtype=like.dtype, device=like.device)
    for g, m in zip(grads, maps):
        if g is not None:
            flat = flat.index_add(0, m.reshape(-1).long(), g.reshape(-1))
    return flat.narrow(0, 1, n).reshape(shape)


def _picking_op(name, node):
    """The formula of op `name` that picks elements of input 0 (flip, roll, pad, advanced
    indexing, unfold, split …): _added_back."""
    def f(inputs, attrs, outs):
        x, rest = inputs[0], tuple(inputs[1:])
        shape, session = tuple(x.shape), x._session
        return node, rest, lambda saved, grads: [
            _added_back(name, shape, session, saved, attrs, grads)] + [None] * len(saved)
    return f


def _places(sizes, strides, offset, span, device):
    """The storage positions of the elements of a tensor of this geometry, in order."""
    api = _torch()
    return api.arange(span, dtype=api.int64, device=device).as_strided(
        tuple(sizes), tuple(strides), offset).reshape(-1)


def as_strided_backward(x_geometry, out_geometry, shape):
    """The backward of an as_strided view (sizes, strides, storage offset) `out_geometry` of
    a tensor of `x_geometry` and `shape`: the output's gradient is added up per storage
    position, and each element of the input takes its position's (where the input repeats a
    position, as an expanded tensor does, the sum is shared among its elements: torch's
    as_strided_backward)."""
    (xs, xst, xo), (os_, ost, oo) = x_geometry, out_geometry
    start = min(xo, oo)
    span = storage_span((xs, xst, xo - start), (os_, ost, oo - start))
    repeats = _may_overlap(xs, xst)

    def backward(saved, grads):
        g = grads[0]
        api = _torch()
        at_x = _places(xs, xst, xo - start, span, g.device)
        flat = api.zeros(span, dtype=g.dtype, device=g.device).index_add(
            0, _places(os_, ost, oo - start, span, g.device), g.reshape(-1))
        if repeats:
            count = api.zeros(span, dtype=g.dtype, device=g.device).index_add(
                0, at_x, api.ones(at_x.shape, dtype=g.dtype, device=g.device))
            flat = flat / count.clamp_min(1)
        return [flat.index_select(0, at_x).reshape(shape)]
    return backward


def storage_span(*geometries):
    """The storage positions 0 … span - 1 that tensors of these (sizes, strides, offset) reach
    (an empty one reaches none)."""
    span = 0
    for sizes, strides, offset in geometries:
        if all(n > 0 for n in sizes):
            span = max(span, offset + 1 + sum((n - 1) * k for n, k in zip(sizes, strides)))
    return span


def _may_overlap(sizes, strides):
    """Whether two elements of this geometry may share a storage position (false for every
    tensor whose dims, ordered by stride, each step past the extent of the ones before)."""
    extent = 0
    for stride, n in sorted((st, n) for n, st in zip(sizes, strides) if n > 1):
        if stride <= extent:
            return True
        extent += (n - 1) * stride
    return False


def _geometry(info):
    return tuple(info.sizes), tuple(info.strides), info.storage_offset


def _as_strided(inputs, attrs, outs):
    x = inputs[0]
    if x.is_contiguous() and x.storage_offset() == 0:
        return _picking_op("as_strided", "AsStridedBackward0")(inputs, attrs, outs)
    return "AsStridedBackward0", None, as_strided_backward(
        _geometry(x._meta()), _geometry(outs[0]._meta()), tuple(x.shape))


for _name, _node in {
        "index.Tensor": "IndexBackward0", "flip": "FlipBackward0", "roll": "RollBackward0",
        "take": "TakeBackward0", "tril": "TrilBackward0", "triu": "TriuBackward0",
        "pad": "ConstantPadNdBackward0", "constant_pad_nd": "ConstantPadNdBackward0",
        "im2col": "Im2ColBackward0", "unfold": "UnfoldBackward0",
        "repeat_interleave": "RepeatInterleaveBackward0",
        "masked_select": "MaskedSelectBackward0", "diag": "DiagBackward0",
        "diagflat": "DiagflatBackward0", "diag_embed": "DiagEmbedBackward0",
        "movedim": "PermuteBackward0",
        "moveaxis": "PermuteBackward0", "mT": "TransposeBackward0", "mH": "TransposeBackward0",
        "H": "TransposeBackward0",
        "adjoint": "TBackward0",
        "T": "PermuteBackward0", "split": "SplitBackward0",
        "split_with_sizes": "SplitWithSizesBackward0", "chunk": "SplitBackward0",
        "unbind": "UnbindBackward0", "tensor_split": "SliceBackward0"}.items():
    FORMULAS[_name] = _picking_op(_name, _node)
FORMULAS["as_strided"] = _as_strided


def _split_node(inputs, attrs, outs, _split=FORMULAS["split"]):
    """split by a list of sizes is torch's split_with_sizes (its node's name)."""
    node, saved, backward = _split(inputs, attrs, outs)
    if isinstance(attrs.get("split_size"), (list, tuple)):
        node = "SplitWithSizesBackward0"
    return node, saved, backward


FORMULAS["split"] = _split_node


def _pad_node(inputs, attrs, outs):
    """F.pad's node as torch names it for the mode and the number of padded dims."""
    mode = attrs.get("mode", "constant") or "constant"
    k = len(attrs.get("pad", ())) // 2
    name = {"reflect": f"ReflectionPad{k}DBackward0", "replicate": f"ReplicationPad{k}DBackward0",
            }.get(mode, "ConstantPadNdBackward0")
    return _picking_op("pad", name)(inputs, attrs, outs)


FORMULAS["pad"] = _pad_node


# ---- ops that write values into a copy of their input ----

@formula("masked_fill")
def _masked_fill(inputs, attrs, outs):
    x, mask, value = _operands(inputs, attrs, ("self", "mask", "value"))

    def backward(saved, grads):
        mask, value = saved
        g = grads[0]
        r = [_where(mask, 0.0, g), None]
        if _is_tensor(value):
            r.append(_where(mask, g, 0.0).sum())
        return r
    return ("MaskedFillBackward1" if _is_tensor(value) else "MaskedFillBackward0"), \
        (mask, value), backward


@formula("index_fill")
def _index_fill(inputs, attrs, outs):
    x, index, value = _operands(inputs, attrs, ("self", "index", "value"))
    dim = attrs.get("dim", 0)

    def backward(saved, grads):
        index, value = saved
        g = grads[0]
        r = [g.index_fill(dim, index, 0), None]
        if _is_tensor(value):  # each filled position once, as torch's
            r.append(g.index_select(dim, index.unique()).sum())
        return r
    return ("IndexFillBackward1" if _is_tensor(value) else "IndexFillBackward0"), \
        (index, value), backward


@formula("index_add")
def _index_add(inputs, attrs, outs):
    dim = attrs.get("dim", 0)
    alpha = attrs.get("alpha", 1)
    alpha = 1 if alpha is None else alpha
    source = inputs[2]
    rank = source.dim()

    def backward(saved, grads):
        g = grads[0]
        picked = g.index_select(dim, saved) if rank else g.index_select(dim, saved).reshape(())
        return [g, None, picked * alpha if alpha != 1 else picked]
    return "IndexAddBackward0", inputs[1], backward


def _scatter_formula(add):
    def f(inputs, attrs, outs):
        x, index, src = _operands(inputs, attrs, ("self", "index", "src"))
        dim = attrs.get("dim", 0)

        def backward(saved, grads):
            index, src = saved
            g = grads[0]
            r = [g if add else g.scatter(dim, index, 0), None]
            if _is_tensor(src):
                r.append(g.gather(dim, index))  # index's shape, as torch's
            return r
        node = "ScatterAddBackward0" if add else (
            "ScatterBackward0" if _is_tensor(src) else "ScatterBackward1")
        return node, (index, src), backward
    return f


FORMULAS["scatter"] = _scatter_formula(False)
FORMULAS["scatter_add"] = _scatter_formula(True)


@formula("masked_scatter")
def _masked_scatter(inputs, attrs, outs):
    x, mask, source = inputs
    source_shape = tuple(source.shape)

    def backward(saved, grads):
        mask = saved
        g = grads[0]
        picked = g.masked_select(mask)
        n = 1
        for s in source_shape:
            n *= s
        flat = _torch().zeros(n, dtype=g.dtype, device=g.device)
        flat[:picked.numel()] = picked
        return [_where(mask, 0.0, g), None, flat.reshape(source_shape)]
    return "MaskedScatterBackward0", mask, backward


@formula("index_put")
def _index_put(inputs, attrs, outs):
    """x[indices] = values (x.index_put_): only through the in-place op (its target a whole
    tensor of its own)."""
    x, values, indices = inputs[0], inputs[1], tuple(inputs[2:])
    accumulate = bool(attrs.get("accumulate", False))
    dims = attrs.get("dims")
    session = x._session

    def backward(saved, grads):
        from .._ops import _queue  # noqa: PLC0415
        g = grads[0]
        with _grad_mode.no_grad():
            picked = _queue(session, "index.Tensor", [g, *saved], {"dims": dims}, 1)[0]
        if accumulate:
            gx = g
        else:
            gx = g.clone()
            zero = _torch().zeros((), dtype=g.dtype, device=g.device)
            with _grad_mode.no_grad():
                _queue(session, "index_put_", [gx, zero, *saved], {"dims": dims}, 0)
        return [gx, picked] + [None] * len(saved)
    return "IndexPutBackward0", indices, backward


@formula("fill")
def _fill(inputs, attrs, outs):
    value = inputs[1] if len(inputs) > 1 else None
    if value is None:
        return "FillBackward0", None, lambda s, gs: [gs[0] * 0]
    return "FillBackward1", None, lambda s, gs: [gs[0] * 0, gs[0].sum()]


@formula("fill_")
def _fill_in_place(inputs, attrs, outs):
    node, saved, backward = _fill(inputs, attrs, outs)
    return ("FillBackward2" if node == "FillBackward0" else "FillBackward3"), saved, backward


@formula("zero")
def _zero(inputs, attrs, outs):
    return "ZeroBackward0", None, lambda s, gs: [gs[0] * 0]


def _zero_gradients(name_of):
    """The formula of a random draw or fill whose values do not follow its inputs' values (torch
    gives each input a zero gradient: no reparameterisation); name_of(inputs, attrs) is
    torch's node name."""
    def f(inputs, attrs, outs):
        shapes = [tuple(t.shape) if _is_tensor(t) else None for t in inputs]

        def backward(saved, grads):
            g = grads[0]
            return [None if s is None else g.new_zeros(s) for s in shapes]
        return name_of(inputs, attrs), None, backward
    return f


FORMULAS.update({op: _refused_later(op.split(".")[0])
                 for op in ("aminmax", "floor_divide", "floor_divide_", "heaviside",
                            "heaviside_", "histogram", "histogram.bins_tensor", "binomial")})
FORMULAS.update({
    # torch.bernoulli(p); p.bernoulli_(float p), p.bernoulli_(tensor p)
    "bernoulli": _zero_gradients(lambda i, a: "BernoulliBackward0"),
    "bernoulli_": _zero_gradients(
        lambda i, a: "BernoulliBackward1" if len(i) > 1 else "BernoulliBackward2"),
    # torch.normal(mean, std) with tensors: which of the two is one
    "normal": _zero_gradients(lambda i, a: "NormalBackward" + (
        "3" if _is_tensor(i[0]) and _is_tensor(i[1]) else "1" if _is_tensor(i[0]) else "2")),
    # random_(from, to), random_(to), random_()
    "random_": _zero_gradients(lambda i, a: "RandomBackward" + (
        "0" if a.get("to") is not None else "1" if a.get("from") is not None else "2")),
})
FORMULAS.update({
    op + "_": _zero_gradients(lambda i, a, node=node: node)
    for op, node in (("uniform", "UniformBackward0"), ("normal", "NormalBackward0"),
                     ("exponential", "ExponentialBackward0"),
                     ("geometric", "GeometricBackward0"), ("cauchy", "CauchyBackward0"),
                     ("log_normal", "LogNormalBackward0"))
})


@formula("copy")
def _copy(inputs, attrs, outs):
    """dst.copy_(src): src's gradient; dst's old values get none (zeros where its history
    needs one)."""
    from .graph import requires_grad  # noqa: PLC0415
    old_needs_grad = requires_grad(inputs[0])
    return "torch::autograd::CopyBackwards", None, \
        lambda s, gs: [gs[0] * 0 if old_needs_grad else None, gs[0]]



@formula("nanmean")
def _nanmean(inputs, attrs, outs):
    """nansum / the count of non-NaN values, as torch composes it (its node is the division's)."""
    x, shape, dims, keepdim = _reduction(inputs, attrs)

    def backward(x, grads):
        kept = ~x.isnan()
        count = kept.sum(dims, keepdim=True) if dims is not None else kept.sum()
        # a row of NaN only: 0 / 0, as torch's division by its count of none
        return [_expand_back(grads[0], shape, dims, keepdim) / count * kept]
    return "DivBackward0", x, backward


@formula("diff")
def _diff(inputs, attrs, outs):
    """diff is linear: its gradient is the n-th backward difference of the output's gradient
    (each step g[i - 1] - g[i] over one more element), split back into prepend, input and
    append."""
    x, prepend, append = _operands(inputs, attrs, ("self", "prepend", "append"))
    n = attrs.get("n", 1)
    dim = attrs.get("dim", -1) % max(x.dim(), 1)
    parts = [(t, t.shape[dim] if t.dim() else 1) for t in (prepend, x, append) if _is_tensor(t)]
    x_at = 1 if _is_tensor(prepend) else 0

    def backward(saved, grads):
        f = _torch().nn.functional
        g = grads[0]
        pad = [0, 0] * (g.dim() - dim - 1)
        for _ in range(n):
            g = f.pad(g, pad + [1, 0]) - f.pad(g, pad + [0, 1])
        out, at = [], 0
        for t, size in parts:
            out.append(g.narrow(dim, at, size).reshape(t.shape))
            at += size
        return [out.pop(x_at)] + out  # the inputs' order: self, prepend, append
    return "SubBackward0", None, backward


@formula("inner")
def _inner(inputs, attrs, outs):
    """inner(a, b)[i..., j...] = sum_k a[i..., k] b[j..., k]: each operand's gradient a
    contraction of the output's with the other."""
    a, b = inputs

    def backward(saved, grads):
        a, b = saved
        g = grads[0]
        if a.dim() == 0 or b.dim() == 0:
            return [(g * b).sum() if a.dim() == 0 else g * b,
                    (g * a).sum() if b.dim() == 0 else g * a]
        ka, kb = a.dim() - 1, b.dim() - 1
        la = "".join(chr(ord("a") + i) for i in range(ka))
        lb = "".join(chr(ord("n") + i) for i in range(kb))
        einsum = _torch().einsum
        return [einsum(f"{la}{lb},{lb}z->{la}z", g, b), einsum(f"{la}{lb},{la}z->{lb}z", g, a)]
    return "ReshapeAliasBackward0", (a, b), backward


@formula("block_diag")
def _block_diag(inputs, attrs, outs):
    """Each input's gradient: its block of the output's (0-d inputs as 1 x 1, 1-d as 1 x n)."""
    shapes = [tuple(t.shape) for t in inputs]

    def backward(saved, grads):
        g = grads[0]
        r, c, out = 0, 0, []
        for shape in shapes:
            rows, cols = (1, 1) if not shape else (1, shape[0]) if len(shape) == 1 else shape
            out.append(g[r:r + rows, c:c + cols].reshape(shape))
            r, c = r + rows, c + cols
        return out
    return "BlockDiagBackward0", None, backward


@formula("put")
def _put(inputs, attrs, outs):
    """x.put_(index, source): x's gradient with the written positions zeroed (kept when
    accumulating); source's, the gradient taken at them."""
    x, index, source = inputs
    accumulate = bool(attrs.get("accumulate", False))
    source_shape = tuple(source.shape)

    def backward(index, grads):
        g = grads[0]
        gx = g if accumulate else g.put(index, _torch().zeros_like(index, dtype=g.dtype))
        return [gx, None, g.take(index).reshape(source_shape)]
    return "PutBackward0", index, backward


@formula("scatter_reduce")
def _scatter_reduce(inputs, attrs, outs):
    """torch's scatter_reduce_backward (sum, mean, prod, amax, amin): where include_self is
    false, self's values at the scattered positions are not in the result."""
    x, index, src = inputs
    dim, reduce = attrs["dim"], attrs["reduce"]
    include_self = bool(attrs.get("include_self", True))

    def backward(saved, grads):
        x, index, src, out = saved
        g = grads[0]
        api = _torch()
        if reduce == "sum":
            gx, gs = g, g.gather(dim, index)
        elif reduce == "prod":  # products of the others, with zeros taken out exactly
            from .._composite import _scatter_reduce  # noqa: PLC0415 - import cycle
            kept = x.masked_fill(x == 0, 1)
            gx = g * _scatter_reduce(kept, dim, index, src, "prod", include_self) / kept
            zero = src == 0
            zeros_at = api.zeros_like(g).scatter_add(dim, index, zero.to(g.dtype)).gather(dim, index)
            single = zero & (zeros_at == 1)
            others = _scatter_reduce(x, dim, index, src.masked_fill(single, 1), "prod",
                                     include_self)
            gs = _where(single, (g * others).gather(dim, index),
                        (g * out).gather(dim, index) / src.masked_fill(zero, 1))
        elif reduce == "mean":
            n = api.ones_like(g) if include_self else api.zeros_like(g)
            n = n.scatter_add(dim, index, api.ones_like(src))
            gx = g / n.clamp_min(1)
            gs = gx.gather(dim, index)
        else:
            x_is = x == out
            src_is = src == out.gather(dim, index)
            n = x_is.to(g.dtype).scatter_add(dim, index, src_is.to(g.dtype))  # torch's count
            share = g / n.clamp_min(1)
            gx = _where(x_is, share, 0.0)
            gs = _where(src_is, share.gather(dim, index), 0.0)
        if not include_self:
            gx = gx.scatter(dim, index, 0.0)
        return [gx, None, gs]
    return "ScatterReduceBackward0", (x, index, src, outs[0]), backward



def _quantile(ignore_nan):
    """quantile / nanquantile: each output interpolates two elements of the sorted input (the
    same two torch's does: NaN sorts last and, for quantile, a row with NaN takes its last
    element), so its gradient goes to those two positions with the interpolation's weights."""
    def f(inputs, attrs, outs):
        x, q = _operands(inputs, attrs, ("self", "q"))
        dim = attrs.get("dim")
        keepdim = bool(attrs.get("keepdim", False))
        how = attrs.get("interpolation", "linear")
        shape = tuple(x.shape)

        def backward(saved, grads):
            x, q = saved
            api = _torch()
            g = grads[0]
            rows = x.reshape(-1) if dim is None else x.movedim(dim, -1)
            n = rows.shape[-1]
            values, order = rows.sort(-1)
            qs = q.to(g.dtype).reshape(-1) if _is_tensor(q) else api.tensor(
                [float(q)], dtype=g.dtype, device=g.device)
            if _is_tensor(q) and q.dim() == 1:
                g = g.movedim(0, -1)  # (..., Q)
            else:
                g = g.unsqueeze(-1)
            if dim is None:
                g = g.reshape(qs.shape)
            elif keepdim:
                g = g.squeeze(dim % len(shape))
            nan = values.isnan()
            if ignore_nan:  # torch's ranks
                ranks = (qs * ((~nan).sum(-1, keepdim=True).to(g.dtype) - 1)).clamp_min(0)
            else:
                ranks = _where(nan.any(-1, keepdim=True), float(n - 1), qs * (n - 1))
            below, above = ranks.floor(), ranks.ceil()
            if how == "lower":
                above = below
            elif how == "higher":
                below = above
            elif how == "nearest":
                below = above = ranks.round()
            weight = api.full_like(ranks, 0.5) if how == "midpoint" else ranks - below
            at_below = order.gather(-1, below.long().clamp_max(n - 1))
            at_above = order.gather(-1, above.long().clamp_max(n - 1))
            grad = api.zeros(rows.shape, dtype=g.dtype, device=g.device)
            grad = grad.scatter_add(-1, at_below, g * (1 - weight))
            grad = grad.scatter_add(-1, at_above, g * weight)
            grad = grad.reshape(shape) if dim is None else grad.movedim(-1, dim)
            return [grad] + ([None] if _is_tensor(q) else [])
        return "SqueezeBackward3", (x, q), backward
    return f


FORMULAS["quantile"] = _quantile(False)
FORMULAS["nanquantile"] = _quantile(True)


from . import nn_derivatives  # noqa: E402,F401  (registers the nn ops' formulas)
from . import linalg_derivatives  # noqa: E402,F401  (registers the linalg ops' formulas)


# ---- more matrix products ----

def _scaled(t, k):
    return t * k if k != 1 else t


def _beta_alpha(attrs):
    beta, alpha = attrs.get("beta", 1), attrs.get("alpha", 1)
    return (1 if beta is None else beta), (1 if alpha is None else alpha)


@formula("baddbmm", "addbmm")
def _baddbmm(inputs, attrs, outs):
    beta, alpha = _beta_alpha(attrs)
    summed = outs[0].dim() == 2  # addbmm adds the products of the batch together

    def backward(saved, grads):
        b1, b2 = saved
        g = grads[0].unsqueeze(0) if summed else grads[0]
        return [_scaled(grads[0], beta), _scaled(g.matmul(b2.transpose(1, 2)), alpha),
                _scaled(b1.transpose(1, 2).matmul(g), alpha)]
    return ("AddbmmBackward0" if summed else "BaddbmmBackward0"), (inputs[1], inputs[2]), \
        backward


@formula("addmv")
def _addmv(inputs, attrs, outs):
    beta, alpha = _beta_alpha(attrs)

    def backward(saved, grads):
        mat, vec = saved
        g = grads[0]
        return [_scaled(g, beta), _scaled(g.unsqueeze(1) * vec.unsqueeze(0), alpha),
                _scaled(mat.t().mv(g), alpha)]
    return "AddmvBackward0", (inputs[1], inputs[2]), backward


@formula("addr")
def _addr(inputs, attrs, outs):
    beta, alpha = _beta_alpha(attrs)

    def backward(saved, grads):
        v1, v2 = saved
        g = grads[0]
        return [_scaled(g, beta), _scaled(g.mv(v2), alpha), _scaled(g.t().mv(v1), alpha)]
    return "AddrBackward0", (inputs[1], inputs[2]), backward


@formula("outer")
def _outer(inputs, attrs, outs):
    def backward(saved, grads):
        a, b = saved
        g = grads[0]
        return [g.mv(b), g.t().mv(a)]
    return "MulBackward0", (inputs[0], inputs[1]), backward  # torch's outer is a product


@formula("trace")
def _trace(inputs, attrs, outs):
    n, m = inputs[0].shape

    def backward(saved, grads):
        g = grads[0]
        return [g * _torch().eye(n, m, dtype=g.dtype, device=g.device)]
    return "TraceBackward0", None, backward


@formula("cross")
def _cross(inputs, attrs, outs):
    dim = attrs.get("dim")

    def backward(saved, grads):
        a, b = saved
        g = grads[0]
        d = dim if dim is not None else next(i for i, s in enumerate(g.shape) if s == 3)
        return [b.cross(g, dim=d), g.cross(a, dim=d)]
    return "LinalgCrossBackward0", (inputs[0], inputs[1]), backward


def _einsum_terms(equation, ranks):
    """The operands' and the output's subscripts of an einsum equation, each a list of letters
    with '...' one token (the output's implicit form: the letters used once, sorted)."""
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")

    def tokens(term):
        out, i = [], 0
        while i < len(term):
            if term.startswith("...", i):
                out.append("...")
                i += 3
            else:
                out.append(term[i])
                i += 1
        return out
    terms = [tokens(t) for t in lhs.split(",")]
    if arrow:
        return terms, tokens(rhs)
    counts = {}
    for t in terms:
        for c in t:
            counts[c] = counts.get(c, 0) + 1
    out = ["..."] if "..." in counts else []
    return terms, out + sorted(c for c, k in counts.items() if k == 1 and c != "...")


def _explicit(terms, out, ranks):
    """The subscripts with each '...' replaced by letters of its own (unused in the equation,
    aligned from the right across operands, as einsum broadcasts them); None where the
    equation leaves too few letters."""
    import string  # noqa: PLC0415
    spans = [r - (len(t) - 1) for t, r in zip(terms, ranks) if "..." in t]
    n = max(spans, default=0)
    used = {c for t in terms + [out] for c in t}
    pool = [c for c in string.ascii_letters if c not in used]
    if n > len(pool):
        return None
    ellipsis = pool[:n]

    def replace(term, span):
        if "..." not in term:
            return list(term)
        i = term.index("...")
        return list(term[:i]) + ellipsis[n - span:] + list(term[i + 1:])
    return ([replace(t, r - (len(t) - 1)) for t, r in zip(terms, ranks)],
            replace(out, n))


def _contraction(node, terms, out, inputs):
    """(node, saved, backward) of a contraction given as einsum subscripts (one letter per
    dim): each operand's gradient is itself an einsum, the output's gradient contracted with
    the other operands onto the operand's letters; letters summed over in that operand alone
    are broadcast back, and a letter repeated in an operand (its diagonal, as in 'ii->') has
    the gradient added back onto that diagonal."""
    shapes = [tuple(t.shape) for t in inputs]
    session = inputs[0]._session

    def backward(saved, grads):
        einsum = _torch().einsum
        g = grads[0]
        result = []
        for i, term in enumerate(terms):
            others = [(terms[j], saved[j]) for j in range(len(terms)) if j != i]
            known = set(out)
            for t, _ in others:
                known |= set(t)
            letters = list(dict.fromkeys(term))  # each once, in order
            size = {c: shapes[i][term.index(c)] for c in letters}
            kept = [c for c in letters if c in known]
            if not others and kept == out:
                r = g
            else:
                eq = ",".join("".join(t) for t in [out] + [t for t, _ in others])
                r = einsum(eq + "->" + "".join(kept), g, *[x for _, x in others])
            if len(kept) != len(letters):
                for d, c in enumerate(letters):
                    if c not in known:
                        r = r.unsqueeze(d)
                # an ellipsis dim of size 1 in this operand, broadcast in the output: summed
                ones = [d for d, c in enumerate(letters) if size[c] == 1 and r.shape[d] != 1]
                if ones:
                    r = r.sum(ones, keepdim=True)
                r = r.expand(*[size[c] for c in letters])
            if len(letters) != len(term):
                r = _added_back("einsum", shapes[i], session, (),
                                {"equation": "".join(term) + "->" + "".join(letters)}, [r])
            result.append(r)
        return result
    return node, tuple(inputs), backward


@formula("einsum")
def _einsum(inputs, attrs, outs):
    ranks = [t.dim() for t in inputs]
    terms, out = _einsum_terms(attrs["equation"], ranks)
    explicit = _explicit(terms, out, ranks)
    if explicit is None:
        return "ViewBackward0", None, _not_implemented("einsum with more than 52 letters")
    return _contraction("ViewBackward0", *explicit, inputs)  # torch's einsum ends in a view


@formula("tensordot")
def _tensordot(inputs, attrs, outs):
    a, b = inputs
    dims_a = [d % a.dim() for d in attrs["dims_self"]]
    dims_b = [d % b.dim() for d in attrs["dims_other"]]
    letters = iter("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
    ta = [next(letters) for _ in range(a.dim())]
    tb = [next(letters) for _ in range(b.dim())]
    for da, db in zip(dims_a, dims_b):
        tb[db] = ta[da]
    out = [c for d, c in enumerate(ta) if d not in dims_a] + \
        [c for d, c in enumerate(tb) if d not in dims_b]
    return _contraction("ReshapeAliasBackward0", [ta, tb], out, inputs)


@formula("normalize")
def _normalize(inputs, attrs, outs):
    p = attrs.get("p", 2.0)
    p = 2.0 if p is None else float(p)
    dim = attrs.get("dim", 1)
    dim = 1 if dim is None else dim
    eps = attrs.get("eps", 1e-12)
    eps = 1e-12 if eps is None else eps

    def backward(saved, grads):
        x, g = saved, grads[0]
        norm = x.norm(p, dim, keepdim=True)
        n = norm.clamp_min(eps)
        s = (g * x).sum(dim, keepdim=True)
        dnorm = _norm_derivative(x, norm, p) if p != 2 else x / norm
        return [g / n - _where(norm >= eps, s / (n * n) * dnorm, 0.0)]
    return "DivBackward0", inputs[0], backward


@formula("kron")
def _kron(inputs, attrs, outs):
    """kron: the output's gradient seen as (a0, b0, a1, b1, …), contracted with the other
    operand over its dims."""
    a, b = inputs
    rank = max(a.dim(), b.dim())
    sa = (1,) * (rank - a.dim()) + tuple(a.shape)
    sb = (1,) * (rank - b.dim()) + tuple(b.shape)

    def backward(saved, grads):
        einsum = _torch().einsum
        a, b = saved
        split = []
        for i in range(rank):
            split += [sa[i], sb[i]]
        g = grads[0].reshape(split)
        la = "".join(chr(ord("a") + i) for i in range(rank))
        lb = "".join(chr(ord("n") + i) for i in range(rank))
        gl = "".join(la[i] + lb[i] for i in range(rank))
        ga = einsum(f"{gl},{lb}->{la}", g, b.reshape(sb)).reshape(a.shape)
        gb = einsum(f"{gl},{la}->{lb}", g, a.reshape(sa)).reshape(b.shape)
        return [ga, gb]
    return "UnsafeViewBackward0", (a, b), backward
