"""torch.utils.data.dataloader for tensord: DataLoader, get_worker_info, default_collate and
default_convert.

A tensord tensor is a handle to a tensor held by the server, so the loading runs in this
process: a DataLoader with num_workers > 0 runs its workers here, one after another (see
DataLoader)."""
import copy
import math
import multiprocessing as python_multiprocessing
import os
import warnings
from typing import Generic, TypeVar

from . import _utils
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

__all__ = [
    "DataLoader",
    "get_worker_info",
    "default_collate",
    "default_convert",
]

T_co = TypeVar("T_co", covariant=True)
T = TypeVar("T")

default_collate = _utils.collate.default_collate
default_convert = _utils.collate.default_convert

get_worker_info = _utils.worker.get_worker_info

string_classes = (str, bytes)


class _DatasetKind:
    Map = 0
    Iterable = 1

    @staticmethod
    def create_fetcher(kind, dataset, auto_collation, collate_fn, drop_last):
        if kind == _DatasetKind.Map:
            return _utils.fetch._MapDatasetFetcher(dataset, auto_collation, collate_fn, drop_last)
        return _utils.fetch._IterableDatasetFetcher(dataset, auto_collation, collate_fn, drop_last)


class _InfiniteConstantSampler(Sampler):
    """None, forever: the sampler of an IterableDataset's loader."""

    def __init__(self):
        super().__init__(None)

    def __iter__(self):
        while True:
            yield None


