// AnyArray: a b2nd array with its dtype known at run time (any dtype, including ones with no C++
// type). Copies are handles to the same open array (its mapping, cache and lock).
//
// clang-format off
//   auto a = b2nd::AnyArray::open("data.b2nd");
//   std::vector<std::uint8_t> bytes = a.read(b2nd::parse_selection("0:10, 3"));
//   b2nd::Shape shape = b2nd::resolve(a.shape(), b2nd::parse_selection("0:10, 3")).shape;
// clang-format on
//
// Data crosses this interface as raw bytes in the stored byte order (NDArray<T> converts).
// All const member functions may run concurrently from many threads; writes (write, resize,
// insert, remove, metadata) are serialized against them. shape() and friends return references
// that a concurrent resize invalidates: do not resize while other threads use the array.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <b2nd/byte_span.hpp>
#include <b2nd/dtype.hpp>
#include <b2nd/grid.hpp>
#include <b2nd/params.hpp>
#include <b2nd/selection.hpp>

// The library's deprecated wrappers call the spellings they forward to without a warning.
#define B2ND_ALLOW_DEPRECATED_BEGIN \
    _Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Wdeprecated-declarations\"")
#define B2ND_ALLOW_DEPRECATED_END _Pragma("GCC diagnostic pop")

namespace b2nd {

class AnyArray;
class Attrs;
class EngineAccess;
struct Mask;

namespace detail {
class ArrayCore;
/// Internal (NDArray<T>): \throws UsageError naming the file and the reason when `box` is not a
/// box of `a` (`op` says what for: "read", "write").
void require_box(const AnyArray& a, const Box& box, const char* op);
/// Internal: \throws UsageError naming the file and the size when `elements` of `a` cannot be
/// held in memory (their bytes overflow, or exceed the machine's physical memory).
void require_memory(const AnyArray& a, std::uint64_t elements, const char* op);
}  // namespace detail
namespace storage {
class ByteSource;
class Frame;
}  // namespace storage

template <class T>
class NDArray;

/// Counters of an array's decoded-block cache.
struct CacheStats {
    std::size_t budget_bytes = 0;  ///< the cache's bound (OpenOptions::cache_bytes)
    std::size_t used_bytes = 0;    ///< decoded blocks it holds now
    /// Lookups that found their block, and that did not. Single elements read from the block
    /// the same thread read its previous element from are served without a lookup and counted
    /// in neither.
    std::uint64_t hits = 0;
    std::uint64_t misses = 0;  ///< see hits
};

/// An array of any dtype, read and written as bytes in the stored byte order: the untyped face
/// of NDArray<T> (NDArray<T>::any()), for code that learns the dtype at run time. Copies share
/// one open array; everything const is safe from many threads at once.
class AnyArray {
public:
    AnyArray() = default;

    /// Opens a contiguous (.b2nd file) or sparse (.b2frame directory) array.
    /// \throws IoError, FormatError, UnsupportedError naming the file; UsageError for a dtype
    ///         override of the wrong size
    static AnyArray open(const std::string& path, const OpenOptions& options = {});
    /// A read-only array over a contiguous frame in the caller's memory, which must outlive it
    /// (no copy). options.writable must be false.
    static AnyArray open_buffer(ByteSpan frame, const OpenOptions& options = {});
    /// A read-only array over a frame in a byte source (<b2nd/storage/byte_source.hpp>: a
    /// window of a mapped file such as a zip member, a buffer, a source that fetches ranges),
    /// starting at options.offset of it. Messages name the source. options.writable must be false.
    static AnyArray open(std::shared_ptr<const storage::ByteSource> source,
                         const OpenOptions& options = {});
    /// Creates an array filled as options.fill says. \throws UsageError, IoError
    static AnyArray create(const std::string& path,
                           const DType& dtype,
                           const Shape& shape,
                           const CreateOptions& options = {});
    /// Creates an array holding `data` (C order, shape's elements, stored byte order).
    static AnyArray create_from(const std::string& path,
                                const DType& dtype,
                                const Shape& shape,
                                ByteSpan data,
                                const CreateOptions& options = {});

