// What the b2nd tool writes, and what it says about sizes and checks: every command that writes
// refuses an existing output without --overwrite and an output that is one of its inputs even
// with it; an export killed at any moment leaves the old file; info, convert and verify state
// one size; verify lists every corrupt chunk and says what it cannot see.
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include <catch2/catch.hpp>

#include <b2nd/b2nd.hpp>
#include <b2nd/storage/frame.hpp>

#include "../support/data.hpp"
#include "../support/files.hpp"
#include "../support/json.hpp"
#include "../support/process.hpp"
#include "../support/reference.hpp"
#include "../support/temp_dir.hpp"
#include "run.hpp"
#include <sys/wait.h>

using b2nd::test::q;
using b2nd::test::run;
using b2nd::test::Run;
using Catch::Matchers::Contains;

namespace fs = std::filesystem;

namespace {

/// A small float array made by the library; returns its path.
std::string small_array(const b2nd::test::TempDir& tmp, const std::string& name) {
    std::vector<float> v(100);
    for (std::size_t i = 0; i < v.size(); ++i) {
        v[i] = static_cast<float>(i) * 0.5F;
    }
    b2nd::CreateOptions o;
    o.chunk_shape = {4, 5};
    o.sparse = name.find(".b2frame") != std::string::npos;
    (void)b2nd::NDArray<float>::create_from(tmp / name, {10, 10}, v, o);
    return tmp / name;
}

}  // namespace

TEST_CASE("cli: an output that is an input is refused, even with --overwrite", "[cli]") {
    b2nd::test::TempDir tmp;
    const std::string a = small_array(tmp, "a.b2nd");
    const std::string s = small_array(tmp, "s.b2frame");
    fs::create_directory(tmp / "sub");
    fs::create_symlink(a, tmp / "link.npy");
    const auto before = b2nd::test::read_file(a);
    for (const std::string& out : {a, tmp / "link.npy", tmp / "sub/../a.b2nd"}) {
        for (const char* flag : {"", " --overwrite"}) {
            INFO(out << flag);
            const Run r = run("export " + q(a) + " " + q(out) + flag);
            CHECK(r.status == 2);
            CHECK_THAT(r.output, Contains("is the input") && Contains("write to another path"));
        }
    }
    CHECK(b2nd::test::read_file(a) == before);
    CHECK(run("info " + q(a)).status == 0);
    // The other commands that write, and a sparse frame as its own output.
    CHECK_THAT(run("convert " + q(a) + " " + q(a) + " --overwrite").output,
               Contains("is the input"));
    CHECK_THAT(run("convert " + q(s) + " " + q(s + "/") + " --overwrite").output,
               Contains("is the input"));
    CHECK_THAT(run("concat " + q(a) + " " + q(s) + " " + q(a) + " --overwrite").output,
               Contains("is the input"));
    REQUIRE(run("export " + q(a) + " " + q(tmp / "m.npy")).status == 0);
    CHECK_THAT(run("export " + q(a) + " " + q(tmp / "m.npy") + " --points " + q(tmp / "m.npy") +
                   " --overwrite")
                   .output,
               Contains("is the input"));
    CHECK_THAT(run("import " + q(tmp / "m.npy") + " " + q(tmp / "m.npy") + " --overwrite").output,
               Contains("is the input"));
    CHECK(b2nd::test::read_file(a) == before);
    CHECK(b2nd::NDArray<float>::open(s).read()[3] == 1.5F);
}

