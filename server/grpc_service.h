// The gRPC face of Handlers: callback-API handlers that convert messages and statuses and
// never block a gRPC thread (waiting work completes through the executor).
#ifndef TENSORD_SERVER_GRPC_SERVICE_H_
#define TENSORD_SERVER_GRPC_SERVICE_H_

#include <string>

#include "server/auth.h"
#include "server/handlers.h"
#include "tensord/v1/tensord.grpc.pb.h"

namespace tensord::server {

// Every method but Connect is served from raw bytes (grpc::ByteBuffer): the service parses
// requests itself, so a malformed one is INVALID_ARGUMENT naming the method (gRPC's own parsing
// would answer UNIMPLEMENTED with no message), and Upload and Download move their bytes
// straight between received slices / storage memory and the wire, without protobuf copies
// (proto/tensord/wire.h).

// Base<Mixin1<Mixin2<…>>>: the generated service with each listed method made raw.
template <class Base, template <class> class... Mixins>
struct WithMixins {
  using type = Base;
};
template <class Base, template <class> class First, template <class> class... Rest>
struct WithMixins<Base, First, Rest...> {
  using type = First<typename WithMixins<Base, Rest...>::type>;
};

using RawTensordService = WithMixins<v1::Tensord::CallbackService,
                                     v1::Tensord::WithRawCallbackMethod_GetVersion,
                                     v1::Tensord::WithRawCallbackMethod_GetServerInfo,
                                     v1::Tensord::WithRawCallbackMethod_ListOps,
                                     v1::Tensord::WithRawCallbackMethod_OpenSession,
                                     v1::Tensord::WithRawCallbackMethod_CloseSession,
                                     v1::Tensord::WithRawCallbackMethod_RenewLease,
                                     v1::Tensord::WithRawCallbackMethod_RunOps,
                                     v1::Tensord::WithRawCallbackMethod_Describe,
                                     v1::Tensord::WithRawCallbackMethod_Release,
                                     v1::Tensord::WithRawCallbackMethod_ReadStorage,
                                     v1::Tensord::WithRawCallbackMethod_WriteStorage,
                                     v1::Tensord::WithRawCallbackMethod_CreateStream,
                                     v1::Tensord::WithRawCallbackMethod_RecordEvent,
                                     v1::Tensord::WithRawCallbackMethod_WaitEvent,
                                     v1::Tensord::WithRawCallbackMethod_QueryEvent,
                                     v1::Tensord::WithRawCallbackMethod_Synchronize,
                                     v1::Tensord::WithRawCallbackMethod_Cancel,
                                     v1::Tensord::WithRawCallbackMethod_Profile,
                                     v1::Tensord::WithRawCallbackMethod_Upload,
                                     v1::Tensord::WithRawCallbackMethod_Download>::type;

class TensordService final : public RawTensordService {
 public:
  // `auth`: who may call, and as which tenant (auth.h).
  TensordService(Handlers* handlers, Authenticator auth);

  // The caller's tenant, or UNAUTHENTICATED.
  absl::StatusOr<std::string> Authorize(const grpc::ServerContextBase& ctx) const;
  // OK when `tenant` may use the session `session_id` ("": the call names none); NOT_FOUND,
  // as for an unknown id, when the session is another tenant's.
  absl::Status Admit(absl::string_view session_id, absl::string_view tenant) const;
  Handlers& handlers() const { return *handlers_; }

