// Options for opening and creating arrays.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <b2nd/codec/ids.hpp>
#include <b2nd/dtype.hpp>
#include <b2nd/grid.hpp>
#include <b2nd/storage/open_options.hpp>

namespace b2nd {

using codec::Codec;
using codec::Filter;
using codec::FilterSlot;
using codec::SplitMode;

/// How chunks are compressed. The defaults are python-blosc2's: Zstd level 1 with SHUFFLE.
/// Plugin codecs take their parameter in codec_meta (docs/plugins.md):
///  - Codec::ndlz: the cell side, 4 or 8 (2-d arrays);
///  - Codec::zfp_accuracy: e, the absolute error stays below 10^e (int8: -3 is 1e-3);
///  - Codec::zfp_precision: bit planes kept (plus 5 + 2 (ndim - 1));
///  - Codec::zfp_rate: the size of every block as a percentage of its uncompressed size.
/// Plugin filters take theirs in their meta byte: NDCELL and NDMEAN the cell side, INT_TRUNC
/// the bits to keep (positive) or to clear (negative).
struct CompressionParams {
    Codec codec = Codec::zstd;  ///< the compressor (or a plugin codec's id)
    int clevel = 1;             ///< 0 (stored) to 9
    /// Applied in order (at most 6, format::kChunkMaxFilters); each with its meta byte
    /// (SHUFFLE: bytes per unit, 0 for the item size; TRUNC_PREC: the precision bits to keep).
    std::vector<FilterSlot> filters = {{Filter::shuffle, 0}};
    SplitMode splitmode =
        SplitMode::forward_compat;  ///< streams split per byte, or not (c-blosc2's)
    std::uint8_t codec_meta = 0;    ///< the codec's parameter (plugin codecs; 0 for Blosc's own)

