// Writes the seed corpora of the fuzz targets from our own encoder and frame writer:
//   fuzz_chunk_decode: small chunks covering every codec, filter, split mode, run streams, memcpy
//                      and special chunks;
//   fuzz_frame_open:   small contiguous frames (metalayers, vlmetalayers, index-only specials,
//                      dead space from updates, a short last chunk, variable-size chunks);
//   fuzz_array_read:   small b2nd arrays (dtypes, ndim 0-4, ragged chunks and blocks, DELTA,
//                      special and repeated-value chunks, after resize and insert).
//   build/tests/fuzz/fuzz_make_seeds tests/fuzz/corpus
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <b2nd/b2nd.hpp>
#include <b2nd/codec/chunk_decoder.hpp>
#include <b2nd/codec/chunk_encoder.hpp>
#include <b2nd/containers.hpp>
#include <b2nd/format/frame_header.hpp>
#include <b2nd/storage/frame.hpp>
#include <b2nd/store.hpp>

using namespace b2nd::codec;

namespace {

void write_array_seeds(const std::string& dir) {
    namespace fs = std::filesystem;
    fs::create_directories(dir);
    const std::string tmp = (fs::temp_directory_path() / "b2nd-array-seed.b2nd").string();
    int count = 0;
    struct Seed {
        const char* name;
        const char* dtype;
        b2nd::Shape shape, chunks, blocks;
        b2nd::Codec codec;
        std::vector<b2nd::FilterSlot> filters;
    };
    const Seed seeds[] = {
        {"f4-3d-zstd-shuffle",
         "<f4",
         {9, 7, 5},
         {4, 4, 3},
         {2, 3, 2},
         b2nd::Codec::zstd,
         {{b2nd::Filter::shuffle, 0}}},
        {"i2-2d-lz4-delta",
         "<i2",
         {20, 11},
         {8, 6},
         {3, 4},
         b2nd::Codec::lz4,
         {{b2nd::Filter::delta, 0}}},
        {"u1-1d-blosclz",
         "|u1",
         {300},
         {64},
         {16},
         b2nd::Codec::blosclz,
         {{b2nd::Filter::bitshuffle, 0}}},
        {"f8be-4d-zlib", ">f8", {3, 4, 2, 5}, {2, 3, 2, 4}, {1, 2, 1, 3}, b2nd::Codec::zlib, {}},
        // Blocks of 16 KiB: with checksums, their decoded pieces are digested (table version 3).
        {"f4-2d-lz4-shuffle",
         "<f4",
         {40, 512},
         {16, 512},
         {8, 512},
         b2nd::Codec::lz4,
         {{b2nd::Filter::shuffle, 0}}},
        {"c16-scalar", "<c16", {}, {}, {}, b2nd::Codec::zstd, {{b2nd::Filter::shuffle, 0}}},
        {"struct-2d",
         "[('a', '<i4'), ('b', '<f8')]",
         {6, 6},
         {4, 4},
         {2, 2},
         b2nd::Codec::lz4hc,
         {}},
    };
    for (const Seed& s : seeds) {
        b2nd::CreateOptions o;
        o.chunk_shape = s.chunks;
        o.block_shape = s.blocks;
        o.compression.codec = s.codec;
        o.compression.filters = s.filters;
        o.overwrite = true;
        const b2nd::DType dt = b2nd::DType::parse(s.dtype);
        std::int64_t n = 1;
        for (std::int64_t v : s.shape) {
            n *= v;
        }
        std::vector<std::uint8_t> data(static_cast<std::size_t>(n * dt.itemsize()));
        for (std::size_t i = 0; i < data.size(); ++i) {
            data[i] = static_cast<std::uint8_t>((i * 7) / 5);
        }
        {
            auto a = b2nd::AnyArray::create_from(tmp, dt, s.shape, {data.data(), data.size()}, o);
            if (a.ndim() > 0) {
                b2nd::Shape grown = a.shape();
                grown[0] += 2;  // zero chunks and an exposed edge
                a.resize(grown);
                std::vector<std::uint8_t> slab(static_cast<std::size_t>(a.nbytes() / a.shape()[0]),
                                               0x11);
                a.insert(0, 1, {slab.data(), slab.size()});  // uniform slab: repeated-value chunks
            }
        }
        fs::copy_file(tmp, dir + "/" + s.name + ".b2nd", fs::copy_options::overwrite_existing);
        fs::remove(tmp);
        fs::remove(tmp + ".b2lock");
        ++count;
    }
    std::printf("wrote %d array seeds to %s\n", count, dir.c_str());
}

void write_frame_seeds(const std::string& dir) {
    namespace fs = std::filesystem;
    const std::string tmp = (fs::temp_directory_path() / "b2nd-seed.b2nd").string();
    fs::create_directories(dir);
    int count = 0;
    auto emit = [&](const std::string& name) {
        fs::copy_file(tmp, dir + "/" + name, fs::copy_options::overwrite_existing);
        fs::remove(tmp);
        fs::remove(tmp + ".b2lock");
        ++count;
    };
    std::vector<std::uint8_t> data(800);
    for (std::size_t i = 0; i < data.size(); ++i) {
        data[i] = static_cast<std::uint8_t>(i / 8);
    }
    EncodeParams p;
    p.typesize = 4;
    p.blocksize = 200;
    const auto chunk = encode_chunk(data, p);
    b2nd::storage::FrameParams fp;
    fp.typesize = 4;
    fp.chunksize = 800;
    fp.blocksize = 200;
    {
        auto f = b2nd::storage::Frame::create(tmp, fp, false, {{"b2nd", {0x97, 0, 1}, 0}});
        f.append_chunks(
            {chunk, chunk, make_zeros_chunk(800, 4, 200), make_nans_chunk(800, 4, 200)});
        f.set_vlmeta("attrs", std::vector<std::uint8_t>{0x81, 0xa1, 0x61, 0x01});
    }
    emit("specials-and-vlmeta.b2nd");
    {
        auto f = b2nd::storage::Frame::create(tmp, fp);
        f.append_chunks({chunk, chunk, chunk});
        f.update_chunk(1, chunk);
        f.delete_chunk(0);
        f.append_chunk(
            encode_chunk(std::vector<std::uint8_t>(data.begin(), data.begin() + 100), p));
    }
    emit("dead-space-short-last.b2nd");
    {
        fp.chunksize = 0;
        auto f = b2nd::storage::Frame::create(tmp, fp);
        f.append_chunks(
            {chunk, encode_chunk(std::vector<std::uint8_t>(data.begin(), data.begin() + 300), p)});
    }
    emit("variable-chunks.b2nd");
    {
        auto f = b2nd::storage::Frame::create(tmp, fp);
        (void)f;
    }
    emit("empty.b2nd");
    std::printf("wrote %d frame seeds to %s\n", count, dir.c_str());
}

}  // namespace

