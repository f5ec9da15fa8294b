// HDF5 files made to hurt the reader, written here with libhdf5's C API: chunks that our Blosc and
// LZF decoders must refuse rather than hand libhdf5 a short buffer or allocate what the stream
// claims; external links, external storage and virtual datasets, which may name any file the
// user can read (refused by default, confined to the file's directory when allowed, never a
// FIFO); huge declared chunks, read a bounded block at a time. Run under ASan in CI.
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <b2nd/attrs.hpp>
#include <b2nd/b2nd.hpp>
#include <b2nd/codec/chunk_encoder.hpp>
#include <b2nd/ops.hpp>

#include "../../support/files.hpp"
#include "../../support/temp_dir.hpp"

#if B2ND_TEST_HDF5
#include "../../support/hdf5_id.hpp"
#include "bridges/hdf5_detail.hpp"
#include "bridges/hdf5_gate.hpp"
#include <sys/stat.h>

using b2nd::AnyArray;
using Catch::Matchers::Contains;

namespace {

constexpr H5Z_filter_t kLzf = 32000;
constexpr H5Z_filter_t kBlosc = 32001;

using b2nd::test::Id;

void need(herr_t status, const char* what) {
    if (status < 0) {
        throw std::runtime_error(std::string("test file: ") + what);
    }
}

void plain_dataset(const std::string& path,
                   const std::string& name,
                   const std::vector<std::uint8_t>& values,
                   bool create = true);

/// A filter that claims to encode (libhdf5 makes a dataset only with filters that can): it
/// stands in for ours while a test file is made; no chunk goes through it (H5Dwrite_chunk).
std::size_t no_filter(unsigned, std::size_t, const unsigned*, std::size_t, std::size_t*, void**) {
    return 0;
}

/// Makes a dataset that declares `filter` with `make`, then puts b2nd's decoders back.
template <class Make>
void with_encoder_of(H5Z_filter_t filter, const Make& make) {
    const H5Z_class2_t stand_in = {H5Z_CLASS_T_VERS, filter,  1,       1,
                                   "stand-in",       nullptr, nullptr, no_filter};
    need(H5Zregister(&stand_in), "register");
    make();
    b2nd::bridges::h5::register_filters();
}

void write_filtered(const std::string& path,
                    hsize_t n,
                    hsize_t chunk,
                    H5Z_filter_t filter,
                    const std::vector<unsigned>& cd,
                    const std::vector<std::vector<std::uint8_t>>& stored);

/// A 1-D int32 dataset /d of `n` items in chunks of `chunk`, declared filtered by `filter` (with
/// `cd`), whose chunks hold the raw `stored` bytes as written (H5Dwrite_chunk: no filter runs).
void filtered_file(const std::string& path,
                   hsize_t n,
                   hsize_t chunk,
                   H5Z_filter_t filter,
                   const std::vector<unsigned>& cd,
                   const std::vector<std::vector<std::uint8_t>>& stored) {
    with_encoder_of(filter, [&] { write_filtered(path, n, chunk, filter, cd, stored); });
}

void write_filtered(const std::string& path,
                    hsize_t n,
                    hsize_t chunk,
                    H5Z_filter_t filter,
                    const std::vector<unsigned>& cd,
                    const std::vector<std::vector<std::uint8_t>>& stored) {
    Id f{H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), H5Fclose};
    Id space{H5Screate_simple(1, &n, nullptr), H5Sclose};
    Id dcpl{H5Pcreate(H5P_DATASET_CREATE), H5Pclose};
    need(H5Pset_chunk(dcpl, 1, &chunk), "chunk");
    need(H5Pset_filter(dcpl, filter, H5Z_FLAG_OPTIONAL, cd.size(), cd.data()), "filter");
    Id d{H5Dcreate2(f, "/d", H5T_STD_I32LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT), H5Dclose};
    need(static_cast<herr_t>(d.id < 0 ? -1 : 0), "dataset");
    for (std::size_t i = 0; i < stored.size(); ++i) {
        const hsize_t at = i * chunk;
        need(H5Dwrite_chunk(d, H5P_DEFAULT, 0, &at, stored[i].size(), stored[i].data()),
             "chunk write");
    }
}

