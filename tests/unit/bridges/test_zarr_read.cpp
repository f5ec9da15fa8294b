// Zarr arrays read in place: every v2 and v3 array of the bridges corpus (written by zarr-python
// 2.13 and a v3 writer checked by zarrita) opens as an AnyArray with its shape, dtype and
// attributes, reads whole and by random boxes to the values the corpus expects, copies into a
// b2nd array, and every damaged one is refused by name, never read wrong.
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include <b2nd/b2nd.hpp>
#include <b2nd/ops.hpp>

#include "../../support/bridge_cases.hpp"
#include "../../support/files.hpp"
#include "../../support/json.hpp"
#include "../../support/random_box.hpp"
#include "../../support/reference.hpp"
#include "../../support/temp_dir.hpp"

using b2nd::AnyArray;
using b2nd::test::Json;
using Catch::Matchers::Contains;

using b2nd::test::bridge_case;
using b2nd::test::bridge_cases;
using b2nd::test::BridgeCase;
using b2nd::test::have_bridges;

TEST_CASE("zarr: every v2 and v3 array of the corpus reads in place", "[bridges][zarr]") {
    if (!have_bridges()) {
        B2ND_SKIP("bridges corpus not found under " B2ND_CORPUS_DIR);
    }
    const auto all = bridge_cases({"zarr2", "zarr3"});
    REQUIRE(all.size() >= 45);
    for (const BridgeCase& c : all) {
        INFO(c.name);
        const AnyArray a = AnyArray::open(c.src);
        CHECK(a.shape() == b2nd::test::json_shape(c.entry["shape"]));
        if (c.entry["dtype"].kind() == Json::Kind::string) {
            CHECK(a.dtype().str() == c.entry["dtype"].as_string());
        }
        const auto expected = b2nd::test::read_npy_payload(c.expect).data;
        const std::vector<std::uint8_t> got = a.read();
        CHECK(got == expected);
        if (c.entry.has("attrs")) {
            const b2nd::Attrs attrs = a.attrs();
            for (const auto& [k, v] : c.entry["attrs"].as_object()) {
                INFO("attribute " << k);
                REQUIRE(attrs.contains(k));
                CHECK(b2nd::test::same_value(attrs.get(k), v));
            }
        }
    }
}

TEST_CASE("zarr: random boxes read what the whole array holds", "[bridges][zarr]") {
    if (!have_bridges()) {
        B2ND_SKIP("bridges corpus not found under " B2ND_CORPUS_DIR);
    }
    b2nd::test::SplitMix rng(40);
    for (const BridgeCase& c : bridge_cases({"zarr2", "zarr3"})) {
        INFO(c.name);
        b2nd::OpenOptions o;
        o.cache_bytes = 0;  // every box decodes its chunks anew
        const AnyArray a = AnyArray::open(c.src, o);
        if (a.ndim() == 0) {
            continue;
        }
        const auto whole = b2nd::test::read_npy_payload(c.expect).data;
        for (int k = 0; k < 12; ++k) {
            const b2nd::Box b = b2nd::test::random_box(a.shape(), rng);
            INFO("box start " << b2nd::to_string(b.start) << " count " << b2nd::to_string(b.count)
                              << " step " << b2nd::to_string(b.step));
            CHECK(a.read(b) == b2nd::test::reference_slice(whole, a.shape(), a.itemsize(), b.start,
                                                           b.count, b.step));
        }
    }
}

TEST_CASE("zarr: a sharded array reads only the inner chunks a box needs, with two threads",
          "[bridges][zarr]") {
    if (!have_bridges()) {
        B2ND_SKIP("bridges corpus not found under " B2ND_CORPUS_DIR);
    }
    const std::string root = b2nd::test::corpus_dir() + "/bridges/";
    b2nd::OpenOptions o;
    o.nthreads = 2;
    const AnyArray a = AnyArray::open(root + "zarr3/z3_sharded_end_f8.zarr", o);
    // Shards [10, 12] hold inner chunks [5, 4]: the array's chunks are shards, its blocks inner
    // chunks, as b2nd chunks and blocks.
    CHECK(a.chunk_shape() == b2nd::Shape{10, 12});
    CHECK(a.block_shape() == b2nd::Shape{5, 4});
    const auto whole = b2nd::test::read_npy_payload(root + "expect/z3_sharded_end_f8.npy").data;
    for (std::int64_t r = 0; r < 20; r += 3) {
        const b2nd::Box row = b2nd::Box::region({r, 0}, {1, 24});
        CHECK(a.read(row) ==
              b2nd::test::reference_slice(whole, a.shape(), 8, {r, 0}, {1, 24}, {1, 1}));
    }
}

