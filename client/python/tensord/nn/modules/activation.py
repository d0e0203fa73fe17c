"""torch.nn's activation modules: each holds its constants and calls its nn.functional op (the
inplace= ones modify their input and return it, as torch's do)."""
import warnings

from ... import _factories
from .. import functional as F
from ..parameter import Parameter
from .module import Module


def _inplace_repr(inplace, lead=""):
    """The ', inplace=True' (or 'inplace=True' with nothing before it) torch's reprs append."""
    if not inplace:
        return lead
    return lead + ", inplace=True" if lead else "inplace=True"


class _InplaceActivation(Module):
    """An activation whose only constant is `inplace`: forward calls F.<_fn>(input, inplace);
    `_repr_inplace` False for those whose torch repr leaves inplace out (Hardsigmoid,
    Hardswish)."""

    __constants__ = ["inplace"]
    _fn = None
    _repr_inplace = True

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return getattr(F, self._fn)(input, self.inplace)

    def extra_repr(self):
        return _inplace_repr(self.inplace) if self._repr_inplace else ""


class Threshold(Module):
    """y = x where x > threshold, else value."""

    __constants__ = ["threshold", "value", "inplace"]

    def __init__(self, threshold, value, inplace=False):
        super().__init__()
        self.threshold = threshold
        self.value = value
        self.inplace = inplace

    def forward(self, input):
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self):
        return _inplace_repr(self.inplace, f"threshold={self.threshold}, value={self.value}")


class ReLU(_InplaceActivation):
    """max(0, x)."""

    _fn = "relu"


class RReLU(Module):
    """Leaky ReLU whose negative slope is drawn from U(lower, upper) per element in training,
    and is (lower + upper) / 2 in eval."""

    __constants__ = ["lower", "upper", "inplace"]

    def __init__(self, lower=1.0 / 8, upper=1.0 / 3, inplace=False):
        super().__init__()
        self.lower = lower
        self.upper = upper
        self.inplace = inplace

    def forward(self, input):
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self):
        return _inplace_repr(self.inplace, f"lower={self.lower}, upper={self.upper}")


class Hardtanh(Module):
    """x clamped to [min_val, max_val] (min_value / max_value: deprecated spellings)."""

    __constants__ = ["min_val", "max_val", "inplace"]

    def __init__(self, min_val=-1.0, max_val=1.0, inplace=False, min_value=None, max_value=None):
        super().__init__()
        if min_value is not None:
            warnings.warn("keyword argument min_value is deprecated and rename to min_val")
            min_val = min_value
        if max_value is not None:
            warnings.warn("keyword argument max_value is deprecated and rename to max_val")
            max_val = max_value
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace
        assert self.max_val > self.min_val

    def forward(self, input):
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self):
        return _inplace_repr(self.inplace, f"min_val={self.min_val}, max_val={self.max_val}")


class ReLU6(Hardtanh):
    """min(max(0, x), 6)."""

    def __init__(self, inplace=False):
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self):
        return _inplace_repr(self.inplace)


class Sigmoid(Module):
    """1 / (1 + exp(-x))."""

    def forward(self, input):
        return input.sigmoid()


class Hardsigmoid(_InplaceActivation):
    """relu6(x + 3) / 6."""

    _fn = "hardsigmoid"
    _repr_inplace = False


class Tanh(Module):
    """tanh(x)."""

    def forward(self, input):
        return input.tanh()


class SiLU(_InplaceActivation):
    """x * sigmoid(x)."""

    _fn = "silu"


class Mish(_InplaceActivation):
    """x * tanh(softplus(x))."""

    _fn = "mish"


class Hardswish(_InplaceActivation):
    """x * relu6(x + 3) / 6."""

    _fn = "hardswish"
    _repr_inplace = False


class ELU(Module):
    """x for x > 0, alpha * (exp(x) - 1) otherwise."""

    __constants__ = ["alpha", "inplace"]

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input):
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self):
        return _inplace_repr(self.inplace, f"alpha={self.alpha}")


class CELU(Module):
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1))."""

    __constants__ = ["alpha", "inplace"]

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input):
        return F.celu(input, self.alpha, self.inplace)

    def extra_repr(self):
        return _inplace_repr(self.inplace, f"alpha={self.alpha}")


class SELU(_InplaceActivation):
    """scale * elu(x, alpha) with SELU's fixed scale and alpha."""

    _fn = "selu"


