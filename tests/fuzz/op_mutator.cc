#include "tests/fuzz/op_mutator.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <set>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"

namespace tensord::fuzz {
namespace {

using engine::AttrSpec;
using engine::AttrType;
using engine::OpDef;

bool Chance(Rng& rng, double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; }

int64_t Uniform(Rng& rng, int64_t lo, int64_t hi) {  // inclusive
  return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
}

template <typename T>
const T& Pick(const std::vector<T>& v, Rng& rng) {
  return v[static_cast<size_t>(Uniform(rng, 0, static_cast<int64_t>(v.size()) - 1))];
}

// An id of `pool`, or a small one when the pool is empty (no known tensors, no outputs yet).
uint64_t PickId(const std::vector<uint64_t>& pool, Rng& rng) {
  return pool.empty() ? static_cast<uint64_t>(Uniform(rng, 1, 8)) : Pick(pool, rng);
}

bool Contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// Ints at the edges of every range a planner checks: signs, ranks, itemsizes, 32/64-bit limits.
const std::vector<int64_t>& BoundaryInts() {
  static const auto* v = new std::vector<int64_t>{
      0, 1, -1, 2, -2, 3, 4, 7, 8, 63, 64, 65, -64, -65, 127, 128, 255, 256, 1023, 1024,
      65535, 65536, (int64_t{1} << 20), (int64_t{1} << 24) + 1,
      std::numeric_limits<int32_t>::max(), std::numeric_limits<int32_t>::min(),
      int64_t{1} << 31, int64_t{1} << 32, (int64_t{1} << 32) + 1, int64_t{1} << 40,
      int64_t{1} << 53, (int64_t{1} << 53) + 1, int64_t{1} << 61, int64_t{1} << 62,
      -(int64_t{1} << 62), std::numeric_limits<int64_t>::max(),
      std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max() - 1,
      std::numeric_limits<int64_t>::min() + 1, std::numeric_limits<int64_t>::max() / 2,
      std::numeric_limits<int64_t>::max() / 3, std::numeric_limits<int64_t>::max() / 4 + 1};
  return *v;
}

const std::vector<double>& SpecialDoubles() {
  static const auto* v = new std::vector<double>{
      0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, 3.0, 255.0, 256.0, 65504.0, 65520.0, 1e10, -1e10,
      3.4028234663852886e38, 3.5e38, 1e308, -1e308, 5e-324, 1e-45, 6e-8,
      9.223372036854775807e18, -9.223372036854775808e18, 1.8446744073709552e19,
      std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(),
      std::numeric_limits<double>::quiet_NaN(), -std::numeric_limits<double>::quiet_NaN()};
  return *v;
}

int64_t AnyInt(Rng& rng) {
  switch (Uniform(rng, 0, 3)) {
    case 0: return Pick(BoundaryInts(), rng);
    case 1: return static_cast<int64_t>(rng());
    case 2: return Uniform(rng, -1000, 1000);
    default: {
      const int64_t p = int64_t{1} << Uniform(rng, 0, 62);
      return p + Uniform(rng, -1, 1);
    }
  }
}

// What an int attribute means, from its name: the range worth drawing from.
enum class IntKind { kDim, kSize, kStride, kPosition, kSeed, kSleep, kMode, kOther };

IntKind KindOf(const std::string& name) {
  static const auto* kinds = new absl::flat_hash_map<std::string, IntKind>{
      {"dim", IntKind::kDim},          {"dims", IntKind::kDim},
      {"dim0", IntKind::kDim},         {"dim1", IntKind::kDim},
      {"dim2", IntKind::kDim},         {"axis0", IntKind::kDim},
      {"axis1", IntKind::kDim},        {"source", IntKind::kDim},
      {"destination", IntKind::kDim},  {"start_dim", IntKind::kDim},
      {"end_dim", IntKind::kDim},      {"dimension", IntKind::kDim},
      {"size", IntKind::kSize},        {"shape", IntKind::kSize},
      {"sizes", IntKind::kSize},       {"split_sizes", IntKind::kSize},
      {"split_size", IntKind::kSize},  {"repeats", IntKind::kSize},
      {"chunks", IntKind::kSize},      {"sections", IntKind::kSize},
      {"length", IntKind::kSize},      {"step", IntKind::kSize},
      {"stride", IntKind::kStride},    {"start", IntKind::kPosition},
      {"end", IntKind::kPosition},     {"index", IntKind::kPosition},
      {"indices", IntKind::kPosition}, {"offset", IntKind::kPosition},
      {"storage_offset", IntKind::kPosition}, {"low", IntKind::kPosition},
      {"high", IntKind::kPosition},    {"decimals", IntKind::kPosition},
      {"seed", IntKind::kSeed},        {"ms", IntKind::kSleep},
      {"rounding_mode", IntKind::kMode}};
  auto it = kinds->find(name);
  return it == kinds->end() ? IntKind::kOther : it->second;
}

int64_t MakeInt(IntKind kind, Rng& rng) {
  if (Chance(rng, 0.07)) return AnyInt(rng);
  switch (kind) {
    case IntKind::kDim: return Chance(rng, 0.8) ? Uniform(rng, -2, 1) : Uniform(rng, -4, 3);
    case IntKind::kSize: return Chance(rng, 0.1) ? -1 : Uniform(rng, 0, 5);
    case IntKind::kStride: return Chance(rng, 0.7) ? Uniform(rng, 0, 4) : Uniform(rng, 0, 24);
    case IntKind::kPosition: return Chance(rng, 0.7) ? Uniform(rng, -3, 8) : Uniform(rng, -24, 24);
    case IntKind::kSeed: return Chance(rng, 0.5) ? Uniform(rng, 0, 10) : static_cast<int64_t>(rng());
    case IntKind::kSleep: return Uniform(rng, 0, 2);
    case IntKind::kMode: return Uniform(rng, 0, 3);
    case IntKind::kOther: break;
  }
  return Chance(rng, 0.7) ? Uniform(rng, -3, 10) : AnyInt(rng);
}

void MakeInts(IntKind kind, Rng& rng, v1::IntList* out) {
  int64_t n;
  const double r = std::uniform_real_distribution<double>(0, 1)(rng);
  if (r < 0.75) {
    n = Uniform(rng, 0, 4);
  } else if (r < 0.93) {
    n = Uniform(rng, 0, 8);
  } else if (r < 0.97) {
    n = Uniform(rng, 62, 66);  // around the rank limit
  } else {
    n = Uniform(rng, 0, 24);
  }
  out->clear_values();
  for (int64_t i = 0; i < n; ++i) out->add_values(MakeInt(kind, rng));
}

v1::AttrValue MakeScalar(Rng& rng) {
  v1::AttrValue v;
  const int64_t which = Uniform(rng, 0, 39);
  if (which < 19) {
    v.set_i(Chance(rng, 0.75) ? Uniform(rng, -3, 10) : AnyInt(rng));
  } else if (which < 37) {
    v.set_f(Chance(rng, 0.6) ? std::round(std::uniform_real_distribution<double>(-4, 4)(rng) * 4) / 4
                             : Pick(SpecialDoubles(), rng));
  } else {
    v.set_b(Chance(rng, 0.5));
  }
  return v;
}

int64_t IndexInt(Rng& rng) { return Chance(rng, 0.85) ? Uniform(rng, -4, 5) : AnyInt(rng); }

void MakeIndex(Rng& rng, v1::IndexList* out) {
  out->clear_items();
  const int64_t n = Chance(rng, 0.95) ? Uniform(rng, 0, 4) : Uniform(rng, 5, 70);
  for (int64_t i = 0; i < n; ++i) {
    v1::IndexItem* item = out->add_items();
    const int64_t which = Uniform(rng, 0, 19);
    if (which < 7) {
      item->set_integer(IndexInt(rng));
    } else if (which < 14) {
      v1::Slice* s = item->mutable_slice();
      if (Chance(rng, 0.5)) s->set_start(IndexInt(rng));
      if (Chance(rng, 0.5)) s->set_stop(IndexInt(rng));
      if (Chance(rng, 0.5)) {
        s->set_step(Chance(rng, 0.85) ? Uniform(rng, 1, 3) : Pick(BoundaryInts(), rng));
      }
    } else if (which < 17) {
      item->set_none(true);
    } else {
      item->set_ellipsis(true);
    }
  }
}

std::string MakeDevice(Rng& rng) {
  static const auto* others = new std::vector<std::string>{
      "cuda", "cuda:0", "cuda:1", "cpu:0", "", "CPU", "cuda:-1", "cuda:99999999999", "meta",
      "cpu:1", "cuda:", ":0", "cuda:0x1"};
  return Chance(rng, 0.85) ? "cpu" : Pick(*others, rng);
}

// String options: the ones ops know, near misses and junk.
const std::vector<std::string>& MakeTexts() {
  static const auto* texts = new std::vector<std::string>{
      "reduced", "complete", "r", "L", "U", "l", "u", "", "x", "REDUCED", std::string("r\0", 2),
      std::string(300, 'L')};
  return *texts;
}

int MakeDType(Rng& rng) {
  if (Chance(rng, 0.93)) return static_cast<int>(Uniform(rng, 1, 10));
  static const std::vector<int64_t> bad = {0, 11, 12, -1, 1000};
  return static_cast<int>(Pick(bad, rng));
}

// The value kinds (AttrValue's oneof cases) an attribute of `type` accepts.
std::vector<v1::AttrValue::ValueCase> Accepted(AttrType type) {
  using C = v1::AttrValue;
  switch (type) {
    case AttrType::kInt: return {C::kI};
    case AttrType::kIntList: return {C::kInts};
    case AttrType::kIntOrIntList: return {C::kI, C::kInts};
    case AttrType::kBool: return {C::kB};
    case AttrType::kScalar: return {C::kI, C::kF, C::kB};
    case AttrType::kDType: return {C::kDtype};
    case AttrType::kDevice: return {C::kDevice};
    case AttrType::kIndex: return {C::kIndex};
    case AttrType::kString: return {C::kText};
  }
  return {C::kI};
}

// Ints that fit a tensor of `shape`: a dim in range, a shape of the same numel (a reshape, with
// perhaps one -1), the shape with new leading dims or -1s (an expand), a permutation of the dims.
bool FitInt(IntKind kind, const std::vector<int64_t>& shape, Rng& rng, int64_t* out) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  if (kind == IntKind::kDim) {
    *out = rank == 0 ? Uniform(rng, -1, 0) : Uniform(rng, -rank, rank - 1);
    return true;
  }
  return false;
}

bool FitInts(const std::string& name, IntKind kind, const std::vector<int64_t>& shape, Rng& rng,
             v1::IntList* out) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  std::vector<int64_t> v;
  if (name == "dims" || name == "source" || name == "destination") {
    for (int64_t d = 0; d < rank; ++d) v.push_back(Chance(rng, 0.3) ? d - rank : d);
    std::shuffle(v.begin(), v.end(), rng);
    if (name != "dims" || Chance(rng, 0.3)) v.resize(static_cast<size_t>(Uniform(rng, 0, rank)));
  } else if (kind == IntKind::kDim) {
    const int64_t n = Uniform(rng, 0, std::max<int64_t>(rank, 1));
    for (int64_t i = 0; i < n; ++i) v.push_back(rank == 0 ? 0 : Uniform(rng, -rank, rank - 1));
  } else if (name == "shape" || name == "sizes") {
    // A reshape: the same numel, dims merged or split, maybe one -1.
    for (int64_t s : shape) {
      if (!v.empty() && Chance(rng, 0.3)) {
        v.back() *= s;
      } else if (s % 2 == 0 && s > 2 && Chance(rng, 0.3)) {
        v.push_back(2);
        v.push_back(s / 2);
      } else {
        v.push_back(s);
      }
    }
    if (Chance(rng, 0.3)) v.insert(v.begin() + Uniform(rng, 0, static_cast<int64_t>(v.size())), 1);
    if (!v.empty() && Chance(rng, 0.4)) v[static_cast<size_t>(Uniform(rng, 0, static_cast<int64_t>(v.size()) - 1))] = -1;
  } else if (name == "size") {
    // An expand of `shape` (new leading dims, -1 or the size itself, size-1 dims widened).
    const int64_t extra = Chance(rng, 0.5) ? 0 : Uniform(rng, 1, 2);
    for (int64_t i = 0; i < extra; ++i) v.push_back(Uniform(rng, 1, 3));
    for (int64_t s : shape) v.push_back(Chance(rng, 0.3) ? -1 : (s == 1 ? Uniform(rng, 1, 4) : s));
  } else if (name == "repeats") {
    const int64_t n = rank + (Chance(rng, 0.3) ? 1 : 0);
    for (int64_t i = 0; i < n; ++i) v.push_back(Uniform(rng, 1, 3));
  } else {
    return false;
  }
  out->clear_values();
  for (int64_t x : v) out->add_values(x);
  return true;
}

