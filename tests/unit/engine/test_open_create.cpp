// Creating and opening arrays: clear failures for bad geometry, paths and options; metalayers
// and vlmeta.
#include "support/array_tests.hpp"

TEST_CASE("ndarray: creating, opening and writing fail clearly", "[array]") {
    b2nd::test::TempDir tmp;
    b2nd::create<float>(tmp / "x.b2nd", {10});
    CHECK_THROWS_WITH(b2nd::create<float>(tmp / "x.b2nd", {10}), Contains("already exists"));
    b2nd::CreateOptions o;
    o.overwrite = true;
    CHECK(b2nd::create<float>(tmp / "x.b2nd", {12}, o).shape() == Shape{12});
    o.chunk_shape = {4};
    o.block_shape = {8};
    CHECK_THROWS_WITH(b2nd::create<float>(tmp / "y.b2nd", {10}, o),
                      Contains("exceeds chunk shape"));
    CHECK_FALSE(std::filesystem::exists(tmp / "y.b2nd"));

    auto ro = b2nd::open<float>(tmp / "x.b2nd");
    CHECK_THROWS_WITH(ro.set({0}, 1.0f), Contains("writable"));
    b2nd::OpenOptions w;
    w.writable = true;
    auto rw = b2nd::open<float>(tmp / "x.b2nd", w);
    CHECK_THROWS_WITH(rw.write(Box::region({0}, {3}), std::vector<float>(2)),
                      Contains("needs 12 bytes"));
    CHECK_THROWS_AS(rw.resize({3, 4}), b2nd::UsageError);
    CHECK_THROWS_AS(rw.remove(0, 5, 8), b2nd::UsageError);
    CHECK_THROWS_AS(rw.insert(1, 0, {1.0f}), b2nd::UsageError);
    CHECK_THROWS_AS(rw.any().append(0, {nullptr, 3}), b2nd::UsageError);
    b2nd::OpenOptions wrong;
    wrong.dtype = DType::parse("<f8");
    CHECK_THROWS_WITH(AnyArray::open(tmp / "x.b2nd", wrong), Contains("8-byte items"));
    CHECK_THROWS_AS(AnyArray::open(tmp / "missing.b2nd"), b2nd::IoError);
}

TEST_CASE("ndarray: create refuses up front what an open would refuse (max_chunks)", "[array]") {
    b2nd::test::TempDir tmp;
    // 4e6 x 4e6 doubles in automatic chunks: tens of millions of chunks, refused at once (it
    // took 11 s and 4.2 GB to write a file no default open reads).
    CHECK_THROWS_WITH(b2nd::create<double>(tmp / "huge.b2nd", {4000000, 4000000}),
                      Contains("chunks, more than CreateOptions::max_chunks (16777216)"));
    CHECK_FALSE(std::filesystem::exists(tmp / "huge.b2nd"));
    // Small limits show both sides: 25 chunks.
    b2nd::CreateOptions o;
    o.chunk_shape = {2, 2};
    o.max_chunks = 24;
    CHECK_THROWS_WITH(b2nd::create<float>(tmp / "a.b2nd", {10, 10}, o),
                      Contains("makes 25 chunks"));
    o.max_chunks = 25;
    (void)b2nd::create<float>(tmp / "a.b2nd", {10, 10}, o);
    b2nd::OpenOptions r;
    r.max_chunks = 24;
    CHECK_THROWS_WITH(AnyArray::open(tmp / "a.b2nd", r),
                      Contains("25 chunks exceed OpenOptions::max_chunks (24)"));
    // A writer does not grow an array past its handle's limit.
    b2nd::OpenOptions w;
    w.writable = true;
    w.max_chunks = 30;
    auto rw = b2nd::open<float>(tmp / "a.b2nd", w);
    rw.resize({10, 12});  // 30 chunks
    CHECK_THROWS_WITH(rw.resize({12, 12}), Contains("makes 36 chunks"));
    CHECK(rw.shape() == Shape{10, 12});
    // A chunk shape of the wrong rank is named as such (not as a block shape).
    b2nd::CreateOptions c;
    c.chunk_shape = {10, 10};
    CHECK_THROWS_WITH(b2nd::create<float>(tmp / "c.b2nd", {10, 10, 10}, c),
                      Contains("the chunk shape (10, 10) has 2 dimensions"));
}

TEST_CASE("ndarray: metalayers and vlmeta", "[array]") {
    b2nd::test::TempDir tmp;
    b2nd::CreateOptions o;
    o.metalayers = {{"units", {0xa1, 'K'}}};
    AnyArray a = AnyArray::create(tmp / "m.b2nd", DType::parse("<f4"), {8}, o);
    CHECK(a.metalayer_names() == std::vector<std::string>{"b2nd", "units"});
    const std::uint8_t c[] = {0xa1, 'C'};
    a.update_metalayer("units", {c, 2});
    CHECK_THROWS_AS(a.update_metalayer("b2nd", {c, 2}), b2nd::UsageError);
    const std::uint8_t note[] = {0xa3, 'h', 'i', '!'};
    a.set_vlmeta("note", {note, 4});
    a.resize({20});  // metadata survives structural changes
    a = AnyArray();
    const AnyArray back = AnyArray::open(tmp / "m.b2nd");
    CHECK(back.shape() == Shape{20});
    CHECK(*back.metalayer("units") == std::vector<std::uint8_t>{0xa1, 'C'});
    CHECK(*back.vlmeta("note") == std::vector<std::uint8_t>(note, note + 4));
}
