"""torch.nn's ChannelShuffle."""
from .. import functional as F
from .module import Module


class ChannelShuffle(Module):
    """Splits the channels of (N, C, *) into `groups` and interleaves them: (g, C/g)
    transposed to (C/g, g)."""

    __constants__ = ["groups"]

    def __init__(self, groups):
        super().__init__()
        self.groups = groups

    def forward(self, input):
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self):
        return f"groups={self.groups}"


__all__ = ["ChannelShuffle"]
