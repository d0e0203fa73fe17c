"""torch.nn.utils (but rnn, which test_nn_recurrent covers) against torch 1.13: gradient
clipping, parameters as a vector, conv/linear and batch-norm fusion, weight_norm,
spectral_norm (the hook and the parametrization), parametrize, the conv weights' memory
format, skip_init and stateless.functional_call. A module is built in both namespaces by the
same code and given torch's weights (nn_oracle.twin); then values, state_dict layouts and
exceptions (class and message) are compared.
"""
import copy
import types
import warnings

import pytest
import torch

import tensord
from nn_oracle import to_tensord, twin
from oracle import as_torch, outcomes

TOL = dict(rtol=1e-5, atol=1e-5)


def close(got, want, **tol):
    torch.testing.assert_close(as_torch(got), want.detach(), **(tol or TOL))


def both(fn):
    return fn(torch), fn(tensord)


def same_error(fn):
    """fn raises in both namespaces: the same class and message ("tensord" read as "torch");
    returns the message."""
    (_, werr), (_, gerr) = outcomes(fn)
    assert werr is not None, "torch did not raise"
    assert gerr is not None, f"tensord did not raise ({werr})"
    assert (gerr[0], gerr[1].replace("tensord", "torch")) == werr, (gerr, werr)
    return werr[1]


def tensor(ns, t):
    return t.clone() if ns is torch else to_tensord(t)


# ---- clip_grad -----------------------------------------------------------------------------------

def test_clipping_parameters_without_gradients_changes_nothing(session):
    """No tensord parameter has a gradient (no autograd yet), nor does a fresh torch one: both
    functions leave the values and clip_grad_norm_ returns tensor(0.)."""
    tm, dm = twin(lambda ns: ns.nn.Linear(3, 2))
    for fn in (lambda ns, m: ns.nn.utils.clip_grad_norm_(m.parameters(), 0.1),
               lambda ns, m: ns.nn.utils.clip_grad_norm_(m.weight, 0.1, norm_type="inf"),
               lambda ns, m: ns.nn.utils.clip_grad_value_(m.parameters(), 0.01),
               lambda ns, m: ns.nn.utils.clip_grad_value_(m.bias, 0)):
        want, got = fn(torch, tm), fn(tensord, dm)
        if want is None:
            assert got is None
        else:
            assert str(got.dtype) == str(want.dtype) and got.shape == want.shape
            close(got, want)
    for k, v in tm.state_dict().items():
        assert torch.equal(as_torch(dm.state_dict()[k]), v)
    same_error(lambda ns: ns.nn.utils.clip_grad_norm_([], "big"))
    same_error(lambda ns: ns.nn.utils.clip_grad_value_([], None))
    for ns in (torch, tensord):
        with pytest.warns(UserWarning, match="clip_grad_norm is now deprecated"):
            assert ns.nn.utils.clip_grad_norm([], 1.0).item() == 0.0


def grads(ns):
    g = torch.tensor([[3.0, -4.0], [0.5, 2.0]])
    return [types.SimpleNamespace(grad=tensor(ns, g)), types.SimpleNamespace(grad=None),
            types.SimpleNamespace(grad=tensor(ns, torch.tensor([-12.0, 1.0, 0.25])))]


@pytest.mark.parametrize("norm_type", [2.0, 1, 0.5, 3, float("inf"), "inf"])
@pytest.mark.parametrize("max_norm", [1.0, 100.0])
def test_clip_grad_norm_scales_what_gradients_there_are(norm_type, max_norm, session):
    """Any object with a tensor `.grad` is clipped as torch clips it: the total norm returned,
    the gradients scaled in place (or left, when under max_norm)."""
    tp, dp = grads(torch), grads(tensord)
    want = torch.nn.utils.clip_grad_norm_(tp, max_norm, norm_type)
    got = tensord.nn.utils.clip_grad_norm_(dp, max_norm, norm_type)
    close(got, want)
    for t, d in zip(tp, dp):
        if t.grad is not None:
            close(d.grad, t.grad)


