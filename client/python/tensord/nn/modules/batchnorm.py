"""torch.nn.modules.batchnorm (filled in by its family's change)."""
__all__ = []
