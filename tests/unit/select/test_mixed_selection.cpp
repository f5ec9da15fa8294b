// Selections that mix index lists with integers, slices and new axes (orthogonal semantics, as
// python-blosc2's oindex), writes that broadcast, and boolean masks. Every expected result comes
// from indexing a copy of the data in memory, element by element.
#include <array>
#include <string>

#include <catch2/catch.hpp>

#include <b2nd/b2nd.hpp>

#include "../../support/data.hpp"
#include "../../support/temp_dir.hpp"

using b2nd::DimIndex;
using b2nd::Shape;
using b2nd::Slice;
using Catch::Matchers::Contains;

namespace {

struct Geometry {
    Shape shape, chunks, blocks;
};

/// One random selection with, per array dimension, the indices it takes (in order) and whether
/// the dimension stays in the result.
struct Drawn {
    b2nd::Selection sel;
    std::vector<std::vector<std::int64_t>> idx;  // per array dimension
    Shape result;
};

/// Python's range(start, stop, step) after slice.indices, written as a plain loop.
std::vector<std::int64_t> python_slice(std::int64_t n,
                                       std::optional<std::int64_t> start,
                                       std::optional<std::int64_t> stop,
                                       std::int64_t step) {
    std::vector<std::int64_t> out;
    for (std::int64_t i = 0; i < n; ++i) {
        out.push_back(i);
    }
    if (step < 0) {
        std::reverse(out.begin(), out.end());
    }
    // Keep positions p (in array terms) with start <= p < stop walking in the step's direction.
    auto wrap = [&](std::int64_t v) { return v < 0 ? v + n : v; };
    std::vector<std::int64_t> kept;
    for (std::int64_t p : out) {
        const bool after_start = !start || (step > 0 ? p >= wrap(*start) : p <= wrap(*start));
        const bool before_stop = !stop || (step > 0 ? p < wrap(*stop) : p > wrap(*stop));
        if (after_start && before_stop) {
            kept.push_back(p);
        }
    }
    std::vector<std::int64_t> stepped;
    for (std::size_t k = 0; k < kept.size(); k += static_cast<std::size_t>(std::abs(step))) {
        stepped.push_back(kept[k]);
    }
    return stepped;
}

Drawn draw(b2nd::test::SplitMix& rng, const Shape& shape, bool allow_empty) {
    Drawn d;
    bool has_list = false;
    for (std::size_t k = 0; k < shape.size(); ++k) {
        const std::int64_t n = shape[k];
        if (rng.below(5) == 0) {
            d.sel.push_back(DimIndex::newaxis());
            d.result.push_back(1);
        }
        const std::uint64_t kind = (k + 1 == shape.size() && !has_list) ? 2 : rng.below(3);
        if (kind == 0) {
            const std::int64_t i =
                static_cast<std::int64_t>(rng.below(2 * static_cast<std::uint64_t>(n))) - n;
            d.sel.emplace_back(i);
            d.idx.push_back({i < 0 ? i + n : i});
        } else if (kind == 1) {
            // Starts and stops inside the dimension (out-of-range ones are Slice's own test).
            const std::int64_t step = static_cast<std::int64_t>(rng.below(3)) + 1;
            const bool back = rng.below(3) == 0;
            std::optional<std::int64_t> a, b;
            if (rng.below(2) == 0) {
                a = static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(n)));
            }
            if (rng.below(2) == 0) {
                b = static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(n)));
            }
            d.sel.emplace_back(Slice(a, b, back ? -step : step));
            d.idx.push_back(python_slice(n, a, b, back ? -step : step));
            d.result.push_back(static_cast<std::int64_t>(d.idx.back().size()));
        } else {
            has_list = true;
            const std::uint64_t len = allow_empty && rng.below(10) == 0 ? 0 : 1 + rng.below(6);
            std::vector<std::int64_t> list, wrapped;
            for (std::uint64_t j = 0; j < len; ++j) {
                const std::int64_t i =
                    static_cast<std::int64_t>(rng.below(2 * static_cast<std::uint64_t>(n))) - n;
                list.push_back(i);
                wrapped.push_back(i < 0 ? i + n : i);
            }
            d.sel.emplace_back(list);
            d.idx.push_back(wrapped);
            d.result.push_back(static_cast<std::int64_t>(len));
        }
    }
    return d;
}

