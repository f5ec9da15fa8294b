#include <b2nd/error.hpp>

#include "detail/temporary_names.hpp"

namespace b2nd {

namespace {

std::string with_offset(const std::string& msg, std::optional<std::uint64_t> offset) {
    return offset ? msg + " at offset " + std::to_string(*offset) : msg;
}

}  // namespace

Error::Error(const std::string& msg) : std::runtime_error(redact_secrets(msg)) {}

Error::Error(const char* msg) : Error(std::string(msg)) {}

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

void rethrow_renamed(const std::string& from, const std::string& to) {
    const auto renamed = [&](std::string m) {
        // A temporary of `from` (the storage layer's own, FROM.b2nd-tmp-PID.R) is named as
        // `to` too.
        for (std::size_t at = 0; !from.empty() && (at = m.find(from, at)) != std::string::npos;
             at += to.size()) {
            m.replace(at, from.size() + detail::temporary_suffix_at(m, at + from.size()), to);
        }
        return m;
    };
    try {
        throw;
    } catch (const UnsupportedError& e) {
        const std::string d = renamed(e.detail());
        if (e.offset()) {
            throw UnsupportedError(d, *e.offset());
        }
        throw UnsupportedError(d);
    } catch (const FormatError& e) {
        const std::string d = renamed(e.detail());
        if (e.offset()) {
            throw FormatError(d, *e.offset());
        }
        throw FormatError(d);
    } catch (const HttpError& e) {
        throw HttpError(renamed(e.what()), e.status(), e.remote_changed());
    } catch (const RemoteError& e) {
        throw RemoteError(renamed(e.what()), e.status(), e.remote_changed());
    } catch (const IoError& e) {
        throw IoError(e.code(), renamed(e.what()));
    } catch (const CodecError& e) {
        throw CodecError(renamed(e.what()));
    } catch (const LockError& e) {
        throw LockError(renamed(e.what()));
    } catch (const UsageError& e) {
        throw UsageError(renamed(e.what()));
    } catch (const Error& e) {
        throw Error(renamed(e.what()));
    }
}

}  // namespace b2nd
