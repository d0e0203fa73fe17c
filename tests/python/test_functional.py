"""torch.nn.functional's losses, normalisations, embedding, padding, dropout and helpers against
torch 1.13: values (float32 tolerances), dtypes, shapes and exception classes (and torch's
message in tensord's) for good and bad arguments.
"""
import numpy as np
import pytest
import torch
import torch.nn.functional as F

import tensord
import tensord.nn.functional as TF

rng = np.random.default_rng(1234)
A = {
    "logits": rng.standard_normal((4, 5)).astype(np.float32),
    "logits3": rng.standard_normal((2, 5, 3)).astype(np.float32),
    "probs": rng.uniform(0.05, 0.95, (4, 5)).astype(np.float32),
    "target01": rng.integers(0, 2, (4, 5)).astype(np.float32),
    "x": rng.standard_normal((4, 5)).astype(np.float32),
    "y": rng.standard_normal((4, 5)).astype(np.float32),
    "img": rng.standard_normal((2, 4, 3, 3)).astype(np.float32),
    "seq": rng.standard_normal((2, 3, 6)).astype(np.float32),
    "w5": rng.uniform(0.5, 2.0, (5,)).astype(np.float32),
    "w4": rng.uniform(0.5, 2.0, (4,)).astype(np.float32),
    "b4": rng.standard_normal((4,)).astype(np.float32),
    "emb": rng.standard_normal((10, 3)).astype(np.float32),
    "ln_w": rng.uniform(0.5, 2.0, (5,)).astype(np.float32),
    "ln_b": rng.standard_normal((5,)).astype(np.float32),
}
I = {
    "cls": np.array([1, 0, 4, 2]),
    "cls_ignore": np.array([1, -100, 4, 2]),
    "cls_bad": np.array([1, 0, 5, 2]),
    "cls3": np.array([[1, 0, 4], [2, 2, 3]]),
    "idx": np.array([[1, 9], [0, 3]]),
    "idx_bad": np.array([1, 10]),
    "hot": np.array([0, 3, 1]),
}


def T(m, name):
    return m.tensor(A[name]) if name in A else m.tensor(I[name])


def fn(m):
    return F if m is torch else TF


