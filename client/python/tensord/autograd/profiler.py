"""torch.autograd.profiler: the profile context manager and record_function ranges.

The server times each op of the session (see tensord/_profiling.py); the events, averages and
tables are profiler_util's, with torch's columns. torch.profiler (tensord/profiler) builds its
schedules and trace handlers on the same recording.
"""
import contextlib

from .. import _profiling
from .profiler_util import DeviceType, EventList, FunctionEvent


def _numel(sizes):
    n = 1
    for s in sizes:
        n *= s
    return n


def _flops(name, inputs, outputs):
    """The floating-point operations of an op, as torch's profiler counts them (for the ops it
    counts, and tensord's matmul kernel): products 2 * output elements * the contracted size,
    conv2d 2 * output elements * each output channel's weights, add and mul one per output
    element; 0 for the rest."""
    if not outputs:
        return 0
    out = _numel(outputs[0])
    if name in ("mm", "bmm", "matmul") and inputs and inputs[0]:
        return 2 * out * inputs[0][-1]
    if name in ("addmm", "baddbmm") and len(inputs) > 1 and inputs[1]:
        return 2 * out * inputs[1][-1]
    if name == "conv2d" and len(inputs) > 1 and inputs[1] and inputs[1][0]:
        return 2 * out * (_numel(inputs[1]) // inputs[1][0])
    if name in ("add", "mul"):
        return out
    return 0


def _events(rec, response, profile_memory=False, with_flops=False):
    """The profile's FunctionEvents, in the order they started: the client's ranges (times on
    the client's clock) and the server's ops (times on the server's, placed from the start of
    the profile), each op the child of the range it was sent from. An op's `thread` is its
    stream."""
    from_range = {}
    events = []
    for r in rec.ranges:
        end = r.end if r.end is not None else r.start
        # A schedule's step ranges are one key in the tables, each its own in the trace.
        name = "ProfilerStep*" if r.name.startswith("ProfilerStep#") else r.name
        e = FunctionEvent(0, name, 0, r.start / 1000.0, end / 1000.0, trace_name=r.name,
                          process="client")
        from_range[id(r)] = e
        events.append(e)
    for r in rec.ranges:
        if r.parent is not None:
            child, parent = from_range[id(r)], from_range[id(r.parent)]
            child.set_cpu_parent(parent)
            parent.append_cpu_child(child)
    base = rec.server_t0
    for op, r, stack in _profiling.join(rec, response):
        queued = base + op.queued_ns
        if op.start_ns >= 0:
            start, end = base + op.start_ns, base + op.end_ns
        else:  # a view, or a kernel that did not run
            start = end = queued
        cuda = op.device.startswith("cuda")
        memory = op.allocated_bytes if profile_memory else 0
        args = {"op id": op.op_id, "device": op.device,
                "queued us": queued / 1000.0}
        if op.has_kernel and op.start_ns < 0:
            args["ran"] = False
        if op.failed:
            args["failed"] = True
        shapes = [list(s.values) for s in op.input_sizes]
        e = FunctionEvent(0, "aten::" + op.op, op.stream, start / 1000.0, end / 1000.0,
                          input_shapes=shapes,
                          stack=stack, device_type=DeviceType.CPU,
                          device_index=int(op.device.split(":")[1]) if ":" in op.device else 0,
                          cpu_memory_usage=0 if cuda else memory,
                          cuda_memory_usage=memory if cuda else 0, args=args,
                          process="server",
                          device_time=op.device_ns / 1000.0 if op.device_ns > 0 else 0)
        if with_flops:
            e.flops = _flops(op.op, shapes, [list(s.values) for s in op.output_sizes])
        events.append(e)
        if r is not None:
            parent = from_range[id(r)]
            e.set_cpu_parent(parent)
            parent.append_cpu_child(e)
    # A range lasts until the ops sent in it have run (they run after the client moved on): it
    # ends at its last child's end when that is later than its exit. Its memory is its
    # children's. (Inner ranges first: they were opened after their parents.)
    for r in reversed(rec.ranges):
        e = from_range[id(r)]
        if e.cpu_children:
            span = e.time_range
            span.start = min(span.start, min(c.time_range.start for c in e.cpu_children))
            span.end = max(span.end, max(c.time_range.end for c in e.cpu_children))
        if profile_memory:
            e.cpu_memory_usage = sum(c.cpu_memory_usage for c in e.cpu_children)
            e.cuda_memory_usage = sum(c.cuda_memory_usage for c in e.cpu_children)
    events.sort(key=lambda e: (e.time_range.start, -e.time_range.end))
    for i, e in enumerate(events):
        e.id = i
    if response.dropped:
        import warnings  # noqa: PLC0415
        warnings.warn(f"tensord profiler: the server recorded {len(response.ops)} ops of this "
                      f"profile and dropped {response.dropped} more (its limits: "
                      f"{response.max_ops} ops, the session's memory and one answer's size)")
    return EventList(events, profile_memory=profile_memory, with_flops=with_flops)


def kineto_available():
    """torch's profiler backend: tensord's profiles come from its server instead."""
    return False


class profile:
    """Profiles the ops of the current session run in its scope (torch.autograd.profiler.
    profile): `prof.key_averages().table(sort_by="self_cpu_time_total")`, `prof.events()`,
    `export_chrome_trace`. `use_cuda` and `use_kineto` are accepted: on a GPU server every op's
    kernels are timed on the device too (torch's CUDA columns)."""

    def __init__(self, enabled=True, *, use_cuda=False, record_shapes=False, with_flops=False,
                 profile_memory=False, with_stack=False, with_modules=False, use_kineto=False,
                 use_cpu=True, experimental_config=None):
        self.enabled = enabled
        self.use_cuda = use_cuda
        self.record_shapes = record_shapes
        self.with_flops = with_flops
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_modules = with_modules
        self.use_cpu = use_cpu
        self.function_events = None
        self.entered = False
        self._recording = None

    def __enter__(self):
        if not self.enabled:
            return None  # (as torch's)
        if self.entered:
            raise RuntimeError("Profiler context manager is not reentrant")
        self.entered = True
        # (FLOPs are counted from the ops' sizes: torch records them for with_flops too)
        self._recording = _profiling.start(self.record_shapes or self.with_flops,
                                           self.with_stack)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        if not self.enabled:
            return False
        stopped = _profiling.stop()
        if stopped is not None:
            self.function_events = _events(*stopped, profile_memory=self.profile_memory,
                                           with_flops=self.with_flops)
        return False

    def __repr__(self):
        if self.function_events is None:
            return "<unfinished torch.autograd.profile>"
        return repr(self.function_events)

    def __str__(self):
        if self.function_events is None:
            return "<unfinished torch.autograd.profile>"
        return str(self.function_events)

    def _check_finish(self):
        if self.function_events is None:
            raise RuntimeError("Profiler didn't finish running")

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75,
              max_name_column_width=55, max_shapes_column_width=80, header=None,
              top_level_events_only=False):
        self._check_finish()
        return self.function_events.table(
            sort_by=sort_by, row_limit=row_limit, max_src_column_width=max_src_column_width,
            max_name_column_width=max_name_column_width,
            max_shapes_column_width=max_shapes_column_width, header=header,
            top_level_events_only=top_level_events_only)

    table.__doc__ = EventList.table.__doc__

    def export_chrome_trace(self, path):
        self._check_finish()
        return self.function_events.export_chrome_trace(path)

    def export_stacks(self, path, metric="self_cpu_time_total"):
        self._check_finish()
        if not self.with_stack:
            raise AssertionError("export_stacks() requires with_stack=True")
        return self.function_events.export_stacks(path, metric)

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0):
        self._check_finish()
        return self.function_events.key_averages(group_by_input_shape, group_by_stack_n)

    def total_average(self):
        self._check_finish()
        return self.function_events.total_average()

    @property
    def self_cpu_time_total(self):
        self._check_finish()
        return self.function_events.self_cpu_time_total


class record_function(contextlib.ContextDecorator):
    """A named range in the profile (torch.autograd.profiler.record_function): the ops sent in
    it are its children in the tables and the trace. A context manager or a decorator; costs
    nothing while no profile records."""

    def __init__(self, name, args=None):
        self.name = name
        self.args = args
        self._range = None

    def __enter__(self):
        self._range = _profiling.push(self.name)
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        _profiling.pop(self._range)
        self._range = None
        return False

