"""torch.nn.utils.prune against torch 1.13. A module is built in both namespaces and given
torch's weights (nn_oracle.twin), then pruned by the same calls: the deterministic methods
(L1 and Ln by norm, custom masks, global L1) must give torch's masks exactly, and with them
torch's parameters, buffers, state_dict, hooks, forward outputs and gradients; the random
methods the same number of pruned entries or channels, in the right structure; bad arguments
torch's exceptions (class and message).

Ties: which of several equal scores topk takes is the algorithm's choice; tensord's CPU topk
makes torch's (test_sort.py), and test_tied_scores_prune_what_torch_prunes holds masks to it.
Every other deterministic case checks (no_ties) that the scores it prunes by are distinct, so
that a mask can only differ from torch's by a real error, on any device.
"""
import os
import subprocess
import sys
import textwrap

import pytest
import torch
import torch.nn.utils.prune  # noqa: F401 - torch's nn.utils does not import it itself

import tensord
from nn_oracle import to_tensord, twin
from oracle import as_torch, cpu_only, outcomes

TOL = dict(rtol=1e-5, atol=1e-5)
NS = (torch, tensord)


def close(got, want, **tol):
    torch.testing.assert_close(as_torch(got), want.detach(), **(tol or TOL))


def same_error(fn):
    """fn raises in both namespaces: the same class and message ("tensord" read as "torch")."""
    (_, werr), (_, gerr) = outcomes(fn)
    assert werr is not None, "torch did not raise"
    assert gerr is not None, f"tensord did not raise ({werr})"
    assert (gerr[0], gerr[1].replace("tensord", "torch")) == werr, (gerr, werr)
    return werr[1]


def prune_of(ns):
    return ns.nn.utils.prune


def no_ties(scores):
    """The scores (a torch tensor) are distinct, so that topk's choice is determined."""
    values = scores.detach().flatten().tolist()
    assert len(set(values)) == len(values), "the test's scores have ties"


def l1_no_ties(tm, name="weight"):
    """The still unpruned entries of tm.<name> (torch's) have distinct absolute values."""
    w = getattr(tm, name).detach().abs()
    mask = getattr(tm, name + "_mask", None)
    no_ties(w if mask is None else w[mask == 1])


def ln_no_ties(tm, n, dim, name="weight"):
    """The still unpruned channels of tm.<name> (torch's) along dim have distinct Ln norms."""
    w = getattr(tm, name).detach()
    norms = prune_of(torch)._compute_norm(w, n, dim)
    mask = getattr(tm, name + "_mask", None)
    if mask is not None:
        norms = norms[mask.sum([d for d in range(w.dim()) if d != dim % w.dim()]) != 0]
    no_ties(norms)


def made(make, seed=0):
    """(torch module, tensord module) from make(ns), with torch's weights (seeded)."""
    torch.manual_seed(seed)
    return twin(make)


def assert_same_pruned(tm, dm):
    """The two modules agree exactly: parameter and buffer names (in order), state_dict keys
    and values (masks, origs), each pruned tensor's current value, and the hooks' classes."""
    assert [n for n, _ in dm.named_parameters()] == [n for n, _ in tm.named_parameters()]
    assert [n for n, _ in dm.named_buffers()] == [n for n, _ in tm.named_buffers()]
    tsd, dsd = tm.state_dict(), dm.state_dict()
    assert list(dsd) == list(tsd)
    for k, w in tsd.items():
        g = as_torch(dsd[k])
        assert str(g.dtype) == str(w.dtype) and g.shape == w.shape, k
        assert torch.equal(g, w), (k, g, w)
    for tsub, dsub in zip(tm.modules(), dm.modules()):
        assert [type(h).__name__ for h in dsub._forward_pre_hooks.values()] == \
            [type(h).__name__ for h in tsub._forward_pre_hooks.values()]
        for name in tsub._buffers:
            if name.endswith("_mask"):
                pruned = name[:-len("_mask")]
                assert not isinstance(getattr(dsub, pruned), tensord.nn.Parameter)
                assert torch.equal(as_torch(getattr(dsub, pruned)), getattr(tsub, pruned))


def zeros(mask):
    return int((as_torch(mask) == 0).sum())


