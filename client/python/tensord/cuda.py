"""tensord.cuda: torch.cuda's queries, answered by the server of the current session.

A device index n means the server's "cuda:n"; the current device is always cuda:0 (the one
"cuda" without an index names). Streams and events are not offered: the client queues every op
on the session's default stream.
"""
from . import _api, _dtypes


def _info():
    return _api.current_session().server_info()


def _cuda_devices():
    return [d for d in _info().devices if d.startswith("cuda")]


def is_available():
    """Whether the current session's server has a CUDA device."""
    return bool(_cuda_devices())


def device_count():
    return len(_cuda_devices())


def current_device():
    return 0


def synchronize(device=None):
    """Waits for all queued work of the current session (torch.cuda.synchronize)."""
    _api.current_session().synchronize()


def _device_index(device, optional=True):
    """torch.cuda._utils._get_device_index: None is the current device; ints are indices."""
    if device is None:
        if not optional:
            raise ValueError("Expected a torch.device with a specified index or an integer, "
                             "but got: None")
        return current_device()
    if isinstance(device, int) and not isinstance(device, bool):
        return device
    d = _dtypes.device(device) if isinstance(device, str) else device
    if not isinstance(d, _dtypes.device):
        raise ValueError(f"Expected a cuda device, but got: {device}")
    if d.type != "cuda":
        raise ValueError(f"Expected a cuda device, but got: {d}")
    return current_device() if d.index is None else d.index


class _CudaDeviceProperties:
    """torch.cuda.get_device_properties's answer (the fields the server reports)."""

    __slots__ = ("name", "total_memory", "major", "minor", "multi_processor_count")

    def __init__(self, name, total_memory, major, minor, multi_processor_count):
        self.name = name
        self.total_memory = total_memory
        self.major = major
        self.minor = minor
        self.multi_processor_count = multi_processor_count

    def __repr__(self):
        return (f"_CudaDeviceProperties(name='{self.name}', major={self.major}, "
                f"minor={self.minor}, total_memory={self.total_memory // (1024 * 1024)}MB, "
                f"multi_processor_count={self.multi_processor_count})")


def _varint(buf, i):
    value = shift = 0
    while True:
        b = buf[i]
        i += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return value, i


def _fields(buf):
    """(field number, wire type, value) of each record of a serialized message."""
    i = 0
    while i < len(buf):
        key, i = _varint(buf, i)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, i = _varint(buf, i)
        elif wire == 1:
            value, i = buf[i:i + 8], i + 8
        elif wire == 2:
            n, i = _varint(buf, i)
            value, i = buf[i:i + n], i + n
        elif wire == 5:
            value, i = buf[i:i + 4], i + 4
        else:
            return
        yield number, wire, value


def _signed(v):
    """An int64/int32 varint's value (negative ones travel as 64-bit two's complement)."""
    return v - (1 << 64) if v >= 1 << 63 else v


def _device_infos():
    """{"cuda:0": _CudaDeviceProperties, …} from GetServerInfoResponse.device_info (field 7),
    read from the wire when the generated module predates the field."""
    info = _info()
    out = {}
    entries = getattr(info, "device_info", None)
    if entries is not None:
        for e in entries:
            out[e.device] = _CudaDeviceProperties(e.name, e.total_memory, e.major, e.minor,
                                                  e.multi_processor_count)
        return out
    for number, wire, value in _fields(info.SerializeToString()):
        if number != 7 or wire != 2:
            continue
        f = {1: "", 2: "", 3: 0, 4: 0, 5: 0, 6: 0}
        for n, w, v in _fields(bytes(value)):
            if n in (1, 2) and w == 2:
                f[n] = bytes(v).decode("utf-8", "replace")
            elif n in (3, 4, 5, 6) and w == 0:
                f[n] = _signed(v)
        out[f[1]] = _CudaDeviceProperties(f[2], f[3], f[4], f[5], f[6])
    return out


def get_device_properties(device=None):
    index = _device_index(device)
    count = device_count()
    if count == 0:
        raise RuntimeError("tensord: the server of this session has no CUDA device (its "
                           f"devices: {', '.join(_info().devices)})")
    if index < 0 or index >= count:
        raise AssertionError("Invalid device id")
    props = _device_infos().get(f"cuda:{index}")
    if props is None:
        raise RuntimeError(f"tensord: the server does not report the properties of cuda:{index} "
                           "(GetServerInfo has no device_info for it)")
    return props


def get_device_name(device=None):
    return get_device_properties(device).name


def get_device_capability(device=None):
    props = get_device_properties(device)
    return props.major, props.minor


def _no_memory_stats(name):
    def f(device=None):
        raise NotImplementedError(
            f"tensord.cuda.{name}: the tensord server reports no per-device memory statistics "
            "(GetServerInfo's bytes_in_use counts every session's tensors on all devices)")
    f.__name__ = name
    return f


memory_allocated = _no_memory_stats("memory_allocated")
max_memory_allocated = _no_memory_stats("max_memory_allocated")
memory_reserved = _no_memory_stats("memory_reserved")
max_memory_reserved = _no_memory_stats("max_memory_reserved")
