// Planning on metadata alone, as torch's `meta` device: storages with sizes but no bytes, and
// kernels that never run. The clients plan every op with the server's own planners this way
// (ops/plan_on_metadata.h), so that errors and output metadata come from one implementation of
// the rules.
#ifndef TENSORD_ENGINE_RUNTIME_META_BACKEND_H_
#define TENSORD_ENGINE_RUNTIME_META_BACKEND_H_

#include "engine/core/device.h"

namespace tensord::engine {

class Backend;

// While one is alive on a thread, BackendFor on that thread answers every device (`cpu`,
// `cuda:0` … `cuda:15`) with its metadata-only backend: its allocator hands out no memory (but
// for the few bytes of 0-d tensors, which planners fill with wrapped numbers and read back), and
// a kernel that is run fails. Other threads are not affected, so a client may plan in a process
// that also runs kernels (an in-process server in tests and benchmarks). Nests.
class MetadataOnlyScope {
 public:
  MetadataOnlyScope();
  ~MetadataOnlyScope();
  MetadataOnlyScope(const MetadataOnlyScope&) = delete;
  MetadataOnlyScope& operator=(const MetadataOnlyScope&) = delete;

 private:
  bool previous_;
};

bool InMetadataOnlyScope();

// The metadata-only backend of `device` (made on first use, never freed); null for a device
// beyond cuda:15.
Backend* MetadataOnlyBackend(Device device);

}  // namespace tensord::engine

#endif  // TENSORD_ENGINE_RUNTIME_META_BACKEND_H_
