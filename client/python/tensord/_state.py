"""torch's process-wide switches that tensord keeps on the client: threads, determinism, matmul
precision, warn-always. The server's own kernels are deterministic (counter-based random draws,
fixed reduction orders) whatever they say, and it sizes its own thread pools; these keep the
values a program sets and reads back, as torch does."""
import os

_state = {"threads": os.cpu_count() or 1, "interop": os.cpu_count() or 1,
          "deterministic": False, "warn_only": False, "matmul_precision": "highest",
          "warn_always": False}


def get_num_threads():
    return _state["threads"]


def set_num_threads(n):
    if not isinstance(n, int) or n <= 0:
        raise RuntimeError("set_num_threads expects a positive integer")
    _state["threads"] = n


def init_num_threads():
    """torch starts its intra-op threads here; a tensord client has none (the server sizes its
    own pools), so there is nothing to start."""


def is_distributed(input):
    if not hasattr(input, "is_distributed"):
        raise TypeError("is_distributed(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    return input.is_distributed()


def get_num_interop_threads():
    return _state["interop"]


def set_num_interop_threads(n):
    if not isinstance(n, int) or n <= 0:
        raise RuntimeError("Number of interop threads must be positive")
    _state["interop"] = n


def use_deterministic_algorithms(mode, *, warn_only=False):
    _state["deterministic"], _state["warn_only"] = bool(mode), bool(warn_only)


def are_deterministic_algorithms_enabled():
    return _state["deterministic"]


def is_deterministic_algorithms_warn_only_enabled():
    return _state["warn_only"]


def set_deterministic_debug_mode(debug_mode):
    names = {"default": 0, "warn": 1, "error": 2}
    mode = names.get(debug_mode, debug_mode) if isinstance(debug_mode, str) else debug_mode
    if mode not in (0, 1, 2):
        raise RuntimeError("invalid value of debug_mode, expected one of `default`, `warn`, "
                           f"`error`, but got {debug_mode}")
    use_deterministic_algorithms(mode > 0, warn_only=mode == 1)


def get_deterministic_debug_mode():
    if not _state["deterministic"]:
        return 0
    return 1 if _state["warn_only"] else 2


def get_float32_matmul_precision():
    return _state["matmul_precision"]


def set_float32_matmul_precision(precision):
    if precision not in ("highest", "high", "medium"):
        import warnings  # noqa: PLC0415
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current "
                      "setFloat32MatmulPrecision call has no effect.", stacklevel=2)
        return
    _state["matmul_precision"] = precision


def set_warn_always(b):
    _state["warn_always"] = bool(b)


def is_warn_always_enabled():
    return _state["warn_always"]


__all__ = [n for n in dir() if not n.startswith("_")]
