"""tensord.utils.data against torch 1.13's torch.utils.data: datasets (map-style and iterable,
Concat / Chain / Subset / random_split), samplers, DataLoader (batching, batch_size=None's
default_convert, argument checks, len, workers) and the submodules dataset, sampler and
dataloader. What the loaders yield is compared with torch's: containers, dtypes and values."""
import collections
import math
import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest
import torch

import tensord
import tensord.utils.data
import tensord.utils.data.dataloader
import tensord.utils.data.dataset
import tensord.utils.data.sampler
from oracle import as_torch

TD = tensord.utils.data
TO = torch.utils.data


def _structure(x):
    """A batch's containers and leaves, comparable across torch and tensord: tensors as their
    dtype, shape and values; containers keep their types (list, tuple, dict, namedtuple)."""
    if isinstance(x, (torch.Tensor, tensord.Tensor)):
        t = as_torch(x)
        return ("tensor", str(t.dtype).replace("torch.", ""), tuple(t.shape), t.tolist())
    if isinstance(x, np.ndarray):
        return ("ndarray", str(x.dtype), x.tolist())
    if isinstance(x, dict):
        return (type(x).__name__, {k: _structure(v) for k, v in x.items()})
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return (type(x).__name__, tuple(_structure(v) for v in x))
    if isinstance(x, (list, tuple)):
        return type(x)(_structure(v) for v in x)
    return (type(x).__name__, x)


def _outcome(fn):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return _structure(fn()), None
    except Exception as e:  # noqa: BLE001 - the class and message are compared
        return None, (type(e).__name__, str(e))


def _both(case):
    """case(torch.utils.data, torch) and case(tensord.utils.data, tensord): outcomes compared."""
    want = _outcome(lambda: case(TO, torch))
    got = _outcome(lambda: case(TD, tensord))
    assert got == want


def _range_dataset(data_mod):
    class Range(data_mod.IterableDataset):
        def __init__(self, start, end, with_len=False):
            self.start, self.end, self.with_len = start, end, with_len

        def __iter__(self):
            return iter(range(self.start, self.end))

        def __len__(self):
            if not self.with_len:
                raise TypeError(f"object of type '{type(self).__name__}' has no len()")
            return self.end - self.start
    return Range


# ---- names ---------------------------------------------------------------------------------------

NOT_PORTED = {  # datapipes, DataLoader2, the distributed sampler and communication
    "DFIterDataPipe", "DataChunk", "DataLoader2", "DistributedSampler", "IterDataPipe",
    "MapDataPipe", "argument_validation", "collate", "communication", "functional_datapipe",
    "guaranteed_datapipes_determinism", "non_deterministic", "runtime_validation",
    "runtime_validation_disabled"}


def test_names_and_submodules_are_torchs():
    assert set(TD.__all__) == set(TO.__all__) - NOT_PORTED
    for name in TD.__all__:
        assert getattr(TD, name) is not None
    for sub in ("dataset", "sampler", "dataloader"):
        want, got = getattr(TO, sub), getattr(TD, sub)
        assert got.__all__ == want.__all__
        for name in want.__all__:
            assert getattr(got, name) is getattr(TD, name)
    from tensord.utils.data.dataloader import (DataLoader, default_collate,  # noqa: F401
                                               default_convert, get_worker_info)
    from tensord.utils.data._utils.collate import collate, default_collate_fn_map  # noqa: F401
    # Generic, as torch's: the classes take type arguments in annotations and base lists.
    for name in ("Dataset", "IterableDataset", "Sampler", "DataLoader"):
        getattr(TD, name)[int]

    class Ints(TD.Dataset[int]):
        def __getitem__(self, i):
            return i
    assert Ints()[3] == 3


# ---- datasets -----------------------------------------------------------------------------------

