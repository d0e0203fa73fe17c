"""torch.cuda.amp.GradScaler: gradient scaling for float16 training, torch 1.13's algorithm and
API.

`scale(loss)` multiplies the loss by the scale (initially 2**16), so that small float16
gradients do not underflow; `step(optimizer)` unscales the optimizer's gradients (multiplies
them by 1/scale) while checking them for infinities and NaNs, and skips optimizer.step() when
it found any; `update()` then halves the scale (backoff_factor) after a skipped step, or doubles
it (growth_factor) after growth_interval steps in a row that were not skipped. The scale, the
count of good steps and the found-inf flags are one-element tensors on the gradients' device,
updated by server ops without reading them back; step reads the flags once (.item()), as torch's
does.

As torch's, a scaler made while the session's server has no CUDA device warns and is disabled:
scale returns its argument, step calls optimizer.step(), the rest do nothing. The two kernels
torch runs on CUDA (_amp_foreach_non_finite_check_and_unscale_, _amp_update_scale_) are the
functions of the same names below, made of server ops that run on any device.
"""
import warnings
from collections import abc, defaultdict
from enum import Enum

from ... import _dtypes, _grad_mode
from .common import amp_definitely_not_available

__all__ = ["OptState", "GradScaler"]


def _api():
    from ... import _api as api  # noqa: PLC0415 - import cycle
    return api


def _amp_device(t):
    """Whether `t` is on a device whose gradients GradScaler scales (torch: cuda or xla)."""
    return t.is_cuda or t.device.type == "xla"


def _amp_foreach_non_finite_check_and_unscale_(grads, found_inf, inv_scale):
    """torch._amp_foreach_non_finite_check_and_unscale_: multiplies each gradient in `grads` by
    `inv_scale` (a one-element float32 tensor) in place, and sets `found_inf` (a one-element
    float32 tensor) to 1.0 where any of them holds an infinity or a NaN. Nothing is read back."""
    with _grad_mode.no_grad():
        inv = inv_scale.reshape(())
        for g in grads:
            bad = g.isfinite().logical_not().any()
            found_inf.masked_fill_(bad, 1.0)
            g.mul_(inv)


def _amp_update_scale_(current_scale, growth_tracker, found_inf, growth_factor, backoff_factor,
                       growth_interval):
    """torch._amp_update_scale_: after a step that found an infinity or a NaN (found_inf
    nonzero), current_scale *= backoff_factor and growth_tracker = 0; after a good one,
    growth_tracker += 1, and when it reaches growth_interval, current_scale *= growth_factor
    (unless that overflows float32) and growth_tracker = 0. The products are taken in float64
    and rounded to float32, as torch's kernel does. In place; returns current_scale."""
    api = _api()
    with _grad_mode.no_grad():
        found = found_inf.ne(0)
        successful = growth_tracker + 1
        grow = successful.eq(growth_interval).logical_and(found.logical_not())
        scale64 = current_scale.double()
        grown = (scale64 * growth_factor).float()
        backed_off = (scale64 * backoff_factor).float()
        new_scale = api.where(found, backed_off,
                              api.where(grow.logical_and(grown.isfinite()), grown, current_scale))
        new_tracker = api.where(found.logical_or(grow), growth_tracker.new_zeros(()), successful)
        current_scale.copy_(new_scale)
        growth_tracker.copy_(new_tracker)
    return current_scale


class _MultiDeviceReplicator:
    """Lazily serves copies of a tensor to requested devices.  Copies are cached per-device."""

    def __init__(self, master_tensor):
        assert _amp_device(master_tensor)
        self.master = master_tensor
        self._per_device_tensors = {}

    def get(self, device):
        retval = self._per_device_tensors.get(device, None)
        if retval is None:
            retval = self.master.to(device=device, non_blocking=True, copy=True)
            self._per_device_tensors[device] = retval
        return retval


