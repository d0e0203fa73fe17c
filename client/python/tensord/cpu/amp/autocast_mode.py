"""torch.cpu.amp.autocast."""
from ... import _dtypes
from ...amp import autocast_mode


class autocast(autocast_mode.autocast):
    """torch.cpu.amp.autocast(enabled=True, dtype=torch.bfloat16, cache_enabled=True): as
    torch.autocast("cpu", ...)."""

    def __init__(self, enabled=True, dtype=_dtypes.bfloat16, cache_enabled=True):
        super().__init__("cpu", enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)
