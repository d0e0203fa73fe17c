"""torch.nn's layer modules against torch 1.13: convolutions (and their Lazy forms), pooling,
padding, upsampling, pixel and channel shuffles, fold/unfold, distances and embeddings. Each
module is built in torch and in tensord from the same arguments: the same repr, public
attributes and state_dict layout; given torch's weights, the same outputs (values, dtype, shape,
strides, or exception class) on batched, unbatched and non-contiguous inputs in float32 and
float64 (and float16/bfloat16 where torch's CPU kernels take them); constructor checks with
torch's exception and message; init drawn from torch's distributions.
"""
import math
import re

import pytest
import torch

import tensord
from nn_oracle import assert_module_matches, to_tensord, twin
from oracle import as_torch, assert_matches_torch, outcome


def R(m, dt, *shape, seed=0):
    """Standard normal values of `shape` in dtype `dt` (a name), the same in both namespaces."""
    t = torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    t = t.to(getattr(torch, dt))
    return t if m is torch else to_tensord(t)


def I(m, high, *shape, seed=1):
    """int64 indices in [0, high) of `shape`."""
    t = torch.randint(0, high, shape, generator=torch.Generator().manual_seed(seed))
    return t if m is torch else to_tensord(t)


def L(m, values):
    return torch.tensor(values) if m is torch else tensord.tensor(values)


def pooled(m, dt, fn, *shape, **kw):
    """(values, indices) of F.<fn>(input) with return_indices: MaxUnpool's inputs."""
    return getattr(m.nn.functional, fn)(R(m, dt, *shape), return_indices=True, **kw)