  grpc::ServerUnaryReactor* GetVersion(grpc::CallbackServerContext* ctx,
                                       const grpc::ByteBuffer* request,
                                       grpc::ByteBuffer* response) override;
  grpc::ServerUnaryReactor* GetServerInfo(grpc::CallbackServerContext* ctx,
                                          const grpc::ByteBuffer* request,
                                          grpc::ByteBuffer* response) override;
  grpc::ServerUnaryReactor* ListOps(grpc::CallbackServerContext* ctx,
                                    const grpc::ByteBuffer* request,
                                    grpc::ByteBuffer* response) override;
  grpc::ServerUnaryReactor* OpenSession(grpc::CallbackServerContext* ctx,
                                        const grpc::ByteBuffer* request,
                                        grpc::ByteBuffer* response) override;
  grpc::ServerUnaryReactor* CloseSession(grpc::CallbackServerContext* ctx,
                                         const grpc::ByteBuffer* request,
                                         grpc::ByteBuffer* response) override;
  grpc::ServerUnaryReactor* RenewLease(grpc::CallbackServerContext* ctx,
                                       const grpc::ByteBuffer* request,
                                       grpc::ByteBuffer* response) override;
  grpc::ServerUnaryReactor* RunOps(grpc::CallbackServerContext* ctx,
                                   const grpc::ByteBuffer* request,
                                   grpc::ByteBuffer* response) override;
  grpc::ServerUnaryReactor* Describe(grpc::CallbackServerContext* ctx,
                                     const grpc::ByteBuffer* request,
                                     grpc::ByteBuffer* response) override;
  grpc::ServerUnaryReactor* Release(grpc::CallbackServerContext* ctx,
                                    const grpc::ByteBuffer* request,
                                    grpc::ByteBuffer* response) override;
  grpc::ServerUnaryReactor* ReadStorage(grpc::CallbackServerContext* ctx,
                                        const grpc::ByteBuffer* request,
                                        grpc::ByteBuffer* response) override;
  grpc::ServerUnaryReactor* WriteStorage(grpc::CallbackServerContext* ctx,
                                         const grpc::ByteBuffer* request,
                                         grpc::ByteBuffer* response) override;
  grpc::ServerUnaryReactor* CreateStream(grpc::CallbackServerContext* ctx,
                                         const grpc::ByteBuffer* request,
                                         grpc::ByteBuffer* response) override;
  grpc::ServerUnaryReactor* RecordEvent(grpc::CallbackServerContext* ctx,
                                        const grpc::ByteBuffer* request,
                                        grpc::ByteBuffer* response) override;
  grpc::ServerUnaryReactor* WaitEvent(grpc::CallbackServerContext* ctx,
                                      const grpc::ByteBuffer* request,
                                      grpc::ByteBuffer* response) override;
  grpc::ServerUnaryReactor* QueryEvent(grpc::CallbackServerContext* ctx,
                                       const grpc::ByteBuffer* request,
                                       grpc::ByteBuffer* response) override;
  grpc::ServerUnaryReactor* Synchronize(grpc::CallbackServerContext* ctx,
                                        const grpc::ByteBuffer* request,
                                        grpc::ByteBuffer* response) override;
  grpc::ServerUnaryReactor* Cancel(grpc::CallbackServerContext* ctx,
                                   const grpc::ByteBuffer* request,
                                   grpc::ByteBuffer* response) override;
  grpc::ServerUnaryReactor* Profile(grpc::CallbackServerContext* ctx,
                                    const grpc::ByteBuffer* request,
                                    grpc::ByteBuffer* response) override;
  grpc::ServerBidiReactor<v1::ConnectRequest, v1::ConnectResponse>* Connect(
      grpc::CallbackServerContext* ctx) override;
  grpc::ServerReadReactor<grpc::ByteBuffer>* Upload(grpc::CallbackServerContext* ctx,
                                                    grpc::ByteBuffer* response) override;
  grpc::ServerWriteReactor<grpc::ByteBuffer>* Download(grpc::CallbackServerContext* ctx,
                                                       const grpc::ByteBuffer* request) override;

 private:
  Handlers* const handlers_;
  const Authenticator auth_;
  // Sessions are checked against tenants only when callers have identities.
  const bool per_tenant_;
};

}  // namespace tensord::server

#endif  // TENSORD_SERVER_GRPC_SERVICE_H_