CASES = {
    "mse_loss": lambda m: fn(m).mse_loss(T(m, "x"), T(m, "y")),
    "mse_loss(sum)": lambda m: fn(m).mse_loss(T(m, "x"), T(m, "y"), reduction="sum"),
    "mse_loss(none)": lambda m: fn(m).mse_loss(T(m, "x"), T(m, "y"), reduction="none"),
    "mse_loss(bad reduction)": lambda m: fn(m).mse_loss(T(m, "x"), T(m, "y"), reduction="bogus"),
    "l1_loss": lambda m: fn(m).l1_loss(T(m, "x"), T(m, "y")),
    "smooth_l1_loss": lambda m: fn(m).smooth_l1_loss(T(m, "x"), T(m, "y")),
    "smooth_l1_loss(beta)": lambda m: fn(m).smooth_l1_loss(T(m, "x"), T(m, "y"), beta=0.3),
    "huber_loss(delta)": lambda m: fn(m).huber_loss(T(m, "x"), T(m, "y"), delta=0.4),
    "soft_margin_loss": lambda m: fn(m).soft_margin_loss(T(m, "x"), T(m, "target01") * 2 - 1),
    "binary_cross_entropy": lambda m: fn(m).binary_cross_entropy(T(m, "probs"), T(m, "target01")),
    "binary_cross_entropy(weight)": lambda m: fn(m).binary_cross_entropy(
        T(m, "probs"), T(m, "target01"), weight=T(m, "w5")),
    "binary_cross_entropy(out of range)": lambda m: fn(m).binary_cross_entropy(
        T(m, "probs") * 3, T(m, "target01")),
    "bce_with_logits": lambda m: fn(m).binary_cross_entropy_with_logits(T(m, "x"), T(m, "target01")),
    "bce_with_logits(pos_weight)": lambda m: fn(m).binary_cross_entropy_with_logits(
        T(m, "x"), T(m, "target01"), pos_weight=T(m, "w5")),
    "kl_div(batchmean)": lambda m: fn(m).kl_div(T(m, "logits").log_softmax(1), T(m, "probs"),
                                                reduction="batchmean"),
    "kl_div(log_target)": lambda m: fn(m).kl_div(T(m, "logits").log_softmax(1),
                                                 T(m, "probs").log(), reduction="sum",
                                                 log_target=True),
    "nll_loss": lambda m: fn(m).nll_loss(T(m, "logits").log_softmax(1), T(m, "cls")),
    "nll_loss(weight, ignore)": lambda m: fn(m).nll_loss(
        T(m, "logits").log_softmax(1), T(m, "cls_ignore"), weight=T(m, "w5")),
    "nll_loss(bad target)": lambda m: fn(m).nll_loss(T(m, "logits"), T(m, "cls_bad")),
    "cross_entropy": lambda m: fn(m).cross_entropy(T(m, "logits"), T(m, "cls")),
    "cross_entropy(sum)": lambda m: fn(m).cross_entropy(T(m, "logits"), T(m, "cls"),
                                                        reduction="sum"),
    "cross_entropy(none, ignore)": lambda m: fn(m).cross_entropy(
        T(m, "logits"), T(m, "cls_ignore"), reduction="none"),
    "cross_entropy(weight, ignore)": lambda m: fn(m).cross_entropy(
        T(m, "logits"), T(m, "cls_ignore"), weight=T(m, "w5")),
    "cross_entropy(label_smoothing)": lambda m: fn(m).cross_entropy(
        T(m, "logits"), T(m, "cls"), label_smoothing=0.2),
    "cross_entropy(smoothing, weight, ignore)": lambda m: fn(m).cross_entropy(
        T(m, "logits"), T(m, "cls_ignore"), weight=T(m, "w5"), label_smoothing=0.1),
    "cross_entropy(3-d)": lambda m: fn(m).cross_entropy(T(m, "logits3"), T(m, "cls3")),
    "cross_entropy(probabilities)": lambda m: fn(m).cross_entropy(
        T(m, "logits"), T(m, "probs").softmax(1)),
    "cross_entropy(float target wrong shape)": lambda m: fn(m).cross_entropy(
        T(m, "logits"), T(m, "cls").float()),
    "cross_entropy(bad target)": lambda m: fn(m).cross_entropy(T(m, "logits"), T(m, "cls_bad")),
    "one_hot": lambda m: fn(m).one_hot(T(m, "hot")),
    "one_hot(num_classes)": lambda m: fn(m).one_hot(T(m, "hot"), 6),
    "one_hot(too small)": lambda m: fn(m).one_hot(T(m, "hot"), 3),
    "one_hot(float)": lambda m: fn(m).one_hot(T(m, "hot").float()),
    "cosine_similarity": lambda m: fn(m).cosine_similarity(T(m, "x"), T(m, "y")),
    "cosine_similarity(dim 0)": lambda m: fn(m).cosine_similarity(T(m, "x"), T(m, "y"), dim=0),
    "pairwise_distance": lambda m: fn(m).pairwise_distance(T(m, "x"), T(m, "y")),
    "glu": lambda m: fn(m).glu(T(m, "x"), 0),
    "glu(odd)": lambda m: fn(m).glu(T(m, "x")),
    "softmin": lambda m: fn(m).softmin(T(m, "x"), 1),
    "threshold": lambda m: fn(m).threshold(T(m, "x"), 0.1, -5.0),
    "layer_norm": lambda m: fn(m).layer_norm(T(m, "x"), (5,)),
    "layer_norm(affine)": lambda m: fn(m).layer_norm(T(m, "x"), (5,), T(m, "ln_w"), T(m, "ln_b")),
    "layer_norm(2 dims)": lambda m: fn(m).layer_norm(T(m, "img"), (3, 3)),
    "layer_norm(bad shape)": lambda m: fn(m).layer_norm(T(m, "x"), (4,)),
    "group_norm": lambda m: fn(m).group_norm(T(m, "img"), 2, T(m, "w4"), T(m, "b4")),
    "group_norm(bad groups)": lambda m: fn(m).group_norm(T(m, "img"), 3),
    "instance_norm": lambda m: fn(m).instance_norm(T(m, "img")),
    "batch_norm(eval)": lambda m: fn(m).batch_norm(T(m, "img"), T(m, "b4"), T(m, "w4"),
                                                   T(m, "w4"), T(m, "b4")),
    "batch_norm(training)": lambda m: fn(m).batch_norm(T(m, "img"), None, None, training=True),
    "embedding": lambda m: fn(m).embedding(T(m, "idx"), T(m, "emb")),
    "embedding(float indices)": lambda m: fn(m).embedding(T(m, "idx").float(), T(m, "emb")),
    "pad(constant)": lambda m: fn(m).pad(T(m, "seq"), (1, 2)),
    "pad(constant, value, 2 dims)": lambda m: fn(m).pad(T(m, "img"), (1, 0, 2, 1), value=3.5),
    "pad(negative)": lambda m: fn(m).pad(T(m, "seq"), (-1, 2)),
    "pad(reflect)": lambda m: fn(m).pad(T(m, "seq"), (2, 3), mode="reflect"),
    "pad(reflect, too much)": lambda m: fn(m).pad(T(m, "seq"), (6, 0), mode="reflect"),
    "pad(replicate)": lambda m: fn(m).pad(T(m, "img"), (1, 2, 2, 1), mode="replicate"),
    "pad(circular)": lambda m: fn(m).pad(T(m, "seq"), (2, 1), mode="circular"),
    "pad(odd length)": lambda m: fn(m).pad(T(m, "seq"), (1,)),
    "dropout(eval)": lambda m: fn(m).dropout(T(m, "x"), 0.5, training=False),
    "dropout(p=0)": lambda m: fn(m).dropout(T(m, "x"), 0.0),
    "dropout(p=1)": lambda m: fn(m).dropout(T(m, "x"), 1.0),
    "dropout(bad p)": lambda m: fn(m).dropout(T(m, "x"), 1.5),
}


