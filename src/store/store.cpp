// Reading python-blosc2's stores (store.hpp).
#include <algorithm>
#include <filesystem>
#include <map>

#include <b2nd/error.hpp>
#include <b2nd/format/frame_header.hpp>
#include <b2nd/storage/byte_source.hpp>
#include <b2nd/storage/frame.hpp>
#include <b2nd/storage/mapped_file.hpp>
#include <b2nd/storage/sources.hpp>
#include <b2nd/storage/zip.hpp>
#include <b2nd/store.hpp>

#include "../detail/text.hpp"
#include "../objects/objects_detail.hpp"
#include "store_detail.hpp"
#include "store_impl.hpp"

namespace fs = std::filesystem;

namespace b2nd {

using detail::quoted_path;

const char* to_string(LeafStorage s) noexcept {
    switch (s) {
        case LeafStorage::external:
            return "external";
        case LeafStorage::member:
            return "member";
        case LeafStorage::embedded:
            return "embedded";
        case LeafStorage::remote:
            return "remote";
        case LeafStorage::none:
            return "none";
    }
    return "?";
}

namespace detail {
void adopt(StoreModel& m, const Store& store) {
    const Store::Impl& s = store.impl();
    m.kind = s.kind;
    m.nodes.clear();
    m.embed_vlmeta.clear();
    m.tick = 0;
    m.dirty = false;
    m.dropped_files.clear();
    const auto node_of = [&](const StoreEntry& e) {
        StoreNode n;
        n.key = e.key;
        n.storage = e.storage;
        n.file = e.file;
        n.urlbase = e.urlbase;
        n.remote_path = e.remote_path;
        n.ext = e.file.empty() ? (e.kind == "schunk" ? ".b2f" : ".b2nd")
                               : fs::path(e.file).extension().string();
        if (e.storage == LeafStorage::external) {
            // From where the store is: a listed store's leaves are objects of its remote
            // (their keys were checked when listed), a directory's are files under it.
            const std::string file = s.path + "/" + e.file;
            n.bytes = storage::is_url(file)
                          ? storage::open_source(file, s.options)
                          : storage::mapped_source(storage::MappedFile::open(file));
        } else if (e.storage == LeafStorage::member) {
            n.bytes =
                storage::window_source(s.zip->archive(), e.offset, e.length, s.path + ":" + e.key);
        } else if (e.storage == LeafStorage::embedded) {
            auto b = std::make_shared<const std::vector<std::uint8_t>>(s.embed.read(Box::region(
                {static_cast<std::int64_t>(e.offset)}, {static_cast<std::int64_t>(e.length)})));
            n.bytes = storage::memory_source({b->data(), b->size()}, b, s.path + ":" + e.key);
        }
        return n;
    };
    // Embedded values and references in the embed map's order (python's), then the files.
    const EmbedMap map = read_embed_map(s.embed, s.where("/"));
    for (const StoreEntry& e : map.entries) {
        if (const StoreEntry* f = s.find(e.key); f != nullptr &&
                                                 f->storage != LeafStorage::member &&
                                                 f->storage != LeafStorage::external) {
            m.nodes.push_back(node_of(*f));
        }
    }
    for (const auto* list : {&s.entries, &s.hidden}) {
        for (const StoreEntry& e : *list) {
            if ((e.storage == LeafStorage::external || e.storage == LeafStorage::member)) {
                m.nodes.push_back(node_of(e));
            }
        }
    }
    for (const std::string& n : s.embed.vlmeta_names()) {
        if (n == "estore_metadata") {
            continue;
        }
        const auto raw = s.embed.vlmeta(n);
        if (n == "dstore_tick") {
            try {
                m.tick = Value::from_msgpack({raw->data(), raw->size()}).as<std::int64_t>();
            } catch (const Error&) {
                m.tick = 0;
            }
            continue;
        }
        m.embed_vlmeta.emplace_back(n, *raw);
    }
}

AnyArray open_store_leaf(const std::string& path, const std::string& key, const OpenOptions& o) {
    return Store::open(path).open_array(key, o);
}

}  // namespace detail

namespace {

/// Adds the leaf that a store directory's file `rel` holds (nothing for embed.b2e and files of
/// other kinds).
void add_external(const std::string& rel, std::vector<StoreEntry>& files) {
    const char* kind = detail::leaf_kind_of_file(rel);
    if (rel == "embed.b2e" || kind == nullptr) {
        return;
    }
    StoreEntry e;
    e.key = detail::key_of_file(rel);
    e.kind = kind;
    e.storage = LeafStorage::external;
    e.file = rel;
    files.push_back(std::move(e));
}

bool is_holder(const std::string& key) {
    return detail::holder_key(key);
}

/// An embedded value's ls kind from its frame's header alone: only the embed chunks the header
/// spans are decoded, not the value. \throws FormatError naming the key when it is no frame
std::string embedded_kind(const AnyArray& embed, const StoreEntry& e, const std::string& where) {
    const auto read = [&](std::uint64_t n) {
        return embed.read(Box::region({static_cast<std::int64_t>(e.offset)},
                                      {static_cast<std::int64_t>(std::min(n, e.length))}));
    };
    try {
        const std::vector<std::uint8_t> start = read(32);
        const format::FrameLengths len = format::read_frame_lengths({start.data(), start.size()});
        const std::vector<std::uint8_t> head = read(static_cast<std::uint64_t>(len.header_len));
        const format::FrameHeader h = format::read_frame_header({head.data(), head.size()});
        return h.metalayer("b2nd") != nullptr || h.metalayer("caterva") != nullptr ? "ndarray"
                                                                                   : "schunk";
    } catch (const FormatError& x) {
        throw FormatError(where + ": embedded value '" + e.key + "': " + x.what());
    }
}

/// The embed frame of a store (raw: its tag would make AnyArray refuse it).
AnyArray open_embed(std::shared_ptr<const storage::ByteSource> src) {
    OpenOptions o;
    o.raw_objects = true;
    o.cache_bytes = 1 << 20;
    return AnyArray::open(std::move(src), o);
}

}  // namespace

void Store::open_archive(Impl& impl,
                         std::shared_ptr<const storage::ByteSource> src,
                         std::vector<StoreEntry>& files) {
    const std::string where = quoted_path(impl.path);
    const storage::SourceBytes head = src->read(0, std::min<std::uint64_t>(4, src->size()));
    if (head.bytes.size() < 4 || head.bytes[0] != 'P' || head.bytes[1] != 'K') {
        impl.form = detail::StoreForm::embed;
        impl.embed = open_embed(std::move(src));
        return;
    }
    impl.form = detail::StoreForm::zip;
    impl.zip = storage::ZipDirectory::read(std::move(src));
    const storage::ZipMember* em = impl.zip->find("embed.b2e");
    if (em == nullptr) {
        throw FormatError(where + ": not a python-blosc2 store (no member embed.b2e)");
    }
    impl.embed = open_embed(impl.zip->open(*em));
    for (const storage::ZipMember& m : impl.zip->members()) {
        const char* kind = detail::leaf_kind_of_file(m.name);
        if (m.name == "embed.b2e") {
            continue;
        }
        if (kind == nullptr || m.method != 0) {
            // python maps stored leaf files only; others are a sign of damage
            impl.unmapped.push_back(m.name + (m.method != 0 ? " (compressed)" : ""));
            continue;
        }
        StoreEntry e;
        e.key = detail::key_of_file(m.name);
        e.kind = kind;
        e.storage = LeafStorage::member;
        e.file = m.name;
        e.length = m.size;
        e.offset = impl.zip->data_offset(m);
        files.push_back(std::move(e));
    }
}

Store Store::open(std::shared_ptr<const storage::ByteSource> source, const OpenOptions& options) {
    if (!source) {
        throw UsageError("Store::open: no byte source");
    }
    auto impl = std::make_shared<Impl>();
    impl->path = source->name();
    impl->options = options;
    std::vector<StoreEntry> files;
    open_archive(*impl, std::move(source), files);
    return finish_open(std::move(impl), std::move(files));
}

Store Store::open(const std::string& path) {
    return open(path, OpenOptions{});
}

Store Store::open(const std::string& path, const OpenOptions& options) {
    if (storage::is_url(path)) {
        const std::string p = path.substr(0, path.find_first_of("?#"));
        const bool directory = p.back() == '/' || fs::path(p).extension() == ".b2d";
        if (!options.http_cache.empty()) {
            std::error_code ec;
            fs::create_directory(options.http_cache, ec);  // not its parents
            if (!fs::is_directory(options.http_cache, ec)) {
                throw UsageError(quoted_path(options.http_cache) +
                                 ": OpenOptions::http_cache of a store names a directory (one "
                                 "cache file per leaf), and this is none" +
                                 (ec ? " (" + ec.message() + ")" : std::string()));
            }
        }
        if (directory) {
            return open_listed(path, options);
        }
        return open(storage::open_source(path, options), options);
    }
    auto impl = std::make_shared<Impl>();
    impl->path = path;
    impl->options = options;
    const std::string where = quoted_path(path);
    std::error_code ec;
    std::vector<StoreEntry> files;  // external files or members
    if (fs::is_directory(path, ec)) {
        impl->form = detail::StoreForm::directory;
        const fs::path embed = fs::path(path) / "embed.b2e";
        if (!fs::is_regular_file(embed, ec)) {
            throw FormatError(where + (fs::exists(fs::path(path) / "chunks.b2frame", ec)
                                           ? ": an array, not a store (a sparse frame)"
                                           : ": not a python-blosc2 store directory (no "
                                             "embed.b2e)"));
        }
        OpenOptions o;
        o.raw_objects = true;
        o.cache_bytes = 1 << 20;
        impl->embed = AnyArray::open(embed.string(), o);
        // Names only (no stat per file, no path canonicalization): opening costs the walk.
        const std::string root = fs::path(path).lexically_normal().generic_string();
        const auto walk = options.store_links ? fs::directory_options::follow_directory_symlink
                                              : fs::directory_options::none;
        for (auto it = fs::recursive_directory_iterator(path, walk, ec);
             !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
            std::string rel = it->path().lexically_normal().generic_string();
            rel = rel.compare(0, root.size(), root) == 0 ? rel.substr(root.size()) : rel;
            while (!rel.empty() && rel[0] == '/') {
                rel.erase(0, 1);
            }
            if (it->is_symlink(ec) && !options.store_links) {
                throw UsageError(where + ": \"" + rel +
                                 "\" is a symbolic link inside the store, which could lead "
                                 "anywhere; b2nd does not follow one unless asked "
                                 "(OpenOptions::store_links reads through links; writes never "
                                 "go through them)");
            }
            if (!it->is_directory(ec)) {
                add_external(rel, files);
            }
        }
        if (ec) {
            throw IoError(where + ": cannot list the store directory", ec);
        }
    } else {
        open_archive(*impl, storage::mapped_source(storage::MappedFile::open(path)), files);
    }
    return finish_open(std::move(impl), std::move(files));
}

Store Store::open_listed(const std::string& url, const OpenOptions& options) {
    std::string root = url;
    while (root.size() > 1 && root.back() == '/') {
        root.pop_back();
    }
    std::vector<std::string> names;
    try {
        names = storage::list_under(root, options);
    } catch (const UsageError&) {
        throw UsageError("\"" + storage::redacted_url(url) + "\": a .b2d store is a directory, " +
                         "whose files b2nd cannot list over " + storage::driver_name(url) +
                         "; serve it packed as a .b2z ('b2nd pack STORE.b2d STORE.b2z')");
    }
    const std::string where = "\"" + storage::redacted_url(root) + "\"";
    if (std::find(names.begin(), names.end(), "embed.b2e") == names.end()) {
        throw FormatError(
            where + (std::find(names.begin(), names.end(), "chunks.b2frame") != names.end()
                         ? ": an array, not a store (a sparse frame)"
                     : names.empty() ? ": no objects under it"
                                     : ": not a python-blosc2 store directory (no embed.b2e)"));
    }
    auto impl = std::make_shared<Impl>();
    impl->path = root;
    impl->options = options;
    impl->form = detail::StoreForm::directory;
    OpenOptions o = options;
    o.raw_objects = true;
    o.cache_bytes = 1 << 20;
    o.http_cache.clear();
    impl->embed = AnyArray::open(root + "/embed.b2e", o);
    std::vector<StoreEntry> files;
    for (const std::string& rel : names) {
        // A listing is the remote's word: a key that is absolute, climbs out or has empty parts
        // names no file of this store (and joined to a path, could name a local one).
        const fs::path p(rel);
        bool bad = rel.empty() || rel.front() == '/' || rel.find("//") != std::string::npos ||
                   rel.back() == '/';
        for (const fs::path& part : p) {
            bad = bad || part == ".." || part == ".";
        }
        if (bad) {
            throw FormatError(where + ": its listing names the key \"" + detail::printable(rel) +
                              "\" under it, which is no file of a store (absolute, empty parts, "
                              "'.' or '..')");
        }
        add_external(rel, files);
    }
    return finish_open(std::move(impl), std::move(files));
}

Store Store::finish_open(std::shared_ptr<Impl> impl, std::vector<StoreEntry> files) {
    const std::string& path = impl->path;
    const std::string where = quoted_path(path);
    const storage::Frame& ef = impl->embed.frame();
    impl->kind = object_kind(ef);
    if (impl->kind == ObjectKind::ndarray || impl->kind == ObjectKind::schunk) {
        throw FormatError(where + ": an array, not a store (a store is a .b2z, .b2d or .b2e " +
                          "of python-blosc2's TreeStore, DictStore or EmbedStore)");
    }
    if (impl->kind != ObjectKind::treestore && impl->kind != ObjectKind::dictstore &&
        impl->kind != ObjectKind::embedstore) {
        throw FormatError(where +
                          ": its embed frame has no store tag (metalayer b2tree, b2dict "
                          "or b2embed); it holds a " +
                          std::string(to_string(impl->kind)));
    }
    detail::EmbedMap map = detail::read_embed_map(impl->embed, where);
    for (StoreEntry& e : map.entries) {
        if (e.storage == LeafStorage::embedded) {
            try {
                e.kind = embedded_kind(impl->embed, e, where);
            } catch (const FormatError&) {
                // One damaged value does not hide the others: describe() and open say why.
                e.kind = "unknown";
            }
        }
    }
    // python lists external leaves first; a key in both places is the external one.
    std::map<std::string, StoreEntry> all;
    for (StoreEntry& e : map.entries) {
        all[e.key] = std::move(e);
    }
    for (StoreEntry& e : files) {
        all[e.key] = std::move(e);
    }
    std::map<std::string, StoreEntry> groups;
    for (auto& [key, e] : all) {
        const bool tree = impl->kind == ObjectKind::treestore;
        if (tree && is_holder(key)) {
            e.kind = "schunk";
            impl->hidden.push_back(std::move(e));
            continue;
        }
        if (tree) {
            for (std::size_t p = key.find('/', 1); p != std::string::npos;
                 p = key.find('/', p + 1)) {
                const std::string g = key.substr(0, p);
                if (all.count(g) == 0) {
                    StoreEntry ge;
                    ge.key = g;
                    ge.kind = "group";
                    groups.emplace(g, std::move(ge));
                }
            }
        }
        impl->entries.push_back(std::move(e));
    }
    for (auto& [g, e] : groups) {
        impl->entries.push_back(std::move(e));
    }
    const auto by_key = [](const StoreEntry& a, const StoreEntry& b) { return a.key < b.key; };
    std::sort(impl->entries.begin(), impl->entries.end(), by_key);
    std::sort(impl->hidden.begin(), impl->hidden.end(), by_key);
    Store s;
    s.impl_ = std::move(impl);
    return s;
}

const Store::Impl& Store::impl() const {
    if (!impl_) {
        throw UsageError("an empty b2nd::Store handle");
    }
    return *impl_;
}

const std::string& Store::path() const {
    return impl().path;
}

ObjectKind Store::kind() const {
    return impl().kind;
}

const char* Store::form() const {
    switch (impl().form) {
        case detail::StoreForm::zip:
            return "b2z";
        case detail::StoreForm::directory:
            return "b2d";
        case detail::StoreForm::embed:
            return "b2e";
    }
    return "?";
}

std::vector<StoreEntry> Store::entries() const {
    return impl().entries;
}

const StoreEntry* Store::find(const std::string& key) const {
    const StoreEntry* e = impl().find(key);
    return e != nullptr && impl().kind == ObjectKind::treestore && is_holder(e->key) ? nullptr : e;
}

void Store::missing_key(const Impl& s, const std::string& key) {
    const std::string where = s.where(detail::normal_key(key));
    if (!s.unmapped.empty()) {
        // Not a typo alone: the archive holds members python-blosc2 would not map either.
        std::string list;
        for (std::size_t i = 0; i < s.unmapped.size() && i < 3; ++i) {
            list += (i > 0 ? ", '" : "'") + s.unmapped[i] + "'";
        }
        throw FormatError(where + ": no such key, and the archive holds members that are no " +
                          "leaf (" + list + (s.unmapped.size() > 3 ? ", ..." : "") +
                          "): damaged, or not written by python-blosc2");
    }
    throw UsageError(where + ": no such key in the store ('b2nd ls' lists its keys)");
}

}  // namespace b2nd
