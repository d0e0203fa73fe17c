// The tensord C++ client: PyTorch's tensor API over a tensord server.
//
//   auto channel = tensord::client::CreateChannel("127.0.0.1:50051",
//                                                 grpc::InsecureChannelCredentials());
//   tensord::client::Session s = *tensord::client::Session::Open(channel);
//   Tensor t = s.arange(24).view({1, 2, 3, 4});
//   Tensor p = t.permute({0, 2, 3, 1});
//   std::vector<int64_t> strides = *p.stride();      // {24, 4, 1, 12}
//   bool c = *p.is_contiguous();                     // false
//   std::vector<int64_t> v = *p.contiguous().to_vector<int64_t>();
//
// Ops are planned here, by the engine's own planners on metadata alone (the planning library),
// when this client's op registry is the server's: sizes, strides, dtype and storage sharing
// answer without a round trip, and an op's error (torch's, with its Python exception class as
// ErrorKind) is known at the call that made it. The error model is one: a tensor carries its
// error. A refused op returns a tensor whose queries return the error (and an op on it fails
// the same way, unsent); in-place methods return this tensor, or a handle carrying the error
// while this tensor stays as it was; CallNoOutput and CallMulti return absl::Status(Or). Ops are
// pipelined: sent in one batch when data is needed (bytes, to_vector, status, synchronize) or
// the buffer is full. An error only the server or a kernel finds (a memory limit, an index out
// of range inside gather) fails that op's outputs and what reads them, and surfaces where their
// data is needed or at Synchronize; the batch's other ops still run. With another registry (or
// TENSORD_LOCAL_PLANNING=0) the server plans each op when its batch is sent.
//
// Tensor handles are reference counted; when the last copy goes, the server-side id is released
// in the next batch. A Session closes on the server when the last of its handles (and of its
// tensors) goes, or explicitly with Close(). Thread-safe: a session's calls are serialised.
//
// While a session is open, a thread of its own renews its lease every third of the server's
// session TTL, so the session lives as long as its handles do, however long the program makes
// no call.
#ifndef TENSORD_CLIENT_CPP_TENSORD_CLIENT_H_
#define TENSORD_CLIENT_CPP_TENSORD_CLIENT_H_

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "grpcpp/channel.h"
#include "grpcpp/security/credentials.h"
#include "tensord/v1/tensord.pb.h"

namespace tensord::client {

// Statuses from the server carry, under this payload URL, the Python exception class PyTorch
// raises for the same mistake ("IndexError", "ValueError", "TypeError", "RuntimeError").
inline constexpr char kErrorKindUrl[] = "type.tensord.dev/error_kind";
// That class for a status ("" when OK; "RuntimeError" when the server named none).
std::string ErrorKind(const absl::Status& status);

enum class DType { kBool, kUInt8, kInt8, kInt16, kInt32, kInt64, kFloat16, kBFloat16, kFloat32,
                   kFloat64 };
const char* DTypeName(DType dtype);  // "float32", …
int64_t ItemSize(DType dtype);
template <typename T> constexpr DType DTypeOf();
template <> constexpr DType DTypeOf<bool>() { return DType::kBool; }
template <> constexpr DType DTypeOf<uint8_t>() { return DType::kUInt8; }
template <> constexpr DType DTypeOf<int8_t>() { return DType::kInt8; }
template <> constexpr DType DTypeOf<int16_t>() { return DType::kInt16; }
template <> constexpr DType DTypeOf<int32_t>() { return DType::kInt32; }
template <> constexpr DType DTypeOf<int64_t>() { return DType::kInt64; }
template <> constexpr DType DTypeOf<float>() { return DType::kFloat32; }
template <> constexpr DType DTypeOf<double>() { return DType::kFloat64; }

// A tensor's metadata, as PyTorch reports it.
struct TensorInfo {
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;  // elements
  int64_t storage_offset = 0;    // elements
  DType dtype = DType::kFloat32;
  std::string device;
  bool is_contiguous = true;
  uint64_t storage_id = 0;
  int64_t storage_nbytes = 0;
  uint64_t data_ptr = 0;
  uint64_t storage_data_ptr = 0;
  int64_t numel() const;
};

// A Python number: bool, int or float.
class Scalar {
 public:
  Scalar(bool v) : v_(v) {}                            // NOLINT: implicit, like Python
  Scalar(int v) : v_(static_cast<int64_t>(v)) {}       // NOLINT
  Scalar(int64_t v) : v_(v) {}                         // NOLINT
  Scalar(double v) : v_(v) {}                          // NOLINT
  void ToProto(v1::AttrValue* value) const;

