"""torch.nn.modules.channelshuffle (filled in by its family's change)."""
__all__ = []
