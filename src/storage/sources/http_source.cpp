// Remote files as byte sources (http.hpp, http_source.hpp).
#include "http_source.hpp"

#include <algorithm>
#include <cstring>

#include <b2nd/error.hpp>
#include <b2nd/storage/http.hpp>

namespace b2nd::storage {

bool http_available() noexcept {
#ifdef B2ND_HAVE_HTTP
    return true;
#else
    return false;
#endif
}

std::shared_ptr<const ByteSource> http_source(const std::string& url, const HttpOptions& options) {
    if (!is_url(url)) {
        throw UsageError("http_source: \"" + redacted_url(url) + "\" is not an http(s) URL");
    }
    auto client = std::make_shared<const detail::HttpClient>(options);
    return std::make_shared<detail::HttpSource>(std::move(client), url);
}

namespace detail {

std::string RemoteIdentity::stamp() const {
    return std::to_string(size) + ":" + etag + ":" + last_modified;
}

namespace {

std::string name_or_url(std::string name, const std::string& url) {
    return name.empty() ? redacted_url(url) : name;
}

/// `path` with its last component replaced by `name`.
std::string beside(const std::string& path, const std::string& name) {
    const std::string base = path.substr(0, path.find_first_of("?#"));
    return base.substr(0, base.rfind('/') + 1) + name;
}

}  // namespace

FileRanges HttpSource::ranges() const {
    FileRanges f;
    f.url = url_;
    f.name = name_;
    f.id = &id_;
    return f;
}

HttpSource::HttpSource(std::shared_ptr<const HttpClient> client, std::string url, std::string name)
    : client_(std::move(client)), url_(std::move(url)), name_(name_or_url(std::move(name), url_)) {
    const std::uint64_t head = std::max<std::uint64_t>(client_->options().head_bytes, 64);
    auto bytes = std::make_shared<std::vector<std::uint8_t>>(static_cast<std::size_t>(head));
    std::vector<FileRanges> one{ranges()};
    one[0].pieces.push_back({0, head, bytes->data(), true, 0});
    client_->fetch(one);
    bytes->resize(static_cast<std::size_t>(one[0].pieces[0].got));
    if (id_.size < bytes->size()) {
        id_.size = bytes->size();  // a 206 without the total length: at least this much
    }
    kept_.emplace(0, std::move(bytes));
    opened_ = true;
}

HttpSource::HttpSource(std::shared_ptr<const HttpClient> client,
                       std::string url,
                       std::string name,
                       bool /*unopened*/)
    : client_(std::move(client)), url_(std::move(url)), name_(name_or_url(std::move(name), url_)) {}

std::uint64_t HttpSource::size() const {
    return opened_ ? id_.size : UINT64_MAX;
}

std::string HttpSource::stamp() const {
    return id_.stamp();
}

std::shared_ptr<const std::vector<std::uint8_t>> HttpSource::kept(std::uint64_t offset,
                                                                  std::uint64_t n,
                                                                  std::uint64_t& at) const {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = kept_.upper_bound(offset);
    if (it == kept_.begin()) {
        return nullptr;
    }
    --it;
    if (offset - it->first + n <= it->second->size()) {
        at = offset - it->first;
        return it->second;
    }
    return nullptr;
}

SourceBytes HttpSource::read(std::uint64_t offset, std::uint64_t n) const {
    const std::uint64_t sz = size();
    if (offset > sz || n > sz - offset) {
        throw FormatError("\"" + name_ + "\": bytes [" + std::to_string(offset) + ", " +
                              std::to_string(offset) + " + " + std::to_string(n) +
                              ") pass the end of its " + std::to_string(sz) + " bytes",
                          offset);
    }
    std::uint64_t at = 0;
    if (auto k = kept(offset, n, at)) {
        return {ByteSpan(k->data() + at, static_cast<std::size_t>(n)), k};
    }
    // What is read here is a frame's metadata (header, index and trailer, a zip directory):
    // chunks go through read_into. A file claiming more is not believed into memory.
    constexpr std::uint64_t kMaxRead = std::uint64_t{1} << 30;
    if (n > kMaxRead) {
        throw FormatError("\"" + name_ + "\": bytes [" + std::to_string(offset) + ", " +
                              std::to_string(offset) + " + " + std::to_string(n) +
                              ") asked of it at once: more metadata than any frame has (1 GiB at "
                              "most)",
                          offset);
    }
    auto bytes = std::make_shared<std::vector<std::uint8_t>>(static_cast<std::size_t>(n));
    std::vector<FileRanges> one{ranges()};
    one[0].pieces.push_back({offset, n, bytes->data(), false, 0});
    client_->fetch(one);
    std::shared_ptr<const std::vector<std::uint8_t>> held = bytes;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        auto [it, fresh] = kept_.emplace(offset, held);
        if (!fresh && it->second->size() < n) {
            it->second = held;
        }
    }
    return {ByteSpan(held->data(), static_cast<std::size_t>(n)), held};
}

void HttpSource::read_into(const std::vector<RangeInto>& ranges) const {
    std::vector<FileRanges> one{this->ranges()};
    std::vector<const RangeInto*> asked;
    for (const RangeInto& r : ranges) {
        std::uint64_t at = 0;
        if (r.got == nullptr && !r.probe) {
            if (auto k = kept(r.offset, r.n, at)) {
                std::memcpy(r.into, k->data() + at, static_cast<std::size_t>(r.n));
                continue;
            }
        }
        one[0].pieces.push_back({r.offset, r.n, r.into, r.got != nullptr, 0, r.probe});
        asked.push_back(&r);
    }
    client_->fetch(one);
    for (std::size_t k = 0; k < asked.size(); ++k) {
        if (asked[k]->got != nullptr) {
            *asked[k]->got = one[0].pieces[k].got;
        }
    }
}

std::shared_ptr<const ByteSource> HttpSource::sibling(const std::string& name) const {
    return std::make_shared<HttpSource>(client_, beside(url_, name), beside(name_, name), true);
}

std::shared_ptr<const ByteSource> HttpSource::reopen() const {
    return std::make_shared<HttpSource>(client_, url_, name_);
}

void HttpSource::read_batch(const std::vector<SourceRanges*>& batch) const {
    // Remote files of one client (batch_key): one fetch for all of them.
    std::vector<FileRanges> files;
    for (const SourceRanges* s : batch) {
        const auto& h = static_cast<const HttpSource&>(*s->file);  // same key: same driver
        FileRanges f = h.ranges();
        for (const RangeInto& r : s->ranges) {
            f.pieces.push_back({r.offset, r.n, r.into, r.got != nullptr, 0, r.probe});
        }
        files.push_back(std::move(f));
    }
    client_->fetch(files);
    for (std::size_t k = 0; k < files.size(); ++k) {
        for (std::size_t j = 0; j < files[k].pieces.size(); ++j) {
            if (batch[k]->ranges[j].got != nullptr) {
                *batch[k]->ranges[j].got = files[k].pieces[j].got;
            }
        }
    }
}

}  // namespace detail

}  // namespace b2nd::storage
