"""torch.profiler: profile with activities, schedules and trace handlers, record_function.

The recording is tensord/_profiling.py's (the server times each op of the session; the client
adds its ranges); the events and tables are torch.autograd.profiler_util's (tensord.autograd.
profiler_util). A schedule's steps record ProfilerStep#N ranges, as torch's do.
"""
import enum
import gzip
import json
import os
import socket
import time
import warnings

from ..autograd import profiler as _legacy
from ..autograd.profiler import kineto_available, record_function  # noqa: F401 (torch's names)

__all__ = ["profile", "record_function", "schedule", "supported_activities",
           "tensorboard_trace_handler", "ProfilerAction", "ProfilerActivity"]


class ProfilerActivity(enum.Enum):
    """What a profile covers. A tensord profile always covers the server's ops on its device:
    CPU, and CUDA on a GPU server (an op's CPU time is then its launch, its CUDA time its
    kernels' time on the device)."""
    CPU = 0
    CUDA = 1


def supported_activities():
    """The activities of the current session's server: CPU, and CUDA when it has a GPU."""
    out = {ProfilerActivity.CPU}
    try:
        from .. import cuda  # noqa: PLC0415
        if cuda.is_available():
            out.add(ProfilerActivity.CUDA)
    except Exception:  # no server reachable: the CPU only
        pass
    return out


class ProfilerAction(enum.Enum):
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def schedule(*, wait, warmup, active, repeat=0, skip_first=0):
    """A profile's schedule (torch.profiler.schedule): after `skip_first` steps, cycles of
    `wait` steps not recorded, `warmup` steps, `active` steps recorded (the last of which
    hands the trace to on_trace_ready); `repeat` cycles (0: until the profile ends)."""
    if not (wait >= 0 and warmup >= 0 and active > 0 and repeat >= 0 and skip_first >= 0):
        raise AssertionError("Invalid profiler schedule arguments")
    if warmup == 0:
        warnings.warn("Profiler won't be using warmup, this can skew profiler results")
    cycle = wait + warmup + active

    def schedule_fn(step):
        assert step >= 0
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if repeat > 0 and step / cycle >= repeat:
            return ProfilerAction.NONE
        at = step % cycle
        if at < wait:
            return ProfilerAction.NONE
        if at < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if at < cycle - 1 else ProfilerAction.RECORD_AND_SAVE

    return schedule_fn


def _default_schedule_fn(_):
    return ProfilerAction.RECORD


def tensorboard_trace_handler(dir_name, worker_name=None, use_gzip=False):
    """An on_trace_ready that writes each trace to `dir_name` as
    "<worker>.<time in ms>.pt.trace.json[.gz]" (TensorBoard's profiler plugin reads them)."""

    def handler(prof):
        os.makedirs(dir_name, exist_ok=True)
        worker = worker_name or f"{socket.gethostname()}_{os.getpid()}"
        name = f"{worker}.{int(time.time() * 1000)}.pt.trace.json" + (".gz" if use_gzip else "")
        prof.export_chrome_trace(os.path.join(dir_name, name))  # (.gz: gzipped)

    return handler


class profile:
    """Profiles the ops of the current session (torch.profiler.profile): as a context manager
    or with start()/stop(), and with a schedule advanced by step(). key_averages(), events(),
    export_chrome_trace() and export_stacks() read the last trace recorded."""

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None,
                 record_shapes=False, profile_memory=False, with_stack=False, with_flops=False,
                 with_modules=False, experimental_config=None, use_cuda=None):
        self.activities = set(activities) if activities else supported_activities()
        if use_cuda is not None:
            warnings.warn("use_cuda is deprecated, use activities argument instead")
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_flops = with_flops
        self.with_modules = with_modules
        self.experimental_config = experimental_config
        self.schedule = schedule or _default_schedule_fn
        self.record_steps = schedule is not None  # ProfilerStep#N ranges
        self.on_trace_ready = on_trace_ready
        self.step_num = 0
        self.current_action = self.schedule(self.step_num)
        self.step_rec_fn = None
        self.profiler = None  # the last trace: a torch.autograd.profiler.profile
        self._metadata = {}

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        self.stop()

    def start(self):
        self._transit(ProfilerAction.NONE, self.current_action)
        self._enter_step(self.step_num)

    def stop(self):
        self._exit_step()
        self._transit(self.current_action, None)

    def step(self):
        """The next step of the schedule begins."""
        self._exit_step()
        previous, done = self.current_action, self.step_num
        self.step_num += 1
        self.current_action = self.schedule(self.step_num)
        self._transit(previous, self.current_action)
        self._enter_step(done)

    def _enter_step(self, n):
        if self.record_steps:
            self.step_rec_fn = record_function(f"ProfilerStep#{n}")
            self.step_rec_fn.__enter__()

    def _exit_step(self):
        if self.record_steps and self.step_rec_fn is not None:
            self.step_rec_fn.__exit__(None, None, None)
            self.step_rec_fn = None

    # The schedule's transitions (torch's): what happens between two steps' actions (None:
    # the profile stops).
    def _transit(self, previous, current):
        a = ProfilerAction
        recording = (a.RECORD, a.RECORD_AND_SAVE)
        if previous == a.RECORD_AND_SAVE:
            self.stop_trace()
            self._trace_ready()
            if current in recording:
                self.start_trace()
        elif previous == a.RECORD:
            if current is None:
                self.stop_trace()
                self._trace_ready()
            elif current not in recording:
                warnings.warn(f"Incorrect schedule: RECORD followed by {current.name}")
                self.stop_trace()
        elif previous == a.WARMUP:
            if current in recording:
                self.start_trace()
            elif current is None or current == a.NONE:
                if current == a.NONE:
                    warnings.warn("Incorrect schedule: WARMUP followed by NONE")
                self.start_trace()
                self.stop_trace()
        elif current in recording:  # from NONE
            self.start_trace()

    def prepare_trace(self):
        """Warm-up has nothing to prepare: recording starts in start_trace."""

    def start_trace(self):
        self.profiler = _legacy.profile(record_shapes=self.record_shapes,
                                        profile_memory=self.profile_memory,
                                        with_stack=self.with_stack, with_flops=self.with_flops)
        self.profiler.__enter__()

    def stop_trace(self):
        if self.profiler is not None and self.profiler.function_events is None:
            self.profiler.__exit__(None, None, None)

    def _trace_ready(self):
        if self.on_trace_ready:
            self.on_trace_ready(self)

    def _finished(self):
        if self.profiler is None:
            raise AssertionError("the profiler has not recorded a trace yet")
        return self.profiler

    def events(self):
        """The last trace's events (ops and ranges)."""
        return self._finished().function_events

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0):
        return self._finished().key_averages(group_by_input_shape, group_by_stack_n)

    def export_chrome_trace(self, path):
        """The last trace as a Chrome trace (gzipped when `path` ends in .gz), with the
        metadata added by add_metadata."""
        events = self.events()
        if path.endswith(".gz"):
            with gzip.open(path, "wt") as f:
                events._write_chrome_trace(f, self._metadata)
            return None
        return events.export_chrome_trace(path, self._metadata)

    def export_stacks(self, path, metric="self_cpu_time_total"):
        return self._finished().export_stacks(path, metric)

    def add_metadata(self, key, value):
        """A string value under `key` in the exported trace."""
        self._metadata[key] = str(value)

    def add_metadata_json(self, key, value):
        """A JSON value (given as its text) under `key` in the exported trace."""
        self._metadata[key] = json.loads(value)
