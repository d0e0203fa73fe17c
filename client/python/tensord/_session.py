"""A session on a tensord server: the gRPC calls, op pipelining and id bookkeeping."""
import atexit
import concurrent.futures
import functools
import os
import threading
import time
import warnings
import weakref

import grpc

from . import _dtypes
from ._errors import error_from_rpc, error_from_proto, error_from_status

try:
    from .v1 import tensord_pb2 as pb
except ImportError as e:  # pragma: no cover - a build step makes them
    raise ImportError(
        "tensord's generated protobuf module is missing: run `make build` (it writes "
        "client/python/tensord/v1/tensord_pb2.py)") from e

_SERVICE = "/tensord.v1.Tensord/"
# This client's version (tensord.__version__), sent when a session opens: the server refuses
# a version it cannot serve.
_CLIENT_VERSION = "0.1.0"
# Ops buffered before a flush even when nothing needs a result.
_MAX_PENDING = 512
# A buffer whose first op waited this long goes ahead at the next op (without waiting for its
# reply), so that the server computes while the program goes on building ops (a training
# step's forward pass runs while its backward is recorded), not only once a result is needed.
_AHEAD_SECONDS = 0.002
_CHUNK = 1 << 20
# Keepalive pings on the channels the client makes, so a connection that dies under a long
# call (a Synchronize waiting on minutes of work) fails it instead of leaving it hanging. The
# server keeps gRPC's default ping policy: no pings while no call is open, and pings more often
# than every 5 minutes with no data between them are abuse (GOAWAY "too_many_pings", which
# fails the calls in flight). gRPC's default of at most 2 pings without data
# (grpc.http2.max_pings_without_data) keeps 30 s pings under that limit: leave it as it is.
_KEEPALIVE = [("grpc.keepalive_time_ms", 30_000), ("grpc.keepalive_timeout_ms", 10_000),
              ("grpc.keepalive_permit_without_calls", 0)]
# How long a session's calls keep trying to reach its server after the connection dropped (a
# network blip, a proxy restart): the session lives on the server for its lease meanwhile.
_RECONNECT_SECONDS = float(os.environ.get("TENSORD_RECONNECT_SECONDS", "30"))


def _with_reconnect(call, request, **kwargs):
    """call(request, **kwargs); when the connection is lost (UNAVAILABLE), the same request
    again, each time waiting for the connection to come back (gRPC redials with backoff), for
    up to _RECONNECT_SECONDS. Safe for every call it is used for: reads, writes of the same
    bytes, and numbered batches, which the server answers from what it already did instead of
    running them twice (RunOpsRequest.batch_seq)."""
    try:
        return call(request, **kwargs)
    except grpc.RpcError as e:
        if e.code() != grpc.StatusCode.UNAVAILABLE or _RECONNECT_SECONDS <= 0:
            raise
        lost = e
    deadline = time.monotonic() + _RECONNECT_SECONDS
    timeout = kwargs.pop("timeout", None)
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise lost
        try:
            return call(request, wait_for_ready=True,
                        timeout=min(left, timeout) if timeout else left, **kwargs)
        except grpc.RpcError as e:
            if e.code() not in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
                raise
            lost = e if e.code() == grpc.StatusCode.UNAVAILABLE else lost
            time.sleep(0.05)


# Calls that never wait for a session's work get a deadline (a server that stopped answering
# fails them instead of hanging); calls that wait for work (RunOps behind a data-dependent op,
# Synchronize, WaitEvent, reads, transfers) have none but the caller's own.
_SHORT_CALLS = frozenset({"GetVersion", "GetServerInfo", "ListOps", "OpenSession",
                          "RenewLease", "CloseSession", "Cancel"})
_SHORT_CALL_SECONDS = float(os.environ.get("TENSORD_SHORT_CALL_SECONDS", "60"))


def _cancels_on_interrupt(method):
    """A Session method that waits for the session's work: Ctrl-C (KeyboardInterrupt) while it
    waits also drops the session's queued work on the server (Session.cancel), as Ctrl-C stops
    a local torch program's work, then goes on up to the caller. Without it the server would go
    on computing what nobody waits for any more."""

    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        try:
            return method(self, *args, **kwargs)
        except KeyboardInterrupt as interrupt:
            if not getattr(interrupt, "_tensord_cancelled", False):  # once, in the innermost
                interrupt._tensord_cancelled = True
                self._cancel_after_interrupt()
            raise

    return wrapper


# How often to renew a lease when the server does not say how long it lasts.
_DEFAULT_RENEW_SECONDS = 60.0


def _ident(x):
    return x