/// `items` int32 values i * 3 + 1, as bytes.
std::vector<std::uint8_t> ramp(std::size_t items) {
    std::vector<std::uint8_t> b(items * 4);
    for (std::size_t i = 0; i < items; ++i) {
        const auto v = static_cast<std::int32_t>(i * 3 + 1);
        std::memcpy(&b[i * 4], &v, 4);
    }
    return b;
}

/// `raw` as an LZF stream of literal runs only (valid, uncompressed).
std::vector<std::uint8_t> lzf_literals(const std::vector<std::uint8_t>& raw) {
    std::vector<std::uint8_t> s;
    for (std::size_t at = 0; at < raw.size(); at += 32) {
        const std::size_t run = std::min<std::size_t>(32, raw.size() - at);
        s.push_back(static_cast<std::uint8_t>(run - 1));
        s.insert(s.end(), raw.begin() + static_cast<std::ptrdiff_t>(at),
                 raw.begin() + static_cast<std::ptrdiff_t>(at + run));
    }
    return s;
}

/// A plain int32 dataset `name` of `values` in file `path` (created, or added to).
void plain_dataset(const std::string& path,
                   const std::string& name,
                   const std::vector<std::uint8_t>& values,
                   bool create) {
    Id f{create ? H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT)
                : H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT),
         H5Fclose};
    const hsize_t n = values.size() / 4;
    Id space{H5Screate_simple(1, &n, nullptr), H5Sclose};
    Id d{H5Dcreate2(f, name.c_str(), H5T_STD_I32LE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
         H5Dclose};
    need(H5Dwrite(d, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()), "write");
}

/// A file holding an external link /x to `target_file`:/d.
void external_link_file(const std::string& path, const std::string& target_file) {
    Id f{H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), H5Fclose};
    need(H5Lcreate_external(target_file.c_str(), "/d", f, "/x", H5P_DEFAULT, H5P_DEFAULT),
         "external link");
}

/// A file whose dataset /d (n int32) keeps its bytes in the external file `raw`.
void external_storage_file(const std::string& path, const std::string& raw, hsize_t n) {
    Id f{H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), H5Fclose};
    Id space{H5Screate_simple(1, &n, nullptr), H5Sclose};
    Id dcpl{H5Pcreate(H5P_DATASET_CREATE), H5Pclose};
    need(H5Pset_external(dcpl, raw.c_str(), 0, n * 4), "external");
    Id d{H5Dcreate2(f, "/d", H5T_STD_I32LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT), H5Dclose};
    need(static_cast<herr_t>(d.id < 0 ? -1 : 0), "dataset");
}

/// A file whose virtual dataset /v (n int32) maps `source_file`:`source` whole.
void virtual_file(const std::string& path,
                  const std::string& source_file,
                  const std::string& source,
                  hsize_t n,
                  bool create = true) {
    Id f{create ? H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT)
                : H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT),
         H5Fclose};
    Id space{H5Screate_simple(1, &n, nullptr), H5Sclose};
    Id dcpl{H5Pcreate(H5P_DATASET_CREATE), H5Pclose};
    need(H5Pset_virtual(dcpl, space, source_file.c_str(), source.c_str(), space), "virtual");
    Id d{H5Dcreate2(f, "/v", H5T_STD_I32LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT), H5Dclose};
    need(static_cast<herr_t>(d.id < 0 ? -1 : 0), "virtual dataset");
}

b2nd::OpenOptions external() {
    b2nd::OpenOptions o;
    o.hdf5_external = true;
    return o;
}

}  // namespace

