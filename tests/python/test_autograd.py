"""Autograd against torch 1.13: programs run with `torch` bound to real torch and to tensord
print the same text (values, grad_fn names, requires_grad flags), gradients of every op with a
formula match torch's over broadcasting and mixed dtypes, and misuse raises torch's errors.
"""
import textwrap
import warnings

import numpy as np
import pytest
import torch as real_torch

import tensord


def run(module, code):
    out = []
    env = {"torch": module, "F": module.nn.functional,
           "print": lambda *a, **k: out.append(" ".join(str(x) for x in a))}
    exec(textwrap.dedent(code), env)
    return "\n".join(out)


PROGRAMS = {
    "chain_and_mean": """
        x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
        t = x * 10
        z = t * t
        loss = z.mean()
        print(x, t, z, loss)
        loss.backward()
        print(x.grad, x.is_leaf, t.is_leaf, t.requires_grad, loss.grad_fn.name())
    """,
    "custom_function": """
        class MyMul(torch.autograd.Function):
            @staticmethod
            def forward(ctx, input1, input2):
                ctx.save_for_backward(input1, input2)
                return input1 * input1 * input2

            @staticmethod
            def backward(ctx, grad_output):
                input1, input2 = ctx.saved_tensors
                return grad_output * 2 * input1 * input2, grad_output * input1 * input1

        x = torch.tensor([2.0, 3.0], requires_grad=True)
        y = torch.tensor([3.0, 4.0], requires_grad=True)
        z = MyMul.apply(x, y)
        print(z, z.grad_fn.name())
        z.backward(torch.tensor([1.0, 1.0]))
        print(f"x.grad={x.grad}, y.grad={y.grad}")
    """,
    "accumulation_and_zeroing": """
        x = torch.tensor([1.0, -2.0, 3.0], requires_grad=True)
        for _ in range(3):
            (x * x).sum().backward()
        print(x.grad)
        x.grad.zero_()
        (x ** 3).sum().backward()
        print(x.grad)
        x.grad = None
        x.exp().sum().backward()
        print(x.grad)
    """,
    "mlp_training_loop": """
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(),
                                    torch.nn.Linear(8, 3))
        with torch.no_grad():
            for i, p in enumerate(model.parameters()):
                p.copy_(torch.linspace(-0.5, 0.5, p.numel()).reshape(p.shape) * (i + 1) / 3)
        opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        x = torch.linspace(-1, 1, 20).reshape(5, 4)
        target = torch.tensor([0, 2, 1, 2, 0])
        for step in range(4):
            opt.zero_grad()
            out = model(x)
            loss = F.cross_entropy(out, target)
            loss.backward()
            opt.step()
            print(step, round(loss.item(), 5))
        print(model[0].weight.grad.shape, model[2].bias.grad)
        print([p.requires_grad for p in model.parameters()], out.requires_grad)
        model.zero_grad()
        print(model[2].bias.grad, model[0].weight.grad.abs().sum())
    """,
    "regression_with_adam_and_mse": """
        w = torch.zeros(3, 1, requires_grad=True)
        b = torch.zeros(1, requires_grad=True)
        x = torch.linspace(0, 1, 30).reshape(10, 3)
        y = x @ torch.tensor([[1.0], [-2.0], [0.5]]) + 0.3
        opt = torch.optim.Adam([w, b], lr=0.1)
        for step in range(5):
            opt.zero_grad()
            loss = F.mse_loss(x @ w + b, y)
            loss.backward()
            opt.step()
        print(round(loss.item(), 4), w.detach(), b.detach())
    """,
    "no_grad_and_detach": """
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        with torch.no_grad():
            y = x * 2
        print(y, y.requires_grad, y.grad_fn)
        z = x.detach() * 3
        print(z.requires_grad, x.detach().requires_grad)
        w = (x * 2).detach()
        print(w.is_leaf, w.requires_grad)
        with torch.enable_grad():
            print((x + 1).requires_grad)
        torch.set_grad_enabled(False)
        print((x + 1).requires_grad)
        torch.set_grad_enabled(True)
        print(torch.tensor([1, 2]).float().requires_grad)
    """,
    "retain_grad_and_autograd_grad": """
        x = torch.tensor([0.5, 1.5, -1.0], requires_grad=True)
        h = x.sigmoid()
        h.retain_grad()
        y = (h * h).sum()
        y.backward(retain_graph=True)
        print(h.grad, x.grad, h.retains_grad)
        y.backward()
        print(x.grad)
        a = torch.tensor([1.0, 2.0], requires_grad=True)
        b = torch.tensor([3.0, 4.0], requires_grad=True)
        (ga, gb) = torch.autograd.grad((a * b).sum(), (a, b))
        print(ga, gb, a.grad)
        (g,) = torch.autograd.grad((a ** 2).sum(), a, create_graph=True)
        print(g)
        g.sum().backward()
        print(a.grad)
    """,
    "views_indexing_and_joins": """
        x = torch.arange(12.0).reshape(3, 4).requires_grad_()
        y = x.t()[1:, :2] * torch.tensor([1.0, 2.0])
        z = torch.cat([x[0], x[:, 1], y.reshape(-1)])
        s = torch.stack([x[1], x[2] * 2]).permute(1, 0).unsqueeze(0)
        (z.sum() + (s * s).sum() + x[..., 2].mean()).backward()
        print(y.grad_fn.name(), z.grad_fn.name(), s.grad_fn.name())
        print(x.grad)
    """,
    "softmax_losses": """
        logits = torch.linspace(-2, 2, 15).reshape(5, 3).requires_grad_()
        target = torch.tensor([0, 2, 1, -100, 2])
        weight = torch.tensor([1.0, 2.0, 0.5])
        F.cross_entropy(logits, target, weight=weight, ignore_index=-100).backward()
        print(logits.grad)
        logits.grad = None
        F.nll_loss(F.log_softmax(logits, 1), target, reduction="sum").backward()
        print(logits.grad)
        logits.grad = None
        (logits.softmax(0) * torch.arange(15.0).reshape(5, 3)).sum().backward()
        print(logits.grad)
    """,
    "reductions_and_matmul_ranks": """
        a = torch.linspace(-1, 1, 24).reshape(2, 3, 4).requires_grad_()
        b = torch.linspace(0, 2, 20).reshape(4, 5).requires_grad_()
        v = torch.tensor([1.0, -1.0, 2.0, 0.5], requires_grad=True)
        out = (a @ b).sum(1).mean() + (a @ v).amax() + (v @ b).max() + v.dot(v)
        out = out + a.sum((0, 2), keepdim=True).sum() + a.mean(-1).pow(2).sum()
        out.backward()
        print(a.grad, b.grad, v.grad)
    """,
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_program_prints_what_torch_prints(session, name):
    expected = run(real_torch, PROGRAMS[name])
    got = run(tensord, PROGRAMS[name])
    assert got == expected


# ---- each formula against torch's gradient ----

def _arrays(shapes, dtypes, seed, positive=False):
    rng = np.random.default_rng(seed)
    out = []
    for shape, dt in zip(shapes, dtypes):
        a = rng.uniform(0.5, 2.0, shape) if positive else rng.standard_normal(shape)
        out.append(a.astype(dt))
    return out


OPS = [
    ("add", lambda m, a, b: a + b, [(3, 4), (4,)]),
    ("add_alpha", lambda m, a, b: m.add(a, b, alpha=2.5), [(3, 4), (3, 1)]),
    ("sub", lambda m, a, b: a - b * 3, [(2, 3), (2, 3)]),
    ("rsub", lambda m, a, b: 2 - a + b, [(3,), (3,)]),
    ("mul_broadcast", lambda m, a, b: a * b, [(2, 1, 3), (4, 1)]),
    ("div", lambda m, a, b: a / b, [(3, 4), (4,)]),
    ("div_scalar", lambda m, a, b: a / 4 + 3 / b, [(5,), (5,)]),
    ("pow_tensor", lambda m, a, b: a ** b, [(3, 3), (3,)]),
    ("pow_scalar", lambda m, a, b: a ** 3 + b ** 0.5 + a.square(), [(4,), (4,)]),
    ("unary_chain", lambda m, a, b: (a.exp() + b.log() + a.sin() * b.cos() + a.tanh()
                                     + b.sqrt() + b.rsqrt() + a.abs() + b.reciprocal()),
     [(6,), (6,)]),
    ("activations", lambda m, a, b: (a.sigmoid() + a.relu() + m.nn.functional.silu(b)
                                     + m.nn.functional.leaky_relu(a, 0.2) + b.log1p()
                                     + a.expm1() + b.log2() + b.log10()), [(7,), (7,)]),
    ("clamp", lambda m, a, b: a.clamp(-0.5, 0.5) + b.clamp(min=1.0) + a.clamp(max=0.1),
     [(8,), (8,)]),
    ("where", lambda m, a, b: m.where(a > 0, a, b * 2), [(3, 4), (4,)]),
    ("sum_mean_dims", lambda m, a, b: a.sum(0) * b.mean(1, keepdim=True), [(3, 4), (5, 4)]),
    ("max_min", lambda m, a, b: a.max() * b.min() + a.amax(1).sum() + b.amin(0, True).sum(),
     [(3, 4), (3, 4)]),
    ("matmul_batched_broadcast", lambda m, a, b: a @ b, [(2, 1, 3, 4), (5, 4, 2)]),
    ("matmul_vec", lambda m, a, b: (a @ b) + (b @ a.t()).sum(), [(3, 4), (4,)]),
    ("mm_bmm", lambda m, a, b: m.bmm(a, b).sum(0) + m.mm(a[0], b[1]), [(2, 3, 3), (2, 3, 3)]),
    ("views", lambda m, a, b: (a.view(4, 3).t() + b.transpose(0, 1).reshape(3, 4)
                               .permute(1, 0).t()).flatten()[2:9], [(3, 4), (4, 3)]),
    ("expand_select_narrow", lambda m, a, b: a.expand(3, 4, 5).narrow(2, 1, 3).select(0, 1)
     + b.unsqueeze(1).squeeze(1)[:, None], [(4, 1), (4,)]),
    ("cat_stack", lambda m, a, b: m.cat([a, b, a * b], 1) + m.stack([a, b], 1).sum(1)
     .repeat(1, 3), [(2, 3), (2, 3)]),
    ("softmax_logsoftmax", lambda m, a, b: a.softmax(1) * b + a.log_softmax(0), [(3, 5), (3, 5)]),
    ("mse_loss", lambda m, a, b: m.nn.functional.mse_loss(a, b, reduction="none")
     + m.nn.functional.mse_loss(a, b), [(4, 3), (4, 3)]),
    ("linear", lambda m, a, b: m.nn.functional.linear(a, b, b[0]), [(5, 3), (3, 3)]),
    ("to_and_clone", lambda m, a, b: a.to(m.float32).clone().double() * b, [(4,), (4,)]),
    ("index_select_gather", lambda m, a, b: a.index_select(0, m.tensor([2, 0, 2]))
     + b.gather(1, m.tensor([[0, 1, 1], [2, 2, 0], [1, 1, 1]])), [(3, 3), (3, 3)]),
    ("diagonal", lambda m, a, b: a.diagonal() * b.diagonal(1), [(3, 3), (3, 4)]),
    ("addmm", lambda m, a, b: m.addmm(a[0], a, b, beta=0.5, alpha=2.0) + m.addmm(b[1], a, b),
     [(3, 4), (4, 4)]),
    ("embedding", lambda m, a, b: m.nn.functional.embedding(m.tensor([[0, 2], [2, 3]]), a)
     + m.nn.functional.embedding(m.tensor([1, 3]), b, padding_idx=3).sum(), [(4, 3), (4, 3)]),
    ("gelu", lambda m, a, b: m.nn.functional.gelu(a) + m.nn.functional.gelu(b, approximate="tanh"),
     [(9,), (9,)]),
    ("index_copy", lambda m, a, b: a.index_copy(0, m.tensor([2, 0]), b[:2]) * 2, [(3, 4), (3, 4)]),
    ("repeat", lambda m, a, b: a.repeat(2, 1, 3) + b.repeat(2, 2, 3), [(2, 3), (1, 3)]),
]


# Ops whose inputs torch requires to share a dtype: run with float64 only.
SAME_DTYPE = {"matmul_batched_broadcast", "matmul_vec", "mm_bmm", "mse_loss", "linear", "addmm",
              "index_copy", "embedding"}


@pytest.mark.parametrize("dtypes", [("float64", "float64"), ("float32", "float64")],
                         ids=["f64", "f32_f64"])
@pytest.mark.parametrize("name,fn,shapes", OPS, ids=[o[0] for o in OPS])
def test_gradients_match_torch(session, name, fn, shapes, dtypes):
    if name in SAME_DTYPE and dtypes[0] != dtypes[1]:
        dtypes = ("float32", "float32")
    positive = name in ("pow_tensor", "pow_scalar", "unary_chain", "activations", "div",
                        "div_scalar")
    arrays = _arrays(shapes, dtypes, seed=len(name), positive=positive)
    results = []
    for m in (real_torch, tensord):
        inputs = [m.tensor(a, requires_grad=True) for a in arrays]
        out = fn(m, *inputs)
        weights = m.tensor(np.linspace(-1, 1, out.numel()).reshape(tuple(out.shape)),
                           dtype=out.dtype)
        (out * weights).sum().backward()
        results.append((out.dtype, [tuple(t.grad.shape) for t in inputs],
                        [str(t.grad.dtype) for t in inputs],
                        [t.grad.detach().numpy() if m is real_torch else t.grad.numpy()
                         for t in inputs]))
    (tdt, tshapes, tdtypes, tgrads), (ddt, dshapes, ddtypes, dgrads) = results
    assert str(ddt) == str(tdt)
    assert dshapes == tshapes and ddtypes == tdtypes
    tol = 1e-5 if "float32" in dtypes else 1e-10
    for d, t in zip(dgrads, tgrads):
        np.testing.assert_allclose(d, t, rtol=tol, atol=tol)


GRAD_FN_NAMES = {
    "x + 1": "AddBackward0", "x - y": "SubBackward0", "2 - x": "RsubBackward1",
    "x * y": "MulBackward0", "x / 2": "DivBackward0", "x ** 2": "PowBackward0",
    "x ** y": "PowBackward1", "x.sum()": "SumBackward0", "x.sum(0)": "SumBackward1",
    "x.mean()": "MeanBackward0", "x.mean(1)": "MeanBackward1", "x.exp()": "ExpBackward0",
    "x.relu()": "ReluBackward0", "x.view(-1)": "ViewBackward0", "x.t()": "TBackward0",
    "x.transpose(0, 1)": "TransposeBackward0", "x.permute(1, 0)": "PermuteBackward0",
    "x.unsqueeze(0)": "UnsqueezeBackward0", "x[0]": "SelectBackward0", "x[:, 1:]":
    "SliceBackward0", "x @ y": "MmBackward0", "x[0] @ y[0]": "DotBackward0",
    "x @ y[0]": "MvBackward0", "x.softmax(1)": "SoftmaxBackward0",
    "x.log_softmax(1)": "LogSoftmaxBackward0", "x.clamp(min=0)": "ClampBackward1",
    "x.clamp(0, 1)": "ClampBackward1", "torch.cat([x, y])": "CatBackward0",
    "torch.stack([x, y])": "StackBackward0", "x.clone()": "CloneBackward0",
    "x.double()": "ToCopyBackward0", "x.expand(2, 2, 2)": "ExpandBackward0",
    "x.max()": "MaxBackward1", "x.amax(0)": "AmaxBackward0",
    "F.mse_loss(x, y)": "MseLossBackward0",
    "F.cross_entropy(x, torch.tensor([0, 1]))": "NllLossBackward0",
}


@pytest.mark.parametrize("expr", sorted(GRAD_FN_NAMES))
def test_grad_fn_names_are_torchs(session, expr):
    names = []
    for m in (real_torch, tensord):
        env = {"torch": m, "F": m.nn.functional,
               "x": m.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True),
               "y": m.tensor([[0.5, 1.5], [2.5, -1.0]], requires_grad=True)}
        names.append(eval(expr, env).grad_fn.name())  # noqa: S307 - the test's own table
    assert names[1] == names[0] == GRAD_FN_NAMES[expr]


