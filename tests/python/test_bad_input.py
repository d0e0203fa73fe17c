"""Bad input over the raw protobuf/gRPC API: every case gets a precise error, nothing crashes.

This suite talks to tensord through the generated messages (tensord.v1.tensord_pb2) and raw
gRPC method handles, never through the friendly `tensord` client, so it can send what no client
would: unknown ids, invalid enum values, wrongly typed attributes, None in place of tensors,
malformed upload streams, garbage bytes. Each case asserts

  * the call fails with a specific non-OK status code (the gRPC status, or RunOpsResponse.error
    for RunOps, whichever the API uses), appropriate to the mistake;
  * the error message names the op (or the RPC) the client sent;
  * where torch semantics apply, the Python exception class the server reports (Error.kind, or
    the `tensord-error-kind` trailing metadata) is the one torch 1.13 raises for the same
    mistake, computed live with torch;

and after every case that the server process is alive, grpc.health.v1.Health/Check answers
SERVING and the module's one session is still usable (a small full + add whose downloaded value
is checked, and a canary tensor uploaded at the start is intact).

A case that kills the server fails, and the next case starts a fresh server (and session), so one
crash does not cascade. The loops at the end cover every op that ListOps publishes: wrong input
counts, no attributes, and None in place of a tensor input.
"""
import dataclasses
import math
import os
import re
import signal
import struct
import subprocess
import sys
from typing import Callable, Optional, Sequence

import grpc
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "client", "python"))

from tensord.v1 import tensord_pb2 as pb  # noqa: E402
import tensord_process  # noqa: E402

SERVICE = "/tensord.v1.Tensord/"
HEALTH_CHECK = "/grpc.health.v1.Health/Check"
C = grpc.StatusCode
IA, NF, OOR, RE, FP, AE = (C.INVALID_ARGUMENT, C.NOT_FOUND, C.OUT_OF_RANGE,
                           C.RESOURCE_EXHAUSTED, C.FAILED_PRECONDITION, C.ALREADY_EXISTS)
CODE_BY_NUMBER = {code.value[0]: code for code in C}
INT64_MAX = 2**63 - 1
INT64_MIN = -2**63
UINT64_MAX = 2**64 - 1
RPC_TIMEOUT = 20
# Codes that are never a precise answer to bad input.
VAGUE_CODES = {C.UNKNOWN, C.INTERNAL, C.UNIMPLEMENTED, C.UNAVAILABLE, C.DEADLINE_EXCEEDED,
               C.CANCELLED, C.DATA_LOSS}
PRECISE_CODES = tuple(c for c in C if c not in VAGUE_CODES and c != C.OK)


def _start_server():
    """A fresh tensord, started as conftest's `server` fixture starts one."""
    return tensord_process.start("--session-ttl=600s")


def _list_ops_at_collection():
    """ListOps of the binary under test, for parametrizing the every-op loops."""
    try:
        proc, address = _start_server()
    except Exception as e:  # reported by test_list_ops_was_collected
        return [], repr(e)
    try:
        with grpc.insecure_channel(address) as channel:
            call = channel.unary_unary(SERVICE + "ListOps",
                                       request_serializer=lambda m: m.SerializeToString(),
                                       response_deserializer=pb.ListOpsResponse.FromString)
            return list(call(pb.ListOpsRequest(), timeout=30).ops), None
    except Exception as e:
        return [], repr(e)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


OPS, OPS_ERROR = _list_ops_at_collection()


# ---- values -------------------------------------------------------------------------------------

def I(v):  # noqa: E743
    return pb.AttrValue(i=v)


def INTS(*v):
    return pb.AttrValue(ints=pb.IntList(values=list(v)))


def F(v):
    return pb.AttrValue(f=v)


def B(v):
    return pb.AttrValue(b=v)


def DT(v):
    return pb.AttrValue(dtype=v)


def DEV(s):
    return pb.AttrValue(device=s)


def IDX(*items):
    return pb.AttrValue(index=pb.IndexList(items=list(items)))


NONE = pb.AttrValue(none=True)


def II(n):
    return pb.IndexItem(integer=n)


def SL(start=None, stop=None, step=None):
    s = pb.Slice()
    if start is not None:
        s.start = start
    if stop is not None:
        s.stop = stop
    if step is not None:
        s.step = step
    return pb.IndexItem(slice=s)


NI = pb.IndexItem(none=True)
EL = pb.IndexItem(ellipsis=True)

F32, F64, I64, I32, BOOL, U8 = (pb.DTYPE_FLOAT32, pb.DTYPE_FLOAT64, pb.DTYPE_INT64,
                                pb.DTYPE_INT32, pb.DTYPE_BOOL, pb.DTYPE_UINT8)

NEW = "<new id>"          # a fresh output id
NEWBLOCK = "<new block>"  # output_id_start: a fresh block of ids


@dataclasses.dataclass(frozen=True)
class Ref:
    """The first output id of op `k` of the same batch."""
    k: int


class Op:
    """One OpCall, with symbolic ids resolved when the batch is sent."""

    def __init__(self, name, inputs=(), attrs=None, out=(NEW,), start=None, stream=0):
        self.name = name
        self.inputs = list(inputs)
        self.attrs = dict(attrs or {})
        self.out = list(out or ())
        self.start = start
        self.stream = stream


# ---- the torch oracle ---------------------------------------------------------------------------

_TORCH_KINDS = {}
KINDS = ("IndexError", "ValueError", "TypeError", "RuntimeError")


def torch_kind(fn):
    """The Python exception class (one of KINDS) torch 1.13 raises for fn(torch), or 'OK'."""
    key = id(fn)
    if key not in _TORCH_KINDS:
        import torch
        try:
            fn(torch)
            kind = "OK"
        except Exception as e:  # noqa: BLE001 - the class is what we want
            kind = next((k.__name__ for k in type(e).__mro__ if k.__name__ in KINDS),
                        type(e).__name__)
        _TORCH_KINDS[key] = kind
    return _TORCH_KINDS[key]


def code_for_kind(kind):
    return OOR if kind == "IndexError" else IA


# ---- outcomes and the harness -------------------------------------------------------------------

@dataclasses.dataclass
class Outcome:
    ok: bool
    code: Optional[grpc.StatusCode] = None
    message: str = ""
    kind: str = ""
    op_index: Optional[int] = None
    response: object = None

    def describe(self):
        if self.ok:
            return "OK"
        extra = "" if self.op_index is None else f", op_index={self.op_index}"
        message = self.message if len(self.message) <= 300 else self.message[:300] + "…"
        return f"{self.code.name}{extra}, kind={self.kind!r}: {message!r}"


def _rpc_outcome(e):
    kind = ""
    try:
        for key, value in e.trailing_metadata() or ():
            if key == "tensord-error-kind":
                kind = value
    except Exception:  # noqa: BLE001
        pass
    return Outcome(False, e.code(), e.details() or "", kind)


def _ident(b):
    return b


def _ser(m):
    return m if isinstance(m, (bytes, bytearray)) else m.SerializeToString()


def _health_status(raw):
    """HealthCheckResponse.status from its bytes (field 1, varint); 1 is SERVING."""
    i, status = 0, 0
    while i < len(raw):
        key = raw[i]
        i += 1
        if key == 0x08:
            value = shift = 0
            while True:
                b = raw[i]
                i += 1
                value |= (b & 0x7F) << shift
                shift += 7
                if not b & 0x80:
                    break
            status = value
        else:
            break
    return status


