// S3's object operations for writers and listings (s3_objects.hpp). Query strings are written
// sorted and percent-encoded, as Signature Version 4 canonicalizes them: libcurl 7.88 signs the
// query as it is given.
#include "s3_objects.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <functional>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include <b2nd/error.hpp>

#include "../../detail/text.hpp"
#include "../publish.hpp"
#include "http_client.hpp"
#include "http_request.hpp"
#include <fcntl.h>
#include <unistd.h>

namespace b2nd::storage::detail {

namespace {

std::string query_value(const std::string& v) {
    return b2nd::detail::percent_encoded(v, "-_.~");
}

/// A multipart upload under way, aborted when it is dropped before completed(), and by
/// remove_registered_temporaries() (the tool's SIGINT) meanwhile. What aborts holds what it
/// needs: the signal's thread may run it while the upload's own objects go.
class Multipart {
public:
    Multipart(std::shared_ptr<HttpClient> client, Exchange abort)
        : done_(std::make_shared<std::atomic<bool>>(false)) {
        abort_ = [client = std::move(client), abort = std::move(abort), done = done_]() mutable {
            if (!done->exchange(true)) {
                try {
                    client->exchange(abort);
                } catch (...) {
                    // An upload never completed is never seen; a store keeps its parts until
                    // its lifecycle rules remove them.
                }
            }
        };
        registration_.emplace(abort_);
    }
    ~Multipart() {
        registration_.reset();
        if (!completed_) {
            abort_();
        }
    }
    Multipart(const Multipart&) = delete;
    Multipart& operator=(const Multipart&) = delete;
    /// The upload is the caller's to complete from now on: false when it was abandoned
    /// (aborted) meanwhile, which then stays so.
    bool claim() noexcept { return !done_->exchange(true); }
    /// The completion failed: the upload is aborted when dropped.
    void release() noexcept { done_->store(false); }
    void completed() noexcept { completed_ = true; }

private:
    std::shared_ptr<std::atomic<bool>> done_;  // aborted, or claimed for completion
    std::function<void()> abort_;
    bool completed_ = false;
    std::optional<b2nd::detail::Abandon> registration_;
};

}  // namespace

RequestSigning s3_signing(const std::string& url, const S3Config& c) {
    RequestSigning sign;
    sign.own = true;
    sign.strong_etag = true;  // S3's ETag is the content's digest (of its parts, multipart)
    if (c.sign) {
        if (c.access_key_id.empty() || c.secret_access_key.empty()) {
            throw UsageError(
                "\"" + url +
                "\": no S3 credentials (set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, a "
                "profile in ~/.aws/credentials, or S3Options; AWS_NO_SIGN_REQUEST=YES reads a "
                "public bucket unsigned)");
        }
        sign.sigv4 = "aws:amz:" + c.region + ":s3";
        sign.key_id = c.access_key_id;
        sign.secret = c.secret_access_key;
        sign.session_token = c.session_token;
    }
    return sign;
}

S3Objects::S3Objects(const std::string& url, const S3Options& s3, const HttpOptions& http) {
    bucket_ = s3_bucket_key(url).first;
    const S3Config c = resolve_s3(s3);
    RequestSigning sign = s3_signing(url, c);
    const std::string any = s3_request_url("s3://" + bucket_ + "/x", c);
    base_ = any.substr(0, any.size() - 1);  // ".../BUCKET/" or "https://BUCKET.s3.../"
    HttpOptions h = http;
    h.netrc = false;
    client_ = std::make_shared<HttpClient>(h, std::move(sign));
}

S3Objects::~S3Objects() = default;

std::string S3Objects::url(const std::string& key) const {
    return "s3://" + bucket_ + "/" + key;
}

std::string S3Objects::request_url(const std::string& key, const std::string& query) const {
    return base_ + b2nd::detail::percent_encoded(key, "-_.~/") + (query.empty() ? "" : "?" + query);
}

void S3Objects::send(Exchange& x, const std::string& key, const std::string& query) const {
    x.url = request_url(key, query);
    x.name = url(key);
    client_->exchange(x);
}

void S3Objects::fail(const Exchange& x, const std::string& what, const std::string& key) const {
    const std::string why = "HTTP " + std::to_string(x.status) + server_error_text(x.answer);
    if (xml_element(x.answer, "Code").value_or("") == "NoSuchBucket") {
        // Whatever was asked (a listing before a write, a look at an object), the answer is
        // about the bucket.
        throw HttpError("\"" + url("") + "\": the bucket does not exist (" + why + ")",
                        static_cast<int>(x.status));
    }
    throw HttpError("\"" + url(key) + "\": " + what + ": " + why, static_cast<int>(x.status));
}

std::optional<std::uint64_t> S3Objects::size(const std::string& key) const {
    Exchange x;
    x.method = "HEAD";
    send(x, key, "");
    if (x.status == 404) {
        return std::nullopt;
    }
    if (x.status != 200) {
        fail(x, "cannot look at it", key);
    }
    return x.length;
}

std::string S3Objects::first_bytes(const std::string& key, std::size_t n) const {
    Exchange x;
    x.headers.push_back("Range: bytes=0-" + std::to_string(std::max<std::size_t>(n, 1) - 1));
    send(x, key, "");
    if (x.status == 416) {
        return {};  // an empty object
    }
    if (x.status != 200 && x.status != 206) {
        fail(x, "cannot read its first bytes", key);
    }
    return x.answer.substr(0, n);
}

std::vector<S3Listed> S3Objects::list(const std::string& prefix) const {
    std::vector<S3Listed> out;
    std::string token;
    std::set<std::string> tokens;  // every continuation token given: one seen twice loops
    std::size_t key_bytes = 0;
    const auto endless = [&](int page, const std::string& why) {
        return HttpError("\"" + url(prefix) + "\": the listing of its objects does not end (page " +
                             std::to_string(page + 1) + " " + why + ")",
                         0);
    };
    for (int page = 0;; ++page) {
        Exchange x;
        std::string q = token.empty() ? "" : "continuation-token=" + query_value(token) + "&";
        q += "list-type=2&prefix=" + query_value(prefix);
        send(x, "", q);
        if (x.status != 200) {
            fail(x, "cannot list the objects under \"" + prefix + "\"", "");
        }
        std::size_t at = 0;
        while (const auto contents = xml_element(x.answer, "Contents", at, &at)) {
            const auto key = xml_element(*contents, "Key");
            const auto size = xml_element(*contents, "Size");
            if (key) {
                key_bytes += key->size();
                out.push_back({*key, size ? std::strtoull(size->c_str(), nullptr, 10) : 0});
            }
        }
        if (out.size() > kMaxListedKeys || key_bytes > kMaxListedKeyBytes) {
            throw endless(page, "brings it past " + std::to_string(kMaxListedKeys) + " keys or " +
                                    std::to_string(kMaxListedKeyBytes >> 20) + " MiB of them");
        }
        const auto more = xml_element(x.answer, "IsTruncated");
        const auto next = xml_element(x.answer, "NextContinuationToken");
        if (!more || *more != "true") {
            break;
        }
        if (!next || next->empty() || !tokens.insert(*next).second) {
            // A server that says there is more but gives no new way to it: not listed whole.
            throw endless(page, "gives no new continuation token");
        }
        if (page + 1 >= kMaxListedPages) {
            throw endless(page, "is the last of " + std::to_string(kMaxListedPages) + " asked");
        }
        token = *next;
    }
    std::sort(out.begin(), out.end(),
              [](const S3Listed& a, const S3Listed& b) { return a.key < b.key; });
    return out;
}

void S3Objects::put(const std::string& key,
                    const std::uint8_t* data,
                    std::size_t n,
                    bool only_new) const {
    Exchange x;
    x.method = "PUT";
    x.body = data;
    x.body_size = n;
    if (only_new) {
        x.headers.push_back("If-None-Match: *");
    }
    send(x, key, "");
    if (x.status != 200) {
        fail(x, "cannot put it", key);
    }
}

void S3Objects::remove(const std::string& key) const {
    Exchange x;
    x.method = "DELETE";
    send(x, key, "");
    if (x.status != 204 && x.status != 200 && x.status != 404) {
        fail(x, "cannot remove it", key);
    }
}

void S3Objects::put_file(const std::string& key,
                         const std::string& path,
                         bool only_new,
                         std::uint64_t part_bytes,
                         int in_flight,
                         const std::function<void(std::uint64_t)>& sent) const {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        throw IoError("\"" + path + "\": cannot read it to upload it",
                      std::error_code(errno, std::generic_category()));
    }
    struct Closer {
        int fd;
        ~Closer() { ::close(fd); }
    } closer{fd};
    const off_t end = ::lseek(fd, 0, SEEK_END);
    if (end < 0) {
        throw IoError("\"" + path + "\": cannot read it to upload it",
                      std::error_code(errno, std::generic_category()));
    }
    const auto total = static_cast<std::uint64_t>(end);
    const auto read_at = [&](std::vector<std::uint8_t>& buf, std::uint64_t at, std::size_t n) {
        buf.resize(n);
        std::size_t got = 0;
        while (got < n) {
            const ssize_t r = ::pread(fd, buf.data() + got, n - got, static_cast<off_t>(at + got));
            if (r <= 0) {
                throw IoError("\"" + path + "\": cannot read it to upload it",
                              std::error_code(r == 0 ? EIO : errno, std::generic_category()));
            }
            got += static_cast<std::size_t>(r);
        }
    };
    // S3 takes at most 10,000 parts of at least 5 MiB (the last one may be smaller).
    part_bytes = std::max(part_bytes, (total + 9'999) / 10'000);
    part_bytes = std::max<std::uint64_t>(part_bytes, std::uint64_t{5} << 20);
    if (total <= part_bytes) {
        std::vector<std::uint8_t> all;
        read_at(all, 0, static_cast<std::size_t>(total));
        put(key, all.data(), all.size(), only_new);
        if (sent) {
            sent(all.size());
        }
        return;
    }

    Exchange start;
    start.method = "POST";
    send(start, key, "uploads=");
    const auto id = xml_element(start.answer, "UploadId");
    if (start.status != 200 || !id || id->empty()) {
        fail(start, "cannot start a multipart upload", key);
    }
    const std::string upload = "uploadId=" + query_value(*id);
    Exchange abort;
    abort.method = "DELETE";
    abort.url = request_url(key, upload);
    abort.name = url(key);
    Multipart guard(client_, std::move(abort));

    const std::uint64_t nparts = (total + part_bytes - 1) / part_bytes;
    std::vector<std::string> etags(nparts);
    std::atomic<std::uint64_t> next{0};
    std::atomic<bool> failed{false};
    std::mutex error_mutex;
    std::exception_ptr error;
    const auto work = [&] {
        std::vector<std::uint8_t> buf;  // one part, read as it is sent
        try {
            for (std::uint64_t p = next++; p < nparts && !failed; p = next++) {
                const std::uint64_t at = p * part_bytes;
                read_at(buf, at, static_cast<std::size_t>(std::min(part_bytes, total - at)));
                Exchange x;
                x.method = "PUT";
                x.body = buf.data();
                x.body_size = buf.size();
                send(x, key, "partNumber=" + std::to_string(p + 1) + "&" + upload);
                if (x.status != 200 || x.etag.empty()) {
                    fail(x, "cannot upload part " + std::to_string(p + 1), key);
                }
                etags[p] = x.etag;
                if (sent) {
                    sent(buf.size());
                }
            }
        } catch (...) {
            failed = true;
            std::lock_guard<std::mutex> lock(error_mutex);
            if (!error) {
                error = std::current_exception();
            }
        }
    };
    const int threads = static_cast<int>(
        std::min<std::uint64_t>(nparts, static_cast<std::uint64_t>(std::max(1, in_flight))));
    std::vector<std::thread> pool;
    for (int t = 1; t < threads; ++t) {
        pool.emplace_back(work);
    }
    work();
    for (std::thread& t : pool) {
        t.join();
    }
    if (error) {
        std::rethrow_exception(error);  // the guard aborts the upload
    }

    std::string xml = "<CompleteMultipartUpload>";
    for (std::uint64_t p = 0; p < nparts; ++p) {
        xml += "<Part><PartNumber>" + std::to_string(p + 1) + "</PartNumber><ETag>" + etags[p] +
               "</ETag></Part>";
    }
    xml += "</CompleteMultipartUpload>";
    Exchange done;
    done.method = "POST";
    done.body = reinterpret_cast<const std::uint8_t*>(xml.data());
    done.body_size = xml.size();
    done.headers.push_back("Content-Type: application/xml");
    if (only_new) {
        done.headers.push_back("If-None-Match: *");
    }
    if (!guard.claim()) {
        throw IoError("\"" + url(key) + "\": the upload was abandoned (interrupted)",
                      std::make_error_code(std::errc::operation_canceled));
    }
    try {
        send(done, key, upload);
    } catch (...) {
        guard.release();
        throw;
    }
    // S3 may answer 200 and then report a failure in the body.
    if (done.status != 200 || done.answer.find("<Error>") != std::string::npos) {
        guard.release();
        fail(done, "cannot complete the multipart upload", key);
    }
    guard.completed();
}

}  // namespace b2nd::storage::detail
