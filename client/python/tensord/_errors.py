"""Server errors as the Python exceptions torch raises for the same mistakes."""
import os
import sys
import warnings

import grpc

_KINDS = {"RuntimeError": RuntimeError, "IndexError": IndexError, "ValueError": ValueError,
          "TypeError": TypeError, "NotImplementedError": NotImplementedError}


_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


def user_stacklevel():
    """The stacklevel with which the function calling this warns at the program's line: the
    first frame outside tensord (where torch's warnings, raised in C++, point)."""
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame, level = frame.f_back, level + 1
    return level


_warned = set()


def warn_once(key, message):
    """torch's TORCH_WARN_ONCE: a UserWarning, at the program's line, the first time `key` is
    met in this process."""
    if key not in _warned:
        _warned.add(key)
        warnings.warn(message, UserWarning, stacklevel=user_stacklevel())


class _LinAlgError(RuntimeError):
    """A factorization failed for its data (a singular matrix, one not positive-definite):
    torch.linalg.LinAlgError, named as torch names it."""


LinAlgError = _LinAlgError
_KINDS["LinAlgError"] = LinAlgError


class OutOfMemoryError(RuntimeError):
    """A tensord limit (bytes per session or server) was reached: RESOURCE_EXHAUSTED."""


def _make(kind, code_name, message, error_id=None):
    if code_name == "RESOURCE_EXHAUSTED":
        error = OutOfMemoryError(message)
    else:
        error = _KINDS.get(kind, RuntimeError)(message)
    error.grpc_code = code_name
    # The id of the server's log line for this error (None for errors found here).
    error.error_id = error_id
    return error


_CODE_NAMES = {code.value[0]: code.name for code in grpc.StatusCode}


def error_from_status(kind, code, message):
    """An error as the engine's planner gives it: torch's class name, the status code, text."""
    return _make(kind, _CODE_NAMES.get(code, "UNKNOWN"), message)


def error_from_proto(error):
    return _make(error.kind, _CODE_NAMES.get(error.code, "UNKNOWN"), error.message,
                 error.error_id or None)


def error_from_rpc(rpc_error, what, session=None):
    """`session`: the session's public id (its route), named when the server is unreachable:
    a session lives in one server's memory, so it is lost if that server is."""
    kind = "RuntimeError"
    error_id = None
    try:
        for key, value in rpc_error.trailing_metadata() or ():
            if key == "tensord-error-kind":
                kind = value
            elif key == "tensord-error-id":
                error_id = value
    except Exception:
        pass
    code = rpc_error.code()
    message = rpc_error.details() or f"{what}: {code.name}"
    if code == grpc.StatusCode.OUT_OF_RANGE and kind == "RuntimeError":
        kind = "IndexError"
    if code == grpc.StatusCode.UNAVAILABLE:
        where = f"{what}, session {session}" if session else what
        message = f"tensord server unavailable ({where}): {message}"
    return _make(kind, code.name, message, error_id)
