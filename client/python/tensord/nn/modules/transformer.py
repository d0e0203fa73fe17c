"""torch.nn.modules.transformer (filled in by its family's change)."""
__all__ = []
