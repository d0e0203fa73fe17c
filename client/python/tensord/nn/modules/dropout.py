"""torch.nn.modules.dropout (filled in by its family's change)."""
__all__ = []
