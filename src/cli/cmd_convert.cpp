// b2nd export / b2nd import
#include <iostream>

#include <b2nd/any_array.hpp>
#include <b2nd/error.hpp>
#include <b2nd/format/chunk_header.hpp>
#include <b2nd/npy.hpp>

#include "cli.hpp"

namespace b2nd::cli {

namespace {

const char* const kExportHelp =
    "usage: b2nd export PATH OUT.npy [--slice EXPR] [--dtype DTYPE] [--nthreads N]\n"
    "\n"
    "Writes the array, or part of it, as a .npy file of the same dtype.\n"
    "\n"
    "  --slice EXPR   NumPy-style selection, e.g. '0:10,5,::2' or '...,-1' (integers drop\n"
    "                 their dimension; steps may be negative)\n"
    "  --dtype DTYPE  read items as this NumPy dtype (same size), e.g. for legacy files\n"
    "  --nthreads N   decoding threads (default: all cores)\n";

const char* const kImportHelp =
    "usage: b2nd import IN.npy PATH [options]\n"
    "\n"
    "Writes a .npy file (C order) as a new b2nd array.\n"
    "\n"
    "  --codec NAME     blosclz, lz4, lz4hc, zlib or zstd (default zstd)\n"
    "  --clevel N       0-9 (default 1)\n"
    "  --filters LIST   comma-separated, applied in order: shuffle, bitshuffle, delta,\n"
    "                   trunc_prec:BITS, bytedelta, or none (default shuffle)\n"
    "  --chunks A,B,..  chunk shape (default: chosen from the CPU caches)\n"
    "  --blocks A,B,..  block shape (default: chosen from the CPU caches)\n"
    "  --sframe         a sparse frame (a directory) instead of one file\n"
    "  --overwrite      replace PATH if it exists\n"
    "  --nthreads N     encoding threads (default: all cores)\n";

}  // namespace

int cmd_export(const std::vector<std::string>& argv) {
    const Args a = Args::parse(argv, {"--slice", "--dtype", "--nthreads"}, {"--help"});
    if (a.has("--help")) {
        std::cout << kExportHelp;
        return 0;
    }
    if (a.positional.size() != 2) {
        throw ArgError("expected PATH and OUT.npy");
    }
    OpenOptions o;
    o.nthreads = static_cast<int>(a.get_int("--nthreads", 0, 0, 1024));
    o.cache_bytes = 0;  // one pass over the data
    if (a.has("--dtype")) {
        try {
            o.dtype = DType::parse(a.get("--dtype"));
        } catch (const FormatError& e) {
            throw ArgError(std::string("--dtype: ") + e.what());
        }
    }
    const AnyArray arr = AnyArray::open(a.positional[0], o);
    Resolved r;
    try {
        r = resolve(arr.shape(), parse_selection(a.get("--slice")));
    } catch (const UsageError& e) {
        throw ArgError(std::string("--slice: ") + e.what());
    }
    export_npy(arr, r.box, r.shape, a.positional[1]);
    return 0;
}

int cmd_import(const std::vector<std::string>& argv) {
    const Args a = Args::parse(
        argv, {"--codec", "--clevel", "--filters", "--chunks", "--blocks", "--nthreads"},
        {"--sframe", "--overwrite", "--help"});
    if (a.has("--help")) {
        std::cout << kImportHelp;
        return 0;
    }
    if (a.positional.size() != 2) {
        throw ArgError("expected IN.npy and PATH");
    }
    CreateOptions o;
    if (a.has("--codec")) {
        const auto c = codec::parse_codec(a.get("--codec"));
        if (!c) {
            throw ArgError("--codec: unknown codec '" + a.get("--codec") + "'");
        }
        o.compression.codec = *c;
    }
    o.compression.clevel = static_cast<int>(a.get_int("--clevel", 1, 0, 9));
    if (a.has("--filters")) {
        o.compression.filters.clear();
        const std::string list = a.get("--filters");
        std::size_t pos = 0;
        while (pos <= list.size()) {
            std::size_t comma = list.find(',', pos);
            if (comma == std::string::npos) {
                comma = list.size();
            }
            std::string name = list.substr(pos, comma - pos);
            pos = comma + 1;
            std::uint8_t meta = 0;
            const std::size_t colon = name.find(':');
            if (colon != std::string::npos) {
                const std::string m = name.substr(colon + 1);
                name = name.substr(0, colon);
                int v = 0;
                try {
                    v = std::stoi(m);
                } catch (const std::exception&) {
                    throw ArgError("--filters: bad meta '" + m + "' for " + name);
                }
                if (v < -128 || v > 255) {
                    throw ArgError("--filters: meta " + m + " out of range");
                }
                meta = static_cast<std::uint8_t>(v);
            }
            if (name == "none") {
                continue;
            }
            const auto f = codec::parse_filter(name);
            if (!f) {
                throw ArgError("--filters: unknown filter '" + name + "'");
            }
            o.compression.filters.push_back({*f, meta});
        }
        if (o.compression.filters.size() > static_cast<std::size_t>(format::kChunkMaxFilters)) {
            throw ArgError("--filters: at most " + std::to_string(format::kChunkMaxFilters) +
                           " filters");
        }
    }
    if (a.has("--chunks")) {
        o.chunk_shape = a.get_shape("--chunks");
    }
    if (a.has("--blocks")) {
        o.block_shape = a.get_shape("--blocks");
    }
    o.sparse = a.has("--sframe");
    o.overwrite = a.has("--overwrite");
    o.nthreads = static_cast<int>(a.get_int("--nthreads", 0, 0, 1024));
    o.cache_bytes = 0;
    import_npy(a.positional[0], a.positional[1], o);
    return 0;
}

}  // namespace b2nd::cli
