// What 'b2nd convert' and 'b2nd concat' share (copy_args.hpp).
#include "copy_args.hpp"

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
#include "progress.hpp"

namespace b2nd::cli {

const std::vector<std::string> kCopyValues = {"--codec",  "--clevel",   "--filters", "--chunks",
                                              "--blocks", "--nthreads", "--dtype"};
const std::vector<std::string> kCopyFlags = {"--sframe",    "--cframe", "--no-meta",
                                             "--overwrite", "--verify", "--help"};

namespace {

bool ends_with(const std::string& s, const std::string& tail) {
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

}  // namespace

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
    o.max_chunks = max_chunks_setting();
    o.lock_wait_ms = lock_wait_setting();
    return o;
}

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

}  // namespace b2nd::cli
