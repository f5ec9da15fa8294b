// Interop, S3: what we upload to an S3 store (s3rver on 127.0.0.1 behind the signature-checking
// proxy, started here) is downloaded by s3cmd and opened by c-blosc2 with the values we wrote: a
// contiguous frame put in a multipart upload, and a sparse frame put as a prefix of chunk objects
// and their index.
#include <b2nd/storage/s3.hpp>

#include "blosc2_support.hpp"
#include "support/s3_server.hpp"

using namespace b2nd::test::interop;

namespace {

std::unique_ptr<b2nd::test::S3Store> s3_store(std::string& why) {
    return b2nd::test::S3Store::start(why);
}

}  // namespace

TEST_CASE("interop: arrays we upload to S3 open in c-blosc2 once downloaded", "[interop][s3]") {
    B2ND_HTTP_FIXTURE(s3, s3_store);
    ensure_init();
    b2nd::test::TempDir tmp;
    // ~10 MiB of poorly compressible doubles: two parts of 8 MiB.
    std::vector<double> v(1'300'000);
    b2nd::test::SplitMix rng(11);
    for (double& x : v) {
        x = static_cast<double>(rng.next() >> 11);
    }
    b2nd::CreateOptions co;
    co.compression.codec = b2nd::codec::Codec::lz4;
    co.compression.clevel = 1;
    co.s3 = s3.options();
    const long parts_before = s3.parts_forwarded();
    const auto a = b2nd::NDArray<double>::create_from(s3.url("x/big.b2nd"), {1300, 1000}, v, co);
    CHECK(s3.parts_forwarded() - parts_before == 2);
    REQUIRE(s3.get("x/big.b2nd", tmp / "big.b2nd"));
    const auto values = read_with_blosc2(tmp / "big.b2nd", a.any());
    REQUIRE(values.size() == v.size() * sizeof(double));
    CHECK(std::memcmp(values.data(), v.data(), values.size()) == 0);

    // A sparse frame: its chunk objects and chunks.b2frame, downloaded as the directory they are.
    b2nd::CopyOptions sparse;
    sparse.sparse = true;
    sparse.s3 = s3.options();
    sparse.chunk_shape = {200, 1000};
    sparse.block_shape = {50, 1000};
    const b2nd::AnyArray sp = b2nd::copy(a.any(), s3.url("x/sp.b2frame"), sparse);
    REQUIRE(s3.get_tree("x/sp.b2frame", tmp / "sp.b2frame"));
    const auto sparse_values = read_with_blosc2(tmp / "sp.b2frame", sp);
    REQUIRE(sparse_values.size() == values.size());
    CHECK(std::memcmp(sparse_values.data(), v.data(), values.size()) == 0);
}
