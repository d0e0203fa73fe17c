"""torch.nn.utils.prune: a parameter <name> replaced by <name>_orig (the parameter, still
trained) times a 0/1 buffer <name>_mask, recomputed by a forward pre-hook before each call.
Masks are computed on the server (abs/norm, topk, kthvalue, index writes); pruning the same
tensor again combines the new mask with the old one through a PruningContainer, the new
method seeing only what is still unpruned."""
import numbers
from abc import ABC, abstractmethod
from collections.abc import Iterable

from ... import _factories
from ..._memory_format import contiguous_format
from .convert_parameters import parameters_to_vector

_GAP = " " * 16  # the run of spaces inside torch's messages of a failed assert


class BasePruningMethod(ABC):
    """A pruning method: compute_mask says what to keep; apply reparametrizes a module's
    tensor with the mask and registers the method as the module's forward pre-hook."""

    def __init__(self):
        pass

    def __call__(self, module, inputs):
        """The forward pre-hook: module.<name> = <name>_orig * <name>_mask."""
        setattr(module, self._tensor_name, self.apply_mask(module))

    @abstractmethod
    def compute_mask(self, t, default_mask):
        """The mask for importance scores `t`, zero wherever `default_mask` (the mask of
        earlier rounds, same shape as t) is."""

    def apply_mask(self, module):
        """The pruned tensor: the module's mask (cast to orig's dtype) times its orig."""
        assert self._tensor_name is not None, f"Module {module} has to be pruned"
        mask = getattr(module, self._tensor_name + "_mask")
        orig = getattr(module, self._tensor_name + "_orig")
        return mask.to(dtype=orig.dtype) * orig

    @classmethod
    def apply(cls, module, name, *args, importance_scores=None, **kwargs):
        """Prunes module.<name> with cls(*args, **kwargs) (on top of any pruning it has
        already, through a PruningContainer) and returns the hook registered for it. The mask
        is computed from importance_scores (same shape as the tensor) or the tensor itself."""
        method = _composite_method(cls, module, name, *args, **kwargs)
        orig = getattr(module, name)
        if importance_scores is not None:
            assert importance_scores.shape == orig.shape, \
                f"importance_scores should have the same shape as parameter {_GAP}{name} of " \
                f"{module}"
        else:
            importance_scores = orig
        first = not isinstance(method, PruningContainer)
        if first:
            # The parameter moves to <name>_orig; <name> becomes a plain attribute.
            module.register_parameter(name + "_orig", orig)
            del module._parameters[name]
            default_mask = _factories.ones_like(orig)
        else:
            default_mask = getattr(module, name + "_mask").detach().clone(
                memory_format=contiguous_format)
        try:
            mask = method.compute_mask(importance_scores, default_mask=default_mask)
            module.register_buffer(name + "_mask", mask)
            setattr(module, name, method.apply_mask(module))
            module.register_forward_pre_hook(method)
        except Exception:
            if first:  # put the parameter back as it was
                module.register_parameter(name, getattr(module, name + "_orig"))
                del module._parameters[name + "_orig"]
            raise
        return method

    def prune(self, t, default_mask=None, importance_scores=None):
        """t times its mask (computed from importance_scores, or t, over default_mask, or
        ones)."""
        if importance_scores is not None:
            assert importance_scores.shape == t.shape, \
                "importance_scores should have the same shape as tensor t"
        else:
            importance_scores = t
        if default_mask is None:
            default_mask = _factories.ones_like(t)
        return t * self.compute_mask(importance_scores, default_mask=default_mask)

    def remove(self, module):
        """Makes the pruning permanent: <name> becomes a parameter again (the same object
        as <name>_orig, holding the pruned values); <name>_orig and <name>_mask go."""
        assert self._tensor_name is not None, \
            f"Module {module} has to be pruned{' ' * 12}before pruning can be removed"
        name = self._tensor_name
        weight = self.apply_mask(module)
        if hasattr(module, name):
            delattr(module, name)
        orig = module._parameters[name + "_orig"]
        orig.data = weight.data
        del module._parameters[name + "_orig"]
        del module._buffers[name + "_mask"]
        setattr(module, name, orig)


