"""torch.nn's Transformer: encoder and decoder layers (self-attention, cross-attention and a
feed-forward block, each with dropout, a residual and a LayerNorm after it, or before it with
norm_first), their stacks, and the whole encoder-decoder model."""
import copy

from ... import _dtypes, _factories
from .. import functional as F
from ..init import xavier_uniform_
from .activation import GELU, MultiheadAttention, ReLU
from .container import ModuleList
from .dropout import Dropout
from .linear import Linear
from .module import Module
from .normalization import LayerNorm

__all__ = ["Transformer", "TransformerEncoder", "TransformerDecoder", "TransformerEncoderLayer",
           "TransformerDecoderLayer"]


def _check_key_padding_mask(mask):
    if mask is not None and mask.dtype is not _dtypes.bool_ and not mask.is_floating_point():
        raise AssertionError("only bool and floating types of key_padding_mask are supported")


class Transformer(Module):
    """An encoder (num_encoder_layers TransformerEncoderLayers and a final LayerNorm) and a
    decoder (likewise) with torch's defaults; forward(src, tgt, masks…) returns the decoder's
    output. Weights with more than one dim are drawn by xavier_uniform_."""

    def __init__(self, d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6,
                 dim_feedforward=2048, dropout=0.1, activation=F.relu, custom_encoder=None,
                 custom_decoder=None, layer_norm_eps=1e-5, batch_first=False, norm_first=False,
                 device=None, dtype=None):
        kw = {"device": device, "dtype": dtype}
        super().__init__()
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            encoder_layer = TransformerEncoderLayer(d_model, nhead, dim_feedforward, dropout,
                                                    activation, layer_norm_eps, batch_first,
                                                    norm_first, **kw)
            encoder_norm = LayerNorm(d_model, eps=layer_norm_eps, **kw)
            self.encoder = TransformerEncoder(encoder_layer, num_encoder_layers, encoder_norm)
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            decoder_layer = TransformerDecoderLayer(d_model, nhead, dim_feedforward, dropout,
                                                    activation, layer_norm_eps, batch_first,
                                                    norm_first, **kw)
            decoder_norm = LayerNorm(d_model, eps=layer_norm_eps, **kw)
            self.decoder = TransformerDecoder(decoder_layer, num_decoder_layers, decoder_norm)
        self._reset_parameters()
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None,
                src_key_padding_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None):
        is_batched = src.dim() == 3
        if not self.batch_first and src.size(1) != tgt.size(1) and is_batched:
            raise RuntimeError("the batch number of src and tgt must be equal")
        if self.batch_first and src.size(0) != tgt.size(0) and is_batched:
            raise RuntimeError("the batch number of src and tgt must be equal")
        if src.size(-1) != self.d_model or tgt.size(-1) != self.d_model:
            raise RuntimeError("the feature number of src and tgt must be equal to d_model")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask)

    @staticmethod
    def generate_square_subsequent_mask(sz, device="cpu"):
        """A (sz, sz) float mask: -inf above the diagonal (later positions), 0 elsewhere."""
        return _factories.full((sz, sz), float("-inf"), device=device).triu(diagonal=1)

    def _reset_parameters(self):
        for p in self.parameters():
            if p.dim() > 1:
                xavier_uniform_(p)


def _left_aligned(src_key_padding_mask):
    """Whether every row of the (N, S) padding mask is unpadded positions, then padded ones."""
    return all(row == sorted(row) for row in src_key_padding_mask.bool().tolist())


def _nested_mask(src_key_padding_mask):
    """The padding of torch's nested tensor from this mask: each row keeps its first (number of
    unpadded) positions, aligned or not. (mask, longest row)."""
    rows = src_key_padding_mask.bool().tolist()
    counts = [row.count(False) for row in rows]
    padded = [[j >= n for j in range(len(row))] for row, n in zip(rows, counts)]
    return _factories.tensor(padded, device=src_key_padding_mask.device,
                             session=src_key_padding_mask._session), max(counts)


