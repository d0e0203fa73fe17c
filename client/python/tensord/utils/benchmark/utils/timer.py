"""Timer: torch.utils.benchmark's Timer for statements whose ops run on a tensord server.

A tensord op returns once it is queued; the server runs it later. A clock read after a loop
of ops therefore measures only how fast the client queues them. So each timed block here ends
by synchronizing the sessions the statement can have used (those of the tensors and modules in
`globals`, and the current session, where one is open) before the clock is read, as torch's
Timer synchronizes CUDA for CUDA work: a block's time covers the server running what the
block queued. The same synchronization runs before the clock starts, so that work queued
earlier (by `setup`, or by the caller) is not counted.
"""
import enum
import gc
import itertools
import textwrap
import timeit
from typing import Any, Callable, Dict, List, Optional, Union

import tensord

from .... import _session
from ...._tensor import Tensor
from ....nn import Module
from . import common

__all__ = ["Timer", "timer", "Language"]


class Language(enum.Enum):
    PYTHON = 0
    CPP = 1


def timer() -> float:
    """timeit.default_timer() read after the current session's queued work has run (as torch's
    `timer` synchronizes CUDA first); opens no session where none is open."""
    current = _session.existing_session()
    if current is not None:
        current.synchronize()
    return timeit.default_timer()


# The timed function: `setup` once, then `stmt` in a loop between two clock reads, each read
# after the sessions' work is done. Names bound by setup and stmt are its locals.
_TEMPLATE = """
def _timed_block(_it, _timer, _synchronize):
{setup}
    _synchronize()
    _t0 = _timer()
    for _ in _it:
{stmt}
    _synchronize()
    _t1 = _timer()
    return _t1 - _t0
"""


def _tidy(code: str) -> str:
    """Dedented, without the newline after an opening triple quote or trailing whitespace."""
    code = textwrap.dedent(code)
    return (code[1:] if code.startswith("\n") else code).rstrip()


def _compile_block(stmt: str, setup: str, namespace: Dict[str, Any]) -> Callable:
    # Outside the function first (as timeit checks), so that a syntax error points into the
    # caller's own text: setup, then setup and stmt.
    compile(setup, "<timeit-src>", "exec")
    compile(setup + "\n" + stmt, "<timeit-src>", "exec")
    source = _TEMPLATE.format(setup=textwrap.indent(setup or "pass", " " * 4),
                              stmt=textwrap.indent(stmt or "pass", " " * 8))
    scope: Dict[str, Any] = {}
    exec(compile(source, "<timeit-src>", "exec"), namespace, scope)  # noqa: S102
    return scope["_timed_block"]


def _sessions_in(values) -> List[Any]:
    """The distinct sessions of the tensors and modules among `values`."""
    found: List[Any] = []
    for value in values:
        if isinstance(value, Tensor):
            s = value._session
        elif isinstance(value, Module):
            s = next((t._session for t in itertools.chain(value.parameters(), value.buffers())),
                     None)
        else:
            continue
        if s is not None and all(s is not other for other in found):
            found.append(s)
    return found


