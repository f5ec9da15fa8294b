// Array benchmark: the arrays and workloads of ../shared/BENCHMARKS.md (f32cube with zstd 1, lz4 5
// and blosclz 5 + SHUFFLE; i64grid with zstd 5 + BITSHUFFLE), with 1 and 2 threads: whole-array
// read, hyperplane slices along every axis, random single elements (cold and warm block cache),
// random 16-edge boxes, and writing the whole array. Throughput is GB/s of uncompressed data.
//
// When built against c-blosc2 (B2ND_HAVE_BLOSC2), c-blosc2 writes each array too (timed), and both
// libraries then read the file c-blosc2 wrote; the last column is c-blosc2's time over ours.
//
// --zfp runs the lossy arrays instead: the same f32cube with ZFP accuracy 1e-2 and precision 14
// (no filter), decoded by both libraries through the same libzfp.
//
// --checksums [RUNS] measures what verifying checksums costs instead (array_checksums.hpp);
// --slice-processes [PAIRS] what it costs a process that reads one slice and exits
// (array_slice_processes.hpp); --cache [RUNS] what the block cache costs reads that use a block
// once and saves sweeps (array_cache.hpp).
//
//   build-bench/bench/bench_array [--quick] [--dir DIR] [--array NAME | --zfp]
//                                 [--no-copy | --copy-only | --checksums [RUNS] | --cache [RUNS]]
#include "array_blosc2.hpp"
#include "array_cache.hpp"
#include "array_checksums.hpp"
#include "array_limits.hpp"
#include "array_slice_processes.hpp"
#include "array_workloads.hpp"

using namespace b2nd::bench::array;

