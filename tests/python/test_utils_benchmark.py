"""tensord.utils.benchmark against torch 1.13's torch.utils.benchmark: Measurement's statistics,
repr and merging, TaskSpec, the formatting helpers and Compare's tables for the same raw times;
Timer's runs of stmt and setup and its arguments; and what torch's CPU Timer has no need for:
each timed block ends with the server's work done (the sessions synchronized), so a block's
time covers the ops its statement queued, not only their queuing."""
import contextlib
import io
import os
import pickle
import random
import re
import runpy
import subprocess
import sys
import time

import pytest

# What a plain `import torch` leaves (before this module imports torch.utils.benchmark);
# None where torch was imported earlier in this process, so that this cannot tell.
_FRESH_TORCH = "torch" not in sys.modules
import torch  # noqa: E402
_TORCH_PLAIN_IMPORT = ((hasattr(torch.utils, "benchmark"),
                        "torch.utils.benchmark" in sys.modules) if _FRESH_TORCH else None)
import torch.utils.benchmark as TB  # noqa: E402

import tensord
import tensord.utils.benchmark as TD
from tensord import _session

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Not provided: Callgrind, C++ statements' helpers and the fuzzers.
LEFT_OUT = {"CallgrindStats", "CopyIfCallgrind", "FunctionCount", "FunctionCounts",
            "FuzzedParameter", "FuzzedSparseTensor", "FuzzedTensor", "Fuzzer", "ParameterAlias"}


def _spec(module, **kw):
    kw.setdefault("stmt", "x + y")
    kw.setdefault("setup", "pass")
    return module.TaskSpec(**kw)


def _pair(number_per_run, raw_times, **spec):
    """The same Measurement in torch and in tensord."""
    return (TB.Measurement(number_per_run, list(raw_times), _spec(TB, **spec)),
            TD.Measurement(number_per_run, list(raw_times), _spec(TD, **spec)))


def _raw_times(rng, n, base=None, spread=None):
    base = 10 ** rng.uniform(-9, 1) if base is None else base
    spread = rng.choice([0, 1e-3, 0.05, 0.15, 0.5, 2.0]) if spread is None else spread
    return [base * (1 + spread * rng.random()) for _ in range(n)]


_ADDRESS = re.compile(r"^<([\w.]+)\.Measurement object at 0x[0-9a-f]+>")


def _without_address(text):
    """A Measurement's repr without its first line's class path and address."""
    return _ADDRESS.sub("<Measurement>", text)


SPECS = [
    {},
    {"label": "add", "sub_label": "float", "description": "n=4"},
    {"stmt": "a = x + y\nb = a * 2", "setup": "x = 1\ny = 2"},
    {"stmt": "a = x + y\nb = a * 2", "sub_label": "int", "setup": "x = 1"},
    {"stmt": "", "setup": ""},
    {"label": "L", "description": "two\nlines", "num_threads": 4},
    {"sub_label": "s", "env": "A", "num_threads": 2},
]


# ---- names ---------------------------------------------------------------------------------------

def test_names_are_torchs():
    public = {n for n in dir(TB) if not n.startswith("_")}
    assert set(TD.__all__) <= public
    assert public & LEFT_OUT == LEFT_OUT
    assert not set(TD.__all__) & LEFT_OUT and not any(hasattr(TD, n) for n in LEFT_OUT)
    for name in TD.__all__:
        want, got = getattr(TB, name), getattr(TD, name)
        kind = (lambda x: (isinstance(x, type), callable(x), type(x).__name__ == "module"))
        assert kind(got) == kind(want), name
    # torch's module layout: utils.common, utils.timer, utils.compare.
    from tensord.utils.benchmark.utils.common import Measurement, TaskSpec
    from tensord.utils.benchmark.utils.compare import Compare
    from tensord.utils.benchmark.utils.timer import Language, Timer
    assert (Measurement, TaskSpec, Compare, Timer, Language) == \
        (TD.Measurement, TD.TaskSpec, TD.Compare, TD.Timer, TD.Language)
    assert [(m.name, m.value) for m in TD.Language] == [(m.name, m.value) for m in TB.Language]
    assert [(m.name, m.value) for m in TD.Colorize] == [(m.name, m.value) for m in TB.Colorize]
    # Timer's methods are torch's, but for Callgrind (no stub: the method does not exist).
    methods = {n for n in dir(TB.Timer) if not n.startswith("_")}
    assert {n for n in dir(TD.Timer) if not n.startswith("_")} == methods - {"collect_callgrind"}


