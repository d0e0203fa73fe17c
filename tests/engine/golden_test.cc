// Golden cases generated from real PyTorch 1.13 (tests/golden/gen_golden.py), each replayed
// through the engine's op registry: sizes, strides, offset, contiguity, dtype, storage sharing,
// values and in-place effects must equal torch's; errors must be the same exception class.
#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/core/errors.h"
#include "engine/ops/op_registry.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/engine/tensor_test_util.h"
#include "tests/test_util.h"

namespace tensord::engine {
namespace {

using json = nlohmann::json;
using test_util::MakeStrided;
using test_util::StorageValues;
using test_util::ToVec;
using test_util::Values;

std::vector<json> LoadCases() {
  std::ifstream in(TENSORD_GOLDEN_FILE);
  std::vector<json> cases;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) cases.push_back(json::parse(line));
  }
  return cases;
}

const std::vector<json>& Cases() {
  static const std::vector<json>* cases = new std::vector<json>(LoadCases());
  return *cases;
}

absl::StatusOr<Tensor> MakeInput(const json& spec, double base = 0) {
  absl::StatusOr<DType> dtype = ParseDType(spec["dtype"].get<std::string>());
  if (!dtype.ok()) return dtype.status();
  auto sizes = spec["sizes"].get<std::vector<int64_t>>();
  auto strides = spec["strides"].get<std::vector<int64_t>>();
  return MakeStrided(*dtype, spec["storage_numel"].get<int64_t>(), sizes, strides,
                     spec["offset"].get<int64_t>(), base);
}

IndexItem ParseIndexItem(const json& item) {
  if (item.contains("int")) return IndexItem::Integer(item["int"].get<int64_t>());
  if (item.contains("none")) return IndexItem::None();
  if (item.contains("ellipsis")) return IndexItem::Ellipsis();
  const json& s = item["slice"];
  const auto opt = [](const json& v) {
    return v.is_null() ? std::optional<int64_t>() : std::optional<int64_t>(v.get<int64_t>());
  };
  return IndexItem::MakeSlice(opt(s[0]), opt(s[1]), s[2].is_null() ? 1 : s[2].get<int64_t>());
}

// JSON arguments -> typed attributes, using the registry's declared attribute types.
absl::StatusOr<Attrs> MakeAttrs(const OpDef& op, const json& args) {
  Attrs attrs;
  for (const auto& [name, value] : args.items()) {
    const AttrSpec* spec = nullptr;
    for (const AttrSpec& s : op.attrs) {
      if (s.name == name) spec = &s;
    }
    if (spec == nullptr) return absl::InvalidArgumentError("no attribute " + name);
    if (value.is_null()) {
      attrs.Set(name, None{});
      continue;
    }
    switch (spec->type) {
      case AttrType::kInt: attrs.Set(name, value.get<int64_t>()); break;
      case AttrType::kIntList: attrs.Set(name, value.get<std::vector<int64_t>>()); break;
      case AttrType::kIntOrIntList:
        if (value.is_array()) {
          attrs.Set(name, value.get<std::vector<int64_t>>());
        } else {
          attrs.Set(name, value.get<int64_t>());
        }
        break;
      case AttrType::kBool: attrs.Set(name, value.get<bool>()); break;
      case AttrType::kScalar:
        if (value.is_boolean()) {
          attrs.Set(name, Scalar(value.get<bool>()));
        } else if (value.is_number_integer()) {
          attrs.Set(name, Scalar(value.get<int64_t>()));
        } else {
          attrs.Set(name, Scalar(value.get<double>()));
        }
        break;
      case AttrType::kDType: {
        absl::StatusOr<DType> d = ParseDType(value.get<std::string>());
        if (!d.ok()) return d.status();
        attrs.Set(name, *d);
        break;
      }
      case AttrType::kDevice: return absl::InvalidArgumentError("device attrs not in goldens");
      case AttrType::kString: attrs.Set(name, value.get<std::string>()); break;
      case AttrType::kIndex: {
        std::vector<IndexItem> items;
        for (const json& item : value) items.push_back(ParseIndexItem(item));
        attrs.Set(name, std::move(items));
        break;
      }
    }
  }
  return attrs;
}

// The status code tensord uses for each Python exception class torch raises.
absl::StatusCode CodeFor(const std::string& error_class) {
  if (error_class == "IndexError") return absl::StatusCode::kOutOfRange;
  return absl::StatusCode::kInvalidArgument;
}

bool SameValue(double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); }

// Machine epsilon of a floating dtype.
double Epsilon(const std::string& dtype) {
  if (dtype == "float16") return 9.765625e-4;
  if (dtype == "bfloat16") return 7.8125e-3;
  if (dtype == "float32") return 1.1920928955078125e-7;
  return 2.220446049250313e-16;
}

bool CloseValue(double a, double b, double ulps, const std::string& dtype) {
  if (SameValue(a, b)) return true;
  return std::abs(a - b) <= ulps * Epsilon(dtype) * std::max(std::abs(a), std::abs(b));
}

class GoldenTest : public ::testing::TestWithParam<size_t> {};

