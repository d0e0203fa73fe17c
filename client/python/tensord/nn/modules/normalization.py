"""torch.nn.modules.normalization (filled in by its family's change)."""
__all__ = []
