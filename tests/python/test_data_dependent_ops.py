"""Ops whose outputs' sizes depend on the data (engine/ops/data_dependent_ops.cc): unique,
unique_consecutive, bincount and repeat_interleave by a tensor of counts; against torch 1.13
over dtypes and layouts: values, dtypes, shapes, strides of results and exception classes.

torch 1.13's CPU unique of a tensor holding NaN orders its output by std::sort with NaN (no
order at all: NaN may land between numbers, with a count of 0); tensord sorts NaN last, each NaN
a value of its own. Those cases are not compared. unique(sorted=False): torch leaves the order
unspecified and its CPU kernel answers in its hash set's order, which tensord's CPU backend
reproduces (compared exactly, NaN included, on the CPU); elsewhere it answers sorted, compared
as a set.
"""
import zlib

import numpy as np
import pytest
import torch

import tensord
from oracle import as_torch, assert_matches_torch, cpu_only, outcome

DTYPES = ["float32", "float64", "bfloat16", "int64", "int32", "int16", "int8", "uint8", "bool"]


class _Values(dict):
    """Small integers (many repeats) of a shape, drawn from a generator seeded by the key."""

    def __missing__(self, key):
        shape, low, high = key
        gen = np.random.default_rng(zlib.crc32(repr(key).encode()))
        self[key] = gen.integers(low, high, size=shape).astype(np.float64)
        return self[key]


_values = _Values()


def data(m, shape, dtype, layout="contiguous", low=0, high=4):
    shape = tuple(shape)
    made = shape if layout == "contiguous" else shape[:-2] + (shape[-1], shape[-2])
    values = _values[(made, low, high)]
    t = m.tensor(values > 1) if dtype == "bool" else m.tensor(values).to(getattr(m, dtype))
    return t if layout == "contiguous" else t.transpose(-1, -2)


def _unique_cases():
    cases = {}
    for d in DTYPES:
        for lo in ["contiguous", "transposed"]:
            k = f"[{d},{lo}]"
            x = lambda m, d=d, lo=lo: data(m, (5, 6), d, lo)  # noqa: E731
            cases["unique" + k] = lambda m, x=x: m.unique(x(m))
            cases["unique(inverse, counts)" + k] = lambda m, x=x: m.unique(
                x(m), return_inverse=True, return_counts=True)
            cases["unique(dim 0, inverse, counts)" + k] = lambda m, x=x: m.unique(
                x(m), dim=0, return_inverse=True, return_counts=True)
            cases["unique(dim 1)" + k] = lambda m, x=x: m.unique(x(m), dim=1)
            cases["unique(dim -1, inverse)" + k] = lambda m, x=x: m.unique(
                x(m), dim=-1, return_inverse=True)
            cases["unique_consecutive" + k] = lambda m, x=x: m.unique_consecutive(x(m))
            cases["unique_consecutive(inverse, counts)" + k] = lambda m, x=x: m.unique_consecutive(
                x(m), return_inverse=True, return_counts=True)
            cases["unique_consecutive(dim 0, inverse, counts)" + k] = \
                lambda m, x=x: m.unique_consecutive(x(m), dim=0, return_inverse=True,
                                                    return_counts=True)
            cases["Tensor.unique(counts)" + k] = lambda m, x=x: x(m).unique(return_counts=True)
    cases.update({
        "unique(repeated rows, dim 0)": lambda m: m.unique(
            m.tensor([[1, 2], [0, 5], [1, 2], [0, 1]]), dim=0, return_inverse=True,
            return_counts=True),
        "unique(3-d, dim 1)": lambda m: m.unique(data(m, (2, 5, 3), "int64", low=0, high=2),
                                                 dim=1, return_inverse=True, return_counts=True),
        "unique(3-d, dim 2)": lambda m: m.unique(data(m, (2, 2, 4), "int64", low=0, high=2),
                                                 dim=2, return_inverse=True, return_counts=True),
        "unique_consecutive(3-d, dim 2)": lambda m: m.unique_consecutive(
            data(m, (2, 3, 4), "int64", low=0, high=2), dim=2, return_inverse=True,
            return_counts=True),
        "unique(4-d, dim 1)": lambda m: m.unique(data(m, (2, 3, 2, 2), "int64", low=0, high=2),
                                                 dim=1),
        "unique_consecutive(float16, dim)": lambda m: m.unique_consecutive(m.ones(3).half(),
                                                                           dim=0),
        "unique(0-d)": lambda m: m.unique(m.tensor(5.0), return_inverse=True, return_counts=True),
        "unique(empty)": lambda m: m.unique(m.zeros(0, 3), return_inverse=True,
                                            return_counts=True),
        "unique(empty, dim 0)": lambda m: m.unique(m.zeros(0, 3), dim=0, return_inverse=True,
                                                   return_counts=True),
        "unique(empty, other dim)": lambda m: m.unique(m.zeros(0, 3), dim=1),
        "unique(zero columns, dim 0)": lambda m: m.unique(m.zeros(2, 0), dim=0),
        "unique(0-d, dim 0)": lambda m: m.unique(m.tensor(3.0), dim=0),
        "unique(dim out of range)": lambda m: m.unique(m.zeros(2, 3), dim=2),
        "unique(float16)": lambda m: m.unique(m.ones(3).half()),
        "unique(float16, dim)": lambda m: m.unique(m.ones(3).half(), dim=0),
        "unique(one element)": lambda m: m.unique(m.tensor([7]), return_inverse=True,
                                                  return_counts=True),
        "unique(all equal)": lambda m: m.unique(m.full((4, 3), 2), return_inverse=True,
                                                return_counts=True),
        "unique(negative zero)": lambda m: m.unique(m.tensor([0.0, -0.0, 1.0]),
                                                    return_counts=True)[1],
        "unique(strided view)": lambda m: m.unique(data(m, (6, 8), "int64")[::2, 1::3],
                                                   return_inverse=True),
        "unique(large)": lambda m: m.unique(data(m, (3000,), "int64", low=-50, high=50),
                                            return_inverse=True, return_counts=True),
        "unique_consecutive(nan)": lambda m: m.unique_consecutive(
            m.tensor([1.0, float("nan"), float("nan"), 2.0, 2.0]), return_counts=True),
        "unique_consecutive(0-d)": lambda m: m.unique_consecutive(m.tensor(2),
                                                                  return_inverse=True),
        "unique_consecutive(float16)": lambda m: m.unique_consecutive(m.ones(3).half()),
        "unique_consecutive(dim 1)": lambda m: m.unique_consecutive(
            m.tensor([[1, 1, 2], [3, 3, 4]]), dim=1, return_counts=True),
    })
    return cases


