"""A profile's events, their averages and their table, as torch.autograd.profiler_util's.

An event is an op the server ran (named as torch names it, "aten::mm") or a range the program
opened (record_function). Times are microseconds. An op's CPU time is its kernel's time on the
server (on a GPU server, the kernel's launch on the host; its CUDA time is the kernel's time on
the device), and a range's is the client's, from its enter until the last op sent in it has
run; a range's self time is that minus its children's times, its CUDA time its children's.
"""
import enum
import json
import math
from collections import OrderedDict


class DeviceType(enum.Enum):
    CPU = 0
    CUDA = 1


def _format_time(time_us):
    if time_us >= 1e6:
        return f"{time_us / 1e6:.3f}s"
    if time_us >= 1e3:
        return f"{time_us / 1e3:.3f}ms"
    return f"{time_us:.3f}us"


def _format_time_share(time_us, total_us):
    if total_us == 0:
        return "NaN"
    return f"{time_us * 100.0 / total_us:.2f}%"


def _format_memory(nbytes):
    for unit, size in (("Gb", 1 << 30), ("Mb", 1 << 20), ("Kb", 1 << 10)):
        if abs(nbytes) >= size:
            return f"{nbytes / size:.2f} {unit}"
    return f"{nbytes} b"


class Interval:
    def __init__(self, start, end):
        self.start = start
        self.end = end

    def elapsed_us(self):
        return self.end - self.start


class _Times:
    """The *_str properties torch's events have."""

    @property
    def cpu_time_str(self):
        return _format_time(self.cpu_time)

    @property
    def cpu_time_total_str(self):
        return _format_time(self.cpu_time_total)

    @property
    def self_cpu_time_total_str(self):
        return _format_time(self.self_cpu_time_total)

    @property
    def cuda_time_str(self):
        return _format_time(self.cuda_time)

    @property
    def cuda_time_total_str(self):
        return _format_time(self.cuda_time_total)

    @property
    def self_cuda_time_total_str(self):
        return _format_time(self.self_cuda_time_total)


class FunctionEvent(_Times):
    """One op or range of a profile."""

    def __init__(self, id, name, thread, start_us, end_us, input_shapes=None, stack=None,
                 device_type=DeviceType.CPU, device_index=0, cpu_memory_usage=0,
                 cuda_memory_usage=0, trace_name=None, args=None, process="server",
                 device_time=0):
        self.id = id
        self.name = name
        self.key = name
        self.trace_name = trace_name or name
        self.thread = thread
        self.fwd_thread = None
        self.time_range = Interval(start_us, end_us)
        self.input_shapes = input_shapes if input_shapes is not None else []
        self.stack = stack if stack is not None else []
        self.device_type = device_type
        self.device_index = device_index
        self.cpu_memory_usage = cpu_memory_usage
        self.cuda_memory_usage = cuda_memory_usage
        self.cpu_children = []
        self.cpu_parent = None
        self.kernels = []
        self.count = 1
        self.node_id = -1
        self.is_async = False
        self.is_remote = False
        self.is_legacy = False
        self.sequence_nr = -1
        self.scope = 0
        self.flops = 0
        self.args = args or {}
        self.device_time = device_time  # µs its own kernels took on a GPU
        self.process = process  # "client" (a range) or "server" (an op): its trace process

    def append_cpu_child(self, child):
        self.cpu_children.append(child)

    def set_cpu_parent(self, parent):
        self.cpu_parent = parent

    def append_kernel(self, name, device, duration):
        self.kernels.append((name, device, duration))

    @property
    def cpu_time_total(self):
        return self.time_range.elapsed_us()

    @property
    def self_cpu_time_total(self):
        return max(0.0, self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children))

    @property
    def cpu_time(self):
        return self.cpu_time_total

    @property
    def cuda_time_total(self):
        return self.device_time + sum(c.cuda_time_total for c in self.cpu_children)

    @property
    def self_cuda_time_total(self):
        return self.device_time

    @property
    def cuda_time(self):
        return self.cuda_time_total

    @property
    def self_cpu_memory_usage(self):
        return self.cpu_memory_usage - sum(c.cpu_memory_usage for c in self.cpu_children)

    @property
    def self_cuda_memory_usage(self):
        return self.cuda_memory_usage - sum(c.cuda_memory_usage for c in self.cpu_children)

    def __repr__(self):
        return (f"<FunctionEvent id={self.id} name={self.name} device_type={self.device_type} "
                f"node_id={self.node_id} cpu_time={self.cpu_time_str} "
                f"start_us={self.time_range.start} end_us={self.time_range.end} "
                f"cpu_children={[c.id for c in self.cpu_children]} "
                f"cuda_time={self.cuda_time_str} name={self.name} thread={self.thread} "
                f"input_shapes={self.input_shapes} cpu_memory_usage={self.cpu_memory_usage} "
                f"cuda_memory_usage={self.cuda_memory_usage} is_async={self.is_async} "
                f"is_remote={self.is_remote} seq_nr={self.sequence_nr} "
                f"is_legacy={self.is_legacy}>")


