"""torch.optim.AdamW (PyTorch 1.13) for tensord (torch's single-tensor algorithm, run on the
server)."""
from .optimizer import Optimizer, _closure_loss
from .adam import _check_adam_args, _group_step, adam

__all__ = ["AdamW", "adamw"]


class AdamW(Optimizer):
    r"""Implements the AdamW algorithm (decoupled weight decay), as torch.optim.AdamW."""

    _group_defaults = dict(amsgrad=False, maximize=False, foreach=None, capturable=False)
    _tensor_steps = True

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8,
                 weight_decay=1e-2, amsgrad=False, *, maximize=False,
                 foreach=None, capturable=False):
        _check_adam_args(lr, betas, eps, weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps,
                        weight_decay=weight_decay, amsgrad=amsgrad,
                        foreach=foreach, maximize=maximize, capturable=capturable)
        super(AdamW, self).__init__(params, defaults)

    def step(self, closure=None):
        """Performs a single optimization step; `closure` reevaluates the model and returns
        the loss."""
        loss = _closure_loss(closure)
        for group in self.param_groups:
            _group_step(self, group, "AdamW does not support sparse gradients",
                        self.defaults["capturable"], decoupled=True)
        return loss


def adamw(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, **kwargs):
    r"""The AdamW algorithm (torch.optim.adamw's single-tensor form): Adam's, with decoupled
    weight decay."""
    adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, decoupled=True,
         **kwargs)
