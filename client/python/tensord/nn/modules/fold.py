"""torch.nn.modules.fold (filled in by its family's change)."""
__all__ = []
