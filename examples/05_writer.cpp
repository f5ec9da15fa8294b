// Sharing an array between processes, the writer: a simulation appending one time step at a
// time to an array that other processes read while it runs (see 06_reader.cpp, and docs/sharing.md,
// "Sharing an array between processes"). Every append is one commit; readers see whole steps.
//
//   example_05_writer PATH [STEPS]
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include <b2nd/b2nd.hpp>

std::vector<float> simulate(int step) {  // a 64 x 64 field that moves with time
    std::vector<float> plane(64 * 64);
    for (std::size_t k = 0; k < plane.size(); ++k) {
        plane[k] = static_cast<float>(step) + 0.5f * std::sin(0.1f * static_cast<float>(k));
    }
    return plane;
}

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: example_05_writer PATH [STEPS]\n");
        return 2;
    }
    const int steps = argc > 2 ? std::stoi(argv[2]) : 50;
    b2nd::CreateOptions o;
    o.chunk_shape = {8, 64, 64};
    o.overwrite = true;
    auto field = b2nd::NDArray<float>::create_from(argv[1], {1, 64, 64}, simulate(0), o);
    for (int step = 1; step < steps; ++step) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));  // the simulation's work
        field.append(0, simulate(step));                            // one commit per step
    }
    std::printf("writer: %d steps written\n", steps);
    return 0;
}
