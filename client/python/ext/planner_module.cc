// tensord._planner: the engine's op planner, on metadata alone, for the Python client.
//
// The client plans every op here before it queues it: the outputs' sizes, strides, offset, dtype
// and device, and every validation error with torch's exception class, come from the server's
// own planners, run on storages without bytes (engine/ops/plan_on_metadata.h).
// The server still plans and validates every op it receives.
//
// No protobuf here: Python's protobuf and a C++ one must not both register tensord.proto in one
// process. Attributes arrive as the client's Python values and are typed by the engine's
// AttrsFromWire, the rule the server applies to the same values on the wire. The same values are
// encoded here into the ops' wire bytes (encode_op, encode_request), which costs the client
// less per op than building protobuf messages in Python.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "engine/core/errors.h"
#include "engine/ops/op_registry.h"
#include "engine/ops/plan_on_metadata.h"

namespace py = pybind11;

namespace tensord::planner {
namespace {

using engine::WireAttr;

// A Python value as a wire attribute, as the client's _fill_attr puts it on the wire: bool, int,
// float, None, an int list (tensord's _Ints), a tensord dtype (its .proto number), a device
// (its text), or an IndexList message.
WireAttr ToWire(const py::handle& value) {
  using Kind = WireAttr::Kind;
  WireAttr w;
  if (value.is_none()) {
    w.kind = Kind::kNone;
  } else if (PyBool_Check(value.ptr())) {
    w.kind = Kind::kBool, w.b = value.ptr() == Py_True;
  } else if (PyLong_Check(value.ptr())) {
    w.kind = Kind::kInt, w.i = value.cast<int64_t>();
  } else if (PyFloat_Check(value.ptr())) {
    w.kind = Kind::kFloat, w.f = PyFloat_AS_DOUBLE(value.ptr());
  } else if (PyList_Check(value.ptr()) || PyTuple_Check(value.ptr())) {
    w.kind = Kind::kInts;
    for (const py::handle& x : value) w.ints.push_back(x.cast<int64_t>());
  } else if (py::hasattr(value, "proto") && py::hasattr(value, "is_floating_point")) {
    w.kind = Kind::kDType, w.i = value.attr("proto").cast<int64_t>();
  } else if (py::hasattr(value, "type") && py::hasattr(value, "index")) {
    w.kind = Kind::kDevice, w.device = py::str(value).cast<std::string>();
  } else if (py::hasattr(value, "items") && py::hasattr(value, "SerializeToString")) {
    w.kind = Kind::kIndex;
    for (const py::handle& item : value.attr("items")) {
      const py::object which = item.attr("WhichOneof")("item");
      const std::string kind = which.is_none() ? "" : which.cast<std::string>();
      if (kind == "integer") {
        w.index.push_back(engine::IndexItem::Integer(item.attr("integer").cast<int64_t>()));
      } else if (kind == "slice") {
        const py::object s = item.attr("slice");
        const auto field = [&s](const char* name) -> std::optional<int64_t> {
          if (!s.attr("HasField")(name).cast<bool>()) return std::nullopt;
          return s.attr(name).cast<int64_t>();
        };
        const std::optional<int64_t> step = field("step");
        w.index.push_back(engine::IndexItem::MakeSlice(field("start"), field("stop"),
                                                       step.value_or(1)));
      } else if (kind == "none") {
        w.index.push_back(engine::IndexItem::None());
      } else if (kind == "ellipsis") {
        w.index.push_back(engine::IndexItem::Ellipsis());
      } else {
        w.kind = Kind::kBad;
        break;
      }
    }
  } else if (py::hasattr(value, "__index__")) {
    w.kind = Kind::kInt, w.i = value.attr("__index__")().cast<int64_t>();
  } else if (py::hasattr(value, "__float__")) {
    w.kind = Kind::kFloat, w.f = value.attr("__float__")().cast<double>();
  }
  return w;
}

py::tuple Error(const absl::Status& status) {
  return py::make_tuple(engine::ErrorKind(status), static_cast<int>(status.code()),
                        std::string(status.message()));
}

// plan(op, inputs, attrs, default_device) -> [outputs] | (kind, code, message) | None
//
// inputs: (dtype, device, sizes, strides, storage_offset, storage_key, storage_nbytes) per
// tensor input, dtype as the wire's number; inputs with one storage_key share one storage, so
// that overlap and alias rules see what the server sees.
// outputs: (dtype, device, sizes, strides, storage_offset, is_contiguous, alias, storage_nbytes)
// per output; alias is the index of the input whose storage the output shares, or -1 for a new
// storage. None: the op's outputs depend on data (nonzero, masked_select, …), so only the server
// can plan it.
py::object Plan(const std::string& name, const py::list& inputs, const py::dict& attrs,
                const std::string& default_device) {
  std::vector<engine::MetaInput> metas;
  metas.reserve(inputs.size());
  for (const py::handle& h : inputs) {
    const py::tuple t = py::reinterpret_borrow<py::tuple>(h);
    absl::StatusOr<engine::DType> dtype = engine::DTypeFromWire(t[0].cast<int64_t>(), name);
    if (!dtype.ok()) return Error(dtype.status());
    absl::StatusOr<engine::Device> device = engine::ParseDevice(t[1].cast<std::string>());
    if (!device.ok()) return Error(device.status());
    const std::vector<int64_t> sizes = t[2].cast<std::vector<int64_t>>();
    const std::vector<int64_t> strides = t[3].cast<std::vector<int64_t>>();
    metas.push_back(engine::MetaInput{*dtype, *device,
                                      engine::DimVector(sizes.begin(), sizes.end()),
                                      engine::DimVector(strides.begin(), strides.end()),
                                      t[4].cast<int64_t>(), t[5].cast<int64_t>(),
                                      t[6].cast<int64_t>()});
  }
  std::vector<std::pair<std::string, WireAttr>> wire;
  wire.reserve(attrs.size());
  for (const auto& [key, value] : attrs) wire.emplace_back(key.cast<std::string>(), ToWire(value));
  absl::StatusOr<engine::Device> device = engine::ParseDevice(default_device);
  if (!device.ok()) return Error(device.status());
  absl::StatusOr<std::optional<std::vector<engine::MetaOutput>>> planned =
      engine::PlanOnMetadata(name, metas, wire, *device);
  if (!planned.ok()) return Error(planned.status());
  if (!planned->has_value()) return py::none();
  py::list out;
  for (const engine::MetaOutput& o : **planned) {
    out.append(py::make_tuple(static_cast<int>(o.dtype) + 1, o.device.ToString(),
                              std::vector<int64_t>(o.sizes.begin(), o.sizes.end()),
                              std::vector<int64_t>(o.strides.begin(), o.strides.end()),
                              o.storage_offset, o.is_contiguous, o.alias, o.storage_nbytes));
  }
  return out;
}

// ---- the wire format of OpCall and RunOpsRequest (proto/tensord/v1/tensord.proto), by hand ----

void PutVarint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}
void PutTag(std::string& out, int field, int wire_type) { PutVarint(out, field << 3 | wire_type); }
void PutBytes(std::string& out, int field, absl::string_view bytes) {
  PutTag(out, field, 2);
  PutVarint(out, bytes.size());
  out.append(bytes.data(), bytes.size());
}
void PutInt(std::string& out, int field, int64_t v) {
  PutTag(out, field, 0);
  PutVarint(out, static_cast<uint64_t>(v));
}
template <typename Ints>
void PutPacked(std::string& out, int field, const Ints& values) {
  if (values.empty()) return;
  std::string packed;
  for (auto v : values) PutVarint(packed, static_cast<uint64_t>(v));
  PutBytes(out, field, packed);
}

std::string EncodeAttrValue(const WireAttr& w) {
  using Kind = WireAttr::Kind;
  std::string v;
  switch (w.kind) {
    case Kind::kInt: PutInt(v, 1, w.i); break;
    case Kind::kInts: {
      std::string list;
      PutPacked(list, 1, w.ints);
      PutBytes(v, 2, list);
      break;
    }
    case Kind::kFloat: {
      PutTag(v, 3, 1);
      char bytes[8];
      std::memcpy(bytes, &w.f, 8);  // little-endian, as the wire
      v.append(bytes, 8);
      break;
    }
    case Kind::kBool: PutInt(v, 4, w.b); break;
    case Kind::kDType: PutInt(v, 5, w.i); break;
    case Kind::kDevice: PutBytes(v, 6, w.device); break;
    case Kind::kIndex: {
      std::string list;
      for (const engine::IndexItem& item : w.index) {
        std::string it;
        switch (item.kind) {
          case engine::IndexItem::Kind::kInteger: PutInt(it, 1, item.integer); break;
          case engine::IndexItem::Kind::kSlice: {
            std::string slice;
            if (item.start) PutInt(slice, 1, *item.start);
            if (item.stop) PutInt(slice, 2, *item.stop);
            PutInt(slice, 3, item.step);
            PutBytes(it, 2, slice);
            break;
          }
          case engine::IndexItem::Kind::kNone: PutInt(it, 3, 1); break;
          case engine::IndexItem::Kind::kEllipsis: PutInt(it, 4, 1); break;
        }
        PutBytes(list, 1, it);
      }
      PutBytes(v, 7, list);
      break;
    }
    case Kind::kNone: PutInt(v, 8, 1); break;
    case Kind::kBad: break;  // an unset value: the server's TypeError names the argument
  }
  return v;
}

// encode_op(op, inputs, attrs, outputs, stream) -> the OpCall's bytes.
py::bytes EncodeOp(const std::string& name, const std::vector<uint64_t>& inputs,
                   const py::dict& attrs, const std::vector<uint64_t>& outputs, uint64_t stream) {
  std::string out;
  PutBytes(out, 1, name);
  PutPacked(out, 2, inputs);
  for (const auto& [key, value] : attrs) {
    std::string entry;
    PutBytes(entry, 1, key.cast<std::string>());
    PutBytes(entry, 2, EncodeAttrValue(ToWire(value)));
    PutBytes(out, 3, entry);
  }
  PutPacked(out, 4, outputs);
  if (stream != 0) PutInt(out, 6, static_cast<int64_t>(stream));
  return py::bytes(out);
}

// encode_request(session_id, calls, omit_metadata, release_after) -> RunOpsRequest's bytes.
py::bytes EncodeRequest(const std::string& session_id, const py::list& calls, bool omit_metadata,
                        const std::vector<uint64_t>& release_after) {
  std::string out;
  PutBytes(out, 1, session_id);
  for (const py::handle& call : calls) {
    char* data = nullptr;
    Py_ssize_t size = 0;
    if (PyBytes_AsStringAndSize(call.ptr(), &data, &size) != 0) throw py::error_already_set();
    PutBytes(out, 2, absl::string_view(data, static_cast<size_t>(size)));
  }
  if (omit_metadata) PutInt(out, 3, 1);
  PutPacked(out, 4, release_after);
  return py::bytes(out);
}

}  // namespace
}  // namespace tensord::planner

PYBIND11_MODULE(_planner, m) {
  m.doc() = "The tensord engine's op planner on metadata alone (see planner_module.cc).";
  m.def("fingerprint", &tensord::engine::RegistryFingerprint,
        "The op registry's fingerprint; planning locally is right only when the server's agrees.");
  m.def("plan", &tensord::planner::Plan, py::arg("op"), py::arg("inputs"), py::arg("attrs"),
        py::arg("default_device"));
  m.def("encode_op", &tensord::planner::EncodeOp, "An OpCall's wire bytes.");
  m.def("encode_request", &tensord::planner::EncodeRequest, "A RunOpsRequest's wire bytes.");
}