TEST_CASE("cli: an existing output is replaced only with --overwrite, and never a read-only one",
          "[cli]") {
    b2nd::test::TempDir tmp;
    const std::string a = small_array(tmp, "a.b2nd");
    const std::string b = small_array(tmp, "b.b2nd");
    REQUIRE(run("export " + q(a) + " " + q(tmp / "o.npy")).status == 0);
    const auto npy_before = b2nd::test::read_file(tmp / "o.npy");
    const auto b_before = b2nd::test::read_file(b);
    for (const std::string& cmd :
         {"export " + q(a) + " " + q(tmp / "o.npy"), "import " + q(tmp / "o.npy") + " " + q(b),
          "convert " + q(a) + " " + q(b), "concat " + q(b) + " " + q(a) + " " + q(a)}) {
        INFO(cmd);
        const Run r = run(cmd);
        CHECK(r.status == 2);
        CHECK_THAT(r.output, Contains("exists; --overwrite replaces it"));
        CHECK_THAT(r.output, !Contains("CreateOptions") && !Contains("b2nd-tmp"));
    }
    CHECK(b2nd::test::read_file(tmp / "o.npy") == npy_before);
    CHECK(b2nd::test::read_file(b) == b_before);
    // A read-only file (mode 444) in a writable directory stays, even with --overwrite.
    fs::permissions(tmp / "o.npy",
                    fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
    Run r = run("export " + q(a) + " " + q(tmp / "o.npy") + " --overwrite");
    CHECK(r.status == 2);
    CHECK_THAT(r.output, Contains("read-only"));
    CHECK(b2nd::test::read_file(tmp / "o.npy") == npy_before);
    // compact, convert --overwrite and meta refuse a read-only array alike.
    fs::permissions(b, fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
    for (const std::string& cmd :
         {"compact " + q(b), "convert " + q(a) + " " + q(b) + " --overwrite",
          "meta " + q(b) + " units '\"K\"'"}) {
        INFO(cmd);
        r = run(cmd);
        CHECK(r.status == 2);
        CHECK_THAT(r.output, Contains("\"" + b + "\" is read-only; make it writable"));
    }
    CHECK(b2nd::test::read_file(b) == b_before);
    fs::permissions(tmp / "o.npy", fs::perms::owner_write, fs::perm_options::add);
    r = run("export " + q(a) + " " + q(tmp / "o.npy") + " --overwrite");
    CHECK(r.status == 0);
    CHECK(b2nd::test::read_npy_payload(tmp / "o.npy").data.size() == 400);
    // Nothing of the temporary names is left, or named; a replaced .npy gets no lock file.
    for (const auto& e : fs::directory_iterator(tmp.path())) {
        CHECK(e.path().filename().string().find("tmp") == std::string::npos);
    }
    CHECK_FALSE(fs::exists(tmp / "o.npy.b2lock"));
    r = run("convert " + q(a) + " " + q(tmp / "nodir/x.b2frame"));
    CHECK(r.status == 2);  // a path that may not be written (issue 56, item 18)
    CHECK_THAT(r.output, Contains("\"" + tmp / "nodir/x.b2frame" + "\""));
    CHECK_THAT(r.output, !Contains("b2nd-tmp"));
    r = run("import " + q(tmp / "o.npy") + " " + q(tmp / "nodir/y.b2nd"));
    CHECK_THAT(r.output, Contains("\"" + tmp / "nodir/y.b2nd" + "\"") && !Contains(".tmp"));
}

TEST_CASE("cli: an export killed at any moment leaves the old file or the whole new one",
          "[cli][process]") {
    b2nd::test::TempDir tmp;
    std::vector<double> v(4 * 1024 * 1024);
    b2nd::test::SplitMix rng(9);
    for (double& x : v) {
        x = static_cast<double>(rng.next() >> 11);
    }
    b2nd::CreateOptions co;
    co.chunk_shape = {256, 1024};
    (void)b2nd::NDArray<double>::create_from(tmp / "src.b2nd", {4096, 1024}, v, co);
    // The old file: a small .npy (what --overwrite may replace).
    const std::vector<std::uint8_t> old =
        b2nd::test::npy_bytes("<f8", "(1,)", std::vector<std::uint8_t>(8, 0));
    const auto put_old = [&] {
        std::ofstream(tmp / "out.npy", std::ios::binary)
            .write(reinterpret_cast<const char*>(old.data()),
                   static_cast<std::streamsize>(old.size()));
    };
    put_old();
    std::mt19937 pick(7);
    int killed = 0;
    for (int round = 0; round < 12; ++round) {
        b2nd::test::Child c({B2ND_CLI_PATH, "export", tmp / "src.b2nd", tmp / "out.npy",
                             "--overwrite", "--nthreads", "1"});
        std::this_thread::sleep_for(
            std::chrono::milliseconds(std::uniform_int_distribution<int>(0, 150)(pick)));
        if (::kill(c.pid(), 0) == 0) {
            c.kill();
            ++killed;
        } else {
            c.finish();
        }
        const auto now = b2nd::test::read_file(tmp / "out.npy");
        if (now.size() == old.size()) {
            CHECK(now == old);
        } else {
            const auto npy = b2nd::test::read_npy_payload(tmp / "out.npy");
            REQUIRE(npy.data.size() == v.size() * 8);
            CHECK(std::memcmp(npy.data.data(), v.data(), npy.data.size()) == 0);
            put_old();
        }
    }
    CHECK(killed >= 3);
    // The next export sweeps what killed ones left.
    REQUIRE(
        run("export " + q(tmp / "src.b2nd") + " " + q(tmp / "out.npy") + " --overwrite").status ==
        0);
    for (const auto& e : fs::directory_iterator(tmp.path())) {
        CHECK(e.path().filename().string().find(".b2nd-tmp-") == std::string::npos);
    }
}

TEST_CASE("cli: info, convert and verify state one size", "[cli][golden]") {
    if (b2nd::test::corpus_dir().empty()) {
        B2ND_SKIP("corpus not found at " B2ND_CORPUS_DIR);
    }
    b2nd::test::TempDir tmp;
    for (const std::string file : {"/medium_f4_3d.b2nd", "/legacy-2x/v2.7.0/dtype_leu2.b2nd"}) {
        const std::string path = b2nd::test::corpus_dir() + file;
        INFO(path);
        const auto arr = b2nd::AnyArray::open(path);
        const std::int64_t nbytes = arr.size() * arr.itemsize();
        const auto info = b2nd::test::Json::parse(run("info --json " + q(path)).output);
        CHECK(info["nbytes"].as_int() == nbytes);
        const std::int64_t cbytes = info["cbytes"].as_int();
        char ratio[32];
        std::snprintf(ratio, sizeof ratio, "ratio %.2f",
                      static_cast<double>(nbytes) / static_cast<double>(cbytes));
        const std::string text = run("info " + q(path)).output;
        CHECK_THAT(text, Contains("size        " + std::to_string(nbytes) + " bytes") &&
                             Contains("stored in " + std::to_string(cbytes)) && Contains(ratio));
        // A copy as stored: the same chunks, so the same sizes.
        const Run c = run("convert " + q(path) + " " + q(tmp / "c.b2nd") + " --overwrite");
        REQUIRE(c.status == 0);
        CHECK_THAT(c.output, Contains(std::string("(") + ratio + ")"));
        CHECK(b2nd::AnyArray::open(tmp / "c.b2nd").cbytes() == cbytes);
        const Run v = run("verify " + q(path));
        CHECK(v.status == 0);
        CHECK_THAT(v.output, Contains(std::string("(") + ratio + ")"));
    }
    // The padded size of medium_f4_3d (edge chunks stored whole) is labelled as such.
    CHECK_THAT(run("info " + q(b2nd::test::corpus_dir() + "/medium_f4_3d.b2nd")).output,
               Contains("padded      3145728 bytes"));
}

TEST_CASE("cli: readers beside a loop of import --overwrite see one whole array or the other",
          "[cli][process]") {
    b2nd::test::TempDir tmp;
    // Two .npy files of one shape, each element telling which it is: 1.0 or 2.0.
    for (const int which : {1, 2}) {
        std::vector<double> v(200 * 300, static_cast<double>(which));
        std::vector<std::uint8_t> bytes(v.size() * 8);
        std::memcpy(bytes.data(), v.data(), bytes.size());
        const auto npy = b2nd::test::npy_bytes("<f8", "(200, 300)", bytes);
        std::ofstream(tmp / ("v" + std::to_string(which) + ".npy"), std::ios::binary)
            .write(reinterpret_cast<const char*>(npy.data()),
                   static_cast<std::streamsize>(npy.size()));
    }
    for (const char* kind : {"", " --sframe"}) {
        INFO("import" << kind);
        const std::string t = tmp / (std::string(kind).empty() ? "t.b2nd" : "t.b2frame");
        REQUIRE(run("import " + q(tmp / "v1.npy") + " " + q(t) + kind).status == 0);
        const std::string b2nd = B2ND_CLI_PATH;
        const std::string stop = tmp / "stop";
        b2nd::test::Child writer({"/bin/sh", "-c",
                                  "while [ ! -e " + q(stop) + " ]; do '" + b2nd + "' import " +
                                      q(tmp / "v2.npy") + " " + q(t) + kind +
                                      " --chunks 50,100 --overwrite || exit 1; '" + b2nd +
                                      "' import " + q(tmp / "v1.npy") + " " + q(t) + kind +
                                      " --chunks 40,300 --overwrite || exit 1; done"});
        int whole = 0, ones = 0, twos = 0;
        for (int k = 0; k < 150; ++k) {
            const Run r = run("export " + q(t) + " " + q(tmp / "o.npy") + " --overwrite");
            REQUIRE(r.status == 0);
            const auto npy = b2nd::test::read_npy_payload(tmp / "o.npy");
            REQUIRE(npy.data.size() == 200 * 300 * 8);
            double first = 0;
            std::memcpy(&first, npy.data.data(), 8);
            bool same = first == 1.0 || first == 2.0;
            for (std::size_t i = 0; same && i < npy.data.size(); i += 8) {
                double x = 0;
                std::memcpy(&x, npy.data.data() + i, 8);
                same = x == first;
            }
            CHECK(same);  // never zeros, never a mix
            whole += same ? 1 : 0;
            (first == 1.0 ? ones : twos) += 1;
        }
        CHECK(::kill(writer.pid(), 0) == 0);  // the imports kept going all along
        std::ofstream(stop) << "";
        int status = 0;
        writer.finish(&status);
        CHECK(WIFEXITED(status));
        CHECK(WEXITSTATUS(status) == 0);  // every import succeeded
        std::filesystem::remove(stop);
        CHECK(whole == 150);
        CHECK(ones > 0);
        CHECK(twos > 0);
    }
}

TEST_CASE("cli: export to '-' writes the .npy to stdout", "[cli]") {
    b2nd::test::TempDir tmp;
    const std::string a = small_array(tmp, "a.b2nd");
    REQUIRE(run("export " + q(a) + " " + q(tmp / "file.npy") + " --slice '2:5'").status == 0);
    REQUIRE(run("export " + q(a) + " - --slice '2:5' > " + q(tmp / "piped.npy")).status == 0);
    CHECK(b2nd::test::read_file(tmp / "piped.npy") == b2nd::test::read_file(tmp / "file.npy"));
    CHECK_FALSE(fs::exists(tmp / "-"));
    // Through a pipe, read by another program.
    REQUIRE(run("export " + q(a) + " " + q(tmp / "whole.npy")).status == 0);
    const Run r = run("export " + q(a) + " - | wc -c");
    CHECK(std::stoul(r.output) == b2nd::test::read_file(tmp / "whole.npy").size());
}

TEST_CASE("cli: export writes what its output's name says, or refuses it", "[cli]") {
    b2nd::test::TempDir tmp;
    const std::string a = small_array(tmp, "a.b2nd");
    // A b2nd or store name: refused, pointing at the command that writes one; nothing written.
    for (const std::string name : {"copy.b2nd", "copy.B2FRAME", "copy.b2z"}) {
        INFO(name);
        const Run r = run("export " + q(a) + " " + q(tmp / name));
        CHECK(r.status == 2);
        CHECK_THAT(r.output, Contains("b2nd convert") && Contains(name));
        CHECK_FALSE(fs::exists(tmp / name));
    }
    // A name of no kind export writes: refused (it once got a NumPy file).
    for (const std::string name : {"copy.dat", "copy"}) {
        INFO(name);
        const Run r = run("export " + q(a) + " " + q(tmp / name));
        CHECK(r.status == 2);
        CHECK_THAT(r.output, Contains("names no output export writes") && Contains("OUT.npy"));
        CHECK_FALSE(fs::exists(tmp / name));
    }
    CHECK(run("export " + q(a) + " " + q(tmp / "copy.NPY")).status == 0);
    CHECK(b2nd::test::read_npy_payload(tmp / "copy.NPY").data.size() > 0);
}