    /// A writable array that lives in memory: everything that works on a file works on it. Its
    /// frame is kept in a private directory on a RAM file system (/dev/shm; else the temporary
    /// directory, or B2ND_MEMORY_DIR when set), removed when the last handle goes (directories of
    /// processes that died are removed by the next create_in_memory). path() names it.
    static AnyArray create_in_memory(const DType& dtype,
                                     const Shape& shape,
                                     const CreateOptions& options = {});
    /// An in-memory array holding `data` (C order, stored byte order).
    static AnyArray create_in_memory_from(const DType& dtype,
                                          const Shape& shape,
                                          ByteSpan data,
                                          const CreateOptions& options = {});

    /// Whether it holds an array (a default-constructed one does not).
    bool valid() const noexcept { return core_ != nullptr; }
    /// valid().
    explicit operator bool() const noexcept { return valid(); }

    /// The file or directory (or URL); empty for an array in memory, a store's leaf, a Zarr array
    /// or an HDF5 dataset, which are not files of their own (name() says what they are).
    const std::string& path() const;
    /// What messages call it: path(), or where it was read from ("ocean.h5:/run7/t", a store's
    /// "runs.b2z:/run3/t", a Zarr array's directory); empty for an array made in memory.
    const std::string& name() const;
    /// The dtype items are read as: the stored one, or the OpenOptions override, or raw bytes
    /// when the stored one cannot be trusted (dtype_note() says why).
    const DType& dtype() const;
    /// Why dtype() differs from what the file states ("" when it does not).
    const std::string& dtype_note() const;
    /// The array's geometry: shape, chunks, blocks, item size.
    const Grid& grid() const;
    /// The array's shape.
    const Shape& shape() const { return grid().shape(); }
    /// The shape of its chunks.
    const Shape& chunk_shape() const { return grid().chunk_shape(); }
    /// The shape of the blocks inside a chunk.
    const Shape& block_shape() const { return grid().block_shape(); }
    /// The number of dimensions.
    int ndim() const { return grid().ndim(); }
    /// Elements in the array.
    std::int64_t size() const { return grid().size(); }
    /// Bytes per element.
    std::int64_t itemsize() const { return grid().itemsize(); }
    /// Uncompressed bytes of the array's elements: the product of the shape times the item size
    /// (edge chunks are stored padded to whole chunks; that padding is not counted).
    std::int64_t nbytes() const { return grid().nbytes(); }
    /// Bytes the array's chunks take as stored (headers included; what updates left behind,
    /// until compaction, not). nbytes() / cbytes() is the compression ratio.
    std::int64_t cbytes() const;
    /// With OpenOptions::salvage: the chunks read as zeros because they could not be read,
    /// each with why (in chunk order); empty otherwise.
    std::vector<std::string> salvaged() const;
    /// Whether its frame is sparse (a directory, one file per chunk).
    bool sparse() const;
    /// Whether this handle may write.
    bool writable() const;
    /// True for legacy arrays with the 'caterva' metalayer.
    bool legacy_caterva() const;
    /// How its chunks are compressed (from the frame's header and first chunk).
    CompressionParams compression() const;
    /// The underlying frame (chunks, header, metalayers) for tooling.
    const storage::Frame& frame() const;

    /// Threads that decode and encode for this handle (its share of the shared pool).
    int nthreads() const;
    /// Sets nthreads() (0: all cores).
    void set_nthreads(int n);

    // ---- sharing with other handles and processes (docs/sharing.md, "Sharing an array between
    // processes") ----
    /// Adopts what other handles (in any process) committed since this handle's snapshot:
    /// shape, chunks, mappings; cached blocks of replaced chunks are dropped. Applies to every
    /// copy of this handle. True when something changed. \throws FormatError if the new state
    /// is malformed
    bool refresh();
    /// Whether reads refresh() first when another handle has committed (OpenOptions::follow).
    bool follows() const;
    /// A handle that reads the array as it is now and never follows: itself, unless it follows,
    /// else a new read-only handle on the same file. Views and evaluate() read through one, so
    /// that each sees one committed state.
    AnyArray pinned() const;

