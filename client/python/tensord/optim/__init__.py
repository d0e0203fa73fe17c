""":mod:`tensord.optim`: PyTorch 1.13's torch.optim for tensord tensors: the optimizers (SGD,
Adam, AdamW, RMSprop, Adagrad) and ``lr_scheduler``. Each step runs torch's single-tensor
algorithm with tensord ops on the server, with gradient recording off (as torch's), on the
``.grad`` that backward() accumulated or the program assigned."""
from .optimizer import Optimizer
from .sgd import SGD
from .adam import Adam
from .adamw import AdamW
from .rmsprop import RMSprop
from .adagrad import Adagrad
from . import lr_scheduler

del optimizer, sgd, adam, adamw, rmsprop, adagrad  # noqa: F821 (as torch.optim does)

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "lr_scheduler"]