/// Small stores our writer makes: a .b2z tree (a member leaf, embedded leaves, group attributes)
/// and its embed.b2e alone (a store's embed frame as a .b2e).
void write_store_seeds(const std::string& dir) {
    namespace fs = std::filesystem;
    fs::create_directories(dir);
    const fs::path tmp = fs::temp_directory_path() / "b2nd-store-seed";
    fs::remove_all(tmp);
    fs::create_directories(tmp);
    const auto arr = [](std::int64_t n) {
        std::vector<std::int32_t> v(static_cast<std::size_t>(n));
        for (std::size_t i = 0; i < v.size(); ++i) {
            v[i] = static_cast<std::int32_t>(i * 3);
        }
        b2nd::CreateOptions o;
        o.chunk_shape = {n / 2 > 0 ? n / 2 : 1};
        o.block_shape = {n / 4 > 0 ? n / 4 : 1};
        return b2nd::AnyArray::create_in_memory_from(
            b2nd::dtype_of<std::int32_t>(), {n},
            {reinterpret_cast<const std::uint8_t*>(v.data()), v.size() * 4}, o);
    };
    for (const char* form : {"seed.b2z", "seed.b2d"}) {
        b2nd::StoreOptions so;
        so.threshold = 200;
        auto w = b2nd::StoreWriter::create((tmp / form).string(), so);
        w.put("/big", arr(100));
        w.put("/g/small", arr(8));
        w.put("/g/sub/tiny", arr(3));
        w.set_vlmeta("/", "title", b2nd::Value("seed"));
        w.set_vlmeta("/g", "pair", b2nd::Value::tuple({1, "x"}));
        w.commit();
    }
    fs::copy_file(tmp / "seed.b2z", fs::path(dir) / "tree.b2z",
                  fs::copy_options::overwrite_existing);
    fs::copy_file(tmp / "seed.b2d" / "embed.b2e", fs::path(dir) / "embed.b2e",
                  fs::copy_options::overwrite_existing);
    // The memory bomb of issue 37: an embed frame of a few KB whose uint8 array claims 4 GiB
    // (zero chunks past the real values), and a map entry for 2 GiB of those zeros. A reader
    // that believes the length allocates it; ours decodes what it reads.
    {
        b2nd::StoreOptions so;
        so.threshold = std::nullopt;  // embedded
        auto w = b2nd::StoreWriter::create((tmp / "bomb.b2d").string(), so);
        w.put("/v", arr(10));
        w.commit();
    }
    const std::string embed = (tmp / "bomb.b2d" / "embed.b2e").string();
    const std::string bomb = (tmp / "bomb.b2e").string();
    {
        // The same embed frame in 8 MiB chunks: the real values (zero-padded), then zero chunks
        // to 4 GiB; the map gains "/bomb", 2 GiB of those zeros.
        const b2nd::storage::Frame orig = b2nd::storage::Frame::open(embed);
        constexpr std::int32_t kChunk = 8 << 20;
        std::vector<std::uint8_t> first(kChunk, 0);
        std::size_t at = 0;
        for (std::int64_t i = 0; i < orig.nchunks(); ++i) {
            const auto part = orig.decode_chunk(i);
            std::copy(part.begin(), part.end(), first.begin() + static_cast<std::ptrdiff_t>(at));
            at += part.size();
        }
        b2nd::storage::FrameParams p;
        p.typesize = 1;
        p.chunksize = kChunk;
        p.clevel = 5;
        b2nd::storage::Frame f = b2nd::storage::Frame::create(bomb, p, false, orig.metalayers());
        b2nd::codec::EncodeParams e;
        e.typesize = 1;
        e.clevel = 5;
        const auto head = b2nd::codec::encode_chunk(first, e);
        const auto zeros = b2nd::codec::make_zeros_chunk(kChunk, 1);
        std::vector<b2nd::ByteSpan> chunks(511, b2nd::ByteSpan(zeros.data(), zeros.size()));
        chunks.insert(chunks.begin(), b2nd::ByteSpan(head.data(), head.size()));
        f.append_chunks(chunks);
        for (const std::string& name : orig.vlmeta_names()) {
            const auto stored = *orig.vlmeta(name);
            if (name != "estore_metadata") {
                f.set_vlmeta(name, {stored.data(), stored.size()});
                continue;
            }
            const b2nd::Value meta =
                b2nd::Value::from_msgpack({stored.data(), stored.size()}, "estore_metadata");
            b2nd::Value::Map entries = meta.find("embed_map")->entries();
            entries.emplace_back(b2nd::Value("/bomb"),
                                 b2nd::Value::map({{"offset", std::int64_t{1} << 31},
                                                   {"length", std::int64_t{1} << 31}}));
            b2nd::Value::Map top;
            for (const auto& [k, v] : meta.entries()) {
                top.emplace_back(k, k == b2nd::Value("embed_map") ? b2nd::Value::map(entries) : v);
            }
            const auto bytes = b2nd::Value::map(top).to_msgpack();
            f.set_vlmeta(name, {bytes.data(), bytes.size()});
        }
    }
    fs::copy_file(bomb, fs::path(dir) / "bomb.b2e", fs::copy_options::overwrite_existing);
    fs::remove_all(tmp);
}