v1::AttrValue ValueOfCase(v1::AttrValue::ValueCase c, const std::string& name, Rng& rng,
                          const std::vector<int64_t>* shape) {
  v1::AttrValue v;
  const IntKind kind = KindOf(name);
  const bool fit = shape != nullptr && Chance(rng, 0.8);
  int64_t fitted;
  switch (c) {
    case v1::AttrValue::kI:
      v.set_i(fit && FitInt(kind, *shape, rng, &fitted) ? fitted : MakeInt(kind, rng));
      break;
    case v1::AttrValue::kInts:
      if (!(fit && FitInts(name, kind, *shape, rng, v.mutable_ints()))) {
        MakeInts(kind, rng, v.mutable_ints());
      }
      break;
    case v1::AttrValue::kF: v.set_f(MakeScalar(rng).f()); break;
    case v1::AttrValue::kB: v.set_b(Chance(rng, 0.5)); break;
    case v1::AttrValue::kDtype: v.set_dtype(static_cast<v1::DType>(MakeDType(rng))); break;
    case v1::AttrValue::kDevice: v.set_device(MakeDevice(rng)); break;
    case v1::AttrValue::kIndex: MakeIndex(rng, v.mutable_index()); break;
    case v1::AttrValue::kText: v.set_text(Pick(MakeTexts(), rng)); break;
    default: v.set_none(true); break;
  }
  return v;
}

