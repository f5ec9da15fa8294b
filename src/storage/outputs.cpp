#include "outputs.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include <b2nd/error.hpp>
#include <b2nd/format/frame_header.hpp>
#include <b2nd/storage/mapped_file.hpp>
#include <b2nd/storage/zip.hpp>

#include "../detail/text.hpp"
#include "sources/posix_file.hpp"
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace b2nd::detail {

namespace fs = std::filesystem;

namespace {

constexpr std::size_t kMaxEntries = 1000000;  // a store's tree walked at most this far

std::string trimmed(std::string path) {
    while (path.size() > 1 && path.back() == '/') {
        path.pop_back();
    }
    return path;
}

bool ends_with(const std::string& s, const char* tail) {
    const std::size_t n = std::strlen(tail);
    return s.size() >= n && s.compare(s.size() - n, n, tail) == 0;
}

/// The first bytes of a file (fewer when it is shorter or unreadable).
std::string first_bytes(const std::string& path, std::size_t n) {
    std::string out(n, '\0');
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0) {
        return {};
    }
    std::size_t got = 0;
    while (got < n) {
        const ssize_t r = ::read(fd, out.data() + got, n - got);
        if (r <= 0) {
            break;
        }
        got += static_cast<std::size_t>(r);
    }
    ::close(fd);
    out.resize(got);
    return out;
}

/// Whether `b` starts as a Blosc2 frame does.
bool is_frame_start(const std::string& b) {
    try {
        (void)format::read_frame_lengths(
            {reinterpret_cast<const std::uint8_t*>(b.data()), b.size()});
        return true;
    } catch (const Error&) {
        return false;
    }
}

bool is_frame_file(const std::string& path) {
    return is_frame_start(first_bytes(path, 64));
}

/// What a file that starts with `b` holds, in the user's terms.
std::string kind_of_start(const std::string& b, const char* otherwise) {
    const std::string other =
        format::foreign_format({reinterpret_cast<const std::uint8_t*>(b.data()), b.size()});
    if (!other.empty()) {
        return other;
    }
    return is_frame_start(b) ? "a Blosc2 frame" : otherwise;
}

/// What a regular file holds, in the user's terms.
std::string file_kind(const std::string& path) {
    return kind_of_start(first_bytes(path, 64), "a file of another kind");
}

bool is_store_zip(const std::string& path) {
    try {
        const auto zip =
            storage::ZipDirectory::read(storage::mapped_source(storage::MappedFile::open(path)));
        return zip.find("embed.b2e") != nullptr;
    } catch (const Error&) {
        return false;
    }
}

bool is_chunk_file_name(const std::string& name) {
    if (name.size() != 14 || !ends_with(name, ".chunk")) {
        return false;
    }
    for (std::size_t i = 0; i < 8; ++i) {
        if (std::isxdigit(static_cast<unsigned char>(name[i])) == 0) {
            return false;
        }
    }
    return true;
}

/// b2nd-cpp's and c-blosc2's own companions: lock files and temporaries.
bool is_companion(const std::string& name) {
    return name == ".b2lock" || ends_with(name, ".b2lock") || ends_with(name, ".tmp");
}

/// The first entry of a sparse frame directory that is not part of it ("" when all are).
std::string foreign_in_sparse_frame(const std::string& dir) {
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        const bool file = it->is_regular_file(ec) && !it->is_symlink(ec);
        if (file && (name == "chunks.b2frame" || is_chunk_file_name(name) || is_companion(name))) {
            continue;
        }
        return name;
    }
    return {};
}

/// The first entry under a .b2d directory that is not part of a store ("" when all are).
std::string foreign_in_store(const std::string& dir) {
    std::error_code ec;
    std::size_t seen = 0;
    for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        if (++seen > kMaxEntries) {
            return "more than " + std::to_string(kMaxEntries) + " entries";
        }
        const fs::path rel = fs::relative(it->path(), dir, ec);
        const std::string name = it->path().filename().string();
        if (it->is_symlink(ec)) {
            return rel.string();
        }
        if (it->is_directory(ec)) {
            continue;  // a group, or a sparse frame: its files are looked at in turn
        }
        if (!it->is_regular_file(ec)) {
            return rel.string();
        }
        if (is_companion(name) || is_chunk_file_name(name) || is_frame_file(it->path().string())) {
            continue;
        }
        return rel.string();
    }
    return {};
}

