"""The backward graph: nodes recorded by the ops that tensors requiring grad go through, and the
engine that walks them from an output back to the leaves (torch's reverse-mode autograd).

Every op a client sends passes through `_ops._queue`; when gradient mode is on and an input
requires grad, `_ops._queue` calls `record`, which adds a Node for the op (its formula from
`derivatives.py`, keyed by the server op's name, as torch's derivatives.yaml is keyed by ATen's)
and makes the floating-point outputs non-leaf tensors with that node as their grad_fn. So a
client composition (F.linear as t, matmul and add) gets its gradient from its server ops'
formulas, and every formula is itself a composition of server ops: backward runs on the server,
on whatever device the tensors live, pipelined like any other ops.
"""
import contextlib
import functools
import inspect
import itertools
import warnings
import weakref

from .. import _grad_mode, _profiling
from . import anomaly_mode as _anomaly
from .derivatives import (_geometry, _not_implemented, _places, _torch, as_strided_backward,
                          storage_span)

_RELEASED = ("Trying to backward through the graph a second time (or directly access saved "
             "tensors after they have already been freed). Saved intermediate values of the "
             "graph are freed when you call .backward() or autograd.grad(). Specify "
             "retain_graph=True if you need to backward through the graph a second time or if "
             "you need to access saved tensors after calling backward.")

# Whether any tensor has ever required grad in this process: until one has, _ops._queue skips
# recording with one global read.
active = False

# For each storage that a live node saved a tensor of ((session, storage id) -> [nodes
# holding it, in-place writes since the first]): a node checks at backward that the tensors it
# saved were not written since (torch's version counter), so that a modified input raises
# instead of giving a wrong gradient. Entries go with the last node that holds them.
_saved_storages = {}


def _storage_key(t):
    return (id(t._session), t._meta().storage_id)


def bump_version(t):
    """Called by _ops._queue for every in-place op while autograd is active."""
    if _saved_storages and t._error is None:
        entry = _saved_storages.get(_storage_key(t))
        if entry is not None:
            entry[1] += 1


def _hold(t):
    key = _storage_key(t)
    entry = _saved_storages.get(key)
    if entry is None:
        entry = _saved_storages[key] = [0, 0]
    entry[0] += 1
    return (t, key, entry[1])


def _let_go(versions):
    for _, key, _ in versions:
        entry = _saved_storages.get(key)
        if entry is not None:
            entry[0] -= 1
            if entry[0] <= 0:
                del _saved_storages[key]


def _tensors_in(saved):
    if saved is None:
        return ()
    if isinstance(saved, (tuple, list)):
        return [t for t in saved if t is not None and hasattr(t, "_ag")]
    return [saved] if hasattr(saved, "_ag") else ()


class AutogradMeta:
    """What a tensor carries for autograd: whether a leaf requires grad, the node that made it
    (None for a leaf) and which of that node's outputs it is, whether a non-leaf keeps its
    gradient (retain_grad), and its hooks. A view made while autograd is active also carries
    its place in its base (`view`, a _View): when an in-place op recorded on the base or on one
    of its views has changed the base's history since the view's grad_fn was made, the view's
    grad_fn is made again from the base's (torch's view regeneration: AsStridedBackward0)."""

    __slots__ = ("requires_grad", "_fn", "output_nr", "retains_grad", "hooks", "acc", "view",
                 "version", "hist", "own")

    def __init__(self, requires_grad=False, grad_fn=None, output_nr=0):
        self.requires_grad = requires_grad
        self._fn = grad_fn
        self.output_nr = output_nr
        self.retains_grad = False
        self.hooks = None
        self.acc = None  # a weak reference to the leaf's AccumulateGrad while a graph holds it
        self.view = None  # a view's _View
        self.version = 0  # a view's: its base's `hist` when its grad_fn was made
        self.hist = 0  # a base's: a stamp from _clock, new each time an in-place op changes it
        self.own = False  # taken for a tensor of its own though it shares a storage (unsafe_split)

    @property
    def grad_fn(self):
        view = self.view
        if view is not None and self.version != _hist(view.base):
            _regenerate(self)
        return self._fn


class _SavedOutputMeta(AutogradMeta):
    """The AutogradMeta of the alias a node saves of its own output: its history is that node,
    held weakly (torch's SavedVariable of an output), so that the output and its node are no
    reference cycle and go as soon as the program and the graph drop them."""

    __slots__ = ("_node",)

    def __init__(self, node, output_nr):
        super().__init__(False, None, output_nr)
        self._node = weakref.ref(node)

    @property
    def grad_fn(self):
        return self._node()


def _save_outputs(saved, outs):
    """`saved` with each of `outs` in it replaced by an alias (a second handle on the same
    storage, so writes to the output still show in its version): a node holds those aliases
    instead of its outputs, which hold the node. Returns (saved, [(alias, output index)])."""
    if saved is None or not outs:
        return saved, ()
    single = not isinstance(saved, (tuple, list))
    items = [saved] if single else list(saved)
    aliases = []
    for k, v in enumerate(items):
        for i, o in enumerate(outs):
            if v is o:
                from .._ops import _send  # noqa: PLC0415
                alias = _send(o._session, "alias", [o], None, 1)[0]
                alias._vbase = None  # (its base would be the output: a cycle)
                items[k] = alias
                aliases.append((alias, i))
                break
    if not aliases:
        return saved, ()
    return (items[0] if single else type(saved)(items)), aliases


def requires_grad(t):
    m = t._ag
    return m is not None and (m.requires_grad or m.grad_fn is not None or _inherits(m))


# Why torch refuses an in-place op under grad mode on a view made in no_grad mode.
_NO_GRAD_VIEW = ("A view was created in no_grad mode and is being modified inplace with grad "
                 "mode enabled. Given that this use case is ambiguous and error-prone, it is "
                 "forbidden. You can clarify your code by moving both the view and the "
                 "inplace either both inside the no_grad block (if you don't want the "
                 "inplace to be tracked) or both outside (if you want the inplace to be "
                 "tracked).")