# ---- the deterministic methods -----------------------------------------------------------------

MODULES = {
    "linear": (lambda ns: ns.nn.Linear(7, 5), lambda ns: ns.randn(3, 7)),
    "conv2d": (lambda ns: ns.nn.Conv2d(3, 6, 3), lambda ns: ns.randn(2, 3, 6, 6)),
    "conv1d": (lambda ns: ns.nn.Conv1d(4, 5, 2), lambda ns: ns.randn(2, 4, 7)),
}


def inputs(kind):
    torch.manual_seed(1)
    x = MODULES[kind][1](torch)
    return x, to_tensord(x)


def assert_same_forward(tm, dm, kind):
    x, dx = inputs(kind)
    close(dm(dx), tm(x))


@pytest.mark.parametrize("kind", ["linear", "conv2d"])
@pytest.mark.parametrize("amount", [0, 1, 9, 0.3, 0.5, 1.0])
def test_l1_unstructured_gives_torchs_mask(kind, amount, session):
    tm, dm = made(MODULES[kind][0])
    l1_no_ties(tm)
    for ns, m in ((torch, tm), (tensord, dm)):
        assert prune_of(ns).l1_unstructured(m, "weight", amount=amount) is m
    want = amount if isinstance(amount, int) else round(amount * tm.weight.numel())
    assert zeros(dm.weight_mask) == zeros(tm.weight_mask) == want
    assert list(dm.state_dict()) == ["bias", "weight_orig", "weight_mask"]
    assert_same_pruned(tm, dm)
    assert_same_forward(tm, dm, kind)


def test_l1_unstructured_of_a_bias_and_by_importance_scores(session):
    tm, dm = made(MODULES["linear"][0])
    l1_no_ties(tm, "bias")
    torch.manual_seed(3)
    scores = torch.randn(5, 7)
    no_ties(scores.abs())
    for ns, m, s in ((torch, tm, scores), (tensord, dm, to_tensord(scores))):
        prune_of(ns).l1_unstructured(m, "bias", amount=2)
        prune_of(ns).l1_unstructured(m, "weight", amount=0.4, importance_scores=s)
    # The scores, not the weights, chose: the smallest 14 of |scores| are the zeros.
    assert torch.equal(tm.weight_mask.flatten() == 0,
                       torch.isin(torch.arange(35), scores.abs().flatten().argsort()[:14]))
    assert_same_pruned(tm, dm)
    assert_same_forward(tm, dm, "linear")


# n="fro" only where the other dims are at most 2: torch.norm(p="fro") refuses more.
@pytest.mark.parametrize("kind,dim,n", [
    (kind, dim, n) for kind, dims in (("linear", (0, 1, -1)), ("conv2d", (0, 1, 3, -2)))
    for dim in dims for n in (1, 2, float("inf"), float("-inf"), "fro", 3)
    if n != "fro" or kind == "linear"])
@pytest.mark.parametrize("amount", [1, 0.5])
def test_ln_structured_gives_torchs_mask(kind, dim, n, amount, session):
    tm, dm = made(MODULES[kind][0])
    ln_no_ties(tm, n, dim)
    for ns, m in ((torch, tm), (tensord, dm)):
        prune_of(ns).ln_structured(m, "weight", amount=amount, n=n, dim=dim)
    # Whole channels along dim: each is all kept or all pruned.
    mask = as_torch(dm.weight_mask).movedim(dim, 0).flatten(1)
    assert ((mask == 0).all(1) | (mask == 1).all(1)).all()
    channels = tm.weight.shape[dim]
    pruned = amount if isinstance(amount, int) else round(amount * channels)
    assert int((mask == 0).all(1).sum()) == pruned
    assert_same_pruned(tm, dm)
    assert_same_forward(tm, dm, kind)


