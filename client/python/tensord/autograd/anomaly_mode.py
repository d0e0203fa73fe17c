"""torch.autograd's anomaly detection: detect_anomaly, set_detect_anomaly, is_anomaly_enabled.

While it is on, each recorded node keeps the stack of the forward call that made it, backward
checks the gradients every node returns for NaN (torch's "Function 'XBackward0' returned nan
values in its 0th output.", one read of a flag per gradient: a debugging mode, as torch's),
and an error raised in a node's backward is preceded by the warning that names the node and
shows that forward stack.
"""
import traceback
import warnings


class _State:
    enabled = False
    check_nan = True


_state = _State()


def is_anomaly_enabled():
    return _state.enabled


def is_anomaly_check_nan_enabled():
    return _state.enabled and _state.check_nan


def _set(enabled, check_nan):
    _state.enabled, _state.check_nan = bool(enabled), bool(check_nan)


def set_anomaly_enabled(enabled, check_nan=True):
    """torch.set_anomaly_enabled: anomaly detection on or off until changed."""
    _set(enabled, check_nan)


class detect_anomaly:
    """Anomaly detection on inside the block (a context manager only, as torch 1.13's)."""

    def __init__(self, check_nan=True):
        self.prev = _state.enabled
        self.check_nan = check_nan
        self.prev_check_nan = _state.check_nan
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime "
                      "and should only be enabled for debugging.", stacklevel=2)

    def __enter__(self):
        _set(True, self.check_nan)

    def __exit__(self, *args):
        _set(self.prev, self.prev_check_nan)


class set_detect_anomaly:
    """Sets anomaly detection on or off at once; as a context manager, restores the previous
    state on exit."""

    def __init__(self, mode, check_nan=True):
        self.prev, self.prev_check_nan = _state.enabled, _state.check_nan
        _set(mode, check_nan)

    def __enter__(self):
        pass

    def __exit__(self, *args):
        _set(self.prev, self.prev_check_nan)


def forward_stack():
    """The stack of the program's forward call, for a node made while detection is on (the
    client's own frames left out)."""
    frames = [f for f in traceback.extract_stack()[:-1]
              if "/tensord/" not in f.filename.replace("\\", "/")]
    return "".join(traceback.format_list(frames))


def warn_error_in(node):
    stack = getattr(node, "trace", None)
    warnings.warn(f"Error detected in {node.name()}. Traceback of forward call that caused the "
                  f"error:\n{stack or ''}")


def check(node, grads):
    """torch's check of the gradients a node returned."""
    if not _state.check_nan:
        return
    for i, g in enumerate(grads):
        if g is not None and g.dtype.is_floating_point and bool(g.isnan().any()):
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th "
                               f"output.")
