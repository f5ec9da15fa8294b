// What is said of HDF5 files without reading their data: the members of a file or group
// (list_hdf5, `b2nd ls FILE.h5`), every link under it, recursively through hard-linked groups,
// as `h5ls -r` lists them (soft and external links listed with their targets and never
// followed: an external link may name any file); a dataset's storage (hdf5_summary, `b2nd info`):
// layout, maximum shape, filters, fill value, stored size.
#include <b2nd/bridges.hpp>
#include <b2nd/error.hpp>
#include <b2nd/value.hpp>

#include "../detail/text.hpp"
#include "hdf5_detail.hpp"
#include "hdf5_gate.hpp"

namespace b2nd {

namespace {

using bridges::h5::Handle;

struct Visit {
    std::string prefix;          // the group listed ("" for the root)
    hid_t access = H5P_DEFAULT;  // the Reach's: other files reached only inside the directory
    std::vector<HierarchyEntry> out;
};

/// A dataset's shape, dtype (or why it has none here), chunks and stored size.
void describe_dataset(hid_t group, const char* name, hid_t access, HierarchyEntry& e) {
    namespace h5 = bridges::h5;
    Handle d(H5Dopen2(group, name, access), H5Dclose);
    if (d.get() < 0) {
        e.note = "cannot be opened (" + h5::last_error() + ")";
        return;
    }
    Handle space(H5Dget_space(d.get()), H5Sclose);
    const int rank = space.get() < 0 ? -1 : H5Sget_simple_extent_ndims(space.get());
    if (rank >= 0 && rank <= kMaxNdim) {
        hsize_t dims[kMaxNdim] = {};
        H5Sget_simple_extent_dims(space.get(), dims, nullptr);
        e.shape.assign(dims, dims + rank);
    }
    if (space.get() >= 0 && H5Sget_simple_extent_type(space.get()) == H5S_NULL) {
        e.note = "an empty (null) dataspace";
    }
    Handle type(H5Dget_type(d.get()), H5Tclose);
    try {
        e.dtype = h5::descr_of(type.get(), e.path);
    } catch (const Error& x) {
        const std::string why = x.what();
        const std::string lead = e.path + ": ";
        e.note = why.compare(0, lead.size(), lead) == 0 ? why.substr(lead.size()) : why;
    }
    Handle dcpl(H5Dget_create_plist(d.get()), H5Pclose);
    if (rank > 0 && rank <= kMaxNdim && H5Pget_layout(dcpl.get()) == H5D_CHUNKED) {
        hsize_t c[kMaxNdim] = {};
        H5Pget_chunk(dcpl.get(), rank, c);
        e.chunks.assign(c, c + rank);
    }
    e.stored = static_cast<std::int64_t>(H5Dget_storage_size(d.get()));
    h5::last_error();
}

herr_t visit(hid_t group, const char* name, const H5L_info_t* info, void* data) {
    namespace h5 = bridges::h5;
    auto& v = *static_cast<Visit*>(data);
    HierarchyEntry e;
    e.path = v.prefix + "/" + name;
    if (info->type == H5L_TYPE_SOFT || info->type == H5L_TYPE_EXTERNAL) {
        std::string value(info->u.val_size, '\0');
        if (H5Lget_val(group, name, value.data(), value.size(), H5P_DEFAULT) < 0) {
            h5::last_error();
            value.clear();
        }
        if (info->type == H5L_TYPE_SOFT) {
            e.kind = "soft link";
            e.note = value.c_str();
        } else {
            e.kind = "external link";
            const char* file = nullptr;
            const char* object = nullptr;
            if (!value.empty() &&
                H5Lunpack_elink_val(value.data(), value.size(), nullptr, &file, &object) >= 0) {
                e.note = std::string(file) + ":" + object;
            }
            h5::last_error();
        }
        v.out.push_back(std::move(e));
        return 0;
    }
    if (info->type != H5L_TYPE_HARD) {
        e.kind = "link of a user-defined class";
        v.out.push_back(std::move(e));
        return 0;
    }
    H5O_info_t o{};
    if (H5Oget_info_by_name2(group, name, &o, H5O_INFO_BASIC, H5P_DEFAULT) < 0) {
        e.kind = "object";
        e.note = "cannot be looked at (" + h5::last_error() + ")";
    } else if (o.type == H5O_TYPE_GROUP) {
        e.kind = "group";
    } else if (o.type == H5O_TYPE_DATASET) {
        e.kind = "dataset";
        describe_dataset(group, name, v.access, e);
    } else if (o.type == H5O_TYPE_NAMED_DATATYPE) {
        e.kind = "datatype";
    } else {
        e.kind = "object";
    }
    v.out.push_back(std::move(e));
    return 0;
}

/// `file` opened read-only, checked to be HDF5 first (the lock held).
Handle open_file(const std::string& file, const std::string& where) {
    bridges::h5::check_file(file, where);
    return Handle(bridges::h5::check(H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), where,
                                     "cannot open the HDF5 file"),
                  H5Fclose);
}

/// Checks each link on the way to `path` ("/" has none): it exists and is a hard link (a soft or
/// external one is listed with what holds it, never followed). \throws UsageError naming it
void hard_links_to(hid_t file, const std::string& path, const std::string& where) {
    if (path == "/") {
        return;
    }
    for (std::size_t slash = path.find('/', 1);; slash = path.find('/', slash + 1)) {
        const std::string part = path.substr(0, slash);
        H5L_info_t link{};
        if (H5Lexists(file, part.c_str(), H5P_DEFAULT) <= 0 ||
            H5Lget_info(file, part.c_str(), &link, H5P_DEFAULT) < 0) {
            bridges::h5::last_error();
            throw UsageError(where + ": " + part + " does not exist");
        }
        if (link.type != H5L_TYPE_HARD) {
            throw UsageError(where + ": " + part +
                             " is a link, listed with the group that holds it and never followed");
        }
        if (slash == std::string::npos) {
            return;
        }
    }
}

}  // namespace