@cpu_only("ties where torch's CPU topk leaves them: the CPU backend's promise")
def test_tied_scores_prune_what_torch_prunes(session):
    """Importance scores of three values (ties at every cut): the unstructured and structured
    masks are torch's, entry for entry, for amounts on both sides of torch's choice between
    partial_sort and nth_element."""
    g = torch.Generator().manual_seed(7)
    for amount in (1, 3, 14, 0.5, 0.9):
        tm, dm = made(MODULES["linear"][0])
        scores = torch.randint(0, 3, (5, 7), generator=g).float()
        for ns, m, s in ((torch, tm, scores), (tensord, dm, to_tensord(scores))):
            prune_of(ns).l1_unstructured(m, "weight", amount=amount, importance_scores=s)
        assert torch.equal(as_torch(dm.weight_mask), tm.weight_mask), amount
    for amount in (1, 2, 3):
        tm, dm = made(MODULES["linear"][0])
        scores = torch.tensor([[1.0, -1.0, 2.0, 1.0, -2.0, 1.0, 2.0]] * 5)  # column norms tie
        for ns, m, s in ((torch, tm, scores), (tensord, dm, to_tensord(scores))):
            prune_of(ns).ln_structured(m, "weight", amount=amount, n=1, dim=1,
                                       importance_scores=s)
        assert torch.equal(as_torch(dm.weight_mask), tm.weight_mask), amount


def test_ln_structured_nuclear_norm_and_importance_scores(session):
    """n='nuc' over a 3-d weight's two other dims; importance scores instead of the weight."""
    tm, dm = made(MODULES["conv1d"][0])
    ln_no_ties(tm, "nuc", 0)
    torch.manual_seed(5)
    scores = torch.randn(5, 4, 2)
    no_ties(scores.norm(p=1, dim=[0, 2]))
    for ns, m, s in ((torch, tm, scores), (tensord, dm, to_tensord(scores))):
        prune_of(ns).ln_structured(m, "weight", amount=2, n="nuc", dim=0)
        prune_of(ns).ln_structured(m, "weight", amount=1, n=1, dim=1, importance_scores=s)
    assert_same_pruned(tm, dm)
    assert_same_forward(tm, dm, "conv1d")


def test_custom_from_mask_and_identity(session):
    tm, dm = made(MODULES["conv2d"][0])
    torch.manual_seed(7)
    mask = torch.randint(0, 2, (6, 3, 3, 3))
    bias_mask = torch.tensor([True, False, True, True, False, True])
    for ns, m, mk, bmk in ((torch, tm, mask, bias_mask),
                           (tensord, dm, to_tensord(mask), to_tensord(bias_mask))):
        assert prune_of(ns).custom_from_mask(m, "weight", mask=mk) is m
        prune_of(ns).custom_from_mask(m, "bias", mask=bmk)
    assert str(dm.weight_mask.dtype) == "torch.float32"
    assert torch.equal(as_torch(dm.weight_mask), mask.float())
    assert torch.equal(as_torch(dm.bias_mask), bias_mask.float())
    assert_same_pruned(tm, dm)
    assert_same_forward(tm, dm, "conv2d")

    tl, dl = made(MODULES["linear"][0])
    for ns, m in ((torch, tl), (tensord, dl)):
        assert prune_of(ns).identity(m, "weight") is m
    assert zeros(dl.weight_mask) == 0
    assert_same_pruned(tl, dl)
    assert_same_forward(tl, dl, "linear")


def net(ns):
    return ns.nn.Sequential(ns.nn.Conv1d(2, 3, 2), ns.nn.Flatten(), ns.nn.Linear(18, 4),
                            ns.nn.ReLU(), ns.nn.Linear(4, 2))


def net_params(m):
    return [(m[0], "weight"), (m[2], "weight"), (m[2], "bias"), (m[4], "weight")]


@pytest.mark.parametrize("amount", [0, 17, 0.35, 1.0])
def test_global_unstructured_gives_torchs_masks(amount, session):
    tm, dm = made(net)
    no_ties(torch.cat([getattr(m, n).detach().abs().flatten() for m, n in net_params(tm)]))
    for ns, m in ((torch, tm), (tensord, dm)):
        prune_of(ns).global_unstructured(net_params(m), pruning_method=prune_of(ns).L1Unstructured,
                                         amount=amount)
    total = sum(getattr(m, n + "_mask").numel() for m, n in net_params(tm))
    want = amount if isinstance(amount, int) else round(amount * total)
    assert sum(zeros(getattr(m, n + "_mask")) for m, n in net_params(dm)) == want
    assert_same_pruned(tm, dm)
    torch.manual_seed(2)
    x = torch.randn(3, 2, 7)
    close(dm(to_tensord(x)), tm(x))


