"""Helpers the differential tests share: run a call as an outcome (its value, or its exception
class and message) and bring a tensord result back as a CPU torch tensor to compare."""
import os

import torch

import tensord


def outcome(fn):
    """(value, None), or (None, (exception class name, message)) when fn raises."""
    try:
        return fn(), None
    except Exception as e:  # noqa: BLE001 - the class is what is compared
        return None, (type(e).__name__, str(e))


def outcomes(case):
    """The outcomes of case(torch) and case(tensord), warnings silenced (torch's deprecation
    notices, which tensord repeats)."""
    import warnings  # noqa: PLC0415
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return outcome(lambda: case(torch)), outcome(lambda: case(tensord))


def as_torch(t):
    """A tensord tensor (on any device, any dtype, bfloat16 included) as a CPU torch tensor; a
    torch tensor as it is (an oracle's result is either)."""
    if isinstance(t, torch.Tensor):
        return t
    t = t.cpu().detach()
    if t.dtype is tensord.bfloat16:  # numpy has no bfloat16: the bits travel as int16
        return torch.tensor(t.contiguous().view(tensord.int16).numpy()).view(torch.bfloat16)
    return torch.tensor(t.numpy())


def cpu_only(reason):
    """Skips a test of CPU semantics where the tests run on another device (TENSORD_TEST_DEVICE:
    the differential matrix on cuda, test_cuda.py)."""
    import pytest  # noqa: PLC0415
    device = os.environ.get("TENSORD_TEST_DEVICE") or "cpu"
    return pytest.mark.skipif(device != "cpu", reason=reason)


def device_oracle():
    """Whether tensord's own CPU backend, not torch, is the oracle: under TENSORD_TEST_DEVICE
    (the differential tests run on a GPU, test_cuda.py), whose torch is not the 1.13 these
    tests hold to. The CPU backend's results are checked against torch 1.13 by the same tests
    in CI, so the GPU's are held to 1.13 through it: dtypes, sizes, strides, exception classes
    and values (issue 14's rule); test_cuda.py checks GPU values against torch on CUDA.
    TENSORD_ORACLE=torch or tensord-cpu chooses explicitly."""
    if os.environ.get("TENSORD_ORACLE") in ("torch", "tensord-cpu"):  # an explicit choice
        return os.environ["TENSORD_ORACLE"] == "tensord-cpu"
    device = os.environ.get("TENSORD_TEST_DEVICE")
    return bool(device) and device != "cpu"


_cpu_sessions = {}


def _on_tensord_cpu(fn):
    """fn() on a CPU session of the tests' server: (outputs, None) or (None, error)."""
    current = tensord.current_session()
    cpu = _cpu_sessions.get(current.address)
    if cpu is None:
        cpu = _cpu_sessions[current.address] = tensord.connect(current.address, device="cpu")
    tensord.set_default_session(cpu)
    try:
        result = outcome(fn)
        outcome(tensord.synchronize)
        return result
    finally:
        tensord.set_default_session(current)


def reference_outcome(torch_fn, tensord_fn):
    """The outcome a test holds tensord to: torch_fn()'s, or, under the device oracle
    (device_oracle), tensord_fn() run on tensord's CPU backend. tensord_fn must make its own
    inputs (through the session's default device)."""
    if device_oracle():
        return _on_tensord_cpu(tensord_fn)
    return outcome(torch_fn)


TORCH_113 = torch.__version__.startswith("1.13")


def torch2_difference(torch_error, ours_error):
    """Whether torch (not 1.13: the GPU machine's 2.x) and tensord disagree only as torch 2.x
    changed from 1.13, whose semantics tensord keeps: "not implemented for" errors became
    NotImplementedError, and CPU kernels gained float16/bfloat16. Errors are (class name,
    message) pairs or None. Always False under torch 1.13 (CI), so no check is loosened there."""
    if TORCH_113 or ours_error is None:
        return False
    if torch_error is None:  # torch 2.x has a kernel where 1.13 had none
        return ours_error[0] == "RuntimeError" and (
            "not implemented for 'Half'" in ours_error[1]
            or "not implemented for 'BFloat16'" in ours_error[1])
    return (ours_error[0] == "RuntimeError" and torch_error[0] == "NotImplementedError"
            and "not implemented for" in torch_error[1])


def _torch_dtype(dtype):
    """torch's dtype of the same name (tolerance tables are keyed by torch dtypes)."""
    return getattr(torch, str(dtype).replace("torch.", ""))


def assert_matches_torch(case, tol=0.0, strides=True):
    """Runs case(torch) and case(tensord) and compares them as the differential tests do: when
    torch raises, tensord raises the same exception class; otherwise each output (a tensor, or
    a tuple of them) has torch's dtype, shape, strides (`strides`) and values, floating ones
    within `tol`: a number (rtol = atol), or a dict from torch dtype to a number or an
    (rtol, atol) pair. An error another test left on the session is drained first, and a case
    that did not fail must leave none for synchronize()."""
    import warnings  # noqa: PLC0415
    outcome(tensord.synchronize)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want, werr = reference_outcome(lambda: case(torch), lambda: case(tensord))
        got, gerr = outcome(lambda: case(tensord))
    _, late = outcome(tensord.synchronize)
    assert late is None or gerr is not None, late
    if werr:
        assert gerr is not None, f"torch raised {werr}, tensord returned {got}"
        assert gerr[0] == werr[0], (gerr, werr)
        return
    assert gerr is None, gerr
    many = isinstance(want, (tuple, list))
    got, want = (list(got), list(want)) if many else ([got], [want])
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        where = f"output {i}"
        assert str(g.dtype) == str(w.dtype), (where, g.dtype, w.dtype)
        assert tuple(g.shape) == tuple(w.shape), (where, tuple(g.shape), tuple(w.shape))
        if strides and w.numel() > 1:
            assert g.stride() == w.stride(), (where, g.stride(), w.stride())
        w = as_torch(w)  # the CPU backend's result under device_oracle
        if w.is_floating_point():
            t = tol.get(_torch_dtype(w.dtype), 0.0) if isinstance(tol, dict) else tol
            rtol, atol = t if isinstance(t, tuple) else (t, t)
            torch.testing.assert_close(as_torch(g), w, rtol=rtol, atol=atol, equal_nan=True)
        else:
            assert torch.equal(as_torch(g), w), (where, as_torch(g), w)
