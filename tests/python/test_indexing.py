"""Advanced indexing (`x[index tensors]`, `x[mask]`, their assignments, index_put_) against
torch 1.13: one server op each (index.Tensor / index_put_, engine/ops/index_ops.cc), planned in
torch's way: ints, slices, None and Ellipsis as a view, masks as their nonzero() positions, an
int before the index tensors selecting its dim (torch's rule, not numpy's). An index past its
dim is found where the kernels run, as on a GPU: it raises torch's IndexError at the next
synchronize, and an assignment that fails writes nothing.

Layouts are not compared: tensord lays every indexing result out contiguously, torch in its
TensorIterator's order (see test_fuzz.py's check()); values, dtypes and shapes are."""
import numpy as np
import pytest
import torch

import tensord
from oracle import assert_matches_torch, outcome

BASE = np.arange(60, dtype=np.float32).reshape(3, 4, 5)


def X(m, layout="contiguous", dtype=None):
    x = m.tensor(BASE)
    if dtype is not None:
        x = x.to(dtype)
    if layout == "transposed":  # (5, 4, 3), strides (1, 5, 20)
        return x.permute(2, 1, 0)
    if layout == "sliced":      # (3, 2, 5), a view with an offset and a step
        return x[:, 1::2]
    if layout == "expanded":    # (2, 3, 4, 5), stride 0 along dim 0
        return x.expand(2, 3, 4, 5)
    return x


def i(m, *v, dtype=None):
    return m.tensor(list(v) if len(v) != 1 or not isinstance(v[0], list) else v[0],
                    dtype=dtype or m.int64)


def synced(m, value):
    """value, once tensord's kernels ran: an index past its dim raises here."""
    if m is tensord:
        tensord.synchronize()
    return value


KEYS = {  # name: key(m, x), x of shape (3, 4, 5) or another layout's
    "one index": lambda m, x: i(m, 0, 2),
    "negative": lambda m, x: i(m, -1, 0, -3),
    "2-d index": lambda m, x: i(m, [[0, 1], [2, 0]]),
    "0-d index tensor": lambda m, x: m.tensor(1),
    "empty index": lambda m, x: i(m, []),
    "after a slice": lambda m, x: (slice(None), i(m, 0, 3)),
    "after an int": lambda m, x: (1, i(m, 3, 0)),
    "int, slice, index (torch's order, not numpy's)": lambda m, x: (0, slice(None), i(m, 0, 1)),
    "two adjacent": lambda m, x: (i(m, 0, 1), i(m, 1, 2)),
    "two adjacent after a slice": lambda m, x: (slice(None), i(m, 0, 1), i(m, 1, 2)),
    "two apart": lambda m, x: (i(m, 0, 1), slice(None), i(m, 1, 2)),
    "three": lambda m, x: (i(m, 0, 2), i(m, 1, 3), i(m, 4, 0)),
    "broadcast apart": lambda m, x: (i(m, [[0], [2]]), slice(1, 3), i(m, [[1, 2]])),
    "broadcast adjacent": lambda m, x: (i(m, [[0], [2]]), i(m, [[1, 2, 3]])),
    "ellipsis": lambda m, x: (Ellipsis, i(m, 0, 4)),
    "None first": lambda m, x: (None, i(m, 0, 1), i(m, 1, 2)),
    "None between": lambda m, x: (i(m, 0, 1), None, i(m, 1, 2)),
    "step slice and index": lambda m, x: (slice(None, None, 2), i(m, 1, 2)),
    "a list": lambda m, x: [0, 2],
    "nested lists": lambda m, x: ([[0, 1]], [[2], [3]]),
    "a list of bools": lambda m, x: [True, False, True],
    "mask of all dims": lambda m, x: x > 30,
    "mask of the first dim": lambda m, x: m.tensor([True, False, True]),
    "mask of two dims": lambda m, x: x[..., 0] > 14,
    "mask after a slice": lambda m, x: (slice(None), m.tensor([False, True, True, False])),
    "mask and index": lambda m, x: (m.tensor([True, False, True]), slice(None), i(m, 1, 2)),
    "mask of no trues": lambda m, x: x < -1,
    "True": lambda m, x: True,
    "False": lambda m, x: False,
    "True and an index": lambda m, x: (True, i(m, 0, 2)),
    "0-d byte tensors": lambda m, x: (m.tensor(1, dtype=m.uint8), m.tensor(0, dtype=m.uint8)),
    "an empty list": lambda m, x: [],
    "a list of lists (a tuple, as torch reads it)": lambda m, x: [[0, 1], [1, 2]],
    "a list holding a slice (a tuple)": lambda m, x: [slice(None), [0, 2]],
    # Refused, as torch refuses them.
    "out of its dim": lambda m, x: i(m, 0, 3),
    "out of its dim, negative": lambda m, x: (slice(None), i(m, 0, -5)),
    "out of the second of two": lambda m, x: (i(m, 0, 1), i(m, 1, 9)),
    "int32 index": lambda m, x: i(m, 0, 1, dtype=m.int32),
    "float index": lambda m, x: m.tensor([0.0, 1.0]),
    "mask of the wrong shape": lambda m, x: m.tensor([True, False]),
    "too many indices": lambda m, x: (0, 0, 0, i(m, 0)),
    "shapes that do not broadcast": lambda m, x: (i(m, 0, 1), i(m, 0, 1, 2)),
}

