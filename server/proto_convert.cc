#include "server/proto_convert.h"

#include "absl/strings/str_cat.h"
#include "engine/core/errors.h"

namespace tensord::server {

using engine::AttrType;
using engine::DType;

absl::StatusOr<DType> DTypeFromProto(v1::DType dtype, absl::string_view op) {
  return engine::DTypeFromWire(static_cast<int64_t>(dtype), op);
}

v1::DType DTypeToProto(DType dtype) { return static_cast<v1::DType>(static_cast<int>(dtype) + 1); }

namespace {

engine::WireAttr WireFromProto(const v1::AttrValue& v) {
  using Kind = engine::WireAttr::Kind;
  engine::WireAttr w;
  switch (v.value_case()) {
    case v1::AttrValue::kNone: w.kind = Kind::kNone; break;
    case v1::AttrValue::kI: w.kind = Kind::kInt, w.i = v.i(); break;
    case v1::AttrValue::kF: w.kind = Kind::kFloat, w.f = v.f(); break;
    case v1::AttrValue::kB: w.kind = Kind::kBool, w.b = v.b(); break;
    case v1::AttrValue::kInts:
      w.kind = Kind::kInts;
      w.ints.assign(v.ints().values().begin(), v.ints().values().end());
      break;
    case v1::AttrValue::kDtype: w.kind = Kind::kDType, w.i = static_cast<int64_t>(v.dtype()); break;
    case v1::AttrValue::kDevice: w.kind = Kind::kDevice, w.device = v.device(); break;
    case v1::AttrValue::kIndex:
      w.kind = Kind::kIndex;
      w.index.reserve(v.index().items_size());
      for (const v1::IndexItem& item : v.index().items()) {
        switch (item.item_case()) {
          case v1::IndexItem::kInteger:
            w.index.push_back(engine::IndexItem::Integer(item.integer()));
            break;
          case v1::IndexItem::kSlice: {
            const v1::Slice& s = item.slice();
            w.index.push_back(engine::IndexItem::MakeSlice(
                s.has_start() ? std::optional<int64_t>(s.start()) : std::nullopt,
                s.has_stop() ? std::optional<int64_t>(s.stop()) : std::nullopt,
                s.has_step() ? s.step() : 1));
            break;
          }
          case v1::IndexItem::kNone: w.index.push_back(engine::IndexItem::None()); break;
          case v1::IndexItem::kEllipsis: w.index.push_back(engine::IndexItem::Ellipsis()); break;
          default: w.kind = Kind::kBad; return w;
        }
      }
      break;
    default: break;  // kBad
  }
  return w;
}

}  // namespace

absl::StatusOr<engine::Attrs> AttrsFromProto(
    const engine::OpDef& op, const google::protobuf::Map<std::string, v1::AttrValue>& attrs) {
  std::vector<std::pair<std::string, engine::WireAttr>> wire;
  wire.reserve(attrs.size());
  for (const auto& [name, value] : attrs) wire.emplace_back(name, WireFromProto(value));
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
  spec->set_returns_nothing(op.returns_nothing);
  spec->set_doc(op.doc);
}

}  // namespace tensord::server