namespace {

/// Copies of the array file at `src` (BENCHMARKS.md's "write" side of a conversion): chunks kept
/// as stored into a sparse frame, re-encoded with LZ4 5 (same geometry), and re-chunked to half
/// the chunk edge; against c-blosc2's b2nd_copy doing the same (it copies chunks as stored when
/// the shapes and cparams are equal, like us). Bytes counted: the uncompressed array.
void bench_copy(const Spec& s, const std::string& src, const std::string& dir, double nbytes) {
    struct Variant {
        const char* name;
        bool sparse;
        b2nd::Codec codec;
        int clevel;
        bool rechunk;
    };
    const Variant variants[] = {{"copy as stored (sframe)", true, s.codec, s.clevel, false},
                                {"copy to lz4 5", false, b2nd::Codec::lz4, 5, false},
                                {"copy re-chunked", false, s.codec, s.clevel, true}};
    for (const Variant& v : variants) {
        for (int threads : {1, 2}) {
            b2nd::OpenOptions oo;
            oo.nthreads = threads;
            oo.cache_bytes = 0;
            const b2nd::AnyArray a = b2nd::AnyArray::open(src, oo);
            b2nd::CopyOptions o;
            o.overwrite = true;
            o.sparse = v.sparse;
            o.nthreads = threads;
            o.compression = b2nd::CompressionParams{v.codec, v.clevel, {{s.filter, 0}}};
            Shape chunks = s.chunks, blocks = s.blocks;
            if (v.rechunk) {
                for (std::size_t d = 0; d < chunks.size(); ++d) {
                    chunks[d] /= 2;
                    blocks[d] = std::min(blocks[d], chunks[d]);
                }
                o.chunk_shape = chunks;
                o.block_shape = blocks;
            }
            const std::string dst = dir + "/copy" + (v.sparse ? ".b2frame" : ".b2nd");
            const double ours = best_seconds([&] { b2nd::copy(a, dst, o); });
            double theirs = 0;
#if defined(B2ND_HAVE_BLOSC2)
            const std::string cdst = dir + "/copy.c-blosc2" + (v.sparse ? ".b2frame" : ".b2nd");
            const Blosc2Array c(src, threads);
            theirs = best_seconds([&] {
                std::filesystem::remove_all(cdst);
                const Blosc2Context ctx(s, v.codec, v.clevel, c.arr->sc->typesize, threads, cdst,
                                        !v.sparse, chunks, blocks);
                b2nd_array_t* out = nullptr;
                if (b2nd_copy(ctx.get(), c.arr, &out) < 0) {
                    std::fprintf(stderr, "c-blosc2 b2nd_copy failed\n");
                    std::exit(1);
                }
                b2nd_free(out);
            });
#endif
            row(s.name, v.name, threads, ours, nbytes, theirs);
        }
    }
}

void bench_array(const Spec& s,
                 const std::vector<std::uint8_t>& data,
                 const std::string& dir,
                 int npoints) {
    const b2nd::DType dt = b2nd::DType::parse(s.dtype);
    const double nbytes = static_cast<double>(data.size());
    const std::string ours_path = dir + "/" + s.name + ".ours.b2nd";
    std::string read_path = ours_path;
    std::printf("\n%s: %s %s, chunks %s, blocks %s, %s %d + %s\n", s.name.c_str(), s.dtype.c_str(),
                b2nd::to_string(s.shape).c_str(), b2nd::to_string(s.chunks).c_str(),
                b2nd::to_string(s.blocks).c_str(),
                std::string(b2nd::codec::codec_name(s.codec)).c_str(), s.clevel,
                b2nd::codec::filter_name(static_cast<std::uint8_t>(s.filter)).c_str());

    // write: durable (fsynced, our default), and not (as c-blosc2 writes)
    double write_time[2] = {0, 0}, write_theirs[2] = {0, 0}, write_no_sync[2] = {0, 0};
    for (int threads : {1, 2}) {
        b2nd::CreateOptions o;
        o.chunk_shape = s.chunks;
        o.block_shape = s.blocks;
        o.compression.codec = s.codec;
        o.compression.codec_meta = static_cast<std::uint8_t>(s.codec_meta);
        o.compression.clevel = s.clevel;
        o.compression.filters = {{s.filter, 0}};
        o.nthreads = threads;
        o.overwrite = true;
        o.cache_bytes = 0;
        const double ours = best_seconds([&] {
            b2nd::AnyArray::create_from(ours_path, dt, s.shape, {data.data(), data.size()}, o);
        });
        o.durable = false;
        write_no_sync[threads - 1] = best_seconds([&] {
            b2nd::AnyArray::create_from(ours_path, dt, s.shape, {data.data(), data.size()}, o);
        });
        double theirs = 0;
#if defined(B2ND_HAVE_BLOSC2)
        read_path = dir + "/" + s.name + ".c-blosc2.b2nd";
        theirs = blosc2_write(s, data, read_path, threads, dt.itemsize());
#endif
        write_time[threads - 1] = ours;
        write_theirs[threads - 1] = theirs;
    }
    {
        const b2nd::Grid grid = b2nd::AnyArray::open(ours_path).grid();
        const double limit = encode_limit(ours_path, grid, s);
        for (int threads : {1, 2}) {
            g_limit = limit;
            row(s.name, "write", threads, write_time[threads - 1], nbytes,
                write_theirs[threads - 1]);
            g_limit = limit;
            row(s.name, "write, no fsync", threads, write_no_sync[threads - 1], nbytes,
                write_theirs[threads - 1]);
        }
        // The codec limit above at 2 threads is half the one-thread encoding; what two threads
        // encoding at once take here, measured:
        const double limit2 = encode_limit(ours_path, grid, s, 2);
        std::printf(
            "%-16s encode on 2 threads %.1f ms (%.0f%% of half the one-thread time); the 2-thread "
            "writes take %.0f%% (fsynced) and %.0f%% (not) of it\n",
            s.name.c_str(), limit2 * 1e3, 100.0 * limit / 2 / limit2,
            100.0 * limit2 / write_time[1], 100.0 * limit2 / write_no_sync[1]);
        // A plain writer: each chunk handed to the kernel as it is made, into a new file that then
        // replaces the last one (fresh page-cache pages are much of a write's cost on a VM).
        const double plain2 = encode_limit(ours_path, grid, s, 2, dir + "/plain-write.bin");
        std::printf(
            "%-16s plain writer on 2 threads (encode + pwrite, no fsync) %.1f ms; the 2-thread "
            "writes take %.2fx (fsynced) and %.2fx (not) its time\n",
            s.name.c_str(), plain2 * 1e3, write_time[1] / plain2, write_no_sync[1] / plain2);
        // What a write cannot go below on one core: encoding every chunk, then handing the
        // compressed bytes to the kernel (which, for a new file, takes and fills fresh pages).
        std::vector<std::uint8_t> file;
        {
            std::ifstream in(ours_path, std::ios::binary);
            file.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
        }
        const double put = file_write_seconds(dir, file);
        std::printf(
            "%-16s write floor, 1 thread: encode %.1f ms + writing the file %.1f ms = "
            "%.1f ms (ours: %.0f%% of it)\n",
            s.name.c_str(), limit * 1e3, put * 1e3, (limit + put) * 1e3,
            100.0 * (limit + put) / write_time[0]);
    }
    {
        const b2nd::AnyArray a = b2nd::AnyArray::open(ours_path);
        std::printf("%-16s ratio %.2f (ours)", s.name.c_str(),
                    nbytes / static_cast<double>(a.cbytes()));
#if defined(B2ND_HAVE_BLOSC2)
        const b2nd::AnyArray c = b2nd::AnyArray::open(read_path);
        std::printf(", %.2f (c-blosc2); reads below use the file c-blosc2 wrote",
                    nbytes / static_cast<double>(c.cbytes()));
#endif
        std::printf("\n");
    }

    if (g_copy_only) {
        bench_copy(s, read_path, dir, nbytes);
        return;
    }
    const Requests req = make_requests(s.shape, npoints);
    std::vector<std::uint8_t> out(data.size());
    // What reads must give: the data, or for a lossy codec what c-blosc2 decodes from the file
    // (without c-blosc2, our own first read).
    std::vector<std::uint8_t> decoded;
    const bool lossy = !b2nd::codec::is_builtin(s.codec);
    if (lossy) {
        decoded.resize(data.size());
#if defined(B2ND_HAVE_BLOSC2)
        const Blosc2Array ref(read_path, 2);
        b2nd_to_cbuffer(ref.arr, decoded.data(), static_cast<std::int64_t>(decoded.size()));
#else
        b2nd::AnyArray::open(read_path).read(Box::whole(s.shape), decoded.data(), decoded.size());
#endif
    }
    const std::vector<std::uint8_t>& want = lossy ? decoded : data;
    for (int threads : {1, 2}) {
        b2nd::OpenOptions oo;
        oo.nthreads = threads;
        oo.cache_bytes = 0;
        // full, the file not in the page cache (dropped before each run; the array is opened
        // in the timed run, and before any other handle maps it: mapped pages cannot be dropped)
        const auto cold_run = [&](const std::function<void()>& fn) {
            double best = 1e30;
            for (int rep = 0; rep < 3; ++rep) {
                drop_from_page_cache(read_path);
                const auto t0 = Clock::now();
                fn();
                best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count());
            }
            return best;
        };
        const double cold_full = cold_run([&] {
            const b2nd::AnyArray fresh = b2nd::AnyArray::open(read_path, oo);
            fresh.read(Box::whole(s.shape), out.data(), out.size());
        });
        double cold_full_c = 0;
#if defined(B2ND_HAVE_BLOSC2)
        cold_full_c = cold_run([&] {
            const Blosc2Array fresh(read_path, threads);
            b2nd_to_cbuffer(fresh.arr, out.data(), static_cast<std::int64_t>(out.size()));
        });
#endif
        row(s.name, "full, cold page cache", threads, cold_full, nbytes, cold_full_c);
        b2nd::AnyArray a = b2nd::AnyArray::open(read_path, oo);
#if defined(B2ND_HAVE_BLOSC2)
        const Blosc2Array c(read_path, threads);
#endif
        CodecLimit limit(read_path, a.grid());
        // full
        g_limit = limit.seconds({Box::whole(s.shape)});
        const double full =
            best_seconds([&] { a.read(Box::whole(s.shape), out.data(), out.size()); });
        if (std::memcmp(out.data(), want.data(), want.size()) != 0) {
            std::fprintf(stderr, "%s: full read differs from the data\n", s.name.c_str());
            std::exit(1);
        }
        double full_c = 0;
#if defined(B2ND_HAVE_BLOSC2)
        full_c = best_seconds(
            [&] { b2nd_to_cbuffer(c.arr, out.data(), static_cast<std::int64_t>(out.size())); });
#endif
        const double codec_full = g_limit;
        row(s.name, "full", threads, full, nbytes, full_c);
        if (threads == 1) {
            // What a full read cannot go below on one core: decoding every block, then storing
            // the whole output once at the memory's streaming-store rate.
            const double store = store_seconds(out);
            std::printf(
                "%-16s full-read floor, 1 thread: codec %.1f ms + storing the output %.1f "
                "ms = %.1f ms (ours: %.0f%% of it)\n",
                s.name.c_str(), codec_full * 1e3, store * 1e3, (codec_full + store) * 1e3,
                100.0 * (codec_full + store) / full);
        }

        // slices, per axis
        for (std::size_t ax = 0; ax < s.shape.size(); ++ax) {
            const auto& planes = req.planes[ax];
            const double pbytes = static_cast<double>(planes[0].size() * dt.itemsize());
            const double t =
                best_seconds([&] {
                    for (const Box& b : planes) {
                        a.read(b, out.data(), static_cast<std::size_t>(b.size() * dt.itemsize()));
                    }
                }) /
                static_cast<double>(planes.size());
            double tc = 0;
#if defined(B2ND_HAVE_BLOSC2)
            tc = best_seconds([&] {
                     for (const Box& b : planes) {
                         c.slice(b, out.data(), b.size() * dt.itemsize());
                     }
                 }) /
                 static_cast<double>(planes.size());
#endif
            g_limit = limit.seconds(planes) / static_cast<double>(planes.size());
            row(s.name, "slice axis " + std::to_string(ax), threads, t, pbytes, tc);
        }

        // points: no block cache (each decodes its block), a cold cache (cleared: the pass fills
        // it), then warm (the same points again)
        const double isz = static_cast<double>(dt.itemsize());
        const auto np = static_cast<double>(req.points.size());
        const double nocache = best_seconds([&] {
            for (const Shape& p : req.points) {
                a.read_element(p.data(), out.data());
            }
        });
        a.set_cache_bytes(std::size_t{2} << 30);
        double cold = 1e30;
        for (int rep = 0; rep < 3; ++rep) {
            a.clear_cache();
            const auto t0 = Clock::now();
            for (const Shape& p : req.points) {
                a.read_element(p.data(), out.data());
            }
            cold = std::min(cold, std::chrono::duration<double>(Clock::now() - t0).count());
        }
        const double warm = best_seconds([&] {
            for (const Shape& p : req.points) {
                a.read_element(p.data(), out.data());
            }
        });
        double pc = 0;
#if defined(B2ND_HAVE_BLOSC2)
        pc = best_seconds([&] {
                 for (const Shape& p : req.points) {
                     c.slice(Box::region(p, Shape(p.size(), 1)), out.data(), dt.itemsize());
                 }
             }) /
             np;
#endif
        std::vector<std::int64_t> flat;
        for (const Shape& p : req.points) {
            flat.insert(flat.end(), p.begin(), p.end());
        }
        a.set_cache_bytes(0);
        const double batch =
            best_seconds([&] { a.read_points(flat.data(), req.points.size(), out.data()); });
        a.set_cache_bytes(std::size_t{2} << 30);
        row(s.name, "points batch (no cache)", threads, batch / np, isz, pc);
        row(s.name, "point (no cache)", threads, nocache / np, isz, pc);
        row(s.name, "point (cold cache)", threads, cold / np, isz, pc);
        row(s.name, "point (warm cache)", threads, warm / np, isz, pc);
        a.set_cache_bytes(0);

        // boxes
        double box_bytes = 0;
        for (const Box& b : req.boxes) {
            box_bytes += static_cast<double>(b.size()) * isz;
        }
        const auto nb = static_cast<double>(req.boxes.size());
        const double tb =
            best_seconds([&] {
                for (const Box& b : req.boxes) {
                    a.read(b, out.data(), static_cast<std::size_t>(b.size() * dt.itemsize()));
                }
            }) /
            nb;
        double tbc = 0;
#if defined(B2ND_HAVE_BLOSC2)
        tbc = best_seconds([&] {
                  for (const Box& b : req.boxes) {
                      c.slice(b, out.data(), b.size() * dt.itemsize());
                  }
              }) /
              nb;
#endif
        g_limit = limit.seconds(req.boxes) / nb;
        row(s.name, "box 16-edge", threads, tb, box_bytes / nb, tbc);

        // selections, no block cache (each call decodes what it touches)
        for (const auto* lists : {&req.oindex_long, &req.oindex_cube}) {
            std::uint64_t n = 1;
            for (const auto& l : *lists) {
                n *= l.size();
            }
            const std::size_t bytes = n * static_cast<std::size_t>(dt.itemsize());
            b2nd::Resolved sel;
            sel.lists = *lists;
            const double to = best_seconds([&] { a.read(sel, out.data(), bytes); });
            double toc = 0;
#if defined(B2ND_HAVE_BLOSC2)
            std::vector<std::uint8_t> check(out.begin(),
                                            out.begin() + static_cast<std::ptrdiff_t>(bytes));
            toc = best_seconds(
                [&] { c.oindex(*lists, out.data(), static_cast<std::int64_t>(bytes)); });
            if (std::memcmp(check.data(), out.data(), bytes) != 0) {
                std::printf("%-16s c-blosc2's orthogonal selection differs from ours\n",
                            s.name.c_str());
            }
#endif
            const std::string what =
                lists == &req.oindex_long ? "oindex 1000 x 4.." : "oindex 32 per axis";
            row(s.name, what, threads, to, static_cast<double>(bytes), toc);
        }
        const std::size_t npts = req.many_points.size() / s.shape.size();
        const double tp =
            best_seconds([&] { a.read_points(req.many_points.data(), npts, out.data()); });
        row(s.name, "points 10^5 batch", threads, tp, static_cast<double>(npts) * isz, 0);
        const b2nd::Mask m = b2nd::Mask::of(req.mask.data(), s.shape);
        std::vector<std::uint8_t> picked;
        const double tm = best_seconds([&] { picked = a.read_masked(m); });
        row(s.name, "mask 1% (a[mask])", threads, tm, static_cast<double>(picked.size()), 0);
    }
    if (g_copies) {
        bench_copy(s, read_path, dir, nbytes);
    }
}

}  // namespace

