"""tensord.optim against torch 1.13's torch.optim: the same parameters (from numpy) and the
same hand-made gradients (assigned to .grad) on both sides for several steps, for every
optimizer and option combination; then the parameters and the optimizer state (state_dict
layout and values) are compared. Also state_dict round trips (within tensord, and between
torch and tensord through torch's file format), zero_grad, closures (LBFGS's on a small model
trained by autograd on both sides), add_param_group, the argument checks (exception class and
message), the learning rate schedulers (lr sequences compared exactly, warnings) and
swa_utils (AveragedModel, SWALR, update_bn)."""
import copy
import io
import warnings

import numpy as np
import pytest
import torch

import tensord
import tensord.optim  # noqa: F401  (wired into `import tensord` separately)
import tensord.optim.lr_scheduler  # noqa: F401
import tensord.optim.swa_utils  # noqa: F401

def close(got, want, where=""):
    """float32 1e-6 relative, elementwise or to the array's scale (a value that cancelled
    from larger terms may differ from torch's by an ulp of those terms: server kernels round
    e.g. addcdiv_ a little differently)."""
    scale = float(np.abs(want).max()) if want.size else 0.0
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=max(1e-7, 1e-6 * scale),
                               err_msg=where)
SHAPES = [(3, 4), (5,), (2, 1, 3)]
STEPS = 5


def to_np(t):
    if isinstance(t, torch.Tensor):
        return t.detach().numpy()
    return np.asarray(t.detach().numpy())


def make_params(dtype=np.float32, seed=0):
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(s).astype(dtype) for s in SHAPES]
    tp = [torch.nn.Parameter(torch.tensor(a)) for a in arrays]
    dp = [tensord.nn.Parameter(tensord.tensor(a)) for a in arrays]
    return tp, dp


def grads_for(step, dtype=np.float32, seed=1):
    rng = np.random.default_rng(seed * 1000 + step)
    return [rng.standard_normal(s).astype(dtype) for s in SHAPES]


def assign_grads(tp, dp, step, skip=(), dtype=np.float32):
    for i, (g, t, d) in enumerate(zip(grads_for(step, dtype), tp, dp)):
        if i in skip:
            t.grad, d.grad = None, None
        else:
            t.grad = torch.tensor(g)
            d.grad = tensord.tensor(g)


def assert_same_value(got, want, where):
    if isinstance(want, torch.Tensor):
        assert isinstance(got, tensord.Tensor), where
        assert str(got.dtype) == str(want.dtype), where
        assert tuple(got.shape) == tuple(want.shape), where
        close(to_np(got), to_np(want), where)
    elif isinstance(want, dict):
        assert isinstance(got, dict) and set(got) == set(want), where
        for k in want:
            assert_same_value(got[k], want[k], f"{where}[{k!r}]")
    elif isinstance(want, (list, tuple)):
        assert type(got) is type(want) and len(got) == len(want), where
        for i, (g, w) in enumerate(zip(got, want)):
            assert_same_value(g, w, f"{where}[{i}]")
    else:
        assert got == want and type(got) is type(want), (where, got, want)


def assert_same_state(dopt, topt, tp, dp):
    for i, (t, d) in enumerate(zip(tp, dp)):
        close(to_np(d), to_np(t), f"param {i}")
    assert_same_value(dopt.state_dict(), topt.state_dict(), "state_dict")


OPTIMIZERS = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9)),
    ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.3)),
    ("SGD", dict(lr=0.05, momentum=0.8, nesterov=True)),
    ("SGD", dict(lr=0.1, weight_decay=0.01)),
    ("SGD", dict(lr=0.1, momentum=0.9, weight_decay=0.05, maximize=True)),
    ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.1, maximize=True)),
    ("Adam", dict()),
    ("Adam", dict(lr=0.01, betas=(0.8, 0.9), eps=1e-6)),
    ("Adam", dict(lr=0.01, weight_decay=0.1)),
    ("Adam", dict(lr=0.01, amsgrad=True)),
    ("Adam", dict(lr=0.01, maximize=True)),
    ("Adam", dict(lr=0.02, weight_decay=0.05, amsgrad=True, maximize=True)),
    ("AdamW", dict()),
    ("AdamW", dict(lr=0.01, weight_decay=0.1)),
    ("AdamW", dict(lr=0.01, weight_decay=0, betas=(0.5, 0.6))),
    ("AdamW", dict(lr=0.01, amsgrad=True)),
    ("AdamW", dict(lr=0.01, maximize=True, amsgrad=True, eps=1e-4)),
    ("RMSprop", dict()),
    ("RMSprop", dict(lr=0.01, alpha=0.9, eps=1e-6)),
    ("RMSprop", dict(lr=0.01, weight_decay=0.1)),
    ("RMSprop", dict(lr=0.01, momentum=0.9)),
    ("RMSprop", dict(lr=0.01, centered=True)),
    ("RMSprop", dict(lr=0.01, centered=True, momentum=0.5, weight_decay=0.01, maximize=True)),
    ("Adagrad", dict()),
    ("Adagrad", dict(lr=0.1, lr_decay=0.01)),
    ("Adagrad", dict(lr=0.1, weight_decay=0.1)),
    ("Adagrad", dict(lr=0.1, initial_accumulator_value=0.5, eps=1e-6)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.1, weight_decay=0.01, maximize=True)),
    ("Adadelta", dict()),
    ("Adadelta", dict(lr=0.5, rho=0.8, eps=1e-5)),
    ("Adadelta", dict(lr=0.5, weight_decay=0.1)),
    ("Adadelta", dict(lr=0.5, weight_decay=0.05, maximize=True)),
    ("Adamax", dict()),
    ("Adamax", dict(lr=0.01, betas=(0.8, 0.9), eps=1e-6)),
    ("Adamax", dict(lr=0.01, weight_decay=0.1)),
    ("Adamax", dict(lr=0.02, weight_decay=0.05, maximize=True)),
    ("NAdam", dict()),
    ("NAdam", dict(lr=0.01, betas=(0.8, 0.9), eps=1e-6)),
    ("NAdam", dict(lr=0.01, momentum_decay=0.1)),
    ("NAdam", dict(lr=0.01, weight_decay=0.1, momentum_decay=0)),
    ("RAdam", dict()),
    ("RAdam", dict(lr=0.01, betas=(0.8, 0.95), eps=1e-6)),
    ("RAdam", dict(lr=0.01, weight_decay=0.1)),
    ("ASGD", dict()),
    ("ASGD", dict(lr=0.05, lambd=0.01, alpha=0.5, t0=2)),
    ("ASGD", dict(lr=0.05, t0=0, weight_decay=0.1)),
    ("ASGD", dict(lr=0.05, lambd=0.001, t0=1, maximize=True)),
    ("Rprop", dict()),
    ("Rprop", dict(lr=0.05, etas=(0.3, 1.5))),
    ("Rprop", dict(lr=0.01, step_sizes=(0.005, 0.02))),
    ("Rprop", dict(lr=0.01, etas=(0.4, 1.1), step_sizes=(1e-3, 0.015), maximize=True)),
]
# RAdam rectifies its step from step 6 on (rho_t > 5): run it long enough to get there
STEPS_FOR = {"RAdam": 10}
IDS = [f"{n}-{'-'.join(f'{k}={v}' for k, v in kw.items()) or 'defaults'}" for n, kw in OPTIMIZERS]


def pair(name, kwargs, tp, dp):
    return (getattr(tensord.optim, name)(dp, **kwargs), getattr(torch.optim, name)(tp, **kwargs))


def run_steps(dopt, topt, tp, dp, steps=range(STEPS)):
    for step in steps:
        # parameter 1 has no gradient on odd steps: torch skips it then
        assign_grads(tp, dp, step, skip=(1,) if step % 2 else ())
        dopt.step()
        topt.step()


@pytest.mark.parametrize("name,kwargs", OPTIMIZERS, ids=IDS)
def test_steps_match_torch(session, name, kwargs):
    tp, dp = make_params()
    dopt, topt = pair(name, kwargs, tp, dp)
    assert_same_value(dopt.state_dict(), topt.state_dict(), "initial state_dict")
    run_steps(dopt, topt, tp, dp, range(STEPS_FOR.get(name, STEPS)))
    assert_same_state(dopt, topt, tp, dp)
    # the state tensors live on the parameter's device
    for p, st in dopt.state.items():
        for k, v in st.items():
            if isinstance(v, tensord.Tensor) and k != "step":
                assert v.device == p.device


