// Arrays written as Zarr arrays read back with our reader (v3 shards of the array's blocks, v2
// chunks), with their attributes and geometry; the shard index is checked; what is at the path
// is replaced only when asked and only when it is a Zarr array; dtypes v3 has no type for are
// refused by name.
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include <b2nd/b2nd.hpp>

#include "../../support/files.hpp"
#include "../../support/temp_dir.hpp"

using b2nd::AnyArray;
using Catch::Matchers::Contains;

namespace {

AnyArray sample(const std::string& path) {
    b2nd::CreateOptions co;
    co.chunk_shape = {8, 10};
    co.block_shape = {4, 4};  // 4 does not divide 10: inner chunks of 2 along that axis
    std::vector<std::int32_t> v(21 * 23);
    for (std::size_t i = 0; i < v.size(); ++i) {
        v[i] = static_cast<std::int32_t>(i * 7919 % 1000) - 500;
    }
    AnyArray a = b2nd::NDArray<std::int32_t>::create_from(path, {21, 23}, v, co).any();
    a.attrs().set("units", "m");
    a.attrs().set("levels", b2nd::Value(b2nd::Value::Array{1, 2, 3}));
    return a;
}

}  // namespace

TEST_CASE("zarr write: v3 and v2 read back, shards of blocks, attributes along",
          "[bridges][zarr]") {
    b2nd::test::TempDir dir;
    const AnyArray a = sample(dir / "a.b2nd");
    for (const int format : {3, 2}) {
        INFO("v" << format);
        const std::string out = dir / ("a" + std::to_string(format) + ".zarr");
        b2nd::ZarrExportOptions o;
        o.format = format;
        b2nd::export_zarr(a, out, o);
        const AnyArray z = AnyArray::open(out);
        CHECK(z.read() == a.read());
        CHECK(z.chunk_shape() == a.chunk_shape());
        CHECK(z.block_shape() == (format == 3 ? b2nd::Shape{4, 2} : a.chunk_shape()));
        CHECK(z.attrs().get<std::string>("units") == "m");
        CHECK(z.attrs().get("levels") == b2nd::Value(b2nd::Value::Array{1, 2, 3}));
        CHECK(std::filesystem::exists(out + (format == 3 ? "/zarr.json" : "/.zarray")));
    }
    // A shard's index is checked: one flipped byte in it is refused, naming the shard.
    const std::string shard = dir / "a3.zarr/c/0/0";
    std::vector<std::uint8_t> bytes = b2nd::test::read_file(shard);
    bytes[bytes.size() - 10] ^= 0x40;
    std::filesystem::remove(shard);
    std::ofstream(shard, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()),
               static_cast<std::streamsize>(bytes.size()));
    const AnyArray z = AnyArray::open(dir / "a3.zarr");
    CHECK_THROWS_WITH(z.read(), Contains("c/0/0") && Contains("crc32c"));
}

TEST_CASE("zarr write: what is at the path is replaced only when asked, and only a Zarr array",
          "[bridges][zarr]") {
    b2nd::test::TempDir dir;
    const AnyArray a = sample(dir / "a.b2nd");
    const std::string out = dir / "a.zarr";
    b2nd::export_zarr(a, out, {});
    CHECK_THROWS_WITH(b2nd::export_zarr(a, out, {}), Contains("already exists"));
    b2nd::ZarrExportOptions o;
    o.overwrite = true;
    o.format = 2;
    b2nd::export_zarr(a, out, o);
    CHECK(std::filesystem::exists(out + "/.zarray"));
    CHECK_FALSE(std::filesystem::exists(out + "/zarr.json"));
    // A directory of the user's files is not a Zarr array: never replaced.
    std::filesystem::create_directories(dir / "notes.zarr");
    std::ofstream(dir / "notes.zarr/todo.txt") << "keep me";
    CHECK_THROWS_WITH(b2nd::export_zarr(a, dir / "notes.zarr", o), Contains("not a Zarr array"));
    CHECK(b2nd::test::read_text(dir / "notes.zarr/todo.txt") == "keep me");
    // Nothing left beside the outputs.
    for (const auto& e : std::filesystem::directory_iterator(dir.path())) {
        CHECK(e.path().filename().string().find("b2nd-tmp") == std::string::npos);
    }
}

TEST_CASE("zarr write: dtypes without a v3 type are refused; v2 takes records", "[bridges][zarr]") {
    b2nd::test::TempDir dir;
    const b2nd::DType rec = b2nd::DType::parse("[('id', '<i4'), ('tag', 'S3')]");
    const AnyArray r = AnyArray::create_in_memory(rec, {5});
    CHECK_THROWS_WITH(b2nd::export_zarr(r, dir / "r.zarr", {}),
                      Contains("no Zarr v3 core data type"));
    CHECK_FALSE(std::filesystem::exists(dir / "r.zarr"));
    b2nd::ZarrExportOptions o;
    o.format = 2;
    b2nd::export_zarr(r, dir / "r.zarr", o);
    const AnyArray back = AnyArray::open(dir / "r.zarr");
    CHECK(back.dtype() == rec);
    CHECK(back.read() == r.read());
}