/// Whether `rel` (a path under a Zarr array's directory, '/'-separated) is one of its own files:
/// metadata (.zarray, .zattrs, .zgroup, .zmetadata, zarr.json) or a chunk key, in any of the
/// encodings Zarr writes (v2's "0.1.2" or "0/1/2", v3's "c/0/1/2" or "c.0.1.2").
bool zarr_own_file(const std::string& rel) {
    for (const char* meta : {".zarray", ".zattrs", ".zgroup", ".zmetadata", "zarr.json"}) {
        if (rel == meta) {
            return true;
        }
    }
    std::string key = rel;
    if (key.compare(0, 2, "c/") == 0 || key.compare(0, 2, "c.") == 0) {
        key.erase(0, 2);
    } else if (key == "c") {
        return true;  // a 0-d array's one chunk
    }
    if (key.empty()) {
        return false;
    }
    bool digit = false;  // the last character was a digit
    for (const char c : key) {
        if (c >= '0' && c <= '9') {
            digit = true;
        } else if ((c == '.' || c == '/') && digit) {
            digit = false;
        } else {
            return false;
        }
    }
    return digit;
}

/// The first entry under a Zarr array's directory that is not its own ("" when all are).
std::string foreign_in_zarr(const std::string& dir) {
    std::error_code ec;
    std::size_t seen = 0;
    for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        if (++seen > kMaxEntries) {
            return "more than " + std::to_string(kMaxEntries) + " entries";
        }
        const std::string rel = fs::relative(it->path(), dir, ec).generic_string();
        if (it->is_symlink(ec)) {
            return rel;
        }
        if (it->is_directory(ec)) {
            continue;  // nested chunk keys: their files are looked at in turn
        }
        if (!it->is_regular_file(ec) || !(zarr_own_file(rel) || is_companion(rel))) {
            return rel;
        }
    }
    return {};
}

bool directory_empty(const std::string& dir) {
    std::error_code ec;
    return fs::directory_iterator(dir, ec) == fs::directory_iterator();
}

/// Sets one entry's owner (where allowed) and mode; drops the group's bits when the group
/// could not be kept.
void own_entry(const char* path, unsigned mode, const Ownership& o) noexcept {
    struct stat st {};
    if (::lstat(path, &st) != 0 || S_ISLNK(st.st_mode)) {
        return;
    }
    if (st.st_uid != o.uid || st.st_gid != o.gid) {
        if (::lchown(path, o.uid, o.gid) != 0) {
            (void)::lchown(path, static_cast<uid_t>(-1), o.gid);
        }
        (void)::lstat(path, &st);
    }
    if (st.st_gid != o.gid) {
        mode &= ~070U;
    }
    (void)::chmod(path, static_cast<mode_t>(mode));
}

}  // namespace

std::string special_kind(mode_t m) {
    if (S_ISCHR(m)) {
        return "a character device";
    }
    if (S_ISBLK(m)) {
        return "a block device";
    }
    if (S_ISFIFO(m)) {
        return "a FIFO";
    }
    if (S_ISSOCK(m)) {
        return "a socket";
    }
    return {};
}

const char* output_kind_name(OutputKind kind) {
    switch (kind) {
        case OutputKind::array:
            return "an array";
        case OutputKind::npy:
            return "an .npy file";
        case OutputKind::store:
            return "a store";
        case OutputKind::hdf5:
            return "an HDF5 file";
        case OutputKind::zarr:
            return "a Zarr array";
    }
    return "an output";
}

