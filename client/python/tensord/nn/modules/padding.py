"""torch.nn.modules.padding (filled in by its family's change)."""
__all__ = []
