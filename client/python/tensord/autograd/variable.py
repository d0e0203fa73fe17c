"""torch.autograd.variable: Variable, which since torch 0.4 gives a Tensor."""
from . import Variable  # noqa: F401
