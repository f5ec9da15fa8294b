// A build without libhdf5: HDF5 locations are refused, naming what is missing.
#include <b2nd/error.hpp>

#include "../detail/text.hpp"
#include "hdf5_gate.hpp"

namespace b2nd::bridges {

namespace {

[[noreturn]] void refuse(const std::string& file) {
    throw UnsupportedError(detail::quoted_path(file) +
                           ": this build has no libhdf5 (install libhdf5-dev and rebuild "
                           "b2nd-cpp to read and write HDF5)");
}

}  // namespace

AnyArray open_hdf5(const Hdf5Location& at, const OpenOptions&) {
    refuse(at.file);
}

Value hdf5_summary(const Hdf5Location& at, const OpenOptions&) {
    refuse(at.file);
}

void export_hdf5(const AnyArray&, const Hdf5Location& at, const Hdf5ExportOptions&) {
    refuse(at.file);
}

}  // namespace b2nd::bridges

namespace b2nd {

Value::Map hdf5_attributes(const std::string& location) {
    const auto at = bridges::hdf5_location(location);
    bridges::refuse(at ? at->file : location);
}

std::vector<HierarchyEntry> list_hdf5(const std::string& location) {
    const auto at = bridges::hdf5_location(location);
    bridges::refuse(at ? at->file : location);
}

bool have_hdf5() noexcept {
    return false;
}

}  // namespace b2nd
