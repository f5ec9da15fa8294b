// The tool on python-blosc2's stores and object kinds (../shared/corpus/stores), run as a
// program: ls --json lists each store as its manifest says, STORE:/key reads leaves, meta reads
// tree, group and python-convention attributes, info names object kinds and refusals exit
// non-zero naming them.
#include <filesystem>
#include <string>

#include <catch2/catch.hpp>

#include <b2nd/b2nd.hpp>
#include <b2nd/store.hpp>

#include "../support/files.hpp"
#include "../support/json.hpp"
#include "../support/reference.hpp"
#include "../support/temp_dir.hpp"
#include "run.hpp"

using b2nd::test::Json;
using b2nd::test::q;
using b2nd::test::run;
using b2nd::test::Run;
using Catch::Matchers::Contains;

namespace {

std::string stores_dir() {
    const std::string c = b2nd::test::corpus_dir();
    return c.empty() ? c : c + "/stores";
}

/// got equals want (numbers by value); with `subset`, objects of got may have more keys.
bool same_json(const Json& got, const Json& want, bool subset) {
    if (got.kind() != want.kind()) {
        return false;
    }
    switch (want.kind()) {
        case Json::Kind::null:
            return true;
        case Json::Kind::boolean:
            return got.as_bool() == want.as_bool();
        case Json::Kind::number:
            return got.as_number() == want.as_number();
        case Json::Kind::string:
            return got.as_string() == want.as_string();
        case Json::Kind::array: {
            const auto& g = got.as_array();
            const auto& w = want.as_array();
            if (g.size() != w.size()) {
                return false;
            }
            for (std::size_t i = 0; i < g.size(); ++i) {
                if (!same_json(g[i], w[i], subset)) {
                    return false;
                }
            }
            return true;
        }
        case Json::Kind::object:
            if (!subset && got.as_object().size() != want.as_object().size()) {
                return false;
            }
            for (const auto& [k, v] : want.as_object()) {
                if (!got.has(k) || !same_json(got[k], v, subset)) {
                    return false;
                }
            }
            return true;
    }
    return false;
}

}  // namespace

TEST_CASE("cli: ls --json lists every store of the corpus as its manifest says",
          "[cli][store][golden]") {
    if (b2nd::test::corpus_dir().empty()) {
        B2ND_SKIP("corpus not found at " B2ND_CORPUS_DIR);
    }
    const Json m = b2nd::test::load_json_file(stores_dir() + "/manifest.json");
    int stores = 0;
    for (const Json& c : m["cases"].as_array()) {
        const std::string kind = c["kind"].as_string();
        if (kind != "treestore" && kind != "dictstore" && kind != "embedstore") {
            continue;
        }
        const std::string path = stores_dir() + "/" + c["file"].as_string();
        INFO(path);
        const Run r = run("ls --json " + q(path));
        REQUIRE(r.status == 0);
        const Json listed = Json::parse(r.output);
        REQUIRE(listed.as_array().size() == c["keys"].as_array().size());
        for (const Json& k : c["keys"].as_array()) {
            INFO(k["key"].as_string());
            const Json* found = nullptr;
            for (const Json& x : listed.as_array()) {
                if (x["key"].as_string() == k["key"].as_string()) {
                    found = &x;
                }
            }
            REQUIRE(found != nullptr);
            CHECK((*found)["kind"].as_string() == k["kind"].as_string());
            if (k.has("storage")) {
                CHECK((*found)["storage"].as_string() == k["storage"].as_string());
            }
            if (k["kind"].as_string() == "ndarray") {
                CHECK(same_json((*found)["shape"], k["shape"], false));
                CHECK((*found)["dtype"].as_string() == k["dtype"].as_string());
            }
        }
        ++stores;
    }
    CHECK(stores == 7);
    CHECK(run("ls " + q(stores_dir() + "/trees/t1.b2d")).output.find("/group/sub/counts") !=
          std::string::npos);
    // A store given where an array is expected says how to read it.
    for (const char* store : {"/trees/t1.b2z", "/trees/t1.b2d"}) {
        const Run as_array = run("info " + q(stores_dir() + store));
        CHECK(as_array.status != 0);
        CHECK_THAT(as_array.output, Contains("b2nd ls") && Contains(":/KEY"));
    }
    const Run bad = run("ls " + q(stores_dir() + "/lazy/a.b2nd"));
    CHECK(bad.status != 0);
    CHECK_THAT(bad.output, Contains("a.b2nd"));
}

