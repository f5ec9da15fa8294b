// Every b2nd array of ../shared/corpus (c-blosc2 3.3, c-blosc2 2.x, python-blosc2 and upstream
// files) reads back bit-exactly against its .npy: whole, through seeded random strided boxes
// (compared with an element-by-element slicer), element by element at random points, and
// through NDArray<T> where T exists. Geometry and dtype come out as the manifests say.
#include <fstream>
#include <string>

#include <catch2/catch.hpp>

#include <b2nd/b2nd.hpp>
#include <b2nd/codec/registry.hpp>
#include <b2nd/format/b2nd_meta.hpp>
#include <b2nd/storage/frame.hpp>

#include "../support/files.hpp"
#include "../support/json.hpp"
#include "../support/random_box.hpp"
#include "../support/reference.hpp"

using b2nd::AnyArray;
using b2nd::Box;
using b2nd::Shape;
using b2nd::test::Json;

namespace {

Shape shape_of(const Json& j) {
    Shape s;
    for (const Json& v : j.as_array()) {
        s.push_back(v.as_int());
    }
    return s;
}

template <class T>
void check_typed(const AnyArray& a, const std::vector<std::uint8_t>& want, bool swap) {
    const auto t = a.as<T>();
    const std::vector<T> got = t.read();
    REQUIRE(got.size() * sizeof(T) == want.size());
    std::vector<std::uint8_t> bytes(want.size());
    if constexpr (std::is_same_v<T, bool>) {
        std::copy(got.begin(), got.end(), bytes.begin());
    } else if (!bytes.empty()) {
        std::memcpy(bytes.data(), got.data(), bytes.size());
    }
    if (swap) {
        a.dtype().byteswap(bytes.data(),
                           static_cast<std::int64_t>(got.size()));  // back to stored order
    }
    B2ND_REQUIRE_SAME_BYTES(bytes, want);
}

/// Reads the array at `path` and compares it with the .npy at `npy`.
void check_array(const std::string& path,
                 const std::string& npy,
                 const b2nd::OpenOptions& options,
                 const Json* c,
                 std::uint64_t seed) {
    INFO(path);
    const AnyArray a = AnyArray::open(path, options);
    const b2nd::test::NpyPayload expected = b2nd::test::read_npy_payload(npy);
    if (c != nullptr) {
        CHECK(a.shape() == shape_of((*c)["shape"]));
        CHECK(a.chunk_shape() == shape_of((*c)["chunkshape"]));
        CHECK(a.block_shape() == shape_of((*c)["blockshape"]));
        CHECK(a.itemsize() == (*c)["typesize"].as_int());
        if (!(*c)["dtype"].is_null()) {
            CHECK(a.dtype().str() == (*c)["dtype"].as_string());
            CHECK(a.dtype_note().empty());
        } else {
            CHECK(a.legacy_caterva());
            CHECK_FALSE(a.dtype_note().empty());
        }
        // The metalayer we would write for this array is byte for byte what c-blosc2 wrote.
        const auto meta = a.metalayer(a.legacy_caterva() ? "caterva" : "b2nd");
        REQUIRE(meta.has_value());
        CHECK(b2nd::format::write_b2nd_meta(b2nd::format::read_b2nd_meta(*meta)) == *meta);
    }
    const bool descr_matches =
        expected.header.find("'descr': '" + a.dtype().str() + "'") != std::string::npos;
    CHECK((descr_matches || a.dtype().is_structured() || a.legacy_caterva() ||
           options.dtype.has_value()));

    // Whole array, with one and with two threads.
    B2ND_REQUIRE_SAME_BYTES(a.read(), expected.data);
    AnyArray two = a;
    two.set_nthreads(2);
    two.clear_cache();
    B2ND_REQUIRE_SAME_BYTES(two.read(), expected.data);

    // Random strided boxes, against the element-by-element slicer.
    b2nd::test::SplitMix rng(seed);
    for (int i = 0; i < 24; ++i) {
        const Box b = b2nd::test::random_box(a.shape(), rng);
        INFO("box " << b.str());
        const auto want = b2nd::test::reference_slice(expected.data, a.shape(), a.itemsize(),
                                                      b.start, b.count, b.step);
        B2ND_REQUIRE_SAME_BYTES(a.read(b), want);
    }

    // Random single elements (a cold and then a warm cache).
    if (a.size() > 0) {
        std::vector<std::uint8_t> got(static_cast<std::size_t>(a.itemsize()));
        for (int pass = 0; pass < 2; ++pass) {
            b2nd::test::SplitMix prng(seed + 1);
            for (int i = 0; i < 20; ++i) {
                Shape idx;
                std::int64_t flat = 0;
                for (std::int64_t n : a.shape()) {
                    idx.push_back(
                        static_cast<std::int64_t>(prng.below(static_cast<std::uint64_t>(n))));
                    flat = flat * n + idx.back();
                }
                a.read_element(idx.data(), got.data());
                const auto* want = expected.data.data() + flat * a.itemsize();
                INFO("element " << b2nd::to_string(idx));
                REQUIRE(std::memcmp(got.data(), want, got.size()) == 0);
            }
        }
    }

    // A batch of points (grouped by block internally), in random order with repeats.
    if (a.size() > 0) {
        b2nd::test::SplitMix prng(seed + 2);
        std::vector<std::int64_t> coords;
        std::vector<std::uint8_t> want;
        const int n = 64;
        for (int i = 0; i < n; ++i) {
            std::int64_t flat = 0;
            for (std::int64_t ext : a.shape()) {
                coords.push_back(
                    static_cast<std::int64_t>(prng.below(static_cast<std::uint64_t>(ext))));
                flat = flat * ext + coords.back();
            }
            const auto* p = expected.data.data() + flat * a.itemsize();
            want.insert(want.end(), p, p + a.itemsize());
        }
        std::vector<std::uint8_t> got(want.size());
        a.read_points(coords.data(), n, got.data());
        B2ND_REQUIRE_SAME_BYTES(got, want);
    }

    // Typed access where a C++ type exists.
    const std::string d = a.dtype().native().str();
    const bool swap = a.dtype().needs_byteswap();
    if (d == "<f4") {
        check_typed<float>(a, expected.data, swap);
    } else if (d == "<f8") {
        check_typed<double>(a, expected.data, swap);
    } else if (d == "<i4") {
        check_typed<std::int32_t>(a, expected.data, swap);
    } else if (d == "<u2") {
        check_typed<std::uint16_t>(a, expected.data, swap);
    } else if (d == "<c16") {
        check_typed<std::complex<double>>(a, expected.data, swap);
    } else if (d == "|b1") {
        check_typed<bool>(a, expected.data, swap);
    }
}

void check_manifest(const std::string& dir, std::size_t at_least) {
    const Json m = b2nd::test::load_json_file(dir + "/manifest.json");
    const auto& cases = m["cases"].as_array();
    REQUIRE(cases.size() >= at_least);
    std::uint64_t seed = 1;
    int without_zfp = 0;
    for (const Json& c : cases) {
        if (c.has("codec") && c["codec"].as_string().rfind("zfp", 0) == 0 &&
            !b2nd::codec::has_zfp()) {
            // Built without libzfp: a clear refusal, unless no stream reaches zfp.
            INFO(c["file"].as_string());
            const AnyArray a = AnyArray::open(dir + "/" + c["file"].as_string());
            std::vector<std::uint8_t> got;
            try {
                got = a.read();
            } catch (const b2nd::UnsupportedError& e) {
                CHECK_THAT(e.what(), Catch::Matchers::Contains("built without ZFP"));
                ++without_zfp;
                continue;
            }
            B2ND_REQUIRE_SAME_BYTES(
                got, b2nd::test::read_npy_payload(dir + "/" + c["npy"].as_string()).data);
            continue;
        }
        b2nd::OpenOptions o;
        if (c["dtype"].is_null()) {
            o.dtype = b2nd::DType::parse(c["npy_descr"].as_string());
            // Once with the caterva-inferred dtype, once with the override.
            check_array(dir + "/" + c["file"].as_string(), dir + "/" + c["npy"].as_string(), {}, &c,
                        seed++);
            INFO("with dtype override " << o.dtype->str());
            const AnyArray a = AnyArray::open(dir + "/" + c["file"].as_string(), o);
            CHECK(a.dtype() == *o.dtype);
            continue;
        }
        check_array(dir + "/" + c["file"].as_string(), dir + "/" + c["npy"].as_string(), o, &c,
                    seed++);
    }
    if (!b2nd::codec::has_zfp() && dir.find("plugins") != std::string::npos) {
        CHECK(without_zfp >= 15);
    }
}

}  // namespace

