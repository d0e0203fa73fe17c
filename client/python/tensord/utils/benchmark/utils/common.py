"""What a benchmark measured and how it is described: TaskSpec, Measurement and the helpers
that format times (torch.utils.benchmark.utils.common).

The statistics are computed on the client, in plain Python: the median and quartiles by
linear interpolation between order statistics (torch.quantile's default), the mean in double
precision. Where torch works in float32 (the logarithms that choose a unit or count digits,
the spread behind `significant_figures`, `trim_sigfig`'s rounding), the same steps are
rounded to float32 here, so that the units, digits and trimmed values are torch's.
"""
import contextlib
import dataclasses
import math
import struct
import textwrap
from typing import Any, Dict, Iterable, List, Optional, Tuple

__all__ = ["TaskSpec", "Measurement", "select_unit", "unit_to_english", "trim_sigfig",
           "ordered_unique", "set_torch_threads"]

_MAX_SIGNIFICANT_FIGURES = 4
_MIN_CONFIDENCE_INTERVAL = 25e-9  # below this a spread is not resolved: 25 ns

# The interquartile range, as a fraction of the median, above which a Measurement warns.
_IQR_WARN_THRESHOLD = 0.1
_IQR_GROSS_WARN_THRESHOLD = 0.25


def _f32(x):
    """x rounded to the nearest float32 (as a Python float)."""
    try:
        return struct.unpack("f", struct.pack("f", x))[0]
    except OverflowError:
        return math.copysign(math.inf, x)


def _log10_f32(x):
    """log10 of x as a float32 tensor computes it: of x rounded to float32, rounded again."""
    x = _f32(x)
    if math.isnan(x) or x < 0:
        return math.nan
    if x == 0:
        return -math.inf
    return _f32(math.log10(x))


def _quantile(ordered, q):
    """The q-quantile of the sorted values, interpolated linearly between the two order
    statistics around rank q * (n - 1), with torch.lerp's two-sided formula."""
    rank = q * (len(ordered) - 1)
    below = int(rank)
    above = min(math.ceil(rank), len(ordered) - 1)
    weight = rank - below
    low, high = ordered[below], ordered[above]
    if abs(weight) < 0.5:
        return low + weight * (high - low)
    return high - (high - low) * (1 - weight)


@dataclasses.dataclass(init=True, repr=False, eq=True, frozen=True)
class TaskSpec:
    """What a Timer runs and how its results are labelled (everything but its globals)."""
    stmt: str
    setup: str
    global_setup: str = ""
    label: Optional[str] = None
    sub_label: Optional[str] = None
    description: Optional[str] = None
    env: Optional[str] = None
    num_threads: int = 1

    @property
    def title(self) -> str:
        """The label (else the one-line statement), with the sub_label after a colon; a
        multi-line statement without a label is shown indented under "stmt:"."""
        suffix = f": {self.sub_label}" if self.sub_label else ""
        if self.label is not None:
            return self.label + suffix
        if "\n" not in self.stmt:
            return self.stmt + suffix
        heading = f"stmt: ({self.sub_label})" if self.sub_label else "stmt:"
        return heading + "\n" + textwrap.indent(self.stmt, "  ")

    def setup_str(self) -> str:
        if not self.setup or self.setup == "pass":
            return ""
        if "\n" in self.setup:
            return "setup:\n" + textwrap.indent(self.setup, "  ")
        return f"setup: {self.setup}"

    def summarize(self) -> str:
        """The title, description and setup, one to a line; a multi-line part is followed by
        an empty line."""
        parts = (self.title, self.description or "", self.setup_str())
        return "\n".join(p + "\n" if "\n" in p else p for p in parts if p)


_TASKSPEC_FIELDS = frozenset(f.name for f in dataclasses.fields(TaskSpec))


