"""tensord.utils.benchmark: torch.utils.benchmark's Timer, Measurement and Compare for
statements whose ops run on a tensord server.

Timer times a statement in blocks; each block ends with the sessions the statement used
synchronized before the clock is read, so its time covers the server's work, not only the
queuing of ops (as torch's Timer synchronizes CUDA). Measurement holds the times and their
statistics; Compare prints tables of them in torch's layout.

Not provided: Callgrind instruction counts (Timer.collect_callgrind, CallgrindStats,
FunctionCounts), C++ statements, and the fuzzers (Fuzzer, FuzzedParameter, FuzzedTensor).
"""
from . import utils
from .utils.common import (TaskSpec, Measurement, ordered_unique, select_unit,
                           set_torch_threads, trim_sigfig, unit_to_english)
from .utils.compare import Colorize, Compare
from .utils.timer import Language, Timer, timer

__all__ = ["Colorize", "Compare", "Language", "Measurement", "TaskSpec", "Timer",
           "ordered_unique", "select_unit", "set_torch_threads", "timer", "trim_sigfig",
           "unit_to_english", "utils"]
