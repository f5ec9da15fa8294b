// b2nd convert, concat and compact, run as a program on corpus files: what they write is exported
// again and compared with the corpus .npy files (for concat, with the .npy payloads joined here),
// the written geometry and compression are read back through the library, refusals write
// nothing, and the progress bar shows only when asked for.
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include <catch2/catch.hpp>

#include <b2nd/b2nd.hpp>
#include <b2nd/codec/registry.hpp>

#include "../support/data.hpp"
#include "../support/files.hpp"
#include "../support/json.hpp"
#include "../support/process.hpp"
#include "../support/reference.hpp"
#include "../support/temp_dir.hpp"
#include "run.hpp"

using b2nd::test::Json;
using b2nd::test::npy_bytes;
using b2nd::test::q;
using b2nd::test::run;
using b2nd::test::Run;
using Catch::Matchers::Contains;

namespace {

std::string corpus() {
    return b2nd::test::corpus_dir();
}

std::string py_shape(const b2nd::Shape& s) {
    std::string t = "(";
    for (std::size_t i = 0; i < s.size(); ++i) {
        t += std::to_string(s[i]) + (s.size() == 1 ? "," : i + 1 < s.size() ? ", " : "");
    }
    return t + ")";
}

}  // namespace

TEST_CASE("cli: convert every corpus array and export it back byte for byte", "[cli][golden]") {
    if (corpus().empty()) {
        B2ND_SKIP("corpus not found at " B2ND_CORPUS_DIR);
    }
    b2nd::test::TempDir tmp;
    const auto m = b2nd::test::load_json_file(corpus() + "/manifest.json");
    int n = 0;
    for (const auto& c : m["cases"].as_array()) {
        if (c["dtype"].is_null()) {
            continue;  // legacy caterva (no dtype stored): see the --dtype case below
        }
        const std::string file = corpus() + "/" + c["file"].as_string();
        INFO(file);
        // Every other case re-encoded with new chunks, the others copied as stored.
        const bool reencode = (n++ % 2) == 0;
        const std::string out = tmp / (reencode ? "out.b2frame" : "out.b2nd");
        std::string args = "convert " + q(file) + " " + q(out) + " --overwrite";
        if (reencode) {
            args += " --codec lz4 --clevel 9 --filters bitshuffle";
        }
        Run r = run(args);
        REQUIRE(r.status == 0);
        CHECK_THAT(r.output, Contains(reencode ? "(0 copied as stored" : " 0 encoded"));
        const b2nd::AnyArray a = b2nd::AnyArray::open(out);
        CHECK(a.sparse() == reencode);
        if (reencode) {
            CHECK(a.compression().codec == b2nd::Codec::lz4);
        }
        REQUIRE(run("export --overwrite " + q(out) + " " + q(tmp / "out.npy")).status == 0);
        B2ND_REQUIRE_SAME_BYTES(b2nd::test::read_file(tmp / "out.npy"),
                                b2nd::test::read_file(corpus() + "/" + c["npy"].as_string()));
    }
    CHECK(n >= 100);
    for (const auto& e : std::filesystem::directory_iterator(tmp.path())) {
        CHECK(e.path().filename().string().find("tmp") == std::string::npos);
    }
}

