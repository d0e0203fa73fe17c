"""The derivative of each server op, keyed by the op's name (torch's derivatives.yaml).

A formula gets the op's inputs, attributes and outputs when the op is recorded and returns
(node name, saved values, backward); backward(saved, grads) maps the gradients of the outputs
to one gradient (or None) per input. The node names are torch's, so that a printed tensor shows
the grad_fn torch shows. Every formula is a composition of tensord ops, so it runs on the
server, on any device; the engine (graph.py) reduces broadcast dims and converts dtypes.
An op without an entry gets a node that raises torch's "not implemented" error if a backward
pass reaches it.
"""
from .. import _grad_mode

# Ops whose outputs never carry gradients (they are not functions of the inputs' values in a
# differentiable way, or they cut the graph as detach does).
NON_DIFFERENTIABLE = frozenset((
    "detach", "sign", "round", "floor", "ceil", "trunc", "frac_floor", "argmax", "argmin",
    "zeros_like", "ones_like", "empty_like", "full_like", "rand_like", "randn_like",
    "randint_like", "bernoulli", "multinomial", "eq", "ne", "lt", "le", "gt", "ge",
))

def check_in_place(name, inputs):
    """An in-place op under grad mode with an input that requires grad: torch's error for a leaf;
    for the others tensord records no in-place history yet, and says so rather than give wrong
    gradients."""
    from .graph import requires_grad  # noqa: PLC0415
    if not inputs:
        return
    target = inputs[0]
    m = getattr(target, "_ag", None)
    if m is not None and m.requires_grad and m.grad_fn is None:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                           "operation.")
    if any(requires_grad(t) for t in inputs if hasattr(t, "_ag")):
        raise RuntimeError(f"tensord: the in-place op {name} writes a tensor that requires grad "
                           f"or takes one as input; autograd records no in-place history yet: "
                           f"use the out-of-place {name.rstrip('_')} (or run it under no_grad)")


def _camel(name):
    return "".join(p[:1].upper() + p[1:] for p in name.split("_"))


def _not_implemented(name):
    def backward(saved, grads):
        raise RuntimeError(f"the derivative for '{name}' is not implemented.")
    return backward


def make(formula, name, inputs, attrs, outs):
    """(node name, saved values, backward) of op `name`; backward None: outputs get no grad."""
    if name in NON_DIFFERENTIABLE:
        return None, None, None
    if formula is None:
        return _camel(name) + "Backward0", None, _not_implemented(name)
    return formula(inputs, attrs or {}, outs)


FORMULAS = {}


def formula(*names):
    def register(f):
        for n in names:
            FORMULAS[n] = f
        return f
    return register


def _api():
    from .. import _api as api  # noqa: PLC0415
    return api


def _scalar_other(attrs):
    return attrs.get("other")


# ---- elementwise: binary ----

@formula("add")
def _add(inputs, attrs, outs):
    alpha = attrs.get("alpha", 1)
    if alpha is None:
        alpha = 1

    def backward(saved, grads):
        g = grads[0]
        return [g, g * alpha if alpha != 1 else g][:len(inputs)]
    return "AddBackward0", None, backward


@formula("sub")
def _sub(inputs, attrs, outs):
    alpha = attrs.get("alpha", 1)
    if alpha is None:
        alpha = 1

    if len(inputs) == 1 and attrs.get("self") is not None:  # number - tensor
        return "RsubBackward1", None, lambda s, gs: [-gs[0] * alpha if alpha != 1 else -gs[0]]

    def backward(saved, grads):
        g = grads[0]
        return [g, -g * alpha if alpha != 1 else -g][:len(inputs)]
    return "SubBackward0", None, backward


@formula("rsub")
def _rsub(inputs, attrs, outs):
    alpha = attrs.get("alpha", 1) or 1

    def backward(saved, grads):
        g = grads[0]
        return [-g * alpha if alpha != 1 else -g, g][:len(inputs)]
    return ("RsubBackward0" if len(inputs) > 1 else "RsubBackward1"), None, backward


@formula("mul")
def _mul(inputs, attrs, outs):
    if len(inputs) == 1:
        other = _scalar_other(attrs)
        return "MulBackward0", None, lambda s, gs: [gs[0] * other]
    a, b = inputs
    return "MulBackward0", (a, b), lambda s, gs: [gs[0] * s[1], gs[0] * s[0]]


