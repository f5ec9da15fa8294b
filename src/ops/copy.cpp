// copy, concatenate, stack (ops.hpp): the result's geometry is planned from the sources; each of
// its chunks is copied as stored from a source chunk of the same geometry and compression,
// decoded and encoded again when only the compression differs, or else read from the sources
// (through read_strided, straight into the chunk's buffer) and encoded by write_chunks. Source
// chunks are checked against their grid as reads check them. All of it under a temporary name,
// renamed into place at the end.
#include <algorithm>
#include <cstring>
#include <filesystem>
#include <mutex>

#include <b2nd/error.hpp>
#include <b2nd/format/frame_header.hpp>
#include <b2nd/ops.hpp>
#include <b2nd/parallel.hpp>
#include <b2nd/storage/frame.hpp>

#include "../detail/text.hpp"
#include "../engine/engine_access.hpp"
#include "../objects/derived.hpp"
#include "../objects/objects_detail.hpp"
#include "../storage/ordered_staging.hpp"
#include "../storage/outputs.hpp"
#include "../values/params_detail.hpp"

namespace b2nd {

namespace {

namespace fs = std::filesystem;

/// One source of the result: it covers [offset, offset + extent) along the plan's axis. A stacked
/// source has no such axis (extent 1).
struct Piece {
    AnyArray arr;
    std::int64_t offset = 0;
    std::int64_t extent = 0;
};

struct Plan {
    std::string where;  // the destination, quoted
    DType dtype;
    Shape shape;
    int axis = 0;
    bool stacked = false;
    std::vector<Piece> pieces;
    Grid grid;
    CompressionParams compression;
    bool sparse = false;
};

bool same_compression(const CompressionParams& a, const CompressionParams& b) {
    if (a.codec != b.codec || a.codec_meta != b.codec_meta || a.clevel != b.clevel ||
        a.splitmode != b.splitmode || a.filters.size() != b.filters.size()) {
        return false;
    }
    for (std::size_t i = 0; i < a.filters.size(); ++i) {
        if (a.filters[i].id != b.filters[i].id || a.filters[i].meta != b.filters[i].meta) {
            return false;
        }
    }
    return true;
}

Shape with_axis(Shape s, int axis, std::int64_t v) {
    s.insert(s.begin() + axis, v);
    return s;
}

/// The chunk and block shapes and compression of the result, from the options or else the first
/// source (with 1 inserted along a stacked axis).
void plan_geometry(Plan& p, const CopyOptions& o) {
    const AnyArray& first = p.pieces.front().arr;
    Shape chunks = first.chunk_shape(), blocks = first.block_shape();
    if (p.stacked) {
        chunks = with_axis(chunks, p.axis, 1);
        blocks = with_axis(blocks, p.axis, 1);
    }
    if (o.chunk_shape) {
        chunks = *o.chunk_shape;
        blocks = o.block_shape ? *o.block_shape
                               : auto_chunk_block_shapes(chunks, first.itemsize()).second;
    } else if (o.block_shape) {
        blocks = *o.block_shape;
    }
    const std::string why = Grid::check(p.shape, chunks, blocks, first.itemsize());
    if (!why.empty()) {
        throw UsageError(p.where + ": " + why);
    }
    p.grid = Grid(p.shape, chunks, blocks, first.itemsize());
    p.compression = o.compression ? *o.compression : first.compression();
    std::string bad = detail::check_compression(p.compression, p.grid);
    if (bad.empty()) {
        bad = detail::check_values(p.compression, p.dtype);
    }
    if (!bad.empty()) {
        throw UsageError(p.where + ": " + bad);
    }
    p.sparse = o.sparse ? *o.sparse : first.sparse();
}

/// A chunk of a source that holds exactly a chunk of the result, in the same block layout: copied
/// as stored, or (other compression) decoded and encoded again as a whole.
struct SourceChunk {
    std::size_t piece = 0;
    std::int64_t chunk = 0;
    bool same_compression = true;
};

/// Where chunk `ci` of the result comes from when a source chunk has its geometry; nullopt when
/// it must be assembled from the sources.
std::optional<SourceChunk> source_chunk(const Plan& p, std::int64_t ci) {
    const Grid& g = p.grid;
    const int nd = g.ndim();
    for (const Piece& pc : p.pieces) {
        if (EngineAccess::core(pc.arr).origin() != nullptr) {
            return std::nullopt;  // an object kind's chunks as stored are not its values
        }
    }
    Shape c(static_cast<std::size_t>(nd));
    g.chunk_coords(ci, c.data());
    if (nd == 0) {
        if (p.pieces[0].arr.block_shape() != g.block_shape()) {
            return std::nullopt;
        }
        return SourceChunk{0, 0, same_compression(p.pieces[0].arr.compression(), p.compression)};
    }
    const auto ax = static_cast<std::size_t>(p.axis);
    const std::int64_t cs = g.chunk_shape()[ax];
    const std::int64_t a0 = c[ax] * cs;
    const std::int64_t a1 = a0 + g.chunk_extent(p.axis, c[ax]);
    for (std::size_t k = 0; k < p.pieces.size(); ++k) {
        const Piece& pc = p.pieces[k];
        if (a0 < pc.offset || a0 >= pc.offset + pc.extent) {
            continue;
        }
        const Grid& sg = pc.arr.grid();
        Shape src_c = c;
        if (p.stacked) {
            // A chunk of extent 1 along the new axis holds a source chunk's bytes as they are.
            if (cs != 1 || with_axis(sg.chunk_shape(), p.axis, 1) != g.chunk_shape()) {
                return std::nullopt;
            }
            src_c.erase(src_c.begin() + p.axis);
        } else {
            if (sg.chunk_shape() != g.chunk_shape() || (pc.offset % cs) != 0 ||
                a1 > pc.offset + pc.extent) {
                return std::nullopt;
            }
            src_c[ax] = (a0 - pc.offset) / cs;
            if (sg.chunk_extent(p.axis, src_c[ax]) != a1 - a0) {
                return std::nullopt;
            }
        }
        Shape blocks = sg.block_shape();
        if (p.stacked) {
            blocks = with_axis(blocks, p.axis, 1);
        }
        if (blocks != g.block_shape()) {
            return std::nullopt;
        }
        return SourceChunk{k, sg.chunk_index(src_c.data()),
                           same_compression(pc.arr.compression(), p.compression)};
    }
    return std::nullopt;
}

/// Reads `region` of the result from the pieces into out (C order of region.count).
void fill(const Plan& p, const Box& region, std::uint8_t* out) {
    const int nd = p.grid.ndim();
    std::vector<std::int64_t> strides(static_cast<std::size_t>(nd));
    c_strides(region.count.data(), static_cast<std::size_t>(nd), p.grid.itemsize(), strides.data());
    if (nd == 0) {
        p.pieces.front().arr.read_strided(region, out, strides.data());
        return;
    }
    const auto ax = static_cast<std::size_t>(p.axis);
    const std::int64_t r0 = region.start[ax], r1 = r0 + region.count[ax];
    for (const Piece& pc : p.pieces) {
        const std::int64_t lo = std::max(r0, pc.offset);
        const std::int64_t hi = std::min(r1, pc.offset + pc.extent);
        if (lo >= hi) {
            continue;
        }
        Box b = region;
        b.start[ax] = lo - pc.offset;
        b.count[ax] = hi - lo;
        std::vector<std::int64_t> st = strides;
        if (p.stacked) {
            b.start.erase(b.start.begin() + p.axis);
            b.count.erase(b.count.begin() + p.axis);
            b.step.erase(b.step.begin() + p.axis);
            st.erase(st.begin() + p.axis);
        }
        pc.arr.read_strided(b, out + (lo - r0) * strides[ax], st.data());
    }
}

/// Refuses a destination that is one of the sources, holds one or lies inside one (the rest is
/// the Publication's: an existing destination without overwrite, or not an array, or one
/// another handle writes).
void check_destination(const Plan& p, const std::string& dst) {
    std::error_code ec;
    const bool there = fs::exists(fs::symlink_status(dst, ec));
    for (const Piece& pc : p.pieces) {
        const std::string& src = pc.arr.path();
        if (src.empty()) {
            continue;
        }
        std::error_code e2;
        if (there && fs::equivalent(src, dst, e2)) {
            throw UsageError(p.where + ": is a source of the copy; write to another path");
        }
        if (detail::path_within(src, dst)) {
            throw UsageError(p.where + ": holds a source of the copy, " + detail::quoted_path(src) +
                             "; write to another path");
        }
        if (detail::path_within(dst, src)) {
            throw UsageError(p.where + ": is inside a source of the copy, " +
                             detail::quoted_path(src) + "; write to another path");
        }
    }
}

AnyArray build(Plan& p, const std::string& dst, const CopyOptions& o) {
    check_destination(p, dst);
    const AnyArray& first = p.pieces.front().arr;

    std::vector<std::int64_t> encoded;
    std::vector<std::pair<std::int64_t, SourceChunk>> stored, transcoded;
    for (std::int64_t ci = 0; ci < p.grid.nchunks(); ++ci) {
        if (auto s = source_chunk(p, ci)) {
            (s->same_compression ? stored : transcoded).emplace_back(ci, *s);
        } else {
            encoded.push_back(ci);
        }
    }
    const std::int64_t total = p.grid.nchunks();
    std::int64_t done = 0;
    std::mutex progress_mutex;  // chunks finish on several threads; progress sees one at a time
    auto tick = [&] {
        std::lock_guard<std::mutex> lock(progress_mutex);
        ++done;
        if (o.progress) {
            o.progress(done, total);
        }
    };

    CreateOptions co;
    co.chunk_shape = p.grid.chunk_shape();
    co.block_shape = p.grid.block_shape();
    co.compression = p.compression;
    co.sparse = p.sparse;
    co.nthreads = o.nthreads;
    co.cache_bytes = 0;
    co.overwrite = o.overwrite;
    co.durable = o.durable;
    co.max_chunks = o.max_chunks;
    co.lock_wait_ms = o.lock_wait_ms;
    co.s3 = o.s3;
    for (const Piece& pc : p.pieces) {  // a copy of an array that opened has its chunk count
        co.max_chunks = std::max(co.max_chunks, pc.arr.grid().nchunks());
    }
    co.auto_compact = false;
    // A copy of an object kind's values (a persisted expression, a proxy) is a plain array.
    const bool object = EngineAccess::core(first).origin() != nullptr;
    const auto kept = [&](const std::string& name) {
        return !object || !detail::object_metadata(name);
    };
    const std::vector<std::string> attribute_names =
        o.metadata ? first.vlmeta_names() : std::vector<std::string>{};
    if (attribute_names.size() > format::kMaxVlMetalayers) {
        throw UsageError(detail::quoted_path(first.frame().name()) + ": " +
                         detail::num(static_cast<std::int64_t>(attribute_names.size())) +
                         " attributes; a b2nd file holds at most " +
                         detail::num(static_cast<std::int64_t>(format::kMaxVlMetalayers)) +
                         " (c-blosc2's limit): copy it without them (CopyOptions::metadata "
                         "false, --no-meta)");
    }
    if (o.metadata) {
        for (const std::string& name : first.metalayer_names()) {
            if (name != "b2nd" && name != "caterva" && kept(name)) {
                co.metalayers.emplace_back(name, *first.metalayer(name));
            }
        }
    }
    // Built under a temporary name and published in one step (publish.hpp).
    const auto fill_temporary = [&](const std::string& tmp, const OpenOptions& private_open) {
        if (!stored.empty() || !transcoded.empty()) {
            storage::OpenOptions so;
            so.writable = true;
            so.locking = false;
            so.exclusive = true;  // private until published: no dead space left behind
            so.auto_compact = false;
            so.flush_behind = private_open.flush_behind;
            storage::Frame f = storage::Frame::open(tmp, so);
            const int ts = detail::chunk_typesize(p.grid.itemsize());
            const auto bn = static_cast<std::size_t>(p.grid.block_nbytes());
            // Staged in the chunks' order whatever order the threads finish them in.
            const std::size_t ns = stored.size();
            storage::detail::OrderedStaging order(f, ns + transcoded.size());
            // A source chunk as it is stored (index-only specials made into 32-byte chunks).
            auto stage_stored = [&](std::size_t k, const storage::StoredChunk& c) {
                if (c.index_only()) {
                    const std::vector<std::uint8_t> sp = storage::materialize_special(
                        c.special, c.nbytes, ts, static_cast<std::int32_t>(bn));
                    order.stage(k, {sp.data(), sp.size()});
                } else {
                    // The record of a chunk checked whole against its table (c.check: its head,
                    // record and every block matched) goes with it: sealing it again would hash
                    // it, and for a version-3 table decode it.
                    storage::detail::SealHint hint;
                    if (c.check) {
                        hint.record = c.record;
                    }
                    order.stage(k, c.bytes, hint, c.owner);  // kept mapped till its turn
                }
            };
            // Each chunk checked against its source's grid as reads check it. As stored: staged
            // as it is (decoded first with `verify`, so that a corrupt chunk stops the copy).
            // Other compression, same layout: decoded whole and encoded again. Uniform (special)
            // chunks hold no codec: kept either way. Chunks in parallel.
            const codec::EncodeParams ep = detail::encode_params(p.compression, p.grid);
            const auto cn = static_cast<std::size_t>(p.grid.chunk_nbytes());
            order.run(o.nthreads, [&](std::size_t k) {
                const bool reencode = k >= ns;
                const SourceChunk& sc = reencode ? transcoded[k - ns].second : stored[k].second;
                const detail::ArrayCore& src = EngineAccess::core(p.pieces[sc.piece].arr);
                const auto [c, uniform] = src.stored_chunk(sc.chunk);
                if (uniform || (!reencode && !o.verify)) {
                    stage_stored(k, c);
                    tick();
                    return;
                }
                thread_local std::vector<std::uint8_t> buf;  // kept: no fresh pages per chunk
                buf.resize(cn);
                src.decode_chunk(sc.chunk, buf.data());
                if (!reencode) {
                    stage_stored(k, c);
                    tick();
                    return;
                }
                thread_local std::vector<std::uint8_t> enc;
                enc.resize(codec::max_encoded_size(cn));
                std::size_t n = 0;
                storage::detail::PieceDigests pieces(ep, static_cast<std::int64_t>(cn), f);
                try {
                    n = codec::encode_chunk(
                        static_cast<std::int64_t>(cn),
                        [&](std::int32_t i, std::uint8_t* dest, std::size_t len) {
                            std::memcpy(dest, buf.data() + static_cast<std::size_t>(i) * bn, len);
                        },
                        ep, {enc.data(), enc.size()}, pieces.watch());
                } catch (const codec::ItemError& e) {
                    detail::throw_item_error(e, p.grid, transcoded[k - ns].first, dst);
                }
                storage::detail::SealHint hint;
                hint.pieces = &pieces;
                order.stage(k, {enc.data(), n}, hint);
                tick();
            });
            const std::vector<storage::StagedChunk> staged = order.take();
            storage::FrameEdit e = f.keep_all();
            for (std::size_t k = 0; k < stored.size(); ++k) {
                e.replace(stored[k].first, staged[k]);
            }
            for (std::size_t k = 0; k < transcoded.size(); ++k) {
                e.replace(transcoded[k].first, staged[ns + k]);
            }
            f.apply(e);
        }
        AnyArray t = AnyArray::open(tmp, private_open);
        if (!encoded.empty()) {
            t.write_chunks(
                encoded,
                [&](std::int64_t, const Box& region, std::uint8_t* out) { fill(p, region, out); },
                0, [&](std::int64_t, std::int64_t) { tick(); });
        }
        if (o.metadata) {
            // Every attribute in one commit (one each made a copy quadratic in their number).
            std::vector<std::pair<std::string, std::vector<std::uint8_t>>> all;
            for (const std::string& name : attribute_names) {
                if (!kept(name) || name == detail::kQueryCacheVlmeta) {
                    continue;  // a query cache answers for the source's files, not these
                }
                auto v = first.vlmeta(name);
                if (name == detail::kIndexesVlmeta) {
                    // The copy has none of the source's index files: python must rebuild them,
                    // as after a write to the data.
                    if (auto marked = detail::stale_indexes({v->data(), v->size()},
                                                            detail::quoted_path(first.name()))) {
                        v = std::move(marked);
                    }
                }
                all.emplace_back(name, std::move(*v));
            }
            EngineAccess::writable_core(t).set_vlmeta(all);
        }
    };
    (void)detail::ArrayCore::create(dst, p.dtype, p.shape, co, fill_temporary);
    if (o.stats != nullptr) {
        o.stats->chunks = total;
        o.stats->copied = static_cast<std::int64_t>(stored.size());
        o.stats->encoded = static_cast<std::int64_t>(encoded.size() + transcoded.size());
    }
    OpenOptions ro;
    ro.nthreads = o.nthreads;
    ro.s3 = o.s3;
    return AnyArray::open(dst, ro);
}

/// The sources pinned (one committed state each) and checked: valid, one dtype, one ndim.
Plan plan_sources(const std::vector<AnyArray>& srcs, const std::string& dst, const char* op) {
    Plan p;
    p.where = detail::quoted_path(dst);
    if (srcs.empty()) {
        throw UsageError(p.where + ": " + op + " needs at least one array");
    }
    for (const AnyArray& a : srcs) {
        if (!a.valid()) {
            throw UsageError(p.where + ": " + op + " of an array that is not open");
        }
        p.pieces.push_back({a.pinned(), 0, 0});
    }
    const AnyArray& first = p.pieces.front().arr;
    p.dtype = first.dtype();
    for (const Piece& pc : p.pieces) {
        if (pc.arr.dtype() != p.dtype) {
            throw UsageError(p.where + ": cannot " + op + " " + detail::quoted_path(pc.arr.name()) +
                             " (dtype '" + pc.arr.dtype().str() + "') with " +
                             detail::quoted_path(first.name()) + " (dtype '" + p.dtype.str() +
                             "')");
        }
        if (pc.arr.ndim() != first.ndim()) {
            throw UsageError(p.where + ": cannot " + op + " " + detail::quoted_path(pc.arr.name()) +
                             " (shape " + to_string(pc.arr.shape()) + ") with " +
                             detail::quoted_path(first.name()) + " (shape " +
                             to_string(first.shape()) + "): their dimensions differ");
        }
    }
    return p;
}

int normalize_axis(const Plan& p, int axis, int ndim, const char* op) {
    if (axis < -ndim || axis >= ndim) {
        throw UsageError(p.where + ": " + op + " along axis " + std::to_string(axis) +
                         " of arrays with " + std::to_string(ndim) + " dimension(s)");
    }
    return axis < 0 ? axis + ndim : axis;
}

}  // namespace

AnyArray copy(const AnyArray& src, const std::string& dst, const CopyOptions& options) {
    Plan p = plan_sources({src}, dst, "copy");
    p.shape = src.shape();
    p.pieces[0].extent = src.ndim() > 0 ? src.shape()[0] : 1;
    plan_geometry(p, options);
    return build(p, dst, options);
}

AnyArray concatenate(const std::vector<AnyArray>& srcs,
                     int axis,
                     const std::string& dst,
                     const CopyOptions& options) {
    Plan p = plan_sources(srcs, dst, "concatenate");
    const AnyArray& first = p.pieces.front().arr;
    p.axis = normalize_axis(p, axis, first.ndim(), "concatenate");
    const auto ax = static_cast<std::size_t>(p.axis);
    std::int64_t offset = 0;
    for (Piece& pc : p.pieces) {
        for (int d = 0; d < first.ndim(); ++d) {
            const auto du = static_cast<std::size_t>(d);
            if (d != p.axis && pc.arr.shape()[du] != first.shape()[du]) {
                throw UsageError(
                    p.where + ": cannot concatenate " + detail::quoted_path(pc.arr.name()) +
                    " (shape " + to_string(pc.arr.shape()) + ") with " +
                    detail::quoted_path(first.name()) + " (shape " + to_string(first.shape()) +
                    ") along axis " + std::to_string(p.axis) + ": axis " + std::to_string(d) +
                    " differs");
            }
        }
        pc.offset = offset;
        pc.extent = pc.arr.shape()[ax];
        offset += pc.extent;
    }
    p.shape = first.shape();
    p.shape[ax] = offset;
    plan_geometry(p, options);
    return build(p, dst, options);
}

AnyArray stack(const std::vector<AnyArray>& srcs,
               int axis,
               const std::string& dst,
               const CopyOptions& options) {
    Plan p = plan_sources(srcs, dst, "stack");
    const AnyArray& first = p.pieces.front().arr;
    p.axis = normalize_axis(p, axis, first.ndim() + 1, "stack");
    p.stacked = true;
    std::int64_t k = 0;
    for (Piece& pc : p.pieces) {
        if (pc.arr.shape() != first.shape()) {
            throw UsageError(p.where + ": cannot stack " + detail::quoted_path(pc.arr.name()) +
                             " (shape " + to_string(pc.arr.shape()) + ") with " +
                             detail::quoted_path(first.name()) + " (shape " +
                             to_string(first.shape()) + "): shapes differ");
        }
        pc.offset = k++;
        pc.extent = 1;
    }
    p.shape = with_axis(first.shape(), p.axis, k);
    plan_geometry(p, options);
    return build(p, dst, options);
}

}  // namespace b2nd
