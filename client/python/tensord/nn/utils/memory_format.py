"""torch.nn.utils.memory_format: lay out the weights of a model's 2-d convolutions in a memory
format (channels_last for one)."""
from ... import _factories
from ..._composite import _take_handle
from ..modules.conv import Conv2d, ConvTranspose2d

__all__ = ["convert_conv2d_weight_memory_format"]


def convert_conv2d_weight_memory_format(module, memory_format):
    """Every Conv2d / ConvTranspose2d weight in `module` (recursively) keeps its values and
    object and takes the strides of `memory_format`, as torch's resize_ gives them."""
    if isinstance(module, (Conv2d, ConvTranspose2d)):
        w = module.weight
        laid_out = _factories.empty(tuple(w.shape), dtype=w.dtype, device=w.device,
                                    memory_format=memory_format, session=w._session)
        _take_handle(w, laid_out.copy_(w.detach()))
    for child in module.children():
        convert_conv2d_weight_memory_format(child, memory_format)
    return module