def test_clip_grad_norm_nonfinite_and_clip_grad_value(session):
    def nonfinite(ns):
        p = grads(ns)
        p[0].grad[0, 0] = float("nan")
        return ns.nn.utils.clip_grad_norm_(p, 1.0, error_if_nonfinite=True)
    assert "is non-finite, so it cannot be clipped" in same_error(nonfinite)
    tp, dp = grads(torch), grads(tensord)
    torch.nn.utils.clip_grad_value_(tp, 1.5)
    tensord.nn.utils.clip_grad_value_(dp, 1.5)
    for t, d in zip(tp, dp):
        if t.grad is not None:
            close(d.grad, t.grad)
    assert as_torch(dp[2].grad).tolist() == [-1.5, 1.0, 0.25]


# ---- parameters_to_vector / vector_to_parameters -------------------------------------------------

def make_mlp(ns):
    return ns.nn.Sequential(ns.nn.Linear(3, 4), ns.nn.Linear(4, 2, bias=False))


def test_parameters_to_vector_and_back(session):
    tm, dm = twin(make_mlp)
    close(tensord.nn.utils.parameters_to_vector(dm.parameters()),
          torch.nn.utils.parameters_to_vector(tm.parameters()))
    vec = torch.arange(24.0)
    tv, dv = vec.clone(), to_tensord(vec)
    tw, dw = tm[0].weight, dm[0].weight
    torch.nn.utils.vector_to_parameters(tv, tm.parameters())
    tensord.nn.utils.vector_to_parameters(dv, dm.parameters())
    assert dm[0].weight is dw and tm[0].weight is tw  # the same objects, new data
    for k, v in tm.state_dict().items():
        assert torch.equal(as_torch(dm.state_dict()[k]), v), k
    tv.add_(100)  # the parameters are views of the vector, in both
    dv.add_(100)
    for k, v in tm.state_dict().items():
        assert torch.equal(as_torch(dm.state_dict()[k]), v), k
    assert as_torch(dm[1].weight).min().item() == 116.0
    same_error(lambda ns: ns.nn.utils.vector_to_parameters([1.0], make_mlp(ns).parameters()))
    same_error(lambda ns: ns.nn.utils.parameters_to_vector([]))


# ---- fusion --------------------------------------------------------------------------------------

def randomise_bn(ns, bn):
    """Gives a batch norm non-trivial running statistics and affine parameters (the same in
    both namespaces: seeded torch draws)."""
    g = torch.Generator().manual_seed(7)
    n = bn.num_features
    values = {"running_mean": torch.randn(n, generator=g),
              "running_var": torch.rand(n, generator=g) + 0.5,
              "weight": torch.randn(n, generator=g), "bias": torch.randn(n, generator=g)}
    with ns.no_grad():
        for name, v in values.items():
            if getattr(bn, name) is not None:
                getattr(bn, name).copy_(tensor(ns, v))
    return bn


@pytest.mark.parametrize("kind", ["conv2d", "conv1d_nobias", "conv_transpose2d", "linear",
                                  "bn_without_affine"])
def test_fuse_conv_bn_eval(kind, session):
    def make(ns):
        nn = ns.nn
        if kind == "conv2d":
            return nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4, eps=1e-3))
        if kind == "conv1d_nobias":
            return nn.Sequential(nn.Conv1d(2, 5, 2, bias=False), nn.BatchNorm1d(5))
        if kind == "conv_transpose2d":
            return nn.Sequential(nn.ConvTranspose2d(3, 4, 2), nn.BatchNorm2d(4))
        if kind == "linear":
            return nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))
        return nn.Sequential(nn.Conv2d(3, 4, 1), nn.BatchNorm2d(4, affine=False))
    tm, dm = twin(make)
    randomise_bn(torch, tm[1])
    randomise_bn(tensord, dm[1])
    tm.eval()
    dm.eval()
    x = torch.randn(*{"conv2d": (2, 3, 5, 5), "conv1d_nobias": (2, 2, 6),
                      "conv_transpose2d": (2, 3, 3, 3), "linear": (5, 3),
                      "bn_without_affine": (1, 3, 2, 2)}[kind])

    def fuse(ns, m):
        if kind == "linear":
            return ns.nn.utils.fusion.fuse_linear_bn_eval(m[0], m[1])
        return ns.nn.utils.fuse_conv_bn_eval(m[0], m[1], transpose=kind == "conv_transpose2d")
    tf, df = fuse(torch, tm), fuse(tensord, dm)
    assert repr(df) == repr(tf) and df is not dm[0]
    assert [type(p).__name__ for p in df.parameters()] == ["Parameter", "Parameter"]
    for k, v in tf.state_dict().items():
        close(df.state_dict()[k], v)
    close(df(to_tensord(x)), tm(x), rtol=1e-4, atol=1e-5)  # the fused layer computes both
    close(dm[0].weight, tm[0].weight)  # the originals are left alone
    tm.train()
    dm.train()
    assert same_error(lambda ns: fuse(ns, tm if ns is torch else dm)) == "Fusion only for eval!"


