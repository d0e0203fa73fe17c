"""torch.cuda.amp.common."""


def amp_definitely_not_available():
    """Whether the current session's server has no CUDA device (torch: no CUDA and no XLA)."""
    from ... import cuda  # noqa: PLC0415 - import cycle
    return not cuda.is_available()