# (make(m), inputs(m, dt)); the module is moved to dt (a floating dtype's name) before the call.
CASES = {
    # ---- convolutions
    "Conv1d": (lambda m: m.nn.Conv1d(4, 6, 3, stride=2, padding=1),
               lambda m, dt: (R(m, dt, 2, 4, 9),)),
    "Conv1d(unbatched)": (lambda m: m.nn.Conv1d(4, 6, 3, dilation=2, bias=False),
                          lambda m, dt: (R(m, dt, 4, 9),)),
    "Conv1d(transposed input)": (lambda m: m.nn.Conv1d(4, 6, 2, groups=2),
                                 lambda m, dt: (R(m, dt, 2, 9, 4).transpose(1, 2),)),
    "Conv1d(same)": (lambda m: m.nn.Conv1d(4, 6, 4, padding="same"),
                     lambda m, dt: (R(m, dt, 2, 4, 7),)),
    "Conv1d(valid)": (lambda m: m.nn.Conv1d(4, 6, 4, padding="valid"),
                      lambda m, dt: (R(m, dt, 2, 4, 7),)),
    "Conv1d(circular)": (lambda m: m.nn.Conv1d(4, 6, 3, padding=2, padding_mode="circular"),
                         lambda m, dt: (R(m, dt, 2, 4, 7),)),
    "Conv1d(reflect)": (lambda m: m.nn.Conv1d(4, 6, 3, padding=1, padding_mode="reflect"),
                        lambda m, dt: (R(m, dt, 4, 7),)),
    "Conv2d": (lambda m: m.nn.Conv2d(4, 6, (3, 2), stride=(2, 1), padding=(1, 2),
                                     dilation=(1, 2), groups=2),
               lambda m, dt: (R(m, dt, 2, 4, 7, 8),)),
    "Conv2d(unbatched)": (lambda m: m.nn.Conv2d(3, 4, 3),
                          lambda m, dt: (R(m, dt, 3, 5, 6),)),
    "Conv2d(permuted input)": (lambda m: m.nn.Conv2d(3, 4, 2, stride=2, bias=False),
                               lambda m, dt: (R(m, dt, 2, 6, 5, 3).permute(0, 3, 2, 1),)),
    "Conv2d(depthwise)": (lambda m: m.nn.Conv2d(4, 8, 3, padding=1, groups=4),
                          lambda m, dt: (R(m, dt, 2, 4, 5, 5),)),
    "Conv2d(same, dilated)": (lambda m: m.nn.Conv2d(4, 6, (4, 3), padding="same",
                                                    dilation=(1, 2)),
                              lambda m, dt: (R(m, dt, 2, 4, 7, 8),)),
    "Conv2d(reflect)": (lambda m: m.nn.Conv2d(4, 6, 3, padding=(1, 2), padding_mode="reflect"),
                        lambda m, dt: (R(m, dt, 2, 4, 7, 8),)),
    "Conv2d(replicate, same)": (lambda m: m.nn.Conv2d(4, 6, 4, padding="same",
                                                      padding_mode="replicate"),
                                lambda m, dt: (R(m, dt, 4, 7, 8),)),
    "Conv2d(circular)": (lambda m: m.nn.Conv2d(4, 6, 3, padding=(1, 2), bias=False,
                                               padding_mode="circular"),
                         lambda m, dt: (R(m, dt, 2, 4, 7, 8),)),
    "Conv2d(zeros, padding list)": (lambda m: m.nn.Conv2d(2, 3, [2, 3], padding=[1, 0],
                                                          stride=[1, 2]),
                                    lambda m, dt: (R(m, dt, 2, 2, 5, 7),)),
    "Conv2d(2-d input)": (lambda m: m.nn.Conv2d(4, 6, 3), lambda m, dt: (R(m, dt, 4, 7),)),
    "Conv2d(wrong channels)": (lambda m: m.nn.Conv2d(4, 6, 3),
                               lambda m, dt: (R(m, dt, 2, 3, 7, 7),)),
    "Conv2d(input smaller than kernel)": (lambda m: m.nn.Conv2d(4, 6, 5),
                                          lambda m, dt: (R(m, dt, 1, 4, 3, 3),)),
    "Conv3d": (lambda m: m.nn.Conv3d(2, 4, (2, 3, 2), stride=(1, 2, 1), padding=1),
               lambda m, dt: (R(m, dt, 2, 2, 4, 5, 6),)),
    "Conv3d(unbatched, groups)": (lambda m: m.nn.Conv3d(4, 2, 2, groups=2, dilation=(1, 2, 1)),
                                  lambda m, dt: (R(m, dt, 4, 3, 5, 3),)),
    "Conv3d(reflect)": (lambda m: m.nn.Conv3d(2, 4, 3, padding=1, padding_mode="reflect"),
                        lambda m, dt: (R(m, dt, 2, 4, 5, 6),)),
    "Conv3d(circular)": (lambda m: m.nn.Conv3d(2, 3, 2, padding=(1, 0, 1),
                                               padding_mode="circular"),
                         lambda m, dt: (R(m, dt, 1, 2, 3, 4, 5),)),
    "Conv3d(same)": (lambda m: m.nn.Conv3d(2, 4, (2, 3, 2), padding="same"),
                     lambda m, dt: (R(m, dt, 2, 2, 4, 5, 6),)),
    "Conv3d(permuted input)": (lambda m: m.nn.Conv3d(3, 2, 2),
                               lambda m, dt: (R(m, dt, 2, 4, 3, 5, 3).permute(0, 4, 1, 2, 3),)),
    "Conv3d(4-d input, wrong channels)": (lambda m: m.nn.Conv3d(2, 4, 2),
                                          lambda m, dt: (R(m, dt, 3, 4, 4, 4),)),
    "ConvTranspose1d": (lambda m: m.nn.ConvTranspose1d(4, 6, 3, stride=2, padding=1,
                                                       output_padding=1, groups=2),
                        lambda m, dt: (R(m, dt, 2, 4, 5),)),
    "ConvTranspose1d(unbatched)": (lambda m: m.nn.ConvTranspose1d(4, 6, 3, stride=2,
                                                                  dilation=2, bias=False),
                                   lambda m, dt: (R(m, dt, 4, 5),)),
    "ConvTranspose1d(output_size)": (lambda m: m.nn.ConvTranspose1d(4, 2, 3, stride=3),
                                     lambda m, dt: (R(m, dt, 2, 4, 5), [17])),
    "ConvTranspose2d": (lambda m: m.nn.ConvTranspose2d(4, 6, (3, 2), stride=(2, 3),
                                                       padding=(1, 0), dilation=(2, 1)),
                        lambda m, dt: (R(m, dt, 2, 4, 5, 4),)),
    "ConvTranspose2d(output_size)": (lambda m: m.nn.ConvTranspose2d(4, 6, 3, stride=2),
                                     lambda m, dt: (R(m, dt, 2, 4, 5, 4), [12, 10])),
    "ConvTranspose2d(output_size with N, C)": (
        lambda m: m.nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1),
        lambda m, dt: (R(m, dt, 2, 4, 5, 4), [2, 6, 10, 8])),
    "ConvTranspose2d(transposed input)": (lambda m: m.nn.ConvTranspose2d(3, 2, 2, stride=2),
                                          lambda m, dt: (R(m, dt, 2, 5, 4, 3).transpose(1, 3),)),
    "ConvTranspose2d(output_size out of range)": (
        lambda m: m.nn.ConvTranspose2d(4, 6, 3, stride=2),
        lambda m, dt: (R(m, dt, 2, 4, 5, 5), [20, 20])),
    "ConvTranspose2d(output_size of 3)": (lambda m: m.nn.ConvTranspose2d(4, 6, 3, stride=2),
                                          lambda m, dt: (R(m, dt, 2, 4, 5, 5), [11, 11, 11])),
    "ConvTranspose2d(output_padding not below stride)": (
        lambda m: m.nn.ConvTranspose2d(4, 6, 3, output_padding=1),
        lambda m, dt: (R(m, dt, 2, 4, 5, 5),)),
    "ConvTranspose2d(wrong channels)": (lambda m: m.nn.ConvTranspose2d(4, 6, 3),
                                        lambda m, dt: (R(m, dt, 2, 6, 5, 5),)),
    "ConvTranspose3d": (lambda m: m.nn.ConvTranspose3d(2, 4, 2, stride=2, output_padding=1),
                        lambda m, dt: (R(m, dt, 2, 2, 3, 3, 2),)),
    "ConvTranspose3d(unbatched, output_size)": (
        lambda m: m.nn.ConvTranspose3d(2, 4, 2, stride=2, groups=2),
        lambda m, dt: (R(m, dt, 2, 3, 3, 2), [4, 7, 7, 5])),
    # ---- pooling
    "MaxPool1d": (lambda m: m.nn.MaxPool1d(3, 2, 1, return_indices=True, ceil_mode=True),
                  lambda m, dt: (R(m, dt, 2, 3, 10),)),
    "MaxPool1d(unbatched, dilation)": (lambda m: m.nn.MaxPool1d(3, dilation=2),
                                       lambda m, dt: (R(m, dt, 3, 10),)),
    "MaxPool1d(4-d input)": (lambda m: m.nn.MaxPool1d(2), lambda m, dt: (R(m, dt, 1, 2, 3, 4),)),
    "MaxPool2d": (lambda m: m.nn.MaxPool2d((3, 2), (2, 1), (1, 1), dilation=(1, 2),
                                           return_indices=True),
                  lambda m, dt: (R(m, dt, 2, 3, 9, 8),)),
    "MaxPool2d(unbatched, ceil)": (lambda m: m.nn.MaxPool2d(3, 2, ceil_mode=True),
                                   lambda m, dt: (R(m, dt, 3, 8, 8),)),
    "MaxPool2d(transposed input)": (lambda m: m.nn.MaxPool2d(2, return_indices=True),
                                    lambda m, dt: (R(m, dt, 2, 6, 4, 3).transpose(1, 3),)),
    "MaxPool2d(padding over half the kernel)": (lambda m: m.nn.MaxPool2d(2, padding=2),
                                                lambda m, dt: (R(m, dt, 1, 2, 6, 6),)),
    "MaxPool2d(2-d input)": (lambda m: m.nn.MaxPool2d(2), lambda m, dt: (R(m, dt, 6, 6),)),
    "MaxPool3d(3-d input)": (lambda m: m.nn.MaxPool3d(2), lambda m, dt: (R(m, dt, 2, 4, 4),)),
    "MaxPool3d": (lambda m: m.nn.MaxPool3d(2, return_indices=True),
                  lambda m, dt: (R(m, dt, 2, 2, 4, 5, 6),)),
    "MaxPool3d(unbatched, padding, ceil)": (lambda m: m.nn.MaxPool3d(3, 2, 1, ceil_mode=True),
                                            lambda m, dt: (R(m, dt, 2, 5, 5, 6),)),
    "AvgPool1d": (lambda m: m.nn.AvgPool1d(3, 2, 1, ceil_mode=True, count_include_pad=False),
                  lambda m, dt: (R(m, dt, 2, 3, 10),)),
    "AvgPool1d(unbatched)": (lambda m: m.nn.AvgPool1d(4, padding=2),
                             lambda m, dt: (R(m, dt, 3, 10),)),
    "AvgPool1d(4-d input)": (lambda m: m.nn.AvgPool1d(2), lambda m, dt: (R(m, dt, 1, 2, 3, 4),)),
    "AvgPool2d": (lambda m: m.nn.AvgPool2d((3, 2), (2, 1), (1, 1), divisor_override=5),
                  lambda m, dt: (R(m, dt, 2, 3, 9, 8),)),
    "AvgPool2d(unbatched, ceil, exclude pad)": (
        lambda m: m.nn.AvgPool2d(3, ceil_mode=True, count_include_pad=False, padding=1),
        lambda m, dt: (R(m, dt, 3, 9, 8),)),
    "AvgPool2d(permuted input)": (lambda m: m.nn.AvgPool2d(2),
                                  lambda m, dt: (R(m, dt, 2, 6, 4, 3).permute(0, 3, 1, 2),)),
    "AvgPool2d(window beyond the input)": (lambda m: m.nn.AvgPool2d(5),
                                           lambda m, dt: (R(m, dt, 1, 2, 3, 3),)),
    "AvgPool3d": (lambda m: m.nn.AvgPool3d(2, 1, 1, count_include_pad=False),
                  lambda m, dt: (R(m, dt, 2, 2, 4, 5, 6),)),
    "AvgPool3d(unbatched, divisor)": (lambda m: m.nn.AvgPool3d(2, divisor_override=3),
                                      lambda m, dt: (R(m, dt, 2, 4, 5, 6),)),
    "AdaptiveAvgPool1d": (lambda m: m.nn.AdaptiveAvgPool1d(4),
                          lambda m, dt: (R(m, dt, 2, 3, 10),)),
    "AdaptiveAvgPool1d(unbatched)": (lambda m: m.nn.AdaptiveAvgPool1d(3),
                                     lambda m, dt: (R(m, dt, 3, 7),)),
    "AdaptiveAvgPool2d": (lambda m: m.nn.AdaptiveAvgPool2d((3, None)),
                          lambda m, dt: (R(m, dt, 2, 3, 10, 7),)),
    "AdaptiveAvgPool2d(unbatched, transposed)": (
        lambda m: m.nn.AdaptiveAvgPool2d(4),
        lambda m, dt: (R(m, dt, 7, 9, 3).transpose(0, 2),)),
    "AdaptiveAvgPool3d": (lambda m: m.nn.AdaptiveAvgPool3d((2, 3, 4)),
                          lambda m, dt: (R(m, dt, 2, 3, 5, 7, 9),)),
    "AdaptiveAvgPool3d(unbatched)": (lambda m: m.nn.AdaptiveAvgPool3d((None, 2, 3)),
                                     lambda m, dt: (R(m, dt, 3, 5, 7, 9),)),
    "AdaptiveAvgPool2d(2-d input)": (lambda m: m.nn.AdaptiveAvgPool2d(2),
                                     lambda m, dt: (R(m, dt, 4, 5),)),
    "AdaptiveMaxPool1d": (lambda m: m.nn.AdaptiveMaxPool1d(4, return_indices=True),
                          lambda m, dt: (R(m, dt, 2, 3, 10),)),
    "AdaptiveMaxPool2d": (lambda m: m.nn.AdaptiveMaxPool2d((None, 3)),
                          lambda m, dt: (R(m, dt, 3, 10, 7),)),
    "AdaptiveMaxPool2d(indices)": (lambda m: m.nn.AdaptiveMaxPool2d(3, True),
                                   lambda m, dt: (R(m, dt, 2, 3, 10, 7),)),
    "AdaptiveMaxPool3d": (lambda m: m.nn.AdaptiveMaxPool3d((2, 3, 4), True),
                          lambda m, dt: (R(m, dt, 2, 3, 5, 7, 9),)),
    "LPPool1d": (lambda m: m.nn.LPPool1d(2, 3, 2), lambda m, dt: (R(m, dt, 2, 3, 10),)),
    "LPPool1d(unbatched, ceil)": (lambda m: m.nn.LPPool1d(3, 2, ceil_mode=True),
                                  lambda m, dt: (R(m, dt, 3, 9).abs(),)),
    "LPPool2d": (lambda m: m.nn.LPPool2d(3, (2, 3), ceil_mode=True),
                 lambda m, dt: (R(m, dt, 2, 3, 9, 8).abs(),)),
    "LPPool2d(fractional p, stride)": (lambda m: m.nn.LPPool2d(1.5, 2, stride=1),
                                       lambda m, dt: (R(m, dt, 3, 6, 6).abs(),)),
    "MaxUnpool1d": (lambda m: m.nn.MaxUnpool1d(2),
                    lambda m, dt: pooled(m, dt, "max_pool1d", 2, 3, 10, kernel_size=2)),
    "MaxUnpool1d(output_size)": (lambda m: m.nn.MaxUnpool1d(3, 2, 1),
                                 lambda m, dt: (*pooled(m, dt, "max_pool1d", 2, 3, 10,
                                                        kernel_size=3, stride=2, padding=1),
                                                [10])),
    "MaxUnpool2d": (lambda m: m.nn.MaxUnpool2d(2, 2),
                    lambda m, dt: (*pooled(m, dt, "max_pool2d", 2, 3, 9, 8, kernel_size=2),
                                   [9, 8])),
    "MaxUnpool2d(unbatched)": (lambda m: m.nn.MaxUnpool2d((2, 3)),
                               lambda m, dt: pooled(m, dt, "max_pool2d", 3, 4, 6,
                                                    kernel_size=(2, 3))),
    "MaxUnpool2d(bad output_size)": (lambda m: m.nn.MaxUnpool2d(2),
                                     lambda m, dt: (*pooled(m, dt, "max_pool2d", 2, 3, 8, 8,
                                                            kernel_size=2), [12, 12])),
    "MaxUnpool3d": (lambda m: m.nn.MaxUnpool3d(2),
                    lambda m, dt: pooled(m, dt, "max_pool3d", 2, 2, 4, 4, 6, kernel_size=2)),
    # ---- padding
    "ConstantPad1d": (lambda m: m.nn.ConstantPad1d((2, 1), 3.5),
                      lambda m, dt: (R(m, dt, 2, 3, 4),)),
    "ConstantPad1d(negative)": (lambda m: m.nn.ConstantPad1d((-1, 2), 1),
                                lambda m, dt: (R(m, dt, 3, 4),)),
    "ConstantPad2d": (lambda m: m.nn.ConstantPad2d(2, -1.0),
                      lambda m, dt: (R(m, dt, 3, 4, 5),)),
    "ConstantPad2d(transposed input)": (lambda m: m.nn.ConstantPad2d((1, 0, 0, 2), 0.5),
                                        lambda m, dt: (R(m, dt, 2, 5, 4, 3).transpose(1, 3),)),
    "ConstantPad3d": (lambda m: m.nn.ConstantPad3d((1, 0, 2, 1, 0, 1), 2),
                      lambda m, dt: (R(m, dt, 2, 3, 4, 5, 2),)),
    "ZeroPad2d": (lambda m: m.nn.ZeroPad2d((1, 2, 0, 3)), lambda m, dt: (R(m, dt, 3, 4, 5),)),
    "ZeroPad2d(int)": (lambda m: m.nn.ZeroPad2d(1), lambda m, dt: (R(m, dt, 2, 3, 4, 5),)),
    "ReflectionPad1d": (lambda m: m.nn.ReflectionPad1d((2, 1)),
                        lambda m, dt: (R(m, dt, 2, 3, 4),)),
    "ReflectionPad1d(too wide)": (lambda m: m.nn.ReflectionPad1d(4),
                                  lambda m, dt: (R(m, dt, 2, 3, 4),)),
    "ReflectionPad2d": (lambda m: m.nn.ReflectionPad2d(2), lambda m, dt: (R(m, dt, 3, 4, 5),)),
    "ReflectionPad2d(permuted input)": (lambda m: m.nn.ReflectionPad2d((1, 0, 2, 1)),
                                        lambda m, dt: (R(m, dt, 2, 5, 4, 3).permute(0, 3, 2, 1),)),
    "ReflectionPad3d": (lambda m: m.nn.ReflectionPad3d((1, 0, 2, 1, 0, 1)),
                        lambda m, dt: (R(m, dt, 2, 3, 4, 5, 2),)),
    "ReflectionPad3d(3-d input)": (lambda m: m.nn.ReflectionPad3d(1),
                                   lambda m, dt: (R(m, dt, 3, 4, 5),)),
    "ReplicationPad1d": (lambda m: m.nn.ReplicationPad1d((2, 1)),
                         lambda m, dt: (R(m, dt, 2, 3, 4),)),
    "ReplicationPad2d": (lambda m: m.nn.ReplicationPad2d(2), lambda m, dt: (R(m, dt, 3, 4, 5),)),
    "ReplicationPad3d": (lambda m: m.nn.ReplicationPad3d((1, 0, 2, 1, 0, 3)),
                         lambda m, dt: (R(m, dt, 2, 3, 4, 5, 2),)),
    "ReplicationPad2d(1-d input)": (lambda m: m.nn.ReplicationPad2d(1),
                                    lambda m, dt: (R(m, dt, 5),)),
    # ---- upsampling
    "ConstantPad3d(more padding than dims)": (lambda m: m.nn.ConstantPad3d(1, 0.0),
                                              lambda m, dt: (R(m, dt, 4, 5),)),
    "Upsample(nearest)": (lambda m: m.nn.Upsample(scale_factor=2),
                          lambda m, dt: (R(m, dt, 2, 3, 4, 5),)),
    "Upsample(nearest, 1-d)": (lambda m: m.nn.Upsample(size=7),
                               lambda m, dt: (R(m, dt, 2, 3, 4),)),
    "Upsample(linear)": (lambda m: m.nn.Upsample(size=7, mode="linear"),
                         lambda m, dt: (R(m, dt, 2, 3, 4),)),
    "Upsample(bilinear, align_corners)": (
        lambda m: m.nn.Upsample(scale_factor=(1.5, 2.0), mode="bilinear", align_corners=True),
        lambda m, dt: (R(m, dt, 2, 3, 4, 5),)),
    "Upsample(bilinear, transposed input)": (
        lambda m: m.nn.Upsample(size=(6, 7), mode="bilinear"),
        lambda m, dt: (R(m, dt, 2, 5, 4, 3).transpose(1, 3),)),
    "Upsample(trilinear, recompute)": (
        lambda m: m.nn.Upsample(scale_factor=1.7, mode="trilinear", recompute_scale_factor=True),
        lambda m, dt: (R(m, dt, 2, 3, 4, 5, 3),)),
    "Upsample(nearest-exact)": (lambda m: m.nn.Upsample(size=(5, 9), mode="nearest-exact"),
                                lambda m, dt: (R(m, dt, 2, 3, 4, 5),)),
    "Upsample(area)": (lambda m: m.nn.Upsample(size=(2, 3), mode="area"),
                       lambda m, dt: (R(m, dt, 2, 3, 4, 5),)),
    "Upsample(bilinear on 3-d)": (lambda m: m.nn.Upsample(scale_factor=2, mode="bilinear"),
                                  lambda m, dt: (R(m, dt, 2, 3, 4),)),
    "Upsample(neither size nor scale)": (lambda m: m.nn.Upsample(),
                                         lambda m, dt: (R(m, dt, 2, 3, 4),)),
    "Upsample(align_corners with nearest)": (
        lambda m: m.nn.Upsample(scale_factor=2, align_corners=True),
        lambda m, dt: (R(m, dt, 2, 3, 4),)),
    "UpsamplingNearest2d": (lambda m: m.nn.UpsamplingNearest2d(scale_factor=3),
                            lambda m, dt: (R(m, dt, 2, 3, 4, 5),)),
    "UpsamplingBilinear2d": (lambda m: m.nn.UpsamplingBilinear2d(size=(7, 9)),
                             lambda m, dt: (R(m, dt, 2, 3, 4, 5),)),
    # ---- shuffles, fold, distances
    "PixelShuffle": (lambda m: m.nn.PixelShuffle(2), lambda m, dt: (R(m, dt, 2, 8, 3, 4),)),
    "PixelShuffle(unbatched)": (lambda m: m.nn.PixelShuffle(3), lambda m, dt: (R(m, dt, 9, 3, 4),)),
    "PixelShuffle(5-d)": (lambda m: m.nn.PixelShuffle(2), lambda m, dt: (R(m, dt, 2, 2, 4, 3, 2),)),
    "PixelShuffle(channels not divisible)": (lambda m: m.nn.PixelShuffle(2),
                                             lambda m, dt: (R(m, dt, 2, 6, 3, 4),)),
    "PixelUnshuffle": (lambda m: m.nn.PixelUnshuffle(2), lambda m, dt: (R(m, dt, 2, 2, 4, 6),)),
    "PixelUnshuffle(transposed input)": (lambda m: m.nn.PixelUnshuffle(3),
                                         lambda m, dt: (R(m, dt, 6, 3, 9).transpose(0, 2),)),
    "ChannelShuffle": (lambda m: m.nn.ChannelShuffle(3), lambda m, dt: (R(m, dt, 2, 6, 3, 4),)),
    "ChannelShuffle(groups not dividing)": (lambda m: m.nn.ChannelShuffle(4),
                                            lambda m, dt: (R(m, dt, 2, 6, 3),)),
    "PixelUnshuffle(size not divisible)": (lambda m: m.nn.PixelUnshuffle(2),
                                           lambda m, dt: (R(m, dt, 2, 2, 5, 6),)),
    "ChannelShuffle(3-d)": (lambda m: m.nn.ChannelShuffle(2), lambda m, dt: (R(m, dt, 2, 4, 3),)),
    "Fold": (lambda m: m.nn.Fold((4, 5), (2, 2)), lambda m, dt: (R(m, dt, 2, 12, 12),)),
    "Fold(unbatched, options)": (lambda m: m.nn.Fold((5, 6), 2, dilation=(1, 2), padding=1,
                                                     stride=(2, 1)),
                                 lambda m, dt: (R(m, dt, 8, 15),)),
    "Fold(wrong block count)": (lambda m: m.nn.Fold((4, 5), 2),
                                lambda m, dt: (R(m, dt, 2, 12, 11),)),
    "Unfold": (lambda m: m.nn.Unfold((2, 3), dilation=(1, 2), padding=1, stride=(2, 1)),
               lambda m, dt: (R(m, dt, 2, 3, 5, 6),)),
    "Unfold(unbatched, transposed)": (lambda m: m.nn.Unfold(2),
                                      lambda m, dt: (R(m, dt, 6, 5, 3).transpose(0, 2),)),
    "Unfold(5-d input)": (lambda m: m.nn.Unfold(2), lambda m, dt: (R(m, dt, 1, 2, 3, 4, 5),)),
    "PairwiseDistance": (lambda m: m.nn.PairwiseDistance(),
                         lambda m, dt: (R(m, dt, 4, 5), R(m, dt, 4, 5, seed=2))),
    "PairwiseDistance(p=1, keepdim, broadcast)": (
        lambda m: m.nn.PairwiseDistance(p=1.0, eps=1e-3, keepdim=True),
        lambda m, dt: (R(m, dt, 4, 5), R(m, dt, 1, 5, seed=2))),
    "PairwiseDistance(inf, 1-d)": (lambda m: m.nn.PairwiseDistance(p=float("inf")),
                                   lambda m, dt: (R(m, dt, 5), R(m, dt, 5, seed=2))),
    "PairwiseDistance(transposed)": (lambda m: m.nn.PairwiseDistance(p=3),
                                     lambda m, dt: (R(m, dt, 5, 4).t(), R(m, dt, 4, 5, seed=2))),
    "PairwiseDistance(shapes differ)": (lambda m: m.nn.PairwiseDistance(),
                                        lambda m, dt: (R(m, dt, 4, 5), R(m, dt, 3, 5, seed=2))),
    "CosineSimilarity": (lambda m: m.nn.CosineSimilarity(),
                         lambda m, dt: (R(m, dt, 4, 5), R(m, dt, 4, 5, seed=2))),
    "CosineSimilarity(dim 0, broadcast)": (lambda m: m.nn.CosineSimilarity(dim=0, eps=1e-3),
                                           lambda m, dt: (R(m, dt, 4, 5), R(m, dt, 4, 1, seed=2))),
    "CosineSimilarity(dim -1, 3-d)": (lambda m: m.nn.CosineSimilarity(dim=-1),
                                      lambda m, dt: (R(m, dt, 2, 3, 4),
                                                     R(m, dt, 2, 4, 3, seed=2).transpose(1, 2))),
    # ---- embeddings
    "CosineSimilarity(shapes differ)": (lambda m: m.nn.CosineSimilarity(),
                                        lambda m, dt: (R(m, dt, 4, 5), R(m, dt, 4, 3, seed=2))),
    "Embedding": (lambda m: m.nn.Embedding(10, 3), lambda m, dt: (I(m, 10, 2, 4),)),
    "Embedding(padding_idx negative)": (lambda m: m.nn.Embedding(10, 3, padding_idx=-2),
                                        lambda m, dt: (I(m, 10, 2, 4),)),
    "Embedding(max_norm)": (lambda m: m.nn.Embedding(10, 3, max_norm=1.0, norm_type=1.5),
                            lambda m, dt: (I(m, 10, 2, 4),)),
    "Embedding(sparse, scale_grad_by_freq)": (
        lambda m: m.nn.Embedding(10, 3, padding_idx=3, sparse=True, scale_grad_by_freq=True),
        lambda m, dt: (I(m, 10, 7),)),
    "Embedding(0-d index)": (lambda m: m.nn.Embedding(10, 3), lambda m, dt: (L(m, 4),)),
    "Embedding(float index)": (lambda m: m.nn.Embedding(10, 3), lambda m, dt: (R(m, dt, 3),)),
    "EmbeddingBag": (lambda m: m.nn.EmbeddingBag(10, 3), lambda m, dt: (I(m, 10, 3, 4),)),
    "EmbeddingBag(sum, offsets, empty bag)": (
        lambda m: m.nn.EmbeddingBag(10, 3, mode="sum"),
        lambda m, dt: (I(m, 10, 8), L(m, [0, 2, 2, 5]))),
    "EmbeddingBag(per_sample_weights)": (
        lambda m: m.nn.EmbeddingBag(10, 3, mode="sum"),
        lambda m, dt: (I(m, 10, 8), L(m, [0, 2, 2, 5]), R(m, dt, 8))),
    "EmbeddingBag(max, include_last_offset)": (
        lambda m: m.nn.EmbeddingBag(10, 3, mode="max", include_last_offset=True),
        lambda m, dt: (I(m, 10, 8), L(m, [0, 2, 5, 8]))),
    "EmbeddingBag(padding_idx, max_norm)": (
        lambda m: m.nn.EmbeddingBag(10, 3, padding_idx=2, max_norm=1.0, norm_type=3),
        lambda m, dt: (I(m, 10, 3, 4),)),
    "EmbeddingBag(per_sample_weights in mean)": (
        lambda m: m.nn.EmbeddingBag(10, 3),
        lambda m, dt: (I(m, 10, 8), L(m, [0, 2, 2, 5]), R(m, dt, 8))),
    "EmbeddingBag(1-d without offsets)": (lambda m: m.nn.EmbeddingBag(10, 3),
                                          lambda m, dt: (I(m, 10, 8),)),
    "EmbeddingBag(2-d with offsets)": (lambda m: m.nn.EmbeddingBag(10, 3),
                                       lambda m, dt: (I(m, 10, 2, 4), L(m, [0, 1]))),
    "EmbeddingBag(bad mode)": (lambda m: m.nn.EmbeddingBag(10, 3, mode="min"),
                               lambda m, dt: (I(m, 10, 2, 4),)),
}

