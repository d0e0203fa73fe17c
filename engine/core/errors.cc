#include "engine/core/errors.h"

#include "absl/strings/ascii.h"
#include "absl/strings/cord.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace tensord::engine {
namespace {

absl::Status Make(absl::StatusCode code, absl::string_view op, absl::string_view message,
                  const char* kind) {
  absl::Status status(code, absl::StrCat(op, ": ", message));
  if (kind != nullptr) status.SetPayload(kErrorKindUrl, absl::Cord(kind));
  return status;
}

}  // namespace

std::string FormatList(absl::Span<const int64_t> values) {
  return absl::StrCat("[", absl::StrJoin(values, ", "), "]");
}

absl::Status IndexError(absl::string_view op, absl::string_view message) {
  return Make(absl::StatusCode::kOutOfRange, op, message, "IndexError");
}
absl::Status ValueError(absl::string_view op, absl::string_view message) {
  return Make(absl::StatusCode::kInvalidArgument, op, message, "ValueError");
}
absl::Status TypeError(absl::string_view op, absl::string_view message) {
  return Make(absl::StatusCode::kInvalidArgument, op, message, "TypeError");
}
absl::Status NotImplementedError(absl::string_view op, absl::string_view message) {
  return Make(absl::StatusCode::kInvalidArgument, op, message, "NotImplementedError");
}
absl::Status RuntimeError(absl::string_view op, absl::string_view message) {
  return Make(absl::StatusCode::kInvalidArgument, op, message, nullptr);
}
absl::Status ResourceError(absl::string_view op, absl::string_view message) {
  return Make(absl::StatusCode::kResourceExhausted, op, message, nullptr);
}

std::string ErrorKind(const absl::Status& status) {
  if (status.ok()) return "";
  if (auto kind = status.GetPayload(kErrorKindUrl)) return std::string(*kind);
  if (status.code() == absl::StatusCode::kOutOfRange) return "IndexError";
  return "RuntimeError";
}

absl::Status IndexSelectOutOfRange(int64_t index, int64_t dim, int64_t ndim, int64_t size) {
  if (dim == 1 && ndim > 1) {
    return RuntimeError("index_select", absl::StrCat("INDICES element is out of DATA bounds, id=",
                                                     index, " axis_dim=", size));
  }
  return IndexError("index_select", "index out of range in self");
}

absl::Status IndexOutOfBoundsForDim(absl::string_view op, int64_t index, int64_t dim,
                                    int64_t size) {
  const std::string message = absl::StrCat("index ", index, " is out of bounds for dimension ",
                                           dim, " with size ", size);
  // Advanced indexing ("index", "index_put_") and index_add_/index_copy_/index_fill_ raise
  // IndexError; gather and scatter RuntimeError.
  return op == "index" || absl::StartsWith(op, "index_") ? IndexError(op, message)
                                                         : RuntimeError(op, message);
}

absl::Status DimOutOfRange(absl::string_view op, int64_t dim, int64_t ndim) {
  return IndexError(op, absl::StrCat("Dimension out of range (expected to be in range of [", -ndim,
                                     ", ", ndim - 1, "], but got ", dim, ")"));
}

absl::Status NameOp(absl::string_view op, const absl::Status& status) {
  if (status.ok()) return status;
  absl::string_view message = status.message();
  if (absl::StartsWith(message, op) && absl::StartsWith(message.substr(op.size()), ": ")) {
    return status;
  }
  // A leading "name: " where name is an identifier (dots allowed: "max.dim").
  size_t n = 0;
  while (n < message.size() &&
         (absl::ascii_isalnum(message[n]) || message[n] == '_' || message[n] == '.')) {
    ++n;
  }
  if (n > 0 && absl::StartsWith(message.substr(n), ": ")) message.remove_prefix(n + 2);
  return WithPayloadsOf(status, absl::Status(status.code(), absl::StrCat(op, ": ", message)));
}

absl::Status WithPayloadsOf(const absl::Status& from, absl::Status to) {
  from.ForEachPayload([&to](absl::string_view url, const absl::Cord& payload) {
    to.SetPayload(url, payload);
  });
  return to;
}

absl::Status DTypeNotImplemented(absl::string_view op, DType dtype) {
  return KernelNotImplemented(op, absl::StrCat(op, "_cpu"), dtype);
}

absl::Status KernelNotImplemented(absl::string_view op, absl::string_view kernel, DType dtype) {
  return RuntimeError(op, absl::StrCat("\"", kernel, "\" not implemented for '",
                                       DTypeLegacyName(dtype), "'"));
}

}  // namespace tensord::engine
