// Interop, frames and arrays: what we write opens in c-blosc2 (frame operations, b2nd arrays)
// with the same content.
#include "blosc2_support.hpp"

using namespace b2nd::test::interop;

namespace {

/// Opens `path` with c-blosc2 and checks it holds what our reader sees.
void check_frame_in_blosc2(const std::string& path) {
    ensure_init();
    const b2nd::storage::Frame ours = b2nd::storage::Frame::open(path);
    blosc2_schunk* sc = blosc2_schunk_open(path.c_str());
    REQUIRE(sc != nullptr);
    CHECK(sc->nchunks == ours.nchunks());
    CHECK(sc->nbytes == ours.nbytes());
    CHECK(sc->typesize == ours.header().typesize);
    for (std::int64_t i = 0; i < ours.nchunks(); ++i) {
        const auto want = ours.decode_chunk(i);
        std::vector<std::uint8_t> got(want.size() + 1);
        const int n = blosc2_schunk_decompress_chunk(sc, i, got.data(),
                                                     static_cast<std::int32_t>(got.size()));
        INFO("chunk " << i);
        REQUIRE(n == static_cast<int>(want.size()));
        got.resize(want.size());
        if (ours.chunk(i).special != Special::uninit) {
            CHECK(got == want);
        }
    }
    for (const auto& m : ours.metalayers()) {
        std::uint8_t* content = nullptr;
        std::int32_t len = 0;
        REQUIRE(blosc2_meta_get(sc, m.name.c_str(), &content, &len) >= 0);
        CHECK(std::vector<std::uint8_t>(content, content + len) == m.content);
        std::free(content);
    }
    for (const auto& name : ours.vlmeta_names()) {
        std::uint8_t* content = nullptr;
        std::int32_t len = 0;
        REQUIRE(blosc2_vlmeta_get(sc, name.c_str(), &content, &len) >= 0);
        CHECK(std::vector<std::uint8_t>(content, content + len) == *ours.vlmeta(name));
        std::free(content);
    }
    blosc2_schunk_free(sc);
}

}  // namespace

TEST_CASE("interop: frames we write open in c-blosc2, through every operation", "[interop]") {
    for (bool sparse : {false, true}) {
        INFO((sparse ? "sparse" : "contiguous"));
        b2nd::test::TempDir dir;
        const std::string path = dir / (sparse ? "f.b2frame" : "f.b2nd");
        b2nd::storage::FrameParams fp;
        fp.typesize = 4;
        fp.chunksize = 4 * 3000;
        fp.blocksize = 4 * 500;
        b2nd::storage::Frame f = b2nd::storage::Frame::create(
            path, fp, sparse, {{"b2nd", {0x90}, 0}, {"user", {1, 2, 3}, 0}});
        check_frame_in_blosc2(path);  // empty
        EncodeParams p;
        p.typesize = 4;
        p.blocksize = 4 * 500;
        std::vector<std::vector<std::uint8_t>> chunks;
        for (int k = 0; k < 6; ++k) {
            chunks.push_back(encode_chunk(
                b2nd::test::smooth_bytes(4 * 3000, 4, static_cast<std::uint64_t>(k)), p));
        }
        f.append_chunks({chunks[0], chunks[1], chunks[2]});
        f.append_chunk(make_zeros_chunk(4 * 3000, 4, 4 * 500));
        f.append_chunk(make_nans_chunk(4 * 3000, 4, 4 * 500));
        const auto v = std::vector<std::uint8_t>{1, 0, 0, 0};
        f.append_chunk(make_repeated_chunk(4 * 3000, v, 4 * 500));
        check_frame_in_blosc2(path);
        f.update_chunk(1, chunks[4]);
        f.insert_chunk(0, chunks[5]);
        f.delete_chunk(3);
        f.set_vlmeta("attrs", std::vector<std::uint8_t>{0x81, 0xa1, 0x61, 0x01});
        f.update_metalayer("user", std::vector<std::uint8_t>{7, 7, 7});
        f.append_chunk(encode_chunk(b2nd::test::smooth_bytes(400, 4, 9), p));  // a short last chunk
        check_frame_in_blosc2(path);
        f.compact();
        check_frame_in_blosc2(path);
    }
}

