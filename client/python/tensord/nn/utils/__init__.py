"""torch.nn.utils for tensord modules."""
from . import rnn  # noqa: F401
from .clip_grad import clip_grad_norm, clip_grad_norm_, clip_grad_value_  # noqa: F401
from .weight_norm import weight_norm, remove_weight_norm  # noqa: F401
from .convert_parameters import parameters_to_vector, vector_to_parameters  # noqa: F401
from .spectral_norm import spectral_norm, remove_spectral_norm  # noqa: F401
from .fusion import fuse_conv_bn_eval, fuse_conv_bn_weights  # noqa: F401
from .memory_format import convert_conv2d_weight_memory_format  # noqa: F401
from . import parametrizations  # noqa: F401
from . import parametrize  # noqa: F401
from .init import skip_init  # noqa: F401
from . import stateless  # noqa: F401
from . import prune  # noqa: F401 - imported here so that `torch.nn.utils.prune` aliases it