def _inherits(m):
    """torch's rule for a view made in no_grad mode of a tensor that requires grad: it requires
    grad too, as a leaf whose gradient goes nowhere (no edge: backward through ops on it runs
    and leaves its .grad and its base's untouched)."""
    v = m.view
    return v is not None and v.creation is _NO_GRAD_VIEW and requires_grad(v.base)


def set_requires_grad(t, flag, what="floating point and complex"):
    global active
    m = t._ag
    if m is not None and m.grad_fn is not None:
        if not flag:
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use a "
                "computed variable in a subgraph that doesn't require differentiation use "
                "var_no_grad = var.detach().")
        return
    if flag and not (t.dtype.is_floating_point):
        raise RuntimeError(f"only Tensors of {what} dtype can require gradients")
    if m is None:
        if not flag:
            return
        t._ag = m = AutogradMeta()
    m.requires_grad = bool(flag)
    if flag and not active:
        _link_earlier_views()
        active = True


# The class of each node name (SumBackward0, …): torch's grad_fn objects are instances of one
# class per backward formula, and programs print type(t.grad_fn) or its __name__.
_node_classes = {}


def _node_class(name):
    cls = _node_classes.get(name)
    if cls is None:
        short = name.rpartition("::")[2]
        cls = _node_classes[name] = type(short, (Node,), {
            "__slots__": (), "__module__": "builtins", "__qualname__": short})
    return cls


class Node:
    """One recorded op: `next_edges[i]` is (node, output_nr) of input i, or None where input i
    needs no gradient; `apply(grads)` maps the gradients of the outputs (None where an output got
    none) to the gradients of the inputs. Each node is an instance of its name's subclass."""

    def __new__(cls, name, *args):
        return object.__new__(_node_class(name) if cls is Node else cls)

    def rename(self, name):
        """Takes torch's name for what the program wrote (and that name's class)."""
        self._name = name
        if type(self).__module__ == "builtins":
            self.__class__ = _node_class(name)

    __slots__ = ("_name", "next_edges", "_backward", "saved", "released", "input_meta",
                 "n_outputs", "on_release", "versions", "hooks", "post_hooks", "trace",
                 "__weakref__")

    def __init__(self, name, backward, saved, next_edges, input_meta, n_outputs):
        self._name = name
        self._backward = backward
        self.saved = saved
        self.next_edges = next_edges
        self.input_meta = input_meta  # (shape, dtype, device) of each input
        self.n_outputs = n_outputs
        self.released = False
        self.on_release = None  # a custom Function's: frees its ctx's saved tensors
        self.hooks = None  # output_nr -> hooks of the non-leaf tensor that is that output
        self.post_hooks = None  # register_hook's: called with (grad_inputs, grad_outputs)
        # the forward call's stack while anomaly detection is on
        self.trace = _anomaly.forward_stack() if _anomaly._state.enabled else None
        self.versions = [_hold(t) for t in _tensors_in(saved) if t._error is None]
        if _saved_hooks:  # saved_tensors_hooks: the node keeps what pack gives, not the tensors
            self.saved = _PackedSaved(pack_saved(saved))
            self.versions = [(_Described(t), key, v) for t, key, v in self.versions]

    def __del__(self):
        try:
            _let_go(self.versions)
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass

    def name(self):
        return self._name

    def output_hooks(self, nr):
        """The hooks of output `nr` (Tensor.register_hook on a non-leaf): each is called with
        the gradient of that output before the node uses it, and what it returns replaces it."""
        if self.hooks is None:
            self.hooks = {}
        return self.hooks.setdefault(nr, [])

    @property
    def next_functions(self):
        return tuple((e[0], e[1]) if e is not None else (None, 0) for e in self.next_edges)

    def register_hook(self, fn):
        """torch's Node.register_hook: fn(grad_inputs, grad_outputs) is called after the node
        computed the gradients of its inputs; a tuple it returns replaces them."""
        from ..utils.hooks import RemovableHandle  # noqa: PLC0415
        if self.post_hooks is None:
            from collections import OrderedDict  # noqa: PLC0415
            self.post_hooks = OrderedDict()  # (a dict the handle can refer to weakly)
        handle = RemovableHandle(self.post_hooks)
        self.post_hooks[handle.id] = fn
        return handle

    def run_post_hooks(self, in_grads, grads):
        gi, go = tuple(in_grads), tuple(grads)
        for hook in list(self.post_hooks.values()):
            r = hook(gi, go)
            if r is None:
                continue
            r = tuple(r) if isinstance(r, (tuple, list)) else (r,)
            if len(r) != len(gi):
                raise RuntimeError(f"hook '{getattr(hook, '__name__', 'hook')}' has returned an "
                                   f"incorrect number of values (got {len(r)}, but expected "
                                   f"{len(gi)})")
            gi = r
        return gi

    def __repr__(self):
        module = type(self).__module__
        prefix = "" if module == "builtins" else module + "."
        return f"<{prefix}{type(self).__qualname__} object at {hex(id(self))}>"

    def apply(self, grads):
        if self.released:
            raise RuntimeError(_RELEASED)
        for t, key, version in self.versions:
            now = _saved_storages[key][1]
            if now != version:
                raise RuntimeError(_modified_in_place(t, now, version))
        saved = self.saved
        if type(saved) is _PackedSaved:
            saved = unpack_saved(saved.value)
        return self._backward(saved, grads)

    def release(self):
        self.saved = None
        _let_go(self.versions)
        self.versions = ()
        self.released = True
        if self.on_release is not None:
            self.on_release()


# ---- saved tensors hooks (torch.autograd.graph's saved_tensors_hooks, save_on_cpu) ----

_saved_hooks = []  # (pack, unpack) pairs, innermost last; per process, as torch's defaults
_saved_hooks_disabled = [None]  # disable_saved_tensors_hooks' message while it is in effect


class _Packed:
    """What a node keeps of a saved tensor while saved_tensors_hooks are set: pack's value and
    the unpack that gives the tensor back at backward."""

    __slots__ = ("unpack", "value")

    def __init__(self, unpack, value):
        self.unpack, self.value = unpack, value


