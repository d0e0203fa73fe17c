// A kernel that faults on purpose (a store to an address no allocation owns), for the test of a
// lost device (cuda_fault_test.cc). tensord's own kernels never fault: they report bad data
// through error slots.
#include <cuda_runtime_api.h>

#include <cstdint>

namespace tensord::engine::cuda::testing {

__global__ void StoreToAnInvalidAddress(int* p) { *p = 1; }

cudaError_t LaunchFault(cudaStream_t stream) {
  StoreToAnInvalidAddress<<<1, 1, 0, stream>>>(reinterpret_cast<int*>(std::uintptr_t{0x10}));
  return cudaGetLastError();
}

}  // namespace tensord::engine::cuda::testing
