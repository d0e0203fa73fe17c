"""torch.optim.RMSprop (PyTorch 1.13) for tensord (torch's single-tensor algorithm, run on the
server)."""
from .optimizer import Optimizer, _closure_loss

__all__ = ["RMSprop", "rmsprop"]


class RMSprop(Optimizer):
    r"""Implements the RMSprop algorithm, as torch.optim.RMSprop."""

    _group_defaults = dict(momentum=0, centered=False, foreach=None, maximize=False,
                           differentiable=False)

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
                 centered=False, foreach=None, maximize=False, differentiable=False):
        if not 0.0 <= lr:
            raise ValueError("Invalid learning rate: {}".format(lr))
        if not 0.0 <= eps:
            raise ValueError("Invalid epsilon value: {}".format(eps))
        if not 0.0 <= momentum:
            raise ValueError("Invalid momentum value: {}".format(momentum))
        if not 0.0 <= weight_decay:
            raise ValueError("Invalid weight_decay value: {}".format(weight_decay))
        if not 0.0 <= alpha:
            raise ValueError("Invalid alpha value: {}".format(alpha))

        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                        weight_decay=weight_decay, foreach=foreach, maximize=maximize,
                        differentiable=differentiable)
        super(RMSprop, self).__init__(params, defaults)

    def step(self, closure=None):
        """Performs a single optimization step; `closure` reevaluates the model and returns
        the loss."""
        from .. import zeros_like, preserve_format, is_tensor
        loss = _closure_loss(closure)
        for group in self.param_groups:
            params_with_grad, grads, square_avgs, grad_avgs, momentum_buffer_list = \
                [], [], [], [], []
            for p in group["params"]:
                if p.grad is None:
                    continue
                params_with_grad.append(p)
                if p.grad.is_sparse:
                    raise RuntimeError("RMSprop does not support sparse gradients")
                grads.append(p.grad)

                state = self.state[p]
                if len(state) == 0:
                    state["step"] = 0
                    state["square_avg"] = zeros_like(p, memory_format=preserve_format)
                    if group["momentum"] > 0:
                        state["momentum_buffer"] = zeros_like(p, memory_format=preserve_format)
                    if group["centered"]:
                        state["grad_avg"] = zeros_like(p, memory_format=preserve_format)
                square_avgs.append(state["square_avg"])
                if group["momentum"] > 0:
                    momentum_buffer_list.append(state["momentum_buffer"])
                if group["centered"]:
                    grad_avgs.append(state["grad_avg"])
                if group["differentiable"] and is_tensor(state["step"]):
                    raise RuntimeError("`step` can't be a tensor")
                state["step"] += 1

            rmsprop(params_with_grad, grads, square_avgs, grad_avgs, momentum_buffer_list,
                    lr=group["lr"], alpha=group["alpha"], eps=group["eps"],
                    weight_decay=group["weight_decay"], momentum=group["momentum"],
                    centered=group["centered"], maximize=group["maximize"],
                    differentiable=group["differentiable"])
        return loss


def rmsprop(params, grads, square_avgs, grad_avgs, momentum_buffer_list, *, lr, alpha, eps,
            weight_decay, momentum, centered, maximize, differentiable=False, **_unused):
    r"""The RMSprop algorithm (torch.optim.rmsprop's single-tensor form)."""
    for i, param in enumerate(params):
        grad = grads[i]
        grad = grad if not maximize else -grad
        square_avg = square_avgs[i]

        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)

        square_avg.mul_(alpha).addcmul_(grad, grad, value=1 - alpha)

        if centered:
            grad_avg = grad_avgs[i]
            grad_avg.mul_(alpha).add_(grad, alpha=1 - alpha)
            avg = square_avg.addcmul(grad_avg, grad_avg, value=-1).sqrt_()
        else:
            avg = square_avg.sqrt()

        if differentiable:
            avg = avg.add(eps)
        else:
            avg = avg.add_(eps)

        if momentum > 0:
            buf = momentum_buffer_list[i]
            buf.mul_(momentum).addcdiv_(grad, avg)
            param.add_(buf, alpha=-lr)
        else:
            param.addcdiv_(grad, avg, value=-lr)
