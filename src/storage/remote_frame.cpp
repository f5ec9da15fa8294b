// Frames whose bytes are fetched over HTTP (Frame::open_url, or Frame::open of a remote
// source): read-only, parsed from two requests (the head, then the index and trailer), chunks
// fetched block by block through RemoteChunks.
//
// A contiguous frame's chunks are ranges of its file; a sparse frame's chunks.b2frame names
// chunk files beside it (NNNNNNNN.chunk), fetched by their own URLs on the same connections.
// A file that changed on the server (RemoteError::remote_changed) is re-read by
// refresh_unlocked(): header and index afresh, every image dropped. A remote frame has the
// reading face of a frame alone (frame_impl.hpp): nothing in it can be written.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <exception>

#include <b2nd/error.hpp>
#include <b2nd/storage/sources.hpp>

#include "../detail/text.hpp"
#include "block_seals.hpp"
#include "checksums.hpp"
#include "frame_impl.hpp"
#include "remote_chunks.hpp"

namespace b2nd::storage {

using b2nd::detail::num;
using detail::RemoteChunks;

namespace {

constexpr std::int64_t kMaxFileNumber = 0xFFFFFFFFLL;  // eight hex digits

class RemoteFrame final : public Frame::Impl {
public:
    explicit RemoteFrame(bool sparse) : sparse_(sparse) {}

    bool sparse() const noexcept override { return sparse_; }
    bool fetched() const noexcept override { return true; }
    std::string frame_file() const override { return label; }
    std::int64_t index_at(const format::FrameHeader& h) const override {
        return sparse_ ? h.header_len : h.header_len + h.cbytes;
    }

    void loaded() override {
        const format::FrameHeader h = header;
        const std::shared_ptr<const ByteSource> file = source;
        const std::string where_ = where();
        const std::uint64_t pos = base + static_cast<std::uint64_t>(index_pos);
        std::shared_ptr<const ByteSource> origin = origin_;
        RemoteChunks::Locate locate;
        if (sparse_) {
            // A chunk file holds its chunk (and its block digests), at most a memcpyed chunk's
            // size and 8 bytes a block: asking for that much gets a chunk wanted whole in one
            // request (the answer stops at the end).
            const std::uint64_t most =
                h.chunksize > 0 && h.blocksize > 0
                    ? static_cast<std::uint64_t>(h.chunksize) + 64 +
                          12 * static_cast<std::uint64_t>(h.chunksize / h.blocksize + 1)
                    : 0;
            locate = [origin, where_, pos, most](std::int64_t entry) {
                if (entry > kMaxFileNumber) {
                    throw FormatError(where_ + ": an index entry names chunk file " + num(entry) +
                                          ", beyond the 8-hex-digit range",
                                      pos);
                }
                char name[32];
                std::snprintf(name, sizeof name, "%08X.chunk", static_cast<unsigned>(entry));
                std::shared_ptr<const ByteSource> beside = origin ? origin->sibling(name) : nullptr;
                if (!beside) {
                    throw UsageError(where_ +
                                     ": its chunk files cannot be reached from a source "
                                     "that has no files beside it");
                }
                return RemoteChunks::Place{std::move(beside), 0, UINT64_MAX, most};
            };
        } else {
            auto ends = std::make_shared<const ChunkEnds>(index, h.cbytes);
            locate = [file, h, where_, pos, ends](std::int64_t entry) {
                if (entry > h.cbytes - format::kChunkExtendedHeaderSize) {
                    throw FormatError(where_ + ": an index entry's offset " + num(entry) +
                                          " is outside the chunks section (" + num(h.cbytes) +
                                          " bytes)",
                                      pos);
                }
                const auto start = static_cast<std::uint64_t>(h.header_len + entry);
                return RemoteChunks::Place{
                    file, start, static_cast<std::uint64_t>(h.header_len + h.cbytes) - start,
                    static_cast<std::uint64_t>(ends->end_of(entry) - entry)};
            };
        }
        const std::int64_t hint =
            h.blocksize > 0 && h.chunksize > 0 ? (h.chunksize + h.blocksize - 1) / h.blocksize : 64;
        const int records = checks.has_records() ? checks.version() : 0;
        auto chunks = std::make_shared<RemoteChunks>(
            std::move(locate), hint, options.http.memory_bytes, options.http.block_reads, records,
            detail::max_record_size(static_cast<std::size_t>(hint), h.blocksize, records));
        const RemoteChunks::Guard guard = identify();
        if (!file->strong_identity()) {
            chunks->set_guard(guard);  // each batch also probes the file's end
        }
        chunks_ = std::move(chunks);
    }

