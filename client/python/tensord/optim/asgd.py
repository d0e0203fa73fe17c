"""torch.optim.ASGD (PyTorch 1.13) for tensord: averaged stochastic gradient descent (torch's
single-tensor algorithm, run on the server)."""
import math

from .optimizer import Optimizer, _closure_loss, _tensor_step, _increment

__all__ = ["ASGD", "asgd"]


class ASGD(Optimizer):
    r"""Implements averaged stochastic gradient descent, as torch.optim.ASGD."""

    _group_defaults = dict(foreach=None, maximize=False)
    _tensor_steps = True

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0,
                 foreach=None, maximize=False):
        if not 0.0 <= lr:
            raise ValueError("Invalid learning rate: {}".format(lr))
        if not 0.0 <= weight_decay:
            raise ValueError("Invalid weight_decay value: {}".format(weight_decay))

        defaults = dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay,
                        foreach=foreach, maximize=maximize)
        super(ASGD, self).__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        from .. import is_tensor, tensor
        values = list(self.state.values())
        if not (values and is_tensor(values[0]["eta"])):
            for s in values:
                s["eta"] = tensor(s["eta"])
        if not (values and is_tensor(values[0]["mu"])):
            for s in values:
                s["mu"] = tensor(float(s["mu"]))

    def step(self, closure=None):
        """Performs a single optimization step; `closure` reevaluates the model and returns
        the loss."""
        from .. import zeros_like, preserve_format, tensor
        loss = _closure_loss(closure)
        for group in self.param_groups:
            params_with_grad, grads, (mus, axs, etas, state_steps) = self._gather(
                group, "ASGD", lambda p: {
                    "step": _tensor_step(), "eta": tensor(group["lr"]), "mu": tensor(1.),
                    "ax": zeros_like(p, memory_format=preserve_format)},
                ("mu", "ax", "eta", "step"))

            asgd(params_with_grad, grads, axs, mus, etas, state_steps, lambd=group["lambd"],
                 lr=group["lr"], t0=group["t0"], alpha=group["alpha"],
                 weight_decay=group["weight_decay"], foreach=group["foreach"],
                 maximize=group["maximize"])
        return loss


def asgd(params, grads, axs, mus, etas, state_steps, foreach=None, maximize=False, *, lambd,
         lr, t0, alpha, weight_decay):
    r"""The ASGD algorithm (torch.optim.asgd's functional form). `foreach` runs the
    single-tensor algorithm too: the server runs each op over a whole tensor already."""
    from .. import tensor
    for i, param in enumerate(params):
        grad = grads[i]
        grad = grad if not maximize else -grad
        mu = mus[i]
        ax = axs[i]
        eta = etas[i]
        step_t = state_steps[i]
        step = _increment(step_t)

        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)

        # decay, then the gradient step, at the rate eta holds
        eta_value = eta.item()
        param.mul_(1 - lambd * eta_value)
        param.add_(grad, alpha=-eta_value)

        # averaging
        if mu.item() != 1:
            ax.add_(param.sub(ax).mul(mu))
        else:
            ax.copy_(param)

        # the next eta and mu: new tensors (in the default dtype) copied in, as torch does
        eta.copy_(tensor(lr / math.pow((1 + lambd * lr * step), alpha)))
        mu.copy_(tensor(1 / max(1, step - t0)))
