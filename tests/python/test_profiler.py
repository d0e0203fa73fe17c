"""torch.profiler and torch.autograd.profiler on tensord: the server times each op of the
session (the Profile RPC), the client adds its record_function ranges.

Checked against torch 1.13 where the two must agree: the schedule's actions step by step, when
on_trace_ready is called and which ProfilerStep ranges each trace holds, the table's columns,
the errors of misuse, the input shapes of an op. Times are measured, so they are checked for
what must hold of any measurement: every op's kernel time lies within the profile, a range
covers its ops, a large matmul takes longer than a small add.
"""
import gzip
import json
import os
import warnings

import pytest
import torch

import tensord
import tensord_process


def run_schedule(module, schedule_args, steps, ranges=True):
    """A training-style loop under a scheduled profile: for each trace handed to
    on_trace_ready, the step it came at and the ProfilerStep ranges and record_function ranges
    it holds, in order."""
    got = []

    def ready(prof):
        names = [(e.name, e.trace_name) for e in prof.events()
                 if e.name.startswith(("ProfilerStep", "work "))]
        got.append((prof.step_num, names))

    x = module.ones(8, 8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sched = module.profiler.schedule(**schedule_args)
    with module.profiler.profile(schedule=sched, on_trace_ready=ready) as prof:
        for i in range(steps):
            if ranges:
                with module.profiler.record_function(f"work {i}"):
                    x = x @ x * 0.5
            prof.step()
    return got


@pytest.mark.parametrize("schedule_args, steps", [
    (dict(wait=1, warmup=1, active=2), 9),
    (dict(wait=1, warmup=1, active=2, repeat=1), 9),
    (dict(wait=0, warmup=0, active=1, repeat=2, skip_first=3), 8),
    (dict(wait=2, warmup=1, active=3, repeat=0), 5),  # stops inside an active cycle
    (dict(wait=1, warmup=2, active=1), 3),           # stops in warm-up
])
def test_schedule_records_the_steps_torch_records(session, schedule_args, steps):
    assert run_schedule(tensord, schedule_args, steps) == run_schedule(torch, schedule_args,
                                                                        steps)


def test_schedule_actions_and_bad_arguments_match_torch(session):
    for args in (dict(wait=1, warmup=1, active=2), dict(wait=0, warmup=2, active=1, repeat=3),
                 dict(wait=3, warmup=1, active=1, skip_first=2)):
        ours, theirs = tensord.profiler.schedule(**args), torch.profiler.schedule(**args)
        assert [ours(i).name for i in range(30)] == [theirs(i).name for i in range(30)]
    for bad in (dict(wait=-1, warmup=1, active=1), dict(wait=1, warmup=1, active=0)):
        with pytest.raises(AssertionError, match="Invalid profiler schedule arguments"):
            tensord.profiler.schedule(**bad)
        with pytest.raises(AssertionError, match="Invalid profiler schedule arguments"):
            torch.profiler.schedule(**bad)
    for module in (tensord, torch):
        with pytest.warns(UserWarning, match="won't be using warmup"):
            module.profiler.schedule(wait=1, warmup=0, active=1)


def profiled_program(module, **kwargs):
    x = module.ones(256, 256)
    w = module.ones(256, 256) * 0.01
    with module.profiler.profile(**kwargs) as prof:
        with module.profiler.record_function("model_inference"):
            for _ in range(3):
                y = (x @ w).relu()
            z = y.sum()
    return prof, z


def test_table_has_torchs_columns_and_the_ranges_and_ops(session):
    for kwargs, group in (({}, False), ({"record_shapes": True}, False),
                          ({"record_shapes": True}, True), ({"profile_memory": True}, False)):
        ours, _ = profiled_program(tensord, **kwargs)
        theirs, _ = profiled_program(torch, **kwargs)
        table = ours.key_averages(group).table(sort_by="cpu_time_total", row_limit=10)
        their_table = theirs.key_averages(group).table(sort_by="cpu_time_total", row_limit=10)
        header = [c.strip() for c in table.splitlines()[1].split("  ") if c.strip()]
        their_header = [c.strip() for c in their_table.splitlines()[1].split("  ") if c.strip()]
        assert header == their_header, (table, their_table)
        assert table.splitlines()[-1].startswith("Self CPU time total: ")
        assert "model_inference" in table
    averages = {e.key: e for e in ours.key_averages()}
    assert averages["model_inference"].count == 1
    assert averages["aten::matmul"].count == 3 and averages["aten::relu"].count == 3
    assert averages["aten::sum"].count == 1
    # The range comes first when sorted by total time: it covers everything it sent.
    assert ours.key_averages().table(sort_by="cpu_time_total").splitlines()[3].split()[0] == \
        "model_inference"


def test_input_shapes_match_torchs_for_the_tensor_inputs(session):
    ours, _ = profiled_program(tensord, record_shapes=True)
    theirs, _ = profiled_program(torch, record_shapes=True)

    def shapes(prof, key):
        return {str([s for s in e.input_shapes if s]) for e in prof.events() if e.name == key}

    for key in ("aten::matmul", "aten::relu", "aten::sum"):
        assert shapes(ours, key) == shapes(theirs, key), key
    grouped = ours.key_averages(group_by_input_shape=True)
    assert [e.input_shapes for e in grouped if e.key == "aten::matmul"] == [[[256, 256],
                                                                           [256, 256]]]
    plain, _ = profiled_program(tensord)
    assert all(e.input_shapes == [] for e in plain.events())


def test_times_are_measurements_of_the_ops(session):
    big = tensord.ones(512, 512)
    small = tensord.ones(4)
    with tensord.profiler.profile() as prof:
        with tensord.profiler.record_function("outer"):
            for _ in range(3):
                big = big @ big * 0.001
            with tensord.profiler.record_function("inner"):
                s = small + 1
    events = prof.events()
    ops = [e for e in events if e.name.startswith("aten::")]
    assert ops and all(0 <= e.time_range.start <= e.time_range.end for e in ops)
    mm = [e for e in ops if e.name == "aten::matmul"]
    add = [e for e in ops if e.name == "aten::add"]
    assert len(mm) == 3 and len(add) == 1
    assert min(e.cpu_time_total for e in mm) > add[0].cpu_time_total
    outer = next(e for e in events if e.name == "outer")
    inner = next(e for e in events if e.name == "inner")
    assert inner.cpu_parent is outer and add[0].cpu_parent is inner
    assert all(e.cpu_parent is outer for e in mm)
    for r in (outer, inner):
        assert all(r.time_range.start <= c.time_range.start and
                   c.time_range.end <= r.time_range.end for c in r.cpu_children)
    assert outer.cpu_time_total >= sum(c.cpu_time_total for c in outer.cpu_children
                                       if c.name != "inner")
    # Kernels ran one after another on the session's stream, in the order they were sent.
    kernels = sorted((e for e in ops if e.args.get("op id")), key=lambda e: e.args["op id"])
    assert all(a.time_range.end <= b.time_range.start for a, b in zip(kernels, kernels[1:]))
    assert {e.thread for e in ops} == {0}
    assert s.tolist() == [2.0] * 4


def test_views_are_listed_without_a_kernel(session):
    x = tensord.ones(4, 6)
    with tensord.profiler.profile() as prof:
        y = x.t().reshape(-1)[2:]
        y.sum()
    names = [e.name for e in prof.events()]
    assert names.count("aten::t") == 1 and names.count("aten::sum") == 1
    view = next(e for e in prof.events() if e.name == "aten::t")
    assert view.cpu_time_total == 0 and view.args["op id"] == 0
    assert any(e.args.get("op id") for e in prof.events() if e.name == "aten::sum")


def test_memory_of_new_storages(session):
    with tensord.profiler.profile(profile_memory=True) as prof:
        with tensord.profiler.record_function("alloc"):
            a = tensord.zeros(1024)             # 4 KiB
            b = a.view(32, 32)                   # a view: nothing new
            c = tensord.zeros(256, dtype=tensord.float64)  # 2 KiB
    by_name = {}
    for e in prof.events():
        by_name.setdefault(e.name, []).append(e)
    assert [e.cpu_memory_usage for e in by_name["aten::view"]] == [0]
    assert sorted(e.cpu_memory_usage for e in prof.events()
                  if e.name.startswith("aten::") and e.cpu_memory_usage) == [2048, 4096]
    assert by_name["alloc"][0].cpu_memory_usage == 6144
    table = prof.key_averages().table()
    assert "CPU Mem" in table and "6.00 Kb" in table
    del b, c


def test_backward_pass_has_torchs_ranges(session):
    def names(module):
        x = module.ones(3, requires_grad=True)
        with module.profiler.profile() as prof:
            (x * 2).sum().backward()
        return [e.name for e in prof.events() if "::" not in e.name or
                e.name.startswith("autograd::")]

    ours, theirs = names(tensord), names(torch)
    ranges = [n for n in theirs if n.startswith("autograd::engine::evaluate_function")]
    assert [n for n in ours if n.startswith("autograd::engine::evaluate_function")] == ranges
    x = tensord.ones(3, requires_grad=True)
    with tensord.profiler.profile() as prof:
        (x * 2).sum().backward()
    mul = [e for e in prof.events() if e.name == "aten::mul"]
    assert [e.cpu_parent.name if e.cpu_parent else None for e in mul] == [None, "MulBackward0"]
    assert x.grad.tolist() == [2.0, 2.0, 2.0]


def test_a_failed_backward_closes_its_ranges(session):
    class Boom(tensord.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            raise ValueError("boom")

    x = tensord.ones(3, requires_grad=True)
    z = tensord.ones(3)
    with tensord.profiler.profile() as prof:
        with pytest.raises(ValueError, match="boom"):
            Boom.apply(x).sum().backward()
        with tensord.profiler.record_function("after"):
            y = z + 1
    after = next(e for e in prof.events() if e.name == "after")
    assert after.cpu_parent is None
    assert [c.name for c in after.cpu_children] == ["aten::add"]
    assert y.tolist() == [2.0] * 3


def test_ops_find_their_ranges_past_ops_the_server_refused(session):
    x = tensord.ones(4)
    big = tensord.ones(2, 2)
    with tensord.profiler.profile() as prof:
        with tensord.profiler.record_function("first"):
            a = x + 1
            with pytest.raises(RuntimeError):
                big.view(3)  # refused where it is made
        with tensord.profiler.record_function("second"):
            b = [x * k for k in range(12)]  # twelve muls, all in "second"
    by_range = {}
    for e in prof.events():
        if e.name.startswith("aten::"):
            by_range.setdefault(e.cpu_parent.name if e.cpu_parent else None, []).append(e.name)
    assert by_range["first"] == ["aten::add"]
    assert by_range["second"] == ["aten::mul"] * 12
    assert a.tolist() == [2.0] * 4 and len(b) == 12


def test_with_stack_names_the_programs_lines(session, tmp_path):
    x = tensord.ones(8)
    with tensord.profiler.profile(with_stack=True) as prof:
        y = x.exp()  # the line
    exp = next(e for e in prof.events() if e.name == "aten::exp")
    assert exp.stack and exp.stack[0].startswith(__file__) and "test_with_stack" in exp.stack[0]
    table = prof.key_averages(group_by_stack_n=1).table()
    assert "Source Location" in table
    path = tmp_path / "stacks.txt"
    prof.export_stacks(str(path))
    assert any("test_with_stack_names_the_programs_lines" in line
               for line in path.read_text().splitlines())
    assert y.tolist()[0] == pytest.approx(2.718281828)


def test_chrome_trace_and_trace_handler(session, tmp_path):
    prof, _ = profiled_program(tensord, record_shapes=True)
    path = tmp_path / "trace.json"
    prof.add_metadata("run", "a")
    prof.export_chrome_trace(str(path))
    trace = json.loads(path.read_text())
    assert trace["run"] == "a"
    events = trace["traceEvents"]
    assert {e["pid"] for e in events} == {"tensord client", "tensord server"}
    assert all(e["ph"] == "X" and e["dur"] >= 0 for e in events)
    assert any(e["args"].get("Input Dims") == [[256, 256], [256, 256]] for e in events)
    prof.export_chrome_trace(str(tmp_path / "trace.json.gz"))
    with gzip.open(tmp_path / "trace.json.gz") as f:
        assert json.load(f)["traceEvents"] == events
    out = tmp_path / "tb"
    x = tensord.ones(4)
    with tensord.profiler.profile(
            schedule=tensord.profiler.schedule(wait=0, warmup=1, active=1, repeat=2),
            on_trace_ready=tensord.profiler.tensorboard_trace_handler(str(out), "w")) as p:
        for _ in range(5):
            x = x + 1
            p.step()
    files = sorted(os.listdir(out))
    assert len(files) == 2 and all(f.startswith("w.") and f.endswith(".pt.trace.json")
                                   for f in files)
    for f in files:
        names = [e["name"] for e in json.loads((out / f).read_text())["traceEvents"]]
        assert "aten::add" in names and any(n.startswith("ProfilerStep#") for n in names)
        assert "ProfilerStep*" not in names


def test_legacy_profile_and_its_misuse_match_torch(session):
    for module in (tensord, torch):
        prof = module.autograd.profiler.profile()
        with pytest.raises(RuntimeError, match="Profiler didn't finish running"):
            prof.table()
        with prof:
            module.ones(3) * 2
        assert "aten::mul" in prof.table()
        assert prof.self_cpu_time_total > 0
        assert "Total" == prof.total_average().key
        with module.autograd.profiler.profile(enabled=False) as off:
            module.ones(2) + 1
        assert off is None
    with tensord.autograd.profiler.profile(record_shapes=True) as prof:
        with tensord.autograd.profiler.record_function("r"):
            tensord.ones(2) + 1
    assert [e.key for e in prof.key_averages() if e.key == "r"] == ["r"]

    @tensord.autograd.profiler.record_function("decorated")
    def f(t):
        return t * 3

    with tensord.profiler.profile() as prof:
        f(tensord.ones(2))
    decorated = next(e for e in prof.events() if e.name == "decorated")
    assert [c.name for c in decorated.cpu_children] == ["aten::mul"]


def test_errors_stay_at_their_line_under_a_profile(session):
    x = tensord.ones(4)
    with tensord.profiler.profile() as prof:
        bad = x.index_select(0, tensord.tensor([7]))  # out of range: found by the kernel
        fine = x + 1
    assert fine.tolist() == [2.0] * 4
    failed = [e for e in prof.events() if e.args.get("failed")]
    assert [e.name for e in failed] == ["aten::index_select"]
    with pytest.raises(IndexError):
        bad.tolist()


def test_flops_are_torchs(session):
    """with_flops: the FLOPs torch's profiler counts for each op it counts (products, conv2d,
    add, mul), from the same shapes; tensord's matmul kernel counts as torch's mm/bmm under it,
    and the table gains torch's column."""
    def run(m):
        x, w = m.ones(8, 16), m.ones(16, 32)
        b, c = m.ones(4, 8, 16), m.ones(4, 16, 8)
        img, k = m.ones(2, 3, 16, 16), m.ones(6, 3, 3, 3)
        with m.profiler.profile(with_flops=True) as prof:
            m.mm(x, w)
            m.addmm(m.zeros(8, 32), x, w)
            m.bmm(b, c)
            m.baddbmm(m.zeros(4, 8, 8), b, c)
            m.nn.functional.conv2d(img, k, padding=1, stride=2)
            m.nn.functional.conv2d(img, k.view(3, 6, 3, 3)[:, :3].contiguous(), groups=1)
            x * 2
            x + x
            x * x
            x @ w
            b @ c
        counts = {}
        for e in prof.events():
            if e.flops:
                counts.setdefault(e.name, []).append(e.flops)
        return prof, counts

    ours, ours_counts = run(tensord)
    theirs, their_counts = run(torch)
    # x @ w and b @ c are tensord's matmul kernel; torch counts them on the mm and bmm under
    # its matmul (their second entries)
    torch_mm, torch_bmm = their_counts.pop("aten::mm"), their_counts.pop("aten::bmm")
    their_counts.update({"aten::mm": torch_mm[:1], "aten::bmm": torch_bmm[:1],
                         "aten::matmul": [torch_mm[1], torch_bmm[1]]})
    assert ours_counts == their_counts
    table = ours.key_averages().table()
    their_table = theirs.key_averages().table()
    assert table.splitlines()[1].split()[-2:] == their_table.splitlines()[1].split()[-2:] == \
        ["Total", "FLOPs"]
    plain, _ = profiled_program(tensord)
    assert all(e.flops == 0 for e in plain.events())


def test_device_times_fill_torchs_cuda_columns():
    """A GPU server reports each kernel's device time (device_ns): it is the op's CUDA time and
    its range's, and the table shows torch's CUDA columns. (From a server's answer made here:
    this machine's server has no GPU; test_cuda.py checks a real one.)"""
    from types import SimpleNamespace

    from tensord._session import pb
    from tensord.autograd.profiler import _events

    response = pb.ProfileResponse(ops=[
        pb.ProfiledOp(op="mm", op_id=1, device="cuda:0", has_kernel=True, queued_ns=0,
                      start_ns=1000, end_ns=3000, device_ns=2500, first_output=7),
        pb.ProfiledOp(op="relu", op_id=2, device="cuda:0", has_kernel=True, queued_ns=10,
                      start_ns=3000, end_ns=3500, device_ns=-1, first_output=8)])
    outer = tensord._profiling._Range("step", 0, None)
    outer.end = 100
    rec = SimpleNamespace(ranges=[outer], ops=[("mm", 7, outer, None), ("relu", 8, outer, None)],
                          server_t0=0)
    events = _events(rec, response)
    by_name = {e.name: e for e in events}
    assert by_name["aten::mm"].cuda_time_total == 2.5
    assert by_name["aten::mm"].self_cuda_time_total == 2.5
    assert by_name["aten::relu"].cuda_time_total == 0  # not measured (the stream's first op)
    assert by_name["step"].cuda_time_total == 2.5 and by_name["step"].self_cuda_time_total == 0
    table = events.key_averages().table()
    header = [c.strip() for c in table.splitlines()[1].split("  ") if c.strip()]
    assert header == ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total",
                      "CPU time avg", "Self CUDA", "Self CUDA %", "CUDA total", "CUDA time avg",
                      "# of Calls"]
    assert table.splitlines()[-1] == "Self CUDA time total: 2.500us"


def test_profiling_nothing_and_stopping_without_starting(session):
    with tensord.profiler.profile() as prof:
        pass
    assert list(prof.events()) == [] and prof.key_averages().table() == ""
    with pytest.raises(RuntimeError, match="not profiling"):
        session.profile(False)
    with pytest.raises(RuntimeError, match="already enabled"):
        with tensord.profiler.profile():
            with tensord.profiler.profile():
                pass


def test_the_servers_limit_drops_ops_and_says_so(session):
    proc, address = tensord_process.start("--max_profiled_ops=5")
    s = tensord.connect(address)
    try:
        tensord.set_default_session(s)
        x = tensord.ones(2)
        with pytest.warns(UserWarning, match="recorded 5 ops of this profile and dropped 5 "
                                             r"more \(its limits: 5 ops"):
            with tensord.profiler.profile() as prof:
                for _ in range(10):
                    x = x + 1
        assert len(prof.events()) == 5
        assert x.tolist() == [11.0, 11.0]
    finally:
        tensord.set_default_session(session)
        s.close()
        proc.terminate()
        proc.wait(timeout=30)