const OpDef* Find(const std::string& name) { return engine::OpRegistry::Global().Find(name); }

// The names of `op`'s inputs that `call` gives as tensors (in order), i.e. not as attributes.
std::vector<std::string> TensorInputNames(const OpDef& op, const v1::OpCall& call) {
  std::vector<std::string> names;
  for (const std::string& in : op.inputs) {
    if (Contains(op.scalar_inputs, in) && call.attrs().contains(in)) continue;
    names.push_back(in);
  }
  return names;
}

constexpr uint64_t kMultiOutputSpan = 64;  // ids kept free after an output_id_start

}  // namespace

void ValidCalls::Add(const v1::OpCall& call, const std::vector<uint64_t>& known_ids, Rng& rng) {
  for (uint64_t id : call.inputs()) {
    if (std::find(known_ids.begin(), known_ids.end(), id) == known_ids.end()) return;
  }
  auto [it, added] = by_op_.try_emplace(call.op());
  if (added) ops_.push_back(call.op());
  std::vector<size_t>& mine = it->second;
  if (mine.size() < kPerOp) {
    mine.push_back(calls_.size());
    calls_.push_back(call);
  } else {
    calls_[fuzz::Pick(mine, rng)] = call;
  }
}

const v1::OpCall* ValidCalls::Pick(Rng& rng) const {
  if (ops_.empty()) return nullptr;
  return &calls_[fuzz::Pick(by_op_.at(fuzz::Pick(ops_, rng)), rng)];
}

RequestMutator::RequestMutator(MutatorConfig config) : config_(std::move(config)) {
  if (config_.ops.empty()) {
    for (const OpDef& op : engine::OpRegistry::Global().ops()) config_.ops.push_back(&op);
  }
}

const OpDef* RequestMutator::RandomOp(Rng& rng) const {
  if (!config_.favourite_ops.empty() && Chance(rng, 0.35)) return Pick(config_.favourite_ops, rng);
  return Pick(config_.ops, rng);
}

std::vector<uint64_t> RequestMutator::IdsBefore(const v1::RunOpsRequest& request, int at) const {
  std::vector<uint64_t> ids = config_.known_ids;
  for (int j = 0; j < at && j < request.ops_size(); ++j) {
    const v1::OpCall& c = request.ops(j);
    for (uint64_t id : c.outputs()) ids.push_back(id);
    if (c.outputs_size() == 0 && c.output_id_start() != 0) {
      for (uint64_t k = 0; k < 3; ++k) ids.push_back(c.output_id_start() + k);
    }
  }
  return ids;
}

