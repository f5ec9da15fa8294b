// A sparse frame (c-blosc2's README_SFRAME_FORMAT.rst): a directory holding chunks.b2frame
// (header, offsets index, trailer) and one NNNNNNNN.chunk file per stored chunk; index entries
// are chunk file numbers.
//
// Crash safety (DESIGN.md section 5; the steps of a commit, in order, are in commit.cpp): chunk
// files get fresh numbers and are written under a temporary name and renamed; chunks.b2frame is
// then replaced the same way (the commit point), and only then are the files of replaced or
// deleted chunks removed. Chunk files are mapped on
// first use, at most OpenOptions::max_mapped_chunk_files at a time (least recently used out).
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <list>
#include <set>
#include <unordered_map>

#include <b2nd/error.hpp>
#include <b2nd/format/endian.hpp>

#include "../detail/lru_map.hpp"
#include "../detail/text.hpp"
#include "frame_impl.hpp"
#include "publish.hpp"
#include "sources/posix_file.hpp"
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

namespace b2nd::storage {

using b2nd::detail::num;

namespace {

constexpr std::int64_t kMaxFileNumber = 0xFFFFFFFFLL;  // eight hex digits

class SparseFrame final : public Frame::Impl, private CommitSteps {
public:
    CommitSteps* steps() noexcept override { return this; }

    ~SparseFrame() override {
        try {
            collect();   // what readers released since the last commit
        } catch (...) {  // NOLINT(bugprone-empty-catch): a destructor cannot report; files stay
        }
    }

    bool sparse() const noexcept override { return true; }
    std::string frame_file() const override { return path + "/chunks.b2frame"; }
    std::int64_t index_at(const format::FrameHeader& h) const override { return h.header_len; }

    ByteSpan chunk_region(std::int64_t i,
                          std::int64_t entry,
                          const std::vector<std::int32_t>* /*blocks: all at hand*/,
                          StoredChunk& c,
                          std::uint64_t& offset_out) const override {
        if (entry > kMaxFileNumber) {
            throw FormatError(chunk_context(i, -1) + " names chunk file " + num(entry) +
                                  ", beyond the 8-hex-digit range",
                              base + static_cast<std::uint64_t>(index_pos));
        }
        std::shared_ptr<const MappedFile> file;
        try {
            file = chunk_file(static_cast<std::uint32_t>(entry));
        } catch (const IoError& e) {
            if (e.code() != std::errc::no_such_file_or_directory) {
                throw;
            }
            throw IoError(chunk_context(i, entry) + ": the file is missing", e.code());
        }
        c.owner = file;
        c.file = entry;
        offset_out = 0;
        return file->bytes();
    }

    std::int64_t stage_bytes(ByteSpan bytes, ByteSpan record) override {
        if (next_staged_id_ < 0) {
            next_staged_id_ = next_free_number();
        }
        const std::int64_t id = claim_number(next_staged_id_);
        const std::string file = chunk_file_path(static_cast<std::uint32_t>(id));
        detail::write_file_atomically(file, bytes, options.durable, frame_file(), record);
        staged_to(file, bytes.size() + record.size());
        staged_ids_.push_back(id);
        return id;
    }

    std::uint64_t reserve_bytes(std::uint64_t amount) override {
        if (next_staged_id_ < 0) {
            next_staged_id_ = next_free_number();
        }
        const std::int64_t at = next_staged_id_;
        if (amount > static_cast<std::uint64_t>(kMaxFileNumber + 1 - at)) {
            throw UsageError(where() + ": chunk file numbers are exhausted; compact the frame");
        }
        // Registered as staged: the files no commit names are removed at the next one.
        for (std::uint64_t k = 0; k < amount; ++k) {
            staged_ids_.push_back(claim_number(next_staged_id_));
        }
        reserved_.emplace_back(at, next_staged_id_);
        return static_cast<std::uint64_t>(at);
    }

    void write_reserved(std::uint64_t position, ByteSpan bytes, ByteSpan tail) const override {
        if (position > static_cast<std::uint64_t>(kMaxFileNumber)) {
            throw UsageError(where() + ": chunk file number " +
                             num(static_cast<std::int64_t>(position)) + " is out of range");
        }
        detail::write_file_atomically(chunk_file_path(static_cast<std::uint32_t>(position)), bytes,
                                      options.durable, frame_file(), tail);
    }

    std::int64_t reserved_entry(std::uint64_t position, std::int64_t /*cbytes*/) const override {
        const auto id = static_cast<std::int64_t>(position);
        for (const auto& [from, to] : reserved_) {
            if (id >= from && id < to) {
                return id;
            }
        }
        throw UsageError(where() + ": chunk file " + num(id) +
                         " was not reserved since the last commit");
    }

