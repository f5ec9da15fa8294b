// HDF5 and Zarr, both ways, on the standard f32cube (BENCHMARKS.md; zstd 1 + shuffle, chunks
// 128^3, blocks 32^3), GB/s of uncompressed data, ranges over runs:
//   export  b2nd -> HDF5 (shuffle + gzip 4) and -> Zarr v3 (sharded, blosc lz4 5 + shuffle)
//   import  HDF5 -> b2nd and Zarr v3 -> b2nd (b2nd::copy of the array read in place)
//   read    the whole HDF5 dataset and Zarr v3 array read in place into memory (as the
//           baselines' reads)
//   slice   a plane (100, :, :) and a 16^3 box read from the Zarr v3 array in place, against the
//           same read of the b2nd array, fresh handles (no cache), interleaved: ms and ratio
//   baseline  h5py and zarr-python 2.13 writing and reading the cube from memory (v2 Blosc lz4:
//           zarr-python 2.13 has no sharding), where /usr/bin/python3 has them
//
//   build-bench/bench/bench_bridges [--quick] [--runs N]   (--quick: a 256^3 cube)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <b2nd/b2nd.hpp>

#include "bench_common.hpp"

namespace {

using b2nd::bench::Range;
using b2nd::bench::seconds;

void report(const char* what, const Range& secs, double bytes) {
    std::printf("%-34s %6.3f-%6.3f s   %5.2f-%5.2f GB/s\n", what, secs.lo, secs.hi,
                bytes / secs.hi / 1e9, bytes / secs.lo / 1e9);
}

}  // namespace

