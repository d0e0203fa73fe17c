"""torch.jit as torch runs it with TorchScript disabled (PYTORCH_JIT=0): tensord runs every
program eagerly, op by op on the server, so `script` and `trace` return the function or module
they are given, which then runs exactly as it would have; `is_scripting`/`is_tracing` are
False; the decorators (`ignore`, `unused`, `export`, `interface`) and `annotate` leave their
targets as they are; `fork` runs its function at once and returns a completed Future. Loading
a TorchScript archive needs TorchScript and is refused with a clear error.
"""
from typing import Final  # noqa: F401 - torch.jit.Final

__all__ = ["script", "trace", "trace_module", "script_if_tracing", "is_scripting",
           "is_tracing", "ignore", "unused", "export", "interface", "annotate", "fork", "wait",
           "Future", "ScriptModule", "ScriptFunction", "Final", "Attribute", "save", "load",
           "optimized_execution"]


def script(obj, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    return obj


def trace(func, example_inputs=None, optimize=None, check_trace=True, check_inputs=None,
          check_tolerance=1e-5, strict=True, _force_outplace=False,
          _module_class=None, _compilation_unit=None):
    return func


def trace_module(mod, inputs, optimize=None, check_trace=True, check_inputs=None,
                 check_tolerance=1e-5, strict=True, _force_outplace=False,
                 _module_class=None, _compilation_unit=None):
    return mod


def script_if_tracing(fn):
    return fn


def is_scripting():
    return False


def is_tracing():
    return False


def ignore(drop=False, **kwargs):
    """@ignore and @ignore(drop=True): the function, unchanged."""
    if callable(drop):
        return drop

    def decorator(fn):
        return fn
    return decorator


def unused(fn):
    return fn


def export(fn):
    return fn


def interface(obj):
    return obj


def script_method(fn):
    return fn


def annotate(the_type, the_value):
    return the_value


class Attribute:
    """torch.jit.Attribute(value, type): eagerly, just the value."""

    def __new__(cls, value, type=None):  # noqa: A002 - torch's name
        return value


class Future:
    """A completed future (torch.jit.fork runs its function at once here)."""

    def __init__(self, value=None, error=None):
        self._value, self._error = value, error

    def done(self):
        return True

    def wait(self):
        if self._error is not None:
            raise self._error
        return self._value

    value = wait

    def then(self, callback):
        try:
            return Future(callback(self))
        except Exception as e:  # noqa: BLE001 - carried to whoever waits, as torch's
            return Future(error=e)

    def add_done_callback(self, callback):
        callback(self)


def fork(func, *args, **kwargs):
    try:
        return Future(func(*args, **kwargs))
    except Exception as e:  # noqa: BLE001 - raised by wait, as torch's
        return Future(error=e)


def wait(future):
    return future.wait()


class ScriptModule:
    """What torch.jit.script makes of a module under TorchScript; eagerly nothing is one."""


class ScriptFunction:
    """What torch.jit.script makes of a function under TorchScript; eagerly nothing is one."""


def save(m, f, _extra_files=None):
    """As torch without TorchScript: the module's own save (nn.Module has none)."""
    return m.save(f, _extra_files=_extra_files) if _extra_files else m.save(f)


def load(f, map_location=None, _extra_files=None):
    raise RuntimeError("tensord runs programs eagerly (as torch with PYTORCH_JIT=0): a "
                       "TorchScript archive cannot be loaded; save the state_dict with "
                       "torch.save and load it into the module instead")


class optimized_execution:
    """A context manager that changes nothing eagerly."""

    def __init__(self, should_optimize):
        self.should_optimize = should_optimize

    def __enter__(self):
        return None

    def __exit__(self, *args):
        return None