    /// Sets content_id from the header, index and trailer as fetched (at hand: no request), and
    /// returns the guard of this version: the checksum stamp of a frame that has one (the last
    /// 16 bytes, which change with any byte the table covers), else the end of its index and
    /// trailer (4 KiB at most: all of them for a small frame).
    RemoteChunks::Guard identify() {
        const std::uint64_t end = header.frame_len;
        const auto meta_at = std::min<std::uint64_t>(static_cast<std::uint64_t>(index_pos), end);
        const SourceBytes head = source->read(0, static_cast<std::uint64_t>(header.header_len));
        const SourceBytes meta = source->read(meta_at, end - meta_at);
        char id[40];
        std::snprintf(id, sizeof id, "%016llx%016llx",
                      static_cast<unsigned long long>(detail::bytes_digest(head.bytes)),
                      static_cast<unsigned long long>(detail::bytes_digest(meta.bytes)));
        content_id = id;
        constexpr std::uint64_t kStampTail = 16, kPlainTail = 4096;
        const bool stamped = meta.bytes.size() >= kStampTail + 1 &&
                             meta.bytes[meta.bytes.size() - kStampTail - 1] == detail::kStampType;
        const std::uint64_t n =
            std::min<std::uint64_t>(stamped ? kStampTail : kPlainTail, meta.bytes.size());
        const ByteSpan tail = meta.bytes.subspan(meta.bytes.size() - static_cast<std::size_t>(n),
                                                 static_cast<std::size_t>(n));
        return {source, end - n, std::vector<std::uint8_t>(tail.begin(), tail.end())};
    }

    bool refresh_unlocked() override {
        std::shared_ptr<const ByteSource> fresh = origin_ ? origin_->reopen() : nullptr;
        if (!fresh) {
            return false;  // bytes that cannot change under the reader
        }
        const std::string before = origin_->stamp();
        const std::string content_before = content_id;
        if (fresh->stamp() == before && !content_may_differ(*fresh)) {
            return false;
        }
        origin_ = fresh;
        load(fresh);
        if (fresh->stamp() == before && content_id == content_before) {
            return false;  // read again, the same: what is cached of it holds
        }
        mapped_ino = ++generation_;  // a new file: nothing cached of the old one holds
        return true;
    }

    void set_origin(std::shared_ptr<const ByteSource> s) { origin_ = std::move(s); }

    /// Whether `fresh` (this URL opened again, with the same validators) may hold another
    /// version: its guard bytes (one request) are not those of this one.
    bool content_may_differ(const ByteSource& fresh) const {
        if (fresh.strong_identity()) {
            return false;  // the same validators: the same content
        }
        const RemoteChunks::Guard& g = chunks_->guard();
        if (g.expected.empty()) {
            return true;
        }
        std::vector<std::uint8_t> now(g.expected.size());
        fresh.read_into({{base + g.offset, now.size(), now.data(), nullptr, true}});
        return now != g.expected;
    }

    /// Fetched: exactly the chunk's bytes (those of `blocks`, with its header, at least).
    ByteSpan chunk_region(std::int64_t i,
                          std::int64_t entry,
                          const std::vector<std::int32_t>* blocks,
                          StoredChunk& c,
                          std::uint64_t& offset_out) const override {
        c.file = sparse_ ? entry : -1;
        RemoteChunks::Chunk r;
        try {
            r = chunks_->chunk(entry, blocks);
        } catch (const FormatError& e) {
            rethrow_with_context(e, chunk_context(i, c.file), 0);
        }
        c.owner = std::move(r.bytes.owner);
        c.partial = !r.complete;
        offset_out = r.offset;
        return r.bytes.bytes;
    }

    void fetch(const std::vector<ChunkBlocks>& wants) const override {
        std::vector<RemoteChunks::Want> w;
        w.reserve(wants.size());
        for (const ChunkBlocks& c : wants) {
            if (c.chunk < 0 || c.chunk >= static_cast<std::int64_t>(index.size())) {
                continue;
            }
            const std::int64_t entry = index[static_cast<std::size_t>(c.chunk)];
            if (entry >= 0) {  // special chunks are in the index alone
                w.push_back({entry, c.blocks});
            }
        }
        try {
            chunks_->fetch(w);
        } catch (const FormatError& e) {
            rethrow_with_context(e, where(), 0);
        }
    }

    /// Headers are asked for in index order (kinds: b2nd info): those of the
    /// next chunks come in the same batch, not a round trip each.
    void fetch_heads_from(std::int64_t i) const override {
        if (i < 0 || static_cast<std::size_t>(i) >= index.size() ||
            index[static_cast<std::size_t>(i)] < 0 ||
            chunks_->head_known(index[static_cast<std::size_t>(i)])) {
            return;
        }
        constexpr std::size_t kAhead = 256;
        std::vector<RemoteChunks::Want> heads;
        for (auto k = static_cast<std::size_t>(i); k < index.size() && heads.size() < kAhead; ++k) {
            if (index[k] >= 0) {
                heads.push_back({index[k], {}, true});
            }
        }
        try {
            chunks_->fetch(heads);
        } catch (const FormatError&) {  // NOLINT(bugprone-empty-catch): reported for chunk i
        }
    }