class DataLoader(Generic[T_co]):
    """Iterates over a dataset, in batches (torch.utils.data.DataLoader).

    As torch 1.13's: map-style datasets go through a sampler (SequentialSampler, or with
    shuffle=True a RandomSampler drawing from `generator`) and a BatchSampler (batch_size,
    drop_last), or a given sampler / batch_sampler; an IterableDataset is taken in its own order,
    batch_size samples at a time. Batches are made by collate_fn: default_collate (tensors are
    stacked on the server), or with batch_size=None default_convert applied to each sample. The
    arguments are checked as torch checks them, and batch_size, batch_sampler, sampler,
    drop_last, dataset and persistent_workers cannot be set afterwards.

    num_workers > 0: tensord tensors live on the server, so there are no worker processes; the
    `num_workers` workers run in this process, one after another. As torch's, the batches (or,
    with batch_size=None, the samples) are handed to the workers in turn and come back in that
    order, so a map-style dataset gives the same batches as with num_workers=0. Each worker has
    its own (shallow) copy of the dataset; worker_init_fn(worker_id) is called on each at the
    start of an iteration (once, with persistent_workers=True), and get_worker_info() returns
    that worker's WorkerInfo (id, num_workers, seed, dataset) while the worker initializes and
    fetches. So an IterableDataset that does not split its stream by get_worker_info() yields
    it num_workers times, interleaved, as torch's. Unlike torch, the workers do not reseed the
    random number generators (`seed` is only reported); timeout, prefetch_factor,
    multiprocessing_context, pin_memory and pin_memory_device are checked and kept but have no
    effect.
    """

    __initialized = False

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None,
                 num_workers=0, collate_fn=None, pin_memory=False, drop_last=False, timeout=0,
                 worker_init_fn=None, multiprocessing_context=None, generator=None, *,
                 prefetch_factor=2, persistent_workers=False, pin_memory_device=""):
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; "
                             "use num_workers=0 to disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor != 2:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing."
                             "let num_workers > 0 to enable multiprocessing.")
        assert prefetch_factor > 0
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")

        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context

        if isinstance(dataset, IterableDataset):
            self._dataset_kind = _DatasetKind.Iterable
            if shuffle not in {False, None}:
                raise ValueError("DataLoader with IterableDataset: expected unspecified "
                                 f"shuffle option, but got shuffle={shuffle}")
            if sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified "
                                 f"sampler option, but got sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified "
                                 f"batch_sampler option, but got batch_sampler={batch_sampler}")
        else:
            shuffle = bool(shuffle)
            self._dataset_kind = _DatasetKind.Map

        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")

        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive "
                                 "with batch_size, shuffle, sampler, and drop_last")
            batch_size = None
            drop_last = False
        elif batch_size is None:
            if drop_last:
                raise ValueError("batch_size=None option disables auto-batching "
                                 "and is mutually exclusive with drop_last")

        if sampler is None:
            if self._dataset_kind == _DatasetKind.Iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)

        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator

        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers

        self.__initialized = True
        self._IterableDataset_len_called = None
        self._iterator = None
        self.check_worker_number_rationality()

    def _get_iterator(self):
        if self.num_workers == 0:
            return _SingleProcessDataLoaderIter(self)
        self.check_worker_number_rationality()
        return _MultiProcessingDataLoaderIter(self)

    @property
    def multiprocessing_context(self):
        return self.__multiprocessing_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, multiprocessing_context):
        if multiprocessing_context is not None:
            if self.num_workers > 0:
                if isinstance(multiprocessing_context, string_classes):
                    valid_start_methods = python_multiprocessing.get_all_start_methods()
                    if multiprocessing_context not in valid_start_methods:
                        raise ValueError(
                            "multiprocessing_context option should specify a valid start "
                            f"method in {valid_start_methods!r}, but got "
                            f"multiprocessing_context={multiprocessing_context!r}")
                    multiprocessing_context = python_multiprocessing.get_context(
                        multiprocessing_context)
                if not isinstance(multiprocessing_context,
                                  python_multiprocessing.context.BaseContext):
                    raise TypeError(
                        "multiprocessing_context option should be a valid context object or a "
                        "string specifying the start method, but got "
                        f"multiprocessing_context={multiprocessing_context}")
            else:
                raise ValueError(
                    "multiprocessing_context can only be used with multi-process loading "
                    f"(num_workers > 0), but got num_workers={self.num_workers}")
        self.__multiprocessing_context = multiprocessing_context

    def __setattr__(self, attr, val):
        if self.__initialized and attr in ("batch_size", "batch_sampler", "sampler", "drop_last",
                                           "dataset", "persistent_workers"):
            raise ValueError(f"{attr} attribute should not be set after "
                             f"{self.__class__.__name__} is initialized")
        super().__setattr__(attr, val)

    def __iter__(self):
        if self.persistent_workers and self.num_workers > 0:
            if self._iterator is None:
                self._iterator = self._get_iterator()
            else:
                self._iterator._reset(self)
            return self._iterator
        return self._get_iterator()

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def __len__(self):
        if self._dataset_kind == _DatasetKind.Iterable:
            # len(dataset), in batches: an estimate that torch makes too (TypeError when the
            # dataset has no __len__)
            length = self._IterableDataset_len_called = len(self.dataset)
            if self.batch_size is not None:
                if self.drop_last:
                    length = length // self.batch_size
                else:
                    length = math.ceil(length / self.batch_size)
            return length
        return len(self._index_sampler)

    def check_worker_number_rationality(self):
        """Warns, as torch's, when num_workers exceeds the CPUs this process may use."""
        if not self.num_workers:
            return
        max_num_worker_suggest, cpuset_checked = None, False
        if hasattr(os, "sched_getaffinity"):
            try:
                max_num_worker_suggest = len(os.sched_getaffinity(0))
                cpuset_checked = True
            except Exception:  # noqa: BLE001
                pass
        if max_num_worker_suggest is None:
            max_num_worker_suggest = os.cpu_count()
        if max_num_worker_suggest is not None and self.num_workers <= max_num_worker_suggest:
            return
        if max_num_worker_suggest is not None:
            suggested = ("Our suggested max number of worker in current system is "
                         f"{max_num_worker_suggest}"
                         f"{'' if cpuset_checked else ' (`cpuset` is not taken into account)'}, "
                         "which is smaller than what this DataLoader is going to create.")
        else:
            suggested = ("DataLoader is not able to compute a suggested max number of worker in "
                         "current system.")
        warnings.warn(f"This DataLoader will create {self.num_workers} worker processes in total. "
                      f"{suggested} Please be aware that excessive worker creation might get "
                      "DataLoader running slow or even freeze, lower the worker number to avoid "
                      "potential slowness/freeze if necessary.")


