// python-blosc2's variable-length containers: strings and items of any length.
//
//   auto names = b2nd::UTF8Array::open("names.b2nd");      // and names.utf8.b2nd beside it
//   b2nd::Strings some = names.read(100, 200);              // strings 100..199
//   std::string_view s = some[0];
//
//   auto objs = b2nd::ObjectArray::open("objs.b2frame");   // one msgpack item per chunk
//   b2nd::Value v = objs.item(3);
//
//   auto batches = b2nd::BatchArray::open("rows.b2b");      // batches of items in VL blocks
//   std::vector<b2nd::Value> rows = batches.items(10, 20);  // flat items 10..19
//
// The layouts (python-blosc2 4.x):
//  - UTF8Array (_utf8_array.py): n strings in two b2nd arrays, int64 offsets (n + 1 entries,
//    offsets[0] = 0, string i is bytes [offsets[i], offsets[i+1])) and uint8 bytes (at least one
//    long: a slack byte when empty). A standalone pair is NAME.b2nd + NAME.utf8.b2nd, a CTable's
//    utf8 column is KEY + KEY.utf8. A read fetches the offsets and bytes of its strings only.
//  - ObjectArray (objectarray.py, metalayer "vlarray"): a super-chunk with one chunk per item,
//    the item's msgpack. Reading item i decodes chunk i only.
//  - BatchArray (batch_array.py, metalayer "batcharray"): one chunk per batch, split into VL
//    blocks of items_per_block items, each block a msgpack array (or an Arrow IPC stream); the
//    batch lengths are in the vlmeta `_batch_array_metadata`. Reading an item decodes its block.
//  - ListArray (list_array.py, metalayer "listarray"): rows kept in an ObjectArray (one row per
//    chunk) or a BatchArray (rows in batches); read as that container.
// Items are b2nd::Value (python's msgpack: a tuple is an array led by "__tuple__").
// Damaged containers (offsets that go back or past the bytes, an item that is no msgpack, a
// truncated VL block) raise FormatError naming the file and the place; nothing is guessed.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <b2nd/any_array.hpp>
#include <b2nd/params.hpp>
#include <b2nd/value.hpp>

namespace b2nd {

class Store;
namespace storage {
class Frame;
}
namespace codec {
class ChunkDecoder;
}
/// A container's frame, shared by the handles that read it.
using FramePtr = std::shared_ptr<const storage::Frame>;

/// Counters of what a container's reads decoded (for tests and tuning).
struct ContainerStats {
    std::uint64_t chunks = 0;  ///< ObjectArray: chunks (items) decoded
    std::uint64_t blocks = 0;  ///< BatchArray: VL blocks decoded
};

/// Strings read from a UTF8Array: one buffer and the views into it.
class Strings {
public:
    Strings() = default;
    /// `bytes` holding every string, one after another; `ends[i]`: where string i ends.
    Strings(std::string bytes, std::vector<std::int64_t> ends);
    /// The number of strings.
    std::size_t size() const noexcept { return ends_.size(); }
    /// Whether there are none.
    bool empty() const noexcept { return ends_.empty(); }
    /// String i (UTF-8 as stored), valid while this object lives.
    std::string_view operator[](std::size_t i) const noexcept {
        const auto b = i == 0 ? 0 : static_cast<std::size_t>(ends_[i - 1]);
        return std::string_view(bytes_).substr(b, static_cast<std::size_t>(ends_[i]) - b);
    }
    /// Copies of every string.
    std::vector<std::string> to_vector() const;
    /// All strings' bytes, one after another.
    const std::string& bytes() const noexcept { return bytes_; }

private:
    std::string bytes_;
    std::vector<std::int64_t> ends_;
};

/// python-blosc2's UTF8Array (read), and the writer of new ones.
class UTF8Array {
public:
    UTF8Array() = default;
    /// The pair at `offsets_path` (NAME.b2nd) and NAME.utf8.b2nd beside it.
    /// \throws IoError, FormatError (naming the file: not int64 offsets, not uint8 bytes)
    static UTF8Array open(const std::string& offsets_path, const OpenOptions& o = {});
    /// The pair of arrays at `offsets_path` and `bytes_path`, wherever the bytes lie.
    static UTF8Array open(const std::string& offsets_path,
                          const std::string& bytes_path,
                          const OpenOptions& o = {});
    /// A CTable column or other store pair: KEY (offsets) and KEY.utf8 (bytes).
    static UTF8Array open(const Store& store, const std::string& key, const OpenOptions& o = {});
    /// Over two arrays already open (int64 offsets, uint8 bytes).
    static UTF8Array from_arrays(AnyArray offsets, AnyArray bytes);