    // ---- reading ----
    /// Reads `box` into out (C order of box.count; out_bytes must be box.size() * itemsize()).
    /// \throws UsageError for a box out of range or a buffer of the wrong size; FormatError for
    ///         corrupt chunks (naming file and chunk)
    void read(const Box& box, void* out, std::size_t out_bytes) const;
    /// The elements of `box`, C order, stored byte order.
    std::vector<std::uint8_t> read(const Box& box) const;
    /// Reads a selection (NumPy-style slices, indices and index lists, combined orthogonally;
    /// its result's shape is resolve(shape(), sel).shape). \throws UsageError for a selection
    /// out of range, or one larger than the machine's memory
    std::vector<std::uint8_t> read(const Selection& sel) const;
    /// The elements of a selection given in place, as read(Selection).
    std::vector<std::uint8_t> read(std::initializer_list<DimIndex> sel) const {
        return read(Selection(sel));
    }
    /// One field of a structured array (nested names joined with '.': "pos.x") over a
    /// selection: the result's shape is resolve(shape(), sel).shape followed by the field's
    /// sub-array shape, its dtype the field's (`field_dtype`), stored byte order. Each touched
    /// block is decoded once and only the field's bytes of each element are copied.
    /// \throws UsageError naming the file and the fields there are, when there is no such field
    std::vector<std::uint8_t> read_field(const std::string& field,
                                         const Selection& sel = {},
                                         DType* field_dtype = nullptr,
                                         Shape* result_shape = nullptr) const;
    /// One field of a structured array as an array of its own (nested names "pos.x"; a
    /// sub-array field adds its dimensions): a lazy view whose reads decode each touched block
    /// of this array once and stride through the field, with every read operation of an array
    /// (selections, elements, chunkwise visits, xtensor); its writes (write, write_points,
    /// write_orthogonal) change that field of this array only, re-encoding the touched chunks.
    /// A sub-array field is written by whole sub-arrays. \throws UsageError for an unknown field
    AnyArray field(const std::string& name) const;
    /// This array's items under other chunk and block shapes, as a read-only view: each block
    /// of the view is read as a box of this array (its blocks decoded once, through its cache),
    /// so that a chunkwise pass (for_each_chunk, an export, evaluate) works on the new chunks.
    /// `chunks` empty: this array's; `blocks` empty: this array's when the chunks are kept, else
    /// chosen for the new chunks. Nothing is written. \throws UsageError naming the array for
    /// shapes of another rank or a grid that cannot be (a block larger than its chunk, ...)
    AnyArray rechunked(const Shape& chunks, const Shape& blocks = {}) const;
    /// Writes field `name` of the selection from data (the field's values, C order, stored
    /// byte order; or one value for all). The other fields keep their bytes.
    void write_field(const std::string& name, const Selection& sel, ByteSpan data);
    /// Reads a selection already resolved against shape() (a box, or index lists) into out
    /// (C order of sel.shape; out_bytes must be sel.size() * itemsize()).
    void read(const Resolved& sel, void* out, std::size_t out_bytes) const;
    /// Reads `box` into a strided buffer (strides in bytes per dimension, may be negative).
    void read_strided(const Box& box, void* out, const std::int64_t* strides) const;
    /// The whole array (as it is in the state read).
    std::vector<std::uint8_t> read() const { return read(Selection{}); }
    /// Resolves `sel` against the shape of the state it reads and reads it into
    /// destination(resolved), called once under the array's lock with what will be read.
    void read_selection(const Selection& sel,
                        const std::function<void*(const Resolved&)>& destination) const;
    /// One element (ndim coordinates). \throws UsageError when out of range
    void read_element(const std::int64_t* idx, void* out) const;
    /// `n` elements: point i has coordinates coords[i * ndim() ...] and goes to out at byte
    /// i * itemsize(). Each touched block is decoded once, blocks in parallel.
    void read_points(const std::int64_t* coords, std::size_t n, void* out) const;
    /// Orthogonal selection, as python-blosc2's `oindex` and c-blosc2's
    /// b2nd_get_orthogonal_selection: one index list per dimension (any order, repeats allowed,
    /// negative indices count from the end); the result has the lists' lengths as its shape and
    /// is written in C order into out (out_bytes must match). Each touched block is decoded once,
    /// blocks in parallel. \throws UsageError naming the axis and index out of range
    /// Deprecated: one index list per dimension is a Selection (DimIndex::list), read by
    /// read(Selection) or read(const Resolved&, ...); this spelling goes in a later release.
    [[deprecated(
        "index lists are a Selection: read(Selection), or read(resolve(shape(), sel), "
        "out, bytes)")]] void
    read_orthogonal(const std::vector<std::vector<std::int64_t>>& indices,
                    void* out,
                    std::size_t out_bytes) const;
    [[deprecated("index lists are a Selection: read(Selection)")]] std::vector<std::uint8_t>
    /// Deprecated: index lists per dimension; use read(Selection).
    read_orthogonal(const std::vector<std::vector<std::int64_t>>& indices) const;

