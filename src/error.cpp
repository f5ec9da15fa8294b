#include <b2nd/error.hpp>

namespace b2nd {

namespace {

std::string with_offset(const std::string& msg, std::optional<std::uint64_t> offset) {
    return offset ? msg + " at offset " + std::to_string(*offset) : msg;
}

}  // namespace

FormatError::FormatError(const std::string& msg) : FormatError(msg, msg, std::nullopt) {}

FormatError::FormatError(const std::string& msg, std::uint64_t offset)
    : FormatError(with_offset(msg, offset), msg, offset) {}

UnsupportedError::UnsupportedError(const std::string& msg) : UnsupportedError(msg, std::nullopt) {}

UnsupportedError::UnsupportedError(const std::string& msg, std::uint64_t offset)
    : UnsupportedError(msg, std::optional<std::uint64_t>(offset)) {}

UnsupportedError::UnsupportedError(const std::string& msg, std::optional<std::uint64_t> offset)
    : FormatError(with_offset(msg, offset), msg, offset) {}

IoError::IoError(const std::string& msg, std::error_code ec)
    : Error(msg + ": " + ec.message()), code_(ec) {}

void rethrow_with_context(const FormatError& e,
                          const std::string& context,
                          std::uint64_t base_offset) {
    const std::string detail = context + ": " + e.detail();
    std::optional<std::uint64_t> offset = e.offset();
    if (offset) {
        *offset += base_offset;
    }
    if (dynamic_cast<const UnsupportedError*>(&e) != nullptr) {
        throw UnsupportedError(detail, offset);
    }
    if (offset) {
        throw FormatError(detail, *offset);
    }
    throw FormatError(detail);
}

}  // namespace b2nd
