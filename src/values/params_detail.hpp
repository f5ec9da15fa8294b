// Internal: the one place where the public options (params.hpp) become the codec's and the
// storage layer's parameters, and where a frame header's codec fields become options again.
#pragma once

#include <string>

#include <b2nd/codec/chunk_encoder.hpp>
#include <b2nd/format/frame_header.hpp>
#include <b2nd/grid.hpp>
#include <b2nd/params.hpp>
#include <b2nd/storage/frame.hpp>

namespace b2nd::detail {

/// Why `c` cannot compress chunks of `g` ("" when it can): clevel outside 0..9, too many
/// filters, and every rule of the codec and the filters (plugins: codec::check_encode_params).
std::string check_compression(const CompressionParams& c, const Grid& g);

/// Why `c` does not suit items of `dtype` ("" when it does): ZFP and NDMEAN treat every item as
/// a little-endian float, so other dtypes are refused rather than turned into noise.
std::string check_values(const CompressionParams& c, const DType& dtype);

/// The compression a frame header records (filters in order, empty slots dropped).
CompressionParams compression_of(const format::FrameHeader& h);

/// How to encode new chunks of an existing array so that they match its frame header: its codec
/// (zstd for a plugin codec, which is refused before any write), clevel, filter slots as they
/// stand, split mode, and the grid's block size.
codec::EncodeParams encode_params_of(const format::FrameHeader& h, const Grid& g);

/// How to encode chunks of `g` with `c` (checked with check_compression first).
codec::EncodeParams encode_params(const CompressionParams& c, const Grid& g);

/// The header fields of a new frame holding chunks of `g` encoded with `c`.
storage::FrameParams frame_params(const CompressionParams& c, const Grid& g, int nthreads);

/// How the storage layer opens the frame of an array opened with `o`.
storage::OpenOptions frame_options(const OpenOptions& o);
/// ... and of an array just created with `o` (writable).
storage::OpenOptions frame_options(const CreateOptions& o);
/// The options an array created with `o` is opened with: writable, and o's threads, cache,
/// durability, locking and compaction.
OpenOptions opened_options(const CreateOptions& o);

/// The typesize chunk headers record for items of `itemsize` bytes (1 above 255, as c-blosc2).
int chunk_typesize(std::int64_t itemsize) noexcept;

/// A thread count as the options give it: n > 0 itself, 0 (or less) every core.
int resolve_nthreads(int n) noexcept;

}  // namespace b2nd::detail
