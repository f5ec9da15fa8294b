// The b2nd tool, run as a program: export gives the corpus .npy files byte for byte, slices
// match an element-by-element slicer, import/export round trips, verify catches corruption, and
// bad arguments get exit code 2 with a message.
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include "../support/files.hpp"
#include "../support/json.hpp"
#include "../support/reference.hpp"
#include "../support/temp_dir.hpp"
#include "run.hpp"

using b2nd::test::q;
using b2nd::test::run;
using b2nd::test::Run;
using Catch::Matchers::Contains;

namespace {

/// A .npy file written by hand (not by the library under test).
void write_test_npy(const std::string& path,
                    const std::string& descr,
                    const std::string& shape,
                    const std::vector<std::uint8_t>& data) {
    const std::vector<std::uint8_t> bytes = b2nd::test::npy_bytes(descr, shape, data);
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()),
               static_cast<std::streamsize>(bytes.size()));
}

/// A 30 x 20 x 10 int16 .npy whose elements count up from 0 (each holds its flat index);
/// returns its data.
std::vector<std::uint8_t> counting_i16(const std::string& path) {
    std::vector<std::uint8_t> data;
    for (int i = 0; i < 6000; ++i) {
        data.push_back(static_cast<std::uint8_t>(i & 0xff));
        data.push_back(static_cast<std::uint8_t>(i >> 8));
    }
    write_test_npy(path, "<i2", "(30, 20, 10)", data);
    return data;
}

}  // namespace

TEST_CASE("cli: export gives every corpus .npy byte for byte", "[cli][golden]") {
    if (b2nd::test::corpus_dir().empty()) {
        B2ND_SKIP("corpus not found at " B2ND_CORPUS_DIR);
    }
    b2nd::test::TempDir tmp;
    for (const std::string sub : {"", "/legacy-2x"}) {
        const std::string dir = b2nd::test::corpus_dir() + sub;
        const auto m = b2nd::test::load_json_file(dir + "/manifest.json");
        for (const auto& c : m["cases"].as_array()) {
            const std::string file = dir + "/" + c["file"].as_string();
            INFO(file);
            const Run r = run("export --overwrite " + q(file) + " " + q(tmp / "out.npy"));
            REQUIRE(r.status == 0);
            B2ND_REQUIRE_SAME_BYTES(b2nd::test::read_file(tmp / "out.npy"),
                                    b2nd::test::read_file(dir + "/" + c["npy"].as_string()));
        }
    }
    const std::string up = b2nd::test::corpus_dir() + "/upstream/example_item_prices";
    CHECK(run("export --overwrite " + q(up + ".b2nd") + " " + q(tmp / "x.npy") + " --dtype '<f4'")
              .status == 0);
    B2ND_REQUIRE_SAME_BYTES(b2nd::test::read_file(tmp / "x.npy"),
                            b2nd::test::read_file(up + ".npy"));
}

