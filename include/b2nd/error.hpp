// b2nd-cpp: one exception hierarchy for every layer.
//
//   Error                  root; derives from std::runtime_error
//   ├── FormatError        the bytes violate the format (corrupt, truncated, bad marker); has an
//   offset │   └── UnsupportedError   valid bytes that use a feature we do not implement ├──
//   CodecError         a compression library failed on input we had validated ├── IoError
//   open/map/read/write failed; keeps the std::error_code └── UsageError         a caller mistake:
//   bad parameter, wrong dtype, out-of-range index
//
// Messages say where, what was expected and what was found, lowercase, no trailing period.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <system_error>

namespace b2nd {

/// Root of every exception b2nd-cpp throws.
class Error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// The input bytes violate the format. `offset()` is the byte offset of the problem, counted
/// from the start of the object being parsed (a chunk, a frame); layers that know more (the file,
/// the chunk index) rethrow with that context prepended via `with_context`.
class FormatError : public Error {
public:
    FormatError(const std::string& msg, std::uint64_t offset);
    /// Byte offset of the problem.
    std::uint64_t offset() const noexcept { return offset_; }
    /// The message without the " at offset N" suffix.
    const std::string& detail() const noexcept { return detail_; }

protected:
    FormatError(const std::string& full, const std::string& detail, std::uint64_t offset)
        : Error(full), offset_(offset), detail_(detail) {}

private:
    std::uint64_t offset_;
    std::string detail_;
};

/// Valid input that uses a feature b2nd-cpp does not implement (a plugin codec, a future version).
class UnsupportedError : public FormatError {
public:
    UnsupportedError(const std::string& msg, std::uint64_t offset);
};

/// A compression library reported failure on input that passed our validation.
class CodecError : public Error {
public:
    using Error::Error;
};

/// An operating-system level failure; `code()` holds errno (or the Boost equivalent).
class IoError : public Error {
public:
    IoError(const std::string& msg, std::error_code ec);
    std::error_code code() const noexcept { return code_; }

private:
    std::error_code code_;
};

/// The caller asked for something invalid.
class UsageError : public Error {
public:
    using Error::Error;
};

/// Rethrows `e` (a FormatError or UnsupportedError) with `context` prepended to its message and
/// `base_offset` added to its offset; keeps the dynamic type. Used by outer layers to say which
/// file and which chunk a problem is in.
[[noreturn]] void rethrow_with_context(const FormatError& e,
                                       const std::string& context,
                                       std::uint64_t base_offset);

}  // namespace b2nd