    void place_chunks(FrameCommit& c) override {
        written_.clear();
        std::int64_t next_id = std::max(next_free_number(), next_staged_id_);
        for (std::size_t k = 0; k < c.writes.size(); ++k) {
            const std::int64_t id = claim_number(next_id);
            const std::string file = chunk_file_path(static_cast<std::uint32_t>(id));
            detail::write_file_atomically(file, c.writes[k], false,  // fsync: flush_written
                                          frame_file(), record_of(c, k));
            written_.push_back(file);
            c.index[c.slots[k]] = id;
        }
    }

    void write_image(CommitImage& img, const FrameCommit& c) override {
        // cbytes: what the chunk files hold, kept up to date by the bytes each commit adds and
        // removes (reading every file's size would map them all).
        const std::set<std::int64_t> live(c.index.begin(), c.index.end());
        std::int64_t cbytes = header.cbytes + c.staged_bytes;
        for (ByteSpan w : c.writes) {
            cbytes += static_cast<std::int64_t>(w.size());
        }
        removed_.clear();
        // A file numbered above everything the current index names is not in this snapshot, nor
        // in any earlier one that is still named: it is born with this commit (or later).
        std::int64_t first_new = births_.empty() ? 0 : births_.back().first_file;
        for (std::int64_t e : index) {
            first_new = std::max(first_new, e + 1);
        }
        pending_birth_ = first_new;
        for (std::size_t i = 0; i < index.size(); ++i) {
            if (index[i] >= 0 && live.count(index[i]) == 0) {
                cbytes -= static_cast<std::int64_t>(
                    chunk_unlocked(static_cast<std::int64_t>(i)).bytes.size());
                removed_.push_back(index[i]);
            }
        }
        img.header.cbytes = cbytes;
        image_ = format::write_frame_header(img.header);
        image_.insert(image_.end(), img.index.begin(), img.index.end());
        image_.insert(image_.end(), img.trailer.begin(), img.trailer.end());
        format::store_be<std::uint64_t>(image_.data() + format::frame_offsets::kFrameLen,
                                        image_.size());
        img.header.frame_len = image_.size();
        image_tmp_ = b2nd::detail::temporary_name(frame_file());
        detail::PosixFile(image_tmp_, detail::PosixFile::Mode::create_new, frame_file())
            .write_at(image_, 0);
    }

    void flush_written() override {
        for (const std::string& file : written_) {
            detail::PosixFile(file, detail::PosixFile::Mode::read_write).sync();
        }
        detail::PosixFile(image_tmp_, detail::PosixFile::Mode::read_write).sync();
        detail::fsync_directory(path);  // the new chunk files' names
    }

    void publish_image(const CommitImage& /*img*/) override {
        detail::rename_file(image_tmp_, frame_file());
    }

    void flush_published() override { detail::fsync_directory(path); }

    void adopt_image(const CommitImage& img) override {
        // Files no longer referenced go only now that the new index is in place, and only once
        // no reader's snapshot names them: with a sidecar, after_commit() removes them when the
        // reader table says so (the generation this commit is about to make is the first that
        // does not need them).
        for (std::int64_t e : removed_) {
            forget_file(static_cast<std::uint32_t>(e));
            if (sidecar) {
                unlinked_.push_back({born(e), sidecar->generation() + 1, e});
            } else {
                detail::remove_file(chunk_file_path(static_cast<std::uint32_t>(e)));
            }
        }
        removed_.clear();
        written_.clear();
        header = format::read_frame_header(image_);
        trailer_len = static_cast<std::uint32_t>(img.trailer.size());
        index_pos = header.header_len;
        mapped_ino = detail::file_identity(frame_file()).ino;
        adopt_mapping(MappedFile::open(frame_file()), image_.size());
    }

    void after_commit() override {
        if (sidecar && pending_birth_ >= 0) {
            births_.push_back({pending_birth_, snapshot_generation});
            pending_birth_ = -1;
        }
        collect();
    }

    void drop_staged(const std::vector<std::int64_t>& live) override {
        if (!staged_ids_.empty()) {
            const std::set<std::int64_t> keep(live.begin(), live.end());
            for (std::int64_t id : staged_ids_) {
                if (keep.count(id) == 0) {
                    detail::remove_file(chunk_file_path(static_cast<std::uint32_t>(id)));
                }
            }
        }
        staged_ids_.clear();
        reserved_.clear();
        next_staged_id_ = -1;
    }

    bool changed_on_disk() const override {
        return detail::file_identity(frame_file()).ino != mapped_ino;  // replaced by a rename
    }

    std::string snapshot_reach() override {
        pending_dir_ = DirHandle::open(path);
        return pending_dir_ ? pending_dir_->reach + "chunks.b2frame" : frame_file();
    }

