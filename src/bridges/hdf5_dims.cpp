// The structure netCDF-4 (and h5py's `dims`) keeps beside an HDF5 dataset's values: dimension
// scales attached to its dimensions, the datasets a scale is attached to, netCDF's dimension ids,
// the dataset's fill value and the file's global attributes. Read into the attributes an import
// carries (carried_attributes); kept when a dataset is replaced (DimensionTies); restored on
// export where a file has the scales an array's dimension names name (attach_named).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

#include <b2nd/error.hpp>

#include "../detail/text.hpp"
#include "bridges.hpp"
#include "hdf5_detail.hpp"
#include <hdf5_hl.h>

namespace b2nd::bridges::h5 {

namespace {

using detail::num;

constexpr const char* kNetcdfDimensionOnly = "This is a netCDF dimension but not a netCDF variable";

/// The name a path ends with ("/grid/lat" -> "lat").
std::string basename_of(const std::string& path) {
    const std::size_t slash = path.rfind('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

/// The path libhdf5 knows `obj` by ("" when it has none).
std::string path_of(hid_t obj) {
    const ssize_t n = H5Iget_name(obj, nullptr, 0);
    if (n <= 0) {
        last_error();
        return {};
    }
    std::string s(static_cast<std::size_t>(n) + 1, '\0');
    H5Iget_name(obj, s.data(), s.size());
    s.resize(static_cast<std::size_t>(n));
    return s;
}

std::vector<hsize_t> extent(hid_t dset, std::vector<hsize_t>* maxdims) {
    Handle space(H5Dget_space(dset), H5Sclose);
    const int rank = space.get() < 0 ? -1 : H5Sget_simple_extent_ndims(space.get());
    if (rank <= 0) {
        return {};
    }
    std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
    std::vector<hsize_t> max(static_cast<std::size_t>(rank));
    H5Sget_simple_extent_dims(space.get(), dims.data(), max.data());
    if (maxdims != nullptr) {
        *maxdims = max;
    }
    return dims;
}

/// Whether the attribute `name` of `obj`, where it has one, is of type class `cls` with
/// `points` elements (-1: any number); `check_type` looks further at its type.
bool record_is(hid_t obj,
               const char* name,
               H5T_class_t cls,
               hssize_t points,
               bool (*check_type)(hid_t) = nullptr) {
    if (H5Aexists(obj, name) <= 0) {
        last_error();
        return true;
    }
    Handle attr(H5Aopen(obj, name, H5P_DEFAULT), H5Aclose);
    Handle type(attr.get() < 0 ? -1 : H5Aget_type(attr.get()), H5Tclose);
    Handle space(attr.get() < 0 ? -1 : H5Aget_space(attr.get()), H5Sclose);
    const bool ok = type.get() >= 0 && space.get() >= 0 && H5Tget_class(type.get()) == cls &&
                    H5Sget_simple_extent_ndims(space.get()) <= 1 &&
                    (points < 0 || H5Sget_simple_extent_npoints(space.get()) == points) &&
                    (check_type == nullptr || check_type(type.get()));
    last_error();
    return ok;
}

bool object_references(hid_t vlen) {
    Handle base(H5Tget_super(vlen), H5Tclose);
    return base.get() >= 0 && H5Tequal(base.get(), H5T_STD_REF_OBJ) > 0;
}

bool reference_dimension_pairs(hid_t compound) {
    if (H5Tget_nmembers(compound) != 2) {
        return false;
    }
    Handle ref(H5Tget_member_type(compound, 0), H5Tclose);
    Handle dim(H5Tget_member_type(compound, 1), H5Tclose);
    return ref.get() >= 0 && dim.get() >= 0 && H5Tequal(ref.get(), H5T_STD_REF_OBJ) > 0 &&
           H5Tget_class(dim.get()) == H5T_INTEGER;
}

/// "" when the dimension-scale records `obj` has are of the types libhdf5's H5DS functions
/// assume (they read them without checking: a DIMENSION_LIST of integers crashes
/// H5DSiterate_scales), else which is not.
std::string unsound_records(hid_t obj) {
    const auto rank = static_cast<hssize_t>(extent(obj, nullptr).size());
    if (!record_is(obj, "DIMENSION_LIST", H5T_VLEN, rank, object_references)) {
        return "DIMENSION_LIST is not a list of references per dimension";
    }
    if (!record_is(obj, "REFERENCE_LIST", H5T_COMPOUND, -1, reference_dimension_pairs)) {
        return "REFERENCE_LIST is not a list of (reference, dimension)";
    }
    if (!record_is(obj, "DIMENSION_LABELS", H5T_STRING, rank)) {
        return "DIMENSION_LABELS is not a string per dimension";
    }
    for (const char* name : {"CLASS", "NAME"}) {
        if (!record_is(obj, name, H5T_STRING, 1)) {
            return std::string(name) + " is not a string";
        }
    }
    return {};
}

/// A scale's NAME attribute ("" when it has none).
std::string scale_name(hid_t scale) {
    if (!unsound_records(scale).empty()) {
        return {};
    }
    const ssize_t n = H5DSget_scale_name(scale, nullptr, 0);
    if (n <= 0) {
        last_error();
        return {};
    }
    std::string s(static_cast<std::size_t>(n) + 1, '\0');
    H5DSget_scale_name(scale, s.data(), s.size());
    s.resize(std::strlen(s.c_str()));
    return s;
}

herr_t collect_scale(hid_t, unsigned, hid_t scale, void* out) {
    static_cast<std::vector<std::string>*>(out)->push_back(path_of(scale));
    return 0;
}

/// The paths of the scales attached to dimension `d` of `dset`.
std::vector<std::string> scales_of(hid_t dset, unsigned d) {
    std::vector<std::string> out;
    if (unsound_records(dset).empty() && H5DSget_num_scales(dset, d) > 0) {
        H5DSiterate_scales(dset, d, nullptr, collect_scale, &out);
    }
    last_error();
    out.erase(std::remove(out.begin(), out.end(), std::string()), out.end());
    return out;
}

/// A dimension's name: the scale attached to it (its NAME, or the name of its dataset for
/// netCDF's dimension-only scales, as netCDF names the dimension), else its label; "" for none.
std::string dimension_name(hid_t file, hid_t dset, unsigned d) {
    for (const std::string& s : scales_of(dset, d)) {
        Handle scale(H5Dopen2(file, s.c_str(), H5P_DEFAULT), H5Dclose);
        if (scale.get() < 0) {
            last_error();
            continue;
        }
        const std::string name = scale_name(scale.get());
        return name.empty() || name.rfind(kNetcdfDimensionOnly, 0) == 0 ? basename_of(s) : name;
    }
    const ssize_t n = unsound_records(dset).empty() ? H5DSget_label(dset, d, nullptr, 0) : 0;
    if (n > 0) {
        std::string s(static_cast<std::size_t>(n) + 1, '\0');
        H5DSget_label(dset, d, s.data(), s.size());
        s.resize(std::strlen(s.c_str()));
        return s;
    }
    last_error();
    return {};
}

std::vector<RawAttribute> netcdf_ids(hid_t dset) {
    std::vector<RawAttribute> out;
    for (const char* name : {"_Netcdf4Dimid", "_Netcdf4Coordinates"}) {
        if (H5Aexists(dset, name) <= 0) {
            continue;
        }
        Handle attr(H5Aopen(dset, name, H5P_DEFAULT), H5Aclose);
        RawAttribute r{name,
                       Handle(H5Aget_type(attr.get()), H5Tclose),
                       Handle(H5Aget_space(attr.get()), H5Sclose),
                       {}};
        const hssize_t n = H5Sget_simple_extent_npoints(r.space.get());
        if (attr.get() < 0 || r.type.get() < 0 || r.space.get() < 0 ||
            H5Tget_class(r.type.get()) != H5T_INTEGER || n < 0 || n > 4096) {
            continue;
        }
        r.data.resize(static_cast<std::size_t>(n) * H5Tget_size(r.type.get()));
        if (H5Aread(attr.get(), r.type.get(), r.data.data()) >= 0) {
            out.push_back(std::move(r));
        }
    }
    last_error();
    return out;
}

}  // namespace

// ---- what an import carries ----

void carried_attributes(
    hid_t file, hid_t dset, const DType& dtype, Value::Map& attrs, const std::string& where) {
    const auto has = [&](const char* key) {
        return std::any_of(attrs.begin(), attrs.end(),
                           [&](const auto& e) { return e.first == key; });
    };
    // The dataset's own fill value, where it is one a user chose and not zero: what unwritten
    // parts read as, and what netCDF keeps as _FillValue.
    Handle dcpl(H5Dget_create_plist(dset), H5Pclose);
    H5D_fill_value_t defined = H5D_FILL_VALUE_UNDEFINED;
    const DType::Kind kind = dtype.kind();
    if (!has(kFillValueKey) && dcpl.get() >= 0 &&
        H5Pfill_value_defined(dcpl.get(), &defined) >= 0 &&
        defined == H5D_FILL_VALUE_USER_DEFINED) {
        if (kind == DType::Kind::float_) {
            double f = 0;
            if (H5Pget_fill_value(dcpl.get(), H5T_NATIVE_DOUBLE, &f) >= 0 && !(f == 0)) {
                attrs.emplace_back(kFillValueKey, f);
            }
        } else if (kind == DType::Kind::int_) {
            std::int64_t i = 0;
            if (H5Pget_fill_value(dcpl.get(), H5T_NATIVE_INT64, &i) >= 0 && i != 0) {
                attrs.emplace_back(kFillValueKey, i);
            }
        } else if (kind == DType::Kind::uint) {
            std::uint64_t u = 0;
            if (H5Pget_fill_value(dcpl.get(), H5T_NATIVE_UINT64, &u) >= 0 && u != 0) {
                attrs.emplace_back(kFillValueKey, u);
            }
        }
    }
    last_error();
    // Its dimensions' names, when every dimension has one.
    if (!has(kDimensionsKey)) {
        const std::vector<hsize_t> dims = extent(dset, nullptr);
        Value::Array names;
        for (unsigned d = 0; d < dims.size(); ++d) {
            std::string n = dimension_name(file, dset, d);
            if (n.empty()) {
                names.clear();
                break;
            }
            names.emplace_back(std::move(n));
        }
        if (!names.empty()) {
            attrs.emplace_back(kDimensionsKey, Value(std::move(names)));
        }
    }
    // The file's global attributes (its root group's: netCDF's), in one entry.
    if (!has(kGlobalsKey)) {
        Handle root(H5Gopen2(file, "/", H5P_DEFAULT), H5Gclose);
        if (root.get() >= 0) {
            Value::Map dtypes;
            Value::Map globals = read_attributes(root.get(), where + " (root group)", &dtypes);
            if (!dtypes.empty()) {
                globals.emplace_back(kAttributeDtypesKey, Value::map(std::move(dtypes)));
            }
            if (!globals.empty()) {
                attrs.emplace_back(kGlobalsKey, Value::map(std::move(globals)));
            }
        }
        last_error();
    }
}

// ---- a dataset replaced keeps its place in the file's dimensions ----

DimensionTies::DimensionTies(hid_t file, const std::string& path, const std::string& where) {
    Handle dset(check(H5Dopen2(file, path.c_str(), H5P_DEFAULT), where, "cannot open it"),
                H5Dclose);
    // libhdf5's H5DS functions trust these records: damaged ones are refused, not followed.
    const auto sound = [&](hid_t obj, const std::string& name) {
        if (const std::string why = unsound_records(obj); !why.empty()) {
            throw UsageError(where + ": the dimension-scale records of " + name + " are damaged (" +
                             why + "); a dataset whose dimensions these are is not replaced");
        }
    };
    sound(dset.get(), path);
    dims_ = extent(dset.get(), &maxdims_);
    for (unsigned d = 0; d < dims_.size(); ++d) {
        attached_.push_back(scales_of(dset.get(), d));
        for (const std::string& s : attached_.back()) {
            Handle scale(check(H5Dopen2(file, s.c_str(), H5P_DEFAULT), where, "cannot open " + s),
                         H5Dclose);
            sound(scale.get(), s);
        }
    }
    if (H5DSis_scale(dset.get()) > 0) {
        scale_ = true;
        name_ = scale_name(dset.get());
        // Who uses it: every dataset of the file with a dimension it is attached to.
        for (const std::string& other : datasets_under(file)) {
            if (other == path) {
                continue;
            }
            Handle o(H5Dopen2(file, other.c_str(), H5P_DEFAULT), H5Dclose);
            if (o.get() < 0) {
                continue;
            }
            sound(o.get(), other);
            const std::size_t rank = extent(o.get(), nullptr).size();
            for (unsigned d = 0; d < rank; ++d) {
                if (H5DSis_attached(o.get(), dset.get(), d) > 0) {
                    users_.emplace_back(other, d);
                }
            }
        }
    }
    raw_ = netcdf_ids(dset.get());
    Handle dcpl(H5Dget_create_plist(dset.get()), H5Pclose);
    H5Pget_attr_creation_order(dcpl.get(), &creation_order_);
    last_error();
}

bool DimensionTies::any() const {
    return scale_ || std::any_of(attached_.begin(), attached_.end(),
                                 [](const auto& s) { return !s.empty(); });
}

void DimensionTies::check_fits(const Shape& shape,
                               const std::string& path,
                               const std::string& where) const {
    if (!any()) {
        return;
    }
    const std::string why =
        scale_ ? path + " is a dimension of " + num(static_cast<std::int64_t>(users_.size())) +
                     " dataset" + (users_.size() == 1 ? "" : "s")
               : path + "'s dimensions are shared with other datasets (netCDF dimensions)";
    bool fits = shape.size() == dims_.size();
    for (std::size_t d = 0; fits && d < dims_.size(); ++d) {
        const bool tied = scale_ || !attached_[d].empty();
        fits = !tied || maxdims_[d] == H5S_UNLIMITED || static_cast<hsize_t>(shape[d]) == dims_[d];
    }
    if (!fits) {
        Shape old(dims_.begin(), dims_.end());
        throw UsageError(where + ": " + why + "; the array's shape " + to_string(shape) +
                         " does not fit them (the dataset is " + to_string(old) +
                         "); write it to another path");
    }
}

std::vector<hsize_t> DimensionTies::maxdims(const std::vector<hsize_t>& dims) const {
    std::vector<hsize_t> out = dims;
    for (std::size_t d = 0; d < out.size() && d < maxdims_.size(); ++d) {
        if (maxdims_[d] == H5S_UNLIMITED && (scale_ || !attached_[d].empty())) {
            out[d] = H5S_UNLIMITED;
        }
    }
    return out;
}

void DimensionTies::untie(hid_t file, const std::string& path, const std::string& where) const {
    Handle dset(check(H5Dopen2(file, path.c_str(), H5P_DEFAULT), where, "cannot open it"),
                H5Dclose);
    for (unsigned d = 0; d < attached_.size(); ++d) {
        for (const std::string& s : attached_[d]) {
            Handle scale(H5Dopen2(file, s.c_str(), H5P_DEFAULT), H5Dclose);
            if (scale.get() >= 0) {
                H5DSdetach_scale(dset.get(), scale.get(), d);
            }
        }
    }
    for (const auto& [other, d] : users_) {
        Handle o(H5Dopen2(file, other.c_str(), H5P_DEFAULT), H5Dclose);
        if (o.get() >= 0) {
            check(H5DSdetach_scale(o.get(), dset.get(), d), where,
                  "cannot detach it from " + other);
        }
    }
    last_error();
}

void DimensionTies::retie(hid_t file,
                          hid_t dset,
                          const std::string& path,
                          const std::string& where) const {
    if (scale_) {
        // A netCDF dimension without a variable that is given values becomes the dimension's
        // variable, named as the dimension (netCDF's coordinate variable).
        const std::string name =
            name_.rfind(kNetcdfDimensionOnly, 0) == 0 ? basename_of(path) : name_;
        check(H5DSset_scale(dset, name.empty() ? nullptr : name.c_str()), where,
              "cannot make it a dimension scale again");
        for (const auto& [other, d] : users_) {
            Handle o(
                check(H5Dopen2(file, other.c_str(), H5P_DEFAULT), where, "cannot open " + other),
                H5Dclose);
            check(H5DSattach_scale(o.get(), dset, d), where,
                  "cannot attach it to " + other + " again");
        }
    }
    for (unsigned d = 0; d < attached_.size(); ++d) {
        for (const std::string& s : attached_[d]) {
            Handle scale(check(H5Dopen2(file, s.c_str(), H5P_DEFAULT), where, "cannot open " + s),
                         H5Dclose);
            check(H5DSattach_scale(dset, scale.get(), d), where,
                  "cannot attach " + s + " to it again");
        }
    }
    for (const RawAttribute& r : raw_) {
        if (H5Aexists(dset, r.name.c_str()) > 0) {
            H5Adelete(dset, r.name.c_str());
        }
        Handle attr(check(H5Acreate2(dset, r.name.c_str(), r.type.get(), r.space.get(), H5P_DEFAULT,
                                     H5P_DEFAULT),
                          where, "cannot keep attribute " + r.name),
                    H5Aclose);
        check(H5Awrite(attr.get(), r.type.get(), r.data.data()), where,
              "cannot keep attribute " + r.name);
    }
}

// ---- dimension names of a new dataset, as the file's scales ----

bool attach_named(hid_t file,
                  hid_t dset,
                  const std::string& path,
                  const Value& names,
                  const Shape& shape,
                  bool make,
                  const std::string& where) {
    if (names.type() != Value::Type::array || names.size() != shape.size() || shape.empty()) {
        return false;
    }
    const std::string parent = path.substr(0, path.rfind('/'));
    std::vector<std::string> found(shape.size());
    std::vector<std::pair<std::string, hsize_t>> made;  // (path, length)
    for (unsigned d = 0; d < shape.size(); ++d) {
        if (names[d].type() != Value::Type::string) {
            return false;
        }
        const std::string n = names[d].as<std::string>();
        if (n.empty() || n.find('/') != std::string::npos || n == "." || n == "..") {
            return false;
        }
        // netCDF's scoping: the dataset's group, then each group above it.
        for (std::string group = parent;; group = group.substr(0, group.rfind('/'))) {
            const std::string candidate = group + "/" + n;
            H5O_info_t info{};
            if (candidate != path && H5Lexists(file, candidate.c_str(), H5P_DEFAULT) > 0 &&
                H5Oget_info_by_name2(file, candidate.c_str(), &info, H5O_INFO_BASIC, H5P_DEFAULT) >=
                    0 &&
                info.type == H5O_TYPE_DATASET) {
                Handle s(H5Dopen2(file, candidate.c_str(), H5P_DEFAULT), H5Dclose);
                std::vector<hsize_t> max;
                const std::vector<hsize_t> len = extent(s.get(), &max);
                if (unsound_records(s.get()).empty() && H5DSis_scale(s.get()) > 0 &&
                    len.size() == 1 &&
                    (len[0] == static_cast<hsize_t>(shape[d]) || max[0] == H5S_UNLIMITED)) {
                    found[d] = candidate;
                    break;
                }
            }
            if (group.empty()) {
                break;
            }
        }
        last_error();
        const std::string mine = parent + "/" + n;
        const auto same = [&](const auto& m) { return m.first == mine; };
        if (found[d].empty() && make && H5Lexists(file, mine.c_str(), H5P_DEFAULT) <= 0) {
            // A file made here gets the dimension, as netCDF writes one that has no variable.
            const auto it = std::find_if(made.begin(), made.end(), same);
            if (it == made.end()) {
                made.emplace_back(mine, static_cast<hsize_t>(shape[d]));
            } else if (it->second != static_cast<hsize_t>(shape[d])) {
                return false;
            }
            found[d] = mine;
        }
        last_error();
        if (found[d].empty()) {
            return false;  // not this file's dimensions: the names stay an attribute
        }
    }
    for (const auto& [p, len] : made) {
        Handle space(H5Screate_simple(1, &len, nullptr), H5Sclose);
        Handle dim(check(H5Dcreate2(file, p.c_str(), H5T_IEEE_F32BE, space.get(), H5P_DEFAULT,
                                    H5P_DEFAULT, H5P_DEFAULT),
                         where, "cannot make the dimension " + p),
                   H5Dclose);
        char name[96];
        std::snprintf(name, sizeof name, "%s.%10llu", kNetcdfDimensionOnly,
                      static_cast<unsigned long long>(len));
        check(H5DSset_scale(dim.get(), name), where, "cannot make " + p + " a dimension");
    }
    for (unsigned d = 0; d < found.size(); ++d) {
        Handle scale(
            check(H5Dopen2(file, found[d].c_str(), H5P_DEFAULT), where, "cannot open " + found[d]),
            H5Dclose);
        check(H5DSattach_scale(dset, scale.get(), d), where, "cannot attach " + found[d]);
    }
    return true;
}

}  // namespace b2nd::bridges::h5
