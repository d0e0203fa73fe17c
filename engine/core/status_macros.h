// The few status helpers Abseil 20220623 lacks. Defined once, used everywhere.
#ifndef TENSORD_ENGINE_CORE_STATUS_MACROS_H_
#define TENSORD_ENGINE_CORE_STATUS_MACROS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define TENSORD_CONCAT_INNER_(a, b) a##b
#define TENSORD_CONCAT_(a, b) TENSORD_CONCAT_INNER_(a, b)

// Returns the status from the enclosing function if `expr` is not OK.
#define TENSORD_RETURN_IF_ERROR(expr)                  \
  do {                                                 \
    ::absl::Status tensord_status_ = (expr);           \
    if (!tensord_status_.ok()) return tensord_status_; \
  } while (0)

// `TENSORD_ASSIGN_OR_RETURN(auto x, MakeX());` declares/assigns `x` from a StatusOr or
// returns its error.
#define TENSORD_ASSIGN_OR_RETURN(lhs, expr) \
  TENSORD_ASSIGN_OR_RETURN_IMPL_(TENSORD_CONCAT_(tensord_statusor_, __LINE__), lhs, expr)
#define TENSORD_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, expr) \
  auto statusor = (expr);                                   \
  if (!statusor.ok()) return std::move(statusor).status();  \
  lhs = std::move(statusor).value()

#endif  // TENSORD_ENGINE_CORE_STATUS_MACROS_H_
