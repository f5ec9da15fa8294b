// b2nd convert: a copy with other compression, chunks, blocks or frame kind.
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

const char* const kConvertHelp =
    "usage: b2nd convert IN OUT [options]\n"
    "\n"
    "Writes a copy of the b2nd array IN at OUT with other compression, chunks, blocks or frame\n"
    "kind; everything not given stays as in IN. Chunks whose geometry and compression do not\n"
    "change are copied as stored, without decoding. OUT appears only once it is complete.\n"
    "IN may be any array read in place (a store's leaf, a Zarr array, an HDF5 dataset, an\n"
    "https:// or s3:// URL); OUT may be an s3:// URL (AWS_* variables, as the AWS CLI).\n"
    "'b2nd export' writes NumPy, HDF5 and Zarr.\n"
    "\n"
    "@COMPRESSION@"
    "  --chunks A,B,..  chunk shape (blocks then chosen automatically unless --blocks)\n"
    "  --blocks A,B,..  block shape\n"
    "  --sframe         write a sparse frame (a directory)\n"
    "  --cframe         write a contiguous frame (one file); without either, OUT's name\n"
    "                   decides (.b2frame: sparse, .b2nd: contiguous), else IN's kind\n"
    "  --no-meta        leave out user metalayers and vlmeta (attributes)\n"
    "  --verify         decode the chunks copied as stored too: a corrupt one stops the copy\n"
    "  --overwrite      replace OUT if it exists (never IN); readers see the old array or\n"
    "                   the new one, never a part\n"
    "  --dtype DTYPE    read IN's items as this NumPy dtype (same size), e.g. for legacy files\n"
    "  --nthreads N     threads (default: all cores)\n"
    "\n"
    "example:\n"
    "  b2nd convert t.b2nd t_lz4.b2frame --codec lz4 --clevel 5 --sframe\n";

}  // namespace

int cmd_convert(const std::vector<std::string>& argv) {
    const Args a = Args::parse(argv, kCopyValues, kCopyFlags);
    if (a.has("--help")) {
        std::cout << with_compression_help(kConvertHelp, false);
        return 0;
    }
    if (a.positional.size() != 2) {
        throw ArgError("expected IN and OUT");
    }
    check_output(a.positional[1], {a.positional[0]}, a.has("--overwrite"),
                 detail::OutputKind::array);
    const AnyArray in = open_input(a.positional[0], input_options(a));
    const CopyOptions o = copy_options(a, in, a.positional[1]);
    return run_copy("convert", a.positional[1], o, in.grid().chunk_nbytes(),
                    [&](const CopyOptions& co) { return copy(in, a.positional[1], co); });
}

}  // namespace b2nd::cli