def test_plain_import_leaves_the_package_unimported_as_torch():
    """torch.utils.benchmark is not imported by `import torch`; nor is tensord's by
    `import tensord` (tensord.run imports it, to alias it)."""
    code = ("import sys, {0}; print(hasattr({0}.utils, 'benchmark'), "
            "'{0}.utils.benchmark' in sys.modules)")

    def plain_import(module):
        env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "client", "python"))
        p = subprocess.run([sys.executable, "-c", code.format(module)], env=env, text=True,
                           capture_output=True, timeout=60, cwd=ROOT)
        assert p.returncode == 0, p.stderr
        return tuple(word == "True" for word in p.stdout.split())
    want = _TORCH_PLAIN_IMPORT if _TORCH_PLAIN_IMPORT is not None else plain_import("torch")
    assert plain_import("tensord") == want


# ---- Measurement ---------------------------------------------------------------------------------

def test_statistics_match_torch():
    rng = random.Random(5)
    cases = [[1e-3], [2e-6, 1e-6], [3.0, 1.0, 2.0], [1e-3, 1.1e-3, 1.3e-3, 0.9e-3, 2e-3],
             [5e-9] * 8, [7.5e-4] * 3 + [7.6e-4] * 5]
    cases += [_raw_times(rng, rng.choice([1, 2, 3, 4, 5, 9, 16, 101])) for _ in range(400)]
    for i, raw in enumerate(cases):
        t, d = _pair(rng.choice([1, 10, 1000]), raw)
        assert d.times == t.times
        assert (d.median, d.iqr) == (t.median, t.iqr), raw
        assert d.mean == pytest.approx(t.mean, rel=1e-14, abs=0)
        assert d.significant_figures == t.significant_figures, raw
        assert d.has_warnings == t.has_warnings, raw
        for threshold in (0.001, 0.1, 0.5):
            assert d.meets_confidence(threshold) == t.meets_confidence(threshold)
        assert d.meets_confidence() == t.meets_confidence()


def test_repr_matches_torch():
    rng = random.Random(7)
    for spec in SPECS:
        for n in (1, 2, 3, 4, 5, 40):
            for spread in (0, 0.1, 0.3, 3.0):
                t, d = _pair(rng.choice([1, 100]), _raw_times(rng, n, spread=spread), **spec)
                want, got = repr(t), repr(d)
                assert _ADDRESS.match(want).group(1) == "torch.utils.benchmark.utils.common"
                # Each prints its own class's path, as object.__repr__ does.
                assert _ADDRESS.match(got).group(1) == type(d).__module__ == \
                    "tensord.utils.benchmark.utils.common"
                assert _without_address(got) == _without_address(want)
                assert _without_address(str(d)) == _without_address(str(t))


def test_task_spec_and_forwarded_fields_match_torch():
    for spec in SPECS:
        t, d = _spec(TB, **spec), _spec(TD, **spec)
        assert (d.title, d.setup_str(), d.summarize()) == (t.title, t.setup_str(), t.summarize())
        mt, md = _pair(10, [1e-6, 2e-6], **spec)
        for name in ("stmt", "setup", "global_setup", "label", "sub_label", "description",
                     "env", "num_threads", "title", "as_row_name", "number_per_run",
                     "metadata"):
            assert getattr(md, name) == getattr(mt, name), name
    # Frozen, hashable, compared by value; Measurements compare by their fields.
    assert _spec(TD, label="a") == _spec(TD, label="a") != _spec(TD, label="b")
    assert hash(_spec(TD, label="a")) == hash(_spec(TD, label="a"))
    with pytest.raises(AttributeError):
        _spec(TD).label = "x"
    (mt, md), (mt2, md2) = _pair(3, [1.0, 2.0]), _pair(3, [1.0, 2.0])
    assert (md == md2, md == TD.Measurement(3, [1.0], md.task_spec)) == \
        (mt == mt2, mt == TB.Measurement(3, [1.0], mt.task_spec))
    errors = []
    for m in (mt, md):
        with pytest.raises(AttributeError) as info:
            m.no_such_field
        errors.append(str(info.value))
    assert errors[1] == errors[0]


