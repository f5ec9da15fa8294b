// Writing python-blosc2's stores (store.hpp, StoreWriter).
//
// The writer keeps a model of the store: its nodes (a leaf's frame bytes, where they live now,
// and whether they are new), in python's order of the embed map, and the embed frame's other
// vlmeta. A .b2z is written whole from the model at commit(); a .b2d is changed step by step
// (store_files.cpp does the file work of both).
#include <algorithm>
#include <filesystem>

#include <b2nd/error.hpp>
#include <b2nd/storage/byte_source.hpp>
#include <b2nd/storage/frame.hpp>
#include <b2nd/storage/mapped_file.hpp>
#include <b2nd/storage/sources.hpp>

#include "../detail/text.hpp"
#include "../storage/publish.hpp"
#include "store_detail.hpp"

namespace fs = std::filesystem;

namespace b2nd {

using detail::quoted_path;
using detail::StoreNode;

struct StoreWriter::Impl {
    detail::StoreModel model;
    Store committed;     // what the model's kept bytes are windows of, until the next commit
    OpenOptions remote;  // how a store at a URL is reached (its s3 settings)
};

namespace {

/// Writes the model as a new store built beside `path` and put in place in one step; what was
/// there is replaced only with `overwrite` and only when it is a store (outputs.hpp).
/// `remote` reaches a URL (its s3 settings). The model keeps `path` as its path (taken by value:
/// it may be the model's own).
void publish_store(detail::StoreModel& m,
                   const std::string path,  // NOLINT(performance-unnecessary-value-param)
                   bool overwrite,
                   const OpenOptions& remote) {
    detail::Publication pub(path, overwrite, quoted_path(path), detail::OutputKind::store, 0,
                            remote);
    m.path = pub.temporary();
    try {
        detail::write_store(m);
        pub.publish(true);
    } catch (...) {
        m.path = path;
        pub.rethrow();
    }
    m.path = path;
}

OpenOptions reaching(const storage::S3Options& s3) {
    OpenOptions o;
    o.s3 = s3;
    return o;
}

/// python's key rules (tree_store.py _validate_key, embed_store.py): "/a/b", no empty segment,
/// no trailing '/', none of NUL, newline, tab, ':' (the embed map refuses it).
std::string checked_key(const std::string& path, const std::string& key) {
    const std::string k = detail::normal_key(key);
    const auto bad = [&](const std::string& why) {
        return UsageError(quoted_path(path) + ": key '" + key + "': " + why);
    };
    if (k == "/") {
        throw bad("the root is not a leaf");
    }
    if (k.back() == '/' || k.find("//") != std::string::npos) {
        throw bad("empty path segments and a trailing '/' are not allowed");
    }
    for (const char c : {'\0', '\n', '\r', '\t', ':'}) {
        if (k.find(c) != std::string::npos) {
            throw bad("a key cannot hold NUL, newlines, tabs or ':'");
        }
    }
    if (detail::holder_key(k)) {
        throw bad("'__vlmeta__' holds group attributes (set_vlmeta writes them)");
    }
    return k;
}

/// A .b2d is changed file by file, in place: not at a URL, whose objects are written whole.
void refuse_remote_directory(const std::string& path, bool zip) {
    if (storage::is_url(path) && !zip) {
        throw UsageError("\"" + storage::redacted_url(path) +
                         "\": a .b2d store is changed file by file, in place, and objects at a "
                         "URL are written whole; write a .b2z there, or build the .b2d locally "
                         "and put it with 'b2nd pack LOCAL.b2d " +
                         storage::redacted_url(path) + "'");
    }
}

}  // namespace

StoreWriter::StoreWriter(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
StoreWriter::StoreWriter(StoreWriter&&) noexcept = default;
StoreWriter& StoreWriter::operator=(StoreWriter&&) noexcept = default;
StoreWriter::~StoreWriter() = default;

StoreWriter StoreWriter::create(const std::string& path, const StoreOptions& options) {
    if (options.kind != ObjectKind::treestore && options.kind != ObjectKind::dictstore) {
        throw UsageError(quoted_path(path) + ": a new store is a treestore or a dictstore, not a " +
                         to_string(options.kind));
    }
    auto impl = std::make_unique<Impl>();
    detail::StoreModel& m = impl->model;
    m.zip = fs::path(path).extension() == ".b2z";
    refuse_remote_directory(path, m.zip);
    m.kind = options.kind;
    m.threshold = options.threshold;
    impl->remote = reaching(options.s3);
    publish_store(m, path, options.overwrite, impl->remote);  // empty: a store from now on
    impl->committed = Store::open(path, impl->remote);
    detail::adopt(m, impl->committed);
    return StoreWriter(std::move(impl));
}

StoreWriter StoreWriter::open(const std::string& path,
                              std::optional<std::int64_t> threshold,
                              const storage::S3Options& s3) {
    refuse_remote_directory(path, fs::path(path).extension() == ".b2z");
    auto impl = std::make_unique<Impl>();
    impl->remote = reaching(s3);
    impl->committed = Store::open(path, impl->remote);
    if (std::string(impl->committed.form()) == "b2e") {
        throw UsageError(quoted_path(path) + ": an EmbedStore (.b2e) is read-only here");
    }
    detail::StoreModel& m = impl->model;
    m.path = path;
    m.zip = std::string(impl->committed.form()) == "b2z";
    m.kind = impl->committed.kind();
    m.threshold = threshold;
    detail::adopt(m, impl->committed);
    return StoreWriter(std::move(impl));
}

void StoreWriter::put(const std::string& key, const AnyArray& value) {
    detail::StoreModel& m = impl_->model;
    const std::string k = checked_key(m.path, key);
    if (m.kind == ObjectKind::treestore) {
        for (const StoreNode& n : m.nodes) {
            if (n.key.size() > k.size() && n.key.compare(0, k.size() + 1, k + "/") == 0 &&
                !detail::holder_key(n.key)) {
                throw UsageError(quoted_path(m.path) + ": '" + k +
                                 "' is a group of the tree (it holds '" + n.key +
                                 "'); remove it first");
            }
            if (k.size() > n.key.size() && k.compare(0, n.key.size() + 1, n.key + "/") == 0) {
                throw UsageError(quoted_path(m.path) + ": '" + n.key +
                                 "' is a leaf; a key cannot go under it");
            }
        }
    }
    StoreNode n;
    n.key = k;
    n.ext = object_kind(value.frame()) == ObjectKind::schunk ? ".b2f" : ".b2nd";
    n.nbytes = value.nbytes();
    auto bytes = std::make_shared<const std::vector<std::uint8_t>>(value.to_cframe());
    n.bytes = storage::memory_source({bytes->data(), bytes->size()}, bytes, m.path + ":" + k);
    n.storage =
        m.threshold && n.nbytes >= *m.threshold ? LeafStorage::external : LeafStorage::embedded;
    n.fresh = true;
    detail::change(m, [&](detail::StoreModel& mm) { detail::upsert(mm, std::move(n)); });
}

bool StoreWriter::remove(const std::string& key) {
    detail::StoreModel& m = impl_->model;
    const std::string k = detail::normal_key(key);
    bool found = false;
    detail::change(m, [&](detail::StoreModel& mm) {
        const auto gone = [&](const StoreNode& n) {
            return n.key == k || (mm.kind == ObjectKind::treestore &&
                                  n.key.compare(0, k.size() + 1, k + "/") == 0);
        };
        for (const StoreNode& n : mm.nodes) {
            if (gone(n) && !detail::holder_key(n.key)) {
                found = true;
            }
        }
        if (found) {
            for (const StoreNode& n : mm.nodes) {
                if (gone(n) && n.storage == LeafStorage::external) {
                    mm.dropped_files.push_back(n.file);
                }
            }
            mm.nodes.erase(std::remove_if(mm.nodes.begin(), mm.nodes.end(), gone), mm.nodes.end());
        }
    });
    return found;
}

void StoreWriter::set_vlmeta(const std::string& group,
                             const std::string& name,
                             const Value& value) {
    detail::StoreModel& m = impl_->model;
    detail::change(m, [&](detail::StoreModel& mm) {
        auto items = detail::group_vlmeta(mm, group);
        bool set = false;
        for (auto& [n, v] : items) {
            if (n == name) {
                v = value;
                set = true;
            }
        }
        if (!set) {
            items.emplace_back(name, value);
        }
        detail::set_group_vlmeta(mm, group, items);
    });
}

bool StoreWriter::erase_vlmeta(const std::string& group, const std::string& name) {
    detail::StoreModel& m = impl_->model;
    bool found = false;
    detail::change(m, [&](detail::StoreModel& mm) {
        auto items = detail::group_vlmeta(mm, group);
        const auto it = std::find_if(items.begin(), items.end(),
                                     [&](const auto& kv) { return kv.first == name; });
        found = it != items.end();
        if (found) {
            items.erase(it);
            detail::set_group_vlmeta(mm, group, items);
        }
    });
    return found;
}

void StoreWriter::commit() {
    detail::StoreModel& m = impl_->model;
    if (!m.zip || !m.dirty) {
        return;
    }
    if (storage::is_url(m.path)) {
        publish_store(m, m.path, true, impl_->remote);  // built locally, put whole
    } else {
        detail::write_store(m);
    }
    impl_->committed = Store::open(m.path, impl_->remote);
    detail::adopt(m, impl_->committed);
}

Store StoreWriter::store() const {
    return Store::open(impl_->model.path, impl_->remote);
}

void pack_store(const std::string& src,
                const std::string& out,
                bool overwrite,
                const storage::S3Options& s3) {
    std::error_code ec;
    if (fs::exists(out, ec) && fs::equivalent(src, out, ec)) {
        throw UsageError(quoted_path(out) + " is the store to pack; write to another path");
    }
    if (detail::path_within(out, src) || detail::path_within(src, out)) {
        throw UsageError(quoted_path(out) + ": the output cannot be inside the store to pack, " +
                         "nor hold it; write to another path");
    }
    const OpenOptions remote = reaching(s3);
    const Store s = Store::open(src, remote);
    if (std::string(s.form()) == "b2e") {
        throw UsageError(quoted_path(src) + ": an EmbedStore (.b2e) has one form only");
    }
    detail::StoreModel m;
    detail::adopt(m, s);
    m.zip = fs::path(out).extension() == ".b2z";
    for (StoreNode& n : m.nodes) {
        if (n.storage == LeafStorage::external || n.storage == LeafStorage::member) {
            n.storage = m.zip ? LeafStorage::member : LeafStorage::external;
            n.fresh = true;
        }
    }
    publish_store(m, out, overwrite, remote);
}

}  // namespace b2nd