@pytest.mark.parametrize("name", ["Adam", "AdamW", "Adagrad", "Adamax", "RAdam", "NAdam"])
def test_steps_read_nothing_back(session, name, monkeypatch):
    """Bias corrections take the step count (and NAdam its momentum product) known in the
    client: a step queues its ops without reading state['step'] back (which would wait for the
    forward and backward passes first). A
    state loaded from a state_dict, or a step tensor set by the user, is read once, then known;
    the results stay torch's."""
    tp, dp = make_params()
    dopt, topt = pair(name, {}, tp, dp)
    run_steps(dopt, topt, tp, dp, range(2))
    reads = []
    original = type(session).download
    monkeypatch.setattr(type(session), "download",
                        lambda self, tensor_id: (reads.append(tensor_id), original(self, tensor_id))[1])
    run_steps(dopt, topt, tp, dp, range(2, 5))
    assert reads == []
    loaded = getattr(tensord.optim, name)(dp)
    loaded.load_state_dict(dopt.state_dict())
    loaded.state[dp[0]]["step"] = tensord.tensor(float(dopt.state[dp[0]]["step"]))  # read once
    reads.clear()
    run_steps(loaded, topt, tp, dp, range(5, 8))
    assert_same_state(loaded, topt, tp, dp)


@pytest.mark.parametrize("name,kwargs", OPTIMIZERS[::3], ids=IDS[::3])
def test_float64(session, name, kwargs):
    rng = np.random.default_rng(5)
    arrays = [rng.standard_normal(s) for s in SHAPES]
    tp = [torch.nn.Parameter(torch.tensor(a)) for a in arrays]
    dp = [tensord.nn.Parameter(tensord.tensor(a)) for a in arrays]
    dopt, topt = pair(name, kwargs, tp, dp)
    for step in range(3):
        assign_grads(tp, dp, step, dtype=np.float64)
        dopt.step()
        topt.step()
    for t, d in zip(tp, dp):
        assert str(d.dtype) == "torch.float64"
        np.testing.assert_allclose(to_np(d), to_np(t), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("name,kwargs", OPTIMIZERS, ids=IDS)
def test_state_dict_round_trip(session, name, kwargs):
    tp, dp = make_params()
    dopt, topt = pair(name, kwargs, tp, dp)
    run_steps(dopt, topt, tp, dp, range(3))
    saved = dopt.state_dict()
    # a fresh optimizer over copies of the parameters, given the saved state, continues as
    # the original (and as torch)
    dp2 = [tensord.nn.Parameter(p.detach().clone()) for p in dp]
    dopt2 = getattr(tensord.optim, name)(dp2, **kwargs)
    dopt2.load_state_dict(saved)
    assert_same_value(dopt2.state_dict(), topt.state_dict(), "loaded state_dict")
    # the loaded state is a copy, not the saved tensors
    for st_new, st_old in zip(dopt2.state_dict()["state"].values(), saved["state"].values()):
        for k, v in st_new.items():
            if isinstance(v, tensord.Tensor):
                assert v is not st_old[k]
    run_steps(dopt2, topt, tp, dp2, range(3, 6))
    assert_same_state(dopt2, topt, tp, dp2)
    # torch's state layout: ints as keys, and param_groups with indices
    sd = dopt2.state_dict()
    assert list(sd) == ["state", "param_groups"]
    assert sd["param_groups"][0]["params"] == [0, 1, 2]


def through_file(state_dict, save, load):
    buf = io.BytesIO()
    save(state_dict, buf)
    buf.seek(0)
    return load(buf)


# one option set of each optimizer
FIRST_OF_EACH = [(n, kw) for i, (n, kw) in enumerate(OPTIMIZERS)
                 if n not in [m for m, _ in OPTIMIZERS[:i]]]


@pytest.mark.parametrize("name,kwargs", FIRST_OF_EACH, ids=[n for n, _ in FIRST_OF_EACH])
def test_state_dict_between_torch_and_tensord(session, name, kwargs):
    """torch's state dict (saved by torch.save, read by tensord.load) continues in a tensord
    optimizer, and tensord's (tensord.save, torch.load) in a torch one."""
    tp, dp = make_params()
    dopt, topt = pair(name, kwargs, tp, dp)
    run_steps(dopt, topt, tp, dp, range(3))
    dp2 = [tensord.nn.Parameter(p.detach().clone()) for p in dp]
    dopt2 = getattr(tensord.optim, name)(dp2, **kwargs)
    dopt2.load_state_dict(through_file(topt.state_dict(), torch.save, tensord.load))
    assert_same_value(dopt2.state_dict(), topt.state_dict(), "tensord loaded torch's")
    tp2 = [torch.nn.Parameter(p.detach().clone()) for p in tp]
    topt2 = getattr(torch.optim, name)(tp2, **kwargs)
    topt2.load_state_dict(through_file(dopt.state_dict(), tensord.save, torch.load))
    assert_same_value(dopt.state_dict(), topt2.state_dict(), "torch loaded tensord's")
    run_steps(dopt2, topt2, tp2, dp2, range(3, 6))
    assert_same_state(dopt2, topt2, tp2, dp2)


@pytest.mark.parametrize("name,numbers", [
    ("Adamax", dict(step=3.0)),
    ("RAdam", dict(step=3)),
    ("NAdam", dict(step=3.0, mu_product=0.5)),
    ("ASGD", dict(step=3.0, eta=0.25, mu=1)),
])
def test_state_numbers_become_tensors(session, name, numbers):
    """A state dict from before these counters were tensors loads with them made tensors
    (torch's __setstate__)."""
    tp, dp = make_params()
    dopt, topt = pair(name, {}, tp, dp)
    run_steps(dopt, topt, tp, dp, range(2))
    sd = topt.state_dict()
    for st in sd["state"].values():
        st.update(numbers)
    topt.load_state_dict(sd)
    dopt.load_state_dict(through_file(sd, torch.save, tensord.load))
    assert_same_value(dopt.state_dict(), topt.state_dict(), "state_dict")
    run_steps(dopt, topt, tp, dp, range(2, 4))
    assert_same_state(dopt, topt, tp, dp)


def functional_state(lib, name, ps):
    """The state lists torch's functional form of optimizer `name` takes after (params, grads),
    as its optimizer makes them."""
    def zeros():
        return [lib.zeros_like(p) for p in ps]

    def scalars(value):
        return [lib.tensor(value) for _ in ps]
    return {"adadelta": lambda: [zeros(), zeros()],
            "adamax": lambda: [zeros(), zeros(), scalars(0.)],
            "nadam": lambda: [zeros(), zeros(), scalars(1.), scalars(0.)],
            "radam": lambda: [zeros(), zeros(), scalars(0.)],
            "asgd": lambda: [zeros(), scalars(1.), scalars(0.05), scalars(0.)],
            "rprop": lambda: [zeros(), [lib.full_like(p, 0.05) for p in ps]]}[name]()


FUNCTIONAL = [
    ("adadelta", dict(lr=0.5, rho=0.9, eps=1e-6, weight_decay=0.1, maximize=True)),
    ("adamax", dict(eps=1e-8, beta1=0.9, beta2=0.99, lr=0.01, weight_decay=0.01)),
    ("nadam", dict(beta1=0.9, beta2=0.999, lr=0.01, weight_decay=0.0, momentum_decay=4e-3,
                   eps=1e-8)),
    ("radam", dict(beta1=0.9, beta2=0.9, lr=0.01, weight_decay=0.1, eps=1e-8)),
    ("asgd", dict(lambd=1e-3, lr=0.05, t0=1, alpha=0.75, weight_decay=0.0, maximize=True)),
    ("rprop", dict(step_size_min=1e-3, step_size_max=0.1, etaminus=0.5, etaplus=1.2)),
]


@pytest.mark.parametrize("foreach", [None, True])
@pytest.mark.parametrize("name,kwargs", FUNCTIONAL, ids=[n for n, _ in FUNCTIONAL])
def test_functional_forms(session, name, kwargs, foreach):
    """The functional forms (torch.optim.<name>.<name>) with torch's signatures; foreach=True
    runs the single-tensor algorithm here, so it is compared with torch's single-tensor one."""
    import importlib
    tfn = getattr(importlib.import_module(f"torch.optim.{name}"), name)
    dfn = getattr(importlib.import_module(f"tensord.optim.{name}"), name)
    tp, dp = make_params()
    tstate, dstate = functional_state(torch, name, tp), functional_state(tensord, name, dp)
    with torch.no_grad(), tensord.no_grad():
        for step in range(10 if name == "radam" else 7):  # RAdam rectifies from step 6
            grads = grads_for(step)
            tfn(tp, [torch.tensor(g) for g in grads], *tstate, foreach=False, **kwargs)
            dfn(dp, [tensord.tensor(g) for g in grads], *dstate, foreach=foreach, **kwargs)
    for i, (t, d) in enumerate(zip(tp, dp)):
        close(to_np(d), to_np(t), f"param {i}")
    assert_same_value(dstate, tstate, "state")


@pytest.mark.parametrize("name", ["adamax", "nadam", "radam"])
def test_functional_forms_want_tensor_steps(session, name):
    def call(lib, ps):
        import importlib
        fn = getattr(importlib.import_module(f"{lib.__name__}.optim.{name}"), name)
        state = functional_state(lib, name, ps)
        state[-1] = [0.0 for _ in ps]  # numbers, as before these counters were tensors
        fn(ps, [lib.ones_like(p) for p in ps], *state, **dict(FUNCTIONAL)[name])
    same_error(call)


def test_param_groups_and_state_dict_layout(session):
    tp, dp = make_params()
    dopt = tensord.optim.SGD([{"params": dp[:2]}, {"params": dp[2], "lr": 0.5}], lr=0.1,
                             momentum=0.9)
    topt = torch.optim.SGD([{"params": tp[:2]}, {"params": tp[2], "lr": 0.5}], lr=0.1,
                           momentum=0.9)
    assert [g["lr"] for g in dopt.param_groups] == [0.1, 0.5]
    assert dopt.defaults == topt.defaults
    run_steps(dopt, topt, tp, dp, range(3))
    assert_same_state(dopt, topt, tp, dp)
    assert dopt.state_dict()["param_groups"][1]["params"] == [2]
    assert repr(dopt) == repr(topt)
    # a changed lr in a group changes the step
    dopt.param_groups[0]["lr"] = topt.param_groups[0]["lr"] = 0.01
    run_steps(dopt, topt, tp, dp, range(3, 5))
    assert_same_state(dopt, topt, tp, dp)


def test_add_param_group(session):
    tp, dp = make_params()
    dopt = tensord.optim.Adam(dp[:2], lr=0.01)
    topt = torch.optim.Adam(tp[:2], lr=0.01)
    run_steps(dopt, topt, tp[:2] + [torch.nn.Parameter(torch.zeros(2, 1, 3))],
              dp[:2] + [tensord.nn.Parameter(tensord.zeros(2, 1, 3))], range(2))
    dopt.add_param_group({"params": [dp[2]], "lr": 0.1, "amsgrad": True})
    topt.add_param_group({"params": [tp[2]], "lr": 0.1, "amsgrad": True})
    assert dopt.param_groups[1].keys() == topt.param_groups[1].keys()
    run_steps(dopt, topt, tp, dp, range(2, 5))
    assert_same_state(dopt, topt, tp, dp)


def outcome(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001
        return type(e).__name__, str(e)
    return None


def same_error(fn):
    tp, dp = make_params()
    want = outcome(lambda: fn(torch, tp))
    got = outcome(lambda: fn(tensord, dp))
    assert want is not None
    assert got == want


BAD_ARGS = [
    ("SGD", dict(lr=-1.0)),
    ("SGD", dict(lr=0.1, momentum=-0.5)),
    ("SGD", dict(lr=0.1, weight_decay=-1e-3)),
    ("SGD", dict(lr=0.1, nesterov=True)),
    ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.1, nesterov=True)),
    ("SGD", dict()),
    ("Adam", dict(lr=-1.0)),
    ("Adam", dict(eps=-1.0)),
    ("Adam", dict(betas=(1.0, 0.999))),
    ("Adam", dict(betas=(0.9, -0.1))),
    ("Adam", dict(weight_decay=-0.1)),
    ("Adam", dict(fused=True)),
    ("AdamW", dict(lr=-0.5)),
    ("AdamW", dict(betas=(0.9, 1.5))),
    ("AdamW", dict(weight_decay=-2)),
    ("RMSprop", dict(lr=-1.0)),
    ("RMSprop", dict(eps=-1.0)),
    ("RMSprop", dict(momentum=-1.0)),
    ("RMSprop", dict(weight_decay=-1.0)),
    ("RMSprop", dict(alpha=-1.0)),
    ("Adagrad", dict(lr=-1.0)),
    ("Adagrad", dict(lr_decay=-1.0)),
    ("Adagrad", dict(weight_decay=-1.0)),
    ("Adagrad", dict(initial_accumulator_value=-1.0)),
    ("Adagrad", dict(eps=-1.0)),
    ("Adadelta", dict(lr=-1.0)),
    ("Adadelta", dict(rho=1.5)),
    ("Adadelta", dict(rho=-0.1)),
    ("Adadelta", dict(eps=-1.0)),
    ("Adadelta", dict(weight_decay=-1.0)),
    ("Adamax", dict(lr=-1.0)),
    ("Adamax", dict(eps=-1.0)),
    ("Adamax", dict(betas=(1.0, 0.9))),
    ("Adamax", dict(betas=(0.9, 1.0))),
    ("Adamax", dict(weight_decay=-1.0)),
    ("NAdam", dict(lr=-1.0)),
    ("NAdam", dict(eps=-1.0)),
    ("NAdam", dict(betas=(-0.1, 0.9))),
    ("NAdam", dict(betas=(0.9, 2.0))),
    ("NAdam", dict(weight_decay=-1.0)),
    ("NAdam", dict(momentum_decay=-1.0)),
    ("RAdam", dict(lr=-1.0)),
    ("RAdam", dict(eps=-1.0)),
    ("RAdam", dict(betas=(1.0, 0.9))),
    ("RAdam", dict(betas=(0.9, -1.0))),
    ("RAdam", dict(weight_decay=-1.0)),
    ("ASGD", dict(lr=-1.0)),
    ("ASGD", dict(weight_decay=-1.0)),
    ("Rprop", dict(lr=-1.0)),
    ("Rprop", dict(etas=(1.0, 1.2))),
    ("Rprop", dict(etas=(0.5, 1.0))),
    ("Rprop", dict(etas=(0.0, 2.0))),
    ("SparseAdam", dict(lr=0.0)),
    ("SparseAdam", dict(eps=0.0)),
    ("SparseAdam", dict(betas=(1.0, 0.9))),
    ("SparseAdam", dict(betas=(0.9, -0.5))),
]


