"""torch.nn.modules.distance (filled in by its family's change)."""
__all__ = []
