// Status matchers and macros for tests (Abseil 20220623 ships none). Defined once, here.
#ifndef TENSORD_TESTS_TEST_UTIL_H_
#define TENSORD_TESTS_TEST_UTIL_H_

#include <ostream>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tensord::testing {

inline const absl::Status& GetStatus(const absl::Status& s) { return s; }
template <typename T>
const absl::Status& GetStatus(const absl::StatusOr<T>& s) {
  return s.status();
}

// EXPECT_THAT(status_or_statusor, StatusIs(absl::StatusCode::kOutOfRange));
MATCHER_P(StatusIs, code, "has status code " + absl::StatusCodeToString(code)) {
  const absl::Status& s = GetStatus(arg);
  if (s.code() != code) {
    *result_listener << "whose status is " << s;
    return false;
  }
  return true;
}

// Also requires the message to contain `substring`.
MATCHER_P2(StatusIsWith, code, substring,
           "has status code " + absl::StatusCodeToString(code) + " and a message containing \"" +
               std::string(substring) + "\"") {
  const absl::Status& s = GetStatus(arg);
  if (s.code() != code || s.message().find(substring) == absl::string_view::npos) {
    *result_listener << "whose status is " << s;
    return false;
  }
  return true;
}

MATCHER(IsOk, "is OK") {
  const absl::Status& s = GetStatus(arg);
  if (!s.ok()) *result_listener << "whose status is " << s;
  return s.ok();
}

}  // namespace tensord::testing

#define TENSORD_TEST_CONCAT_INNER_(a, b) a##b
#define TENSORD_TEST_CONCAT_(a, b) TENSORD_TEST_CONCAT_INNER_(a, b)

#define EXPECT_OK(expr) EXPECT_THAT((expr), ::tensord::testing::IsOk())
#define ASSERT_OK(expr) ASSERT_THAT((expr), ::tensord::testing::IsOk())
#define ASSERT_OK_AND_ASSIGN(lhs, expr) \
  ASSERT_OK_AND_ASSIGN_IMPL_(TENSORD_TEST_CONCAT_(statusor_, __LINE__), lhs, expr)
#define ASSERT_OK_AND_ASSIGN_IMPL_(statusor, lhs, expr) \
  auto statusor = (expr);                               \
  ASSERT_TRUE(statusor.ok()) << statusor.status();      \
  lhs = std::move(statusor).value()

#endif  // TENSORD_TESTS_TEST_UTIL_H_
