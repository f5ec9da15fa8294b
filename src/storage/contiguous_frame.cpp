// A contiguous frame: one file (".b2nd"), possibly at an offset in a larger file, or a caller's
// buffer. Index entries are byte offsets from the end of the header.
//
// Crash safety (DESIGN.md section 5; the steps of a commit, in order, are in commit.cpp): the
// frame is only ever extended. New chunk bytes, then the new offsets index, then the new trailer
// are written after the current end of the frame, and the header from byte 16 on (frame_len,
// nbytes, cbytes, has_vlmetalayers and the metalayers) is rewritten last with a single pwrite.
// Until then the header describes the old frame, whose bytes are untouched; after it, the new one.
// The old index and trailer become dead space inside the chunks section (the header's cbytes covers
// it, which c-blosc2 accepts: it only needs every chunk inside [0, cbytes) and the index at
// header_len + cbytes). compact() rewrites the frame without dead space to a temporary file and
// renames it over the original.
#include <algorithm>
#include <optional>
#include <unordered_set>

#include <b2nd/error.hpp>
#include <b2nd/format/chunk_header.hpp>
#include <b2nd/format/endian.hpp>

#include "../detail/text.hpp"
#include "frame_impl.hpp"
#include "outputs.hpp"
#include "publish.hpp"
#include "sources/posix_file.hpp"

namespace b2nd::storage {

using b2nd::detail::num;

namespace {

constexpr std::size_t kPatchBegin = format::frame_offsets::kFrameLen;  // 16

class ContiguousFrame final : public Frame::Impl, private CommitSteps {
public:
    CommitSteps* steps() noexcept override { return this; }

    bool sparse() const noexcept override { return false; }
    std::string frame_file() const override { return path; }
    std::int64_t index_at(const format::FrameHeader& h) const override {
        return h.header_len + h.cbytes;
    }

    ByteSpan chunk_region(std::int64_t i,
                          std::int64_t entry,
                          const std::vector<std::int32_t>* /*blocks: all at hand*/,
                          StoredChunk& c,
                          std::uint64_t& offset_out) const override {
        // The chunk must start inside the chunks section, leaving room for a Blosc2 header.
        if (entry > header.cbytes - format::kChunkExtendedHeaderSize) {
            throw FormatError(chunk_context(i, -1) + " offset " + num(entry) +
                                  " is outside the chunks section (" + num(header.cbytes) +
                                  " bytes)",
                              base + static_cast<std::uint64_t>(index_pos));
        }
        const auto start = static_cast<std::uint64_t>(header.header_len + entry);
        const auto section_end = static_cast<std::uint64_t>(header.header_len + header.cbytes);
        offset_out = base + start;
        std::uint64_t len = section_end - start;  // with a view: to the end of the section
        if (frame.empty()) {
            // A source without a view: the chunk's header first, then exactly its bytes.
            const SourceBytes head =
                source->read(start, static_cast<std::uint64_t>(format::kChunkExtendedHeaderSize));
            constexpr std::size_t kCbytesAt = 12;  // ChunkHeader::cbytes
            const auto cbytes = format::load_le<std::int32_t>(head.bytes.data() + kCbytesAt);
            if (cbytes < format::kChunkExtendedHeaderSize ||
                static_cast<std::uint64_t>(cbytes) > len) {
                throw FormatError(chunk_context(i, -1) + ": cbytes " + num(cbytes) +
                                      " does not fit the chunks section",
                                  offset_out + kCbytesAt);
            }
            // ... and its block digests after them, with a version-2 table.
            const std::size_t record =
                checks.has_records() ? detail::record_size(head.bytes, checks.version()) : 0;
            len = std::min(len, static_cast<std::uint64_t>(cbytes) + record);
        }
        SourceBytes b = frame_bytes(start, len);
        c.owner = std::move(b.owner);
        return b.bytes;
    }

