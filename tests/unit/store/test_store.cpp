// python-blosc2's stores (store.hpp) from ../shared/corpus/stores, every case as its manifest
// says: keys with their kinds and where they live, each leaf's content, the tree's and its
// groups' attributes, and the remote references and hidden attribute holders.
#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <b2nd/b2nd.hpp>
#include <b2nd/error.hpp>
#include <b2nd/storage/frame.hpp>
#include <b2nd/store.hpp>

#include "support/bytes.hpp"
#include "support/files.hpp"
#include "support/json.hpp"
#include "support/reference.hpp"

using b2nd::test::Json;

namespace {

std::string stores_dir() {
    const std::string c = b2nd::test::corpus_dir();
    return c.empty() ? c : c + "/stores";
}

b2nd::Value value_of_hex(const std::string& h) {
    const auto b = b2nd::test::hex(h);
    return b2nd::Value::from_msgpack({b.data(), b.size()});
}

b2nd::Shape shape_of(const Json& j) {
    b2nd::Shape s;
    for (const Json& e : j.as_array()) {
        s.push_back(e.as_int());
    }
    return s;
}

}  // namespace

TEST_CASE("store: every store of the corpus lists its keys and reads its leaves",
          "[storage][store][golden]") {
    if (b2nd::test::corpus_dir().empty()) {
        B2ND_SKIP("corpus not found at " B2ND_CORPUS_DIR);
    }
    const Json manifest = b2nd::test::load_json_file(stores_dir() + "/manifest.json");
    int stores = 0, leaves = 0;
    for (const Json& c : manifest["cases"].as_array()) {
        const std::string kind = c["kind"].as_string();
        if (kind != "treestore" && kind != "dictstore" && kind != "embedstore") {
            continue;
        }
        const std::string path = stores_dir() + "/" + c["file"].as_string();
        INFO(path);
        const b2nd::Store s = b2nd::Store::open(path);
        CHECK(b2nd::to_string(s.kind()) == kind);
        CHECK(std::string(s.form()) == c["form"].as_string());

        // The keys, exactly (python's TreeStore.keys(): leaves and groups, no holders), sorted.
        const std::vector<b2nd::StoreEntry> entries = s.entries();
        std::set<std::string> got, want;
        for (const auto& e : entries) {
            got.insert(e.key);
        }
        for (const Json& k : c["keys"].as_array()) {
            want.insert(k["key"].as_string());
        }
        CHECK(got == want);
        CHECK(std::is_sorted(entries.begin(), entries.end(),
                             [](const auto& a, const auto& b) { return a.key < b.key; }));
        for (const Json& h : c["hidden_keys"].as_array()) {
            CHECK(s.find(h["key"].as_string()) == nullptr);
        }

        for (const Json& k : c["keys"].as_array()) {
            const std::string key = k["key"].as_string();
            INFO(key);
            const b2nd::StoreEntry* e = s.find(key);
            REQUIRE(e != nullptr);
            CHECK(e->kind == k["kind"].as_string());
            if (k["kind"].as_string() == "group") {
                CHECK(e->storage == b2nd::LeafStorage::none);
                CHECK_THROWS_AS(s.open_array(key), b2nd::UsageError);
                continue;
            }
            if (k["kind"].as_string() == "c2array") {
                CHECK(e->storage == b2nd::LeafStorage::remote);
                CHECK(e->remote_path == k["path_remote"].as_string());
                CHECK(e->urlbase == k["urlbase"].as_string());
                CHECK_THROWS_WITH(s.open_array(key), Catch::Contains("c2array"));
                continue;
            }
            const std::string storage = k["storage"].as_string();
            CHECK(b2nd::to_string(e->storage) == storage);
            if (storage == "member") {
                CHECK(e->file == k["member"].as_string());
                CHECK(e->offset == static_cast<std::uint64_t>(k["offset"].as_int()));
                CHECK(e->length == static_cast<std::uint64_t>(k["length"].as_int()));
            } else if (storage == "external") {
                CHECK(e->file == k["path"].as_string());
            }
            const b2nd::AnyArray a = s.open_array(key);
            if (k.has("npy")) {
                const b2nd::LeafInfo info = s.describe(key);
                CHECK(info.shape == shape_of(k["shape"]));
                CHECK(info.dtype == k["dtype"].as_string());
                CHECK(a.shape() == shape_of(k["shape"]));
                const auto npy =
                    b2nd::test::read_npy_payload(stores_dir() + "/" + k["npy"].as_string());
                B2ND_REQUIRE_SAME_BYTES(a.read(), npy.data);
            } else if (k.has("expected_bin")) {
                CHECK(s.describe(key).object == b2nd::ObjectKind::schunk);
                const auto bin =
                    b2nd::test::read_file(stores_dir() + "/" + k["expected_bin"].as_string());
                B2ND_REQUIRE_SAME_BYTES(a.read(), bin);
            } else {
                FAIL("a leaf without expected content in the manifest");
            }
            if (k.has("vlmeta")) {
                for (const Json& v : k["vlmeta"].as_array()) {
                    const auto stored = a.vlmeta(v["name"].as_string());
                    REQUIRE(stored.has_value());
                    CHECK(*stored == b2nd::test::hex(v["msgpack_hex"].as_string()));
                }
            }
            ++leaves;
        }

        // The tree's and the groups' attributes.
        if (c.has("vlmeta")) {
            for (const auto& [group, spec] : c["vlmeta"].as_object()) {
                INFO("vlmeta of " << group);
                const auto items = s.vlmeta(group);
                const auto& entries_want = spec["entries"].as_array();
                REQUIRE(items.size() == entries_want.size());
                for (std::size_t i = 0; i < items.size(); ++i) {
                    CHECK(items[i].first == entries_want[i]["name"].as_string());
                    CHECK(items[i].second ==
                          value_of_hex(entries_want[i]["msgpack_hex"].as_string()));
                }
            }
        }
        ++stores;
    }
    CHECK(stores == 7);
    CHECK(leaves >= 40);
}