@dataclasses.dataclass(init=True, repr=False)
class Measurement:
    """One or more timings of a statement: `raw_times[i]` is the time of one block of
    `number_per_run` runs. The statistics (`times`, `median`, `mean`, `iqr`, …) are per run.

    A TaskSpec's fields read through (`m.label`, `m.stmt`, `m.num_threads`, …). Measurements
    pickle, and `merge` pools replicates of the same task."""
    number_per_run: int
    raw_times: List[float]
    task_spec: TaskSpec
    metadata: Optional[Dict[Any, Any]] = None  # the caller's, carried along untouched

    def __post_init__(self) -> None:
        self._sorted_times: Tuple[float, ...] = ()
        self._warnings: Tuple[str, ...] = ()
        self._median = -1.0
        self._mean = -1.0
        self._p25 = -1.0
        self._p75 = -1.0

    def __getattr__(self, name: str) -> Any:
        # Only reached for names the instance and class lack: the TaskSpec's fields.
        if name in _TASKSPEC_FIELDS:
            return getattr(self.task_spec, name)
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    @property
    def times(self) -> List[float]:
        """The time of one run in each block (raw time / number_per_run)."""
        return [t / self.number_per_run for t in self.raw_times]

    @property
    def median(self) -> float:
        self._lazy_init()
        return self._median

    @property
    def mean(self) -> float:
        self._lazy_init()
        return self._mean

    @property
    def iqr(self) -> float:
        self._lazy_init()
        return self._p75 - self._p25

    @property
    def significant_figures(self) -> int:
        """A rough count of the median's trustworthy digits (1 to 4), for `Compare`'s
        trimming: the median over a 90% confidence interval (z = 1.645) of the spread of the
        middle half of the times, never finer than 25 ns; its log10, floored."""
        self._lazy_init()
        n = len(self._sorted_times)
        middle = [_f32(t) for t in self._sorted_times[n // 4:math.ceil(_f32(3 * n / 4))]]
        if middle:
            center = _f32(math.fsum(middle) / len(middle))
            spread = _f32(math.sqrt(math.fsum((t - center) ** 2 for t in middle) / len(middle)))
        else:
            spread = math.nan
        sqrt_n = _f32(math.sqrt(len(middle)))
        interval = max(1.645 * spread / sqrt_n if sqrt_n else math.nan, _MIN_CONFIDENCE_INTERVAL)
        digits = int(math.floor(_log10_f32(self._median / interval)))
        return min(max(digits, 1), _MAX_SIGNIFICANT_FIGURES)

    @property
    def has_warnings(self) -> bool:
        self._lazy_init()
        return bool(self._warnings)

    def _lazy_init(self) -> None:
        if not self.raw_times or self._sorted_times:
            return
        ordered = tuple(sorted(self.times))
        self._sorted_times = ordered
        self._median = _quantile(ordered, 0.5)
        self._mean = math.fsum(ordered) / len(ordered)
        self._p25 = _quantile(ordered, 0.25)
        self._p75 = _quantile(ordered, 0.75)
        for threshold, meaning in (
                (_IQR_GROSS_WARN_THRESHOLD, "This suggests significant environmental influence."),
                (_IQR_WARN_THRESHOLD, "This could indicate system fluctuation.")):
            if not self.meets_confidence(threshold):
                spread = self.iqr / self.median * 100
                self._warnings += (f"  WARNING: Interquartile range is {spread:.1f}% of the "
                                   f"median measurement.\n           {meaning}",)
                break

    def meets_confidence(self, threshold: float = _IQR_WARN_THRESHOLD) -> bool:
        """Whether the interquartile range is under `threshold` times the median."""
        return self.iqr / self.median < threshold

    @property
    def title(self) -> str:
        return self.task_spec.title

    @property
    def env(self) -> Optional[str]:
        """The TaskSpec's env (None where none was given), as torch 1.13's Measurement
        answers."""
        return self.task_spec.env

    @property
    def as_row_name(self) -> str:
        return self.sub_label or self.stmt or "[Unknown]"

    def __repr__(self) -> str:
        """The object, the task's summary, the median (and with four or more blocks the
        interquartile range), the counts and any warning:

            <tensord.utils.benchmark.utils.common.Measurement object at 0x7f...>
            x + y: float
              Median: 5.73 us
              IQR:    0.25 us (5.61 to 5.86)
              372 measurements, 100 runs per measurement, 1 thread
        """
        self._lazy_init()
        n = len(self._sorted_times)
        unit, scale = select_unit(self._median)
        lines = [object.__repr__(self), self.task_spec.summarize(),
                 f"  {'Median: ' if n > 1 else ''}{self._median / scale:.2f} {unit}"]
        if n >= 4:
            lines.append(f"  IQR:    {self.iqr / scale:.2f} {unit} "
                         f"({self._p25 / scale:.2f} to {self._p75 / scale:.2f})")
        blocks = f"{n} measurements" if n > 1 else f"{n} measurement"
        runs = f"{self.number_per_run} runs per measurement," if n > 1 else \
            f"{self.number_per_run} runs ,"
        threads = self.num_threads
        lines.append(f"  {blocks}, {runs} {threads} thread{'s' if threads > 1 else ''}")
        lines.append("\n".join(self._warnings))
        return "\n".join(lines).strip()

    @staticmethod
    def merge(measurements: Iterable["Measurement"]) -> List["Measurement"]:
        """Pools the measurements of equal TaskSpecs (in order of first appearance) into one
        Measurement each, of per-run times (number_per_run 1) and no metadata."""
        pooled: Dict[TaskSpec, List[float]] = {}
        for m in measurements:
            pooled.setdefault(m.task_spec, []).extend(m.times)
        return [Measurement(number_per_run=1, raw_times=times, task_spec=spec, metadata=None)
                for spec, times in pooled.items()]


def select_unit(t: float) -> Tuple[str, float]:
    """The unit ("ns", "us", "ms" or "s") that shows `t` seconds with one to three integer
    digits, and its size in seconds."""
    unit = {-3: "ns", -2: "us", -1: "ms"}.get(int(_log10_f32(t) // 3), "s")
    return unit, {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1}[unit]


def unit_to_english(u: str) -> str:
    return {"ns": "nanosecond", "us": "microsecond", "ms": "millisecond", "s": "second"}[u]


def trim_sigfig(x: float, n: int) -> float:
    """`x` rounded to `n` significant figures (3.14159, 2 -> 3.1), in float32 as torch rounds
    it."""
    assert n == int(n)
    magnitude = int(math.ceil(_log10_f32(abs(x))))
    scale = 10 ** (magnitude - n)
    return _f32(round(_f32(x / scale)) * _f32(scale))


def ordered_unique(elements: Iterable[Any]) -> List[Any]:
    """The distinct elements in order of first appearance."""
    return list(dict.fromkeys(elements))


@contextlib.contextmanager
def set_torch_threads(n: int):
    """Sets tensord's thread count (tensord.set_num_threads) for the block, restoring it
    after."""
    import tensord
    before = tensord.get_num_threads()
    try:
        tensord.set_num_threads(n)
        yield
    finally:
        tensord.set_num_threads(before)

