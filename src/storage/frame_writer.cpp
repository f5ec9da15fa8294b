// Frame writing: create, append/update/insert/delete chunks, metalayers, sync, compact, refresh.
//
// Crash safety (DESIGN.md section 5). A contiguous frame is only ever extended: new chunk bytes,
// then the new offsets index, then the new trailer are written after the current end of the
// frame, and the header from byte 16 on (frame_len, nbytes, cbytes, has_vlmetalayers and the
// metalayers) is rewritten last with a single pwrite. Until then the header describes the old
// frame, whose bytes are untouched; after it, the new one. The old index and trailer become dead
// space inside the chunks section (the header's cbytes covers it, which c-blosc2 accepts: it only
// needs every chunk inside [0, cbytes) and the index at header_len + cbytes). compact() rewrites
// the frame without dead space to a temporary file and renames it over the original.
//
// A sparse frame's chunk files get fresh numbers and are written under a temporary name and
// renamed; chunks.b2frame is then replaced the same way (the commit point), and only then are the
// files of replaced or deleted chunks removed.
#include <algorithm>
#include <cstring>
#include <set>

#include <b2nd/error.hpp>
#include <b2nd/format/chunk_header.hpp>
#include <b2nd/format/endian.hpp>

#include "../detail/strings.hpp"
#include "frame_impl.hpp"
#include "posix_file.hpp"
#include <dirent.h>

