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
from oracle import TORCH_113, as_torch, assert_matches_torch, cpu_only, outcome, outcomes

# Tests of CPU semantics (apply_ is CPU-only in torch, a CPU tensor's get_device): not run by the
# differential matrix on cuda (test_cuda.py), which covers CUDA tensors' own behaviour.
cpu_semantics = cpu_only("CPU semantics; test_cuda.py covers CUDA tensors")
# Exact messages are torch 1.13's (tensord keeps them; torch 2.x reworded some).
messages_of_113 = pytest.mark.skipif(not TORCH_113, reason="messages compared with torch 1.13's")

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


@messages_of_113
@pytest.mark.parametrize("name", sorted(SAME_MESSAGE))
def test_same_error_message(name, session):
    _assert_same_error(CASES[name])


def _assert_same_error(case):
    """case raises in torch, and tensord raises the same class with the same message."""
    (_, werr), (_, gerr) = outcomes(case)
    assert werr is not None, "torch did not raise"
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


@cpu_semantics
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
    tensord._errors._warned.discard("symeig")
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


# ---- gradient, apply_/map_/map2_, embedding_bag, embedding_renorm_, segment_reduce -----------

G = {
    "q34": (np.arange(12.0).reshape(3, 4) ** 2).astype(np.float32),
    "v5": _normal(5), "c234": _normal(2, 3, 4),
    "emb": _normal(10, 3), "emb6": _normal(6, 4),
    "seg6": _normal(6), "seg34": _normal(3, 4), "seg234": _normal(2, 3, 4),
}
BAG_IDX = [1, 2, 4, 5, 4, 3, 2, 9]
BAG_OFF = [0, 4, 4, 6]


def Q(m, name="q34", dtype=None):
    t = m.tensor(G[name])
    return t if dtype is None else t.to(getattr(m, dtype))


def bag(m, *args, dtype=None, idx=None, off=None, **kwargs):
    """torch.embedding_bag on the 10 x 3 table, indices BAG_IDX and offsets BAG_OFF."""
    idx = m.tensor(BAG_IDX if idx is None else idx)
    off = m.tensor(BAG_OFF if off is None else off)
    return m.embedding_bag(Q(m, "emb", dtype), idx, off, *args, **kwargs)


def renorm(m, indices, *args, dtype=None, name="emb"):
    """embedding_renorm_ on a fresh table: (its result, the table), to see both."""
    w = Q(m, name, dtype)
    out = m.embedding_renorm_(w, m.tensor(indices) if isinstance(indices, list) else indices,
                              *args)
    return out, w


def seg(m, reduce, name="seg6", dtype=None, **kwargs):
    for key in ("lengths", "offsets", "indices"):
        if isinstance(kwargs.get(key), list):
            kwargs[key] = m.tensor(kwargs[key])
    return m.segment_reduce(Q(m, name, dtype), reduce, **kwargs)


def _raise_at_3(v):
    if v == 3:
        raise ValueError("three")
    return v * 10


def _set_view(m):
    base = m.arange(8.0)
    base[1::2].apply_(lambda v: -v)
    return base


