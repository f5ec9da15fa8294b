// python-blosc2's variable-length containers (containers.hpp): UTF8Array, ObjectArray,
// BatchArray read from ../shared/corpus/records against the manifest's expected items, reads
// that decode only what they need (blocks counted), round trips of what we write with layout
// checks against python-blosc2's code, and damaged containers refused by name.
#include <algorithm>
#include <cstring>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <b2nd/b2nd.hpp>
#include <b2nd/codec/chunk_decoder.hpp>
#include <b2nd/codec/chunk_encoder.hpp>
#include <b2nd/containers.hpp>
#include <b2nd/error.hpp>
#include <b2nd/storage/byte_source.hpp>
#include <b2nd/storage/frame.hpp>
#include <b2nd/store.hpp>

#include "containers/containers_detail.hpp"
#include "support/files.hpp"
#include "support/json.hpp"
#include "support/record_cases.hpp"
#include "support/reference.hpp"
#include "support/temp_dir.hpp"

using b2nd::Value;
using b2nd::test::Json;

namespace {

Value expected(const std::string& path) {
    return Value::from_json(b2nd::test::read_text(path));
}

std::vector<std::int64_t> npy_int64s(const std::string& path) {
    const auto p = b2nd::test::read_npy_payload(path).data;
    std::vector<std::int64_t> v(p.size() / 8);
    std::memcpy(v.data(), p.data(), p.size());
    return v;
}

/// A mapped file served without a view: it records every range it is asked for.
struct CountingSource : b2nd::storage::ByteSource {
    explicit CountingSource(const std::string& path)
        : whole(b2nd::storage::mapped_source(b2nd::storage::MappedFile::open(path))) {}
    std::uint64_t size() const override { return whole->size(); }
    const std::string& name() const override { return whole->name(); }
    b2nd::storage::SourceBytes read(std::uint64_t offset, std::uint64_t n) const override {
        {
            std::lock_guard<std::mutex> lock(mu);
            reads.push_back(offset);
        }
        return whole->read(offset, n);
    }
    std::shared_ptr<const b2nd::storage::ByteSource> whole;
    mutable std::mutex mu;
    mutable std::vector<std::uint64_t> reads;
};

/// The chunks of `f` whose bytes start at one of `offsets`.
std::set<std::int64_t> chunks_read(const b2nd::storage::Frame& f,
                                   const std::vector<std::uint64_t>& offsets) {
    std::set<std::int64_t> out;
    for (std::int64_t i = 0; i < f.nchunks(); ++i) {
        const auto c = f.chunk(i);
        if (std::find(offsets.begin(), offsets.end(), c.offset) != offsets.end()) {
            out.insert(i);
        }
    }
    return out;
}

}  // namespace

TEST_CASE("containers: UTF8Arrays of the corpus read as python's strings",
          "[array][records][golden]") {
    if (b2nd::test::corpus_dir().empty()) {
        B2ND_SKIP("corpus not found at " B2ND_CORPUS_DIR);
    }
    const b2nd::test::RecordCases rc = b2nd::test::record_cases({"utf8array"});
    const std::string& dir = rc.dir;
    int n = 0;
    for (const Json& c : rc.cases) {
        INFO(c["name"].as_string());
        const auto u = b2nd::UTF8Array::open(dir + "/" + c["file"].as_string());
        const Value want = expected(dir + "/" + c["expected_json"].as_string());
        REQUIRE(u.size() == c["n"].as_int());
        const b2nd::Strings all = u.read();
        REQUIRE(all.size() == want.size());
        for (std::size_t i = 0; i < all.size(); ++i) {
            CHECK(std::string(all[i]) == want[i].as<std::string>());
        }
        for (const Json& s : c["slices"].as_array()) {
            const b2nd::Strings part = u.read(s["start"].as_int(), s["stop"].as_int());
            for (std::size_t i = 0; i < part.size(); ++i) {
                CHECK(std::string(part[i]) ==
                      want[static_cast<std::size_t>(s["start"].as_int()) + i].as<std::string>());
            }
        }
        if (u.size() > 0) {
            CHECK(u.at(-1) == want[want.size() - 1].as<std::string>());
        }
        CHECK_THROWS_AS(u.at(u.size()), b2nd::UsageError);
        ++n;
    }
    CHECK(n == 5);
}