    /// Boolean mask selection a[mask] (mask.hpp): the elements where the mask is true, in C
    /// order. The mask is read in slabs; each touched block is decoded once.
    /// \throws UsageError for a mask of another shape
    std::vector<std::uint8_t> read_masked(const Mask& mask) const;
    /// The same, streamed: sink(elements, count) for successive runs of the result, in order,
    /// with memory bounded by a slab.
    void read_masked(const Mask& mask,
                     const std::function<void(const std::uint8_t*, std::int64_t)>& sink) const;

    // ---- writing (open with writable, or create) ----
    /// Writes `data` (C order of box.count) into box; steps are allowed.
    void write(const Box& box, ByteSpan data);
    /// Writes a selection (slices, integers, index lists, new axes): `data` holds the
    /// selection's elements in C order, or one element for all of them, or, with `data_shape`,
    /// an array that broadcasts to the selection's shape (NumPy's rules; broadcasting over a
    /// box copies nothing). Only touched chunks are re-encoded; one commit.
    /// \throws UsageError for a selection out of range or data that does not fit it
    void write(const Selection& sel,
               ByteSpan data,
               const std::optional<Shape>& data_shape = std::nullopt);
    /// Writes `n` elements: point i has coordinates coords[i * ndim() ...] and takes the
    /// element at byte i * itemsize() of `data`, or `data` is one element written to every
    /// point. The last of repeated points wins; only touched chunks are re-encoded, one commit.
    /// \throws UsageError naming a point out of range, or for a wrong amount of data
    void write_points(const std::int64_t* coords, std::size_t n, ByteSpan data);
    /// Writes the orthogonal selection `indices` (see read_orthogonal) from `data`: the
    /// selection's elements in C order over the lists, or a single element written to all of
    /// them. Where an index repeats in a list, the last occurrence wins. Only the touched chunks
    /// are re-encoded, and they are committed once.
    /// Deprecated: write(Selection, data) with index lists says the same.
    [[deprecated("index lists are a Selection: write(Selection, data)")]] void write_orthogonal(
        const std::vector<std::vector<std::int64_t>>& indices, ByteSpan data);
    /// Writes a selection already resolved against shape() from data (C order of sel.shape).
    void write(const Resolved& sel, ByteSpan data);
    /// a[mask] = data: `data` holds one element per true element of the mask (C order), or one
    /// element for all of them (then only chunks holding a true element are rebuilt, with
    /// memory bounded by a chunk per thread). One commit.
    void write_masked(const Mask& mask, ByteSpan data);
    /// Changes the shape; new elements are zero.
    void resize(const Shape& shape);
    /// Appends `data` along `axis` (its shape: the array's, with any extent along axis).
    void append(int axis, ByteSpan data);
    /// Inserts `data` before index `pos` along `axis`.
    void insert(int axis, std::int64_t pos, ByteSpan data);
    /// Removes `count` slices from `pos` along `axis`.
    void remove(int axis, std::int64_t pos, std::int64_t count);

