"""Helpers the differential tests share: run a call as an outcome (its value, or its exception
class and message) and bring a tensord result back as a CPU torch tensor to compare."""
import torch

import tensord


def outcome(fn):
    """(value, None), or (None, (exception class name, message)) when fn raises."""
    try:
        return fn(), None
    except Exception as e:  # noqa: BLE001 - the class is what is compared
        return None, (type(e).__name__, str(e))


def as_torch(t):
    """A tensord tensor (on any device, any dtype, bfloat16 included) as a CPU torch tensor."""
    t = t.cpu()
    if t.dtype is tensord.bfloat16:
        return torch.tensor(t.float().numpy()).to(torch.bfloat16)
    return torch.tensor(t.numpy())


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
        want, werr = outcome(lambda: case(torch))
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
        if w.is_floating_point():
            t = tol.get(w.dtype, 0.0) if isinstance(tol, dict) else tol
            rtol, atol = t if isinstance(t, tuple) else (t, t)
            torch.testing.assert_close(as_torch(g), w, rtol=rtol, atol=atol, equal_nan=True)
        else:
            assert torch.equal(as_torch(g), w), (where, as_torch(g), w)
