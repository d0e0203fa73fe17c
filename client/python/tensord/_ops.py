"""The op layer under tensord.Tensor: TensorBase (a handle: session, id, metadata, error) and
the one path every op takes, from Python arguments to a planned, queued OpCall (_queue).

Tensor (_tensor.py) derives from TensorBase and registers itself (set_tensor_class), so that the
outputs of ops made here are Tensors while this module imports only the layers below it.
"""
import numbers
import operator

import numpy as np

from . import _autocast
from . import _dtypes
from . import _grad_mode
from . import _profiling
from .autograd import graph as _graph
from ._errors import error_from_status
from ._session import pb

_tensor_class = None

# Tensor subclasses (torch's default __torch_function__): an op on an instance of a subclass of
# Tensor returns instances of that subclass (the most derived among its inputs), except for
# subclasses marked `_plain_results` (Parameter: torch's results of ops on parameters are plain
# tensors). Until a program makes such an instance, ops skip the look.
subclass_instances_made = False
_forced_class = []  # as_subclass's: the class of the next op's outputs


def propagates(cls):
    """Whether ops on instances of `cls` return `cls` (Parameter's `_plain_results`: no)."""
    return not getattr(cls, "_plain_results", False)


def result_class(inputs):
    """The class of the outputs of an op on `inputs`."""
    best = _tensor_class
    for t in inputs:
        kind = type(t)
        if kind is not best and issubclass(kind, best) and propagates(kind):
            best = kind
    return best


def as_result_class(inputs, outs):
    """`outs` of an op on `inputs`, each as the inputs' subclass when there is one (torch's
    default __torch_function__: `out.as_subclass(cls)`, an alias in the graph)."""
    if _forced_class or not outs:
        return outs
    cls = result_class(inputs)
    if cls is _tensor_class:
        return outs
    return [o.as_subclass(cls) for o in outs]


def keeps_subclass(fn):
    """A function of one tensor whose result takes that tensor's subclass (new_*, *_like)."""
    import functools  # noqa: PLC0415

    @functools.wraps(fn)
    def f(input, *args, **kwargs):
        out = fn(input, *args, **kwargs)
        if subclass_instances_made:
            out = as_result_class([input], [out])[0]
        return out
    return f


def set_tensor_class(cls):
    """The class of the tensors ops return (tensord.Tensor, set once by _tensor.py)."""
    global _tensor_class
    _tensor_class = cls


def new_tensor(session, tensor_id, info):
    """A tensord.Tensor handle on tensor `tensor_id` of `session`, whose metadata is `info`."""
    t = _tensor_class._new(session, tensor_id)
    t._info = info
    return t


class TensorBase:
    """A handle on a tensor of a tensord session: its id, its metadata once planned (or told by
    the server), and the error of the op that made it, if any. The server's tensor is released
    when the last Python reference goes."""

    __slots__ = ("_session", "_id", "_info", "_error", "_ag", "_vbase", "_inference",
                 "__weakref__")

    def __init__(self, *args, **kwargs):
        raise TypeError("create tensors with tensord.tensor(), tensord.zeros(), … ")

    @classmethod
    def _new(cls, session, tensor_id):
        t = object.__new__(cls)
        t._session = session
        t._id = tensor_id
        t._info = None
        t._error = None
        t._ag = None  # autograd's AutogradMeta once the tensor requires grad or has a grad_fn
        t._vbase = None  # a view's base (torch's Tensor._base): the tensor that is no view
        # torch's inference tensor: made in inference mode (an op's views refine it, _send)
        t._inference = _grad_mode.inference_used and _grad_mode.is_inference_mode_enabled()
        return t

    def __del__(self):
        try:
            if self._error is None:
                self._session.release(self._id)
        except Exception:
            pass

    def _meta(self):
        info = self._info
        if info is None:
            if self._error is None:
                self._session.flush()
            if self._error is not None:
                raise self._error
            info = self._info
        return info

    def _op(self, name, inputs=(), attrs=None, session=None):
        return _op(session or self._session, name, [self, *inputs], attrs)


_MAX_OUTPUT_IDS = 65537  # ids reserved for an op with a list of outputs (server max + 1)


class _Ints(list):
    """Marks a list attribute (IntList on the wire)."""


def _fill_attr(v, value):
    """Sets AttrValue `v` from a Python value."""
    t = type(value)
    if t is int:
        v.i = value
        return v
    if t is float:
        v.f = value
        return v
    if value is None:
        v.none = True
    elif isinstance(value, bool):
        v.b = value
    elif isinstance(value, _Ints) or (
            isinstance(value, (list, tuple))
            and all(isinstance(x, numbers.Integral) and not isinstance(x, bool) for x in value)):
        # A sequence of ints (roll's shifts, conv's stride, layer_norm's shape): an IntList,
        # as the planning extension takes it.
        v.ints.values.extend(int(x) for x in value)
    elif isinstance(value, numbers.Integral):
        v.i = int(value)
    elif isinstance(value, numbers.Real):
        v.f = float(value)
    elif isinstance(value, _dtypes.dtype):
        v.dtype = value.proto
    elif isinstance(value, _dtypes.device):
        v.device = str(value)
    elif isinstance(value, pb.IndexList):
        v.index.CopyFrom(value)
    elif isinstance(value, str):
        v.text = value
    else:
        raise TypeError(f"tensord: cannot send {type(value).__name__} as an op attribute")
    return v