class Timer:
    """Times a Python statement that uses tensord (torch.utils.benchmark.Timer's API).

    The statement runs in a loop, as `timeit.Timer` runs it, in blocks; each block is timed
    from the clock read before its first run to the clock read after its last run's work is
    done on the server: before that read the Timer synchronizes the sessions the statement can
    have used (the sessions of the tensors and modules in `globals`, and the current session
    where one is open, including one the statement opened), as torch's Timer synchronizes
    CUDA. It does so whatever `timer` is, since every tensord op runs asynchronously. It
    synchronizes before the clock starts too, so earlier work (setup's, the caller's) is not
    counted. A statement that uses no session is timed without any.

    `blocked_autorange` (and `adaptive_autorange`) pick a block size large enough that the
    synchronization's round trip is a negligible part of the block, then time blocks until
    `min_run_time` has passed; `timeit(number)` times one block of `number` runs after a
    warm-up block of `max(number // 100, 2)` runs.

    Args:
        stmt: the statement to time (a string; multi-line code is dedented).
        setup: code run once before each block (the warm-up and estimation blocks too).
        global_setup: C++ only in torch; tensord times Python, so it must be empty.
        timer: the clock (seconds, as a float); the synchronization comes before each read.
        globals: the names `stmt` and `setup` see (copied; `torch` is tensord unless given).
        label, sub_label, description, env: how `Measurement` and `Compare` show the result:
            label names the statement, sub_label tells rows of one label apart, description
            names `Compare`'s column, env tells otherwise equal tasks from different
            environments apart.
        num_threads: tensord's thread count (tensord.set_num_threads) while the statement
            runs; the server sizes its own thread pools.
        language: Language.PYTHON ("py", "python"); C++ statements are not supported.
    """

    def __init__(self, stmt: str = "pass", setup: str = "pass", global_setup: str = "",
                 timer: Callable[[], float] = timeit.default_timer,
                 globals: Optional[Dict[str, Any]] = None, label: Optional[str] = None,
                 sub_label: Optional[str] = None, description: Optional[str] = None,
                 env: Optional[str] = None, num_threads: int = 1,
                 language: Union[Language, str] = Language.PYTHON):
        if not isinstance(stmt, str):
            raise ValueError("Currently only a `str` stmt is supported.")
        # A copy, so that what the statement binds there (and `__builtins__`) stays here.
        self._globals = dict(globals or {})
        if language in (Language.PYTHON, "py", "python"):
            self._globals.setdefault("torch", tensord)
            self._language = Language.PYTHON
            if global_setup:
                raise ValueError(
                    f"global_setup is C++ only, got `{global_setup}`. Most "
                    "likely this code can simply be moved to `setup`.")
        elif language in (Language.CPP, "cpp", "c++"):
            raise NotImplementedError(
                "tensord's Timer times Python statements only: C++ statements are not "
                "supported (tensord's ops run on its server; time them from Python).")
        else:
            raise ValueError(f"Invalid language `{language}`.")
        stmt, setup = _tidy(stmt), _tidy(setup)
        self._timer = timer
        self._block = _compile_block(stmt, setup, self._globals)
        self._sessions = _sessions_in(self._globals.values())
        self._task_spec = common.TaskSpec(
            stmt=stmt, setup=setup, global_setup=global_setup, label=label,
            sub_label=sub_label, description=description, env=env, num_threads=num_threads)

    def _synchronize(self) -> None:
        sessions = [s for s in self._sessions if not s.closed]
        current = _session.existing_session()
        if current is not None and all(current is not s for s in sessions):
            sessions.append(current)
        for s in sessions:
            s.synchronize()

    def _timeit(self, number: int) -> float:
        """One block of `number` runs (after setup), in seconds; the garbage collector is off
        while it runs, as in timeit. Never under 1 ns, so that ratios stay finite."""
        collecting = gc.isenabled()
        gc.disable()
        try:
            elapsed = self._block(itertools.repeat(None, number), self._timer,
                                  self._synchronize)
        finally:
            if collecting:
                gc.enable()
        return max(elapsed, 1e-9)

    def timeit(self, number: int = 1000000) -> common.Measurement:
        """Times one block of `number` runs of `stmt` (timeit.Timer.timeit's meaning), after a
        warm-up block of max(number // 100, 2) runs; setup runs before each block."""
        with common.set_torch_threads(self._task_spec.num_threads):
            self._timeit(max(number // 100, 2))
            return common.Measurement(number_per_run=number, raw_times=[self._timeit(number)],
                                      task_spec=self._task_spec)

    def repeat(self, repeat: int = -1, number: int = -1) -> None:
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def autorange(self, callback: Optional[Callable[[int, float], None]] = None) -> None:
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def _measurement_loop(self, number: int, done: Callable[[List[float]], bool],
                          min_run_time: float, max_run_time: Optional[float] = None,
                          callback: Optional[Callable[[int, float], None]] = None) -> List[float]:
        """Blocks of `number` runs until `min_run_time` seconds of blocks have been timed and
        `done(times)` holds, or `max_run_time` seconds have."""
        times: List[float] = []
        total, finished = 0.0, False
        with common.set_torch_threads(self._task_spec.num_threads):
            while total < min_run_time or not finished:
                elapsed = self._timeit(number)
                times.append(elapsed)
                total += elapsed
                if callback:
                    callback(number, elapsed)
                finished = done(times)
                if max_run_time and total > max_run_time:
                    break
        return times

    def _estimate_block_size(self, min_run_time: float) -> int:
        """The number of runs per block: powers of ten, from 1, until the cost of an empty
        block (its synchronization and clock reads) is at most 1e-4 of the block's time and
        the block takes at least min_run_time / 1000, or a block takes over min_run_time.
        This also warms up the statement."""
        with common.set_torch_threads(self._task_spec.num_threads):
            overhead = sorted(self._timeit(0) for _ in range(5))[2]
            number = 1
            while True:
                elapsed = self._timeit(number)
                if overhead / elapsed <= 1e-4 and elapsed >= min_run_time / 1000:
                    break
                if elapsed > min_run_time or number * 10 > 2147483647:
                    break
                number *= 10
        return number

    def blocked_autorange(self, callback: Optional[Callable[[int, float], None]] = None,
                          min_run_time: float = 0.2) -> common.Measurement:
        """Times blocks of a fixed number of runs until `min_run_time` seconds have been timed.

        The block size is estimated first (which warms the statement up): it grows by
        factors of ten until the cost of timing an empty block (the session synchronization
        and the clock reads) is at most 0.01% of a block, or a block takes `min_run_time`.
        Each block is `setup`, then the clock, `number` runs of `stmt`, the synchronization of
        the sessions, the clock. `callback(number, seconds)` is called after each block.
        Returns a Measurement of the blocks' times."""
        number = self._estimate_block_size(min_run_time)
        times = self._measurement_loop(number, lambda times: True, min_run_time=min_run_time,
                                       callback=callback)
        return common.Measurement(number_per_run=number, raw_times=times,
                                  task_spec=self._task_spec)

    def adaptive_autorange(self, threshold: float = 0.1, *, min_run_time: float = 0.01,
                           max_run_time: float = 10.0,
                           callback: Optional[Callable[[int, float], None]] = None
                           ) -> common.Measurement:
        """Times blocks (sized as blocked_autorange sizes them for 0.05 s) until more than
        three blocks and at least `min_run_time` seconds have been timed and the interquartile
        range is under `threshold` times the median, or `max_run_time` seconds have been
        timed. Each block ends with the sessions synchronized, as in blocked_autorange."""
        number = self._estimate_block_size(min_run_time=0.05)

        def steady(times: List[float]) -> bool:
            return len(times) > 3 and common.Measurement(
                number_per_run=number, raw_times=times,
                task_spec=self._task_spec).meets_confidence(threshold=threshold)

        times = self._measurement_loop(number, steady, min_run_time, max_run_time,
                                       callback=callback)
        return common.Measurement(number_per_run=number, raw_times=times,
                                  task_spec=self._task_spec)
