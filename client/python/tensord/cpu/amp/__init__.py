"""tensord.cpu.amp: torch.cpu.amp.autocast."""
from .autocast_mode import autocast  # noqa: F401