def _composite_method(cls, module, name, *args, **kwargs):
    """cls(*args, **kwargs) for module.<name>, joined with the pruning hook already on that
    tensor (whose registration is removed) into a PruningContainer if there is one."""
    old = [(k, hook) for k, hook in module._forward_pre_hooks.items()
           if isinstance(hook, BasePruningMethod) and hook._tensor_name == name]
    assert len(old) <= 1, (f"Avoid adding multiple pruning hooks to the{_GAP}same tensor {name} "
                           f"of module {module}. Use a PruningContainer.")
    for k, _ in old:
        del module._forward_pre_hooks[k]
    method = cls(*args, **kwargs)
    method._tensor_name = name
    if old:
        previous = old[0][1]
        if not isinstance(previous, PruningContainer):
            previous = PruningContainer(previous)
        previous.add_pruning_method(method)
        method = previous
    return method


class PruningContainer(BasePruningMethod):
    """The pruning methods applied in turn to one tensor; its mask is the last method's,
    computed on what the earlier ones left, combined with theirs."""

    def __init__(self, *args):
        self._pruning_methods = ()
        if len(args) == 1:
            self._tensor_name = args[0]._tensor_name
            self.add_pruning_method(args[0])
        else:
            for method in args:
                self.add_pruning_method(method)

    def add_pruning_method(self, method):
        """Appends `method`, which must prune the same tensor."""
        if not isinstance(method, BasePruningMethod) and method is not None:
            raise TypeError(f"{type(method)} is not a BasePruningMethod subclass")
        if method is not None and self._tensor_name != method._tensor_name:
            raise ValueError(f"Can only add pruning methods acting on the parameter named "
                             f"'{self._tensor_name}' to PruningContainer {self}. Found "
                             f"'{method._tensor_name}'")
        self._pruning_methods += (method,)

    def __len__(self):
        return len(self._pruning_methods)

    def __iter__(self):
        return iter(self._pruning_methods)

    def __getitem__(self, idx):
        return self._pruning_methods[idx]

    def compute_mask(self, t, default_mask):
        """default_mask (cast to t's dtype) with the last method's mask written over the part
        it may prune: the entries still 1 (unstructured), the channels not all zero
        (structured), or everything (global)."""
        method = self._pruning_methods[-1]
        kind = method.PRUNING_TYPE
        mask = default_mask.to(dtype=t.dtype)
        if kind == "unstructured":
            part = default_mask == 1
        elif kind == "structured":
            if not hasattr(method, "dim"):
                raise AttributeError('Pruning methods of PRUNING_TYPE "structured" need to have '
                                     "the attribute `dim` defined.")
            ndim = t.dim()
            dim = method.dim + ndim if method.dim < 0 else method.dim
            if dim < 0:
                raise IndexError(f"Index is out of bounds for tensor with dimensions {ndim}")
            alive = default_mask.sum(dim=[d for d in range(ndim) if d != dim]) != 0
            part = [slice(None)] * ndim
            part[dim] = alive
            part = tuple(part)
        elif kind == "global":
            part = (slice(None),) * t.dim()
        else:
            raise ValueError(f"Unrecognized PRUNING_TYPE {kind}")
        partial = method.compute_mask(t[part], default_mask=default_mask[part])
        mask[part] = partial.to(dtype=mask.dtype)
        return mask


class Identity(BasePruningMethod):
    """Prunes nothing: the reparametrization with a mask of ones."""

    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t, default_mask):
        return default_mask

    @classmethod
    def apply(cls, module, name):
        """Reparametrizes module.<name> with the mask it has (ones at first)."""
        return super().apply(module, name)


class _Unstructured(BasePruningMethod):
    """Prunes `amount` (a count, or a fraction of the entries) entries: those `_pick` names."""

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount):
        _validate_pruning_amount_init(amount)
        self.amount = amount

    def compute_mask(self, t, default_mask):
        size = t.nelement()
        k = _compute_nparams_toprune(self.amount, size)
        _validate_pruning_amount(k, size)
        mask = default_mask.clone(memory_format=contiguous_format)
        if k != 0:
            mask.view(-1)[self._pick(t, k)] = 0
        return mask


