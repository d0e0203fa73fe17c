"""torch 1.13 names that tensord composes of its other ops: torch.convolution, conv_tbc, the
*_copy and unsafe_ splits, nuclear_norm, norm_except_dim, the native_* kernels, the dropout
family's in-place forms, the RNN cells, as_strided_scatter, get_device and symeig. Each case runs
on torch and on tensord: the same values, dtypes, shapes and strides, or the same exception
class (and, where tensord raises torch's message itself, the same message).
"""
import warnings

import numpy as np
import pytest
import torch

import tensord
from oracle import as_torch, assert_matches_torch, outcome

rng = np.random.default_rng(1313)


def _normal(*shape):
    return rng.standard_normal(shape).astype(np.float32)


A = {
    "x3": _normal(2, 3, 5), "w3": _normal(4, 3, 2), "wt3": _normal(3, 4, 2),
    "x4": _normal(2, 3, 5, 5), "w4": _normal(4, 3, 2, 2), "wt4": _normal(3, 4, 2, 2),
    "x4g": _normal(1, 4, 5, 5), "w4g": _normal(4, 2, 3, 3), "b4": _normal(4),
    "x5": _normal(1, 2, 3, 3, 3), "w5": _normal(2, 2, 2, 2, 2), "wt5": _normal(2, 2, 2, 2, 2),
    "tbc": _normal(7, 2, 3), "tbc_w": _normal(3, 3, 4), "tbc_b": _normal(4),
    "m46": _normal(4, 6), "m34": _normal(3, 4), "b234": _normal(2, 3, 4), "v345": _normal(3, 4, 5),
    "ln_x": _normal(2, 3, 4, 5), "ln_w": _normal(4, 5), "ln_b": _normal(4, 5),
    "gn_x": _normal(2, 6, 4, 5), "gn_w": _normal(6), "gn_b": _normal(6),
    "bn_x": _normal(4, 3, 5), "bn_w": _normal(3), "bn_b": _normal(3),
    "cell_x": _normal(3, 4), "cell_h": _normal(3, 5), "cell_c": _normal(3, 5),
    "src22": _normal(2, 2), "sym": _normal(4, 4), "sym_b": _normal(2, 3, 3),
}
for gates in (1, 3, 4):
    A[f"w_ih{gates}"] = _normal(gates * 5, 4)
    A[f"w_hh{gates}"] = _normal(gates * 5, 5)
    A[f"b_ih{gates}"] = _normal(gates * 5)
    A[f"b_hh{gates}"] = _normal(gates * 5)


def T(m, name, dtype=None):
    t = m.tensor(A[name])
    return t if dtype is None else t.to(getattr(m, dtype))


def cell(m, gates, dtype=None, bias=True):
    """(w_ih, w_hh, b_ih, b_hh) of a cell with `gates` gates, hidden size 5, input size 4."""
    ws = [T(m, f"w_ih{gates}", dtype), T(m, f"w_hh{gates}", dtype)]
    return ws + ([T(m, f"b_ih{gates}", dtype), T(m, f"b_hh{gates}", dtype)] if bias else [])


def hc(m, dtype=None):
    return (T(m, "cell_h", dtype), T(m, "cell_c", dtype))


def sym(m, name="sym"):
    t = T(m, name)
    return t + t.transpose(-2, -1)