@formula("div")
def _div(inputs, attrs, outs):
    mode = attrs.get("rounding_mode")
    if mode is not None:  # floor and trunc division: zero gradients, as torch's
        return "DivBackward1" if len(inputs) == 1 else "DivBackward0", None, \
            lambda s, gs: [gs[0] * 0 for _ in inputs]
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
    if len(inputs) == 1:
        e = _scalar_other(attrs)
        x = inputs[0]

        def backward(saved, grads):
            g = grads[0]
            if e == 0:
                return [g * 0]
            return [g * e * saved[0] ** (e - 1)]
        return "PowBackward0", (x,), backward
    a, b = inputs

    def backward2(saved, grads):
        a, b, out = saved
        g = grads[0]
        ga = g * b * a ** (b - 1)
        # torch's: the exponent's gradient is 0 where the base is 0 and the exponent >= 0.
        log_a = _api().where((a == 0) & (b >= 0), a * 0, a.log())
        return [ga, g * out * log_a]
    return "PowBackward1", (a, b, outs[0]), backward2


@formula("where")
def _where(inputs, attrs, outs):
    cond = inputs[0]

    def backward(saved, grads):
        g = grads[0]
        zero = g * 0
        where = _api().where
        return [None, where(saved, g, zero), where(saved, zero, g)]
    return "WhereBackward0", cond, backward


# ---- elementwise: unary ----

def _unary(node, grad, save_input=True, save_output=False):
    def f(inputs, attrs, outs):
        saved = (inputs[0] if save_input else None, outs[0] if save_output else None)
        return node, saved, lambda s, gs: [grad(gs[0], s[0], s[1])]
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
    "relu": _unary("ReluBackward0", lambda g, x, y: g * (y > 0), False, True),
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
        lambda s, gs: [_api().where(s[0] > 0, gs[0], gs[0] * slope)]


@formula("clamp", "clip")
def _clamp(inputs, attrs, outs):
    lo, hi = attrs.get("min"), attrs.get("max")
    name = "ClampBackward1"

    def backward(saved, grads):
        x = saved
        g = grads[0]
        mask = None
        if lo is not None:
            mask = x >= lo
        if hi is not None:
            mask = (x <= hi) if mask is None else mask & (x <= hi)
        return [g * mask if mask is not None else g]
    return name, inputs[0], backward


# ---- reductions ----

def _reduced_dims(attrs, rank):
    dim = attrs.get("dim")
    if dim is None:
        return None
    dims = [dim] if isinstance(dim, int) else list(dim)
    if not dims:
        return None
    return sorted(d % rank if rank else 0 for d in dims)


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
    x = inputs[0]
    shape = tuple(x.shape)
    dims = _reduced_dims(attrs, len(shape))
    keepdim = bool(attrs.get("keepdim", False))
    return ("SumBackward0" if dims is None and "dim" not in attrs else "SumBackward1"), None, \
        lambda s, gs: [_expand_back(gs[0], shape, dims, keepdim)]


@formula("mean")
def _mean(inputs, attrs, outs):
    x = inputs[0]
    shape = tuple(x.shape)
    dims = _reduced_dims(attrs, len(shape))
    keepdim = bool(attrs.get("keepdim", False))
    count = 1
    for d in (range(len(shape)) if dims is None else dims):
        count *= shape[d]
    return ("MeanBackward0" if dims is None and "dim" not in attrs else "MeanBackward1"), None, \
        lambda s, gs: [_expand_back(gs[0], shape, dims, keepdim) / count]


def _evenly(name):
    """max()/min() over everything and amax/amin: the gradient shared evenly by the tied
    positions (torch's evenly_distribute_backward and amax's)."""
    def f(inputs, attrs, outs):
        x = inputs[0]
        shape = tuple(x.shape)
        dims = _reduced_dims(attrs, len(shape)) if "dim" in attrs else None
        keepdim = bool(attrs.get("keepdim", False))

        def backward(saved, grads):
            x, out = saved
            mask = (x == _expand_back(out, shape, dims, keepdim))
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
        return node, None, lambda s, gs: [gs[0].reshape(shape)]
    return f


