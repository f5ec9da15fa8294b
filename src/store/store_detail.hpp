// Internal: the pieces of python-blosc2's store layout the reader and the writer share.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <b2nd/any_array.hpp>
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

}  // namespace b2nd::detail
