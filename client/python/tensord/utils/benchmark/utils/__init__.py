"""The parts of torch.utils.benchmark.utils: common (TaskSpec, Measurement and the time
formatting helpers), timer (Timer) and compare (Compare)."""
from . import common, compare, timer

__all__ = ["common", "compare", "timer"]