TEST_CASE("containers: a UTF8Array slice fetches only the chunks its offsets and bytes span",
          "[array][records][golden]") {
    if (b2nd::test::corpus_dir().empty()) {
        B2ND_SKIP("corpus not found at " B2ND_CORPUS_DIR);
    }
    // u8_long: offsets in chunks of 4 entries, bytes in chunks of 4096; 12 strings over 12018
    // bytes (3 chunks), each string crossing several blocks. Both arrays are read through a
    // source without a view, which is asked for each chunk's bytes: the chunks asked for are
    // the chunks read.
    const std::string dir = b2nd::test::corpus_dir() + "/records/utf8";
    auto offsets_src = std::make_shared<CountingSource>(dir + "/u8_long.b2nd");
    auto bytes_src = std::make_shared<CountingSource>(dir + "/u8_long.utf8.b2nd");
    b2nd::OpenOptions o;
    o.cache_bytes = 0;
    const auto u = b2nd::UTF8Array::from_arrays(b2nd::AnyArray::open(offsets_src, o),
                                                b2nd::AnyArray::open(bytes_src, o));
    const auto off = npy_int64s(dir + "/expected/u8_long.offsets.npy");
    for (const auto& [a, b] :
         std::vector<std::pair<std::int64_t, std::int64_t>>{{4, 9}, {0, 1}, {10, 12}, {0, 12}}) {
        INFO(a << ":" << b);
        offsets_src->reads.clear();
        bytes_src->reads.clear();
        const b2nd::Strings s = u.read(a, b);
        REQUIRE(s.size() == static_cast<std::size_t>(b - a));
        // The chunks needed, from numpy's offsets (not from the code under test).
        std::set<std::int64_t> want_off, want_bytes;
        for (std::int64_t i = a; i <= b; ++i) {
            want_off.insert(i / 4);
        }
        for (std::int64_t i = off[static_cast<std::size_t>(a)];
             i < off[static_cast<std::size_t>(b)]; ++i) {
            want_bytes.insert(i / 4096);
        }
        const auto off_reads = offsets_src->reads;  // chunks_read() itself reads chunk headers
        const auto byte_reads = bytes_src->reads;
        CHECK(chunks_read(u.offsets().frame(), off_reads) == want_off);
        CHECK(chunks_read(u.bytes().frame(), byte_reads) == want_bytes);
    }
}

TEST_CASE("containers: ObjectArrays and BatchArrays of the corpus give python's items",
          "[array][records][golden]") {
    if (b2nd::test::corpus_dir().empty()) {
        B2ND_SKIP("corpus not found at " B2ND_CORPUS_DIR);
    }
    const b2nd::test::RecordCases rc = b2nd::test::record_cases({"objectarray", "batcharray"});
    const std::string& dir = rc.dir;
    int n = 0;
    for (const Json& c : rc.cases) {
        const std::string kind = c["kind"].as_string();
        INFO(c["name"].as_string());
        const std::string file = dir + "/" + c["file"].as_string();
        const Value want = expected(dir + "/" + c["expected_json"].as_string());
        std::vector<Value> got;
        if (kind == "objectarray") {
            const auto o = b2nd::ObjectArray::open(file);
            REQUIRE(o.size() == c["n"].as_int());
            got = o.items();
            CHECK(o.stats().chunks == static_cast<std::uint64_t>(o.size()));
            CHECK(o.item(-1) == got.back());
        } else {
            const auto ba = b2nd::BatchArray::open(file);
            REQUIRE(ba.size() == c["n"].as_int());
            CHECK(ba.items_per_block() == c["items_per_block"].as_int());
            std::vector<std::int64_t> lengths;
            for (const Json& l : c["batch_lengths"].as_array()) {
                lengths.push_back(l.as_int());
            }
            CHECK(ba.batch_lengths() == lengths);
            got = ba.items();
            // Each VL block decoded once: as many as the manifest's block split lists.
            std::uint64_t blocks = 0;
            for (const Json& split : c["block_split"].as_array()) {
                blocks += split.as_array().size();
            }
            CHECK(ba.stats().blocks == blocks);
            const Value batches = expected(dir + "/" + c["expected_batches_json"].as_string());
            REQUIRE(batches.size() == lengths.size());
            for (std::size_t b = 0; b < lengths.size(); ++b) {
                CHECK(Value(ba.batch(static_cast<std::int64_t>(b))) == batches[b]);
            }
        }
        REQUIRE(got.size() == want.size());
        for (std::size_t i = 0; i < got.size(); ++i) {
            // Tuples are lists in JSON: compare through python's JSON form.
            CHECK(Value::from_json(got[i].to_python_json()) == want[i]);
        }
        ++n;
    }
    CHECK(n == 4);
}

