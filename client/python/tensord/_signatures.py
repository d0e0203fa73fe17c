"""The argument spellings torch's Python layer accepts besides the documented ones.

torch's argument parser also takes numpy's names for some arguments (`axis=` for `dim=`,
`keepdims=` for `keepdim=`: `x.sum(axis=0, keepdims=True)`), and its factories take their sizes
as varargs, as one sequence, or as `size=`. tensord's functions are written with torch's
documented names; install() wraps those that take these arguments so that every spelling works,
once, at import.
"""
import functools
import inspect

_NUMPY_NAMES = {"axis": "dim", "keepdims": "keepdim"}


def _numpy_names(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if kwargs and ("axis" in kwargs or "keepdims" in kwargs):
            for alias, name in _NUMPY_NAMES.items():
                if alias in kwargs:
                    if name in kwargs:
                        raise TypeError(f"{fn.__name__}() got multiple values for argument "
                                        f"'{name}'")
                    kwargs[name] = kwargs.pop(alias)
        return fn(*args, **kwargs)
    return wrapper


def _size_keyword(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if "size" in kwargs:
            if args:
                raise TypeError(f"{fn.__name__}() got multiple values for argument 'size'")
            args = (kwargs.pop("size"),)
        return fn(*args, **kwargs)
    return wrapper


# torch's names for arguments that tensord's functions take by position (or as varargs): the
# arguments after input/self, in order, as torch's signatures name them. A call that names
# them (t.pow(exponent=2), t.view(size=(2, 2)), torch.mm(a, mat2=b)) passes them by position.
_TORCH_POSITIONAL_NAMES = {
    "pow": ("exponent",), "pow_": ("exponent",), "float_power": ("exponent",),
    "float_power_": ("exponent",),
    "view": ("size",), "reshape": ("shape",), "permute": ("dims",), "expand": ("size",),
    "tile": ("dims",), "flip": ("dims",), "repeat": ("repeats",),
    "split": ("split_size_or_sections",),
    "mm": ("mat2",), "bmm": ("mat2",), "mv": ("vec",), "dot": ("tensor",), "vdot": ("other",),
    "outer": ("vec2",), "ger": ("vec2",), "inner": ("other",),
    "index_fill": ("dim", "index", "value"), "index_fill_": ("dim", "index", "value"),
}


def _torch_positional(fn, names):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if kwargs:
            if not args and "input" in kwargs:
                args = (kwargs.pop("input"),)
            for i, name in enumerate(names):
                if name in kwargs and len(args) == i + 1:
                    args = args + (kwargs.pop(name),)
        return fn(*args, **kwargs)
    return wrapper


def _takes(fn, names):
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    return any(p in params for p in names) or any(
        p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())


def install(tensor_class, module_namespace, size_factories):
    """Wraps the methods of `tensor_class` and the functions of `module_namespace` that take
    `dim`/`keepdim` (or any keyword), and the factories named in `size_factories`."""
    for cls in tensor_class.__mro__[:-1]:  # the class and its bases, object left out
        for name, value in list(vars(cls).items()):
            if name.startswith("__") or not inspect.isfunction(value):
                continue
            if _takes(value, ("dim", "keepdim")):
                setattr(cls, name, _numpy_names(value))
    for name, names in _TORCH_POSITIONAL_NAMES.items():
        methods = {n: getattr(tensor_class, n) for n in (name,) if hasattr(tensor_class, n)}
        for owner in (methods, module_namespace):
            value = owner.get(name)
            if value is None or not callable(value) or isinstance(value, type):
                continue
            try:
                params = inspect.signature(value).parameters
            except (TypeError, ValueError):
                params = {}
            if all(n in params and params[n].kind is not inspect.Parameter.VAR_POSITIONAL
                   for n in names):
                continue  # already takes torch's names as keywords
            wrapped = _torch_positional(value, names)
            if owner is module_namespace:
                module_namespace[name] = wrapped
            else:
                setattr(tensor_class, name, wrapped)
    for name in size_factories:
        module_namespace[name] = _size_keyword(module_namespace[name])
    for name, value in list(module_namespace.items()):
        if name.startswith("_") or not inspect.isfunction(value):
            continue
        if _takes(value, ("dim", "keepdim")):
            module_namespace[name] = _numpy_names(value)
