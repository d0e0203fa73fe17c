"""What a profile records (torch.profiler and torch.autograd.profiler are built on it).

The server times the ops (the Profile RPC): each op it queues for the profiled session, with
its stream, device, input sizes and when its kernel ran. The client adds what only it knows:
the record_function ranges the program opened (and the ProfilerStep and backward ranges), and
which range each op was sent from, in its own log of the ops it sent, joined with the server's
list by order and name. While no profile is active, the cost is one flag read per op sent.
"""
import os
import sys
import time
import traceback

active = False  # read by _ops._send on every op

_state = None  # the _Recording while a profile records


class _Range:
    """A record_function range: its name, its client times (ns since the profile started) and
    the range it opened in."""

    __slots__ = ("name", "start", "end", "parent")

    def __init__(self, name, start, parent):
        self.name = name
        self.start = start
        self.end = None
        self.parent = parent


class _Recording:
    __slots__ = ("session", "t0", "server_t0", "ops", "ranges", "stack", "with_stack",
                 "record_shapes")

    def __init__(self, session, record_shapes, with_stack):
        self.session = session
        self.record_shapes = record_shapes
        self.with_stack = with_stack
        self.ops = []      # (name, first output id, innermost range, stack) per op sent
        self.ranges = []   # every range opened, in order
        self.stack = []    # the ranges open now
        self.t0 = time.perf_counter_ns()
        session.profile(True, record_shapes)
        # The server's clock starts at the Start call: its times are placed on the client's
        # from when the call returned.
        self.server_t0 = time.perf_counter_ns() - self.t0


def start(record_shapes=False, with_stack=False):
    """Starts recording the current session's ops; returns the recording (for stop)."""
    global active, _state
    from . import _api  # noqa: PLC0415 (imported by the autograd graph, which _api imports)
    if _state is not None:
        raise RuntimeError("Profiler is already enabled on this thread")
    _state = _Recording(_api.current_session(), record_shapes, with_stack)
    active = True
    return _state


def stop():
    """Stops recording: (the recording, the server's ProfileResponse) once the ops sent have
    run; None when no profile was recording."""
    global active, _state
    rec, _state = _state, None
    active = False
    if rec is None:
        return None
    end = time.perf_counter_ns() - rec.t0
    for r in rec.stack:  # ranges still open (a profile stopped inside them) end now
        r.end = end
    response = rec.session.profile(False)
    return rec, response


def sent(name, session, first_output):
    """Called by _ops._send for each op sent while a profile is active, with the id of its
    first output (0: none)."""
    rec = _state
    if rec is None or session is not rec.session:
        return
    stack = _user_stack() if rec.with_stack else None
    rec.ops.append((name, first_output, rec.stack[-1] if rec.stack else None, stack))


def push(name):
    """Opens a range (record_function's enter); returns it, or None when nothing records."""
    rec = _state
    if rec is None:
        return None
    r = _Range(name, time.perf_counter_ns() - rec.t0, rec.stack[-1] if rec.stack else None)
    rec.ranges.append(r)
    rec.stack.append(r)
    return r


def pop(r):
    """Closes range `r` (and any range opened in it and left open)."""
    rec = _state
    if r is None or rec is None or r not in rec.stack:
        return
    now = time.perf_counter_ns() - rec.t0
    while rec.stack:
        top = rec.stack.pop()
        top.end = now
        if top is r:
            break


def push_node(node_name):
    """The backward pass runs node `node_name`: torch's "autograd::engine::evaluate_function:
    <name>" range with the node's own range in it, around the ops the node sends. Returns the
    outer range (for pop), or None when nothing records."""
    outer = push(f"autograd::engine::evaluate_function: {node_name}")
    if outer is not None:
        push(node_name)
    return outer


_PACKAGE = os.path.dirname(os.path.abspath(__file__))


def _user_stack():
    """The program's frames that led to an op (innermost first), as torch prints them:
    "file.py(12): function"; tensord's own frames left out."""
    out = []
    for frame, line in traceback.walk_stack(sys._getframe(2)):
        path = frame.f_code.co_filename
        if path.startswith(_PACKAGE):
            continue
        out.append(f"{path}({line}): {frame.f_code.co_name}")
    return out


def join(rec, response):
    """The server's ops, each with the client's range it was sent from and its stack. An op
    with outputs is found by the id of its first output, which both sides know; the others
    (in-place ops that name no output) by order and name among the client's such ops, looking a
    few entries ahead past ops the server did not record (or the client did not log)."""
    by_output = {}
    unnamed = []
    for name, first, r, stack in rec.ops:
        if first:
            by_output[first] = (r, stack)
        else:
            unnamed.append((name, r, stack))
    out = []
    i = 0
    for op in response.ops:
        if op.first_output:
            r, stack = by_output.get(op.first_output, (None, None))
            out.append((op, r, stack))
            continue
        found = None
        for j in range(i, min(i + 8, len(unnamed))):
            if unnamed[j][0] == op.op:
                found = j
                break
        if found is None:
            out.append((op, None, None))
        else:
            out.append((op, unnamed[found][1], unnamed[found][2]))
            i = found + 1
    return out
