// Blosc 1.x chunks written (what Zarr's blosc codec and hdf5-blosc read) decode to their input
// with our decoder, for every codec Blosc 1.x has, each shuffle, and sizes that leave partial
// blocks; data that does not compress is stored whole. LZF streams (h5py's filter) decode,
// and corrupt ones are refused.
#include <cstring>

#include <catch2/catch.hpp>

#include <b2nd/codec/chunk_decoder.hpp>
#include <b2nd/format/chunk_header.hpp>

#include "../../support/files.hpp"
#include "codec/blosc1.hpp"
#include "codec/compressors.hpp"

using b2nd::codec::Codec;

TEST_CASE("blosc1: chunks decode to their input for every codec, shuffle and size",
          "[codec][blosc1]") {
    b2nd::test::SplitMix rng(1);
    for (const Codec c : {Codec::blosclz, Codec::lz4, Codec::lz4hc, Codec::zlib, Codec::zstd}) {
        for (const int shuffle : {0, 1, 2}) {
            for (const std::size_t n : {std::size_t{0}, std::size_t{8}, std::size_t{1000},
                                        std::size_t{70000}, std::size_t{600008}}) {
                INFO(b2nd::codec::codec_name(c) << " shuffle " << shuffle << " n " << n);
                std::vector<std::uint8_t> src(n);
                for (std::size_t i = 0; i < n; ++i) {  // compressible, not trivial
                    src[i] = static_cast<std::uint8_t>((i / 8) % 7 + (rng.next() % 4 == 0));
                }
                const auto chunk =
                    b2nd::codec::detail::encode_blosc1_chunk(src.data(), n, c, 5, shuffle, 8);
                REQUIRE(chunk.size() >= 16);
                CHECK(chunk[0] == 2);  // Blosc 1.x's format version
                CHECK(b2nd::codec::decode_chunk(chunk) == src);
            }
        }
    }
}

TEST_CASE("blosc1: data that does not compress is stored whole", "[codec][blosc1]") {
    b2nd::test::SplitMix rng(2);
    std::vector<std::uint8_t> src(5000);
    for (auto& b : src) {
        b = static_cast<std::uint8_t>(rng.next());
    }
    const auto chunk =
        b2nd::codec::detail::encode_blosc1_chunk(src.data(), src.size(), Codec::lz4, 9, 1, 4);
    CHECK((chunk[2] & b2nd::format::chunk_flags::kMemcpyed) != 0);
    CHECK(chunk.size() == src.size() + 16);
    CHECK(b2nd::codec::decode_chunk(chunk) == src);
    CHECK_THROWS(
        b2nd::codec::detail::encode_blosc1_chunk(src.data(), 10, Codec::zfp_rate, 5, 0, 4));
}

TEST_CASE("lzf: streams decode; corrupt ones are refused", "[codec][lzf]") {
    // "abcabcabcabc": a literal run of 3, then a back reference of 9 bytes at distance 3.
    const std::uint8_t stream[] = {0x02, 'a', 'b', 'c', 0xe0, 0x00, 0x02};
    std::uint8_t out[32] = {};
    std::size_t got = 0;
    REQUIRE(b2nd::codec::detail::lzf_decompress(stream, sizeof stream, out, sizeof out, got));
    CHECK(std::string(reinterpret_cast<char*>(out), got) == "abcabcabcabc");
    // A reference before the start, a run past the end, a stream cut short, no room.
    const std::uint8_t back[] = {0x00, 'a', 0x20, 0x05};
    CHECK_FALSE(b2nd::codec::detail::lzf_decompress(back, sizeof back, out, sizeof out, got));
    const std::uint8_t run[] = {0x05, 'a', 'b'};
    CHECK_FALSE(b2nd::codec::detail::lzf_decompress(run, sizeof run, out, sizeof out, got));
    const std::uint8_t cut[] = {0x02, 'a', 'b', 'c', 0xe0};
    CHECK_FALSE(b2nd::codec::detail::lzf_decompress(cut, sizeof cut, out, sizeof out, got));
    CHECK_FALSE(b2nd::codec::detail::lzf_decompress(stream, sizeof stream, out, 6, got));
}
