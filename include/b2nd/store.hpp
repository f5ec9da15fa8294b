// python-blosc2's stores: many arrays under one name, with a hierarchy of keys ("/run1/t").
//
//   auto s = b2nd::Store::open("data.b2z");           // or "data.b2d", or "values.b2e"
//   for (const b2nd::StoreEntry& e : s.entries()) { ... e.key, e.kind, e.storage ... }
//   b2nd::NDArray<float> t = s.open<float>("/run1/temperature");
//   auto units = s.vlmeta("/run1");                    // a TreeStore group's attributes
//
// The forms (python-blosc2 4.x, dict_store.py, tree_store.py, embed_store.py):
//  - a DictStore or TreeStore is a directory (".b2d") or a zip file of members stored without
//    compression (".b2z"). Each large value is a file of its own (external: KEY.b2nd for arrays,
//    .b2f for super-chunks, .b2b for batch arrays, at the key's path); small values (below the
//    store's threshold) are embedded in `embed.b2e`, which is always there and holds the store's
//    tag (metalayer b2dict or b2tree);
//  - an EmbedStore (".b2e") is one super-chunk whose bytes hold the embedded values one after
//    another as contiguous frames; its vlmeta `estore_metadata` maps each key to its window
//    {offset, length} (or to a remote reference {urlbase, path});
//  - a TreeStore's group attributes live in the vlmeta of a super-chunk at GROUP/__vlmeta__,
//    which is not listed as a key.
//
// Opening a store maps it once and reads the zip's central directory (a .b2z) or the directory's
// file names (a .b2d), and the embed map: no leaf is opened until asked for. A .b2z leaf is a
// window of the one mapping of the archive (no copy, no extraction); an embedded leaf is read
// from the chunks of embed.b2e it spans.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <b2nd/any_array.hpp>
#include <b2nd/ndarray.hpp>
#include <b2nd/objects.hpp>
#include <b2nd/params.hpp>
#include <b2nd/storage/byte_source.hpp>
#include <b2nd/storage/s3.hpp>
#include <b2nd/value.hpp>

namespace b2nd {

class Store;
namespace detail {
struct StoreModel;
void adopt(StoreModel& m, const Store& s);
}  // namespace detail

/// Where a store keeps a leaf.
enum class LeafStorage {
    external,  ///< a file of a .b2d directory
    member,    ///< a stored member of a .b2z archive
    embedded,  ///< a frame inside embed.b2e (or the .b2e itself)
    remote,    ///< a reference to a remote (Caterva2) array, kept in the embed map
    none,      ///< a group: a structural path of a TreeStore, no value of its own
};
/// "external", "member", "embedded", "remote", "none".
const char* to_string(LeafStorage s) noexcept;

/// One key of a store.
struct StoreEntry {
    std::string key;  ///< "/a/b": python's key
    /// "ndarray", "schunk", "group" or "c2array" (the kinds `b2nd ls` prints); a leaf's object
    /// kind (a persisted expression...) is describe()'s. "unknown": an embedded value that is
    /// not a frame (describe() and open_array() throw the FormatError saying why).
    std::string kind;
    LeafStorage storage = LeafStorage::none;  ///< where the leaf's frame lives (none for a group)
    /// external: the file, relative to the store; member: the member's name; else empty.
    std::string file;
    /// member: the frame's window in the archive; embedded: its window in embed.b2e's bytes
    /// (external files: 0, describe() gives sizes).
    std::uint64_t offset = 0;
    std::uint64_t length = 0;  ///< see offset
    /// remote: the array's path and server.
    std::string remote_path, urlbase;  ///< see remote_path
};

/// What a leaf holds (Store::describe): opens its frame header, nothing more.
struct LeafInfo {
    ObjectKind object = ObjectKind::ndarray;  ///< the object kind its frame holds
    Shape shape;                              ///< its shape (a super-chunk: its length in items)
    std::string dtype;                        ///< the b2nd dtype string ("" for a super-chunk)
    std::int64_t nbytes = 0;                  ///< uncompressed
    std::int64_t cbytes = 0;                  ///< as stored
};

/// A python-blosc2 store, read-only: a TreeStore or DictStore (.b2z archive or .b2d directory)
/// or an EmbedStore (.b2e), locally or by URL. Its leaves open in place, as arrays, with no
/// extraction. StoreWriter changes one.
class Store {
public:
    Store() = default;

