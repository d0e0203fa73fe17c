"""torch.nn.modules.rnn (filled in by its family's change)."""
__all__ = []
