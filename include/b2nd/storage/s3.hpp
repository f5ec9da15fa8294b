// Arrays and stores on S3-compatible object stores: `s3://BUCKET/KEY` wherever a path or an
// http(s) URL is taken (AnyArray::open, b2nd::open<T>, Store::open, the tool's read commands),
// and as the destination of what writes whole arrays and stores (create, create_from, copy,
// concatenate, stack; the tool's convert, import, concat, export, pack): built locally, then
// put as one object (a multipart upload above 8 MiB, seen only once complete) or, for a sparse
// frame or a .b2d, as a prefix of objects, indexes last. docs/remote.md says the rules.
//
//   auto a = b2nd::AnyArray::open("s3://climate/run7/t.b2nd");   // 2 requests, signed
//   b2nd::copy(a, "s3://climate/run7/t_lz4.b2nd", {...});         // one object
//
// Configuration follows the AWS CLI and SDKs, nothing of our own:
//  - credentials: AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN, else the
//    AWS_PROFILE (default "default") section of ~/.aws/credentials (AWS_SHARED_CREDENTIALS_FILE),
//    else that profile in ~/.aws/config (AWS_CONFIG_FILE);
//  - region: AWS_REGION, AWS_DEFAULT_REGION, the profile's `region` in the config file, else
//    us-east-1;
//  - endpoint: AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, the profile's `endpoint_url` in the config
//    file (path-style addressing: ENDPOINT/BUCKET/KEY), else AWS (virtual-hosted:
//    https://BUCKET.s3.REGION.amazonaws.com/KEY);
//  - a profile named (AWS_PROFILE, S3Options::profile) that neither file holds is an error
//    naming it, as with the AWS CLI;
//  - AWS_NO_SIGN_REQUEST=YES (or true): unsigned requests, for public buckets.
// S3Options (through OpenOptions::s3) sets the same in C++; what it sets wins over the
// environment. Requests are signed with Signature Version 4 (libcurl's). Secrets never appear
// in a message, a log or an exception.
//
// Advanced (b2nd::storage, frames and files). Programs that read arrays need only
// <b2nd/b2nd.hpp>.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <b2nd/storage/byte_source.hpp>
#include <b2nd/storage/http.hpp>

namespace b2nd::storage {

/// How s3:// URLs are reached. Empty fields come from the environment and the AWS files.
struct S3Options {
    std::string access_key_id;      ///< with secret_access_key: the credentials to sign with
    std::string secret_access_key;  ///< never printed
    std::string session_token;      ///< temporary credentials' token (x-amz-security-token)
    std::string profile;            ///< the section of the AWS files (default: AWS_PROFILE)
    std::string region;             ///< e.g. "eu-west-1"
    /// A custom endpoint ("http://127.0.0.1:9000", MinIO, Ceph, R2...): path-style addressing.
    std::string endpoint;
    /// Unsigned requests (public buckets); unset: AWS_NO_SIGN_REQUEST decides.
    std::optional<bool> no_sign;
    /// Read AWS_* variables and the AWS files for what is not set here (false: only these).
    bool use_environment = true;
    /// S3 answers one byte range per request: ranges of an object closer than this are fetched
    /// by one request (the bytes between them fetched and dropped), for a round trip costs
    /// more than this many bytes on any link to a store. HttpOptions::merge_gap, if larger,
    /// wins.
    std::uint64_t merge_gap = std::uint64_t{1} << 20;
};

/// An S3 configuration resolved from S3Options, the environment and the AWS files.
struct S3Config {
    std::string access_key_id;      ///< the key the requests are signed with
    std::string secret_access_key;  ///< never printed
    std::string session_token;      ///< temporary credentials' token, or empty
    std::string region;             ///< the region signatures name
    std::string endpoint;           ///< empty: AWS (virtual-hosted addressing)
    bool sign = true;               ///< false: unsigned requests
    /// Where the credentials came from ("options", "environment", "FILE [PROFILE]", or "none"),
    /// for messages: never the secret itself.
    std::string credentials_from;
};

/// Resolves `o` against the environment and the AWS files as the AWS CLI does.
/// \throws FormatError naming a credentials or config file that cannot be parsed
S3Config resolve_s3(const S3Options& o = {});

/// The bucket and key of `s3://BUCKET/KEY`. \throws UsageError naming the URL otherwise
std::pair<std::string, std::string> s3_bucket_key(const std::string& url);

/// The http(s) URL a request for `s3://BUCKET/KEY` goes to under `c`.
std::string s3_request_url(const std::string& url, const S3Config& c);

/// An object of an S3 store as a byte source (one signed request to open it, then ranges on
/// demand, as http_source). Its name is the s3:// URL.
/// \throws HttpError (403 for wrong credentials, 404 for no such object), UsageError for a
/// malformed URL or signed requests without credentials; UnsupportedError without libcurl
std::shared_ptr<const ByteSource> s3_source(const std::string& url,
                                            const S3Options& s3 = {},
                                            const HttpOptions& http = {});

}  // namespace b2nd::storage