 private:
  std::variant<bool, int64_t, double> v_;
};

// One item of a basic index: t.index({0, Slice{1, {}, 2}, None, Ellipsis}).
struct Slice {
  std::optional<int64_t> start;
  std::optional<int64_t> stop;
  std::optional<int64_t> step;
};
struct NoneIndex {};
struct EllipsisIndex {};
inline constexpr NoneIndex None{};
inline constexpr EllipsisIndex Ellipsis{};
using Index = std::variant<int64_t, Slice, NoneIndex, EllipsisIndex>;

// An int or a list of ints (an attribute either form of which torch takes: sum's dim,
// squeeze's dim, split's split_size), or nothing (an optional attribute left out):
// t.sum(1), t.sum({0, 1}), t.sum().
class IntOrList {
 public:
  IntOrList() = default;                                                     // absent
  IntOrList(std::nullopt_t) {}                                               // NOLINT: absent
  IntOrList(int v) : ints_{v}, state_(kInt) {}                               // NOLINT: implicit
  IntOrList(int64_t v) : ints_{v}, state_(kInt) {}                           // NOLINT
  IntOrList(std::vector<int64_t> v) : ints_(std::move(v)), state_(kList) {}  // NOLINT
  IntOrList(std::initializer_list<int64_t> v) : ints_(v), state_(kList) {}   // NOLINT
  bool has_value() const { return state_ != kAbsent; }
  bool is_list() const { return state_ == kList; }
  const std::vector<int64_t>& ints() const { return ints_; }

 private:
  enum State { kAbsent, kInt, kList };
  std::vector<int64_t> ints_;
  State state_ = kAbsent;
};

// Named op attributes for generic calls (Session::Call).
class Attrs {
 public:
  Attrs& Int(const std::string& name, int64_t v);
  Attrs& Ints(const std::string& name, const std::vector<int64_t>& v);
  Attrs& Bool(const std::string& name, bool v);
  Attrs& Number(const std::string& name, const Scalar& v);
  Attrs& Dtype(const std::string& name, DType v);
  Attrs& Device(const std::string& name, const std::string& v);
  Attrs& Text(const std::string& name, const std::string& v);
  Attrs& IndexList(const std::string& name, const std::vector<Index>& items);
  Attrs& IntOrList(const std::string& name, const class IntOrList& v);
  // An explicit None (an optional input left out, as clamp's min in clamp(max=1)).
  Attrs& None(const std::string& name);
  const std::map<std::string, v1::AttrValue>& values() const { return values_; }

 private:
  std::map<std::string, v1::AttrValue> values_;
};

class Session;
class TypedStorage;
class Tensor;
struct SessionState;
struct TensorState;

// An op input that may be a tensor or a number, as torch's Tensor-or-Scalar overloads: a
// number travels as the op's attribute of the input's name.
class TensorOrScalar {
 public:
  TensorOrScalar(const Tensor& t);                        // NOLINT: implicit, like Python
  TensorOrScalar(const Scalar& v) : value_(v) {}          // NOLINT
  TensorOrScalar(bool v) : value_(Scalar(v)) {}           // NOLINT
  TensorOrScalar(int v) : value_(Scalar(v)) {}            // NOLINT
  TensorOrScalar(int64_t v) : value_(Scalar(v)) {}        // NOLINT
  TensorOrScalar(double v) : value_(Scalar(v)) {}         // NOLINT
  // Appends the tensor to `inputs`, or sets the number as attribute `name`.
  void AddTo(const std::string& name, std::vector<Tensor>& inputs, Attrs& attrs) const;

