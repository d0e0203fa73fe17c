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
import functools
import inspect
import warnings
import weakref

from .. import _grad_mode

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
    gradient (retain_grad), and its hooks."""

    __slots__ = ("requires_grad", "grad_fn", "output_nr", "retains_grad", "hooks", "acc")

    def __init__(self, requires_grad=False, grad_fn=None, output_nr=0):
        self.requires_grad = requires_grad
        self.grad_fn = grad_fn
        self.output_nr = output_nr
        self.retains_grad = False
        self.hooks = None
        self.acc = None  # a weak reference to the leaf's AccumulateGrad while a graph holds it


def requires_grad(t):
    m = t._ag
    return m is not None and (m.requires_grad or m.grad_fn is not None)


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
    if flag:
        active = True


class Node:
    """One recorded op: `next_edges[i]` is (node, output_nr) of input i, or None where input i
    needs no gradient; `apply(grads)` maps the gradients of the outputs (None where an output got
    none) to the gradients of the inputs."""

    __slots__ = ("_name", "next_edges", "_backward", "saved", "released", "input_meta",
                 "n_outputs", "on_release", "versions", "hooks", "__weakref__")

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
        self.versions = [_hold(t) for t in _tensors_in(saved) if t._error is None]

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

    def __repr__(self):
        return f"<{self._name} object at {hex(id(self))}>"

    def apply(self, grads):
        if self.released:
            raise RuntimeError(_RELEASED)
        for t, key, version in self.versions:
            now = _saved_storages[key][1]
            if now != version:
                raise RuntimeError(
                    f"one of the variables needed for gradient computation has been modified "
                    f"by an inplace operation: [{t.type()} {list(t.shape)}], which is saved by "
                    f"{self._name}, is at version {now}; expected version {version} instead. "
                    f"Hint: the backtrace further above shows the operation that failed to "
                    f"compute its gradient. The variable in question was changed in there or "
                    f"anywhere later. Good luck!")
        return self._backward(self.saved, grads)

    def release(self):
        self.saved = None
        _let_go(self.versions)
        self.versions = ()
        self.released = True
        if self.on_release is not None:
            self.on_release()


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


def check_in_place(name, inputs):
    """An in-place op that autograd does not record (an in-place view, t_), under grad mode:
    torch's error for a leaf that requires grad; refused for any other input that requires
    grad, rather than give wrong gradients."""
    if not _grad_mode.is_grad_enabled() or not inputs:
        return
    _refuse_leaf(inputs[0])
    if any(requires_grad(t) for t in inputs if hasattr(t, "_ag")):
        _refuse_in_place(name)


def _refuse_in_place(name):
    raise RuntimeError(f"tensord: the in-place op {name} writes a tensor that requires grad or "
                       f"takes one as input, and autograd cannot record it here (the tensor is "
                       f"a view or has views, or {name.rstrip('_')} has no derivative): use the "
                       f"out-of-place {name.rstrip('_')} (or run it under no_grad)")


def _refuse_leaf(target):
    m = target._ag
    if m is not None and m.requires_grad and m.grad_fn is None:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                           "operation.")


# For each storage that views recorded under grad mode share ((session, storage id) -> the
# tensors, weakly held): an in-place op on one of them would change the others' values without
# their history (torch rebases views' grad_fn; tensord refuses instead).
_views = {}


_views_purge_at = 1024


class _ViewSet:
    """The tensors noted on one storage: weak references by id, the dead ones dropped when the
    set has doubled since the last sweep (so a long-lived base viewed in a loop costs O(1) per
    view)."""

    __slots__ = ("refs", "sweep_at")

    def __init__(self):
        self.refs = {}
        self.sweep_at = 64

    def add(self, t):
        refs = self.refs
        if len(refs) >= self.sweep_at:
            for k in [k for k, r in refs.items() if r() is None]:
                del refs[k]
            self.sweep_at = max(64, 2 * len(refs))
        refs[id(t)] = weakref.ref(t)

    def alive(self):
        return any(r() is not None for r in self.refs.values())


def note_views(inputs, outs):
    """Outputs that share a storage with an input are noted as views (by record, and by
    _ops._queue for the ops it does not record while autograd is active), so that an in-place
    op recorded later on one of them, or on their base, is refused."""
    global _views_purge_at
    for o in outs:
        info = o._info
        if info is None or o._error is not None:
            continue
        sid = info.storage_id
        for t in inputs:
            ti = getattr(t, "_info", None)
            if ti is not None and ti.storage_id == sid and t is not o and \
                    t._session is o._session and t._error is None:
                key = (id(o._session), sid)
                entry = _views.get(key)
                if entry is None:
                    if len(_views) >= _views_purge_at:  # sets whose tensors all died go
                        for k in [k for k, e in _views.items() if not e.alive()]:
                            del _views[k]
                        _views_purge_at = max(1024, 2 * len(_views))
                    entry = _views[key] = _ViewSet()
                entry.add(t)
                entry.add(o)
                break


def _has_other_views(t):
    def others():
        entry = _views.get(_storage_key(t))
        return entry is not None and any(r() is not None and r() is not t
                                         for r in entry.refs.values())
    if not others():
        return False
    # Ops waiting to be sent hold their outputs (an intermediate view base, as F.linear's
    # rows): once sent, only the views the program still holds remain.
    t._session.flush()
    return others()


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
    before the op (mul_'s), a copy is taken first, as torch saves `original_self`. Refused,
    before anything is written, for a leaf that requires grad (torch's error) and for a target
    that shares its storage with other tensors (views: tensord does not rebase them)."""
    from . import derivatives  # noqa: PLC0415
    target = inputs[0]
    _refuse_leaf(target)
    m = target._ag
    base_name = name[:-1]
    formula = derivatives.FORMULAS.get(base_name)
    if formula is None or not target.dtype.is_floating_point or not _whole_storage(target) \
            or _has_other_views(target):
        _refuse_in_place(name)
    node_name, saved, backward = derivatives.make(formula, base_name, inputs, attrs, [target])
    edges = [_edge(t) if hasattr(t, "_ag") else None for t in inputs]
    if getattr(formula, "saves_input", True) and any(s is target for s in _tensors_in(saved)):
        from .._ops import _send  # noqa: PLC0415
        pre = _send(target._session, "clone", [target], None, 1)[0]  # the value before the op
        pre._ag = m
        inputs = [pre] + inputs[1:]
        node_name, saved, backward = derivatives.make(formula, base_name, inputs, attrs,
                                                      [target])
    outs = send()
    bump_version(target)
    input_meta = [(tuple(t.shape), t.dtype, t.device) if e is not None else None
                  for t, e in zip(inputs, edges)]
    node = Node(node_name, backward, saved, edges, input_meta, 1)
    key = _storage_key(target)
    if key in _saved_storages and any(hasattr(t, "_ag") and t._error is None and
                                      _storage_key(t) == key for t in inputs[1:]):
        # x.mul_(x), x.mul_(x.detach()): torch saves the operand before the op writes it, so
        # that backward finds it changed (its error)
        _saved_storages[key][1] += 1
    target._ag = AutogradMeta(False, node, 0)
    return outs