/// The flat (C order) positions a drawn selection reads, in the result's order.
std::vector<std::int64_t> positions(const Drawn& d, const Shape& shape) {
    std::vector<std::int64_t> out;
    for (const auto& l : d.idx) {
        if (l.empty()) {
            return out;
        }
    }
    std::vector<std::size_t> k(shape.size(), 0);
    for (;;) {
        std::int64_t flat = 0;
        for (std::size_t j = 0; j < shape.size(); ++j) {
            flat = flat * shape[j] + d.idx[j][k[j]];
        }
        out.push_back(flat);
        std::size_t j = shape.size();
        while (j > 0 && ++k[j - 1] == d.idx[j - 1].size()) {
            k[--j] = 0;
        }
        if (j == 0) {
            return out;
        }
    }
}

}  // namespace

TEMPLATE_TEST_CASE("mixed selections: index lists with integers, slices and new axes",
                   "[array]",
                   std::int8_t,
                   std::int32_t,
                   double,
                   bool) {
    using T = TestType;
    b2nd::test::TempDir tmp;
    b2nd::test::SplitMix rng(17);
    int file = 0;
    for (const Geometry& geo : {Geometry{{23}, {10}, {4}}, Geometry{{9, 13}, {4, 5}, {3, 2}},
                                Geometry{{7, 9, 11}, {4, 5, 6}, {2, 3, 4}}}) {
        const std::int64_t n = b2nd::test::count_of(geo.shape);
        std::vector<T> model(static_cast<std::size_t>(n));
        // Values of T (bools half true), and written values that differ from the first ones.
        const auto value = [&](bool written) {
            if constexpr (std::is_same_v<T, bool>) {
                return rng.below(2) == 0;
            } else {
                const auto v = static_cast<std::int64_t>(rng.below(100));
                return static_cast<T>(written ? -v - 1 : v);
            }
        };
        for (std::size_t i = 0; i < model.size(); ++i) {
            model[i] = value(false);
        }
        auto a =
            b2nd::NDArray<T>::create_from(tmp / ("m" + std::to_string(file++) + ".b2nd"), geo.shape,
                                          model, b2nd::test::chunked(geo.chunks, geo.blocks));
        for (int round = 0; round < 60; ++round) {
            const Drawn d = draw(rng, geo.shape, true);
            const std::vector<std::int64_t> pos = positions(d, geo.shape);
            INFO(b2nd::to_string(geo.shape) << " round " << round);
            const b2nd::Resolved r = b2nd::resolve(geo.shape, d.sel);
            REQUIRE(r.orthogonal());
            REQUIRE(r.shape == d.result);
            std::vector<T> want;
            for (std::int64_t p : pos) {
                want.push_back(model[static_cast<std::size_t>(p)]);
            }
            REQUIRE(a.read(d.sel) == want);
            // A write of the same selection: data in C order (the last repeat wins), or a value.
            if (pos.empty()) {
                continue;
            }
            const bool scalar = round % 4 == 0;
            std::vector<T> data(scalar ? 1 : pos.size());
            for (std::size_t i = 0; i < data.size(); ++i) {
                data[i] = value(true);
            }
            for (std::size_t j = 0; j < pos.size(); ++j) {
                model[static_cast<std::size_t>(pos[j])] = data[scalar ? 0 : j];
            }
            if (scalar) {
                a.write(d.sel, data[0]);
            } else {
                a.write(d.sel, data);
            }
            REQUIRE(a.read() == model);
        }
    }
}

