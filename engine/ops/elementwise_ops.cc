// The elementwise ops: unary, binary and ternary, out-of-place and in-place, planned by the
// elementwise engine with torch 1.13's dtype rules (checked against torch, op by op).
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "engine/runtime/backend.h"
#include "engine/ops/elementwise.h"
#include "engine/core/errors.h"
#include "engine/ops/op_registry_internal.h"
#include "engine/core/status_macros.h"
#include "engine/ops/type_promotion.h"

namespace tensord::engine {
namespace {


// The name of torch's CPU kernel for an op, as its dtype errors give it: torch.special's
// functions drop the prefix ("i0e_cpu" for special_i0e).
std::string KernelName(const std::string& name) {
  const std::string base = absl::StartsWith(name, "special_") ? name.substr(8) : name;
  return base + "_cpu";
}

// What a unary op accepts and returns.
enum class UnaryRule {
  kAll,           // any dtype, same dtype out
  kNoBool,        // not bool
  kNoBoolHalf,    // not bool, not float16 (torch 1.13 has no CPU float16 kernel)
  kFloatPromote,  // integers computed in float32; float16 allowed
  kFloatPromoteNoHalf,
  kFloatPromote32Or64,  // integers computed in the default dtype; no float16 or bfloat16
  kFloatOnly,     // floating dtypes only (float16 included)
  kFloatNoHalf,   // float32/float64/bfloat16
  kFloat32Or64,   // float32/float64 only (mish)
  kBoolOut,       // any dtype in, bool out
  kIntegral,      // bool and integer dtypes
};

absl::StatusOr<PlannedOp> PlanUnary(const std::string& name, UnaryOp op, UnaryRule rule,
                                    const Tensor& self, const Tensor* out,
                                    UnaryArgs args = {}, bool contiguous_output = false) {
  const DType in = self.dtype();
  ElementwiseSpec spec{name};
  spec.out = out;
  spec.compute_dtype = in;
  const bool is_half = in == DType::kFloat16;
  switch (rule) {
    case UnaryRule::kAll: break;
    case UnaryRule::kNoBoolHalf:
      if (is_half) return DTypeNotImplemented(name, in);
      [[fallthrough]];
    case UnaryRule::kNoBool:
      if (in == DType::kBool) {
        if (op == UnaryOp::kNeg) {
          return RuntimeError(name, "Negation, the `-` operator, on a bool tensor is not "
                                    "supported. If you are trying to invert a mask, use the `~` "
                                    "or `logical_not()` operator instead.");
        }
        return DTypeNotImplemented(name, in);
      }
      break;
    case UnaryRule::kFloatPromote:
    case UnaryRule::kFloatPromoteNoHalf:
    case UnaryRule::kFloatPromote32Or64:
      // Integers are computed in the default dtype, which may itself be half.
      if (!IsFloating(in)) spec.compute_dtype = DefaultFloatDType();
      if (rule != UnaryRule::kFloatPromote && spec.compute_dtype == DType::kFloat16) {
        return KernelNotImplemented(name, KernelName(name), DType::kFloat16);
      }
      if (rule == UnaryRule::kFloatPromote32Or64 && spec.compute_dtype == DType::kBFloat16) {
        return KernelNotImplemented(name, KernelName(name), DType::kBFloat16);
      }
      break;
    case UnaryRule::kFloat32Or64:
      if (in == DType::kBFloat16) return DTypeNotImplemented(name, in);
      [[fallthrough]];
    case UnaryRule::kFloatNoHalf:
      if (is_half) return DTypeNotImplemented(name, in);
      [[fallthrough]];
    case UnaryRule::kFloatOnly:
      if (!IsFloating(in)) return DTypeNotImplemented(name, in);
      break;
    case UnaryRule::kBoolOut: spec.result_dtype = DType::kBool; break;
    case UnaryRule::kIntegral:
      if (IsFloating(in)) return DTypeNotImplemented(name, in);
      break;
  }
  spec.contiguous_output = contiguous_output;
  return PlanElementwise(spec, {self},
                         [op, args](Backend& backend, IntList shape, const StridedRef& o,
                                    absl::Span<const StridedRef> ins) {
                           return backend.Unary(op, shape, o, ins[0], args);
                         });
}

// What a binary op accepts and returns.
enum class BinaryRule {
  kArith,         // add, sub, mul: the common dtype
  kTrueDiv,       // integers divide in float32
  kIntDiv,        // floor/trunc division, remainder, fmod: no bool; integer zero divisors fail
  kPow,
  kSame,          // maximum, minimum, fmax, fmin
  kFloatPromote,  // atan2 (no float16), copysign: integers computed in float32
  kFloatNoHalf,   // hypot: float32/float64/bfloat16
  kFloatOnly,     // igamma, igammac: floating dtypes only (integers are not promoted)
  kFloat32Or64,   // zeta, the polynomials: integers computed in float32; no float16 or bfloat16
  kBitwise,       // bool and integers
  kShift,         // integers: shifts, gcd, lcm
  kBoolOut,       // comparisons, logical ops
  kSameDType,     // heaviside: both operands of one dtype, any dtype
};

absl::StatusOr<PlannedOp> PlanBinary(const std::string& name, BinaryOp op, BinaryRule rule,
                                     const Tensor& a, const Tensor& b, const Tensor* out,
                                     Scalar alpha = Scalar(int64_t{1})) {
  ElementwiseSpec spec{name};
  spec.out = out;
  const DType common = ResultType({a, b});
  spec.compute_dtype = common;
  switch (rule) {
    case BinaryRule::kArith:
      if (op == BinaryOp::kSub && (a.dtype() == DType::kBool || b.dtype() == DType::kBool)) {
        if (a.dtype() == DType::kBool && b.dtype() == DType::kBool) {
          return RuntimeError(name, "Subtraction, the `-` operator, with two bool tensors is not "
                                    "supported. Use the `^` or `logical_xor()` operator instead.");
        }
        return RuntimeError(name, "Subtraction, the `-` operator, with a bool tensor is not "
                                  "supported. If you are trying to invert a mask, use the `~` or "
                                  "`logical_not()` operator instead.");
      }
      if (IsIntegral(common, true) && alpha.is_float()) {
        return RuntimeError(name, "For integral input tensors, argument alpha must not be a "
                                  "floating point number.");
      }
      if (common != DType::kBool && alpha.is_bool()) {
        return RuntimeError(name, "Boolean alpha only supported for Boolean results.");
      }
      break;
    case BinaryRule::kTrueDiv:
      if (!IsFloating(common)) spec.compute_dtype = DefaultFloatDType();
      break;
    case BinaryRule::kIntDiv:
    case BinaryRule::kPow:
      if (common == DType::kBool) return DTypeNotImplemented(name, common);
      break;
    case BinaryRule::kSame: break;
    case BinaryRule::kFloatPromote:
      if (!IsFloating(common)) spec.compute_dtype = DefaultFloatDType();
      if (op == BinaryOp::kAtan2 && spec.compute_dtype == DType::kFloat16) {
        return DTypeNotImplemented(name, DType::kFloat16);
      }
      break;
    case BinaryRule::kFloatNoHalf:
      if (!IsFloating(common) || common == DType::kFloat16) return DTypeNotImplemented(name, common);
      break;
    case BinaryRule::kFloatOnly:
      if (!IsFloating(common)) return DTypeNotImplemented(name, common);
      break;
    case BinaryRule::kFloat32Or64:
      if (!IsFloating(common)) spec.compute_dtype = DefaultFloatDType();
      if (*spec.compute_dtype == DType::kFloat16 || *spec.compute_dtype == DType::kBFloat16) {
        return KernelNotImplemented(name, KernelName(name), *spec.compute_dtype);
      }
      break;
    case BinaryRule::kBitwise:
      if (IsFloating(common)) return DTypeNotImplemented(name, common);
      break;
    case BinaryRule::kShift:
      if (!IsIntegral(common, false)) return DTypeNotImplemented(name, common);
      break;
    case BinaryRule::kBoolOut: spec.result_dtype = DType::kBool; break;
    case BinaryRule::kSameDType:
      if (a.dtype() != b.dtype()) {
        return RuntimeError(name, "heaviside is not yet implemented for tensors with different "
                                  "dtypes.");
      }
      break;
  }
  // Numbers a kernel converts to its dtype with torch's overflow check: alpha (when given), and
  // an integer or reduced-precision float tensor's exponent.
  if (!(alpha.is_int() && alpha.to_int() == 1)) {
    TENSORD_RETURN_IF_ERROR(CheckScalarFits(name, alpha, *spec.compute_dtype));
  }
  if (rule == BinaryRule::kPow && !a.is_wrapped_number() &&
      (IsIntegral(common, false) || common == DType::kFloat16 || common == DType::kBFloat16)) {
    TENSORD_RETURN_IF_ERROR(CheckNumberFits(name, b, common));
  }
  // int ** negative int, with the exponent a number: an error, as torch.
  if (rule == BinaryRule::kPow && IsIntegral(common, false) && b.is_wrapped_number() &&
      b.dtype() == DType::kInt64 && *b.data_as<int64_t>() < 0) {
    return RuntimeError(name, "Integers to negative integer powers are not allowed.");
  }
  // torch's pow(number, tensor) allocates a contiguous result; pow(tensor, number) converts
  // the tensor first and passes the number as a scalar.
  if (rule == BinaryRule::kPow && a.is_wrapped_number()) spec.contiguous_output = true;
  if (rule == BinaryRule::kPow && b.is_wrapped_number() && !a.is_wrapped_number()) {
    spec.layout_operands = 1;
    spec.convert_self_first = true;
  }
  // pow(tensor, number): torch's pow_tensor_scalar kernel (x * x for 2, sqrt for 0.5, …): one
  // unary map with the exponent as an argument, not pow() per element.
  if (rule == BinaryRule::kPow && op == BinaryOp::kPow && b.is_wrapped_number() &&
      !a.is_wrapped_number()) {
    UnaryArgs args;
    args.a = ScalarOf(b);
    args.has_a = true;
    return PlanElementwise(
        spec, {a, b},
        [args](Backend& backend, IntList shape, const StridedRef& o,
               absl::Span<const StridedRef> ins) -> absl::Status {
          return backend.Unary(UnaryOp::kPowScalar, shape, o, ins[0], args);
        });
  }
  const bool check_zero = rule == BinaryRule::kIntDiv && IsIntegral(common, false);
  return PlanElementwise(
      spec, {a, b},
      [op, alpha, check_zero, name](Backend& backend, IntList shape, const StridedRef& o,
                                    absl::Span<const StridedRef> ins) -> absl::Status {
        if (check_zero) {
          TENSORD_RETURN_IF_ERROR(backend.CheckValues(ValueCheck::kNonzero, name, shape, ins[1]));
        }
        return backend.Binary(op, shape, o, ins[0], ins[1], alpha);
      });
}

struct UnaryDef {
  const char* name;
  UnaryOp op;
  UnaryRule rule;
  bool has_inplace;
  bool contiguous_output = false;  // a new contiguous buffer whatever self's layout, as torch's
};

constexpr UnaryDef kUnaryOps[] = {
    {"neg", UnaryOp::kNeg, UnaryRule::kNoBool, true},
    {"negative", UnaryOp::kNeg, UnaryRule::kNoBool, true},
    {"abs", UnaryOp::kAbs, UnaryRule::kNoBool, true},
    {"absolute", UnaryOp::kAbs, UnaryRule::kNoBool, true},
    {"sign", UnaryOp::kSign, UnaryRule::kAll, true},
    {"sgn", UnaryOp::kSgn, UnaryRule::kAll, true},
    {"exp", UnaryOp::kExp, UnaryRule::kFloatPromoteNoHalf, true},
    {"exp2", UnaryOp::kExp2, UnaryRule::kFloatPromote, true},
    {"expm1", UnaryOp::kExpm1, UnaryRule::kFloatPromoteNoHalf, true},
    {"log", UnaryOp::kLog, UnaryRule::kFloatPromoteNoHalf, true},
    {"log1p", UnaryOp::kLog1p, UnaryRule::kFloatPromoteNoHalf, true},
    {"log2", UnaryOp::kLog2, UnaryRule::kFloatPromoteNoHalf, true},
    {"log10", UnaryOp::kLog10, UnaryRule::kFloatPromoteNoHalf, true},
    {"sqrt", UnaryOp::kSqrt, UnaryRule::kFloatPromoteNoHalf, true},
    {"rsqrt", UnaryOp::kRsqrt, UnaryRule::kFloatPromoteNoHalf, true},
    {"sin", UnaryOp::kSin, UnaryRule::kFloatPromoteNoHalf, true},
    {"cos", UnaryOp::kCos, UnaryRule::kFloatPromoteNoHalf, true},
    {"tan", UnaryOp::kTan, UnaryRule::kFloatPromoteNoHalf, true},
    {"asin", UnaryOp::kAsin, UnaryRule::kFloatPromoteNoHalf, true},
    {"acos", UnaryOp::kAcos, UnaryRule::kFloatPromoteNoHalf, true},
    {"atan", UnaryOp::kAtan, UnaryRule::kFloatPromoteNoHalf, true},
    {"sinh", UnaryOp::kSinh, UnaryRule::kFloatPromoteNoHalf, true},
    {"cosh", UnaryOp::kCosh, UnaryRule::kFloatPromoteNoHalf, true},
    {"tanh", UnaryOp::kTanh, UnaryRule::kFloatPromoteNoHalf, true},
    {"erf", UnaryOp::kErf, UnaryRule::kFloatPromoteNoHalf, true},
    {"sigmoid", UnaryOp::kSigmoid, UnaryRule::kFloatPromoteNoHalf, true},
    {"relu", UnaryOp::kRelu, UnaryRule::kNoBoolHalf, true},
    {"silu", UnaryOp::kSilu, UnaryRule::kFloatNoHalf, true},
    {"floor", UnaryOp::kFloor, UnaryRule::kNoBoolHalf, true},
    {"ceil", UnaryOp::kCeil, UnaryRule::kNoBoolHalf, true},
    {"trunc", UnaryOp::kTrunc, UnaryRule::kNoBoolHalf, true},
    {"fix", UnaryOp::kTrunc, UnaryRule::kNoBoolHalf, true},
    {"frac", UnaryOp::kFrac, UnaryRule::kFloatOnly, true},
    {"reciprocal", UnaryOp::kReciprocal, UnaryRule::kFloatPromote, true},
    {"logical_not", UnaryOp::kLogicalNot, UnaryRule::kBoolOut, false},
    {"bitwise_not", UnaryOp::kBitwiseNot, UnaryRule::kIntegral, true},
    {"isnan", UnaryOp::kIsnan, UnaryRule::kBoolOut, false},
    {"isinf", UnaryOp::kIsinf, UnaryRule::kBoolOut, false},
    {"isposinf", UnaryOp::kIsposinf, UnaryRule::kBoolOut, false},
    {"isneginf", UnaryOp::kIsneginf, UnaryRule::kBoolOut, false},
    {"isfinite", UnaryOp::kIsfinite, UnaryRule::kBoolOut, false},
    {"signbit", UnaryOp::kSignbit, UnaryRule::kBoolOut, false},
    {"acosh", UnaryOp::kAcosh, UnaryRule::kFloatPromoteNoHalf, true},
    {"arccosh", UnaryOp::kAcosh, UnaryRule::kFloatPromoteNoHalf, true},
    {"asinh", UnaryOp::kAsinh, UnaryRule::kFloatPromoteNoHalf, true},
    {"arcsinh", UnaryOp::kAsinh, UnaryRule::kFloatPromoteNoHalf, true},
    {"atanh", UnaryOp::kAtanh, UnaryRule::kFloatPromoteNoHalf, true},
    {"arctanh", UnaryOp::kAtanh, UnaryRule::kFloatPromoteNoHalf, true},
    {"arcsin", UnaryOp::kAsin, UnaryRule::kFloatPromoteNoHalf, true},
    {"arccos", UnaryOp::kAcos, UnaryRule::kFloatPromoteNoHalf, true},
    {"arctan", UnaryOp::kAtan, UnaryRule::kFloatPromoteNoHalf, true},
    {"erfc", UnaryOp::kErfc, UnaryRule::kFloatPromoteNoHalf, true},
    {"erfinv", UnaryOp::kErfinv, UnaryRule::kFloatPromoteNoHalf, true},
    {"lgamma", UnaryOp::kLgamma, UnaryRule::kFloatPromoteNoHalf, true},
    {"digamma", UnaryOp::kDigamma, UnaryRule::kFloatPromoteNoHalf, true},
    {"i0", UnaryOp::kI0, UnaryRule::kFloatPromoteNoHalf, true},
    {"sinc", UnaryOp::kSinc, UnaryRule::kFloatPromoteNoHalf, true},
    {"special_entr", UnaryOp::kEntr, UnaryRule::kFloatPromoteNoHalf, false},
    {"special_ndtr", UnaryOp::kNdtr, UnaryRule::kFloatPromoteNoHalf, false},
    {"special_i0e", UnaryOp::kI0e, UnaryRule::kFloatPromoteNoHalf, false},
    {"special_i1", UnaryOp::kI1, UnaryRule::kFloatPromote32Or64, false},
    {"special_i1e", UnaryOp::kI1e, UnaryRule::kFloatPromote32Or64, false},
    {"special_ndtri", UnaryOp::kNdtri, UnaryRule::kFloatPromote32Or64, false},
    {"special_log_ndtr", UnaryOp::kLogNdtr, UnaryRule::kFloatPromote32Or64, false},
    {"special_erfcx", UnaryOp::kErfcx, UnaryRule::kFloatPromote32Or64, false},
    {"special_bessel_j0", UnaryOp::kBesselJ0, UnaryRule::kFloatPromote32Or64, false},
    {"special_bessel_j1", UnaryOp::kBesselJ1, UnaryRule::kFloatPromote32Or64, false},
    {"special_bessel_y0", UnaryOp::kBesselY0, UnaryRule::kFloatPromote32Or64, false},
    {"special_bessel_y1", UnaryOp::kBesselY1, UnaryRule::kFloatPromote32Or64, false},
    {"special_modified_bessel_i0", UnaryOp::kModifiedBesselI0, UnaryRule::kFloatPromote32Or64,
     false},
    {"special_modified_bessel_i1", UnaryOp::kModifiedBesselI1, UnaryRule::kFloatPromote32Or64,
     false},
    {"special_modified_bessel_k0", UnaryOp::kModifiedBesselK0, UnaryRule::kFloatPromote32Or64,
     false},
    {"special_modified_bessel_k1", UnaryOp::kModifiedBesselK1, UnaryRule::kFloatPromote32Or64,
     false},
    {"special_scaled_modified_bessel_k0", UnaryOp::kScaledModifiedBesselK0,
     UnaryRule::kFloatPromote32Or64, false},
    {"special_scaled_modified_bessel_k1", UnaryOp::kScaledModifiedBesselK1,
     UnaryRule::kFloatPromote32Or64, false},
    {"special_spherical_bessel_j0", UnaryOp::kSphericalBesselJ0, UnaryRule::kFloatPromote32Or64,
     false},
    {"special_airy_ai", UnaryOp::kAiryAi, UnaryRule::kFloatPromote32Or64, false},
    {"deg2rad", UnaryOp::kDeg2Rad, UnaryRule::kFloatPromote, true},
    {"rad2deg", UnaryOp::kRad2Deg, UnaryRule::kFloatPromote, true},
    {"hardsigmoid", UnaryOp::kHardsigmoid, UnaryRule::kFloatNoHalf, true},
    {"hardswish", UnaryOp::kHardswish, UnaryRule::kFloatNoHalf, true},
    {"mish", UnaryOp::kMish, UnaryRule::kFloat32Or64, true},
    {"log_sigmoid", UnaryOp::kLogSigmoid, UnaryRule::kFloatNoHalf, false, true},
};

struct BinaryDef {
  const char* name;
  BinaryOp op;
  BinaryRule rule;
  bool has_inplace;
};

constexpr BinaryDef kBinaryOps[] = {
    {"mul", BinaryOp::kMul, BinaryRule::kArith, true},
    {"multiply", BinaryOp::kMul, BinaryRule::kArith, true},
    {"true_divide", BinaryOp::kDiv, BinaryRule::kTrueDiv, true},
    {"floor_divide", BinaryOp::kDivFloor, BinaryRule::kIntDiv, true},
    {"remainder", BinaryOp::kRemainder, BinaryRule::kIntDiv, true},
    {"fmod", BinaryOp::kFmod, BinaryRule::kIntDiv, true},
    {"pow", BinaryOp::kPow, BinaryRule::kPow, true},
    {"float_power", BinaryOp::kPow, BinaryRule::kPow, false},
    {"maximum", BinaryOp::kMaximum, BinaryRule::kSame, false},
    {"minimum", BinaryOp::kMinimum, BinaryRule::kSame, false},
    {"fmax", BinaryOp::kFmax, BinaryRule::kSame, false},
    {"fmin", BinaryOp::kFmin, BinaryRule::kSame, false},
    {"atan2", BinaryOp::kAtan2, BinaryRule::kFloatPromote, true},
    {"arctan2", BinaryOp::kAtan2, BinaryRule::kFloatPromote, true},
    {"copysign", BinaryOp::kCopysign, BinaryRule::kFloatPromote, true},
    {"hypot", BinaryOp::kHypot, BinaryRule::kFloatNoHalf, true},
    {"xlogy", BinaryOp::kXlogy, BinaryRule::kFloatPromote, true},
    {"logaddexp", BinaryOp::kLogAddExp, BinaryRule::kFloatNoHalf, false},
    {"logaddexp2", BinaryOp::kLogAddExp2, BinaryRule::kFloatNoHalf, false},
    {"nextafter", BinaryOp::kNextafter, BinaryRule::kFloatNoHalf, true},
    {"igamma", BinaryOp::kIgamma, BinaryRule::kFloatOnly, true},
    {"igammac", BinaryOp::kIgammac, BinaryRule::kFloatOnly, true},
    {"special_xlog1py", BinaryOp::kXlog1py, BinaryRule::kFloatPromote, false},
    {"special_zeta", BinaryOp::kZeta, BinaryRule::kFloat32Or64, false},
    {"special_chebyshev_polynomial_t", BinaryOp::kChebyshevT, BinaryRule::kFloat32Or64, false},
    {"special_chebyshev_polynomial_u", BinaryOp::kChebyshevU, BinaryRule::kFloat32Or64, false},
    {"special_chebyshev_polynomial_v", BinaryOp::kChebyshevV, BinaryRule::kFloat32Or64, false},
    {"special_chebyshev_polynomial_w", BinaryOp::kChebyshevW, BinaryRule::kFloat32Or64, false},
    {"special_shifted_chebyshev_polynomial_t", BinaryOp::kShiftedChebyshevT,
     BinaryRule::kFloat32Or64, false},
    {"special_shifted_chebyshev_polynomial_u", BinaryOp::kShiftedChebyshevU,
     BinaryRule::kFloat32Or64, false},
    {"special_shifted_chebyshev_polynomial_v", BinaryOp::kShiftedChebyshevV,
     BinaryRule::kFloat32Or64, false},
    {"special_shifted_chebyshev_polynomial_w", BinaryOp::kShiftedChebyshevW,
     BinaryRule::kFloat32Or64, false},
    {"special_hermite_polynomial_h", BinaryOp::kHermiteH, BinaryRule::kFloat32Or64, false},
    {"special_hermite_polynomial_he", BinaryOp::kHermiteHe, BinaryRule::kFloat32Or64, false},
    {"special_laguerre_polynomial_l", BinaryOp::kLaguerreL, BinaryRule::kFloat32Or64, false},
    {"special_legendre_polynomial_p", BinaryOp::kLegendreP, BinaryRule::kFloat32Or64, false},
    {"heaviside", BinaryOp::kHeaviside, BinaryRule::kSameDType, true},
    {"gcd", BinaryOp::kGcd, BinaryRule::kShift, true},
    {"lcm", BinaryOp::kLcm, BinaryRule::kShift, true},
    {"bitwise_and", BinaryOp::kBitAnd, BinaryRule::kBitwise, true},
    {"bitwise_or", BinaryOp::kBitOr, BinaryRule::kBitwise, true},
    {"bitwise_xor", BinaryOp::kBitXor, BinaryRule::kBitwise, true},
    {"bitwise_left_shift", BinaryOp::kLshift, BinaryRule::kShift, true},
    {"bitwise_right_shift", BinaryOp::kRshift, BinaryRule::kShift, true},
    {"logical_and", BinaryOp::kLogicalAnd, BinaryRule::kBoolOut, false},
    {"logical_or", BinaryOp::kLogicalOr, BinaryRule::kBoolOut, false},
    {"logical_xor", BinaryOp::kLogicalXor, BinaryRule::kBoolOut, false},
    {"eq", BinaryOp::kEq, BinaryRule::kBoolOut, true},
    {"ne", BinaryOp::kNe, BinaryRule::kBoolOut, true},
    {"lt", BinaryOp::kLt, BinaryRule::kBoolOut, true},
    {"le", BinaryOp::kLe, BinaryRule::kBoolOut, true},
    {"gt", BinaryOp::kGt, BinaryRule::kBoolOut, true},
    {"ge", BinaryOp::kGe, BinaryRule::kBoolOut, true},
    {"greater", BinaryOp::kGt, BinaryRule::kBoolOut, false},
    {"less", BinaryOp::kLt, BinaryRule::kBoolOut, false},
    {"greater_equal", BinaryOp::kGe, BinaryRule::kBoolOut, false},
    {"less_equal", BinaryOp::kLe, BinaryRule::kBoolOut, false},
    {"not_equal", BinaryOp::kNe, BinaryRule::kBoolOut, false},
};

// Registers `name` and, when wanted, `name_` (in place on self).
void AddPair(std::vector<OpDef>& ops, const std::string& name, std::vector<std::string> inputs,
             std::vector<AttrSpec> attrs, const std::string& doc, bool inplace,
             std::vector<std::string> scalar_inputs,
             std::function<absl::StatusOr<PlannedOp>(const std::string&, Inputs, AttrReader&,
                                                     const Tensor*)> plan) {
  ops.push_back({name, OpKind::kCompute, inputs, attrs, doc, false,
                 [name, plan](Inputs in, AttrReader& a) { return plan(name, in, a, nullptr); },
                 false, scalar_inputs});
  if (!inplace) return;
  std::vector<std::string> inplace_scalars;
  for (const std::string& s : scalar_inputs) {
    if (s != inputs[0]) inplace_scalars.push_back(s);
  }
  const std::string iname = name + "_";
  ops.push_back({iname, OpKind::kInPlace, inputs, attrs, "In-place " + name + " on self.", false,
                 [iname, plan](Inputs in, AttrReader& a) -> absl::StatusOr<PlannedOp> {
                   if (!in[0].defined() || in[0].is_wrapped_number()) {
                     return RuntimeError(iname, "self must be a tensor");
                   }
                   return plan(iname, in, a, &in[0]);
                 },
                 false, inplace_scalars});
}

}  // namespace

absl::StatusOr<PlannedOp> PlanMul(absl::string_view op, const Tensor& a, const Tensor& b) {
  return PlanBinary(std::string(op), BinaryOp::kMul, BinaryRule::kArith, a, b, nullptr);
}

absl::StatusOr<PlannedOp> PlanMaskedFill(absl::string_view op, const Tensor& self,
                                         const Tensor& mask, const Tensor& value,
                                         const Tensor* out) {
  // A uint8 mask is still taken, as torch 1.13 takes it (with a deprecation warning there).
  if (mask.dtype() != DType::kBool && mask.dtype() != DType::kUInt8) {
    return RuntimeError(op, absl::StrCat(op, " only supports boolean masks, but got mask with "
                                             "dtype ", DTypeName(mask.dtype())));
  }
  if (value.dim() != 0) {
    return RuntimeError(op, absl::StrCat(op, " only supports a 0-dimensional value tensor, but "
                                             "got tensor with ", value.dim(), " dimension(s)."));
  }
  TENSORD_RETURN_IF_ERROR(CheckNumberFits(op, value, self.dtype()));
  ElementwiseSpec spec{op};
  spec.out = out;
  spec.compute_dtype = self.dtype();
  spec.contiguous_output = true;  // torch: a contiguous clone of the expanded self, then filled
  spec.allow_internal_overlap = true;
  spec.keep_dtype = {true, false, false};
  return PlanElementwise(spec, {mask, value, self},
                         [](Backend& backend, IntList shape, const StridedRef& o, absl::Span<const StridedRef> ins) {
                           return backend.Where(shape, o, ins[0], ins[1], ins[2]);
                         });
}

void RegisterElementwiseOps(std::vector<OpDef>& ops) {
  const std::vector<std::string> self = {"self"};
  for (const UnaryDef& u : kUnaryOps) {
    const UnaryOp op = u.op;
    const UnaryRule rule = u.rule;
    const bool contiguous = u.contiguous_output;
    AddPair(ops, u.name, self, {}, absl::StrCat("Elementwise ", u.name, "."), u.has_inplace, {},
            [op, rule, contiguous](const std::string& name, Inputs in, AttrReader&,
                                   const Tensor* out) {
              return PlanUnary(name, op, rule, in[0], out, {}, contiguous);
            });
  }
  // Unary ops with arguments.
  AddPair(ops, "square", self, {}, "self * self (integers stay integers; bool gives int64).", true,
          {}, [](const std::string& name, Inputs in, AttrReader&, const Tensor* out)
                  -> absl::StatusOr<PlannedOp> {
            TENSORD_ASSIGN_OR_RETURN(Tensor two, WrapNumber(Scalar(int64_t{2})));
            return PlanBinary(name, BinaryOp::kPow, BinaryRule::kPow, in[0], two, out);
          });
  AddPair(ops, "round", self, {Opt("decimals", AttrType::kInt, "0")},
          "Rounds half to even; with decimals, to that many decimal places.", true, {},
          [](const std::string& name, Inputs in, AttrReader& a, const Tensor* out)
              -> absl::StatusOr<PlannedOp> {
            TENSORD_ASSIGN_OR_RETURN(int64_t decimals, a.Int("decimals", 0));
            if (decimals == 0) return PlanUnary(name, UnaryOp::kRound, UnaryRule::kNoBoolHalf, in[0], out);
            UnaryArgs args;
            args.a = Scalar(decimals);
            return PlanUnary(name, UnaryOp::kRoundDecimals, UnaryRule::kFloatNoHalf, in[0], out,
                             args);
          });
  for (const char* gelu : {"gelu"}) {
    AddPair(ops, gelu, self, {Opt("approximate", AttrType::kBool, "false", "the tanh form")},
            "Gaussian error linear unit.", true, {},
            [](const std::string& name, Inputs in, AttrReader& a, const Tensor* out)
                -> absl::StatusOr<PlannedOp> {
              TENSORD_ASSIGN_OR_RETURN(bool tanh, a.Bool("approximate", false));
              return PlanUnary(name, tanh ? UnaryOp::kGeluTanh : UnaryOp::kGelu,
                               UnaryRule::kFloatNoHalf, in[0], out);
            });
  }
  AddPair(ops, "leaky_relu", self, {Opt("negative_slope", AttrType::kScalar, "0.01")},
          "x if x > 0 else x * negative_slope.", true, {},
          [](const std::string& name, Inputs in, AttrReader& a, const Tensor* out)
              -> absl::StatusOr<PlannedOp> {
            UnaryArgs args;
            TENSORD_ASSIGN_OR_RETURN(args.a, a.GetScalar("negative_slope", Scalar(0.01)));
            return PlanUnary(name, UnaryOp::kLeakyRelu, UnaryRule::kFloatNoHalf, in[0], out, args);
          });
  AddPair(ops, "polygamma", self, {Req("n", AttrType::kInt, "the order (>= 0)")},
          "The n-th derivative of digamma.", true, {},
          [](const std::string& name, Inputs in, AttrReader& a, const Tensor* out)
              -> absl::StatusOr<PlannedOp> {
            TENSORD_ASSIGN_OR_RETURN(int64_t n, a.Int("n"));
            if (n < 0) {
              return RuntimeError(name, "polygamma(n, x) does not support negative n.");
            }
            UnaryArgs args;
            args.a = Scalar(n);
            args.has_a = true;
            return PlanUnary(name, UnaryOp::kPolygamma, UnaryRule::kFloatPromoteNoHalf, in[0],
                             out, args);
          });
  AddPair(ops, "logit", self, {Opt("eps", AttrType::kScalar, "None", "clamp to [eps, 1 - eps]")},
          "log(x / (1 - x)).", true, {},
          [](const std::string& name, Inputs in, AttrReader& a, const Tensor* out)
              -> absl::StatusOr<PlannedOp> {
            UnaryArgs args;
            if ((args.has_a = a.Has("eps"))) {
              TENSORD_ASSIGN_OR_RETURN(args.a, a.GetScalar("eps"));
            }
            return PlanUnary(name, UnaryOp::kLogit, UnaryRule::kFloatPromoteNoHalf, in[0], out,
                             args);
          });
  AddPair(ops, "softplus", self,
          {Opt("beta", AttrType::kScalar, "1"), Opt("threshold", AttrType::kScalar, "20")},
          "log(1 + exp(beta * x)) / beta, x where beta * x > threshold.", false, {},
          [](const std::string& name, Inputs in, AttrReader& a, const Tensor* out)
              -> absl::StatusOr<PlannedOp> {
            UnaryArgs args;
            TENSORD_ASSIGN_OR_RETURN(args.a, a.GetScalar("beta", Scalar(int64_t{1})));
            TENSORD_ASSIGN_OR_RETURN(args.b, a.GetScalar("threshold", Scalar(int64_t{20})));
            return PlanUnary(name, UnaryOp::kSoftplus, UnaryRule::kFloatNoHalf, in[0], out, args);
          });
  AddPair(ops, "elu", self,
          {Opt("alpha", AttrType::kScalar, "1"), Opt("scale", AttrType::kScalar, "1"),
           Opt("input_scale", AttrType::kScalar, "1")},
          "x * scale for x > 0, else (exp(x * input_scale) - 1) * alpha * scale (selu and celu "
          "are elu with their constants).",
          true, {},
          [](const std::string& name, Inputs in, AttrReader& a, const Tensor* out)
              -> absl::StatusOr<PlannedOp> {
            UnaryArgs args;
            TENSORD_ASSIGN_OR_RETURN(args.a, a.GetScalar("alpha", Scalar(int64_t{1})));
            TENSORD_ASSIGN_OR_RETURN(args.b, a.GetScalar("scale", Scalar(int64_t{1})));
            TENSORD_ASSIGN_OR_RETURN(args.c, a.GetScalar("input_scale", Scalar(int64_t{1})));
            return PlanUnary(name, UnaryOp::kElu, UnaryRule::kFloatNoHalf, in[0], out, args);
          });
  for (const char* n : {"hardshrink", "softshrink"}) {
    const bool hard = n[0] == 'h';
    AddPair(ops, n, self, {Opt("lambd", AttrType::kScalar, "0.5")},
            hard ? "0 where |x| <= lambd, else x." : "x - lambd, x + lambd, or 0 near zero.",
            false, {},
            [hard](const std::string& name, Inputs in, AttrReader& a, const Tensor* out)
                -> absl::StatusOr<PlannedOp> {
              UnaryArgs args;
              TENSORD_ASSIGN_OR_RETURN(args.a, a.GetScalar("lambd", Scalar(0.5)));
              if (!hard && args.a.to_double() < 0) {
                return RuntimeError(name, absl::StrCat("lambda must be greater or equal to 0, "
                                                       "but found to be ",
                                                       args.a.to_double(), "."));
              }
              return PlanUnary(name, hard ? UnaryOp::kHardshrink : UnaryOp::kSoftshrink,
                               UnaryRule::kFloatNoHalf, in[0], out, args);
            });
  }
  AddPair(ops, "nan_to_num", self,
          {Opt("nan", AttrType::kScalar, "0"), Opt("posinf", AttrType::kScalar, "dtype max"),
           Opt("neginf", AttrType::kScalar, "dtype lowest")},
          "NaN, +inf and -inf replaced by finite values.", true, {},
          [](const std::string& name, Inputs in, AttrReader& a, const Tensor* out)
              -> absl::StatusOr<PlannedOp> {
            UnaryArgs args;
            if ((args.has_a = a.Has("nan"))) {
              TENSORD_ASSIGN_OR_RETURN(args.a, a.GetScalar("nan"));
            }
            if ((args.has_b = a.Has("posinf"))) {
              TENSORD_ASSIGN_OR_RETURN(args.b, a.GetScalar("posinf"));
            }
            if ((args.has_c = a.Has("neginf"))) {
              TENSORD_ASSIGN_OR_RETURN(args.c, a.GetScalar("neginf"));
            }
            return PlanUnary(name, UnaryOp::kNanToNum, UnaryRule::kAll, in[0], out, args);
          });
  // clamp: bounds are numbers, tensors or None; the result type counts them all (torch 1.13).
  for (const char* cname : {"clamp", "clip"}) {
    AddPair(ops, cname, {"self", "min", "max"}, {},
            "Each element limited to [min, max] (either bound may be None; NaN propagates).",
            true, {"min", "max"},
            [](const std::string& name, Inputs in, AttrReader& a, const Tensor* out)
                -> absl::StatusOr<PlannedOp> {
              const Tensor& x = in[0];
              const Tensor &lo = in[1], &hi = in[2];
              if (!lo.defined() && !hi.defined()) {
                return RuntimeError(name, "At least one of 'min' or 'max' must not be None");
              }
              ElementwiseSpec spec{name};
              spec.out = out;
              std::vector<Tensor> operands = {x};
              if (lo.defined()) operands.push_back(lo);
              if (hi.defined()) operands.push_back(hi);
              spec.compute_dtype = ResultType(operands);
              const bool has_lo = lo.defined(), has_hi = hi.defined();
              if ((!has_lo || lo.is_wrapped_number()) && (!has_hi || hi.is_wrapped_number())) {
                // Number bounds: a unary kernel with the bounds as arguments.
                if (*spec.compute_dtype == DType::kFloat16) {
                  return RuntimeError(name, "\"clamp_scalar_cpu\" not implemented for 'Half'");
                }
                spec.convert_self_first = true;  // as torch's clamp: self.to(result type)
                TENSORD_RETURN_IF_ERROR(CheckNumberFits(name, lo, *spec.compute_dtype));
                TENSORD_RETURN_IF_ERROR(CheckNumberFits(name, hi, *spec.compute_dtype));
                UnaryArgs args;
                if (has_lo) args.a = ScalarOf(lo), args.has_a = true;
                if (has_hi) args.b = ScalarOf(hi), args.has_b = true;
                return PlanElementwise(spec, {x},
                                       [args](Backend& backend, IntList shape, const StridedRef& o,
                                              absl::Span<const StridedRef> ins) {
                                         return backend.Unary(UnaryOp::kClamp, shape, o, ins[0], args);
                                       });
              }
              return PlanElementwise(
                  spec, {x, has_lo ? lo : x, has_hi ? hi : x},
                  [has_lo, has_hi](Backend& backend, IntList shape, const StridedRef& o,
                                   absl::Span<const StridedRef> ins) {
                    return backend.ClampTensor(shape, o, ins[0], ins[1], ins[2], has_lo, has_hi);
                  });
            });
    // Either bound may be None (clamp and clamp_).
    for (size_t i = ops.size() - 2; i < ops.size(); ++i) ops[i].optional_inputs = {"min", "max"};
  }
  for (const char* cname : {"clamp_min", "clamp_max"}) {
    const bool is_min = std::string(cname) == "clamp_min";
    AddPair(ops, cname, {"self", is_min ? "min" : "max"}, {}, "clamp with one bound.", true,
            {is_min ? "min" : "max"},
            [is_min](const std::string& name, Inputs in, AttrReader&, const Tensor* out)
                -> absl::StatusOr<PlannedOp> {
              ElementwiseSpec spec{name};
              spec.out = out;
              spec.compute_dtype = ResultType({in[0], in[1]});
              if (*spec.compute_dtype == DType::kFloat16 && in[1].is_wrapped_number()) {
                return DTypeNotImplemented(name, DType::kFloat16);
              }
              if (in[1].is_wrapped_number()) {  // torch: a unary op on self.to(result type)
                spec.layout_operands = 1;
                spec.convert_self_first = true;
              }
              return PlanElementwise(spec, {in[0], in[1]},
                                     [is_min](Backend& backend, IntList shape, const StridedRef& o,
                                              absl::Span<const StridedRef> ins) {
                                       return backend.ClampTensor(shape, o, ins[0], ins[1], ins[1], is_min,
                                                        !is_min);
                                     });
            });
  }

  // Binary ops: both operands may be numbers (2 - t is sub with self a number).
  const std::vector<std::string> ab = {"self", "other"};
  for (const BinaryDef& b : kBinaryOps) {
    const BinaryOp op = b.op;
    const BinaryRule rule = b.rule;
    AddPair(ops, b.name, ab, {}, absl::StrCat("Elementwise ", b.name, ", broadcasting."),
            b.has_inplace, ab,
            [op, rule](const std::string& name, Inputs in, AttrReader&, const Tensor* out) {
              return PlanBinary(name, op, rule, in[0], in[1], out);
            });
  }
  for (const char* name : {"add", "sub", "subtract"}) {
    const BinaryOp op = std::string(name) == "add" ? BinaryOp::kAdd : BinaryOp::kSub;
    AddPair(ops, name, ab, {Opt("alpha", AttrType::kScalar, "1")}, "self + alpha * other.", true,
            ab,
            [op](const std::string& n, Inputs in, AttrReader& a, const Tensor* out)
                -> absl::StatusOr<PlannedOp> {
              TENSORD_ASSIGN_OR_RETURN(Scalar alpha, a.GetScalar("alpha", Scalar(int64_t{1})));
              return PlanBinary(n, op, BinaryRule::kArith, in[0], in[1], out, alpha);
            });
  }
  for (const char* name : {"div", "divide"}) {
    AddPair(ops, name, ab, {Opt("rounding_mode", AttrType::kInt, "None",
                                "None: true division; 1: 'trunc'; 2: 'floor'")},
            "self / other: true division, or rounded with rounding_mode.", true, ab,
            [](const std::string& n, Inputs in, AttrReader& a, const Tensor* out)
                -> absl::StatusOr<PlannedOp> {
              TENSORD_ASSIGN_OR_RETURN(auto mode, a.OptionalInt("rounding_mode"));
              if (!mode) return PlanBinary(n, BinaryOp::kDiv, BinaryRule::kTrueDiv, in[0], in[1], out);
              if (*mode != 1 && *mode != 2) {
                return RuntimeError(n, absl::StrCat("div expected rounding_mode to be one of None, "
                                                  "'trunc', or 'floor' but found ", *mode));
              }
              return PlanBinary(n, *mode == 1 ? BinaryOp::kDivTrunc : BinaryOp::kDivFloor,
                                BinaryRule::kIntDiv, in[0], in[1], out);
            });
  }
  // Ternary ops.
  AddPair(ops, "where", {"condition", "self", "other"}, {},
          "self where condition is true, else other (broadcast; numbers allowed).", false,
          {"self", "other"},
          [](const std::string& name, Inputs in, AttrReader&, const Tensor* out)
              -> absl::StatusOr<PlannedOp> {
            if (in[0].dtype() != DType::kBool && in[0].dtype() != DType::kUInt8) {
              return RuntimeError(name, absl::StrCat("where expected condition to be a boolean "
                                                     "tensor, but got a tensor with dtype ",
                                                     DTypeLegacyName(in[0].dtype())));
            }
            ElementwiseSpec spec{name};
            spec.out = out;
            const DType common = ResultType({in[1], in[2]});
            TENSORD_RETURN_IF_ERROR(CheckNumberFits(name, in[1], common));
            TENSORD_RETURN_IF_ERROR(CheckNumberFits(name, in[2], common));
            // The condition keeps its dtype: convert self/other only.
            Tensor cond = in[0];
            std::vector<Tensor> operands = {cond, in[1], in[2]};
            spec.compute_dtype = common;
            spec.keep_dtype = {true, false, false};
            return PlanElementwise(spec, operands,
                                   [](Backend& backend, IntList shape, const StridedRef& o,
                                      absl::Span<const StridedRef> ins) {
                                     return backend.Where(shape, o, ins[0], ins[1], ins[2]);
                                   });
          });
  AddPair(ops, "lerp", {"self", "end", "weight"}, {},
          "self + weight * (end - self) (floating dtypes; weight a number or a tensor).", true,
          {"weight"},
          [](const std::string& name, Inputs in, AttrReader&, const Tensor* out)
              -> absl::StatusOr<PlannedOp> {
            const DType d = in[0].dtype();
            if (in[1].dtype() != d) {
              return RuntimeError(name, absl::StrCat("expected dtype ", DTypeName(d),
                                                     " for `end` but got dtype ",
                                                     DTypeName(in[1].dtype())));
            }
            if (!in[2].is_wrapped_number() && in[2].dtype() != d) {
              return RuntimeError(name, absl::StrCat("expected dtype ", DTypeName(d),
                                                     " for `weight` but got dtype ",
                                                     DTypeName(in[2].dtype())));
            }
            if (!IsFloating(d) || d == DType::kFloat16) return DTypeNotImplemented(name, d);
            ElementwiseSpec spec{name};
            spec.out = out;
            spec.compute_dtype = d;
            if (in[2].is_wrapped_number()) spec.layout_operands = 2;  // a scalar weight
            return PlanElementwise(spec, {in[0], in[1], in[2]},
                                   [](Backend& backend, IntList shape, const StridedRef& o,
                                      absl::Span<const StridedRef> ins) {
                                     return backend.Lerp(shape, o, ins[0], ins[1], ins[2]);
                                   });
          });
  for (const char* cname : {"addcmul", "addcdiv"}) {
    const bool divide = std::string(cname) == "addcdiv";
    AddPair(ops, cname, {"self", "tensor1", "tensor2"}, {Opt("value", AttrType::kScalar, "1")},
            divide ? "self + value * tensor1 / tensor2." : "self + value * tensor1 * tensor2.",
            true, {},
            [divide](const std::string& name, Inputs in, AttrReader& a, const Tensor* out)
                -> absl::StatusOr<PlannedOp> {
              TENSORD_ASSIGN_OR_RETURN(Scalar value, a.GetScalar("value", Scalar(int64_t{1})));
              const DType common = ResultType({in[0], in[1], in[2]});
              if (divide && IsIntegral(common, true)) {
                return RuntimeError(
                    name, "Integer division with addcdiv is no longer supported, and in a future "
                          "release addcdiv will perform a true division of tensor1 and tensor2. "
                          "The historic addcdiv behavior can be implemented as (input + value * "
                          "torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and "
                          "as (input + value * tensor1 / tensor2) for float inputs. The future "
                          "addcdiv behavior is just the latter implementation: (input + value * "
                          "tensor1 / tensor2), for all dtypes.");
              }
              if (common == DType::kFloat16 || (divide && common == DType::kBool) ||
                  (!divide && common == DType::kBool)) {
                return DTypeNotImplemented(name, common);
              }
              if (IsIntegral(common, true) && value.is_float()) {
                return RuntimeError(name, "For integral input tensors, argument value must not "
                                          "be a floating point number.");
              }
              TENSORD_RETURN_IF_ERROR(CheckScalarFits(name, value, common));
              ElementwiseSpec spec{name};
              spec.out = out;
              spec.compute_dtype = common;
              return PlanElementwise(spec, {in[0], in[1], in[2]},
                                     [divide, value](Backend& backend, IntList shape, const StridedRef& o,
                                                     absl::Span<const StridedRef> ins) {
                                       return backend.Addc(divide, shape, o, ins[0], ins[1], ins[2], value);
                                     });
            });
  }
}

}  // namespace tensord::engine
