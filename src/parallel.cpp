// b2nd::parallel_for (include/b2nd/parallel.hpp), over the library's shared pool
// (detail/thread_pool.hpp).
#include <algorithm>
#include <thread>

#include <b2nd/parallel.hpp>

#include "detail/thread_pool.hpp"

namespace b2nd {

void parallel_for(std::size_t n, int nthreads, const std::function<void(std::size_t)>& fn) {
    if (nthreads <= 0) {
        nthreads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    }
    detail::parallel_for(n, nthreads, fn);
}

}  // namespace b2nd