TEST_CASE("mixed selections: text form, errors and sizes", "[array]") {
    const b2nd::Selection sel = b2nd::parse_selection("[3,1,7], 2:9:2, -1, [0,-1]");
    REQUIRE(sel.size() == 4);
    CHECK(sel[0].kind() == DimIndex::Kind::list);
    CHECK(sel[0].indices() == std::vector<std::int64_t>{3, 1, 7});
    CHECK(sel[1].kind() == DimIndex::Kind::slice);
    CHECK(sel[2].kind() == DimIndex::Kind::index);
    CHECK(sel[3].indices() == std::vector<std::int64_t>{0, -1});
    const b2nd::Resolved r = b2nd::resolve({10, 10, 5, 4}, sel);
    CHECK(r.shape == Shape{3, 4, 2});
    CHECK(r.lists[0] == std::vector<std::int64_t>{3, 1, 7});
    CHECK(r.lists[1] == std::vector<std::int64_t>{2, 4, 6, 8});
    CHECK(r.lists[2] == std::vector<std::int64_t>{4});
    CHECK(r.lists[3] == std::vector<std::int64_t>{0, 3});
    CHECK(b2nd::parse_selection(" [ 5 ] , ... ")[0].indices() == std::vector<std::int64_t>{5});
    CHECK(b2nd::parse_selection("[1, 2,]")[0].indices() == std::vector<std::int64_t>{1, 2});

    CHECK_THROWS_WITH(b2nd::parse_selection("[]"), Contains("the index list is empty"));
    CHECK_THROWS_WITH(b2nd::parse_selection("0, [1, x]"),
                      Contains("\"x\" is not a 64-bit integer"));
    CHECK_THROWS_WITH(b2nd::parse_selection("[1, 2.5]"), Contains("not a 64-bit integer"));
    CHECK_THROWS_WITH(b2nd::parse_selection("[[1]]"), Contains("cannot be nested"));
    CHECK_THROWS_WITH(b2nd::parse_selection("[1, 2"), Contains("unmatched '['"));
    CHECK_THROWS_WITH(b2nd::parse_selection("1]"), Contains("unmatched ']'"));
    CHECK_THROWS_WITH(b2nd::parse_selection("[1]2"), Contains("text after the index list"));
    CHECK_THROWS_WITH(
        b2nd::resolve({4, 6}, b2nd::parse_selection(":, [0, -7]")),
        Contains("index -7 in the list for dimension 1 is out of range for its size 6"));
    // An empty list from the API is a 0-size selection, as in NumPy.
    const b2nd::Resolved e = b2nd::resolve({4, 6}, {std::vector<std::int64_t>{}, Slice::all()});
    CHECK(e.shape == Shape{0, 6});
    CHECK(e.size() == 0);
    // Lists long enough to need gigabytes of indices are refused before anything is expanded.
    CHECK_THROWS_WITH(
        b2nd::resolve({std::int64_t{1} << 40, 2}, {Slice::all(), std::vector<std::int64_t>{0}}),
        Contains("indices (more than"));
}

TEST_CASE("mixed selections: a read larger than memory is refused with its size", "[array]") {
    b2nd::test::TempDir tmp;
    // 10^12 one-byte elements, all zero: 625 special chunks, nothing stored.
    auto a =
        b2nd::AnyArray::create(tmp / "huge.b2nd", b2nd::DType::parse("|u1"), {1000000, 1000000},
                               b2nd::test::chunked({40000, 40000}, {1000, 1000}));
    CHECK_THROWS_WITH(a.read(), Contains("a selection of 1000000000000 elements"));
    CHECK_THROWS_WITH(a.as<std::uint8_t>().read({Slice::all(), Slice(0, 500000)}),
                      Contains("500000000000 elements"));
    // A small part of it is read as usual.
    CHECK(a.read({5, std::vector<std::int64_t>{0, 999999}}) == std::vector<std::uint8_t>{0, 0});
}

TEST_CASE("selection writes broadcast data as NumPy does", "[array]") {
    b2nd::test::TempDir tmp;
    const Shape shape{6, 7, 5};
    std::vector<std::int16_t> model(6 * 7 * 5, 0);
    auto a = b2nd::NDArray<std::int16_t>::create(tmp / "b.b2nd", shape,
                                                 b2nd::test::chunked({4, 4, 4}, {2, 2, 3}));
    auto at = [&](std::int64_t i, std::int64_t j, std::int64_t k) -> std::int16_t& {
        return model[static_cast<std::size_t>((i * 7 + j) * 5 + k)];
    };
    // A box (rows 1..4 step 2, all columns, depth 3): data of shape (7, 1) broadcasts.
    std::vector<std::int16_t> col{1, 2, 3, 4, 5, 6, 7};
    a.write({Slice(1, 5, 2), Slice::all(), Slice(3, 4)}, col, Shape{7, 1});
    for (std::int64_t i : {1, 3}) {
        for (std::int64_t j = 0; j < 7; ++j) {
            at(i, j, 3) = col[static_cast<std::size_t>(j)];
        }
    }
    CHECK(a.read() == model);
    // Orthogonal with an integer: the selection is (2, 5); data (5,) broadcasts along rows.
    std::vector<std::int16_t> row{10, 20, 30, 40, 50};
    a.write({std::vector<std::int64_t>{5, 0}, 2, Slice::all()}, row, Shape{5});
    for (std::int64_t i : {5, 0}) {
        for (std::int64_t k = 0; k < 5; ++k) {
            at(i, 2, k) = row[static_cast<std::size_t>(k)];
        }
    }
    CHECK(a.read() == model);
    // A box with a negative step and a broadcast along it.
    a.write({Slice({}, {}, -1), 6, 0}, std::int16_t{9});
    for (std::int64_t i = 0; i < 6; ++i) {
        at(i, 6, 0) = 9;
    }
    CHECK(a.read() == model);
    CHECK_THROWS_WITH(a.write({Slice::all(), 0, 0}, row, Shape{5}),
                      Contains("does not broadcast to the selection's shape (6,)"));
    CHECK_THROWS_WITH(a.write({Slice::all(), 0, 0}, row), Contains("needs 12 bytes"));
    CHECK(a.read() == model);
}