@pytest.mark.parametrize("case", [
    lambda d, t: d.Dataset()[0],
    lambda d, t: len(d.Dataset()),
    lambda d, t: list(d.IterableDataset()),
    lambda d, t: list(d.Sampler(None)),
    lambda d, t: len(d.Sampler(None)),
    lambda d, t: type(d.Dataset() + d.Dataset()).__name__,
    lambda d, t: d.ConcatDataset([]),
    lambda d, t: d.ConcatDataset([range(3), _range_dataset(d)(0, 2)]),
    lambda d, t: [d.ConcatDataset([range(3), range(10, 12)])[i] for i in (0, 2, 3, 4, -1, -5)],
    lambda d, t: d.ConcatDataset([range(3), range(10, 12)])[5],
    lambda d, t: d.ConcatDataset([range(3), range(10, 12)])[-6],
    lambda d, t: d.ConcatDataset([range(3), range(10, 12)]).cumulative_sizes,
    lambda d, t: len(d.ConcatDataset([range(3), range(10, 12)])),
    lambda d, t: list(d.ChainDataset([_range_dataset(d)(0, 2), _range_dataset(d)(5, 8)])),
    lambda d, t: len(d.ChainDataset([_range_dataset(d)(0, 2, True), _range_dataset(d)(5, 8, True)])),
    lambda d, t: len(d.ChainDataset([_range_dataset(d)(0, 2, True), range(3)])),
    lambda d, t: list(d.ChainDataset([_range_dataset(d)(0, 2), range(3)])),
    lambda d, t: list(_range_dataset(d)(0, 2) + _range_dataset(d)(7, 9)),
    lambda d, t: type(_range_dataset(d)(0, 2) + _range_dataset(d)(7, 9)).__name__,
    lambda d, t: [d.Subset(range(10, 20), [5, 1, 3])[i] for i in range(3)],
    lambda d, t: len(d.Subset(range(10, 20), [5, 1, 3])),
    lambda d, t: d.Subset(d.TensorDataset(t.arange(10) * 2), [5, 1, 3])[[0, 2]],
    lambda d, t: d.Subset(range(10), [5, 1])[[0, 1]],
    lambda d, t: d.TensorDataset(t.arange(3), t.arange(4)),
    lambda d, t: d.TensorDataset(t.arange(6).view(3, 2), t.arange(3.0))[1],
    lambda d, t: len(d.TensorDataset(t.arange(6).view(3, 2), t.arange(3.0))),
], ids=lambda c: None)
def test_datasets_as_torchs(case, session):
    _both(case)


@pytest.mark.parametrize("lengths", [
    [3, 7], [10, 0], [0.3, 0.3, 0.4], [0.25, 0.25, 0.5], [0.5, 0.5], [1 / 3] * 3, [0.1, 0.9],
    [0.05, 0.95], [3, 3], [1.5, -0.5], [0.5, 0.4], [1.0]])
def test_random_split_lengths_and_fractions_as_torchs(lengths, session):
    def case(d, t):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            parts = d.random_split(range(10), lengths, generator=t.Generator().manual_seed(0))
        assert sorted(sum((list(p) for p in parts), [])) == list(range(10))
        return [len(p) for p in parts], [str(w.message) for w in caught]
    _both(case)


def test_random_split_is_seeded(session):
    data = TD.TensorDataset(tensord.arange(20))

    def split(seed):
        parts = TD.random_split(data, [0.5, 0.3, 0.2], generator=tensord.Generator().manual_seed(seed))
        return [list(p.indices) for p in parts]
    assert split(3) == split(3) and split(3) != split(4)
    assert [len(p) for p in split(3)] == [10, 6, 4]
    assert sorted(sum(split(3), [])) == list(range(20))
    tensord.manual_seed(9)
    a = [list(p.indices) for p in TD.random_split(range(8), [4, 4])]
    tensord.manual_seed(9)
    assert a == [list(p.indices) for p in TD.random_split(range(8), [4, 4])]


# ---- samplers -----------------------------------------------------------------------------------

