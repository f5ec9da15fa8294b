// Frame reading, the same for both kinds of frame: open, parse, chunk lookup (the metalayers
// and vlmetalayers read: frame_metadata.cpp).
#include <algorithm>
#include <chrono>
#include <cstdio>

#include <b2nd/codec/chunk_decoder.hpp>
#include <b2nd/error.hpp>
#include <b2nd/format/chunk_header.hpp>
#include <b2nd/format/endian.hpp>

#include "../detail/text.hpp"
#include "frame_impl.hpp"
#include "sources/posix_file.hpp"

namespace b2nd::storage {

using b2nd::detail::num;

codec::Special special_of(std::int64_t entry, std::int64_t i) {
    if (entry >= 0) {
        return codec::Special::none;
    }
    switch (static_cast<std::uint64_t>(entry)) {
        case kSpecialZeros:
            return codec::Special::zeros;
        case kSpecialNan:
            return codec::Special::nan;
        case kSpecialUninit:
            return codec::Special::uninit;
        default:
            throw FormatError(
                "offsets index: entry " + num(i) + " has an unknown special value 0x" +
                    [&] {
                        char buf[20];
                        std::snprintf(buf, sizeof buf, "%016llx",
                                      static_cast<unsigned long long>(entry));
                        return std::string(buf);
                    }(),
                0);
    }
}

std::vector<std::uint8_t> encode_index(const std::vector<std::int64_t>& index) {
    codec::EncodeParams p;
    p.codec = codec::Codec::blosclz;
    p.clevel = 5;
    p.typesize = 8;
    p.blocksize = 16 * 1024;
    p.splitmode = codec::SplitMode::never;
    p.filters = codec::make_pipeline({{codec::Filter::shuffle, 0}});
    return codec::encode_chunk(as_bytes(index.data(), index.size()), p);
}

std::vector<std::uint8_t> materialize_special(codec::Special kind,
                                              std::int32_t nbytes,
                                              std::int32_t typesize,
                                              std::int32_t blocksize) {
    switch (kind) {
        case codec::Special::zeros:
            return codec::make_zeros_chunk(nbytes, typesize, blocksize);
        case codec::Special::nan:
            return codec::make_nans_chunk(nbytes, typesize, blocksize);
        case codec::Special::uninit:
            return codec::make_uninit_chunk(nbytes, typesize, blocksize);
        default:
            throw UsageError("materialize_special: not an index-only special kind");
    }
}

std::string Frame::Impl::where() const {
    return b2nd::detail::quoted_path(path.empty() ? label : path);
}

std::string Frame::Impl::chunk_context(std::int64_t i, std::int64_t file) const {
    std::string s = where() + ": chunk " + num(i);
    if (file >= 0) {
        char name[32];
        std::snprintf(name, sizeof name, " (file %08X.chunk)", static_cast<std::uint32_t>(file));
        s += name;
    }
    return s;
}

void Frame::Impl::attach_sidecar() {
    if (!options.locking || path.empty()) {
        return;
    }
    sidecar = detail::Sidecar::open(path, sparse(), is_writable, options.lock_timeout_ms);
    if (!is_writable) {
        return;
    }
    if (!sidecar) {
        throw IoError(where() + ": cannot create the lock file " +
                          b2nd::detail::quoted_path(detail::Sidecar::path_for(path, sparse())),
                      std::error_code(EACCES, std::generic_category()));
    }
    if (!sidecar->acquire_writer(options.lock_wait_ms)) {
        throw LockError(where() +
                        ": another handle, in this or another process, has it open for writing "
                        "(one writer at a time; lock file \"" +
                        sidecar->path() + "\")");
    }
}

void Frame::Impl::load_snapshot() {
    if (!sidecar && options.locking && !path.empty()) {
        // No sidecar yet: parse without a lock, then look again. A locking writer creates the
        // sidecar before its first commit, so if there is still none, no commit overlapped.
        map_and_load();
        sidecar = detail::Sidecar::open(path, sparse(), false, options.lock_timeout_ms);
        if (!sidecar) {
            return;
        }
    }
    detail::Sidecar::Lock lock;
    if (sidecar) {
        lock = sidecar->lock_shared();
    }
    // A sparse frame's directory may be replaced (with the lock file in it) between taking the
    // lock and reading: the snapshot must be of the directory whose lock file is held, else the
    // replacement may remove it under the read. Then again, with the new directory's.
    for (;;) {
        const auto raced = [&] { return sidecar && !is_writable && !snapshot_has(*sidecar); };
        try {
            map_and_load();
        } catch (const IoError&) {
            if (!raced()) {
                throw;
            }
        }
        if (!raced()) {
            break;
        }
        lock.release();
        sidecar->release_reader();
        sidecar = detail::Sidecar::open(path, sparse(), false, options.lock_timeout_ms);
        if (sidecar) {
            lock = sidecar->lock_shared();
        }
    }
    if (sidecar) {
        snapshot_generation = sidecar->generation();
        sidecar->register_reader(snapshot_generation);
    }
}

detail::Sidecar::Lock Frame::Impl::commit_lock() const {
    return sidecar ? sidecar->lock_exclusive() : detail::Sidecar::Lock();
}

void Frame::Impl::committed() {
    if (sidecar) {
        snapshot_generation = sidecar->bump();
        sidecar->register_reader(snapshot_generation);
    }
}

bool Frame::Impl::stale() const {
    if (path.empty()) {
        return false;
    }
    if (sidecar) {
        return sidecar->generation() != snapshot_generation;
    }
    // No sidecar: the header as mapped (a contiguous frame's writer patches it in place), and
    // now and then the files themselves (a replaced file, a sidecar that appeared).
    if (!sparse()) {
        const std::uint8_t* h = map->bytes().data() + base;
        if (format::load_be<std::uint64_t>(h + format::frame_offsets::kFrameLen) !=
                header.frame_len ||
            format::load_be<std::int64_t>(h + format::frame_offsets::kCbytes) != header.cbytes) {
            return true;
        }
    }
    const std::int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                 std::chrono::steady_clock::now().time_since_epoch())
                                 .count();
    if (now < next_stat_ns) {
        return false;
    }
    next_stat_ns = now + 10'000'000;
    return changed_on_disk() ||
           (options.locking && detail::path_exists(detail::Sidecar::path_for(path, sparse())));
}