TEST_CASE("hdf5 hostile: LZF chunks decode to exactly the chunk or are refused",
          "[bridges][hdf5][hostile]") {
    b2nd::test::TempDir tmp;
    const auto good = ramp(1024);  // a chunk: 1024 int32, 4096 bytes
    // A valid stream whose cd_values claim 4 GiB chunks: the dataset's size is what counts.
    filtered_file(tmp / "claims.h5", 1024, 1024, kLzf, {4, 4, 0xffffffffU}, {lzf_literals(good)});
    CHECK(AnyArray::open(tmp / "claims.h5").read() == good);
    // A stream that decodes to 8 bytes: never handed to libhdf5 as a 4096-byte chunk.
    filtered_file(tmp / "short.h5", 1024, 1024, kLzf, {4, 4, 4096}, {{7, 1, 2, 3, 4, 5, 6, 7, 8}});
    CHECK_THROWS_WITH(
        AnyArray::open(tmp / "short.h5").read(),
        Contains("short.h5:/d") && Contains("LZF") && Contains("8 bytes") && Contains("4096"));
    // A stream longer than the chunk, and 1 MiB of garbage for a 4 MiB chunk: refused once,
    // without growing a buffer to fit.
    std::vector<std::uint8_t> longer = lzf_literals(ramp(2048));
    filtered_file(tmp / "long.h5", 1024, 1024, kLzf, {}, {longer});
    CHECK_THROWS_WITH(AnyArray::open(tmp / "long.h5").read(),
                      Contains("LZF") && Contains("longer than the dataset's chunks"));
    std::vector<std::uint8_t> junk(1 << 20);
    for (std::size_t i = 0; i < junk.size(); ++i) {
        junk[i] = static_cast<std::uint8_t>((i * 2654435761U) >> 13);
    }
    filtered_file(tmp / "junk.h5", 1 << 20, 1 << 20, kLzf, {}, {junk});
    CHECK_THROWS_WITH(AnyArray::open(tmp / "junk.h5").read(b2nd::Box::region({5}, {1})),
                      Contains("LZF"));
    // The good chunk beside a bad one: the good one reads, the bad one is refused.
    filtered_file(tmp / "mixed.h5", 2048, 1024, kLzf, {},
                  {lzf_literals(good), {7, 1, 2, 3, 4, 5, 6, 7, 8}});
    const AnyArray mixed = AnyArray::open(tmp / "mixed.h5");
    CHECK(mixed.read(b2nd::Box::region({0}, {1024})) == good);
    CHECK_THROWS_WITH(mixed.read(b2nd::Box::region({1500}, {1})), Contains("LZF"));
}

TEST_CASE("hdf5 hostile: Blosc chunks of another size than the dataset's are refused",
          "[bridges][hdf5][hostile]") {
    b2nd::test::TempDir tmp;
    const auto good = ramp(1024);
    b2nd::codec::EncodeParams p;
    p.typesize = 4;
    p.codec = b2nd::codec::Codec::lz4;
    const std::vector<std::uint8_t> chunk =
        b2nd::codec::encode_chunk({good.data(), good.size()}, p);
    filtered_file(tmp / "good.h5", 1024, 1024, kBlosc, {2, 2, 4, 0xffffffffU}, {chunk});
    CHECK(AnyArray::open(tmp / "good.h5").read() == good);
    // A 32-byte special chunk that claims 2 GiB of zeros; one that holds 8 bytes.
    filtered_file(tmp / "bomb.h5", 1024, 1024, kBlosc, {2, 2, 4, 0xffffffffU},
                  {b2nd::codec::make_zeros_chunk(0x7fffffd8, 4, 1 << 16)});
    CHECK_THROWS_WITH(
        AnyArray::open(tmp / "bomb.h5").read(),
        Contains("bomb.h5:/d") && Contains("Blosc") && Contains("2147483608") && Contains("4096"));
    const std::vector<std::uint8_t> eight(good.begin(), good.begin() + 8);
    filtered_file(tmp / "short.h5", 1024, 1024, kBlosc, {},
                  {b2nd::codec::encode_chunk({eight.data(), eight.size()}, p)});
    CHECK_THROWS_WITH(AnyArray::open(tmp / "short.h5").read(), Contains("holds 8 bytes"));
    // A truncated chunk.
    filtered_file(tmp / "cut.h5", 1024, 1024, kBlosc, {},
                  {std::vector<std::uint8_t>(chunk.begin(), chunk.begin() + 20)});
    CHECK_THROWS_WITH(AnyArray::open(tmp / "cut.h5").read(), Contains("Blosc"));
}

