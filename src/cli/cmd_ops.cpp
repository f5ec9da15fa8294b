// b2nd convert / b2nd compact / b2nd concat
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include <b2nd/any_array.hpp>
#include <b2nd/error.hpp>
#include <b2nd/ops.hpp>
#include <b2nd/storage/frame.hpp>

#include "cli.hpp"
#include "progress.hpp"

namespace b2nd::cli {

namespace {

const char* const kConvertHelp =
    "usage: b2nd convert IN OUT [options]\n"
    "\n"
    "Writes a copy of the b2nd array IN at OUT with other compression, chunks, blocks or frame\n"
    "kind; everything not given stays as in IN. Chunks whose geometry and compression do not\n"
    "change are copied as stored, without decoding. OUT appears only once it is complete.\n"
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

const char* const kCompactHelp =
    "usage: b2nd compact PATH\n"
    "\n"
    "Rewrites a contiguous frame without the space that updates left behind (replaced chunks,\n"
    "old indexes), under a temporary name renamed over PATH. Readers that have PATH open keep\n"
    "reading the old file. Sparse frames have no dead space to remove.\n"
    "\n"
    "example:\n"
    "  b2nd compact t.b2nd\n";

const char* const kConcatHelp =
    "usage: b2nd concat OUT IN... [--axis N] [--stack] [options]\n"
    "\n"
    "Writes the arrays IN... joined along axis N (default 0; negative counts from the end), as\n"
    "numpy.concatenate, or with --stack along a new axis N, as numpy.stack. They must have one\n"
    "dtype, and equal extents on the other axes. Chunks, blocks, compression and frame kind are\n"
    "the first input's unless given; chunks of the inputs that line up with the result's are\n"
    "copied as stored.\n"
    "\n"
    "  --codec, --clevel, --filters, --chunks, --blocks, --sframe, --cframe, --no-meta,\n"
    "  --verify, --overwrite, --nthreads   as for 'b2nd convert'\n"
    "\n"
    "example:\n"
    "  b2nd concat year.b2nd jan.b2nd feb.b2nd mar.b2nd --axis 0\n";

const std::vector<std::string> kCopyValues = {"--codec",  "--clevel",   "--filters", "--chunks",
                                              "--blocks", "--nthreads", "--dtype"};
const std::vector<std::string> kCopyFlags = {"--sframe",    "--cframe", "--no-meta",
                                             "--overwrite", "--verify", "--help"};

std::int64_t disk_bytes(const std::string& path) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (fs::is_directory(path, ec)) {
        std::int64_t n = 0;
        for (const auto& e : fs::recursive_directory_iterator(path, ec)) {
            if (e.is_regular_file(ec)) {
                n += static_cast<std::int64_t>(e.file_size(ec));
            }
        }
        return n;
    }
    const auto n = fs::file_size(path, ec);
    return ec ? 0 : static_cast<std::int64_t>(n);
}

bool ends_with(const std::string& s, const std::string& tail) {
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

/// The CopyOptions the command line asks for (sources' settings where nothing is given). The
/// frame kind is --sframe or --cframe, else OUT's extension (.b2frame: sparse, .b2nd: contiguous),
/// else the first source's.
CopyOptions copy_options(const Args& a, const AnyArray& first, const std::string& out) {
    CopyOptions o;
    CompressionParams c = first.compression();
    if (apply_compression_options(a, c)) {
        o.compression = c;
    }
    if (a.has("--chunks")) {
        o.chunk_shape = a.get_shape("--chunks");
    }
    if (a.has("--blocks")) {
        o.block_shape = a.get_shape("--blocks");
    }
    if (a.has("--sframe") && a.has("--cframe")) {
        throw ArgError("give one of --sframe and --cframe");
    }
    if (a.has("--sframe") || a.has("--cframe")) {
        o.sparse = a.has("--sframe");
    } else if (ends_with(out, ".b2frame") || ends_with(out, ".b2frame/")) {
        o.sparse = true;
    } else if (ends_with(out, ".b2nd")) {
        o.sparse = false;
    }
    o.metadata = !a.has("--no-meta");
    o.verify = a.has("--verify");
    o.overwrite = a.has("--overwrite");
    o.nthreads = static_cast<int>(a.get_int("--nthreads", 0, 0, 1024));
    return o;
}

/// Runs `op` with a progress bar over the result's chunks and prints what was written.
int run_copy(const char* label,
             const std::string& out,
             CopyOptions o,
             std::int64_t chunk_bytes,
             const std::function<AnyArray(const CopyOptions&)>& op) {
    CopyStats st;
    o.stats = &st;
    const auto t0 = std::chrono::steady_clock::now();
    AnyArray r;
    {
        std::unique_ptr<ProgressBar> bar;
        o.progress = [&](std::int64_t done, std::int64_t total) {
            if (!bar) {
                bar = std::make_unique<ProgressBar>(label, total, static_cast<double>(chunk_bytes));
            }
            bar->update(done);
        };
        r = op(o);
    }
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    char took[32];
    std::snprintf(took, sizeof took, "%.2f s", secs);
    std::cout << out << ": " << to_string(r.shape()) << " " << r.dtype().str() << ", "
              << (r.sparse() ? "sparse frame" : "contiguous frame") << ", " << st.chunks
              << " chunks (" << st.copied << " copied as stored, " << st.encoded << " encoded), "
              << sizes_text(r.nbytes(), r.cbytes()) << ", " << took << "\n";
    return 0;
}

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
    check_output(a.positional[1], {a.positional[0]}, a.has("--overwrite"));
    const AnyArray in = open_input(a.positional[0], input_options(a));
    const CopyOptions o = copy_options(a, in, a.positional[1]);
    return run_copy("convert", a.positional[1], o, in.grid().chunk_nbytes(),
                    [&](const CopyOptions& co) { return copy(in, a.positional[1], co); });
}

int cmd_concat(const std::vector<std::string>& argv) {
    std::vector<std::string> values = kCopyValues;
    values.push_back("--axis");
    std::vector<std::string> flags = kCopyFlags;
    flags.push_back("--stack");
    const Args a = Args::parse(argv, values, flags);
    if (a.has("--help")) {
        std::cout << kConcatHelp;
        return 0;
    }
    if (a.positional.size() < 2) {
        throw ArgError("expected OUT and at least one IN");
    }
    const OpenOptions io = input_options(a);
    check_output(a.positional[0], {a.positional.begin() + 1, a.positional.end()},
                 a.has("--overwrite"));
    std::vector<AnyArray> ins;
    for (std::size_t i = 1; i < a.positional.size(); ++i) {
        ins.push_back(open_input(a.positional[i], io));
    }
    const auto axis = static_cast<int>(a.get_int("--axis", 0, -64, 64));
    const std::string& out = a.positional[0];
    const CopyOptions o = copy_options(a, ins.front(), out);
    const bool stacked = a.has("--stack");
    const std::int64_t chunk_bytes = ins.front().grid().chunk_nbytes();
    return run_copy(stacked ? "stack" : "concat", out, o, chunk_bytes, [&](const CopyOptions& co) {
        return stacked ? stack(ins, axis, out, co) : concatenate(ins, axis, out, co);
    });
}

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
    OpenOptions o;
    o.writable = true;
    o.cache_bytes = 0;
    o.auto_compact = false;
    AnyArray arr = open_input(path, o);
    const std::int64_t before = disk_bytes(path);
    const std::int64_t dead = arr.frame().dead_bytes();
    if (arr.sparse() || dead == 0) {
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
