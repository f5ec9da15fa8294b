// Internal: the state behind b2nd::Store (store.cpp opens a store; store_leaves.cpp opens its
// leaves and reads its attributes).
#pragma once

#include <algorithm>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <b2nd/storage/zip.hpp>
#include <b2nd/store.hpp>

#include "../detail/text.hpp"
#include "store_detail.hpp"

namespace b2nd {

struct Store::Impl {
    std::string path;
    OpenOptions options;  // the store's, and its leaves' (leaf_options)
    detail::StoreForm form = detail::StoreForm::directory;
    ObjectKind kind = ObjectKind::dictstore;
    std::optional<storage::ZipDirectory> zip;  // b2z
    AnyArray embed;                            // embed.b2e (raw), its bytes the embedded frames
    std::vector<StoreEntry> entries;           // sorted by key, groups included
    std::vector<StoreEntry> hidden;            // __vlmeta__ holders
    std::vector<std::string> unmapped;         // b2z members that are no leaf (damage?)

    const StoreEntry* find(const std::string& key) const {
        const std::string k = detail::normal_key(key);
        for (const auto* list : {&entries, &hidden}) {
            const auto it = std::lower_bound(
                list->begin(), list->end(), k,
                [](const StoreEntry& e, const std::string& x) { return e.key < x; });
            if (it != list->end() && it->key == k) {
                return &*it;
            }
        }
        return nullptr;
    }
    std::string where(const std::string& key) const {
        return detail::quoted_path(path + ":" + key);
    }
    std::string base_dir() const {
        std::error_code ec;
        std::filesystem::path p = path.empty()
                                      ? std::filesystem::path(".")
                                      : std::filesystem::absolute(std::filesystem::path(path), ec);
        if (ec) {
            p = std::filesystem::path(path);
        }
        if (form == detail::StoreForm::directory) {
            return p.string();
        }
        const std::filesystem::path parent = p.parent_path();
        return parent.empty() ? "." : parent.string();
    }
};

}  // namespace b2nd
