"""torch.utils.data._utils.worker: WorkerInfo and get_worker_info.

tensord's DataLoader runs its workers in this process (see DataLoader), so get_worker_info()
is None in the main process, as torch's, and is a worker's WorkerInfo only while that worker
(of a DataLoader with num_workers > 0) initializes or fetches."""

_worker_info = None


class WorkerInfo:
    __initialized = False

    def __init__(self, **kwargs):
        for k, v in kwargs.items():
            setattr(self, k, v)
        self.__keys = tuple(kwargs.keys())
        self.__initialized = True

    def __setattr__(self, key, val):
        if self.__initialized:
            raise RuntimeError(f"Cannot assign attributes to {self.__class__.__name__} objects")
        return super().__setattr__(key, val)

    def __repr__(self):
        items = [f"{k}={getattr(self, k)}" for k in self.__keys]
        return f"{self.__class__.__name__}({', '.join(items)})"


def get_worker_info():
    """The current DataLoader worker's WorkerInfo (id, num_workers, seed, dataset: the worker's
    copy of the dataset), or None outside a worker: in the main process, as torch's."""
    return _worker_info


class _as_worker:
    """Makes `info` what get_worker_info() returns for the duration of a `with` block."""

    def __init__(self, info):
        self.info = info

    def __enter__(self):
        global _worker_info
        self.saved, _worker_info = _worker_info, self.info
        return self.info

    def __exit__(self, *exc):
        global _worker_info
        _worker_info = self.saved
        return False