TEST_CASE("containers: one BatchArray item decodes one VL block", "[array][records][golden]") {
    if (b2nd::test::corpus_dir().empty()) {
        B2ND_SKIP("corpus not found at " B2ND_CORPUS_DIR);
    }
    // batch_ipb3: batches [5, 3, 1, 8, 4] in blocks of 3 items.
    const auto ba =
        b2nd::BatchArray::open(b2nd::test::corpus_dir() + "/records/objects/batch_ipb3.b2b");
    const Value all = Value(ba.items());
    const auto before = ba.stats().blocks;
    CHECK(ba.item(13) == all[13]);  // batch 3 (starts at 9), item 4: its block 1
    CHECK(ba.stats().blocks == before + 1);
    CHECK(Value(ba.items(7, 10)) ==
          Value(Value::Array(all.array().begin() + 7, all.array().begin() + 10)));
    // + batch 1's block 0, batch 2's block 0 and batch 3's block 0.
    CHECK(ba.stats().blocks == before + 1 + 3);
}

TEST_CASE("containers: what we write reads back and is laid out as python-blosc2 lays it out",
          "[array][records]") {
    b2nd::test::TempDir tmp;
    SECTION("UTF8Array") {
        const std::vector<std::string> words = {"", "héllo", std::string("a\0b", 3), "中文😀", ""};
        const auto u = b2nd::UTF8Array::write(tmp / "w.b2nd", words);
        CHECK(u.read().to_vector() == words);
        const auto off = b2nd::AnyArray::open(tmp / "w.b2nd");
        const auto bytes = b2nd::AnyArray::open(tmp / "w.utf8.b2nd");
        CHECK(off.dtype().str() == "<i8");
        CHECK(off.shape() == b2nd::Shape{6});
        CHECK(off.chunk_shape() == b2nd::Shape{131072});  // _OFFSETS_CHUNKS
        CHECK(bytes.dtype().str() == "|u1");
        CHECK(bytes.chunk_shape() == b2nd::Shape{2097152});  // _DATA_CHUNKS
        std::int64_t total = 0;
        for (const auto& w : words) {
            total += static_cast<std::int64_t>(w.size());
        }
        CHECK(bytes.shape() == b2nd::Shape{total});
        // No strings: offsets [0] and the one slack byte.
        const auto e = b2nd::UTF8Array::write(tmp / "e.b2nd", {});
        CHECK(e.size() == 0);
        CHECK(e.bytes().shape() == b2nd::Shape{1});
        CHECK_THROWS_AS(b2nd::UTF8Array::write(tmp / "e.b2nd", {"x"}), b2nd::UsageError);
        CHECK(b2nd::UTF8Array::write(tmp / "e.b2nd", {"x"}, {}, true).at(0) == "x");
    }
    SECTION("ObjectArray") {
        const std::vector<Value> items = {Value(1), Value("two"), Value::tuple({3, 4.5}),
                                          Value::map({{"k", Value::binary({1, 2})}}), Value()};
        const auto o = b2nd::ObjectArray::write(tmp / "o.b2frame", items);
        CHECK(o.items() == items);
        const auto& f = o.frame();
        CHECK(f.nchunks() == 5);
        CHECK(f.header().chunksize == 0);  // variable-size chunks
        REQUIRE(f.metalayer("vlarray") != nullptr);
        CHECK(Value::from_msgpack({f.metalayer("vlarray")->content.data(),
                                   f.metalayer("vlarray")->content.size()}) ==
              Value::map({{"version", 1}, {"serializer", "msgpack"}}));
        CHECK(b2nd::object_kind(f) == b2nd::ObjectKind::objectarray);
    }
    SECTION("BatchArray") {
        std::vector<std::vector<Value>> batches = {{1, 2, 3, 4, 5}, {"a", "b"}, {Value()}};
        const auto ba = b2nd::BatchArray::write(tmp / "b.b2b", batches, 2);
        CHECK(ba.size() == 8);
        CHECK(ba.items_per_block() == 2);
        CHECK(ba.batch_lengths() == std::vector<std::int64_t>{5, 2, 1});
        CHECK(ba.batch(0) == batches[0]);
        CHECK(ba.item(5) == Value("a"));
        const auto& f = ba.frame();
        CHECK((f.header().general_flags & 0x80) != 0);  // VL blocks, as c-blosc2 3.x marks them
        const b2nd::codec::ChunkDecoder dec(f.chunk(0).bytes);
        CHECK(dec.header().vl_blocks());
        CHECK(dec.nblocks() == 3);  // 5 items in blocks of 2
        // python's guess: clevel 1 -> a 1 MiB budget, so the whole first batch in one block.
        const auto g = b2nd::BatchArray::write(tmp / "g.b2b", batches);
        CHECK(g.items_per_block() == 5);
        CHECK(g.items() == ba.items());
        CHECK_THROWS_AS(b2nd::BatchArray::write(tmp / "x.b2b", {{}}), b2nd::UsageError);
    }
}

