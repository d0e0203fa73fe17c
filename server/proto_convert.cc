#include "server/proto_convert.h"

#include "absl/strings/str_cat.h"
#include "engine/errors.h"

namespace tensord::server {

using engine::AttrType;
using engine::DType;

absl::StatusOr<DType> DTypeFromProto(v1::DType dtype, absl::string_view op) {
  const int value = static_cast<int>(dtype) - 1;
  if (!engine::IsValidDType(value)) {
    return engine::TypeError(op, absl::StrCat("invalid dtype ", static_cast<int>(dtype)));
  }
  return static_cast<DType>(value);
}

v1::DType DTypeToProto(DType dtype) { return static_cast<v1::DType>(static_cast<int>(dtype) + 1); }

namespace {

absl::StatusOr<engine::AttrValue> ValueFromProto(const engine::OpDef& op,
                                                 const engine::AttrSpec& spec,
                                                 const v1::AttrValue& v) {
  const auto wrong = [&](absl::string_view expected) {
    return engine::TypeError(op.name, absl::StrCat("argument '", spec.name, "' must be ",
                                                   expected));
  };
  if (v.value_case() == v1::AttrValue::kNone) return engine::AttrValue(engine::None{});
  switch (spec.type) {
    case AttrType::kInt:
      if (v.value_case() == v1::AttrValue::kI) return engine::AttrValue(v.i());
      return wrong("an int");
    case AttrType::kIntList:
      if (v.value_case() == v1::AttrValue::kInts) {
        return engine::AttrValue(
            std::vector<int64_t>(v.ints().values().begin(), v.ints().values().end()));
      }
      return wrong("a list of ints");
    case AttrType::kIntOrIntList:
      if (v.value_case() == v1::AttrValue::kI) return engine::AttrValue(v.i());
      if (v.value_case() == v1::AttrValue::kInts) {
        return engine::AttrValue(
            std::vector<int64_t>(v.ints().values().begin(), v.ints().values().end()));
      }
      return wrong("an int or a list of ints");
    case AttrType::kBool:
      if (v.value_case() == v1::AttrValue::kB) return engine::AttrValue(v.b());
      return wrong("a bool");
    case AttrType::kScalar:
      if (v.value_case() == v1::AttrValue::kI) return engine::AttrValue(engine::Scalar(v.i()));
      if (v.value_case() == v1::AttrValue::kF) return engine::AttrValue(engine::Scalar(v.f()));
      if (v.value_case() == v1::AttrValue::kB) return engine::AttrValue(engine::Scalar(v.b()));
      return wrong("a number");
    case AttrType::kDType:
      if (v.value_case() == v1::AttrValue::kDtype) {
        absl::StatusOr<DType> d = DTypeFromProto(v.dtype(), op.name);
        if (!d.ok()) return d.status();
        return engine::AttrValue(*d);
      }
      return wrong("a dtype");
    case AttrType::kDevice:
      if (v.value_case() == v1::AttrValue::kDevice) {
        absl::StatusOr<engine::Device> d = engine::ParseDevice(v.device());
        if (!d.ok()) return d.status();
        return engine::AttrValue(*d);
      }
      return wrong("a device");
    case AttrType::kIndex: {
      if (v.value_case() != v1::AttrValue::kIndex) return wrong("an index");
      std::vector<engine::IndexItem> items;
      items.reserve(v.index().items_size());
      for (const v1::IndexItem& item : v.index().items()) {
        switch (item.item_case()) {
          case v1::IndexItem::kInteger:
            items.push_back(engine::IndexItem::Integer(item.integer()));
            break;
          case v1::IndexItem::kSlice: {
            const v1::Slice& s = item.slice();
            items.push_back(engine::IndexItem::MakeSlice(
                s.has_start() ? std::optional<int64_t>(s.start()) : std::nullopt,
                s.has_stop() ? std::optional<int64_t>(s.stop()) : std::nullopt,
                s.has_step() ? s.step() : 1));
            break;
          }
          case v1::IndexItem::kNone: items.push_back(engine::IndexItem::None()); break;
          case v1::IndexItem::kEllipsis: items.push_back(engine::IndexItem::Ellipsis()); break;
          default: return wrong("an index of ints, slices, None and Ellipsis");
        }
      }
      return engine::AttrValue(std::move(items));
    }
  }
  return wrong("a value");
}

}  // namespace

absl::StatusOr<engine::Attrs> AttrsFromProto(
    const engine::OpDef& op, const google::protobuf::Map<std::string, v1::AttrValue>& attrs) {
  engine::Attrs out;
  for (const auto& [name, value] : attrs) {
    const engine::AttrSpec* spec = nullptr;
    for (const engine::AttrSpec& s : op.attrs) {
      if (s.name == name) spec = &s;
    }
    if (spec == nullptr) {
      return engine::TypeError(op.name, absl::StrCat("got an unexpected keyword argument '",
                                                     name, "'"));
    }
    absl::StatusOr<engine::AttrValue> v = ValueFromProto(op, *spec, value);
    if (!v.ok()) return v.status();
    out.Set(name, *std::move(v));
  }
  return out;
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
