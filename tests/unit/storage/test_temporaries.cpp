// Temporaries as a hostile party may anticipate them (publish.hpp): names no one can guess,
// created with O_EXCL and O_NOFOLLOW, so that a link planted where a writer works is never
// written through; sweeps that remove only what b2nd made, of processes that are gone.
#include <filesystem>
#include <fstream>
#include <set>

#include <catch2/catch.hpp>

#include <b2nd/b2nd.hpp>
#include <b2nd/error.hpp>
#include <b2nd/store.hpp>

#include "storage/publish.hpp"
#include "support/files.hpp"
#include "support/temp_dir.hpp"
#include <unistd.h>

using namespace b2nd;
namespace fs = std::filesystem;

namespace {

void write_text(const std::string& path, const std::string& text) {
    std::ofstream(path, std::ios::binary) << text;
}

/// A new array of 64 ones (the handle create_from returns, the writer, is closed).
void make(const std::string& path, bool sparse) {
    CreateOptions o;
    o.chunk_shape = {16};
    o.sparse = sparse;
    (void)NDArray<double>::create_from(path, {64}, std::vector<double>(64, 1.0), o);
}

/// A name a process that is gone would have used (pid 2^22 + 1 is above Linux's pid_max
/// default and below its limit: no process has it here).
std::string dead_temporary(const std::string& target) {
    return target + ".b2nd-tmp-4194305.0123456789abcdef";
}

}  // namespace

TEST_CASE("temporaries: names are unguessable and made anew each time", "[storage][temporaries]") {
    std::set<std::string> names;
    for (int i = 0; i < 100; ++i) {
        const std::string n = detail::temporary_name("/x/a.b2nd");
        CHECK(n.rfind("/x/a.b2nd.b2nd-tmp-" + std::to_string(::getpid()) + ".", 0) == 0);
        CHECK(detail::temporary_suffix_at(n, 9) == n.size() - 9);
        names.insert(n);
    }
    CHECK(names.size() == 100);
}

TEST_CASE("temporaries: links planted at the old fixed names are neither followed nor removed",
          "[storage][temporaries]") {
    test::TempDir dir;
    const std::string victim = dir / "victim.txt";
    write_text(victim, "precious");
    const std::string c = dir / "c.b2nd";
    const std::string s = dir / "s.b2frame";
    {
        make(c, false);
        make(s, true);
        for (const std::string& name : {c + ".compact.tmp", c + ".tmp", s + "/chunks.b2frame.tmp",
                                        s + "/00000000.chunk.tmp", s + "/00000004.chunk.tmp"}) {
            fs::create_symlink(victim, name);
        }
        OpenOptions w;
        w.writable = true;
        auto aw = NDArray<double>::open(c, w);
        auto bw = NDArray<double>::open(s, w);
        aw.write({Slice(0, 16)}, std::vector<double>(16, 2.0));
        bw.write({Slice(0, 16)}, std::vector<double>(16, 2.0));
        bw.append(0, std::vector<double>(16, 3.0));  // a new chunk file
        aw.any().compact();
        bw.any().compact();
        CHECK(aw.read()[0] == 2.0);
        CHECK(bw.read()[64] == 3.0);
    }
    CHECK(test::read_text(victim) == "precious");
    CHECK(fs::is_symlink(c + ".compact.tmp"));
    CHECK(fs::is_symlink(s + "/chunks.b2frame.tmp"));
    CHECK(fs::is_symlink(s + "/00000004.chunk.tmp"));
    CHECK(fs::is_regular_file(c));  // still the array, not a link to the victim
    CHECK_FALSE(fs::is_symlink(c));
}

TEST_CASE("temporaries: sweeps remove what b2nd made for gone processes, and nothing else",
          "[storage][temporaries]") {
    test::TempDir dir;
    const std::string s = dir / "s.b2frame";
    make(s, true);
    const std::string ours_dead = dead_temporary(s + "/chunks.b2frame");
    const std::string ours_dead_chunk = dead_temporary(s + "/00000001.chunk");
    const std::string users[] = {s + "/notes.123.tmp", s + "/00000001.chunk.tmp",
                                 s + "/x.b2nd-tmp-12.short", s + "/y.b2nd-tmp-4194305.0123"};
    write_text(ours_dead, "left by a killed writer");
    write_text(ours_dead_chunk, "left by a killed writer");
    for (const auto& u : users) {
        write_text(u, "the user's");
    }
    OpenOptions w;
    w.writable = true;
    NDArray<double>::open(s, w).any().compact();
    CHECK_FALSE(fs::exists(ours_dead));
    CHECK_FALSE(fs::exists(ours_dead_chunk));
    for (const auto& u : users) {
        INFO(u);
        CHECK(test::read_text(u) == "the user's");
    }

    // Beside a target: a temporary of a process still running (this one) stays.
    const std::string t = dir / "t.b2nd";
    const std::string live = t + ".b2nd-tmp-" + std::to_string(::getpid()) + ".0123456789abcdef";
    write_text(live, "at work");
    write_text(dead_temporary(t), "left");
    write_text(t + ".b2nd-tmp-4194305.7", "an old-style name: not ours to judge");
    make(t, false);  // creating sweeps beside the target
    CHECK(fs::exists(live));
    CHECK_FALSE(fs::exists(dead_temporary(t)));
    CHECK(fs::exists(t + ".b2nd-tmp-4194305.7"));
}

TEST_CASE("temporaries: store writes keep the user's .tmp files and sweep only their own",
          "[storage][temporaries][store]") {
    test::TempDir dir;
    const std::string st = dir / "p.b2d";
    auto w = StoreWriter::create(st);
    make(dir / "a.b2nd", false);
    const auto a = NDArray<double>::open(dir / "a.b2nd");
    w.put("/x", a);
    w.commit();
    write_text(st + "/results.20261126.tmp", "the user's");
    write_text(dead_temporary(st + "/y.b2nd"), "left by a killed writer");
    w.put("/y", a);
    w.commit();
    CHECK(test::read_text(st + "/results.20261126.tmp") == "the user's");
    CHECK_FALSE(fs::exists(dead_temporary(st + "/y.b2nd")));
    CHECK(Store::open(st).open<double>("/y").read()[0] == 1.0);
}

TEST_CASE("temporaries: a .b2z writer sweeps what killed writers of it left",
          "[storage][temporaries][store]") {
    test::TempDir dir;
    const std::string z = dir / "p.b2z";
    make(dir / "a.b2nd", false);
    const auto a = NDArray<double>::open(dir / "a.b2nd");
    {
        auto w = StoreWriter::create(z);
        w.put("/x", a);
        w.commit();
    }
    write_text(dead_temporary(z), "a killed writer's archive");
    write_text(dead_temporary(dir / "embed.b2e"), "a killed writer's embed.b2e");
    write_text(dir / "p.b2z.packing", "the user's");
    auto w = StoreWriter::open(z);
    w.put("/y", a);
    w.commit();
    CHECK_FALSE(fs::exists(dead_temporary(z)));
    CHECK_FALSE(fs::exists(dead_temporary(dir / "embed.b2e")));
    CHECK(test::read_text(dir / "p.b2z.packing") == "the user's");
    CHECK(Store::open(z).open<double>("/y").read()[0] == 1.0);
}
