// The table of drivers (include/b2nd/storage/sources.hpp): the one place that spells a scheme.
// A new remote driver is a row here and a ByteSource of its own.
#include <cctype>
#include <cstring>

#include <b2nd/error.hpp>
#include <b2nd/storage/http.hpp>
#include <b2nd/storage/mapped_file.hpp>
#include <b2nd/storage/open_options.hpp>
#include <b2nd/storage/s3.hpp>
#include <b2nd/storage/sources.hpp>

#include "destination.hpp"

namespace b2nd::storage {

namespace {

struct Driver {
    const char* scheme;  ///< lower case, with "://"
    const char* name;    ///< how messages call it
    std::shared_ptr<const ByteSource> (*open)(const std::string& url, const OpenOptions& o);
    /// Where writers publish at such a URL; null: the scheme is read-only.
    std::unique_ptr<detail::Destination> (*destination)(const std::string& url,
                                                        const OpenOptions& o);
    /// The names under a URL taken as a directory; null: the scheme cannot list.
    std::vector<std::string> (*list)(const std::string& url, const OpenOptions& o);
};

std::shared_ptr<const ByteSource> open_http(const std::string& url, const OpenOptions& o) {
    return http_source(url, o.http);
}

std::shared_ptr<const ByteSource> open_s3(const std::string& url, const OpenOptions& o) {
    return s3_source(url, o.s3, o.http);
}

constexpr Driver kDrivers[] = {
    {"http://", "HTTP", open_http, nullptr, nullptr},
    {"https://", "HTTP", open_http, nullptr, nullptr},
    {"s3://", "S3", open_s3, detail::s3_destination, detail::s3_list},
};

bool starts_with_ci(const std::string& s, const char* prefix) {
    const std::size_t n = std::strlen(prefix);
    if (s.size() < n) {
        return false;
    }
    for (std::size_t k = 0; k < n; ++k) {
        if (std::tolower(static_cast<unsigned char>(s[k])) != prefix[k]) {
            return false;
        }
    }
    return true;
}

const Driver* driver_of(const std::string& path) {
    for (const Driver& d : kDrivers) {
        if (starts_with_ci(path, d.scheme)) {
            return &d;
        }
    }
    return nullptr;
}

}  // namespace

bool is_url(const std::string& path) {
    return driver_of(path) != nullptr;
}

std::string driver_name(const std::string& path) {
    const Driver* d = driver_of(path);
    return d != nullptr ? d->name : "";
}

std::string redacted_url(const std::string& url) {
    std::string u = url.substr(0, url.find_first_of("?#"));
    const std::size_t scheme = u.find("://");
    if (scheme != std::string::npos) {
        const std::size_t host = scheme + 3;
        const std::size_t path = u.find('/', host);
        const std::size_t at = u.rfind('@', path == std::string::npos ? u.size() : path);
        if (at != std::string::npos && at >= host) {
            u.erase(host, at + 1 - host);
        }
    }
    return u;
}

std::shared_ptr<const ByteSource> open_source(const std::string& path_or_url,
                                              const OpenOptions& options) {
    if (const Driver* d = driver_of(path_or_url)) {
        return d->open(path_or_url, options);
    }
    return mapped_source(MappedFile::open(path_or_url));
}

std::vector<std::string> list_under(const std::string& url, const OpenOptions& options) {
    const Driver* d = driver_of(url);
    if (d == nullptr || d->list == nullptr) {
        throw UsageError("\"" + redacted_url(url) +
                         "\": " + (d == nullptr ? std::string("not a URL") : d->name) +
                         (d == nullptr ? "" : " cannot list the files under a URL"));
    }
    return d->list(url, options);
}

namespace detail {

std::unique_ptr<Destination> open_destination(const std::string& url, const OpenOptions& options) {
    const Driver* d = driver_of(url);
    if (d == nullptr) {
        return nullptr;
    }
    if (d->destination == nullptr) {
        throw UsageError("\"" + redacted_url(url) + "\": " + d->name +
                         " URLs are read-only; write to a local path or an s3:// URL");
    }
    return d->destination(url, options);
}

}  // namespace detail

}  // namespace b2nd::storage