TOL = {"float32": 1e-4, "float64": 1e-10, "float16": 1e-2, "bfloat16": 3e-2}


def _public(module):
    """A module's own attributes (not torch's bookkeeping: training and the underscored)."""
    return {k: v for k, v in vars(module).items() if not k.startswith("_") and k != "training"}


@pytest.mark.parametrize("dt", ["float32", "float64"])
@pytest.mark.parametrize("name", CASES)
def test_module_matches_torch(name, dt, session):
    make, inputs = CASES[name]
    tm, dm = assert_module_matches(lambda m: make(m).to(getattr(m, dt)),
                                   lambda m: inputs(m, dt), tol=TOL[dt])
    assert _public(dm) == _public(tm)
    if hasattr(tm, "_reversed_padding_repeated_twice"):
        assert dm._reversed_padding_repeated_twice == tm._reversed_padding_repeated_twice


# torch 1.13's CPU kernels in half precision: where torch computes, tensord must match it;
# where torch raises (float16 convolutions, pools and resampling), tensord raises the same class.
LOW_PRECISION = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose3d", "MaxPool1d",
                 "MaxPool2d", "MaxPool3d", "AvgPool2d", "AvgPool3d", "AdaptiveAvgPool2d",
                 "AdaptiveAvgPool3d", "AdaptiveMaxPool2d(indices)", "AdaptiveMaxPool3d",
                 "LPPool1d", "ConstantPad2d", "ReflectionPad2d", "ReplicationPad3d",
                 "Upsample(nearest)", "Upsample(bilinear, align_corners)",
                 "Upsample(trilinear, recompute)", "PixelShuffle", "PixelUnshuffle",
                 "ChannelShuffle", "PairwiseDistance", "CosineSimilarity", "Embedding",
                 "EmbeddingBag(sum, offsets, empty bag)"]


