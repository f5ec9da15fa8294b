// What the tool says and how it exits: messages in the user's terms (flags, not the library's
// option names; formats named; the file named), and exit codes 0 ok, 1 bad data, 2 bad
// arguments, 3 busy.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <thread>

#include <catch2/catch.hpp>

#include <b2nd/b2nd.hpp>
#include <b2nd/storage/frame.hpp>
#include <b2nd/store.hpp>

#include "../support/files.hpp"
#include "../support/process.hpp"
#include "../support/temp_dir.hpp"
#include "run.hpp"
#include <sys/wait.h>

using b2nd::test::q;
using b2nd::test::run;
using b2nd::test::Run;
using Catch::Matchers::Contains;

namespace fs = std::filesystem;

namespace {

std::string grid_array(const std::string& path) {
    b2nd::CreateOptions o;
    o.chunk_shape = {2, 2};  // 25 chunks
    (void)b2nd::NDArray<float>::create_from(path, {10, 10}, std::vector<float>(100, 1.5F), o);
    return path;
}

void write_bytes(const std::string& path, const std::string& bytes) {
    std::ofstream(path, std::ios::binary) << bytes;
}

}  // namespace

TEST_CASE("cli: --max-chunks raises or lowers the chunk limit of every command", "[cli]") {
    b2nd::test::TempDir tmp;
    const std::string a = grid_array(tmp / "a.b2nd");
    for (const std::string& cmd : {"info " + q(a), "show " + q(a), "verify " + q(a),
                                   "export " + q(a) + " " + q(tmp / "a.npy")}) {
        INFO(cmd);
        Run r = run(cmd + " --max-chunks 24");
        CHECK(r.status == 2);
        CHECK_THAT(r.output, Contains("25 chunks exceed --max-chunks (24)"));
        CHECK_THAT(r.output, !Contains("Options::"));
        r = run(cmd + " --max-chunks=25");
        CHECK(r.status == 0);
    }
    // Creating: what an open would refuse is refused up front, in the tool's terms.
    Run r = run("import " + q(tmp / "a.npy") + " " + q(tmp / "b.b2nd") +
                " --chunks 1,1 --max-chunks 99");
    CHECK(r.status == 2);
    CHECK_THAT(r.output, Contains("makes 100 chunks, more than --max-chunks (99)") &&
                             Contains("give larger --chunks"));
    CHECK_FALSE(fs::exists(tmp / "b.b2nd"));
    CHECK(run("import " + q(tmp / "a.npy") + " " + q(tmp / "b.b2nd") + " --chunks 1,1").status ==
          0);
    CHECK(run("info " + q(a) + " --max-chunks 0").status == 2);
}

TEST_CASE("cli: messages name formats, files and flags as the user knows them", "[cli]") {
    b2nd::test::TempDir tmp;
    const std::string a = grid_array(tmp / "a.b2nd");
    write_bytes(tmp / "t.h5", std::string("\x89HDF\r\n\x1a\n", 8) + std::string(64, 'x'));
    write_bytes(tmp / "t.nc", std::string("CDF\x01", 4) + std::string(64, 'x'));
    struct Case {
        std::string cmd;
        int status;
        std::vector<std::string> says;
    };
    const std::vector<Case> cases = {
        {"info " + q(tmp / "t.h5"),
         1,
         {b2nd::have_hdf5() ? "cannot open the HDF5 file" : "this build has no libhdf5", "t.h5"}},
        {"info " + q(tmp / "t.nc"), 1, {"is a netCDF classic file", "t.nc"}},
        {"import " + q(tmp / "t.h5") + " " + q(tmp / "x.b2nd"),
         1,
         {b2nd::have_hdf5() ? "cannot open the HDF5 file" : "this build has no libhdf5", "t.h5"}},
        {"import " + q(a) + " " + q(tmp / "x.b2nd"), 1, {"this is a Blosc2 frame", "convert"}},
        {"info ''", 2, {"the path is empty"}},
        {"checksum add", 2, {"add needs the PATH"}},
        {"ls " + q(a), 1, {"an array, not a store", "'b2nd info"}},
        {"meta " + q(a) + " '' 1", 2, {"an attribute needs a name"}},
        {"show " + q(a) + " --dtype '<f8'", 2, {"dtype '<f8' has 8-byte items"}},
        {"import " + q(tmp / "a3.npy") + " " + q(tmp / "x.b2nd") + " --chunks 10,10",
         2,
         {"the chunk shape (10, 10) has 2 dimensions"}},
    };
    // A 3-d .npy for the chunk-rank case.
    REQUIRE(run("export " + q(a) + " " + q(tmp / "a2.npy")).status == 0);
    {
        b2nd::NDArray<float>::create_from(tmp / "c.b2nd", {2, 2, 2}, std::vector<float>(8, 1.0F));
        REQUIRE(run("export " + q(tmp / "c.b2nd") + " " + q(tmp / "a3.npy")).status == 0);
    }
    for (const Case& c : cases) {
        INFO(c.cmd);
        const Run r = run(c.cmd);
        CHECK(r.status == c.status);
        for (const std::string& s : c.says) {
            CHECK_THAT(r.output, Contains(s));
        }
        CHECK_THAT(r.output, !Contains("Options::") && !Contains("<memory>") &&
                                 !Contains("vlmetalayer") && !Contains("NUMPY magic") &&
                                 !Contains("marker 0x"));
    }
    CHECK_FALSE(fs::exists(tmp / "x.b2nd"));
    // A truncated file says so, with both sizes.
    const auto bytes = b2nd::test::read_file(a);
    write_bytes(tmp / "cut.b2nd", std::string(bytes.begin(), bytes.begin() + 200));
    const Run r = run("info " + q(tmp / "cut.b2nd"));
    CHECK(r.status == 1);
    CHECK_THAT(r.output,
               Contains("truncated: 200 of the " + std::to_string(bytes.size()) + " bytes"));
}

