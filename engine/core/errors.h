// Error construction. Every error names the op and the offending values.
//
// Status codes follow the gRPC vocabulary; the payload kErrorKindUrl additionally records the
// Python exception class PyTorch raises for the same mistake, so clients can mirror it:
//   IndexError   -> OUT_OF_RANGE       (dims and indices out of range)
//   ValueError   -> INVALID_ARGUMENT   (+ kind payload)
//   TypeError    -> INVALID_ARGUMENT   (+ kind payload)
//   NotImplementedError -> INVALID_ARGUMENT (+ kind payload)
//   RuntimeError -> INVALID_ARGUMENT   (everything else about a bad argument)
#ifndef TENSORD_ENGINE_CORE_ERRORS_H_
#define TENSORD_ENGINE_CORE_ERRORS_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "engine/core/dtype.h"

namespace tensord::engine {

inline constexpr char kErrorKindUrl[] = "type.tensord.dev/error_kind";

// "[2, 3, 4]", the way PyTorch prints sizes in its messages.
std::string FormatList(absl::Span<const int64_t> values);

absl::Status IndexError(absl::string_view op, absl::string_view message);
absl::Status ValueError(absl::string_view op, absl::string_view message);
absl::Status TypeError(absl::string_view op, absl::string_view message);
// NotImplementedError: an argument torch accepts in form but has no implementation for
// (F.pad's modes on unsupported ranks). INVALID_ARGUMENT.
absl::Status NotImplementedError(absl::string_view op, absl::string_view message);
absl::Status RuntimeError(absl::string_view op, absl::string_view message);
absl::Status ResourceError(absl::string_view op, absl::string_view message);

// The Python exception class name for a status: "IndexError", "ValueError", "TypeError",
// "RuntimeError" (the default for other non-OK codes), or "" for OK.
std::string ErrorKind(const absl::Status& status);

// `to` with `from`'s payloads (its Python exception class among them): errors derived from a
// root cause (a failed kernel, a poisoned input) raise as the cause did.
absl::Status WithPayloadsOf(const absl::Status& from, absl::Status to);

// `status` as an error of op `op`: the op name that leads the message (the name of whatever
// inner op or helper raised it: `full` for `zeros`, `device` for a bad device) becomes `op`, or
// `op` is put in front when the message names none. Errors then name the op the client called.
absl::Status NameOp(absl::string_view op, const absl::Status& status);

// torch's "\"<op>_cpu\" not implemented for '<Dtype>'" (RuntimeError): a dtype an op has no CPU
// kernel for.
absl::Status DTypeNotImplemented(absl::string_view op, DType dtype);
// The same for a kernel torch names otherwise: "\"<kernel>\" not implemented for '<Dtype>'".
absl::Status KernelNotImplemented(absl::string_view op, absl::string_view kernel, DType dtype);

// An index of gather/scatter outside [0, size) along `dim`: torch's message, an IndexError for
// the index_add/index_copy/index_fill family (built on scatter here) and a RuntimeError for the
// others, as torch raises them.
absl::Status IndexOutOfBoundsForDim(absl::string_view op, int64_t index, int64_t dim,
                                    int64_t size);

// index_select's index outside [0, size) along `dim` of a tensor of `ndim` dims, as torch
// 1.13's CPU kernels raise it: along dim 1 of two dims or more (their dim-1 kernel), a
// RuntimeError naming the index and size; else an IndexError. Negative indices are out of range.
absl::Status IndexSelectOutOfRange(int64_t index, int64_t dim, int64_t ndim, int64_t size);

// The standard "Dimension out of range" error (IndexError).
absl::Status DimOutOfRange(absl::string_view op, int64_t dim, int64_t ndim);

}  // namespace tensord::engine

#endif  // TENSORD_ENGINE_CORE_ERRORS_H_
