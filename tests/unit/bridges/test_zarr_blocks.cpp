// Zarr v2 chunks compressed by Blosc alone are read by their Blosc blocks: the array's blocks
// are those blocks (boxes of a chunk: whole planes, or rows of one), a read decodes only the ones
// it touches, chunks written with other blocks are decoded whole instead, and a damaged block is
// refused naming its chunk file.
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include <b2nd/b2nd.hpp>

#include "../../support/files.hpp"
#include "../../support/temp_dir.hpp"
#include "bridges/bridges.hpp"
#include "codec/blosc1.hpp"

using b2nd::AnyArray;
using b2nd::Box;
using Catch::Matchers::Contains;

namespace {

// 40 x 24 x 32 int32 in chunks of 16 x 8 x 32 (16 KiB): 3 x 3 x 1 chunks, the last row of chunks
// cut by the array's edge (Zarr v2 stores it whole).
constexpr std::int64_t kChunk[3] = {16, 8, 32};

std::int32_t value(std::int64_t i, std::int64_t j, std::int64_t k) {
    return static_cast<std::int32_t>((i * 131 + j * 17 + k) % 1000) - 300;
}

void write_bytes(const std::string& path, const std::vector<std::uint8_t>& b) {
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    b2nd::test::write_file(path, b);
}

/// A Zarr v2 array of Blosc lz4 + shuffle chunks of `blocksize` bytes each (per chunk, by its
/// grid coordinates), chunk (1, 1, 0) left out (the fill value, 5).
void write_array(const std::string& dir,
                 const std::function<std::size_t(std::int64_t, std::int64_t)>& blocksize) {
    std::filesystem::create_directories(dir);
    std::ofstream(dir + "/.zarray") << R"({"zarr_format": 2, "shape": [40, 24, 32],
        "chunks": [16, 8, 32], "dtype": "<i4", "fill_value": 5, "order": "C", "filters": null,
        "compressor": {"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1,
                       "blocksize": 0}})";
    for (std::int64_t ci = 0; ci < 3; ++ci) {
        for (std::int64_t cj = 0; cj < 3; ++cj) {
            if (ci == 1 && cj == 1) {
                continue;
            }
            std::vector<std::int32_t> v;
            for (std::int64_t i = 0; i < kChunk[0]; ++i) {
                for (std::int64_t j = 0; j < kChunk[1]; ++j) {
                    for (std::int64_t k = 0; k < kChunk[2]; ++k) {
                        v.push_back(value(ci * kChunk[0] + i, cj * kChunk[1] + j, k));
                    }
                }
            }
            std::vector<std::uint8_t> out;
            b2nd::codec::detail::encode_blosc1_chunk(
                reinterpret_cast<const std::uint8_t*>(v.data()), v.size() * 4,
                b2nd::codec::Codec::lz4, 5, 1, 4, out, blocksize(ci, cj));
            write_bytes(dir + "/" + std::to_string(ci) + "." + std::to_string(cj) + ".0", out);
        }
    }
}

/// The array's expected elements in `b`.
std::vector<std::int32_t> expected(const Box& b) {
    std::vector<std::int32_t> v;
    for (std::int64_t i = b.start[0]; i < b.start[0] + b.count[0]; ++i) {
        for (std::int64_t j = b.start[1]; j < b.start[1] + b.count[1]; ++j) {
            for (std::int64_t k = b.start[2]; k < b.start[2] + b.count[2]; ++k) {
                const bool fill = i / kChunk[0] == 1 && j / kChunk[1] == 1;
                v.push_back(fill ? 5 : value(i, j, k));
            }
        }
    }
    return v;
}

std::vector<std::int32_t> read(const AnyArray& a, const Box& b) {
    std::vector<std::int32_t> out(static_cast<std::size_t>(b.size()));
    a.read(b, out.data(), out.size() * 4);
    return out;
}

}  // namespace

TEST_CASE("zarr blocks: Blosc blocks of whole planes, or of rows, are the array's blocks",
          "[bridges][zarr]") {
    b2nd::test::TempDir dir;
    // 4 KiB blocks: 4 planes of 8 x 32; 512-byte blocks: 4 rows of a plane; 3 KiB blocks are
    // no box of the chunk (3 planes do not divide 16), so the chunk is one block.
    const std::size_t bs = GENERATE(std::size_t{4096}, std::size_t{512}, std::size_t{3072});
    CAPTURE(bs);
    const std::string z = dir / "a.zarr";
    write_array(z, [&](std::int64_t, std::int64_t) { return bs; });
    const b2nd::Shape want = bs == 4096  ? b2nd::Shape{4, 8, 32}
                             : bs == 512 ? b2nd::Shape{1, 4, 32}
                                         : b2nd::Shape{16, 8, 32};
    for (const int threads : {1, 2}) {
        b2nd::OpenOptions o;
        o.nthreads = threads;
        const AnyArray a = AnyArray::open(z, o);
        CHECK(a.block_shape() == want);
        CHECK(a.chunk_shape() == b2nd::Shape{16, 8, 32});
        const Box whole = Box::whole({40, 24, 32});
        CHECK(read(a, whole) == expected(whole));
        for (const Box& b :
             {Box::region({5, 0, 0}, {1, 24, 32}), Box::region({0, 3, 0}, {40, 1, 32}),
              Box::region({0, 0, 7}, {40, 24, 1}), Box::region({13, 6, 9}, {20, 11, 17}),
              Box::region({39, 23, 31}, {1, 1, 1})}) {
            CHECK(read(a, b) == expected(b));
            CHECK(read(a, b) == expected(b));  // again: from the block cache
        }
    }
}

