// NumPy .npy files: reading (memory-mapped), writing, and conversion to and from b2nd arrays.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <b2nd/any_array.hpp>
#include <b2nd/byte_span.hpp>
#include <b2nd/dtype.hpp>
#include <b2nd/grid.hpp>
#include <b2nd/mask.hpp>

namespace b2nd {

namespace storage {
struct OpenOptions;
}

/// What a .npy file's header says.
struct NpyHeader {
    DType dtype;                  ///< the items' dtype
    Shape shape;                  ///< the array's shape
    bool fortran_order = false;   ///< whether the data is in Fortran order
    std::size_t data_offset = 0;  ///< where the data starts in the file
    /// Bytes of data (checked against overflow when parsed).
    std::int64_t nbytes = 0;
};

/// Parses the header at the start of `bytes` (versions 1.0, 2.0 and 3.0).
/// \throws FormatError (offsets within the file), UnsupportedError for object dtypes
NpyHeader parse_npy_header(ByteSpan bytes);

/// The header bytes of a C-order .npy file (version 1.0, or 2.0 when it needs more than 64 KiB),
/// padded so that the data starts at a multiple of 64 bytes.
std::vector<std::uint8_t> npy_header(const DType& dtype, const Shape& shape);

/// A .npy file mapped read-only.
class NpyFile {
public:
    /// A local file is mapped; a URL (s3://, http(s)://) is fetched whole into memory, reached
    /// with `options`' driver settings (the environment's where empty).
    /// \throws IoError, FormatError naming the file (also when the data is shorter than the
    ///         header says)
    static NpyFile open(const std::string& path);
    /// As open(path), with the settings of the driver a URL needs.
    static NpyFile open(const std::string& path, const storage::OpenOptions& options);
    /// The file's header.
    const NpyHeader& header() const noexcept { return header_; }
    /// The array's bytes (header().nbytes of them).
    ByteSpan data() const noexcept { return data_; }

private:
    NpyHeader header_;
    ByteSpan data_;
    std::shared_ptr<const void> owner_;  // keeps data_ valid: the mapping, or fetched bytes
};

/// Where a .npy file goes, written in one pass, header first: a file (built under a temporary
/// name beside it and put in place whole by finish(), as write_npy), or a stream such as stdout
/// (`b2nd export A.b2nd -`). Without finish(), nothing appears at the path.
class NpySink {
public:
    /// A .npy file to be written at `path` (built under a temporary name; finish() publishes it).
    /// An existing .npy file there is replaced only with `overwrite` (as write_npy does); without
    /// it, UsageError naming it, before anything is written. At an s3:// URL the same holds for
    /// the object, and the put says so to the store (If-None-Match).
    explicit NpySink(const std::string& path, bool overwrite = true);
    /// `name` is how messages call the stream.
    explicit NpySink(std::FILE* stream, const std::string& name = "<stdout>");
    ~NpySink();
    NpySink(const NpySink&) = delete;
    NpySink& operator=(const NpySink&) = delete;

    /// The header (C order), once, first.
    void begin(const DType& dtype, const Shape& shape);
    /// The next bytes of data, in C order. \throws UsageError past the shape's bytes
    void write(ByteSpan bytes);
    /// Checks that the shape's bytes were written (Error otherwise), then puts the file in place
    /// (or flushes the stream).
    void finish();

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

/// Writes a .npy file (atomically: a temporary file renamed into place). An existing .npy file
/// at `path` is replaced (with its mode and owner kept); anything else there is refused
/// (UsageError), and a link is written through. The export_npy functions do the same.
void write_npy(const std::string& path, const DType& dtype, const Shape& shape, ByteSpan data);

/// Writes `box` of an array to a .npy file of the same dtype, streaming slab by slab so that
/// arrays larger than memory can be exported. The result has shape `out_shape` (box.count with
/// any dimensions dropped; its element count must equal box.size()).
/// (done, total) bytes, after each slab written or read (export_npy, import_npy).
using NpyProgress = std::function<void(std::int64_t, std::int64_t)>;

void export_npy(const AnyArray& a,
                const Box& box,
                const Shape& out_shape,
                const std::string& path,
                const NpyProgress& progress = {});
/// Writes a resolved selection (a box, or index lists) to a .npy file of shape sel.shape,
/// streaming.
void export_npy(const AnyArray& a,
                const Resolved& sel,
                const std::string& path,
                const NpyProgress& progress = {});
/// Writes a[mask] (1-d, the true elements in C order) to a .npy file, streaming.
void export_npy(const AnyArray& a, const Mask& mask, const std::string& path);
/// The same three into a sink (a file, or a stream such as stdout); each finishes it.
void export_npy(const AnyArray& a,
                const Box& box,
                const Shape& out_shape,
                NpySink& out,
                const NpyProgress& progress = {});
void export_npy(const AnyArray& a,
                const Resolved& sel,
                NpySink& out,
                const NpyProgress& progress = {});
void export_npy(const AnyArray& a, const Mask& mask, NpySink& out);

/// Creates a b2nd array from a .npy file (a path or URL, as NpyFile::open); with `progress`, in
/// slabs of whole chunk rows, reporting after each. Fortran-order files are read too (gathered into
/// C order, a slab of rows at a time).
AnyArray import_npy(const std::string& npy_path,
                    const std::string& path,
                    const CreateOptions& options = {},
                    const NpyProgress& progress = {});

}  // namespace b2nd
