"""sort, argsort, msort, topk and kthvalue against torch 1.13: values, indices, dtypes, sizes,
strides and exception classes, over dtypes, dims and layouts (contiguous, transposed, sliced),
NaN and ties included.

Where elements tie, torch's CPU kernels leave them where their algorithms do (sort's
std::sort, topk's partial_sort or nth_element, kthvalue's quickselect); tensord's CPU backend
runs the same algorithms there, so on the CPU every index is compared exactly. The CUDA
backend's sorts are stable and its topk sorted (tensord's other valid answer): on a GPU
(TENSORD_TEST_DEVICE, test_cuda.py) the indices of an order that torch leaves open are checked
to point at the right values, without repeats, and stable sorts exactly.
"""
import os
import random

import numpy as np
import pytest
import torch

import tensord
from oracle import as_torch, cpu_only, outcome

# Whether ties are where torch's CPU kernels leave them (the CPU backend's promise).
TORCH_TIES = (os.environ.get("TENSORD_TEST_DEVICE") or "cpu") == "cpu"

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


def check_same(got, want, exact_indices=True, source=None, dim=None):
    """Values, dtypes, sizes and strides as torch's; the indices exactly, or where they need
    not be (exact_indices False), each pointing at its value in `source` along `dim`, no index
    twice."""
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
    elif source is not None and wi.numel() > 0:
        check_indices_point_at_values(as_torch(gi), wv, source, dim)


def check_indices_point_at_values(idx, values, source, dim):
    kept = idx.dim() == source.dim()
    picked = source.gather(dim, idx if kept else idx.unsqueeze(dim))
    if not kept:
        picked = picked.squeeze(dim)
    if source.is_floating_point():
        assert torch.equal(picked.nan_to_num(7.0), values.nan_to_num(7.0))
    else:
        assert torch.equal(picked, values)
    if kept and idx.size(dim) > 1:
        s = idx.sort(dim=dim).values
        k = idx.size(dim)
        assert not (s.narrow(dim, 1, k - 1) == s.narrow(dim, 0, k - 1)).any()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("shape", [(7,), (5, 6), (3, 4, 5)])
def test_sort_and_argsort_match_torch(dtype, layout, shape, session):
    base = sample(dtype, shape, seed=len(shape) * 7 + DTYPES.index(dtype))
    x, y = LAYOUTS[layout](base), LAYOUTS[layout](to_tensord(base))
    for dim in range(-x.dim(), x.dim()):
        for descending in (False, True):
            for stable in (False, True):
                want = x.sort(dim=dim, descending=descending, stable=stable)
                got = y.sort(dim=dim, descending=descending, stable=stable)
                exact = stable or TORCH_TIES
                check_same(got, want, exact, x, dim)
                order = as_torch(y.argsort(dim=dim, descending=descending, stable=stable))
                if exact:
                    assert torch.equal(order, want.indices)
                else:
                    check_indices_point_at_values(order, want.values, x, dim)
    check_same(tensord.sort(y), torch.sort(x), TORCH_TIES, x, -1)
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
                for is_sorted in (True, False):
                    want, werr = outcome(
                        lambda: x.topk(k, dim=dim, largest=largest, sorted=is_sorted))
                    got, gerr = outcome(
                        lambda: y.topk(k, dim=dim, largest=largest, sorted=is_sorted))
                    assert error_class((got, gerr)) == error_class((want, werr))
                    if werr:
                        continue
                    if TORCH_TIES or is_sorted:
                        # Off the CPU an unsorted answer's values may come in another order.
                        check_same(got, want, TORCH_TIES, x, dim)
                    else:
                        check_indices_point_at_values(as_torch(got.indices),
                                                      as_torch(got.values), x, dim)
        for k in (1, n, n + 1, 0):
            for keepdim in (False, True):
                want, werr = outcome(lambda: x.kthvalue(k, dim=dim, keepdim=keepdim))
                got, gerr = outcome(lambda: y.kthvalue(k, dim=dim, keepdim=keepdim))
                assert error_class((got, gerr)) == error_class((want, werr)), (k, dim)
                if werr:
                    continue
                check_same(got, want, TORCH_TIES, x, dim)


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


def test_a_large_sort_matches_numpy_and_torch(session):
    """64 rows of 10,000 float32 normals (a few values tie): stable as numpy's stable sort;
    by default the ties where torch leaves them."""
    rng = np.random.default_rng(3)
    data = rng.standard_normal((64, 10_000)).astype(np.float32)
    got = tensord.tensor(data).sort(dim=1, stable=True)
    assert np.array_equal(got.values.cpu().numpy(), np.sort(data, axis=1, kind="stable"))
    assert np.array_equal(got.indices.cpu().numpy(), np.argsort(data, axis=1, kind="stable"))
    want = torch.tensor(data).sort(dim=1)
    got = tensord.tensor(data).sort(dim=1)
    check_same(got, want, TORCH_TIES, torch.tensor(data), 1)
    if TORCH_TIES:  # the case ties decide
        assert not torch.equal(want.indices, torch.tensor(data).sort(dim=1, stable=True).indices)


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16", "int32", "int8"])
def test_topk_of_long_slices_picks_what_torch_picks(dtype, session):
    """Slices long enough for the CPU's blockwise pass (16 elements per vector test), with many
    ties, NaN and infinities: the indices exactly torch's (on the CPU; elsewhere a stable sort's
    first k), for k on both sides of torch's choice between partial_sort and nth_element
    (k * 64 <= n)."""
    g = torch.Generator().manual_seed(5)
    x = (torch.randn(50, 300, generator=g) * 3).round().to(getattr(torch, dtype))
    if x.is_floating_point():
        x[::3, 7] = float("nan")
        x[::5, 100] = float("inf")
        x[::7, 200] = -float("inf")
    y = to_tensord(x)
    for k in (1, 4, 5, 20, 64, 65):
        for largest in (True, False):
            if TORCH_TIES:
                want = x.float().topk(k, dim=1, largest=largest).indices
            else:
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
            for stable in (True, False):
                want = x.sort(dim=1, descending=descending, stable=stable)
                got = y.sort(dim=1, descending=descending, stable=stable)
                assert torch.equal(_bits(as_torch(got.values)), _bits(want.values)), (n, stable)
                if stable or TORCH_TIES:
                    assert torch.equal(as_torch(got.indices), want.indices), (n, descending)


