// The tool on HDF5 datasets and Zarr arrays, as scripts spell it: import makes a b2nd array of
// every corpus dataset and array (its values, its chunking, its attributes as `b2nd meta OUT
// NAME` JSON), export/info/show/diff read them in place, exports read back with h5py and
// zarr-python, and every damaged source fails naming its file, leaving nothing behind.
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <catch2/catch.hpp>

#include <b2nd/b2nd.hpp>

#include "../support/bridge_cases.hpp"
#include "../support/cli_tool.hpp"
#include "../support/files.hpp"
#include "../support/json.hpp"
#include "../support/reference.hpp"
#include "../support/temp_dir.hpp"
#include "read_back.hpp"
#include "run.hpp"
#include <sys/wait.h>

using b2nd::test::Json;
using b2nd::test::q;
using b2nd::test::run;
using b2nd::test::Run;
using Catch::Matchers::Contains;

namespace {

using b2nd::test::bridge_cases;
using b2nd::test::BridgeCase;
using b2nd::test::have_bridges;
using b2nd::test::read_back;

std::string bridges() {
    return b2nd::test::bridges_dir() + "/";
}

std::string joined(const Json& shape) {
    std::string s;
    for (const Json& e : shape.as_array()) {
        s += (s.empty() ? "" : ",") + std::to_string(e.as_int());
    }
    return s;
}

}  // namespace

TEST_CASE("cli bridges: import of every HDF5 dataset and Zarr array, attributes as meta JSON",
          "[cli][bridges]") {
    if (!have_bridges()) {
        B2ND_SKIP("bridges corpus not found under " B2ND_CORPUS_DIR);
    }
    const Json m = b2nd::test::load_json_file(bridges() + "manifest.json");
    b2nd::test::TempDir tmp;
    int n = 0;
    for (const Json& c : m["cases"].as_array()) {
        const std::string kind = c["kind"].as_string();
        if (kind != "zarr2" && kind != "zarr3" && (kind != "hdf5" || !b2nd::have_hdf5())) {
            continue;
        }
        const std::string name = c["name"].as_string();
        INFO(name);
        const std::string out = tmp / (name + ".b2nd");
        // Blosc-compressed HDF5 reads with our decoder, whatever plugins are installed.
        const Run r = run("import " + q(bridges() + c["src"].as_string()) + " " + q(out),
                          "HDF5_PLUGIN_PATH=/nonexistent");
        REQUIRE(r.status == 0);
        ++n;
        const b2nd::AnyArray a = b2nd::AnyArray::open(out);
        CHECK(a.read() == b2nd::test::read_npy_payload(bridges() + c["expect"].as_string()).data);
        if (c.has("attrs")) {
            for (const auto& [k, v] : c["attrs"].as_object()) {
                INFO("attribute " << k);
                const Run meta = run("meta " + q(out) + " " + q(k));
                REQUIRE(meta.status == 0);
                CHECK(b2nd::test::same_value(b2nd::Value::from_json(meta.output), v));
            }
        }
    }
    CHECK(n >= (b2nd::have_hdf5() ? 81 : 45));
}

TEST_CASE("cli bridges: import follows a sharded array's shards and inner chunks",
          "[cli][bridges]") {
    if (!have_bridges()) {
        B2ND_SKIP("bridges corpus not found under " B2ND_CORPUS_DIR);
    }
    b2nd::test::TempDir tmp;
    REQUIRE(run("import " + q(bridges() + "zarr3/z3_sharded_end_f8.zarr") + " " + q(tmp / "s.b2nd"))
                .status == 0);
    const b2nd::AnyArray s = b2nd::AnyArray::open(tmp / "s.b2nd");
    CHECK(s.chunk_shape() == b2nd::Shape{10, 12});
    CHECK(s.block_shape() == b2nd::Shape{5, 4});
    // Given chunks win.
    REQUIRE(run("import " + q(bridges() + "zarr3/z3_sharded_end_f8.zarr") + " " +
                q(tmp / "t.b2nd") + " --chunks 20,24 --codec lz4")
                .status == 0);
    const b2nd::AnyArray t = b2nd::AnyArray::open(tmp / "t.b2nd");
    CHECK(t.chunk_shape() == b2nd::Shape{20, 24});
    CHECK(t.compression().codec == b2nd::codec::Codec::lz4);
    CHECK(t.read() == s.read());
}

