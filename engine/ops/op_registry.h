// The op registry: one table that describes every op — name, kind, tensor inputs, typed
// attributes — and plans it. The server dispatches requests through it, ListOps publishes it,
// and the golden tests drive the engine through it.
#ifndef TENSORD_ENGINE_OPS_OP_REGISTRY_H_
#define TENSORD_ENGINE_OPS_OP_REGISTRY_H_

#include <functional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "engine/core/device.h"
#include "engine/core/dtype.h"
#include "engine/ops/planned_op.h"
#include "engine/core/scalar.h"
#include "engine/tensor/memory_format.h"
#include "engine/views/view_ops.h"

namespace tensord::engine {

enum class OpKind {
  kView,           // metadata only, shares the input's storage; never touches data
  kMaybeView,      // a view when possible, else a copy (reshape, flatten, contiguous, to)
  kCompute,        // allocates its outputs; a kernel fills them
  kInPlace,        // writes through its first input's view; returns it
  kFactory,        // creates a tensor from attributes only
  kDataDependent,  // output shape depends on data: synchronizes first
};
const char* OpKindName(OpKind kind);

enum class AttrType {
  kInt,
  kIntList,
  kIntOrIntList,  // either form (squeeze's dim, split's split_size)
  kBool,
  kScalar,        // a Python number: bool, int or float
  kDType,
  kDevice,
  kIndex,         // a basic-index list (int, slice, None, Ellipsis)
  kString,        // a string option (torch's mode='reduced', UPLO='L')
};
const char* AttrTypeName(AttrType type);

struct None {
  friend bool operator==(None, None) { return true; }
};
using AttrValue = std::variant<None, int64_t, std::vector<int64_t>, bool, Scalar, DType, Device,
                               std::vector<IndexItem>, std::string>;

// Named attribute values of one op call.
class Attrs {
 public:
  Attrs() = default;
  Attrs& Set(std::string name, AttrValue value) {
    values_[std::move(name)] = std::move(value);
    return *this;
  }
  bool Has(absl::string_view name) const;
  const AttrValue* Find(absl::string_view name) const;
  const absl::flat_hash_map<std::string, AttrValue>& values() const { return values_; }

 private:
  absl::flat_hash_map<std::string, AttrValue> values_;
};

struct AttrSpec {
  std::string name;
  AttrType type;
  bool required;
  std::string default_value;  // as text, for discovery ("0", "-1", "None")
  std::string doc;
};

// How a call lays out an op's 4-d and 5-d outputs: as its planner made them, or in the memory
// format its inputs suggest (torch's propagation of channels_last through image ops). Applied
// to calls of the op, not to the steps of a composition (which lays out its own output).
enum class OutputFormat {
  kAsPlanned,
  kChannelsLastLikeInput,         // channels_last where input 0 suggests it (2-d pools)
  kLikeInput,                     // channels_last or channels_last_3d, as input 0 suggests
  kLikeInputInModes,              // kLikeInput where attr "mode" is one of output_format_modes
  kChannelsLastLikeInputOrWeight,  // conv2d: channels_last where input 0 or 1 suggests it
  kLikeAllInputs,                 // cat: the format every input suggests, where they agree
};
const char* OutputFormatName(OutputFormat format);

class AttrReader;
using PlanFn = std::function<absl::StatusOr<PlannedOp>(absl::Span<const Tensor>, AttrReader&)>;

struct OpDef {
  std::string name;
  OpKind kind;
  std::vector<std::string> inputs;  // names of the tensor inputs, in order
  std::vector<AttrSpec> attrs;
  std::string doc;
  bool multi_output = false;  // returns a list of tensors (split, chunk, unbind, …)
  PlanFn plan;
  bool returns_nothing = false;  // queued for its effect only (_sleep)
  // Inputs that a call may give as a number attribute of the same name instead of a tensor
  // (wrapped as a 0-d tensor with the lowest promotion priority, as torch's Python numbers), or
  // as None where the input is listed in `optional_inputs` too.
  std::vector<std::string> scalar_inputs = {};
  // Inputs that may be absent (None): clamp's min and max. Any other input given as None is a
  // TypeError naming the op, so no planner ever sees an undefined tensor it did not ask for.
  std::vector<std::string> optional_inputs = {};
  // The last input is a list: a call gives it any number of tensors, zero included, after the
  // others (cat's tensors, einsum's operands). Such an op has no scalar or optional inputs.
  bool variadic = false;
  OutputFormat output_format = OutputFormat::kAsPlanned;
  std::vector<std::string> output_format_modes = {};  // kLikeInputInModes' modes
};

// Typed access to one call's attributes, with errors naming the op and the attribute.
class AttrReader {
 public:
  AttrReader(const OpDef& op, const Attrs& attrs) : op_(op), attrs_(attrs) {}
  absl::StatusOr<int64_t> Int(absl::string_view name, std::optional<int64_t> dflt = {}) const;
  absl::StatusOr<std::optional<int64_t>> OptionalInt(absl::string_view name) const;
  absl::StatusOr<std::vector<int64_t>> IntList(absl::string_view name) const;
  // A single int is returned as a one-element list; `was_list` says which form was sent.
  absl::StatusOr<std::vector<int64_t>> IntOrIntList(absl::string_view name, bool* was_list) const;
  absl::StatusOr<bool> Bool(absl::string_view name, std::optional<bool> dflt = {}) const;
  absl::StatusOr<Scalar> GetScalar(absl::string_view name, std::optional<Scalar> dflt = {}) const;
  absl::StatusOr<std::optional<DType>> OptionalDType(absl::string_view name) const;
  absl::StatusOr<Device> GetDevice(absl::string_view name, Device dflt) const;
  absl::StatusOr<std::vector<IndexItem>> Index(absl::string_view name) const;
  absl::StatusOr<std::string> String(absl::string_view name, std::optional<std::string> dflt = {}) const;
  bool Has(absl::string_view name) const { return attrs_.Has(name); }
  // The call's attributes as given (a composition hands them on to the op it is made of).
  const Attrs& attrs() const { return attrs_; }

