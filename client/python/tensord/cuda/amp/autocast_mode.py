"""torch.cuda.amp.autocast, and torch's decorators for the forward and backward of custom
autograd functions under autocast."""
import collections.abc
import functools

import numpy as np

from ... import _autocast, _dtypes
from ...amp import autocast_mode


class autocast(autocast_mode.autocast):
    """torch.cuda.amp.autocast(enabled=True, dtype=torch.float16, cache_enabled=True): as
    torch.autocast("cuda", ...)."""

    def __init__(self, enabled=True, dtype=_dtypes.float16, cache_enabled=True):
        super().__init__("cuda", enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)


def _cast(value, dtype):
    """Floating-point cuda tensors (not float64) of `value`, or of the containers in it, in
    `dtype`; strings and numpy arrays as they are."""
    from ..._tensor import Tensor  # noqa: PLC0415 - import cycle
    if isinstance(value, Tensor):
        is_eligible = (value.is_floating_point() and value.is_cuda and
                       (value.dtype is not _dtypes.float64))
        return value.to(dtype) if is_eligible else value
    if isinstance(value, str):
        return value
    if isinstance(value, np.ndarray):
        return value
    if isinstance(value, collections.abc.Mapping):
        return {_cast(k, dtype): _cast(v, dtype) for k, v in value.items()}
    if isinstance(value, collections.abc.Iterable):
        iterable = map(lambda v: _cast(v, dtype), value)
        if isinstance(value, (list, tuple)):
            return type(value)(iterable)
        return iterable
    return value


def custom_fwd(fwd=None, *, cast_inputs=None):
    """Decorator for the forward of a custom autograd function (torch.autograd.Function): with
    cast_inputs (a dtype) and cuda autocast enabled, the floating-point cuda tensors among the
    arguments are cast to it and forward runs with autocast off; without, forward runs under
    the current autocast state, which custom_bwd restores for backward."""
    if fwd is None:
        return functools.partial(custom_fwd, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args, **kwargs):
        if cast_inputs is None:
            args[0]._fwd_used_autocast = _autocast.is_autocast_enabled()
            return fwd(*args, **kwargs)
        autocast_context = _autocast.is_autocast_enabled()
        args[0]._fwd_used_autocast = False
        if autocast_context:
            with autocast(enabled=False):
                return fwd(*_cast(args, cast_inputs), **_cast(kwargs, cast_inputs))
        return fwd(*args, **kwargs)
    return decorate_fwd


def custom_bwd(bwd):
    """Decorator for the backward of a custom autograd function whose forward custom_fwd
    decorated: backward runs with the autocast state forward ran with."""
    @functools.wraps(bwd)
    def decorate_bwd(*args, **kwargs):
        with autocast(args[0]._fwd_used_autocast):
            return bwd(*args, **kwargs)
    return decorate_bwd