# ---- misuse raises torch's errors ----

ERRORS = {
    "backward_twice": """
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        y = (x.exp() * x).sum()
        y.backward()
        y.backward()
    """,
    "non_scalar_without_gradient": """
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        (x * 2).backward()
    """,
    "nothing_requires_grad": """
        torch.tensor([1.0, 2.0]).sum().backward()
    """,
    "in_place_on_leaf": """
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        x.mul_(2)
    """,
    "integer_requires_grad": """
        torch.tensor([1, 2], requires_grad=True)
    """,
    "integer_requires_grad_": """
        torch.tensor([1, 2]).requires_grad_()
    """,
    "non_leaf_requires_grad_false": """
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        (x * 2).requires_grad_(False)
    """,
    "gradient_of_wrong_shape": """
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        (x * 2).backward(torch.ones(3))
    """,
    "unused_input": """
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        y = torch.tensor([1.0, 2.0], requires_grad=True)
        torch.autograd.grad((x * 2).sum(), [x, y])
    """,
    "saved_tensor_modified_in_place": """
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        w = torch.tensor([3.0, 4.0])
        y = (x * w).sum()
        w.add_(1)
        y.backward()
    """,
    "retain_grad_without_grad": """
        torch.tensor([1.0]).retain_grad()
    """,
}