 private:
  absl::Status Missing(absl::string_view name) const;
  absl::Status WrongType(absl::string_view name, absl::string_view expected) const;

  const OpDef& op_;
  const Attrs& attrs_;
};

class OpRegistry {
 public:
  static const OpRegistry& Global();
  const OpDef* Find(absl::string_view name) const;
  const std::vector<OpDef>& ops() const { return ops_; }

 private:
  OpRegistry();
  std::vector<OpDef> ops_;
  absl::flat_hash_map<std::string, size_t> index_;
};

// An attribute value as a client sends it, before it is typed by the op's AttrSpec: the wire's
// AttrValue without protobuf. The server converts its protos to these and the planning extension
// its Python values, so that both type attributes by one rule (AttrsFromWire).
struct WireAttr {
  enum class Kind : uint8_t { kNone, kInt, kFloat, kBool, kInts, kDType, kDevice, kIndex, kText, kBad };
  Kind kind = Kind::kBad;  // kBad: a value of no known form (an unset oneof, a bad index item)
  int64_t i = 0;           // kInt; kDType: the wire's DType number (engine value + 1)
  double f = 0;
  bool b = false;
  std::vector<int64_t> ints;
  std::string device;
  std::vector<IndexItem> index;
  std::string text;
};

// Types `attrs` by op's specs: an unknown name or a value of the wrong form is a TypeError naming
// the op and the argument; a bad dtype or device the error of its parser.
absl::StatusOr<Attrs> AttrsFromWire(const OpDef& op,
                                    absl::Span<const std::pair<std::string, WireAttr>> attrs);

// The wire's DType number (engine value + 1; 0 is unset) as a DType; a TypeError naming `op`.
absl::StatusOr<DType> DTypeFromWire(int64_t value, absl::string_view op);

// A fingerprint of the registry (every op's name, kind, inputs and attributes): a client that
// plans ops itself does so only with the server's own rules, when the fingerprints agree.
const std::string& RegistryFingerprint();

// Plans op `name`: checks the op exists, the input count, that every attribute is known and
// typed as declared, then calls the op's planner. Errors: NOT_FOUND for an unknown op,
// INVALID_ARGUMENT for a bad call, and the op's own errors.
absl::StatusOr<PlannedOp> PlanOp(absl::string_view name, absl::Span<const Tensor> inputs,
                                 const Attrs& attrs);
// PlanOp for a step of a composition: the op's outputs as its planner lays them out (no
// OutputFormat rule: the composition decides its own output's layout).
absl::StatusOr<PlannedOp> PlanStep(absl::string_view name, absl::Span<const Tensor> inputs,
                                   const Attrs& attrs);

}  // namespace tensord::engine

#endif  // TENSORD_ENGINE_OPS_OP_REGISTRY_H_
