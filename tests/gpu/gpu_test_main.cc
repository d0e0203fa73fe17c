// main() of the GPU tests: on a machine without a usable GPU they report SKIPPED (exit 77, which
// ctest shows as Skipped), never passed; TENSORD_REQUIRE_GPU=1 turns that into a failure.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "engine/cuda/cuda_backend.h"
#include "gtest/gtest.h"

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  std::string why;
  const auto gpus = tensord::engine::cuda::RegisterBackends(&why);
  if (gpus.empty()) {
    const char* require = std::getenv("TENSORD_REQUIRE_GPU");
    if (require != nullptr && std::strcmp(require, "1") == 0) {
      std::fprintf(stderr, "FAILED: TENSORD_REQUIRE_GPU=1 but %s\n", why.c_str());
      return 1;
    }
    std::printf("SKIPPED: %s\n", why.c_str());
    return 77;
  }
  for (const auto& gpu : gpus) {
    std::printf("%s: %s, %lld MiB, compute capability %d.%d, %d SMs\n",
                gpu.device.ToString().c_str(), gpu.name.c_str(),
                static_cast<long long>(gpu.total_memory >> 20), gpu.major, gpu.minor,
                gpu.multiprocessors);
  }
  return RUN_ALL_TESTS();
}
