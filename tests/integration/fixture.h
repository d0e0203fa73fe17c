// A test fixture with one real tensord process per test suite and a fresh session per test.
#ifndef TENSORD_TESTS_INTEGRATION_FIXTURE_H_
#define TENSORD_TESTS_INTEGRATION_FIXTURE_H_

#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tensord/client.h"
#include "tensord/v1/tensord.grpc.pb.h"
#include "tests/integration/server_process.h"
#include "tests/test_util.h"

namespace tensord::testing {

class ServerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    server_ = new ServerProcess(ServerFlags());
    ASSERT_TRUE(server_->ok()) << "tensord did not start";
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }
  static std::vector<std::string> ServerFlags() { return {}; }

  void SetUp() override {
    channel_ = server_->Channel();
    stub_ = v1::Tensord::NewStub(channel_);
    auto session = client::Session::Open(channel_);
    ASSERT_TRUE(session.ok()) << session.status();
    session_ = *session;
  }

  int64_t ServerBytesInUse() {
    grpc::ClientContext ctx;
    v1::GetServerInfoResponse info;
    EXPECT_TRUE(stub_->GetServerInfo(&ctx, v1::GetServerInfoRequest(), &info).ok());
    return info.bytes_in_use();
  }

  static ServerProcess* server_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Tensord::Stub> stub_;
  client::Session session_;
};

inline ServerProcess* ServerTest::server_ = nullptr;

}  // namespace tensord::testing

#endif  // TENSORD_TESTS_INTEGRATION_FIXTURE_H_