Value::Map hdf5_attributes(const std::string& location) {
    namespace h5 = bridges::h5;
    const auto at = bridges::hdf5_location(location);
    if (!at) {
        throw UsageError(detail::quoted_path(location) + ": not an HDF5 file or location");
    }
    std::string path = at->dataset.empty() ? "/" : at->dataset;
    const std::string where = detail::quoted_path(at->file + (path == "/" ? "" : ":" + path));
    auto held = h5::lock();
    const Handle file = open_file(at->file, where);
    hard_links_to(file.get(), path, where);
    const Handle obj(
        h5::check(H5Oopen(file.get(), path.c_str(), H5P_DEFAULT), where, "cannot open " + path),
        H5Oclose);
    return h5::read_attributes(obj.get(), where);
}

std::vector<HierarchyEntry> list_hdf5(const std::string& location) {
    namespace h5 = bridges::h5;
    const auto at = bridges::hdf5_location(location);
    if (!at) {
        throw UsageError(detail::quoted_path(location) +
                         ": not an HDF5 file (FILE.h5, or FILE.h5:/group; also .hdf5, .he5, "
                         ".nc and files HDF5's signature marks)");
    }
    std::string group = at->dataset.empty() ? "/" : at->dataset;
    while (group.size() > 1 && group.back() == '/') {
        group.pop_back();
    }
    const std::string where = detail::quoted_path(at->file);
    auto held = h5::lock();
    const Handle file = open_file(at->file, where);
    // Datasets are opened to be described, never read: what a virtual dataset or external
    // storage names is reached, if at all, only inside the file's directory.
    h5::Reach reach(at->file, false, true, where);
    if (group != "/") {
        hard_links_to(file.get(), group, where);
        H5O_info_t o{};
        h5::check(H5Oget_info_by_name2(file.get(), group.c_str(), &o, H5O_INFO_BASIC, H5P_DEFAULT),
                  where, "cannot look at " + group);
        if (o.type == H5O_TYPE_DATASET) {
            // A dataset lists itself, as h5ls FILE/DATASET.
            HierarchyEntry e;
            e.path = group;
            e.kind = "dataset";
            describe_dataset(file.get(), group.c_str(), reach.access(), e);
            return {e};
        }
        if (o.type != H5O_TYPE_GROUP) {
            throw UsageError(where + ": " + group + " is neither a group nor a dataset");
        }
    }
    const Handle g(
        h5::check(H5Gopen2(file.get(), group.c_str(), H5P_DEFAULT), where, "cannot open " + group),
        H5Gclose);
    Visit v;
    v.prefix = group == "/" ? "" : group;
    v.access = reach.access();
    h5::check(H5Lvisit(g.get(), H5_INDEX_NAME, H5_ITER_INC, visit, &v), where,
              "cannot list " + group);
    return std::move(v.out);
}

}  // namespace b2nd

