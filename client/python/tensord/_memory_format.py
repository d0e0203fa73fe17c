"""torch's layouts and memory formats: the `layout` and `memory_format` types with their
instances (strided; contiguous_format, channels_last, channels_last_3d, preserve_format), and
the stride rules of torch 1.13 that use them, as functions of sizes and strides (c10's
TensorImpl flags, MemoryFormat.h's channels-last strides, ATen's infer_dense_strides).
"""


class _Named:
    """An instance with torch's printed name; made only here, as torch's are."""

    __slots__ = ("_name",)
    _open = True

    def __new__(cls, *args, **kwargs):
        if not cls._open:
            raise TypeError(f"cannot create 'torch.{cls.__name__}' instances")
        self = object.__new__(cls)
        self._name = args[0]
        return self

    def __repr__(self):
        return "torch." + self._name

    __str__ = __repr__

    def __reduce__(self):
        return self._name  # pickled as the module global of that name: the same instance

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self


class layout(_Named):  # noqa: N801 - torch.layout
    """torch.layout: how a tensor's elements are held. tensord has torch.strided only."""

    __slots__ = ()


class memory_format(_Named):  # noqa: N801 - torch.memory_format
    """torch.memory_format: the order of dims in memory a copy or factory lays a tensor out in."""

    __slots__ = ()


