// Matrices built from their parts or reduced to them: trace, diag, diagflat, diag_embed,
// block_diag, kron and cross; triangles (tril, triu) and their positions (tril_indices,
// triu_indices); roll. Each is a composition (composition.h) of views, fills, copies and
// elementwise ops, so it runs on every device; dtype rules and errors are torch 1.13's.
#include <algorithm>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/core/checked_math.h"
#include "engine/core/errors.h"
#include "engine/core/status_macros.h"
#include "engine/ops/composition.h"
#include "engine/ops/copy_ops.h"
#include "engine/ops/elementwise.h"
#include "engine/ops/factory_ops.h"
#include "engine/ops/op_registry_internal.h"
#include "engine/ops/type_promotion.h"
#include "engine/tensor/shape_util.h"
#include "engine/views/view_ops.h"

namespace tensord::engine {
namespace {

// torch's CPU kernels for trace and cross take neither bool nor float16, trace not bfloat16
// either ("\"<kernel>\" not implemented for 'Half'").
absl::Status CheckNotReduced(absl::string_view op, absl::string_view kernel, DType dtype,
                             const Device& device, bool bfloat16) {
  const bool missing = dtype == DType::kBool ||
                       (device.is_cpu() && (dtype == DType::kFloat16 ||
                                            (dtype == DType::kBFloat16 && !bfloat16)));
  return missing ? KernelNotImplemented(op, kernel, dtype) : absl::OkStatus();
}

absl::Status CopyStep(Composition& c, const Tensor& into, const Tensor& src) {
  TENSORD_ASSIGN_OR_RETURN(PlannedOp copy, PlanCopyInto(into, src));
  c.Add(std::move(copy));
  return absl::OkStatus();
}

absl::StatusOr<PlannedOp> PlanTrace(const Tensor& self) {
  constexpr absl::string_view op = "trace";
  if (self.dim() != 2) {
    return RuntimeError(op, absl::StrCat("trace: expected a matrix, but got tensor with dim ",
                                         self.dim()));
  }
  TENSORD_RETURN_IF_ERROR(CheckNotReduced(op, "trace", self.dtype(), self.device(), false));
  Composition c({self});
  TENSORD_ASSIGN_OR_RETURN(Tensor diagonal, Diagonal(self, 0, 0, 1));
  TENSORD_ASSIGN_OR_RETURN(Tensor sum, c.Op1("sum", {diagonal}));
  return std::move(c).Finish({sum});
}

// diag_embed: `self`'s last dim written on the `offset` diagonal of (dim1, dim2) of a new zero
// tensor with one more dim.
absl::StatusOr<PlannedOp> PlanDiagEmbed(absl::string_view op, const Tensor& self, int64_t offset,
                                        int64_t dim1_in, int64_t dim2_in) {
  const int64_t rank = self.dim() + 1;
  TENSORD_ASSIGN_OR_RETURN(const int64_t dim1, WrapDim(op, dim1_in, rank));
  TENSORD_ASSIGN_OR_RETURN(const int64_t dim2, WrapDim(op, dim2_in, rank));
  if (dim1 == dim2) {
    return RuntimeError(op, absl::StrCat("diagonal dimensions cannot be identical ", dim1_in,
                                         ", ", dim2_in));
  }
  const int64_t last = self.dim() == 0 ? 1 : self.size(self.dim() - 1);
  const std::optional<int64_t> n_or =
      offset == std::numeric_limits<int64_t>::min()
          ? std::nullopt
          : CheckedAdd(last, offset < 0 ? -offset : offset);
  if (!n_or) return RuntimeError(op, absl::StrCat("offset ", offset, " is too large"));
  const int64_t n = *n_or;
  DimVector shape;
  int64_t batch = 0;
  for (int64_t d = 0; d < rank; ++d) {
    if (d == dim1 || d == dim2) {
      shape.push_back(n);
    } else {
      shape.push_back(self.size(batch++));
    }
  }
  TENSORD_RETURN_IF_ERROR(CheckShape(op, shape).status());
  Composition c({self});
  TENSORD_ASSIGN_OR_RETURN(Tensor out, c.Full(shape, Scalar(int64_t{0}), self.dtype(), self.device()));
  TENSORD_ASSIGN_OR_RETURN(Tensor diagonal, Diagonal(out, offset, dim1, dim2));
  TENSORD_RETURN_IF_ERROR(CopyStep(c, diagonal, self));
  return std::move(c).Finish({out});
}

// diag: a vector onto the `offset` diagonal of a new square matrix, or a matrix's diagonal as
// a new vector.
absl::StatusOr<PlannedOp> PlanDiag(absl::string_view op, const Tensor& self, int64_t offset) {
  if (self.dim() != 1 && self.dim() != 2) {
    return RuntimeError(op, "matrix or a vector expected");
  }
  if (self.device().is_cpu() && self.dtype() == DType::kFloat16) {
    return KernelNotImplemented(op, "diag", self.dtype());
  }
  if (self.dim() == 1) return PlanDiagEmbed(op, self, offset, 0, 1);
  TENSORD_ASSIGN_OR_RETURN(Tensor diagonal, Diagonal(self, offset, 0, 1));
  return PlanCloneContiguous(diagonal);
}

absl::StatusOr<PlannedOp> PlanBlockDiag(absl::Span<const Tensor> in) {
  constexpr absl::string_view op = "block_diag";
  if (in.empty()) return PlanFull({1, 0}, Scalar(0.0), DefaultFloatDType());
  TENSORD_ASSIGN_OR_RETURN(const Device device, CommonDevice(op, in));
  int64_t rows = 0, cols = 0;
  std::vector<Tensor> blocks;
  for (size_t i = 0; i < in.size(); ++i) {
    const Tensor& t = in[i];
    if (t.dim() > 2) {
      return RuntimeError(op, absl::StrCat("torch.block_diag: Input tensors must have 2 or fewer "
                                           "dimensions. Input ", i, " has ", t.dim(),
                                           " dimensions"));
    }
    Tensor block = t;
    if (t.dim() < 2) {
      TENSORD_ASSIGN_OR_RETURN(block, AsStrided(t, {1, t.numel()}, {0, t.dim() == 0 ? 1 : t.stride(0)},
                                                t.storage_offset()));
    }
    const std::optional<int64_t> r = CheckedAdd(rows, block.size(0));
    const std::optional<int64_t> k = CheckedAdd(cols, block.size(1));
    if (!r || !k) return RuntimeError(op, "the blocks' sizes overflow int64");
    rows = *r;
    cols = *k;
    blocks.push_back(block);
  }
  const DType dtype = ResultType(in);
  Composition c(in);
  TENSORD_ASSIGN_OR_RETURN(Tensor out, c.Full({rows, cols}, Scalar(int64_t{0}), dtype, device));
  int64_t r = 0, col = 0;
  for (const Tensor& block : blocks) {
    TENSORD_ASSIGN_OR_RETURN(Tensor part, Narrow(out, 0, r, block.size(0)));
    TENSORD_ASSIGN_OR_RETURN(part, Narrow(part, 1, col, block.size(1)));
    if (block.numel() > 0) TENSORD_RETURN_IF_ERROR(CopyStep(c, part, block));
    r += block.size(0);
    col += block.size(1);
  }
  return std::move(c).Finish({out});
}

// kron: self viewed as [a0, 1, a1, 1, …] times other as [1, b0, 1, b1, …], the product viewed
// as [a0 b0, a1 b1, …] (views, as torch's: an input its strides cannot view so is an error).
absl::StatusOr<PlannedOp> PlanKron(const Tensor& a, const Tensor& b) {
  constexpr absl::string_view op = "kron";
  const int64_t nd = std::max(a.dim(), b.dim());
  DimVector va, vb, shape;
  for (int64_t i = 0; i < nd; ++i) {
    const int64_t ai = i - (nd - a.dim()), bi = i - (nd - b.dim());
    const int64_t sa = ai >= 0 ? a.size(ai) : 1, sb = bi >= 0 ? b.size(bi) : 1;
    va.insert(va.end(), {sa, 1});
    vb.insert(vb.end(), {1, sb});
    const std::optional<int64_t> size = CheckedMul(sa, sb);
    if (!size) return RuntimeError(op, "the product's sizes overflow int64");
    shape.push_back(*size);
  }
  TENSORD_RETURN_IF_ERROR(CheckShape(op, shape).status());
  TENSORD_ASSIGN_OR_RETURN(Tensor av, View(a, va));
  TENSORD_ASSIGN_OR_RETURN(Tensor bv, View(b, vb));
  Composition c({a, b});
  TENSORD_ASSIGN_OR_RETURN(Tensor product, c.Op1("mul", {av, bv}));
  TENSORD_ASSIGN_OR_RETURN(product, View(product, shape));
  return std::move(c).Finish({product});
}

// cross: along `dim` (torch.cross's default: the first dim of size 3), the three components
// a1 b2 - a2 b1, a2 b0 - a0 b2, a0 b1 - a1 b0 (the others broadcast), stacked.
absl::StatusOr<PlannedOp> PlanCross(const Tensor& a, const Tensor& b,
                                    std::optional<int64_t> dim_in) {
  constexpr absl::string_view op = "cross";
  TENSORD_ASSIGN_OR_RETURN(const Device device, CommonDevice(op, {a, b}));
  if (a.dim() != b.dim()) {
    return RuntimeError(op, "linalg.cross: inputs must have the same number of dimensions.");
  }
  if (a.dtype() != b.dtype()) {
    return RuntimeError(op, absl::StrCat("expected scalar type ", DTypeLegacyName(a.dtype()),
                                         " but found ", DTypeLegacyName(b.dtype())));
  }
  if (a.dim() == 0) {  // torch's errors for 0-d inputs
    if (dim_in.has_value()) return WrapDimNoScalar(op, *dim_in, 0).status();
    return RuntimeError(op, "no dimension of size 3 in input");
  }
  int64_t dim = -1;
  if (dim_in.has_value()) {
    TENSORD_ASSIGN_OR_RETURN(dim, WrapDim(op, *dim_in, a.dim()));
  } else {
    for (int64_t d = 0; d < a.dim() && dim < 0; ++d) {
      if (a.size(d) == 3) dim = d;
    }
    if (dim < 0) return RuntimeError(op, "no dimension of size 3 in input");
  }
  if (a.size(dim) != 3 || b.size(dim) != 3) {
    return RuntimeError(op, absl::StrCat("linalg.cross: inputs dimension ", dim,
                                         " must have length 3. Got ", a.size(dim), " and ",
                                         b.size(dim)));
  }
  TENSORD_RETURN_IF_ERROR(BroadcastShapes(op, a.sizes(), b.sizes()).status());
  TENSORD_RETURN_IF_ERROR(CheckNotReduced(op, "cross", a.dtype(), device, true));
  Composition c({a, b});
  std::vector<Tensor> ca, cb;
  for (int64_t i = 0; i < 3; ++i) {
    TENSORD_ASSIGN_OR_RETURN(Tensor x, Narrow(a, dim, i, 1));
    TENSORD_ASSIGN_OR_RETURN(Tensor y, Narrow(b, dim, i, 1));
    ca.push_back(x);
    cb.push_back(y);
  }
  std::vector<Tensor> parts;
  for (int64_t i = 0; i < 3; ++i) {
    const int64_t j = (i + 1) % 3, k = (i + 2) % 3;
    TENSORD_ASSIGN_OR_RETURN(Tensor p, c.Op1("mul", {ca[j], cb[k]}));
    TENSORD_ASSIGN_OR_RETURN(Tensor q, c.Op1("mul", {ca[k], cb[j]}));
    TENSORD_ASSIGN_OR_RETURN(Tensor part, c.Op1("sub", {p, q}));
    parts.push_back(part);
  }
  Attrs at;
  at.Set("dim", dim);
  TENSORD_ASSIGN_OR_RETURN(Tensor out, c.Op1("cat", parts, at));
  return std::move(c).Finish({out});
}


// Σ_{i < n} clamp(i + a, 0, col), in closed form (n and col non-negative).
__int128 SumOfClamped(__int128 n, __int128 a, __int128 col) {
  const __int128 lo = std::clamp<__int128>(-a, 0, n);       // the first i with i + a >= 0
  const __int128 hi = std::clamp<__int128>(col - a, lo, n);  // the first i with i + a >= col
  const __int128 m = hi - lo;  // the terms strictly inside (0, col): lo + a, …, hi - 1 + a
  return m * (lo + a) + m * (m - 1) / 2 + (n - hi) * col;
}

// torch.tril_indices / triu_indices: the (row, col) pairs on and below (above) the offset-th
// diagonal of a row x col matrix, row by row, as a (2, count) tensor. The count is found in
// closed form and the rows that hold any pair, [r0, r1), on the host (so nothing is sized by
// the matrix, only by the count); on the device, row r0 + j holds the columns
// [first_j, first_j + width_j), and the k-th pair's row is a binary search in the widths'
// running sums. Every number stays within ±(count + col): nothing overflows.
absl::StatusOr<PlannedOp> PlanTriangleIndices(absl::string_view op, bool lower, int64_t row,
                                              int64_t col, int64_t offset, DType dtype,
                                              const Device& device) {
  if (row < 0) return RuntimeError(op, absl::StrCat("row must be non-negative, got", row));
  if (col < 0) return RuntimeError(op, absl::StrCat("col must be non-negative, got", col));
  if (dtype != DType::kInt64 && dtype != DType::kInt32) {
    return KernelNotImplemented(op, op, dtype);
  }
  using Wide = __int128;
  // Row i's columns: tril [0, clamp(i + offset + 1, 0, col)), triu [clamp(i + offset, 0, col), col).
  const Wide total = lower ? SumOfClamped(row, Wide{offset} + 1, col)
                           : Wide{row} * col - SumOfClamped(row, offset, col);
  if (total > std::numeric_limits<int64_t>::max() / 2) {
    return RuntimeError(op, absl::StrCat(op, "(): ", row, " x ", col,
                                         " has too many positions to list"));
  }
  const int64_t count = static_cast<int64_t>(total);
  Composition c({});
  if (count == 0) {
    TENSORD_ASSIGN_OR_RETURN(const Tensor none, c.Full({2, 0}, Scalar(int64_t{0}), dtype, device));
    return std::move(c).Finish({none});
  }
  // The rows holding pairs: tril from the first with i + offset + 1 > 0, triu up to the last
  // with i + offset < col. Each holds at least one, so there are at most `count` of them.
  const int64_t r0 = lower ? static_cast<int64_t>(std::clamp<Wide>(-Wide{offset}, 0, row)) : 0;
  const int64_t r1 = lower ? row : static_cast<int64_t>(std::clamp<Wide>(Wide{col} - offset, 0, row));
  const int64_t rows_held = r1 - r0;
  // Row r0 + j's first column and width, as clamp(j + base, …) with base saturated to the
  // range that matters for j in [0, rows_held).
  const Attrs along0 = Attrs().Set("dim", int64_t{0});
  TENSORD_ASSIGN_OR_RETURN(const Tensor j, c.Arange(Scalar(int64_t{0}), Scalar(rows_held),
                                                    Scalar(int64_t{1}), DType::kInt64, device));
  const auto shifted = [&](Wide base, int64_t low, int64_t high) -> absl::StatusOr<Tensor> {
    const int64_t b = static_cast<int64_t>(std::clamp<Wide>(base, -Wide{rows_held}, high));
    TENSORD_ASSIGN_OR_RETURN(Tensor t, c.Op1("add", {j}, Attrs().Set("other", Scalar(b))));
    TENSORD_ASSIGN_OR_RETURN(t, c.Op1("clamp_min", {t}, Attrs().Set("min", Scalar(low))));
    return c.Op1("clamp_max", {t}, Attrs().Set("max", Scalar(high)));
  };
  Tensor first, widths;
  if (lower) {  // [0, clamp(i + offset + 1, 0, col)); no row is wider than count
    TENSORD_ASSIGN_OR_RETURN(widths, shifted(Wide{r0} + offset + 1, 0, std::min(col, count)));
    TENSORD_ASSIGN_OR_RETURN(first, c.Full({rows_held}, Scalar(int64_t{0}), DType::kInt64, device));
  } else {  // [clamp(i + offset, 0, col), col), where i + offset < col
    TENSORD_ASSIGN_OR_RETURN(first, shifted(Wide{offset}, 0, col));
    TENSORD_ASSIGN_OR_RETURN(widths, c.Op1("neg", {first}));
    TENSORD_ASSIGN_OR_RETURN(widths, c.Op1("add", {widths}, Attrs().Set("other", Scalar(col))));
  }
  TENSORD_ASSIGN_OR_RETURN(const Tensor ends, c.Op1("cumsum", {widths}, along0));
  TENSORD_ASSIGN_OR_RETURN(const Tensor k, c.Arange(Scalar(int64_t{0}), Scalar(count),
                                                    Scalar(int64_t{1}), DType::kInt64, device));
  TENSORD_ASSIGN_OR_RETURN(const Tensor held,
                           c.Op1("searchsorted", {ends, k, Tensor()}, Attrs().Set("right", true)));
  // column = k - (the row's start in k) + the row's first column
  TENSORD_ASSIGN_OR_RETURN(Tensor starts, c.Op1("sub", {ends, widths}));
  TENSORD_ASSIGN_OR_RETURN(starts, c.Op1("sub", {starts, first}));
  TENSORD_ASSIGN_OR_RETURN(const Tensor at, c.Op1("index_select", {starts, held}, along0));
  TENSORD_ASSIGN_OR_RETURN(const Tensor cols, c.Op1("sub", {k, at}));
  TENSORD_ASSIGN_OR_RETURN(const Tensor rows, c.Op1("add", {held}, Attrs().Set("other", Scalar(r0))));
  TENSORD_ASSIGN_OR_RETURN(Tensor out, c.Op1("stack", {rows, cols}, along0));
  TENSORD_ASSIGN_OR_RETURN(out, c.ToDType(out, dtype));
  return std::move(c).Finish({out});
}

// tril / triu (tril_ / triu_ in place): every matrix of self (its last two dims) with the
// elements off the kept triangle zeroed; tril keeps column - row <= diagonal, triu >= diagonal.
// The dropped positions are one broadcast comparison of a column range against a row range
// (an n x m bool mask, never an int64 one), then masked_fill: a contiguous result, as torch's.
absl::StatusOr<PlannedOp> PlanTriangle(absl::string_view op, const Tensor& self, bool lower,
                                       int64_t diagonal, bool in_place) {
  if (self.dim() == 0) {
    return IndexError(op, "Dimension specified as -2 but tensor has no dimensions");
  }
  TENSORD_RETURN_IF_ERROR(WrapDim(op, -2, self.dim()).status());
  const int64_t n = self.size(self.dim() - 2), m = self.size(self.dim() - 1);
  // column - row spans [-(n - 1), m - 1]: a diagonal clamped to [-n, m] keeps the same
  // elements, and the ranges below cannot overflow.
  const int64_t d = std::clamp<int64_t>(diagonal, -n, m);
  Composition c({self});
  const Device device = self.device();
  TENSORD_ASSIGN_OR_RETURN(Tensor rows, c.Arange(Scalar(int64_t{0}), Scalar(n),
                                                 Scalar(int64_t{1}), DType::kInt64, device));
  TENSORD_ASSIGN_OR_RETURN(rows, Unsqueeze(rows, 1));
  // column - d for every column: a position is dropped where it is above (tril) or below
  // (triu) the row.
  TENSORD_ASSIGN_OR_RETURN(Tensor shifted, c.Arange(Scalar(-d), Scalar(m - d), Scalar(int64_t{1}),
                                                    DType::kInt64, device));
  TENSORD_ASSIGN_OR_RETURN(const Tensor drop, c.Op1(lower ? "gt" : "lt", {shifted, rows}));
  TENSORD_ASSIGN_OR_RETURN(Tensor zero, WrapNumber(Scalar(int64_t{0})));
  TENSORD_ASSIGN_OR_RETURN(PlannedOp fill,
                           PlanMaskedFill(op, self, drop, zero, in_place ? &self : nullptr));
  const std::vector<Tensor> out = c.Add(std::move(fill));
  return std::move(c).Finish({in_place ? self : out[0]});
}

// roll: self's elements shifted along each of `dims` by its shift, wrapping around (no dims:
// along the flattened tensor, then viewed in self's shape). One copy per shifted dim of two
// slices, the last copy into a new contiguous tensor.
absl::StatusOr<PlannedOp> PlanRoll(const Tensor& self, const std::vector<int64_t>& shifts,
                                   const std::vector<int64_t>& dims) {
  constexpr absl::string_view op = "roll";
  if (shifts.empty()) return RuntimeError(op, "`shifts` required");
  if (dims.empty() && shifts.size() != 1) {
    return RuntimeError(op, absl::StrCat("shifts and dimensions must align. shifts: ",
                                         shifts.size(), ", dims:0"));
  }
  if (!dims.empty() && shifts.size() != dims.size()) {
    return RuntimeError(op, absl::StrCat("shifts and dimensions must align. shifts: ",
                                         shifts.size(), ", dims:", dims.size()));
  }
  Composition c({self});
  if (self.numel() == 0) {  // torch returns before it looks at dims
    TENSORD_ASSIGN_OR_RETURN(PlannedOp clone, PlanCloneContiguous(self));
    return clone;
  }
  Tensor current = self;
  if (dims.empty()) {
    TENSORD_ASSIGN_OR_RETURN(current, c.Reshape(self, {self.numel()}));
  }
  const std::vector<int64_t> along = dims.empty() ? std::vector<int64_t>{0} : dims;
  bool copied = false;
  for (size_t i = 0; i < along.size(); ++i) {
    TENSORD_ASSIGN_OR_RETURN(const int64_t dim, WrapDimNoScalar(op, along[i], current.dim()));
    const int64_t n = current.size(dim);
    const int64_t s = ((shifts[i] % n) + n) % n;
    if (s == 0) continue;
    // next[s:] = current[:n - s]; next[:s] = current[n - s:]
    TENSORD_ASSIGN_OR_RETURN(
        const Tensor next,
        AllocateTensor(op, TensorMeta::Contiguous(self.dtype(), current.sizes()), self.device()));
    TENSORD_ASSIGN_OR_RETURN(Tensor head, Narrow(current, dim, 0, n - s));
    TENSORD_ASSIGN_OR_RETURN(Tensor tail, Narrow(current, dim, n - s, s));
    TENSORD_ASSIGN_OR_RETURN(Tensor to_tail, Narrow(next, dim, s, n - s));
    TENSORD_ASSIGN_OR_RETURN(Tensor to_head, Narrow(next, dim, 0, s));
    TENSORD_RETURN_IF_ERROR(CopyStep(c, to_tail, head));
    TENSORD_RETURN_IF_ERROR(CopyStep(c, to_head, tail));
    current = next;
    copied = true;
  }
  if (!copied) {
    TENSORD_ASSIGN_OR_RETURN(PlannedOp clone, PlanCloneContiguous(current));
    current = c.Add(std::move(clone))[0];
  }
  TENSORD_ASSIGN_OR_RETURN(const Tensor result, View(current, self.sizes()));
  return std::move(c).Finish({result});
}

}  // namespace

void RegisterMatrixOps(std::vector<OpDef>& ops) {
  for (const bool lower : {true, false}) {
    const std::string name = lower ? "tril_indices" : "triu_indices";
    ops.push_back({name, OpKind::kFactory, {},
                   {Req("row", AttrType::kInt), Req("col", AttrType::kInt),
                    Opt("offset", AttrType::kInt, "0"), Opt("dtype", AttrType::kDType, "int64"),
                    Opt("device", AttrType::kDevice, "the session's device")},
                   lower ? "The (row, col) positions on and below the offset-th diagonal of a "
                           "row x col matrix, row by row, as a (2, count) tensor."
                         : "The (row, col) positions on and above the offset-th diagonal of a "
                           "row x col matrix, row by row, as a (2, count) tensor.",
                   false, [name, lower](Inputs, AttrReader& a) -> absl::StatusOr<PlannedOp> {
                     TENSORD_ASSIGN_OR_RETURN(int64_t row, a.Int("row"));
                     TENSORD_ASSIGN_OR_RETURN(int64_t col, a.Int("col"));
                     TENSORD_ASSIGN_OR_RETURN(int64_t offset, a.Int("offset", 0));
                     TENSORD_ASSIGN_OR_RETURN(auto dtype, a.OptionalDType("dtype"));
                     TENSORD_ASSIGN_OR_RETURN(auto device, a.GetDevice("device", kCpu));
                     return PlanTriangleIndices(name, lower, row, col, offset,
                                                dtype.value_or(DType::kInt64), device);
                   }});
  }
  for (const bool lower : {true, false}) {
    for (const bool in_place : {false, true}) {
      const std::string name = std::string(lower ? "tril" : "triu") + (in_place ? "_" : "");
      ops.push_back({name, in_place ? OpKind::kInPlace : OpKind::kCompute, {"self"},
                     {Opt("diagonal", AttrType::kInt, "0", "0: main, > 0 above, < 0 below")},
                     lower ? "Every matrix of self (last two dims) with the elements above the "
                             "diagonal-th diagonal zeroed."
                           : "Every matrix of self (last two dims) with the elements below the "
                             "diagonal-th diagonal zeroed.",
                     false,
                     [name, lower, in_place](Inputs in, AttrReader& a) -> absl::StatusOr<PlannedOp> {
                       TENSORD_ASSIGN_OR_RETURN(int64_t d, a.Int("diagonal", 0));
                       return PlanTriangle(name, in[0], lower, d, in_place);
                     }});
    }
  }
  ops.push_back({"roll", OpKind::kCompute, {"self"},
                 {Req("shifts", AttrType::kIntList), Opt("dims", AttrType::kIntList, "[]")},
                 "self's elements shifted along each of dims by its shift, wrapping around; no "
                 "dims: along the flattened tensor.",
                 false, [](Inputs in, AttrReader& a) -> absl::StatusOr<PlannedOp> {
                   TENSORD_ASSIGN_OR_RETURN(std::vector<int64_t> shifts, a.IntList("shifts"));
                   std::vector<int64_t> dims;
                   if (a.Has("dims")) {
                     TENSORD_ASSIGN_OR_RETURN(dims, a.IntList("dims"));
                   }
                   return PlanRoll(in[0], shifts, dims);
                 }});
  ops.push_back({"trace", OpKind::kCompute, {"self"}, {},
                 "Sum of a matrix's main diagonal (integers summed in int64).", false,
                 [](Inputs in, AttrReader&) { return PlanTrace(in[0]); }});
  ops.push_back({"diag", OpKind::kCompute, {"self"},
                 {Opt("diagonal", AttrType::kInt, "0", "0: main, > 0 above, < 0 below")},
                 "A vector onto a diagonal of a new square matrix, or a matrix's diagonal as a "
                 "new vector.",
                 false, [](Inputs in, AttrReader& a) -> absl::StatusOr<PlannedOp> {
                   TENSORD_ASSIGN_OR_RETURN(int64_t d, a.Int("diagonal", 0));
                   return PlanDiag("diag", in[0], d);
                 }});
  ops.push_back({"diagflat", OpKind::kCompute, {"self"},
                 {Opt("offset", AttrType::kInt, "0")},
                 "self flattened onto a diagonal of a new square matrix.", false,
                 [](Inputs in, AttrReader& a) -> absl::StatusOr<PlannedOp> {
                   TENSORD_ASSIGN_OR_RETURN(int64_t d, a.Int("offset", 0));
                   Composition c(in);
                   TENSORD_ASSIGN_OR_RETURN(Tensor flat, c.Reshape(in[0], {in[0].numel()}));
                   TENSORD_ASSIGN_OR_RETURN(PlannedOp diag, PlanDiag("diagflat", flat, d));
                   return std::move(c).Finish(c.Add(std::move(diag)));
                 }});
  ops.push_back({"diag_embed", OpKind::kCompute, {"self"},
                 {Opt("offset", AttrType::kInt, "0"), Opt("dim1", AttrType::kInt, "-2"),
                  Opt("dim2", AttrType::kInt, "-1")},
                 "self's last dim onto the offset diagonal of dims (dim1, dim2) of a new zero "
                 "tensor with one more dim.",
                 false, [](Inputs in, AttrReader& a) -> absl::StatusOr<PlannedOp> {
                   TENSORD_ASSIGN_OR_RETURN(int64_t offset, a.Int("offset", 0));
                   TENSORD_ASSIGN_OR_RETURN(int64_t dim1, a.Int("dim1", -2));
                   TENSORD_ASSIGN_OR_RETURN(int64_t dim2, a.Int("dim2", -1));
                   return PlanDiagEmbed("diag_embed", in[0], offset, dim1, dim2);
                 }});
  OpDef block{"block_diag", OpKind::kCompute, {"tensors"}, {},
              "The tensors (0, 1 or 2-d) as blocks on the diagonal of a new zero matrix of their "
              "promoted dtype.",
              false, [](Inputs in, AttrReader&) { return PlanBlockDiag(in); }};
  block.variadic = true;
  ops.push_back(std::move(block));
  ops.push_back({"kron", OpKind::kCompute, {"self", "other"}, {},
                 "Kronecker product: every element of self times all of other.", false,
                 [](Inputs in, AttrReader&) { return PlanKron(in[0], in[1]); }});
  ops.push_back({"cross", OpKind::kCompute, {"self", "other"},
                 {Opt("dim", AttrType::kInt, "None", "None: the first dim of size 3")},
                 "Cross product of 3-vectors along dim, the other dims broadcast.", false,
                 [](Inputs in, AttrReader& a) -> absl::StatusOr<PlannedOp> {
                   TENSORD_ASSIGN_OR_RETURN(std::optional<int64_t> dim, a.OptionalInt("dim"));
                   return PlanCross(in[0], in[1], dim);
                 }});
}

}  // namespace tensord::engine
