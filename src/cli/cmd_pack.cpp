// b2nd pack SRC OUT: a python-blosc2 store converted between .b2d (a directory) and .b2z (a zip).
#include <chrono>
#include <cstdio>
#include <iostream>

#include <b2nd/store.hpp>

#include "cli.hpp"

namespace b2nd::cli {

namespace {

const char* const kPackHelp =
    "usage: b2nd pack SRC OUT [--overwrite]\n"
    "\n"
    "Converts a python-blosc2 TreeStore or DictStore between its two forms, as python-blosc2's\n"
    "to_b2z() and to_b2d() do: OUT ending in .b2z is a zip file of uncompressed members (read in\n"
    "place, without extraction), anything else a directory (.b2d by convention). Leaves keep\n"
    "their bytes, keys and places; embed.b2e is rebuilt without the dead bytes replaced values\n"
    "left. OUT is written beside its final name and renamed.\n"
    "\n"
    "  --overwrite   replace OUT when it exists\n"
    "\n"
    "examples:\n"
    "  b2nd pack data.b2d data.b2z\n"
    "  b2nd pack data.b2z data.b2d --overwrite\n";

}  // namespace

int cmd_pack(const std::vector<std::string>& argv) {
    const Args a = Args::parse(argv, {}, {"--overwrite", "--help"});
    if (a.has("--help")) {
        std::cout << kPackHelp;
        return 0;
    }
    if (a.positional.size() != 2) {
        throw ArgError("expected SRC and OUT");
    }
    check_output(a.positional[1], {a.positional[0]}, a.has("--overwrite"),
                 detail::OutputKind::store);
    const auto t0 = std::chrono::steady_clock::now();
    pack_store(a.positional[0], a.positional[1], a.has("--overwrite"));
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    // What was written, as convert says it.
    const Store out = Store::open(a.positional[1], with_settings(OpenOptions{}));
    std::size_t leaves = 0;
    for (const StoreEntry& e : out.entries()) {
        leaves += e.storage != LeafStorage::none ? 1 : 0;
    }
    char took[32];
    std::snprintf(took, sizeof took, "%.2f s", secs);
    const std::int64_t bytes = disk_bytes(a.positional[1]);
    std::cout << redact_secrets(a.positional[1]) << ": " << to_string(out.kind()) << " ("
              << out.form() << "), " << leaves << " leaves, "
              << (bytes >= 0 ? human_bytes(bytes) : std::string("size not known")) << ", " << took
              << "\n";
    return 0;
}

}  // namespace b2nd::cli