    /// ZFP fixed accuracy, no filter: every value within 10^exponent (-128..127).
    static CompressionParams zfp_accuracy(int exponent);
    /// ZFP fixed precision, no filter: `bits` planes plus 5 + 2 (ndim - 1) (1..255).
    static CompressionParams zfp_precision(int bits);
    /// ZFP fixed rate, no filter: every block takes `percent` of its size (1..100).
    static CompressionParams zfp_rate(int percent);
    /// NDLZ with cells of side 4 or 8, after a SHUFFLE (which makes byte planes of wider items).
    /// \throws UsageError for parameters out of range
    static CompressionParams ndlz(int cell = 4);
};

/// Default byte budget of an array's decoded-block cache.
inline constexpr std::size_t kDefaultCacheBytes = std::size_t{256} << 20;

/// Options for open(): how the frame is opened (storage::OpenOptions: writable, offset, durable,
/// locking, lock_wait_ms, auto_compact, exclusive, and the limits on what a file may ask for),
/// and what the array adds.
struct OpenOptions : storage::OpenOptions {
    /// Use this dtype instead of the stored one (its itemsize must equal the stored typesize):
    /// for legacy caterva arrays, which store none, and for files whose dtype is wrong.
    std::optional<DType> dtype;
    /// Threads used to decode and encode (0: all cores).
    int nthreads = 0;
    /// Byte budget of the decoded-block cache (0 disables it).
    std::size_t cache_bytes = kDefaultCacheBytes;
    /// Follow other writers: before each read, look whether a commit happened since this
    /// handle's snapshot (a load from shared memory) and if so refresh() first. Off: the handle
    /// reads its snapshot until refresh() is called.
    bool follow = false;
    /// Hold the lock file's shared lock through each read, and follow: for arrays that other
    /// programs rewrite in place (c-blosc2's writers with locking on). Costs two system calls per
    /// read. b2nd-cpp's writers never need it. Ignored for a writable handle.
    bool lock_reads = false;
    /// Open python-blosc2's object kinds (objects.hpp) as the frames they are stored in: a
    /// persisted expression's empty carrier, a proxy's cache with its holes. For tools that show
    /// what a file holds; reads of data then return what is stored, not the object's values.
    bool raw_objects = false;
    /// Where relative paths in a persisted expression's operands are resolved (python resolves
    /// them against the carrier file's directory, the default here; for a carrier inside a
    /// store, the store's directory). Empty: the array file's directory, or the current one.
    std::string objects_dir;
    /// An array opened by URL: keep the chunks and blocks it fetches in this local file, for
    /// later handles and processes (python-blosc2's Proxy cache layout; docs/HTTP.md). The file is
    /// checked against the server's ETag / Last-Modified at open and emptied when the remote file
    /// changed. Empty: no cache.
    std::string http_cache;
    /// Bound on the bytes the cache files of the cache's directory store together, across
    /// processes (0: none): a store's leaf caches, or the cache files of several arrays kept
    /// side by side. Chunks beyond it push others out, the least recently stored file's first
    /// (docs/HTTP.md). Counted in the directory's `.b2nd-cache-ledger`, created beside them.
    std::uint64_t http_cache_bytes = 0;
    /// Recovery: a chunk that cannot be read (its file missing, its checksum or bytes bad)
    /// reads as zeros instead of failing the read, and AnyArray::salvaged() names it. For
    /// getting what can be got out of a damaged array (b2nd export --salvage), never for
    /// ordinary reads.
    bool salvage = false;
    /// A .b2d store whose directory holds symbolic links (to leaf files or to directories of
    /// them): refused by default (UsageError naming the link), since a link can lead anywhere,
    /// such as a file of another user; true reads through them. Writes never go through one.
    bool store_links = false;
    /// A persisted expression's operands are looked for relative to it: from the carrier's
    /// directory, or for a carrier opened by URL on the same server (an absolute path is a file
    /// of that server, never a local one). An absolute local path or a URL is refused by name:
    /// a downloaded or served carrier could otherwise read any file the user can, or send
    /// requests anywhere. true follows them, as python-blosc2 does (it writes absolute paths
    /// when its operands were opened by one).
    bool operands_anywhere = false;
    /// An HDF5 dataset whose data lies in other files (external storage, a virtual dataset), or
    /// reached through an external link: refused by default (UsageError naming what it points
    /// at), since such a file can read any file the user can (a downloaded file naming
    /// /etc/shadow or /proc/self/environ). true follows them, only to regular files inside the
    /// HDF5 file's directory (links resolved, then checked), never to virtual sources that are
    /// themselves virtual.
    bool hdf5_external = false;
    /// HDF5 datasets whose filters are neither libhdf5's own (deflate, shuffle, fletcher32,
    /// nbit, scaleoffset) nor this library's (LZF 32000, Blosc 32001) have libhdf5 load the
    /// system's filter plugins (HDF5_PLUGIN_PATH, else libhdf5's plugin directory), which then
    /// decode the file's bytes. false refuses such datasets instead (their read fails, naming
    /// the filter).
    bool hdf5_plugins = true;
};

/// What a new array holds before anything is written.
enum class Fill {
    zeros,   ///< every element 0 (special chunks: nothing stored)
    uninit,  ///< unspecified content (special chunks, reads as 0 here)
    nan,     ///< NaN (float dtypes only)
    value,   ///< CreateOptions::fill_value repeated
};

/// Options for create().
struct CreateOptions {
    /// Chunk and block shapes; empty = chosen automatically (blocks near a quarter of the L2
    /// cache, chunks near 4 MiB, shaped as close to cubes as the array allows).
    Shape chunk_shape;
    Shape block_shape;                     ///< see chunk_shape
    CompressionParams compression;         ///< codec, level, filters (zstd 1 + SHUFFLE by default)
    bool sparse = false;                   ///< a directory (sframe) instead of one file (cframe)
    bool overwrite = false;                ///< replace an existing file or directory
    Fill fill = Fill::zeros;               ///< what the chunks hold before anything is written
    std::vector<std::uint8_t> fill_value;  ///< one element, in the stored byte order (Fill::value)
    /// User metalayers (fixed size once written; vlmeta can be changed later).
    std::vector<std::pair<std::string, std::vector<std::uint8_t>>> metalayers;
    /// Threads that encode and decode (0: all cores). The file holds the same bytes for any
    /// number (chunks go to it in their order), but for the count the header records (bytes
    /// 0x3f-0x42, as c-blosc2 records its own) and the checksum table's digest of the header.
    int nthreads = 0;
    std::size_t cache_bytes = kDefaultCacheBytes;  ///< the decoded blocks' cache of its handle
    /// The new array's data, then its directory entry, are fsynced before create returns (and
    /// its handle's commits are durable, as OpenOptions::durable); off for scratch data.
    bool durable = true;
    bool locking = true;  ///< as OpenOptions::locking
    /// With overwrite: how long to wait for another writer of the array being replaced to close
    /// (0: LockError at once), as OpenOptions::lock_wait_ms.
    int lock_wait_ms = 0;
    bool auto_compact = true;  ///< as OpenOptions::auto_compact
    /// Refuse shapes of more chunks than this: what an open accepts (OpenOptions::max_chunks),
    /// so that nothing is created that a default open would refuse.
    std::int64_t max_chunks = storage::kDefaultMaxChunks;
    /// Carry checksums (docs/CHECKSUMS.md): every commit writes a table of XXH3-64 digests of
    /// the header, the index, the vlmetalayers and each chunk, in a vlmetalayer c-blosc2 and
    /// python-blosc2 ignore; reads check them (OpenOptions::verify_checksums).
    bool checksums = true;
    /// How an s3:// destination is reached (credentials, region, endpoint); empty fields come
    /// from the environment and the AWS files, as for reads (storage/s3.hpp).
    storage::S3Options s3;
};

/// The automatic chunk and block shapes for an array (what create() picks when none is given).
std::pair<Shape, Shape> auto_chunk_block_shapes(const Shape& shape, std::int64_t itemsize);

}  // namespace b2nd