void Frame::Impl::map_and_load() {
    const std::string reach = snapshot_reach();
    const std::uint64_t ino = detail::file_identity(reach).ino;
    auto m = MappedFile::open(reach, frame_file());
    if (base > m->size()) {
        throw FormatError(where() + ": frame offset " + std::to_string(base) +
                          " is past the end of the " + std::to_string(m->size()) + "-byte file");
    }
    load(window_source(mapped_source(m), base, m->size() - base), m);
    mapped_ino = ino;
    reloaded();
}

void Frame::Impl::adopt_mapping(std::shared_ptr<const MappedFile> file, std::uint64_t frame_len) {
    source = window_source(mapped_source(file), base, frame_len);
    const std::optional<SourceBytes> view = source->view();
    frame = view->bytes;
    frame_owner = view->owner;
    map = std::move(file);
}

SourceBytes Frame::Impl::frame_bytes(std::uint64_t offset, std::uint64_t n) const {
    if (!frame.empty() && offset <= frame.size() && n <= frame.size() - offset) {
        return {frame.subspan(static_cast<std::size_t>(offset), static_cast<std::size_t>(n)),
                frame_owner};
    }
    return source->read(offset, n);
}

void Frame::Impl::load(const std::shared_ptr<const ByteSource>& bytes,
                       std::shared_ptr<const MappedFile> mapping) {
    try {
        const std::uint64_t available = bytes->size();
        if (available < static_cast<std::uint64_t>(format::kFrameHeaderMinLen)) {
            throw FormatError("frame: " + std::to_string(available) +
                              " bytes cannot hold a frame header");
        }
        const SourceBytes start =
            bytes->read(0, static_cast<std::uint64_t>(format::kFrameHeaderMinLen));
        const format::FrameLengths lengths = format::read_frame_lengths(start.bytes);
        if (lengths.frame_len > available) {
            throw FormatError("truncated: " + std::to_string(available) + " of the " +
                                  std::to_string(lengths.frame_len) +
                                  " bytes its header gives (frame_len)",
                              format::frame_offsets::kFrameLen);
        }
        // From here on, the frame alone; read piece by piece (spans of the view, if any).
        const std::shared_ptr<const ByteSource> src = window_source(bytes, 0, lengths.frame_len);
        const std::optional<SourceBytes> view = src->view();
        const auto piece = [&](std::uint64_t at, std::uint64_t n) {
            if (view) {
                return SourceBytes{
                    view->bytes.subspan(static_cast<std::size_t>(at), static_cast<std::size_t>(n)),
                    view->owner};
            }
            return src->read(at, n);
        };
        const std::uint64_t flen = lengths.frame_len;
        const SourceBytes hbytes = piece(0, static_cast<std::uint64_t>(lengths.header_len));
        format::FrameHeader h = format::read_frame_header(hbytes.bytes);
        if ((h.kind() == format::FrameKind::sparse) != sparse()) {
            throw FormatError(sparse() ? "frame: chunks.b2frame is not a sparse frame"
                                       : "frame: a sparse frame's index outside its directory",
                              format::frame_offsets::kFrameType);
        }
        // read_frame_lengths checked that frame_len holds the header and a minimal trailer.
        constexpr auto kTail = static_cast<std::uint64_t>(format::kFrameTrailerMinLen);
        if (!view && src->remote()) {
            // One request for the index and the trailer (they end the frame), which the reads
            // below then find at hand: opening costs this and the one that fetched the head.
            const std::uint64_t from = std::clamp<std::uint64_t>(
                static_cast<std::uint64_t>(std::max<std::int64_t>(index_at(h), 0)),
                static_cast<std::uint64_t>(h.header_len), flen - kTail);
            (void)src->read(from, flen - from);
        }
        const std::uint32_t tlen =
            format::read_trailer_len(piece(flen - kTail, kTail).bytes, flen - kTail);
        if (tlen < static_cast<std::uint32_t>(format::kFrameTrailerMinLen) ||
            tlen > flen - static_cast<std::uint64_t>(h.header_len)) {
            throw FormatError(
                "frame: trailer_len " + std::to_string(tlen) + " does not fit the frame",
                flen - 22);
        }
        const std::uint64_t trailer_at = flen - tlen;
        SourceBytes tbytes = piece(trailer_at, tlen);
        format::FrameTrailer t =
            format::read_frame_trailer(tbytes.bytes);  // offsets: the trailer's

        std::vector<std::int64_t> idx;
        SourceBytes istored;  // the index chunk as stored (what the checksum table covers)
        std::int64_t ipos = h.header_len;
        if (h.nbytes > 0) {
            ipos = index_at(h);
            if (ipos < h.header_len || static_cast<std::uint64_t>(ipos) >= trailer_at) {
                throw FormatError("frame: the offsets index (at " + num(ipos) +
                                      ") does not lie between the header and the trailer (at " +
                                      num(static_cast<std::int64_t>(trailer_at)) + ")",
                                  format::frame_offsets::kCbytes);
            }
            const SourceBytes ibytes = piece(static_cast<std::uint64_t>(ipos),
                                             trailer_at - static_cast<std::uint64_t>(ipos));
            codec::ChunkDecoder dec = [&] {
                try {
                    return codec::ChunkDecoder(ibytes.bytes);
                } catch (const FormatError& e) {
                    rethrow_with_context(e, "frame: offsets index",
                                         static_cast<std::uint64_t>(ipos));
                }
            }();
            istored = ibytes;
            istored.bytes = ibytes.bytes.first(
                static_cast<std::size_t>(format::read_chunk_header(ibytes.bytes).cbytes));
            if (dec.nbytes() % 8 != 0) {
                throw FormatError("frame: offsets index of " + num(dec.nbytes()) +
                                      " bytes is not a list of int64",
                                  static_cast<std::uint64_t>(ipos));
            }
            const std::int64_t count = dec.nbytes() / 8;
            if (h.chunksize > 0) {
                const std::int64_t expect =
                    h.nbytes / h.chunksize + (h.nbytes % h.chunksize != 0 ? 1 : 0);
                if (count != expect) {
                    throw FormatError("frame: offsets index holds " + num(count) +
                                          " entries, but nbytes " + num(h.nbytes) +
                                          " and chunksize " + num(h.chunksize) + " make " +
                                          num(expect) + " chunks",
                                      static_cast<std::uint64_t>(ipos));
                }
            }
            if (count > options.max_chunks) {
                throw UsageError(where() + ": " + num(count) +
                                 " chunks exceed OpenOptions::max_chunks (" +
                                 num(options.max_chunks) + ")");
            }
            idx.resize(static_cast<std::size_t>(count));
            try {
                dec.decode(as_writable_bytes(idx.data(), idx.size()));
            } catch (const FormatError& e) {
                rethrow_with_context(e, "frame: offsets index", static_cast<std::uint64_t>(ipos));
            }
            for (auto& v : idx) {
                v = format::load_le<std::int64_t>(&v);  // stored little-endian
            }
        } else if (h.cbytes < 0) {
            throw FormatError("frame: negative cbytes", format::frame_offsets::kCbytes);
        }
        detail::Checks sums = detail::Checks::read(hbytes.bytes, istored.bytes, idx.size(), t,
                                                   options.verify_checksums, !fetched());
        if (options.verify_checksums && sums.state() == ChecksumReport::State::broken) {
            const auto more = static_cast<std::int64_t>(sums.problems().size()) - 1;
            throw FormatError(
                "frame: " + sums.problems().front() +
                    (more > 0 ? " (and " + num(more) + " more problems: b2nd verify lists them)"
                              : std::string()),
                trailer_at);
        }
        header = std::move(h);
        index = std::move(idx);
        checks = std::move(sums);
        vlmeta = std::move(t.vlmetalayers);
        trailer_len = tlen;
        index_pos = ipos;
        source = src;
        frame = view ? view->bytes : ByteSpan();
        frame_owner = view ? view->owner : nullptr;
        trailer_bytes = std::move(tbytes);
        map = std::move(mapping);
        loaded();
    } catch (const FormatError& e) {
        rethrow_with_context(e, where(), base);
    }
}