class OptState(Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _refresh_per_optimizer_state():
    return {"stage": OptState.READY, "found_inf_per_device": {}}


class GradScaler:
    """torch.cuda.amp.GradScaler(init_scale=2.**16, growth_factor=2.0, backoff_factor=0.5,
    growth_interval=2000, enabled=True):

        scaler = GradScaler()
        for input, target in data:
            optimizer.zero_grad()
            with autocast():
                loss = loss_fn(model(input), target)
            scaler.scale(loss).backward()
            scaler.step(optimizer)   # unscales, and skips optimizer.step() on infs/NaNs
            scaler.update()          # backs the scale off after a skip, grows it after
                                     # growth_interval good steps
    """

    def __init__(self, init_scale=2.**16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        if enabled and amp_definitely_not_available():
            warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  "
                          "Disabling.")
            self._enabled = False
        else:
            self._enabled = enabled

        if self._enabled:
            assert growth_factor > 1.0, "The growth factor must be > 1.0."
            assert backoff_factor < 1.0, "The backoff factor must be < 1.0."

            self._init_scale = init_scale
            # self._scale will be lazily initialized during the first call to scale()
            self._scale = None
            self._growth_factor = growth_factor
            self._backoff_factor = backoff_factor
            self._growth_interval = growth_interval
            self._init_growth_tracker = 0
            # self._growth_tracker will be lazily initialized during the first call to scale()
            self._growth_tracker = None
            self._per_optimizer_states = defaultdict(_refresh_per_optimizer_state)

    def _check_scale_growth_tracker(self, funcname):
        fix = ("This may indicate your script did not use scaler.scale(loss or outputs) earlier "
               "in the iteration.")
        assert self._scale is not None, f"Attempted {funcname} but _scale is None.  " + fix
        assert self._growth_tracker is not None, \
            f"Attempted {funcname} but _growth_tracker is None.  " + fix
        return (self._scale, self._growth_tracker)

    def _lazy_init_scale_growth_tracker(self, dev, session=None):
        assert self._growth_tracker is None, "_growth_tracker initialized before _scale"
        api = _api()
        self._scale = api.full((1,), self._init_scale, dtype=_dtypes.float32, device=dev,
                               session=session)
        self._growth_tracker = api.full((1,), self._init_growth_tracker, dtype=_dtypes.int32,
                                        device=dev, session=session)

    def scale(self, outputs):
        """Multiplies ('scales') a tensor or list of tensors by the scale factor; returns them
        unmodified when this scaler is not enabled."""
        if not self._enabled:
            return outputs

        from ..._tensor import Tensor  # noqa: PLC0415 - import cycle
        # Short-circuit for the common case.
        if isinstance(outputs, Tensor):
            assert _amp_device(outputs)
            if self._scale is None:
                self._lazy_init_scale_growth_tracker(outputs.device, outputs._session)
            assert self._scale is not None
            return outputs * self._scale.to(device=outputs.device, non_blocking=True)

        # Invoke the more complex machinery only if we're treating multiple outputs.
        stash = []  # holds a reference that can be overwritten by apply_scale

        def apply_scale(val):
            if isinstance(val, Tensor):
                assert _amp_device(val)
                if len(stash) == 0:
                    if self._scale is None:
                        self._lazy_init_scale_growth_tracker(val.device, val._session)
                    assert self._scale is not None
                    stash.append(_MultiDeviceReplicator(self._scale))
                return val * stash[0].get(val.device)
            if isinstance(val, abc.Iterable):
                iterable = map(apply_scale, val)
                if isinstance(val, (list, tuple)):
                    return type(val)(iterable)
                return iterable
            raise ValueError("outputs must be a Tensor or an iterable of Tensors")

        return apply_scale(outputs)

    def _unscale_grads_(self, optimizer, inv_scale, found_inf, allow_fp16):
        per_device_inv_scale = _MultiDeviceReplicator(inv_scale)
        per_device_found_inf = _MultiDeviceReplicator(found_inf)

        # Gradients grouped by device and dtype, as torch's foreach kernel takes them.
        per_device_and_dtype_grads = defaultdict(lambda: defaultdict(list))
        with _grad_mode.no_grad():
            for group in optimizer.param_groups:
                for param in group["params"]:
                    if param.grad is None:
                        continue
                    if (not allow_fp16) and param.grad.dtype is _dtypes.float16:
                        raise ValueError("Attempting to unscale FP16 gradients.")
                    to_unscale = param.grad
                    per_device_and_dtype_grads[to_unscale.device][to_unscale.dtype].append(
                        to_unscale)

            for device, per_dtype_grads in per_device_and_dtype_grads.items():
                for grads in per_dtype_grads.values():
                    _amp_foreach_non_finite_check_and_unscale_(grads,
                                                               per_device_found_inf.get(device),
                                                               per_device_inv_scale.get(device))

        return per_device_found_inf._per_device_tensors

    def unscale_(self, optimizer):
        """Divides ("unscales") the optimizer's gradient tensors by the scale factor, recording
        whether any holds an infinity or a NaN; at most once per optimizer between updates, and
        before step (which unscales by itself otherwise)."""
        if not self._enabled:
            return

        self._check_scale_growth_tracker("unscale_")

        optimizer_state = self._per_optimizer_states[id(optimizer)]

        if optimizer_state["stage"] is OptState.UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the "
                               "last update().")
        elif optimizer_state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")

        # FP32 division can be imprecise for certain compile options, so we carry out the
        # reciprocal in FP64.
        assert self._scale is not None
        inv_scale = self._scale.double().reciprocal().float()
        found_inf = _api().full((1,), 0.0, dtype=_dtypes.float32, device=self._scale.device,
                                session=self._scale._session)

        optimizer_state["found_inf_per_device"] = self._unscale_grads_(optimizer, inv_scale,
                                                                       found_inf, False)
        optimizer_state["stage"] = OptState.UNSCALED

    def _maybe_opt_step(self, optimizer, optimizer_state, *args, **kwargs):
        retval = None
        if not sum(v.item() for v in optimizer_state["found_inf_per_device"].values()):
            retval = optimizer.step(*args, **kwargs)
        return retval

    def step(self, optimizer, *args, **kwargs):
        """Unscales the optimizer's gradients (unless unscale_ did), then calls
        optimizer.step(*args, **kwargs) unless they hold an infinity or a NaN; returns what it
        returned (None when skipped)."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)

        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is "
                               "enabled.")

        self._check_scale_growth_tracker("step")

        optimizer_state = self._per_optimizer_states[id(optimizer)]

        if optimizer_state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")

        retval = None

        if getattr(optimizer, "_step_supports_amp_scaling", False):
            # This optimizer has customized scale-handling logic: its step() takes the scaler.
            retval = optimizer.step(*args, **dict(kwargs, grad_scaler=self))
            optimizer_state["stage"] = OptState.STEPPED
            return retval

        if optimizer_state["stage"] is OptState.READY:
            self.unscale_(optimizer)

        assert len(optimizer_state["found_inf_per_device"]) > 0, \
            "No inf checks were recorded for this optimizer."

        retval = self._maybe_opt_step(optimizer, optimizer_state, *args, **kwargs)

        optimizer_state["stage"] = OptState.STEPPED

        return retval

    def update(self, new_scale=None):
        """Updates the scale factor: backoff after a skipped step, growth after growth_interval
        good ones in a row; or sets it to `new_scale` (a float, or a one-element float32 cuda
        tensor that does not require grad)."""
        if not self._enabled:
            return

        _scale, _growth_tracker = self._check_scale_growth_tracker("update")

        if new_scale is not None:
            # Accept a new user-defined scale.
            if isinstance(new_scale, float):
                self._scale.fill_(new_scale)
            else:
                from ..._tensor import Tensor  # noqa: PLC0415 - import cycle
                reason = ("new_scale should be a float or a 1-element torch.cuda.FloatTensor "
                          "with requires_grad=False.")
                assert (isinstance(new_scale, Tensor) and new_scale.is_cuda and
                        new_scale.dtype is _dtypes.float32), reason
                assert new_scale.numel() == 1, reason
                assert new_scale.requires_grad is False, reason
                self._scale.copy_(new_scale)
        else:
            # Consume shared inf/nan data collected from optimizers to update the scale.
            found_infs = [found_inf.to(device=_scale.device, non_blocking=True)
                          for state in self._per_optimizer_states.values()
                          for found_inf in state["found_inf_per_device"].values()]

            assert len(found_infs) > 0, "No inf checks were recorded prior to update."

            found_inf_combined = found_infs[0]
            if len(found_infs) > 1:
                for i in range(1, len(found_infs)):
                    found_inf_combined += found_infs[i]

            _amp_update_scale_(_scale, _growth_tracker, found_inf_combined, self._growth_factor,
                               self._backoff_factor, self._growth_interval)

        # To prepare for next iteration, clear the data collected from optimizers this iteration.
        self._per_optimizer_states = defaultdict(_refresh_per_optimizer_state)

    def _get_scale_async(self):
        return self._scale

    def get_scale(self):
        """The current scale as a Python float (1.0 when scaling is disabled); reads it back."""
        if self._enabled:
            return self._init_scale if self._scale is None else self._get_scale_async().item()
        return 1.0

    def get_growth_factor(self):
        return self._growth_factor

    def set_growth_factor(self, new_factor):
        self._growth_factor = new_factor

    def get_backoff_factor(self):
        return self._backoff_factor

    def set_backoff_factor(self, new_factor):
        self._backoff_factor = new_factor

    def get_growth_interval(self):
        return self._growth_interval

    def set_growth_interval(self, new_interval):
        self._growth_interval = new_interval

    def _get_growth_tracker(self):
        if self._enabled:
            return self._init_growth_tracker if self._growth_tracker is None else \
                self._growth_tracker.item()
        return 0

    def is_enabled(self):
        return self._enabled

    def state_dict(self):
        """{"scale", "growth_factor", "backoff_factor", "growth_interval", "_growth_tracker"}
        as Python numbers; {} when not enabled."""
        return {"scale": self.get_scale(),
                "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor,
                "growth_interval": self._growth_interval,
                "_growth_tracker": self._get_growth_tracker()} if self._enabled else {}

    def load_state_dict(self, state_dict):
        """Loads state_dict()'s state (nothing when not enabled)."""
        if not self._enabled:
            return

        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved "
                               "from a disabled instance of GradScaler.")

        self._init_scale = state_dict["scale"]
        if self._scale is not None:
            self._scale.fill_(state_dict["scale"])
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._init_growth_tracker = state_dict["_growth_tracker"]
        if self._growth_tracker is not None:
            self._growth_tracker.fill_(state_dict["_growth_tracker"])

    def __getstate__(self):
        state = self.__dict__.copy()
        if self._enabled:
            assert len(self._per_optimizer_states) == 0, \
                "A GradScaler instance may only be pickled at the beginning of an iteration, " \
                "or at the end after scaler.update()."
            # The tensors are made again, lazily, by the unpickled instance.
            state["_init_scale"] = self.get_scale()
            state["_init_growth_tracker"] = self._get_growth_tracker()
            state["_scale"] = None
            state["_growth_tracker"] = None
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)

    def _check_inf_per_device(self, optimizer):
        _scale, _ = self._check_scale_growth_tracker("_check_inf_per_device")

        api = _api()
        dummy_inv_scale = api.full((1,), 1.0, dtype=_dtypes.float32, device=_scale.device,
                                   session=_scale._session)
        found_inf = api.full((1,), 0.0, dtype=_dtypes.float32, device=_scale.device,
                             session=_scale._session)

        self._per_optimizer_states[id(optimizer)]["found_inf_per_device"] = \
            self._unscale_grads_(optimizer, dummy_inv_scale, found_inf, True)

        return self._per_optimizer_states[id(optimizer)]["found_inf_per_device"]

    def _found_inf_per_device(self, optimizer):
        return self._per_optimizer_states[id(optimizer)]["found_inf_per_device"]
