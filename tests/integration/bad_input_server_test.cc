// Bad input against a real server: each gets a precise status, the session stays usable,
// nothing leaks, and the server never crashes.
#include <vector>

#include "tests/integration/fixture.h"

namespace tensord::testing {
namespace {

using client::Tensor;
using Code = grpc::StatusCode;

class BadInputServerTest : public ServerTest {
 protected:
  static std::vector<std::string> ServerFlags() {
    return {"--max_session_bytes=8388608", "--max_queued_ops=64", "--max_sessions=8"};
  }
  static void SetUpTestSuite() {
    server_ = new ServerProcess(ServerFlags());
    ASSERT_TRUE(server_->ok());
  }

  void TearDown() override {
    // Whatever a test did, the server is alive and answers.
    ASSERT_TRUE(server_->Alive());
    grpc::ClientContext ctx;
    v1::GetVersionResponse version;
    EXPECT_TRUE(stub_->GetVersion(&ctx, {}, &version).ok());
  }

  v1::RunOpsResponse Run(const v1::RunOpsRequest& request, grpc::Status* status = nullptr) {
    grpc::ClientContext ctx;
    v1::RunOpsResponse response;
    grpc::Status s = stub_->RunOps(&ctx, request, &response);
    if (status) *status = s;
    return response;
  }

  v1::RunOpsRequest Batch(const std::string& session) {
    v1::RunOpsRequest r;
    r.set_session_id(session);
    return r;
  }

