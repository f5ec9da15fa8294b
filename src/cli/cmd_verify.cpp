// b2nd verify PATH
#include <iostream>
#include <optional>

#include <b2nd/any_array.hpp>
#include <b2nd/error.hpp>
#include <b2nd/storage/frame.hpp>

#include "cli.hpp"
#include "progress.hpp"

namespace b2nd::cli {

namespace {

const char* const kHelp =
    "usage: b2nd verify PATH [--nthreads N]\n"
    "\n"
    "Checks the structure of the file (header, chunk index, trailer, metalayers and\n"
    "vlmetalayers) and decodes every chunk, checking each against the array's geometry.\n"
    "Prints 'ok' and exits 0, or lists every corrupt chunk and exits 1.\n"
    "\n"
    "What it cannot see: b2nd files carry no checksums, so a change that leaves a chunk\n"
    "decodable (a flipped bit inside compressed data, often) gives other values without any\n"
    "error; compare with a copy (b2nd diff) to know the values are the same.\n"
    "\n"
    "example:\n"
    "  b2nd verify t.b2nd\n";

const char* const kLimits =
    "structure and decoding checked; this file carries no checksums, so changed values "
    "cannot be detected";

}  // namespace

int cmd_verify(const std::vector<std::string>& argv) {
    const Args a = Args::parse(argv, {"--nthreads"}, {"--help"});
    if (a.has("--help")) {
        std::cout << kHelp;
        return 0;
    }
    if (a.positional.size() != 1) {
        throw ArgError("expected one PATH");
    }
    const std::string path = a.positional[0];
    const int nthreads = static_cast<int>(a.get_int("--nthreads", 0, 0, 1024));
    std::optional<storage::Frame> own;
    AnyArray leaf;
    const storage::Frame& frame = input_frame(path, own, leaf);
    std::vector<std::string> bad;
    for (const auto& name : frame.vlmeta_names()) {
        try {
            (void)frame.vlmeta(name);
        } catch (const Error& e) {
            bad.push_back(e.what());
        }
    }
    AnyArray arr;
    try {
        OpenOptions o;
        o.nthreads = nthreads;
        o.cache_bytes = 0;
        o.raw_objects = true;  // the chunks as stored, whatever object they make
        arr = leaf ? leaf : AnyArray::open(path, o);
    } catch (const UnsupportedError&) {
        // Not an array (variable-size chunks): decode chunk by chunk.
    }
    // Every chunk, whatever the ones before it hold: all corrupt ones are named.
    std::int64_t bad_chunks = 0;
    const std::int64_t n = frame.nchunks();
    {
        ProgressBar bar("verify", n, arr ? static_cast<double>(arr.grid().chunk_nbytes()) : 1.0);
        std::vector<std::uint8_t> buf;
        for (std::int64_t i = 0; i < n; ++i) {
            try {
                if (arr) {
                    const Box b = arr.grid().chunk_box(i);
                    buf.resize(static_cast<std::size_t>(b.size() * arr.itemsize()));
                    arr.read(b, buf.data(), buf.size());
                } else {
                    (void)frame.decode_chunk(i, nthreads > 0 ? nthreads : 1);
                }
            } catch (const Error& e) {
                bad.push_back(e.what());
                ++bad_chunks;
            }
            bar.update(i + 1);
        }
    }
    const std::int64_t nbytes = arr ? arr.nbytes() : frame.header().nbytes;
    const std::int64_t cbytes = arr ? arr.cbytes() : frame.header().cbytes - frame.dead_bytes();
    if (bad.empty()) {
        std::cout << "ok: " << path << ": " << n << " chunks, " << sizes_text(nbytes, cbytes)
                  << "; " << kLimits << "\n";
        return 0;
    }
    for (const std::string& why : bad) {
        std::cout << why << "\n";
    }
    std::cout << "bad: " << path << ": " << bad_chunks << " of " << n << " chunks corrupt"
              << (bad.size() > static_cast<std::size_t>(bad_chunks) ? ", and vlmetalayers" : "")
              << "\n";
    return 1;
}

}  // namespace b2nd::cli
