"""torch.utils for tensord tensors (torch.utils.data, .hooks, .checkpoint, .dlpack)."""
from . import checkpoint, data, dlpack, hooks  # noqa: F401
