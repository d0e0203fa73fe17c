// Conversions between the wire contract and the engine's types.
#ifndef TENSORD_SERVER_PROTO_CONVERT_H_
#define TENSORD_SERVER_PROTO_CONVERT_H_

#include <string>

#include "absl/status/statusor.h"
#include "engine/ops/op_registry.h"
#include "engine/tensor/tensor.h"
#include "tensord/v1/tensord.pb.h"

namespace tensord::server {

absl::StatusOr<engine::DType> DTypeFromProto(v1::DType dtype, absl::string_view op);
v1::DType DTypeToProto(engine::DType dtype);

// Typed engine attributes from proto values, checked against the op's declared types.
absl::StatusOr<engine::Attrs> AttrsFromProto(
    const engine::OpDef& op, const google::protobuf::Map<std::string, v1::AttrValue>& attrs);

void FillOpSpec(const engine::OpDef& op, v1::OpSpec* spec);

}  // namespace tensord::server

#endif  // TENSORD_SERVER_PROTO_CONVERT_H_
