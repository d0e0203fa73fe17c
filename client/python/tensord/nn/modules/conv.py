"""torch.nn.modules.conv (filled in by its family's change)."""
__all__ = []
