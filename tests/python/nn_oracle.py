"""Helpers the nn module tests share: build a module in torch and in tensord from the same
code, give the tensord one the torch one's state_dict, and compare what they compute."""
import torch

import tensord
from oracle import as_torch, assert_matches_torch


def to_tensord(v):
    """A torch tensor (any dtype) as a tensord one on the tests' session."""
    if v.dtype is torch.bfloat16:
        return tensord.tensor(v.float().numpy()).to(tensord.bfloat16)
    return tensord.tensor(v.detach().numpy())


def assert_same_state(tm, dm):
    """The two modules' state_dicts have the same keys in the same order, and equal tensors
    (shape, dtype, values)."""
    tsd, dsd = tm.state_dict(), dm.state_dict()
    assert list(dsd) == list(tsd), (list(dsd), list(tsd))
    for k, w in tsd.items():
        g = dsd[k]
        assert str(g.dtype) == str(w.dtype), (k, g.dtype, w.dtype)
        assert tuple(g.shape) == tuple(w.shape), (k, tuple(g.shape), tuple(w.shape))


def twin(make):
    """(torch module, tensord module): make(ns) with ns = torch, then tensord; the tensord one
    loaded with the torch one's state_dict. Their reprs and state_dict layouts must match."""
    tm = make(torch)
    dm = make(tensord)
    assert repr(dm) == repr(tm)
    assert_same_state(tm, dm)
    result = dm.load_state_dict({k: to_tensord(v) for k, v in tm.state_dict().items()})
    assert not result.missing_keys and not result.unexpected_keys
    for k, v in tm.state_dict().items():
        assert torch.equal(as_torch(dm.state_dict()[k]), v), k
    return tm, dm


def assert_module_matches(make, inputs, tol=1e-5, train=False, strides=True):
    """make(ns) built in both namespaces (twin), set to train(train), called on inputs(ns): the
    outputs match as assert_matches_torch compares them (exception classes included), and so
    do the state_dicts after the call (running statistics)."""
    tm, dm = twin(make)
    tm.train(train)
    dm.train(train)
    mods = {torch: tm, tensord: dm}
    with torch.no_grad(), tensord.no_grad():
        assert_matches_torch(lambda ns: mods[ns](*inputs(ns)), tol, strides)
    for k, w in tm.state_dict().items():
        g = as_torch(dm.state_dict()[k])
        if w.is_floating_point():
            t = tol.get(w.dtype, 0.0) if isinstance(tol, dict) else tol
            rtol, atol = t if isinstance(t, tuple) else (t, t)
            torch.testing.assert_close(g, w, rtol=rtol, atol=atol)
        else:
            assert torch.equal(g, w), k
    return tm, dm