TEST_CASE("cli: ZFP's refusal of NaN names the file and the element's position", "[cli]") {
    b2nd::test::TempDir tmp;
    std::vector<float> v(8 * 8 * 8, 1.0F);
    v[(2 * 8 + 3) * 8 + 4] = std::nanf("");
    b2nd::CreateOptions o;
    o.chunk_shape = {4, 4, 4};
    o.block_shape = {4, 4, 4};
    (void)b2nd::NDArray<float>::create_from(tmp / "n.b2nd", {8, 8, 8}, v, o);
    REQUIRE(run("export " + q(tmp / "n.b2nd") + " " + q(tmp / "n.npy")).status == 0);
    for (const std::string& cmd :
         {"convert " + q(tmp / "n.b2nd") + " " + q(tmp / "z.b2nd") + " --codec zfp-accuracy:-3",
          "import " + q(tmp / "n.npy") + " " + q(tmp / "z.b2nd") + " --codec zfp-accuracy:-3"}) {
        INFO(cmd);
        const Run r = run(cmd);
        if (r.output.find("built without ZFP") != std::string::npos) {
            continue;
        }
        CHECK(r.status == 2);
        CHECK_THAT(r.output, Contains("\"" + tmp / "z.b2nd" + "\": the element at (2, 3, 4)") &&
                                 Contains("cannot encode NaN or infinity") &&
                                 !Contains("of a block"));
        CHECK_FALSE(fs::exists(tmp / "z.b2nd"));
    }
}

TEST_CASE("cli: a busy array exits 3, and --wait waits for its writer", "[cli][process]") {
    b2nd::test::TempDir tmp;
    const std::string a = grid_array(tmp / "a.b2nd");
    b2nd::OpenOptions w;
    w.writable = true;
    w.auto_compact = false;
    std::optional<b2nd::NDArray<float>> writer = b2nd::open<float>(a, w);
    writer->write(b2nd::Box::whole(writer->shape()), std::vector<float>(100, 2.0F));
    for (const std::string& cmd :
         {"compact " + q(a), "meta " + q(a) + " k 1", "checksum add " + q(a),
          "convert " + q(tmp / "a.b2nd") + " " + q(tmp / "c.b2nd")}) {
        INFO(cmd);
        const Run r = run(cmd);
        if (cmd.compare(0, 7, "convert") == 0) {
            CHECK(r.status == 0);  // reading while another process writes is fine
            continue;
        }
        CHECK(r.status == 3);
        CHECK_THAT(r.output, Contains("busy: ") && Contains("--wait"));
    }
    // --overwrite of an array another process writes: busy too.
    const Run r = run("convert " + q(tmp / "c.b2nd") + " " + q(a) + " --overwrite");
    CHECK(r.status == 3);
    // With --wait, the command goes on once the writer has closed.
    b2nd::test::Child waiting({B2ND_CLI_PATH, "compact", a, "--wait", "20"});
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    CHECK(::kill(waiting.pid(), 0) == 0);  // still waiting
    writer.reset();                        // closed
    int status = 0;
    const std::string out = waiting.finish(&status);
    INFO(out);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
}