@pytest.mark.parametrize("name,kwargs", BAD_ARGS,
                         ids=[f"{n}-{kw}" for n, kw in BAD_ARGS])
def test_bad_arguments(session, name, kwargs):
    same_error(lambda lib, ps: getattr(lib.optim, name)(ps, **kwargs))


@pytest.mark.parametrize("case", [
    lambda lib, ps: lib.optim.SGD(ps[0], lr=0.1),                       # a tensor
    lambda lib, ps: lib.optim.SGD([], lr=0.1),                          # empty
    lambda lib, ps: lib.optim.SGD([{"params": set(ps)}], lr=0.1),       # a set
    lambda lib, ps: lib.optim.SGD([ps[0], 3], lr=0.1),                  # not a tensor
    lambda lib, ps: lib.optim.SGD([{"params": ps[:1]}, {"params": ps[:2]}], lr=0.1),
    lambda lib, ps: lib.optim.SGD([{"params": ps[:1]}]),                # lr required
    lambda lib, ps: lib.optim.SGD(ps, lr=0.1).load_state_dict(
        {"state": {}, "param_groups": [{"params": [0]}, {"params": [1]}]}),
    lambda lib, ps: lib.optim.SGD(ps, lr=0.1).load_state_dict(
        {"state": {}, "param_groups": [{"params": [0]}]}),
    lambda lib, ps: lib.optim.Optimizer(ps, {}).step(None),
    lambda lib, ps: lib.optim.lr_scheduler.StepLR(object(), 3),
    lambda lib, ps: lib.optim.lr_scheduler.StepLR(lib.optim.SGD(ps, lr=1.), 3, last_epoch=4),
    lambda lib, ps: lib.optim.lr_scheduler.LambdaLR(lib.optim.SGD(ps, lr=1.), [abs, abs]),
    lambda lib, ps: lib.optim.lr_scheduler.ReduceLROnPlateau(lib.optim.SGD(ps, lr=1.),
                                                             factor=1.0),
    lambda lib, ps: lib.optim.lr_scheduler.ReduceLROnPlateau(lib.optim.SGD(ps, lr=1.),
                                                             mode="up"),
    lambda lib, ps: lib.optim.lr_scheduler.ReduceLROnPlateau(lib.optim.SGD(ps, lr=1.),
                                                             threshold_mode="x"),
    lambda lib, ps: lib.optim.lr_scheduler.ReduceLROnPlateau(lib.optim.SGD(ps, lr=1.),
                                                             min_lr=[0, 0]),
    lambda lib, ps: lib.optim.lr_scheduler.OneCycleLR(lib.optim.SGD(ps, lr=1.), 1.0),
    lambda lib, ps: lib.optim.lr_scheduler.OneCycleLR(lib.optim.SGD(ps, lr=1.), 1.0,
                                                      total_steps=0),
    lambda lib, ps: lib.optim.lr_scheduler.OneCycleLR(lib.optim.SGD(ps, lr=1.), 1.0,
                                                      total_steps=10, pct_start=1),
    lambda lib, ps: lib.optim.lr_scheduler.OneCycleLR(lib.optim.SGD(ps, lr=1.), 1.0,
                                                      total_steps=10, anneal_strategy="x"),
    lambda lib, ps: lib.optim.lr_scheduler.OneCycleLR(lib.optim.Adagrad(ps), 1.0,
                                                      total_steps=10),
    lambda lib, ps: lib.optim.lr_scheduler.MultiplicativeLR(lib.optim.SGD(ps, lr=1.),
                                                            [abs, abs]),
    lambda lib, ps: lib.optim.lr_scheduler.ConstantLR(lib.optim.SGD(ps, lr=1.), factor=1.5),
    lambda lib, ps: lib.optim.lr_scheduler.ConstantLR(lib.optim.SGD(ps, lr=1.), factor=-0.5),
    lambda lib, ps: lib.optim.lr_scheduler.LinearLR(lib.optim.SGD(ps, lr=1.),
                                                    start_factor=-0.1),
    lambda lib, ps: lib.optim.lr_scheduler.LinearLR(lib.optim.SGD(ps, lr=1.), end_factor=2),
    lambda lib, ps: lib.optim.lr_scheduler.PolynomialLR(object()),
    lambda lib, ps: lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(lib.optim.SGD(ps, lr=1.),
                                                                       0),
    lambda lib, ps: lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(lib.optim.SGD(ps, lr=1.),
                                                                       2.0),
    lambda lib, ps: lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(lib.optim.SGD(ps, lr=1.),
                                                                       2, T_mult=1.5),
    lambda lib, ps: lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(lib.optim.SGD(ps, lr=1.),
                                                                       2, T_mult=0),
    lambda lib, ps: lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(lib.optim.SGD(ps, lr=1.),
                                                                       2).step(-1),
    lambda lib, ps: lib.optim.lr_scheduler.CyclicLR(object(), 0.1, 1.0),
    lambda lib, ps: lib.optim.lr_scheduler.CyclicLR(lib.optim.SGD(ps, lr=1.), 0.1, 1.0,
                                                    mode="x"),
    lambda lib, ps: lib.optim.lr_scheduler.CyclicLR(lib.optim.Adam(ps), 0.1, 1.0),
    lambda lib, ps: lib.optim.lr_scheduler.CyclicLR(lib.optim.SGD(ps, lr=1.), [0.1, 0.2], 1.0),
    lambda lib, ps: lib.optim.lr_scheduler.CyclicLR(lib.optim.SGD(ps, lr=1., momentum=0.9), 0.1,
                                                    1.0, base_momentum=[0.8, 0.9]),
    lambda lib, ps: two_schedulers(lib, ps, "SequentialLR", milestones=[]),
    lambda lib, ps: two_schedulers(lib, ps, "SequentialLR", milestones=[2], other=1),
    lambda lib, ps: two_schedulers(lib, ps, "SequentialLR", milestones=[2], other=2),
    lambda lib, ps: two_schedulers(lib, ps, "ChainedScheduler", other=1),
    lambda lib, ps: lib.optim.swa_utils.SWALR(lib.optim.SGD(ps, lr=1.), 0.1,
                                              anneal_strategy="x"),
    lambda lib, ps: lib.optim.swa_utils.SWALR(lib.optim.SGD(ps, lr=1.), 0.1, anneal_epochs=-1),
    lambda lib, ps: lib.optim.swa_utils.SWALR(lib.optim.SGD(ps, lr=1.), 0.1, anneal_epochs=1.5),
    lambda lib, ps: lib.optim.swa_utils.SWALR(lib.optim.SGD(ps, lr=1.), [0.1, 0.2]),
    lambda lib, ps: lib.optim.swa_utils.SWALR(object(), 0.1),
    lambda lib, ps: lib.optim.LBFGS([{"params": ps[:1]}, {"params": ps[1:]}]),
    lambda lib, ps: lib.optim.LBFGS(ps, line_search_fn="armijo").step(ones_grads(lib, ps)),
    lambda lib, ps: lib.optim.LBFGS(ps).step(),
    lambda lib, ps: lib.optim.SparseAdam(ps).step(ones_grads(lib, ps)),
    lambda lib, ps: lib.optim.SparseAdam([{"params": ps[:1]}, {"params": ps[1:], "lr": 0.1}],
                                         lr=0.01).step(ones_grads(lib, ps)),
])
def test_bad_use(session, case):
    same_error(case)


