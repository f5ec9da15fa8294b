// Sharing an array between processes, the reader: follows the array 05_writer.cpp appends to,
// reading the last step each time. With OpenOptions::follow each read first checks whether the
// writer committed (a load from shared memory) and if so adopts the new state; a read always
// sees one whole committed state, never a step in the middle of being written.
//
//   example_06_reader PATH [STEPS]     (stops once STEPS steps are there)
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>

#include <b2nd/b2nd.hpp>

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: example_06_reader PATH [STEPS]\n");
        return 2;
    }
    const std::int64_t steps = argc > 2 ? std::stoll(argv[2]) : 50;
    for (int i = 0; i < 500 && !std::filesystem::exists(argv[1]); ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));  // the writer starts it
    }
    b2nd::OpenOptions o;
    o.follow = true;
    auto field = b2nd::NDArray<float>::open(argv[1], o);  // no lock is held between reads
    std::int64_t seen = 0, torn = 0;
    while (field.shape()[0] < steps) {
        const auto last = field.read({-1, b2nd::Slice::all(), b2nd::Slice::all()});
        const std::int64_t step = field.shape()[0] - 1;
        // A whole step: its first value is the step number (see simulate() in 05_writer.cpp).
        torn += last[0] == static_cast<float>(step) ? 0 : 1;
        seen += 1;
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    std::printf("reader: %lld reads, %lld torn, %lld steps at the end\n",
                static_cast<long long>(seen), static_cast<long long>(torn),
                static_cast<long long>(field.shape()[0]));
    return torn == 0 ? 0 : 1;
}