 private:
  std::variant<std::shared_ptr<TensorState>, Scalar> value_;
};

// A handle to a tensor on the server.
class Tensor {
 public:
  Tensor() = default;
  bool defined() const { return state_ != nullptr; }
  uint64_t id() const;

  // ---- Metadata (sends buffered ops when not known yet) ----
  absl::StatusOr<TensorInfo> info() const;
  absl::StatusOr<std::vector<int64_t>> sizes() const;
  absl::StatusOr<std::vector<int64_t>> stride() const;
  absl::StatusOr<int64_t> size(int64_t dim) const;
  absl::StatusOr<int64_t> stride(int64_t dim) const;
  absl::StatusOr<int64_t> dim() const;
  absl::StatusOr<int64_t> numel() const;
  absl::StatusOr<int64_t> storage_offset() const;
  absl::StatusOr<bool> is_contiguous() const;
  absl::StatusOr<DType> dtype() const;
  absl::StatusOr<uint64_t> data_ptr() const;
  // The error of the op that made this tensor, if it failed (sends buffered ops first).
  absl::Status status() const;

  // ---- View ops (metadata only on the server) ----
  Tensor view(const std::vector<int64_t>& shape) const;
  Tensor view_as(const Tensor& other) const;
  Tensor reshape(const std::vector<int64_t>& shape) const;
  Tensor reshape_as(const Tensor& other) const;
  Tensor flatten(int64_t start_dim = 0, int64_t end_dim = -1) const;
  Tensor unflatten(int64_t dim, const std::vector<int64_t>& sizes) const;
  Tensor as_strided(const std::vector<int64_t>& size, const std::vector<int64_t>& stride,
                    std::optional<int64_t> storage_offset = std::nullopt) const;
  Tensor transpose(int64_t dim0, int64_t dim1) const;
  Tensor swapaxes(int64_t axis0, int64_t axis1) const;
  Tensor swapdims(int64_t dim0, int64_t dim1) const;
  Tensor t() const;
  Tensor T() const;
  Tensor H() const;
  Tensor mT() const;
  Tensor mH() const;
  Tensor adjoint() const;
  Tensor permute(const std::vector<int64_t>& dims) const;
  Tensor movedim(const std::vector<int64_t>& source, const std::vector<int64_t>& dest) const;
  Tensor expand(const std::vector<int64_t>& size) const;
  Tensor expand_as(const Tensor& other) const;
  Tensor broadcast_to(const std::vector<int64_t>& size) const;
  Tensor squeeze() const;
  Tensor squeeze(int64_t dim) const;
  Tensor squeeze(const std::vector<int64_t>& dims) const;
  Tensor unsqueeze(int64_t dim) const;
  Tensor narrow(int64_t dim, int64_t start, int64_t length) const;
  Tensor select(int64_t dim, int64_t index) const;
  Tensor slice(int64_t dim, std::optional<int64_t> start, std::optional<int64_t> end,
               int64_t step = 1) const;
  Tensor index(const std::vector<Index>& items) const;
  Tensor diagonal(int64_t offset = 0, int64_t dim1 = 0, int64_t dim2 = 1) const;
  Tensor unfold(int64_t dimension, int64_t size, int64_t step) const;
  Tensor alias() const;
  Tensor detach() const;
  // Ops that return lists need the server's answer to know how many: they send the batch.
  absl::StatusOr<std::vector<Tensor>> split(int64_t split_size, int64_t dim = 0) const;
  absl::StatusOr<std::vector<Tensor>> split(const std::vector<int64_t>& sizes,
                                            int64_t dim = 0) const;
  absl::StatusOr<std::vector<Tensor>> tensor_split(int64_t sections, int64_t dim = 0) const;
  absl::StatusOr<std::vector<Tensor>> chunk(int64_t chunks, int64_t dim = 0) const;
  absl::StatusOr<std::vector<Tensor>> unbind(int64_t dim = 0) const;