class TransformerEncoder(Module):
    """num_layers deep copies of encoder_layer, then norm (if given).

    In eval, torch 1.13 runs a batch_first stack of even-headed relu/gelu post-norm layers with
    a left-aligned src_key_padding_mask (not checked with mask_check=False) and no mask on
    nested tensors: each row keeps its first (number of unpadded) positions, the output is cut
    to the longest row and holds zeros at the padded positions before the final norm. This
    stack does the same."""

    __constants__ = ["norm"]

    def __init__(self, encoder_layer, num_layers, norm=None, enable_nested_tensor=True,
                 mask_check=True):
        super().__init__()
        self.layers = _get_clones(encoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm
        self.enable_nested_tensor = enable_nested_tensor
        self.mask_check = mask_check

    def _sparsity_fast_path(self, src, mask, src_key_padding_mask):
        first = self.layers[0]
        return (isinstance(first, TransformerEncoderLayer) and not first.norm_first
                and not first.training and first.self_attn.batch_first
                and first.self_attn._qkv_same_embed_dim and first.activation_relu_or_gelu
                and first.norm1.eps == first.norm2.eps and src.dim() == 3
                and self.enable_nested_tensor and src_key_padding_mask is not None
                and (not self.mask_check or _left_aligned(src_key_padding_mask))
                and mask is None and first.self_attn.num_heads % 2 == 0)

    def forward(self, src, mask=None, src_key_padding_mask=None):
        _check_key_padding_mask(src_key_padding_mask)
        output = src
        nested = self._sparsity_fast_path(src, mask, src_key_padding_mask)
        if nested:
            src_key_padding_mask, longest = _nested_mask(src_key_padding_mask)
        for mod in self.layers:
            output = mod(output, src_mask=mask, src_key_padding_mask=src_key_padding_mask)
        if nested:  # torch's to_padded_tensor(0.)
            output = output.narrow(1, 0, longest).masked_fill(
                src_key_padding_mask.narrow(1, 0, longest).unsqueeze(-1), 0.0)
        if self.norm is not None:
            output = self.norm(output)
        return output


class TransformerDecoder(Module):
    """num_layers deep copies of decoder_layer, then norm (if given)."""

    __constants__ = ["norm"]

    def __init__(self, decoder_layer, num_layers, norm=None):
        super().__init__()
        self.layers = _get_clones(decoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None):
        output = tgt
        for mod in self.layers:
            output = mod(output, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                         tgt_key_padding_mask=tgt_key_padding_mask,
                         memory_key_padding_mask=memory_key_padding_mask)
        if self.norm is not None:
            output = self.norm(output)
        return output


class TransformerEncoderLayer(Module):
    """Self-attention then a feed-forward block (linear1, activation, dropout, linear2), each
    added back to its input and normalised (norm1, norm2): after the sum, or before the block
    with norm_first. activation: "relu", "gelu" or a callable."""

    __constants__ = ["batch_first", "norm_first"]

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu,
                 layer_norm_eps=1e-5, batch_first=False, norm_first=False, device=None,
                 dtype=None):
        kw = {"device": device, "dtype": dtype}
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout,
                                            batch_first=batch_first, **kw)
        self.linear1 = Linear(d_model, dim_feedforward, **kw)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, **kw)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, **kw)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, **kw)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        if isinstance(activation, str):
            activation = _get_activation_fn(activation)
        if activation is F.relu or isinstance(activation, ReLU):
            self.activation_relu_or_gelu = 1
        elif activation is F.gelu or isinstance(activation, GELU):
            self.activation_relu_or_gelu = 2
        else:
            self.activation_relu_or_gelu = 0
        self.activation = activation

    def __setstate__(self, state):
        super().__setstate__(state)
        if not hasattr(self, "activation"):
            self.activation = F.relu

    def _fast_path(self, src, src_mask):
        """Whether torch 1.13 would run its fused encoder-layer kernel, which reads a floating
        src_key_padding_mask as bool (nonzero = padded)."""
        return (src.dim() == 3 and not self.training and self.self_attn.batch_first
                and self.self_attn._qkv_same_embed_dim and self.activation_relu_or_gelu
                and self.norm1.eps == self.norm2.eps and src_mask is None
                and self.self_attn.num_heads % 2 == 0)

    def forward(self, src, src_mask=None, src_key_padding_mask=None):
        _check_key_padding_mask(src_key_padding_mask)
        if src_key_padding_mask is not None and src_key_padding_mask.is_floating_point() and \
                self._fast_path(src, src_mask):
            src_key_padding_mask = src_key_padding_mask.bool()
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask)
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask))
            x = self.norm2(x + self._ff_block(x))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           need_weights=False)[0]
        return self.dropout1(x)

    def _ff_block(self, x):
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout2(x)


class TransformerDecoderLayer(Module):
    """Self-attention over tgt, attention from tgt to memory, then a feed-forward block, each
    with dropout, a residual and a LayerNorm (norm1..3; before the block with norm_first)."""

    __constants__ = ["batch_first", "norm_first"]

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu,
                 layer_norm_eps=1e-5, batch_first=False, norm_first=False, device=None,
                 dtype=None):
        kw = {"device": device, "dtype": dtype}
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout,
                                            batch_first=batch_first, **kw)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout,
                                                 batch_first=batch_first, **kw)
        self.linear1 = Linear(d_model, dim_feedforward, **kw)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, **kw)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, **kw)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, **kw)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, **kw)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        self.activation = _get_activation_fn(activation) if isinstance(activation, str) \
            else activation

    def __setstate__(self, state):
        if "activation" not in state:
            state["activation"] = F.relu
        super().__setstate__(state)

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None):
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask, memory_key_padding_mask)
            x = x + self._ff_block(self.norm3(x))
        else:
            x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask))
            x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask))
            x = self.norm3(x + self._ff_block(x))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           need_weights=False)[0]
        return self.dropout1(x)

    def _mha_block(self, x, mem, attn_mask, key_padding_mask):
        x = self.multihead_attn(x, mem, mem, attn_mask=attn_mask,
                                key_padding_mask=key_padding_mask, need_weights=False)[0]
        return self.dropout2(x)

    def _ff_block(self, x):
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout3(x)


def _get_clones(module, N):
    return ModuleList([copy.deepcopy(module) for _ in range(N)])


def _get_activation_fn(activation):
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    raise RuntimeError(f"activation should be relu/gelu, not {activation}")