TEST_CASE("cli: a key missing from a damaged archive is bad data (exit 1), a typo exit 2",
          "[cli]") {
    b2nd::test::TempDir tmp;
    const std::string a = grid_array(tmp / "a.b2nd");
    {
        auto w = b2nd::StoreWriter::create(tmp / "s.b2z");
        w.put("/data/x", b2nd::AnyArray::open(a));
        w.commit();
    }
    Run r = run("info " + q(tmp / "s.b2z") + ":/data/y");
    CHECK(r.status == 2);
    CHECK_THAT(r.output, Contains("no such key"));
    // Damage the member's name in the central directory (and its local header): python would
    // not map it, the key is gone.
    auto bytes = b2nd::test::read_file(tmp / "s.b2z");
    const std::string name = "data/x.b2nd";
    int hits = 0;
    for (std::size_t i = 0; i + name.size() <= bytes.size(); ++i) {
        if (std::equal(name.begin(), name.end(), bytes.begin() + static_cast<std::ptrdiff_t>(i))) {
            bytes[i + name.size() - 1] = 'X';
            ++hits;
        }
    }
    REQUIRE(hits == 2);
    write_bytes(tmp / "s.b2z", std::string(bytes.begin(), bytes.end()));
    r = run("info " + q(tmp / "s.b2z") + ":/data/x");
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Contains("damaged") && Contains("data/x.b2nX"));
}

TEST_CASE("cli: JSON output is JSON whatever the bytes", "[cli]") {
    if (std::system("python3 -c 'import json' > /dev/null 2>&1") != 0) {
        B2ND_SKIP("python3 is not installed: it checks the JSON");
    }
    b2nd::test::TempDir tmp;
    // A file whose name is not UTF-8, with an attribute another program wrote as a msgpack str
    // that is not UTF-8 either.
    const std::string name = tmp / "bad\xff\xfename.b2nd";
    (void)grid_array(name);
    {
        b2nd::storage::OpenOptions w;
        w.writable = true;
        auto f = b2nd::storage::Frame::open(name, w);
        const std::vector<std::uint8_t> raw = {0xa2, 0xff, 0xfe};  // fixstr of 2 bytes
        f.set_vlmeta("odd", {raw.data(), raw.size()});
    }
    // Valid UTF-8 as a whole, valid JSON, and the name comes back as its bytes.
    const std::string check =
        "python3 -c \"import json,os,sys; d=json.loads(sys.stdin.buffer.read().decode('utf-8')); "
        "sys.exit(0 if CHECK else 3)\"";
    const auto run_check = [&](const std::string& cmd, const std::string& cond) {
        std::string c = check;
        c.replace(c.find("CHECK"), 5, cond);
        return std::system((std::string(B2ND_CLI_PATH) + " " + cmd + " | " + c).c_str());
    };
    CHECK(run_check("info --json " + q(name),
                    "os.fsencode(d['path']).endswith(b'bad\\\\xff\\\\xfename.b2nd')") == 0);
    CHECK(run_check("meta --json " + q(name), "d['vlmeta']['odd'] is not None") == 0);
    CHECK(run_check("info --json " + q(name), "'odd' in json.dumps(d)") == 0);
    // An all-special array has no ratio: null, as the text's '-'.
    (void)b2nd::NDArray<float>::create(tmp / "z.b2nd", {100});
    CHECK(run_check("info --json " + q(tmp / "z.b2nd"), "d['ratio'] is None") == 0);
    CHECK_THAT(run("info " + q(tmp / "z.b2nd")).output, Contains("ratio -"));
}

TEST_CASE("cli: B2ND_CACHE_BYTES bounds the command's caches, and is refused when no size",
          "[cli]") {
    b2nd::test::TempDir tmp;
    const std::string a = grid_array(tmp / "a.b2nd");
    const Run ok = run("export " + q(a) + " " + q(tmp / "a.npy"), "B2ND_CACHE_BYTES=64M");
    CHECK(ok.status == 0);
    CHECK(fs::exists(tmp / "a.npy"));
    for (const std::string bad : {"lots", "12Q", "-5", "1.5G"}) {
        INFO(bad);
        const Run r = run("info " + q(a), "B2ND_CACHE_BYTES=" + bad);
        CHECK(r.status == 2);
        CHECK_THAT(r.output, Contains("B2ND_CACHE_BYTES") && Contains("not a size"));
    }
}
