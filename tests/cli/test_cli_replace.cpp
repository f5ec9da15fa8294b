// What --overwrite may replace: only what the command writes (an array, an .npy file, a store),
// never a directory of other files, a device, an input or what holds one; links are written
// through; rewrites keep the file's mode.
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include <b2nd/b2nd.hpp>
#include <b2nd/store.hpp>

#include "../support/files.hpp"
#include "../support/reference.hpp"
#include "../support/temp_dir.hpp"
#include "run.hpp"
#include <sys/stat.h>

using b2nd::test::q;
using b2nd::test::run;
using b2nd::test::Run;
using Catch::Matchers::Contains;

namespace fs = std::filesystem;

namespace {

std::string array_at(const std::string& path, float base = 0.0F) {
    std::vector<float> v(100);
    for (std::size_t i = 0; i < v.size(); ++i) {
        v[i] = base + static_cast<float>(i) * 0.5F;
    }
    b2nd::CreateOptions o;
    o.chunk_shape = {4, 5};
    o.sparse = path.find(".b2frame") != std::string::npos;
    (void)b2nd::NDArray<float>::create_from(path, {10, 10}, v, o);
    return path;
}

std::string store_at(const std::string& path, const std::string& leaf) {
    auto w = b2nd::StoreWriter::create(path);
    w.put("/x", b2nd::AnyArray::open(leaf));
    w.commit();
    return path;
}

unsigned mode_of(const std::string& path) {
    struct stat st {};
    REQUIRE(::stat(path.c_str(), &st) == 0);
    return st.st_mode & 07777;
}

void write_text(const std::string& path, const std::string& text) {
    std::ofstream(path) << text;
}

}  // namespace

TEST_CASE("cli: --overwrite replaces only what the command writes", "[cli]") {
    b2nd::test::TempDir tmp;
    const std::string a = array_at(tmp / "a.b2nd");
    REQUIRE(run("export " + q(a) + " " + q(tmp / "a.npy")).status == 0);
    const std::string st = store_at(tmp / "st.b2z", a);

    // A directory of results is never deleted, whatever the command.
    fs::create_directory(tmp / "results");
    write_text(tmp / "results/notes.txt", "three weeks of work");
    for (const std::string& cmd : {"export " + q(a) + " " + q(tmp / "results"),
                                   "import " + q(tmp / "a.npy") + " " + q(tmp / "results"),
                                   "convert " + q(a) + " " + q(tmp / "results"),
                                   "concat " + q(tmp / "results") + " " + q(a) + " " + q(a),
                                   "pack " + q(st) + " " + q(tmp / "results")}) {
        for (const std::string flag : {"", " --overwrite"}) {
            INFO(cmd << flag);
            const Run r = run(cmd + flag);
            CHECK(r.status == 2);
            CHECK_THAT(r.output, Contains("\"" + tmp / "results" + "\" is a directory"));
            CHECK_THAT(r.output, !Contains("--overwrite replaces it"));
        }
    }
    CHECK(b2nd::test::read_text(tmp / "results/notes.txt") == "three weeks of work");

    // A sparse frame that also holds a file of the user's stays whole.
    const std::string s = array_at(tmp / "s.b2frame", 7.0F);
    write_text(s + "/notes.txt", "mine");
    Run r = run("convert " + q(a) + " " + q(s) + " --overwrite");
    CHECK(r.status == 2);
    CHECK_THAT(r.output, Contains("also holds \"notes.txt\""));
    CHECK(b2nd::NDArray<float>::open(s).read()[0] == 7.0F);
    CHECK(fs::exists(s + "/notes.txt"));

    // Files of another kind than the output's.
    write_text(tmp / "plain.txt", "some text");
    struct Case {
        std::string cmd, message;
    };
    for (const Case& c : std::vector<Case>{
             {"convert " + q(a) + " " + q(tmp / "a.npy"), "is a NumPy .npy file, not an array"},
             {"export " + q(a) + " " + q(s), "is a directory that is not an .npy file"},
             {"export " + q(a) + " " + q(a + ".copy.npy"), ""},  // nothing there: fine
             {"export " + q(tmp / "a.b2nd") + " " + q(tmp / "b.npy"), ""},
             {"import " + q(tmp / "a.npy") + " " + q(tmp / "plain.txt"),
              "is a file of another kind, not an array"},
             {"export " + q(a) + " " + q(tmp / "plain.txt"),
              "is a file of another kind, not an .npy file"},
             {"pack " + q(st) + " " + q(a), "is a Blosc2 frame"}}) {
        INFO(c.cmd);
        r = run(c.cmd + " --overwrite");
        if (c.message.empty()) {
            CHECK(r.status == 0);
            continue;
        }
        CHECK(r.status == 2);
        CHECK_THAT(r.output, Contains(c.message));
    }
    CHECK(b2nd::test::read_text(tmp / "plain.txt") == "some text");
    CHECK(b2nd::test::read_npy_payload(tmp / "a.npy").data.size() == 400);

    // What holds nothing is replaced: an empty file (mktemp's), an empty directory.
    write_text(tmp / "empty.npy", "");
    fs::create_directory(tmp / "empty.b2frame");
    CHECK(run("export " + q(a) + " " + q(tmp / "empty.npy") + " --overwrite").status == 0);
    CHECK(b2nd::test::read_npy_payload(tmp / "empty.npy").data.size() == 400);
    CHECK(run("convert " + q(a) + " " + q(tmp / "empty.b2frame") + " --overwrite").status == 0);
    CHECK(b2nd::NDArray<float>::open(tmp / "empty.b2frame").read()[1] == 0.5F);

    // An array of either frame kind is replaced by an array, a store by a store.
    const std::string s2 = array_at(tmp / "s2.b2frame", 3.0F);
    CHECK(run("convert " + q(a) + " " + q(s2) + " --overwrite").status == 0);
    CHECK(b2nd::NDArray<float>::open(s2).read()[0] == 0.0F);
    REQUIRE(run("pack " + q(st) + " " + q(tmp / "st.b2d")).status == 0);
    write_text(tmp / "st.b2d/readme.txt", "not a leaf");
    r = run("pack " + q(st) + " " + q(tmp / "st.b2d") + " --overwrite");
    CHECK(r.status == 2);
    CHECK_THAT(r.output, Contains("also holds \"readme.txt\""));
    fs::remove(tmp / "st.b2d/readme.txt");
    CHECK(run("pack " + q(st) + " " + q(tmp / "st.b2d") + " --overwrite").status == 0);
    CHECK(fs::exists(tmp / "st.b2d/embed.b2e"));
}

