#include "server/status_util.h"

#include "engine/core/errors.h"

namespace tensord::server {

grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()),
                      std::string(status.message()));
}

void ToProtoError(const absl::Status& status, int op_index, v1::Error* error) {
  error->set_code(static_cast<int32_t>(status.code()));
  error->set_message(std::string(status.message()));
  error->set_kind(engine::ErrorKind(status));
  error->set_op_index(op_index);
}

}  // namespace tensord::server
