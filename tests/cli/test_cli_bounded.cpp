// Work bounded by what is stored, not by what a file claims: an array of terabytes of zero
// chunks is verified by its headers.
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include <b2nd/b2nd.hpp>

#include "../support/cli_tool.hpp"
#include "../support/files.hpp"
#include "../support/temp_dir.hpp"
#include "run.hpp"

using b2nd::test::q;
using b2nd::test::run;
using b2nd::test::Run;
using Catch::Matchers::Contains;

TEST_CASE("cli: verify of an array claiming 8 TiB of zero chunks reads its headers only", "[cli]") {
    b2nd::test::TempDir tmp;
    const std::string path = tmp / "huge.b2nd";
    b2nd::CreateOptions o;
    o.chunk_shape = {4096, 4096};  // 128 MiB chunks, 65,536 of them, all zeros
    o.fill = b2nd::Fill::zeros;
    o.durable = false;
    (void)b2nd::NDArray<double>::create(path, {std::int64_t{1} << 20, std::int64_t{1} << 20}, o);
    REQUIRE(std::filesystem::file_size(path) < (std::uint64_t{64} << 20));
    // Filling each chunk would write 8 TiB of memory (hours); `timeout` turns that into a failure.
    const Run r = run("verify " + q(path), "timeout 300");
    CHECK(r.status == 0);
    CHECK_THAT(r.output, Contains("ok: ") && Contains("65536 chunks"));
}

TEST_CASE("cli: verify and diff stop at --max-seconds, say how far they got, and exit 4", "[cli]") {
    b2nd::test::TempDir tmp;
    const std::string path = tmp / "many.b2nd";
    // 4,000 chunks of 16 KiB, none special: each is decoded and compared, between deadlines.
    std::vector<std::int32_t> v(4000 * 4096);
    for (std::size_t i = 0; i < v.size(); ++i) {
        v[i] = static_cast<std::int32_t>(i % 977);
    }
    b2nd::CreateOptions o;
    o.chunk_shape = {4096};
    o.durable = false;
    (void)b2nd::NDArray<std::int32_t>::create_from(path, {4000 * 4096}, v, o);

    const Run verify = run("verify " + q(path) + " --max-seconds 0.001");
    INFO(verify.output);
    CHECK(verify.status == 4);
    CHECK_THAT(verify.output, Contains("stopped at --max-seconds 0.001: ") &&
                                  Contains(" of 4000 chunks checked, nothing wrong in them"));
    CHECK_THAT(verify.output, !Contains("ok: "));
    const Run diff = run("diff " + q(path) + " " + q(path) + " --max-seconds 0.001");
    INFO(diff.output);
    CHECK(diff.status == 4);
    CHECK_THAT(diff.output, Contains("stopped at --max-seconds 0.001: ") &&
                                Contains(" of 16384000 elements compared") &&
                                Contains("equal so far: "));
    // Given time, both finish as without the option.
    CHECK(run("verify " + q(path) + " --max-seconds 600").status == 0);
    const Run whole = run("diff " + q(path) + " " + q(path) + " --max-seconds 600");
    CHECK(whole.status == 0);
    CHECK_THAT(whole.output, Contains("equal: 16384000 elements"));
    for (const char* bad : {"0", "-1", "x", "1e9"}) {
        CHECK(run(std::string("verify ") + q(path) + " --max-seconds " + bad).status == 2);
    }
}

TEST_CASE("cli: a 15 KB store claiming a 2 GiB embedded value lists in bounded memory", "[cli]") {
    // The fuzz seed fuzz_store/bomb.b2e (make_seeds.cpp): embed.b2e's bytes claim 4 GiB (zero
    // chunks past the real values), and its map gives '/bomb' 2 GiB of those zeros. Reading the
    // claimed length whole took 4.27 GB; ours decodes the value's header only.
    const std::string bomb = std::string(B2ND_FUZZ_SEEDS) + "/fuzz_store/bomb.b2e";
    REQUIRE(std::filesystem::file_size(bomb) < 32 * 1024);
#ifdef B2ND_SANITIZED
    const std::string limit;  // sanitizers reserve terabytes of address space
#else
    const std::string limit = "ulimit -v 1048576;";  // 1 GiB of address space at most
#endif
    const Run r = run("ls " + q(bomb), limit);
    INFO(r.output);
    CHECK(r.status == 1);  // one unreadable leaf, said so, the others listed
    CHECK_THAT(r.output, Contains("/v ") && Contains("(10,) <i4"));
    CHECK_THAT(r.output, Contains("/bomb") && Contains("unreadable: ") &&
                             Contains("1 leaf could not be read"));
    CHECK_THAT(run("show " + q(bomb + ":/v"), limit).output, Contains("[ 0  3  6"));
}

