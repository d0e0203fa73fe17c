"""torch.utils for tensord tensors (torch.utils.data)."""
from . import data  # noqa: F401
