"""torch.optim.SGD (PyTorch 1.13) for tensord: stochastic gradient descent, optionally with
momentum (torch's single-tensor algorithm, run on the server)."""
from .optimizer import Optimizer, required, _closure_loss

__all__ = ["SGD", "sgd"]


class SGD(Optimizer):
    r"""Implements stochastic gradient descent (optionally with momentum), as torch.optim.SGD."""

    _group_defaults = dict(nesterov=False, maximize=False, foreach=None, differentiable=False)

    def __init__(self, params, lr=required, momentum=0, dampening=0,
                 weight_decay=0, nesterov=False, *, maximize=False, foreach=None,
                 differentiable=False):
        if lr is not required and lr < 0.0:
            raise ValueError("Invalid learning rate: {}".format(lr))
        if momentum < 0.0:
            raise ValueError("Invalid momentum value: {}".format(momentum))
        if weight_decay < 0.0:
            raise ValueError("Invalid weight_decay value: {}".format(weight_decay))

        defaults = dict(lr=lr, momentum=momentum, dampening=dampening,
                        weight_decay=weight_decay, nesterov=nesterov,
                        maximize=maximize, foreach=foreach,
                        differentiable=differentiable)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super(SGD, self).__init__(params, defaults)

    def step(self, closure=None):
        """Performs a single optimization step; `closure` reevaluates the model and returns
        the loss."""
        loss = _closure_loss(closure)
        for group in self.param_groups:
            params_with_grad = []
            d_p_list = []
            momentum_buffer_list = []
            for p in group["params"]:
                if p.grad is not None:
                    params_with_grad.append(p)
                    d_p_list.append(p.grad)
                    state = self.state[p]
                    momentum_buffer_list.append(state.get("momentum_buffer"))

            sgd(params_with_grad, d_p_list, momentum_buffer_list,
                weight_decay=group["weight_decay"], momentum=group["momentum"],
                lr=group["lr"], dampening=group["dampening"], nesterov=group["nesterov"],
                maximize=group["maximize"])

            for p, momentum_buffer in zip(params_with_grad, momentum_buffer_list):
                self.state[p]["momentum_buffer"] = momentum_buffer
        return loss


def sgd(params, d_p_list, momentum_buffer_list, *, weight_decay, momentum, lr, dampening,
        nesterov, maximize, foreach=None, has_sparse_grad=None):
    r"""The SGD algorithm (torch.optim.sgd's single-tensor form); fills
    `momentum_buffer_list`'s None entries with new buffers."""
    for i, param in enumerate(params):
        d_p = d_p_list[i] if not maximize else -d_p_list[i]

        if weight_decay != 0:
            d_p = d_p.add(param, alpha=weight_decay)

        if momentum != 0:
            buf = momentum_buffer_list[i]
            if buf is None:
                buf = d_p.clone().detach()
                momentum_buffer_list[i] = buf
            else:
                buf.mul_(momentum).add_(d_p, alpha=1 - dampening)

            if nesterov:
                d_p = d_p.add(buf, alpha=momentum)
            else:
                d_p = buf

        param.add_(d_p, alpha=-lr)
