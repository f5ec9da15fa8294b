// What the worker's "appender" scenario (worker.cpp) pushes, for the tests that watch it.
#pragma once

#include <cstdint>

namespace b2nd::test {

/// The rows committed after m flushes: the worker pushes k % 7 + 1 rows before flush k.
inline std::int64_t appended_rows_after(std::int64_t m) {
    std::int64_t rows = 0;
    for (std::int64_t k = 0; k < m; ++k) {
        rows += k % 7 + 1;
    }
    return rows;
}

}  // namespace b2nd::test