TEST_P(GoldenTest, MatchesTorch) {
  const json& c = Cases()[GetParam()];
  const std::string op_name = c["op"].get<std::string>();
  SCOPED_TRACE(c.dump());
  const OpDef* op = OpRegistry::Global().Find(op_name);
  ASSERT_NE(op, nullptr) << "op not in the registry: " << op_name;

  Tensor input;
  std::vector<Tensor> inputs;
  if (!c["input"].is_null()) {
    ASSERT_OK_AND_ASSIGN(input, MakeInput(c["input"]));
    inputs.push_back(input);
  }
  if (c.contains("other_sizes")) {
    auto sizes = c["other_sizes"].get<std::vector<int64_t>>();
    ASSERT_OK_AND_ASSIGN(Tensor other, Empty(sizes, DType::kFloat32));
    inputs.push_back(other);
  }
  if (c.contains("src")) {
    const json& src = c["src"];
    if (src.value("shares_input_storage", false)) {
      ASSERT_OK_AND_ASSIGN(Tensor s, AsStrided(input, src["sizes"].get<std::vector<int64_t>>(),
                                               src["strides"].get<std::vector<int64_t>>(),
                                               src["offset"].get<int64_t>()));
      inputs.push_back(s);
    } else {
      ASSERT_OK_AND_ASSIGN(Tensor s, MakeInput(src, 100));
      inputs.push_back(s);
    }
  }
  ASSERT_OK_AND_ASSIGN(Attrs attrs, MakeAttrs(*op, c["args"]));

  absl::StatusOr<std::vector<Tensor>> result = RunNow(PlanOp(op_name, inputs, attrs));
  const json& expect = c["expect"];
  if (expect.contains("error")) {
    const std::string error_class = expect["error"].get<std::string>();
    ASSERT_FALSE(result.ok()) << "torch raised " << error_class << ": " << expect["message"];
    EXPECT_EQ(result.status().code(), CodeFor(error_class)) << result.status();
    EXPECT_EQ(ErrorKind(result.status()), error_class) << result.status();
    EXPECT_FALSE(result.status().message().empty());
    return;
  }
  ASSERT_TRUE(result.ok()) << result.status();
  const json& outs = expect["outputs"];
  ASSERT_EQ(result->size(), outs.size());
  for (size_t i = 0; i < outs.size(); ++i) {
    const Tensor& got = (*result)[i];
    const json& want = outs[i];
    SCOPED_TRACE(absl::StrCat("output ", i, ": ", got.meta().DebugString()));
    EXPECT_EQ(ToVec(got.sizes()), want["sizes"].get<std::vector<int64_t>>());
    EXPECT_EQ(ToVec(got.strides()), want["strides"].get<std::vector<int64_t>>());
    EXPECT_EQ(got.storage_offset(), want["offset"].get<int64_t>());
    EXPECT_EQ(got.is_contiguous(), want["contiguous"].get<bool>());
    EXPECT_EQ(DTypeName(got.dtype()), want["dtype"].get<std::string>());
    if (want.contains("same_storage") && input.defined()) {
      EXPECT_EQ(got.is_alias_of(input), want["same_storage"].get<bool>());
    }
    if (want.contains("values")) {
      const auto expected = want["values"].get<std::vector<double>>();
      const std::vector<double> actual = Values(got);
      ASSERT_EQ(actual.size(), expected.size());
      const double ulps = c.value("float_ulp_tolerance", 0.0);
      const std::string dtype = want["dtype"].get<std::string>();
      for (size_t k = 0; k < expected.size(); ++k) {
        EXPECT_TRUE(CloseValue(actual[k], expected[k], ulps, dtype))
            << "value " << k << ": " << actual[k] << " vs torch " << expected[k];
      }
    }
  }
  if (expect.contains("storage")) {
    const auto expected = expect["storage"].get<std::vector<double>>();
    const std::vector<double> actual = StorageValues(input);
    ASSERT_EQ(actual.size(), expected.size());
    for (size_t k = 0; k < expected.size(); ++k) {
      EXPECT_TRUE(SameValue(actual[k], expected[k]))
          << "storage element " << k << ": " << actual[k] << " vs torch " << expected[k];
    }
  }
}

std::string CaseName(const ::testing::TestParamInfo<size_t>& info) {
  const json& c = Cases()[info.param];
  std::string name = absl::StrCat(c["op"].get<std::string>(), "_", c["id"].get<int64_t>());
  for (char& ch : name) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return name;
}

std::vector<size_t> CaseIndices() {
  std::vector<size_t> idx(Cases().size());
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
  return idx;
}

INSTANTIATE_TEST_SUITE_P(Torch, GoldenTest, ::testing::ValuesIn(CaseIndices()), CaseName);

TEST(GoldenFile, HasEnoughCases) {
  size_t view_cases = 0, errors = 0, seeds = 0;
  for (const json& c : Cases()) {
    const OpDef* op = OpRegistry::Global().Find(c["op"].get<std::string>());
    ASSERT_NE(op, nullptr);
    if (op->kind == OpKind::kView || op->kind == OpKind::kMaybeView) ++view_cases;
    if (c["expect"].contains("error")) ++errors;
    if (c["tag"].get<std::string>().rfind("seed:", 0) == 0) ++seeds;
  }
  EXPECT_GE(view_cases, 3000u);
  EXPECT_GE(errors, 500u);
  EXPECT_GE(seeds, 40u);
}

}  // namespace
}  // namespace tensord::engine