    /// Opens a .b2z, a .b2d directory or a .b2e file for reading. \throws IoError, FormatError
    /// naming the store (not a store, no embed.b2e, a damaged archive or embed map)
    static Store open(const std::string& path);
    /// The same, with `options` for the store and for the leaves opened without options of
    /// their own (open_array(key)): a URL's requests (`options.http`), checksums, threads,
    /// links (`store_links`)... Leaves are read-only whatever `writable` says. `http_cache`
    /// names a directory (created if missing, its parent must exist) holding one cache file per
    /// leaf of a remote store: Store::leaf_cache_name(key).
    static Store open(const std::string& path, const OpenOptions& options);
    /// A .b2z archive or a .b2e frame in a byte source (a buffer, a window of a mapping...);
    /// messages name the source. `options` as for a path.
    static Store open(std::shared_ptr<const storage::ByteSource> source,
                      const OpenOptions& options = {});
    /// The name of a leaf's persistent cache file in the `http_cache` directory of a store:
    /// the key without its leading '/', each byte outside [A-Za-z0-9._-] as %XX, then ".b2nd"
    /// ("/run1/t" -> "run1%2Ft.b2nd").
    static std::string leaf_cache_name(const std::string& key);
    /// The options a leaf opened without options of its own gets: the store's, read-only, its
    /// `http_cache` the leaf's file in the store's cache directory.
    OpenOptions leaf_options(const std::string& key) const;

    /// The path or URL it was opened from.
    const std::string& path() const;
    /// ObjectKind::treestore, dictstore or embedstore.
    ObjectKind kind() const;
    /// "b2z", "b2d" or "b2e".
    const char* form() const;

    /// Every key, sorted: leaves and, for a TreeStore, the groups their paths pass through.
    /// The __vlmeta__ holders of a TreeStore are left out (python's TreeStore.keys()).
    std::vector<StoreEntry> entries() const;
    /// The entry of `key` (a leading '/' may be omitted), or null.
    const StoreEntry* find(const std::string& key) const;
    /// Its object kind, shape, dtype and sizes. \throws UsageError for an unknown key or a group
    LeafInfo describe(const std::string& key) const;

    /// A leaf as an array, read-only, with every operation of AnyArray; python-blosc2's object
    /// kinds as AnyArray::open gives them (a persisted expression is evaluated, its relative
    /// operand paths resolved against the store's directory). \throws UsageError for an
    /// unknown key, a group or a remote leaf
    AnyArray open_array(const std::string& key, const OpenOptions& options) const;
    /// A leaf as an array with the store's options (leaf_options(key)).
    AnyArray open_array(const std::string& key) const;
    template <class T>
    /// A leaf as NDArray<T> (open_array, then T checked against its dtype).
    NDArray<T> open(const std::string& key, const OpenOptions& options) const;
    template <class T>
    /// A leaf as NDArray<T>, with the store's options (leaf_options(key)).
    NDArray<T> open(const std::string& key) const;
    /// A leaf's frame as stored, whatever it holds (a super-chunk, a BatchArray...), read-only.
    /// \throws UsageError for an unknown key, a group or a remote leaf
    std::shared_ptr<const storage::Frame> open_frame(const std::string& key) const;

