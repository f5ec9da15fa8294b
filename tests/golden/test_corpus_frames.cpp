// Every frame of ../shared/corpus opens; its metalayers, vlmetalayers, chunk count, offsets index
// and chunks match the manifests (and the bare chunk files cut from those frames).
#include <fstream>
#include <string>

#include <catch2/catch.hpp>

#include <b2nd/error.hpp>
#include <b2nd/storage/frame.hpp>

#include "../support/bytes.hpp"
#include "../support/files.hpp"
#include "../support/json.hpp"

using b2nd::storage::Frame;
using b2nd::test::Json;

namespace {

bool file_exists(const std::string& p) {
    return std::ifstream(p).good();
}

std::string chunk_file(const std::string& folder,
                       const std::string& prefix,
                       std::int64_t i,
                       const char* ext) {
    std::string n = std::to_string(i);
    n.insert(0, n.size() < 4 ? 4 - n.size() : 0, '0');
    return b2nd::test::corpus_dir() + "/chunks/" + folder + "/" + prefix + ".c" + n + ext;
}

/// Checks one array case of manifest.json or legacy-2x/manifest.json.
void check_array_case(const std::string& dir,
                      const Json& c,
                      const std::string& chunk_folder,
                      const std::string& chunk_prefix) {
    const std::string path = dir + "/" + c["file"].as_string();
    INFO(path);
    const Frame f = Frame::open(path);
    CHECK(f.sparse() == (c["storage"].as_string() == "sframe"));
    const Json& s = c["schunk"];
    REQUIRE(f.nchunks() == s["nchunks"].as_int());
    CHECK(f.nbytes() == s["nbytes"].as_int());
    CHECK(f.header().chunksize == s["chunksize"].as_int());
    CHECK(f.header().blocksize == s["blocksize"].as_int());
    CHECK(static_cast<int>(f.header().version()) == s["frame_format_version"].as_int());
    CHECK(static_cast<std::int64_t>(f.metalayers().size()) == s["nmetalayers"].as_int());
    CHECK(static_cast<std::int64_t>(f.vlmeta_names().size()) == s["nvlmetalayers"].as_int());
    for (const Json& m : c["metalayers"].as_array()) {
        const auto* ml = f.metalayer(m["name"].as_string());
        REQUIRE(ml != nullptr);
        CHECK(ml->content == b2nd::test::hex(m["msgpack_hex"].as_string()));
    }
    for (const Json& m : c["vlmetalayers"].as_array()) {
        const auto v = f.vlmeta(m["name"].as_string());
        REQUIRE(v.has_value());
        CHECK(*v == b2nd::test::hex(m["msgpack_hex"].as_string()));
    }
    if (c.has("index_offsets")) {
        const auto& offs = c["index_offsets"].as_array();
        REQUIRE(static_cast<std::int64_t>(offs.size()) == f.nchunks());
        for (std::size_t i = 0; i < offs.size(); ++i) {
            // JSON numbers are doubles: compare special entries by sign, others exactly.
            const double want = offs[i].as_number();
            const std::int64_t got = f.index_entry(static_cast<std::int64_t>(i));
            if (want < 0) {
                CHECK(got < 0);
            } else {
                CHECK(got == static_cast<std::int64_t>(want));
            }
        }
    }
    std::int64_t total = 0;
    for (std::int64_t i = 0; i < f.nchunks(); ++i) {
        const auto bytes = f.decode_chunk(i);
        total += static_cast<std::int64_t>(bytes.size());
        const std::string bin = chunk_file(chunk_folder, chunk_prefix, i, ".bin");
        if (file_exists(bin)) {
            const auto stored = f.chunk(i);
            const auto want_chunk =
                b2nd::test::read_file(chunk_file(chunk_folder, chunk_prefix, i, ".chunk"));
            if (!stored.index_only()) {
                CHECK(std::vector<std::uint8_t>(stored.bytes.begin(), stored.bytes.end()) ==
                      want_chunk);
            }
            // Uninitialized chunks have unspecified content (the .bin holds whatever c-blosc2's
            // buffer held); we read them as zeros.
            if (stored.special != b2nd::codec::Special::uninit) {
                INFO("chunk " << i);
                B2ND_REQUIRE_SAME_BYTES(bytes, b2nd::test::read_file(bin));
            }
        }
    }
    CHECK(total == s["nbytes"].as_int());
}

}  // namespace