def _varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _data_payload(message):
    """The bytes of a message that is exactly one `bytes data = 2` record, or None."""
    mv = memoryview(message)
    if len(mv) < 2 or mv[0] != 0x12:
        return None
    length = shift = 0
    i = 1
    while i < len(mv):
        b = mv[i]
        i += 1
        length |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            break
    if length != len(mv) - i:
        return None
    return mv[i:]


def _renew_interval(ttl_seconds):
    """A third of the lease: two renewals in a row may fail before it runs out."""
    return ttl_seconds / 3 if ttl_seconds > 0 else _DEFAULT_RENEW_SECONDS


class _LeaseRenewer:
    """Renews a session's lease from a daemon thread while the session is open, so a program
    that pauses longer than the server's session TTL keeps its tensors.

    It holds no reference to its Session (a dropped session is still collected, and its
    finalizer stops this) and never keeps the interpreter alive. Failures are quiet: the next
    tick tries again; NOT_FOUND (the session is gone) ends it.
    """

    def __init__(self, renew, session_id, route, metadata, ttl_seconds):
        self._renew = renew
        self._request = pb.RenewLeaseRequest(session_id=session_id)
        self._metadata = metadata
        self._interval = _renew_interval(ttl_seconds)
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self._call = None  # the renewal in flight: stop() cancels it
        # The id's public part only: the secret part is the session's credential.
        self._thread = threading.Thread(target=self._run, daemon=True,
                                        name="tensord-lease-" + route)
        self._thread.start()

    def _run(self):
        while not self._stopping.wait(self._interval):
            with self._lock:
                if self._stopping.is_set():
                    return
                self._call = call = self._renew.future(self._request, metadata=self._metadata,
                                                       timeout=self._interval)
            try:
                self._interval = _renew_interval(call.result().ttl_seconds)
            except grpc.FutureCancelledError:
                return
            except grpc.RpcError as e:
                if e.code() == grpc.StatusCode.NOT_FOUND:  # closed or expired: nothing to keep
                    return

    def stop(self):
        """Returns once the thread has ended: no renewal is sent after it."""
        with self._lock:
            self._stopping.set()
            if self._call is not None:
                self._call.cancel()
        # The finalizer may run on this very thread (a garbage collection there).
        if self._thread is not threading.current_thread():
            self._thread.join()


class _Pending:
    """One buffered op: its OpCall's bytes, its input ids, its output tensors, and its error once
    the server refused it."""

    __slots__ = ("call", "inputs", "tensors", "error")

    def __init__(self, call, inputs, tensors):
        self.call = call
        self.inputs = inputs
        self.tensors = tensors
        self.error = None


def _encode_request(session_id, calls, omit_metadata, release_after):
    """A RunOpsRequest's bytes from its OpCalls' bytes (without the planning extension)."""
    sid = session_id.encode()
    parts = [b"\x0a", _varint(len(sid)), sid]
    for call in calls:
        parts += (b"\x12", _varint(len(call)), call)
    if omit_metadata:
        parts.append(b"\x18\x01")
    if release_after:
        packed = b"".join(_varint(i) for i in release_after)
        parts += (b"\x22", _varint(len(packed)), packed)
    return b"".join(parts)


# ---- planning ops locally -------------------------------------------------------------------

_planner_warned = False


def _load_planner(fingerprint, device):
    """A SessionPlanner (tensord._planner) when it plans with the server's rules, else None,
    said once per process: the client then lets the server plan every op (one round trip each,
    errors still raised at their line)."""
    global _planner_warned
    reason = None
    if os.environ.get("TENSORD_LOCAL_PLANNING", "1") == "0":
        return None
    try:
        from . import _planner
    except ImportError as e:
        reason = f"the planning extension cannot be loaded ({e})"
    else:
        if fingerprint and _planner.fingerprint() == fingerprint:
            return _planner.SessionPlanner(device)
        reason = ("the server's op registry differs from this client's "
                  f"({fingerprint or 'not given'} vs {_planner.fingerprint()})")
    if not _planner_warned:
        _planner_warned = True
        warnings.warn(f"tensord: {reason}: ops are planned on the server, one round trip each",
                      RuntimeWarning, stacklevel=3)
    return None


def _pem(value, variable):
    """PEM bytes from bytes, a path, or (when `value` is None) the file $`variable` names."""
    if value is None:
        value = os.environ.get(variable) or None
    if value is None or isinstance(value, (bytes, bytearray)):
        return None if value is None else bytes(value)
    with open(value, "rb") as f:
        return f.read()


