// b2nd verify PATH
#include <iostream>

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
    "Decodes every chunk and every vlmetalayer, checking each against the array's geometry.\n"
    "Prints 'ok' and exits 0, or names what is corrupt and exits 1.\n"
    "\n"
    "example:\n"
    "  b2nd verify t.b2nd\n";

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
    check_input(path);
    const storage::Frame frame = storage::Frame::open(path);
    for (const auto& name : frame.vlmeta_names()) {
        (void)frame.vlmeta(name);
    }
    AnyArray arr;
    try {
        OpenOptions o;
        o.nthreads = nthreads;
        o.cache_bytes = 0;
        arr = AnyArray::open(path, o);
    } catch (const UnsupportedError&) {
        // Not an array (variable-size chunks): decode chunk by chunk.
    }
    std::int64_t nbytes = 0;
    if (arr) {
        // Chunk by chunk through the array reader, which checks sizes and block layout too.
        const Grid& g = arr.grid();
        ProgressBar bar("verify", g.nchunks(), static_cast<double>(g.chunk_nbytes()));
        std::vector<std::uint8_t> buf;
        for (std::int64_t i = 0; i < g.nchunks(); ++i) {
            const Box b = g.chunk_box(i);
            buf.resize(static_cast<std::size_t>(b.size() * g.itemsize()));
            arr.read(b, buf.data(), buf.size());
            nbytes += static_cast<std::int64_t>(buf.size());
            bar.update(i + 1);
        }
    } else {
        for (std::int64_t i = 0; i < frame.nchunks(); ++i) {
            nbytes += static_cast<std::int64_t>(
                frame.decode_chunk(i, nthreads > 0 ? nthreads : 1).size());
        }
    }
    std::cout << "ok: " << path << ": " << frame.nchunks() << " chunks, " << nbytes
              << " bytes decoded\n";
    return 0;
}

}  // namespace b2nd::cli
