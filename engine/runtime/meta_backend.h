// Planning on metadata alone, as torch's `meta` device: storages with sizes but no bytes, and
// kernels that never run. The planning extension of the clients (client/python/ext/) plans every
// op with the server's own planners this way, so that errors and output metadata come from one
// implementation of the rules.
#ifndef TENSORD_ENGINE_RUNTIME_META_BACKEND_H_
#define TENSORD_ENGINE_RUNTIME_META_BACKEND_H_

namespace tensord::engine {

// From now on, in this process, `cpu` and `cuda:0` … `cuda:<num_cuda_devices - 1>` are metadata
// only: their allocators hand out no memory (but for the few bytes of 0-d tensors, which
// planners fill with wrapped numbers and read back), and a kernel that is run fails. Call once,
// before planning anything; a process that runs kernels never calls it.
void UseMetadataOnlyBackends(int num_cuda_devices);

}  // namespace tensord::engine

#endif  // TENSORD_ENGINE_RUNTIME_META_BACKEND_H_
