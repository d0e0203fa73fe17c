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
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "engine/core/dtype.h"
#include "engine/core/errors.h"
#include "engine/core/status_macros.h"
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
  } else if (PyUnicode_Check(value.ptr())) {
    w.kind = Kind::kText, w.text = value.cast<std::string>();
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
    case Kind::kText: PutBytes(v, 9, w.text); break;
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

// An op's attributes, typed as the engine types them and encoded once: the OpCall's attrs
// entries are also part of the plan cache's key.
struct EncodedAttrs {
  std::vector<std::pair<std::string, WireAttr>> wire;
  std::string entries;  // OpCall field 3, one map entry per attribute
  bool cacheable = true;
};

EncodedAttrs EncodeAttrs(const py::handle& attrs) {
  EncodedAttrs out;
  if (attrs.is_none()) return out;
  const py::dict dict = py::reinterpret_borrow<py::dict>(attrs);
  out.wire.reserve(dict.size());
  for (const auto& [key, value] : dict) {
    WireAttr w = ToWire(value);
    std::string name = key.cast<std::string>();
    std::string entry;
    PutBytes(entry, 1, name);
    PutBytes(entry, 2, EncodeAttrValue(w));
    PutBytes(out.entries, 3, entry);
    if (w.kind == WireAttr::Kind::kBad) out.cacheable = false;
    out.wire.emplace_back(std::move(name), std::move(w));
  }
  return out;
}

// torch.set_default_dtype's dtype, as the wire's DType number (0: unset, float32): process-wide,
// as torch's. Every op planned here is planned with it and every OpCall carries it (field 7).
int64_t default_dtype_wire = 0;

engine::DType DefaultDType() {
  return default_dtype_wire == 0 ? engine::DType::kFloat32
                                 : static_cast<engine::DType>(default_dtype_wire - 1);
}

// set_default_dtype(wire number): a floating dtype's, or 0 for float32 (TypeError otherwise).
void SetDefaultDType(int64_t wire) {
  if (wire != 0 && (!engine::IsValidDType(static_cast<int>(wire - 1)) ||
                    !engine::IsFloating(static_cast<engine::DType>(wire - 1)))) {
    throw py::type_error("only floating-point types are supported as the default type");
  }
  default_dtype_wire = wire == static_cast<int64_t>(engine::DType::kFloat32) + 1 ? 0 : wire;
}

// An OpCall's bytes; `outputs`: the output ids, already packed (field 4's payload).
std::string EncodeCall(absl::string_view name, const std::vector<uint64_t>& inputs,
                       const EncodedAttrs& attrs, const std::string& outputs, uint64_t stream) {
  std::string out;
  PutBytes(out, 1, name);
  PutPacked(out, 2, inputs);
  out += attrs.entries;
  if (!outputs.empty()) PutBytes(out, 4, outputs);
  if (stream != 0) PutInt(out, 6, static_cast<int64_t>(stream));
  if (default_dtype_wire != 0) PutInt(out, 7, default_dtype_wire);
  return out;
}

// encode_op(op, inputs, attrs, outputs, stream) -> the OpCall's bytes (for ops not planned here).
py::bytes EncodeOp(const std::string& name, const std::vector<uint64_t>& inputs,
                   const py::object& attrs, const std::vector<uint64_t>& outputs,
                   uint64_t stream) {
  std::string packed;
  for (uint64_t id : outputs) PutVarint(packed, id);
  return py::bytes(EncodeCall(name, inputs, EncodeAttrs(attrs), packed, stream));
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

// ---- tensors' metadata, and planning with it ----

// A tensor's metadata as the client knows it, planned here or told by the server (what
// TensorInfo says): tensord._planner.Meta. Storages are named by ids; a storage made by an op
// planned here gets a client-chosen id from 2^62 and an address from 2^48 in the session's own
// address space (data_ptr), 64-byte aligned with a gap, so that no two storages touch.
struct Meta {
  engine::MetaInput in;  // in.storage_key: the storage's id
  bool is_contiguous = true;
  uint64_t storage_data_ptr = 0;

  uint64_t data_ptr() const {
    return storage_data_ptr +
           static_cast<uint64_t>(in.storage_offset * engine::ItemSize(in.dtype));
  }
};

py::tuple DimsTuple(const engine::DimVector& dims) {
  py::tuple out(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) {
    PyTuple_SET_ITEM(out.ptr(), i, PyLong_FromLongLong(dims[i]));
  }
  return out;
}

PyObject* Interned(const char* name) { return PyUnicode_InternFromString(name); }

// A server's TensorInfo message (or any object with its fields) as a Meta.
absl::StatusOr<Meta> MetaFromInfo(const py::handle& info, absl::string_view op) {
  Meta m;
  TENSORD_ASSIGN_OR_RETURN(m.in.dtype,
                           engine::DTypeFromWire(info.attr("dtype").cast<int64_t>(), op));
  TENSORD_ASSIGN_OR_RETURN(m.in.device,
                           engine::ParseDevice(info.attr("device").cast<std::string>()));
  for (const py::handle& x : info.attr("sizes")) m.in.sizes.push_back(x.cast<int64_t>());
  for (const py::handle& x : info.attr("strides")) m.in.strides.push_back(x.cast<int64_t>());
  m.in.storage_offset = info.attr("storage_offset").cast<int64_t>();
  m.in.storage_key = info.attr("storage_id").cast<int64_t>();
  m.in.storage_nbytes = info.attr("storage_nbytes").cast<int64_t>();
  m.is_contiguous = info.attr("is_contiguous").cast<bool>();
  m.storage_data_ptr = info.attr("storage_data_ptr").cast<uint64_t>();
  return m;
}

// tensord._planner.Meta's Python type (looked up once).
PyTypeObject* MetaType() {
  static PyTypeObject* const type = reinterpret_cast<PyTypeObject*>(py::type::of<Meta>().ptr());
  return type;
}

// The inputs of one op as Metas: a tensor's Meta as it is, a server's TensorInfo converted;
// every object is held while its Meta is read.
struct InputMetas {
  explicit InputMetas(size_t n) {
    held.reserve(n);
    converted.reserve(n);  // no reallocation: `metas` points into it
    metas.reserve(n);
  }
  absl::Status Add(py::object info, absl::string_view op) {
    if (Py_TYPE(info.ptr()) == MetaType()) {
      metas.push_back(info.cast<const Meta*>());
    } else {
      TENSORD_ASSIGN_OR_RETURN(Meta m, MetaFromInfo(info, op));
      converted.push_back(std::move(m));
      metas.push_back(&converted.back());
    }
    held.push_back(std::move(info));
    return absl::OkStatus();
  }
  std::vector<py::object> held;
  std::vector<Meta> converted;
  std::vector<const Meta*> metas;
};

constexpr int64_t kLocalStorageIds = int64_t{1} << 62;
constexpr uint64_t kLocalAddresses = uint64_t{1} << 48;
constexpr size_t kPlanCacheEntries = 4096;

// tensord._planner.SessionPlanner: one per session. Plans ops with the engine's planner, names
// the tensors (ids) and storages of their outputs, and encodes the OpCalls.
//
// The planner is a function of the inputs' metadata (and which inputs share a storage) and the
// attributes alone, so its answers are kept: a loop that repeats an op on tensors of one shape
// plans it once. The key holds everything the planner reads; storages enter it as which input
// shares a storage with which, never by id.
class SessionPlanner {
 public:
  explicit SessionPlanner(const std::string& default_device) {
    absl::StatusOr<engine::Device> device = engine::ParseDevice(default_device);
    if (!device.ok()) throw std::invalid_argument(std::string(device.status().message()));
    default_device_ = *device;
  }

  uint64_t NewIds(uint64_t n) {
    const uint64_t first = next_id_;
    next_id_ += n;
    return first;
  }

  // plan(op, infos, attrs) -> [Meta] | (kind, code, message) | None
  // infos: the inputs' metadata (Meta, or the server's TensorInfo). None: only the server can
  // plan the op (its outputs depend on the data).
  py::object Plan(const std::string& name, const py::list& infos, const py::object& attrs) {
    InputMetas inputs(infos.size());
    for (const py::handle& info : infos) {
      if (absl::Status added = inputs.Add(py::reinterpret_borrow<py::object>(info), name);
          !added.ok()) {
        return Error(added);
      }
    }
    absl::StatusOr<const Planned*> planned = PlanCached(name, inputs.metas, EncodeAttrs(attrs));
    if (!planned.ok()) return Error(planned.status());
    if (!(*planned)->has_value()) return py::none();
    return Outputs(***planned, inputs.metas, (**planned)->size());
  }

  // queue(op, tensors, attrs, n, stream, session) -> (first_id, [Meta], call_bytes, input_ids)
  //   | (kind, code, message) | None
  // The whole of queuing a planned op for the client: its input tensors' metadata read from the
  // tensors, planned, `n` output ids given (None: as many as planned), the OpCall encoded.
  // None: this path does not apply and the client's general one takes over (an input that is
  // not a tensor of `session`, whose metadata is not known yet, or that carries an error; an
  // op only the server can plan; more outputs asked for than planned).
  py::object Queue(const std::string& name, const py::list& tensors, const py::object& attrs,
                   const py::object& n, uint64_t stream, const py::handle& session) {
    static PyObject* const kSession = Interned("_session");
    static PyObject* const kInfo = Interned("_info");
    static PyObject* const kError = Interned("_error");
    static PyObject* const kId = Interned("_id");
    InputMetas inputs(tensors.size());
    std::vector<uint64_t> input_ids;
    input_ids.reserve(tensors.size());
    for (const py::handle& t : tensors) {
      const auto attr = [&t](PyObject* name) {
        return py::reinterpret_steal<py::object>(PyObject_GetAttr(t.ptr(), name));
      };
      const py::object owner = attr(kSession), error = attr(kError), id = attr(kId);
      py::object info = attr(kInfo);
      if (!owner || !error || !info || !id) {  // not a tensor: the general path says so
        PyErr_Clear();
        return py::none();
      }
      if (owner.ptr() != session.ptr() || !error.is_none() || info.is_none()) return py::none();
      input_ids.push_back(id.cast<uint64_t>());
      if (absl::Status added = inputs.Add(std::move(info), name); !added.ok()) {
        return Error(added);
      }
    }
    const EncodedAttrs encoded = EncodeAttrs(attrs);
    absl::StatusOr<const Planned*> planned = PlanCached(name, inputs.metas, encoded);
    if (!planned.ok()) return Error(planned.status());
    if (!(*planned)->has_value()) return py::none();
    const std::vector<engine::MetaOutput>& outputs = ***planned;
    size_t count = outputs.size();
    if (!n.is_none()) {
      const size_t asked = n.cast<size_t>();
      if (asked > count) return py::none();
      count = asked;
    }
    const uint64_t first = count > 0 ? NewIds(count) : 0;
    py::list metas = Outputs(outputs, inputs.metas, count);
    std::string packed;
    for (size_t i = 0; i < count; ++i) PutVarint(packed, first + i);
    py::bytes call(EncodeCall(name, input_ids, encoded, packed, stream));
    // Which input each output is a view of (shares its storage and dtype with; -1: none), or
    // None when none is: the client's views learn their base (Tensor._base) from it.
    const auto view_of = [&](size_t i) {
      const int k = outputs[i].alias;
      return k >= 0 && inputs.metas[k]->in.dtype == outputs[i].dtype ? k : -1;
    };
    py::object aliases = py::none();
    for (size_t i = 0; i < count; ++i) {
      if (view_of(i) < 0) continue;
      py::tuple each(count);
      for (size_t j = 0; j < count; ++j) each[j] = py::int_(view_of(j));
      aliases = std::move(each);
      break;
    }
    return py::make_tuple(first, std::move(metas), std::move(call), py::cast(input_ids),
                          std::move(aliases));
  }

  size_t cached_plans() const { return cache_.size(); }

 private:
  // The planner's answer for one key: the outputs, or std::nullopt for an op only the server
  // can plan.
  using Planned = std::optional<std::vector<engine::MetaOutput>>;

  absl::StatusOr<const Planned*> PlanCached(absl::string_view name,
                                            const std::vector<const Meta*>& inputs,
                                            const EncodedAttrs& attrs) {
    std::string key(name);
    key.push_back('\0');
    for (size_t i = 0; i < inputs.size(); ++i) {
      const engine::MetaInput& in = inputs[i]->in;
      size_t shares = i;  // the first input on the same storage
      for (size_t j = 0; j < i; ++j) {
        if (inputs[j]->in.storage_key == in.storage_key) {
          shares = j;
          break;
        }
      }
      PutVarint(key, shares);
      PutVarint(key, static_cast<uint64_t>(in.dtype));
      PutVarint(key, static_cast<uint64_t>(in.device.type));
      PutVarint(key, static_cast<uint64_t>(in.device.index));
      PutVarint(key, in.sizes.size());
      for (int64_t s : in.sizes) PutVarint(key, static_cast<uint64_t>(s));
      PutVarint(key, in.strides.size());
      for (int64_t s : in.strides) PutVarint(key, static_cast<uint64_t>(s));
      PutVarint(key, static_cast<uint64_t>(in.storage_offset));
      PutVarint(key, static_cast<uint64_t>(in.storage_nbytes));
    }
    key.push_back('\0');
    PutVarint(key, static_cast<uint64_t>(default_dtype_wire));
    key += attrs.entries;
    if (auto it = cache_.find(key); it != cache_.end()) return &it->second;

    std::vector<engine::MetaInput> metas;
    metas.reserve(inputs.size());
    for (const Meta* m : inputs) metas.push_back(m->in);
    const engine::DefaultFloatDTypeScope default_dtype(DefaultDType());
    TENSORD_ASSIGN_OR_RETURN(Planned planned,
                             engine::PlanOnMetadata(name, metas, attrs.wire, default_device_));
    if (!attrs.cacheable) {
      uncached_ = std::move(planned);
      return &uncached_;
    }
    if (cache_.size() >= kPlanCacheEntries) cache_.clear();
    return &cache_.emplace(std::move(key), std::move(planned)).first->second;
  }

  // The first `count` planned outputs as Metas: a view or in-place result shares its input's
  // storage; any other output gets a new storage, named here.
  py::list Outputs(const std::vector<engine::MetaOutput>& outputs,
                   const std::vector<const Meta*>& inputs, size_t count) {
    py::list out(count);
    for (size_t i = 0; i < count; ++i) {
      const engine::MetaOutput& o = outputs[i];
      Meta m;
      m.in = engine::MetaInput{o.dtype, o.device, o.sizes, o.strides, o.storage_offset, 0,
                               o.storage_nbytes};
      m.is_contiguous = o.is_contiguous;
      if (o.alias >= 0) {
        m.in.storage_key = inputs[o.alias]->in.storage_key;
        m.storage_data_ptr = inputs[o.alias]->storage_data_ptr;
      } else {
        m.in.storage_key = next_storage_++;
        m.storage_data_ptr = o.storage_nbytes > 0 ? next_address_ : 0;  // torch: empty is 0
        next_address_ += (static_cast<uint64_t>(o.storage_nbytes) + 63) / 64 * 64 + 64;
      }
      PyList_SET_ITEM(out.ptr(), i, py::cast(std::move(m)).release().ptr());
    }
    return out;
  }

  engine::Device default_device_;
  uint64_t next_id_ = 1;
  int64_t next_storage_ = kLocalStorageIds;
  uint64_t next_address_ = kLocalAddresses;
  absl::flat_hash_map<std::string, Planned> cache_;
  Planned uncached_;
};

}  // namespace
}  // namespace tensord::planner