@pytest.mark.parametrize("dt", ["float16", "bfloat16"])
@pytest.mark.parametrize("name", LOW_PRECISION)
def test_module_matches_torch_in_half_precision(name, dt, session):
    make, inputs = CASES[name]
    assert_module_matches(lambda m: make(m).to(getattr(m, dt)), lambda m: inputs(m, dt),
                          tol=TOL[dt])


@pytest.mark.parametrize("name", ["Conv2d(permuted input)", "MaxPool2d", "AvgPool2d",
                                  "Upsample(nearest)", "ReflectionPad2d(permuted input)"])
def test_channels_last_inputs(name, session):
    """Channels-last inputs: torch's values and its channels-last output strides."""
    make, inputs = CASES[name]
    assert_module_matches(make, lambda m: tuple(x.contiguous(memory_format=m.channels_last)
                                                for x in inputs(m, "float32")),
                          tol=1e-4)


@pytest.mark.parametrize("make", [
    lambda m: m.nn.Conv2d(4, 6, 3, groups=0),
    lambda m: m.nn.Conv2d(5, 6, 3, groups=2),
    lambda m: m.nn.Conv1d(4, 5, 3, groups=2),
    lambda m: m.nn.Conv2d(4, 6, 3, padding="full"),
    lambda m: m.nn.Conv3d(4, 6, 3, padding="same", stride=2),
    lambda m: m.nn.Conv2d(4, 6, 3, padding_mode="mirror"),
    lambda m: m.nn.ConvTranspose2d(4, 6, 3, padding_mode="reflect"),
    lambda m: m.nn.ConvTranspose1d(4, 6, 3, groups=4),
    lambda m: m.nn.LazyConv2d(6, 3, padding="same", stride=(1, 2)),
    lambda m: m.nn.LazyConvTranspose3d(6, 3, padding_mode="circular"),
    lambda m: m.nn.Embedding(10, 3, padding_idx=10),
    lambda m: m.nn.Embedding(10, 3, padding_idx=-11),
    lambda m: m.nn.Embedding(10, 3, _weight=m.zeros(3, 3)),
    lambda m: m.nn.Embedding.from_pretrained(m.zeros(3)),
    lambda m: m.nn.EmbeddingBag(10, 3, padding_idx=12),
    lambda m: m.nn.EmbeddingBag(10, 3, padding_idx=-11),
    lambda m: m.nn.EmbeddingBag.from_pretrained(m.zeros(2, 2, 2)),
], ids=["groups=0", "in_channels/groups", "out_channels/groups", "padding string",
        "same with stride", "padding_mode", "transposed padding_mode", "transposed groups",
        "lazy same with stride", "lazy transposed padding_mode", "padding_idx too big",
        "padding_idx too small", "_weight shape", "from_pretrained 1-d", "bag padding_idx",
        "bag padding_idx negative", "bag from_pretrained 3-d"])