    /// Where new bytes may go: after the frame, or for an exclusive writer after the last chunk
    /// that `keep` (index entries) names, over the index and trailer the last commit left
    /// (nobody else reads them).
    std::uint64_t free_from(const std::vector<std::int64_t>& keep) const {
        if (!options.exclusive) {
            return base + header.frame_len;
        }
        // Chunks do not overlap: the one kept at the highest offset ends last.
        const std::unordered_set<std::int64_t> kept(keep.begin(), keep.end());
        std::int64_t last = -1;
        std::size_t at = 0;
        for (std::size_t i = 0; i < index.size(); ++i) {
            if (index[i] > last && kept.count(index[i]) != 0) {
                last = index[i];
                at = i;
            }
        }
        const std::int64_t end =
            last < 0 ? 0 : last + stored_size(chunk_unlocked(static_cast<std::int64_t>(at)));
        return base + static_cast<std::uint64_t>(header.header_len + end);
    }

    std::int64_t stage_bytes(ByteSpan bytes, ByteSpan record) override {
        if (staging_end_ == 0) {
            staging_end_ = free_from(index);
            staging_file_.reset();  // a new staging: the file may have been replaced since
        }
        if (!staging_file_) {
            // Kept open until the staging ends (a path lookup and an open per chunk cost ~1% of
            // a large write, more while a flush runs on the same file).
            staging_file_.emplace(path, detail::PosixFile::Mode::read_write);
        }
        staging_file_->write_at(bytes, staging_end_);
        staging_file_->write_at(record, staging_end_ + bytes.size());
        staged_to(path, bytes.size() + record.size());
        const auto entry = static_cast<std::int64_t>(staging_end_ - base) - header.header_len;
        staging_end_ += bytes.size() + record.size();
        return entry;
    }

    std::uint64_t reserve_bytes(std::uint64_t amount) override {
        if (staging_end_ == 0) {
            staging_end_ = free_from(index);
        }
        const std::uint64_t at = staging_end_;
        staging_end_ += amount;
        reserved_.emplace_back(at, staging_end_);
        return at;
    }

    void write_reserved(std::uint64_t position, ByteSpan bytes, ByteSpan tail) const override {
        detail::PosixFile f(path, detail::PosixFile::Mode::read_write);
        f.write_at(bytes, position);
        f.write_at(tail, position + bytes.size());
        if (options.durable) {
            f.sync();
        }
    }

    std::int64_t reserved_entry(std::uint64_t position, std::int64_t cbytes) const override {
        const auto end = position + static_cast<std::uint64_t>(cbytes);
        for (const auto& [from, to] : reserved_) {
            if (position >= from && end <= to && end >= position) {
                return static_cast<std::int64_t>(position - base) - header.header_len;
            }
        }
        throw UsageError(where() + ": bytes [" + num(static_cast<std::int64_t>(position)) + ", " +
                         num(static_cast<std::int64_t>(end)) +
                         ") of the file were not reserved since the last commit");
    }

    void place_chunks(FrameCommit& c) override {
        pending_tmp_.clear();
        if (c.nbytes == 0) {
            return;  // an empty frame is written whole by write_image
        }
        detail::PosixFile f(path, detail::PosixFile::Mode::read_write);
        // After the live frame and after anything staged: staged bytes the index names stay.
        std::uint64_t pos = std::max<std::uint64_t>(free_from(c.index), staging_end_);
        for (std::size_t k = 0; k < c.writes.size(); ++k) {
            const ByteSpan record = record_of(c, k);
            f.write_at(c.writes[k], pos);
            f.write_at(record, pos + c.writes[k].size());
            c.index[c.slots[k]] = static_cast<std::int64_t>(pos - base) - header.header_len;
            pos += c.writes[k].size() + record.size();
        }
        chunks_end_ = pos;
    }