class FunctionEventAvg(_Times):
    """The totals of the events of one key (key_averages)."""

    def __init__(self):
        self.key = None
        self.count = 0
        self.node_id = 0
        self.is_async = False
        self.is_remote = False
        self.cpu_time_total = 0
        self.cuda_time_total = 0
        self.self_cpu_time_total = 0
        self.self_cuda_time_total = 0
        self.input_shapes = None
        self.stack = None
        self.scope = None
        self.cpu_memory_usage = 0
        self.cuda_memory_usage = 0
        self.self_cpu_memory_usage = 0
        self.self_cuda_memory_usage = 0
        self.cpu_children = None
        self.cpu_parent = None
        self.device_type = DeviceType.CPU
        self.is_legacy = False
        self.flops = 0

    def add(self, other):
        if self.key is None:
            self.key = other.key
            self.node_id = other.node_id
            self.is_async = other.is_async
            self.is_remote = other.is_remote
            self.cpu_parent = other.cpu_parent
            self.cpu_children = other.cpu_children
            self.input_shapes = other.input_shapes
            self.stack = other.stack
            self.scope = other.scope
            self.device_type = other.device_type
            self.is_legacy = other.is_legacy
        if not isinstance(other, (FunctionEvent, FunctionEventAvg)):
            raise TypeError("add(): expected a FunctionEvent or a FunctionEventAvg")
        if other.key != self.key:
            raise ValueError(f"add(): key {other.key!r} differs from {self.key!r}")
        self.cpu_time_total += other.cpu_time_total
        self.cuda_time_total += other.cuda_time_total
        self.self_cpu_time_total += other.self_cpu_time_total
        self.self_cuda_time_total += other.self_cuda_time_total
        self.cpu_memory_usage += other.cpu_memory_usage
        self.cuda_memory_usage += other.cuda_memory_usage
        self.self_cpu_memory_usage += other.self_cpu_memory_usage
        self.self_cuda_memory_usage += other.self_cuda_memory_usage
        self.count += other.count
        self.flops += other.flops
        return self

    def __iadd__(self, other):
        return self.add(other)

    @property
    def cpu_time(self):
        return 0.0 if self.count == 0 else self.cpu_time_total / self.count

    @property
    def cuda_time(self):
        return 0.0 if self.count == 0 else self.cuda_time_total / self.count

    def __repr__(self):
        return (f"<FunctionEventAvg key={self.key} self_cpu_time={self.self_cpu_time_total_str} "
                f"cpu_time={self.cpu_time_str}  self_cuda_time={self.self_cuda_time_total_str} "
                f"cuda_time={self.cuda_time_str} input_shapes={self.input_shapes} "
                f"cpu_memory_usage={self.cpu_memory_usage} "
                f"cuda_memory_usage={self.cuda_memory_usage}>")


