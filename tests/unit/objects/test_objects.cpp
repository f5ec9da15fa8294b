// python-blosc2's object kinds (objects.hpp) from ../shared/corpus/stores as its manifest says:
// persisted expressions evaluate to their expected values (never the carrier's zeros), proxy
// caches serve what their bitmaps name and refuse the rest, saved Python functions are refused.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <b2nd/b2nd.hpp>
#include <b2nd/error.hpp>
#include <b2nd/objects.hpp>
#include <b2nd/storage/frame.hpp>

#include "support/files.hpp"
#include "support/json.hpp"
#include "support/lazy_carriers.hpp"
#include "support/reference.hpp"
#include "support/temp_dir.hpp"

using b2nd::test::Json;
using b2nd::test::lazy_recipe;
using b2nd::test::path_ref;
using b2nd::test::write_carrier;

namespace {

std::string stores_dir() {
    const std::string c = b2nd::test::corpus_dir();
    return c.empty() ? c : c + "/stores";
}

std::vector<Json> cases_of(const std::string& kind) {
    std::vector<Json> out;
    const Json manifest = b2nd::test::load_json_file(stores_dir() + "/manifest.json");
    for (const Json& c : manifest["cases"].as_array()) {
        if (c["kind"].as_string() == kind) {
            out.push_back(c);
        }
    }
    return out;
}

/// Element-wise comparison within float rounding: reals to a few units in the last place of
/// their dtype (NumPy's SIMD functions and the C library's may round differently), the rest
/// exactly.
void require_close(const b2nd::AnyArray& a,
                   const std::vector<std::uint8_t>& got,
                   const std::vector<std::uint8_t>& want,
                   bool float32_inputs = false) {
    REQUIRE(got.size() == want.size());
    const b2nd::DType& dt = a.dtype();
    if (dt.kind() != b2nd::DType::Kind::float_) {
        B2ND_REQUIRE_SAME_BYTES(got, want);
        return;
    }
    const std::size_t n = got.size() / static_cast<std::size_t>(dt.itemsize());
    // float32 math (NumPy's SIMD sin, exp, log...) differs from the C library's by a few units
    // in the last place of float32, also where float32 operands feed a float64 result.
    const double tol = dt.itemsize() == 4 || float32_inputs ? 2e-6 : 1e-14;
    std::size_t bad = 0;
    for (std::size_t i = 0; i < n; ++i) {
        double g = 0, w = 0;
        if (dt.itemsize() == 4) {
            float fg = 0, fw = 0;
            std::memcpy(&fg, got.data() + 4 * i, 4);
            std::memcpy(&fw, want.data() + 4 * i, 4);
            g = static_cast<double>(fg);
            w = static_cast<double>(fw);
        } else {
            std::memcpy(&g, got.data() + 8 * i, 8);
            std::memcpy(&w, want.data() + 8 * i, 8);
        }
        const bool same_nan = std::isnan(g) && std::isnan(w);
        if (!same_nan && !(std::fabs(g - w) <= tol * std::max(1.0, std::fabs(w)))) {
            if (bad++ < 3) {
                UNSCOPED_INFO("element " << i << ": got " << g << ", want " << w);
            }
        }
    }
    CHECK(bad == 0);
}

b2nd::Selection selection_of(const std::string& s) {
    return b2nd::parse_selection(s);
}

}  // namespace

