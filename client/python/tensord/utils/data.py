"""torch.utils.data over tensord tensors: Dataset, TensorDataset, the samplers and DataLoader
(batching by stacking on the server, shuffling with a seeded generator, drop_last).

Workers run in this process: a tensord tensor is a handle to the server, so loading in
subprocesses would gain nothing (num_workers is accepted and ignored).
"""
import collections.abc
import math

from .._tensor import Tensor


class Dataset:
    """An indexable collection of samples (torch.utils.data.Dataset): subclasses define
    __getitem__ (and usually __len__)."""

    def __add__(self, other):
        return ConcatDataset([self, other])


class TensorDataset(Dataset):
    """Samples are the i-th rows of the given tensors, all of one first size."""

    def __init__(self, *tensors):
        if any(tensors[0].size(0) != t.size(0) for t in tensors):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self):
        return self.tensors[0].size(0)


class ConcatDataset(Dataset):
    def __init__(self, datasets):
        self.datasets = list(datasets)
        if not self.datasets:
            raise AssertionError("datasets should not be an empty iterable")
        self.cumulative_sizes = []
        total = 0
        for d in self.datasets:
            total += len(d)
            self.cumulative_sizes.append(total)

    def __len__(self):
        return self.cumulative_sizes[-1]

    def __getitem__(self, index):
        if index < 0:
            if -index > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            index += len(self)
        for i, end in enumerate(self.cumulative_sizes):
            if index < end:
                start = self.cumulative_sizes[i - 1] if i else 0
                return self.datasets[i][index - start]
        raise IndexError("index out of range")


class Subset(Dataset):
    def __init__(self, dataset, indices):
        self.dataset, self.indices = dataset, indices

    def __getitem__(self, index):
        if isinstance(index, list):
            return self.dataset[[self.indices[i] for i in index]]
        return self.dataset[self.indices[index]]

    def __len__(self):
        return len(self.indices)


def random_split(dataset, lengths, generator=None):
    """Splits into non-overlapping subsets of the given lengths (or fractions)."""
    from .. import _api  # noqa: PLC0415
    n = len(dataset)
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        counts = [int(math.floor(n * frac)) for frac in lengths]
        for i in range(n - sum(counts)):
            counts[i % len(counts)] += 1
        lengths = counts
    if sum(lengths) != n:
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    perm = _api.randperm(n, generator=generator).tolist()
    out, at = [], 0
    for length in lengths:
        out.append(Subset(dataset, perm[at:at + length]))
        at += length
    return out


class Sampler:
    def __init__(self, data_source=None):
        pass


class SequentialSampler(Sampler):
    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


class RandomSampler(Sampler):
    """A random permutation of the indices, drawn on the server from `generator` (or the
    default generator) each epoch."""

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        self.data_source, self.replacement = data_source, replacement
        self._num_samples, self.generator = num_samples, generator

    @property
    def num_samples(self):
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        from .. import _api  # noqa: PLC0415
        n = len(self.data_source)
        if self.replacement:
            return iter(_api.randint(0, n, (self.num_samples,), generator=self.generator).tolist())
        order = []
        while len(order) < self.num_samples:
            order.extend(_api.randperm(n, generator=self.generator).tolist())
        return iter(order[:self.num_samples])

    def __len__(self):
        return self.num_samples


class BatchSampler(Sampler):
    def __init__(self, sampler, batch_size, drop_last):
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError("batch_size should be a positive integer value, but got "
                             f"batch_size={batch_size}")
        self.sampler, self.batch_size, self.drop_last = sampler, batch_size, drop_last

    def __iter__(self):
        batch = []
        for index in self.sampler:
            batch.append(index)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self):
        n = len(self.sampler)
        return n // self.batch_size if self.drop_last else (n + self.batch_size - 1) // self.batch_size


def default_collate(batch):
    """Stacks tensors (on the server), makes tensors of numbers and numpy arrays, and recurses
    into tuples, lists and mappings, as torch's default_collate."""
    import numpy as np  # noqa: PLC0415

    from .. import _api, _dtypes  # noqa: PLC0415
    first = batch[0]
    if isinstance(first, Tensor):
        return _api.stack(list(batch), 0)
    if isinstance(first, (np.ndarray, np.number)):
        return _api.stack([_api.as_tensor(np.asarray(b)) for b in batch], 0)
    if isinstance(first, float):
        return _api.tensor(batch, dtype=_dtypes.float64)
    if isinstance(first, (bool, int)):
        return _api.tensor(batch)
    if isinstance(first, (str, bytes)):
        return batch  # as it came: the loader's list, or a tuple of a field's values
    if isinstance(first, collections.abc.Mapping):
        collated = {key: default_collate([d[key] for d in batch]) for key in first}
        try:
            return type(first)(collated)
        except TypeError:  # a mapping type that cannot be made from a dict
            return collated
    if isinstance(first, tuple) and hasattr(first, "_fields"):
        return type(first)(*(default_collate(s) for s in zip(*batch)))
    if isinstance(first, collections.abc.Sequence):
        if any(len(s) != len(first) for s in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        fields = [default_collate(s) for s in zip(*batch)]
        if isinstance(first, tuple):
            return fields  # torch's: a list for tuples
        try:
            return type(first)(fields)
        except TypeError:  # a sequence type that cannot be made from a list (range)
            return fields
    raise TypeError(f"default_collate: batch must contain tensors, numpy arrays, numbers, dicts "
                    f"or lists; found {type(first)}")


class DataLoader:
    """Iterates a dataset in batches (torch.utils.data.DataLoader): batch_size, shuffle (with
    `generator`), sampler / batch_sampler, drop_last, collate_fn; num_workers is accepted and
    the loading runs in this process."""

    def __init__(self, dataset, batch_size=1, shuffle=False, sampler=None, batch_sampler=None,
                 num_workers=0, collate_fn=None, pin_memory=False, drop_last=False, timeout=0,
                 worker_init_fn=None, generator=None, prefetch_factor=2,
                 persistent_workers=False):
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None and (batch_size != 1 or shuffle or sampler is not None or
                                          drop_last):
            raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                             "shuffle, sampler, and drop_last")
        self.dataset, self.batch_size, self.drop_last = dataset, batch_size, drop_last
        self.num_workers, self.generator = num_workers, generator
        if sampler is None:
            sampler = RandomSampler(dataset, generator=generator) if shuffle \
                else SequentialSampler(dataset)
        self.sampler = sampler
        if batch_sampler is None and batch_size is not None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_sampler = batch_sampler
        self.collate_fn = collate_fn or (default_collate if batch_size is not None
                                         else (lambda x: x))

    def __iter__(self):
        if self.batch_sampler is None:
            for index in self.sampler:
                yield self.collate_fn(self.dataset[index])
            return
        for indices in self.batch_sampler:
            yield self.collate_fn([self.dataset[i] for i in indices])

    def __len__(self):
        return len(self.batch_sampler) if self.batch_sampler is not None else len(self.sampler)