MORE = {
    # torch.gradient: uniform spacing, per-dim spacing, coordinates; edge orders 1 and 2
    "gradient": lambda m: m.gradient(Q(m)),
    "gradient(spacing number, dim)": lambda m: m.gradient(Q(m), spacing=2.0, dim=1),
    "gradient(spacing int)": lambda m: m.gradient(Q(m), spacing=3),
    "gradient(spacing list)": lambda m: m.gradient(Q(m), spacing=[2.0, 0.5]),
    "gradient(spacing list, int)": lambda m: m.gradient(Q(m), spacing=[1, 2.5]),
    "gradient(spacing 0-d tensor)": lambda m: m.gradient(Q(m), spacing=m.tensor(2.0)),
    "gradient(spacing True)": lambda m: m.gradient(Q(m), spacing=True),
    "gradient(spacing None)": lambda m: m.gradient(Q(m), spacing=None),
    "gradient(spacing number, dims)": lambda m: m.gradient(Q(m), spacing=2.0, dim=[0, 1]),
    "gradient(dims reversed)": lambda m: m.gradient(Q(m), dim=[1, 0]),
    "gradient(negative dims, spacing)": lambda m: m.gradient(Q(m), spacing=[1.0, 2.0],
                                                             dim=[-1, -2]),
    "gradient(no dims)": lambda m: m.gradient(Q(m), dim=()),
    "gradient(edge_order 2)": lambda m: m.gradient(Q(m), edge_order=2),
    "gradient(edge_order 2, spacing)": lambda m: m.gradient(Q(m), spacing=[1, 2], edge_order=2),
    "gradient(coordinates)": lambda m: m.gradient(Q(m), spacing=(m.tensor([0.0, 1, 3]),
                                                                 m.tensor([0.0, 1, 2, 5]))),
    "gradient(coordinates, edge_order 2)": lambda m: m.gradient(
        Q(m), spacing=[m.tensor([0.0, 1, 3]), m.tensor([0.0, 1, 3, 4])], edge_order=2),
    "gradient(coordinates, dim)": lambda m: m.gradient(Q(m), spacing=[m.tensor([0.0, 1, 2, 4])],
                                                       dim=1),
    "gradient(coordinates, int dim)": lambda m: m.gradient(Q(m), spacing=[m.tensor([0, 1, 3])],
                                                           dim=0),
    "gradient(int64 coordinates)": lambda m: m.gradient(
        m.arange(12).reshape(3, 4), spacing=(m.tensor([0, 1, 3]), m.tensor([0, 1, 3, 4])),
        edge_order=2),
    "gradient(float64 coordinates of float32)": lambda m: m.gradient(
        m.arange(5.0) ** 2, spacing=[m.tensor([0.0, 1, 3, 4, 7]).double()]),
    "gradient(float32 coordinates of float64)": lambda m: m.gradient(
        (m.arange(5.0) ** 2).double(), spacing=[m.tensor([0.0, 1, 3, 4, 7])], edge_order=2),
    "gradient(coordinates longer)": lambda m: m.gradient(Q(m), spacing=[m.tensor([0.0, 1, 3,
                                                                                  4])], dim=0),
    "gradient(float64)": lambda m: m.gradient(Q(m, dtype="float64"), spacing=[0.5, 3.0]),
    "gradient(float16)": lambda m: m.gradient(Q(m, dtype="float16"), edge_order=2),
    "gradient(int64)": lambda m: m.gradient(m.arange(5) ** 2),
    "gradient(int32, int spacing)": lambda m: m.gradient(m.arange(6, dtype=m.int32) ** 2,
                                                         spacing=2),
    "gradient(int16, edge_order 2)": lambda m: m.gradient(m.arange(6, dtype=m.int16) * 3,
                                                          edge_order=2),
    "gradient(3-d, dims)": lambda m: m.gradient(Q(m, "c234"), dim=[0, 2], spacing=[2, 3]),
    "gradient(3-d, edge_order 2)": lambda m: m.gradient(Q(m, "c234")[:, :, :3], dim=-1,
                                                        edge_order=2),
    "gradient(transposed)": lambda m: m.gradient(Q(m).t()),
    "gradient(two samples)": lambda m: m.gradient(Q(m)[:2], dim=0),
    "gradient(1-d)": lambda m: m.gradient(Q(m, "v5")),
    "gradient(0-d)": lambda m: m.gradient(m.tensor(3.0)),
    "gradient(0-d, spacing)": lambda m: m.gradient(m.tensor(3.0), spacing=2.0),
    "gradient(edge_order 3)": lambda m: m.gradient(Q(m), edge_order=3),
    "gradient(edge_order 0)": lambda m: m.gradient(Q(m), dim=0, edge_order=0),
    "gradient(too short)": lambda m: m.gradient(Q(m)[:1]),
    "gradient(too short, edge_order 2)": lambda m: m.gradient(Q(m)[:2], edge_order=2),
    "gradient(uint8)": lambda m: m.gradient(m.arange(5, dtype=m.uint8)),
    "gradient(spacing length)": lambda m: m.gradient(Q(m), spacing=[1.0, 2.0, 3.0]),
    "gradient(no spacing)": lambda m: m.gradient(Q(m), spacing=[]),
    "gradient(spacing and dims lengths)": lambda m: m.gradient(Q(m), spacing=[1.0], dim=[0, 1]),
    "gradient(spacing and dim lengths)": lambda m: m.gradient(Q(m), spacing=[2.0, 3.0], dim=0),
    "gradient(dim out of range)": lambda m: m.gradient(Q(m), dim=2),
    "gradient(dim repeated)": lambda m: m.gradient(Q(m), dim=(0, 0)),
    "gradient(0-d, dim)": lambda m: m.gradient(m.tensor(3.0), dim=0),
    "gradient(2-d coordinates)": lambda m: m.gradient(Q(m), spacing=[m.tensor([[0.0, 1, 3]])],
                                                      dim=0),
    "gradient(0-d coordinates)": lambda m: m.gradient(Q(m), spacing=[m.tensor(1.0),
                                                                     m.tensor(2.0)]),
    "gradient(mixed spacing)": lambda m: m.gradient(Q(m), spacing=[m.tensor([0.0, 1, 3]), 2.0]),
    "gradient(number then tensor)": lambda m: m.gradient(Q(m, "v5"), spacing=[2.0, m.ones(5)]),
    "gradient(one coordinate)": lambda m: m.gradient(m.arange(3.0), spacing=[m.tensor([1.0])]),
    "gradient(float dim)": lambda m: m.gradient(Q(m), dim=1.0),
    "gradient(bool edge_order)": lambda m: m.gradient(Q(m), edge_order=True),
    "gradient(str spacing)": lambda m: m.gradient(Q(m), spacing="a"),
    "gradient(list input)": lambda m: m.gradient([1.0, 2.0, 3.0]),
    "gradient(bool)": lambda m: m.gradient(m.tensor([True, False, True])),
    # Tensor.apply_, map_, map2_: a Python call per element, results stored as torch stores them
    "apply_(int64, float results truncated)": lambda m: m.arange(-3, 5).apply_(lambda v: v * 1.7),
    "apply_(float32)": lambda m: Q(m, "seg34").apply_(lambda v: v * v - 1),
    "apply_(float64)": lambda m: Q(m, "seg34", "float64").apply_(lambda v: 1 / (1 + abs(v))),
    "apply_(float16)": lambda m: m.arange(4.0, dtype=m.float16).apply_(lambda v: v / 3),
    "apply_(bfloat16)": lambda m: m.arange(4.0, dtype=m.bfloat16).apply_(lambda v: v / 3 + 1e-3),
    "apply_(float32 overflow to inf)": lambda m: m.arange(3.0).apply_(lambda v: 1e300),
    "apply_(float16 overflow to inf)": lambda m: m.arange(3.0, dtype=m.float16).apply_(
        lambda v: 70000.0),
    "apply_(bool)": lambda m: m.tensor([True, False, True]).apply_(lambda v: not v),
    "apply_(bool from numbers)": lambda m: m.tensor([True, False]).apply_(lambda v: 0.5 * v),
    "apply_(uint8 wraps negatives)": lambda m: m.arange(5, dtype=m.uint8).apply_(lambda v: -v),
    "apply_(int8 truncates)": lambda m: m.arange(3, dtype=m.int8).apply_(lambda v: -127.9),
    "apply_(int32)": lambda m: m.arange(6, dtype=m.int32).reshape(2, 3).apply_(lambda v: v ** 3),
    "apply_(int16 from bool)": lambda m: m.arange(3, dtype=m.int16).apply_(lambda v: v > 0),
    "apply_(float from int)": lambda m: m.arange(3.0).apply_(lambda v: 2 ** 70),
    "apply_(transposed)": lambda m: Q(m, "seg34").t().apply_(lambda v: round(v, 1)),
    "apply_(a view's base)": _set_view,
    "apply_(0-d)": lambda m: m.tensor(3.0).apply_(lambda v: v + 1),
    "apply_(empty)": lambda m: m.ones(0, 3).apply_(lambda v: v + 1),
    "apply_(int32 overflow)": lambda m: m.arange(5, dtype=m.int32).apply_(lambda v: v * 2 ** 31),
    "apply_(int8 float overflow)": lambda m: m.arange(3, dtype=m.int8).apply_(lambda v: -128.9),
    "apply_(uint8 negative float)": lambda m: m.arange(3, dtype=m.uint8).apply_(lambda v: -0.5),
    "apply_(int64 overflow)": lambda m: m.arange(3).apply_(lambda v: 2 ** 63),
    "apply_(nan into int)": lambda m: m.arange(3).apply_(lambda v: float("nan")),
    "apply_(None)": lambda m: m.arange(3.0).apply_(lambda v: None),
    "apply_(str into int)": lambda m: m.arange(3).apply_(lambda v: "a"),
    "apply_(complex)": lambda m: m.arange(3.0).apply_(lambda v: 1j),
    "apply_(int too large for float)": lambda m: m.arange(3.0).apply_(lambda v: 2 ** 1100),
    "apply_(not callable)": lambda m: m.arange(3.0).apply_(5),
    "apply_(callable raises)": lambda m: m.arange(5.0).apply_(_raise_at_3),
    "map_": lambda m: m.arange(6.0).reshape(2, 3).map_(m.tensor([1.0, 2, 3]),
                                                        lambda a, b: a * 10 + b),
    "map_(int64)": lambda m: m.arange(6).reshape(3, 2).map_(m.tensor([[1], [2], [3]]),
                                                            lambda a, b: a * b - 1),
    "map_(transposed self)": lambda m: Q(m, "seg34").t().map_(Q(m, "seg34")[0].reshape(4, 1),
                                                              lambda a, b: max(a, b)),
    "map_(float64)": lambda m: Q(m, "seg6", "float64").map_(Q(m, "seg6", "float64").flip(0),
                                                            lambda a, b: a - b),
    "map_(dtype)": lambda m: m.arange(3.0).map_(m.ones(3, dtype=m.float64), lambda a, b: a + b),
    "map_(int and float)": lambda m: m.arange(3).map_(m.ones(3), lambda a, b: a + b),
    "map_(not broadcastable)": lambda m: m.arange(3.0).map_(m.ones(2), lambda a, b: a + b),
    "map_(other larger)": lambda m: m.arange(3.0).map_(m.ones(2, 3), lambda a, b: a + b),
    "map_(not a tensor)": lambda m: m.arange(3.0).map_(2, lambda a, b: a + b),
    "map2_": lambda m: m.arange(6.0).reshape(2, 3).map2_(m.ones(3), m.tensor([[2.0], [3.0]]),
                                                         lambda a, b, c: a * c + b),
    "map2_(bool)": lambda m: m.tensor([True, False, True]).map2_(
        m.tensor([True, True, False]), m.tensor([False]), lambda a, b, c: (a and b) or c),
    "map2_(y dtype)": lambda m: m.arange(3.0).map2_(m.ones(3), m.ones(3).double(),
                                                    lambda a, b, c: a + b + c),
    "map2_(x dtype)": lambda m: m.arange(3.0).map2_(m.ones(3).double(), m.ones(3).double(),
                                                    lambda a, b, c: a + b + c),
    "map2_(not broadcastable)": lambda m: m.arange(3.0).map2_(m.ones(3), m.ones(2),
                                                              lambda a, b, c: a + b + c),
    "map2_(not a tensor)": lambda m: m.arange(3.0).map2_(m.ones(3), 3, lambda a, b, c: a),
    # torch.embedding_bag: (output, offset2bag, bag_size, max_indices)
    "embedding_bag(sum)": lambda m: bag(m),
    "embedding_bag(sum, keywords)": lambda m: m.embedding_bag(
        weight=Q(m, "emb"), indices=m.tensor(BAG_IDX), offsets=m.tensor(BAG_OFF),
        scale_grad_by_freq=False, mode=0, sparse=False, per_sample_weights=None,
        include_last_offset=False, padding_idx=None),
    "embedding_bag(mean)": lambda m: bag(m, False, 1),
    "embedding_bag(max)": lambda m: bag(m, False, 2),
    "embedding_bag(max, ties)": lambda m: m.embedding_bag(
        m.tensor([[1.0, 2.0], [1.0, 3.0], [0.0, 3.0]]), m.tensor([2, 0, 1, 1, 2]),
        m.tensor([0, 3]), False, 2),
    "embedding_bag(sum, float64)": lambda m: bag(m, dtype="float64"),
    "embedding_bag(mean, float64)": lambda m: bag(m, False, 1, dtype="float64"),
    "embedding_bag(max, float64)": lambda m: bag(m, False, 2, dtype="float64"),
    "embedding_bag(sum, float16)": lambda m: bag(m, dtype="float16"),
    "embedding_bag(mean, float16)": lambda m: bag(m, False, 1, dtype="float16"),
    "embedding_bag(max, float16)": lambda m: bag(m, False, 2, dtype="float16"),
    "embedding_bag(sum, include_last_offset)": lambda m: bag(m, False, 0, False, None, True,
                                                             off=[0, 4, 4, 6, 8]),
    "embedding_bag(mean, include_last_offset)": lambda m: bag(m, False, 1, False, None, True,
                                                              off=[0, 4, 4, 6, 8]),
    "embedding_bag(max, include_last_offset)": lambda m: bag(m, False, 2, False, None, True,
                                                             off=[0, 3, 8]),
    "embedding_bag(sum, last offset short)": lambda m: bag(m, False, 0, False, None, True,
                                                           off=[0, 3]),
    "embedding_bag(mean, last offset short)": lambda m: bag(m, False, 1, False, None, True,
                                                            off=[0, 3]),
    "embedding_bag(mean, one offset, last)": lambda m: bag(m, False, 1, False, None, True,
                                                           off=[0]),
    "embedding_bag(sum, padding)": lambda m: bag(m, False, 0, False, None, False, 4),
    "embedding_bag(mean, padding)": lambda m: bag(m, False, 1, False, None, False, 4),
    "embedding_bag(max, padding)": lambda m: bag(m, False, 2, False, None, False, 4),
    "embedding_bag(max, negative padding)": lambda m: bag(m, False, 2, False, None, False, -1),
    "embedding_bag(max, padding-only bag)": lambda m: bag(m, False, 2, False, None, False, 4,
                                                          idx=[4, 4, 1], off=[0, 2]),
    "embedding_bag(mean, padding, last offset)": lambda m: bag(m, False, 1, False, None, True, 4,
                                                               off=[0, 3, 8]),
    "embedding_bag(sum, per_sample_weights)": lambda m: bag(m, False, 0, False,
                                                            m.arange(8.0) / 4),
    "embedding_bag(sum, strided per_sample_weights)": lambda m: bag(
        m, False, 0, False, m.arange(16.0)[::2] / 4),
    "embedding_bag(sum, per_sample_weights, padding)": lambda m: bag(
        m, False, 0, False, m.arange(8.0), False, 4),
    "embedding_bag(sum, per_sample_weights, float64)": lambda m: bag(
        m, False, 0, False, m.arange(8.0).double(), dtype="float64"),
    "embedding_bag(sum, column-major weight)": lambda m: m.embedding_bag(
        Q(m, "emb").t().contiguous().t(), m.tensor(BAG_IDX), m.tensor(BAG_OFF)),
    "embedding_bag(sum, column slice)": lambda m: m.embedding_bag(
        Q(m, "emb")[:, :2], m.tensor(BAG_IDX), m.tensor(BAG_OFF)),
    "embedding_bag(max, row slice)": lambda m: m.embedding_bag(
        Q(m, "emb")[::2], m.tensor([0, 1, 4, 3]), m.tensor([0, 2]), False, 2),
    "embedding_bag(int32)": lambda m: m.embedding_bag(Q(m, "emb"), m.tensor(BAG_IDX).int(),
                                                      m.tensor(BAG_OFF).int(), False, 2),
    "embedding_bag(int32, padding)": lambda m: m.embedding_bag(
        Q(m, "emb"), m.tensor(BAG_IDX).int(), m.tensor(BAG_OFF).int(), False, 1, False, None,
        False, 4),
    "embedding_bag(int32 indices, int64 offsets)": lambda m: m.embedding_bag(
        Q(m, "emb"), m.tensor(BAG_IDX).int(), m.tensor(BAG_OFF), False, 1),
    "embedding_bag(int16 indices, int64 offsets)": lambda m: m.embedding_bag(
        Q(m, "emb"), m.tensor(BAG_IDX).short(), m.tensor(BAG_OFF), False, 0),
    "embedding_bag(no offsets)": lambda m: bag(m, False, 0, off=m.tensor([], dtype=m.int64)),
    "embedding_bag(mean, no offsets)": lambda m: bag(m, False, 1,
                                                     off=m.tensor([], dtype=m.int64)),
    "embedding_bag(max, no indices)": lambda m: bag(m, False, 2, idx=m.tensor([], dtype=m.int64),
                                                    off=[0, 0]),
    "embedding_bag(scale_grad_by_freq, sparse)": lambda m: bag(m, True, 2, True),
    "embedding_bag(first offset)": lambda m: bag(m, off=[1, 4]),
    "embedding_bag(last offset)": lambda m: bag(m, False, 1, off=[0, 9]),
    "embedding_bag(per_sample_weights, mean)": lambda m: bag(m, False, 1, False, m.rand(8)),
    "embedding_bag(per_sample_weights dtype)": lambda m: bag(m, False, 0, False,
                                                             m.rand(8).double()),
    "embedding_bag(per_sample_weights 2-d)": lambda m: bag(m, False, 0, False, m.rand(8, 1)),
    "embedding_bag(per_sample_weights size)": lambda m: bag(m, False, 0, False, m.rand(7)),
    "embedding_bag(include_last_offset, no offsets)": lambda m: bag(
        m, False, 1, False, None, True, off=m.tensor([], dtype=m.int64)),
    "embedding_bag(padding out of range)": lambda m: bag(m, False, 0, False, None, False, 10),
    "embedding_bag(int weight)": lambda m: bag(m, dtype="int32"),
    "embedding_bag(bfloat16 weight)": lambda m: bag(m, dtype="bfloat16"),
    "embedding_bag(float indices)": lambda m: m.embedding_bag(Q(m, "emb"), m.tensor([1.0, 2.0]),
                                                              m.tensor([0])),
    "embedding_bag(int16 indices and offsets)": lambda m: m.embedding_bag(
        Q(m, "emb"), m.tensor(BAG_IDX).short(), m.tensor(BAG_OFF).short()),
    "embedding_bag(index out of range)": lambda m: bag(m, dtype="float64", idx=[1, 11],
                                                       off=[0]),
    "embedding_bag(negative index)": lambda m: bag(m, False, 2, idx=[1, -1], off=[0]),
    "embedding_bag(1-d weight)": lambda m: m.embedding_bag(Q(m, "emb")[0], m.tensor(BAG_IDX),
                                                           m.tensor(BAG_OFF)),
    "embedding_bag(0-d indices)": lambda m: m.embedding_bag(Q(m, "emb"), m.tensor(1),
                                                            m.tensor([0]), False, 1),
    "embedding_bag(no offsets tensor)": lambda m: m.embedding_bag(Q(m, "emb"),
                                                                  m.tensor(BAG_IDX), None),
    "embedding_bag(str mode)": lambda m: bag(m, False, "sum"),
    "embedding_bag(bool mode)": lambda m: bag(m, False, True),
    "embedding_bag(int sparse)": lambda m: bag(m, False, 0, 0),
    "embedding_bag(float padding)": lambda m: bag(m, False, 0, False, None, False, 2.0),
    # torch.embedding_renorm_: rows named scaled to max_norm in place, each once
    "embedding_renorm_": lambda m: renorm(m, [1, 2, 1], 1.0, 2.0),
    "embedding_renorm_(2-d indices, p 1)": lambda m: renorm(m, [[1, 2], [3, 1]], 0.5, 1.0),
    "embedding_renorm_(int32 indices)": lambda m: renorm(m, m.tensor([5, 2, 5]).int(), 1.0, 2),
    "embedding_renorm_(negative index)": lambda m: renorm(m, [1, -1, 9], 1.0, 2.0),
    "embedding_renorm_(p inf, float64)": lambda m: renorm(m, [1, 3], 1.0, float("inf"),
                                                          dtype="float64"),
    "embedding_renorm_(p 0)": lambda m: renorm(m, [1, 3], 1.0, 0, dtype="float64"),
    "embedding_renorm_(p 3.5)": lambda m: renorm(m, [1, 3, 7], 1.0, 3.5),
    "embedding_renorm_(p -1)": lambda m: renorm(m, [1, 3], 1.0, -1, dtype="float64"),
    "embedding_renorm_(float16)": lambda m: renorm(m, [1, 3, 0], 1.0, 2.0, dtype="float16"),
    "embedding_renorm_(bfloat16)": lambda m: renorm(m, [1, 3, 0], 1.0, 2.0, dtype="bfloat16"),
    "embedding_renorm_(transposed table)": lambda m: (lambda w: (m.embedding_renorm_(
        w, m.tensor([0, 2]), 0.8, 2.0), w))(Q(m, "emb6").t()),
    "embedding_renorm_(0-d indices)": lambda m: renorm(m, m.tensor(3), 1.0, 2.0),
    "embedding_renorm_(no indices)": lambda m: renorm(m, m.tensor([], dtype=m.int64), 0.1, 2.0),
    "embedding_renorm_(no indices, int table)": lambda m: renorm(
        m, m.tensor([], dtype=m.int64), 0.1, 2.0, dtype="int32"),
    "embedding_renorm_(negative max_norm)": lambda m: renorm(m, [1, 3], -1.0, 2.0),
    "embedding_renorm_(int max_norm)": lambda m: renorm(m, [4, 8], 1, 2),
    "embedding_renorm_(1-d table)": lambda m: m.embedding_renorm_(Q(m, "emb")[0], m.tensor([1]),
                                                                  1.0, 2.0),
    "embedding_renorm_(3-d table)": lambda m: m.embedding_renorm_(
        Q(m, "emb").reshape(5, 3, 2), m.tensor([1]), 1.0, 2.0),
    "embedding_renorm_(int16 indices)": lambda m: renorm(m, m.tensor([1]).short(), 1.0, 2.0),
    "embedding_renorm_(float indices)": lambda m: renorm(m, m.tensor([1.0]), 1.0, 2.0),
    "embedding_renorm_(index out of range)": lambda m: renorm(m, [1, 12, 15], 1.0, 2.0),
    "embedding_renorm_(negative index out of range)": lambda m: renorm(m, [12, -11], 1.0, 2.0),
    "embedding_renorm_(int table)": lambda m: renorm(m, [1], 1.0, 2.0, dtype="int32"),
    "embedding_renorm_(no max_norm)": lambda m: renorm(m, [1], None, 2.0),
    "embedding_renorm_(list indices)": lambda m: m.embedding_renorm_(Q(m, "emb"), [1, 3], 1.0,
                                                                     2.0),
    # torch.segment_reduce: lengths or offsets, with and without initial
    "segment_reduce(offsets and lengths)": lambda m: seg(m, "sum", lengths=[3, 3],
                                                         offsets=[0, 2, 6]),
    "segment_reduce(axis 0 of 2-d)": lambda m: seg(m, "max", "seg34", lengths=[1, 2]),
    "segment_reduce(axis -2)": lambda m: seg(m, "prod", "seg34", lengths=[2, 1], axis=-2),
    "segment_reduce(axis 1)": lambda m: seg(m, "sum", "seg34", axis=1,
                                            lengths=[[1, 2, 1, 0], [3, 0, 0, 1], [0, 0, 0, 4]]),
    "segment_reduce(axis 1, offsets)": lambda m: seg(m, "max", "seg34", axis=1,
                                                     offsets=[[0, 1, 4], [0, 2, 4], [0, 4, 4]]),
    "segment_reduce(3-d, axis 1)": lambda m: seg(m, "mean", "seg234", axis=1,
                                                 lengths=[[1, 2], [3, 0]]),
    "segment_reduce(3-d, axis 1, initial)": lambda m: seg(m, "min", "seg234", axis=1,
                                                          lengths=[[1, 2], [3, 0]], initial=-1),
    "segment_reduce(transposed)": lambda m: m.segment_reduce(Q(m, "seg34").t(), "sum",
                                                             lengths=m.tensor([1, 3])),
    "segment_reduce(expanded)": lambda m: m.segment_reduce(
        Q(m, "seg6").expand(2, 6), "mean", lengths=m.tensor([[1, 5], [3, 3]]), axis=1),
    "segment_reduce(unsafe, short)": lambda m: seg(m, "sum", lengths=[2, 3], unsafe=True),
    "segment_reduce(one offset)": lambda m: seg(m, "max", offsets=[0]),
    "segment_reduce(empty offsets segment)": lambda m: seg(m, "mean", offsets=[0, 0]),
    "segment_reduce(int32 lengths)": lambda m: seg(m, "sum", lengths=m.tensor([2, 0, 4]).int()),
    "segment_reduce(int32 offsets)": lambda m: seg(m, "min", offsets=m.tensor([0, 2, 2, 6]).int()),
    "segment_reduce(nan)": lambda m: m.segment_reduce(m.tensor([1.0, float("nan"), 3.0, 2.0]),
                                                      "max", lengths=m.tensor([2, 2])),
    "segment_reduce(nan, min)": lambda m: m.segment_reduce(
        m.tensor([1.0, float("nan"), 3.0, 2.0]), "min", lengths=m.tensor([2, 2])),
    "segment_reduce(nan initial)": lambda m: seg(m, "mean", lengths=[6, 0], initial=float("nan")),
    "segment_reduce(0-d tensor initial)": lambda m: seg(m, "sum", lengths=[2, 0, 4],
                                                        initial=m.tensor(2.0)),
    "segment_reduce(bool initial)": lambda m: seg(m, "prod", lengths=[2, 0, 4], initial=True),
    "segment_reduce(keywords)": lambda m: m.segment_reduce(
        data=Q(m, "seg6"), reduce="sum", lengths=m.tensor([6]), axis=0, unsafe=False,
        initial=None),
    "segment_reduce(no lengths)": lambda m: seg(m, "sum"),
    "segment_reduce(indices)": lambda m: seg(m, "sum", lengths=[6], indices=[0, 0, 1, 1, 1, 2]),
    "segment_reduce(avg)": lambda m: seg(m, "avg", lengths=[6]),
    "segment_reduce(int64 data)": lambda m: m.segment_reduce(m.arange(6), "sum",
                                                             lengths=m.tensor([2, 4])),
    "segment_reduce(int16 lengths)": lambda m: seg(m, "sum", lengths=m.tensor([2, 4]).short()),
    "segment_reduce(float offsets)": lambda m: seg(m, "sum", offsets=m.tensor([0.0, 2, 6])),
    "segment_reduce(lengths sum)": lambda m: seg(m, "max", lengths=[1, 2, 2]),
    "segment_reduce(negative length)": lambda m: seg(m, "max", lengths=[1, -1, 6]),
    "segment_reduce(negative length, unsafe)": lambda m: seg(m, "sum", lengths=[3, -1, 4],
                                                             unsafe=True),
    "segment_reduce(decreasing offsets)": lambda m: seg(m, "sum", offsets=[0, 3, 2, 6]),
    "segment_reduce(axis out of range)": lambda m: seg(m, "sum", lengths=[6], axis=1),
    "segment_reduce(axis not last)": lambda m: seg(m, "sum", "seg34", lengths=[1, 3], axis=1),
    "segment_reduce(0-d lengths)": lambda m: seg(m, "sum", lengths=m.tensor(6)),
    "segment_reduce(lengths dims)": lambda m: seg(m, "sum", lengths=[[2, 4]]),
    "segment_reduce(offsets dims)": lambda m: seg(m, "sum", offsets=[[0, 2, 6]]),
    "segment_reduce(no offsets)": lambda m: seg(m, "sum", offsets=m.tensor([], dtype=m.int64)),
    "segment_reduce(empty data)": lambda m: m.segment_reduce(m.ones(0), "sum",
                                                             lengths=m.tensor([0])),
    "segment_reduce(empty lengths)": lambda m: seg(m, "sum", lengths=m.tensor([],
                                                                              dtype=m.int64)),
    "segment_reduce(initial overflow)": lambda m: seg(m, "sum", lengths=[6], initial=1e40),
    "segment_reduce(initial overflow, float16)": lambda m: seg(m, "sum", dtype="float16",
                                                               lengths=[6], initial=70000),
    "segment_reduce(initial too long)": lambda m: seg(m, "sum", lengths=[6], initial=2 ** 63),
    "segment_reduce(str initial)": lambda m: seg(m, "sum", lengths=[6], initial="a"),
    "segment_reduce(1-d tensor initial)": lambda m: seg(m, "sum", lengths=[6],
                                                        initial=m.tensor([1.0])),
    "segment_reduce(bool axis)": lambda m: seg(m, "sum", lengths=[6], axis=True),
    "segment_reduce(int unsafe)": lambda m: seg(m, "sum", lengths=[6], unsafe=1),
    "segment_reduce(list lengths)": lambda m: m.segment_reduce(Q(m, "seg6"), "sum",
                                                               lengths=[2, 4]),
    "segment_reduce(int reduce)": lambda m: seg(m, 3, lengths=[6]),
    "segment_reduce(list data)": lambda m: m.segment_reduce([1.0], "sum", lengths=m.tensor([1])),
}
for _reduce in ("sum", "mean", "max", "min", "prod"):
    for _dtype in ("float32", "float64", "float16", "bfloat16"):
        MORE[f"segment_reduce({_reduce}, {_dtype})"] = (
            lambda m, r=_reduce, d=_dtype: seg(m, r, dtype=d, lengths=[2, 0, 3, 1]))
    MORE[f"segment_reduce({_reduce}, initial)"] = (
        lambda m, r=_reduce: seg(m, r, lengths=[2, 0, 3, 1], initial=0.5))
    MORE[f"segment_reduce({_reduce}, offsets)"] = (
        lambda m, r=_reduce: seg(m, r, offsets=[1, 2, 2, 5]))
    MORE[f"segment_reduce({_reduce}, offsets, initial)"] = (
        lambda m, r=_reduce: seg(m, r, "seg34", offsets=[0, 0, 3], initial=-2))