LAYOUTS = ["contiguous", "transposed", "sliced", "expanded"]


def _cases():
    for name in KEYS:
        for layout in LAYOUTS:
            if layout != "contiguous" and "out of" in name:
                continue
            yield f"{name} [{layout}]", name, layout


CASES = {case: (name, layout) for case, name, layout in _cases()}


@pytest.mark.parametrize("case", sorted(CASES))
def test_getitem_matches_torch(case, session):
    name, layout = CASES[case]
    assert_matches_torch(lambda m: synced(m, (lambda x: x[KEYS[name](m, x)])(X(m, layout))),
                         strides=False)


def _assign(m, layout, name, value):
    x = X(m, layout).clone() if layout == "expanded" else X(m, layout)
    base = x
    x[KEYS[name](m, x)] = value(m) if callable(value) else value
    return synced(m, base)


VALUES = {
    "a number": -1.5,
    "an int": 7,
    "a bool": True,
    "a 0-d tensor": lambda m: m.tensor(-2.0),
    "a 0-d tensor of another dtype": lambda m: m.tensor(9),
    "a 1-element tensor of another dtype": lambda m: m.tensor([9]),
}


@pytest.mark.parametrize("value", sorted(VALUES))
@pytest.mark.parametrize("case", sorted(c for c in CASES if "[expanded]" not in c))
def test_setitem_matches_torch(case, value, session):
    name, layout = CASES[case]
    assert_matches_torch(lambda m: _assign(m, layout, name, VALUES[value]), strides=False)


SHAPED = {  # key name: a value of the indexing result's shape (or broadcast to it)
    "one index": lambda m: m.arange(40.0).reshape(2, 4, 5),
    "after a slice": lambda m: m.arange(6.0).reshape(3, 2, 1),
    "two apart": lambda m: -m.arange(8.0).reshape(2, 4),
    "broadcast apart": lambda m: m.arange(8.0).reshape(2, 2, 2, 1) * 10,
    "mask of the first dim": lambda m: m.arange(20).reshape(4, 5),
    "mask of all dims": lambda m: m.full((29,), 0.5),
    "a list": lambda m: m.ones(1, 1, 4, 5),  # leading unit dims dropped, as torch's setitem
    "int, slice, index (torch's order, not numpy's)": lambda m: m.arange(8.0).reshape(4, 2),
    "one index, a value that does not broadcast": lambda m: m.ones(3),
}


@pytest.mark.parametrize("name", sorted(SHAPED))
def test_setitem_of_a_tensor_matches_torch(name, session):
    key = name.split(", a value")[0]
    assert_matches_torch(lambda m: _assign(m, "contiguous", key, SHAPED[name]), strides=False)