class _PackedSaved:
    """A node's saved values with their tensors packed (what it keeps under saved_tensors_hooks,
    so that apply tells them from plain ones by one type check)."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


def _modified_in_place(t, now, version):
    """torch's error (SavedVariable::unpack) for a saved tensor written since it was saved: an
    output names the node that saved it, an input its own history (None for a leaf)."""
    m = getattr(t, "_ag", None)
    grad_fn = m.grad_fn if m is not None else None
    history = (f", which is output {m.output_nr} of {grad_fn.name()},"
               if grad_fn is not None else "")
    hint = ("Hint: the backtrace further above shows the operation that failed to compute its "
            "gradient. The variable in question was changed in there or anywhere later. Good "
            "luck!" if _anomaly._state.enabled else
            "Hint: enable anomaly detection to find the operation that failed to compute its "
            "gradient, with torch.autograd.set_detect_anomaly(True).")
    return (f"one of the variables needed for gradient computation has been modified by an "
            f"inplace operation: [{t.type()} {list(t.shape)}]{history} is at version {now}; "
            f"expected version {version} instead. {hint}")


class _Described:
    """A saved tensor's type, shape and history, for the error when it was modified in place
    (the node no longer holds the tensor itself)."""

    __slots__ = ("_type", "shape", "_ag")

    def __init__(self, t):
        self._type, self.shape, self._ag = t.type(), tuple(t.shape), getattr(t, "_ag", None)

    def type(self):
        return self._type


def pack_saved(saved):
    pack, unpack = _saved_hooks[-1]

    def one(v):
        return _Packed(unpack, pack(v)) if hasattr(v, "_ag") else v
    if isinstance(saved, tuple):
        return tuple(one(v) for v in saved)
    if isinstance(saved, list):
        return [one(v) for v in saved]
    return one(saved)


def unpack_saved(saved):
    def one(v):
        if type(v) is not _Packed:
            return v
        t = v.unpack(v.value)
        if not hasattr(t, "_ag"):
            raise TypeError(f"Output of saved tensor unpack_hook expected to be a Tensor but "
                            f"got result of type {type(t).__name__}")
        return t
    if isinstance(saved, tuple):
        return tuple(one(v) for v in saved)
    if isinstance(saved, list):
        return [one(v) for v in saved]
    return one(saved)


class saved_tensors_hooks:
    """Within it, each tensor an op saves for backward is kept as pack_hook(tensor) and given
    back as unpack_hook(that) when backward needs it (torch.autograd.graph.saved_tensors_hooks;
    tensors saved by a custom Function's save_for_backward too)."""

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        if _saved_hooks_disabled[0] is not None:
            raise RuntimeError(_saved_hooks_disabled[0])
        _saved_hooks.append((self.pack_hook, self.unpack_hook))

    def __exit__(self, *args):
        _saved_hooks.pop()


class save_on_cpu(saved_tensors_hooks):
    """Saved tensors kept in the server's host memory and moved back to their device for
    backward (for a GPU's memory; on the CPU nothing is copied)."""

    def __init__(self, pin_memory=False):
        def pack_to_cpu(tensor):
            return (tensor.device, tensor.cpu())

        def unpack_from_cpu(packed):
            device, tensor = packed
            return tensor.to(device, non_blocking=pin_memory)
        super().__init__(pack_to_cpu, unpack_from_cpu)


@contextlib.contextmanager
def disable_saved_tensors_hooks(error_message):
    """Setting saved_tensors_hooks inside raises RuntimeError(error_message)."""
    previous = _saved_hooks_disabled[0]
    _saved_hooks_disabled[0] = error_message
    try:
        yield
    finally:
        _saved_hooks_disabled[0] = previous


class AccumulateGrad:
    """The node of a leaf tensor that requires grad: adds what reaches it to the leaf's .grad."""

    __slots__ = ("variable", "__weakref__")
    next_edges = ()

    def __init__(self, variable):
        self.variable = variable

    def name(self):
        return "torch::autograd::AccumulateGrad"

    @property
    def next_functions(self):
        return ()

    def __repr__(self):
        return f"<AccumulateGrad object at {hex(id(self))}>"


def _edge(t):
    """The edge of input `t`: its grad_fn, an AccumulateGrad for a leaf that requires grad, or
    None."""
    m = t._ag
    if m is None:
        return None
    if m.grad_fn is not None:
        return (m.grad_fn, m.output_nr)
    if not m.requires_grad:
        return None
    acc = m.acc() if m.acc is not None else None
    if acc is None:  # one AccumulateGrad per leaf while a graph holds it (torch's grad_accumulator_)
        acc = AccumulateGrad(t)
        m.acc = weakref.ref(acc)
    return (acc, 0)


def check_in_place(target):
    """An in-place view op (t_, squeeze_ …) under grad mode: torch's error for a leaf that
    requires grad (any other tensor keeps its history: after_view_in_place)."""
    if _grad_mode.is_grad_enabled():
        _refuse_leaf(target)


def check_view_creation(t):
    """An in-place op not recorded, on a view made in no_grad mode (or one of several views
    an op returned) whose base requires grad: torch counts the view as requiring grad, and
    refuses the op as it refuses a recorded one."""
    m = getattr(t, "_ag", None)
    if m is not None and m.view is not None and m.view.creation is not None and \
            requires_grad(m.view.base):
        raise RuntimeError(m.view.creation)


def _refuse_in_place(name):
    raise RuntimeError(f"tensord: the in-place op {name} writes a tensor that requires grad or "
                       f"takes one as input, and autograd cannot record it here "
                       f"({name.rstrip('_')} has no derivative, or the tensor shares its "
                       f"storage with tensors autograd does not know as its base or views: "
                       f"one given another's storage by set_): use the out-of-place "
                       f"{name.rstrip('_')} (or run it under no_grad)")


def _refuse_leaf(target):
    m = target._ag
    if m is not None and m.requires_grad and m.grad_fn is None:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                           "operation.")


