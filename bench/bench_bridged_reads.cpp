// Bridged reads against what users would use instead (issue 58): a 256x512x512 float32 cube as a
// Zarr v2 array (Blosc lz4 5 + shuffle, chunks 64x128x128) and as an HDF5 dataset (gzip 1 +
// shuffle, same chunks), both written by python (bridged_reads_peers.py), read in place by us on
// 1 and 2 threads and by zarr-python (numcodecs' Blosc on 2 threads) and h5py, on the same
// workloads, in the same run: the array whole, 8 planes along axis 0, a plane along the last
// axis, a 64^3 box (each on a fresh handle), and planes 0-63 along axis 0 on one handle.
// Milliseconds, best of --runs per figure; every read of ours is checked against the cube. Also:
// the whole array from a b2nd copy (zstd 1 + shuffle, chunks 64x128x128, blocks 16x128x128), the
// yardstick of full bridged reads.
//
//   build-bench/bench/bench_bridged_reads [--runs N] [--dir DIR]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <b2nd/b2nd.hpp>
#include <b2nd/npy.hpp>

#include "bench_common.hpp"

namespace {

using b2nd::Box;

constexpr std::int64_t kShape[3] = {256, 512, 512};

struct Workload {
    std::string name;
    std::function<void(const std::function<b2nd::AnyArray()>&)> run;
};

std::vector<std::uint8_t> load_cube(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::vector<std::uint8_t> file((std::istreambuf_iterator<char>(in)),
                                   std::istreambuf_iterator<char>());
    const b2nd::NpyHeader h = b2nd::parse_npy_header({file.data(), file.size()});
    return {file.begin() + static_cast<std::ptrdiff_t>(h.data_offset), file.end()};
}

}  // namespace