@pytest.mark.parametrize("case", [
    lambda d, t: list(d.SequentialSampler(range(5))),
    lambda d, t: len(d.SequentialSampler(range(5))),
    lambda d, t: sorted(d.RandomSampler(range(7))),
    lambda d, t: len(d.RandomSampler(range(7), num_samples=3)),
    lambda d, t: len(list(d.RandomSampler(range(4), num_samples=10))),
    lambda d, t: sorted(d.RandomSampler(range(4), num_samples=8)),
    lambda d, t: len(list(d.RandomSampler(range(4), replacement=True, num_samples=50))),
    lambda d, t: {type(i).__name__ for i in d.RandomSampler(range(4), replacement=True)},
    lambda d, t: {type(i).__name__ for i in d.RandomSampler(range(4))},
    lambda d, t: d.RandomSampler(range(3), num_samples=0),
    lambda d, t: d.RandomSampler([]),
    lambda d, t: d.RandomSampler(range(3), num_samples=2.0),
    lambda d, t: d.RandomSampler(range(3), num_samples=-1),
    lambda d, t: d.RandomSampler(range(3), replacement=1),
    lambda d, t: d.RandomSampler(range(3), replacement=None),
    lambda d, t: sorted(d.SubsetRandomSampler([5, 6, 9])),
    lambda d, t: len(d.SubsetRandomSampler([5, 6, 9])),
    lambda d, t: {type(i).__name__ for i in d.SubsetRandomSampler([5, 6, 9])},
    lambda d, t: sorted(d.WeightedRandomSampler([0.1, 0.9, 0.4, 0.7, 3.0, 0.6], 6, replacement=False)),
    lambda d, t: set(d.WeightedRandomSampler([0, 1.0, 0, 2.0], 40)) <= {1, 3},
    lambda d, t: len(d.WeightedRandomSampler([1, 2], 7)),
    lambda d, t: {type(i).__name__ for i in d.WeightedRandomSampler([1, 2], 7)},
    lambda d, t: d.WeightedRandomSampler([1, 2], 3).weights,
    lambda d, t: d.WeightedRandomSampler([1, 2], 0),
    lambda d, t: d.WeightedRandomSampler([1, 2], True),
    lambda d, t: d.WeightedRandomSampler([1, 2], 2, replacement=1),
    lambda d, t: d.WeightedRandomSampler([[1, 2]], 2),
    lambda d, t: list(d.BatchSampler(d.SequentialSampler(range(10)), 3, False)),
    lambda d, t: list(d.BatchSampler(d.SequentialSampler(range(10)), 3, True)),
    lambda d, t: list(d.BatchSampler(range(4), 2, True)),
    lambda d, t: [len(d.BatchSampler(range(n), 3, dl)) for n in (0, 1, 3, 4, 9, 10)
                  for dl in (False, True)],
    lambda d, t: d.BatchSampler(range(3), 0, False),
    lambda d, t: d.BatchSampler(range(3), -2, False),
    lambda d, t: d.BatchSampler(range(3), True, False),
    lambda d, t: d.BatchSampler(range(3), 2.0, False),
    lambda d, t: d.BatchSampler(range(3), 2, 1),
    lambda d, t: d.BatchSampler(range(3), 2, None),
], ids=lambda c: None)
def test_samplers_as_torchs(case, session):
    _both(case)


def test_weighted_sampler_errors_are_torchs_classes(session):
    for weights, n, replacement in (([1, 2], 3, False), ([0, 0], 3, True), ([-1, 2], 3, True)):
        with pytest.raises(RuntimeError) as want:
            list(TO.WeightedRandomSampler(weights, n, replacement))
        with pytest.raises(RuntimeError) as got:
            list(TD.WeightedRandomSampler(weights, n, replacement))
        assert str(want.value) in str(got.value)


def test_random_samplers_are_seeded(session):
    def draws(make):
        return [list(make(tensord.Generator().manual_seed(s))) for s in (1, 1, 2)]
    for make in (lambda g: TD.RandomSampler(range(20), generator=g),
                 lambda g: TD.RandomSampler(range(5), num_samples=13, generator=g),
                 lambda g: TD.RandomSampler(range(20), replacement=True, num_samples=30, generator=g),
                 lambda g: TD.SubsetRandomSampler(list(range(100, 120)), generator=g),
                 lambda g: TD.WeightedRandomSampler([1.0] * 20, 15, generator=g),
                 lambda g: TD.WeightedRandomSampler([1.0] * 20, 15, replacement=False, generator=g)):
        a, b, c = draws(make)
        assert a == b and a != c
    # A sampler's generator moves on: the next epoch is another order.
    s = TD.RandomSampler(range(20), generator=tensord.Generator().manual_seed(1))
    assert list(s) != list(s)
    # Without a generator, the default generator (seeded by manual_seed) decides.
    tensord.manual_seed(5)
    a = list(TD.RandomSampler(range(20)))
    tensord.manual_seed(5)
    assert a == list(TD.RandomSampler(range(20))) and sorted(a) == list(range(20))


def test_shuffled_loader_is_seeded(session):
    data = TD.TensorDataset(tensord.arange(20), tensord.arange(20.0) * 2)

    def epochs(seed):
        loader = TD.DataLoader(data, batch_size=6, shuffle=True,
                               generator=tensord.Generator().manual_seed(seed))
        return [[b[0].tolist() for b in loader] for _ in range(2)]
    a = epochs(3)
    assert a == epochs(3) and a != epochs(4) and a[0] != a[1]
    assert [len(b) for b in a[0]] == [6, 6, 6, 2]
    assert sorted(sum(a[0], [])) == list(range(20))


# ---- DataLoader ---------------------------------------------------------------------------------