# ---- views: in-place ops on a view or on its base (torch's CopySlices and view regeneration) --

class _View:
    """Where a view lies in its base's storage: its base (the tensor it was viewed from, or that
    tensor's own base: always a tensor that is no view) and its sizes, strides and storage
    offset. The base's geometry is read when it is needed (an in-place view op such as t_ on the
    base changes it)."""

    __slots__ = ("base", "info", "creation")

    def __init__(self, base, info, creation=None):
        self.base = base
        self.info = info  # the view's metadata when it was made (read when it is needed)
        # why torch refuses in-place ops on it under grad mode (its creation meta): made in
        # no_grad mode, or one of the outputs of an op that returns several views
        self.creation = creation

    @property
    def storage(self):
        return self.info.storage_id

    @property
    def sizes(self):
        return tuple(self.info.sizes)

    @property
    def strides(self):
        return tuple(self.info.strides)

    @property
    def offset(self):
        return self.info.storage_offset

    def geometry(self):
        """(base sizes, base strides, the view's offset from the base's, storage span), where
        an in-place op on the view writes into its base (CopySlices); None where the base is
        not a dense block its views can be addressed in (or no longer holds the view's
        storage: set_, resize_)."""
        from .._memory_format import is_non_overlapping_and_dense  # noqa: PLC0415
        info = self.base._meta()
        sizes, strides = tuple(info.sizes), tuple(info.strides)
        offset = self.offset - info.storage_offset
        if offset < 0 or info.storage_id != self.storage or \
                not is_non_overlapping_and_dense(list(sizes), list(strides)):
            return None
        return sizes, strides, offset, storage_span((sizes, strides, 0),
                                                    (self.sizes, self.strides, offset))


# The stamps of bases' histories: each recorded in-place op on a base or a view of it gives the
# base a new one, never given before, so a view's recorded stamp matches only the history it
# was made from.
_clock = itertools.count(1)


def _hist(base):
    m = base._ag
    return 0 if m is None else m.hist


def detach_in_place(t):
    """Tensor.detach_: t becomes a leaf that does not require grad; its views keep the history
    they were made with (as torch's: detach_ is no write), so t keeps its history stamp."""
    m = t._ag
    if m is not None:
        m._fn, m.output_nr, m.requires_grad, m.view = None, 0, False, None
        m.retains_grad, m.hooks = False, None


def _move_retainer(old, old_nr, new):
    """retain_grad follows a tensor's new history (as torch 1.13's retains_grad hook does)."""
    hooks = old.hooks.get(old_nr) if old is not None and old.hooks else None
    for hook in [h for h in hooks or () if getattr(h, "retains", False)]:
        hooks.remove(hook)
        new.output_hooks(0).append(hook)


def note_bases(inputs, outs, aliases):
    """Each output that is a view of input aliases[i] (shares its storage and dtype: the
    planner says which) learns its base (`_vbase`, torch's Tensor._base: the input's own base
    where the input is a view). While autograd is active, note_views (called by _ops._queue
    and record) also gives it its place in the base; a view made before autograd was active is
    listed, to learn its place when it becomes active (_link_earlier_views)."""
    for o, k in zip(outs, aliases):
        if k >= 0:
            t = inputs[k]
            base = t._vbase
            o._vbase = t if base is None else base
            if not active:
                _remember_earlier(o)


# Weak references to the views made while autograd was not active (pruned of the dead ones
# when the list doubles): linked to their bases when it becomes active.
_earlier_views = []
_earlier_limit = [1024]


def _remember_earlier(view):
    _earlier_views.append(weakref.ref(view))
    if len(_earlier_views) > _earlier_limit[0]:
        _earlier_views[:] = [r for r in _earlier_views if r() is not None]
        _earlier_limit[0] = max(1024, 2 * len(_earlier_views))


def note_views(inputs, outs, multi=None):
    """Outputs that are views (note_bases; or, where the planning extension's queue did not
    plan the op, outputs that share a storage and dtype with an input: they learn their base
    here) learn their place in their base while autograd is active, so that a recorded
    in-place op on a view changes its base's history and one on a base changes its views'."""
    for o in outs:
        info = o._info
        if info is None or o._error is not None:
            continue
        base = o._vbase
        if base is None:
            sid = info.storage_id
            for t in inputs:
                ti = getattr(t, "_info", None)
                if ti is not None and ti.storage_id == sid and t is not o and \
                        t._session is o._session and t._error is None:
                    base = t._vbase
                    if base is None:
                        base = t
                    if base.dtype is not o.dtype:
                        base = None
                    break
            if base is None:
                continue
            o._vbase = base
            if not active:
                _remember_earlier(o)
        if active:
            _link_view(o, base, info, multi)


def _link_view(o, base, info, multi=None):
    bm = base._ag
    if bm is None:
        bm = base._ag = AutogradMeta()
    om = o._ag
    if om is None:
        om = o._ag = AutogradMeta()
    if multi is not None:
        creation = (f"Output {om.output_nr} of {multi} is a view and is being modified "
                    f"inplace. This view is the output of a function that returns multiple "
                    f"views. Such functions do not allow the output views to be modified "
                    f"inplace. You should replace the inplace operation by an out-of-place one.")
    elif not _grad_mode.is_grad_enabled():
        creation = _NO_GRAD_VIEW
    else:
        creation = None
    om.view = _View(base, info, creation)
    om.version = bm.hist


# The outputs (weakly) of ops the server planned while autograd was not active (a client
# without the planning extension), with their inputs: which are views is known from the
# outputs' metadata once the server replied. Resolved when the list doubles (and when autograd
# becomes active), so inputs are held only while their op's reply is outstanding and an output
# that went is forgotten.
_unplanned = []
_unplanned_limit = [64]


def note_unplanned(inputs, outs):
    _unplanned.append(([weakref.ref(o) for o in outs], [t for t in inputs if hasattr(t, "_ag")]))
    if len(_unplanned) >= _unplanned_limit[0]:
        _resolve_unplanned(wait=False)
        _unplanned_limit[0] = max(64, 2 * len(_unplanned))


