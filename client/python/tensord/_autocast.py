"""Autocast (torch's automatic mixed precision) as torch 1.13 has it: a per-thread state per
device type (enabled, dtype), the nesting of autocast regions and the cache of cast weights, and
the casts torch's autocast dispatch key makes, by op.

While autocast is enabled for a device type, an op on torch's lists for that device type casts
its floating-point inputs on that device type (never float64 ones, never integer ones, never
tensors on another device type) before it runs: to the autocast dtype ("lower precision": the
matrix products and convolutions), to float32 ("fp32": losses, reductions and linear algebra
that lose accuracy in 16 bits) or to the widest input ("promote": cat, stack). The casts are
ordinary `to` ops, so autograd records them (ToCopyBackward0) and the gradients of float32
parameters come back in float32, as torch's.

Every op passes through `_ops._queue`, which calls `cast` while `active` is set (some thread is
in an autocast region): the tables below map tensord's server op names onto torch 1.13's lists
(the lists themselves: the kernels torch 1.13 registers for its AutocastCPU and AutocastCUDA
keys). Python functions that stand for one torch op (F.linear as t, addmm and add; F.conv1d as
a conv2d of a height of 1; the losses composed of elementwise ops) cast their arguments on
entry, as torch's kernel for that op does, and run their body with autocast off for that device
type, as torch's kernels run below its autocast key (`applies`, `run`, `op`).
"""
import functools
import threading
import weakref

from . import _dtypes

# Whether any thread may have autocast enabled: until one has, _ops._queue skips `cast` with one
# global read. Kept by the setters of the enabled flags.
active = False

_count_lock = threading.Lock()
_threads_enabled = 0  # threads whose cpu or cuda autocast is enabled


class _Count:
    """Whether a thread is among _threads_enabled; a thread that ends with autocast enabled
    leaves the count with its state."""

    __slots__ = ("on",)

    def __init__(self):
        self.on = False

    def __del__(self):
        if self.on:
            _change_count(-1)


def _change_count(delta):
    global _threads_enabled, active
    with _count_lock:
        _threads_enabled += delta
        active = _threads_enabled > 0


class _State(threading.local):
    """One thread's autocast state, torch's defaults: off, bfloat16 on cpu, float16 on cuda."""

    def __init__(self):
        self.cpu = False
        self.cuda = False
        self.cpu_dtype = _dtypes.bfloat16
        self.cuda_dtype = _dtypes.float16
        self.cache_enabled = True
        self.nesting = 0
        # Inside a Python function that stands for a listed op: its body runs below autocast.
        self.cpu_excluded = False
        self.cuda_excluded = False
        self.count = _Count()


_state = _State()


def _recount():
    """Keeps `active` true while any thread has autocast enabled for some device type."""
    on = _state.cpu or _state.cuda
    if on != _state.count.on:
        _change_count(1 if on else -1)
        _state.count.on = on


def _check_bool(value):
    if not isinstance(value, bool):
        raise TypeError(f"enabled must be a bool (got {type(value).__name__})")


def _check_dtype(value):
    if not isinstance(value, _dtypes.dtype):
        raise TypeError(f"dtype must be a torch.dtype (got {type(value).__name__})")


# ---- torch's functions on the state (torch.is_autocast_enabled, …) ----------------------------

def is_autocast_enabled():
    """Whether autocast is enabled for cuda in this thread."""
    return _state.cuda


def set_autocast_enabled(enabled):
    _check_bool(enabled)
    _state.cuda = enabled
    _recount()


def is_autocast_cpu_enabled():
    return _state.cpu


def set_autocast_cpu_enabled(enabled):
    _check_bool(enabled)
    _state.cpu = enabled
    _recount()


def get_autocast_gpu_dtype():
    return _state.cuda_dtype


def set_autocast_gpu_dtype(dtype):
    _check_dtype(dtype)
    _state.cuda_dtype = dtype


def get_autocast_cpu_dtype():
    return _state.cpu_dtype