def test_constructor_checks_raise_as_torch(make, session):
    _, werr = outcome(lambda: make(torch))
    _, gerr = outcome(lambda: make(tensord))
    assert werr is not None
    assert _unordered_sets(gerr) == _unordered_sets(werr)


def _unordered_sets(error):
    """(class, message) with each set of strings the message prints ({'zeros', ...}) sorted:
    a set's order depends on the hash seed of the process that compiled its literal."""
    def sort(match):
        return "{" + ", ".join(sorted(match.group(1).split(", "))) + "}"
    return error[0], re.sub(r"\{('[^']*'(?:, '[^']*')*)\}", sort, error[1])


def _lazy_cases():
    return {
        "LazyConv1d": (lambda m: m.nn.LazyConv1d(6, 3), (2, 4, 9)),
        "LazyConv1d(unbatched, same)": (lambda m: m.nn.LazyConv1d(4, 4, padding="same"),
                                        (3, 9)),
        "LazyConv2d": (lambda m: m.nn.LazyConv2d(6, 3, padding=1, groups=2,
                                                 padding_mode="reflect"), (2, 4, 7, 8)),
        "LazyConv3d(unbatched, no bias)": (lambda m: m.nn.LazyConv3d(4, 2, bias=False),
                                           (3, 4, 5, 3)),
        "LazyConvTranspose1d(unbatched)": (lambda m: m.nn.LazyConvTranspose1d(6, 3, stride=2),
                                           (4, 9)),
        "LazyConvTranspose2d": (lambda m: m.nn.LazyConvTranspose2d(6, 3, groups=2,
                                                                   output_padding=1, stride=2),
                                (2, 4, 5, 6)),
        "LazyConvTranspose3d": (lambda m: m.nn.LazyConvTranspose3d(4, 2, dilation=2),
                                (2, 2, 3, 3, 3)),
    }


