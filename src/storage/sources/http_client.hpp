// Internal: the one gate to libcurl (http_client.cpp). Everything else fetches through
// HttpClient::fetch: batches of byte ranges of one or more remote files, merged into as few
// requests as the merge gap allows, several in flight, every answer checked against the file's
// identity, transient failures retried with backoff, the rest an HttpError naming the URL (no
// credentials), the range, the status and what was expected.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <b2nd/storage/byte_source.hpp>
#include <b2nd/storage/http.hpp>

namespace b2nd::storage::detail {

/// What identifies one version of a remote file: learned from the first answer, then required
/// of every later one.
struct RemoteIdentity {
    bool known = false;
    std::uint64_t size = 0;
    std::string etag;           // empty when the server sends none
    std::string last_modified;  // ditto
    /// "size:etag:last_modified", for caches.
    std::string stamp() const;
};

/// A range of a file to fetch into `into`. `may_end`: the file may end inside the range (a
/// chunk file whose length is not known yet); `got` then says how many bytes there were.
/// `rider`: a few bytes that go within another request of the file where there is one (a
/// probe of its version costs no request of its own).
struct HttpPiece {
    std::uint64_t offset = 0;
    std::uint64_t n = 0;
    std::uint8_t* into = nullptr;
    bool may_end = false;
    std::uint64_t got = 0;
    bool rider = false;
};

/// The pieces wanted of one file.
struct FileRanges {
    std::string url;
    std::string name;  // how messages name the file (empty: the URL without credentials)
    RemoteIdentity* id = nullptr;  // learned by the first answer when !id->known
    std::vector<HttpPiece> pieces;
};

/// How requests are authenticated by a driver that does not use the HTTP ones (netrc, a URL's
/// user, $B2ND_HTTP_BEARER): S3's Signature Version 4, or none at all (public buckets).
struct RequestSigning {
    bool own = false;    // the driver's own scheme: netrc and bearer tokens are never sent
    std::string sigv4;   // libcurl's CURLOPT_AWS_SIGV4 ("aws:amz:REGION:s3"); empty: unsigned
    std::string key_id;  // with sigv4
    std::string secret;  // with sigv4; never printed
    std::string session_token;  // x-amz-security-token, when set
    bool strong_etag = false;   // the server's ETag changes with any change of the content
};

/// One request of an object store's API (S3: HEAD, PUT, POST, DELETE, a listing): a body sent
/// as given, the answer's status, ETag and body kept for the caller to judge.
struct Exchange {
    std::string method = "GET";
    std::string url;
    std::string name;                    // how messages name the object
    std::vector<std::string> headers;    // more "Name: value" lines
    const std::uint8_t* body = nullptr;  // sent as is (PUT, POST); not owned
    std::size_t body_size = 0;
    // The answer.
    long status = 0;
    std::string etag;          // its ETag header, as sent
    std::string answer;        // its body (at most 1 MiB kept: S3 answers in small XML documents)
    std::uint64_t length = 0;  // its Content-Length (a HEAD's: the object's size)
};

class HttpClient {
public:
    explicit HttpClient(const HttpOptions& options, RequestSigning signing = {});
    ~HttpClient();
    HttpClient(const HttpClient&) = delete;
    HttpClient& operator=(const HttpClient&) = delete;

    /// Fetches every piece of every file; returns when all are in their buffers. Safe from
    /// several threads at once (each batch runs its own requests; connections are kept alive
    /// between batches).
    /// \throws HttpError (remote_changed() when an answer names another version of a file)
    void fetch(std::vector<FileRanges>& files) const;
    /// Sends one request and waits for its answer, whatever its status. A request that has no
    /// answer (refused or dropped connections, stalls), or a 5xx or 429 one, is sent again as
    /// fetch() retries; the last answer is returned. Every request sent must be idempotent.
    /// \throws HttpError when no answer came within HttpOptions::timeout_ms
    void exchange(Exchange& x) const;
    TransferStats stats() const;
    const HttpOptions& options() const noexcept;
    /// Whether the server's ETags change with any change of the content (RequestSigning).
    bool strong_etag() const noexcept;

    struct Pool;  // the connections (http_client.cpp)

private:
    std::unique_ptr<Pool> pool_;
};

}  // namespace b2nd::storage::detail