def set_autocast_cpu_dtype(dtype):
    _check_dtype(dtype)
    if dtype is not _dtypes.bfloat16:
        raise RuntimeError("Currently, AutocastCPU only support Bfloat16 as the "
                           "autocast_cpu_dtype")
    _state.cpu_dtype = dtype


def is_autocast_cache_enabled():
    return _state.cache_enabled


def set_autocast_cache_enabled(enabled):
    _check_bool(enabled)
    _state.cache_enabled = enabled


def autocast_increment_nesting():
    _state.nesting += 1
    return _state.nesting


def autocast_decrement_nesting():
    _state.nesting -= 1
    return _state.nesting


# The cast weights (torch's cached_casts, shared by all threads): id of a float32 leaf that
# requires grad -> (a weak reference to it, its cast to the autocast dtype). An autocast region
# casts each weight once however many ops use it; the outermost region's exit clears it.
_cache = {}
_cache_lock = threading.Lock()


def clear_autocast_cache():
    with _cache_lock:
        _cache.clear()


# ---- the casts --------------------------------------------------------------------------------

LOWER = "lower_precision_fp"   # to the autocast dtype
FP32 = "fp32"                  # to float32
PROMOTE = "promote"            # to the widest floating dtype among the inputs
FP32_SET_OPT_DTYPE = "fp32_set_opt_dtype"  # dtype=float32 unless given (cuda reductions)
BANNED = "banned"              # refused (cuda binary_cross_entropy)
NONE = "none"                  # no cast; the body runs below autocast (Python functions only)
LOWER_RESULT = "lower_result"  # as NONE, then the result to the autocast dtype: a function
                               # whose last step torch runs as a listed op (pinv's matmul)

_BANNED_BCE = (
    "torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to autocast.\n"
    "Many models use a sigmoid layer right before the binary cross entropy layer.\n"
    "In this case, combine the two layers using torch.nn.functional."
    "binary_cross_entropy_with_logits\n"
    "or torch.nn.BCEWithLogitsLoss.  binary_cross_entropy_with_logits and BCEWithLogits are\n"
    "safe to autocast.")


def _device_type(t):
    return "cuda" if t._meta().device.startswith("cuda") else "cpu"


def _eligible(t, device):
    """torch's is_eligible: a floating-point tensor on `device`'s type, not float64 (tensors of
    failed ops are left for the op to report)."""
    if t._error is not None:
        return False
    info = t._meta()
    if info.device.startswith("cuda") != (device == "cuda"):
        return False
    d = _dtypes.from_proto(info.dtype)
    return d.is_floating_point and d is not _dtypes.float64


def _cast(t, to, device, lower):
    """torch's cached_cast: `t` in dtype `to` when eligible (else itself); the casts of float32
    leaves that require grad to the autocast dtype are cached while the cache is enabled."""
    if not _eligible(t, device) or t.dtype is to:
        return t
    if (to is lower and t.dtype is _dtypes.float32 and _state.cache_enabled and
            t.requires_grad and t.is_leaf and not t._is_view()):
        key = id(t)
        with _cache_lock:
            hit = _cache.get(key)
        if hit is not None and hit[0]() is t:
            return hit[1]
        out = t._to(dtype=to)
        with _cache_lock:
            _cache[key] = (weakref.ref(t), out)
        return out
    return t._to(dtype=to)


def _widest(tensors, device, lower):
    """torch's promote_type: the autocast dtype promoted with every eligible input's dtype."""
    to = lower
    for t in tensors:
        if _eligible(t, device):
            to = _dtypes.promote_types(to, t.dtype)
    return to


def _on(tensors, device):
    return any(t._error is None and _device_type(t) == device for t in tensors)


