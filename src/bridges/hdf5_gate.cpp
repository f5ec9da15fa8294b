// The gate to libhdf5 (hdf5_detail.hpp): its lock, its start, its errors.
#include "hdf5_gate.hpp"

#include <utility>

#include <b2nd/error.hpp>

#include "hdf5_detail.hpp"

namespace b2nd::bridges {

namespace h5 {

std::unique_lock<std::recursive_mutex> lock() {
    static std::recursive_mutex m;
    std::unique_lock<std::recursive_mutex> held(m);
    static const bool started = [] {
        H5open();
        // Failures are reported by our exceptions, with libhdf5's words (last_error), not
        // printed on stderr.
        H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
        register_filters();
        return true;
    }();
    (void)started;
    return held;
}

namespace {

herr_t innermost(unsigned n, const H5E_error2_t* e, void* out) {
    if (n == 0 && e != nullptr && e->desc != nullptr) {
        *static_cast<std::string*>(out) = e->desc;
    }
    return 0;
}

}  // namespace

std::string last_error() {
    std::string s;
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, innermost, &s);
    H5Eclear2(H5E_DEFAULT);
    return s;
}

namespace {

/// libhdf5's innermost message in a user's terms, where it has a known meaning; its own words
/// follow in parentheses.
std::string in_user_terms(const std::string& why) {
    static const std::pair<const char*, const char*> known[] = {
        {"unable to lock file", "another program holds the file open (HDF5's file lock)"},
        {"message type not found",
         "the object lacks metadata it needs (damaged, or written by a "
         "newer HDF5 than 1.10 reads)"},
        {"component not found", "no object of that name in the file"},
        {"bad object header version number", "an object header is damaged"},
        {"can't open directory", "a filter this dataset needs is not installed (an HDF5 plugin)"},
        {"required filter", "a filter this dataset needs is not installed (an HDF5 plugin)"},
        {"file signature not found", "not an HDF5 file"},
        {"truncated file", "the file is truncated"},
    };
    for (const auto& [text, meaning] : known) {
        if (why.find(text) != std::string::npos) {
            return std::string(meaning) + " (libhdf5: " + why + ")";
        }
    }
    return "libhdf5: " + why;
}

}  // namespace

hid_t check(hid_t id, const std::string& where, const std::string& what) {
    if (id < 0) {
        const std::string why = last_error();
        throw FormatError(where + ": " + what +
                          (why.empty() ? "" : " (" + in_user_terms(why) + ")"));
    }
    return id;
}

}  // namespace h5

}  // namespace b2nd::bridges

namespace b2nd {

bool have_hdf5() noexcept {
    return true;
}

}  // namespace b2nd