    bool snapshot_has(const detail::Sidecar& lock_file) const override {
        const std::shared_ptr<DirHandle>& d = pending_dir_ ? pending_dir_ : dir_;
        return !d || lock_file.is_file(d->reach + ".b2lock");
    }

    void reloaded() override {
        std::lock_guard<std::mutex> lock(files_mutex_);
        files_.clear();
        if (pending_dir_) {
            dir_ = std::move(pending_dir_);
        }
    }

    void sync() override {
        for (std::int64_t e : index) {
            if (e >= 0) {
                detail::PosixFile(chunk_file_path(static_cast<std::uint32_t>(e)),
                                  detail::PosixFile::Mode::read_write)
                    .sync();
            }
        }
        detail::PosixFile(frame_file(), detail::PosixFile::Mode::read_write).sync();
        detail::fsync_directory(path);
    }

    /// Removes chunk files the index does not name (left by interrupted writes), unless a reader
    /// of an older snapshot may still use them.
    void compact(const CompactProgress& /*progress: no chunk is copied*/) override {
        collect();
        if (sidecar && sidecar->oldest_reader() < snapshot_generation) {
            return;  // an older snapshot is being read: what it names cannot be told from leftovers
        }
        const std::set<std::int64_t> live(index.begin(), index.end());
        std::vector<std::string> orphans;
        if (DIR* d = ::opendir(path.c_str())) {
            while (const dirent* e = ::readdir(d)) {
                const std::string n = e->d_name;
                unsigned id = 0;
                char tail[16] = {0};
                // Chunk files the index does not name, and the temporaries of writers (this
                // handle holds the writer lock: none is at work).
                if ((n.size() == 14 && std::sscanf(n.c_str(), "%8X%15s", &id, tail) == 2 &&
                     std::string(tail) == ".chunk" && live.count(id) == 0) ||
                    b2nd::detail::stale_temporary(path, n, true)) {
                    orphans.push_back(path + "/" + n);
                }
            }
            ::closedir(d);
        }
        for (const auto& o : orphans) {
            detail::remove_file(o);
        }
    }

private:
    std::string chunk_file_path(std::uint32_t id) const {
        char name[32];
        std::snprintf(name, sizeof name, "/%08X.chunk", id);
        return path + name;
    }

    /// A number no chunk file has: past those the index names, those waiting for readers to
    /// let go, and any file in the directory (left by earlier writers; a reader of an older
    /// snapshot may need one, so its number is never reused). The first call reads the
    /// directory: files there that the index does not name (kept by an earlier writer for its
    /// readers, or left by one killed) go as soon as no reader of an older snapshot is left.
    std::int64_t next_free_number() {
        if (directory_floor_ < 0) {
            directory_floor_ = 0;
            std::set<std::int64_t> known(index.begin(), index.end());  // named, or waiting
            for (const Unlinked& u : unlinked_) {
                known.insert(u.file);
            }
            for (const std::int64_t id : chunk_files_on_disk()) {
                directory_floor_ = std::max(directory_floor_, id + 1);
                if (sidecar && known.count(id) == 0) {
                    unlinked_.push_back({0, snapshot_generation, id});
                }
            }
        }
        std::int64_t next = directory_floor_;
        for (std::int64_t e : index) {
            next = std::max(next, e + 1);
        }
        for (const auto& u : unlinked_) {
            next = std::max(next, u.file + 1);
        }
        return next;
    }

    /// The numbers of the NNNNNNNN.chunk files in the directory.
    std::vector<std::int64_t> chunk_files_on_disk() const {
        std::vector<std::int64_t> ids;
        if (DIR* d = ::opendir(path.c_str())) {
            while (const dirent* e = ::readdir(d)) {
                unsigned id = 0;
                char tail[16] = {0};
                if (std::sscanf(e->d_name, "%8X%15s", &id, tail) == 2 &&
                    std::string(tail) == ".chunk" && std::strlen(e->d_name) == 14) {
                    ids.push_back(id);
                }
            }
            ::closedir(d);
        }
        return ids;
    }

    /// Returns `next` and advances it. \throws UsageError when the numbers are exhausted
    std::int64_t claim_number(std::int64_t& next) const {
        if (next > kMaxFileNumber) {
            throw UsageError(where() + ": chunk file numbers are exhausted; compact the frame");
        }
        return next++;
    }

    std::shared_ptr<const MappedFile> chunk_file(std::uint32_t id) const {
        std::lock_guard<std::mutex> lock(files_mutex_);
        if (const auto* kept = files_.find(id)) {
            return *kept;
        }
        char name[32];
        std::snprintf(name, sizeof name, "%08X.chunk", id);
        auto m = dir_ ? MappedFile::open(dir_->reach + name, chunk_file_path(id))
                      : MappedFile::open(chunk_file_path(id));
        files_.put(id, m, options.max_mapped_chunk_files);
        return m;
    }

