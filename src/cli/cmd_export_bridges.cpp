// b2nd export to other formats: an HDF5 dataset (OUT.h5:/path) or a Zarr array (OUT.zarr,
// v3 sharded or v2).
#include <filesystem>
#include <iostream>
#include <memory>

#include <b2nd/any_array.hpp>
#include <b2nd/error.hpp>
#include <b2nd/storage/sources.hpp>

#include "../bridges/bridges.hpp"
#include "../bridges/export_coding.hpp"
#include "../bridges/hdf5_gate.hpp"
#include "../detail/text.hpp"
#include "../storage/outputs.hpp"
#include "cli.hpp"
#include "progress.hpp"

namespace b2nd::cli {

namespace {

/// The Zarr version of the group `out` lies in (2 or 3: the nearest local directory above it that
/// is a Zarr node), or 0 when it lies in none. \throws ArgError when that node is an array
int enclosing_zarr_group(const std::string& out) {
    if (storage::is_url(out)) {
        return 0;
    }
    for (std::filesystem::path p = std::filesystem::path(out).lexically_normal().parent_path();
         !p.empty() && p != p.root_path(); p = p.parent_path()) {
        const bridges::ZarrNode node = bridges::zarr_node(p.string());
        if (node.kind == "group") {
            return node.version;
        }
        if (!node.kind.empty()) {
            throw ArgError(detail::quoted_path(out) + ": lies inside the Zarr array " +
                           detail::quoted_path(p.string()) +
                           ", whose directory holds its chunks; write beside it, or in a group");
        }
    }
    return 0;
}

/// A Zarr output: a name ending in .zarr, or a path inside a Zarr group (grp.zarr/fields/new).
bool zarr_output(const std::string& out) {
    std::string o = out;
    while (o.size() > 1 && o.back() == '/') {
        o.pop_back();
    }
    return (o.size() > 5 && o.compare(o.size() - 5, 5, ".zarr") == 0) ||
           enclosing_zarr_group(o) != 0;
}

/// How the output is chunked and compressed (--chunks, --blocks, --compressor, --filters,
/// --codec, --clevel); what the format does not take is refused by the export, by name.
ExportCoding coding_of(const Args& a) {
    ExportCoding c;
    if (a.has("--chunks")) {
        c.chunks = a.get_shape("--chunks");
    }
    if (a.has("--blocks")) {
        c.blocks = a.get_shape("--blocks");
    }
    if (a.has("--compressor")) {
        const std::string name = a.get("--compressor");
        bool found = false;
        for (const ExportCompressor k :
             {ExportCompressor::blosc, ExportCompressor::gzip, ExportCompressor::zlib,
              ExportCompressor::zstd, ExportCompressor::lz4, ExportCompressor::none}) {
            if (name == bridges::compressor_name(k)) {
                c.compressor = k;
                found = true;
            }
        }
        if (!found) {
            throw ArgError("--compressor: '" + name +
                           "' is none of blosc, gzip, zlib, zstd, lz4 and none");
        }
    }
    if (a.has("--filters")) {
        const std::string f = a.get("--filters");
        if (f == "shuffle") {
            c.shuffle = ExportShuffle::byte;
        } else if (f == "bitshuffle") {
            c.shuffle = ExportShuffle::bit;
        } else if (f == "none") {
            c.shuffle = ExportShuffle::none;
        } else {
            throw ArgError(
                "--filters: an export shuffles bytes (shuffle), bits (bitshuffle) or "
                "not (none), not '" +
                f + "'; b2nd's other filters are for b2nd arrays ('b2nd convert')");
        }
    }
    if (a.has("--codec")) {
        const auto codec = codec::parse_codec(a.get("--codec"));
        if (!codec) {
            throw ArgError("--codec: unknown codec '" + a.get("--codec") + "'");
        }
        c.codec = *codec;
    }
    c.clevel = static_cast<int>(a.get_int("--clevel", -1, 0, 9));
    return c;
}

/// The line a writing command prints once done: what was written, and how large its file is.
void said(const AnyArray& in, const std::string& out, const std::string& what) {
    const std::int64_t bytes = disk_bytes(out);
    std::cout << redact_secrets(out) << ": " << to_string(in.shape()) << " " << in.dtype().str()
              << ", " << what << (bytes > 0 ? ", " + human_bytes(bytes) : std::string()) << "\n";
}

}  // namespace

bool bridge_output(const std::string& out) {
    return bridges::hdf5_location(out).has_value() || zarr_output(out);
}

int export_bridge(const Args& a, const std::string& in_path, const std::string& out) {
    for (const char* opt : {"--slice", "--points", "--mask", "--field"}) {
        if (a.has(opt)) {
            throw ArgError(std::string(opt) +
                           " writes .npy files; an HDF5 or Zarr export is of "
                           "the whole array");
        }
    }
    if (storage::is_url(out) && !zarr_output(out)) {
        throw ArgError(detail::quoted_path(out) +
                       ": HDF5 files are written to local paths only (libhdf5 writes files); "
                       "export to a local path and upload it, or write Zarr (URL.zarr) or a b2nd "
                       "array ('b2nd convert IN URL.b2nd') to the URL");
    }
    // One rule for every output: the input is never the output (a Zarr output is checked as any
    // other; an HDF5 one is the same dataset of the same file, as a file is only added to).
    if (zarr_output(out)) {
        check_output(out, {in_path}, a.has("--overwrite"), detail::OutputKind::zarr);
    } else if (const auto in_h5 = bridges::hdf5_location(in_path)) {
        const auto out_h5 = bridges::hdf5_location(out);
        const auto slashed = [](std::string p) { return p.empty() || p[0] != '/' ? "/" + p : p; };
        std::error_code ec;
        if (out_h5 && std::filesystem::equivalent(in_h5->file, out_h5->file, ec) &&
            slashed(in_h5->dataset) == slashed(out_h5->dataset)) {
            throw ArgError(detail::quoted_path(out) + " is the input \"" + in_path +
                           "\"; write to another path (even --overwrite does not replace an "
                           "input)");
        }
    }
    const AnyArray in = open_input(in_path, input_options(a));
    std::unique_ptr<ProgressBar> bar;
    const auto progress = [&](std::int64_t done, std::int64_t total) {
        if (!bar && ProgressBar::enabled()) {
            bar = std::make_unique<ProgressBar>("export", total,
                                                static_cast<double>(in.grid().chunk_nbytes()));
        }
        if (bar) {
            bar->update(done);
        }
    };
    if (zarr_output(out)) {
        ZarrExportOptions z;
        static_cast<ExportCoding&>(z) = coding_of(a);
        // Inside a group, its version (a v2 group holds v2 arrays) unless said otherwise.
        const int group = enclosing_zarr_group(out);
        z.format = static_cast<int>(a.get_int("--zarr-format", group != 0 ? group : 3, 2, 3));
        z.overwrite = a.has("--overwrite");
        z.nthreads = static_cast<int>(a.get_int("--nthreads", 0, 0, 1024));
        z.progress = progress;
        const OpenOptions settings = with_settings(OpenOptions{});
        z.s3 = settings.s3;
        z.http = settings.http;
        export_zarr(in, out, z);
        said(in, out, "Zarr v" + std::to_string(z.format) + " array");
        return 0;
    }
    if (a.has("--zarr-format")) {
        throw ArgError("--zarr-format goes with a Zarr output (OUT.zarr)");
    }
    const auto at = bridges::hdf5_location(out);
    Hdf5ExportOptions o;
    static_cast<ExportCoding&>(o) = coding_of(a);
    o.overwrite = a.has("--overwrite");
    o.progress = progress;
    bridges::export_hdf5(in, *at, o);
    said(in, at->file, "HDF5 dataset " + (at->dataset.empty() ? std::string("/") : at->dataset));
    return 0;
}

}  // namespace b2nd::cli