TEST_CASE("objects: every persisted expression of the corpus evaluates to its expected values",
          "[objects][lazyexpr][golden]") {
    if (b2nd::test::corpus_dir().empty()) {
        B2ND_SKIP("corpus not found at " B2ND_CORPUS_DIR);
    }
    int n = 0;
    for (const Json& c : cases_of("lazyexpr")) {
        const std::string file = stores_dir() + "/" + c["file"].as_string();
        INFO(c["name"].as_string() << ": " << c["expression"].as_string());
        const b2nd::AnyArray a = b2nd::AnyArray::open(file);
        CHECK(b2nd::object_kind(a.frame()) == b2nd::ObjectKind::lazyexpr);
        CHECK(a.dtype().str() == c["dtype"].as_string());
        const auto want = b2nd::test::read_npy_payload(stores_dir() + "/" + c["npy"].as_string());
        bool f4 = false;  // whether a float32 operand takes part
        const std::string dir = file.substr(0, file.rfind('/'));
        for (const auto& [name, ref] : c["operands"].as_object()) {
            const std::string p = ref.kind() == Json::Kind::string ? ref.as_string()
                                  : ref["kind"].as_string() == "urlpath"
                                      ? ref["urlpath"].as_string()
                                      : "";
            f4 = f4 || (!p.empty() && b2nd::AnyArray::open(dir + "/" + p).dtype().str() == "<f4");
        }
        require_close(a, a.read(), want.data, f4);
        // The carrier's own chunks are zeros: opened raw, that is what it holds.
        b2nd::OpenOptions raw;
        raw.raw_objects = true;
        const std::vector<std::uint8_t> stored = b2nd::AnyArray::open(file, raw).read();
        CHECK(std::all_of(stored.begin(), stored.end(), [](std::uint8_t b) { return b == 0; }));
        // Slices and single elements go through the same blocks.
        if (a.ndim() == 2 && a.shape()[0] > 3 && a.shape()[1] > 5) {
            const b2nd::Selection sel = selection_of("1:-1:2, 3::3");
            const b2nd::Resolved r = b2nd::resolve(a.shape(), sel);
            const auto ref = b2nd::test::reference_slice(want.data, a.shape(), a.itemsize(),
                                                         r.box.start, r.box.count, r.box.step);
            require_close(a, a.read(sel), ref, f4);
        }
        ++n;
    }
    CHECK(n >= 12);
}

TEST_CASE("objects: a persisted expression is read by every path an array has",
          "[objects][lazyexpr][golden]") {
    if (b2nd::test::corpus_dir().empty()) {
        B2ND_SKIP("corpus not found at " B2ND_CORPUS_DIR);
    }
    const std::string dir = stores_dir() + "/lazy";
    const auto want = b2nd::test::read_npy_payload(dir + "/expected/expr_arith.npy");
    const auto x = b2nd::NDArray<double>::open(dir + "/expr_arith.b2nd");
    std::vector<double> all(static_cast<std::size_t>(x.size()));
    std::memcpy(all.data(), want.data.data(), want.data.size());
    // Elements one at a time, index lists, chunk by chunk.
    CHECK(x(7, 11) == Approx(all[7 * 40 + 11]).epsilon(1e-15));
    const std::vector<std::uint8_t> picked = x.any().read(
        b2nd::Selection{b2nd::DimIndex::list({29, 0, 5}), b2nd::DimIndex::list({39, 1})});
    double v[6];
    std::memcpy(v, picked.data(), sizeof v);
    CHECK(v[0] == Approx(all[29 * 40 + 39]));
    CHECK(v[5] == Approx(all[5 * 40 + 1]));
    double sum = 0, want_sum = 0;
    x.any().for_each_chunk(
        x.any().all_chunks(),
        [&](std::int64_t, const b2nd::Box& region, const std::uint8_t* data,
            const std::uint8_t* uniform) {
            REQUIRE(uniform == nullptr);  // computed, never the carrier's zero chunks
            for (std::int64_t i = 0; i < region.size(); ++i) {
                double e = 0;
                std::memcpy(&e, data + 8 * i, 8);
                sum += e;
            }
        },
        1);
    for (double e : all) {
        want_sum += e;
    }
    CHECK(sum == Approx(want_sum));
    // A copy holds the values and is a plain array.
    b2nd::test::TempDir tmp;
    const b2nd::AnyArray copy = b2nd::copy(x.any(), tmp / "copy.b2nd");
    CHECK(b2nd::object_kind(copy.frame()) == b2nd::ObjectKind::ndarray);
    CHECK(!copy.metalayer("b2o").has_value());
    CHECK(!copy.vlmeta("b2o").has_value());
    B2ND_REQUIRE_SAME_BYTES(copy.read(), x.any().read());
    // Writing is refused, and the refused open leaves nothing beside the file (on a copy,
    // writable: tests never write into the corpus).
    b2nd::test::copy_writable(dir + "/expr_arith.b2nd", tmp / "expr_arith.b2nd");
    b2nd::OpenOptions w;
    w.writable = true;
    CHECK_THROWS_WITH(b2nd::AnyArray::open(tmp / "expr_arith.b2nd", w),
                      Catch::Matchers::Contains("lazyexpr, which is read-only here"));
    CHECK_FALSE(std::filesystem::exists(tmp / "expr_arith.b2nd.b2lock"));
}

