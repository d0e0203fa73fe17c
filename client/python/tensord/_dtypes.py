"""Dtypes, devices and sizes with torch's names and printed forms."""
import numpy as np


class dtype:
    """A tensor element type; `tensord.float32` and friends are the only instances."""

    __slots__ = ("name", "itemsize", "is_floating_point", "is_signed", "proto", "_np", "_legacy")

    def __init__(self, name, itemsize, is_floating_point, is_signed, proto, np_dtype, legacy):
        self.name = name
        self.itemsize = itemsize
        self.is_floating_point = is_floating_point
        self.is_signed = is_signed
        self.proto = proto
        self._np = np_dtype
        self._legacy = legacy

    @property
    def is_complex(self):
        return False

    def __repr__(self):
        return "torch." + self.name

    __str__ = __repr__

    def __reduce__(self):
        return (_dtype_by_name, (self.name,))


# proto enum values are tensord.v1.DType's.
bool_ = dtype("bool", 1, False, False, 1, np.dtype(np.bool_), "Bool")
uint8 = dtype("uint8", 1, False, False, 2, np.dtype(np.uint8), "Byte")
int8 = dtype("int8", 1, False, True, 3, np.dtype(np.int8), "Char")
int16 = dtype("int16", 2, False, True, 4, np.dtype(np.int16), "Short")
int32 = dtype("int32", 4, False, True, 5, np.dtype(np.int32), "Int")
int64 = dtype("int64", 8, False, True, 6, np.dtype(np.int64), "Long")
float16 = dtype("float16", 2, True, True, 7, np.dtype(np.float16), "Half")
# numpy has no bfloat16: its bits travel as uint16 and are widened to float32 for numpy.
bfloat16 = dtype("bfloat16", 2, True, True, 8, np.dtype(np.uint16), "BFloat16")
float32 = dtype("float32", 4, True, True, 9, np.dtype(np.float32), "Float")
float64 = dtype("float64", 8, True, True, 10, np.dtype(np.float64), "Double")

ALL = (bool_, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64)
_BY_PROTO = {d.proto: d for d in ALL}
_BY_NAME = {d.name: d for d in ALL}
_BY_NAME.update({"half": float16, "float": float32, "double": float64, "short": int16,
                 "int": int32, "long": int64})
_BY_NP = {np.dtype(np.bool_): bool_, np.dtype(np.uint8): uint8, np.dtype(np.int8): int8,
          np.dtype(np.int16): int16, np.dtype(np.int32): int32, np.dtype(np.int64): int64,
          np.dtype(np.float16): float16, np.dtype(np.float32): float32,
          np.dtype(np.float64): float64}


def _dtype_by_name(name):
    return _BY_NAME[name]


def from_proto(value):
    return _BY_PROTO[value]


def from_numpy_dtype(np_dtype):
    try:
        return _BY_NP[np.dtype(np_dtype)]
    except KeyError:
        raise TypeError(
            f"can't convert np.ndarray of type numpy.{np.dtype(np_dtype).name}. The only supported "
            "types are: float64, float32, float16, int64, int32, int16, int8, uint8, and bool."
        ) from None


def _category(d):
    return 0 if d is bool_ else (2 if d.is_floating_point else 1)


def promote_types(a, b):
    """torch.promote_types for the dtypes tensord has."""
    if a is b:
        return a
    ca, cb = _category(a), _category(b)
    if ca != cb:
        return a if ca > cb else b
    if ca == 2:
        if {a, b} == {float16, bfloat16}:
            return float32
        return a if a.itemsize > b.itemsize else b
    # Both integral.
    if uint8 in (a, b):
        other = b if a is uint8 else a
        return int16 if other is int8 else other
    return a if a.itemsize > b.itemsize else b


class device:
    """torch.device: a type ("cpu", "cuda") and an optional index."""

    __slots__ = ("type", "index")

    def __init__(self, type_or_str, index=None):
        if isinstance(type_or_str, device):
            self.type, self.index = type_or_str.type, type_or_str.index
            return
        if not isinstance(type_or_str, str):
            raise TypeError(f"device(): argument 'type' must be str, not {type(type_or_str).__name__}")
        text = type_or_str
        if ":" in text:
            text, _, idx = text.partition(":")
            if index is not None or not idx.isdigit():
                raise RuntimeError(f"Invalid device string: '{type_or_str}'")
            index = int(idx)
        if text not in ("cpu", "cuda"):
            raise RuntimeError(
                "Expected one of cpu, cuda device type at start of device string: " + type_or_str)
        self.type = text
        self.index = index

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __repr__(self):
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __eq__(self, other):
        if isinstance(other, str):
            other = device(other)
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self):
        return hash((self.type, self.index))


class Size(tuple):
    """torch.Size: a tuple of ints."""

    def __new__(cls, sizes=()):
        return super().__new__(cls, (int(s) for s in sizes))

    def __repr__(self):
        return "torch.Size([" + ", ".join(str(s) for s in self) + "])"

    __str__ = __repr__

    def numel(self):
        n = 1
        for s in self:
            n *= s
        return n

    def __getitem__(self, key):
        result = super().__getitem__(key)
        return Size(result) if isinstance(key, slice) else result

    def __add__(self, other):
        return Size(tuple(self) + tuple(other))