PYBIND11_MODULE(_planner, m) {
  namespace planner = tensord::planner;
  m.doc() = "The tensord engine's op planner on metadata alone (see planner_module.cc).";
  m.def("set_default_dtype", &planner::SetDefaultDType,
        "Plans and sends every later op with this default dtype (a floating dtype's wire number).");
  m.def("fingerprint", &tensord::engine::RegistryFingerprint,
        "The op registry's fingerprint; planning locally is right only when the server's agrees.");
  py::class_<planner::Meta>(m, "Meta", "A tensor's metadata, as TensorInfo says it.")
      .def_property_readonly("sizes", [](const planner::Meta& x) { return planner::DimsTuple(x.in.sizes); })
      .def_property_readonly("strides", [](const planner::Meta& x) { return planner::DimsTuple(x.in.strides); })
      .def_property_readonly("storage_offset", [](const planner::Meta& x) { return x.in.storage_offset; })
      .def_property_readonly("dtype", [](const planner::Meta& x) { return static_cast<int>(x.in.dtype) + 1; })
      .def_property_readonly("device", [](const planner::Meta& x) { return x.in.device.ToString(); })
      .def_property_readonly("is_contiguous", [](const planner::Meta& x) { return x.is_contiguous; })
      .def_property_readonly("storage_id", [](const planner::Meta& x) { return x.in.storage_key; })
      .def_property_readonly("storage_nbytes", [](const planner::Meta& x) { return x.in.storage_nbytes; })
      .def_property_readonly("storage_data_ptr", [](const planner::Meta& x) { return x.storage_data_ptr; })
      .def_property_readonly("data_ptr", &planner::Meta::data_ptr);
  py::class_<planner::SessionPlanner>(m, "SessionPlanner")
      .def(py::init<const std::string&>(), py::arg("default_device"))
      .def_static("encode_op", &planner::EncodeOp, "An OpCall's wire bytes.")
      .def_static("encode_request", &planner::EncodeRequest, "A RunOpsRequest's wire bytes.")
      .def("new_ids", &planner::SessionPlanner::NewIds)
      .def("plan", &planner::SessionPlanner::Plan)
      .def("queue", &planner::SessionPlanner::Queue)
      .def_property_readonly("cached_plans", &planner::SessionPlanner::cached_plans);
}