TEST_CASE("zarr: an imported copy is a b2nd array with the same values and attributes",
          "[bridges][zarr]") {
    if (!have_bridges()) {
        B2ND_SKIP("bridges corpus not found under " B2ND_CORPUS_DIR);
    }
    b2nd::test::TempDir dir;
    for (const char* name : {"z2_blosc_zlib4_shuffle_uint16_F", "z3_sharded_start_i4",
                             "z3_gzip_float64", "z2_missing_chunks_float64_fill_nan"}) {
        INFO(name);
        const BridgeCase it = bridge_case(name);
        const AnyArray z = AnyArray::open(it.src);
        const std::string out = dir / (std::string(name) + ".b2nd");
        b2nd::copy(z, out);
        const AnyArray b = AnyArray::open(out);
        CHECK(b.shape() == z.shape());
        CHECK(b.dtype() == z.dtype());
        CHECK(b.read() == b2nd::test::read_npy_payload(it.expect).data);
        CHECK(b.attrs().names() == z.attrs().names());
    }
}

TEST_CASE("zarr: every damaged array of the corpus is refused, naming it", "[bridges][zarr]") {
    if (!have_bridges()) {
        B2ND_SKIP("bridges corpus not found under " B2ND_CORPUS_DIR);
    }
    int n = 0;
    for (const BridgeCase& c : bridge_cases({"fail"})) {
        if (!c.entry["zarr"].as_bool()) {
            continue;
        }
        INFO(c.name << ": " << c.entry["defect"].as_string());
        ++n;
        const std::string leaf = std::filesystem::path(c.src).filename().string();
        try {
            const AnyArray a = AnyArray::open(c.src);
            (void)a.read();
            FAIL("read without an error");
        } catch (const b2nd::Error& e) {
            CHECK_THAT(e.what(), Contains(leaf));
        }
    }
    CHECK(n == 8);
}

namespace {

void write_text(const std::string& path, const std::string& text) {
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    std::ofstream(path, std::ios::binary) << text;
}

const char* const kV3Raw = R"({"zarr_format": 3, "node_type": "array", "shape": [6],
 "data_type": "uint16", "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4]}},
 "chunk_key_encoding": {"name": "default"}, "fill_value": 7,
 "codecs": [{"name": "bytes", "configuration": {"endian": "big"}}]})";

}  // namespace