TEST_CASE("cli bridges: export, info, show and diff read a Zarr array in place", "[cli][bridges]") {
    if (!have_bridges()) {
        B2ND_SKIP("bridges corpus not found under " B2ND_CORPUS_DIR);
    }
    b2nd::test::TempDir tmp;
    const std::string z = bridges() + "zarr3/groups.zarr/sub/deep/b";
    REQUIRE(run("export " + q(z) + " " + q(tmp / "b.npy")).status == 0);
    CHECK(b2nd::test::read_npy_payload(tmp / "b.npy").data ==
          b2nd::test::read_npy_payload(bridges() + "expect/z3_in_group_sub_deep_b.npy").data);

    const Run info = run("info " + q(bridges() + "zarr3/z3_sharded_start_i4.zarr"));
    REQUIRE(info.status == 0);
    CHECK_THAT(info.output, Contains("Zarr v3 array") && Contains("(16, 18)") && Contains("<i4") &&
                                Contains("shards      (8, 9)") && Contains("inner chunks (4, 3)") &&
                                Contains("transpose(1,0)") && Contains("index at start") &&
                                Contains("fill value  3"));
    const Run js = run("info --json " + q(bridges() + "zarr2/z2_zstd_int64_C_slash.zarr"));
    REQUIRE(js.status == 0);
    const Json j = Json::parse(js.output);
    CHECK(j["format"].as_string() == "Zarr v2");
    CHECK(j["chunks"].as_array().size() == 2);

    const Run show = run("show " + q(bridges() + "zarr2/z2_dtype_S6.zarr"));
    REQUIRE(show.status == 0);
    CHECK_THAT(show.output, Contains("b'"));

    REQUIRE(run("import " + q(z) + " " + q(tmp / "b.b2nd")).status == 0);
    const Run same = run("diff " + q(tmp / "b.b2nd") + " " + q(z));
    CHECK(same.status == 0);
    CHECK_THAT(same.output, Contains("equal"));
    const Run other =
        run("diff " + q(tmp / "b.b2nd") + " " + q(bridges() + "zarr2/groups.zarr/grp/counts"));
    CHECK(other.status != 0);
}

TEST_CASE("cli bridges: damaged Zarr arrays and groups fail by name, leaving nothing",
          "[cli][bridges]") {
    if (!have_bridges()) {
        B2ND_SKIP("bridges corpus not found under " B2ND_CORPUS_DIR);
    }
    const Json m = b2nd::test::load_json_file(bridges() + "manifest.json");
    b2nd::test::TempDir tmp;
    for (const Json& c : m["cases"].as_array()) {
        if (c["kind"].as_string() != "fail" || !c["zarr"].as_bool()) {
            continue;
        }
        const std::string name = c["name"].as_string();
        INFO(name << ": " << c["defect"].as_string());
        for (const char* verb : {"import", "export"}) {
            const std::string out = tmp / (name + (verb[0] == 'i' ? ".b2nd" : ".npy"));
            const Run r =
                run(std::string(verb) + " " + q(bridges() + c["src"].as_string()) + " " + q(out));
            CHECK(r.status != 0);
            CHECK_THAT(r.output, Contains(name + ".zarr"));
            CHECK_FALSE(std::filesystem::exists(out));
        }
    }
    CHECK(std::filesystem::is_empty(tmp.path()));
    const Run g = run("import " + q(bridges() + "zarr2/groups.zarr") + " " + q(tmp / "g.b2nd"));
    CHECK(g.status != 0);
    CHECK_THAT(g.output, Contains("a Zarr v2 group"));
}

