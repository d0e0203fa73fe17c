// A structure-aware mutator for RunOpsRequest inputs: op names and attribute names come from the
// op registry (engine::OpRegistry::Global().ops()), input ids from the session's known tensors and
// the outputs of earlier ops, attribute values of the declared type most of the time (and of
// another type, None, or a boundary value some of the time), so that most mutants parse and
// pass validation and reach the planners and kernels.
#ifndef TENSORD_TESTS_FUZZ_OP_MUTATOR_H_
#define TENSORD_TESTS_FUZZ_OP_MUTATOR_H_

#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"

#include "engine/ops/op_registry.h"
#include "tensord/v1/tensord.pb.h"

namespace tensord::fuzz {

using Rng = std::mt19937_64;

struct MutatorConfig {
  // Ids that exist before the request runs (the preamble's tensors), and the shapes of those
  // known: attributes of a call on them are then drawn to fit (dims within the rank, shapes
  // with the same numel) most of the time, and tensor inputs of the same shape preferred.
  std::vector<uint64_t> known_ids;
  absl::flat_hash_map<uint64_t, std::vector<int64_t>> known_shapes;
  // Known ids that hold int64 indices and bool masks (for inputs named index / mask).
  std::vector<uint64_t> index_ids, mask_ids;
  // Output ids of new ops are chosen from here up.
  uint64_t first_free_id = 100;
  // Ops to draw from (default: every registered op).
  std::vector<const engine::OpDef*> ops;
  // Ops drawn more often (e.g. as_strided for the metadata target), with their extra weight.
  std::vector<const engine::OpDef*> favourite_ops;
  // Most ops a mutant holds.
  int max_ops = 16;
};

// Calls that passed validation, a few per op, learned from executions (the harness adds them):
// a call on the known tensors passes again in any session that starts the same way, so
// inserting one of these, or a mutant of one, keeps most mutants valid.
class ValidCalls {
 public:
  // Keeps `call` when all its inputs are among `known_ids` (up to kPerOp per op, then replaces
  // one at random).
  void Add(const v1::OpCall& call, const std::vector<uint64_t>& known_ids, Rng& rng);
  // A kept call, of any op; null when none is kept.
  const v1::OpCall* Pick(Rng& rng) const;
  size_t size() const { return calls_.size(); }

 private:
  static constexpr size_t kPerOp = 6;
  std::vector<v1::OpCall> calls_;
  absl::flat_hash_map<std::string, std::vector<size_t>> by_op_;  // indices into calls_
  std::vector<std::string> ops_;
};

class RequestMutator {
 public:
  explicit RequestMutator(MutatorConfig config);

  // Calls known to be valid, fed by the harness (see ValidCalls).
  ValidCalls& valid_calls() const { return valid_calls_; }

  // One random mutation (sometimes a few) of `request`, in place.
  void Mutate(v1::RunOpsRequest& request, Rng& rng) const;
  // Ops of `a` up to a point, then ops of `b` (their ids renumbered so they do not collide).
  v1::RunOpsRequest CrossOver(const v1::RunOpsRequest& a, const v1::RunOpsRequest& b,
                              Rng& rng) const;

  // A well-formed call of `op` at position `at` of `request`: inputs drawn from the ids that
  // exist there, every required attribute and some optional ones set with values of the
  // declared type, fresh output ids. Not inserted.
  v1::OpCall MakeCall(const engine::OpDef& op, const v1::RunOpsRequest& request, int at,
                      Rng& rng) const;
  // A value for attribute `spec` (its name picks the likely range of ints); `shape`, when known,
  // is the shape of the call's first input.
  v1::AttrValue MakeValue(const engine::AttrSpec& spec, bool right_type, Rng& rng,
                          const std::vector<int64_t>* shape = nullptr) const;
  // The known shape of `call`'s first tensor input, or null.
  const std::vector<int64_t>* FirstInputShape(const v1::OpCall& call) const;

  const engine::OpDef* RandomOp(Rng& rng) const;
  const MutatorConfig& config() const { return config_; }

  // Ids that exist before op `at` runs: the known ones and earlier ops' outputs.
  std::vector<uint64_t> IdsBefore(const v1::RunOpsRequest& request, int at) const;
  // The first id above every id the request names.
  uint64_t FreshId(const v1::RunOpsRequest& request) const;
  // Points dangling input ids at existing ones and gives colliding outputs fresh ids.
  void Repair(v1::RunOpsRequest& request, Rng& rng) const;

 private:
  void MutateAttr(v1::OpCall& call, Rng& rng) const;
  // Output ids as `op` wants them (one, a list, none), most of the time.
  void NormalizeOutputs(const engine::OpDef& op, v1::OpCall& call,
                        const v1::RunOpsRequest& request, Rng& rng) const;
  // Now and then drops an unknown attribute, retypes a mistyped one, resets the stream: the
  // corpus drifts back towards valid calls.
  void HealAttrs(v1::OpCall& call, Rng& rng) const;
  void TweakInts(v1::AttrValue& value, Rng& rng) const;

  MutatorConfig config_;
  mutable ValidCalls valid_calls_;
};

// LLVMFuzzerCustomMutator / LLVMFuzzerCustomCrossOver for targets whose input is a serialized
// RunOpsRequest. `raw_mutate` is LLVMFuzzerMutate (libFuzzer's own byte-level mutations), used
// for some mutants and for inputs that do not parse.
using RawMutateFn = size_t (*)(uint8_t* data, size_t size, size_t max_size);
size_t MutateRunOpsBytes(const RequestMutator& mutator, uint8_t* data, size_t size,
                         size_t max_size, unsigned int seed, RawMutateFn raw_mutate);
size_t CrossOverRunOpsBytes(const RequestMutator& mutator, const uint8_t* data1, size_t size1,
                            const uint8_t* data2, size_t size2, uint8_t* out, size_t max_out,
                            unsigned int seed);

}  // namespace tensord::fuzz

// Defines a target's LLVMFuzzerCustomMutator and LLVMFuzzerCustomCrossOver over
// `mutator_expr` (a RequestMutator&), for targets whose input is a serialized RunOpsRequest.
#define TENSORD_FUZZ_RUN_OPS_MUTATOR(mutator_expr)                                               \
  extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);             \
  extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size,      \
                                            unsigned int seed) {                              \
    return ::tensord::fuzz::MutateRunOpsBytes(mutator_expr, data, size, max_size, seed,       \
                                              LLVMFuzzerMutate);                              \
  }                                                                                           \
  extern "C" size_t LLVMFuzzerCustomCrossOver(const uint8_t* data1, size_t size1,             \
                                              const uint8_t* data2, size_t size2,             \
                                              uint8_t* out, size_t max_out, unsigned int seed) { \
    return ::tensord::fuzz::CrossOverRunOpsBytes(mutator_expr, data1, size1, data2, size2, out, \
                                                 max_out, seed);                              \
  }

#endif  // TENSORD_TESTS_FUZZ_OP_MUTATOR_H_