TEST_CASE("zarr blocks: a chunk with other blocks is decoded whole; a damaged block is refused",
          "[bridges][zarr]") {
    b2nd::test::TempDir dir;
    const std::string z = dir / "a.zarr";
    // Chunk (0, 0, 0) says 4 KiB blocks (the array's), chunk (2, 2, 0) 8 KiB ones.
    write_array(z, [](std::int64_t ci, std::int64_t cj) {
        return ci == 2 && cj == 2 ? std::size_t{8192} : std::size_t{4096};
    });
    const AnyArray a = AnyArray::open(z);
    CHECK(a.block_shape() == b2nd::Shape{4, 8, 32});
    const Box whole = Box::whole({40, 24, 32});
    CHECK(read(a, whole) == expected(whole));
    const Box edge = Box::region({33, 17, 0}, {7, 7, 32});
    CHECK(read(a, edge) == expected(edge));

    // A byte flipped inside the streams of the last block of chunk (0, 1, 0): reads of the other
    // blocks still work; a read of that block is refused, naming the chunk file.
    const std::string file = z + "/0.1.0";
    const std::uint64_t size = std::filesystem::file_size(file);
    b2nd::test::flip_byte(file, size - 20);
    const AnyArray b = AnyArray::open(z);
    const Box first = Box::region({0, 8, 0}, {4, 8, 32});
    CHECK(read(b, first) == expected(first));
    CHECK_THROWS_WITH(read(b, Box::region({12, 8, 0}, {4, 8, 32})),
                      Contains("0.1.0") && Contains("blosc"));
}

TEST_CASE("zarr blocks: chunks cut short are refused naming their file, the others read",
          "[bridges][zarr]") {
    b2nd::test::TempDir dir;
    const std::string z = dir / "a.zarr";
    write_array(z, [](std::int64_t, std::int64_t) { return std::size_t{4096}; });
    // Chunk (0, 1, 0) cut inside its streams, chunk (2, 0, 0) inside its 16-byte header.
    for (const auto& [name, keep] :
         {std::pair<std::string, std::size_t>{"0.1.0", 100}, {"2.0.0", 8}}) {
        std::vector<std::uint8_t> b = b2nd::test::read_file(z + "/" + name);
        b.resize(keep);
        b2nd::test::write_file(z + "/" + name, b);
    }
    const AnyArray a = AnyArray::open(z);
    CHECK(a.block_shape() == b2nd::Shape{4, 8, 32});
    const Box good = Box::region({0, 0, 0}, {16, 8, 32});
    CHECK(read(a, good) == expected(good));
    CHECK_THROWS_WITH(read(a, Box::region({12, 8, 0}, {1, 1, 1})), Contains("0.1.0"));
    CHECK_THROWS_WITH(read(a, Box::region({32, 0, 0}, {1, 1, 1})), Contains("2.0.0"));
    // The first chunk cut inside its header: blocks are whole chunks, the rest reads.
    std::vector<std::uint8_t> b = b2nd::test::read_file(z + "/0.0.0");
    b.resize(8);
    b2nd::test::write_file(z + "/0.0.0", b);
    const AnyArray c = AnyArray::open(z);
    CHECK(c.block_shape() == b2nd::Shape{16, 8, 32});
    CHECK_THROWS_WITH(read(c, Box::region({0, 0, 0}, {1, 1, 1})), Contains("0.0.0"));
    const Box other = Box::region({16, 16, 0}, {16, 8, 32});
    CHECK(read(c, other) == expected(other));
}

TEST_CASE("zarr blocks: an edge block's padding is zeroed, its part inside the array kept",
          "[bridges][zarr]") {
    // A 3 x 4 x 5 block of int16 of which (2, 3, 4) lies inside the array.
    const b2nd::Shape bs{3, 4, 5};
    std::vector<std::int16_t> block(60, 9);
    b2nd::bridges::zero_outside(Box::region({0, 0, 0}, {2, 3, 4}), bs, 2,
                                reinterpret_cast<std::uint8_t*>(block.data()));
    std::int64_t wrong = 0;
    for (std::int64_t i = 0; i < 3; ++i) {
        for (std::int64_t j = 0; j < 4; ++j) {
            for (std::int64_t k = 0; k < 5; ++k) {
                const bool inside = i < 2 && j < 3 && k < 4;
                wrong += block[static_cast<std::size_t>((i * 4 + j) * 5 + k)] != (inside ? 9 : 0);
            }
        }
    }
    CHECK(wrong == 0);
    // A whole block is left as it is.
    std::vector<std::int16_t> full(60, 9);
    b2nd::bridges::zero_outside(Box::region({0, 0, 0}, {3, 4, 5}), bs, 2,
                                reinterpret_cast<std::uint8_t*>(full.data()));
    CHECK(full == std::vector<std::int16_t>(60, 9));
}
