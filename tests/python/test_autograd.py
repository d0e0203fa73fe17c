"""Autograd against torch 1.13: programs run with `torch` bound to real torch and to tensord
print the same text (values, grad_fn names, requires_grad flags), gradients of every op with a
formula match torch's over broadcasting and mixed dtypes, and misuse raises torch's errors.
"""
import contextlib
import io
import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest
import torch as real_torch
import torch.utils.checkpoint  # noqa: F401 - torch.utils.checkpoint for the programs

import tensord

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

def run(module, code):
    out = []
    env = {"torch": module, "F": module.nn.functional,
           "print": lambda *a, **k: out.append(" ".join(str(x) for x in a))}
    exec(textwrap.dedent(code), env)
    return "\n".join(out)


PROGRAMS = {
    "forward_ad_dual_tensors": """
        # torch.autograd.forward_ad: tangents of what duals make (tensord computes them by the
        # double-vjp trick), reprs with tangent=, the level's rules and errors
        fwAD = torch.autograd.forward_ad
        x, t = torch.tensor([1.0, 2.0]), torch.tensor([1.0, 0.0])
        try:
            fwAD.make_dual(x, t)
        except RuntimeError as e:
            print("RuntimeError", e)
        with fwAD.dual_level() as level:
            print(level)
            d = fwAD.make_dual(x, t)
            print(repr(d), d * 2, torch.nn.functional.softplus(d))
            for bad in (torch.ones(3), torch.ones(2, dtype=torch.int64)):
                try:
                    fwAD.make_dual(x, bad)
                except (RuntimeError, ValueError) as e:
                    print(type(e).__name__, e)
            y = (d * d).sin().sum()
            p = fwAD.unpack_dual(y)
            print(p, type(p).__name__, p.primal.requires_grad)
            print(fwAD.unpack_dual(x), fwAD.unpack_dual(d).tangent is t)
            w = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
            o = fwAD.unpack_dual(d @ w)
            print(o.tangent.detach(), o.tangent.requires_grad, o.primal.requires_grad)
            d2 = fwAD.make_dual(torch.tensor([0.5, 0.1]), torch.tensor([0.0, 1.0]))
            print(fwAD.unpack_dual((d * d2).exp()).tangent, fwAD.unpack_dual(x * 3).tangent)
            lin = torch.nn.Linear(2, 3)
            with torch.no_grad():
                lin.weight.copy_(torch.arange(6.0).view(3, 2))
                lin.bias.fill_(0.1)
            print(fwAD.unpack_dual(torch.tanh(lin(d))).tangent.detach())
            print(fwAD.unpack_dual(torch.linalg.norm(d)).tangent,
                  fwAD.unpack_dual(d.softmax(0)).tangent, fwAD.unpack_dual(d[1]).tangent)
            try:
                with fwAD.dual_level():
                    pass
            except RuntimeError as e:
                print("RuntimeError", e)
        print(fwAD.unpack_dual(y).tangent, fwAD.unpack_dual(d).tangent)
        try:
            fwAD.exit_dual_level(level=3)
        except RuntimeError as e:
            print("RuntimeError", e)
    """,
    "softplus_gradient_in_float32": """
        # torch's softplus_backward, z / (z + 1) with z = exp(beta x): its float32 denormals far
        # below zero, g past the threshold, and a second derivative there free of NaN
        x = torch.tensor([-100.0, -90.0, -3.0, 0.0, 5.0, 9.9, 10.5, 30.0], requires_grad=True)
        y = torch.nn.functional.softplus(x, beta=2.0, threshold=20.0)
        g, = torch.autograd.grad(y.sum(), x, create_graph=True)
        print(g.detach())
        g.sum().backward()
        print(x.grad)
        x.grad = None
        y.sum().backward()
        print(x.grad)
    """,
    "grad_fn_classes_and_custom_function_ctx": """
        # grad_fn objects are of a class per formula (named as the node); a custom Function's
        # grad_fn is <Function>Backward and gives the ctx's attributes (torch's is the ctx).
        class Scale(torch.autograd.Function):
            @staticmethod
            def forward(ctx, t, k):
                ctx.k = k
                ctx.save_for_backward(t)
                return t * k
            @staticmethod
            def backward(ctx, g):
                return g * ctx.k, None
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        y = Scale.apply(x, 3.0)
        print(type(y.grad_fn).__name__, y.grad_fn.name(), y.grad_fn.k, y.grad_fn.saved_tensors)
        print(type(y.grad_fn).__qualname__, isinstance(y.grad_fn, type(y.grad_fn)))
        z = (y * y).sum()
        print(type(z.grad_fn), type(z.grad_fn.next_functions[0][0]).__name__)
        c = x.clone()
        c[0] = 5
        print(type(c.grad_fn), c.grad_fn.name())
        try:
            y.grad_fn.missing
        except AttributeError:
            print("AttributeError")
        z.backward()
        print(x.grad)
    """,
    "activation_gradients_at_nan_and_kinks": """
        # torch's backward kernels at a NaN and at the kinks: threshold_backward passes g where
        # the result is NaN (relu), hardtanh's stops at its bounds, prelu's takes weight * g at
        # 0, maximum's and max()'s send g to a NaN. 64 elements, so that every one is in
        # torch's vectorised loop (whose NaN rule tensord follows where its scalar tail differs).
        x = torch.cat([torch.tensor([float('nan'), -1.0, -0.0, 0.0, 0.5, 1.0, 6.0, 7.0]),
                       torch.linspace(-3, 3, 56)]).requires_grad_()
        g = torch.arange(1.0, 65.0)
        for name, f in (("relu", torch.relu), ("relu_", lambda t: t.clone().relu_()),
                        ("F.relu inplace", lambda t: F.relu(t * 1, inplace=True)),
                        ("relu6", F.relu6), ("relu6 inplace", lambda t: F.relu6(t * 1, True)),
                        ("hardtanh", F.hardtanh), ("hardtanh_", lambda t: F.hardtanh_(t * 1)),
                        ("leaky_relu", lambda t: F.leaky_relu(t, 0.1)), ("elu", F.elu),
                        ("elu_", lambda t: F.elu_(t * 1)), ("selu", F.selu),
                        ("celu", lambda t: F.celu(t, 0.5)), ("celu_", lambda t: F.celu_(t * 1)),
                        ("threshold", lambda t: F.threshold(t, 0.5, -2.0)),
                        ("threshold_", lambda t: F.threshold_(t * 1, 0.5, 2.0)),
                        ("prelu", lambda t: F.prelu(t, torch.tensor([0.25]))),
                        ("clamp", lambda t: t.clamp(0, 1)), ("hardsigmoid", F.hardsigmoid),
                        ("hardswish", F.hardswish), ("abs", torch.abs),
                        ("maximum", lambda t: torch.maximum(t, torch.zeros(64))),
                        ("minimum", lambda t: torch.minimum(torch.zeros(64), t)),
                        ("max", lambda t: t.max() * g.sum()), ("min", lambda t: t.min() * 2),
                        ("median", lambda t: t.median() * 3), ("amax", lambda t: t.amax() * 4)):
            x.grad = None
            y = f(x)
            y.backward(g if y.dim() else None)
            print(name, y.grad_fn.name(), x.grad[:10], f"{float(x.grad[10:].sum()):.2f}")
        print(F.threshold(x, 0.5, 2.0)[:8], F.prelu(x, torch.tensor([0.25]))[:8])
    """,
    "gradients_at_edges": """
        # torch's backward formulas where they branch: zero exponents, one-element var/std
        # (torch 1.13 fails there), the loss kernels' targets (computed with the operands
        # swapped), unclamped logs, kl_div's composition (NaN at a target of 0), a singular
        # determinant (0), and the node names of the tensor-tensor overloads and compositions.
        # (+ 0.0 folds torch's signed zeros of the singular determinant's gradient)
        def grads(name, f, *values):
            xs = [torch.tensor(v, requires_grad=True) for v in values]
            try:
                y = f(*xs)
                y.sum().backward() if y.dim() else y.backward()
                print(name, y.grad_fn.name(), *[x.grad if x.grad is None else x.grad + 0.0
                                                 for x in xs])
            except Exception as e:
                print(name, type(e).__name__)
        nan = float("nan")
        grads("pow tensor", lambda x, y: x ** y, [0.0, 2.0, 2.0, -1.0], [0.0, 0.0, 1.5, 3.0])
        grads("pow number", lambda x: x ** 0, [0.0, 2.0])
        grads("std of one", lambda x: x.std(), [2.0])
        grads("var of one", lambda x: x.var(), [2.0])
        grads("var of a 0-d", lambda x: x.var(), 2.0)
        grads("std of a 0-d", lambda x: x.std(), 2.0)
        grads("var of one along 0", lambda x: x.var(0), [2.0])
        grads("std correction 2", lambda x: x.std(0, correction=2), [2.0, 3.0])
        grads("var correction 2", lambda x: x.var(0, correction=2), [2.0, 3.0])
        grads("mse", lambda x, y: F.mse_loss(x, y), [1.0, 2.0], [1.0, 3.0])
        grads("l1", lambda x, y: F.l1_loss(x, y), [1.0, 2.0], [1.0, 3.0])
        grads("smooth_l1 beta 0", lambda x, y: F.smooth_l1_loss(x, y, beta=0.0),
              [1.0, 2.0, nan], [1.0, 3.0, 0.0])
        grads("smooth_l1", lambda x, y: F.smooth_l1_loss(x, y), [1.0, 2.0, 5.0], [1.0, 3.0, 4.5])
        grads("huber", lambda x, y: F.huber_loss(x, y, delta=1.0), [1.0, 2.0, nan, 5.0],
              [2.0, 2.0, 1.0, 1.0])
        grads("bce", lambda x, y: F.binary_cross_entropy(x, y), [0.0, 1.0, 0.5], [1.0, 0.0, 0.2])
        for r in ("none", "sum", "mean", "batchmean"):
            grads("kl_div " + r, lambda x, y: F.kl_div(x, y, reduction=r), [[0.0, -1.0]],
                  [[0.0, 0.5]])
            grads("kl_div log_target " + r, lambda x, y: F.kl_div(
                x, y, reduction=r, log_target=True), [[0.0, -1.0]], [[0.0, 0.5]])
        grads("det singular", torch.linalg.det, [[1.0, 2.0], [2.0, 4.0]])
        grads("det batch", torch.det, [[[2.0, 1.0], [1.0, 3.0]], [[1.0, 1.0], [1.0, 1.0]]])
        grads("remainder", torch.remainder, [5.0], [3.0])
        grads("remainder number", lambda x: x % 2, [5.0])
        grads("fmod", torch.fmod, [5.0], [3.0])
        grads("fmod number", lambda x: torch.fmod(x, 2), [5.0])
        grads("dist", torch.dist, [1.0, 2.0], [1.0, 2.5])
        grads("vector_norm", lambda x: torch.linalg.vector_norm(x, 3, 0, True), [1.0, -2.0])
        grads("pdist", F.pdist, [[1.0, 2.0], [1.0, 2.0], [0.0, 1.0]])
        grads("rrelu", F.rrelu, [0.0, -1.0])
        grads("where with a number other", lambda x: torch.where(x > 0, x, 0.0), [nan, 1.0, -2.0])
        grads("where with a number self", lambda x: torch.where(x > 0, 1.0, x), [nan, 1.0, -2.0])
        grads("norm p=0", lambda x: x.norm(p=0) * 1, [0.0, 2.0])
        grads("floor division", lambda x, y: torch.div(x, y, rounding_mode="floor"), [5.0], [2.0])
        grads("trunc division", lambda x: torch.div(x, 2, rounding_mode="trunc"), [5.0])
        grads("number to a tensor power", lambda x: torch.pow(2.0, x), [3.0, 0.0, -1.0])
        grads("zero to a tensor power", lambda x: torch.pow(0.0, x), [3.0, 0.0, -1.0])
        grads("negative number to a power", lambda x: torch.pow(-2.0, x), [2.0])
        grads("cross_entropy, every target ignored", lambda x: F.cross_entropy(
            x, torch.tensor([-100, -100])), [[1.0, 2.0], [0.5, 0.1]])
        grads("cross_entropy, one ignored", lambda x: F.cross_entropy(
            x, torch.tensor([-100, 1])), [[1.0, 2.0], [0.5, 0.1]])
        grads("nll_loss, every target ignored", lambda x: F.nll_loss(
            x, torch.tensor([1]), ignore_index=1), [[-1.0, -2.0]])
        grads("xlogy", torch.xlogy, [0.0, 2.0], [3.0, 4.0])
        grads("xlogy number self", lambda x: torch.xlogy(2.0, x), [3.0])
        grads("xlogy number other", lambda x: torch.xlogy(x, 2.0), [0.0, 3.0])
        grads("xlog1py number self", lambda x: torch.special.xlog1py(2.0, x), [3.0])
        grads("xlog1py number other", lambda x: torch.special.xlog1py(x, 2.0), [3.0])
        grads("copysign number", lambda x: torch.copysign(x, -1.0), [3.0, 0.0])
        grads("remainder of a number", lambda x: torch.remainder(5.0, x), [3.0])
        grads("leaky_relu_", lambda x: F.leaky_relu_(x * 1, 0.1), [-4.0, 0.5, 0.0])
        grads("leaky_relu in place", lambda x: F.leaky_relu(x * 1, 0.2, True), [-4.0, 0.5])
        grads("leaky_relu_, negative slope", lambda x: F.leaky_relu_(x * 1, -0.5), [-4.0])
        grads("copy_", lambda x, y: (x * 1).copy_(y), [1.0, 2.0], [3.0])
    """,
    "inference_tensors": """
        # torch's inference tensors: made in inference mode, views inheriting from their base,
        # no in-place update outside inference mode, never saved for backward
        a = torch.ones(2)
        with torch.inference_mode():
            b = a * 2
            c, d, e, f = a.view(2), torch.zeros(2), torch.tensor([1.0, 2.0]), b.view(2, 1)
            b.add_(1)
            with torch.inference_mode(False):
                h = b * 1
        print(b.is_inference(), c.is_inference(), d.is_inference(), e.is_inference(),
              f.is_inference(), a.is_inference(), h.is_inference(), torch.is_inference(b))
        print((b * 2).is_inference(), b.view(1, 2).is_inference(), b[1:].is_inference(),
              b.clone().is_inference(), b)
        for name, fn in (("add_", lambda: b.add_(1)), ("setitem", lambda: b.__setitem__(0, 5.0)),
                         ("view's mul_", lambda: b.view(2).mul_(2)),
                         ("saved", lambda: b * torch.ones(2, requires_grad=True)),
                         ("not saved", lambda: torch.ones(2, requires_grad=True) + b),
                         ("into a normal tensor", lambda: a.clone().add_(b))):
            try:  # (torch's failed copy writes b first: only shapes are printed)
                r = fn()
                print(name, tuple(r.shape), r.requires_grad, r.is_inference())
            except RuntimeError as ex:
                print(name, ex)
        no_grad = torch.no_grad()
        no_grad.__exit__(None, None, None)  # torch's: grad mode off, as its prev is False
        print(torch.is_grad_enabled())
        torch.set_grad_enabled(True)
    """,
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
        class ScaleAndArgmax(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, w, factor):
                ctx.factor = factor
                ctx.save_for_backward(w)
                idx = x.argmax(0)
                ctx.mark_non_differentiable(idx)
                return x * w * factor, idx

            @staticmethod
            def backward(ctx, grad, grad_idx):
                w, = ctx.saved_tensors
                print("needs", ctx.needs_input_grad)
                gx = grad * w * ctx.factor if ctx.needs_input_grad[0] else None
                return gx, None, None

        x = torch.tensor([1.0, 3.0, 2.0], requires_grad=True)
        w = torch.tensor([0.5, -1.0, 2.0])
        y, idx = ScaleAndArgmax.apply(x, w, 3.0)
        print(y.grad_fn.name(), y.requires_grad, idx, idx.requires_grad)
        y.sum().backward()
        print(x.grad)
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
    "in_place_on_views": """
        w = torch.tensor([1.0, -2.0, 3.0, 0.5], requires_grad=True)
        x = torch.zeros(3, 4)
        v = x[0]
        print(v.grad_fn, v.requires_grad)
        x[1] = w * 2
        print(x.grad_fn.name(), [f[0] and f[0].name() for f in x.grad_fn.next_functions], x.is_leaf)
        print(v.grad_fn.name(), v.requires_grad)
        (x * torch.arange(12.).reshape(3, 4)).sum().backward()
        print(w.grad)
        x2 = torch.zeros(4)
        v2 = x2[:2]
        v2.requires_grad_()
        x2[2:].copy_(w[:2])
        print(x2.grad_fn.name(), v2.grad_fn.name(), v2.is_leaf, v2.requires_grad)
        a = torch.tensor([[1.0, 2.0, -3.0], [0.5, -1.0, 4.0]], requires_grad=True)
        h = a * 1
        r = h[0]
        c = h.t()[1:]
        e = h[1].expand(2, 3)
        print(r.grad_fn.name(), c.grad_fn.name())
        h.mul_(3)
        print(r.grad_fn.name(), r.grad_fn.next_functions[0][0].name(), c.grad_fn.name(), e.grad_fn.name())
        ((r * torch.tensor([1.0, 2.0, 3.0])).sum() + c.sum() + e.pow(2).sum()).backward()
        print(a.grad)
        a.grad = None
        h = a * 2
        hv = h.view(3, 2)
        hv.relu_()
        print(hv.grad_fn.name(), h.grad_fn.name(), h)
        h.pow(2).sum().backward()
        print(a.grad)
        with torch.no_grad():
            a[0] = 5
        print(a, a.is_leaf)
        out = torch.zeros(3, 2)
        p = torch.tensor([1.0, 2.0], requires_grad=True)
        for t in range(3):
            out[t] = (out[t - 1] + 1) * p
        print(out)
        out.sum().backward()
        print(p.grad)
        a.grad = None
        h = a * 1
        vv = h[1][1:]
        q = torch.tensor([1.0, -1.0], requires_grad=True)
        vv.add_(q * q)
        vv.mul_(q)
        print(vv.grad_fn.name(), h.grad_fn.name(), h.grad_fn.next_functions[0][0].name())
        h.pow(2).sum().backward()
        print(a.grad, q.grad)
        a.grad = None
        m = a * 1
        m[:, 1:].clamp_(min=0).mul_(2)
        m[m > 4] = 0
        m.sum().backward()
        print(m.detach(), a.grad)
        x = torch.tensor([0.5, 1.5, -2.0], requires_grad=True)
        y = x * 1
        y[0] = x[0] * x[1]
        y[2:].exp_()
        g, = torch.autograd.grad(y.pow(2).sum(), x, create_graph=True)
        print(g)
        g.sum().backward()
        print(x.grad)
    """,
    "views_after_detach_and_in_place_view_ops": """
        x = torch.arange(4.0, requires_grad=True)
        y = torch.tensor([2.0, 3.0], requires_grad=True)
        b = x * 2
        v = b[1:3]
        b.detach_()
        (v * 1).sum().backward()
        print(x.grad, b.requires_grad, v.grad_fn.name())
        x.grad = None
        b = x * 1
        v = b[1:3]
        v.mul_(y)
        b.detach_()
        (v * 1).sum().backward()
        print(x.grad, y.grad)
        x6 = torch.arange(6.0, requires_grad=True)
        b = (x6 * 1).view(2, 3)
        with torch.no_grad():
            b.t_()
        print(b.shape, b.requires_grad)
        (b * torch.arange(6.0).view(3, 2)).sum().backward()
        print(x6.grad)
        x.grad = None
        b = x * 1
        v = b[1:3]
        v.retain_grad()
        b.mul_(2)
        (v * torch.tensor([3.0, 5.0])).sum().backward()
        print(v.grad, v.retains_grad, x.grad)
        b = x * 1
        b.retain_grad()
        b.mul_(2)
        (b * torch.arange(4.0)).sum().backward()
        print(b.grad, b.retains_grad)
        c = torch.tensor([1.5, 2.0, 3.0], requires_grad=True)
        (2 * c + 2.5 * c).sum().backward()
        print(c.grad)
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
    "cnn_training_loop": """
        class Net(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.features = torch.nn.Sequential(
                    torch.nn.Conv2d(2, 4, 3, padding=1), torch.nn.BatchNorm2d(4),
                    torch.nn.ReLU(inplace=True), torch.nn.MaxPool2d(2),
                    torch.nn.Conv2d(4, 6, 3, stride=2, padding=1, groups=2),
                    torch.nn.GroupNorm(2, 6), torch.nn.SiLU(), torch.nn.AvgPool2d(2, ceil_mode=True))
                self.head = torch.nn.Sequential(torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(),
                                                torch.nn.LayerNorm(6), torch.nn.Linear(6, 3))

            def forward(self, x):
                h = self.features(x)
                h = h + h.mean((2, 3), keepdim=True)  # a residual-style add
                h += 0.5
                return self.head(h)

        model = Net()
        with torch.no_grad():
            for i, p in enumerate(model.parameters()):
                p.copy_(torch.linspace(-0.7, 0.6, p.numel()).reshape(p.shape).cos() * (i + 2) / 4)
        opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=1e-3)
        x = torch.linspace(-2, 2, 5 * 2 * 9 * 9).reshape(5, 2, 9, 9).sin()
        target = torch.tensor([0, 2, 1, 2, 0])
        for step in range(4):
            opt.zero_grad()
            out = model(x)
            loss = F.cross_entropy(out, target)
            loss.backward()
            opt.step()
            print(step, round(loss.item(), 4), out.grad_fn.name())
        print(model.features[0].weight.grad.sum(dim=(1, 2, 3)))
        print(model.features[1].running_mean, model.features[1].bias.grad)
        model.eval()
        with torch.no_grad():
            print(model(x).argmax(1))
    """,
    "leaf_grad_layout": """
        # a leaf's first gradient is laid out as the leaf (AccumulateGrad's layout contract):
        # a weight's comes out of its matmul transposed
        lin = torch.nn.Linear(4, 6)
        lin(torch.ones(5, 4)).sum().backward()
        print(lin.weight.grad.stride(), lin.weight.grad.is_contiguous(), lin.weight.grad.shape)
        print(lin.weight.grad.view(-1).shape)
        w = torch.arange(12.0).reshape(3, 4).t().detach().requires_grad_()  # dense, transposed
        (w @ torch.ones(3, 2)).sum().backward()
        print(w.grad.stride(), w.grad)
        (w * 2).sum().backward()  # accumulated in place: the layout stays
        print(w.grad.stride(), w.grad)
        v = torch.ones(3, 8)[:, ::2].detach().requires_grad_()  # not dense: contiguous
        (v.t() @ torch.ones(3, 2)).sum().backward()
        print(v.grad.stride(), v.grad.is_contiguous())
    """,
    "non_leaf_hooks_and_retain_grad": """
        x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x * 2
        seen = []
        handle = y.register_hook(lambda g: seen.append(g.clone()) or g * 3)
        (y * y).sum().backward()
        print(seen, x.grad)
        handle.remove()
        x.grad = None
        y2 = x * 2
        y2.retain_grad()
        y2.register_hook(lambda g: g + 1)  # after retain_grad: .grad keeps the gradient before it
        loss = (y2 ** 2).sum()
        loss.retain_grad()
        loss.backward()
        print(y2.grad, x.grad, loss.grad)
        print(x.detach().numpy())
    """,
    "functional_api_and_gradcheck": """
        F_ = torch.autograd.functional

        def f(x, y):
            return (x * y.exp()).sum(0) + x.sin()[0]

        x = torch.tensor([[1.0, 2.0], [0.5, -1.0]], dtype=torch.float64)
        y = torch.tensor([[0.3, -0.2], [0.1, 0.4]], dtype=torch.float64)
        v = torch.tensor([1.0, 2.0], dtype=torch.float64)
        print(F_.jacobian(f, (x, y)))
        print(F_.jacobian(lambda a: a ** 3, x[0]))
        print(F_.hessian(lambda a: (a ** 3).sum() + (a[0] * a[1]), x[0]))
        print(F_.vjp(lambda a: a.tanh() * 2, x, torch.ones(2, 2, dtype=torch.float64)))
        print(F_.jvp(lambda a: a.tanh() * 2, x, torch.ones(2, 2, dtype=torch.float64)))
        print(F_.vhp(lambda a: (a ** 3).sum(), x[0], v), F_.hvp(lambda a: (a ** 3).sum(), x[0], v))
        a = x.clone().requires_grad_()
        print(torch.autograd.gradcheck(lambda t: (t.sigmoid() * t).sum(1), (a,)))
        print(torch.autograd.gradgradcheck(lambda t: (t.sigmoid() * t), (a,)))

        class Wrong(torch.autograd.Function):
            @staticmethod
            def forward(ctx, t):
                ctx.save_for_backward(t)
                return t * t

            @staticmethod
            def backward(ctx, g):
                t, = ctx.saved_tensors
                return g * t  # should be 2 t

        print(torch.autograd.gradcheck(Wrong.apply, (a,), raise_exception=False))
        try:
            torch.autograd.gradcheck(Wrong.apply, (a,))
        except RuntimeError as e:
            print(type(e).__name__, str(e).splitlines()[0])
        w = torch.tensor([1.0, 2.0], requires_grad=True)
        u = torch.tensor([3.0, 4.0], requires_grad=True)
        h = w * 2
        (h * u).sum().backward(inputs=[u, h])
        print(w.grad, u.grad, h.grad)
    """,
    "linalg_gradcheck_and_constant_outputs": """
        a = torch.tensor([[2.0, 0.5, 0.1], [0.3, 1.5, -0.2], [0.0, 0.4, 1.0]],
                         dtype=torch.float64, requires_grad=True)

        def spd(t):
            return t @ t.mT + 3 * torch.eye(3, dtype=torch.float64)

        def eigh_terms(t):
            L, V = torch.linalg.eigh(spd(t))
            return torch.cat([L, (V * V * L).flatten()])

        print(torch.autograd.gradcheck(lambda t: torch.linalg.cholesky(spd(t)), (a,)))
        print(torch.autograd.gradcheck(eigh_terms, (a,)))
        print(torch.autograd.gradcheck(lambda t: torch.linalg.svdvals(t), (a,)))
        print(torch.autograd.gradgradcheck(lambda t: torch.linalg.cholesky(spd(t)), (a,)))
        print(torch.autograd.gradgradcheck(lambda t: torch.linalg.eigvalsh(spd(t)), (a,)))
        P, L, U = torch.linalg.lu(a)
        print(P.requires_grad, P.grad_fn, L.grad_fn.name(), U.requires_grad)
        P, L, U = torch.lu_unpack(*torch.linalg.lu_factor(a))
        print(P.requires_grad, L.grad_fn.name())
        Q, R = torch.linalg.qr(a, mode='r')
        print(Q.shape, Q.requires_grad, R.grad_fn.name())
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
    "embedding_bag_max_after_the_weight_changes": """
        w = torch.tensor([[1.0, -2.0], [3.0, 0.5], [-1.0, 4.0]], requires_grad=True)
        out = F.embedding_bag(torch.tensor([0, 1, 2, 1]), w, torch.tensor([0, 2]), mode="max")
        with torch.no_grad():
            w.neg_()
        (out * torch.tensor([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
        print(out, w.grad)
        p = torch.tensor([0.5, 2.0, -1.0, 1.0], requires_grad=True)
        out = F.embedding_bag(torch.tensor([0, 1, 2, 1]), w, torch.tensor([0, 2]), mode="sum",
                              per_sample_weights=p)
        with torch.no_grad():
            w.neg_()
        try:
            out.sum().backward()
        except RuntimeError as e:
            print(str(e)[:60])
    """,
    "random_draws_and_ops_without_derivatives": """
        # zero gradients through random draws and fills (torch does not reparameterise them);
        # ops torch 1.13 does not differentiate raise where and as torch's do
        x = torch.tensor([0.5, 1.5, 2.0], dtype=torch.float64, requires_grad=True)
        y = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64, requires_grad=True)
        outs = [torch.normal(x, y), torch.normal(x, 2.0), torch.bernoulli(x / 3),
                (x * 1).exponential_(), (x * 2).bernoulli_(y / 4), (x * 3).random_(0, 4)]
        sum(o.sum() for o in outs).backward()
        print(x.grad, y.grad, [o.requires_grad for o in outs])
        print(torch.bernoulli(x / 3, 0.5).requires_grad, torch.histc(x, 3).requires_grad,
              torch.aminmax(x.detach())[0].requires_grad)
        for call in ("torch.nextafter(x, y)", "(x * 1).floor_divide_(y)", "(x * 1).heaviside_(y)",
                     "torch.geqrf(x.view(3, 1))[0]", "torch.ormqr(x.view(3, 1), y[:1], y.view(3, 1))",
                     "torch.aminmax(x)[1]", "torch.floor_divide(x, y)", "torch.heaviside(x, y)",
                     "torch.histogram(x, 3)[1]", "torch.binomial(x.detach() * 4, x / 3)"):
            out = eval(call)
            try:
                out.sum().backward()
            except RuntimeError as e:
                print(out.grad_fn.name(), type(e).__name__, e)
        with torch.no_grad():
            print(torch.aminmax(x)[0].requires_grad, torch.floor_divide(x, y).requires_grad)
        x.requires_grad_(False)
        print(torch.heaviside(x, y.detach()).requires_grad)
    """,
    "module_backward_hooks": """
        import warnings
        nn = torch.nn
        lin = nn.Linear(3, 2)
        with torch.no_grad():
            lin.weight.copy_(torch.tensor([[0.1, 0.2, 0.3], [-0.2, 0.1, 0.4]]))
            lin.bias.fill_(0.05)
        x = torch.tensor([[1.0, 2.0, 3.0], [0.5, -1.0, 2.0]], requires_grad=True)
        seen = []
        h = lin.register_full_backward_hook(lambda m, gi, go: seen.append((type(m).__name__, gi, go)))
        y = lin(x)
        print(y.grad_fn.name())
        y.sum().backward()
        print(seen, x.grad)
        h.remove()
        x.grad = None
        h = lin.register_full_backward_hook(lambda m, gi, go: (gi[0] * 10,))
        lin(x).pow(2).sum().backward()
        print(x.grad)
        h.remove()
        try:
            lin.register_backward_hook(lambda *a: None)
        except RuntimeError as e:
            print(e)
        old = nn.Linear(3, 2)
        with torch.no_grad():
            old.weight.fill_(0.2)
            old.bias.fill_(0.1)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            old.register_backward_hook(lambda m, gi, go: print(
                "old", [None if g is None else tuple(g.shape) for g in gi], [tuple(g.shape) for g in go]))
            old(x).sum().backward()
            print([str(i.message)[:60] for i in w])
        seq = nn.Sequential(nn.Linear(3, 3), nn.ReLU(), nn.Linear(3, 1))
        with torch.no_grad():
            for p in seq.parameters():
                p.fill_(0.1)
        order = []
        for i, m in enumerate(seq):
            m.register_full_backward_hook(lambda m, gi, go, i=i: order.append((i, round(go[0].sum().item(), 5))))
        seq(torch.ones(2, 3)).sum().backward()
        print(order)
        everywhere = []
        gh = torch.nn.modules.module.register_module_full_backward_hook(
            lambda m, gi, go: everywhere.append(type(m).__name__))
        seq(x).sum().backward()
        gh.remove()
        try:
            torch.nn.modules.module.register_module_backward_hook(lambda *a: None).remove()
            torch.nn.modules.module.register_module_full_backward_hook(lambda *a: None)
        except RuntimeError as e:
            print(e)
        torch.nn.modules.module._global_is_full_backward_hook = None  # (process-wide state)
        print(everywhere)
        free = nn.Linear(3, 2)
        free.register_full_backward_hook(lambda m, gi, go: print("no input grad", gi, tuple(go[0].shape)))
        free(torch.ones(2, 3)).sum().backward()
        two = torch.full((2, 3), 2.0)
        z = x * two
        calls = []
        z.grad_fn.register_hook(lambda gi, go: calls.append(len(gi)) or (gi[0] * 0,) + gi[1:])
        x.grad = None
        z.sum().backward()
        print(calls, x.grad)
        z = x * two
        z.grad_fn.register_hook(lambda gi, go: (gi[0],))
        try:
            z.sum().backward()
        except RuntimeError as e:
            print(str(e)[:40], str(e)[-40:])
    """,
    "checkpoint": """
        import warnings
        nn = torch.nn
        checkpoint = torch.utils.checkpoint.checkpoint
        lin = nn.Linear(3, 3)
        with torch.no_grad():
            lin.weight.copy_(torch.tensor([[0.1, 0.2, 0.3], [-0.2, 0.1, 0.4], [0.3, -0.1, 0.2]]))
            lin.bias.fill_(0.05)
        x = torch.tensor([[1.0, 2.0, 3.0], [0.5, -1.0, 2.0]], requires_grad=True)
        y = checkpoint(lambda t: torch.tanh(lin(t)) * 2, x)
        print(y.grad_fn.name(), y.requires_grad)
        y.pow(2).sum().backward()
        print(x.grad, lin.weight.grad)
        x.grad = None
        lin.zero_grad()
        torch.tanh(lin(x)).mul(2).pow(2).sum().backward()
        print(x.grad, lin.weight.grad)
        lin.zero_grad()
        checkpoint(lambda t, s: lin(t) * s, x, 3.0, use_reentrant=False).sum().backward()
        print(lin.weight.grad)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            print(checkpoint(lambda t: lin(t), x.detach()).requires_grad,
                  [str(i.message) for i in w])
        try:
            checkpoint(lambda t: t, x, foo=1)
        except ValueError as e:
            print(e)
        seq = nn.Sequential(*[nn.Linear(3, 3) for _ in range(4)])
        with torch.no_grad():
            for i, p in enumerate(seq.parameters()):
                p.fill_(0.1 * (i % 3 + 1))
        torch.utils.checkpoint.checkpoint_sequential(seq, 2, x).sum().backward()
        print(seq[0].weight.grad)
        xx = torch.tensor([1.0, 2.0], requires_grad=True)
        try:
            torch.autograd.grad(checkpoint(lambda t: t * t, xx).sum(), xx)
        except RuntimeError as e:
            print(e)
        # the second run draws the dropout masks of the first (the random state restored)
        d = torch.linspace(1, 2, 64, requires_grad=True)
        out = checkpoint(lambda t: F.dropout(t, 0.5) * 3, d)
        out.sum().backward()
        print(bool(((d.grad == 0) == (out == 0)).all()), bool((d.grad[out != 0] == 6).all()))
    """,
    "saved_tensors_hooks": """
        nn = torch.nn
        checkpoint = torch.utils.checkpoint.checkpoint
        packed = []

        def pack(t):
            packed.append(tuple(t.shape))
            return t * 1

        x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            y = (x * x).exp().sum()
        y.backward()
        print(packed, x.grad)
        w = torch.tensor([[0.5, -0.2, 0.1], [0.3, 0.4, -0.6]], requires_grad=True)
        with torch.autograd.graph.save_on_cpu():
            z = torch.tanh(x @ w.T).pow(2).sum()
        z.backward()
        print(w.grad)
        with torch.autograd.graph.disable_saved_tensors_hooks("no hooks here"):
            try:
                with torch.autograd.graph.save_on_cpu():
                    pass
            except RuntimeError as e:
                print(e)
        with torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: 3):
            bad = x.exp()
        try:
            bad.sum().backward()
        except TypeError as e:
            print(e)
        lin = nn.Linear(3, 3)
        with torch.no_grad():
            lin.weight.copy_(torch.tensor([[0.1, 0.2, 0.3], [-0.2, 0.1, 0.4], [0.3, -0.1, 0.2]]))
            lin.bias.fill_(0.05)
        a = torch.tensor([[1.0, 2.0, 3.0], [0.5, -1.0, 2.0]], requires_grad=True)
        out = checkpoint(lambda t, s=1.0: torch.sigmoid(lin(t)).exp() * s, a, use_reentrant=False,
                         s=2.0)
        print(out.grad_fn.name())
        out.pow(2).sum().backward()
        print(a.grad, lin.weight.grad)
        lin.zero_grad()
        checkpoint(lambda t: lin(t).relu(), a.detach(), use_reentrant=False).sum().backward()
        print(lin.weight.grad)

        class Square(torch.autograd.Function):
            @staticmethod
            def forward(ctx, t):
                ctx.save_for_backward(t)
                return t * t

            @staticmethod
            def backward(ctx, g):
                t, = ctx.saved_tensors
                return 2 * t * g
        packed.clear()
        x.grad = None
        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            q = Square.apply(x)
        q.sum().backward()
        print(packed, x.grad)
        d = torch.linspace(1, 2, 64, requires_grad=True)
        out = checkpoint(lambda t: F.dropout(t, 0.5) * 3, d, use_reentrant=False)
        out.sum().backward()
        print(bool(((d.grad == 0) == (out == 0)).all()), bool((d.grad[out != 0] == 6).all()))
    """,
    "anomaly_detection": """
        import warnings
        print(torch.is_anomaly_enabled())
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            with torch.autograd.detect_anomaly():
                print(torch.is_anomaly_enabled())
                x = torch.tensor([0.0, 1.0], requires_grad=True)
                try:
                    (x / x).sum().backward()
                except RuntimeError as e:
                    print(e)
                y = torch.tensor([4.0, 1.0], requires_grad=True)
                y.sqrt().sum().backward()
                print(y.grad)
            print([str(i.message)[:55] for i in w])
        torch.autograd.set_detect_anomaly(True)
        print(torch.is_anomaly_enabled())
        torch.autograd.set_detect_anomaly(False)
        with torch.autograd.set_detect_anomaly(True, check_nan=False):
            print(torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled())
            x.grad = None
            (x / x).sum().backward()
            print(x.grad)
        print(torch.is_anomaly_enabled())
    """,
    "in_place_on_views_torch_refuses": """
        # views that are one of several outputs, or made in no_grad mode of a base that
        # requires grad, refuse in-place ops under grad mode (torch's creation meta); unsafe
        # splits and tensor_split's slices do not
        x = torch.ones(2, 3, requires_grad=True)
        y = x * 1
        for e in ['y.unbind()[1].mul_(2)', 'y.split(1)[0].add_(1)', 'y.chunk(2)[1].zero_()', 'y.split([1,1])[1].mul_(3)', 'y.tensor_split(2)[0].mul_(2)', 'y.unsafe_split(1)[0].mul_(2)']:
            try:
                eval(e); print(e, 'ok')
            except RuntimeError as ex: print(e, '|', ex)
        with torch.no_grad():
            v = y[0]
            v.mul_(2)
        try:
            v.mul_(2)
        except RuntimeError as ex: print('nograd |', ex)
        with torch.no_grad():
            a, b = y.unbind()
            a.mul_(3)
        print(y.tensor_split(2)[0].grad_fn.name())
        print(y.sum().item())
        p = y.unsafe_split(1)[1]
        p.mul_(2); p.add_(1); print(p.grad_fn.name(), p._base)
        (p.sum() + y.sum()).backward(); print(x.grad)
    """,
    "views_made_in_no_grad_mode": """
        # a view made in no_grad mode of a tensor that requires grad requires grad too, as a
        # leaf whose gradient goes nowhere: ops on it record, backward leaves every .grad alone
        x = torch.ones(3, requires_grad=True)
        x2 = x * 2
        with torch.no_grad():
            v = x[0:2]
            u = x2[1:]
            vv = v[0:1]
            d = x.detach()[1:]
            n = x + 1
        print(v.requires_grad, v.is_leaf, v.grad_fn, u.requires_grad, u.is_leaf, vv.requires_grad)
        print(d.requires_grad, n.requires_grad)
        y = (v * 3).sum() + (u * u).sum()
        print(y.requires_grad, y.grad_fn.name())
        y.backward()
        print(v.grad, u.grad, x.grad)
        z = (v * x[0:2]).sum()
        z.backward()
        print(x.grad, v.grad)
    """,
    "index_assignment_nodes": """
        # torch indexes the tensor itself when the key's basic part is Ellipsis or slices
        # written as 0:n (index_put_: IndexPutBackward0) and a view of it otherwise (`:`,
        # ints, None: CopySlices)
        x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x * 1
        y[y > 1] = torch.tensor(5.0)
        z = torch.zeros(3, 2)
        z[z[:, 0] == 0, 1] = x * 2
        u = torch.zeros(3, 2)
        u[:, torch.tensor([1, 0])] = x.unsqueeze(1) * 3
        v = torch.zeros(3, 2)
        v[..., torch.tensor([True, False])] = x[0] * 4
        q = torch.zeros(3, 2)
        q[torch.tensor([0, 2]), 1] = x[:2] * 1
        r = torch.zeros(3, 2)
        r[0:3, torch.tensor([1, 1])] = x.unsqueeze(1) * 5
        print([t.grad_fn.name() for t in (y, z, u, v, q, r)])
        with torch.no_grad():
            y[y > 4] = 0.0
        print(y.grad_fn.name())
        (y.sum() + z.sum() + (u * u).sum() + v.sum() + q.sum() + r.sum()).backward()
        print(x.grad)
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


def _spd(m, a):
    """a a^T + n I: symmetric positive definite and well conditioned, a function of a."""
    n = a.shape[-1]
    return a @ a.mT + n * m.eye(n, dtype=a.dtype)


def _eigh_terms(m, a, b):
    """Both outputs of eigh through functions that do not depend on the eigenvectors' signs."""
    L, V = m.linalg.eigh(_spd(m, a))
    L2, V2 = m.linalg.eigh(_spd(m, a[0]), UPLO="U")
    return m.cat([L.flatten(), (V * V).flatten(), (((V * (L * L).unsqueeze(-2)) @ V.mT) * b).flatten(),
                  (V2 * V2 * L2).flatten(), m.linalg.eigvalsh(_spd(m, a), UPLO="U").flatten(),
                  (m.linalg.eigh(_spd(m, a[1]))[1] ** 2).flatten(),
                  m.linalg.eigh(_spd(m, a[1]))[0] * b])


def _qr_terms(m, a, b):
    """Q's columns and R's rows times R's diagonal (the same sign flips cancel): tall reduced,
    wide complete and reduced, square complete; and each output alone."""
    out = []
    for Q, R in (m.linalg.qr(a), m.linalg.qr(b, mode="complete"), m.linalg.qr(a[0].mT),
                 m.linalg.qr(a[1, :3], mode="complete")):
        d = R.diagonal(0, -2, -1)
        out += [(Q * d.unsqueeze(-2)).flatten(), (R * d.unsqueeze(-1)).flatten()]
    out += [(m.linalg.qr(a)[0] ** 2).flatten(), (m.linalg.qr(b)[1] ** 2).flatten()]
    return m.cat(out)


def _svd_terms(m, a, b):
    """U, S and Vh through sign-free functions (squares of the vectors, U S² Vh), tall, wide
    and full_matrices (whose extra columns get no gradient); U or Vh alone; svdvals."""
    U, S, Vh = m.linalg.svd(a, full_matrices=False)
    U2, S2, Vh2 = m.linalg.svd(b)
    U3, S3, Vh3 = m.linalg.svd(a[0])
    return m.cat([S.flatten(), (U * U).flatten(), (Vh * Vh).flatten(),
                  ((U * S.unsqueeze(-2) ** 2) @ Vh).flatten(), (U2 * U2).flatten(),
                  (Vh2 * Vh2).flatten(), (S2 * b[0, :3]).flatten(), (U3 * U3).flatten(),
                  (Vh3 * Vh3).flatten(), (m.linalg.svd(b, full_matrices=False)[0] ** 2).flatten(),
                  (m.linalg.svd(a, full_matrices=False)[2] ** 2).flatten(),
                  m.linalg.svdvals(a).flatten(), m.linalg.svdvals(b).flatten()])


def _matrix_power_terms(m, a, b):
    c = a + 3 * m.eye(3, dtype=a.dtype)  # invertible, for the negative powers
    mp = m.linalg.matrix_power
    return m.cat([mp(a, 0).flatten(), mp(a, 1).flatten(), mp(a, 2).flatten(), mp(a, 3).flatten(),
                  mp(a[0], 5).flatten(), mp(c, -1).flatten(), mp(c, -2).flatten(),
                  mp(c[0], -3).flatten(), mp(b, 2).flatten() * 0.5])


def _multi_dot_terms(m, a, b):
    md = m.linalg.multi_dot
    return m.cat([md([a, b, b.mT, a.mT]).flatten(), md([a[0], b, a.mT]), md([a, b, a[1]]),
                  md([a[0], b, a[1]]).reshape(1), md([a, b]).flatten(),
                  m.chain_matmul(a, b, b).flatten(), m.chain_matmul(b).flatten()])


def _lu_terms(m, a, b):
    """lu_factor(_ex) and lu of square, tall and wide matrices (P is constant)."""
    P, L, U = m.linalg.lu(a)
    P2, L2, U2 = m.linalg.lu(b)
    P3, L3, U3 = m.linalg.lu(b.mT)
    return m.cat([m.linalg.lu_factor(a)[0].flatten(), m.linalg.lu_factor_ex(a[0])[0].flatten(),
                  L.flatten(), U.flatten(), L2.flatten(), U2.flatten(), L3.flatten(), U3.flatten(),
                  m.linalg.lu_factor(b)[0].flatten(), m.linalg.lu_factor(b.mT)[0].flatten(),
                  m.linalg.lu(b)[1].flatten(), m.linalg.lu(b.mT)[2].flatten()])


def _lu_solve_unpack_terms(m, a, b):
    """lu_solve for each of left and adjoint (both operands), lu_unpack of square, tall and
    wide factors (L and U together and alone)."""
    LU, piv = m.linalg.lu_factor(a)
    out = [m.linalg.lu_solve(LU, piv, b).flatten(),
           m.linalg.lu_solve(LU, piv, b, adjoint=True).flatten(),
           m.linalg.lu_solve(LU, piv, b.mT, left=False).flatten(),
           m.linalg.lu_solve(LU, piv, b.mT, left=False, adjoint=True).flatten()]
    for x in (a, b, b.mT):
        P, L, U = m.lu_unpack(*m.linalg.lu_factor(x))
        out += [L.flatten(), U.flatten()]
    out += [m.lu_unpack(*m.linalg.lu_factor(b))[1].flatten(),
            m.lu_unpack(*m.linalg.lu_factor(b.mT))[2].flatten()]
    return m.cat(out)


OPS = [
    ("add", lambda m, a, b: a + b, [(3, 4), (4,)]),
    ("add_alpha", lambda m, a, b: m.add(a, b, alpha=2.5), [(3, 4), (3, 1)]),
    ("sub", lambda m, a, b: a - b * 3, [(2, 3), (2, 3)]),
    ("rsub", lambda m, a, b: 2 - a + b, [(3,), (3,)]),
    ("mul_broadcast", lambda m, a, b: a * b, [(2, 1, 3), (4, 1)]),
    ("mul_number", lambda m, a, b: 2.5 * a + b * 0.5 - 3 * b, [(3, 4), (4,)]),
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
    # ---- elementwise
    ("special_unary", lambda m, a, b: (
        a.erf() + a.erfc() + (a.tanh() * 0.9).erfinv() + a.tan() + a.tanh().asin()
        + a.tanh().acos() + a.atan() + a.sinh() + a.cosh() + a.asinh() + (b.abs() + 1.5).acosh()
        + (a.tanh() * 0.9).atanh() + a.exp2() + a.deg2rad() + a.rad2deg()
        + (b.abs() + 0.5).lgamma() + (b.abs() + 0.5).digamma() + a.sinc()
        + (b.abs() + 0.5).polygamma(1) + b.sigmoid().logit() + b.sigmoid().logit(eps=0.3)),
     [(7,), (7,)]),
    ("binary_more", lambda m, a, b: (
        m.atan2(a, b) + m.hypot(a, b) + m.maximum(a, b) + m.minimum(a, b) + m.fmax(a, b)
        + m.fmin(a, b) + m.remainder(a, b.abs() + 0.5) + m.fmod(a, b.abs() + 0.5)
        + m.xlogy(a, b.abs() + 0.1) + m.logaddexp(a, b) + m.maximum(a, a.detach()[:1])),
     [(3, 4), (4,)]),
    ("lerp_addc_clamp", lambda m, a, b: (
        m.lerp(a, b, 0.3) + m.lerp(a, b, b.sigmoid()) + m.addcmul(a, a, b, value=0.5)
        + m.addcdiv(a, a, b.abs() + 1, value=2) + a.clamp(b - 1, b + 1) + a.clamp_min(b)
        + a.clamp_max(0.2) + a.clamp(min=b) + a.clamp(b + 0.5, b - 0.5)), [(3, 4), (3, 4)]),
    ("zeros_and_constants", lambda m, a, b: (
        (a * (a > 0)).norm(p=3, dim=1) + (a * (a > 0)).norm(p=1.5, dim=1)
        + m.nn.functional.normalize(a * (a > 0), p=1, dim=1).sum(1) + (a * 0 + b).std(0).sum()
        + m.xlogy(a * (a > 0), b.abs() + 0.1).sum(1) + (b * 0 + 2).std(1)), [(3, 4), (3, 4)]),
    ("linear_3d_relu_inplace", lambda m, a, b: m.nn.functional.relu(
        m.nn.functional.linear(a, b, b[0]), inplace=True), [(2, 3, 4), (4, 4)]),
    # ---- reductions and selection
    ("moments", lambda m, a, b: (
        a.var() + a.std(1).sum() + b.var(0, unbiased=False).sum() + a.std((0, 1), correction=0)
        + sum(t.sum() for t in m.var_mean(a, 1)) + sum(t.sum() for t in m.std_mean(b, 0, True))),
     [(3, 4), (3, 4)]),
    ("logsumexp_norm", lambda m, a, b: (
        a.logsumexp(1) + a.norm(dim=1) + b.norm(p=1, dim=1) + b.norm(p=3, dim=1)
        + a.norm(p=float("inf"), dim=1) + a.norm() + b.norm(p=1)), [(3, 4), (3, 4)]),
    ("prod_with_zeros", lambda m, a, b: (
        (a * (a > 0.3)).prod(1) + b.prod() + (a * (a > 0)).prod(0, keepdim=True).sum()
        + (a * (a > 10)).prod(1)), [(3, 4), (3, 4)]),
    ("cumsum_nansum", lambda m, a, b: a.cumsum(1) * b.cumsum(0) + m.nansum(a.log(), 1, True),
     [(3, 4), (3, 4)]),
    ("kron_cdist", lambda m, a, b: m.cat([
        m.kron(a, b).flatten(), m.kron(a[0], b[:, 0]), m.cdist(a, b).flatten(),
        m.cdist(a, b, p=1).flatten(), m.cdist(a, b, p=3).flatten(),
        m.cdist(a.repeat(10, 1), b).flatten()]), [(3, 4), (5, 4)]),
    ("cumprod_logcumsumexp", lambda m, a, b: (
        a.cumprod(1) + (a * (a.abs() > 0.5)).cumprod(1) + (b * (b > 0)).cumprod(0)
        + (a * 30).logcumsumexp(1) + b.logcumsumexp(0)), [(3, 4), (3, 4)]),
    ("selection", lambda m, a, b: (
        a.max(1)[0] + a.min(1, keepdim=True)[0].sum(1) + b.sort(1)[0][:, 1]
        + b.sort(0, descending=True)[0][1] [:3] + b.topk(2, 1)[0].sum(1)
        + a.kthvalue(2, 1)[0] + b.median(1)[0] + b.median() + a.cummax(1)[0].sum(1)
        + a.cummin(0)[0][0, :3]), [(3, 4), (3, 4)]),
    # ---- ops that pick elements
    ("flip_roll_triangles", lambda m, a, b: (
        a.flip(0) + b.roll(1, 1) + a.tril() + b.triu(1)
        + m.take(a, m.tensor([[0, 5, 5, 11], [2, 3, 4, 1], [7, 7, 7, 0]]))), [(3, 4), (3, 4)]),
    ("advanced_index", lambda m, a, b: (
        a[m.tensor([0, 2, 0])].sum(0) + b[:, m.tensor([1, 1, 3])].sum(1).sum()
        + a[a > 0].sum() + b[m.tensor([2, 1]), m.tensor([0, 3])].sum()
        + m.masked_select(b, b < 0).sum()), [(3, 4), (3, 4)]),
    ("pad_modes", lambda m, a, b: m.cat([
        m.nn.functional.pad(a, (2, 1), mode="reflect").flatten(),
        m.nn.functional.pad(a, (1, 2, 2, 0), mode="replicate").flatten(),
        m.nn.functional.pad(a, (1, 2), value=2.5).flatten(),
        m.nn.functional.pad(b, (1, -1, 0, 1)).flatten(),
        m.nn.functional.pad(a, (1, 1, 1, 1), mode="reflect").flatten()]), [(2, 3, 4), (2, 3, 4)]),
    ("unfold_strided_split", lambda m, a, b: m.cat([
        a.unfold(1, 2, 1).flatten(), m.as_strided(b, (3, 3), (1, 1)).flatten(),
        (a.split(1, 0)[1] * 2).flatten(), m.cat(b.chunk(2, 1), 0).flatten(),
        m.stack(a.unbind(1)).flatten(), a.movedim(0, 1).flatten(), b.mT.flatten(),
        b.repeat_interleave(2, dim=1).flatten(), m.tensor_split(a, 3, 1)[2].flatten()]),
     [(3, 4), (3, 4)]),
    ("diag_family", lambda m, a, b: m.cat([
        m.diag(a).flatten(), m.diag(b[0], 1).flatten(), m.diag_embed(a).flatten(),
        m.diagflat(b[1]).flatten(), m.nn.functional.unfold(a.reshape(1, 1, 3, 4), 2).flatten()]),
     [(3, 4), (3, 4)]),
    ("fills_and_scatters", lambda m, a, b: (
        a.masked_fill(a > 0, 1.5) + b.masked_fill(b < 0, b[0, 0]) + a.index_fill(1, m.tensor([0, 2]), 2.0)
        + a.index_add(0, m.tensor([2, 0]), b[:2]) + a.scatter(1, m.tensor([[1], [0], [3]]), b[:, :1])
        + a.scatter_add(0, m.tensor([[1, 0, 2, 2], [0, 0, 1, 2]]), b[1:])
        + a.masked_scatter(a < 0, b) + a.index_fill(1, m.tensor([0, 0, 2]), b[1, 1])),
     [(3, 4), (3, 4)]),
    ("in_place_chain", lambda m, a, b: _in_place_chain(a, b), [(3, 4), (3, 4)]),
    # ---- contractions
    ("batched_products", lambda m, a, b: (
        m.baddbmm(a[0], a, b, beta=0.5, alpha=2).sum(0) + m.addbmm(a[1], a, b, alpha=3)
        + m.addmv(a[0, 0], a[1], b[0, 0], beta=2).sum() + m.addr(a[0], a[1, 0], b[1, 1])
        + m.outer(a[0, 1], b[0, 2]) + m.trace(a[1]) + m.cross(a[0], b[0].t(), dim=1)),
     [(2, 3, 3), (2, 3, 3)]),
    ("einsum_tensordot", lambda m, a, b: (
        m.einsum("bij,bjk->ik", a, b) + m.einsum("bij,k->ik", a, b[0, 0]).sum()
        + m.einsum("...ij,...kj", a, b).sum(0) + m.tensordot(a, b, dims=([0, 2], [0, 1]))
        + m.einsum("...ij->...i", a).sum(0) + m.einsum("bij,bkl->ik", a, b)),
     [(2, 3, 3), (2, 3, 3)]),
    ("normalize_upsample", lambda m, a, b: m.cat([
        m.nn.functional.normalize(a, dim=1).flatten(),
        m.nn.functional.normalize(a, p=1, dim=0).flatten(),
        m.nn.functional.interpolate(b, scale_factor=2).flatten(),
        m.nn.functional.cosine_similarity(a, b.flatten()[:4]),
        m.nn.functional.cosine_similarity(a * 1e-5, a.flip(0), eps=1e-3)]),
     [(3, 4), (1, 2, 3, 3)]),
    # ---- nn.functional
    ("conv2d", lambda m, a, b: m.nn.functional.conv2d(a, b, b.sum((1, 2, 3)), stride=(2, 1),
                                                       padding=1, dilation=(1, 2)),
     [(2, 3, 7, 8), (4, 3, 3, 2)]),
    ("conv2d_groups", lambda m, a, b: m.nn.functional.conv2d(a, b, None, 2, 2, 1, 2),
     [(2, 4, 9, 7), (6, 2, 3, 3)]),
    ("conv2d_unbatched_same", lambda m, a, b: m.nn.functional.conv2d(a, b, padding="same"),
     [(3, 6, 5), (2, 3, 2, 3)]),
    ("conv1d", lambda m, a, b: m.nn.functional.conv1d(a, b, padding=1, stride=2),
     [(2, 3, 9), (4, 3, 3)]),
    # stride 1: the input's gradient is a convolution by the flipped weight (groups, dilation,
    # rectangular kernels); a padding wider than the kernel's reach takes the transposed one
    ("conv2d_stride1_groups_dilated", lambda m, a, b: m.nn.functional.conv2d(
        a, b, b.sum((1, 2, 3)), 1, (1, 2), (2, 1), 2), [(2, 4, 9, 7), (6, 2, 3, 2)]),
    ("conv2d_stride1_wide_padding", lambda m, a, b: m.nn.functional.conv2d(a, b, None, 1, 2),
     [(2, 3, 5, 4), (4, 3, 2, 2)]),
    ("conv_transpose2d", lambda m, a, b: m.nn.functional.conv_transpose2d(
        a, b, b.sum((0, 2, 3)), stride=2, padding=1, output_padding=1), [(2, 4, 5, 5), (4, 3, 3, 3)]),
    ("conv_transpose2d_groups", lambda m, a, b: m.nn.functional.conv_transpose2d(
        a, b, None, stride=(1, 2), groups=2, dilation=2), [(1, 4, 4, 4), (4, 1, 2, 2)]),
    ("conv3d", lambda m, a, b: m.nn.functional.conv3d(a, b, b.sum((1, 2, 3, 4)),
                                                       stride=(1, 2, 1), padding=1,
                                                       dilation=(2, 1, 1)),
     [(2, 3, 5, 6, 4), (4, 3, 2, 3, 2)]),
    ("conv3d_groups", lambda m, a, b: m.nn.functional.conv3d(a, b, None, 2, 0, 1, 2),
     [(1, 4, 5, 5, 5), (6, 2, 3, 2, 2)]),
    ("interpolate_linear_modes", lambda m, a, b: m.cat([
        m.nn.functional.interpolate(a, scale_factor=2, mode="bilinear").flatten(),
        m.nn.functional.interpolate(a, size=(5, 7), mode="bilinear",
                                    align_corners=True).flatten(),
        m.nn.functional.interpolate(a, size=(2, 3), mode="bilinear").flatten(),
        m.nn.functional.interpolate(a, scale_factor=1.7, mode="bilinear").flatten(),
        m.nn.functional.interpolate(b, scale_factor=2.5, mode="linear").flatten(),
        m.nn.functional.interpolate(b.reshape(1, 2, 3, 2, 2), size=(3, 4, 5), mode="trilinear",
                                    align_corners=True).flatten(),
        m.nn.functional.interpolate(b, scale_factor=2).flatten(),
        m.nn.functional.interpolate(a, scale_factor=1.7, mode="bicubic").flatten(),
        m.nn.functional.interpolate(a, size=(5, 7), mode="bicubic",
                                    align_corners=True).flatten()]), [(1, 2, 3, 4), (2, 3, 4)]),
    ("linalg", lambda m, a, b: m.cat([
        m.linalg.inv(a + 4 * m.eye(3, dtype=a.dtype)).flatten(),
        m.linalg.det(a + 4 * m.eye(3, dtype=a.dtype)).flatten(),
        m.linalg.slogdet(a + 4 * m.eye(3, dtype=a.dtype))[1].flatten(),
        m.linalg.solve(a + 4 * m.eye(3, dtype=a.dtype), b).flatten(),
        m.linalg.solve(a[0] + 4 * m.eye(3, dtype=a.dtype), b[0, :, 0]).flatten(),
        m.linalg.solve(a[1] + 4 * m.eye(3, dtype=a.dtype), b[1].t(), left=False).flatten()]),
     [(2, 3, 3), (2, 3, 2)]),
    ("linalg_cholesky", lambda m, a, b: m.cat([
        m.linalg.cholesky(_spd(m, a)).flatten(),
        m.linalg.cholesky(_spd(m, a), upper=True).flatten(),
        (m.linalg.cholesky_ex(_spd(m, a[0]))[0] * b).flatten(),
        m.linalg.cholesky_ex(_spd(m, a[1]), upper=True).L.flatten()]), [(2, 3, 3), (3, 3)]),
    ("linalg_eigh", _eigh_terms, [(2, 3, 3), (3,)]),
    ("linalg_qr", _qr_terms, [(2, 4, 3), (3, 4)]),
    ("linalg_svd", _svd_terms, [(2, 4, 3), (3, 4)]),
    ("linalg_pinv", lambda m, a, b: m.cat([
        m.linalg.pinv(a).flatten(), m.linalg.pinv(a.mT).flatten(),
        m.linalg.pinv(_spd(m, b), hermitian=True).flatten(),
        m.linalg.pinv(a[0], atol=1e-3, rtol=m.tensor(1e-4, dtype=a.dtype)).flatten()]),
     [(2, 4, 3), (3, 3)]),
    ("linalg_matrix_power", _matrix_power_terms, [(2, 3, 3), (3, 3)]),
    ("linalg_multi_dot_chain_matmul", _multi_dot_terms, [(3, 4), (4, 4)]),
    ("linalg_lu", _lu_terms, [(2, 3, 3), (3, 2)]),
    ("linalg_lu_solve_unpack", _lu_solve_unpack_terms, [(2, 3, 3), (3, 2)]),
    ("linalg_householder_product", lambda m, a, b: m.cat([
        m.linalg.householder_product(a, b).flatten(),
        m.linalg.householder_product(a[0], b[1, :2]).flatten(),
        m.orgqr(a[1, :, :2], b[0, 1:]).flatten()]), [(2, 4, 3), (2, 3)]),
    ("pairwise_distance", lambda m, a, b: m.cat([
        m.nn.functional.pairwise_distance(a, b),
        m.nn.functional.pairwise_distance(a, b[0], p=1, keepdim=True).flatten(),
        m.nn.functional.pairwise_distance(a, b, p=3)]), [(3, 4), (3, 4)]),
    ("pools", lambda m, a, b: m.cat([
        m.nn.functional.max_pool2d(a, 3, 2, 1).flatten(),
        m.nn.functional.max_pool2d(a, 2, ceil_mode=True).flatten(),
        m.nn.functional.max_pool2d(a, 2, return_indices=True)[0].flatten(),
        m.nn.functional.avg_pool2d(a, 3, 2, 1).flatten(),
        m.nn.functional.avg_pool2d(a, 3, 2, 1, count_include_pad=False).flatten(),
        m.nn.functional.avg_pool2d(a, 2, ceil_mode=True).flatten(),
        m.nn.functional.avg_pool2d(a, 3, divisor_override=5).flatten(),
        m.nn.functional.adaptive_avg_pool2d(a, (3, 2)).flatten(),
        m.nn.functional.adaptive_max_pool2d(a, 2).flatten(),
        m.nn.functional.avg_pool1d(b, 3, 2).flatten(),
        m.nn.functional.max_pool1d(b, 2).flatten()]), [(2, 3, 7, 6), (2, 3, 9)]),
    ("layer_norm", lambda m, a, b: m.nn.functional.layer_norm(a, (3, 4), b[0], b[1])
     + m.nn.functional.layer_norm(a, (4,)), [(2, 3, 4), (2, 3, 4)]),
    ("group_norm", lambda m, a, b: m.nn.functional.group_norm(a, 2, b[0], b[1])
     + m.nn.functional.group_norm(a, 1), [(2, 4, 3), (2, 4)]),
    ("batch_norm", lambda m, a, b: (
        m.nn.functional.batch_norm(a, None, None, b[0], b[1], training=True)
        + m.nn.functional.batch_norm(a, m.zeros(4, dtype=a.dtype), m.ones(4, dtype=a.dtype),
                                     training=True)
        + m.nn.functional.batch_norm(a, m.linspace(-1, 1, 4, dtype=a.dtype),
                                     m.linspace(0.5, 2, 4, dtype=a.dtype), b[0], b[1])),
     [(3, 4, 2), (2, 4)]),
    ("piecewise_constant", lambda m, a, b: (
        a.sign() + a.round() + a.floor() + a.ceil() + a.trunc() + a.fix() + a.sgn() + b.frac()
        + a * b + m.poisson(b.abs()) * 0 + a.H.H), [(3, 4), (3, 4)]),
    ("special_more", lambda m, a, b: (
        m.nan_to_num(a / b.detach().round(), posinf=3.0, neginf=-2.0)
        + m.special.entr(b.abs() + 0.5) + m.special.ndtr(a) + m.arctan2(a, b)
        + m.logaddexp2(a, b) + m.copysign(a, b) + m.copysign(b, -1.0)
        + m.special.xlog1py(a, b.abs()) + m.special.zeta(a.detach().abs() + 2, b.abs() + 0.5)
        + m.igamma(a.detach().abs() + 0.5, b.abs() + 0.1)
        + m.igammac(a.detach().abs() + 0.5, b.abs() + 0.1)), [(2, 3), (3,)]),
    ("nan_statistics", lambda m, a, b: m.cat([
        m.nanmean(m.where(a.detach() > 0.5, m.tensor(float("nan"), dtype=a.dtype), a), 1),
        m.nanmean(m.where(b.detach() < 0, m.tensor(float("nan"), dtype=b.dtype), b))[None],
        m.quantile(a, m.tensor([0.2, 0.5, 0.9], dtype=a.dtype), dim=1).reshape(-1),
        m.quantile(b, 0.3, keepdim=True).reshape(-1),
        m.quantile(a, 0.6, dim=0, interpolation="lower"),
        m.quantile(a, 0.6, dim=0, interpolation="higher"),
        m.quantile(a, 0.4, dim=1, interpolation="nearest"),
        m.quantile(a, 0.7, dim=1, interpolation="midpoint"),
        m.nanquantile(m.where(a.detach() > 0.7, m.tensor(float("nan"), dtype=a.dtype), a),
                      0.4, dim=1)]), [(3, 5), (4, 2)]),
    ("diff_inner_block_diag", lambda m, a, b: m.cat([
        m.diff(a, 2, dim=0, prepend=b[:2]).reshape(-1),
        m.diff(a, dim=-1, append=b[:4, :2]).reshape(-1),
        m.inner(a, b).reshape(-1), m.inner(a[0], b[1])[None],
        m.block_diag(a, b[0], b[1, 1]).reshape(-1), a.mH.reshape(-1)]), [(4, 3), (5, 3)]),
    ("put_and_scatter_reduce", lambda m, a, b: m.cat([
        (a * 1).put_(m.tensor([0, 4, 1]), b[0, :3]).reshape(-1),
        (a * 1).put_(m.tensor([0, 4, 0]), b[1, :3], accumulate=True).reshape(-1)] + [
        a.scatter_reduce(1, m.tensor([[0, 0, 1, 2], [1, 1, 1, 0]]), b, reduce,
                         include_self=inc).reshape(-1)
        for reduce in ("sum", "mean", "amax", "amin", "prod") for inc in (True, False)] + [
        a.masked_fill(a.detach() > 0.5, 0.0).scatter_reduce(
            1, m.tensor([[0, 0, 1, 2], [1, 1, 1, 0]]), b.masked_fill(b.detach() < -0.3, 0.0),
            "prod", include_self=inc).reshape(-1) for inc in (True, False)]),
     [(2, 3), (2, 4)]),
    ("conv_transpose3d_fold_unpool", lambda m, a, b: m.cat([
        m.nn.functional.conv_transpose3d(a, b, stride=2, padding=1,
                                         output_padding=1).reshape(-1),
        m.nn.functional.conv_transpose3d(a.reshape(1, 4, 1, 3, 2), b.reshape(-1)[:48].reshape(4, 1, 2, 3, 2),
                                         stride=(1, 2, 1), groups=2,
                                         dilation=(2, 1, 1)).reshape(-1),
        m.nn.functional.fold(b.reshape(-1)[:32].reshape(1, 4, 8), (3, 4), (2, 2), stride=(1, 2),
                             padding=(1, 0)).reshape(-1),
        m.nn.functional.max_unpool2d(*m.nn.functional.max_pool2d(
            b.reshape(3, 4, 6), 2, return_indices=True), 2).reshape(-1),
        m.nn.functional.max_unpool3d(*m.nn.functional.max_pool3d(
            b.reshape(3, 2, 3, 4), 2, return_indices=True), 2,
            output_size=(2, 3, 4)).reshape(-1)]), [(1, 2, 2, 3, 2), (2, 3, 2, 3, 2)]),
    ("grid_sample", lambda m, a, b: m.cat([
        m.nn.functional.grid_sample(a, b * 0.8, mode=mode, padding_mode=pad,
                                    align_corners=align).reshape(-1)
        for mode in ("bilinear", "nearest", "bicubic")
        for pad in ("zeros", "border", "reflection") for align in (False, True)]),
     [(2, 3, 4, 5), (2, 3, 4, 2)]),
    ("grid_sample_3d", lambda m, a, b: m.cat([
        m.nn.functional.grid_sample(a, b * 0.8, mode=mode, padding_mode=pad,
                                    align_corners=align).reshape(-1)
        for mode in ("bilinear", "nearest")
        for pad in ("zeros", "border", "reflection") for align in (False, True)]),
     [(2, 2, 3, 4, 5), (2, 2, 3, 4, 3)]),
    ("einsum_diagonal_ellipsis", lambda m, a, b: m.cat([
        m.einsum("ii->", a)[None], m.einsum("ii->i", a), m.einsum("ii", a)[None],
        m.einsum("bii,ij->bij", b, a).reshape(-1), m.einsum("...ij->ij", b).reshape(-1),
        m.einsum("...ij,...jk->...ik", b, a).reshape(-1),
        m.einsum("ijj,kj->ik", b, a).reshape(-1), m.einsum("...i,...i", b, a).reshape(-1)]),
     [(3, 3), (2, 3, 3)]),
    ("as_strided_of_views", lambda m, a, b: m.cat([
        (a * b)[1:, 2:].as_strided((2, 2), (6, 1), 9).reshape(-1),
        (a * b).t().as_strided((3, 2), (1, 6), 3).reshape(-1),
        (a * b)[:, :1].expand(4, 3).as_strided((2, 2), (6, 0), 6).reshape(-1),
        (a * b)[2:].as_strided((3, 3), (1, 1), 12).reshape(-1)]), [(4, 6), (4, 6)]),
    ("reflected_put_einsum_nanmean", lambda m, a, b: m.cat([
        (2 * a + 2.5 * b - 3 * a * b).reshape(-1),
        (a * 1).reshape(-1).put(m.tensor([0, 4, 1, 5]), b[:, :2]),
        m.einsum("...i,...->...", a[:1], b[:, 0]).reshape(-1),
        m.nanmean(m.where(m.tensor([[True] * 3, [False, True, False]]),
                          m.tensor(float("nan"), dtype=a.dtype), a), 1)]), [(2, 3), (2, 3)]),
    ("special_bessel", lambda m, a, b: (
        m.i0(a) + m.special.i0e(a) + m.special.i1(a) + m.special.i1e(a * 5) + m.special.i1(b)
        + m.special.i1e(b) + m.special.i0e(b * 9) + m.special.ndtri(a.sigmoid())
        + m.special.log_ndtr(a * 3) + m.special.erfcx(a * 2) + m.special.erfcx(b.abs() * 30)),
     [(3, 4), (4,)]),
    ("nn_activations", lambda m, a, b: (
        m.nn.functional.elu(a) + m.nn.functional.selu(a) + m.nn.functional.celu(a, 0.7)
        + m.nn.functional.softplus(a, 2, 1) + m.nn.functional.mish(a)
        + m.nn.functional.hardswish(a * 3) + m.nn.functional.hardsigmoid(a * 3)
        + m.nn.functional.hardshrink(a) + m.nn.functional.softshrink(a, 0.3)
        + m.nn.functional.logsigmoid(a) + m.nn.functional.softmin(a, 0)
        + m.nn.functional.hardtanh(a) + m.nn.functional.relu6(a * 4)
        + m.nn.functional.softsign(a) + m.nn.functional.tanhshrink(a)
        + m.nn.functional.threshold(a, 0.1, 2.0) + m.nn.functional.glu(b, 1)), [(3, 4), (3, 8)]),
    ("losses", lambda m, a, b: m.stack([
        m.nn.functional.l1_loss(a, b), m.nn.functional.smooth_l1_loss(a, b, beta=0.5),
        m.nn.functional.huber_loss(a, b, delta=0.7),
        m.nn.functional.soft_margin_loss(a, b.detach().sign()),
        m.nn.functional.binary_cross_entropy(a.sigmoid(), b.sigmoid()),
        m.nn.functional.binary_cross_entropy(a.sigmoid(), b.sigmoid(), weight=b[0].detach().abs(),
                                             reduction="sum"),
        m.nn.functional.binary_cross_entropy_with_logits(a, b.sigmoid()),
        m.nn.functional.binary_cross_entropy_with_logits(a, b.sigmoid(), pos_weight=b[1].detach().abs()),
        m.nn.functional.kl_div(a.log_softmax(1), b.softmax(1), reduction="batchmean"),
        m.nn.functional.kl_div(a, b, log_target=True, reduction="sum"),
        m.nn.functional.smooth_l1_loss(a, b, reduction="none").sum()]), [(3, 4), (3, 4)]),
    ("cross_entropy_smoothing_and_probabilities", lambda m, a, b: m.cat([
        m.nn.functional.cross_entropy(a, m.tensor([0, 3, 1]), label_smoothing=0.2)[None],
        m.nn.functional.cross_entropy(a, m.tensor([0, -100, 2]), weight=b[0].detach().abs(),
                                      label_smoothing=0.1)[None],
        m.nn.functional.cross_entropy(a, m.tensor([2, 3, 1]), label_smoothing=0.3,
                                      reduction="none"),
        m.nn.functional.cross_entropy(a, b.softmax(1))[None],
        m.nn.functional.cross_entropy(a, b.softmax(1), weight=b[1].detach().abs(),
                                      label_smoothing=0.2, reduction="sum")[None],
        m.nn.functional.cross_entropy(a, b.softmax(1), reduction="none")]), [(3, 4), (3, 4)]),
    # embedding_bag: a's rows with a detached copy of row 0 as row 6 (max mode's ties: the first
    # in its bag wins); bags empty, of padding only, and closed by include_last_offset; 2-d
    # indices; scale_grad_by_freq (torch 1.13's divisor); per_sample_weights (b's last rows) on
    # b's first rows as the weight (not scaled by the frequencies, as torch's). (Indices past an
    # include_last_offset's last offset are left out: torch 1.13 reads out of bounds there.)
    ("embedding_bag", lambda m, a, b: m.cat([
        m.nn.functional.embedding_bag(
            m.tensor([0, 2, 4, 2, 5, 1, 3, 6, 0, 0, 6, 2]), m.cat([a, a.detach()[:1]]),
            m.tensor(offsets), mode=mode, padding_idx=padding,
            include_last_offset=last).reshape(-1)
        for mode in ("sum", "mean", "max")
        for offsets, padding, last in (([0, 3, 3, 7, 9, 11], None, False),
                                       ([0, 3, 3, 7, 9, 12], 2, True),
                                       ([0, 12], -1, True))] + [
        m.nn.functional.embedding_bag(m.tensor([[0, 6, 2], [6, 0, 4]]), m.cat([a, a.detach()[:1]]),
                                      mode=mode, padding_idx=4).reshape(-1)
        for mode in ("sum", "mean", "max")] + [
        m.nn.functional.embedding_bag(m.tensor([0, 2, 4, 2, 5, 2, 3, 6, 0]),
                                      m.cat([a, a.detach()[:1]]), m.tensor([0, 3, 3, 7]),
                                      mode=mode, scale_grad_by_freq=True,
                                      padding_idx=padding).reshape(-1)
        for mode in ("sum", "mean") for padding in (None, 4)] + [
        m.nn.functional.embedding_bag(m.tensor([0, 3, 1, 3, 2, 0, 1, 3]), b[:4],
                                      m.tensor([0, 2, 2, 5]), mode="sum", padding_idx=padding,
                                      scale_grad_by_freq=freq,
                                      per_sample_weights=b[4:].reshape(-1)).reshape(-1)
        for padding, freq in ((None, False), (3, False), (None, True))] + [
        m.nn.functional.embedding_bag(m.tensor([[0, 3, 1, 3], [2, 0, 1, 1]]), b[:4], mode="sum",
                                      per_sample_weights=b[4:].reshape(2, 4)).reshape(-1)]),
     [(6, 3), (6, 4)]),
    # ctc_loss: a (T 6, N 3, C 5) normalised and as given, targets padded and concatenated,
    # every reduction, zero_infinity with sample 2 impossible (4 labels in 3 steps); b's (T 5,
    # N 2, C 4) with blank 3, lengths as lists, an empty target, a last label equal to blank
    # (torch's kernel keeps only its term at the last step), and unbatched
    ("ctc_loss", lambda m, a, b: m.cat([
        m.nn.functional.ctc_loss(a.log_softmax(2), m.tensor([[1, 2, 2, 4], [3, 3, 1, 1],
                                                             [4, 1, 4, 2]]),
                                 m.tensor([6, 5, 6]), m.tensor([3, 2, 4]),
                                 reduction=reduction).reshape(-1)
        for reduction in ("mean", "sum", "none")] + [
        m.nn.functional.ctc_loss(a, m.tensor([1, 2, 2, 3, 3, 4, 1, 4, 2]), m.tensor([6, 5, 3]),
                                 m.tensor([3, 2, 4]), reduction=reduction,
                                 zero_infinity=True).reshape(-1)
        for reduction in ("mean", "sum", "none")] + [
        m.nn.functional.ctc_loss(b.log_softmax(2), m.tensor([[1, 1, 3], [2, 0, 0]]), [5, 4],
                                 [3, 0], blank=3, reduction="none"),
        m.nn.functional.ctc_loss(b, m.tensor([[0, 3], [2, 0]]), [5, 3], [2, 2], blank=3,
                                 reduction="sum").reshape(-1),
        m.nn.functional.ctc_loss(b[:, 1].log_softmax(1), m.tensor([2, 2]), m.tensor([5]),
                                 m.tensor([2]), blank=0, reduction="none").reshape(-1)]),
     [(6, 3, 5), (5, 2, 4)]),
]


def _in_place_chain(a, b):
    """In-place ops on a non-leaf: each takes a new grad_fn over the old history (mul_ and
    clamp_ save the value from before they wrote it)."""
    y = a * 1
    y.mul_(b)
    y.add_(b, alpha=2)
    y.relu_()
    y = y + 0  # relu_ saved its output (as torch's): later writes go to a copy
    y.clamp_(max=1.0)
    y.sigmoid_()
    y = y * 1  # sigmoid_ saved its output: pow_ writing it would fail backward, as in torch
    y.pow_(2)
    y.div_(b.abs() + 1)
    y.sub_(1)
    y.masked_fill_(b > 1, 0.0)
    y.exp_()
    return y


# Ops whose inputs torch requires to share a dtype: run with float64 only.
SAME_DTYPE = {"matmul_batched_broadcast", "matmul_vec", "mm_bmm", "mse_loss", "linear", "addmm",
              "index_copy", "embedding", "lerp_addc_clamp", "fills_and_scatters", "conv2d",
              "conv2d_groups", "conv2d_unbatched_same", "conv1d", "conv_transpose2d",
              "conv2d_stride1_groups_dilated", "conv2d_stride1_wide_padding",
              "conv_transpose2d_groups", "layer_norm", "group_norm", "batch_norm", "losses",
              "binary_more", "nn_activations", "batched_products", "einsum_tensordot",
              "linear_3d_relu_inplace", "cross_entropy_smoothing_and_probabilities", "conv3d",
              "conv3d_groups", "linalg", "pairwise_distance", "kron_cdist",
              "conv_transpose3d_fold_unpool", "put_and_scatter_reduce", "diff_inner_block_diag",
              "grid_sample", "grid_sample_3d", "einsum_diagonal_ellipsis",
              "reflected_put_einsum_nanmean",
              "linalg_multi_dot_chain_matmul", "linalg_lu_solve_unpack",
              "linalg_householder_product"}


# Ops whose inputs are drawn positive (logs, roots and powers of them).
POSITIVE = {"pow_tensor", "pow_scalar", "unary_chain", "activations", "div", "div_scalar"}


def gradients(m, name, fn, shapes, dtypes):
    """(output dtype, the inputs' gradients' shapes, dtypes and values as numpy arrays) of
    sum(fn(m, *inputs) * weights) for module `m` (torch or tensord; tensord's tensors on the
    current session's default device): the same inputs and weights for both."""
    arrays = _arrays(shapes, dtypes, seed=len(name), positive=name in POSITIVE)
    inputs = [m.tensor(a, requires_grad=True) for a in arrays]
    out = fn(m, *inputs)
    weights = m.tensor(np.linspace(-1, 1, out.numel()).reshape(tuple(out.shape)), dtype=out.dtype)
    (out * weights).sum().backward()
    return (out.dtype, [tuple(t.grad.shape) for t in inputs], [str(t.grad.dtype) for t in inputs],
            [t.grad.detach().cpu().numpy() for t in inputs])


@pytest.mark.parametrize("dtypes", [("float64", "float64"), ("float32", "float64")],
                         ids=["f64", "f32_f64"])
@pytest.mark.parametrize("name,fn,shapes", OPS, ids=[o[0] for o in OPS])
def test_gradients_match_torch(session, name, fn, shapes, dtypes):
    if name in SAME_DTYPE and dtypes[0] != dtypes[1]:
        dtypes = ("float32", "float32")
    tdt, tshapes, tdtypes, tgrads = gradients(real_torch, name, fn, shapes, dtypes)
    ddt, dshapes, ddtypes, dgrads = gradients(tensord, name, fn, shapes, dtypes)
    assert str(ddt) == str(tdt)
    assert dshapes == tshapes and ddtypes == tdtypes
    tol = 1e-5 if "float32" in dtypes else 1e-10
    for d, t in zip(dgrads, tgrads):
        np.testing.assert_allclose(d, t, rtol=tol, atol=tol)


GRAD_FN_NAMES = {
    "F.grid_sample(x[None, None], y[None, None] * 0.5, align_corners=True)":
        "GridSampler2DBackward0",
    "x.floor()": "FloorBackward0",
    "torch.poisson(x)": "PoissonBackward0",
    "x.H": "TransposeBackward0",
    "x.sign()": "SignBackward0",
    "torch.fix(x)": "TruncBackward0",
    "x.frac()": "FracBackward0",
    "torch.copysign(x, y)": "CopysignBackward0",
    "torch.logaddexp2(x, y)": "Logaddexp2Backward0",
    "torch.special.entr(x)": "SpecialEntrBackward0",
    "torch.i0(x)": "I0Backward0",
    "torch.special.i0e(x)": "SpecialI0EBackward0",
    "torch.special.i1(x)": "SpecialI1Backward0",
    "torch.special.i1e(x)": "SpecialI1EBackward0",
    "torch.special.ndtri(x.sigmoid())": "SpecialNdtriBackward0",
    "torch.special.log_ndtr(x)": "SpecialLogNdtrBackward0",
    "torch.special.erfcx(x)": "SpecialErfcxBackward0",
    "torch.nan_to_num(x)": "NanToNumBackward0",
    "torch.nanmean(x, 1)": "DivBackward0",
    "torch.quantile(x, 0.5, dim=0)": "SqueezeBackward3",
    "torch.diff(x)": "SubBackward0",
    "torch.block_diag(x, y)": "BlockDiagBackward0",
    "x.put(torch.tensor([0]), y[0, :1])": "PutBackward0",
    "x.scatter_reduce(0, torch.tensor([[1, 0]]), y, 'amax')": "ScatterReduceBackward0",
    "F.fold(x.reshape(1, 4, 1), (2, 2), (2, 2))": "Col2ImBackward0",
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
    "x.erf()": "ErfBackward0",
    "x.atan()": "AtanBackward0",
    "torch.atan2(x, y)": "Atan2Backward0",
    "torch.maximum(x, y)": "MaximumBackward0",
    "torch.lerp(x, y, 0.5)": "LerpBackward0",
    "torch.addcmul(x, x, y)": "AddcmulBackward0",
    "x.clamp(y, y + 1)": "ClampBackward0",
    "x.clamp_min(0.5)": "ClampMinBackward0",
    "x.var()": "VarBackward0",
    "x.std(1)": "StdBackward0",
    "torch.var_mean(x, 1)[0]": "VarMeanBackward0",
    "x.logsumexp(1)": "LogsumexpBackward0",
    "x.norm()": "NormBackward1",
    "x.norm(dim=1)": "NormBackward1",
    "x.prod()": "ProdBackward0",
    "x.prod(1)": "ProdBackward1",
    "x.cumsum(0)": "CumsumBackward0",
    "x.max(1)[0]": "MaxBackward0",
    "x.min(1)[0]": "MinBackward0",
    "x.sort(1)[0]": "SortBackward0",
    "x.topk(1)[0]": "TopkBackward0",
    "x.kthvalue(1)[0]": "KthvalueBackward0",
    "x.median()": "MedianBackward0",
    "x.median(1)[0]": "MedianBackward1",
    "x.cummax(1)[0]": "CummaxBackward0",
    "x.flip(0)": "FlipBackward0",
    "x.roll(1)": "RollBackward0",
    "x.tril()": "TrilBackward0",
    "x[torch.tensor([0, 1])]": "IndexBackward0",
    "x[x > 2]": "IndexBackward0",
    "F.pad(x, (1, 1))": "ConstantPadNdBackward0",
    "F.pad(x.unsqueeze(0), (1, 1), mode='reflect')": "ReflectionPad1DBackward0",
    "F.pad(x.unsqueeze(0), (1, 1, 1, 1), mode='replicate')": "ReplicationPad2DBackward0",
    "x.unfold(0, 1, 1)": "UnfoldBackward0",
    "x.split(1)[0]": "SplitBackward0",
    "x.unbind()[0]": "UnbindBackward0",
    "x.chunk(2)[0]": "SplitBackward0",
    "torch.diag(x)": "DiagBackward0",
    "x.movedim(0, 1)": "PermuteBackward0",
    "x.mT": "TransposeBackward0",
    "torch.take(x, torch.tensor([0]))": "TakeBackward0",
    "torch.masked_select(x, x > 1)": "MaskedSelectBackward0",
    "x.masked_fill(x > 1, 0)": "MaskedFillBackward0",
    "x.index_fill(0, torch.tensor([0]), 1.0)": "IndexFillBackward0",
    "x.index_add(0, torch.tensor([0]), y[:1])": "IndexAddBackward0",
    "x.scatter(0, torch.tensor([[0, 1]]), y)": "ScatterBackward0",
    "x.scatter_add(0, torch.tensor([[0, 1]]), y)": "ScatterAddBackward0",
    "F.conv2d(x.reshape(1, 1, 2, 2), y.reshape(1, 1, 2, 2))": "ConvolutionBackward0",
    "F.conv_transpose2d(x.reshape(1, 1, 2, 2), y.reshape(1, 1, 2, 2))": "ConvolutionBackward0",
    "F.max_pool2d(x.reshape(1, 1, 2, 2), 2)": "MaxPool2DWithIndicesBackward0",
    "F.avg_pool2d(x.reshape(1, 1, 2, 2), 2)": "AvgPool2DBackward0",
    "F.adaptive_avg_pool2d(x.reshape(1, 1, 2, 2), 1)": "MeanBackward1",
    "F.adaptive_max_pool2d(x.reshape(1, 1, 2, 2), 1)": "AdaptiveMaxPool2DBackward0",
    "F.layer_norm(x, (2,))": "NativeLayerNormBackward0",
    "F.group_norm(x.reshape(1, 2, 2), 1)": "NativeGroupNormBackward0",
    "F.batch_norm(x, None, None, training=True)": "NativeBatchNormBackward0",
    "F.elu(x)": "EluBackward0",
    "F.softplus(x)": "SoftplusBackward0",
    "F.mish(x)": "MishBackward0",
    "F.hardswish(x)": "HardswishBackward0",
    "F.hardsigmoid(x)": "HardsigmoidBackward0",
    "F.logsigmoid(x)": "LogSigmoidBackward0",
    "F.glu(x)": "GluBackward0",
    "F.softmin(x, 1)": "SoftmaxBackward0",
    "F.l1_loss(x, y)": "MeanBackward0",
    "F.smooth_l1_loss(x, y)": "SmoothL1LossBackward0",
    "F.huber_loss(x, y)": "HuberLossBackward0",
    "F.binary_cross_entropy(x.sigmoid(), y.sigmoid().detach())": "BinaryCrossEntropyBackward0",
    "F.binary_cross_entropy_with_logits(x, y)": "BinaryCrossEntropyWithLogitsBackward0",
    "F.kl_div(x, y, reduction='batchmean')": "DivBackward0",
    "F.max_pool1d(x.reshape(1, 1, 4), 2)": "SqueezeBackward1",
    "x.nansum()": "NansumBackward0",
    "torch.fmax(x, y)": "FmaxBackward0",
    "F.embedding_bag(torch.tensor([0, 1, 1]), x, torch.tensor([0, 1]), mode='max')":
    "EmbeddingBagBackward0",
    "F.embedding_bag(torch.tensor([[0, 1]]), x, per_sample_weights=y[0][None], mode='sum')":
    "EmbeddingBagBackward0",
    "F.ctc_loss(x.log_softmax(1), torch.tensor([1]), [2], [1])": "MeanBackward0",
    "F.ctc_loss(x.log_softmax(1), torch.tensor([1]), [2], [1], reduction='sum')": "SumBackward0",
    "F.ctc_loss(x, torch.tensor([1]), [2], [1], reduction='none')": "SqueezeBackward1",
    "F.ctc_loss(x[:, None], torch.tensor([[1]]), [2], [1], reduction='none')": "CtcLossBackward0",
    "F.ctc_loss(x[:, None], torch.tensor([[1]]), [2], [1], reduction='none', zero_infinity=True)":
    "WhereBackward0",
    "torch.linalg.cholesky(x @ x.mT + torch.eye(2))": "LinalgCholeskyExBackward0",
    "torch.linalg.cholesky_ex(x @ x.mT + torch.eye(2), upper=True)[0]":
    "LinalgCholeskyExBackward0",
    "torch.linalg.eigh(x @ x.mT)[1]": "LinalgEighBackward0",
    "torch.linalg.eigvalsh(x @ x.mT, UPLO='U')": "LinalgEighBackward0",
    "torch.linalg.qr(x)[0]": "LinalgQrBackward0",
    "torch.linalg.qr(x, mode='r')[1]": "LinalgQrBackward0",
    "torch.linalg.svd(x)[1]": "LinalgSvdBackward0",
    "torch.linalg.svdvals(x)": "LinalgSvdBackward0",
    "torch.linalg.pinv(x)": "LinalgPinvBackward0",
    "torch.linalg.pinv(x @ x.mT, hermitian=True)": "LinalgPinvBackward0",
    "torch.linalg.matrix_power(x, 0)": "torch::autograd::CopyBackwards",
    "torch.linalg.matrix_power(x, 1)": "CloneBackward0",
    "torch.linalg.matrix_power(x, 3)": "MmBackward0",
    "torch.linalg.matrix_power(x, -1)": "LinalgInvExBackward0",
    "torch.linalg.matrix_power(x, -2)": "MmBackward0",
    "torch.linalg.matrix_power(x.expand(2, 2, 2), 2)": "UnsafeViewBackward0",
    "torch.linalg.multi_dot([x, y, x])": "ViewBackward0",
    "torch.linalg.multi_dot([x[0], y, x[1]])": "ViewBackward0",
    "torch.linalg.lu_factor(x)[0]": "LinalgLuFactorExBackward0",
    "torch.linalg.lu_factor_ex(x)[0]": "LinalgLuFactorExBackward0",
    "torch.linalg.lu(x)[1]": "LinalgLuBackward0",
    "torch.linalg.lu_solve(*torch.linalg.lu_factor(x), y)": "LinalgLuSolveBackward0",
    "torch.lu_unpack(*torch.linalg.lu_factor(x))[2]": "LuUnpackBackward0",
    "torch.linalg.householder_product(x, y[0])": "LinalgHouseholderProductBackward0",
    "torch.orgqr(x, y[1])": "LinalgHouseholderProductBackward0",
    "x.split([1, 1])[1]": "SplitWithSizesBackward0",
    "x.tensor_split(2)[1]": "SliceBackward0",
    "x.unsafe_split(1)[0]": "UnsafeSplitBackward0",
    "torch.unsafe_split_with_sizes(x, [1, 1])[1]": "UnsafeSplitWithSizesBackward0",
    # random draws and fills: torch's nodes (zero gradients)
    "x.clone().exponential_()": "ExponentialBackward0",
    "x.clone().geometric_(0.5)": "GeometricBackward0",
    "x.clone().cauchy_()": "CauchyBackward0",
    "x.clone().log_normal_()": "LogNormalBackward0",
    "x.clone().random_(0, 5)": "RandomBackward0",
    "x.clone().random_(5)": "RandomBackward1",
    "x.clone().random_()": "RandomBackward2",
    "x.clone().uniform_()": "UniformBackward0",
    "x.clone().normal_()": "NormalBackward0",
    "x.clone().bernoulli_(0.5)": "BernoulliBackward2",
    "x.clone().bernoulli_(y.detach().abs() / 4)": "BernoulliBackward1",
    "torch.bernoulli(x / 5)": "BernoulliBackward0",
    "x.clone().fill_(2.0)": "FillBackward2",
    "x.clone().fill_(y[0, 0])": "FillBackward3",
    "torch.normal(x, 1.0)": "NormalBackward1",
    "torch.normal(1.0, x)": "NormalBackward2",
    "torch.normal(x, y.abs())": "NormalBackward3",
    "x.clone().floor_divide_(y)": "torch::autograd::NotImplemented",
    "torch.histogram(x, torch.tensor([0.0, 1.0, 3.0]))[0]": "torch::autograd::NotImplemented",
    # dropout on the CPU is a product with the mask (torch's CUDA one the fused native_dropout)
    "F.dropout(x, 0.5)": "MulBackward0",
    "F.dropout(x * 1, 0.5, inplace=True)": "MulBackward0",
    "F.dropout2d(x[None, None], 0.5)": "MulBackward0",
    "F.dropout1d(x, 0.5)": "SqueezeBackward1",
    "F.dropout1d(x * 1, 0.5, inplace=True)": "SqueezeBackward3",
    "F.dropout3d(x[None, None], 0.5)": "SqueezeBackward1",
    "torch.index_reduce(x, 0, torch.tensor([1, 1]), y, 'prod')": "IndexReduceBackward0",
    "x.unique()": "Unique2Backward0",
    "torch.unique(x, dim=0)": "UniqueDimBackward0",
    "x.unique_consecutive()": "UniqueConsecutiveBackward0",
}


@pytest.mark.parametrize("expr", sorted(GRAD_FN_NAMES))
def test_grad_fn_names_are_torchs(session, expr):
    """The node's name() and its class (torch's grad_fn objects are of one class per formula,
    which programs print)."""
    names, classes = [], []
    for m in (real_torch, tensord):
        env = {"torch": m, "F": m.nn.functional,
               "x": m.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True),
               "y": m.tensor([[0.5, 1.5], [2.5, -1.0]], requires_grad=True)}
        grad_fn = eval(expr, env).grad_fn  # noqa: S307 - the test's own table
        names.append(grad_fn.name())
        classes.append((type(grad_fn).__name__, type(grad_fn).__module__,
                        repr(grad_fn).rpartition(" object at ")[0]))
    assert names[1] == names[0] == GRAD_FN_NAMES[expr]
    assert classes[1] == classes[0]


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
    "unique_backward": """
        x = torch.tensor([3.0, 1.0, 3.0], requires_grad=True)
        x.unique(return_counts=True)[0].sum().backward()
    """,
    "unique_dim_backward": """
        x = torch.tensor([[3.0], [1.0]], requires_grad=True)
        torch.unique(x, dim=0).sum().backward()
    """,
    "saved_output_modified_in_place": """
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        y = x.exp()
        y.add_(1)
        y.sum().backward()
    """,
    "saved_input_with_history_modified_in_place": """
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        h = x * 2
        y = (h * h).sum()
        h.sub_(1)
        y.backward()
    """,
    "saved_tensor_modified_under_anomaly_detection": """
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        with torch.autograd.detect_anomaly():
            y = x.sigmoid()
            y.mul_(2)
            y.sum().backward()
    """,
    "in_place_write_of_an_alias_of_an_operand": """
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        y = x * 1
        y.mul_(y.detach())
        y.sum().backward()
    """,
    "numpy_of_a_tensor_that_requires_grad": """
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        (x * 2).numpy()
    """,
    "in_place_on_a_view_of_a_leaf": """
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        x[0].mul_(2)
    """,
    "in_place_on_a_view_made_a_leaf": """
        x = torch.zeros(4)
        v = x[:2]
        v.requires_grad_()
        v.mul_(2)
    """,
    "in_place_on_a_whole_view_of_a_leaf": """
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        x.view(2, 1).add_(1)
    """,
    "igamma_is_differentiable_in_other_only": """
        a = torch.tensor([1.5, 2.0], requires_grad=True)
        torch.igamma(a, torch.tensor([0.5, 1.0])).sum().backward()
    """,
    "retain_grad_without_grad": """
        torch.tensor([1.0]).retain_grad()
    """,
    "qr_mode_r_backward": """
        x = torch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 7.0]], requires_grad=True)
        torch.linalg.qr(x, mode='r')[1].sum().backward()
    """,
    "lu_unpack_without_data_backward": """
        x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        P, L, U = torch.lu_unpack(*torch.linalg.lu_factor(x), unpack_data=False)
        (L.sum() + U.sum()).backward()
    """,
    "qr_complete_tall_backward": """
        x = torch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 7.0]], requires_grad=True)
        Q, R = torch.linalg.qr(x, mode='complete')
        (Q * 2).sum().backward()
    """,
}


