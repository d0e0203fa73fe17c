// The service's protocol on a real server: discovery, sessions, pipelining, releases, storage
// access, bulk transfer, the Connect stream, health, reflection and shutdown.
#include <algorithm>
#include <cctype>
#include <cstring>
#include <random>
#include <vector>

#include "grpc/health/v1/health.grpc.pb.h"
#include "grpc/reflection/v1alpha/reflection.grpc.pb.h"
#include "server/limits.h"
#include "tests/integration/fixture.h"

namespace tensord::testing {
namespace {

using client::DType;
using client::Tensor;
using F = std::vector<float>;

class ServiceTest : public ServerTest {};

TEST_F(ServiceTest, VersionInfoAndOps) {
  grpc::ClientContext c1;
  v1::GetVersionResponse version;
  ASSERT_TRUE(stub_->GetVersion(&c1, {}, &version).ok());
  EXPECT_EQ(version.api_version(), "v1");
  EXPECT_FALSE(version.server_version().empty());

  grpc::ClientContext c2;
  v1::GetServerInfoResponse info;
  ASSERT_TRUE(stub_->GetServerInfo(&c2, {}, &info).ok());
  EXPECT_EQ(info.devices(0), "cpu");
  EXPECT_EQ(info.default_device(), "cpu");
  EXPECT_EQ(info.dtypes_size(), 10);
  EXPECT_EQ(info.limits().max_rank(), 64);
  EXPECT_GT(info.limits().max_session_bytes(), 0);
  EXPECT_GE(info.active_sessions(), 1);

  grpc::ClientContext c3;
  v1::ListOpsResponse ops;
  ASSERT_TRUE(stub_->ListOps(&c3, {}, &ops).ok());
  bool found_view = false;
  for (const v1::OpSpec& op : ops.ops()) {
    if (op.name() != "view") continue;
    found_view = true;
    EXPECT_EQ(op.kind(), "view");
    ASSERT_EQ(op.attrs_size(), 1);
    EXPECT_EQ(op.attrs(0).name(), "shape");
    EXPECT_EQ(op.attrs(0).type(), "int_list");
    EXPECT_TRUE(op.attrs(0).required());
  }
  EXPECT_TRUE(found_view);
  EXPECT_GE(ops.ops_size(), 50);
}

// "<replica>/<n>/<secret>": the replica's name (the host name by default), a serial, and 128
// random bits as 32 hex digits.
TEST_F(ServiceTest, SessionIdsNameTheReplicaAndEndInA128BitSecret) {
  grpc::ClientContext c1;
  v1::GetServerInfoResponse info;
  ASSERT_TRUE(stub_->GetServerInfo(&c1, {}, &info).ok());
  ASSERT_FALSE(info.replica().empty());
  std::vector<std::string> ids;
  for (int i = 0; i < 2; ++i) {
    grpc::ClientContext ctx;
    v1::OpenSessionResponse opened;
    ASSERT_TRUE(stub_->OpenSession(&ctx, {}, &opened).ok());
    const std::string& id = opened.session_id();
    EXPECT_EQ(id.rfind(info.replica() + "/", 0), 0u) << id;
    ASSERT_GT(id.size(), 33u);
    EXPECT_EQ(opened.route(), id.substr(0, id.size() - 33));
    EXPECT_EQ(id[id.size() - 33], '/');
    EXPECT_TRUE(std::all_of(id.end() - 32, id.end(), [](char c) {
      return std::isdigit(static_cast<unsigned char>(c)) || (c >= 'a' && c <= 'f');
    })) << id;
    EXPECT_EQ(opened.server_version(), TENSORD_VERSION);
    ids.push_back(id);
  }
  EXPECT_NE(ids[0], ids[1]);
  int differing = 0;
  for (size_t i = 1; i <= 32; ++i) differing += ids[0].end()[-i] != ids[1].end()[-i];
  EXPECT_GT(differing, 16);  // the secrets are not a counter
}

// The secret is checked (a wrong or missing one is NOT_FOUND naming only the public part); an
// id of another replica is NOT_FOUND saying where it belongs and how to route it.
TEST_F(ServiceTest, AnIdIsCheckedWhollyAndNeverEchoesItsSecret) {
  const std::string& id = session_.id();
  const std::string route = id.substr(0, id.rfind('/'));
  const std::string secret = id.substr(id.rfind('/') + 1);
  std::string wrong = id;
  wrong.back() = wrong.back() == '0' ? '1' : '0';
  const std::string other_replica = "elsewhere-7" + id.substr(id.find('/'));
  for (const std::string& bad : {wrong, route, route + "/", other_replica, std::string("x"),
                                 secret}) {
    grpc::ClientContext ctx;
    v1::RenewLeaseRequest renew;
    renew.set_session_id(bad);
    v1::RenewLeaseResponse renewed;
    const grpc::Status status = stub_->RenewLease(&ctx, renew, &renewed);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND) << bad;
    EXPECT_EQ(status.error_message().find(secret.substr(0, 12)), std::string::npos)
        << status.error_message();
  }
  grpc::ClientContext ctx;
  v1::RenewLeaseRequest renew;
  renew.set_session_id(other_replica);
  v1::RenewLeaseResponse renewed;
  const grpc::Status status = stub_->RenewLease(&ctx, renew, &renewed);
  EXPECT_NE(status.error_message().find("held by replica elsewhere-7"), std::string::npos)
      << status.error_message();
  EXPECT_NE(status.error_message().find("tensord-route"), std::string::npos);
  // The real id still works.
  grpc::ClientContext ok_ctx;
  renew.set_session_id(id);
  EXPECT_TRUE(stub_->RenewLease(&ok_ctx, renew, &renewed).ok());
}

// A client version the server cannot serve is refused when the session opens, naming both.
TEST_F(ServiceTest, ClientVersionsAreCheckedWhenASessionOpens) {
  for (const char* version : {"", TENSORD_VERSION}) {
    grpc::ClientContext ctx;
    v1::OpenSessionRequest request;
    request.set_client_version(version);
    v1::OpenSessionResponse opened;
    EXPECT_TRUE(stub_->OpenSession(&ctx, request, &opened).ok()) << version;
  }
  for (const char* version : {"99.0.0", "0.0.9"}) {
    grpc::ClientContext ctx;
    v1::OpenSessionRequest request;
    request.set_client_version(version);
    v1::OpenSessionResponse opened;
    const grpc::Status status = stub_->OpenSession(&ctx, request, &opened);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << version;
    EXPECT_NE(status.error_message().find(version), std::string::npos) << status.error_message();
    EXPECT_NE(status.error_message().find(TENSORD_VERSION), std::string::npos);
  }
  grpc::ClientContext ctx;
  v1::OpenSessionRequest request;
  request.set_client_version("banana");
  v1::OpenSessionResponse opened;
  EXPECT_EQ(stub_->OpenSession(&ctx, request, &opened).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
}

// A session whose ops the server plans (as with a client of another registry version).
absl::StatusOr<client::Session> OpenServerPlanned(std::shared_ptr<grpc::Channel> channel) {
  setenv("TENSORD_LOCAL_PLANNING", "0", 1);
  absl::StatusOr<client::Session> s = client::Session::Open(channel);
  unsetenv("TENSORD_LOCAL_PLANNING");
  return s;
}

TEST_F(ServiceTest, MetadataIsPlannedHereAndAChainGoesAsOneBatch) {
  const int64_t before = session_.batches_sent();
  Tensor t = session_.arange(24.0);
  Tensor u = t.view({2, 3, 4}).transpose(0, 2).contiguous().flatten().unsqueeze(0).t();
  ASSERT_OK_AND_ASSIGN(auto sizes, u.sizes());  // planned here: no round trip
  EXPECT_EQ(sizes, (std::vector<int64_t>{24, 1}));
  EXPECT_EQ(*u.stride(), (std::vector<int64_t>{1, 24}));
  EXPECT_EQ(*t.view({4, 6}).storage_offset(), 0);
  EXPECT_EQ(*t.view({4, 6}).data_ptr(), *t.data_ptr());  // one storage, one address
  EXPECT_NE(*u.data_ptr(), *t.data_ptr());                // contiguous() copied
  EXPECT_EQ(session_.batches_sent(), before);
  ASSERT_OK(session_.Synchronize());  // the data is needed: one batch goes
  EXPECT_EQ(session_.batches_sent(), before + 1);
  EXPECT_EQ(session_.ops_sent(), 9);  // the chain's 7 and the two views asked about
  EXPECT_EQ((*u.to_vector<float>())[0], 0.0f);
}

TEST_F(ServiceTest, AProfileRecordsEachOpWithItsKernelsTimesAndInputSizes) {
  EXPECT_THAT(session_.StopProfile().status(),
              StatusIsWith(absl::StatusCode::kFailedPrecondition, "not profiling"));
  Tensor before = session_.arange(6.0);  // sent before the start: not recorded
  ASSERT_OK(session_.StartProfile(/*record_shapes=*/true));
  Tensor m = before.view({2, 3});
  Tensor product = m.t().contiguous();
  Tensor bad = session_.arange(4.0).index_select(0, session_.arange(5, 6, 1, DType::kInt64));
  ASSERT_OK_AND_ASSIGN(v1::ProfileResponse profile, session_.StopProfile());
  std::vector<std::string> names;
  for (const v1::ProfiledOp& op : profile.ops()) names.push_back(op.op());
  EXPECT_EQ(names, (std::vector<std::string>{"view", "t", "contiguous", "arange", "arange",
                                             "index_select"}));
  int64_t last_end = 0;
  for (const v1::ProfiledOp& op : profile.ops()) {
    EXPECT_EQ(op.device(), "cpu");
    EXPECT_EQ(op.device_ns(), -1);  // a CPU kernel's time is its start to end
    EXPECT_GE(op.queued_ns(), 0);
    if (!op.has_kernel()) {  // a view: its queue time, no op id
      EXPECT_EQ(op.op_id(), 0u);
      EXPECT_EQ(op.start_ns(), op.queued_ns());
      EXPECT_EQ(op.end_ns(), op.queued_ns());
      continue;
    }
    // Kernels ran one after another on the default stream, all before the stop returned.
    EXPECT_GT(op.op_id(), 0u);
    EXPECT_GE(op.start_ns(), op.queued_ns()) << op.op();
    EXPECT_GE(op.end_ns(), op.start_ns()) << op.op();
    EXPECT_GE(op.start_ns(), last_end) << op.op();
    last_end = op.end_ns();
    EXPECT_EQ(op.failed(), op.op() == "index_select") << op.op();
  }
  ASSERT_EQ(profile.ops(0).input_sizes_size(), 1);
  EXPECT_EQ(std::vector<int64_t>(profile.ops(0).input_sizes(0).values().begin(),
                                 profile.ops(0).input_sizes(0).values().end()),
            (std::vector<int64_t>{6}));
  EXPECT_EQ(profile.ops(0).input_dtypes(0), v1::DTYPE_FLOAT32);
  ASSERT_EQ(profile.ops(0).output_sizes_size(), 1);
  EXPECT_EQ(std::vector<int64_t>(profile.ops(0).output_sizes(0).values().begin(),
                                 profile.ops(0).output_sizes(0).values().end()),
            (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(profile.ops(2).allocated_bytes(), 6 * 4);  // contiguous made a new storage
  EXPECT_EQ(profile.ops(1).allocated_bytes(), 0);      // t is a view
  EXPECT_EQ(profile.dropped(), 0);
  // The failed op's error is left for the read of its output, and for nothing else.
  EXPECT_THAT(bad.to_vector<float>().status(),
              StatusIsWith(absl::StatusCode::kFailedPrecondition, "index out of range"));
  EXPECT_EQ((*product.to_vector<float>()), (F{0, 3, 1, 4, 2, 5}));
  ASSERT_OK(session_.Synchronize());
  // Stopped: the next ops are not recorded, and stopping again is refused.
  Tensor after = before.mul(2.0);
  EXPECT_THAT(session_.StopProfile().status(), StatusIs(absl::StatusCode::kFailedPrecondition));
}

TEST_F(ServiceTest, WithoutLocalPlanningMetadataTakesOneBatch) {
  ASSERT_OK_AND_ASSIGN(client::Session s, OpenServerPlanned(channel_));
  Tensor u = s.arange(24.0).view({2, 3, 4}).transpose(0, 2).contiguous().flatten();
  EXPECT_EQ(s.batches_sent(), 0);
  ASSERT_OK_AND_ASSIGN(auto sizes, u.sizes());  // metadata is needed: one batch goes
  EXPECT_EQ(sizes, (std::vector<int64_t>{24}));
  EXPECT_EQ(s.batches_sent(), 1);
  EXPECT_EQ(*u.stride(), (std::vector<int64_t>{1}));
  EXPECT_EQ(s.batches_sent(), 1);  // known now: no more traffic
}

TEST_F(ServiceTest, AnOpsErrorIsKnownAtItsCallAndNothingIsSent) {
  Tensor a = session_.arange(6.0).view({2, 3});
  const int64_t before = session_.batches_sent();
  Tensor bad = a.transpose(0, 5);
  // Known at the call, without a round trip, with torch's exception class.
  EXPECT_THAT(bad.sizes().status(), StatusIsWith(absl::StatusCode::kOutOfRange, "transpose"));
  EXPECT_EQ(client::ErrorKind(bad.sizes().status()), "IndexError");
  Tensor on_bad = bad.contiguous();  // fails the same way, unsent
  EXPECT_THAT(on_bad.sizes().status(), StatusIs(absl::StatusCode::kOutOfRange));
  EXPECT_EQ(session_.batches_sent(), before);
  Tensor after = a.t();
  ASSERT_OK(session_.Flush());  // nothing the server refused
  EXPECT_EQ(*after.sizes(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(session_.ops_sent(), 3);  // arange, view, t: the failed ops never went
}

TEST_F(ServiceTest, AnOpTheServerRefusesFailsOnlyWhatDependsOnIt) {
  // Planned by the server, the bad op is found there: it and what reads it fail; the batch's
  // other ops still run.
  ASSERT_OK_AND_ASSIGN(client::Session s, OpenServerPlanned(channel_));
  Tensor a = s.arange(6.0).view({2, 3});
  Tensor bad = a.transpose(0, 5);
  Tensor after = a.t();
  Tensor on_bad = bad.contiguous();
  Tensor later = after.contiguous();
  absl::Status flushed = s.Flush();
  EXPECT_THAT(flushed, StatusIsWith(absl::StatusCode::kOutOfRange, "transpose"));
  EXPECT_THAT(bad.status(), StatusIs(absl::StatusCode::kOutOfRange));
  EXPECT_THAT(on_bad.status(), StatusIs(absl::StatusCode::kOutOfRange));
  ASSERT_OK(after.status());
  EXPECT_EQ(*after.sizes(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(*later.to_vector<float>(), (std::vector<float>{0, 3, 1, 4, 2, 5}));
}

TEST_F(ServiceTest, ReleasesAreBatchedAndFreeMemory) {
  const int64_t base = ServerBytesInUse();
  {
    Tensor big = session_.zeros({1 << 20});  // 4 MiB
    ASSERT_OK(session_.Synchronize());
    // The storage, and the metadata of the one tensor naming it.
    EXPECT_EQ(ServerBytesInUse(), base + (4 << 20) + server::kTensorMetadataBytes);
    Tensor view = big.view({1024, 1024});
    ASSERT_OK(view.status());
  }
  // Both ids go out with the next batch.
  ASSERT_OK(session_.Flush());
  EXPECT_EQ(ServerBytesInUse(), base);
}

TEST_F(ServiceTest, DescribeAndRelease) {
  Tensor t = session_.arange(12.0).view({3, 4});
  ASSERT_OK(session_.Flush());
  grpc::ClientContext ctx;
  v1::DescribeRequest request;
  request.set_session_id(session_.id());
  request.add_ids(t.id());
  v1::DescribeResponse response;
  ASSERT_TRUE(stub_->Describe(&ctx, request, &response).ok());
  ASSERT_EQ(response.tensors_size(), 1);
  EXPECT_EQ(response.tensors(0).strides(0), 4);
  EXPECT_EQ(response.tensors(0).storage_nbytes(), 48);

  grpc::ClientContext ctx2;
  v1::ReleaseRequest release;
  release.set_session_id(session_.id());
  release.add_ids(987654);
  v1::ReleaseResponse released;
  ASSERT_TRUE(stub_->Release(&ctx2, release, &released).ok());
  EXPECT_EQ(released.released(), 0);
  ASSERT_EQ(released.not_found_size(), 1);
}

TEST_F(ServiceTest, DataPtrsFollowStoragesAndOffsets) {
  Tensor a = session_.arange(10.0);
  Tensor b = a.index({client::Slice{3, {}, {}}});
  Tensor c = a.clone();
  ASSERT_OK_AND_ASSIGN(uint64_t pa, a.data_ptr());
  EXPECT_EQ(*b.data_ptr(), pa + 3 * 4);
  EXPECT_EQ(*b.storage().data_ptr(), pa);
  EXPECT_NE(*c.data_ptr(), pa);
  EXPECT_EQ(*b.storage().nbytes(), 40);
}

TEST_F(ServiceTest, StorageReadWriteRangesAndElements) {
  Tensor t = session_.arange(10, DType::kInt32);
  EXPECT_EQ(*t.storage().size(), 10);
  ASSERT_OK_AND_ASSIGN(std::string three, t.storage().ReadBytes(4, 3));
  std::vector<int32_t> values(3);
  std::memcpy(values.data(), three.data(), 12);
  EXPECT_EQ(values, (std::vector<int32_t>{4, 5, 6}));
  ASSERT_OK(t.storage().set<int32_t>(9, -5));
  EXPECT_EQ(*t.storage().get<int32_t>(9), -5);
  EXPECT_EQ(*t.index({int64_t{9}}).to_vector<int32_t>(), (std::vector<int32_t>{-5}));
  EXPECT_THAT(t.storage().ReadBytes(8, 3), StatusIs(absl::StatusCode::kOutOfRange));
  EXPECT_THAT(t.storage().WriteBytes(10, std::string(4, '\0')),
              StatusIs(absl::StatusCode::kOutOfRange));
  EXPECT_THAT(t.storage().WriteBytes(0, std::string(3, '\0')),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST_F(ServiceTest, UploadAndDownloadOfManySizes) {
  std::mt19937 rng(3);
  for (int64_t n : std::vector<int64_t>{0, 1, 7, 300000, (int64_t{5} << 20) / 4 + 3}) {
    std::vector<float> values(n);
    for (float& v : values) v = static_cast<float>(rng() % 1000) / 7.0f;
    ASSERT_OK_AND_ASSIGN(Tensor t, session_.from_vector(values, {n}));
    EXPECT_EQ(*t.to_vector<float>(), values) << n;
    EXPECT_EQ(*t.numel(), n);
  }
  // Non-contiguous tensors come back in row-major order.
  ASSERT_OK_AND_ASSIGN(Tensor m, session_.from_vector<double>({1, 2, 3, 4, 5, 6}, {2, 3}));
  EXPECT_EQ(*m.t().to_vector<double>(), (std::vector<double>{1, 4, 2, 5, 3, 6}));
  // 0-d tensors.
  ASSERT_OK_AND_ASSIGN(Tensor scalar, session_.from_vector<int64_t>({42}, {}));
  EXPECT_EQ(*scalar.dim(), 0);
  EXPECT_EQ(*scalar.to_vector<int64_t>(), (std::vector<int64_t>{42}));
}

TEST_F(ServiceTest, ConnectStreamRunsBatchesAndItsSessionOutlivesIt) {
  grpc::ClientContext ctx;
  auto stream = stub_->Connect(&ctx);
  v1::ConnectRequest open;
  open.set_seq(1);
  open.mutable_open_session();
  ASSERT_TRUE(stream->Write(open));
  v1::ConnectResponse response;
  ASSERT_TRUE(stream->Read(&response));
  ASSERT_EQ(response.seq(), 1u);
  ASSERT_EQ(response.kind_case(), v1::ConnectResponse::kOpened);
  const std::string id = response.opened().session_id();

  for (uint64_t seq = 2; seq < 6; ++seq) {
    v1::ConnectRequest run;
    run.set_seq(seq);
    v1::OpCall* call = run.mutable_run_ops()->add_ops();
    call->set_op("zeros");
    (*call->mutable_attrs())["size"].mutable_ints()->add_values(static_cast<int64_t>(seq));
    call->add_outputs(seq);
    ASSERT_TRUE(stream->Write(run));
  }
  for (uint64_t seq = 2; seq < 6; ++seq) {
    ASSERT_TRUE(stream->Read(&response));
    EXPECT_EQ(response.seq(), seq);
    ASSERT_EQ(response.kind_case(), v1::ConnectResponse::kRan);
    EXPECT_FALSE(response.ran().has_error());
    EXPECT_EQ(response.ran().results(0).outputs(0).sizes(0), static_cast<int64_t>(seq));
  }
  stream->WritesDone();
  while (stream->Read(&response)) {
  }
  ASSERT_TRUE(stream->Finish().ok());
  // The stream's session outlives it, on its lease (a client may come back after a network
  // blip), until CloseSession ends it.
  v1::RenewLeaseRequest renew;
  renew.set_session_id(id);
  v1::RenewLeaseResponse renewed;
  {
    grpc::ClientContext ctx2;
    EXPECT_TRUE(stub_->RenewLease(&ctx2, renew, &renewed).ok());
  }
  {
    grpc::ClientContext ctx3;
    v1::CloseSessionRequest close;
    close.set_session_id(id);
    v1::CloseSessionResponse closed;
    EXPECT_TRUE(stub_->CloseSession(&ctx3, close, &closed).ok());
  }
  grpc::ClientContext ctx4;
  EXPECT_EQ(stub_->RenewLease(&ctx4, renew, &renewed).error_code(), grpc::StatusCode::NOT_FOUND);
}

TEST_F(ServiceTest, HealthServiceSaysServing) {
  auto health = grpc::health::v1::Health::NewStub(channel_);
  grpc::ClientContext ctx;
  grpc::health::v1::HealthCheckRequest request;
  grpc::health::v1::HealthCheckResponse response;
  ASSERT_TRUE(health->Check(&ctx, request, &response).ok());
  EXPECT_EQ(response.status(), grpc::health::v1::HealthCheckResponse::SERVING);
}

TEST_F(ServiceTest, ReflectionListsTheService) {
  auto reflection = grpc::reflection::v1alpha::ServerReflection::NewStub(channel_);
  grpc::ClientContext ctx;
  auto stream = reflection->ServerReflectionInfo(&ctx);
  grpc::reflection::v1alpha::ServerReflectionRequest request;
  request.set_list_services("");
  ASSERT_TRUE(stream->Write(request));
  grpc::reflection::v1alpha::ServerReflectionResponse response;
  ASSERT_TRUE(stream->Read(&response));
  std::vector<std::string> names;
  for (const auto& s : response.list_services_response().service()) names.push_back(s.name());
  EXPECT_NE(std::find(names.begin(), names.end(), "tensord.v1.Tensord"), names.end());
  request.set_file_containing_symbol("tensord.v1.Tensord");
  ASSERT_TRUE(stream->Write(request));
  ASSERT_TRUE(stream->Read(&response));
  EXPECT_GT(response.file_descriptor_response().file_descriptor_proto_size(), 0);
  stream->WritesDone();
  EXPECT_TRUE(stream->Finish().ok());
}

TEST(ServerLifecycleTest, SigtermDrainsAndExitsZero) {
  ServerProcess server;
  ASSERT_TRUE(server.ok());
  auto channel = server.Channel();
  ASSERT_OK_AND_ASSIGN(client::Session session, client::Session::Open(channel));
  Tensor t = session.zeros({1000});
  ASSERT_OK(session.Synchronize());
  // A call in flight when SIGTERM arrives finishes: a synchronize waiting on a 500 ms sleep.
  session.CallNoOutput("_sleep", {}, client::Attrs().Int("ms", 500));
  ASSERT_OK(session.Flush());
  auto stub = v1::Tensord::NewStub(channel);
  grpc::ClientContext ctx;
  v1::SynchronizeRequest sync;
  sync.set_session_id(session.id());
  v1::SynchronizeResponse synced;
  grpc::Status status;
  std::thread waiter([&] { status = stub->Synchronize(&ctx, sync, &synced); });
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  EXPECT_EQ(server.Stop(), 0);
  waiter.join();
  EXPECT_TRUE(status.ok()) << status.error_message();
}

// Through the plain stub: a client::Session renews its lease while it is open.
std::string OpenUnrenewedSession(v1::Tensord::Stub& stub) {
  grpc::ClientContext ctx;
  v1::OpenSessionResponse opened;
  EXPECT_TRUE(stub.OpenSession(&ctx, {}, &opened).ok());
  return opened.session_id();
}

grpc::StatusCode Synchronize(v1::Tensord::Stub& stub, const std::string& session_id) {
  grpc::ClientContext ctx;
  v1::SynchronizeRequest request;
  request.set_session_id(session_id);
  v1::SynchronizeResponse response;
  return stub.Synchronize(&ctx, request, &response).error_code();
}

TEST(ServerLifecycleTest, IdleSessionsExpireAndFreeTheirMemory) {
  ServerProcess server({"--session_ttl=1s"});
  ASSERT_TRUE(server.ok());
  auto stub = v1::Tensord::NewStub(server.Channel());
  const std::string id = OpenUnrenewedSession(*stub);
  grpc::ClientContext ran_ctx;
  v1::RunOpsRequest run;
  run.set_session_id(id);
  v1::OpCall* call = run.add_ops();
  call->set_op("zeros");
  (*call->mutable_attrs())["size"].mutable_ints()->add_values(1 << 18);
  call->add_outputs(1);
  v1::RunOpsResponse ran;
  ASSERT_TRUE(stub->RunOps(&ran_ctx, run, &ran).ok());
  ASSERT_FALSE(ran.has_error());
  ASSERT_EQ(Synchronize(*stub, id), grpc::StatusCode::OK);
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  grpc::ClientContext ctx;
  v1::GetServerInfoResponse info;
  ASSERT_TRUE(stub->GetServerInfo(&ctx, {}, &info).ok());
  EXPECT_EQ(info.bytes_in_use(), 0);
  EXPECT_EQ(info.active_sessions(), 0);
  EXPECT_EQ(Synchronize(*stub, id), grpc::StatusCode::NOT_FOUND);
}

TEST(ServerLifecycleTest, AnIdleClientSessionOutlivesTheTtl) {
  ServerProcess server({"--session_ttl=2s"});
  ASSERT_TRUE(server.ok());
  auto channel = client::CreateChannel(server.address(), grpc::InsecureChannelCredentials());
  auto stub = v1::Tensord::NewStub(channel);
  ASSERT_OK_AND_ASSIGN(client::Session session, client::Session::Open(channel));
  const std::string unrenewed = OpenUnrenewedSession(*stub);
  ASSERT_OK_AND_ASSIGN(Tensor t, session.from_vector<float>({1, 2, 3, 4}, {4}));
  Tensor flipped = t.flip({0});
  ASSERT_OK(session.Flush());
  std::this_thread::sleep_for(std::chrono::seconds(6));  // 3 TTLs without a call of its own
  EXPECT_EQ(*flipped.to_vector<float>(), (F{4, 3, 2, 1}));
  EXPECT_EQ(*t.to_vector<float>(), (F{1, 2, 3, 4}));
  // The TTL did apply: the session nobody renewed is gone.
  EXPECT_EQ(Synchronize(*stub, unrenewed), grpc::StatusCode::NOT_FOUND);
  ASSERT_OK(session.Close());
}

TEST(ServerLifecycleTest, BearerTokenIsRequiredWhenConfigured) {
  char path[] = "/tmp/tensord-token-XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(write(fd, "s3cret\n", 7), 7);
  close(fd);
  ServerProcess server({std::string("--auth_token_file=") + path});
  ASSERT_TRUE(server.ok());
  unlink(path);
  EXPECT_THAT(client::Session::Open(server.Channel()).status(),
              StatusIs(absl::StatusCode::kUnauthenticated));
  client::SessionOptions options;
  options.auth_token = "s3cret";
  ASSERT_OK_AND_ASSIGN(client::Session session, client::Session::Open(server.Channel(), options));
  EXPECT_EQ(*session.arange(3).sizes(), std::vector<int64_t>{3});
}

}  // namespace
}  // namespace tensord::testing
