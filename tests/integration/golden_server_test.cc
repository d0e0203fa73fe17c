// The PyTorch golden cases (tests/golden/golden_cases.jsonl), replayed through a real tensord
// over gRPC with the C++ client: every view op, copy, fill and factory must give torch's sizes,
// strides, offsets, contiguity, storage sharing and values — or torch's exception class —
// through the wire protocol as through the engine.
#include <cmath>
#include <fstream>
#include <map>
#include <string>

#include "nlohmann/json.hpp"
#include "tests/integration/fixture.h"

namespace tensord::testing {
namespace {

using client::Attrs;
using client::DType;
using client::Tensor;
using json = nlohmann::json;

std::vector<json> LoadCases() {
  std::ifstream in(TENSORD_GOLDEN_FILE);
  std::vector<json> cases;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) cases.push_back(json::parse(line));
  }
  return cases;
}

DType ParseDType(const std::string& name) {
  for (int i = 0; i < 10; ++i) {
    if (name == client::DTypeName(static_cast<DType>(i))) return static_cast<DType>(i);
  }
  return DType::kFloat32;
}

class GoldenServerTest : public ServerTest {
 protected:
  void SetUp() override {
    ServerTest::SetUp();
    grpc::ClientContext ctx;
    v1::ListOpsResponse ops;
    ASSERT_TRUE(stub_->ListOps(&ctx, {}, &ops).ok());
    for (const v1::OpSpec& op : ops.ops()) {
      for (const v1::AttrSpec& a : op.attrs()) types_[op.name()][a.name()] = a.type();
      multi_[op.name()] = op.multi_output();
    }
  }

  // A tensor over a fresh storage of `storage_numel` elements holding 0, 1, 2, … (+ base),
  // built on the server: arange in float64, converted, viewed.
  Tensor Input(client::Session& s, const json& spec, double base = 0) {
    const int64_t n = spec["storage_numel"].get<int64_t>();
    Tensor store = s.arange(base, base + static_cast<double>(n), 1.0, DType::kFloat64)
                       .to(ParseDType(spec["dtype"].get<std::string>()));
    return store.as_strided(spec["sizes"].get<std::vector<int64_t>>(),
                            spec["strides"].get<std::vector<int64_t>>(),
                            spec["offset"].get<int64_t>());
  }

  Attrs MakeAttrs(const std::string& op, const json& args) {
    Attrs attrs;
    for (const auto& [name, value] : args.items()) {
      if (value.is_null()) continue;
      const std::string type = types_[op][name];
      if (type == "int_list" || (type == "int_or_int_list" && value.is_array())) {
        attrs.Ints(name, value.get<std::vector<int64_t>>());
      } else if (type == "int" || type == "int_or_int_list") {
        attrs.Int(name, value.get<int64_t>());
      } else if (type == "scalar") {
        if (value.is_boolean()) {
          attrs.Number(name, value.get<bool>());
        } else if (value.is_number_integer()) {
          attrs.Number(name, value.get<int64_t>());
        } else {
          attrs.Number(name, value.get<double>());
        }
      } else if (type == "dtype") {
        attrs.Dtype(name, ParseDType(value.get<std::string>()));
      } else if (type == "index") {
        std::vector<client::Index> items;
        for (const json& item : value) {
          if (item.contains("int")) {
            items.push_back(item["int"].get<int64_t>());
          } else if (item.contains("none")) {
            items.push_back(client::None);
          } else if (item.contains("ellipsis")) {
            items.push_back(client::Ellipsis);
          } else {
            const json& sl = item["slice"];
            client::Slice slice;
            if (!sl[0].is_null()) slice.start = sl[0].get<int64_t>();
            if (!sl[1].is_null()) slice.stop = sl[1].get<int64_t>();
            if (!sl[2].is_null()) slice.step = sl[2].get<int64_t>();
            items.push_back(slice);
          }
        }
        attrs.IndexList(name, items);
      } else {
        ADD_FAILURE() << "attribute type " << type << " of " << op << "." << name;
      }
    }
    return attrs;
  }

  static std::vector<double> AsDoubles(Tensor t) {
    absl::StatusOr<std::vector<double>> v = t.to(DType::kFloat64).to_vector<double>();
    EXPECT_TRUE(v.ok()) << v.status();
    return v.ok() ? *v : std::vector<double>();
  }

  std::map<std::string, std::map<std::string, std::string>> types_;
  std::map<std::string, bool> multi_;
};

bool Close(double a, double b, double ulps, const std::string& dtype) {
  if (a == b || (std::isnan(a) && std::isnan(b))) return true;
  const double eps = dtype == "float16"    ? 9.765625e-4
                     : dtype == "bfloat16" ? 7.8125e-3
                     : dtype == "float32"  ? 1.1920928955078125e-7
                                           : 2.220446049250313e-16;
  return std::abs(a - b) <= ulps * eps * std::max(std::abs(a), std::abs(b));
}