INDEX_PUT = {
    "write": lambda m, x: x.index_put_((i(m, 0, 2),), m.tensor(5.0)),
    "two indices": lambda m, x: x.index_put_((i(m, 0, 2), i(m, 1, 1)), m.ones(5)),
    "accumulate repeated indices": lambda m, x: x.index_put_(
        (i(m, 0, 0, 2), i(m, 1, 1, 3)), m.tensor([1.0, 2.0, 4.0]).unsqueeze(1), accumulate=True),
    "accumulate a mask": lambda m, x: x.index_put_((x > 50,), m.tensor(100.0), True),
    "out of place": lambda m, x: x.index_put((i(m, 1),), m.tensor(0.0)),
    "torch.index_put": lambda m, x: m.index_put(x, (i(m, 2),), m.tensor(3.0), True),
    "a list of indices": lambda m, x: x.index_put_([i(m, 1)], m.tensor(3.0)),
    "dtypes differ": lambda m, x: x.index_put_((i(m, 0),), m.tensor(1)),
    "values not a tensor": lambda m, x: x.index_put_((i(m, 0),), 1.0),
    "None among the indices": lambda m, x: x.index_put_((None, i(m, 0)), m.tensor(1.0)),
    "out of its dim": lambda m, x: x.index_put_((i(m, 0), i(m, 4)), m.tensor(1.0)),
    "values that do not broadcast": lambda m, x: x.index_put_((i(m, 0, 1),), m.ones(3)),
    "0-d index tensors": lambda m, x: x.index_put_((m.tensor(1), m.tensor(-1)), m.tensor(5.0)),
    "values overlapping self": lambda m, x: x.index_put_((i(m, 1, 2),), x[0]),
    "setitem of values overlapping self": lambda m, x: (x.__setitem__(([1, 2],), x[0]), x)[1],
}


@pytest.mark.parametrize("name", sorted(INDEX_PUT))
def test_index_put_matches_torch(name, session):
    assert_matches_torch(lambda m: synced(m, INDEX_PUT[name](m, X(m))), strides=False)


EMPTY = {  # torch checks indices only when there is something to gather, except into a dim of 0
    "nothing to gather: no check": lambda m: m.zeros(3, 2, 0)[i(m, -4, 5)],
    "nothing to gather, two indices": lambda m: m.zeros(3, 0, 2)[i(m, 7), :, i(m, 0)],
    "an empty index": lambda m: m.zeros(3, 0)[i(m, [])],
    "into a dim of size 0": lambda m: m.zeros(0, 3)[i(m, 0)],
    "into a dim of size 0 after a slice": lambda m: m.zeros(2, 0)[:, i(m, 1, 2)],
    "assigning where there is nothing": lambda m: m.zeros(3, 2, 0).index_put_(
        (i(m, 9),), m.tensor(1.0)),
    "into a dim of size 0, no indices": lambda m: m.zeros(0, 3)[i(m, 0), i(m, [])],
    "index_fill_ into nothing": lambda m: m.zeros(0, 3).index_fill_(1, i(m, 5), 1.0),
    "index_copy_ into nothing": lambda m: m.zeros(0, 3).index_copy_(1, i(m, 7), m.zeros(0, 1)),
}


@pytest.mark.parametrize("name", sorted(EMPTY))
def test_empty_results_match_torch(name, session):
    assert_matches_torch(lambda m: synced(m, EMPTY[name](m)), strides=False)