def test_fuse_conv_bn_weights_fills_missing_ones(session):
    w, rm, rv = torch.randn(4, 2, 3), torch.randn(4), torch.rand(4) + 0.1

    def run(ns):
        return ns.nn.utils.fuse_conv_bn_weights(tensor(ns, w), None, tensor(ns, rm),
                                                tensor(ns, rv), 1e-5, None, None)
    (tw, tb), (dw, db) = both(run)
    assert type(dw).__name__ == type(db).__name__ == "Parameter"
    close(dw, tw)
    close(db, tb)


# ---- weight_norm ---------------------------------------------------------------------------------

@pytest.mark.parametrize("dim", [0, 1, None, -1])
@pytest.mark.parametrize("layer", ["linear", "conv"])
def test_weight_norm(layer, dim, session):
    def make(ns):
        m = ns.nn.Linear(3, 4) if layer == "linear" else ns.nn.Conv2d(2, 3, 2)
        return ns.nn.utils.weight_norm(m, dim=dim)
    tm, dm = twin(make)
    x = torch.randn(2, 3) if layer == "linear" else torch.randn(1, 2, 4, 4)
    close(dm(to_tensord(x)), tm(x))
    close(dm.weight, tm.weight)
    with torch.no_grad(), tensord.no_grad():
        tm.weight_g.mul_(2)
    with tensord.no_grad():
        dm.weight_g.mul_(2)
    close(dm(to_tensord(x)), tm(x))  # the weight follows g at the next forward
    tensord.nn.utils.remove_weight_norm(dm)
    torch.nn.utils.remove_weight_norm(tm)
    assert list(dm.state_dict()) == list(tm.state_dict())
    assert type(dm.weight).__name__ == "Parameter"
    close(dm.weight, tm.weight)
    assert not dm._forward_pre_hooks


def test_weight_norm_errors(session):
    same_error(lambda ns: ns.nn.utils.weight_norm(ns.nn.utils.weight_norm(ns.nn.Linear(2, 2))))
    same_error(lambda ns: ns.nn.utils.remove_weight_norm(ns.nn.Linear(2, 2)))
    same_error(lambda ns: ns.nn.utils.remove_weight_norm(
        ns.nn.utils.weight_norm(ns.nn.Linear(2, 2)), "bias"))
    same_error(lambda ns: ns.nn.utils.weight_norm(ns.nn.LazyLinear(2)))
    same_error(lambda ns: ns.nn.utils.weight_norm(ns.nn.Linear(2, 2), "nope"))


# ---- spectral_norm (the hook) --------------------------------------------------------------------