class GLU(Module):
    """a * sigmoid(b), a and b the halves of the input along dim."""

    __constants__ = ["dim"]

    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.glu(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class GELU(Module):
    """x * Φ(x), or its tanh approximation (approximate='tanh')."""

    __constants__ = ["approximate"]

    def __init__(self, approximate="none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self):
        return f"approximate={self.approximate!r}"


class Hardshrink(Module):
    """x where |x| > lambd, else 0."""

    __constants__ = ["lambd"]

    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return F.hardshrink(input, self.lambd)

    def extra_repr(self):
        return f"{self.lambd}"


class LeakyReLU(Module):
    """x for x >= 0, negative_slope * x otherwise."""

    __constants__ = ["inplace", "negative_slope"]

    def __init__(self, negative_slope=1e-2, inplace=False):
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input):
        if self.inplace:
            return F.leaky_relu_(input, self.negative_slope)
        return F.leaky_relu(input, self.negative_slope)

    def extra_repr(self):
        return _inplace_repr(self.inplace, f"negative_slope={self.negative_slope}")


class LogSigmoid(Module):
    """log(sigmoid(x))."""

    def forward(self, input):
        return F.logsigmoid(input)


class Softplus(Module):
    """log(1 + exp(beta * x)) / beta, x itself where beta * x > threshold."""

    __constants__ = ["beta", "threshold"]

    def __init__(self, beta=1, threshold=20):
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input):
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self):
        return f"beta={self.beta}, threshold={self.threshold}"


class Softshrink(Module):
    """x - lambd for x > lambd, x + lambd for x < -lambd, 0 between."""

    __constants__ = ["lambd"]

    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return F.softshrink(input, self.lambd)

    def extra_repr(self):
        return str(self.lambd)


class PReLU(Module):
    """Leaky ReLU with a learnt slope: a weight Parameter of num_parameters (1, or one per
    channel), filled with init."""

    __constants__ = ["num_parameters"]

    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        super().__init__()
        self.num_parameters = num_parameters
        self.weight = Parameter(_factories.empty(num_parameters, device=device,
                                                 dtype=dtype).fill_(init))

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self):
        return f"num_parameters={self.num_parameters}"


class Softsign(Module):
    """x / (1 + |x|)."""

    def forward(self, input):
        return F.softsign(input)


class Tanhshrink(Module):
    """x - tanh(x)."""

    def forward(self, input):
        return F.tanhshrink(input)


class _SoftmaxBase(Module):
    """A softmax-like module over dim (None: torch's deprecated implicit choice)."""

    __constants__ = ["dim"]

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def __setstate__(self, state):
        super().__setstate__(state)
        if not hasattr(self, "dim"):
            self.dim = None

    def extra_repr(self):
        return f"dim={self.dim}"


class Softmin(_SoftmaxBase):
    """softmax(-x) over dim."""

    def forward(self, input):
        return F.softmin(input, self.dim, _stacklevel=5)


class Softmax(_SoftmaxBase):
    """exp(x) / Σ exp(x) over dim."""

    def forward(self, input):
        return F.softmax(input, self.dim)


class Softmax2d(Module):
    """Softmax over the channels of a (N, C, H, W) or (C, H, W) input, at each location."""

    def forward(self, input):
        assert input.dim() == 4 or input.dim() == 3, \
            "Softmax2d requires a 3D or 4D tensor as input"
        return F.softmax(input, -3)


class LogSoftmax(_SoftmaxBase):
    """log(softmax(x)) over dim."""

    def forward(self, input):
        return F.log_softmax(input, self.dim)


__all__ = ["Threshold", "ReLU", "RReLU", "Hardtanh", "ReLU6", "Sigmoid", "Hardsigmoid", "Tanh",
           "SiLU", "Mish", "Hardswish", "ELU", "CELU", "SELU", "GLU", "GELU", "Hardshrink",
           "LeakyReLU", "LogSigmoid", "Softplus", "Softshrink", "PReLU", "Softsign", "Tanhshrink",
           "Softmin", "Softmax", "Softmax2d", "LogSoftmax", "MultiheadAttention"]


# ---- MultiheadAttention ---------------------------------------------------------------------

from ... import _dtypes  # noqa: E402
from .. import init as _init  # noqa: E402
from .linear import NonDynamicallyQuantizableLinear  # noqa: E402