TEST_CASE("corpus arrays: every c-blosc2 3.3 array reads back bit-exactly", "[array][golden]") {
    if (b2nd::test::corpus_dir().empty()) {
        B2ND_SKIP("corpus not found at " B2ND_CORPUS_DIR);
    }
    check_manifest(b2nd::test::corpus_dir(), 100);
}

TEST_CASE("corpus arrays: every c-blosc2 2.x array reads back bit-exactly", "[array][golden]") {
    if (b2nd::test::corpus_dir().empty()) {
        B2ND_SKIP("corpus not found at " B2ND_CORPUS_DIR);
    }
    check_manifest(b2nd::test::corpus_dir() + "/legacy-2x", 100);
}

TEST_CASE("corpus arrays: upstream b2nd arrays and plain frames", "[array][golden]") {
    if (b2nd::test::corpus_dir().empty()) {
        B2ND_SKIP("corpus not found at " B2ND_CORPUS_DIR);
    }
    const std::string dir = b2nd::test::corpus_dir() + "/upstream";
    const Json m = b2nd::test::load_json_file(dir + "/manifest.json");
    std::uint64_t seed = 1000;
    int b2nd_cases = 0, plain_cases = 0;
    for (const Json& c : m["cases"].as_array()) {
        const std::string file = dir + "/" + c["file"].as_string();
        INFO(file);
        if (c["kind"].as_string() == "b2nd") {
            ++b2nd_cases;
            b2nd::OpenOptions o;
            if (c.has("b2nd_dtype_in_file") && !c["b2nd_dtype_in_file"].is_null()) {
                // The stored dtype's itemsize disagrees with the typesize: not trusted.
                const AnyArray raw = AnyArray::open(file);
                CHECK(raw.dtype().str() == "|V" + std::to_string(c["typesize"].as_int()));
                CHECK_THAT(raw.dtype_note(),
                           Catch::Matchers::Contains(c["b2nd_dtype_in_file"].as_string()));
                CHECK_THROWS_AS(raw.as<float>(), b2nd::UsageError);
                o.dtype = b2nd::DType::parse(c["npy_descr"].as_string());
            }
            check_array(file, dir + "/" + c["expected"].as_string(), o, nullptr, seed++);
            continue;
        }
        // Plain frames: a 1-D array of typesize items when chunks have a fixed size.
        const auto frame = b2nd::storage::Frame::open(file);
        const auto want = b2nd::test::read_file(dir + "/" + c["expected"].as_string());
        if (frame.header().chunksize <= 0) {
            CHECK_THROWS_AS(AnyArray::open(file), b2nd::UnsupportedError);
            continue;
        }
        ++plain_cases;
        const AnyArray a = AnyArray::open(file);
        CHECK(a.ndim() == 1);
        CHECK_FALSE(a.writable());
        B2ND_REQUIRE_SAME_BYTES(a.read(), want);
        b2nd::test::SplitMix rng(seed++);
        for (int i = 0; i < 10; ++i) {
            const Box b = b2nd::test::random_box(a.shape(), rng);
            B2ND_REQUIRE_SAME_BYTES(
                a.read(b), b2nd::test::reference_slice(want, a.shape(), a.itemsize(), b.start,
                                                       b.count, b.step));
        }
    }
    CHECK(b2nd_cases >= 6);
    CHECK(plain_cases >= 5);
}

