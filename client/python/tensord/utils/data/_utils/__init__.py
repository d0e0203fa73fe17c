"""torch.utils.data._utils for tensord: collate (default_collate, default_convert and 1.13's
collate registry), worker (get_worker_info, WorkerInfo) and fetch (the dataset fetchers)."""
from . import collate, fetch, worker  # noqa: F401
