// Session reattach through the C++ client: the connection to the server is cut again and again
// (a loopback proxy drops every connection) while a program of in-place updates, fresh ops,
// uploads and reads runs. The client redials and resends what was in flight by itself
// (SessionOptions::reconnect_timeout); numbered batches run once, a resent upload whose first
// try arrived is found, downloads start again. The program finishes with the right values.
#include <chrono>
#include <numeric>
#include <thread>
#include <vector>

#include "grpcpp/grpcpp.h"
#include "tests/integration/fixture.h"
#include "tests/integration/tcp_proxy.h"

namespace tensord::testing {
namespace {

using client::Tensor;
using Clock = std::chrono::steady_clock;

class ReattachTest : public ServerTest {};

TEST_F(ReattachTest, AProgramWhoseConnectionIsCutAgainAndAgainFinishesRight) {
  TcpProxy proxy(server_->port());
  ASSERT_TRUE(proxy.ok());
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 20);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 100);
  auto channel =
      grpc::CreateCustomChannel(proxy.address(), grpc::InsecureChannelCredentials(), args);
  ASSERT_OK_AND_ASSIGN(client::Session s, client::Session::Open(channel));

  // Cuts every connection each 0.25 s until it goes out of scope (an ASSERT that returns
  // early included).
  struct Cutter {
    explicit Cutter(TcpProxy& proxy)
        : thread([this, &proxy] {
            while (!stop) {
              std::this_thread::sleep_for(std::chrono::milliseconds(250));
              proxy.DropAll();
            }
          }) {}
    ~Cutter() {
      stop = true;
      thread.join();
    }
    std::atomic<bool> stop{false};
    std::thread thread;
  };
  auto cutter = std::make_unique<Cutter>(proxy);

  constexpr int64_t kN = 1000;
  Tensor x = s.zeros({kN});
  std::vector<float> want(kN, 0.0f);
  std::vector<float> ramp(kN);
  std::iota(ramp.begin(), ramp.end(), 0.0f);
  int steps = 0, uploads = 0;
  const auto start = Clock::now();
  while (Clock::now() - start < std::chrono::seconds(3)) {
    x.add_(1.0);
    x.mul_(2.0);
    for (float& w : want) w = (w + 1.0f) * 2.0f;
    Tensor y = s.arange(static_cast<double>(kN)).add(x);  // a fresh op reading the update
    if (steps % 5 == 0) {
      absl::StatusOr<std::vector<float>> got = y.to_vector<float>();
      ASSERT_OK(got.status()) << "step " << steps;
      std::vector<float> expected(kN);
      for (int64_t i = 0; i < kN; ++i) expected[i] = ramp[i] + want[i];
      ASSERT_EQ(*got, expected) << "step " << steps;
      // An upload, added in place: resent if cut, never applied twice.
      ASSERT_OK_AND_ASSIGN(Tensor ones, s.from_vector<float>(std::vector<float>(kN, 1.0f), {kN}));
      ++uploads;
      x.zero_();
      x.add_(ones);
      std::fill(want.begin(), want.end(), 1.0f);
    }
    ++steps;
  }
  ASSERT_OK(s.Synchronize());
  ASSERT_OK_AND_ASSIGN(std::vector<float> final_x, x.to_vector<float>());
  cutter.reset();
  EXPECT_EQ(final_x, want);
  EXPECT_GT(steps, 10);
  EXPECT_GT(proxy.dropped(), 5);  // the program really ran through cut connections
  std::printf("reattach (C++): %d steps and %d uploads right through %lld cut connections\n",
              steps, uploads, static_cast<long long>(proxy.dropped()));
}

}  // namespace
}  // namespace tensord::testing