    void write_image(CommitImage& img, const FrameCommit& c) override {
        format::FrameHeader& h = img.header;
        if (c.nbytes == 0) {
            // c-blosc2 looks for an empty frame's trailer right after the header: the file is
            // rebuilt under a temporary name rather than live bytes overwritten.
            if (base != 0) {
                throw UsageError(where() + ": an embedded frame cannot become empty");
            }
            h.cbytes = 0;
            std::vector<std::uint8_t> image = format::write_frame_header(h);
            format::store_be<std::uint64_t>(image.data() + format::frame_offsets::kFrameLen,
                                            image.size() + img.trailer.size());
            image.insert(image.end(), img.trailer.begin(), img.trailer.end());
            pending_tmp_ = b2nd::detail::temporary_name(b2nd::detail::through_link(path));
            detail::PosixFile(pending_tmp_, detail::PosixFile::Mode::create_new, path)
                .write_at(image, 0);
            return;
        }
        detail::PosixFile f(path, detail::PosixFile::Mode::read_write);
        std::uint64_t pos = chunks_end_;
        const auto index_at = static_cast<std::int64_t>(pos - base);
        f.write_at(img.index, pos);
        pos += img.index.size();
        f.write_at(img.trailer, pos);
        pos += img.trailer.size();
        h.frame_len = static_cast<std::uint64_t>(pos - base);
        h.cbytes = index_at - header.header_len;
        header_image_ = format::write_frame_header(h);
        if (header_image_.size() != static_cast<std::size_t>(header.header_len)) {
            throw UsageError(where() + ": the header would change length (" +
                             num(header.header_len) + " -> " +
                             num(static_cast<std::int64_t>(header_image_.size())) + " bytes)");
        }
    }

    void flush_written() override {
        detail::PosixFile(pending_tmp_.empty() ? path : pending_tmp_,
                          detail::PosixFile::Mode::read_write)
            .sync();
    }

    void publish_image(const CommitImage& /*img*/) override {
        if (!pending_tmp_.empty()) {
            detail::rename_file(pending_tmp_, b2nd::detail::through_link(path));
            return;
        }
        // One write of the header from byte 16 on (lengths, sizes, metalayers).
        detail::PosixFile(path, detail::PosixFile::Mode::read_write)
            .write_at(
                ByteSpan(header_image_.data() + kPatchBegin, header_image_.size() - kPatchBegin),
                base + kPatchBegin);
    }

    void flush_published() override {
        if (!pending_tmp_.empty()) {
            detail::fsync_directory(detail::directory_of(path));
        } else {
            detail::PosixFile(path, detail::PosixFile::Mode::read_write).sync();
        }
    }

    void adopt_image(const CommitImage& img) override {
        if (!pending_tmp_.empty()) {
            pending_tmp_.clear();
            map_and_load();
            return;
        }
        const std::uint64_t end = base + img.header.frame_len;
        if (options.exclusive && base == 0) {
            detail::PosixFile f(path, detail::PosixFile::Mode::read_write);
            if (f.size() > end) {
                // Nothing of the old mapping is read again; then no stale tail remains.
                map.reset();
                source.reset();
                frame = {};
                frame_owner.reset();
                f.truncate(end);
            }
        }
        header = format::read_frame_header(header_image_);  // the metalayer offsets too
        trailer_len = static_cast<std::uint32_t>(img.trailer.size());
        index_pos =
            static_cast<std::int64_t>(img.header.frame_len - img.trailer.size() - img.index.size());
        adopt_mapping(MappedFile::open(path), img.header.frame_len);
    }

    void drop_staged(const std::vector<std::int64_t>& /*live*/) override {
        staging_end_ = 0;  // staged bytes no index names are dead space inside the file
        staging_file_.reset();
        reserved_.clear();
    }

    bool changed_on_disk() const override {
        if (detail::file_identity(path).ino != mapped_ino) {
            return true;  // replaced by a rename (compact)
        }
        // The file is mapped shared: the header bytes seen through the map are current.
        const std::uint8_t* h = map->bytes().data() + base;
        return format::load_be<std::uint64_t>(h + format::frame_offsets::kFrameLen) !=
                   header.frame_len ||
               format::load_be<std::int64_t>(h + format::frame_offsets::kCbytes) != header.cbytes ||
               format::load_be<std::int64_t>(h + format::frame_offsets::kNbytes) != header.nbytes ||
               h[format::frame_offsets::kHasVlMeta] != (header.has_vlmetalayers ? 0xc3 : 0xc2);
    }

    void sync() override {
        detail::PosixFile(path, detail::PosixFile::Mode::read_write).sync();
        detail::fsync_directory(detail::directory_of(path));
    }