TEST_CASE("cli: STORE:/key reads a leaf with every command; meta reads the tree's attributes",
          "[cli][store][golden]") {
    if (b2nd::test::corpus_dir().empty()) {
        B2ND_SKIP("corpus not found at " B2ND_CORPUS_DIR);
    }
    b2nd::test::TempDir tmp;
    const std::string t1 = stores_dir() + "/trees/t1.b2z";
    // export: the leaf's elements, as python wrote them.
    REQUIRE(run("export " + q(t1 + ":/group/sub/counts") + " " + q(tmp / "c.npy")).status == 0);
    B2ND_REQUIRE_SAME_BYTES(
        b2nd::test::read_npy_payload(tmp / "c.npy").data,
        b2nd::test::read_npy_payload(stores_dir() + "/trees/expected/t1/group/sub/counts.npy")
            .data);
    // show and info through the same spelling; a .b2d directory too.
    const Run shown =
        run("show " + q(stores_dir() + "/trees/t1.b2d:/group/pressure") + " --slice 0:3");
    CHECK(shown.status == 0);
    CHECK(run("info " + q(t1 + ":/temperature")).output.find("(40, 30)") != std::string::npos);
    CHECK(run("verify " + q(t1 + ":/temperature")).status == 0);
    // The tree's and a group's attributes, and a leaf's.
    CHECK_THAT(run("meta " + q(t1 + ":/") + " title").output, Contains("public tree one"));
    CHECK_THAT(run("meta " + q(t1 + ":/group") + " units").output, Contains("hPa"));
    CHECK_THAT(run("meta " + q(t1 + ":/temperature") + " units").output, Contains("K"));
    CHECK_THAT(run("meta " + q(t1 + ":/")).output, Contains("shape_hint = [10, 20]"));
    // Writes to a store are refused here, naming the path.
    const Run w = run("meta " + q(t1 + ":/temperature") + " units C --string");
    CHECK(w.status != 0);
    CHECK_THAT(w.output, Contains("read-only"));
    const Run missing = run("show " + q(t1 + ":/nope"));
    CHECK(missing.status != 0);
    CHECK_THAT(missing.output, Contains("/nope"));
}

TEST_CASE("cli: meta prints python-blosc2's msgpack conventions as the manifest says",
          "[cli][store][golden]") {
    if (b2nd::test::corpus_dir().empty()) {
        B2ND_SKIP("corpus not found at " B2ND_CORPUS_DIR);
    }
    const Json m = b2nd::test::load_json_file(stores_dir() + "/manifest.json");
    int n = 0;
    for (const Json& c : m["cases"].as_array()) {
        if (c["kind"].as_string() != "vlmeta") {
            continue;
        }
        const std::string file = stores_dir() + "/" + c["file"].as_string();
        for (const Json& v : c["vlmeta"].as_array()) {
            INFO(v["name"].as_string());
            const Run r = run("meta " + q(file) + " " + q(v["name"].as_string()));
            REQUIRE(r.status == 0);
            const bool subset = v.has("match") && v["match"].as_string() == "subset";
            CHECK(same_json(Json::parse(r.output), v["expected_json"], subset));
            ++n;
        }
    }
    CHECK(n == 11);
}