CASES = {
    # torch.convolution: conv1d/2d/3d and their transposes by weight's dims
    "convolution(1d)": lambda m: m.convolution(T(m, "x3"), T(m, "w3"), None, [2], [1], [1], False,
                                               [0], 1),
    "convolution(2d, bias)": lambda m: m.convolution(T(m, "x4"), T(m, "w4"), T(m, "b4"), [1, 2],
                                                     [1, 0], [1, 1], False, [0, 0], 1),
    "convolution(2d, groups, dilation)": lambda m: m.convolution(
        T(m, "x4g"), T(m, "w4g"), T(m, "b4"), [1], [1], [2], False, [0], 2),
    "convolution(3d)": lambda m: m.convolution(T(m, "x5"), T(m, "w5"), None, [1, 1, 1],
                                               [1, 0, 1], [1, 1, 1], False, [0, 0, 0], 1),
    "convolution(transposed 1d)": lambda m: m.convolution(T(m, "x3"), T(m, "wt3"), None, [2],
                                                          [0], [1], True, [1], 1),
    "convolution(transposed 2d)": lambda m: m.convolution(T(m, "x4"), T(m, "wt4"), T(m, "b4"),
                                                          [2, 2], [1, 0], [1, 1], True, [1, 0],
                                                          1),
    "convolution(transposed 3d, groups)": lambda m: m.convolution(
        T(m, "x5"), T(m, "wt5"), None, (1, 1, 1), (0, 0, 0), (1, 1, 1), True, (0, 0, 0), 2),
    "convolution(float64)": lambda m: m.convolution(T(m, "x3", "float64"), T(m, "w3", "float64"),
                                                    None, [1], [0], [1], False, [0], 1),
    "convolution(unbatched input)": lambda m: m.convolution(T(m, "x3")[0], T(m, "w3"), None, [1],
                                                            [0], [1], False, [0], 1),
    "convolution(2-d weight)": lambda m: m.convolution(T(m, "x3"), T(m, "w3")[0], None, [1],
                                                       [0], [1], False, [0], 1),
    "convolution(stride of 2 for 1d)": lambda m: m.convolution(T(m, "x3"), T(m, "w3"), None,
                                                               [1, 1], [0], [1], False, [0], 1),
    "convolution(int stride)": lambda m: m.convolution(T(m, "x3"), T(m, "w3"), None, 1, [0],
                                                       [1], False, [0], 1),
    "convolution(channels)": lambda m: m.convolution(T(m, "x4"), T(m, "wt4"), None, [1], [0],
                                                     [1], False, [0], 1),
    "convolution(dtypes)": lambda m: m.convolution(T(m, "x3", "float64"), T(m, "w3"), None, [1],
                                                   [0], [1], False, [0], 1),
    # conv_tbc: (time, batch, channels), weight (kernel, in, out)
    "conv_tbc": lambda m: m.conv_tbc(T(m, "tbc"), T(m, "tbc_w"), T(m, "tbc_b")),
    "conv_tbc(pad)": lambda m: m.conv_tbc(T(m, "tbc"), T(m, "tbc_w"), T(m, "tbc_b"), 2),
    "conv_tbc(negative pad)": lambda m: m.conv_tbc(T(m, "tbc"), T(m, "tbc_w"), T(m, "tbc_b"),
                                                   -1),
    "conv_tbc(one step)": lambda m: m.conv_tbc(T(m, "tbc"), T(m, "tbc_w"), T(m, "tbc_b"),
                                               pad=-2),
    "conv_tbc(float64)": lambda m: m.conv_tbc(T(m, "tbc", "float64"), T(m, "tbc_w", "float64"),
                                              T(m, "tbc_b", "float64"), 1),
    "conv_tbc(int64)": lambda m: m.conv_tbc(T(m, "tbc", "int64"), T(m, "tbc_w", "int64"),
                                            T(m, "tbc_b", "int64")),
    "F.conv_tbc": lambda m: m.nn.functional.conv_tbc(T(m, "tbc"), T(m, "tbc_w"), T(m, "tbc_b"),
                                                     1),
    "conv_tbc(2-d input)": lambda m: m.conv_tbc(T(m, "tbc")[0], T(m, "tbc_w"), T(m, "tbc_b")),
    "conv_tbc(channels)": lambda m: m.conv_tbc(T(m, "tbc"), T(m, "tbc_w")[:, :2], T(m, "tbc_b")),
    "conv_tbc(bias size)": lambda m: m.conv_tbc(T(m, "tbc"), T(m, "tbc_w"), T(m, "tbc_b")[:3]),
    "conv_tbc(no bias)": lambda m: m.conv_tbc(T(m, "tbc"), T(m, "tbc_w"), None),
    "conv_tbc(too short)": lambda m: m.conv_tbc(T(m, "tbc"), T(m, "tbc_w"), T(m, "tbc_b"), -3),
    # slice_copy (torch 1.13 mis-parses a left-out step: it is given), split copies
    "slice_copy": lambda m: m.slice_copy(T(m, "m46"), 1, 1, 5, 2),
    "slice_copy(negative start, no end)": lambda m: m.slice_copy(T(m, "m46"), -1, -4, None, 1),
    "slice_copy(past the end)": lambda m: m.slice_copy(T(m, "m46"), 0, 1, 100, 1),
    "slice_copy(empty)": lambda m: m.slice_copy(T(m, "m46"), 1, 4, 2, 1),
    "slice_copy(of a transpose)": lambda m: m.slice_copy(T(m, "m46").t(), 1, 0, 4, 1),
    "slice_copy(int64)": lambda m: m.slice_copy(m.arange(10), 0, 2, 9, 3),
    "slice_copy(step 0)": lambda m: m.slice_copy(T(m, "m46"), 1, 1, 5, 0),
    "slice_copy(dim)": lambda m: m.slice_copy(T(m, "m46"), 2, 0, 1, 1),
    "slice_copy(0-d)": lambda m: m.slice_copy(m.tensor(1.0), 0, 0, 1, 1),
    "split_with_sizes_copy": lambda m: m.split_with_sizes_copy(T(m, "m46"), [1, 3]),
    "split_with_sizes_copy(dim 1, transposed)": lambda m: m.split_with_sizes_copy(
        T(m, "m46").t(), [2, 2], 1),
    "split_with_sizes_copy(sum)": lambda m: m.split_with_sizes_copy(T(m, "m46"), [2, 3], 1),
    "split_with_sizes_copy(int)": lambda m: m.split_with_sizes_copy(T(m, "m46"), 2),
    "unsafe_split_with_sizes": lambda m: m.unsafe_split_with_sizes(T(m, "m46"), [2, 4], 1),
    "Tensor.unsafe_split_with_sizes": lambda m: T(m, "m46").unsafe_split_with_sizes([3, 1]),
    "unsafe_split_with_sizes(negative)": lambda m: m.unsafe_split_with_sizes(T(m, "m46"),
                                                                             [2, -1, 5], 1),
    "Tensor.unsafe_split_with_sizes(dim)": lambda m: T(m, "m46").unsafe_split_with_sizes([2, 4],
                                                                                         3),
    "unsafe_split": lambda m: m.unsafe_split(T(m, "m46"), 4, 1),
    "Tensor.unsafe_split": lambda m: T(m, "m46").unsafe_split(3),
    "unsafe_split(list)": lambda m: m.unsafe_split(T(m, "m46"), [2, 4], 1),
    "Tensor.unsafe_split(list)": lambda m: T(m, "m46").unsafe_split([2, 4], 1),
    # norms
    "nuclear_norm": lambda m: m.nuclear_norm(T(m, "m34")),
    "nuclear_norm(keepdim positional)": lambda m: m.nuclear_norm(T(m, "m34"), True),
    "nuclear_norm(dim)": lambda m: m.nuclear_norm(T(m, "b234"), (0, 2)),
    "nuclear_norm(dim, keepdim)": lambda m: m.nuclear_norm(T(m, "b234"), [2, 0], True),
    "nuclear_norm(float64)": lambda m: m.nuclear_norm(T(m, "b234", "float64"), [-1, -2]),
    "nuclear_norm(3-d)": lambda m: m.nuclear_norm(T(m, "b234")),
    "nuclear_norm(1-d)": lambda m: m.nuclear_norm(T(m, "b234")[0, 0]),
    "nuclear_norm(one dim)": lambda m: m.nuclear_norm(T(m, "b234"), [1]),
    "nuclear_norm(same dims)": lambda m: m.nuclear_norm(T(m, "b234"), [1, -2]),
    "nuclear_norm(dim out of range)": lambda m: m.nuclear_norm(T(m, "b234"), [1, 3]),
    "nuclear_norm(int64)": lambda m: m.nuclear_norm(T(m, "m34", "int64")),
    "norm_except_dim": lambda m: m.norm_except_dim(T(m, "v345")),
    "norm_except_dim(last)": lambda m: m.norm_except_dim(T(m, "v345"), 2, 2),
    "norm_except_dim(middle)": lambda m: m.norm_except_dim(T(m, "v345"), 3, 1),
    "norm_except_dim(all)": lambda m: m.norm_except_dim(T(m, "v345"), 1, -1),
    "norm_except_dim(-2)": lambda m: m.norm_except_dim(T(m, "v345"), 2, -2),
    "norm_except_dim(float64)": lambda m: m.norm_except_dim(T(m, "v345", "float64"), 2, 0),
    "norm_except_dim(float pow)": lambda m: m.norm_except_dim(T(m, "v345"), 2.5, 0),
    "norm_except_dim(dim)": lambda m: m.norm_except_dim(T(m, "v345"), 2, 3),
    "norm_except_dim(int64)": lambda m: m.norm_except_dim(T(m, "v345", "int64"), 2, 0),
    "norm_except_dim(0-d)": lambda m: m.norm_except_dim(m.tensor(2.0), 2, 0),
    # native_layer_norm / group_norm / batch_norm: the output and the statistics
    "native_layer_norm": lambda m: m.native_layer_norm(T(m, "ln_x"), [4, 5], T(m, "ln_w"),
                                                       T(m, "ln_b"), 1e-5),
    "native_layer_norm(last dim)": lambda m: m.native_layer_norm(T(m, "ln_x"), (5,), None, None,
                                                                 1e-3),
    "native_layer_norm(all dims)": lambda m: m.native_layer_norm(T(m, "ln_x"), [2, 3, 4, 5],
                                                                 None, None, 1e-5),
    "native_layer_norm(transposed)": lambda m: m.native_layer_norm(
        T(m, "ln_x").transpose(0, 3), [2], None, None, 1e-5),
    "native_layer_norm(float64)": lambda m: m.native_layer_norm(T(m, "ln_x", "float64"), [5],
                                                                None, None, 1e-5),
    "native_layer_norm(bfloat16)": lambda m: m.native_layer_norm(T(m, "ln_x", "bfloat16"), [4, 5],
                                                                 None, None, 1e-5),
    "native_layer_norm(shape)": lambda m: m.native_layer_norm(T(m, "ln_x"), [3], None, None,
                                                              1e-5),
    "native_layer_norm(int shape)": lambda m: m.native_layer_norm(T(m, "ln_x"), 5, None, None,
                                                                  1e-5),
    "native_layer_norm(int64)": lambda m: m.native_layer_norm(T(m, "ln_x", "int64"), [5], None,
                                                              None, 1e-5),
    "native_group_norm": lambda m: m.native_group_norm(T(m, "gn_x"), T(m, "gn_w"), T(m, "gn_b"),
                                                       2, 6, 20, 3, 1e-5),
    "native_group_norm(no affine)": lambda m: m.native_group_norm(T(m, "gn_x"), None, None, 2,
                                                                  6, 20, 2, 1e-3),
    "native_group_norm(N, C, HxW of its own)": lambda m: m.native_group_norm(
        T(m, "gn_x"), None, None, 4, 6, 10, 3, 1e-5),
    "native_group_norm(float64)": lambda m: m.native_group_norm(T(m, "gn_x", "float64"), None,
                                                                None, 2, 6, 20, 6, 1e-5),
    "native_group_norm(bfloat16)": lambda m: m.native_group_norm(T(m, "gn_x", "bfloat16"), None,
                                                                 None, 2, 6, 20, 3, 1e-5),
    "native_group_norm(groups)": lambda m: m.native_group_norm(T(m, "gn_x"), None, None, 2, 6,
                                                               20, 4, 1e-5),
    "native_group_norm(weight)": lambda m: m.native_group_norm(T(m, "gn_x"), T(m, "gn_w")[:5],
                                                               None, 2, 6, 20, 3, 1e-5),
    "native_group_norm(numel)": lambda m: m.native_group_norm(T(m, "gn_x"), None, None, 2, 6,
                                                              10, 3, 1e-5),
    "native_group_norm(int64)": lambda m: m.native_group_norm(T(m, "gn_x", "int64"), None, None,
                                                              2, 6, 20, 3, 1e-5),
    "native_batch_norm(training)": lambda m: m.native_batch_norm(
        T(m, "bn_x"), T(m, "bn_w"), T(m, "bn_b"), m.zeros(3), m.ones(3), True, 0.1, 1e-5),
    "native_batch_norm(training, no stats)": lambda m: m.native_batch_norm(
        T(m, "bn_x"), None, None, None, None, True, 0.1, 1e-5),
    "native_batch_norm(eval)": lambda m: m.native_batch_norm(
        T(m, "bn_x"), T(m, "bn_w"), T(m, "bn_b"), T(m, "bn_b").abs(), T(m, "bn_w").abs(), False,
        0.1, 1e-5),
    "native_batch_norm(transposed)": lambda m: m.native_batch_norm(
        T(m, "bn_x").transpose(0, 2), None, None, None, None, True, 0.1, 1e-5),
    "native_batch_norm(2-d, float64)": lambda m: m.native_batch_norm(
        T(m, "bn_x", "float64")[0].t(), None, None, None, None, True, 0.3, 1e-3),
    "native_batch_norm(bfloat16)": lambda m: m.native_batch_norm(
        T(m, "bn_x", "bfloat16"), None, None, None, None, True, 0.1, 1e-5),
    "native_batch_norm(1-d)": lambda m: m.native_batch_norm(
        T(m, "bn_w"), None, None, None, None, True, 0.1, 1e-5),
    "native_batch_norm(int64)": lambda m: m.native_batch_norm(
        T(m, "bn_x", "int64"), None, None, None, None, True, 0.1, 1e-5),
    # native_dropout: what does not depend on the draws
    "native_dropout(eval)": lambda m: m.native_dropout(T(m, "bn_x"), 0.5, False),
    "native_dropout(eval, transposed)": lambda m: m.native_dropout(T(m, "bn_x").transpose(0, 2),
                                                                   0.5, False),
    "native_dropout(p 0)": lambda m: m.native_dropout(T(m, "bn_x", "float64"), 0.0, True),
    "native_dropout(p 1)": lambda m: m.native_dropout(T(m, "bn_x"), 1.0, None),
    "native_dropout(p)": lambda m: m.native_dropout(T(m, "bn_x"), 1.5, True),
    "native_dropout(int64)": lambda m: m.native_dropout(T(m, "bn_x", "int64"), 0.5, True),
    # the dropout family at torch's top level: p checked as ATen does, identity when not training
    "dropout_(eval)": lambda m: m.dropout_(T(m, "bn_x"), 0.5, False),
    "alpha_dropout_(p 1)": lambda m: m.alpha_dropout_(T(m, "bn_x"), 1.0, True),
    "feature_dropout_(p 1)": lambda m: m.feature_dropout_(T(m, "bn_x"), 1.0, True),
    "feature_alpha_dropout_(eval)": lambda m: m.feature_alpha_dropout_(T(m, "bn_x"), 0.2, False),
    "feature_alpha_dropout(p 1)": lambda m: m.feature_alpha_dropout(T(m, "bn_x"), 1.0, True),
    "dropout(p)": lambda m: m.dropout(T(m, "bn_x"), 1.5, False),
    "dropout_(p)": lambda m: m.dropout_(T(m, "bn_x"), -0.1, True),
    "alpha_dropout_(p)": lambda m: m.alpha_dropout_(T(m, "bn_x"), 1.5, True),
    "feature_dropout_(p)": lambda m: m.feature_dropout_(T(m, "bn_x"), 2.0, False),
    "feature_alpha_dropout_(p)": lambda m: m.feature_alpha_dropout_(T(m, "bn_x"), -1.0, True),
    "feature_dropout_(1-d)": lambda m: m.feature_dropout_(T(m, "bn_w"), 0.5, True),
    "feature_alpha_dropout_(1-d)": lambda m: m.feature_alpha_dropout_(T(m, "bn_w"), 0.5, True),
    "dropout_(int64)": lambda m: m.dropout_(T(m, "bn_x", "int64"), 0.5, True),
    "feature_alpha_dropout_(int64)": lambda m: m.feature_alpha_dropout_(T(m, "bn_x", "int64"),
                                                                        0.5, True),
    "F.feature_alpha_dropout(p)": lambda m: m.nn.functional.feature_alpha_dropout(
        T(m, "bn_x"), 1.5, True),
    # RNN cells: torch's gate order (lstm: i, f, g, o; gru: r, z, n)
    "rnn_tanh_cell": lambda m: m.rnn_tanh_cell(T(m, "cell_x"), T(m, "cell_h"), *cell(m, 1)),
    "rnn_tanh_cell(no bias)": lambda m: m.rnn_tanh_cell(T(m, "cell_x"), T(m, "cell_h"),
                                                        *cell(m, 1, bias=False)),
    "rnn_tanh_cell(b_hh only)": lambda m: m.rnn_tanh_cell(T(m, "cell_x"), T(m, "cell_h"),
                                                          *cell(m, 1)[:2],
                                                          b_hh=T(m, "b_hh1")),
    "rnn_relu_cell": lambda m: m.rnn_relu_cell(T(m, "cell_x"), T(m, "cell_h"), *cell(m, 1)),
    "rnn_relu_cell(float64)": lambda m: m.rnn_relu_cell(T(m, "cell_x", "float64"),
                                                        T(m, "cell_h", "float64"),
                                                        *cell(m, 1, "float64")),
    "rnn_relu_cell(int64)": lambda m: m.rnn_relu_cell(T(m, "cell_x", "int64"),
                                                      T(m, "cell_h", "int64"),
                                                      *cell(m, 1, "int64")),
    "rnn_tanh_cell(input size)": lambda m: m.rnn_tanh_cell(T(m, "cell_h"), T(m, "cell_h"),
                                                           *cell(m, 1)),
    "rnn_relu_cell(batch)": lambda m: m.rnn_relu_cell(T(m, "cell_x")[:2], T(m, "cell_h"),
                                                      *cell(m, 1)),
    "lstm_cell": lambda m: m.lstm_cell(T(m, "cell_x"), hc(m), *cell(m, 4)),
    "lstm_cell(no bias, list)": lambda m: m.lstm_cell(T(m, "cell_x"), list(hc(m)),
                                                      *cell(m, 4, bias=False)),
    "lstm_cell(float64)": lambda m: m.lstm_cell(T(m, "cell_x", "float64"), hc(m, "float64"),
                                                *cell(m, 4, "float64")),
    "lstm_cell(one state)": lambda m: m.lstm_cell(T(m, "cell_x"), hc(m)[:1], *cell(m, 4)),
    "lstm_cell(tensor state)": lambda m: m.lstm_cell(T(m, "cell_x"), T(m, "cell_h"),
                                                     *cell(m, 4)),
    "lstm_cell(cell size)": lambda m: m.lstm_cell(T(m, "cell_x"),
                                                  (T(m, "cell_h"), T(m, "cell_c")[:, :4]),
                                                  *cell(m, 4)),
    "lstm_cell(int64)": lambda m: m.lstm_cell(T(m, "cell_x", "int64"), hc(m, "int64"),
                                              *cell(m, 4, "int64")),
    "gru_cell": lambda m: m.gru_cell(T(m, "cell_x"), T(m, "cell_h"), *cell(m, 3)),
    "gru_cell(no bias)": lambda m: m.gru_cell(T(m, "cell_x"), T(m, "cell_h"),
                                              *cell(m, 3, bias=False)),
    "gru_cell(float64)": lambda m: m.gru_cell(T(m, "cell_x", "float64"),
                                              T(m, "cell_h", "float64"), *cell(m, 3, "float64")),
    "gru_cell(hidden size)": lambda m: m.gru_cell(T(m, "cell_x"), T(m, "cell_h")[:, :4],
                                                  *cell(m, 3)),
    "gru_cell(1-d input)": lambda m: m.gru_cell(T(m, "cell_x")[0], T(m, "cell_h")[0],
                                                *cell(m, 3)),
    "gru_cell(dtypes)": lambda m: m.gru_cell(T(m, "cell_x", "float64"), T(m, "cell_h"),
                                             *cell(m, 3)),
    # as_strided_scatter: into a copy laid out as input
    "as_strided_scatter": lambda m: m.as_strided_scatter(T(m, "m34"), T(m, "src22"), (2, 2),
                                                         (1, 2)),
    "as_strided_scatter(offset)": lambda m: m.as_strided_scatter(T(m, "m34"), T(m, "src22"),
                                                                 [2, 2], [1, 2], 1),
    "Tensor.as_strided_scatter": lambda m: T(m, "m34").as_strided_scatter(
        T(m, "src22"), (2, 2), (4, 1), storage_offset=5),
    "as_strided_scatter(transposed input)": lambda m: m.as_strided_scatter(
        T(m, "m34").t(), T(m, "src22"), (2, 2), (1, 2)),
    "as_strided_scatter(of a slice)": lambda m: m.as_strided_scatter(
        T(m, "m34")[1:], T(m, "src22"), (2, 2), (1, 2)),
    "as_strided_scatter(int64, src cast)": lambda m: m.as_strided_scatter(
        m.arange(12).view(3, 4), T(m, "src22"), (4,), (3,)),
    "as_strided_scatter(size)": lambda m: m.as_strided_scatter(T(m, "m34"), T(m, "src22"), (3,),
                                                               (1,)),
    "as_strided_scatter(out of bounds)": lambda m: m.as_strided_scatter(
        T(m, "m34"), T(m, "src22"), (2, 2), (1, 2), 100),
    # symeig: linalg.eigh of one triangle (eigenvalues; eigenvectors are compared up to sign)
    "symeig": lambda m: m.symeig(sym(m)),
    "symeig(lower)": lambda m: m.symeig(T(m, "sym"), upper=False).eigenvalues,
    "symeig(upper)": lambda m: m.symeig(T(m, "sym"), False, True).eigenvalues,
    "Tensor.symeig(batch, float64)": lambda m: sym(m, "sym_b").double().symeig()[0],
    "symeig(vectors, abs)": lambda m: m.symeig(sym(m), eigenvectors=True)[1].abs(),
    "symeig(rectangular)": lambda m: m.symeig(T(m, "m34")),
    "symeig(1-d)": lambda m: m.symeig(T(m, "bn_w")),
    "symeig(int64)": lambda m: m.symeig(T(m, "sym", "int64")),
}

