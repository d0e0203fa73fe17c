"""torch.optim.Adagrad (PyTorch 1.13) for tensord (torch's single-tensor algorithm, run on the
server; dense gradients)."""
from .optimizer import Optimizer, _closure_loss, _tensor_step, _increment

__all__ = ["Adagrad", "adagrad"]


class Adagrad(Optimizer):
    r"""Implements the Adagrad algorithm, as torch.optim.Adagrad."""

    _group_defaults = dict(foreach=None, maximize=False)
    _tensor_steps = True

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0,
                 initial_accumulator_value=0, eps=1e-10, foreach=None, *, maximize=False):
        if not 0.0 <= lr:
            raise ValueError("Invalid learning rate: {}".format(lr))
        if not 0.0 <= lr_decay:
            raise ValueError("Invalid lr_decay value: {}".format(lr_decay))
        if not 0.0 <= weight_decay:
            raise ValueError("Invalid weight_decay value: {}".format(weight_decay))
        if not 0.0 <= initial_accumulator_value:
            raise ValueError("Invalid initial_accumulator_value value: {}".format(
                initial_accumulator_value))
        if not 0.0 <= eps:
            raise ValueError("Invalid epsilon value: {}".format(eps))

        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value,
                        foreach=foreach, maximize=maximize)
        super(Adagrad, self).__init__(params, defaults)

        from .. import full_like, preserve_format
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                state["step"] = _tensor_step()
                init_value = (complex(initial_accumulator_value, initial_accumulator_value)
                              if p.is_complex() else initial_accumulator_value)
                state["sum"] = full_like(p, init_value, memory_format=preserve_format)

    def step(self, closure=None):
        """Performs a single optimization step; `closure` reevaluates the model and returns
        the loss."""
        loss = _closure_loss(closure)
        for group in self.param_groups:
            params_with_grad, grads, state_sums, state_steps = [], [], [], []
            for p in group["params"]:
                if p.grad is not None:
                    if p.grad.is_sparse:
                        raise RuntimeError("Adagrad of tensord does not support sparse gradients")
                    params_with_grad.append(p)
                    grads.append(p.grad)
                    state = self.state[p]
                    state_sums.append(state["sum"])
                    state_steps.append(state["step"])

            adagrad(params_with_grad, grads, state_sums, state_steps, lr=group["lr"],
                    weight_decay=group["weight_decay"], lr_decay=group["lr_decay"],
                    eps=group["eps"], maximize=group["maximize"])
        return loss


def adagrad(params, grads, state_sums, state_steps, *, lr, weight_decay, lr_decay, eps,
            maximize, **_unused):
    r"""The Adagrad algorithm (torch.optim.adagrad's single-tensor form, dense gradients)."""
    for (param, grad, state_sum, step_t) in zip(params, grads, state_sums, state_steps):
        step = _increment(step_t)
        grad = grad if not maximize else -grad

        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)

        clr = lr / (1 + (step - 1) * lr_decay)

        state_sum.addcmul_(grad, grad, value=1)
        std = state_sum.sqrt().add_(eps)
        param.addcdiv_(grad, std, value=-clr)
