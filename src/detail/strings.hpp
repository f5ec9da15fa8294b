// Internal: the few string helpers every layer's messages use.
#pragma once

#include <cstdint>
#include <string>

namespace b2nd::detail {

/// Decimal text of an integer (one overload for every integer type, unlike std::to_string).
inline std::string num(std::int64_t v) {
    return std::to_string(v);
}

/// A file or directory as messages name it: `"path"`, or `<memory>` for a caller's buffer.
inline std::string quoted_path(const std::string& path) {
    return path.empty() ? std::string("<memory>") : "\"" + path + "\"";
}

}  // namespace b2nd::detail