TEST_CASE("corpus arrays: every plugin array reads back bit-exactly", "[array][golden]") {
    if (b2nd::test::corpus_dir().empty()) {
        B2ND_SKIP("corpus not found at " B2ND_CORPUS_DIR);
    }
    const std::string dir = b2nd::test::corpus_dir() + "/plugins";
    check_manifest(dir, 52);
    // The codec and its parameter come out as stored.
    const Json m = b2nd::test::load_json_file(dir + "/manifest.json");
    for (const Json& c : m["cases"].as_array()) {
        INFO(c["name"].as_string());
        const AnyArray a = AnyArray::open(dir + "/" + c["file"].as_string());
        const b2nd::CompressionParams p = a.compression();
        if (c["plugin_codec"].as_bool()) {
            CHECK(static_cast<int>(p.codec) == c["codec_id"].as_int());
            CHECK(static_cast<int>(p.codec_meta) == c["codec_meta_raw"].as_int());
        } else {
            CHECK(b2nd::codec::is_builtin(p.codec));
        }
        CHECK(p.filters.size() == c["filters"].as_array().size());
    }
}

TEST_CASE("plugin arrays: a slice inside one block decodes one ZFP stream", "[array][golden]") {
    if (b2nd::test::corpus_dir().empty()) {
        B2ND_SKIP("corpus not found at " B2ND_CORPUS_DIR);
    }
    if (!b2nd::codec::has_zfp()) {
        B2ND_SKIP("built without ZFP");
    }
    const std::string dir = b2nd::test::corpus_dir() + "/plugins";
    // zfp_acc_f8_2d: shape (150, 120), chunks (64, 64), blocks (16, 32).
    const AnyArray a = AnyArray::open(dir + "/zfp_acc_f8_2d.b2nd");
    REQUIRE(a.block_shape() == Shape{16, 32});
    const auto expected = b2nd::test::read_npy_payload(dir + "/zfp_acc_f8_2d.npy");
    const Box inside = Box::region({17, 70}, {13, 20});  // block (1, 0) of chunk (0, 1)
    const auto before = a.cache_stats();
    B2ND_REQUIRE_SAME_BYTES(a.read(inside),
                            b2nd::test::reference_slice(expected.data, a.shape(), 8, inside.start,
                                                        inside.count, inside.step));
    const auto after = a.cache_stats();
    CHECK(after.misses - before.misses == 1);
    // A box over four blocks, one of them the block read above (now cached), decodes three.
    const Box four = Box::region({10, 60}, {10, 10});
    a.read(four);
    CHECK(a.cache_stats().misses - after.misses == 3);
}
