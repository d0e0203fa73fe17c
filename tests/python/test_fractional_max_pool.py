"""fractional_max_pool2d/3d (F.*, F.*_with_indices, nn.FractionalMaxPool2d/3d) against torch
1.13: with the same `_random_samples`, values and indices equal torch's (dtype, shape, strides)
over dtypes, layouts, unbatched inputs, output sizes or ratios, ties and NaNs; without them,
the draws are tensord's own, and every value is the input at its index. Errors are torch's
class (and words) at the call; where torch 1.13 reads memory unchecked (too few samples, a
kernel size of 0), tensord raises a clear error instead.
"""

import pytest
import torch

import tensord
from oracle import as_torch, assert_matches_torch, cpu_only, outcome


def _x(m, *shape, dtype="float32", seed=0, layout="contiguous"):
    """Standard normal values, the same in both namespaces, a 4-d one laid out as `layout`
    says: contiguous, channels_last, or transposed (the last two dims' strides swapped)."""
    g = torch.Generator().manual_seed(seed)
    t = torch.randn(*shape, generator=g, dtype=torch.float64)
    t = (t if m is torch else tensord.tensor(t.numpy())).to(getattr(m, dtype))
    if len(shape) == 4 and layout == "channels_last":
        return t.contiguous(memory_format=m.channels_last)
    if len(shape) == 4 and layout == "transposed":
        return t.transpose(-1, -2).contiguous().transpose(-1, -2)
    return t


def _u(m, *shape, dtype="float32", seed=1):
    """Samples in [0, 1), the same in both namespaces."""
    g = torch.Generator().manual_seed(seed)
    t = torch.rand(*shape, generator=g, dtype=torch.float64)
    return (t if m is torch else tensord.tensor(t.numpy())).to(getattr(m, dtype))


def _F(m):
    return m.nn.functional


CASES_2D = {
    "output_size": lambda m, d, l: _F(m).fractional_max_pool2d(
        _x(m, 2, 3, 9, 11, dtype=d, layout=l), 3, output_size=(4, 5), _random_samples=_u(m, 2, 3, 2, dtype=d)),
    "output_size int, indices": lambda m, d, l: _F(m).fractional_max_pool2d(
        _x(m, 2, 3, 9, 11, dtype=d, layout=l), 2, output_size=4, return_indices=True,
        _random_samples=_u(m, 2, 3, 2, dtype=d)),
    "output_ratio": lambda m, d, l: _F(m).fractional_max_pool2d(
        _x(m, 2, 3, 16, 13, dtype=d, layout=l), (2, 3), output_ratio=(0.5, 0.7), return_indices=True,
        _random_samples=_u(m, 2, 3, 2, dtype=d)),
    "with_indices": lambda m, d, l: _F(m).fractional_max_pool2d_with_indices(
        _x(m, 1, 4, 10, 10, dtype=d, layout=l), 3, output_size=(5, 6), _random_samples=_u(m, 1, 4, 2, dtype=d)),
    "unbatched": lambda m, d, l: _F(m).fractional_max_pool2d(
        _x(m, 3, 9, 11, dtype=d, layout=l), 2, output_size=(4, 3), return_indices=True,
        _random_samples=_u(m, 1, 3, 2, dtype=d)),
    "output 1": lambda m, d, l: _F(m).fractional_max_pool2d(
        _x(m, 2, 2, 6, 7, dtype=d, layout=l), 3, output_size=1, return_indices=True,
        _random_samples=_u(m, 2, 2, 2, dtype=d)),
    "windows cover the input": lambda m, d, l: _F(m).fractional_max_pool2d(
        _x(m, 2, 2, 6, 7, dtype=d, layout=l), (6, 7), output_size=1, return_indices=True,
        _random_samples=_u(m, 2, 2, 2, dtype=d)),
    "output 0": lambda m, d, l: _F(m).fractional_max_pool2d(
        _x(m, 2, 3, 9, 11, dtype=d, layout=l), 2, output_size=0, _random_samples=_u(m, 2, 3, 2, dtype=d)),
    "empty batch": lambda m, d, l: _F(m).fractional_max_pool2d(
        _x(m, 0, 3, 9, 11, dtype=d, layout=l), 2, output_size=3, return_indices=True,
        _random_samples=_u(m, 0, 3, 2, dtype=d)),
    "samples 0 (every window at its lowest start)": lambda m, d, l: _F(m).fractional_max_pool2d(
        _x(m, 2, 3, 9, 11, dtype=d, layout=l), 2, output_size=(5, 6), return_indices=True,
        _random_samples=_u(m, 2, 3, 2, dtype=d) * 0),
    "ties: the first maximum": lambda m, d, l: _F(m).fractional_max_pool2d(
        _x(m, 2, 3, 9, 11, dtype=d, layout=l).round(), 3, output_size=(4, 5), return_indices=True,
        _random_samples=_u(m, 2, 3, 2, dtype=d)),
    "NaNs: the last NaN": lambda m, d, l: _F(m).fractional_max_pool2d(
        _x(m, 2, 3, 9, 11, dtype=d, layout=l).masked_fill(_x(m, 2, 3, 9, 11, seed=4) > 1, float("nan")),
        3, output_size=(4, 5), return_indices=True, _random_samples=_u(m, 2, 3, 2, dtype=d)),
    "module": lambda m, d, l: m.nn.FractionalMaxPool2d(3, output_size=(4, 5), return_indices=True,
                                                    _random_samples=_u(m, 2, 3, 2, dtype=d))(
        _x(m, 2, 3, 9, 11, dtype=d, layout=l)),
    "module, ratio": lambda m, d, l: m.nn.FractionalMaxPool2d(2, output_ratio=0.5,
                                                           _random_samples=_u(m, 2, 3, 2, dtype=d))(
        _x(m, 2, 3, 9, 11, dtype=d, layout=l)),
}