TEST_CASE("cli: convert re-chunks, keeps attributes, refuses what does not fit", "[cli][golden]") {
    if (corpus().empty()) {
        B2ND_SKIP("corpus not found at " B2ND_CORPUS_DIR);
    }
    b2nd::test::TempDir tmp;
    const std::string src = corpus() + "/append_general_f4.b2nd";
    const b2nd::AnyArray in = b2nd::AnyArray::open(src);
    Run r = run("convert " + q(src) + " " + q(tmp / "a.b2nd") +
                " --chunks 4,8,8 --blocks 2,4,8 --codec zlib --clevel 3 --filters none");
    REQUIRE(r.status == 0);
    const b2nd::AnyArray a = b2nd::AnyArray::open(tmp / "a.b2nd");
    CHECK(a.chunk_shape() == b2nd::Shape{4, 8, 8});
    CHECK(a.block_shape() == b2nd::Shape{2, 4, 8});
    CHECK(a.compression().codec == b2nd::Codec::zlib);
    CHECK(a.compression().clevel == 3);
    CHECK(a.compression().filters.empty());
    CHECK(a.read() == in.read());

    // vlmeta (python-blosc2's attributes) come along unless --no-meta.
    {
        b2nd::OpenOptions w;
        w.writable = true;
        b2nd::AnyArray t = b2nd::AnyArray::open(tmp / "a.b2nd", w);
        const std::vector<std::uint8_t> v = {0xa1, 'K'};
        t.set_vlmeta("units", {v.data(), v.size()});
    }
    REQUIRE(run("convert " + q(tmp / "a.b2nd") + " " + q(tmp / "b.b2frame")).status == 0);
    CHECK(b2nd::AnyArray::open(tmp / "b.b2frame").vlmeta("units") ==
          std::vector<std::uint8_t>{0xa1, 'K'});
    CHECK(b2nd::AnyArray::open(tmp / "b.b2frame").sparse());
    REQUIRE(run("convert " + q(tmp / "a.b2nd") + " " + q(tmp / "c.b2nd") + " --no-meta").status ==
            0);
    CHECK_FALSE(b2nd::AnyArray::open(tmp / "c.b2nd").vlmeta("units").has_value());

    // Refusals: exit 2 with the reason, nothing written.
    r = run("convert " + q(src) + " " + q(tmp / "x.b2nd") + " --chunks 4,8");
    CHECK(r.status == 2);
    CHECK_THAT(r.output, Contains("x.b2nd"));
    r = run("convert " + q(src) + " " + q(tmp / "a.b2nd"));
    CHECK(r.status == 2);
    CHECK_THAT(r.output, Contains("exists; --overwrite replaces it"));
    r = run("convert " + q(src) + " " + q(tmp / "x.b2nd") + " --codec snappy");
    CHECK(r.status == 2);
    CHECK_THAT(r.output, Contains("unknown codec"));
    r = run("convert " + q(tmp / "missing.b2nd") + " " + q(tmp / "x.b2nd"));
    CHECK(r.status == 1);
    // --verify decodes the chunks copied as stored: a corrupt one stops the copy (exit 1).
    {
        const auto smooth = b2nd::test::smooth_bytes(200 * 60 * 4, 4, 3);
        (void)b2nd::AnyArray::create_from(tmp / "bad.b2nd", b2nd::DType::parse("<f4"), {200, 60},
                                          {smooth.data(), smooth.size()},
                                          b2nd::test::chunked({50, 60}, {25, 60}));
    }
    b2nd::test::garble_middle(tmp / "bad.b2nd", 4096);
    r = run("convert " + q(tmp / "bad.b2nd") + " " + q(tmp / "x.b2nd") + " --verify");
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Contains("bad.b2nd") && Contains("chunk"));
    CHECK_FALSE(std::filesystem::exists(tmp / "x.b2nd"));
    CHECK(b2nd::AnyArray::open(tmp / "a.b2nd").read() == in.read());
}

TEST_CASE("cli: concat and stack corpus arrays", "[cli][golden]") {
    if (corpus().empty()) {
        B2ND_SKIP("corpus not found at " B2ND_CORPUS_DIR);
    }
    b2nd::test::TempDir tmp;
    const std::string f4 = corpus() + "/append_general_f4";
    const auto npy = b2nd::test::read_npy_payload(f4 + ".npy");
    const b2nd::AnyArray in = b2nd::AnyArray::open(f4 + ".b2nd");
    const b2nd::Shape s = in.shape();
    std::vector<std::uint8_t> twice = npy.data;
    twice.insert(twice.end(), npy.data.begin(), npy.data.end());

    Run r = run("concat " + q(tmp / "c.b2nd") + " " + q(f4 + ".b2nd") + " " + q(f4 + ".b2nd"));
    REQUIRE(r.status == 0);
    REQUIRE(run("export --overwrite " + q(tmp / "c.b2nd") + " " + q(tmp / "c.npy")).status == 0);
    b2nd::Shape cs = s;
    cs[0] *= 2;
    B2ND_REQUIRE_SAME_BYTES(b2nd::test::read_file(tmp / "c.npy"),
                            npy_bytes("<f4", py_shape(cs), twice));

    r = run("concat " + q(tmp / "s.b2frame") + " " + q(f4 + ".b2nd") + " " + q(f4 + ".b2nd") +
            " --stack --axis 0");
    REQUIRE(r.status == 0);
    CHECK_THAT(r.output, Contains(" 0 encoded"));  // every chunk copied as stored
    REQUIRE(run("export --overwrite " + q(tmp / "s.b2frame") + " " + q(tmp / "s.npy")).status == 0);
    b2nd::Shape ss = s;
    ss.insert(ss.begin(), 2);
    B2ND_REQUIRE_SAME_BYTES(b2nd::test::read_file(tmp / "s.npy"),
                            npy_bytes("<f4", py_shape(ss), twice));

    // Along the last axis: compared with the library's reading of the source.
    r = run("concat " + q(tmp / "l.b2nd") + " " + q(f4 + ".b2nd") + " " + q(f4 + ".b2nd") +
            " --axis -1 --chunks 5,5,5");
    REQUIRE(r.status == 0);
    const b2nd::AnyArray l = b2nd::AnyArray::open(tmp / "l.b2nd");
    CHECK(l.shape() == b2nd::Shape{s[0], s[1], 2 * s[2]});
    CHECK(l.read(b2nd::parse_selection(":, :, " + std::to_string(s[2]) + ":")) == npy.data);
    CHECK(l.read(b2nd::parse_selection(":, :, :" + std::to_string(s[2]))) == npy.data);

    // Dtypes that differ: exit 2, both files named, nothing written.
    r = run("concat " + q(tmp / "x.b2nd") + " " + q(f4 + ".b2nd") + " " +
            q(corpus() + "/append_general_i8_sframe.b2frame"));
    CHECK(r.status == 2);
    CHECK_THAT(r.output, Contains("append_general_i8_sframe") && Contains("'<i8'"));
    CHECK_FALSE(std::filesystem::exists(tmp / "x.b2nd"));
}