def test_merge_matches_torch():
    rng = random.Random(11)
    specs = [{"label": "a"}, {"label": "b", "sub_label": "s"}, {"label": "a", "env": "E"}]
    torch_ms, ours = [], []
    for k in range(12):
        spec = specs[rng.randrange(len(specs))]
        t, d = _pair(rng.choice([1, 10, 100]), _raw_times(rng, rng.randint(1, 5)), **spec)
        torch_ms.append(t)
        ours.append(d)
    want, got = TB.Measurement.merge(torch_ms), TD.Measurement.merge(ours)
    assert [(m.number_per_run, m.raw_times, m.label, m.sub_label, m.env, m.metadata)
            for m in got] == \
        [(m.number_per_run, m.raw_times, m.label, m.sub_label, m.env, m.metadata) for m in want]
    assert [_without_address(repr(m)) for m in got] == [_without_address(repr(m)) for m in want]


def test_measurement_pickles():
    _, d = _pair(10, [1e-3, 2e-3, 3e-3, 4e-3, 5e-3], label="add", description="d")
    d.median  # the cached statistics travel too
    back = pickle.loads(pickle.dumps(d))
    assert back == d and back.task_spec == d.task_spec
    assert (back.median, back.iqr, repr(back)[-60:]) == (d.median, d.iqr, repr(d)[-60:])


def test_formatting_helpers_match_torch():
    rng = random.Random(3)
    values = [1e-9, 1e-6, 1e-3, 1.0, 999e-9, 1000e-9, 3.14159, 0.5, 12345.678]
    values += [10 ** rng.uniform(-12, 4) for _ in range(500)]
    for v in values:
        assert TD.select_unit(v) == TB.select_unit(v), v
        for n in (1, 2, 3, 4):
            assert TD.trim_sigfig(v, n) == TB.trim_sigfig(v, n), (v, n)
            assert TD.trim_sigfig(-v, n) == TB.trim_sigfig(-v, n), (-v, n)
    for unit in ("ns", "us", "ms", "s"):
        assert TD.unit_to_english(unit) == TB.unit_to_english(unit)
    for seq in ([], [3, 1, 3, 2, 1], ["b", "a", None, "b", None], [(1, "x"), (1, "x"), (0, "y")]):
        assert TD.ordered_unique(seq) == TB.ordered_unique(seq)
    before = tensord.get_num_threads()
    with TD.set_torch_threads(3):
        assert tensord.get_num_threads() == 3
    assert tensord.get_num_threads() == before


# ---- Compare -------------------------------------------------------------------------------------

def _measurement_sets(rng):
    """Sets of same-numbered measurements in both modules: labels, sub_labels, descriptions,
    thread counts, envs (all given or none, as torch's table takes them), replicates."""
    sets = []
    for trial in range(60):
        envs = [None] if trial % 3 else ["A", "B"]
        specs = []
        for label in rng.sample(["add", "mul", None], rng.randint(1, 2)):
            for sub in rng.sample(["float", "int", None, "a longer sub label"], rng.randint(1, 3)):
                for desc in rng.sample(["1", "10", "1000", "n=4"], rng.randint(1, 3)):
                    for threads in rng.sample([1, 2, 4], rng.randint(1, 2)):
                        if rng.random() < 0.8:
                            specs.append(dict(stmt=rng.choice(["x + y", "x * y"]), label=label,
                                              sub_label=sub, description=desc,
                                              num_threads=threads, env=rng.choice(envs)))
        if not specs:
            continue
        pairs = []
        for spec in specs:
            for _ in range(rng.randint(1, 2)):  # replicates, merged by Compare
                raw = _raw_times(rng, rng.choice([1, 3, 8, 20]), base=10 ** rng.uniform(-8, -1),
                                 spread=rng.choice([1e-3, 0.05, 0.5]))
                pairs.append(_pair(rng.choice([1, 100]), raw, **spec))
        sets.append(pairs)
    return sets


