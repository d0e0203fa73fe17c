"""tensord.cuda: answered by the server of the current session."""
from . import _api


def is_available():
    """Whether the current session's server has a CUDA device."""
    return any(d.startswith("cuda") for d in _api.current_session().server_info().devices)


def device_count():
    return sum(d.startswith("cuda") for d in _api.current_session().server_info().devices)


def synchronize(device=None):
    """Waits for all queued work of the current session (torch.cuda.synchronize)."""
    _api.current_session().synchronize()


def current_device():
    return 0