TEST_CASE("cli: compact removes the dead space updates leave", "[cli]") {
    b2nd::test::TempDir tmp;
    b2nd::CreateOptions co;
    co.chunk_shape = {16, 16};
    co.block_shape = {8, 8};
    co.auto_compact = false;
    std::vector<std::uint8_t> data(64 * 64 * 4);
    for (std::size_t i = 0; i < data.size(); ++i) {
        data[i] = static_cast<std::uint8_t>((i * 2654435761U) >> 13);
    }
    {
        b2nd::AnyArray a = b2nd::AnyArray::create_from(tmp / "a.b2nd", b2nd::DType::parse("<u4"),
                                                       {64, 64}, {data.data(), data.size()}, co);
        for (int k = 0; k < 3; ++k) {  // rewrite every chunk three times
            a.write(b2nd::Box::whole({64, 64}), {data.data(), data.size()});
        }
    }
    const auto before = std::filesystem::file_size(tmp / "a.b2nd");
    Run r = run("compact " + q(tmp / "a.b2nd"), "B2ND_PROGRESS=1");
    REQUIRE(r.status == 0);
    CHECK_THAT(r.output,
               Contains("dead space removed") && Contains("compact [") && Contains("100%"));
    // The first frames show no rate: a slab done in microseconds is not TiB/s.
    const std::string first = r.output.substr(0, r.output.find('\r', 1));
    CHECK_THAT(first, Contains("--/s") && !Contains("TiB/s") && !Contains("PiB/s"));
    const auto after = std::filesystem::file_size(tmp / "a.b2nd");
    CHECK(after * 3 < before);
    CHECK(b2nd::AnyArray::open(tmp / "a.b2nd").read() == data);
    r = run("compact " + q(tmp / "a.b2nd"));
    REQUIRE(r.status == 0);
    CHECK_THAT(r.output, Contains("nothing to compact"));
}

TEST_CASE("cli: progress bars on request only; every command has help with an example", "[cli]") {
    b2nd::test::TempDir tmp;
    {
        std::vector<std::uint8_t> zeros(100 * 100 * 8);
        b2nd::AnyArray::create_from(tmp / "a.b2nd", b2nd::DType::parse("<f8"), {100, 100},
                                    {zeros.data(), zeros.size()});
    }
    Run r = run("convert " + q(tmp / "a.b2nd") + " " + q(tmp / "b.b2nd") + " --codec lz4",
                "B2ND_PROGRESS=1");
    REQUIRE(r.status == 0);
    CHECK_THAT(r.output, Contains("convert [") && Contains("100%") && Contains("/s"));
    r = run("convert " + q(tmp / "a.b2nd") + " " + q(tmp / "c.b2nd") + " --codec lz4");
    REQUIRE(r.status == 0);
    CHECK_THAT(r.output, !Contains("convert ["));  // not a terminal: no bar
    for (const char* cmd : {"export", "verify", "import", "concat"}) {
        INFO(cmd);
        const std::string c = cmd;
        const std::string args = c == "export"   ? q(tmp / "a.b2nd") + " " + q(tmp / "a.npy")
                                 : c == "verify" ? q(tmp / "a.b2nd")
                                 : c == "import" ? q(tmp / "a.npy") + " " + q(tmp / "i.b2nd")
                                                 : q(tmp / "cc.b2nd") + " " + q(tmp / "a.b2nd");
        r = run(c + " " + args, "B2ND_PROGRESS=1");
        REQUIRE(r.status == 0);
        CHECK_THAT(r.output, Contains(c + " [") && Contains("100%"));
    }
    CHECK(b2nd::AnyArray::open(tmp / "i.b2nd").read() ==
          b2nd::AnyArray::open(tmp / "a.b2nd").read());

    for (const char* cmd : {"info", "export", "import", "verify", "convert", "concat", "compact",
                            "show", "meta", "bench"}) {
        INFO(cmd);
        r = run(std::string(cmd) + " --help");
        CHECK(r.status == 0);
        CHECK_THAT(r.output, Contains(std::string("usage: b2nd ") + cmd) && Contains("example"));
    }
}

