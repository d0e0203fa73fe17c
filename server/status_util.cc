#include "server/status_util.h"

#include "engine/core/errors.h"
#include "server/log.h"

namespace tensord::server {

grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()),
                      std::string(status.message()));
}

namespace {

// Client mistakes are routine (info); the server's own failures are errors.
LogLevel LevelOf(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kInternal:
    case absl::StatusCode::kUnknown:
    case absl::StatusCode::kDataLoss:
      return LogLevel::kError;
    case absl::StatusCode::kResourceExhausted:
      return LogLevel::kWarning;
    default:
      return LogLevel::kInfo;
  }
}

}  // namespace

void ToProtoError(const absl::Status& status, int op_index, v1::Error* error) {
  error->set_code(static_cast<int32_t>(status.code()));
  error->set_message(std::string(status.message()));
  error->set_kind(engine::ErrorKind(status));
  error->set_op_index(op_index);
  error->set_error_id(NewErrorId());
}

void LogOpError(const v1::Error& error, absl::string_view op,
                absl::string_view session_public_id) {
  const auto code = static_cast<absl::StatusCode>(error.code());
  Log(LevelOf(code), "op_error",
      {{"error_id", error.error_id()}, {"session", session_public_id}, {"op", op},
       {"op_index", error.op_index()}, {"code", absl::StatusCodeToString(code)},
       {"kind", error.kind()}, {"message", error.message()}});
}

std::string LogRpcError(const absl::Status& status, absl::string_view method,
                        absl::string_view session_public_id, absl::string_view peer) {
  std::string id = NewErrorId();
  Log(LevelOf(status.code()), "rpc_error",
      {{"error_id", id}, {"method", method}, {"session", session_public_id},
       {"code", absl::StatusCodeToString(status.code())}, {"kind", engine::ErrorKind(status)},
       {"peer", peer}, {"message", status.message()}});
  return id;
}

}  // namespace tensord::server