LAZY = _lazy_cases()


@pytest.mark.filterwarnings("ignore:Lazy modules")
@pytest.mark.parametrize("name", LAZY)
def test_lazy_conv_takes_its_shapes_from_the_first_input(name, session):
    make, shape = LAZY[name]
    tm, dm = make(torch), make(tensord)
    assert repr(dm) == repr(tm)
    assert dm.has_uninitialized_params()
    with torch.no_grad(), tensord.no_grad():
        tm(R(torch, "float32", *shape))
    out = dm(R(tensord, "float32", *shape))
    assert type(dm).__name__ == type(tm).__name__ == name.split("(")[0][4:]
    assert not any(isinstance(p, tensord.nn.UninitializedParameter) for p in dm.parameters())
    assert repr(dm) == repr(tm)
    assert dm.in_channels == tm.in_channels == shape[-len(tm.kernel_size) - 1]
    for key, w in tm.state_dict().items():
        assert tuple(dm.state_dict()[key].shape) == tuple(w.shape), key
    _assert_uniform(dm.weight, 1 / math.sqrt(tm.weight[0].numel()), spread=False)
    with torch.no_grad(), tensord.no_grad():
        want = tm(R(torch, "float32", *shape))
    assert tuple(out.shape) == tuple(want.shape)
    dm.load_state_dict({k: to_tensord(v) for k, v in tm.state_dict().items()})
    assert_matches_torch(lambda m: (tm if m is torch else dm)(R(m, "float32", *shape)), 1e-4)