def _bincount_cases():
    cases = {}
    for d in ["int64", "int32", "int16", "int8", "uint8"]:
        x = lambda m, d=d: data(m, (40,), d, low=0, high=9)  # noqa: E731
        cases[f"bincount[{d}]"] = lambda m, x=x: m.bincount(x(m))
        cases[f"bincount(minlength)[{d}]"] = lambda m, x=x: m.bincount(x(m), minlength=20)
        for w in ["float32", "float64", "float16", "int64", "bool"]:
            cases[f"bincount(weights {w})[{d}]"] = lambda m, x=x, w=w: m.bincount(
                x(m), data(m, (40,), w, low=-3, high=4))
        cases[f"Tensor.bincount[{d}]"] = lambda m, x=x: x(m).bincount(minlength=3)
    cases.update({
        "bincount(strided)": lambda m: m.bincount(data(m, (10, 4), "int64").t()[1]),
        "bincount(negative)": lambda m: m.bincount(m.tensor([0, -1])),
        "bincount(float)": lambda m: m.bincount(m.tensor([0.0, 1.0])),
        "bincount(bool)": lambda m: m.bincount(m.tensor([True, False])),
        "bincount(2-d)": lambda m: m.bincount(m.tensor([[1]])),
        "bincount(0-d)": lambda m: m.bincount(m.tensor(1)),
        "bincount(empty)": lambda m: m.bincount(m.zeros(0, dtype=m.int64)),
        "bincount(empty, weights, minlength)": lambda m: m.bincount(
            m.zeros(0, dtype=m.int64), m.zeros(0), minlength=3),
        "bincount(weights too short)": lambda m: m.bincount(m.tensor([1, 3]), m.tensor([1.0])),
        "bincount(2-d weights)": lambda m: m.bincount(m.tensor([1, 3]), m.tensor([[1.0, 2.0]])),
        "bincount(negative minlength)": lambda m: m.bincount(m.tensor([1, 3]), minlength=-1),
        "bincount(empty float)": lambda m: m.bincount(m.zeros(0)),
        "bincount(2-d float)": lambda m: m.bincount(m.zeros(1, 1)),
        "bincount(float, negative minlength)": lambda m: m.bincount(m.zeros(2), minlength=-1),
    })
    return cases