  // ---- Data ops (queued on the session's current stream) ----
  Tensor contiguous() const;
  Tensor clone() const;
  Tensor to(DType dtype) const;
  Tensor flip(const std::vector<int64_t>& dims) const;
  Tensor repeat(const std::vector<int64_t>& repeats) const;
  // In place: write through this view into the shared storage. Return this tensor, or, when
  // the op is refused at the call, a handle carrying its error (this tensor stays as it was,
  // as torch leaves it when it raises).
  Tensor copy_(const Tensor& src) const;
  Tensor fill_(const Scalar& value) const;
  Tensor zero_() const;

  // ---- Every other op of the registry, typed: t.add(u), t.add(2), t.matmul(u),
  // t.sum({1}, true), t.clamp(0.0, 1.0), t.add_(1) (generated; see client/cpp/codegen) ----
#include "tensord/generated/tensor_methods.inc"

  // ---- Data ----
  // The elements in row-major order (as of .contiguous()), once the work writing them is done.
  absl::StatusOr<std::string> bytes() const;
  // The same bytes into a caller's buffer of `capacity` bytes (no allocation); returns how many
  // were written. OUT_OF_RANGE when the buffer is too small (nothing is written then).
  absl::StatusOr<int64_t> ReadInto(void* buffer, int64_t capacity) const;
  template <typename E>
  absl::StatusOr<std::vector<E>> to_vector() const;

  // The typed storage under this tensor (PyTorch's tensor.storage()).
  TypedStorage storage() const;

  Session session() const;

 private:
  friend class Session;
  friend class TypedStorage;
  friend class TensorOrScalar;
  friend struct SessionState;
  explicit Tensor(std::shared_ptr<TensorState> state) : state_(std::move(state)) {}
  Tensor Op(const std::string& name, std::vector<Tensor> others, Attrs attrs) const;
  // *this when an in-place op was queued; else a handle carrying its error.
  Tensor AfterInPlace(absl::Status status) const;
  absl::StatusOr<std::vector<Tensor>> MultiOp(const std::string& name, Attrs attrs) const;

  std::shared_ptr<TensorState> state_;
};

// The storage under a tensor, in elements of the tensor's dtype (PyTorch's typed storage).
// Reads wait only for queued work that writes the storage; writes are queued like in-place ops.
class TypedStorage {
 public:
  absl::StatusOr<int64_t> size() const;  // elements
  absl::StatusOr<int64_t> nbytes() const;
  absl::StatusOr<uint64_t> data_ptr() const;
  // `count` -1: to the end.
  absl::StatusOr<std::string> ReadBytes(int64_t offset, int64_t count) const;
  absl::Status WriteBytes(int64_t offset, const std::string& bytes) const;
  template <typename E>
  absl::StatusOr<std::vector<E>> to_vector() const;
  template <typename E>
  absl::StatusOr<E> get(int64_t index) const;
  template <typename E>
  absl::Status set(int64_t index, E value) const;