namespace b2nd::bridges {

using h5::Handle;

namespace {

/// "shuffle, deflate(4)": a dataset's filters as h5ls names them, with their main parameter.
std::string filters_text(hid_t dcpl) {
    std::string out;
    const int n = H5Pget_nfilters(dcpl);
    for (int i = 0; i < n; ++i) {
        unsigned flags = 0;
        unsigned cd[8] = {};
        std::size_t ncd = 8;
        char name[128] = {};
        unsigned config = 0;
        const H5Z_filter_t id = H5Pget_filter2(dcpl, static_cast<unsigned>(i), &flags, &ncd, cd,
                                               sizeof name, name, &config);
        std::string f;
        switch (id) {
            case H5Z_FILTER_DEFLATE:
                f = "deflate(" + std::to_string(ncd > 0 ? cd[0] : 0) + ")";
                break;
            case H5Z_FILTER_SHUFFLE:
                f = "shuffle";
                break;
            case H5Z_FILTER_FLETCHER32:
                f = "fletcher32";
                break;
            case H5Z_FILTER_SZIP:
                f = "szip";
                break;
            case H5Z_FILTER_NBIT:
                f = "nbit";
                break;
            case H5Z_FILTER_SCALEOFFSET:
                f = "scaleoffset";
                break;
            default:
                f = (name[0] != '\0' ? std::string(name) : std::string("filter")) + " (id " +
                    std::to_string(id) + ")";
        }
        out += (out.empty() ? "" : ", ") + f;
    }
    return out.empty() ? "none" : out;
}

}  // namespace

Value hdf5_summary(const Hdf5Location& at, const OpenOptions& o) {
    const std::string where = detail::quoted_path(at.file + ":" + at.dataset);
    auto held = h5::lock();
    h5::check_file(at.file, where);
    h5::Reach reach(at.file, o.hdf5_external, o.hdf5_plugins, where);
    const Handle file(h5::check(H5Fopen(at.file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), where,
                                "cannot open the HDF5 file"),
                      H5Fclose);
    const hid_t opened = H5Dopen2(file.get(), at.dataset.c_str(), reach.access());
    reach.throw_refused();
    const Handle d(h5::check(opened, where, "cannot open the dataset"), H5Dclose);
    const Handle type(h5::check(H5Dget_type(d.get()), where, "no datatype"), H5Tclose);
    const Handle space(h5::check(H5Dget_space(d.get()), where, "no dataspace"), H5Sclose);
    const Handle dcpl(h5::check(H5Dget_create_plist(d.get()), where, "no creation properties"),
                      H5Pclose);
    const int rank = H5Sget_simple_extent_ndims(space.get());
    hsize_t dims[kMaxNdim] = {};
    hsize_t most[kMaxNdim] = {};
    if (rank > 0 && rank <= kMaxNdim) {
        H5Sget_simple_extent_dims(space.get(), dims, most);
    }
    Value::Map out;
    out.emplace_back("format", "HDF5");
    out.emplace_back("dataset", at.dataset);
    Value::Array maxshape;
    for (int i = 0; i < rank && i <= kMaxNdim; ++i) {
        maxshape.push_back(most[i] == H5S_UNLIMITED ? Value() : Value(std::int64_t(most[i])));
    }
    out.emplace_back("maxshape", Value(std::move(maxshape)));
    const H5D_layout_t layout = H5Pget_layout(dcpl.get());
    out.emplace_back("layout", layout == H5D_CHUNKED   ? "chunked"
                               : layout == H5D_COMPACT ? "compact"
                               : layout == H5D_VIRTUAL ? "virtual"
                                                       : "contiguous");
    out.emplace_back("filters", filters_text(dcpl.get()));
    H5D_fill_value_t defined = H5D_FILL_VALUE_UNDEFINED;
    H5Pfill_value_defined(dcpl.get(), &defined);
    const std::size_t item = H5Tget_size(type.get());
    if (defined != H5D_FILL_VALUE_UNDEFINED && item > 0 && item <= 4096) {
        std::vector<std::uint8_t> fill(item);
        if (H5Pget_fill_value(dcpl.get(), type.get(), fill.data()) >= 0) {
            out.emplace_back("fill_value", Value::binary(std::move(fill)));
        }
    }
    out.emplace_back("stored", static_cast<std::int64_t>(H5Dget_storage_size(d.get())));
    Value::Map left_out;
    h5::read_attributes(d.get(), where, nullptr, &left_out);
    if (!left_out.empty()) {
        out.emplace_back("attributes_left_out", Value::map(std::move(left_out)));
    }
    h5::last_error();
    return Value::map(std::move(out));
}

}  // namespace b2nd::bridges