TEST_CASE("corpus frames: every c-blosc2 3.3 array frame opens and matches its manifest",
          "[storage][golden]") {
    if (b2nd::test::corpus_dir().empty()) {
        B2ND_SKIP("corpus not found at " B2ND_CORPUS_DIR);
    }
    const std::string dir = b2nd::test::corpus_dir();
    const Json m = b2nd::test::load_json_file(dir + "/manifest.json");
    REQUIRE(m["cases"].as_array().size() > 100);
    for (const Json& c : m["cases"].as_array()) {
        check_array_case(dir, c, "from-frames", c["name"].as_string());
    }
}

TEST_CASE("corpus frames: every c-blosc2 2.x array frame opens and matches its manifest",
          "[storage][golden]") {
    if (b2nd::test::corpus_dir().empty()) {
        B2ND_SKIP("corpus not found at " B2ND_CORPUS_DIR);
    }
    const std::string dir = b2nd::test::corpus_dir() + "/legacy-2x";
    const Json m = b2nd::test::load_json_file(dir + "/manifest.json");
    REQUIRE(m["cases"].as_array().size() > 100);
    for (const Json& c : m["cases"].as_array()) {
        std::string prefix = c["name"].as_string();
        prefix[prefix.find('/')] = '_';
        check_array_case(dir, c, "from-legacy-2x", prefix);
    }
}

TEST_CASE("corpus frames: upstream frames (plain, varchunks, VL blocks, python-blosc2) read back",
          "[storage][golden]") {
    if (b2nd::test::corpus_dir().empty()) {
        B2ND_SKIP("corpus not found at " B2ND_CORPUS_DIR);
    }
    const std::string dir = b2nd::test::corpus_dir() + "/upstream";
    const Json m = b2nd::test::load_json_file(dir + "/manifest.json");
    for (const Json& c : m["cases"].as_array()) {
        const std::string path = dir + "/" + c["file"].as_string();
        INFO(path);
        const Frame f = Frame::open(path);
        std::vector<std::uint8_t> all;
        for (std::int64_t i = 0; i < f.nchunks(); ++i) {
            const auto b = f.decode_chunk(i, 2);
            all.insert(all.end(), b.begin(), b.end());
        }
        CHECK(static_cast<std::int64_t>(all.size()) == f.nbytes());
        if (c["kind"].as_string() == "plain-frame") {
            REQUIRE(f.nchunks() == c["nchunks"].as_int());
            const auto& sizes = c["chunk_nbytes"].as_array();
            for (std::size_t i = 0; i < sizes.size(); ++i) {
                CHECK(f.chunk(static_cast<std::int64_t>(i)).nbytes == sizes[i].as_int());
            }
            std::vector<std::string> names;
            for (const Json& n : c["vlmetalayers"].as_array()) {
                names.push_back(n.as_string());
            }
            CHECK(f.vlmeta_names() == names);
            for (const auto& [k, v] : c["special_index_entries"].as_object()) {
                CHECK(static_cast<std::uint64_t>(f.index_entry(std::stoll(k))) ==
                      std::stoull(v.as_string(), nullptr, 16));
            }
            B2ND_REQUIRE_SAME_BYTES(all,
                                    b2nd::test::read_file(dir + "/" + c["expected"].as_string()));
        } else {
            CHECK(f.metalayer("b2nd") != nullptr);
        }
    }
}
