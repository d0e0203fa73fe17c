"""torch.nn.modules.activation (filled in by its family's change)."""
__all__ = []
