"""sort, argsort, msort, topk and kthvalue against torch 1.13: values, indices, dtypes, sizes,
strides and exception classes, over dtypes, dims and layouts (contiguous, transposed, sliced),
NaN and ties included.

Where torch leaves the choice among equal elements open (topk and kthvalue pick one of several
equal elements), the indices are checked to point at the right values, without repeats; sort is
stable on both sides, so its indices are compared exactly.
"""
import numpy as np
import pytest
import torch

import tensord
from oracle import as_torch, outcome

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
          "float64"]


def sample(dtype, shape, seed):
    g = torch.Generator().manual_seed(seed)
    if dtype == "bool":
        return torch.randint(0, 2, shape, generator=g).bool()
    if dtype in ("uint8",):
        return torch.randint(0, 6, shape, generator=g).to(torch.uint8)  # many ties
    if dtype.startswith("int"):
        return torch.randint(-4, 5, shape, generator=g).to(getattr(torch, dtype))
    x = torch.randn(shape, generator=g, dtype=torch.float64).round(decimals=1)  # ties too
    flat = x.view(-1)
    if flat.numel() > 4:
        flat[1] = float("nan")
        flat[3] = float("nan")
        flat[2] = float("inf")
    return x.to(getattr(torch, dtype))


def to_tensord(t):
    if t.dtype == torch.bfloat16:  # bit for bit (NaN's sign and payload too)
        return tensord.tensor(t.contiguous().view(torch.int16).numpy()).view(tensord.bfloat16)
    return tensord.tensor(t.numpy())


LAYOUTS = {
    "contiguous": lambda t: t,
    "transposed": lambda t: t.transpose(0, 1) if t.dim() > 1 else t,
    "sliced": lambda t: t[..., ::2] if t.dim() > 0 else t,
}


def error_class(result):
    """The exception class name of an outcome (None when it returned)."""
    return result[1][0] if result[1] else None


def check_same(got, want, exact_indices=True):
    gv, gi = got
    wv, wi = want
    for g, w in ((gv, wv), (gi, wi)):
        assert tuple(g.shape) == tuple(w.shape)
        assert str(g.dtype) == str(w.dtype)
        assert g.stride() == w.stride()
    assert torch.equal(as_torch(gv).isnan(), wv.isnan()) if wv.is_floating_point() else True
    gvt = as_torch(gv)
    if wv.is_floating_point():
        assert torch.equal(torch.nan_to_num(gvt, nan=7.0), torch.nan_to_num(wv, nan=7.0))
    else:
        assert torch.equal(gvt, wv)
    if exact_indices:
        assert torch.equal(as_torch(gi), wi)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("shape", [(7,), (5, 6), (3, 4, 5)])