TEST_CASE("store: what is not a store, and keys that are not leaves, are refused by name",
          "[storage][store][golden]") {
    if (b2nd::test::corpus_dir().empty()) {
        B2ND_SKIP("corpus not found at " B2ND_CORPUS_DIR);
    }
    const std::string dir = stores_dir();
    CHECK_THROWS_WITH(b2nd::Store::open(dir + "/lazy/a.b2nd"), Catch::Contains("a.b2nd"));
    CHECK_THROWS_WITH(b2nd::Store::open(dir + "/lazy"), Catch::Contains("embed.b2e"));
    const b2nd::Store s = b2nd::Store::open(dir + "/trees/t1.b2z");
    CHECK_THROWS_WITH(s.open_array("/nope"), Catch::Contains("t1.b2z:/nope"));
    CHECK_THROWS_WITH(s.open_array("/__vlmeta__"), Catch::Contains("no such key"));
    CHECK_THROWS_AS(s.vlmeta("/temperature"), b2nd::UsageError);
    b2nd::OpenOptions w;
    w.writable = true;
    CHECK_THROWS_AS(s.open_array("/temperature", w), b2nd::UsageError);
    // A key without its leading '/' is the same key.
    CHECK(s.find("group/pressure") == s.find("/group/pressure"));
}

TEST_CASE("store: a .b2z leaf is a window of the archive's one mapping",
          "[storage][store][golden]") {
    if (b2nd::test::corpus_dir().empty()) {
        B2ND_SKIP("corpus not found at " B2ND_CORPUS_DIR);
    }
    const b2nd::Store z = b2nd::Store::open(stores_dir() + "/trees/t2.b2z");
    const b2nd::Store d = b2nd::Store::open(stores_dir() + "/trees/t2.b2d");
    for (const auto& e : z.entries()) {
        if (e.storage == b2nd::LeafStorage::none) {
            continue;
        }
        INFO(e.key);
        // The same leaf in the zip and in the directory form: the same frame bytes.
        const b2nd::AnyArray a = z.open_array(e.key), b = d.open_array(e.key);
        CHECK(a.frame().name() == z.path() + ":" + e.key);  // messages name the leaf
        B2ND_REQUIRE_SAME_BYTES(a.read(), b.read());
        CHECK(a.cbytes() == b.cbytes());
    }
}