def ones_grads(lib, ps):
    """A closure that gives every parameter a gradient of ones."""
    def closure():
        for p in ps:
            p.grad = lib.ones_like(p)
        return lib.tensor(1.0)
    return closure


def two_schedulers(lib, ps, kind, milestones=None, other=None):
    """SequentialLR or ChainedScheduler over ConstantLR and ExponentialLR of one SGD; `other`:
    which of them (1 or 2) belongs to another optimizer."""
    opt = lib.optim.SGD(ps[:2], lr=1.)
    opt2 = lib.optim.SGD(ps[2:], lr=1.)
    s1 = lib.optim.lr_scheduler.ConstantLR(opt2 if other == 1 else opt, factor=0.1,
                                           total_iters=2)
    s2 = lib.optim.lr_scheduler.ExponentialLR(opt2 if other == 2 else opt, gamma=0.9)
    if kind == "SequentialLR":
        return lib.optim.lr_scheduler.SequentialLR(opt, [s1, s2], milestones=milestones)
    return lib.optim.lr_scheduler.ChainedScheduler([s1, s2])


def test_zero_grad(session):
    tp, dp = make_params()
    dopt = tensord.optim.SGD(dp, lr=0.1)
    assign_grads(tp, dp, 0, skip=(2,))
    dopt.zero_grad()  # 1.13's default: set_to_none=False
    assert dp[2].grad is None
    for p in dp[:2]:
        assert isinstance(p.grad, tensord.Tensor)
        assert not to_np(p.grad).any()
    dopt.zero_grad(set_to_none=True)
    assert all(p.grad is None for p in dp)
    # a step without gradients changes nothing and keeps no state
    before = [to_np(p).copy() for p in dp]
    dopt.step()
    for b, p in zip(before, dp):
        np.testing.assert_array_equal(b, to_np(p))
    assert len(dopt.state) == 0


def test_closure(session):
    tp, dp = make_params()
    calls = []

    def closure():
        calls.append(1)
        return tensord.tensor(2.5)

    names = ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam",
             "RAdam", "ASGD", "Rprop", "SparseAdam"]
    for name in names:
        opt = getattr(tensord.optim, name)(dp, lr=0.1)
        assert opt.step() is None
        assert opt.step(closure).item() == 2.5
    assert len(calls) == len(names)


def test_module_parameters(session):
    """An nn.Module's parameters, as a training loop passes them."""
    torch.manual_seed(0)
    tm = torch.nn.Linear(4, 3)
    dm = tensord.nn.Linear(4, 3)
    with tensord.no_grad():
        dm.weight.copy_(tensord.tensor(tm.weight.detach().numpy()))
        dm.bias.copy_(tensord.tensor(tm.bias.detach().numpy()))
    topt = torch.optim.AdamW(tm.parameters(), lr=0.01)
    dopt = tensord.optim.AdamW(dm.parameters(), lr=0.01)
    rng = np.random.default_rng(3)
    for _ in range(3):
        gw = rng.standard_normal((3, 4)).astype(np.float32)
        gb = rng.standard_normal(3).astype(np.float32)
        tm.weight.grad, tm.bias.grad = torch.tensor(gw), torch.tensor(gb)
        dm.weight.grad, dm.bias.grad = tensord.tensor(gw), tensord.tensor(gb)
        topt.step()
        dopt.step()
    close(to_np(dm.weight), to_np(tm.weight))
    close(to_np(dm.bias), to_np(tm.bias))


# ---- learning rate schedulers ----

class Warmup:
    """A callable object, whose __dict__ LambdaLR's state_dict saves."""

    def __init__(self, n):
        self.n = n

    def __call__(self, epoch):
        return min(1.0, (epoch + 1) / self.n)