/// dtype strings as python writes them: scalars, units, list and dict forms, nesting.
void write_dtype_seeds(const std::string& dir) {
    std::filesystem::create_directories(dir);
    const char* seeds[] = {
        "<f8",
        "|S6",
        "<U5",
        ">U2",
        "<M8[ns]",
        "<m8[10s]",
        "[('id', '<i4'), ('pos', [('x', '<f8'), ('y', '<f8')]), ('flag', '?')]",
        "[('t', '<f4'), ('v', '<i2', (3,)), ('m', '<f8', (2, 2))]",
        "{'names': ['a', 'b', 'c'], 'formats': ['<u2', '<f8', 'S3'], 'offsets': [0, 8, 20], "
        "'itemsize': 32}",
        "{'names': ['a', 'b'], 'formats': ['u1', '<i8'], 'offsets': [0, 8], 'itemsize': 16, "
        "'aligned': True}",
        "[('a', [('b', [('c', '<i2'), ('d', 'S2')]), ('e', '<f4', (2,))]), ('z', '<u8')]",
    };
    int count = 0;
    for (const char* s : seeds) {
        std::ofstream(dir + "/dtype-" + std::to_string(count++) + ".txt") << s;
    }
}

/// An ObjectArray, BatchArrays (several blocks, one) and a UTF8Array's two arrays.
void write_container_seeds(const std::string& dir) {
    namespace fs = std::filesystem;
    fs::create_directories(dir);
    const fs::path tmp = fs::temp_directory_path() / "b2nd-container-seed";
    fs::remove_all(tmp);
    fs::create_directories(tmp);
    const std::vector<b2nd::Value> items = {1, "two", b2nd::Value::tuple({3, 4.5}),
                                            b2nd::Value::binary({1, 2}), b2nd::Value()};
    const auto copy = [&](const fs::path& from, const std::string& name) {
        fs::copy_file(from, dir + "/" + name, fs::copy_options::overwrite_existing);
    };
    b2nd::ObjectArray::write((tmp / "o.b2frame").string(), items);
    copy(tmp / "o.b2frame", "objects.b2frame");
    b2nd::BatchArray::write((tmp / "b.b2b").string(), {items, {7, 8, 9}}, 2);
    copy(tmp / "b.b2b", "batches.b2b");
    b2nd::BatchArray::write((tmp / "c.b2b").string(), {{"x"}});
    copy(tmp / "c.b2b", "batch-one.b2b");
    b2nd::UTF8Array::write((tmp / "u.b2nd").string(), {"", "héllo", "中文"});
    copy(tmp / "u.b2nd", "utf8-offsets.b2nd");
    copy(tmp / "u.utf8.b2nd", "utf8-bytes.b2nd");
    fs::remove_all(tmp);
}