def test_global_unstructured_by_scores_and_on_top_of_earlier_pruning(session):
    """A second global round chooses among the entries the first left (its own and a
    per-tensor l1 round's); importance_scores (a dict) replace some of the tensors."""
    tm, dm = made(net)
    torch.manual_seed(9)
    scores = torch.randn(4, 18)
    # Every score of every round is one of these (or a pruned entry's 0, which is left out).
    no_ties(torch.cat([getattr(m, n).detach().abs().flatten() for m, n in net_params(tm)] +
                      [scores.abs().flatten()]))
    for ns, m, s in ((torch, tm, scores), (tensord, dm, to_tensord(scores))):
        p = prune_of(ns)
        p.l1_unstructured(m[4], "weight", amount=3)
        p.global_unstructured(net_params(m), pruning_method=p.L1Unstructured, amount=0.25,
                              importance_scores={(m[2], "weight"): s})
        p.global_unstructured(net_params(m)[:2], pruning_method=p.L1Unstructured, amount=5)
    assert [len(h) for h in tm[4]._forward_pre_hooks.values()] == [2]
    assert [len(h) for h in dm[4]._forward_pre_hooks.values()] == [2]
    assert_same_pruned(tm, dm)
    torch.manual_seed(2)
    x = torch.randn(3, 2, 7)
    close(dm(to_tensord(x)), tm(x))


# ---- iterative pruning, remove, is_pruned --------------------------------------------------------

@pytest.mark.parametrize("rounds", [
    [("l1", 0.3), ("ln", 1, 2, 0)],
    [("ln", 2, float("inf"), 1), ("l1", 10)],
    [("ln", 1, 1, 0), ("ln", 0.5, 2, 1), ("custom",), ("l1", 0.2)],
    [("ln", 2, -float("inf"), -1), ("custom",), ("l1", 4), ("ln", 1, 1, 0)],
])
def test_iterative_pruning_combines_masks_as_torch(rounds, session):
    """Each round prunes only what is still unpruned (entries for the unstructured methods,
    channels not all zero for the structured ones) and the hook becomes a PruningContainer."""
    tm, dm = made(MODULES["conv2d"][0])
    torch.manual_seed(11)
    custom = torch.randint(0, 2, (6, 3, 3, 3))
    previous = 0
    for i, r in enumerate(rounds):
        for ns, m in ((torch, tm), (tensord, dm)):
            p = prune_of(ns)
            if r[0] == "l1":
                if ns is torch:
                    l1_no_ties(tm)
                p.l1_unstructured(m, "weight", amount=r[1])
            elif r[0] == "ln":
                if ns is torch:
                    ln_no_ties(tm, r[2], r[3])
                p.ln_structured(m, "weight", amount=r[1], n=r[2], dim=r[3])
            else:
                p.custom_from_mask(m, "weight", custom if ns is torch else to_tensord(custom))
        (hook,) = dm._forward_pre_hooks.values()
        if i:
            assert isinstance(hook, tensord.nn.utils.prune.PruningContainer)
            assert [type(h).__name__ for h in hook] == \
                [type(h).__name__ for h in next(iter(tm._forward_pre_hooks.values()))]
            assert len(hook) == i + 1 and hook._tensor_name == "weight"
        assert_same_pruned(tm, dm)
        # Pruning only ever adds zeros.
        assert zeros(dm.weight_mask) >= previous
        previous = zeros(dm.weight_mask)
    assert_same_forward(tm, dm, "conv2d")