SCHEDULERS = [
    ("LambdaLR", dict(lr_lambda=lambda e: 0.95 ** e)),
    ("LambdaLR", dict(lr_lambda=Warmup(4))),
    ("StepLR", dict(step_size=3)),
    ("StepLR", dict(step_size=2, gamma=0.5)),
    ("MultiStepLR", dict(milestones=[2, 5, 5, 9], gamma=0.3)),
    ("ExponentialLR", dict(gamma=0.9)),
    ("CosineAnnealingLR", dict(T_max=5)),
    ("CosineAnnealingLR", dict(T_max=4, eta_min=0.01)),
    ("OneCycleLR", dict(max_lr=1.0, total_steps=13)),
    ("OneCycleLR", dict(max_lr=[1.0, 0.5], epochs=3, steps_per_epoch=4, pct_start=0.25,
                        anneal_strategy="linear", three_phase=True)),
]
# (after the OneCycleLRs, so that the indices in the ids above stay as they were)
SCHEDULERS += [
    ("MultiplicativeLR", dict(lr_lambda=lambda e: 0.9)),
    ("MultiplicativeLR", dict(lr_lambda=Warmup(3))),
    ("ConstantLR", dict()),
    ("ConstantLR", dict(factor=0.5, total_iters=4)),
    ("LinearLR", dict()),
    ("LinearLR", dict(start_factor=0.25, end_factor=0.75, total_iters=6)),
    ("LinearLR", dict(start_factor=1.0, end_factor=0.1, total_iters=4)),
    ("PolynomialLR", dict()),
    ("PolynomialLR", dict(total_iters=8, power=2.0)),
    ("CosineAnnealingWarmRestarts", dict(T_0=3)),
    ("CosineAnnealingWarmRestarts", dict(T_0=2, T_mult=2, eta_min=0.01)),
    ("CyclicLR", dict(base_lr=0.01, max_lr=0.1, step_size_up=2, cycle_momentum=False)),
    ("CyclicLR", dict(base_lr=[0.01, 0.02], max_lr=0.1, step_size_up=2, step_size_down=3,
                      mode="triangular2", cycle_momentum=False)),
    ("CyclicLR", dict(base_lr=0.01, max_lr=[0.1, 0.2], step_size_up=3, mode="exp_range",
                      gamma=0.9, cycle_momentum=False)),
    ("CyclicLR", dict(base_lr=0.01, max_lr=0.1, step_size_up=2, scale_fn=lambda x: 0.5 ** x,
                      scale_mode="iterations", cycle_momentum=False)),
]


def scheduler_pair(name, kwargs, opt_name="SGD", opt_kwargs=None):
    opt_kwargs = opt_kwargs or dict(lr=0.1, momentum=0.9)
    tp, dp = make_params()
    topt = getattr(torch.optim, opt_name)([{"params": tp[:2]}, {"params": tp[2:], "lr": 0.3}],
                                          **opt_kwargs)
    dopt = getattr(tensord.optim, opt_name)([{"params": dp[:2]}, {"params": dp[2:], "lr": 0.3}],
                                            **opt_kwargs)
    tsch = getattr(torch.optim.lr_scheduler, name)(topt, **kwargs)
    dsch = getattr(tensord.optim.lr_scheduler, name)(dopt, **kwargs)
    return dopt, topt, dsch, tsch


def sched_state(sd):
    # bound methods and weak references to them: the same kind on both sides, not equal
    for k in ("anneal_func", "_scale_fn_ref"):
        if k in sd:
            assert sd[k] is None or callable(sd[k]), k
    return {k: v for k, v in sd.items() if k not in ("anneal_func", "_scale_fn_ref")}


@pytest.mark.parametrize("opt_name,opt_kwargs", [("SGD", dict(lr=0.1, momentum=0.9)),
                                                 ("Adam", dict(lr=0.1))])
@pytest.mark.parametrize("name,kwargs", SCHEDULERS,
                         ids=[f"{n}{i}" for i, (n, _) in enumerate(SCHEDULERS)])
