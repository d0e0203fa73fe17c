"""torch.nn.utils.rnn: PackedSequence (a batch of variable-length sequences, time step by time
step) and the functions that pack, pad and unpad them.

The bookkeeping (lengths, batch_sizes, which row goes where) is computed here from Python ints;
the data moves in one server op each way (index_select to pack, index_copy to pad)."""
from collections import namedtuple
from collections.abc import Iterable

from ... import _dtypes, _factories
from ..._memory_format import contiguous_format
from ..._tensor import Tensor

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence", "pad_packed_sequence",
           "pad_sequence", "unpad_sequence", "pack_sequence", "unpack_sequence"]

PackedSequence_ = namedtuple("PackedSequence_",
                             ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])


def bind(optional, fn):
    return None if optional is None else fn(optional)


class PackedSequence(PackedSequence_):
    """The packed form of a batch of sequences: `data` holds step 0's rows of every sequence,
    then step 1's rows of those still running, and so on; `batch_sizes` (int64, on the CPU)
    counts the rows of each step; `sorted_indices` / `unsorted_indices` map between the
    caller's batch order and the packed (longest first) order, or are None."""

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is not None:
            if batch_sizes.device.type != "cpu":
                raise ValueError(
                    "batch_sizes should always be on CPU. Instances of PackedSequence should "
                    "never be created manually. They should be instantiated by functions like "
                    "pack_sequence and pack_padded_sequences in nn.utils.rnn. "
                    "https://pytorch.org/docs/stable/nn.html#torch.nn.utils.rnn.pack_sequence")
        else:
            assert isinstance(data, (list, tuple)) and len(data) == 2
            data, batch_sizes = data
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def cuda(self, *args, **kwargs):
        ex = self.data.new_empty((0,)).to(*args, **kwargs)
        if ex.is_cuda:
            return self.to(*args, **kwargs)
        return self.to(*args, device="cuda", **kwargs)

    def cpu(self, *args, **kwargs):
        ex = self.data.new_empty((0,)).to(*args, **kwargs)
        if ex.device.type == "cpu":
            return self.to(*args, **kwargs)
        return self.to(*args, device="cpu", **kwargs)

    def double(self):
        return self.to(dtype=_dtypes.float64)

    def float(self):
        return self.to(dtype=_dtypes.float32)

    def half(self):
        return self.to(dtype=_dtypes.float16)

    def long(self):
        return self.to(dtype=_dtypes.int64)

    def int(self):
        return self.to(dtype=_dtypes.int32)

    def short(self):
        return self.to(dtype=_dtypes.int16)

    def char(self):
        return self.to(dtype=_dtypes.int8)

    def byte(self):
        return self.to(dtype=_dtypes.uint8)

    def to(self, *args, **kwargs):
        """Moves or casts `data` (batch_sizes stays on the CPU); the indices follow data's
        device. Returns self when data does not change."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        kwargs = {k: v for k, v in kwargs.items() if k not in ("device", "dtype")}
        sorted_indices = bind(self.sorted_indices, lambda t: t.to(data.device, **kwargs))
        unsorted_indices = bind(self.unsorted_indices, lambda t: t.to(data.device, **kwargs))
        return type(self)(data, self.batch_sizes, sorted_indices, unsorted_indices)

    @property
    def is_cuda(self):
        return self.data.is_cuda


def invert_permutation(permutation):
    """The inverse of a permutation (a 1-d index tensor), or None for None."""
    if permutation is None:
        return None
    output = _factories.empty_like(permutation, memory_format=contiguous_format)
    return output.scatter_(0, permutation, _factories.arange(
        permutation.numel(), device=permutation.device, session=permutation._session))


def _int64_list(lengths):
    """lengths (a tensor, or a sequence of numbers) as torch's 1-d CPU int64 tensor would hold
    them: a list of Python ints."""
    if isinstance(lengths, Tensor):
        lengths = lengths.to(dtype=_dtypes.int64)
        where = lengths.device
    else:
        lengths = _factories.as_tensor(lengths, dtype=_dtypes.int64, device="cpu")
        where = "cpu"
    if lengths.dim() != 1 or lengths.device.type != "cpu":
        raise RuntimeError(f"'lengths' argument should be a 1D CPU int64 tensor, but got "
                           f"{lengths.dim()}D {where} Long tensor")
    return lengths.tolist()


def _ints(t):
    return t.tolist() if hasattr(t, "tolist") else list(t)


def _step_rows(batch_sizes, stride_t, stride_b):
    """Where each packed row lives in the padded tensor flattened over its first two dims:
    step t's rows are batch entries 0 .. batch_sizes[t] - 1."""
    return [t * stride_t + b * stride_b for t, n in enumerate(batch_sizes) for b in range(n)]