def _many_ties(n, dtype, rows=3, seed=0):
    """rows x n values from {0, 1, 2, 3} (Python's generator, so the same numbers in both
    libraries), a NaN every 7th in row 0 and -0.0 every 3rd in row 1 where the dtype has them."""
    rnd = random.Random(seed * 1000 + n)
    x = torch.tensor([[rnd.randrange(4) for _ in range(n)] for _ in range(rows)]).to(dtype)
    if x.is_floating_point():
        x[0, ::7] = float("nan")
        x[1, ::3] = -0.0
    return x


@cpu_only("ties where torch's CPU kernels leave them: the CPU backend's promise")
@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.uint8, torch.float32,
                                   torch.float64, torch.bfloat16])
@pytest.mark.parametrize("n", [5, 17, 40, 100, 300, 1000, 5000])
def test_ties_are_where_torch_leaves_them(dtype, n, session):
    """Slices of four distinct values (every element ties with a quarter of the others), of
    lengths that take every path (insertion sort, introsort, radix; partial_sort and
    nth_element): sort, argsort, topk (sorted or not), kthvalue, median and mode give torch's
    indices exactly, along either dim."""
    x = _many_ties(n, dtype)
    y = to_tensord(x)
    ks = sorted({1, 2, 3, min(n, 10), n // 2 or 1, n})
    cases = {
        "sort": lambda t: t.sort(),
        "sort descending": lambda t: t.sort(descending=True),
        "sort dim 0": lambda t: t.t().sort(dim=0),
        "argsort": lambda t: t.argsort(dim=1, descending=True),
        "median": lambda t: t.median(dim=1),
        "nanmedian": lambda t: t.nanmedian(dim=1),
    }
    if not x.is_floating_point():  # torch's mode compares with < alone: NaN rows are its own
        cases["mode"] = lambda t: t.mode(dim=1)
    for k in ks:
        cases[f"topk {k}"] = lambda t, k=k: t.topk(k)
        cases[f"topk {k} smallest"] = lambda t, k=k: t.topk(k, largest=False)
        cases[f"topk {k} unsorted"] = lambda t, k=k: t.topk(k, sorted=False)
        cases[f"kthvalue {k}"] = lambda t, k=k: t.kthvalue(k)
    differ = []
    for name, case in cases.items():
        want, got = case(x), case(y)
        if isinstance(want, torch.Tensor):  # argsort
            if not torch.equal(as_torch(got), want):
                differ.append(name)
            continue
        if not torch.equal(as_torch(got.indices), want.indices):
            differ.append(name)
        assert torch.equal(_bits(as_torch(got.values)), _bits(want.values)), name
    assert not differ


@cpu_only("ties where torch's CPU kernels leave them: the CPU backend's promise")
def test_long_sorts_shared_by_threads_leave_ties_where_torch_does(session):
    """Slices past 65,536 elements, whose std::sort the CPU backend replays on several threads
    (the ranges its first partitions leave apart): a million rand() draws of float32 (tens of
    thousands of ties), 300,000 integers of ten values, both directions, and a topk whose
    nth_element leaves 200,000 to sort."""
    g = torch.Generator().manual_seed(11)
    floats = torch.rand(1 << 20, generator=g)
    ints = torch.randint(0, 10, (2, 300_000), generator=g)
    for x in (floats, ints):
        y = to_tensord(x)
        for descending in (False, True):
            want = x.sort(descending=descending)
            got = y.sort(descending=descending)
            assert torch.equal(as_torch(got.indices), want.indices), (x.dtype, descending)
            assert torch.equal(as_torch(got.values), want.values)
    want = floats.topk(200_001)
    assert torch.equal(as_torch(to_tensord(floats).topk(200_001).indices), want.indices)


@cpu_only("ties where torch's CPU kernels leave them: the CPU backend's promise")
def test_ties_of_odd_layouts_and_zeros(session):
    """An expanded tensor (every element one), a transposed slice, 0.0 beside -0.0: indices as
    torch's, each zero's sign where it stood."""
    x = torch.tensor([1.0]).expand(100)
    assert torch.equal(as_torch(to_tensord(torch.tensor([1.0])).expand(100).sort().indices),
                       x.sort().indices)
    z = torch.tensor([0.0, -0.0] * 60)
    for descending in (False, True):
        want = z.sort(descending=descending)
        got = to_tensord(z).sort(descending=descending)
        assert torch.equal(as_torch(got.indices), want.indices)
        assert torch.equal(_bits(as_torch(got.values)), _bits(want.values))
    m = _many_ties(200, torch.int64, rows=6, seed=3)
    assert torch.equal(as_torch(to_tensord(m).t().topk(9, dim=0).indices), m.t().topk(9, dim=0).indices)
    assert torch.equal(as_torch(to_tensord(m)[:, ::3].sort().indices), m[:, ::3].sort().indices)