def _outcome(module, code):
    try:
        run(module, code)
    except Exception as e:  # noqa: BLE001 - the class and words are what is compared
        return type(e).__name__, str(e)
    return None


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_misuse_raises_torchs_error(session, name):
    expected = _outcome(real_torch, ERRORS[name])
    got = _outcome(tensord, ERRORS[name])
    assert expected is not None and got is not None
    assert got == expected


def test_a_leaf_is_unchanged_when_its_in_place_op_is_refused(session):
    x = tensord.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        x.add_(1)
    assert x.tolist() == [1.0, 2.0]
    with tensord.no_grad():
        x.add_(1)
    assert x.tolist() == [2.0, 3.0] and x.requires_grad and x.is_leaf


_EARLIER_VIEWS = """
buf = torch.zeros(3); first = buf[0]; row = buf[1:]; pair = buf.view(3, 1).t()
x = torch.zeros(4); v = x[1:3]
print(v._base is x, v[1:]._base is x, x._base, x.detach()._base, x.reshape(2, 2)._base is x,
      (x * 2)._base, x.clone()._is_view(), v._is_view())
w = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
buf.add_(w * 2)
loss = first * 2 + (row * 3).sum() + (pair * pair).sum() + w.sum()
print(first.requires_grad, first.grad_fn.name(), pair.grad_fn.name())
loss.backward()
print(w.grad.tolist())
w2 = torch.tensor([1.0, 2.0], requires_grad=True)
v.mul_(w2)
v.add_(w2)
print(x.grad_fn.name(), v.grad_fn.name())
(x * torch.arange(4.0)).sum().backward()
print(w2.grad.tolist(), x.tolist())
"""