class _BaseDataLoaderIter:
    def __init__(self, loader):
        self._dataset = loader.dataset
        self._dataset_kind = loader._dataset_kind
        self._IterableDataset_len_called = loader._IterableDataset_len_called
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._num_workers = loader.num_workers
        self._prefetch_factor = loader.prefetch_factor
        self._pin_memory = False  # tensors stay on the server
        self._timeout = loader.timeout
        self._collate_fn = loader.collate_fn
        self._sampler_iter = iter(self._index_sampler)
        # as torch's, drawn from the loader's generator (or the default one) whatever
        # num_workers, so that a seeded shuffle is the same with and without workers
        self._base_seed = self._draw_base_seed(loader.generator)
        self._persistent_workers = loader.persistent_workers
        self._num_yielded = 0

    @staticmethod
    def _draw_base_seed(generator):
        from ... import _api, _dtypes  # noqa: PLC0415
        if generator is None:
            generator = _api.default_generator
        return int(_api.empty((), dtype=_dtypes.int64).random_(generator=generator).item())

    def __iter__(self):
        return self

    def _reset(self, loader, first_iter=False):
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0
        self._IterableDataset_len_called = loader._IterableDataset_len_called

    def _next_index(self):
        return next(self._sampler_iter)  # may raise StopIteration

    def _next_data(self):
        raise NotImplementedError

    def __next__(self):
        if self._sampler_iter is None:
            self._reset()  # noqa
        data = self._next_data()
        self._num_yielded += 1
        if self._dataset_kind == _DatasetKind.Iterable and \
                self._IterableDataset_len_called is not None and \
                self._num_yielded > self._IterableDataset_len_called:
            warn_msg = (f"Length of IterableDataset {self._dataset} was reported to be "
                        f"{self._IterableDataset_len_called} (when accessing len(dataloader)), "
                        f"but {self._num_yielded} samples have been fetched. ")
            if self._num_workers > 0:
                warn_msg += ("For multiprocessing data-loading, this could be caused by not "
                             "properly configuring the IterableDataset replica at each worker. "
                             "Please see https://pytorch.org/docs/stable/data.html"
                             "#torch.utils.data.IterableDataset for examples.")
            warnings.warn(warn_msg)
        return data

    def __len__(self):
        return len(self._index_sampler)

    def __getstate__(self):
        raise NotImplementedError("{} cannot be pickled", self.__class__.__name__)


class _SingleProcessDataLoaderIter(_BaseDataLoaderIter):
    def __init__(self, loader):
        super().__init__(loader)
        assert self._timeout == 0
        assert self._num_workers == 0
        self._dataset_fetcher = _DatasetKind.create_fetcher(
            self._dataset_kind, self._dataset, self._auto_collation, self._collate_fn,
            self._drop_last)

    def _next_data(self):
        index = self._next_index()  # may raise StopIteration
        return self._dataset_fetcher.fetch(index)  # may raise StopIteration


class _MultiProcessingDataLoaderIter(_BaseDataLoaderIter):
    """torch's multi-process iterator, its workers run in this process in turn: each has a
    shallow copy of the dataset and its own fetcher; the indices go to the active workers
    round-robin, and a worker whose IterableDataset ends drops out."""

    def __init__(self, loader):
        super().__init__(loader)
        assert self._num_workers > 0
        self._worker_init_fn = loader.worker_init_fn
        self._worker_infos = []
        for worker_id in range(self._num_workers):
            try:
                dataset = copy.copy(self._dataset)
            except Exception:  # noqa: BLE001 - a dataset that cannot be copied is shared
                dataset = self._dataset
            self._worker_infos.append(_utils.worker.WorkerInfo(
                id=worker_id, num_workers=self._num_workers, seed=self._base_seed + worker_id,
                dataset=dataset))
        for info in self._worker_infos:
            with _utils.worker._as_worker(info):
                if self._worker_init_fn is not None:
                    self._worker_init_fn(info.id)
        self._reset(loader, first_iter=True)

    def _reset(self, loader, first_iter=False):
        super()._reset(loader, first_iter)
        self._fetchers = []
        for info in self._worker_infos:
            with _utils.worker._as_worker(info):
                self._fetchers.append(_DatasetKind.create_fetcher(
                    self._dataset_kind, info.dataset, self._auto_collation, self._collate_fn,
                    self._drop_last))
        self._workers_status = [True] * self._num_workers
        self._next_worker = 0

    def _next_data(self):
        while True:
            if not any(self._workers_status):
                raise StopIteration
            while not self._workers_status[self._next_worker]:
                self._next_worker = (self._next_worker + 1) % self._num_workers
            worker_id = self._next_worker
            self._next_worker = (self._next_worker + 1) % self._num_workers
            index = self._next_index()  # may raise StopIteration
            with _utils.worker._as_worker(self._worker_infos[worker_id]):
                try:
                    return self._fetchers[worker_id].fetch(index)
                except StopIteration:
                    if self._dataset_kind != _DatasetKind.Iterable:
                        raise
                    self._workers_status[worker_id] = False
