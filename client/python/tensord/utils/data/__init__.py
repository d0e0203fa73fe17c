"""torch.utils.data for tensord tensors (as torch 1.13's): datasets (Dataset, IterableDataset,
TensorDataset, ConcatDataset, ChainDataset, Subset, random_split), samplers (Sequential,
Random, SubsetRandom, WeightedRandom, Batch), DataLoader, default_collate / default_convert and
get_worker_info, with torch's submodules dataset, sampler and dataloader.

Random draws (shuffling, random_split, the random samplers) run on the server from a tensord
Generator: seeded, they repeat run to run, but are not torch's draws. DataLoader workers run in
this process (see DataLoader)."""
from .sampler import (
    BatchSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)
from .dataset import (
    ChainDataset,
    ConcatDataset,
    Dataset,
    IterableDataset,
    Subset,
    TensorDataset,
    random_split,
)
from .dataloader import (
    DataLoader,
    _DatasetKind,
    get_worker_info,
    default_collate,
    default_convert,
)
from . import _utils, dataloader, dataset, sampler  # noqa: F401

__all__ = ["BatchSampler",
           "ChainDataset",
           "ConcatDataset",
           "DataLoader",
           "Dataset",
           "IterableDataset",
           "RandomSampler",
           "Sampler",
           "SequentialSampler",
           "Subset",
           "SubsetRandomSampler",
           "TensorDataset",
           "WeightedRandomSampler",
           "_DatasetKind",
           "default_collate",
           "default_convert",
           "get_worker_info",
           "random_split"]
