"""torch.backends: the switches programs set and read. tensord's kernels are its own (no cuDNN,
MPS or oneDNN): these keep what a program sets, and report what a tensord server has.

float32 matrix products on a GPU use full float32 arithmetic whatever `allow_tf32` says, so
results match torch's default (TF32 is a permission to lose precision, not a requirement)."""
import types


def _cuda_available():
    from . import cuda  # noqa: PLC0415
    return cuda.is_available()


class _Matmul:
    def __init__(self):
        self.allow_tf32 = False
        self.allow_fp16_reduced_precision_reduction = True


cuda = types.SimpleNamespace(matmul=_Matmul(), is_built=_cuda_available,
                             preferred_linalg_library=lambda backend=None: "default")
cudnn = types.SimpleNamespace(enabled=True, benchmark=False, deterministic=False, allow_tf32=True,
                              is_available=lambda: False, version=lambda: None)
mps = types.SimpleNamespace(is_available=lambda: False, is_built=lambda: False)
mkldnn = types.SimpleNamespace(enabled=True, is_available=lambda: False)
mkl = types.SimpleNamespace(is_available=lambda: False)
openmp = types.SimpleNamespace(is_available=lambda: False)