def _resolve_unplanned(wait):
    pending = []
    for refs, inputs in _unplanned:
        outs = [o for o in (r() for r in refs) if o is not None and o._error is None]
        if not outs:
            continue
        if not wait and any(o._info is None for o in outs):
            pending.append((refs, inputs))
            continue
        for o in outs:
            o._meta()
        note_views([t for t in inputs if t._error is None], outs)
    _unplanned[:] = pending


def _link_earlier_views():
    """Autograd has become active: the views made before learn their place in their bases (as
    they are now: an in-place view op such as t_ may have changed a view since), so that an
    in-place op recorded on one of them, or on its base, is followed as on any view."""
    _resolve_unplanned(wait=True)  # (not active yet: lists the views it finds)
    views = [r() for r in _earlier_views]
    _earlier_views.clear()
    for o in views:
        if o is None:
            continue
        base = o._vbase
        if base is None or o._error is not None or base._error is not None:
            continue
        info = o._meta()
        if info.storage_id == base._meta().storage_id:
            _link_view(o, base, info)


def composite_in_place(name, inputs, attrs, send):
    """An in-place op made of other ops (`send`, run with recording off) recorded as one node,
    the formula of `name`, where _ops._queue would record a server op `name`: as torch records
    its single op (exponential_, random_, bernoulli_ with a tensor of probabilities)."""
    if recording(inputs):
        def quietly():
            with _grad_mode.no_grad():
                send()
            return inputs[0]
        return record_in_place(name, inputs, attrs, quietly)
    send()
    return inputs[0]


def recording(inputs):
    """Whether an op on `inputs` is recorded now (_ops._queue tests the same inline, on its hot
    path)."""
    return active and _grad_mode.is_grad_enabled() and any(
        hasattr(t, "_ag") and requires_grad(t) for t in inputs)


def after_server_planned(name, inputs, attrs, outs):
    """An op sent at once for the server to plan (a list of outputs when the client has no
    planner) made `outs` outside _ops._queue: recorded, or its views noted, as _queue does."""
    if recording(inputs):
        record(name, inputs, attrs, outs)
    elif name != "detach":
        note_views(inputs, outs)


def name_node(t, before, name):
    """The node recorded for an in-place op on t (no view), if one was (t's grad_fn is no more
    `before`), takes torch's name for what the program wrote (`x[mask] = v`, a masked fill
    here, is torch's index_put_)."""
    m = t._ag
    if m is not None and m.view is None and m._fn is not None and m._fn is not before:
        m._fn.rename(name)


def relink_view(t, same_storage=True):
    """After an in-place view op (t_, squeeze_, as_strided_ …) changed t's metadata; or (not
    `same_storage`) after set_, resize_ or `.data =` gave t other data, which autograd does not
    follow, as torch's `.data` is not followed: t is no view of its old base any more."""
    if not same_storage:
        t._vbase = None
    m = t._ag
    if m is not None and m.view is not None:
        m.view = _View(m.view.base, t._meta(), m.view.creation) if same_storage else None


def _regenerate(m):
    """A view's grad_fn made again from its base's history (AsStridedBackward0 of the base's
    grad_fn), or none where the base has none."""
    view = m.view
    m.version = _hist(view.base)
    edge = _edge(view.base)
    old, old_nr = m._fn, m.output_nr
    m.output_nr = 0
    if edge is None:
        m._fn = None
        return
    b = view.base
    info = b._meta()
    if info.storage_id == view.storage:
        backward = as_strided_backward(_geometry(info), (view.sizes, view.strides, view.offset),
                                       tuple(b.shape))
    else:  # set_ or resize_ gave the base other data
        backward = _not_implemented("as_strided of a view whose base has other data now")
    m._fn = Node("AsStridedBackward0", backward, None, [edge],
                 [(tuple(b.shape), b.dtype, b.device)], 1)
    if m.retains_grad:
        _move_retainer(old, old_nr, m._fn)


def after_view_in_place(t, old_geometry, old_shape):
    """After an in-place view op (t_, squeeze_, as_strided_ …) run where autograd does not
    record (no_grad) gave t other metadata over the same storage: a tensor with history keeps
    it, through the map from its old elements to its new ones (torch's view of the old value),
    and a view keeps its place in its base."""
    m = t._ag
    if m is None:
        return
    fn = m.grad_fn
    if fn is not None:
        node = Node("AsStridedBackward0", as_strided_backward(
            old_geometry, _geometry(t._meta()), old_shape), None, [(fn, m.output_nr)],
            [(old_shape, t.dtype, t.device)], 1)
        new = t._ag = AutogradMeta(False, node, 0)
        new.view, new.version, new.hist = m.view, m.version, m.hist
        if m.retains_grad:
            new.retains_grad = True
            _move_retainer(fn, m.output_nr, node)
    relink_view(t)


def _copy_slices(view, geometry, fn):
    """The backward of an in-place op `fn` on a view, as a node of its base (torch's
    CopySlices): the base's gradient passes through unchanged except where the view lies, which
    gets what fn gives its input 0; fn's other inputs get theirs. As torch's: the gradient
    copied into a tensor of the base's layout and the view's part replaced in place; under
    create_graph, the same as a composition of differentiable ops. (It keeps the view's
    geometry, not the view: the base holds this node, so a reference to the base would be a
    cycle.)"""
    sizes, strides, offset, span = geometry
    view_sizes, view_strides = view.sizes, view.strides
    numel = 1
    for n in sizes:
        numel *= n
    in_base = span == numel  # the view lies within the base's own elements

    def backward(saved, grads):
        g = grads[0]
        api = _torch()
        if in_base and not _grad_mode.is_grad_enabled():
            result = api.empty_strided(sizes, strides, dtype=g.dtype, device=g.device)
            result.copy_(g)
            part = result.as_strided(view_sizes, view_strides, offset)
            res = fn.apply([part.clone()])
            if res[0] is None:
                part.zero_()
            else:
                part.copy_(_validate(fn, 0, res[0]))
            return [result] + list(res[1:])
        base_places = _places(sizes, strides, 0, span, g.device)
        view_places = _places(view_sizes, view_strides, offset, span, g.device)
        flat = api.zeros(span, dtype=g.dtype, device=g.device).index_add(0, base_places,
                                                                       g.reshape(-1))
        res = fn.apply([flat.as_strided(view_sizes, view_strides, offset)])
        if res[0] is None:
            flat = flat.index_fill(0, view_places, 0)
        else:
            flat = flat.scatter(0, view_places, _validate(fn, 0, res[0]).reshape(-1))
        return [flat.as_strided(sizes, strides, 0)] + list(res[1:])
    return backward