@pytest.mark.parametrize("layer", ["linear", "conv", "conv_transpose"])
def test_spectral_norm(layer, session):
    def make(ns):
        m = {"linear": lambda: ns.nn.Linear(5, 4), "conv": lambda: ns.nn.Conv2d(2, 3, 2),
             "conv_transpose": lambda: ns.nn.ConvTranspose2d(2, 3, 2)}[layer]()
        return ns.nn.utils.spectral_norm(m, n_power_iterations=2)
    tm, dm = twin(make)  # the state (weight_orig, weight_u, weight_v): torch's
    assert dm.state_dict()._metadata == tm.state_dict()._metadata
    x = torch.randn(2, 5) if layer == "linear" else torch.randn(1, 2, 4, 4)
    for training in (True, True, False):  # the power iteration runs in training mode only
        tm.train(training)
        dm.train(training)
        close(dm(to_tensord(x)), tm(x), rtol=1e-4, atol=1e-5)
        for k, v in tm.state_dict().items():
            close(dm.state_dict()[k], v, rtol=1e-4, atol=1e-6)
    assert tuple(dm.weight_u.shape) == tuple(tm.weight_u.shape)
    torch.nn.utils.remove_spectral_norm(tm)
    tensord.nn.utils.remove_spectral_norm(dm)
    assert list(dm.state_dict()) == list(tm.state_dict()) == ["bias", "weight"]
    close(dm.weight, tm.weight, rtol=1e-4, atol=1e-6)


def test_spectral_norm_loads_a_checkpoint_from_before_version_1(session):
    """A state_dict without spectral_norm's version and with `weight` but no `weight_v` (as
    saved before version 1): v is solved from weight_orig, weight and weight_u."""
    tm, dm = twin(lambda ns: ns.nn.utils.spectral_norm(ns.nn.Linear(4, 3)))
    tm.eval()
    sd = tm.state_dict()
    del sd._metadata[""]["spectral_norm"]
    sd["weight"] = tm.weight.detach().clone()
    del sd["weight_v"]
    torch_sd = copy.copy(sd)
    tm.load_state_dict(torch_sd)
    dm.load_state_dict(sd)
    close(dm.weight_v, tm.weight_v, rtol=1e-4, atol=1e-5)


def test_spectral_norm_errors_and_torchs_leftover_load_hook(session):
    same_error(lambda ns: ns.nn.utils.spectral_norm(ns.nn.utils.spectral_norm(
        ns.nn.Linear(2, 2))))
    same_error(lambda ns: ns.nn.utils.spectral_norm(ns.nn.Linear(2, 2), n_power_iterations=0))
    same_error(lambda ns: ns.nn.utils.spectral_norm(ns.nn.Linear(2, 2, bias=False), "bias"))
    same_error(lambda ns: ns.nn.utils.spectral_norm(ns.nn.LazyLinear(2)))
    same_error(lambda ns: ns.nn.utils.remove_spectral_norm(ns.nn.Linear(2, 2)))

    def reload(ns):  # torch 1.13 leaves the load pre-hook after remove_spectral_norm
        m = ns.nn.utils.remove_spectral_norm(ns.nn.utils.spectral_norm(ns.nn.Linear(2, 2)))
        return m.load_state_dict(m.state_dict())
    assert 'Missing key(s) in state_dict: "weight_orig", "weight_u"' in same_error(reload)


# ---- orthogonal (a parametrization) ---------------------------------------------------------------

@pytest.mark.parametrize("shape,orthogonal_map,trivialization", [
    ((4, 4), None, True), ((5, 3), None, True), ((3, 5), None, True), ((4, 4), "cayley", True),
    ((5, 3), "householder", True), ((3, 5), "matrix_exp", True), ((4, 4), "householder", False),
    ((5, 3), "householder", False)])
def test_orthogonal(shape, orthogonal_map, trivialization, session):
    """torch 1.13's orthogonal: the weight orthogonalised at registration (QR where it is not
    orthogonal; a wide or tall one completed with random columns, whose `base` the tensord
    module takes from torch's state_dict), the same weight, forward and gradients of the
    parametrized original."""
    def make(ns):
        lin = ns.nn.Linear(shape[1], shape[0], bias=False)
        with ns.no_grad():
            lin.weight.copy_(ns.sin(ns.arange(shape[0] * shape[1] * 1.0).reshape(shape) + 1))
        return ns.nn.utils.parametrizations.orthogonal(
            lin, orthogonal_map=orthogonal_map, use_trivialization=trivialization)
    tm, dm = twin(make)
    close(dm.weight, tm.weight)  # (torch 1.13's own: for the 3x5 ones a zero row among them)
    x = torch.linspace(-1, 1, 2 * shape[1]).reshape(2, shape[1])
    tm(x).pow(2).sum().backward()
    dm(to_tensord(x)).pow(2).sum().backward()
    close(dm.parametrizations.weight.original.grad, tm.parametrizations.weight.original.grad,
          rtol=1e-4, atol=1e-5)


