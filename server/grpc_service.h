// The gRPC face of TensordBackend: callback-API handlers that convert messages and statuses and
// never block a gRPC thread (waiting work completes through the executor).
#ifndef TENSORD_SERVER_GRPC_SERVICE_H_
#define TENSORD_SERVER_GRPC_SERVICE_H_

#include <string>

#include "server/backend.h"
#include "tensord/v1/tensord.grpc.pb.h"

namespace tensord::server {

// Upload and Download are raw methods (grpc::ByteBuffer): their bytes go straight between
// received slices / storage memory and the wire, without protobuf copies (proto/tensord/wire.h).
class TensordService final
    : public v1::Tensord::WithRawCallbackMethod_Upload<
          v1::Tensord::WithRawCallbackMethod_Download<v1::Tensord::CallbackService>> {
 public:
  // `auth_token`: when not empty, every call must carry "authorization: Bearer <token>".
  TensordService(TensordBackend* backend, std::string auth_token);

  grpc::ServerUnaryReactor* GetVersion(grpc::CallbackServerContext* ctx,
                                       const v1::GetVersionRequest* request,
                                       v1::GetVersionResponse* response) override;
  grpc::ServerUnaryReactor* GetServerInfo(grpc::CallbackServerContext* ctx,
                                          const v1::GetServerInfoRequest* request,
                                          v1::GetServerInfoResponse* response) override;
  grpc::ServerUnaryReactor* ListOps(grpc::CallbackServerContext* ctx,
                                    const v1::ListOpsRequest* request,
                                    v1::ListOpsResponse* response) override;
  grpc::ServerUnaryReactor* OpenSession(grpc::CallbackServerContext* ctx,
                                        const v1::OpenSessionRequest* request,
                                        v1::OpenSessionResponse* response) override;
  grpc::ServerUnaryReactor* CloseSession(grpc::CallbackServerContext* ctx,
                                         const v1::CloseSessionRequest* request,
                                         v1::CloseSessionResponse* response) override;
  grpc::ServerUnaryReactor* RenewLease(grpc::CallbackServerContext* ctx,
                                       const v1::RenewLeaseRequest* request,
                                       v1::RenewLeaseResponse* response) override;
  grpc::ServerUnaryReactor* RunOps(grpc::CallbackServerContext* ctx,
                                   const v1::RunOpsRequest* request,
                                   v1::RunOpsResponse* response) override;
  grpc::ServerBidiReactor<v1::ConnectRequest, v1::ConnectResponse>* Connect(
      grpc::CallbackServerContext* ctx) override;
  grpc::ServerUnaryReactor* Describe(grpc::CallbackServerContext* ctx,
                                     const v1::DescribeRequest* request,
                                     v1::DescribeResponse* response) override;
  grpc::ServerUnaryReactor* Release(grpc::CallbackServerContext* ctx,
                                    const v1::ReleaseRequest* request,
                                    v1::ReleaseResponse* response) override;
  grpc::ServerUnaryReactor* ReadStorage(grpc::CallbackServerContext* ctx,
                                        const v1::ReadStorageRequest* request,
                                        v1::ReadStorageResponse* response) override;
  grpc::ServerUnaryReactor* WriteStorage(grpc::CallbackServerContext* ctx,
                                         const v1::WriteStorageRequest* request,
                                         v1::WriteStorageResponse* response) override;
  grpc::ServerReadReactor<grpc::ByteBuffer>* Upload(grpc::CallbackServerContext* ctx,
                                                    grpc::ByteBuffer* response) override;
  grpc::ServerWriteReactor<grpc::ByteBuffer>* Download(grpc::CallbackServerContext* ctx,
                                                      const grpc::ByteBuffer* request) override;
  grpc::ServerUnaryReactor* CreateStream(grpc::CallbackServerContext* ctx,
                                         const v1::CreateStreamRequest* request,
                                         v1::CreateStreamResponse* response) override;
  grpc::ServerUnaryReactor* RecordEvent(grpc::CallbackServerContext* ctx,
                                        const v1::RecordEventRequest* request,
                                        v1::RecordEventResponse* response) override;
  grpc::ServerUnaryReactor* WaitEvent(grpc::CallbackServerContext* ctx,
                                      const v1::WaitEventRequest* request,
                                      v1::WaitEventResponse* response) override;
  grpc::ServerUnaryReactor* QueryEvent(grpc::CallbackServerContext* ctx,
                                       const v1::QueryEventRequest* request,
                                       v1::QueryEventResponse* response) override;
  grpc::ServerUnaryReactor* Synchronize(grpc::CallbackServerContext* ctx,
                                        const v1::SynchronizeRequest* request,
                                        v1::SynchronizeResponse* response) override;

 private:
  absl::Status Authorize(grpc::CallbackServerContext* ctx) const;

  TensordBackend* const backend_;
  const std::string auth_token_;
};

}  // namespace tensord::server

#endif  // TENSORD_SERVER_GRPC_SERVICE_H_