def _whole_storage(t):
    info = t._meta()
    n = 1
    for s in info.sizes:
        n *= s
    return info.storage_offset == 0 and n * t.dtype.itemsize == info.storage_nbytes and \
        t.is_non_overlapping_and_dense()


def record_in_place(name, inputs, attrs, send):
    """In-place op `name` under grad mode with an input that requires grad (torch's
    rebase_history): the target takes a new grad_fn, the op's out-of-place formula, whose edge
    to the target is the target's old history. Where the formula needs the target's value from
    before the op (mul_'s), a copy is taken first, as torch saves `original_self`. On a view,
    the view's base takes a CopySlices node over its old history and the op's formula; the
    base's other views take their grad_fn from it when next used. Refused, before anything is
    written, for a leaf that requires grad or a view of one (torch's errors), and for a tensor
    that shares its storage with tensors autograd does not know as its base or views (given
    another tensor's storage by set_)."""
    from . import derivatives  # noqa: PLC0415
    target = inputs[0]
    m = target._ag
    view = m.view if m is not None else None
    if view is not None:
        if view.creation is not None:
            raise RuntimeError(view.creation)
        for leaf in (m, view.base._ag):  # the view made a leaf by requires_grad_(), or its base
            if leaf is not None and leaf.requires_grad and leaf._fn is None:
                raise RuntimeError("a view of a leaf Variable that requires grad is being used "
                                   "in an in-place operation.")
    else:
        _refuse_leaf(target)
    base_name = name[:-1]
    formula = derivatives.FORMULAS.get(name) or derivatives.FORMULAS.get(base_name)
    geometry = view.geometry() if view is not None else None
    if formula is None or not target.dtype.is_floating_point or (
            geometry is None if view is not None else not (m is not None and m.own or
                                                           _whole_storage(target))):
        _refuse_in_place(name)
    node_name, saved, backward = derivatives.make(formula, base_name, inputs, attrs, [target])
    edges = [_edge(t) if hasattr(t, "_ag") else None for t in inputs]
    input_meta = [(tuple(t.shape), t.dtype, t.device) if e is not None else None
                  for t, e in zip(inputs, edges)]
    input_meta[0] = (tuple(target.shape), target.dtype, target.device)
    if getattr(formula, "saves_input", True) and any(s is target for s in _tensors_in(saved)):
        from .._ops import _send  # noqa: PLC0415
        pre = _send(target._session, "clone", [target], None, 1)[0]  # the value before the op
        pre._ag = AutogradMeta(False, m.grad_fn, m.output_nr) if m is not None else None
        inputs = [pre] + inputs[1:]
        node_name, saved, backward = derivatives.make(formula, base_name, inputs, attrs,
                                                      [target])
    outs = send()
    bump_version(target)
    if view is not None:  # CopySlices gives the view's part to the base's old history: the
        edges[0] = None   # view's own (its view node holds the base: a cycle) is not kept
    # An output saved by an op on a view keeps the view (its history is the view's own, made
    # again from CopySlices): that cycle through the base is the collector's, as in torch.
    saved, aliases = _save_outputs(saved, [target] if view is None else [])
    node = Node(node_name, backward, saved, edges, input_meta, 1)
    for alias, _ in aliases:
        alias._ag = _SavedOutputMeta(node, 0)
    key = _storage_key(target)
    if key in _saved_storages and any(hasattr(t, "_ag") and t._error is None and
                                      _storage_key(t) == key for t in inputs[1:]):
        # x.mul_(x), x.mul_(x.detach()): torch saves the operand before the op writes it, so
        # that backward finds it changed (its error)
        _saved_storages[key][1] += 1
    if view is None:
        new = target._ag = AutogradMeta(False, node, 0)
        new.hist = next(_clock)
        new.own = m is not None and m.own
        if m is not None and m.retains_grad:
            new.retains_grad = True
            _move_retainer(m._fn, m.output_nr, node)
        return outs
    base = view.base
    old = base._ag
    copy_slices = Node("torch::autograd::CopySlices", _copy_slices(view, geometry, node), None,
                       [_edge(base)] + edges[1:],
                       [(tuple(base.shape), base.dtype, base.device)] + input_meta[1:], 1)
    copy_slices.on_release = node.release
    new = base._ag = AutogradMeta(False, copy_slices, 0)
    new.hist = next(_clock)
    m.requires_grad = False
    _regenerate(m)  # the view's grad_fn now comes from its base's, as torch's rebase does
    return outs


def record(name, inputs, attrs, outs):
    """Called by _ops._queue after op `name` was queued, when grad mode is on and an input
    requires grad: gives the op's differentiable outputs a grad_fn."""
    from . import derivatives  # noqa: PLC0415
    if not outs:
        return
    edges = [_edge(t) if hasattr(t, "_ag") else None for t in inputs]
    if all(e is None for e in edges) and not any(  # (a no_grad view's ops record, edgeless)
            getattr(t, "_ag", None) is not None and _inherits(t._ag) for t in inputs):
        return
    diff = [o for o in outs if o.dtype.is_floating_point]
    if not diff:
        return
    formula = derivatives.FORMULAS.get(name)
    node_name, saved, backward = derivatives.make(formula, name, inputs, attrs, outs)
    if backward is None:  # an op without gradients (detach): outputs are plain tensors
        return
    if any(t._inference for t in _tensors_in(saved)):
        raise RuntimeError("Inference tensors cannot be saved for backward. To work around you "
                           "can make a clone to get a normal tensor and use it in autograd.")
    input_meta = [(tuple(t.shape), t.dtype, t.device) if e is not None else None
                  for t, e in zip(inputs, edges)]
    saved, aliases = _save_outputs(saved, outs)
    node = Node(node_name, backward, saved, edges, input_meta, len(outs))
    constant = derivatives.NON_DIFFERENTIABLE_OUTPUTS.get(name, ())
    for alias, i in aliases:
        if outs[i].dtype.is_floating_point and i not in constant:
            alias._ag = _SavedOutputMeta(node, i)
    for i, o in enumerate(outs):
        if o.dtype.is_floating_point and i not in constant:
            o._ag = AutogradMeta(False, node, i)
    note_views(inputs, diff, node_name if name in _MULTI_VIEW_OPS else None)