    void forget_file(std::uint32_t id) {
        std::lock_guard<std::mutex> lock(files_mutex_);
        files_.erase(id);
    }

    /// The directory a snapshot was read from, held open: its chunk files are reached through
    /// /proc/self/fd/N/, so that a directory renamed into the frame's place (an array replaced
    /// by b2nd::copy or create with overwrite) never mixes its chunk files into this snapshot.
    /// Null where /proc is not mounted (then by name).
    struct DirHandle {
        int fd = -1;
        std::string reach;  // "/proc/self/fd/N/"
        static std::shared_ptr<DirHandle> open(const std::string& dir) {
            const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
            if (fd < 0) {
                return nullptr;
            }
            auto h = std::make_shared<DirHandle>();
            h->fd = fd;
            h->reach = "/proc/self/fd/" + std::to_string(fd) + "/";
            if (::access(h->reach.c_str(), X_OK) != 0) {
                return nullptr;
            }
            return h;
        }
        DirHandle() = default;
        DirHandle(const DirHandle&) = delete;
        DirHandle& operator=(const DirHandle&) = delete;
        ~DirHandle() {
            if (fd >= 0) {
                ::close(fd);
            }
        }
    };
    std::shared_ptr<DirHandle> dir_, pending_dir_;

    // Chunk files mapped on demand, least recently used first out.
    mutable std::mutex files_mutex_;
    mutable b2nd::detail::LruMap<std::uint32_t, std::shared_ptr<const MappedFile>> files_;
    /// The first generation whose snapshot can name file `id`, as far as births_ tells (earlier
    /// than the truth at worst, which only keeps a file longer).
    std::uint64_t born(std::int64_t id) const {
        for (auto b = births_.rbegin(); b != births_.rend(); ++b) {
            if (b->first_file <= id) {
                return b->generation;
            }
        }
        return 0;  // in the frame before this handle's first commit
    }

    /// Removes the replaced chunk files no registered reader can still need: a file is needed
    /// only by a reader whose snapshot is at least as new as the file and older than the commit
    /// that replaced it. A reader that keeps an old snapshot (an idle following reader, a slot
    /// forged in the lock file) thus keeps one version of the array, not every one since.
    void collect() {
        if (unlinked_.empty() && births_.size() < 2) {
            return;
        }
        const std::vector<std::uint64_t> readers = sidecar->reader_generations();
        const auto read_within = [&](std::uint64_t from,
                                     std::uint64_t to) {  // some r in [from, to)
            const auto r = std::lower_bound(readers.begin(), readers.end(), from);
            return r != readers.end() && *r < to;
        };
        std::vector<Unlinked> keep;
        for (const Unlinked& u : unlinked_) {
            if (read_within(u.born, u.replaced)) {
                keep.push_back(u);
            } else {
                detail::remove_file(chunk_file_path(static_cast<std::uint32_t>(u.file)));
            }
        }
        unlinked_ = std::move(keep);
        // Births no reader sits between tell nothing (readers only ever register the current
        // generation from now on): merging them keeps births_ as short as the reader table.
        std::vector<Birth> merged;
        for (const Birth& b : births_) {
            if (merged.empty() || read_within(merged.back().generation, b.generation)) {
                merged.push_back(b);
            }
        }
        births_ = std::move(merged);
    }

    std::int64_t directory_floor_ = -1;  // one past the highest file number on disk (-1: unread)
    // Replaced chunk files not removed yet.
    struct Unlinked {
        std::uint64_t born;      // no snapshot older than this names the file
        std::uint64_t replaced;  // the first generation that does not name it
        std::int64_t file;
    };
    std::vector<Unlinked> unlinked_;
    // This handle's commits: files numbered first_file or above are born at generation or later.
    struct Birth {
        std::int64_t first_file;
        std::uint64_t generation;
    };
    std::vector<Birth> births_;
    std::int64_t pending_birth_ = -1;  // the commit in progress's first_file
    // Staging (Frame::stage): chunk files written ahead of a commit.
    std::int64_t next_staged_id_ = -1;  // next chunk file number (-1: none staged yet)
    // The commit in progress (commit.cpp): new chunk files, files it replaces, chunks.b2frame.
    std::vector<std::string> written_;
    std::vector<std::int64_t> removed_;
    std::vector<std::uint8_t> image_;
    std::string image_tmp_;                 // chunks.b2frame's next image, under a temporary name
    std::vector<std::int64_t> staged_ids_;  // files written by stage() (or reserved for others)
    std::vector<std::pair<std::int64_t, std::int64_t>> reserved_;  // reserve_staging() ranges
};

}  // namespace

std::unique_ptr<Frame::Impl> make_sparse_frame() {
    return std::make_unique<SparseFrame>();
}

}  // namespace b2nd::storage
