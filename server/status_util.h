// The one place where engine statuses become gRPC statuses and proto errors.
#ifndef TENSORD_SERVER_STATUS_UTIL_H_
#define TENSORD_SERVER_STATUS_UTIL_H_

#include "absl/status/status.h"
#include "grpcpp/support/status.h"
#include "tensord/v1/tensord.pb.h"

namespace tensord::server {

// Same code and message. The Python exception class rides in the trailing metadata key
// "tensord-error-kind" (set by the service), and in v1::Error.kind.
grpc::Status ToGrpcStatus(const absl::Status& status);
// Fills `error` (code, message, kind, op_index).
void ToProtoError(const absl::Status& status, int op_index, v1::Error* error);

}  // namespace tensord::server

#endif  // TENSORD_SERVER_STATUS_UTIL_H_