def _outcome(module, code):
    try:
        run(module, code)
    except Exception as e:  # noqa: BLE001 - the class and words are what is compared
        return type(e).__name__, str(e)
    return None


# Errors whose words name torch's internals (versions, node numbering): the class and the
# opening words are compared.
PREFIX_ONLY = {"saved_tensor_modified_in_place": "one of the variables needed for gradient "
                                                 "computation has been modified by an inplace "
                                                 "operation"}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_misuse_raises_torchs_error(session, name):
    expected = _outcome(real_torch, ERRORS[name])
    got = _outcome(tensord, ERRORS[name])
    assert expected is not None and got is not None
    if name in PREFIX_ONLY:
        assert got[0] == expected[0]
        assert got[1].startswith(PREFIX_ONLY[name]) and expected[1].startswith(PREFIX_ONLY[name])
    else:
        assert got == expected


def test_a_leaf_is_unchanged_when_its_in_place_op_is_refused(session):
    x = tensord.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        x.add_(1)
    assert x.tolist() == [1.0, 2.0]
    with tensord.no_grad():
        x.add_(1)
    assert x.tolist() == [2.0, 3.0] and x.requires_grad and x.is_leaf


def test_non_leaf_grad_warns_as_torch(session):
    x = tensord.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert y.grad is None
    assert any("is not a leaf Tensor" in str(w.message) for w in caught)


