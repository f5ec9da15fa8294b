// Objects of S3-compatible stores as byte sources (s3.hpp): the HTTP driver's client and source,
// with S3's addressing, Signature Version 4 and one byte range per request (S3 answers no
// multipart/byteranges).
#include <algorithm>

#include <b2nd/error.hpp>
#include <b2nd/storage/s3.hpp>

#include "http_source.hpp"
#include "s3_objects.hpp"

namespace b2nd::storage {

std::shared_ptr<const ByteSource> s3_source(const std::string& url,
                                            const S3Options& s3,
                                            const HttpOptions& http) {
    // '?' and '#' are bytes of the key (as the AWS CLI reads s3:// URLs), not a query.
    const std::string& name = url;
    (void)s3_bucket_key(name);  // a malformed URL is refused before anything else
    const S3Config c = resolve_s3(s3);
    detail::RequestSigning sign = detail::s3_signing(name, c);
    HttpOptions h = http;
    h.max_ranges = 1;
    h.merge_gap = std::max(h.merge_gap, s3.merge_gap);
    h.netrc = false;
    auto client = std::make_shared<const detail::HttpClient>(h, std::move(sign));
    return std::make_shared<detail::HttpSource>(std::move(client), s3_request_url(name, c), name);
}

}  // namespace b2nd::storage
