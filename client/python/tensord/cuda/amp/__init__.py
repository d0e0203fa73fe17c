"""tensord.cuda.amp: torch.cuda.amp's autocast (with custom_fwd and custom_bwd for custom
autograd functions) and GradScaler."""
from .autocast_mode import autocast, custom_bwd, custom_fwd  # noqa: F401
from .grad_scaler import GradScaler  # noqa: F401
