// Interop, chunks: what we encode decodes in c-blosc2 to the same bytes and the other way round
// (dictionaries, VL blocks, special chunks included), and c-blosc2's getitem reads ranges of ours.
#include "blosc2_support.hpp"

using namespace b2nd::test::interop;

TEST_CASE("interop: chunks we encode decode in c-blosc2 to the same bytes", "[interop]") {
    for (const Pipeline& pl : kPipelines) {
        for (int typesize : {1, 2, 4, 7, 8, 16}) {
            if (pl.lossy && typesize != 4 && typesize != 8) {
                continue;
            }
            const std::size_t sizes[] = {static_cast<std::size_t>(typesize) * 1000 + 3,
                                         static_cast<std::size_t>(typesize) * 40, 0};
            for (std::size_t nbytes : sizes) {
                const auto in = b2nd::test::smooth_bytes(nbytes, typesize, nbytes);
                for (Codec c : kCompressors) {
                    for (int clevel : {0, 1, 5, 9}) {
                        for (SplitMode m :
                             {SplitMode::always, SplitMode::never, SplitMode::automatic}) {
                            EncodeParams p;
                            p.codec = c;
                            p.clevel = clevel;
                            p.filters = pl.filters;
                            p.typesize = typesize;
                            p.blocksize = 256 * typesize;
                            p.splitmode = m;
                            INFO(codec_name(c)
                                 << " " << clevel << " " << pl.name << " ts " << typesize << " "
                                 << split_mode_name(m) << " n " << nbytes);
                            const auto chunk = encode_chunk(in, p);
                            auto theirs = blosc2_decode(chunk, 1 + (clevel % 2));
                            auto ours = decode_chunk(chunk);
                            if (pl.filters[5].id == Filter::bytedelta &&
                                !kBlosc2KeepsBytedeltaTail) {
                                // c-blosc2 before 3.3.2 drops bytedelta's trailing partial element
                                const std::size_t whole = nbytes /
                                                          static_cast<std::size_t>(typesize) *
                                                          static_cast<std::size_t>(typesize);
                                theirs.resize(whole);
                                ours.resize(whole);
                            }
                            B2ND_REQUIRE_SAME_BYTES(theirs, ours);
                            if (!pl.lossy) {
                                REQUIRE(std::equal(theirs.begin(), theirs.end(), in.begin()));
                            }
                        }
                    }
                }
            }
        }
    }
}

TEST_CASE("interop: chunks c-blosc2 encodes decode here to the same bytes", "[interop]") {
    for (const Pipeline& pl : kPipelines) {
        for (int typesize : {1, 2, 4, 8, 16}) {
            if (pl.lossy && typesize != 4 && typesize != 8) {
                continue;
            }
            const auto in = b2nd::test::smooth_bytes(static_cast<std::size_t>(typesize) * 3000 + 5,
                                                     typesize, 3);
            for (Codec c : kCompressors) {
                for (int clevel : {0, 1, 5, 9}) {
                    for (std::int32_t blocksize : {0, 512 * typesize}) {
                        EncodeParams p;
                        p.codec = c;
                        p.clevel = clevel;
                        p.filters = pl.filters;
                        p.typesize = typesize;
                        p.blocksize = blocksize;
                        INFO(codec_name(c) << " " << clevel << " " << pl.name << " ts " << typesize
                                           << " blocksize " << blocksize);
                        const auto chunk = blosc2_encode(in, p);
                        const auto ours = decode_chunk(chunk, 2);
                        std::vector<std::uint8_t> theirs;
                        if (!try_blosc2_decode(chunk, theirs)) {
                            // c-blosc2 2.x rejects its own special chunks whose size is not a
                            // multiple of the typesize; 3.x and we accept them.
                            REQUIRE(BLOSC2_VERSION_MAJOR < 3);
                            REQUIRE(ChunkDecoder(chunk).special() != Special::none);
                            continue;
                        }
                        // The same bytes as c-blosc2 reads back; and the input itself, except
                        // for lossy pipelines and the bytes past the last whole element that
                        // c-blosc2's DELTA encoder leaves unwritten (CONFORMANCE.md E5).
                        const std::size_t whole = in.size() / static_cast<std::size_t>(typesize) *
                                                  static_cast<std::size_t>(typesize);
                        if (pl.filters[5].id == Filter::bytedelta && !kBlosc2KeepsBytedeltaTail) {
                            // c-blosc2 before 3.3.2 stores no trailing partial element
                            REQUIRE(std::equal(ours.begin(),
                                               ours.begin() + static_cast<std::ptrdiff_t>(whole),
                                               theirs.begin()));
                        } else {
                            B2ND_REQUIRE_SAME_BYTES(ours, theirs);
                        }
                        if (!pl.lossy) {
                            REQUIRE(std::equal(ours.begin(),
                                               ours.begin() + static_cast<std::ptrdiff_t>(whole),
                                               in.begin()));
                        }
                        // Our automatic block size and split choices match c-blosc2's.
                        ChunkDecoder dec(chunk);
                        if (!dec.memcpyed() && dec.special() == Special::none) {
                            CHECK(dec.blocksize() ==
                                  effective_blocksize(p, static_cast<std::int64_t>(in.size())));
                            CHECK(dec.header().split() == splits_streams(p, dec.blocksize()));
                        }
                    }
                }
            }
        }
    }
}

