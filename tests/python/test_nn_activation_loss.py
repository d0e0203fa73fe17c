"""torch.nn's activation, loss, batch/instance/layer/group norm, dropout and adaptive-softmax
modules against torch 1.13: each built in both (same repr and state_dict layout), given torch's
state, and called on the same inputs; outputs (values, dtype, shape, strides), exception
classes (and module-raised messages) and the state after (running statistics) must match.
Dropout's draws differ from torch's by design, so its training mode is checked by the shape of
what it drops and by statistics.
"""
import warnings

import numpy as np
import pytest
import torch

import tensord
from nn_oracle import assert_module_matches, twin
from oracle import as_torch, assert_matches_torch, outcome

pytestmark = pytest.mark.usefixtures("session")

rng = np.random.default_rng(20221028)
TOL = {"float32": 2e-5, "float64": 1e-10, "bfloat16": 2e-2, "float16": 2e-3}  # nn_oracle takes one number
TOL32 = TOL["float32"]


def cast(ns, a, dtype="float32", noncontig=False):
    """`a` as a tensor of ns in `dtype`; noncontig: the same values in a non-contiguous layout
    (a copy of the reversed-axes array, its axes reversed back)."""
    a = np.asarray(a)
    if noncontig and a.ndim > 1:
        axes = tuple(reversed(range(a.ndim)))
        t = ns.tensor(np.ascontiguousarray(a.transpose(axes)))
        t = t.permute(*axes)
        assert not t.is_contiguous()
    else:
        t = ns.tensor(a)
    return t.to(getattr(ns, dtype)) if t.dtype.is_floating_point else t


def build(spec, **names):
    """make(ns) for assert_module_matches: `spec` evaluated with ns.nn's names (and `names`)."""
    def make(ns):
        scope = {name: getattr(ns.nn, name) for name in dir(ns.nn) if name[:1].isupper()}
        return eval(spec, {"ns": ns, **scope, **{k: v(ns) if callable(v) else v
                                                 for k, v in names.items()}})
    return make


def assert_same_error(fn):
    """fn(torch) and fn(tensord) raise the same exception class with the same message."""
    want = outcome(lambda: fn(torch))[1]
    got = outcome(lambda: fn(tensord))[1]
    assert want is not None, "torch did not raise"
    assert got == want, (got, want)


# ---- activations ----------------------------------------------------------------------------

X = rng.standard_normal((4, 6, 5)) * 2
X.flat[:6] = [0.0, -1.0, 1.0, 0.5, -0.5, 25.0]  # ties with thresholds and lambdas, softplus's cut

ACTIVATIONS = [
    "Threshold(0.5, -3.0)", "ReLU()", "RReLU(0.1, 0.3)", "Hardtanh()", "Hardtanh(-2.0, 1.5)",
    "ReLU6()", "Sigmoid()", "Hardsigmoid()", "Tanh()", "SiLU()", "Mish()", "Hardswish()", "ELU()",
    "ELU(alpha=0.5)", "CELU(alpha=2.0)", "SELU()", "GLU(1)", "GLU()", "GELU()", "GELU('tanh')",
    "Hardshrink()", "Hardshrink(1.0)", "LeakyReLU()", "LeakyReLU(0.2)", "LogSigmoid()",
    "Softplus()", "Softplus(beta=2, threshold=5)", "Softshrink()", "Softshrink(1.0)", "PReLU()",
    "PReLU(6, init=0.1)", "Softsign()", "Tanhshrink()", "Softmin()", "Softmin(dim=2)",
    "Softmax(dim=1)", "Softmax(-1)", "Softmax2d()", "LogSoftmax(dim=0)", "LogSoftmax(2)",
]
ACT_INPLACE = [
    "Threshold(0.5, -3.0, inplace=True)", "ReLU(inplace=True)", "RReLU(inplace=True)",
    "Hardtanh(-2.0, 1.5, True)", "ReLU6(True)", "Hardsigmoid(True)", "SiLU(True)", "Mish(True)",
    "Hardswish(True)", "ELU(0.5, True)", "CELU(2.0, inplace=True)", "SELU(inplace=True)",
    "LeakyReLU(0.2, inplace=True)",
]
ACT_DTYPES = [("float32", False), ("float32", True), ("float64", True), ("bfloat16", False),
              ("float16", False)]


@pytest.mark.parametrize("spec,dtype,noncontig", [(spec, dtype, noncontig)
                                                  for spec in ACTIVATIONS + ACT_INPLACE
                                                  for dtype, noncontig in ACT_DTYPES])
def test_activation(spec, dtype, noncontig):
    # Eval mode (RReLU's slope is then the mean of its range); the module (PReLU's weight) in
    # the input's dtype. Where torch 1.13 has no CPU kernel for the dtype (most activations in
    # float16), tensord must raise as it does.
    assert_module_matches(lambda ns: build(spec)(ns).to(getattr(ns, dtype)),
                          lambda ns: (cast(ns, X, dtype, noncontig),), TOL[dtype])