def test_remove_makes_the_pruning_permanent(session):
    tm, dm = made(MODULES["linear"][0])
    l1_no_ties(tm)
    for ns, m in ((torch, tm), (tensord, dm)):
        prune_of(ns).l1_unstructured(m, "weight", amount=0.4)
    ln_no_ties(tm, 2, 1)
    for ns, m in ((torch, tm), (tensord, dm)):
        prune_of(ns).ln_structured(m, "weight", amount=1, n=2, dim=1)
        prune_of(ns).custom_from_mask(m, "bias", mask=ns.tensor([1, 0, 1, 1, 0]))
    assert prune_of(tensord).is_pruned(dm) and prune_of(torch).is_pruned(tm)
    orig = dm.weight_orig
    for ns, m in ((torch, tm), (tensord, dm)):
        assert prune_of(ns).remove(m, "weight") is m
    assert dm.weight is orig and isinstance(dm.weight, tensord.nn.Parameter)
    assert dm.weight.requires_grad
    assert list(dm.state_dict()) == list(tm.state_dict()) == ["bias_orig", "weight",
                                                               "bias_mask"]
    assert_same_pruned(tm, dm)
    assert torch.equal(as_torch(dm.weight) == 0, tm.weight == 0)
    assert prune_of(tensord).is_pruned(dm)  # the bias still is
    for ns, m in ((torch, tm), (tensord, dm)):
        prune_of(ns).remove(m, "bias")
    assert not prune_of(tensord).is_pruned(dm) and not dm._forward_pre_hooks
    assert list(dm.state_dict()) == list(tm.state_dict()) == ["weight", "bias"]
    assert_same_pruned(tm, dm)
    assert_same_forward(tm, dm, "linear")
    # No mask follows the weight any more: entries set again stay set through a forward.
    with torch.no_grad(), tensord.no_grad():
        tm.weight.add_(1.0)
        dm.weight.add_(1.0)
    assert_same_forward(tm, dm, "linear")
    assert zeros(dm.weight) == 0
    assert_same_pruned(tm, dm)
    # Removing what is not pruned (never, or no longer) raises torch's ValueError.
    same_error(lambda ns: prune_of(ns).remove(ns.nn.Linear(2, 2), "weight"))
    same_error(lambda ns: prune_of(ns).remove({torch: tm, tensord: dm}[ns], "bias"))


def test_is_pruned_looks_into_submodules(session):
    for ns in NS:
        p = prune_of(ns)
        m = net(ns)
        assert p.is_pruned(m) is False
        p.identity(m[2], "bias")
        assert p.is_pruned(m) is True and p.is_pruned(m[2]) and not p.is_pruned(m[0])
        p.remove(m[2], "bias")
        assert p.is_pruned(m) is False


# ---- the state_dict, the hook, training ----------------------------------------------------------

def test_a_pruned_state_dict_loads_into_a_module_pruned_by_identity(session):
    tm, dm = made(MODULES["conv2d"][0])
    ln_no_ties(tm, 1, 0)
    for ns, m in ((torch, tm), (tensord, dm)):
        prune_of(ns).ln_structured(m, "weight", amount=2, n=1, dim=0)
    state = dm.state_dict()
    fresh = MODULES["conv2d"][0](tensord)
    prune_of(tensord).identity(fresh, "weight")
    result = fresh.load_state_dict(state)
    assert not result.missing_keys and not result.unexpected_keys
    x, dx = inputs("conv2d")
    close(fresh(dx), tm(x))
    assert torch.equal(as_torch(fresh.weight), tm.weight)
    # Unpruned, the module does not take those keys.
    (_, werr), (_, gerr) = outcomes(lambda ns: MODULES["conv2d"][0](ns).load_state_dict(
        {torch: tm, tensord: dm}[ns].state_dict()))
    assert werr[0] == gerr[0] == "RuntimeError"
    assert "weight_orig" in gerr[1] and "weight_mask" in gerr[1] and '"weight"' in gerr[1]


def test_the_hook_recomputes_the_weight_from_orig_and_mask(session):
    tm, dm = made(MODULES["linear"][0])
    l1_no_ties(tm)
    for ns, m in ((torch, tm), (tensord, dm)):
        prune_of(ns).l1_unstructured(m, "weight", amount=0.5)
    with torch.no_grad(), tensord.no_grad():
        tm.weight_orig.mul_(-3.0).add_(0.25)
        dm.weight_orig.mul_(-3.0).add_(0.25)
    # Not yet: the hook runs before each forward.
    assert torch.equal(as_torch(dm.weight), tm.weight)
    assert not torch.equal(tm.weight, tm.weight_orig * tm.weight_mask)
    assert_same_forward(tm, dm, "linear")
    assert torch.equal(tm.weight, tm.weight_orig * tm.weight_mask)
    assert_same_pruned(tm, dm)
    # Zeroing the mask by hand silences those weights at the next call.
    with torch.no_grad(), tensord.no_grad():
        tm.weight_mask[1].zero_()
        dm.weight_mask[1].zero_()
    assert_same_forward(tm, dm, "linear")
    assert_same_pruned(tm, dm)
    assert zeros(dm.weight[1]) == 7


