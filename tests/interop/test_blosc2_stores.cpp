// Interop, stores: every member of a .b2z we write opens in c-blosc2 at its offset in the
// archive (blosc2_schunk_open_offset, what python-blosc2's DictStore does) with the content our
// reader sees, and embed.b2e carries the key map c-blosc2 reads back byte for byte.
#include <b2nd/storage/zip.hpp>
#include <b2nd/store.hpp>

#include "blosc2_support.hpp"

using namespace b2nd::test::interop;

TEST_CASE("interop: the members of a .b2z we write open in c-blosc2 at their offsets",
          "[interop][store]") {
    ensure_init();
    b2nd::test::TempDir dir;
    const std::string path = dir / "s.b2z";
    b2nd::StoreOptions o;
    o.threshold = 1000;
    auto w = b2nd::StoreWriter::create(path, o);
    std::vector<double> v(3000);
    for (std::size_t i = 0; i < v.size(); ++i) {
        v[i] = static_cast<double>(i) * 0.5;
    }
    const auto big = b2nd::AnyArray::create_in_memory_from(
        b2nd::dtype_of<double>(), {3000},
        {reinterpret_cast<const std::uint8_t*>(v.data()), v.size() * sizeof(double)});
    w.put("/big", big);
    w.put("/g/small", b2nd::AnyArray::create_in_memory_from(
                          b2nd::dtype_of<double>(), {5},
                          {reinterpret_cast<const std::uint8_t*>(v.data()), 5 * sizeof(double)}));
    w.set_vlmeta("/g", "units", b2nd::Value("m"));
    w.commit();

    const auto zip = b2nd::storage::ZipDirectory::read(
        b2nd::storage::mapped_source(b2nd::storage::MappedFile::open(path)));
    int opened = 0;
    for (const auto& m : zip.members()) {
        INFO(m.name);
        const std::uint64_t at = zip.data_offset(m);
        blosc2_schunk* sc = blosc2_schunk_open_offset(path.c_str(), static_cast<std::int64_t>(at));
        REQUIRE(sc != nullptr);
        const b2nd::storage::Frame ours = b2nd::storage::Frame::open(zip.open(m));
        CHECK(sc->nchunks == ours.nchunks());
        for (std::int64_t i = 0; i < ours.nchunks(); ++i) {
            const auto want = ours.decode_chunk(i);
            std::vector<std::uint8_t> got(want.size() + 1);
            const int n = blosc2_schunk_decompress_chunk(sc, i, got.data(),
                                                         static_cast<std::int32_t>(got.size()));
            REQUIRE(n == static_cast<int>(want.size()));
            got.resize(want.size());
            CHECK(got == want);
        }
        for (const auto& name : ours.vlmeta_names()) {
            std::uint8_t* content = nullptr;
            std::int32_t len = 0;
            REQUIRE(blosc2_vlmeta_get(sc, name.c_str(), &content, &len) >= 0);
            CHECK(std::vector<std::uint8_t>(content, content + len) == *ours.vlmeta(name));
            std::free(content);
        }
        blosc2_schunk_free(sc);
        ++opened;
    }
    CHECK(opened == 2);  // big.b2nd, embed.b2e (the group holder is small: embedded)
}