def _repeat_interleave_cases():
    cases = {}
    for d in DTYPES:
        for lo in ["contiguous", "transposed"]:
            k = f"[{d},{lo}]"
            x = lambda m, d=d, lo=lo: data(m, (3, 4), d, lo)  # noqa: E731
            cases["repeat_interleave(tensor, dim 0)" + k] = lambda m, x=x: x(m).repeat_interleave(
                m.tensor([1, 0, 3]), dim=0)
            cases["repeat_interleave(tensor, dim -1)" + k] = lambda m, x=x: m.repeat_interleave(
                x(m), m.tensor([2, 1, 0, 2], dtype=m.int32), dim=-1)
            cases["repeat_interleave(tensor, flat)" + k] = lambda m, x=x: x(m).repeat_interleave(
                m.arange(12) % 3)
            cases["repeat_interleave(int, dim 1)" + k] = lambda m, x=x: x(m).repeat_interleave(
                2, dim=1)
            cases["repeat_interleave(int)" + k] = lambda m, x=x: x(m).repeat_interleave(3)
    cases.update({
        "repeat_interleave(one-element tensor)": lambda m: m.tensor([[1, 2], [3, 4]])
        .repeat_interleave(m.tensor([2]), dim=1),
        "repeat_interleave(0-d tensor)": lambda m: m.tensor([[1, 2], [3, 4]])
        .repeat_interleave(m.tensor(2), dim=0),
        "repeat_interleave(counts only)": lambda m: m.repeat_interleave(m.tensor([1, 0, 3])),
        "repeat_interleave(int32 counts only)": lambda m: m.repeat_interleave(
            m.tensor([1, 0, 3], dtype=m.int32)),
        "repeat_interleave(negative, nothing to repeat)": lambda m: m.ones(0).repeat_interleave(
            m.tensor([-1]), dim=0),
        "repeat_interleave(strided, flat)": lambda m: m.arange(6).view(3, 2).t()
        .repeat_interleave(m.tensor([1, 0, 2, 1, 1, 3])),
        "repeat_interleave(counts only, 2-d)": lambda m: m.repeat_interleave(m.tensor([[1, 0]])),
        "repeat_interleave(counts only, 0-d)": lambda m: m.repeat_interleave(m.tensor(2)),
        "repeat_interleave(negative)": lambda m: m.ones(2, 2).repeat_interleave(
            m.tensor([1, -2]), dim=0),
        "repeat_interleave(negative int)": lambda m: m.ones(2, 2).repeat_interleave(-1),
        "repeat_interleave(float repeats)": lambda m: m.ones(2, 2).repeat_interleave(
            m.tensor([1.0, 2.0]), dim=0),
        "repeat_interleave(wrong length)": lambda m: m.ones(2, 2).repeat_interleave(
            m.tensor([1, 2, 3]), dim=0),
        "repeat_interleave(2-d repeats)": lambda m: m.ones(2, 2).repeat_interleave(
            m.tensor([[1, 2]]), dim=0),
        "repeat_interleave(dim out of range)": lambda m: m.ones(2, 2).repeat_interleave(2, dim=3),
        "repeat_interleave(tensor, dim out of range)": lambda m: m.ones(2, 2).repeat_interleave(
            m.tensor([1, 2]), dim=3),
        "repeat_interleave(output_size)": lambda m: m.ones(2, 2).repeat_interleave(
            m.tensor([1, 2]), dim=0, output_size=3),
        "repeat_interleave(wrong output_size)": lambda m: m.ones(2, 2).repeat_interleave(
            m.tensor([1, 2]), dim=0, output_size=4),
        "repeat_interleave(all zero)": lambda m: m.ones(2, 2).repeat_interleave(
            m.tensor([0, 0]), dim=0),
        "repeat_interleave(0-d self, dim 0)": lambda m: m.tensor(5.0).repeat_interleave(
            m.tensor([3]), dim=0),
        "repeat_interleave(0-d self, int, dim -1)": lambda m: m.tensor(5.0).repeat_interleave(
            3, dim=-1),
        "repeat_interleave(0-d self)": lambda m: m.tensor(5.0).repeat_interleave(m.tensor(3)),
    })
    return cases


