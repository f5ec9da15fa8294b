// In-memory arrays: writable like files (writes, resize, append, attributes, sparse frames), their
// directory removed with the last handle; to_cframe gives a frame that open_buffer and open read
// back with the same content and attributes; save writes a file.
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include <b2nd/b2nd.hpp>

#include "../../support/data.hpp"
#include "../../support/files.hpp"
#include "../../support/reference.hpp"
#include "../../support/temp_dir.hpp"

using b2nd::AnyArray;
using b2nd::DType;
using b2nd::NDArray;
using b2nd::Shape;

namespace {

/// Points B2ND_MEMORY_DIR at a fresh directory for the scope.
struct MemoryDir {
    b2nd::test::TempDir dir;
    MemoryDir() { ::setenv("B2ND_MEMORY_DIR", dir.path().c_str(), 1); }
    ~MemoryDir() { ::unsetenv("B2ND_MEMORY_DIR"); }
    std::size_t entries() const {
        std::size_t n = 0;
        for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir.path())) {
            ++n;
        }
        return n;
    }
};

}  // namespace

TEST_CASE("memory: an in-memory array does what a file does, and goes with its last handle",
          "[array][memory]") {
    MemoryDir mem;
    for (const bool sparse : {false, true}) {
        INFO("sparse " << sparse);
        b2nd::CreateOptions o = b2nd::test::chunked({8, 8}, {4, 4});
        o.sparse = sparse;
        b2nd::test::SplitMix rng(3);
        const auto data = b2nd::test::random_items(rng, DType::parse("<i8"), 20 * 30);
        AnyArray keep;
        {
            AnyArray a = AnyArray::create_in_memory_from(DType::parse("<i8"), {20, 30},
                                                         {data.data(), data.size()}, o);
            CHECK(a.in_memory());
            CHECK(a.writable());
            CHECK(a.sparse() == sparse);
            CHECK(mem.entries() == 1);
            CHECK(a.read() == data);
            // Writes, resize, append, attributes.
            const std::vector<std::uint8_t> row(30 * 8, 0x11);
            a.write(b2nd::Box::region({3, 0}, {1, 30}), {row.data(), row.size()});
            a.append(0, {row.data(), row.size()});
            CHECK(a.shape() == Shape{21, 30});
            a.attrs()["units"] = "m";
            std::vector<std::uint8_t> want = data;
            std::copy(row.begin(), row.end(), want.begin() + 3 * 30 * 8);
            want.insert(want.end(), row.begin(), row.end());
            CHECK(a.read() == want);
            a.compact();
            CHECK(a.read() == want);
            keep = a;  // a copy of the handle keeps the array
        }
        CHECK(mem.entries() == 1);
        CHECK(keep.attrs().get<std::string>("units") == "m");
        keep = AnyArray();
        CHECK(mem.entries() == 0);
    }
}

TEST_CASE("memory: to_cframe, open_buffer and save", "[array][memory]") {
    MemoryDir mem;
    b2nd::test::TempDir files;
    std::vector<float> v(37 * 11);
    for (std::size_t i = 0; i < v.size(); ++i) {
        v[i] = static_cast<float>(i) * 0.5F;
    }
    auto a =
        NDArray<float>::create_in_memory_from({37, 11}, v, b2nd::test::chunked({10, 11}, {5, 11}));
    a.any().attrs()["calib"] = b2nd::Value::map({{"offset", 1.5}});

    const std::vector<std::uint8_t> frame = a.to_cframe();
    CHECK(mem.entries() == 1);  // the scratch copy is gone, the array stays
    const auto b = NDArray<float>::open_buffer({frame.data(), frame.size()});
    CHECK(b.read() == v);
    CHECK(b.shape() == Shape{37, 11});
    CHECK(b.chunk_shape() == Shape{10, 11});
    CHECK(b.any().attrs().get("calib")["offset"].as<double>() == 1.5);
    // The bytes are a whole contiguous frame: as a file, it opens.
    {
        std::ofstream(files / "f.b2nd", std::ios::binary)
            .write(reinterpret_cast<const char*>(frame.data()),
                   static_cast<std::streamsize>(frame.size()));
    }
    CHECK(NDArray<float>::open(files / "f.b2nd").read() == v);
    CHECK_THROWS_AS(NDArray<double>::open_buffer({frame.data(), frame.size()}), b2nd::UsageError);
    // Truncated frames are refused with a clear error.
    CHECK_THROWS_AS(AnyArray::open_buffer({frame.data(), frame.size() / 2}), b2nd::FormatError);

    const auto s = a.save(files / "s.b2nd");
    CHECK_FALSE(s.in_memory());
    CHECK_FALSE(s.any().sparse());
    CHECK(NDArray<float>::open(files / "s.b2nd").read() == v);
    CHECK_THROWS_AS(a.save(files / "s.b2nd"), b2nd::UsageError);
    CHECK(a.save(files / "s.b2nd", true).read() == v);

    // A file-backed array has a frame to give too, and a corpus file round trips.
    CHECK(AnyArray::open(files / "s.b2nd").to_cframe().size() > 0);
    if (!b2nd::test::corpus_dir().empty()) {
        const std::string root = b2nd::test::corpus_dir();
        const auto c = AnyArray::open(root + "/medium_f8_2d_sframe.b2frame");
        const auto bytes = c.to_cframe();
        const auto back = AnyArray::open_buffer({bytes.data(), bytes.size()});
        CHECK(back.read() == b2nd::test::read_npy_payload(root + "/medium_f8_2d_sframe.npy").data);
        CHECK_FALSE(back.sparse());
    }
}