CASES_3D = {
    "output_size": lambda m, d: _F(m).fractional_max_pool3d(
        _x(m, 2, 3, 7, 8, 9, dtype=d), 2, output_size=(3, 4, 5), return_indices=True,
        _random_samples=_u(m, 2, 3, 3, dtype=d)),
    "kernel tuple, ratio": lambda m, d: _F(m).fractional_max_pool3d(
        _x(m, 1, 2, 9, 8, 10, dtype=d), (3, 2, 4), output_ratio=(0.5, 0.6, 0.4),
        return_indices=True, _random_samples=_u(m, 1, 2, 3, dtype=d)),
    "unbatched": lambda m, d: _F(m).fractional_max_pool3d(
        _x(m, 3, 6, 6, 6, dtype=d), 2, output_size=3, return_indices=True,
        _random_samples=_u(m, 1, 3, 3, dtype=d)),
    "with_indices": lambda m, d: _F(m).fractional_max_pool3d_with_indices(
        _x(m, 2, 2, 5, 6, 7, dtype=d), 2, output_size=(2, 3, 4),
        _random_samples=_u(m, 2, 2, 3, dtype=d)),
    "module": lambda m, d: m.nn.FractionalMaxPool3d(2, output_size=(3, 4, 5),
                                                    _random_samples=_u(m, 2, 3, 3, dtype=d))(
        _x(m, 2, 3, 7, 8, 9, dtype=d)),
}


