"""torch.nn.utils.clip_grad: scale or clamp the gradients of parameters in place.

Parameters without a .grad are skipped, as torch skips them (clip_grad_norm_ of none returns
tensor(0.)). Any object with a tensor `.grad` is clipped as torch clips it."""
import math
import warnings

from ... import _factories
from ..._tensor import Tensor

__all__ = ["clip_grad_norm_", "clip_grad_norm", "clip_grad_value_"]


def _as_list(parameters):
    return [parameters] if isinstance(parameters, Tensor) else parameters


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False):
    """Scales the gradients so that their total `norm_type`-norm (of the norms of each) is at
    most max_norm; returns that total norm before scaling."""
    grads = [p.grad for p in _as_list(parameters) if p.grad is not None]
    max_norm = float(max_norm)
    norm_type = float(norm_type)
    if len(grads) == 0:
        return _factories.tensor(0.0)
    device = grads[0].device
    if norm_type == math.inf:
        norms = [g.detach().abs().max().to(device) for g in grads]
        total_norm = norms[0] if len(norms) == 1 else _factories.stack(norms).max()
    else:
        total_norm = _factories.stack([g.detach().norm(norm_type).to(device)
                                       for g in grads]).norm(norm_type)
    if error_if_nonfinite and total_norm.isnan().logical_or(total_norm.isinf()):
        raise RuntimeError(f"The total norm of order {norm_type} for gradients from "
                           "`parameters` is non-finite, so it cannot be clipped. To disable this "
                           "error and scale the gradients by the non-finite norm anyway, set "
                           "`error_if_nonfinite=False`")
    clip_coef_clamped = (max_norm / (total_norm + 1e-6)).clamp(max=1.0)
    for g in grads:
        g.detach().mul_(clip_coef_clamped.to(g.device))
    return total_norm


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False):
    """The deprecated name of clip_grad_norm_."""
    warnings.warn("torch.nn.utils.clip_grad_norm is now deprecated in favor of "
                  "torch.nn.utils.clip_grad_norm_.", stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite)


def clip_grad_value_(parameters, clip_value):
    """Clamps every gradient into [-clip_value, clip_value] in place."""
    clip_value = float(clip_value)
    for p in filter(lambda p: p.grad is not None, _as_list(parameters)):
        p.grad.data.clamp_(min=-clip_value, max=clip_value)