TEST_CASE("hdf5 hostile: a huge declared chunk is read a bounded block at a time",
          "[bridges][hdf5][hostile]") {
    b2nd::test::TempDir tmp;
    // 600 MiB chunks, none written: a 1-element read must not allocate a chunk's worth.
    {
        Id f{H5Fcreate((tmp / "huge.h5").c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT),
             H5Fclose};
        const hsize_t dims[2] = {300000, 1000}, chunk[2] = {150000, 1000};
        Id space{H5Screate_simple(2, dims, nullptr), H5Sclose};
        Id dcpl{H5Pcreate(H5P_DATASET_CREATE), H5Pclose};
        need(H5Pset_chunk(dcpl, 2, chunk), "chunk");
        const float fill = 2.5f;
        need(H5Pset_fill_value(dcpl, H5T_NATIVE_FLOAT, &fill), "fill");
        Id d{H5Dcreate2(f, "/x", H5T_IEEE_F32LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT), H5Dclose};
        need(static_cast<herr_t>(d.id < 0 ? -1 : 0), "dataset");
    }
    const AnyArray a = AnyArray::open(tmp / "huge.h5");
    CHECK(a.chunk_shape() == b2nd::Shape{150000, 1000});
    CHECK(a.grid().block_nbytes() <= (std::int64_t{8} << 20));
    const auto got = a.read(b2nd::Box::region({299999, 998}, {1, 2}));
    float v[2];
    std::memcpy(v, got.data(), sizeof v);
    CHECK(v[0] == 2.5f);
    CHECK(v[1] == 2.5f);
}

TEST_CASE("hdf5 hostile: external links are refused, or followed only inside the directory",
          "[bridges][hdf5][hostile]") {
    b2nd::test::TempDir tmp, elsewhere;
    const auto values = ramp(16);
    plain_dataset(tmp / "target.h5", "/d", values);
    plain_dataset(elsewhere / "secret.h5", "/d", values);
    external_link_file(tmp / "link.h5", "target.h5");
    CHECK_THROWS_AS(AnyArray::open(tmp / "link.h5:/x"), b2nd::UsageError);
    CHECK_THROWS_WITH(AnyArray::open(tmp / "link.h5:/x"),
                      Contains("link.h5") && Contains("external link") && Contains("target.h5") &&
                          Contains("hdf5_external"));
    CHECK(AnyArray::open(tmp / "link.h5:/x", external()).read() == values);
    // Out of the directory: an absolute path, a climb, a link out; and a FIFO (never opened).
    external_link_file(tmp / "abs.h5", elsewhere / "secret.h5");
    CHECK_THROWS_WITH(AnyArray::open(tmp / "abs.h5:/x", external()), Contains("absolute path"));
    std::filesystem::create_directories(tmp / "sub");
    external_link_file(tmp / "sub/up.h5", "../target.h5");
    CHECK_THROWS_WITH(AnyArray::open(tmp / "sub/up.h5:/x", external()), Contains("climbs out"));
    std::filesystem::create_symlink(elsewhere / "secret.h5", tmp / "out.h5");
    external_link_file(tmp / "via.h5", "out.h5");
    CHECK_THROWS_WITH(AnyArray::open(tmp / "via.h5:/x", external()),
                      Contains("leads out of the directory"));
    REQUIRE(::mkfifo((tmp / "fifo.h5").c_str(), 0600) == 0);
    external_link_file(tmp / "pipe.h5", "fifo.h5");
    CHECK_THROWS_WITH(AnyArray::open(tmp / "pipe.h5:/x", external()),
                      Contains("not a regular file"));
}

TEST_CASE("hdf5 hostile: external storage is refused, or read only from the directory",
          "[bridges][hdf5][hostile]") {
    b2nd::test::TempDir tmp, elsewhere;
    const auto values = ramp(16);
    {
        std::ofstream raw(tmp / "raw.bin", std::ios::binary);
        raw.write(reinterpret_cast<const char*>(values.data()),
                  static_cast<std::streamsize>(values.size()));
        std::ofstream secret(elsewhere / "secret.bin", std::ios::binary);
        secret.write(reinterpret_cast<const char*>(values.data()),
                     static_cast<std::streamsize>(values.size()));
    }
    external_storage_file(tmp / "ext.h5", "raw.bin", 16);
    CHECK_THROWS_WITH(AnyArray::open(tmp / "ext.h5"),
                      Contains("ext.h5:/d") && Contains("external file") && Contains("raw.bin") &&
                          Contains("hdf5_external"));
    CHECK(AnyArray::open(tmp / "ext.h5", external()).read() == values);
    external_storage_file(tmp / "abs.h5", elsewhere / "secret.bin", 16);
    CHECK_THROWS_WITH(AnyArray::open(tmp / "abs.h5", external()), Contains("absolute path"));
    external_storage_file(tmp / "env.h5", "/proc/self/environ", 16);
    CHECK_THROWS_WITH(AnyArray::open(tmp / "env.h5"), Contains("external file"));
    CHECK_THROWS_WITH(AnyArray::open(tmp / "env.h5", external()), Contains("absolute path"));
    std::filesystem::create_symlink(elsewhere / "secret.bin", tmp / "out.bin");
    external_storage_file(tmp / "via.h5", "out.bin", 16);
    CHECK_THROWS_WITH(AnyArray::open(tmp / "via.h5", external()), Contains("leads out"));
    REQUIRE(::mkfifo((tmp / "fifo.bin").c_str(), 0600) == 0);
    external_storage_file(tmp / "pipe.h5", "fifo.bin", 16);
    CHECK_THROWS_WITH(AnyArray::open(tmp / "pipe.h5", external()), Contains("not a regular file"));
}

