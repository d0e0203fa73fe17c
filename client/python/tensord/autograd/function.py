"""torch.autograd.Function: an op whose forward and backward the program writes itself."""
from .. import _grad_mode
from . import graph


class FunctionCtx:
    """The `ctx` that forward and backward share (torch's FunctionCtx)."""

    def __init__(self):
        self.to_save = ()
        self._saved = None
        self._released = False
        self.needs_input_grad = ()
        self.non_differentiable = set()
        self.dirty = set()
        self.materialize_grads = True

    def save_for_backward(self, *tensors):
        self.to_save = tensors

    @property
    def saved_tensors(self):
        if self._released:
            raise RuntimeError(graph._RELEASED)
        return tuple(graph.unpack_saved(tuple(self.to_save)))

    def mark_non_differentiable(self, *tensors):
        self.non_differentiable.update(id(t) for t in tensors)

    def mark_dirty(self, *tensors):
        self.dirty.update(id(t) for t in tensors)

    def set_materialize_grads(self, value):
        self.materialize_grads = bool(value)


class _FunctionMeta(type):
    def __init__(cls, name, bases, attrs):
        super().__init__(name, bases, attrs)
        cls._backward_name = name + "Backward"
        # the class of its grad_fn, named <Function>Backward as torch's; like torch's (which is
        # the ctx), it gives the ctx's attributes
        cls._node_class = type(cls._backward_name, (_FunctionNode,), {
            "__slots__": (), "__module__": __name__, "__qualname__": cls._backward_name})


class _FunctionNode(graph.Node):
    __slots__ = ("ctx",)

    def __getattr__(self, name):
        try:
            ctx = object.__getattribute__(self, "ctx")
        except AttributeError:
            raise AttributeError(name) from None
        return getattr(ctx, name)


class Function(metaclass=_FunctionMeta):
    """Subclass with static `forward(ctx, *args)` and `backward(ctx, *grad_outputs)`; call with
    `apply(*args)`."""

    def __init__(self, *args, **kwargs):
        pass

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom "
                                  "autograd.Function.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for "
                                  "your custom autograd.Function to use it with backward mode "
                                  "AD.")

    vjp = backward

    @classmethod
    def apply(cls, *args):
        from .._tensor import Tensor  # noqa: PLC0415
        ctx = FunctionCtx()
        tensor_args = [(i, a) for i, a in enumerate(args) if isinstance(a, Tensor)]
        recording = _grad_mode.is_grad_enabled() and any(graph.requires_grad(a)
                                                         for _, a in tensor_args)
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and graph.requires_grad(a)
                                     for a in args)
        with _grad_mode.no_grad():
            result = cls.forward(ctx, *args)
        if not recording:
            return result
        single = not isinstance(result, tuple)
        outs = (result,) if single else result
        edges = [graph._edge(a) if isinstance(a, Tensor) else None for a in args]
        input_meta = [(tuple(a.shape), a.dtype, a.device) if e is not None else None
                      for a, e in zip(args, edges)]
        out_meta = [(tuple(o.shape), o.dtype, o.device) if isinstance(o, Tensor) else None
                    for o in outs]

        def backward(saved, grads):
            if ctx.materialize_grads:
                from .._api import zeros  # noqa: PLC0415
                grads = [g if g is not None or m is None else
                         zeros(m[0], dtype=m[1], device=m[2]) for g, m in zip(grads, out_meta)]
            result = cls.backward(ctx, *grads)
            if not isinstance(result, tuple):
                result = (result,)
            if len(result) > len(args) and all(r is None for r in result[len(args):]):
                result = result[:len(args)]
            if len(result) != len(args):
                raise RuntimeError(f"function {cls._backward_name} returned an incorrect number "
                                   f"of gradients (expected {len(args)}, got {len(result)})")
            return [r if e is not None else None for r, e in zip(result, edges)]

        node = cls._node_class(cls._backward_name, backward, (), edges, input_meta, len(outs))
        node.ctx = ctx
        if graph._saved_hooks and ctx.to_save:
            ctx.to_save = graph.pack_saved(tuple(ctx.to_save))

        def release_ctx():
            ctx._released = True
            ctx.to_save = ()
        node.on_release = release_ctx
        wrapped = []
        for i, o in enumerate(outs):
            if isinstance(o, Tensor) and o.dtype.is_floating_point and \
                    id(o) not in ctx.non_differentiable:
                if any(o is a for _, a in tensor_args):  # returned an input: a view of it
                    o = o.detach()
                o._ag = graph.AutogradMeta(False, node, i)
            wrapped.append(o)
        return wrapped[0] if single else tuple(wrapped)