TEST_CASE("zarr: arrays made here: big-endian bytes, missing chunks, hostile metadata",
          "[bridges][zarr]") {
    b2nd::test::TempDir dir;
    const std::string z = dir / "a.zarr";
    write_text(z + "/zarr.json", kV3Raw);
    // Chunk 0 holds 1..4 big-endian; chunk 1 is missing: the fill value 7.
    write_text(z + "/c/0", std::string("\0\1\0\2\0\3\0\4", 8));
    const b2nd::NDArray<std::uint16_t> t = b2nd::open<std::uint16_t>(z);
    CHECK(t.read() == std::vector<std::uint16_t>{1, 2, 3, 4, 7, 7});

    SECTION("a chunk of the wrong size") {
        write_text(z + "/c/1", std::string("\0\1\0\2", 4));  // the edge chunk is stored whole
        const AnyArray a = AnyArray::open(z);
        CHECK_THROWS_WITH(a.read(), Contains("c/1") && Contains("decodes to 4 bytes"));
    }
    SECTION("a group is not an array") {
        write_text(dir / "g.zarr/zarr.json", R"({"zarr_format": 3, "node_type": "group"})");
        CHECK_THROWS_WITH(AnyArray::open(dir / "g.zarr"), Contains("a Zarr group"));
    }
    SECTION("metadata that is not JSON, or absurd") {
        const std::vector<std::pair<std::string, std::string>> bad = {
            {"{\"zarr_format\": 3, ", "zarr.json"},
            {R"({"zarr_format": 3, "node_type": "array", "shape": [4], "data_type": "string",
                 "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4]}},
                 "chunk_key_encoding": {"name": "default"}, "fill_value": 0,
                 "codecs": [{"name": "bytes"}]})",
             "data_type \"string\""},
            {R"({"zarr_format": 3, "node_type": "array", "shape": [4], "data_type": "int8",
                 "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [0]}},
                 "chunk_key_encoding": {"name": "default"}, "fill_value": 0,
                 "codecs": [{"name": "bytes"}]})",
             "zero extent"},
            {R"({"zarr_format": 3, "node_type": "array", "shape": [4611686018427387904, 4],
                 "data_type": "float64",
                 "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [1, 4]}},
                 "chunk_key_encoding": {"name": "default"}, "fill_value": 0,
                 "codecs": [{"name": "bytes"}]})",
             "overflows"},
            {R"({"zarr_format": 3, "node_type": "array", "shape": [4], "data_type": "int8",
                 "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4]}},
                 "chunk_key_encoding": {"name": "default"}, "fill_value": 0,
                 "codecs": [{"name": "gzip"}, {"name": "bytes"}]})",
             "out of place"},
            {R"({"zarr_format": 3, "node_type": "array", "shape": [4], "data_type": "int8",
                 "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4]}},
                 "chunk_key_encoding": {"name": "default"}, "fill_value": 300,
                 "codecs": [{"name": "bytes"}]})",
             "out of range"},
            {R"({"zarr_format": 3, "node_type": "array", "shape": [4], "data_type": "int8",
                 "chunk_grid": {"name": "regular",
                                "configuration": {"chunk_shape": [4611686018427387904]}},
                 "chunk_key_encoding": {"name": "default"}, "fill_value": 0,
                 "codecs": [{"name": "sharding_indexed", "configuration": {"chunk_shape": [1],
                   "codecs": [{"name": "bytes"}]}}]})",
             "more than 2^32 inner chunks"},
        };
        for (const auto& [json, says] : bad) {
            INFO(json);
            write_text(dir / "bad.zarr/zarr.json", json);
            try {
                const AnyArray a = AnyArray::open(dir / "bad.zarr");
                FAIL("opened");
            } catch (const b2nd::Error& e) {
                CHECK_THAT(e.what(), Contains("bad.zarr") && Contains(says));
            }
        }
    }
    SECTION("a shard index that points past the shard, with a valid checksum") {
        const std::string s = dir / "s.zarr";
        write_text(s + "/zarr.json", R"({"zarr_format": 3, "node_type": "array", "shape": [4],
            "data_type": "uint8",
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4]}},
            "chunk_key_encoding": {"name": "default"}, "fill_value": 0,
            "codecs": [{"name": "sharding_indexed", "configuration": {"chunk_shape": [4],
              "codecs": [{"name": "bytes"}], "index_codecs": [{"name": "bytes"}],
              "index_location": "end"}}]})");
        std::string shard = "abcd";
        const std::uint64_t entry[2] = {100, 4};  // bytes [100, 104) of an 20-byte shard
        shard.append(reinterpret_cast<const char*>(entry), 16);
        write_text(s + "/c/0", shard);
        const AnyArray a = AnyArray::open(s);
        CHECK_THROWS_WITH(a.read(), Contains("c/0") && Contains("of a shard of 20 bytes"));
        // The same index pointing at the data reads it.
        const std::uint64_t good[2] = {0, 4};
        shard.replace(4, 16, reinterpret_cast<const char*>(good), 16);
        write_text(s + "/c/0", shard);
        const AnyArray b = AnyArray::open(s);
        CHECK(b.read() == std::vector<std::uint8_t>{'a', 'b', 'c', 'd'});
    }
    SECTION("Zarr arrays are read-only") {
        b2nd::OpenOptions o;
        o.writable = true;
        CHECK_THROWS_WITH(AnyArray::open(z, o), Contains("read-only"));
    }
}