    /// The number of strings.
    std::int64_t size() const;
    /// Strings [start, stop), clamped to [0, size()). Reads offsets start..stop and the bytes
    /// of those strings only. \throws FormatError for offsets that go back, do not start at 0
    /// or point past the bytes
    Strings read(std::int64_t start, std::int64_t stop) const;
    /// Every string.
    Strings read() const { return read(0, size()); }
    /// String i (negative counts from the end). \throws UsageError out of range
    std::string at(std::int64_t i) const;

    /// The offsets array (int64, size() + 1).
    const AnyArray& offsets() const { return offsets_; }
    /// The bytes array (uint8).
    const AnyArray& bytes() const { return bytes_; }

    /// Writes `strings` as python lays out a UTF8Array: offsets at `offsets_path` (int64, n + 1,
    /// chunks 2**17) and the bytes at NAME.utf8.b2nd (uint8, at least 1 long, chunks 2**21),
    /// blocks as python computes them, python's default compression unless `cparams` says.
    /// Each file is written beside its name and renamed. \throws UsageError when a file exists
    /// without overwrite
    static UTF8Array write(const std::string& offsets_path,
                           const std::vector<std::string>& strings,
                           const CompressionParams& cparams = {},
                           bool overwrite = false);
    /// The bytes file of the pair named by `offsets_path` (NAME.b2nd -> NAME.utf8.b2nd).
    static std::string bytes_path_for(const std::string& offsets_path);

private:
    AnyArray offsets_, bytes_;
    std::string where() const;
};

/// python-blosc2's ObjectArray ("vlarray"): one msgpack item per chunk.
class ObjectArray {
public:
    ObjectArray() = default;
    /// The ObjectArray at `path`. \throws FormatError when it is no ObjectArray
    static ObjectArray open(const std::string& path, const OpenOptions& o = {});
    /// The ObjectArray at a store's `key`.
    static ObjectArray open(const Store& store, const std::string& key);
    /// Over an open frame. \throws FormatError when it is no ObjectArray (no vlarray metalayer,
    /// a serializer other than msgpack)
    static ObjectArray from_frame(FramePtr frame);

    /// The number of items.
    std::int64_t size() const;
    /// Item i (negative counts from the end): decodes chunk i only.
    Value item(std::int64_t i) const;
    /// Items [start, stop), clamped.
    std::vector<Value> items(std::int64_t start, std::int64_t stop) const;
    /// Every item.
    std::vector<Value> items() const { return items(0, size()); }
    /// The frame as opened (metalayers, vlmeta).
    const storage::Frame& frame() const { return *frame_; }
    /// What reads decoded so far: chunks (items).
    ContainerStats stats() const;

    /// Writes `items` as python's ObjectArray does: a contiguous frame of variable-size chunks,
    /// metalayer vlarray {version 1, serializer msgpack}, one chunk per item (typesize 1).
    /// Written beside `path` and renamed.
    static ObjectArray write(const std::string& path,
                             const std::vector<Value>& items,
                             const CompressionParams& cparams = {},
                             bool overwrite = false);

private:
    FramePtr frame_;
    std::shared_ptr<std::atomic<std::uint64_t>> decoded_;
    std::string where() const;
};

/// python-blosc2's BatchArray ("batcharray"): batches of items, each batch one chunk of VL
/// blocks. Items are numbered flat over the batches, in order.
class BatchArray {
public:
    BatchArray() = default;
    /// The BatchArray at `path`. \throws FormatError when it is no BatchArray
    static BatchArray open(const std::string& path, const OpenOptions& o = {});
    /// The BatchArray at a store's `key`.
    static BatchArray open(const Store& store, const std::string& key);
    /// Over an open frame. \throws FormatError when it is no BatchArray
    static BatchArray from_frame(FramePtr frame);

