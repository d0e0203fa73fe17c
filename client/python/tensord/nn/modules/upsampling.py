"""torch.nn.modules.upsampling (filled in by its family's change)."""
__all__ = []