FORMULAS.update({
    "view": _reshape_back("ViewBackward0"),
    "reshape": _reshape_back("ViewBackward0"),
    "flatten": _reshape_back("ViewBackward0"),
    "unflatten": _reshape_back("ViewBackward0"),
    "unsqueeze": _reshape_back("UnsqueezeBackward0"),
    "squeeze": _reshape_back("SqueezeBackward0"),
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
    return "ExpandBackward0", None, lambda s, gs: [gs[0]]  # the engine sums broadcast dims


def _into_zeros(name, x, attrs, g):
    """The gradient of a view op that picks distinct elements of x (indexing, select, narrow):
    zeros of x's shape with `g` written through the same view of them."""
    from .._ops import _queue  # noqa: PLC0415
    api = _api()
    z = api.zeros(tuple(x.shape), dtype=g.dtype, device=g.device)
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
    x = inputs[0]
    return _index_name(attrs), None, lambda s, gs: [_into_zeros("index", x, attrs, gs[0])]


def _picking(name, node):
    def f(inputs, attrs, outs):
        x = inputs[0]
        return node, None, lambda s, gs: [_into_zeros(name, x, attrs, gs[0])]
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
        d = 2 * (a - b) * g
        if reduction == "mean":
            d = d / a.numel()
        return [d, -d]
    return "MseLossBackward0", (a, b), backward


def _class_grad(x, target, weight, ignore_index, reduction, g, probs):
    """d loss / d x for nll_loss over `probs` (softmax for cross_entropy, none for nll):
    (probs - onehot) * w / denominator, with ignored positions zero."""
    api = _api()
    from ..nn import functional as F  # noqa: PLC0415
    class_dim = 1 if x.dim() >= 2 else 0
    n_classes = x.shape[class_dim]
    valid = target != ignore_index
    safe = api.where(valid, target, target * 0)
    # ignored positions get no one: their gradient is +0 everywhere, as torch's
    onehot = (F.one_hot(safe, n_classes) * valid.unsqueeze(-1)).to(x.dtype)
    if x.dim() >= 2:
        onehot = onehot.movedim(-1, 1)
    w = valid.to(x.dtype)
    if weight is not None:
        w = w * weight.index_select(0, safe.reshape(-1)).reshape(safe.shape)
    if reduction == "mean":
        scale = g / w.sum()
    elif reduction == "sum":
        scale = g
    else:
        scale = g
    wb = (w * scale).unsqueeze(class_dim) if x.dim() >= 2 else w * scale
    # nll: 0 - onehot * w, so that positions without a target get +0 (torch scatters into zeros)
    return (probs - onehot) * wb if probs is not None else 0 - onehot * wb


@formula("cross_entropy")
def _cross_entropy(inputs, attrs, outs):
    x, target = inputs[0], inputs[1]
    weight = inputs[2] if len(inputs) > 2 else None
    if target.dtype.is_floating_point or attrs.get("label_smoothing", 0.0):
        return "NllLossBackward0", None, _not_implemented(
            "cross_entropy with class probabilities or label_smoothing")
    ignore = attrs.get("ignore_index", -100)
    reduction = attrs.get("reduction", "mean")
    class_dim = 1 if x.dim() >= 2 else 0

    def backward(saved, grads):
        x, target, weight = saved
        probs = x.softmax(class_dim)
        return [_class_grad(x, target, weight, ignore, reduction, grads[0], probs), None,
                None][:len(inputs)]
    return "NllLossBackward0", (x, target, weight), backward


@formula("nll_loss")
def _nll_loss(inputs, attrs, outs):
    x, target = inputs[0], inputs[1]
    weight = inputs[2] if len(inputs) > 2 else None
    ignore = attrs.get("ignore_index", -100)
    reduction = attrs.get("reduction", "mean")

    def backward(saved, grads):
        x, target, weight = saved
        return [_class_grad(x, target, weight, ignore, reduction, grads[0], None), None,
                None][:len(inputs)]
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
            z = _api().zeros(shape, dtype=g.dtype, device=g.device)
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
        z = _api().zeros((rows, width), dtype=g.dtype, device=g.device)
        return [z.index_add(0, saved.reshape(-1), g.reshape(-1, width)), None]
    return "EmbeddingBackward0", indices, backward


def embedding_padding(node, padding_idx):
    """F.embedding's padding_idx: the row it names gets no gradient (torch's
    embedding_backward); the server op does not take the index, so its node is told here."""
    inner = node._backward

    def backward(saved, grads):
        gw, gi = inner(saved, grads)
        keep = _api().ones((gw.shape[0], 1), dtype=gw.dtype, device=gw.device)
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
        ones = _api().ones(shape, dtype=dtype, device=device)
        with _grad_mode.no_grad():
            scale = _queue(session, "dropout", [ones], attrs, 1)[0]
        return [grads[0] * scale]
    return "NativeDropoutBackward0", None, backward


@formula("index_copy")
def _index_copy(inputs, attrs, outs):
    dim = attrs.get("dim", 0)
    index = inputs[1]

    def backward(saved, grads):
        g = grads[0]
        return [g.index_fill(dim, saved, 0), None, g.index_select(dim, saved)]
    return "IndexCopyBackward0", index, backward
