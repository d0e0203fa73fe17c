"""torch.optim.Adamax (PyTorch 1.13) for tensord: Adam with the infinity norm (torch's
single-tensor algorithm, run on the server)."""
from .optimizer import Optimizer, _closure_loss, _tensor_step, _increment
from .adam import _check_adam_args

__all__ = ["Adamax", "adamax"]


class Adamax(Optimizer):
    r"""Implements the Adamax algorithm, as torch.optim.Adamax."""

    _group_defaults = dict(foreach=None, maximize=False)
    _tensor_steps = True

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 foreach=None, *, maximize=False):
        _check_adam_args(lr, betas, eps, weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                        foreach=foreach, maximize=maximize)
        super(Adamax, self).__init__(params, defaults)

    def step(self, closure=None):
        """Performs a single optimization step; `closure` reevaluates the model and returns
        the loss."""
        from .. import zeros_like, preserve_format
        loss = _closure_loss(closure)
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            params_with_grad, grads, (exp_avgs, exp_infs, state_steps) = self._gather(
                group, "Adamax", lambda p: {
                    "step": _tensor_step(),
                    "exp_avg": zeros_like(p, memory_format=preserve_format),
                    "exp_inf": zeros_like(p, memory_format=preserve_format)},
                ("exp_avg", "exp_inf", "step"))

            adamax(params_with_grad, grads, exp_avgs, exp_infs, state_steps, eps=group["eps"],
                   beta1=beta1, beta2=beta2, lr=group["lr"],
                   weight_decay=group["weight_decay"], foreach=group["foreach"],
                   maximize=group["maximize"])
        return loss


def adamax(params, grads, exp_avgs, exp_infs, state_steps, foreach=None, maximize=False, *,
           eps, beta1, beta2, lr, weight_decay):
    r"""The Adamax algorithm (torch.optim.adamax's functional form). `foreach` runs the
    single-tensor algorithm too: the server runs each op over a whole tensor already."""
    from .. import is_tensor, cat, amax
    if not all(is_tensor(t) for t in state_steps):
        raise RuntimeError("API has changed, `state_steps` argument must contain a list of "
                           "singleton tensors")

    for i, param in enumerate(params):
        grad = grads[i]
        grad = grad if not maximize else -grad
        exp_avg = exp_avgs[i]
        exp_inf = exp_infs[i]
        step_t = state_steps[i]
        step = _increment(step_t)

        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)

        # the biased first moment, then the exponentially weighted infinity norm
        exp_avg.mul_(beta1).add_(grad, alpha=1 - beta1)
        norm_buf = cat([exp_inf.mul_(beta2).unsqueeze(0),
                        grad.abs().add_(eps).unsqueeze(0)], 0)
        amax(norm_buf, 0, keepdim=False, out=exp_inf)

        bias_correction = 1 - beta1 ** step
        clr = lr / bias_correction

        param.addcdiv_(exp_avg, exp_inf, value=-clr)
