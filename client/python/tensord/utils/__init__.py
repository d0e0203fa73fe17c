"""torch.utils for tensord tensors (torch.utils.data, .hooks, .checkpoint)."""
from . import checkpoint, data, hooks  # noqa: F401