def test_orthogonal_errors(session):
    same_error(lambda ns: ns.nn.utils.parametrizations.orthogonal(ns.nn.Linear(3, 3),
                                                                   orthogonal_map="foo"))
    same_error(lambda ns: ns.nn.utils.parametrizations.orthogonal(ns.nn.Linear(3, 3), "bias"))
    same_error(lambda ns: ns.nn.utils.parametrizations.orthogonal(ns.nn.Linear(3, 3), "nope"))

    def assign(ns):
        lin = ns.nn.utils.parametrizations.orthogonal(ns.nn.Linear(3, 3),
                                                      use_trivialization=False)
        lin.weight = ns.eye(3)
    same_error(assign)


# ---- parametrize ---------------------------------------------------------------------------------

def symmetric(ns):
    class Symmetric(ns.nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).transpose(-1, -2)

        def right_inverse(self, A):
            return A.triu()

    class Scale(ns.nn.Module):
        def __init__(self, s):
            super().__init__()
            self.register_buffer("s", ns.tensor(float(s)))

        def forward(self, X):
            return X * self.s

        def right_inverse(self, X):
            return X / self.s

    class Negate(ns.nn.Module):
        def forward(self, X):
            return -X

    return Symmetric, Scale, Negate


def make_parametrized(ns):
    P = ns.nn.utils.parametrize
    Symmetric, Scale, Negate = symmetric(ns)
    m = ns.nn.Linear(3, 3)
    P.register_parametrization(m, "weight", Symmetric())
    P.register_parametrization(m, "weight", Scale(2))
    P.register_parametrization(m, "bias", Negate())
    return m


def test_register_parametrization(session):
    tm, dm = twin(make_parametrized)  # repr, class name, state_dict layout: torch's
    assert type(dm).__name__ == "ParametrizedLinear"
    close(dm.weight, tm.weight)
    close(dm.bias, tm.bias)
    x = torch.randn(2, 3)
    close(dm(to_tensord(x)), tm(x))
    w = as_torch(dm.weight)
    assert torch.equal(w, w.T)
    for ns, m in ((torch, tm), (tensord, dm)):
        P = ns.nn.utils.parametrize
        assert P.is_parametrized(m) and P.is_parametrized(m, "weight")
        assert not P.is_parametrized(m, "nope") and not P.is_parametrized(ns.nn.Linear(1, 1))
        assert P.type_before_parametrizations(m) is ns.nn.Linear
        assert isinstance(m.parametrizations.weight, P.ParametrizationList)
        with P.cached():
            assert m.weight is m.weight
        assert m.weight is not m.weight


def test_assigning_a_parametrized_tensor_goes_through_right_inverse(session):
    tm, dm = twin(make_parametrized)
    a = torch.randn(3, 3)
    with torch.no_grad(), tensord.no_grad():
        tm.weight = a
    dm.weight = to_tensord(a)
    close(dm.parametrizations.weight.original, tm.parametrizations.weight.original)
    close(dm.weight, tm.weight)
    msg = same_error(lambda ns: setattr(make_parametrized(ns), "bias", ns.zeros(3)))
    assert msg == "parametrization Negate does not implement right_inverse."


@pytest.mark.parametrize("leave", [True, False])
def test_remove_parametrizations(leave, session):
    tm, dm = twin(make_parametrized)
    for ns, m in ((torch, tm), (tensord, dm)):
        ns.nn.utils.parametrize.remove_parametrizations(m, "weight", leave_parametrized=leave)
    assert type(dm).__name__ == "ParametrizedLinear" and repr(dm) == repr(tm)
    close(dm.weight, tm.weight)
    for ns, m in ((torch, tm), (tensord, dm)):
        ns.nn.utils.parametrize.remove_parametrizations(m, "bias", leave_parametrized=leave)
    assert type(dm) is tensord.nn.Linear and repr(dm) == repr(tm)
    assert list(dm.state_dict()) == list(tm.state_dict()) == ["weight", "bias"]
    assert type(dm.weight).__name__ == "Parameter"
    for k, v in tm.state_dict().items():
        close(dm.state_dict()[k], v)


