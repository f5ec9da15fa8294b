// b2nd compact: a contiguous frame rewritten without dead space.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>

#include <b2nd/any_array.hpp>
#include <b2nd/error.hpp>
#include <b2nd/ops.hpp>
#include <b2nd/storage/frame.hpp>

#include "cli.hpp"
#include "copy_args.hpp"
#include "progress.hpp"

namespace b2nd::cli {

namespace {

const char* const kCompactHelp =
    "usage: b2nd compact PATH\n"
    "\n"
    "Rewrites a contiguous frame without the space that updates left behind (replaced chunks,\n"
    "old indexes), under a temporary name renamed over PATH. Readers that have PATH open keep\n"
    "reading the old file. Sparse frames have no dead space to remove.\n"
    "\n"
    "example:\n"
    "  b2nd compact t.b2nd\n";

}  // namespace

int cmd_compact(const std::vector<std::string>& argv) {
    const Args a = Args::parse(argv, {}, {"--help"});
    if (a.has("--help")) {
        std::cout << kCompactHelp;
        return 0;
    }
    if (a.positional.size() != 1) {
        throw ArgError("expected one PATH");
    }
    const std::string& path = a.positional[0];
    OpenOptions o = with_settings(OpenOptions{});
    o.writable = true;
    o.cache_bytes = 0;
    o.auto_compact = false;
    AnyArray arr = open_input(path, o);
    const std::int64_t before = disk_bytes(path);
    const std::int64_t dead = arr.frame().dead_bytes();
    if (arr.sparse()) {
        // Chunk files that no index names (replaced, or left by killed writers) and no reader
        // still uses go; a sparse frame has no dead space inside its files.
        arr.compact();
        arr = AnyArray();
        const std::int64_t after = disk_bytes(path);
        std::cout << path << ": " << human_bytes(before) << " -> " << human_bytes(after) << " ("
                  << human_bytes(before - after) << " of unused chunk files removed)\n";
        return 0;
    }
    if (dead == 0) {
        std::cout << path << ": " << human_bytes(before) << ", nothing to compact\n";
        return 0;
    }
    {
        ProgressBar bar("compact", arr.grid().nchunks(),
                        static_cast<double>(arr.cbytes()) /
                            static_cast<double>(std::max<std::int64_t>(1, arr.grid().nchunks())));
        arr.compact([&](std::int64_t done, std::int64_t) { bar.update(done); });
    }
    arr = AnyArray();
    const std::int64_t after = disk_bytes(path);
    std::cout << path << ": " << human_bytes(before) << " -> " << human_bytes(after) << " ("
              << human_bytes(before - after) << " of dead space removed)\n";
    return 0;
}

}  // namespace b2nd::cli