# Errors tensord raises itself, with torch's message word for word.
SAME_MESSAGE = {
    "convolution(unbatched input)", "convolution(2-d weight)", "convolution(stride of 2 for 1d)",
    "convolution(int stride)", "conv_tbc(2-d input)", "conv_tbc(channels)",
    "conv_tbc(bias size)", "conv_tbc(no bias)", "conv_tbc(too short)", "slice_copy(step 0)",
    "slice_copy(dim)", "slice_copy(0-d)", "split_with_sizes_copy(int)", "unsafe_split(list)",
    "Tensor.unsafe_split(list)", "nuclear_norm(3-d)", "nuclear_norm(1-d)",
    "nuclear_norm(one dim)", "nuclear_norm(same dims)", "nuclear_norm(dim out of range)",
    "norm_except_dim(float pow)", "norm_except_dim(0-d)", "native_layer_norm(int shape)",
    "native_group_norm(groups)", "native_group_norm(weight)", "native_group_norm(numel)",
    "native_batch_norm(1-d)", "native_dropout(p)", "native_dropout(int64)", "dropout(p)",
    "dropout_(p)", "alpha_dropout_(p)", "feature_dropout_(p)", "feature_alpha_dropout_(p)",
    "feature_dropout_(1-d)", "feature_alpha_dropout_(1-d)", "dropout_(int64)",
    "feature_alpha_dropout_(int64)", "rnn_tanh_cell(input size)", "rnn_relu_cell(batch)",
    "lstm_cell(one state)", "lstm_cell(tensor state)", "lstm_cell(cell size)",
    "lstm_cell(int64)", "gru_cell(hidden size)", "gru_cell(1-d input)",
    "as_strided_scatter(size)", "symeig(rectangular)", "symeig(1-d)", "symeig(int64)",
}
TOL = {torch.float32: 2e-5, torch.float64: 1e-10, torch.bfloat16: (2e-2, 2e-2)}


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch(name, session):
    assert_matches_torch(CASES[name], tol=TOL)