def test_training_a_pruned_module_sends_gradients_to_orig(session):
    tm, dm = made(MODULES["conv2d"][0])
    l1_no_ties(tm)
    l1_no_ties(tm, "bias")
    for ns, m in ((torch, tm), (tensord, dm)):
        prune_of(ns).l1_unstructured(m, "weight", amount=0.3)
        prune_of(ns).l1_unstructured(m, "bias", amount=2)
    ln_no_ties(tm, 2, 0)
    for ns, m in ((torch, tm), (tensord, dm)):
        prune_of(ns).ln_structured(m, "weight", amount=1, n=2, dim=0)
    topt = torch.optim.SGD(tm.parameters(), lr=0.1, momentum=0.9)
    dopt = tensord.optim.SGD(dm.parameters(), lr=0.1, momentum=0.9)
    assert [n for n, _ in dm.named_parameters()] == [n for n, _ in tm.named_parameters()] \
        == ["weight_orig", "bias_orig"]
    x, dx = inputs("conv2d")
    for _ in range(2):
        topt.zero_grad()
        dopt.zero_grad()
        tloss = tm(x).pow(2).mean()
        dloss = dm(dx).pow(2).mean()
        close(dloss, tloss)
        tloss.backward()
        dloss.backward()
        close(dm.weight_orig.grad, tm.weight_orig.grad)
        close(dm.bias_orig.grad, tm.bias_orig.grad)
        # The pruned entries get no gradient; the mask none at all.
        assert torch.equal(as_torch(dm.weight_orig.grad)[tm.weight_mask == 0],
                           torch.zeros(zeros(tm.weight_mask)))
        assert dm.weight_mask.grad is None and not dm.weight_mask.requires_grad
        topt.step()
        dopt.step()
        close(dm.weight_orig, tm.weight_orig)
    assert_same_forward(tm, dm, "conv2d")


# ---- the random methods -------------------------------------------------------------------------

@pytest.mark.parametrize("amount", [0, 4, 0.3, 1.0])
def test_random_unstructured_prunes_as_many_entries(amount, session):
    tm, dm = made(MODULES["conv2d"][0])
    for ns, m in ((torch, tm), (tensord, dm)):
        prune_of(ns).random_unstructured(m, "weight", amount=amount)
    assert zeros(dm.weight_mask) == zeros(tm.weight_mask)
    first = as_torch(dm.weight_mask)
    # A second round takes its fraction of what is left, never a pruned entry twice.
    for ns, m in ((torch, tm), (tensord, dm)):
        prune_of(ns).random_unstructured(m, "weight", amount=0.5)
    second = as_torch(dm.weight_mask)
    assert zeros(second) == zeros(tm.weight_mask)
    assert (second <= first).all()
    assert [n for n, _ in dm.named_buffers()] == [n for n, _ in tm.named_buffers()]
    assert torch.equal(as_torch(dm.weight), as_torch(dm.weight_orig) * second)


@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("amount", [1, 0.5])
def test_random_structured_prunes_as_many_whole_channels(dim, amount, session):
    tm, dm = made(MODULES["conv2d"][0])
    for ns, m in ((torch, tm), (tensord, dm)):
        prune_of(ns).random_structured(m, "weight", amount=amount, dim=dim)

    def channels(mask):
        flat = as_torch(mask).movedim(dim, 0).flatten(1)
        assert ((flat == 0).all(1) | (flat == 1).all(1)).all()  # whole channels
        return int((flat == 0).all(1).sum())

    assert channels(dm.weight_mask) == channels(tm.weight_mask)
    # Again: among the channels left, so one more (or half of them) goes.
    for ns, m in ((torch, tm), (tensord, dm)):
        prune_of(ns).random_structured(m, "weight", amount=amount, dim=dim)
    assert channels(dm.weight_mask) == channels(tm.weight_mask)
    # The pruned weight is orig times the mask, channel by channel.
    assert torch.equal(as_torch(dm.weight), as_torch(dm.weight_orig) * as_torch(dm.weight_mask))