TEST_CASE("cli: a convert killed at any moment leaves the old OUT or the new one, never half",
          "[cli][process]") {
    b2nd::test::TempDir tmp;
    // 24 MiB of noisy floats, re-encoded at zstd 9: long enough to be killed in the middle.
    std::vector<float> v(6 * 1024 * 1024);
    b2nd::test::SplitMix rng(5);
    for (float& x : v) {
        x = static_cast<float>(rng.next() >> 40);
    }
    b2nd::CreateOptions co;
    co.chunk_shape = {256, 1024};
    const auto src = b2nd::NDArray<float>::create_from(tmp / "src.b2nd", {6144, 1024}, v, co);
    std::vector<float> old(16, 7.0F);
    for (const bool sparse : {false, true}) {
        INFO("sparse " << sparse);
        const std::string out = tmp / (sparse ? "out.b2frame" : "out.b2nd");
        b2nd::NDArray<float>::create_from(out, {4, 4}, old);  // the OUT a convert replaces
        std::mt19937 pick(sparse ? 11 : 12);
        int killed = 0, finished = 0;
        for (int round = 0; round < 12; ++round) {
            b2nd::test::Child c({B2ND_CLI_PATH, "convert", tmp / "src.b2nd", out, "--codec", "zstd",
                                 "--clevel", "9", "--overwrite", "--nthreads", "2"});
            std::this_thread::sleep_for(
                std::chrono::milliseconds(std::uniform_int_distribution<int>(0, 400)(pick)));
            int status = 0;
            if (::kill(c.pid(), 0) == 0) {
                c.kill();
                ++killed;
            } else {
                c.finish(&status);
                ++finished;
            }
            // OUT opens, and is the old array or the whole new one.
            const auto a = b2nd::NDArray<float>::open(out);
            if (a.shape() == b2nd::Shape{4, 4}) {
                CHECK(a.read() == old);
            } else {
                REQUIRE(a.shape() == b2nd::Shape{6144, 1024});
                CHECK(a.read() == v);
                b2nd::NDArray<float>::create_from(out, {4, 4}, old, [] {
                    b2nd::CreateOptions o;
                    o.overwrite = true;
                    return o;
                }());
            }
        }
        CHECK(killed >= 3);
        // A finished convert sweeps what killed ones left beside OUT.
        REQUIRE(run("convert " + q(tmp / "src.b2nd") + " " + q(out) + " --overwrite").status == 0);
        for (const auto& e : std::filesystem::directory_iterator(tmp.path())) {
            CHECK(e.path().filename().string().find(".b2nd-tmp-") == std::string::npos);
        }
        CHECK(b2nd::NDArray<float>::open(out).read() == v);
    }
}

TEST_CASE("cli: bench times the standard workloads on a corpus array", "[cli][golden]") {
    if (corpus().empty()) {
        B2ND_SKIP("corpus not found at " B2ND_CORPUS_DIR);
    }
    const std::string file = corpus() + "/medium_f4_3d.b2nd";
    Run r = run("bench " + q(file) + " --repeat 2 --json");
    REQUIRE(r.status == 0);
    const auto j = b2nd::test::Json::parse(r.output);
    CHECK(j["repeat"].as_int() == 2);
    const auto& res = j["results"];
    for (const char* k : {"full", "slice axis 0", "slice axis 1", "slice axis 2", "point", "box"}) {
        INFO(k);
        REQUIRE(res.has(k));
        CHECK(res[k]["seconds_min"].as_number() > 0);
        CHECK(res[k]["seconds_max"].as_number() >= res[k]["seconds_min"].as_number());
        CHECK_THAT(res[k]["text"].as_string(),
                   Contains(std::string(k) == "point" ? "warm" : "GB/s"));
    }
    r = run("bench " + q(file) + " --repeat 1 --nthreads 1");
    REQUIRE(r.status == 0);
    CHECK_THAT(r.output, Contains("1 thread(s)") && Contains("full") && Contains("per box"));
    CHECK(run("bench " + q(corpus() + "/nope.b2nd")).status == 1);
}