@pytest.mark.parametrize("name", sorted(SAME_MESSAGE))
def test_same_error_message(name, session):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, werr = outcome(lambda: CASES[name](torch))
        _, gerr = outcome(lambda: CASES[name](tensord))
    assert werr is not None, f"torch did not raise for {name}"
    assert gerr == werr


def test_names_are_installed(session):
    for name in ("convolution", "conv_tbc", "slice_copy", "split_with_sizes_copy",
                 "unsafe_split_with_sizes", "unsafe_split", "nuclear_norm", "norm_except_dim",
                 "native_layer_norm", "native_group_norm", "native_batch_norm", "native_dropout",
                 "native_norm", "feature_alpha_dropout_", "feature_dropout_", "alpha_dropout_",
                 "dropout_", "rnn_tanh_cell", "rnn_relu_cell", "lstm_cell", "gru_cell",
                 "as_strided_scatter", "get_device", "symeig"):
        assert callable(getattr(tensord, name, None)), name
    for name in ("unsafe_split_with_sizes", "as_strided_scatter", "symeig", "get_device"):
        assert callable(getattr(tensord.Tensor, name, None)), name
    assert tensord.nn.functional.conv_tbc is tensord.conv_tbc


def test_native_batch_norm_updates_running_stats(session):
    x = A["bn_x"]
    stats = {}
    for m in (torch, tensord):
        mean, var = m.full((3,), 0.5), m.full((3,), 2.0)
        m.native_batch_norm(m.tensor(x), None, None, mean, var, True, 0.25, 1e-5)
        stats[m] = (as_torch(mean) if m is tensord else mean,
                    as_torch(var) if m is tensord else var)
    for got, want in zip(stats[tensord], stats[torch]):
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6)


