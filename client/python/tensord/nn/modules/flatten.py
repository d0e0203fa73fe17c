"""torch.nn's Flatten and Unflatten."""
from .module import Module


class Flatten(Module):
    """Flattens dims start_dim … end_dim (by default all but the batch dim)."""

    __constants__ = ["start_dim", "end_dim"]

    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input):
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self):
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Splits dim `dim` into `unflattened_size`."""

    __constants__ = ["dim", "unflattened_size"]

    def __init__(self, dim, unflattened_size):
        super().__init__()
        if isinstance(dim, int):
            _require_tuple_int(unflattened_size)
        elif isinstance(dim, str):
            raise TypeError("named dims are not in tensord: dim must be an int")
        else:
            raise TypeError("invalid argument type for dim parameter")
        self.dim = dim
        self.unflattened_size = unflattened_size

    def forward(self, input):
        return input.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self):
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


def _require_tuple_int(sizes):
    if not isinstance(sizes, (tuple, list)):
        raise TypeError("unflattened_size must be a tuple of ints, but found type "
                        f"{type(sizes).__name__}")
    for idx, elem in enumerate(sizes):
        if not isinstance(elem, int):
            raise TypeError("unflattened_size must be tuple of ints, but found element of type "
                            f"{type(elem).__name__} at pos {idx}")


__all__ = ["Flatten", "Unflatten"]