def _apply(policy, device, inputs, attrs):
    """An op's inputs and attributes under `policy` for `device`'s type."""
    if callable(policy):
        policy = policy(inputs, attrs, device)
        if policy is None:
            return inputs, attrs
    lower = _state.cuda_dtype if device == "cuda" else _state.cpu_dtype
    tensors = [t for t in inputs if hasattr(t, "_meta")]
    if policy is BANNED:
        if _on(tensors, device):
            raise RuntimeError(_BANNED_BCE)
        return inputs, attrs
    if policy is FP32_SET_OPT_DTYPE:
        if tensors and _eligible(tensors[0], device) and (not attrs or attrs.get("dtype") is None):
            attrs = {**(attrs or {}), "dtype": _dtypes.float32}
        return inputs, attrs
    if policy is LOWER:
        to = lower
    elif policy is FP32:
        to = _dtypes.float32
    else:
        to = _widest(tensors, device, lower)
    return [_cast(t, to, device, lower) if hasattr(t, "_meta") else t for t in inputs], attrs


def cast(name, inputs, attrs):
    """The inputs (and attributes) of server op `name` as torch's autocast gives them to the
    op: first for cuda, then for cpu (torch's dispatch order), each while enabled in this
    thread and not inside a Python function that stands for a listed op."""
    s = _state
    if s.cuda and not s.cuda_excluded:
        policy = _CUDA_OPS.get(name)
        if policy is not None:
            inputs, attrs = _apply(policy, "cuda", inputs, attrs)
    if s.cpu and not s.cpu_excluded:
        policy = _CPU_OPS.get(name)
        if policy is not None:
            inputs, attrs = _apply(policy, "cpu", inputs, attrs)
    return inputs, attrs


# ---- Python functions that stand for one torch op ----------------------------------------------

def _tensors_of(args):
    for a in args:
        if hasattr(a, "_meta"):
            yield a
        elif isinstance(a, (list, tuple)):
            for x in a:
                if hasattr(x, "_meta"):
                    yield x


def _device_for(name, args):
    """The device type whose autocast runs Python op `name` on `args` now, or None."""
    cpu_policy, cuda_policy = _PY_OPS[name]
    s = _state
    tensors = list(_tensors_of(args))
    if cuda_policy is not None and s.cuda and not s.cuda_excluded and _on(tensors, "cuda"):
        return "cuda"
    if cpu_policy is not None and s.cpu and not s.cpu_excluded and _on(tensors, "cpu"):
        return "cpu"
    return None


def applies(name, args, kwargs=None):
    """Whether torch's autocast would handle op `name` called on these arguments (in this
    thread, now)."""
    return _device_for(name, (*args, *(kwargs or {}).values())) is not None


def run(name, fn, args, kwargs=None):
    """fn(*args, **kwargs), the Python function of op `name`, as torch's autocast kernel runs
    the op: its tensor arguments (and those in list or tuple arguments) cast by the op's policy,
    then the body with autocast off for that device type."""
    kwargs = kwargs or {}
    device = _device_for(name, (*args, *kwargs.values()))
    policy = _PY_OPS[name][device == "cuda"]
    lower = _state.cuda_dtype if device == "cuda" else _state.cpu_dtype
    if policy is not NONE and policy is not LOWER_RESULT:
        tensors = list(_tensors_of((*args, *kwargs.values())))
        to = (lower if policy is LOWER else _dtypes.float32 if policy is FP32 else
              _widest(tensors, device, lower))

        def cast_one(a):
            if hasattr(a, "_meta"):
                return _cast(a, to, device, lower)
            if type(a) in (list, tuple) and any(hasattr(x, "_meta") for x in a):
                return type(a)(_cast(x, to, device, lower) if hasattr(x, "_meta") else x
                               for x in a)
            return a
        args = tuple(cast_one(a) for a in args)
        kwargs = {k: cast_one(v) for k, v in kwargs.items()}
    flag = device + "_excluded"
    before = getattr(_state, flag)
    setattr(_state, flag, True)
    try:
        result = fn(*args, **kwargs)
    finally:
        setattr(_state, flag, before)
    if policy is LOWER_RESULT and hasattr(result, "_meta"):
        result = _cast(result, lower, device, lower)
    return result


def op(name):
    """Decorator for a Python function that stands for torch op `name` (its policies in
    _PY_OPS): under autocast it runs as `run` says; else as it is."""
    def wrap(fn):
        @functools.wraps(fn)
        def f(*args, **kwargs):
            if active and applies(name, args, kwargs):
                return run(name, fn, args, kwargs)
            return fn(*args, **kwargs)
        return f
    return wrap