def test_native_batch_norm_eval_needs_running_stats(session):
    """torch 1.13 crashes here (it reads the missing statistics); tensord raises."""
    with pytest.raises(RuntimeError):
        tensord.native_batch_norm(tensord.tensor(A["bn_x"]), None, None, None, None, False, 0.1,
                                  1e-5)
        tensord.synchronize()


@pytest.mark.parametrize("transposed", [False, True])
def test_native_dropout_mask_and_scale(transposed, session):
    """In training: the kept elements scaled by 1 / (1 - p), a bool mask of them, both laid out
    as input (the draws themselves are not torch's)."""
    x = A["bn_x"]
    t = tensord.tensor(x)
    t = t.transpose(0, 2) if transposed else t
    out, mask = tensord.native_dropout(t, 0.25, True)
    want_out, want_mask = torch.native_dropout(torch.tensor(x).transpose(0, 2) if transposed
                                               else torch.tensor(x), 0.25, True)
    assert str(out.dtype) == str(want_out.dtype) and str(mask.dtype) == str(want_mask.dtype)
    assert tuple(out.shape) == tuple(want_out.shape) == tuple(mask.shape)
    assert out.stride() == want_out.stride() and mask.stride() == want_mask.stride()
    kept = as_torch(mask)
    torch.testing.assert_close(as_torch(out), torch.where(kept, as_torch(t) / 0.75,
                                                          torch.zeros(())))
    assert 0 < int(kept.sum()) < kept.numel()