TEST_CASE("objects: python-blosc2's own legacy expression reads [0 2 4 6 8], not zeros",
          "[objects][lazyexpr][golden]") {
    if (b2nd::test::corpus_dir().empty()) {
        B2ND_SKIP("corpus not found at " B2ND_CORPUS_DIR);
    }
    const std::string dir = stores_dir() + "/python-blosc2-tests";
    const auto e = b2nd::NDArray<std::int64_t>::open(dir + "/legacy_lazyexpr_v1/expr.b2nd");
    const auto want = b2nd::test::read_npy_payload(dir + "/expected/legacy_lazyexpr_v1/expr.npy");
    B2ND_REQUIRE_SAME_BYTES(e.any().read(), want.data);
    std::int64_t nonzero = 0;
    for (std::int64_t i = 0; i < static_cast<std::int64_t>(e.size()); ++i) {
        nonzero += e(i) != 0 ? 1 : 0;
    }
    CHECK(nonzero > 0);
}

TEST_CASE("objects: saved Python functions are refused, naming the kind", "[objects][golden]") {
    if (b2nd::test::corpus_dir().empty()) {
        B2ND_SKIP("corpus not found at " B2ND_CORPUS_DIR);
    }
    int n = 0;
    for (const Json& c : cases_of("lazyudf")) {
        const std::string file = stores_dir() + "/" + c["file"].as_string();
        INFO(file);
        REQUIRE(c["refuse"].as_bool());
        try {
            (void)b2nd::AnyArray::open(file);
            FAIL("opened");
        } catch (const b2nd::UnsupportedError& e) {
            const std::string m = e.what();
            CHECK(m.find("udf") != std::string::npos);
            CHECK(m.find("Python") != std::string::npos);
            CHECK(m.find(c["file"].as_string().substr(c["file"].as_string().rfind('/') + 1)) !=
                  std::string::npos);
        }
        b2nd::OpenOptions raw;
        raw.raw_objects = true;
        CHECK(b2nd::object_kind(b2nd::AnyArray::open(file, raw).frame()) == b2nd::ObjectKind::udf);
        ++n;
    }
    CHECK(n == 3);
}

TEST_CASE("objects: proxy caches serve what their bitmaps name and refuse the rest",
          "[objects][proxy][golden]") {
    if (b2nd::test::corpus_dir().empty()) {
        B2ND_SKIP("corpus not found at " B2ND_CORPUS_DIR);
    }
    int n = 0;
    for (const Json& c : cases_of("proxy")) {
        const std::string file = stores_dir() + "/" + c["file"].as_string();
        INFO(file);
        const b2nd::AnyArray a = b2nd::AnyArray::open(file);
        const auto want = b2nd::test::read_npy_payload(stores_dir() + "/" + c["npy"].as_string());
        for (const Json& s : c["readable_slices"].as_array()) {
            INFO("readable " << s.as_string());
            const b2nd::Resolved r = b2nd::resolve(a.shape(), selection_of(s.as_string()));
            B2ND_REQUIRE_SAME_BYTES(
                a.read(selection_of(s.as_string())),
                b2nd::test::reference_slice(want.data, a.shape(), a.itemsize(), r.box.start,
                                            r.box.count, r.box.step));
        }
        for (const Json& s : c["refused_slices"].as_array()) {
            INFO("refused " << s.as_string());
            CHECK_THROWS_WITH(a.read(selection_of(s.as_string())),
                              Catch::Contains("proxy") && Catch::Contains("never fetched"));
        }
        // Chunk by chunk and copies refuse the holes too.
        CHECK_THROWS_AS(
            a.for_each_chunk(a.all_chunks(), [](std::int64_t, const b2nd::Box&, const std::uint8_t*,
                                                const std::uint8_t*) {}),
            b2nd::UnsupportedError);
        b2nd::test::TempDir tmp;
        CHECK_THROWS_AS(b2nd::copy(a, tmp / "c.b2nd"), b2nd::UnsupportedError);
        ++n;
    }
    CHECK(n == 2);
}

TEST_CASE("objects: the plain arrays of the store corpus (operands, sources) read as expected",
          "[objects][golden]") {
    if (b2nd::test::corpus_dir().empty()) {
        B2ND_SKIP("corpus not found at " B2ND_CORPUS_DIR);
    }
    int n = 0;
    for (const Json& c : cases_of("ndarray")) {
        const std::string file = stores_dir() + "/" + c["file"].as_string();
        INFO(file);
        const b2nd::AnyArray a = b2nd::AnyArray::open(file);
        CHECK(b2nd::object_kind(a.frame()) == b2nd::ObjectKind::ndarray);
        CHECK(a.dtype().str() == c["dtype"].as_string());
        B2ND_REQUIRE_SAME_BYTES(
            a.read(), b2nd::test::read_npy_payload(stores_dir() + "/" + c["npy"].as_string()).data);
        ++n;
    }
    for (const Json& c : cases_of("indexed")) {
        const std::string file = stores_dir() + "/" + c["file"].as_string();
        INFO(file);
        B2ND_REQUIRE_SAME_BYTES(
            b2nd::AnyArray::open(file).read(),
            b2nd::test::read_npy_payload(stores_dir() + "/" + c["npy"].as_string()).data);
        for (const Json& side : c["sidecars"].as_array()) {
            const b2nd::AnyArray s =
                b2nd::AnyArray::open(stores_dir() + "/" + side["file"].as_string());
            B2ND_REQUIRE_SAME_BYTES(
                s.read(),
                b2nd::test::read_npy_payload(stores_dir() + "/" + side["npy"].as_string()).data);
        }
        ++n;
    }
    CHECK(n >= 12);
}