CASES = {**_unique_cases(), **_bincount_cases(), **_repeat_interleave_cases()}

TOLERANCE = {torch.float16: 1e-2, torch.bfloat16: 1e-2, torch.float32: 1e-6, torch.float64: 1e-12}


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch(name, session):
    assert_matches_torch(CASES[name], TOLERANCE)


def test_unique_unsorted_holds_the_same_values_and_a_consistent_inverse(session):
    x = data(torch, (7, 5), "int64", low=-4, high=9)
    values, inverse, counts = tensord.unique(tensord.tensor(x), sorted=False,
                                             return_inverse=True, return_counts=True)
    want = torch.unique(x)
    assert sorted(as_torch(values).tolist()) == want.tolist()
    assert torch.equal(as_torch(values)[as_torch(inverse)], x)
    assert int(as_torch(counts).sum()) == x.numel()


@cpu_only("the order of torch's CPU kernel: the CPU backend's promise")
@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16", "int32", "int64", "bfloat16",
                                   "float32", "float64"])
def test_unique_unsorted_is_in_torchs_hash_order(dtype, session):
    """unique(sorted=False) gives torch's values in torch's order (its std::unordered_set's,
    whose buckets and collisions depend on the values and the element count), with its inverse
    and counts: few values in many elements, many values in few, a 2-d input (the inverse keeps
    its shape), 0.0 beside -0.0, and NaN (each one distinct, with torch's inverse 0 and count 0)."""
    tt, td = getattr(torch, dtype), getattr(tensord, dtype)
    g = torch.Generator().manual_seed(3)
    inputs = [torch.randint(0, 100, (1000,), generator=g), torch.randint(0, 100, (30,), generator=g),
              torch.randint(-5, 50, (6, 7), generator=g), torch.tensor([5, 3, 5, 7, 3, 100, 1])]
    if tt.is_floating_point:
        inputs.append(torch.tensor([0.0, 2.0, -0.0, 1.0, 0.0, -0.0]))
        inputs.append(torch.tensor([1.0, float("nan"), 2.0, float("nan"), 1.0]))
    for x in inputs:
        x = x.to(tt)
        if dtype == "bfloat16":  # bit for bit (torch's conversion makes NaN 0xFFFF here)
            y = tensord.tensor(x.view(torch.int16).numpy()).view(td)
        else:
            y = tensord.tensor(x.numpy())
        want = torch.unique(x, sorted=False, return_inverse=True, return_counts=True)
        got = tensord.unique(y, sorted=False, return_inverse=True, return_counts=True)
        for g_, w in zip(got, want):
            assert str(g_.dtype) == str(w.dtype) and tuple(g_.shape) == tuple(w.shape)
            gt = as_torch(g_)
            if w.is_floating_point():  # the bits: -0.0 where torch keeps -0.0, NaN where NaN
                gt, w = gt.float().view(torch.int32), w.float().view(torch.int32)
            assert torch.equal(gt, w), (x.tolist(), gt.tolist(), w.tolist())
        alone = as_torch(tensord.unique(y, sorted=False)).float()  # without inverse or counts
        assert torch.equal(alone.view(torch.int32),
                           torch.unique(x, sorted=False).float().view(torch.int32))


@cpu_only("the hash set of the CPU's unique(sorted=False)")
def test_unique_unsorted_charges_its_hash_set_to_the_session(session):
    """The hash set and maps of unique(sorted=False) live outside storages: a session whose
    limit they would pass is refused with RESOURCE_EXHAUSTED naming the op, and goes on."""
    import tensord_process  # noqa: PLC0415
    proc, address = tensord_process.start(f"--max_session_bytes={64 << 20}")
    try:
        s = tensord.connect(address, pipeline=False)
        big = tensord.arange(1 << 20, session=s)  # 8 MiB; its hash set would need about 96
        with pytest.raises(tensord.cuda.OutOfMemoryError, match="unique: its hash set"):
            big.unique(sorted=False)
        small = tensord.arange(1 << 16, session=s) % 1000
        values = small.unique(sorted=False)
        want = torch.unique(torch.arange(1 << 16) % 1000, sorted=False)
        assert torch.equal(as_torch(values), want)
        assert big.unique().numel() == 1 << 20  # sorted: storages only, within the limit
        s.close()
    finally:
        proc.terminate()
        proc.wait()