TEST_CASE("cli bridges: exports to HDF5 and Zarr read back with h5py, zarr-python and zarrita",
          "[cli][bridges]") {
    if (!have_bridges()) {
        B2ND_SKIP("bridges corpus not found under " B2ND_CORPUS_DIR);
    }
    b2nd::test::TempDir tmp;
    int checked = 0, skipped = 0;
    for (const BridgeCase& c : bridge_cases({"export"})) {
        INFO(c.name);
        const std::string b = tmp / (c.name + ".b2nd");
        REQUIRE(run("import " + q(c.expect) + " " + q(b) + " --chunks " +
                    joined(c.entry["chunks"]) + " --blocks " + joined(c.entry["blocks"]))
                    .status == 0);
        std::string attrs = "{";
        for (const auto& [k, v] : c.entry["attrs"].as_object()) {
            const std::string text = b2nd::test::json_text(v);
            REQUIRE(run("meta " + q(b) + " " + q(k) + " " + q(text)).status == 0);
            attrs += std::string(attrs.size() > 1 ? ", \"" : "\"") + k + "\": " + text;
        }
        attrs += "}";
        for (const Json& t : c.entry["targets"].as_array()) {
            const std::string target = t.as_string();
            const std::string chunks = joined(c.entry["chunks"]);
            std::string out, said;
            if (target == "hdf5") {
                if (!b2nd::have_hdf5()) {
                    continue;
                }
                out = tmp / "exports.h5:" + c.entry["h5_path"].as_string();
                REQUIRE(run("export " + q(b) + " " + q(out)).status == 0);
                said = read_back("python3", "hdf5", out, c.expect, chunks, "", attrs);
            } else {
                out = tmp / (c.name + "." + target + ".zarr");
                REQUIRE(run("export " + q(b) + " " + q(out) +
                            (target == "zarr2" ? " --zarr-format 2" : ""))
                            .status == 0);
                said = target == "zarr2"
                           ? read_back("python3", "zarr2", out, c.expect, chunks, "", attrs)
                           : read_back("node", "", out, c.expect, chunks, joined(c.entry["blocks"]),
                                       attrs);
                // And our own reader, in place (v3 data types have no byte order: big-endian
                // items read in this machine's order).
                const b2nd::AnyArray z = b2nd::AnyArray::open(out);
                std::vector<std::uint8_t> want = b2nd::test::read_npy_payload(c.expect).data;
                const b2nd::DType stored = b2nd::AnyArray::open(b).dtype();
                if (z.dtype() != stored) {
                    stored.byteswap(want.data(),
                                    static_cast<std::int64_t>(want.size()) / z.itemsize());
                }
                CHECK(z.read() == want);
            }
            INFO(target << ": " << out);
            if (said == "skip") {
                ++skipped;
                continue;
            }
            CHECK(said == "ok");
            ++checked;
        }
    }
    if (skipped > 0 && checked == 0) {
        B2ND_SKIP("h5py, zarr-python and zarrita are not installed: exports not read back");
    }
    if (skipped > 0) {
        WARN(skipped << " exports not read back: a reader is not installed (.ci/install-deps.sh)");
    }
    CHECK(checked + skipped == 28);  // the manifest's export targets
}

TEST_CASE("cli bridges: sources made here by h5py and zarr-python import to their values",
          "[cli][bridges]") {
    b2nd::test::TempDir tmp;
    int st = 0;
    // Made with the Blosc filter plugin where h5py has it; read here without any plugin.
    const std::string made = b2nd::test::command_text(
        "HDF5_PLUGIN_PATH=/usr/lib/x86_64-linux-gnu/hdf5/serial/plugins " + b2nd::test::python3() +
            " " + q(B2ND_MAKE_SOURCES) + " " + q(tmp.path()) + " 96",
        &st);
    if (st == 77) {
        B2ND_SKIP("h5py, zarr-python or numpy is not installed (python3-h5py, python3-zarr)");
    }
    REQUIRE(st == 0);
    std::istringstream lines(made);
    std::string src, name;
    int n = 0;
    while (lines >> src >> name) {
        if (src.find(".h5:") != std::string::npos && !b2nd::have_hdf5()) {
            continue;
        }
        INFO(src);
        const std::string out = tmp / (name + ".b2nd");
        REQUIRE(
            run("import " + q(tmp / src) + " " + q(out), "HDF5_PLUGIN_PATH=/nonexistent").status ==
            0);
        CHECK(b2nd::AnyArray::open(out).read() ==
              b2nd::test::read_npy_payload(tmp / (name + ".npy")).data);
        ++n;
    }
    CHECK(n >= (b2nd::have_hdf5() ? 3 : 1));
}

