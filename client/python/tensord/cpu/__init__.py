"""tensord.cpu: torch.cpu (its amp module: cpu autocast)."""
from . import amp  # noqa: F401
