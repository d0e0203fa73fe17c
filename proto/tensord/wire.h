// Zero-copy framing of the bulk-data messages (UploadRequest.data, DownloadResponse.data).
//
// Both messages carry their bytes in field 2 of type bytes: on the wire one record, the key
// 0x12, the length as a varint, then the bytes. Writing that prefix in front of a slice that
// points at the caller's memory, and reading the bytes straight out of received slices, skips
// the protobuf copies (into the message, into the serialized buffer, and back) on both sides.
// Header-only, shared by the server and the C++ client.
#ifndef TENSORD_PROTO_TENSORD_WIRE_H_
#define TENSORD_PROTO_TENSORD_WIRE_H_

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "google/protobuf/message_lite.h"
#include "grpcpp/support/byte_buffer.h"
#include "grpcpp/support/slice.h"

namespace tensord::wire {

inline constexpr uint8_t kDataKey = 0x12;  // field 2, wire type 2 (length-delimited)

// A ByteBuffer holding one data record whose bytes are [data, data + n) — not copied: the
// memory must stay valid until the write completes.
inline grpc::ByteBuffer DataRecord(const void* data, size_t n) {
  char prefix[11];
  size_t len = 0;
  prefix[len++] = static_cast<char>(kDataKey);
  uint64_t v = n;
  do {
    uint8_t byte = v & 0x7f;
    v >>= 7;
    prefix[len++] = static_cast<char>(byte | (v ? 0x80 : 0));
  } while (v);
  grpc::Slice slices[2] = {grpc::Slice(prefix, len), grpc::Slice(data, n, grpc::Slice::STATIC_SLICE)};
  return grpc::ByteBuffer(slices, n > 0 ? 2 : 1);
}

// A ByteBuffer holding a serialized message.
inline grpc::ByteBuffer Serialize(const google::protobuf::MessageLite& message) {
  std::string bytes = message.SerializeAsString();
  grpc::Slice slice(bytes);
  return grpc::ByteBuffer(&slice, 1);
}

// A received message, as slices, with a cursor.
class Reader {
 public:
  explicit Reader(const grpc::ByteBuffer& buffer) { (void)buffer.Dump(&slices_); }

  size_t remaining() const {
    size_t n = 0;
    for (size_t i = index_; i < slices_.size(); ++i) n += slices_[i].size();
    return n - offset_;
  }

  // If the whole message is exactly one data record, returns its length and leaves the cursor
  // on its first byte; otherwise returns -1 and the cursor where it was.
  int64_t DataRecordLength() {
    const size_t save_index = index_, save_offset = offset_;
    const size_t total = remaining();
    uint8_t key;
    if (!Byte(&key) || key != kDataKey) return Restore(save_index, save_offset);
    uint64_t length = 0;
    for (int shift = 0;; shift += 7) {
      uint8_t b;
      if (shift > 63 || !Byte(&b)) return Restore(save_index, save_offset);
      length |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) break;
    }
    if (length != remaining() || length > total) return Restore(save_index, save_offset);
    return static_cast<int64_t>(length);
  }

  // Copies the next n bytes to `out` (n <= remaining()).
  void CopyTo(char* out, size_t n) {
    while (n > 0) {
      const grpc::Slice& s = slices_[index_];
      const size_t take = std::min(n, s.size() - offset_);
      std::memcpy(out, s.begin() + offset_, take);
      out += take;
      n -= take;
      offset_ += take;
      if (offset_ == s.size()) {
        ++index_;
        offset_ = 0;
      }
    }
  }

  // Parses the whole message.
  bool Parse(google::protobuf::MessageLite* message) const {
    std::string bytes;
    for (const grpc::Slice& s : slices_) bytes.append(reinterpret_cast<const char*>(s.begin()), s.size());
    return message->ParseFromString(bytes);
  }

 private:
  bool Byte(uint8_t* b) {
    while (index_ < slices_.size() && offset_ == slices_[index_].size()) {
      ++index_;
      offset_ = 0;
    }
    if (index_ >= slices_.size()) return false;
    *b = slices_[index_].begin()[offset_++];
    return true;
  }
  int64_t Restore(size_t index, size_t offset) {
    index_ = index;
    offset_ = offset;
    return -1;
  }

  std::vector<grpc::Slice> slices_;
  size_t index_ = 0;
  size_t offset_ = 0;
};

}  // namespace tensord::wire

#endif  // TENSORD_PROTO_TENSORD_WIRE_H_
