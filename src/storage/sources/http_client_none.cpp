// The libcurl gate in a build without libcurl (B2ND_WITH_HTTP=OFF, or libcurl4-openssl-dev
// missing): URLs are refused with the reason.
#include <b2nd/error.hpp>

#include "http_client.hpp"

namespace b2nd::storage::detail {

struct HttpClient::Pool {};

HttpClient::HttpClient(const HttpOptions& /*options*/, RequestSigning /*signing*/) {
    throw UnsupportedError(
        "reading arrays over HTTP or S3: this build of b2nd has no libcurl (install "
        "libcurl4-openssl-dev and build again)");
}
HttpClient::~HttpClient() = default;
void HttpClient::fetch(std::vector<FileRanges>& /*files*/) const {}
void HttpClient::exchange(Exchange& /*x*/) const {}
TransferStats HttpClient::stats() const {
    return {};
}
bool HttpClient::strong_etag() const noexcept {
    return false;
}
const HttpOptions& HttpClient::options() const noexcept {
    static const HttpOptions none;
    return none;
}

}  // namespace b2nd::storage::detail