def record(name, inputs, attrs, outs):
    """Called by _ops._queue after op `name` was queued, when grad mode is on and an input
    requires grad: gives the op's differentiable outputs a grad_fn."""
    from . import derivatives  # noqa: PLC0415
    if not outs:
        return
    edges = [_edge(t) if hasattr(t, "_ag") else None for t in inputs]
    if all(e is None for e in edges):
        return
    diff = [o for o in outs if o.dtype.is_floating_point]
    if not diff:
        return
    formula = derivatives.FORMULAS.get(name)
    node_name, saved, backward = derivatives.make(formula, name, inputs, attrs, outs)
    if backward is None:  # an op without gradients (detach): outputs are plain tensors
        return
    input_meta = [(tuple(t.shape), t.dtype, t.device) if e is not None else None
                  for t, e in zip(inputs, edges)]
    node = Node(node_name, backward, saved, edges, input_meta, len(outs))
    constant = derivatives.NON_DIFFERENTIABLE_OUTPUTS.get(name, ())
    for i, o in enumerate(outs):
        if o.dtype.is_floating_point and i not in constant:
            o._ag = AutogradMeta(False, node, i)
    note_views(inputs, diff)


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


def run_backward(outputs, grad_outputs, retain_graph, create_graph, inputs=None,
                 allow_unused=False, accumulate=True):
    """Runs the graph from `outputs` (tensors) seeded with `grad_outputs`. With `accumulate`,
    gradients reaching leaves are added to their .grad (backward); else the gradients of
    `inputs` are returned (autograd.grad)."""
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
        while queue:
            node = queue.pop()
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
                in_grads = node.apply(grads)
                if len(in_grads) != len(node.next_edges):
                    raise RuntimeError(f"function {node.name()} returned an incorrect number of "
                                       f"gradients (expected {len(node.next_edges)}, got "
                                       f"{len(in_grads)})")
                for i, (e, g) in enumerate(zip(node.next_edges, in_grads)):
                    if e is not None and g is not None:
                        add(e[0], e[1], _validate(node, i, g))
            if not retain_graph:
                node.release()
            for e in node.next_edges:
                if e is None:
                    continue
                nxt = e[0]
                deps[id(nxt)] -= 1
                if deps[id(nxt)] == 0:
                    queue.append(nxt)
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
        t._grad = g if create_graph else g.clone()  # recording is off: a plain copy
    elif create_graph:
        t._grad = old + g
    else:
        with _grad_mode.no_grad():
            old.add_(g)


def retainer(t):
    """Tensor.retain_grad's hook on a non-leaf: the gradient that reaches it (after the hooks
    registered before it, as torch 1.13 orders them) accumulated into its .grad."""
    ref = weakref.ref(t)

    def hook(g):
        t = ref()
        if t is not None:
            accumulate_grad(t, g, _grad_mode.is_grad_enabled())  # on under create_graph
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
