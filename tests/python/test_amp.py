"""Mixed precision against torch 1.13: programs run with `torch` bound to real torch and to
tensord print the same text (autocast's state and its errors and warnings, the dtypes ops give
under cpu autocast, a training step's gradients), the values of the cast ops match torch's
within bfloat16's precision, and GradScaler on a server without CUDA warns and passes through
as torch's. Its scaling arithmetic (unscale with the inf/NaN check, the scale's growth and
backoff) is checked against torch's documented algorithm on cpu tensors.
"""
import gc
import os
import subprocess
import sys
import textwrap
import threading
import warnings

import numpy as np
import pytest
import torch as real_torch
import torch.utils.checkpoint  # noqa: F401 - real torch's torch.utils.checkpoint, for a program

import tensord
from tensord import _autocast
from tensord.cuda.amp import grad_scaler as tensord_grad_scaler

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run(module, code, **extra):
    """What `code` prints with `torch` bound to `module`; warnings are printed as they come
    (class and message), so that they are part of the text compared."""
    out = []

    def show(message, category, filename, lineno, file=None, line=None):
        out.append(f"warning {category.__name__}: {message}")

    env = {"torch": module, "F": module.nn.functional, **extra,
           "print": lambda *a, **k: out.append(" ".join(str(x) for x in a))}
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.showwarning = show
        exec(textwrap.dedent(code), env)  # noqa: S102 - the same program on both
    return "\n".join(out)


