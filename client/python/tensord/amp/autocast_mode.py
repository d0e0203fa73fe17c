"""torch.autocast: regions of a program whose ops run in an op-specific dtype.

Inside `with tensord.autocast("cpu"):` (or `"cuda"`, or decorated by `@tensord.autocast(...)`)
the ops on torch 1.13's lists cast their inputs on that device type, as torch's do: matrix
products and convolutions to the autocast dtype (bfloat16 on cpu, float16 on cuda by default),
ops that need the range to float32, joins of mixed dtypes to the widest (_autocast.py has the
lists and the casts). Entering and leaving keep torch's state per thread: the enabled flag and
dtype of the device type, the cache of cast weights (cleared when the outermost region exits)
and its switch. As torch 1.13, cpu autocast takes only bfloat16 (another dtype warns, disables
the region, and its __enter__ raises), and cuda autocast on a server without a CUDA device
warns and disables the region.
"""
import functools
import warnings

from .. import _autocast, _dtypes

__all__ = ["autocast_decorator", "autocast"]


def autocast_decorator(autocast_instance, func):
    @functools.wraps(func)
    def decorate_autocast(*args, **kwargs):
        with autocast_instance:
            return func(*args, **kwargs)
    decorate_autocast.__script_unsupported = \
        "@autocast() decorator is not supported in script mode"  # as torch's
    return decorate_autocast


def _amp_definitely_not_available():
    from ..cuda.amp.common import amp_definitely_not_available  # noqa: PLC0415 - import cycle
    return amp_definitely_not_available()


class autocast:
    """torch.autocast(device_type, dtype=None, enabled=True, cache_enabled=None): a context
    manager (or decorator) that enables autocast for `device_type` ("cpu" or "cuda") in its
    region; enabled=False turns it off inside an enclosing region. dtype: the lower precision
    (default: torch.get_autocast_cpu_dtype() / get_autocast_gpu_dtype()); cache_enabled: whether
    the casts of float32 weights are cached inside the region (default:
    torch.is_autocast_cache_enabled()). The state is per thread, as torch's."""

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        # torch compares device_type with strings (a torch.device is no device type)
        self.device = device_type
        device = device_type if isinstance(device_type, str) else None
        if device == "cuda":
            self.fast_dtype = _autocast.get_autocast_gpu_dtype()
        elif device == "cpu":
            self.fast_dtype = _autocast.get_autocast_cpu_dtype()
        else:
            raise RuntimeError("User specified autocast device_type must be 'cuda' or 'cpu'")
        self._cache_enabled = _autocast.is_autocast_cache_enabled()
        if enabled and device == "cuda" and _amp_definitely_not_available():
            warnings.warn("User provided device_type of 'cuda', but CUDA is not available. "
                          "Disabling")
            enabled = False
        if dtype is not None:
            self.fast_dtype = dtype
        if cache_enabled is not None:
            self._cache_enabled = cache_enabled

        if device == "cpu":
            if self.fast_dtype is not _dtypes.bfloat16:
                warnings.warn("In CPU autocast, but the target dtype is not supported. "
                              "Disabling autocast.\n"
                              "CPU Autocast only supports dtype of torch.bfloat16 currently.")
                enabled = False
        if device == "cuda":
            if self.fast_dtype is _dtypes.bfloat16:
                from .. import cuda  # noqa: PLC0415 - import cycle
                if not cuda.is_bf16_supported():
                    raise RuntimeError("Current CUDA Device does not support bfloat16. Please "
                                       "switch dtype to float16.")
        self._enabled = enabled

    def __enter__(self):
        self.prev_cache_enabled = _autocast.is_autocast_cache_enabled()
        if self.device == "cpu":
            self.prev = _autocast.is_autocast_cpu_enabled()
            self.prev_fastdtype = _autocast.get_autocast_cpu_dtype()
            _autocast.set_autocast_cpu_enabled(self._enabled)
            _autocast.set_autocast_cpu_dtype(self.fast_dtype)
            _autocast.autocast_increment_nesting()
        else:
            self.prev = _autocast.is_autocast_enabled()
            self.prev_fastdtype = _autocast.get_autocast_gpu_dtype()
            _autocast.set_autocast_gpu_dtype(self.fast_dtype)
            _autocast.set_autocast_enabled(self._enabled)
            _autocast.autocast_increment_nesting()
        _autocast.set_autocast_cache_enabled(self._cache_enabled)

    def __exit__(self, exc_type, exc_val, exc_tb):
        # Drop the cache when we exit to a nesting level that's outside any instance of autocast.
        if self.device == "cpu":
            if _autocast.autocast_decrement_nesting() == 0:
                _autocast.clear_autocast_cache()
            _autocast.set_autocast_cpu_enabled(self.prev)
            _autocast.set_autocast_cpu_dtype(self.prev_fastdtype)
        else:
            if _autocast.autocast_decrement_nesting() == 0:
                _autocast.clear_autocast_cache()
            _autocast.set_autocast_enabled(self.prev)
            _autocast.set_autocast_gpu_dtype(self.prev_fastdtype)
        _autocast.set_autocast_cache_enabled(self.prev_cache_enabled)
        return False

    def __call__(self, func):
        return autocast_decorator(self, func)
