// HDF5 chunks filtered by deflate and shuffle are read as stored and decoded by the library, on the
// array's threads: the values are libhdf5's (edge chunks, chunks never written, a chunk whose
// deflate was skipped), a damaged chunk is refused naming where it is, and pipelines with other
// filters (fletcher32) are still read through libhdf5. Files written here with libhdf5's C API.
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <b2nd/b2nd.hpp>

#include "../../support/files.hpp"
#include "../../support/temp_dir.hpp"

#if B2ND_TEST_HDF5
#include <b2nd/codec/filters.hpp>

#include "../../support/hdf5_id.hpp"
#include "bridges/hdf5_detail.hpp"
#include "bridges/hdf5_gate.hpp"

using b2nd::AnyArray;
using b2nd::Box;
using Catch::Matchers::Contains;

namespace {

using b2nd::test::Id;

// 50 x 36 x 20 int32 in chunks of 16 x 12 x 20: the last row of chunks cut by the edge.
const hsize_t kDims[3] = {50, 36, 20};
const hsize_t kChunk[3] = {16, 12, 20};

std::int32_t value(std::size_t flat) {
    return static_cast<std::int32_t>(flat * 2654435761U % 100000) - 50000;
}

/// Writes /d (deflate 1 + shuffle, or also fletcher32) with every chunk but the one at
/// (16, 12, 0), which stays unwritten (fill value 9); with `raw_chunk`, the chunk at (0, 0, 0)
/// is written as stored by H5Dwrite_chunk, shuffled but not deflated (filter mask 0b10).
std::vector<std::int32_t> write_file(const std::string& path, bool fletcher, bool raw_chunk) {
    std::vector<std::int32_t> v(kDims[0] * kDims[1] * kDims[2]);
    for (std::size_t i = 0; i < v.size(); ++i) {
        v[i] = value(i);
    }
    auto held = b2nd::bridges::h5::lock();
    Id f{H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), H5Fclose};
    Id space{H5Screate_simple(3, kDims, nullptr), H5Sclose};
    Id dcpl{H5Pcreate(H5P_DATASET_CREATE), H5Pclose};
    H5Pset_chunk(dcpl.id, 3, kChunk);
    if (fletcher) {
        H5Pset_fletcher32(dcpl.id);
    }
    H5Pset_shuffle(dcpl.id);
    H5Pset_deflate(dcpl.id, 1);
    const std::int32_t fill = 9;
    H5Pset_fill_value(dcpl.id, H5T_NATIVE_INT32, &fill);
    Id d{H5Dcreate2(f.id, "/d", H5T_STD_I32LE, space.id, H5P_DEFAULT, dcpl.id, H5P_DEFAULT),
         H5Dclose};
    for (hsize_t ci = 0; ci < kDims[0]; ci += kChunk[0]) {
        for (hsize_t cj = 0; cj < kDims[1]; cj += kChunk[1]) {
            if (ci == 16 && cj == 12) {
                for (hsize_t i = ci; i < ci + kChunk[0]; ++i) {
                    for (hsize_t j = cj; j < cj + kChunk[1]; ++j) {
                        for (hsize_t k = 0; k < kDims[2]; ++k) {
                            v[(i * kDims[1] + j) * kDims[2] + k] = fill;
                        }
                    }
                }
                continue;
            }
            const hsize_t start[3] = {ci, cj, 0};
            const hsize_t count[3] = {std::min(kChunk[0], kDims[0] - ci), kChunk[1], kDims[2]};
            Id fs{H5Dget_space(d.id), H5Sclose};
            H5Sselect_hyperslab(fs.id, H5S_SELECT_SET, start, nullptr, count, nullptr);
            Id ms{H5Screate_simple(3, kDims, nullptr), H5Sclose};
            H5Sselect_hyperslab(ms.id, H5S_SELECT_SET, start, nullptr, count, nullptr);
            REQUIRE(H5Dwrite(d.id, H5T_NATIVE_INT32, ms.id, fs.id, H5P_DEFAULT, v.data()) >= 0);
        }
    }
    if (raw_chunk) {
        // Chunk (0, 0, 0) as stored: its items shuffled, deflate skipped (bit 1 of the mask).
        std::vector<std::uint8_t> items(kChunk[0] * kChunk[1] * kChunk[2] * 4);
        std::size_t at = 0;
        for (hsize_t i = 0; i < kChunk[0]; ++i) {
            for (hsize_t j = 0; j < kChunk[1]; ++j) {
                for (hsize_t k = 0; k < kChunk[2]; ++k) {
                    const std::int32_t x = value((i * kDims[1] + j) * kDims[2] + k) + 1;
                    v[(i * kDims[1] + j) * kDims[2] + k] = x;
                    std::memcpy(items.data() + at, &x, 4);
                    at += 4;
                }
            }
        }
        std::vector<std::uint8_t> shuffled(items.size());
        b2nd::codec::shuffle(4, items.size(), items.data(), shuffled.data());
        const hsize_t origin[3] = {0, 0, 0};
        REQUIRE(H5Dwrite_chunk(d.id, H5P_DEFAULT, 0x2, origin, shuffled.size(), shuffled.data()) >=
                0);
    }
    return v;
}

