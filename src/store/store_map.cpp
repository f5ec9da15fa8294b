// The names of a python-blosc2 store (store_detail.hpp): keys and the files that hold them, and
// the key map embed.b2e keeps (python's estore_metadata / _object_registry).
#include <filesystem>

#include <b2nd/error.hpp>
#include <b2nd/store.hpp>

#include "../detail/text.hpp"
#include "store_detail.hpp"

namespace fs = std::filesystem;

namespace b2nd {

using detail::quoted_path;

namespace detail {

std::string normal_key(const std::string& key) {
    return key.empty() || key[0] != '/' ? "/" + key : key;
}

const char* leaf_kind_of_file(const std::string& name) {
    const std::string ext = fs::path(name).extension().string();
    if (ext == ".b2nd") {
        return "ndarray";
    }
    if (ext == ".b2f" || ext == ".b2b") {
        return "schunk";
    }
    return nullptr;
}

std::string key_of_file(const std::string& rel) {
    // python: the path without its extension (os.path.splitext: the last suffix only).
    const fs::path p(rel);
    return normal_key((p.parent_path() / p.stem()).generic_string());
}

EmbedMap read_embed_map(const AnyArray& embed, const std::string& where) {
    EmbedMap m;
    const auto raw = embed.vlmeta("estore_metadata");
    if (!raw) {
        return m;  // python: no map yet, an empty store
    }
    const Value v =
        Value::from_msgpack({raw->data(), raw->size()}, where + ": vlmeta 'estore_metadata'");
    const auto bad = [&](const std::string& why) {
        return FormatError(where + ": embed map (vlmeta 'estore_metadata'): " + why);
    };
    const Value* map = v.find("embed_map");
    const Value* cur = v.find("current_offset");
    if (map == nullptr || map->type() != Value::Type::map || cur == nullptr ||
        cur->type() != Value::Type::integer || cur->is_negative()) {
        throw bad("lacks a map 'embed_map' and a count 'current_offset'");
    }
    m.current_offset = cur->as<std::uint64_t>();
    const auto size = static_cast<std::uint64_t>(embed.nbytes());
    for (const auto& [k, e] : map->entries()) {
        if (k.type() != Value::Type::string || e.type() != Value::Type::map) {
            throw bad("an entry is not a string key with a map: " + k.to_json());
        }
        StoreEntry s;
        s.key = k.as<std::string>();
        if (s.key.empty() || s.key[0] != '/') {
            throw bad("key '" + s.key + "' does not start with '/'");
        }
        const Value* off = e.find("offset");
        const Value* len = e.find("length");
        if (const Value* base = e.find("urlbase"); base != nullptr && !base->is_nil()) {
            const Value* p = e.find("path");
            if (base->type() != Value::Type::string || p == nullptr ||
                p->type() != Value::Type::string) {
                throw bad("remote entry '" + s.key + "' lacks string 'urlbase' and 'path'");
            }
            s.kind = "c2array";
            s.storage = LeafStorage::remote;
            s.urlbase = base->as<std::string>();
            s.remote_path = p->as<std::string>();
        } else if (off != nullptr && len != nullptr && off->type() == Value::Type::integer &&
                   len->type() == Value::Type::integer && !off->is_negative() &&
                   !len->is_negative()) {
            s.storage = LeafStorage::embedded;
            s.offset = off->as<std::uint64_t>();
            s.length = len->as<std::uint64_t>();
            if (s.offset > size || s.length > size - s.offset) {
                throw bad("entry '" + s.key + "' at [" + num(static_cast<std::int64_t>(s.offset)) +
                          ", +" + num(static_cast<std::int64_t>(s.length)) + ") lies beyond its " +
                          num(static_cast<std::int64_t>(size)) + " bytes");
            }
        } else {
            throw bad("entry '" + s.key + "' has neither {offset, length} nor {urlbase, path}");
        }
        m.entries.push_back(std::move(s));
    }
    return m;
}

bool holder_key(const std::string& key) {
    const std::string tail = "/__vlmeta__";
    return key.size() >= tail.size() &&
           key.compare(key.size() - tail.size(), tail.size(), tail) == 0;
}

}  // namespace detail

}  // namespace b2nd
