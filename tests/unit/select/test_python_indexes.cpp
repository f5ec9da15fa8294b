// python-blosc2's query indexes kept honest: a write to an array whose vlmeta holds
// blosc2_indexes marks every index descriptor stale and drops the persisted query cache, in the
// same commit, as python-blosc2's own writes do (indexing.mark_indexes_stale). The corpus's
// indexed/temps.b2nd, copied to a temporary directory, is written to.
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <b2nd/b2nd.hpp>
#include <b2nd/ops.hpp>

#include "support/files.hpp"
#include "support/temp_dir.hpp"

using b2nd::Value;

namespace {

/// Every descriptor's "stale" (false when absent).
std::vector<bool> stale_flags(const b2nd::AnyArray& a) {
    std::vector<bool> out;
    const Value store = a.attrs().get("blosc2_indexes");
    for (const auto& kv : store["indexes"].entries()) {
        const Value* s = kv.second.find("stale");
        out.push_back(s != nullptr && s->as<bool>());
    }
    return out;
}

}  // namespace

TEST_CASE("python indexes: a data write marks them stale and drops the query cache",
          "[objects][indexes][golden]") {
    if (b2nd::test::corpus_dir().empty()) {
        B2ND_SKIP("corpus not found at " B2ND_CORPUS_DIR);
    }
    const std::string src = b2nd::test::corpus_dir() + "/stores/indexed/temps.b2nd";
    for (const char* how : {"write", "resize", "metadata only"}) {
        INFO(how);
        b2nd::test::TempDir tmp;
        const std::string path = tmp / "temps.b2nd";
        b2nd::test::copy_writable(src, path);
        const std::string payload = tmp / "temps.__query_cache__.b2frame";
        std::ofstream(payload) << "cached rows";
        {
            const b2nd::AnyArray before = b2nd::AnyArray::open(path);
            REQUIRE(stale_flags(before) == std::vector<bool>{false});
            REQUIRE(before.vlmeta("_blosc2_query_cache").has_value());
        }
        const Value units_before = b2nd::AnyArray::open(path).attrs().get("units");
        {
            b2nd::OpenOptions o;
            o.writable = true;
            b2nd::AnyArray a = b2nd::AnyArray::open(path, o);
            const double v = 99.5;
            if (std::string(how) == "write") {
                a.write(b2nd::Selection{b2nd::DimIndex(7)},
                        {reinterpret_cast<const std::uint8_t*>(&v), sizeof v});
            } else if (std::string(how) == "resize") {
                a.resize({1200});
            } else {
                a.attrs().set("note", Value("no data changed"));
            }
        }
        const b2nd::AnyArray after = b2nd::AnyArray::open(path);
        const bool data = std::string(how) != "metadata only";
        CHECK(stale_flags(after) == std::vector<bool>{data});
        CHECK(after.vlmeta("_blosc2_query_cache").has_value() == !data);
        CHECK(std::filesystem::exists(payload) == !data);
        CHECK(after.attrs().get("units") == units_before);  // other entries untouched
    }
}

TEST_CASE("python indexes: a copy carries them stale, without the query cache",
          "[objects][indexes][golden]") {
    if (b2nd::test::corpus_dir().empty()) {
        B2ND_SKIP("corpus not found at " B2ND_CORPUS_DIR);
    }
    const std::string src = b2nd::test::corpus_dir() + "/stores/indexed/temps.b2nd";
    b2nd::test::TempDir tmp;
    b2nd::test::copy_writable(src, tmp / "temps.b2nd");
    const std::string payload = tmp / "temps.__query_cache__.b2frame";
    std::ofstream(payload) << "cached rows";
    b2nd::CopyOptions o;
    o.compression = b2nd::CompressionParams{b2nd::Codec::lz4, 5};
    for (const char* out : {"copy.b2nd", "copy.b2frame"}) {
        INFO(out);
        o.sparse = std::string(out).find(".b2frame") != std::string::npos;
        const b2nd::AnyArray c = b2nd::copy(b2nd::AnyArray::open(tmp / "temps.b2nd"), tmp / out, o);
        CHECK(stale_flags(c) == std::vector<bool>{true});
        CHECK_FALSE(c.vlmeta("_blosc2_query_cache").has_value());
        CHECK(c.attrs().get("units") == Value("degC"));
    }
    // The source keeps its own, and its cache's payload.
    CHECK(stale_flags(b2nd::AnyArray::open(tmp / "temps.b2nd")) == std::vector<bool>{false});
    CHECK(std::filesystem::exists(payload));
}

TEST_CASE("python indexes: arrays without them get no index metadata from writes",
          "[objects][indexes]") {
    b2nd::test::TempDir tmp;
    auto a = b2nd::NDArray<float>::create(tmp / "a.b2nd", {100});
    a.write(b2nd::parse_selection("0:10"), std::vector<float>(10, 1.0f));
    CHECK(a.any().vlmeta_names().empty());
}