LOADER_ARGS = [{}, {"batch_size": 2}, {"batch_size": 2, "drop_last": True}, {"batch_size": 3},
               {"batch_size": None}, {"batch_size": 10}]


@pytest.mark.parametrize("kwargs", LOADER_ARGS, ids=str)
def test_iterable_dataset_loader_as_torchs(kwargs, session):
    _both(lambda d, t: list(d.DataLoader(_range_dataset(d)(3, 8), **kwargs)))
    _both(lambda d, t: len(d.DataLoader(_range_dataset(d)(3, 8), **kwargs)))
    _both(lambda d, t: len(d.DataLoader(_range_dataset(d)(3, 8, True), **kwargs)))
    _both(lambda d, t: list(d.DataLoader(
        d.ChainDataset([_range_dataset(d)(0, 3), _range_dataset(d)(10, 12)]), **kwargs)))

    def tensors(d, t):
        class Rows(d.IterableDataset):
            def __iter__(self):
                for i in range(5):
                    yield {"x": t.arange(3.0) + i, "y": (i, float(i), "s%d" % i)}
        return list(d.DataLoader(Rows(), **kwargs))
    _both(tensors)


def test_iterable_dataset_length_warning_as_torchs(session):
    def case(d, t):
        class Lying(d.IterableDataset):
            def __iter__(self):
                return iter(range(5))

            def __len__(self):
                return 3
        loader = d.DataLoader(Lying(), batch_size=None)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            n = len(loader)
            items = list(loader)
        return n, items, [str(w.message).split(" was reported")[1] for w in caught]
    _both(case)


SAMPLES = [
    np.arange(3), np.arange(6, dtype=np.float32).reshape(2, 3), np.float64(2.5), np.int32(7),
    np.uint8(3), np.bool_(True), np.array(4, dtype=np.int16), np.array(["a", "b"]),
    (np.int64(1), 2.5, "s"), [np.arange(2), 3], {"a": np.float32(1.5), "b": (1, 2)},
    collections.OrderedDict(k=np.arange(2)), collections.namedtuple("P", "x y")(np.int32(1), [2]),
    3, 2.5, "text", b"bytes", None, range(3)]


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda s: type(s).__name__)
def test_batch_size_none_applies_default_convert(sample, session):
    _both(lambda d, t: list(d.DataLoader([sample, sample], batch_size=None)))
    _both(lambda d, t: d.default_convert(sample))
    _both(lambda d, t: d.DataLoader([sample], batch_size=None).collate_fn.__name__)


@pytest.mark.parametrize("batch", [
    [0, 1, 2], [True, False], [0.5, 1.5], ["a", "b"], [b"a", b"b"],
    [np.float32(1), np.float32(2)], [np.int32(1), np.float64(2)], [np.bool_(1), np.bool_(0)],
    [np.arange(2, dtype=np.int32)[None]] * 2, [np.array(1.0)] * 2, [np.array(["a"])] * 2,
    [(0, 1), (2, 3)], [[0, 1], [2, 3]], [[1, 2], [3]], [{"A": 0, "B": 1.0}, {"A": 100, "B": 2.0}],
    [collections.namedtuple("P", "x y")(1, 2.0), collections.namedtuple("P", "x y")(3, 4.0)],
    [object(), object()], [None, None], [{"n": "a", "t": (1, "x")}, {"n": "b", "t": (2, "y")}],
], ids=lambda b: type(b[0]).__name__)
def test_default_collate_as_torchs(batch, session):
    _both(lambda d, t: d.default_collate(batch))


def test_default_collate_stacks_tensors(session):
    _both(lambda d, t: d.default_collate([t.arange(6.0).view(2, 3) + i for i in range(4)]))
    _both(lambda d, t: d.default_collate([(t.arange(2), t.tensor(i, dtype=t.int16))
                                          for i in range(3)]))
    _both(lambda d, t: d.default_convert([t.arange(2), (t.tensor(1.5), np.arange(2))]))
    _both(lambda d, t: list(d.DataLoader(d.TensorDataset(t.arange(12).view(6, 2),
                                                         t.arange(6.0)), batch_size=4)))


def _loader_case(kwargs, make_dataset=lambda d, t: list(range(7))):
    return lambda d, t: d.DataLoader(make_dataset(d, t), **kwargs)


