"""torch.optim.Adam (PyTorch 1.13) for tensord (torch's single-tensor algorithm, run on the
server)."""
import math

from .optimizer import Optimizer, _closure_loss, _tensor_step, _increment

__all__ = ["Adam", "adam"]


def _check_adam_args(lr, betas, eps, weight_decay):
    if not 0.0 <= lr:
        raise ValueError("Invalid learning rate: {}".format(lr))
    if not 0.0 <= eps:
        raise ValueError("Invalid epsilon value: {}".format(eps))
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError("Invalid beta parameter at index 0: {}".format(betas[0]))
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError("Invalid beta parameter at index 1: {}".format(betas[1]))
    if not 0.0 <= weight_decay:
        raise ValueError("Invalid weight_decay value: {}".format(weight_decay))


def _new_step(capturable_or_fused, p):
    if capturable_or_fused:
        from .. import zeros, float32
        return zeros((1,), dtype=float32, device=p.device)
    return _tensor_step()


def _adam_state(optimizer, group, p, capturable_or_fused):
    from .. import zeros_like, preserve_format
    state = optimizer.state[p]
    if len(state) == 0:
        state["step"] = _new_step(capturable_or_fused, p)
        state["exp_avg"] = zeros_like(p, memory_format=preserve_format)
        state["exp_avg_sq"] = zeros_like(p, memory_format=preserve_format)
        if group["amsgrad"]:
            state["max_exp_avg_sq"] = zeros_like(p, memory_format=preserve_format)
    return state


class Adam(Optimizer):
    r"""Implements the Adam algorithm, as torch.optim.Adam."""

    _group_defaults = dict(amsgrad=False, maximize=False, foreach=None, capturable=False,
                           differentiable=False, fused=False)
    _tensor_steps = True

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8,
                 weight_decay=0, amsgrad=False, *, foreach=None,
                 maximize=False, capturable=False,
                 differentiable=False, fused=False):
        _check_adam_args(lr, betas, eps, weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps,
                        weight_decay=weight_decay, amsgrad=amsgrad,
                        maximize=maximize, foreach=foreach, capturable=capturable,
                        differentiable=differentiable, fused=fused)
        super(Adam, self).__init__(params, defaults)

        if fused:
            if differentiable:
                raise RuntimeError("`fused` cannot be `differentiable`")
            from .. import is_floating_point
            if not all(p.is_cuda and is_floating_point(p)
                       for pg in self.param_groups for p in pg["params"]):
                raise RuntimeError("FusedAdam requires all the params to be CUDA, floating point")

    def step(self, closure=None, *, grad_scaler=None):
        """Performs a single optimization step; `closure` reevaluates the model and returns
        the loss."""
        loss = _closure_loss(closure)
        for group in self.param_groups:
            _group_step(self, group, "Adam does not support sparse gradients, please consider "
                        "SparseAdam instead", self.defaults["capturable"] or
                        self.defaults["fused"], decoupled=False)
        return loss


def _group_step(optimizer, group, sparse_message, capturable, decoupled):
    """One param group's Adam (or, `decoupled`, AdamW) step: the parameters with a gradient,
    their state made on first use, then the algorithm."""
    params_with_grad, grads, exp_avgs, exp_avg_sqs = [], [], [], []
    max_exp_avg_sqs, state_steps = [], []
    beta1, beta2 = group["betas"]
    for p in group["params"]:
        if p.grad is None:
            continue
        params_with_grad.append(p)
        if p.grad.is_sparse:
            raise RuntimeError(sparse_message)
        grads.append(p.grad)
        state = _adam_state(optimizer, group, p, capturable)
        exp_avgs.append(state["exp_avg"])
        exp_avg_sqs.append(state["exp_avg_sq"])
        if group["amsgrad"]:
            max_exp_avg_sqs.append(state["max_exp_avg_sq"])
        state_steps.append(state["step"])
    adam(params_with_grad, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps,
         amsgrad=group["amsgrad"], beta1=beta1, beta2=beta2, lr=group["lr"],
         weight_decay=group["weight_decay"], eps=group["eps"], maximize=group["maximize"],
         decoupled=decoupled)


def adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, *, amsgrad,
         beta1, beta2, lr, weight_decay, eps, maximize, decoupled=False, **_unused):
    r"""The Adam algorithm (torch.optim.adam's single-tensor form); `decoupled`: AdamW's
    (torch.optim.adamw's), whose weight decay shrinks the parameter instead of adding to the
    gradient."""
    from .. import maximum
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else -grads[i]
        exp_avg = exp_avgs[i]
        exp_avg_sq = exp_avg_sqs[i]
        step_t = state_steps[i]

        step = _increment(step_t)

        if decoupled:
            param.mul_(1 - lr * weight_decay)
        elif weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)

        exp_avg.mul_(beta1).add_(grad, alpha=1 - beta1)
        exp_avg_sq.mul_(beta2).addcmul_(grad, grad.conj(), value=1 - beta2)

        bias_correction1 = 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** step
        step_size = lr / bias_correction1
        bias_correction2_sqrt = math.sqrt(bias_correction2)

        if amsgrad:
            maximum(max_exp_avg_sqs[i], exp_avg_sq, out=max_exp_avg_sqs[i])
            denom = (max_exp_avg_sqs[i].sqrt() / bias_correction2_sqrt).add_(eps)
        else:
            denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)

        param.addcdiv_(exp_avg, denom, value=-step_size)
