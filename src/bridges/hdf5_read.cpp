// HDF5 datasets read in place (hdf5_gate.hpp): an array whose blocks are hyperslabs of the
// dataset, made by a BlockOrigin, over an empty frame of the dataset's chunking. libhdf5 decodes
// its own filters (deflate, shuffle, fletcher32, and ours for Blosc and LZF) and fills chunks
// never written with the dataset's fill value.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>

#include <b2nd/attrs.hpp>
#include <b2nd/error.hpp>
#include <b2nd/format/frame_header.hpp>
#include <b2nd/storage/byte_source.hpp>
#include <b2nd/storage/sources.hpp>

#include "../detail/text.hpp"
#include "../engine/array_core.hpp"
#include "../engine/block_origin.hpp"
#include "../engine/engine_access.hpp"
#include "bridges.hpp"
#include "hdf5_detail.hpp"
#include "hdf5_gate.hpp"

namespace b2nd::bridges {

namespace h5 {

namespace {

herr_t collect_dataset(hid_t, const char* name, const H5O_info_t* info, void* out) {
    if (info->type == H5O_TYPE_DATASET) {
        static_cast<std::vector<std::string>*>(out)->push_back(std::string("/") + name);
    }
    return 0;
}

}  // namespace

void check_file(const std::string& file, const std::string& where) {
    std::error_code ec;
    const std::filesystem::file_status st = std::filesystem::status(file, ec);
    if (st.type() == std::filesystem::file_type::not_found) {
        throw IoError(where + ": cannot open",
                      std::make_error_code(std::errc::no_such_file_or_directory));
    }
    if (st.type() != std::filesystem::file_type::regular) {
        throw UsageError(where + ": not a regular file");
    }
    if (H5Fis_hdf5(file.c_str()) <= 0) {
        last_error();
        std::string what = "no HDF5 signature";
        if (std::FILE* f = std::fopen(file.c_str(), "rb")) {
            std::uint8_t start[16] = {};
            const std::size_t n = std::fread(start, 1, sizeof start, f);
            std::fclose(f);
            const std::string other = format::foreign_format({start, n});
            if (!other.empty()) {
                what = "this is " + other;
            }
        }
        throw FormatError(where + ": not an HDF5 file (" + what + ")");
    }
}

std::vector<std::string> datasets_under(hid_t obj) {
    std::vector<std::string> names;
    H5Ovisit2(obj, H5_INDEX_NAME, H5_ITER_INC, collect_dataset, &names, H5O_INFO_BASIC);
    last_error();
    return names;
}

}  // namespace h5

namespace {

namespace fs = std::filesystem;
using detail::num;
using h5::check;
using h5::datasets_under;
using h5::Handle;

/// A dataset held open.
struct OpenDataset {
    Handle file, dset, type;
    std::unique_ptr<h5::Reach> reach;  // its access property list, checked links
    std::uint64_t chunk_bytes = 0;     // what a chunk decodes to (0: not chunked)
    Shape chunk;  // the HDF5 chunk's shape, when the array's chunks are the HDF5 chunks
    std::vector<std::uint8_t> fill;  // one item of the fill value, in `type`
    /// Blocks are whole HDF5 chunks whose filters we decode: read as stored, under libhdf5's
    /// lock, and decoded outside it, on the array's threads.
    std::optional<h5::DirectFilters> direct;
};

std::string listing(const std::vector<std::string>& names) {
    std::string s;
    for (std::size_t i = 0; i < names.size() && i < 20; ++i) {
        s += (i != 0 ? ", " : "") + names[i];
    }
    if (names.size() > 20) {
        s += ", ... (" + num(static_cast<std::int64_t>(names.size())) + " in all)";
    }
    return s.empty() ? "none" : s;
}

/// The dataset's path, checked to name a dataset (the file's only one when none is given).
std::string dataset_path(hid_t file,
                         h5::Reach& reach,
                         const Hdf5Location& at,
                         const std::string& where) {
    if (at.dataset.empty() || at.dataset == "/") {
        const std::vector<std::string> all = datasets_under(file);
        if (all.size() != 1) {
            throw UsageError(where + ": holds " + num(static_cast<std::int64_t>(all.size())) +
                             " datasets; name one as FILE:/path (" + listing(all) + ")");
        }
        return all[0];
    }
    std::string path = at.dataset.front() == '/' ? at.dataset : "/" + at.dataset;
    while (path.size() > 1 && path.back() == '/') {
        path.pop_back();
    }
    // Each link on the way must exist (H5Lexists fails on a missing intermediate group).
    for (std::size_t slash = path.find('/', 1);; slash = path.find('/', slash + 1)) {
        const std::string part = path.substr(0, slash);
        if (H5Lexists(file, part.c_str(), reach.access()) <= 0) {
            reach.throw_refused();
            h5::last_error();
            throw UsageError(where + ": no dataset " + path + " (" + part +
                             " does not exist; datasets: " + listing(datasets_under(file)) + ")");
        }
        if (slash == std::string::npos) {
            break;
        }
    }
    H5O_info_t info{};
    const herr_t looked =
        H5Oget_info_by_name2(file, path.c_str(), &info, H5O_INFO_BASIC, reach.access());
    reach.throw_refused();
    check(looked, where, "cannot look at " + path);
    if (info.type == H5O_TYPE_GROUP) {
        Handle g(H5Gopen2(file, path.c_str(), reach.access()), H5Gclose);
        std::vector<std::string> inside = datasets_under(g.get());
        for (std::string& s : inside) {
            s = path + s;
        }
        throw UsageError(where + ": " + path +
                         " is a group, not a dataset (its datasets: " + listing(inside) + ")");
    }
    if (info.type != H5O_TYPE_DATASET) {
        throw UsageError(where + ": " + path + " is not a dataset");
    }
    return path;
}

class Hdf5Origin final : public detail::BlockOrigin {
public:
    Hdf5Origin(std::shared_ptr<OpenDataset> d, Grid g, std::string where)
        : d_(std::move(d)), g_(std::move(g)), where_(std::move(where)) {}

