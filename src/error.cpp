#include <b2nd/error.hpp>

namespace b2nd {

namespace {

std::string with_offset(const std::string& msg, std::uint64_t offset) {
    return msg + " at offset " + std::to_string(offset);
}

}  // namespace

FormatError::FormatError(const std::string& msg, std::uint64_t offset)
    : FormatError(with_offset(msg, offset), msg, offset) {}

UnsupportedError::UnsupportedError(const std::string& msg, std::uint64_t offset)
    : FormatError(msg, offset) {}

IoError::IoError(const std::string& msg, std::error_code ec)
    : Error(msg + ": " + ec.message()), code_(ec) {}

void rethrow_with_context(const FormatError& e,
                          const std::string& context,
                          std::uint64_t base_offset) {
    const std::string detail = context + ": " + e.detail();
    const std::uint64_t offset = base_offset + e.offset();
    if (dynamic_cast<const UnsupportedError*>(&e) != nullptr) {
        throw UnsupportedError(detail, offset);
    }
    throw FormatError(detail, offset);
}

}  // namespace b2nd