TEST_CASE("objects: every kind python-blosc2 tells by metalayer is named, in python's order",
          "[objects]") {
    b2nd::test::TempDir tmp;
    const auto msg = [](const b2nd::Value& v) { return v.to_msgpack(); };
    struct Case {
        const char* meta;
        std::vector<std::uint8_t> content;
        b2nd::ObjectKind kind;
        const char* refusal;  // what the error says ("" when it reads)
    };
    const Case cases[] = {
        {"vlarray", msg(b2nd::Value::map({{"version", 1}})), b2nd::ObjectKind::objectarray,
         "variable-length"},
        {"batcharray", msg(b2nd::Value::map({{"version", 1}})), b2nd::ObjectKind::batcharray,
         "variable-length"},
        {"listarray", msg(b2nd::Value::map({{"version", 1}})), b2nd::ObjectKind::listarray,
         "variable-length"},
        {"b2o", msg(b2nd::Value::map({{"kind", "c2array"}, {"version", 1}})),
         b2nd::ObjectKind::c2array, "remote"},
        {"b2o", msg(b2nd::Value::map({{"kind", "future"}, {"version", 1}})),
         b2nd::ObjectKind::b2object, "does not know"},
        {"LazyArray", msg(b2nd::Value(7)), b2nd::ObjectKind::b2object, "does not know"},
        {"b2tree", msg(b2nd::Value::map({{"version", 1}})), b2nd::ObjectKind::treestore,
         "Store::open"},
    };
    int i = 0;
    for (const Case& c : cases) {
        INFO(c.meta);
        const std::string path = tmp / ("k" + std::to_string(i++) + ".b2nd");
        b2nd::CreateOptions o;
        o.metalayers = {{c.meta, c.content}};
        (void)b2nd::AnyArray::create(path, b2nd::dtype_of<std::int32_t>(), {10}, o);
        b2nd::OpenOptions raw;
        raw.raw_objects = true;
        CHECK(b2nd::object_kind(b2nd::AnyArray::open(path, raw).frame()) == c.kind);
        CHECK_THROWS_WITH(b2nd::AnyArray::open(path),
                          Catch::Contains(b2nd::to_string(c.kind)) && Catch::Contains(c.refusal));
    }
    // python's order: proxy-source decides before b2o, b2o before the containers.
    b2nd::CreateOptions both;
    both.metalayers = {{"vlarray", msg(b2nd::Value::map({{"version", 1}}))},
                       {"b2o", msg(b2nd::Value::map({{"kind", "lazyudf"}, {"version", 1}}))}};
    const std::string p = tmp / "both.b2nd";
    (void)b2nd::AnyArray::create(p, b2nd::dtype_of<std::int32_t>(), {10}, both);
    b2nd::OpenOptions raw;
    raw.raw_objects = true;
    CHECK(b2nd::object_kind(b2nd::AnyArray::open(p, raw).frame()) == b2nd::ObjectKind::udf);
}