TEST_CASE("hdf5 hostile: virtual datasets are refused, self-mapping ones always",
          "[bridges][hdf5][hostile]") {
    b2nd::test::TempDir tmp;
    const auto values = ramp(16);
    plain_dataset(tmp / "src.h5", "/d", values);
    virtual_file(tmp / "vds.h5", "src.h5", "/d", 16);
    CHECK_THROWS_WITH(AnyArray::open(tmp / "vds.h5:/v"), Contains("vds.h5:/v") &&
                                                             Contains("virtual dataset") &&
                                                             Contains("hdf5_external"));
    CHECK(AnyArray::open(tmp / "vds.h5:/v", external()).read() == values);
    // A dataset mapped from itself (libhdf5 recurses until it crashes when it is read).
    virtual_file(tmp / "self.h5", ".", "/v", 16);
    CHECK_THROWS_WITH(AnyArray::open(tmp / "self.h5:/v"), Contains("virtual dataset"));
    CHECK_THROWS_WITH(AnyArray::open(tmp / "self.h5:/v", external()),
                      Contains("itself a virtual dataset"));
    virtual_file(tmp / "far.h5", "/etc/passwd", "/d", 16);
    CHECK_THROWS_WITH(AnyArray::open(tmp / "far.h5:/v", external()), Contains("absolute path"));
}

TEST_CASE("hdf5 hostile: listing and attributes follow no link, external storage or mapping",
          "[bridges][hdf5][hostile]") {
    b2nd::test::TempDir tmp;
    plain_dataset(tmp / "src.h5", "/d", ramp(16));
    external_link_file(tmp / "link.h5", "/etc/passwd");
    external_storage_file(tmp / "ext.h5", "/etc/passwd", 16);
    virtual_file(tmp / "self.h5", ".", "/v", 16);
    virtual_file(tmp / "far.h5", "/etc/passwd", "/d", 16);
    // The link is listed with its target, never followed; its attributes are not read through it.
    const auto link = b2nd::list_hdf5(tmp / "link.h5");
    REQUIRE(link.size() == 1);
    CHECK(link[0].kind == "external link");
    CHECK(link[0].note == "/etc/passwd:/d");
    CHECK_THROWS_WITH(b2nd::hdf5_attributes(tmp / "link.h5:/x"), Contains("never followed"));
    CHECK_THROWS_WITH(b2nd::list_hdf5(tmp / "link.h5:/x"), Contains("never followed"));
    // Datasets whose data lies elsewhere (or nowhere: mapped from themselves) are described
    // without their data being read, and without a crash.
    for (const char* f : {"ext.h5", "self.h5", "far.h5"}) {
        INFO(f);
        const auto listed = b2nd::list_hdf5(tmp / f);
        REQUIRE(listed.size() == 1);
        CHECK(listed[0].kind == "dataset");
        CHECK(listed[0].shape == b2nd::Shape{16});
        CHECK(
            b2nd::hdf5_attributes(tmp / (std::string(f) + (f[0] == 'e' ? ":/d" : ":/v"))).empty());
    }
}

