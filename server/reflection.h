// gRPC server reflection (grpc.reflection.v1alpha), behind the same authentication as the API:
// a caller that may not call tensord.v1 may not list it either. (gRPC's own reflection plugin
// answers everyone: it cannot be put behind a bearer token on a plaintext port.)
//
// It serves the protobuf descriptors compiled into the server: list_services, file_by_filename,
// file_containing_symbol (with each file's dependencies not yet sent on the stream),
// file_containing_extension and all_extension_numbers_of_type; an unknown name is an
// error_response with NOT_FOUND, as gRPC's own service answers.
#ifndef TENSORD_SERVER_REFLECTION_H_
#define TENSORD_SERVER_REFLECTION_H_

#include <string>
#include <vector>

#include "grpc/reflection/v1alpha/reflection.grpc.pb.h"
#include "server/grpc_service.h"

namespace tensord::server {

class ReflectionService final
    : public grpc::reflection::v1alpha::ServerReflection::CallbackService {
 public:
  // `services`: the full names listed; `auth`: the API's authorization (TensordService).
  ReflectionService(std::vector<std::string> services, const TensordService* auth)
      : services_(std::move(services)), auth_(auth) {}

  grpc::ServerBidiReactor<grpc::reflection::v1alpha::ServerReflectionRequest,
                          grpc::reflection::v1alpha::ServerReflectionResponse>*
  ServerReflectionInfo(grpc::CallbackServerContext* ctx) override;

 private:
  const std::vector<std::string> services_;
  const TensordService* const auth_;
};

}  // namespace tensord::server

#endif  // TENSORD_SERVER_REFLECTION_H_
