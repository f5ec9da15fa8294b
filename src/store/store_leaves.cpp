// The leaves of a python-blosc2 store opened as arrays or frames, their descriptions, and the
// store's attributes (store.hpp; store.cpp opens the store).
#include <filesystem>
#include <memory>

#include <b2nd/error.hpp>
#include <b2nd/storage/byte_source.hpp>
#include <b2nd/storage/frame.hpp>
#include <b2nd/store.hpp>

#include "../detail/text.hpp"
#include "../objects/objects_detail.hpp"
#include "store_detail.hpp"
#include "store_impl.hpp"

namespace fs = std::filesystem;

namespace b2nd {

using detail::quoted_path;

namespace {

/// Embedded values up to this size are decoded whole when opened.
constexpr std::uint64_t kEmbeddedReadAtOnce = std::uint64_t{16} << 20;

/// Bytes [offset, offset + length) of embed.b2e's uint8 array, decoded as they are read.
class EmbeddedSource final : public storage::ByteSource {
public:
    EmbeddedSource(AnyArray embed, std::uint64_t offset, std::uint64_t length, std::string name)
        : embed_(std::move(embed)), offset_(offset), length_(length), name_(std::move(name)) {}
    std::uint64_t size() const override { return length_; }
    const std::string& name() const override { return name_; }
    storage::SourceBytes read(std::uint64_t offset, std::uint64_t n) const override {
        if (offset > length_ || n > length_ - offset) {
            throw FormatError(quoted_path(name_) + ": bytes [" + std::to_string(offset) + ", " +
                              std::to_string(offset + n) + ") pass its end (" +
                              std::to_string(length_) + " bytes)");
        }
        auto bytes = std::make_shared<std::vector<std::uint8_t>>(embed_.read(Box::region(
            {static_cast<std::int64_t>(offset_ + offset)}, {static_cast<std::int64_t>(n)})));
        return {ByteSpan(bytes->data(), bytes->size()), bytes};
    }

private:
    AnyArray embed_;
    std::uint64_t offset_, length_;
    std::string name_;
};

}  // namespace

AnyArray Store::open_array(const std::string& key, const OpenOptions& options) const {
    const Impl& s = impl();
    const StoreEntry* e = find(key);
    if (e == nullptr) {
        missing_key(s, key);
    }
    return open_entry(*e, options);
}

AnyArray Store::open_array(const std::string& key) const {
    return open_array(key, leaf_options(key));
}

std::string Store::leaf_cache_name(const std::string& key) {
    const std::string k = detail::normal_key(key);
    const std::size_t first = !k.empty() && k[0] == '/' ? 1 : 0;
    const std::string name = detail::percent_encoded(k.substr(first), "-_.");
    return name + ".b2nd";
}

OpenOptions Store::leaf_options(const std::string& key) const {
    OpenOptions o = impl().options;
    o.writable = false;
    if (!o.http_cache.empty()) {
        o.http_cache = (fs::path(o.http_cache) / leaf_cache_name(key)).string();
    }
    return o;
}

AnyArray Store::open_entry(const StoreEntry& entry, const OpenOptions& options) const {
    const Impl& s = impl();
    const StoreEntry* e = &entry;
    const std::string where = s.where(e->key);
    if (e->storage == LeafStorage::none) {
        throw UsageError(where + ": a group of the tree, not a leaf (its keys start with '" +
                         e->key + "/')");
    }
    if (e->storage == LeafStorage::remote) {
        throw UnsupportedError(where + ": a reference to the remote array " + e->remote_path +
                               " at " + e->urlbase + " (c2array); this library does not fetch it");
    }
    if (options.writable) {
        throw UsageError(where +
                         ": store leaves are opened read-only (change them with the "
                         "store's writer)");
    }
    OpenOptions o = options;
    if (o.objects_dir.empty()) {
        o.objects_dir = e->storage == LeafStorage::external
                            ? (fs::path(s.base_dir()) / e->file).parent_path().string()
                            : s.base_dir();
    }
    if (e->storage == LeafStorage::external) {
        return AnyArray::open(s.path + "/" + e->file, o);
    }
    return AnyArray::open(leaf_source(*e), o);
}

std::shared_ptr<const storage::ByteSource> Store::leaf_source(const StoreEntry& e) const {
    const Impl& s = impl();
    if (e.storage == LeafStorage::member) {
        return storage::window_source(s.zip->archive(), e.offset, e.length, s.path + ":" + e.key);
    }
    // Embedded: the frame's bytes, decoded from the chunks of embed.b2e they span. A small one is
    // decoded at once; a larger one as its reads ask, so that memory follows what is read, never
    // the length the key map claims (a crafted map can claim terabytes of zero chunks).
    const std::string name = s.path + ":" + e.key;
    if (e.length <= kEmbeddedReadAtOnce) {
        Box box = Box::region({static_cast<std::int64_t>(e.offset)},
                              {static_cast<std::int64_t>(e.length)});
        auto bytes = std::make_shared<std::vector<std::uint8_t>>(s.embed.read(box));
        const ByteSpan span(bytes->data(), bytes->size());
        return storage::memory_source(span, bytes, name);
    }
    return std::make_shared<EmbeddedSource>(s.embed, e.offset, e.length, name);
}

std::shared_ptr<const storage::Frame> Store::open_frame(const std::string& key) const {
    const Impl& s = impl();
    const StoreEntry* e = find(key);
    if (e == nullptr) {
        missing_key(s, key);
    }
    if (e->storage == LeafStorage::none || e->storage == LeafStorage::remote) {
        throw UsageError(s.where(detail::normal_key(key)) +
                         ": not a leaf stored here (a group or a remote array)");
    }
    if (e->storage == LeafStorage::external) {
        const std::string file = s.path + "/" + e->file;
        return std::make_shared<const storage::Frame>(
            storage::is_url(file) ? storage::Frame::open_url(file, s.options)
                                  : storage::Frame::open(file));
    }
    return std::make_shared<const storage::Frame>(storage::Frame::open(leaf_source(*e)));
}

LeafInfo Store::describe(const std::string& key) const {
    OpenOptions raw;
    raw.raw_objects = true;
    raw.cache_bytes = 0;
    const AnyArray a = open_array(key, raw);
    LeafInfo info;
    info.object = object_kind(a.frame());
    info.shape = a.shape();
    info.dtype = info.object == ObjectKind::schunk ? "" : a.dtype().str();
    info.nbytes = a.nbytes();
    info.cbytes = a.cbytes();
    return info;
}

std::vector<std::pair<std::string, Value>> Store::vlmeta(const std::string& group) const {
    const Impl& s = impl();
    std::vector<std::pair<std::string, Value>> out;
    const auto read_all = [&](const AnyArray& a, bool skip_map) {
        for (const std::string& n : a.vlmeta_names()) {
            if (skip_map &&
                (n == "estore_metadata" || n == "dstore_tick" || n == "_object_registry")) {
                continue;
            }
            const auto raw = a.vlmeta(n);
            out.emplace_back(n, Value::from_msgpack({raw->data(), raw->size()},
                                                    s.where(group) + ": vlmeta '" + n + "'"));
        }
    };
    std::string g = detail::normal_key(group);
    if (s.kind != ObjectKind::treestore) {
        if (g != "/") {
            throw UsageError(s.where(g) + ": only a TreeStore has groups with attributes");
        }
        read_all(s.embed, true);
        return out;
    }
    if (g != "/" && g.back() == '/') {
        g.pop_back();
    }
    if (g != "/") {
        const StoreEntry* e = s.find(g);
        if (e == nullptr || e->storage != LeafStorage::none) {
            throw UsageError(s.where(g) + ": not a group of the tree");
        }
    }
    const StoreEntry* holder = s.find((g == "/" ? "" : g) + "/__vlmeta__");
    if (holder == nullptr) {
        return out;
    }
    OpenOptions raw;
    raw.raw_objects = true;
    read_all(open_entry(*holder, raw), false);
    return out;
}

}  // namespace b2nd