@pytest.mark.parametrize("name", ["dropout", "alpha_dropout", "feature_dropout",
                                  "feature_alpha_dropout"])
def test_dropout_in_place_forms(name, session):
    """In training: self itself is returned and changed; feature forms keep or drop whole
    channels; the kept values are scaled as torch scales them."""
    p = 0.5
    x = tensord.ones(20, 30, 4)
    y = getattr(tensord, name + "_")(x, p, True)
    assert y is x
    got = as_torch(x)
    want = getattr(torch, name)(torch.ones(20, 30, 4), p, True)
    assert set(got.unique().tolist()) == set(want.unique().tolist())
    if name.startswith("feature"):
        assert bool((got == got[:, :, :1]).all())
    else:
        assert not bool((got == got[:, :, :1]).all())
    z = tensord.ones(20, 30, 4)
    assert getattr(tensord, name + "_")(z, p, False) is z
    assert bool((as_torch(z) == 1).all())


def test_feature_alpha_dropout_drops_channels(session):
    out = as_torch(tensord.nn.functional.feature_alpha_dropout(tensord.ones(20, 30, 4), 0.5,
                                                               True))
    assert bool((out == out[:, :, :1]).all())
    assert len(out.unique()) == 2


NATIVE_NORM = {
    "p 2": lambda m, t: m.native_norm(t),
    "p 1": lambda m, t: m.native_norm(t, 1),
    "p 3": lambda m, t: m.native_norm(t, p=3),
    "p inf": lambda m, t: m.native_norm(t, float("inf")),
    "p 0": lambda m, t: m.native_norm(t, 0),
    "all dims": lambda m, t: m.native_norm(t, 2, [1, 0], False, None),
    "no dims": lambda m, t: m.native_norm(t, None, [], False, None),
    "some dims": lambda m, t: m.native_norm(t, 2, [1], False, None),
    "keepdim": lambda m, t: m.native_norm(t, 2, [0, 1], True, None),
    "dtype": lambda m, t: m.native_norm(t, 2, [0, 1], False, m.float64),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(NATIVE_NORM))