uint64_t RequestMutator::FreshId(const v1::RunOpsRequest& request) const {
  uint64_t top = config_.first_free_id;
  for (uint64_t id : config_.known_ids) top = std::max(top, id + 1);
  for (const v1::OpCall& c : request.ops()) {
    for (uint64_t id : c.outputs()) {
      if (id < (uint64_t{1} << 40)) top = std::max(top, id + 1);
    }
    if (c.output_id_start() != 0 && c.output_id_start() < (uint64_t{1} << 40)) {
      top = std::max(top, c.output_id_start() + kMultiOutputSpan);
    }
  }
  return top;
}

const std::vector<int64_t>* RequestMutator::FirstInputShape(const v1::OpCall& call) const {
  if (call.inputs_size() == 0) return nullptr;
  auto it = config_.known_shapes.find(call.inputs(0));
  return it == config_.known_shapes.end() ? nullptr : &it->second;
}

v1::AttrValue RequestMutator::MakeValue(const AttrSpec& spec, bool right_type, Rng& rng,
                                        const std::vector<int64_t>* shape) const {
  if (Chance(rng, 0.04)) {
    v1::AttrValue none;
    none.set_none(true);
    return none;
  }
  if (spec.type == AttrType::kScalar && right_type) return MakeScalar(rng);
  const std::vector<v1::AttrValue::ValueCase> ok = Accepted(spec.type);
  if (right_type) return ValueOfCase(Pick(ok, rng), spec.name, rng, shape);
  std::vector<v1::AttrValue::ValueCase> wrong;
  for (auto c : {v1::AttrValue::kI, v1::AttrValue::kInts, v1::AttrValue::kF, v1::AttrValue::kB,
                 v1::AttrValue::kDtype, v1::AttrValue::kDevice, v1::AttrValue::kIndex,
                 v1::AttrValue::kText}) {
    if (std::find(ok.begin(), ok.end(), c) == ok.end()) wrong.push_back(c);
  }
  return ValueOfCase(Pick(wrong, rng), spec.name, rng, nullptr);
}

v1::OpCall RequestMutator::MakeCall(const OpDef& op, const v1::RunOpsRequest& request, int at,
                                    Rng& rng) const {
  v1::OpCall call;
  call.set_op(op.name);
  const std::vector<uint64_t> ids = IdsBefore(request, at);
  const size_t known = config_.known_ids.size();
  auto& attrs = *call.mutable_attrs();
  for (const std::string& input : op.inputs) {
    if (Contains(op.scalar_inputs, input) && (ids.empty() || Chance(rng, 0.2))) {
      if (Chance(rng, 0.1)) {  // None: clamp's bounds may be absent, other inputs may not
        attrs[input].set_none(true);
      } else {
        attrs[input] = MakeScalar(rng);
      }
    } else if (ids.empty()) {
      call.add_inputs(Uniform(rng, 1, 20));
    } else if ((input == "index" || input == "indices") && !config_.index_ids.empty() &&
               Chance(rng, 0.7)) {
      call.add_inputs(Pick(config_.index_ids, rng));
    } else if ((input == "mask" || input == "condition") && !config_.mask_ids.empty() &&
               Chance(rng, 0.7)) {
      call.add_inputs(Pick(config_.mask_ids, rng));
    } else if (call.inputs_size() > 0 && Chance(rng, 0.6)) {
      // The first input again (shapes and dtypes then agree: x + x, matmul of a square, …), or
      // a tensor of the same shape, or a 0-d one (both broadcast).
      const std::vector<int64_t>* first = FirstInputShape(call);
      std::vector<uint64_t> same;
      for (uint64_t id : ids) {
        auto it = config_.known_shapes.find(id);
        if (first != nullptr && it != config_.known_shapes.end() &&
            (it->second == *first || it->second.empty())) {
          same.push_back(id);
        }
      }
      call.add_inputs(same.empty() || Chance(rng, 0.5) ? call.inputs(0) : Pick(same, rng));
    } else if (ids.size() > known && Chance(rng, 0.3)) {
      // Often an output of an earlier op of this request: chains.
      call.add_inputs(ids[static_cast<size_t>(Uniform(rng, static_cast<int64_t>(known),
                                                      static_cast<int64_t>(ids.size()) - 1))]);
    } else {
      call.add_inputs(Pick(ids, rng));
    }
  }
  for (const AttrSpec& spec : op.attrs) {
    if (Contains(op.scalar_inputs, spec.name)) continue;  // decided with the inputs
    if (spec.required || Chance(rng, 0.35)) {
      attrs[spec.name] = MakeValue(spec, /*right_type=*/!Chance(rng, 0.05), rng, FirstInputShape(call));
    }
  }
  // A stride list as long as the size list (empty_strided, as_strided), most of the time.
  if (attrs.contains("size") && attrs.contains("stride") && attrs.at("size").has_ints() &&
      attrs.at("stride").has_ints() && Chance(rng, 0.85)) {
    auto* stride = attrs["stride"].mutable_ints()->mutable_values();
    const int n = attrs.at("size").ints().values_size();
    while (stride->size() > n) stride->RemoveLast();
    while (stride->size() < n) stride->Add(Chance(rng, 0.7) ? Uniform(rng, 0, 4) : Uniform(rng, 0, 24));
  }
  // movedim's source and destination of one length, most of the time.
  if (attrs.contains("source") && attrs.contains("destination") && Chance(rng, 0.85)) {
    v1::AttrValue& src = attrs["source"];
    v1::AttrValue& dst = attrs["destination"];
    if (src.has_ints() && dst.has_ints()) {
      auto* d = dst.mutable_ints()->mutable_values();
      while (d->size() > src.ints().values_size()) d->RemoveLast();
      while (d->size() < src.ints().values_size()) d->Add(Uniform(rng, -2, 1));
    } else if (src.value_case() == v1::AttrValue::kI) {
      dst.set_i(Uniform(rng, -2, 1));
    }
  }
  const uint64_t fresh = FreshId(request);
  if (op.returns_nothing) {
    if (Chance(rng, 0.03)) call.add_outputs(fresh);
  } else if (op.multi_output) {
    if (Chance(rng, 0.75)) {
      call.set_output_id_start(fresh);
    } else {
      const int64_t n = Uniform(rng, 1, 4);
      for (int64_t i = 0; i < n; ++i) call.add_outputs(fresh + static_cast<uint64_t>(i));
    }
  } else if (!(op.kind == engine::OpKind::kInPlace && Chance(rng, 0.5))) {
    call.add_outputs(fresh);
  }
  return call;
}

