// Frame writing, the same for both kinds of frame: create, apply an edit (append, update,
// insert, delete are edits), stage, metalayers and vlmetalayers, refresh. Where the bytes go is
// the kind's business (contiguous_frame.cpp, sparse_frame.cpp); DESIGN.md section 5 has the
// crash-safety rules both follow.
#include <algorithm>
#include <cstring>

#include <b2nd/error.hpp>
#include <b2nd/format/chunk_header.hpp>
#include <b2nd/format/endian.hpp>

#include "../detail/text.hpp"
#include "block_seals.hpp"
#include "frame_impl.hpp"
#include "frame_internal.hpp"
#include "reserved_staging.hpp"
#include "sources/posix_file.hpp"

namespace b2nd::storage {

using b2nd::detail::num;

std::uint8_t general_flags_for(std::int32_t chunksize, bool vl_blocks) {
    if (chunksize > 0 && !vl_blocks) {
        return static_cast<std::uint8_t>(0x10 | format::kFrameVersionFixed);
    }
    // Version 3: bit 6 for chunks of variable size, bit 7 for VL-block chunks (c-blosc2 3.x).
    return static_cast<std::uint8_t>(0x10 | 3 | (chunksize > 0 ? 0 : 0x40) |
                                     (vl_blocks ? 0x80 : 0));
}

CommitSteps& Frame::Impl::require_writable(const char* op) {
    CommitSteps* const kind = steps();
    if (kind == nullptr) {
        throw UsageError(where() + ": " + op +
                         ": the frame's bytes are fetched, and it is read-only (rewrite it whole "
                         "instead)");
    }
    if (!is_writable) {
        throw UsageError(where() + ": " + op +
                         ": the frame is open read-only (OpenOptions::writable opens it for "
                         "writing)");
    }
    return *kind;
}

Frame::Impl::ClassifiedChunk Frame::Impl::classify(ByteSpan chunk) const {
    format::ChunkHeader ch;
    try {
        ch = format::read_chunk_header(chunk);
    } catch (const FormatError& e) {
        throw UsageError(where() + ": the chunk to write is not a valid Blosc chunk (" + e.what() +
                         ")");
    }
    if (header.chunksize > 0 && ch.nbytes > header.chunksize) {
        throw UsageError(where() + ": a chunk of " + num(ch.nbytes) +
                         " bytes does not fit the frame's chunk size " + num(header.chunksize));
    }
    ClassifiedChunk c{chunk.first(static_cast<std::size_t>(ch.cbytes)), 0, ch.nbytes};
    switch (static_cast<codec::Special>(ch.special())) {
        case codec::Special::zeros:
            c.entry = static_cast<std::int64_t>(kSpecialZeros);
            break;
        case codec::Special::nan:
            c.entry = static_cast<std::int64_t>(kSpecialNan);
            break;
        case codec::Special::uninit:
            c.entry = static_cast<std::int64_t>(kSpecialUninit);
            break;
        default:
            return c;  // stored
    }
    // Index-only specials need a fixed chunk size to know their length; keep them stored in
    // frames of variable-size chunks.
    if (header.chunksize > 0) {
        c.bytes = {};
    } else {
        c.entry = 0;
    }
    return c;
}

void Frame::Impl::apply(const FrameEdit& edit) {
    const auto n_old = static_cast<std::int64_t>(index.size());
    std::vector<ClassifiedChunk> fresh;
    fresh.reserve(edit.new_chunks().size());
    for (ByteSpan c : edit.new_chunks()) {
        fresh.push_back(classify(c));
    }
    FrameCommit c;
    // Metalayer updates keep their size, so the header keeps its length.
    c.metalayers = header.metalayers;
    for (const format::Metalayer& update : edit.metalayers()) {
        auto it = std::find_if(c.metalayers.begin(), c.metalayers.end(),
                               [&](const format::Metalayer& m) { return m.name == update.name; });
        if (it == c.metalayers.end()) {
            throw UsageError(where() + ": no metalayer named '" + update.name + "'");
        }
        if (it->content.size() != update.content.size()) {
            throw UsageError(where() + ": metalayer '" + update.name + "' holds " +
                             num(static_cast<std::int64_t>(it->content.size())) +
                             " bytes; a new content of " +
                             num(static_cast<std::int64_t>(update.content.size())) +
                             " bytes would need the frame rewritten");
        }
        it->content = update.content;
    }

    const std::int32_t cs = header.chunksize;
    const std::int64_t old_last_nbytes =
        n_old == 0 ? 0
                   : (cs > 0 && header.nbytes % cs != 0 ? header.nbytes % cs : (cs > 0 ? cs : -1));
    const std::vector<FrameEdit::Slot>& slots = edit.slots();
    c.index.resize(slots.size());
    c.checksums = checks.carried();
    if (c.checksums) {
        c.checksum_version = checks.version();
        c.digests.assign(slots.size(), 0);
    }
    for (std::size_t p = 0; p < slots.size(); ++p) {
        const std::int64_t k = slots[p].index;
        std::int64_t chunk_nbytes = 0;
        switch (slots[p].source) {
            case FrameEdit::Source::kept:
                if (k < 0 || k >= n_old) {
                    throw UsageError(where() + ": chunk " + num(k) + " out of range (" +
                                     num(n_old) + " chunks)");
                }
                c.index[p] = index[static_cast<std::size_t>(k)];
                if (c.checksums) {
                    c.digests[p] = checks.chunk_digest(static_cast<std::size_t>(k));
                }
                if (cs > 0) {
                    chunk_nbytes = k == n_old - 1 ? old_last_nbytes : cs;
                } else {
                    chunk_nbytes = chunk_unlocked(k).nbytes;
                }
                break;
            case FrameEdit::Source::staged: {
                const StagedChunk& sc = edit.staged()[static_cast<std::size_t>(k)];
                if (sc.generation != staging_epoch) {
                    throw UsageError(where() +
                                     ": a staged chunk from before the last commit or reload");
                }
                c.index[p] = sc.entry;
                if (c.checksums) {
                    c.digests[p] = sc.digest;
                }
                chunk_nbytes = sc.nbytes;
                c.staged_bytes += sc.cbytes;
                break;
            }
            case FrameEdit::Source::fresh: {
                const ClassifiedChunk& f = fresh[static_cast<std::size_t>(k)];
                if (f.bytes.empty()) {
                    c.index[p] = f.entry;
                } else {
                    c.writes.push_back(f.bytes);
                    c.slots.push_back(p);
                }
                chunk_nbytes = f.nbytes;
                break;
            }
        }
        if (cs > 0 && p + 1 != slots.size() && chunk_nbytes != cs) {
            throw UsageError(where() + ": chunk " + num(static_cast<std::int64_t>(p)) +
                             " would hold " + num(chunk_nbytes) +
                             " bytes; only the last chunk may be smaller than the chunk size (" +
                             num(cs) + " bytes)");
        }
        c.nbytes += chunk_nbytes;
    }
    c.vlmeta = vlmeta;
    for (const auto& [name, content] : edit.vlmeta_changes()) {
        set_vlmeta_entry(c.vlmeta, name, content ? &*content : nullptr);
    }
    commit(std::move(c));
}

detail::Seal Frame::Impl::seal_for_table(ByteSpan chunk, const detail::SealHint& hint) const {
    if (!checks.carried()) {
        return {};
    }
    if (checks.version() >= 2) {
        return detail::seal(chunk, checks.version(), hint);
    }
    return {{}, detail::bytes_digest(chunk)};
}

Frame::Impl::SealAhead Frame::Impl::seal_ahead(ByteSpan chunk, const detail::SealHint& hint) const {
    SealAhead a;
    const ClassifiedChunk c = classify(chunk);  // stored bytes: the chunk's first cbytes
    a.version = checks.carried() ? checks.version() : 0;
    a.size = c.bytes.size();
    if (!c.bytes.empty()) {
        a.seal = seal_for_table(c.bytes, hint);
    }
    return a;
}

StagedChunk Frame::Impl::stage(ByteSpan chunk, const SealAhead* ahead) {
    CommitSteps& kind = require_writable("stage");
    refresh_unlocked();  // another writer's commit ends what was staged
    const ClassifiedChunk c = classify(chunk);
    StagedChunk s{c.entry, c.nbytes, static_cast<std::int64_t>(c.bytes.size()), staging_epoch};
    if (!c.bytes.empty()) {
        const bool fits = ahead != nullptr && ahead->size == c.bytes.size() &&
                          ahead->version == (checks.carried() ? checks.version() : 0);
        detail::Seal now;
        const detail::Seal& sealed = fits ? ahead->seal : (now = seal_for_table(c.bytes));
        s.digest = sealed.digest;
        s.entry = kind.stage_bytes(c.bytes, {sealed.record.data(), sealed.record.size()});
    }
    return s;
}

bool Frame::Impl::refresh_unlocked() {
    if (path.empty()) {
        return false;
    }
    bool changed = changed_on_disk() || (sidecar && sidecar->generation() != snapshot_generation);
    const bool sidecar_appeared = !sidecar && options.locking &&
                                  detail::path_exists(detail::Sidecar::path_for(path, sparse()));
    if (!changed && !sidecar_appeared) {
        return false;
    }
    const std::vector<std::int64_t> old_index = index;
    const format::FrameHeader old = header;
    const std::uint64_t old_ino = mapped_ino;
    load_snapshot();
    // A new generation is only a reason to look (c-blosc2 bumps it for every exclusive lock,
    // reads included); what was staged stays valid unless the frame itself changed.
    const bool content_changed = old_index != index || old.frame_len != header.frame_len ||
                                 old.nbytes != header.nbytes || old.cbytes != header.cbytes ||
                                 old_ino != mapped_ino;
    if (content_changed) {
        end_staging(index);
    }
    return content_changed;
}

// ---- Frame ----------------------------------------------------------------------------------

Frame Frame::create(const std::string& path,
                    const FrameParams& params,
                    bool sparse,
                    const std::vector<format::Metalayer>& metalayers,
                    bool durable,
                    bool locking) {
    if (detail::path_exists(path)) {
        throw UsageError(b2nd::detail::quoted_path(path) + " already exists");
    }
    if (params.typesize <= 0 || params.chunksize < 0 || params.blocksize < 0 || params.clevel < 0 ||
        params.clevel > 9) {
        throw UsageError(b2nd::detail::quoted_path(path) +
                         ": invalid frame parameters (typesize, chunksize, blocksize, clevel)");
    }
    format::FrameHeader h;
    h.general_flags = general_flags_for(params.chunksize, params.vl_blocks);
    h.frame_type = sparse ? 1 : 0;
    // A plugin codec is compcode 6 ("see udcodec"), its id at 0x4d and its meta at 0x4e.
    const unsigned compcode =
        codec::is_builtin(params.codec) ? static_cast<unsigned>(params.codec) : 6U;
    h.codec_flags =
        static_cast<std::uint8_t>(compcode | (static_cast<unsigned>(params.clevel) << 4));
    h.other_flags = static_cast<std::uint8_t>(static_cast<int>(params.splitmode) - 1);
    h.typesize = params.typesize;
    h.blocksize = params.blocksize;
    h.chunksize = params.chunksize;
    h.tcomp = params.nthreads;
    h.tdecomp = params.nthreads;
    for (std::size_t i = 0; i < params.filters.size(); ++i) {
        h.filters[i] = static_cast<std::uint8_t>(params.filters[i].id);
        h.filters_meta[i] = params.filters[i].meta;
    }
    h.udcodec = static_cast<std::uint8_t>(params.codec);
    h.compcode_meta = codec::is_builtin(params.codec) ? 0 : params.codec_meta;
    h.metalayers = metalayers;
    h.has_vlmetalayers = params.checksums;
    const std::vector<std::uint64_t> no_chunks;
    std::vector<std::uint8_t> image = format::write_frame_header(h);
    const std::vector<std::uint8_t> trailer = detail::trailer_with_checksums(
        {image.data(), image.size()}, {}, {}, params.checksums ? &no_chunks : nullptr,
        detail::kTableVersion);
    image.insert(image.end(), trailer.begin(), trailer.end());
    format::store_be<std::uint64_t>(image.data() + format::frame_offsets::kFrameLen, image.size());

    std::string p = path;
    while (p.size() > 1 && p.back() == '/') {
        p.pop_back();
    }
    if (sparse) {
        detail::make_directory(p);
        detail::write_file_atomically(p + "/chunks.b2frame", image, durable);
    } else {
        detail::write_file_atomically(p, image, durable);
    }
    OpenOptions o;
    o.writable = true;
    o.durable = durable;
    o.locking = locking;
    return open(p, o);
}

StagedChunk Frame::stage(ByteSpan chunk) {
    std::unique_lock<std::shared_mutex> lock(impl_->mutex);
    return impl_->stage(chunk);
}

struct FrameInternal::Ahead {
    Frame::Impl::SealAhead sealed;
};

std::shared_ptr<const FrameInternal::Ahead> FrameInternal::seal_ahead(
    const Frame& f, ByteSpan chunk, const detail::SealHint& hint) {
    std::shared_lock<std::shared_mutex> lock(f.impl_->mutex);
    return std::make_shared<const Ahead>(Ahead{f.impl_->seal_ahead(chunk, hint)});
}

void FrameInternal::flush_behind(Frame& f) {
    std::unique_lock<std::shared_mutex> lock(f.impl_->mutex);
    if (f.impl_->options.durable && f.impl_->options.writable && !f.impl_->flush_behind) {
        f.impl_->flush_behind = std::make_unique<detail::FlushBehind>();
    }
}

StagedChunk FrameInternal::stage(Frame& f, ByteSpan chunk, const Ahead* ahead) {
    std::unique_lock<std::shared_mutex> lock(f.impl_->mutex);
    return f.impl_->stage(chunk, ahead != nullptr ? &ahead->sealed : nullptr);
}

ReservedStaging::Classified ReservedStaging::classify(const Frame& f,
                                                      ByteSpan chunk,
                                                      const detail::SealHint& hint) {
    std::shared_lock<std::shared_mutex> lock(f.impl_->mutex);
    const Frame::Impl::ClassifiedChunk c = f.impl_->classify(chunk);
    Classified out{c.bytes, c.entry, c.nbytes, 0, {}};
    if (!c.bytes.empty()) {
        detail::Seal sealed = f.impl_->seal_for_table(c.bytes, hint);
        out.digest = sealed.digest;
        out.record = std::move(sealed.record);
    }
    return out;
}

std::uint64_t ReservedStaging::reserve(Frame& f, std::uint64_t amount) {
    std::unique_lock<std::shared_mutex> lock(f.impl_->mutex);
    CommitSteps& kind = f.impl_->require_writable("reserve_staging");
    f.impl_->refresh_unlocked();  // another writer's commit ends what was staged
    return kind.reserve_bytes(amount);
}

void ReservedStaging::write(const Frame& f, std::uint64_t position, ByteSpan bytes, ByteSpan tail) {
    std::shared_lock<std::shared_mutex> lock(f.impl_->mutex);
    const CommitSteps* const kind = f.impl_->steps();
    if (f.impl_->path.empty() || kind == nullptr) {
        throw UsageError(f.impl_->where() + ": write_reserved needs a frame on disk");
    }
    kind->write_reserved(position, bytes, tail);
}

StagedChunk ReservedStaging::adopt(Frame& f,
                                   std::uint64_t position,
                                   std::int32_t nbytes,
                                   std::int64_t cbytes,
                                   std::uint64_t digest) {
    Frame::Impl* const impl = f.impl_.get();
    std::unique_lock<std::shared_mutex> lock(impl->mutex);
    const CommitSteps& kind = impl->require_writable("adopt_staged");
    if (nbytes < 0 || cbytes < 0 ||
        (impl->header.chunksize > 0 && nbytes > impl->header.chunksize)) {
        throw UsageError(impl->where() + ": a chunk of " + num(nbytes) + " bytes (" + num(cbytes) +
                         " stored) cannot be adopted");
    }
    StagedChunk s{static_cast<std::int64_t>(position), nbytes, cbytes, impl->staging_epoch, digest};
    if (cbytes == 0) {
        bool special = false;
        try {
            special = special_of(s.entry, 0) != codec::Special::none;
        } catch (const FormatError&) {  // an unknown special value
        }
        if (!special) {
            throw UsageError(impl->where() + ": entry " + num(s.entry) +
                             " of a chunk with no bytes is not a special chunk");
        }
        return s;
    }
    s.entry = kind.reserved_entry(position, cbytes);
    return s;
}

void Frame::apply(const FrameEdit& edit) {
    std::unique_lock<std::shared_mutex> lock(impl_->mutex);
    impl_->require_writable("apply");
    impl_->refresh_unlocked();
    impl_->apply(edit);
}

FrameEdit Frame::keep_all() const {
    std::shared_lock<std::shared_mutex> lock(impl_->mutex);
    FrameEdit e;
    for (std::size_t i = 0; i < impl_->index.size(); ++i) {
        e.keep(static_cast<std::int64_t>(i));
    }
    return e;
}

void Frame::append_chunks(const std::vector<ByteSpan>& chunks) {
    FrameEdit e = keep_all();
    for (ByteSpan c : chunks) {
        e.add_new(c);
    }
    apply(e);
}

void Frame::update_chunk(std::int64_t i, ByteSpan chunk) {
    FrameEdit e = keep_all();
    if (i < 0 || i >= e.size()) {
        throw UsageError(impl_->where() + ": chunk " + num(i) + " out of range (" + num(e.size()) +
                         " chunks)");
    }
    e.replace(i, chunk);
    apply(e);
}

void Frame::insert_chunk(std::int64_t i, ByteSpan chunk) {
    FrameEdit e = keep_all();
    if (i < 0 || i > e.size()) {
        throw UsageError(impl_->where() + ": insert position " + num(i) + " out of range (" +
                         num(e.size()) + " chunks)");
    }
    e.insert(i, chunk);
    apply(e);
}

void Frame::delete_chunk(std::int64_t i) {
    FrameEdit e = keep_all();
    if (i < 0 || i >= e.size()) {
        throw UsageError(impl_->where() + ": chunk " + num(i) + " out of range (" + num(e.size()) +
                         " chunks)");
    }
    e.erase(i);
    apply(e);
}

void Frame::update_metalayer(const std::string& name, ByteSpan content) {
    FrameEdit e = keep_all();
    e.set_metalayer(name, std::vector<std::uint8_t>(content.begin(), content.end()));
    apply(e);
}

namespace {

/// A commit that keeps every chunk and changes the vlmetalayers.
FrameCommit vlmeta_commit(const Frame::Impl& m, std::vector<format::Metalayer> vlmeta) {
    FrameCommit c;
    c.index = m.index;
    c.nbytes = m.header.nbytes;
    c.metalayers = m.header.metalayers;
    c.vlmeta = std::move(vlmeta);
    c.checksums = m.checks.carried();
    if (c.checksums) {
        c.checksum_version = m.checks.version();
        c.digests.resize(m.index.size());
        for (std::size_t i = 0; i < c.digests.size(); ++i) {
            c.digests[i] = m.checks.chunk_digest(i);
        }
    }
    return c;
}

}  // namespace

void Frame::Impl::set_vlmeta_entry(std::vector<format::Metalayer>& v,
                                   const std::string& name,
                                   const std::vector<std::uint8_t>* content) const {
    if (name.empty() || name.size() > format::kMaxMetalayerName) {
        throw UsageError(where() + ": a vlmetalayer name has 1 to 31 bytes");
    }
    if (name == detail::kChecksumsName) {
        throw UsageError(where() + ": vlmetalayer '" + name +
                         "' is the checksum table, which commits write themselves");
    }
    auto it = std::find_if(v.begin(), v.end(),
                           [&](const format::Metalayer& x) { return x.name == name; });
    if (content == nullptr) {
        if (it != v.end()) {
            v.erase(it);
        }
        return;
    }
    // c-blosc2 stores vlmetalayer contents as Blosc2 chunks (blosclz by default).
    codec::EncodeParams p;
    p.codec = codec::Codec::blosclz;
    p.clevel = 5;
    p.typesize = 1;
    format::Metalayer ml{name, codec::encode_chunk({content->data(), content->size()}, p), 0};
    if (it != v.end()) {
        *it = std::move(ml);
    } else {
        v.push_back(std::move(ml));
    }
}

void Frame::set_vlmeta(const std::string& name, ByteSpan content) {
    std::unique_lock<std::shared_mutex> lock(impl_->mutex);
    Impl& m = *impl_;
    m.require_writable("set_vlmeta");
    m.refresh_unlocked();
    std::vector<format::Metalayer> v = m.vlmeta;
    const std::vector<std::uint8_t> bytes(content.begin(), content.end());
    m.set_vlmeta_entry(v, name, &bytes);
    m.commit(vlmeta_commit(m, std::move(v)));
}

bool Frame::delete_vlmeta(const std::string& name) {
    std::unique_lock<std::shared_mutex> lock(impl_->mutex);
    Impl& m = *impl_;
    m.require_writable("delete_vlmeta");
    m.refresh_unlocked();
    std::vector<format::Metalayer> v = m.vlmeta;
    auto it = std::find_if(v.begin(), v.end(),
                           [&](const format::Metalayer& x) { return x.name == name; });
    if (it == v.end()) {
        return false;
    }
    v.erase(it);
    m.commit(vlmeta_commit(m, std::move(v)));
    return true;
}

void Frame::add_checksums() {
    {
        std::unique_lock<std::shared_mutex> lock(impl_->mutex);
        Impl& m = *impl_;
        m.require_writable("add_checksums");
        m.refresh_unlocked();
        // Every stored chunk is written again (checked whole first where a table covers it),
        // and the commit seals each: a current table, and each chunk's record after it.
        FrameCommit c = vlmeta_commit(m, m.vlmeta);
        c.checksums = true;
        c.checksum_version = detail::kTableVersion;
        c.digests.assign(m.index.size(), 0);
        std::vector<StoredChunk> held;  // keeps the bytes mapped until the commit
        for (std::size_t i = 0; i < m.index.size(); ++i) {
            const auto k = static_cast<std::int64_t>(i);
            StoredChunk sc = m.checks.carried() ? m.checked_chunk(k) : m.chunk_unlocked(k);
            if (!sc.index_only()) {
                c.writes.push_back(sc.bytes);
                c.slots.push_back(i);
                held.push_back(std::move(sc));
            }
        }
        m.commit(std::move(c));
    }
    if (!impl_->sparse() && impl_->base == 0 && !impl_->path.empty()) {
        compact({});  // the chunks' first copies are dead space
    }
}

void Frame::sync() {
    std::unique_lock<std::shared_mutex> lock(impl_->mutex);
    impl_->require_writable("sync").sync();
}

void Frame::compact(const CompactProgress& progress) {
    std::unique_lock<std::shared_mutex> lock(impl_->mutex);
    Impl& m = *impl_;
    CommitSteps& kind = m.require_writable("compact");
    m.refresh_unlocked();
    kind.compact(progress);
    m.end_staging(m.index);
}

void Frame::announce_replaced() {
    std::unique_lock<std::shared_mutex> lock(impl_->mutex);
    if (impl_->sidecar) {
        const detail::Sidecar::Lock l = impl_->sidecar->lock_exclusive();
        impl_->sidecar->bump();
    }
}

bool Frame::read_by_others() const {
    std::shared_lock<std::shared_mutex> lock(impl_->mutex);
    return impl_->sidecar && impl_->sidecar->read_by_others();
}

bool Frame::refresh() {
    std::unique_lock<std::shared_mutex> lock(impl_->mutex);
    return impl_->refresh_unlocked();
}

}  // namespace b2nd::storage
