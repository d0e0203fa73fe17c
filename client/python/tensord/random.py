"""torch.random: the default generator's seeding and state (tensord's counter-based generator,
the same on CPU and GPU), and fork_rng."""
import contextlib

from ._random import (Generator, default_generator, get_rng_state, initial_seed,  # noqa: F401
                      manual_seed, seed, set_rng_state)


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices"):
    """Restores the default generator's state on exit (one generator serves every device here,
    so `devices` changes nothing)."""
    if not enabled:
        yield
        return
    state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(state)
