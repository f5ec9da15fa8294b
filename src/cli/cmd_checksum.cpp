// b2nd checksum [add] PATH
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <optional>

#include <b2nd/any_array.hpp>
#include <b2nd/error.hpp>
#include <b2nd/storage/frame.hpp>

#include "../detail/text.hpp"
#include "cli.hpp"

namespace b2nd::cli {

namespace fs = std::filesystem;

namespace {

const char* const kHelp =
    "usage: b2nd checksum PATH\n"
    "       b2nd checksum add PATH [--nthreads N]\n"
    "\n"
    "Files b2nd-cpp writes carry checksums: XXH3-64 digests of every block of every chunk\n"
    "(stored after each chunk), the chunk index, the header and the vlmetalayers, in a\n"
    "vlmetalayer ('_b2nd_checksums') and bytes that c-blosc2 and python-blosc2 ignore. Reads\n"
    "check each block before decoding it; 'b2nd verify' checks every block and reports every\n"
    "mismatch.\n"
    "\n"
    "b2nd checksum PATH      says whether PATH carries checksums, and whether they are\n"
    "                        current (another program's changes make them stale).\n"
    "b2nd checksum add PATH  decodes every chunk (as b2nd verify does) and, if all are good,\n"
    "                        adds checksums covering the file as it is, in one commit\n"
    "                        (every chunk written again with its block digests; a file\n"
    "                        with version-1 checksums is upgraded to per-block ones).\n"
    "                        PATH is a frame (.b2nd, a sparse frame directory, .b2e) or a\n"
    "                        .b2d store directory (each of its frames). A .b2z store cannot\n"
    "                        change in place: unpack it (b2nd pack S.b2z S.b2d), add, pack.\n"
    "\n"
    "examples:\n"
    "  b2nd checksum t.b2nd\n"
    "  b2nd checksum add old_archive.b2nd\n";

}  // namespace

const char* checksum_state_text(storage::ChecksumReport::State s) {
    switch (s) {
        case storage::ChecksumReport::State::covered:
            return "checksums: current (every chunk, the index, the header and the vlmetalayers)";
        case storage::ChecksumReport::State::stale:
            return "checksums: stale (another program changed the file after they were "
                   "written; nothing is checked: b2nd checksum add renews them)";
        case storage::ChecksumReport::State::broken:
            return "checksums: broken";
        default:
            return "checksums: none (b2nd checksum add adds them)";
    }
}

std::string checksum_version_text(const storage::ChecksumReport& r) {
    if (r.state != storage::ChecksumReport::State::covered) {
        return {};
    }
    if (r.version >= 3) {
        return "table version " + std::to_string(r.version) +
               ": each block is checked before it is decoded, or what a read decodes of its "
               "first rows right after";
    }
    return r.version == 2 ? "table version 2: each block is checked before it is decoded (b2nd "
                            "checksum add upgrades it to also check what reads of a block's "
                            "first rows decode)"
                          : "table version 1: each chunk is checked whole (b2nd checksum add "
                            "upgrades it to per-block checks)";
}

const char* checksum_state_name(storage::ChecksumReport::State s) {
    switch (s) {
        case storage::ChecksumReport::State::covered:
            return "current";
        case storage::ChecksumReport::State::stale:
            return "stale";
        case storage::ChecksumReport::State::broken:
            return "broken";
        default:
            return "none";
    }
}

namespace {

bool is_sparse_frame(const fs::path& p) {
    std::error_code ec;
    return fs::is_directory(p, ec) && fs::exists(p / "chunks.b2frame", ec);
}

/// The frames `add` works on: PATH itself, or each frame of a .b2d directory.
std::vector<std::string> frames_of(const std::string& path) {
    if (store_reference(path)) {
        throw ArgError(detail::quoted_path(path) +
                       ": a store leaf; give the store (.b2d) or the leaf's own file");
    }
    std::error_code ec;
    if (!fs::is_directory(path, ec) || is_sparse_frame(path)) {
        if (fs::path(path).extension() == ".b2z") {
            throw ArgError(detail::quoted_path(path) +
                           ": a zip store cannot change in place; b2nd pack it to a .b2d "
                           "directory, add checksums there, and pack it back");
        }
        return {path};
    }
    std::vector<std::string> out;
    for (auto it = fs::recursive_directory_iterator(path); it != fs::recursive_directory_iterator();
         ++it) {
        const fs::path& p = it->path();
        if (it->is_symlink()) {
            throw ArgError(detail::quoted_path(path) + ": " + detail::quoted_path(p.string()) +
                           " is a symbolic link inside the store; b2nd never writes through "
                           "one (it could lead outside the store)");
        }
        if (is_sparse_frame(p)) {
            out.push_back(p.string());
            it.disable_recursion_pending();
        } else if (it->is_regular_file() && (p.extension() == ".b2nd" || p.extension() == ".b2e" ||
                                             p.extension() == ".b2f")) {
            out.push_back(p.string());
        }
    }
    std::sort(out.begin(), out.end());
    if (out.empty()) {
        throw ArgError(detail::quoted_path(path) + ": a directory holding no frames");
    }
    return out;
}

int add(const std::string& path, int nthreads) {
    refuse_bridged(path);
    const std::vector<std::string> frames = frames_of(path);
    // All are checked before any changes: a corrupt one stops the whole store.
    bool all_good = true;
    for (const std::string& f : frames) {
        check_input(f);
        storage::OpenOptions o = with_settings(storage::OpenOptions{});
        o.verify_checksums = false;
        const storage::Frame frame = storage::Frame::open(f, o);
        const FrameCheck r = check_frame(f, frame, AnyArray(), nthreads);
        for (const std::string& why : r.bad) {
            std::cout << why << "\n";
        }
        all_good = all_good && r.bad.empty();
    }
    if (!all_good) {
        std::cout << "not added: " << path
                  << ": corrupt chunks or metadata (above); checksums would vouch for them\n";
        return 1;
    }
    for (const std::string& f : frames) {
        storage::OpenOptions o = with_settings(storage::OpenOptions{});
        o.writable = true;
        o.verify_checksums = false;
        storage::Frame frame = storage::Frame::open(f, o);
        frame.add_checksums();
        std::cout << "added: " << f << ": " << frame.nchunks() << " chunks covered\n";
    }
    return 0;
}

}  // namespace

int cmd_checksum(const std::vector<std::string>& argv) {
    const Args a = Args::parse(argv, {"--nthreads"}, {"--help"});
    if (a.has("--help")) {
        std::cout << kHelp;
        return 0;
    }
    const int nthreads = static_cast<int>(a.get_int("--nthreads", 0, 0, 1024));
    if (a.positional.size() == 2 && a.positional[0] == "add") {
        return add(a.positional[1], nthreads);
    }
    if (a.positional.size() == 1 && a.positional[0] == "add") {
        throw ArgError("add needs the PATH to cover: b2nd checksum add PATH");
    }
    if (a.positional.size() != 1) {
        throw ArgError("expected PATH, or add PATH");
    }
    const std::string path = a.positional[0];
    std::optional<storage::Frame> own;
    AnyArray leaf;
    const storage::Frame& frame = input_frame(path, own, leaf, false);
    const storage::ChecksumReport r = frame.checksums();
    std::cout << path << ": " << checksum_state_text(r.state) << "\n";
    if (!checksum_version_text(r).empty()) {
        std::cout << path << ": " << checksum_version_text(r) << "\n";
    }
    for (const std::string& p : r.problems) {
        std::cout << "  " << p << "\n";
    }
    return r.state == storage::ChecksumReport::State::broken ? 1 : 0;
}

}  // namespace b2nd::cli
