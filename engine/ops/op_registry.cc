#include "engine/ops/op_registry.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/ops/elementwise.h"
#include "engine/runtime/backend.h"
#include "engine/ops/copy_ops.h"
#include "engine/core/errors.h"
#include "engine/ops/factory_ops.h"
#include "engine/ops/index_ops.h"
#include "engine/ops/op_registry_internal.h"
#include "engine/ops/composition.h"
#include "engine/tensor/memory_format.h"

#include <algorithm>
#include <thread>
#include "engine/core/status_macros.h"

namespace tensord::engine {

const char* OpKindName(OpKind kind) {
  switch (kind) {
    case OpKind::kView: return "view";
    case OpKind::kMaybeView: return "maybe_view";
    case OpKind::kCompute: return "compute";
    case OpKind::kInPlace: return "in_place";
    case OpKind::kFactory: return "factory";
    case OpKind::kDataDependent: return "data_dependent";
  }
  return "unknown";
}

const char* AttrTypeName(AttrType type) {
  switch (type) {
    case AttrType::kInt: return "int";
    case AttrType::kIntList: return "int_list";
    case AttrType::kIntOrIntList: return "int_or_int_list";
    case AttrType::kBool: return "bool";
    case AttrType::kScalar: return "scalar";
    case AttrType::kDType: return "dtype";
    case AttrType::kDevice: return "device";
    case AttrType::kIndex: return "index";
    case AttrType::kString: return "string";
  }
  return "unknown";
}

bool Attrs::Has(absl::string_view name) const { return Find(name) != nullptr; }

const AttrValue* Attrs::Find(absl::string_view name) const {
  auto it = values_.find(name);
  if (it == values_.end() || std::holds_alternative<None>(it->second)) return nullptr;
  return &it->second;
}

// ---- AttrReader --------------------------------------------------------------------------

absl::Status AttrReader::Missing(absl::string_view name) const {
  return TypeError(op_.name, absl::StrCat("missing required argument '", name, "'"));
}

absl::Status AttrReader::WrongType(absl::string_view name, absl::string_view expected) const {
  return TypeError(op_.name, absl::StrCat("argument '", name, "' must be ", expected));
}

absl::StatusOr<int64_t> AttrReader::Int(absl::string_view name,
                                        std::optional<int64_t> dflt) const {
  const AttrValue* v = attrs_.Find(name);
  if (v == nullptr) {
    if (dflt) return *dflt;
    return Missing(name);
  }
  if (const int64_t* i = std::get_if<int64_t>(v)) return *i;
  return WrongType(name, "an int");
}

absl::StatusOr<std::optional<int64_t>> AttrReader::OptionalInt(absl::string_view name) const {
  const AttrValue* v = attrs_.Find(name);
  if (v == nullptr) return std::optional<int64_t>();
  if (const int64_t* i = std::get_if<int64_t>(v)) return std::optional<int64_t>(*i);
  return WrongType(name, "an int or None");
}

absl::StatusOr<std::vector<int64_t>> AttrReader::IntList(absl::string_view name) const {
  const AttrValue* v = attrs_.Find(name);
  if (v == nullptr) return Missing(name);
  if (const auto* l = std::get_if<std::vector<int64_t>>(v)) return *l;
  return WrongType(name, "a list of ints");
}

absl::StatusOr<std::vector<int64_t>> AttrReader::IntOrIntList(absl::string_view name,
                                                              bool* was_list) const {
  const AttrValue* v = attrs_.Find(name);
  if (v == nullptr) return Missing(name);
  if (const int64_t* i = std::get_if<int64_t>(v)) {
    *was_list = false;
    return std::vector<int64_t>{*i};
  }
  if (const auto* l = std::get_if<std::vector<int64_t>>(v)) {
    *was_list = true;
    return *l;
  }
  return WrongType(name, "an int or a list of ints");
}

absl::StatusOr<bool> AttrReader::Bool(absl::string_view name, std::optional<bool> dflt) const {
  const AttrValue* v = attrs_.Find(name);
  if (v == nullptr) {
    if (dflt) return *dflt;
    return Missing(name);
  }
  if (const bool* b = std::get_if<bool>(v)) return *b;
  return WrongType(name, "a bool");
}

absl::StatusOr<Scalar> AttrReader::GetScalar(absl::string_view name,
                                             std::optional<Scalar> dflt) const {
  const AttrValue* v = attrs_.Find(name);
  if (v == nullptr) {
    if (dflt) return *dflt;
    return Missing(name);
  }
  if (const Scalar* s = std::get_if<Scalar>(v)) return *s;
  if (const int64_t* i = std::get_if<int64_t>(v)) return Scalar(*i);
  if (const bool* b = std::get_if<bool>(v)) return Scalar(*b);
  return WrongType(name, "a number");
}

absl::StatusOr<std::optional<DType>> AttrReader::OptionalDType(absl::string_view name) const {
  const AttrValue* v = attrs_.Find(name);
  if (v == nullptr) return std::optional<DType>();
  if (const DType* d = std::get_if<DType>(v)) return std::optional<DType>(*d);
  return WrongType(name, "a dtype");
}

absl::StatusOr<Device> AttrReader::GetDevice(absl::string_view name, Device dflt) const {
  const AttrValue* v = attrs_.Find(name);
  if (v == nullptr) return dflt;
  if (const Device* d = std::get_if<Device>(v)) return *d;
  return WrongType(name, "a device");
}

absl::StatusOr<std::vector<IndexItem>> AttrReader::Index(absl::string_view name) const {
  const AttrValue* v = attrs_.Find(name);
  if (v == nullptr) return Missing(name);
  if (const auto* l = std::get_if<std::vector<IndexItem>>(v)) return *l;
  return WrongType(name, "an index (ints, slices, None, Ellipsis)");
}

absl::StatusOr<std::string> AttrReader::String(absl::string_view name,
                                              std::optional<std::string> dflt) const {
  const AttrValue* v = attrs_.Find(name);
  if (v == nullptr || std::holds_alternative<None>(*v)) {
    if (dflt.has_value()) return *dflt;
    return Missing(name);
  }
  if (const auto* s = std::get_if<std::string>(v)) return *s;
  return WrongType(name, "a string");
}

// ---- Registration helpers ----------------------------------------------------------------

namespace {

PlanFn ViewFn(std::function<absl::StatusOr<Tensor>(Inputs, AttrReader&)> fn) {
  return [fn = std::move(fn)](Inputs in, AttrReader& a) -> absl::StatusOr<PlannedOp> {
    TENSORD_ASSIGN_OR_RETURN(Tensor out, fn(in, a));
    return ViewPlan({std::move(out)});
  };
}

PlanFn MultiViewFn(std::function<absl::StatusOr<std::vector<Tensor>>(Inputs, AttrReader&)> fn) {
  return [fn = std::move(fn)](Inputs in, AttrReader& a) -> absl::StatusOr<PlannedOp> {
    TENSORD_ASSIGN_OR_RETURN(std::vector<Tensor> out, fn(in, a));
    return ViewPlan(std::move(out));
  };
}

// Factory attributes common to every creation op.
std::vector<AttrSpec> WithFactoryAttrs(std::vector<AttrSpec> attrs, std::string dtype_default) {
  attrs.push_back(Opt("dtype", AttrType::kDType, std::move(dtype_default)));
  attrs.push_back(Opt("device", AttrType::kDevice, "the session's device"));
  return attrs;
}

void RegisterViewOps(std::vector<OpDef>& ops) {
  const std::vector<std::string> self = {"self"};
  const std::vector<std::string> self_other = {"self", "other"};
  ops.push_back({"view", OpKind::kView, self, {Req("shape", AttrType::kIntList)},
                 "View with a new shape (one -1 is inferred); fails when the strides do not "
                 "allow it.",
                 false, ViewFn([](Inputs in, AttrReader& a) -> absl::StatusOr<Tensor> {
                   TENSORD_ASSIGN_OR_RETURN(auto shape, a.IntList("shape"));
                   return View(in[0], shape);
                 })});
  ops.push_back({"view.dtype", OpKind::kView, self, {Req("dtype", AttrType::kDType)},
                 "The same bytes as another dtype (the last dim scales with the element size).",
                 false, ViewFn([](Inputs in, AttrReader& a) -> absl::StatusOr<Tensor> {
                   TENSORD_ASSIGN_OR_RETURN(std::optional<DType> dtype, a.OptionalDType("dtype"));
                   return ViewDType(in[0], *dtype);
                 })});
  ops.push_back({"view_as", OpKind::kView, self_other, {}, "view(other.shape).", false,
                 ViewFn([](Inputs in, AttrReader&) { return ViewAs(in[0], in[1]); })});
  ops.push_back({"as_strided", OpKind::kView, self,
                 {Req("size", AttrType::kIntList), Req("stride", AttrType::kIntList),
                  Opt("storage_offset", AttrType::kInt, "self.storage_offset()")},
                 "Any sizes/strides/offset inside the storage.", false,
                 ViewFn([](Inputs in, AttrReader& a) -> absl::StatusOr<Tensor> {
                   TENSORD_ASSIGN_OR_RETURN(auto size, a.IntList("size"));
                   TENSORD_ASSIGN_OR_RETURN(auto stride, a.IntList("stride"));
                   TENSORD_ASSIGN_OR_RETURN(auto offset, a.OptionalInt("storage_offset"));
                   return AsStrided(in[0], size, stride, offset);
                 })});
  ops.push_back({"unflatten", OpKind::kView, self,
                 {Req("dim", AttrType::kInt), Req("sizes", AttrType::kIntList)},
                 "Splits one dim into several.", false,
                 ViewFn([](Inputs in, AttrReader& a) -> absl::StatusOr<Tensor> {
                   TENSORD_ASSIGN_OR_RETURN(auto dim, a.Int("dim"));
                   TENSORD_ASSIGN_OR_RETURN(auto sizes, a.IntList("sizes"));
                   return Unflatten(in[0], dim, sizes);
                 })});
  for (const char* name : {"transpose", "swapaxes", "swapdims"}) {
    const bool axes = std::string(name) == "swapaxes";
    const std::string a0 = axes ? "axis0" : "dim0", a1 = axes ? "axis1" : "dim1";
    ops.push_back({name, OpKind::kView, self, {Req(a0, AttrType::kInt), Req(a1, AttrType::kInt)},
                   "Swaps two dims.", false,
                   ViewFn([a0, a1](Inputs in, AttrReader& a) -> absl::StatusOr<Tensor> {
                     TENSORD_ASSIGN_OR_RETURN(auto d0, a.Int(a0));
                     TENSORD_ASSIGN_OR_RETURN(auto d1, a.Int(a1));
                     return Transpose(in[0], d0, d1);
                   })});
  }
  struct Unary {
    const char* name;
    absl::StatusOr<Tensor> (*fn)(const Tensor&);
    const char* doc;
  };
  for (const Unary& u : {Unary{"t", T, "Transpose of a <= 2-d tensor."},
                         Unary{"T", NumpyT, "All dims reversed."},
                         Unary{"H", MatrixH, "Conjugate transpose of a matrix (0-d or 2-d)."},
                         Unary{"mT", MT, "Transpose of the last two dims."},
                         Unary{"mH", MH, "Conjugate transpose of the last two dims."},
                         Unary{"adjoint", Adjoint, "Conjugate transpose of the last two dims."},
                         Unary{"alias", Alias, "The same view, as a new tensor."},
                         Unary{"detach", Detach, "The same view, as a new tensor."}}) {
    auto* fn = u.fn;
    ops.push_back({u.name, OpKind::kView, self, {}, u.doc, false,
                   ViewFn([fn](Inputs in, AttrReader&) { return fn(in[0]); })});
  }
  ops.push_back({"permute", OpKind::kView, self, {Req("dims", AttrType::kIntList)},
                 "Reorders the dims.", false,
                 ViewFn([](Inputs in, AttrReader& a) -> absl::StatusOr<Tensor> {
                   TENSORD_ASSIGN_OR_RETURN(auto dims, a.IntList("dims"));
                   return Permute(in[0], dims);
                 })});
  for (const char* name : {"movedim", "moveaxis"}) {
    ops.push_back({name, OpKind::kView, self,
                   {Req("source", AttrType::kIntOrIntList),
                    Req("destination", AttrType::kIntOrIntList)},
                   "Moves dims to new positions; the others keep their order.", false,
                   ViewFn([](Inputs in, AttrReader& a) -> absl::StatusOr<Tensor> {
                     bool list;
                     TENSORD_ASSIGN_OR_RETURN(auto src, a.IntOrIntList("source", &list));
                     TENSORD_ASSIGN_OR_RETURN(auto dst, a.IntOrIntList("destination", &list));
                     return Movedim(in[0], src, dst);
                   })});
  }
  ops.push_back({"expand", OpKind::kView, self, {Req("size", AttrType::kIntList)},
                 "Broadcasts size-1 dims (stride 0); -1 keeps a size.", false,
                 ViewFn([](Inputs in, AttrReader& a) -> absl::StatusOr<Tensor> {
                   TENSORD_ASSIGN_OR_RETURN(auto size, a.IntList("size"));
                   return Expand(in[0], size);
                 })});
  ops.push_back({"broadcast_to", OpKind::kView, self, {Req("size", AttrType::kIntList)},
                 "expand(size).", false,
                 ViewFn([](Inputs in, AttrReader& a) -> absl::StatusOr<Tensor> {
                   TENSORD_ASSIGN_OR_RETURN(auto size, a.IntList("size"));
                   return BroadcastTo(in[0], size);
                 })});
  ops.push_back({"expand_as", OpKind::kView, self_other, {}, "expand(other.shape).", false,
                 ViewFn([](Inputs in, AttrReader&) { return ExpandAs(in[0], in[1]); })});
  ops.push_back({"squeeze", OpKind::kView, self,
                 {Opt("dim", AttrType::kIntOrIntList, "None (all size-1 dims)")},
                 "Removes size-1 dims: all, one, or those listed.", false,
                 ViewFn([](Inputs in, AttrReader& a) -> absl::StatusOr<Tensor> {
                   if (!a.Has("dim")) return Squeeze(in[0]);
                   bool list;
                   TENSORD_ASSIGN_OR_RETURN(auto dims, a.IntOrIntList("dim", &list));
                   if (!list) return SqueezeDim(in[0], dims[0]);
                   return SqueezeDims(in[0], dims);
                 })});
  ops.push_back({"unsqueeze", OpKind::kView, self, {Req("dim", AttrType::kInt)},
                 "Inserts a size-1 dim.", false,
                 ViewFn([](Inputs in, AttrReader& a) -> absl::StatusOr<Tensor> {
                   TENSORD_ASSIGN_OR_RETURN(auto dim, a.Int("dim"));
                   return Unsqueeze(in[0], dim);
                 })});
  ops.push_back({"narrow", OpKind::kView, self,
                 {Req("dim", AttrType::kInt), Req("start", AttrType::kInt),
                  Req("length", AttrType::kInt)},
                 "self[..., start:start+length] along dim.", false,
                 ViewFn([](Inputs in, AttrReader& a) -> absl::StatusOr<Tensor> {
                   TENSORD_ASSIGN_OR_RETURN(auto dim, a.Int("dim"));
                   TENSORD_ASSIGN_OR_RETURN(auto start, a.Int("start"));
                   TENSORD_ASSIGN_OR_RETURN(auto length, a.Int("length"));
                   return Narrow(in[0], dim, start, length);
                 })});
  ops.push_back({"select", OpKind::kView, self,
                 {Req("dim", AttrType::kInt), Req("index", AttrType::kInt)},
                 "Indexes one dim away.", false,
                 ViewFn([](Inputs in, AttrReader& a) -> absl::StatusOr<Tensor> {
                   TENSORD_ASSIGN_OR_RETURN(auto dim, a.Int("dim"));
                   TENSORD_ASSIGN_OR_RETURN(auto index, a.Int("index"));
                   return Select(in[0], dim, index);
                 })});
  ops.push_back({"slice", OpKind::kView, self,
                 {Opt("dim", AttrType::kInt, "0"), Opt("start", AttrType::kInt, "None"),
                  Opt("end", AttrType::kInt, "None"), Opt("step", AttrType::kInt, "1")},
                 "start:end:step along dim (step > 0; bounds are clamped).", false,
                 ViewFn([](Inputs in, AttrReader& a) -> absl::StatusOr<Tensor> {
                   TENSORD_ASSIGN_OR_RETURN(auto dim, a.Int("dim", 0));
                   TENSORD_ASSIGN_OR_RETURN(auto start, a.OptionalInt("start"));
                   TENSORD_ASSIGN_OR_RETURN(auto end, a.OptionalInt("end"));
                   TENSORD_ASSIGN_OR_RETURN(auto step, a.Int("step", 1));
                   return Slice(in[0], dim, start, end, step);
                 })});
  ops.push_back({"index", OpKind::kView, self, {Req("indices", AttrType::kIndex)},
                 "Basic indexing: ints, slices, None and Ellipsis in any mix.", false,
                 ViewFn([](Inputs in, AttrReader& a) -> absl::StatusOr<Tensor> {
                   TENSORD_ASSIGN_OR_RETURN(auto items, a.Index("indices"));
                   return Index(in[0], items);
                 })});
  ops.push_back({"diagonal", OpKind::kView, self,
                 {Opt("offset", AttrType::kInt, "0"), Opt("dim1", AttrType::kInt, "0"),
                  Opt("dim2", AttrType::kInt, "1")},
                 "The diagonal of dims dim1 and dim2, appended as the last dim.", false,
                 ViewFn([](Inputs in, AttrReader& a) -> absl::StatusOr<Tensor> {
                   TENSORD_ASSIGN_OR_RETURN(auto offset, a.Int("offset", 0));
                   TENSORD_ASSIGN_OR_RETURN(auto dim1, a.Int("dim1", 0));
                   TENSORD_ASSIGN_OR_RETURN(auto dim2, a.Int("dim2", 1));
                   return Diagonal(in[0], offset, dim1, dim2);
                 })});
  ops.push_back({"unfold", OpKind::kView, self,
                 {Req("dimension", AttrType::kInt), Req("size", AttrType::kInt),
                  Req("step", AttrType::kInt)},
                 "Sliding windows of `size` every `step` along a dim, as a new last dim.", false,
                 ViewFn([](Inputs in, AttrReader& a) -> absl::StatusOr<Tensor> {
                   TENSORD_ASSIGN_OR_RETURN(auto dim, a.Int("dimension"));
                   TENSORD_ASSIGN_OR_RETURN(auto size, a.Int("size"));
                   TENSORD_ASSIGN_OR_RETURN(auto step, a.Int("step"));
                   return Unfold(in[0], dim, size, step);
                 })});
  ops.push_back({"split", OpKind::kView, self,
                 {Req("split_size", AttrType::kIntOrIntList), Opt("dim", AttrType::kInt, "0")},
                 "Pieces of split_size (an int) or of the listed sizes.", true,
                 MultiViewFn([](Inputs in, AttrReader& a) -> absl::StatusOr<std::vector<Tensor>> {
                   bool list;
                   TENSORD_ASSIGN_OR_RETURN(auto sizes, a.IntOrIntList("split_size", &list));
                   TENSORD_ASSIGN_OR_RETURN(auto dim, a.Int("dim", 0));
                   if (list) return SplitWithSizes(in[0], sizes, dim);
                   return Split(in[0], sizes[0], dim);
                 })});
  ops.push_back({"split_with_sizes", OpKind::kView, self,
                 {Req("split_sizes", AttrType::kIntList), Opt("dim", AttrType::kInt, "0")},
                 "Consecutive pieces of the listed sizes.", true,
                 MultiViewFn([](Inputs in, AttrReader& a) -> absl::StatusOr<std::vector<Tensor>> {
                   TENSORD_ASSIGN_OR_RETURN(auto sizes, a.IntList("split_sizes"));
                   TENSORD_ASSIGN_OR_RETURN(auto dim, a.Int("dim", 0));
                   return SplitWithSizes(in[0], sizes, dim);
                 })});
  ops.push_back({"tensor_split", OpKind::kView, self,
                 {Opt("sections", AttrType::kInt, "None"),
                  Opt("indices", AttrType::kIntList, "None"), Opt("dim", AttrType::kInt, "0")},
                 "`sections` near-equal pieces, or pieces cut at `indices`.", true,
                 MultiViewFn([](Inputs in, AttrReader& a) -> absl::StatusOr<std::vector<Tensor>> {
                   TENSORD_ASSIGN_OR_RETURN(auto dim, a.Int("dim", 0));
                   if (a.Has("indices")) {
                     TENSORD_ASSIGN_OR_RETURN(auto indices, a.IntList("indices"));
                     return TensorSplitIndices(in[0], indices, dim);
                   }
                   TENSORD_ASSIGN_OR_RETURN(auto sections, a.Int("sections"));
                   return TensorSplit(in[0], sections, dim);
                 })});
  ops.push_back({"chunk", OpKind::kView, self,
                 {Req("chunks", AttrType::kInt), Opt("dim", AttrType::kInt, "0")},
                 "At most `chunks` pieces of ceil(size / chunks).", true,
                 MultiViewFn([](Inputs in, AttrReader& a) -> absl::StatusOr<std::vector<Tensor>> {
                   TENSORD_ASSIGN_OR_RETURN(auto chunks, a.Int("chunks"));
                   TENSORD_ASSIGN_OR_RETURN(auto dim, a.Int("dim", 0));
                   return Chunk(in[0], chunks, dim);
                 })});
  ops.push_back({"unbind", OpKind::kView, self, {Opt("dim", AttrType::kInt, "0")},
                 "Every index of a dim, as a list of tensors.", true,
                 MultiViewFn([](Inputs in, AttrReader& a) -> absl::StatusOr<std::vector<Tensor>> {
                   TENSORD_ASSIGN_OR_RETURN(auto dim, a.Int("dim", 0));
                   return Unbind(in[0], dim);
                 })});
}

void RegisterDataOps(std::vector<OpDef>& ops) {
  const std::vector<std::string> self = {"self"};
  ops.push_back({"reshape", OpKind::kMaybeView, self, {Req("shape", AttrType::kIntList)},
                 "A view when the strides allow, else a contiguous copy.", false,
                 [](Inputs in, AttrReader& a) -> absl::StatusOr<PlannedOp> {
                   TENSORD_ASSIGN_OR_RETURN(auto shape, a.IntList("shape"));
                   return PlanReshape(in[0], shape);
                 }});
  ops.push_back({"reshape_as", OpKind::kMaybeView, {"self", "other"}, {},
                 "reshape(other.shape).", false,
                 [](Inputs in, AttrReader&) { return PlanReshape(in[0], in[1].sizes()); }});
  ops.push_back({"flatten", OpKind::kMaybeView, self,
                 {Opt("start_dim", AttrType::kInt, "0"), Opt("end_dim", AttrType::kInt, "-1")},
                 "Merges dims start_dim..end_dim (a reshape).", false,
                 [](Inputs in, AttrReader& a) -> absl::StatusOr<PlannedOp> {
                   TENSORD_ASSIGN_OR_RETURN(auto s, a.Int("start_dim", 0));
                   TENSORD_ASSIGN_OR_RETURN(auto e, a.Int("end_dim", -1));
                   return PlanFlatten(in[0], s, e);
                 }});
  ops.push_back({"contiguous", OpKind::kMaybeView, self, {},
                 "self when already contiguous, else a contiguous copy.", false,
                 [](Inputs in, AttrReader&) { return PlanContiguous(in[0]); }});
  ops.push_back({"clone", OpKind::kCompute, self, {},
                 "A copy that keeps self's layout when it is dense.", false,
                 [](Inputs in, AttrReader&) { return PlanClone(in[0]); }});
  ops.push_back({"to", OpKind::kMaybeView, self,
                 {Opt("dtype", AttrType::kDType, "self's"), Opt("device", AttrType::kDevice, "self's")},
                 "self on another device and/or in another dtype (self when it already is).",
                 false,
                 [](Inputs in, AttrReader& a) -> absl::StatusOr<PlannedOp> {
                   TENSORD_ASSIGN_OR_RETURN(auto dtype, a.OptionalDType("dtype"));
                   std::optional<Device> device;
                   if (a.Has("device")) {
                     TENSORD_ASSIGN_OR_RETURN(device, a.GetDevice("device", kCpu));
                   }
                   if (!dtype && !device) {
                     return RuntimeError("to", "missing required argument 'dtype' or 'device'");
                   }
                   return PlanTo(in[0], dtype, device);
                 }});
  ops.push_back({"copy_", OpKind::kInPlace, {"self", "src"}, {},
                 "Writes src (broadcast, converted) through self's view.", false,
                 [](Inputs in, AttrReader&) { return PlanCopyInto(in[0], in[1]); }});
  ops.push_back({"fill_", OpKind::kInPlace, self, {Req("value", AttrType::kScalar)},
                 "Writes value into every element of self's view.", false,
                 [](Inputs in, AttrReader& a) -> absl::StatusOr<PlannedOp> {
                   TENSORD_ASSIGN_OR_RETURN(auto value, a.GetScalar("value"));
                   return PlanFill(in[0], value);
                 }});
  ops.push_back({"zero_", OpKind::kInPlace, self, {}, "fill_(0).", false,
                 [](Inputs in, AttrReader&) { return PlanFill(in[0], Scalar(int64_t{0})); }});
  ops.push_back({"flip", OpKind::kCompute, self, {Req("dims", AttrType::kIntList)},
                 "A copy with the listed dims reversed.", false,
                 [](Inputs in, AttrReader& a) -> absl::StatusOr<PlannedOp> {
                   TENSORD_ASSIGN_OR_RETURN(auto dims, a.IntList("dims"));
                   return PlanFlip(in[0], dims);
                 }});
  ops.push_back({"repeat", OpKind::kCompute, self, {Req("repeats", AttrType::kIntList)},
                 "A contiguous copy tiled along each dim.", false,
                 [](Inputs in, AttrReader& a) -> absl::StatusOr<PlannedOp> {
                   TENSORD_ASSIGN_OR_RETURN(auto repeats, a.IntList("repeats"));
                   return PlanRepeat(in[0], repeats);
                 }});
}

void RegisterFactoryOps(std::vector<OpDef>& ops) {
  const auto full = [](Scalar value, bool has_value_attr) {
    return [value, has_value_attr](Inputs, AttrReader& a) -> absl::StatusOr<PlannedOp> {
      TENSORD_ASSIGN_OR_RETURN(auto size, a.IntList("size"));
      Scalar v = value;
      if (has_value_attr) {
        TENSORD_ASSIGN_OR_RETURN(v, a.GetScalar("fill_value"));
      }
      TENSORD_ASSIGN_OR_RETURN(auto dtype, a.OptionalDType("dtype"));
      TENSORD_ASSIGN_OR_RETURN(auto device, a.GetDevice("device", kCpu));
      if (!has_value_attr && !dtype) dtype = DefaultFloatDType();
      return PlanFull(size, v, dtype, device);
    };
  };
  ops.push_back({"empty", OpKind::kFactory, {},
                 WithFactoryAttrs({Req("size", AttrType::kIntList)}, "float32"),
                 "An uninitialised tensor; tensord zero-fills it.", false,
                 [](Inputs, AttrReader& a) -> absl::StatusOr<PlannedOp> {
                   TENSORD_ASSIGN_OR_RETURN(auto size, a.IntList("size"));
                   TENSORD_ASSIGN_OR_RETURN(auto dtype, a.OptionalDType("dtype"));
                   TENSORD_ASSIGN_OR_RETURN(auto device, a.GetDevice("device", kCpu));
                   return PlanEmpty(size, dtype.value_or(DefaultFloatDType()), device);
                 }});
  ops.push_back({"zeros", OpKind::kFactory, {},
                 WithFactoryAttrs({Req("size", AttrType::kIntList)}, "float32"), "All zeros.",
                 false, full(Scalar(int64_t{0}), false)});
  ops.push_back({"ones", OpKind::kFactory, {},
                 WithFactoryAttrs({Req("size", AttrType::kIntList)}, "float32"), "All ones.",
                 false, full(Scalar(int64_t{1}), false)});
  ops.push_back({"full", OpKind::kFactory, {},
                 WithFactoryAttrs({Req("size", AttrType::kIntList),
                                   Req("fill_value", AttrType::kScalar)},
                                  "the value's: bool, int64 or float32"),
                 "Every element fill_value.", false, full(Scalar(int64_t{0}), true)});
  ops.push_back({"empty_strided", OpKind::kFactory, {},
                 WithFactoryAttrs({Req("size", AttrType::kIntList),
                                   Req("stride", AttrType::kIntList)}, "float32"),
                 "A tensor with the given strides; tensord zero-fills it.", false,
                 [](Inputs, AttrReader& a) -> absl::StatusOr<PlannedOp> {
                   TENSORD_ASSIGN_OR_RETURN(auto size, a.IntList("size"));
                   TENSORD_ASSIGN_OR_RETURN(auto stride, a.IntList("stride"));
                   TENSORD_ASSIGN_OR_RETURN(auto dtype, a.OptionalDType("dtype"));
                   TENSORD_ASSIGN_OR_RETURN(auto device, a.GetDevice("device", kCpu));
                   return PlanEmptyStrided(size, stride, dtype.value_or(DefaultFloatDType()), device);
                 }});
  ops.push_back({"arange", OpKind::kFactory, {},
                 WithFactoryAttrs({Opt("start", AttrType::kScalar, "0"),
                                   Req("end", AttrType::kScalar),
                                   Opt("step", AttrType::kScalar, "1")},
                                  "int64, or float32 if any bound is a float"),
                 "start, start + step, … up to end (excluded).", false,
                 [](Inputs, AttrReader& a) -> absl::StatusOr<PlannedOp> {
                   TENSORD_ASSIGN_OR_RETURN(auto start, a.GetScalar("start", Scalar(int64_t{0})));
                   TENSORD_ASSIGN_OR_RETURN(auto end, a.GetScalar("end"));
                   TENSORD_ASSIGN_OR_RETURN(auto step, a.GetScalar("step", Scalar(int64_t{1})));
                   TENSORD_ASSIGN_OR_RETURN(auto dtype, a.OptionalDType("dtype"));
                   TENSORD_ASSIGN_OR_RETURN(auto device, a.GetDevice("device", kCpu));
                   return PlanArange(start, end, step, dtype, device);
                 }});
  ops.push_back({"empty_like", OpKind::kCompute, {"self"}, {},
                 "A tensor shaped and laid out like self; tensord zero-fills it.", false,
                 [](Inputs in, AttrReader&) { return PlanEmptyLike(in[0]); }});
}

void RegisterOtherOps(std::vector<OpDef>& ops) {
  ops.push_back({"take", OpKind::kCompute, {"self", "index"}, {},
                 "self viewed as 1-d, gathered at int64 indices (negative count from the end); "
                 "an index out of range fails the kernel while it runs.",
                 false, [](Inputs in, AttrReader&) { return PlanTake(in[0], in[1]); }});
  ops.push_back({"put_", OpKind::kInPlace, {"self", "index", "source"},
                 {Opt("accumulate", AttrType::kBool, "false", "add instead of writing")},
                 "Writes source's elements into self viewed as 1-d, at int64 indices (negative "
                 "count from the end); an index out of range fails the kernel, which then writes "
                 "nothing.",
                 false, [](Inputs in, AttrReader& a) -> absl::StatusOr<PlannedOp> {
                   TENSORD_ASSIGN_OR_RETURN(bool acc, a.Bool("accumulate", false));
                   return PlanPut(in[0], in[1], in[2], acc);
                 }});
  OpDef index_tensor{
      "index.Tensor", OpKind::kCompute, {"self", "indices"},
      {Req("dims", AttrType::kIntList, "the dim of self each index tensor indexes, increasing")},
      "Advanced indexing (torch's index.Tensor): self at int64 index tensors, one per dim of "
      "`dims`, broadcast together; their shape replaces adjacent dims in place, else leads. "
      "An index out of its dim fails the op where its kernels run (IndexError).",
      false, [](Inputs in, AttrReader& a) -> absl::StatusOr<PlannedOp> {
        TENSORD_ASSIGN_OR_RETURN(std::vector<int64_t> dims, a.IntList("dims"));
        return PlanIndexTensor(in[0], in.subspan(1), dims);
      }};
  index_tensor.variadic = true;
  ops.push_back(std::move(index_tensor));
  OpDef index_put{
      "index_put_", OpKind::kInPlace, {"self", "values", "indices"},
      {Req("dims", AttrType::kIntList, "the dim of self each index tensor indexes, increasing"),
       Opt("accumulate", AttrType::kBool, "false", "add instead of writing")},
      "torch's index_put_: self at index tensors (as index.Tensor's) = values, broadcast to "
      "the indexing result (self's dtype); with accumulate, added (repeated indices add up).",
      false, [](Inputs in, AttrReader& a) -> absl::StatusOr<PlannedOp> {
        TENSORD_ASSIGN_OR_RETURN(std::vector<int64_t> dims, a.IntList("dims"));
        TENSORD_ASSIGN_OR_RETURN(bool acc, a.Bool("accumulate", false));
        return PlanIndexPut(in[0], in[1], in.subspan(2), dims, acc);
      }};
  index_put.variadic = true;
  ops.push_back(std::move(index_put));
  OpDef sleep{"_sleep", OpKind::kCompute, {},
              {Req("ms", AttrType::kInt, "milliseconds, <= 60000"),
               Opt("device", AttrType::kDevice, "cpu")},
              "Occupies the stream for `ms` milliseconds on `device` (as torch.cuda._sleep): for "
              "tests and demonstrations of asynchronous execution.",
              false, [](Inputs, AttrReader& a) -> absl::StatusOr<PlannedOp> {
                TENSORD_ASSIGN_OR_RETURN(auto ms, a.Int("ms"));
                if (ms < 0 || ms > 60000) {
                  return RuntimeError("_sleep", absl::StrCat("ms must be in [0, 60000], got ", ms));
                }
                TENSORD_ASSIGN_OR_RETURN(Device device, a.GetDevice("device", kCpu));
                TENSORD_ASSIGN_OR_RETURN(Backend * backend, BackendFor(device));
                PlannedOp plan;
                if (device.is_cpu()) {
                  // The stream is held, not a thread: the CPU's stand-in for a long kernel.
                  plan.hold = absl::Milliseconds(ms);
                  plan.kernel = [] { return absl::OkStatus(); };
                } else {
                  plan.kernel = [backend, ms]() { return backend->Sleep(ms); };
                }
                return plan;
              }};
  sleep.returns_nothing = true;
  ops.push_back(std::move(sleep));
}

}  // namespace

OpRegistry::OpRegistry() {
  RegisterViewOps(ops_);
  RegisterDataOps(ops_);
  RegisterFactoryOps(ops_);
  RegisterOtherOps(ops_);
  RegisterElementwiseOps(ops_);
  RegisterReductionOps(ops_);
  RegisterLinalgOps(ops_);
  RegisterMatrixOps(ops_);
  RegisterStatisticsOps(ops_);
  RegisterFunctionalOps(ops_);
  RegisterCompareOps(ops_);
  RegisterIndexingOps(ops_);
  RegisterDataDependentOps(ops_);
  RegisterSortOps(ops_);
  RegisterDecompositionOps(ops_);
  RegisterNormOps(ops_);
  RegisterLossOps(ops_);
  RegisterConvOps(ops_);
  RegisterJoinOps(ops_);
  RegisterEinsumOps(ops_);
  RegisterPadOps(ops_);
  RegisterPoolOps(ops_);
  RegisterUpsampleOps(ops_);
  RegisterGridSampleOps(ops_);
  RegisterRandomOps(ops_);
  for (OpDef& op : ops_) {
    // Inputs that may come as numbers are also listed as (optional) scalar attributes.
    for (const std::string& name : op.scalar_inputs) {
      op.attrs.push_back(Opt(name, AttrType::kScalar, "the tensor input",
                             "a number (or None) in place of the tensor input '" + name + "'"));
    }
  }
  for (size_t i = 0; i < ops_.size(); ++i) index_[ops_[i].name] = i;
}

const OpRegistry& OpRegistry::Global() {
  static const OpRegistry* registry = new OpRegistry();
  return *registry;
}

const OpDef* OpRegistry::Find(absl::string_view name) const {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : &ops_[it->second];
}

absl::StatusOr<DType> DTypeFromWire(int64_t value, absl::string_view op) {
  if (value < 1 || value > kNumDTypes || !IsValidDType(static_cast<int>(value - 1))) {
    return TypeError(op, absl::StrCat("invalid dtype ", value));
  }
  return static_cast<DType>(value - 1);
}

namespace {

absl::StatusOr<AttrValue> TypeWireAttr(const OpDef& op, const AttrSpec& spec, const WireAttr& v) {
  using Kind = WireAttr::Kind;
  const auto wrong = [&](absl::string_view expected) {
    return TypeError(op.name, absl::StrCat("argument '", spec.name, "' must be ", expected));
  };
  if (v.kind == Kind::kNone) return AttrValue(None{});
  switch (spec.type) {
    case AttrType::kInt:
      if (v.kind == Kind::kInt) return AttrValue(v.i);
      return wrong("an int");
    case AttrType::kIntList:
      if (v.kind == Kind::kInts) return AttrValue(v.ints);
      return wrong("a list of ints");
    case AttrType::kIntOrIntList:
      if (v.kind == Kind::kInt) return AttrValue(v.i);
      if (v.kind == Kind::kInts) return AttrValue(v.ints);
      return wrong("an int or a list of ints");
    case AttrType::kBool:
      if (v.kind == Kind::kBool) return AttrValue(v.b);
      return wrong("a bool");
    case AttrType::kScalar:
      if (v.kind == Kind::kInt) return AttrValue(Scalar(v.i));
      if (v.kind == Kind::kFloat) return AttrValue(Scalar(v.f));
      if (v.kind == Kind::kBool) return AttrValue(Scalar(v.b));
      return wrong("a number");
    case AttrType::kDType: {
      if (v.kind != Kind::kDType) return wrong("a dtype");
      TENSORD_ASSIGN_OR_RETURN(DType d, DTypeFromWire(v.i, op.name));
      return AttrValue(d);
    }
    case AttrType::kDevice: {
      if (v.kind != Kind::kDevice) return wrong("a device");
      TENSORD_ASSIGN_OR_RETURN(Device d, ParseDevice(v.device));
      return AttrValue(d);
    }
    case AttrType::kIndex:
      if (v.kind == Kind::kIndex) return AttrValue(v.index);
      return wrong("an index of ints, slices, None and Ellipsis");
    case AttrType::kString:
      if (v.kind == Kind::kText) return AttrValue(v.text);
      return wrong("a string");
  }
  return wrong("a value");
}

}  // namespace

absl::StatusOr<Attrs> AttrsFromWire(const OpDef& op,
                                    absl::Span<const std::pair<std::string, WireAttr>> attrs) {
  Attrs out;
  for (const auto& [name, value] : attrs) {
    const AttrSpec* spec = nullptr;
    for (const AttrSpec& s : op.attrs) {
      if (s.name == name) spec = &s;
    }
    if (spec == nullptr) {
      return TypeError(op.name, absl::StrCat("got an unexpected keyword argument '", name, "'"));
    }
    TENSORD_ASSIGN_OR_RETURN(AttrValue v, TypeWireAttr(op, *spec, value));
    out.Set(name, std::move(v));
  }
  return out;
}

const std::string& RegistryFingerprint() {
  static const std::string* fingerprint = [] {
    // FNV-1a over a canonical text of the registry.
    uint64_t h = 1469598103934665603ull;
    const auto mix = [&h](absl::string_view text) {
      for (unsigned char c : text) {
        h ^= c;
        h *= 1099511628211ull;
      }
      h ^= 0xff;  // a separator no text holds
      h *= 1099511628211ull;
    };
    for (const OpDef& op : OpRegistry::Global().ops()) {
      mix(op.name);
      mix(OpKindName(op.kind));
      for (const std::string& input : op.inputs) mix(input);
      for (const AttrSpec& a : op.attrs) {
        mix(a.name);
        mix(AttrTypeName(a.type));
        mix(a.required ? "required" : a.default_value);
      }
      for (const std::string& s : op.scalar_inputs) mix(s);
      for (const std::string& s : op.optional_inputs) mix(s);
      mix(op.multi_output ? "multi" : "single");
      mix(op.variadic ? "variadic" : "fixed");
      mix(op.returns_nothing ? "nothing" : "outputs");
      mix(OutputFormatName(op.output_format));
      for (const std::string& s : op.output_format_modes) mix(s);
    }
    return new std::string(absl::StrCat(absl::Hex(h, absl::kZeroPad16)));
  }();
  return *fingerprint;
}

const char* OutputFormatName(OutputFormat format) {
  switch (format) {
    case OutputFormat::kAsPlanned: return "as_planned";
    case OutputFormat::kChannelsLastLikeInput: return "channels_last_like_input";
    case OutputFormat::kLikeInput: return "like_input";
    case OutputFormat::kLikeInputInModes: return "like_input_in_modes";
    case OutputFormat::kChannelsLastLikeInputOrWeight: return "channels_last_like_input_or_weight";
    case OutputFormat::kLikeAllInputs: return "like_all_inputs";
  }
  return "?";
}

namespace {

MemoryFormat Suggested(const Tensor& t) {
  return t.defined() ? SuggestMemoryFormat(t.sizes(), t.strides()) : MemoryFormat::kContiguous;
}

// The memory format op's rule gives a call with these inputs.
absl::StatusOr<MemoryFormat> CallOutputFormat(const OpDef& op, absl::Span<const Tensor> inputs,
                                              AttrReader& attrs) {
  const MemoryFormat first = inputs.empty() ? MemoryFormat::kContiguous : Suggested(inputs[0]);
  switch (op.output_format) {
    case OutputFormat::kAsPlanned:
      return MemoryFormat::kContiguous;
    case OutputFormat::kChannelsLastLikeInput:
      return first == MemoryFormat::kChannelsLast ? first : MemoryFormat::kContiguous;
    case OutputFormat::kLikeInput:
      return first;
    case OutputFormat::kLikeInputInModes: {
      std::string dflt;
      for (const AttrSpec& spec : op.attrs) {
        if (spec.name == "mode") dflt = spec.default_value;
      }
      TENSORD_ASSIGN_OR_RETURN(const std::string mode, attrs.String("mode", dflt));
      const auto& modes = op.output_format_modes;
      return std::find(modes.begin(), modes.end(), mode) != modes.end()
                 ? first
                 : MemoryFormat::kContiguous;
    }
    case OutputFormat::kChannelsLastLikeInputOrWeight:
      return first == MemoryFormat::kChannelsLast ||
                     (inputs.size() > 1 && Suggested(inputs[1]) == MemoryFormat::kChannelsLast)
                 ? MemoryFormat::kChannelsLast
                 : MemoryFormat::kContiguous;
    case OutputFormat::kLikeAllInputs: {
      // torch's cat_compute_output_memory_format: contiguous unless every input suggests the
      // same other format.
      if (inputs.empty()) return MemoryFormat::kContiguous;
      for (const Tensor& t : inputs) {
        if (Suggested(t) != first) return MemoryFormat::kContiguous;
      }
      return first;
    }
  }
  return MemoryFormat::kContiguous;
}

// `plan` with every output of the format's rank that is not laid out in `format` replaced by a
// copy that is (a step after the op's own kernel).
absl::StatusOr<PlannedOp> LayOutOutputs(PlannedOp plan, absl::Span<const Tensor> inputs,
                                        MemoryFormat format) {
  if (format == MemoryFormat::kContiguous) return plan;
  const int64_t rank = format == MemoryFormat::kChannelsLast ? 4 : 5;
  const auto needs_copy = [&](const Tensor& t) {
    if (t.dim() != rank) return false;
    const DimVector want = MemoryFormatStrides(t.sizes(), format);
    return !std::equal(want.begin(), want.end(), t.strides().begin(), t.strides().end());
  };
  if (std::none_of(plan.outputs.begin(), plan.outputs.end(), needs_copy)) return plan;
  Composition c(inputs);
  std::vector<Tensor> outputs = c.Add(std::move(plan));
  for (Tensor& out : outputs) {
    if (!needs_copy(out)) continue;
    const TensorMeta meta(out.dtype(), out.sizes(), MemoryFormatStrides(out.sizes(), format), 0);
    TENSORD_ASSIGN_OR_RETURN(Tensor laid_out, AllocateTensor("memory format", meta,
                                                             out.device()));
    TENSORD_ASSIGN_OR_RETURN(PlannedOp copy, PlanCopyInto(laid_out, out));
    c.Add(std::move(copy));
    out = std::move(laid_out);
  }
  return std::move(c).Finish(std::move(outputs));
}

absl::StatusOr<PlannedOp> PlanOpImpl(absl::string_view name, absl::Span<const Tensor> inputs,
                                     const Attrs& attrs, bool lay_out) {
  const OpDef* op = OpRegistry::Global().Find(name);
  if (op == nullptr) return absl::NotFoundError(absl::StrCat("unknown op '", name, "'"));
  for (const auto& [attr_name, value] : attrs.values()) {
    const AttrSpec* spec = nullptr;
    for (const AttrSpec& s : op->attrs) {
      if (s.name == attr_name) spec = &s;
    }
    if (spec == nullptr) {
      return TypeError(op->name, absl::StrCat("got an unexpected keyword argument '", attr_name,
                                              "'"));
    }
  }
  for (const AttrSpec& spec : op->attrs) {
    if (spec.required && attrs.Find(spec.name) == nullptr) {
      return TypeError(op->name, absl::StrCat("missing required argument '", spec.name, "'"));
    }
  }
  // Inputs given as numbers (or None) are wrapped here; the others come in order.
  std::vector<Tensor> full;
  absl::Span<const Tensor> planned = inputs;
  size_t given_as_attr = 0;
  for (const std::string& s : op->scalar_inputs) given_as_attr += attrs.values().contains(s);
  if (given_as_attr > 0) {
    if (inputs.size() + given_as_attr != op->inputs.size()) {
      return TypeError(op->name, absl::StrCat("takes ", op->inputs.size(), " inputs (",
                                              absl::StrJoin(op->inputs, ", "), ") but ",
                                              inputs.size(), " tensors and ", given_as_attr,
                                              " numbers were given"));
    }
    size_t next = 0;
    for (const std::string& input : op->inputs) {
      auto it = attrs.values().find(input);
      const bool scalar_ok = std::find(op->scalar_inputs.begin(), op->scalar_inputs.end(),
                                       input) != op->scalar_inputs.end();
      if (scalar_ok && it != attrs.values().end()) {
        if (std::holds_alternative<None>(it->second)) {
          if (std::find(op->optional_inputs.begin(), op->optional_inputs.end(), input) ==
              op->optional_inputs.end()) {
            return TypeError(op->name, absl::StrCat("argument '", input,
                                                    "' must be Tensor or Number, not NoneType"));
          }
          full.emplace_back();  // an absent optional input
          continue;
        }
        AttrReader reader(*op, attrs);
        TENSORD_ASSIGN_OR_RETURN(Scalar value, reader.GetScalar(input));
        TENSORD_ASSIGN_OR_RETURN(Tensor wrapped, WrapNumber(value));
        full.push_back(std::move(wrapped));
      } else {
        full.push_back(inputs[next++]);
      }
    }
    planned = full;
  } else if (op->variadic) {
    if (inputs.size() + 1 < op->inputs.size()) {
      return TypeError(op->name, absl::StrCat("takes at least ", op->inputs.size() - 1,
                                              " tensor input(s) before the list '",
                                              op->inputs.back(), "' but ", inputs.size(),
                                              " were given"));
    }
  } else if (inputs.size() != op->inputs.size()) {
    return TypeError(op->name, absl::StrCat("takes ", op->inputs.size(), " tensor input(s) (",
                                            absl::StrJoin(op->inputs, ", "), ") but ",
                                            inputs.size(), " were given"));
  }
  for (size_t i = 0; i < planned.size(); ++i) {
    if (i + 1 >= op->inputs.size() && op->variadic) {
      if (!planned[i].defined()) {
        return TypeError(op->name, absl::StrCat("expected Tensor as element ",
                                                i + 1 - op->inputs.size(), " in argument '",
                                                op->inputs.back(), "', but got NoneType"));
      }
      continue;
    }
    if (!planned[i].defined() &&
        std::find(op->optional_inputs.begin(), op->optional_inputs.end(), op->inputs[i]) ==
            op->optional_inputs.end()) {
      return TypeError(op->name, absl::StrCat("argument '", op->inputs[i],
                                              "' must be Tensor, not NoneType"));
    }
  }
  AttrReader reader(*op, attrs);
  absl::StatusOr<PlannedOp> plan = op->plan(planned, reader);
  if (!plan.ok()) return NameOp(op->name, plan.status());
  if (op->output_format == OutputFormat::kAsPlanned || !lay_out) return plan;
  TENSORD_ASSIGN_OR_RETURN(const MemoryFormat format, CallOutputFormat(*op, planned, reader));
  plan = LayOutOutputs(std::move(*plan), planned, format);
  if (!plan.ok()) return NameOp(op->name, plan.status());
  return plan;
}

}  // namespace

absl::StatusOr<PlannedOp> PlanOp(absl::string_view name, absl::Span<const Tensor> inputs,
                                 const Attrs& attrs) {
  return PlanOpImpl(name, inputs, attrs, /*lay_out=*/true);
}

absl::StatusOr<PlannedOp> PlanStep(absl::string_view name, absl::Span<const Tensor> inputs,
                                   const Attrs& attrs) {
  return PlanOpImpl(name, inputs, attrs, /*lay_out=*/false);
}

}  // namespace tensord::engine
