// The corruption campaign (issue 27): mutants of real frames, each opened and read whole, sorted
// into refused (a b2nd::Error), same data, or silent (other data, no error: what checksums must
// prevent). A crash or another exception ends the run.
//
//   b2nd_mutate corpus DIR [--per-file N] [--seed S] [--threads T]
//       every contiguous frame under DIR (files starting with a frame's magic): the
//       measurement of the issue on files without checksums
//   b2nd_mutate ours [--per-file N] [--seed S] [--threads T] [--require-zero]
//       arrays written here with checksums: every codec and filter (plugins included), both
//       frame kinds; a sparse frame's mutants change one of its files (chunks.b2frame or a chunk)
//
// Mutations, one per mutant, chosen uniformly: 1 to 4 flipped bits, one byte set to a random
// value, or a truncation at a random length. Each mutant is read whole, and --parts N times
// (default 3) in part, each on a fresh handle: a random box (steps 1 to 3), a slice (one index
// along one axis) or 1 to 4 points, compared with the same part of the original. Prints a line
// per group and the totals.
// --only NAME runs one group (as printed); --dump DIR writes the silent mutants of contiguous
// frames there, to replay.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <b2nd/b2nd.hpp>

#include <unistd.h>

namespace fs = std::filesystem;
using namespace b2nd;