    /// Items over all batches.
    std::int64_t size() const;
    /// The number of batches.
    std::int64_t nbatches() const;
    /// Items per batch.
    const std::vector<std::int64_t>& batch_lengths() const;
    /// Items per VL block (the last block of a batch may hold fewer).
    std::int64_t items_per_block() const;
    /// "msgpack" or "arrow".
    const std::string& serializer() const;
    /// The Arrow schema (IPC-serialized) of an "arrow" BatchArray; empty otherwise.
    const std::vector<std::uint8_t>& arrow_schema() const;

    /// Flat item i: decodes its VL block only. \throws UnsupportedError for Arrow items (read
    /// them with block_bytes)
    Value item(std::int64_t i) const;
    /// Flat items [start, stop), clamped; each VL block involved is decoded once.
    std::vector<Value> items(std::int64_t start, std::int64_t stop) const;
    /// Every item.
    std::vector<Value> items() const { return items(0, size()); }
    /// The items of batch b.
    std::vector<Value> batch(std::int64_t b) const;
    /// VL block k of batch b as stored after decompression (a msgpack array, or an Arrow IPC
    /// stream of one record batch).
    std::vector<std::uint8_t> block_bytes(std::int64_t b, std::int64_t k) const;
    /// The frame as opened (metalayers, vlmeta).
    const storage::Frame& frame() const { return *frame_; }
    /// What reads decoded so far: VL blocks.
    ContainerStats stats() const;

    /// Writes `batches` as python's BatchArray does (msgpack serializer): one chunk per batch,
    /// VL blocks of `items_per_block` items (0: python's guess from the first batch), metalayer
    /// batcharray and vlmeta _batch_array_metadata. Written beside `path` and renamed.
    static BatchArray write(const std::string& path,
                            const std::vector<std::vector<Value>>& batches,
                            std::int64_t items_per_block = 0,
                            const CompressionParams& cparams = {},
                            bool overwrite = false);

private:
    struct Layout;
    FramePtr frame_;
    std::shared_ptr<const Layout> layout_;
    std::shared_ptr<std::atomic<std::uint64_t>> decoded_;
    std::string where() const;
    /// Batch b's chunk, validated (a VL-block chunk), to decode its blocks with.
    codec::ChunkDecoder decoder(std::int64_t b) const;
    std::vector<std::uint8_t> block_bytes(const codec::ChunkDecoder& dec,
                                          std::int64_t b,
                                          std::int64_t k) const;
    std::vector<Value> block_items(const codec::ChunkDecoder& dec,
                                   std::int64_t b,
                                   std::int64_t k) const;
};

/// python-blosc2's ListArray ("listarray"): rows (lists) in an ObjectArray or a BatchArray.
class ListArray {
public:
    ListArray() = default;
    /// The ListArray at `path`. \throws FormatError when it is no ListArray
    static ListArray open(const std::string& path, const OpenOptions& o = {});
    /// The ListArray at a store's `key`.
    static ListArray open(const Store& store, const std::string& key);
    /// Over an open frame. \throws FormatError when it is no ListArray
    static ListArray from_frame(FramePtr frame);
    /// The number of rows.
    std::int64_t size() const;
    /// Row i (a list, as python gives it; negative counts from the end).
    Value row(std::int64_t i) const;
    /// Rows [start, stop), clamped.
    std::vector<Value> rows(std::int64_t start, std::int64_t stop) const;
    /// The listarray metalayer (python's ListSpec: item kind, backend...).
    const Value& spec() const { return spec_; }

private:
    Value spec_;
    ObjectArray objects_;
    BatchArray batches_;
    bool batch_backend_ = false;
};

/// Items of any of the three item containers, by kind (what `b2nd show --json` prints):
/// a frame holding an ObjectArray, BatchArray or ListArray.
/// \throws UnsupportedError naming the kind for any other frame
std::vector<Value> container_items(const FramePtr& frame, std::int64_t start, std::int64_t stop);
std::int64_t container_size(const FramePtr& frame);
/// Whether a frame holds one of them (ObjectKind listarray, objectarray or batcharray).
bool is_item_container(const storage::Frame& frame);

}  // namespace b2nd
