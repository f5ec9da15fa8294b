// Whole-array operations that write a new array: copy (re-chunk, re-compress, switch between a
// contiguous and a sparse frame), concatenate and stack.
//
// clang-format off
//   auto a = b2nd::AnyArray::open("t.b2nd");
//   b2nd::CopyOptions o;
//   o.compression = b2nd::CompressionParams{b2nd::Codec::lz4, 5};
//   o.sparse = true;
//   b2nd::copy(a, "t_lz4.b2frame", o);            // everything else as in t.b2nd
//   b2nd::concatenate({a, a}, 0, "tt.b2nd");      // chunks copied as stored where they fit
// clang-format on
//
// The new array is built under a temporary name beside the destination (DST.b2nd-tmp-PID) and
// renamed into place when complete: a copy that fails or is killed leaves no DST, and a
// destination it replaces (overwrite) stays intact until then. Chunks are produced in parallel,
// with memory bounded by a few chunks per thread. A chunk of the result that is a chunk of a
// source with the same chunk and block shape and the same compression is copied as stored,
// without decoding; with other compression it is decoded whole and encoded again in the same
// layout; other chunks are read from the sources into the new chunk's layout.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <b2nd/any_array.hpp>

namespace b2nd {

/// What a copy did.
struct CopyStats {
    std::int64_t chunks = 0;   ///< chunks of the result
    std::int64_t copied = 0;   ///< of which copied as stored, without decoding
    std::int64_t encoded = 0;  ///< of which decoded and encoded again
};

/// How copy(), concatenate() and stack() write their result. Each field left unset keeps what
/// the (first) source has.
struct CopyOptions {
    /// Chunk and block shapes of the result. A new chunk shape without a block shape gets
    /// automatic blocks.
    std::optional<Shape> chunk_shape;
    std::optional<Shape> block_shape;              ///< see chunk_shape (empty: the source's)
    std::optional<CompressionParams> compression;  ///< empty: the source's compression
    std::optional<bool> sparse;                    ///< a directory (sframe) or one file (cframe)
    bool overwrite = false;  ///< replace an existing destination (once the copy is complete)
    /// Copy the (first) source's user metalayers and vlmeta (attributes).
    bool metadata = true;
    /// Decode every chunk copied as stored before copying it: a structurally corrupt chunk then
    /// stops the copy (FormatError naming the file and chunk) instead of being carried over.
    /// Chunks that are encoded again are always decoded.
    bool verify = false;
    int nthreads = 0;     ///< 0: all cores
    bool durable = true;  ///< fsync the result before it is renamed into place, then its directory
    /// Refuse a result of more chunks than this and than the largest source has (as
    /// CreateOptions::max_chunks).
    std::int64_t max_chunks = storage::kDefaultMaxChunks;
    /// With overwrite: how long to wait for another writer of the destination to close.
    int lock_wait_ms = 0;
    /// Called after each chunk of the result, one call at a time: (chunks done, total).
    std::function<void(std::int64_t, std::int64_t)> progress;
    /// Filled in when not null.
    CopyStats* stats = nullptr;
    /// How an s3:// destination is reached (as CreateOptions::s3).
    storage::S3Options s3;
};

/// A copy of `src` at `dst`, opened for reading (AnyArray::open with writable to change it).
/// \throws UsageError for a destination that exists (without overwrite), is the source, or for
/// shapes that do not fit; the errors of reading src; IoError
AnyArray copy(const AnyArray& src, const std::string& dst, const CopyOptions& options = {});

/// The arrays joined along an existing axis (negative counts from the end), as numpy.concatenate.
/// They must have one dtype and equal extents on every other axis.
AnyArray concatenate(const std::vector<AnyArray>& srcs,
                     int axis,
                     const std::string& dst,
                     const CopyOptions& options = {});

/// The arrays stacked along a new axis, as numpy.stack. They must have one dtype and one shape.
/// Default chunks and blocks are the first source's with 1 along the new axis, so that every
/// chunk is copied as stored.
AnyArray stack(const std::vector<AnyArray>& srcs,
               int axis,
               const std::string& dst,
               const CopyOptions& options = {});

}  // namespace b2nd
