// Helpers shared by the files that register ops (not part of the engine's API).
#ifndef TENSORD_ENGINE_OPS_OP_REGISTRY_INTERNAL_H_
#define TENSORD_ENGINE_OPS_OP_REGISTRY_INTERNAL_H_

#include <string>
#include <utility>
#include <vector>

#include "engine/core/device.h"
#include "engine/core/dtype.h"
#include "engine/core/errors.h"
#include "engine/ops/op_registry.h"

namespace tensord::engine {

using Inputs = absl::Span<const Tensor>;

inline AttrSpec Req(std::string name, AttrType type, std::string doc = "") {
  return AttrSpec{std::move(name), type, true, "", std::move(doc)};
}
inline AttrSpec Opt(std::string name, AttrType type, std::string dflt, std::string doc = "") {
  return AttrSpec{std::move(name), type, false, std::move(dflt), std::move(doc)};
}

// The floating dtypes, float16 only off the CPU (torch's CPU kernels lack it for most ops):
// else torch's "\"<kernel>\" not implemented for '<Dtype>'".
inline absl::Status CheckFloatingKernel(absl::string_view op, absl::string_view kernel,
                                        DType dtype, const Device& device) {
  if (IsFloating(dtype) && !(device.is_cpu() && dtype == DType::kFloat16)) {
    return absl::OkStatus();
  }
  return KernelNotImplemented(op, kernel, dtype);
}

// Each adds its family of ops to the registry.
void RegisterElementwiseOps(std::vector<OpDef>& ops);
void RegisterReductionOps(std::vector<OpDef>& ops);
void RegisterLinalgOps(std::vector<OpDef>& ops);
void RegisterMatrixOps(std::vector<OpDef>& ops);
void RegisterStatisticsOps(std::vector<OpDef>& ops);
void RegisterFunctionalOps(std::vector<OpDef>& ops);
void RegisterCompareOps(std::vector<OpDef>& ops);
void RegisterIndexingOps(std::vector<OpDef>& ops);
void RegisterDataDependentOps(std::vector<OpDef>& ops);
void RegisterRandomOps(std::vector<OpDef>& ops);
void RegisterSortOps(std::vector<OpDef>& ops);
void RegisterDecompositionOps(std::vector<OpDef>& ops);
void RegisterNormOps(std::vector<OpDef>& ops);
void RegisterLossOps(std::vector<OpDef>& ops);
void RegisterConvOps(std::vector<OpDef>& ops);
void RegisterJoinOps(std::vector<OpDef>& ops);
void RegisterEinsumOps(std::vector<OpDef>& ops);
void RegisterPadOps(std::vector<OpDef>& ops);
void RegisterPoolOps(std::vector<OpDef>& ops);
void RegisterUpsampleOps(std::vector<OpDef>& ops);
void RegisterGridSampleOps(std::vector<OpDef>& ops);

}  // namespace tensord::engine

#endif  // TENSORD_ENGINE_OPS_OP_REGISTRY_INTERNAL_H_
