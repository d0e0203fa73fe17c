"""tensord: PyTorch's tensor API on a remote tensord server.

    import tensord as torch
    t = torch.arange(24).view(1, 2, 3, 4)     # held by the server; views share its storage
    t.permute(0, 2, 3, 1).stride()            # (24, 4, 1, 12)

Module-level functions use a default session on $TENSORD_ADDRESS (127.0.0.1:50051), opened on
first use and closed at exit; `tensord.connect(address)` opens others (`with` blocks make one
current and close it at the end).
"""
from . import _dtypes
from ._dtypes import Size, device, dtype, promote_types
from ._dtypes import (bfloat16, float16, float32, float64, int8, int16, int32, int64, uint8)
from ._dtypes import bool_ as bool  # noqa: A001 - torch.bool
from ._compare import allclose, equal, isclose
from ._memory_format import (channels_last, channels_last_3d, contiguous_format, layout,
                             memory_format, preserve_format, strided)
from ._errors import OutOfMemoryError
from ._grad_mode import (enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled,
                         no_grad, set_grad_enabled)
from ._info import can_cast, finfo, iinfo, result_type
from .autograd.anomaly_mode import (is_anomaly_check_nan_enabled, is_anomaly_enabled,  # noqa: F401
                                    set_anomaly_enabled)
from ._state import *  # noqa: F401,F403 - torch's thread, determinism and precision switches
from ._format import set_printoptions
from ._session import Session
from ._storage import TypedStorage, UntypedStorage
from ._tensor import Tensor, _legacy_types
globals().update(_legacy_types())  # FloatTensor, LongTensor, …
from ._api import (arange, as_tensor, cancel, cartesian_prod, cat, concat, concatenate, connect,
                   current_session, empty, empty_like, empty_strided, eye, from_file, from_numpy,
                   frombuffer,
                   full, full_like, get_default_dtype, hstack, is_floating_point, is_tensor,
                   linspace, meshgrid, numel, ones, ones_like, set_default_dtype,
                   set_default_session, set_default_tensor_type, stack, synchronize, tensor, vstack, zeros, zeros_like)
from ._api import (Generator, get_rng_state, set_rng_state)
from ._api import (bernoulli, default_generator, initial_seed, manual_seed, nonzero, normal,
                   binomial, poisson,
                   rand, rand_like, randint, randint_like, randn, randn_like, randperm, seed,
                   where)
from ._api import imag, real
from . import _api as _api_module
from ._autocast import (autocast_decrement_nesting, autocast_increment_nesting,
                        clear_autocast_cache, get_autocast_cpu_dtype, get_autocast_gpu_dtype,
                        is_autocast_cache_enabled, is_autocast_cpu_enabled, is_autocast_enabled,
                        set_autocast_cache_enabled, set_autocast_cpu_dtype,
                        set_autocast_cpu_enabled, set_autocast_enabled, set_autocast_gpu_dtype)
from . import autograd
from . import nn
from . import cuda
from . import cpu
from . import amp
from .amp import autocast  # torch.autocast (torch.amp.autocast_mode.autocast)
from . import testing
from . import distributions
from . import linalg
from . import special
from . import backends
from . import distributed
from . import jit
from . import utils  # tensord.utils.data, imported with tensord as torch's is
from . import optim
from . import profiler
from . import return_types
from . import random
from math import e, inf, nan, pi  # noqa: E402 - torch.e, torch.inf, torch.nan, torch.pi
from .serialization import load, save
from .nn.functional import celu, celu_, selu, selu_  # torch.selu, torch.celu
from ._compute import polygamma  # torch.polygamma(n, input): the order first
from .utils.dlpack import from_dlpack, to_dlpack  # torch.from_dlpack, torch.to_dlpack
from .jit import fork, wait  # torch.fork / torch.wait: TorchScript's futures, run eagerly

half = float16
float = float32  # noqa: A001 - torch.float
double = float64
short = int16
int = int32  # noqa: A001 - torch.int
long = int64

for _name in _api_module._FUNCTIONAL + _api_module.FUNCTIONS:
    globals()[_name] = _api_module._fn(_name)
del _name

from ._session import _CLIENT_VERSION as __version__  # noqa: E402
from . import _composite  # noqa: E402
from . import _signatures  # noqa: E402

_composite.install(Tensor, globals())
linalg.install(Tensor, globals())
for _name, _f in (*nn.functional._torch_namespace().items(),
                  *nn.modules.rnn.TORCH_FUNCTIONS.items()):
    globals().setdefault(_name, _f)
del _name, _f
Tensor.prelu = nn.functional.prelu  # torch's Tensor.prelu(weight)

_signatures.install(Tensor, globals(), ("empty", "zeros", "ones", "rand", "randn"))
from . import _out  # noqa: E402
_out.install(globals())