TEST_CASE("cli bridges: --hdf5-external follows external links, --no-hdf5-plugins refuses plugins",
          "[cli][bridges]") {
    if (!b2nd::have_hdf5()) {
        B2ND_SKIP("this build has no libhdf5");
    }
    b2nd::test::TempDir tmp;
    // target.h5:/d, link.h5:/x -> target.h5:/d, lz4.h5:/d through the LZ4 plugin (32004).
    const std::string script =
        "import sys\n"
        "try:\n"
        "    import h5py, numpy as np\n"
        "except ImportError:\n"
        "    sys.exit(77)\n"
        "d = sys.argv[1]\n"
        "with h5py.File(d + '/target.h5', 'w') as f:\n"
        "    f['d'] = np.arange(6, dtype='<i4')\n"
        "with h5py.File(d + '/link.h5', 'w') as f:\n"
        "    f['x'] = h5py.ExternalLink('target.h5', '/d')\n"
        "try:\n"
        "    with h5py.File(d + '/lz4.h5', 'w') as f:\n"
        "        f.create_dataset('d', data=np.arange(6, dtype='<i4'), chunks=(3,), "
        "compression=32004)\n"
        "except Exception:\n"
        "    pass\n";
    const int st = b2nd::test::run_python(
        script, tmp.path(), "HDF5_PLUGIN_PATH=/usr/lib/x86_64-linux-gnu/hdf5/serial/plugins");
    if (st == 77) {
        B2ND_SKIP("h5py or numpy is not installed (python3-h5py)");
    }
    REQUIRE(st == 0);
    const Run refused = run("show " + q(tmp / "link.h5") + ":/x");
    CHECK(refused.status == 2);
    CHECK_THAT(refused.output, Contains("external link") && Contains("target.h5") &&
                                   Contains("--hdf5-external") && !Contains("OpenOptions"));
    for (const std::string& args : {"show --hdf5-external " + q(tmp / "link.h5") + ":/x",
                                    "show " + q(tmp / "link.h5") + ":/x --hdf5-external"}) {
        INFO(args);
        const Run shown = run(args);
        CHECK(shown.status == 0);
        CHECK_THAT(shown.output, Contains("[0 1 2 3 4 5]"));
    }
    if (std::filesystem::exists(tmp / "lz4.h5")) {
        CHECK(run("show " + q(tmp / "lz4.h5") + ":/d").output.find("[0 1 2 3 4 5]") !=
              std::string::npos);
        const Run off = run("show " + q(tmp / "lz4.h5") + ":/d --no-hdf5-plugins");
        CHECK(off.status != 0);
        CHECK_THAT(off.output, Contains("32004") && Contains("--no-hdf5-plugins"));
    } else {
        WARN("h5py could not write LZ4 (hdf5-filter-plugin): the plugin part is skipped");
    }
}

