"""torch's default generator, kept by the client: the server's random ops are counter-based and
stateless, and each draw names its (seed, offset) (engine/kernels/random.h)."""
import os

class _Generator:
    """torch's default generator as (seed, offset): each random op draws from counters
    offset … offset + numel - 1 of a counter-based generator keyed by seed (on the server)."""

    def __init__(self):
        self.seed = int.from_bytes(os.urandom(7), "little")
        self.offset = 0

    def take(self, n):
        off = self.offset
        self.offset += max(int(n), 1)
        return {"seed": self.seed, "offset": off}


default_generator = _Generator()


def manual_seed(seed):
    default_generator.seed = int(seed) & ((1 << 63) - 1)
    default_generator.offset = 0
    return default_generator


def seed():
    default_generator.__init__()
    return default_generator.seed


def initial_seed():
    return default_generator.seed