void RequestMutator::TweakInts(v1::AttrValue& value, Rng& rng) const {
  switch (value.value_case()) {
    case v1::AttrValue::kI: {
      const int64_t i = value.i();
      switch (Uniform(rng, 0, 5)) {
        case 0: value.set_i(static_cast<int64_t>(static_cast<uint64_t>(i) + 1)); break;
        case 1: value.set_i(static_cast<int64_t>(static_cast<uint64_t>(i) - 1)); break;
        case 2: value.set_i(static_cast<int64_t>(0 - static_cast<uint64_t>(i))); break;
        case 3: value.set_i(Pick(BoundaryInts(), rng)); break;
        case 4: value.set_i(static_cast<int64_t>(static_cast<uint64_t>(i) ^ (uint64_t{1} << Uniform(rng, 0, 63)))); break;
        default: value.set_i(Uniform(rng, -4, 8)); break;
      }
      break;
    }
    case v1::AttrValue::kInts: {
      auto* values = value.mutable_ints()->mutable_values();
      const int64_t n = values->size();
      switch (Uniform(rng, 0, 6)) {
        case 0:
          if (n > 0) {
            int64_t& v = *values->Mutable(static_cast<int>(Uniform(rng, 0, n - 1)));
            v = Chance(rng, 0.5) ? Pick(BoundaryInts(), rng)
                                 : static_cast<int64_t>(static_cast<uint64_t>(v) + Uniform(rng, -2, 2));
          }
          break;
        case 1: values->Add(Chance(rng, 0.8) ? Uniform(rng, -1, 5) : AnyInt(rng)); break;
        case 2:
          if (n > 0) values->erase(values->begin() + Uniform(rng, 0, n - 1));
          break;
        case 3: std::shuffle(values->begin(), values->end(), rng); break;
        case 4:
          while (values->size() < 65) values->Add(Chance(rng, 0.9) ? 1 : Uniform(rng, 0, 3));
          break;
        case 5: values->Clear(); break;
        default:
          if (n > 0) {
            int64_t& v = *values->Mutable(static_cast<int>(Uniform(rng, 0, n - 1)));
            v = Uniform(rng, -1, 6);
          }
          break;
      }
      break;
    }
    case v1::AttrValue::kF: value.set_f(Pick(SpecialDoubles(), rng)); break;
    case v1::AttrValue::kIndex: {
      auto* items = value.mutable_index()->mutable_items();
      if (!items->empty() && Chance(rng, 0.5)) {
        v1::IndexItem& item = *items->Mutable(static_cast<int>(Uniform(rng, 0, items->size() - 1)));
        if (item.has_slice() && Chance(rng, 0.7)) {
          v1::Slice* s = item.mutable_slice();
          switch (Uniform(rng, 0, 3)) {
            case 0: s->set_start(Pick(BoundaryInts(), rng)); break;
            case 1: s->set_stop(Pick(BoundaryInts(), rng)); break;
            case 2: s->set_step(Pick(BoundaryInts(), rng)); break;
            default: s->clear_step(); break;
          }
        } else {
          item.set_integer(Chance(rng, 0.5) ? IndexInt(rng) : AnyInt(rng));
        }
      } else {
        v1::IndexList extra;
        MakeIndex(rng, &extra);
        if (extra.items_size() > 0) *items->Add() = extra.items(0);
      }
      break;
    }
    default: break;
  }
}

void RequestMutator::MutateAttr(v1::OpCall& call, Rng& rng) const {
  auto& attrs = *call.mutable_attrs();
  const OpDef* op = Find(call.op());
  const double r = std::uniform_real_distribution<double>(0, 1)(rng);
  if (r < 0.1 && !attrs.empty()) {
    auto it = attrs.begin();
    std::advance(it, Uniform(rng, 0, static_cast<int64_t>(attrs.size()) - 1));
    attrs.erase(it);
    return;
  }
  if (op != nullptr && op->attrs.empty() && r >= 0.04) {
    // Nothing to set: another known input instead (any attribute would be unknown).
    if (call.inputs_size() > 0 && !config_.known_ids.empty()) {
      call.set_inputs(static_cast<int>(Uniform(rng, 0, call.inputs_size() - 1)),
                      Pick(config_.known_ids, rng));
    }
    return;
  }
  if (r < 0.04 || op == nullptr || op->attrs.empty()) {
    // A name the op does not declare: another op's, or nonsense.
    const OpDef* other = RandomOp(rng);
    std::string name = "bogus";
    if (!other->attrs.empty() && Chance(rng, 0.8)) name = Pick(other->attrs, rng).name;
    AttrSpec spec{name, other->attrs.empty() ? AttrType::kInt : Pick(other->attrs, rng).type,
                  false, "", ""};
    attrs[name] = MakeValue(spec, true, rng);
    return;
  }
  const AttrSpec& spec = Pick(op->attrs, rng);
  // An attribute that stands for a tensor input changes the input count: mostly left to the
  // number-for-tensor mutation, which keeps the inputs in step.
  if (Contains(op->scalar_inputs, spec.name) && !attrs.contains(spec.name) && Chance(rng, 0.8)) {
    return;
  }
  attrs[spec.name] = MakeValue(spec, /*right_type=*/!Chance(rng, 0.12), rng, FirstInputShape(call));
}