@pytest.mark.parametrize("kwargs", [
    {"num_workers": -1}, {"timeout": -1}, {"timeout": -0.5}, {"prefetch_factor": 3},
    {"prefetch_factor": 2}, {"persistent_workers": True},
    {"persistent_workers": True, "num_workers": 1}, {"prefetch_factor": 4, "num_workers": 1},
    {"batch_size": None, "drop_last": True}, {"batch_size": 0}, {"batch_size": -1},
    {"batch_size": 2.0}, {"batch_size": True}, {"drop_last": 1},
    {"sampler": [0, 1], "shuffle": True}, {"batch_sampler": [[0]], "batch_size": 2},
    {"batch_sampler": [[0]], "shuffle": True}, {"batch_sampler": [[0]], "sampler": [0]},
    {"batch_sampler": [[0]], "drop_last": True}, {"multiprocessing_context": "fork"},
    {"multiprocessing_context": "nonsense", "num_workers": 1},
    {"multiprocessing_context": 3, "num_workers": 1},
], ids=str)
def test_loader_arguments_checked_as_torchs(kwargs, session):
    _both(lambda d, t: type(_loader_case(kwargs)(d, t)).__name__)


@pytest.mark.parametrize("kwargs", [{"shuffle": True}, {"shuffle": False}, {"shuffle": None},
                                    {"sampler": [1]}, {"batch_sampler": [[1]]}], ids=str)
def test_iterable_dataset_loader_arguments_as_torchs(kwargs, session):
    _both(lambda d, t: type(d.DataLoader(_range_dataset(d)(0, 3), **kwargs)).__name__)


def test_loader_attributes_as_torchs(session):
    def attrs(loader):
        return (loader.batch_size, loader.drop_last, type(loader.sampler).__name__,
                type(loader.batch_sampler).__name__, loader.collate_fn.__name__,
                loader.num_workers, loader.timeout, loader.prefetch_factor, loader._auto_collation,
                loader.persistent_workers, loader.pin_memory, loader.generator is None)
    for kwargs in ({}, {"shuffle": True}, {"batch_size": None}, {"batch_sampler": [[3, 1], [0]]},
                   {"batch_size": 3, "drop_last": True}, {"num_workers": 2}):
        _both(lambda d, t: attrs(d.DataLoader(list(range(5)), **kwargs)))
    _both(lambda d, t: attrs(d.DataLoader(_range_dataset(d)(0, 3))))
    _both(lambda d, t: list(d.DataLoader(list(range(5)), batch_sampler=[[3, 1], [0]])))
    _both(lambda d, t: len(d.DataLoader(list(range(5)), batch_sampler=[[3, 1], [0]])))
    _both(lambda d, t: list(d.DataLoader(list(range(5)), sampler=[3, 1], batch_size=None)))
    _both(lambda d, t: [len(d.DataLoader(list(range(n)), batch_size=b, drop_last=dl))
                        for n in (0, 1, 5, 6) for b in (1, 2, 3, None) for dl in (False, True)
                        if not (b is None and dl)])
    _both(lambda d, t: type(iter(d.DataLoader(list(range(5))))).__name__)
    _both(lambda d, t: type(iter(d.DataLoader(list(range(5)), num_workers=1))).__name__)
    _both(lambda d, t: len(iter(d.DataLoader(list(range(5)), batch_size=2))))
    _both(lambda d, t: list(d.DataLoader(list(range(3)), timeout=1)))


@pytest.mark.parametrize("attr", ["batch_size", "batch_sampler", "sampler", "drop_last",
                                  "dataset", "persistent_workers", "num_workers", "timeout",
                                  "collate_fn", "worker_init_fn", "pin_memory"])
def test_loader_attributes_fixed_after_init_as_torchs(attr, session):
    def case(d, t):
        loader = d.DataLoader(list(range(4)), batch_size=2)
        setattr(loader, attr, getattr(loader, attr))
        return getattr(loader, attr) is not None
    _both(case)


def test_worker_info_is_none_in_the_main_process(session):
    _both(lambda d, t: d.get_worker_info())

    class Info(TD.Dataset):
        def __len__(self):
            return 3

        def __getitem__(self, i):
            return TD.get_worker_info()
    assert list(TD.DataLoader(Info(), batch_size=None)) == [None] * 3
    info = TD._utils.worker.WorkerInfo(id=0, num_workers=2, seed=5, dataset=None)
    assert repr(info) == "WorkerInfo(id=0, num_workers=2, seed=5, dataset=None)"
    with pytest.raises(RuntimeError, match="Cannot assign attributes to WorkerInfo objects"):
        info.id = 1