class RandomUnstructured(_Unstructured):
    """Prunes `amount` (a count, or a fraction of the entries) entries chosen at random."""

    @staticmethod
    def _pick(t, k):
        return _factories.rand_like(t).view(-1).topk(k).indices

    @classmethod
    def apply(cls, module, name, amount):
        """Prunes module.<name> at random."""
        return super().apply(module, name, amount=amount)


class L1Unstructured(_Unstructured):
    """Prunes the `amount` (a count, or a fraction) entries of smallest absolute value."""

    @staticmethod
    def _pick(t, k):
        return t.abs().view(-1).topk(k, largest=False).indices

    @classmethod
    def apply(cls, module, name, amount, importance_scores=None):
        """Prunes module.<name>'s smallest entries (of importance_scores if given)."""
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


class RandomStructured(BasePruningMethod):
    """Prunes `amount` (a count, or a fraction) whole channels along `dim`, at random."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount, dim=-1):
        _validate_pruning_amount_init(amount)
        self.amount = amount
        self.dim = dim

    def compute_mask(self, t, default_mask):
        _validate_structured_pruning(t)
        _validate_pruning_dim(t, self.dim)
        size = t.shape[self.dim]
        k = _compute_nparams_toprune(self.amount, size)
        _validate_pruning_amount(k, size)
        if k == 0:
            return default_mask
        prob = _factories.rand(size, device=t.device)
        keep = prob > prob.kthvalue(k).values
        return _channel_mask(t, self.dim, keep) * default_mask.to(dtype=t.dtype)

    @classmethod
    def apply(cls, module, name, amount, dim=-1):
        """Prunes channels of module.<name> along `dim` at random."""
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(BasePruningMethod):
    """Prunes the `amount` (a count, or a fraction) channels along `dim` of smallest L`n`
    norm (n as torch.norm's p)."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount, n, dim=-1):
        _validate_pruning_amount_init(amount)
        self.amount = amount
        self.n = n
        self.dim = dim

    def compute_mask(self, t, default_mask):
        _validate_structured_pruning(t)
        _validate_pruning_dim(t, self.dim)
        size = t.shape[self.dim]
        k = _compute_nparams_toprune(self.amount, size)
        _validate_pruning_amount(k, size)
        keep = _compute_norm(t, self.n, self.dim).topk(size - k, largest=True).indices
        if k == 0:
            return default_mask
        return _channel_mask(t, self.dim, keep) * default_mask.to(dtype=t.dtype)

    @classmethod
    def apply(cls, module, name, amount, n, dim, importance_scores=None):
        """Prunes the channels of module.<name> (or of importance_scores) of smallest norm."""
        return super().apply(module, name, amount=amount, n=n, dim=dim,
                             importance_scores=importance_scores)


class CustomFromMask(BasePruningMethod):
    """Prunes where a given mask is 0."""

    PRUNING_TYPE = "global"

    def __init__(self, mask):
        self.mask = mask

    def compute_mask(self, t, default_mask):
        assert default_mask.shape == self.mask.shape
        return default_mask * self.mask.to(dtype=default_mask.dtype)

    @classmethod
    def apply(cls, module, name, mask):
        """Prunes module.<name> where `mask` is 0."""
        return super().apply(module, name, mask=mask)


def _channel_mask(t, dim, channels):
    """A mask shaped like t: ones in the channels along `dim` that `channels` (indices or
    booleans) selects, zeros elsewhere."""
    mask = _factories.zeros_like(t)
    index = [slice(None)] * t.dim()
    index[dim] = channels
    mask[tuple(index)] = 1
    return mask


def identity(module, name):
    """Reparametrizes module.<name> as <name>_orig times a mask of ones; returns module."""
    Identity.apply(module, name)
    return module


def random_unstructured(module, name, amount):
    """Prunes `amount` (int: a count; float: a fraction) of module.<name>'s unpruned entries
    at random; returns module."""
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module, name, amount, importance_scores=None):
    """Prunes `amount` of module.<name>'s unpruned entries, those of smallest absolute value
    (of importance_scores when given); returns module."""
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module, name, amount, dim):
    """Prunes `amount` of module.<name>'s unpruned channels along `dim` at random; returns
    module."""
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module, name, amount, n, dim, importance_scores=None):
    """Prunes `amount` of module.<name>'s unpruned channels along `dim`, those of smallest
    L`n` norm (of importance_scores when given); returns module."""
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def global_unstructured(parameters, pruning_method, importance_scores=None, **kwargs):
    """Prunes the (module, name) tensors in `parameters` together: pruning_method(**kwargs)
    (an unstructured method, e.g. L1Unstructured with amount=...) chooses among all their
    unpruned entries at once; each tensor then gets its slice as a custom_from_mask mask.
    importance_scores: a dict from (module, name) to a tensor shaped like that parameter."""
    if not isinstance(parameters, Iterable):
        raise TypeError("global_unstructured(): parameters is not an Iterable")
    importance_scores = importance_scores if importance_scores is not None else {}
    if not isinstance(importance_scores, dict):
        raise TypeError("global_unstructured(): importance_scores must be of type dict")
    scores = parameters_to_vector([importance_scores.get((m, n), getattr(m, n))
                                   for m, n in parameters])
    default_mask = parameters_to_vector(
        [getattr(m, n + "_mask", _factories.ones_like(getattr(m, n))) for m, n in parameters])
    container = PruningContainer()
    container._tensor_name = "temp"
    method = pruning_method(**kwargs)
    method._tensor_name = "temp"
    if method.PRUNING_TYPE != "unstructured":
        raise TypeError('Only "unstructured" PRUNING_TYPE supported for the `pruning_method`. '
                        f"Found method {pruning_method} of type {method.PRUNING_TYPE}")
    container.add_pruning_method(method)
    final_mask = container.compute_mask(scores, default_mask)
    start = 0
    for module, name in parameters:
        param = getattr(module, name)
        count = param.numel()
        custom_from_mask(module, name, mask=final_mask[start:start + count].view_as(param))
        start += count


