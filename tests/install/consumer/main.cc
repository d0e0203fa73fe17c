// Connects to the tensord at argv[1] and prints what the README's C++ example prints.
#include <cstdio>

#include "tensord/client.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: consumer HOST:PORT\n");
    return 2;
  }
  auto channel = tensord::client::CreateChannel(argv[1], grpc::InsecureChannelCredentials());
  absl::StatusOr<tensord::client::Session> s = tensord::client::Session::Open(channel);
  if (!s.ok()) {
    std::fprintf(stderr, "%s\n", s.status().ToString().c_str());
    return 1;
  }
  tensord::client::Tensor p = s->arange(24).view({1, 2, 3, 4}).permute({0, 2, 3, 1});
  absl::StatusOr<std::vector<int64_t>> strides = p.stride();
  absl::StatusOr<std::vector<int64_t>> values = p.contiguous().to_vector<int64_t>();
  absl::StatusOr<std::vector<int64_t>> sums = p.sum({1, 2}).to_vector<int64_t>();  // typed op
  for (const absl::Status& status : {strides.status(), values.status(), sums.status()}) {
    if (!status.ok()) {
      std::fprintf(stderr, "%s\n", status.ToString().c_str());
      return 1;
    }
  }
  std::printf("strides");
  for (int64_t v : *strides) std::printf(" %lld", static_cast<long long>(v));
  std::printf("\nvalues");
  for (int64_t v : *values) std::printf(" %lld", static_cast<long long>(v));
  std::printf("\nsums");
  for (int64_t v : *sums) std::printf(" %lld", static_cast<long long>(v));
  std::printf("\n");
  return 0;
}