TEST_CASE("hdf5 hostile: filters only a plugin decodes are refused when plugins are off",
          "[bridges][hdf5][hostile]") {
    b2nd::test::TempDir tmp;
    // LZ4 (32004), encoded by Debian's hdf5-filter-plugin as libhdf5 writes the file.
    constexpr H5Z_filter_t kLz4 = 32004;
    if (H5Zfilter_avail(kLz4) <= 0) {
        H5Eclear2(H5E_DEFAULT);
        B2ND_SKIP("no HDF5 LZ4 plugin (install hdf5-filter-plugin)");
    }
    const auto values = ramp(4096);
    {
        Id f{H5Fcreate((tmp / "lz4.h5").c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT),
             H5Fclose};
        const hsize_t n = 4096, chunk = 1024;
        Id space{H5Screate_simple(1, &n, nullptr), H5Sclose};
        Id dcpl{H5Pcreate(H5P_DATASET_CREATE), H5Pclose};
        need(H5Pset_chunk(dcpl, 1, &chunk), "chunk");
        need(H5Pset_filter(dcpl, kLz4, H5Z_FLAG_MANDATORY, 0, nullptr), "filter");
        Id d{H5Dcreate2(f, "/d", H5T_STD_I32LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT), H5Dclose};
        need(H5Dwrite(d, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()), "write");
    }
    CHECK(AnyArray::open(tmp / "lz4.h5").read() == values);
    b2nd::OpenOptions off;
    off.hdf5_plugins = false;
    CHECK_THROWS_WITH(AnyArray::open(tmp / "lz4.h5", off),
                      Contains("lz4.h5:/d") && Contains("32004") && Contains("plugin") &&
                          Contains("hdf5_plugins"));
    // libhdf5's own filters and ours need no plugin.
    filtered_file(tmp / "lzf.h5", 1024, 1024, kLzf, {}, {lzf_literals(ramp(1024))});
    CHECK(AnyArray::open(tmp / "lzf.h5", off).read() == ramp(1024));
}

TEST_CASE("hdf5 hostile: ten thousand attributes open, all of them, and import refuses by name",
          "[bridges][hdf5][hostile]") {
    b2nd::test::TempDir tmp;
    constexpr int kAttrs = 10000;  // more than a frame's 8192 vlmetalayers
    {
        Id fapl{H5Pcreate(H5P_FILE_ACCESS), H5Pclose};
        need(H5Pset_libver_bounds(fapl, H5F_LIBVER_V18, H5F_LIBVER_LATEST), "libver");
        Id f{H5Fcreate((tmp / "attrs.h5").c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl), H5Fclose};
        const hsize_t n = 4;
        Id space{H5Screate_simple(1, &n, nullptr), H5Sclose};
        Id dcpl{H5Pcreate(H5P_DATASET_CREATE), H5Pclose};
        need(H5Pset_attr_phase_change(dcpl, 0, 0), "dense attributes");
        Id d{H5Dcreate2(f, "/d", H5T_STD_I32LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT), H5Dclose};
        const std::vector<std::int32_t> v{1, 2, 3, 4};
        need(H5Dwrite(d, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()), "write");
        Id scalar{H5Screate(H5S_SCALAR), H5Sclose};
        for (int i = 0; i < kAttrs; ++i) {
            const std::string name = "a" + std::to_string(i);
            Id a{H5Acreate2(d, name.c_str(), H5T_STD_I64LE, scalar, H5P_DEFAULT, H5P_DEFAULT),
                 H5Aclose};
            const std::int64_t x = i * 3;
            need(H5Awrite(a, H5T_NATIVE_INT64, &x), "attribute");
        }
    }
    const AnyArray a = AnyArray::open(tmp / "attrs.h5");
    const b2nd::Attrs attrs = a.attrs();
    REQUIRE(attrs.size() == kAttrs);
    CHECK(attrs.get<std::int64_t>("a0") == 0);
    CHECK(attrs.get<std::int64_t>("a9999") == 29997);
    std::int64_t sum = 0;
    for (const auto& [name, value] : attrs.items()) {
        sum += value.as<std::int64_t>();
    }
    CHECK(sum == 3 * std::int64_t{kAttrs} * (kAttrs - 1) / 2);
    // A b2nd file holds at most 8192: a copy says so before writing, and copies without them.
    CHECK_THROWS_WITH(b2nd::copy(a, tmp / "out.b2nd"),
                      Contains("attrs.h5") && Contains("10000 attributes") && Contains("8192"));
    CHECK(!std::filesystem::exists(tmp / "out.b2nd"));
    b2nd::CopyOptions bare;
    bare.metadata = false;
    CHECK(b2nd::copy(a, tmp / "out.b2nd", bare).read() == a.read());
}

