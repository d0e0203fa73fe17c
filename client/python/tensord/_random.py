"""torch's generators, kept by the client: the server's random ops are counter-based and
stateless, and each draw names its (seed, offset) (engine/kernels/random.h)."""
import os
import struct


class Generator:
    """torch.Generator: a seed and an offset into the counter-based stream it keys. Each random
    op draws from counters offset … offset + numel - 1 (on the server), so a seed gives the same
    numbers on every device. Its state is 16 bytes (seed, offset) as a uint8 tensor."""

    def __init__(self, device="cpu"):
        from ._dtypes import as_device  # noqa: PLC0415
        self.device = as_device(device)
        self._seed = 67280421310721  # torch's seed of a new Generator (the default one is random)
        self.offset = 0

    def take(self, n):
        off = self.offset
        self.offset += max(int(n), 1)
        return {"seed": self._seed, "offset": off}

    def manual_seed(self, seed):
        self._seed = int(seed) & ((1 << 63) - 1)
        self.offset = 0
        return self

    def seed(self):
        self._seed = int.from_bytes(os.urandom(7), "little")
        self.offset = 0
        return self._seed

    def initial_seed(self):
        return self._seed

    def get_state(self):
        from ._factories import tensor  # noqa: PLC0415
        from . import _dtypes  # noqa: PLC0415
        return tensor(list(struct.pack("<QQ", self._seed, self.offset)), dtype=_dtypes.uint8)

    def set_state(self, new_state):
        raw = bytes(new_state.tolist())
        if len(raw) != 16:
            raise RuntimeError("tensord: a generator state is 16 bytes (from get_state)")
        self._seed, self.offset = struct.unpack("<QQ", raw)
        return self

    def __repr__(self):
        return f"<torch._C.Generator object at {id(self):#x}>"


default_generator = Generator()
default_generator.seed()  # as torch's: a random seed at start


def _of(generator):
    """The generator a random op draws from: the one given, else the default one."""
    return default_generator if generator is None else generator


def manual_seed(seed):
    return default_generator.manual_seed(seed)


def seed():
    return default_generator.seed()


def initial_seed():
    return default_generator.initial_seed()


def get_rng_state():
    return default_generator.get_state()


def set_rng_state(new_state):
    default_generator.set_state(new_state)