def test_native_norm_as_torchs_sparse_kernel(name, dtype, session):
    """torch 1.13 has native_norm for sparse tensors only; tensord's (dense) tensors give what
    torch gives for the same values held sparse."""
    x = A["m34"].astype(dtype)
    want, werr = outcome(lambda: NATIVE_NORM[name](torch, torch.tensor(x).to_sparse()))
    got, gerr = outcome(lambda: NATIVE_NORM[name](tensord, tensord.tensor(x)))
    if werr:
        assert gerr == werr
        return
    assert gerr is None, gerr
    assert str(got.dtype) == str(want.dtype) and tuple(got.shape) == tuple(want.shape)
    torch.testing.assert_close(as_torch(got), want, rtol=1e-5, atol=1e-6)


def test_native_norm_int64_raises_as_torch(session):
    _, werr = outcome(lambda: torch.native_norm(torch.arange(4).to_sparse()))
    _, gerr = outcome(lambda: tensord.native_norm(tensord.arange(4)))
    assert werr is not None and gerr is not None and gerr[0] == werr[0]


def test_get_device(session):
    t = tensord.ones(2)
    assert tensord.get_device(t) == torch.get_device(torch.ones(2)) == -1
    assert t.get_device() == -1
    for bad in (3, None):
        _, werr = outcome(lambda: torch.get_device(bad))
        _, gerr = outcome(lambda: tensord.get_device(bad))
        assert gerr == werr