/// fuzz_index, fuzz_meta, fuzz_checksums: the pieces of small frames we write (offsets index
/// chunks, b2nd metalayers, trailers, checksum tables, a chunk with its block digests).
void write_piece_seeds(const std::string& root) {
    namespace fs = std::filesystem;
    for (const char* d : {"/fuzz_index", "/fuzz_meta", "/fuzz_checksums"}) {
        fs::create_directories(root + d);
    }
    const auto save = [](const std::string& path, b2nd::ByteSpan bytes) {
        std::ofstream(path, std::ios::binary)
            .write(reinterpret_cast<const char*>(bytes.data()),
                   static_cast<std::streamsize>(bytes.size()));
    };
    const std::string tmp = (fs::temp_directory_path() / "b2nd-piece-seed.b2nd").string();
    struct Piece {
        const char* name;
        const char* dtype;
        b2nd::Shape shape, chunks;
        b2nd::Fill fill;
    };
    const Piece pieces[] = {{"i4-2d", "<i4", {20, 10}, {8, 10}, b2nd::Fill::value},
                            {"f8-1d-zeros", "<f8", {1000}, {300}, b2nd::Fill::zeros},
                            {"u1-3d", "|u1", {6, 7, 8}, {3, 7, 4}, b2nd::Fill::value},
                            {"f4-empty", "<f4", {0, 5}, {4, 5}, b2nd::Fill::zeros}};
    for (const Piece& p : pieces) {
        fs::remove(tmp);
        b2nd::CreateOptions o;
        o.chunk_shape = p.chunks;
        o.locking = false;
        o.fill = p.fill;
        const b2nd::DType dt = b2nd::DType::parse(p.dtype);
        o.fill_value.assign(static_cast<std::size_t>(dt.itemsize()), 7);
        {
            b2nd::AnyArray a = b2nd::AnyArray::create(tmp, dt, p.shape, o);
            a.set_vlmeta("note", std::vector<std::uint8_t>{0xa2, 'o', 'k'});
        }
        std::ifstream in(tmp, std::ios::binary);
        const std::vector<std::uint8_t> file{std::istreambuf_iterator<char>(in),
                                             std::istreambuf_iterator<char>()};
        const b2nd::storage::Frame f =
            b2nd::storage::Frame::from_buffer({file.data(), file.size()});
        const std::string base = std::string("/") + p.name;
        save(root + "/fuzz_meta" + base + ".b2nd-meta",
             {f.metalayer("b2nd")->content.data(), f.metalayer("b2nd")->content.size()});
        const b2nd::ByteSpan all{file.data(), file.size()};
        const std::uint32_t tlen =
            b2nd::format::read_trailer_len(all.subspan(file.size() - 25, 25));
        const b2nd::ByteSpan trailer = all.subspan(file.size() - tlen, tlen);
        save(root + "/fuzz_meta" + base + ".trailer", trailer);
        save(root + "/fuzz_checksums" + base + ".trailer", trailer);
        const std::size_t index_at =
            static_cast<std::size_t>(f.header().header_len + f.header().cbytes);
        if (index_at < file.size() - tlen) {
            save(root + "/fuzz_index" + base + ".index",
                 all.subspan(index_at, file.size() - tlen - index_at));
        }
        for (const auto& m : b2nd::format::read_frame_trailer(trailer).vlmetalayers) {
            if (m.name == "_b2nd_checksums") {
                const auto table = decode_chunk({m.content.data(), m.content.size()});
                save(root + "/fuzz_checksums" + base + ".table", {table.data(), table.size()});
            }
        }
    }
    // Stored chunks, each followed by its record: memcpyed, LZ4 and ZSTD with a byte shuffle,
    // and LZ4 in blocks of 16 KiB (4 rows), whose record holds their decoded pieces' digests.
    struct SealedKind {
        b2nd::CompressionParams c;
        b2nd::Shape shape, chunks, blocks;
    };
    const b2nd::CompressionParams lz4{b2nd::Codec::lz4, 5, {{b2nd::Filter::shuffle, 0}}};
    const SealedKind sealed_kinds[] = {
        {{b2nd::Codec::blosclz, 0, {}}, {20, 10}, {8, 10}, {4, 5}},
        {lz4, {20, 10}, {8, 10}, {4, 5}},
        {{b2nd::Codec::zstd, 3, {{b2nd::Filter::shuffle, 0}}}, {20, 10}, {8, 10}, {4, 5}},
        {lz4, {16, 1024}, {16, 1024}, {4, 1024}}};
    int kind = 0;
    for (const SealedKind& k : sealed_kinds) {
        fs::remove(tmp);
        std::vector<std::int32_t> v(static_cast<std::size_t>(k.shape[0] * k.shape[1]));
        for (std::size_t i = 0; i < v.size(); ++i) {
            v[i] = static_cast<std::int32_t>(i * 7 % 97);
        }
        b2nd::CreateOptions o;
        o.chunk_shape = k.chunks;
        o.block_shape = k.blocks;
        o.compression = k.c;
        o.locking = false;
        (void)b2nd::NDArray<std::int32_t>::create_from(tmp, k.shape, v, o);
        const b2nd::storage::StoredChunk ch = b2nd::storage::Frame::open(tmp).chunk(0);
        std::vector<std::uint8_t> sealed(ch.bytes.begin(), ch.bytes.end());
        sealed.insert(sealed.end(), ch.record.begin(), ch.record.end());
        save(root + "/fuzz_checksums/chunk-" + std::to_string(kind++) + ".sealed",
             {sealed.data(), sealed.size()});
    }
    fs::remove(tmp);
}

