#include "engine/runtime/allocator.h"

#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include "engine/tensor/storage.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace tensord::engine {
namespace {

TEST(CpuAllocatorTest, ReusesFreedBlocksOfTheSameClass) {
  Allocator& a = CpuAllocator();
  ASSERT_OK_AND_ASSIGN(void* p, a.Allocate(100000));
  a.Deallocate(p, 100000);
  const AllocatorStats before = a.stats();
  ASSERT_OK_AND_ASSIGN(void* q, a.Allocate(99000));  // same size class
  EXPECT_EQ(q, p);
  EXPECT_EQ(a.stats().pool_hits, before.pool_hits + 1);
  a.Deallocate(q, 99000);
}

TEST(CpuAllocatorTest, LargeBlocksAreHugePageAligned) {
  Allocator& a = CpuAllocator();
  ASSERT_OK_AND_ASSIGN(void* p, a.Allocate(5 << 20));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % (2 << 20), 0u);
  std::memset(p, 1, 5 << 20);  // every byte is writable
  a.Deallocate(p, 5 << 20);
}

TEST(CpuAllocatorTest, SmallBlocksAreCacheLineAligned) {
  Allocator& a = CpuAllocator();
  for (int64_t n : {1, 63, 64, 65, 1000, 4097}) {
    ASSERT_OK_AND_ASSIGN(void* p, a.Allocate(n));
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u) << n;
    a.Deallocate(p, n);
  }
}

TEST(CpuAllocatorTest, ZeroBytesIsNullAndCountsNothing) {
  Allocator& a = CpuAllocator();
  const AllocatorStats before = a.stats();
  ASSERT_OK_AND_ASSIGN(void* p, a.Allocate(0));
  EXPECT_EQ(p, nullptr);
  a.Deallocate(p, 0);
  EXPECT_EQ(a.stats().live_allocations, before.live_allocations);
}

TEST(CpuAllocatorTest, ImpossibleSizesAreResourceExhausted) {
  Allocator& a = CpuAllocator();
  EXPECT_THAT(a.Allocate(int64_t{1} << 60),
              testing::StatusIs(absl::StatusCode::kResourceExhausted));
  EXPECT_THAT(a.Allocate(-5), testing::StatusIs(absl::StatusCode::kResourceExhausted));
}

TEST(CpuAllocatorTest, LiveBytesTrackStorages) {
  const int64_t before = CpuAllocator().stats().live_bytes;
  {
    ASSERT_OK_AND_ASSIGN(auto storage, Storage::Create(CpuAllocator(), 12345));
    EXPECT_EQ(CpuAllocator().stats().live_bytes, before + 12345);
    EXPECT_EQ(storage->nbytes(), 12345);
    EXPECT_TRUE(storage->device().is_cpu());
  }
  EXPECT_EQ(CpuAllocator().stats().live_bytes, before);
}

TEST(StorageTest, IdsAreUniqueAndStorageIsSharedUntilTheLastOwner) {
  ASSERT_OK_AND_ASSIGN(auto a, Storage::Create(CpuAllocator(), 64));
  ASSERT_OK_AND_ASSIGN(auto b, Storage::Create(CpuAllocator(), 64));
  EXPECT_NE(a->id(), b->id());
  std::weak_ptr<Storage> weak = a;
  auto owner = a;
  a.reset();
  EXPECT_FALSE(weak.expired());
  owner.reset();
  EXPECT_TRUE(weak.expired());
}

TEST(CpuAllocatorTest, ConcurrentAllocateAndFree) {
  Allocator& a = CpuAllocator();
  const int64_t before = a.stats().live_bytes;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&a, t] {
      for (int i = 0; i < 2000; ++i) {
        const int64_t n = 64 * (1 + (i * 7 + t) % 50);
        absl::StatusOr<void*> p = a.Allocate(n);
        ASSERT_TRUE(p.ok());
        static_cast<char*>(*p)[0] = 1;
        a.Deallocate(*p, n);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(a.stats().live_bytes, before);
}

}  // namespace
}  // namespace tensord::engine