    const char* kind() const noexcept override { return "HDF5 dataset"; }
    bool computes() const noexcept override { return true; }
    void require(std::int64_t, std::int64_t) const override {}

    void make_block(std::int64_t ci, std::int64_t block, std::uint8_t* into) const override {
        const Box region = detail::block_region(g_, ci, block);
        const int nd = g_.ndim();
        const auto bytes = static_cast<std::size_t>(g_.block_nbytes());
        bool whole = true;
        for (int d = 0; d < nd; ++d) {
            whole = whole && region.count[static_cast<std::size_t>(d)] ==
                                 g_.block_shape()[static_cast<std::size_t>(d)];
        }
        if (!whole) {
            std::memset(into, 0, bytes);
        }
        if (region.size() == 0) {
            return;
        }
        if (d_->direct && nd > 0 && read_direct(region, into)) {
            return;
        }
        auto held = h5::lock();
        // Filters not built in nor ours load the system's plugins, unless turned off.
        H5PLset_loading_state(d_->reach->plugins() ? H5PL_ALL_PLUGIN : 0U);
        h5::FilterScope scope(d_->chunk_bytes);
        if (nd == 0) {
            read_check(H5Dread(d_->dset.get(), d_->type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, into),
                       scope, "cannot read the dataset");
            return;
        }
        std::vector<hsize_t> start(region.start.begin(), region.start.end());
        std::vector<hsize_t> count(region.count.begin(), region.count.end());
        if (unwritten(start)) {
            // A chunk never written: its fill value, without libhdf5 (which builds the whole
            // chunk in memory first, for a filtered dataset: 512 MiB for one element of a file
            // of 1 KB that declares such chunks).
            fill_region(region, into);
            return;
        }
        std::vector<hsize_t> zero(static_cast<std::size_t>(nd), 0);
        std::vector<hsize_t> block_dims(g_.block_shape().begin(), g_.block_shape().end());
        Handle fs(H5Dget_space(d_->dset.get()), H5Sclose);
        Handle ms(H5Screate_simple(nd, block_dims.data(), nullptr), H5Sclose);
        check(H5Sselect_hyperslab(fs.get(), H5S_SELECT_SET, start.data(), nullptr, count.data(),
                                  nullptr),
              where_, "cannot select a hyperslab");
        check(H5Sselect_hyperslab(ms.get(), H5S_SELECT_SET, zero.data(), nullptr, count.data(),
                                  nullptr),
              where_, "cannot select a hyperslab");
        read_check(
            H5Dread(d_->dset.get(), d_->type.get(), ms.get(), fs.get(), H5P_DEFAULT, into), scope,
            "cannot read " + to_string(region.count) + " items at " + to_string(region.start));
    }

private:
    /// Block `region` (a whole HDF5 chunk, padded at the dataset's edge) read as stored and
    /// decoded here; false when libhdf5 cannot say where the chunk is (it reads it then).
    bool read_direct(const Box& region, std::uint8_t* into) const {
        std::vector<hsize_t> at(region.start.begin(), region.start.end());
        thread_local std::vector<std::uint8_t> stored;
        unsigned mask = 0;
        {
            auto held = h5::lock();
            haddr_t addr = HADDR_UNDEF;
            hsize_t size = 0;
            if (H5Dget_chunk_info_by_coord(d_->dset.get(), at.data(), &mask, &addr, &size) < 0) {
                h5::last_error();
                return false;
            }
            if (addr == HADDR_UNDEF) {
                held.unlock();
                fill_region(region, into);  // never written
                return true;
            }
            if (size > d_->chunk_bytes + d_->chunk_bytes / 8 + (std::uint64_t{1} << 20)) {
                throw FormatError(where_ + ": the chunk at " + to_string(region.start) +
                                  " is stored in " + std::to_string(size) +
                                  " bytes, more than its data could take (" +
                                  std::to_string(d_->chunk_bytes) + " decoded)");
            }
            stored.resize(static_cast<std::size_t>(size));
            std::uint32_t filters = 0;
            check(H5Dread_chunk(d_->dset.get(), H5P_DEFAULT, at.data(), &filters, stored.data()),
                  where_, "cannot read the chunk at " + to_string(region.start));
            mask = filters;
        }
        d_->direct->decode(mask, stored.data(), stored.size(), into,
                           static_cast<std::size_t>(d_->chunk_bytes),
                           where_ + ": the chunk at " + to_string(region.start));
        zero_outside(region, g_.block_shape(), static_cast<std::size_t>(g_.itemsize()), into);
        return true;
    }

