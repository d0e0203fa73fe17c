"""tensord.cuda: torch.cuda's queries, streams and events, answered by the server of the
current session.

A device index n means the server's "cuda:n"; the current device is always cuda:0 (the one
"cuda" without an index names).

Streams and events are the server's (CreateStream, RecordEvent, WaitEvent, QueryEvent,
Synchronize), which have CUDA's semantics on every device, a CPU server's included. A stream
belongs to a session and takes the work of any of its devices: its `device` is a label (the
session's device unless one is given). The current stream is per thread and per session, as
torch's is per thread (and per device): ops issued by a thread go to its current stream of the
session they run in; stream 0, the session's default stream, unless `set_stream` or a
`with tensord.cuda.stream(s):` block says otherwise.

tensord.cuda.amp holds torch.cuda.amp: cuda autocast and GradScaler.
"""
from .. import _api, _dtypes
from .._errors import OutOfMemoryError  # noqa: F401 - torch.cuda.OutOfMemoryError: any limit's


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


def is_bf16_supported():
    """Whether the current CUDA device computes in bfloat16 (compute capability 8.0 and up, as
    torch's answer for a CUDA 11 build)."""
    return get_device_properties(current_device()).major >= 8


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


# ---- streams and events ------------------------------------------------------------------------

def _stream_device(session, device):
    """The device label of a stream: None (or a negative index) is the session's device; an int
    n is cuda:n; "cuda" is cuda:0. The server must have it."""
    if device is None or (isinstance(device, int) and not isinstance(device, bool) and device < 0):
        d = session.device
    else:
        d = _dtypes.as_device(device, "Stream")
    if d.type == "cuda" and d.index is None:
        d = _dtypes.device("cuda", current_device())
    if not session.has_device(d):
        raise RuntimeError(f"tensord: the server of this session has no device {d} (its devices: "
                           f"{', '.join(session.server_info().devices)})")
    return d


class Stream:
    """torch.cuda.Stream: a server stream of the current session (or of `session=`), a queue
    of work that runs in order and concurrently with the session's other streams.

    `priority` is accepted and ignored: the server's streams have one priority. With
    `stream_id=` the object names an existing stream of the session (0: the default stream)
    instead of creating one. At the server's limit of streams per session (--max-streams),
    new Stream objects reuse this session's streams in turn, as torch's stream pool does.
    """

    def __init__(self, device=None, priority=0, *, session=None, stream_id=None):
        s = session or _api.current_session()
        self._session = s
        self._device = _stream_device(s, device)
        self._stream_id = s.create_stream() if stream_id is None else int(stream_id)

    @property
    def device(self):
        return self._device

    @property
    def stream_id(self):
        """The server's id of the stream (0: the session's default stream)."""
        return self._stream_id

    @property
    def cuda_stream(self):
        """torch's cudaStream_t value: here the server's stream id (0 for the default stream,
        as torch's default stream is the null stream)."""
        return self._stream_id

    @property
    def priority(self):
        return 0

    @staticmethod
    def priority_range():
        """(least, greatest) priority: the server's streams have only priority 0."""
        return 0, 0

    @property
    def session(self):
        return self._session

    def wait_event(self, event):
        """Makes all future work submitted to the stream wait for the event's latest record
        (returns at once; a never-recorded event is no wait, as cudaStreamWaitEvent)."""
        event.wait(self)

    def wait_stream(self, stream):
        """All future work submitted to this stream waits until the work submitted to `stream`
        at the time of the call is complete (returns at once)."""
        if not isinstance(stream, Stream):
            raise TypeError(f"wait_stream(): expected a Stream, got {type(stream).__name__}")
        self._check_same_session(stream, "wait_stream")
        # A private event of the other stream, recorded again at each use (what torch does with
        # a new Event, without a server event per call).
        event = stream._session.marker_event(stream._stream_id)
        self._session.record_event(event, stream._stream_id)
        self._session.wait_event(event, self._stream_id)

    def record_event(self, event=None):
        """Records an event (a new one if not given) on this stream; returns it."""
        if event is None:
            event = Event()
        event.record(self)
        return event

    def query(self):
        """Whether all the work submitted to this stream has completed."""
        return self._session.query_stream(self._stream_id)

    def synchronize(self):
        """Waits for all the work submitted to this stream; raises the first asynchronous error
        of this stream since its previous synchronize (as tensord.synchronize does for all)."""
        self._session.synchronize(stream=self._stream_id)

    def _check_same_session(self, other, what):
        if other._session is not self._session:
            raise RuntimeError(f"{what}(): the streams belong to different tensord sessions")

    @property
    def _as_parameter_(self):
        import ctypes
        return ctypes.c_void_p(self._stream_id)

    def __eq__(self, o):
        if isinstance(o, Stream):
            return (self._session is o._session and self._stream_id == o._stream_id
                    and self._device == o._device)
        return False

    def __ne__(self, o):
        return not self == o

    def __hash__(self):
        return hash((self._session.id, self._stream_id, self._device))

    def __repr__(self):
        return f"<torch.cuda.Stream device={self._device} cuda_stream={self._stream_id:#x}>"


