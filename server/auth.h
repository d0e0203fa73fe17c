// Who a call comes from: its tenant, from a bearer token or a client certificate.
//
// A token file (--auth-token-file) holds one line per tenant: "<tenant> <token>", or a lone
// "<token>" for the tenant "default"; blank lines and lines starting with '#' are skipped.
// Every call must then carry "authorization: Bearer <token>"; tokens are compared in constant
// time (every token, whatever matches). Without tokens, a server that requires client
// certificates (mTLS) takes the certificate's common name as the tenant. Without either, every
// caller is the one anonymous tenant "".
//
// A session belongs to the tenant that opened it: another tenant's calls do not find it
// (NOT_FOUND, as for an unknown id), and per-tenant limits cap sessions and bytes.
#ifndef TENSORD_SERVER_AUTH_H_
#define TENSORD_SERVER_AUTH_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "grpcpp/server_context.h"

namespace tensord::server {

// Equal strings, in a time that depends only on their lengths (a token's or a session secret's
// length is no secret): for comparing credentials.
bool ConstantTimeEqual(absl::string_view a, absl::string_view b);

struct TenantToken {
  std::string tenant;
  std::string token;
};

// Parses a token file's contents. INVALID_ARGUMENT naming the line (never the token) when a
// line is malformed, a tenant or a token repeats, or no token is given.
absl::StatusOr<std::vector<TenantToken>> ParseTokenFile(absl::string_view contents);

class Authenticator {
 public:
  // `tokens` empty: no token needed. `mtls`: clients present certificates (--tls-client-ca).
  Authenticator(std::vector<TenantToken> tokens, bool mtls)
      : tokens_(std::move(tokens)), mtls_(mtls) {}

  // The caller's tenant, or UNAUTHENTICATED.
  absl::StatusOr<std::string> Tenant(const grpc::ServerContextBase& ctx) const;
  // The tenant of "Bearer <token>" (`authorization`'s value), or UNAUTHENTICATED.
  absl::StatusOr<std::string> TenantOfToken(absl::string_view authorization) const;

  bool requires_token() const { return !tokens_.empty(); }
  bool mtls() const { return mtls_; }
  size_t tenants() const { return tokens_.size(); }

 private:
  std::vector<TenantToken> tokens_;
  bool mtls_;
};

}  // namespace tensord::server

#endif  // TENSORD_SERVER_AUTH_H_