class EventList(list):
    """A profile's events (or their averages), with torch's table and trace export."""

    def __init__(self, *args, use_cuda=False, profile_memory=False, with_flops=False):
        super().__init__(*args)
        self._use_cuda = use_cuda
        self._profile_memory = profile_memory
        self._with_flops = with_flops

    def __str__(self):
        return self.table()

    @property
    def self_cpu_time_total(self):
        return sum(e.self_cpu_time_total for e in self)

    def key_averages(self, group_by_input_shapes=False, group_by_stack_n=0):
        """The events averaged by key (and by input shapes, and by their top stack frames)."""
        stats = OrderedDict()
        for e in self:
            key = (e.key, e.node_id,
                   str(e.input_shapes) if group_by_input_shapes else None,
                   tuple(e.stack[:group_by_stack_n]) if group_by_stack_n > 0 else None)
            avg = stats.get(key)
            if avg is None:
                avg = stats[key] = FunctionEventAvg()
            avg.add(e)
        averages = EventList(stats.values(), use_cuda=self._use_cuda,
                             profile_memory=self._profile_memory, with_flops=self._with_flops)
        for avg in averages:  # (as torch's: shapes and stacks shown only when grouped by)
            avg.stack = avg.stack[:group_by_stack_n]
            if not group_by_input_shapes:
                avg.input_shapes = ""
        return averages

    def total_average(self):
        total = FunctionEventAvg()
        for e in self:
            total.cpu_time_total += e.cpu_time_total
            total.self_cpu_time_total += e.self_cpu_time_total
            total.cuda_time_total += e.cuda_time_total
            total.self_cuda_time_total += e.self_cuda_time_total
            total.cpu_memory_usage += e.cpu_memory_usage
            total.cuda_memory_usage += e.cuda_memory_usage
            total.count += e.count
        total.key = "Total"
        return total

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75,
              max_name_column_width=55, max_shapes_column_width=80, header=None,
              top_level_events_only=False):
        """torch's table of the events: one row per event (or key, after key_averages), sorted
        by an attribute's value (`sort_by`: "cpu_time_total", "self_cpu_time_total", "count",
        …), with input shapes and source locations where they were recorded."""
        return _table(self, sort_by, row_limit, max_src_column_width, max_name_column_width,
                      max_shapes_column_width, header, top_level_events_only,
                      self._profile_memory, self._with_flops)

    def export_chrome_trace(self, path, metadata=None):
        """Writes the events as a Chrome trace (chrome://tracing, Perfetto): one process for
        the client's ranges, one for the server's ops with a lane per stream; `metadata`'s
        keys at the top level."""
        with open(path, "w") as f:
            self._write_chrome_trace(f, metadata)

    def _write_chrome_trace(self, f, metadata):
        """export_chrome_trace into the open text file `f` (a gzip one, for torch.profiler)."""
        events = []
        for e in self:
            if not isinstance(e, FunctionEvent):
                raise TypeError("export_chrome_trace(): the events were averaged; export the "
                                "profile's events()")
            args = dict(e.args)
            if e.input_shapes:
                args["Input Dims"] = e.input_shapes
            if e.stack:
                args["Call stack"] = ";".join(e.stack)
            events.append({"name": e.trace_name, "ph": "X", "ts": e.time_range.start,
                           "dur": e.cpu_time_total, "pid": f"tensord {e.process}",
                           "tid": e.thread, "args": args})
        trace = dict(metadata or {})
        trace.update(traceEvents=events, displayTimeUnit="ms")
        json.dump(trace, f)

    def export_stacks(self, path, metric="self_cpu_time_total"):
        """Stacks with their times, one per line ("frame;frame;... time"), for flame graphs."""
        with open(path, "w") as f:
            for e in self:
                if e.stack:
                    f.write(";".join(reversed(e.stack)) + " " +
                            str(int(getattr(e, metric))) + "\n")


_FLOP_UNITS = ("FLOPs", "KFLOPs", "MFLOPs", "GFLOPs", "TFLOPs", "PFLOPs")


def _flops_unit(flops):
    """(scale, name) of the unit torch's table shows FLOPs in, chosen by the smallest count."""
    step = int(max(0.0, min(math.log10(flops) / 3, len(_FLOP_UNITS) - 1)))
    return 10.0 ** (-3 * step), _FLOP_UNITS[step]


