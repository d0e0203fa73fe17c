"""torch.optim.Rprop (PyTorch 1.13) for tensord: the resilient backpropagation algorithm
(torch's single-tensor algorithm, run on the server)."""
from .optimizer import Optimizer, _closure_loss

__all__ = ["Rprop", "rprop"]


class Rprop(Optimizer):
    r"""Implements the resilient backpropagation algorithm, as torch.optim.Rprop."""

    _group_defaults = dict(foreach=None, maximize=False)

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), foreach=None,
                 maximize=False):
        if not 0.0 <= lr:
            raise ValueError("Invalid learning rate: {}".format(lr))
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError("Invalid eta values: {}, {}".format(etas[0], etas[1]))

        defaults = dict(lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach,
                        maximize=maximize)
        super(Rprop, self).__init__(params, defaults)

    def step(self, closure=None):
        """Performs a single optimization step; `closure` reevaluates the model and returns
        the loss."""
        from .. import zeros_like, preserve_format
        loss = _closure_loss(closure)
        for group in self.param_groups:
            params, grads, prevs, step_sizes = [], [], [], []
            etaminus, etaplus = group["etas"]
            step_size_min, step_size_max = group["step_sizes"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                params.append(p)
                grad = p.grad
                if grad.is_sparse:
                    raise RuntimeError("Rprop does not support sparse gradients")
                grads.append(grad)

                state = self.state[p]
                if len(state) == 0:
                    state["step"] = 0  # a number in 1.13's Rprop, not a tensor
                    state["prev"] = zeros_like(p, memory_format=preserve_format)
                    state["step_size"] = grad.new().resize_as_(grad).fill_(group["lr"])
                prevs.append(state["prev"])
                step_sizes.append(state["step_size"])
                state["step"] += 1

            rprop(params, grads, prevs, step_sizes, step_size_min=step_size_min,
                  step_size_max=step_size_max, etaminus=etaminus, etaplus=etaplus,
                  foreach=group["foreach"], maximize=group["maximize"])
        return loss


def rprop(params, grads, prevs, step_sizes, foreach=None, maximize=False, *, step_size_min,
          step_size_max, etaminus, etaplus):
    r"""The Rprop algorithm (torch.optim.rprop's functional form). `foreach` runs the
    single-tensor algorithm too: the server runs each op over a whole tensor already."""
    from .. import preserve_format
    for i, param in enumerate(params):
        grad = grads[i]
        grad = grad if not maximize else -grad
        prev = prevs[i]
        step_size = step_sizes[i]

        # each element's step size grows where the gradient kept its sign, shrinks where it
        # changed it
        sign = grad.mul(prev).sign()
        sign[sign.gt(0)] = etaplus
        sign[sign.lt(0)] = etaminus
        sign[sign.eq(0)] = 1
        step_size.mul_(sign).clamp_(step_size_min, step_size_max)

        # where the sign changed the gradient counts as 0 (no step, and no sign next time)
        grad = grad.clone(memory_format=preserve_format)
        grad[sign.eq(etaminus)] = 0

        param.addcmul_(grad.sign(), step_size, value=-1)
        prev.copy_(grad)