STYLES = {
    "plain": lambda c: None,
    "trim": lambda c: c.trim_significant_figures(),
    "colorize": lambda c: c.colorize(),
    "rowwise_trim": lambda c: (c.colorize(rowwise=True), c.trim_significant_figures()),
    "warnings_trim": lambda c: (c.highlight_warnings(), c.trim_significant_figures()),
    "warnings_colorize": lambda c: (c.highlight_warnings(), c.colorize()),
}


@pytest.mark.parametrize("style", STYLES)
def test_compare_tables_match_torch(style):
    for pairs in _measurement_sets(random.Random(sorted(STYLES).index(style))):
        want, got = TB.Compare([p[0] for p in pairs]), TD.Compare([p[1] for p in pairs])
        STYLES[style](want)
        STYLES[style](got)
        assert str(got) == str(want)


def test_compare_extend_and_print_match_torch(capsys):
    rng = random.Random(2)
    first = [_pair(10, _raw_times(rng, 5, spread=0.01), label="exp", sub_label=s, description=d)
             for s in ("float", "double") for d in ("64", "4096")]
    more = [_pair(10, _raw_times(rng, 5, spread=0.01), label="log", sub_label="float",
                  description="64")]
    outputs = []
    for k in (0, 1):
        c = (TB, TD)[k].Compare([p[k] for p in first])
        c.extend_results([p[k] for p in more])
        c.trim_significant_figures()
        c.print()
        outputs.append(capsys.readouterr().out)
    assert outputs[1] == outputs[0] and "[" in outputs[0] and "log" in outputs[0]
    errors = []
    for module in (TB, TD):
        with pytest.raises(ValueError) as info:
            module.Compare([1.5])
        errors.append(str(info.value))
    assert errors[1] == errors[0]


def test_compare_without_descriptions():
    """torch's table fails (TypeError) where no measurement has a description; tensord's shows
    torch's table for an empty description."""
    rng = random.Random(4)
    raws = [_raw_times(rng, 4, spread=0.01) for _ in range(3)]
    specs = [dict(label="add", sub_label=s) for s in ("a", "b", "c")]
    with pytest.raises(TypeError):
        str(TB.Compare([TB.Measurement(1, r, _spec(TB, **s)) for r, s in zip(raws, specs)]))
    got = str(TD.Compare([TD.Measurement(1, r, _spec(TD, **s)) for r, s in zip(raws, specs)]))
    want = str(TB.Compare([TB.Measurement(1, r, _spec(TB, description="", **s))
                           for r, s in zip(raws, specs)]))
    assert got == want


# ---- Timer ---------------------------------------------------------------------------------------

def _counted(module, number, **kw):
    counts = {"stmt": [0], "setup": [0]}
    timer = module.Timer("stmt[0] += 1", setup="setup[0] += 1",
                         globals={"stmt": counts["stmt"], "setup": counts["setup"]}, **kw)
    m = timer.timeit(number)
    return (m.number_per_run, len(m.raw_times), counts["stmt"][0], counts["setup"][0])


@pytest.mark.parametrize("number", [1, 7, 250, 1000])
def test_timeit_runs_stmt_and_setup_as_torch(number, session):
    # torch's timeit warms up with a block of max(number // 100, 2) runs (setup again first).
    assert _counted(TD, number) == _counted(TB, number)


