// The b2nd::mpi checks, run under mpiexec with 1, 2 and 4 ranks (tests/CMakeLists.txt, label
// "mpi"): mpi_check SCENARIO DIR [KIND]. Every rank runs the same scenario; rank 0 also computes
// the single-process reference with the ordinary API and compares bit for bit. A failed check is
// reported with its rank and line and does not stop the scenario (the ranks must stay in step
// through the collective calls); the exit status says whether any rank saw a failure.
//
// mpi_check.hpp: what the scenarios share (the CHECK macro, the reference data and comparisons);
// mpi_scenarios_write.cpp and mpi_scenarios_evaluate.cpp: the scenarios; mpi_check.cpp: main.
#pragma once

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include <b2nd/mpi.hpp>
#include <b2nd/storage/frame.hpp>

namespace fs = std::filesystem;
using namespace b2nd;

namespace mpi_check {

inline int g_rank = 0, g_size = 1;
inline long g_checks = 0, g_failures = 0;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        ++g_checks;                                                                                \
        if (!(cond)) {                                                                             \
            ++g_failures;                                                                          \
            std::fprintf(stderr, "rank %d: %s:%d: CHECK(%s) failed\n", g_rank, __FILE__, __LINE__, \
                         #cond);                                                                   \
        }                                                                                          \
    } while (0)

/// Runs fn, which must throw an E whose message contains `text` (on this rank).
template <class E, class Fn>
inline void check_throws(Fn&& fn, const std::string& text, int line) {
    ++g_checks;
    try {
        fn();
    } catch (const std::exception& e) {
        bool right_kind = true;
        if constexpr (!std::is_same_v<E, std::exception>) {
            right_kind = dynamic_cast<const E*>(&e) != nullptr;
        }
        if (!right_kind) {
            ++g_failures;
            std::fprintf(stderr, "rank %d: line %d: wrong exception: %s\n", g_rank, line, e.what());
        } else if (std::string(e.what()).find(text) == std::string::npos) {
            ++g_failures;
            std::fprintf(stderr, "rank %d: line %d: message without '%s': %s\n", g_rank, line,
                         text.c_str(), e.what());
        }
        return;
    }
    ++g_failures;
    std::fprintf(stderr, "rank %d: line %d: no exception\n", g_rank, line);
}
#define CHECK_THROWS_WITH(E, expr, text) check_throws<E>([&] { expr; }, text, __LINE__)

inline std::vector<std::uint8_t> file_bytes(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

/// Every file of a contiguous array, or of a sparse directory, by name.
inline std::map<std::string, std::vector<std::uint8_t>> files_of(const std::string& path) {
    std::map<std::string, std::vector<std::uint8_t>> out;
    if (fs::is_directory(path)) {
        for (const auto& e : fs::directory_iterator(path)) {
            const std::string name = e.path().filename().string();
            if (name.find(".chunk") != std::string::npos || name == "chunks.b2frame") {
                out[name] = file_bytes(e.path().string());
            }
        }
    } else {
        out[""] = file_bytes(path);
    }
    return out;
}

const Shape kShape{37, 45, 29};

/// The test field: zeros and a constant in some chunks (special chunks), else values that vary
/// with a `version` (a rewrite changes every non-special chunk).
inline float value_at(std::int64_t i, std::int64_t j, std::int64_t k, int version) {
    if (i < 8) {
        return 0.0f;
    }
    if (i < 16 && j < 16) {
        return 2.5f;
    }
    return static_cast<float>(version) * 0.25f +
           static_cast<float>((i * 131 + j * 17 + k * 7) % 97) * 0.5f +
           static_cast<float>(i) * 0.01f;
}

inline mpi::ChunkProducer field(int version) {
    return [version](std::int64_t, const Box& r, std::uint8_t* out) {
        auto* v = reinterpret_cast<float*>(out);
        for (std::int64_t i = 0; i < r.count[0]; ++i) {
            for (std::int64_t j = 0; j < r.count[1]; ++j) {
                for (std::int64_t k = 0; k < r.count[2]; ++k) {
                    *v++ = value_at(r.start[0] + i, r.start[1] + j, r.start[2] + k, version);
                }
            }
        }
    };
}

inline std::vector<float> field_values(int version) {
    std::vector<float> v(static_cast<std::size_t>(kShape[0] * kShape[1] * kShape[2]));
    field(version)(0, Box::whole(kShape), reinterpret_cast<std::uint8_t*>(v.data()));
    return v;
}

inline std::vector<float> read_all(const AnyArray& a) {
    std::vector<float> v(static_cast<std::size_t>(a.size()));
    a.read(Box::whole(a.shape()), v.data(), v.size() * sizeof(float));
    return v;
}

inline CreateOptions options_for(bool sparse) {
    CreateOptions o;
    o.chunk_shape = {8, 16, 10};
    o.block_shape = {4, 8, 5};
    o.sparse = sparse;
    o.nthreads = 1;
    return o;
}

/// Rank 0: every chunk of `a` stored as in `ref` (the same bytes, or the same special entry).
inline bool same_chunks(const AnyArray& a, const AnyArray& ref) {
    if (a.grid().nchunks() != ref.grid().nchunks()) {
        return false;
    }
    for (std::int64_t i = 0; i < a.grid().nchunks(); ++i) {
        const storage::StoredChunk x = a.frame().chunk(i), y = ref.frame().chunk(i);
        if (x.special != y.special || x.nbytes != y.nbytes ||
            !std::equal(x.bytes.begin(), x.bytes.end(), y.bytes.begin(), y.bytes.end())) {
            std::fprintf(stderr, "chunk %lld differs\n", static_cast<long long>(i));
            return false;
        }
    }
    return true;
}

/// The single-process reference: one process, one thread, write_chunks over every chunk.
inline AnyArray reference(const std::string& path, bool sparse, int version) {
    CreateOptions o = options_for(sparse);
    o.overwrite = true;
    AnyArray ref = AnyArray::create(path, dtype_of<float>(), kShape, o);
    ref.write_chunks(ref.all_chunks(), field(version), 1);
    return ref;
}

inline std::string kind_name(bool sparse) {
    return sparse ? "sframe" : "cframe";
}

// ---- scenarios ------------------------------------------------------------------------------

/// Collective writes under every partition, in one round and in many: content, chunk bytes and
/// (region, one round) whole files equal the single-process write.

void scenario_write(const std::string& dir);
void scenario_write_parts(const std::string& dir);
void scenario_errors(const std::string& dir);
void scenario_evaluate(const std::string& dir);
void scenario_append(const std::string& dir);
void scenario_kill(const std::string& dir, bool sparse);
void scenario_verify_kill(const std::string& dir, bool sparse);

}  // namespace mpi_check