def test_parametrize_errors(session):
    def reg(ns, fn, name="weight", m=None, unsafe=False):
        module = ns.nn.Linear(3, 3) if m is None else m
        return ns.nn.utils.parametrize.register_parametrization(module, name, fn(ns),
                                                                unsafe=unsafe)

    class_of = {}

    def module_from(forward, inverse=None):
        def make(ns):
            key = (ns, forward, inverse)
            if key not in class_of:
                body = {"forward": lambda self, X: forward(ns, X)}
                if inverse is not None:
                    body["right_inverse"] = lambda self, X: inverse(ns, X)
                class_of[key] = type("P", (ns.nn.Module,), body)
            return class_of[key]()
        return make
    same_error(lambda ns: reg(ns, module_from(lambda ns, X: X[:2])))
    same_error(lambda ns: reg(ns, module_from(lambda ns, X: X.double())))
    same_error(lambda ns: reg(ns, module_from(lambda ns, X: 3)))
    same_error(lambda ns: reg(ns, module_from(lambda ns, X: X), "nope"))
    same_error(lambda ns: reg(ns, module_from(lambda ns, X: X, lambda ns, X: X.double())))
    same_error(lambda ns: reg(ns, module_from(lambda ns, X: X, lambda ns, X: 5)))
    same_error(lambda ns: reg(ns, module_from(lambda ns, X: X[:2]),
                              m=reg(ns, module_from(lambda ns, X: X))))
    same_error(lambda ns: ns.nn.utils.parametrize.remove_parametrizations(ns.nn.Linear(1, 1),
                                                                          "weight"))
    same_error(lambda ns: ns.nn.utils.parametrize.ParametrizationList([], ns.ones(1)))

    def unsafe(ns):  # unsafe: the shape may change
        m = reg(ns, module_from(lambda ns, X: X[:2]), unsafe=True)
        return tuple(m.weight.shape), list(m.state_dict())
    assert both(unsafe)[0] == both(unsafe)[1]


def test_parametrized_copies(session):
    tm, dm = twin(make_parametrized)
    tc, dc = copy.deepcopy(tm), copy.deepcopy(dm)
    assert type(dc).__name__ == "ParametrizedLinear" and repr(dc) == repr(tc)
    assert dc.parametrizations.weight.original is not dm.parametrizations.weight.original
    close(dc.weight, tc.weight)
    same_error(lambda ns: make_parametrized(ns).__getstate__())
    P = torch.nn.utils.parametrize
    target_t, target_d = torch.nn.Linear(3, 3), tensord.nn.Linear(3, 3)
    P.transfer_parametrizations_and_params(tm, target_t)
    tensord.nn.utils.parametrize.transfer_parametrizations_and_params(dm, target_d)
    assert repr(target_d) == repr(target_t)
    assert target_d.parametrizations.weight.original is dm.parametrizations.weight.original
    close(target_d.weight, target_t.weight)


# ---- parametrizations.spectral_norm --------------------------------------------------------------

@pytest.mark.parametrize("layer", ["linear", "conv_transpose", "bias_1d", "dim1"])
def test_spectral_norm_parametrization(layer, session):
    def make(ns):
        sn = ns.nn.utils.parametrizations.spectral_norm
        if layer == "linear":
            return sn(ns.nn.Linear(5, 4), n_power_iterations=3)
        if layer == "conv_transpose":
            return sn(ns.nn.ConvTranspose2d(2, 3, 2))
        if layer == "bias_1d":
            return sn(ns.nn.Linear(3, 4), "bias")
        return sn(ns.nn.Conv2d(2, 3, 2), dim=-3)
    tm, dm = twin(make)
    tname = "bias" if layer == "bias_1d" else "weight"
    for training in (True, True, False):
        tm.train(training)
        dm.train(training)
        close(getattr(dm, tname), getattr(tm, tname), rtol=1e-4, atol=1e-6)
    for k, v in tm.state_dict().items():
        close(dm.state_dict()[k], v, rtol=1e-4, atol=1e-6)