@pytest.mark.parametrize("spec", ACT_INPLACE)
def test_activation_inplace_modifies_and_returns_its_input(spec):
    bases = {}
    for ns in (torch, tensord):
        m = build(spec)(ns).eval()
        base = cast(ns, X)
        x = base.transpose(0, 2)  # a view: the write goes through to base
        assert m(x) is x
        bases[ns] = base
    got = as_torch(bases[tensord])
    assert not torch.equal(got, torch.tensor(X, dtype=torch.float32))
    torch.testing.assert_close(got, bases[torch], rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize("spec,shape", [
    ("PReLU(6)", (4, 5, 3)),  # channels (dim 1) are 5, not 6
    ("GLU()", (4, 5)),  # an odd size to halve
    ("GLU(3)", (4, 6)),
    ("Softmax(2)", (4, 6)),
    ("Softmax2d()", (4, 6)),  # 2-D: torch's AssertionError
    ("Softmax2d()", (2, 4, 6, 3, 2)),
    ("LogSoftmax(-3)", (4, 6)),
    ("Softmin(5)", (4, 6)),
])
def test_activation_bad_input(spec, shape):
    a = rng.standard_normal(shape)
    assert_module_matches(build(spec), lambda ns: (cast(ns, a),), TOL32)


def test_activation_constructor_checks():
    with pytest.raises(AssertionError):
        tensord.nn.Hardtanh(1.0, -1.0)
    with pytest.warns(UserWarning, match="min_value is deprecated"):
        m = tensord.nn.Hardtanh(min_value=-3.0, max_value=2.0)
    assert (m.min_val, m.max_val) == (-3.0, 2.0)
    assert repr(m) == "Hardtanh(min_val=-3.0, max_val=2.0)"


@pytest.mark.parametrize("spec", ["Softmax()", "LogSoftmax()"])
def test_softmax_implicit_dim(spec):
    assert_module_matches(build(spec), lambda ns: (cast(ns, X),), TOL32)


@pytest.mark.parametrize("dtype,shape", [("float32", (6,)), ("float64", (4, 6)),
                                         ("bfloat16", (4, 6))])
def test_prelu_checks(dtype, shape):
    # torch: a 1-D input is one channel; a float32 weight with a float64 input raises, with a
    # bfloat16 one gives bfloat16.
    a = rng.standard_normal(shape)
    assert_module_matches(build("PReLU(6)"), lambda ns: (cast(ns, a, dtype),), TOL[dtype])


def test_rrelu_training_draws_slopes_in_range():
    m = tensord.nn.RReLU(0.1, 0.3).train()
    x = tensord.tensor(rng.standard_normal((64, 64)).astype(np.float32))
    y = as_torch(m(x))
    xt = as_torch(x)
    assert torch.equal(y[xt >= 0], xt[xt >= 0])
    slope = y[xt < 0] / xt[xt < 0]
    assert slope.min() >= 0.1 - 1e-6 and slope.max() <= 0.3 + 1e-6
    assert slope.std() > 0.03  # drawn per element, not one mean slope
    assert abs(slope.mean().item() - 0.2) < 0.01


# ---- losses ---------------------------------------------------------------------------------

XL = rng.standard_normal((4, 5))
YL = rng.standard_normal((4, 5))
ZL = rng.standard_normal((4, 5))
PROB = rng.uniform(0.05, 0.95, (4, 5))
BIN = rng.integers(0, 2, (4, 5)).astype(np.float64)
SIGN = rng.choice([-1.0, 1.0], (4, 5))
SIGN4 = np.array([1.0, -1.0, -1.0, 1.0])
SOFT = np.exp(YL) / np.exp(YL).sum(1, keepdims=True)  # class probabilities
LOGP = XL - np.log(np.exp(XL).sum(1, keepdims=True))
CLS = np.array([1, 0, 4, 2])
X3 = rng.standard_normal((2, 5, 3))
CLS3 = np.array([[1, 0, 4], [2, 2, 3]])
X4 = rng.standard_normal((2, 5, 3, 2))
CLS4 = rng.integers(0, 5, (2, 3, 2))
COUNTS = rng.integers(0, 6, (4, 5)).astype(np.float64)
VAR = rng.uniform(0.1, 2.0, (4, 5))
W5 = rng.uniform(0.5, 2.0, 5)
ML_TARGET = np.array([[3, 0, -1, 1, 2], [1, 4, 2, 0, 3], [-1, 0, 0, 0, 0], [2, -1, 3, 1, 0]])


def weight(dtype):
    """The class weight w the loss specs name, in dtype."""
    return lambda ns: cast(ns, W5, dtype)


def floats(*arrays):
    """inputs(ns, dtype, noncontig) of float arrays, laid out alike."""
    return lambda ns, dtype, nc: tuple(cast(ns, a, dtype, nc) for a in arrays)


def with_ints(*arrays):
    """inputs: float arrays as floats (laid out as asked), int arrays as int64 tensors."""
    return lambda ns, dtype, nc: tuple(
        cast(ns, a, dtype, nc) if a.dtype.kind == "f" else cast(ns, a) for a in arrays)


# (spec, {r} standing for the reduction and w for the class weight; inputs)
LOSSES = [
    ("L1Loss(reduction={r})", floats(XL, YL)),
    ("MSELoss(reduction={r})", floats(XL, YL)),
    ("SmoothL1Loss(reduction={r})", floats(XL, YL)),
    ("SmoothL1Loss(reduction={r}, beta=0.5)", floats(XL, YL)),
    ("HuberLoss(reduction={r}, delta=0.7)", floats(XL, YL)),
    ("NLLLoss(reduction={r})", with_ints(LOGP, CLS)),
    ("NLLLoss(w, reduction={r})", with_ints(LOGP, CLS)),
    ("NLLLoss(w, ignore_index=4, reduction={r})", with_ints(LOGP, CLS)),
    ("NLLLoss(reduction={r})", with_ints(X3, CLS3)),
    ("NLLLoss2d(w, reduction={r})", with_ints(X4, CLS4)),
    ("CrossEntropyLoss(reduction={r})", with_ints(XL, CLS)),
    ("CrossEntropyLoss(w, ignore_index=0, reduction={r})", with_ints(XL, CLS)),
    ("CrossEntropyLoss(reduction={r}, label_smoothing=0.2)", with_ints(XL, CLS)),
    ("CrossEntropyLoss(w, reduction={r}, label_smoothing=0.1)", with_ints(X4, CLS4)),
    ("CrossEntropyLoss(reduction={r})", floats(XL, SOFT)),
    ("CrossEntropyLoss(w, reduction={r}, label_smoothing=0.3)", floats(XL, SOFT)),
    ("PoissonNLLLoss(reduction={r})", floats(XL, COUNTS)),
    ("PoissonNLLLoss(log_input=False, full=True, reduction={r})", floats(VAR, COUNTS)),
    ("GaussianNLLLoss(reduction={r})", floats(XL, YL, VAR)),
    ("GaussianNLLLoss(full=True, eps=0.5, reduction={r})", floats(XL, YL, VAR)),
    ("GaussianNLLLoss(reduction={r})", floats(XL, YL, VAR[:, :1])),
    ("GaussianNLLLoss(reduction={r})", floats(XL, YL, VAR[:, 0])),
    ("KLDivLoss(reduction={r})", floats(LOGP, SOFT)),
    ("KLDivLoss(reduction={r}, log_target=True)", floats(LOGP, np.log(SOFT))),
    ("BCELoss(reduction={r})", floats(PROB, BIN)),
    ("BCELoss(w, reduction={r})", floats(PROB, BIN)),
    ("BCEWithLogitsLoss(reduction={r})", floats(XL, BIN)),
    ("BCEWithLogitsLoss(w, reduction={r}, pos_weight=w * 2)", floats(XL, PROB)),
    ("HingeEmbeddingLoss(reduction={r})", floats(XL, SIGN)),
    ("HingeEmbeddingLoss(margin=0.5, reduction={r})", floats(XL, SIGN)),
    ("MultiLabelMarginLoss(reduction={r})", with_ints(XL, ML_TARGET)),
    ("SoftMarginLoss(reduction={r})", floats(XL, SIGN)),
    ("MultiLabelSoftMarginLoss(reduction={r})", floats(XL, BIN)),
    ("MultiLabelSoftMarginLoss(w, reduction={r})", floats(XL, BIN)),
    ("CosineEmbeddingLoss(reduction={r})", floats(XL, YL, SIGN4)),
    ("CosineEmbeddingLoss(margin=0.2, reduction={r})", floats(XL, YL, SIGN4)),
    ("MarginRankingLoss(reduction={r})", floats(XL[:, 0], YL[:, 0], SIGN4)),
    ("MarginRankingLoss(margin=0.5, reduction={r})", floats(XL, YL, SIGN)),
    ("MultiMarginLoss(reduction={r})", with_ints(XL, CLS)),
    ("MultiMarginLoss(p=2, margin=0.5, weight=w, reduction={r})", with_ints(XL, CLS)),
    ("TripletMarginLoss(reduction={r})", floats(XL, YL, ZL)),
    ("TripletMarginLoss(margin=2.0, p=1, swap=True, reduction={r})", floats(XL, YL, ZL)),
    ("TripletMarginWithDistanceLoss(distance_function=lambda a, b: (a - b).abs().sum(-1), "
     "reduction={r})", floats(XL, YL, ZL)),
    ("TripletMarginWithDistanceLoss(distance_function=lambda a, b: (a - b).abs().sum(-1), "
     "margin=0.5, swap=True, reduction={r})", floats(XL, YL, ZL)),
]
REDUCTIONS = ["none", "mean", "sum"]
LOSS_DTYPES = [("float32", False), ("float32", True), ("float64", False)]


@pytest.mark.parametrize("dtype,noncontig", LOSS_DTYPES, ids=lambda v: str(v))
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("spec,inputs", LOSSES, ids=[s for s, _ in LOSSES])
def test_loss(spec, inputs, reduction, dtype, noncontig):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # NLLLoss2d's deprecation
        assert_module_matches(build(spec.format(r=repr(reduction)), w=weight(dtype)),
                              lambda ns: inputs(ns, dtype, noncontig), TOL[dtype])


def test_kl_div_batchmean():
    assert_module_matches(build("KLDivLoss(reduction='batchmean')"),
                          lambda ns: (cast(ns, LOGP), cast(ns, SOFT)), TOL32)


def test_loss_weight_is_a_buffer():
    w = tensord.tensor(W5)
    for m in (tensord.nn.NLLLoss(w), tensord.nn.CrossEntropyLoss(w), tensord.nn.BCELoss(w),
              tensord.nn.MultiMarginLoss(weight=w), tensord.nn.MultiLabelSoftMarginLoss(w),
              tensord.nn.BCEWithLogitsLoss(w, pos_weight=w)):
        assert m.weight is w
        assert "weight" in dict(m.named_buffers())
        assert not list(m.parameters())
    assert list(tensord.nn.NLLLoss().state_dict()) == []
    assert list(tensord.nn.BCEWithLogitsLoss(pos_weight=w).state_dict()) == ["pos_weight"]


@pytest.mark.parametrize("size_average", [None, True, False])
@pytest.mark.parametrize("reduce", [None, True, False])
def test_loss_legacy_reduction_arguments(size_average, reduce):
    got = {}
    for ns in (torch, tensord):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            m = ns.nn.MSELoss(size_average, reduce, reduction="sum")
            w = ns.nn.NLLLoss(None, size_average, -100, reduce)
        got[ns] = (m.reduction, w.reduction, [str(c.message) for c in caught])
    assert got[tensord] == got[torch]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_module_matches(lambda ns: ns.nn.L1Loss(size_average, reduce),
                              lambda ns: (cast(ns, XL), cast(ns, YL)), TOL32)


def _synced(ns, out):
    """out, with tensord's deferred kernel errors raised now."""
    if ns is tensord:
        tensord.synchronize()
    return out


@pytest.mark.parametrize("spec,inputs", [
    ("NLLLoss()", with_ints(LOGP, np.array([1, 0, 5, 2]))),  # a class out of range
    ("NLLLoss()", with_ints(LOGP, np.array([1, 0, -2, 2]))),
    ("NLLLoss()", with_ints(LOGP, CLS[:3])),  # batch sizes differ
    ("NLLLoss()", with_ints(X3, CLS)),  # a 1-D target for a 3-D input
    ("NLLLoss(w)", with_ints(LOGP[:, :4], CLS % 4)),  # a weight per class: 5 for 4
    ("NLLLoss()", floats(LOGP, BIN)),  # float targets
    ("CrossEntropyLoss()", with_ints(XL, np.array([1, 7, 0, 2]))),
    ("CrossEntropyLoss()", floats(XL, SOFT[:, :4])),  # probabilities of the wrong shape
    ("CrossEntropyLoss()", with_ints(XL, CLS.astype(np.int32))),
    ("BCELoss()", floats(XL, BIN)),  # input outside [0, 1]
    ("BCELoss()", floats(PROB, BIN[:, :4])),
    ("MSELoss()", floats(XL, YL[:3])),  # not broadcastable
    ("GaussianNLLLoss()", floats(XL, YL, -VAR)),  # a negative variance
    ("MultiMarginLoss()", with_ints(X3, CLS)),  # a 3-D input
    ("MultiLabelMarginLoss()", with_ints(XL, ML_TARGET[:, :4])),
    ("MarginRankingLoss()", floats(XL[:, 0], YL[:3, 0], SIGN4)),
    ("L1Loss(reduction='bogus')", floats(XL, YL)),
    ("CrossEntropyLoss(reduction='bogus')", with_ints(XL, CLS)),
])
def test_loss_bad_input(spec, inputs):
    tm, dm = twin(build(spec, w=weight("float32")))
    mods = {torch: tm, tensord: dm}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a target of another size
        assert outcome(lambda: tm(*inputs(torch, "float32", False)))[1] is not None
    assert_matches_torch(lambda ns: _synced(ns, mods[ns](*inputs(ns, "float32", False))), TOL32)


def test_loss_constructor_checks():
    assert_same_error(lambda ns: ns.nn.MultiMarginLoss(p=3))
    with pytest.raises(AssertionError):
        tensord.nn.MultiMarginLoss(weight=tensord.ones(2, 2))
    with pytest.warns(UserWarning, match="NLLLoss2d has been deprecated"):
        tensord.nn.NLLLoss2d()


def test_gaussian_nll_loss_var_of_wrong_size():
    assert_module_matches(build("GaussianNLLLoss()"),
                          lambda ns: (cast(ns, XL), cast(ns, YL), cast(ns, VAR[:, :3])), TOL32)


@pytest.mark.parametrize("swap", [False, True])
def test_triplet_margin_with_distance_default_distance(swap):
    assert_module_matches(build(f"TripletMarginWithDistanceLoss(swap={swap})"),
                          lambda ns: (cast(ns, XL), cast(ns, YL), cast(ns, ZL)), TOL32)


def test_triplet_margin_with_distance_nonpositive_margin():
    assert_module_matches(build("TripletMarginWithDistanceLoss(margin=-0.5)"),
                          lambda ns: (cast(ns, XL), cast(ns, YL), cast(ns, ZL)), TOL32)


# ---- batch norm -----------------------------------------------------------------------------

def bn_input(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape) * 3 + 1


BN_SHAPES = {"BatchNorm1d": [(6, 3), (4, 3, 5)], "BatchNorm2d": [(4, 3, 5, 2)],
             "BatchNorm3d": [(2, 3, 4, 2, 3)]}
BN_CONFIGS = ["", "momentum=None", "affine=False", "track_running_stats=False",
              "eps=0.1, momentum=0.5"]


def bn_make(cls, config, dtype="float32", stats=True):
    """make(ns) for cls(3, config) in dtype, its affine parameters and running statistics set
    to values that show up in the output."""
    @torch.no_grad()
    @tensord.no_grad()
    def make(ns):
        m = eval(f"ns.nn.{cls}(3, {config}dtype=ns.{dtype})", {"ns": ns})
        r = np.random.default_rng(5)
        if m.affine:
            m.weight.copy_(cast(ns, r.uniform(0.5, 2, 3), dtype))
            m.bias.copy_(cast(ns, r.standard_normal(3), dtype))
        if stats and m.track_running_stats:
            m.running_mean.copy_(cast(ns, r.standard_normal(3), dtype))
            m.running_var.copy_(cast(ns, r.uniform(0.5, 2, 3), dtype))
            m.num_batches_tracked.fill_(2)
        return m
    return make


@pytest.mark.parametrize("train", [True, False], ids=["train", "eval"])
@pytest.mark.parametrize("config", BN_CONFIGS)
@pytest.mark.parametrize("cls,shape", [(c, s) for c, ss in BN_SHAPES.items() for s in ss])
def test_batch_norm(cls, shape, config, train):
    a = bn_input(shape, 1)
    assert_module_matches(bn_make(cls, config + ", " if config else ""),
                          lambda ns: (cast(ns, a, noncontig=True),), TOL32, train=train)


@pytest.mark.parametrize("train", [True, False], ids=["train", "eval"])
def test_batch_norm_float64(train):
    a = bn_input((4, 3, 5, 2), 2)
    assert_module_matches(bn_make("BatchNorm2d", "", "float64"),
                          lambda ns: (cast(ns, a, "float64"),), TOL["float64"], train=train)


@pytest.mark.parametrize("config", BN_CONFIGS)
def test_batch_norm_consecutive_training_calls(config):
    """Running statistics folded in over several batches (momentum None: their cumulative
    average), then used in eval."""
    tm, dm = twin(bn_make("BatchNorm2d", config + ", " if config else "", stats=False))
    mods = {torch: tm, tensord: dm}
    for step in range(4):
        train = step < 3
        tm.train(train)
        dm.train(train)
        a = bn_input((3 + step, 3, 4, 2), 10 + step)
        with torch.no_grad(), tensord.no_grad():
            assert_matches_torch(lambda ns: mods[ns](cast(ns, a, noncontig=step % 2 == 1)), TOL32)
        for k, w in tm.state_dict().items():
            g = as_torch(dm.state_dict()[k])
            if w.is_floating_point():
                torch.testing.assert_close(g, w, rtol=2e-5, atol=2e-5)
            else:
                assert torch.equal(g, w), (k, g, w)
    if tm.track_running_stats:
        assert tm.num_batches_tracked.item() == 3
        assert not torch.equal(tm.running_mean, torch.zeros(3))


@pytest.mark.parametrize("cls,shape", [
    ("BatchNorm1d", (6,)), ("BatchNorm1d", (2, 3, 4, 5)), ("BatchNorm2d", (4, 3, 5)),
    ("BatchNorm3d", (4, 3, 5, 2)), ("LazyBatchNorm2d", (4, 3, 5)),
])
def test_batch_norm_bad_rank(cls, shape):
    a = bn_input(shape, 3)
    args = () if cls.startswith("Lazy") else (3,)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # lazy modules' warning
        assert_same_error(lambda ns: getattr(ns.nn, cls)(*args)(cast(ns, a)))


@pytest.mark.parametrize("train", [True, False], ids=["train", "eval"])
@pytest.mark.parametrize("cls,shape", [
    ("BatchNorm2d", (4, 2, 5, 2)),  # 2 channels for 3 features
    ("BatchNorm1d", (4, 5)),
    ("BatchNorm1d", (1, 3)),  # one value per channel: an error only when training
    ("BatchNorm2d", (1, 3, 1, 1)),
])
def test_batch_norm_bad_input(cls, shape, train):
    a = bn_input(shape, 3)
    assert_module_matches(bn_make(cls, ""), lambda ns: (cast(ns, a),), TOL32, train=train)


LAZY_NORMS = [("LazyBatchNorm1d", (4, 3)), ("LazyBatchNorm1d", (4, 3, 2)),
              ("LazyBatchNorm2d", (4, 3, 5, 2)), ("LazyBatchNorm3d", (2, 3, 4, 2, 3)),
              ("LazyInstanceNorm1d", (4, 3, 5)), ("LazyInstanceNorm2d", (2, 3, 5, 4)),
              ("LazyInstanceNorm3d", (2, 3, 4, 2, 3))]


@pytest.mark.parametrize("config", ["", "affine=False, ", "track_running_stats=False, "])
@pytest.mark.parametrize("cls,shape", LAZY_NORMS)
def test_lazy_norm(cls, shape, config):
    """No features until the first call, which takes them from the input's channels and turns
    the module into its non-lazy class."""
    a = bn_input(shape, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # lazy modules' warning
        mods = {ns: eval(f"ns.nn.{cls}({config})", {"ns": ns}) for ns in (torch, tensord)}
    tm, dm = mods[torch], mods[tensord]
    assert repr(dm) == repr(tm)
    assert dm.has_uninitialized_params() == tm.has_uninitialized_params()
    with torch.no_grad(), tensord.no_grad():
        assert_matches_torch(lambda ns: mods[ns](cast(ns, a)), TOL32)
    assert type(dm).__name__ == type(tm).__name__ == cls[4:]
    assert repr(dm) == repr(tm)
    tsd, dsd = tm.state_dict(), dm.state_dict()
    assert list(dsd) == list(tsd)
    for k, w in tsd.items():
        assert type(dsd[k]) is tensord.Tensor
        torch.testing.assert_close(as_torch(dsd[k]), w, rtol=2e-5, atol=2e-5)


def test_lazy_batch_norm_loads_a_state_dict():
    """Loading materializes the uninitialized parameters and running statistics in the
    checkpoint's shapes."""
    sd = bn_make("BatchNorm2d", "")(torch).state_dict()
    mods = {}
    for ns in (torch, tensord):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # lazy modules' warning
            mods[ns] = ns.nn.LazyBatchNorm2d()
        mods[ns].load_state_dict(sd)
        assert not mods[ns].has_uninitialized_params()
    tsd, dsd = mods[torch].state_dict(), mods[tensord].state_dict()
    assert list(dsd) == list(tsd)
    for k, w in tsd.items():
        assert torch.equal(as_torch(dsd[k]), w), k


def test_sync_batch_norm_is_batch_norm_on_one_server():
    """SyncBatchNorm computes as BatchNorm (torch's needs a GPU and a process group); its
    repr and state are torch's SyncBatchNorm's."""
    twin(lambda ns: ns.nn.SyncBatchNorm(3, momentum=None))
    for train in (True, False):
        a = bn_input((2, 3, 4, 5, 2), 6)
        tm = bn_make("BatchNorm3d", "")(torch).train(train)
        dm = bn_make("SyncBatchNorm", "")(tensord).train(train)
        with torch.no_grad(), tensord.no_grad():
            want = tm(torch.tensor(a, dtype=torch.float32))
        got = dm(cast(tensord, a))
        torch.testing.assert_close(as_torch(got), want, rtol=2e-5, atol=2e-5)
        torch.testing.assert_close(as_torch(dm.running_var), tm.running_var)
        assert dm.num_batches_tracked.item() == tm.num_batches_tracked.item()
    with pytest.raises(ValueError, match="expected at least 2D input"):
        tensord.nn.SyncBatchNorm(3)(tensord.ones(3))
    with pytest.raises(ValueError, match="number of input channels should be non-zero"):
        tensord.nn.SyncBatchNorm(0)(tensord.ones(2, 0))


def test_convert_sync_batchnorm():
    net = tensord.nn.Sequential(tensord.nn.Linear(3, 3), tensord.nn.BatchNorm1d(3),
                                tensord.nn.Sequential(tensord.nn.BatchNorm2d(3, affine=False)))
    bn = net[1]
    out = tensord.nn.SyncBatchNorm.convert_sync_batchnorm(net)
    tout = torch.nn.SyncBatchNorm.convert_sync_batchnorm(torch.nn.Sequential(
        torch.nn.Linear(3, 3), torch.nn.BatchNorm1d(3),
        torch.nn.Sequential(torch.nn.BatchNorm2d(3, affine=False))))
    assert repr(out) == repr(tout)
    assert type(out[1]) is tensord.nn.SyncBatchNorm and type(out[0]) is tensord.nn.Linear
    assert out[1].weight is bn.weight and out[1].running_mean is bn.running_mean
    assert out[1].num_batches_tracked is bn.num_batches_tracked
    single = tensord.nn.SyncBatchNorm.convert_sync_batchnorm(tensord.nn.BatchNorm3d(4))
    assert type(single) is tensord.nn.SyncBatchNorm and single.num_features == 4


def test_batch_norm_old_checkpoint_without_num_batches_tracked():
    m = tensord.nn.BatchNorm1d(3)
    m.num_batches_tracked.fill_(5)
    sd = {k: v for k, v in torch.nn.BatchNorm1d(3).state_dict().items()
          if k != "num_batches_tracked"}
    assert not m.load_state_dict(sd).missing_keys  # no version metadata: a version 1 checkpoint
    assert m.num_batches_tracked.item() == 0


# ---- instance norm --------------------------------------------------------------------------

IN_SHAPES = {"InstanceNorm1d": [(4, 3, 5), (3, 5)], "InstanceNorm2d": [(2, 3, 4, 5), (3, 4, 5)],
             "InstanceNorm3d": [(2, 3, 4, 2, 3), (3, 4, 2, 3)]}


@pytest.mark.parametrize("train", [True, False], ids=["train", "eval"])
@pytest.mark.parametrize("config", ["", "affine=True, ", "eps=0.5, affine=True, "])
@pytest.mark.parametrize("cls,shape", [(c, s) for c, ss in IN_SHAPES.items() for s in ss])
def test_instance_norm(cls, shape, config, train):
    a = bn_input(shape, 7)
    assert_module_matches(bn_make(cls, config), lambda ns: (cast(ns, a, noncontig=True),), TOL32,
                          train=train)


@pytest.mark.parametrize("train", [True, False], ids=["train", "eval"])
@pytest.mark.parametrize("cls,shape", [("InstanceNorm2d", (2, 3, 4, 5)),
                                       ("InstanceNorm2d", (3, 4, 5)),
                                       ("InstanceNorm1d", (4, 3, 5))])
def test_instance_norm_running_stats(cls, shape, train):
    """track_running_stats: the samples' mean statistics folded into the running ones when
    training, the running ones used in eval."""
    a = bn_input(shape, 8)
    assert_module_matches(bn_make(cls, "momentum=0.3, affine=True, track_running_stats=True, "),
                          lambda ns: (cast(ns, a),), TOL32, train=train)


@pytest.mark.parametrize("shape", [(4, 3, 1), (3, 1)])
def test_instance_norm_one_value_per_channel(shape):
    a = bn_input(shape, 9)
    assert_module_matches(bn_make("InstanceNorm1d", ""), lambda ns: (cast(ns, a),), TOL32,
                          train=True)
    assert_same_error(lambda ns: bn_make("InstanceNorm1d", "")(ns)(cast(ns, a)))


@pytest.mark.parametrize("cls,shape", [("InstanceNorm1d", (3,)), ("InstanceNorm1d", (2, 3, 4, 5)),
                                       ("InstanceNorm2d", (3, 4)), ("InstanceNorm3d", (3, 4, 5)),
                                       ("InstanceNorm3d", (1, 2, 3, 4, 5, 6))])
def test_instance_norm_bad_rank(cls, shape):
    assert_same_error(lambda ns: bn_make(cls, "")(ns)(cast(ns, np.ones(shape))))


def test_instance_norm_rejects_old_running_stats():
    """A checkpoint without version metadata (from before 0.4) holding running statistics that
    an InstanceNorm without track_running_stats does not keep."""
    sd = {"running_mean": torch.zeros(3), "running_var": torch.ones(3)}
    assert_same_error(lambda ns: ns.nn.InstanceNorm1d(3).load_state_dict(dict(sd)))


# ---- layer, group and local response norms --------------------------------------------------

NORMS = [
    ("LayerNorm(5)", (4, 3, 5)), ("LayerNorm([3, 5], eps=0.1)", (4, 3, 5)),
    ("LayerNorm((3, 5), elementwise_affine=False)", (2, 4, 3, 5)), ("LayerNorm(4)", (4,)),
    ("GroupNorm(2, 6)", (4, 6, 5)), ("GroupNorm(3, 6, affine=False)", (2, 6, 3, 2)),
    ("GroupNorm(1, 6, eps=0.5)", (3, 6)), ("GroupNorm(6, 6)", (2, 6, 2, 2, 3)),
    ("LocalResponseNorm(3)", (2, 6, 5)),
    ("LocalResponseNorm(2, alpha=0.1, beta=0.5, k=2.0)", (2, 6, 4, 3)),
    ("LocalResponseNorm(4, alpha=0.3)", (2, 5, 3, 2, 2)),
    # CrossMapLRN2d: odd and even sizes, and a window wider than the channels.
    ("CrossMapLRN2d(3)", (2, 6, 3, 4)),
    ("CrossMapLRN2d(5, alpha=0.5, beta=0.5, k=2)", (2, 7, 3, 2)),
    ("CrossMapLRN2d(4, alpha=1.0)", (1, 6, 2, 2)),
    ("CrossMapLRN2d(9, alpha=1.0)", (2, 3, 2, 2)),
]


def affine_make(spec, dtype="float32"):
    """make(ns) for spec in dtype, its affine parameters (if any) set to values that show up in
    the output."""
    @torch.no_grad()
    @tensord.no_grad()
    def make(ns):
        m = build(spec)(ns).to(getattr(ns, dtype))
        r = np.random.default_rng(9)
        for p in m.parameters():
            p.copy_(cast(ns, r.uniform(0.5, 2.0, tuple(p.shape)), dtype))
        return m
    return make


@pytest.mark.parametrize("dtype,noncontig", ACT_DTYPES[:3], ids=lambda v: str(v))
@pytest.mark.parametrize("spec,shape", NORMS)
def test_norm(spec, shape, dtype, noncontig):
    a = bn_input(shape, 11)
    assert_module_matches(affine_make(spec, dtype), lambda ns: (cast(ns, a, dtype, noncontig),),
                          TOL[dtype], train=True)


@pytest.mark.parametrize("spec,shape", [("LayerNorm(5)", (4, 3, 5)),
                                        ("GroupNorm(2, 6)", (4, 6, 5))])
def test_norm_bfloat16(spec, shape):
    a = bn_input(shape, 12)
    assert_module_matches(affine_make(spec, "bfloat16"), lambda ns: (cast(ns, a, "bfloat16"),),
                          TOL["bfloat16"])


@pytest.mark.parametrize("spec,shape", [
    ("LayerNorm(5)", (4, 3, 4)), ("LayerNorm([4, 5])", (4, 5, 4)), ("GroupNorm(2, 6)", (4, 4, 5)),
    ("GroupNorm(2, 6)", (1, 6)), ("LocalResponseNorm(3)", (4, 6)),
    ("CrossMapLRN2d(3)", (4, 6, 5)),
])
def test_norm_bad_input(spec, shape):
    a = bn_input(shape, 13)
    assert_module_matches(affine_make(spec), lambda ns: (cast(ns, a),), TOL32, train=True)


def test_norm_constructor_checks():
    assert_same_error(lambda ns: ns.nn.GroupNorm(4, 6))
    m = tensord.nn.LayerNorm([2, 3])
    assert m.normalized_shape == (2, 3) and tuple(m.weight.shape) == (2, 3)


# ---- dropout --------------------------------------------------------------------------------

DROPOUTS = [("Dropout()", (2, 3, 4)), ("Dropout(0.2, inplace=True)", (2, 3, 4)),
            ("Dropout1d(0.3)", (2, 3, 4)), ("Dropout1d(0.3)", (3, 4)),
            ("Dropout2d()", (2, 3, 4, 5)),
            ("Dropout3d(0.4)", (2, 3, 4, 5, 2)), ("Dropout3d(0.4)", (3, 4, 5, 2)),
            ("AlphaDropout(0.2)", (2, 3, 4)), ("FeatureAlphaDropout()", (2, 3, 4, 5))]


@pytest.mark.parametrize("spec,shape", DROPOUTS)
def test_dropout_eval_is_identity(spec, shape):
    a = bn_input(shape, 14)
    assert_module_matches(build(spec), lambda ns: (cast(ns, a, noncontig=True),), TOL32)
    x = cast(tensord, a)
    assert torch.equal(as_torch(build(spec)(tensord).eval()(x)), as_torch(x))


def test_dropout_constructor_checks():
    for p in (-0.1, 1.5):
        assert_same_error(lambda ns: ns.nn.Dropout2d(p))
        assert_same_error(lambda ns: ns.nn.AlphaDropout(p))


@pytest.mark.parametrize("p", [0.2, 0.5])
def test_dropout_training_statistics(p):
    """Each element kept with probability 1 - p and scaled by 1 / (1 - p); p = 0 keeps all,
    p = 1 none."""
    x = tensord.ones(200, 300)
    y = as_torch(tensord.nn.Dropout(p)(x))
    kept = y != 0
    assert abs(kept.float().mean().item() - (1 - p)) < 0.01
    torch.testing.assert_close(y[kept], torch.full_like(y[kept], 1 / (1 - p)))
    assert torch.equal(as_torch(x), torch.ones(200, 300))  # not in place
    assert torch.equal(as_torch(tensord.nn.Dropout(0.0)(x)), torch.ones(200, 300))
    assert torch.equal(as_torch(tensord.nn.Dropout(1.0)(x)), torch.zeros(200, 300))


@pytest.mark.parametrize("spec", ["Dropout(0.5, inplace=True)", "Dropout2d(0.5, inplace=True)"])
def test_dropout_inplace_training(spec):
    base = tensord.ones(20, 30, 2, 2)
    x = base.transpose(0, 1)
    assert build(spec)(tensord)(x) is x
    got = as_torch(base)
    assert set(got.unique().tolist()) == {0.0, 2.0}
    assert abs((got != 0).float().mean().item() - 0.5) < 0.1


@pytest.mark.parametrize("spec,shape,channel_dims", [
    ("Dropout1d(0.5)", (40, 30, 7), 2), ("Dropout1d(0.5)", (300, 7), 1),
    ("Dropout2d(0.5)", (40, 30, 3, 4), 2),
    ("Dropout3d(0.5)", (20, 30, 2, 3, 2), 2), ("Dropout3d(0.5)", (300, 2, 3, 2), 1),
    ("FeatureAlphaDropout(0.5)", (40, 30, 3, 4), 2),
    ("Dropout2d(0.5)", (40, 30, 7), 2),
])
def test_feature_dropout_drops_whole_channels(spec, shape, channel_dims):
    """Each channel (the dims before the spatial ones, as torch reads the rank) is kept whole
    or dropped whole, each on its own draw: about half are dropped, and in a batch the samples'
    channels are not all dropped together."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # dropout2d's warning on a 3-D input
        y = as_torch(build(spec)(tensord)(tensord.ones(*shape)))
    rows = y.reshape(int(np.prod(shape[:channel_dims])), -1)
    assert torch.equal(rows.min(1).values, rows.max(1).values)
    dropped = rows[:, 0] == rows[:, 0].min()
    assert 0.35 < dropped.float().mean().item() < 0.65
    if channel_dims == 2:
        per_sample = dropped.reshape(shape[0], shape[1]).float().mean(1)
        assert ((per_sample > 0) & (per_sample < 1)).all()


@pytest.mark.parametrize("train", [True, False], ids=["train", "eval"])
def test_dropout1d_bad_rank(train):
    a = np.ones((2, 3, 4, 5))
    assert_module_matches(build("Dropout1d()"), lambda ns: (cast(ns, a),), TOL32, train=train)


ALPHA = 1.7580993408473766  # SELU's -alpha * scale: its negative limit


@pytest.mark.parametrize("spec,shape,channel_dims", [
    ("AlphaDropout(0.3)", (400, 500), 1), ("FeatureAlphaDropout(0.3)", (300, 100, 5), 2),
])
def test_alpha_dropout(spec, shape, channel_dims):
    """Kept values are a * x + alpha * a * p, dropped ones alpha * a * (p - 1) (a positive x
    tells them apart), with a fixed so that a standard normal input keeps its mean and
    variance; FeatureAlphaDropout drops whole channels."""
    p = 0.3
    m = build(spec)(tensord)
    x = tensord.randn(*shape).abs()
    y = as_torch(m(x)).reshape(int(np.prod(shape[:channel_dims])), -1)
    xt = as_torch(x).reshape(y.shape)
    a = 1 / np.sqrt((ALPHA * ALPHA * p + 1) * (1 - p))
    dropped = y < 0
    torch.testing.assert_close(y[dropped], torch.full_like(y[dropped], ALPHA * a * (p - 1)))
    torch.testing.assert_close(y[~dropped], a * xt[~dropped] + ALPHA * a * p)
    assert abs(dropped.float().mean().item() - p) < 0.02
    assert torch.equal(dropped.all(1), dropped.any(1)) == spec.startswith("Feature")
    z = as_torch(m(tensord.randn(*shape)))
    assert abs(z.mean().item()) < 0.03 and abs(z.std().item() - 1) < 0.03


# ---- adaptive log-softmax -------------------------------------------------------------------

ASM = "AdaptiveLogSoftmaxWithLoss(8, 12, [3, 7], div_value=2.0{})"
ASM_X = rng.standard_normal((6, 8))
ASM_T = np.array([0, 5, 11, 2, 7, 4])  # each cluster, and both ends of one


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("head_bias", ["", ", head_bias=True"])
def test_adaptive_log_softmax(head_bias, dtype):
    tm, dm = twin(lambda ns: build(ASM.format(head_bias))(ns).to(getattr(ns, dtype)))
    mods = {torch: tm, tensord: dm}
    x = lambda ns: cast(ns, ASM_X, dtype)  # noqa: E731
    with torch.no_grad(), tensord.no_grad():
        assert_matches_torch(lambda ns: mods[ns](x(ns), cast(ns, ASM_T)), TOL[dtype])
        assert_matches_torch(lambda ns: mods[ns](x(ns)[2], cast(ns, ASM_T[2])), TOL[dtype])
        assert_matches_torch(lambda ns: mods[ns](x(ns)[:2], cast(ns, ASM_T[:2])), TOL[dtype])
        assert_matches_torch(lambda ns: mods[ns].log_prob(x(ns)), TOL[dtype])
        assert_matches_torch(lambda ns: mods[ns].predict(x(ns)), TOL[dtype])
        full = tm.log_prob(x(torch))
    torch.testing.assert_close(full.exp().sum(1), torch.ones(6, dtype=full.dtype))


@pytest.mark.parametrize("path,tail_rows", [("shortlist", 0), ("tail", 6), ("mixed", 3)])
def test_adaptive_log_softmax_predict_paths(path, tail_rows):
    """predict's three paths: the head picks the shortlist for every row, for none, for some."""
    tm, dm = twin(build(ASM.format(", head_bias=True")))
    x = rng.standard_normal((6, 8))
    x[:, 0] = [2, -2, 2, -2, 2, -2]
    w = np.zeros((5, 8), dtype=np.float32)
    w[4, 0] = 5 if path == "mixed" else 0  # rows with x0 > 0 lean to the last cluster
    b = np.array({"shortlist": [9, 9, 9, 0, 0], "tail": [0, 0, 0, 9, 9],
                  "mixed": [0, 0, 1, 0, 0]}[path], dtype=np.float32)
    with torch.no_grad(), tensord.no_grad():
        tm.head.weight.copy_(torch.tensor(w))
        tm.head.bias.copy_(torch.tensor(b))
        assert (tm.head(cast(torch, x)).argmax(1) >= 3).sum().item() == tail_rows
        dm.head.weight.copy_(cast(tensord, w))
        dm.head.bias.copy_(cast(tensord, b))
    mods = {torch: tm, tensord: dm}
    with torch.no_grad(), tensord.no_grad():
        assert_matches_torch(lambda ns: mods[ns].predict(cast(ns, x)), TOL32)


@pytest.mark.parametrize("x_shape,target", [
    ((6, 8), [0, 5, 12, 2, 7, 4]),  # a class past n_classes
    ((6, 8), [0, 5, -1, 2, 7, 4]),
    ((5, 8), [0, 5, 11, 2, 7, 4]),  # batch sizes differ
    ((6, 2, 4), [0, 5, 11, 2, 7, 4]),  # 1-D target, 3-D input
    ((6, 8), [[0, 5, 11], [2, 7, 4]]),  # a 2-D target
    ((6, 8), 3),  # 0-D target, 2-D input
])
def test_adaptive_log_softmax_bad_input(x_shape, target):
    tm, dm = twin(build(ASM.format("")))
    mods = {torch: tm, tensord: dm}
    x = rng.standard_normal(x_shape)
    assert_same_error(lambda ns: mods[ns](cast(ns, x), cast(ns, np.array(target))))


@pytest.mark.parametrize("cutoffs", [[3, 3], [7, 3], [0, 5], [3, 12], [3.5]])
def test_adaptive_log_softmax_bad_cutoffs(cutoffs):
    assert_same_error(lambda ns: ns.nn.AdaptiveLogSoftmaxWithLoss(8, 12, cutoffs))
