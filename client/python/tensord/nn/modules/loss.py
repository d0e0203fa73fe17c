"""torch.nn.modules.loss (filled in by its family's change)."""
__all__ = []