    /// Whether the HDF5 chunk holding the element `at` was never written (libhdf5's lock held).
    bool unwritten(const std::vector<hsize_t>& at) const {
        const Shape& c = d_->chunk;
        if (c.empty()) {
            return false;
        }
        std::vector<hsize_t> origin(at.size());
        for (std::size_t d = 0; d < at.size(); ++d) {
            origin[d] = at[d] - at[d] % static_cast<hsize_t>(c[d]);
        }
        unsigned mask = 0;
        haddr_t addr = HADDR_UNDEF;
        hsize_t size = 0;
        if (H5Dget_chunk_info_by_coord(d_->dset.get(), origin.data(), &mask, &addr, &size) < 0) {
            h5::last_error();
            return false;  // not known: libhdf5 reads it
        }
        return addr == HADDR_UNDEF;
    }

    /// The fill value over `region`'s items of the block (in the block's layout).
    void fill_region(const Box& region, std::uint8_t* into) const {
        const int nd = g_.ndim();
        const std::size_t item = d_->fill.size();
        const std::int64_t row = region.count[static_cast<std::size_t>(nd - 1)];
        std::int64_t idx[kMaxNdim] = {};
        for (std::int64_t k = 0; k < region.size(); k += row) {
            std::int64_t off = 0;
            for (int d = 0; d < nd; ++d) {
                off = off * g_.block_shape()[static_cast<std::size_t>(d)] + idx[d];
            }
            for (std::int64_t j = 0; j < row; ++j) {
                std::memcpy(into + static_cast<std::size_t>(off + j) * item, d_->fill.data(), item);
            }
            for (int d = nd - 2; d >= 0; --d) {
                if (++idx[d] < region.count[static_cast<std::size_t>(d)]) {
                    break;
                }
                idx[d] = 0;
            }
        }
    }

    /// \throws FormatError for a failed read, with our decoder's reason when it refused a chunk
    void read_check(herr_t status, const h5::FilterScope& scope, const std::string& what) const {
        if (status >= 0) {
            return;
        }
        if (scope.refusal().empty()) {
            check(status, where_, what);
        }
        h5::last_error();
        throw FormatError(where_ + ": " + what + ": " + scope.refusal());
    }

    std::shared_ptr<OpenDataset> d_;
    Grid g_;
    std::string where_;
};

}  // namespace

AnyArray open_hdf5(const Hdf5Location& at, const OpenOptions& o) {
    std::string where = detail::quoted_path(at.file);
    if (o.writable) {
        throw UsageError(where +
                         ": HDF5 datasets are read-only here; 'b2nd import' makes a b2nd "
                         "array of one");
    }
    if (storage::is_url(at.file)) {
        throw UnsupportedError(where + ": HDF5 files are read from local paths only");
    }
    auto held = h5::lock();
    h5::check_file(at.file, where);
    auto d = std::make_shared<OpenDataset>();
    d->reach = std::make_unique<h5::Reach>(at.file, o.hdf5_external, o.hdf5_plugins, where);
    d->file = Handle(check(H5Fopen(at.file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), where,
                           "cannot open the HDF5 file"),
                     H5Fclose);
    const std::string path = dataset_path(d->file.get(), *d->reach, at, where);
    where = detail::quoted_path(at.file + ":" + path);
    const hid_t dset = H5Dopen2(d->file.get(), path.c_str(), d->reach->access());
    d->reach->throw_refused();
    d->dset = Handle(check(dset, where, "cannot open the dataset"), H5Dclose);
    d->reach->check_dataset(d->dset.get(), where);
    d->type = Handle(check(H5Dget_type(d->dset.get()), where, "no datatype"), H5Tclose);
    const DType dtype = DType::parse(h5::descr_of(d->type.get(), where));

    Handle space(check(H5Dget_space(d->dset.get()), where, "no dataspace"), H5Sclose);
    if (H5Sget_simple_extent_type(space.get()) == H5S_NULL) {
        throw UnsupportedError(where + ": an empty (null) dataspace, which holds no array");
    }
    const int rank = H5Sget_simple_extent_ndims(space.get());
    if (rank < 0 || rank > kMaxNdim) {
        throw UnsupportedError(where + ": " + num(rank) + " dimensions; arrays here have at most " +
                               num(kMaxNdim));
    }
    std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
    H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr);
    const Shape shape(dims.begin(), dims.end());

