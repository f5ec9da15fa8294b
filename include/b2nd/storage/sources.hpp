// Drivers: where a path or URL leads. One table of schemes (src/storage/sources/open_source.cpp)
// turns what a user names into a byte source; nothing else in the library spells a scheme.
//
//   auto local = storage::open_source("run7/t.b2nd");                     // a mapped file
//   auto remote = storage::open_source("https://data.example.org/t.b2nd"); // range requests
//
// Drivers today: local files (a path, no scheme), HTTP (http://, https://; http.hpp) and S3
// (s3://; s3.hpp). What a driver answers: bytes by range (ByteSource), files beside one
// (sibling), a fresh look at the same file (reopen), batches of ranges over several files
// (batch_key); S3 also lists what is under a prefix (list_under) and takes what writers publish.
//
// Advanced (b2nd::storage, frames and files). Programs that read arrays need only
// <b2nd/b2nd.hpp>: AnyArray::open, Store::open and the tool take any of these.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <b2nd/storage/byte_source.hpp>

namespace b2nd::storage {

struct OpenOptions;

/// Whether `path` is a URL with the scheme of a remote driver (http://, https://, any case)
/// rather than a local path.
bool is_url(const std::string& path);

/// The remote driver's name for a URL ("HTTP"), or "" for a local path: how messages say
/// what a URL would need ("a store directory cannot be listed over HTTP").
std::string driver_name(const std::string& path);

/// `url` without user information or query string: how messages name it.
std::string redacted_url(const std::string& url);

/// The file a path or URL names, as a byte source: a local file is mapped (read-only), a URL is
/// opened by its driver (over HTTP: one request, for its size, identity and first
/// OpenOptions::http.head_bytes).
/// \throws IoError (a RemoteError for URLs) when it cannot be had; UsageError for an unknown
///         scheme; UnsupportedError when this build lacks the driver (libcurl)
std::shared_ptr<const ByteSource> open_source(const std::string& path_or_url,
                                              const OpenOptions& options);

/// The names of the files under a URL taken as a directory (the objects under the prefix
/// URL/), relative to it, '/'-separated, in order: for drivers that list (S3's ListObjectsV2).
/// \throws UsageError naming the driver when it cannot list (HTTP has no listing); the
///         driver's RemoteError when the listing fails
std::vector<std::string> list_under(const std::string& url, const OpenOptions& options);

}  // namespace b2nd::storage