int main(int argc, char** argv) {
    bool quick = false;
    int runs = 3;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--quick") {
            quick = true;
        } else if (arg == "--runs" && i + 1 < argc) {
            runs = std::atoi(argv[++i]);
        }
    }
    const std::int64_t edge = quick ? 256 : 512;
    const b2nd::bench::WorkDir work("bridges");
    const std::string& dir = work.path();
    b2nd::CreateOptions o;
    o.chunk_shape = {128, 128, 128};
    o.block_shape = {32, 32, 32};
    o.cache_bytes = 0;
    const auto cube = b2nd::bench::f32cube_array(dir + "/cube.b2nd", edge, 1.0F, 0.0F, o);
    const b2nd::AnyArray a = b2nd::AnyArray::open(dir + "/cube.b2nd");
    const double bytes = static_cast<double>(a.nbytes());
    std::printf("f32cube %lld^3 (%.0f MB), %s, %d runs, %s\n", static_cast<long long>(edge),
                bytes / 1e6, b2nd::have_hdf5() ? "HDF5 on" : "no HDF5", runs,
                "2 threads where the library uses them");

    b2nd::OpenOptions fresh;
    fresh.cache_bytes = 0;
    Range h5_out, h5_in, h5_read, z_out, z_in, z_read, plane_z, plane_b, box_z, box_b;
    std::vector<std::uint8_t> whole(static_cast<std::size_t>(a.nbytes()), 1);  // touched once
    b2nd::ZarrExportOptions zo;
    zo.codec = b2nd::codec::Codec::lz4;
    zo.clevel = 5;
    zo.overwrite = true;
    zo.durable = false;
    b2nd::Hdf5ExportOptions ho;
    ho.durable = false;
    b2nd::CopyOptions co;
    co.overwrite = true;
    co.durable = false;
    co.chunk_shape = b2nd::Shape{128, 128, 128};
    co.block_shape = b2nd::Shape{32, 32, 32};
    const b2nd::Box plane = b2nd::Box::region({100, 0, 0}, {1, edge, edge});
    const b2nd::Box box = b2nd::Box::region({70, 90, 110}, {16, 16, 16});
    std::vector<std::uint8_t> plane_buf(static_cast<std::size_t>(edge * edge * 4), 1);
    std::vector<std::uint8_t> box_buf(16 * 16 * 16 * 4, 1);
    for (int r = 0; r < runs; ++r) {
        if (b2nd::have_hdf5()) {
            std::filesystem::remove(dir + "/cube.h5");
            h5_out.add(seconds([&] { b2nd::export_hdf5(a, dir + "/cube.h5:/f32cube", ho); }));
            h5_in.add(seconds([&] {
                b2nd::copy(b2nd::AnyArray::open(dir + "/cube.h5:/f32cube"), dir + "/h5.b2nd", co);
            }));
            h5_read.add(seconds([&] {
                b2nd::AnyArray::open(dir + "/cube.h5:/f32cube", fresh)
                    .read(b2nd::Box::whole(a.shape()), whole.data(), whole.size());
            }));
        }
        z_out.add(seconds([&] { b2nd::export_zarr(a, dir + "/cube.zarr", zo); }));
        z_in.add(seconds(
            [&] { b2nd::copy(b2nd::AnyArray::open(dir + "/cube.zarr"), dir + "/z.b2nd", co); }));
        z_read.add(seconds([&] {
            b2nd::AnyArray::open(dir + "/cube.zarr", fresh)
                .read(b2nd::Box::whole(a.shape()), whole.data(), whole.size());
        }));
        for (int k = 0; k < 5; ++k) {
            plane_z.add(seconds([&] {
                b2nd::AnyArray::open(dir + "/cube.zarr", fresh)
                    .read(plane, plane_buf.data(), plane_buf.size());
            }));
            plane_b.add(seconds([&] {
                b2nd::AnyArray::open(dir + "/cube.b2nd", fresh)
                    .read(plane, plane_buf.data(), plane_buf.size());
            }));
            box_z.add(seconds([&] {
                b2nd::AnyArray::open(dir + "/cube.zarr", fresh)
                    .read(box, box_buf.data(), box_buf.size());
            }));
            box_b.add(seconds([&] {
                b2nd::AnyArray::open(dir + "/cube.b2nd", fresh)
                    .read(box, box_buf.data(), box_buf.size());
            }));
        }
    }
    if (b2nd::have_hdf5()) {
        report("export  b2nd -> HDF5 gzip 4", h5_out, bytes);
        report("import  HDF5 gzip -> b2nd", h5_in, bytes);
        report("read    HDF5 gzip -> memory", h5_read, bytes);
    }
    report("export  b2nd -> Zarr v3 blosc-lz4", z_out, bytes);
    report("import  Zarr v3 -> b2nd", z_in, bytes);
    report("read    Zarr v3 -> memory", z_read, bytes);
    std::printf(
        "slice   plane (100,:,:): Zarr v3 %.2f-%.2f ms, b2nd %.2f-%.2f ms (best ratio %.2f)\n",
        plane_z.lo * 1e3, plane_z.hi * 1e3, plane_b.lo * 1e3, plane_b.hi * 1e3,
        plane_z.lo / plane_b.lo);
    std::printf(
        "slice   16^3 box:        Zarr v3 %.2f-%.2f ms, b2nd %.2f-%.2f ms (best ratio %.2f)\n",
        box_z.lo * 1e3, box_z.hi * 1e3, box_b.lo * 1e3, box_b.hi * 1e3, box_z.lo / box_b.lo);

    // The baselines: the same cube through h5py and zarr-python, from memory.
    b2nd::export_npy(a, b2nd::Box::whole(a.shape()), a.shape(), dir + "/cube.npy");
    const std::string cmd = "/usr/bin/python3 " + std::string(B2ND_BRIDGES_BASELINE) + " '" + dir +
                            "/cube.npy' '" + dir + "'";
    std::FILE* p = ::popen(cmd.c_str(), "r");
    char line[256];
    bool any = false;
    while (p != nullptr && std::fgets(line, sizeof line, p) != nullptr) {
        char name[64];
        double s = 0;
        if (std::sscanf(line, "%63s %lf", name, &s) == 2) {
            std::printf("baseline %-25s %6.3f s   %5.2f GB/s (best of 3)\n", name, s,
                        bytes / s / 1e9);
            any = true;
        }
    }
    if (p != nullptr) {
        ::pclose(p);
    }
    if (!any) {
        std::printf("baseline: h5py / zarr-python not found (python3-h5py, python3-zarr)\n");
    }
    return 0;
}