    /// The attributes of the tree ("/") or of a group: the vlmeta of GROUP/__vlmeta__, in stored
    /// order; empty when it has none. For a DictStore or EmbedStore, "/" gives the embed frame's
    /// user vlmeta (the embed map left out).
    std::vector<std::pair<std::string, Value>> vlmeta(const std::string& group = "/") const;

private:
    friend void detail::adopt(detail::StoreModel& m, const Store& s);
    struct Impl;
    AnyArray open_entry(const StoreEntry& e, const OpenOptions& options) const;
    /// The bytes of a member or embedded leaf.
    std::shared_ptr<const storage::ByteSource> leaf_source(const StoreEntry& e) const;
    /// A .b2z archive (its members, embed.b2e) or a .b2e frame in `src`.
    static void open_archive(Impl& impl,
                             std::shared_ptr<const storage::ByteSource> src,
                             std::vector<StoreEntry>& files);
    /// A .b2d store at a URL whose driver lists what is under it (S3).
    static Store open_listed(const std::string& url, const OpenOptions& options);
    /// The keys and the embed map of a store whose files and embed frame are known.
    static Store finish_open(std::shared_ptr<Impl> impl, std::vector<StoreEntry> files);
    /// A key not in the store: UsageError, or FormatError when the archive shows damage.
    [[noreturn]] static void missing_key(const Impl& s, const std::string& key);
    std::shared_ptr<const Impl> impl_;
    const Impl& impl() const;
};

/// How a new store is made (StoreWriter::create).
struct StoreOptions {
    /// ObjectKind::treestore (groups, group attributes) or dictstore.
    ObjectKind kind = ObjectKind::treestore;
    /// python's threshold: a value of at least this many uncompressed bytes is a file of its own
    /// (a member of a .b2z, a file of a .b2d), a smaller one is embedded in embed.b2e; nullopt:
    /// every value embedded. python's default is 0 (every value a file of its own).
    std::optional<std::int64_t> threshold = 0;
    bool overwrite = false;  ///< replace an existing store at the path
    /// How an s3:// store is reached (credentials, region, endpoint), for the writer's commits
    /// and its reads of what it committed; empty fields come from the environment and the AWS
    /// files (storage/s3.hpp).
    storage::S3Options s3;
};

/// Creates and changes python-blosc2 stores that python-blosc2 4.11 opens as its own:
///
///   auto w = b2nd::StoreWriter::create("run.b2z");
///   w.put("/run1/temperature", t);               // a copy of an array (or of a store leaf)
///   w.set_vlmeta("/run1", "units", "K");          // a group's attribute
///   w.commit();                                   // one atomic step for a .b2z
///
/// Every change is atomic. A .b2z is rebuilt beside the original (leaves that stay are copied as
/// stored, new ones as contiguous frames, members uncompressed, embed.b2e last, as python writes
/// them) and renamed over it at commit(). A .b2d is changed one step at a time, each step as
/// python makes it: a leaf file is written under a temporary name and renamed, embed.b2e (the
/// embedded values, the key map, the store-wide lock python and c-blosc2 take) is rebuilt and
/// renamed, and its `dstore_tick` counts the changes, so that a Python process that follows the
/// store sees them. A crash leaves the old store or the new one, each readable.
class StoreWriter {
public:
    /// A new store at `path` (".b2z": a zip file; else a directory, ".b2d" by convention).
    /// \throws UsageError (exists without overwrite, a kind that is not a tree or dict), IoError
    static StoreWriter create(const std::string& path, const StoreOptions& options = {});
    /// An existing .b2z or .b2d store, to change (`threshold` for the values put into it; `s3`
    /// as StoreOptions::s3).
    static StoreWriter open(const std::string& path,
                            std::optional<std::int64_t> threshold = 0,
                            const storage::S3Options& s3 = {});
    /// Moves the writer (a moved-from writer holds nothing).
    StoreWriter(StoreWriter&&) noexcept;
    /// Moves the writer.
    StoreWriter& operator=(StoreWriter&&) noexcept;
    ~StoreWriter();

    /// Adds or replaces the value at `key` with a copy of `value` (its values: a persisted
    /// expression is stored evaluated). \throws UsageError for a malformed key, a key that is a
    /// group (or whose path passes through a leaf) in a TreeStore
    void put(const std::string& key, const AnyArray& value);
    /// Removes a leaf, or a TreeStore group and everything under it. False when absent.
    bool remove(const std::string& key);
    /// A TreeStore's tree ("/") or group attribute; for a DictStore "/" only.
    void set_vlmeta(const std::string& group, const std::string& name, const Value& value);
    /// Removes a tree or group attribute; false when there was none.
    bool erase_vlmeta(const std::string& group, const std::string& name);
    /// Makes every change so far part of the store (a .b2z: rebuilt and renamed, or at an s3://
    /// URL rebuilt locally and put whole, as one object; a .b2d: its changes are made as they
    /// come, commit() has nothing left to do).
    void commit();
    /// The store as committed, for reading.
    Store store() const;

private:
    struct Impl;
    explicit StoreWriter(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

/// Converts a store between its forms (python's to_b2z / to_b2d): `out` ending in ".b2z" gets
/// a zip file, anything else a directory. Leaves keep their bytes and places; embed.b2e is
/// rebuilt without the dead bytes replaced values left. Written beside `out` and renamed.
/// `s3` reaches an s3:// `src` or `out` (as StoreOptions::s3).
/// \throws UsageError (out exists without overwrite, or is src), FormatError, IoError
void pack_store(const std::string& src,
                const std::string& out,
                bool overwrite = false,
                const storage::S3Options& s3 = {});

template <class T>
NDArray<T> Store::open(const std::string& key, const OpenOptions& options) const {
    return NDArray<T>(open_array(key, options));
}

template <class T>
NDArray<T> Store::open(const std::string& key) const {
    return NDArray<T>(open_array(key));
}

}  // namespace b2nd
