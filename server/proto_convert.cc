#include "server/proto_convert.h"

#include "absl/strings/str_cat.h"
#include "engine/core/errors.h"
#include "tensord/wire_attr.h"

namespace tensord::server {

using engine::AttrType;
using engine::DType;

absl::StatusOr<DType> DTypeFromProto(v1::DType dtype, absl::string_view op) {
  return engine::DTypeFromWire(static_cast<int64_t>(dtype), op);
}

v1::DType DTypeToProto(DType dtype) { return static_cast<v1::DType>(static_cast<int>(dtype) + 1); }

absl::StatusOr<engine::Attrs> AttrsFromProto(
    const engine::OpDef& op, const google::protobuf::Map<std::string, v1::AttrValue>& attrs) {
  std::vector<std::pair<std::string, engine::WireAttr>> wire;
  wire.reserve(attrs.size());
  for (const auto& [name, value] : attrs) wire.emplace_back(name, wire::WireAttrFromProto(value));
  return engine::AttrsFromWire(op, wire);
}

void FillOpSpec(const engine::OpDef& op, v1::OpSpec* spec) {
  spec->set_name(op.name);
  spec->set_kind(engine::OpKindName(op.kind));
  for (const std::string& input : op.inputs) spec->add_inputs(input);
  for (const engine::AttrSpec& a : op.attrs) {
    v1::AttrSpec* as = spec->add_attrs();
    as->set_name(a.name);
    as->set_type(engine::AttrTypeName(a.type));
    as->set_required(a.required);
    as->set_default_value(a.default_value);
    as->set_doc(a.doc);
  }
  spec->set_multi_output(op.multi_output);
  spec->set_variadic(op.variadic);
  spec->set_returns_nothing(op.returns_nothing);
  spec->set_doc(op.doc);
}

}  // namespace tensord::server
