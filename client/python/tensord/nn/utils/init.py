"""torch.nn.utils.init: skip_init, a module built without initialising its parameters."""
import inspect

from ... import _random
from ..modules.module import Module

__all__ = ["skip_init"]


def skip_init(module_cls, *args, **kwargs):
    """module_cls(*args, **kwargs) with uninitialised parameters and buffers on `device` (the
    CPU by default). tensord has no meta device: the module is built there and its tensors
    replaced by empty ones (to_empty), with the random draws of its initialisation given back,
    so that the generator is where torch's is (which draws nothing)."""
    if not issubclass(module_cls, Module):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    final_device = kwargs.pop("device", "cpu")
    generator = _random.default_generator
    offset = generator.offset
    try:
        module = module_cls(*args, device=final_device, **kwargs)
    finally:
        generator.offset = offset
    return module.to_empty(device=final_device)