# Errors tensord raises itself, with torch's message word for word.
MORE_SAME_MESSAGE = {
    "gradient(edge_order 3)", "gradient(edge_order 0)", "gradient(too short)",
    "gradient(too short, edge_order 2)", "gradient(uint8)", "gradient(spacing length)",
    "gradient(no spacing)", "gradient(spacing and dims lengths)",
    "gradient(spacing and dim lengths)", "gradient(dim out of range)", "gradient(dim repeated)",
    "gradient(0-d, dim)", "gradient(2-d coordinates)", "gradient(0-d coordinates)",
    "gradient(mixed spacing)", "gradient(number then tensor)", "gradient(float dim)",
    "gradient(bool edge_order)", "gradient(str spacing)", "gradient(list input)",
    "apply_(int32 overflow)", "apply_(int8 float overflow)", "apply_(uint8 negative float)",
    "apply_(int64 overflow)", "apply_(nan into int)", "apply_(None)", "apply_(str into int)",
    "apply_(complex)", "apply_(int too large for float)", "apply_(not callable)",
    "apply_(callable raises)", "map_(dtype)", "map_(int and float)", "map_(not a tensor)",
    "map2_(y dtype)", "map2_(x dtype)", "map2_(not a tensor)",
    "embedding_bag(first offset)", "embedding_bag(last offset)",
    "embedding_bag(per_sample_weights, mean)", "embedding_bag(per_sample_weights dtype)",
    "embedding_bag(per_sample_weights 2-d)", "embedding_bag(per_sample_weights size)",
    "embedding_bag(include_last_offset, no offsets)", "embedding_bag(padding out of range)",
    "embedding_bag(int weight)", "embedding_bag(bfloat16 weight)",
    "embedding_bag(float indices)", "embedding_bag(int16 indices and offsets)",
    "embedding_bag(index out of range)", "embedding_bag(negative index)",
    "embedding_bag(1-d weight)", "embedding_bag(0-d indices)",
    "embedding_bag(no offsets tensor)", "embedding_bag(str mode)", "embedding_bag(bool mode)",
    "embedding_bag(int sparse)", "embedding_bag(float padding)",
    "embedding_renorm_(1-d table)", "embedding_renorm_(3-d table)",
    "embedding_renorm_(int16 indices)", "embedding_renorm_(float indices)",
    "embedding_renorm_(index out of range)", "embedding_renorm_(negative index out of range)",
    "embedding_renorm_(int table)", "embedding_renorm_(no max_norm)",
    "embedding_renorm_(list indices)",
    "segment_reduce(no lengths)", "segment_reduce(indices)", "segment_reduce(avg)",
    "segment_reduce(int64 data)", "segment_reduce(int16 lengths)",
    "segment_reduce(float offsets)", "segment_reduce(lengths sum)",
    "segment_reduce(negative length)", "segment_reduce(negative length, unsafe)",
    "segment_reduce(decreasing offsets)", "segment_reduce(axis out of range)",
    "segment_reduce(axis not last)", "segment_reduce(0-d lengths)", "segment_reduce(lengths dims)",
    "segment_reduce(offsets dims)", "segment_reduce(no offsets)", "segment_reduce(empty data)",
    "segment_reduce(empty lengths)", "segment_reduce(initial overflow)",
    "segment_reduce(initial overflow, float16)", "segment_reduce(initial too long)",
    "segment_reduce(str initial)", "segment_reduce(1-d tensor initial)",
    "segment_reduce(bool axis)", "segment_reduce(int unsafe)", "segment_reduce(list lengths)",
    "segment_reduce(int reduce)", "segment_reduce(list data)",
}
MORE_TOL = {**TOL, torch.float16: (1e-2, 1e-2), torch.bfloat16: (2e-2, 2e-2)}


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("name", sorted(MORE))
def test_more_matches_torch(name, session):
    assert_matches_torch(MORE[name], tol=MORE_TOL)