@pytest.mark.parametrize("method", ["blocked_autorange", "adaptive_autorange"])
def test_autorange_blocks_as_torch(method, session):
    """The runs a Measurement reports were run, one callback per block, in both modules."""
    def check(module):
        runs, calls = [0], []
        timer = module.Timer("runs[0] += 1", globals={"runs": runs})
        bounds = {"max_run_time": 0.3} if method == "adaptive_autorange" else {}
        m = getattr(timer, method)(callback=lambda n, t: calls.append((n, t)), min_run_time=0.02,
                                   **bounds)
        assert calls == [(m.number_per_run, t) for t in m.raw_times]
        assert runs[0] >= m.number_per_run * len(m.raw_times)
        assert sum(m.raw_times) >= 0.02 and type(m).__name__ == "Measurement"
        return m.number_per_run >= 1, len(m.raw_times) >= 1
    assert check(TD) == check(TB)


def test_timer_arguments_match_torch(session):
    stmt = """
        a = x + 1
        b = a * 2
    """
    setup = "\n    x = 3\n"
    specs = []
    for module in (TB, TD):
        t = module.Timer(stmt, setup=setup, label="L", sub_label="s", description="d",
                         env="e", num_threads=2, language="python")
        s = t._task_spec
        specs.append((s.stmt, s.setup, s.global_setup, s.label, s.sub_label, s.description,
                      s.env, s.num_threads, t.timeit(3).title))
    assert specs[1] == specs[0]

    def outcome(module, call):
        try:
            call(module)
        except Exception as e:  # noqa: BLE001 - the class and message are compared
            return type(e).__name__, str(e)
        return None
    for call in (lambda m: m.Timer(lambda: 1),
                 lambda m: m.Timer("x", global_setup="#include <x>"),
                 lambda m: m.Timer("x", language="fortran"),
                 lambda m: m.Timer().repeat(),
                 lambda m: m.Timer().autorange(),
                 lambda m: m.Timer("x = ("),
                 lambda m: m.Timer("x = 1", setup="if True:\n    y = ("),
                 lambda m: m.Timer("return 1")):
        want = outcome(TB, call)
        assert want is not None and outcome(TD, call) == want
    with pytest.raises(NotImplementedError):
        TD.Timer("x", language=TD.Language.CPP)


def test_timer_globals(session):
    for module in (TB, TD):
        caller = {"k": 5}
        m = module.Timer("globals()['k'] = k + 1; t = torch.ones(2)", globals=caller).timeit(3)
        assert caller == {"k": 5} and m.number_per_run == 3  # copied, as torch copies them
    seen = []
    TD.Timer("seen.append(torch)", globals={"seen": seen}).timeit(1)
    assert seen[0] is tensord  # `torch` is tensord unless globals give one
    TB.Timer("seen.append(torch)", globals={"seen": seen}).timeit(1)
    assert seen[-1] is torch


def test_num_threads_is_set_while_timing(session):
    seen = []
    for module, threads in ((TB, torch), (TD, tensord)):
        before = threads.get_num_threads()
        module.Timer("seen.append(threads.get_num_threads())",
                     globals={"seen": seen, "threads": threads}, num_threads=3).timeit(2)
        assert threads.get_num_threads() == before
    assert set(seen) == {3}


# ---- synchronization -----------------------------------------------------------------------------

def test_timer_time_covers_the_servers_work(session):
    """A matmul returns once queued; timed without a synchronization, a loop of them measures
    the queuing only. The Timer's blocks end with the session synchronized: per run they take
    what a loop of the same matmuls followed by tensord.synchronize() takes, and leave no work
    behind."""
    n = 4096 if tensord.ones(1).device.type == "cuda" else 1024
    a = tensord.randn(n, n)
    tensord.synchronize()
    runs = 2

    def synchronized_loop():
        t0 = time.perf_counter()
        for _ in range(runs):
            y = a @ a  # as the timed statement: each result replaces the one before
        tensord.synchronize()
        del y
        return (time.perf_counter() - t0) / runs

    def unsynchronized_loop():
        t0 = time.perf_counter()
        for _ in range(runs):
            y = a @ a
        elapsed = (time.perf_counter() - t0) / runs
        tensord.synchronize()
        del y
        return elapsed

    manual = [synchronized_loop(), synchronized_loop()]
    naive = unsynchronized_loop()
    timer = TD.Timer("y = a @ a", globals={"a": a})
    timed = timer.timeit(runs).median
    t0 = time.perf_counter()
    tensord.synchronize()
    left = time.perf_counter() - t0
    blocked = timer.blocked_autorange(min_run_time=0.03)
    manual.append(synchronized_loop())

    assert min(manual) / 2 <= timed <= 2 * max(manual), (timed, manual)
    assert min(manual) / 2 <= blocked.median <= 2 * max(manual), (blocked, manual)
    assert naive < timed / 10, (naive, timed)  # the queuing alone
    assert left < timed / 2, (left, timed)  # nothing left running on the server


