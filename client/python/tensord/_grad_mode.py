"""torch's gradient-mode switches: no_grad, enable_grad, set_grad_enabled, inference_mode.

Ops record the backward graph (tensord.autograd) only while gradient mode is on. These keep
torch's state, its context-manager and decorator forms and its queries (is_grad_enabled,
is_inference_mode_enabled). The state is per thread, as torch's.
"""
import functools
import inspect
import threading

_state = threading.local()


def is_grad_enabled():
    return getattr(_state, "grad", True)


def _set_grad(mode):
    _state.grad = bool(mode)


def is_inference_mode_enabled():
    return getattr(_state, "inference", False)


# Whether inference_mode(True) was ever entered in this process: until then no tensor is an
# inference tensor, and the op path skips their rules with one global read.
inference_used = False


class _DecoratorContextManager:
    """A context manager that is also a decorator (a fresh instance per call, as torch's)."""

    def __call__(self, func):
        if inspect.isclass(func):
            raise RuntimeError("tensord: a grad-mode decorator applies to functions, not classes")
        if inspect.isgeneratorfunction(func):
            @functools.wraps(func)
            def generator(*args, **kwargs):
                gen = func(*args, **kwargs)
                with self.clone():
                    response = gen.send(None)
                while True:
                    try:
                        request = yield response
                    except GeneratorExit:
                        gen.close()
                        raise
                    except BaseException as e:
                        with self.clone():
                            response = gen.throw(e)
                    else:
                        with self.clone():
                            response = gen.send(request)
            return generator

        @functools.wraps(func)
        def decorated(*args, **kwargs):
            with self.clone():
                return func(*args, **kwargs)
        return decorated

    def clone(self):
        return self.__class__()


class no_grad(_DecoratorContextManager):
    """Disables gradient recording inside the block (torch.no_grad)."""

    def __init__(self):
        self.prev = False  # as torch's: an __exit__ without __enter__ leaves grad mode off

    def __enter__(self):
        self.prev = is_grad_enabled()
        _set_grad(False)

    def __exit__(self, *exc):
        _set_grad(self.prev)


class enable_grad(_DecoratorContextManager):
    """Enables gradient recording inside the block (torch.enable_grad)."""

    def __enter__(self):
        self.prev = is_grad_enabled()
        _set_grad(True)

    def __exit__(self, *exc):
        _set_grad(self.prev)


class set_grad_enabled(_DecoratorContextManager):
    """Sets gradient recording on or off: at once when called, restored at the end of a `with`
    block (torch.set_grad_enabled)."""

    def __init__(self, mode):
        self.prev = is_grad_enabled()
        self.mode = bool(mode)
        _set_grad(self.mode)

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _set_grad(self.prev)

    def clone(self):
        return self.__class__(self.mode)


class inference_mode(_DecoratorContextManager):
    """torch.inference_mode(mode=True): no gradient recording inside the block."""

    def __init__(self, mode=True):
        self.mode = bool(mode)

    def __enter__(self):
        global inference_used
        self.prev = (is_grad_enabled(), is_inference_mode_enabled())
        _state.inference = self.mode
        if self.mode:
            inference_used = True
            _set_grad(False)

    def __exit__(self, *exc):
        _set_grad(self.prev[0])
        _state.inference = self.prev[1]

    def clone(self):
        return self.__class__(self.mode)