def _table(events, sort_by, row_limit, max_src_column_width, max_name_column_width,
           max_shapes_column_width, header, top_level_events_only, profile_memory,
           with_flops=False):
    if len(events) == 0:
        return ""
    has_cuda_time = any(e.self_cuda_time_total > 0 for e in events)
    has_cuda_mem = any(e.self_cuda_memory_usage > 0 for e in events)
    has_shapes = any(e.input_shapes for e in events)
    if sort_by is not None:
        events = sorted(events, key=lambda e: getattr(e, sort_by), reverse=True)
    name_width = max(len(e.key) for e in events) + 4
    if max_name_column_width is not None:
        name_width = min(name_width, max_name_column_width)
    shapes_width = max(len(str(e.input_shapes)) for e in events) + 4
    if max_shapes_column_width is not None:
        shapes_width = min(shapes_width, max_shapes_column_width)
    stacks = [e.stack for e in events if e.stack]
    src_width = None
    if stacks:
        src_width = max(len(s) for stack in stacks for s in stack) + 4
        if max_src_column_width is not None:
            src_width = min(src_width, max_src_column_width)

    headers = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"]
    if has_cuda_time:
        headers += ["Self CUDA", "Self CUDA %", "CUDA total", "CUDA time avg"]
    if profile_memory:
        headers += ["CPU Mem", "Self CPU Mem"]
        if has_cuda_mem:
            headers += ["CUDA Mem", "Self CUDA Mem"]
    headers.append("# of Calls")
    widths = [(name_width, ">")] + [(12, ">")] * (len(headers) - 1)
    if has_shapes:
        headers.append("Input Shapes")
        widths.append((shapes_width, ">"))
    if stacks:
        headers.append("Source Location")
        widths.append((src_width, "<"))
    counted = [e.flops for e in events if e.flops > 0]
    with_flops = with_flops and bool(counted)
    if with_flops:
        flops_scale, unit = _flops_unit(min(counted))
        headers.append(f"Total {unit}")
        widths.append((12, ">"))
    row_format = "".join("{: " + align + str(w) + "}  " for w, align in widths)
    separator = "".join("-" * w + "  " for w, _ in widths)
    line_length = sum(w + 2 for w, _ in widths) - 2

    total_self = sum(e.self_cpu_time_total for e in events)
    total_self_cuda = sum(e.self_cuda_time_total for e in events)
    lines = []
    if header is not None:
        lines += ["=" * line_length, header]
    if top_level_events_only:
        lines += ["=" * line_length, "This report only display top-level ops statistics"]
    lines += [separator, row_format.format(*headers), separator]

    def trim(path):
        if len(path) > src_width:
            path = path[len(path) - src_width:]
            if len(path) > 3:
                path = "..." + path[3:]
        return path

    shown = 0
    for e in events:
        if shown == row_limit:
            break
        if top_level_events_only and e.cpu_parent is not None:
            continue
        shown += 1
        name = e.key
        if max_name_column_width is not None and len(name) >= max_name_column_width - 3:
            name = name[:max_name_column_width - 3] + "..."
        row = [name, _format_time_share(e.self_cpu_time_total, total_self),
               e.self_cpu_time_total_str, _format_time_share(e.cpu_time_total, total_self),
               e.cpu_time_total_str, e.cpu_time_str]
        if has_cuda_time:
            row += [e.self_cuda_time_total_str,
                    _format_time_share(e.self_cuda_time_total, total_self_cuda),
                    e.cuda_time_total_str, e.cuda_time_str]
        if profile_memory:
            row += [_format_memory(e.cpu_memory_usage), _format_memory(e.self_cpu_memory_usage)]
            if has_cuda_mem:
                row += [_format_memory(e.cuda_memory_usage),
                        _format_memory(e.self_cuda_memory_usage)]
        row.append(e.count)
        if has_shapes:
            row.append(str(e.input_shapes)[:shapes_width])
        if stacks:
            row.append(trim(e.stack[0]) if e.stack else "")
        if with_flops:
            row.append("--" if e.flops <= 0 else f"{e.flops * flops_scale:8.3f}")
        lines.append(row_format.format(*row))
        if stacks:
            blank = [""] * (len(headers) - 1)
            for entry in (e.stack or [])[1:5]:
                lines.append(row_format.format(*(blank + [trim(entry)])))
            lines.append(row_format.format(*(blank + [""])))
    lines.append(separator)
    lines.append(f"Self CPU time total: {_format_time(total_self)}")
    if has_cuda_time:
        lines.append(f"Self CUDA time total: {_format_time(total_self_cuda)}")
    return "".join(line + "\n" for line in lines)