def _attr(value):
    return _fill_attr(pb.AttrValue(), value)


def _int(value, op, name):
    if isinstance(value, bool) or not isinstance(value, (numbers.Integral, np.integer)):
        if isinstance(value, TensorBase) and value.dim() == 0 and not value.dtype.is_floating_point:
            return int(value.item())
        raise TypeError(f"{op}(): argument '{name}' must be int, not {type(value).__name__}")
    return operator.index(value)


def _int_list(args, op, name):
    """Sizes given as varargs ints or as one sequence (torch accepts both)."""
    if not args:
        raise TypeError(f'{op}() missing 1 required positional arguments: "{name}"')
    if len(args) == 1 and isinstance(args[0], (tuple, list, _dtypes.Size)):
        args = args[0]
    out = _Ints()
    for pos, a in enumerate(args):
        if isinstance(a, bool) or not isinstance(a, (numbers.Integral, np.integer)):
            if isinstance(a, TensorBase) and a.dim() == 0 and not a.dtype.is_floating_point:
                out.append(int(a.item()))
                continue
            raise TypeError(f"{op}(): argument '{name}' must be tuple of ints, but found element "
                            f"of type {type(a).__name__} at pos {pos}")
        out.append(operator.index(a))
    return out


def _int_or_ints(value, op, name):
    if isinstance(value, (tuple, list, _dtypes.Size)):
        return _int_list((value,), op, name)
    return _int(value, op, name)


def _is_scalar(x):
    return isinstance(x, (bool, numbers.Number, np.bool_, np.number)) and not isinstance(x, complex)


def _py_scalar(x):
    if isinstance(x, (np.bool_, bool)):
        return bool(x)
    if isinstance(x, (numbers.Integral, np.integer)):
        return int(x)
    return float(x)


def _wrap_dim(dim, rank, op):
    dim = operator.index(dim)
    lo, hi = (-rank, rank - 1) if rank > 0 else (-1, 0)
    if dim < lo or dim > hi:
        raise IndexError(f"Dimension out of range (expected to be in range of [{lo}, {hi}], but got {dim})")
    return dim + rank if dim < 0 else dim


def _op_on(session, device, name, inputs, attrs):
    """_op for an op that names `device` (None: none): pipelined as any op when the server has
    the device; else sent at once, so the server's error (FAILED_PRECONDITION: no such device)
    raises at the call, as torch's does, instead of at some later flush."""
    send_now = device is not None and not session.has_device(device)
    return _op(session, name, inputs, attrs, send_now=send_now)


def _call(name, inputs, attrs):
    """The OpCall message (for calls sent on their own: run_now)."""
    call = pb.OpCall(op=name, inputs=[t._id for t in inputs])
    if _dtypes._default_float is not _dtypes.float32:
        call.default_dtype = _dtypes._default_float.proto
    if attrs:
        for k, v in attrs.items():
            _fill_attr(call.attrs[k], v)
    return call


def _encode(session, name, input_ids, attrs, output_ids):
    """An OpCall's wire bytes on this thread's current stream: encoded by the planning extension
    when the session has it, else through the protobuf message."""
    stream = session.current_stream_id()
    planner = session.planner
    if planner is not None:
        return planner.encode_op(name, input_ids, attrs, output_ids, stream)
    call = pb.OpCall(op=name, inputs=input_ids, outputs=output_ids, stream=stream)
    if _dtypes._default_float is not _dtypes.float32:
        call.default_dtype = _dtypes._default_float.proto
    if attrs:
        for k, v in attrs.items():
            _fill_attr(call.attrs[k], v)
    return call.SerializeToString()


def _queue(session, name, inputs, attrs=None, n=None, send_now=False):
    """_send, and the op recorded in the backward graph when grad mode is on and an input
    requires grad (autograd/graph.py). In an autocast region, the inputs first take the dtypes
    torch's autocast gives that op (_autocast.py)."""
    if _autocast.active:
        inputs, attrs = _autocast.cast(name, inputs, attrs)
    if not _graph.active:
        if subclass_instances_made:
            return as_result_class(inputs, _send(session, name, inputs, attrs, n, send_now))
        return _send(session, name, inputs, attrs, n, send_now)
    in_place = name.endswith("_") and bool(inputs)
    record = False
    if _grad_mode.is_grad_enabled():
        for t in inputs:
            m = getattr(t, "_ag", None)
            if m is not None and (m.requires_grad or m.grad_fn is not None or
                                  m.view is not None and _graph._inherits(m)):
                record = True
                break
    if in_place and not record and _grad_mode.is_grad_enabled():
        _graph.check_view_creation(inputs[0])  # (a view of a base that requires grad)
    if record and in_place:
        return _graph.record_in_place(  # refused before it writes anything where it must be
            name, inputs, attrs, lambda: _send(session, name, inputs, attrs, n, send_now))
    outs = _send(session, name, inputs, attrs, n, send_now)
    if in_place:
        _graph.bump_version(inputs[0])
    if record:
        _graph.record(name, inputs, attrs, outs or ())
    elif outs and name != "detach":  # detach's alias is outside autograd, as torch's
        _graph.note_views(inputs, outs)
    if subclass_instances_made:
        return as_result_class(inputs, outs)
    return outs


