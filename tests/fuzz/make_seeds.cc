// fuzz_make_seeds CORPUS_DIR: writes the seed corpora of the fuzz targets,
// CORPUS_DIR/{run_ops,plan,request,upload,metadata}/seed-*, replacing every seed-* file there (other
// files, such as regression inputs, stay). Deterministic: the same registry gives the same files.
//
//   build-replay/tests/fuzz/fuzz_make_seeds tests/fuzz/corpus
//
// run_ops: for every op of the registry a call that passes validation (and, where one is found,
// runs its kernel without error), found among hand-written calls and then among the mutator's
// well-formed random calls, checked against a real session with the preamble's tensors; the calls
// are grouped a few per file. Then hand-written chains and error cases.
// plan: run_ops's seeds (the same format).
// request, upload, metadata: hand-written cases, valid ones and each kind of invalid one.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "tests/fuzz/fuzz_backend.h"
#include "tests/fuzz/op_mutator.h"

namespace tensord::fuzz {
namespace {

namespace fs = std::filesystem;

// ---- Values ----------------------------------------------------------------------------------

// Index items: "i:3", "s:1:5:2" (empty fields are absent), "none", "...".
v1::AttrValue Idx(std::vector<std::string> items) {
  v1::AttrValue a;
  a.mutable_index();
  for (const std::string& s : items) {
    v1::IndexItem* item = a.mutable_index()->add_items();
    if (s == "none") {
      item->set_none(true);
    } else if (s == "...") {
      item->set_ellipsis(true);
    } else if (s[0] == 'i') {
      item->set_integer(std::stoll(s.substr(2)));
    } else {
      v1::Slice* sl = item->mutable_slice();
      std::vector<std::string> f;
      size_t at = 2;
      for (int k = 0; k < 3; ++k) {
        const size_t colon = s.find(':', at);
        f.push_back(s.substr(at, colon == std::string::npos ? std::string::npos : colon - at));
        at = colon == std::string::npos ? s.size() : colon + 1;
      }
      if (!f[0].empty()) sl->set_start(std::stoll(f[0]));
      if (!f[1].empty()) sl->set_stop(std::stoll(f[1]));
      if (!f[2].empty()) sl->set_step(std::stoll(f[2]));
    }
  }
  return a;
}

using AttrList = std::vector<std::pair<std::string, v1::AttrValue>>;

v1::OpCall Call(const std::string& op, std::vector<uint64_t> in, AttrList attrs,
                std::vector<uint64_t> out) {
  v1::OpCall c;
  c.set_op(op);
  for (uint64_t i : in) c.add_inputs(i);
  for (auto& [name, value] : attrs) (*c.mutable_attrs())[name] = value;
  for (uint64_t o : out) c.add_outputs(o);
  return c;
}
v1::OpCall Multi(const std::string& op, std::vector<uint64_t> in, AttrList attrs, uint64_t start) {
  v1::OpCall c = Call(op, std::move(in), std::move(attrs), {});
  c.set_output_id_start(start);
  return c;
}

// Serialized with maps in key order, so that the same registry gives the same bytes.
std::string Bytes(const google::protobuf::Message& message) {
  std::string out;
  {
    google::protobuf::io::StringOutputStream stream(&out);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    message.SerializeToCodedStream(&coded);
  }
  return out;
}

// ---- Files -----------------------------------------------------------------------------------

fs::path g_root;
int g_written = 0;

void Write(const std::string& target, const std::string& name, const std::string& bytes) {
  const fs::path path = g_root / target / ("seed-" + name);
  std::ofstream(path, std::ios::binary) << bytes;
  ++g_written;
}

void Clean(const std::string& target) {
  fs::create_directories(g_root / target);
  for (const auto& entry : fs::directory_iterator(g_root / target)) {
    if (entry.path().filename().string().rfind("seed-", 0) == 0) fs::remove(entry.path());
  }
}

// plan reads run_ops's format: its seeds are run_ops's.
void MirrorSeeds(const std::string& from, const std::string& to) {
  Clean(to);
  for (const auto& entry : fs::directory_iterator(g_root / from)) {
    if (entry.path().filename().string().rfind("seed-", 0) != 0) continue;
    fs::copy_file(entry.path(), g_root / to / entry.path().filename());
    ++g_written;
  }
}

std::string Varint(uint64_t n) {
  std::string out;
  do {
    uint8_t b = n & 0x7f;
    n >>= 7;
    out.push_back(static_cast<char>(b | (n ? 0x80 : 0)));
  } while (n);
  return out;
}

// ---- run_ops ---------------------------------------------------------------------------------

struct Outcome {
  bool valid = false;   // every op passed validation
  bool clean = false;   // and the kernels ran without error
  std::string error;
};

Outcome Try(const v1::RunOpsRequest& request) {
  FuzzSession session;
  v1::RunOpsRequest r = request;
  r.set_session_id(session.id());
  v1::RunOpsResponse response;
  Outcome o;
  if (!RunOps(Backend(), r, &response).ok()) return o;
  o.valid = !response.has_error();
  o.error = response.error().message();
  o.clean = o.valid && session.SynchronizeAll().ok();
  return o;
}

// Calls known to be valid for ops whose random calls rarely are; tried first.
std::vector<v1::OpCall> Hints(const std::string& op) {
  const uint64_t o = kFirstFreeId;
  if (op == "view" || op == "reshape") return {Call(op, {2}, {{"shape", Ints({6, -1})}}, {o})};
  if (op == "as_strided") {
    return {Call(op, {3}, {{"size", Ints({2, 2})}, {"stride", Ints({1, 4})}, {"storage_offset", I(3)}}, {o})};
  }
  if (op == "unflatten") return {Call(op, {2}, {{"dim", I(2)}, {"sizes", Ints({2, 2})}}, {o})};
  if (op == "permute") return {Call(op, {3}, {{"dims", Ints({2, 0, 1})}}, {o})};
  if (op == "movedim" || op == "moveaxis") {
    return {Call(op, {2}, {{"source", I(0)}, {"destination", I(-1)}}, {o})};
  }
  if (op == "expand" || op == "broadcast_to") return {Call(op, {16}, {{"size", Ints({2, 3, -1})}}, {o})};
  if (op == "narrow") return {Call(op, {3}, {{"dim", I(0)}, {"start", I(1)}, {"length", I(2)}}, {o})};
  if (op == "select") return {Call(op, {3}, {{"dim", I(1)}, {"index", I(-1)}}, {o})};
  if (op == "index") return {Call(op, {2}, {{"indices", Idx({"i:1", "none", "...", "s:::2"})}}, {o})};
  if (op == "unfold") return {Call(op, {1}, {{"dimension", I(0)}, {"size", I(5)}, {"step", I(3)}}, {o})};
  if (op == "diagonal") return {Call(op, {2}, {{"offset", I(1)}, {"dim1", I(1)}, {"dim2", I(2)}}, {o})};
  if (op == "split") return {Multi(op, {2}, {{"split_size", I(2)}, {"dim", I(2)}}, o)};
  if (op == "split_with_sizes") return {Multi(op, {3}, {{"split_sizes", Ints({1, 3})}}, o)};
  if (op == "tensor_split") return {Multi(op, {1}, {{"indices", Ints({3, 10})}}, o)};
  if (op == "chunk") return {Multi(op, {3}, {{"chunks", I(3)}, {"dim", I(1)}}, o)};
  if (op == "unbind") return {Multi(op, {3}, {{"dim", I(2)}}, o)};
  if (op == "view_as" || op == "reshape_as") return {Call(op, {1}, {}, {o}), Call(op, {3}, {}, {o})};
  if (op == "expand_as") return {Call(op, {16}, {}, {o})};
  if (op == "flip") return {Call(op, {3}, {{"dims", Ints({0, -1})}}, {o})};
  if (op == "repeat") return {Call(op, {7}, {{"repeats", Ints({2, 1, 2})}}, {o})};
  if (op == "empty_strided") {
    return {Call(op, {}, {{"size", Ints({2, 3})}, {"stride", Ints({1, 2})}, {"dtype", D(v1::DTYPE_INT16)}}, {o})};
  }
  if (op == "arange") return {Call(op, {}, {{"start", F(-1.5)}, {"end", I(4)}, {"step", F(0.5)}}, {o})};
  if (op == "full") return {Call(op, {}, {{"size", Ints({2, 2})}, {"fill_value", B(true)}}, {o})};
  if (op == "take") return {Call(op, {3, 5}, {}, {o})};
  if (op == "put_") return {Call(op, {2, 5, 1}, {{"accumulate", B(true)}}, {})};
  if (op == "index_select") return {Call(op, {3}, {{"dim", I(1)}}, {o})};
  if (op == "gather") return {Call(op, {2, 14}, {{"dim", I(1)}}, {o})};
  if (op == "scatter" || op == "scatter_" || op == "scatter_add" || op == "scatter_add_") {
    return {Call(op, {2, 14, 3}, {{"dim", I(0)}}, {o})};
  }
  if (op == "masked_fill" || op == "masked_fill_") return {Call(op, {2, 6, 4}, {}, {o})};
  if (op == "masked_select") return {Call(op, {3, 6}, {}, {o}), Call(op, {2, 6}, {}, {o})};
  if (op == "where") return {Call(op, {6, 2}, {{"other", F(-1)}}, {o})};
  if (op == "lerp" || op == "lerp_") return {Call(op, {2, 3}, {{"weight", F(0.25)}}, {o})};
  if (op == "addcmul" || op == "addcdiv" || op == "addcmul_" || op == "addcdiv_") {
    return {Call(op, {17, 12, 16}, {{"value", F(0.5)}}, {o})};
  }
  if (op == "matmul") return {Call(op, {3, 12}, {}, {o})};
  if (op == "mm") return {Call(op, {7, 17}, {}, {o}), Call(op, {12, 12}, {}, {o})};
  if (op == "bmm") return {Call(op, {2, 20}, {}, {o})};
  if (op == "mv") return {Call(op, {12, 19}, {}, {o})};
  if (op == "dot") return {Call(op, {18, 18}, {}, {o}), Call(op, {19, 19}, {}, {o})};
  if (op == "outer") return {Call(op, {8, 15}, {}, {o})};
  if (op == "addmm") return {Call(op, {17, 17}, {{"beta", F(0.5)}, {"alpha", I(2)}}, {o})};
  if (op == "clamp" || op == "clip" || op == "clamp_" || op == "clip_") {
    return {Call(op, {3}, {{"min", F(2)}, {"max", NoneV()}}, {o})};
  }
  if (op == "logsumexp") return {Call(op, {3}, {{"dim", Ints({0, 2})}}, {o})};
  if (op == "max.dim" || op == "min.dim") return {Multi(op, {3}, {{"dim", I(1)}, {"keepdim", B(true)}}, o)};
  if (op == "_sleep") return {Call(op, {}, {{"ms", I(1)}}, {})};
  if (op == "to") return {Call(op, {3}, {{"dtype", D(v1::DTYPE_BFLOAT16)}}, {o})};
  if (op == "copy_") return {Call(op, {3, 18}, {}, {})};
  if (op == "randint") return {Call(op, {}, {{"size", Ints({3})}, {"high", I(9)}, {"seed", I(5)}}, {o})};
  return {};
}

// A call of `op` that passes validation, or nothing.
std::optional<v1::OpCall> FindValidCall(const engine::OpDef& op, const RequestMutator& mutator,
                                        bool* clean) {
  std::optional<v1::OpCall> planned_only;
  const auto consider = [&](const v1::OpCall& call) {
    v1::RunOpsRequest r;
    *r.add_ops() = call;
    const Outcome o = Try(r);
    if (o.clean) return true;
    if (o.valid && !planned_only) planned_only = call;
    return false;
  };
  for (const v1::OpCall& call : Hints(op.name)) {
    if (consider(call)) {
      *clean = true;
      return call;
    }
  }
  Rng rng(std::hash<std::string>()(op.name) & 0xffffffff);
  const v1::RunOpsRequest empty;
  for (int attempt = 0; attempt < 400; ++attempt) {
    const v1::OpCall call = mutator.MakeCall(op, empty, 0, rng);
    if (consider(call)) {
      *clean = true;
      return call;
    }
  }
  *clean = false;
  return planned_only;
}

// Output ids from `base` up (the call's own are kFirstFreeId-based).
v1::OpCall Renumber(v1::OpCall call, uint64_t base) {
  for (int i = 0; i < call.outputs_size(); ++i) call.set_outputs(i, base + i);
  if (call.output_id_start() != 0) call.set_output_id_start(base);
  return call;
}

void RunOpsSeeds(const RequestMutator& mutator) {
  Clean("run_ops");
  // One valid call per op, a few ops per file.
  std::vector<v1::OpCall> calls;
  std::vector<std::string> unclean, missing;
  for (const engine::OpDef& op : engine::OpRegistry::Global().ops()) {
    bool clean = false;
    std::optional<v1::OpCall> call = FindValidCall(op, mutator, &clean);
    if (!call) {
      missing.push_back(op.name);
      continue;
    }
    if (!clean) unclean.push_back(op.name);
    calls.push_back(*call);
  }
  constexpr size_t kPerFile = 6;
  int file = 0;
  for (size_t at = 0; at < calls.size(); at += kPerFile) {
    v1::RunOpsRequest r;
    for (size_t k = at; k < std::min(at + kPerFile, calls.size()); ++k) {
      *r.add_ops() = Renumber(calls[k], kFirstFreeId + 64 * (k - at));
    }
    // Together they may not pass (an in-place op changes a later one's input): then one by one.
    std::vector<v1::RunOpsRequest> files;
    if (Try(r).valid) {
      files.push_back(r);
    } else {
      for (const v1::OpCall& c : r.ops()) {
        v1::RunOpsRequest one;
        *one.add_ops() = Renumber(c, kFirstFreeId);
        files.push_back(one);
      }
    }
    for (const v1::RunOpsRequest& f : files) {
      std::string name = absl::StrCat("ops-", file < 10 ? "0" : "", file, "-", f.ops(0).op());
      if (f.ops_size() > 1) absl::StrAppend(&name, "-to-", f.ops(f.ops_size() - 1).op());
      Write("run_ops", name, Bytes(f));
      ++file;
    }
  }
  std::fprintf(stderr, "run_ops: %zu of %zu ops have a valid seed call\n", calls.size(),
               engine::OpRegistry::Global().ops().size());
  for (const std::string& n : unclean) std::fprintf(stderr, "  valid but its kernel fails: %s\n", n.c_str());
  for (const std::string& n : missing) std::fprintf(stderr, "  no valid call found: %s\n", n.c_str());

  // Chains and error cases.
  const auto write = [&](const char* name, std::vector<v1::OpCall> ops, bool omit = false,
                         std::vector<uint64_t> release = {}) {
    v1::RunOpsRequest r;
    for (v1::OpCall& c : ops) *r.add_ops() = std::move(c);
    r.set_omit_metadata(omit);
    for (uint64_t id : release) r.add_release_after(id);
    Write("run_ops", name, Bytes(r));
  };
  write("chain-transpose-contiguous-matmul-sum",
        {Call("transpose", {2}, {{"dim0", I(1)}, {"dim1", I(2)}}, {100}),
         Call("contiguous", {100}, {}, {101}), Call("matmul", {101, 3}, {}, {102}),
         Call("sum", {102}, {{"dim", Ints({0, -1})}, {"keepdim", B(true)}}, {103})});
  write("chain-as-strided-of-transpose-then-clone",
        {Call("as_strided", {3}, {{"size", Ints({3, 3})}, {"stride", Ints({0, 7})}, {"storage_offset", I(2)}}, {100}),
         Call("clone", {100}, {}, {101}), Call("add_", {101, 100}, {{"alpha", F(-1)}}, {})});
  write("chain-split-then-add-pieces",
        {Multi("split", {2}, {{"split_size", Ints({1, 3})}, {"dim", I(2)}}, 100),
         Call("add", {100, 101}, {}, {200}), Call("mul_", {101, 200}, {}, {})});
  write("chain-masked-select-nonzero-take",
        {Call("masked_select", {3, 6}, {}, {100}), Call("nonzero", {6}, {}, {101}),
         Call("take", {2, 5}, {}, {102})});
  write("chain-gather-scatter-add",
        {Call("gather", {2, 14}, {{"dim", I(2)}}, {100}),
         Call("scatter_add_", {100, 14, 2}, {{"dim", I(0)}}, {})});
  write("chain-randn-softmax-argmax",
        {Call("randn", {}, {{"size", Ints({3, 5})}, {"seed", I(11)}}, {100}),
         Call("softmax", {100}, {{"dim", I(-1)}}, {101}),
         Call("argmax", {101}, {{"dim", I(1)}, {"keepdim", B(false)}}, {102})});
  write("chain-half-and-bfloat16",
        {Call("add", {8, 8}, {{"alpha", F(0.5)}}, {100}), Call("matmul", {9, 9}, {}, {101}),
         Call("to", {101}, {{"dtype", D(v1::DTYPE_FLOAT16)}}, {102}),
         Call("mul", {100, 4}, {}, {103})});
  write("chain-int-arith-and-bitwise",
        {Call("floor_divide", {7, 7}, {}, {100}), Call("bitwise_left_shift", {10, 10}, {}, {101}),
         Call("remainder", {11}, {{"other", I(-3)}}, {102}), Call("neg", {10}, {}, {103})});
  write("chain-inplace-on-expanded-overlap", {Call("add_", {17, 16}, {}, {})});
  write("chain-index-then-put",
        {Call("index", {1}, {{"indices", Idx({"s:2:20:3"})}}, {100}),
         Call("put_", {100, 5, 18}, {{"accumulate", B(false)}}, {})});
  write("chain-empty-tensor-ops",
        {Call("sum", {13}, {{"dim", I(0)}}, {100}), Call("matmul", {13, 16}, {}, {101}),
         Call("amax", {13}, {{"dim", I(1)}}, {102}), Call("reshape", {13}, {{"shape", Ints({3, 0})}}, {103})});
  write("chain-rank0", {Call("mul", {4, 4}, {}, {100}), Call("expand", {4}, {{"size", Ints({2, 2})}}, {101}),
                        Call("unsqueeze", {4}, {{"dim", I(0)}}, {102}), Call("reshape", {4}, {{"shape", Ints({1, 1})}}, {103})});
  write("chain-streams", {Call("exp", {2}, {}, {100}), [] {
          v1::OpCall c = Call("log", {100}, {}, {101});
          c.set_stream(1);  // no such stream
          return c;
        }()});
  write("flags-omit-metadata-release-after",
        {Call("relu", {3}, {}, {100}), Call("sigmoid_", {100}, {}, {})}, true, {100, 3, 999});
  write("error-unknown-op", {Call("no_such_op", {1}, {}, {100})});
  write("error-wrong-attr-type", {Call("transpose", {2}, {{"dim0", F(0.5)}, {"dim1", I(1)}}, {100})});
  write("error-unexpected-attr", {Call("relu", {2}, {{"dim", I(1)}}, {100})});
  write("error-output-collides", {Call("relu", {2}, {}, {3})});
  write("error-output-id-zero", {Call("relu", {2}, {}, {0})});
  write("error-output-start-overflow", {Multi("unbind", {2}, {}, UINT64_MAX - 1)});
  write("error-missing-input", {Call("relu", {12345}, {}, {100})});
  write("error-huge-factory", {Call("zeros", {}, {{"size", Ints({1 << 20, 1 << 20})}}, {100})});
  write("error-over-budget", {Call("empty", {}, {{"size", Ints({5000, 5000})}}, {100})});
  write("error-rank-65", {Call("view", {1}, {{"shape", Ints(std::vector<int64_t>(65, 1))}}, {100})});
  write("error-none-input", {Call("add", {2}, {{"other", NoneV()}}, {100})});
  write("error-device-cuda", {Call("zeros", {}, {{"size", Ints({2})}, {"device", Dev("cuda:0")}}, {100})});
  std::vector<v1::OpCall> many;
  for (int i = 0; i < 33; ++i) many.push_back(Call("alias", {1}, {}, {static_cast<uint64_t>(100 + i)}));
  write("error-batch-too-long", many);
}

// ---- request ---------------------------------------------------------------------------------

enum Rpc {
  kDescribe, kRelease, kReadStorage, kWriteStorage, kCreateStream, kRecordEvent, kWaitEvent,
  kQueryEvent, kSynchronize, kOpenSession, kCloseSession, kRenewLease, kDownload, kProfile
};

void RequestSeeds() {
  Clean("request");
  const auto w = [](const char* name, Rpc rpc, const google::protobuf::Message& m) {
    Write("request", name, std::string(1, static_cast<char>(rpc)) + Bytes(m));
  };
  {
    v1::DescribeRequest r;
    for (const PreambleTensor& t : PreambleTensors()) r.add_ids(t.id);
    w("describe-all", kDescribe, r);
    r.clear_ids();
    r.add_ids(3);
    r.add_ids(999);
    w("describe-missing", kDescribe, r);
    r.set_session_id("00000000000000000000000000000000");
    w("describe-unknown-session", kDescribe, r);
  }
  {
    v1::ReleaseRequest r;
    r.add_ids(1);
    r.add_ids(2);
    r.add_ids(2);
    r.add_ids(999);
    w("release-some-twice-missing", kRelease, r);
    r.set_session_id("S");
    r.clear_ids();
    r.add_ids(17);
    w("release-expanded-view", kRelease, r);
  }
  const auto read = [&](const char* name, uint64_t id, int64_t offset, int64_t count) {
    v1::ReadStorageRequest r;
    r.set_id(id);
    r.set_offset(offset);
    r.set_count(count);
    w(name, kReadStorage, r);
  };
  read("read-all", 2, 0, -1);
  read("read-middle-of-transposed", 3, 5, 4);
  read("read-empty-storage", 13, 0, -1);
  read("read-at-end", 1, 24, 0);
  read("read-past-end", 1, 24, 1);
  read("read-negative-offset", 1, -1, 1);
  read("read-huge-count", 12, 0, INT64_MAX);
  read("read-offset-overflow", 12, INT64_MAX, -1);
  read("read-float16", 8, 1, 3);
  const auto write = [&](const char* name, uint64_t id, int64_t offset, std::string data,
                         uint64_t stream) {
    v1::WriteStorageRequest r;
    r.set_id(id);
    r.set_offset(offset);
    r.set_data(std::move(data));
    r.set_stream(stream);
    w(name, kWriteStorage, r);
  };
  write("write-float32", 2, 0, std::string("\0\0\200?\0\0\0@", 8), 0);
  write("write-float16-on-stream-1", 8, 1, std::string("\0<\0<", 4), 1);
  write("write-odd-bytes", 7, 0, std::string(3, 'x'), 0);
  write("write-past-end", 10, 4, std::string(3, '\1'), 0);
  write("write-missing-stream", 15, 0, std::string(2, '\0'), 7);
  write("write-through-view", 18, 20, std::string(16, '\x7f'), 0);
  {
    v1::CreateStreamRequest r;
    w("create-stream", kCreateStream, r);
  }
  {
    v1::ProfileRequest r;
    w("profile-stop-without-start", kProfile, r);
    r.set_enable(true);
    r.set_record_shapes(true);
    w("profile-start-with-shapes", kProfile, r);
    r.set_session_id("00000000000000000000000000000000");
    w("profile-unknown-session", kProfile, r);
  }
  {
    v1::RecordEventRequest r;
    r.set_event(2);
    r.set_stream(1);
    w("record-event-stream-1", kRecordEvent, r);
    r.set_event(1);
    r.set_stream(0);
    w("record-event-again", kRecordEvent, r);
    r.set_stream(9);
    w("record-event-missing-stream", kRecordEvent, r);
  }
  {
    v1::WaitEventRequest r;
    r.set_event(1);
    r.set_stream(1);
    w("wait-event", kWaitEvent, r);
    r.set_event(5);
    w("wait-event-never-recorded", kWaitEvent, r);
  }
  {
    v1::QueryEventRequest r;
    r.set_event(1);
    w("query-event", kQueryEvent, r);
    r.set_event(7);
    w("query-event-never-recorded", kQueryEvent, r);
  }
  {
    v1::SynchronizeRequest r;
    w("synchronize-all", kSynchronize, r);
    r.set_stream(1);
    w("synchronize-stream-1", kSynchronize, r);
    r.set_stream(5);
    w("synchronize-missing-stream", kSynchronize, r);
  }
  {
    v1::OpenSessionRequest r;
    r.set_client_name("seed");
    w("open-session", kOpenSession, r);
    r.set_device("cpu");
    w("open-session-cpu", kOpenSession, r);
    r.set_device("cuda:0");
    w("open-session-cuda", kOpenSession, r);
    r.set_device("tpu");
    w("open-session-bad-device", kOpenSession, r);
  }
  {
    v1::CloseSessionRequest r;
    w("close-own-session", kCloseSession, r);
    r.set_session_id("not-a-session");
    w("close-unknown-session", kCloseSession, r);
  }
  {
    v1::RenewLeaseRequest r;
    w("renew-lease", kRenewLease, r);
    r.set_session_id("ffffffffffffffffffffffffffffffff");
    w("renew-lease-unknown", kRenewLease, r);
  }
  for (uint64_t id : {3, 17, 13, 4, 18, 999}) {
    v1::DownloadRequest r;
    r.set_id(id);
    w(absl::StrCat("download-", id).c_str(), kDownload, r);
  }
}

// ---- upload ----------------------------------------------------------------------------------

std::string Header(uint64_t id, std::vector<int64_t> sizes, v1::DType dtype,
                   const std::string& session = "", const std::string& device = "",
                   std::vector<uint64_t> release = {}) {
  v1::UploadRequest r;
  v1::UploadHeader* h = r.mutable_header();
  h->set_session_id(session);
  h->set_id(id);
  for (int64_t s : sizes) h->add_sizes(s);
  h->set_dtype(dtype);
  h->set_device(device);
  for (uint64_t x : release) h->add_release_before(x);
  const std::string bytes = Bytes(r);
  return Varint(bytes.size()) + bytes;
}
std::string Data(const std::string& data) {
  v1::UploadRequest r;
  r.set_data(data);
  const std::string bytes = Bytes(r);
  return Varint(bytes.size()) + bytes;
}
std::string Pattern(size_t n) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>(i * 37 + 1);
  return s;
}

void UploadSeeds() {
  Clean("upload");
  const auto w = [](const std::string& name, uint8_t flags, const std::string& messages) {
    Write("upload", name, std::string(1, static_cast<char>(flags)) + messages);
  };
  for (int d = 1; d <= 10; ++d) {
    const int64_t itemsize = WireItemSize(d);
    std::string data = Pattern(static_cast<size_t>(6 * itemsize));
    if (d == v1::DTYPE_BOOL) data = std::string("\0\1\1\0\1\0", 6);
    w(absl::StrCat("dtype-", v1::DType_Name(static_cast<v1::DType>(d))), 0,
      Header(200, {2, 3}, static_cast<v1::DType>(d)) + Data(data));
  }
  w("chunks-3", 0, Header(200, {4, 4}, v1::DTYPE_FLOAT32) + Data(Pattern(20)) + Data(Pattern(24)) +
                       Data(Pattern(20)));
  w("chunks-split-slices-half", 1 | (4 << 2),
    Header(200, {16}, v1::DTYPE_INT32) + Data(Pattern(33)) + Data(Pattern(31)));
  w("chunks-split-slices-at-1-8th", 1 | (1 << 2),
    Header(200, {3, 5}, v1::DTYPE_INT8) + Data(Pattern(1)) + Data(Pattern(14)));
  w("chunks-split-slices-at-start", 1, Header(200, {2}, v1::DTYPE_INT64) + Data(Pattern(16)));
  w("rank-0", 0, Header(200, {}, v1::DTYPE_FLOAT64) + Data(Pattern(8)));
  w("zero-size", 0, Header(200, {0, 5}, v1::DTYPE_FLOAT32));
  w("zero-size-with-empty-data", 0, Header(200, {3, 0}, v1::DTYPE_INT16) + Data(""));
  w("truncated", 0, Header(200, {4}, v1::DTYPE_FLOAT32) + Data(Pattern(15)));
  w("too-many-bytes", 0, Header(200, {4}, v1::DTYPE_UINT8) + Data(Pattern(3)) + Data(Pattern(2)));
  w("no-finish", 2, Header(200, {8}, v1::DTYPE_FLOAT32) + Data(Pattern(12)));
  w("data-before-header", 0, Data(Pattern(4)) + Header(200, {1}, v1::DTYPE_FLOAT32));
  w("second-header", 0, Header(200, {1}, v1::DTYPE_FLOAT32) + Header(201, {1}, v1::DTYPE_FLOAT32));
  w("existing-id", 0, Header(2, {1}, v1::DTYPE_FLOAT32) + Data(Pattern(4)));
  w("existing-id-released-before", 0,
    Header(2, {2}, v1::DTYPE_INT16, "", "", {2, 3, 999}) + Data(Pattern(4)));
  w("id-0", 0, Header(0, {1}, v1::DTYPE_FLOAT32) + Data(Pattern(4)));
  w("bad-dtype-0", 0, Header(200, {1}, v1::DTYPE_UNSPECIFIED) + Data(Pattern(4)));
  w("bad-dtype-42", 0, Header(200, {1}, static_cast<v1::DType>(42)) + Data(Pattern(4)));
  w("device-cuda", 0, Header(200, {2}, v1::DTYPE_FLOAT32, "", "cuda:0") + Data(Pattern(8)));
  w("device-garbage", 0, Header(200, {2}, v1::DTYPE_FLOAT32, "", "gpu!") + Data(Pattern(8)));
  w("negative-size", 0, Header(200, {-1, 4}, v1::DTYPE_FLOAT32));
  w("numel-overflow", 0, Header(200, {INT64_MAX, 2}, v1::DTYPE_FLOAT32));
  w("over-budget", 0, Header(200, {1 << 15, 1 << 12}, v1::DTYPE_FLOAT64) + Data(Pattern(64)));
  w("unknown-session", 0, Header(200, {1}, v1::DTYPE_FLOAT32, "abc") + Data(Pattern(4)));
  {
    // A data message that is not a lone data record (an unknown field after it): parsed.
    v1::UploadRequest r;
    r.set_data(Pattern(8));
    std::string bytes = Bytes(r) + std::string("\x18\x01", 2);
    w("data-with-extra-field", 0, Header(200, {2}, v1::DTYPE_FLOAT32) + Varint(bytes.size()) + bytes);
  }
  w("garbage-message", 0, Header(200, {2}, v1::DTYPE_FLOAT32) + Varint(3) + std::string("\xff\xff\xff", 3));
  w("length-past-end", 0, Header(200, {2}, v1::DTYPE_FLOAT32) + Varint(1000) + std::string("\x12\x08", 2));
}

// ---- metadata --------------------------------------------------------------------------------

void MetadataSeeds() {
  Clean("metadata");
  const auto w = [](const std::string& name, std::vector<v1::OpCall> ops) {
    v1::RunOpsRequest r;
    for (v1::OpCall& c : ops) *r.add_ops() = std::move(c);
    Write("metadata", name, Bytes(r));
  };
  const auto base = [](std::vector<int64_t> size, std::vector<int64_t> stride,
                       v1::DType dtype = v1::DTYPE_FLOAT32) {
    return Call("empty_strided", {}, {{"size", Ints(size)}, {"stride", Ints(stride)}, {"dtype", D(dtype)}}, {1});
  };
  const auto strided = [](uint64_t in, std::vector<int64_t> size, std::vector<int64_t> stride,
                          std::optional<int64_t> offset, uint64_t out) {
    AttrList attrs = {{"size", Ints(size)}, {"stride", Ints(stride)}};
    if (offset) attrs.push_back({"storage_offset", I(*offset)});
    return Call("as_strided", {in}, attrs, {out});
  };
  // Tensor descriptions (empty_strided) and as_strided views of them.
  w("desc-contiguous", {base({2, 3, 4}, {12, 4, 1})});
  w("desc-transposed", {base({3, 2}, {1, 3}, v1::DTYPE_INT16)});
  w("desc-zero-strides", {base({3, 4}, {0, 0}, v1::DTYPE_INT64)});
  w("desc-gaps", {base({2, 2}, {10, 3}, v1::DTYPE_BFLOAT16)});
  w("desc-empty-huge-stride", {base({0, 5}, {INT64_MAX, 1})});
  w("desc-rank-0", {base({}, {}, v1::DTYPE_BOOL)});
  w("desc-size-stride-length-differ", {base({2, 3}, {1})});
  w("desc-negative-stride", {base({2, 3}, {-3, 1})});
  w("desc-stride-overflow", {base({3, 3}, {INT64_MAX / 2, 1})});
  w("desc-numel-overflow", {base({int64_t{1} << 31, int64_t{1} << 31, 4}, {0, 0, 0})});
  w("desc-rank-65", {base(std::vector<int64_t>(65, 1), std::vector<int64_t>(65, 1))});
  w("desc-over-budget", {base({1 << 14, 1 << 12}, {1 << 12, 1}, v1::DTYPE_FLOAT64)});
  w("strided-transpose", {base({4, 6}, {6, 1}), strided(1, {6, 4}, {1, 6}, 0, 2)});
  w("strided-overlapping", {base({10}, {1}), strided(1, {4, 4}, {1, 1}, 2, 2)});
  w("strided-last-element", {base({2, 5}, {5, 1}), strided(1, {1}, {1}, 9, 2)});
  w("strided-one-past-the-end", {base({2, 5}, {5, 1}), strided(1, {1}, {1}, 10, 2)});
  w("strided-empty-past-the-end", {base({2, 5}, {5, 1}), strided(1, {0}, {1}, 10, 2)});
  w("strided-empty-far-offset", {base({2, 5}, {5, 1}), strided(1, {0, 3}, {1, 1}, INT64_MAX, 2)});
  w("strided-default-offset-of-view",
    {base({6, 6}, {6, 1}), strided(1, {3, 3}, {6, 1}, 14, 2), strided(2, {2, 2}, {7, 1}, std::nullopt, 3)});
  w("strided-rank-0", {base({5}, {1}, v1::DTYPE_INT8), strided(1, {}, {}, 4, 2)});
  w("strided-negative-offset", {base({5}, {1}), strided(1, {2}, {1}, -1, 2)});
  w("strided-offset-times-itemsize-overflow",
    {base({5}, {1}, v1::DTYPE_FLOAT64), strided(1, {1}, {1}, INT64_MAX / 4, 2)});
  w("strided-extent-overflow", {base({5}, {1}), strided(1, {3, 2}, {INT64_MAX / 2, 1}, 0, 2)});
  w("strided-huge-size-zero-stride", {base({5}, {1}), strided(1, {INT64_MAX}, {0}, 0, 2)});
  w("strided-sizes-product-overflow", {base({5}, {1}), strided(1, {int64_t{1} << 32, int64_t{1} << 32}, {0, 0}, 0, 2)});
  // Views on views: metadata of outputs feeds the next op.
  w("view-chain-unfold-diagonal",
    {base({4, 6}, {6, 1}), Call("unfold", {1}, {{"dimension", I(1)}, {"size", I(3)}, {"step", I(2)}}, {2}),
     Call("diagonal", {2}, {{"offset", I(-1)}, {"dim1", I(0)}, {"dim2", I(2)}}, {3}),
     strided(3, {2, 2}, {1, 2}, std::nullopt, 4)});
  w("view-chain-expand-index",
    {base({3, 1}, {1, 1}, v1::DTYPE_UINT8), Call("expand", {1}, {{"size", Ints({2, 3, 5})}}, {2}),
     Call("index", {2}, {{"indices", Idx({"...", "s:1::2", "none"})}}, {3}),
     Call("view", {1}, {{"shape", Ints({-1})}}, {4})});
  w("view-chain-permute-select-narrow",
    {Call("zeros", {}, {{"size", Ints({2, 3, 4})}, {"dtype", D(v1::DTYPE_FLOAT16)}}, {1}),
     Call("permute", {1}, {{"dims", Ints({2, 0, 1})}}, {2}),
     Call("select", {2}, {{"dim", I(1)}, {"index", I(-1)}}, {3}),
     Call("narrow", {3}, {{"dim", I(0)}, {"start", I(1)}, {"length", I(2)}}, {4}),
     Call("reshape", {4}, {{"shape", Ints({6})}}, {5})});
  w("view-chain-split-unbind",
    {Call("arange", {}, {{"end", I(24)}}, {1}), Call("view", {1}, {{"shape", Ints({4, 6})}}, {2}),
     Multi("split", {2}, {{"split_size", I(4)}, {"dim", I(1)}}, 10),
     Multi("unbind", {10}, {{"dim", I(1)}}, 20), Call("movedim", {2}, {{"source", Ints({0, 1})}, {"destination", Ints({1, 0})}}, {3})});
  w("view-chain-unflatten-squeeze-slice",
    {Call("ones", {}, {{"size", Ints({1, 12, 1})}}, {1}),
     Call("unflatten", {1}, {{"dim", I(1)}, {"sizes", Ints({3, -1})}}, {2}),
     Call("squeeze", {2}, {{"dim", Ints({0, 3})}}, {3}),
     Call("slice", {3}, {{"dim", I(1)}, {"start", I(-3)}, {"end", I(INT64_MAX)}, {"step", I(2)}}, {4})});
  w("view-of-zero-stride-as-strided",
    {base({3, 4}, {0, 0}), Call("view", {1}, {{"shape", Ints({12})}}, {2}),
     Call("flatten", {1}, {}, {3}), Call("contiguous", {1}, {}, {4})});
}

}  // namespace
}  // namespace tensord::fuzz

int main(int argc, char** argv) {
  using namespace tensord::fuzz;  // NOLINT
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR (tests/fuzz/corpus)\n", argv[0]);
    return 2;
  }
  g_root = argv[1];
  const RequestMutator mutator(SessionMutatorConfig());
  RunOpsSeeds(mutator);
  MirrorSeeds("run_ops", "plan");
  RequestSeeds();
  UploadSeeds();
  MetadataSeeds();
  std::fprintf(stderr, "wrote %d seed files under %s\n", g_written, g_root.c_str());
  return 0;
}
