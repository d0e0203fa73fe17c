"""torch.optim.Adadelta (PyTorch 1.13) for tensord (torch's single-tensor algorithm, run on the
server)."""
from .optimizer import Optimizer, _closure_loss

__all__ = ["Adadelta", "adadelta"]


class Adadelta(Optimizer):
    r"""Implements the Adadelta algorithm, as torch.optim.Adadelta."""

    _group_defaults = dict(foreach=None, maximize=False)

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *,
                 maximize=False):
        if not 0.0 <= lr:
            raise ValueError("Invalid learning rate: {}".format(lr))
        if not 0.0 <= rho <= 1.0:
            raise ValueError("Invalid rho value: {}".format(rho))
        if not 0.0 <= eps:
            raise ValueError("Invalid epsilon value: {}".format(eps))
        if not 0.0 <= weight_decay:
            raise ValueError("Invalid weight_decay value: {}".format(weight_decay))

        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay,
                        maximize=maximize, foreach=foreach)
        super(Adadelta, self).__init__(params, defaults)

    def step(self, closure=None):
        """Performs a single optimization step; `closure` reevaluates the model and returns
        the loss."""
        from .. import zeros_like, preserve_format
        loss = _closure_loss(closure)
        for group in self.param_groups:
            params_with_grad, grads, square_avgs, acc_deltas = [], [], [], []
            for p in group["params"]:
                if p.grad is None:
                    continue
                params_with_grad.append(p)
                if p.grad.is_sparse:
                    raise RuntimeError("Adadelta does not support sparse gradients")
                grads.append(p.grad)

                state = self.state[p]
                if len(state) == 0:
                    state["step"] = 0  # a number in 1.13's Adadelta, not a tensor
                    state["square_avg"] = zeros_like(p, memory_format=preserve_format)
                    state["acc_delta"] = zeros_like(p, memory_format=preserve_format)
                square_avgs.append(state["square_avg"])
                acc_deltas.append(state["acc_delta"])
                state["step"] += 1

            adadelta(params_with_grad, grads, square_avgs, acc_deltas, lr=group["lr"],
                     rho=group["rho"], eps=group["eps"], weight_decay=group["weight_decay"],
                     foreach=group["foreach"], maximize=group["maximize"])
        return loss


def adadelta(params, grads, square_avgs, acc_deltas, foreach=None, *, lr, rho, eps,
             weight_decay, maximize):
    r"""The Adadelta algorithm (torch.optim.adadelta's functional form). `foreach` runs the
    single-tensor algorithm too: the server runs each op over a whole tensor already."""
    for (param, grad, square_avg, acc_delta) in zip(params, grads, square_avgs, acc_deltas):
        grad = grad if not maximize else -grad

        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)

        square_avg.mul_(rho).addcmul_(grad, grad, value=1 - rho)
        std = square_avg.add(eps).sqrt_()
        delta = acc_delta.add(eps).sqrt_().div_(std).mul_(grad)
        acc_delta.mul_(rho).addcmul_(delta, delta, value=1 - rho)
        param.add_(delta, alpha=-lr)