def _index(rows, like):
    return _factories.tensor(rows, dtype=_dtypes.int64, device=like.device, session=like._session)


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Packs a padded batch, (T, B, *) or with batch_first (B, T, *), whose sequences have the
    given lengths: decreasing unless enforce_sorted is False (then they are sorted here and
    the PackedSequence records the permutation)."""
    lengths = _int64_list(lengths)
    if enforce_sorted:
        sorted_indices = None
    else:
        order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
        lengths = [lengths[i] for i in order]
        sorted_indices = _index(order, input)
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    steps, batch = (input.size(1), input.size(0)) if batch_first else \
        (input.size(0), input.size(1))
    if input.numel() == 0:
        raise RuntimeError("Cannot pack empty tensors.")
    if len(lengths) != batch:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got "
                           f"{len(lengths)} (batch_size={batch})")
    if lengths[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element "
                           "in 'lengths' that is <= 0")
    if any(a < b for a, b in zip(lengths, lengths[1:])):
        raise RuntimeError("`lengths` array must be sorted in decreasing order when "
                           "`enforce_sorted` is True. You can pass `enforce_sorted=False` to "
                           "pack_padded_sequence and/or pack_sequence to sidestep this "
                           "requirement if you do not need ONNX exportability.")
    if lengths[0] > steps:
        raise RuntimeError(f"pack_padded_sequence: a length of {lengths[0]} exceeds the input's "
                           f"{steps} time steps")
    batch_sizes = [sum(1 for n in lengths if n > t) for t in range(lengths[0])]
    rows = _step_rows(batch_sizes, 1, steps) if batch_first else \
        _step_rows(batch_sizes, batch, 1)
    flat = input.reshape((steps * batch,) + tuple(input.shape[2:]))
    data = flat.index_select(0, _index(rows, input))
    batch_sizes = _factories.tensor(batch_sizes, dtype=_dtypes.int64, device="cpu",
                                    session=input._session)
    return PackedSequence(data, batch_sizes, sorted_indices, None)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """The inverse of pack_padded_sequence: (padded, lengths), the padded tensor (T, B, *) or
    (B, T, *), T = total_length or the longest sequence, in the caller's batch order; lengths is
    an int64 CPU tensor."""
    batch_sizes = _ints(sequence.batch_sizes)
    max_seq_length = len(batch_sizes)
    if total_length is not None:
        if total_length < max_seq_length:
            raise ValueError("Expected total_length to be at least the length of the longest "
                             f"sequence in input, but got total_length={total_length} and max "
                             f"sequence length being {max_seq_length}")
        max_seq_length = total_length
    data = sequence.data
    batch = batch_sizes[0]
    flat = data.new_full((max_seq_length * batch,) + tuple(data.shape[1:]), padding_value)
    flat = flat.index_copy(0, _index(_step_rows(batch_sizes, batch, 1), data), data)
    padded = flat.view((max_seq_length, batch) + tuple(data.shape[1:]))
    if batch_first:
        padded = padded.transpose(0, 1)
    lengths = [sum(1 for n in batch_sizes if n > b) for b in range(batch)]
    if sequence.unsorted_indices is not None:
        order = sequence.unsorted_indices
        padded = padded.index_select(0 if batch_first else 1, order)
        lengths = [lengths[i] for i in _ints(order)]
    return padded, _factories.tensor(lengths, dtype=_dtypes.int64, device="cpu",
                                     session=data._session)


def pad_sequence(sequences, batch_first=False, padding_value=0.0):
    """Stacks tensors of shape (L_i, *) into (max L, B, *) (or (B, max L, *) with batch_first),
    filling with padding_value; the result has the first tensor's dtype."""
    if not isinstance(sequences, Iterable):
        raise RuntimeError("pad_sequence: Expected iterable for input sequences, but got arg of "
                           f"type: {type(sequences)}")
    sequences = tuple(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    first = sequences[0]
    max_len = max(s.size(0) for s in sequences)
    trailing = tuple(first.shape[1:])
    out_dims = (len(sequences), max_len) + trailing if batch_first else \
        (max_len, len(sequences)) + trailing
    out = first.new_full(out_dims, padding_value)
    for i, seq in enumerate(sequences):
        n = seq.size(0)
        if batch_first:
            out.select(0, i).narrow(0, 0, n).copy_(seq)
        else:
            out.narrow(0, 0, n).select(1, i).copy_(seq)
    return out


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """The inverse of pad_sequence: a list of the sequences, each its first lengths[i] steps
    (fresh tensors; the padded tensor is left as it was)."""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    max_length = padded_sequences.shape[1]
    return [seq.narrow(0, 0, max(0, min(int(n), max_length))).clone(
        memory_format=contiguous_format)
        for seq, n in zip(padded_sequences, _ints(lengths))]


def pack_sequence(sequences, enforce_sorted=True):
    """Packs a list of tensors (L_i, *): pad_sequence, then pack_padded_sequence."""
    lengths = [v.size(0) for v in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    """The inverse of pack_sequence: the list of tensors, in the caller's order."""
    padded_sequences, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded_sequences, lengths, batch_first=True)
