"""torch.nn.modules.pixelshuffle (filled in by its family's change)."""
__all__ = []