TEST_CASE("masks: a[mask] reads and writes match the mask applied in memory", "[array]") {
    b2nd::test::TempDir tmp;
    b2nd::test::SplitMix rng(23);
    int file = 0;
    // The last shape has 4.3M elements: several slabs of mask, each dense or sparse.
    for (const Geometry& geo :
         {Geometry{{}, {}, {}}, Geometry{{29}, {10}, {3}}, Geometry{{9, 13}, {4, 5}, {3, 2}},
          Geometry{{7, 9, 11}, {4, 5, 6}, {2, 3, 4}},
          Geometry{{330, 130, 100}, {100, 64, 50}, {25, 32, 25}}}) {
        const std::int64_t n = b2nd::test::count_of(geo.shape);
        std::vector<std::uint16_t> model(static_cast<std::size_t>(n));
        for (std::size_t i = 0; i < model.size(); ++i) {
            model[i] = static_cast<std::uint16_t>(i * 7 + 3);
        }
        auto a = b2nd::NDArray<std::uint16_t>::create_from(
            tmp / ("a" + std::to_string(file) + ".b2nd"), geo.shape, model,
            geo.shape.empty() ? b2nd::CreateOptions{}
                              : b2nd::test::chunked(geo.chunks, geo.blocks));
        for (std::uint64_t per_mille : {0u, 3u, 100u, 600u, 1000u}) {
            INFO(b2nd::to_string(geo.shape) << ", " << per_mille << " per mille true");
            std::vector<std::uint8_t> bits(static_cast<std::size_t>(n));
            for (auto& b : bits) {
                b = rng.below(1000) < per_mille ? 1 : 0;
            }
            // Slabs differ: the first rows all true, the rest as drawn.
            if (per_mille == 3 && n > 1000) {
                std::fill(bits.begin(), bits.begin() + 1000, std::uint8_t{1});
            }
            const b2nd::Mask in_memory = b2nd::Mask::of(bits.data(), geo.shape);
            auto stored = b2nd::NDArray<bool>::create_from(
                tmp / ("m" + std::to_string(file) + "_" + std::to_string(per_mille) + ".b2nd"),
                geo.shape, std::vector<bool>(bits.begin(), bits.end()),
                geo.shape.empty() ? b2nd::CreateOptions{}
                                  : b2nd::test::chunked(geo.chunks, geo.blocks));
            const b2nd::Mask on_disk = b2nd::Mask::of(stored.any());
            std::vector<std::uint16_t> want;
            for (std::size_t i = 0; i < bits.size(); ++i) {
                if (bits[i] != 0) {
                    want.push_back(model[i]);
                }
            }
            CHECK(in_memory.count() == want.size());
            CHECK(on_disk.count() == want.size());
            CHECK(a.read_masked(in_memory) == want);
            CHECK(a.read_masked(on_disk) == want);
            const std::string out =
                tmp / ("c" + std::to_string(file) + "_" + std::to_string(per_mille) + ".b2nd");
            b2nd::CreateOptions o;
            o.chunk_shape = {1000};
            o.block_shape = {100};
            const auto c = b2nd::compress_where(a.any(), on_disk, out, o);
            CHECK(c.shape() == Shape{static_cast<std::int64_t>(want.size())});
            CHECK(c.as<std::uint16_t>().read() == want);
            // a[mask] = value, then a[mask] = data: the model follows.
            if (per_mille == 600 || n < 1000) {
                a.write_masked(on_disk, std::uint16_t{7});
                std::vector<std::uint16_t> data(want.size());
                for (std::size_t i = 0; i < bits.size(); ++i) {
                    if (bits[i] != 0) {
                        model[i] = 7;
                    }
                }
                CHECK(a.read() == model);
                for (std::size_t i = 0, k = 0; i < bits.size(); ++i) {
                    if (bits[i] != 0) {
                        data[k] = static_cast<std::uint16_t>(60000 - k % 5000);
                        model[i] = data[k++];
                    }
                }
                a.write_masked(in_memory, data);
                CHECK(a.read() == model);
            }
        }
        ++file;
    }
}

