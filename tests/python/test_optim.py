"""tensord.optim against torch 1.13's torch.optim: the same parameters (from numpy) and the
same hand-made gradients (assigned to .grad; tensord has no autograd yet) on both sides for
several steps, for every optimizer and option combination; then the parameters and the
optimizer state (state_dict layout and values) are compared. Also state_dict round trips,
zero_grad, closures, add_param_group, the argument checks (exception class and message) and
the learning rate schedulers (lr sequences compared exactly)."""
import copy
import warnings

import numpy as np
import pytest
import torch

import tensord
import tensord.optim  # noqa: F401  (wired into `import tensord` separately)
import tensord.optim.lr_scheduler  # noqa: F401

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
]
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
    run_steps(dopt, topt, tp, dp)
    assert_same_state(dopt, topt, tp, dp)
    # the state tensors live on the parameter's device
    for p, st in dopt.state.items():
        for k, v in st.items():
            if isinstance(v, tensord.Tensor) and k != "step":
                assert v.device == p.device


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
])
def test_bad_use(session, case):
    same_error(case)


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

    for name in ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad"]:
        opt = getattr(tensord.optim, name)(dp, lr=0.1)
        assert opt.step() is None
        assert opt.step(closure).item() == 2.5
    assert len(calls) == 5


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
    return {k: v for k, v in sd.items() if k not in ("anneal_func",)}


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


@pytest.mark.parametrize("name,kwargs", SCHEDULERS[:8],
                         ids=[f"{n}{i}" for i, (n, _) in enumerate(SCHEDULERS[:8])])
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