def test_scheduler_matches_torch(session, name, kwargs, opt_name, opt_kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dopt, topt, dsch, tsch = scheduler_pair(name, kwargs, opt_name, opt_kwargs)
        assert dsch.get_last_lr() == tsch.get_last_lr()
        for _ in range(12):
            dopt.step()
            topt.step()
            dsch.step()
            tsch.step()
            assert dsch.get_last_lr() == tsch.get_last_lr()
            for dg, tg in zip(dopt.param_groups, topt.param_groups):
                assert {k: v for k, v in dg.items() if k != "params"} == \
                    {k: v for k, v in tg.items() if k != "params"}
    dsd, tsd = dsch.state_dict(), tsch.state_dict()
    assert set(dsd) == set(tsd)
    assert sched_state({k: v for k, v in dsd.items() if k != "lr_lambdas"}) == \
        sched_state({k: v for k, v in tsd.items() if k != "lr_lambdas"})
    if "lr_lambdas" in tsd:
        assert dsd["lr_lambdas"] == tsd["lr_lambdas"]


# CyclicLR's state dict holds a weak reference to a method (torch 1.13's): it can be neither
# copied nor loaded into another scheduler
ROUND_TRIP = [(i, n, kw) for i, (n, kw) in enumerate(SCHEDULERS)
              if n not in ("OneCycleLR", "CyclicLR")]


@pytest.mark.parametrize("name,kwargs", [(n, kw) for _, n, kw in ROUND_TRIP],
                         ids=[f"{n}{i}" for i, n, _ in ROUND_TRIP])
def test_scheduler_state_dict_round_trip(session, name, kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dopt, topt, dsch, tsch = scheduler_pair(name, kwargs)
        for _ in range(4):
            dopt.step(), topt.step(), dsch.step(), tsch.step()
        saved = copy.deepcopy(dsch.state_dict())
        osaved = dopt.state_dict()
        dopt2, _, dsch2, _ = scheduler_pair(name, kwargs)
        dopt2.load_state_dict(osaved)
        dsch2.load_state_dict(saved)
        assert dsch2.get_last_lr() == tsch.get_last_lr()
        for _ in range(5):
            dopt2.step(), topt.step(), dsch2.step(), tsch.step()
            assert dsch2.get_last_lr() == tsch.get_last_lr()


def test_scheduler_epoch_argument_and_warnings(session):
    dopt, topt, dsch, tsch = scheduler_pair("StepLR", dict(step_size=2))
    with warnings.catch_warnings(record=True) as dw:
        warnings.simplefilter("always")
        dsch.step()  # before optimizer.step()
        dsch.step(7)  # closed form
        dsch.get_lr()
    with warnings.catch_warnings(record=True) as tw:
        warnings.simplefilter("always")
        tsch.step()
        tsch.step(7)
        tsch.get_lr()
    assert [str(w.message) for w in dw] == [str(w.message) for w in tw]
    assert [w.category for w in dw] == [w.category for w in tw]
    assert dsch.get_last_lr() == tsch.get_last_lr()


@pytest.mark.parametrize("kwargs", [
    dict(),
    dict(mode="max", factor=0.5, patience=1, threshold=0.1, threshold_mode="abs", cooldown=2),
    dict(patience=0, min_lr=[0.02, 0.05], eps=1e-3),
    dict(mode="max", patience=2, threshold_mode="rel", min_lr=0.001),
])
def test_reduce_lr_on_plateau(session, kwargs):
    dopt, topt, _, _ = scheduler_pair("StepLR", dict(step_size=100))
    dsch = tensord.optim.lr_scheduler.ReduceLROnPlateau(dopt, **kwargs)
    tsch = torch.optim.lr_scheduler.ReduceLROnPlateau(topt, **kwargs)
    metrics = [1.0, 0.9, 0.95, 0.95, 0.96, 0.89, 0.9, 0.9, 0.9, 0.9, 1.2, 1.2, 1.2, 0.5,
               0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5]
    for i, m in enumerate(metrics):
        dsch.step(tensord.tensor(m) if i % 2 else m)
        tsch.step(m)
        assert dsch._last_lr == tsch._last_lr
        assert [g["lr"] for g in dopt.param_groups] == [g["lr"] for g in topt.param_groups]
    dsd = dsch.state_dict()
    assert dsd == tsch.state_dict()
    dsch2 = tensord.optim.lr_scheduler.ReduceLROnPlateau(dopt)
    dsch2.load_state_dict(dsd)
    assert dsch2.state_dict() == dsd


def lr_trace(opt, sch, steps):
    """The lrs (get_last_lr) and the groups' options after each optimizer + scheduler step,
    with the warnings raised."""
    out = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(steps):
            opt.step()
            sch.step()
            out.append((sch.get_last_lr(),
                        [{k: v for k, v in g.items() if k != "params"}
                         for g in opt.param_groups]))
    return out, [(w.category, str(w.message)) for w in caught]


@pytest.mark.parametrize("mode,extra", [
    ("triangular", dict()),
    ("triangular2", dict(step_size_down=3)),
    ("exp_range", dict(gamma=0.85, base_momentum=[0.7, 0.75], max_momentum=0.95)),
])
def test_cyclic_lr_cycles_sgd_momentum(session, mode, extra):
    """CyclicLR cycles SGD's momentum inversely to the lr; the steps use both."""
    tp, dp = make_params()
    topt = torch.optim.SGD([{"params": tp[:2]}, {"params": tp[2:]}], lr=0.1, momentum=0.9)
    dopt = tensord.optim.SGD([{"params": dp[:2]}, {"params": dp[2:]}], lr=0.1, momentum=0.9)
    tsch = torch.optim.lr_scheduler.CyclicLR(topt, 0.01, [0.1, 0.3], step_size_up=2, mode=mode,
                                             **extra)
    dsch = tensord.optim.lr_scheduler.CyclicLR(dopt, 0.01, [0.1, 0.3], step_size_up=2,
                                               mode=mode, **extra)
    assert dsch.get_last_lr() == tsch.get_last_lr()
    assert dsch.base_momentums == tsch.base_momentums
    for step in range(14):
        assign_grads(tp, dp, step)
        dopt.step()
        topt.step()
        dsch.step()
        tsch.step()
        assert dsch.get_last_lr() == tsch.get_last_lr()
        assert [g["momentum"] for g in dopt.param_groups] == \
            [g["momentum"] for g in topt.param_groups]
    assert_same_state(dopt, topt, tp, dp)
    assert sched_state(dsch.state_dict()) == sched_state(tsch.state_dict())


def sequential_or_chained(lib, opt, kind, variant):
    sched = lib.optim.lr_scheduler
    if variant == 0:
        parts = [sched.ConstantLR(opt, factor=0.1, total_iters=2),
                 sched.ExponentialLR(opt, gamma=0.9),
                 sched.LinearLR(opt, start_factor=0.5, total_iters=3)]
    else:  # warmup, then cosine annealing
        parts = [sched.LinearLR(opt, start_factor=0.1, total_iters=4),
                 sched.CosineAnnealingLR(opt, T_max=6, eta_min=0.001),
                 sched.MultiplicativeLR(opt, lr_lambda=Warmup(2))]
    if kind == "SequentialLR":
        return sched.SequentialLR(opt, parts, milestones=[3, 7] if variant == 0 else [4, 10])
    return sched.ChainedScheduler(parts)


@pytest.mark.parametrize("variant", [0, 1])
@pytest.mark.parametrize("kind", ["SequentialLR", "ChainedScheduler"])
def test_sequential_and_chained_schedulers(session, kind, variant):
    tp, dp = make_params()
    topt = torch.optim.SGD([{"params": tp[:2]}, {"params": tp[2:], "lr": 0.3}], lr=0.1)
    dopt = tensord.optim.SGD([{"params": dp[:2]}, {"params": dp[2:], "lr": 0.3}], lr=0.1)
    with warnings.catch_warnings(record=True) as tw:
        warnings.simplefilter("always")
        tsch = sequential_or_chained(torch, topt, kind, variant)
    with warnings.catch_warnings(record=True) as dw:
        warnings.simplefilter("always")
        dsch = sequential_or_chained(tensord, dopt, kind, variant)
    assert [str(w.message) for w in dw] == [str(w.message) for w in tw]
    assert dsch.get_last_lr() == tsch.get_last_lr()
    assert dopt.param_groups[0]["lr"] == topt.param_groups[0]["lr"]
    dtrace, dwarn = lr_trace(dopt, dsch, 6)
    ttrace, twarn = lr_trace(topt, tsch, 6)
    assert dtrace == ttrace
    assert dwarn == twarn  # SequentialLR restarts a scheduler with step(0): a warning
    dsd, tsd = dsch.state_dict(), tsch.state_dict()
    assert dsd == tsd
    # a new one given the state continues as torch's
    dopt2 = tensord.optim.SGD([{"params": dp[:2]}, {"params": dp[2:], "lr": 0.3}], lr=0.1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dsch2 = sequential_or_chained(tensord, dopt2, kind, variant)
    dopt2.load_state_dict(dopt.state_dict())
    dsch2.load_state_dict(copy.deepcopy(dsd))
    assert dsch2.state_dict() == tsd
    dtrace, dwarn = lr_trace(dopt2, dsch2, 8)
    ttrace, twarn = lr_trace(topt, tsch, 8)
    assert dtrace == ttrace
    assert dwarn == twarn


@pytest.mark.parametrize("name,kwargs", [
    ("MultiplicativeLR", dict(lr_lambda=lambda e: 0.9)),
    ("ConstantLR", dict(factor=0.5, total_iters=3)),
    ("LinearLR", dict(start_factor=0.2, total_iters=4)),
    ("PolynomialLR", dict(total_iters=6, power=0.5)),
    ("CosineAnnealingWarmRestarts", dict(T_0=3, T_mult=2)),
    ("CyclicLR", dict(base_lr=0.01, max_lr=0.1, step_size_up=2)),
])
def test_new_scheduler_warnings_and_epochs(session, name, kwargs):
    """Stepping before the optimizer, get_lr() outside step(), and step(epoch) (the closed form,
    where the scheduler has one; CosineAnnealingWarmRestarts takes fractional epochs)."""
    def run(lib, opt):
        sch = getattr(lib.optim.lr_scheduler, name)(opt, **kwargs)
        out = []
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            sch.step()  # before optimizer.step()
            out.append(sch.get_last_lr())
            sch.get_lr()
            opt.step()
            for epoch in ([2.5, 0.4, 7, 8.25] if name == "CosineAnnealingWarmRestarts"
                          else [5, 1, 3]):
                sch.step(epoch)
                out.append(sch.get_last_lr())
            sch.step()
            out.append(sch.get_last_lr())
        return out, [(w.category, str(w.message)) for w in caught], sch.last_epoch

    tp, dp = make_params()
    topt = torch.optim.SGD([{"params": tp[:2]}, {"params": tp[2:], "lr": 0.3}], lr=0.1,
                           momentum=0.9)
    dopt = tensord.optim.SGD([{"params": dp[:2]}, {"params": dp[2:], "lr": 0.3}], lr=0.1,
                             momentum=0.9)
    assert run(tensord, dopt) == run(torch, topt)
    assert [g["lr"] for g in dopt.param_groups] == [g["lr"] for g in topt.param_groups]


# ---- LBFGS ----
# Objectives of the three parameters (flattened, float64: a smooth convex one, and
# Rosenbrock's), computed with their gradients in numpy: both sides get bit-identical values
# for identical parameters, so that what differs is LBFGS's own arithmetic (reductions summed
# in another order: 1e-16s, which the iterations carry along a little).

def objective(kind="convex", seed=21):
    n = sum(int(np.prod(s)) for s in SHAPES)
    if kind == "rosenbrock":  # curved valleys: the line search brackets and zooms
        def f_and_grad(x):
            u, v = x[:-1], x[1:]
            g = np.zeros_like(x)
            g[:-1] = -400 * u * (v - u ** 2) - 2 * (1 - u)
            g[1:] += 200 * (v - u ** 2)
            return (100 * (v - u ** 2) ** 2 + (1 - u) ** 2).sum(), g
        return f_and_grad
    rng = np.random.default_rng(seed)
    m = rng.standard_normal((n, n))
    a = m @ m.T / n + 0.1 * np.eye(n)
    b = rng.standard_normal(n)

    def f_and_grad(x):
        return 0.5 * x @ a @ x + np.log(np.cosh(x)).sum() - b @ x, a @ x + np.tanh(x) - b
    return f_and_grad


OBJECTIVES = {"convex": objective(), "rosenbrock": objective("rosenbrock")}


def numpy_closure(lib, ps, losses, objective="convex", skip=()):
    """The closure: the objective's value, and its gradient as .grad (None for the parameters
    in `skip`, which LBFGS then reads as zeros)."""
    f_and_grad = OBJECTIVES[objective]

    def closure():
        x = np.concatenate([to_np(p).reshape(-1) for p in ps])
        f, g = f_and_grad(x)
        offset = 0
        for i, p in enumerate(ps):
            n = p.numel()
            p.grad = None if i in skip else lib.tensor(g[offset:offset + n].reshape(tuple(p.shape)))
            offset += n
        losses.append(float(f))
        return lib.tensor(f)
    return closure


def make_params64():
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s) * 0.5 for s in SHAPES]
    return ([torch.nn.Parameter(torch.tensor(a)) for a in arrays],
            [tensord.nn.Parameter(tensord.tensor(a)) for a in arrays])


def assert_lbfgs_state(got, want, where, rtol, scale=None):
    """The state's layout exactly (numbers and tensors where torch has them, list lengths, None
    entries), its values to rtol of their scale: a tensor's largest value, or a list's (near
    the optimum the history's al and ro are rounding noise of larger terms)."""
    if isinstance(want, torch.Tensor):
        assert isinstance(got, tensord.Tensor), where
        assert str(got.dtype) == str(want.dtype) and tuple(got.shape) == tuple(want.shape), where
        w = to_np(want)
        if scale is None:
            scale = float(np.abs(w).max()) if w.size else 0.0
        np.testing.assert_allclose(to_np(got), w, rtol=rtol, atol=rtol * scale, err_msg=where)
    elif isinstance(want, dict):
        assert isinstance(got, dict) and set(got) == set(want), where
        for k in want:
            assert_lbfgs_state(got[k], want[k], f"{where}[{k!r}]", rtol)
    elif isinstance(want, (list, tuple)):
        assert type(got) is type(want) and len(got) == len(want), where
        scale = max([float(np.abs(to_np(w)).max()) for w in want
                     if isinstance(w, torch.Tensor) and w.numel()] or [0.0])
        for i, (g, w) in enumerate(zip(got, want)):
            assert_lbfgs_state(g, w, f"{where}[{i}]", rtol, scale)
    elif isinstance(want, float):
        assert type(got) is float and got == pytest.approx(want, rel=rtol, abs=1e-300), where
    else:
        assert got == want and type(got) is type(want), (where, got, want)


# the options over both objectives: t a tensor (the first iteration's scaled guess, or the
# line search's) or a number in the state; the history shifting out; every stopping rule (max_iter,
# max_eval, the gradient, the step and the loss tolerances); the line search's bracketing,
# interpolation and zoom phases
LBFGS_CASES = [
    ("convex", dict(), ()),
    ("convex", dict(lr=0.5, max_iter=6, history_size=3), ()),
    ("convex", dict(max_iter=10, max_eval=4), ()),
    ("convex", dict(tolerance_grad=0.05), ()),
    ("convex", dict(tolerance_grad=1e-2, tolerance_change=1e-3), ()),
    ("convex", dict(tolerance_change=1e-4), ()),
    ("convex", dict(lr=0.1, tolerance_change=0.02), ()),
    ("convex", dict(history_size=5), (1,)),
    ("convex", dict(line_search_fn="strong_wolfe", max_iter=4), ()),
    ("convex", dict(line_search_fn="strong_wolfe", tolerance_grad=1e-3), ()),
    ("rosenbrock", dict(lr=0.01, max_iter=10), ()),
    ("rosenbrock", dict(line_search_fn="strong_wolfe", max_iter=10), ()),
    ("rosenbrock", dict(line_search_fn="strong_wolfe", lr=5, max_iter=8, history_size=2), ()),
    ("rosenbrock", dict(line_search_fn="strong_wolfe", lr=20, tolerance_change=1e-4,
                        max_eval=12), ()),
    ("rosenbrock", dict(line_search_fn="strong_wolfe", lr=0.05, max_iter=10), ()),
]


@pytest.mark.parametrize("objective,kwargs,skip", LBFGS_CASES,
                         ids=[f"{o}-" + ("-".join(f"{k}={v}" for k, v in kw.items()) or "defaults")
                              + (f"-no-grad{list(sk)}" if sk else "")
                              for o, kw, sk in LBFGS_CASES])
def test_lbfgs_matches_torch(session, objective, kwargs, skip):
    tp, dp = make_params64()
    topt = torch.optim.LBFGS(tp, **kwargs)
    dopt = tensord.optim.LBFGS(dp, **kwargs)
    assert dopt.defaults == topt.defaults
    tl, dl = [], []
    for _ in range(3):
        tloss = topt.step(numpy_closure(torch, tp, tl, objective, skip))
        dloss = dopt.step(numpy_closure(tensord, dp, dl, objective, skip))
        assert isinstance(dloss, tensord.Tensor)
        assert dloss.item() == pytest.approx(tloss.item(), rel=1e-10)
    # the same evaluations: the iterations and the line search took the same branches
    assert len(dl) == len(tl)
    np.testing.assert_allclose(dl, tl, rtol=1e-10)
    for i, (d, t) in enumerate(zip(dp, tp)):
        np.testing.assert_allclose(to_np(d), to_np(t), rtol=1e-9, atol=1e-10,
                                   err_msg=f"param {i}")
    assert_lbfgs_state(dopt.state_dict(), topt.state_dict(), "state_dict", rtol=1e-8)
    assert tl[-1] < tl[0]


@pytest.mark.parametrize("kwargs", [dict(history_size=4), dict(line_search_fn="strong_wolfe")])
def test_lbfgs_state_dict(session, kwargs):
    """LBFGS's state (its history, kept on the first parameter) saved after a step continues
    in a new optimizer: torch's (through torch's file format) and tensord's own."""
    tp, dp = make_params64()
    topt = torch.optim.LBFGS(tp, max_iter=4, **kwargs)
    dopt = tensord.optim.LBFGS(dp, max_iter=4, **kwargs)
    topt.step(numpy_closure(torch, tp, []))
    dopt.step(numpy_closure(tensord, dp, []))
    dp2 = [tensord.nn.Parameter(p.detach().clone()) for p in dp]
    dopt2 = tensord.optim.LBFGS(dp2, max_iter=4, **kwargs)
    dopt2.load_state_dict(through_file(topt.state_dict(), torch.save, tensord.load))
    assert_lbfgs_state(dopt2.state_dict(), topt.state_dict(), "loaded state_dict", rtol=1e-12)
    dp3 = [tensord.nn.Parameter(p.detach().clone()) for p in dp]
    dopt3 = tensord.optim.LBFGS(dp3, max_iter=4, **kwargs)
    dopt3.load_state_dict(dopt.state_dict())
    tl, dl2, dl3 = [], [], []
    for _ in range(2):
        topt.step(numpy_closure(torch, tp, tl))
        dopt2.step(numpy_closure(tensord, dp2, dl2))
        dopt3.step(numpy_closure(tensord, dp3, dl3))
    np.testing.assert_allclose(dl2, tl, rtol=1e-10)
    np.testing.assert_allclose(dl3, tl, rtol=1e-10)
    for d2, d3, t in zip(dp2, dp3, tp):
        np.testing.assert_allclose(to_np(d2), to_np(t), rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(to_np(d3), to_np(t), rtol=1e-9, atol=1e-12)
    assert_lbfgs_state(dopt2.state_dict(), topt.state_dict(), "state_dict", rtol=1e-8)


def lbfgs_model(lib, seed=11):
    rng = np.random.default_rng(seed)
    model = lib.nn.Sequential(lib.nn.Linear(4, 6), lib.nn.Tanh(), lib.nn.Linear(6, 2))
    with lib.no_grad():
        for p in model.parameters():
            p.copy_(lib.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32) * 0.5))
    x = lib.tensor(rng.standard_normal((16, 4)).astype(np.float32))
    y = lib.tensor(rng.standard_normal((16, 2)).astype(np.float32))
    return model, x, y