    /// Sizes over the whole frame (dead_bytes, chunk_bytes) read every live chunk's header:
    /// they come in batches of 4,096.
    void fetch_all_heads() const override {
        if (sparse_ || !chunks_) {
            return;
        }
        constexpr std::size_t kBatch = 4096;
        std::vector<RemoteChunks::Want> heads;
        const auto flush = [&] {
            chunks_->fetch(heads);
            heads.clear();
        };
        for (const std::int64_t e : index) {
            if (e >= 0 && !chunks_->head_known(e)) {
                heads.push_back({e, {}, true});
                if (heads.size() == kBatch) {
                    flush();
                }
            }
        }
        if (!heads.empty()) {
            flush();
        }
    }

private:
    bool sparse_;
    std::shared_ptr<const RemoteChunks> chunks_;  // the images of its chunks (set by loaded())
    std::shared_ptr<const ByteSource> origin_;    // the frame file, when opened by URL
    std::uint64_t generation_ = 1;
};

/// Whether `head` starts like a frame header (msgpack array, then the "b2frame" magic).
bool looks_like_frame(const ByteSource& s) {
    if (s.size() < 16) {
        return false;
    }
    const SourceBytes b = s.read(0, 16);
    return std::memcmp(b.bytes.data() + 2, "b2frame", 7) == 0;
}

}  // namespace

std::unique_ptr<Frame::Impl> make_remote_frame(bool sparse) {
    return std::make_unique<RemoteFrame>(sparse);
}

namespace {

std::unique_ptr<Frame::Impl> open_url_once(const std::string& url, const OpenOptions& options);

}  // namespace

Frame Frame::open_url(const std::string& url, const OpenOptions& options) {
    try {
        return Frame(open_url_once(url, options));
    } catch (const RemoteError& e) {
        if (!e.remote_changed()) {
            throw;
        }
        // Changed between the head and the tail: once more, from the head.
        return Frame(open_url_once(url, options));
    }
}

namespace {

std::unique_ptr<Frame::Impl> open_url_once(const std::string& url, const OpenOptions& options) {
    std::string u = url;
    const auto ends_with = [&](const char* tail) {
        const std::size_t n = std::strlen(tail);
        return u.size() >= n && u.compare(u.size() - n, n, tail) == 0;
    };
    bool sparse = ends_with("/") || ends_with("/chunks.b2frame");
    std::shared_ptr<const ByteSource> file;
    // The URL's own failure, if its directory holds no chunks.b2frame either: a 404, or a 200
    // that is no answer to a range (a directory listing, as nginx's autoindex sends: chunked,
    // without a length).
    std::exception_ptr missing;  // as thrown (the driver's own error type)
    int missing_status = 0;
    if (!sparse) {
        try {
            file = open_source(u, options);
            sparse = !looks_like_frame(*file);
        } catch (const RemoteError& e) {
            // A directory: 404 or 403 (no listing), or a listing that is no frame.
            if (e.status() != 404 && e.status() != 403 && e.status() != 200) {
                throw;
            }
            // 403: a directory without a listing, or no access to the file itself (its own
            // error, if the directory holds no chunks.b2frame either).
            missing = std::current_exception();
            missing_status = e.status();
            sparse = true;
        }
        if (sparse) {
            u += "/";
        }
    }
    if (sparse) {
        if (!ends_with("/chunks.b2frame")) {
            u += "chunks.b2frame";
        }
        try {
            file = open_source(u, options);
        } catch (const RemoteError& e) {
            // Nothing there: the URL's own failure (a 403 twice: no access, not a directory).
            if (missing && (e.status() == 403 || (e.status() == 404 && missing_status != 403))) {
                std::rethrow_exception(missing);
            }
            if (e.status() != 404) {
                throw;
            }
            throw FormatError("\"" + redacted_url(url) +
                              "\": neither a frame nor a sparse frame's directory (no "
                              "chunks.b2frame in it)");
        }
    }
    auto impl = std::make_unique<RemoteFrame>(sparse);
    impl->options = options;
    impl->options.writable = false;
    impl->label = sparse ? redacted_url(u.substr(0, u.size() - std::strlen("/chunks.b2frame")))
                         : file->name();
    impl->set_origin(file);
    impl->load(file);
    return impl;
}

}  // namespace

StoredChunk Frame::chunk_blocks(std::int64_t i, const std::vector<std::int32_t>& blocks) const {
    std::shared_lock<std::shared_mutex> lock(impl_->mutex);
    return impl_->checked_chunk(i, impl_->fetched() ? &blocks : nullptr, false);
}

bool Frame::remote() const noexcept {
    return impl_->fetched();
}

std::string Frame::stamp() const {
    std::shared_lock<std::shared_mutex> lock(impl_->mutex);
    if (!impl_->source) {
        return {};
    }
    const std::string validators = impl_->source->stamp();
    return impl_->content_id.empty() ? validators : validators + ":" + impl_->content_id;
}

TransferStats Frame::transfers() const {
    std::shared_lock<std::shared_mutex> lock(impl_->mutex);
    return impl_->source ? impl_->source->transfers() : TransferStats{};
}

void Frame::fetch(const std::vector<ChunkBlocks>& wants) const {
    std::shared_lock<std::shared_mutex> lock(impl_->mutex);
    impl_->fetch(wants);
}

}  // namespace b2nd::storage