namespace {

struct Rng {
    std::uint64_t s;
    std::uint64_t next() {
        std::uint64_t z = (s += 0x9E3779B97F4A7C15ULL);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        return z ^ (z >> 31);
    }
    std::size_t below(std::size_t n) { return n == 0 ? 0 : static_cast<std::size_t>(next() % n); }
};

struct Counts {
    std::uint64_t mutants = 0, refused = 0, same = 0, silent = 0;
    // Partial reads (a box, a slice, points: each on a fresh handle of the mutant).
    std::uint64_t parts = 0, parts_refused = 0, parts_same = 0, parts_silent = 0;
    void add(const Counts& o) {
        mutants += o.mutants;
        refused += o.refused;
        same += o.same;
        silent += o.silent;
        parts += o.parts;
        parts_refused += o.parts_refused;
        parts_same += o.parts_same;
        parts_silent += o.parts_silent;
    }
};

std::vector<std::uint8_t> read_file(const std::string& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_file(const std::string& p, const std::vector<std::uint8_t>& b) {
    std::ofstream(p, std::ios::binary | std::ios::trunc)
        .write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

/// One mutation of `b`, in place.
void mutate(std::vector<std::uint8_t>& b, Rng& rng) {
    if (b.empty()) {
        return;
    }
    switch (rng.below(3)) {
        case 0: {
            const std::size_t flips = 1 + rng.below(4);
            for (std::size_t k = 0; k < flips; ++k) {
                b[rng.below(b.size())] ^= static_cast<std::uint8_t>(1U << rng.below(8));
            }
            break;
        }
        case 1:
            b[rng.below(b.size())] = static_cast<std::uint8_t>(rng.next());
            break;
        default:
            b.resize(rng.below(b.size()));
            break;
    }
}

/// What an array reads as: its description and all its bytes (empty: refused).
struct Content {
    bool ok = false;
    std::string desc;
    std::vector<std::uint8_t> bytes;
    bool operator==(const Content& o) const {
        return ok == o.ok && desc == o.desc && bytes == o.bytes;
    }
};

Content read_array(const std::function<AnyArray()>& open) {
    Content c;
    try {
        const AnyArray a = open();
        c.desc = a.dtype().str() + to_string(a.shape());
        c.bytes = a.read();
        c.ok = true;
    } catch (const Error&) {
        c = Content{};
    }
    return c;
}

/// A partial read: a box (steps 1 to 3), a slice (one index along one axis), or a few points.
struct Part {
    enum Kind { box, slice, points } kind = box;
    Box region;
    std::vector<std::int64_t> coords;  // points: ndim per point
};

/// A random partial read of an array of `shape`.
Part random_part(const Shape& shape, Rng& rng) {
    Part p;
    const auto nd = shape.size();
    p.kind = static_cast<Part::Kind>(rng.below(3));
    if (nd == 0) {
        p.kind = Part::box;  // a scalar: the one element (points need coordinates)
    }
    if (p.kind == Part::points) {
        const std::size_t n = 1 + rng.below(4);
        for (std::size_t k = 0; k < n; ++k) {
            for (std::size_t d = 0; d < nd; ++d) {
                p.coords.push_back(static_cast<std::int64_t>(
                    rng.below(static_cast<std::size_t>(std::max<std::int64_t>(shape[d], 1)))));
            }
        }
        return p;
    }
    const std::size_t axis = rng.below(nd);
    for (std::size_t d = 0; d < nd; ++d) {
        const auto n = static_cast<std::size_t>(std::max<std::int64_t>(shape[d], 1));
        if (p.kind == Part::slice) {
            const bool one = d == axis;
            p.region.start.push_back(one ? static_cast<std::int64_t>(rng.below(n)) : 0);
            p.region.count.push_back(one ? 1 : shape[d]);
            p.region.step.push_back(1);
            continue;
        }
        const auto step = static_cast<std::int64_t>(1 + rng.below(3));
        const auto start = static_cast<std::int64_t>(rng.below(n));
        const std::int64_t room = (shape[d] - start + step - 1) / step;
        p.region.start.push_back(start);
        p.region.count.push_back(
            1 + static_cast<std::int64_t>(rng.below(static_cast<std::size_t>(room))));
        p.region.step.push_back(step);
    }
    return p;
}

/// What `p` reads from an array of `shape` whose bytes (C order) are `all`.
std::vector<std::uint8_t> expected_part(const Part& p,
                                        const Shape& shape,
                                        std::size_t itemsize,
                                        const std::vector<std::uint8_t>& all) {
    std::vector<std::uint8_t> out;
    const auto nd = shape.size();
    const auto at = [&](const std::int64_t* idx) {
        std::int64_t off = 0;
        for (std::size_t d = 0; d < nd; ++d) {
            off = off * shape[d] + idx[d];
        }
        const auto* b = all.data() + static_cast<std::size_t>(off) * itemsize;
        out.insert(out.end(), b, b + itemsize);
    };
    if (p.kind == Part::points) {
        for (std::size_t k = 0; k < p.coords.size(); k += nd) {
            at(p.coords.data() + k);
        }
        return out;
    }
    std::vector<std::int64_t> i(nd, 0), idx(nd);
    for (bool more = true; more;) {
        for (std::size_t d = 0; d < nd; ++d) {
            idx[d] = p.region.start[d] + i[d] * p.region.step[d];
        }
        at(idx.data());
        more = false;
        for (std::size_t d = nd; d-- > 0;) {
            if (++i[d] < p.region.count[d]) {
                more = true;
                break;
            }
            i[d] = 0;
        }
    }
    return out;
}

/// `p` read from the array `open` opens (empty, ok false: refused).
Content read_part(const std::function<AnyArray()>& open, const Part& p) {
    Content c;
    try {
        const AnyArray a = open();
        c.desc = a.dtype().str() + to_string(a.shape());
        if (p.kind == Part::points) {
            if (a.shape().empty()) {
                c.ok = true;  // the mutant reads as a scalar: other data (its description)
                return c;
            }
            const std::size_t n = p.coords.size() / a.shape().size();
            c.bytes.resize(n * static_cast<std::size_t>(a.dtype().itemsize()));
            a.read_points(p.coords.data(), n, c.bytes.data());
        } else {
            c.bytes = a.read(p.region);
        }
        c.ok = true;
    } catch (const Error&) {
        c = Content{};
    }
    return c;
}

OpenOptions read_options() {
    OpenOptions o;
    o.nthreads = 1;
    o.cache_bytes = 0;
    o.locking = false;
    o.raw_objects = true;
    return o;
}

Content read_buffer(const std::vector<std::uint8_t>& b) {
    return read_array([&] { return AnyArray::open_buffer({b.data(), b.size()}, read_options()); });
}

Content read_path(const std::string& p) {
    return read_array([&] { return AnyArray::open(p, read_options()); });
}

void classify(const Content& got, const Content& want, Counts& c) {
    ++c.mutants;
    if (!got.ok) {
        ++c.refused;
    } else if (got == want) {
        ++c.same;
    } else {
        ++c.silent;
    }
}

/// Partial reads per mutant (--parts N).
std::size_t g_parts = 3;

/// g_parts random partial reads of a mutant, each on a fresh handle, against the original.
void classify_parts(const std::function<AnyArray()>& open,
                    const Content& want,
                    const Shape& shape,
                    std::size_t itemsize,
                    Rng& rng,
                    Counts& c) {
    if (std::find(shape.begin(), shape.end(), 0) != shape.end()) {
        return;  // no element to read in part
    }
    for (std::size_t k = 0; k < g_parts; ++k) {
        const Part p = random_part(shape, rng);
        const Content got = read_part(open, p);
        ++c.parts;
        if (!got.ok) {
            ++c.parts_refused;
        } else if (got.desc == want.desc &&
                   got.bytes == expected_part(p, shape, itemsize, want.bytes)) {
            ++c.parts_same;
        } else {
            ++c.parts_silent;
        }
    }
}

/// Where silent mutants are written (--dump DIR), empty for nowhere.
std::string g_dump;

/// Mutants of a contiguous frame, read from memory.
Counts mutate_buffer(const std::vector<std::uint8_t>& file,
                     std::size_t n,
                     std::uint64_t seed,
                     const std::string& name) {
    Counts c;
    const Content want = read_buffer(file);
    if (!want.ok) {
        return c;  // not an array this build reads (a store, an object kind): skipped
    }
    Rng rng{seed};
    std::vector<std::uint8_t> m;
    const AnyArray original = AnyArray::open_buffer({file.data(), file.size()}, read_options());
    const Shape shape = original.shape();
    const auto itemsize = static_cast<std::size_t>(original.dtype().itemsize());
    for (std::size_t k = 0; k < n; ++k) {
        m = file;
        mutate(m, rng);
        const std::uint64_t silent = c.silent + c.parts_silent;
        classify_parts(
            [&] {
                return AnyArray::open_buffer({m.data(), m.size()}, read_options());
            },
            want, shape, itemsize, rng, c);
        classify(read_buffer(m), want, c);
        if (c.silent + c.parts_silent != silent && !g_dump.empty()) {
            std::string base = name;
            std::replace(base.begin(), base.end(), '/', '_');
            write_file(g_dump + "/" + base + "-" + std::to_string(k) + ".b2nd", m);
            write_file(g_dump + "/" + base + ".original.b2nd", file);
        }
    }
    return c;
}

/// Mutants of a sparse frame: each changes one of its files, on disk, and restores it.
Counts mutate_sparse(const std::string& dir, std::size_t n, std::uint64_t seed) {
    Counts c;
    const Content want = read_path(dir);
    if (!want.ok) {
        return c;
    }
    std::vector<std::string> files;
    for (const auto& e : fs::directory_iterator(dir)) {
        const std::string name = e.path().filename().string();
        if (name == "chunks.b2frame" || e.path().extension() == ".chunk") {
            files.push_back(e.path().string());
        }
    }
    std::sort(files.begin(), files.end());
    Rng rng{seed};
    const AnyArray original = AnyArray::open(dir, read_options());
    const Shape shape = original.shape();
    const auto itemsize = static_cast<std::size_t>(original.dtype().itemsize());
    for (std::size_t k = 0; k < n; ++k) {
        const std::string& f = files[rng.below(files.size())];
        const std::vector<std::uint8_t> orig = read_file(f);
        std::vector<std::uint8_t> m = orig;
        mutate(m, rng);
        write_file(f, m);
        classify_parts([&] { return AnyArray::open(dir, read_options()); }, want, shape, itemsize,
                       rng, c);
        classify(read_path(dir), want, c);
        write_file(f, orig);
    }
    return c;
}

bool is_frame_file(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    char head[9] = {};
    in.read(head, 9);
    return in.gcount() == 9 && std::memcmp(head + 1,
                                           "\xa8"
                                           "b2frame",
                                           8) == 0;
}

struct Group {
    std::string name;
    std::string path;  // a contiguous frame file, or a sparse frame directory
    bool sparse = false;
};

/// The arrays `ours` writes: every codec and filter, contiguous and sparse, with checksums.
std::vector<Group> write_ours(const std::string& dir) {
    struct Kind {
        const char* name;
        const char* dtype;
        CompressionParams c;
        Shape shape = {24, 20}, chunks = {8, 20}, blocks = {4, 10};
    };
    std::vector<Kind> kinds = {
        {"blosclz-nofilter", "<i4", {Codec::blosclz, 5, {}}},
        {"blosclz-shuffle", "<f4", {Codec::blosclz, 5, {{Filter::shuffle, 0}}}},
        {"lz4-bitshuffle", "<f8", {Codec::lz4, 5, {{Filter::bitshuffle, 0}}}},
        {"lz4hc-delta", "<i8", {Codec::lz4hc, 5, {{Filter::shuffle, 0}, {Filter::delta, 0}}}},
        {"zlib", "<f4", {Codec::zlib, 5, {{Filter::shuffle, 0}}}},
        {"zstd-default", "<f4", {}},
        {"zstd-truncprec",
         "<f8",
         {Codec::zstd, 3, {{Filter::trunc_prec, 20}, {Filter::shuffle, 0}}}},
        {"zstd-bytedelta", "<f4", {Codec::zstd, 3, {{Filter::shuffle, 0}, {Filter::bytedelta, 0}}}},
        {"memcpy", "<i2", {Codec::blosclz, 0, {}}},
        {"ndlz", "|u1", CompressionParams::ndlz(4)},
        {"ndcell", "<f4", {Codec::zstd, 5, {{Filter::ndcell, 4}}}},
        {"ndmean", "<f4", {Codec::zstd, 5, {{Filter::ndmean, 4}}}},
        {"int_trunc", "<i4", {Codec::lz4, 5, {{Filter::int_trunc, 4}}}},
        // Blocks of 16 and 32 KiB: a read of their first rows checks their decoded pieces.
        {"pieces-lz4-shuffle",
         "<f4",
         {Codec::lz4, 5, {{Filter::shuffle, 0}}},
         {16, 2048},
         {8, 2048},
         {4, 2048}},
        {"pieces-blosclz", "<i4", {Codec::blosclz, 5, {}}, {16, 2048}, {8, 2048}, {2, 2048}},
        {"pieces-memcpy", "<i2", {Codec::blosclz, 0, {}}, {16, 2048}, {8, 2048}, {4, 2048}},
#ifdef B2ND_MUTATE_ZFP
        {"zfp-accuracy", "<f4", CompressionParams::zfp_accuracy(-3)},
        {"zfp-precision", "<f8", CompressionParams::zfp_precision(20)},
        {"zfp-rate", "<f4", CompressionParams::zfp_rate(50)},
#endif
    };
    std::vector<Group> out;
    for (const Kind& k : kinds) {
        for (const bool sparse : {false, true}) {
            const DType dt = DType::parse(k.dtype);
            const Shape& shape = k.shape;
            std::vector<std::uint8_t> data(
                static_cast<std::size_t>(shape[0] * shape[1] * dt.itemsize()));
            for (std::size_t i = 0; i < data.size() / static_cast<std::size_t>(dt.itemsize());
                 ++i) {
                const double v = std::sin(static_cast<double>(i) / 17.0) * 100.0;
                std::uint8_t* p = data.data() + i * static_cast<std::size_t>(dt.itemsize());
                if (dt.str() == "<f4") {
                    const auto f = static_cast<float>(v);
                    std::memcpy(p, &f, 4);
                } else if (dt.str() == "<f8") {
                    std::memcpy(p, &v, 8);
                } else {
                    const auto x = static_cast<std::int64_t>(v);
                    std::memcpy(p, &x, static_cast<std::size_t>(dt.itemsize()));
                }
            }
            CreateOptions o;
            o.chunk_shape = k.chunks;
            o.block_shape = k.blocks;
            o.compression = k.c;
            o.sparse = sparse;
            o.locking = false;
            o.metalayers = {{"units", {0xa1, 'm'}}};
            const std::string path = dir + "/" + k.name + (sparse ? ".b2frame" : ".b2nd");
            {
                AnyArray a = AnyArray::create_from(path, dt, shape, {data.data(), data.size()}, o);
                a.set_vlmeta("note", std::vector<std::uint8_t>{0xa2, 'o', 'k'});
            }
            out.push_back({std::string(k.name) + (sparse ? " (sparse)" : ""), path, sparse});
        }
    }
    return out;
}

int usage() {
    std::fprintf(stderr,
                 "usage: b2nd_mutate corpus DIR [--per-file N] [--seed S] [--threads T]\n"
                 "       b2nd_mutate ours [--per-file N] [--seed S] [--threads T] "
                 "[--require-zero]\n"
                 "       (both: [--only NAME] [--dump DIR] [--parts N])\n");
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        return usage();
    }
    const std::string mode = argv[1];
    std::string dir;
    std::size_t per_file = 4000;
    std::uint64_t seed = 1;
    unsigned threads = std::max(1U, std::thread::hardware_concurrency());
    bool require_zero = false;
    std::string only;  // --only NAME: one group
    int i = 2;
    if (mode == "corpus") {
        if (argc < 3) {
            return usage();
        }
        dir = argv[2];
        i = 3;
    } else if (mode != "ours") {
        return usage();
    }
    for (; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--per-file" && i + 1 < argc) {
            per_file = std::strtoull(argv[++i], nullptr, 10);
        } else if (a == "--seed" && i + 1 < argc) {
            seed = std::strtoull(argv[++i], nullptr, 10);
        } else if (a == "--threads" && i + 1 < argc) {
            threads = static_cast<unsigned>(std::strtoul(argv[++i], nullptr, 10));
        } else if (a == "--only" && i + 1 < argc) {
            only = argv[++i];
        } else if (a == "--dump" && i + 1 < argc) {
            g_dump = argv[++i];
            fs::create_directories(g_dump);
        } else if (a == "--parts" && i + 1 < argc) {
            g_parts = std::strtoull(argv[++i], nullptr, 10);
        } else if (a == "--require-zero") {
            require_zero = true;
        } else {
            return usage();
        }
    }

    std::vector<Group> groups;
    std::string scratch;
    if (mode == "corpus") {
        for (auto it = fs::recursive_directory_iterator(dir);
             it != fs::recursive_directory_iterator(); ++it) {
            if (it->is_directory() && fs::exists(it->path() / "chunks.b2frame")) {
                it.disable_recursion_pending();  // sparse frames: not this measurement
            } else if (it->is_regular_file() && is_frame_file(it->path())) {
                groups.push_back(
                    {fs::relative(it->path(), dir).string(), it->path().string(), false});
            }
        }
    } else {
        scratch =
            (fs::temp_directory_path() / ("b2nd-mutate-" + std::to_string(::getpid()))).string();
        fs::create_directories(scratch);
        groups = write_ours(scratch);
    }
    std::sort(groups.begin(), groups.end(),
              [](const Group& a, const Group& b) { return a.name < b.name; });

    std::vector<Counts> counts(groups.size());
    std::atomic<std::size_t> next{0};
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < std::max(1U, threads); ++t) {
        pool.emplace_back([&] {
            for (std::size_t g; (g = next++) < groups.size();) {
                const Group& gr = groups[g];
                if (!only.empty() && gr.name != only) {
                    continue;
                }
                counts[g] = gr.sparse
                                ? mutate_sparse(gr.path, per_file, seed + g)
                                : mutate_buffer(read_file(gr.path), per_file, seed + g, gr.name);
            }
        });
    }
    for (std::thread& t : pool) {
        t.join();
    }
    Counts total;
    std::size_t used = 0;
    std::printf("%-40s %8s %8s %8s %6s | %8s %8s %8s %6s\n", "file", "mutants", "refused", "same",
                "silent", "partial", "refused", "same", "silent");
    for (std::size_t g = 0; g < groups.size(); ++g) {
        const Counts& c = counts[g];
        if (c.mutants == 0) {
            continue;
        }
        ++used;
        total.add(c);
        std::printf(
            "%-40s %8llu %8llu %8llu %6llu | %8llu %8llu %8llu %6llu\n", groups[g].name.c_str(),
            static_cast<unsigned long long>(c.mutants), static_cast<unsigned long long>(c.refused),
            static_cast<unsigned long long>(c.same), static_cast<unsigned long long>(c.silent),
            static_cast<unsigned long long>(c.parts),
            static_cast<unsigned long long>(c.parts_refused),
            static_cast<unsigned long long>(c.parts_same),
            static_cast<unsigned long long>(c.parts_silent));
    }
    std::printf(
        "total: %zu arrays, %llu mutants: %llu refused, %llu same data, %llu silent "
        "(%.2f%%)\n",
        used, static_cast<unsigned long long>(total.mutants),
        static_cast<unsigned long long>(total.refused), static_cast<unsigned long long>(total.same),
        static_cast<unsigned long long>(total.silent),
        total.mutants == 0
            ? 0.0
            : 100.0 * static_cast<double>(total.silent) / static_cast<double>(total.mutants));
    std::printf(
        "partial reads: %llu (box, slice or points, each on a fresh handle): %llu "
        "refused, %llu same data, %llu silent\n",
        static_cast<unsigned long long>(total.parts),
        static_cast<unsigned long long>(total.parts_refused),
        static_cast<unsigned long long>(total.parts_same),
        static_cast<unsigned long long>(total.parts_silent));
    if (!scratch.empty()) {
        fs::remove_all(scratch);
    }
    return require_zero && total.silent + total.parts_silent > 0 ? 1 : 0;
}