def test_unique_of_nan_keeps_each_nan(session):
    """Each NaN differs from every value, itself included: a value of its own, sorted last."""
    values, counts = tensord.unique(tensord.tensor([3.0, float("nan"), 1.0, float("nan"), 3.0]),
                                    return_counts=True)
    v = as_torch(values)
    assert v[:2].tolist() == [1.0, 3.0] and bool(v[2:].isnan().all()) and v.numel() == 4
    assert as_torch(counts).tolist() == [1, 2, 1, 1]


def test_large_unique_and_repeat_interleave_answer_in_one_call(session):
    """unique and repeat_interleave of large tensors answer in one call each, and big outputs
    come out right (the Python loops they replaced would take minutes here)."""
    import time  # noqa: PLC0415
    x = torch.randint(0, 1000, (2_000_000,))
    t = tensord.tensor(x)
    start = time.monotonic()
    values, counts = tensord.unique(t, return_counts=True)
    rep = tensord.repeat_interleave(t[:1000], tensord.tensor(torch.full((1000,), 500)))
    assert rep.shape == (500_000,)
    elapsed = time.monotonic() - start
    want_values, want_counts = torch.unique(x, return_counts=True)
    assert torch.equal(as_torch(values), want_values)
    assert torch.equal(as_torch(counts), want_counts)
    assert torch.equal(as_torch(rep), x[:1000].repeat_interleave(500))
    assert elapsed < 20, elapsed


def test_sizes_that_would_overflow_are_refused_not_wrapped(session):
    """torch 1.13 crashes on bincount of INT64_MAX and reports an overflowed storage size for
    these repeats; tensord refuses both with a RuntimeError naming the op."""
    with pytest.raises(RuntimeError, match="bincount"):
        tensord.bincount(tensordtensor_of([2**63 - 1]))
    with pytest.raises(RuntimeError, match="overflows"):
        tensord.ones(2).repeat_interleave(tensordtensor_of([2**62, 2**62]))
    tensord.synchronize()


def tensordtensor_of(values):
    return tensord.tensor(values, dtype=tensord.int64)


def test_the_cases_cover_every_dtype_and_both_layouts():
    for op in ["unique", "unique_consecutive", "repeat_interleave(tensor, dim 0)"]:
        names = [n for n in CASES if n.startswith(op + "[")]
        assert len(names) == 2 * len(DTYPES), (op, names)


MULTINOMIAL_ERRORS = {
    "1-d, 0-d input": lambda m: m.multinomial(m.tensor(1.0), 1),
    "3-d input": lambda m: m.multinomial(m.ones(2, 2, 2), 1),
    "int input": lambda m: m.multinomial(m.tensor([1, 2]), 1),
    "float16 input": lambda m: m.multinomial(m.tensor([1.0, 2.0]).half(), 1),
    "no samples": lambda m: m.multinomial(m.tensor([1.0, 2.0]), 0),
    "more than categories": lambda m: m.multinomial(m.tensor([1.0, 2.0]), 3),
    "negative weight": lambda m: m.multinomial(m.tensor([[1.0, 2.0], [1.0, -1.0]]), 1),
    "nan weight": lambda m: m.multinomial(m.tensor([1.0, float("nan")]), 1, True),
    "nan weight, without replacement": lambda m: m.multinomial(m.tensor([1.0, float("nan")]), 1),
    "infinite weight": lambda m: m.multinomial(m.tensor([1.0, float("inf")]), 1, True),
    "negative weight, with replacement": lambda m: m.multinomial(m.tensor([1.0, -1.0]), 1, True),
    "zero row, with replacement": lambda m: m.multinomial(m.tensor([0.0, 0.0]), 2, True),
    "zero row": lambda m: m.multinomial(m.tensor([[1.0, 2.0], [0.0, 0.0]]), 1),
}


@pytest.mark.parametrize("name", sorted(MULTINOMIAL_ERRORS))
def test_multinomial_refuses_as_torch_at_the_call(name, session):
    _, werr = outcome(lambda: MULTINOMIAL_ERRORS[name](torch))
    _, gerr = outcome(lambda: MULTINOMIAL_ERRORS[name](tensord))
    assert werr is not None and gerr is not None and gerr[0] == werr[0], (gerr, werr)
    assert werr[1] in gerr[1], (gerr, werr)
    tensord.synchronize()  # nothing left behind: the error was raised at the call