    void compact(const CompactProgress& progress) override {
        if (base != 0) {
            throw UsageError(where() + ": an embedded frame cannot be compacted in place");
        }
        // Beside the file itself (a link stays a link), under a name of this process's own
        // (removed on failure, and by the tool on SIGINT), with the file's mode and owner.
        const std::string real = b2nd::detail::through_link(path);
        b2nd::detail::Temporary tmp(b2nd::detail::temporary_name(real));
        write_compacted(tmp.path(), progress);  // chunks are immutable: no lock needed
        // Readers of older snapshots keep the old file mapped; new snapshots see the new one.
        detail::Sidecar::Lock lock = commit_lock();
        detail::rename_file(tmp.path(), real);
        tmp.keep();
        detail::fsync_directory(detail::directory_of(real));
        map_and_load();
        committed();
    }

    /// The compaction policy (OpenOptions::auto_compact).
    void after_commit() override {
        if (!options.auto_compact || base != 0 || path.empty()) {
            return;
        }
        const std::uint64_t file = map->size();
        if (file <= kAutoCompactSlack) {
            return;
        }
        // Compacted: the header, the live chunks, the index and the trailer.
        const std::uint64_t compacted = static_cast<std::uint64_t>(header.header_len) +
                                        static_cast<std::uint64_t>(header.cbytes - dead_bytes()) +
                                        (header.frame_len - static_cast<std::uint64_t>(index_pos));
        if (file > 2 * compacted + kAutoCompactSlack) {
            compact({});
            end_staging(index);
        }
    }

private:
    /// A whole new frame image (header, chunks in order, index, trailer) written to `out`.
    void write_compacted(const std::string& out, const CompactProgress& progress) const {
        detail::PosixFile f(out, detail::PosixFile::Mode::create_new, path);
        format::FrameHeader h = header;
        std::vector<std::uint8_t> head = format::write_frame_header(h);
        std::uint64_t pos = head.size();
        std::vector<std::int64_t> idx(index.size());
        for (std::size_t i = 0; i < index.size(); ++i) {
            const StoredChunk c = checked_chunk(static_cast<std::int64_t>(i));  // not copied bad
            if (c.index_only()) {
                idx[i] = index[i];
                continue;
            }
            idx[i] = static_cast<std::int64_t>(pos) - static_cast<std::int64_t>(head.size());
            f.write_at(c.bytes, pos);
            f.write_at(c.record, pos + c.bytes.size());  // checked with the chunk
            pos += c.bytes.size() + c.record.size();
            if (progress) {
                progress(static_cast<std::int64_t>(i + 1), static_cast<std::int64_t>(index.size()));
            }
        }
        h.cbytes = static_cast<std::int64_t>(pos - head.size());
        std::vector<std::uint8_t> tail;
        if (h.nbytes > 0) {
            tail = encode_index(idx);
        }
        std::vector<std::uint64_t> digests;  // the table moves with the chunks
        for (std::size_t i = 0; checks.carried() && i < index.size(); ++i) {
            digests.push_back(checks.chunk_digest(i));
        }
        const std::vector<std::uint8_t> trailer = detail::trailer_with_checksums(
            {head.data(), head.size()}, {tail.data(), tail.size()}, vlmeta,
            checks.carried() ? &digests : nullptr, checks.version());
        tail.insert(tail.end(), trailer.begin(), trailer.end());
        f.write_at(tail, pos);
        pos += tail.size();
        h.frame_len = pos;
        head = format::write_frame_header(h);
        f.write_at(head, 0);
        f.sync();
    }

    std::uint64_t staging_end_ = 0;  // next staged byte position in the file (0: none yet)
    std::optional<detail::PosixFile> staging_file_;  // open while chunks are being staged
    // The commit in progress (commit.cpp): where its chunks end, its header, or the temporary
    // file of an empty frame.
    std::uint64_t chunks_end_ = 0;
    std::vector<std::uint8_t> header_image_;
    std::string pending_tmp_;
    // File ranges reserve_staging() handed out since the last commit.
    std::vector<std::pair<std::uint64_t, std::uint64_t>> reserved_;
};

}  // namespace

std::unique_ptr<Frame::Impl> make_contiguous_frame() {
    return std::make_unique<ContiguousFrame>();
}

}  // namespace b2nd::storage