TEST_CASE(
    "cli bridges: exports never replace an HDF5 group, a Zarr directory holding other "
    "files, or an HDF5 file another program writes",
    "[cli][bridges]") {
    b2nd::test::TempDir tmp;
    const std::string t = tmp / "t.b2nd";
    (void)b2nd::NDArray<float>::create_from(t, {6}, std::vector<float>{1, 2, 3, 4, 5, 6});
    // A Zarr array directory that also holds the user's files: refused, both kept.
    const std::string z = tmp / "extra.zarr";
    REQUIRE(run("export " + q(t) + " " + q(z)).status == 0);
    std::filesystem::create_directories(z + "/sub");
    std::ofstream(z + "/NOTES.txt") << "mine\n";
    std::ofstream(z + "/sub/keep.txt") << "mine too\n";
    const Run zarr = run("export " + q(t) + " " + q(z) + " --overwrite");
    CHECK(zarr.status == 2);
    CHECK_THAT(zarr.output, Contains("extra.zarr") && Contains("also holds") &&
                                Contains("not part of the array"));
    CHECK(std::filesystem::exists(z + "/NOTES.txt"));
    CHECK(std::filesystem::exists(z + "/sub/keep.txt"));
    std::filesystem::remove(z + "/NOTES.txt");
    std::filesystem::remove_all(z + "/sub");
    CHECK(run("export " + q(t) + " " + q(z) + " --overwrite").status == 0);  // its own files only
    if (!b2nd::have_hdf5()) {
        return;
    }
    // An HDF5 group of 4 datasets named as the dataset to write: refused by name, kept.
    const std::string script =
        "import os, sys, time\n"
        "try:\n"
        "    import h5py, numpy as np\n"
        "except ImportError:\n"
        "    sys.exit(77)\n"
        "d = sys.argv[1]\n"
        "with h5py.File(d + '/o2.h5', 'w') as f:\n"
        "    for n in 'abcd':\n"
        "        f['run7/' + n] = np.arange(3)\n";
    const int st = b2nd::test::run_python(script, tmp.path());
    if (st == 77) {
        B2ND_SKIP("h5py or numpy is not installed (python3-h5py)");
    }
    REQUIRE(st == 0);
    const std::string o2 = tmp / "o2.h5";
    for (const std::string& flag : {std::string(), std::string(" --overwrite")}) {
        const Run group = run("export " + q(t) + " " + q(o2) + ":/run7" + flag);
        CHECK(group.status == 2);
        CHECK_THAT(group.output, Contains("/run7 is a group holding 4 datasets"));
    }
    CHECK_THAT(run("show " + q(o2) + ":/run7/d").output, Contains("[0 1 2]"));
    // One rule for every output (issue 56, item 8): the input is never the output.
    for (const std::string& same : {q(o2) + ":/run7/d " + q(o2) + ":/run7/d", q(z) + " " + q(z)}) {
        INFO(same);
        const Run r = run("export " + same + " --overwrite");
        CHECK(r.status == 2);
        CHECK_THAT(r.output, Contains("is the input"));
    }
    CHECK_THAT(run("show " + q(o2) + ":/run7/d").output, Contains("[0 1 2]"));
    // An HDF5 file that h5py holds open for writing (mode 'a'): refused (busy, exit 3), the file
    // as it was; once h5py is done, the export adds to it.
    const std::string holder =
        "import sys, time, h5py\n"
        "f = h5py.File(sys.argv[1], 'a')\n"
        "open(sys.argv[1] + '.ready', 'w').close()\n"
        "time.sleep(60)\n";
    std::ofstream(tmp / "holder.py") << holder;
    const std::string pidfile = tmp / "holder.pid";
    REQUIRE(std::system((b2nd::test::python3() + " " + q(tmp / "holder.py") + " " + q(o2) +
                         " > /dev/null 2>&1 & echo $! > " + q(pidfile))
                            .c_str()) == 0);
    for (int i = 0; i < 200 && !std::filesystem::exists(o2 + ".ready"); ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    REQUIRE(std::filesystem::exists(o2 + ".ready"));
    const auto before = b2nd::test::read_file(o2);
    const Run busy = run("export " + q(t) + " " + q(o2) + ":/new");
    long pid = 0;
    std::ifstream(pidfile) >> pid;
    REQUIRE(pid > 0);
    ::kill(static_cast<pid_t>(pid), SIGKILL);
    CHECK(busy.status == 3);
    CHECK_THAT(busy.output,
               Contains("o2.h5") && Contains("another program has it open for writing"));
    CHECK(b2nd::test::read_file(o2) == before);
    for (int i = 0; i < 200 && ::kill(static_cast<pid_t>(pid), 0) == 0; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    CHECK(run("export " + q(t) + " " + q(o2) + ":/new").status == 0);
    CHECK_THAT(run("show " + q(o2) + ":/new").output, Contains("[1. 2. 3. 4. 5. 6.]"));
}
