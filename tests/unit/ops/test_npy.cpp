// NumPy .npy files: headers parsed strictly (every truncation, hostile shapes and dtypes), files
// written and read back, arrays exported by box and imported, against the test-side .npy reader
// and element-by-element slicer.
#include <fstream>

#include <catch2/catch.hpp>

#include <b2nd/b2nd.hpp>
#include <b2nd/npy.hpp>

#include "../../support/data.hpp"
#include "../../support/files.hpp"
#include "../../support/random_box.hpp"
#include "../../support/reference.hpp"
#include "../../support/temp_dir.hpp"

using Catch::Matchers::Contains;

namespace {

void write_bytes(const std::string& path, const std::vector<std::uint8_t>& b, std::size_t n) {
    std::ofstream(path, std::ios::binary | std::ios::trunc)
        .write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(n));
}

}  // namespace

TEST_CASE("npy: headers are parsed strictly", "[array]") {
    using b2nd::parse_npy_header;
    auto npy = [](const std::string& dict) {
        const std::string text =
            std::string("\x93NUMPY\x01\x00", 8) + static_cast<char>(dict.size()) + '\0' + dict;
        return std::vector<std::uint8_t>(text.begin(), text.end());
    };
    const auto good = npy("{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }");
    const b2nd::NpyHeader h = parse_npy_header(good);
    CHECK(h.dtype.str() == "<f4");
    CHECK(h.shape == b2nd::Shape{3, 4});
    CHECK(h.nbytes == 48);
    CHECK(h.data_offset == good.size());
    CHECK(parse_npy_header(
              npy("{'descr': [('a', '<i4'), ('b', '|S2')], 'fortran_order': True, 'shape': (), }"))
              .dtype.itemsize() == 6);
    CHECK_THROWS_WITH(parse_npy_header(npy("{'descr': '<f4', 'shape': (3,), }")),
                      Contains("fortran_order"));
    CHECK_THROWS_AS(
        parse_npy_header(npy("{'descr': '<q4', 'fortran_order': False, 'shape': (3,), }")),
        b2nd::FormatError);
    CHECK_THROWS_WITH(
        parse_npy_header(
            npy("{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296), }")),
        Contains("too large"));
    CHECK_THROWS_AS(
        parse_npy_header(npy("{'descr': '<f8', 'fortran_order': False, 'shape': (3, x), }")),
        b2nd::FormatError);
    auto bad_magic = good;
    bad_magic[1] = 'X';
    CHECK_THROWS_WITH(parse_npy_header(bad_magic), Contains("magic"));
    for (std::size_t n = 0; n < good.size(); ++n) {
        CHECK_THROWS_AS(parse_npy_header({good.data(), n}), b2nd::FormatError);
    }
    // The data shorter than the header says.
    b2nd::test::TempDir tmp;
    auto file = good;
    file.resize(file.size() + 40);
    write_bytes(tmp / "short.npy", file, file.size());
    CHECK_THROWS_WITH(b2nd::NpyFile::open(tmp / "short.npy"),
                      Contains("short.npy") && Contains("needs 48 bytes"));
}

TEST_CASE("npy: written files read back, in this library and in the test-side reader", "[array]") {
    b2nd::test::TempDir tmp;
    b2nd::test::SplitMix rng(5);
    for (const char* descr : {"<f8", ">i2", "|b1", "<c8", "[('x', '<u2'), ('y', '|S3')]"}) {
        INFO(descr);
        const b2nd::DType dt = b2nd::DType::parse(descr);
        const b2nd::Shape shape{3, 0 + 5, 2};
        const auto data = b2nd::test::random_items(rng, dt, b2nd::test::count_of(shape));
        b2nd::write_npy(tmp / "w.npy", dt, shape, {data.data(), data.size()});
        const b2nd::NpyFile f = b2nd::NpyFile::open(tmp / "w.npy");
        CHECK(f.header().dtype == dt);
        CHECK(f.header().shape == shape);
        CHECK_FALSE(f.header().fortran_order);
        CHECK(f.header().data_offset % 64 == 0);
        CHECK(std::vector<std::uint8_t>(f.data().begin(), f.data().end()) == data);
        CHECK(b2nd::test::read_npy_payload(tmp / "w.npy").data == data);
    }
}