def _proc_state(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "gone"


def _child_server_pids():
    """Pids of tensord processes this pytest process started (conftest's `server`)."""
    me = os.getpid()
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            if ppid != me:
                continue
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmd = f.read().split(b"\0")
        except (OSError, ValueError, IndexError):
            continue
        if any(b"--listen" in c for c in cmd) and os.path.basename(cmd[0]) == b"tensord":
            pids.append(int(entry))
    return pids


class Harness:
    """One tensord (conftest's, or a replacement after a crash), one channel, one session."""

    SEEDS = {}  # name -> (id, description); filled by _seed

    def __init__(self, address):
        self.proc = None  # a replacement server this module started
        self.pid = None
        pids = _child_server_pids()
        if len(pids) == 1:
            self.pid = pids[0]
        self.restarts = 0
        self.broken = False
        self._connect(address)

    # -- plumbing --

    def _connect(self, address):
        self.address = address
        self.channel = grpc.insecure_channel(
            address, options=[("grpc.max_receive_message_length", -1),
                              ("grpc.max_send_message_length", -1)])
        self._stubs = {}
        self.next_id = 1000
        info = self.unary("GetServerInfo", pb.GetServerInfoRequest(), pb.GetServerInfoResponse)
        self.limits = info.limits
        self.sid = self.open_session()
        self._seed()

    def stub(self, method, response_type, kind="unary"):
        key = (method, kind)
        if key not in self._stubs:
            path = HEALTH_CHECK if method == "Health" else SERVICE + method
            if kind == "unary":
                self._stubs[key] = self.channel.unary_unary(
                    path, request_serializer=_ser,
                    response_deserializer=response_type.FromString if response_type else _ident)
            elif kind == "upload":
                self._stubs[key] = self.channel.stream_unary(
                    path, request_serializer=_ser,
                    response_deserializer=pb.UploadResponse.FromString)
            elif kind == "download":
                self._stubs[key] = self.channel.unary_stream(
                    path, request_serializer=_ser,
                    response_deserializer=pb.DownloadResponse.FromString)
            elif kind == "connect":
                self._stubs[key] = self.channel.stream_stream(
                    path, request_serializer=_ser,
                    response_deserializer=pb.ConnectResponse.FromString)
        return self._stubs[key]

    def unary(self, method, request, response_type, timeout=RPC_TIMEOUT):
        """Calls a unary RPC; raises grpc.RpcError on failure."""
        return self.stub(method, response_type)(request, timeout=timeout)

    def call(self, method, request, response_type=None, timeout=RPC_TIMEOUT):
        """Calls a unary RPC; an Outcome either way (request may be raw bytes)."""
        try:
            return Outcome(True, response=self.unary(method, request, response_type, timeout))
        except grpc.RpcError as e:
            return _rpc_outcome(e)

    def fresh(self, n=1):
        first = self.next_id
        self.next_id += n
        return first

    def open_session(self, device=""):
        return self.unary("OpenSession", pb.OpenSessionRequest(device=device,
                                                               client_name="test_bad_input"),
                          pb.OpenSessionResponse).session_id

    def close_session(self, sid):
        return self.call("CloseSession", pb.CloseSessionRequest(session_id=sid),
                         pb.CloseSessionResponse)

    # -- ops --

    def build(self, ops: Sequence[Op], session_id=None):
        request = pb.RunOpsRequest(session_id=self.sid if session_id is None else session_id)
        firsts = []
        for op in ops:
            call = request.ops.add()
            call.op = op.name
            for x in op.inputs:
                call.inputs.append(self.resolve(x, firsts))
            for name, value in op.attrs.items():
                call.attrs[name].CopyFrom(value)
            outs = [self.fresh() if o == NEW else self.resolve(o, firsts) for o in op.out]
            call.outputs.extend(outs)
            first = outs[0] if outs else None
            if op.start == NEWBLOCK:
                call.output_id_start = first = self.fresh(256)
            elif op.start is not None:
                call.output_id_start = first = self.resolve(op.start, firsts)
            call.stream = op.stream
            firsts.append(first)
        return request, firsts

    def resolve(self, x, firsts):
        if isinstance(x, Ref):
            return firsts[x.k]
        if isinstance(x, str):
            return self.SEEDS[x]
        return x

    def run_ops(self, ops, session_id=None, timeout=RPC_TIMEOUT):
        request, firsts = self.build(ops, session_id)
        return self.run_request(request, timeout), firsts

    def run_request(self, request, timeout=RPC_TIMEOUT):
        out = self.call("RunOps", request, pb.RunOpsResponse, timeout)
        if out.ok and out.response.HasField("error"):
            e = out.response.error
            return Outcome(False, CODE_BY_NUMBER.get(e.code, C.UNKNOWN), e.message, e.kind,
                           e.op_index, out.response)
        return out

    def must_run(self, ops):
        out, firsts = self.run_ops(ops)
        assert out.ok, f"setup ops failed: {out.describe()}"
        return firsts

    # -- bulk data --

    def upload(self, messages, timeout=RPC_TIMEOUT):
        try:
            response = self.stub("Upload", None, "upload")(iter(list(messages)), timeout=timeout)
            return Outcome(True, response=response)
        except grpc.RpcError as e:
            return _rpc_outcome(e)

    def download(self, tensor_id, session_id=None, raw=None, timeout=RPC_TIMEOUT):
        """(Outcome, header, bytes)."""
        request = raw if raw is not None else pb.DownloadRequest(
            session_id=self.sid if session_id is None else session_id, id=tensor_id)
        header, data = None, bytearray()
        try:
            for i, message in enumerate(self.stub("Download", None, "download")(
                    request, timeout=timeout)):
                if i == 0:
                    header = message.header
                else:
                    data += message.data
            return Outcome(True), header, bytes(data)
        except grpc.RpcError as e:
            return _rpc_outcome(e), header, bytes(data)

    def connect(self, requests, timeout=RPC_TIMEOUT):
        """All ConnectResponses to `requests` (sent at once, then half-closed)."""
        try:
            return list(self.stub("Connect", None, "connect")(iter(list(requests)),
                                                              timeout=timeout)), None
        except grpc.RpcError as e:
            return None, _rpc_outcome(e)

    # -- the session's fixtures --

    CANARY = [1.25, -2.5, 3.75, 1e10, -0.0]

    def _seed(self):
        seeds = {}
        n = [0]

        def sid(name):
            n[0] += 1
            seeds[name] = n[0]
            return n[0]

        canary = struct.pack("<5d", *self.CANARY)
        out = self.upload([pb.UploadRequest(header=pb.UploadHeader(
            session_id=self.sid, id=sid("CANARY"), sizes=[5], dtype=F64)),
            pb.UploadRequest(data=canary)])
        assert out.ok, f"canary upload failed: {out.describe()}"
        plan = [
            ("F6", "arange", [], {"end": F(6.0), "dtype": DT(F32)}),
            ("F", "view", ["F6"], {"shape": INTS(2, 3)}),            # float32 [2, 3]
            ("V", "arange", [], {"end": F(4.0), "dtype": DT(F32)}),  # float32 [4]: 0 1 2 3
            ("IDX", "arange", [], {"end": I(2)}),                    # int64 [2]: 0 1
            ("MASK", "gt", ["V"], {"other": F(1.0)}),                # bool [4]
            ("S0", "full", [], {"size": INTS(), "fill_value": F(5.0), "dtype": DT(F32)}),
            ("I32", "arange", [], {"end": I(4), "dtype": DT(I32)}),  # int32 [4]
            ("L", "arange", [], {"end": I(3)}),                      # int64 [3]
            ("M", "ones", [], {"size": INTS(3, 3)}),                 # float32 [3, 3]
            ("IDX2", "zeros", [], {"size": INTS(1, 1), "dtype": DT(I64)}),  # int64 [1, 1]
            ("IDX1", "full", [], {"size": INTS(1), "fill_value": I(1)}),    # int64 [1]: 1
            ("IDX0", "full", [], {"size": INTS(), "fill_value": I(1)}),     # int64 0-d: 1
            ("IDXZ", "full", [], {"size": INTS(), "fill_value": I(0)}),     # int64 0-d: 0
            ("BM", "ones", [], {"size": INTS(2, 3), "dtype": DT(BOOL)}),    # bool [2, 3]
            ("E", "zeros", [], {"size": INTS(0)}),                   # float32 [0]
            ("V64", "arange", [], {"end": F(4.0), "dtype": DT(F64)}),  # float64 [4]
            ("W", "arange", [], {"end": F(4.0), "dtype": DT(F32)}),  # WriteStorage target
            ("B3", "ones", [], {"size": INTS(2, 3, 4)}),             # float32 [2, 3, 4]
            ("R64", "ones", [], {"size": INTS(*[1] * 64)}),          # rank 64
            ("ONE", "ones", [], {"size": INTS(1)}),                  # float32 [1]
        ]
        request = pb.RunOpsRequest(session_id=self.sid)
        for name, op, inputs, attrs in plan:
            call = request.ops.add()
            call.op = op
            call.inputs.extend(seeds[i] for i in inputs)
            for k, v in attrs.items():
                call.attrs[k].CopyFrom(v)
            call.outputs.append(sid(name))
        out = self.run_request(request)
        assert out.ok, f"seeding the session failed: {out.describe()}"
        sync = self.call("Synchronize", pb.SynchronizeRequest(session_id=self.sid),
                         pb.SynchronizeResponse)
        assert sync.ok, f"seeding the session failed: {sync.describe()}"
        Harness.SEEDS = seeds

    # -- liveness and the after-every-case check --

    def alive(self):
        if self.proc is not None:
            return self.proc.poll() is None
        if self.pid is not None:
            return _proc_state(self.pid) not in ("Z", "X", "gone")
        return True  # unknown process: the health check decides

    def health(self):
        try:
            raw = self.channel.unary_unary(HEALTH_CHECK, request_serializer=_ident,
                                           response_deserializer=_ident)(b"", timeout=5)
            return _health_status(raw)
        except grpc.RpcError as e:
            return f"{e.code().name}: {e.details()}"

    def post_check(self):
        """Problems with the server or the session after a case (empty: all is well)."""
        if not self.alive():
            self.broken = True
            state = (f"exit status {self.proc.returncode}" if self.proc is not None
                     else f"state {_proc_state(self.pid)}")
            return [f"the server process died ({state})"]
        problems = []
        status = self.health()
        if status != 1:
            self.broken = True
            return [f"Health/Check is not SERVING: {status}"]
        a = self.fresh()
        b = self.fresh()
        out, _ = self.run_ops([
            Op("full", attrs={"size": INTS(3), "fill_value": F(1.5), "dtype": DT(F32)}, out=[a]),
            Op("add", [a, a], {"alpha": I(2)}, out=[b])])
        if not out.ok:
            problems.append(f"the session is no longer usable: full/add failed: {out.describe()}")
        else:
            got, header, data = self.download(b)
            if not got.ok:
                problems.append(f"the session is no longer usable: download failed: "
                                f"{got.describe()}")
            elif list(header.sizes) != [3] or data != struct.pack("<3f", 4.5, 4.5, 4.5):
                problems.append(f"full/add gave wrong values: sizes {list(header.sizes)}, "
                                f"bytes {data!r}")
        got, header, data = self.download(self.SEEDS["CANARY"])
        if not got.ok:
            problems.append(f"the canary tensor cannot be downloaded: {got.describe()}")
        elif data != struct.pack("<5d", *self.CANARY):
            problems.append(f"the canary tensor changed: {data!r}")
        self.call("Release", pb.ReleaseRequest(session_id=self.sid, ids=[a, b]),
                  pb.ReleaseResponse)
        if problems:
            self.broken = True
        return problems

    def ensure_up(self):
        """After a crash or a hang, a fresh server; after a broken session, a fresh session."""
        if not self.broken:
            return
        self.broken = False
        if self.alive() and self.health() == 1:
            self.sid = self.open_session()
            self._seed()
            return
        self.shutdown_replacement()
        if self.pid is not None and _proc_state(self.pid) not in ("Z", "X", "gone"):
            os.kill(self.pid, signal.SIGKILL)  # conftest's server, hung: ours to end
        self.channel.close()
        self.proc, address = _start_server()
        self.pid = None
        self.restarts += 1
        self._connect(address)

    def shutdown_replacement(self):
        if self.proc is not None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            self.proc = None


@pytest.fixture(scope="module")
def h(server):
    harness = Harness(server)
    yield harness
    harness.close_session(harness.sid)
    harness.channel.close()
    harness.shutdown_replacement()


# ---- cases --------------------------------------------------------------------------------------

_OP_NAME_RE_CACHE = {}


def names(message, name):
    """Whether `message` names `name` as an op or method: "name: …" or "name …" at the start,
    "'name'", "\"name\"", "name(…" or "… name: …"."""
    if name == "":
        return "''" in message or '""' in message
    pattern = _OP_NAME_RE_CACHE.get(name)
    if pattern is None:
        n = re.escape(name)
        pattern = re.compile(rf"^{n}[\s:(]|[^\w.]{n}(?::|\()|['\"`]{n}['\"`]")
        _OP_NAME_RE_CACHE[name] = pattern
    return pattern.search(message) is not None


def _snake(method):
    return re.sub(r"(?<!^)(?=[A-Z])", "_", method).lower()


def rpc_names(method):
    return (method, _snake(method))


@dataclasses.dataclass
class Case:
    id: str
    run: Callable
    code: tuple = ()            # acceptable codes (one, or a few where several are apt)
    names: tuple = ()           # the message must name one of these
    kind: Optional[str] = None  # expected Error.kind / tensord-error-kind
    torch: Optional[Callable] = None  # torch's behaviour for the same mistake: its class
    op_index: Optional[int] = None
    extra: Optional[Callable] = None  # (h, outcome, context) -> [problems]

    def __post_init__(self):
        assert self.code or self.torch, f"{self.id}: no expected code"
        if isinstance(self.code, grpc.StatusCode):
            self.code = (self.code,)
        if isinstance(self.names, str):
            self.names = (self.names,)


def ops_case(id, *ops, code=None, names=None, kind=None, torch=None, op_index=None,
             extra=None):
    """A RunOps batch whose last op (or ops[op_index]) is the bad one."""
    ops = list(ops)
    index = len(ops) - 1 if op_index is None else op_index

    def run(h):
        out, firsts = h.run_ops(ops)
        return out, firsts

    return Case(id, run, code or (), names or (ops[index].name,), kind, torch, index, extra)


def rpc_case(id, run, code, method=None, names=None, kind=None, torch=None, extra=None):
    return Case(id, run, code, names or rpc_names(method), kind, torch, None, extra)


def check_case(h, case):
    problems = []
    result = case.run(h)
    out, context = result if isinstance(result, tuple) else (result, None)
    expected_kind = case.kind
    codes = case.code
    if case.torch is not None:
        tk = torch_kind(case.torch)
        if tk == "OK":
            problems.append("test bug: the torch oracle raised nothing")
        else:
            if expected_kind is not None and expected_kind != tk:
                problems.append(f"test bug: kind {expected_kind} but torch raises {tk}")
            expected_kind = tk
            if not codes:
                codes = (code_for_kind(tk),)
    if out.ok:
        problems.append(f"the call succeeded; expected {'/'.join(c.name for c in codes)}")
    else:
        if out.code not in codes:
            problems.append(f"status {out.code.name}, expected "
                            f"{' or '.join(c.name for c in codes)}")
        if case.names and not any(names(out.message, n) for n in case.names):
            problems.append(f"the message does not name {' or '.join(map(repr, case.names))}")
        if expected_kind is not None and out.kind != expected_kind:
            problems.append(f"kind {out.kind!r}, expected {expected_kind!r} (torch's class)")
        if case.op_index is not None and out.op_index not in (None, case.op_index):
            problems.append(f"op_index {out.op_index}, expected {case.op_index}")
    if case.extra is not None:
        problems += case.extra(h, out, context)
    return out, problems


def run_checked(h, case):
    h.ensure_up()
    try:
        out, problems = check_case(h, case)
        observed = out.describe()
    except Exception as e:  # noqa: BLE001 - a broken connection is a finding too
        problems, observed = [f"the case raised {e!r}"], "-"
    problems += h.post_check()
    if problems:
        pytest.fail(f"[{case.id}] observed {observed}\n  - " + "\n  - ".join(problems),
                    pytrace=False)


def described(h, ids, present):
    """Problems if the tensors `ids` are not (present=False: are) in the session."""
    problems = []
    for i in ids:
        out = h.call("Describe", pb.DescribeRequest(session_id=h.sid, ids=[i]),
                     pb.DescribeResponse)
        if out.ok != present:
            problems.append(f"tensor {i} {'is missing' if present else 'exists'} after the "
                            f"failed call")
    return problems


def unchanged(seed, fmt, values):
    """An extra check: seed tensor `seed` still holds `values`."""
    def check(h, out, context):
        got, header, data = h.download(h.SEEDS[seed])
        if not got.ok:
            return [f"{seed} cannot be downloaded: {got.describe()}"]
        if data != struct.pack(fmt, *values):
            return [f"{seed} changed: {data!r}"]
        return []
    return check


CASES = []


def add(*cases):
    CASES.extend(cases)


def scratch(seed="V"):
    """A clone of a seed, as op 0 of a batch (in-place ops then write to it)."""
    return Op("clone", [seed])


# ---- shapes ---------------------------------------------------------------------------------------

add(
    ops_case("zeros-negative-size", Op("zeros", attrs={"size": INTS(-1)}),
             torch=lambda t: t.zeros(-1)),
    ops_case("zeros-negative-second-size", Op("zeros", attrs={"size": INTS(2, -3)}),
             torch=lambda t: t.zeros(2, -3)),
    ops_case("zeros-int64-min-size", Op("zeros", attrs={"size": INTS(INT64_MIN)}), code=IA),
    ops_case("zeros-numel-overflow", Op("zeros", attrs={"size": INTS(2**62, 16)}),
             torch=lambda t: t.zeros(2**62, 16)),
    ops_case("zeros-numel-overflow-3d", Op("zeros", attrs={"size": INTS(2**31, 2**31, 4)}),
             code=IA),
    ops_case("zeros-nbytes-overflow", Op("zeros", attrs={"size": INTS(2**61), "dtype": DT(F64)}),
             code=IA),
    ops_case("zeros-int64-max-size", Op("zeros", attrs={"size": INTS(INT64_MAX)}), code=IA),
    ops_case("zeros-4TiB-over-budget", Op("zeros", attrs={"size": INTS(2**40)}), code=RE),
    ops_case("empty-negative-size", Op("empty", attrs={"size": INTS(3, -2)}),
             torch=lambda t: t.empty(3, -2)),
    ops_case("ones-over-budget", Op("ones", attrs={"size": INTS(2**20, 2**20)}), code=RE),
    ops_case("full-negative-size", Op("full", attrs={"size": INTS(-5), "fill_value": F(1.0)}),
             torch=lambda t: t.full((-5,), 1.0)),
    ops_case("view-numel-mismatch", Op("view", ["F"], {"shape": INTS(7)}),
             torch=lambda t: t.zeros(2, 3).view(7)),
    ops_case("view-two-inferred", Op("view", ["F"], {"shape": INTS(-1, -1)}),
             torch=lambda t: t.zeros(2, 3).view(-1, -1)),
    ops_case("view-negative-dim", Op("view", ["F"], {"shape": INTS(-2, 3)}),
             torch=lambda t: t.zeros(2, 3).view(-2, 3)),
    ops_case("view-int64-min", Op("view", ["F"], {"shape": INTS(INT64_MIN)}), code=IA),
    ops_case("view-incompatible-strides", Op("t", ["F"]), Op("view", [Ref(0)], {"shape": INTS(6)}),
             torch=lambda t: t.zeros(2, 3).t().view(6)),
    ops_case("reshape-numel-mismatch", Op("reshape", ["F"], {"shape": INTS(4)}),
             torch=lambda t: t.zeros(2, 3).reshape(4)),
    ops_case("reshape-overflowing-shape", Op("reshape", ["F"], {"shape": INTS(2**62, 2**62)}),
             code=IA),
    ops_case("expand-mismatch", Op("expand", ["V"], {"size": INTS(3)}),
             torch=lambda t: t.zeros(4).expand(3)),
    ops_case("expand-numel-overflow", Op("expand", ["ONE"], {"size": INTS(2**62, 2**62)}),
             torch=lambda t: t.ones(1, 1).expand(2**62, 2**62)),
    ops_case("expand-fewer-dims", Op("expand", ["F"], {"size": INTS(3)}),
             torch=lambda t: t.zeros(2, 3).expand(3)),
    ops_case("broadcast_to-mismatch", Op("broadcast_to", ["V"], {"size": INTS(2, 3)}),
             torch=lambda t: t.broadcast_to(t.zeros(4), (2, 3))),
    ops_case("expand_as-mismatch", Op("expand_as", ["V", "F"]),
             torch=lambda t: t.zeros(4).expand_as(t.zeros(2, 3))),
    ops_case("view_as-mismatch", Op("view_as", ["V", "F"]),
             torch=lambda t: t.zeros(4).view_as(t.zeros(2, 3))),
    ops_case("reshape_as-mismatch", Op("reshape_as", ["V", "F"]),
             torch=lambda t: t.zeros(4).reshape_as(t.zeros(2, 3))),
    ops_case("unflatten-bad-sizes", Op("unflatten", ["F"], {"dim": I(1), "sizes": INTS(2, 2)}),
             torch=lambda t: t.zeros(2, 3).unflatten(1, (2, 2))),
    ops_case("repeat-fewer-dims", Op("repeat", ["F"], {"repeats": INTS(2)}),
             torch=lambda t: t.zeros(2, 3).repeat(2)),
    ops_case("repeat-negative", Op("repeat", ["V"], {"repeats": INTS(-1)}),
             torch=lambda t: t.zeros(4).repeat(-1)),
    ops_case("repeat-numel-overflow", Op("repeat", ["V"], {"repeats": INTS(2**62, 2**62)}),
             code=IA),
    ops_case("add-broadcast-mismatch", Op("add", ["V", "L"]),
             torch=lambda t: t.add(t.zeros(4), t.arange(3))),
    ops_case("mul-broadcast-mismatch", Op("mul", ["F", "V"]),
             torch=lambda t: t.mul(t.zeros(2, 3), t.zeros(4))),
    ops_case("add_-result-shape-mismatch", scratch(), Op("add_", [Ref(0), "F"]),
             torch=lambda t: t.zeros(4).add_(t.zeros(2, 3))),
    ops_case("mm-shape-mismatch", Op("mm", ["F", "F"]),
             torch=lambda t: t.mm(t.zeros(2, 3), t.zeros(2, 3))),
    ops_case("mm-1d", Op("mm", ["V", "F"]), torch=lambda t: t.mm(t.zeros(4), t.zeros(2, 3))),
    ops_case("matmul-0d", Op("matmul", ["S0", "V"]),
             torch=lambda t: t.matmul(t.tensor(1.), t.zeros(4))),
    ops_case("dot-size-mismatch", Op("dot", ["V", "L"]), code=IA),
    ops_case("mv-size-mismatch", Op("mv", ["F", "V"]),
             torch=lambda t: t.mv(t.zeros(2, 3), t.zeros(4))),
    ops_case("bmm-2d", Op("bmm", ["F", "F"]), torch=lambda t: t.bmm(t.zeros(2, 3), t.zeros(2, 3))),
    ops_case("outer-2d", Op("outer", ["F", "V"]),
             torch=lambda t: t.outer(t.zeros(2, 3), t.zeros(4))),
    ops_case("addmm-shape-mismatch", Op("addmm", ["V", "F", "F"]),
             torch=lambda t: t.addmm(t.zeros(4), t.zeros(2, 3), t.zeros(2, 3))),
    ops_case("copy_-shape-mismatch", Op("clone", ["F"]), Op("copy_", [Ref(0), "V"]),
             torch=lambda t: t.zeros(2, 3).copy_(t.zeros(4))),
    ops_case("masked_select-shape-mismatch", Op("masked_select", ["L", "MASK"]),
             torch=lambda t: t.masked_select(t.zeros(3), t.ones(4, dtype=t.bool))),
    ops_case("where-shape-mismatch", Op("where", ["MASK", "F", "F"]),
             torch=lambda t: t.where(t.ones(4, dtype=t.bool), t.zeros(2, 3), t.zeros(2, 3))),
)

# ---- strides and offsets ------------------------------------------------------------------------

add(
    ops_case("as_strided-out-of-storage",
             Op("as_strided", ["V"], {"size": INTS(5), "stride": INTS(1)}),
             torch=lambda t: t.as_strided(t.zeros(4), (5,), (1,))),
    ops_case("as_strided-negative-stride",
             Op("as_strided", ["V"], {"size": INTS(2), "stride": INTS(-1)}),
             torch=lambda t: t.as_strided(t.zeros(4), (2,), (-1,))),
    ops_case("as_strided-negative-offset",
             Op("as_strided", ["V"], {"size": INTS(1), "stride": INTS(1),
                                      "storage_offset": I(-1)}),
             torch=lambda t: t.as_strided(t.zeros(4), (1,), (1,), -1)),
    ops_case("as_strided-int64-min-offset",
             Op("as_strided", ["V"], {"size": INTS(1), "stride": INTS(1),
                                      "storage_offset": I(INT64_MIN)}), code=IA),
    ops_case("as_strided-offset-past-end",
             Op("as_strided", ["V"], {"size": INTS(1), "stride": INTS(1),
                                      "storage_offset": I(4)}),
             torch=lambda t: t.as_strided(t.zeros(4), (1,), (1,), 4)),
    ops_case("as_strided-huge-offset",
             Op("as_strided", ["V"], {"size": INTS(1), "stride": INTS(1),
                                      "storage_offset": I(2**62)}), code=IA),
    ops_case("as_strided-int64-max-offset",
             Op("as_strided", ["V"], {"size": INTS(2), "stride": INTS(1),
                                      "storage_offset": I(INT64_MAX)}), code=IA),
    ops_case("as_strided-huge-stride",
             Op("as_strided", ["V"], {"size": INTS(2), "stride": INTS(2**62)}),
             torch=lambda t: t.as_strided(t.zeros(4), (2,), (2**62,))),
    ops_case("as_strided-int64-max-stride",
             Op("as_strided", ["V"], {"size": INTS(2), "stride": INTS(INT64_MAX)}), code=IA),
    ops_case("as_strided-int64-min-stride",
             Op("as_strided", ["V"], {"size": INTS(2), "stride": INTS(INT64_MIN)}), code=IA),
    ops_case("as_strided-negative-size",
             Op("as_strided", ["V"], {"size": INTS(-1), "stride": INTS(1)}), code=IA),
    ops_case("as_strided-rank-mismatch",
             Op("as_strided", ["V"], {"size": INTS(2, 2), "stride": INTS(1)}),
             torch=lambda t: t.as_strided(t.zeros(4), (2, 2), (1,))),
    ops_case("as_strided-numel-overflow-zero-strides",
             Op("as_strided", ["V"], {"size": INTS(2**62, 2**62), "stride": INTS(0, 0)}),
             code=IA),
    ops_case("as_strided-offset-plus-extent-overflow",
             Op("as_strided", ["V"], {"size": INTS(2, 2), "stride": INTS(2**62, 2**62),
                                      "storage_offset": I(2**62)}), code=IA),
    ops_case("empty_strided-negative-stride",
             Op("empty_strided", attrs={"size": INTS(2), "stride": INTS(-1)}),
             torch=lambda t: t.empty_strided((2,), (-1,))),
    ops_case("empty_strided-stride-overflow",
             Op("empty_strided", attrs={"size": INTS(2, 2), "stride": INTS(2**62, 1)}),
             torch=lambda t: t.empty_strided((2, 2), (2**62, 1))),
    ops_case("empty_strided-rank-mismatch",
             Op("empty_strided", attrs={"size": INTS(2, 2), "stride": INTS(1)}),
             torch=lambda t: t.empty_strided((2, 2), (1,))),
    ops_case("empty_strided-negative-size",
             Op("empty_strided", attrs={"size": INTS(-2), "stride": INTS(1)}), code=IA),
    ops_case("empty_strided-over-budget",
             Op("empty_strided", attrs={"size": INTS(2**40), "stride": INTS(1)}), code=RE),
    ops_case("narrow-length-past-end", Op("narrow", ["F"], {"dim": I(0), "start": I(1),
                                                            "length": I(5)}),
             torch=lambda t: t.zeros(2, 3).narrow(0, 1, 5)),
    ops_case("narrow-negative-length", Op("narrow", ["F"], {"dim": I(0), "start": I(0),
                                                            "length": I(-1)}),
             torch=lambda t: t.zeros(2, 3).narrow(0, 0, -1)),
    ops_case("narrow-start-out-of-range", Op("narrow", ["F"], {"dim": I(1), "start": I(-100),
                                                               "length": I(1)}),
             torch=lambda t: t.zeros(2, 3).narrow(1, -100, 1)),
    ops_case("narrow-int64-max-start", Op("narrow", ["F"], {"dim": I(1), "start": I(INT64_MAX),
                                                            "length": I(1)}),
             code=(OOR, IA)),
    ops_case("narrow-int64-min-start", Op("narrow", ["F"], {"dim": I(1), "start": I(INT64_MIN),
                                                            "length": I(1)}),
             code=(OOR, IA)),
    ops_case("narrow-start-plus-length-overflow",
             Op("narrow", ["F"], {"dim": I(1), "start": I(2), "length": I(INT64_MAX)}),
             code=(OOR, IA)),
    ops_case("unfold-size-past-end", Op("unfold", ["V"], {"dimension": I(0), "size": I(5),
                                                          "step": I(1)}),
             torch=lambda t: t.zeros(4).unfold(0, 5, 1)),
    ops_case("unfold-huge-size", Op("unfold", ["V"], {"dimension": I(0), "size": I(2**62),
                                                      "step": I(1)}),
             torch=lambda t: t.zeros(4).unfold(0, 2**62, 1)),
    ops_case("unfold-zero-step", Op("unfold", ["V"], {"dimension": I(0), "size": I(2),
                                                      "step": I(0)}),
             torch=lambda t: t.zeros(4).unfold(0, 2, 0)),
    ops_case("unfold-negative-step", Op("unfold", ["V"], {"dimension": I(0), "size": I(2),
                                                          "step": I(-1)}),
             torch=lambda t: t.zeros(4).unfold(0, 2, -1)),
    ops_case("diagonal-same-dims", Op("diagonal", ["F"], {"dim1": I(0), "dim2": I(0)}),
             torch=lambda t: t.zeros(2, 3).diagonal(0, 0, 0)),
    ops_case("diagonal-dim-out-of-range", Op("diagonal", ["F"], {"dim1": I(0), "dim2": I(5)}),
             torch=lambda t: t.zeros(2, 3).diagonal(0, 0, 5)),
    ops_case("slice-zero-step", Op("slice", ["V"], {"step": I(0)}), code=IA),
    ops_case("slice-negative-step", Op("slice", ["V"], {"step": I(-1)}), code=IA),
    ops_case("slice-dim-out-of-range", Op("slice", ["V"], {"dim": I(3)}),
             torch=lambda t: t.zeros(4).unbind(3)),
)

# ---- ranks --------------------------------------------------------------------------------------

add(
    ops_case("zeros-rank-65", Op("zeros", attrs={"size": INTS(*[1] * 65)}), code=IA),
    ops_case("zeros-rank-100", Op("zeros", attrs={"size": INTS(*[1] * 100)}), code=IA),
    ops_case("zeros-rank-10000", Op("zeros", attrs={"size": INTS(*[1] * 10000)}), code=IA),
    ops_case("empty_strided-rank-65",
             Op("empty_strided", attrs={"size": INTS(*[1] * 65), "stride": INTS(*[1] * 65)}),
             code=IA),
    ops_case("view-rank-65", Op("view", ["V"], {"shape": INTS(*([1] * 64 + [4]))}), code=IA),
    ops_case("reshape-rank-65", Op("reshape", ["V"], {"shape": INTS(*([1] * 64 + [4]))}),
             code=IA),
    ops_case("expand-rank-65", Op("expand", ["V"], {"size": INTS(*([1] * 64 + [4]))}), code=IA),
    ops_case("as_strided-rank-65",
             Op("as_strided", ["V"], {"size": INTS(*[1] * 65), "stride": INTS(*[1] * 65)}),
             code=IA),
    ops_case("unsqueeze-rank-64", Op("unsqueeze", ["R64"], {"dim": I(0)}), code=IA),
    ops_case("unflatten-rank-65", Op("unflatten", ["R64"], {"dim": I(0), "sizes": INTS(1, 1)}),
             code=IA),
    ops_case("index-70-none-items", Op("index", ["V"], {"indices": IDX(*[NI] * 70)}), code=IA),
    ops_case("index-64-none-items-on-1d", Op("index", ["V"], {"indices": IDX(*[NI] * 64)}),
             code=IA),
    ops_case("index-1000-none-items", Op("index", ["V"], {"indices": IDX(*[NI] * 1000)}),
             code=IA),
    ops_case("index-none-items-on-rank-64", Op("index", ["R64"], {"indices": IDX(NI, EL, NI)}),
             code=IA),
    ops_case("index-many-none-and-ellipsis",
             Op("index", ["F"], {"indices": IDX(*([NI] * 40 + [EL] + [NI] * 40))}), code=IA),
    ops_case("permute-65-dims", Op("permute", ["R64"], {"dims": INTS(*range(65))}), code=IA),
    ops_case("permute-wrong-length", Op("permute", ["F"], {"dims": INTS(0)}),
             torch=lambda t: t.zeros(2, 3).permute(0)),
    ops_case("flip-65-dims", Op("flip", ["R64"], {"dims": INTS(*range(65))}),
             torch=lambda t: t.ones([1] * 64).flip(list(range(65)))),
    ops_case("sum-65-dims", Op("sum", ["R64"], {"dim": INTS(*range(65))}),
             torch=lambda t: t.ones([1] * 64).sum(list(range(65)))),
    ops_case("repeat-rank-65", Op("repeat", ["V"], {"repeats": INTS(*[1] * 65)}), code=IA),
    ops_case("movedim-65-dims", Op("movedim", ["R64"], {"source": INTS(*range(65)),
                                                        "destination": INTS(*range(65))}),
             code=(IA, OOR)),
)

# ---- dtypes (invalid enum values) ---------------------------------------------------------------

for value in (0, 11, 77, -1, 2**31 - 1, -2**31):
    add(ops_case(f"zeros-dtype-enum-{value}",
                 Op("zeros", attrs={"size": INTS(2), "dtype": DT(value)}),
                 torch=lambda t: t.zeros(2, dtype=77)))
add(
    ops_case("to-dtype-enum-99", Op("to", ["V"], {"dtype": DT(99)}),
             torch=lambda t: t.zeros(2).to(dtype=99)),
    ops_case("to-dtype-unspecified", Op("to", ["V"], {"dtype": DT(0)}),
             torch=lambda t: t.zeros(2).to(dtype=0)),
    ops_case("sum-dtype-enum-50", Op("sum", ["V"], {"dtype": DT(50)}),
             torch=lambda t: t.zeros(2).sum(dtype=50)),
    ops_case("full-dtype-enum-12", Op("full", attrs={"size": INTS(2), "fill_value": F(1.0),
                                                     "dtype": DT(12)}),
             torch=lambda t: t.full((2,), 1.0, dtype=12)),
    ops_case("arange-dtype-enum-negative", Op("arange", attrs={"end": I(3), "dtype": DT(-5)}),
             torch=lambda t: t.arange(3, dtype=-5)),
    ops_case("cumsum-dtype-unspecified", Op("cumsum", ["V"], {"dim": I(0), "dtype": DT(0)}),
             torch=lambda t: t.zeros(2).cumsum(0, dtype=0)),
    ops_case("rand-dtype-enum-1000", Op("rand", attrs={"size": INTS(2), "dtype": DT(1000)}),
             torch=lambda t: t.rand(2, dtype=1000)),
    ops_case("rand-int64", Op("rand", attrs={"size": INTS(2), "dtype": DT(I64)}),
             torch=lambda t: t.rand(2, dtype=t.int64)),
    ops_case("randn-bool", Op("randn", attrs={"size": INTS(2), "dtype": DT(BOOL)}),
             torch=lambda t: t.randn(2, dtype=t.bool)),
    ops_case("arange-bool", Op("arange", attrs={"end": I(3), "dtype": DT(BOOL)}),
             torch=lambda t: t.arange(3, dtype=t.bool)),
    ops_case("softmax-int-dtype", Op("softmax", ["V"], {"dim": I(0), "dtype": DT(I64)}),
             torch=lambda t: t.zeros(4).softmax(0, dtype=t.int64)),
)

# ---- tensor ids ---------------------------------------------------------------------------------

add(
    ops_case("input-unknown-id", Op("neg", [987654321]), code=NF),
    ops_case("input-id-0", Op("neg", [0]), code=NF),
    ops_case("input-id-uint64-max", Op("neg", [UINT64_MAX]), code=NF),
    ops_case("second-input-unknown", Op("add", ["V", 987654321]), code=NF),
    ops_case("output-id-0", Op("zeros", attrs={"size": INTS(2)}, out=[0]), code=IA),
    ops_case("output-id-reused-seed", Op("zeros", attrs={"size": INTS(2)}, out=["V"]), code=AE,
             extra=unchanged("V", "<4f", [0, 1, 2, 3])),
    ops_case("output-id-reused-in-batch", Op("zeros", attrs={"size": INTS(2)}, out=[777000]),
             Op("zeros", attrs={"size": INTS(3)}, out=[777000]), code=AE),
    ops_case("view-output-id-reused", Op("t", ["F"], out=["F"]), code=AE),
    ops_case("in-place-output-id-reused", scratch(), Op("neg_", [Ref(0)], out=["V"]), code=AE),
    ops_case("no-output-id", Op("zeros", attrs={"size": INTS(2)}, out=[]), code=IA),
    ops_case("two-output-ids", Op("zeros", attrs={"size": INTS(2)}, out=[NEW, NEW]), code=IA),
    ops_case("duplicate-outputs-split", Op("split", ["V"], {"split_size": I(2)},
                                           out=[778000, 778000]), code=IA),
    ops_case("duplicate-outputs-unbind", Op("unbind", ["F"], out=[778100, 778100]), code=IA),
    ops_case("split-too-few-ids", Op("split", ["F6"], {"split_size": I(2)}, out=[NEW]), code=IA),
    ops_case("split-too-many-ids", Op("split", ["V"], {"split_size": I(2)},
                                      out=[NEW, NEW, NEW, NEW]), code=IA),
    ops_case("multi-output-without-ids", Op("chunk", ["V"], {"chunks": I(2)}, out=[]), code=IA),
    ops_case("output-id-start-overflow", Op("unbind", ["F"], out=[], start=UINT64_MAX - 1),
             code=IA),
    ops_case("output-id-start-collides", Op("unbind", ["F"], out=[], start="F"), code=AE),
    ops_case("returns-nothing-with-output-id", Op("_sleep", attrs={"ms": I(0)}), code=IA),
    ops_case("returns-nothing-with-output-start",
             Op("_sleep", attrs={"ms": I(0)}, out=[], start=NEWBLOCK), code=IA),
)


def _release_then_use(h):
    tmp = h.must_run([Op("clone", ["V"])])[0]
    h.call("Release", pb.ReleaseRequest(session_id=h.sid, ids=[tmp]), pb.ReleaseResponse)
    return h.run_ops([Op("neg", [tmp])])


add(Case("input-released-earlier", _release_then_use, NF, ("neg",), op_index=0))


def _describe(ids, session=None):
    return lambda h: h.call("Describe", pb.DescribeRequest(
        session_id=h.sid if session is None else session, ids=ids), pb.DescribeResponse)


add(
    rpc_case("describe-unknown-id", _describe([987654321]), NF, "Describe"),
    rpc_case("describe-id-0", _describe([0]), NF, "Describe"),
    rpc_case("describe-uint64-max", _describe([UINT64_MAX]), NF, "Describe"),
    rpc_case("describe-known-then-unknown", lambda h: _describe([h.SEEDS["V"], 55555555])(h),
             NF, "Describe"),
)

# ---- attributes of every AttrType ---------------------------------------------------------------

WRONG_VALUES = {
    "i": I(1), "ints": INTS(1, 2), "f": F(1.5), "b": B(True), "dtype": DT(F32),
    "device": DEV("cpu"), "index": IDX(II(0)),
}
# For each AttrType: a call taking it (op, inputs, other attributes), the attribute, a valid
# value, the value forms it accepts, and torch's call with the argument wrongly typed (a float).
ATTR_TYPES = {
    "int": ("transpose", ["F"], {"dim1": I(0)}, "dim0", I(1), {"i"},
            lambda t: t.transpose(t.zeros(2, 3), 1.5, 0)),
    "int_list": ("permute", ["F"], {}, "dims", INTS(1, 0), {"ints"},
                 lambda t: t.zeros(2, 3).permute(1.5, 0)),
    "int_or_int_list": ("sum", ["F"], {}, "dim", I(0), {"i", "ints"},
                        lambda t: t.zeros(2, 3).sum(dim=1.5)),
    "bool": ("gelu", ["V"], {}, "approximate", B(True), {"b"},
             lambda t: t.nn.functional.gelu(t.zeros(2), approximate=1.5)),
    "scalar": ("fill_", [Ref(0)], {}, "value", F(1.0), {"i", "f", "b"},
               lambda t: t.zeros(2).fill_([1, 2])),
    "dtype": ("zeros", [], {"size": INTS(2)}, "dtype", DT(F64), {"dtype"},
              lambda t: t.zeros(2, dtype=1.5)),
    "device": ("zeros", [], {"size": INTS(2)}, "device", DEV("cpu"), {"device"},
               lambda t: t.zeros(2, device=1.5)),
    "index": ("index", ["F"], {}, "indices", IDX(II(0)), {"index"}, None),
}


def attr_call(type_name, **attrs):
    """The AttrType's op call with `attrs` added (in-place ones on a scratch copy)."""
    op, inputs, base, *_ = ATTR_TYPES[type_name]
    call = Op(op, inputs, {**base, **attrs})
    return [scratch(), call] if Ref(0) in inputs else [call]


for type_name, (_, _, _, attr, valid, accepted, oracle) in ATTR_TYPES.items():
    for form, value in WRONG_VALUES.items():
        if form not in accepted:
            add(ops_case(f"attr-{type_name}-given-{form}", *attr_call(type_name, **{attr: value}),
                         code=IA, kind="TypeError"))
    if oracle is not None:  # torch's class for a wrongly typed argument, computed live
        wrong = WRONG_VALUES["ints" if "f" in accepted else "f"]
        add(ops_case(f"attr-{type_name}-wrong-type-vs-torch",
                     *attr_call(type_name, **{attr: wrong}), torch=oracle))
    add(ops_case(f"attr-{type_name}-empty-value",
                 *attr_call(type_name, **{attr: pb.AttrValue()}), code=IA))
    add(ops_case(f"attr-{type_name}-op-with-unknown-attr-name",
                 *attr_call(type_name, **{attr: valid, "colour": I(1)}), code=IA,
                 kind="TypeError"))
    add(ops_case(f"attr-{type_name}-op-with-empty-attr-name",
                 *attr_call(type_name, **{attr: valid, "": I(1)}), code=IA, kind="TypeError"))

add(
    # int: out of range, overflow on wrapping, missing, None.
    ops_case("int-dim-out-of-range", Op("transpose", ["F"], {"dim0": I(0), "dim1": I(5)}),
             torch=lambda t: t.zeros(2, 3).transpose(0, 5)),
    ops_case("int-dim-int64-max", Op("transpose", ["F"], {"dim0": I(0), "dim1": I(INT64_MAX)}),
             torch=lambda t: t.zeros(2, 3).transpose(0, 2**63 - 1)),
    ops_case("int-dim-int64-min", Op("transpose", ["F"], {"dim0": I(INT64_MIN), "dim1": I(0)}),
             torch=lambda t: t.zeros(2, 3).transpose(-2**63, 0)),
    ops_case("int-dim-missing", Op("transpose", ["F"], {"dim0": I(0)}),
             torch=lambda t: t.zeros(2, 3).transpose(0)),
    ops_case("int-dim-none", Op("transpose", ["F"], {"dim0": NONE, "dim1": I(0)}),
             torch=lambda t: t.zeros(2, 3).transpose(None, 0)),
    ops_case("int-unknown-keyword", Op("transpose", ["F"], {"dim0": I(0), "dimX": I(1)}),
             torch=lambda t: t.transpose(t.zeros(2, 3), dim0=0, dimX=1)),
    ops_case("select-index-out-of-range", Op("select", ["F"], {"dim": I(0), "index": I(5)}),
             torch=lambda t: t.zeros(2, 3).select(0, 5)),
    ops_case("select-index-int64-max", Op("select", ["F"], {"dim": I(0), "index": I(INT64_MAX)}),
             torch=lambda t: t.zeros(2, 3).select(0, 2**63 - 1)),
    ops_case("select-index-int64-min", Op("select", ["F"], {"dim": I(0), "index": I(INT64_MIN)}),
             torch=lambda t: t.zeros(2, 3).select(0, -2**63)),
    ops_case("select-0d", Op("select", ["S0"], {"dim": I(0), "index": I(0)}),
             torch=lambda t: t.tensor(1.).select(0, 0)),
    ops_case("unsqueeze-dim-out-of-range", Op("unsqueeze", ["V"], {"dim": I(3)}),
             torch=lambda t: t.zeros(4).unsqueeze(3)),
    ops_case("unsqueeze-dim-int64-min", Op("unsqueeze", ["V"], {"dim": I(INT64_MIN)}),
             torch=lambda t: t.zeros(4).unsqueeze(-2**63)),
    ops_case("chunk-zero", Op("chunk", ["V"], {"chunks": I(0)}, out=[], start=NEWBLOCK),
             torch=lambda t: t.zeros(4).chunk(0)),
    ops_case("chunk-negative", Op("chunk", ["V"], {"chunks": I(-1)}, out=[], start=NEWBLOCK),
             torch=lambda t: t.zeros(4).chunk(-1)),
    ops_case("tensor_split-zero-sections",
             Op("tensor_split", ["V"], {"sections": I(0)}, out=[], start=NEWBLOCK),
             torch=lambda t: t.zeros(4).tensor_split(0)),
    ops_case("unbind-dim-out-of-range", Op("unbind", ["F"], {"dim": I(2)}, out=[],
                                           start=NEWBLOCK),
             torch=lambda t: t.zeros(2, 3).unbind(2)),
    ops_case("sleep-negative-ms", Op("_sleep", attrs={"ms": I(-1)}, out=[]), code=IA),
    ops_case("sleep-too-long", Op("_sleep", attrs={"ms": I(10**9)}, out=[]), code=IA),
    ops_case("sleep-int64-min", Op("_sleep", attrs={"ms": I(INT64_MIN)}, out=[]), code=IA),
    ops_case("randint-low-not-below-high", Op("randint", attrs={"size": INTS(2), "low": I(5),
                                                                "high": I(5)}),
             torch=lambda t: t.randint(5, 5, (2,))),
    ops_case("randint-missing-high", Op("randint", attrs={"size": INTS(2)}),
             torch=lambda t: t.randint(size=(2,))),
    ops_case("div-rounding-mode-out-of-range", Op("div", ["V", "V"], {"rounding_mode": I(3)}),
             torch=lambda t: t.div(t.zeros(2), t.ones(2), rounding_mode="bad")),
    ops_case("round-decimals-on-int", Op("round", ["L"], {"decimals": I(1)}),
             torch=lambda t: t.arange(3).round(decimals=1)),
    ops_case("cumsum-dim-out-of-range", Op("cumsum", ["F"], {"dim": I(-3)}),
             torch=lambda t: t.zeros(2, 3).cumsum(-3)),
    ops_case("softmax-dim-out-of-range", Op("softmax", ["F"], {"dim": I(5)}),
             torch=lambda t: t.zeros(2, 3).softmax(5)),
    ops_case("max.dim-empty", Op("max.dim", ["E"], {"dim": I(0)}, out=[], start=NEWBLOCK),
             torch=lambda t: t.zeros(0).max(0)),
    ops_case("max-empty", Op("max", ["E"]), torch=lambda t: t.zeros(0).max()),
    ops_case("argmax-empty", Op("argmax", ["E"]), torch=lambda t: t.zeros(0).argmax()),
    ops_case("index_select-dim-out-of-range", Op("index_select", ["V", "IDX"], {"dim": I(1)}),
             torch=lambda t: t.index_select(t.zeros(4), 1, t.tensor([0]))),
    ops_case("gather-dim-out-of-range", Op("gather", ["V", "IDX"], {"dim": I(4)}),
             torch=lambda t: t.gather(t.zeros(4), 4, t.tensor([0]))),
    # int_list: duplicates, out of range.
    ops_case("permute-duplicate-dims", Op("permute", ["F"], {"dims": INTS(0, 0)}),
             torch=lambda t: t.zeros(2, 3).permute(0, 0)),
    ops_case("permute-dim-out-of-range", Op("permute", ["F"], {"dims": INTS(0, 5)}),
             torch=lambda t: t.zeros(2, 3).permute(0, 5)),
    ops_case("permute-int64-min", Op("permute", ["F"], {"dims": INTS(0, INT64_MIN)}),
             torch=lambda t: t.zeros(2, 3).permute(0, -2**63)),
    ops_case("flip-duplicate-dims", Op("flip", ["F"], {"dims": INTS(0, 0)}),
             torch=lambda t: t.zeros(2, 3).flip([0, 0])),
    ops_case("flip-dim-out-of-range", Op("flip", ["F"], {"dims": INTS(2)}),
             torch=lambda t: t.zeros(2, 3).flip([2])),
    ops_case("view-shape-missing", Op("view", ["F"]), code=IA),
    ops_case("view-shape-none", Op("view", ["F"], {"shape": NONE}), code=IA),
    ops_case("zeros-size-missing", Op("zeros"), torch=lambda t: t.zeros()),
    ops_case("zeros-size-float", Op("zeros", attrs={"size": F(2.5)}),
             torch=lambda t: t.zeros(2.5)),
    ops_case("full-size-none", Op("full", attrs={"size": NONE, "fill_value": F(1.0)}),
             torch=lambda t: t.full(None, 1.0)),
    ops_case("split_with_sizes-bad-sum", Op("split_with_sizes", ["V"],
                                            {"split_sizes": INTS(1, 1)}, out=[], start=NEWBLOCK),
             torch=lambda t: t.zeros(4).split_with_sizes([1, 1])),
    ops_case("split_with_sizes-negative", Op("split_with_sizes", ["V"],
                                             {"split_sizes": INTS(5, -1)}, out=[],
                                             start=NEWBLOCK),
             torch=lambda t: t.zeros(4).split_with_sizes([5, -1])),
    # int_or_int_list.
    ops_case("squeeze-dim-out-of-range", Op("squeeze", ["V"], {"dim": I(3)}),
             torch=lambda t: t.zeros(4).squeeze(3)),
    ops_case("sum-dim-out-of-range", Op("sum", ["F"], {"dim": I(5)}),
             torch=lambda t: t.zeros(2, 3).sum(5)),
    ops_case("sum-dim-list-out-of-range", Op("sum", ["F"], {"dim": INTS(0, 5)}),
             torch=lambda t: t.zeros(2, 3).sum((0, 5))),
    ops_case("sum-dim-list-duplicate", Op("sum", ["F"], {"dim": INTS(0, 0)}),
             torch=lambda t: t.zeros(2, 3).sum((0, 0))),
    ops_case("sum-dim-int64-min", Op("sum", ["F"], {"dim": I(INT64_MIN)}),
             torch=lambda t: t.zeros(2, 3).sum(-2**63)),
    ops_case("mean-int-input", Op("mean", ["L"]), torch=lambda t: t.arange(3).mean()),
    ops_case("logsumexp-dim-missing", Op("logsumexp", ["F"]),
             torch=lambda t: t.logsumexp(t.zeros(2, 3))),
    ops_case("movedim-length-mismatch", Op("movedim", ["F"], {"source": INTS(0, 1),
                                                              "destination": INTS(0)}),
             torch=lambda t: t.zeros(2, 3).movedim((0, 1), (0,))),
    ops_case("movedim-duplicate", Op("movedim", ["F"], {"source": INTS(0, 0),
                                                        "destination": INTS(0, 1)}),
             torch=lambda t: t.zeros(2, 3).movedim((0, 0), (0, 1))),
    ops_case("split-zero-size", Op("split", ["V"], {"split_size": I(0)}, out=[], start=NEWBLOCK),
             torch=lambda t: t.zeros(4).split(0)),
    ops_case("split-negative-size", Op("split", ["V"], {"split_size": I(-1)}, out=[],
                                       start=NEWBLOCK),
             torch=lambda t: t.zeros(4).split(-1)),
    ops_case("split-sizes-bad-sum", Op("split", ["V"], {"split_size": INTS(1, 2)}, out=[],
                                       start=NEWBLOCK),
             torch=lambda t: t.zeros(4).split([1, 2])),
    # bool.
    ops_case("keepdim-given-int", Op("sum", ["F"], {"dim": I(0), "keepdim": I(1)}), code=IA,
             kind="TypeError"),
    ops_case("accumulate-given-float", scratch(), Op("put_", [Ref(0), "IDX", "IDX"],
                                                     {"accumulate": F(1.0)}),
             code=IA, kind="TypeError"),
    # scalar.
    ops_case("add-alpha-float-on-ints", Op("add", ["L", "L"], {"alpha": F(1.5)}),
             torch=lambda t: t.add(t.arange(3), t.arange(3), alpha=1.5)),
    ops_case("add-alpha-bool-on-floats", Op("add", ["V", "V"], {"alpha": B(True)}),
             torch=lambda t: t.add(t.zeros(2), t.zeros(2), alpha=True)),
    ops_case("add-alpha-int-list", Op("add", ["V", "V"], {"alpha": INTS(1)}),
             torch=lambda t: t.add(t.zeros(2), t.zeros(2), alpha=[1])),
    ops_case("full-fill-value-missing", Op("full", attrs={"size": INTS(2)}),
             torch=lambda t: t.full((2,))),
    ops_case("full-fill-value-list", Op("full", attrs={"size": INTS(2), "fill_value": INTS(1)}),
             torch=lambda t: t.full((2,), [1])),
    ops_case("arange-end-missing", Op("arange"), torch=lambda t: t.arange()),
    ops_case("arange-zero-step", Op("arange", attrs={"end": I(5), "step": I(0)}),
             torch=lambda t: t.arange(0, 5, 0)),
    ops_case("arange-wrong-sign", Op("arange", attrs={"end": I(5), "step": I(-1)}),
             torch=lambda t: t.arange(0, 5, -1)),
    ops_case("arange-infinite-end", Op("arange", attrs={"end": F(math.inf)}),
             torch=lambda t: t.arange(0, math.inf)),
    ops_case("arange-nan-end", Op("arange", attrs={"end": F(math.nan)}),
             torch=lambda t: t.arange(0, math.nan)),
    ops_case("arange-nan-step", Op("arange", attrs={"end": F(5.0), "step": F(math.nan)}),
             code=IA),
    ops_case("arange-over-budget", Op("arange", attrs={"end": F(1e18)}), code=RE),
    ops_case("arange-int64-span-overflow", Op("arange", attrs={"start": I(INT64_MIN),
                                                               "end": I(INT64_MAX)}),
             code=(IA, RE)),
    ops_case("fill_-value-too-big-for-int", Op("clone", ["L"]),
             Op("fill_", [Ref(0)], {"value": F(1e300)}), code=IA),
    ops_case("leaky_relu-on-int", Op("leaky_relu", ["L"]),
             torch=lambda t: t.nn.functional.leaky_relu(t.arange(3))),
    ops_case("leaky_relu-slope-list", Op("leaky_relu", ["V"], {"negative_slope": INTS(1)}),
             code=IA, kind="TypeError"),
    ops_case("bernoulli_-p-above-1", scratch(), Op("bernoulli_", [Ref(0)], {"p": F(2.0)}),
             torch=lambda t: t.zeros(4).bernoulli_(2.0)),
    ops_case("uniform_-from-above-to", scratch(),
             Op("uniform_", [Ref(0)], {"from": F(2.0), "to": F(1.0)}),
             torch=lambda t: t.zeros(4).uniform_(2, 1)),
    ops_case("normal_-negative-std", scratch(), Op("normal_", [Ref(0)], {"std": F(-1.0)}),
             torch=lambda t: t.zeros(4).normal_(0, -1)),
    ops_case("var-correction-list", Op("var", ["F"], {"correction": INTS(1)}), code=IA,
             kind="TypeError"),
    # device.
    ops_case("device-unknown-type", Op("zeros", attrs={"size": INTS(2), "device": DEV("tpu:3")}),
             torch=lambda t: t.zeros(2, device="tpu:3")),
    ops_case("device-empty-string", Op("zeros", attrs={"size": INTS(2), "device": DEV("")}),
             torch=lambda t: t.zeros(2, device="")),
    ops_case("device-negative-index", Op("zeros", attrs={"size": INTS(2),
                                                         "device": DEV("cuda:-1")}),
             torch=lambda t: t.zeros(2, device="cuda:-1")),
    ops_case("device-garbage", Op("zeros", attrs={"size": INTS(2), "device": DEV("x" * 10000)}),
             code=IA),
    ops_case("device-not-on-this-server", Op("zeros", attrs={"size": INTS(2),
                                                             "device": DEV("cuda:99")}),
             code=FP),
    ops_case("to-device-garbage", Op("to", ["V"], {"device": DEV("gpu")}),
             torch=lambda t: t.zeros(2).to(device="gpu")),
    ops_case("sleep-device-garbage", Op("_sleep", attrs={"ms": I(0), "device": DEV("cpu:x")},
                                        out=[]), code=IA),
    # index.
    ops_case("index-too-many-indices", Op("index", ["F"], {"indices": IDX(II(0), II(0), II(0))}),
             torch=lambda t: t.zeros(2, 3)[0, 0, 0]),
    ops_case("index-int-out-of-range", Op("index", ["F"], {"indices": IDX(II(5))}),
             torch=lambda t: t.zeros(2, 3)[5]),
    ops_case("index-int64-min", Op("index", ["F"], {"indices": IDX(II(INT64_MIN))}),
             torch=lambda t: t.zeros(2, 3)[-2**63]),
    ops_case("index-int64-max", Op("index", ["F"], {"indices": IDX(SL(), II(INT64_MAX))}),
             torch=lambda t: t.zeros(2, 3)[:, 2**63 - 1]),
    ops_case("index-slice-step-0", Op("index", ["F"], {"indices": IDX(SL(step=0))}),
             torch=lambda t: t.zeros(2, 3)[::0]),
    ops_case("index-slice-negative-step", Op("index", ["F"], {"indices": IDX(SL(step=-1))}),
             torch=lambda t: t.zeros(2, 3)[::-1]),
    ops_case("index-slice-int64-min-step", Op("index", ["F"],
                                               {"indices": IDX(SL(step=INT64_MIN))}),
             torch=lambda t: t.zeros(2, 3)[::-2**63]),
    ops_case("index-empty-item", Op("index", ["F"], {"indices": IDX(pb.IndexItem())}),
             code=IA, kind="TypeError"),
    ops_case("index-int-on-0d", Op("index", ["S0"], {"indices": IDX(II(0))}),
             torch=lambda t: t.tensor(1.)[0]),
    ops_case("index-missing", Op("index", ["F"]), code=IA),
)

# ---- None for tensor inputs ---------------------------------------------------------------------

add(
    ops_case("none-add-other", Op("add", ["V"], {"other": NONE}),
             torch=lambda t: t.add(t.zeros(2), None)),
    ops_case("none-add-self", Op("add", ["V"], {"self": NONE}),
             torch=lambda t: t.add(None, t.zeros(2))),
    ops_case("none-add-both", Op("add", [], {"self": NONE, "other": NONE}),
             torch=lambda t: t.add(None, None)),
    ops_case("none-add_-other", scratch(), Op("add_", [Ref(0)], {"other": NONE}),
             torch=lambda t: t.zeros(2).add_(None)),
    ops_case("none-mul-other", Op("mul", ["V"], {"other": NONE}),
             torch=lambda t: t.mul(t.zeros(2), None)),
    ops_case("none-mul_-other", scratch(), Op("mul_", [Ref(0)], {"other": NONE}),
             torch=lambda t: t.zeros(2).mul_(None)),
    ops_case("none-pow-exponent", Op("pow", ["V"], {"other": NONE}),
             torch=lambda t: t.pow(t.zeros(2), None)),
    ops_case("none-pow-base", Op("pow", ["V"], {"self": NONE}),
             torch=lambda t: t.pow(None, t.zeros(2))),
    ops_case("none-pow_-exponent", scratch(), Op("pow_", [Ref(0)], {"other": NONE}),
             torch=lambda t: t.zeros(2).pow_(None)),
    ops_case("none-where-other", Op("where", ["MASK", "V"], {"other": NONE}),
             torch=lambda t: t.where(t.ones(2, dtype=t.bool), t.zeros(2), None)),
    ops_case("none-where-self", Op("where", ["MASK", "V"], {"self": NONE}),
             torch=lambda t: t.where(t.ones(2, dtype=t.bool), None, t.zeros(2))),
    ops_case("none-where-both", Op("where", ["MASK"], {"self": NONE, "other": NONE}),
             torch=lambda t: t.where(t.ones(2, dtype=t.bool), None, None)),
    ops_case("none-where-condition", Op("where", ["V", "V"], {"condition": NONE}),
             torch=lambda t: t.where(None, t.zeros(2), t.zeros(2))),
    ops_case("none-clamp_min-min", Op("clamp_min", ["V"], {"min": NONE}),
             torch=lambda t: t.clamp_min(t.zeros(2), None)),
    ops_case("none-clamp_min_-min", scratch(), Op("clamp_min_", [Ref(0)], {"min": NONE}),
             torch=lambda t: t.zeros(2).clamp_min_(None)),
    ops_case("none-clamp_max-max", Op("clamp_max", ["V"], {"max": NONE}),
             torch=lambda t: t.clamp_max(t.zeros(2), None)),
    ops_case("none-clamp-both", Op("clamp", ["V"], {"min": NONE, "max": NONE}),
             torch=lambda t: t.clamp(t.zeros(2), None, None)),
    ops_case("none-clamp_-both", scratch(), Op("clamp_", [Ref(0)], {"min": NONE, "max": NONE}),
             torch=lambda t: t.zeros(2).clamp_(None, None)),
    ops_case("none-clip-both", Op("clip", ["V"], {"min": NONE, "max": NONE}),
             torch=lambda t: t.clip(t.zeros(2), None, None)),
    ops_case("none-lerp-weight", Op("lerp", ["V", "V"], {"weight": NONE}),
             torch=lambda t: t.lerp(t.zeros(2), t.zeros(2), None)),
    ops_case("none-lerp_-weight", scratch(), Op("lerp_", [Ref(0), "V"], {"weight": NONE}),
             torch=lambda t: t.zeros(2).lerp_(t.zeros(2), None)),
    ops_case("none-lerp-end", Op("lerp", ["V"], {"end": NONE, "weight": F(0.5)}),
             torch=lambda t: t.lerp(t.zeros(2), None, 0.5)),
    ops_case("none-masked_fill-value", Op("masked_fill", ["V", "MASK"], {"value": NONE}),
             torch=lambda t: t.zeros(4).masked_fill(t.ones(4, dtype=t.bool), None)),
    ops_case("none-masked_fill_-value", scratch(),
             Op("masked_fill_", [Ref(0), "MASK"], {"value": NONE}),
             torch=lambda t: t.zeros(4).masked_fill_(t.ones(4, dtype=t.bool), None)),
    ops_case("none-masked_fill-mask", Op("masked_fill", ["V"], {"mask": NONE, "value": F(1.0)}),
             torch=lambda t: t.zeros(4).masked_fill(None, 1.0)),
    ops_case("none-addcmul-tensor1", Op("addcmul", ["V", "V"], {"tensor1": NONE}),
             torch=lambda t: t.addcmul(t.zeros(2), None, t.zeros(2))),
    ops_case("none-addcdiv-tensor2", Op("addcdiv", ["V", "V"], {"tensor2": NONE}),
             torch=lambda t: t.addcdiv(t.zeros(2), t.zeros(2), None)),
    ops_case("none-scatter-src", Op("scatter", ["V", "IDX1"], {"dim": I(0), "src": NONE}),
             torch=lambda t: t.zeros(4).scatter(0, t.tensor([1]), None)),
    ops_case("none-scatter_-src", scratch(),
             Op("scatter_", [Ref(0), "IDX1"], {"dim": I(0), "src": NONE}),
             torch=lambda t: t.zeros(4).scatter_(0, t.tensor([1]), None)),
    ops_case("none-scatter_add-src", Op("scatter_add", ["V", "IDX1"], {"dim": I(0), "src": NONE}),
             torch=lambda t: t.zeros(4).scatter_add(0, t.tensor([1]), None)),
    ops_case("none-div-other", Op("div", ["V"], {"other": NONE}),
             torch=lambda t: t.div(t.zeros(2), None)),
    ops_case("none-eq-other", Op("eq", ["V"], {"other": NONE}),
             torch=lambda t: t.eq(t.zeros(2), None)),
    ops_case("none-matmul-other", Op("matmul", ["V"], {"other": NONE}),
             torch=lambda t: t.matmul(t.zeros(2), None)),
    ops_case("none-copy_-src", scratch(), Op("copy_", [Ref(0)], {"src": NONE}),
             torch=lambda t: t.zeros(2).copy_(None)),
)

# ---- scatter with a 0-d src ---------------------------------------------------------------------

add(
    ops_case("scatter_-0d-src-into-2d", Op("clone", ["F"]),
             Op("scatter_", [Ref(0), "IDX2", "S0"], {"dim": I(0)}),
             torch=lambda t: t.zeros(2, 3).scatter_(0, t.tensor([[1]]), t.tensor(5.))),
    ops_case("scatter_add_-0d-src-into-2d", Op("clone", ["F"]),
             Op("scatter_add_", [Ref(0), "IDX2", "S0"], {"dim": I(0)}),
             torch=lambda t: t.zeros(2, 3).scatter_add_(0, t.tensor([[1]]), t.tensor(5.))),
    ops_case("scatter-0d-src-into-2d", Op("scatter", ["F", "IDX2", "S0"], {"dim": I(0)}),
             torch=lambda t: t.zeros(2, 3).scatter(0, t.tensor([[1]]), t.tensor(5.))),
    ops_case("scatter_add-0d-src-into-2d", Op("scatter_add", ["F", "IDX2", "S0"], {"dim": I(0)}),
             torch=lambda t: t.zeros(2, 3).scatter_add(0, t.tensor([[1]]), t.tensor(5.))),
    ops_case("scatter_add_-0d-src-index-too-long", scratch(),
             Op("scatter_add_", [Ref(0), "IDX", "S0"], {"dim": I(0)}),
             torch=lambda t: t.zeros(4).scatter_add_(0, t.tensor([0, 1]), t.tensor(5.))),
    ops_case("scatter-0d-src-dtype-mismatch", Op("scatter", ["V", "IDX1", "IDX1"],
                                                 {"dim": I(0)}),
             torch=lambda t: t.zeros(4).scatter(0, t.tensor([1]), t.tensor([1]))),
    ops_case("scatter-int32-index", Op("scatter", ["V", "I32", "V"], {"dim": I(0)}),
             torch=lambda t: t.zeros(4).scatter(0, t.arange(4, dtype=t.int32), t.zeros(4))),
    ops_case("gather-int32-index", Op("gather", ["V", "I32"], {"dim": I(0)}),
             torch=lambda t: t.gather(t.zeros(4), 0, t.arange(4, dtype=t.int32))),
    ops_case("index_select-2d-index", Op("index_select", ["V", "IDX2"], {"dim": I(0)}),
             torch=lambda t: t.index_select(t.zeros(4), 0, t.zeros(1, 1, dtype=t.long))),
    ops_case("masked_fill-1d-value-tensor", Op("masked_fill", ["V", "MASK", "V"]),
             torch=lambda t: t.zeros(4).masked_fill(t.ones(4, dtype=t.bool), t.zeros(4))),
    ops_case("where-float-condition", Op("where", ["V", "V", "V"]),
             torch=lambda t: t.where(t.zeros(4), t.zeros(4), t.zeros(4))),
    ops_case("lerp-dtype-mismatch", Op("lerp", ["V", "V64"], {"weight": F(0.5)}),
             torch=lambda t: t.lerp(t.zeros(4), t.zeros(4, dtype=t.float64), 0.5)),
    ops_case("pow-int-negative-exponent", Op("pow", ["L"], {"other": I(-1)}),
             torch=lambda t: t.pow(t.arange(3), -1)),
    ops_case("neg-bool", Op("neg", ["MASK"]), torch=lambda t: -t.ones(2, dtype=t.bool)),
    ops_case("sub-bools", Op("sub", ["MASK", "MASK"]),
             torch=lambda t: t.ones(2, dtype=t.bool) - t.ones(2, dtype=t.bool)),
    ops_case("bitwise_and-float", Op("bitwise_and", ["V", "V"]),
             torch=lambda t: t.bitwise_and(t.zeros(2), t.zeros(2))),
    ops_case("addcdiv-ints", Op("addcdiv", ["L", "L", "L"]),
             torch=lambda t: t.addcdiv(t.arange(3), t.arange(3), t.arange(3))),
    ops_case("take-float-index", Op("take", ["V", "V"]),
             torch=lambda t: t.take(t.zeros(4), t.zeros(1))),
    ops_case("put_-numel-mismatch", scratch(), Op("put_", [Ref(0), "IDX", "ONE"]),
             torch=lambda t: t.zeros(4).put_(t.tensor([0, 1]), t.tensor([1.]))),
    ops_case("add_-float-into-int", Op("clone", ["L"]), Op("add_", [Ref(0)], {"other": F(1.5)}),
             torch=lambda t: t.arange(3).add_(1.5)),
    ops_case("fill_-1d-value", scratch(), Op("fill_", [Ref(0)], {"value": INTS(1, 2)}), code=IA),
)


# ---- batches ------------------------------------------------------------------------------------

def _too_many_ops(h):
    n = h.limits.max_ops_per_batch + 1
    request = pb.RunOpsRequest(session_id=h.sid)
    base = h.fresh(n)
    v = h.SEEDS["V"]
    for i in range(n):
        request.ops.add(op="alias", inputs=[v], outputs=[base + i])
    return h.run_request(request, timeout=60), [base, n]


def _none_ran(h, out, context):
    base, n = context
    problems = []
    if out.response is not None and len(out.response.results) != 0:
        problems.append(f"{len(out.response.results)} ops of the refused batch ran")
    return problems + described(h, [base, base + n - 1], present=False)


def _mid_batch(h):
    ops = [Op("full", attrs={"size": INTS(2), "fill_value": F(1.0)}),
           Op("neg", [Ref(0)]),
           Op("transpose", [Ref(0)], {"dim0": I(0), "dim1": I(9)}),
           Op("full", attrs={"size": INTS(2), "fill_value": F(2.0)})]
    return h.run_ops(ops)


def _mid_batch_effects(h, out, firsts):
    problems = []
    if out.response is None or len(out.response.results) != 2:
        problems.append(f"expected 2 results before the failing op, got "
                        f"{None if out.response is None else len(out.response.results)}")
    return (problems + described(h, firsts[:2], present=True)
            + described(h, [firsts[2], firsts[3]], present=False))


def _long_batch(bad_at, n=1000):
    def run(h):
        ops = [Op("alias", ["V"]) for _ in range(n)]
        ops[bad_at] = Op("transpose", ["V"], {"dim0": I(0), "dim1": I(9)})
        return h.run_ops(ops)

    def extra(h, out, firsts):
        problems = []
        if out.response is None or len(out.response.results) != bad_at:
            problems.append(f"expected {bad_at} results, got "
                            f"{None if out.response is None else len(out.response.results)}")
        return problems + described(h, [firsts[-1]], present=False)
    return run, extra


def _op_named(name):
    return lambda h: h.run_ops([Op(name, ["V"])])


add(
    rpc_case("batch-too-many-ops", _too_many_ops, RE, "RunOps", extra=_none_ran),
    Case("batch-error-mid-batch", _mid_batch, OOR, ("transpose",), "IndexError", op_index=2,
         extra=_mid_batch_effects),
    Case("batch-error-first-of-1000", _long_batch(0)[0], OOR, ("transpose",), op_index=0,
         extra=_long_batch(0)[1]),
    Case("batch-error-last-of-1000", _long_batch(999)[0], OOR, ("transpose",), op_index=999,
         extra=_long_batch(999)[1]),
    Case("batch-two-errors-first-reported",
         lambda h: h.run_ops([Op("alias", ["V"]), Op("neg", [987654321]),
                              Op("transpose", ["V"], {"dim0": I(9), "dim1": I(0)})]),
         NF, ("neg",), op_index=1),
    ops_case("batch-unknown-op", Op("alias", ["V"]), Op("frobnicate", ["V"]), code=NF),
    Case("batch-empty-op-name", _op_named(""), NF, ("",), op_index=0),
    Case("batch-op-name-wrong-case", _op_named("NEG"), NF, ("NEG",), op_index=0),
    Case("batch-op-name-trailing-space", _op_named("neg "), NF, ("neg ",), op_index=0),
    Case("batch-op-name-nul", _op_named("neg\x00x"), NF, ("neg\x00x",), op_index=0),
    Case("batch-op-name-10k", _op_named("n" * 10000), NF, ("n" * 10000,), op_index=0),
    ops_case("batch-unknown-stream", Op("neg", ["V"], stream=99), code=NF),
    ops_case("batch-stream-uint64-max", Op("neg", ["V"], stream=UINT64_MAX), code=NF),
    ops_case("batch-factory-unknown-stream", Op("zeros", attrs={"size": INTS(2)}, stream=7),
             code=NF),
)

# ---- unparseable requests -----------------------------------------------------------------------

GARBAGE = b"\xff\xff\xff\xff"
# A RunOpsRequest whose op name is not UTF-8: ops { op: b"\xff\xfe" }.
BAD_UTF8_RUNOPS = b"\x12\x04\x0a\x02\xff\xfe"
# A field whose length runs past the end of the message.
TRUNCATED_FIELD = b"\x0a\x7f" + b"x" * 4

for method in ("RunOps", "Describe", "Release", "ReadStorage", "WriteStorage", "CreateStream",
               "RecordEvent", "OpenSession", "CloseSession", "Synchronize"):
    add(rpc_case(f"unparseable-{method}",
                 lambda h, m=method: h.call(m, GARBAGE), IA, method))
add(
    rpc_case("unparseable-RunOps-bad-utf8-op-name", lambda h: h.call("RunOps", BAD_UTF8_RUNOPS),
             IA, "RunOps"),
    rpc_case("unparseable-RunOps-truncated-field", lambda h: h.call("RunOps", TRUNCATED_FIELD),
             IA, "RunOps"),
    rpc_case("unparseable-Download", lambda h: h.download(0, raw=GARBAGE)[0], IA, "Download"),
    rpc_case("unparseable-Download-truncated", lambda h: h.download(0, raw=TRUNCATED_FIELD)[0],
             IA, "Download"),
)

# ---- uploads ------------------------------------------------------------------------------------


def HDR(h, **kw):
    header = pb.UploadHeader(session_id=kw.pop("session_id", h.sid), id=kw.pop("id", None)
                             or h.fresh(), **kw)
    return pb.UploadRequest(header=header)


def DATA(b):
    return pb.UploadRequest(data=b)


def _upload(build, check_absent=True):
    def run(h):
        messages = build(h)
        ids = [m.header.id for m in messages
               if isinstance(m, pb.UploadRequest) and m.HasField("header")]
        return h.upload(messages), ids

    def extra(h, out, ids):
        if not check_absent:
            return []
        return described(h, [i for i in ids if i not in h.SEEDS.values()][:1], present=False)
    return run, extra


def upload_case(id, build, code, kind=None, check_absent=True):
    run, extra = _upload(build, check_absent)
    return rpc_case(id, run, code, "Upload", kind=kind, extra=extra)


add(
    upload_case("upload-no-messages", lambda h: [], IA),
    upload_case("upload-data-before-header", lambda h: [DATA(b"abcd")], IA),
    upload_case("upload-empty-first-message", lambda h: [pb.UploadRequest()], IA),
    upload_case("upload-garbage-first-message", lambda h: [GARBAGE], IA),
    upload_case("upload-garbage-after-header",
                lambda h: [HDR(h, sizes=[1], dtype=F32), GARBAGE], IA),
    upload_case("upload-header-twice",
                lambda h: [HDR(h, sizes=[1], dtype=F32), HDR(h, sizes=[1], dtype=F32)], IA),
    upload_case("upload-header-after-data",
                lambda h: [HDR(h, sizes=[1], dtype=F32), DATA(b"\0" * 4),
                           HDR(h, sizes=[1], dtype=F32)], IA),
    upload_case("upload-unknown-session",
                lambda h: [HDR(h, session_id="0" * 32, sizes=[1], dtype=F32), DATA(b"\0" * 4)],
                NF),
    upload_case("upload-missing-session-id",
                lambda h: [HDR(h, session_id="", sizes=[1], dtype=F32), DATA(b"\0" * 4)],
                (IA, NF)),
    upload_case("upload-id-0", lambda h: [pb.UploadRequest(header=pb.UploadHeader(
        session_id=h.sid, id=0, sizes=[1], dtype=F32)), DATA(b"\0" * 4)], IA),
    upload_case("upload-existing-id",
                lambda h: [HDR(h, id=h.SEEDS["V"], sizes=[4], dtype=F32), DATA(b"\0" * 16)], AE,
                check_absent=False),
    upload_case("upload-negative-size", lambda h: [HDR(h, sizes=[-1], dtype=F32)], IA),
    upload_case("upload-int64-min-size", lambda h: [HDR(h, sizes=[INT64_MIN], dtype=F32)], IA),
    upload_case("upload-numel-overflow", lambda h: [HDR(h, sizes=[2**62, 16], dtype=F32)], IA),
    upload_case("upload-nbytes-overflow", lambda h: [HDR(h, sizes=[2**62], dtype=F64)], IA),
    upload_case("upload-over-budget", lambda h: [HDR(h, sizes=[2**40], dtype=F32)], RE),
    upload_case("upload-rank-65", lambda h: [HDR(h, sizes=[1] * 65, dtype=F32), DATA(b"\0" * 4)],
                IA),
    upload_case("upload-rank-1000", lambda h: [HDR(h, sizes=[1] * 1000, dtype=F32)], IA),
    upload_case("upload-device-garbage",
                lambda h: [HDR(h, sizes=[1], dtype=F32, device="tpu"), DATA(b"\0" * 4)], IA),
    upload_case("upload-device-not-on-this-server",
                lambda h: [HDR(h, sizes=[1], dtype=F32, device="cuda:99"), DATA(b"\0" * 4)], FP),
    upload_case("upload-truncated", lambda h: [HDR(h, sizes=[4], dtype=F32), DATA(b"x" * 12)],
                IA),
    upload_case("upload-truncated-0d", lambda h: [HDR(h, sizes=[], dtype=F64)], IA),
    upload_case("upload-partial-element", lambda h: [HDR(h, sizes=[1], dtype=F32),
                                                     DATA(b"x" * 3)], IA),
    upload_case("upload-oversized-one-chunk",
                lambda h: [HDR(h, sizes=[4], dtype=F32), DATA(b"x" * 20)], IA),
    upload_case("upload-oversized-second-chunk",
                lambda h: [HDR(h, sizes=[4], dtype=F32), DATA(b"x" * 16), DATA(b"y")], IA),
    upload_case("upload-bytes-into-empty-tensor",
                lambda h: [HDR(h, sizes=[0], dtype=F32), DATA(b"y")], IA),
    upload_case("upload-record-length-past-end",
                lambda h: [HDR(h, sizes=[4], dtype=F32), b"\x12\x64" + b"x" * 10], IA),
    upload_case("upload-record-length-varint-overflow",
                lambda h: [HDR(h, sizes=[4], dtype=F32), b"\x12" + b"\xff" * 10 + b"\x01"], IA),
)
for value in (0, 11, 99, -1):
    add(upload_case(f"upload-dtype-enum-{value}",
                    lambda h, v=value: [HDR(h, sizes=[1], dtype=v), DATA(b"\0" * 4)], IA,
                    kind="TypeError"))

# ---- downloads ----------------------------------------------------------------------------------


def _download_view(ops):
    def run(h):
        firsts = h.must_run(ops)
        return h.download(firsts[-1])[0]
    return run


add(
    rpc_case("download-unknown-id", lambda h: h.download(987654321)[0], NF, "Download"),
    rpc_case("download-id-0", lambda h: h.download(0)[0], NF, "Download"),
    rpc_case("download-uint64-max", lambda h: h.download(UINT64_MAX)[0], NF, "Download"),
    rpc_case("download-4TiB-expanded-view",
             _download_view([Op("expand", ["ONE"], {"size": INTS(2**40)})]), RE, "Download"),
    rpc_case("download-2d-4TiB-expanded-view",
             _download_view([Op("expand", ["ONE"], {"size": INTS(2**20, 2**20)})]), RE,
             "Download"),
    rpc_case("download-view-nbytes-overflow",
             _download_view([Op("expand", ["ONE"], {"size": INTS(2**31, 2**31)})]), (RE, IA),
             "Download"),
    rpc_case("download-huge-as_strided-view",
             _download_view([Op("as_strided", ["ONE"], {"size": INTS(2**21, 2**21),
                                                        "stride": INTS(0, 0)})]), RE,
             "Download"),
)


def _poisoned(h):
    h.call("Synchronize", pb.SynchronizeRequest(session_id=h.sid), pb.SynchronizeResponse)
    firsts = h.must_run([Op("full", attrs={"size": INTS(1), "fill_value": I(-99)}),
                         Op("take", ["V", Ref(0)])])
    return h.download(firsts[1])[0]


def _async_error(h):
    h.call("Synchronize", pb.SynchronizeRequest(session_id=h.sid), pb.SynchronizeResponse)
    h.must_run([Op("full", attrs={"size": INTS(1), "fill_value": I(-99)}),
                Op("take", ["V", Ref(0)])])
    return h.call("Synchronize", pb.SynchronizeRequest(session_id=h.sid), pb.SynchronizeResponse)


add(
    rpc_case("download-poisoned-tensor", _poisoned, FP, "Download"),
    rpc_case("synchronize-reports-async-error", _async_error, OOR, names=("take",),
             torch=lambda t: t.take(t.zeros(4), t.tensor([-99]))),
)

# ---- ReadStorage / WriteStorage ------------------------------------------------------------------


def _read(offset, count, seed="V", session=None, id=None):
    return lambda h: h.call("ReadStorage", pb.ReadStorageRequest(
        session_id=h.sid if session is None else session,
        id=h.SEEDS[seed] if id is None else id, offset=offset, count=count),
        pb.ReadStorageResponse)


def _write(offset, data, seed="W", session=None, id=None, stream=0):
    return lambda h: h.call("WriteStorage", pb.WriteStorageRequest(
        session_id=h.sid if session is None else session,
        id=h.SEEDS[seed] if id is None else id, offset=offset, data=data, stream=stream),
        pb.WriteStorageResponse)


W_INTACT = unchanged("W", "<4f", [0, 1, 2, 3])

for id_, offset, count in (("negative-offset", -1, 1), ("offset-past-end", 5, 1),
                           ("offset-at-end-count-1", 4, 1), ("count-past-end", 0, 5),
                           ("offset-plus-count-past-end", 3, 2),
                           ("int64-max-offset", INT64_MAX, 1), ("int64-min-offset", INT64_MIN, 1),
                           ("int64-max-count", 2, INT64_MAX), ("negative-offset-to-end", -1, -1),
                           ("int64-min-offset-to-end", INT64_MIN, -1)):
    add(rpc_case(f"read_storage-{id_}", _read(offset, count), OOR, "ReadStorage",
                 kind="IndexError"))
add(
    rpc_case("read_storage-count-minus-2", _read(0, -2), (OOR, IA), "ReadStorage"),
    rpc_case("read_storage-count-int64-min", _read(0, INT64_MIN), (OOR, IA), "ReadStorage"),
    rpc_case("read_storage-unknown-id", _read(0, 1, id=987654321), NF, "ReadStorage"),
    rpc_case("read_storage-id-0", _read(0, 1, id=0), NF, "ReadStorage"),
)


def _read_too_big(h):
    n = h.limits.max_message_bytes // 4 + 1024
    big = h.must_run([Op("zeros", attrs={"size": INTS(n)})])[0]
    try:
        return h.call("ReadStorage", pb.ReadStorageRequest(session_id=h.sid, id=big, offset=0,
                                                           count=-1), pb.ReadStorageResponse)
    finally:
        h.call("Release", pb.ReleaseRequest(session_id=h.sid, ids=[big]), pb.ReleaseResponse)


add(rpc_case("read_storage-larger-than-a-message", _read_too_big, RE, "ReadStorage"))

for id_, offset, data in (("negative-offset", -1, b"\0" * 4), ("offset-past-end", 5, b"\0" * 4),
                          ("offset-at-end", 4, b"\0" * 4), ("data-past-end", 3, b"\0" * 8),
                          ("too-much-data", 0, b"\0" * 20),
                          ("int64-max-offset", INT64_MAX, b"\0" * 4),
                          ("int64-min-offset", INT64_MIN, b"\0" * 4),
                          ("offset-plus-count-overflow", INT64_MAX - 1, b"\0" * 8)):
    add(rpc_case(f"write_storage-{id_}", _write(offset, data), OOR, "WriteStorage",
                 kind="IndexError", extra=W_INTACT))
add(
    rpc_case("write_storage-partial-element", _write(0, b"\0" * 3), IA, "WriteStorage",
             extra=W_INTACT),
    rpc_case("write_storage-17-bytes", _write(0, b"\0" * 17), IA, "WriteStorage",
             extra=W_INTACT),
    rpc_case("write_storage-unknown-id", _write(0, b"\0" * 4, id=987654321), NF, "WriteStorage"),
    rpc_case("write_storage-id-0", _write(0, b"\0" * 4, id=0), NF, "WriteStorage"),
    rpc_case("write_storage-unknown-stream", _write(0, b"\0" * 4, stream=99), NF,
             "WriteStorage", extra=W_INTACT),
)

# ---- streams and events -------------------------------------------------------------------------


def _record(h, event, stream=0, session=None):
    return h.call("RecordEvent", pb.RecordEventRequest(
        session_id=h.sid if session is None else session, event=event, stream=stream),
        pb.RecordEventResponse)


def _wait(event, stream=0, record_first=False):
    def run(h):
        if record_first:
            _record(h, event)
        return h.call("WaitEvent", pb.WaitEventRequest(session_id=h.sid, event=event,
                                                       stream=stream), pb.WaitEventResponse)
    return run


def _query(event):
    return lambda h: h.call("QueryEvent", pb.QueryEventRequest(session_id=h.sid, event=event),
                            pb.QueryEventResponse)


def _sync(stream):
    return lambda h: h.call("Synchronize", pb.SynchronizeRequest(session_id=h.sid,
                                                                 stream=stream),
                            pb.SynchronizeResponse)


def _stream_limit(h):
    sid = h.open_session()
    try:
        for _ in range(h.limits.max_streams_per_session + 1):
            out = h.call("CreateStream", pb.CreateStreamRequest(session_id=sid),
                         pb.CreateStreamResponse)
            if not out.ok:
                return out
        return out
    finally:
        h.close_session(sid)


add(
    rpc_case("record_event-unknown-stream", lambda h: _record(h, 5, stream=99), NF,
             "RecordEvent"),
    rpc_case("record_event-stream-uint64-max", lambda h: _record(h, 5, stream=UINT64_MAX), NF,
             "RecordEvent"),
    rpc_case("wait_event-never-recorded", _wait(123456), NF, "WaitEvent"),
    rpc_case("wait_event-event-0", _wait(0), NF, "WaitEvent"),
    rpc_case("wait_event-event-uint64-max", _wait(UINT64_MAX), NF, "WaitEvent"),
    rpc_case("wait_event-unknown-stream", _wait(6, stream=99, record_first=True), NF,
             "WaitEvent"),
    rpc_case("query_event-never-recorded", _query(654321), NF, "QueryEvent"),
    rpc_case("query_event-uint64-max", _query(UINT64_MAX), NF, "QueryEvent"),
    rpc_case("synchronize-unknown-stream", _sync(99), NF, "Synchronize"),
    rpc_case("synchronize-stream-uint64-max", _sync(UINT64_MAX), NF, "Synchronize"),
    rpc_case("create_stream-over-the-limit", _stream_limit, RE, "CreateStream"),
)

# ---- sessions -----------------------------------------------------------------------------------

UNKNOWN_SESSION = "0" * 32


def _closed_session(h):
    sid = h.open_session()
    h.close_session(sid)
    return sid


SESSION_CALLS = {
    "RunOps": lambda h, s: h.run_request(pb.RunOpsRequest(session_id=s, ops=[
        pb.OpCall(op="zeros", outputs=[h.fresh()],
                  attrs={"size": INTS(2)})])),
    "Describe": lambda h, s: h.call("Describe", pb.DescribeRequest(session_id=s, ids=[1]),
                                    pb.DescribeResponse),
    "Release": lambda h, s: h.call("Release", pb.ReleaseRequest(session_id=s, ids=[1]),
                                   pb.ReleaseResponse),
    "ReadStorage": lambda h, s: h.call("ReadStorage", pb.ReadStorageRequest(
        session_id=s, id=1, count=1), pb.ReadStorageResponse),
    "WriteStorage": lambda h, s: h.call("WriteStorage", pb.WriteStorageRequest(
        session_id=s, id=1, data=b"\0" * 8), pb.WriteStorageResponse),
    "Upload": lambda h, s: h.upload([HDR(h, session_id=s, sizes=[1], dtype=F32),
                                     DATA(b"\0" * 4)]),
    "Download": lambda h, s: h.download(1, session_id=s)[0],
    "CreateStream": lambda h, s: h.call("CreateStream", pb.CreateStreamRequest(session_id=s),
                                        pb.CreateStreamResponse),
    "RecordEvent": lambda h, s: _record(h, 1, session=s),
    "WaitEvent": lambda h, s: h.call("WaitEvent", pb.WaitEventRequest(session_id=s, event=1),
                                     pb.WaitEventResponse),
    "QueryEvent": lambda h, s: h.call("QueryEvent", pb.QueryEventRequest(session_id=s, event=1),
                                      pb.QueryEventResponse),
    "Synchronize": lambda h, s: h.call("Synchronize", pb.SynchronizeRequest(session_id=s),
                                       pb.SynchronizeResponse),
    "RenewLease": lambda h, s: h.call("RenewLease", pb.RenewLeaseRequest(session_id=s),
                                      pb.RenewLeaseResponse),
    "CloseSession": lambda h, s: h.close_session(s),
}
SESSION_IDS = {
    "unknown": (lambda h: UNKNOWN_SESSION, (NF,)),
    "closed": (_closed_session, (NF,)),
    "missing": (lambda h: "", (IA, NF)),
    "not-hex": (lambda h: "not a session id", (NF,)),
    "10k-chars": (lambda h: "a" * 10000, (NF,)),
}
for method, fn in SESSION_CALLS.items():
    for what, (make, codes) in SESSION_IDS.items():
        if what in ("not-hex", "10k-chars") and method not in ("RunOps", "Upload", "Download"):
            continue
        add(rpc_case(f"session-{what}-{method}",
                     lambda h, fn=fn, make=make: fn(h, make(h)), codes, method))


def _close_twice(h):
    sid = h.open_session()
    h.close_session(sid)
    return h.close_session(sid)


add(
    rpc_case("session-close-twice", _close_twice, NF, "CloseSession"),
    rpc_case("open_session-device-garbage",
             lambda h: h.call("OpenSession", pb.OpenSessionRequest(device="tpu"),
                              pb.OpenSessionResponse), IA, "OpenSession"),
    rpc_case("open_session-device-negative-index",
             lambda h: h.call("OpenSession", pb.OpenSessionRequest(device="cuda:-1"),
                              pb.OpenSessionResponse), IA, "OpenSession"),
    rpc_case("open_session-device-not-on-this-server",
             lambda h: h.call("OpenSession", pb.OpenSessionRequest(device="cuda:99"),
                              pb.OpenSessionResponse), FP, "OpenSession"),
)

# ---- Connect ------------------------------------------------------------------------------------


def _connect_answer(requests, seq):
    """The error of the answer with `seq` (a ConnectResponse.error or a RunOps error)."""
    def run(h):
        responses, failed = h.connect(requests(h))
        if failed is not None:
            return failed
        for r in responses:
            if r.seq != seq:
                continue
            if r.HasField("error"):
                e = r.error
                return Outcome(False, CODE_BY_NUMBER.get(e.code, C.UNKNOWN), e.message, e.kind,
                               None, r)
            if r.HasField("ran") and r.ran.HasField("error"):
                e = r.ran.error
                return Outcome(False, CODE_BY_NUMBER.get(e.code, C.UNKNOWN), e.message, e.kind,
                               e.op_index, r)
            return Outcome(True, response=r)
        return Outcome(False, C.UNKNOWN, f"no answer with seq {seq}: {responses}")
    return run


add(
    rpc_case("connect-attach-unknown-session", _connect_answer(
        lambda h: [pb.ConnectRequest(seq=1, attach_session_id=UNKNOWN_SESSION)], 1), NF,
        "Connect"),
    rpc_case("connect-empty-request", _connect_answer(
        lambda h: [pb.ConnectRequest(seq=1)], 1), IA, "Connect"),
    rpc_case("connect-open-session-twice", _connect_answer(
        lambda h: [pb.ConnectRequest(seq=1, open_session=pb.OpenSessionRequest()),
                   pb.ConnectRequest(seq=2, open_session=pb.OpenSessionRequest())], 2), FP,
        "Connect"),
    rpc_case("connect-attach-after-open", _connect_answer(
        lambda h: [pb.ConnectRequest(seq=1, open_session=pb.OpenSessionRequest()),
                   pb.ConnectRequest(seq=2, attach_session_id=h.sid)], 2), FP, "Connect"),
    rpc_case("connect-run-ops-without-session", _connect_answer(
        lambda h: [pb.ConnectRequest(seq=1, run_ops=pb.RunOpsRequest(ops=[
            pb.OpCall(op="zeros", outputs=[h.fresh()], attrs={"size": INTS(2)})]))], 1), NF,
        names=("Connect", "connect", "RunOps", "run_ops")),
    rpc_case("connect-release-without-session", _connect_answer(
        lambda h: [pb.ConnectRequest(seq=1, release=pb.ReleaseRequest(ids=[1]))], 1), NF,
        names=("Connect", "connect", "Release", "release")),
    rpc_case("connect-open-session-bad-device", _connect_answer(
        lambda h: [pb.ConnectRequest(seq=1, open_session=pb.OpenSessionRequest(device="tpu"))],
        1), IA, names=("Connect", "connect", "OpenSession", "open_session")),
    Case("connect-bad-op-in-batch", _connect_answer(
        lambda h: [pb.ConnectRequest(seq=1, attach_session_id=h.sid),
                   pb.ConnectRequest(seq=2, run_ops=pb.RunOpsRequest(ops=[pb.OpCall(
                       op="transpose", inputs=[h.SEEDS["F"]], outputs=[h.fresh()],
                       attrs={"dim0": I(0), "dim1": I(9)})]))], 2),
         OOR, ("transpose",), "IndexError", op_index=0),
)


# ---- the hand-written table ---------------------------------------------------------------------

_ids = [c.id for c in CASES]
assert len(_ids) == len(set(_ids)), sorted({i for i in _ids if _ids.count(i) > 1})


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_bad_input(h, case):
    run_checked(h, case)


SCATTER_0D = [(op, self_, index) for op in ("scatter_", "scatter", "scatter_add_", "scatter_add")
              for self_, index in (("V", "IDX1"), ("V", "IDX0"), ("S0", "IDXZ"))]


@pytest.mark.parametrize("op,self_,index", SCATTER_0D,
                         ids=[f"{op}-{s}-{i}-0d-src" for op, s, i in SCATTER_0D])
def test_scatter_0d_src_matches_torch(h, op, self_, index):
    """A 0-d src with a 1-d or 0-d self and index is valid in torch (src is read as 1-d): the
    server must not crash, and must give torch's values."""
    import torch
    h.ensure_up()
    problems = []
    try:
        ops = [Op("clone", [self_]), Op(op, [Ref(0), index, "S0"], {"dim": I(0)},
                                        out=[] if op.endswith("_") else [NEW])]
        out, firsts = h.run_ops(ops)
        t_self = torch.arange(4.0) if self_ == "V" else torch.tensor(5.0)
        t_index = {"IDX1": torch.tensor([1]), "IDX0": torch.tensor(1),
                   "IDXZ": torch.tensor(0)}[index]
        expected = getattr(t_self, op)(0, t_index, torch.tensor(5.0)).reshape(-1).tolist()
        if not out.ok:
            problems.append(f"failed: {out.describe()} (torch gives {expected})")
        else:
            target = firsts[0] if op.endswith("_") else firsts[1]
            got, header, data = h.download(target)
            values = list(struct.unpack(f"<{len(data) // 4}f", data)) if got.ok else got.describe()
            if values != expected:
                problems.append(f"values {values}, torch gives {expected}")
    except Exception as e:  # noqa: BLE001
        problems.append(f"raised {e!r}")
    problems += h.post_check()
    if problems:
        pytest.fail(f"[{op} {self_} {index} 0-d src] " + "; ".join(problems), pytrace=False)


def test_release_of_unknown_ids_is_reported_not_failed(h):
    """Release is idempotent: unknown ids come back in not_found, the call succeeds."""
    h.ensure_up()
    out = h.call("Release", pb.ReleaseRequest(session_id=h.sid, ids=[987654321, 0]),
                 pb.ReleaseResponse)
    problems = [] if out.ok and sorted(out.response.not_found) == [0, 987654321] else [
        f"Release of unknown ids: {out.describe()} "
        f"{getattr(out.response, 'not_found', None)}"]
    problems += h.post_check()
    assert not problems, problems


# ---- every op of ListOps ------------------------------------------------------------------------

INPUT_SEED = {"condition": "MASK", "mask": "MASK", "index": "IDX", "mat2": "M", "mat1": "M",
              "vec": "V", "vec2": "V", "tensor": "V", "source": "V"}
# Last inputs that may be None (torch's optional tensors): None is no error of its own there.
OPTIONAL_NONE = {("clamp", "min"), ("clamp", "max"), ("clamp_", "min"), ("clamp_", "max"),
                 ("clip", "min"), ("clip", "max"), ("clip_", "min"), ("clip_", "max"),
                 ("cross_entropy", "weight"), ("nll_loss", "weight"), ("conv2d", "bias"),
                 ("batch_norm", "bias"), ("group_norm", "bias"),
                 ("binary_cross_entropy", "weight"), ("conv_transpose2d", "bias"),
                 ("binary_cross_entropy_with_logits", "pos_weight"), ("diff", "append"), ("searchsorted", "sorter"),
                 ("bincount", "weights"), ("histogram", "weight"), ("histogram.bins_tensor", "weight"),
                 ("embedding_bag", "per_sample_weights"), ("conv3d", "bias"),
                 ("conv_transpose3d", "bias"),
                 ("linalg_pinv", "rtol"), ("linalg_matrix_rank", "rtol")}


def _out_kwargs(spec):
    if spec.returns_nothing:
        return {"out": []}
    if spec.multi_output:
        return {"out": [], "start": NEWBLOCK}
    return {"out": [NEW]}


def _inputs(spec, count):
    """`count` inputs for `spec`: a scratch copy (op 0 of the batch) as its first tensor, so
    nothing in-place can touch the session's seeds."""
    names = list(spec.inputs) + ["self"] * max(0, count - len(spec.inputs))
    return [Ref(0) if i == 0 else INPUT_SEED.get(n, "V") for i, n in enumerate(names[:count])]


def _loop_case(id, spec, inputs, attrs, code, kind=None, robust=False, expect_attr=None):
    ops = [scratch(), Op(spec.name, inputs, attrs, **_out_kwargs(spec))]
    case = ops_case(id, *ops, code=code, kind=kind, op_index=1)
    if robust or expect_attr:
        def extra(h, out, context, robust=robust, expect_attr=expect_attr):
            if expect_attr and not out.ok and not any(f"'{a}'" in out.message
                                                      for a in expect_attr):
                return [f"the message names none of the missing attributes {expect_attr}"]
            return []
        case.extra = extra
    case.robust = robust
    return case


def _ops_param(fn):
    if not OPS:
        return [pytest.param(None, id="ListOps-failed-at-collection")]
    params = []
    for spec in OPS:
        params.extend(fn(spec))
    return params


def _wrong_count_cases(spec):
    n = len(spec.inputs)
    if spec.variadic:
        # Any number of tensors after the fixed inputs is a call (cat of none raises as torch's
        # does); one fixed input short is not.
        if n < 2:
            return []
        return [pytest.param(_loop_case(f"{spec.name}-{n - 2}-inputs", spec,
                                        _inputs(spec, n - 2), {}, IA, "TypeError"),
                             id=f"{spec.name}-too-few-inputs")]
    out = [pytest.param(_loop_case(f"{spec.name}-{n + 1}-inputs", spec, _inputs(spec, n + 1),
                                   {}, IA, "TypeError"), id=f"{spec.name}-too-many-inputs")]
    if n >= 1:
        out.append(pytest.param(_loop_case(f"{spec.name}-{n - 1}-inputs", spec,
                                           _inputs(spec, n - 1), {}, IA, "TypeError"),
                                id=f"{spec.name}-too-few-inputs"))
    return out


def _no_attrs_cases(spec):
    required = [a.name for a in spec.attrs if a.required]
    inputs = _inputs(spec, len(spec.inputs))
    if required:
        case = _loop_case(f"{spec.name}-no-attrs", spec, inputs, {}, IA, expect_attr=required)
    else:
        case = _loop_case(f"{spec.name}-no-attrs", spec, inputs, {}, PRECISE_CODES,
                          robust=True)
    return [pytest.param(case, id=f"{spec.name}-no-attrs")]


def _none_input_cases(spec):
    if not spec.inputs:
        return []
    last = spec.inputs[-1]
    if (spec.name, last) in OPTIONAL_NONE:
        return []
    inputs = _inputs(spec, len(spec.inputs) - 1) if len(spec.inputs) > 1 else []
    ops = ([scratch()] if inputs else []) + [
        Op(spec.name, inputs, {last: NONE}, **_out_kwargs(spec))]
    case = ops_case(f"{spec.name}-none-{last}", *ops, code=IA, kind="TypeError",
                    op_index=len(ops) - 1)
    return [pytest.param(case, id=f"{spec.name}-none-{last}")]


def _run_loop_case(h, case):
    if case is None:
        pytest.fail(f"ListOps failed at collection: {OPS_ERROR}")
    if getattr(case, "robust", False):
        # No required attributes: the call may run; if it fails, the failure is a precise
        # status that names the op.
        h.ensure_up()
        problems = []
        try:
            out, _ = case.run(h)
            if not out.ok:
                if out.code in VAGUE_CODES:
                    problems.append(f"vague status {out.describe()}")
                if not names(out.message, case.names[0]):
                    problems.append(f"the message does not name {case.names[0]!r}: "
                                    f"{out.message!r}")
                if out.op_index not in (None, 1):
                    problems.append(f"op_index {out.op_index}, expected 1")
        except Exception as e:  # noqa: BLE001
            problems.append(f"raised {e!r}")
        problems += h.post_check()
        if problems:
            pytest.fail(f"[{case.id}] " + "\n  - ".join(problems), pytrace=False)
        return
    run_checked(h, case)


def test_list_ops_was_collected(h):
    """The loops below cover exactly the ops of the server under test."""
    h.ensure_up()
    assert OPS, f"ListOps failed at collection: {OPS_ERROR}"
    live = [op.name for op in h.unary("ListOps", pb.ListOpsRequest(), pb.ListOpsResponse).ops]
    assert live == [op.name for op in OPS]


@pytest.mark.parametrize("case", _ops_param(_wrong_count_cases))
def test_every_op_wrong_input_count(h, case):
    _run_loop_case(h, case)


@pytest.mark.parametrize("case", _ops_param(_no_attrs_cases))
def test_every_op_without_attributes(h, case):
    _run_loop_case(h, case)


@pytest.mark.parametrize("case", _ops_param(_none_input_cases))
def test_every_op_none_for_last_tensor_input(h, case):
    _run_loop_case(h, case)