 private:
  friend class Tensor;
  explicit TypedStorage(Tensor tensor) : tensor_(std::move(tensor)) {}
  Tensor tensor_;
};

// A stream of the session (0 is the default). Ops go to the session's current stream.
struct Stream {
  uint64_t id = 0;
};

// A channel with the client's settings: no limit on the size of replies, and keepalive pings
// (every 30 s while a call is open, 10 s to answer), so a connection that dies under a long call
// fails it rather than leaving it hanging.
std::shared_ptr<grpc::Channel> CreateChannel(
    const std::string& address, const std::shared_ptr<grpc::ChannelCredentials>& credentials);

struct SessionOptions {
  std::string device;            // empty: the server's default
  size_t max_buffered_ops = 1024;
  std::string auth_token;        // sent as "authorization: Bearer <token>" when not empty
  // When the connection is lost (a network blip, a proxy restart), how long a call keeps
  // trying to reach the session's server again; batches are numbered, so one resent after a
  // lost reply is answered by the server, not run twice. Zero: no retry.
  absl::Duration reconnect_timeout = absl::Seconds(30);
};

class Session {
 public:
  static absl::StatusOr<Session> Open(std::shared_ptr<grpc::Channel> channel,
                                      const SessionOptions& options = {});
  Session() = default;

  const std::string& id() const;
  const std::string& device() const;