strided = layout("strided")
contiguous_format = memory_format("contiguous_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
preserve_format = memory_format("preserve_format")
layout._open = memory_format._open = False

_CHANNELS_LAST = {channels_last: (4, "channels_last"), channels_last_3d: (5, "channels_last_3d")}


# ---- argument checks ----------------------------------------------------------------------------

def check_memory_format(value, fn, allow_none=True):
    """`value` if it is a memory format (or None where `allow_none`), else torch's TypeError
    naming `fn`'s argument."""
    if isinstance(value, memory_format) or (value is None and allow_none):
        return value
    raise TypeError(f"{fn}(): argument 'memory_format' must be torch.memory_format, not "
                    f"{_type_name(value)}")


def check_layout(value, fn):
    """Refuses a layout other than None or strided with torch's TypeError (tensord holds strided
    tensors only, so torch's other layouts are no tensord.layout)."""
    if value is None or value is strided:
        return
    raise TypeError(f"{fn}(): argument 'layout' must be torch.layout, not {_type_name(value)}")


def _type_name(value):
    t = type(value)
    return f"torch.{t.__name__}" if isinstance(value, _Named) else t.__name__


# ---- strides ------------------------------------------------------------------------------------

def contiguous_strides(sizes):
    """Row-major strides (a size-0 or size-1 dim counts as 1), as torch's empty makes."""
    strides = [0] * len(sizes)
    s = 1
    for d in range(len(sizes) - 1, -1, -1):
        strides[d] = s
        s *= max(sizes[d], 1)
    return strides


def channels_last_strides(sizes, fmt):
    """The strides of a `fmt` (channels_last or channels_last_3d) tensor of `sizes`: channels
    innermost, then the spatial dims from last to first, the batch dim outermost ((N, C, H, W)
    -> (H*W*C, 1, W*C, C)); torch's RuntimeError for the wrong rank."""
    rank, name = _CHANNELS_LAST[fmt]
    if len(sizes) != rank:
        raise RuntimeError(f"required rank {rank} tensor to use {name} format")
    strides = [0] * rank
    s = 1
    for d in (1, *range(rank - 1, 1, -1), 0):
        strides[d] = s
        s *= sizes[d]
    return strides


def format_strides(sizes, fmt):
    """The strides torch's empty(sizes, memory_format=fmt) gives (fmt not preserve_format)."""
    if fmt is None or fmt is contiguous_format:
        return contiguous_strides(sizes)
    if fmt is preserve_format:
        raise RuntimeError("unsupported memory format Preserve")
    return channels_last_strides(sizes, fmt)


def is_contiguous(sizes, strides, fmt=contiguous_format):
    """torch's is_contiguous(memory_format=fmt): the dims in `fmt`'s order have row-major
    strides, size-1 dims skipped; any tensor with no elements is contiguous in the default
    format; channels_last(_3d) holds of rank 4 (5) tensors only."""
    if fmt in _CHANNELS_LAST:
        rank = _CHANNELS_LAST[fmt][0]
        if len(sizes) != rank:
            return False
        order = (1, *range(rank - 1, 1, -1), 0)
    else:
        if any(n == 0 for n in sizes):
            return True
        order = range(len(sizes) - 1, -1, -1)
    expected = 1
    for d in order:
        if sizes[d] != 1:
            if strides[d] != expected:
                return False
            expected *= sizes[d]
    return True


def is_non_overlapping_and_dense(sizes, strides):
    """torch's is_non_overlapping_and_dense(): some order of the dims is contiguous (size-0 and
    size-1 dims skipped), or the tensor is contiguous in the default or a channels-last format."""
    if is_contiguous(sizes, strides) or is_contiguous(sizes, strides, channels_last) or \
            is_contiguous(sizes, strides, channels_last_3d):
        return True
    if len(sizes) == 1:
        return sizes[0] < 2 or strides[0] == 1
    require = 1
    for d in sorted((d for d in range(len(sizes)) if sizes[d] >= 2), key=lambda d: strides[d]):
        if strides[d] != require:
            return False
        require *= sizes[d]
    return True


def infer_dense_strides(sizes, strides):
    """torch's infer_dense_strides: dense strides keeping the order of `strides` (a stable
    insertion sort as TensorIterator's: a zero stride keeps its place, equal strides put the
    smaller size inside)."""
    n = len(sizes)
    if n == 0:
        return []
    if n == 1:
        return [1]
    perm = list(range(n - 1, -1, -1))  # innermost first

    def should_swap(d0, d1):
        s0, s1 = strides[d0], strides[d1]
        if s0 == 0 or s1 == 0:
            return 0
        if s0 != s1:
            return -1 if s0 < s1 else 1
        return 1 if sizes[d0] > sizes[d1] else 0

    for i in range(1, n):
        dim1 = i
        for j in range(1, i + 1):
            dim0 = i - j
            c = should_swap(perm[dim0], perm[dim1])
            if c > 0:
                perm[dim0], perm[dim1] = perm[dim1], perm[dim0]
                dim1 = dim0
            elif c < 0:
                break
    out = [0] * n
    s = 1
    for d in perm:
        out[d] = s
        if sizes[d] > 1:
            s *= sizes[d]
    return out


def preserved_strides(sizes, strides):
    """The strides preserve_format gives a copy or *_like tensor: the input's own when it is
    non-overlapping and dense, else infer_dense_strides of them."""
    if is_non_overlapping_and_dense(sizes, strides):
        return list(strides)
    return infer_dense_strides(sizes, strides)


def _strides_like_channels_last(sizes, strides, rank):
    """c10's is_channels_last_strides_2d_s4 / _3d_s5: whether strides of a rank-4 (5) tensor
    read as channels-last (ambiguous N111-like cases read as contiguous)."""
    if len(sizes) != rank or strides[1] == 0:
        return False
    low = 0
    for d in (1, *range(rank - 1, 1, -1), 0):
        if sizes[d] == 0 or strides[d] < low:
            return False
        if d == 0 and low == strides[1]:
            return False
        low = strides[d]
        if sizes[d] > 1:
            low *= sizes[d]
    return True


def suggest_memory_format(sizes, strides):
    """torch's Tensor.suggest_memory_format(): channels_last (channels_last_3d) for rank-4 (5)
    strides that read as channels-last, else contiguous_format."""
    if _strides_like_channels_last(sizes, strides, 4):
        return channels_last
    if _strides_like_channels_last(sizes, strides, 5):
        return channels_last_3d
    return contiguous_format


def like_strides(sizes, strides, fmt):
    """The strides of a *_like or clone result with memory format `fmt` (None is
    preserve_format) for an input of `sizes` and `strides`."""
    if fmt is None or fmt is preserve_format:
        return preserved_strides(sizes, strides)
    return format_strides(sizes, fmt)