TEST_CASE("interop: c-blosc2 chunks with zstd and lz4 dictionaries decode here", "[interop]") {
    const auto in = b2nd::test::smooth_bytes(4 * 40000, 4, 11);
    std::vector<Codec> codecs = {Codec::zstd};
    if (BLOSC2_VERSION_MAJOR >= 3) {
        codecs.push_back(Codec::lz4);  // LZ4 dictionaries arrived in 3.x
        codecs.push_back(Codec::lz4hc);
    }
    for (Codec c : codecs) {
        EncodeParams p;
        p.codec = c;
        p.clevel = 5;
        p.typesize = 4;
        p.blocksize = 4096;
        INFO(codec_name(c));
        const auto chunk = blosc2_encode(in, p, true);
        ChunkDecoder dec(chunk);
        CHECK(dec.header().use_dict());
        B2ND_REQUIRE_SAME_BYTES(decode_chunk(chunk), in);
        std::vector<std::uint8_t> blk(static_cast<std::size_t>(dec.block_nbytes(7)));
        dec.decode_block(7, blk);
        CHECK(std::equal(blk.begin(), blk.end(), in.begin() + 7 * 4096));
    }
}

TEST_CASE("interop: c-blosc2 VL-block chunks decode here", "[interop]") {
#if BLOSC2_VERSION_MAJOR < 3
    B2ND_SKIP("VL-block chunks need c-blosc2 3.x");
#else
    ensure_init();
    const auto a = b2nd::test::smooth_bytes(1000, 1, 1);
    const auto b = b2nd::test::smooth_bytes(3333, 1, 2);
    const auto c = b2nd::test::smooth_bytes(17, 1, 3);
    const void* srcs[] = {a.data(), b.data(), c.data()};
    const std::int32_t sizes[] = {1000, 3333, 17};
    blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
    cp.compcode = BLOSC_LZ4;
    cp.typesize = 1;
    blosc2_context* ctx = blosc2_create_cctx(cp);
    std::vector<std::uint8_t> chunk(8000);
    const int n = blosc2_vlcompress_ctx(ctx, srcs, sizes, 3, chunk.data(),
                                        static_cast<std::int32_t>(chunk.size()));
    blosc2_free_ctx(ctx);
    REQUIRE(n > 0);
    chunk.resize(static_cast<std::size_t>(n));
    ChunkDecoder dec(chunk);
    REQUIRE(dec.header().vl_blocks());
    REQUIRE(dec.nblocks() == 3);
    CHECK(dec.block_nbytes(1) == 3333);
    auto all = a;
    all.insert(all.end(), b.begin(), b.end());
    all.insert(all.end(), c.begin(), c.end());
    B2ND_REQUIRE_SAME_BYTES(decode_chunk(chunk), all);
    std::vector<std::uint8_t> part(2000);
    dec.decode_range(900, part);
    CHECK(std::equal(part.begin(), part.end(), all.begin() + 900));
#endif
}