TEST_CASE("npy: a sink replaces an existing file only when told to", "[array]") {
    b2nd::test::TempDir tmp;
    const b2nd::DType dt = b2nd::DType::parse("<i4");
    const std::vector<std::int32_t> v{1, 2, 3};
    const b2nd::ByteSpan bytes{reinterpret_cast<const std::uint8_t*>(v.data()), 12};
    b2nd::write_npy(tmp / "e.npy", dt, {3}, bytes);
    const auto before = b2nd::test::read_file(tmp / "e.npy");
    CHECK_THROWS_AS(b2nd::NpySink(tmp / "e.npy", false), b2nd::UsageError);
    CHECK_THROWS_WITH(b2nd::NpySink(tmp / "e.npy", false),
                      Contains("e.npy") && Contains("already exists"));
    CHECK(b2nd::test::read_file(tmp / "e.npy") == before);
    // Allowed (the default): replaced whole.
    const std::vector<std::int32_t> w{7, 8};
    b2nd::NpySink sink(tmp / "e.npy");
    sink.begin(dt, {2});
    sink.write({reinterpret_cast<const std::uint8_t*>(w.data()), 8});
    sink.finish();
    const b2nd::NpyFile f = b2nd::NpyFile::open(tmp / "e.npy");
    CHECK(f.header().shape == b2nd::Shape{2});
    CHECK(std::vector<std::uint8_t>(f.data().begin(), f.data().end()) ==
          std::vector<std::uint8_t>({7, 0, 0, 0, 8, 0, 0, 0}));
}

TEST_CASE("npy: export of boxes and import round trip", "[array]") {
    b2nd::test::TempDir tmp;
    const auto v = b2nd::test::generate<std::int32_t>(
        12 * 9 * 7, [](std::size_t i) { return static_cast<std::int64_t>(i * 37 % 501) - 250; });
    const auto t = b2nd::NDArray<std::int32_t>::create_from(
        tmp / "a.b2nd", {12, 9, 7}, v, b2nd::test::chunked({5, 4, 3}, {2, 2, 2}));
    const std::vector<std::uint8_t> bytes(
        reinterpret_cast<const std::uint8_t*>(v.data()),
        reinterpret_cast<const std::uint8_t*>(v.data() + v.size()));
    b2nd::test::SplitMix rng(9);
    for (int round = 0; round < 10; ++round) {
        const b2nd::Box b = b2nd::test::random_box(t.shape(), rng);
        INFO(b.str());
        b2nd::export_npy(t.any(), b, b.count, tmp / "e.npy");
        CHECK(b2nd::test::read_npy_payload(tmp / "e.npy").data ==
              b2nd::test::reference_slice(bytes, t.shape(), 4, b.start, b.count, b.step));
    }
    b2nd::export_npy(t.any(), b2nd::Box::whole(t.shape()), t.shape(), tmp / "all.npy");
    const b2nd::AnyArray back = b2nd::import_npy(tmp / "all.npy", tmp / "b.b2frame", [] {
        b2nd::CreateOptions o = b2nd::test::chunked({7, 7, 7}, {7, 7, 7});
        o.sparse = true;
        return o;
    }());
    CHECK(back.shape() == t.shape());
    CHECK(back.dtype() == t.dtype());
    CHECK(back.sparse());
    CHECK(back.read() == bytes);
    CHECK_THROWS_AS(
        b2nd::export_npy(t.any(), b2nd::Box::region({0, 0, 0}, {13, 1, 1}), {13}, tmp / "bad.npy"),
        b2nd::UsageError);
}

TEST_CASE("npy: Fortran-order files import as NumPy reads them", "[array]") {
    b2nd::test::TempDir tmp;
    // (3, 4, 5) int32, a[i, j, k] = 100 i + 10 j + k, stored in Fortran order (i fastest).
    const b2nd::Shape shape{3, 4, 5};
    std::string dict = "{'descr': '<i4', 'fortran_order': True, 'shape': (3, 4, 5), }";
    while ((10 + dict.size() + 1) % 64 != 0) {
        dict += ' ';
    }
    dict += '\n';
    std::vector<std::uint8_t> file = {
        0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, static_cast<std::uint8_t>(dict.size()), 0};
    file.insert(file.end(), dict.begin(), dict.end());
    for (std::int32_t k = 0; k < 5; ++k) {
        for (std::int32_t j = 0; j < 4; ++j) {
            for (std::int32_t i = 0; i < 3; ++i) {
                const std::int32_t v = 100 * i + 10 * j + k;
                const auto* p = reinterpret_cast<const std::uint8_t*>(&v);
                file.insert(file.end(), p, p + 4);
            }
        }
    }
    write_bytes(tmp / "f.npy", file, file.size());
    for (const bool progress : {false, true}) {
        INFO("progress " << progress);
        b2nd::CreateOptions o;
        o.chunk_shape = {2, 3, 5};
        o.overwrite = true;
        int ticks = 0;
        const b2nd::AnyArray a = b2nd::import_npy(
            tmp / "f.npy", tmp / "f.b2nd", o,
            progress ? b2nd::NpyProgress([&](std::int64_t, std::int64_t) { ++ticks; })
                     : b2nd::NpyProgress());
        REQUIRE(a.shape() == shape);
        const auto b = b2nd::NDArray<std::int32_t>(a).read();
        std::size_t at = 0;
        for (std::int32_t i = 0; i < 3; ++i) {
            for (std::int32_t j = 0; j < 4; ++j) {
                for (std::int32_t k = 0; k < 5; ++k) {
                    CHECK(b[at++] == 100 * i + 10 * j + k);
                }
            }
        }
        CHECK((ticks > 0) == progress);
    }
}