std::string replacement_refusal(const std::string& path, OutputKind kind) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
        return {};
    }
    const std::string what = output_kind_name(kind);
    const std::string only = "; only " + what + " is replaced by " + what;
    if (const std::string special = special_kind(st.st_mode); !special.empty()) {
        return "is " + special + "; b2nd writes regular files and directories only";
    }
    if (S_ISREG(st.st_mode)) {
        if (st.st_size == 0) {
            return {};
        }
        bool ok = false;
        switch (kind) {
            case OutputKind::array:
                ok = is_frame_file(path);
                break;
            case OutputKind::npy:
                ok = first_bytes(path, 6) == "\x93NUMPY";
                break;
            case OutputKind::store:
                // A zip with embed.b2e, or an EmbedStore (a frame, named .b2e).
                ok = is_store_zip(path) || (ends_with(path, ".b2e") && is_frame_file(path));
                break;
            case OutputKind::hdf5:
                ok = first_bytes(path, 8) == "\x89HDF\r\n\x1a\n";
                break;
            case OutputKind::zarr:
                break;  // a Zarr array is a directory
        }
        return ok ? std::string() : "is " + file_kind(path) + ", not " + what + only;
    }
    if (!S_ISDIR(st.st_mode)) {
        return "is neither a file nor a directory" + only;
    }
    if (directory_empty(path)) {
        return {};
    }
    const std::string p = trimmed(path);
    if (kind == OutputKind::array && fs::exists(p + "/chunks.b2frame")) {
        const std::string foreign = foreign_in_sparse_frame(p);
        return foreign.empty() ? std::string()
                               : "is a sparse frame directory that also holds " +
                                     quoted_path(foreign) + ", which is not part of an array" +
                                     "; b2nd replaces nothing that holds other files";
    }
    if (kind == OutputKind::zarr && (fs::exists(p + "/zarr.json") || fs::exists(p + "/.zarray"))) {
        const std::string foreign = foreign_in_zarr(p);
        return foreign.empty() ? std::string()
                               : "is a Zarr array directory that also holds " +
                                     quoted_path(foreign) + ", which is not part of the array" +
                                     "; b2nd replaces nothing that holds other files";
    }
    if (kind == OutputKind::store && fs::exists(p + "/embed.b2e")) {
        const std::string foreign = foreign_in_store(p);
        return foreign.empty() ? std::string()
                               : "is a store directory that also holds " + quoted_path(foreign) +
                                     ", which is not part of the store" +
                                     "; b2nd replaces nothing that holds other files";
    }
    return "is a directory that is not " + what + only + " (remove it yourself if it must go)";
}

void check_replacement(const std::string& where, const std::string& why, bool overwrite) {
    if (!overwrite) {
        throw UsageError(where + ": already exists" +
                         (why.empty() ? " (the overwrite option replaces it)" : " and " + why));
    }
    if (!why.empty()) {
        throw UsageError(where + " " + why);
    }
}

std::string remote_replacement_refusal(const storage::detail::RemotePresence& p, OutputKind kind) {
    const std::string what = output_kind_name(kind);
    const std::string only = "; only " + what + " is replaced by " + what;
    if (p.object && !p.head.empty()) {
        bool ok = false;
        switch (kind) {
            case OutputKind::array:
                ok = is_frame_start(p.head);
                break;
            case OutputKind::npy:
                ok = p.head.rfind("\x93NUMPY", 0) == 0;
                break;
            case OutputKind::store:
                ok = p.head.rfind("PK\x03\x04", 0) == 0 || is_frame_start(p.head);
                break;
            case OutputKind::hdf5:
                ok = p.head.rfind("\x89HDF\r\n\x1a\n", 0) == 0;
                break;
            case OutputKind::zarr:
                break;
        }
        if (!ok) {
            return "is " + kind_of_start(p.head, "an object of another kind") + ", not " + what +
                   only;
        }
    }
    if (!p.under.empty()) {
        const auto has = [&](const char* name) {
            return std::find(p.under.begin(), p.under.end(), name) != p.under.end();
        };
        std::string foreign;
        if (kind == OutputKind::array && has("chunks.b2frame")) {
            for (const std::string& n : p.under) {
                if (n != "chunks.b2frame" && !is_chunk_file_name(n) && !is_companion(n)) {
                    foreign = n;
                    break;
                }
            }
        } else if (kind == OutputKind::zarr && (has("zarr.json") || has(".zarray"))) {
            for (const std::string& n : p.under) {
                if (!zarr_own_file(n) && !is_companion(n)) {
                    foreign = n;
                    break;
                }
            }
        } else if (!(kind == OutputKind::store && has("embed.b2e"))) {
            foreign = p.under.front();
        }
        if (!foreign.empty()) {
            return "is a prefix of objects that holds \"" + foreign + "\", which is not part of " +
                   what + "; b2nd replaces nothing that holds other objects";
        }
    }
    return {};
}