TEST_CASE("cli: import, verify and compact on every corpus array", "[cli][golden]") {
    if (corpus().empty()) {
        B2ND_SKIP("corpus not found at " B2ND_CORPUS_DIR);
    }
    b2nd::test::TempDir tmp;
    const auto m = b2nd::test::load_json_file(corpus() + "/manifest.json");
    int n = 0, compacted = 0;
    for (const auto& c : m["cases"].as_array()) {
        const std::string file = corpus() + "/" + c["file"].as_string();
        const std::string npy = corpus() + "/" + c["npy"].as_string();
        INFO(file);
        // verify: every chunk of what c-blosc2 wrote decodes.
        Run r = run("verify " + q(file));
        REQUIRE(r.status == 0);
        CHECK_THAT(r.output, Contains("ok: "));
        if (c["dtype"].is_null()) {
            continue;  // legacy caterva: its .npy holds another dtype
        }
        ++n;
        // import: the .npy as a new array, exported again byte for byte.
        r = run("import " + q(npy) + " " + q(tmp / "i.b2nd") + " --overwrite");
        REQUIRE(r.status == 0);
        REQUIRE(run("export --overwrite " + q(tmp / "i.b2nd") + " " + q(tmp / "i.npy")).status ==
                0);
        B2ND_REQUIRE_SAME_BYTES(b2nd::test::read_file(tmp / "i.npy"), b2nd::test::read_file(npy));
        // compact: a copy of each contiguous frame (updates by c-blosc2 leave dead space in
        // some), the same content afterwards.
        if (c["storage"].as_string() != "cframe") {
            continue;
        }
        b2nd::test::copy_writable(file, tmp / "c.b2nd");
        r = run("compact " + q(tmp / "c.b2nd"));
        REQUIRE(r.status == 0);
        compacted += r.output.find("dead space removed") != std::string::npos;
        REQUIRE(run("export --overwrite " + q(tmp / "c.b2nd") + " " + q(tmp / "c.npy")).status ==
                0);
        B2ND_REQUIRE_SAME_BYTES(b2nd::test::read_file(tmp / "c.npy"), b2nd::test::read_file(npy));
    }
    CHECK(n >= 100);
    CHECK(compacted >= 1);
}

