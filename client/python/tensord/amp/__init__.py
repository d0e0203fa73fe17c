"""tensord.amp: torch.amp, automatic mixed precision (autocast; the per-device forms are
tensord.cpu.amp.autocast and tensord.cuda.amp.autocast, the gradient scaler
tensord.cuda.amp.GradScaler)."""
from .autocast_mode import autocast  # noqa: F401
