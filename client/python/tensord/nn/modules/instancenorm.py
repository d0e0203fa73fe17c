"""torch.nn.modules.instancenorm (filled in by its family's change)."""
__all__ = []