@pytest.mark.filterwarnings("ignore:Lazy modules")
@pytest.mark.parametrize("make, shape", [
    (lambda m: m.nn.LazyConv2d(6, 3), (4, 7)),
    (lambda m: m.nn.LazyConv2d(6, 3, groups=3), (2, 4, 7, 7)),
    (lambda m: m.nn.LazyConvTranspose1d(6, 3), (1, 2, 4, 7)),
], ids=["rank", "groups", "transposed rank"])
def test_lazy_conv_checks_its_first_input(make, shape, session):
    def call(m):
        with torch.no_grad(), tensord.no_grad():
            return make(m)(R(m, "float32", *shape))
    _, werr = outcome(lambda: call(torch))
    _, gerr = outcome(lambda: call(tensord))
    assert werr is not None
    assert gerr == werr


def _assert_uniform(w, bound, spread=True):
    """w's values lie in [-bound, bound]; with spread, they cover it as a uniform draw would
    (extremes near the ends, mean near 0, std near bound / √3)."""
    v = as_torch(w).double().flatten()
    assert v.abs().max() <= bound * (1 + 1e-6)
    assert v.unique().numel() > v.numel() // 2
    if spread:
        n = v.numel()
        assert v.max() > bound * (1 - 20 / n) and v.min() < -bound * (1 - 20 / n)
        assert abs(v.mean()) < 5 * bound / math.sqrt(3 * n)
        assert abs(v.std() / (bound / math.sqrt(3)) - 1) < 0.08


