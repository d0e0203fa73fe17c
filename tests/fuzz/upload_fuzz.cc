// upload_fuzz: an Upload stream as the server receives it. Input: one flags byte, then a
// sequence of raw Upload messages, each a varint length followed by that many bytes: a
// serialized UploadRequest (the first should be its header; a data message is exactly wire.h's
// data record, 0x12 + varint length + bytes). Each message is handled as the gRPC layer does
// (server/grpc_service.cc): in a grpc::ByteBuffer read by tensord::wire::Reader, a lone data
// record straight into PendingUpload::AppendWith, anything else parsed; the first error ends the
// stream. Then PendingUpload::Finish, and a download of the new tensor through StartDownload.
// A header session id that is empty or "S" is replaced by the input's session (which holds the
// preamble's tensors, ids 1-20).
//
// Flags: bit 0: each message arrives in two slices, split at (bits 2-4)/8 of its length;
// bit 1: the stream ends without Finish (a client gone: the partial upload is dropped).
//
// Checks beyond the sanitizers: a finished upload describes the header's tensor, holds exactly
// numel * itemsize bytes, and downloads as exactly the bytes appended.
#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "grpcpp/support/byte_buffer.h"
#include "grpcpp/support/slice.h"
#include "tensord/wire.h"
#include "tests/fuzz/fuzz_backend.h"

namespace tensord::fuzz {
namespace {

// The next varint-prefixed message of [*at, end); false at the end.
bool NextMessage(const uint8_t*& at, const uint8_t* end, std::string* message) {
  if (at >= end) return false;
  uint64_t length = 0;
  for (int shift = 0; at < end && shift < 64; shift += 7) {
    const uint8_t b = *at++;
    length |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (!(b & 0x80)) break;
  }
  const uint64_t left = static_cast<uint64_t>(end - at);
  if (length > left) length = left;
  message->assign(reinterpret_cast<const char*>(at), static_cast<size_t>(length));
  at += length;
  return true;
}

grpc::ByteBuffer ToBuffer(const std::string& message, bool split, int eighths) {
  if (!split) {
    grpc::Slice slice(message);
    return grpc::ByteBuffer(&slice, 1);
  }
  const size_t cut = message.size() * static_cast<size_t>(eighths) / 8;
  grpc::Slice slices[2] = {grpc::Slice(message.data(), cut),
                           grpc::Slice(message.data() + cut, message.size() - cut)};
  return grpc::ByteBuffer(slices, 2);
}

}  // namespace
}  // namespace tensord::fuzz

using namespace tensord::fuzz;  // NOLINT

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  Backend();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t flags = data[0];
  const bool split = flags & 1, finish = !(flags & 2);
  const int eighths = (flags >> 2) & 7;
  const uint8_t* at = data + 1;
  const uint8_t* const end = data + size;

  FuzzSession session;
  std::unique_ptr<PendingUpload> upload;
  std::optional<v1::UploadHeader> header;
  std::string appended;  // every byte the upload accepted, in order
  std::string message;
  bool failed = false;
  while (!failed && NextMessage(at, end, &message)) {
    const grpc::ByteBuffer buffer = ToBuffer(message, split, eighths);
    tensord::wire::Reader reader(buffer);
    if (upload) {
      const int64_t n = reader.DataRecordLength();
      if (n >= 0) {
        failed = !UploadAppendWith(*upload, n, [&](char* to) {
                    reader.CopyTo(to, static_cast<size_t>(n));
                    appended.append(to, static_cast<size_t>(n));
                  }).ok();
        continue;
      }
    }
    v1::UploadRequest request;
    if (!reader.Parse(&request)) break;
    if (!upload) {
      if (request.kind_case() != v1::UploadRequest::kHeader) break;
      v1::UploadHeader h = request.header();
      if (h.session_id().empty() || h.session_id() == "S") h.set_session_id(session.id());
      absl::StatusOr<std::unique_ptr<PendingUpload>> started = StartUpload(Backend(), h);
      if (!started.ok()) break;
      upload = *std::move(started);
      header = std::move(h);
      continue;
    }
    if (request.kind_case() != v1::UploadRequest::kData) break;
    failed = !UploadAppend(*upload, request.data()).ok();
    if (!failed) appended += request.data();
  }
  if (!upload || failed || !finish) return 0;  // the partial upload is dropped here

  absl::StatusOr<v1::UploadResponse> done = UploadFinish(*upload);
  upload.reset();
  if (!done.ok()) return 0;
  const v1::TensorInfo& info = done->tensor();
  const std::string what = absl::StrCat(header->ShortDebugString(), " -> ", info.ShortDebugString());
  CheckTensorInfo(info, "upload");
  FUZZ_CHECK(info.id() == header->id() && info.dtype() == header->dtype() && info.is_contiguous(),
             what);
  FUZZ_CHECK(info.sizes_size() == header->sizes_size(), what);
  int64_t numel = 1;
  for (int i = 0; i < info.sizes_size(); ++i) {
    FUZZ_CHECK(info.sizes(i) == header->sizes(i), what);
    numel *= info.sizes(i);
  }
  FUZZ_CHECK(static_cast<int64_t>(appended.size()) == numel * WireItemSize(info.dtype()), what);
  absl::StatusOr<std::string> downloaded = DownloadBytes(header->session_id(), info.id());
  FUZZ_CHECK(downloaded.ok(), absl::StrCat(what, ": ", downloaded.status().ToString()));
  FUZZ_CHECK(*downloaded == appended, absl::StrCat(what, ": the download differs from the upload"));
  return 0;
}