@messages_of_113
@pytest.mark.parametrize("name", sorted(MORE_SAME_MESSAGE))
def test_more_same_error_message(name, session):
    _assert_same_error(MORE[name])


def test_more_names_are_installed(session):
    for name in ("gradient", "embedding_bag", "embedding_renorm_", "segment_reduce"):
        assert callable(getattr(tensord, name, None)), name
    for name in ("apply_", "map_", "map2_"):
        assert callable(getattr(tensord.Tensor, name, None)), name


@cpu_semantics
@pytest.mark.parametrize("call", [
    lambda t, m: t.apply_(lambda v: v + 1),
    lambda t, m: t.map_(m.ones(3), lambda a, b: a + b),
    lambda t, m: t.map2_(m.ones(3), m.ones(3), lambda a, b, c: a + b + c),
])
def test_apply_family_returns_self_in_place(call, session):
    for m in (torch, tensord):
        t = m.arange(3.0)
        assert call(t, m) is t
    got, want = tensord.arange(3.0), torch.arange(3.0)
    call(got, tensord)
    call(want, torch)
    assert torch.equal(as_torch(got), want)


@cpu_semantics
def test_apply_keeps_the_results_before_a_raise(session):
    """torch stores each result as it goes: the elements before the raising call keep theirs."""
    for m in (torch, tensord):
        t = m.arange(5.0)
        with pytest.raises(ValueError):
            t.apply_(_raise_at_3)
        got = as_torch(t) if m is tensord else t
        assert got.tolist() == [0.0, 10.0, 20.0, 3.0, 4.0]