TEST_CASE("masks: bad masks and bad data are usage errors", "[array]") {
    b2nd::test::TempDir tmp;
    auto a = b2nd::NDArray<float>::create(tmp / "a.b2nd", {6, 4});
    std::vector<std::uint8_t> bits(24, 1);
    CHECK_THROWS_WITH(a.read_masked(b2nd::Mask::of(bits.data(), {4, 6})),
                      Contains("a mask of shape (4, 6) for an array of shape (6, 4)"));
    CHECK_THROWS_WITH(b2nd::Mask::of(a.any()), Contains("a mask needs dtype bool"));
    const b2nd::Mask m = b2nd::Mask::of(bits.data(), {6, 4});
    CHECK_THROWS_WITH(a.write_masked(m, std::vector<float>(5, 1.0f)),
                      Contains("needs data of that many elements"));
    CHECK_THROWS_WITH(a.write_masked(m, std::vector<float>(30, 1.0f)),
                      Contains("a masked write of 24 elements"));
    CHECK(a.read() == std::vector<float>(24, 0.0f));  // nothing written
    auto out = b2nd::AnyArray::create(tmp / "o.b2nd", a.dtype(), {23});
    CHECK_THROWS_WITH(b2nd::select_into(out, a.any(), m), Contains("an array of length 24"));
}

TEST_CASE("masks: any contiguous byte container with a shape, referred to or owned", "[array]") {
    b2nd::test::TempDir tmp;
    std::vector<float> v(24);
    for (std::size_t i = 0; i < v.size(); ++i) {
        v[i] = static_cast<float>(i);
    }
    auto a = b2nd::NDArray<float>::create_from(tmp / "a.b2nd", {6, 4}, v);
    std::vector<std::uint8_t> bytes(24, 0);
    bytes[1] = bytes[22] = 1;
    const std::vector<float> want = {1.0f, 22.0f};
    CHECK(a.read_masked(b2nd::Mask::of(bytes, {6, 4})) == want);  // by name: referred to
    std::string chars(24, '\0');
    chars[1] = chars[22] = 'x';
    CHECK(a.read_masked(b2nd::Mask::of(chars, {6, 4})) == want);
    std::array<bool, 24> flags{};
    flags[1] = flags[22] = true;
    CHECK(a.read_masked(b2nd::Mask::of(flags, {6, 4})) == want);
    // A temporary is moved into the mask: it outlives the statement that made it.
    const b2nd::Mask owned = b2nd::Mask::of(std::vector<char>(bytes.begin(), bytes.end()), {6, 4});
    CHECK(a.read_masked(owned) == want);
    CHECK(owned.count() == 2);
    CHECK_THROWS_WITH(b2nd::Mask::of(std::vector<std::uint8_t>(23), {6, 4}),
                      Contains("a mask of 23 bytes for shape (6, 4), which has 24 elements"));
}

TEST_CASE("selections of LZ4 and BloscLZ arrays decode blocks only up to their last element",
          "[array]") {
    // Those streams stop early: the elements after a block's last selected one are never
    // decoded; the ones before must all be right.
    b2nd::test::TempDir tmp;
    b2nd::test::SplitMix rng(29);
    const Shape shape{20, 24, 28};
    std::vector<float> model(20 * 24 * 28);
    for (std::size_t i = 0; i < model.size(); ++i) {
        model[i] = static_cast<float>(i % 977) * 0.5f;
    }
    for (b2nd::Codec codec : {b2nd::Codec::lz4, b2nd::Codec::blosclz}) {
        for (b2nd::Filter filter : {b2nd::Filter::shuffle, b2nd::Filter::none}) {
            b2nd::CreateOptions o = b2nd::test::chunked({10, 12, 14}, {5, 6, 7});
            o.compression.codec = codec;
            o.compression.filters = {{filter, 0}};
            o.overwrite = true;
            o.cache_bytes = 0;  // decode into scratch, where prefixes apply
            auto a = b2nd::NDArray<float>::create_from(tmp / "p.b2nd", shape, model, o);
            for (int round = 0; round < 30; ++round) {
                const Drawn d = draw(rng, shape, false);
                std::vector<float> want;
                for (std::int64_t p : positions(d, shape)) {
                    want.push_back(model[static_cast<std::size_t>(p)]);
                }
                REQUIRE(a.read(d.sel) == want);
            }
            std::vector<Shape> pts;
            std::vector<float> want;
            for (int k = 0; k < 300; ++k) {
                Shape p{static_cast<std::int64_t>(rng.below(20)),
                        static_cast<std::int64_t>(rng.below(24)),
                        static_cast<std::int64_t>(rng.below(28))};
                want.push_back(model[static_cast<std::size_t>((p[0] * 24 + p[1]) * 28 + p[2])]);
                pts.push_back(p);
            }
            CHECK(a.read_points(pts) == want);
        }
    }
}