TEST_CASE("interop: arrays we write open in c-blosc2's b2nd with the same content", "[interop]") {
    b2nd::test::TempDir dir;
    b2nd::test::SplitMix rng(77);
    const char* dtypes[] = {"<f4", ">i4", "|u1", "<f8", "<c16", "|S3"};
    const b2nd::Codec codecs[] = {b2nd::Codec::zstd, b2nd::Codec::lz4, b2nd::Codec::blosclz,
                                  b2nd::Codec::zlib};
    const b2nd::Filter filters[] = {b2nd::Filter::shuffle, b2nd::Filter::bitshuffle,
                                    b2nd::Filter::none};
    for (int k = 0; k < 24; ++k) {
        const int ndim = 1 + k % 4;
        const b2nd::DType dt = b2nd::DType::parse(dtypes[k % 6]);
        b2nd::Shape shape, chunks, blocks;
        for (int d = 0; d < ndim; ++d) {
            shape.push_back(static_cast<std::int64_t>(5 + rng.below(ndim == 1 ? 3000 : 30)));
            chunks.push_back(
                static_cast<std::int64_t>(2 + rng.below(static_cast<std::uint64_t>(shape.back()))));
            blocks.push_back(static_cast<std::int64_t>(
                1 + rng.below(static_cast<std::uint64_t>(chunks.back()))));
        }
        b2nd::CreateOptions o;
        o.chunk_shape = chunks;
        o.block_shape = blocks;
        o.sparse = k % 2 == 1;
        o.compression.codec = codecs[k % 4];
        o.compression.clevel = static_cast<int>(rng.below(7));
        o.compression.filters = {{filters[k % 3], 0}};
        const std::string path =
            dir / ("a" + std::to_string(k) + (o.sparse ? ".b2frame" : ".b2nd"));
        INFO(path << " " << dt.str() << " " << b2nd::to_string(shape) << " chunks "
                  << b2nd::to_string(chunks) << " blocks " << b2nd::to_string(blocks));
        std::int64_t n = 1;
        for (std::int64_t v : shape) {
            n *= v;
        }
        std::vector<std::uint8_t> data(static_cast<std::size_t>(n * dt.itemsize()));
        for (std::size_t i = 0; i < data.size(); ++i) {
            data[i] = static_cast<std::uint8_t>(i % 7 == 0 ? rng.below(256) : i / 64);
        }
        b2nd::AnyArray a =
            b2nd::AnyArray::create_from(path, dt, shape, {data.data(), data.size()}, o);
        B2ND_REQUIRE_SAME_BYTES(read_with_blosc2(path, a), a.read());
        // Structural edits: the frame stays readable by c-blosc2 after each.
        b2nd::Shape grown = shape;
        grown[0] += 3;
        a.resize(grown);
        B2ND_REQUIRE_SAME_BYTES(read_with_blosc2(path, a), a.read());
        std::vector<std::uint8_t> slab(static_cast<std::size_t>(a.nbytes() / a.shape()[0] * 2),
                                       0x5a);
        a.insert(0, 1, {slab.data(), slab.size()});
        B2ND_REQUIRE_SAME_BYTES(read_with_blosc2(path, a), a.read());
        a.remove(0, 0, 2);
        B2ND_REQUIRE_SAME_BYTES(read_with_blosc2(path, a), a.read());
        a.compact();
        B2ND_REQUIRE_SAME_BYTES(read_with_blosc2(path, a), a.read());
    }
}

TEST_CASE(
    "interop: what b2nd convert, copy, concatenate, stack and to_cframe write opens in "
    "c-blosc2",
    "[interop]") {
    if (b2nd::test::corpus_dir().empty()) {
        B2ND_SKIP("corpus not found at " B2ND_CORPUS_DIR);
    }
    const std::string root = b2nd::test::corpus_dir();
    b2nd::test::TempDir dir;
    int n = 0;
    for (const char* name : {"medium_f4_3d.b2nd", "medium_f8_2d_sframe.b2frame", "dtype_bei4.b2nd",
                             "geom_nonmultiple_3d.b2nd", "meta_user_and_vl_f4.b2nd",
                             "special_mixed_zero_chunks_f4_sframe.b2frame"}) {
        const std::string file = root + "/" + name;
        if (!std::filesystem::exists(file)) {
            continue;
        }
        INFO(file);
        ++n;
        const b2nd::AnyArray src = b2nd::AnyArray::open(file);
        const std::vector<std::uint8_t> want = src.read();
        // The tool, as a user runs it: re-encoded to a sparse frame, and as stored.
        const std::string conv = dir / "conv.b2frame";
        const std::string cmd = std::string("'") + B2ND_CLI_PATH + "' convert '" + file + "' '" +
                                conv + "' --codec lz4 --clevel 5 --overwrite >/dev/null";
        REQUIRE(std::system(cmd.c_str()) == 0);
        B2ND_REQUIRE_SAME_BYTES(read_with_blosc2(conv, b2nd::AnyArray::open(conv)), want);
        b2nd::CopyOptions same;
        same.overwrite = true;
        same.sparse = !src.sparse();
        const auto c = b2nd::copy(src, dir / "same", same);
        B2ND_REQUIRE_SAME_BYTES(read_with_blosc2(dir / "same", c), want);
        if (src.ndim() > 0) {
            b2nd::CopyOptions o;
            o.overwrite = true;
            const auto cat = b2nd::concatenate({src, src}, 0, dir / "cat.b2nd", o);
            B2ND_REQUIRE_SAME_BYTES(read_with_blosc2(dir / "cat.b2nd", cat), cat.read());
            const auto st = b2nd::stack({src, src}, -1, dir / "st.b2nd", o);
            B2ND_REQUIRE_SAME_BYTES(read_with_blosc2(dir / "st.b2nd", st), st.read());
        }
        const auto frame = src.to_cframe();
        {
            std::ofstream(dir / "f.b2nd", std::ios::binary)
                .write(reinterpret_cast<const char*>(frame.data()),
                       static_cast<std::streamsize>(frame.size()));
        }
        B2ND_REQUIRE_SAME_BYTES(
            read_with_blosc2(dir / "f.b2nd", b2nd::AnyArray::open(dir / "f.b2nd")), want);
    }
    CHECK(n >= 4);
}

