"""Helpers the differential tests share: run a call as an outcome (its value, or its exception
class and message) and bring a tensord result back as a CPU torch tensor to compare."""
import torch

import tensord


def outcome(fn):
    """(value, None), or (None, (exception class name, message)) when fn raises."""
    try:
        return fn(), None
    except Exception as e:  # noqa: BLE001 - the class is what is compared
        return None, (type(e).__name__, str(e))


def as_torch(t):
    """A tensord tensor (on any device, any dtype, bfloat16 included) as a CPU torch tensor."""
    t = t.cpu()
    if t.dtype is tensord.bfloat16:
        return torch.tensor(t.float().numpy()).to(torch.bfloat16)
    return torch.tensor(t.numpy())