# ---- policies that depend on the call ----------------------------------------------------------

def _einsum(inputs, attrs, device):
    """torch 1.13's einsum contracts its operands pairwise, left to right: a pair with an index
    to sum out that both hold (of size > 1 in both) goes through bmm (autocast: the autocast
    dtype), another is a mul (types promoted). Lower precision when the last pair is a
    contraction (cuda: einsum is on the list itself)."""
    if device == "cuda":
        return LOWER
    equation = str((attrs or {}).get("equation", "")).replace(" ", "")
    lhs, arrow, rhs = equation.partition("->")
    terms = lhs.split(",")
    if len(terms) < 2 or len(terms) != len(inputs):
        return None
    letters, sizes = [], []
    for term, t in zip(terms, inputs):
        shape = tuple(t.shape)
        named = term.replace("...", "")
        if "..." in term:
            head = term.index("...")
            dims = list(range(head)) + list(range(len(shape) - (len(term) - head - 3), len(shape)))
        else:
            dims = list(range(len(named)))
        if len(dims) != len(named) or (dims and max(dims) >= len(shape)):
            return None  # the op itself says what is wrong with the equation
        letters.append(named)
        sizes.append({c: shape[d] for c, d in zip(named, dims)})
    if arrow:
        output = set(rhs.replace("...", ""))
    else:
        counts = {}
        for term in letters:
            for c in term:
                counts[c] = counts.get(c, 0) + 1
        output = {c for c, k in counts.items() if k == 1}
    last = {}
    for i, term in enumerate(letters):
        for c in term:
            last[c] = i
    result = {c: n for c, n in sizes[0].items() if c in output or last[c] > 0}
    contracted = False
    for i in range(1, len(letters)):
        operand = sizes[i]
        contracted = False
        for c in set(result) | set(operand):
            if c in output or last[c] != i:
                continue
            if result.get(c, 1) != 1 and operand.get(c, 1) != 1:
                contracted = True
        result = {**result, **operand}
        result = {c: n for c, n in result.items() if c in output or last[c] > i}
    return LOWER if contracted else None


def _inner(inputs, attrs, device):
    """torch's inner: a mul when either is 0-d, else tensordot (mm)."""
    if any(t.dim() == 0 for t in inputs):
        return None
    return LOWER if device == "cpu" else PROMOTE


def _chain_matmul(inputs, attrs, device):
    return LOWER if len(inputs) >= 2 else None  # a single matrix: its clone


def _matrix_power(inputs, attrs, device):
    """torch's matrix_power: matmuls for |n| >= 2, of linalg_inv (float32 on cpu) for n < 0;
    n in (0, 1): the identity or a clone. (n <= -2 under autocast: linalg.matrix_power inverts
    first.)"""
    n = int((attrs or {}).get("n", 0))
    if abs(n) >= 2:
        return LOWER
    return FP32 if n == -1 and device == "cpu" else None


def _pad(inputs, attrs, device):
    """cpu: reflection_pad1d/2d and replication_pad1d/2d/3d are on the float32 list."""
    attrs = attrs or {}
    mode, n = attrs.get("mode", "constant"), len(attrs.get("pad", ()))
    if (mode == "reflect" and n in (2, 4)) or (mode == "replicate" and n in (2, 4, 6)):
        return FP32
    return None


# ---- torch 1.13's lists, by tensord server op -------------------------------------------------

