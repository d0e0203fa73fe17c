"""torch.nn.modules.sparse (filled in by its family's change)."""
__all__ = []