@pytest.mark.parametrize("make, fan_in", [
    (lambda m: m.nn.Conv1d(16, 32, 5), 80),
    (lambda m: m.nn.Conv2d(16, 32, 3), 144),
    (lambda m: m.nn.Conv2d(16, 32, (3, 2), groups=4), 24),
    (lambda m: m.nn.Conv3d(8, 16, 3), 216),
    (lambda m: m.nn.ConvTranspose1d(16, 32, 5), 160),
    (lambda m: m.nn.ConvTranspose2d(16, 32, 3, groups=2), 144),
    (lambda m: m.nn.ConvTranspose3d(8, 16, 3, dtype=m.float64), 432),
], ids=["Conv1d", "Conv2d", "Conv2d(groups)", "Conv3d", "ConvTranspose1d",
        "ConvTranspose2d(groups)", "ConvTranspose3d(float64)"])
def test_conv_init_is_torchs_kaiming_uniform(make, fan_in, session):
    """weight and bias drawn from U(-1/√fan_in, 1/√fan_in), fan_in = weight.size(1) times the
    kernel's size (torch's reset_parameters); dtype= as torch's."""
    tm, dm = make(torch), make(tensord)
    assert str(dm.weight.dtype) == str(tm.weight.dtype)
    assert tuple(dm.weight.shape) == tuple(tm.weight.shape)
    _assert_uniform(dm.weight, 1 / math.sqrt(fan_in))
    _assert_uniform(dm.bias, 1 / math.sqrt(fan_in), spread=False)
    assert dm.weight.requires_grad and dm.bias.requires_grad


def test_conv_reset_parameters_draws_again(session):
    m = tensord.nn.Conv2d(3, 4, 3)
    before = as_torch(m.weight).clone()
    m.reset_parameters()
    assert not torch.equal(as_torch(m.weight), before)
    _assert_uniform(m.weight, 1 / math.sqrt(27), spread=False)


@pytest.mark.parametrize("cls", ["Embedding", "EmbeddingBag"])
def test_embedding_init_is_standard_normal_with_the_padding_row_zeroed(cls, session):
    m = getattr(tensord.nn, cls)(2000, 8, padding_idx=-3, dtype=tensord.float64)
    assert m.padding_idx == 1997
    w = as_torch(m.weight)
    assert w.dtype is torch.float64 and tuple(w.shape) == (2000, 8)
    assert torch.equal(w[1997], torch.zeros(8, dtype=torch.float64))
    rest = torch.cat([w[:1997], w[1998:]]).flatten()
    assert abs(rest.mean()) < 0.05 and abs(rest.std() - 1) < 0.05
    assert (rest.abs() > 3).any()


@pytest.mark.parametrize("freeze", [True, False])
def test_embedding_from_pretrained_shares_the_table(freeze, session):
    def make(m):
        table = m.arange(12, dtype=m.float32).reshape(4, 3)
        return table, m.nn.Embedding.from_pretrained(table, freeze=freeze, padding_idx=1,
                                                     max_norm=15.0)
    (tt, tm), (dt, dm) = make(torch), make(tensord)
    assert repr(dm) == repr(tm)
    assert dm.weight.requires_grad is tm.weight.requires_grad is (not freeze)
    dt.add_(1)  # the module's weight is the table itself
    tt.add_(1)
    with torch.no_grad(), tensord.no_grad():
        assert_matches_torch(lambda m: (tm if m is torch else dm)(L(m, [[3, 1], [0, 2]])))
    torch.testing.assert_close(as_torch(dt), tt)


def test_embedding_bag_from_pretrained(session):
    def make(m):
        table = m.arange(15, dtype=m.float64).reshape(5, 3)
        return m.nn.EmbeddingBag.from_pretrained(table, mode="max", padding_idx=4,
                                                 include_last_offset=True)
    tm, dm = make(torch), make(tensord)
    assert repr(dm) == repr(tm)
    assert not dm.weight.requires_grad
    assert_matches_torch(lambda m: (tm if m is torch else dm)(L(m, [4, 0, 2, 1, 3, 4]),
                                                              L(m, [0, 1, 4, 6])))


def test_embedding_index_out_of_range_raises_by_the_next_synchronize(session):
    """The lookup's bounds are checked by its kernel: torch raises IndexError at the call,
    tensord at the synchronize after it."""
    tm, dm = twin(lambda m: m.nn.Embedding(10, 3))
    with pytest.raises(IndexError):
        tm(torch.tensor([1, 10]))
    with pytest.raises(IndexError):
        dm(tensord.tensor([1, 10]))
        tensord.synchronize()


def test_modules_are_torch_nn_modules_of_the_same_names(session):
    """Every class torch.nn exports from these families, except FractionalMaxPool2d/3d (no
    fractional_max_pool in tensord.nn.functional)."""
    names = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d",
             "ConvTranspose3d", "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d",
             "LazyConvTranspose2d", "LazyConvTranspose3d", "MaxPool1d", "MaxPool2d",
             "MaxPool3d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d", "AvgPool1d", "AvgPool2d",
             "AvgPool3d", "LPPool1d", "LPPool2d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d",
             "AdaptiveMaxPool3d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d",
             "ConstantPad1d", "ConstantPad2d", "ConstantPad3d", "ReflectionPad1d",
             "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d",
             "ReplicationPad3d", "ZeroPad2d", "Upsample", "UpsamplingNearest2d",
             "UpsamplingBilinear2d", "PixelShuffle", "PixelUnshuffle", "Fold", "Unfold",
             "PairwiseDistance", "CosineSimilarity", "ChannelShuffle", "Embedding",
             "EmbeddingBag"]
    for name in names:
        ours, theirs = getattr(tensord.nn, name), getattr(torch.nn, name)
        assert issubclass(ours, tensord.nn.Module), name
        assert [c.__name__ for c in ours.__mro__ if not c.__name__.startswith("_")][:2] == \
            [c.__name__ for c in theirs.__mro__ if not c.__name__.startswith("_")][:2], name
