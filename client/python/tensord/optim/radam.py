"""torch.optim.RAdam (PyTorch 1.13) for tensord: Adam with the variance rectification
(torch's single-tensor algorithm, run on the server)."""
import math

from .optimizer import Optimizer, _closure_loss, _tensor_step, _increment
from .adam import _check_adam_args

__all__ = ["RAdam", "radam"]


class RAdam(Optimizer):
    r"""Implements the RAdam algorithm, as torch.optim.RAdam (1.13's has no `maximize`)."""

    _group_defaults = dict(foreach=None)
    _tensor_steps = True

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 foreach=None):
        _check_adam_args(lr, betas, eps, weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                        foreach=foreach)
        super(RAdam, self).__init__(params, defaults)

    def step(self, closure=None):
        """Performs a single optimization step; `closure` reevaluates the model and returns
        the loss."""
        from .. import zeros_like, preserve_format
        loss = _closure_loss(closure)
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            params_with_grad, grads, (exp_avgs, exp_avg_sqs, state_steps) = self._gather(
                group, "RAdam", lambda p: {
                    "step": _tensor_step(),
                    "exp_avg": zeros_like(p, memory_format=preserve_format),
                    "exp_avg_sq": zeros_like(p, memory_format=preserve_format)},
                ("exp_avg", "exp_avg_sq", "step"))

            radam(params_with_grad, grads, exp_avgs, exp_avg_sqs, state_steps, beta1=beta1,
                  beta2=beta2, lr=group["lr"], weight_decay=group["weight_decay"],
                  eps=group["eps"], foreach=group["foreach"])
        return loss


def radam(params, grads, exp_avgs, exp_avg_sqs, state_steps, foreach=None, *, beta1, beta2,
          lr, weight_decay, eps):
    r"""The RAdam algorithm (torch.optim.radam's functional form). `foreach` runs the
    single-tensor algorithm too: the server runs each op over a whole tensor already."""
    from .. import is_tensor
    if not all(is_tensor(t) for t in state_steps):
        raise RuntimeError("API has changed, `state_steps` argument must contain a list of "
                           "singleton tensors")

    for i, param in enumerate(params):
        grad = grads[i]
        exp_avg = exp_avgs[i]
        exp_avg_sq = exp_avg_sqs[i]
        step_t = state_steps[i]
        step = _increment(step_t)

        bias_correction1 = 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** step

        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)

        exp_avg.mul_(beta1).add_(grad, alpha=1 - beta1)
        exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)

        bias_corrected_exp_avg = exp_avg / bias_correction1

        # the maximum length of the approximated SMA, and its length at this step
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2

        if rho_t > 5.:
            # the variance is tractable: rectify the adaptive step
            rect = math.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf /
                             ((rho_inf - 4) * (rho_inf - 2) * rho_t))
            adaptive_lr = math.sqrt(bias_correction2) / exp_avg_sq.sqrt().add_(eps)
            param.add_(bias_corrected_exp_avg * lr * adaptive_lr * rect, alpha=-1.0)
        else:
            param.add_(bias_corrected_exp_avg * lr, alpha=-1.0)