TEST_CASE("cli: import, info, slices, export and verify", "[cli]") {
    b2nd::test::TempDir tmp;
    const std::vector<std::uint8_t> data = counting_i16(tmp / "in.npy");
    Run r = run(
        "import " + q(tmp / "in.npy") + " " + q(tmp / "a.b2frame") +
        " --codec lz4 --clevel 5 --filters shuffle,delta --chunks 8,8,8 --blocks 4,4,8 --sframe");
    REQUIRE(r.status == 0);
    CHECK(std::filesystem::is_directory(tmp / "a.b2frame"));

    r = run("info --json " + q(tmp / "a.b2frame"));
    REQUIRE(r.status == 0);
    const auto info = b2nd::test::Json::parse(r.output);
    CHECK(info["dtype"].as_string() == "<i2");
    CHECK(info["storage"].as_string() == "sframe");
    CHECK(info["codec"].as_string() == "lz4");
    CHECK(info["clevel"].as_int() == 5);
    CHECK(info["filters"].as_string() == "shuffle,delta");
    CHECK(info["chunkshape"].as_array()[2].as_int() == 8);
    // One definition of size: the elements' bytes; the frame's padded count apart.
    CHECK(info["nbytes"].as_int() == 30 * 20 * 10 * 2);
    CHECK(info["padded_nbytes"].as_int() == (4 * 3 * 2) * (8 * 8 * 8) * 2);  // 24 chunks of 8^3
    CHECK(info["cbytes"].as_int() > 0);
    CHECK(info["ratio"].as_number() == Approx(static_cast<double>(info["nbytes"].as_int()) /
                                              static_cast<double>(info["cbytes"].as_int())));
    r = run("info " + q(tmp / "a.b2frame"));
    CHECK_THAT(r.output, Contains("shape       (30, 20, 10)"));

    REQUIRE(run("export --overwrite " + q(tmp / "a.b2frame") + " " + q(tmp / "all.npy")).status ==
            0);
    B2ND_REQUIRE_SAME_BYTES(b2nd::test::read_file(tmp / "all.npy"),
                            b2nd::test::read_file(tmp / "in.npy"));

    REQUIRE(run("export --overwrite " + q(tmp / "a.b2frame") + " " + q(tmp / "s.npy") +
                " --slice '3:25:4, -1, ::-3'")
                .status == 0);
    const auto got = b2nd::test::read_npy_payload(tmp / "s.npy");
    CHECK_THAT(got.header, Contains("'shape': (6, 4)"));
    CHECK_THAT(got.header, Contains("'descr': '<i2'"));
    B2ND_REQUIRE_SAME_BYTES(got.data, b2nd::test::reference_slice(data, {30, 20, 10}, 2, {3, 19, 9},
                                                                  {6, 1, 4}, {4, 1, -3}));

    r = run("verify " + q(tmp / "a.b2frame"));
    CHECK(r.status == 0);
    CHECK_THAT(r.output, Contains("ok"));
}

