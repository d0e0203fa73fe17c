// Closeness and equality of whole tensors: isclose (ATen's composition), allclose and equal
// (0-d bool results the clients read as Python bools). Compositions (composition.h), so they
// run on every device and their errors raise at the call.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/core/errors.h"
#include "engine/core/status_macros.h"
#include "engine/ops/composition.h"
#include "engine/ops/elementwise.h"
#include "engine/ops/factory_ops.h"
#include "engine/ops/op_registry_internal.h"

namespace tensord::engine {
namespace {

struct Tolerance {
  double rtol = 1e-5, atol = 1e-8;
  bool equal_nan = false;
};

absl::StatusOr<Tolerance> ReadTolerance(AttrReader& a) {
  Tolerance t;
  TENSORD_ASSIGN_OR_RETURN(Scalar rtol, a.GetScalar("rtol", Scalar(1e-5)));
  TENSORD_ASSIGN_OR_RETURN(Scalar atol, a.GetScalar("atol", Scalar(1e-8)));
  TENSORD_ASSIGN_OR_RETURN(t.equal_nan, a.Bool("equal_nan", false));
  t.rtol = rtol.to_double();
  t.atol = atol.to_double();
  return t;
}

// |a - b| <= atol + rtol |b| or a == b (NaN == NaN with equal_nan); integers and bool measure
// the error in float32 (an unsigned difference would wrap).
absl::StatusOr<Tensor> Close(Composition& c, absl::string_view op, const Tensor& a,
                             const Tensor& b, const Tolerance& t) {
  TENSORD_RETURN_IF_ERROR(CommonDevice(op, {a, b}).status());
  if (a.dtype() != b.dtype()) {
    return RuntimeError(op, absl::StrCat(DTypeLegacyName(a.dtype()), " did not match ",
                                         DTypeLegacyName(b.dtype())));
  }
  if (t.rtol < 0) {
    return RuntimeError(op, absl::StrCat("rtol must be greater than or equal to zero, but got ",
                                         t.rtol));
  }
  if (t.atol < 0) {
    return RuntimeError(op, absl::StrCat("atol must be greater than or equal to zero, but got ",
                                         t.atol));
  }
  TENSORD_ASSIGN_OR_RETURN(Tensor close, c.Op1("eq", {a, b}));
  if (t.equal_nan && IsFloating(a.dtype())) {
    // In place where ATen works in place (self.isnan() &= other.isnan()), so that a self
    // smaller than the broadcast shape is refused as torch refuses it.
    TENSORD_ASSIGN_OR_RETURN(const Tensor na, c.Op1("isnan", {a}));
    TENSORD_ASSIGN_OR_RETURN(const Tensor nb, c.Op1("isnan", {b}));
    TENSORD_RETURN_IF_ERROR(c.Op("bitwise_and_", {na, nb}).status());
    TENSORD_ASSIGN_OR_RETURN(close, c.Op1("logical_or", {close, na}));
  }
  if (t.rtol == 0 && t.atol == 0) return close;
  TENSORD_ASSIGN_OR_RETURN(const Tensor x, c.ToDType(a, IsFloating(a.dtype()) ? a.dtype()
                                                                              : DType::kFloat32));
  TENSORD_ASSIGN_OR_RETURN(const Tensor y, c.ToDType(b, x.dtype()));
  TENSORD_ASSIGN_OR_RETURN(Tensor allowed, c.Op1("mul", {y}, Attrs().Set("other", Scalar(t.rtol))));
  TENSORD_ASSIGN_OR_RETURN(allowed, c.Op1("abs", {allowed}));
  TENSORD_ASSIGN_OR_RETURN(allowed, c.Op1("add", {allowed}, Attrs().Set("other", Scalar(t.atol))));
  TENSORD_ASSIGN_OR_RETURN(Tensor actual, c.Op1("sub", {x, y}));
  TENSORD_ASSIGN_OR_RETURN(actual, c.Op1("abs", {actual}));
  TENSORD_ASSIGN_OR_RETURN(const Tensor finite, c.Op1("isfinite", {actual}));
  TENSORD_ASSIGN_OR_RETURN(const Tensor within, c.Op1("le", {actual, allowed}));
  TENSORD_ASSIGN_OR_RETURN(const Tensor ok, c.Op1("logical_and", {finite, within}));
  return c.Op1("logical_or", {close, ok});
}

std::vector<AttrSpec> ToleranceAttrs() {
  return {Opt("rtol", AttrType::kScalar, "1e-05"), Opt("atol", AttrType::kScalar, "1e-08"),
          Opt("equal_nan", AttrType::kBool, "false")};
}

}  // namespace

void RegisterCompareOps(std::vector<OpDef>& ops) {
  ops.push_back({"isclose", OpKind::kCompute, {"self", "other"}, ToleranceAttrs(),
                 "Elementwise |self - other| <= atol + rtol |other| (or equal), broadcast; "
                 "self and other of one dtype.",
                 false, [](Inputs in, AttrReader& a) -> absl::StatusOr<PlannedOp> {
                   TENSORD_ASSIGN_OR_RETURN(const Tolerance t, ReadTolerance(a));
                   Composition c(in);
                   TENSORD_ASSIGN_OR_RETURN(const Tensor close, Close(c, "isclose", in[0], in[1], t));
                   return std::move(c).Finish({close});
                 }});
  ops.push_back({"allclose", OpKind::kCompute, {"self", "other"}, ToleranceAttrs(),
                 "Whether every element is close (isclose): a 0-d bool.", false,
                 [](Inputs in, AttrReader& a) -> absl::StatusOr<PlannedOp> {
                   TENSORD_ASSIGN_OR_RETURN(const Tolerance t, ReadTolerance(a));
                   Composition c(in);
                   TENSORD_ASSIGN_OR_RETURN(const Tensor close, Close(c, "allclose", in[0], in[1], t));
                   TENSORD_ASSIGN_OR_RETURN(const Tensor all, c.Op1("all", {close}));
                   return std::move(c).Finish({all});
                 }});
  ops.push_back({"equal", OpKind::kCompute, {"self", "other"}, {},
                 "Whether both have the same sizes and equal elements (after promotion): a 0-d "
                 "bool.",
                 false, [](Inputs in, AttrReader&) -> absl::StatusOr<PlannedOp> {
                   const Tensor &a = in[0], &b = in[1];
                   TENSORD_ASSIGN_OR_RETURN(const Device device, CommonDevice("equal", {a, b}));
                   Composition c(in);
                   Tensor result;
                   if (!std::equal(a.sizes().begin(), a.sizes().end(), b.sizes().begin(),
                                   b.sizes().end())) {
                     TENSORD_ASSIGN_OR_RETURN(result, c.Full({}, Scalar(false), DType::kBool, device));
                   } else {
                     TENSORD_ASSIGN_OR_RETURN(const Tensor eq, c.Op1("eq", {a, b}));
                     TENSORD_ASSIGN_OR_RETURN(result, c.Op1("all", {eq}));
                   }
                   return std::move(c).Finish({result});
                 }});
}

}  // namespace tensord::engine