PROGRAMS = {
    "state_and_nesting": """
        print(torch.is_autocast_cpu_enabled(), torch.get_autocast_cpu_dtype(),
              torch.is_autocast_enabled(), torch.get_autocast_gpu_dtype(),
              torch.is_autocast_cache_enabled())
        x, w = torch.ones(2, 3), torch.ones(3, 3)
        with torch.autocast("cpu"):
            print(torch.is_autocast_cpu_enabled(), torch.mm(x, w).dtype)
            with torch.autocast("cpu", enabled=False):
                print(torch.is_autocast_cpu_enabled(), torch.mm(x, w).dtype)
                with torch.cpu.amp.autocast():
                    print(torch.is_autocast_cpu_enabled(), (x @ w).dtype)
            print(torch.is_autocast_cpu_enabled(), torch.mm(x, w).dtype)
            print(torch.autocast_increment_nesting(), torch.autocast_decrement_nesting())
        print(torch.is_autocast_cpu_enabled(), torch.mm(x, w).dtype)
        with torch.autocast("cpu", dtype=torch.bfloat16, cache_enabled=False):
            print(torch.is_autocast_cache_enabled(), torch.mm(x, w).dtype)
        print(torch.is_autocast_cache_enabled())
        a = torch.autocast("cpu")
        print(a.device, a.fast_dtype, a._enabled, a._cache_enabled, a.__enter__())
        a.__exit__(None, None, None)
        torch.set_autocast_cpu_enabled(True)
        print(torch.mm(x, w).dtype, torch.mm(x.long(), w.long()).dtype,
              torch.mm(x.double(), w.double()).dtype, torch.mm(x.half(), w.half()).dtype)
        torch.set_autocast_cpu_enabled(False)
        print(torch.mm(x, w).dtype)
        torch.set_autocast_gpu_dtype(torch.bfloat16)
        print(torch.get_autocast_gpu_dtype())
        torch.set_autocast_gpu_dtype(torch.float16)
        torch.set_autocast_enabled(True)
        print(torch.is_autocast_enabled(), torch.mm(x, w).dtype)  # cuda's: cpu ops as they are
        torch.set_autocast_enabled(False)
    """,
    "decorators": """
        x, w = torch.ones(2, 3), torch.ones(3, 3)

        @torch.autocast("cpu")
        def f(a, b):
            '''f's doc'''
            return torch.mm(a, b).dtype, torch.is_autocast_cpu_enabled()

        @torch.cpu.amp.autocast()
        def g(a):
            return (a @ a).dtype

        @torch.cpu.amp.autocast(enabled=False)
        def h(a):
            return (a @ a).dtype

        print(f(x, w), f.__name__, f.__doc__, torch.is_autocast_cpu_enabled(), g(w))
        with torch.autocast("cpu"):
            print(h(w), torch.mm(x, w).dtype)
    """,
    "bad_arguments": """
        for make in ("torch.autocast('xla')", "torch.autocast('cuda:0')",
                     "torch.autocast(torch.device('cpu'))", "torch.autocast()",
                     "torch.set_autocast_cpu_dtype(torch.float16)",
                     "torch.set_autocast_cpu_dtype('x')", "torch.set_autocast_gpu_dtype(1)",
                     "torch.set_autocast_enabled(1)", "torch.set_autocast_cpu_enabled(None)",
                     "torch.set_autocast_cache_enabled('yes')"):
            try:
                print(make, eval(make))
            except Exception as e:
                print(make, type(e).__name__, e)
        for kwargs in ({"dtype": torch.float16}, {"dtype": torch.float64},
                       {"dtype": torch.float16, "enabled": False}, {"enabled": "yes"},
                       {"enabled": 0}, {"dtype": "bfloat16"}, {"dtype": float}):
            try:
                with torch.autocast("cpu", **kwargs):
                    print(kwargs, "entered", torch.is_autocast_cpu_enabled())
            except Exception as e:
                print(kwargs, type(e).__name__, e)
            torch.set_autocast_cpu_enabled(False)
        try:
            with torch.cpu.amp.autocast(dtype=torch.float16):
                pass
        except RuntimeError as e:
            print("cpu.amp", e)
        try:
            torch.autocast("cpu").__exit__(None, None, None)
        except AttributeError as e:
            print("exit first:", e)
        print(torch.autocast_increment_nesting())  # back to 0 (the failed exit decremented it)
        print(torch.is_autocast_cpu_enabled(), torch.get_autocast_cpu_dtype())
    """,
    "cuda_autocast_without_cuda": """
        x, w = torch.ones(2, 3), torch.ones(3, 3)
        for make in (lambda: torch.autocast("cuda"), lambda: torch.cuda.amp.autocast(),
                     lambda: torch.autocast("cuda", enabled=False)):
            ac = make()
            with ac:
                print(ac._enabled, ac.fast_dtype, torch.is_autocast_enabled(),
                      torch.get_autocast_gpu_dtype(), torch.mm(x, w).dtype)
    """,
    "threads": """
        import threading
        x, w = torch.ones(2, 3), torch.ones(3, 3)
        seen = []

        def worker():
            seen.append(("worker", torch.is_autocast_cpu_enabled(), torch.mm(x, w).dtype))
            with torch.autocast("cpu"):
                seen.append(("worker in", torch.mm(x, w).dtype))

        with torch.autocast("cpu"):
            t = threading.Thread(target=worker)
            t.start()
            t.join()
            seen.append(("main", torch.is_autocast_cpu_enabled(), torch.mm(x, w).dtype))
        print(seen)
    """,
    "weight_cache": """
        w = torch.nn.Parameter(torch.ones(3, 3))
        x = torch.ones(2, 3)
        for cache in (True, False):
            with torch.autocast("cpu", cache_enabled=cache):
                a, b, c = torch.mm(x, w), torch.mm(x, w), torch.mm(x, w.t())
                wa, wb = a.grad_fn.next_functions[1][0], b.grad_fn.next_functions[1][0]
                print(cache, wa.name(), wa is wb, c.grad_fn.next_functions[1][0].name(),
                      a.grad_fn.name(), c.dtype)
    """,
    "casts_are_recorded": """
        x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        w = torch.tensor([[0.5, -1.0], [2.0, 0.25]], requires_grad=True)
        b = torch.tensor([0.1, 0.2], requires_grad=True)
        with torch.autocast("cpu"):
            y = F.linear(x, w, b)
            z = torch.cat([y, x])
            s = torch.nn.functional.mse_loss(z, torch.zeros(4, 2))
        print(y.dtype, y.grad_fn.name(), [n[0].name() for n in y.grad_fn.next_functions],
              z.dtype, z.grad_fn.name(), s.dtype, s.grad_fn.name())
        s.backward()
        print(x.grad.dtype, w.grad.dtype, b.grad.dtype)
        print(x.grad, w.grad, b.grad)
    """,
    "custom_function_decorators": """
        class Scale(torch.autograd.Function):
            @staticmethod
            @torch.cuda.amp.custom_fwd(cast_inputs=torch.float32)
            def forward(ctx, x, factor):
                ctx.factor = factor
                print("forward", x.dtype, ctx._fwd_used_autocast, torch.is_autocast_enabled())
                return x * factor

            @staticmethod
            @torch.cuda.amp.custom_bwd
            def backward(ctx, grad):
                print("backward", grad.dtype, torch.is_autocast_enabled())
                return grad * ctx.factor, None

        class Plain(torch.autograd.Function):
            @staticmethod
            @torch.cuda.amp.custom_fwd
            def forward(ctx, x):
                return x.mm(x)

            @staticmethod
            @torch.cuda.amp.custom_bwd
            def backward(ctx, grad):
                return grad

        x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        with torch.autocast("cpu"):
            y = Scale.apply(x, 3.0)
            z = Plain.apply(x)
        print(y.dtype, z.dtype)
        (y.sum() + z.float().sum()).backward()
        print(x.grad)
    """,
    "checkpoint_under_autocast": """
        w1 = torch.nn.Parameter(torch.tensor([[0.5, -1.0], [2.0, 0.25]]))
        w2 = torch.nn.Parameter(torch.tensor([[1.5, 0.5], [-0.5, 1.0]]))

        seen = []

        def segment(x):
            h = torch.relu(x @ w1)
            seen.append(str(h.dtype))  # the first run's, then the recomputation's
            return h @ w2

        x = torch.tensor([[1.0, 2.0], [3.0, -4.0]], requires_grad=True)
        for reentrant in (True, False):
            with torch.autocast("cpu"):
                y = torch.utils.checkpoint.checkpoint(segment, x, use_reentrant=reentrant)
                loss = y.float().pow(2).sum()
            print(reentrant, y.dtype, loss.dtype)
            loss.backward()
            print(x.grad, w1.grad, w2.grad, seen)
            x.grad = w1.grad = w2.grad = None
            seen.clear()
    """,
    "modules": """
        import numpy as np
        rng = np.random.default_rng(0)

        def r(*s):
            return torch.tensor(rng.standard_normal(s).astype(np.float32))

        def dt(o):
            return tuple(dt(t) for t in o) if isinstance(o, tuple) else str(o.dtype)

        def init(m):
            with torch.no_grad():
                for p in m.parameters():
                    p.copy_(r(*p.shape) * 0.3)
            return m
        cases = [
            (torch.nn.Linear(4, 3), (r(2, 4),)), (torch.nn.Conv1d(2, 3, 3), (r(1, 2, 6),)),
            (torch.nn.Conv2d(2, 3, 3, padding=1), (r(1, 2, 4, 4),)),
            (torch.nn.ConvTranspose2d(2, 3, 3), (r(1, 2, 4, 4),)),
            (torch.nn.LSTM(4, 3), (r(5, 2, 4),)), (torch.nn.GRU(4, 3), (r(5, 2, 4),)),
            (torch.nn.RNN(4, 3), (r(5, 2, 4),)), (torch.nn.LSTMCell(4, 3), (r(2, 4),)),
            (torch.nn.GRUCell(4, 3), (r(2, 4),)), (torch.nn.RNNCell(4, 3), (r(2, 4),)),
            (torch.nn.MultiheadAttention(4, 2), (r(3, 2, 4), r(3, 2, 4), r(3, 2, 4))),
            (torch.nn.TransformerEncoderLayer(4, 2, 8, dropout=0.0), (r(3, 2, 4),)),
            (torch.nn.Bilinear(4, 4, 3), (r(2, 4), r(2, 4))), (torch.nn.PReLU(), (r(2, 4),)),
            (torch.nn.BatchNorm1d(4), (r(2, 4),)), (torch.nn.LayerNorm(4), (r(2, 4),)),
            (torch.nn.Embedding(5, 4), (torch.tensor([1, 2]),)),
        ]
        with torch.autocast("cpu"):
            for m, args in cases:
                print(type(m).__name__, dt(init(m)(*args)))
    """,
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_program_prints_what_torch_prints(session, name):
    expected = run(real_torch, PROGRAMS[name])
    got = run(tensord, PROGRAMS[name])
    assert got == expected
    assert not _autocast._state.cpu and not _autocast._state.cuda


# ---- the dtype and value of each op under cpu autocast ----

def _inputs(module, dtype):
    rng = np.random.default_rng(0)

    def r(*shape):
        return module.tensor(rng.standard_normal(shape).astype(np.float32)).to(dtype)
    return dict(x=r(4, 4), y=r(4, 4), b3=r(2, 4, 4), img=r(1, 2, 5, 5), w2=r(3, 2, 3, 3),
                w1=r(3, 2, 3), s1=r(1, 2, 5), v3=r(1, 2, 4, 4, 4), w3=r(3, 2, 2, 2, 2), v=r(4),
                pw=r(2), t5=r(5, 1, 2), wt=r(3, 2, 4), bt=r(4), bw=r(3, 4, 4))


def _eye4(m, d):
    return d["x"] + 4 * m.eye(4)


def _spd(m, d):
    return d["x"] @ d["x"].mT + m.eye(4)


# (name, function of (torch module, functional module, inputs), whether to try bfloat16 inputs
# too). Together: torch 1.13's lower-precision, float32 and promote lists as tensord has those
# ops, the Python functions that stand for one of them, and ops on no list.
OPS = [
    ("mm", lambda m, F, d: m.mm(d["x"], d["y"]), True),
    ("bmm", lambda m, F, d: m.bmm(d["b3"], d["b3"]), True),
    ("matmul", lambda m, F, d: m.matmul(d["x"], d["y"]), True),
    ("matmul_operator", lambda m, F, d: d["x"] @ d["y"], True),
    ("matmul_vector", lambda m, F, d: d["v"] @ d["x"], True),
    ("addmm", lambda m, F, d: m.addmm(d["x"], d["x"], d["y"]), True),
    ("baddbmm", lambda m, F, d: m.baddbmm(d["b3"], d["b3"], d["b3"]), True),
    ("addbmm", lambda m, F, d: m.addbmm(d["x"], d["b3"], d["b3"]), True),
    ("linear", lambda m, F, d: F.linear(d["x"], d["y"], d["v"]), True),
    ("linear_3d", lambda m, F, d: F.linear(d["b3"], d["y"]), True),
    ("linear_3d_strided_bias", lambda m, F, d: F.linear(d["b3"].transpose(0, 1), d["y"], d["v"]),
     True),
    ("mv", lambda m, F, d: m.mv(d["x"], d["v"]), True),
    ("dot", lambda m, F, d: m.dot(d["v"], d["v"]), True),
    ("addmv", lambda m, F, d: m.addmv(d["v"], d["x"], d["v"]), True),
    ("addr", lambda m, F, d: m.addr(d["x"], d["v"], d["v"]), True),
    ("outer", lambda m, F, d: m.outer(d["v"], d["v"]), True),
    ("inner", lambda m, F, d: m.inner(d["x"], d["y"]), True),
    ("inner_vectors", lambda m, F, d: m.inner(d["v"], d["v"]), True),
    ("tensordot", lambda m, F, d: m.tensordot(d["x"], d["y"], 1), True),
    ("chain_matmul", lambda m, F, d: m.chain_matmul(d["x"], d["y"], d["x"]), True),
    ("multi_dot", lambda m, F, d: m.linalg.multi_dot([d["x"], d["y"], d["x"]]), True),
    ("kron", lambda m, F, d: m.kron(d["x"], d["y"]), True),
    ("conv1d", lambda m, F, d: F.conv1d(d["s1"], d["w1"], d["w1"][:, 0, 0]), True),
    ("conv2d", lambda m, F, d: F.conv2d(d["img"], d["w2"], d["w2"][:, 0, 0, 0]), True),
    ("conv2d_same", lambda m, F, d: F.conv2d(d["img"], d["w2"][..., :2, :2], padding="same"),
     True),
    ("conv3d", lambda m, F, d: F.conv3d(d["v3"], d["w3"]), True),
    ("conv_transpose1d", lambda m, F, d: F.conv_transpose1d(
        d["s1"], d["w1"].transpose(0, 1).contiguous()), True),
    ("conv_transpose2d", lambda m, F, d: F.conv_transpose2d(
        d["img"], d["w2"].transpose(0, 1).contiguous()), True),
    ("conv_transpose3d", lambda m, F, d: F.conv_transpose3d(
        d["v3"], d["w3"].transpose(0, 1).contiguous()), True),
    ("conv_tbc", lambda m, F, d: m.conv_tbc(d["t5"], d["wt"], d["bt"]), True),
    ("prelu", lambda m, F, d: F.prelu(d["img"], d["pw"]), True),
    ("einsum_product", lambda m, F, d: m.einsum("ij,jk->ik", d["x"], d["y"]), True),
    ("einsum_diagonal", lambda m, F, d: m.einsum("ii->i", d["x"]), True),
    ("einsum_dot", lambda m, F, d: m.einsum("i,i->", d["v"], d["v"]), True),
    ("einsum_outer", lambda m, F, d: m.einsum("i,j->ij", d["v"], d["v"]), True),
    ("einsum_elementwise", lambda m, F, d: m.einsum("ij,ij->ij", d["x"], d["y"]), True),
    ("einsum_three", lambda m, F, d: m.einsum("ij,jk,kl->il", d["x"], d["y"], d["x"]), True),
    ("einsum_ellipsis", lambda m, F, d: m.einsum("...ij,...jk", d["b3"], d["b3"]), True),
    ("einsum_implicit", lambda m, F, d: m.einsum("ij,jk", d["x"], d["y"]), True),
    ("einsum_matrix_vector", lambda m, F, d: m.einsum("ij,j->i", d["x"], d["v"]), True),
    ("matrix_power_2", lambda m, F, d: m.linalg.matrix_power(d["x"], 2), True),
    ("matrix_power_1", lambda m, F, d: m.linalg.matrix_power(d["x"], 1), True),
    ("matrix_power_-1", lambda m, F, d: m.linalg.matrix_power(_eye4(m, d), -1), True),
    ("matrix_power_-2", lambda m, F, d: m.linalg.matrix_power(_eye4(m, d).float(), -2), False),
    ("gelu", lambda m, F, d: F.gelu(d["x"]), True),
    ("relu", lambda m, F, d: F.relu(d["x"]), True),
    ("softmax", lambda m, F, d: m.softmax(d["x"], 0), True),
    ("log_softmax", lambda m, F, d: m.log_softmax(d["x"], 0), True),
    ("layer_norm", lambda m, F, d: F.layer_norm(d["x"], (4,)), True),
    ("group_norm", lambda m, F, d: F.group_norm(d["img"], 2), True),
    ("batch_norm", lambda m, F, d: F.batch_norm(d["img"], m.zeros(2), m.ones(2)), True),
    ("exp", lambda m, F, d: d["x"].exp(), True),
    ("pow", lambda m, F, d: d["x"].pow(2), True),
    ("sum", lambda m, F, d: d["x"].sum(), True),
    ("prod", lambda m, F, d: d["x"].prod(), True),
    ("cumsum", lambda m, F, d: d["x"].cumsum(0), True),
    ("norm", lambda m, F, d: d["x"].norm(), True),
    ("std", lambda m, F, d: d["x"].std(), True),
    ("logsumexp", lambda m, F, d: d["x"].logsumexp(0), True),
    ("quantile", lambda m, F, d: d["x"].quantile(0.5), True),
    ("trace", lambda m, F, d: d["x"].trace(), True),
    ("tril", lambda m, F, d: d["x"].tril(), True),
    ("softplus", lambda m, F, d: F.softplus(d["x"]), True),
    ("normalize", lambda m, F, d: F.normalize(d["x"]), True),
    ("cosine_similarity", lambda m, F, d: F.cosine_similarity(d["x"], d["y"]), True),
    ("cdist", lambda m, F, d: m.cdist(d["x"], d["y"]), True),
    ("cov", lambda m, F, d: m.cov(d["x"]), True),
    ("avg_pool2d", lambda m, F, d: F.avg_pool2d(d["img"], 2), True),
    ("max_pool2d", lambda m, F, d: F.max_pool2d(d["img"], 2), True),
    ("avg_pool3d", lambda m, F, d: F.avg_pool3d(d["v3"], 2), True),
    ("max_pool3d", lambda m, F, d: F.max_pool3d(d["v3"], 2), True),
    ("max_pool3d_recorded", lambda m, F, d: F.max_pool3d(d["v3"].requires_grad_(), 2), True),
    ("adaptive_avg_pool3d", lambda m, F, d: F.adaptive_avg_pool3d(d["v3"], 1), True),
    ("interpolate", lambda m, F, d: F.interpolate(d["img"], scale_factor=2), True),
    ("grid_sample", lambda m, F, d: F.grid_sample(d["img"], d["x"].view(1, 2, 4, 2).tanh(),
                                                  align_corners=False), True),
    ("affine_grid", lambda m, F, d: F.affine_grid(d["b3"][:, :2, :3], (2, 1, 3, 3),
                                                  align_corners=False), True),
    ("unfold", lambda m, F, d: F.unfold(d["img"], 2), True),
    ("pad_reflect", lambda m, F, d: F.pad(d["s1"], (1, 1), mode="reflect"), True),
    ("pad_replicate_3d", lambda m, F, d: F.pad(d["v3"], (1, 1, 1, 1, 1, 1), mode="replicate"),
     True),
    ("pad_constant", lambda m, F, d: F.pad(d["s1"], (1, 1)), True),
    ("pad_circular", lambda m, F, d: F.pad(d["s1"], (1, 1), mode="circular"), True),
    ("embedding", lambda m, F, d: F.embedding(m.tensor([0, 1]), d["x"]), True),
    ("dropout_eval", lambda m, F, d: F.dropout(d["x"], training=False), True),
    ("where", lambda m, F, d: m.where(d["x"] > 0, d["x"], d["y"]), True),
    ("add", lambda m, F, d: d["x"] + d["y"], True),
    ("mse_loss", lambda m, F, d: F.mse_loss(d["x"], d["y"]), True),
    ("l1_loss", lambda m, F, d: F.l1_loss(d["x"], d["y"]), True),
    ("smooth_l1_loss", lambda m, F, d: F.smooth_l1_loss(d["x"], d["y"]), True),
    ("huber_loss", lambda m, F, d: F.huber_loss(d["x"], d["y"]), True),
    ("kl_div", lambda m, F, d: F.kl_div(d["x"], d["y"], reduction="batchmean"), True),
    ("cross_entropy", lambda m, F, d: F.cross_entropy(d["x"], m.tensor([0, 1, 2, 3])), True),
    ("nll_loss", lambda m, F, d: F.nll_loss(d["x"], m.tensor([0, 1, 2, 3])), True),
    ("binary_cross_entropy", lambda m, F, d: F.binary_cross_entropy(d["x"].sigmoid(),
                                                                    d["y"].sigmoid()), True),
    ("binary_cross_entropy_with_logits",
     lambda m, F, d: F.binary_cross_entropy_with_logits(d["x"], d["y"]), True),
    ("soft_margin_loss", lambda m, F, d: F.soft_margin_loss(d["x"], m.ones(4, 4)), True),
    ("multi_margin_loss", lambda m, F, d: F.multi_margin_loss(d["x"], m.tensor([0, 1, 2, 3])),
     True),
    ("margin_ranking_loss", lambda m, F, d: F.margin_ranking_loss(d["v"], d["v"].flip(0),
                                                                  m.ones(4)), True),
    ("triplet_margin_loss", lambda m, F, d: F.triplet_margin_loss(d["x"], d["y"],
                                                                  d["x"].flip(0)), True),
    ("hinge_embedding_loss", lambda m, F, d: F.hinge_embedding_loss(d["x"], m.ones(4, 4)), True),
    ("poisson_nll_loss", lambda m, F, d: F.poisson_nll_loss(d["x"], d["y"].abs()), True),
    ("cosine_embedding_loss", lambda m, F, d: F.cosine_embedding_loss(d["x"], d["y"], m.ones(4)),
     True),
    ("multilabel_margin_loss", lambda m, F, d: F.multilabel_margin_loss(
        d["x"], m.tensor([[0, 1, -1, 0]] * 4)), True),
    ("ctc_loss", lambda m, F, d: F.ctc_loss(d["x"].view(4, 1, 4).log_softmax(2),
                                            m.tensor([[1, 2]]), [4], [2]), True),
    ("bilinear", lambda m, F, d: F.bilinear(d["x"], d["x"], d["bw"][:3]), True),
    ("cat_mixed", lambda m, F, d: m.cat([d["x"], d["y"].bfloat16()]), True),
    ("cat_float64", lambda m, F, d: m.cat([d["x"].double(), d["y"]]), True),
    ("cat_int", lambda m, F, d: m.cat([d["x"].long(), d["y"]]), True),
    ("stack_mixed", lambda m, F, d: m.stack([d["x"], d["y"].bfloat16()]), True),
    ("index_copy", lambda m, F, d: d["x"].index_copy(0, m.tensor([0]), d["y"][:1].bfloat16()),
     True),
    ("index_copy_bfloat16_self", lambda m, F, d: d["x"].bfloat16().index_copy(
        0, m.tensor([0]), d["y"][:1].float()), True),
    ("integer_mm", lambda m, F, d: m.mm(m.ones(2, 2, dtype=m.long), m.ones(2, 2, dtype=m.long)),
     False),
    ("float64_mm", lambda m, F, d: m.mm(d["x"].double(), d["y"].double()), False),
    ("float16_mm", lambda m, F, d: m.mm(d["x"].half(), d["y"].half()), False),
    ("inverse", lambda m, F, d: m.inverse(_eye4(m, d)), True),
    ("linalg_inv", lambda m, F, d: m.linalg.inv(_eye4(m, d)), True),
    ("linalg_solve", lambda m, F, d: m.linalg.solve(_eye4(m, d), d["y"]), True),
    ("linalg_svdvals", lambda m, F, d: m.linalg.svdvals(d["x"]), True),
    ("linalg_qr", lambda m, F, d: m.linalg.qr(d["x"]).R.abs(), True),
    ("linalg_cholesky", lambda m, F, d: m.linalg.cholesky(_spd(m, d)), True),
    ("linalg_eigvalsh", lambda m, F, d: m.linalg.eigvalsh(d["x"] + d["x"].mT), True),
    ("linalg_matrix_norm", lambda m, F, d: m.linalg.matrix_norm(d["x"]), True),
    ("linalg_vector_norm", lambda m, F, d: m.linalg.vector_norm(d["x"]), True),
    ("linalg_cond", lambda m, F, d: m.linalg.cond(_eye4(m, d)), True),
    ("linalg_lstsq", lambda m, F, d: m.linalg.lstsq(_eye4(m, d), d["y"]).solution, True),
    ("pinverse", lambda m, F, d: m.pinverse(d["x"]), True),
    ("linalg_pinv", lambda m, F, d: m.linalg.pinv(d["x"]), False),
    ("linalg_pinv_float64", lambda m, F, d: m.linalg.pinv(d["x"].double()), False),
    ("cholesky_inverse", lambda m, F, d: m.cholesky_inverse(m.linalg.cholesky(_spd(m, d))),
     True),
    ("matrix_exp", lambda m, F, d: m.matrix_exp(d["x"] * 0.1), False),
    ("stft", lambda m, F, d: m.stft(d["x"].flatten(), 4, return_complex=False), True),
]


def _dtypes_and_values(module, fn, dtype):
    with module.autocast("cpu"), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # deprecations and performance hints
        out = fn(module, module.nn.functional, _inputs(module, getattr(module, dtype)))
    outs = out if isinstance(out, tuple) else (out,)
    return ([str(o.dtype) for o in outs],
            [np.array(o.detach().float().tolist(), dtype=np.float64) for o in outs])


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_ops_under_cpu_autocast_give_torchs_dtypes_and_values(session, dtype):
    """Every op of OPS on float32 (and bfloat16) inputs under torch.autocast("cpu"): torch's
    output dtype, and its values within bfloat16's precision."""
    failures = []
    for name, fn, try_bfloat16 in OPS:
        if dtype == "bfloat16" and not try_bfloat16:
            continue
        want_dtypes, want = _dtypes_and_values(real_torch, fn, dtype)
        got_dtypes, got = _dtypes_and_values(tensord, fn, dtype)
        if got_dtypes != want_dtypes:
            failures.append(f"{name}: dtype {got_dtypes}, torch {want_dtypes}")
            continue
        for g, w in zip(got, want):
            if g.shape != w.shape or not np.allclose(g, w, rtol=2e-2, atol=2e-2, equal_nan=True):
                failures.append(f"{name}: values differ by {np.abs(g - w).max()}")
    assert not failures, "\n".join(failures)


def test_the_cpu_amp_autocast_form_and_the_decorator_cast_as_torch_autocast(session):
    x = np.arange(12, dtype=np.float32).reshape(3, 4) / 7

    def outputs(module, how):
        a, w = module.tensor(x), module.tensor(x.T.copy())
        if how == "decorator":
            f = module.autocast("cpu")(lambda: (a @ w, module.nn.functional.linear(a, a)))
            return f()
        with module.cpu.amp.autocast():
            return a @ w, module.nn.functional.linear(a, a)

    for how in ("decorator", "cpu.amp"):
        want, got = outputs(real_torch, how), outputs(tensord, how)
        assert [str(t.dtype) for t in got] == [str(t.dtype) for t in want] == ["torch.bfloat16"] * 2
        for g, w in zip(got, want):
            assert g.float().tolist() == w.float().tolist()


# ---- training under autocast ----

TRAINING = """
    import numpy as np
    rng = np.random.default_rng(1)

    def p(*s):
        return torch.tensor(rng.standard_normal(s).astype(np.float32) * 0.5)

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = torch.nn.Conv2d(2, 3, 3, padding=1)
            self.bn = torch.nn.BatchNorm2d(3)
            self.fc = torch.nn.Linear(3 * 4 * 4, 5)

        def forward(self, x):
            return self.fc(torch.relu(self.bn(self.conv(x))).flatten(1))

    net = Net()
    with torch.no_grad():
        for q in net.parameters():
            q.copy_(p(*q.shape))
    opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    x, y = p(4, 2, 4, 4), torch.tensor([0, 1, 2, 3])
    for step in range(3):
        opt.zero_grad()
        with torch.autocast("cpu"):
            out = net(x)
            loss = F.cross_entropy(out, y)
        print(out.dtype, out.grad_fn.name(), loss.dtype, loss.grad_fn.name())
        loss.backward()
        print([(n, q.grad.dtype) for n, q in net.named_parameters()])
        grads.append([q.grad.tolist() for q in net.parameters()])
        opt.step()
    with torch.autocast("cpu"):  # backward inside the region
        loss = F.cross_entropy(net(x), y)
        opt.zero_grad()
        loss.backward()
    print([q.grad.dtype for q in net.parameters()])
    grads.append([q.grad.tolist() for q in net.parameters()])
    grads.append([q.tolist() for q in net.parameters()])
"""


def test_a_training_step_under_autocast_gives_float32_gradients_as_torch(session):
    """Parameters stay float32, their gradients come back in float32 through the casts'
    ToCopyBackward0 nodes, with torch's values within bfloat16 precision (three SGD steps and
    a backward inside the region)."""
    want_grads, got_grads = [], []
    want = run(real_torch, TRAINING, grads=want_grads)
    got = run(tensord, TRAINING, grads=got_grads)
    assert got == want
    for g_step, w_step in zip(got_grads, want_grads):
        for g, w in zip(g_step, w_step):
            g, w = np.array(g), np.array(w)
            assert np.allclose(g, w, rtol=3e-2, atol=1e-2 * max(1.0, np.abs(w).max()))


# ---- GradScaler ----

SCALER_WITHOUT_CUDA = """
    scaler = torch.cuda.amp.GradScaler()
    print(scaler.is_enabled(), scaler.get_scale(), scaler.state_dict(),
          scaler._get_growth_tracker())
    quiet = torch.cuda.amp.GradScaler(init_scale=8.0, enabled=False)
    print(quiet.is_enabled(), quiet.get_scale())
    w = torch.nn.Parameter(torch.tensor([1.0, -2.0]))
    opt = torch.optim.SGD([w], lr=0.25)
    loss = (w * w).sum()
    scaled = scaler.scale(loss)
    print(scaled is loss, scaler.scale([loss, loss])[0] is loss)
    scaled.backward()
    print(scaler.unscale_(opt), w.grad)
    print(scaler.step(opt), w, scaler.update(), scaler.update(4.0), scaler.get_scale())
    print(scaler.load_state_dict({}), scaler.state_dict())
    try:
        torch.cuda.amp.GradScaler(growth_factor=0.5)
        print("no check of the factors when disabled")
    except AssertionError as e:
        print("AssertionError", e)
"""


def test_grad_scaler_without_cuda_warns_and_passes_through_as_torch(session):
    assert not tensord.cuda.is_available(), "this server has a CUDA device"
    assert run(tensord, SCALER_WITHOUT_CUDA) == run(real_torch, SCALER_WITHOUT_CUDA)


def test_unscale_checks_for_infinities_and_nans(session):
    """torch's _amp_foreach_non_finite_check_and_unscale_: every gradient times inv_scale, in
    place, in its own dtype; found_inf 1.0 once any holds an infinity or a NaN."""
    unscale = tensord_grad_scaler._amp_foreach_non_finite_check_and_unscale_
    g1, g2 = tensord.tensor([2.0, 4.0]), tensord.tensor([[8.0]], dtype=tensord.bfloat16)
    g3 = tensord.tensor(6.0)
    found, inv = tensord.zeros(1), tensord.full((1,), 0.5)
    unscale([g1, g2, g3], found, inv)
    assert (g1.tolist(), g2.tolist(), g3.item(), found.tolist()) == ([1.0, 2.0], [[4.0]], 3.0,
                                                                      [0.0])
    assert g2.dtype is tensord.bfloat16
    for bad in (float("inf"), float("-inf"), float("nan")):
        g, found = tensord.tensor([4.0, bad]), tensord.zeros(1)
        unscale([tensord.tensor([1.0]), g], found, inv)
        assert found.tolist() == [1.0] and g[0].item() == 2.0


def _torch_update(scale, tracker, found_inf, growth_factor, backoff_factor, growth_interval):
    """torch 1.13's documented update (its _amp_update_scale_ kernel), in float64 rounded to
    float32 as the kernel's products are."""
    if found_inf:
        return float(np.float32(scale * backoff_factor)), 0
    successful = tracker + 1
    if successful == growth_interval:
        with np.errstate(over="ignore"):
            grown = float(np.float32(scale * growth_factor))
        return (grown if np.isfinite(grown) else scale), 0
    return scale, successful


@pytest.mark.parametrize("factors", [(2.0, 0.5, 3), (1.1, 0.3, 1), (65536.0, 0.125, 2)])
def test_update_scale_follows_torchs_algorithm(session, factors):
    growth, backoff, interval = factors
    scale, tracker = tensord.full((1,), 3.0e34), tensord.zeros(1, dtype=tensord.int32)
    want = (float(np.float32(3.0e34)), 0)
    for found in [0, 0, 0, 1, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0]:
        tensord_grad_scaler._amp_update_scale_(scale, tracker, tensord.full((1,), float(found)),
                                               growth, backoff, interval)
        want = _torch_update(*want, found, growth, backoff, interval)
        assert (scale.item(), tracker.item()) == want
        assert scale.dtype is tensord.float32 and tracker.dtype is tensord.int32


def test_grad_scaler_enabled_skips_steps_and_moves_the_scale(session, monkeypatch):
    """The whole scaler, enabled, on cpu tensors (what torch's asserts and the CUDA check keep
    to cuda, let through for the test): scaled gradients unscaled before the step, a step with
    an infinity skipped and the scale backed off, growth after growth_interval good steps,
    state_dict and load_state_dict, and torch's misuse errors."""
    monkeypatch.setattr(tensord_grad_scaler, "amp_definitely_not_available", lambda: False)
    monkeypatch.setattr(tensord_grad_scaler, "_amp_device", lambda t: True)
    w = tensord.nn.Parameter(tensord.tensor([1.0, -1.0]))
    opt = tensord.optim.SGD([w], lr=0.1)
    scaler = tensord.cuda.amp.GradScaler(init_scale=4.0, growth_interval=2)
    assert scaler.is_enabled() and scaler.get_scale() == 4.0
    expected_w, scale, good = np.array([1.0, -1.0], dtype=np.float32), 4.0, 0
    for bad in (False, False, True, False, False, False):
        opt.zero_grad()
        loss = (w * w).sum() * (float("inf") if bad else 1.0)
        scaled = scaler.scale(loss)
        assert scaled.item() == pytest.approx(loss.item() * scale)
        scaled.backward()
        assert scaler.step(opt) is None
        if bad:
            scale, good = scale * 0.5, 0
        else:
            expected_w = expected_w - np.float32(0.1) * 2 * expected_w
            good += 1
            if good == 2:
                scale, good = scale * 2.0, 0
        scaler.update()
        assert np.allclose(w.tolist(), expected_w) and scaler.get_scale() == scale
        assert scaler.state_dict() == {"scale": scale, "growth_factor": 2.0,
                                       "backoff_factor": 0.5, "growth_interval": 2,
                                       "_growth_tracker": good}
    opt.zero_grad()
    scaler.scale(w.sum()).backward()
    scaler.unscale_(opt)
    assert w.grad.tolist() == [1.0, 1.0]  # unscaled, ready for clipping
    with pytest.raises(RuntimeError, match=r"unscale_\(\) has already been called"):
        scaler.unscale_(opt)
    scaler.step(opt)
    with pytest.raises(RuntimeError, match=r"step\(\) has already been called"):
        scaler.step(opt)
    with pytest.raises(RuntimeError, match=r"unscale_\(\) is being called after step"):
        scaler.unscale_(opt)
    with pytest.raises(RuntimeError, match="Closure use is not currently supported"):
        scaler.step(opt, closure=lambda: None)
    scaler.update(16.0)
    assert scaler.get_scale() == 16.0
    other = tensord.cuda.amp.GradScaler()
    other.load_state_dict(scaler.state_dict())
    assert other.state_dict() == scaler.state_dict()
    with pytest.raises(RuntimeError, match="The source state dict is empty"):
        other.load_state_dict({})
    with pytest.raises(AssertionError, match="The growth factor must be > 1.0."):
        tensord.cuda.amp.GradScaler(growth_factor=1.0)
    with pytest.raises(AssertionError, match="Attempted step but _scale is None"):
        tensord.cuda.amp.GradScaler().step(opt)


def test_fp16_gradients_are_refused_by_unscale(session, monkeypatch):
    monkeypatch.setattr(tensord_grad_scaler, "amp_definitely_not_available", lambda: False)
    monkeypatch.setattr(tensord_grad_scaler, "_amp_device", lambda t: True)
    w = tensord.nn.Parameter(tensord.tensor([1.0, 2.0], dtype=tensord.float16))
    opt = tensord.optim.SGD([w], lr=0.1)
    scaler = tensord.cuda.amp.GradScaler()
    scaler.scale(w.float().sum()).backward()
    with pytest.raises(ValueError, match="Attempting to unscale FP16 gradients."):
        scaler.step(opt)


# ---- the hot path, the names, and the script runner ----

def test_no_autocast_leaves_the_op_path_untouched(session):
    """Outside every autocast region no thread counts as enabled: _ops._queue's one global
    read (`_autocast.active`) is false and no op is looked up in the lists."""
    with tensord.autocast("cpu"):
        assert _autocast.active
        with tensord.autocast("cpu", enabled=False):
            assert not _autocast.active
        assert _autocast.active
    assert not _autocast.active
    worker = threading.Thread(target=tensord.set_autocast_cpu_enabled, args=(True,))
    worker.start()
    worker.join()  # a thread that ends with autocast enabled leaves the count
    gc.collect()
    assert not _autocast.active
    calls = []
    original = _autocast.cast
    try:
        _autocast.cast = lambda *a: calls.append(a) or original(*a)
        tensord.ones(2, 2).mm(tensord.ones(2, 2))
        assert calls == []
        with tensord.autocast("cpu"):
            tensord.ones(2, 2).mm(tensord.ones(2, 2))
        assert [c[0] for c in calls] == ["ones", "ones", "mm", "to", "to"]  # the casts too
    finally:
        _autocast.cast = original


def test_torch_names(session):
    for name in ("autocast", "is_autocast_enabled", "set_autocast_enabled",
                 "get_autocast_gpu_dtype", "set_autocast_gpu_dtype", "is_autocast_cpu_enabled",
                 "set_autocast_cpu_enabled", "get_autocast_cpu_dtype", "set_autocast_cpu_dtype",
                 "is_autocast_cache_enabled", "set_autocast_cache_enabled", "clear_autocast_cache",
                 "autocast_increment_nesting", "autocast_decrement_nesting"):
        assert hasattr(real_torch, name) and hasattr(tensord, name), name
    assert tensord.autocast is tensord.amp.autocast is tensord.amp.autocast_mode.autocast
    assert issubclass(tensord.cpu.amp.autocast, tensord.autocast)
    assert issubclass(tensord.cuda.amp.autocast, tensord.autocast)
    for module in ("amp", "cuda.amp"):
        theirs = {n for n in dir(eval(f"real_torch.{module}")) if not n.startswith("_")}
        ours = {n for n in dir(eval(f"tensord.{module}")) if not n.startswith("_")}
        assert theirs <= ours, theirs - ours


SCRIPT = """
import warnings
import torch
import torch.cuda.amp
from torch.cuda.amp import GradScaler, autocast
from torch.cpu.amp import autocast as cpu_autocast
import torch.amp.autocast_mode
net = torch.nn.Linear(3, 2)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    scaler = GradScaler()
    with autocast():
        pass
print([str(w.message) for w in caught])
with cpu_autocast():
    loss = net(torch.ones(4, 3)).float().pow(2).mean()
print(loss.dtype, net(torch.ones(1, 3)).dtype, torch.amp.autocast_mode.autocast is torch.autocast)
scaler.scale(loss).backward()
scaler.step(opt)
scaler.update()
print(net.weight.grad.dtype, scaler.get_scale())
"""


def test_an_unmodified_amp_script_runs_under_tensord_run(server, tmp_path):
    script = tmp_path / "amp_script.py"
    script.write_text(SCRIPT)
    env = dict(os.environ, TENSORD_ADDRESS=server,
               PYTHONPATH=os.path.join(ROOT, "client", "python"))
    ours = subprocess.run([sys.executable, "-m", "tensord.run", str(script)], env=env,
                          capture_output=True, text=True, timeout=120)
    assert ours.returncode == 0, ours.stderr
    theirs = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                            timeout=120)
    assert theirs.returncode == 0, theirs.stderr
    assert ours.stdout == theirs.stdout

# The CUDA autocast lists and GradScaler on a GPU: test_cuda.py (ctest label gpu).