TEST_CASE("cli: a link is written through, never replaced; devices and dangling links refused",
          "[cli]") {
    b2nd::test::TempDir tmp;
    const std::string a = array_at(tmp / "a.b2nd");
    fs::create_directory(tmp / "real");
    REQUIRE(run("export " + q(a) + " " + q(tmp / "real/r.npy") + " --slice 0").status == 0);
    fs::create_symlink(tmp / "real/r.npy", tmp / "link.npy");
    Run r = run("export " + q(a) + " " + q(tmp / "link.npy") + " --overwrite");
    CHECK(r.status == 0);
    CHECK(fs::is_symlink(tmp / "link.npy"));
    CHECK(b2nd::test::read_npy_payload(tmp / "real/r.npy").data.size() == 400);

    // A sparse frame through a link to its directory.
    const std::string s = array_at(tmp / "real/s.b2frame", 9.0F);
    fs::create_directory_symlink(s, tmp / "s.b2frame");
    CHECK(run("convert " + q(a) + " " + q(tmp / "s.b2frame") + " --overwrite").status == 0);
    CHECK(fs::is_symlink(tmp / "s.b2frame"));
    CHECK(b2nd::NDArray<float>::open(s).read()[0] == 0.0F);

    // A link to a device (as /dev/stdout is) and a link to nothing.
    fs::create_symlink("/dev/null", tmp / "dev.npy");
    r = run("export " + q(a) + " " + q(tmp / "dev.npy") + " --overwrite");
    CHECK(r.status == 2);
    CHECK_THAT(r.output, Contains("is a character device"));
    CHECK(fs::is_symlink(tmp / "dev.npy"));
    CHECK(fs::is_character_file("/dev/null"));
    fs::create_symlink(tmp / "nowhere.npy", tmp / "dangling.npy");
    r = run("export " + q(a) + " " + q(tmp / "dangling.npy") + " --overwrite");
    CHECK(r.status == 2);
    CHECK_THAT(r.output, Contains("is a symbolic link to nothing"));
    CHECK(fs::is_symlink(tmp / "dangling.npy"));
    CHECK_FALSE(fs::exists(tmp / "nowhere.npy"));
}

