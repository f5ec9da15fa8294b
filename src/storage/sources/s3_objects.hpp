// Internal: the objects of one S3 bucket, for what writes and lists (reads go through
// s3_source): sizes, listings, single and multipart uploads, removals. Signed requests through
// the HTTP gate (HttpClient::exchange); every failure an HttpError naming the s3:// URL, the
// operation, the status and S3's own code and message, never a credential.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <b2nd/storage/http.hpp>
#include <b2nd/storage/s3.hpp>

namespace b2nd::storage::detail {

class HttpClient;
struct Exchange;
struct RequestSigning;

/// How requests for `url` are signed under `c` (Signature Version 4 with its credentials, or
/// unsigned), with S3's strong ETags. \throws UsageError when signed requests have no credentials
RequestSigning s3_signing(const std::string& url, const S3Config& c);

/// An object of a listing: its key and size.
/// Bounds of one listing (S3Objects::list): pages asked, keys and their bytes kept. A listing
/// past them is refused (a server whose listing never ends would grow memory without bound);
/// python-blosc2's stores hold far fewer files.
inline constexpr int kMaxListedPages = 20'000;
inline constexpr std::size_t kMaxListedKeys = 5'000'000;
inline constexpr std::size_t kMaxListedKeyBytes = std::size_t{512} << 20;

struct S3Listed {
    std::string key;
    std::uint64_t size = 0;
};

class S3Objects {
public:
    /// The bucket of `url` (s3://BUCKET/...), reached as `s3` and `http` say.
    /// \throws UsageError for a malformed URL or signed requests without credentials
    S3Objects(const std::string& url, const S3Options& s3, const HttpOptions& http);
    ~S3Objects();
    S3Objects(const S3Objects&) = delete;
    S3Objects& operator=(const S3Objects&) = delete;

    const std::string& bucket() const noexcept { return bucket_; }
    /// s3://BUCKET/KEY, for messages.
    std::string url(const std::string& key) const;

    /// The size of `key`, or nullopt when there is no such object.
    std::optional<std::uint64_t> size(const std::string& key) const;
    /// The first `n` bytes of `key` (fewer when it is shorter).
    std::string first_bytes(const std::string& key, std::size_t n) const;
    /// The objects whose keys start with `prefix`, in key order (every page of the listing).
    std::vector<S3Listed> list(const std::string& prefix) const;
    /// Puts `n` bytes as `key`, one request. `only_new`: refused (412) when the key exists.
    void put(const std::string& key, const std::uint8_t* data, std::size_t n, bool only_new) const;
    /// Puts the local file at `path` as `key`: one request below `part_bytes`, else a multipart
    /// upload of parts of `part_bytes` (more when the file needs more than 10,000 parts), up
    /// to `in_flight` at once, read as they are sent: memory is in_flight parts. The object
    /// appears whole when the upload completes; a failure, or remove_registered_temporaries()
    /// meanwhile (SIGINT), aborts it, and nothing is seen under `key`.
    /// `sent`, when given, is told the bytes of each part (or the whole object) once it is up.
    void put_file(const std::string& key,
                  const std::string& path,
                  bool only_new,
                  std::uint64_t part_bytes = std::uint64_t{8} << 20,
                  int in_flight = 3,
                  const std::function<void(std::uint64_t)>& sent = {}) const;
    /// Removes `key` (nothing when there is none).
    void remove(const std::string& key) const;

private:
    /// The request URL of `key`, with `query` (sorted and encoded).
    std::string request_url(const std::string& key, const std::string& query) const;
    /// Sends `x` to `key` (with `query`, sorted and encoded) and returns its answer.
    void send(Exchange& x, const std::string& key, const std::string& query) const;
    /// An HttpError for an answer that failed `what` on `key`.
    [[noreturn]] void fail(const Exchange& x,
                           const std::string& what,
                           const std::string& key) const;

    std::string bucket_;
    std::string base_;  // the request URL of the bucket, without a trailing '/'
    std::shared_ptr<HttpClient> client_;
};

}  // namespace b2nd::storage::detail
