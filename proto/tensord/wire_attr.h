// A wire attribute value (v1::AttrValue) as the engine's WireAttr, which AttrsFromWire types
// against an op's declared attributes: the one conversion the server applies to every call it
// receives and the C++ client to every call it plans. Header-only; its users link
// tensord_plan (engine/ops/op_registry.h).
#ifndef TENSORD_PROTO_TENSORD_WIRE_ATTR_H_
#define TENSORD_PROTO_TENSORD_WIRE_ATTR_H_

#include <optional>

#include "engine/ops/op_registry.h"
#include "tensord/v1/tensord.pb.h"

namespace tensord::wire {

inline engine::WireAttr WireAttrFromProto(const v1::AttrValue& v) {
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
    case v1::AttrValue::kText: w.kind = Kind::kText, w.text = v.text(); break;
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


}  // namespace tensord::wire

#endif  // TENSORD_PROTO_TENSORD_WIRE_ATTR_H_
