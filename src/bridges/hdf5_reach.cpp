// What an HDF5 source may reach besides its own file (hdf5_detail.hpp, Reach): an HDF5 file can
// name other files in three ways, each read with the reader's rights: external links (an object
// of another file), external storage (a dataset's raw bytes in other files) and virtual datasets
// (a dataset mapped from datasets of other files). A file from elsewhere could so read
// /etc/shadow or /proc/self/environ into an export. All three are refused by default, by name;
// OpenOptions::hdf5_external follows them to regular files inside the source file's directory
// only (links resolved, then checked), never to anything else (a FIFO would hang the read).
#include <algorithm>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <string>
#include <vector>

#include <b2nd/error.hpp>

#include "../detail/text.hpp"
#include "hdf5_detail.hpp"

namespace b2nd::bridges::h5 {

namespace {

namespace fs = std::filesystem;
using detail::printable;

constexpr const char* kOptIn =
    "OpenOptions::hdf5_external (b2nd --hdf5-external) follows them to files in the same "
    "directory";

/// Whether `name` (as the HDF5 file spells it) names a regular file inside `dir` (canonical);
/// "" when it does, else why not.
std::string outside(const std::string& dir, const std::string& name) {
    if (name.empty()) {
        return "an empty file name";
    }
    const fs::path p(name);
    if (p.is_absolute()) {
        return "an absolute path";
    }
    for (const fs::path& part : p) {
        if (part == "..") {
            return "a path that climbs out of the directory (..)";
        }
    }
    std::error_code ec;
    const fs::path real = fs::canonical(fs::path(dir) / p, ec);
    if (ec) {
        return "a file that does not exist";
    }
    const std::string r = real.string(), d = dir + "/";
    if (r.compare(0, d.size(), d) != 0) {
        return "a link that leads out of the directory";
    }
    if (!fs::is_regular_file(real, ec)) {
        return "not a regular file";
    }
    return "";
}

}  // namespace

Reach::Reach(const std::string& file, bool external, bool plugins, std::string where)
    : allow_(external), plugins_(plugins), where_(std::move(where)) {
    std::error_code ec;
    const fs::path real = fs::canonical(file, ec);
    dir_ = (ec ? fs::absolute(file, ec) : real).parent_path().string();
    dapl_ = Handle(H5Pcreate(H5P_DATASET_ACCESS), H5Pclose);
    check(dapl_.get(), where_, "cannot make a dataset access property list");
    check(H5Pset_elink_cb(dapl_.get(), &Reach::on_external_link, this), where_,
          "cannot set the external link callback");
    // Relative names of external links, raw data files and virtual sources are looked for here
    // (each is checked to lie here first).
    check(H5Pset_elink_prefix(dapl_.get(), (dir_ + "/").c_str()), where_,
          "cannot set the external link prefix");
    check(H5Pset_efile_prefix(dapl_.get(), dir_.c_str()), where_,
          "cannot set the external file prefix");
    check(H5Pset_virtual_prefix(dapl_.get(), dir_.c_str()), where_,
          "cannot set the virtual dataset prefix");
}

herr_t Reach::on_external_link(const char* /*parent_file*/,
                               const char* parent_group,
                               const char* child_file,
                               const char* child_object,
                               unsigned* acc_flags,
                               hid_t /*fapl*/,
                               void* self) {
    auto* r = static_cast<Reach*>(self);
    const std::string link = "an external link in " + printable(parent_group ? parent_group : "") +
                             " to " + printable(child_object ? child_object : "") + " in \"" +
                             printable(child_file ? child_file : "") + "\"";
    if (!r->allow_) {
        r->refused_ = link + ", which could read any file; " + kOptIn;
        return -1;
    }
    const std::string why = outside(r->dir_, child_file ? child_file : "");
    if (!why.empty()) {
        r->refused_ = link + ": " + why +
                      "; external links are followed only to regular files "
                      "in the file's directory";
        return -1;
    }
    *acc_flags = H5F_ACC_RDONLY;
    return 0;
}

void Reach::throw_refused() {
    if (!refused_.empty()) {
        std::string why;
        why.swap(refused_);
        h5::last_error();
        throw UsageError(where_ + ": " + why);
    }
}

void Reach::check_dataset(hid_t dset, const std::string& where) const {
    Handle dcpl(check(H5Dget_create_plist(dset), where, "no creation properties"), H5Pclose);
    const auto refuse = [&](const std::string& what) { throw UsageError(where + ": " + what); };
    // Filters that neither libhdf5 nor this library decode would have libhdf5 load a plugin.
    for (int i = 0, n = plugins_ ? 0 : H5Pget_nfilters(dcpl.get()); i < n; ++i) {
        unsigned flags = 0, config = 0;
        std::size_t ncd = 0;
        char fname[256] = {};
        const H5Z_filter_t id = H5Pget_filter2(dcpl.get(), static_cast<unsigned>(i), &flags, &ncd,
                                               nullptr, sizeof fname, fname, &config);
        if (id < 0) {
            h5::last_error();
            continue;
        }
        static const H5Z_filter_t kOwn[] = {H5Z_FILTER_DEFLATE,
                                            H5Z_FILTER_SHUFFLE,
                                            H5Z_FILTER_FLETCHER32,
                                            H5Z_FILTER_NBIT,
                                            H5Z_FILTER_SCALEOFFSET,
                                            32000,
                                            32001};
        if (std::find(std::begin(kOwn), std::end(kOwn), id) == std::end(kOwn)) {
            refuse("its filter " + std::to_string(id) + " (\"" + printable(fname) +
                   "\") is decoded only by a plugin, and HDF5 plugins are off "
                   "(OpenOptions::hdf5_plugins)");
        }
    }
    const int nexternal = H5Pget_external_count(dcpl.get());
    for (int i = 0; i < nexternal; ++i) {
        char name[4096] = {};
        off_t offset = 0;
        hsize_t size = 0;
        check(H5Pget_external(dcpl.get(), static_cast<unsigned>(i), sizeof name, name, &offset,
                              &size),
              where, "cannot read its external storage");
        const std::string what = "keeps its data in " +
                                 detail::num(static_cast<std::int64_t>(nexternal)) +
                                 " external file(s), such as \"" + printable(name) + "\"";
        if (!allow_) {
            refuse(what + ", which could be any file; " + kOptIn);
        }
        if (const std::string why = outside(dir_, name); !why.empty()) {
            refuse(what + ": " + why +
                   "; external storage is read only from regular files in "
                   "the file's directory");
        }
    }
    if (H5Pget_layout(dcpl.get()) != H5D_VIRTUAL) {
        return;
    }
    std::size_t n = 0;
    check(H5Pget_virtual_count(dcpl.get(), &n), where, "cannot read its virtual mappings");
    const std::string what =
        "a virtual dataset (" + detail::num(static_cast<std::int64_t>(n)) + " mappings)";
    if (!allow_) {
        refuse(what + ", whose sources could be any file or the dataset itself; " + kOptIn);
    }
    for (std::size_t i = 0; i < n; ++i) {
        const auto text = [&](auto get) {
            const ssize_t len = get(dcpl.get(), i, nullptr, 0);
            std::string s(len > 0 ? static_cast<std::size_t>(len) : 0, '\0');
            if (len > 0) {
                get(dcpl.get(), i, s.data(), s.size() + 1);
            }
            return s;
        };
        const std::string file = text(H5Pget_virtual_filename);
        const std::string name = text(H5Pget_virtual_dsetname);
        const std::string source = "\"" + printable(file) + "\":" + printable(name);
        if (file.find('%') != std::string::npos || name.find('%') != std::string::npos) {
            refuse(what + ": source " + source +
                   " is a printf-style pattern, which this "
                   "library does not follow");
        }
        if (file != ".") {
            if (const std::string why = outside(dir_, file); !why.empty()) {
                refuse(what + ": source " + source + ": " + why +
                       "; virtual sources are read only from regular files in the file's "
                       "directory");
            }
        }
        // A source that is itself virtual may map back here: libhdf5 then recurses until it
        // crashes. Sources are plain datasets, checked by opening them.
        const std::string in_file = file == "." ? std::string() : dir_ + "/" + file;
        Handle f;
        hid_t loc = source_file(dset, in_file, f, where);
        Handle src(H5Dopen2(loc, name.c_str(), dapl_.get()), H5Dclose);
        if (src.get() < 0) {
            h5::last_error();
            refuse(what + ": source " + source + " cannot be opened");
        }
        Handle scpl(H5Dget_create_plist(src.get()), H5Pclose);
        if (scpl.get() < 0 || H5Pget_layout(scpl.get()) == H5D_VIRTUAL) {
            h5::last_error();
            refuse(what + ": source " + source +
                   " is itself a virtual dataset (or the dataset itself), which this library "
                   "does not follow");
        }
    }
}

hid_t Reach::source_file(hid_t dset,
                         const std::string& other,
                         Handle& holder,
                         const std::string& where) const {
    if (other.empty()) {
        holder = Handle(H5Iget_file_id(dset), H5Fclose);
    } else {
        holder = Handle(H5Fopen(other.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
    }
    if (holder.get() < 0) {
        h5::last_error();
        throw UsageError(where + ": a virtual dataset's source file \"" + printable(other) +
                         "\" cannot be opened as HDF5");
    }
    return holder.get();
}

}  // namespace b2nd::bridges::h5