    // ---- chunk by chunk (the primitives of out-of-core evaluation and reductions) ----
    /// Writes chunk `index` as the Blosc2 chunk `chunk`, compressed by the caller (a camera or a
    /// pipeline that compresses on its own threads), without a second encode. Checked before it
    /// is committed: its header, that it holds the array's chunk (its size, item size and
    /// block size: one Blosc2 block per b2nd block), and that every block decodes; the checksum
    /// table, when the array carries one, then covers it as any chunk. One commit.
    /// \throws UsageError for an index out of range or a read-only array; FormatError naming
    /// the array and the chunk for a chunk that is not one of this array's
    void write_chunk_raw(std::int64_t index, ByteSpan chunk);
    /// Computes whole chunks and writes them: produce(chunk, region, out) writes the `region`
    /// (a chunk's valid box) of `chunk` into out, C order, stored byte order. Called from up to
    /// `in_flight` threads at once (0: nthreads()); memory stays at a few chunks per thread. The
    /// array is not locked while producing: produce may read this array and sees its old content.
    /// One atomic commit at the end; progress(done, total) after each chunk.
    void write_chunks(const std::vector<std::int64_t>& chunks,
                      const std::function<void(std::int64_t, const Box&, std::uint8_t*)>& produce,
                      int in_flight = 0,
                      const std::function<void(std::int64_t, std::int64_t)>& progress = {});
    /// Calls visit(chunk, region, data, uniform) for each chunk from up to in_flight threads:
    /// data holds the region's elements (C order), or is null when the chunk is uniform (a
    /// special or repeated-value chunk, not decoded) and `uniform` points at its one element.
    void for_each_chunk(
        const std::vector<std::int64_t>& chunks,
        const std::function<
            void(std::int64_t, const Box&, const std::uint8_t*, const std::uint8_t*)>& visit,
        int in_flight = 0) const;
    /// 0, 1, ..., nchunks - 1.
    std::vector<std::int64_t> all_chunks() const;

    // ---- metadata ----
    /// Names of the fixed-size metalayers ("b2nd" among them).
    std::vector<std::string> metalayer_names() const;
    /// The content of metalayer `name`, if there is one.
    std::optional<std::vector<std::uint8_t>> metalayer(const std::string& name) const;
    /// Overwrites a user metalayer (its size cannot change).
    void update_metalayer(const std::string& name, ByteSpan content);
    /// Names of the variable-length metalayers (vlmeta).
    std::vector<std::string> vlmeta_names() const;
    /// The content of vlmeta entry `name` as stored (decompressed), if there is one.
    std::optional<std::vector<std::uint8_t>> vlmeta(const std::string& name) const;
    /// Sets vlmeta entry `name` (one commit).
    void set_vlmeta(const std::string& name, ByteSpan content);
    /// Deletes vlmeta entry `name`; false when there was none.
    bool delete_vlmeta(const std::string& name);
    /// The vlmeta as msgpack values, python-blosc2's attributes (<b2nd/attrs.hpp>).
    Attrs attrs() const;

    // ---- whole arrays ----
    /// Whether it was made by create_in_memory.
    bool in_memory() const;
    /// The bytes of a contiguous frame holding the array (python-blosc2's to_cframe); chunks are
    /// copied as stored. open_buffer() reads them.
    std::vector<std::uint8_t> to_cframe() const;
    /// Writes the array to `path` as a contiguous frame (b2nd::copy for other options) and
    /// returns it opened for reading. \throws UsageError when path exists and !overwrite
    AnyArray save(const std::string& path, bool overwrite = false) const;

    // ---- cache and storage ----
    /// Hits, misses and bytes of the decoded-block cache.
    CacheStats cache_stats() const;
    /// Bounds the decoded-block cache (dropping what passes the bound).
    void set_cache_bytes(std::size_t bytes);
    /// Drops every cached block.
    void clear_cache();
    /// Makes every write so far durable.
    void sync();
    /// Rewrites the file without the space updates left behind.
    /// progress(chunks done, chunks in all) after each chunk copied.
    void compact(const std::function<void(std::int64_t, std::int64_t)>& progress = {});

    /// The typed view. \throws UsageError when T does not match dtype()
    template <class T>
    NDArray<T> as() const;

private:
    friend void detail::require_box(const AnyArray& a, const Box& box, const char* op);
    friend void detail::require_memory(const AnyArray& a, std::uint64_t elements, const char* op);
    // The library's own layers reach the engine through it (src/engine/engine_access.hpp).
    friend class EngineAccess;
    explicit AnyArray(std::shared_ptr<detail::ArrayCore> core) : core_(std::move(core)) {}
    detail::ArrayCore& core() const;
    /// The core for one read call: refreshed first when it follows and another handle has
    /// committed; with OpenOptions::lock_reads, `lock` holds the shared lock for the call.
    struct Reading;
    Reading reading() const;
    std::int64_t extent_of(int axis, std::size_t nbytes, const char* op) const;
    std::shared_ptr<detail::ArrayCore> core_;
};

}  // namespace b2nd