WORKERS_SCRIPT = textwrap.dedent("""
    import math, os, sys, warnings
    warnings.simplefilter("ignore")
    if os.environ.get("AS_TENSORD"):
        import tensord as torch, tensord.utils.data
    else:
        import torch
    D = torch.utils.data

    class R(D.IterableDataset):
        def __init__(self, start, end, split):
            self.start, self.end, self.split = start, end, split

        def __iter__(self):
            info = D.get_worker_info()
            a, b = self.start, self.end
            if self.split and info is not None:
                per = int(math.ceil((b - a) / info.num_workers))
                a = a + info.id * per
                b = min(a + per, b)
            return iter(range(a, b))

    def init_fn(worker_id):
        info = D.get_worker_info()
        ds = info.dataset
        per = int(math.ceil((ds.end - ds.start) / float(info.num_workers)))
        ds.start = ds.start + worker_id * per
        ds.end = min(ds.start + per, ds.end)

    class Info(D.Dataset):
        def __len__(self):
            return 5

        def __getitem__(self, i):
            w = D.get_worker_info()
            return (i, -1 if w is None else w.id, -1 if w is None else w.num_workers,
                    w is None or isinstance(w.seed, int), w is None or w.dataset is not self)

    def show(x):
        if isinstance(x, (list, tuple)):
            return [show(v) for v in x]
        return x.tolist() if hasattr(x, "tolist") else x

    def tensors(n):
        return D.TensorDataset(torch.arange(n * 2).view(n, 2), torch.arange(n) * 1.5)

    print(show(list(D.DataLoader(R(3, 10, True), num_workers=2))))
    print(show(list(D.DataLoader(R(3, 10, True), num_workers=3, batch_size=2))))
    print(show(list(D.DataLoader(R(3, 10, True), num_workers=3, batch_size=2, drop_last=True))))
    print(show(list(D.DataLoader(R(3, 7, False), num_workers=2))))
    print(show(list(D.DataLoader(R(3, 7, False), num_workers=2, worker_init_fn=init_fn))))
    print(show(list(D.DataLoader(R(3, 7, False), num_workers=5, worker_init_fn=init_fn))))
    print(show(list(D.DataLoader(R(3, 7, True), num_workers=2, batch_size=None))))
    print(show(list(D.DataLoader(list(range(10)), num_workers=3, batch_size=3))))
    print(show(list(D.DataLoader(tensors(7), num_workers=2, batch_size=3))))
    print(show(list(D.DataLoader(tensors(7), num_workers=2, batch_size=3, drop_last=True))))
    print(show(list(D.DataLoader(Info(), num_workers=2, batch_size=None))))
    print(show(list(D.DataLoader(Info(), num_workers=2, batch_size=2))))
    print(show(list(D.DataLoader(Info(), num_workers=0, batch_size=2))))
    ds = R(0, 5, False)
    loader = D.DataLoader(ds, num_workers=2, persistent_workers=True, worker_init_fn=init_fn)
    print(show(list(loader)), show(list(loader)), ds.start, ds.end)
    print(D.get_worker_info())
""")


def test_workers_yield_what_torchs_do(server, session, tmp_path):
    """num_workers > 0 (run in this process in tensord, in subprocesses in torch): the same
    batches, in the same order, and the same get_worker_info() in the dataset and in
    worker_init_fn. torch's side runs in a subprocess of its own (no gRPC there to fork)."""
    script = tmp_path / "workers.py"
    script.write_text(WORKERS_SCRIPT)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, PYTHONPATH=os.path.join(root, "client", "python"),
               TENSORD_ADDRESS=server)
    outputs = []
    for extra in ({}, {"AS_TENSORD": "1"}):
        proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                              env=dict(env, **extra), timeout=300)
        assert proc.returncode == 0, proc.stderr
        outputs.append(proc.stdout)
    want, got = outputs
    assert got == want
    assert "[[3], [7], [4], [8], [5], [9], [6]]" in got


def test_workers_give_the_batches_of_num_workers_0(session):
    data = TD.TensorDataset(tensord.arange(40).view(20, 2), tensord.arange(20.0))
    for kwargs in ({"batch_size": 3}, {"batch_size": 4, "drop_last": True}, {"batch_size": None},
                   {"batch_size": 6, "shuffle": True}):
        def run(workers):
            if kwargs.get("shuffle"):
                kwargs["generator"] = tensord.Generator().manual_seed(2)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return [_structure(b) for b in TD.DataLoader(data, num_workers=workers, **kwargs)]
        assert run(3) == run(0)
    assert TD.get_worker_info() is None