TEST_CASE("containers: damaged containers are refused by name", "[array][records]") {
    b2nd::test::TempDir tmp;
    SECTION("offsets that go back or point past the bytes") {
        const std::vector<std::int64_t> back = {0, 3, 2, 4};
        const std::vector<std::uint8_t> text = {'a', 'b', 'c', 'd'};
        b2nd::AnyArray::create_from(tmp / "b.b2nd", b2nd::DType::parse("<i8"), {4},
                                    {reinterpret_cast<const std::uint8_t*>(back.data()), 32});
        b2nd::AnyArray::create_from(tmp / "b.utf8.b2nd", b2nd::DType::parse("|u1"), {4},
                                    {text.data(), 4});
        const auto u = b2nd::UTF8Array::open(tmp / "b.b2nd");
        CHECK(u.at(0) == "abc");
        CHECK_THROWS_WITH(u.read(),
                          Catch::Contains("go back at entry 2") && Catch::Contains("b.b2nd"));
        const std::vector<std::int64_t> past = {0, 9};
        b2nd::AnyArray::create_from(tmp / "p.b2nd", b2nd::DType::parse("<i8"), {2},
                                    {reinterpret_cast<const std::uint8_t*>(past.data()), 16});
        b2nd::AnyArray::create_from(tmp / "p.utf8.b2nd", b2nd::DType::parse("|u1"), {4},
                                    {text.data(), 4});
        CHECK_THROWS_WITH(b2nd::UTF8Array::open(tmp / "p.b2nd").read(),
                          Catch::Contains("outside the 4 bytes"));
        CHECK_THROWS_AS(b2nd::UTF8Array::open(tmp / "none.b2nd"), b2nd::IoError);
        // Bytes that are not uint8.
        b2nd::AnyArray::create(tmp / "f.b2nd", b2nd::DType::parse("<i8"), {2});
        b2nd::AnyArray::create(tmp / "f.utf8.b2nd", b2nd::DType::parse("<f4"), {2});
        CHECK_THROWS_WITH(b2nd::UTF8Array::open(tmp / "f.b2nd"), Catch::Contains("uint8"));
    }
    SECTION("a batch whose blocks hold fewer items than its length says") {
        b2nd::BatchArray::write(tmp / "b.b2b", {{1, 2, 3}}, 2);
        {
            b2nd::storage::OpenOptions w;
            w.writable = true;
            auto f = b2nd::storage::Frame::open(tmp / "b.b2b", w);
            // 4 items in 2 blocks of 2 would fit the chunk's shape; its last block holds 1.
            const Value lie = Value::map({{"batch_lengths", Value(Value::Array{4})}});
            const auto raw = lie.to_msgpack();
            f.set_vlmeta("_batch_array_metadata", {raw.data(), raw.size()});
        }
        const auto ba = b2nd::BatchArray::open(tmp / "b.b2b");
        CHECK_THROWS_WITH(ba.items(),
                          Catch::Contains("holds 1 items, not 2") || Catch::Contains("VL blocks"));
        // 5 items need 3 blocks: refused when opened.
        const Value worse = Value::map({{"batch_lengths", Value(Value::Array{5})}});
        const auto raw5 = worse.to_msgpack();
        {
            b2nd::storage::OpenOptions w;
            w.writable = true;
            b2nd::storage::Frame::open(tmp / "b.b2b", w)
                .set_vlmeta("_batch_array_metadata", {raw5.data(), raw5.size()});
        }
        CHECK_THROWS_WITH(b2nd::BatchArray::open(tmp / "b.b2b"), Catch::Contains("2 VL blocks"));
    }
    SECTION("absurd sizes: lengths past the data, offsets spanning a terabyte") {
        b2nd::BatchArray::write(tmp / "b.b2b", {{1, 2, 3}, {4}}, 2);
        const auto lie = [&](const Value::Array& lengths) {
            b2nd::storage::OpenOptions w;
            w.writable = true;
            auto f = b2nd::storage::Frame::open(tmp / "b.b2b", w);
            const auto raw = Value::map({{"batch_lengths", Value(lengths)}}).to_msgpack();
            f.set_vlmeta("_batch_array_metadata", {raw.data(), raw.size()});
        };
        lie({std::int64_t{1} << 62, 1});
        CHECK_THROWS_WITH(b2nd::BatchArray::open(tmp / "b.b2b"),
                          Catch::Contains("batch 0") && Catch::Contains("b.b2b"));
        lie({INT64_MAX, INT64_MAX});
        CHECK_THROWS_AS(b2nd::BatchArray::open(tmp / "b.b2b"), b2nd::FormatError);
        lie({3, 1, 1});
        CHECK_THROWS_WITH(b2nd::BatchArray::open(tmp / "b.b2b"),
                          Catch::Contains("3 batch lengths"));
        // A UTF8Array whose offsets say one string of 2^40 bytes, over a bytes array that long
        // (zero chunks: a small file): refused before anything is allocated.
        const std::int64_t big = std::int64_t{1} << 40;
        const std::vector<std::int64_t> off = {0, big};
        b2nd::AnyArray::create_from(tmp / "t.b2nd", b2nd::DType::parse("<i8"), {2},
                                    {reinterpret_cast<const std::uint8_t*>(off.data()), 16});
        b2nd::CreateOptions co;
        co.chunk_shape = {std::int64_t{1} << 30};
        co.block_shape = {std::int64_t{1} << 20};
        b2nd::AnyArray::create(tmp / "t.utf8.b2nd", b2nd::DType::parse("|u1"), {big}, co);
        const auto u = b2nd::UTF8Array::open(tmp / "t.b2nd");
        CHECK_THROWS_WITH(u.read(), Catch::Contains("into memory"));
        CHECK_THROWS_WITH(u.at(0), Catch::Contains("into memory"));
    }
    SECTION("a truncated VL block") {
        const std::vector<std::uint8_t> a(100, 7), b(50, 9);
        auto chunk = b2nd::codec::encode_vlblocks_chunk(
            {{a.data(), a.size()}, {b.data(), b.size()}}, b2nd::codec::CodecChoice{});
        // Cut the last block's stream short and say so in cbytes: its size no longer adds up.
        chunk.resize(chunk.size() - 3);
        const auto cb = static_cast<std::int32_t>(chunk.size());
        std::memcpy(chunk.data() + 12, &cb, 4);
        std::vector<std::uint8_t> out(50);
        CHECK_THROWS_AS(
            [&] {
                const b2nd::codec::ChunkDecoder dec({chunk.data(), chunk.size()});
                dec.decode_block(1, {out.data(), out.size()});
            }(),
            b2nd::FormatError);
    }
    SECTION("a frame that is no container") {
        b2nd::AnyArray::create(tmp / "plain.b2nd", b2nd::DType::parse("<f8"), {4});
        CHECK_THROWS_WITH(b2nd::ObjectArray::open(tmp / "plain.b2nd"),
                          Catch::Contains("not an ObjectArray") && Catch::Contains("ndarray"));
        CHECK_THROWS_WITH(b2nd::BatchArray::open(tmp / "plain.b2nd"),
                          Catch::Contains("not a BatchArray"));
    }
}

