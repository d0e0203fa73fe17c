// A main for fuzz targets built without libFuzzer (the normal gcc build): runs
// LLVMFuzzerTestOneInput once over every file given, or every file in the directories given
// (sorted, not recursive), as libFuzzer does when it is given files. Fails when no input is found.
//
//   <target>_fuzz [-mutate=N] [-seed=S] [-max_len=L] FILE_OR_DIR...
//
// -mutate=N additionally runs N mutants of each input made by the target's
// LLVMFuzzerCustomMutator (targets that have one), LLVMFuzzerMutate being a plain byte flipper
// here: a smoke test of the mutator, and a way to measure how many mutants pass validation
// without clang. Other flags starting with '-' are ignored (libFuzzer's).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) __attribute__((weak));
extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size,
                                          unsigned int seed) __attribute__((weak));

namespace {
std::mt19937 byte_rng(1);
}  // namespace

// libFuzzer's byte-level mutator, which custom mutators call; here: flip, insert or drop a byte.
extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size) {
  switch (byte_rng() % 3) {
    case 0:
      if (size > 0) data[byte_rng() % size] ^= static_cast<uint8_t>(1u << (byte_rng() % 8));
      return size;
    case 1:
      if (size < max_size) {
        const size_t at = size == 0 ? 0 : byte_rng() % (size + 1);
        std::memmove(data + at + 1, data + at, size - at);
        data[at] = static_cast<uint8_t>(byte_rng());
        return size + 1;
      }
      return size;
    default:
      if (size > 0) {
        const size_t at = byte_rng() % size;
        std::memmove(data + at, data + at + 1, size - at - 1);
        return size - 1;
      }
      return size;
  }
}

int main(int argc, char** argv) {
  if (LLVMFuzzerInitialize) LLVMFuzzerInitialize(&argc, &argv);
  long mutants = 0;
  unsigned seed = 1;
  size_t max_len = 1 << 16;
  std::vector<std::filesystem::path> files;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("-mutate=", 0) == 0) {
      mutants = std::atol(arg.c_str() + 8);
    } else if (arg.rfind("-seed=", 0) == 0) {
      seed = static_cast<unsigned>(std::atol(arg.c_str() + 6));
    } else if (arg.rfind("-max_len=", 0) == 0) {
      max_len = static_cast<size_t>(std::atol(arg.c_str() + 9));
    } else if (!arg.empty() && arg[0] == '-') {
      continue;
    } else if (std::filesystem::is_directory(arg)) {
      std::vector<std::filesystem::path> in_dir;
      for (const auto& entry : std::filesystem::directory_iterator(arg)) {
        if (entry.is_regular_file()) in_dir.push_back(entry.path());
      }
      std::sort(in_dir.begin(), in_dir.end());
      files.insert(files.end(), in_dir.begin(), in_dir.end());
    } else {
      files.emplace_back(arg);
    }
  }
  if (files.empty()) {
    std::fprintf(stderr, "%s: no inputs (give files or directories)\n", argv[0]);
    return 1;
  }
  byte_rng.seed(seed);
  long runs = 0;
  for (const auto& path : files) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "%s: cannot read %s\n", argv[0], path.c_str());
      return 1;
    }
    const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                                     std::istreambuf_iterator<char>());
    // A copy of exactly the input's size, so that ASan sees a read past its end.
    std::vector<uint8_t> input(bytes);
    LLVMFuzzerTestOneInput(input.data(), input.size());
    ++runs;
    if (mutants > 0 && LLVMFuzzerCustomMutator) {
      std::vector<uint8_t> current = bytes;
      for (long m = 0; m < mutants; ++m) {
        const size_t len = std::min(current.size(), max_len);
        std::vector<uint8_t> mutant(current.begin(), current.begin() + static_cast<long>(len));
        mutant.resize(max_len);
        mutant.resize(LLVMFuzzerCustomMutator(mutant.data(), len, max_len,
                                              seed + static_cast<unsigned>(runs)));
        std::vector<uint8_t> exact(mutant);
        LLVMFuzzerTestOneInput(exact.data(), exact.size());
        ++runs;
        // The next mutant grows from this one half of the time, else from the input again.
        current = byte_rng() % 2 == 0 ? mutant : bytes;
      }
    }
  }
  std::fprintf(stderr, "%s: ran %ld inputs (%zu files)\n", argv[0], runs, files.size());
  return 0;
}
