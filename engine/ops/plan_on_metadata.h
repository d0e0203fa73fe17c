// Planning an op on tensor metadata alone, as a client holds it: the engine's own planners,
// run on metadata-only backends (runtime/meta_backend.h), give the outputs' metadata or the
// op's error (torch's exception class and the engine's message) at the line that made it. The
// Python client's extension and the C++ client plan every op this way before queuing it.
#ifndef TENSORD_ENGINE_OPS_PLAN_ON_METADATA_H_
#define TENSORD_ENGINE_OPS_PLAN_ON_METADATA_H_

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "engine/core/device.h"
#include "engine/core/dtype.h"
#include "engine/ops/op_registry.h"
#include "engine/tensor/tensor_meta.h"

namespace tensord::engine {

// One input: its metadata and storage. Inputs with one storage_key share one storage (of
// storage_nbytes bytes), so that overlap and alias rules see what the server sees.
struct MetaInput {
  DType dtype;
  Device device;
  DimVector sizes, strides;
  int64_t storage_offset = 0;
  int64_t storage_key = 0;
  int64_t storage_nbytes = 0;
};

// One output: its metadata, and `alias`, the index of the input whose storage it shares (a
// view or an in-place result), or -1 for a new storage of storage_nbytes bytes.
struct MetaOutput {
  DType dtype;
  Device device;
  DimVector sizes, strides;
  int64_t storage_offset = 0;
  bool is_contiguous = true;
  int alias = -1;
  int64_t storage_nbytes = 0;
};

// Plans `op` with `attrs` (the wire's values, typed by AttrsFromWire as the server types them)
// on `inputs`; a factory without a device gets `default_device`. std::nullopt: the op's outputs
// depend on the data (nonzero, masked_select, …), so only the server can plan it.
absl::StatusOr<std::optional<std::vector<MetaOutput>>> PlanOnMetadata(
    absl::string_view op, absl::Span<const MetaInput> inputs,
    absl::Span<const std::pair<std::string, WireAttr>> attrs, Device default_device);

}  // namespace tensord::engine

#endif  // TENSORD_ENGINE_OPS_PLAN_ON_METADATA_H_
