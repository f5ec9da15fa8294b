// Internal: the pieces of python-blosc2's store layout the reader and the writer share.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <b2nd/any_array.hpp>
#include <b2nd/storage/byte_source.hpp>
#include <b2nd/store.hpp>

namespace b2nd::detail {

enum class StoreForm { zip, directory, embed };

/// "/" + key unless it starts with one.
std::string normal_key(const std::string& key);
/// "ndarray" (.b2nd), "schunk" (.b2f, .b2b) or null: the suffixes python's stores write.
const char* leaf_kind_of_file(const std::string& name);
/// python's key of an external file: "/" + its path without its suffix.
std::string key_of_file(const std::string& rel);

/// embed.b2e's vlmeta `estore_metadata`: {embed_map: {key: {offset, length} | {urlbase, path}},
/// current_offset}.
struct EmbedMap {
    std::vector<StoreEntry> entries;  ///< in stored order
    std::uint64_t current_offset = 0;
};
/// \throws FormatError naming `where` when the map is malformed or a window passes the end of
///         the embed frame's bytes
EmbedMap read_embed_map(const AnyArray& embed, const std::string& where);

/// Whether a key is a TreeStore group's attribute holder (".../__vlmeta__").
bool holder_key(const std::string& key);

/// One value of a store being written (store_writer.cpp): its frame's bytes and where it lives.
struct StoreNode {
    std::string key;
    LeafStorage storage = LeafStorage::embedded;
    std::string ext = ".b2nd";  ///< the suffix of its file when external
    std::string file;           ///< external or member: its path in the store as committed
    std::int64_t nbytes = 0;    ///< uncompressed, for python's threshold
    std::shared_ptr<const storage::ByteSource> bytes;  ///< the frame (null for remote)
    bool fresh = false;                                ///< not written yet
    std::string urlbase, remote_path;                  ///< remote references
};

/// A store being written: its nodes in python's order (the embed map's), the rest of embed.b2e.
struct StoreModel {
    std::string path;
    bool zip = false;
    ObjectKind kind = ObjectKind::treestore;
    std::optional<std::int64_t> threshold = 0;
    std::vector<StoreNode> nodes;
    /// embed.b2e's vlmeta besides the key map (a DictStore's attributes, python's
    /// _object_registry...), raw msgpack, in order; dstore_tick apart.
    std::vector<std::pair<std::string, std::vector<std::uint8_t>>> embed_vlmeta;
    std::int64_t tick = 0;
    bool dirty = false;
    std::vector<std::string> dropped_files;  ///< external files to remove after the next write
};

/// The model of a committed store (its leaves' bytes are windows of `s`'s mappings).
void adopt(StoreModel& m, const Store& s);
/// Replaces the node of n.key (moved to the end, as python's dict re-insertion) or appends it.
void upsert(StoreModel& m, StoreNode n);
/// Applies `fn` to the model: a .b2z waits for commit(); a .b2d is written at once, under the
/// store-wide lock (the exclusive lock of embed.b2e), and adopted again from disk.
void change(StoreModel& m, const std::function<void(StoreModel&)>& fn);
/// Writes the whole store as the model says (a .b2z: a new archive renamed over the path; a .b2d:
/// new leaf files, embed.b2e rebuilt and renamed, dropped files removed).
void write_store(StoreModel& m);
/// UsageError when a component of `rel` below the store directory `root` is a symbolic link:
/// writes never go through one (it could lead outside the store).
void refuse_links_below(const std::string& root, const std::string& rel);
/// A group's attributes (a TreeStore's holder vlmeta; a DictStore's "/": embed.b2e's).
std::vector<std::pair<std::string, Value>> group_vlmeta(const StoreModel& m,
                                                        const std::string& group);
void set_group_vlmeta(StoreModel& m,
                      const std::string& group,
                      const std::vector<std::pair<std::string, Value>>& items);

}  // namespace b2nd::detail
