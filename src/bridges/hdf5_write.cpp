// Arrays written as HDF5 datasets (hdf5_gate.hpp): chunked as the array is, shuffle + deflate
// applied here on the array's threads and chunks filed as stored, into a file built or copied
// under a temporary name and moved into place.
#include <algorithm>
#include <cstring>
#include <filesystem>
#include <optional>

#include <b2nd/codec/filters.hpp>
#include <b2nd/error.hpp>
#include <b2nd/storage/sources.hpp>

#include "../codec/compressors.hpp"
#include "../detail/text.hpp"
#include "../storage/publish.hpp"
#include "../storage/sources/posix_file.hpp"
#include "bridges.hpp"
#include "export_coding.hpp"
#include "hdf5_detail.hpp"
#include "hdf5_gate.hpp"
#include "zarr_meta.hpp"
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

namespace b2nd::bridges {

namespace {

namespace fs = std::filesystem;
using detail::num;
using h5::check;
using h5::Handle;

/// The attributes an export writes, with those that are not written as they are taken out.
struct Carried {
    Value::Map plain;
    Value dtypes = Value::map({});
    const Value* fill = nullptr;
    const Value* names = nullptr;
    const Value* globals = nullptr;
    Value::Map all;
};

Carried carried(const AnyArray& a) {
    Carried c;
    c.all = user_attributes(a);
    Value::Map dtypes;
    for (const auto& [k, v] : c.all) {
        const std::string name = k.type() == Value::Type::string ? k.as<std::string>() : "";
        if (name == kAttributeDtypesKey && v.type() == Value::Type::map) {
            dtypes = v.entries();
            continue;
        }
        if (name == kGlobalsKey) {
            c.globals = &v;
            continue;
        }
        if (name == kDimensionsKey) {
            c.names = &v;
            continue;
        }
        if (name == kFillValueKey) {
            c.fill = &v;
        }
        c.plain.emplace_back(k, v);
    }
    // netCDF's rule: _FillValue is of the variable's type.
    const DType::Kind kind = a.dtype().kind();
    if (c.fill != nullptr && !a.dtype().is_structured() &&
        (kind == DType::Kind::int_ || kind == DType::Kind::uint || kind == DType::Kind::float_) &&
        std::none_of(dtypes.begin(), dtypes.end(),
                     [](const auto& e) { return e.first == kFillValueKey; })) {
        dtypes.emplace_back(kFillValueKey, a.dtype().str());
    }
    c.dtypes = Value::map(std::move(dtypes));
    return c;
}

/// The dataset's fill value: the array's _FillValue (its first item, when a list), in its dtype.
void set_fill(
    hid_t dcpl, hid_t type, const AnyArray& a, const Value& fill, const std::string& where) {
    const DType::Kind kind = a.dtype().kind();
    if (a.dtype().is_structured() ||
        (kind != DType::Kind::int_ && kind != DType::Kind::uint && kind != DType::Kind::float_)) {
        return;
    }
    const Value& one = fill.type() == Value::Type::array && fill.size() == 1 ? fill[0] : fill;
    std::vector<std::uint8_t> bytes;
    try {
        if (one.type() != Value::Type::integer && one.type() != Value::Type::real) {
            return;
        }
        bytes = zarr_fill_bytes(one, a.dtype(), where);
    } catch (const Error&) {
        return;  // not a value of the array's type: the attribute only
    }
    check(H5Pset_fill_value(dcpl, type, bytes.data()), where, "cannot set the fill value");
}

void write_dataset(hid_t file,
                   const AnyArray& a,
                   const std::string& path,
                   const Hdf5ExportOptions& o,
                   const ChunkCoding& coding,
                   bool new_file,
                   const std::string& where) {
    auto held = h5::lock();
    const int nd = a.ndim();
    const Grid& g = a.grid();
    std::optional<h5::DimensionTies> ties;
    if (H5Lexists(file, path.c_str(), H5P_DEFAULT) > 0) {
        // Only a dataset is replaced: never a group (and the datasets in it), nor a link.
        H5L_info_t link{};
        H5O_info_t obj{};
        check(H5Lget_info(file, path.c_str(), &link, H5P_DEFAULT), where, "cannot look at it");
        if (link.type != H5L_TYPE_HARD) {
            throw UsageError(where + ": " + path +
                             " is a link (soft or external), not a dataset; b2nd replaces "
                             "datasets only");
        }
        check(H5Oget_info_by_name2(file, path.c_str(), &obj, H5O_INFO_BASIC, H5P_DEFAULT), where,
              "cannot look at it");
        if (obj.type == H5O_TYPE_GROUP) {
            Handle group(check(H5Gopen2(file, path.c_str(), H5P_DEFAULT), where, "cannot open it"),
                         H5Gclose);
            const std::size_t n = h5::datasets_under(group.get()).size();
            throw UsageError(where + ": " + path + " is a group holding " +
                             num(static_cast<std::int64_t>(n)) +
                             (n == 1 ? " dataset" : " datasets") +
                             "; a group is never replaced (name a dataset inside it, or another "
                             "path)");
        }
        if (obj.type != H5O_TYPE_DATASET) {
            throw UsageError(where + ": " + path +
                             " is not a dataset; b2nd replaces datasets only");
        }
        if (!o.overwrite) {
            throw UsageError(where +
                             ": the dataset exists already (the overwrite option "
                             "replaces it)");
        }
        // A dataset other datasets use as a dimension, or with dimensions shared with them
        // (netCDF-4's), is replaced in its place: by an array that fits them, tied as it was.
        ties.emplace(file, path, where);
        ties->check_fits(a.shape(), path, where);
        ties->untie(file, path, where);
        check(H5Ldelete(file, path.c_str(), H5P_DEFAULT), where, "cannot remove the old dataset");
    }
    const Carried attrs = carried(a);
    h5::last_error();
    const Handle type = h5::type_of(a.dtype(), where);
    std::vector<hsize_t> dims(a.shape().begin(), a.shape().end());
    std::vector<hsize_t> maxdims = ties ? ties->maxdims(dims) : dims;
    Handle dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
    if (ties && ties->creation_order() != 0) {
        check(H5Pset_attr_creation_order(dcpl.get(), ties->creation_order()), where,
              "cannot track the creation order of attributes");
    }
    if (attrs.fill != nullptr) {
        set_fill(dcpl.get(), type.get(), a, *attrs.fill, where);
    }
    if (nd > 0) {
        std::vector<hsize_t> chunk(static_cast<std::size_t>(nd));
        for (int d = 0; d < nd; ++d) {
            const auto u = static_cast<std::size_t>(d);
            // HDF5 chunks lie within fixed dimensions; an empty dimension is made extensible.
            chunk[u] = static_cast<hsize_t>(std::max<std::int64_t>(
                1, std::min(g.chunk_shape()[u], std::max<std::int64_t>(g.shape()[u], 1))));
            if (dims[u] == 0) {
                maxdims[u] = H5S_UNLIMITED;
            }
        }
        check(H5Pset_chunk(dcpl.get(), nd, chunk.data()), where, "cannot set the chunk shape");
        if (coding.compressor == ExportCompressor::blosc) {
            // The Blosc filter's parameters, as PyTables writes them: its version, Blosc's
            // format, the item and chunk sizes, the level, the shuffle, the codec.
            std::uint64_t chunk_bytes = static_cast<std::uint64_t>(a.itemsize());
            for (const hsize_t c : chunk) {
                chunk_bytes *= c;
            }
            const unsigned cd[7] = {2,
                                    2,
                                    static_cast<unsigned>(a.itemsize()),
                                    static_cast<unsigned>(chunk_bytes),
                                    static_cast<unsigned>(coding.clevel),
                                    static_cast<unsigned>(coding.shuffle),
                                    h5::blosc_compcode(coding.codec)};
            check(H5Pset_filter(dcpl.get(), h5::kBloscFilter, H5Z_FLAG_OPTIONAL, 7, cd), where,
                  "cannot add the Blosc filter");
        } else if (coding.compressor == ExportCompressor::gzip) {
            if (coding.shuffle == 1 && a.itemsize() > 1) {
                check(H5Pset_shuffle(dcpl.get()), where, "cannot add the shuffle filter");
            }
            check(H5Pset_deflate(dcpl.get(), static_cast<unsigned>(coding.clevel)), where,
                  "cannot add the deflate filter");
        }
    }
    Handle space(
        nd == 0 ? H5Screate(H5S_SCALAR) : H5Screate_simple(nd, dims.data(), maxdims.data()),
        H5Sclose);
    Handle lcpl(H5Pcreate(H5P_LINK_CREATE), H5Pclose);
    H5Pset_create_intermediate_group(lcpl.get(), 1);
    Handle dset(check(H5Dcreate2(file, path.c_str(), type.get(), space.get(), lcpl.get(),
                                 dcpl.get(), H5P_DEFAULT),
                      where, "cannot create the dataset"),
                H5Dclose);
    h5::write_attributes(dset.get(), attrs.plain, where, &attrs.dtypes);
    if (ties) {
        ties->retie(file, dset.get(), path, where);
    } else if (attrs.names != nullptr && !h5::attach_named(file, dset.get(), path, *attrs.names,
                                                           a.shape(), new_file, where)) {
        // Names of dimensions this file has no scales for: kept as the attribute they came in.
        h5::write_attributes(dset.get(), {{kDimensionsKey, *attrs.names}}, where);
    }
    if (new_file && attrs.globals != nullptr && attrs.globals->type() == Value::Type::map) {
        // A file made here takes the global attributes of the file the array came from; a file
        // added to keeps its own.
        Handle root(check(H5Gopen2(file, "/", H5P_DEFAULT), where, "cannot open the root group"),
                    H5Gclose);
        Value::Map globals;
        const Value* dtypes = nullptr;
        for (const auto& [k, v] : attrs.globals->entries()) {
            if (k.type() == Value::Type::string && k.as<std::string>() == kAttributeDtypesKey) {
                dtypes = &v;
            } else {
                globals.emplace_back(k, v);
            }
        }
        h5::write_attributes(root.get(), globals, where, dtypes);
    }

    if (nd == 0) {
        std::vector<std::uint8_t> item(static_cast<std::size_t>(a.itemsize()));
        held.unlock();
        a.read(Box::whole(a.shape()), item.data(), item.size());
        held.lock();
        check(H5Dwrite(dset.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, item.data()), where,
              "cannot write the dataset");
        if (o.progress) {
            o.progress(1, 1);
        }
        return;
    }
    // Chunks are shuffled and deflated here, on the array's threads, and filed as they are
    // stored (H5Dwrite_chunk): libhdf5, one call at a time, only files them. HDF5 keeps edge
    // chunks whole: the part past the array is zeros.
    Shape hchunk(static_cast<std::size_t>(nd));
    std::int64_t hitems = 1;
    {
        std::vector<hsize_t> c(static_cast<std::size_t>(nd));
        H5Pget_chunk(dcpl.get(), nd, c.data());
        for (int d = 0; d < nd; ++d) {
            hchunk[static_cast<std::size_t>(d)] =
                static_cast<std::int64_t>(c[static_cast<std::size_t>(d)]);
            hitems *= hchunk[static_cast<std::size_t>(d)];
        }
    }
    const auto item = static_cast<std::size_t>(a.itemsize());
    // HDF5's shuffle filter goes before deflate; Blosc shuffles inside its own chunks.
    const bool shuffle =
        coding.compressor == ExportCompressor::gzip && coding.shuffle == 1 && item > 1;
    const std::int64_t total = g.nchunks();
    std::int64_t done = 0;
    const hid_t ds = dset.get();
    held.unlock();
    a.for_each_chunk(a.all_chunks(), [&](std::int64_t ci, const Box& region,
                                         const std::uint8_t* data, const std::uint8_t* uniform) {
        thread_local std::vector<std::uint8_t> raw, shuffled, filled, z;
        if (data == nullptr) {
            filled.resize(static_cast<std::size_t>(region.size()) * item);
            for (std::size_t k = 0; k < filled.size(); k += item) {
                std::memcpy(filled.data() + k, uniform, item);
            }
            data = filled.data();
        }
        raw.assign(static_cast<std::size_t>(hitems) * item, 0);
        copy_box(data, region.count, Shape(static_cast<std::size_t>(nd), 0), raw.data(), hchunk,
                 region.count, item);
        const std::uint8_t* in = raw.data();
        if (shuffle) {
            shuffled.resize(raw.size());
            codec::shuffle(static_cast<int>(item), raw.size(), raw.data(), shuffled.data());
            in = shuffled.data();
        }
        encode_chunk(coding, in, raw.size(), static_cast<int>(item), z);
        std::vector<hsize_t> offset(region.start.begin(), region.start.end());
        auto filing = h5::lock();
        check(H5Dwrite_chunk(ds, H5P_DEFAULT, 0, offset.data(), z.size(), z.data()), where,
              "cannot write chunk " + num(ci));
        ++done;
        if (o.progress) {
            o.progress(done, total);
        }
    });
    held.lock();
}

/// A shared flock on a file (HDF5's file locking), held while it lives; nothing for "".
class HeldShared {
public:
    HeldShared(const std::string& path, const std::string& where) {
        if (path.empty()) {
            return;
        }
        fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
        if (fd_ < 0) {
            throw IoError(where + ": cannot open it",
                          std::error_code(errno, std::generic_category()));
        }
        if (::flock(fd_, LOCK_SH | LOCK_NB) != 0) {
            const int e = errno;
            ::close(fd_);
            if (e == EWOULDBLOCK) {
                throw LockError(where +
                                ": another program has it open for writing (it holds HDF5's "
                                "file lock); b2nd adds to an HDF5 file only when no program "
                                "writes it");
            }
            throw IoError(where + ": cannot lock it", std::error_code(e, std::generic_category()));
        }
    }
    ~HeldShared() {
        if (fd_ >= 0) {
            ::close(fd_);
        }
    }
    HeldShared(const HeldShared&) = delete;
    HeldShared& operator=(const HeldShared&) = delete;

private:
    int fd_ = -1;
};

}  // namespace

void export_hdf5(const AnyArray& a, const Hdf5Location& at, const Hdf5ExportOptions& o) {
    const std::string where = detail::quoted_path(at.file + ":" + at.dataset);
    if (at.dataset.empty() || at.dataset.front() != '/' || at.dataset == "/") {
        throw UsageError(where + ": name the dataset to write as FILE.h5:/path/to/dataset");
    }
    if (storage::is_url(at.file)) {
        throw UnsupportedError(where + ": HDF5 files are written to local paths only");
    }
    const ChunkCoding coding = resolve_coding(a, o, ExportFormat::hdf5, where);
    const AnyArray source = coded_grid(a, o, ExportFormat::hdf5, where);
    // An existing HDF5 file is added to: it is copied under the temporary name first.
    detail::Publication pub(at.file, true, detail::quoted_path(at.file), detail::OutputKind::hdf5);
    const std::string tmp = pub.temporary();
    try {
        std::error_code ec;
        const bool exists =
            fs::is_regular_file(pub.target(), ec) && fs::file_size(pub.target(), ec) > 0;
        // The file added to is held with HDF5's own lock (a shared flock, what libhdf5 takes to
        // read) until it is replaced: a program that has it open for writing (h5py's mode 'a')
        // holds it exclusively, and its later writes would go to a file no longer there.
        const HeldShared held_file(exists ? pub.target() : std::string(), where);
        if (exists) {
            fs::copy_file(pub.target(), tmp, fs::copy_options::none);
        }
        {
            auto held = h5::lock();
            Handle file(
                check(exists ? H5Fopen(tmp.c_str(), H5F_ACC_RDWR, H5P_DEFAULT)
                             : H5Fcreate(tmp.c_str(), H5F_ACC_EXCL, H5P_DEFAULT, H5P_DEFAULT),
                      where,
                      exists ? "cannot open the HDF5 file to add to it"
                             : "cannot create the HDF5 file"),
                H5Fclose);
            held.unlock();
            write_dataset(file.get(), source, at.dataset, o, coding, !exists, where);
            held.lock();
            check(H5Fflush(file.get(), H5F_SCOPE_GLOBAL), where, "cannot flush the file");
            file = Handle();
        }
        if (o.durable) {
            storage::detail::PosixFile(tmp, storage::detail::PosixFile::Mode::read_write).sync();
        }
        pub.publish(o.durable);
    } catch (...) {
        pub.rethrow();
    }
}

}  // namespace b2nd::bridges