TEST_CASE("cli: a directory that holds an input, or lies inside one, is never an output", "[cli]") {
    b2nd::test::TempDir tmp;
    fs::create_directory(tmp / "c");
    const std::string a = array_at(tmp / "c/small.b2nd");
    const auto before = b2nd::test::read_file(a);
    for (const std::string& cmd :
         {"convert " + q(a) + " " + q(tmp / "c"), "export " + q(a) + " " + q(tmp / "c"),
          "concat " + q(tmp.path()) + " " + q(a)}) {
        INFO(cmd);
        const Run r = run(cmd + " --overwrite");
        CHECK(r.status == 2);
        CHECK_THAT(r.output, Contains("holds the input"));
    }
    CHECK(b2nd::test::read_file(a) == before);

    const std::string p1 = store_at(tmp / "p1.b2d", a);
    const Run r = run("pack " + q(p1) + " " + q(p1 + "/x2.b2d"));
    CHECK(r.status == 2);
    CHECK_THAT(r.output, Contains("is inside the input"));
    CHECK_FALSE(fs::exists(p1 + "/x2.b2d"));
    const auto entries = b2nd::Store::open(p1).entries();
    REQUIRE(entries.size() == 1);
    CHECK(entries[0].key == "/x");
    CHECK(run("convert " + q(p1 + ":/x") + " " + q(p1 + "/y.b2nd")).status == 2);
}

TEST_CASE("cli: rewrites keep the file's mode", "[cli]") {
    b2nd::test::TempDir tmp;
    const std::string a = array_at(tmp / "a.b2nd");
    // compact: dead space from a second write, a private file stays private.
    const std::string p = array_at(tmp / "p.b2nd");
    {
        b2nd::OpenOptions w;
        w.writable = true;
        w.auto_compact = false;
        auto arr = b2nd::NDArray<float>::open(p, w);
        arr.write(b2nd::Box::whole(arr.shape()), std::vector<float>(100, 2.0F));
    }
    fs::permissions(p, fs::perms::owner_read | fs::perms::owner_write);
    const auto size_before = fs::file_size(p);
    Run r = run("compact " + q(p));
    REQUIRE(r.status == 0);
    CHECK_THAT(r.output, Contains("dead space removed"));
    CHECK(fs::file_size(p) < size_before);
    CHECK(mode_of(p) == 0600);

    // --overwrite of a file with its own mode: the replacement has it.
    REQUIRE(run("export " + q(a) + " " + q(tmp / "o.npy")).status == 0);
    fs::permissions(tmp / "o.npy", fs::perms::owner_read | fs::perms::owner_write);
    REQUIRE(run("export " + q(a) + " " + q(tmp / "o.npy") + " --slice 0 --overwrite").status == 0);
    CHECK(mode_of(tmp / "o.npy") == 0600);
    CHECK(b2nd::test::read_npy_payload(tmp / "o.npy").data.size() == 40);
    fs::permissions(p, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
    REQUIRE(run("convert " + q(a) + " " + q(p) + " --overwrite --codec lz4").status == 0);
    CHECK(mode_of(p) == 0640);

    // A sparse frame: the directory's mode and its files' mode.
    const std::string s = array_at(tmp / "s.b2frame");
    for (const auto& e : fs::directory_iterator(s)) {
        fs::permissions(e.path(), fs::perms::owner_read | fs::perms::owner_write);
    }
    fs::permissions(s, fs::perms::owner_all);
    REQUIRE(run("convert " + q(a) + " " + q(s) + " --overwrite --codec zlib").status == 0);
    CHECK(mode_of(s) == 0700);
    CHECK(mode_of(s + "/chunks.b2frame") == 0600);
    CHECK(mode_of(s + "/00000000.chunk") == 0600);
}
