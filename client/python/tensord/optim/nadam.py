"""torch.optim.NAdam (PyTorch 1.13) for tensord: Adam with Nesterov momentum (torch's
single-tensor algorithm, run on the server)."""
import numpy as np

from .optimizer import (Optimizer, _closure_loss, _increment, _known_tensor, _known_value,
                        _remember_value, _tensor_step)
from .adam import _check_adam_args

__all__ = ["NAdam", "nadam"]


class NAdam(Optimizer):
    r"""Implements the NAdam algorithm, as torch.optim.NAdam (1.13's has no `maximize`)."""

    _group_defaults = dict(foreach=None)
    _tensor_steps = True

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 momentum_decay=4e-3, foreach=None):
        _check_adam_args(lr, betas, eps, weight_decay)
        if not 0.0 <= momentum_decay:
            raise ValueError("Invalid momentum_decay value: {}".format(momentum_decay))
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                        momentum_decay=momentum_decay, foreach=foreach)
        super(NAdam, self).__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        from .. import is_tensor, tensor
        values = list(self.state.values())
        if not (values and is_tensor(values[0]["mu_product"])):
            for s in values:
                s["mu_product"] = tensor(s["mu_product"])

    def step(self, closure=None):
        """Performs a single optimization step; `closure` reevaluates the model and returns
        the loss."""
        from .. import zeros_like, preserve_format
        loss = _closure_loss(closure)
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            params_with_grad, grads, (exp_avgs, exp_avg_sqs, mu_products, state_steps) = \
                self._gather(group, "NAdam", lambda p: {
                    "step": _tensor_step(), "mu_product": _known_tensor(1.),
                    "exp_avg": zeros_like(p, memory_format=preserve_format),
                    "exp_avg_sq": zeros_like(p, memory_format=preserve_format)},
                    ("exp_avg", "exp_avg_sq", "mu_product", "step"))

            nadam(params_with_grad, grads, exp_avgs, exp_avg_sqs, mu_products, state_steps,
                  beta1=beta1, beta2=beta2, lr=group["lr"], weight_decay=group["weight_decay"],
                  momentum_decay=group["momentum_decay"], eps=group["eps"],
                  foreach=group["foreach"])
        return loss


def nadam(params, grads, exp_avgs, exp_avg_sqs, mu_products, state_steps, foreach=None, *,
          beta1, beta2, lr, weight_decay, momentum_decay, eps):
    r"""The NAdam algorithm (torch.optim.nadam's functional form). `foreach` runs the
    single-tensor algorithm too: the server runs each op over a whole tensor already."""
    from .. import is_tensor
    if not all(is_tensor(t) for t in state_steps):
        raise RuntimeError("API has changed, `state_steps` argument must contain a list of "
                           "singleton tensors")
    if not all(is_tensor(t) for t in mu_products):
        raise RuntimeError("API has changed, `mu_products` argument must contain a list of "
                           "singleton tensors")

    for i, param in enumerate(params):
        grad = grads[i]
        exp_avg = exp_avgs[i]
        exp_avg_sq = exp_avg_sqs[i]
        mu_product = mu_products[i]
        step_t = state_steps[i]
        step = _increment(step_t)

        bias_correction2 = 1 - beta2 ** step

        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)

        # the momentum cache mu^t and mu^{t+1}; their products stay tensors (in the
        # product's dtype) as torch keeps them
        mu = beta1 * (1. - 0.5 * (0.96 ** (step * momentum_decay)))
        mu_next = beta1 * (1. - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
        # (their values as the tensors hold them, in their dtype's rounding, known here:
        # torch reads them back with item(), which would wait for the queued work)
        rounded = np.float32 if mu_product.element_size() == 4 else np.float64
        product = rounded(rounded(_known_value(mu_product)) * rounded(mu))
        product_next = rounded(rounded(product * rounded(mu)) * rounded(mu_next))
        mu_product.mul_(mu)
        _remember_value(mu_product, float(product))

        exp_avg.mul_(beta1).add_(grad, alpha=1 - beta1)
        exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        denom = exp_avg_sq.div(bias_correction2).sqrt().add_(eps)
        param.addcdiv_(grad, denom, value=-lr * (1. - mu) / (1. - float(product)))
        param.addcdiv_(exp_avg, denom, value=-lr * mu_next / (1. - float(product_next)))