def test_an_op_without_a_formula_fails_at_backward_naming_it(session):
    x = tensord.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    y = x.cumsum(0)
    assert y.requires_grad and y.grad_fn.name() == "CumsumBackward0"
    with pytest.raises(RuntimeError, match="the derivative for 'cumsum' is not implemented"):
        y.sum().backward()


def test_hooks_and_saved_graph_release(session):
    x = tensord.tensor([1.0, 2.0], requires_grad=True)
    seen = []
    handle = x.register_hook(lambda g: seen.append(g.tolist()) or g * 10)
    (x * 3).sum().backward()
    assert seen == [[3.0, 3.0]] and x.grad.tolist() == [30.0, 30.0]
    handle.remove()
    (x * 1).sum().backward()
    assert x.grad.tolist() == [31.0, 31.0]


def test_dropout_gradient_is_its_own_mask(session):
    """dropout's backward draws the op's own mask again: the gradient is 1 / (1 - p) where the
    output kept the input and 0 where it dropped it (random draws differ from torch's by
    design, so the rule is checked rather than torch's numbers)."""
    x = tensord.linspace(1, 2, 400, requires_grad=True)
    y = tensord.nn.functional.dropout(x, p=0.25)
    assert y.grad_fn.name() == "NativeDropoutBackward0"
    (y * 3).sum().backward()
    kept = (y != 0).numpy()
    assert 0 < kept.sum() < 400
    np.testing.assert_allclose(x.grad.numpy(), np.where(kept, 3 / 0.75, 0.0), rtol=1e-6)


def test_version_records_go_with_the_graph(session):
    """The per-storage write counts exist only while a node holds a tensor of that storage."""
    from tensord.autograd import graph
    before = len(graph._saved_storages)
    x = tensord.tensor([1.0, 2.0], requires_grad=True)
    w = tensord.tensor([3.0, 4.0])
    y = (x * w).sum()
    assert len(graph._saved_storages) == before + 2
    for _ in range(3):
        tensord.zeros(4).add_(1)  # writes to storages no node holds: nothing recorded
    assert len(graph._saved_storages) == before + 2
    y.backward()  # frees the saved tensors
    assert len(graph._saved_storages) == before
    z = (x * w).sum()
    del z
    tensord.synchronize()  # queued ops hold their outputs until they are sent
    assert len(graph._saved_storages) == before
