// b2nd export: an array, a selection, points or a[mask] as a .npy file.
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>

#include <b2nd/any_array.hpp>
#include <b2nd/error.hpp>
#include <b2nd/format/chunk_header.hpp>
#include <b2nd/mask.hpp>
#include <b2nd/npy.hpp>

#include "../detail/text.hpp"
#include "cli.hpp"
#include "progress.hpp"
#include <unistd.h>

namespace b2nd::cli {

namespace {

const char* const kExportHelp =
    "usage: b2nd export PATH OUT.npy|- [--slice EXPR | --points PTS.npy | --mask MASK.npy]\n"
    "                   [--field NAME] [--overwrite] [--dtype DTYPE] [--nthreads N]\n"
    "       b2nd export PATH OUT.h5:/path/to/dataset [CODING] [--overwrite]\n"
    "       b2nd export PATH OUT.zarr [--zarr-format 2] [CODING] [--overwrite]\n"
    "CODING: [--chunks A,B,..] [--blocks A,B,..] [--compressor NAME] [--filters SHUFFLE]\n"
    "        [--codec C] [--clevel N]\n"
    "\n"
    "Writes the array, or part of it, as a .npy file of the same dtype. OUT.npy is written\n"
    "under a temporary name and appears only once complete; OUT '-' writes to stdout. A\n"
    "python-blosc2 UTF8Array (NAME.b2nd beside NAME.utf8.b2nd, or a CTable's utf8 column)\n"
    "exports its strings as NumPy's np.array(strings) holds them ('<U' as wide as the longest;\n"
    "--slice a:b selects strings a..b-1).\n"
    "\n"
    "  --slice EXPR     NumPy-style selection, e.g. '0:10,5,::2' or '...,-1' (integers drop\n"
    "                   their dimension; steps may be negative). Index lists select\n"
    "                   orthogonally, as python-blosc2's .oindex:\n"
    "                   --slice '[3,1,7], 2:9:2, -1, [0,-1]'\n"
    "  --points PTS.npy an integer array of shape (N, ndim): those N elements, in order\n"
    "  --mask MASK.npy  a bool ('|b1') array of the array's shape: the elements where it is\n"
    "                   true, in C order (NumPy's a[mask])\n"
    "  --field NAME     one field of a structured array (nested fields: 'pos.x'), with --slice\n"
    "                   or alone; a sub-array field adds its shape, as numpy's a['NAME']\n"
    "  --overwrite      replace OUT.npy if it exists (never one of the inputs)\n"
    "  --dtype DTYPE    read items as this NumPy dtype (same size), e.g. for legacy files\n"
    "  --salvage        a damaged array: chunks that cannot be read (a missing chunk file, a\n"
    "                   bad checksum; a Zarr or HDF5 chunk that does not decode) are written\n"
    "                   as zeros and named on stderr; the exit code is then 1, with OUT.npy\n"
    "                   written\n"
    "  --nthreads N     decoding threads (default: all cores)\n"
    "\n"
    "An HDF5 output (also .hdf5, .he5, .nc) gets the whole array as a dataset chunked as the\n"
    "array, compressed with shuffle + gzip (level 4), which h5py reads without plugins; the\n"
    "array's attributes become the dataset's. The file is created, or the dataset added to it\n"
    "(replaced with --overwrite); the file is rebuilt beside itself and replaces the old one in\n"
    "one step.\n"
    "\n"
    "A Zarr output is a v3 array: the array's chunks become shards of inner chunks of its block\n"
    "shape, compressed with blosc (the array's codec and shuffle; zstd where Blosc 1.x lacks\n"
    "the codec), the shard index checked by crc32c. --zarr-format 2 writes a v2 array of the\n"
    "array's chunks with the blosc compressor. Attributes go along.\n"
    "\n"
    "CODING changes how an HDF5 or Zarr output is chunked and compressed:\n"
    "  --chunks A,B,..     the output's chunks (HDF5 chunks, Zarr v2 chunks, Zarr v3 shards)\n"
    "  --blocks A,B,..     Zarr v3's inner chunks\n"
    "  --compressor NAME   HDF5: gzip (default), blosc (the Blosc filter 32001: h5py reads it\n"
    "                      with hdf5plugin), none. Zarr v2: blosc (default), zstd, zlib, gzip,\n"
    "                      lz4, none. Zarr v3: blosc (default), zstd, gzip, none\n"
    "  --filters SHUFFLE   shuffle, bitshuffle or none: HDF5's gzip takes shuffle or none;\n"
    "                      bitshuffle, and any shuffle in Zarr, go with blosc\n"
    "  --codec C           blosc's codec: blosclz, lz4, lz4hc, zlib, zstd\n"
    "  --clevel N          0-9 (default: 4 for HDF5's gzip, else the array's)\n"
    "\n"
    "A path inside a Zarr group (grp.zarr/fields/new) is a Zarr output of the group's\n"
    "version, written beside its other members. OUT may be an s3:// URL for .npy and Zarr\n"
    "outputs (AWS_* variables, as the AWS CLI); HDF5 files are written locally only.\n"
    "\n"
    "PATH may be any array: a b2nd file, a store's leaf (STORE.b2z:/KEY), a Zarr array, an\n"
    "HDF5 dataset (FILE.h5:/path), an https:// or s3:// URL.\n"
    "\n"
    "example:\n"
    "  b2nd export t.b2nd day0.npy --slice '0, :, 100:200'\n"
    "  b2nd export t.b2nd results.h5:/run7/temperature\n"
    "  b2nd export t.b2nd t.zarr --codec lz4 --clevel 5\n"
    "  b2nd export t.b2nd t.zarr --zarr-format 2 --compressor zstd --chunks 64,256,256\n"
    "  b2nd export t.b2nd t.h5:/t --compressor blosc --codec lz4 --filters bitshuffle\n"
    "  b2nd export ocean.nc:/temperature s3://bucket/t.zarr\n";

/// The coordinates of a points file (an integer .npy of shape (N, ndim), or (N,) for ndim 1),
/// as int64, N * ndim of them; negative ones count from the end, as NumPy's.
std::vector<std::int64_t> load_points(const std::string& path,
                                      const Shape& shape,
                                      std::int64_t& n) {
    const int ndim = static_cast<int>(shape.size());
    const NpyFile f = NpyFile::open(path);
    const NpyHeader& h = f.header();
    const DType::Kind k = h.dtype.kind();
    if ((k != DType::Kind::int_ && k != DType::Kind::uint) || h.dtype.itemsize() > 8) {
        throw ArgError("--points: " + detail::quoted_path(path) + " holds dtype '" + h.dtype.str() +
                       "'; points must be integers");
    }
    const bool flat = h.shape.size() == 1 && ndim == 1;
    if (!flat && (h.shape.size() != 2 || h.shape[1] != ndim)) {
        throw ArgError("--points: " + detail::quoted_path(path) + " has shape " +
                       to_string(h.shape) + "; points of this array need shape (N, " +
                       std::to_string(ndim) + ")");
    }
    if (h.fortran_order && !flat && h.shape[0] > 1 && ndim > 1) {
        throw ArgError("--points: " + detail::quoted_path(path) +
                       " is in Fortran order; write it in C order");
    }
    n = h.shape[0];
    const auto isz = static_cast<std::size_t>(h.dtype.itemsize());
    const std::size_t count = static_cast<std::size_t>(n) * static_cast<std::size_t>(ndim);
    std::vector<std::int64_t> coords(count);
    const std::uint8_t* p = f.data().data();
    for (std::size_t i = 0; i < count; ++i) {
        std::uint8_t b[8];
        std::memcpy(b, p + i * isz, isz);
        if (h.dtype.needs_byteswap()) {
            std::reverse(b, b + isz);
        }
        std::uint64_t u = 0;
        std::memcpy(&u, b, isz);  // little-endian host
        if (k == DType::Kind::int_ && isz < 8 && ((u >> (8 * isz - 1)) & 1) != 0) {
            u |= ~std::uint64_t{0} << (8 * isz);  // sign extension
        }
        if (k == DType::Kind::uint && u > static_cast<std::uint64_t>(INT64_MAX)) {
            throw ArgError("--points: point " + std::to_string(i / static_cast<std::size_t>(ndim)) +
                           ", axis " + std::to_string(i % static_cast<std::size_t>(ndim)) + ": " +
                           std::to_string(u) + " is out of range");
        }
        std::int64_t c = static_cast<std::int64_t>(u);
        const std::int64_t extent = shape[i % static_cast<std::size_t>(ndim)];
        if (c < 0) {
            c += extent;  // -1: the last, as in --slice and NumPy
        }
        if (c < 0 || c >= extent) {
            throw ArgError("--points: point " + std::to_string(i / static_cast<std::size_t>(ndim)) +
                           ", axis " + std::to_string(i % static_cast<std::size_t>(ndim)) + ": " +
                           std::to_string(static_cast<std::int64_t>(u)) +
                           " is out of range for extent " + std::to_string(extent));
        }
        coords[i] = c;
    }
    return coords;
}

/// OUT names a NumPy file: a name of another kind is refused, never written as NumPy under it.
/// \throws ArgError pointing at the command that writes it
void require_npy_name(const std::string& out_path) {
    std::string ext = std::filesystem::path(out_path).extension().string();
    for (char& c : ext) {
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    if (ext == ".b2nd" || ext == ".b2frame" || ext == ".b2z" || ext == ".b2d" || ext == ".b2e") {
        throw ArgError(detail::quoted_path(out_path) +
                       ": export writes NumPy (.npy), HDF5 (FILE.h5:/dataset) and Zarr "
                       "(DIR.zarr) files; 'b2nd convert IN OUT" +
                       ext + "' writes a b2nd array" +
                       (ext == ".b2nd" || ext == ".b2frame" ? "" : ", 'b2nd pack' a store"));
    }
    if (ext != ".npy") {
        throw ArgError(detail::quoted_path(out_path) +
                       ": names no output export writes (OUT.npy, FILE.h5:/dataset, DIR.zarr, "
                       "or - for standard output)");
    }
}

}  // namespace

int cmd_export(const std::vector<std::string>& argv) {
    const Args a = Args::parse(
        argv,
        {"--slice", "--points", "--mask", "--field", "--dtype", "--nthreads", "--clevel", "--codec",
         "--zarr-format", "--chunks", "--blocks", "--compressor", "--filters"},
        {"--overwrite", "--salvage", "--help"});
    if (a.has("--help")) {
        std::cout << kExportHelp;
        return 0;
    }
    if (a.positional.size() != 2) {
        throw ArgError("expected PATH and OUT.npy");
    }
    OpenOptions o = input_options(a);
    o.salvage = a.has("--salvage");
    if (a.has("--slice") + a.has("--points") + a.has("--mask") > 1) {
        throw ArgError("give one of --slice, --points and --mask");
    }
    if (a.has("--field") && (a.has("--points") || a.has("--mask"))) {
        throw ArgError("--field goes with --slice, or alone");
    }
    std::vector<std::string> inputs = {a.positional[0]};
    for (const char* opt : {"--points", "--mask"}) {
        if (a.has(opt)) {
            inputs.push_back(a.get(opt));
        }
    }
    const std::string& out_path = a.positional[1];
    if (bridge_output(out_path)) {
        return export_bridge(a, a.positional[0], out_path);
    }
    for (const char* opt :
         {"--chunks", "--blocks", "--compressor", "--filters", "--codec", "--clevel"}) {
        if (a.has(opt)) {
            throw ArgError(std::string(opt) +
                           " goes with an HDF5 or Zarr output (FILE.h5:/dataset, DIR.zarr); a "
                           ".npy file is neither chunked nor compressed");
        }
    }
    if (a.has("--zarr-format")) {
        throw ArgError("--zarr-format goes with a Zarr output (DIR.zarr)");
    }
    const bool to_stdout = out_path == "-";
    if (to_stdout && ::isatty(STDOUT_FILENO) != 0) {
        throw ArgError("OUT is '-' and stdout is a terminal; redirect it to a file or a pipe");
    }
    if (!to_stdout) {
        check_output(out_path, inputs, a.has("--overwrite"), detail::OutputKind::npy);
    }
    // Where the .npy goes: stdout, or OUT.npy built beside it and put in place when complete.
    // (Its name is checked once the input has opened: a bad input is said first.)
    const auto sink = [&] {
        if (!to_stdout) {
            require_npy_name(out_path);
        }
        return to_stdout ? std::make_unique<NpySink>(stdout)
                         : std::make_unique<NpySink>(out_path, a.has("--overwrite"));
    };
    if (const auto strings = utf8_input(a.positional[0], o)) {
        if (a.has("--points") || a.has("--mask") || a.has("--field")) {
            throw ArgError(a.positional[0] +
                           " is a UTF8Array (variable-length strings): --slice a:b selects them");
        }
        export_strings(*strings, a.get("--slice"), *sink());
        return 0;
    }
    AnyArray arr = open_input(a.positional[0], o);
    const AnyArray source = arr;
    // What was written, said as the other writing commands say it (not on stdout: that is the
    // data); what --salvage wrote as zeros: named, and the exit code 1.
    const auto t0 = std::chrono::steady_clock::now();
    const auto salvaged = [&] {
        if (!to_stdout) {
            const std::int64_t bytes = disk_bytes(out_path);
            char took[32];
            std::snprintf(
                took, sizeof took, "%.2f s",
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
            std::cout << redact_secrets(out_path) << ": NumPy file"
                      << (bytes >= 0 ? ", " + human_bytes(bytes) : std::string()) << ", " << took
                      << "\n";
        }
        const std::vector<std::string> bad = source.salvaged();
        for (const std::string& why : bad) {
            std::cerr << "b2nd export: written as zeros: " << why << "\n";
        }
        return bad.empty() ? 0 : 1;
    };
    const bool field = a.has("--field");
    if (field) {
        arr = field_input(arr, a);  // the selection is applied: the whole of it is exported
    }
    if (a.has("--points")) {
        std::int64_t n = 0;
        const std::vector<std::int64_t> coords = load_points(a.get("--points"), arr.shape(), n);
        detail::require_memory(arr, static_cast<std::uint64_t>(n), "export");
        std::vector<std::uint8_t> values(static_cast<std::size_t>(n * arr.itemsize()));
        try {
            arr.read_points(coords.data(), static_cast<std::size_t>(n), values.data());
        } catch (const UsageError& e) {
            throw ArgError(std::string("--points: ") + e.what());
        }
        const auto out = sink();
        out->begin(arr.dtype(), {n});
        out->write({values.data(), values.size()});
        out->finish();
        return salvaged();
    }
    if (a.has("--mask")) {
        const std::string mpath = a.get("--mask");
        const NpyFile f = NpyFile::open(mpath);
        const NpyHeader& h = f.header();
        if (h.dtype.kind() != DType::Kind::boolean || h.dtype.itemsize() != 1) {
            throw ArgError("--mask: " + detail::quoted_path(mpath) + " holds dtype '" +
                           h.dtype.str() + "'; a mask must be bool ('|b1')");
        }
        if (h.shape != arr.shape()) {
            throw ArgError("--mask: " + detail::quoted_path(mpath) + " has shape " +
                           to_string(h.shape) + "; the array's is " + to_string(arr.shape()));
        }
        if (h.fortran_order && arr.ndim() > 1) {
            throw ArgError("--mask: " + detail::quoted_path(mpath) +
                           " is in Fortran order; write it in C order");
        }
        export_npy(arr, Mask::of(f.data().data(), h.shape), *sink());
        return salvaged();
    }
    Resolved r;
    try {
        r = resolve(arr.shape(), field ? Selection{} : parse_selection(a.get("--slice")));
    } catch (const UsageError& e) {
        throw ArgError(std::string("--slice: ") + e.what());
    }
    std::unique_ptr<ProgressBar> bar;
    export_npy(arr, r, *sink(), [&](std::int64_t done, std::int64_t total) {
        if (!bar) {
            bar = std::make_unique<ProgressBar>("export", total, 1.0);
        }
        bar->update(done);
    });
    return salvaged();
}

}  // namespace b2nd::cli