class Event:
    """torch.cuda.Event: a marker in a stream that streams and the host can wait for.

    As torch's, the server event is made at the first record, in the recording stream's
    session; it counts as complete (and waiting on it is a no-op) until then. `blocking` and
    `interprocess` are accepted with no effect (the host waits in the server either way;
    ipc_handle is not offered). The server keeps no timestamps: elapsed_time raises.
    """

    def __init__(self, enable_timing=False, blocking=False, interprocess=False):
        self.enable_timing = bool(enable_timing)
        self.blocking = bool(blocking)
        self.interprocess = bool(interprocess)
        self._session = None
        self._event_id = 0

    @classmethod
    def from_ipc_handle(cls, device, handle):
        raise RuntimeError("tensord: events cannot be shared between processes (the server "
                           "has no IPC handles; a session's events are its own)")

    def ipc_handle(self):
        raise RuntimeError("tensord: events cannot be shared between processes (the server "
                           "has no IPC handles; a session's events are its own)")

    @property
    def cuda_event(self):
        """The event's id in its session (0: not recorded yet)."""
        return self._event_id

    @property
    def _as_parameter_(self):
        import ctypes
        return ctypes.c_void_p(self._event_id)

    def _stream(self, stream):
        """`stream`, or the current stream of the event's session (of the current session
        before the first record)."""
        if stream is None:
            return current_stream(session=self._session)
        if not isinstance(stream, Stream):
            raise TypeError(f"expected a tensord.cuda.Stream, got {type(stream).__name__}")
        return stream

    def record(self, stream=None):
        """Records the event on `stream` (default: the current stream), after all the work
        submitted to it so far. Recording again replaces the previous record."""
        stream = self._stream(stream)
        if self._session is None:
            self._session = stream._session
            self._event_id = stream._session.new_event_id()
        elif stream._session is not self._session:
            raise RuntimeError("Event.record(): the event belongs to another tensord session "
                               "than the stream (events are recorded in one session)")
        self._session.record_event(self._event_id, stream._stream_id)

    def wait(self, stream=None):
        """Makes all future work submitted to `stream` (default: the current stream) wait for
        this event's latest record. Returns at once; a never-recorded event is no wait."""
        stream = self._stream(stream)
        if self._session is None:
            return
        if stream._session is not self._session:
            raise RuntimeError("Event.wait(): the event belongs to another tensord session "
                               "than the stream")
        self._session.wait_event(self._event_id, stream._stream_id)

    def query(self):
        """Whether all the work captured by the event (its latest record) has completed."""
        if self._session is None:
            return True
        return self._session.query_event(self._event_id)

    def synchronize(self):
        """Waits until the work captured by the event has completed. Asynchronous errors are
        not raised here: the synchronize of their stream (or of the session) raises them."""
        if self._session is None:
            return
        self._session.wait_event_done(self._event_id)

    def elapsed_time(self, end_event):
        raise RuntimeError("tensord: event timing is not supported by this server yet (its "
                           "events carry no timestamps), so Event.elapsed_time cannot be "
                           "computed; time on the host around Event.synchronize() instead")

    def __repr__(self):
        if self._event_id:
            return f"<torch.cuda.Event {self._event_id:#x}>"
        return "<torch.cuda.Event uninitialized>"


def current_stream(device=None, session=None):
    """The stream this thread's ops go to in the current session (or `session`): the one set
    by set_stream or a `with stream(s):` block, else the default stream. Streams are not
    per device here: `device` only labels the default stream returned."""
    s = session or _api.current_session()
    current = getattr(s._local, "stream", None)
    if current is not None:
        if device is not None:
            _stream_device(s, device)  # still checked
        return current
    return default_stream(device, session=s)


def default_stream(device=None, session=None):
    """The session's default stream (stream 0, where ops go outside any stream block)."""
    s = session or _api.current_session()
    return Stream(device, session=s, stream_id=0)


def set_stream(stream):
    """Makes `stream` the current stream of this thread in its session (None: no-op, as
    torch's). Prefer the `stream` context manager."""
    if stream is None:
        return
    if not isinstance(stream, Stream):
        raise TypeError(f"set_stream(): expected a tensord.cuda.Stream, got "
                        f"{type(stream).__name__}")
    stream._session._local.stream = stream


class StreamContext:
    """Context manager that makes `stream` this thread's current stream in its session, and
    restores the previous one on exit. A no-op for None. As torch's, __enter__ returns None."""

    def __init__(self, stream):
        if stream is not None and not isinstance(stream, Stream):
            raise TypeError(f"stream(): expected a tensord.cuda.Stream or None, got "
                            f"{type(stream).__name__}")
        self.stream = stream
        self._prev = None

    def __enter__(self):
        if self.stream is None:
            return
        self._prev = getattr(self.stream._session._local, "stream", None)
        set_stream(self.stream)

    def __exit__(self, *exc):
        if self.stream is None:
            return
        self.stream._session._local.stream = self._prev


def stream(stream):
    """`with tensord.cuda.stream(s):` sends the ops issued inside to stream `s` (None: no
    change), restoring the previous current stream at the end."""
    return StreamContext(stream)


from . import amp  # noqa: E402 - torch.cuda.amp (autocast, GradScaler)