TEST_CASE("objects: a persisted expression with a bad recipe is refused by name", "[objects]") {
    b2nd::test::TempDir tmp;
    const auto carrier = [&](const std::string& name, const b2nd::Value& recipe) {
        return write_carrier(tmp / name, recipe);
    };
    const auto recipe = lazy_recipe;
    const auto ref = path_ref;
    std::vector<double> v{1, 2, 3, 4};
    (void)b2nd::NDArray<double>::create_from(tmp / "x.b2nd", {4}, v.data(), v.size());
    (void)b2nd::NDArray<double>::create_from(tmp / "y.b2nd", {2}, v.data(), 2);
    const b2nd::Value ops = b2nd::Value::map({{"x", ref("x.b2nd")}});
    CHECK_THROWS_WITH(b2nd::AnyArray::open(carrier("syntax.b2nd", recipe("x +", ops))),
                      Catch::Contains("x +") && Catch::Contains("position"));
    CHECK_THROWS_WITH(b2nd::AnyArray::open(carrier("name.b2nd", recipe("x + z", ops))),
                      Catch::Contains("'z'"));
    CHECK_THROWS_WITH(b2nd::AnyArray::open(carrier("fn.b2nd", recipe("frob(x)", ops))),
                      Catch::Contains("frob"));
    CHECK_THROWS_WITH(
        b2nd::AnyArray::open(
            carrier("missing.b2nd", recipe("x", b2nd::Value::map({{"x", ref("nope.b2nd")}})))),
        Catch::Contains("nope.b2nd"));
    CHECK_THROWS_WITH(
        b2nd::AnyArray::open(carrier(
            "shape.b2nd",
            recipe("x + y", b2nd::Value::map({{"x", ref("x.b2nd")}, {"y", ref("y.b2nd")}})))),
        Catch::Contains("broadcast"));
    // A carrier whose operand is itself: a cycle, stopped.
    CHECK_THROWS_WITH(
        b2nd::AnyArray::open(
            carrier("self.b2nd", recipe("s + 1", b2nd::Value::map({{"s", ref("self.b2nd")}})))),
        Catch::Contains("nest"));
    // Division by zero as NumPy: floats give inf, integers 0; bitwise on floats is refused when
    // read.
    std::vector<std::int64_t> iv{-7, 7, 9, 4};
    (void)b2nd::NDArray<std::int64_t>::create_from(tmp / "i.b2nd", {4}, iv.data(), iv.size());
    const auto ok = b2nd::AnyArray::open(carrier(
        "good.b2nd", recipe("x // 0 + i // 0 + i // 2 + i % -4 + i ** 2",
                            b2nd::Value::map({{"x", ref("x.b2nd")}, {"i", ref("i.b2nd")}}))));
    const auto got = ok.read();
    double d[4];
    std::memcpy(d, got.data(), sizeof d);
    CHECK(std::isinf(d[0]));
    const auto ints = b2nd::AnyArray::open(carrier(
        "ints.b2nd",
        recipe("i // 0 + i // 2 + i % -4 + i ** 2", b2nd::Value::map({{"i", ref("i.b2nd")}}))));
    const auto gi = ints.read();
    std::memcpy(d, gi.data(), sizeof d);
    // Python: -7 // 2 = -4, -7 % -4 = -3, 49; 7 // 2 = 3, 7 % -4 = -1, 49.
    CHECK(d[0] == -4.0 - 3.0 + 49.0);
    CHECK(d[1] == 3.0 - 1.0 + 49.0);
    const auto bad = b2nd::AnyArray::open(carrier("bits.b2nd", recipe("x & 1", ops)));
    CHECK_THROWS_WITH(bad.read(), Catch::Contains("floats"));
}

TEST_CASE("objects: an operand at an absolute path or a URL needs operands_anywhere", "[objects]") {
    b2nd::test::TempDir tmp;
    std::filesystem::create_directories(tmp / "sub");
    std::vector<double> v{1, 2, 3, 4};
    (void)b2nd::NDArray<double>::create_from(tmp / "x.b2nd", {4}, v.data(), v.size());
    const auto carrier = [&](const std::string& name, const std::string& operand) {
        return write_carrier(tmp / name,
                             lazy_recipe("x * 2", b2nd::Value::map({{"x", path_ref(operand)}})));
    };
    const std::vector<double> twice{2, 4, 6, 8};
    // Relative, even climbing out (python-blosc2 writes '../dir/x.b2nd'): followed.
    CHECK(b2nd::NDArray<double>::open(carrier("sub/rel.b2nd", "../x.b2nd")).read() == twice);
    // Absolute: refused by name unless asked.
    const std::string abs = carrier("abs.b2nd", tmp / "x.b2nd");
    CHECK_THROWS_WITH(b2nd::AnyArray::open(abs),
                      Catch::Contains("absolute path") && Catch::Contains("operands_anywhere"));
    b2nd::OpenOptions anywhere;
    anywhere.operands_anywhere = true;
    CHECK(b2nd::NDArray<double>::open(abs, anywhere).read() == twice);
    CHECK_THROWS_WITH(b2nd::AnyArray::open(carrier("url.b2nd", "http://127.0.0.1:1/x.b2nd")),
                      Catch::Contains("is the URL") && Catch::Contains("operands_anywhere"));
}