def custom_from_mask(module, name, mask):
    """Prunes module.<name> where `mask` is 0; returns module."""
    CustomFromMask.apply(module, name, mask)
    return module


def remove(module, name):
    """Makes the pruning of module.<name> permanent (the pruned values become the parameter)
    and drops its hook, <name>_orig and <name>_mask; returns module."""
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"Parameter '{name}' of module {module} has to be pruned before pruning "
                     "can be removed")


def is_pruned(module):
    """Whether module or any submodule has a pruning hook."""
    return any(isinstance(hook, BasePruningMethod)
               for _, sub in module.named_modules() for hook in sub._forward_pre_hooks.values())


def _validate_pruning_amount_init(amount):
    """Raises unless amount is a non-negative int or a float in [0, 1]."""
    if not isinstance(amount, numbers.Real):
        raise TypeError(f"Invalid type for amount: {amount}. Must be int or float.")
    integral = isinstance(amount, numbers.Integral)
    if (integral and amount < 0) or \
            (not integral and (float(amount) > 1.0 or float(amount) < 0.0)):
        raise ValueError(f"amount={amount} should either be a float in the range [0, 1] or a "
                         "non-negative integer")


def _validate_pruning_amount(amount, tensor_size):
    """Raises if an int amount exceeds the number of units there are."""
    if isinstance(amount, numbers.Integral) and amount > tensor_size:
        raise ValueError(f"amount={amount} should be smaller than the number of parameters to "
                         f"prune={tensor_size}")


def _validate_structured_pruning(t):
    """Raises unless t has at least 2 dims (so that it has channels)."""
    if t.dim() <= 1:
        raise ValueError("Structured pruning can only be applied to multidimensional tensors. "
                         f"Found tensor of shape {t.shape} with {len(t.shape)} dims")


def _compute_nparams_toprune(amount, tensor_size):
    """The number of units to prune: amount itself if an int, else round(amount * size)."""
    if isinstance(amount, numbers.Integral):
        return amount
    return round(amount * tensor_size)


def _validate_pruning_dim(t, dim):
    """Raises IndexError if dim is past t's dims."""
    if dim >= t.dim():
        raise IndexError(f"Invalid index {dim} for tensor of size {t.shape}")


def _compute_norm(t, n, dim):
    """The L`n` norm (torch.norm's p) of each channel of t along `dim`, over all other dims."""
    dims = list(range(t.dim()))
    del dims[dim]
    return t.norm(p=n, dim=dims)
