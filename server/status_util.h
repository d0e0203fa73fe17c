// The one place where engine statuses become gRPC statuses and proto errors.
#ifndef TENSORD_SERVER_STATUS_UTIL_H_
#define TENSORD_SERVER_STATUS_UTIL_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "grpcpp/support/status.h"
#include "tensord/v1/tensord.pb.h"

namespace tensord::server {

// Same code and message. The Python exception class rides in the trailing metadata key
// "tensord-error-kind" (set by the service), and in v1::Error.kind.
grpc::Status ToGrpcStatus(const absl::Status& status);
// Fills `error` (code, message, kind, op_index and a new error_id).
void ToProtoError(const absl::Status& status, int op_index, v1::Error* error);
// Logs an op's error (as ToProtoError filled it) with the op and the session's public id.
// Not under a lock: a log write may block.
void LogOpError(const v1::Error& error, absl::string_view op,
                absl::string_view session_public_id);
// Logs an RPC's error (method, session, code, peer) under a new error id, and returns the id.
std::string LogRpcError(const absl::Status& status, absl::string_view method,
                        absl::string_view session_public_id, absl::string_view peer);

}  // namespace tensord::server

#endif  // TENSORD_SERVER_STATUS_UTIL_H_
