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

namespace b2nd::storage {

namespace {

struct Driver {
    const char* scheme;  ///< lower case, with "://"
    const char* name;    ///< how messages call it
    std::shared_ptr<const ByteSource> (*open)(const std::string& url, const OpenOptions& o);
};

std::shared_ptr<const ByteSource> open_http(const std::string& url, const OpenOptions& o) {
    return http_source(url, o.http);
}

std::shared_ptr<const ByteSource> open_s3(const std::string& url, const OpenOptions& o) {
    return s3_source(url, o.s3, o.http);
}

constexpr Driver kDrivers[] = {
    {"http://", "HTTP", open_http},
    {"https://", "HTTP", open_http},
    {"s3://", "S3", open_s3},
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

}  // namespace b2nd::storage