# ---- the classes themselves ---------------------------------------------------------------------

def test_methods_prune_tensors_and_containers_hold_them(session):
    torch.manual_seed(4)
    t = torch.randn(4, 5)
    no_ties(t.abs())
    no_ties(t.norm(dim=1))
    no_ties(t.norm(p=1, dim=0))
    got = {}
    for ns, x in ((torch, t), (tensord, to_tensord(t))):
        p = prune_of(ns)
        got[ns] = [p.L1Unstructured(amount=6).prune(x),
                   p.LnStructured(amount=2, n=2, dim=0).prune(x),
                   p.L1Unstructured(0.5).prune(x, importance_scores=-x * x),
                   p.L1Unstructured(3).compute_mask(x, default_mask=ns.ones(4, 5)),
                   p.LnStructured(1, n=1).prune(x, default_mask=ns.ones(4, 5)),
                   p.CustomFromMask(ns.eye(4, 5)).prune(x),
                   p.Identity().prune(x)]
    for g, w in zip(got[tensord], got[torch]):
        assert torch.equal(as_torch(g), w)
    for ns in NS:
        p = prune_of(ns)
        m = ns.nn.Linear(3, 2)
        hook = p.RandomUnstructured.apply(m, "weight", amount=1)
        assert isinstance(hook, p.RandomUnstructured) and hook._tensor_name == "weight"
        assert list(m._forward_pre_hooks.values()) == [hook]
        container = p.L1Unstructured.apply(m, "weight", amount=1)
        assert isinstance(container, p.PruningContainer) and len(container) == 2
        assert container[0] is hook and isinstance(container[1], p.L1Unstructured)
        assert list(container) == [hook, container[1]]
        assert list(m._forward_pre_hooks.values()) == [container]
        assert int((m.weight_mask == 0).sum()) == 2
        assert p.PruningContainer().__len__() == 0
    same_error(lambda ns: prune_of(ns).BasePruningMethod())
    same_error(lambda ns: prune_of(ns).PruningContainer(prune_of(ns).Identity(),
                                                        prune_of(ns).Identity()))
    same_error(lambda ns: prune_of(ns).PruningContainer().add_pruning_method(3))

    def foreign(ns):
        p = prune_of(ns)
        m = ns.nn.Linear(3, 2)
        return p.PruningContainer(p.Identity.apply(m, "weight")).add_pruning_method(
            p.Identity.apply(m, "bias"))

    (_, werr), (_, gerr) = outcomes(foreign)
    assert werr[0] == gerr[0] == "ValueError"
    for err in (werr, gerr):
        assert err[1].startswith("Can only add pruning methods acting on the parameter named "
                                 "'weight' to PruningContainer")
        assert err[1].endswith(" Found 'bias'")


# ---- errors ---------------------------------------------------------------------------------

def linear(ns):
    return ns.nn.Linear(4, 3)