std::vector<std::int32_t> box_of(const std::vector<std::int32_t>& v, const Box& b) {
    std::vector<std::int32_t> out;
    for (std::int64_t i = b.start[0]; i < b.start[0] + b.count[0]; ++i) {
        for (std::int64_t j = b.start[1]; j < b.start[1] + b.count[1]; ++j) {
            for (std::int64_t k = b.start[2]; k < b.start[2] + b.count[2]; ++k) {
                out.push_back(v[static_cast<std::size_t>((i * 36 + j) * 20 + k)]);
            }
        }
    }
    return out;
}

std::vector<std::int32_t> read(const AnyArray& a, const Box& b) {
    std::vector<std::int32_t> out(static_cast<std::size_t>(b.size()));
    a.read(b, out.data(), out.size() * 4);
    return out;
}

}  // namespace

TEST_CASE("hdf5 direct: deflate + shuffle chunks decoded here read what libhdf5 wrote",
          "[bridges][hdf5]") {
    b2nd::test::TempDir dir;
    const bool fletcher = GENERATE(false, true);
    CAPTURE(fletcher);
    const std::string file = dir / "d.h5";
    const std::vector<std::int32_t> v = write_file(file, fletcher, !fletcher);
    for (const int threads : {1, 2}) {
        b2nd::OpenOptions o;
        o.nthreads = threads;
        const AnyArray a = AnyArray::open(file + ":/d", o);
        CHECK(a.chunk_shape() == b2nd::Shape{16, 12, 20});
        for (const Box& b :
             {Box::whole({50, 36, 20}), Box::region({49, 0, 0}, {1, 36, 20}),
              Box::region({0, 0, 3}, {50, 36, 1}), Box::region({10, 5, 2}, {30, 25, 15}),
              Box::region({20, 15, 0}, {4, 4, 20})}) {
            CHECK(read(a, b) == box_of(v, b));
        }
    }
}

TEST_CASE("hdf5 direct: a damaged chunk is refused naming the dataset and the chunk",
          "[bridges][hdf5]") {
    b2nd::test::TempDir dir;
    const std::string file = dir / "d.h5";
    const std::vector<std::int32_t> v = write_file(file, false, false);
    haddr_t addr = 0;
    hsize_t size = 0;
    {
        auto held = b2nd::bridges::h5::lock();
        Id f{H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose};
        Id d{H5Dopen2(f.id, "/d", H5P_DEFAULT), H5Dclose};
        const hsize_t at[3] = {32, 24, 0};
        unsigned mask = 0;
        REQUIRE(H5Dget_chunk_info_by_coord(d.id, at, &mask, &addr, &size) >= 0);
    }
    // Bytes in the middle of the chunk's deflate stream.
    std::vector<std::uint8_t> bytes = b2nd::test::read_file(file);
    for (hsize_t k = size / 2; k < size / 2 + 16; ++k) {
        bytes[static_cast<std::size_t>(addr + k)] ^= 0x5a;
    }
    b2nd::test::write_file(file, bytes);
    const AnyArray a = AnyArray::open(file + ":/d");
    const Box other = Box::region({0, 0, 0}, {16, 36, 20});
    CHECK(read(a, other) == box_of(v, other));
    CHECK_THROWS_WITH(read(a, Box::region({40, 30, 0}, {1, 1, 1})),
                      Contains("d.h5:/d") && Contains("the chunk at (32, 24, 0): deflate"));
}

TEST_CASE("hdf5 direct: a chunk stored with every filter skipped must hold the chunk's size",
          "[bridges][hdf5]") {
    b2nd::test::TempDir dir;
    const std::string file = dir / "d.h5";
    const std::vector<std::int32_t> v = write_file(file, false, false);
    {
        // Chunk (0, 0, 0) replaced by 100 raw bytes whose filters are all marked as skipped.
        auto held = b2nd::bridges::h5::lock();
        Id f{H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT), H5Fclose};
        Id d{H5Dopen2(f.id, "/d", H5P_DEFAULT), H5Dclose};
        const hsize_t origin[3] = {0, 0, 0};
        const std::vector<std::uint8_t> raw(100, 7);
        REQUIRE(H5Dwrite_chunk(d.id, H5P_DEFAULT, 0x3, origin, raw.size(), raw.data()) >= 0);
    }
    const AnyArray a = AnyArray::open(file + ":/d");
    CHECK_THROWS_WITH(read(a, Box::region({0, 0, 0}, {1, 1, 1})),
                      Contains("the chunk at (0, 0, 0)") && Contains("100 bytes"));
    const Box other = Box::region({16, 0, 0}, {16, 12, 20});
    CHECK(read(a, other) == box_of(v, other));
}

#endif