void RequestMutator::NormalizeOutputs(const OpDef& op, v1::OpCall& call,
                                      const v1::RunOpsRequest& request, Rng& rng) const {
  if (Chance(rng, 0.1)) return;  // left as it is, now and then
  const uint64_t first = call.outputs_size() > 0 ? call.outputs(0) : call.output_id_start();
  if (op.returns_nothing) {
    call.clear_outputs();
    call.clear_output_id_start();
  } else if (op.multi_output) {
    if (call.outputs_size() == 1) {
      call.clear_outputs();
      call.set_output_id_start(first);
    } else if (call.outputs_size() == 0 && call.output_id_start() == 0) {
      call.set_output_id_start(FreshId(request));
    }
  } else if (call.outputs_size() != 1 &&
             !(op.kind == engine::OpKind::kInPlace && call.outputs_size() == 0 &&
               call.output_id_start() == 0)) {
    call.clear_outputs();
    call.clear_output_id_start();
    call.add_outputs(first != 0 ? first : FreshId(request));
  }
}

void RequestMutator::HealAttrs(v1::OpCall& call, Rng& rng) const {
  const OpDef* op = Find(call.op());
  if (op == nullptr) return;
  auto& attrs = *call.mutable_attrs();
  for (auto it = attrs.begin(); it != attrs.end();) {
    const AttrSpec* spec = nullptr;
    for (const AttrSpec& s : op->attrs) {
      if (s.name == it->first) spec = &s;
    }
    if (spec == nullptr) {  // unknown: dropped half of the time
      if (Chance(rng, 0.5)) {
        it = attrs.erase(it);
        continue;
      }
    } else if (it->second.value_case() != v1::AttrValue::kNone) {
      const auto ok = Accepted(spec->type);
      if (std::find(ok.begin(), ok.end(), it->second.value_case()) == ok.end() &&
          Chance(rng, 0.5)) {  // of the wrong type: a right one half of the time
        it->second = MakeValue(*spec, true, rng, FirstInputShape(call));
      }
    }
    ++it;
  }
  if (call.stream() != 0 && Chance(rng, 0.5)) call.clear_stream();
  // As many tensor inputs as the op takes, given the inputs sent as numbers.
  const size_t want = TensorInputNames(*op, call).size();
  if (static_cast<size_t>(call.inputs_size()) != want && Chance(rng, 0.7)) {
    if (static_cast<size_t>(call.inputs_size()) > want) {
      // Too many: drop the number attributes that stand for inputs, else the last inputs.
      for (const std::string& name : op->scalar_inputs) attrs.erase(name);
      while (static_cast<size_t>(call.inputs_size()) > TensorInputNames(*op, call).size()) {
        call.mutable_inputs()->RemoveLast();
      }
    } else if (call.inputs_size() > 0) {
      while (static_cast<size_t>(call.inputs_size()) < want) call.add_inputs(call.inputs(0));
    }
  }
}

void RequestMutator::Repair(v1::RunOpsRequest& request, Rng& rng) const {
  std::set<uint64_t> existing(config_.known_ids.begin(), config_.known_ids.end());
  std::vector<uint64_t> pool(config_.known_ids.begin(), config_.known_ids.end());
  uint64_t fresh = FreshId(request);
  for (v1::OpCall& call : *request.mutable_ops()) {
    if (Chance(rng, 0.3)) HealAttrs(call, rng);
  }
  for (v1::OpCall& call : *request.mutable_ops()) {
    for (int i = 0; i < call.inputs_size(); ++i) {
      if (!existing.contains(call.inputs(i)) && !pool.empty()) {
        call.set_inputs(i, Pick(pool, rng));
      }
    }
    std::set<uint64_t> mine;
    for (int i = 0; i < call.outputs_size(); ++i) {
      const uint64_t id = call.outputs(i);
      if (id == 0 || existing.contains(id) || mine.contains(id)) call.set_outputs(i, fresh++);
      mine.insert(call.outputs(i));
    }
    if (call.outputs_size() == 0 && call.output_id_start() != 0) {
      const uint64_t start = call.output_id_start();
      auto it = existing.lower_bound(start);
      if (start > UINT64_MAX - kMultiOutputSpan ||
          (it != existing.end() && *it < start + kMultiOutputSpan)) {
        call.set_output_id_start(fresh);
        fresh += kMultiOutputSpan;
      }
      for (uint64_t k = 0; k < 3; ++k) mine.insert(call.output_id_start() + k);
    }
    for (uint64_t id : mine) {
      if (existing.insert(id).second) pool.push_back(id);
    }
  }
}