    // The grid: one chunk per HDF5 chunk, read in blocks of at most kMaxBridgedBlockBytes (a
    // one-element read of a dataset of huge chunks allocates no more than one such block).
    CreateOptions co;
    Handle dcpl(H5Dget_create_plist(d->dset.get()), H5Pclose);
    if (rank > 0 && H5Pget_layout(dcpl.get()) == H5D_CHUNKED) {
        std::vector<hsize_t> cdims(static_cast<std::size_t>(rank));
        H5Pget_chunk(dcpl.get(), rank, cdims.data());
        const Shape chunk(cdims.begin(), cdims.end());
        // What libhdf5 hands a filter to decode: the chunk in the file's type.
        std::uint64_t bytes = H5Tget_size(d->type.get());
        for (const hsize_t c : cdims) {
            bytes = c != 0 && bytes > UINT64_MAX / c ? 0 : bytes * c;
        }
        d->chunk_bytes = bytes;
        d->fill.assign(static_cast<std::size_t>(dtype.itemsize()), 0);
        H5D_fill_value_t defined = H5D_FILL_VALUE_UNDEFINED;
        if (H5Pfill_value_defined(dcpl.get(), &defined) >= 0 &&
            defined != H5D_FILL_VALUE_UNDEFINED &&
            H5Pget_fill_value(dcpl.get(), d->type.get(), d->fill.data()) < 0) {
            std::fill(d->fill.begin(), d->fill.end(), 0);
        }
        h5::last_error();
        const Shape block = bounded_block(chunk, dtype.itemsize());
        if (Grid::check(shape, chunk, block, dtype.itemsize()).empty()) {
            co.chunk_shape = chunk;
            co.block_shape = block;
            d->chunk = chunk;  // each block lies in one HDF5 chunk: unwritten ones filled here
            // (Raw bytes are the items only for types without variable-length parts.)
            const hid_t t = d->type.get();
            if (block == chunk && static_cast<std::uint64_t>(dtype.itemsize()) == H5Tget_size(t) &&
                H5Tis_variable_str(t) == 0 && H5Tdetect_class(t, H5T_VLEN) == 0 &&
                H5Tdetect_class(t, H5T_REFERENCE) == 0) {
                d->direct = h5::DirectFilters::of(dcpl.get());
            }
            if (block != chunk) {
                // A chunk read in several blocks is decoded once: libhdf5's chunk cache holds
                // one (its default, 1 MiB, holds none of this size).
                const std::uint64_t room =
                    std::min<std::uint64_t>(bytes + (1U << 20), std::uint64_t{1} << 30);
                check(H5Pset_chunk_cache(d->reach->access(), 521, static_cast<std::size_t>(room),
                                         0.75),
                      where, "cannot size the chunk cache");
                d->dset = Handle(check(H5Dopen2(d->file.get(), path.c_str(), d->reach->access()),
                                       where, "cannot open the dataset"),
                                 H5Dclose);
            }
        }
    }
    Value::Map dtypes;
    Value::Map attrs = h5::read_attributes(d->dset.get(), where, &dtypes);
    if (!dtypes.empty()) {
        attrs.emplace_back(kAttributeDtypesKey, Value::map(std::move(dtypes)));
    }
    h5::carried_attributes(d->file.get(), d->dset.get(), dtype, attrs, where);
    held.unlock();

    const std::string name = at.file + ":" + path;
    return detail::computed_array(dtype, shape, co, attrs, name, o, [&](const Grid& g) {
        return std::make_shared<Hdf5Origin>(std::move(d), g, where);
    });
}

}  // namespace b2nd::bridges
