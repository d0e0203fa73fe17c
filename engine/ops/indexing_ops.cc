// Indexing ops: index_select, gather, scatter/scatter_add, masked_fill, and the data-dependent
// masked_select and nonzero (which wait for their inputs' pending writes first, as torch
// synchronises). Indices out of range found while a kernel runs fail it (poisoning its outputs).
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "engine/ops/copy_ops.h"
#include "engine/cpu/copy_kernel.h"
#include "engine/kernels/convert.h"
#include "engine/cpu/map.h"
#include "engine/ops/elementwise.h"
#include "engine/core/errors.h"
#include "engine/ops/factory_ops.h"
#include "engine/ops/op_registry_internal.h"
#include "engine/tensor/shape_util.h"
#include "engine/core/status_macros.h"
#include "engine/runtime/thread_pool.h"
#include "engine/views/view_ops.h"

namespace tensord::engine {
namespace {

absl::Status CheckCpu(absl::string_view op, std::initializer_list<const Tensor*> ts) {
  for (const Tensor* t : ts) {
    if (!t->device().is_cpu()) {
      return ComputeBackendMissing(op);
    }
  }
  return absl::OkStatus();
}

int64_t IndexAt(const Tensor& index, int64_t elem_offset) {
  const char* p = index.data() + elem_offset * index.itemsize();
  if (index.dtype() == DType::kInt32) return *reinterpret_cast<const int32_t*>(p);
  return *reinterpret_cast<const int64_t*>(p);
}

// Element offset (in elements) of the multi-index `idx` through `t`'s strides.
inline int64_t OffsetOf(const Tensor& t, const int64_t* idx) {
  int64_t off = 0;
  for (int64_t d = 0; d < t.dim(); ++d) off += idx[d] * t.stride(d);
  return off;
}

// Calls fn(multi_index) for every index of `sizes`, in row-major order.
template <typename Fn>
void ForEachIndex(IntList sizes, Fn&& fn) {
  const int64_t nd = static_cast<int64_t>(sizes.size());
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  if (n == 0) return;
  int64_t idx[kMaxRank] = {};
  for (int64_t i = 0; i < n; ++i) {
    if (!fn(static_cast<const int64_t*>(idx))) return;
    for (int64_t d = nd - 1; d >= 0; --d) {
      if (++idx[d] < sizes[d]) break;
      idx[d] = 0;
    }
  }
}

// Runs `fn` once every write queued so far to the tensors' storages is done (a host read, as a
// download's): what data-dependent ops plan with. A poisoned input fails it with its cause.
absl::Status ReadNow(absl::Span<const Tensor> tensors, absl::FunctionRef<absl::Status()> fn) {
  std::vector<std::pair<Storage*, uint64_t>> tickets;
  for (const Tensor& t : tensors) {
    Storage* s = t.storage().get();
    const uint64_t ticket = s->BeginRead();
    tickets.emplace_back(s, ticket);
    absl::Notification ready;
    s->WhenReadable(ticket, [&ready] { ready.Notify(); });
    ready.WaitForNotification();
  }
  absl::Status status;
  for (const Tensor& t : tensors) {
    if (auto poison = t.storage()->poison()) {
      status = absl::Status(poison->code(), absl::StrCat("input failed earlier: ",
                                                         poison->message()));
      break;
    }
  }
  if (status.ok()) status = fn();
  for (auto& [s, ticket] : tickets) s->EndRead(ticket);
  return status;
}

absl::Status CheckIndexDtype(absl::string_view op, const Tensor& index, bool allow_int32) {
  if (index.dtype() == DType::kInt64 || (allow_int32 && index.dtype() == DType::kInt32)) {
    return absl::OkStatus();
  }
  return RuntimeError(op, absl::StrCat(op, "(): Expected dtype int", allow_int32 ? "32/int" : "",
                                       "64 for index"));
}

absl::StatusOr<PlannedOp> PlanIndexSelect(const Tensor& self, int64_t dim, const Tensor& index) {
  constexpr absl::string_view op = "index_select";
  TENSORD_RETURN_IF_ERROR(CheckCpu(op, {&self, &index}));
  TENSORD_RETURN_IF_ERROR(CheckIndexDtype(op, index, true));
  if (index.dim() > 1) {
    return IndexError(op, "index_select(): Index is supposed to be a vector");
  }
  TENSORD_ASSIGN_OR_RETURN(int64_t d, WrapDim(op, dim, self.dim()));
  DimVector sizes(self.sizes().begin(), self.sizes().end());
  if (self.dim() > 0) sizes[d] = index.numel();
  TENSORD_ASSIGN_OR_RETURN(Tensor out, AllocateTensor(op, TensorMeta::Contiguous(self.dtype(), sizes)));
  PlannedOp plan;
  plan.outputs.push_back(out);
  plan.reads = {self.storage(), index.storage()};
  plan.writes = {out.storage()};
  plan.kernel = [self, index, out, d]() -> absl::Status {
    const int64_t n = index.numel();
    const int64_t limit = self.dim() == 0 ? 1 : self.size(d);
    for (int64_t i = 0; i < n; ++i) {
      const int64_t k = IndexAt(index, index.dim() == 0 ? 0 : i * index.stride(0));
      if (k < 0) {  // torch 1.13's CPU kernel takes no negative indices
        return RuntimeError("index_select", absl::StrCat("INDICES element is out of DATA bounds, "
                                                         "id=", k, " axis_dim=", limit));
      }
      if (k >= limit) return IndexError("index_select", "index out of range in self");
    }
    if (self.dim() == 0) {
      std::memcpy(out.data(), self.data(), static_cast<size_t>(self.itemsize() * n));
      return absl::OkStatus();
    }
    for (int64_t i = 0; i < n; ++i) {
      const int64_t k = IndexAt(index, index.dim() == 0 ? 0 : i * index.stride(0));
      TENSORD_ASSIGN_OR_RETURN(Tensor src, Select(self, d, k));
      TENSORD_ASSIGN_OR_RETURN(Tensor dst, Select(out, d, i));
      cpu::CopyStrided(src.sizes(), StridedRef::Of(dst), StridedRef::Of(src));
    }
    return absl::OkStatus();
  };
  return plan;
}

// gather / scatter share their shape rules.
absl::Status CheckGatherShapes(absl::string_view op, const Tensor& self, int64_t d,
                               const Tensor& index, const Tensor* src) {
  // Ranks first (a 0-d tensor counts as 1-d, as torch's ensure_nonempty_dim), so that no size
  // below is read past a tensor's rank.
  auto nonempty_dim = [](const Tensor& t) { return std::max<int64_t>(t.dim(), 1); };
  if (nonempty_dim(index) != nonempty_dim(self)) {
    return RuntimeError(op, "Index tensor must have the same number of dimensions as " +
                                std::string(src ? "self tensor" : "input tensor"));
  }
  if (src != nullptr && nonempty_dim(index) != nonempty_dim(*src)) {
    return RuntimeError(op, "Index tensor must have the same number of dimensions as src tensor");
  }
  auto nonempty_size = [](const Tensor& t, int64_t k) { return t.dim() == 0 ? 1 : t.size(k); };
  for (int64_t k = 0; k < index.dim() && self.dim() > 0; ++k) {
    if (k != d && index.size(k) > self.size(k)) {
      return RuntimeError(op, absl::StrCat("Size does not match at dimension ", k,
                                           " expected index ", FormatList(index.sizes()),
                                           " to be smaller than self ", FormatList(self.sizes()),
                                           " apart from dimension ", d));
    }
    if (src && index.size(k) > nonempty_size(*src, k)) {
      return RuntimeError(op, absl::StrCat("Expected index ", FormatList(index.sizes()),
                                           " to be smaller than self ", FormatList(self.sizes()),
                                           " apart from dimension ", d,
                                           " and to be smaller size than src ",
                                           FormatList(src->sizes())));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<PlannedOp> PlanGather(const Tensor& self, int64_t dim, const Tensor& index) {
  constexpr absl::string_view op = "gather";
  TENSORD_RETURN_IF_ERROR(CheckCpu(op, {&self, &index}));
  if (index.dtype() != DType::kInt64) {
    return RuntimeError(op, "gather(): Expected dtype int64 for index");
  }
  TENSORD_ASSIGN_OR_RETURN(int64_t d, WrapDim(op, dim, self.dim()));
  TENSORD_RETURN_IF_ERROR(CheckGatherShapes(op, self, d, index, nullptr));
  TENSORD_ASSIGN_OR_RETURN(Tensor out,
                           AllocateTensor(op, TensorMeta::Contiguous(self.dtype(), index.sizes())));
  PlannedOp plan;
  plan.outputs.push_back(out);
  plan.reads = {self.storage(), index.storage()};
  plan.writes = {out.storage()};
  plan.kernel = [self, index, out, d]() -> absl::Status {
    const int64_t limit = self.dim() == 0 ? 1 : self.size(d);
    const int64_t w = self.itemsize();
    char* dst = out.data();
    int64_t i = 0;
    absl::Status status;
    ForEachIndex(index.sizes(), [&](const int64_t* idx) {
      int64_t k = IndexAt(index, OffsetOf(index, idx));
      if (k < -limit || k >= limit) {
        status = RuntimeError("gather", absl::StrCat("index ", k, " is out of bounds for "
                                                     "dimension ", d, " with size ", limit));
        return false;
      }
      if (k < 0) k += limit;
      int64_t off = 0;
      for (int64_t x = 0; x < self.dim(); ++x) off += (x == d ? k : idx[x]) * self.stride(x);
      std::memcpy(dst + (i++) * w, self.data() + off * w, static_cast<size_t>(w));
      return true;
    });
    return status;
  };
  return plan;
}

// scatter_ / scatter_add_ into `self` (in place); src is a tensor or a 0-d value.
absl::StatusOr<PlannedOp> PlanScatterInto(absl::string_view op, const Tensor& self, int64_t dim,
                                          const Tensor& index, const Tensor& src, bool add) {
  TENSORD_RETURN_IF_ERROR(CheckCpu(op, {&self, &index}));
  if (index.dtype() != DType::kInt64) {
    return RuntimeError(op, absl::StrCat(op, "(): Expected dtype int64 for index"));
  }
  const bool value_form = src.is_wrapped_number();
  if (!value_form && src.dtype() != self.dtype()) {
    return RuntimeError(op, absl::StrCat(op, "(): Expected self.dtype to be equal to src.dtype"));
  }
  TENSORD_ASSIGN_OR_RETURN(int64_t d, WrapDim(op, dim, self.dim()));
  TENSORD_RETURN_IF_ERROR(CheckGatherShapes(op, self, d, index, value_form ? nullptr : &src));
  Tensor value = src;
  if (value_form) {
    TENSORD_ASSIGN_OR_RETURN(value, AllocateTensor(op, TensorMeta::Contiguous(self.dtype(), {})));
    cpu::CopyStrided({}, StridedRef::Of(value), StridedRef::Of(src));
  }
  PlannedOp plan;
  plan.outputs.push_back(self);
  plan.reads = {index.storage(), value.storage()};
  plan.writes = {self.storage()};
  const std::string name(op);
  plan.kernel = [self, index, value, value_form, d, add, name]() -> absl::Status {
    const int64_t limit = self.dim() == 0 ? 1 : self.size(d);
    // Every index is checked before anything is written.
    absl::Status status;
    ForEachIndex(index.sizes(), [&](const int64_t* idx) {
      const int64_t k = IndexAt(index, OffsetOf(index, idx));
      if (k < -limit || k >= limit) {
        status = RuntimeError(name, absl::StrCat("index ", k, " is out of bounds for dimension ",
                                                 d, " with size ", limit));
        return false;
      }
      return true;
    });
    TENSORD_RETURN_IF_ERROR(status);
    DispatchDType(self.dtype(), [&](auto t) {
      using T = decltype(t);
      using C = Calc<T>;
      ForEachIndex(index.sizes(), [&](const int64_t* idx) {
        int64_t k = IndexAt(index, OffsetOf(index, idx));
        if (k < 0) k += limit;
        int64_t off = 0;
        for (int64_t x = 0; x < self.dim(); ++x) off += (x == d ? k : idx[x]) * self.stride(x);
        T* dst = self.data_as<T>() + off;
        const T v = value_form ? *value.data_as<T>() : value.data_as<T>()[OffsetOf(value, idx)];
        if (add) {
          *dst = Convert<T>(static_cast<C>(*dst) + static_cast<C>(v));
        } else {
          *dst = v;
        }
        return true;
      });
    });
    return absl::OkStatus();
  };
  return plan;
}

absl::StatusOr<PlannedOp> PlanScatter(absl::string_view op, const Tensor& self, int64_t dim,
                                      const Tensor& index, const Tensor& src, bool add,
                                      bool in_place) {
  if (in_place) return PlanScatterInto(op, self, dim, index, src, add);
  // Out of place: a clone (self's layout), then the in-place scatter on it.
  TENSORD_ASSIGN_OR_RETURN(PlannedOp clone, PlanClone(self));
  const Tensor copy = clone.outputs[0];
  TENSORD_ASSIGN_OR_RETURN(PlannedOp scatter, PlanScatterInto(op, copy, dim, index, src, add));
  PlannedOp plan;
  plan.outputs.push_back(copy);
  plan.reads = {self.storage(), index.storage(), src.storage()};
  plan.writes = {copy.storage()};
  plan.kernel = [c = std::move(clone.kernel), s = std::move(scatter.kernel)]() mutable -> absl::Status {
    if (c) TENSORD_RETURN_IF_ERROR(c());
    return s();
  };
  return plan;
}

template <typename T>
bool Nonzero(const char* p) {
  return static_cast<Calc<T>>(*reinterpret_cast<const T*>(p)) != Calc<T>(0);
}

bool IsNonzero(DType d, const char* p) {
  return DispatchDType(d, [&](auto t) { return Nonzero<decltype(t)>(p); });
}

absl::StatusOr<PlannedOp> PlanNonzero(const Tensor& self) {
  constexpr absl::string_view op = "nonzero";
  TENSORD_RETURN_IF_ERROR(CheckCpu(op, {&self}));
  PlannedOp plan;
  TENSORD_RETURN_IF_ERROR(ReadNow({self}, [&]() -> absl::Status {
    const int64_t nd = self.dim();
    const auto nonzero_at = [&](const int64_t* idx) {
      return IsNonzero(self.dtype(), self.data() + OffsetOf(self, idx) * self.itemsize());
    };
    // Count first, so the result is allocated (and charged to the session) before it is filled.
    int64_t count = 0;
    ForEachIndex(self.sizes(), [&](const int64_t* idx) {
      count += nonzero_at(idx);
      return true;
    });
    // torch's CPU result is (count, dim) with strides (1, count): a transposed (dim, count).
    TENSORD_ASSIGN_OR_RETURN(Tensor t,
                             AllocateTensor(op, TensorMeta::Contiguous(DType::kInt64, {nd, count})));
    int64_t* o = t.data_as<int64_t>();
    int64_t i = 0;
    ForEachIndex(self.sizes(), [&](const int64_t* idx) {
      if (nonzero_at(idx)) {
        for (int64_t d = 0; d < nd; ++d) o[d * count + i] = idx[d];
        ++i;
      }
      return true;
    });
    TENSORD_ASSIGN_OR_RETURN(Tensor out, Transpose(t, 0, 1));
    plan.outputs.push_back(out);
    return absl::OkStatus();
  }));
  return plan;
}

absl::StatusOr<PlannedOp> PlanMaskedSelect(const Tensor& self, const Tensor& mask) {
  constexpr absl::string_view op = "masked_select";
  TENSORD_RETURN_IF_ERROR(CheckCpu(op, {&self, &mask}));
  if (mask.dtype() != DType::kBool) {
    return RuntimeError(op, absl::StrCat("masked_select: expected BoolTensor for mask"));
  }
  TENSORD_ASSIGN_OR_RETURN(DimVector shape, BroadcastShapes(op, self.sizes(), mask.sizes()));
  TENSORD_ASSIGN_OR_RETURN(Tensor s, Expand(self, shape));
  TENSORD_ASSIGN_OR_RETURN(Tensor m, Expand(mask, shape));
  PlannedOp plan;
  TENSORD_RETURN_IF_ERROR(ReadNow({self, mask}, [&]() -> absl::Status {
    int64_t count = 0;
    ForEachIndex(shape, [&](const int64_t* idx) {
      count += *reinterpret_cast<const bool*>(m.data() + OffsetOf(m, idx));
      return true;
    });
    TENSORD_ASSIGN_OR_RETURN(Tensor out,
                             AllocateTensor(op, TensorMeta::Contiguous(self.dtype(), {count})));
    const int64_t w = self.itemsize();
    int64_t i = 0;
    ForEachIndex(shape, [&](const int64_t* idx) {
      if (*reinterpret_cast<const bool*>(m.data() + OffsetOf(m, idx))) {
        std::memcpy(out.data() + (i++) * w, s.data() + OffsetOf(s, idx) * w, static_cast<size_t>(w));
      }
      return true;
    });
    plan.outputs.push_back(out);
    return absl::OkStatus();
  }));
  return plan;
}

}  // namespace

void RegisterIndexingOps(std::vector<OpDef>& ops) {
  ops.push_back({"index_select", OpKind::kCompute, {"self", "index"},
                 {Req("dim", AttrType::kInt)},
                 "The slices of self along dim at the (1-d, int64/int32) index.", false,
                 [](Inputs in, AttrReader& a) -> absl::StatusOr<PlannedOp> {
                   TENSORD_ASSIGN_OR_RETURN(int64_t dim, a.Int("dim"));
                   return PlanIndexSelect(in[0], dim, in[1]);
                 }});
  ops.push_back({"gather", OpKind::kCompute, {"self", "index"}, {Req("dim", AttrType::kInt)},
                 "out[i][j] = self[index[i][j]][j] (dim 0), shaped as index.", false,
                 [](Inputs in, AttrReader& a) -> absl::StatusOr<PlannedOp> {
                   TENSORD_ASSIGN_OR_RETURN(int64_t dim, a.Int("dim"));
                   return PlanGather(in[0], dim, in[1]);
                 }});
  for (const char* n : {"scatter", "scatter_", "scatter_add", "scatter_add_"}) {
    const std::string name = n;
    const bool in_place = name.back() == '_';
    const bool add = name.find("add") != std::string::npos;
    ops.push_back({name, in_place ? OpKind::kInPlace : OpKind::kCompute,
                   {"self", "index", "src"}, {Req("dim", AttrType::kInt)},
                   add ? "self[index[i][j]][j] += src[i][j] (dim 0)."
                       : "self[index[i][j]][j] = src[i][j] (dim 0); src may be a number.",
                   false,
                   [name, in_place, add](Inputs in, AttrReader& a) -> absl::StatusOr<PlannedOp> {
                     TENSORD_ASSIGN_OR_RETURN(int64_t dim, a.Int("dim"));
                     return PlanScatter(name, in[0], dim, in[1], in[2], add, in_place);
                   },
                   false, add ? std::vector<std::string>{} : std::vector<std::string>{"src"}});
  }
  for (const char* n : {"masked_fill", "masked_fill_"}) {
    const std::string name = n;
    const bool in_place = name.back() == '_';
    ops.push_back({name, in_place ? OpKind::kInPlace : OpKind::kCompute, {"self", "mask", "value"},
                   {}, "value where mask (bool, broadcast) is true, else self.", false,
                   [name, in_place](Inputs in, AttrReader&) -> absl::StatusOr<PlannedOp> {
                     return PlanMaskedFill(name, in[0], in[1], in[2], in_place ? &in[0] : nullptr);
                   },
                   false, {"value"}});
  }
  ops.push_back({"masked_select", OpKind::kDataDependent, {"self", "mask"}, {},
                 "The elements of self where mask is true, as a 1-d tensor. Data-dependent: "
                 "waits for its inputs first.",
                 false, [](Inputs in, AttrReader&) { return PlanMaskedSelect(in[0], in[1]); }});
  ops.push_back({"nonzero", OpKind::kDataDependent, {"self"}, {},
                 "Indices of the nonzero elements, shape (count, dim). Data-dependent: waits for "
                 "its input first.",
                 false, [](Inputs in, AttrReader&) { return PlanNonzero(in[0]); }});
}

}  // namespace tensord::engine
