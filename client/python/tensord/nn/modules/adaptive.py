"""torch.nn.modules.adaptive (filled in by its family's change)."""
__all__ = []
