// The c-blosc2 side of the locking interop tests (test_blosc2_locking.cpp), built only when a
// c-blosc2 library is found. Locking is on (BLOSC_LOCKING=1), as a c-blosc2 user would turn it
// on. The arrays are those of tests/process/worker.cpp: (rows, 40) int32, element (i, j) =
// v * 1000 + j for one v in every committed state.
//
//   blosc2_worker cwriter PATH SECONDS   rewrites the whole array with the next v, again and
//                                        again (b2nd_set_slice_cbuffer holds the exclusive lock
//                                        across the slice); prints "commits=N"
//   blosc2_worker creader PATH SECONDS   reads the whole array again and again inside
//                                        blosc2_schunk_lock/unlock; prints
//                                        "reads=N errors=E torn=T"
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <b2nd.h>
#include <blosc2.h>

namespace {

using Clock = std::chrono::steady_clock;

int cwriter(const char* path, double seconds) {
    b2nd_array_t* a = nullptr;
    if (b2nd_open(path, &a) < 0) {
        std::printf("failed: b2nd_open\n");
        return 1;
    }
    const std::int64_t rows = a->shape[0], cols = a->shape[1];
    std::vector<std::int32_t> buf(static_cast<std::size_t>(rows * cols));
    std::int64_t start[2] = {0, 0}, stop[2] = {rows, cols}, shape[2] = {rows, cols};
    std::int64_t commits = 0;
    std::int32_t v = 100;
    const auto until = Clock::now() + std::chrono::duration<double>(seconds);
    while (Clock::now() < until) {
        ++v;
        for (std::size_t k = 0; k < buf.size(); ++k) {
            buf[k] = v * 1000 + static_cast<std::int32_t>(static_cast<std::int64_t>(k) % cols);
        }
        if (b2nd_set_slice_cbuffer(buf.data(), shape,
                                   static_cast<std::int64_t>(buf.size() * sizeof(std::int32_t)),
                                   start, stop, a) < 0) {
            std::printf("failed: b2nd_set_slice_cbuffer after %lld commits\n",
                        static_cast<long long>(commits));
            return 1;
        }
        ++commits;
    }
    b2nd_free(a);
    std::printf("commits=%lld\n", static_cast<long long>(commits));
    return 0;
}

int creader(const char* path, double seconds) {
    b2nd_array_t* a = nullptr;
    if (b2nd_open(path, &a) < 0) {
        std::printf("failed: b2nd_open\n");
        return 1;
    }
    std::int64_t reads = 0, errors = 0, torn = 0;
    const auto until = Clock::now() + std::chrono::duration<double>(seconds);
    while (Clock::now() < until) {
        ++reads;
        if (blosc2_schunk_lock(a->sc) < 0) {
            ++errors;
            continue;
        }
        const std::int64_t rows = a->shape[0], cols = a->shape[1];
        std::vector<std::int32_t> buf(static_cast<std::size_t>(rows * cols));
        const int rc = b2nd_to_cbuffer(
            a, buf.data(), static_cast<std::int64_t>(buf.size() * sizeof(std::int32_t)));
        blosc2_schunk_unlock(a->sc);
        if (rc < 0) {
            ++errors;
            continue;
        }
        const std::int32_t v = buf.empty() ? 0 : buf[0] / 1000;
        for (std::size_t k = 0; k < buf.size(); ++k) {
            if (buf[k] !=
                v * 1000 + static_cast<std::int32_t>(static_cast<std::int64_t>(k) % cols)) {
                ++torn;
                break;
            }
        }
    }
    b2nd_free(a);
    std::printf("reads=%lld errors=%lld torn=%lld\n", static_cast<long long>(reads),
                static_cast<long long>(errors), static_cast<long long>(torn));
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 4) {
        std::fprintf(stderr, "usage: blosc2_worker cwriter|creader PATH SECONDS\n");
        return 2;
    }
    ::setenv("BLOSC_LOCKING", "1", 1);
    blosc2_init();
    const std::string what = argv[1];
    const int rc = what == "cwriter"   ? cwriter(argv[2], std::atof(argv[3]))
                   : what == "creader" ? creader(argv[2], std::atof(argv[3]))
                                       : 2;
    blosc2_destroy();
    return rc;
}