Frame::Frame(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Frame::Frame(Frame&&) noexcept = default;
Frame& Frame::operator=(Frame&&) noexcept = default;
Frame::~Frame() = default;

Frame Frame::open(const std::string& path, const OpenOptions& options) {
    std::string p = path;
    while (p.size() > 1 && p.back() == '/') {
        p.pop_back();
    }
    const bool sparse = detail::is_directory(p);
    if (sparse && !detail::path_exists(p + "/chunks.b2frame")) {
        throw FormatError(b2nd::detail::quoted_path(path) +
                          ": a directory, but not a sparse frame (it holds no chunks.b2frame)");
    }
    if (sparse && options.offset != 0) {
        throw UsageError(b2nd::detail::quoted_path(path) +
                         ": a sparse frame (directory) cannot start at an offset");
    }
    if (options.writable && detail::read_only(sparse ? p + "/chunks.b2frame" : p)) {
        // Mode bits, not access(): root may write anything, but a file made read-only was
        // meant to stay as it is (every writer refuses it alike, the tool's too).
        throw UsageError(b2nd::detail::quoted_path(path) +
                         " is read-only; make it writable to change it");
    }
    auto impl = sparse ? make_sparse_frame() : make_contiguous_frame();
    impl->path = std::move(p);
    impl->options = options;
    impl->base = options.offset;
    impl->is_writable = options.writable;
    if (options.writable && options.flush_behind) {
        impl->flush_behind = std::make_unique<detail::FlushBehind>();
    }
    impl->attach_sidecar();
    impl->load_snapshot();
    return Frame(std::move(impl));
}

Frame Frame::from_buffer(ByteSpan buffer, const OpenOptions& options) {
    return open(memory_source(buffer), options);
}

Frame Frame::open(std::shared_ptr<const ByteSource> source, const OpenOptions& options) {
    if (!source) {
        throw UsageError("Frame::open: no byte source");
    }
    auto impl = source->remote() ? make_remote_frame(false) : make_contiguous_frame();
    impl->options = options;
    impl->options.writable = false;
    impl->label = source->name();
    if (options.offset > source->size()) {
        throw FormatError(b2nd::detail::quoted_path(source->name()) + ": frame offset " +
                          std::to_string(options.offset) + " is past the end of the " +
                          std::to_string(source->size()) + "-byte " +
                          (source->name().empty() ? "buffer" : "source"));
    }
    impl->base = source->offset_in_file() + options.offset;
    impl->load(window_source(source, options.offset, source->size() - options.offset));
    return Frame(std::move(impl));
}

const format::FrameHeader& Frame::header() const noexcept {
    return impl_->header;
}
const std::string& Frame::path() const noexcept {
    return impl_->path;
}
const std::string& Frame::name() const noexcept {
    return impl_->path.empty() ? impl_->label : impl_->path;
}
std::uint64_t Frame::base_offset() const noexcept {
    return impl_->base;
}
std::string Frame::chunk_context(std::int64_t i, const StoredChunk& c) const {
    return impl_->chunk_context(i, c.file);
}
bool Frame::sparse() const noexcept {
    return impl_->sparse();
}
bool Frame::writable() const noexcept {
    return impl_->is_writable;
}

std::int64_t Frame::nchunks() const noexcept {
    std::shared_lock<std::shared_mutex> lock(impl_->mutex);
    return static_cast<std::int64_t>(impl_->index.size());
}

std::int64_t Frame::nbytes() const noexcept {
    std::shared_lock<std::shared_mutex> lock(impl_->mutex);
    return impl_->header.nbytes;
}

StoredChunk Frame::chunk(std::int64_t i) const {
    std::shared_lock<std::shared_mutex> lock(impl_->mutex);
    return impl_->checked_chunk(i);
}

StoredChunk Frame::chunk_to_decode(std::int64_t i) const {
    std::shared_lock<std::shared_mutex> lock(impl_->mutex);
    return impl_->checked_chunk(i, nullptr, false);
}

StoredChunk Frame::chunk_unchecked(std::int64_t i) const {
    std::shared_lock<std::shared_mutex> lock(impl_->mutex);
    const Impl& f = *impl_;
    f.fetch_heads_from(i);
    static const std::vector<std::int32_t> kHeadOnly;  // a remote chunk: its header is enough
    return f.chunk_unlocked(i, &kHeadOnly);
}

ReadAhead Frame::prefetch(const std::vector<std::int64_t>& chunks, std::size_t window) const {
    std::shared_lock<std::shared_mutex> lock(impl_->mutex);
    const Impl& f = *impl_;
    if (f.sparse() || !f.map || chunks.empty()) {
        return {};
    }
    const std::int64_t section = f.header.cbytes;
    const ChunkEnds ends(f.index, section);
    std::vector<ByteSpan> ranges(chunks.size());  // empty: nothing to read for that chunk
    for (std::size_t k = 0; k < chunks.size(); ++k) {
        const std::int64_t i = chunks[k];
        if (i < 0 || i >= static_cast<std::int64_t>(f.index.size())) {
            continue;
        }
        const std::int64_t e = f.index[static_cast<std::size_t>(i)];
        if (e < 0 || e >= section) {
            continue;  // a special chunk (nothing stored) or a bad entry
        }
        const std::int64_t end = ends.end_of(e);
        const auto at = static_cast<std::size_t>(f.header.header_len + e);
        const auto len = static_cast<std::size_t>(end - e);
        if (at + len <= f.frame.size()) {
            ranges[k] = f.frame.subspan(at, len);
        }
    }
    return ReadAhead(f.map, std::move(ranges), window);
}

std::int64_t Frame::index_entry(std::int64_t i) const {
    std::shared_lock<std::shared_mutex> lock(impl_->mutex);
    if (i < 0 || i >= static_cast<std::int64_t>(impl_->index.size())) {
        throw UsageError(impl_->where() + ": chunk " + num(i) + " out of range");
    }
    return impl_->index[static_cast<std::size_t>(i)];
}

bool Frame::stale() const {
    std::shared_lock<std::shared_mutex> lock(impl_->mutex);
    return impl_->stale();
}

Frame::ReadLock Frame::read_lock() const {
    const detail::Sidecar* s = impl_->sidecar.get();
    if (s == nullptr) {
        return {};
    }
    return ReadLock(std::make_shared<detail::Sidecar::Lock>(s->lock_shared()));
}

std::vector<std::int64_t> Frame::index_entries() const {
    std::shared_lock<std::shared_mutex> lock(impl_->mutex);
    return impl_->index;
}

std::uint64_t Frame::file_id() const noexcept {
    std::shared_lock<std::shared_mutex> lock(impl_->mutex);
    return impl_->mapped_ino;
}

std::vector<std::uint8_t> Frame::decode_chunk(std::int64_t i, int nthreads) const {
    const StoredChunk c = chunk(i);
    if (c.index_only()) {
        const auto& h = header();
        return codec::decode_chunk(
            materialize_special(c.special, c.nbytes, h.typesize, h.blocksize), 1);
    }
    try {
        return codec::decode_chunk(c.bytes, nthreads);
    } catch (const FormatError& e) {
        rethrow_with_context(e, chunk_context(i, c), c.offset);
    }
}

std::int64_t Frame::dead_bytes() const {
    std::shared_lock<std::shared_mutex> lock(impl_->mutex);
    return impl_->dead_bytes();
}

std::int64_t Frame::record_bytes() const {
    std::shared_lock<std::shared_mutex> lock(impl_->mutex);
    return impl_->record_bytes();
}

std::int64_t Frame::chunk_bytes() const {
    std::shared_lock<std::shared_mutex> lock(impl_->mutex);
    return impl_->chunk_bytes();
}

}  // namespace b2nd::storage
