// Arrays over HTTP: a byte source whose bytes are fetched by range requests (libcurl).
//
//   auto a = b2nd::AnyArray::open("https://data.example.org/run7/t.b2nd");   // 2 requests
//   auto day = a.read(b2nd::Box{{7, 0, 0}, {1, 720, 1440}});  // only the touched blocks' bytes
//
// AnyArray::open, NDArray, Store::open and the b2nd tool take http:// and https:// URLs
// directly; this header is for tuning (HttpOptions, through b2nd::OpenOptions::http) and for
// tools that work on frames. docs/HTTP.md says what is fetched when, how failures are handled
// and how the persistent cache works.
//
// Credentials: a URL's user:password, a netrc (~/.netrc, or the file $NETRC names), or a bearer
// token in $B2ND_HTTP_BEARER. They are never written to any file and never appear in messages
// (URLs in messages lose their user information and their query string).
//
// Advanced (b2nd::storage, frames and files). Programs that read arrays need only
// <b2nd/b2nd.hpp>.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <b2nd/storage/byte_source.hpp>
#include <b2nd/storage/sources.hpp>

namespace b2nd::storage {

/// How remote files are fetched.
struct HttpOptions {
    /// The whole of one request, its retries and their waits included: a request that has no
    /// complete answer by then fails for good (HttpError). A server that never answers costs
    /// at most this (the tool's --timeout SECONDS).
    int timeout_ms = 60'000;
    int connect_timeout_ms = 10'000;  ///< to open a connection (one attempt)
    /// An attempt that receives nothing for this long fails (and is retried within timeout_ms);
    /// seconds are the granularity below 1 s of stall.
    int stall_timeout_ms = 15'000;
    int retries = 4;        ///< further attempts after a transient failure, within timeout_ms
    int backoff_ms = 100;   ///< wait before the first retry, doubled for each next one
    int max_in_flight = 8;  ///< requests in flight at once, per batch
    /// Ranges of one file closer than this are fetched by one request (the bytes between them
    /// are fetched and dropped: cheaper than a round trip on any network).
    std::uint64_t merge_gap = 4096;
    /// Ranges of one file that are further apart (blocks of several chunks) go out several to a
    /// request (`Range: bytes=a-b,c-d,...`, answered as multipart/byteranges), up to this many,
    /// spread over max_in_flight requests: a read of 1000 scattered blocks costs a few round
    /// trips, not 1000 / max_in_flight. 1: one range per request. Servers that answer such a
    /// request with fewer or merged ranges, or the whole file, are read right too.
    int max_ranges = 64;
    /// The first request fetches this much of the file's start (a frame header with its
    /// metalayers fits), the second its end from the offsets index on: open costs 2 requests.
    std::uint64_t head_bytes = 64 * 1024;
    bool netrc = true;  ///< use ~/.netrc (or $NETRC) for credentials
    /// https: the certificates (PEM) to verify servers with; empty: the system's. Servers are
    /// always verified.
    std::string ca_file;
    /// Fetch the blocks a read touches (true), or whole chunks (false: one request per chunk,
    /// as a reader through c-blosc2's I/O hook would; for reads that take most of each chunk).
    bool block_reads = true;
    /// Compressed bytes of fetched chunks (and blocks) kept in memory per frame; the decoded
    /// blocks' cache (OpenOptions::cache_bytes) serves repeats above it.
    std::uint64_t memory_bytes = std::uint64_t{256} << 20;
};

/// Whether this build reads URLs (it was built with libcurl).
bool http_available() noexcept;

/// A remote file as a byte source: one request to learn its size and identity (and fetch its
/// first head_bytes), then ranges on demand, cached in memory as fetched. Answers whose
/// identity (ETag, Last-Modified, size) differs from the first one's are refused with
/// HttpError::remote_changed().
/// \throws HttpError when the file cannot be had; UnsupportedError in a build without libcurl
std::shared_ptr<const ByteSource> http_source(const std::string& url,
                                              const HttpOptions& options = {});

}  // namespace b2nd::storage