def outcome(fn_):
    try:
        return fn_(), None
    except Exception as e:  # noqa: BLE001 - the class is compared
        return None, (type(e).__name__, str(e))


def as_torch(t):
    return torch.tensor(t.cpu().numpy()) if hasattr(t, "cpu") else t


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch(name, session):
    want, werr = outcome(lambda: CASES[name](torch))
    got, gerr = outcome(lambda: CASES[name](tensord))
    if werr:
        assert gerr is not None, f"torch raised {werr}, tensord returned"
        assert gerr[0] == werr[0] and werr[1] in gerr[1], (gerr, werr)
        return
    assert gerr is None, gerr
    assert str(got.dtype) == str(want.dtype)
    assert tuple(got.shape) == tuple(want.shape)
    torch.testing.assert_close(as_torch(got), want, rtol=2e-5, atol=2e-5)


def test_dropout_keeps_the_scale_and_is_seeded(session):
    x = tensord.ones(2000)
    tensord.manual_seed(4)
    a = TF.dropout(x, 0.3)
    tensord.manual_seed(4)
    b = TF.dropout(x, 0.3)
    assert torch.equal(as_torch(a), as_torch(b))
    kept = as_torch(a)
    assert all(v == 0.0 or abs(v - 1 / 0.7) < 1e-6 for v in kept.unique().tolist())
    assert 0.25 < float((kept == 0).float().mean()) < 0.35
    c = TF.dropout2d(tensord.ones(4, 8, 3, 3), 0.5)
    per_channel = as_torch(c).view(4, 8, -1)
    assert torch.equal(per_channel.amax(-1), per_channel.amin(-1))  # whole channels dropped


def test_batch_norm_training_updates_running_stats_as_torch(session):
    x = A["img"]
    rm, rv = torch.zeros(4), torch.ones(4)
    trm, trv = tensord.zeros(4), tensord.ones(4)
    want = F.batch_norm(torch.tensor(x), rm, rv, training=True, momentum=0.2)
    got = TF.batch_norm(tensord.tensor(x), trm, trv, training=True, momentum=0.2)
    torch.testing.assert_close(as_torch(got), want, rtol=2e-5, atol=2e-5)
    torch.testing.assert_close(as_torch(trm), rm, rtol=2e-5, atol=2e-5)
    torch.testing.assert_close(as_torch(trv), rv, rtol=2e-5, atol=2e-5)