TEST_CASE("containers: a ListArray reads its rows from either backend", "[array][records]") {
    b2nd::test::TempDir tmp;
    const Value spec = Value::map({{"kind", "list"}, {"item", Value::map({{"kind", "int64"}})}});
    const std::vector<Value> rows = {Value(Value::Array{1, 2}), Value(Value::Array{}),
                                     Value(Value::Array{3})};
    // The vl backend: one row per chunk (an ObjectArray's layout) under a listarray metalayer.
    std::vector<std::vector<std::uint8_t>> chunks;
    for (const Value& r : rows) {
        chunks.push_back(b2nd::detail::encode_item_chunk(r.to_msgpack(), {}));
    }
    b2nd::detail::write_container_frame(
        tmp / "l.b2frame", false, {},
        {{"listarray", spec}, {"vlarray", Value::map({{"version", 1}, {"serializer", "msgpack"}})}},
        {}, chunks, false);
    const auto l = b2nd::ListArray::open(tmp / "l.b2frame");
    CHECK(l.size() == 3);
    CHECK(l.rows(0, 3) == rows);
    CHECK(l.row(-1) == rows[2]);
    CHECK(l.spec() == spec);
    // The batch backend: rows in batches of VL blocks.
    std::vector<std::vector<std::uint8_t>> blocks = {
        Value(Value::Array{rows[0], rows[1]}).to_msgpack(),
        Value(Value::Array{rows[2]}).to_msgpack()};
    b2nd::detail::write_container_frame(
        tmp / "b.b2b", false, {},
        {{"listarray", spec},
         {"batcharray", Value::map({{"version", 1},
                                    {"serializer", "msgpack"},
                                    {"items_per_block", 2},
                                    {"arrow_schema", Value()}})}},
        {{"_batch_array_metadata", Value::map({{"batch_lengths", Value(Value::Array{3})}})}},
        {b2nd::detail::encode_vlblocks_chunk(blocks, {})}, true);
    const auto lb = b2nd::ListArray::open(tmp / "b.b2b");
    CHECK(lb.rows(0, 3) == rows);
    CHECK(b2nd::object_kind(b2nd::storage::Frame::open(tmp / "b.b2b")) ==
          b2nd::ObjectKind::listarray);
    // Without a backend's metalayer it is refused by name.
    b2nd::detail::write_container_frame(tmp / "n.b2frame", false, {}, {{"listarray", spec}}, {},
                                        chunks, false);
    CHECK_THROWS_WITH(b2nd::ListArray::open(tmp / "n.b2frame"), Catch::Contains("neither"));
}