TEST_CASE("cli: info names object kinds; reads of a refused kind exit non-zero naming it",
          "[cli][store][golden]") {
    if (b2nd::test::corpus_dir().empty()) {
        B2ND_SKIP("corpus not found at " B2ND_CORPUS_DIR);
    }
    const std::string lazy = stores_dir() + "/lazy";
    const Run e = run("info " + q(lazy + "/expr_arith.b2nd"));
    CHECK_THAT(e.output, Contains("kind        lazyexpr") && Contains("a + b * 2"));
    CHECK_THAT(run("info --json " + q(lazy + "/expr_arith.b2nd")).output,
               Contains("\"kind\": \"lazyexpr\""));
    CHECK_THAT(run("info " + q(stores_dir() + "/proxy/proxy_local.b2nd")).output,
               Contains("kind        proxy"));
    CHECK(run("info " + q(lazy + "/a.b2nd")).output.find("kind ") == std::string::npos);
    const Run udf = run("show " + q(lazy + "/udf_python.b2nd"));
    CHECK(udf.status != 0);
    CHECK_THAT(udf.output, Contains("udf"));
    b2nd::test::TempDir tmp;
    const Run proxy =
        run("export " + q(stores_dir() + "/proxy/proxy_local.b2nd") + " " + q(tmp / "p.npy"));
    CHECK(proxy.status != 0);
    CHECK_THAT(proxy.output, Contains("proxy") && Contains("never fetched"));
    // export evaluates a persisted expression.
    REQUIRE(run("export " + q(lazy + "/expr_int.b2nd") + " " + q(tmp / "e.npy")).status == 0);
    B2ND_REQUIRE_SAME_BYTES(b2nd::test::read_npy_payload(tmp / "e.npy").data,
                            b2nd::test::read_npy_payload(lazy + "/expected/expr_int.npy").data);
}

TEST_CASE("cli: pack converts stores between .b2d and .b2z, keys and values kept",
          "[cli][store][golden]") {
    if (b2nd::test::corpus_dir().empty()) {
        B2ND_SKIP("corpus not found at " B2ND_CORPUS_DIR);
    }
    b2nd::test::TempDir tmp;
    for (const char* src : {"trees/t1.b2d", "trees/t2.b2z", "dicts/d1.b2d"}) {
        INFO(src);
        const std::string in = stores_dir() + "/" + src;
        const bool to_zip = std::string(src).find(".b2d") != std::string::npos;
        const std::string out =
            tmp / (std::string(to_zip ? "o" : "o2") + (to_zip ? ".b2z" : ".b2d"));
        const Run packed = run("pack " + q(in) + " " + q(out) + " --overwrite");
        REQUIRE(packed.status == 0);
        CHECK_THAT(packed.output, Catch::Contains(out + ": ") && Catch::Contains(" leaves, "));
        // The same listing (kinds, shapes, dtypes); only where files live differs by form.
        const Json a = Json::parse(run("ls --json " + q(in)).output);
        const Json b = Json::parse(run("ls --json " + q(out)).output);
        REQUIRE(a.as_array().size() == b.as_array().size());
        for (std::size_t i = 0; i < a.as_array().size(); ++i) {
            const Json& x = a.as_array()[i];
            const Json& y = b.as_array()[i];
            CHECK(x["key"].as_string() == y["key"].as_string());
            CHECK(x["kind"].as_string() == y["kind"].as_string());
            if (x.has("dtype")) {
                CHECK(x["dtype"].as_string() == y["dtype"].as_string());
                CHECK(run("diff " + q(in + ":" + x["key"].as_string()) + " " +
                          q(out + ":" + y["key"].as_string()))
                          .status == 0);
            }
        }
        const Run again = run("pack " + q(in) + " " + q(out));
        CHECK(again.status != 0);  // exists, no --overwrite
    }
}

TEST_CASE("cli: ls escapes control characters of keys and lists past an unreadable leaf", "[cli]") {
    b2nd::test::TempDir tmp;
    const std::string st = tmp / "s.b2d";
    {
        b2nd::CreateOptions o;
        o.chunk_shape = {8};
        (void)b2nd::NDArray<double>::create_from(tmp / "a.b2nd", {16}, std::vector<double>(16, 1.0),
                                                 o);
        const auto a = b2nd::NDArray<double>::open(tmp / "a.b2nd");
        auto w = b2nd::StoreWriter::create(st);
        w.put("/evil\x1b[2J\x07name", a);  // escape and bell (the writer refuses newlines)
        w.put("/good", a);
        w.put("/zbroken", a);
        w.commit();
    }
    Run r = run("ls " + q(st));
    CHECK(r.status == 0);
    CHECK_THAT(r.output, Contains("/evil\\x1b[2J\\x07name") && !Contains("\x1b"));
    // A leaf cut short: listed as unreadable, the others still, exit 1.
    std::filesystem::resize_file(st + "/zbroken.b2nd", 40);
    r = run("ls " + q(st));
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Contains("/good") && Contains("/zbroken") && Contains("unreadable") &&
                             Contains("1 leaf could not be read"));
    r = run("ls --json " + q(st));
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Contains("\"key\": \"/good\"") && Contains("\"error\": "));
}