TEST_CASE("cli: export with index lists, points and masks", "[cli]") {
    b2nd::test::TempDir tmp;
    counting_i16(tmp / "in.npy");
    REQUIRE(run("import " + q(tmp / "in.npy") + " " + q(tmp / "a.b2nd") +
                " --chunks 8,8,8 --blocks 4,4,4")
                .status == 0);
    auto i16 = [](const std::vector<int>& v) {
        std::vector<std::uint8_t> b;
        for (int x : v) {
            b.push_back(static_cast<std::uint8_t>(x & 0xff));
            b.push_back(static_cast<std::uint8_t>(x >> 8));
        }
        return b;
    };
    auto flat = [](int a, int b, int c) { return (a * 20 + b) * 10 + c; };

    // Orthogonal: rows [3, 1, -1], columns 2:9:3, depth [0, -1, 0].
    Run r = run("export --overwrite " + q(tmp / "a.b2nd") + " " + q(tmp / "o.npy") +
                " --slice '[3,1,-1], 2:9:3, [0,-1,0]'");
    REQUIRE(r.status == 0);
    std::vector<int> want;
    for (int a : {3, 1, 29}) {
        for (int b : {2, 5, 8}) {
            for (int c : {0, 9, 0}) {
                want.push_back(flat(a, b, c));
            }
        }
    }
    auto got = b2nd::test::read_npy_payload(tmp / "o.npy");
    CHECK_THAT(got.header, Contains("'shape': (3, 3, 3)"));
    B2ND_REQUIRE_SAME_BYTES(got.data, i16(want));
    // With an integer and a new axis.
    REQUIRE(run("export --overwrite " + q(tmp / "a.b2nd") + " " + q(tmp / "o.npy") +
                " --slice '7, None, [4, 0], -2'")
                .status == 0);
    got = b2nd::test::read_npy_payload(tmp / "o.npy");
    CHECK_THAT(got.header, Contains("'shape': (1, 2)"));
    B2ND_REQUIRE_SAME_BYTES(got.data, i16({flat(7, 4, 8), flat(7, 0, 8)}));

    // Points: an int64 (N, 3) array, in its order, repeats allowed, negatives from the end (as
    // --slice and NumPy).
    const std::vector<std::int64_t> pts{29, 19, 9, 0, 0, 0, 5, 6, 7, -1, -20, 0};
    std::vector<std::uint8_t> pbytes(pts.size() * 8);
    std::memcpy(pbytes.data(), pts.data(), pbytes.size());
    write_test_npy(tmp / "p.npy", "<i8", "(4, 3)", pbytes);
    REQUIRE(run("export --overwrite " + q(tmp / "a.b2nd") + " " + q(tmp / "p_out.npy") +
                " --points " + q(tmp / "p.npy"))
                .status == 0);
    got = b2nd::test::read_npy_payload(tmp / "p_out.npy");
    CHECK_THAT(got.header, Contains("'shape': (4,)"));
    B2ND_REQUIRE_SAME_BYTES(got.data, i16({flat(29, 19, 9), 0, flat(5, 6, 7), flat(29, 0, 0)}));
    // Big-endian uint16 points are converted.
    write_test_npy(tmp / "pb.npy", ">u2", "(1, 3)", {0, 2, 0, 3, 0, 4});
    REQUIRE(run("export --overwrite " + q(tmp / "a.b2nd") + " " + q(tmp / "p_out.npy") +
                " --points " + q(tmp / "pb.npy"))
                .status == 0);
    B2ND_REQUIRE_SAME_BYTES(b2nd::test::read_npy_payload(tmp / "p_out.npy").data,
                            i16({flat(2, 3, 4)}));

    // A mask: every 7th element.
    std::vector<std::uint8_t> mask(6000);
    want.clear();
    for (int i = 0; i < 6000; ++i) {
        mask[static_cast<std::size_t>(i)] = i % 7 == 0 ? 1 : 0;
        if (i % 7 == 0) {
            want.push_back(i);
        }
    }
    write_test_npy(tmp / "m.npy", "|b1", "(30, 20, 10)", mask);
    REQUIRE(run("export --overwrite " + q(tmp / "a.b2nd") + " " + q(tmp / "m_out.npy") +
                " --mask " + q(tmp / "m.npy"))
                .status == 0);
    got = b2nd::test::read_npy_payload(tmp / "m_out.npy");
    CHECK_THAT(got.header, Contains("'shape': (858,)"));
    B2ND_REQUIRE_SAME_BYTES(got.data, i16(want));

    // Bad selections: exit code 2, naming the axis and the value; no output file.
    std::vector<std::uint8_t> p20(24, 0);
    p20[8] = 20;  // (0, 20, 0)
    write_test_npy(tmp / "pbad.npy", "<i8", "(1, 3)", p20);
    write_test_npy(tmp / "pf.npy", "<f8", "(1, 3)", std::vector<std::uint8_t>(24, 0));
    write_test_npy(tmp / "p2.npy", "<i8", "(1, 2)", std::vector<std::uint8_t>(16, 0));
    write_test_npy(tmp / "mw.npy", "|b1", "(30, 20)", std::vector<std::uint8_t>(600, 1));
    write_test_npy(tmp / "mu.npy", "|u1", "(30, 20, 10)", mask);
    const std::pair<std::string, std::string> bad[] = {
        {"--slice '0, [1, 20]'", "index 20 in the list for dimension 1"},
        {"--slice '[]'", "the index list is empty"},
        {"--points " + q(tmp / "pbad.npy"), "point 0, axis 1: 20 is out of range for extent 20"},
        {"--points " + q(tmp / "pf.npy"), "points must be integers"},
        {"--points " + q(tmp / "p2.npy"), "need shape (N, 3)"},
        {"--mask " + q(tmp / "mw.npy"), "has shape (30, 20); the array's is (30, 20, 10)"},
        {"--mask " + q(tmp / "mu.npy"), "a mask must be bool"},
        {"--mask " + q(tmp / "m.npy") + " --slice 0", "give one of --slice, --points and --mask"},
    };
    for (const auto& [args, message] : bad) {
        INFO(args);
        r = run("export --overwrite " + q(tmp / "a.b2nd") + " " + q(tmp / "x.npy") + " " + args);
        CHECK(r.status == 2);
        CHECK_THAT(r.output, Contains(message));
    }
    CHECK_FALSE(std::filesystem::exists(tmp / "x.npy"));
}

