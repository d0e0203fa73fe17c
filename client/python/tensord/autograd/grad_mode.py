"""torch.autograd.grad_mode: the gradient-mode switches (kept in tensord._grad_mode)."""
from .._grad_mode import (_DecoratorContextManager, enable_grad, inference_mode,  # noqa: F401
                          no_grad, set_grad_enabled)
