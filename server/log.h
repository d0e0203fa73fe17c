// The server's log: one line per event on stderr, as text or as one JSON object per line
// (--log-format), filtered by level (--log-level).
//
//   Log(LogLevel::kInfo, "session_opened", {{"session", "tensord-0/7"}, {"peer", peer}});
//
// json:  {"time":"2026-11-24T00:10:02.123Z","level":"info","event":"session_opened",
//         "session":"tensord-0/7","peer":"ipv4:10.0.0.5:41234"}
// text:  2026-11-24T00:10:02.123Z info session_opened session=tensord-0/7 peer=ipv4:10.0.0.5:…
//
// A field is a session's public id at most, never its secret (SplitSessionId); messages from
// clients are cut to 200 bytes. One write per line, so lines of concurrent threads never mix.
#ifndef TENSORD_SERVER_LOG_H_
#define TENSORD_SERVER_LOG_H_

#include <cstdint>
#include <initializer_list>
#include <string>
#include <variant>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace tensord::server {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarning = 2, kError = 3 };
enum class LogFormat { kText, kJson };

// "debug", "info", "warning" (or "warn"), "error"; "text", "json".
absl::Status SetLogLevel(absl::string_view level);
absl::Status SetLogFormat(absl::string_view format);
bool LogEnabled(LogLevel level);

struct LogField {
  LogField(absl::string_view key, absl::string_view value) : key(key), value(std::string(value)) {}
  LogField(absl::string_view key, const char* value) : key(key), value(std::string(value)) {}
  LogField(absl::string_view key, const std::string& value) : key(key), value(value) {}
  LogField(absl::string_view key, int64_t value) : key(key), value(value) {}
  LogField(absl::string_view key, int value) : key(key), value(int64_t{value}) {}
  LogField(absl::string_view key, uint64_t value) : key(key), value(static_cast<int64_t>(value)) {}
  LogField(absl::string_view key, double value) : key(key), value(value) {}
  LogField(absl::string_view key, bool value) : key(key), value(value) {}

  absl::string_view key;
  std::variant<std::string, int64_t, double, bool> value;
};

void Log(LogLevel level, absl::string_view event, std::initializer_list<LogField> fields);

// The session id's public part ("tensord-0/7"), or "" when `session_id` is not an id.
std::string PublicSessionId(absl::string_view session_id);

// A new error id: 12 hex digits, unique in practice. Every error a client receives carries one
// (trailing metadata `tensord-error-id`, OpError.error_id) that its log line carries too.
std::string NewErrorId();

}  // namespace tensord::server

#endif  // TENSORD_SERVER_LOG_H_
