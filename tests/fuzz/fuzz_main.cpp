// Replay main for fuzz targets built without libFuzzer: runs the target on every file (or every
// file of every directory) named on the command line.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

int run_file(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    if (!in) {
        std::fprintf(stderr, "cannot open %s\n", p.c_str());
        return 1;
    }
    const std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                                          std::istreambuf_iterator<char>());
    LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    int files = 0;
    int errors = 0;
    for (int i = 1; i < argc; ++i) {
        const std::filesystem::path arg(argv[i]);
        if (std::filesystem::is_directory(arg)) {
            for (const auto& e : std::filesystem::recursive_directory_iterator(arg)) {
                const auto ext = e.path().extension();
                if (e.is_regular_file() && ext != ".bin" && ext != ".npy" && ext != ".json" &&
                    ext != ".jsonl" && ext != ".md") {
                    errors += run_file(e.path());
                    ++files;
                }
            }
        } else if (std::filesystem::exists(arg)) {
            errors += run_file(arg);
            ++files;
        }
    }
    std::printf("replayed %d inputs\n", files);
    return errors == 0 ? 0 : 1;
}