namespace b2nd::storage {

using b2nd::detail::num;

namespace {

constexpr std::size_t kPatchBegin = format::frame_offsets::kFrameLen;  // 16

std::uint8_t general_flags_for(std::int32_t chunksize) {
    // 64-bit offsets; version 2 for fixed-size chunks, 3 (+ bit 6) for variable-size chunks.
    return chunksize > 0 ? static_cast<std::uint8_t>(0x10 | format::kFrameVersionFixed)
                         : static_cast<std::uint8_t>(0x10 | 0x40 | 3);
}

}  // namespace

void Frame::Impl::require_writable(const char* op) const {
    if (!is_writable) {
        throw UsageError(where() + ": " + op + " needs a frame opened for writing");
    }
}

Frame::Impl::NewChunk Frame::Impl::classify(ByteSpan chunk) const {
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
    NewChunk c{chunk.first(static_cast<std::size_t>(ch.cbytes)), 0, ch.nbytes};
    switch (static_cast<codec::Special>(ch.special())) {
        case codec::Special::zeros:
            c.bytes = {};
            c.entry = static_cast<std::int64_t>(kSpecialZeros);
            break;
        case codec::Special::nan:
            c.bytes = {};
            c.entry = static_cast<std::int64_t>(kSpecialNan);
            break;
        case codec::Special::uninit:
            c.bytes = {};
            c.entry = static_cast<std::int64_t>(kSpecialUninit);
            break;
        default:
            break;
    }
    if (c.bytes.empty() && header.chunksize <= 0) {
        c.bytes = chunk.first(static_cast<std::size_t>(ch.cbytes));  // keep it stored
        c.entry = 0;
    }
    return c;
}

std::pair<std::int32_t, std::int64_t> Frame::Impl::entry_sizes(std::int64_t i) const {
    const StoredChunk c = chunk_unlocked(i);
    return {c.nbytes, static_cast<std::int64_t>(c.bytes.size())};
}

void Frame::Impl::apply(const FrameEdit& edit) {
    const auto n_old = static_cast<std::int64_t>(index.size());
    std::vector<NewChunk> fresh;
    fresh.reserve(edit.new_chunks.size());
    for (ByteSpan c : edit.new_chunks) {
        fresh.push_back(classify(c));
    }
    // Metalayer updates keep their size, so the header keeps its length.
    std::vector<format::Metalayer> metas = header.metalayers;
    for (const auto& update : edit.metalayers) {
        const std::string& name = update.first;
        const std::vector<std::uint8_t>& content = update.second;
        auto it = std::find_if(metas.begin(), metas.end(),
                               [&](const format::Metalayer& m) { return m.name == name; });
        if (it == metas.end()) {
            throw UsageError(where() + ": no metalayer named '" + name + "'");
        }
        if (it->content.size() != content.size()) {
            throw UsageError(where() + ": metalayer '" + name + "' holds " +
                             num(static_cast<std::int64_t>(it->content.size())) +
                             " bytes; a new content of " +
                             num(static_cast<std::int64_t>(content.size())) +
                             " bytes would need the frame rewritten");
        }
        it->content = content;
    }

    const std::int32_t cs = header.chunksize;
    const std::int64_t old_last_nbytes =
        n_old == 0 ? 0
                   : (cs > 0 && header.nbytes % cs != 0 ? header.nbytes % cs : (cs > 0 ? cs : -1));
    std::vector<std::int64_t> idx(edit.order.size());
    std::vector<ByteSpan> writes;
    std::vector<std::size_t> slots;
    std::vector<char> kept(static_cast<std::size_t>(n_old), 0);
    std::int64_t nbytes = 0;
    std::int64_t stored_delta = 0;
    for (std::size_t p = 0; p < edit.order.size(); ++p) {
        const std::int64_t o = edit.order[p];
        const bool last = p + 1 == edit.order.size();
        std::int64_t chunk_nbytes;
        if (o >= 0) {
            if (o >= n_old) {
                throw UsageError(where() + ": chunk " + num(o) + " out of range (" + num(n_old) +
                                 " chunks)");
            }
            idx[p] = index[static_cast<std::size_t>(o)];
            kept[static_cast<std::size_t>(o)] = 1;
            if (cs > 0) {
                chunk_nbytes = o == n_old - 1 ? old_last_nbytes : cs;
            } else {
                chunk_nbytes = entry_sizes(o).first;
            }
        } else if (-1 - o >= static_cast<std::int64_t>(fresh.size())) {
            const std::int64_t j = -1 - o - static_cast<std::int64_t>(fresh.size());
            if (j >= static_cast<std::int64_t>(edit.staged.size())) {
                throw UsageError(where() + ": edit refers to new chunk " + num(-1 - o) + " of " +
                                 num(static_cast<std::int64_t>(fresh.size() + edit.staged.size())));
            }
            const StagedChunk& sc = edit.staged[static_cast<std::size_t>(j)];
            if (sc.generation != generation) {
                throw UsageError(where() +
                                 ": a staged chunk from before the last commit or reload");
            }
            idx[p] = sc.entry;
            chunk_nbytes = sc.nbytes;
            stored_delta += sc.cbytes;
        } else {
            const std::int64_t j = -1 - o;
            const NewChunk& c = fresh[static_cast<std::size_t>(j)];
            if (c.bytes.empty()) {
                idx[p] = c.entry;
            } else {
                writes.push_back(c.bytes);
                slots.push_back(p);
                stored_delta += static_cast<std::int64_t>(c.bytes.size());
            }
            chunk_nbytes = c.nbytes;
        }
        if (cs > 0 && !last && chunk_nbytes != cs) {
            throw UsageError(where() + ": chunk " + num(static_cast<std::int64_t>(p)) +
                             " would hold " + num(chunk_nbytes) +
                             " bytes; only the last chunk may be smaller than the chunk size (" +
                             num(cs) + " bytes)");
        }
        nbytes += chunk_nbytes;
    }
    if (is_sparse) {
        for (std::int64_t i = 0; i < n_old; ++i) {
            if (kept[static_cast<std::size_t>(i)] == 0 && index[static_cast<std::size_t>(i)] >= 0) {
                stored_delta -= entry_sizes(i).second;
            }
        }
    }
    commit(std::move(idx), nbytes, writes, slots, vlmeta, stored_delta, metas);
}

void Frame::Impl::commit(std::vector<std::int64_t> new_index,
                         std::int64_t new_nbytes,
                         const std::vector<ByteSpan>& writes,
                         const std::vector<std::size_t>& slots,
                         std::vector<format::Metalayer> new_vlmeta,
                         std::int64_t stored_delta,
                         const std::vector<format::Metalayer>& new_metalayers) {
    if (is_sparse) {
        commit_sparse(new_index, new_nbytes, writes, slots, new_vlmeta, stored_delta,
                      new_metalayers);
    } else {
        commit_contiguous(new_index, new_nbytes, writes, slots, new_vlmeta, new_metalayers);
    }
    index = std::move(new_index);
    vlmeta = std::move(new_vlmeta);
    end_staging(index);
}

void Frame::Impl::commit_contiguous(std::vector<std::int64_t>& new_index,
                                    std::int64_t new_nbytes,
                                    const std::vector<ByteSpan>& writes,
                                    const std::vector<std::size_t>& slots,
                                    const std::vector<format::Metalayer>& new_vlmeta,
                                    const std::vector<format::Metalayer>& new_metalayers) {
    const std::vector<std::uint8_t> trailer = format::write_frame_trailer(new_vlmeta);
    format::FrameHeader h = header;
    h.metalayers = new_metalayers;
    h.has_vlmetalayers = !new_vlmeta.empty();
    if (new_nbytes == 0) {
        // c-blosc2 looks for the trailer of an empty frame right after the header: rebuild the
        // file (atomically) rather than overwrite live bytes.
        if (base != 0) {
            throw UsageError(where() + ": an embedded frame cannot become empty");
        }
        h.nbytes = 0;
        h.cbytes = 0;
        std::vector<std::uint8_t> image = format::write_frame_header(h);
        format::store_be<std::uint64_t>(image.data() + format::frame_offsets::kFrameLen,
                                        image.size() + trailer.size());
        image.insert(image.end(), trailer.begin(), trailer.end());
        detail::write_file_atomically(path, image, options.durable);
        map_and_load();
        return;
    }
    detail::PosixFile f(path, detail::PosixFile::Mode::read_write);
    std::uint64_t pos = std::max<std::uint64_t>(base + frame.size(), staging_end);
    for (std::size_t k = 0; k < writes.size(); ++k) {
        f.write_at(writes[k], pos);
        new_index[slots[k]] = static_cast<std::int64_t>(pos - base) - header.header_len;
        pos += writes[k].size();
    }
    const auto index_at = static_cast<std::int64_t>(pos - base);
    const std::vector<std::uint8_t> idx = encode_index(new_index);
    f.write_at(idx, pos);
    pos += idx.size();
    f.write_at(trailer, pos);
    pos += trailer.size();
    if (options.durable) {
        f.sync();
    }
    // The commit: one write of the header from byte 16 on (lengths, sizes, metalayers).
    h.frame_len = static_cast<std::uint64_t>(pos - base);
    h.nbytes = new_nbytes;
    h.cbytes = index_at - header.header_len;
    const std::vector<std::uint8_t> image = format::write_frame_header(h);
    if (image.size() != static_cast<std::size_t>(header.header_len)) {
        throw UsageError(where() + ": the header would change length (" + num(header.header_len) +
                         " -> " + num(static_cast<std::int64_t>(image.size())) + " bytes)");
    }
    f.write_at(ByteSpan(image.data() + kPatchBegin, image.size() - kPatchBegin),
               base + kPatchBegin);
    if (options.durable) {
        f.sync();
    }
    header = format::read_frame_header(image);  // picks up the metalayer content offsets too
    trailer_len = static_cast<std::uint32_t>(trailer.size());
    index_pos = index_at;
    map = MappedFile::open(path);
    frame = map->bytes().subspan(base, h.frame_len);
}

void Frame::Impl::commit_sparse(std::vector<std::int64_t>& new_index,
                                std::int64_t new_nbytes,
                                const std::vector<ByteSpan>& writes,
                                const std::vector<std::size_t>& slots,
                                const std::vector<format::Metalayer>& new_vlmeta,
                                std::int64_t stored_delta,
                                const std::vector<format::Metalayer>& new_metalayers) {
    std::int64_t next_id = std::max<std::int64_t>(0, next_staged_id);
    for (std::int64_t e : index) {
        next_id = std::max(next_id, e + 1);
    }
    for (std::size_t k = 0; k < writes.size(); ++k) {
        if (next_id > 0xFFFFFFFFLL) {
            throw UsageError(where() + ": chunk file numbers are exhausted; compact the frame");
        }
        detail::write_file_atomically(chunk_file_path(static_cast<std::uint32_t>(next_id)),
                                      writes[k], options.durable);
        new_index[slots[k]] = next_id++;
    }
    format::FrameHeader h = header;
    h.nbytes = new_nbytes;
    h.cbytes = header.cbytes + stored_delta;
    h.has_vlmetalayers = !new_vlmeta.empty();
    h.metalayers = new_metalayers;
    std::vector<std::uint8_t> image = format::write_frame_header(h);
    const auto index_at = static_cast<std::int64_t>(image.size());
    if (new_nbytes > 0) {
        const std::vector<std::uint8_t> idx = encode_index(new_index);
        image.insert(image.end(), idx.begin(), idx.end());
    }
    const std::vector<std::uint8_t> trailer = format::write_frame_trailer(new_vlmeta);
    image.insert(image.end(), trailer.begin(), trailer.end());
    format::store_be<std::uint64_t>(image.data() + format::frame_offsets::kFrameLen, image.size());
    detail::write_file_atomically(index_file_path(), image, options.durable);

    // Files no longer referenced go only now that the new index is in place.
    const std::set<std::int64_t> live(new_index.begin(), new_index.end());
    for (std::int64_t e : index) {
        if (e >= 0 && live.count(e) == 0) {
            detail::remove_file(chunk_file_path(static_cast<std::uint32_t>(e)));
            std::lock_guard<std::mutex> lock(cache_mutex);
            auto it = cache.find(static_cast<std::uint32_t>(e));
            if (it != cache.end()) {
                lru.erase(it->second.second);
                cache.erase(it);
            }
        }
    }
    header = format::read_frame_header(image);
    trailer_len = static_cast<std::uint32_t>(trailer.size());
    index_pos = index_at;
    mapped_ino = detail::file_identity(index_file_path()).ino;
    map = MappedFile::open(index_file_path());
    frame = map->bytes().first(image.size());
}

Frame Frame::create(const std::string& path,
                    const FrameParams& params,
                    bool sparse,
                    const std::vector<format::Metalayer>& metalayers,
                    bool durable) {
    if (detail::path_exists(path)) {
        throw UsageError("\"" + path + "\" already exists");
    }
    if (params.typesize <= 0 || params.chunksize < 0 || params.blocksize < 0 || params.clevel < 0 ||
        params.clevel > 9) {
        throw UsageError("\"" + path +
                         "\": invalid frame parameters (typesize, chunksize, blocksize, clevel)");
    }
    format::FrameHeader h;
    h.general_flags = general_flags_for(params.chunksize);
    h.frame_type = sparse ? 1 : 0;
    h.codec_flags = static_cast<std::uint8_t>(static_cast<unsigned>(params.codec) |
                                              (static_cast<unsigned>(params.clevel) << 4));
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
    h.metalayers = metalayers;
    std::vector<std::uint8_t> image = format::write_frame_header(h);
    const std::vector<std::uint8_t> trailer = format::write_frame_trailer({});
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
    return open(p, o);
}

void Frame::Impl::end_staging(const std::vector<std::int64_t>& live) {
    if (is_sparse && !staged_ids.empty()) {
        const std::set<std::int64_t> keep(live.begin(), live.end());
        for (std::int64_t id : staged_ids) {
            if (keep.count(id) == 0) {
                detail::remove_file(chunk_file_path(static_cast<std::uint32_t>(id)));
            }
        }
    }
    staged_ids.clear();
    staging_end = 0;
    next_staged_id = -1;
    ++generation;
}

StagedChunk Frame::stage(ByteSpan chunk) {
    std::unique_lock<std::shared_mutex> lock(impl_->mutex);
    Impl& m = *impl_;
    m.require_writable("stage");
    if (m.refresh_unlocked()) {
        m.end_staging(m.index);
    }
    const Impl::NewChunk c = m.classify(chunk);
    StagedChunk s{c.entry, c.nbytes, static_cast<std::int64_t>(c.bytes.size()), m.generation};
    if (c.bytes.empty()) {
        return s;  // an index-only special chunk
    }
    if (m.is_sparse) {
        if (m.next_staged_id < 0) {
            m.next_staged_id = 0;
            for (std::int64_t e : m.index) {
                m.next_staged_id = std::max(m.next_staged_id, e + 1);
            }
        }
        if (m.next_staged_id > 0xFFFFFFFFLL) {
            throw UsageError(m.where() + ": chunk file numbers are exhausted; compact the frame");
        }
        detail::write_file_atomically(
            m.chunk_file_path(static_cast<std::uint32_t>(m.next_staged_id)), c.bytes,
            m.options.durable);
        m.staged_ids.push_back(m.next_staged_id);
        s.entry = m.next_staged_id++;
        return s;
    }
    if (m.staging_end == 0) {
        m.staging_end = m.base + m.frame.size();
    }
    detail::PosixFile f(m.path, detail::PosixFile::Mode::read_write);
    f.write_at(c.bytes, m.staging_end);
    s.entry = static_cast<std::int64_t>(m.staging_end - m.base) - m.header.header_len;
    m.staging_end += c.bytes.size();
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
    e.order.resize(impl_->index.size());
    for (std::size_t i = 0; i < e.order.size(); ++i) {
        e.order[i] = static_cast<std::int64_t>(i);
    }
    return e;
}

void Frame::append_chunks(const std::vector<ByteSpan>& chunks) {
    FrameEdit e = keep_all();
    for (std::size_t j = 0; j < chunks.size(); ++j) {
        e.order.push_back(-1 - static_cast<std::int64_t>(j));
    }
    e.new_chunks = chunks;
    apply(e);
}

void Frame::update_chunk(std::int64_t i, ByteSpan chunk) {
    FrameEdit e = keep_all();
    if (i < 0 || i >= static_cast<std::int64_t>(e.order.size())) {
        throw UsageError(impl_->where() + ": chunk " + num(i) + " out of range (" +
                         num(static_cast<std::int64_t>(e.order.size())) + " chunks)");
    }
    e.order[static_cast<std::size_t>(i)] = -1;
    e.new_chunks = {chunk};
    apply(e);
}

void Frame::insert_chunk(std::int64_t i, ByteSpan chunk) {
    FrameEdit e = keep_all();
    if (i < 0 || i > static_cast<std::int64_t>(e.order.size())) {
        throw UsageError(impl_->where() + ": insert position " + num(i) + " out of range (" +
                         num(static_cast<std::int64_t>(e.order.size())) + " chunks)");
    }
    e.order.insert(e.order.begin() + i, -1);
    e.new_chunks = {chunk};
    apply(e);
}

void Frame::delete_chunk(std::int64_t i) {
    FrameEdit e = keep_all();
    if (i < 0 || i >= static_cast<std::int64_t>(e.order.size())) {
        throw UsageError(impl_->where() + ": chunk " + num(i) + " out of range (" +
                         num(static_cast<std::int64_t>(e.order.size())) + " chunks)");
    }
    e.order.erase(e.order.begin() + i);
    apply(e);
}

void Frame::update_metalayer(const std::string& name, ByteSpan content) {
    FrameEdit e = keep_all();
    e.metalayers.emplace_back(name, std::vector<std::uint8_t>(content.begin(), content.end()));
    apply(e);
}

void Frame::set_vlmeta(const std::string& name, ByteSpan content) {
    std::unique_lock<std::shared_mutex> lock(impl_->mutex);
    Impl& m = *impl_;
    m.require_writable("set_vlmeta");
    m.refresh_unlocked();
    if (name.empty() || name.size() > format::kMaxMetalayerName) {
        throw UsageError(m.where() + ": a vlmetalayer name has 1 to 31 bytes");
    }
    // c-blosc2 stores vlmetalayer contents as Blosc2 chunks (blosclz by default).
    codec::EncodeParams p;
    p.codec = codec::Codec::blosclz;
    p.clevel = 5;
    p.typesize = 1;
    format::Metalayer ml{name, codec::encode_chunk(content, p), 0};
    std::vector<format::Metalayer> v = m.vlmeta;
    auto it = std::find_if(v.begin(), v.end(),
                           [&](const format::Metalayer& x) { return x.name == name; });
    if (it != v.end()) {
        *it = std::move(ml);
    } else {
        v.push_back(std::move(ml));
    }
    m.commit(m.index, m.header.nbytes, {}, {}, std::move(v), 0, m.header.metalayers);
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
    m.commit(m.index, m.header.nbytes, {}, {}, std::move(v), 0, m.header.metalayers);
    return true;
}

void Frame::sync() {
    std::unique_lock<std::shared_mutex> lock(impl_->mutex);
    Impl& m = *impl_;
    m.require_writable("sync");
    if (m.is_sparse) {
        for (std::int64_t e : m.index) {
            if (e >= 0) {
                detail::PosixFile(m.chunk_file_path(static_cast<std::uint32_t>(e)),
                                  detail::PosixFile::Mode::read_write)
                    .sync();
            }
        }
        detail::PosixFile(m.index_file_path(), detail::PosixFile::Mode::read_write).sync();
        detail::fsync_directory(m.path);
    } else {
        detail::PosixFile(m.path, detail::PosixFile::Mode::read_write).sync();
        detail::fsync_directory(detail::directory_of(m.path));
    }
}

void Frame::Impl::write_compacted(const std::string& out) const {
    detail::PosixFile f(out, detail::PosixFile::Mode::create_truncate);
    format::FrameHeader h = header;
    std::vector<std::uint8_t> head = format::write_frame_header(h);
    std::uint64_t pos = head.size();
    std::vector<std::int64_t> idx(index.size());
    for (std::size_t i = 0; i < index.size(); ++i) {
        const StoredChunk c = chunk_unlocked(static_cast<std::int64_t>(i));
        if (c.index_only()) {
            idx[i] = index[i];
            continue;
        }
        idx[i] = static_cast<std::int64_t>(pos) - static_cast<std::int64_t>(head.size());
        f.write_at(c.bytes, pos);
        pos += c.bytes.size();
    }
    h.cbytes = static_cast<std::int64_t>(pos - head.size());
    std::vector<std::uint8_t> tail;
    if (h.nbytes > 0) {
        tail = encode_index(idx);
    }
    const std::vector<std::uint8_t> trailer = format::write_frame_trailer(vlmeta);
    tail.insert(tail.end(), trailer.begin(), trailer.end());
    f.write_at(tail, pos);
    pos += tail.size();
    h.frame_len = pos;
    head = format::write_frame_header(h);
    f.write_at(head, 0);
    f.sync();
}

void Frame::compact() {
    std::unique_lock<std::shared_mutex> lock(impl_->mutex);
    Impl& m = *impl_;
    m.require_writable("compact");
    m.refresh_unlocked();
    if (m.is_sparse) {
        // Remove chunk files the index does not name (left by interrupted writes).
        const std::set<std::int64_t> live(m.index.begin(), m.index.end());
        if (DIR* d = ::opendir(m.path.c_str())) {
            std::vector<std::string> orphans;
            while (const dirent* e = ::readdir(d)) {
                const std::string n = e->d_name;
                unsigned id = 0;
                char tail[16] = {0};
                if (n.size() >= 14 && std::sscanf(n.c_str(), "%8X%15s", &id, tail) == 2 &&
                    (std::string(tail) == ".chunk" || std::string(tail) == ".chunk.tmp") &&
                    (live.count(id) == 0 || std::string(tail) == ".chunk.tmp")) {
                    orphans.push_back(m.path + "/" + n);
                }
            }
            ::closedir(d);
            for (const auto& o : orphans) {
                detail::remove_file(o);
            }
        }
        m.end_staging(m.index);
        return;
    }
    if (m.base != 0) {
        throw UsageError(m.where() + ": an embedded frame cannot be compacted in place");
    }
    const std::string tmp = m.path + ".compact.tmp";
    m.write_compacted(tmp);
    detail::rename_file(tmp, m.path);
    detail::fsync_directory(detail::directory_of(m.path));
    m.map_and_load();
    m.end_staging(m.index);
}

bool Frame::Impl::refresh_unlocked() {
    if (path.empty()) {
        return false;
    }
    const std::string file = is_sparse ? index_file_path() : path;
    bool changed = detail::file_identity(file).ino != mapped_ino;  // replaced by a rename
    if (!changed && !is_sparse) {
        // The file is mapped shared: the header bytes seen through the map are current.
        const std::uint8_t* h = map->bytes().data() + base;
        changed =
            format::load_be<std::uint64_t>(h + format::frame_offsets::kFrameLen) !=
                header.frame_len ||
            format::load_be<std::int64_t>(h + format::frame_offsets::kCbytes) != header.cbytes ||
            format::load_be<std::int64_t>(h + format::frame_offsets::kNbytes) != header.nbytes ||
            h[format::frame_offsets::kHasVlMeta] != (header.has_vlmetalayers ? 0xc3 : 0xc2);
    }
    if (!changed) {
        return false;
    }
    map_and_load();
    end_staging(index);
    std::lock_guard<std::mutex> lock(cache_mutex);
    cache.clear();
    lru.clear();
    return true;
}

bool Frame::refresh() {
    std::unique_lock<std::shared_mutex> lock(impl_->mutex);
    return impl_->refresh_unlocked();
}

}  // namespace b2nd::storage