def test_sort_and_argsort_match_torch(dtype, layout, shape, session):
    base = sample(dtype, shape, seed=len(shape) * 7 + DTYPES.index(dtype))
    x, y = LAYOUTS[layout](base), LAYOUTS[layout](to_tensord(base))
    for dim in range(-x.dim(), x.dim()):
        for descending in (False, True):
            want = x.sort(dim=dim, descending=descending, stable=True)
            got = y.sort(dim=dim, descending=descending)
            check_same(got, want)
            assert torch.equal(as_torch(y.argsort(dim=dim, descending=descending)),
                               want.indices)
    check_same(tensord.sort(y), torch.sort(x, stable=True))
    assert torch.equal(as_torch(y.msort()).nan_to_num(7.0) if x.is_floating_point()
                       else as_torch(y.msort()),
                       torch.msort(x).nan_to_num(7.0) if x.is_floating_point() else torch.msort(x))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_topk_and_kthvalue_match_torch(dtype, layout, session):
    base = sample(dtype, (6, 8), seed=100 + DTYPES.index(dtype))
    x, y = LAYOUTS[layout](base), LAYOUTS[layout](to_tensord(base))
    for dim in (0, 1, -1):
        n = x.shape[dim]
        for k in (0, 1, n // 2, n):
            for largest in (True, False):
                want, werr = outcome(lambda: x.topk(k, dim=dim, largest=largest))
                got, gerr = outcome(lambda: y.topk(k, dim=dim, largest=largest))
                assert error_class((got, gerr)) == error_class((want, werr))
                if werr:
                    continue
                check_same(got, want, exact_indices=False)
                # Each index points at its value; no index twice.
                idx = as_torch(got.indices)
                picked = x.gather(dim, idx)
                if x.is_floating_point():
                    assert torch.equal(picked.nan_to_num(7.0), want.values.nan_to_num(7.0))
                else:
                    assert torch.equal(picked, want.values)
                if k > 1:
                    s = idx.sort(dim=dim).values
                    assert not (s.narrow(dim, 1, k - 1) == s.narrow(dim, 0, k - 1)).any()
        for k in (1, n, n + 1, 0):
            for keepdim in (False, True):
                want, werr = outcome(lambda: x.kthvalue(k, dim=dim, keepdim=keepdim))
                got, gerr = outcome(lambda: y.kthvalue(k, dim=dim, keepdim=keepdim))
                assert error_class((got, gerr)) == error_class((want, werr)), (k, dim)
                if werr:
                    continue
                check_same(got, want, exact_indices=False)
                picked = x.gather(dim, as_torch(got.indices) if keepdim
                                  else as_torch(got.indices).unsqueeze(dim))
                if not keepdim:
                    picked = picked.squeeze(dim)
                if x.is_floating_point():
                    assert torch.equal(picked.nan_to_num(7.0), want.values.nan_to_num(7.0))
                else:
                    assert torch.equal(picked, want.values)


def test_errors_match_torch(session):
    x, y = torch.tensor([1, 2, 3]), tensord.tensor([1, 2, 3])
    cases = [lambda m, t: t.topk(4), lambda m, t: t.topk(-1), lambda m, t: t.sort(dim=1),
             lambda m, t: t.topk(1, dim=2), lambda m, t: t.kthvalue(0), lambda m, t: t.kthvalue(4),
             lambda m, t: t.argsort(dim=-2)]
    for case in cases:
        want = error_class(outcome(lambda: case(torch, x)))
        got = error_class(outcome(lambda: case(tensord, y)))
        assert want is not None and got == want
    with pytest.raises(RuntimeError, match="selected index k out of range"):
        y.topk(4)
    with pytest.raises(RuntimeError, match="kthvalue\\(\\): selected number k out of range"):
        y.kthvalue(4)


def test_zero_dim_and_empty(session):
    for m in (torch, tensord):
        s = m.tensor(5.0)
        assert s.sort().values.item() == 5.0 and s.sort().indices.item() == 0
        assert s.topk(1).values.item() == 5.0
    assert tensord.ones(0).topk(0).values.shape == torch.ones(0).topk(0).values.shape
    assert tensord.ones(0, 3).sort(dim=1).values.shape == (0, 3)


def test_repr_is_torchs(session):
    want = repr(torch.tensor([3, 1, 2]).sort())
    assert repr(tensord.tensor([3, 1, 2]).sort()) == want


def test_a_large_sort_matches_numpy(session):
    rng = np.random.default_rng(3)
    data = rng.standard_normal((64, 10_000)).astype(np.float32)
    got = tensord.tensor(data).sort(dim=1)
    assert np.array_equal(got.values.cpu().numpy(), np.sort(data, axis=1, kind="stable"))
    assert np.array_equal(got.indices.cpu().numpy(), np.argsort(data, axis=1, kind="stable"))


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16", "int32", "int8"])
def test_topk_of_long_slices_picks_what_a_stable_sort_puts_first(dtype, session):
    """Slices long enough for the CPU's blockwise pass (16 elements per vector test), with many
    ties, NaN and infinities: the indices are exactly a stable sort's first k."""
    g = torch.Generator().manual_seed(5)
    x = (torch.randn(50, 300, generator=g) * 3).round().to(getattr(torch, dtype))
    if x.is_floating_point():
        x[::3, 7] = float("nan")
        x[::5, 100] = float("inf")
        x[::7, 200] = -float("inf")
    y = to_tensord(x)
    for k in (1, 5, 20, 64, 65):
        for largest in (True, False):
            want = x.float().sort(dim=1, descending=largest, stable=True).indices[:, :k]
            got = y.topk(k, dim=1, largest=largest)
            assert torch.equal(as_torch(got.indices), want), (k, largest)


def _bits(t):
    """The exact contents: the sign of a zero and a NaN's payload count."""
    if t.dtype == torch.bool:
        return t.to(torch.uint8)
    width = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[t.element_size()]
    return t.contiguous().view(width) if t.is_floating_point() else t


@pytest.mark.parametrize("dtype", DTYPES)
def test_long_slices_sort_bit_for_bit_as_torch(dtype, session):
    """Slices of 300 and 5000 elements (the CPU's radix sort, whose values come back from their
    sort keys): every value bit for bit (-0.0 and 0.0 where they stood, NaNs of other payloads
    read from the slice), the type's extremes, both directions, the indices of a stable sort."""
    for n, seed in ((300, 1), (5000, 2)):
        x = sample(dtype, (3, n), seed)
        if dtype != "bool":
            info = torch.finfo(x.dtype) if x.is_floating_point() else torch.iinfo(x.dtype)
            x[:, 10], x[:, 11] = info.min, info.max
        if x.is_floating_point():
            x[:, 20:40:2] = 0.0
            x[:, 21:41:2] = -0.0
            x[:, 50] = -float("inf")
            x[0, 60] = -float("nan")
        y = to_tensord(x)
        for descending in (False, True):
            want = x.sort(dim=1, descending=descending, stable=True)
            got = y.sort(dim=1, descending=descending, stable=True)
            assert torch.equal(_bits(as_torch(got.values)), _bits(want.values)), (n, descending)
            assert torch.equal(as_torch(got.indices), want.indices), (n, descending)