TEST_CASE("cli: hostile HDF5 and Zarr files are read in 300 MB of address space", "[cli]") {
    // Each declares far more than it holds: a filtered HDF5 dataset of 600 MB chunks never
    // written (libhdf5 builds a whole chunk to fill it), a 1 MiB corrupt LZF chunk (once retried
    // with ever larger buffers, 5 GB), a Zarr array of 600 MB chunks none of which is there, and
    // a sparse Zarr shard whose index claims 2^26 inner chunks (1 GiB, once read whole).
    b2nd::test::TempDir tmp;
    const std::string script =
        "import json, os, struct, sys\n"
        "try:\n"
        "    import h5py, numpy as np\n"
        "except ImportError:\n"
        "    sys.exit(77)\n"
        "d = sys.argv[1]\n"
        "with h5py.File(d + '/huge.h5', 'w') as f:\n"
        "    f.create_dataset('x', shape=(300000, 1000), chunks=(150000, 1000), dtype='<f4',\n"
        "                     compression='gzip', fillvalue=2.5)\n"
        "with h5py.File(d + '/junk.h5', 'w') as f:\n"
        "    ds = f.create_dataset('d', shape=(1 << 20,), chunks=(1 << 20,), dtype='<i4',\n"
        "                          compression='lzf')\n"
        "    ds.id.write_direct_chunk((0,), np.random.default_rng(1).integers(0, 256, 1 << 20,\n"
        "                             dtype=np.uint8).tobytes())\n"
        "os.makedirs(d + '/huge.zarr')\n"
        "json.dump({'zarr_format': 2, 'shape': [300000, 1000], 'chunks': [150000, 1000],\n"
        "           'dtype': '<f4', 'compressor': None, 'fill_value': 1.5, 'order': 'C',\n"
        "           'filters': None}, open(d + '/huge.zarr/.zarray', 'w'))\n"
        "n = 1 << 26\n"
        "os.makedirs(d + '/sparse.zarr/c')\n"
        "json.dump({'zarr_format': 3, 'node_type': 'array', 'shape': [n], 'data_type': 'uint8',\n"
        "           'chunk_grid': {'name': 'regular', 'configuration': {'chunk_shape': [n]}},\n"
        "           'chunk_key_encoding': {'name': 'default'}, 'fill_value': 7,\n"
        "           'codecs': [{'name': 'sharding_indexed', 'configuration': {\n"
        "               'chunk_shape': [1], 'codecs': [{'name': 'bytes'}],\n"
        "               'index_codecs': [{'name': 'bytes', 'configuration': {'endian': "
        "'little'}},\n"
        "                                {'name': 'crc32c'}]}}]},\n"
        "          open(d + '/sparse.zarr/zarr.json', 'w'))\n"
        "with open(d + '/sparse.zarr/c/0', 'wb') as f:\n"
        "    f.write(b'\\x2a')\n"
        "    f.truncate(1 + 16 * n + 4)\n"
        "    for i in (5, 7):\n"
        "        f.seek(1 + 16 * i)\n"
        "        f.write(b'\\xff' * 16)\n"
        "    f.seek(1 + 16 * 6)\n"
        "    f.write(struct.pack('<QQ', 0, 1))\n";
    const int st = b2nd::test::run_python(script, tmp.path());
    if (st == 77) {
        B2ND_SKIP("h5py or numpy is not installed (python3-h5py)");
    }
    REQUIRE(st == 0);
#ifdef B2ND_SANITIZED
    const std::string limit;  // sanitizers reserve terabytes of address space
#else
    const std::string limit = "ulimit -v 300000;";
#endif
    const bool hdf5 = b2nd::have_hdf5();
    if (hdf5) {
        const Run fill = run("show " + q(tmp / "huge.h5") + ":/x --slice 299999,998:", limit);
        CHECK(fill.status == 0);
        CHECK_THAT(fill.output, Contains("[2.5 2.5]"));
        const Run junk = run("show " + q(tmp / "junk.h5") + ":/d --slice 5", limit);
        CHECK(junk.status == 1);
        CHECK_THAT(junk.output, Contains("junk.h5:/d") && Contains("LZF"));
    }
    const Run missing = run("show " + q(tmp / "huge.zarr") + " --slice 299999,998:", limit);
    CHECK(missing.status == 0);
    CHECK_THAT(missing.output, Contains("[1.5 1.5]"));
    // The shard is a 1 GiB file, mapped (address space, no memory): its peak memory is what
    // tells.
    const Run sparse = run("show " + q(tmp / "sparse.zarr") + " --slice 5:8");
    CHECK(sparse.status == 0);
    CHECK_THAT(sparse.output, Contains("[ 7 42  7]"));
    if (b2nd::test::memory_measurable()) {
        const long kib =
            b2nd::test::peak_rss_kib("show " + q(tmp / "sparse.zarr") + " --slice 5:8");
        CHECK(kib > 0);
        CHECK(kib < 200 * 1024);
    }
}