# Ops that return several views of their input: torch refuses in-place ops on those views under
# grad mode (their node could not take the write).
_MULTI_VIEW_OPS = frozenset(("unbind", "split", "split_with_sizes", "chunk"))


def _sum_to(g, shape):
    """g reduced to `shape` (which it broadcasts from)."""
    if tuple(g.shape) == tuple(shape):
        return g
    return g.sum_to_size(*shape) if len(shape) else g.sum()


def _validate(node, i, g):
    """Checks the gradient a formula returned for input i against that input's metadata (torch's
    validate_outputs), converting dtype and reducing broadcast dims as torch does."""
    shape, dtype, device = node.input_meta[i]
    if tuple(g.shape) != shape:
        try:
            g = _sum_to(g, shape)
        except RuntimeError:
            raise RuntimeError(f"Function {node.name()} returned an invalid gradient at index {i}"
                               f" - got {list(g.shape)} but expected shape compatible with "
                               f"{list(shape)}") from None
    if g.dtype is not dtype:
        g = g.to(dtype)
    if g.device != device:
        g = g.to(device)
    return g


def _topological(roots):
    """The nodes reachable from `roots` with the number of edges into each."""
    deps = {}
    seen = set()
    stack = [r for r in roots if r is not None]
    for r in stack:
        seen.add(id(r))
    order = []
    while stack:
        node = stack.pop()
        order.append(node)
        for e in node.next_edges:
            if e is None:
                continue
            nxt = e[0]
            deps[id(nxt)] = deps.get(id(nxt), 0) + 1
            if id(nxt) not in seen:
                seen.add(id(nxt))
                stack.append(nxt)
    return deps


# For each backward running (nested ones run inside a node's backward): whether it may re-run
# a checkpointed segment, i.e. it accumulates into .grad and was given no `inputs` (torch's
# _is_checkpoint_valid).
_checkpoint_valid = []


def checkpoint_valid():
    return not _checkpoint_valid or _checkpoint_valid[-1]


def run_backward(outputs, grad_outputs, retain_graph, create_graph, inputs=None,
                 allow_unused=False, accumulate=True):
    """Runs the graph from `outputs` (tensors) seeded with `grad_outputs`. With `accumulate`,
    gradients reaching leaves are added to their .grad (backward); else the gradients of
    `inputs` are returned (autograd.grad)."""
    from .. import _ops  # noqa: PLC0415 - import cycle
    _checkpoint_valid.append(accumulate and inputs is None)
    # Gradients are plain tensors, as torch's engine (which calls no __torch_function__) makes
    # them, whatever Tensor subclass the forward ran on.
    subclasses, _ops.subclass_instances_made = _ops.subclass_instances_made, False
    try:
        return _run_backward(outputs, grad_outputs, retain_graph, create_graph, inputs,
                             allow_unused, accumulate)
    finally:
        _checkpoint_valid.pop()
        _ops.subclass_instances_made = subclasses or _ops.subclass_instances_made


def _run_backward(outputs, grad_outputs, retain_graph, create_graph, inputs, allow_unused,
                  accumulate):
    from .._api import ones_like  # noqa: PLC0415
    if retain_graph is None:
        retain_graph = create_graph
    roots = []
    seeds = []
    for i, (out, g) in enumerate(zip(outputs, grad_outputs)):
        if not requires_grad(out):
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have "
                               f"a grad_fn")
        if g is None:
            if out.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            g = ones_like(out)
        elif tuple(g.shape) != tuple(out.shape):
            raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of "
                               f"{g.shape} and output[{i}] has a shape of {out.shape}.")
        roots.append(_edge(out))
        seeds.append(g)

    wanted = None
    if inputs is not None:
        wanted = {}
        for k, t in enumerate(inputs):
            if not requires_grad(t):
                raise RuntimeError("One of the differentiated Tensors does not require grad")
            e = _edge(t)
            wanted.setdefault((id(e[0]), e[1]), []).append(k)
        results = [None] * len(inputs)

    root_nodes = [e[0] for e in roots]
    deps = _topological(root_nodes)
    # Gradients waiting for each node: id(node) -> list per output.
    pending = {}
    nodes = {}

    def add(node, nr, g):
        slot = pending.get(id(node))
        if slot is None:
            n = node.n_outputs if isinstance(node, Node) else 1
            slot = pending[id(node)] = [None] * n
            nodes[id(node)] = node
        slot[nr] = g if slot[nr] is None else slot[nr] + g

    with _grad_mode.set_grad_enabled(bool(create_graph)):
        for (node, nr), g in zip(roots, seeds):
            add(node, nr, g)
        ready = [n for n in root_nodes if deps.get(id(n), 0) == 0]
        ready_ids = set()
        queue = []
        for n in ready:
            if id(n) not in ready_ids:
                ready_ids.add(id(n))
                queue.append(n)
        node_range = None  # (this pass's own: a backward run inside a node nests in it)
        try:
            while queue:
                node = queue.pop()
                if _profiling.active:  # torch's ranges of a node's work in the backward pass
                    _profiling.pop(node_range)
                    node_range = _profiling.push_node(node.name())
                grads = pending.pop(id(node), None)
                if grads is not None and getattr(node, "hooks", None):
                    for nr, hooks in node.hooks.items():
                        for hook in list(hooks):
                            if grads[nr] is not None:
                                r = hook(grads[nr])
                                if r is not None:
                                    grads[nr] = r
                if wanted is not None and grads is not None:
                    for nr, g in enumerate(grads):
                        for k in wanted.get((id(node), nr), ()):
                            results[k] = g
                if isinstance(node, AccumulateGrad):
                    if accumulate and grads is not None and grads[0] is not None:
                        accumulate_grad(node.variable, grads[0], create_graph)
                    continue
                if grads is not None and any(g is not None for g in grads):
                    try:
                        in_grads = node.apply(grads)
                        if len(in_grads) != len(node.next_edges):
                            raise RuntimeError(f"function {node.name()} returned an incorrect number "
                                               f"of gradients (expected {len(node.next_edges)}, got "
                                               f"{len(in_grads)})")
                        in_grads = [_validate(node, i, g) if e is not None and g is not None
                                    else g for i, (e, g) in enumerate(zip(node.next_edges, in_grads))]
                        if node.post_hooks:
                            in_grads = node.run_post_hooks(in_grads, grads)
                        if _anomaly._state.enabled:
                            _anomaly.check(node, in_grads)
                    except Exception:
                        if _anomaly._state.enabled:
                            _anomaly.warn_error_in(node)
                        raise
                    for e, g in zip(node.next_edges, in_grads):
                        if e is not None and g is not None:
                            add(e[0], e[1], g)
                if not retain_graph:
                    node.release()
                for e in node.next_edges:
                    if e is None:
                        continue
                    nxt = e[0]
                    deps[id(nxt)] -= 1
                    if deps[id(nxt)] == 0:
                        queue.append(nxt)
        finally:
            _profiling.pop(node_range)
    if wanted is not None:
        for k, r in enumerate(results):
            if r is None and not allow_unused:
                raise RuntimeError("One of the differentiated Tensors appears to not have been "
                                   "used in the graph. Set allow_unused=True if this is the "
                                   "desired behavior.")
        return tuple(results)
    return None