TEST_CASE("cli: index lists on corpus arrays pick the rows the .npy holds", "[cli][golden]") {
    if (b2nd::test::corpus_dir().empty()) {
        B2ND_SKIP("corpus not found at " B2ND_CORPUS_DIR);
    }
    b2nd::test::TempDir tmp;
    const std::string dir = b2nd::test::corpus_dir();
    const auto m = b2nd::test::load_json_file(dir + "/manifest.json");
    int done = 0;
    for (const auto& c : m["cases"].as_array()) {
        const std::string file = dir + "/" + c["file"].as_string();
        const auto npy = b2nd::test::read_npy_payload(dir + "/" + c["npy"].as_string());
        const auto& shape = c["shape"].as_array();
        if (shape.empty() || shape[0].as_int() < 2 || npy.data.empty()) {
            continue;
        }
        INFO(file);
        const auto rows = static_cast<std::size_t>(shape[0].as_int());
        const std::size_t row = npy.data.size() / rows;
        // Rows [-1, 0, -1] of the whole array.
        const Run r =
            run("export --overwrite " + q(file) + " " + q(tmp / "o.npy") + " --slice '[-1,0,-1]'");
        REQUIRE(r.status == 0);
        std::vector<std::uint8_t> want;
        for (std::size_t k : {rows - 1, std::size_t{0}, rows - 1}) {
            want.insert(want.end(), npy.data.begin() + static_cast<std::ptrdiff_t>(k * row),
                        npy.data.begin() + static_cast<std::ptrdiff_t>((k + 1) * row));
        }
        B2ND_REQUIRE_SAME_BYTES(b2nd::test::read_npy_payload(tmp / "o.npy").data, want);
        if (++done == 12) {
            break;
        }
    }
    CHECK(done > 0);
}

TEST_CASE("cli: verify names what is corrupt", "[cli]") {
    b2nd::test::TempDir tmp;
    std::vector<std::uint8_t> data(64 * 64 * 8);
    b2nd::test::SplitMix rng(3);
    for (auto& b : data) {
        b = static_cast<std::uint8_t>(rng.below(16));
    }
    write_test_npy(tmp / "in.npy", "<f8", "(64, 64)", data);
    REQUIRE(run("import " + q(tmp / "in.npy") + " " + q(tmp / "a.b2nd") +
                " --chunks 32,32 --blocks 16,16")
                .status == 0);
    const auto good = b2nd::test::read_file(tmp / "a.b2nd");
    REQUIRE(run("verify " + q(tmp / "a.b2nd")).status == 0);

    // Truncated: the index and trailer are gone.
    std::filesystem::resize_file(tmp / "a.b2nd", good.size() / 2);
    Run r = run("verify " + q(tmp / "a.b2nd"));
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Contains("a.b2nd"));

    // Chunk headers overwritten: every chunk region filled with 0xff.
    auto bad = good;
    const std::size_t header = 200;
    for (std::size_t i = header; i < bad.size() * 3 / 4; ++i) {
        bad[i] = 0xff;
    }
    std::ofstream(tmp / "b.b2nd", std::ios::binary)
        .write(reinterpret_cast<const char*>(bad.data()), static_cast<std::streamsize>(bad.size()));
    r = run("verify " + q(tmp / "b.b2nd"));
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Contains("b.b2nd"));
}

