#include "server/auth.h"

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace tensord::server {
namespace {

absl::Status Unauthenticated() {
  return absl::UnauthenticatedError("a valid 'authorization: Bearer <token>' is required");
}

}  // namespace

bool ConstantTimeEqual(absl::string_view a, absl::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    diff |= static_cast<unsigned char>(a[i]) ^ static_cast<unsigned char>(b[i]);
  }
  return diff == 0;
}

absl::StatusOr<std::vector<TenantToken>> ParseTokenFile(absl::string_view contents) {
  std::vector<TenantToken> tokens;
  absl::flat_hash_set<std::string> tenants, seen_tokens;
  int number = 0;
  for (absl::string_view line : absl::StrSplit(contents, '\n')) {
    ++number;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line.front() == '#') continue;
    std::vector<absl::string_view> fields =
        absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty());
    TenantToken entry;
    if (fields.size() == 1) {
      entry = {"default", std::string(fields[0])};
    } else if (fields.size() == 2) {
      entry = {std::string(fields[0]), std::string(fields[1])};
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "token file line ", number, ": expected '<tenant> <token>' or '<token>', got ",
          fields.size(), " fields"));
    }
    for (char c : entry.tenant) {
      if (!absl::ascii_isalnum(c) && c != '-' && c != '_' && c != '.' && c != '@') {
        return absl::InvalidArgumentError(absl::StrCat(
            "token file line ", number, ": a tenant name is made of [A-Za-z0-9._@-]"));
      }
    }
    if (!tenants.insert(entry.tenant).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("token file line ", number, ": tenant '", entry.tenant, "' repeats"));
    }
    if (!seen_tokens.insert(entry.token).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("token file line ", number, ": this token is another tenant's too"));
    }
    tokens.push_back(std::move(entry));
  }
  if (tokens.empty()) return absl::InvalidArgumentError("the token file holds no token");
  return tokens;
}

absl::StatusOr<std::string> Authenticator::TenantOfToken(absl::string_view authorization) const {
  if (!absl::ConsumePrefix(&authorization, "Bearer ")) return Unauthenticated();
  const TenantToken* match = nullptr;
  for (const TenantToken& entry : tokens_) {  // every token, whichever matches
    if (ConstantTimeEqual(entry.token, authorization)) match = &entry;
  }
  if (match == nullptr) return Unauthenticated();
  return match->tenant;
}

absl::StatusOr<std::string> Authenticator::Tenant(const grpc::ServerContextBase& ctx) const {
  if (!tokens_.empty()) {
    const auto& metadata = ctx.client_metadata();
    auto it = metadata.find("authorization");
    if (it == metadata.end()) return Unauthenticated();
    return TenantOfToken(absl::string_view(it->second.data(), it->second.size()));
  }
  if (mtls_) {
    // gRPC has verified the chain (the server requires and checks client certificates).
    const std::shared_ptr<const grpc::AuthContext> auth = ctx.auth_context();
    if (auth != nullptr) {
      for (const grpc::string_ref& name : auth->FindPropertyValues("x509_common_name")) {
        return std::string(name.data(), name.size());
      }
    }
    return absl::UnauthenticatedError("the client certificate names no common name (CN)");
  }
  return std::string();
}

}  // namespace tensord::server