class MultiheadAttention(Module):
    """Attention over num_heads heads of embed_dim / num_heads features each: the packed
    in_proj_weight (3E, E) (or q/k/v_proj_weight when key and value have other widths, kdim /
    vdim), in_proj_bias, optional bias_k / bias_v rows and a zero row appended to the keys and
    values, then out_proj. forward(query, key, value) returns (output, weights or None)."""

    __constants__ = ["batch_first"]

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False,
                 add_zero_attn=False, kdim=None, vdim=None, batch_first=False, device=None,
                 dtype=None):
        kw = {"device": device, "dtype": dtype}
        super().__init__()
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        assert self.head_dim * num_heads == self.embed_dim, \
            "embed_dim must be divisible by num_heads"
        if not self._qkv_same_embed_dim:
            self.q_proj_weight = Parameter(_factories.empty((embed_dim, embed_dim), **kw))
            self.k_proj_weight = Parameter(_factories.empty((embed_dim, self.kdim), **kw))
            self.v_proj_weight = Parameter(_factories.empty((embed_dim, self.vdim), **kw))
            self.register_parameter("in_proj_weight", None)
        else:
            self.in_proj_weight = Parameter(_factories.empty((3 * embed_dim, embed_dim), **kw))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(_factories.empty(3 * embed_dim, **kw))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, **kw)
        if add_bias_kv:
            self.bias_k = Parameter(_factories.empty((1, 1, embed_dim), **kw))
            self.bias_v = Parameter(_factories.empty((1, 1, embed_dim), **kw))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self):
        if self._qkv_same_embed_dim:
            _init.xavier_uniform_(self.in_proj_weight)
        else:
            _init.xavier_uniform_(self.q_proj_weight)
            _init.xavier_uniform_(self.k_proj_weight)
            _init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            _init.constant_(self.in_proj_bias, 0.0)
            _init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            _init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            _init.xavier_normal_(self.bias_v)

    def __setstate__(self, state):
        if "_qkv_same_embed_dim" not in state:
            state["_qkv_same_embed_dim"] = True
        super().__setstate__(state)

    def _fast_path(self, query, key, value, attn_mask):
        """Whether torch 1.13 would answer with its fused kernel (self-attention, batch_first,
        in eval, no extras, an even head count): that kernel returns a contiguous output and
        reads a floating key_padding_mask as bool (nonzero = padded). tensord computes as under
        no_grad, so the requires_grad condition never stops it."""
        return (query.dim() == 3 and query is key and key is value
                and (self.in_proj_bias is None or query.dtype == self.in_proj_bias.dtype)
                and (self.in_proj_weight is None or query.dtype == self.in_proj_weight.dtype)
                and not self.training and self.batch_first and self.bias_k is None
                and self.bias_v is None and not self.dropout and not self.add_zero_attn
                and self._qkv_same_embed_dim and attn_mask is None and self.num_heads % 2 == 0)

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True,
                attn_mask=None, average_attn_weights=True):
        is_batched = query.dim() == 3
        if key_padding_mask is not None and key_padding_mask.dtype is not _dtypes.bool_ and \
                not key_padding_mask.is_floating_point():
            raise AssertionError("only bool and floating types of key_padding_mask are supported")
        fast = self._fast_path(query, key, value, attn_mask)
        if fast and key_padding_mask is not None and key_padding_mask.is_floating_point():
            warnings.warn("Converting mask without torch.bool dtype to bool; this will negatively "
                          "affect performance. Prefer to use a boolean mask directly.")
            key_padding_mask = key_padding_mask.to(_dtypes.bool_)
        if self.batch_first and is_batched:
            if key is value:
                if query is key:
                    query = key = value = query.transpose(1, 0)
                else:
                    query, key = [x.transpose(1, 0) for x in (query, key)]
                    value = key
            else:
                query, key, value = [x.transpose(1, 0) for x in (query, key, value)]
        separate = {}
        if not self._qkv_same_embed_dim:
            separate = {"use_separate_proj_weight": True, "q_proj_weight": self.q_proj_weight,
                        "k_proj_weight": self.k_proj_weight,
                        "v_proj_weight": self.v_proj_weight}
        attn_output, attn_output_weights = F.multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight,
            self.in_proj_bias, self.bias_k, self.bias_v, self.add_zero_attn, self.dropout,
            self.out_proj.weight, self.out_proj.bias, training=self.training,
            key_padding_mask=key_padding_mask, need_weights=need_weights, attn_mask=attn_mask,
            average_attn_weights=average_attn_weights, **separate)
        if self.batch_first and is_batched:
            attn_output = attn_output.transpose(1, 0)
            if fast:
                attn_output = attn_output.contiguous()
        return attn_output, attn_output_weights