TEST_CASE("interop: VL-block chunks we encode decode in c-blosc2, block by block", "[interop]") {
#if BLOSC2_VERSION_MAJOR < 3
    B2ND_SKIP("VL-block chunks need c-blosc2 3.x");
#else
    ensure_init();
    const auto a = b2nd::test::smooth_bytes(1000, 1, 1);
    const auto b = b2nd::test::smooth_bytes(3333, 1, 2);
    const std::vector<std::uint8_t> c = {0x42};  // a block that does not compress
    for (const b2nd::Codec codec :
         {b2nd::Codec::lz4, b2nd::Codec::zstd, b2nd::Codec::blosclz, b2nd::Codec::zlib}) {
        INFO(b2nd::codec::codec_name(codec));
        b2nd::codec::CodecChoice k;
        k.codec = codec;
        k.clevel = 5;
        const auto chunk = b2nd::codec::encode_vlblocks_chunk(
            {{a.data(), a.size()}, {b.data(), b.size()}, {c.data(), c.size()}}, k);
        std::int32_t nblocks = 0;
        REQUIRE(blosc2_vlchunk_get_nblocks(chunk.data(), static_cast<std::int32_t>(chunk.size()),
                                           &nblocks) == 0);
        REQUIRE(nblocks == 3);
        blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS;
        blosc2_context* dctx = blosc2_create_dctx(dp);
        const std::vector<std::uint8_t>* want[] = {&a, &b, &c};
        for (std::int32_t i = 0; i < 3; ++i) {
            std::uint8_t* dest = nullptr;
            std::int32_t dsize = 0;
            const int n = blosc2_vldecompress_block_ctx(
                dctx, chunk.data(), static_cast<std::int32_t>(chunk.size()), i, &dest, &dsize);
            REQUIRE(n == static_cast<int>(want[i]->size()));
            CHECK(std::equal(want[i]->begin(), want[i]->end(), dest));
            std::free(dest);
        }
        blosc2_free_ctx(dctx);
    }
#endif
}

TEST_CASE("interop: special chunks agree both ways", "[interop]") {
    ensure_init();
    blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
    cp.typesize = 8;
    std::vector<std::uint8_t> buf(64);
    REQUIRE(blosc2_chunk_zeros(cp, 8000, buf.data(), 64) == 32);
    buf.resize(32);
    CHECK(decode_chunk(buf) == std::vector<std::uint8_t>(8000, 0));
    std::vector<std::uint8_t> nan(32);
    REQUIRE(blosc2_chunk_nans(cp, 800, nan.data(), 32) == 32);
    const auto nan_out = decode_chunk(nan);
    double d;
    std::memcpy(&d, nan_out.data() + 8 * 99, 8);
    CHECK(std::isnan(d));
    const double value = 2.5;
    std::vector<std::uint8_t> rep(40);
    REQUIRE(blosc2_chunk_repeatval(cp, 800, rep.data(), 40, &value) == 40);
    const auto rep_out = decode_chunk(rep);
    std::memcpy(&d, rep_out.data() + 8 * 50, 8);
    CHECK(d == 2.5);

    // And ours in c-blosc2.
    CHECK(blosc2_decode(make_zeros_chunk(4096, 4, 1024)) == std::vector<std::uint8_t>(4096, 0));
    const auto v = std::vector<std::uint8_t>{1, 2, 3, 4, 5, 6, 7, 8};
    CHECK(blosc2_decode(make_repeated_chunk(4096, v, 512)) ==
          decode_chunk(make_repeated_chunk(4096, v, 512)));
    const auto theirs_nan = blosc2_decode(make_nans_chunk(4096, 4, 1024));
    float f;
    std::memcpy(&f, theirs_nan.data() + 40, 4);
    CHECK(std::isnan(f));
}

TEST_CASE("interop: c-blosc2 getitem reads ranges of our chunks", "[interop]") {
    ensure_init();
    const auto in = b2nd::test::smooth_bytes(8 * 5000, 8, 4);
    EncodeParams p;
    p.typesize = 8;
    p.blocksize = 8 * 512;
    p.filters = make_pipeline({{Filter::shuffle, 0}});
    const auto chunk = encode_chunk(in, p);
    std::vector<std::uint8_t> out(8 * 700);
    const int n = blosc2_getitem(chunk.data(), static_cast<std::int32_t>(chunk.size()), 1234, 700,
                                 out.data(), static_cast<std::int32_t>(out.size()));
    REQUIRE(n == 8 * 700);
    CHECK(std::equal(out.begin(), out.end(), in.begin() + 8 * 1234));
}

// ---- frames ------------------------------------------------------------------------------