@pytest.mark.parametrize("call", [
    lambda p, m: p.l1_unstructured(m, "weight", amount=-1),
    lambda p, m: p.l1_unstructured(m, "weight", amount=1.5),
    lambda p, m: p.l1_unstructured(m, "weight", amount=-0.1),
    lambda p, m: p.l1_unstructured(m, "weight", amount="half"),
    lambda p, m: p.l1_unstructured(m, "weight", amount=None),
    lambda p, m: p.l1_unstructured(m, "weight", amount=13),
    lambda p, m: p.l1_unstructured(m, "weight", amount=float("nan")),
    lambda p, m: p.random_unstructured(m, "bias", amount=4),
    lambda p, m: p.random_unstructured(m, "bias", amount=[1]),
    lambda p, m: p.ln_structured(m, "weight", amount=4, n=2, dim=0),
    lambda p, m: p.ln_structured(m, "weight", amount=2.0, n=2, dim=0),
    lambda p, m: p.ln_structured(m, "weight", amount=1, n=2, dim=2),
    lambda p, m: p.ln_structured(m, "bias", amount=1, n=2, dim=0),
    lambda p, m: p.ln_structured(m, "weight", amount=1, n="nuc", dim=0),
    lambda p, m: p.random_structured(m, "weight", amount=5, dim=1),
    lambda p, m: p.random_structured(m, "weight", amount=1, dim=3),
    lambda p, m: p.random_structured(m, "bias", amount=1, dim=0),
    lambda p, m: p.l1_unstructured(m, "weight", amount=1, importance_scores=m.bias),
    lambda p, m: p.l1_unstructured(m, "missing", amount=1),
    lambda p, m: p.global_unstructured(3, pruning_method=p.L1Unstructured, amount=1),
    lambda p, m: p.global_unstructured([(m, "weight")], pruning_method=p.L1Unstructured,
                                       importance_scores=[m.weight], amount=1),
    lambda p, m: p.global_unstructured([(m, "weight")], pruning_method=p.LnStructured,
                                       amount=1, n=2),
    lambda p, m: p.global_unstructured([(m, "weight"), (m, "bias")],
                                       pruning_method=p.L1Unstructured, amount=16),
    lambda p, m: p.remove(m, "weight"),
])
def test_bad_arguments_raise_torchs_errors(call, session):
    same_error(lambda ns: call(prune_of(ns), linear(ns)))


def test_a_failed_pruning_leaves_the_module_as_it_was_or_as_torch_does(session):
    """The first round's failure puts the parameter back (after bias, as torch re-registers
    it); a later round's keeps the reparametrization and the mask of the earlier rounds."""
    tm, dm = made(linear)
    l1_no_ties(tm)
    for ns, m in ((torch, tm), (tensord, dm)):
        with pytest.raises(ValueError):
            prune_of(ns).l1_unstructured(m, "weight", amount=100)
    assert [n for n, _ in dm.named_parameters()] == ["bias", "weight"]
    assert not prune_of(tensord).is_pruned(dm) and "weight_mask" not in dm.state_dict()
    assert_same_pruned(tm, dm)
    for ns, m in ((torch, tm), (tensord, dm)):
        prune_of(ns).l1_unstructured(m, "weight", amount=5)
        with pytest.raises(ValueError):
            prune_of(ns).ln_structured(m, "weight", amount=5, n=1, dim=1)
    assert zeros(dm.weight_mask) == 5
    assert_same_pruned(tm, dm)
    x = torch.randn(2, 4)
    close(dm(to_tensord(x)), tm(x))


# ---- under python -m tensord.run -----------------------------------------------------------------

SCRIPT = textwrap.dedent("""
    import torch
    import torch.nn.utils.prune as prune
    from torch import nn

    m = nn.Sequential(nn.Linear(4, 3), nn.Linear(3, 2))
    with torch.no_grad():
        m[0].weight.copy_(torch.arange(12.0).view(3, 4).sin())
        m[1].weight.copy_(torch.arange(6.0).view(2, 3).cos())
    prune.l1_unstructured(m[0], "weight", amount=0.25)
    prune.ln_structured(m[0], "weight", amount=1, n=2, dim=1)
    prune.global_unstructured([(m[0], "weight"), (m[1], "weight")],
                              pruning_method=prune.L1Unstructured, amount=3)
    print(sorted(m.state_dict()), prune.is_pruned(m))
    print(m[0].weight_mask.tolist(), m[1].weight_mask.tolist())
    prune.remove(m[0], "weight")
    print(type(m[0].weight).__name__, (m[0].weight == 0).sum().item())
""")


def test_torch_nn_utils_prune_under_tensord_run(server, tmp_path):
    script = tmp_path / "script.py"
    script.write_text(SCRIPT)
    env = dict(os.environ, TENSORD_ADDRESS=server)
    want = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=120, env=env)
    got = subprocess.run([sys.executable, "-m", "tensord.run", str(script)], capture_output=True,
                         text=True, timeout=120, env=env)
    assert want.returncode == 0, want.stderr
    assert got.returncode == 0, got.stderr
    assert got.stdout == want.stdout
    assert "'0.weight_mask'" in got.stdout
