// python-blosc2 stores and objects (docs/stores.md):
//  1. a TreeStore written from C++: two runs of a simulation, a group attribute;
//  2. read back as python-blosc2 would (keys, a leaf, a slice, the attributes);
//  3. packed to a directory store and listed.
// Works in a temporary directory that it removes (or in the directory given as argument, kept,
// for python-blosc2 to read: `blosc2.TreeStore("DIR/runs.b2z", mode="r")`).
#include <cstdio>
#include <string>
#include <vector>

#include <b2nd/b2nd.hpp>
#include <b2nd/store.hpp>

#include "example_dir.hpp"

int main(int argc, char** argv) {
    const ExampleDir dir = argc > 1 ? ExampleDir(argv[1]) : ExampleDir();
    const std::string path = dir.path() + "/runs.b2z";

    // 1. Two runs of a 100 x 200 temperature field, and the units of the group.
    b2nd::StoreOptions opts;
    opts.threshold = 64 * 1024;  // python's rule: values of 64 KiB or more get a file of their own
    opts.overwrite = true;
    auto w = b2nd::StoreWriter::create(path, opts);
    for (int run = 1; run <= 2; ++run) {
        auto t = b2nd::NDArray<float>::create_in_memory({100, 200});
        std::vector<float> v(100 * 200);
        for (std::size_t i = 0; i < v.size(); ++i) {
            v[i] = 280.0f + static_cast<float>(run) + static_cast<float>(i % 200) * 0.01f;
        }
        t.write(b2nd::Box::whole({100, 200}), v);
        w.put("/run" + std::to_string(run) + "/temperature", t.any());
    }
    w.put("/station", b2nd::NDArray<std::int32_t>::create_in_memory({3}).any());  // embedded
    w.set_vlmeta("/", "title", b2nd::Value("two runs"));
    w.set_vlmeta("/run1", "units", b2nd::Value("K"));
    w.commit();

    // 2. Read it back as python-blosc2 reads it.
    const b2nd::Store s = b2nd::Store::open(path);
    for (const b2nd::StoreEntry& e : s.entries()) {
        std::printf("%-22s %-8s %s\n", e.key.c_str(), e.kind.c_str(), b2nd::to_string(e.storage));
    }
    const auto t2 = s.open<float>("/run2/temperature");
    const std::vector<float> row = t2.read(b2nd::parse_selection("5, 0:3"));
    std::printf("run2[5, 0:3] = %.2f %.2f %.2f\n", static_cast<double>(row[0]),
                static_cast<double>(row[1]), static_cast<double>(row[2]));
    std::printf("units of /run1: %s\n", s.vlmeta("/run1").at(0).second.to_json().c_str());

    // 3. The same store as a directory (python's to_b2d).
    b2nd::pack_store(path, dir.path() + "/runs.b2d", true);
    std::printf("as a directory: %zu keys\n",
                b2nd::Store::open(dir.path() + "/runs.b2d").entries().size());
    return 0;
}
