// b2nd export to other formats: an HDF5 dataset (OUT.h5:/path) or a Zarr array (OUT.zarr).
#include <iostream>
#include <memory>

#include <b2nd/any_array.hpp>
#include <b2nd/error.hpp>

#include "../bridges/hdf5_gate.hpp"
#include "cli.hpp"
#include "progress.hpp"

namespace b2nd::cli {

bool bridge_output(const std::string& out) {
    return bridges::hdf5_location(out).has_value();
}

int export_bridge(const Args& a, const std::string& in_path, const std::string& out) {
    for (const char* opt : {"--slice", "--points", "--mask", "--field"}) {
        if (a.has(opt)) {
            throw ArgError(std::string(opt) +
                           " writes .npy files; an HDF5 or Zarr export is of "
                           "the whole array");
        }
    }
    const AnyArray in = open_input(in_path, input_options(a));
    std::unique_ptr<ProgressBar> bar;
    const auto progress = [&](std::int64_t done, std::int64_t total) {
        if (!bar && ProgressBar::enabled()) {
            bar = std::make_unique<ProgressBar>("export", total,
                                                static_cast<double>(in.grid().chunk_nbytes()));
        }
        if (bar) {
            bar->update(done);
        }
    };
    const auto at = bridges::hdf5_location(out);
    bridges::Hdf5Export o;
    o.overwrite = a.has("--overwrite");
    o.gzip_level = static_cast<int>(a.get_int("--clevel", 4, 0, 9));
    o.progress = progress;
    bridges::export_hdf5(in, *at, o);
    return 0;
}

}  // namespace b2nd::cli