def _channel_credentials(tls, root_certificates, certificate_chain, private_key, server_name):
    """grpc.ChannelCredentials for connect()'s TLS settings, or None for a plaintext channel."""
    given = (root_certificates, certificate_chain, private_key)
    if tls is False:
        if any(v is not None for v in given) or server_name:
            raise ValueError("tensord: tls=False with TLS certificates or server_name")
        return None
    pems = [_pem(v, var) for v, var in
            zip(given, ("TENSORD_TLS_CA", "TENSORD_TLS_CERT", "TENSORD_TLS_KEY"))]
    if not tls and all(p is None for p in pems):
        if server_name:
            raise ValueError("tensord: server_name applies to TLS only: give tls=True or "
                             "root_certificates")
        return None
    if (pems[1] is None) != (pems[2] is None):
        raise ValueError("tensord: a client certificate needs both certificate_chain and "
                         "private_key")
    return grpc.ssl_channel_credentials(root_certificates=pems[0], private_key=pems[2],
                                        certificate_chain=pems[1])


class Session:
    """A session on a tensord server. `tensord.connect(address)` opens one.

    Ops are pipelined: each returns at once with client-chosen ids, and buffered ops go in one
    RunOps batch when a result is needed (metadata, data, synchronize) or the buffer is full.
    An op's error is raised by the flush that sends it. Usable as a context manager: inside
    `with session:` module-level functions use it, and it closes on exit.

    While open, a daemon thread renews the session's lease every third of the server's session
    TTL, so the session lives as long as the program does, however long it pauses; it ends
    when the session is closed or collected, or the interpreter exits.
    """

    def __init__(self, address="127.0.0.1:50051", device=None, channel=None, token=None,
                 pipeline=None, *, tls=None, root_certificates=None, certificate_chain=None,
                 private_key=None, server_name=None):
        self.address = address
        # pipeline=False: every op is sent at once, so its error is raised by the call that
        # made it (as torch does), at one round trip per op. Default: $TENSORD_PIPELINE != "0".
        self.pipeline = os.environ.get("TENSORD_PIPELINE", "1") != "0" if pipeline is None else pipeline
        options = [("grpc.max_receive_message_length", -1),
                   ("grpc.max_send_message_length", -1)] + _KEEPALIVE
        if channel is None:
            credentials = _channel_credentials(tls, root_certificates, certificate_chain,
                                               private_key, server_name)
            if credentials is None:
                channel = grpc.insecure_channel(address, options=options)
            else:
                if server_name:
                    options.append(("grpc.ssl_target_name_override", server_name))
                channel = grpc.secure_channel(address, credentials, options=options)
        elif tls or root_certificates or certificate_chain or private_key or server_name:
            raise ValueError("tensord: TLS settings apply to the channel the session makes: "
                             "give them or a channel, not both")
        self._channel = channel
        self._metadata = (("authorization", "Bearer " + token),) if token else None
        self._lock = threading.RLock()
        self._ahead = None  # (ops, future, planned) of the batch sent ahead, reply not yet taken
        # Sends the batches that go ahead, one at a time and in order, with blocking calls: a
        # gRPC future would start a polling thread for every batch (no call is in flight
        # between two batches), which costs more than the batch's ops.
        self._sender = concurrent.futures.ThreadPoolExecutor(1, "tensord-send")
        self._pending = []
        self._pending_since = 0.0  # when the buffer's first op came (time.perf_counter())
        self._releases = []
        self._next_id = 1
        self._batch_seq = 0  # the last batch's number (RunOpsRequest.batch_seq)
        self._closed = False
        self._ops = None
        self._info = None
        self._unary = {}
        # Streams and events (tensord.cuda). The current stream is per thread: `.stream` is
        # this thread's tensord.cuda.Stream, unset or None for the default stream 0.
        self._local = threading.local()
        self._next_event = 1
        self._user_streams = []    # streams made for tensord.cuda.Stream, in creation order
        self._reuse_next = 0       # round-robin reuse once the server's stream limit is hit
        self._marker_events = {}   # stream id -> private event (Stream.query, wait_stream)
        self._idle_waiters = []    # private streams Event.synchronize waits on, not in use
        # Bulk data: requests pre-serialized, replies raw, so the bytes are sliced, not parsed.
        self._upload = self._channel.stream_unary(
            _SERVICE + "Upload", request_serializer=_ident,
            response_deserializer=pb.UploadResponse.FromString)
        # Batches of ops go as bytes the client encodes itself (_tensor._encode).
        self._run_ops = self._channel.unary_unary(
            _SERVICE + "RunOps", request_serializer=_ident,
            response_deserializer=pb.RunOpsResponse.FromString)
        self._download = self._channel.unary_stream(
            _SERVICE + "Download", request_serializer=lambda m: m.SerializeToString(),
            response_deserializer=_ident)
        opened = self._call("OpenSession", pb.OpenSessionRequest(
            device=device or "", client_name="tensord-python", client_version=_CLIENT_VERSION),
            pb.OpenSessionResponse)
        self.id = opened.session_id
        # The id's public part: every later call carries it in the `tensord-route` header, so
        # that a router in front of many servers sends it to the one holding the session.
        self.route = opened.route
        if self.route:
            self._metadata = (self._metadata or ()) + (("tensord-route", self.route),)
        self.device = _dtypes.device(opened.device)
        self._device_name = opened.device
        # Plans, names and encodes the ops (None: the server plans them, one round trip each).
        self.planner = _load_planner(opened.op_registry_fingerprint, opened.device)
        self._deferred_error = None  # the first error found by the server since synchronize()
        lease = _LeaseRenewer(self._stub("RenewLease", pb.RenewLeaseResponse), self.id,
                              self.route, self._metadata, opened.ttl_seconds)
        self._finalizer = weakref.finalize(self, Session._close_remote, self._channel,
                                           self.id, self._metadata, lease, self._sender)

    # ---- gRPC plumbing ----

    def _stub(self, method, response_type):
        stub = self._unary.get(method)
        if stub is None:
            stub = self._channel.unary_unary(_SERVICE + method,
                                             request_serializer=lambda m: m.SerializeToString(),
                                             response_deserializer=response_type.FromString)
            self._unary[method] = stub
        return stub

    def _call(self, method, request, response_type):
        stub = self._stub(method, response_type)
        timeout = _SHORT_CALL_SECONDS if method in _SHORT_CALLS else None
        try:
            if not hasattr(self, "id"):  # no session yet (OpenSession): nothing to reattach to,
                return stub(request, metadata=self._metadata, timeout=timeout)  # fails at once
            return _with_reconnect(stub, request, metadata=self._metadata, timeout=timeout)
        except grpc.RpcError as e:
            raise error_from_rpc(e, method, getattr(self, "route", None)) from None

    @staticmethod
    def _close_remote(channel, session_id, metadata, lease, sender):
        lease.stop()  # first: no renewal may reach the server after the close
        sender.shutdown(wait=False)
        try:
            channel.unary_unary(_SERVICE + "CloseSession",
                                request_serializer=lambda m: m.SerializeToString(),
                                response_deserializer=pb.CloseSessionResponse.FromString)(
                pb.CloseSessionRequest(session_id=session_id), metadata=metadata, timeout=5)
        except Exception:  # the server may be gone already
            pass

    def close(self):
        """Closes the session on the server (freeing all its tensors)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            if self._ahead is not None:
                try:
                    self._ahead[1].result()
                except Exception:  # closing anyway
                    pass
                self._ahead = None
            self._pending.clear()
            self._releases.clear()
        self._finalizer()

    @property
    def closed(self):
        return self._closed

    def __enter__(self):
        _push_session(self)
        return self

    def __exit__(self, *exc):
        _pop_session(self)
        self.close()

    def __repr__(self):
        return f"tensord.Session(address={self.address!r}, id={self.id!r}, device='{self.device}')"

    # ---- discovery ----

    def server_info(self):
        if self._info is None:
            self._info = self._call("GetServerInfo", pb.GetServerInfoRequest(),
                                    pb.GetServerInfoResponse)
        return self._info

    def has_device(self, device):
        """Whether the server lists `device` (a tensord.device; "cuda" is cuda:0)."""
        if device.type == "cpu":
            return True
        name = f"{device.type}:{0 if device.index is None else device.index}"
        return name in self.server_info().devices

    def list_ops(self):
        """{name: OpSpec} of every op the server has."""
        if self._ops is None:
            response = self._call("ListOps", pb.ListOpsRequest(), pb.ListOpsResponse)
            self._ops = {op.name: op for op in response.ops}
        return self._ops

    def version(self):
        return self._call("GetVersion", pb.GetVersionRequest(), pb.GetVersionResponse)

    # ---- ops ----

    def _check_open(self):
        if self._closed:
            raise RuntimeError("tensord: the session is closed")

    def new_ids(self, n):
        """`n` new tensor ids (the first). The planner names the outputs of the ops it queues."""
        if self.planner is not None:
            return self.planner.new_ids(n)
        with self._lock:
            first = self._next_id
            self._next_id += n
            return first

    def plan(self, name, inputs, attrs):
        """Plans op `name` here, with the engine's own planner: the outputs' metadata
        (tensord._planner.Meta), or None when the server must plan it (no planner, or an op
        whose outputs depend on the data). Raises the op's error, as torch raises it, at the
        line that made it."""
        if self.planner is None:
            return None
        planned = self.planner.plan(name, [t._meta() for t in inputs], attrs)
        if type(planned) is tuple:
            raise error_from_status(*planned)
        return planned

    def submit(self, call, inputs, tensors, planned=True):
        """Queues an OpCall (its bytes: _tensor._encode) that reads ids `inputs` and whose
        outputs are `tensors` (already given their ids). An op planned here (`planned`) is
        pipelined: the server runs it later, and an error only the server can find (a limit, a
        kernel's) poisons its outputs and what depends on them, raised where their data is
        needed or by synchronize(). An op the server must plan is sent at once and raises its
        error here."""
        with self._lock:
            self._check_open()
            pending = _Pending(call, inputs, tensors)
            if not self._pending:
                self._pending_since = time.perf_counter()
            self._pending.append(pending)
            if not planned or not self.pipeline:
                self.flush()
                if pending.error is not None:
                    self.raised(pending.error)
                    raise pending.error
            elif len(self._pending) >= _MAX_PENDING or (
                    time.perf_counter() - self._pending_since >= _AHEAD_SECONDS):
                self._send_ahead()

    def release(self, tensor_id):
        # Called from Tensor finalizers: no lock-taking call that could deadlock, just a list.
        if not self._closed:
            self._releases.append(tensor_id)

    def _request(self, pending):
        """The RunOpsRequest's bytes for buffered ops `pending`, and whether all their outputs
        were planned here (then the reply carries no metadata)."""
        # A dropped id goes only once no buffered op still reads it.
        releases = self._releases
        if releases:
            used = set()
            for p in pending:
                used.update(p.inputs)
            releases = [i for i in self._releases if i not in used]
            self._releases = [i for i in self._releases if i in used]
        # Outputs planned here need no metadata back.
        omit = all(t._info is not None for p in pending for t in p.tensors)
        encode = _encode_request if self.planner is None else self.planner.encode_request
        # Numbered (field 5, batch_seq), so that a batch sent again after a lost connection is
        # answered, not run twice.
        self._batch_seq += 1
        seq = b"\x28" + _varint(self._batch_seq)
        return encode(self.id, [p.call for p in pending], omit, releases) + seq, omit

    def _complete(self, pending, get_response, planned):
        """Takes a sent batch's reply: fills its tensors' metadata (unless all were `planned`
        here); on a failed op, marks it and
        what depends on it failed and puts the batch's other unrun ops back in front of the
        buffer. Returns the failure (or None)."""
        try:
            response = get_response()
        except grpc.RpcError as e:
            error = error_from_rpc(e, "RunOps", self.route)
            for p in pending:
                for t in p.tensors:
                    t._error = error
            raise error from None
        if not planned:
            for p, result in zip(pending, response.results):
                for t, info in zip(p.tensors, result.outputs):
                    if t._info is None:  # planned here: the client's metadata stands
                        t._info = info
        if not response.HasField("error"):
            return None
        failed = max(response.error.op_index, 0)
        error = error_from_proto(response.error)
        failed_ids = set()
        retry = []
        for i, p in enumerate(pending[failed:]):
            if i == 0 or any(x in failed_ids for x in p.inputs):
                p.error = error
                for t in p.tensors:
                    t._error = error
                    failed_ids.add(t._id)
            else:
                retry.append(p)
        self._pending = retry + self._pending
        return error

    def _finish_ahead(self):
        """Waits for the batch sent ahead, if any; returns its failure (or None)."""
        if self._ahead is None:
            return None
        pending, future, planned = self._ahead
        self._ahead = None
        return self._complete(pending, future.result, planned)

    def raised(self, error):
        """`error` (an op's, kept by its outputs) is being raised where its data was needed: an
        error is raised once, so synchronize() does not raise it again."""
        with self._lock:
            if self._deferred_error is error:
                self._deferred_error = None

    def _defer(self, error):
        if error is not None and self._deferred_error is None:
            self._deferred_error = error

    def _send_ahead(self):
        """A full buffer goes without waiting for its reply, so the server runs it while the
        caller builds the next batch. One batch at most is ahead: the previous one's reply is
        taken first (the server sees batches in order)."""
        self._defer(self._finish_ahead())
        pending, self._pending = self._pending, []
        if pending:
            request, planned = self._request(pending)
            future = self._sender.submit(_with_reconnect, self._run_ops, request,
                                         metadata=self._metadata)
            self._ahead = (pending, future, planned)

    @_cancels_on_interrupt
    def flush(self):
        """Sends the buffered ops. Raises only when the server cannot be reached.

        An op the server refuses poisons its outputs (and everything computed from them): they
        keep the error and raise it where their data is needed, or synchronize() raises it (once:
        an error raised where data was needed is not raised again by synchronize).
        The server stops a batch at its first failing op; the ops after it that do not use the
        failed op's outputs are sent again, so one mistake loses nothing else and no error
        surfaces on a line that does not depend on it.
        """
        with self._lock:
            self._defer(self._finish_ahead())
            if not self._pending and len(self._releases) < 256:
                return
            self._check_open()
            while self._pending or self._releases:
                pending, self._pending = self._pending, []
                request, planned = self._request(pending)
                self._defer(self._complete(
                    pending, lambda: _with_reconnect(self._run_ops, request,
                                                     metadata=self._metadata), planned))

    @_cancels_on_interrupt
    def run_now(self, call):
        """Flushes, then runs one op and returns the TensorInfos of its outputs (for ops whose
        number of outputs is only known to the server)."""
        call.stream = self.current_stream_id()
        with self._lock:
            self.flush()
            request = pb.RunOpsRequest(session_id=self.id, ops=[call])
            response = self._call("RunOps", request, pb.RunOpsResponse)
            if response.HasField("error"):
                raise error_from_proto(response.error)
            return list(response.results[0].outputs)

    @_cancels_on_interrupt
    def synchronize(self, stream=None):
        """Sends the buffered ops, then waits for every stream of the session (or for stream id
        `stream`); raises the first asynchronous error since the previous synchronize of it that
        no read of the data it poisoned has raised already."""
        self.flush()
        request = pb.SynchronizeRequest(session_id=self.id)
        if stream is not None:
            request.stream = stream
        self._call("Synchronize", request, pb.SynchronizeResponse)
        with self._lock:
            error, self._deferred_error = self._deferred_error, None
        if error is not None:
            raise error

    def profile(self, enable, record_shapes=False):
        """Starts (enable) or stops the server's profile of this session's ops (the Profile RPC)
        after the ops sent so far; stopping returns the ProfileResponse once those ops have run
        (their errors are left for synchronize and for reads of what they poisoned)."""
        self.flush()
        return self._call("Profile", pb.ProfileRequest(session_id=self.id, enable=enable,
                                                       record_shapes=record_shapes),
                          pb.ProfileResponse)

    def cancel(self, stream=None):
        """Drops the session's queued work (or stream id `stream`'s): ops not started do not
        run, a running one stops at its next piece, and what only they held is freed. Their
        outputs keep a CANCELLED error that a later read raises; ops issued after this run as
        usual. Returns how many ops were dropped. Ctrl-C while a call waits for the session's
        work does this by itself."""
        self._check_open()
        request = pb.CancelRequest(session_id=self.id)
        if stream is not None:
            request.stream = stream
        # Once for what the server has (which also frees a batch waiting on it), once more for
        # the ops this client had not sent yet: flushed in between, they are dropped too.
        dropped = self._call("Cancel", request, pb.CancelResponse).cancelled_ops
        with self._lock:
            if not self._pending and self._ahead is None:
                return dropped
            self.flush()
            return dropped + self._call("Cancel", request, pb.CancelResponse).cancelled_ops

    def _cancel_after_interrupt(self):
        try:
            self.cancel()
        except BaseException:  # a second Ctrl-C, or a server gone: the first one still goes up
            pass

    # ---- streams and events (tensord.cuda's Stream and Event use these) ----

    def current_stream_id(self):
        """The id of the stream this thread's ops go to (0: the session's default stream)."""
        current = getattr(self._local, "stream", None)
        return 0 if current is None else current.stream_id

    def create_stream(self):
        """A new server stream's id. At the server's limit of streams per session, the streams
        this session made are handed out again in turn (as torch's stream pool does)."""
        self._check_open()
        try:
            stream = self._call("CreateStream", pb.CreateStreamRequest(session_id=self.id),
                                pb.CreateStreamResponse).stream
        except RuntimeError as e:
            if getattr(e, "grpc_code", None) != "RESOURCE_EXHAUSTED":
                raise
            with self._lock:
                if not self._user_streams:
                    raise
                stream = self._user_streams[self._reuse_next % len(self._user_streams)]
                self._reuse_next += 1
            return stream
        with self._lock:
            self._user_streams.append(stream)
        return stream

    def new_event_id(self):
        with self._lock:
            event = self._next_event
            self._next_event += 1
            return event

    def record_event(self, event, stream):
        """Records event id `event` on stream id `stream`, after every op issued before."""
        with self._lock:
            self.flush()  # the ops before the record must reach the server first
            self._call("RecordEvent", pb.RecordEventRequest(session_id=self.id, event=event,
                                                            stream=stream),
                       pb.RecordEventResponse)

    def wait_event(self, event, stream):
        """Makes the ops issued on `stream` from now on wait for the event's latest record."""
        with self._lock:
            self.flush()  # the ops before the wait are not held back by it
            self._call("WaitEvent", pb.WaitEventRequest(session_id=self.id, event=event,
                                                        stream=stream),
                       pb.WaitEventResponse)

    def query_event(self, event):
        """Whether every record of the event is complete (the event must have been recorded)."""
        self._check_open()
        return self._call("QueryEvent", pb.QueryEventRequest(session_id=self.id, event=event),
                          pb.QueryEventResponse).completed

    def marker_event(self, stream):
        """The client's private event for stream id `stream` (recorded again at each use)."""
        with self._lock:
            event = self._marker_events.get(stream)
            if event is None:
                event = self._marker_events[stream] = self.new_event_id()
            return event

    def query_stream(self, stream):
        """Whether all the work issued on stream id `stream` is done."""
        with self._lock:
            event = self.marker_event(stream)
            self.record_event(event, stream)
        return self.query_event(event)

    @_cancels_on_interrupt
    def wait_event_done(self, event):
        """Blocks until the event's latest record is complete: a private stream of the session
        waits for the event on the server and is synchronized (so the wait is the server's, and
        no other stream's errors are taken). Polls QueryEvent when no stream can be made."""
        self._check_open()
        with self._lock:
            waiter = self._idle_waiters.pop() if self._idle_waiters else None
        if waiter is None:
            try:
                waiter = self._call("CreateStream", pb.CreateStreamRequest(session_id=self.id),
                                    pb.CreateStreamResponse).stream
            except RuntimeError as e:
                if getattr(e, "grpc_code", None) != "RESOURCE_EXHAUSTED":
                    raise
                delay = 0.0001
                while not self.query_event(event):
                    time.sleep(delay)
                    delay = min(delay * 2, 0.01)
                return
        try:
            self._call("WaitEvent", pb.WaitEventRequest(session_id=self.id, event=event,
                                                        stream=waiter),
                       pb.WaitEventResponse)
            self._call("Synchronize", pb.SynchronizeRequest(session_id=self.id, stream=waiter),
                       pb.SynchronizeResponse)
        finally:
            with self._lock:
                self._idle_waiters.append(waiter)

    # ---- data ----

    def upload(self, data, sizes, dtype, device=None):
        """A new contiguous tensor from bytes-like `data` (numel * itemsize bytes), on `device`
        (a tensord.device or its text; None: the session's device): (its id, its TensorInfo)."""
        self.flush()
        mv = memoryview(data)
        mv = mv.cast("B") if mv.nbytes else memoryview(b"")
        with self._lock:
            tensor_id = self.new_ids(1)
            releases, self._releases = self._releases, []
        first = pb.UploadRequest(header=pb.UploadHeader(
            session_id=self.id, id=tensor_id, sizes=list(sizes), dtype=dtype.proto,
            device="" if device is None else str(device),
            release_before=releases)).SerializeToString()
        attempts = 0

        def attempt(_, **kwargs):
            # Sent again, whole, when the connection drops, releases included (an earlier try
            # may never have arrived; releasing twice is harmless).
            nonlocal attempts
            attempts += 1

            def messages():
                yield first
                for at in range(0, len(mv), _CHUNK):
                    chunk = mv[at:at + _CHUNK]
                    yield b"\x12" + _varint(len(chunk)) + chunk.tobytes()

            return self._upload(messages(), **kwargs)

        try:
            response = _with_reconnect(attempt, None, metadata=self._metadata)
        except grpc.RpcError as e:
            if e.code() == grpc.StatusCode.ALREADY_EXISTS and attempts > 1:
                # An earlier attempt arrived and only its reply was lost: the id is this
                # client's own, never reused.
                described = self._call("Describe", pb.DescribeRequest(session_id=self.id,
                                                                      ids=[tensor_id]),
                                       pb.DescribeResponse)
                return tensor_id, described.tensors[0]
            raise error_from_rpc(e, "upload", self.route) from None
        return tensor_id, response.tensor

    @_cancels_on_interrupt
    def download(self, tensor_id):
        """(TensorInfo, bytearray of its elements in row-major order). The buffered ops were
        sent by the caller (the tensor's _data_id, which raises their error if one failed)."""

        def attempt(request, **kwargs):  # the whole stream; again from the start if it drops
            header = None
            out = None
            at = 0
            for message in self._download(request, **kwargs):
                if header is None:
                    header = pb.DownloadResponse.FromString(message).header
                    numel = 1
                    for s in header.sizes:
                        numel *= s
                    out = bytearray(numel * _dtypes.from_proto(header.dtype).itemsize)
                    continue
                payload = _data_payload(message)
                if payload is None:
                    payload = memoryview(pb.DownloadResponse.FromString(message).data)
                out[at:at + len(payload)] = payload
                at += len(payload)
            return header, out, at

        try:
            header, out, at = _with_reconnect(
                attempt, pb.DownloadRequest(session_id=self.id, id=tensor_id),
                metadata=self._metadata)
        except grpc.RpcError as e:
            raise error_from_rpc(e, "download", self.route) from None
        if header is None or at != len(out):
            raise RuntimeError("download: the server sent fewer bytes than announced")
        return header, out

    @_cancels_on_interrupt
    def read_storage(self, tensor_id, offset=0, count=-1):
        return self._call("ReadStorage", pb.ReadStorageRequest(session_id=self.id, id=tensor_id,
                                                               offset=offset, count=count),
                          pb.ReadStorageResponse)

    def write_storage(self, tensor_id, offset, data):
        self.flush()
        self._call("WriteStorage", pb.WriteStorageRequest(session_id=self.id, id=tensor_id,
                                                          offset=offset, data=bytes(data),
                                                          stream=self.current_stream_id()),
                   pb.WriteStorageResponse)


def default_address():
    return os.environ.get("TENSORD_ADDRESS", "127.0.0.1:50051")


# ---- the current session (module-level functions use it) ------------------------------

_state = threading.local()


_default = None


_default_lock = threading.Lock()


def connect(address=None, device=None, token=None, pipeline=None, *, tls=None,
            root_certificates=None, certificate_chain=None, private_key=None, server_name=None):
    """Opens a session on the tensord server at `address` (default $TENSORD_ADDRESS).

    pipeline=True (the default): ops are buffered and sent in batches; an op's error is raised
    when a result is next needed (its metadata or data, any flush). pipeline=False: each op is
    sent at once and raises at its own line, as in torch.

    token: sent as `authorization: Bearer <token>` on every call (servers started with
    --auth-token-file require it).

    TLS (servers started with --tls-cert/--tls-key), as grpc.ssl_channel_credentials takes it;
    each PEM is bytes or the path of a file:
      root_certificates: the CA that signed the server's certificate (default: the system's
        roots, or $TENSORD_TLS_CA).
      certificate_chain, private_key: this client's certificate and key, for servers that
        require one (--tls-client-ca, mutual TLS); defaults $TENSORD_TLS_CERT, $TENSORD_TLS_KEY.
      tls: None (the default) uses TLS when any of the three, or any of those environment
        variables, is given, plaintext otherwise; True uses TLS (with the system's roots unless
        root_certificates is given); False plaintext, ignoring the environment variables.
      server_name: the name the server's certificate must carry, when it differs from the host
        in `address` (the `grpc.ssl_target_name_override` channel option).

        tensord.connect("tensord.example:50051", token=token, root_certificates="ca.pem")
    """
    return Session(address or default_address(), device=device, token=token, pipeline=pipeline,
                   tls=tls, root_certificates=root_certificates,
                   certificate_chain=certificate_chain, private_key=private_key,
                   server_name=server_name)


def _push_session(s):
    stack = getattr(_state, "stack", None)
    if stack is None:
        stack = _state.stack = []
    stack.append(s)


def _pop_session(s):
    stack = getattr(_state, "stack", [])
    if stack and stack[-1] is s:
        stack.pop()


def current_session():
    """The session module-level functions use."""
    global _default
    stack = getattr(_state, "stack", None)
    if stack:
        return stack[-1]
    with _default_lock:
        if _default is None or _default.closed:
            _default = connect()
        return _default


def existing_session():
    """The session current_session() would return, without opening one: None where no `with
    session:` block is active and no open default session exists."""
    stack = getattr(_state, "stack", None)
    if stack:
        return stack[-1]
    with _default_lock:
        return _default if _default is not None and not _default.closed else None


def set_default_session(session):
    global _default
    with _default_lock:
        _default = session


@atexit.register
def _close_default():
    if _default is not None:
        _default.close()