TEST_CASE("hdf5 hostile: an attribute of a null dataspace is left out, the dataset reads",
          "[bridges][hdf5][hostile]") {
    b2nd::test::TempDir tmp;
    const auto values = ramp(4);
    plain_dataset(tmp / "empty.h5", "/d", values);
    {
        Id f{H5Fopen((tmp / "empty.h5").c_str(), H5F_ACC_RDWR, H5P_DEFAULT), H5Fclose};
        Id d{H5Dopen2(f, "/d", H5P_DEFAULT), H5Dclose};
        Id null{H5Screate(H5S_NULL), H5Sclose};
        Id empty{H5Acreate2(d, "empty", H5T_IEEE_F64LE, null, H5P_DEFAULT, H5P_DEFAULT), H5Aclose};
        Id scalar{H5Screate(H5S_SCALAR), H5Sclose};
        Id ok{H5Acreate2(d, "ok", H5T_STD_I64LE, scalar, H5P_DEFAULT, H5P_DEFAULT), H5Aclose};
        const std::int64_t one = 1;
        need(H5Awrite(ok, H5T_NATIVE_INT64, &one), "attribute");
    }
    const AnyArray a = AnyArray::open(tmp / "empty.h5");
    CHECK(a.read() == values);
    CHECK(a.attrs().get<std::int64_t>("ok") == 1);
    CHECK_FALSE(a.attrs().contains("empty"));
    // What `b2nd info` says of it: left out, and why.
    const b2nd::Value info = b2nd::bridges::hdf5_summary({tmp / "empty.h5", "/d"}, {});
    const b2nd::Value* left = info.find("attributes_left_out");
    REQUIRE(left != nullptr);
    REQUIRE(left->find("empty") != nullptr);
    CHECK_THAT(left->find("empty")->as<std::string>(), Contains("null dataspace"));
    CHECK(left->find("ok") == nullptr);
}

TEST_CASE("hdf5 hostile: dimension-scale records that are not what they say are ignored",
          "[bridges][hdf5][hostile]") {
    b2nd::test::TempDir tmp;
    const auto values = ramp(4);
    const std::string file = tmp / "dims.h5";
    plain_dataset(file, "/d", values);
    plain_dataset(file, "/s", values, false);
    {
        // /d's DIMENSION_LIST is integers, not references; /s says it is a scale and its
        // REFERENCE_LIST is integers too.
        Id f{H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT), H5Fclose};
        const hsize_t two = 2;
        Id list{H5Screate_simple(1, &two, nullptr), H5Sclose};
        const std::int32_t junk[2] = {7, -1};
        for (const char* at : {"/d", "/s"}) {
            Id d{H5Dopen2(f, at, H5P_DEFAULT), H5Dclose};
            const char* name = at[1] == 'd' ? "DIMENSION_LIST" : "REFERENCE_LIST";
            Id a{H5Acreate2(d, name, H5T_STD_I32LE, list, H5P_DEFAULT, H5P_DEFAULT), H5Aclose};
            need(H5Awrite(a, H5T_NATIVE_INT32, junk), "junk list");
        }
        Id s{H5Dopen2(f, "/s", H5P_DEFAULT), H5Dclose};
        Id str{H5Tcopy(H5T_C_S1), H5Tclose};
        need(H5Tset_size(str, 16), "string type");
        Id scalar{H5Screate(H5S_SCALAR), H5Sclose};
        Id cls{H5Acreate2(s, "CLASS", str, scalar, H5P_DEFAULT, H5P_DEFAULT), H5Aclose};
        const char text[16] = "DIMENSION_SCALE";
        need(H5Awrite(cls, str, text), "class");
    }
    const AnyArray a = AnyArray::open(file + ":/d");
    CHECK(a.read() == values);
    CHECK_FALSE(a.attrs().contains("_ARRAY_DIMENSIONS"));
    // Replacing either: done, or refused with the file as it was; never a crash.
    for (const char* at : {"/d", "/s"}) {
        INFO(at);
        const auto before = b2nd::test::read_file(file);
        b2nd::Hdf5ExportOptions o;
        o.overwrite = true;
        try {
            b2nd::export_hdf5(a, file + ":" + at, o);
            CHECK(AnyArray::open(file + ":" + at).read() == values);
        } catch (const b2nd::Error& e) {
            CHECK_THAT(std::string(e.what()), Contains("dims.h5"));
            CHECK(b2nd::test::read_file(file) == before);
        }
    }
}

#else

TEST_CASE("hdf5 hostile: needs libhdf5", "[bridges][hdf5][hostile]") {
    B2ND_SKIP("this build has no libhdf5 (install libhdf5-dev)");
}

#endif
