// tensord._planner: the engine's op planner, on metadata alone, for the Python client.
//
// The client plans every op here before it queues it: the outputs' sizes, strides, offset, dtype
// and device, and every validation error with torch's exception class, come from the server's
// own planners (engine/op_registry.h), run on storages without bytes (engine/meta_backend.h).
// The server still plans and validates every op it receives.
//
// No protobuf here: Python's protobuf and a C++ one must not both register tensord.proto in one
// process. Attributes arrive as the client's Python values and are typed by the engine's
// AttrsFromWire, the rule the server applies to the same values on the wire.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "engine/backend.h"
#include "engine/errors.h"
#include "engine/meta_backend.h"
#include "engine/op_registry.h"
#include "engine/storage.h"

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
  const engine::OpDef* op = engine::OpRegistry::Global().Find(name);
  if (op == nullptr) {
    return Error(absl::NotFoundError(absl::StrCat("unknown op '", name, "'")));
  }
  if (op->kind == engine::OpKind::kDataDependent) return py::none();

  std::vector<engine::Tensor> tensors;
  tensors.reserve(inputs.size());
  absl::flat_hash_map<int64_t, std::shared_ptr<engine::Storage>> storages;
  std::vector<const engine::Storage*> input_storages;
  for (const py::handle& h : inputs) {
    const py::tuple t = py::reinterpret_borrow<py::tuple>(h);
    absl::StatusOr<engine::DType> dtype = engine::DTypeFromWire(t[0].cast<int64_t>(), op->name);
    if (!dtype.ok()) return Error(dtype.status());
    absl::StatusOr<engine::Device> device = engine::ParseDevice(t[1].cast<std::string>());
    if (!device.ok()) return Error(device.status());
    const std::vector<int64_t> sizes = t[2].cast<std::vector<int64_t>>();
    const std::vector<int64_t> strides = t[3].cast<std::vector<int64_t>>();
    if (sizes.size() != strides.size()) {
      return Error(absl::InvalidArgumentError(absl::StrCat(op->name, ": bad input metadata")));
    }
    const int64_t key = t[5].cast<int64_t>();
    std::shared_ptr<engine::Storage>& storage = storages[key];
    if (storage == nullptr) {
      absl::StatusOr<engine::Backend*> backend = engine::BackendFor(*device);
      if (!backend.ok()) return Error(engine::NameOp(op->name, backend.status()));
      absl::StatusOr<std::shared_ptr<engine::Storage>> created =
          engine::Storage::Create((*backend)->allocator(), t[6].cast<int64_t>());
      if (!created.ok()) return Error(created.status());
      storage = *std::move(created);
    }
    input_storages.push_back(storage.get());
    tensors.emplace_back(storage,
                         engine::TensorMeta(*dtype, sizes, strides, t[4].cast<int64_t>()));
  }
  std::vector<std::pair<std::string, WireAttr>> wire;
  wire.reserve(attrs.size());
  for (const auto& [key, value] : attrs) wire.emplace_back(key.cast<std::string>(), ToWire(value));
  absl::StatusOr<engine::Attrs> typed = engine::AttrsFromWire(*op, wire);
  if (!typed.ok()) return Error(typed.status());
  if (op->kind == engine::OpKind::kFactory && !typed->Has("device")) {
    absl::StatusOr<engine::Device> device = engine::ParseDevice(default_device);
    if (!device.ok()) return Error(device.status());
    typed->Set("device", *device);
  }
  absl::StatusOr<engine::PlannedOp> plan = engine::PlanOp(op->name, tensors, *typed);
  if (!plan.ok()) return Error(plan.status());

  py::list out;
  for (const engine::Tensor& t : plan->outputs) {
    int alias = -1;
    for (size_t i = 0; i < input_storages.size(); ++i) {
      if (input_storages[i] == t.storage().get()) alias = static_cast<int>(i);
    }
    out.append(py::make_tuple(
        static_cast<int>(t.dtype()) + 1, t.device().ToString(),
        std::vector<int64_t>(t.sizes().begin(), t.sizes().end()),
        std::vector<int64_t>(t.strides().begin(), t.strides().end()), t.storage_offset(),
        t.is_contiguous(), alias, t.storage()->nbytes()));
  }
  return out;
}

}  // namespace
}  // namespace tensord::planner

PYBIND11_MODULE(_planner, m) {
  m.doc() = "The tensord engine's op planner on metadata alone (see planner_module.cc).";
  m.def("fingerprint", &tensord::engine::RegistryFingerprint,
        "The op registry's fingerprint; planning locally is right only when the server's agrees.");
  m.def(
      "use_devices",
      [](int num_cuda_devices) { tensord::engine::UseMetadataOnlyBackends(num_cuda_devices); },
      "Makes cpu and cuda:0 … cuda:N-1 plannable (once per process).");
  m.def("plan", &tensord::planner::Plan, py::arg("op"), py::arg("inputs"), py::arg("attrs"),
        py::arg("default_device"));
}
