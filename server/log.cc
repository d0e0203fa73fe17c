#include "server/log.h"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <random>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "server/session_store.h"

namespace tensord::server {
namespace {

std::atomic<int> min_level{static_cast<int>(LogLevel::kInfo)};
std::atomic<LogFormat> format{LogFormat::kText};

const char* LevelName(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug: return "debug";
    case LogLevel::kInfo: return "info";
    case LogLevel::kWarning: return "warning";
    case LogLevel::kError: return "error";
  }
  return "info";
}

// JSON string contents: quotes, backslashes and control characters escaped; bytes that are not
// UTF-8 pass as they are (the values are ours or cut client text).
void AppendJsonString(std::string* out, absl::string_view s) {
  out->push_back('"');
  for (char c : s) {
    switch (c) {
      case '"': out->append("\\\""); break;
      case '\\': out->append("\\\\"); break;
      case '\n': out->append("\\n"); break;
      case '\r': out->append("\\r"); break;
      case '\t': out->append("\\t"); break;
      default:
        // Control bytes and bytes beyond ASCII escaped: every line stays valid JSON (a cut
        // value may end inside a UTF-8 sequence; client text may be any bytes).
        if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) {
          absl::StrAppendFormat(out, "\\u%04x", static_cast<unsigned char>(c));
        } else {
          out->push_back(c);
        }
    }
  }
  out->push_back('"');
}

// Text values: bare when they are printable ASCII with no space, quote or '=', else quoted with
// C escapes (no control byte from a client reaches the terminal or breaks a line).
void AppendTextValue(std::string* out, absl::string_view s) {
  bool bare = !s.empty();
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u >= 0x7f || c == '"' || c == '=' || c == '\\') bare = false;
  }
  if (bare) {
    out->append(s.data(), s.size());
  } else {
    absl::StrAppend(out, "\"", absl::CHexEscape(s), "\"");
  }
}

constexpr size_t kMaxValueBytes = 200;

}  // namespace

absl::Status SetLogLevel(absl::string_view level) {
  const std::string l = absl::AsciiStrToLower(level);
  LogLevel parsed;
  if (l == "debug") {
    parsed = LogLevel::kDebug;
  } else if (l == "info") {
    parsed = LogLevel::kInfo;
  } else if (l == "warning" || l == "warn") {
    parsed = LogLevel::kWarning;
  } else if (l == "error") {
    parsed = LogLevel::kError;
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("--log-level=", level, ": expected debug, info, warning or error"));
  }
  min_level.store(static_cast<int>(parsed));
  return absl::OkStatus();
}

absl::Status SetLogFormat(absl::string_view f) {
  if (f == "text") {
    format.store(LogFormat::kText);
  } else if (f == "json") {
    format.store(LogFormat::kJson);
  } else {
    return absl::InvalidArgumentError(absl::StrCat("--log-format=", f, ": expected text or json"));
  }
  return absl::OkStatus();
}

bool LogEnabled(LogLevel level) { return static_cast<int>(level) >= min_level.load(); }

void Log(LogLevel level, absl::string_view event, std::initializer_list<LogField> fields) {
  if (!LogEnabled(level)) return;
  const std::string time =
      absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", absl::Now(), absl::UTCTimeZone());
  std::string line;
  line.reserve(160);
  const bool json = format.load() == LogFormat::kJson;
  if (json) {
    absl::StrAppend(&line, "{\"time\":\"", time, "\",\"level\":\"", LevelName(level),
                    "\",\"event\":");
    AppendJsonString(&line, event);
  } else {
    absl::StrAppend(&line, time, " ", LevelName(level), " ", event);
  }
  for (const LogField& field : fields) {
    if (json) {
      line.push_back(',');
      AppendJsonString(&line, field.key);
      line.push_back(':');
    } else {
      absl::StrAppend(&line, " ", field.key, "=");
    }
    if (const auto* s = std::get_if<std::string>(&field.value)) {
      const absl::string_view v = absl::string_view(*s).substr(0, kMaxValueBytes);
      json ? AppendJsonString(&line, v) : AppendTextValue(&line, v);
    } else if (const auto* i = std::get_if<int64_t>(&field.value)) {
      absl::StrAppend(&line, *i);
    } else if (const auto* d = std::get_if<double>(&field.value)) {
      absl::StrAppendFormat(&line, "%.6g", *d);
    } else {
      line.append(std::get<bool>(field.value) ? "true" : "false");
    }
  }
  if (json) line.push_back('}');
  line.push_back('\n');
  // One write: lines of concurrent threads never interleave (stderr is unbuffered).
  [[maybe_unused]] ssize_t n = write(STDERR_FILENO, line.data(), line.size());
}

std::string PublicSessionId(absl::string_view session_id) {
  const std::optional<SessionIdParts> parts = SplitSessionId(session_id);
  return parts ? std::string(parts->public_id) : std::string();
}

std::string NewErrorId() {
  thread_local std::mt19937_64 generator{std::random_device{}()};
  return absl::StrFormat("%012x", generator() & 0xffffffffffffULL);
}

}  // namespace tensord::server