@cpu_semantics
def test_apply_calls_in_row_major_order_of_sizes(session):
    seen = {}
    for m in (torch, tensord):
        order = []
        m.arange(6.0).reshape(2, 3).t().apply_(lambda v: order.append(v) or v)
        seen[m] = order
    assert seen[tensord] == seen[torch] == [0.0, 3.0, 1.0, 4.0, 2.0, 5.0]


@cpu_semantics
def test_apply_family_on_cuda_tensors_raises_as_torch(session, monkeypatch):
    """torch's messages for CUDA tensors (its type check first for map_/map2_, then the CPU
    one); tensord's tensors are made to report a CUDA device."""
    cuda_ids = set()
    plain = tensord.Tensor.device

    def device(self):
        return tensord.device("cuda", 0) if id(self) in cuda_ids else plain.fget(self)
    monkeypatch.setattr(tensord.Tensor, "device", property(device))
    a, b, c = tensord.ones(3), tensord.ones(3), tensord.ones(3)
    cuda_ids.update({id(a), id(b)})
    cases = [
        (lambda: a.apply_(lambda v: v), "apply_ is only implemented on CPU tensors"),
        (lambda: a.map_(b, lambda x, y: x), "map_ is only implemented on CPU tensors"),
        (lambda: a.map_(c, lambda x, y: x),
         "map_: expected torch.cuda.FloatTensor for 'other' (got torch.FloatTensor)"),
        (lambda: c.map2_(c, b, lambda x, y, z: x),
         "map2_: expected torch.FloatTensor for argument 'y' (got torch.cuda.FloatTensor)"),
        (lambda: a.map2_(b, b, lambda x, y, z: x), "map2_ is only implemented on CPU tensors"),
    ]
    for call, message in cases:
        with pytest.raises(TypeError) as info:
            call()
        assert str(info.value) == message