/// fuzz_hdf5_filters: LZF and Blosc chunks as the target takes them (kind, chunk size,
/// cd_values[2], stream): valid ones of the right size, and ones that decode short or claim more.
void write_hdf5_filter_seeds(const std::string& dir) {
    namespace fs = std::filesystem;
    fs::create_directories(dir);
    int count = 0;
    const auto save = [&](bool lzf, std::uint32_t chunk, std::uint32_t claimed,
                          const std::vector<std::uint8_t>& stream) {
        std::vector<std::uint8_t> b{static_cast<std::uint8_t>(lzf ? 0 : 1)};
        for (const std::uint32_t v : {chunk, claimed}) {
            for (int k = 0; k < 4; ++k) {
                b.push_back(static_cast<std::uint8_t>(v >> (8 * k)));
            }
        }
        b.insert(b.end(), stream.begin(), stream.end());
        std::ofstream(dir + "/" + (lzf ? "lzf-" : "blosc-") + std::to_string(count++),
                      std::ios::binary)
            .write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
    };
    std::vector<std::uint8_t> raw(4096);
    for (std::size_t i = 0; i < raw.size(); ++i) {
        raw[i] = static_cast<std::uint8_t>((i * 3) % 251);
    }
    std::vector<std::uint8_t> literals;  // LZF: literal runs of 32
    for (std::size_t at = 0; at < raw.size(); at += 32) {
        literals.push_back(31);
        literals.insert(literals.end(), raw.begin() + static_cast<std::ptrdiff_t>(at),
                        raw.begin() + static_cast<std::ptrdiff_t>(at + 32));
    }
    save(true, 4096, 4096, literals);
    save(true, 4096, 0xffffffffU, literals);
    save(true, 8192, 4096, literals);  // decodes short
    save(true, 4096, 4096, {7, 1, 2, 3, 4, 5, 6, 7, 8});
    EncodeParams p;
    p.typesize = 4;
    for (const Codec c : {Codec::lz4, Codec::blosclz, Codec::zstd}) {
        p.codec = c;
        save(false, 4096, 4096, encode_chunk(raw, p));
        save(false, 8192, 8192, encode_chunk(raw, p));
    }
    save(false, 4096, 0, make_zeros_chunk(4096, 4));
    save(false, 4096, 0, make_zeros_chunk(0x7fffffd8, 4, 1 << 16));
}

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s OUTDIR\n", argv[0]);
        return 2;
    }
    const std::string root = argv[1];
    write_store_seeds(root + "/fuzz_store");
    write_dtype_seeds(root + "/fuzz_dtype");
    write_container_seeds(root + "/fuzz_containers");
    write_piece_seeds(root);
    write_hdf5_filter_seeds(root + "/fuzz_hdf5_filters");
    const std::string dir = root + "/fuzz_chunk_decode";
    int count = 0;
    auto save = [&](const std::string& name, const std::vector<std::uint8_t>& bytes) {
        std::ofstream(dir + "/" + name, std::ios::binary)
            .write(reinterpret_cast<const char*>(bytes.data()),
                   static_cast<std::streamsize>(bytes.size()));
        ++count;
    };
    std::vector<std::uint8_t> data(3000);
    for (std::size_t i = 0; i < data.size(); ++i) {
        data[i] = static_cast<std::uint8_t>((i / 4) % 97 + ((i * 7919) % 13 == 0 ? 1 : 0));
    }
    const Codec codecs[] = {Codec::blosclz, Codec::lz4, Codec::lz4hc, Codec::zlib, Codec::zstd};
    const std::pair<const char*, FilterPipeline> pipes[] = {
        {"none", make_pipeline({})},
        {"shuffle", make_pipeline({{Filter::shuffle, 0}})},
        {"bitshuffle", make_pipeline({{Filter::bitshuffle, 0}})},
        {"delta", make_pipeline({{Filter::delta, 0}, {Filter::shuffle, 0}})},
        {"bytedelta", make_pipeline({{Filter::shuffle, 0}, {Filter::bytedelta, 0}})},
        {"truncprec", make_pipeline({{Filter::trunc_prec, 9}, {Filter::bitshuffle, 0}})}};
    for (Codec c : codecs) {
        for (const auto& [name, pipe] : pipes) {
            for (SplitMode m : {SplitMode::always, SplitMode::never}) {
                EncodeParams p;
                p.codec = c;
                p.clevel = 5;
                p.filters = pipe;
                p.typesize = 4;
                p.blocksize = 512;
                p.splitmode = m;
                save(std::string(codec_name(c)) + "-" + name + "-" +
                         std::string(split_mode_name(m)) + ".chunk",
                     encode_chunk(data, p));
            }
        }
    }
    EncodeParams store;
    store.clevel = 0;
    save("memcpyed.chunk",
         encode_chunk(std::vector<std::uint8_t>(data.begin(), data.begin() + 200), store));
    std::vector<std::uint8_t> runs(1024, 5);
    runs[100] = 0;
    save("runs.chunk", encode_chunk(runs, EncodeParams{}));
    save("empty.chunk", encode_chunk(std::vector<std::uint8_t>{}, EncodeParams{}));
    save("zeros.chunk", make_zeros_chunk(4096, 4, 1024));
    save("nans.chunk", make_nans_chunk(4096, 8, 1024));
    save("uninit.chunk", make_uninit_chunk(4096, 2));
    save("repeated.chunk",
         make_repeated_chunk(4096, std::vector<std::uint8_t>{1, 2, 3, 4, 5, 6, 7, 8}, 1024));
    std::printf("wrote %d chunk seeds to %s\n", count, dir.c_str());
    write_frame_seeds(root + "/fuzz_frame_open");
    write_array_seeds(root + "/fuzz_array_read");
    return 0;
}