def test_multinomial_shapes_and_zero_weights(session):
    p = tensord.tensor([[0.0, 1.0, 0.0, 3.0], [2.0, 0.0, 0.0, 0.0]]).bfloat16()
    with_rep = as_torch(tensord.multinomial(p, 500, replacement=True))
    assert with_rep.shape == (2, 500) and with_rep.dtype == torch.int64
    assert set(with_rep[0].tolist()) == {1, 3} and set(with_rep[1].tolist()) == {0}
    without = as_torch(tensord.multinomial(p.float(), 2))
    assert sorted(without[0].tolist()) == [1, 3] and without[1, 0].item() == 0
    empty = tensord.multinomial(tensord.zeros(0, 3), 2)
    assert tuple(empty.shape) == (0, 2) and empty.dtype is tensord.int64
    assert tuple(tensord.multinomial(tensord.ones(5), 3).shape) == (3,)


# scatter_reduce of many elements into few bins whose combination is order-free (max and min of
# any dtype, NaN included; sums and products of integers): per-thread bins, combined in order,
# give exactly the serial result, which is torch's; floating sums stay serial, in torch's order.
@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16", "int64", "int16", "uint8"])
def test_scatter_reduce_into_few_bins_matches_torch(dtype, session):
    g = torch.Generator().manual_seed(5)
    n, bins = 200_003, 700
    where = torch.randint(0, bins, (n,), generator=g)
    if dtype in ("float32", "float64", "bfloat16"):
        values = (torch.randn(n, generator=g) * 100).to(getattr(torch, dtype))
        values[123_456] = float("nan")
        values[7] = -0.0
    else:
        values = torch.randint(0, 3, (n,), generator=g).to(getattr(torch, dtype))
    base = torch.zeros(bins, dtype=values.dtype)
    reduces = ["amax", "amin"] + ([] if values.dtype.is_floating_point else ["sum", "prod"])
    for reduce in reduces:
        for include_self in (True, False):
            want = base.scatter_reduce(0, where, values, reduce, include_self=include_self)
            got = tensord.tensor(base.float().numpy()).to(getattr(tensord, dtype)).scatter_reduce(
                0, tensord.tensor(where.numpy()),
                tensord.tensor(values.float().numpy()).to(getattr(tensord, dtype)), reduce,
                include_self=include_self)
            got = as_torch(got)
            assert got.dtype == want.dtype
            assert torch.equal(got.isnan(), want.isnan()), (reduce, include_self)
            assert torch.equal(got.nan_to_num(), want.nan_to_num()), (reduce, include_self)


# Many integers into few bins (the CPU's per-thread bins: 65,536 elements or more into at most
# 65,536 bins): exactly torch's counts and wrapped sums, a strided self and source, and, when
# indices are bad in both halves of the input, the error of the first one in order.
@pytest.mark.parametrize("dtype", ["int64", "int32", "int8", "uint8"])
def test_many_integers_into_few_bins_match_torch(dtype, session):
    def td(t):
        return tensord.tensor(t.contiguous().numpy())

    g = torch.Generator().manual_seed(11)
    n, bins = 100_003, 1000
    where = torch.randint(0, bins, (n,), generator=g)
    pairs = torch.randint(-100, 100, (n, 2), generator=g).to(getattr(torch, dtype))
    values = pairs[:, 1]  # every other element
    base = torch.randint(-5, 5, (bins,), generator=g).to(getattr(torch, dtype))
    for alpha in (1, 3):
        want = base.clone().index_add_(0, where, values, alpha=alpha)
        dense = td(base)
        strided = tensord.zeros(bins, 2, dtype=dense.dtype)[:, 1]
        strided.copy_(dense)
        for got in (dense, strided):
            got.index_add_(0, td(where), td(pairs)[:, 1], alpha=alpha)
            assert torch.equal(as_torch(got), want), (dtype, alpha)
    want = torch.zeros(bins, dtype=values.dtype).scatter_add_(0, where, values)
    got = tensord.zeros(bins, dtype=getattr(tensord, dtype)).scatter_add_(0, td(where), td(values))
    assert torch.equal(as_torch(got), want)
    if dtype == "int64":
        assert torch.equal(as_torch(tensord.bincount(td(where))), torch.bincount(where))
    bad = where.clone()
    bad[90_000], bad[20_000] = bins + 7, -3
    target = td(base)
    with pytest.raises(IndexError, match="index -3 is out of bounds for dimension 0 with size 1000"):
        target.index_add_(0, td(bad), td(values))
        tensord.synchronize()
