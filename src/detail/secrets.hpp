// Internal: what counts as a secret (redact_secrets in error.hpp is the text form).
#pragma once

#include <string>

namespace b2nd::detail {

/// Whether a field called `name` holds a secret: a token, a password, a key (auth_token,
/// aws_secret_access_key, password, api_key, ...), compared without case.
bool secret_name(const std::string& name);

}  // namespace b2nd::detail