def test_symeig_values_vectors_and_warning(session):
    a = A["sym"] + A["sym"].T
    import tensord._composite as composite
    composite._symeig_warned.clear()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        values, vectors = tensord.symeig(tensord.tensor(a), eigenvectors=True)
        tensord.symeig(tensord.tensor(a))
    assert [w.category for w in caught] == [UserWarning]  # once, as torch's TORCH_WARN_ONCE
    assert str(caught[0].message).startswith("torch.symeig is deprecated in favor of "
                                             "torch.linalg.eigh")
    res = tensord.symeig(tensord.tensor(a))
    assert type(res).__name__ == "symeig" and res._fields == ("eigenvalues", "eigenvectors")
    assert tuple(res.eigenvectors.shape) == (0,)
    v, q = as_torch(values), as_torch(vectors)
    torch.testing.assert_close(q @ torch.diag(v) @ q.T, torch.tensor(a), rtol=1e-4, atol=1e-4)
    assert vectors.stride() == torch.linalg.eigh(torch.tensor(a))[1].stride()


# ---- resize_, resize_as_, set_: self takes new metadata (and storage) in place --------------------

def _grow(m):
    b = m.arange(10.0)
    v = b[2:5]
    v.resize_(3, 3)  # past the storage's end: a larger storage
    v[0].fill_(7)
    return v[:1]  # (b, on the old storage, does not see it: torch grows the storage b shares)


def _shared_after_set(m):
    a, b = m.zeros(4), m.ones(2, 2)
    a.set_(b)
    a[0, 0] = 5  # writes b's storage
    return b, a


RESIZE = {
    "resize_(smaller, view)": lambda m: m.arange(10.0)[2:5].resize_(2, 2),
    "resize_(same sizes keep strides)": lambda m: m.arange(6.0).view(2, 3).t().resize_(3, 2),
    "resize_(tuple)": lambda m: m.arange(6.0).resize_((2, 3)),
    "resize_(Size)": lambda m: m.arange(6.0).resize_(m.Size([3, 2])),
    "resize_(0)": lambda m: m.arange(6.0).resize_(0),
    "resize_(expanded)": lambda m: m.arange(6.0).expand(2, 6).resize_(4),
    "resize_(negative)": lambda m: m.arange(6.0).resize_(-1),
    "resize_(grow)": _grow,
    "resize_(int64 grow)": lambda m: m.arange(3).resize_(2, 2)[:1, :1],
    "resize_as_": lambda m: m.arange(6.0).resize_as_(m.ones(2, 2)),
    "set_(tensor)": lambda m: m.arange(6.0).set_(m.ones(2, 3)),
    "set_(storage, offset, size, stride)": lambda m: m.arange(6.0).set_(
        m.arange(6.0).storage(), 1, (2, 2), (1, 2)),
    "set_(storage)": lambda m: m.arange(6.0).set_(m.ones(2, 3).storage()),
    "set_()": lambda m: m.arange(6.0).set_(),
    "set_(shares)": _shared_after_set,
}


@pytest.mark.parametrize("name", sorted(RESIZE))
def test_resize_and_set_match_torch(name, session):
    assert_matches_torch(RESIZE[name])
    got, _ = outcome(lambda: RESIZE[name](tensord))
    want, _ = outcome(lambda: RESIZE[name](torch))
    for g, w in zip(got if isinstance(got, tuple) else [got],
                    want if isinstance(want, tuple) else [want]):
        if hasattr(w, "storage_offset"):
            assert g.storage_offset() == w.storage_offset()
            assert len(g.storage()) == len(w.storage())