  // ---- Factories ----
  Tensor arange(const Scalar& end, std::optional<DType> dtype = std::nullopt);
  Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step = Scalar(int64_t{1}),
                std::optional<DType> dtype = std::nullopt);
  // Without a dtype: the session's default dtype (SetDefaultDType; float32 at first).
  Tensor zeros(const std::vector<int64_t>& size, std::optional<DType> dtype = std::nullopt);
  Tensor ones(const std::vector<int64_t>& size, std::optional<DType> dtype = std::nullopt);
  Tensor empty(const std::vector<int64_t>& size, std::optional<DType> dtype = std::nullopt);
  Tensor full(const std::vector<int64_t>& size, const Scalar& value,
              std::optional<DType> dtype = std::nullopt);
  Tensor empty_strided(const std::vector<int64_t>& size, const std::vector<int64_t>& stride,
                       std::optional<DType> dtype = std::nullopt);
  // Uploads bytes (numel * itemsize of them) as a new contiguous tensor.
  absl::StatusOr<Tensor> from_bytes(const std::vector<int64_t>& sizes, DType dtype,
                                    const std::string& bytes);
  // The same from any memory (sent from it directly, without a copy).
  absl::StatusOr<Tensor> from_bytes(const std::vector<int64_t>& sizes, DType dtype,
                                    const void* data, int64_t nbytes);
  template <typename T>
  absl::StatusOr<Tensor> from_vector(const std::vector<T>& values,
                                     const std::vector<int64_t>& sizes) {
    static_assert(!std::is_same_v<T, bool>, "use from_bytes for bool");
    std::string bytes(values.size() * sizeof(T), '\0');
    if (!values.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
    return from_bytes(sizes, DTypeOf<T>(), bytes);
  }

  // ---- Every other factory and op of the registry that takes no `self`, typed: s.rand({2, 3}),
  // s.randn({4}, std::nullopt, std::nullopt, 7), s.where(cond, a, b) (generated) ----
#include "tensord/generated/session_methods.inc"

  // Any op of the registry (ListOps), by name.
  Tensor Call(const std::string& op, const std::vector<Tensor>& inputs, const Attrs& attrs = {});
  absl::StatusOr<std::vector<Tensor>> CallMulti(const std::string& op,
                                                const std::vector<Tensor>& inputs,
                                                const Attrs& attrs = {});
  // An op queued for its effect, naming no output (in-place ops, _sleep). Returns the op's
  // error when it is refused at the call (planned here), or an input's.
  absl::Status CallNoOutput(const std::string& op, const std::vector<Tensor>& inputs,
                    const Attrs& attrs = {});

  // Sends buffered ops; returns the first error among them.
  absl::Status Flush();
  // Sends buffered ops and waits for every stream (or one): the first asynchronous error that
  // no read of the data it poisoned has returned already.
  absl::Status Synchronize();
  absl::Status Synchronize(Stream stream);
  // Drops the session's queued ops (on every stream, or on `stream`): ops not started do not
  // run, a running one stops at its next piece, and their outputs hold a CANCELLED error that
  // reading them returns; ops queued afterwards run as usual. The ops still buffered here are
  // sent and dropped too. May be called from another thread while one waits in Synchronize or
  // a read (that wait then ends). Returns how many ops were dropped.
  absl::StatusOr<int64_t> Cancel();
  absl::StatusOr<int64_t> Cancel(Stream stream);

  // torch::set_default_dtype for this session's later ops: the dtype of floating numbers, of
  // floating factories given no dtype and of integers computed in floating point (sqrt, true
  // division). A floating dtype (else INVALID_ARGUMENT, nothing changed); float32 at first.
  absl::Status SetDefaultDType(DType dtype);
  DType default_dtype() const;

  absl::StatusOr<Stream> CreateStream();
  void SetCurrentStream(Stream stream);
  Stream current_stream() const;
  // Events are named by the client; recording again replaces the previous record.
  absl::Status RecordEvent(uint64_t event, Stream stream);
  absl::Status WaitEvent(uint64_t event, Stream stream);
  absl::StatusOr<bool> QueryEvent(uint64_t event);

  // The server's profile of this session's ops (the Profile RPC), after the ops sent so far:
  // StartProfile records each op queued from then on (with its input sizes when
  // `record_shapes`); StopProfile returns them with their kernels' times, once the ops sent
  // before it have run (FAILED_PRECONDITION when no profile was started).
  absl::Status StartProfile(bool record_shapes = false);
  absl::StatusOr<v1::ProfileResponse> StopProfile();

  // Ops sent to the server so far (for tests of pipelining) and calls made.
  int64_t ops_sent() const;
  int64_t batches_sent() const;

  absl::Status Close();

 private:
  friend class Tensor;
  explicit Session(std::shared_ptr<SessionState> state) : state_(std::move(state)) {}
  std::shared_ptr<SessionState> state_;
};

// ---- Template definitions ---------------------------------------------------------------------

template <typename E>
absl::StatusOr<std::vector<E>> Tensor::to_vector() const {
  absl::StatusOr<DType> dt = dtype();
  if (!dt.ok()) return dt.status();
  if (*dt != DTypeOf<E>()) {
    return absl::InvalidArgumentError(std::string("to_vector: the tensor is ") + DTypeName(*dt) +
                                      ", not " + DTypeName(DTypeOf<E>()));
  }
  absl::StatusOr<std::string> raw = bytes();
  if (!raw.ok()) return raw.status();
  std::vector<E> out(raw->size() / sizeof(E));
  if (!out.empty()) std::memcpy(out.data(), raw->data(), out.size() * sizeof(E));
  return out;
}

template <typename E>
absl::StatusOr<std::vector<E>> TypedStorage::to_vector() const {
  absl::StatusOr<std::string> raw = ReadBytes(0, -1);
  if (!raw.ok()) return raw.status();
  std::vector<E> out(raw->size() / sizeof(E));
  if (!out.empty()) std::memcpy(out.data(), raw->data(), out.size() * sizeof(E));
  return out;
}

template <typename E>
absl::StatusOr<E> TypedStorage::get(int64_t index) const {
  absl::StatusOr<std::string> raw = ReadBytes(index, 1);
  if (!raw.ok()) return raw.status();
  if (raw->size() != sizeof(E)) {
    return absl::InvalidArgumentError("storage element size does not match the requested type");
  }
  E v;
  std::memcpy(&v, raw->data(), sizeof(E));
  return v;
}

template <typename E>
absl::Status TypedStorage::set(int64_t index, E value) const {
  std::string raw(sizeof(E), '\0');
  std::memcpy(raw.data(), &value, sizeof(E));
  return WriteBytes(index, raw);
}

}  // namespace tensord::client

#endif  // TENSORD_CLIENT_CPP_TENSORD_CLIENT_H_