@pytest.mark.parametrize("kwargs", [dict(max_iter=8), dict(line_search_fn="strong_wolfe",
                                                           max_iter=8)])
def test_lbfgs_trains_a_model(session, kwargs):
    """A float32 model, its gradients by autograd (the closure as torch's docs write it):
    the same evaluations as torch's, the values to float32 accuracy (the server's kernels
    round a little differently from torch's, and the iterations carry that along)."""
    def closure(lib, model, x, y, opt, losses):
        def closure():
            opt.zero_grad()
            loss = lib.nn.functional.mse_loss(model(x), y)
            loss.backward()
            losses.append(loss.item())
            return loss
        return closure

    tm, tx, ty = lbfgs_model(torch)
    dm, dx, dy = lbfgs_model(tensord)
    topt = torch.optim.LBFGS(tm.parameters(), **kwargs)
    dopt = tensord.optim.LBFGS(dm.parameters(), **kwargs)
    tl, dl = [], []
    for _ in range(2):
        topt.step(closure(torch, tm, tx, ty, topt, tl))
        dopt.step(closure(tensord, dm, dx, dy, dopt, dl))
    assert len(dl) == len(tl)
    np.testing.assert_allclose(dl, tl, rtol=1e-4)
    for d, t in zip(dm.parameters(), tm.parameters()):
        np.testing.assert_allclose(to_np(d), to_np(t), rtol=1e-3, atol=1e-4)
    assert_lbfgs_state(dopt.state_dict(), topt.state_dict(), "state_dict", rtol=1e-2)
    assert dl[-1] < 0.5 * dl[0]


def test_lbfgs_stops_at_an_optimum(session):
    """A zero gradient: one evaluation, the closure's loss returned, no history kept."""
    tp, dp = make_params()
    for lib, ps in ((torch, tp), (tensord, dp)):
        opt = lib.optim.LBFGS(ps)
        calls = []

        def closure():
            calls.append(1)
            for p in ps:
                p.grad = lib.zeros_like(p)
            return lib.tensor(0.5)
        assert float(opt.step(closure)) == 0.5
        assert len(calls) == 1
        assert opt.state_dict()["state"] == {0: {"func_evals": 1, "n_iter": 0}}


