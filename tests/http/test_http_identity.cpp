// The version of a remote array is its content, not only the server's validators: a file
// rewritten in place at the same size within the same second keeps nginx's ETag and
// Last-Modified, and must still never be read as a mix of two versions, by one handle or
// through the persistent cache. (nginx on 127.0.0.1; the rewrite restores the old mtime, so
// the validators stay exactly the same.)
#include <filesystem>

#include <catch2/catch.hpp>

#include <b2nd/b2nd.hpp>
#include <b2nd/storage/frame.hpp>
#include <b2nd/storage/http.hpp>

#include "support/files.hpp"
#include "support/http_servers.hpp"
#include "support/served_array.hpp"
#include "support/temp_dir.hpp"

namespace {

std::unique_ptr<b2nd::test::ServedArray> serve(std::string& why) {
    return b2nd::test::serve_array(why, true);  // stored: every version has one size
}

/// The server's validators: the stamp up to its content digests.
std::string validators(const std::string& stamp) {
    return stamp.substr(0, stamp.rfind(':'));
}

const b2nd::Box kA{{2, 3, 4}, {5, 6, 7}, {1, 1, 1}};        // blocks of chunk 0
const b2nd::Box kBoth{{2, 3, 4}, {13, 27, 26}, {1, 1, 1}};  // those and blocks of other chunks

}  // namespace

TEST_CASE("http identity: a rewrite that keeps the validators is read whole, never mixed",
          "[http]") {
    B2ND_HTTP_FIXTURE(s, serve);
    b2nd::OpenOptions o;
    o.http.head_bytes = 1024;
    const auto a = b2nd::AnyArray::open(s.url(), o);
    CHECK(a.read(kA) == s.local().read(kA));  // chunk 0's blocks of kA are now at hand
    const std::string first = a.frame().stamp();
    s.rewrite_keeping_validators(500);
    // kBoth needs blocks not fetched yet: the batch that fetches them sees the frame's checksum
    // stamp changed, and the read starts again on the new version, from its header.
    CHECK(a.read(kBoth) == s.local().read(kBoth));
    CHECK(a.read(kA) == s.local().read(kA));  // what was at hand of the old version went
    CHECK(validators(a.frame().stamp()) == validators(first));  // nginx saw nothing
    CHECK(a.frame().stamp() != first);                          // the content digests did
}

TEST_CASE("http identity: refresh() sees a rewrite that keeps the validators", "[http]") {
    B2ND_HTTP_FIXTURE(s, serve);
    auto a = b2nd::AnyArray::open(s.url());
    const auto old_values = a.read();
    CHECK_FALSE(a.refresh());  // the same file: nothing to read again
    s.rewrite_keeping_validators(500);
    CHECK(a.refresh());
    CHECK(a.read() == s.local().read());
    CHECK(a.read() != old_values);
}

TEST_CASE("http identity: the persistent cache forgets a rewrite that keeps the validators",
          "[http]") {
    B2ND_HTTP_FIXTURE(s, serve);
    {
        const auto a = b2nd::AnyArray::open(s.url(), s.cached());
        CHECK(a.read() == s.local().read());  // all of it cached
    }
    s.rewrite_keeping_validators(500);
    const auto b = b2nd::AnyArray::open(s.url(), s.cached());
    CHECK(b.read(kA) == s.local().read(kA));  // not the old values the cache held
    CHECK(b.read() == s.local().read());
}