def test_views_made_before_autograd_was_active_follow_their_base(server):
    """A view made before any tensor required grad (in a process where none has yet: autograd
    inactive, no view linked while it costs) learns its base when a tensor first requires
    grad: an in-place op recorded on its base later regenerates its history, and one on it
    gives the base CopySlices, as in torch. `_base` and `_is_view` as torch's."""
    script = "import tensord as torch\n" + _EARLIER_VIEWS
    env = dict(os.environ, TENSORD_ADDRESS=server,
               PYTHONPATH=os.path.join(ROOT, "client", "python"))
    ours = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                          text=True, timeout=120)
    assert ours.returncode == 0, ours.stderr
    theirs = io.StringIO()
    with contextlib.redirect_stdout(theirs):
        exec(_EARLIER_VIEWS, {"torch": real_torch})  # noqa: S102 - the same program on torch
    assert ours.stdout == theirs.getvalue()
    assert "CopySlices" in ours.stdout and "AsStridedBackward0" in ours.stdout


def test_in_place_on_a_tensor_sharing_storage_unknown_to_autograd_is_refused(session):
    """A tensor given another's storage by set_ is no view autograd knows: an in-place op
    recorded on it, which would leave the other tensor's history stale, is refused before it
    writes. A detached alias is no view: its writes change no history (torch's version counter
    still sees them)."""
    w = tensord.tensor([1.0, 2.0, 3.0], requires_grad=True)
    h = tensord.zeros(2, 3)
    r = tensord.zeros(3).set_(h.storage(), 3, (3,), (1,))
    with pytest.raises(RuntimeError, match="shares its storage with tensors autograd does not"):
        r.add_(w)
    assert h.tolist() == [[0.0] * 3] * 2 and not h.requires_grad and not r.requires_grad
    y = w * 2
    d = y.detach()
    y.relu_()
    d.add_(1)
    assert not d.requires_grad and y.grad_fn.name() == "ReluBackward0"
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_in_place_ops_on_views_leave_no_reference_cycles(session):
    """A base written through its views holds CopySlices nodes that lead back to the views'
    nodes: those keep shapes, not the base; a node that saves its own output keeps an alias
    whose history it holds weakly: so tensors go when the program drops them, without waiting
    for Python's cycle collector (their server storage with them). A node that saved a view of
    the base (x[0] += x[1] * w, exp_ of a view) does hold the base through that view, as torch's
    saved variables do: that cycle is the collector's."""
    import gc
    import weakref
    w = tensord.ones(4, requires_grad=True)
    refs, saved = [], []
    gc.disable()
    try:
        for _ in range(3):
            x = tensord.zeros(3, 4)
            x[1] = w * 2
            x[2].mul_(w)
            x[0] = x[2] + 1
            e = (w * 2).exp()  # saves its output: an alias, whose history it holds weakly
            s = e.sigmoid()
            s.tanh_()
            refs += [weakref.ref(x), weakref.ref(e), weakref.ref(s)]
            y = tensord.zeros(3, 4)
            y[0].add_(y[1] * w)
            z = w * 1
            z[1:3].exp_()  # saves the view it wrote
            saved += [weakref.ref(y), weakref.ref(z)]
            del x, y, e, s, z
        tensord.synchronize()  # queued ops hold their outputs until they are sent
        assert [r() for r in refs] == [None] * 9
        gc.collect()
        assert [r() for r in saved] == [None] * 6
    finally:
        gc.enable()


