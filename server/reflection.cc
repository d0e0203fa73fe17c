#include "server/reflection.h"

#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/descriptor.pb.h"
#include "server/status_util.h"

namespace tensord::server {
namespace {

using grpc::reflection::v1alpha::ServerReflectionRequest;
using grpc::reflection::v1alpha::ServerReflectionResponse;
using google::protobuf::DescriptorPool;
using google::protobuf::FileDescriptor;

// One stream: requests answered one at a time, in order (each answer is computed at once from
// the compiled-in descriptors; the next read starts when it is written).
class Reactor final : public grpc::ServerBidiReactor<ServerReflectionRequest,
                                                     ServerReflectionResponse> {
 public:
  Reactor(const std::vector<std::string>* services, const TensordService* auth,
          grpc::CallbackServerContext* ctx)
      : services_(services) {
    if (absl::StatusOr<std::string> tenant = auth->Authorize(*ctx); !tenant.ok()) {
      Finish(ToGrpcStatus(tenant.status()));
      return;
    }
    StartRead(&request_);
  }

  void OnReadDone(bool ok) override {
    if (!ok) return Finish(grpc::Status::OK);
    response_.Clear();
    Answer(request_, &response_);
    StartWrite(&response_);
  }

  void OnWriteDone(bool ok) override {
    if (!ok) return Finish(grpc::Status::CANCELLED);
    StartRead(&request_);
  }

  void OnDone() override { delete this; }

 private:
  void Answer(const ServerReflectionRequest& request, ServerReflectionResponse* response) {
    response->set_valid_host(request.host());
    *response->mutable_original_request() = request;
    const DescriptorPool* pool = DescriptorPool::generated_pool();
    switch (request.message_request_case()) {
      case ServerReflectionRequest::kListServices:
        for (const std::string& name : *services_) {
          response->mutable_list_services_response()->add_service()->set_name(name);
        }
        return;
      case ServerReflectionRequest::kFileByFilename:
        return SendFile(pool->FindFileByName(request.file_by_filename()), request.file_by_filename(),
                        response);
      case ServerReflectionRequest::kFileContainingSymbol:
        return SendFile(pool->FindFileContainingSymbol(request.file_containing_symbol()),
                        request.file_containing_symbol(), response);
      case ServerReflectionRequest::kFileContainingExtension: {
        const auto& ext = request.file_containing_extension();
        const google::protobuf::Descriptor* type = pool->FindMessageTypeByName(ext.containing_type());
        const google::protobuf::FieldDescriptor* field =
            type == nullptr ? nullptr : pool->FindExtensionByNumber(type, ext.extension_number());
        return SendFile(field == nullptr ? nullptr : field->file(),
                        absl::StrCat(ext.containing_type(), " extension ", ext.extension_number()),
                        response);
      }
      case ServerReflectionRequest::kAllExtensionNumbersOfType: {
        const google::protobuf::Descriptor* type =
            pool->FindMessageTypeByName(request.all_extension_numbers_of_type());
        if (type == nullptr) {
          return NotFound(absl::StrCat("type ", request.all_extension_numbers_of_type()), response);
        }
        std::vector<const google::protobuf::FieldDescriptor*> extensions;
        pool->FindAllExtensions(type, &extensions);
        auto* numbers = response->mutable_all_extension_numbers_response();
        numbers->set_base_type_name(type->full_name());
        for (const auto* field : extensions) numbers->add_extension_number(field->number());
        return;
      }
      default:
        response->mutable_error_response()->set_error_code(grpc::StatusCode::INVALID_ARGUMENT);
        response->mutable_error_response()->set_error_message("an empty reflection request");
    }
  }

  static void NotFound(const std::string& what, ServerReflectionResponse* response) {
    response->mutable_error_response()->set_error_code(grpc::StatusCode::NOT_FOUND);
    response->mutable_error_response()->set_error_message(absl::StrCat(what, " not found"));
  }

  // The file and, first, those of its dependencies this stream has not sent yet.
  void SendFile(const FileDescriptor* file, const std::string& what,
                ServerReflectionResponse* response) {
    if (file == nullptr) return NotFound(what, response);
    auto* files = response->mutable_file_descriptor_response();
    std::vector<const FileDescriptor*> stack = {file};
    while (!stack.empty()) {
      const FileDescriptor* f = stack.back();
      stack.pop_back();
      if (!sent_.insert(f->name()).second) continue;
      google::protobuf::FileDescriptorProto proto;
      f->CopyTo(&proto);
      proto.SerializeToString(files->add_file_descriptor_proto());
      for (int i = 0; i < f->dependency_count(); ++i) stack.push_back(f->dependency(i));
    }
  }

  const std::vector<std::string>* const services_;
  ServerReflectionRequest request_;
  ServerReflectionResponse response_;
  absl::flat_hash_set<std::string> sent_;  // files sent on this stream
};

}  // namespace

grpc::ServerBidiReactor<ServerReflectionRequest, ServerReflectionResponse>*
ReflectionService::ServerReflectionInfo(grpc::CallbackServerContext* ctx) {
  return new Reactor(&services_, auth_, ctx);
}

}  // namespace tensord::server
