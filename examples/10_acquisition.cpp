// Acquisition (docs/appending.md): a detector's frames appended one at a time as they arrive,
// each chunk of 16 frames encoded once while the next frames come in, flushed every second so
// that a reader (or a crash) sees every frame up to the last flush. Works in a temporary
// directory that it removes (or in the directory given as argument, kept).
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include <b2nd/appender.hpp>
#include <b2nd/b2nd.hpp>

#include "example_dir.hpp"

namespace {

/// A stand-in for a camera: frame k of 512 x 512 pixels.
void grab(std::int64_t k, std::vector<std::uint16_t>& frame) {
    for (std::size_t i = 0; i < frame.size(); ++i) {
        const auto at = static_cast<std::int64_t>(i);
        frame[i] = static_cast<std::uint16_t>(100 + (at % 512 + at / 512) / 8 + (k * 7 + at) % 5);
    }
}

}  // namespace

int main(int argc, char** argv) {
    const ExampleDir dir = argc > 1 ? ExampleDir(argv[1]) : ExampleDir();
    const std::string path = dir.path() + "/run.b2nd";

    b2nd::CreateOptions options;
    options.chunk_shape = {16, 512, 512};  // 16 frames per chunk: each encoded once, when full
    options.compression = b2nd::CompressionParams{b2nd::Codec::lz4, 5};
    auto run = b2nd::NDArray<std::uint16_t>::create(path, {0, 512, 512}, options);

    b2nd::Appender<std::uint16_t> app(run, /*axis=*/0);
    std::vector<std::uint16_t> frame(512 * 512);
    auto last_flush = std::chrono::steady_clock::now();
    for (std::int64_t k = 0; k < 100; ++k) {
        grab(k, frame);
        app.push(frame.data(), 1);  // copied: the frame's buffer is free again at once
        if (std::chrono::steady_clock::now() - last_flush > std::chrono::seconds(1)) {
            app.flush();  // durable, and seen by readers: every frame so far
            last_flush = std::chrono::steady_clock::now();
        }
    }
    app.close();  // the last, partial chunk committed

    const auto back = b2nd::NDArray<std::uint16_t>::open(path);
    std::vector<std::uint16_t> want(512 * 512);
    grab(99, want);
    const auto last = back.read(b2nd::Box::region({99, 0, 0}, {1, 512, 512}));
    std::printf("%lld frames, the last one %s\n", static_cast<long long>(back.shape()[0]),
                last == want ? "as pushed" : "DIFFERS");
    return back.shape()[0] == 100 && last == want ? 0 : 1;
}