@pytest.mark.parametrize("layout", ["contiguous", "channels_last", "transposed"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", list(CASES_2D))
def test_fractional_max_pool2d_matches_torch(session, name, dtype, layout):
    assert_matches_torch(lambda m: CASES_2D[name](m, dtype, layout), 0.0)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", list(CASES_3D))
def test_fractional_max_pool3d_matches_torch(session, name, dtype):
    assert_matches_torch(lambda m: CASES_3D[name](m, dtype), 0.0)


@pytest.mark.parametrize("nd", [2, 3])
def test_drawn_samples_are_the_generators_and_pool_as_torch(session, nd):
    """Without _random_samples the op draws them from tensord's generator (rand of (N, C, nd)
    in the input's dtype, as torch's F draws them): a seed repeats them, and torch given the
    same samples pools the same values at the same positions."""
    shape = (2, 3, 12, 13) if nd == 2 else (2, 3, 8, 9, 10)
    pool = f"fractional_max_pool{nd}d"
    x = _x(tensord, *shape)
    tensord.manual_seed(5)
    values, indices = getattr(tensord.nn.functional, pool)(x, 2, output_ratio=0.5,
                                                           return_indices=True)
    tensord.manual_seed(5)
    samples = tensord.rand(2, 3, nd)
    want = getattr(torch.nn.functional, pool)(_x(torch, *shape), 2, output_ratio=0.5,
                                              return_indices=True,
                                              _random_samples=as_torch(samples))
    assert torch.equal(as_torch(values), want[0])
    assert torch.equal(as_torch(indices), want[1])


ERRORS = {
    "no size or ratio": lambda m: _F(m).fractional_max_pool2d(_x(m, 2, 3, 9, 11), 2),
    "3-d: no size or ratio": lambda m: _F(m).fractional_max_pool3d(_x(m, 2, 3, 5, 5, 5), 2),
    "2-d input": lambda m: _F(m).fractional_max_pool2d(_x(m, 9, 11), 2, output_size=3),
    "5-d input": lambda m: _F(m).fractional_max_pool2d(_x(m, 1, 2, 3, 9, 11), 2, output_size=3,
                                                       _random_samples=_u(m, 1, 2, 2)),
    "3-d pool of a 3-d input": lambda m: _F(m).fractional_max_pool3d(
        _x(m, 7, 8, 9), 2, output_size=2, _random_samples=_u(m, 1, 7, 3)),
    "empty channels": lambda m: _F(m).fractional_max_pool2d(
        _x(m, 2, 0, 9, 11), 2, output_size=3, _random_samples=_u(m, 2, 0, 2)),
    "empty height": lambda m: _F(m).fractional_max_pool2d(
        _x(m, 2, 3, 0, 11), 2, output_size=3, _random_samples=_u(m, 2, 3, 2)),
    "pool too tall": lambda m: _F(m).fractional_max_pool2d(
        _x(m, 2, 3, 9, 11), 5, output_size=(6, 5), _random_samples=_u(m, 2, 3, 2)),
    "pool too wide": lambda m: _F(m).fractional_max_pool2d(
        _x(m, 2, 3, 9, 11), 5, output_size=(4, 8), _random_samples=_u(m, 2, 3, 2)),
    "3-d pool too long": lambda m: _F(m).fractional_max_pool3d(
        _x(m, 2, 3, 7, 8, 9), 5, output_size=(4, 2, 2), _random_samples=_u(m, 2, 3, 3)),
    "ratio 1": lambda m: _F(m).fractional_max_pool2d(
        _x(m, 2, 3, 9, 11), 2, output_ratio=1.0, _random_samples=_u(m, 2, 3, 2)),
    "negative output size": lambda m: _F(m).fractional_max_pool2d(
        _x(m, 2, 3, 9, 11), 2, output_size=-1, _random_samples=_u(m, 2, 3, 2)),
    "3 kernel sizes for 2-d": lambda m: _F(m).fractional_max_pool2d(
        _x(m, 2, 3, 9, 11), (2, 2, 2), output_size=3, _random_samples=_u(m, 2, 3, 2)),
    "3 output sizes for 2-d": lambda m: _F(m).fractional_max_pool2d(
        _x(m, 2, 3, 9, 11), 2, output_size=(3, 3, 3), _random_samples=_u(m, 2, 3, 2)),
    "int64 input": lambda m: _F(m).fractional_max_pool2d(
        _x(m, 2, 3, 9, 11).long(), 2, output_size=3, _random_samples=_u(m, 2, 3, 2)),
    "3-d int64 input": lambda m: _F(m).fractional_max_pool3d(
        _x(m, 2, 3, 7, 8, 9).long(), 2, output_size=2, _random_samples=_u(m, 2, 3, 3)),
    "float64 samples for float32": lambda m: _F(m).fractional_max_pool2d(
        _x(m, 2, 3, 9, 11), 2, output_size=3, _random_samples=_u(m, 2, 3, 2, dtype="float64")),
    "module without size or ratio": lambda m: m.nn.FractionalMaxPool2d(3),
    "module with both": lambda m: m.nn.FractionalMaxPool2d(3, output_size=2, output_ratio=0.5),
    "module ratio 1.5": lambda m: m.nn.FractionalMaxPool2d(3, output_ratio=1.5),
    "3-d module ratio 0": lambda m: m.nn.FractionalMaxPool3d(3, output_ratio=(0.5, 0.5, 0)),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_match_torch(session, name):
    _, want = outcome(lambda: ERRORS[name](torch))
    _, got = outcome(lambda: ERRORS[name](tensord))
    assert want is not None and got is not None, (want, got)
    assert got[0] == want[0], (got, want)
    assert want[1].split("\n")[0] in got[1], (got, want)


@cpu_only("16-bit floats are refused on the CPU only (as torch's kernels)")
def test_16_bit_floats_are_refused_on_the_cpu_as_torch(session):
    for dtype in ("float16", "bfloat16"):
        def case(m):
            return _F(m).fractional_max_pool2d(_x(m, 2, 3, 9, 11, dtype=dtype), 2, output_size=3,
                                               _random_samples=_u(m, 2, 3, 2, dtype=dtype))
        _, want = outcome(lambda: case(torch))
        _, got = outcome(lambda: case(tensord))
        assert want is not None and got == want, (got, want)


@pytest.mark.parametrize("samples, message", [
    ((1, 3, 2), r"Expected _random_samples of size \[2, 3, 2\]"),  # torch reads past them
    ((2, 3, 3), r"Expected _random_samples of size \[2, 3, 2\]"),
])
def test_samples_of_another_shape_are_errors(session, samples, message):
    with pytest.raises(RuntimeError, match=message):
        tensord.nn.functional.fractional_max_pool2d(_x(tensord, 2, 3, 9, 11), 2, output_size=3,
                                                    _random_samples=_u(tensord, *samples))


def test_a_kernel_size_of_zero_is_an_error(session):
    """torch 1.13 returns values it never wrote for this."""
    with pytest.raises(RuntimeError, match="kernel_size must be greater than zero"):
        tensord.nn.functional.fractional_max_pool2d(_x(tensord, 2, 3, 9, 11), 0, output_size=3,
                                                    _random_samples=_u(tensord, 2, 3, 2))


@pytest.mark.parametrize("shift", [5.0, -3.7, 1e6])
def test_samples_outside_the_unit_interval_match_torch(session, shift):
    """trunc((i + u) alpha) - trunc(u alpha) stays within a window of i alpha for any finite u
    (alpha >= 1 whenever the pool fits), so torch reads no further than for u in [0, 1)."""
    assert_matches_torch(lambda m: _F(m).fractional_max_pool2d(
        _x(m, 2, 3, 9, 11), 2, output_size=(4, 3), return_indices=True,
        _random_samples=_u(m, 2, 3, 2) + shift), 0.0)


def test_module_repr_and_state(session):
    for m in (torch, tensord):
        pool = m.nn.FractionalMaxPool3d(3, output_ratio=0.5)
        assert (pool.kernel_size, pool.output_size, pool.output_ratio) == ((3, 3, 3), None,
                                                                           (0.5, 0.5, 0.5))
        assert repr(pool) == "FractionalMaxPool3d()" and list(pool.state_dict()) == []
