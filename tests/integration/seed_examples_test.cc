// Every example of the seed articles that uses views, storages and copies, run on a real
// tensord through the C++ client. Expected values are PyTorch 1.13's (as the articles print
// them, checked against torch; where an article misprints, torch's value is used and noted).
#include <vector>

#include "tests/integration/fixture.h"

namespace tensord::testing {
namespace {

using client::DType;
using client::Ellipsis;
using client::None;
using client::Slice;
using client::Tensor;
using V = std::vector<int64_t>;
using F = std::vector<float>;

class SeedExamplesTest : public ServerTest {
 protected:
  Tensor Floats(const F& values, const V& sizes) {
    absl::StatusOr<Tensor> t = session_.from_vector(values, sizes);
    EXPECT_TRUE(t.ok()) << t.status();
    return *t;
  }
};

#define EXPECT_STRIDE(t, ...) EXPECT_EQ(*(t).stride(), (V{__VA_ARGS__}))
#define EXPECT_SIZES(t, ...) EXPECT_EQ(*(t).sizes(), (V{__VA_ARGS__}))

// 000: "What is the strides format of PyTorch tensors" (permute, broadcast, indexing, reshape,
// contiguous).
TEST_F(SeedExamplesTest, Seed000StridesPermuteBroadcastIndexing) {
  Tensor t = session_.arange(0, 24).reshape({1, 2, 3, 4});
  EXPECT_STRIDE(t, 24, 12, 4, 1);
  std::vector<int64_t> internal(24);
  for (int i = 0; i < 24; ++i) internal[i] = i;
  EXPECT_EQ(*t.storage().to_vector<int64_t>(), internal);

  Tensor p1 = t.permute({1, 2, 3, 0});
  EXPECT_TRUE(*p1.is_contiguous());
  EXPECT_STRIDE(p1, 12, 4, 1, 24);
  Tensor p2 = t.permute({0, 2, 3, 1});
  EXPECT_FALSE(*p2.is_contiguous());
  EXPECT_STRIDE(p2, 24, 4, 1, 12);
  Tensor p3 = t.permute({1, 0, 3, 2});
  EXPECT_FALSE(*p3.is_contiguous());
  EXPECT_STRIDE(p3, 12, 24, 1, 4);
  // permute is lazy: the storage is the same bytes.
  EXPECT_EQ(*p1.storage().to_vector<int64_t>(), internal);
  EXPECT_EQ(*p1.data_ptr(), *t.data_ptr());

  Tensor b = t.broadcast_to({2, 2, 3, 4});
  EXPECT_FALSE(*b.is_contiguous());
  EXPECT_SIZES(b, 2, 2, 3, 4);
  EXPECT_STRIDE(b, 0, 12, 4, 1);
  EXPECT_EQ(*b.storage().to_vector<int64_t>(), internal);  // no copy

  const std::vector<client::Index> col2 = {Slice{}, Slice{}, Slice{}, int64_t{2}};
  Tensor c = t.index(col2);
  EXPECT_EQ(*c.to_vector<int64_t>(), (std::vector<int64_t>{2, 6, 10, 14, 18, 22}));
  EXPECT_EQ(*t.storage_offset(), 0);
  EXPECT_EQ(*c.storage_offset(), 2);
  EXPECT_FALSE(*c.is_contiguous());
  EXPECT_STRIDE(c, 24, 12, 4);
  EXPECT_EQ(*c.data_ptr(), *t.data_ptr() + 2 * 8);

  Tensor r = c.reshape({3, 2});  // still a view: the storage does not change
  EXPECT_STRIDE(r, 8, 4);
  EXPECT_EQ(*r.storage().to_vector<int64_t>(), internal);
  Tensor rc = r.contiguous();
  EXPECT_EQ(*rc.storage().to_vector<int64_t>(), (std::vector<int64_t>{2, 6, 10, 14, 18, 22}));
  EXPECT_SIZES(rc, 3, 2);
  EXPECT_STRIDE(rc, 2, 1);

  Tensor another = session_.arange(0, 48).reshape({2, 2, 3, 4});
  Tensor ac = another.index(col2);
  EXPECT_EQ(*ac.to_vector<int64_t>(),
            (std::vector<int64_t>{2, 6, 10, 14, 18, 22, 26, 30, 34, 38, 42, 46}));
  EXPECT_STRIDE(ac, 24, 12, 4);
}

// 001: "PyTorch tensor operations: the underlying storage" (storage access and assignment,
// in-place zero_, offsets, clone, transpose, contiguous).
TEST_F(SeedExamplesTest, Seed001StorageOffsetsCloneTranspose) {
  Tensor points = Floats({4, 1, 5, 3, 2, 1}, {3, 2});
  EXPECT_EQ(*points.storage().to_vector<float>(), (F{4, 1, 5, 3, 2, 1}));
  EXPECT_EQ(*points.storage().size(), 6);
  EXPECT_EQ(*points.storage().get<float>(0), 4.0f);
  ASSERT_OK(points.storage().set<float>(0, 2.0f));
  EXPECT_EQ(*points.to_vector<float>(), (F{2, 1, 5, 3, 2, 1}));

  Tensor a = session_.ones({3, 2});
  const Tensor& b = a.zero_();
  EXPECT_EQ(*b.to_vector<float>(), F(6, 0.0f));
  EXPECT_EQ(*a.to_vector<float>(), F(6, 0.0f));

  Tensor p4 = Floats({4, 1, 3, 2, 5, 3, 7, 8, 2, 1, 9, 5, 3, 8, 4, 5}, {4, 4});
  Tensor second = p4.index({Slice{1, {}, {}}, Slice{1, {}, {}}});
  EXPECT_EQ(*second.to_vector<float>(), (F{3, 7, 8, 1, 9, 5, 8, 4, 5}));
  EXPECT_EQ(*p4.storage_offset(), 0);
  EXPECT_EQ(*second.storage_offset(), 5);
  EXPECT_STRIDE(p4, 4, 1);
  EXPECT_STRIDE(second, 4, 1);
  Tensor cloned = second.clone();
  cloned.index({int64_t{0}, int64_t{0}}).fill_(10.0);
  EXPECT_EQ(*cloned.to_vector<float>(), (F{10, 7, 8, 1, 9, 5, 8, 4, 5}));
  EXPECT_EQ(*p4.to_vector<float>(), (F{4, 1, 3, 2, 5, 3, 7, 8, 2, 1, 9, 5, 3, 8, 4, 5}));

  Tensor pts = Floats({4, 1, 5, 3, 2, 1}, {3, 2});
  Tensor pts_t = pts.t();
  EXPECT_EQ(*pts_t.to_vector<float>(), (F{4, 5, 2, 1, 3, 1}));
  EXPECT_EQ(pts.info()->storage_id, pts_t.info()->storage_id);  // one storage
  EXPECT_STRIDE(pts, 2, 1);
  EXPECT_STRIDE(pts_t, 1, 2);
  EXPECT_TRUE(*pts.is_contiguous());
  EXPECT_FALSE(*pts_t.is_contiguous());
  EXPECT_EQ(*pts_t.storage().to_vector<float>(), (F{4, 1, 5, 3, 2, 1}));
  Tensor pts_t_cont = pts_t.contiguous();
  EXPECT_EQ(*pts_t_cont.to_vector<float>(), (F{4, 5, 2, 1, 3, 1}));
  EXPECT_STRIDE(pts_t_cont, 3, 1);
  EXPECT_EQ(*pts_t_cont.storage().to_vector<float>(), (F{4, 5, 2, 1, 3, 1}));
}

// 002: "Contiguous & stride" (reshape/flip/transpose contiguity, view after transpose,
// meshgrid-style expands, repeat vs expand).
TEST_F(SeedExamplesTest, Seed002ContiguityViewExpandRepeat) {
  Tensor a = session_.arange(4);
  EXPECT_STRIDE(a, 1);
  Tensor b = a.reshape({2, 2});
  EXPECT_TRUE(*b.is_contiguous());
  EXPECT_STRIDE(b, 2, 1);
  Tensor f = b.flip({0});
  EXPECT_EQ(*f.to_vector<int64_t>(), (std::vector<int64_t>{2, 3, 0, 1}));
  EXPECT_TRUE(*f.is_contiguous());
  EXPECT_STRIDE(f, 2, 1);
  EXPECT_FALSE(*b.transpose(0, 1).is_contiguous());
  EXPECT_FALSE(*b.permute({1, 0}).is_contiguous());
  EXPECT_EQ(*b.transpose(0, 1).to_vector<int64_t>(), (std::vector<int64_t>{0, 2, 1, 3}));

  Tensor bt = session_.arange(8).reshape({2, 4}).transpose(0, 1);
  EXPECT_THAT(bt.view({2, 4}).status(),
              StatusIsWith(absl::StatusCode::kInvalidArgument, "view size is not compatible"));
  EXPECT_EQ(*bt.contiguous().view({2, 4}).to_vector<int64_t>(),
            (std::vector<int64_t>{0, 4, 1, 5, 2, 6, 3, 7}));
  EXPECT_EQ(*bt.reshape({2, 4}).to_vector<int64_t>(),
            (std::vector<int64_t>{0, 4, 1, 5, 2, 6, 3, 7}));

  Tensor a6 = session_.arange(6).reshape({2, 3, 1});
  EXPECT_STRIDE(a6, 3, 1, 1);
  EXPECT_STRIDE(a6.transpose(0, 1), 1, 3, 1);
  EXPECT_FALSE(*a6.transpose(0, 1).is_contiguous());
  EXPECT_STRIDE(a6.transpose(1, 2), 3, 1, 1);
  EXPECT_TRUE(*a6.transpose(1, 2).is_contiguous());
  EXPECT_STRIDE(a6.transpose(0, 2), 1, 1, 3);
  EXPECT_FALSE(*a6.transpose(0, 2).is_contiguous());
  EXPECT_STRIDE(a6.T(), 1, 1, 3);

  // cartesian_prod(arange(3), arange(2)) is this 6x2 table.
  absl::StatusOr<Tensor> xy =
      session_.from_vector<int64_t>({0, 0, 0, 1, 1, 0, 1, 1, 2, 0, 2, 1}, {6, 2});
  ASSERT_OK(xy.status());
  Tensor xy26 = xy->view({2, 6});
  EXPECT_EQ(*xy26.to_vector<int64_t>(), (std::vector<int64_t>{0, 0, 0, 1, 1, 0, 1, 1, 2, 0, 2, 1}));
  EXPECT_STRIDE(xy26, 6, 1);  // the article prints (4, 1); torch gives (6, 1)
  EXPECT_FALSE(*xy->t().is_contiguous());
  EXPECT_STRIDE(xy->t(), 1, 2);

  // meshgrid(arange(3), arange(2), indexing="ij") is made of expanded views.
  Tensor y = session_.arange(3).index({Slice{}, None}).expand({3, 2});
  Tensor x = session_.arange(2).index({None, Slice{}}).expand({3, 2});
  EXPECT_EQ(*y.to_vector<int64_t>(), (std::vector<int64_t>{0, 0, 1, 1, 2, 2}));
  EXPECT_EQ(*x.to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 0, 1, 0, 1}));
  EXPECT_STRIDE(y, 1, 0);
  EXPECT_STRIDE(x, 0, 1);
  EXPECT_EQ(*y.storage().to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(*x.storage().to_vector<int64_t>(), (std::vector<int64_t>{0, 1}));
  EXPECT_STRIDE(y.contiguous(), 2, 1);
  Tensor rep = y.unsqueeze(2).repeat({1, 1, 2});
  EXPECT_SIZES(rep, 3, 2, 2);
  EXPECT_STRIDE(rep, 4, 2, 1);
  EXPECT_TRUE(*rep.is_contiguous());
  Tensor exp = y.unsqueeze(2).expand({-1, -1, 2});
  EXPECT_STRIDE(exp, 1, 0, 0);
  EXPECT_FALSE(*exp.is_contiguous());
  EXPECT_EQ(*rep.to_vector<int64_t>(), *exp.to_vector<int64_t>());
}

// 003: "PyTorch's tensor data structure" (basic indexing, as_strided, views write through).
TEST_F(SeedExamplesTest, Seed003IndexingAsStridedViews) {
  Tensor x = session_.arange(200).reshape({10, 20}).contiguous();
  EXPECT_EQ(*x.index({int64_t{0}, int64_t{0}}).to_vector<int64_t>(), (std::vector<int64_t>{0}));
  EXPECT_EQ(*x.index({int64_t{0}, int64_t{-1}}).to_vector<int64_t>(), (std::vector<int64_t>{19}));
  std::vector<int64_t> row2(20);
  for (int i = 0; i < 20; ++i) row2[i] = 40 + i;
  EXPECT_EQ(*x.index({int64_t{2}, Slice{}}).to_vector<int64_t>(), row2);
  EXPECT_EQ(*x.index({int64_t{0}, Slice{1, 9, 3}}).to_vector<int64_t>(),
            (std::vector<int64_t>{1, 4, 7}));
  std::vector<int64_t> col1(10);
  for (int i = 0; i < 10; ++i) col1[i] = 20 * i + 1;
  EXPECT_EQ(*x.index({Ellipsis, int64_t{1}}).to_vector<int64_t>(), col1);
  EXPECT_SIZES(x.index({Slice{}, None, Slice{}}), 10, 1, 20);
  EXPECT_EQ(*x.index({int64_t{0}}).data_ptr(), *x.data_ptr());  // a view of row 0

  Tensor x12 = session_.arange(12).reshape({3, 4}).contiguous();
  EXPECT_STRIDE(x12, 4, 1);
  Tensor y = x12.as_strided({4, 3}, {1, 4});
  EXPECT_EQ(*y.to_vector<int64_t>(), (std::vector<int64_t>{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11}));
  EXPECT_STRIDE(y, 1, 4);
  EXPECT_EQ(y.info()->storage_id, x12.info()->storage_id);

  Tensor z = session_.zeros({3, 3});
  Tensor z0 = z.index({int64_t{0}});
  z0.index({int64_t{0}}).fill_(1);
  EXPECT_EQ(*z.to_vector<float>(), (F{1, 0, 0, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(*z0.to_vector<float>(), (F{1, 0, 0}));
}

// 004: "How does a PyTorch tensor hold its data" (storage, offsets and strides of views, writes
// visible through every view, contiguous copies, clone).
TEST_F(SeedExamplesTest, Seed004StorageViewsCloneContiguous) {
  Tensor a = Floats({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor storage_view = a;  // a.storage() sees the same bytes
  EXPECT_EQ(*a.storage().to_vector<float>(), (F{1, 2, 3, 4, 5, 6}));
  a.index({int64_t{1}, int64_t{1}}).fill_(10);
  EXPECT_EQ(*a.to_vector<float>(), (F{1, 2, 3, 4, 10, 6}));
  EXPECT_EQ(*a.storage().to_vector<float>(), (F{1, 2, 3, 4, 10, 6}));
  EXPECT_EQ(*a.storage_offset(), 0);
  EXPECT_STRIDE(a, 3, 1);

  Tensor b = a.index({Slice{1, {}, {}}});
  EXPECT_EQ(*b.to_vector<float>(), (F{4, 10, 6}));
  EXPECT_EQ(*b.storage_offset(), 3);
  EXPECT_STRIDE(b, 3, 1);
  Tensor c = a.transpose(0, 1);
  EXPECT_EQ(*c.to_vector<float>(), (F{1, 4, 2, 10, 3, 6}));
  EXPECT_EQ(*c.storage_offset(), 0);
  EXPECT_STRIDE(c, 1, 3);

  a.index({int64_t{1}, int64_t{2}}).fill_(11);
  EXPECT_EQ(*a.to_vector<float>(), (F{1, 2, 3, 4, 10, 11}));
  EXPECT_EQ(*b.to_vector<float>(), (F{4, 10, 11}));
  EXPECT_EQ(*c.to_vector<float>(), (F{1, 4, 2, 10, 3, 11}));
  EXPECT_TRUE(*a.is_contiguous());
  EXPECT_TRUE(*b.is_contiguous());
  EXPECT_FALSE(*c.is_contiguous());

  Tensor c_cont = c.contiguous();
  EXPECT_TRUE(*c_cont.is_contiguous());
  // The article prints 6.0 last, but a[1, 2] = 11 came first: torch gives 11.
  EXPECT_EQ(*c_cont.storage().to_vector<float>(), (F{1, 4, 2, 10, 3, 11}));

  Tensor a_clone = a.clone();
  a_clone.index({int64_t{0}, int64_t{0}}).fill_(100);
  EXPECT_EQ(*a.to_vector<float>(), (F{1, 2, 3, 4, 10, 11}));
  EXPECT_EQ(*a_clone.to_vector<float>(), (F{100, 2, 3, 4, 10, 11}));
}

}  // namespace
}  // namespace tensord::testing
