// The file work of writing python-blosc2's stores (store_detail.hpp): embed.b2e and attribute
// holders built as python builds them, .b2z archives written whole and renamed, .b2d leaves
// written under temporary names and renamed, all under the store-wide lock.
#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <b2nd/codec/chunk_encoder.hpp>
#include <b2nd/error.hpp>
#include <b2nd/storage/byte_source.hpp>
#include <b2nd/storage/frame.hpp>
#include <b2nd/storage/mapped_file.hpp>
#include <b2nd/storage/zip.hpp>

#include "../detail/text.hpp"
#include "../storage/publish.hpp"
#include "../storage/sources/posix_file.hpp"
#include "store_detail.hpp"
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace b2nd::detail {

namespace {

constexpr std::int32_t kEmbedChunk = 8192;  // python's EmbedStore chunksize
constexpr std::int32_t kHolderChunk = std::int32_t{1} << 24;

/// python's default compression for the frames it makes here (zstd 5, shuffle).
storage::FrameParams plain_params(std::int32_t chunksize) {
    storage::FrameParams p;
    p.codec = codec::Codec::zstd;
    p.clevel = 5;
    p.typesize = 1;
    p.chunksize = chunksize;
    return p;
}

std::vector<std::uint8_t> read_all(const std::string& path) {
    const auto mf = storage::MappedFile::open(path);
    const ByteSpan b = mf->bytes();
    return {b.begin(), b.end()};
}

/// A super-chunk frame without chunks whose vlmeta holds `items` (python's SChunk() that keeps a
/// TreeStore group's attributes), as bytes.
std::vector<std::uint8_t> holder_frame(const std::string& dir,
                                       const std::vector<std::pair<std::string, Value>>& items) {
    const Temporary holder(temporary_name((fs::path(dir) / "vlmeta-holder").string()));
    const std::string& tmp = holder.path();
    std::error_code ec;
    fs::remove(tmp, ec);
    {
        storage::Frame f =
            storage::Frame::create(tmp, plain_params(kHolderChunk), false, {}, false, false);
        storage::FrameEdit e = f.keep_all();
        for (const auto& [name, v] : items) {
            e.set_vlmeta(name, v.to_msgpack());
        }
        f.apply(e);
    }
    return read_all(tmp);
}

/// embed.b2e of the model at `path`: its embedded values' frames one after another in chunks of
/// 8 KiB, the key map, the store's tag and the other vlmeta. Written whole (a new file).
void write_embed(const StoreModel& m, const std::string& path) {
    std::vector<std::uint8_t> data;
    Value::Map map;
    for (const StoreNode& n : m.nodes) {
        if (n.storage == LeafStorage::remote) {
            map.emplace_back(n.key, Value::map({{"urlbase", n.urlbase}, {"path", n.remote_path}}));
        } else if (n.storage == LeafStorage::embedded) {
            const std::uint64_t size = n.bytes->size();
            const storage::SourceBytes b = n.bytes->read(0, size);
            map.emplace_back(n.key, Value::map({{"offset", static_cast<std::int64_t>(data.size())},
                                                {"length", static_cast<std::int64_t>(size)}}));
            data.insert(data.end(), b.bytes.begin(), b.bytes.end());
        }
    }
    const char* tag = m.kind == ObjectKind::treestore ? "b2tree" : "b2dict";
    const Value version = Value::map({{"version", 1}});
    std::error_code ec;
    fs::remove(path, ec);
    storage::Frame f = storage::Frame::create(path, plain_params(kEmbedChunk), false,
                                              {{tag, version.to_msgpack(), 0}}, true, false);
    codec::EncodeParams ep;
    static_cast<codec::CodecChoice&>(ep) = plain_params(kEmbedChunk);
    ep.typesize = 1;
    std::vector<std::vector<std::uint8_t>> chunks;
    for (std::size_t at = 0; at < data.size(); at += kEmbedChunk) {
        const std::size_t n = std::min<std::size_t>(kEmbedChunk, data.size() - at);
        chunks.push_back(codec::encode_chunk({data.data() + at, n}, ep));
    }
    storage::FrameEdit e;
    for (const auto& c : chunks) {
        e.add_new({c.data(), c.size()});
    }
    e.set_vlmeta("estore_metadata",
                 Value::map({{"embed_map", Value::map(std::move(map))},
                             {"current_offset", static_cast<std::int64_t>(data.size())}})
                     .to_msgpack());
    for (const auto& [name, raw] : m.embed_vlmeta) {
        e.set_vlmeta(name, raw);
    }
    if (m.tick > 0) {
        e.set_vlmeta("dstore_tick", Value(m.tick).to_msgpack());
    }
    f.apply(e);
    f.sync();
}

/// A file's bytes written under a temporary name, made durable and renamed to `path`.
void write_file(const std::string& path, const storage::ByteSource& src) {
    fs::create_directories(fs::path(path).parent_path());
    Temporary tmp(temporary_name(path));
    {
        storage::detail::PosixFile f(tmp.path(), storage::detail::PosixFile::Mode::create_new,
                                     path);
        constexpr std::uint64_t kPiece = std::uint64_t{16} << 20;
        for (std::uint64_t at = 0; at < src.size(); at += kPiece) {
            f.write_at(src.read(at, std::min(kPiece, src.size() - at)).bytes, at);
        }
        f.sync();
    }
    storage::detail::rename_file(tmp.path(), path);
    tmp.keep();
}

/// A directory of the store, `rel` below its root (made where missing), reached component by
/// component without following links (openat, O_NOFOLLOW) and held open. What is written
/// through path() (/proc/self/fd/N) lands in that very directory, even if a component is
/// swapped for a link meanwhile: the checks and the writes cannot be told apart by a race.
class PinnedDir {
public:
    PinnedDir(const std::string& root, const std::string& rel)
        : shown_((fs::path(root) / rel).lexically_normal().string()) {
        fd_ = ::open(root.c_str(), O_DIRECTORY | O_RDONLY | O_CLOEXEC);  // the store as named
        if (fd_ < 0) {
            fail(root, errno);
        }
        fs::path at(root);
        for (const fs::path& part : fs::path(rel)) {
            const std::string name = part.string();
            if (name.empty() || name == ".") {
                continue;
            }
            at /= part;
            const int flags = O_DIRECTORY | O_NOFOLLOW | O_RDONLY | O_CLOEXEC;
            int next = ::openat(fd_, name.c_str(), flags);
            if (next < 0 && errno == ENOENT) {
                if (::mkdirat(fd_, name.c_str(), 0777) != 0 && errno != EEXIST) {
                    fail(at.string(), errno);
                }
                next = ::openat(fd_, name.c_str(), flags);
            }
            if (next < 0) {
                const int err = errno;
                struct stat st {};
                if (::fstatat(fd_, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                    S_ISLNK(st.st_mode)) {
                    ::close(fd_);
                    throw UsageError(quoted_path(root) + ": " + quoted_path(at.string()) +
                                     " is a symbolic link inside the store; b2nd never writes "
                                     "through one (it could lead outside the store)");
                }
                fail(at.string(), err);
            }
            ::close(fd_);
            fd_ = next;
        }
    }
    ~PinnedDir() { ::close(fd_); }
    PinnedDir(const PinnedDir&) = delete;
    PinnedDir& operator=(const PinnedDir&) = delete;

    /// The directory as a path only this process resolves, to this directory.
    std::string path() const { return "/proc/self/fd/" + std::to_string(fd_); }
    /// The directory as the user knows it (for messages).
    const std::string& shown() const noexcept { return shown_; }
    int fd() const noexcept { return fd_; }

private:
    [[noreturn]] void fail(const std::string& where, int err) {
        if (fd_ >= 0) {
            ::close(fd_);
        }
        throw IoError(quoted_path(where) + ": cannot open the store's directory",
                      std::error_code(err, std::generic_category()));
    }

    std::string shown_;
    int fd_ = -1;
};

/// Writes `bytes` as file `rel` of the store at `root`, through its pinned directory; errors
/// name the file as the user knows it.
void write_store_file(const std::string& root,
                      const std::string& rel,
                      const storage::ByteSource& bytes) {
    const fs::path r(rel);
    const PinnedDir dir(root, r.parent_path().string());
    const std::string pinned = dir.path() + "/" + r.filename().string();
    try {
        write_file(pinned, bytes);
    } catch (const Error&) {
        rethrow_renamed(pinned, (fs::path(dir.shown()) / r.filename()).string());
    }
}

/// Removes file `rel` of the store at `root` (the link itself if it is one, never what it leads
/// to), through its pinned directory; a file already gone is no error.
void remove_store_file(const std::string& root, const std::string& rel) {
    const fs::path r(rel);
    const PinnedDir dir(root, r.parent_path().string());
    (void)::unlinkat(dir.fd(), r.filename().c_str(), 0);
}

/// A node's file in the store: its key without the leading '/', plus its suffix. Keys that would
/// leave the store's directory ("..", ".", empty segments: a crafted archive) are refused.
std::string file_of(const StoreNode& n) {
    const std::string rel = n.key.substr(1);
    std::size_t start = 0;
    while (start <= rel.size()) {
        const std::size_t end = std::min(rel.find('/', start), rel.size());
        const std::string seg = rel.substr(start, end - start);
        if (seg.empty() || seg == "." || seg == "..") {
            throw FormatError(quoted_path(n.key) +
                              ": a key whose file would lie outside the store's directory");
        }
        start = end + 1;
    }
    return rel + n.ext;
}

void write_zip(StoreModel& m) {
    const fs::path target(m.path);
    const std::string dir = target.parent_path().empty() ? "." : target.parent_path().string();
    // What writers killed before their rename left (theirs only: the names they make).
    sweep_stale_temporaries(m.path);
    sweep_stale_temporaries((fs::path(dir) / "embed.b2e").string());
    Temporary tmp(temporary_name(m.path));
    const Temporary embed_tmp(temporary_name((fs::path(dir) / "embed.b2e").string()));
    {
        write_embed(m, embed_tmp.path());
        const auto embed = storage::mapped_source(storage::MappedFile::open(embed_tmp.path()));
        // python: the files largest first (a stable order for equal sizes), embed.b2e last.
        std::vector<const StoreNode*> files;
        for (const StoreNode& n : m.nodes) {
            if (n.storage == LeafStorage::external || n.storage == LeafStorage::member) {
                files.push_back(&n);
            }
        }
        std::stable_sort(files.begin(), files.end(), [](const StoreNode* a, const StoreNode* b) {
            return a->bytes->size() > b->bytes->size();
        });
        storage::ZipWriter z(tmp.path());
        for (const StoreNode* n : files) {
            z.add(file_of(*n), *n->bytes);
        }
        z.add("embed.b2e", *embed);
        z.finish();
    }
    storage::detail::rename_file(tmp.path(), m.path);
    tmp.keep();
    storage::detail::fsync_directory(dir);
}

void write_directory(StoreModel& m) {
    fs::create_directories(m.path);
    for (StoreNode& n : m.nodes) {
        if (n.storage == LeafStorage::member) {
            n.storage = LeafStorage::external;  // not from a directory store; kept for safety
        }
        if (n.storage == LeafStorage::external && n.fresh) {
            const std::string f = file_of(n);
            write_store_file(m.path, f, *n.bytes);
            n.file = f;
            n.fresh = false;
        }
    }
    const std::string embed = (fs::path(m.path) / "embed.b2e").string();
    Temporary tmp(temporary_name(embed));
    write_embed(m, tmp.path());
    storage::detail::rename_file(tmp.path(), embed);
    tmp.keep();
    for (const std::string& f : m.dropped_files) {
        bool kept = false;
        for (const StoreNode& n : m.nodes) {
            kept = kept || (n.storage == LeafStorage::external && n.file == f);
        }
        if (!kept) {
            remove_store_file(m.path, f);
        }
    }
    m.dropped_files.clear();
    storage::detail::fsync_directory(m.path);
}

}  // namespace

void refuse_links_below(const std::string& root, const std::string& rel) {
    fs::path at(root);
    for (const fs::path& part : fs::path(rel)) {
        at /= part;
        struct stat st {};
        if (::lstat(at.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
            throw UsageError(quoted_path(root) + ": " + quoted_path(at.string()) +
                             " is a symbolic link inside the store; b2nd never writes through "
                             "one (it could lead outside the store)");
        }
    }
}

void upsert(StoreModel& m, StoreNode n) {
    const auto it = std::find_if(m.nodes.begin(), m.nodes.end(),
                                 [&](const StoreNode& x) { return x.key == n.key; });
    if (it != m.nodes.end()) {
        if (it->storage == LeafStorage::external &&
            (n.storage != LeafStorage::external || file_of(n) != it->file)) {
            m.dropped_files.push_back(it->file);
        }
        m.nodes.erase(it);
    }
    m.nodes.push_back(std::move(n));
}

void write_store(StoreModel& m) {
    if (m.zip) {
        write_zip(m);
    } else {
        write_directory(m);
    }
    m.dirty = false;
}

void change(StoreModel& m, const std::function<void(StoreModel&)>& fn) {
    if (m.zip) {
        fn(m);
        m.dirty = true;
        return;
    }
    // The store-wide lock: the exclusive (writer) lock of embed.b2e, which python's and
    // c-blosc2's writers take too; held until the change is on disk.
    storage::OpenOptions lo;
    lo.writable = true;
    lo.lock_wait_ms = 10000;
    refuse_links_below(m.path, "embed.b2e");
    const storage::Frame lock = storage::Frame::open((fs::path(m.path) / "embed.b2e").string(), lo);
    sweep_temporaries_in(m.path, true);  // of writers killed mid-write (python's leave none)
    fn(m);
    ++m.tick;
    write_store(m);
    adopt(m, Store::open(m.path));
}

std::vector<std::pair<std::string, Value>> group_vlmeta(const StoreModel& m,
                                                        const std::string& group) {
    std::string g = normal_key(group);
    std::vector<std::pair<std::string, Value>> out;
    if (m.kind != ObjectKind::treestore) {
        if (g != "/") {
            throw UsageError(quoted_path(m.path + ":" + g) +
                             ": only a TreeStore has groups with attributes");
        }
        for (const auto& [n, raw] : m.embed_vlmeta) {
            if (n != "_object_registry") {
                out.emplace_back(n, Value::from_msgpack({raw.data(), raw.size()}));
            }
        }
        return out;
    }
    if (g != "/") {
        bool group_exists = false;
        for (const StoreNode& n : m.nodes) {
            group_exists = group_exists || n.key.compare(0, g.size() + 1, g + "/") == 0;
        }
        if (!group_exists) {
            throw UsageError(quoted_path(m.path + ":" + g) + ": not a group of the tree");
        }
    }
    const std::string hk = (g == "/" ? "" : g) + "/__vlmeta__";
    for (const StoreNode& n : m.nodes) {
        if (n.key == hk && n.bytes) {
            OpenOptions raw;
            raw.raw_objects = true;
            const AnyArray a = AnyArray::open(n.bytes, raw);
            for (const std::string& name : a.vlmeta_names()) {
                const auto v = a.vlmeta(name);
                out.emplace_back(name, Value::from_msgpack({v->data(), v->size()}));
            }
        }
    }
    return out;
}

void set_group_vlmeta(StoreModel& m,
                      const std::string& group,
                      const std::vector<std::pair<std::string, Value>>& items) {
    const std::string g = normal_key(group);
    if (m.kind != ObjectKind::treestore) {
        std::vector<std::pair<std::string, std::vector<std::uint8_t>>> kept;
        for (const auto& kv : m.embed_vlmeta) {
            if (kv.first == "_object_registry") {
                kept.push_back(kv);
            }
        }
        for (const auto& [n, v] : items) {
            kept.emplace_back(n, v.to_msgpack());
        }
        m.embed_vlmeta = std::move(kept);
        return;
    }
    StoreNode n;
    n.key = (g == "/" ? "" : g) + "/__vlmeta__";
    n.ext = ".b2f";
    n.nbytes = 0;  // python: an SChunk without chunks
    const fs::path dir = m.zip ? fs::path(m.path).parent_path() : fs::path(m.path);
    auto bytes = std::make_shared<const std::vector<std::uint8_t>>(
        holder_frame(dir.empty() ? "." : dir.string(), items));
    n.bytes = storage::memory_source({bytes->data(), bytes->size()}, bytes, m.path + ":" + n.key);
    n.storage =
        m.threshold && n.nbytes >= *m.threshold ? LeafStorage::external : LeafStorage::embedded;
    n.fresh = true;
    upsert(m, std::move(n));
}

}  // namespace b2nd::detail