def test_timer_synchronizes_the_sessions_of_its_globals_and_the_current_one(server, session):
    other = tensord.connect(server)
    calls = {"other": 0, "current": 0}

    def counting(s, name):
        plain = s.synchronize

        def synchronize(*args, **kw):
            calls[name] += 1
            return plain(*args, **kw)
        return synchronize
    try:
        x = tensord.ones(4, session=other)
        other.synchronize = counting(other, "other")
        session.synchronize = counting(session, "current")
        m = TD.Timer("y = x + 1", globals={"x": x}).timeit(5)
        # Two blocks (the warm-up and the timed one), each synchronized before its clock
        # starts and before it stops.
        assert len(m.raw_times) == 1 and calls == {"other": 4, "current": 4}
    finally:
        other.__dict__.pop("synchronize", None)
        session.__dict__.pop("synchronize", None)
        other.close()


def test_a_statement_without_a_session_opens_none(session):
    tensord.set_default_session(None)
    try:
        assert _session.existing_session() is None
        m = TD.Timer("a = 1 + 1").timeit(100)
        m2 = TD.Timer("a = 1 + 1").blocked_autorange(min_run_time=0.01)
        TD.timer()
        assert _session.existing_session() is None
        assert m.number_per_run == 100 and m2.median > 0
    finally:
        tensord.set_default_session(session)


# ---- under tensord.run ---------------------------------------------------------------------------

SCRIPT = """
import torch
import torch.utils.benchmark as benchmark
from torch.utils.benchmark import Compare, Measurement, TaskSpec, Timer
from torch.utils.benchmark.utils.common import select_unit

calls = [0, 0]
x = torch.ones(64, 64)
m = Timer("y = x @ x; calls[0] += 1", setup="calls[1] += 1", globals={"x": x, "calls": calls},
          label="matmul", description="64").timeit(20)
print(type(m).__name__, m.number_per_run, len(m.raw_times), calls, m.title, m.description)
print(m.raw_times[0] > 0, isinstance(m, benchmark.Measurement), benchmark.Language.PYTHON)
results = [Measurement(10, [(i + k) * 1e-6 for i in range(1, 8)],
                       TaskSpec("x + y", "pass", label="add", sub_label=sub, description=d))
           for k, (sub, d) in enumerate([("float", "1"), ("float", "8"), ("int", "1")])]
compare = Compare(results)
compare.trim_significant_figures()
compare.print()
print(select_unit(3e-5), benchmark.utils.common.Measurement is Measurement)
print(repr(results[0]).splitlines()[1:])
"""


def test_an_unmodified_benchmark_script_runs_under_tensord_run(server, tmp_path):
    script = tmp_path / "benchmark_script.py"
    script.write_text(SCRIPT)
    env = dict(os.environ, TENSORD_ADDRESS=server,
               PYTHONPATH=os.path.join(ROOT, "client", "python"))
    ours = subprocess.run([sys.executable, "-m", "tensord.run", str(script)], env=env,
                          capture_output=True, text=True, timeout=120)
    assert ours.returncode == 0, ours.stderr
    theirs = io.StringIO()  # torch's, in this process (which imported torch already)
    with contextlib.redirect_stdout(theirs):
        runpy.run_path(str(script), run_name="__main__")
    assert ours.stdout == theirs.getvalue()