def accumulate_grad(t, g, create_graph):
    """Adds `g` into t.grad: stores a copy of its own the first time (so that no two tensors'
    .grad share a storage), adds in place after (as torch's AccumulateGrad does)."""
    m = t._ag
    if m is not None and m.hooks:
        for hook in m.hooks:
            r = hook(g)
            if r is not None:
                g = r
    old = getattr(t, "_grad", None)
    if old is None:
        # recording is off: a plain copy (a leaf's in the leaf's layout)
        if create_graph:
            t._grad = g
        else:
            t._grad = _clone_obeying_layout(g, t) if t.is_leaf else g.clone()
    elif create_graph:
        t._grad = old + g
    else:
        with _grad_mode.no_grad():
            old.add_(g)


def _clone_obeying_layout(g, t):
    """A copy of gradient `g` laid out as leaf `t` (torch's AccumulateGrad layout contract):
    with t's strides where t is non-overlapping and dense (a transposed weight's gradient
    comes out of its matmul transposed), else contiguous."""
    if t.is_non_overlapping_and_dense():
        sizes, strides, g_strides = t.shape, t.stride(), g.stride()
        if tuple(g.shape) == tuple(sizes) and all(
                n == 1 or a == b for n, a, b in zip(sizes, strides, g_strides)):
            return g.clone()
        from .._factories import empty_strided  # noqa: PLC0415
        return empty_strided(sizes, strides, dtype=g.dtype, device=g.device,
                             session=g._session).copy_(g)
    from .._memory_format import contiguous_format  # noqa: PLC0415
    return g.clone(memory_format=contiguous_format)


def retainer(t):
    """Tensor.retain_grad's hook on a non-leaf: the gradient that reaches it (after the hooks
    registered before it, as torch 1.13 orders them) accumulated into its .grad."""
    ref = weakref.ref(t)

    def hook(g):
        t = ref()
        if t is not None:
            accumulate_grad(t, g, _grad_mode.is_grad_enabled())  # on under create_graph
    hook.retains = True  # moved to the tensor's new node when an in-place op rebases it
    return hook


def warn_non_leaf_grad():
    warnings.warn(
        "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
        "attribute won't be populated during autograd.backward(). If you indeed want the .grad "
        "field to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. "
        "If you access the non-leaf Tensor by mistake, make sure you access the leaf Tensor "
        "instead. See github.com/pytorch/pytorch/pull/30531 for more informations. (Triggered "
        "internally at aten/src/ATen/core/TensorBody.h:480.)", UserWarning, stacklevel=3)


def honour_requires_grad(f):
    """Factory `f` (which takes torch's requires_grad= keyword) with that keyword applied to
    the tensor it returns."""
    @functools.wraps(f)
    def factory(*args, requires_grad=False, **kwargs):
        t = f(*args, **kwargs)
        if requires_grad:
            if not t.dtype.is_floating_point:
                raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                                   "gradients")
            set_requires_grad(t, True)
        return t
    return factory


def honour_requires_grad_in(namespace):
    """honour_requires_grad over every function of `namespace` (a module's globals or a class's
    dict) that takes requires_grad=."""
    for name, f in list(namespace.items()):
        if not inspect.isfunction(f) or getattr(f, "__wrapped__", None) is not None:
            continue
        try:
            params = inspect.signature(f).parameters
        except (TypeError, ValueError):
            continue
        if "requires_grad" in params and params["requires_grad"].default is False:
            namespace[name] = honour_requires_grad(f)


def zero_grads(params, set_to_none):
    """Module.zero_grad and Optimizer.zero_grad: each gradient set to None, or cut from any
    graph and zeroed in place (torch 1.13's default)."""
    for p in params:
        if p.grad is not None:
            if set_to_none:
                p.grad = None
            else:
                if p.grad.grad_fn is not None:
                    p.grad.detach_()
                else:
                    p.grad.requires_grad_(False)
                p.grad.zero_()
