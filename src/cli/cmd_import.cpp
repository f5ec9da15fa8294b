// b2nd import: a .npy file as a new b2nd array.
#include <algorithm>
#include <cstring>
#include <iostream>
#include <memory>

#include <b2nd/any_array.hpp>
#include <b2nd/error.hpp>
#include <b2nd/format/chunk_header.hpp>
#include <b2nd/mask.hpp>
#include <b2nd/npy.hpp>
#include <b2nd/ops.hpp>

#include "../bridges/bridges.hpp"
#include "../bridges/hdf5_gate.hpp"
#include "../detail/text.hpp"
#include "cli.hpp"
#include "copy_args.hpp"
#include "progress.hpp"

namespace b2nd::cli {

namespace {

const char* const kImportHelp =
    "usage: b2nd import SRC PATH [options]\n"
    "\n"
    "Writes SRC as a new b2nd array at PATH, which appears only once complete. SRC is\n"
    "  a .npy file (C order);\n"
    "  a Zarr v2 or v3 array: DIR.zarr, or DIR.zarr/group/array inside groups (or a URL);\n"
    "  an HDF5 dataset: FILE.h5:/path/to/dataset (also .hdf5, .he5, .nc); FILE.h5 alone\n"
    "  when it holds one dataset. Blosc (32001) and LZF (32000) filters read without plugins.\n"
    "Attributes of the source become the array's (b2nd meta PATH NAME). Without --chunks,\n"
    "the chunks follow the source's (HDF5's chunks; a Zarr shard: chunks, its inner chunks:\n"
    "blocks).\n"
    "\n"
    "@COMPRESSION@"
    "  --chunks A,B,..  chunk shape (default: chosen from the CPU caches)\n"
    "  --blocks A,B,..  block shape (default: chosen from the CPU caches)\n"
    "  --sframe         a sparse frame (a directory) instead of one file\n"
    "  --overwrite      replace PATH if it exists (never IN.npy); readers see the old array\n"
    "                   or the new one, never a part\n"
    "  --nthreads N     encoding threads (default: all cores)\n"
    "\n"
    "example:\n"
    "  b2nd import t.npy t.b2nd --codec lz4 --chunks 64,256,256\n"
    "  b2nd import run.zarr/fields/temperature t.b2nd\n"
    "  b2nd import ocean.nc:/temperature t.b2nd --codec zstd --clevel 5\n"
    "  b2nd import field.npy field.b2nd --codec zfp-accuracy:-3   # |error| <= 1e-3\n";

/// Chunks larger than this do not make sensible b2nd chunks: the copy then picks its own.
constexpr std::int64_t kLargestFollowedChunk = std::int64_t{256} << 20;

/// A Zarr array or HDF5 dataset imported: a copy of it opened in place, its chunking followed.
int import_array(const Args& a, const std::string& src, const std::string& out) {
    const AnyArray in = open_input(src, input_options(a));
    CopyOptions o = copy_options(a, in, out);
    if (!a.has("--chunks") && in.grid().chunk_nbytes() <= kLargestFollowedChunk) {
        o.chunk_shape = in.chunk_shape();
        if (!a.has("--blocks") && in.block_shape() != in.chunk_shape()) {
            o.block_shape = in.block_shape();  // a shard's inner chunks
        }
    }
    if (!a.has("--sframe")) {
        o.sparse = false;
    }
    return run_copy("import", out, o, in.grid().chunk_nbytes(),
                    [&](const CopyOptions& co) { return copy(in, out, co); });
}

}  // namespace

int cmd_import(const std::vector<std::string>& argv) {
    const Args a = Args::parse(
        argv, {"--codec", "--clevel", "--filters", "--chunks", "--blocks", "--nthreads"},
        {"--sframe", "--overwrite", "--help"});
    if (a.has("--help")) {
        std::cout << with_compression_help(kImportHelp, true);
        return 0;
    }
    if (a.positional.size() != 2) {
        throw ArgError("expected SRC and PATH");
    }
    check_output(a.positional[1], {a.positional[0]}, a.has("--overwrite"),
                 detail::OutputKind::array);
    if (bridges::is_zarr(a.positional[0]) || bridges::hdf5_location(a.positional[0])) {
        return import_array(a, a.positional[0], a.positional[1]);
    }
    CreateOptions o;
    apply_compression_options(a, o.compression);
    if (a.has("--chunks")) {
        o.chunk_shape = a.get_shape("--chunks");
    }
    if (a.has("--blocks")) {
        o.block_shape = a.get_shape("--blocks");
    }
    o.sparse = a.has("--sframe");
    o.overwrite = a.has("--overwrite");
    o.nthreads = static_cast<int>(a.get_int("--nthreads", 0, 0, 1024));
    o.max_chunks = max_chunks_setting();
    o.lock_wait_ms = lock_wait_setting();
    o.cache_bytes = 0;
    std::unique_ptr<ProgressBar> bar;
    NpyProgress progress;
    if (ProgressBar::enabled()) {
        progress = [&](std::int64_t done, std::int64_t total) {
            if (!bar) {
                bar = std::make_unique<ProgressBar>("import", total, 1.0);
            }
            bar->update(done);
        };
    }
    import_npy(a.positional[0], a.positional[1], o, progress);
    return 0;
}

}  // namespace b2nd::cli