def test_a_bad_index_raises_at_synchronize_and_leaves_the_session_usable(session):
    x = tensord.arange(12).reshape(3, 4)
    y = x[tensord.tensor([0, 7])]  # planned: its shape is known at once
    assert tuple(y.shape) == (2, 4)
    with pytest.raises(IndexError, match="index 7 is out of bounds for dimension 0 with size 3"):
        tensord.synchronize()
    assert x[tensord.tensor([2, -3])].tolist() == [[8, 9, 10, 11], [0, 1, 2, 3]]
    other = tensord.arange(4)
    x[tensord.tensor([1, 5])] = -1  # fails where it runs: x, its output, holds the error
    with pytest.raises(IndexError, match="index 5 is out of bounds for dimension 0 with size 3"):
        tensord.synchronize()
    with pytest.raises(IndexError, match="index_put_.*index 5 is out of bounds"):
        x.tolist()
    assert (other * 2).tolist() == [0, 2, 4, 6]  # other tensors are untouched


def test_indexing_a_large_tensor_builds_no_table_of_positions_in_the_client(session):
    """Advanced indexing runs on the server: the client allocates nothing the size of the
    indexed tensor (a table of its 16M positions would be 128 MiB), only its few indices."""
    import tracemalloc  # noqa: PLC0415 - numpy reports its allocations to tracemalloc
    x = tensord.zeros(4096, 4096)
    idx = tensord.tensor([3, 4095, -1])
    tensord.synchronize()
    tracemalloc.start()
    try:
        x[idx, 7] = 2.0
        picked = x[idx][:, 7]
        columns = x[:, idx]
        x[x > 1] = 3.0
        tensord.synchronize()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 << 20, peak
    assert picked.tolist() == [2.0, 2.0, 2.0]
    assert columns.shape == (4096, 3) and columns[7].tolist() == [0.0, 0.0, 0.0]
    assert x.sum().item() == 6.0


# index_select's out-of-range indices (negative ones included: torch 1.13's CPU kernels take
# none) raise as torch 1.13's: a RuntimeError naming the index and size along dim 1 of two dims
# or more (its dim-1 kernel), else an IndexError; an empty self is checked too.
INDEX_SELECT_SELVES = {
    "1-d": (lambda t: t.arange(10.0), 0),
    "0-d": (lambda t: t.tensor(3.0), 0),
    "2-d dim 0": (lambda t: t.ones(4, 5), 0),
    "2-d dim 1": (lambda t: t.ones(4, 5), 1),
    "2-d int64 dim 1 transposed": (lambda t: t.arange(20).view(5, 4).t(), 1),
    "3-d dim 1": (lambda t: t.ones(2, 4, 5, dtype=t.float16), 1),
    "3-d dim 2 strided": (lambda t: t.ones(2, 4, 10)[..., ::2], 2),
    "empty 2-d dim 1": (lambda t: t.ones(0, 5), 1),
}


@pytest.mark.parametrize("index", [[-1], [100], [1, -1], [2, 7, 5],
                                   # long enough to be checked by several threads: the first bad
                                   # one in order is named
                                   [0] * 200_000 + [7] + [0] * 100_000 + [-1] + [9] * 5],
                         ids=["-1", "100", "1,-1", "2,7,5", "long"])
@pytest.mark.parametrize("name", sorted(INDEX_SELECT_SELVES))
def test_index_select_out_of_range_raises_torchs_error(name, index, session):
    make, dim = INDEX_SELECT_SELVES[name]
    if name == "0-d" and len(index) > 100:  # torch 1.13 aborts reading past its one element
        _, gerr = outcome(lambda: synced(tensord, tensord.index_select(
            make(tensord), dim, tensord.tensor(index))))
        assert gerr is not None and gerr[0] == "IndexError", gerr
        assert "Index to scalar can have only 1 value" in gerr[1], gerr
        return
    results = []
    for t in (torch, tensord):
        results.append(outcome(lambda: synced(t, t.index_select(make(t), dim, t.tensor(index)))))
    (want, werr), (got, gerr) = results
    if werr is None:
        assert gerr is None, gerr
        assert torch.equal(want, torch.tensor(got.cpu().numpy()))
        return
    assert gerr is not None and gerr[0] == werr[0], (gerr, werr)
    if name == "0-d" and len(index) > 1:  # refused whatever the indices (README: differences)
        assert "Index to scalar can have only 1 value" in gerr[1], gerr
        return
    assert werr[1] in gerr[1], (gerr, werr)