_CPU_OPS = {
    **dict.fromkeys(["mm", "bmm", "baddbmm", "addmm", "addbmm", "matmul", "conv2d", "conv3d",
                     "tensordot", "linalg_multi_dot"], LOWER),
    "einsum": _einsum, "inner": _inner, "chain_matmul": _chain_matmul,
    "linalg_matrix_power": _matrix_power, "pad": _pad,
    **dict.fromkeys([
        "conv_transpose2d", "conv_transpose3d", "avg_pool3d", "max_pool3d", "max_unpool2d",
        "max_unpool3d", "adaptive_avg_pool3d", "adaptive_max_pool3d", "grid_sampler", "prod",
        "quantile", "nanquantile", "cdist", "trace", "mse_loss", "l1_loss", "smooth_l1_loss",
        "huber_loss", "kl_div", "nll_loss", "cross_entropy", "ctc_loss", "soft_margin_loss",
        "binary_cross_entropy", "binary_cross_entropy_with_logits", "geqrf", "ormqr",
        "linalg_householder_product", "linalg_cholesky", "linalg_cholesky_ex", "linalg_eigh",
        "linalg_eigvalsh", "linalg_inv", "linalg_inv_ex", "linalg_qr", "linalg_solve",
        "linalg_svd", "linalg_svdvals", "linalg_matrix_rank"], FP32),
    **dict.fromkeys(["cat", "concat", "stack", "index_copy"], PROMOTE),
}

_CUDA_OPS = {
    **dict.fromkeys(["conv2d", "conv3d", "conv_transpose2d", "conv_transpose3d", "addmm",
                     "addmv", "addr", "matmul", "mm", "mv", "addbmm", "baddbmm", "bmm",
                     "chain_matmul", "linalg_multi_dot"], LOWER),
    "einsum": _einsum, "inner": _inner, "linalg_matrix_power": _matrix_power,
    **dict.fromkeys([
        "acos", "arccos", "asin", "arcsin", "cosh", "erfinv", "exp", "expm1", "log", "log10",
        "log2", "log1p", "reciprocal", "rsqrt", "sinh", "tan", "pow", "softplus", "layer_norm",
        "group_norm", "cosine_similarity", "normalize", "pairwise_distance", "nll_loss",
        "cross_entropy", "kl_div", "l1_loss", "smooth_l1_loss", "huber_loss", "mse_loss",
        "soft_margin_loss", "binary_cross_entropy_with_logits", "cdist", "logsumexp"], FP32),
    **dict.fromkeys(["sum", "prod", "cumsum", "cumprod", "softmax", "log_softmax", "softmin",
                     "norm"], FP32_SET_OPT_DTYPE),
    **dict.fromkeys(["addcdiv", "addcmul", "atan2", "arctan2", "cross", "dot", "grid_sampler",
                     "tensordot", "scatter_add"], PROMOTE),
    "binary_cross_entropy": BANNED,
}

# Python functions (op names of torch's lists or of torch's own functions): (cpu policy, cuda
# policy), None where the device type's autocast leaves the function to the ops it runs.
_PY_OPS = {
    "linear": (LOWER, LOWER),
    "conv1d": (LOWER, LOWER),
    "conv_tbc": (LOWER, LOWER),
    "prelu": (None, LOWER),
    "rnn_cell": (None, LOWER),  # lstm_cell, gru_cell, rnn_tanh_cell, rnn_relu_cell
    "bilinear": (None, PROMOTE),
    "linalg_pinv": (LOWER_RESULT, LOWER_RESULT),
    "linalg_vector_norm": (None, NONE),  # one kernel in torch, on no list (cuda: norm's is)
    "index_put": (None, PROMOTE),
    "matrix_exp": (NONE, NONE),
    "istft": (NONE, NONE),
    "stft": (FP32, None),
    "fractional_max_pool": (FP32, None),
    "max_pool3d": (FP32, None),  # max_pool3d without indices (with them: not on the list)
    "linalg_fp32": (FP32, None),  # cpu's float32 list: lstsq, cond, matrix_norm, pinverse, …
    "cosine_embedding_loss": (FP32, FP32),
    "hinge_embedding_loss": (FP32, FP32),
    "margin_ranking_loss": (FP32, FP32),
    "multi_margin_loss": (FP32, FP32),
    "multilabel_margin_loss": (FP32, FP32),
    "poisson_nll_loss": (FP32, FP32),
    "triplet_margin_loss": (FP32, FP32),
    "cuda_fp32": (None, FP32),  # cuda's float32 list: dist, pdist, renorm, nuclear_norm, …
}
