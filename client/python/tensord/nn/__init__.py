"""torch.nn's functional ops that tensord computes on the server."""
from . import functional  # noqa: F401
