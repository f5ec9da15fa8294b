// b2nd-cpp: one exception hierarchy for every layer.
//
// clang-format off
//   Error                   root; derives from std::runtime_error
//   ├── FormatError         the bytes violate the format (corrupt, truncated, bad marker);
//   │   │                   carries the byte offset of the problem when it has one
//   │   └── UnsupportedError  valid bytes that use a feature we do not implement
//   ├── CodecError          a compression library failed on input we had validated
//   ├── IoError             open/map/read/write failed; keeps the std::error_code
//   ├── LockError           another process (or handle) holds the array for writing
//   └── UsageError          a caller mistake: bad parameter, wrong dtype, out-of-range index
// clang-format on
//
// Messages say where, what was expected and what was found, lowercase, no trailing period.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <system_error>

namespace b2nd {

class FormatError;

/// Rethrows `e` (a FormatError or UnsupportedError) with `context` prepended to its message and
/// `base_offset` added to its offset, if it has one; keeps the dynamic type. Outer layers use it
/// to say which file and which chunk a problem is in, and where in the file: `base_offset` is
/// where the object the inner layer parsed starts.
[[noreturn]] void rethrow_with_context(const FormatError& e,
                                       const std::string& context,
                                       std::uint64_t base_offset = 0);

/// Rethrows the exception being handled, when it is a b2nd::Error, with every `from` in its
/// message replaced by `to`; the type, error code and offset stay. Other exceptions are rethrown
/// as they are. Used where work under a temporary name must report the name the caller gave.
[[noreturn]] void rethrow_renamed(const std::string& from, const std::string& to);

/// `text` with its secrets replaced, as every message and output of b2nd shows it: URLs lose
/// their user information (user:password@) and their query strings and fragments (tokens,
/// signatures); values of fields named as secrets ("auth_token": "...", 'password': '...') and
/// bearer tokens become <redacted>. Every Error's message goes through it.
std::string redact_secrets(const std::string& text);

/// Root of every exception b2nd-cpp throws: what() names the file (or URL, or value) and what is
/// wrong, with its secrets redacted.
class Error : public std::runtime_error {
public:
    /// The message, with redact_secrets applied.
    explicit Error(const std::string& msg);
    /// The message, with redact_secrets applied.
    explicit Error(const char* msg);
};

/// The input bytes violate the format. When the problem sits at one byte position, `offset()`
/// holds it and the message ends in " at offset N": counted from the start of the object parsed
/// (a chunk, a frame) where the error arises, and from the start of the file once a layer that
/// knows the file has added its context (rethrow_with_context). Problems with no single position
/// (sizes that contradict each other, a count that does not match) have no offset.
class FormatError : public Error {
public:
    /// A problem with no single byte position.
    explicit FormatError(const std::string& msg);
    /// A problem at byte `offset`.
    FormatError(const std::string& msg, std::uint64_t offset);
    /// Byte offset of the problem, if it has one.
    std::optional<std::uint64_t> offset() const noexcept { return offset_; }
    /// The message without the " at offset N" suffix.
    const std::string& detail() const noexcept { return detail_; }

protected:
    /// For subclasses and rethrow_with_context: the whole message, its detail and its offset.
    FormatError(const std::string& full,
                const std::string& detail,
                std::optional<std::uint64_t> offset)
        : Error(full), offset_(offset), detail_(redact_secrets(detail)) {}

private:
    std::optional<std::uint64_t> offset_;
    std::string detail_;
};

/// Valid input that uses a feature b2nd-cpp does not implement (a plugin codec, a future version).
class UnsupportedError : public FormatError {
public:
    /// A feature with no single byte position.
    explicit UnsupportedError(const std::string& msg);
    /// A feature met at byte `offset`.
    UnsupportedError(const std::string& msg, std::uint64_t offset);

private:
    friend void rethrow_with_context(const FormatError& e,
                                     const std::string& context,
                                     std::uint64_t base_offset);
    UnsupportedError(const std::string& msg, std::optional<std::uint64_t> offset);
};

/// A compression library reported failure on input that passed our validation.
class CodecError : public Error {
public:
    using Error::Error;
};

/// An operating-system level failure; `code()` holds errno (or the Boost equivalent).
class IoError : public Error {
public:
    /// `msg`, followed by the system's text for `ec`.
    IoError(const std::string& msg, std::error_code ec);
    /// The system's error (errno as a std::error_code).
    std::error_code code() const noexcept { return code_; }

protected:
    /// For subclasses: `full` is the whole message already.
    IoError(std::error_code ec, const std::string& full) : Error(full), code_(ec) {}

private:
    friend void rethrow_renamed(const std::string& from, const std::string& to);
    std::error_code code_;
};

/// A file behind a remote source (any driver of storage/sources.hpp: HTTP today) could not be
/// had, or changed under the reader. The message names the location (never its credentials),
/// the byte range, the server's status and what was expected. Remote drivers speak HTTP, so
/// status() is an HTTP status whatever the driver.
class RemoteError : public IoError {
public:
    /// `status`: the server's answer (0: none, e.g. a timeout or a dropped connection);
    /// `changed`: the remote file is no longer the one the array was opened from.
    RemoteError(const std::string& msg, int status, bool changed = false)
        : IoError(std::make_error_code(std::errc::io_error), msg),
          status_(status),
          changed_(changed) {}
    /// The server's HTTP status (0: none).
    int status() const noexcept { return status_; }
    /// The remote file changed between two requests (its ETag or Last-Modified, or its size, or
    /// its checksum stamp): the engine reads it again from its header, whatever the driver.
    bool remote_changed() const noexcept { return changed_; }
    /// The server says there is no such file (404 or 410).
    bool not_found() const noexcept { return status_ == 404 || status_ == 410; }

private:
    int status_;
    bool changed_;
};

/// A request of the HTTP driver failed for good (after the retries a transient failure gets).
class HttpError : public RemoteError {
public:
    using RemoteError::RemoteError;
};

/// An array or frame is held for writing by another handle, in this process or another: one
/// writer at a time (see docs/sharing.md).
class LockError : public Error {
public:
    using Error::Error;
};

/// The caller asked for something invalid.
class UsageError : public Error {
public:
    using Error::Error;
};

}  // namespace b2nd
