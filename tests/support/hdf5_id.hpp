// Tests that write HDF5 files with libhdf5's C API: an identifier closed at scope exit.
#pragma once

#include <hdf5.h>

namespace b2nd::test {

/// Closes an HDF5 identifier at scope exit.
struct Id {
    hid_t id;
    herr_t (*close)(hid_t);
    ~Id() {
        if (id >= 0) {
            close(id);
        }
    }
    operator hid_t() const { return id; }  // NOLINT: used as the identifier it holds
};

}  // namespace b2nd::test