TEST_CASE("interop: checksums are invisible to c-blosc2, and its changes make them stale",
          "[interop]") {
    ensure_init();
    b2nd::test::TempDir dir;
    for (const bool sparse : {false, true}) {
        INFO((sparse ? "sparse" : "contiguous"));
        const std::string path = dir / (sparse ? "s.b2frame" : "c.b2nd");
        std::vector<std::int32_t> v(50 * 40);
        for (std::size_t i = 0; i < v.size(); ++i) {
            v[i] = static_cast<std::int32_t>(i * 7 % 1001);
        }
        b2nd::CreateOptions o;
        o.chunk_shape = {20, 40};
        o.block_shape = {10, 20};
        o.sparse = sparse;
        {
            b2nd::AnyArray a = b2nd::AnyArray::create_from(
                path, b2nd::DType::parse("<i4"), {50, 40},
                {reinterpret_cast<const std::uint8_t*>(v.data()), v.size() * 4}, o);
            a.set_vlmeta("note", std::vector<std::uint8_t>{0xa2, 'h', 'i'});
            CHECK(a.frame().checksums().state == b2nd::storage::ChecksumReport::State::covered);
            // Version 2: each chunk followed by its block digests (in the frame file, or at the
            // end of its chunk file), which c-blosc2 skips.
            CHECK(a.frame().checksums().version == 3);
            CHECK(a.frame().chunk(0).record.size() == 4 * 8);
            B2ND_REQUIRE_SAME_BYTES(read_with_blosc2(path, a), a.read());
        }
        check_frame_in_blosc2(path);
        // c-blosc2 sees the table as one more vlmetalayer, a msgpack bin (python: bytes).
        blosc2_schunk* sc = blosc2_schunk_open(path.c_str());
        REQUIRE(sc != nullptr);
        std::uint8_t* content = nullptr;
        std::int32_t len = 0;
        REQUIRE(blosc2_vlmeta_get(sc, "_b2nd_checksums", &content, &len) >= 0);
        REQUIRE(len > 5);
        CHECK(content[0] == 0xc6);
        CHECK(std::memcmp(content + 5, "B2CK", 4) == 0);
        std::free(content);
        // c-blosc2 changes the frame (a vlmetalayer, then a chunk): the table is stale, and the
        // new content reads here as there.
        std::uint8_t msg[] = {0xa3, 'n', 'e', 'w'};
        REQUIRE(blosc2_vlmeta_update(sc, "note", msg, sizeof msg, nullptr) >= 0);
        std::vector<std::int32_t> ones(20 * 40, 1);
        blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
        cp.typesize = 4;
        cp.blocksize = 10 * 20 * 4;  // the array's blocks: (10, 20)
        blosc2_context* cctx = blosc2_create_cctx(cp);
        std::vector<std::uint8_t> chunk(ones.size() * 4 + BLOSC2_MAX_OVERHEAD);
        const int cb =
            blosc2_compress_ctx(cctx, ones.data(), static_cast<std::int32_t>(ones.size() * 4),
                                chunk.data(), static_cast<std::int32_t>(chunk.size()));
        blosc2_free_ctx(cctx);
        REQUIRE(cb > 0);
        REQUIRE(blosc2_schunk_update_chunk(sc, 1, chunk.data(), true) >= 0);
        blosc2_schunk_free(sc);
        const b2nd::storage::Frame f = b2nd::storage::Frame::open(path);
        CHECK(f.checksums().state == b2nd::storage::ChecksumReport::State::stale);
        const auto back = b2nd::NDArray<std::int32_t>::open(path);
        CHECK(back(25, 3) == 1);
        CHECK(back(0, 3) == v[3]);
        CHECK(*f.vlmeta("note") == std::vector<std::uint8_t>(msg, msg + sizeof msg));
    }
}