void RequestMutator::Mutate(v1::RunOpsRequest& request, Rng& rng) const {
  auto& ops = *request.mutable_ops();
  const int rounds = Chance(rng, 0.3) ? static_cast<int>(Uniform(rng, 2, 4)) : 1;
  for (int round = 0; round < rounds; ++round) {
    const int n = ops.size();
    const int64_t which = ops.empty() ? 0 : Uniform(rng, 0, 99);
    const int i = n > 0 ? static_cast<int>(Uniform(rng, 0, n - 1)) : 0;
    if (which < 22) {  // insert a new call
      const int at = (n == 0 || Chance(rng, 0.6)) ? n : static_cast<int>(Uniform(rng, 0, n));
      v1::OpCall call;
      const v1::OpCall* known = Chance(rng, 0.5) ? valid_calls_.Pick(rng) : nullptr;
      if (known != nullptr) {  // a call that passed before, with fresh output ids
        call = *known;
        const uint64_t fresh = FreshId(request);
        for (int k = 0; k < call.outputs_size(); ++k) call.set_outputs(k, fresh + k);
        if (call.output_id_start() != 0) call.set_output_id_start(fresh);
        // Half of the time, a mutant of it: one attribute drawn anew.
        if (Chance(rng, 0.5)) MutateAttr(call, rng);
      } else {
        call = MakeCall(*RandomOp(rng), request, at, rng);
      }
      *ops.Add() = std::move(call);
      for (int k = ops.size() - 1; k > at; --k) ops.SwapElements(k, k - 1);
    } else if (which < 30) {  // delete one
      ops.erase(ops.begin() + i);
    } else if (which < 38) {  // the same op, new attributes and inputs; the same output ids
      const OpDef* op = Find(ops[i].op());
      if (op == nullptr) op = RandomOp(rng);
      v1::OpCall call = MakeCall(*op, request, i, rng);
      if (op->multi_output == (ops[i].outputs_size() != 1)) {
        call.mutable_outputs()->CopyFrom(ops[i].outputs());
        call.set_output_id_start(ops[i].output_id_start());
      }
      ops[i] = std::move(call);
    } else if (which < 44) {  // another op on the same inputs
      const OpDef* op = RandomOp(rng);
      v1::OpCall& call = ops[i];
      call.set_op(op->name);
      auto& attrs = *call.mutable_attrs();
      for (auto it = attrs.begin(); it != attrs.end();) {
        bool known = false;
        for (const AttrSpec& s : op->attrs) known |= s.name == it->first;
        if (!known && Chance(rng, 0.9)) {
          it = attrs.erase(it);
        } else {
          ++it;
        }
      }
      for (const AttrSpec& s : op->attrs) {
        if (s.required && !attrs.contains(s.name)) {
          attrs[s.name] = MakeValue(s, true, rng, FirstInputShape(call));
        }
      }
      if (Chance(rng, 0.85)) {
        const size_t want = TensorInputNames(*op, call).size();
        const std::vector<uint64_t> pool = IdsBefore(request, i);
        while (static_cast<size_t>(call.inputs_size()) > want) call.mutable_inputs()->RemoveLast();
        while (static_cast<size_t>(call.inputs_size()) < want) call.add_inputs(PickId(pool, rng));
      }
      NormalizeOutputs(*op, call, request, rng);
    } else if (which < 48) {  // duplicate one (new output ids)
      v1::OpCall copy = ops[i];
      const uint64_t fresh = FreshId(request);
      for (int k = 0; k < copy.outputs_size(); ++k) copy.set_outputs(k, fresh + k);
      if (copy.output_id_start() != 0) copy.set_output_id_start(fresh);
      *ops.Add() = std::move(copy);
      for (int k = ops.size() - 1; k > i + 1; --k) ops.SwapElements(k, k - 1);
    } else if (which < 51) {  // swap two
      ops.SwapElements(i, static_cast<int>(Uniform(rng, 0, n - 1)));
    } else if (which < 61) {  // an input id
      v1::OpCall& call = ops[i];
      const std::vector<uint64_t> pool = IdsBefore(request, i);
      if (call.inputs_size() == 0 || Chance(rng, 0.03)) {
        if (call.inputs_size() > 0 && Chance(rng, 0.5)) {
          call.mutable_inputs()->RemoveLast();
        } else {
          call.add_inputs(PickId(pool, rng));
        }
      } else {
        const int k = static_cast<int>(Uniform(rng, 0, call.inputs_size() - 1));
        if (Chance(rng, 0.95)) {
          call.set_inputs(k, PickId(pool, rng));
        } else {  // an id that does not exist (yet): kept, no Repair
          static const std::vector<uint64_t> odd = {0, UINT64_MAX, 99999, 1ull << 63};
          call.set_inputs(k, Chance(rng, 0.5) ? Pick(odd, rng) : FreshId(request) - 1);
          continue;
        }
      }
    } else if (which < 83) {  // an attribute
      MutateAttr(ops[i], rng);
    } else if (which < 91) {  // nudge an int, a list, a float or an index
      auto& attrs = *ops[i].mutable_attrs();
      if (attrs.empty()) {
        MutateAttr(ops[i], rng);
      } else {
        auto it = attrs.begin();
        std::advance(it, Uniform(rng, 0, static_cast<int64_t>(attrs.size()) - 1));
        TweakInts(it->second, rng);
      }
    } else if (which < 94) {  // a number in place of a tensor input, or back
      v1::OpCall& call = ops[i];
      const OpDef* op = Find(call.op());
      if (op == nullptr || op->scalar_inputs.empty()) continue;
      const std::string& name = Pick(op->scalar_inputs, rng);
      std::vector<std::string> names = TensorInputNames(*op, call);
      auto pos = std::find(names.begin(), names.end(), name);
      if (pos != names.end()) {  // tensor -> number
        const int k = static_cast<int>(pos - names.begin());
        if (k < call.inputs_size()) call.mutable_inputs()->erase(call.mutable_inputs()->begin() + k);
        (*call.mutable_attrs())[name] = MakeScalar(rng);
      } else {  // number -> tensor
        call.mutable_attrs()->erase(name);
        names = TensorInputNames(*op, call);
        const int k = static_cast<int>(std::find(names.begin(), names.end(), name) - names.begin());
        call.add_inputs(PickId(IdsBefore(request, i), rng));
        for (int m = call.inputs_size() - 1; m > k && m > 0; --m) {
          call.mutable_inputs()->SwapElements(m, m - 1);
        }
      }
    } else if (which < 97) {  // output ids
      v1::OpCall& call = ops[i];
      const std::vector<uint64_t> pool = IdsBefore(request, i);
      switch (Uniform(rng, 0, 5)) {
        case 0: call.clear_outputs(); break;
        case 1: call.add_outputs(PickId(pool, rng)); break;
        case 2: if (call.outputs_size() > 0) call.add_outputs(call.outputs(0)); break;
        case 3: call.set_output_id_start(Chance(rng, 0.5) ? UINT64_MAX - 1 : PickId(pool, rng)); break;
        case 4: call.add_outputs(0); break;
        default: call.clear_output_id_start(); call.add_outputs(FreshId(request)); break;
      }
      continue;  // no Repair: these are the point
    } else if (which < 98) {
      ops[i].set_stream(Chance(rng, 0.8) ? static_cast<uint64_t>(Uniform(rng, 0, 1)) : rng());
      continue;  // no Repair (it may reset the stream)
    } else {
      switch (Uniform(rng, 0, 2)) {
        case 0: request.set_omit_metadata(!request.omit_metadata()); break;
        case 1: request.add_release_after(PickId(IdsBefore(request, n), rng)); break;
        default: request.clear_release_after(); break;
      }
    }
    if (!Chance(rng, 0.05)) Repair(request, rng);
  }
  while (ops.size() > config_.max_ops) ops.RemoveLast();
}

