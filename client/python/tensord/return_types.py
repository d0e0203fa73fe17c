"""torch.return_types: the named tuples that ops returning several tensors give back
(`x.max(0)` is a `return_types.max` of values and indices), one class per name, printed as
torch prints them, picklable, and usable with isinstance."""
import collections as _collections

__all__ = []


def _make(name, fields=("values", "indices")):
    """The return type `name` with `fields`, made once (an op asking again gets the same)."""
    fields = tuple(fields)
    existing = globals().get(name)
    if existing is not None:
        if existing._fields != fields:
            raise AssertionError(f"return type {name} has fields {existing._fields}, not {fields}")
        return existing
    base = _collections.namedtuple(name, fields)

    def __repr__(self):
        body = ",\n".join(f"{f}={getattr(self, f)!r}" for f in fields)
        return f"torch.return_types.{name}(\n{body})"

    cls = type(name, (base,), {"__slots__": (), "__repr__": __repr__, "__module__": __name__})
    globals()[name] = cls
    __all__.append(name)
    return cls
