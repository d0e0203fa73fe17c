"""torch.nn's BatchNorm1d/2d/3d, their lazy forms and SyncBatchNorm: per-channel normalisation
by the batch's statistics in training (folded into the running_mean / running_var buffers) and
by the running ones in eval."""
from ... import _dtypes, _factories
from .. import functional as F
from .. import init
from ..parameter import Parameter, UninitializedBuffer, UninitializedParameter
from .lazy import LazyModuleMixin
from .module import Module


class _NormBase(Module):
    """Batch and instance norms' common state: weight and bias (affine), and running_mean,
    running_var and num_batches_tracked buffers (track_running_stats)."""

    _version = 2
    __constants__ = ["track_running_stats", "momentum", "eps", "num_features", "affine"]

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                 track_running_stats=True, device=None, dtype=None):
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        if self.affine:
            self.weight = Parameter(_factories.empty(num_features, device=device, dtype=dtype))
            self.bias = Parameter(_factories.empty(num_features, device=device, dtype=dtype))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if self.track_running_stats:
            self.register_buffer("running_mean",
                                 _factories.zeros(num_features, device=device, dtype=dtype))
            self.register_buffer("running_var",
                                 _factories.ones(num_features, device=device, dtype=dtype))
            self.register_buffer("num_batches_tracked",
                                 _factories.tensor(0, dtype=_dtypes.int64, device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self):
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def reset_parameters(self):
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            init.zeros_(self.bias)

    def _check_input_dim(self, input):
        raise NotImplementedError

    def extra_repr(self):
        return ("{num_features}, eps={eps}, momentum={momentum}, affine={affine}, "
                "track_running_stats={track_running_stats}".format(**self.__dict__))

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        version = local_metadata.get("version", None)
        if (version is None or version < 2) and self.track_running_stats:
            # num_batches_tracked came with version 2: older checkpoints count from 0.
            key = prefix + "num_batches_tracked"
            if key not in state_dict:
                state_dict[key] = self.num_batches_tracked.new_zeros(())
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
                                      unexpected_keys, error_msgs)


class _BatchNorm(_NormBase):
    def _factor(self):
        """The running statistics' update factor: momentum, or 1 / batches seen (momentum None,
        a cumulative average); counts this batch when training with running statistics."""
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:
                factor = 1.0 / float(self.num_batches_tracked)
        return factor

    def _batch_norm(self, input, factor):
        # Batch statistics in training, or in eval where there are no running ones; running
        # statistics given only where they are to be updated or used.
        bn_training = self.training or (self.running_mean is None and self.running_var is None)
        tracked = not self.training or self.track_running_stats
        return F.batch_norm(input, self.running_mean if tracked else None,
                            self.running_var if tracked else None, self.weight, self.bias,
                            bn_training, factor, self.eps)

    def forward(self, input):
        self._check_input_dim(input)
        return self._batch_norm(input, self._factor())


class _LazyNormBase(LazyModuleMixin, _NormBase):
    """A norm whose num_features is the channel dim (1) of its first input."""

    def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 device=None, dtype=None):
        super().__init__(0, eps, momentum, False, False, device=device, dtype=dtype)
        self.affine = affine
        self.track_running_stats = track_running_stats
        if self.affine:
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            self.bias = UninitializedParameter(device=device, dtype=dtype)
        if self.track_running_stats:
            self.running_mean = UninitializedBuffer(device=device, dtype=dtype)
            self.running_var = UninitializedBuffer(device=device, dtype=dtype)
            self.num_batches_tracked = _factories.tensor(0, dtype=_dtypes.int64, device=device)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input):
        if self.has_uninitialized_params():
            self.num_features = input.shape[1]
            if self.affine:
                self.weight.materialize((self.num_features,))
                self.bias.materialize((self.num_features,))
            if self.track_running_stats:
                self.running_mean.materialize((self.num_features,))
                self.running_var.materialize((self.num_features,))
            self.reset_parameters()


def _check_dims(input, dims, what):
    if input.dim() not in dims:
        raise ValueError(f"expected {what} input (got {input.dim()}D input)")


class BatchNorm1d(_BatchNorm):
    """Batch norm of (N, C) or (N, C, L) inputs."""

    def _check_input_dim(self, input):
        _check_dims(input, (2, 3), "2D or 3D")


class LazyBatchNorm1d(_LazyNormBase, _BatchNorm):
    """BatchNorm1d with num_features taken from the first input."""

    cls_to_become = BatchNorm1d

    def _check_input_dim(self, input):
        _check_dims(input, (2, 3), "2D or 3D")


class BatchNorm2d(_BatchNorm):
    """Batch norm of (N, C, H, W) inputs."""

    def _check_input_dim(self, input):
        _check_dims(input, (4,), "4D")


class LazyBatchNorm2d(_LazyNormBase, _BatchNorm):
    """BatchNorm2d with num_features taken from the first input."""

    cls_to_become = BatchNorm2d

    def _check_input_dim(self, input):
        _check_dims(input, (4,), "4D")


class BatchNorm3d(_BatchNorm):
    """Batch norm of (N, C, D, H, W) inputs."""

    def _check_input_dim(self, input):
        _check_dims(input, (5,), "5D")


class LazyBatchNorm3d(_LazyNormBase, _BatchNorm):
    """BatchNorm3d with num_features taken from the first input."""

    cls_to_become = BatchNorm3d

    def _check_input_dim(self, input):
        _check_dims(input, (5,), "5D")


class SyncBatchNorm(_BatchNorm):
    """Batch norm of any (N, C, ...) input, its statistics synchronised across processes in
    torch; one tensord server holds the whole batch, so it computes as BatchNorm does."""

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                 track_running_stats=True, process_group=None, device=None, dtype=None):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device=device,
                         dtype=dtype)
        self.process_group = process_group

    def _check_input_dim(self, input):
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")

    def _check_non_zero_input_channels(self, input):
        if input.size(1) == 0:
            raise ValueError("SyncBatchNorm number of input channels should be non-zero")

    def forward(self, input):
        self._check_input_dim(input)
        self._check_non_zero_input_channels(input)
        return self._batch_norm(input, self._factor())

    @classmethod
    def convert_sync_batchnorm(cls, module, process_group=None):
        """`module` with each of its batch norms (itself included) replaced by a SyncBatchNorm
        sharing its parameters and buffers."""
        module_output = module
        if isinstance(module, _BatchNorm):
            module_output = SyncBatchNorm(module.num_features, module.eps, module.momentum,
                                          module.affine, module.track_running_stats,
                                          process_group)
            if module.affine:
                module_output.weight = module.weight
                module_output.bias = module.bias
            module_output.running_mean = module.running_mean
            module_output.running_var = module.running_var
            module_output.num_batches_tracked = module.num_batches_tracked
            if hasattr(module, "qconfig"):
                module_output.qconfig = module.qconfig
        for name, child in module.named_children():
            module_output.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return module_output


__all__ = ["BatchNorm1d", "LazyBatchNorm1d", "BatchNorm2d", "LazyBatchNorm2d", "BatchNorm3d",
           "LazyBatchNorm3d", "SyncBatchNorm"]