TEST_F(GoldenServerTest, EveryCaseMatchesTorchThroughTheServer) {
  const std::vector<json> cases = LoadCases();
  ASSERT_GT(cases.size(), 3000u);
  int checked = 0;
  for (const json& c : cases) {
    SCOPED_TRACE(c.dump());
    const std::string op = c["op"].get<std::string>();
    // A fresh session per 200 cases keeps every case's ids and memory independent enough.
    client::Session& s = session_;
    std::vector<Tensor> inputs;
    Tensor input;
    if (!c["input"].is_null()) {
      input = Input(s, c["input"]);
      inputs.push_back(input);
    }
    if (c.contains("other_sizes")) {
      inputs.push_back(s.empty(c["other_sizes"].get<std::vector<int64_t>>()));
    }
    if (c.contains("src")) {
      const json& src = c["src"];
      if (src.value("shares_input_storage", false)) {
        inputs.push_back(input.as_strided(src["sizes"].get<std::vector<int64_t>>(),
                                          src["strides"].get<std::vector<int64_t>>(),
                                          src["offset"].get<int64_t>()));
      } else {
        inputs.push_back(Input(s, src, 100));
      }
    }
    for (const Tensor& t : inputs) ASSERT_OK(t.status());
    const Attrs attrs = MakeAttrs(op, c["args"]);

    std::vector<Tensor> outputs;
    absl::Status status;
    const bool in_place = op == "fill_" || op == "zero_" || op == "copy_";
    if (multi_[op]) {
      absl::StatusOr<std::vector<Tensor>> out = s.CallMulti(op, inputs, attrs);
      status = out.status();
      if (out.ok()) outputs = *std::move(out);
    } else if (in_place) {
      outputs.push_back(s.Call(op, inputs, attrs));  // names its output: self, as a new id
      status = outputs[0].status();
    } else {
      outputs.push_back(s.Call(op, inputs, attrs));
      status = outputs[0].status();
    }
    const json& expect = c["expect"];
    if (expect.contains("error")) {
      const std::string kind = expect["error"].get<std::string>();
      ASSERT_FALSE(status.ok()) << "torch raised " << kind << ": " << expect["message"];
      EXPECT_EQ(client::ErrorKind(status), kind) << status;
      EXPECT_EQ(status.code(), kind == "IndexError" ? absl::StatusCode::kOutOfRange
                                                    : absl::StatusCode::kInvalidArgument)
          << status;
      ++checked;
      continue;
    }
    ASSERT_OK(status);
    const json& want_outs = expect["outputs"];
    ASSERT_EQ(outputs.size(), want_outs.size());
    for (size_t i = 0; i < outputs.size(); ++i) {
      const json& want = want_outs[i];
      ASSERT_OK_AND_ASSIGN(client::TensorInfo got, outputs[i].info());
      EXPECT_EQ(got.sizes, want["sizes"].get<std::vector<int64_t>>());
      EXPECT_EQ(got.strides, want["strides"].get<std::vector<int64_t>>());
      EXPECT_EQ(got.storage_offset, want["offset"].get<int64_t>());
      EXPECT_EQ(got.is_contiguous, want["contiguous"].get<bool>());
      EXPECT_EQ(client::DTypeName(got.dtype), want["dtype"].get<std::string>());
      if (want.contains("same_storage") && input.defined()) {
        EXPECT_EQ(got.storage_id == input.info()->storage_id, want["same_storage"].get<bool>());
      }
      if (want.contains("values")) {
        const auto expected = want["values"].get<std::vector<double>>();
        const std::vector<double> actual = AsDoubles(outputs[i]);
        ASSERT_EQ(actual.size(), expected.size());
        const double ulps = c.value("float_ulp_tolerance", 0.0);
        for (size_t k = 0; k < expected.size(); ++k) {
          EXPECT_TRUE(Close(actual[k], expected[k], ulps, want["dtype"].get<std::string>()))
              << "value " << k << ": " << actual[k] << " vs torch " << expected[k];
        }
      }
    }
    if (expect.contains("storage")) {
      const auto expected = expect["storage"].get<std::vector<double>>();
      const int64_t n = c["input"]["storage_numel"].get<int64_t>();
      const std::vector<double> actual = AsDoubles(input.as_strided({n}, {1}, 0));
      ASSERT_EQ(actual, expected);
    }
    ++checked;
  }
  EXPECT_EQ(checked, static_cast<int>(cases.size()));
}

}  // namespace
}  // namespace tensord::testing
