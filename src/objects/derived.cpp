// What a commit that changes an array's data does to python-blosc2's data derived from it
// (engine/commit_hooks.hpp, called by ArrayCore::apply_data_edit): its query indexes (vlmeta
// `blosc2_indexes`, {version, indexes: {token: descriptor}}) are marked stale and its persisted
// query cache (vlmeta `_blosc2_query_cache`) is removed, in the same commit, as python-blosc2's
// indexing.mark_indexes_stale does after each of its writes. Python then rebuilds or ignores
// them instead of answering queries from indexes of the old data.
#include "derived.hpp"

#include <filesystem>

#include <b2nd/error.hpp>
#include <b2nd/value.hpp>

#include "../engine/commit_hooks.hpp"

namespace b2nd::detail {

namespace {

constexpr const char* kIndexes = kIndexesVlmeta;
constexpr const char* kQueryCache = kQueryCacheVlmeta;

}  // namespace

std::optional<std::vector<std::uint8_t>> stale_indexes(ByteSpan raw, const std::string& where) {
    Value store;
    try {
        store = Value::from_msgpack(raw, where + ": vlmeta '" + kIndexes + "'");
    } catch (const FormatError&) {
        return std::nullopt;  // not ours to repair: python rebuilds what it cannot read
    }
    const Value* indexes = store.find("indexes");
    if (indexes == nullptr || indexes->type() != Value::Type::map || indexes->size() == 0) {
        return std::nullopt;
    }
    Value::Map marked;
    for (const auto& [token, d] : indexes->entries()) {
        if (d.type() != Value::Type::map) {
            marked.emplace_back(token, d);
            continue;
        }
        Value::Map m = d.entries();
        bool found = false;
        for (auto& [k, v] : m) {
            if (k.type() == Value::Type::string && k.as<std::string>() == "stale") {
                v = true;
                found = true;
            }
        }
        if (!found) {
            m.emplace_back("stale", true);
        }
        marked.emplace_back(token, Value::map(std::move(m)));
    }
    Value::Map top = store.entries();
    for (auto& [k, v] : top) {
        if (k.type() == Value::Type::string && k.as<std::string>() == "indexes") {
            v = Value::map(std::move(marked));
        }
    }
    return Value::map(std::move(top)).to_msgpack();
}

std::function<void()> derived_data_changes(const storage::Frame& f,
                                           storage::FrameEdit& e,
                                           const std::string& where) {
    std::string payload;  // the query cache's payload file, removed after the commit
    if (const auto raw = f.vlmeta(kIndexes)) {
        if (const auto marked = stale_indexes({raw->data(), raw->size()}, where)) {
            e.set_vlmeta(kIndexes, *marked);
            if (const auto cache = f.vlmeta(kQueryCache)) {
                e.erase_vlmeta(kQueryCache);
                try {
                    const Value c = Value::from_msgpack({cache->data(), cache->size()});
                    const Value* ref = c.find("payload_ref");
                    const Value* up = ref != nullptr ? ref->find("urlpath") : nullptr;
                    if (up != nullptr && up->type() == Value::Type::string && !f.path().empty()) {
                        const std::filesystem::path p(up->as<std::string>());
                        payload =
                            (p.is_absolute() ? p
                                             : std::filesystem::path(f.path()).parent_path() / p)
                                .string();
                    }
                } catch (const FormatError&) {
                    // the catalog goes; its payload, unnamed, stays
                }
            }
        }
    }
    if (payload.empty()) {
        return {};
    }
    return [payload] {
        std::error_code ec;
        std::filesystem::remove(payload, ec);  // best effort: without its catalog it is unused
    };
}

}  // namespace b2nd::detail