def test_non_reentrant_checkpoint_keeps_no_activations(session):
    """Under checkpoint(use_reentrant=False) the nodes keep placeholders, not the tensors their
    ops saved: an activation made inside the segment goes when the segment returns (without it,
    the product's node keeps it until backward)."""
    import gc
    import weakref
    refs = []

    def segment(t):
        h = t.exp()
        refs.append(weakref.ref(h))
        return (h * h).sum()
    x = tensord.ones(4, requires_grad=True)
    gc.disable()
    try:
        kept = segment(x)
        out = tensord.utils.checkpoint.checkpoint(segment, x, use_reentrant=False)
        tensord.synchronize()
        assert refs[0]() is not None and refs[1]() is None
        (kept + out).backward()
        assert np.allclose(x.grad.numpy(), 4 * np.e ** 2)  # 2 e^2t from each, t = 1
    finally:
        gc.enable()


def test_non_leaf_grad_warns_as_torch(session):
    x = tensord.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert y.grad is None
    assert any("is not a leaf Tensor" in str(w.message) for w in caught)


def test_an_op_without_a_formula_fails_at_backward_naming_it(session):
    x = tensord.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    y = tensord.nextafter(x, tensord.zeros(2, 2))  # torch 1.13 has no formula either
    assert y.requires_grad and y.grad_fn.name() == "NextafterBackward0"
    with pytest.raises(RuntimeError, match="the derivative for 'nextafter' is not implemented"):
        y.sum().backward()


def test_special_functions_without_derivatives_give_outputs_without_grad(session):
    """torch 1.13's Bessel, Airy and polynomial functions of torch.special are not
    differentiable: their outputs do not require grad (no node, as torch's)."""
    for m in (real_torch, tensord):
        x = m.tensor([0.5, 1.5], requires_grad=True)
        for name in ("bessel_j0", "bessel_y1", "modified_bessel_k0", "scaled_modified_bessel_k1",
                     "spherical_bessel_j0", "airy_ai", "modified_bessel_i1"):
            y = getattr(m.special, name)(x)
            assert not y.requires_grad and y.grad_fn is None, (m, name)
        for name in ("chebyshev_polynomial_t", "hermite_polynomial_he",
                     "legendre_polynomial_p"):
            for y in (getattr(m.special, name)(x, 3), getattr(m.special, name)(x, x)):
                assert not y.requires_grad and y.grad_fn is None, (m, name)


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
    # torch's CPU dropout multiplies by the mask; its CUDA one is the fused native_dropout
    assert y.grad_fn.name() == ("MulBackward0" if x.device.type == "cpu"
                                else "NativeDropoutBackward0")
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