std::string checked_output(const std::string& target,
                           OutputKind kind,
                           bool overwrite,
                           const std::string& where) {
    std::string t = trimmed(target);
    struct stat st {};
    if (::lstat(t.c_str(), &st) != 0) {
        return t;  // nothing there (or nothing this process may look at: the write will say)
    }
    if (S_ISLNK(st.st_mode)) {
        char buf[PATH_MAX];
        if (::realpath(t.c_str(), buf) == nullptr) {
            throw UsageError(where +
                             " is a symbolic link to nothing; b2nd writes through links "
                             "only to files or directories that exist");
        }
        t = buf;
    }
    check_replacement(where, replacement_refusal(t, kind), overwrite);
    bool read_only = storage::detail::read_only(t);
    if (!read_only && fs::is_directory(t)) {
        read_only = storage::detail::read_only(t + "/chunks.b2frame") ||
                    storage::detail::read_only(t + "/embed.b2e");
    }
    if (read_only) {
        throw UsageError(where + " is read-only; make it writable to replace it");
    }
    return t;
}

bool path_within(const std::string& inner, const std::string& outer) {
    std::error_code ec;
    const fs::path o = fs::canonical(outer, ec);
    if (ec) {
        return false;
    }
    const fs::path i = fs::weakly_canonical(inner, ec);
    if (ec) {
        return false;
    }
    const std::string os = o.string(), is = i.string();
    return is == os || (is.size() > os.size() && is.compare(0, os.size(), os) == 0 &&
                        (os.back() == '/' || is[os.size()] == '/'));
}

std::string through_link(const std::string& path) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) {
        return path;
    }
    char buf[PATH_MAX];
    return ::realpath(path.c_str(), buf) != nullptr ? std::string(buf) : path;
}

std::optional<Ownership> ownership_of(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
        return std::nullopt;
    }
    Ownership o;
    o.uid = st.st_uid;
    o.gid = st.st_gid;
    o.dir_mode = st.st_mode & 07777;
    o.file_mode = st.st_mode & 0777;
    if (S_ISDIR(st.st_mode)) {
        o.file_mode = o.dir_mode & 0666;
        struct stat inner {};
        const std::string p = trimmed(path);
        if (::stat((p + "/chunks.b2frame").c_str(), &inner) == 0 ||
            ::stat((p + "/embed.b2e").c_str(), &inner) == 0) {
            o.file_mode = inner.st_mode & 0777;
        }
    }
    return o;
}

void give_ownership(const std::string& path, const Ownership& o) noexcept {
    std::error_code ec;
    if (!fs::is_directory(fs::symlink_status(path, ec))) {
        own_entry(path.c_str(), o.file_mode, o);
        return;
    }
    for (fs::recursive_directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec)) {
        const bool dir = it->is_directory(ec) && !it->is_symlink(ec);
        own_entry(it->path().c_str(), dir ? o.dir_mode : o.file_mode, o);
    }
    own_entry(path.c_str(), o.dir_mode, o);
}

void take_ownership(int fd, const std::string& like) noexcept {
    struct stat want {
    }, st{};
    if (::stat(like.c_str(), &want) != 0 || ::fstat(fd, &st) != 0) {
        return;
    }
    if (st.st_uid != want.st_uid || st.st_gid != want.st_gid) {
        if (::fchown(fd, want.st_uid, want.st_gid) != 0) {
            (void)::fchown(fd, static_cast<uid_t>(-1), want.st_gid);
        }
        (void)::fstat(fd, &st);
    }
    mode_t mode = want.st_mode & 0777;
    if (st.st_gid != want.st_gid) {
        mode &= ~static_cast<mode_t>(070);
    }
    (void)::fchmod(fd, mode);
}

}  // namespace b2nd::detail