v1::RunOpsRequest RequestMutator::CrossOver(const v1::RunOpsRequest& a, const v1::RunOpsRequest& b,
                                            Rng& rng) const {
  v1::RunOpsRequest out = a;  // a's ops up to a random cut, then a run of b's
  const int cut = a.ops_size() == 0 ? 0 : static_cast<int>(Uniform(rng, 0, a.ops_size()));
  while (out.ops_size() > cut) out.mutable_ops()->RemoveLast();
  if (b.ops_size() > 0) {
    const int from = static_cast<int>(Uniform(rng, 0, b.ops_size() - 1));
    const int to = static_cast<int>(Uniform(rng, from + 1, b.ops_size()));
    // b's output ids get fresh ones; b's inputs that named them follow.
    absl::flat_hash_map<uint64_t, uint64_t> renamed;
    uint64_t fresh = FreshId(out);
    for (int k = from; k < to; ++k) {
      v1::OpCall call = b.ops(k);
      for (int m = 0; m < call.inputs_size(); ++m) {
        auto it = renamed.find(call.inputs(m));
        if (it != renamed.end()) call.set_inputs(m, it->second);
      }
      for (int m = 0; m < call.outputs_size(); ++m) {
        renamed[call.outputs(m)] = fresh;
        call.set_outputs(m, fresh++);
      }
      if (call.output_id_start() != 0) {
        for (uint64_t j = 0; j < 3; ++j) renamed[call.output_id_start() + j] = fresh + j;
        call.set_output_id_start(fresh);
        fresh += kMultiOutputSpan;
      }
      *out.add_ops() = std::move(call);
    }
  }
  Repair(out, rng);
  while (out.ops_size() > config_.max_ops) out.mutable_ops()->RemoveLast();
  return out;
}

size_t MutateRunOpsBytes(const RequestMutator& mutator, uint8_t* data, size_t size,
                         size_t max_size, unsigned int seed, RawMutateFn raw_mutate) {
  Rng rng(seed);
  if (Chance(rng, 0.08)) return raw_mutate(data, size, max_size);
  v1::RunOpsRequest request;
  if (!request.ParseFromArray(data, static_cast<int>(size))) {
    if (Chance(rng, 0.5)) return raw_mutate(data, size, max_size);
    request.Clear();
  }
  mutator.Mutate(request, rng);
  std::string bytes = request.SerializeAsString();
  while (bytes.size() > max_size && request.ops_size() > 0) {
    request.mutable_ops()->RemoveLast();
    bytes = request.SerializeAsString();
  }
  if (bytes.size() > max_size) return raw_mutate(data, size, max_size);
  std::memcpy(data, bytes.data(), bytes.size());
  // Now and then a byte-level change on top: ill-formed fields, unknown tags, truncations.
  if (Chance(rng, 0.03)) return raw_mutate(data, bytes.size(), max_size);
  return bytes.size();
}

size_t CrossOverRunOpsBytes(const RequestMutator& mutator, const uint8_t* data1, size_t size1,
                            const uint8_t* data2, size_t size2, uint8_t* out, size_t max_out,
                            unsigned int seed) {
  Rng rng(seed);
  v1::RunOpsRequest a, b;
  if (!a.ParseFromArray(data1, static_cast<int>(size1)) ||
      !b.ParseFromArray(data2, static_cast<int>(size2))) {
    return 0;
  }
  v1::RunOpsRequest c = mutator.CrossOver(a, b, rng);
  std::string bytes = c.SerializeAsString();
  while (bytes.size() > max_out && c.ops_size() > 0) {
    c.mutable_ops()->RemoveLast();
    bytes = c.SerializeAsString();
  }
  if (bytes.size() > max_out) return 0;
  std::memcpy(out, bytes.data(), bytes.size());
  return bytes.size();
}

}  // namespace tensord::fuzz