def test_embedding_renorm_returns_its_input(session):
    for m in (torch, tensord):
        w = Q(m, "emb")
        assert m.embedding_renorm_(w, m.tensor([0, 5]), 0.5, 2.0) is w


def test_embedding_renorm_scales_each_row_once(session):
    """A row named twice (and by a negative index) is scaled once: its norm ends at max_norm."""
    w = Q(tensord, "emb")
    tensord.embedding_renorm_(w, tensord.tensor([3, 3, -7, 0]), 0.1, 2.0)
    norms = as_torch(w).norm(dim=1)
    assert bool((torch.tensor(G["emb"]).norm(dim=1) > 0.1).all())
    torch.testing.assert_close(norms[[0, 3]], torch.full((2,), 0.1), rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(norms[[1, 2, 4]], torch.tensor(G["emb"])[[1, 2, 4]].norm(dim=1))


def test_embedding_bag_sum_is_F_embedding_bag(session):
    """torch.embedding_bag's output is what F.embedding_bag gives for the same bags."""
    out = tensord.embedding_bag(Q(tensord, "emb"), tensord.tensor(BAG_IDX),
                                tensord.tensor(BAG_OFF), False, 1)[0]
    via_f = tensord.nn.functional.embedding_bag(tensord.tensor(BAG_IDX), Q(tensord, "emb"),
                                                tensord.tensor(BAG_OFF), mode="mean")
    torch.testing.assert_close(as_torch(out), as_torch(via_f))


# ---- torch.nn.functional's public helpers ------------------------------------------------------

def test_functional_helpers_behave_as_torchs():
    import torch.nn.functional as F
    TF = tensord.nn.functional
    assert TF.DType is F.DType  # an annotation alias: int in torch 1.13
    for mod in (F, TF):
        def yes(x, flag=False):
            """the docstring"""
            return ("yes", x)

        def no(x, flag=False):
            return ("no", x)
        fn = mod.boolean_dispatch("flag", 1, False, yes, no, "mymodule", "pick")
        assert (fn(1), fn(1, True), fn(1, flag=True), fn(1, flag=0)) == (
            ("no", 1), ("yes", 1), ("yes", 1), ("no", 1))
        assert (fn.__doc__, no.__doc__, fn.__module__, fn.__name__) == (
            "the docstring", "the docstring", "mymodule", "pick")
        with pytest.raises(RuntimeError, match="only one function can have a docstring"):
            mod.boolean_dispatch("flag", 1, False, yes, no, None, None)  # both have one now
        mod.assert_int_or_pair(3, "k", "{} bad")
        mod.assert_int_or_pair((3, 4), "k", "{} bad")
        with pytest.raises(AssertionError, match="k bad"):
            mod.assert_int_or_pair((3, 4, 5), "k", "{} bad")


# ---- Tensor.resize / resize_as (deprecated, autograd's Resize) and torch.resize_as_ -----------

RESIZE_AUTOGRAD = {
    "resize(2, 3)": lambda m: m.arange(6.0).resize(2, 3),
    "resize((3, 2)): a tuple is one size": lambda m: m.arange(6.0).resize((3, 2)),
    "resize(4)": lambda m: m.arange(6.0).resize(4),
    "resize(-1, 6)": lambda m: m.arange(6.0).resize(-1, 6),
    "resize of a transposed view": lambda m: m.arange(6.0).view(2, 3).t().resize(6),
    "resize_as": lambda m: m.arange(6.0).resize_as(m.zeros(3, 2)),
    "torch.resize_as_": lambda m: m.resize_as_(m.arange(6.0), m.zeros(2, 3)),
    "torch.resize_as_ growing": lambda m: m.resize_as_(m.arange(6.0), m.zeros(2, 2))[:, :1],
}


@pytest.mark.parametrize("name", list(RESIZE_AUTOGRAD))
def test_resize_and_resize_as_match_torch(session, name):
    assert_matches_torch(RESIZE_AUTOGRAD[name])


def test_resize_shares_storage_when_contiguous_and_warns(session):
    for m in (torch, tensord):
        x = m.arange(6.0)
        with pytest.warns(UserWarning, match="non-inplace resize is deprecated"):
            y = x.resize(2, 3)
        y[0, 0] = 7
        assert x[0].item() == 7
        with pytest.warns(UserWarning, match="non-inplace resize_as is deprecated"):
            z = x.view(2, 3).t().resize_as(m.zeros(6))
        z[0] = 9
        assert x[0].item() == 7  # a copy: the view was not contiguous


# Names torch 1.13 still has but removed in 1.9: each call raises torch's RuntimeError.
REMOVED_CASES = {
    "solve": lambda m: m.solve(m.eye(2), m.eye(2)),
    "lstsq": lambda m: m.lstsq(m.eye(2), m.eye(2)),
    "eig": lambda m: m.eig(m.eye(2)),
    "matrix_rank": lambda m: m.matrix_rank(m.eye(2)),
    "Tensor.solve": lambda m: m.eye(2).solve(m.eye(2)),
    "Tensor.lstsq": lambda m: m.eye(2).lstsq(m.eye(2)),
    "Tensor.eig": lambda m: m.eye(2).eig(eigenvectors=True),
    "Tensor.matrix_rank": lambda m: m.eye(2).matrix_rank(),
}


@messages_of_113
@pytest.mark.parametrize("name", sorted(REMOVED_CASES))
def test_removed_names_raise_as_torch(name, session):
    (_, werr), (_, gerr) = outcomes(REMOVED_CASES[name])
    assert werr is not None and gerr == werr


# What torch 1.13 warns at deprecated names: the cases run in order in a fresh torch process
# and here on tensord, its warn-once keys cleared first (torch warns some once per process: the
# second qr is silent in both).
WARNING_CASES = {
    "qr": "m.qr(m.eye(3))",
    "Tensor.qr": "m.eye(3).qr()",
    "F.sigmoid(first)": "m.nn.functional.sigmoid(m.ones(2))",
    "triangular_solve": "m.triangular_solve(m.ones(3, 2), m.eye(3))",
    "chain_matmul": "m.chain_matmul(m.eye(3), m.eye(3))",
    "lu": "m.lu(m.eye(3))",
    "lu_solve": "m.lu_solve(m.ones(3, 2), *m.linalg.lu_factor(m.eye(3)))",
    "cholesky": "m.cholesky(m.eye(3))",
    "symeig": "m.symeig(m.eye(3))",
    "F.sigmoid": "m.nn.functional.sigmoid(m.ones(2))",
    "F.tanh": "m.nn.functional.tanh(m.ones(2))",
    "nn.Sigmoid": "m.nn.Sigmoid()(m.ones(2))",
    "F.upsample": "m.nn.functional.upsample(m.ones(1, 1, 2), scale_factor=2)",
    "F.upsample_nearest": "m.nn.functional.upsample_nearest(m.ones(1, 1, 2, 2), scale_factor=2)",
    "F.upsample_bilinear": "m.nn.functional.upsample_bilinear(m.ones(1, 1, 2, 2), size=3)",
    "F.mse_loss(size_average)": "m.nn.functional.mse_loss(m.ones(2), m.zeros(2), "
                                "size_average=False)",
    "F.cross_entropy(reduce)": "m.nn.functional.cross_entropy(m.ones(2, 3), m.tensor([0, 2]), "
                               "reduce=False)",
    "nn.L1Loss(size_average)": "m.nn.L1Loss(size_average=False, reduce=True)",
    "conv1d(same, even kernel)": "m.nn.functional.conv1d(m.ones(1, 1, 6), m.ones(1, 1, 4), "
                                 "padding='same')",
    "conv2d(same, odd kernel)": "m.nn.functional.conv2d(m.ones(1, 1, 4, 4), m.ones(1, 1, 3, 3), "
                                "padding='same')",
    # (tensord's compositions call scatter_reduce without torch's beta warning)
    "embedding_bag(max)": "m.nn.functional.embedding_bag(m.tensor([1, 2, 0]), m.ones(3, 2), "
                          "m.tensor([0, 2]), mode='max')",
    "scatter_(reduce=add)": "m.zeros(3).scatter_(0, m.tensor([0, 0]), m.ones(2), reduce='add')",
    "segment_reduce": "m.segment_reduce(m.ones(3), 'sum', lengths=m.tensor([1, 2]))",
    "index_reduce": "m.index_reduce(m.ones(3), 0, m.tensor([0, 0]), m.ones(2), 'prod')",
    "scatter_reduce": "m.ones(3).scatter_reduce(0, m.tensor([0, 0]), m.ones(2), 'prod')",
    "scatter_reduce(again)": "m.ones(3).scatter_reduce_(0, m.tensor([0]), m.ones(1), 'amax')",
}


def _warnings_of(m, source):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        eval(source, {"m": m})  # noqa: S307 - the test's own expressions
    return [(w.category.__name__, str(w.message).split(" (Triggered internally")[0])
            for w in caught]


def test_deprecated_names_warn_as_torch(session):
    import json  # noqa: PLC0415
    import subprocess  # noqa: PLC0415
    import sys  # noqa: PLC0415
    program = ("import json, sys, warnings, torch\n" + _WARNINGS_OF_SOURCE +
               "print(json.dumps({k: _warnings_of(torch, v) "
               "for k, v in json.loads(sys.argv[1]).items()}))")
    want = json.loads(subprocess.run([sys.executable, "-c", program, json.dumps(WARNING_CASES)],
                                     check=True, capture_output=True, text=True).stdout)
    assert want["qr"] and not want["Tensor.qr"]  # (the order matters)
    tensord._errors._warned.clear()
    for name, source in WARNING_CASES.items():
        got = [list(w) for w in _warnings_of(tensord, source)]
        assert got == want[name], name


_WARNINGS_OF_SOURCE = """
def _warnings_of(m, source):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        eval(source, {"m": m})
    return [(w.category.__name__, str(w.message).split(" (Triggered internally")[0])
            for w in caught]
"""