TEST_CASE("cli: plugin codecs and filters through import, convert, info and export",
          "[cli][golden]") {
    if (b2nd::test::corpus_dir().empty()) {
        B2ND_SKIP("corpus not found at " B2ND_CORPUS_DIR);
    }
    const std::string root = b2nd::test::corpus_dir() + "/plugins";
    b2nd::test::TempDir dir;
    // Every corpus plugin array converted to zstd and exported: the .npy, byte for byte.
    const Json m = b2nd::test::load_json_file(root + "/manifest.json");
    for (const Json& c : m["cases"].as_array()) {
        INFO(c["name"].as_string());
        const bool zfp = c["codec"].as_string().rfind("zfp", 0) == 0;
        const Run r = run("convert " + q(root + "/" + c["file"].as_string()) + " " +
                          q(dir / "z.b2nd") + " --codec zstd --filters shuffle --overwrite");
        if (zfp && !b2nd::codec::has_zfp() && r.status != 0) {
            CHECK_THAT(r.output, Contains("built without ZFP"));  // unless no stream needs zfp
            continue;
        }
        REQUIRE(r.status == 0);
        REQUIRE(run("export --overwrite " + q(dir / "z.b2nd") + " " + q(dir / "z.npy")).status ==
                0);
        REQUIRE(b2nd::test::read_file(dir / "z.npy") ==
                b2nd::test::read_file(root + "/" + c["npy"].as_string()));
    }
    // A float field imported with each plugin; info names the codec and its parameter.
    std::vector<std::uint8_t> payload(64 * 48 * 4);
    for (std::size_t i = 0; i < payload.size() / 4; ++i) {
        const float v = static_cast<float>(std::sin(static_cast<double>(i) * 0.01)) * 50.0F;
        std::memcpy(&payload[i * 4], &v, 4);
    }
    {
        std::ofstream f(dir / "f.npy", std::ios::binary);
        const auto bytes = npy_bytes("<f4", "(64, 48)", payload);
        f.write(reinterpret_cast<const char*>(bytes.data()),
                static_cast<std::streamsize>(bytes.size()));
    }
    const std::string in = q(dir / "f.npy");
    const std::string out = q(dir / "f.b2nd");
    if (b2nd::codec::has_zfp()) {
        Run r = run("import " + in + " " + out +
                    " --codec zfp-accuracy:-3 --chunks 32,48 --blocks 16,16");
        REQUIRE(r.status == 0);
        r = run("info " + out);
        CHECK_THAT(r.output, Contains("codec       zfp_accuracy:-3 clevel 1, filters none"));
        CHECK_THAT(run("info " + out + " --json").output,
                   Contains("\"codec\": \"zfp_accuracy\",\n  \"codec_param\": -3"));
        r = run("import " + in + " " + out +
                " --codec zfp_prec:10 --overwrite --chunks 32,48 --blocks 8,8");
        REQUIRE(r.status == 0);
        CHECK_THAT(run("info " + out).output, Contains("zfp_precision:10"));
        // Refusals: exit 2, the rule named, nothing written.
        r = run("import " + in + " " + q(dir / "g.b2nd") +
                " --codec zfp-rate:30 --filters shuffle");
        CHECK(r.status == 2);
        CHECK_THAT(r.output, Contains("after the shuffle filter"));
        r = run("import " + in + " " + q(dir / "g.b2nd") +
                " --codec zfp-rate:30 --chunks 32,48 --blocks 2,16");
        CHECK(r.status == 2);
        CHECK_THAT(r.output, Contains("block dim 0 is 2"));
        CHECK_FALSE(std::filesystem::exists(dir / "g.b2nd"));
    }
    Run r = run("import " + in + " " + out + " --codec ndlz:4 --filters shuffle --overwrite");
    REQUIRE(r.status == 0);
    CHECK_THAT(run("info " + out).output,
               Contains("ndlz:4 clevel 1, filters shuffle, split always"));
    REQUIRE(run("export --overwrite " + out + " " + q(dir / "back.npy")).status == 0);
    CHECK(b2nd::test::read_file(dir / "back.npy") == npy_bytes("<f4", "(64, 48)", payload));
    r = run("import " + in + " " + out + " --filters int_trunc:-8,ndcell:4,shuffle --overwrite");
    REQUIRE(r.status == 0);
    CHECK_THAT(run("info " + out).output, Contains("filters int_trunc:-8,ndcell:4,shuffle"));
    for (const char* bad :
         {"--codec ndlz", "--codec ndlz:5", "--codec zstd:3", "--codec zfp-accuracy:300",
          "--filters ndmean:4,int_trunc:0", "--codec nope:1"}) {
        INFO(bad);
        r = run("import " + in + " " + q(dir / "h.b2nd") + " " + bad);
        CHECK(r.status == 2);
        CHECK_FALSE(std::filesystem::exists(dir / "h.b2nd"));
    }
}

TEST_CASE("cli: compact of a sparse frame removes the chunk files no index names", "[cli]") {
    b2nd::test::TempDir tmp;
    const std::string dir = tmp / "s.b2frame";
    b2nd::CreateOptions co;
    co.chunk_shape = {16};
    co.sparse = true;
    co.durable = false;
    const std::vector<double> v(64, 2.0);
    (void)b2nd::NDArray<double>::create_from(dir, {64}, v, co);
    // Left over as a writer killed before its commit would leave them.
    std::filesystem::copy_file(dir + "/00000000.chunk", dir + "/000000FF.chunk");
    std::filesystem::copy_file(dir + "/00000000.chunk", dir + "/00000100.chunk");
    Run r = run("compact " + q(dir));
    REQUIRE(r.status == 0);
    CHECK_THAT(r.output, Contains("unused chunk files removed"));
    CHECK_FALSE(std::filesystem::exists(dir + "/000000FF.chunk"));
    CHECK_FALSE(std::filesystem::exists(dir + "/00000100.chunk"));
    CHECK(b2nd::NDArray<double>::open(dir).read() == v);
}