int main(int argc, char** argv) {
    std::string parent;  // --dir: where the benchmark's own directory goes
    std::string only;
    bool quick = false;
    int checksum_runs = 0;  // --checksums
    int slice_pairs = 0;    // --slice-processes
    int cache_runs = 0;     // --cache
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--quick") {
            quick = true;
        } else if (a == "--dir" && i + 1 < argc) {
            parent = argv[++i];
        } else if (a == "--no-copy") {
            g_copies = false;
        } else if (a == "--copy-only") {
            g_copy_only = true;
        } else if (a == "--zfp") {
            g_zfp = true;
        } else if (a == "--checksums") {
            checksum_runs = i + 1 < argc && argv[i + 1][0] != '-' ? std::atoi(argv[++i]) : 5;
        } else if (a == "--cache") {
            cache_runs = i + 1 < argc && argv[i + 1][0] != '-' ? std::atoi(argv[++i]) : 3;
        } else if (a == "--slice-processes") {
            slice_pairs = i + 1 < argc && argv[i + 1][0] != '-' ? std::atoi(argv[++i]) : 9;
        } else if (a == "--array" && i + 1 < argc) {
            only = argv[++i];
        } else {
            std::fprintf(stderr,
                         "usage: bench_array [--quick] [--dir DIR] [--array NAME | --zfp] "
                         "[--no-copy | --copy-only | --checksums [RUNS] | --cache [RUNS] | "
                         "--slice-processes [PAIRS]]\n");
            return 2;
        }
    }
    const b2nd::bench::WorkDir work("array", parent);
    const std::string& dir = work.path();