int main(int argc, char** argv) {
    int runs = 3;
    std::string parent;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--runs" && i + 1 < argc) {
            runs = std::atoi(argv[++i]);
        } else if (a == "--dir" && i + 1 < argc) {
            parent = argv[++i];
        } else {
            std::fprintf(stderr, "usage: bench_bridged_reads [--runs N] [--dir DIR]\n");
            return 2;
        }
    }
    const b2nd::bench::WorkDir work("bridged-reads", parent);
    const std::string& dir = work.path();
    const std::string script = B2ND_BRIDGED_PEERS;
    if (std::system(("/usr/bin/python3 " + script + " make '" + dir + "'").c_str()) != 0) {
        std::printf(
            "not run: python3 with numpy, zarr, numcodecs and h5py is needed to write "
            "the sources (python3-zarr, python3-h5py)\n");
        return 0;
    }
    const std::vector<std::uint8_t> cube = load_cube(dir + "/cube.npy");
    std::vector<std::uint8_t> out(cube.size());

    // What a read gave must be the cube's elements of its box.
    const auto check = [&](const Box& b, const std::uint8_t* got, const char* where) {
        std::size_t k = 0;
        for (std::int64_t i = b.start[0]; i < b.start[0] + b.count[0]; ++i) {
            for (std::int64_t j = b.start[1]; j < b.start[1] + b.count[1]; ++j) {
                const std::size_t at =
                    static_cast<std::size_t>((i * kShape[1] + j) * kShape[2] + b.start[2]) * 4;
                const auto n = static_cast<std::size_t>(b.count[2]) * 4;
                if (std::memcmp(got + k, cube.data() + at, n) != 0) {
                    std::fprintf(stderr, "%s: box %s differs from the cube\n", where,
                                 b2nd::to_string(b.start).c_str());
                    std::exit(1);
                }
                k += n;
            }
        }
    };
    const auto read = [&](const b2nd::AnyArray& a, const Box& b, const char* where) {
        a.read(b, out.data(), static_cast<std::size_t>(b.size()) * 4);
        check(b, out.data(), where);
    };
    const auto plane0 = [&](std::int64_t i) {
        return Box::region({i, 0, 0}, {1, kShape[1], kShape[2]});
    };
    using Open = std::function<b2nd::AnyArray()>;
    const std::vector<Workload> work_list = {
        {"whole",
         [&](const Open& open) {
             read(open(), Box::whole({256, 512, 512}), "whole");
         }},
        {"planes0",
         [&](const Open& open) {
             const b2nd::AnyArray a = open();
             for (std::int64_t p = 0; p < 8; ++p) {
                 read(a, plane0((2 * p + 1) * kShape[0] / 16), "planes0");
             }
         }},
        {"plane2",
         [&](const Open& open) {
             read(open(), Box::region({0, 0, 100}, {kShape[0], kShape[1], 1}), "plane2");
         }},
        {"box",
         [&](const Open& open) {
             read(open(), Box::region({100, 200, 300}, {64, 64, 64}), "box");
         }},
        {"sweep",
         [&](const Open& open) {
             const b2nd::AnyArray a = open();
             for (std::int64_t i = 0; i < 64; ++i) {
                 read(a, plane0(i), "sweep");
             }
         }},
    };
    const auto best = [&](const std::function<void()>& fn) {
        double t = 1e30;
        for (int r = 0; r < runs; ++r) {
            t = std::min(t, b2nd::bench::seconds(fn));
        }
        return t;
    };
    // A b2nd copy of the cube: the yardstick of full reads.
    {
        b2nd::CreateOptions o;
        o.chunk_shape = {64, 128, 128};
        o.block_shape = {16, 128, 128};
        o.compression.codec = b2nd::Codec::zstd;
        o.compression.clevel = 1;
        o.nthreads = 2;
        (void)b2nd::AnyArray::create_from(dir + "/copy.b2nd", b2nd::DType::parse("<f4"),
                                          {256, 512, 512}, {cube.data(), cube.size()}, o);
    }
    std::map<std::string, double> ours;  // "zarr whole 1" -> seconds
    const std::pair<const char*, std::string> sources[] = {
        {"zarr", dir + "/src.zarr"}, {"hdf5", dir + "/src.h5:/c"}, {"b2nd", dir + "/copy.b2nd"}};
    for (const auto& [kind, path] : sources) {
        for (const int threads : {1, 2}) {
            b2nd::OpenOptions o;
            o.nthreads = threads;
            const Open open = [&, p = path, o] { return b2nd::AnyArray::open(p, o); };
            for (const Workload& w : work_list) {
                if (std::string(kind) == "b2nd" && w.name != "whole") {
                    continue;
                }
                ours[std::string(kind) + " " + w.name + " " + std::to_string(threads)] =
                    best([&] { w.run(open); });
            }
        }
    }
    // The peers, in the same run.
    std::map<std::string, double> peers;  // "zarr-python whole" -> seconds
    const std::string cmd = "/usr/bin/python3 " + script + " time '" + dir + "'";
    if (std::FILE* p = ::popen(cmd.c_str(), "r")) {
        char line[256];
        while (std::fgets(line, sizeof line, p) != nullptr) {
            char peer[64], name[64];
            double s = 0;
            if (std::sscanf(line, "%63s %63s %lf", peer, name, &s) == 3) {
                peers[std::string(peer) + " " + name] = s;
            }
        }
        ::pclose(p);
    }
    std::printf("256x512x512 float32; ms, best of %d; fresh handles (the sweep: one handle)\n",
                runs);
    std::printf("%-8s | %-11s %8s %8s %8s | %-6s %8s %8s %8s\n", "row", "zarr-python", "ours 1t",
                "ours 2t", "2t/peer", "h5py", "ours 1t", "ours 2t", "2t/peer");
    for (const Workload& w : work_list) {
        const auto get = [&](const std::map<std::string, double>& m, const std::string& k) {
            const auto it = m.find(k);
            return it == m.end() ? 0.0 : it->second;
        };
        const double zp = get(peers, "zarr-python " + w.name), hp = get(peers, "h5py " + w.name);
        const double z1 = get(ours, "zarr " + w.name + " 1"),
                     z2 = get(ours, "zarr " + w.name + " 2");
        const double h1 = get(ours, "hdf5 " + w.name + " 1"),
                     h2 = get(ours, "hdf5 " + w.name + " 2");
        std::printf("%-8s | %11.1f %8.1f %8.1f %8.2f | %6.1f %8.1f %8.1f %8.2f\n", w.name.c_str(),
                    zp * 1e3, z1 * 1e3, z2 * 1e3, z2 > 0 ? zp / z2 : 0.0, hp * 1e3, h1 * 1e3,
                    h2 * 1e3, h2 > 0 ? hp / h2 : 0.0);
    }
    const double b1 = ours["b2nd whole 1"], b2 = ours["b2nd whole 2"];
    std::printf(
        "b2nd copy (zstd 1, blocks 16x128x128) whole: %.1f ms 1t, %.1f ms 2t; full bridged "
        "reads at 2t over it: Zarr %.2f, HDF5 %.2f (time of the copy / time bridged)\n",
        b1 * 1e3, b2 * 1e3, b2 / ours["zarr whole 2"], b2 / ours["hdf5 whole 2"]);
    if (peers.empty()) {
        std::printf("peers: not run (python3 with zarr, numcodecs and h5py)\n");
    }
    return 0;
}