  static v1::OpCall* Add(v1::RunOpsRequest& r, const std::string& op,
                         std::vector<uint64_t> inputs, std::vector<uint64_t> outputs) {
    v1::OpCall* call = r.add_ops();
    call->set_op(op);
    for (uint64_t i : inputs) call->add_inputs(i);
    for (uint64_t o : outputs) call->add_outputs(o);
    return call;
  }
};

TEST_F(BadInputServerTest, UnknownOrClosedSessionIsNotFound) {
  grpc::Status status;
  Run(Batch("00000000000000000000000000000000"), &status);
  EXPECT_EQ(status.error_code(), Code::NOT_FOUND);
  Run(Batch("not even hex"), &status);
  EXPECT_EQ(status.error_code(), Code::NOT_FOUND);

  ASSERT_OK_AND_ASSIGN(client::Session other, client::Session::Open(channel_));
  const std::string id = other.id();
  ASSERT_OK(other.Close());
  Run(Batch(id), &status);
  EXPECT_EQ(status.error_code(), Code::NOT_FOUND);
}

TEST_F(BadInputServerTest, AnotherSessionsHandleIsNotFoundWithoutRevealingIt) {
  ASSERT_OK_AND_ASSIGN(client::Session other, client::Session::Open(channel_));
  Tensor theirs = other.arange(5);
  ASSERT_OK(theirs.status());
  v1::RunOpsRequest r = Batch(session_.id());
  Add(r, "t", {theirs.id()}, {500});
  v1::RunOpsResponse seen = Run(r);
  v1::RunOpsRequest r2 = Batch(session_.id());
  Add(r2, "t", {123456789}, {501});  // an id that exists nowhere
  v1::RunOpsResponse never = Run(r2);
  EXPECT_EQ(seen.error().code(), static_cast<int>(Code::NOT_FOUND));
  // The same answer, but for the id itself.
  EXPECT_EQ(seen.error().message(),
            absl::StrCat("t: tensor ", theirs.id(), " not found in this session"));
  EXPECT_EQ(never.error().message(), "t: tensor 123456789 not found in this session");
}

TEST_F(BadInputServerTest, ReusedIdIsAlreadyExists) {
  v1::RunOpsRequest r = Batch(session_.id());
  (*Add(r, "zeros", {}, {7})->mutable_attrs())["size"].mutable_ints()->add_values(3);
  (*Add(r, "zeros", {}, {7})->mutable_attrs())["size"].mutable_ints()->add_values(3);
  v1::RunOpsResponse response = Run(r);
  EXPECT_EQ(response.results_size(), 1);
  EXPECT_EQ(response.error().code(), static_cast<int>(Code::ALREADY_EXISTS));
  EXPECT_EQ(response.error().op_index(), 1);
  // Also through upload.
  grpc::ClientContext ctx;
  v1::UploadResponse uploaded;
  auto writer = stub_->Upload(&ctx, &uploaded);
  v1::UploadRequest header;
  header.mutable_header()->set_session_id(session_.id());
  header.mutable_header()->set_id(7);
  header.mutable_header()->set_dtype(v1::DTYPE_UINT8);
  writer->Write(header);
  writer->WritesDone();
  EXPECT_EQ(writer->Finish().error_code(), Code::ALREADY_EXISTS);
}

TEST_F(BadInputServerTest, MalformedOpsAndAttributes) {
  struct Case {
    std::string name;
    std::function<void(v1::RunOpsRequest&)> build;
    Code code;
  };
  const std::vector<Case> cases = {
      {"unknown op", [](auto& r) { Add(r, "frobnicate", {}, {1001}); }, Code::NOT_FOUND},
      {"missing attribute", [](auto& r) { Add(r, "zeros", {}, {1001}); }, Code::INVALID_ARGUMENT},
      {"wrong attribute type",
       [](auto& r) { (*Add(r, "zeros", {}, {1001})->mutable_attrs())["size"].set_f(2.5); },
       Code::INVALID_ARGUMENT},
      {"unknown attribute",
       [](auto& r) {
         auto* c = Add(r, "zeros", {}, {1001});
         (*c->mutable_attrs())["size"].mutable_ints()->add_values(2);
         (*c->mutable_attrs())["colour"].set_i(1);
       },
       Code::INVALID_ARGUMENT},
      {"bad dtype enum",
       [](auto& r) {
         auto* c = Add(r, "zeros", {}, {1001});
         (*c->mutable_attrs())["size"].mutable_ints()->add_values(2);
         (*c->mutable_attrs())["dtype"].set_dtype(static_cast<v1::DType>(77));
       },
       Code::INVALID_ARGUMENT},
      {"bad device",
       [](auto& r) {
         auto* c = Add(r, "zeros", {}, {1001});
         (*c->mutable_attrs())["size"].mutable_ints()->add_values(2);
         (*c->mutable_attrs())["device"].set_device("tpu:3");
       },
       Code::INVALID_ARGUMENT},
      {"cuda on a CPU server",
       [](auto& r) {
         auto* c = Add(r, "zeros", {}, {1001});
         (*c->mutable_attrs())["size"].mutable_ints()->add_values(2);
         (*c->mutable_attrs())["device"].set_device("cuda");
       },
       Code::FAILED_PRECONDITION},
      {"no output id", [](auto& r) { Add(r, "zeros", {}, {}); }, Code::INVALID_ARGUMENT},
      {"output id 0",
       [](auto& r) { (*Add(r, "zeros", {}, {0})->mutable_attrs())["size"].mutable_ints(); },
       Code::INVALID_ARGUMENT},
      {"too many inputs",
       [](auto& r) {
         (*Add(r, "zeros", {}, {1001})->mutable_attrs())["size"].mutable_ints()->add_values(2);
         Add(r, "t", {1001, 1001}, {1002});
       },
       Code::INVALID_ARGUMENT},
      {"unknown stream",
       [](auto& r) {
         auto* c = Add(r, "zeros", {}, {1001});
         (*c->mutable_attrs())["size"].mutable_ints()->add_values(2);
         c->set_stream(99);
       },
       Code::NOT_FOUND},
      {"negative size",
       [](auto& r) {
         (*Add(r, "zeros", {}, {1001})->mutable_attrs())["size"].mutable_ints()->add_values(-4);
       },
       Code::INVALID_ARGUMENT},
      {"view out of its storage",
       [](auto& r) {
         (*Add(r, "zeros", {}, {1001})->mutable_attrs())["size"].mutable_ints()->add_values(4);
         auto* c = Add(r, "as_strided", {1001}, {1002});
         (*c->mutable_attrs())["size"].mutable_ints()->add_values(5);
         (*c->mutable_attrs())["stride"].mutable_ints()->add_values(1);
       },
       Code::INVALID_ARGUMENT},
      {"rank above the limit",
       [](auto& r) {
         auto* c = Add(r, "zeros", {}, {1001});
         for (int i = 0; i < 65; ++i) (*c->mutable_attrs())["size"].mutable_ints()->add_values(1);
       },
       Code::INVALID_ARGUMENT},
      {"split with too few ids",
       [](auto& r) {
         (*Add(r, "zeros", {}, {1001})->mutable_attrs())["size"].mutable_ints()->add_values(6);
         auto* c = Add(r, "split", {1001}, {1002});
         (*c->mutable_attrs())["split_size"].set_i(2);
       },
       Code::INVALID_ARGUMENT},
  };
  for (const Case& c : cases) {
    ASSERT_OK_AND_ASSIGN(client::Session s, client::Session::Open(channel_));
    v1::RunOpsRequest r = Batch(s.id());
    c.build(r);
    v1::RunOpsResponse response = Run(r);
    ASSERT_TRUE(response.has_error()) << c.name;
    EXPECT_EQ(response.error().code(), static_cast<int>(c.code))
        << c.name << ": " << response.error().message();
    EXPECT_FALSE(response.error().message().empty()) << c.name;
    // The session is still usable.
    ASSERT_OK_AND_ASSIGN(auto sizes, s.arange(4).sizes());
    EXPECT_EQ(sizes, std::vector<int64_t>{4}) << c.name;
  }
}

TEST_F(BadInputServerTest, UploadSizeMismatchAndTruncation) {
  const int64_t base = ServerBytesInUse();
  auto upload = [&](int64_t announced, int64_t sent, bool finish_writes) {
    grpc::ClientContext ctx;
    v1::UploadResponse response;
    auto writer = stub_->Upload(&ctx, &response);
    v1::UploadRequest header;
    header.mutable_header()->set_session_id(session_.id());
    header.mutable_header()->set_id(900);
    header.mutable_header()->add_sizes(announced);
    header.mutable_header()->set_dtype(v1::DTYPE_FLOAT32);
    writer->Write(header);
    v1::UploadRequest data;
    data.set_data(std::string(static_cast<size_t>(sent), 'x'));
    writer->Write(data);
    if (!finish_writes) {
      ctx.TryCancel();  // the client goes away mid-upload
    } else {
      writer->WritesDone();
    }
    return writer->Finish();
  };
  EXPECT_EQ(upload(4, 20, true).error_code(), Code::INVALID_ARGUMENT);  // too many bytes
  EXPECT_EQ(upload(4, 12, true).error_code(), Code::INVALID_ARGUMENT);  // truncated
  EXPECT_EQ(upload(1 << 20, 4096, false).error_code(), Code::CANCELLED);
  // No header at all.
  {
    grpc::ClientContext ctx;
    v1::UploadResponse response;
    auto writer = stub_->Upload(&ctx, &response);
    v1::UploadRequest data;
    data.set_data("abcd");
    writer->Write(data);
    writer->WritesDone();
    EXPECT_EQ(writer->Finish().error_code(), Code::INVALID_ARGUMENT);
  }
  // Every partial upload is freed once the server has finished with its cancelled call (on a
  // loaded machine that can take a while).
  for (int i = 0; i < 100 && ServerBytesInUse() != base; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(ServerBytesInUse(), base);
  EXPECT_THAT(session_.from_bytes({4}, client::DType::kFloat32, std::string(16, '\0')).status(),
              IsOk());
}

TEST_F(BadInputServerTest, OverQuotaIsResourceExhaustedAndTheSessionStaysUsable) {
  Tensor fits = session_.zeros({1 << 20});  // 4 MiB of 8
  ASSERT_OK(fits.status());
  Tensor too_much = session_.zeros({1 << 21});  // 8 MiB more
  EXPECT_THAT(too_much.status(), StatusIsWith(absl::StatusCode::kResourceExhausted, "session"));
  EXPECT_THAT(session_.from_bytes({1 << 21}, client::DType::kFloat32, std::string(8 << 20, 'x'))
                  .status(),
              StatusIs(absl::StatusCode::kResourceExhausted));
  Tensor small = session_.ones({16});
  EXPECT_EQ(*small.to_vector<float>(), std::vector<float>(16, 1.0f));
}

TEST_F(BadInputServerTest, TooManySessionsAndTooManyQueuedOps) {
  std::vector<client::Session> sessions;
  absl::Status last;
  for (int i = 0; i < 10 && last.ok(); ++i) {
    absl::StatusOr<client::Session> s = client::Session::Open(channel_);
    last = s.status();
    if (s.ok()) sessions.push_back(*s);
  }
  EXPECT_THAT(last, StatusIs(absl::StatusCode::kResourceExhausted));
  sessions.clear();

  session_.CallNoOutput("_sleep", {}, client::Attrs().Int("ms", 300));
  Tensor x = session_.zeros({4});
  for (int i = 0; i < 100; ++i) x.fill_(i);
  EXPECT_THAT(session_.Flush(), StatusIsWith(absl::StatusCode::kResourceExhausted, "queued"));
  ASSERT_OK(session_.Synchronize());
  EXPECT_EQ(*x.sizes(), std::vector<int64_t>{4});  // still usable
}

TEST_F(BadInputServerTest, DownloadOfAPoisonedTensorFails) {
  Tensor x = session_.arange(4.0);
  ASSERT_OK_AND_ASSIGN(Tensor index, session_.from_vector<int64_t>({-9}, {1}));
  Tensor bad = session_.Call("take", {x, index});
  ASSERT_OK(bad.status());
  EXPECT_THAT(bad.bytes().status(), StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_THAT(bad.storage().ReadBytes(0, 1), StatusIs(absl::StatusCode::kFailedPrecondition));
  // The read raised the op's error: a later synchronize does not raise it again.
  ASSERT_OK(session_.Synchronize());
  // One never read is synchronize's to raise, once; what depends on it stays poisoned.
  Tensor unread = session_.Call("take", {x, index});
  Tensor twice = session_.Call("mul", {unread, unread});
  ASSERT_OK(twice.status());
  EXPECT_THAT(session_.Synchronize(), StatusIs(absl::StatusCode::kOutOfRange));
  ASSERT_OK(session_.Synchronize());
  EXPECT_THAT(twice.bytes().status(), StatusIs(absl::StatusCode::kFailedPrecondition));
}

TEST_F(BadInputServerTest, ClientLeavingMidDownloadFreesItsMemory) {
  const int64_t base = ServerBytesInUse();
  {
    // Non-contiguous: the download streams a snapshot, charged to the session (2 MiB + 2 MiB).
    Tensor big = session_.arange(double(1 << 19)).view({512, 1024}).t();
    ASSERT_OK(session_.Synchronize());
    grpc::ClientContext ctx;
    v1::DownloadRequest request;
    request.set_session_id(session_.id());
    request.set_id(big.id());
    auto reader = stub_->Download(&ctx, request);
    v1::DownloadResponse message;
    ASSERT_TRUE(reader->Read(&message));  // header
    ASSERT_TRUE(reader->Read(&message));  // one chunk
    ctx.TryCancel();
    reader->Finish();
  }
  ASSERT_OK(session_.Flush());  // releases `big`
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(ServerBytesInUse(), base);
  // Writes to a tensor whose download was abandoned are not held back.
  Tensor y = session_.zeros({1 << 16});
  y.fill_(2.0);
  EXPECT_EQ((*y.to_vector<float>())[100], 2.0f);
}

TEST_F(BadInputServerTest, HugeShapesAreRefusedBeforeAllocating) {
  const int64_t base = ServerBytesInUse();
  Tensor huge = session_.zeros({int64_t{1} << 40});
  EXPECT_THAT(huge.status(), StatusIs(absl::StatusCode::kResourceExhausted));
  Tensor overflow = session_.zeros({int64_t{1} << 62, 16});
  EXPECT_THAT(overflow.status(), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_EQ(ServerBytesInUse(), base);
}

TEST_F(BadInputServerTest, OversizedBatchIsRefused) {
  v1::RunOpsRequest r = Batch(session_.id());
  for (int i = 0; i < 200000; ++i) Add(r, "alias", {1}, {static_cast<uint64_t>(i + 10)});
  v1::RunOpsResponse response = Run(r);
  EXPECT_EQ(response.error().code(), static_cast<int>(Code::RESOURCE_EXHAUSTED));
  EXPECT_EQ(response.results_size(), 0);
}

}  // namespace
}  // namespace tensord::testing
