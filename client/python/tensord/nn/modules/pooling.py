"""torch.nn.modules.pooling (filled in by its family's change)."""
__all__ = []