TEST_CASE("cli: bad arguments exit with 2 and say why", "[cli]") {
    b2nd::test::TempDir tmp;
    CHECK(run("").status == 2);
    CHECK(run("frobnicate").status == 2);
    for (const char* cmd : {"info", "export", "import", "verify"}) {
        const Run h = run(std::string(cmd) + " --help");
        CHECK(h.status == 0);
        CHECK_THAT(h.output, Contains("usage: b2nd"));
        CHECK(run(cmd).status == 2);
    }
    CHECK(run("--help").status == 0);
    write_test_npy(tmp / "in.npy", "|u1", "(4,)", {1, 2, 3, 4});
    Run r = run("import " + q(tmp / "in.npy") + " " + q(tmp / "a.b2nd") + " --clevel 12");
    CHECK(r.status == 2);
    CHECK_THAT(r.output, Contains("--clevel"));
    CHECK(run("import " + q(tmp / "in.npy") + " " + q(tmp / "a.b2nd") + " --codec snappy").status ==
          2);
    CHECK(run("import " + q(tmp / "in.npy") + " " + q(tmp / "a.b2nd") + " --filters shuffle,zip")
              .status == 2);
    CHECK(run("import " + q(tmp / "in.npy") + " " + q(tmp / "a.b2nd") + " --chunks 0").status == 2);
    CHECK(run("import " + q(tmp / "in.npy") + " " + q(tmp / "a.b2nd") + " --bogus").status == 2);
    REQUIRE(run("import " + q(tmp / "in.npy") + " " + q(tmp / "a.b2nd")).status == 0);
    r = run("import " + q(tmp / "in.npy") + " " + q(tmp / "a.b2nd"));
    CHECK(r.status == 2);
    CHECK_THAT(r.output, Contains("exists; --overwrite replaces it"));
    r = run("export --overwrite " + q(tmp / "a.b2nd") + " " + q(tmp / "o.npy") + " --slice 7");
    CHECK(r.status == 2);
    CHECK_THAT(r.output, Contains("out of range"));
    CHECK(run("export --overwrite " + q(tmp / "a.b2nd") + " " + q(tmp / "o.npy") + " --slice 'x'")
              .status == 2);
    r = run("info " + q(tmp / "missing.b2nd"));
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Contains("missing.b2nd"));
    r = run("info " + q(tmp / "in.npy"));  // not a frame
    CHECK(r.status == 1);
}

TEST_CASE("cli: messages name what the user gave, never the library's identifiers", "[cli]") {
    b2nd::test::TempDir tmp;
    write_test_npy(tmp / "in.npy", "<f4", "(4,)", std::vector<std::uint8_t>(16, 0));
    REQUIRE(run("import " + q(tmp / "in.npy") + " " + q(tmp / "a.b2nd")).status == 0);
    Run r = run("import " + q(tmp / "in.npy") + " " + q(tmp / "a.b2nd"));
    CHECK(r.status == 2);
    CHECK_THAT(r.output, Contains("--overwrite") && !Contains("CreateOptions"));
    r = run("import " + q(tmp / "in.npy") + " " + q(tmp / "z.b2nd") + " --codec zfp-accuracy");
    CHECK(r.status == 2);
    CHECK_THAT(r.output, Contains("zfp-accuracy:P"));
    CHECK(r.output.find("(see") == r.output.rfind("(see"));  // one pointer to --help
    // A .npy, a zip, or a directory given where an array is expected.
    for (const char* cmd : {"info", "show", "verify", "export", "convert", "meta"}) {
        INFO(cmd);
        const std::string out = std::string(cmd) == "export" || std::string(cmd) == "convert"
                                    ? " " + q(tmp / "o.out")
                                    : "";
        r = run(std::string(cmd) + " " + q(tmp / "in.npy") + out);
        CHECK(r.status == 1);
        CHECK_THAT(r.output,
                   Contains("NumPy .npy file") && Contains("b2nd import") && !Contains("marker"));
    }
    std::filesystem::create_directory(tmp / "dir");
    r = run("info " + q(tmp / "dir"));
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Contains("not a sparse frame") && Contains("chunks.b2frame") &&
                             !Contains("cannot open"));
    std::ofstream(tmp / "x.zip", std::ios::binary) << std::string("PK\x03\x04 rest", 9);
    CHECK_THAT(run("info " + q(tmp / "x.zip")).output, Contains("zip archive"));
}