#if defined(B2ND_HAVE_BLOSC2)
    blosc2_init();
    std::printf("c-blosc2 %s in the same run (last columns: c-blosc2; ratio = its time / ours)\n",
                BLOSC2_VERSION_STRING);
#endif
    if (quick) {
        g_min_seconds = 0.1;
    }
    const std::int64_t edge = quick ? 256 : 512;
    std::printf("%-16s %-24s %2s  %-24s  | %-24s %s\n", "array", "workload", "th", "b2nd-cpp",
                "c-blosc2", "c-blosc2 time / ours");
    const std::vector<Spec> cube = {
        {"f32cube_zstd1",
         "<f4",
         {edge, edge, edge},
         {128, 128, 128},
         {32, 32, 32},
         b2nd::Codec::zstd,
         1,
         b2nd::Filter::shuffle},
        {"f32cube_lz4",
         "<f4",
         {edge, edge, edge},
         {128, 128, 128},
         {32, 32, 32},
         b2nd::Codec::lz4,
         5,
         b2nd::Filter::shuffle},
        {"f32cube_blosclz",
         "<f4",
         {edge, edge, edge},
         {128, 128, 128},
         {32, 32, 32},
         b2nd::Codec::blosclz,
         5,
         b2nd::Filter::shuffle},
        // Lossy, through libzfp (issue 14; ZFP_RATE is left out: c-blosc2's partial reads of
        // it are broken, FORMAT-NOTES.md). Only with --array NAME or --zfp.
        {"f32cube_zfp_acc",
         "<f4",
         {edge, edge, edge},
         {128, 128, 128},
         {32, 32, 32},
         b2nd::Codec::zfp_accuracy,
         1,
         b2nd::Filter::none,
         -2},
        {"f32cube_zfp_prec",
         "<f4",
         {edge, edge, edge},
         {128, 128, 128},
         {32, 32, 32},
         b2nd::Codec::zfp_precision,
         1,
         b2nd::Filter::none,
         14},
    };
    const int npoints = 10000;
    bool cube_made = false;
    std::vector<std::uint8_t> data;
    for (const Spec& s : cube) {
        const bool zfp = s.name.find("zfp") != std::string::npos;
        if ((!only.empty() && only != s.name) || (only.empty() && zfp != g_zfp)) {
            continue;
        }
        if (!cube_made) {
            data = f32cube(edge);
            cube_made = true;
        }
        if (slice_pairs > 0) {
            // The slices of issue 41's table (fresh processes, with and without checksums).
            const std::string mid = std::to_string(edge / 2 - 156);  // 100 at edge 512
            const std::string box = mid + ":" + std::to_string(edge / 2 - 140);
            if (s.name == "f32cube_lz4") {
                bench_slice_processes(s, data, dir, {mid}, slice_pairs);
            } else if (s.name == "f32cube_zstd1") {
                bench_slice_processes(s, data, dir, {":," + mid, box + "," + box + "," + box},
                                      slice_pairs);
            }
        } else if (checksum_runs > 0) {
            bench_checksums(s, data, dir, checksum_runs);
        } else if (cache_runs > 0) {
            bench_cache(s, data, dir, cache_runs);
        } else {
            bench_array(s, data, dir, npoints);
        }
    }
    if (cache_runs == 0 && ((only.empty() && !g_zfp) || only == "i64grid")) {  // --cache: cubes
        const std::int64_t rows = quick ? 5000 : 20000;
        data = i64grid(rows, 5000);
        const Spec grid{"i64grid",
                        "<i8",
                        {rows, 5000},
                        {1000, 1000},
                        {100, 250},
                        b2nd::Codec::zstd,
                        5,
                        b2nd::Filter::bitshuffle};
        if (slice_pairs > 0) {
            bench_slice_processes(grid, data, dir, {std::to_string(rows / 4)}, slice_pairs);
        } else if (checksum_runs > 0) {
            bench_checksums(grid, data, dir, checksum_runs);
        } else {
            bench_array(grid, data, dir, npoints);
        }
    }
#if defined(B2ND_HAVE_BLOSC2)
    blosc2_destroy();
#endif
    return 0;
}
