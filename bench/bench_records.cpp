// Records (docs/records.md): one f8 field read out of a 5-field record array
// (id <i8, x <f8, y <f8, z <f8, w <f4: 36 bytes, 8 Mi records) through a field view, against a
// plain f8 array read whole, 1 and 2 threads, runs interleaved:
//   field GB/s  the field's bytes per second (8 per record);
//   records GB/s  the record bytes decoded per second (36 per record);
//   whole records GB/s  the record array read whole (every field), for reference;
//   plain GB/s  a plain f8 array of the same uncompressed size as the records (36 bytes x 8 Mi)
//               read whole, and the ratio records / plain (the goal: >= 0.70).
// Data: smooth values with noise (BENCHMARKS.md's mix), zstd level 1 + SHUFFLE (the defaults);
// buffers allocated and touched before timing. Ranges are min-max over runs.
//
//   build-bench/bench/bench_records [--quick]      (--quick: 2 Mi records, 3 runs)
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <b2nd/b2nd.hpp>

#include "bench_common.hpp"

namespace fs = std::filesystem;

namespace {

using b2nd::bench::Range;
using b2nd::bench::seconds;

double value(std::size_t i, int k) {
    const double u =
        static_cast<double>(b2nd::bench::mix(i * 5 + static_cast<std::size_t>(k)) >> 11) /
        9007199254740992.0;
    return 100 * std::sin(static_cast<double>(i) / (300.0 + 70 * k)) + 0.01 * (u - 0.5);
}

double seconds_of(const b2nd::AnyArray& a, void* out, std::size_t bytes) {
    const auto t0 = std::chrono::steady_clock::now();
    a.read(b2nd::Box::whole(a.shape()), out, bytes);
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
    const bool quick = argc > 1 && std::string(argv[1]) == "--quick";
    const std::int64_t n = quick ? (std::int64_t{1} << 21) : (std::int64_t{1} << 23);
    const int runs = quick ? 3 : 7;
    const b2nd::bench::WorkDir work("records");
    const std::string& dir = work.path();
    constexpr std::size_t kRec = 36;
    {
        std::vector<std::uint8_t> recs(static_cast<std::size_t>(n) * kRec);
        std::vector<double> plain(static_cast<std::size_t>(n) * kRec / 8);
        for (std::size_t i = 0; i < static_cast<std::size_t>(n); ++i) {
            std::uint8_t* r = recs.data() + i * kRec;
            const auto id = static_cast<std::int64_t>(i);
            std::memcpy(r, &id, 8);
            for (int k = 0; k < 3; ++k) {
                const double v = value(i, k);
                std::memcpy(r + 8 + 8 * k, &v, 8);
            }
            const auto w = static_cast<float>(value(i, 3));
            std::memcpy(r + 32, &w, 4);
        }
        for (std::size_t i = 0; i < plain.size(); ++i) {
            plain[i] = value(i, static_cast<int>(i % 3));
        }
        b2nd::AnyArray::create_from(
            dir + "/records.b2nd",
            b2nd::DType::parse("[('id', '<i8'), ('x', '<f8'), ('y', '<f8'), ('z', '<f8'), "
                               "('w', '<f4')]"),
            {n}, {recs.data(), recs.size()});
        b2nd::AnyArray::create_from(
            dir + "/plain.b2nd", b2nd::DType::parse("<f8"),
            {static_cast<std::int64_t>(plain.size())},
            {reinterpret_cast<const std::uint8_t*>(plain.data()), plain.size() * 8});
    }
    std::printf("records: %lld x %zu bytes, one f8 field through a field view\n",
                static_cast<long long>(n), kRec);
    for (int threads : {1, 2}) {
        b2nd::OpenOptions o;
        o.nthreads = threads;
        o.cache_bytes = 0;
        const auto recs = b2nd::AnyArray::open(dir + "/records.b2nd", o);
        const auto field = recs.field("x");
        const auto plain = b2nd::AnyArray::open(dir + "/plain.b2nd", o);
        std::vector<std::uint8_t> out_f(static_cast<std::size_t>(n) * 8, 1);
        std::vector<std::uint8_t> out_p(static_cast<std::size_t>(plain.nbytes()), 1);
        std::vector<std::uint8_t> out_r(static_cast<std::size_t>(recs.nbytes()), 1);
        seconds_of(field, out_f.data(), out_f.size());  // warm: page cache, threads
        seconds_of(plain, out_p.data(), out_p.size());
        seconds_of(recs, out_r.data(), out_r.size());
        Range field_gbs, rec_gbs, plain_gbs, ratio, whole_gbs;
        for (int r = 0; r < runs; ++r) {
            const double tf = seconds_of(field, out_f.data(), out_f.size());
            const double tp = seconds_of(plain, out_p.data(), out_p.size());
            const double tw = seconds_of(recs, out_r.data(), out_r.size());
            whole_gbs.add(static_cast<double>(recs.nbytes()) / tw / 1e9);
            field_gbs.add(static_cast<double>(out_f.size()) / tf / 1e9);
            rec_gbs.add(static_cast<double>(recs.nbytes()) / tf / 1e9);
            plain_gbs.add(static_cast<double>(plain.nbytes()) / tp / 1e9);
            ratio.add((static_cast<double>(recs.nbytes()) / tf) /
                      (static_cast<double>(plain.nbytes()) / tp));
        }
        std::printf(
            "  %d thread%s: field %.2f-%.2f GB/s, records %.2f-%.2f GB/s, plain f8 %.2f-%.2f "
            "GB/s, records/plain %.2f-%.2f; whole records read %.2f-%.2f GB/s\n",
            threads, threads == 1 ? " " : "s", field_gbs.lo, field_gbs.hi, rec_gbs.lo, rec_gbs.hi,
            plain_gbs.lo, plain_gbs.hi, ratio.lo, ratio.hi, whole_gbs.lo, whole_gbs.hi);
    }
    return 0;
}
