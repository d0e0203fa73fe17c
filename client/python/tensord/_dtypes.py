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

# The names torch's C++ messages give the dtypes (c10's type names: "Expected out tensor to have
# dtype long int, but got float instead").
C10_NAMES = {"bool": "bool", "uint8": "unsigned char", "int8": "signed char",
             "int16": "short int", "int32": "int", "int64": "long int", "float16": "c10::Half",
             "bfloat16": "c10::BFloat16", "float32": "float", "float64": "double"}
_BY_PROTO = {d.proto: d for d in ALL}
_BY_NAME = {d.name: d for d in ALL}
_BY_NAME.update({"half": float16, "float": float32, "double": float64, "short": int16,
                 "int": int32, "long": int64})
_BY_NP = {np.dtype(np.bool_): bool_, np.dtype(np.uint8): uint8, np.dtype(np.int8): int8,
          np.dtype(np.int16): int16, np.dtype(np.int32): int32, np.dtype(np.int64): int64,
          np.dtype(np.float16): float16, np.dtype(np.float32): float32,
          np.dtype(np.float64): float64}


_default_float = float32


def get_default_dtype():
    """torch.get_default_dtype(): float32 unless set_default_dtype changed it."""
    return _default_float


def set_default_dtype(d):
    """torch.set_default_dtype: the dtype of Python floats, of floating factories given no dtype
    and of integer inputs computed in floating point (sqrt, true division). Process-wide, as
    torch's; every op sent afterwards carries it (OpCall.default_dtype), so the server plans it
    with the same rule."""
    global _default_float
    if not isinstance(d, dtype):
        raise TypeError("invalid dtype object: only floating-point types are supported as the "
                        "default type")
    if not d.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    try:
        from . import _planner  # noqa: PLC0415 - the extension is optional
    except ImportError:
        _planner = None
    if _planner is not None:
        _planner.set_default_dtype(d.proto)
    _default_float = d


def _dtype_by_name(name):
    return _BY_NAME[name]


def from_proto(value):
    return _BY_PROTO[value]


def from_python_type(value):
    """torch's reading of Python's own types as dtypes (dtype=float is float64, int int64, bool
    bool); anything else as it is."""
    if value is float:
        return float64
    if value is int:
        return int64
    if value is bool:
        return bool_
    return value


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
    """torch.device: a type ("cpu", "cuda") and an optional index.

    As torch's: device("cuda") has no index and is not equal to device("cuda:0") (a tensor's
    .device always has one); device(1) is cuda:1. Unlike torch, a device also compares equal to
    the string that names it.
    """

    __slots__ = ("type", "index")

    def __init__(self, type_or_str, index=None):
        if isinstance(type_or_str, device):
            if index is not None:
                raise TypeError("device(): a device and an index cannot both be given")
            self.type, self.index = type_or_str.type, type_or_str.index
            return
        if isinstance(type_or_str, int) and not isinstance(type_or_str, bool) and index is None:
            if type_or_str < 0:
                raise RuntimeError("Device index must not be negative")
            self.type, self.index = "cuda", int(type_or_str)
            return
        if not isinstance(type_or_str, str):
            raise TypeError("Device() received an invalid combination of arguments - got "
                            f"({type(type_or_str).__name__}), but expected one of:\n"
                            " * (torch.device device)\n * (str type, int index)")
        if index is not None and (isinstance(index, bool) or not isinstance(index, int)):
            raise TypeError(f"device(): argument 'index' must be int, not {type(index).__name__}")
        text = type_or_str
        if ":" in text:
            text, _, idx = text.partition(":")
            if index is not None:
                raise RuntimeError("type (string) must not include an index because index was "
                                   f"passed explicitly: {type_or_str}")
            if not idx.isdigit() or (len(idx) > 1 and idx[0] == "0"):
                raise RuntimeError(f"Invalid device string: '{type_or_str}'")
            index = int(idx)
        if text not in ("cpu", "cuda"):
            raise RuntimeError(
                "Expected one of cpu, cuda device type at start of device string: " + type_or_str)
        if index is not None and index < 0:
            raise RuntimeError("Device index must not be negative")
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
            try:
                other = device(other)
            except RuntimeError:
                return False
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __ne__(self, other):
        return not self == other

    def __hash__(self):
        return hash((self.type, self.index))

    def __reduce__(self):
        return (device, (self.type, self.index))


def as_device(value, what="device"):
    """A device from what torch accepts as one: a device, a string, or an int n (cuda:n)."""
    if isinstance(value, device):
        return value
    if isinstance(value, (str, int)) and not isinstance(value, bool):
        return device(value)
    raise TypeError(f"{what}: expected a torch.device, a string or an int, not "
                    f"{type(value).__name__}")


def info_device(text):
    """The device a TensorInfo names (a server that leaves it empty: cpu)."""
    return _DEVICES.get(text) or _DEVICES.setdefault(text, device(text or "cpu"))


_DEVICES = {}


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