def _check_inference_in_place(name, inputs):
    """torch's refusal of an in-place op on an inference tensor outside inference mode."""
    if inputs and name.endswith("_") and getattr(inputs[0], "_inference", False) and \
            not _grad_mode.is_inference_mode_enabled():
        raise RuntimeError(
            "Inplace update to inference tensor outside InferenceMode is not allowed.You can "
            "make a clone to get a normal tensor before doing inplace update.See "
            "https://github.com/pytorch/rfcs/pull/17 for more details.")


def _inference_views(inputs, outs):
    """torch's rule for views: a view of an input is an inference tensor exactly when that
    input is one (in inference mode or not); other outputs are one in inference mode only."""
    for o in outs:
        sid = o._info.storage_id
        for t in inputs:
            if t._info is not None and t._info.storage_id == sid and t._session is o._session:
                o._inference = t._inference
                break


def _send(session, name, inputs, attrs=None, n=None, send_now=False):
    """Op `name` on tensors `inputs`: planned here (its errors raise now), then queued, with `n`
    outputs (0: queued for its effect; None: as many as the planner says, or None when only the
    server can plan it). Returns the output tensors. When an input comes from a failed op, the
    outputs carry its error and nothing is sent (an op without outputs raises it).
    `send_now`: not planned here but sent at once, raising what the server says of it (a device
    it lacks)."""
    if attrs and "dtype" in attrs:
        d = attrs["dtype"]
        if d is float or d is int or d is bool:  # dtype=float: float64, as torch reads it
            attrs = {**attrs, "dtype": _dtypes.from_python_type(d)}
    planner = session.planner
    if _grad_mode.inference_used:
        _check_inference_in_place(name, inputs)
    if planner is not None and not send_now:
        # The common case in one call: planned, outputs named, the OpCall encoded.
        queued = planner.queue(name, inputs, attrs, n, session.current_stream_id(), session)
        if queued is not None:
            if len(queued) == 3:
                raise error_from_status(*queued)
            first, metas, call, input_ids, aliases = queued
            if n is None and not metas:
                return []  # a list of no views (unbind of an empty dim): nothing to send
            new = (_forced_class[-1] if _forced_class else _tensor_class)._new
            outs = []
            for i, meta in enumerate(metas):
                o = new(session, first + i)
                o._info = meta
                outs.append(o)
            if _grad_mode.inference_used:
                _inference_views(inputs, outs)
            if _profiling.active:
                _profiling.sent(name, session, first if metas else 0)
            session.submit(call, input_ids, outs)
            if aliases is not None and name != "detach":  # detach's alias is no view (torch)
                _graph.note_bases(inputs, outs, aliases)
            return outs
    for t in inputs:
        if not isinstance(t, TensorBase):
            raise TypeError(f"{name}(): expected a tensord Tensor, got {type(t).__name__}")
        if t._session is not session:
            raise RuntimeError(f"{name}(): tensors of different tensord sessions")
    metas = None if send_now else session.plan(name, inputs, attrs)
    if n is None:
        if metas is None:
            return None
        n = len(metas)
        if n == 0:
            return []  # a list of no views (unbind of an empty dim): nothing to send
    first = session.new_ids(n) if n else 0
    new = (_forced_class[-1] if _forced_class else _tensor_class)._new
    outs = [new(session, first + i) for i in range(n)]
    if metas is not None:
        for o, meta in zip(outs, metas):
            o._info = meta
        if _grad_mode.inference_used:
            _inference_views(inputs, outs)
    for t in inputs:
        if t._error is not None:  # computed from a failed op: fails the same way, unsent
            if not outs:
                raise t._error
            for o in outs:
                o._error = t._error
            return outs
    input_ids = [t._id for t in inputs]
    if _profiling.active:
        _profiling.sent(name, session, first if outs else 0)
    session.submit(_encode(session, name, input_ids, attrs, [o._id for o in outs]), input_ids,
                   outs, planned=metas is not None)
    if metas is None and _grad_mode.inference_used and outs and \
            all(o._info is not None for o in outs):  # (the server's metadata, sent at once)
        _inference_views(inputs, outs)
    if name != "detach" and not _graph.active:  # (active: _queue's)
        if metas is not None:
            _graph.note_views(inputs, outs)
        elif outs:  # planned by the server: which outputs are views is known once it replies
            _graph.note_unplanned(inputs, outs)
    return outs


def _op(session, name, inputs, attrs=None, returns_nothing=False, send_now=False):
    """_queue for an op with one output (None for an op queued for its effect)."""
    outs = _queue(session, name, inputs, attrs, 0 if returns_nothing else 1, send_now)
    return None if returns_nothing else outs[0]