def test_sparse_adam_refuses_dense_gradients(session):
    tp, dp = make_params()
    dopt, topt = pair("SparseAdam", dict(lr=0.01, betas=(0.8, 0.9), maximize=True), tp, dp)
    assert_same_value(dopt.state_dict(), topt.state_dict(), "state_dict")
    assert repr(dopt) == repr(topt)
    assert dopt.step() is None  # nothing has a gradient: nothing to do
    assign_grads(tp, dp, 0)
    assert outcome(dopt.step) == outcome(topt.step)
    assert len(dopt.state) == 0


# ---- swa_utils ----

def bn_models(seed=3):
    """The same small model with a BatchNorm layer in torch and tensord."""
    tm = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4), torch.nn.ReLU(),
                             torch.nn.Linear(4, 2))
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for p in tm.parameters():
            p.copy_(torch.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32)))
    dm = tensord.nn.Sequential(tensord.nn.Linear(3, 4), tensord.nn.BatchNorm1d(4),
                               tensord.nn.ReLU(), tensord.nn.Linear(4, 2))
    dm.load_state_dict({k: tensord.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    return tm, dm


def assert_same_module_state(dm, tm, where=""):
    dsd, tsd = dm.state_dict(), tm.state_dict()
    assert list(dsd) == list(tsd), where
    for k in tsd:
        assert str(dsd[k].dtype) == str(tsd[k].dtype), (where, k)
        close(to_np(dsd[k]), to_np(tsd[k]), f"{where} {k}")


def perturb(tm, dm, rng):
    """Moves both models' parameters by the same amounts, and their BatchNorm statistics by a
    training-mode forward pass."""
    x = rng.standard_normal((5, 3)).astype(np.float32)
    with torch.no_grad():
        for p in tm.parameters():
            p.add_(torch.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32) * 0.1))
        tm(torch.tensor(x))
    with tensord.no_grad():
        for p, t in zip(dm.parameters(), tm.parameters()):
            p.copy_(tensord.tensor(t.detach().numpy()))
        dm(tensord.tensor(x))


@pytest.mark.parametrize("kind", ["default", "avg_fn", "use_buffers", "device"])
def test_averaged_model(session, kind):
    tm, dm = bn_models()
    kwargs = {"avg_fn": dict(avg_fn=lambda avg, p, n: 0.25 * avg + 0.75 * p),
              "use_buffers": dict(use_buffers=True),
              "device": dict(device="cpu")}.get(kind, {})
    tavg = torch.optim.swa_utils.AveragedModel(tm, **kwargs)
    davg = tensord.optim.swa_utils.AveragedModel(dm, **kwargs)
    assert davg.module is not dm and isinstance(davg.module, tensord.nn.Sequential)
    assert str(davg.n_averaged.dtype) == "torch.int64" and davg.n_averaged.item() == 0
    assert list(dict(davg.named_buffers())) == list(dict(tavg.named_buffers()))
    if kind == "device":
        assert davg.n_averaged.device.type == "cpu"
        assert all(p.device.type == "cpu" for p in davg.parameters())
    rng = np.random.default_rng(4)
    for k in range(4):
        perturb(tm, dm, rng)
        tavg.update_parameters(tm)
        davg.update_parameters(dm)
        assert davg.n_averaged.item() == k + 1
        assert_same_module_state(davg, tavg, f"update {k}")
    x = rng.standard_normal((6, 3)).astype(np.float32)
    tavg.eval()
    davg.eval()
    with torch.no_grad(), tensord.no_grad():
        close(to_np(davg(tensord.tensor(x))), to_np(tavg(torch.tensor(x))), "forward")
    # the averaged parameters are not the model's
    assert all(not np.array_equal(to_np(a), to_np(p))
               for a, p in zip(davg.module.parameters(), dm.parameters()))


@pytest.mark.parametrize("kwargs", [
    dict(swa_lr=0.05),
    dict(swa_lr=[0.05, 0.2], anneal_epochs=4, anneal_strategy="linear"),
    dict(swa_lr=0.01, anneal_epochs=0),
    dict(swa_lr=0.5, anneal_epochs=3),
    dict(swa_lr=0.02, anneal_epochs=1, anneal_strategy="linear"),
])
def test_swalr(session, kwargs):
    tp, dp = make_params()
    topt = torch.optim.SGD([{"params": tp[:2]}, {"params": tp[2:], "lr": 0.3}], lr=0.1)
    dopt = tensord.optim.SGD([{"params": dp[:2]}, {"params": dp[2:], "lr": 0.3}], lr=0.1)
    tsch = torch.optim.swa_utils.SWALR(topt, **kwargs)
    dsch = tensord.optim.swa_utils.SWALR(dopt, **kwargs)
    assert dsch.get_last_lr() == tsch.get_last_lr()
    dtrace, dwarn = lr_trace(dopt, dsch, 12)
    ttrace, twarn = lr_trace(topt, tsch, 12)
    assert dtrace == ttrace
    assert dwarn == twarn
    assert sched_state(dsch.state_dict()) == sched_state(tsch.state_dict())


def bn_loaders(batch_size=6, plain=False):
    rng = np.random.default_rng(8)
    x = (rng.standard_normal((20, 3)) * 2 + 1).astype(np.float32)
    y = rng.standard_normal((20, 2)).astype(np.float32)
    if plain:  # a dataset of tensors: batches are tensors
        return (torch.utils.data.DataLoader(torch.tensor(x), batch_size=batch_size),
                tensord.utils.data.DataLoader(tensord.tensor(x), batch_size=batch_size))
    return (torch.utils.data.DataLoader(
                torch.utils.data.TensorDataset(torch.tensor(x), torch.tensor(y)),
                batch_size=batch_size),
            tensord.utils.data.DataLoader(
                tensord.utils.data.TensorDataset(tensord.tensor(x), tensord.tensor(y)),
                batch_size=batch_size))


@pytest.mark.parametrize("plain,train,device", [(False, False, None), (True, True, None),
                                                (False, True, "cpu")])
def test_update_bn(session, plain, train, device):
    tm, dm = bn_models()
    rng = np.random.default_rng(9)
    perturb(tm, dm, rng)  # running statistics that update_bn starts over
    tm.train(train)
    dm.train(train)
    tl, dl = bn_loaders(plain=plain)
    assert torch.optim.swa_utils.update_bn(tl, tm, device=device) is None
    assert tensord.optim.swa_utils.update_bn(dl, dm, device=device) is None
    assert_same_module_state(dm, tm)
    assert dm[1].num_batches_tracked.item() == 4  # every batch, counted afresh
    assert dm.training == train and dm[1].training == train
    assert dm[1].momentum == tm[1].momentum == 0.1


def test_update_bn_without_batchnorm(session):
    dm = tensord.nn.Sequential(tensord.nn.Linear(3, 2), tensord.nn.ReLU())
    dm.eval()
    _, dl = bn_loaders()
    before = [to_np(p).copy() for p in dm.parameters()]
    assert tensord.optim.swa_utils.update_bn(dl, dm) is None
    assert not dm.training
    for b, p in zip(before, dm.parameters()):
        np.testing.assert_array_equal(b, to_np(p))


def test_swa_training_loop(session):
    """torch's SWA recipe: SGD with cosine annealing, then SWALR and an AveragedModel updated
    every epoch, and update_bn on the average at the end; gradients by autograd on both
    sides."""
    def train(lib, model, loader):
        opt = lib.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        sched = lib.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=4)
        swa_model = lib.optim.swa_utils.AveragedModel(model)
        swa_sched = lib.optim.swa_utils.SWALR(opt, swa_lr=0.02, anneal_epochs=2)
        lrs = []
        for epoch in range(7):
            for x, y in loader:
                opt.zero_grad()
                lib.nn.functional.mse_loss(model(x), y).backward()
                opt.step()
            if epoch >= 3:
                swa_model.update_parameters(model)
                swa_sched.step()
            else:
                sched.step()
            lrs.append(opt.param_groups[0]["lr"])
        lib.optim.swa_utils.update_bn(loader, swa_model)
        return swa_model, lrs

    tm, dm = bn_models()
    tl, dl = bn_loaders(batch_size=5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tswa, tlrs = train(torch, tm, tl)
        dswa, dlrs = train(tensord, dm, dl)
    assert dlrs == tlrs
    assert dswa.n_averaged.item() == tswa.n_averaged.item() == 4
    for (k, d), t in zip(dswa.state_dict().items(), tswa.state_dict().values()):
        np.testing.assert_allclose(to_np(d), to_np(t), rtol=1e-5, atol=1e-6, err_msg=k)