def test_spectral_norm_parametrization_errors(session):
    def sn(ns, **kwargs):
        return ns.nn.utils.parametrizations.spectral_norm(ns.nn.Linear(2, 2), **kwargs)
    same_error(lambda ns: sn(ns, name="x"))
    same_error(lambda ns: sn(ns, dim=2))
    same_error(lambda ns: sn(ns, n_power_iterations=0))


# ---- memory format, skip_init, functional_call ---------------------------------------------------

def test_convert_conv2d_weight_memory_format(session):
    def make(ns):
        return ns.nn.Sequential(ns.nn.Conv2d(3, 4, 3), ns.nn.Sequential(
            ns.nn.ConvTranspose2d(4, 1, 2)), ns.nn.Conv1d(2, 2, 2), ns.nn.Conv2d(1, 2, 1))
    tm, dm = twin(make)
    weights = [p for p in dm.parameters()]
    for ns, m in ((torch, tm), (tensord, dm)):
        assert ns.nn.utils.convert_conv2d_weight_memory_format(m, ns.channels_last) is m
    assert [p for p in dm.parameters()] == weights
    for t, d in zip(tm.parameters(), dm.parameters()):
        assert d.stride() == t.stride()
        close(d, t)
    torch.nn.utils.convert_conv2d_weight_memory_format(tm, torch.contiguous_format)
    tensord.nn.utils.convert_conv2d_weight_memory_format(dm, tensord.contiguous_format)
    assert [d.stride() for d in dm.parameters()] == [t.stride() for t in tm.parameters()]


def test_skip_init(session):
    def run(ns):
        m = ns.nn.utils.skip_init(ns.nn.Linear, 3, 4, bias=False, dtype=ns.float64)
        return repr(m), [(tuple(p.shape), str(p.dtype), type(p).__name__)
                         for p in m.parameters()]
    assert both(run)[0] == both(run)[1]
    state = tensord.get_rng_state()
    tensord.nn.utils.skip_init(tensord.nn.Conv2d, 3, 8, 3)
    assert torch.equal(as_torch(tensord.get_rng_state()), as_torch(state))  # nothing drawn
    same_error(lambda ns: ns.nn.utils.skip_init(int))
    same_error(lambda ns: ns.nn.utils.skip_init(ns.nn.Flatten))


def test_functional_call(session):
    tm, dm = twin(lambda ns: ns.nn.Sequential(ns.nn.Linear(3, 2), ns.nn.BatchNorm1d(2)))
    tm.eval()
    dm.eval()
    x, w = torch.randn(4, 3), torch.randn(2, 3)
    mean = torch.tensor([0.5, -1.0])

    def call(ns, m, args):
        return ns.nn.utils.stateless.functional_call(
            m, {"0.weight": tensor(ns, w), "1.running_mean": tensor(ns, mean)}, args)
    close(call(tensord, dm, (to_tensord(x),)), call(torch, tm, (x,)))
    close(call(tensord, dm, to_tensord(x)), call(torch, tm, x))
    assert type(dm[0]) is tensord.nn.Linear and not hasattr(dm[0], "_attr_to_path")
    close(dm(to_tensord(x)), tm(x))  # the module's own tensors again

    def kwargs(ns):
        class Add(ns.nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer("b", ns.ones(2))

            def forward(self, x, *, scale):
                return (x + self.b) * scale
        return ns.nn.utils.stateless.functional_call(
            Add(), {"b": ns.zeros(2)}, (ns.ones(2),), {"scale": 3}).tolist()
    assert both(kwargs)[0] == both(kwargs)[1] == [3.0, 3.0]

    def tied(ns):
        m = ns.nn.Sequential(ns.nn.Linear(2, 2), ns.nn.Linear(2, 2))
        m[1].weight = m[0].weight
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            ns.nn.utils.stateless.functional_call(
                m, {"0.weight": ns.ones(2, 2), "1.weight": ns.zeros(2, 2)}, ns.ones(1, 2))
        return [str(c.message) for c in caught]
    assert both(tied)[0] == both(tied)[1] and len(both(tied)[0]) == 1
