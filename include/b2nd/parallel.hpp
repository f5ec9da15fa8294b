// b2nd::parallel_for: the library's thread pool, for callers' own data-parallel loops.
#pragma once

#include <cstddef>
#include <functional>

namespace b2nd {

/// Runs fn(i) for every i in [0, n) on up to `nthreads` threads of b2nd-cpp's shared pool (the
/// caller included; 0: one per core) and returns when all are done. The first exception thrown
/// by fn is rethrown here. Calls may nest: the caller always works on its own loop.
void parallel_for(std::size_t n, int nthreads, const std::function<void(std::size_t)>& fn);

}  // namespace b2nd
